/* Drawing the laid-out analyze_clustering figure with cairo. */
#include <math.h>
#include <stdio.h>

#include "report/analyze_internal.h"

static const rgb BLACK = {0.05, 0.05, 0.05}, GREY = {0.55, 0.55, 0.55}, RED = {0.85, 0.10, 0.10};

static void draw_points(cairo_t *cr, const an_panel *p) {
    for (size_t j = 0; j < p->npts; j++) {
        const an_point *q = &p->pts[j];
        if (q->cluster < 0) draw_marker(cr, MARK_RING, q->px, q->py, 2.6, GREY, 0.55);
        else draw_marker(cr, MARK_CIRCLE, q->px, q->py, 3.0, cluster_color(q->cluster), 0.85);
    }
}

static void draw_front(cairo_t *cr, const an_panel *p) {
    if (p->nfront == 0) return;
    cairo_save(cr);
    set_rgb(cr, BLACK, 0.8);
    cairo_set_line_width(cr, 1.1);
    cairo_new_path(cr);
    for (size_t j = 0; j < p->nfront; j++) cairo_line_to(cr, p->pts[p->front[j]].px, p->pts[p->front[j]].py);
    cairo_stroke(cr);
    cairo_restore(cr);
    for (size_t j = 0; j < p->nfront; j++)
        draw_marker(cr, MARK_RING, p->pts[p->front[j]].px, p->pts[p->front[j]].py, 5.2, BLACK, 1);
}

static void draw_centroids(cairo_t *cr, const an_panel *p) {
    for (int c = 0; c < p->k; c++) {
        double x = axes_px(&p->ax, p->centers[2 * c]), y = axes_py(&p->ax, p->centers[2 * c + 1]);
        draw_marker(cr, MARK_CROSS, x, y, 6.5, (rgb){1, 1, 1}, 1); /* a white halo keeps it visible on points */
        draw_marker(cr, MARK_CROSS, x, y, 5.5, BLACK, 1);
    }
}

static void draw_threshold(cairo_t *cr, const an_panel *p, int i) {
    double thr = p->bound;
    if (!isfinite(thr) || !(thr > 0 || !p->ax.ylog)) return;
    double y = axes_py(&p->ax, thr), dash[] = {6, 4};
    char buf[64];
    cairo_save(cr);
    set_rgb(cr, RED, 1);
    cairo_set_line_width(cr, 1.4);
    cairo_set_dash(cr, dash, 2, 0);
    cairo_move_to(cr, p->ax.x, y);
    cairo_line_to(cr, p->ax.x + p->ax.w, y);
    cairo_stroke(cr);
    snprintf(buf, sizeof buf, i == 0 ? "threshold %.3g" : "gate %.3g", thr);
    /* above the line, or under it when the line runs along the top of the frame */
    text_at(cr, p->ax.x + p->ax.w - 4, y - 8 < p->ax.y + 8 ? y + 9 : y - 8, buf, 9, ALIGN_RIGHT, 0, false);
    cairo_restore(cr);
}

/* The winner (best_VAR.json) as a red diamond, over everything else. */
static void draw_best(cairo_t *cr, const an_panel *p) {
    if (p->best < 0) return;
    const an_point *q = &p->pts[p->best];
    draw_marker(cr, MARK_DIAMOND, q->px, q->py, 8, (rgb){1, 1, 1}, 1);
    draw_marker(cr, MARK_DIAMOND, q->px, q->py, 6.5, RED, 1);
}

static void draw_panel(cairo_t *cr, const an_panel *p, int i) {
    char title[160], note[96];
    if (p->k == 1) snprintf(title, sizeof title, "ratio vs %s (too few points for clusters)", p->label + 9);
    else if (p->k > 0)
        snprintf(title, sizeof title, "ratio vs %s (k = %d, silhouette %.2f)", p->label + 9, p->k, p->silhouette);
    else snprintf(title, sizeof title, "ratio vs %s (nothing kept)", p->label + 9);
    axes_draw(cr, &p->ax, p->ax.xlog ? "compression ratio (log scale; higher is better)" : "compression ratio (higher is better)", p->label, title);
    cairo_save(cr);
    cairo_rectangle(cr, p->ax.x, p->ax.y, p->ax.w, p->ax.h);
    cairo_clip(cr);
    draw_points(cr, p);
    draw_front(cr, p);
    draw_centroids(cr, p);
    draw_threshold(cr, p, i);
    draw_best(cr, p);
    if (p->ax.ylog && p->nzero) {
        snprintf(note, sizeof note, "%zu lossless (error 0) on the bottom edge", p->nzero);
        cairo_set_source_rgb(cr, 0.3, 0.3, 0.3);
        text_at(cr, p->ax.x + p->ax.w - 5, p->ax.y + p->ax.h - 10, note, 8.5, ALIGN_RIGHT, 0, false);
    }
    cairo_restore(cr);
}

