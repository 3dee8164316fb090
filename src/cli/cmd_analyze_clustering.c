/* dc_toolkit analyze_clustering: ratio against L1, L2 and Linf with k-means
 * clusters, centroids, Pareto fronts and the threshold, as PNG, SVG and one
 * offline HTML page where hovering a point shows its combo. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "dctk/best.h"
#include "dctk/eval.h"
#include "dctk/report.h"

static const char *where, *var, *results, *out_prefix;
static long clusters;
static char best_key[DCTK_PIPELINE_KEY_SIZE]; /* the winner's pipeline key; "" when its best file names none */

static const cli_opt opts[] = {
    {"--where-to-write", NULL, OPT_STR, &where, "DIR", "the folder evaluate_combos wrote into (required)"},
    {"--var", NULL, OPT_STR, &var, "VAR", "the field (required)"},
    {"--results", NULL, OPT_STR, &results, "FILE",
     "read this results file (.parquet or .csv) instead of DIR/results_VAR.parquet"},
    {"--clusters", NULL, OPT_INT, &clusters, "K",
     "clusters per panel (default: the k with the best silhouette among 3..9, at most about sqrt(points/2))"},
    {"--out", NULL, OPT_STR, &out_prefix, "PREFIX", "output prefix (default DIR/analyze_clustering_VAR)"},
    {0},
};

static int run(int argc, char **argv);

const cli_cmd cmd_analyze_clustering = {
    .name = "analyze_clustering",
    .summary = "ratio against L1/L2/Linf with clusters, Pareto fronts, the winner and the threshold (PNG, SVG, HTML)",
    .usage = "[RESULTS] [--where-to-write DIR --var VAR] [options]",
    .help = "Reads DIR/results_VAR.parquet (or DIR/config_space_VAR_rank0.csv when there is no Parquet file),\n"
            "or RESULTS as the Python tool takes it (DIR/results_VAR.parquet: DIR and VAR from its path),\n"
            "and the threshold and the winner from DIR/best_VAR.json. For each of relative L1, L2 and Linf:\n"
            "k-means over the standardised (ratio, error) of the kept combos with centroids (k suited to the\n"
            "number of points), the Pareto front (higher ratio, lower error), the winner as a red diamond,\n"
            "rejected combos (a gate failed) as grey rings, and each panel's bound as a dashed red line (the\n"
            "L1 threshold, the L2 and Linf gates, --linf-threshold among them) when best_VAR.json has them.\n"
            "The error axes are all logarithmic when one panel's errors span more than two decades.\n"
            "Writes DIR/analyze_clustering_VAR.png,\n"
            ".svg and .html; the HTML page works offline and shows a combo's codecs and indices on hover.\n"
            "Examples:\n"
            "  dc_toolkit analyze_clustering --where-to-write out --var t2m\n"
            "  dc_toolkit analyze_clustering out/results_t2m.parquet",
    .opts = opts,
    .run = run,
};

/* Threshold and winner from DIR/best_VAR.json; *what says what was found, for the console. */
static void load_best(dctk_analyze_opts *o, char *what, size_t cap) {
    char path[4096];
    dctk_best b;
    dctk_best_init(&b);
    bool have = dctk_results_best_path(path, sizeof path, where, var) == DCTK_OK && dctk_best_read(path, &b) == DCTK_OK;
    o->threshold = b.threshold;
    o->l2_gate = b.has_gates ? b.gates.l2 : NAN;
    o->linf_gate = b.has_gates ? b.gates.linf : NAN;
    o->has_best = have && b.combo.has_indices;
    o->best[0] = b.combo.comp_idx;
    o->best[1] = b.combo.filt_idx;
    o->best[2] = b.combo.ser_idx;
    json_t *codecs = have && b.combo.codecs ? json_loads(b.combo.codecs, 0, NULL) : NULL;
    best_key[0] = '\0';
    if (codecs && dctk_codecs_key(codecs, best_key) != DCTK_OK) best_key[0] = '\0';
    json_decref(codecs);
    if (!have) snprintf(what, cap, "no threshold and no winner marked (no %s)", path);
    else if (isfinite(o->threshold) && isfinite(o->linf_gate))
        snprintf(what, cap, "relative L1 threshold %.3g, L2 %.3g and Linf %.3g gates from %s", o->threshold,
                 o->l2_gate, o->linf_gate, path);
    else if (isfinite(o->threshold)) snprintf(what, cap, "relative L1 threshold %.3g from %s", o->threshold, path);
    else snprintf(what, cap, "no threshold (%s has none)", path);
    dctk_best_free(&b);
}

static void results_path(char *buf, size_t cap) {
    if (results) {
        snprintf(buf, cap, "%s", results);
        return;
    }
    dctk_results_parquet_path(buf, cap, where, var);
    if (access(buf, F_OK) == 0) return;
    char csv[4096];
    dctk_results_csv_path(csv, sizeof csv, where, var, 0);
    if (access(csv, F_OK) == 0) snprintf(buf, cap, "%s", csv);
}

static bool same_indices(const dctk_result_row *r, const dctk_analyze_opts *o) {
    return r->comp_idx == o->best[0] && r->filt_idx == o->best[1] && r->ser_idx == o->best[2];
}

/* The row of the winner, or NULL (none, or not in this table): the row of
 * its pipeline (of twins, the one with its indices), which a table of
 * another space holds under other indices; by its indices alone when its
 * best file names no pipeline. */
