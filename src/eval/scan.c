/* The full-field scan: one pass over the whole field, block by block, in
 * memory bounded by the block size. It finds what a sample cannot: the
 * field's finite range and moments (filters fitted to the range must cover
 * every value, not only the sampled ones), NaN/Inf counts, whether the field
 * is constant (then no sweep is needed), the time steps and levels on which
 * the field varies (the only ones worth sampling), and the horizontal tiles
 * that hold data (an all-land tile of an ocean field says nothing).
 *
 * Blocks are a whole number of production chunks, so a block never splits a
 * horizontal tile. Moments are combined block by block with Chan et al.'s
 * pairwise update, which stays accurate where a running sum of squares would
 * cancel. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dctk/chunking.h"
#include "dctk/dataset.h"
#include "dctk/eval.h"

typedef struct {
    const dctk_var *var;
    const dctk_dim_kind *kind;
    const size_t *chunk;
    double *lo[DCTK_MAX_DIMS], *hi[DCTK_MAX_DIMS]; /* per index of time-like and vertical dims */
    size_t tile_stride[DCTK_MAX_DIMS];             /* tile id = sum (i / chunk) * stride over horizontal dims */
    double count, mean, m2;                        /* Chan's running moments of the finite values */
} scan_ctx;

void dctk_field_scan_free(dctk_field_scan *s) {
    if (!s) return;
    for (int d = 0; d < DCTK_MAX_DIMS; d++) dctk_free(s->varies[d]);
    dctk_free(s->tile_finite);
    memset(s->varies, 0, sizeof s->varies);
    s->tile_finite = NULL;
}

static bool thinned(dctk_dim_kind k) { return k == DCTK_DIM_TIME || k == DCTK_DIM_VERTICAL; }

static dctk_status scan_alloc(scan_ctx *c, dctk_field_scan *s) {
    const dctk_var *v = c->var;
    s->ntiles = 1;
    for (int d = v->ndim - 1; d >= 0; d--) {
        if (thinned(c->kind[d])) {
            c->lo[d] = dctk_malloc(v->shape[d] * sizeof(double));
            c->hi[d] = dctk_malloc(v->shape[d] * sizeof(double));
            s->varies[d] = dctk_calloc(v->shape[d], 1);
            if (!c->lo[d] || !c->hi[d] || !s->varies[d]) return DCTK_FAIL(DCTK_ERR_NOMEM, "out of memory for the scan");
            for (size_t i = 0; i < v->shape[d]; i++) {
                c->lo[d][i] = INFINITY;
                c->hi[d][i] = -INFINITY;
            }
        } else if (c->kind[d] == DCTK_DIM_HORIZONTAL) {
            c->tile_stride[d] = s->ntiles;
            s->ntiles *= (v->shape[d] + c->chunk[d] - 1) / c->chunk[d];
        }
    }
    s->tile_finite = dctk_calloc(s->ntiles, 1);
    return s->tile_finite ? DCTK_OK : DCTK_FAIL(DCTK_ERR_NOMEM, "out of memory for the scan");
}

/* One block [start, start+count), read into buf. */
static void scan_block(scan_ctx *c, dctk_field_scan *s, const size_t *start, const size_t *count, const void *buf) {
    const dctk_var *v = c->var;
    size_t n = dctk_shape_nelems(v->ndim, count), idx[DCTK_MAX_DIMS] = {0};
    double bsum = 0, bn = 0;
    for (size_t i = 0; i < n; i++) {
        double x = dctk_load_f64(v->dtype, buf, i);
        if (isnan(x)) s->nnan++;
        else if (!isfinite(x)) s->ninf++;
        else {
            bsum += x;
            bn++;
            s->min = x < s->min ? x : s->min;
            s->max = x > s->max ? x : s->max;
            size_t tile = 0;
            for (int d = 0; d < v->ndim; d++) {
                size_t g = start[d] + idx[d];
                if (c->lo[d]) {
                    if (x < c->lo[d][g]) c->lo[d][g] = x;
                    if (x > c->hi[d][g]) c->hi[d][g] = x;
                } else if (c->kind[d] == DCTK_DIM_HORIZONTAL) tile += g / c->chunk[d] * c->tile_stride[d];
            }
            s->tile_finite[tile] = 1;
        }
        for (int d = v->ndim - 1; d >= 0 && ++idx[d] == count[d]; d--) idx[d] = 0;
    }
    if (bn == 0) return;
    double bmean = bsum / bn, bm2 = 0;
    for (size_t i = 0; i < n; i++) {
        double x = dctk_load_f64(v->dtype, buf, i);
        if (isfinite(x)) bm2 += (x - bmean) * (x - bmean);
    }
    double tot = c->count + bn, delta = bmean - c->mean;
    c->mean += delta * bn / tot;
    c->m2 += bm2 + delta * delta * c->count * bn / tot;
    c->count = tot;
}

static void scan_finish(scan_ctx *c, dctk_field_scan *s) {
    const dctk_var *v = c->var;
    s->nfinite = (size_t)c->count;
    s->constant = s->nfinite == 0 || s->min == s->max;
    if (s->nfinite == 0) s->min = s->max = s->mean = s->std = NAN;
    else {
        s->mean = c->mean;
        s->std = sqrt(c->m2 / c->count); /* population std, as the sample statistics */
    }
    for (int d = 0; d < v->ndim; d++)
        for (size_t i = 0; c->lo[d] && i < v->shape[d]; i++) s->varies[d][i] = c->hi[d][i] > c->lo[d][i];
}

dctk_status dctk_field_scan_run(dctk_dataset *ds, size_t v, const dctk_dim_kind *kind, const size_t *chunk,
                                uint64_t block_bytes, dctk_field_scan *s) {
    const dctk_var *var = dctk_dataset_var(ds, v);
    memset(s, 0, sizeof *s);
    s->min = INFINITY;
    s->max = -INFINITY;
    s->n = dctk_shape_nelems(var->ndim, var->shape);
    scan_ctx c = {.var = var, .kind = kind, .chunk = chunk};
    size_t block[DCTK_MAX_DIMS], grid[DCTK_MAX_DIMS], nblocks = 1;
    dctk_shard_shape_for(var->dtype, var->ndim, var->shape, chunk, block_bytes, block);
    for (int d = 0; d < var->ndim; d++) {
        grid[d] = (var->shape[d] + block[d] - 1) / block[d];
        nblocks *= grid[d];
    }
    size_t es = dctk_dtype_size(var->dtype);
    void *buf = dctk_malloc(dctk_shape_nelems(var->ndim, block) * es);
    dctk_status st = buf ? scan_alloc(&c, s) : DCTK_FAIL(DCTK_ERR_NOMEM, "out of memory for a scan block");
    for (size_t k = 0; k < nblocks && st == DCTK_OK; k++) {
        size_t start[DCTK_MAX_DIMS], count[DCTK_MAX_DIMS];
        dctk_block_at(var->ndim, var->shape, block, grid, k, start, count);
        st = dctk_dataset_read(ds, v, start, count, buf);
        if (st == DCTK_OK) scan_block(&c, s, start, count, buf);
    }
    if (st == DCTK_OK) scan_finish(&c, s);
    for (int d = 0; d < DCTK_MAX_DIMS; d++) {
        dctk_free(c.lo[d]);
        dctk_free(c.hi[d]);
    }
    dctk_free(buf);
    if (st != DCTK_OK) {
        dctk_field_scan_free(s);
        dctk_prefix_detail("variable '%s': scanning the field: ", var->name);
    }
    return st;
}
