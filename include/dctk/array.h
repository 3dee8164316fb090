/* Element types and the n-dimensional array view.
 *
 * A dctk_array describes memory it does not own: element type, shape and
 * C-order strides (in elements). Codecs, readers and the writer all speak in
 * terms of it, as zfp's zfp_field does for zfp. The element types are stable;
 * the view and the element helpers are behind DCTK_STATIC_LINKING_ONLY
 * (dctk/dctk.h). */
#ifndef DCTK_ARRAY_H
#define DCTK_ARRAY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dctk/status.h"

#ifdef __cplusplus
extern "C" {
#endif

#define DCTK_MAX_DIMS 32

typedef enum dctk_dtype {
    DCTK_DTYPE_INVALID = 0,
    DCTK_INT8, DCTK_INT16, DCTK_INT32, DCTK_INT64,
    DCTK_UINT8, DCTK_UINT16, DCTK_UINT32, DCTK_UINT64,
    DCTK_FLOAT32, DCTK_FLOAT64
} dctk_dtype;

/* Bytes per element; 0 for DCTK_DTYPE_INVALID. */
DCTK_API size_t dctk_dtype_size(dctk_dtype t);
DCTK_API bool dctk_dtype_is_float(dctk_dtype t);
DCTK_API bool dctk_dtype_is_signed(dctk_dtype t);
/* Zarr v3 name: "float32", "int16", ... */
DCTK_API const char *dctk_dtype_name(dctk_dtype t);
/* numpy little-endian type string, as numcodecs configurations spell it: "<f4", "|i1". */
DCTK_API const char *dctk_dtype_numpy(dctk_dtype t);
/* Parse a Zarr v3 name or a numpy type string ("<f8", "float64", "int16", "|u1"). */
DCTK_API dctk_status dctk_dtype_parse(const char *s, dctk_dtype *out);

/* Read element i of a typed buffer as double, and write a double into it
 * (converted with C rules; callers round first where it matters). */
#ifdef __cplusplus
}
#endif

/* --- DCTK_STATIC_LINKING_ONLY: element access, views, blocks ------------- */
#ifdef DCTK_STATIC_LINKING_ONLY
#ifdef __cplusplus
extern "C" {
#endif

DCTK_API double dctk_load_f64(dctk_dtype t, const void *buf, size_t i);
DCTK_API void dctk_store_f64(dctk_dtype t, void *buf, size_t i, double v);
/* Copy n bytes of es-byte elements from src to dst (the same buffer or apart,
 * never overlapping otherwise), each element's bytes reversed: big-endian
 * values to the host's little-endian order and back. */
DCTK_API void dctk_swap_copy(void *dst, const void *src, size_t n, size_t es);

typedef struct dctk_array {
    dctk_dtype dtype;
    int ndim;
    size_t shape[DCTK_MAX_DIMS];
    ptrdiff_t stride[DCTK_MAX_DIMS]; /* in elements; C order when contiguous */
    void *data;
} dctk_array;

/* A contiguous C-order view of data with the given shape. */
DCTK_API dctk_array dctk_array_view(dctk_dtype t, int ndim, const size_t *shape, void *data);
DCTK_API size_t dctk_shape_nelems(int ndim, const size_t *shape);
/* Block k (C order) of a grid of blocks over shape: its start and count, the
 * last block along a dimension cut at the edge; grid[d] = ceil(shape[d] / block[d]). */
DCTK_API void dctk_block_at(int ndim, const size_t *shape, const size_t *block, const size_t *grid, size_t k,
                            size_t *start, size_t *count);
DCTK_API size_t dctk_array_nelems(const dctk_array *a);
DCTK_API size_t dctk_array_nbytes(const dctk_array *a);
DCTK_API bool dctk_array_is_contiguous(const dctk_array *a);

/* "[3, 96, 192]" into buf. Returns buf. */
DCTK_API char *dctk_shape_str(int ndim, const size_t *shape, char *buf, size_t cap);

#ifdef __cplusplus
}
#endif
#endif /* DCTK_STATIC_LINKING_ONLY */
#endif
