/* Options shared by the commands that write fields (compress_with_optimal,
 * compress); the writing itself is src/write's (dctk/compress.h). */
#ifndef DCTK_CLI_WRITE_OPTS_H
#define DCTK_CLI_WRITE_OPTS_H

#include "cli.h"
#include "dctk/best.h"
#include "dctk/compress.h"
#include "dctk/eval.h"
#include "dctk/write.h"

typedef struct write_cli {
    double shard_mib; /* may be a fraction: small fields with several shards along time */
    long threads;
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
    {"--shard-mib", NULL, OPT_REAL, &(w).shard_mib, "MIB", "target shard size (default 512; fractions allowed)"}, \
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

/* The library's write step for these flags (dctk/compress.h) and the chunk
 * layout and memory share of the sweep's (eo), saying its lines on stdout
 * and stderr as every command does. */
void write_cli_step(const char *cmd, const char *dataset, const char *where, const dctk_evaluate_opts *eo,
                    const write_cli *w, dctk_write_step *out);

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
