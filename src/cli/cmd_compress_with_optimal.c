/* dc_toolkit compress_with_optimal: write a field with a chosen combo. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sweep_opts.h"
#include "write_opts.h"

static sweep_cli so;
static write_cli wo;
static const char *combo_path;

static const cli_opt opts[] = {
    {"--combo", NULL, OPT_STR, &combo_path, "best_FIELD.json",
     "take the pipeline from this file (written by evaluate_combos); the indices are then optional"},
    SPACE_CLI_OPTS(so),
    WRITE_CLI_OPTS(wo),
    {0},
};

static int run(int argc, char **argv);

const cli_cmd cmd_compress_with_optimal = {
    .name = "compress_with_optimal",
    .summary = "write a field into DIR/DATASET.zarr with a chosen combo, and verify it",
    .usage = "DATASET WHERE_TO_WRITE FIELD COMP_IDX FILT_IDX SER_IDX [options]",
    .help = "Resolves the combo (COMP_IDX, FILT_IDX, SER_IDX; -1 = none) against the codec space that\n"
            "evaluate_combos used (same --eval-data-size-limit and class flags; a different space is refused\n"
            "when WHERE_TO_WRITE/best_FIELD.json records another fingerprint), or takes the pipeline from\n"
            "--combo. Streams the whole field into WHERE_TO_WRITE/DATASET.zarr as the array FIELD, in inner\n"
            "chunks of --inner-chunk-mib grouped into shards of --shard-mib, then reads it back and compares\n"
            "it with the input. Example:\n"
            "  dc_toolkit compress_with_optimal era5.nc out t2m 97 4 -1",
    .opts = opts,
    .run = run,
};

static bool parse_idx(const char *s, int *out) {
    char *end;
    long v = strtol(s, &end, 10);
    if (end == s || *end || v < -1 || v > 100000) return false;
    *out = (int)v;
    return true;
}

static int run(int argc, char **argv) {
    const char *cmd = "compress_with_optimal";
    sweep_cli_defaults(&so);
    write_cli_defaults(&wo);
    combo_path = NULL;
    const char *pos[6];
    int np = 0;
    int rc = cli_parse(&cmd_compress_with_optimal, argc, argv, pos, 3, 6, &np);
    if (rc) return rc < 0 ? 0 : rc;
    int idx[3];
    if (!combo_path && np != 6) {
        fprintf(stderr, "dc_toolkit %s: give COMP_IDX FILT_IDX SER_IDX, or --combo best_FIELD.json\n", cmd);
        return 2;
    }
    for (int i = 0; i < 3 && np == 6; i++)
        if (!parse_idx(pos[3 + i], &idx[i])) {
            fprintf(stderr, "dc_toolkit %s: '%s' is not an index (-1 or more)\n", cmd, pos[3 + i]);
            return 2;
        }
    const char *dataset = pos[0], *where = pos[1], *field = pos[2];
    dctk_evaluate_opts eo;
    if ((rc = sweep_cli_eval_opts(cmd, &so, &eo))) return rc;

    dctk_dataset *ds;
    dctk_status st = dctk_dataset_open(dataset, &ds);
    if (st != DCTK_OK) return cli_fail(cmd, st);
    size_t v;
    json_t *best = NULL, *codecs = NULL;
    char best_path[4096];
    snprintf(best_path, sizeof best_path, "%s/best_%s.json", where, field);
    st = dctk_dataset_find(ds, field, &v);
    if (st == DCTK_OK && combo_path) {
        const char *bv;
        if (!(best = write_cli_load_best(combo_path))) st = DCTK_ERR_ARG;
        else if ((bv = json_string_value(json_object_get(best, "var"))) && strcmp(bv, field) != 0)
            st = DCTK_FAIL(DCTK_ERR_ARG, "%s is the combo of '%s', not of '%s'", combo_path, bv, field);
        else codecs = json_incref(json_object_get(best, "codecs"));
    } else if (st == DCTK_OK) {
        best = write_cli_load_best(best_path); /* optional: bound, provenance, fingerprint */
        const char *fp = json_string_value(json_object_get(best, "fingerprint"));
        st = dctk_combo_resolve(ds, v, eo.size_limit, &eo.space, idx[0], idx[1], idx[2], fp, &codecs, NULL);
        /* the best file describes another combo: keep only its threshold */
        if (best && st == DCTK_OK &&
            (json_integer_value(json_object_get(best, "comp_idx")) != idx[0] ||
             json_integer_value(json_object_get(best, "filt_idx")) != idx[1] ||
             json_integer_value(json_object_get(best, "ser_idx")) != idx[2]))
            json_object_del(best, "ratio");
    }
    if (st == DCTK_OK) rc = write_cli_field(cmd, ds, v, dataset, where, codecs, best, so.inner_chunk_mib, &wo);
    else rc = cli_fail(cmd, st);
    json_decref(codecs);
    json_decref(best);
    dctk_dataset_close(ds);
    return rc;
}
