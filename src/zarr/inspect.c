/* Stored size, block walks and value summaries of an array (zarr_inspect.h).
 *
 * The summary never holds the array: it reads one block at a time, blocks
 * aligned to shards or inner chunks so that each stored chunk is decoded
 * once. The mean uses Neumaier's compensated sum, so that a field of
 * millions of values near 280 K does not drift in its last digits. */
#include <math.h>

#include "dctk/alloc.h"
#include "dctk/zarr_inspect.h"
#include "zarr_internal.h"

/* --- stored bytes ------------------------------------------------------- */

/* The store interface has no "is this a folder": a name whose size is
 * NOT_FOUND is the first segment of longer keys, so descend into it. */
static dctk_status sum_keys(dctk_store *s, const char *prefix, int depth, uint64_t *bytes, uint64_t *nkeys) {
    if (depth > DCTK_MAX_DIMS + 2) return DCTK_OK; /* deeper than any chunk key */
    char **names = NULL;
    size_t nn = 0;
    dctk_status st = zarr_list_names(s, prefix, false, &names, &nn);
    for (size_t i = 0; i < nn && st == DCTK_OK; i++) {
        if (depth == 0 && zarr_is_meta_name(names[i])) continue;
        char *key = zarr_join(prefix, names[i]);
        uint64_t n = 0;
        st = key ? dctk_store_size(s, key, &n) : DCTK_NOMEM();
        if (st == DCTK_OK) *bytes += n, (*nkeys)++;
        else if (st == DCTK_ERR_NOT_FOUND) {
            dctk_clear_detail();
            st = sum_keys(s, key, depth + 1, bytes, nkeys);
        }
        dctk_free(key);
    }
    zarr_names_free(names, nn);
    return st;
}

dctk_status dctk_zarr_stored_bytes(dctk_store *s, const char *path, uint64_t *bytes, uint64_t *nkeys) {
    *bytes = *nkeys = 0;
    return sum_keys(s, path, 0, bytes, nkeys);
}

/* --- blocks --------------------------------------------------------------- */

static uint64_t box_bytes(int ndim, const size_t *box, size_t es) { return (uint64_t)dctk_shape_nelems(ndim, box) * es; }

void dctk_zarr_block_shape(const dctk_zarr_meta *m, uint64_t max_bytes, size_t *block) {
    size_t es = dctk_dtype_size(m->dtype), shard[DCTK_MAX_DIMS], inner[DCTK_MAX_DIMS];
    /* v2 chunks may be larger than the array; only the part inside counts */
    for (int d = 0; d < m->ndim; d++) {
        size_t len = m->shape[d] ? m->shape[d] : 1;
        shard[d] = m->chunk[d] < len ? m->chunk[d] : len;
        inner[d] = m->inner[d] < len ? m->inner[d] : len;
    }
    memcpy(block, box_bytes(m->ndim, shard, es) <= max_bytes ? shard : inner, (size_t)m->ndim * sizeof *block);
    for (int d = 0; d < m->ndim && box_bytes(m->ndim, block, es) > max_bytes; d++) {
        uint64_t rest = box_bytes(m->ndim, block, es) / block[d]; /* bytes of one slice along d */
        uint64_t want = max_bytes / rest;
        block[d] = want < 1 ? 1 : want < block[d] ? (size_t)want : block[d];
    }
}

void dctk_zarr_walk_block_shape(const dctk_zarr_meta *m, uint64_t max_bytes, size_t *block) {
    size_t es = dctk_dtype_size(m->dtype);
    dctk_zarr_block_shape(m, max_bytes, block);
    for (int d = m->ndim - 1; d >= 0; d--) {
        size_t len = m->shape[d] ? m->shape[d] : 1;
        if (block[d] < m->chunk[d] && block[d] < len) return; /* cut below a shard: nothing to group */
        if (block[d] >= len) continue;
        uint64_t rest = box_bytes(m->ndim, block, es) / block[d], fit = max_bytes / rest / block[d];
        if (fit >= (len + block[d] - 1) / block[d]) {
            block[d] = len;
            continue;
        }
        if (fit >= 2) block[d] *= (size_t)fit;
        return;
    }
}

bool dctk_block_next(int ndim, const size_t *shape, const size_t *block, bool *first, size_t *start, size_t *count) {
    if (*first) {
        *first = false;
        for (int d = 0; d < ndim; d++) {
            if (shape[d] == 0) return false;
            start[d] = 0;
        }
    } else {
        int d = ndim - 1;
        for (; d >= 0; d--) {
            start[d] += block[d];
            if (start[d] < shape[d]) break;
            start[d] = 0;
        }
        if (d < 0) return false;
    }
    for (int d = 0; d < ndim; d++) count[d] = shape[d] - start[d] < block[d] ? shape[d] - start[d] : block[d];
    return true;
}

/* --- summary --------------------------------------------------------------- */

typedef struct {
    dctk_zarr_summary *s;
    double sum, comp; /* Neumaier */
} accum;

static void add_value(accum *a, double x) {
    dctk_zarr_summary *s = a->s;
    if (isnan(x)) {
        s->n_nan++;
        return;
    }
    bool first = s->n_finite + s->n_inf == 0;
    if (first || x < s->min) s->min = x;
    if (first || x > s->max) s->max = x;
    if (isinf(x)) {
        s->n_inf++;
        return;
    }
    s->n_finite++;
    double t = a->sum + x;
    a->comp += fabs(a->sum) >= fabs(x) ? (a->sum - t) + x : (x - t) + a->sum;
    a->sum = t;
}

static void add_block(accum *a, dctk_dtype t, const void *buf, size_t n) {
    for (size_t i = 0; i < n; i++) add_value(a, dctk_load_f64(t, buf, i));
    a->s->nelems += n;
}

