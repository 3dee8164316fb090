/* dc_toolkit compress_with_optimal: write a field with a chosen combo. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <math.h>

#include "dctk/compress.h"
#include "sweep_opts.h"
#include "write_opts.h"

static sweep_cli so;
static write_cli wo;
static const char *combo_path, *pipeline_arg;
static double gate_l1;

static const cli_opt opts[] = {
    {"--combo", NULL, OPT_STR, &combo_path, "best_FIELD.json",
     "take the pipeline from this file (written by evaluate_combos); the indices are then optional"},
    {"--pipeline", NULL, OPT_STR, &pipeline_arg, "P",
     "write with this pipeline, no indices: a file or inline JSON, {\"compressor\",\"filter\",\"serializer\"}, "
     "a codec list, a best_VAR.json, or a manifest_VAR.json (the Python tool's; gates on its thresholds)"},
    SPACE_CLI_OPTS(so),
    GATE_CLI_OPTS(so),
    {"--thresholds-table", NULL, OPT_STR, &so.thresholds, "CSV",
     "threshold table (default: the l1_error_thresholds.csv shipped with dc_toolkit)"},
    WRITE_CLI_OPTS(wo),
    MEMORY_SHARE_CLI_OPT(so.memory_threshold),
    {"--allow-shared-node", NULL, OPT_BOOL, &so.allow_shared_node, NULL,
     "under MPI, allow several ranks on one node (tests); default: one rank per node"},
    {"--verbose", NULL, OPT_BOOL, &so.verbose, NULL, "debug log: which shards each rank wrote and verified"},
    {0},
};

/* Under mpirun: the ranks write the field together, each its share of the shards. */
static dctk_write_team team;
static bool agreed; /* this rank reached the team's agreement before the write */

static dctk_status team_share(void *user, void *buf, uint64_t n) { return dctk_par_bcast(user, buf, n); }
static dctk_status team_agree(void *user, dctk_status st) { return dctk_par_agree(user, st); }
static uint64_t team_sum(void *user, uint64_t v) { return dctk_par_sum(user, v); }
static dctk_status team_gather(void *user, const void *mine, uint64_t n, void *all) {
    return dctk_par_gather(user, mine, n, all);
}

/* dctk_write_step_field, by every rank together when there are several. */
static int write_step(dctk_write_step *step, dctk_dataset *ds, size_t v, const json_t *codecs, const dctk_best *best,
                      dctk_write_report *r) {
    if (so.par && dctk_par_size(so.par) > 1) {
        agreed = true;
        if (dctk_par_agree(so.par, DCTK_OK) != DCTK_OK) return 1; /* another rank failed before: said there */
        team = (dctk_write_team){.rank = dctk_par_rank(so.par), .size = dctk_par_size(so.par), .share = team_share,
                                 .agree = team_agree, .sum = team_sum, .gather = team_gather, .user = so.par};
        step->team = &team;
    }
    return dctk_write_step_field(step, ds, v, codecs, best, NULL, r);
}

static int run(int argc, char **argv);

const cli_cmd cmd_compress_with_optimal = {
    .name = "compress_with_optimal",
    .summary = "write one field with a chosen combo into DIR/DATASET.zarr, then verify it",
    .usage = "DATASET DIR FIELD COMP_IDX FILT_IDX SER_IDX [options]",
    .help = "Resolves the combo (COMP_IDX, FILT_IDX, SER_IDX; -1 = none) in the codec space that\n"
            "evaluate_combos recorded in DIR/space_FIELD.json, without reading the field (when the record is\n"
            "missing, or the input or the sampling options changed since the sweep, the space is rebuilt from\n"
            "the field, with a line); the same --eval-data-size-limit and class flags are needed (a different\n"
            "space is refused when DIR/best_FIELD.json records another fingerprint, while one that codecs added\n"
            "since only extend keeps every index), or takes the pipeline from\n"
            "--combo. Streams the whole field into DIR/DATASET.zarr as the array FIELD, in inner\n"
            "chunks of --inner-chunk-mib grouped into shards of --shard-mib, under a staging name, then reads it\n"
            "back and compares it with the input; only then does it replace an earlier copy of FIELD (a failed\n"
            "check leaves that copy as it was). Another process writing the same FIELD is refused. With --combo,\n"
            "the combo is the best one whose codecs the readers of --codecs decode (default numcodecs). --pipeline\n"
            "writes a pipeline given as a file or inline JSON instead, with no sweep and no indices. Under mpirun\n"
            "the ranks write the field together, each an even share of its shards, and each reads back and\n"
            "verifies the shards it wrote; rank 0 judges the whole field from every rank's sums, commits and\n"
            "prints. Examples:\n"
            "  dc_toolkit compress_with_optimal era5.nc out t2m 97 4 -1\n"
            "  dc_toolkit compress_with_optimal era5.nc out t2m --pipeline \\\n"
            "    '{\"filter\": null, \"serializer\": null, \"compressor\": {\"name\": \"zstd\", \"configuration\": {\"level\": 3}}}'",
    .opts = opts,
    .run = run,
};

/* --pipeline: no space, no indices; a threshold gates, else advisory (the physical bounds given still gate). */
static const char *field_name(dctk_dataset *ds, size_t v) { return dctk_dataset_var(ds, v)->name; }

