/* Reading arrays and regions. A shard costs two reads: its index (checked
 * against its CRC-32C) and the span of bytes that holds the inner chunks the
 * region needs. Every index entry is checked against the shard's size before
 * use, so a truncated or damaged shard is an error, never a wild read. */
#include <stdio.h>

#include "zarr_internal.h"

enum { S_CHUNK, S_SPAN, S_INDEX, S_TMP };

/* Step pos through the box [lo, hi] (inclusive) in C order; false at the end. */
static bool next_pos(int ndim, const size_t *lo, const size_t *hi, size_t *pos) {
    for (int d = ndim - 1; d >= 0; d--) {
        if (pos[d] < hi[d]) {
            pos[d]++;
            return true;
        }
        pos[d] = lo[d];
    }
    return false;
}

typedef struct {
    dctk_zarr_array *a;
    const size_t *start, *count;
    uint8_t *out;
} region;

/* The part of the inner chunk at corner co (array coordinates) that falls in
 * the region: its offset in the chunk, in the output, and its size. */
static void overlap(const region *r, const size_t *co, size_t *src_off, size_t *dst_off, size_t *n) {
    const dctk_zarr_meta *m = &r->a->meta;
    for (int d = 0; d < m->ndim; d++) {
        size_t b0 = co[d] > r->start[d] ? co[d] : r->start[d];
        size_t e0 = co[d] + m->inner[d], e1 = r->start[d] + r->count[d];
        size_t b1 = e0 < e1 ? e0 : e1;
        src_off[d] = b0 - co[d];
        dst_off[d] = b0 - r->start[d];
        n[d] = b1 - b0;
    }
}

/* Copy the part of a decoded inner chunk that falls in the region. */
static void place(const region *r, const size_t *co, const void *chunk) {
    const dctk_zarr_meta *m = &r->a->meta;
    size_t src_off[DCTK_MAX_DIMS], dst_off[DCTK_MAX_DIMS], n[DCTK_MAX_DIMS];
    overlap(r, co, src_off, dst_off, n);
    zarr_copy_box(m->ndim, dctk_dtype_size(m->dtype), n, chunk, m->inner, src_off, r->out, r->count, dst_off);
}

/* An absent chunk: the fill value, written straight into the region (never
 * a whole chunk, which may be far larger than what was asked for). */
static void place_fill(const region *r, const size_t *co) {
    const dctk_zarr_meta *m = &r->a->meta;
    size_t src_off[DCTK_MAX_DIMS], dst_off[DCTK_MAX_DIMS], n[DCTK_MAX_DIMS];
    overlap(r, co, src_off, dst_off, n);
    zarr_fill_box(m->ndim, dctk_dtype_size(m->dtype), n, r->a->fill, r->out, r->count, dst_off);
}

static dctk_status decode_place(const region *r, const size_t *co, const uint8_t *p, size_t n) {
    dctk_zarr_array *a = r->a;
    dctk_chunk_spec spec = dctk_spec_make(a->meta.dtype, a->meta.ndim, a->meta.inner);
    /* sized on first use: a region over absent chunks needs no chunk buffer */
    DCTK_TRY(dctk_buf_resize(&a->scratch[S_CHUNK], dctk_spec_nbytes(&spec)));
    DCTK_TRY(dctk_pipeline_decode(a->pipe, a->ctx, &spec, p, n, a->scratch[S_CHUNK].data, &a->scratch[S_TMP]));
    place(r, co, a->scratch[S_CHUNK].data);
    return DCTK_OK;
}

/* The inner chunks of outer chunk g (inner grid coordinates within the
 * shard) that meet the region: [lo, hi] inclusive. */
static void inner_range(const region *r, const size_t *g, size_t *lo, size_t *hi) {
    const dctk_zarr_meta *m = &r->a->meta;
    for (int d = 0; d < m->ndim; d++) {
        size_t so = g[d] * m->chunk[d];
        size_t b0 = r->start[d] > so ? r->start[d] : so;
        size_t b1 = r->start[d] + r->count[d];
        if (b1 > so + m->chunk[d]) b1 = so + m->chunk[d];
        lo[d] = (b0 - so) / m->inner[d];
        hi[d] = (b1 - 1 - so) / m->inner[d];
    }
}

