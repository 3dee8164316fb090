/* dctk_compress: what to do with each field (skip, reuse a sweep result,
 * write a given pipeline, sweep), and the record of what was done
 * (batch_manifest.json). The driver is compress.c. */
#ifndef DCTK_WRITE_COMPRESS_INTERNAL_H
#define DCTK_WRITE_COMPRESS_INTERNAL_H

#include "dctk/compress.h"
#include "dctk/dataset.h"

typedef enum {
    PLAN_NONE = 0, /* not selected (a coordinate, or not among --vars) */
    PLAN_GRID,     /* CF bounds or grid geometry: copied losslessly by the merge */
    PLAN_EXISTS,   /* already complete in the store: skipped */
    PLAN_PIPELINE, /* --pipeline */
    PLAN_REUSE,    /* its best_VAR.json in DIR still holds */
    PLAN_SWEEP,
} compress_plan_kind;

typedef struct compress_job {
    const dctk_compress_opts *o;
    const char *dataset, *where;
    dctk_write_step wo;
    bool skip_existing, pipeline, root, named;
    dctk_dataset *ds;
    char store[4096];
    dctk_evaluate_opts eo;
    compress_plan_kind *plan; /* per variable */
    dctk_best **best;         /* PLAN_REUSE: the best_VAR.json */
    char **source;            /* PLAN_REUSE: its path */
    size_t nsweep;
    json_t *fields;  /* batch_manifest.json's "fields": this run's records, ours */
    json_t *results; /* its "results": the same in the Python tool's schema */
    json_t *flags;   /* the command line, on each record */
    char run_time[32]; /* when this run began (UTC, ISO 8601) */
    int failures;
    /* the distributed write: what rank 0's sweeps gave, shared with every rank */
    struct compress_note *notes;
} compress_job;

/* A field's sweep as rank 0 saw it, for the rank that writes the field. */
typedef struct compress_note {
    int32_t swept;   /* the sweep returned (its best file is in DIR when best >= 0) */
    int32_t pad;
    int64_t best;    /* the summary's best combo, -1: none kept */
    double seconds;  /* the sweep's wall time */
} compress_note;

/* Open the dataset and decide each field's plan, saying a line for each
 * field skipped or reused. Returns 0 or an exit code (error said). */
int dctk_compress_plan(compress_job *j);

void dctk_compress_job_free(compress_job *j);

/* Record field `var` in the manifest: status "written", "skipped" or
 * "failed", why (may be ""), where the pipeline came from, the pipeline
 * (may be NULL), the best file (predicted ratio; may be NULL), the write's
 * report (may be NULL) and the wall time. */
void dctk_compress_record(compress_job *j, const char *var, const char *status, const char *why, const char *source,
                     const json_t *codecs, const dctk_best *best, const dctk_write_report *r, double wall_s);

/* Write DIR/batch_manifest.json (atomically: a temporary file renamed),
 * keeping the records of earlier runs into the same store: a field this run
 * did not touch keeps its last record, and so does one it found already in
 * the store. */
void dctk_compress_manifest_write(compress_job *j);

typedef void (*compress_write_fn)(compress_job *j, size_t v, const json_t *codecs, const dctk_best *best,
                                  const char *source, bool fallback, double t0);

/* --pipeline P for field v: load and check it, choose the gate (a threshold
 * gates; without one the verification is advisory), write with `write`. */
void dctk_compress_write_pipeline(compress_job *j, size_t v, const char *arg, compress_write_fn write);

/* The gates dctk_best_pipeline_gates verifies a --pipeline write of var by
 * (b: the best file the pipeline came from, or NULL), without the metric
 * config it may read from the field: *gated false when there is no
 * threshold (advisory); *own_cfg when b's own metric config serves them;
 * *bound the relative L1 bound the write records (flag_l1, else b's
 * threshold, else the gates' L1; NaN when not gated). */
dctk_status dctk_pipeline_gates(const dctk_var *var, const dctk_evaluate_opts *eo, double flag_l1, const dctk_best *b,
                                dctk_gates *g, bool *gated, bool *own_cfg, double *bound);

#endif
