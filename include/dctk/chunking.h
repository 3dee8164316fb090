/* Inner-chunk and shard shapes for a field. Shared by the sweep (which
 * evaluates the sample chunk by chunk with the shape the writer will use, so
 * that sweep ratios predict real ratios) and the Zarr writer. */
#ifndef DCTK_CHUNKING_H
#define DCTK_CHUNKING_H

#ifndef DCTK_STATIC_LINKING_ONLY
#error "dctk/chunking.h is not part of the stable API: #define DCTK_STATIC_LINKING_ONLY before any dctk header to use it (dctk/dctk.h)"
#endif

#include <stdbool.h>
#include <stdint.h>

#include "dctk/array.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Trailing dimensions are kept whole while they fit; the innermost dimension
 * that does not fit is split, and every dimension before it gets 1. So a
 * (time, lat, lon) field gets chunks (k, lat, lon) with k as large as fits in
 * target_bytes, and a huge single slice gets (1, m, lon). Never below one
 * element per dimension, never above the field. Zero-length dims give 1. */
DCTK_API void dctk_chunk_shape_for(dctk_dtype t, int ndim, const size_t *shape, uint64_t target_bytes, size_t *chunk);
/* The same, or with spatial_split false (the Python tool's --no-spatial-split)
 * every dimension after the first whole: (k, lat, lon) with k as large as
 * fits, at least 1, however large one slice is. */
DCTK_API void dctk_chunk_shape_split(dctk_dtype t, int ndim, const size_t *shape, uint64_t target_bytes,
                                     bool spatial_split, size_t *chunk);

/* The Python tool's --max-inner-chunk-mib: a warning line naming var when a
 * chunk kept whole by --no-spatial-split (spatial_split false) is over
 * max_bytes (0: 256 MiB). Returns whether it is. */
#define DCTK_MAX_INNER_CHUNK_DEFAULT (256u << 20)
DCTK_API bool dctk_chunk_warn_whole(const char *var, dctk_dtype t, int ndim, const size_t *chunk, bool spatial_split,
                                    uint64_t max_bytes);

/* A shard: a whole number of chunks along every dimension, grown from the
 * innermost dimension outwards like the chunk, at most target_bytes (but at
 * least one chunk), and no more chunks along a dimension than the field needs. */
DCTK_API void dctk_shard_shape_for(dctk_dtype t, int ndim, const size_t *shape, const size_t *chunk,
                                   uint64_t target_bytes, size_t *shard);

/* Pad a chunk buffer of shape full (C order, element size es) whose leading
 * corner of extent valid holds data: every element past the valid extent
 * takes the value of the nearest valid one (edge replication). Edge chunks
 * are padded this way by the writer and the sweep alike: a fill value (NaN)
 * in the padding would make block transforms such as ZFP smear garbage into
 * valid points and make asinh refuse the chunk; readers crop the padding. */
DCTK_API void dctk_pad_edges(int ndim, size_t es, const size_t *valid, const size_t *full, void *buf);

#ifdef __cplusplus
}
#endif
#endif
