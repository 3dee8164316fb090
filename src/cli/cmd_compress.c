/* dc_toolkit compress: the write workflow. Per field: reuse its sweep result
 * in DIR when it still holds for this input, sweep only the fields without
 * one (or write --pipeline without any sweep), write, verify, merge. Safe to
 * repeat: fields already in the store are skipped; batch_manifest.json says
 * what happened to each. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compress_plan.h"
#include "dctk/threads.h"
#include "dctk/util.h"
#include "sweep_opts.h"
#include "write_opts.h"

static sweep_cli so;
static write_cli wo;
static const char *vars_arg, *pipeline_arg;
static bool skip_existing;

static const cli_opt opts[] = {
    {"--where-to-write", NULL, OPT_STR, &so.where, "DIR", "folder for results and the store (or the second argument)"},
    {"--field-to-compress", NULL, OPT_STR, &so.field, "VAR", "only this field (default: every data variable)"},
    {"--vars", NULL, OPT_STR, &vars_arg, "A,B", "only these fields, comma-separated (default: every data variable)"},
    {"--pipeline", NULL, OPT_STR, &pipeline_arg, "P",
     "write with this pipeline, no sweep: a file or inline JSON, {\"compressor\",\"filter\",\"serializer\"}, "
     "a codec list, or a best_VAR.json"},
    {"--skip-existing", "--no-skip-existing", OPT_BOOL, &skip_existing, NULL,
     "skip fields already complete in the store (default: skip; --no-skip-existing rewrites them)"},
    SWEEP_CLI_OPTS(so),
    WRITE_CLI_BASE_OPTS(wo),
    {0},
};

static const cli_foreign foreign[] = {
    SWEEP_CLI_FOREIGN,
    {"--verify-gate", "not taken yet: a field whose verification fails is not put in the store"},
    {"--no-verify-gate", "not taken yet: a field whose verification fails is not put in the store"},
    {"--cr-drift-tol", "not taken yet: batch_manifest.json records the predicted and achieved ratio"},
    {"--cr-drift-gate", "not taken yet: batch_manifest.json records the predicted and achieved ratio"},
    {"--no-cr-drift-gate", "not taken yet: batch_manifest.json records the predicted and achieved ratio"},
    {"--continue-on-error", "not taken yet: the other fields are written, and the exit status is 1"},
    {"--no-continue-on-error", "not taken yet: the other fields are written, and the exit status is 1"},
    {"--consolidate", "not taken yet: compress always ends with merge_compressed_fields"},
    {"--no-consolidate", "not taken yet: compress always ends with merge_compressed_fields"},
    {0},
};

static int run(int argc, char **argv);

const cli_cmd cmd_compress = {
    .name = "compress",
    .summary = "sweep what has no sweep result yet, write every field with its best combo, merge",
    .usage = "DATASET DIR [options]",
    .help = "For every data variable (or --vars / --field-to-compress): a field already in DIR/DATASET.zarr is\n"
            "skipped (--no-skip-existing rewrites it); a field whose DIR/best_FIELD.json still holds for this input\n"
            "(same space fingerprint, sample size limit and threshold) is written with it without a sweep; the\n"
            "others are swept (evaluate_combos) and written with their best combo. --pipeline writes every field\n"
            "with one given pipeline and sweeps nothing; its verification gates with a threshold\n"
            "(--override-existing-l1-error, or the one in a best_VAR.json) and is advisory without one. CF bounds\n"
            "and grid geometry (bounds targets, *_bnds, *_vertices) are not swept in whole-file runs: the merge\n"
            "copies them losslessly. Then merge_compressed_fields. DIR/batch_manifest.json records per field what\n"
            "happened, the pipeline, predicted and achieved ratio, the verification and the wall time; the exit\n"
            "status is 1 when any field failed. The combo written is the best whose codecs the readers of --codecs\n"
            "decode (default numcodecs: zarr-python with numcodecs); a line names a better one of a higher level\n"
            "and the flag that writes it. Examples:\n"
            "  dc_toolkit compress era5.nc out\n"
            "  dc_toolkit compress era5.nc out --vars t2m,q --pipeline out/best_t2m.json",
    .opts = opts,
    .run = run,
    .foreign = foreign,
};

/* combos tried after the best when the whole field misses the bound */
enum { NEXT_BEST_TRIES = 5 };