static size_t linear(int ndim, const size_t *pos, const size_t *grid) {
    size_t i = 0;
    for (int d = 0; d < ndim; d++) i = i * grid[d] + pos[d];
    return i;
}

static void corner(const dctk_zarr_meta *m, const size_t *g, const size_t *ip, size_t *co) {
    for (int d = 0; d < m->ndim; d++) co[d] = g[d] * m->chunk[d] + ip[d] * m->inner[d];
}

/* Load and check the index of a shard of `size` bytes into S_INDEX. The
 * data area, where inner chunks may lie, is [*data_lo, *data_hi). */
static dctk_status load_index(dctk_zarr_array *a, const char *key, uint64_t size, size_t n, uint64_t *data_lo,
                              uint64_t *data_hi) {
    size_t ib = zarr_index_bytes(n, a->meta.index_crc);
    if (size < ib)
        return DCTK_FAIL(DCTK_ERR_CORRUPT, "shard '%s' is truncated: %llu bytes, its index alone needs %zu", key,
                         (unsigned long long)size, ib);
    uint64_t at = a->meta.index_at_start ? 0 : size - ib;
    dctk_buf *idx = &a->scratch[S_INDEX];
    DCTK_TRY(dctk_store_get_range(a->store, key, at, ib, idx));
    if (a->meta.index_crc) {
        uint32_t want = dctk_get_le32(idx->data + 16 * n), got = dctk_crc32c(idx->data, 16 * n);
        if (want != got)
            return DCTK_FAIL(DCTK_ERR_CORRUPT, "shard '%s': index checksum mismatch (stored %08x, computed %08x)", key,
                             want, got);
    }
    *data_lo = a->meta.index_at_start ? ib : 0;
    *data_hi = a->meta.index_at_start ? size : size - ib;
    return DCTK_OK;
}

/* Entry i of the loaded index; false when absent. */
static dctk_status index_entry(dctk_zarr_array *a, const char *key, size_t i, uint64_t lo, uint64_t hi, uint64_t *off,
                               uint64_t *len, bool *present) {
    const uint8_t *e = a->scratch[S_INDEX].data + 16 * i;
    *off = dctk_get_le64(e);
    *len = dctk_get_le64(e + 8);
    *present = !(*off == ZARR_ABSENT && *len == ZARR_ABSENT);
    if (*present && *len == 0) /* no codec encodes a chunk to nothing */
        return DCTK_FAIL(DCTK_ERR_CORRUPT, "shard '%s': inner chunk %zu has length 0 (offset %llu)", key, i,
                         (unsigned long long)*off);
    if (*present && (*off < lo || *off > hi || *len > hi - *off))
        return DCTK_FAIL(DCTK_ERR_CORRUPT, "shard '%s': inner chunk %zu at offset %llu, %llu bytes, lies outside the "
                         "shard's data (%llu..%llu)", key, i, (unsigned long long)*off, (unsigned long long)*len,
                         (unsigned long long)lo, (unsigned long long)hi);
    return DCTK_OK;
}

/* The byte span [*s0, *s1) covering the present inner chunks in [lo, hi]. */
static dctk_status needed_span(dctk_zarr_array *a, const char *key, const size_t *lo, const size_t *hi,
                               const size_t *ig, uint64_t dlo, uint64_t dhi, uint64_t *s0, uint64_t *s1) {
    size_t pos[DCTK_MAX_DIMS];
    memcpy(pos, lo, sizeof pos);
    *s0 = UINT64_MAX, *s1 = 0;
    do {
        uint64_t off, len;
        bool present;
        DCTK_TRY(index_entry(a, key, linear(a->meta.ndim, pos, ig), dlo, dhi, &off, &len, &present));
        if (present && off < *s0) *s0 = off;
        if (present && off + len > *s1) *s1 = off + len;
    } while (next_pos(a->meta.ndim, lo, hi, pos));
    return DCTK_OK;
}

