/* Error norms and the selection metrics, accumulated in double precision
 * chunk by chunk: no decoded copy of the sample is ever held.
 *
 * Point metrics (one pass over each run of values): the relative norms, the
 * largest pointwise relative error |y - x| / |x| (a zero given back as
 * anything else: +inf), the sums the mean absolute error is made of and the
 * count of zeros not given back zero (the mean relative error is +inf then),
 * bias, Pearson correlation (sums of x - shift and y - shift, so that a field
 * far from zero, temperatures in K, keeps its precision), the fraction of
 * points whose relative error exceeds 1e-4, the error on the extremes and the
 * physical bounds.
 *
 * Plane metrics (one pass over each 2-D plane of the two last dimensions of a
 * chunk): SSIM (Wang, Bovik, Sheikh, Simoncelli 2004, "Image quality
 * assessment: from error visibility to structural similarity") with a 7x7
 * uniform window, population (co)variances, C1 = (0.01 L)^2, C2 = (0.03 L)^2
 * and L the sample's range, averaged over every window that lies inside a
 * plane of a chunk and holds no masked point; and the relative L1 error of the
 * differences between neighbouring points along both plane dimensions.
 * Windows and differences do not cross chunk borders: the sweep sees one chunk
 * at a time, as the writer does. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dctk/alloc.h"
#include "dctk/eval.h"
#include "dctk/util.h"

#define REL_ERR_LIMIT 1e-4 /* the fraction counts |y - x| > 1e-4 |x| (Baker et al.) */
#define SSIM_WIN 7

dctk_metric_cfg dctk_metric_cfg_of(const dctk_sample_stats *st) {
    bool ok = st && st->nfinite > 0;
    return (dctk_metric_cfg){
        .shift = ok ? st->mean : 0,
        .range = ok ? st->max - st->min : 0,
        .extremes_cut = ok ? st->absq99 : INFINITY,
        .phys_min = NAN,
        .phys_max = NAN,
    };
}

/* One pass over the points: the norms, then EXTRA (with xv, yv, ax = |x|,
 * d = y - x and e = |d| in scope) for the metrics that need a config. One
 * type-specialised loop per element type keeps the inner loop free of a
 * switch. */
#define POINT_LOOP(T, EXTRA)                                                           \
    do {                                                                               \
        const T *xs = x, *ys = y;                                                      \
        for (size_t i = 0; i < count; i++) {                                           \
            double xv = (double)xs[i], yv = (double)ys[i];                             \
            if (!isfinite(xv)) {                                                       \
                if (!(isnan(xv) ? isnan(yv) : xv == yv)) a->mask_lost++;               \
                continue;                                                              \
            }                                                                          \
            if (!isfinite(yv)) a->mask_gained++;                                       \
            double ax = fabs(xv), d = yv - xv, e = fabs(d); /* y NaN: e NaN, it shows */ \
            a->n++;                                                                    \
            a->sum_abs_x += ax;                                                        \
            a->sum_sq_x += xv * xv;                                                    \
            if (ax > a->max_abs_x) a->max_abs_x = ax;                                  \
            a->sum_abs_e += e;                                                         \
            a->sum_sq_e += e * e;                                                      \
            if (e > a->max_abs_e || isnan(e)) a->max_abs_e = e;                        \
            double re = ax > 0 ? e / ax : e == 0 ? 0 : e + INFINITY; /* NaN stays NaN */ \
            if (re > a->max_rel_e || isnan(re)) a->max_rel_e = re;                     \
            a->n_zero_changed += ax == 0 && !(e == 0);                                 \
            EXTRA                                                                      \
        }                                                                              \
    } while (0)

/* Without a config: the norms alone (verification of lossless writes,
 * callers that want nothing else). */
#define NORMS_LOOP(T) POINT_LOOP(T, (void)d;)

/* Every point metric beside the norms. */
#define METRICS_EXTRA                                                                  \
    a->sum_e += d;                                                                     \
    double u = xv - shift, w = yv - shift;                                             \
    a->sx += u;                                                                        \
    a->sy += w;                                                                        \
    a->sxx += u * u;                                                                   \
    a->syy += w * w;                                                                   \
    a->sxy += u * w;                                                                   \
    a->n_rel_over += !(e <= REL_ERR_LIMIT * ax);                                       \
    if (ax >= cut) {                                                                   \
        a->ext_abs_x += ax;                                                            \
        a->ext_abs_e += e;                                                             \
    }                                                                                  \
    if (phys) {                                                                        \
        if (xv < pmin || xv > pmax) a->phys_outside++;                                 \
        else a->phys_bad += !(yv >= lo && yv <= hi);                                   \
    }
#define METRICS_LOOP(T) POINT_LOOP(T, METRICS_EXTRA)

