/* analyze_clustering: lay out the three panels (ratio against relative L1, L2
 * and Linf), cluster the kept combos of each, find their Pareto fronts, then
 * write the figure as PNG and SVG and the page as HTML.
 *
 * Which points: the rows measured on the whole sample (status kept or
 * rejected) whose ratio and error are finite. Kept rows are clustered and
 * coloured; rejected rows (a gate failed) are drawn as grey rings so that the
 * threshold line has something to separate. Rows the adaptive search pruned
 * carry the figures of a part of the sample, not measurements of it, and rows
 * left out or failed have none: none of them is drawn, the subtitle counts
 * them. The y axes turn
 * logarithmic when one panel's positive errors span more than two decades
 * (lossless combos, error 0, then sit on the bottom edge): all three, so that
 * they read alike. Each panel draws its bound: the L1 threshold, the L2 and
 * Linf gates of best_VAR.json (--linf-threshold among them). The x axis when the
 * ratios span more than a factor 20. Clustering always works on the linear,
 * standardised values, as the Python tool's k-means did. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dctk/util.h"
#include "report/analyze_internal.h"

#define FIG_W 1290.0
#define FIG_H 470.0
#define PANEL_W 330.0
#define PANEL_H 300.0
#define PANEL_Y 110.0

static const struct {
    const char *metric, *label;
} metrics[AN_PANELS] = {{"L1", "relative L1 error"}, {"L2", "relative L2 error"}, {"LInf", "relative Linf error"}};

/* Rows of the panel: rejected first, so kept points are drawn on top. */
static dctk_status collect(const dctk_result_table *t, an_panel *p) {
    p->pts = calloc(t->n ? t->n : 1, sizeof *p->pts);
    if (!p->pts) return DCTK_FAIL(DCTK_ERR_NOMEM, "out of memory for %zu points", t->n);
    for (int pass = 0; pass < 2; pass++)
        for (size_t i = 0; i < t->n; i++) {
            const dctk_result_row *r = &t->rows[i];
            double e = dctk_report_row_value(r, p->col);
            dctk_row_status st = dctk_row_status_of(r->keep, r->error);
            if (st != (pass == 1 ? DCTK_ROW_KEPT : DCTK_ROW_REJECTED) || !isfinite(r->ratio) || !isfinite(e)) continue;
            p->pts[p->npts++] = (an_point){.row = i, .cluster = -1};
            p->nkept += r->keep;
        }
    return DCTK_OK;
}

static void kept_xy(const dctk_result_table *t, const an_panel *p, double *xy) {
    size_t first = p->npts - p->nkept;
    for (size_t j = 0; j < p->nkept; j++) {
        const dctk_result_row *r = &t->rows[p->pts[first + j].row];
        xy[2 * j] = r->ratio;
        xy[2 * j + 1] = dctk_report_row_value(r, p->col);
    }
}

/* k of the panel: the option, else the best silhouette of the k that suit n points. */
static dctk_status choose_k(const double *xy, size_t n, int want, int *k) {
    if (want > 0) {
        *k = (size_t)want < n ? want : (int)n;
        return DCTK_OK;
    }
    int kmax = dctk_cluster_k_max(n);
    if (kmax < 2) {
        *k = n > 0;
        return DCTK_OK;
    }
    dctk_cluster_curve c;
    DCTK_TRY(dctk_cluster_curve_compute(xy, n, kmax < 3 ? kmax : 3, kmax, &c));
    *k = c.best_k > 0 ? c.best_k : n > 0;
    return DCTK_OK;
}

static dctk_status cluster_panel(const dctk_result_table *t, int want_k, an_panel *p, double *xy) {
    size_t n = p->nkept, first = p->npts - n;
    kept_xy(t, p, xy);
    DCTK_TRY(choose_k(xy, n, want_k, &p->k));
    if (p->k > 16) p->k = 16;
    p->silhouette = NAN;
    if (p->k == 0) return DCTK_OK;
    double mean[2], scale[2];
    double *z = malloc(sizeof(double) * 2 * n);
    if (!z) return DCTK_NOMEM();
    memcpy(z, xy, sizeof(double) * 2 * n);
    dctk_standardize(z, n, 2, mean, scale);
    dctk_kmeans km;
    dctk_status st = dctk_kmeans_run(z, n, 2, p->k, NULL, &km);
    if (st == DCTK_OK) {
        for (size_t j = 0; j < n; j++) p->pts[first + j].cluster = km.labels[j];
        for (int c = 0; c < 2 * p->k; c++) p->centers[c] = km.centers[c] * scale[c % 2] + mean[c % 2];
        if (p->k > 1) p->silhouette = dctk_silhouette(z, n, 2, km.labels, p->k);
    }
    dctk_kmeans_free(&km);
    free(z);
    return st;
}

static dctk_status pareto_panel(an_panel *p, const double *xy) {
    size_t n = p->nkept, first = p->npts - n;
    p->front = malloc(sizeof(size_t) * (n ? n : 1));
    if (!p->front) return DCTK_NOMEM();
    p->nfront = dctk_pareto_front(xy, n, p->front);
    for (size_t j = 0; j < p->nfront; j++) {
        p->front[j] += first;
        p->pts[p->front[j]].pareto = true;
    }
    return DCTK_OK;
}

