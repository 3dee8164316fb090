/* plot_compression_errors' figure: the 3x3 panel of the Python tool.
 *
 *   original              | original c&d              | |original - original c&d|
 *   shifted by 180 deg    | shifted c&d               | |shifted - shifted c&d|
 *   |orig - back(shifted)|| |orig c&d - back(shifted c&d)| | |orig - back(shifted c&d)|
 *       / |orig|
 *
 * "back" rolls a shifted field by the other half of its longitudes. The first
 * of the bottom row checks the roll itself (it must be zero); the second shows
 * whether the pipeline respects the periodic seam: a codec that works on
 * blocks or along rows treats the seam differently once it moves to the
 * middle, and the difference lights up there.
 *
 * Fields share one viridis scale (the original's range) so their colours
 * compare; each error map has its own white-to-black scale from 0. Maps larger
 * than the drawing are reduced by blocks: fields by the block's first value,
 * errors by the block's maximum, so that no error disappears. Masked points
 * (NaN) are light grey. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dctk/report.h"
#include "report/plot.h"

#define FIG_W 1180.0
#define FIG_H 806.0
#define HEAD_H 78.0 /* the title, two lines of pipeline name and the slice line */
#define MAX_PX_W 900 /* raster cells per map: enough for print, keeps the PDF small */
#define MAX_PX_H 450

typedef struct {
    const char *title;
    double *v;       /* nlat x nlon, owned */
    bool error;      /* white-to-black scale from 0, block maximum */
    const char *units;
} err_map;

typedef struct {
    const dctk_error_panel_in *in;
    err_map m[9];
    double flo, fhi; /* the fields' shared range */
} err_fig;

/* v[i] = value of `a` at the point that `b`'s index i came from after rolling by r. */
static void unroll(const double *src, size_t nlat, size_t nlon, size_t r, double *dst) {
    for (size_t i = 0; i < nlat; i++)
        for (size_t j = 0; j < nlon; j++) dst[i * nlon + (j + r) % nlon] = src[i * nlon + j];
}

static dctk_status build_maps(err_fig *f) {
    const dctk_error_panel_in *in = f->in;
    size_t n = in->nlat * in->nlon, half = in->nlon / 2;
    double *back = malloc(sizeof(double) * n), *back_dec = malloc(sizeof(double) * n);
    for (int i = 0; i < 9; i++) f->m[i].v = malloc(sizeof(double) * n);
    bool ok = back && back_dec;
    for (int i = 0; i < 9; i++) ok = ok && f->m[i].v;
    if (ok) {
        unroll(in->shifted, in->nlat, in->nlon, half, back); /* shifted was rolled by -half */
        unroll(in->shifted_dec, in->nlat, in->nlon, half, back_dec);
        for (size_t k = 0; k < n; k++) {
            double o = in->orig[k], d = in->dec[k], s = in->shifted[k], sd = in->shifted_dec[k];
            double v[9] = {o, d, fabs(o - d), s, sd, fabs(s - sd), fabs(o - back[k]) / (fabs(o) + 1e-20),
                           fabs(d - back_dec[k]), fabs(o - back_dec[k])};
            for (int i = 0; i < 9; i++) f->m[i].v[k] = v[i];
        }
    }
    free(back);
    free(back_dec);
    return ok ? DCTK_OK : DCTK_FAIL(DCTK_ERR_NOMEM, "plot_compression_errors: out of memory for the maps");
}

static void set_titles(err_fig *f) {
    static const char *const titles[9] = {
        "Original",
        "Original compressed & decompressed",
        "Absolute error |original - original c&d|",
        "Shifted by 180\xc2\xb0 of longitude",
        "Shifted compressed & decompressed",
        "Absolute error |shifted - shifted c&d|",
        "|original - (shifted, rolled back)| / |original|",
        "|original c&d - (shifted c&d, rolled back)|",
        "|original - (shifted c&d, rolled back)|",
    };
    const char *u = f->in->units && f->in->units[0] ? f->in->units : "no units";
    for (int i = 0; i < 9; i++) {
        f->m[i].title = titles[i];
        f->m[i].error = i % 3 == 2 || i >= 6;
        f->m[i].units = i == 6 ? "relative (1)" : u;
    }
}