#define FOR_TYPES(LOOP)                        \
    switch (t) {                               \
    case DCTK_FLOAT32: LOOP(float); break;     \
    case DCTK_FLOAT64: LOOP(double); break;    \
    case DCTK_INT8: LOOP(int8_t); break;       \
    case DCTK_INT16: LOOP(int16_t); break;     \
    case DCTK_INT32: LOOP(int32_t); break;     \
    case DCTK_INT64: LOOP(int64_t); break;     \
    case DCTK_UINT8: LOOP(uint8_t); break;     \
    case DCTK_UINT16: LOOP(uint16_t); break;   \
    case DCTK_UINT32: LOOP(uint32_t); break;   \
    case DCTK_UINT64: LOOP(uint64_t); break;   \
    default: break;                            \
    }

/* Decoded values the same bit for bit as the source (every lossless write's
 * verification): each error is zero, so the sums of x alone remain. Four
 * partial sums (for each lane of four points) break the chain of dependent
 * additions that bounds the general loop; a lane skips what is not finite,
 * which equal bits decode unchanged. */
#define SAME_LOOP(T)                                                                   \
    do {                                                                               \
        const T *xs = x;                                                               \
        double s1[4] = {0}, s2[4] = {0}, mx[4] = {0};                                  \
        size_t nf[4] = {0};                                                            \
        for (size_t i = 0; i < count; i++) {                                           \
            double xv = (double)xs[i], ax = fabs(xv);                                  \
            size_t k = i & 3;                                                          \
            if (!isfinite(xv)) continue;                                               \
            nf[k]++;                                                                   \
            s1[k] += ax;                                                               \
            s2[k] += xv * xv;                                                          \
            if (ax > mx[k]) mx[k] = ax;                                                \
        }                                                                              \
        for (size_t k = 0; k < 4; k++) {                                               \
            a->n += nf[k];                                                             \
            a->sum_abs_x += s1[k];                                                     \
            a->sum_sq_x += s2[k];                                                      \
            if (mx[k] > a->max_abs_x) a->max_abs_x = mx[k];                            \
        }                                                                              \
    } while (0)

void dctk_norms_add(dctk_norms *a, dctk_dtype t, const void *x, const void *y, size_t count) {
    if (x == y || !memcmp(x, y, count * dctk_dtype_size(t))) FOR_TYPES(SAME_LOOP)
    else FOR_TYPES(NORMS_LOOP)
}

void dctk_metrics_add(dctk_norms *a, const dctk_metric_cfg *cfg, dctk_dtype t, const void *x, const void *y,
                      size_t count) {
    if (!cfg) {
        dctk_norms_add(a, t, x, y, count);
        return;
    }
    double shift = cfg->shift, cut = cfg->extremes_cut;
    bool phys = !isnan(cfg->phys_min) || !isnan(cfg->phys_max);
    double pmin = isnan(cfg->phys_min) ? -INFINITY : cfg->phys_min;
    double pmax = isnan(cfg->phys_max) ? INFINITY : cfg->phys_max;
    double slack = cfg->phys_tol * cfg->range;
    double lo = pmin - slack, hi = pmax + slack;
    FOR_TYPES(METRICS_LOOP)
}

static double max_nan(double a, double b) { return isnan(a) || isnan(b) ? NAN : (a > b ? a : b); }

void dctk_norms_merge(dctk_norms *a, const dctk_norms *b) {
    a->sum_abs_x += b->sum_abs_x;
    a->sum_sq_x += b->sum_sq_x;
    a->max_abs_x = a->max_abs_x > b->max_abs_x ? a->max_abs_x : b->max_abs_x;
    a->sum_abs_e += b->sum_abs_e;
    a->sum_sq_e += b->sum_sq_e;
    a->max_abs_e = max_nan(a->max_abs_e, b->max_abs_e);
    a->n += b->n;
    a->mask_lost += b->mask_lost;
    a->sum_e += b->sum_e;
    a->sx += b->sx;
    a->sy += b->sy;
    a->sxx += b->sxx;
    a->syy += b->syy;
    a->sxy += b->sxy;
    a->n_rel_over += b->n_rel_over;
    a->max_rel_e = max_nan(a->max_rel_e, b->max_rel_e);
    a->n_zero_changed += b->n_zero_changed;
    a->ext_abs_x += b->ext_abs_x;
    a->ext_abs_e += b->ext_abs_e;
    a->grad_abs_dx += b->grad_abs_dx;
    a->grad_abs_de += b->grad_abs_de;
    a->ssim_sum += b->ssim_sum;
    a->ssim_n += b->ssim_n;
    a->phys_bad += b->phys_bad;
    a->phys_outside += b->phys_outside;
    a->mask_gained += b->mask_gained;
}

