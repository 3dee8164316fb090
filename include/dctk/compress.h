/* The compress workflow as one call: for each field of a dataset, plan
 * (skip what is in the store, reuse a sweep result that still holds, write a
 * given pipeline, or sweep), write with the chosen combo, verify, try the
 * next best when the whole field misses the bound, record batch_manifest.json,
 * and merge. The `compress` command and the web UI both call dctk_compress;
 * compress_with_optimal uses the write step (dctk_write_step_field) alone.
 *
 * Nothing here prints: every line a user should see goes to the caller's
 * sink (dctk_say_fn), the same text the command line shows.
 *
 * The stable part (first below) is one call with its options as JSON text;
 * the workflow's structs and steps are behind DCTK_STATIC_LINKING_ONLY
 * (dctk/dctk.h). */
#ifndef DCTK_COMPRESS_H
#define DCTK_COMPRESS_H

#include <stdbool.h>
#include <stdint.h>

#include "dctk/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* --- the stable part ---------------------------------------------------- */

typedef enum { DCTK_SAY_OUT = 0, DCTK_SAY_ERR = 1 } dctk_say_to;
/* Where the workflow's lines go: text is a piece of output, ending in a
 * newline when a line is complete (stdout for DCTK_SAY_OUT, stderr for
 * DCTK_SAY_ERR on the command line). */
typedef void (*dctk_say_fn)(void *user, dctk_say_to to, const char *text);

/* `dc_toolkit compress DATASET DIR`: every data variable of the dataset (a
 * netCDF or GRIB file, a Zarr store, a glob) swept unless DIR holds a sweep
 * result that still holds, then written with its best combo into
 * DIR/DATASET.zarr, verified, recorded in DIR/batch_manifest.json and merged.
 * options_json (NULL: {}) is an object of these keys, each optional:
 *   "vars"                 "A,B": only these fields
 *   "pipeline"             a Zarr v3 codec list (or its text, or a file):
 *                          every field written with it, no sweep
 *   "l1_threshold"         the relative L1 error budget; without it and
 *                          without a table every field is written losslessly
 *   "thresholds"           the path of a threshold table (l1_error_thresholds.csv)
 *   "eval_data_size_limit" the sweep's sample size, "5GB" (the default)
 *   "inner_chunk_mib", "shard_mib"  16 and 512 by default
 *   "threads"              0 (the default): the cores this process may use
 *   "verify", "skip_existing"  true by default
 *   "codecs"               the readers: "core", "numcodecs" (default), "plugin", "all"
 *   "search"               "adaptive" (default) or "exhaustive"
 * Lines go to say (NULL: silent). Returns the command's exit code: 0 when
 * every field was done, 1 when one failed (batch_manifest.json says which),
 * 2 when the arguments were refused (the line says why). */
DCTK_API int dctk_compress_run(const char *dataset, const char *dir, const char *options_json, dctk_say_fn say,
                               void *say_user);

#ifdef __cplusplus
}
#endif

/* --- DCTK_STATIC_LINKING_ONLY: the workflow's options and steps ----------- */
#ifdef DCTK_STATIC_LINKING_ONLY
#include <jansson.h>
#include <stdarg.h>

#include "dctk/best.h"
#include "dctk/dataset.h"
#include "dctk/eval.h"
#include "dctk/write.h"

