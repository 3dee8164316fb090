/* dc_toolkit perform_clustering: elbow and silhouette curves of k-means over
 * (ratio, error) of the kept combos, for k = 3..9. */
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "dctk/report.h"

static const char *out_prefix;

static const cli_opt opts[] = {
    {"--out", NULL, OPT_STR, &out_prefix, "PREFIX",
     "write PREFIX.png and PREFIX.svg (default: perform_clustering_VAR_METRIC beside RESULTS)"},
    {0},
};

static int run(int argc, char **argv);

const cli_cmd cmd_perform_clustering = {
    .name = "perform_clustering",
    .summary = "elbow and silhouette curves of k-means over (ratio, error) of a sweep's kept combos",
    .usage = "RESULTS L1|L2|LInf [options]",
    .help = "Reads RESULTS (results_VAR.parquet or a config_space_VAR_rankN.csv written by evaluate_combos),\n"
            "takes the kept combos whose ratio and chosen relative error are finite, standardises both features\n"
            "(zero mean, unit variance) and runs k-means (k-means++ seeding from a fixed seed, Lloyd iterations)\n"
            "for k = 3..9. Prints inertia and mean silhouette per k and draws both curves. Example:\n"
            "  dc_toolkit perform_clustering out/results_t2m.parquet L1",
    .opts = opts,
    .run = run,
};

static void print_curve(const dctk_cluster_curve *c) {
    fprintf(cli_out(), "%3s %16s %12s\n", "k", "inertia", "silhouette");
    for (int k = c->k_min; k <= c->k_max; k++)
        fprintf(cli_out(), "%3d %16.6g %12.6f%s\n", k, c->inertia[k - c->k_min], c->silhouette[k - c->k_min],
               k == c->best_k ? "   <- best silhouette" : "");
}

/* "{dir of results}/perform_clustering_{var}_{metric}" */
static void default_prefix(const char *results, const dctk_result_table *t, const char *metric, char *buf,
                           size_t cap) {
    char *copy = strdup(results);
    const char *var = t->n && t->rows[0].var[0] ? t->rows[0].var : "results";
    snprintf(buf, cap, "%s/perform_clustering_%s_%s", copy ? dirname(copy) : ".", var, metric);
    free(copy);
}

static int cluster_and_plot(const char *cmd, const char *results, const dctk_result_table *t, int col,
                            const char *metric) {
    double *xy;
    size_t n;
    dctk_status st = dctk_report_points(t, col, &xy, NULL, &n);
    if (st != DCTK_OK) return cli_fail(cmd, st);
    dctk_cluster_curve c;
    st = dctk_cluster_curve_compute(xy, n, 3, 9, &c);
    free(xy);
    if (st != DCTK_OK) return cli_fail(cmd, st);
    if (c.k_max < c.k_min) {
        fprintf(cli_out(), "%s: only %zu kept combos with finite ratio and %s error; need at least 4 to cluster. Nothing to plot.\n",
               results, n, metric);
        return 0;
    }
    fprintf(cli_out(), "%s: %zu kept combos, ratio against relative %s error (standardised)\n", results, n, metric);
    print_curve(&c);
    char prefix[4096], title[256];
    if (out_prefix) snprintf(prefix, sizeof prefix, "%s", out_prefix);
    else default_prefix(results, t, metric, prefix, sizeof prefix);
    snprintf(title, sizeof title, "%s, relative %s error", t->rows[0].var, metric);
    st = dctk_plot_cluster_curve(&c, title, prefix);
    if (st != DCTK_OK) return cli_fail(cmd, st);
    fprintf(cli_out(), "wrote %s.png and %s.svg\n", prefix, prefix);
    return 0;
}

static int run(int argc, char **argv) {
    const char *cmd = "perform_clustering", *pos[2];
    out_prefix = NULL;
    int rc = cli_parse(&cmd_perform_clustering, argc, argv, pos, 2, 2, NULL);
    if (rc) return rc < 0 ? 0 : rc;
    int col = dctk_report_metric_column(pos[1]);
    if (col < 0) {
        fprintf(cli_err(), "dc_toolkit %s: the error must be L1, L2 or LInf, not '%s'\n", cmd, pos[1]);
        return 2;
    }
    static const char *const canon[] = {"L1", "L2", "LInf"};
    const char *metric = canon[col - dctk_report_metric_column("L1")];
    dctk_result_table t = DCTK_RESULT_TABLE_INIT;
    dctk_status st = dctk_results_read(pos[0], &t);
    rc = st == DCTK_OK ? cluster_and_plot(cmd, pos[0], &t, col, metric) : cli_fail(cmd, st);
    dctk_result_table_free(&t);
    return rc;
}
