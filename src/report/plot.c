/* Drawing helpers for the report figures, on cairo.
 *
 * Figures are drawn once, by a callback, on whichever surface the format
 * needs; the bytes go to memory first and then to the file atomically, so a
 * reader never sees half a PNG. Text uses cairo's toy API with the
 * fontconfig "sans-serif" face. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "dctk/util.h"
#include "report/plot.h"

static cairo_status_t to_buf(void *closure, const unsigned char *data, unsigned int len) {
    return dctk_buf_append(closure, data, len) == DCTK_OK ? CAIRO_STATUS_SUCCESS : CAIRO_STATUS_WRITE_ERROR;
}

static cairo_surface_t *make_surface(fig_format f, double w, double h, double scale, dctk_buf *out) {
    if (f == FIG_SVG) {
        cairo_surface_t *s = cairo_svg_surface_create_for_stream(to_buf, out, w, h);
        cairo_svg_surface_restrict_to_version(s, CAIRO_SVG_VERSION_1_1);
        return s;
    }
    if (f == FIG_PDF) return cairo_pdf_surface_create_for_stream(to_buf, out, w, h);
    return cairo_image_surface_create(CAIRO_FORMAT_RGB24, (int)ceil(w * scale), (int)ceil(h * scale));
}

dctk_status fig_render(fig_format f, double w, double h, double png_scale, fig_draw_fn draw, void *user,
                       dctk_buf *out) {
    out->size = 0;
    DCTK_TRY(dctk_cairo_load());
    cairo_surface_t *s = make_surface(f, w, h, png_scale, out);
    cairo_t *cr = cairo_create(s);
    if (f == FIG_PNG) cairo_scale(cr, png_scale, png_scale);
    cairo_set_source_rgb(cr, 1, 1, 1);
    cairo_paint(cr);
    draw(cr, user);
    cairo_status_t cs = cairo_status(cr);
    cairo_destroy(cr);
    cairo_surface_flush(s);
    if (cs == CAIRO_STATUS_SUCCESS && f == FIG_PNG) cs = cairo_surface_write_to_png_stream(s, to_buf, out);
    cairo_surface_finish(s); /* SVG and PDF write their trailer here */
    if (cs == CAIRO_STATUS_SUCCESS) cs = cairo_surface_status(s);
    cairo_surface_destroy(s);
    if (cs != CAIRO_STATUS_SUCCESS) return DCTK_FAIL(DCTK_ERR_IO, "cairo: %s", cairo_status_to_string(cs));
    return DCTK_OK;
}

dctk_status fig_write(const char *path, fig_format f, double w, double h, double png_scale, fig_draw_fn draw,
                      void *user) {
    dctk_buf b = DCTK_BUF_INIT;
    dctk_status st = fig_render(f, w, h, png_scale, draw, user, &b);
    if (st == DCTK_OK) st = dctk_write_file_atomic(path, b.data, b.size);
    if (st != DCTK_OK) dctk_prefix_detail("%s: ", path);
    dctk_buf_free(&b);
    return st;
}

/* --- axes ---------------------------------------------------------------------- */

static double tr_y(const plot_axes *a, double y) {
    if (!a->ylog) return y;
    return y > 0 ? log10(y) : -INFINITY;
}

static double tr_x(const plot_axes *a, double x) {
    if (!a->xlog) return x;
    return x > 0 ? log10(x) : -INFINITY;
}

double axes_px(const plot_axes *a, double x) {
    double lo = tr_x(a, a->xmin), hi = tr_x(a, a->xmax), v = tr_x(a, x);
    if (!isfinite(v)) v = lo;
    double span = hi - lo;
    return a->x + (span > 0 ? (v - lo) / span : 0.5) * a->w;
}

double axes_py(const plot_axes *a, double y) {
    double lo = tr_y(a, a->ymin), hi = tr_y(a, a->ymax), v = tr_y(a, y);
    if (!isfinite(v)) v = lo;
    double span = hi - lo;
    return a->y + a->h - (span > 0 ? (v - lo) / span : 0.5) * a->h;
}

void axes_pad(double *lo, double *hi, double frac, bool log) {
    if (log) {
        double l = log10(*lo), h = log10(*hi);
        if (!(h > l)) l -= 0.5, h += 0.5;
        double m = (h - l) * frac;
        *lo = pow(10, l - m), *hi = pow(10, h + m);
        return;
    }
    if (!(*hi > *lo)) {
        double m = *lo != 0 ? fabs(*lo) * 0.1 : 1;
        *lo -= m, *hi += m;
        return;
    }
    double m = (*hi - *lo) * frac;
    *lo -= m, *hi += m;
}

