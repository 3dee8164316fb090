/* dc_toolkit compress: the flags of the write workflow, run by the library
 * (dctk_compress in dctk/compress.h) with the command line's sweep. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dctk/compress.h"
#include "dctk/threads.h"
#include "dctk/util.h"
#include "sweep_opts.h"
#include "write_opts.h"

static sweep_cli so;
static write_cli wo;
static const char *vars_arg, *pipeline_arg;
static bool skip_existing, append;
/* the Python tool's write-step switches */
static bool verify_gate, cr_drift_gate, continue_on_error, consolidate;
static double cr_drift_tol;

static const cli_opt opts[] = {
    {"--where-to-write", NULL, OPT_STR, &so.where, "DIR", "folder for results and the store (or the second argument)"},
    {"--field-to-compress", NULL, OPT_STR, &so.field, "VAR", "only this field (default: every data variable)"},
    {"--vars", NULL, OPT_STR, &vars_arg, "A,B", "only these fields, comma-separated (default: every data variable)"},
    {"--pipeline", NULL, OPT_STR, &pipeline_arg, "P",
     "write with this pipeline, no sweep: a file or inline JSON, {\"compressor\",\"filter\",\"serializer\"}, "
     "a codec list, a best_VAR.json, or a manifest_VAR.json (the Python tool's; gates on its thresholds)"},
    {"--skip-existing", "--no-skip-existing", OPT_BOOL, &skip_existing, NULL,
     "skip fields already complete in the store when written from the same input (size, mtime) with the same "
     "pipeline, chunks, shards, verification and gates (every gate: L1, --linf-threshold, --abs-error, "
     "--phys-max...) (each change is said and the field rewritten; an array "
     "with no record of ours is rewritten) (default: skip; --no-skip-existing rewrites them)"},
    {"--append", NULL, OPT_BOOL, &append, NULL,
     "grow DIR's store of this run along time by the steps the input (the run's files so far) has beyond it: "
     "only the new shards are written, with the store's codecs, and verified; no sweep (under mpirun each field's "
     "new shards are shared out over the ranks, each writing and verifying its own)"},
    {"--verify-gate", "--no-verify-gate", OPT_BOOL, &verify_gate, NULL,
     "the Python tool's: a field whose verification fails the thresholds is not stored (default); "
     "--no-verify-gate stores it with a line (a missing value turned into a number, or a lossless pipeline that "
     "changed values, still refuses it)"},
    {"--cr-drift-tol", NULL, OPT_REAL, &cr_drift_tol, "F",
     "the Python tool's: a line when the achieved ratio is off the sweep's predicted one by more than this "
     "fraction (default 0.25)"},
    {"--cr-drift-gate", "--no-cr-drift-gate", OPT_BOOL, &cr_drift_gate, NULL,
     "the Python tool's: fail a field whose ratio falls short of the sweep's by more than --cr-drift-tol, "
     "not stored (default: the line only)"},
    {"--continue-on-error", "--no-continue-on-error", OPT_BOOL, &continue_on_error, NULL,
     "the Python tool's: after a field fails, go on with the others (default); --no-continue-on-error "
     "stops there, the rest recorded as skipped (under mpirun the ranks stop together after the round of fields "
     "in which one failed; exit 1 either way)"},
    {"--consolidate", "--no-consolidate", OPT_BOOL, &consolidate, NULL,
     "the Python tool's: end by consolidating the store's metadata, a whole-file run by merging (default); "
     "--no-consolidate leaves that to merge_compressed_fields and drops any earlier consolidated metadata"},
    SWEEP_CLI_OPTS(so),
    WRITE_CLI_BASE_OPTS(wo),
    {0},
};

static const cli_foreign foreign[] = {
    SWEEP_CLI_FOREIGN,
    {0},
};

static int run(int argc, char **argv);