static dctk_status read_shard_chunks(const region *r, const size_t *g, const char *key, uint64_t size) {
    dctk_zarr_array *a = r->a;
    const int nd = a->meta.ndim;
    size_t ig[DCTK_MAX_DIMS], lo[DCTK_MAX_DIMS] = {0}, hi[DCTK_MAX_DIMS] = {0}, pos[DCTK_MAX_DIMS], co[DCTK_MAX_DIMS];
    size_t n = zarr_inner_grid(&a->meta, ig);
    uint64_t dlo, dhi, s0, s1;
    DCTK_TRY(load_index(a, key, size, n, &dlo, &dhi));
    inner_range(r, g, lo, hi);
    DCTK_TRY(needed_span(a, key, lo, hi, ig, dlo, dhi, &s0, &s1));
    if (s1 > s0) DCTK_TRY(dctk_store_get_range(a->store, key, s0, s1 - s0, &a->scratch[S_SPAN]));
    memcpy(pos, lo, sizeof pos);
    do {
        uint64_t off, len;
        bool present;
        size_t i = linear(nd, pos, ig);
        DCTK_TRY(index_entry(a, key, i, dlo, dhi, &off, &len, &present));
        corner(&a->meta, g, pos, co);
        if (!present) {
            place_fill(r, co);
        } else {
            dctk_status st = decode_place(r, co, a->scratch[S_SPAN].data + (off - s0), (size_t)len);
            if (st != DCTK_OK) {
                dctk_prefix_detail("shard '%s', inner chunk %zu: ", key, i);
                return st;
            }
        }
    } while (next_pos(nd, lo, hi, pos));
    return DCTK_OK;
}

/* C-order index of outer chunk g in the array's grid. */
static uint64_t grid_linear(const dctk_zarr_meta *m, const size_t *g) {
    uint64_t i = 0;
    for (int d = 0; d < m->ndim; d++) i = i * (m->shape[d] / m->chunk[d] + (m->shape[d] % m->chunk[d] != 0)) + g[d];
    return i;
}

/* An outer chunk that is not stored: the fill value where it meets the region. */
static void fill_outer(const region *r, const size_t *g) {
    size_t lo[DCTK_MAX_DIMS] = {0}, hi[DCTK_MAX_DIMS] = {0}, pos[DCTK_MAX_DIMS], co[DCTK_MAX_DIMS];
    inner_range(r, g, lo, hi);
    memcpy(pos, lo, sizeof pos);
    do {
        corner(&r->a->meta, g, pos, co);
        place_fill(r, co);
    } while (next_pos(r->a->meta.ndim, lo, hi, pos));
}

static dctk_status read_outer(const region *r, const size_t *g) {
    dctk_zarr_array *a = r->a;
    /* a key the listing did not show is not asked for (nor named) */
    if (a->listed && !zarr_is_stored(a, grid_linear(&a->meta, g))) {
        fill_outer(r, g);
        return DCTK_OK;
    }
    char key[1024];
    zarr_chunk_key(a, g, key, sizeof key);
    uint64_t size;
    a->nasked += !a->listed;
    dctk_status st = dctk_store_size(a->store, key, &size);
    if (st == DCTK_ERR_NOT_FOUND) {
        fill_outer(r, g);
        dctk_clear_detail();
        return DCTK_OK;
    }
    if (st != DCTK_OK) return st;
    if (a->meta.sharded) return read_shard_chunks(r, g, key, size);
    DCTK_TRY(dctk_store_get(a->store, key, &a->scratch[S_SPAN]));
    size_t zero[DCTK_MAX_DIMS] = {0}, co[DCTK_MAX_DIMS];
    corner(&a->meta, g, zero, co);
    st = decode_place(r, co, a->scratch[S_SPAN].data, a->scratch[S_SPAN].size);
    if (st != DCTK_OK) dctk_prefix_detail("chunk '%s': ", key);
    return st;
}

static dctk_status read_one(const region *r, const size_t *g) {
    dctk_zarr_array *a = r->a;
    dctk_status st = read_outer(r, g);
    if (a->pinned && getenv("DCTK_TEST_HOLD")) {
        char point[1100];
        snprintf(point, sizeof point, "store: read %s", a->path);
        dctk_test_hold_at(point, ++a->nread);
    }
    return st;
}

/* Keys asked of the store one by one, in a region or over a handle's reads,
 * after which a read lists the stored keys instead. */
enum { LIST_AFTER = 64 };

static uint64_t outer_count(int ndim, const size_t *lo, const size_t *hi) {
    uint64_t n = 1;
    for (int d = 0; d < ndim; d++) n = n > UINT64_MAX / (hi[d] - lo[d] + 1) ? UINT64_MAX : n * (hi[d] - lo[d] + 1);
    return n;
}