/* A step of 1, 2 or 5 times a power of ten giving about n ticks. */
static double nice_step(double span, int n) {
    double raw = span / n, p = pow(10, floor(log10(raw))), f = raw / p;
    return (f < 1.5 ? 1 : f < 3.5 ? 2 : f < 7.5 ? 5 : 10) * p;
}

void fmt_tick(double v, double step, char *buf, size_t cap) {
    if (fabs(v) < step * 1e-9) v = 0;
    double m = fmax(fabs(v), step);
    if (m >= 1e5 || (m < 1e-3 && v != 0)) snprintf(buf, cap, "%.3g", v);
    else {
        int dec = step >= 1 ? 0 : (int)ceil(-log10(step) - 1e-9);
        snprintf(buf, cap, "%.*f", dec > 6 ? 6 : dec, v);
    }
}

static void grid_line(cairo_t *cr, double x0, double y0, double x1, double y1) {
    cairo_move_to(cr, x0, y0);
    cairo_line_to(cr, x1, y1);
}

static void xtick(cairo_t *cr, const plot_axes *a, double t, const char *label) {
    double px = axes_px(a, t);
    cairo_set_source_rgb(cr, a->no_grid ? 0.2 : 0.88, a->no_grid ? 0.2 : 0.88, a->no_grid ? 0.2 : 0.88);
    grid_line(cr, px, a->no_grid ? a->y + a->h : a->y, px, a->y + a->h + (a->no_grid ? 3 : 0));
    cairo_stroke(cr);
    cairo_set_source_rgb(cr, 0.15, 0.15, 0.15);
    text_at(cr, px, a->y + a->h + 12, label, 9, ALIGN_CENTER, 0, false);
}

/* Log ticks at 1, 2 and 5 times each power of ten while that stays legible. */
static void draw_xlog_ticks(cairo_t *cr, const plot_axes *a) {
    static const double mult[3] = {1, 2, 5};
    int lo = (int)floor(log10(a->xmin)), hi = (int)ceil(log10(a->xmax)), nm = hi - lo <= 4 ? 3 : 1;
    char buf[32];
    for (int e = lo; e <= hi; e++)
        for (int m = 0; m < nm; m++) {
            double t = mult[m] * pow(10, e);
            if (t < a->xmin || t > a->xmax) continue;
            fmt_tick(t, t, buf, sizeof buf);
            xtick(cr, a, t, buf);
        }
}

static void draw_xticks(cairo_t *cr, const plot_axes *a) {
    if (a->xlog) {
        draw_xlog_ticks(cr, a);
        return;
    }
    double step = nice_step(a->xmax - a->xmin, 6);
    char buf[32];
    for (double t = ceil(a->xmin / step) * step; t <= a->xmax + step * 1e-9; t += step) {
        fmt_tick(t, step, buf, sizeof buf);
        xtick(cr, a, t, buf);
    }
}

static void ytick(cairo_t *cr, const plot_axes *a, double t, const char *label) {
    double py = axes_py(a, t);
    cairo_set_source_rgb(cr, a->no_grid ? 0.2 : 0.88, a->no_grid ? 0.2 : 0.88, a->no_grid ? 0.2 : 0.88);
    grid_line(cr, a->no_grid ? a->x - 3 : a->x, py, a->no_grid ? a->x : a->x + a->w, py);
    cairo_stroke(cr);
    cairo_set_source_rgb(cr, 0.15, 0.15, 0.15);
    text_at(cr, a->x - 4, py, label, 9, ALIGN_RIGHT, 0, false);
}

static void draw_yticks(cairo_t *cr, const plot_axes *a) {
    char buf[32];
    if (a->ylog) {
        int lo = (int)ceil(log10(a->ymin) - 1e-9), hi = (int)floor(log10(a->ymax) + 1e-9);
        int every = (hi - lo) / 7 + 1;
        for (int e = lo; e <= hi; e++) {
            if ((e - lo) % every) continue;
            snprintf(buf, sizeof buf, "1e%d", e);
            ytick(cr, a, pow(10, e), buf);
        }
        return;
    }
    double step = nice_step(a->ymax - a->ymin, 5);
    for (double t = ceil(a->ymin / step) * step; t <= a->ymax + step * 1e-9; t += step) {
        fmt_tick(t, step, buf, sizeof buf);
        ytick(cr, a, t, buf);
    }
}

