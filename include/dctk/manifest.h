/* manifest_{var}.json: the Python dc_toolkit's record of one field's sweep,
 * written beside best_{var}.json so that its users' scripts and its
 * `compress` find what they expect, and read back as a --pipeline. One
 * writer, one reader and one path function (src/results/manifest.c).
 *
 * Keys, as the Python tool's evaluate_combos writes them: command,
 * dataset_file, var, where_to_write, args (the sweep's flags under their
 * Python names; flags we have no equivalent of are left out, since its
 * compress takes a present key as the value), topology (size, cores_avail,
 * ranks_on_node), effective_thresholds (l1, l2, linf, bias, q99; null when
 * off or none), gradient_threshold (null unless the gradient gate is on),
 * phys_min, phys_max, phys_slack (absolute), q99_abs (the extremes cut, null
 * unless the extremes gate is on), num_combos, num_passed, num_failed_total,
 * num_filtered, var_sweep_seconds, env (the Python packages' versions: null
 * here, which its drift check skips), outputs (parquet, config_space_csv),
 * best (null, or name, pipeline {compressor, filter, serializer}, ratio,
 * l1_rel, eucd: null, we do not measure it): the best combo zarr-python with
 * numcodecs reads (what our compress writes by default; the Python tool's
 * readers decode nothing else). Ours beside them: best.codecs (the Zarr v3
 * codec list) and dc_toolkit {version, best_file, winner: the best over every
 * reader level, in the same form}. */
#ifndef DCTK_MANIFEST_H
#define DCTK_MANIFEST_H

#ifndef DCTK_STATIC_LINKING_ONLY
#error "dctk/manifest.h is not part of the stable API: #define DCTK_STATIC_LINKING_ONLY before any dctk header to use it (dctk/dctk.h)"
#endif

#include <jansson.h>
#include <stddef.h>

#include "dctk/best.h"
#include "dctk/eval.h"
#include "dctk/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* "{dir}/manifest_{var}.json" into buf; DCTK_ERR_ARG when cap is too small. */
DCTK_API dctk_status dctk_manifest_path(char *buf, size_t cap, const char *dir, const char *var);

/* Write dir/manifest_{var}.json (atomically) for the sweep of var in dataset
 * that wrote s (and dir/best_{var}.json when s->best >= 0), under options o;
 * team_size: the sweep's members (1 alone). */
DCTK_API dctk_status dctk_manifest_write(const char *dataset, const char *var, const dctk_evaluate_opts *o,
                                         const dctk_evaluate_summary *s, int team_size);

/* A Zarr v3 codec list as the Python tool's pipeline object: "filter",
 * "serializer" and "compressor", each null, one codec object, or a list of
 * them when there are several; the "bytes" serializer is null (plain
 * bytes). New reference, or NULL with the detail set. */
DCTK_API json_t *dctk_manifest_pipeline_of(const json_t *codecs);

/* Whether JSON object j is a manifest (it has "best" and none of a
 * pipeline's or best file's keys). */
DCTK_API bool dctk_manifest_is(const json_t *j);

/* A manifest as a best record for the write: best.pipeline's codecs (in the
 * Python form, as --pipeline reads it; codecs_of turns that form into a
 * codec list), the L1 threshold and the gates of effective_thresholds, the
 * physical bounds, the predicted ratio. A manifest whose sweep kept nothing
 * (best null) is DCTK_ERR_ARG saying so. *out is initialised here. */
typedef dctk_status (*dctk_manifest_codecs_fn)(const json_t *python_form, void *user, json_t **codecs);
DCTK_API dctk_status dctk_manifest_to_best(const json_t *m, const char *origin, dctk_manifest_codecs_fn codecs_of,
                                           void *user, dctk_best *out);

#ifdef __cplusplus
}
#endif
#endif
