/* The representative sample: an evenly spaced stride sample along the
 * leading dimension (numpy.linspace(0, n-1, k) rounded), trailing dimensions
 * whole, k as large as the size limit allows; and the statistics that
 * parameterise the filters of the codec space. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dctk/dataset.h"
#include "dctk/eval.h"

size_t dctk_sample_index(size_t i, size_t count, size_t n) {
    if (count <= 1 || n <= 1) return 0;
    /* numpy computes start + i*step in double, then rounds half to even */
    double step = (double)(n - 1) / (double)(count - 1);
    return (size_t)nearbyint((double)i * step);
}

dctk_status dctk_sample_plan_for(dctk_dtype t, int ndim, const size_t *shape, uint64_t limit, dctk_sample_plan *plan) {
    memset(plan, 0, sizeof *plan);
    size_t es = dctk_dtype_size(t);
    if (ndim < 1) return DCTK_FAIL(DCTK_ERR_UNSUPPORTED, "scalar variables have nothing to sample");
    for (int d = 0; d < ndim; d++) {
        if (shape[d] == 0) return DCTK_FAIL(DCTK_ERR_FORMAT, "dimension %d has length zero: nothing to compress", d);
        plan->shape[d] = shape[d];
    }
    /* the first dimension whose slices (everything after it) fit the limit */
    int d = 0;
    double slice = (double)es;
    for (int k = 1; k < ndim; k++) slice *= (double)shape[k];
    while (d < ndim - 1 && slice > (double)limit) {
        plan->shape[d] = 1;
        d++;
        slice /= (double)shape[d];
    }
    double fit = floor((double)limit / slice);
    size_t k = fit < 1 ? 1 : (fit >= (double)shape[d] ? shape[d] : (size_t)fit);
    plan->dim = d;
    plan->count = k;
    plan->shape[d] = k;
    plan->nbytes = (uint64_t)(slice * (double)k);
    return DCTK_OK;
}

dctk_status dctk_sample_read(dctk_dataset *ds, size_t v, const dctk_sample_plan *plan, void *out) {
    const dctk_var *var = dctk_dataset_var(ds, v);
    size_t start[DCTK_MAX_DIMS] = {0}, count[DCTK_MAX_DIMS];
    size_t slab = dctk_dtype_size(var->dtype);
    for (int d = 0; d < var->ndim; d++) {
        count[d] = d <= plan->dim ? 1 : var->shape[d];
        if (d > plan->dim) slab *= var->shape[d];
    }
    for (size_t i = 0; i < plan->count; i++) {
        start[plan->dim] = dctk_sample_index(i, plan->count, var->shape[plan->dim]);
        DCTK_TRY(dctk_dataset_read(ds, v, start, count, (char *)out + i * slab));
    }
    return DCTK_OK;
}

/* Order-preserving key of |x| for x finite: the bits of a non-negative double
 * compare like the values. */
static uint64_t abs_key(double x) {
    double a = fabs(x);
    uint64_t u;
    memcpy(&u, &a, sizeof u);
    return u;
}

/* The r-th smallest |x| (0-based) over finite values, by radix selection on
 * 16-bit digits: four passes with a 65536-bin histogram, no copy of the data. */
static double abs_order_stat(dctk_dtype t, const void *data, size_t n, size_t r) {
    uint32_t *hist = malloc(sizeof(uint32_t) * 65536);
    if (!hist) return NAN;
    uint64_t prefix = 0, mask = 0;
    for (int shift = 48; shift >= 0; shift -= 16) {
        memset(hist, 0, sizeof(uint32_t) * 65536);
        for (size_t i = 0; i < n; i++) {
            double x = dctk_load_f64(t, data, i);
            if (!isfinite(x)) continue;
            uint64_t k = abs_key(x);
            if ((k & mask) == prefix) hist[(k >> shift) & 0xffff]++;
        }
        size_t b = 0;
        while (r >= hist[b]) r -= hist[b++];
        prefix |= (uint64_t)b << shift;
        mask |= (uint64_t)0xffff << shift;
    }
    free(hist);
    double v;
    memcpy(&v, &prefix, sizeof v);
    return v;
}

/* numpy's default quantile of |x| over the nfinite finite values: linear
 * interpolation at position q*(nfinite-1). */
static double abs_quantile(dctk_dtype t, const void *data, size_t n, size_t nfinite, double q) {
    double pos = q * (double)(nfinite - 1);
    size_t lo = (size_t)floor(pos);
    double a = abs_order_stat(t, data, n, lo);
    double b = lo + 1 < nfinite ? abs_order_stat(t, data, n, lo + 1) : a;
    double f = pos - (double)lo; /* numpy's _lerp, which takes the far end for f >= 0.5 */
    return f >= 0.5 ? b - (b - a) * (1 - f) : a + (b - a) * f;
}

void dctk_sample_stats_of(dctk_dtype t, const void *data, size_t n, dctk_sample_stats *st) {
    memset(st, 0, sizeof *st);
    st->n = n;
    double sum = 0, mn = INFINITY, mx = -INFINITY;
    for (size_t i = 0; i < n; i++) {
        double x = dctk_load_f64(t, data, i);
        if (isnan(x)) st->nnan++;
        if (!isfinite(x)) continue;
        st->nfinite++;
        sum += x;
        mn = x < mn ? x : mn;
        mx = x > mx ? x : mx;
    }
    if (st->nfinite == 0) {
        st->mean = st->std = st->min = st->max = st->absq01 = st->absq99 = NAN;
        return;
    }
    st->mean = sum / (double)st->nfinite;
    double ss = 0;
    for (size_t i = 0; i < n; i++) {
        double x = dctk_load_f64(t, data, i);
        if (isfinite(x)) ss += (x - st->mean) * (x - st->mean);
    }
    st->std = sqrt(ss / (double)st->nfinite);
    st->min = mn;
    st->max = mx;
    st->absq01 = abs_quantile(t, data, n, st->nfinite, 0.01);
    st->absq99 = abs_quantile(t, data, n, st->nfinite, 0.99);
}
