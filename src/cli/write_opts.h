/* Options and driver shared by the commands that write fields
 * (compress_with_optimal, compress). */
#ifndef DCTK_CLI_WRITE_OPTS_H
#define DCTK_CLI_WRITE_OPTS_H

#include "cli.h"
#include "dctk/compress.h"

typedef struct write_cli {
    long shard_mib, threads;
    bool verify;
} write_cli;

/* --inner-chunk-mib is shared with the sweep options where both appear. */
#define WRITE_CLI_OPTS(w)                                                                                          \
    {"--shard-mib", NULL, OPT_INT, &(w).shard_mib, "MIB", "target shard size (default 512)"},                   \
    {"--threads", NULL, OPT_INT, &(w).threads, "N", "encoder threads (default: the cores this process may use)"}, \
    {"--verify", "--no-verify", OPT_BOOL, &(w).verify, NULL,                                                       \
     "read the store back and compare with the input (default: verify)"}

void write_cli_defaults(write_cli *w);

/* Write variable v of ds into the dataset's store under where with codecs;
 * best (may be NULL) is the sweep's best_VAR.json, for the bound and the
 * provenance. Prints what was achieved (beside the prediction when known).
 * Returns 0 or an exit code, after printing the error. */
int write_cli_field(const char *cmd, dctk_dataset *ds, size_t v, const char *dataset, const char *where,
                    const json_t *codecs, const json_t *best, double inner_chunk_mib, const write_cli *w);

/* Load {where}/best_{var}.json, or the given path; NULL when absent (detail set). */
json_t *write_cli_load_best(const char *path);

#endif
