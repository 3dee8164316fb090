/* perform_clustering's figure: inertia (elbow) and silhouette against k, side
 * by side, the k with the best silhouette marked. */
#include <math.h>
#include <stdio.h>

#include "dctk/report.h"
#include "report/plot.h"

#define FIG_W 820.0
#define FIG_H 360.0

typedef struct {
    const dctk_cluster_curve *c;
    const char *title;
} curve_fig;

static void curve_panel(cairo_t *cr, const dctk_cluster_curve *c, const double *v, double x, const char *ylabel,
                        const char *title, rgb col) {
    plot_axes a = {x, 70, 320, 220, c->k_min, c->k_max, INFINITY, -INFINITY, false, false, false};
    for (int k = c->k_min; k <= c->k_max; k++)
        if (isfinite(v[k - c->k_min])) a.ymin = fmin(a.ymin, v[k - c->k_min]), a.ymax = fmax(a.ymax, v[k - c->k_min]);
    if (!(a.ymax >= a.ymin)) a.ymin = 0, a.ymax = 1;
    axes_pad(&a.xmin, &a.xmax, 0.06, false);
    axes_pad(&a.ymin, &a.ymax, 0.08, false);
    axes_draw(cr, &a, "number of clusters k", ylabel, title);
    set_rgb(cr, col, 1);
    cairo_set_line_width(cr, 1.8);
    cairo_new_path(cr);
    for (int k = c->k_min; k <= c->k_max; k++)
        if (isfinite(v[k - c->k_min])) cairo_line_to(cr, axes_px(&a, k), axes_py(&a, v[k - c->k_min]));
    cairo_stroke(cr);
    for (int k = c->k_min; k <= c->k_max; k++) {
        if (!isfinite(v[k - c->k_min])) continue;
        draw_marker(cr, MARK_CIRCLE, axes_px(&a, k), axes_py(&a, v[k - c->k_min]), 4, col, 1);
        if (k == c->best_k)
            draw_marker(cr, MARK_DIAMOND, axes_px(&a, k), axes_py(&a, v[k - c->k_min]), 9, (rgb){0.8, 0.1, 0.1}, 1);
    }
}

static void draw_curve(cairo_t *cr, void *user) {
    const curve_fig *f = user;
    const dctk_cluster_curve *c = f->c;
    char head[256], sub[160];
    cairo_set_source_rgb(cr, 0.1, 0.1, 0.1);
    snprintf(head, sizeof head, "k-means of (ratio, error): %s", f->title);
    text_at(cr, FIG_W / 2, 20, head, 15, ALIGN_CENTER, 0, true);
    if (c->best_k > 0)
        snprintf(sub, sizeof sub, "%zu kept combos, features standardised; best silhouette at k = %d (red diamond)",
                 c->npoints, c->best_k);
    else snprintf(sub, sizeof sub, "%zu kept combos: too few to cluster (k >= 3 needs 4 points)", c->npoints);
    text_at(cr, FIG_W / 2, 40, sub, 10, ALIGN_CENTER, 0, false);
    curve_panel(cr, c, c->inertia, 70, "inertia (within-cluster sum of squares)", "Elbow method",
                (rgb){0.12, 0.35, 0.75});
    curve_panel(cr, c, c->silhouette, 480, "mean silhouette coefficient", "Silhouette score",
                (rgb){0.10, 0.55, 0.25});
}

dctk_status dctk_plot_cluster_curve(const dctk_cluster_curve *c, const char *title, const char *prefix) {
    curve_fig f = {c, title};
    char path[4096];
    snprintf(path, sizeof path, "%s.png", prefix);
    DCTK_TRY(fig_write(path, FIG_PNG, FIG_W, FIG_H, 1.5, draw_curve, &f));
    snprintf(path, sizeof path, "%s.svg", prefix);
    return fig_write(path, FIG_SVG, FIG_W, FIG_H, 1, draw_curve, &f);
}