void axes_draw(cairo_t *cr, const plot_axes *a, const char *xlabel, const char *ylabel, const char *title) {
    cairo_save(cr);
    cairo_set_line_width(cr, 0.6);
    draw_xticks(cr, a);
    draw_yticks(cr, a);
    cairo_set_source_rgb(cr, 0.2, 0.2, 0.2);
    cairo_set_line_width(cr, 0.9);
    cairo_rectangle(cr, a->x, a->y, a->w, a->h);
    cairo_stroke(cr);
    if (xlabel) text_at(cr, a->x + a->w / 2, a->y + a->h + 28, xlabel, 10.5, ALIGN_CENTER, 0, false);
    if (ylabel) text_at(cr, a->x - 46, a->y + a->h / 2, ylabel, 10.5, ALIGN_CENTER, -M_PI / 2, false);
    if (title) text_at(cr, a->x + a->w / 2, a->y - 10, title, 12, ALIGN_CENTER, 0, true);
    cairo_restore(cr);
}

/* --- text ------------------------------------------------------------------------ */

static void set_font(cairo_t *cr, double size, bool bold) {
    cairo_select_font_face(cr, "sans-serif", CAIRO_FONT_SLANT_NORMAL,
                           bold ? CAIRO_FONT_WEIGHT_BOLD : CAIRO_FONT_WEIGHT_NORMAL);
    cairo_set_font_size(cr, size);
}

void text_at(cairo_t *cr, double x, double y, const char *s, double size, text_align al, double angle, bool bold) {
    cairo_text_extents_t e;
    cairo_save(cr);
    set_font(cr, size, bold);
    cairo_text_extents(cr, s, &e);
    cairo_translate(cr, x, y);
    cairo_rotate(cr, angle);
    double dx = al == ALIGN_LEFT ? 0 : al == ALIGN_CENTER ? -e.x_advance / 2 : -e.x_advance;
    cairo_move_to(cr, dx, size * 0.35); /* about half the cap height: the text is centred on y */
    cairo_show_text(cr, s);
    cairo_restore(cr);
}

const char *text_fit(cairo_t *cr, const char *s, double size, double width, char *buf, size_t cap) {
    cairo_text_extents_t e;
    cairo_save(cr);
    set_font(cr, size, false);
    snprintf(buf, cap, "%s", s);
    cairo_text_extents(cr, buf, &e);
    for (size_t n = strlen(buf); e.x_advance > width && n > 4; n--) {
        while (n > 4 && (buf[n - 1] & 0xC0) == 0x80) n--; /* keep UTF-8 sequences whole */
        memcpy(buf + n - 4, "...", 4);
        cairo_text_extents(cr, buf, &e);
    }
    cairo_restore(cr);
    return buf;
}

static double text_width(cairo_t *cr, const char *s, double size) {
    cairo_text_extents_t e;
    cairo_save(cr);
    set_font(cr, size, false);
    cairo_text_extents(cr, s, &e);
    cairo_restore(cr);
    return e.x_advance;
}

/* The longest prefix of s, ending before a space, that fits width (at least
 * one word): where the next line starts is s + the returned length + 1. */
static size_t line_break(cairo_t *cr, const char *s, double size, double width, char *buf, size_t cap) {
    size_t fit = 0, n = strlen(s);
    for (size_t i = 0; i <= n && i < cap; i++) {
        if (s[i] != ' ' && s[i] != '\0') continue;
        snprintf(buf, cap, "%.*s", (int)i, s);
        if (fit && text_width(cr, buf, size) > width) break;
        fit = i;
    }
    return fit ? fit : n;
}

int text_wrap(cairo_t *cr, double x, double y, const char *s, double size, double width, int max_lines,
              double line_h) {
    char line[512], fitted[512];
    int k = 0;
    while (*s && k < max_lines) {
        size_t n = line_break(cr, s, size, width, line, sizeof line);
        bool last = k == max_lines - 1;
        snprintf(line, sizeof line, "%.*s", (int)(last ? strlen(s) : n), s); /* the last line takes the rest */
        text_at(cr, x, y + k * line_h, text_fit(cr, line, size, width, fitted, sizeof fitted), size, ALIGN_CENTER, 0,
                false);
        k++;
        s += n;
        while (*s == ' ') s++;
    }
    return k;
}

/* --- colours and markers ------------------------------------------------------------ */

rgb cluster_color(int i) {
    static const rgb pal[10] = {{0.12, 0.47, 0.71}, {1.00, 0.50, 0.05}, {0.17, 0.63, 0.17}, {0.84, 0.15, 0.16},
                                {0.58, 0.40, 0.74}, {0.55, 0.34, 0.29}, {0.89, 0.47, 0.76}, {0.10, 0.20, 0.45},
                                {0.74, 0.74, 0.13}, {0.09, 0.75, 0.81}};
    return pal[(i % 10 + 10) % 10];
}