/* --- plane metrics --------------------------------------------------------------- */

/* Sums over a column of the window band, per column: x, y, xx, yy, xy (of
 * shifted values) and the count of masked points. */
enum { Q_X, Q_Y, Q_XX, Q_YY, Q_XY, Q_BAD, NQ };

typedef struct {
    double *ring;   /* SSIM_WIN rows of x then y, doubles (NaN where masked) */
    double *col;    /* NQ x W */
    size_t w;
    double c1, c2, shift;
} plane_ws;

static void load_row(dctk_dtype t, const void *base, size_t off, size_t w, double shift, double *out) {
    for (size_t j = 0; j < w; j++) {
        double v = dctk_load_f64(t, base, off + j);
        out[j] = isfinite(v) ? v - shift : NAN;
    }
}

static void col_update(plane_ws *p, const double *xr, const double *yr, double sign) {
    for (size_t j = 0; j < p->w; j++) {
        bool bad = isnan(xr[j]) || isnan(yr[j]);
        double u = bad ? 0 : xr[j], v = bad ? 0 : yr[j];
        double *c = p->col;
        c[Q_X * p->w + j] += sign * u;
        c[Q_Y * p->w + j] += sign * v;
        c[Q_XX * p->w + j] += sign * u * u;
        c[Q_YY * p->w + j] += sign * v * v;
        c[Q_XY * p->w + j] += sign * u * v;
        c[Q_BAD * p->w + j] += sign * bad;
    }
}

static double window_ssim(const plane_ws *p, const double *s) {
    double k = 1.0 / (SSIM_WIN * SSIM_WIN);
    double mx = s[Q_X] * k, my = s[Q_Y] * k;
    double vx = s[Q_XX] * k - mx * mx, vy = s[Q_YY] * k - my * my, cxy = s[Q_XY] * k - mx * my;
    double ux = mx + p->shift, uy = my + p->shift; /* luminance needs the true means */
    return (2 * ux * uy + p->c1) * (2 * cxy + p->c2) / ((ux * ux + uy * uy + p->c1) * (vx + vy + p->c2));
}

/* Every window of the band whose columns are summed in p->col. */
static void band_ssim(const plane_ws *p, dctk_norms *a) {
    double s[NQ] = {0};
    for (size_t j = 0; j < p->w; j++) {
        for (int q = 0; q < NQ; q++) s[q] += p->col[q * p->w + j];
        if (j >= SSIM_WIN)
            for (int q = 0; q < NQ; q++) s[q] -= p->col[q * p->w + j - SSIM_WIN];
        if (j + 1 < SSIM_WIN || s[Q_BAD] > 0.5) continue;
        a->ssim_sum += window_ssim(p, s);
        a->ssim_n++;
    }
}

void dctk_norms_grad_pair(dctk_norms *a, double x0, double x1, double y0, double y1) {
    if (isnan(x0) || isnan(x1)) return; /* masked neighbours have no difference */
    double dx = x1 - x0;
    a->grad_abs_dx += fabs(dx);
    a->grad_abs_de += fabs((y1 - y0) - dx);
}

/* One plane of h rows of w values, rows `rs` elements apart from `off`. */
static void plane(plane_ws *p, dctk_norms *a, dctk_dtype t, const void *x, const void *y, size_t off, size_t h,
                  size_t rs) {
    size_t w = p->w;
    memset(p->col, 0, sizeof(double) * NQ * w);
    for (size_t i = 0; i < h; i++) {
        double *xr = p->ring + (i % SSIM_WIN) * 2 * w, *yr = xr + w;
        if (i >= SSIM_WIN) col_update(p, xr, yr, -1); /* row i - 7 leaves the band */
        load_row(t, x, off + i * rs, w, p->shift, xr);
        load_row(t, y, off + i * rs, w, p->shift, yr);
        for (size_t j = 0; j + 1 < w; j++) dctk_norms_grad_pair(a, xr[j], xr[j + 1], yr[j], yr[j + 1]);
        if (i > 0) {
            const double *xp = p->ring + ((i - 1) % SSIM_WIN) * 2 * w, *yp = xp + w;
            for (size_t j = 0; j < w; j++) dctk_norms_grad_pair(a, xp[j], xr[j], yp[j], yr[j]);
        }
        col_update(p, xr, yr, +1);
        if (i + 1 >= SSIM_WIN && w >= SSIM_WIN) band_ssim(p, a);
    }
}

