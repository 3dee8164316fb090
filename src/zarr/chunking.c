/* Chunk and shard shapes that follow the field's dimensions. */
#include <stdio.h>
#include <string.h>

#include "dctk/chunking.h"
#include "dctk/util.h"

/* Fill out[] from the innermost dimension outwards: whole units of unit[d]
 * while the product stays within budget elements, then as many as fit of the
 * first dimension that does not fit whole, then 1 unit for the rest. limit[d]
 * is the number of units the field needs along d. */
static void grow(int ndim, const size_t *unit, const size_t *limit, double budget, size_t *out) {
    double used = 1;
    for (int d = 0; d < ndim; d++) used *= (double)unit[d];
    int d = ndim - 1;
    for (; d >= 0; d--) {
        double whole = used * (double)limit[d];
        if (whole > budget) break;
        out[d] = limit[d];
        used = whole;
    }
    if (d >= 0) {
        size_t k = (size_t)(budget / used);
        out[d] = k < 1 ? 1 : (k > limit[d] ? limit[d] : k);
        for (d--; d >= 0; d--) out[d] = 1;
    }
}

void dctk_chunk_shape_for(dctk_dtype t, int ndim, const size_t *shape, uint64_t target_bytes, size_t *chunk) {
    size_t one[DCTK_MAX_DIMS] = {0}, lim[DCTK_MAX_DIMS] = {0};
    for (int d = 0; d < ndim; d++) {
        one[d] = 1;
        lim[d] = shape[d] ? shape[d] : 1;
    }
    size_t es = dctk_dtype_size(t) ? dctk_dtype_size(t) : 1;
    grow(ndim, one, lim, (double)target_bytes / (double)es, chunk);
}

void dctk_chunk_shape_split(dctk_dtype t, int ndim, const size_t *shape, uint64_t target_bytes, bool spatial_split,
                            size_t *chunk) {
    dctk_chunk_shape_for(t, ndim, shape, target_bytes, chunk);
    if (spatial_split || ndim < 2 || chunk[0] > 1) return;
    for (int d = 1; d < ndim; d++) chunk[d] = shape[d] ? shape[d] : 1;
}

bool dctk_chunk_warn_whole(const char *var, dctk_dtype t, int ndim, const size_t *chunk, bool spatial_split,
                           uint64_t max_bytes) {
    uint64_t bytes = dctk_shape_nelems(ndim, chunk) * dctk_dtype_size(t);
    uint64_t cap = max_bytes ? max_bytes : DCTK_MAX_INNER_CHUNK_DEFAULT;
    if (spatial_split || bytes <= cap) return false;
    char sh[128];
    dctk_log(DCTK_LOG_WARN, "%s: --no-spatial-split keeps whole slices: inner chunks %s of %.1f MiB, over "
             "--max-inner-chunk-mib %.4g (readers and writers hold a chunk at a time)", var,
             dctk_shape_str(ndim, chunk, sh, sizeof sh), (double)bytes / 1048576.0, (double)cap / 1048576.0);
    return true;
}

void dctk_shard_shape_for(dctk_dtype t, int ndim, const size_t *shape, const size_t *chunk, uint64_t target_bytes,
                          size_t *shard) {
    size_t lim[DCTK_MAX_DIMS] = {0}, k[DCTK_MAX_DIMS] = {0};
    for (int d = 0; d < ndim; d++) {
        size_t n = shape[d] ? shape[d] : 1;
        lim[d] = (n + chunk[d] - 1) / chunk[d];
    }
    size_t es = dctk_dtype_size(t) ? dctk_dtype_size(t) : 1;
    grow(ndim, chunk, lim, (double)target_bytes / (double)es, k);
    for (int d = 0; d < ndim; d++) shard[d] = k[d] * chunk[d];
}

void dctk_pad_edges(int ndim, size_t es, const size_t *valid, const size_t *full, void *buf) {
    uint8_t *b = buf;
    size_t stride[DCTK_MAX_DIMS];
    stride[ndim - 1] = es;
    for (int d = ndim - 2; d >= 0; d--) stride[d] = stride[d + 1] * full[d + 1];
    /* innermost first: when dimension d is padded, every slab along it is
     * already complete inside, so whole slabs can be repeated */
    for (int d = ndim - 1; d >= 0; d--) {
        if (valid[d] == full[d] || valid[d] == 0) continue;
        size_t idx[DCTK_MAX_DIMS] = {0}, outer = dctk_shape_nelems(d, valid);
        for (size_t o = 0; o < outer; o++) {
            size_t off = 0;
            for (int e = 0; e < d; e++) off += idx[e] * stride[e];
            uint8_t *last = b + off + (valid[d] - 1) * stride[d];
            for (size_t j = valid[d]; j < full[d]; j++) memcpy(b + off + j * stride[d], last, stride[d]);
            for (int e = d - 1; e >= 0 && ++idx[e] == valid[e]; e--) idx[e] = 0;
        }
    }
}
