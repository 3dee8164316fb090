/* dc_toolkit compress: the one-shot pipeline. Sweep every field, write each
 * with its best combo, merge. */
#include <stdio.h>

#include "dctk/threads.h"
#include "sweep_opts.h"
#include "write_opts.h"

static sweep_cli so;
static write_cli wo;

static const cli_opt opts[] = {
    {"--where-to-write", NULL, OPT_STR, &so.where, "DIR", "folder for results and the store (or the second argument)"},
    {"--field-to-compress", NULL, OPT_STR, &so.field, "VAR", "only this field (default: every data variable)"},
    SWEEP_CLI_OPTS(so),
    WRITE_CLI_BASE_OPTS(wo),
    {0},
};

static int run(int argc, char **argv);

const cli_cmd cmd_compress = {
    .name = "compress",
    .summary = "one shot: sweep every field, write each with its best combo, verify, merge",
    .usage = "DATASET --where-to-write DIR [options]",
    .help = "Runs evaluate_combos on every data variable (or --field-to-compress), then compress_with_optimal\n"
            "with each field's best combo, then merge_compressed_fields. Prints, per field, the ratio the sweep\n"
            "predicted beside the ratio the store achieved. Example:\n"
            "  dc_toolkit compress era5.nc --where-to-write out",
    .opts = opts,
    .run = run,
};

/* combos tried after the best when the whole field misses the bound */
enum { NEXT_BEST_TRIES = 5 };

typedef struct {
    const char *dataset;
    dctk_dataset *ds;
    int failures;
} job;

/* After each field's sweep: write it with the winner. */
static void write_best(void *user, const dctk_var *var, const dctk_evaluate_summary *s) {
    job *j = user;
    size_t v;
    char path[4096];
    snprintf(path, sizeof path, "%s/best_%s.json", so.where, var->name);
    json_t *best = s->best >= 0 ? write_cli_load_best(path) : NULL;
    if (!best || dctk_dataset_find(j->ds, var->name, &v) != DCTK_OK) {
        fprintf(stderr, "dc_toolkit compress: %s: no combo met the threshold, not written\n", var->name);
        j->failures++;
    } else {
        dctk_status st;
        int rc = write_cli_field("compress", j->ds, v, j->dataset, so.where, json_object_get(best, "codecs"), best,
                                 so.inner_chunk_mib, &wo, &st);
        dctk_evaluate_opts eo;
        if (rc != 0 && st == DCTK_ERR_BOUND && sweep_cli_eval_opts("compress", &so, &eo) == 0)
            rc = write_cli_next_best("compress", j->ds, v, j->dataset, so.where, &eo, best, so.inner_chunk_mib, &wo,
                                     NEXT_BEST_TRIES);
        j->failures += rc != 0;
    }
    json_decref(best);
}

/* Under MPI every rank sweeps; rank 0 alone writes the fields and merges. */
static int sweep_and_write(const char *cmd, const char *dataset) {
    job j = {.dataset = dataset};
    bool root = sweep_cli_is_root(&so);
    dctk_status st = root ? dctk_dataset_open(dataset, &j.ds) : DCTK_OK;
    if (so.par) st = dctk_par_agree(so.par, st);
    if (st != DCTK_OK) {
        dctk_dataset_close(j.ds);
        return root ? cli_fail(cmd, st) : (st == DCTK_ERR_ARG ? 2 : 1);
    }
    int rc = sweep_cli_run(cmd, dataset, &so, write_best, &j);
    if (!root) return rc;
    if (rc == 0 && j.failures == 0 && !so.field) {
        char store[4096];
        st = dctk_store_path_for(so.where, dataset, store, sizeof store);
        if (st == DCTK_OK) st = dctk_merge_fields(j.ds, store, wo.threads ? (int)wo.threads : dctk_available_cores());
        if (st != DCTK_OK) rc = cli_fail(cmd, st);
        else printf("store: %s\n", store);
        if (st == DCTK_OK) cli_warn_skipped(cmd, j.ds);
    } else if (rc == 0 && j.failures == 0) {
        char store[4096];
        dctk_store_path_for(so.where, dataset, store, sizeof store);
        printf("store: %s (one field; run merge_compressed_fields once every field is in)\n", store);
    }
    dctk_dataset_close(j.ds);
    return rc ? rc : (j.failures ? 1 : 0);
}

static int run(int argc, char **argv) {
    const char *cmd = "compress";
    sweep_cli_defaults(&so);
    write_cli_defaults(&wo);
    const char *pos[2];
    int np = 0;
    int rc = cli_parse(&cmd_compress, argc, argv, pos, 1, 2, &np);
    if (rc) return rc < 0 ? 0 : rc;
    if (np == 2) so.where = pos[1];
    wo.threads = so.threads; /* one thread count for the sweep and the writer */
    if (!so.where) {
        fprintf(stderr, "dc_toolkit %s: --where-to-write DIR is required\n", cmd);
        return 2;
    }
    if ((rc = sweep_cli_par_begin(cmd, argc, argv, &so))) return rc;
    rc = sweep_and_write(cmd, pos[0]);
    sweep_cli_par_end(&so);
    return rc;
}