static void range_of(const double *v, size_t n, double *lo, double *hi) {
    *lo = INFINITY, *hi = -INFINITY;
    for (size_t k = 0; k < n; k++)
        if (isfinite(v[k])) *lo = fmin(*lo, v[k]), *hi = fmax(*hi, v[k]);
}

/* --- raster ----------------------------------------------------------------- */

typedef struct {
    size_t w, h;        /* raster cells */
    size_t bw, bh;      /* source points per cell */
    bool flip_rows, flip_cols;
} raster_geom;

static raster_geom geom_of(const dctk_error_panel_in *in) {
    raster_geom g = {0};
    g.bw = (in->nlon + MAX_PX_W - 1) / MAX_PX_W;
    g.bh = (in->nlat + MAX_PX_H - 1) / MAX_PX_H;
    g.w = (in->nlon + g.bw - 1) / g.bw;
    g.h = (in->nlat + g.bh - 1) / g.bh;
    /* north up: the row with the largest latitude is drawn first */
    g.flip_rows = in->lat && in->nlat > 1 && in->lat[0] < in->lat[in->nlat - 1];
    g.flip_cols = in->lon && in->nlon > 1 && in->lon[0] > in->lon[in->nlon - 1];
    return g;
}

/* The value of raster cell (r, c): the block's first point, or its maximum. */
static double cell_value(const dctk_error_panel_in *in, const raster_geom *g, const double *v, bool max, size_t r,
                         size_t c) {
    size_t i0 = r * g->bh, j0 = c * g->bw;
    double out = v[i0 * in->nlon + j0];
    for (size_t i = i0; max && i < i0 + g->bh && i < in->nlat; i++)
        for (size_t j = j0; j < j0 + g->bw && j < in->nlon; j++) {
            double x = v[i * in->nlon + j];
            if (isnan(out) || x > out) out = x;
        }
    return out;
}

static cairo_surface_t *raster(const err_fig *f, const err_map *m, const raster_geom *g, double lo, double hi) {
    cairo_surface_t *s = cairo_image_surface_create(CAIRO_FORMAT_RGB24, (int)g->w, (int)g->h);
    uint8_t *px = cairo_image_surface_get_data(s);
    int stride = cairo_image_surface_get_stride(s);
    cairo_surface_flush(s);
    for (size_t r = 0; px && r < g->h; r++)
        for (size_t c = 0; c < g->w; c++) {
            double x = cell_value(f->in, g, m->v, m->error, r, c);
            rgb col = !isfinite(x) ? (rgb){0.85, 0.85, 0.85}
                      : m->error  ? cmap_greys(hi > lo ? (x - lo) / (hi - lo) : 0)
                                  : cmap_viridis(hi > lo ? (x - lo) / (hi - lo) : 0.5);
            size_t rr = g->flip_rows ? g->h - 1 - r : r, cc = g->flip_cols ? g->w - 1 - c : c;
            uint32_t *p = (uint32_t *)(px + rr * (size_t)stride) + cc;
            *p = (uint32_t)lround(col.r * 255) << 16 | (uint32_t)lround(col.g * 255) << 8 | (uint32_t)lround(col.b * 255);
        }
    cairo_surface_mark_dirty(s);
    return s;
}

/* --- drawing ------------------------------------------------------------------ */

/* Axis extent of a coordinate: cell edges, half a spacing beyond the centres. */
static void extent(const double *c, size_t n, double *lo, double *hi) {
    if (!c || n < 2) {
        *lo = -0.5, *hi = (double)n - 0.5;
        return;
    }
    double a = fmin(c[0], c[n - 1]), b = fmax(c[0], c[n - 1]), d = (b - a) / (double)(n - 1);
    *lo = a - d / 2, *hi = b + d / 2;
}

