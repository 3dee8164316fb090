/* The gradient metric's neighbour pairs across inner-chunk borders. A stage
 * is measured chunk by chunk, and the plane metrics of a chunk see only the
 * pairs inside it; the Python tool differences the whole decoded sample, so
 * a pair that straddles two chunks counts there too. Each chunk leaves here
 * its decoded values next to a border; once every chunk of the sample is
 * decoded, each such pair is added with the sample's own values. Only the
 * values on a border are kept: two slices per border of each gradient axis. */
#include <string.h>

#include "dctk/alloc.h"
#include "dctk/array.h"
#include "eval/borders.h"

static size_t extent(const size_t *shape, const size_t *chunk, int d) {
    return chunk[d] && chunk[d] < shape[d] ? chunk[d] : shape[d];
}

/* The gradient axes of a sample and, for each, its borders and the values
 * on one side of one border. */
static int axes(int ndim, const size_t *shape, const size_t *chunk, int ax[2], size_t nb[2], size_t across[2]) {
    int nax = ndim >= 2 ? 2 : ndim;
    size_t n = dctk_shape_nelems(ndim, shape);
    for (int k = 0; k < nax; k++) {
        ax[k] = ndim - 1 - k;
        size_t c = extent(shape, chunk, ax[k]);
        nb[k] = c ? (shape[ax[k]] + c - 1) / c - 1 : 0;
        across[k] = shape[ax[k]] ? n / shape[ax[k]] : 0;
    }
    return nax;
}

uint64_t dctk_borders_bytes(dctk_dtype t, int ndim, const size_t *shape, const size_t *chunk) {
    int ax[2];
    size_t nb[2], across[2];
    uint64_t bytes = 0;
    for (int k = 0, nax = axes(ndim, shape, chunk, ax, nb, across); k < nax; k++)
        bytes += (uint64_t)nb[k] * 2 * across[k] * dctk_dtype_size(t);
    return bytes;
}

dctk_status dctk_borders_init(dctk_borders *b, dctk_dtype t, int ndim, const size_t *shape, const size_t *chunk) {
    memset(b, 0, sizeof *b);
    b->t = t;
    b->ndim = ndim;
    memcpy(b->shape, shape, sizeof(size_t) * (size_t)ndim);
    memcpy(b->chunk, chunk, sizeof(size_t) * (size_t)ndim);
    b->nax = axes(ndim, shape, chunk, b->ax, b->nb, b->across);
    for (int k = 0; k < b->nax; k++) {
        size_t n = b->nb[k] * 2 * b->across[k];
        if (n && !(b->y[k] = dctk_calloc(n, dctk_dtype_size(t)))) {
            dctk_borders_free(b);
            return DCTK_FAIL(DCTK_ERR_NOMEM, "out of memory for the values next to the chunk borders (%zu)", n);
        }
    }
    return DCTK_OK;
}

void dctk_borders_free(dctk_borders *b) {
    if (!b) return;
    for (int k = 0; k < 2; k++) dctk_free(b->y[k]);
    memset(b->y, 0, sizeof b->y);
}

/* Step idx over the region count, axis a left out, in C order. */
static void next(int ndim, int a, const size_t *count, size_t *idx) {
    for (int d = ndim - 1; d >= 0; d--) {
        if (d == a) continue;
        if (++idx[d] < count[d]) return;
        idx[d] = 0;
    }
}

static size_t others(int ndim, int a, const size_t *count) {
    size_t n = 1;
    for (int d = 0; d < ndim; d++) n *= d == a ? 1 : count[d];
    return n;
}

/* The chunk's slice at index `local` of axis ax[k], into side `side` of border `border`. */
static void keep_side(dctk_borders *b, int k, const size_t *cshape, const size_t *start, const size_t *count,
                      size_t local, size_t border, int side, const uint8_t *y) {
    int a = b->ax[k];
    size_t es = dctk_dtype_size(b->t), idx[DCTK_MAX_DIMS] = {0};
    uint8_t *dst = b->y[k] + (border * 2 + (size_t)side) * b->across[k] * es;
    for (size_t r = 0, n = others(b->ndim, a, count); r < n; r++, next(b->ndim, a, count, idx)) {
        size_t co = 0, p = 0;
        for (int d = 0; d < b->ndim; d++) {
            co = co * cshape[d] + (d == a ? local : idx[d]);
            if (d != a) p = p * b->shape[d] + start[d] + idx[d];
        }
        memcpy(dst + p * es, y + co * es, es);
    }
}

void dctk_borders_keep(dctk_borders *b, const size_t *cshape, const size_t *start, const size_t *count, const void *y) {
    for (int k = 0; k < b->nax; k++) {
        int a = b->ax[k];
        size_t c = extent(b->shape, b->chunk, a);
        if (!b->nb[k] || !c || !count[a]) continue;
        if (start[a] > 0) keep_side(b, k, cshape, start, count, 0, start[a] / c - 1, 1, y);
        if (start[a] + count[a] < b->shape[a]) keep_side(b, k, cshape, start, count, count[a] - 1, start[a] / c, 0, y);
    }
}

void dctk_borders_pair(const dctk_borders *b, const void *x, dctk_norms *acc) {
    for (int k = 0; k < b->nax; k++) {
        int a = b->ax[k];
        size_t c = extent(b->shape, b->chunk, a), stride = 1;
        for (int d = a + 1; d < b->ndim; d++) stride *= b->shape[d];
        for (size_t bi = 0; bi < b->nb[k]; bi++) {
            size_t last = (bi + 1) * c - 1, idx[DCTK_MAX_DIMS] = {0};
            const uint8_t *y0 = b->y[k] + bi * 2 * b->across[k] * dctk_dtype_size(b->t);
            const uint8_t *y1 = y0 + b->across[k] * dctk_dtype_size(b->t);
            for (size_t p = 0; p < b->across[k]; p++, next(b->ndim, a, b->shape, idx)) {
                size_t base = 0;
                for (int d = 0; d < b->ndim; d++) base = base * b->shape[d] + (d == a ? last : idx[d]);
                dctk_norms_grad_pair(acc, dctk_load_f64(b->t, x, base), dctk_load_f64(b->t, x, base + stride),
                                     dctk_load_f64(b->t, y0, p), dctk_load_f64(b->t, y1, p));
            }
        }
    }
}
