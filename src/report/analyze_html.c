/* The analyze_clustering page: one HTML file that works offline.
 *
 * It holds the cairo SVG inline (the same picture as the PNG), the laid-out
 * points and their combos as JSON, and a short script: on mouse move it finds
 * the nearest drawn point within 6 points (the last drawn wins, as on
 * screen) and shows its pipeline by its readable name, its indices and
 * metrics. The Pareto front is a plain table, readable without the script.
 * Nothing is loaded from the network. The JSON is written with "/" escaped,
 * so no string in it can close the script element. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "core/json_num.h"
#include "dctk/eval.h"
#include "report/analyze_internal.h"

/* The gates a row failed, from its pass columns. */
static void failed_gates(const dctk_result_row *r, char *buf, size_t cap) {
    dctk_gates none = dctk_gates_none();
    dctk_combo_result c = {.pearson = r->pearson, .ssim = r->ssim, .pass_l1 = r->pass_l1, .pass_l2 = r->pass_l2,
                           .pass_linf = r->pass_linf, .pass_bias = r->pass_bias, .pass_phys = r->pass_phys,
                           .pass_extremes = r->pass_extremes, .pass_gradient = r->pass_gradient,
                           .pass_abs = r->pass_abs, .pass_rel = r->pass_rel, .pass_mean_abs = r->pass_mean_abs,
                           .pass_mean_rel = r->pass_mean_rel};
    dctk_combo_failed_gates(&c, &none, buf, cap);
}

static json_t *row_json(const dctk_result_row *r) {
    json_t *(*num)(double) = dctk_json_real_or_null; /* non-finite measurements are null */
    char failed[128];
    failed_gates(r, failed, sizeof failed);
    json_t *j = json_pack("[I,I,I,s,s,s,o,o,o,o,b,s]", (json_int_t)r->comp_idx, (json_int_t)r->filt_idx,
                          (json_int_t)r->ser_idx, r->compressor ? r->compressor : "", r->filter ? r->filter : "",
                          r->serializer ? r->serializer : "", num(r->ratio), num(r->l1_rel), num(r->l2_rel),
                          num(r->linf_rel), r->keep, r->error ? r->error : "");
    /* 12..16: the readable name, the gates it failed, bias, Pearson, SSIM */
    json_array_append_new(j, json_string(r->name ? r->name : ""));
    json_array_append_new(j, json_string(failed));
    json_array_append_new(j, num(r->bias_rel));
    json_array_append_new(j, num(r->pearson));
    json_array_append_new(j, num(r->ssim));
    json_array_append_new(j, json_string(dctk_row_status_name(dctk_row_status_of(r->keep, r->error)))); /* 17 */
    return j;
}

/* A point's row as the page names it: its canonical twin (the same pipeline, the lowest comp_idx). */
static json_int_t shown_row(const an_figure *f, size_t row) { return (json_int_t)f->canon[row]; }

static json_t *panel_json(const an_figure *f, const an_panel *p) {
    json_t *pts = json_array();
    for (size_t j = 0; j < p->npts; j++) {
        const an_point *q = &p->pts[j];
        /* rounded to 0.01 pt: plenty for hit testing, and a third of the size */
        json_array_append_new(pts, json_pack("[f,f,I,i,b]", round(q->px * 100) / 100, round(q->py * 100) / 100,
                                             shown_row(f, q->row), q->cluster, q->pareto));
    }
    json_t *front = json_array();
    for (size_t j = 0; j < p->nfront; j++) json_array_append_new(front, json_integer(shown_row(f, p->pts[p->front[j]].row)));
    json_int_t best = p->best >= 0 ? shown_row(f, p->pts[p->best].row) : -1;
    /* the axes as drawn, and the bound's line (null: none): what the figure shows, for readers of the page */
    const plot_axes *a = &p->ax;
    bool line = isfinite(p->bound) && (p->bound > 0 || !a->ylog);
    json_t *axes = json_pack("{s:f,s:f,s:f,s:f,s:f,s:f,s:b}", "x", a->x, "y", a->y, "w", a->w, "h", a->h, "ymin",
                             a->ymin, "ymax", a->ymax, "ylog", a->ylog);
    return json_pack("{s:s,s:i,s:o,s:o,s:I,s:o,s:o,s:o}", "label", p->label, "k", p->k, "pts", pts, "front", front,
                     "best", best, "axes", axes, "bound", dctk_json_real_or_null(line ? p->bound : NAN), "bound_py",
                     dctk_json_real_or_null(line ? round(axes_py(a, p->bound) * 100) / 100 : NAN));
}