const cli_cmd cmd_compress = {
    .name = "compress",
    .summary = "sweep what has no sweep result yet, write every field with its best combo, merge",
    .usage = "DATASET DIR [options]",
    .help = "For every data variable (or --vars / --field-to-compress): a field already in DIR/DATASET.zarr is\n"
            "skipped when this run would write it the same way (same input size and mtime, pipeline, chunks,\n"
            "shards, verification, every gate), else rewritten with a line saying what changed (--no-skip-existing\n"
            "rewrites it anyway); a field whose DIR/best_FIELD.json still holds for this input\n"
            "(same space fingerprint, sample and gates: the sample's plan and digest decide, not the text of\n"
            "--eval-data-size-limit) is written with it without a sweep; the\n"
            "others are swept (evaluate_combos) and written with their best combo. --pipeline writes every field\n"
            "with one given pipeline and sweeps nothing; with a threshold (--override-existing-l1-error, or the\n"
            "one in a best_VAR.json) its verification gates on every enabled gate (L1, L2, Linf, bias, --phys-min,\n"
            "--phys-max, ...), and is advisory without one (but for --phys-min/--phys-max, which still gate). CF bounds\n"
            "and grid geometry (bounds targets, *_bnds, *_vertices) are not swept in whole-file runs: the merge\n"
            "copies them losslessly. Then merge_compressed_fields (a --vars run consolidates the store's metadata\n"
            "only; --no-consolidate neither). A verification that fails the thresholds keeps the field out of the\n"
            "store (--no-verify-gate stores it with a line); an achieved ratio off the sweep's by more than\n"
            "--cr-drift-tol is said, and with --cr-drift-gate one short of it fails the field. DIR/batch_manifest.json records per field what\n"
            "happened, the pipeline, predicted and achieved ratio, the verification, the wall time, the run's time\n"
            "and flags (also in the Python tool's schema: results, any_error), keeping the fields of earlier runs\n"
            "into the same store; the exit status is 1 when any field failed. The combo written is the best whose codecs the readers of --codecs\n"
            "decode (default numcodecs: zarr-python with numcodecs); a line names a better one of a higher level\n"
            "and the flag that writes it. --append grows the store instead: DATASET is the whole run so far\n"
            "('run/t_*.nc'), the store's time coordinate must be where the input's begins, and only the shards of\n"
            "the new steps are written (a partial last shard again, from the input) with each field's stored\n"
            "pipeline, verified, then moved in. Under mpirun every rank writes: the fields, the largest first, each\n"
            "to the rank with the fewest bytes so far (a 'write:' line says which) and verified there, a field\n"
            "larger than a rank's share split by shards over every rank, each rank reading back and verifying the\n"
            "shards it wrote and rank 0 judging the field from every rank's sums; rank 0 merges. --append under\n"
            "mpirun shares each field's new shards out over the ranks the same way (each writes and verifies its\n"
            "own; rank 0 checks the store first, judges, moves the shards in, rewrites the coordinates and\n"
            "merges). The store is the one a single process writes, byte for byte; DIR must be shared by the\n"
            "ranks. Examples:\n"
            "  dc_toolkit compress era5.nc out\n"
            "  dc_toolkit compress era5.nc out --vars t2m,q --pipeline out/best_t2m.json\n"
            "  dc_toolkit compress 'run/t_*.nc' out --append",
    .opts = opts,
    .run = run,
    .foreign = foreign,
};

/* The sweep dctk_compress asks for: the command line's, with its progress
 * bar, interrupts and summary lines. */
typedef struct {
    const char *cmd, *dataset;
} sweep_call;

static int sweep_fields(void *user, dctk_compress_want_fn want, void *want_user, dctk_compress_swept_fn done,
                        void *done_user) {
    const sweep_call *c = user;
    so.want = want;
    so.want_user = want_user;
    return sweep_cli_run(c->cmd, c->dataset, &so, done, done_user);
}

static dctk_status agree(void *user, dctk_status st) { return dctk_par_agree(user, st); }
static dctk_status share(void *user, void *buf, uint64_t n) { return dctk_par_bcast(user, buf, n); }
static dctk_status collect(void *user, const char *text, char ***each) {
    return dctk_par_gather_text(user, text, each);
}
static uint64_t sum(void *user, uint64_t v) { return dctk_par_sum(user, v); }
static dctk_status gather(void *user, const void *mine, uint64_t n, void *all) {
    return dctk_par_gather(user, mine, n, all);
}

static int compress_dataset(const char *cmd, const char *dataset, int argc, char **argv) {
    if (vars_arg && !vars_arg[strspn(vars_arg, ", \t")]) { /* "" or ",": a run that would do nothing */
        fprintf(cli_err(), "dc_toolkit %s: --vars '%s' names no field: give one or more names (A,B), or leave --vars "
                "out for every data variable\n", cmd, vars_arg);
        return 2;
    }
    dctk_evaluate_opts eo;
    int rc = sweep_cli_eval_opts(cmd, &so, &eo);
    if (so.par && rc) return dctk_par_agree(so.par, DCTK_ERR_ARG) == DCTK_OK ? 0 : rc;
    if (rc) return rc;
    const char *unchecked = pipeline_arg ? sweep_cli_requirements_unchecked() : NULL;
    if (unchecked) { /* the same answer on every rank: no agreement needed */
        if (sweep_cli_is_root(&so))
            fprintf(cli_err(), "dc_toolkit %s: --requirements %s asks for %s, which the sweep holds and a --pipeline "
                    "write does not check: leave out --pipeline\n", cmd, so.requirements, unchecked);
        return 2;
    }
    so.stop_after_failure = !continue_on_error;
    sweep_call call = {.cmd = cmd, .dataset = dataset};
    dctk_compress_opts o = {.vars = vars_arg, .field = so.field, .pipeline = pipeline_arg,
                            .skip_existing = skip_existing, .argc = argc, .argv = (const char *const *)argv,
                            .eval = &eo, .not_writer = !sweep_cli_is_root(&so),
                            .agree = so.par ? agree : NULL, .agree_user = so.par, .sweep = sweep_fields,
                            .rank = so.par ? dctk_par_rank(so.par) : 0, .size = so.par ? dctk_par_size(so.par) : 1,
                            .share = so.par ? share : NULL, .collect = so.par ? collect : NULL,
                            .sum = so.par ? sum : NULL, .gather = so.par ? gather : NULL,
                            .sweep_user = &call, .stop_on_error = !continue_on_error, .no_consolidate = !consolidate};
    write_cli_step(cmd, dataset, so.where, &eo, &wo, &o.write);
    o.write.verify_advisory = !verify_gate;
    o.write.cr_drift_tol = cr_drift_tol;
    o.write.cr_drift_gate = cr_drift_gate;
    return dctk_compress(&o);
}