/* Linear interpolation between evenly spaced anchors. */
static rgb ramp(const rgb *anchors, int n, double t) {
    if (!(t > 0)) t = 0;
    if (t > 1) t = 1;
    double u = t * (n - 1);
    int i = (int)floor(u);
    if (i >= n - 1) return anchors[n - 1];
    double f = u - i;
    const rgb *a = &anchors[i], *b = &anchors[i + 1];
    return (rgb){a->r + f * (b->r - a->r), a->g + f * (b->g - a->g), a->b + f * (b->b - a->b)};
}

rgb cmap_viridis(double t) {
    /* nine samples of matplotlib's viridis: perceptually even, colour-blind safe */
    static const rgb v[9] = {{0.267, 0.005, 0.329}, {0.283, 0.141, 0.458}, {0.254, 0.265, 0.530},
                             {0.207, 0.372, 0.553}, {0.164, 0.471, 0.558}, {0.128, 0.567, 0.551},
                             {0.135, 0.659, 0.518}, {0.478, 0.821, 0.318}, {0.993, 0.906, 0.144}};
    return ramp(v, 9, t);
}

rgb cmap_greys(double t) {
    static const rgb g[2] = {{1, 1, 1}, {0, 0, 0}};
    return ramp(g, 2, t);
}

void set_rgb(cairo_t *cr, rgb c, double alpha) { cairo_set_source_rgba(cr, c.r, c.g, c.b, alpha); }

void draw_marker(cairo_t *cr, marker m, double x, double y, double r, rgb c, double alpha) {
    cairo_save(cr);
    cairo_new_path(cr);
    set_rgb(cr, c, alpha);
    switch (m) {
    case MARK_CIRCLE:
        cairo_arc(cr, x, y, r, 0, 2 * M_PI);
        cairo_fill(cr);
        break;
    case MARK_RING:
        cairo_set_line_width(cr, 1.1);
        cairo_arc(cr, x, y, r, 0, 2 * M_PI);
        cairo_stroke(cr);
        break;
    case MARK_CROSS:
        cairo_set_line_width(cr, r * 0.55);
        grid_line(cr, x - r, y - r, x + r, y + r);
        grid_line(cr, x - r, y + r, x + r, y - r);
        cairo_stroke(cr);
        break;
    case MARK_DIAMOND:
        cairo_move_to(cr, x, y - r);
        cairo_line_to(cr, x + r, y);
        cairo_line_to(cr, x, y + r);
        cairo_line_to(cr, x - r, y);
        cairo_close_path(cr);
        cairo_set_line_width(cr, 1.2);
        cairo_stroke(cr);
        break;
    }
    cairo_restore(cr);
}

double legend_item(cairo_t *cr, double x, double y, marker m, rgb c, const char *label) {
    cairo_text_extents_t e;
    draw_marker(cr, m, x + 4, y, m == MARK_CROSS ? 4.5 : 3.5, c, 1);
    cairo_set_source_rgb(cr, 0.15, 0.15, 0.15);
    text_at(cr, x + 12, y, label, 9.5, ALIGN_LEFT, 0, false);
    cairo_save(cr);
    set_font(cr, 9.5, false);
    cairo_text_extents(cr, label, &e);
    cairo_restore(cr);
    return x + 12 + e.x_advance + 14;
}

/* --- colour bar ---------------------------------------------------------------------- */

void colorbar_draw(cairo_t *cr, double x, double y, double w, double h, double lo, double hi, rgb (*cmap)(double),
                   const char *label) {
    const int steps = 128;
    for (int i = 0; i < steps; i++) {
        set_rgb(cr, cmap((i + 0.5) / steps), 1);
        cairo_rectangle(cr, x, y + h - (i + 1) * h / steps, w, h / steps + 0.3); /* overlap hides seams */
        cairo_fill(cr);
    }
    cairo_set_source_rgb(cr, 0.2, 0.2, 0.2);
    cairo_set_line_width(cr, 0.6);
    cairo_rectangle(cr, x, y, w, h);
    cairo_stroke(cr);
    double step = nice_step(hi - lo, 4);
    char buf[32];
    for (double t = ceil(lo / step) * step; hi > lo && t <= hi + step * 1e-9; t += step) {
        double py = y + h - (t - lo) / (hi - lo) * h;
        grid_line(cr, x + w, py, x + w + 3, py);
        cairo_stroke(cr);
        fmt_tick(t, step, buf, sizeof buf);
        text_at(cr, x + w + 5, py, buf, 8, ALIGN_LEFT, 0, false);
    }
    /* the units above the bar: at its right they sat against the next panel's axis label ("K lat") */
    if (label) text_at(cr, x + w / 2, y - 8, label, 8.5, ALIGN_CENTER, 0, false);
}