static char *data_json(const an_figure *f) {
    json_t *rows = json_array(), *panels = json_array();
    /* a twin row reads as its canonical one: one candidate, one set of indices */
    for (size_t i = 0; i < f->t->n; i++) json_array_append_new(rows, row_json(&f->t->rows[f->canon[i]]));
    for (int i = 0; i < AN_PANELS; i++) json_array_append_new(panels, panel_json(f, &f->p[i]));
    json_t *d = json_pack("{s:s,s:f,s:f,s:o,s:o,s:o}", "var", f->o->var ? f->o->var : "", "w", f->w, "h", f->h,
                          "threshold", dctk_json_real_or_null(f->o->threshold), "panels", panels, "rows", rows);
    char *s = d ? json_dumps(d, JSON_COMPACT | JSON_ESCAPE_SLASH) : NULL;
    json_decref(d);
    return s;
}

static dctk_status put(dctk_buf *b, const char *s) { return dctk_buf_append(b, s, strlen(s)); }

static dctk_status put_escaped(dctk_buf *b, const char *s) {
    for (; *s; s++) {
        const char *e = *s == '<' ? "&lt;" : *s == '>' ? "&gt;" : *s == '&' ? "&amp;" : *s == '"' ? "&quot;" : NULL;
        DCTK_TRY(e ? put(b, e) : dctk_buf_append(b, s, 1));
    }
    return DCTK_OK;
}

static const char STYLE[] =
    "<style>\n"
    "body{font-family:sans-serif;margin:16px;color:#222}\n"
    "#fig{position:relative;max-width:1290px}\n"
    "#fig svg{display:block;width:100%;height:auto}\n"
    "#ring{position:absolute;width:12px;height:12px;border:2px solid #d00;border-radius:50%;pointer-events:none}\n"
    "#tip{position:fixed;max-width:560px;background:#fffff4;border:1px solid #888;border-radius:4px;padding:6px 8px;"
    "font-size:12px;box-shadow:2px 2px 6px rgba(0,0,0,.25);pointer-events:none;z-index:2}\n"
    "#tip b{display:block;font-family:monospace;margin-bottom:2px}\n"
    "#tip .idx{color:#666;font-size:11px;margin-bottom:4px}\n"
    "table{border-collapse:collapse;font-size:12px;margin-top:12px}\n"
    "td,th{border:1px solid #ccc;padding:2px 6px;text-align:left;vertical-align:top}\n"
    "td code{word-break:break-word}\n"
    "td.num{text-align:right;font-variant-numeric:tabular-nums}\n"
    "tr.best td{background:#fde8e8}\n"
    "</style>\n";

/* The hover script. Points are [x, y, row, cluster, pareto] in figure points;
 * rows are [comp, filt, ser, compressor, filter, serializer, ratio, l1, l2,
 * linf, keep, error, name, failed gates, bias, pearson, ssim, status]. Text goes in with textContent, never as
 * markup. */
