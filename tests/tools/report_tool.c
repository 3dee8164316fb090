/* Test helper: our k-means and silhouette on given points, printed as JSON so
 * that tests/interop/test_report_sklearn.py can compare them with
 * scikit-learn on the same points and the same initial centres.
 *
 *   dctk_report_tool kmeans K [--standardize] < points
 *       points: "n d" then n rows of d numbers
 *   dctk_report_tool results FILE L1|L2|LInf K
 *       the standardised (ratio, error) points the clustering commands use
 *
 * prints {"points": [[..]..] (as clustered), "init": [[..]..], "centers": ..,
 *         "labels": [..], "inertia": x, "silhouette": x|null, "iterations": n} */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dctk/report.h"

static void print_matrix(const char *name, const double *x, size_t n, int d) {
    printf("\"%s\":[", name);
    for (size_t i = 0; i < n; i++) {
        printf("%s[", i ? "," : "");
        for (int j = 0; j < d; j++) printf("%s%.17g", j ? "," : "", x[i * d + j]);
        printf("]");
    }
    printf("]");
}

static int cluster_and_print(double *x, size_t n, int d, int k) {
    dctk_kmeans km;
    dctk_status st = dctk_kmeans_run(x, n, d, k, NULL, &km);
    if (st != DCTK_OK) {
        fprintf(stderr, "dctk_report_tool: %s\n", dctk_detail());
        return 1;
    }
    double sil = dctk_silhouette(x, n, d, km.labels, k);
    printf("{");
    print_matrix("points", x, n, d);
    printf(",");
    print_matrix("init", km.init, (size_t)k, d);
    printf(",");
    print_matrix("centers", km.centers, (size_t)k, d);
    printf(",\"labels\":[");
    for (size_t i = 0; i < n; i++) printf("%s%d", i ? "," : "", km.labels[i]);
    printf("],\"inertia\":%.17g,\"iterations\":%d,\"silhouette\":", km.inertia, km.iterations);
    if (isnan(sil)) printf("null}\n");
    else printf("%.17g}\n", sil);
    dctk_kmeans_free(&km);
    return 0;
}

static int from_stdin(int k, bool standardize) {
    size_t n;
    int d;
    if (scanf("%zu %d", &n, &d) != 2 || d < 1 || d > DCTK_KMEANS_MAXD) return fprintf(stderr, "bad header\n"), 2;
    double *x = malloc(sizeof(double) * n * (size_t)d + 1);
    for (size_t i = 0; x && i < n * (size_t)d; i++)
        if (scanf("%lf", &x[i]) != 1) return fprintf(stderr, "bad point %zu\n", i / (size_t)d), 2;
    if (standardize) dctk_standardize(x, n, d, NULL, NULL);
    int rc = cluster_and_print(x, n, d, k);
    free(x);
    return rc;
}

static int from_results(const char *path, const char *metric, int k) {
    dctk_result_table t = DCTK_RESULT_TABLE_INIT;
    int col = dctk_report_metric_column(metric);
    if (col < 0 || dctk_results_read(path, &t) != DCTK_OK) {
        fprintf(stderr, "dctk_report_tool: %s: %s\n", path, dctk_detail());
        return 1;
    }
    double *xy;
    size_t n;
    dctk_report_points(&t, col, &xy, NULL, &n);
    dctk_standardize(xy, n, 2, NULL, NULL);
    int rc = cluster_and_print(xy, n, 2, k);
    free(xy);
    dctk_result_table_free(&t);
    return rc;
}

int main(int argc, char **argv) {
    if (argc >= 3 && strcmp(argv[1], "kmeans") == 0)
        return from_stdin(atoi(argv[2]), argc > 3 && strcmp(argv[3], "--standardize") == 0);
    if (argc == 5 && strcmp(argv[1], "results") == 0) return from_results(argv[2], argv[3], atoi(argv[4]));
    fprintf(stderr, "usage: dctk_report_tool kmeans K [--standardize] < points\n"
                    "       dctk_report_tool results FILE L1|L2|LInf K\n");
    return 2;
}