#ifdef __cplusplus
extern "C" {
#endif

/* How fields are written: the writing commands' flags. */
typedef struct dctk_write_step {
    const char *cmd;         /* named in error lines: "dc_toolkit CMD: ..." */
    const char *dataset;     /* the input (names the store) */
    const char *where;       /* DIR: the store DIR/DATASET.zarr and the sweep's files */
    double inner_chunk_mib;  /* --inner-chunk-mib */
    bool no_spatial_split;   /* --no-spatial-split: whole slices per chunk (dctk_chunk_shape_split) */
    uint64_t max_inner_chunk_bytes; /* --max-inner-chunk-mib: a line above it with no_spatial_split; 0: 256 MiB */
    double shard_mib;        /* --shard-mib (fractions allowed) */
    long threads;            /* encoder threads; 0: the cores this process may use */
    uint64_t max_memory;     /* --max-memory; 0: the default budget */
    double memory_fraction;  /* --memory-threshold: the default budget's share; 0: DCTK_MEMORY_FRACTION */
    bool verify;             /* read back and compare */
    double bound_l1;         /* the gate on relative L1; NaN: the best file's threshold, if any */
    dctk_write_accept_fn accept; /* NULL: the sweep's gates or the library's default */
    void *accept_user;
    dctk_codec_portability level; /* the readers the written combo must suit (--codecs) */
    dctk_say_fn say;         /* NULL: silent */
    void *say_user;
    /* The ranks writing each field together (dctk_write_field_shared), NULL:
     * this process alone. Only member 0 says, records and tries the next best. */
    const dctk_write_team *team;
    /* The Python tool's --no-verify-gate: a field whose verification fails
     * the thresholds is stored all the same, with a line (the mask and a
     * lossless pipeline's exactness still refuse it). */
    bool verify_advisory;
    /* Its compression-ratio drift check against the sweep's prediction: a
     * line when |achieved - predicted| / predicted exceeds cr_drift_tol
     * (default 0.25); with cr_drift_gate a ratio that falls short by more
     * fails the field (not stored). */
    double cr_drift_tol;
    bool cr_drift_gate;
} dctk_write_step;

/* The defaults of the writing commands (shards of 512 MiB, verify, inner
 * chunks of 16 MiB, numcodecs readers, no bound). */
DCTK_API void dctk_write_step_defaults(dctk_write_step *w);

/* Send printf-style text to w's sink. */
DCTK_API void dctk_say(const dctk_write_step *w, dctk_say_to to, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* The line "dc_toolkit CMD: <detail>" to w's error sink; the exit code of
 * st (2 for DCTK_ERR_ARG, else 1). */
DCTK_API int dctk_say_fail(const dctk_write_step *w, dctk_status st);

/* Best records on the heap, NULL meaning none: an empty one (NULL when out
 * of memory), a file's (NULL when absent or unreadable, detail set), and the
 * release (accepts NULL). */
DCTK_API dctk_best *dctk_best_new(void);
DCTK_API dctk_best *dctk_best_load(const char *path);
DCTK_API void dctk_best_delete(dctk_best *b);
/* The winner's codec list of b as JSON (new reference; NULL for none). */
DCTK_API json_t *dctk_best_codecs_json(const dctk_best *b);
/* Record the gates g in best (created when NULL); NULL when out of memory. */
DCTK_API dctk_best *dctk_best_with_gates(dctk_best *best, const dctk_gates *g);
/* The gates a write of a given pipeline (--pipeline) is judged by, recorded
 * in *best (created when NULL): with a budget on the command line (flag_l1,
 * the relative L1 bound, NaN when not given, or --abs-error), the flags'
 * gates at that budget (no table, as the Python tool); else the gates of the
 * best file *best (its sweep's), any other gate flag given over them; else
 * the gates the threshold it records derives. Every enabled gate, the
 * physical bounds included, is then verified (with the field's own metric
 * config when a gate needs one). *gated is false when there is no threshold
 * at all: the verification is then advisory. *bound: the relative L1 bound
 * the write records (flag_l1, else the file's threshold, else the gates'
 * L1; NaN when not gated or for an absolute budget alone). */
DCTK_API dctk_status dctk_best_pipeline_gates(dctk_dataset *ds, size_t v, const dctk_evaluate_opts *eo, double flag_l1,
                                              dctk_best **best, bool *gated, double *bound);

/* What identifies the input a field was written from: {"path", "size",
 * "mtime_ns"} (the path alone when it is no file, as a glob). New reference. */
DCTK_API json_t *dctk_source_id(const char *dataset);

/* The combo to write for field var out of its best_VAR.json: best itself when
 * its readers are within w->level, else the file's best within the level, with
 * one line saying which combo would have won, at what ratio, and the flag that
 * writes it. A new record (dctk_best_delete), or NULL when no kept combo is
 * within the level (message said). */
DCTK_API dctk_best *dctk_best_at_level(const dctk_write_step *w, const char *var, const dctk_best *best);

/* --pipeline P: the codec list P means for variable var, checked: a file or
 * inline JSON, in the Python tool's {"compressor","filter","serializer"} form,
 * a Zarr v3 codec list, or a best_VAR.json (then *best gets it, a new record;
 * else NULL). Every codec known, each in a slot of its kind, and a trial
 * chunk of var's type encoded and decoded. Errors set the detail. */
DCTK_API dctk_status dctk_pipeline_load(const char *arg, const dctk_var *var, json_t **codecs, dctk_best **best);

/* The gate of a pipeline written without a threshold: masks kept and a
 * lossless pipeline exact; the error norms are said as advisory through the
 * sink of o->accept_user (a const dctk_write_step *; may be NULL). */
DCTK_API dctk_status dctk_write_accept_advisory(const dctk_var *var, const dctk_write_opts *o,
                                                const dctk_write_report *r);

/* Write variable v of ds into the store under w->where with codecs; best
 * (may be NULL) is the sweep's best_VAR.json, for the bound and the
 * provenance. Says what was achieved (beside the prediction when known).
 * Returns 0 or an exit code, after saying the error; *status (may be NULL)
 * gets the status, DCTK_ERR_BOUND when verification found the bound missed;
 * r gets the write's report (metrics, ratio, time). */
DCTK_API int dctk_write_step_field(const dctk_write_step *w, dctk_dataset *ds, size_t v, const json_t *codecs,
                                   const dctk_best *best, dctk_status *status, dctk_write_report *r);

/* When the whole field missed the bound that its sample met: the next-best
 * policy (dctk_write_next_best over WHERE/results_VAR.parquet, at most
 * `tries` lossy stages), saying each try, each with the pipeline its row
 * names (eo, the sweep's options, is no longer read). best is the combo that
 * missed.
 * last (may be NULL) gets the last try's report, *combo (may be NULL) its
 * combo (a new record). Returns 0 or an exit code, after saying the error. */
DCTK_API int dctk_write_step_next_best(const dctk_write_step *w, dctk_dataset *ds, size_t v,
                                       const dctk_evaluate_opts *eo, const dctk_best *best, int tries,
                                       dctk_write_report *last, dctk_best **combo);

/* The sweep, supplied by the caller (the command line's sweep with its
 * progress bar and interrupts): evaluate the fields of the dataset for which
 * want() returns true (the same answer on every rank), calling done after
 * each field's sweep on the rank that writes. Returns an exit code. */
typedef bool (*dctk_compress_want_fn)(void *user, const dctk_dataset *ds, size_t v);
typedef void (*dctk_compress_swept_fn)(void *user, const dctk_var *var, const dctk_evaluate_summary *s);
typedef int (*dctk_compress_sweep_fn)(void *user, dctk_compress_want_fn want, void *want_user,
                                      dctk_compress_swept_fn done, void *done_user);

typedef struct dctk_compress_opts {
    dctk_write_step write;           /* the input, DIR, the writer's flags and the sink */
    const char *vars;                /* comma-separated fields; NULL: every data variable */
    const char *field;               /* one field (--field-to-compress); NULL: see vars */
    const char *pipeline;            /* write every field with this (dctk_pipeline_load), no sweep */
    bool skip_existing;              /* skip fields already in the store */
    int argc;                        /* the command line, recorded with each field in */
    const char *const *argv;         /* DIR/batch_manifest.json (may be 0, NULL) */
    const dctk_evaluate_opts *eval;  /* the sweep's options, checked (where = write.where) */
    /* Under MPI (the caller's dctk_par): whether this rank is not the one
     * that writes, and the team's agreement on a status (dctk_par_agree:
     * DCTK_OK only when every rank had DCTK_OK). agree NULL: alone. */
    bool not_writer;
    dctk_status (*agree)(void *user, dctk_status st);
    void *agree_user;
    /* The distributed write (all three given and size > 1): this rank of
     * `size`; share sends rank 0's n bytes to every rank (dctk_par_bcast),
     * collect brings every rank's text to rank 0 (dctk_par_gather_text); both
     * with agree_user. Then the fields are written across the ranks (the
     * largest first, each to the rank with the least bytes so far), rank 0
     * gathers their records and merges; not_writer is ignored. A field of
     * more than its share (the bytes to write / size) is written by every
     * rank, each its share of the shards (dctk_write_field_shared), first. */
    int rank, size;
    dctk_status (*share)(void *user, void *buf, uint64_t n);
    dctk_status (*collect)(void *user, const char *text, char ***each);
    uint64_t (*sum)(void *user, uint64_t v); /* the sum over the ranks (dctk_par_sum); NULL: no field is split */
    /* every rank's n bytes to rank 0 (dctk_par_gather): each rank verifies
     * the shards of a split field it wrote, rank 0 adds the sums and judges;
     * NULL: no field is split */
    dctk_status (*gather)(void *user, const void *mine, uint64_t n, void *all);
    dctk_compress_sweep_fn sweep;    /* sweeps the fields without a result that holds */
    void *sweep_user;
    /* The Python tool's --no-continue-on-error: once a field failed, the
     * others are neither swept nor written (recorded as skipped, saying
     * why); one process only (under MPI every field is done). */
    bool stop_on_error;
    /* Its --no-consolidate: no merge and no consolidation at the end, and
     * the root's consolidated metadata, if any, dropped (merge_compressed_fields
     * makes it later). Otherwise a whole-file run merges, and a run of named
     * fields (--vars) consolidates the store's metadata. */
    bool no_consolidate;
} dctk_compress_opts;

/* Compress the dataset o->write.dataset into DIR/DATASET.zarr. Under MPI
 * every rank plans and sweeps; then every rank writes its share of the
 * fields (with share and collect; else rank 0 alone writes), and rank 0
 * writes the manifest and merges; every rank returns the same code. Returns the exit code of the command: 0 when every field was
 * done, 1 when one failed (DIR/batch_manifest.json says which), 2 when the
 * options were refused. */
DCTK_API int dctk_compress(const dctk_compress_opts *o);

#ifdef __cplusplus
}
#endif
#endif /* DCTK_STATIC_LINKING_ONLY */
#endif