dctk_status dctk_metrics_add_planes(dctk_norms *a, const dctk_metric_cfg *cfg, dctk_dtype t, int ndim,
                                    const size_t *chunk, const size_t *count, const void *x, const void *y) {
    if (ndim < 1) return DCTK_OK;
    size_t w = count[ndim - 1], h = ndim >= 2 ? count[ndim - 2] : 1, rs = chunk[ndim - 1];
    if (w == 0) return DCTK_OK;
    double L = cfg->range > 0 && isfinite(cfg->range) ? cfg->range : 1;
    plane_ws p = {.w = w, .c1 = (0.01 * L) * (0.01 * L), .c2 = (0.03 * L) * (0.03 * L), .shift = cfg->shift};
    p.ring = dctk_malloc(sizeof(double) * 2 * SSIM_WIN * w);
    p.col = dctk_malloc(sizeof(double) * NQ * w);
    if (!p.ring || !p.col) {
        dctk_free(p.ring);
        dctk_free(p.col);
        return DCTK_FAIL(DCTK_ERR_NOMEM, "out of memory for the plane metrics (SSIM, gradients) of rows of %zu values",
                         w);
    }
    /* planes: every index of the leading dimensions within count */
    int lead = ndim >= 2 ? ndim - 2 : 0;
    size_t idx[DCTK_MAX_DIMS] = {0}, nplanes = dctk_shape_nelems(lead, count);
    size_t pstride = ndim >= 2 ? chunk[ndim - 2] * chunk[ndim - 1] : chunk[0];
    for (size_t k = 0; k < nplanes; k++) {
        size_t po = 0;
        for (int d = 0; d < lead; d++) po = po * chunk[d] + idx[d];
        plane(&p, a, t, x, y, po * pstride, h, rs);
        for (int d = lead - 1; d >= 0 && ++idx[d] == count[d]; d--) idx[d] = 0;
    }
    dctk_free(p.ring);
    dctk_free(p.col);
    return DCTK_OK;
}

/* --- the metrics ------------------------------------------------------------------ */

static double rel(double num, double den) { return num == 0 ? 0 : num / den; }

double dctk_norms_l1(const dctk_norms *a) { return rel(a->sum_abs_e, a->sum_abs_x); }
double dctk_norms_l2(const dctk_norms *a) { return rel(sqrt(a->sum_sq_e), sqrt(a->sum_sq_x)); }
double dctk_norms_linf(const dctk_norms *a) { return rel(a->max_abs_e, a->max_abs_x); }
double dctk_norms_bias(const dctk_norms *a) { return rel(a->sum_e, a->sum_abs_x); }
double dctk_norms_mean_abs(const dctk_norms *a) { return a->n ? a->sum_abs_e / (double)a->n : 0; }
double dctk_norms_mean_rel(const dctk_norms *a) { return a->n_zero_changed ? INFINITY : dctk_norms_l1(a); }

double dctk_norms_pearson(const dctk_norms *a) {
    if (a->sum_abs_e == 0) return 1; /* y == x, constant fields included */
    double n = (double)a->n;
    double vx = n * a->sxx - a->sx * a->sx, vy = n * a->syy - a->sy * a->sy;
    double c = n * a->sxy - a->sx * a->sy;
    /* a constant side has no correlation: its variance is rounding noise of n * sum of squares */
    double eps = 1e-8;
    return vx > eps * n * a->sxx && vy > eps * n * a->syy ? c / sqrt(vx * vy) : NAN;
}

double dctk_norms_psnr(const dctk_norms *a, const dctk_metric_cfg *cfg) {
    if (a->sum_sq_e == 0) return INFINITY;
    double mse = a->sum_sq_e / (double)a->n;
    return 20 * log10(cfg->range) - 10 * log10(mse);
}

double dctk_norms_ssim(const dctk_norms *a) { return a->ssim_n ? a->ssim_sum / (double)a->ssim_n : NAN; }
double dctk_norms_rel_err_frac(const dctk_norms *a) { return a->n ? (double)a->n_rel_over / (double)a->n : 0; }
double dctk_norms_extremes(const dctk_norms *a) { return rel(a->ext_abs_e, a->ext_abs_x); }
double dctk_norms_gradient(const dctk_norms *a) { return rel(a->grad_abs_de, a->grad_abs_dx); }

void dctk_combo_set_metrics(dctk_combo_result *r, const dctk_norms *n, const dctk_metric_cfg *cfg) {
    r->bias_rel = dctk_norms_bias(n);
    r->pearson = dctk_norms_pearson(n);
    r->psnr_db = dctk_norms_psnr(n, cfg);
    r->ssim = dctk_norms_ssim(n);
    r->rel_err_frac = dctk_norms_rel_err_frac(n);
    r->extremes_rel = dctk_norms_extremes(n);
    r->gradient_rel = dctk_norms_gradient(n);
    r->phys_ok = n->phys_bad == 0;
}
