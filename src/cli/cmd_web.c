/* dc_toolkit run_web_ui and run_web_ui_vcluster: the web UI. The page's job
 * forms are built from the option tables of evaluate_combos and
 * compress_with_optimal, so it offers exactly their flags. */
#ifdef DCTK_WEB
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "dctk/web.h"

static long port, max_upload_mib;
static const char *data_root, *listen_addr, *token;

static const cli_opt opts[] = {
    {"--port", NULL, OPT_INT, &port, "P", "TCP port; 0 picks a free one (default 8765)"},
    {"--data-root", NULL, OPT_STR, &data_root, "DIR",
     "the folder whose files the page may read and where uploads, jobs and results go (default: .)"},
    {"--listen", NULL, OPT_STR, &listen_addr, "ADDR",
     "numeric address to listen on (default 127.0.0.1); any other than the loopback needs --token"},
    {"--token", NULL, OPT_STR, &token, "T",
     "secret every request must carry (open the page as http://HOST:PORT/?token=T); 8+ characters"},
    {"--max-upload-mib", NULL, OPT_INT, &max_upload_mib, "MIB", "largest upload accepted (default 2048)"},
    {0},
};

static int run_local(int argc, char **argv);
static int run_vcluster(int argc, char **argv);

#define WEB_HELP_COMMON                                                                                           \
    "Serves a page (embedded in the program, nothing loaded from the network) on 127.0.0.1:PORT.\n"               \
    "Files are taken from --data-root (or uploaded into DIR/uploads); paths outside it are refused.\n"            \
    "Jobs (sweeps, compressions) run in the server, one at a time in the order they were asked, and keep\n"       \
    "their state in DIR/.dctk-web/jobs/ID/ (command line, log, exit code, results): a reloaded page or a\n"      \
    "restarted server shows them again. Ctrl-C stops the server and the job it runs.\n"

const cli_cmd cmd_run_web_ui = {
    .name = "run_web_ui",
    .summary = "web UI: pick or upload a dataset, sweep, explore the scatter, compress and download the store",
    .usage = "[options]",
    .help = WEB_HELP_COMMON
    "In the page: choose or upload a dataset and see its fields; set the options of evaluate_combos and\n"
    "start a sweep, watching its progress; explore ratio against error (clusters, Pareto front,\n"
    "threshold; hover shows the combo, a click picks it); compress the field with the picked combo,\n"
    "inspect the store and download it as a tar archive. Example:\n"
    "  dc_toolkit run_web_ui --data-root /scratch/data --port 8765     # then open http://127.0.0.1:8765/\n"
    "From another machine: --listen 0.0.0.0 --token SECRET, and open http://HOST:8765/?token=SECRET.",
    .opts = opts,
    .run = run_local,
};

static const cli_foreign cmd_run_web_ui_vcluster_foreign[] = {
    {"--user_account", "the page's Slurm form (account, nodes, time, partition)"},
    {"--uenv_image", "the page's Slurm form (account, nodes, time, partition)"},
    {"--uploaded_file", "--data-root DIR: the page picks or uploads the file"},
    {"--time", "the page's Slurm form (account, nodes, time, partition)"},
    {"--nodes", "the page's Slurm form (account, nodes, time, partition)"},
    {"--ntasks-per-node", "the page's Slurm form (account, nodes, time, partition)"},
    {"--partition", "the page's Slurm form (account, nodes, time, partition)"},
    {0},
};

const cli_cmd cmd_run_web_ui_vcluster = {
    .name = "run_web_ui_vcluster",
    .summary = "web UI that writes a Slurm batch script for the chosen sweep and submits it (with sbatch on PATH)",
    .usage = "[options]",
    .help = WEB_HELP_COMMON
    "As run_web_ui, but the sweep form writes a Slurm batch script instead of running here: the sweep\n"
    "on N nodes with one MPI rank per node (--ntasks-per-node=1) and T threads per rank\n"
    "(--cpus-per-task=T), then every field written with its best combo and the store merged. The page\n"
    "shows the script, and submits it with sbatch when sbatch is on PATH. Run it on a login node:\n"
    "  dc_toolkit run_web_ui_vcluster --data-root /scratch/$USER --port 8765",
    .opts = opts,
    .run = run_vcluster,
    .foreign = cmd_run_web_ui_vcluster_foreign,
};