/* Write field v with codecs (best: its best_VAR.json or NULL) and record it;
 * falls back to the next best combos of the sweep when the bound is missed. */
static void write_one(compress_job *j, size_t v, const json_t *codecs, const dctk_best *best, const char *source,
                      bool fallback, double t0) {
    const dctk_var *var = dctk_dataset_var(j->ds, v);
    dctk_status st;
    dctk_write_report r;
    int rc = write_cli_field_report("compress", j->ds, v, j->dataset, so.where, codecs, best, so.inner_chunk_mib,
                                    &j->wo, &st, &r);
    json_t *used = json_incref((json_t *)codecs);
    if (rc != 0 && st == DCTK_ERR_BOUND && fallback) {
        dctk_best *combo = NULL;
        rc = write_cli_next_best_report("compress", j->ds, v, j->dataset, so.where, &j->eo, best, so.inner_chunk_mib,
                                        &j->wo, NEXT_BEST_TRIES, &r, &combo);
        if (combo) {
            json_decref(used);
            used = write_cli_codecs(combo);
            best = combo;
        }
        compress_record(j, var->name, rc == 0 ? "written" : "failed", rc == 0 ? "" : dctk_detail(), source, used,
                        best, &r, dctk_now() - t0);
        write_cli_best_free(combo);
    } else {
        compress_record(j, var->name, rc == 0 ? "written" : "failed", rc == 0 ? "" : dctk_detail(), source, used,
                        best, &r, dctk_now() - t0);
    }
    json_decref(used);
    j->failures += rc != 0;
}

/* Write field v with best (the sweep's choice within --codecs). */
static void write_best(compress_job *j, size_t v, const dctk_best *best, const char *source, double t0) {
    json_t *codecs = write_cli_codecs(best);
    write_one(j, v, codecs, best, source, true, t0);
    json_decref(codecs);
}

/* After each field's sweep: write it with the winner. */
static void write_swept(void *user, const dctk_var *var, const dctk_evaluate_summary *s) {
    compress_job *j = user;
    size_t v;
    char path[4096];
    dctk_best *all = s->best >= 0 && dctk_results_best_path(path, sizeof path, so.where, var->name) == DCTK_OK
                         ? write_cli_load_best(path) : NULL;
    dctk_best *best = all ? write_cli_at_level("compress", var->name, all, &wo) : NULL;
    write_cli_best_free(all);
    if (all && !best) {
        compress_record(j, var->name, "failed", "no kept combo within --codecs", "sweep", NULL, NULL, NULL,
                        s->seconds);
        j->failures++;
    } else if (!best || dctk_dataset_find(j->ds, var->name, &v) != DCTK_OK) {
        fprintf(stderr, "dc_toolkit compress: %s: no combo met the threshold, not written\n", var->name);
        compress_record(j, var->name, "failed", "no combo met the threshold", "sweep", NULL, NULL, NULL,
                        s->seconds);
        j->failures++;
    } else {
        write_best(j, v, best, "sweep", dctk_now() - s->seconds);
    }
    write_cli_best_free(best);
}

/* The fields that need no sweep: with --pipeline, or a sweep result that still holds. */
static void write_without_sweep(compress_job *j) {
    for (size_t v = 0; v < dctk_dataset_nvars(j->ds); v++) {
        double t0 = dctk_now();
        if (j->plan[v] == PLAN_REUSE) { /* the earlier sweep's best within --codecs */
            const char *name = dctk_dataset_var(j->ds, v)->name;
            dctk_best *best = write_cli_at_level("compress", name, j->best[v], &wo);
            if (best) write_best(j, v, best, j->source[v], t0);
            else compress_record(j, name, "failed", "no kept combo within --codecs", j->source[v], NULL, NULL, NULL,
                                 dctk_now() - t0);
            j->failures += !best;
            write_cli_best_free(best);
        }
        else if (j->plan[v] == PLAN_PIPELINE)
            compress_write_pipeline(j, v, pipeline_arg, write_one);
    }
}

