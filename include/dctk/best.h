/* best_{var}.json: the sweep's choice for one variable (DESIGN.md section 5),
 * as evaluate_combos writes it and every command that writes a field, shows
 * a sweep's winner or resumes a sweep reads it back. One struct, one writer,
 * one reader and one path function: no other code knows the file's keys.
 *
 * The top level names one combo: the one compress writes by default, the
 * best whose every codec the readers of reader_level decode (the sweep's
 * --codecs, default numcodecs); overall_winner is the best of every level
 * beside it, named as such.
 *
 * Keys, in file order: var, comp_idx, filt_idx, ser_idx, codecs (the
 * pipeline's Zarr v3 codec list), the TOP metrics of the row schema (ratio,
 * l1_rel, l2_rel, linf_rel, and max_abs_err, max_rel_err, mean_abs_err and mean_rel_err when known), threshold, threshold_source,
 * eval_data_size_limit, fingerprint, dtype, sample, inner_chunk_shape,
 * portability, reader_level, overall_winner (a combo with the same keys,
 * its portability and name), by_portability ({level: a combo with the same
 * keys as the top level's, or null}), name, the SEL metrics (bias_rel ... gradient_rel),
 * gates, metric_config, then field_bytes, input_bytes and ratio_vs_input when
 * the input's bytes are known, then information (a float field's information
 * content: {"keepbits_99", "keepbits_9999", and "winner_keeps" when the
 * winner was chosen by information}). Non-finite numbers are written as null. Every key
 * but codecs may be missing (a file of an older release, or one a user
 * wrote): the reader gives the defaults below; a file without
 * overall_winner (of an earlier release, whose top level was the overall
 * winner) reads with the top level as the winner. */
#ifndef DCTK_BEST_H
#define DCTK_BEST_H

#ifndef DCTK_STATIC_LINKING_ONLY
#error "dctk/best.h is not part of the stable API: #define DCTK_STATIC_LINKING_ONLY before any dctk header to use it (dctk/dctk.h)"
#endif

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dctk/codec.h"
#include "dctk/eval.h"
#include "dctk/status.h"

#ifdef __cplusplus
extern "C" {
#endif

#define DCTK_BEST_METRIC_(name, kind, role) DCTK_RESULT_IN_BEST_##role(double name;)

/* One combo a best file names: the winner, or the best at a reader level. */
typedef struct dctk_best_combo {
    bool has_indices;          /* false: the file gives no indices */
    int comp_idx, filt_idx, ser_idx;
    char *codecs;              /* the Zarr v3 codec list, compact JSON text; NULL: no combo */
    dctk_codec_portability portability; /* the file's, else the codecs' own */
    /* ratio, l1_rel, ... (the schema's TOP and SEL columns; NaN: not known) */
    DCTK_RESULT_SCHEMA(DCTK_BEST_METRIC_)
} dctk_best_combo;

typedef struct dctk_best {
    char *var;                  /* NULL: not said */
    dctk_best_combo combo;      /* the top level of the file: what compress writes at reader_level */
    /* The best of every level (overall_winner; the top level's copy for a
     * file without one); codecs NULL: none. */
    dctk_best_combo winner;
    bool has_winner;            /* false: not in the file (it is not written back) */
    bool has_reader_level;      /* false: the file does not say */
    dctk_codec_portability reader_level;
    double threshold;           /* the relative L1 threshold; NaN: none */
    char *threshold_source;     /* where it came from; NULL: not a sweep's record */
    uint64_t eval_data_size_limit; /* 0: not recorded */
    char *fingerprint;          /* of the space the indices are in; NULL: unknown */
    char *dtype;
    char *sample;               /* how the sample was taken, JSON text (plan, scan, digest); NULL: none */
    int ndim;                   /* of inner_chunk_shape; 0: not recorded */
    size_t inner_chunk_shape[DCTK_MAX_DIMS];
    char *name;                 /* the top level's readable pipeline; NULL: not recorded */
    bool has_gates;             /* false: a file from before the gates */
    dctk_gates gates;
    /* how the sweep measured: shift, range, extremes_cut (defaults where the
     * file has none: 0, 0, +inf); the physical bounds are the gates' */
    dctk_metric_cfg metric_config;
    /* The field's decoded bytes and its bytes in the input file, written
     * (with ratio_vs_input = ratio x input_bytes / field_bytes) only when
     * the input's are known; 0: not known. */
    uint64_t field_bytes, input_bytes;
    /* The BitRound keepbits holding 99 % and 99.99 % of the sample's real
     * information (-1: not recorded), and the share the winner keeps when
     * --keep-information chose it (NaN: it was not). */
    int info_keepbits[2];
    double information;
    bool has_levels;            /* false: no by_portability */
    dctk_best_combo level[DCTK_PORT_DCTK + 1]; /* codecs NULL: no kept combo at that level */
} dctk_best;

/* An empty record: no combo, every number NaN (or 0), no gates. */
DCTK_API void dctk_best_init(dctk_best *b);
DCTK_API void dctk_best_combo_init(dctk_best_combo *c);
/* Free the strings and re-initialise; accepts NULL. */
DCTK_API void dctk_best_free(dctk_best *b);
DCTK_API void dctk_best_combo_free(dctk_best_combo *c);
/* A deep copy into *dst (initialised here); DCTK_ERR_NOMEM leaves it empty. */
DCTK_API dctk_status dctk_best_copy(dctk_best *dst, const dctk_best *src);
DCTK_API dctk_status dctk_best_combo_copy(dctk_best_combo *dst, const dctk_best_combo *src);
/* Replace a string member (*dst) with a copy of s (NULL clears it). */
DCTK_API dctk_status dctk_best_set_str(char **dst, const char *s);

/* The combo of b a writer limited to level writes: the overall winner when
 * its readers are within the level, else the best at the level, else the
 * top level when within it; NULL when none is. */
DCTK_API const dctk_best_combo *dctk_best_for_level(const dctk_best *b, dctk_codec_portability level);

/* "{dir}/best_{var}.json" into buf; DCTK_ERR_ARG when cap is too small. */
DCTK_API dctk_status dctk_results_best_path(char *buf, size_t cap, const char *dir, const char *var);
/* Write b to path atomically (a temporary file renamed). */
DCTK_API dctk_status dctk_best_write(const char *path, const dctk_best *b);
/* Read a best file into *b (initialised here; dctk_best_free it). A missing
 * or unreadable file is DCTK_ERR_IO, one that does not parse, has no
 * "codecs" list or a key of the wrong type DCTK_ERR_FORMAT, naming the file. */
DCTK_API dctk_status dctk_best_read(const char *path, dctk_best *b);
/* The same from JSON text; origin names it in errors. */
DCTK_API dctk_status dctk_best_parse(const char *text, const char *origin, dctk_best *b);

#ifdef __cplusplus
}
#endif
#endif
