/* dc_toolkit evaluate_combos: sweep the codec space over a representative
 * sample of each field and name the best pipeline under the threshold. */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "sweep_opts.h"

static sweep_cli o;

static const cli_opt opts[] = {
    {"--where-to-write", NULL, OPT_STR, &o.where, "DIR", "folder for the results (or give it as the second argument)"},
    {"--field-to-compress", NULL, OPT_STR, &o.field, "VAR", "evaluate only this field (default: every data variable)"},
    {"--codecs", NULL, OPT_STR, &o.codecs_level, "LEVEL",
     "the readers the store will have: best_VAR.json names first the best combo whose codecs they decode, the one "
     "compress --codecs LEVEL writes: core, numcodecs, plugin or all (default numcodecs)"},
    SWEEP_CLI_OPTS(o),
    {0},
};

static const cli_foreign foreign[] = {SWEEP_CLI_FOREIGN, {0}};

static int run(int argc, char **argv);

const cli_cmd cmd_evaluate_combos = {
    .name = "evaluate_combos",
    .summary = "sweep the codec space over a sample of each field and name the best combo",
    .usage = "DATASET --where-to-write DIR [options]",
    .help = "Reads a representative sample of each field: the whole field when it fits\n"
            "--eval-data-size-limit, else a few time steps and levels spread over the field (at least 3 of\n"
            "each, or all there are, as the Python tool's sampler; a line before the sweep says when that\n"
            "smallest sample is over the limit), in runs shaped like the store's chunks. Screens the combos\n"
            "of compressor x filter x serializer on parts of the sample and measures the most promising on\n"
            "all of it, chunk by chunk (--search adaptive, the default; --search exhaustive measures every\n"
            "combo on all of it), and keeps those whose relative L1 error is under the field's threshold\n"
            "(--l1-threshold, or the table l1_error_thresholds.csv by short name and units) and that pass\n"
            "every other gate. Writes, per field VAR: config_space_VAR_rank0.csv (a row per combo as it\n"
            "finishes, its status column kept, rejected, failed, pruned or left out), results_VAR.parquet\n"
            "(the same rows), best_VAR.json (the combo compress writes: the best whose codecs the readers of\n"
            "--codecs decode, default numcodecs; the overall winner beside it as overall_winner when a combo\n"
            "of a higher level has a higher ratio) and manifest_VAR.json (the same in the Python tool's\n"
            "schema). Example:\n"
            "  dc_toolkit evaluate_combos era5.nc --where-to-write out --field-to-compress t2m\n"
            "On a cluster, run one MPI rank per node (threads inside it): rank 0 reads and broadcasts the\n"
            "sample, units of work are handed out across ranks, each rank writes config_space_VAR_rankN.csv\n"
            "and rank 0 writes the Parquet and best_VAR.json:\n"
            "  mpirun -n NODES --map-by ppr:1:node dc_toolkit evaluate_combos era5.nc --where-to-write out\n"
            "  srun --nodes=N --ntasks-per-node=1 dc_toolkit evaluate_combos era5.nc --where-to-write out",
    .opts = opts,
    .run = run,
    .foreign = foreign,
};

static int run(int argc, char **argv) {
    sweep_cli_defaults(&o);
    const char *pos[2];
    int np = 0;
    int rc = cli_parse(&cmd_evaluate_combos, argc, argv, pos, 1, 2, &np);
    if (rc) return rc < 0 ? 0 : rc;
    if (np == 2) o.where = pos[1];
    if (!o.where) {
        fprintf(cli_err(), "dc_toolkit evaluate_combos: --where-to-write DIR is required\n");
        return 2;
    }
    if ((rc = sweep_cli_par_begin("evaluate_combos", argc, argv, &o))) return rc;
    rc = sweep_cli_run("evaluate_combos", pos[0], &o, NULL, NULL);
    sweep_cli_par_end(&o);
    return rc;
}
