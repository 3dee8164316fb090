/* The numbers behind the figures: which rows are plotted, the elbow and
 * silhouette curves, and the Pareto front of ratio against error. */
#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "dctk/report.h"

int dctk_report_metric_column(const char *name) {
    static const struct {
        const char *name;
        const char *col;
    } metrics[] = {{"L1", "l1_rel"}, {"L2", "l2_rel"}, {"LInf", "linf_rel"}};
    for (size_t m = 0; name && m < sizeof metrics / sizeof metrics[0]; m++) {
        if (strcasecmp(name, metrics[m].name) != 0 && strcasecmp(name, metrics[m].col) != 0) continue;
        for (int c = 0; c < DCTK_RESULT_NCOLS; c++)
            if (strcmp(dctk_result_columns[c], metrics[m].col) == 0) return c;
    }
    return -1;
}

/* Whether each column is a selection metric (the schema's SEL role). */
#define IS_SEL_(name, kind, role) 0 DCTK_RESULT_IN_SEL_##role(+1),
static const bool selection[DCTK_RESULT_NCOLS] = {DCTK_RESULT_SCHEMA(IS_SEL_)};

int dctk_report_error_column(const char *name) {
    int c = dctk_report_metric_column(name);
    for (int k = 0; c < 0 && name && k < DCTK_RESULT_NCOLS; k++)
        if (selection[k] && strcasecmp(name, dctk_result_columns[k]) == 0) c = k;
    return c;
}

/* Where each double column of a row sits (SIZE_MAX: not a double). */
#define AT_STR(name) SIZE_MAX
#define AT_I64(name) SIZE_MAX
#define AT_BOOL(name) SIZE_MAX
#define AT_F64(name) offsetof(dctk_result_row, name)
#define AT_(name, kind, role) AT_##kind(name),
static const size_t double_at[DCTK_RESULT_NCOLS] = {DCTK_RESULT_SCHEMA(AT_)};

/* A selection metric as an error (0 is perfect, lower is better), for a log axis. */
static double selection_error(const char *name, double v) {
    if (strcmp(name, "bias_rel") == 0) return fabs(v);
    if (strcmp(name, "pearson") == 0 || strcmp(name, "ssim") == 0) return 1 - v;
    if (strcmp(name, "psnr_db") == 0) return pow(10, -v / 20); /* RMSE over the range */
    return v;
}

double dctk_report_row_value(const dctk_result_row *r, int col) {
    if (col < 0 || col >= DCTK_RESULT_NCOLS || double_at[col] == SIZE_MAX) return NAN;
    double v;
    memcpy(&v, (const char *)r + double_at[col], sizeof v);
    return selection[col] ? selection_error(dctk_result_columns[col], v) : v;
}

dctk_status dctk_report_points(const dctk_result_table *t, int err_col, double **xy, size_t **idx, size_t *n) {
    *xy = malloc(sizeof(double) * 2 * (t->n ? t->n : 1));
    size_t *ix = malloc(sizeof(size_t) * (t->n ? t->n : 1));
    if (!*xy || !ix) {
        free(*xy);
        free(ix);
        *xy = NULL;
        return DCTK_FAIL(DCTK_ERR_NOMEM, "out of memory for %zu points", t->n);
    }
    size_t m = 0;
    for (size_t i = 0; i < t->n; i++) {
        const dctk_result_row *r = &t->rows[i];
        double e = dctk_report_row_value(r, err_col);
        if (!r->keep || !isfinite(r->ratio) || !isfinite(e)) continue;
        (*xy)[2 * m] = r->ratio;
        (*xy)[2 * m + 1] = e;
        ix[m++] = i;
    }
    *n = m;
    if (idx) *idx = ix;
    else free(ix);
    return DCTK_OK;
}

int dctk_cluster_k_max(size_t n) {
    if (n < 4) return 1;
    int k = (int)sqrt((double)n / 2);
    return k < 2 ? 2 : k > 9 ? 9 : k;
}

dctk_status dctk_cluster_curve_compute(const double *xy, size_t n, int k_min, int k_max, dctk_cluster_curve *c) {
    memset(c, 0, sizeof *c);
    c->npoints = n;
    c->best_k = -1;
    if (k_max >= 0 && (size_t)k_max > n - (n > 0)) k_max = (int)(n > 0 ? n - 1 : 0);
    if (k_max - k_min + 1 > 16) k_max = k_min + 15;
    c->k_min = k_min, c->k_max = k_max;
    if (k_max < k_min) return DCTK_OK;
    double *z = malloc(sizeof(double) * 2 * n);
    if (!z) return DCTK_FAIL(DCTK_ERR_NOMEM, "out of memory for %zu points", n);
    memcpy(z, xy, sizeof(double) * 2 * n);
    dctk_standardize(z, n, 2, NULL, NULL);
    dctk_status st = DCTK_OK;
    double best = -INFINITY;
    for (int k = k_min; k <= k_max && st == DCTK_OK; k++) {
        dctk_kmeans km;
        st = dctk_kmeans_run(z, n, 2, k, NULL, &km);
        if (st != DCTK_OK) break;
        c->inertia[k - k_min] = km.inertia;
        c->silhouette[k - k_min] = dctk_silhouette(z, n, 2, km.labels, k);
        if (c->silhouette[k - k_min] > best) best = c->silhouette[k - k_min], c->best_k = k;
        dctk_kmeans_free(&km);
    }
    free(z);
    return st;
}

typedef struct {
    double x, y;
    size_t i;
} pareto_pt;

static int pareto_cmp(const void *a, const void *b) {
    const pareto_pt *p = a, *q = b;
    if (p->x != q->x) return p->x > q->x ? -1 : 1; /* ratio descending */
    if (p->y != q->y) return p->y < q->y ? -1 : 1; /* then error ascending */
    return p->i < q->i ? -1 : p->i > q->i;
}

size_t dctk_pareto_front(const double *xy, size_t n, size_t *out) {
    pareto_pt *pts = malloc(sizeof *pts * (n ? n : 1));
    if (!pts) return 0;
    for (size_t i = 0; i < n; i++) pts[i] = (pareto_pt){xy[2 * i], xy[2 * i + 1], i};
    qsort(pts, n, sizeof *pts, pareto_cmp);
    /* Walking by ratio descending, a point is optimal when its error is below
     * every error seen so far (of equal points, only the first). */
    size_t m = 0;
    double best = INFINITY;
    for (size_t k = 0; k < n; k++) {
        if (pts[k].y < best) {
            best = pts[k].y;
            out[m++] = pts[k].i;
        }
    }
    free(pts);
    return m;
}
