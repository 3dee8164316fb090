/* Looking into a Zarr array without holding it: the bytes its keys take in
 * the store, a walk over the array in bounded blocks, and summary statistics
 * of its stored values (open_zarr_and_inspect, from_zarr_to_netcdf).
 *
 * Values are the stored ones, as dctk_zarr_read returns them: no CF decoding
 * (scale_factor, _FillValue in the attributes are left for the reader). */
#ifndef DCTK_ZARR_INSPECT_H
#define DCTK_ZARR_INSPECT_H

#ifndef DCTK_STATIC_LINKING_ONLY
#error "dctk/zarr_inspect.h is not part of the stable API: #define DCTK_STATIC_LINKING_ONLY before any dctk header to use it (dctk/dctk.h)"
#endif

#include <stdint.h>

#include "dctk/zarr.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Bytes of every chunk or shard key of the array at path (its metadata
 * documents, zarr.json or .zarray/.zattrs, excluded), and how many keys. */
DCTK_API dctk_status dctk_zarr_stored_bytes(dctk_store *s, const char *path, uint64_t *bytes, uint64_t *nkeys);

/* A block shape for walking array m with at most about max_bytes per block,
 * aligned to its storage so each stored chunk is decoded once: the shard
 * when it fits, else the inner chunk, else the inner chunk cut down along its
 * leading dimensions (never below one element). */
DCTK_API void dctk_zarr_block_shape(const dctk_zarr_meta *m, uint64_t max_bytes, size_t *block);

/* dctk_zarr_block_shape grown by whole blocks, from the last dimension
 * outward, while a block stays within max_bytes: an array of tiny chunks is
 * walked many chunks at a time, not one read per chunk. */
DCTK_API void dctk_zarr_walk_block_shape(const dctk_zarr_meta *m, uint64_t max_bytes, size_t *block);

/* Walk the blocks of a grid in C order. Start with *first = true; each call
 * sets start/count of the next block (clipped at the array's edge) and
 * returns false when there is none left. A shape with a zero has no blocks. */
DCTK_API bool dctk_block_next(int ndim, const size_t *shape, const size_t *block, bool *first, size_t *start,
                              size_t *count);

#define DCTK_PREVIEW_MAX 16

typedef struct dctk_zarr_summary {
    uint64_t nelems;
    uint64_t n_nan, n_inf;  /* floats only */
    uint64_t n_finite;
    double min, max;        /* over the values that are not NaN; NaN when there are none */
    double mean;            /* over the finite values; NaN when there are none */
    /* The first values of the first row (index 0 along every dimension but
     * the last). 64-bit integers beyond 2^53 are approximate. */
    size_t npreview;
    double preview[DCTK_PREVIEW_MAX];
} dctk_zarr_summary;

/* Read the whole array block by block (dctk_zarr_block_shape with
 * max_block_bytes) and summarise it; npreview asks for that many preview
 * values (at most DCTK_PREVIEW_MAX). Errors are those of dctk_zarr_read
 * (DCTK_ERR_CORRUPT for a damaged shard, naming its key). */
DCTK_API dctk_status dctk_zarr_summarize(dctk_zarr_array *a, uint64_t max_block_bytes, size_t npreview,
                                         dctk_zarr_summary *out);

#ifdef __cplusplus
}
#endif
#endif
