/* Private to src/report: small drawing helpers on top of cairo (axes with
 * ticks, text, markers, colour maps) and output to PNG, SVG and PDF files. */
#ifndef DCTK_REPORT_PLOT_H
#define DCTK_REPORT_PLOT_H

#include <stdbool.h>

#include "dctk/buf.h"
#include "dctk/status.h"
#include "report/cairo_lazy.h"

typedef enum { FIG_PNG, FIG_SVG, FIG_PDF } fig_format;

/* Draw a figure of w x h points. For PNG, png_scale pixels per point. */
typedef void (*fig_draw_fn)(cairo_t *cr, void *user);

/* Render into memory (out) or atomically into a file. */
dctk_status fig_render(fig_format f, double w, double h, double png_scale, fig_draw_fn draw, void *user,
                       dctk_buf *out);
dctk_status fig_write(const char *path, fig_format f, double w, double h, double png_scale, fig_draw_fn draw,
                      void *user);

/* A data-to-page mapping for one panel. */
typedef struct plot_axes {
    double x, y, w, h;           /* frame on the page, points */
    double xmin, xmax, ymin, ymax;
    bool ylog;                   /* log10 y; values <= 0 sit on the bottom edge */
    bool xlog;                   /* log10 x; values <= 0 sit on the left edge */
    bool no_grid;                /* maps: ticks only, no lines over the image */
} plot_axes;

double axes_px(const plot_axes *a, double x);
double axes_py(const plot_axes *a, double y);
/* Extend [lo, hi] by a margin and make it non-empty. */
void axes_pad(double *lo, double *hi, double frac, bool log);
/* Frame, grid, tick labels, axis labels and title. */
void axes_draw(cairo_t *cr, const plot_axes *a, const char *xlabel, const char *ylabel, const char *title);

typedef enum { ALIGN_LEFT, ALIGN_CENTER, ALIGN_RIGHT } text_align;
/* Text with its baseline centred (vertically) at y, rotated by angle radians. */
void text_at(cairo_t *cr, double x, double y, const char *s, double size, text_align al, double angle, bool bold);
/* Shorten s with "..." so that it fits width (written to buf). */
const char *text_fit(cairo_t *cr, const char *s, double size, double width, char *buf, size_t cap);
/* s centred on x over at most max_lines lines of width, broken at spaces,
 * the first on y and each next line_h lower; the last line shortened with
 * "..." if it must. Returns the lines drawn. */
int text_wrap(cairo_t *cr, double x, double y, const char *s, double size, double width, int max_lines,
              double line_h);
/* A number for a tick label: short, and without a trailing ".0". */
void fmt_tick(double v, double step, char *buf, size_t cap);

/* Colours. */
typedef struct rgb {
    double r, g, b;
} rgb;
rgb cluster_color(int i);              /* a qualitative palette of 10 */
rgb cmap_viridis(double t);            /* t in [0, 1] */
rgb cmap_greys(double t);              /* white (0) to black (1), matplotlib's "binary" */
void set_rgb(cairo_t *cr, rgb c, double alpha);

/* A vertical colour bar for [lo, hi] at (x, y, w, h), ticks and label on its right. */
void colorbar_draw(cairo_t *cr, double x, double y, double w, double h, double lo, double hi, rgb (*cmap)(double),
                   const char *label);

typedef enum { MARK_CIRCLE, MARK_CROSS, MARK_DIAMOND, MARK_RING } marker;
void draw_marker(cairo_t *cr, marker m, double x, double y, double r, rgb c, double alpha);

/* A horizontal legend row: marker + label, returns the x after it. */
double legend_item(cairo_t *cr, double x, double y, marker m, rgb c, const char *label);

#endif