static const dctk_result_row *winner_row(const dctk_result_table *t, const dctk_analyze_opts *o) {
    const dctk_result_row *found = NULL;
    for (size_t i = 0; o->has_best && i < t->n; i++) {
        const dctk_result_row *r = &t->rows[i];
        char key[DCTK_PIPELINE_KEY_SIZE];
        if (!best_key[0] || dctk_stages_key(r->filter, r->serializer, r->compressor, key) != DCTK_OK ||
            strcmp(key, best_key)) {
            if (!best_key[0] && same_indices(r, o)) return r;
            continue;
        }
        if (same_indices(r, o)) return r;
        if (!found) found = r;
    }
    return found;
}

static int analyze(const char *cmd, const char *path, const dctk_result_table *t) {
    dctk_analyze_opts o = {.var = var, .clusters = (int)clusters};
    char prefix[4096], what[4200];
    load_best(&o, what, sizeof what);
    /* the page and figures mark the winner by its row's indices in this table */
    const dctk_result_row *b = winner_row(t, &o);
    bool named = o.has_best;
    o.has_best = b != NULL;
    if (b) o.best[0] = b->comp_idx, o.best[1] = b->filt_idx, o.best[2] = b->ser_idx;
    if (out_prefix) snprintf(prefix, sizeof prefix, "%s", out_prefix);
    else snprintf(prefix, sizeof prefix, "%s/analyze_clustering_%s", where, var);
    dctk_row_counts c = {{0}};
    char counts[200];
    for (size_t i = 0; i < t->n; i++) dctk_row_counts_add(&c, t->rows[i].keep, t->rows[i].error);
    dctk_row_counts_str(&c, counts, sizeof counts);
    dctk_status st = dctk_report_analyze(t, &o, prefix);
    if (st != DCTK_OK) return cli_fail(cmd, st);
    fprintf(cli_out(), "%s: %zu combos: %s; %s\n", path, t->n, counts, what);
    if (c.n[DCTK_ROW_PRUNED] + c.n[DCTK_ROW_LEFT_OUT] + c.n[DCTK_ROW_FAILED])
        fprintf(cli_out(),
                "only the kept and rejected combos are drawn: the others were not measured on the whole sample\n");
    if (b) fprintf(cli_out(), "best combo %s marked with a red diamond\n",
                   b->name && b->name[0] ? b->name : "(unnamed)");
    else if (named) fprintf(cli_out(), "the best combo of best_%s.json is not among these results: not marked\n", var);
    fprintf(cli_out(), "wrote %s.png, %s.svg and %s.html\n", prefix, prefix, prefix);
    return 0;
}

/* The Python tool's positional RESULTS: DIR from its folder, VAR from its
 * name (results_VAR.parquet or config_space_VAR_rank0.csv) unless given. */
static int from_results(const char *cmd, const char *path, char *dir, size_t cap, char *name, size_t ncap) {
    if (results) {
        fprintf(cli_err(), "dc_toolkit %s: give RESULTS or --results, not both\n", cmd);
        return 2;
    }
    results = path;
    const char *slash = strrchr(path, '/'), *base = slash ? slash + 1 : path;
    if (!slash) snprintf(dir, cap, ".");
    else if (slash == path) snprintf(dir, cap, "/");
    else snprintf(dir, cap, "%.*s", (int)(slash - path), path);
    if (!where) where = dir;
    size_t n = strlen(base);
    if (!strncmp(base, "results_", 8) && n > 16 && !strcmp(base + n - 8, ".parquet"))
        snprintf(name, ncap, "%.*s", (int)(n - 16), base + 8);
    else if (!strncmp(base, "config_space_", 13) && n > 23 && !strcmp(base + n - 10, "_rank0.csv"))
        snprintf(name, ncap, "%.*s", (int)(n - 23), base + 13);
    if (!var && name[0]) var = name;
    if (!var) {
        fprintf(cli_err(), "dc_toolkit %s: %s: not named results_VAR.parquet: give --var VAR\n", cmd, path);
        return 2;
    }
    return 0;
}

static int run(int argc, char **argv) {
    const char *cmd = "analyze_clustering";
    where = var = results = out_prefix = NULL;
    clusters = 0;
    const char *pos[1];
    int np = 0;
    int rc = cli_parse(&cmd_analyze_clustering, argc, argv, pos, 0, 1, &np);
    if (rc) return rc < 0 ? 0 : rc;
    char dir[4096], name[512] = "";
    if (np == 1 && (rc = from_results(cmd, pos[0], dir, sizeof dir, name, sizeof name))) return rc;
    if (!where || !var) {
        fprintf(cli_err(), "dc_toolkit %s: give RESULTS (DIR/results_VAR.parquet), or --where-to-write DIR and --var "
                        "VAR\n", cmd);
        return 2;
    }
    if (clusters < 0 || clusters > 16) {
        fprintf(cli_err(), "dc_toolkit %s: --clusters must be between 1 and 16\n", cmd);
        return 2;
    }
    char path[4096];
    results_path(path, sizeof path);
    dctk_result_table t = DCTK_RESULT_TABLE_INIT;
    dctk_status st = dctk_results_read(path, &t);
    if (st != DCTK_OK) {
        rc = cli_fail(cmd, st);
        if (!results) fprintf(cli_err(), "dc_toolkit %s: run evaluate_combos --where-to-write %s first\n", cmd, where);
    } else {
        rc = analyze(cmd, path, &t);
    }
    dctk_result_table_free(&t);
    return rc;
}