static bool listed(const char *const *list, const char *name) {
    for (const char *const *s = list; *s; s++)
        if (strcmp(*s, name) == 0) return true;
    return false;
}

/* The flags of a command the page may set, those in first first (in its
 * order: what a user sets most), then the others in the command's order;
 * skip lists those it sets itself or that make no sense from a page (files
 * outside the root, MPI test switches). */
static dctk_web_flag *flags_of(const cli_cmd *cmd, const char *const *first, const char *const *skip) {
    size_t n = 0;
    for (const cli_opt *o = cmd->opts; o->name; o++) n++;
    /* one block: the flags, then their help lines with the codec families
     * filled in (cli_opt_help), so that one free() releases both */
    enum { HELP_MAX = 512 };
    dctk_web_flag *f = calloc(1, (n + 1) * sizeof *f + n * HELP_MAX);
    if (!f) return NULL;
    char *help = (char *)(f + n + 1);
    size_t m = 0;
    size_t nfirst = 0;
    while (first[nfirst]) nfirst++;
    for (size_t k = 0; k <= nfirst; k++) /* one pass a flag of first, then one for the rest (first[nfirst] NULL) */
        for (const cli_opt *o = cmd->opts; o->name; o++) {
            bool here = first[k] ? strcmp(first[k], o->name) == 0 : !listed(first, o->name);
            /* the Python tool's bare forms (OPT_CONST) too: the form has ours */
            if (!here || listed(skip, o->name) || o->type == OPT_CONST) continue;
            char *h = help + m * HELP_MAX;
            const char *t = cli_opt_help(o, h, HELP_MAX);
            if (t != h) snprintf(h, HELP_MAX, "%s", t);
            f[m++] = (dctk_web_flag){o->name, o->neg, o->type == OPT_BOOL, o->metavar, h};
            if (first[k]) break;
        }
    return f;
}

static int serve(const cli_cmd *cmd, int argc, char **argv, bool vcluster) {
    port = 8765;
    max_upload_mib = 2048;
    data_root = listen_addr = token = NULL;
    int rc = cli_parse(cmd, argc, argv, NULL, 0, 0, NULL);
    if (rc) return rc < 0 ? 0 : rc;
    if (max_upload_mib < 1 || max_upload_mib > 1048576) {
        fprintf(cli_err(), "dc_toolkit %s: --max-upload-mib must be between 1 and 1048576\n", cmd->name);
        return 2;
    }
    static const char *const sweep_skip[] = {"--where-to-write", "--field-to-compress", "--resume", "--allow-shared-node",
                                             "--allow-multi-rank-per-node", "--threads", "--codec-threads", "--verbose", "--thresholds-table", NULL};
    static const char *const write_skip[] = {"--combo", NULL}, *const none[] = {NULL};
    /* compress over a sweep's folder: the page names the sweep (its fields, its folder) */
    static const char *const compress_skip[] = {"--where-to-write", "--field-to-compress", "--vars", "--append",
                                                "--allow-shared-node", "--threads", "--codec-threads", "--verbose",
                                                NULL};
    /* the budget first, then the sample and the space */
    static const char *const sweep_first[] = {"--l1-threshold", "--abs-error", "--target-ratio", "--spec",
                                              "--eval-data-size-limit",
                                              "--compressor-class", "--filter-class", "--serializer-class", "--search",
                                              NULL};
    dctk_web_flag *sf = flags_of(&cmd_evaluate_combos, sweep_first, sweep_skip),
                  *wf = flags_of(&cmd_compress_with_optimal, none, write_skip),
                  *cf = flags_of(&cmd_compress, none, compress_skip);
    dctk_web_opts o = {
        .listen = listen_addr, .port = (int)port, .data_root = data_root, .token = token,
        .max_upload_bytes = (uint64_t)max_upload_mib << 20, .vcluster = vcluster,
        .sweep_flags = sf, .write_flags = wf, .compress_flags = cf, .run = cli_run_captured,
    };
    dctk_status st = sf && wf && cf ? dctk_web_serve(&o) : DCTK_ERR_NOMEM;
    free(sf);
    free(wf);
    free(cf);
    return st == DCTK_OK ? 0 : cli_fail(cmd->name, st);
}

static int run_local(int argc, char **argv) { return serve(&cmd_run_web_ui, argc, argv, false); }
static int run_vcluster(int argc, char **argv) { return serve(&cmd_run_web_ui_vcluster, argc, argv, true); }
#endif