/* Axis ranges from every point of the panel, the threshold included. */
static void scale_panel(const dctk_result_table *t, an_panel *p, bool force_log, int i) {
    plot_axes *a = &p->ax;
    double pos_min = INFINITY, ymax = -INFINITY;
    *a = (plot_axes){80 + i * (PANEL_W + 95), PANEL_Y, PANEL_W, PANEL_H, INFINITY, -INFINITY, 0, 0, false, false, false};
    for (size_t j = 0; j < p->npts; j++) {
        const dctk_result_row *r = &t->rows[p->pts[j].row];
        double e = dctk_report_row_value(r, p->col);
        a->xmin = fmin(a->xmin, r->ratio), a->xmax = fmax(a->xmax, r->ratio);
        ymax = fmax(ymax, e);
        if (e > 0) pos_min = fmin(pos_min, e);
        p->nzero += !(e > 0);
    }
    if (isfinite(p->bound) && p->bound > 0) ymax = fmax(ymax, p->bound), pos_min = fmin(pos_min, p->bound);
    if (p->npts == 0) a->xmin = 1, a->xmax = 2;
    a->xlog = a->xmin > 0 && a->xmax / a->xmin > 20; /* ratios multiply: 2 to 4 matters like 50 to 100 */
    axes_pad(&a->xmin, &a->xmax, a->xlog ? 0.03 : 0.04, a->xlog);
    a->ylog = isfinite(pos_min) && (ymax / pos_min > 100 || (force_log && ymax > pos_min));
    a->ymin = a->ylog ? pos_min / (p->nzero ? 10 : 1) : fmin(0, isfinite(pos_min) ? pos_min : 0);
    a->ymax = isfinite(ymax) ? ymax : 1;
    axes_pad(&a->ymin, &a->ymax, a->ylog ? 0.03 : 0.05, a->ylog);
    for (size_t j = 0; j < p->npts; j++) {
        const dctk_result_row *r = &t->rows[p->pts[j].row];
        p->pts[j].px = axes_px(a, r->ratio);
        p->pts[j].py = axes_py(a, dctk_report_row_value(r, p->col));
    }
}

/* The winner's point in the panel, or -1 (not in the table, or not finite). */
static long find_best(const dctk_result_table *t, const dctk_analyze_opts *o, const an_panel *p) {
    for (size_t j = 0; o->has_best && j < p->npts; j++) {
        const dctk_result_row *r = &t->rows[p->pts[j].row];
        if (r->comp_idx == o->best[0] && r->filt_idx == o->best[1] && r->ser_idx == o->best[2]) return (long)j;
    }
    return -1;
}

static dctk_status layout(an_figure *f) {
    dctk_status st = DCTK_OK;
    double *xy = malloc(sizeof(double) * 2 * (f->t->n ? f->t->n : 1));
    if (!xy) return DCTK_NOMEM();
    for (int i = 0; i < AN_PANELS && st == DCTK_OK; i++) {
        an_panel *p = &f->p[i];
        p->col = dctk_report_metric_column(metrics[i].metric);
        p->label = metrics[i].label;
        double bound = i == 0 ? f->o->threshold : i == 1 ? f->o->l2_gate : f->o->linf_gate;
        p->bound = isfinite(bound) && bound > 0 ? bound : NAN; /* DCTK_GATE_OFF, unset (0): no line */
        st = collect(f->t, p);
        if (st == DCTK_OK) st = cluster_panel(f->t, f->o->clusters, p, xy);
        if (st == DCTK_OK) st = pareto_panel(p, xy);
        if (st == DCTK_OK) scale_panel(f->t, p, false, i);
        p->best = find_best(f->t, f->o, p);
    }
    /* one kind of error axis: a linear panel beside logarithmic ones reads as a different story */
    bool any_log = false;
    for (int i = 0; i < AN_PANELS; i++) any_log = any_log || f->p[i].ax.ylog;
    for (int i = 0; i < AN_PANELS && st == DCTK_OK && any_log; i++)
        if (!f->p[i].ax.ylog) scale_panel(f->t, &f->p[i], true, i);
    free(xy);
    return st;
}

static void free_figure(an_figure *f) {
    for (int i = 0; i < AN_PANELS; i++) {
        free(f->p[i].pts);
        free(f->p[i].front);
    }
}

static dctk_status write_outputs(const an_figure *f, const char *prefix) {
    char path[4096];
    dctk_buf svg = DCTK_BUF_INIT, html = DCTK_BUF_INIT;
    snprintf(path, sizeof path, "%s.png", prefix);
    dctk_status st = fig_write(path, FIG_PNG, f->w, f->h, 1.25, an_draw, (void *)f);
    if (st == DCTK_OK) st = fig_render(FIG_SVG, f->w, f->h, 1, an_draw, (void *)f, &svg);
    if (st == DCTK_OK) {
        snprintf(path, sizeof path, "%s.svg", prefix);
        st = dctk_write_file_atomic(path, svg.data, svg.size);
    }
    if (st == DCTK_OK) st = an_html(f, &svg, &html);
    if (st == DCTK_OK) {
        snprintf(path, sizeof path, "%s.html", prefix);
        st = dctk_write_file_atomic(path, html.data, html.size);
    }
    dctk_buf_free(&svg);
    dctk_buf_free(&html);
    return st;
}

dctk_status dctk_report_analyze(const dctk_result_table *t, const dctk_analyze_opts *o, const char *prefix) {
    an_figure f;
    memset(&f, 0, sizeof f);
    f.t = t, f.o = o, f.w = FIG_W, f.h = FIG_H;
    for (size_t i = 0; i < t->n; i++) dctk_row_counts_add(&f.counts, t->rows[i].keep, t->rows[i].error);
    f.canon = malloc(sizeof *f.canon * (t->n ? t->n : 1));
    dctk_status st = f.canon ? dctk_result_table_canonical(t, f.canon) : DCTK_NOMEM();
    if (st == DCTK_OK) st = layout(&f);
    if (st == DCTK_OK) st = write_outputs(&f, prefix);
    free_figure(&f);
    free(f.canon);
    return st;
}
