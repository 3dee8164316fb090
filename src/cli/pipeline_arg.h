/* --pipeline P of compress and compress_with_optimal: a pipeline written
 * without a sweep, given as a file or as inline JSON in one of three forms:
 *   - the Python tool's {"compressor": C, "filter": F, "serializer": S}, each
 *     a Zarr v3 codec object (or a list of them) or null;
 *   - ours: the codec list of best_VAR.json (a Zarr v3 "codecs" list);
 *   - a best_VAR.json itself (its "codecs", its threshold as the gate).
 * Also the readable name of a pipeline, for logs and batch_manifest.json. */
#ifndef DCTK_CLI_PIPELINE_ARG_H
#define DCTK_CLI_PIPELINE_ARG_H

#include <jansson.h>

#include "dctk/best.h"
#include "dctk/dataset.h"

/* The codec list P means for variable var, checked: every codec known, each
 * in a slot of its kind, and a trial chunk of var's type encoded and decoded
 * (so pairings such as a float filter on an integer field are refused here,
 * with the codec's reason). *best (may be NULL) gets the best_VAR.json when P
 * is one (a new record, dctk_best_free and free it), else NULL. Errors set the detail. */
dctk_status pipeline_arg_load(const char *arg, const dctk_var *var, json_t **codecs, dctk_best **best);

#endif
