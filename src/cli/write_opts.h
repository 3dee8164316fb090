/* Options and printing shared by the commands that write fields
 * (compress_with_optimal, compress); the writing itself is src/write's. */
#ifndef DCTK_CLI_WRITE_OPTS_H
#define DCTK_CLI_WRITE_OPTS_H

#include "cli.h"
#include "dctk/best.h"
#include "dctk/eval.h"
#include "dctk/write.h"

typedef struct write_cli {
    long shard_mib, threads;
    uint64_t max_memory; /* --max-memory; 0: the default budget */
    bool verify;
    double bound_l1;                /* the gate on relative L1; NaN: the best file's threshold, if any */
    dctk_write_accept_fn accept;    /* NULL: the library's default gates */
    void *accept_user;
    const char *codecs;     /* --codecs: core, numcodecs, plugin, all */
    bool stock_only;        /* --stock-codecs-only: the Python tool's name for --codecs numcodecs */
    dctk_codec_portability level; /* what write_cli_check_level made of them */
} write_cli;

/* --inner-chunk-mib is shared with the sweep options where both appear, and
 * so is the thread count: one flag, --threads-per-rank, for every command
 * (compress gives the sweep's to the writer). */
#define WRITE_CLI_BASE_OPTS(w)                                                                                     \
    {"--shard-mib", NULL, OPT_INT, &(w).shard_mib, "MIB", "target shard size (default 512)"},                   \
    {"--verify", "--no-verify", OPT_BOOL, &(w).verify, NULL,                                                       \
     "read the store back and compare with the input (default: verify)"},                                        \
    {"--codecs", NULL, OPT_STR, &(w).codecs, "LEVEL",                                                              \
     "write the best combo whose codecs these readers decode: core (every Zarr v3 reader), numcodecs (zarr-python " \
     "with numcodecs), plugin (plus a numcodecs plugin package), all (dc_toolkit's own too) (default: numcodecs)"}, \
    {"--stock-codecs-only", NULL, OPT_BOOL, &(w).stock_only, NULL, "the Python tool's name of --codecs numcodecs"}
#define WRITE_CLI_OPTS(w)                                                                                          \
    WRITE_CLI_BASE_OPTS(w),                                                                                        \
    {"--threads-per-rank", NULL, OPT_INT, &(w).threads, "N",                                                       \
     "worker threads: the encoders (default: the cores this process may use)"},                                 \
    MEMORY_CLI_OPT((w).max_memory)

void write_cli_defaults(write_cli *w);

/* Check --codecs and --stock-codecs-only into w->level. Returns 0 or the exit
 * code of a usage error (message printed). */
int write_cli_check_level(const char *cmd, write_cli *w);

/* The combo to write for field var out of its best_VAR.json: best itself when
 * its readers are within w->level, else the file's best within the level, with
 * one line saying which combo would have won, at what ratio, and the flag that
 * writes it. A new record (write_cli_best_free), or NULL when no kept combo is
 * within the level (message printed). */
dctk_best *write_cli_at_level(const char *cmd, const char *var, const dctk_best *best, const write_cli *w);

/* Best records on the heap, NULL meaning none: an empty one (NULL when out of
 * memory), and its release (accepts NULL). */
dctk_best *write_cli_best_new(void);
void write_cli_best_free(dctk_best *b);
/* The winner's codec list of b as JSON (new reference; NULL for none). */
json_t *write_cli_codecs(const dctk_best *b);

/* Write variable v of ds into the dataset's store under where with codecs;
 * best (may be NULL) is the sweep's best_VAR.json, for the bound and the
 * provenance. Prints what was achieved (beside the prediction when known).
 * Returns 0 or an exit code, after printing the error; *status (may be NULL)
 * gets the status, DCTK_ERR_BOUND when verification found the bound missed. */
int write_cli_field(const char *cmd, dctk_dataset *ds, size_t v, const char *dataset, const char *where,
                    const json_t *codecs, const dctk_best *best, double inner_chunk_mib, const write_cli *w,
                    dctk_status *status);

/* write_cli_field, also handing back the write's report (metrics, ratio, time). */
int write_cli_field_report(const char *cmd, dctk_dataset *ds, size_t v, const char *dataset, const char *where,
                           const json_t *codecs, const dctk_best *best, double inner_chunk_mib, const write_cli *w,
                           dctk_status *status, dctk_write_report *r);

/* When the whole field missed the bound that its sample met: the library's
 * next-best policy (dctk_write_next_best, over WHERE/results_VAR.parquet, at
 * most `tries` lossy stages), printing each try. best is the combo that
 * missed. Returns 0 or an exit code, after printing the error. */
int write_cli_next_best(const char *cmd, dctk_dataset *ds, size_t v, const char *dataset, const char *where,
                        const dctk_evaluate_opts *eo, const dctk_best *best, double inner_chunk_mib,
                        const write_cli *w, int tries);

/* write_cli_next_best, also handing back the last try's report and combo
 * (a new record); both may be NULL. */
int write_cli_next_best_report(const char *cmd, dctk_dataset *ds, size_t v, const char *dataset, const char *where,
                               const dctk_evaluate_opts *eo, const dctk_best *best, double inner_chunk_mib,
                               const write_cli *w, int tries, dctk_write_report *last, dctk_best **combo);

/* Load a best file (a new record); NULL when absent or unreadable (detail set). */
dctk_best *write_cli_load_best(const char *path);

/* A --pipeline write with --abs-error: the flags' gates (the relative L1
 * bound when given, NaN otherwise; no table, as the Python tool) recorded in
 * best (created when NULL; returned), so the verification judges every one.
 * best unchanged without --abs-error. */
dctk_best *write_cli_pipeline_gates(const dctk_var *var, dctk_best *best, const dctk_evaluate_opts *eo, double bound);

/* COMP_IDX FILT_IDX SER_IDX from pos[0..2] (np of them given) unless --combo is
 * set. Returns 0 or the exit code of a usage error (message printed). */
int write_cli_indices(const char *cmd, const char *combo_path, const char *where, const char *field,
                      const char *const *pos, int np, int *idx);

/* The pipeline of field v: from combo_path (--combo) when given, else the
 * indices resolved in the rebuilt space, checked against the fingerprint of
 * WHERE/best_FIELD.json when that exists. *best (may be NULL) gets the best
 * file, for the bound and the provenance; its "ratio" is dropped when it
 * describes another combo, so no prediction is claimed for this one. */
dctk_status write_cli_resolve(dctk_dataset *ds, size_t v, const char *where, const char *combo_path, const int *idx,
                              const dctk_evaluate_opts *eo, json_t **codecs, dctk_best **best);

#endif