static void draw_map(cairo_t *cr, const err_fig *f, int i, double cx, double cy, double cw, double ch) {
    const dctk_error_panel_in *in = f->in;
    const err_map *m = &f->m[i];
    raster_geom g = geom_of(in);
    double lo = f->flo, hi = f->fhi, aspect = (double)in->nlat / (double)in->nlon;
    bool all_zero = false;
    if (m->error) {
        range_of(m->v, in->nlat * in->nlon, &lo, &hi);
        lo = 0;
        if ((all_zero = !(hi > 0))) hi = 1; /* a scale still reads */
    }
    double w = cw - 130, h = w * aspect;
    if (h > ch - 70) h = ch - 70, w = h / aspect;
    plot_axes a = {cx + 55 + (cw - 130 - w) / 2, cy + 34, w, h, 0, 0, 0, 0, false, false, true};
    extent(in->lon, in->nlon, &a.xmin, &a.xmax);
    extent(in->lat, in->nlat, &a.ymin, &a.ymax);
    cairo_surface_t *img = raster(f, m, &g, lo, hi);
    cairo_save(cr);
    cairo_rectangle(cr, a.x, a.y, a.w, a.h);
    cairo_clip(cr);
    cairo_translate(cr, a.x, a.y);
    cairo_scale(cr, a.w / (double)g.w, a.h / (double)g.h);
    cairo_set_source_surface(cr, img, 0, 0);
    cairo_pattern_set_filter(cairo_get_source(cr), CAIRO_FILTER_NEAREST);
    cairo_paint(cr);
    cairo_restore(cr);
    cairo_surface_destroy(img);
    char title[128], full[128];
    snprintf(full, sizeof full, "%s%s", m->title, all_zero ? " (all zero)" : "");
    text_fit(cr, full, 10.5, cw - 20, title, sizeof title);
    axes_draw(cr, &a, in->lon ? in->lon_name : "column", in->lat ? in->lat_name : "row", NULL);
    cairo_set_source_rgb(cr, 0.1, 0.1, 0.1);
    text_at(cr, a.x + a.w / 2, cy + 12, title, 10.5, ALIGN_CENTER, 0, true);
    colorbar_draw(cr, a.x + a.w + 10, a.y, 9, a.h, lo, hi, m->error ? cmap_greys : cmap_viridis, m->units);
}

static void draw_errors(cairo_t *cr, void *user) {
    const err_fig *f = user;
    char head[512];
    snprintf(head, sizeof head, "Compression errors for variable %s (%s)", f->in->var,
             f->in->units && f->in->units[0] ? f->in->units : "no units");
    cairo_set_source_rgb(cr, 0.1, 0.1, 0.1);
    text_at(cr, FIG_W / 2, 20, head, 16, ALIGN_CENTER, 0, true);
    /* the pipeline by name, on two lines at most, then which slice */
    int lines = text_wrap(cr, FIG_W / 2, 40, f->in->pipeline ? f->in->pipeline : "", 10, FIG_W - 60, 2, 13);
    cairo_set_source_rgb(cr, 0.35, 0.35, 0.35);
    if (f->in->note) text_wrap(cr, FIG_W / 2, 40 + 13 * (lines ? lines : 1), f->in->note, 9, FIG_W - 60, 1, 12);
    double cw = FIG_W / 3, ch = (FIG_H - HEAD_H) / 3;
    for (int i = 0; i < 9; i++) draw_map(cr, f, i, (i % 3) * cw, HEAD_H + (i / 3) * ch, cw, ch);
}

dctk_status dctk_plot_compression_errors(const dctk_error_panel_in *in, const char *prefix) {
    if (in->nlat == 0 || in->nlon == 0) return DCTK_FAIL(DCTK_ERR_ARG, "plot_compression_errors: empty field");
    err_fig f;
    memset(&f, 0, sizeof f);
    f.in = in;
    dctk_status st = build_maps(&f);
    if (st == DCTK_OK) {
        set_titles(&f);
        range_of(in->orig, in->nlat * in->nlon, &f.flo, &f.fhi);
        if (!(f.fhi >= f.flo)) f.flo = 0, f.fhi = 1; /* all masked */
        char path[4096];
        snprintf(path, sizeof path, "%s.pdf", prefix);
        st = fig_write(path, FIG_PDF, FIG_W, FIG_H, 1, draw_errors, &f);
        snprintf(path, sizeof path, "%s.png", prefix);
        if (st == DCTK_OK) st = fig_write(path, FIG_PNG, FIG_W, FIG_H, 1.25, draw_errors, &f);
    }
    for (int i = 0; i < 9; i++) free(f.m[i].v);
    return st;
}