/* The grid coordinates g of stored index v; false when outside the box [lo, hi]. */
static bool in_box(const dctk_zarr_meta *m, uint64_t v, const size_t *lo, const size_t *hi, size_t *g) {
    for (int d = m->ndim - 1; d >= 0; d--) {
        uint64_t n = m->shape[d] / m->chunk[d] + (m->shape[d] % m->chunk[d] != 0);
        g[d] = (size_t)(v % n);
        v /= n;
        if (g[d] < lo[d] || g[d] > hi[d]) return false;
    }
    return true;
}

/* The stored indexes between the box's first and last: [*from, *to) in the list. */
static void stored_span(const dctk_zarr_array *a, const size_t *lo, const size_t *hi, size_t *from, size_t *to) {
    uint64_t last = grid_linear(&a->meta, hi);
    *from = zarr_stored_from(a, grid_linear(&a->meta, lo));
    *to = last == UINT64_MAX ? a->nstored : zarr_stored_from(a, last + 1);
}

/* A region of a listed array that holds fewer stored outer chunks (between
 * its first and last) than it has: the fill value in one pass, then the
 * stored ones in the box, each read. The work follows what is stored, not
 * the grid: an absent key costs nothing. */
static dctk_status read_stored_only(const region *r, const size_t *lo, const size_t *hi, size_t from, size_t to) {
    dctk_zarr_array *a = r->a;
    const dctk_zarr_meta *m = &a->meta;
    size_t zero[DCTK_MAX_DIMS] = {0}, g[DCTK_MAX_DIMS];
    zarr_fill_box(m->ndim, dctk_dtype_size(m->dtype), r->count, a->fill, r->out, r->count, zero);
    for (size_t i = from; i < to; i++)
        if (in_box(m, a->stored[i], lo, hi, g)) DCTK_TRY(read_one(r, g));
    return DCTK_OK;
}

/* The outer chunks [lo, hi] a region of the array touches; DCTK_ERR_ARG for
 * a region outside it; *empty for a region of no element. */
static dctk_status region_box(const dctk_zarr_meta *m, const size_t *start, const size_t *count, size_t *lo,
                              size_t *hi, bool *empty) {
    *empty = false;
    for (int d = 0; d < m->ndim; d++) {
        if (start[d] > m->shape[d] || count[d] > m->shape[d] - start[d])
            return DCTK_FAIL(DCTK_ERR_ARG, "region %zu+%zu is outside dim %d of size %zu", start[d], count[d], d,
                             m->shape[d]);
        if (count[d] == 0) *empty = true;
        else lo[d] = start[d] / m->chunk[d], hi[d] = (start[d] + count[d] - 1) / m->chunk[d];
    }
    return DCTK_OK;
}

dctk_status dctk_zarr_region_stored(dctk_zarr_array *a, const size_t *start, const size_t *count, bool *maybe) {
    const dctk_zarr_meta *m = &a->meta;
    size_t lo[DCTK_MAX_DIMS], hi[DCTK_MAX_DIMS], g[DCTK_MAX_DIMS], from, to;
    *maybe = true;
    bool empty;
    DCTK_TRY(region_box(m, start, count, lo, hi, &empty));
    if (empty) return DCTK_OK;
    if (m->ndim == 0) return DCTK_OK;
    dctk_status st = zarr_list_stored(a);
    if (st != DCTK_OK) {
        if (st != DCTK_ERR_NOMEM) dctk_prefix_detail("array '%s': ", a->path[0] ? a->path : "/");
        return st;
    }
    stored_span(a, lo, hi, &from, &to);
    /* at most as many looked at as the box has chunks: past that, "maybe" */
    uint64_t budget = outer_count(m->ndim, lo, hi);
    size_t i = from;
    for (; i < to && budget; i++, budget--)
        if (in_box(m, a->stored[i], lo, hi, g)) return DCTK_OK;
    *maybe = i < to;
    return DCTK_OK;
}