static int write_pipeline(const char *cmd, dctk_dataset *ds, size_t v, const char *dataset, const char *where,
                          const dctk_evaluate_opts *eo) {
    json_t *codecs = NULL;
    dctk_best *best = NULL;
    dctk_status st = dctk_pipeline_load(pipeline_arg, dctk_dataset_var(ds, v), &codecs, &best);
    if (st != DCTK_OK) return cli_fail(cmd, st);
    if (best && best->var && strcmp(best->var, field_name(ds, v)) != 0) best->combo.ratio = NAN;
    bool gated = false;
    st = dctk_best_pipeline_gates(ds, v, eo, gate_l1, &best, &gated, &wo.bound_l1);
    if (st != DCTK_OK) {
        json_decref(codecs);
        dctk_best_delete(best);
        return cli_fail(cmd, st);
    }
    dctk_write_step step;
    write_cli_step(cmd, dataset, where, eo, &wo, &step);
    if (!gated) {
        step.accept = dctk_write_accept_advisory;
        step.accept_user = &step;
    }
    dctk_write_report r;
    int rc = write_step(&step, ds, v, codecs, best, &r);
    json_decref(codecs);
    dctk_best_delete(best);
    return rc;
}

static int write_field(int argc, char **argv);

/* Under mpirun every rank resolves the same combo and they write the field
 * together; rank 0 alone prints. */
static int run(int argc, char **argv) {
    agreed = false;
    int rc = write_field(argc, argv);
    if (so.par && dctk_par_size(so.par) > 1 && !agreed) dctk_par_agree(so.par, DCTK_ERR_ARG); /* failed before */
    if (so.par && dctk_par_size(so.par) > 1) { /* one exit code for the job: rank 0's */
        int32_t c = rc;
        if (dctk_par_bcast(so.par, &c, sizeof c) == DCTK_OK) rc = c;
    }
    sweep_cli_par_end(&so);
    return rc;
}


static int write_field(int argc, char **argv) {
    const char *cmd = "compress_with_optimal";
    sweep_cli_defaults(&so);
    write_cli_defaults(&wo);
    combo_path = pipeline_arg = NULL;
    gate_l1 = NAN;
    const char *pos[6];
    int np = 0;
    int rc = cli_parse(&cmd_compress_with_optimal, argc, argv, pos, 3, 6, &np);
    if (rc) return rc < 0 ? 0 : rc;
    if ((rc = write_cli_check_level(cmd, &wo))) return rc;
    gate_l1 = so.override_l1; /* --l1-threshold: the bound the verification gates on, also of --combo and indices */
    wo.bound_l1 = gate_l1;    /* and the one the store's provenance records */
    int idx[3];
    if (pipeline_arg && (combo_path || np > 3)) {
        fprintf(cli_err(), "dc_toolkit %s: --pipeline replaces the indices and --combo: give only one\n", cmd);
        return 2;
    }
    if (!(isnan(gate_l1) || gate_l1 > 0)) {
        fprintf(cli_err(), "dc_toolkit %s: --l1-threshold must be positive\n", cmd);
        return 2;
    }
    if (!pipeline_arg && (rc = write_cli_indices(cmd, combo_path, pos[1], pos[2], pos + 3, np - 3, idx))) return rc;
    const char *dataset = pos[0], *where = pos[1], *field = pos[2];
    if ((rc = sweep_cli_par_begin(cmd, argc, argv, &so))) return rc;
    if (!sweep_cli_is_root(&so) && !freopen("/dev/null", "w", stdout)) return 1; /* rank 0 prints */
    dctk_evaluate_opts eo;
    if ((rc = sweep_cli_eval_opts(cmd, &so, &eo))) return rc;
    /* this command's own --l1-threshold shadows the gate flag of the same name: it gates --combo too */
    if (!isnan(gate_l1)) eo.override_l1 = gate_l1;

    dctk_dataset *ds;
    dctk_status st = dctk_dataset_open(dataset, &ds);
    if (st != DCTK_OK) return cli_fail(cmd, st);
    size_t v;
    dctk_best *best = NULL;
    json_t *codecs = NULL;
    dctk_write_step step;
    dctk_write_report r;
    write_cli_step(cmd, dataset, where, &eo, &wo, &step);
    st = dctk_dataset_find(ds, field, &v);
    if (st == DCTK_OK && pipeline_arg) {
        rc = write_pipeline(cmd, ds, v, dataset, where, &eo);
        dctk_dataset_close(ds);
        return rc;
    }
    if (st == DCTK_OK) st = write_cli_resolve(ds, v, where, combo_path, idx, &eo, &codecs, &best);
    if (st == DCTK_OK && combo_path) { /* chosen from the sweep's best file: within --codecs */
        dctk_best *pick = dctk_best_at_level(&step, field, best);
        dctk_best_delete(best);
        json_decref(codecs);
        best = pick;
        codecs = dctk_best_codecs_json(pick);
    }
    if (st == DCTK_OK && !codecs) rc = 1; /* nothing within --codecs: said already */
    else if (st == DCTK_OK) rc = write_step(&step, ds, v, codecs, best, &r);
    else rc = cli_fail(cmd, st);
    json_decref(codecs);
    dctk_best_delete(best);
    dctk_dataset_close(ds);
    return rc;
}