/* --append: one line per field of what was added and how it verified. */
static void append_notify(void *user, const dctk_var *var, size_t had, const dctk_write_report *r, dctk_status st) {
    (void)user;
    if (st != DCTK_OK) return; /* the caller prints the error */
    if (!r) {
        fprintf(cli_out(), "%s: %zu steps along '%s', as the input: nothing to append\n", var->name, had, var->dims[0]);
        return;
    }
    fprintf(cli_out(), "%s: appended %zu steps along '%s' (%zu -> %zu): %.3f MB written, ratio %.3f", var->name,
           var->shape[0] - had, var->dims[0], had, var->shape[0], (double)r->bytes_out / 1e6, r->ratio);
    if (r->verified) fprintf(cli_out(), ", verified: L1 %.3e, max abs error %g", r->l1_rel, r->max_abs_err);
    fprintf(cli_out(), "\n");
}

/* Under mpirun every rank appends together (dctk_append_opts.team); rank 0 says what happened. */
static int append_dataset(const char *cmd, const char *dataset) {
    bool root = sweep_cli_is_root(&so);
    if (pipeline_arg) { /* the same answer on every rank */
        if (root)
            fprintf(cli_err(), "dc_toolkit %s: --append writes each field with the pipeline its store holds: drop "
                    "--pipeline\n", cmd);
        return 2;
    }
    char store[4096];
    dctk_dataset *ds = NULL;
    dctk_status st = dctk_dataset_open(dataset, &ds);
    if (st == DCTK_OK) st = dctk_store_path_for(so.where, dataset, store, sizeof store);
    dctk_write_team team = {0};
    if (so.par && dctk_par_size(so.par) > 1) {
        team = (dctk_write_team){.rank = dctk_par_rank(so.par), .size = dctk_par_size(so.par), .share = share,
                                 .agree = agree, .sum = sum, .gather = gather, .user = so.par};
        st = dctk_par_agree(so.par, st); /* every rank opened the input, or none goes on */
    }
    dctk_append_opts ao = {.team = team.size > 1 ? &team : NULL,
                           .threads = wo.threads ? (int)wo.threads : dctk_available_cores(), .verify = wo.verify,
                           .bound_l1 = so.override_l1, .notify = append_notify};
    if (st == DCTK_OK) st = dctk_append_dataset(ds, store, &ao);
    dctk_dataset_close(ds);
    if (st != DCTK_OK) return root ? cli_fail(cmd, st) : (st == DCTK_ERR_ARG ? 2 : 1);
    if (root) fprintf(cli_out(), "store: %s\n", store);
    return 0;
}

static int run(int argc, char **argv) {
    const char *cmd = "compress";
    sweep_cli_defaults(&so);
    write_cli_defaults(&wo);
    vars_arg = pipeline_arg = NULL;
    skip_existing = true;
    append = false;
    verify_gate = continue_on_error = consolidate = true;
    cr_drift_gate = false;
    cr_drift_tol = 0.25;
    const char *pos[2];
    int np = 0;
    int rc = cli_parse(&cmd_compress, argc, argv, pos, 1, 2, &np);
    if (rc) return rc < 0 ? 0 : rc;
    if (np == 2) so.where = pos[1];
    if ((rc = write_cli_check_level(cmd, &wo))) return rc;
    /* the sweep's best file names first what this run writes */
    so.codecs_level = wo.level == DCTK_PORT_DCTK ? "all" : dctk_portability_name(wo.level);
    wo.threads = so.threads; /* one thread count for the sweep and the writer */
    wo.max_memory = so.max_memory;
    if (!so.where) {
        fprintf(cli_err(), "dc_toolkit %s: give DIR (second argument or --where-to-write)\n", cmd);
        return 2;
    }
    if (!(cr_drift_tol >= 0 && cr_drift_tol <= 10)) {
        fprintf(cli_err(), "dc_toolkit %s: --cr-drift-tol %g: give a fraction from 0 to 10\n", cmd, cr_drift_tol);
        return 2;
    }
    if ((rc = sweep_cli_par_begin(cmd, argc, argv, &so))) return rc;
    if (append) rc = append_dataset(cmd, pos[0]);
    else rc = compress_dataset(cmd, pos[0], argc, argv);
    sweep_cli_par_end(&so);
    return rc;
}