static dctk_status read_preview(dctk_zarr_array *a, size_t want, dctk_zarr_summary *s) {
    const dctk_zarr_meta *m = dctk_zarr_get_meta(a);
    size_t start[DCTK_MAX_DIMS] = {0}, count[DCTK_MAX_DIMS];
    for (int d = 0; d < m->ndim; d++) {
        if (m->shape[d] == 0) return DCTK_OK;
        count[d] = 1;
    }
    size_t n = want > DCTK_PREVIEW_MAX ? DCTK_PREVIEW_MAX : want;
    if (m->ndim > 0 && m->shape[m->ndim - 1] < n) n = m->shape[m->ndim - 1];
    if (m->ndim == 0) n = n ? 1 : 0;
    if (n == 0) return DCTK_OK;
    if (m->ndim > 0) count[m->ndim - 1] = n;
    uint8_t buf[DCTK_PREVIEW_MAX * 8];
    DCTK_TRY(dctk_zarr_read(a, start, count, buf));
    for (size_t i = 0; i < n; i++) s->preview[i] = dctk_load_f64(m->dtype, buf, i);
    s->npreview = n;
    return DCTK_OK;
}

/* n values equal to the fill value, without reading them. */
static void add_fill(accum *a, double fill, uint64_t n) {
    if (n == 0) return;
    dctk_zarr_summary *s = a->s;
    s->nelems += n;
    add_value(a, fill); /* min, max and the counts of one value */
    uint64_t more = n - 1;
    if (isnan(fill)) s->n_nan += more;
    else if (isinf(fill)) s->n_inf += more;
    else if (more) {
        s->n_finite += more;
        double x = fill * (double)more, t = a->sum + x;
        a->comp += fabs(a->sum) >= fabs(x) ? (a->sum - t) + x : (x - t) + a->sum;
        a->sum = t;
    }
}

/* The box of stored outer chunk lin (C-order grid index), cut at the edge. */
static void outer_box(const dctk_zarr_meta *m, uint64_t lin, size_t *start, size_t *count) {
    for (int d = m->ndim - 1; d >= 0; d--) {
        size_t g = m->shape[d] / m->chunk[d] + (m->shape[d] % m->chunk[d] != 0);
        start[d] = (size_t)(lin % g) * m->chunk[d];
        lin /= g;
        count[d] = m->shape[d] - start[d] < m->chunk[d] ? m->shape[d] - start[d] : m->chunk[d];
    }
}

/* The stored outer chunks are read (in blocks of at most block); every other
 * value is the fill value and is counted as such: the work follows what is
 * stored, never the shape alone. */
static dctk_status summarize_stored(dctk_zarr_array *a, const size_t *block, void *buf, accum *acc) {
    const dctk_zarr_meta *m = &a->meta;
    dctk_status st = zarr_list_stored(a);
    if (st != DCTK_OK) {
        if (st != DCTK_ERR_NOMEM) dctk_prefix_detail("array '%s': ", a->path[0] ? a->path : "/");
        return st;
    }
    uint64_t read = 0;
    for (size_t k = 0; k < a->nstored; k++) {
        size_t bstart[DCTK_MAX_DIMS], bcount[DCTK_MAX_DIMS], rel[DCTK_MAX_DIMS], count[DCTK_MAX_DIMS],
            start[DCTK_MAX_DIMS];
        outer_box(m, a->stored[k], bstart, bcount);
        bool first = true;
        while (dctk_block_next(m->ndim, bcount, block, &first, rel, count)) {
            for (int d = 0; d < m->ndim; d++) start[d] = bstart[d] + rel[d];
            DCTK_TRY(dctk_zarr_read(a, start, count, buf));
            size_t n = dctk_shape_nelems(m->ndim, count);
            add_block(acc, m->dtype, buf, n);
            read += n;
        }
    }
    /* the fill value as the reader gives it (its type's rounding) */
    add_fill(acc, dctk_load_f64(m->dtype, a->fill, 0), (uint64_t)dctk_shape_nelems(m->ndim, m->shape) - read);
    return DCTK_OK;
}

dctk_status dctk_zarr_summarize(dctk_zarr_array *a, uint64_t max_block_bytes, size_t npreview,
                                dctk_zarr_summary *out) {
    memset(out, 0, sizeof *out);
    out->min = out->max = out->mean = NAN;
    const dctk_zarr_meta *m = dctk_zarr_get_meta(a);
    size_t block[DCTK_MAX_DIMS], start[DCTK_MAX_DIMS], count[DCTK_MAX_DIMS], es = dctk_dtype_size(m->dtype);
    dctk_zarr_block_shape(m, max_block_bytes, block);
    void *buf = dctk_malloc(box_bytes(m->ndim, block, es) ? box_bytes(m->ndim, block, es) : 1);
    if (!buf) return DCTK_FAIL(DCTK_ERR_NOMEM, "out of memory for a block of %llu bytes",
                               (unsigned long long)box_bytes(m->ndim, block, es));
    accum acc = {.s = out};
    dctk_status st = DCTK_OK;
    bool first = true;
    if (m->ndim > 0 && dctk_shape_nelems(m->ndim, m->shape) > 0) {
        st = summarize_stored(a, block, buf, &acc);
    } else {
        while (st == DCTK_OK && dctk_block_next(m->ndim, m->shape, block, &first, start, count)) {
            st = dctk_zarr_read(a, start, count, buf);
            if (st == DCTK_OK) add_block(&acc, m->dtype, buf, dctk_shape_nelems(m->ndim, count));
        }
    }
    dctk_free(buf);
    DCTK_TRY(st);
    if (out->n_finite) out->mean = (acc.sum + acc.comp) / (double)out->n_finite;
    return read_preview(a, npreview, out);
}