/* dctk_zarr_check_dense's bounds on what a whole read makes of nothing stored. */
#define DENSE_MAX_UNSTORED_CHUNKS (1ull << 24)
#define DENSE_MAX_UNSTORED_BYTES (64ull << 30)
#define DENSE_MIN_STORED_SHARE 1024 /* at least one chunk in this many stored: a sparse array, not a forgery */

dctk_status dctk_zarr_check_dense(dctk_zarr_array *a) {
    const dctk_zarr_meta *m = &a->meta;
    uint64_t total = 1, unit = dctk_dtype_size(m->dtype); /* the grid's outer chunks, and the bytes of one */
    for (int d = 0; d < m->ndim; d++) {
        total *= m->shape[d] / m->chunk[d] + (m->shape[d] % m->chunk[d] != 0); /* at most 2^32: meta checked */
        unit = unit > UINT64_MAX / m->chunk[d] ? UINT64_MAX : unit * m->chunk[d];
    }
    uint64_t most = unit ? UINT64_MAX / unit : UINT64_MAX;
    if (m->ndim == 0 || (total <= DENSE_MAX_UNSTORED_CHUNKS && total <= most && total * unit <= DENSE_MAX_UNSTORED_BYTES))
        return DCTK_OK; /* nothing absurd whatever is stored: no listing */
    const char *name = a->path[0] ? a->path : "/";
    dctk_status st = zarr_list_stored(a);
    if (st != DCTK_OK) {
        if (st != DCTK_ERR_NOMEM) dctk_prefix_detail("array '%s': ", name);
        return st;
    }
    uint64_t stored = a->nstored < total ? a->nstored : total, unstored = total - stored;
    uint64_t bytes = unstored > most ? UINT64_MAX : unstored * unit;
    if ((unstored <= DENSE_MAX_UNSTORED_CHUNKS && bytes <= DENSE_MAX_UNSTORED_BYTES) ||
        unstored / DENSE_MIN_STORED_SHARE < stored)
        return DCTK_OK;
    char sh[256], ch[256], fill[32];
    return DCTK_FAIL(DCTK_ERR_FORMAT, "array '%s': shape %s in chunks of %s: the store holds %llu of its %llu chunks, "
                     "so reading it whole would make %s of fill value out of chunks never written (a damaged or "
                     "forged zarr.json?): not read", name, dctk_shape_str(m->ndim, m->shape, sh, sizeof sh),
                     dctk_shape_str(m->ndim, m->chunk, ch, sizeof ch), (unsigned long long)stored,
                     (unsigned long long)total, dctk_format_size(bytes, fill, sizeof fill));
}

dctk_status dctk_zarr_read(dctk_zarr_array *a, const size_t *start, const size_t *count, void *out) {
    const dctk_zarr_meta *m = &a->meta;
    size_t lo[DCTK_MAX_DIMS] = {0}, hi[DCTK_MAX_DIMS] = {0}, pos[DCTK_MAX_DIMS];
    bool empty;
    DCTK_TRY(region_box(m, start, count, lo, hi, &empty));
    if (empty) return DCTK_OK;
    region r = {a, start, count, out};
    memcpy(pos, lo, sizeof pos);
    dctk_status st = DCTK_OK;
    bool done = false;
    /* many keys in the region, or asked one by one over this handle's reads: list what is stored instead */
    if (m->ndim > 0 && !a->listed && (outer_count(m->ndim, lo, hi) > LIST_AFTER || a->nasked >= LIST_AFTER))
        st = zarr_list_stored(a);
    if (st == DCTK_OK && a->listed && m->ndim > 0) {
        size_t from, to;
        stored_span(a, lo, hi, &from, &to);
        if ((uint64_t)(to - from) < outer_count(m->ndim, lo, hi)) {
            st = read_stored_only(&r, lo, hi, from, to);
            done = true;
        }
    }
    while (st == DCTK_OK && !done) {
        st = read_one(&r, pos);
        done = !next_pos(m->ndim, lo, hi, pos);
    }
    /* Every value must come from the copy whose metadata was read: a writer
     * that swapped another copy in meanwhile (or removed the old one under
     * us, whose chunks would then read as fill) makes the read fail. */
    if (a->pinned && st != DCTK_ERR_NOMEM) st = zarr_check_same_copy(a, st);
    if (st != DCTK_OK) dctk_prefix_detail("array '%s': ", a->path[0] ? a->path : "/");
    return st;
}