static const char SCRIPT[] =
    "<script>\n"
    "(function () {\n"
    "  'use strict'\n"
    "  var data = JSON.parse(document.getElementById('dctk-data').textContent)\n"
    "  var fig = document.getElementById('fig'), svg = fig.querySelector('svg')\n"
    "  var tip = document.getElementById('tip'), ring = document.getElementById('ring')\n"
    "  function fmt (v) { return v === null ? 'n/a' : Number(v).toPrecision(4) }\n"
    "  function add (el, tag, text) { var e = document.createElement(tag); e.textContent = text; el.appendChild(e); return e }\n"
    "  function nearest (x, y) {\n"
    "    var best = null, bd = 36\n"
    "    data.panels.forEach(function (p, pi) {\n"
    "      p.pts.forEach(function (q) {\n"
    "        var d = (q[0] - x) * (q[0] - x) + (q[1] - y) * (q[1] - y)\n"
    "        if (d <= bd) { bd = d; best = { panel: pi, q: q } }\n"
    "      })\n"
    "    })\n"
    "    return best\n"
    "  }\n"
    "  function describe (hit) {\n"
    "    var r = data.rows[hit.q[2]], p = data.panels[hit.panel]\n"
    "    tip.textContent = ''\n"
    "    add(tip, 'b', (r[12] || 'unnamed combo') + (p.best === hit.q[2] ? '  (best combo)' : ''))\n"
    "    add(tip, 'div', 'compressor | filter | serializer (- for none); indices ' + r[0] + ' ' + r[1] + ' ' + r[2] +\n"
    "      ' for compress_with_optimal').className = 'idx'\n"
    "    add(tip, 'div', 'ratio ' + fmt(r[6]) + ', L1 ' + fmt(r[7]) + ', L2 ' + fmt(r[8]) + ', Linf ' + fmt(r[9]))\n"
    "    add(tip, 'div', 'bias ' + fmt(r[14]) + ', Pearson ' + fmt(r[15]) + ', SSIM ' + fmt(r[16]))\n"
    "    if (r[13]) add(tip, 'div', 'failed gates: ' + r[13].split(',').join(', '))\n"
    "    add(tip, 'div', (r[10] ? 'kept, cluster ' + (hit.q[3] + 1) + ' of ' + p.k : r[17]) +\n"
    "      (hit.q[4] ? ', on the Pareto front of ' + p.label : '') + (r[11] ? ' (' + r[11] + ')' : ''))\n"
    "  }\n"
    "  function hide () { tip.hidden = true; ring.hidden = true }\n"
    "  fig.addEventListener('mousemove', function (ev) {\n"
    "    var b = svg.getBoundingClientRect(), s = b.width / data.w\n"
    "    var hit = nearest((ev.clientX - b.left) / s, (ev.clientY - b.top) / s)\n"
    "    if (!hit) return hide()\n"
    "    describe(hit)\n"
    "    ring.style.left = (hit.q[0] * s - 8) + 'px'; ring.style.top = (hit.q[1] * s - 8) + 'px'\n"
    "    tip.style.left = Math.min(ev.clientX + 14, window.innerWidth - 580) + 'px'\n"
    "    tip.style.top = (ev.clientY + 14) + 'px'\n"
    "    tip.hidden = false; ring.hidden = false\n"
    "  })\n"
    "  fig.addEventListener('mouseleave', hide)\n"
    "})()\n"
    "</script>\n";

/* One row of the front table: the pipeline by name, ratio, L1, and the
 * indices compress_with_optimal takes. */
static dctk_status put_front_row(const dctk_result_row *r, bool best, dctk_buf *b) {
    char num[160];
    DCTK_TRY(put(b, best ? "<tr class=\"best\"><td><code>" : "<tr><td><code>"));
    DCTK_TRY(put_escaped(b, r->name && r->name[0] ? r->name : "?"));
    snprintf(num, sizeof num, "</code>%s</td><td class=\"num\">%.4g</td><td class=\"num\">%.3e</td>",
             best ? " (best combo)" : "", r->ratio, r->l1_rel);
    DCTK_TRY(put(b, num));
    snprintf(num, sizeof num, "<td class=\"num\">%lld %lld %lld</td></tr>\n", (long long)r->comp_idx,
             (long long)r->filt_idx, (long long)r->ser_idx);
    return put(b, num);
}

