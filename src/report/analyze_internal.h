/* Private to src/report: the laid-out analyze_clustering figure, shared by
 * the cairo drawing (PNG, SVG) and the HTML page, so that hover positions in
 * the page are exactly where the points were drawn. */
#ifndef DCTK_REPORT_ANALYZE_INTERNAL_H
#define DCTK_REPORT_ANALYZE_INTERNAL_H

#include "dctk/buf.h"
#include "dctk/report.h"
#include "report/plot.h"

#define AN_PANELS 3

typedef struct an_point {
    size_t row;    /* in the result table */
    double px, py; /* on the page, points */
    int cluster;   /* -1: rejected (drawn grey, not clustered) */
    bool pareto;
} an_point;

typedef struct an_panel {
    int col;               /* error column */
    const char *label;     /* "relative L1 error" */
    plot_axes ax;
    an_point *pts;         /* rejected first, then kept: the drawing order */
    size_t npts, nkept, nzero;
    int k;                 /* clusters (0: none) */
    double silhouette;
    double centers[2 * 16]; /* centroids in data units */
    size_t *front;         /* indices into pts, by ratio descending */
    size_t nfront;
    double bound;          /* this panel's threshold or gate (NaN: none drawn) */
    long best;             /* index into pts of the winner, -1 when none */
} an_panel;

typedef struct an_figure {
    const dctk_result_table *t;
    dctk_row_counts counts; /* every row by status; only kept and rejected ones are plotted */
    const dctk_analyze_opts *o;
    size_t *canon; /* per row, the row of its canonical index (dctk_result_table_canonical): what the page shows */
    an_panel p[AN_PANELS];
    double w, h;
} an_figure;

void an_draw(cairo_t *cr, void *fig); /* fig_draw_fn for an_figure */
/* The whole self-contained page: the SVG inline, the points as JSON, the hover script. */
dctk_status an_html(const an_figure *f, const dctk_buf *svg, dctk_buf *out);

#endif