static bool want_sweep(void *user, const dctk_dataset *ds, size_t v) {
    (void)ds;
    const compress_job *j = user;
    return j->plan[v] == PLAN_SWEEP;
}

/* Merge a whole-file run; *line gets the closing "store:" line, printed last. */
static int merge_store(const char *cmd, compress_job *j, char *line, size_t cap) {
    if (j->named) {
        snprintf(line, cap, "store: %s (the fields named; run merge_compressed_fields once every field is in)",
                 j->store);
        return 0;
    }
    dctk_status st = dctk_merge_fields(j->ds, j->store, wo.threads ? (int)wo.threads : dctk_available_cores());
    if (st != DCTK_OK) return cli_fail(cmd, st);
    cli_warn_skipped(cmd, j->ds);
    snprintf(line, cap, "store: %s", j->store);
    return 0;
}

/* Under MPI every rank plans and sweeps; rank 0 alone writes the fields and merges. */
static int compress_dataset(const char *cmd, const char *dataset) {
    compress_job j = {.dataset = dataset, .where = so.where, .so = &so, .wo = wo, .skip_existing = skip_existing,
                      .pipeline = pipeline_arg != NULL, .root = sweep_cli_is_root(&so)};
    int rc = compress_plan(cmd, &j, vars_arg);
    if (so.par) rc = dctk_par_agree(so.par, rc ? DCTK_ERR_ARG : DCTK_OK) == DCTK_OK ? 0 : (rc ? rc : 2);
    if (rc) {
        compress_job_free(&j);
        return rc;
    }
    if (j.root) write_without_sweep(&j);
    if (j.nsweep) {
        so.want = want_sweep;
        so.want_user = &j;
        int src = sweep_cli_run(cmd, dataset, &so, write_swept, &j);
        if (src && !j.failures) j.failures++;
        for (size_t v = 0; j.root && v < dctk_dataset_nvars(j.ds); v++) /* fields whose sweep failed */
            if (j.plan[v] == PLAN_SWEEP && !json_object_get(j.fields, dctk_dataset_var(j.ds, v)->name))
                compress_record(&j, dctk_dataset_var(j.ds, v)->name, "failed", "the sweep failed", "sweep", NULL,
                                NULL, NULL, 0);
    }
    char line[4200] = "";
    if (j.root && j.failures == 0 && (rc = merge_store(cmd, &j, line, sizeof line)) != 0) j.failures++;
    if (j.root) compress_manifest_write(&j);
    if (line[0]) printf("%s\n", line);
    int failed = j.failures;
    compress_job_free(&j);
    return rc ? rc : (failed ? 1 : 0);
}

static int run(int argc, char **argv) {
    const char *cmd = "compress";
    sweep_cli_defaults(&so);
    write_cli_defaults(&wo);
    vars_arg = pipeline_arg = NULL;
    skip_existing = true;
    const char *pos[2];
    int np = 0;
    int rc = cli_parse(&cmd_compress, argc, argv, pos, 1, 2, &np);
    if (rc) return rc < 0 ? 0 : rc;
    if (np == 2) so.where = pos[1];
    if ((rc = write_cli_check_level(cmd, &wo))) return rc;
    wo.threads = so.threads; /* one thread count for the sweep and the writer */
    wo.max_memory = so.max_memory;
    if (!so.where) {
        fprintf(stderr, "dc_toolkit %s: give DIR (second argument or --where-to-write)\n", cmd);
        return 2;
    }
    if ((rc = sweep_cli_par_begin(cmd, argc, argv, &so))) return rc;
    rc = compress_dataset(cmd, pos[0]);
    sweep_cli_par_end(&so);
    return rc;
}