/* The Pareto front of the L1 panel as a table in the page itself (readable
 * without the script), best ratio first; twin rows once, under the canonical
 * index. */
static dctk_status put_front(const an_figure *f, dctk_buf *b) {
    const an_panel *p = &f->p[0];
    DCTK_TRY(put(b, "<h3>Pareto front of ratio against relative L1 error</h3>\n<table id=\"front\"><thead><tr>"
                    "<th>pipeline (compressor | filter | serializer)</th><th>ratio</th><th>relative L1</th>"
                    "<th>indices for compress_with_optimal</th></tr></thead><tbody>\n"));
    for (size_t j = 0; j < p->nfront; j++) {
        size_t row = f->canon[p->pts[p->front[j]].row];
        bool seen = false, best = p->best >= 0 && f->canon[p->pts[p->best].row] == row;
        for (size_t e = 0; e < j && !seen; e++) seen = f->canon[p->pts[p->front[e]].row] == row;
        if (!seen) DCTK_TRY(put_front_row(&f->t->rows[row], best, b));
    }
    return put(b, "</tbody></table>\n");
}

/* The rows by status in words, and what the figure leaves out (the SVG's text is glyphs). */
static dctk_status put_counts(const an_figure *f, dctk_buf *b) {
    char counts[200], line[400];
    const size_t *n = f->counts.n;
    dctk_row_counts_str(&f->counts, counts, sizeof counts);
    snprintf(line, sizeof line, "<p id=\"counts\">%zu combos: %s.%s</p>\n", f->t->n, counts,
             n[DCTK_ROW_PRUNED] + n[DCTK_ROW_LEFT_OUT] + n[DCTK_ROW_FAILED]
                 ? " Only kept and rejected combos are drawn: the others were not measured on the whole sample "
                   "(pruned ones on a part of it, their rows in the results say why)."
                 : "");
    return put(b, line);
}

static dctk_status put_body(const an_figure *f, const dctk_buf *svg, const char *json, dctk_buf *b) {
    const char *v = f->o->var ? f->o->var : "";
    const uint8_t *start = svg->data, *end = svg->data + svg->size;
    while (start + 4 <= end && memcmp(start, "<svg", 4) != 0) start++; /* drop the XML declaration */
    DCTK_TRY(put(b, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>dc_toolkit: combos of "));
    DCTK_TRY(put_escaped(b, v));
    DCTK_TRY(put(b, "</title>\n"));
    DCTK_TRY(put(b, STYLE));
    DCTK_TRY(put(b, "</head>\n<body>\n<p>Hover a point to see its combo. Written by dc_toolkit analyze_clustering "
                    "from the sweep results of <b>"));
    DCTK_TRY(put_escaped(b, v));
    DCTK_TRY(put(b, "</b>.</p>\n"));
    DCTK_TRY(put_counts(f, b));
    DCTK_TRY(put(b, "<div id=\"fig\">\n"));
    DCTK_TRY(dctk_buf_append(b, start, (size_t)(end - start)));
    DCTK_TRY(put(b, "<div id=\"ring\" hidden></div>\n</div>\n<div id=\"tip\" role=\"tooltip\" hidden></div>\n"));
    DCTK_TRY(put_front(f, b));
    DCTK_TRY(put(b, "<script type=\"application/json\" id=\"dctk-data\">"));
    DCTK_TRY(put(b, json));
    DCTK_TRY(put(b, "</script>\n"));
    DCTK_TRY(put(b, SCRIPT));
    return put(b, "</body>\n</html>\n");
}

dctk_status an_html(const an_figure *f, const dctk_buf *svg, dctk_buf *out) {
    char *json = data_json(f);
    if (!json) return DCTK_FAIL(DCTK_ERR_NOMEM, "analyze_clustering: cannot build the page data");
    out->size = 0;
    dctk_status st = put_body(f, svg, json, out);
    free(json);
    return st;
}
