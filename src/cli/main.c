/* dc_toolkit: the command table. Each command lives in its own cmd_*.c and
 * is listed here once it works. */
#include <malloc.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "dctk/util.h"

static const cli_cmd *const table[] = {
    &cmd_compress,           &cmd_evaluate_combos,       &cmd_compress_with_optimal,
    &cmd_merge_compressed_fields, &cmd_inspect_dataset,  &cmd_open_zarr_and_inspect,
    &cmd_from_zarr_to_netcdf, &cmd_perform_clustering,   &cmd_analyze_clustering,
    &cmd_plot_compression_errors, &cmd_from_nc_to_zarr,
#ifdef DCTK_WEB
    &cmd_run_web_ui,         &cmd_run_web_ui_vcluster,
#endif
};
#define NTABLE (sizeof table / sizeof table[0])

/* The Python dc_toolkit's commands we do not have, and what to use instead. */
static const cli_foreign foreign[] = {
    {"run_local_ui", "run_web_ui (no desktop UI; the web UI runs locally)"},
    {"compress_fields_from_results", "compress DATASET DIR"},
    {0},
};

static void usage(FILE *f) {
    fprintf(f,
            "dc_toolkit %s: find the best compression pipeline for climate data under an error bound,\n"
            "and write datasets with it into sharded Zarr v3 stores.\n\n"
            "usage: dc_toolkit COMMAND [ARGS] [--help]\n\ncommands:\n",
            DCTK_VERSION);
    for (size_t i = 0; i < NTABLE; i++)
        if (table[i]) fprintf(f, "  %-28s %s\n", table[i]->name, table[i]->summary);
    fprintf(f, "\n`dc_toolkit COMMAND --help` explains a command and its options; `dc_toolkit help` prints them all.\n");
}

/* `dc_toolkit help`: every command's help, as the Python tool prints it;
 * `dc_toolkit help CMD`: that one's. */
static int help(int argc, char **argv) {
    if (argc < 3) usage(stdout);
    for (size_t i = 0; i < NTABLE; i++) {
        if (!table[i] || (argc >= 3 && strcmp(table[i]->name, argv[2]) != 0)) continue;
        if (argc < 3) fprintf(cli_out(), "\n================================================================\n");
        cli_print_help(table[i]);
        if (argc >= 3) return 0;
    }
    if (argc < 3) return 0;
    fprintf(cli_err(), "dc_toolkit help: unknown command '%s'\n", argv[2]);
    return 2;
}

int cli_run_command(int argc, char **argv) {
    for (size_t i = 0; i < NTABLE; i++)
        if (table[i] && strcmp(table[i]->name, argv[1]) == 0) return table[i]->run(argc - 1, argv + 1);
    for (const cli_foreign *f = foreign; f->name; f++)
        if (strcmp(f->name, argv[1]) == 0) {
            fprintf(cli_err(), "dc_toolkit: '%s' is the Python dc_toolkit's; here: %s\n", f->name, f->here);
            return 2;
        }
    fprintf(cli_err(), "dc_toolkit: unknown command '%s'\n\n", argv[1]);
    usage(cli_err());
    return 2;
}

int main(int argc, char **argv) {
    /* Chunk buffers and codec contexts of 1 MiB and more are mapped and given
     * back on their own: glibc would otherwise raise its mmap threshold after
     * the first such free and keep freed blocks in its per-thread arenas,
     * where the memory budget no longer sees them (issue 24). */
    mallopt(M_MMAP_THRESHOLD, 1 << 20);
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    if (strcmp(argv[1], "help") == 0) return help(argc, argv);
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        usage(stdout);
        return 0;
    }
    if (strcmp(argv[1], "--version") == 0) {
        fprintf(cli_out(), "dc_toolkit %s\n", DCTK_VERSION);
        return 0;
    }
    /* hidden: used by the build to generate dc_toolkit.1 and the completion script */
    if (strcmp(argv[1], "--man") == 0) return cli_print_man(stdout, table, NTABLE);
    if (strcmp(argv[1], "--bash-completion") == 0) return cli_print_bash_completion(stdout, table, NTABLE);
    dctk_set_log_hook(cli_log, NULL);
    return cli_run_command(argc, argv);
}