/* Only what the figure shows: no threshold entry without a threshold, no
 * winner entry without a winner, no grey entry when no combo was rejected. */
static void draw_legend(cairo_t *cr, const an_figure *f, double y) {
    const an_panel *p = &f->p[0];
    bool thr = false, grey = p->npts > p->nkept;
    for (int i = 0; i < AN_PANELS; i++) thr = thr || isfinite(f->p[i].bound);
    double x = f->w / 2 - 300 - (thr ? 60 : 0) - (p->best >= 0 ? 60 : 0) - (grey ? 90 : 0), dash[] = {6, 4};
    x = legend_item(cr, x, y, MARK_CIRCLE, cluster_color(0), "kept combo (colour: k-means cluster)");
    x = legend_item(cr, x, y, MARK_CROSS, BLACK, "centroid");
    x = legend_item(cr, x, y, MARK_RING, BLACK, "Pareto front");
    if (p->best >= 0) x = legend_item(cr, x, y, MARK_DIAMOND, RED, "best combo (best_VAR.json)");
    if (grey) x = legend_item(cr, x, y, MARK_RING, GREY, "rejected (a gate failed)");
    if (!thr) return;
    cairo_save(cr);
    set_rgb(cr, RED, 1);
    cairo_set_line_width(cr, 1.4);
    cairo_set_dash(cr, dash, 2, 0);
    cairo_move_to(cr, x, y);
    cairo_line_to(cr, x + 22, y);
    cairo_stroke(cr);
    cairo_restore(cr);
    cairo_set_source_rgb(cr, 0.15, 0.15, 0.15);
    text_at(cr, x + 28, y, isfinite(f->p[1].bound) || isfinite(f->p[2].bound) ? "threshold / gate" : "L1 threshold",
            9.5, ALIGN_LEFT, 0, false);
}

/* The winner by its readable name, under the subtitle. */
static void draw_winner(cairo_t *cr, const an_figure *f, double y) {
    const an_panel *p = &f->p[0];
    if (p->best < 0) return;
    const dctk_result_row *r = &f->t->rows[p->pts[p->best].row];
    char line[600];
    snprintf(line, sizeof line, "best combo (red diamond): %s, ratio %.3g", r->name && r->name[0] ? r->name : "?",
             r->ratio);
    cairo_set_source_rgb(cr, 0.55, 0.05, 0.05);
    text_wrap(cr, f->w / 2, y, line, 10, f->w - 80, 1, 12);
}

void an_draw(cairo_t *cr, void *user) {
    const an_figure *f = user;
    char head[256], sub[512], counts[200], thr[64] = "";
    const size_t *n = f->counts.n;
    snprintf(head, sizeof head, "Compression combos of %s: ratio against error", f->o->var ? f->o->var : "?");
    dctk_row_counts_str(&f->counts, counts, sizeof counts);
    if (isfinite(f->o->threshold)) snprintf(thr, sizeof thr, "; relative L1 threshold %.3g", f->o->threshold);
    /* what is not drawn, and why: pruned rows hold a part's figures, the others none */
    snprintf(sub, sizeof sub, "%zu combos: %s%s%s", f->t->n, counts, thr,
             n[DCTK_ROW_PRUNED] + n[DCTK_ROW_LEFT_OUT] + n[DCTK_ROW_FAILED]
                 ? "; only kept and rejected combos are drawn (measured on the whole sample)"
                 : "");
    cairo_set_source_rgb(cr, 0.1, 0.1, 0.1);
    text_at(cr, f->w / 2, 22, head, 16, ALIGN_CENTER, 0, true);
    text_at(cr, f->w / 2, 42, sub, 10.5, ALIGN_CENTER, 0, false);
    draw_winner(cr, f, 58);
    draw_legend(cr, f, 78);
    for (int i = 0; i < AN_PANELS; i++) draw_panel(cr, &f->p[i], i);
}
