/* Element types and the n-dimensional array view. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "dctk/array.h"

static const struct {
    const char *name, *numpy;
    size_t size;
} types[] = {
    [DCTK_DTYPE_INVALID] = {"invalid", "", 0},
    [DCTK_INT8] = {"int8", "|i1", 1},     [DCTK_INT16] = {"int16", "<i2", 2},
    [DCTK_INT32] = {"int32", "<i4", 4},   [DCTK_INT64] = {"int64", "<i8", 8},
    [DCTK_UINT8] = {"uint8", "|u1", 1},   [DCTK_UINT16] = {"uint16", "<u2", 2},
    [DCTK_UINT32] = {"uint32", "<u4", 4}, [DCTK_UINT64] = {"uint64", "<u8", 8},
    [DCTK_FLOAT32] = {"float32", "<f4", 4}, [DCTK_FLOAT64] = {"float64", "<f8", 8},
};
#define NTYPES (sizeof types / sizeof types[0])

static bool valid(dctk_dtype t) { return t > DCTK_DTYPE_INVALID && (size_t)t < NTYPES; }

size_t dctk_dtype_size(dctk_dtype t) { return valid(t) ? types[t].size : 0; }
bool dctk_dtype_is_float(dctk_dtype t) { return t == DCTK_FLOAT32 || t == DCTK_FLOAT64; }
bool dctk_dtype_is_signed(dctk_dtype t) { return (t >= DCTK_INT8 && t <= DCTK_INT64) || dctk_dtype_is_float(t); }
const char *dctk_dtype_name(dctk_dtype t) { return types[valid(t) ? t : 0].name; }
const char *dctk_dtype_numpy(dctk_dtype t) { return types[valid(t) ? t : 0].numpy; }

dctk_status dctk_dtype_parse(const char *s, dctk_dtype *out) {
    if (!s) return DCTK_FAIL(DCTK_ERR_ARG, "no data type given");
    for (size_t t = 1; t < NTYPES; t++) {
        const char *np = types[t].numpy;
        /* numpy strings: "<f4", "|i1", also "=f4" or a bare "f4"/"i1" */
        bool numpy_match = (s[0] == '<' || s[0] == '|' || s[0] == '=') ? strcmp(s + 1, np + 1) == 0
                                                                      : strcmp(s, np + 1) == 0;
        if (strcmp(s, types[t].name) == 0 || numpy_match) {
            *out = (dctk_dtype)t;
            return DCTK_OK;
        }
    }
    if (s[0] == '>') return DCTK_FAIL(DCTK_ERR_UNSUPPORTED, "big-endian data type '%s' is not supported", s);
    return DCTK_FAIL(DCTK_ERR_UNSUPPORTED, "unknown data type '%s'", s);
}

double dctk_load_f64(dctk_dtype t, const void *buf, size_t i) {
    switch (t) {
    case DCTK_INT8: return ((const int8_t *)buf)[i];
    case DCTK_INT16: return ((const int16_t *)buf)[i];
    case DCTK_INT32: return ((const int32_t *)buf)[i];
    case DCTK_INT64: return (double)((const int64_t *)buf)[i];
    case DCTK_UINT8: return ((const uint8_t *)buf)[i];
    case DCTK_UINT16: return ((const uint16_t *)buf)[i];
    case DCTK_UINT32: return ((const uint32_t *)buf)[i];
    case DCTK_UINT64: return (double)((const uint64_t *)buf)[i];
    case DCTK_FLOAT32: return ((const float *)buf)[i];
    case DCTK_FLOAT64: return ((const double *)buf)[i];
    default: return 0;
    }
}

void dctk_store_f64(dctk_dtype t, void *buf, size_t i, double v) {
    switch (t) {
    case DCTK_INT8: ((int8_t *)buf)[i] = (int8_t)v; break;
    case DCTK_INT16: ((int16_t *)buf)[i] = (int16_t)v; break;
    case DCTK_INT32: ((int32_t *)buf)[i] = (int32_t)v; break;
    case DCTK_INT64: ((int64_t *)buf)[i] = (int64_t)v; break;
    case DCTK_UINT8: ((uint8_t *)buf)[i] = (uint8_t)v; break;
    case DCTK_UINT16: ((uint16_t *)buf)[i] = (uint16_t)v; break;
    case DCTK_UINT32: ((uint32_t *)buf)[i] = (uint32_t)v; break;
    case DCTK_UINT64: ((uint64_t *)buf)[i] = (uint64_t)v; break;
    case DCTK_FLOAT32: ((float *)buf)[i] = (float)v; break;
    case DCTK_FLOAT64: ((double *)buf)[i] = v; break;
    default: break;
    }
}

#define SWAP_ALL(bits)                                                                                             \
    for (size_t k = 0; k < n; k += sizeof(uint##bits##_t)) {                                                       \
        uint##bits##_t x;                                                                                          \
        memcpy(&x, s + k, sizeof x);                                                                               \
        x = __builtin_bswap##bits(x);                                                                              \
        memcpy(d + k, &x, sizeof x);                                                                               \
    }
void dctk_swap_copy(void *dst, const void *src, size_t n, size_t es) {
    uint8_t *d = dst;
    const uint8_t *s = src;
    if (es == 2) SWAP_ALL(16)
    else if (es == 4) SWAP_ALL(32)
    else if (es == 8) SWAP_ALL(64)
    else if (es <= 1) memmove(d, s, n);
    else
        for (size_t i = 0; i < n; i += es)
            for (size_t lo = i, hi = i + es - 1; lo <= hi; lo++, hi--) {
                uint8_t t = s[lo];
                d[lo] = s[hi];
                d[hi] = t;
            }
}
#undef SWAP_ALL

size_t dctk_shape_nelems(int ndim, const size_t *shape) {
    size_t n = 1;
    for (int d = 0; d < ndim; d++) n *= shape[d];
    return n;
}

void dctk_block_at(int ndim, const size_t *shape, const size_t *block, const size_t *grid, size_t k, size_t *start,
                   size_t *count) {
    for (int d = ndim - 1; d >= 0; d--) {
        start[d] = k % grid[d] * block[d];
        k /= grid[d];
        count[d] = shape[d] - start[d] < block[d] ? shape[d] - start[d] : block[d];
    }
}

dctk_array dctk_array_view(dctk_dtype t, int ndim, const size_t *shape, void *data) {
    dctk_array a = {.dtype = t, .ndim = ndim, .data = data};
    ptrdiff_t s = 1;
    for (int d = ndim - 1; d >= 0; d--) {
        a.shape[d] = shape[d];
        a.stride[d] = s;
        s *= (ptrdiff_t)shape[d];
    }
    return a;
}

size_t dctk_array_nelems(const dctk_array *a) { return dctk_shape_nelems(a->ndim, a->shape); }
size_t dctk_array_nbytes(const dctk_array *a) { return dctk_array_nelems(a) * dctk_dtype_size(a->dtype); }

bool dctk_array_is_contiguous(const dctk_array *a) {
    ptrdiff_t s = 1;
    for (int d = a->ndim - 1; d >= 0; d--) {
        if (a->shape[d] > 1 && a->stride[d] != s) return false;
        s *= (ptrdiff_t)a->shape[d];
    }
    return true;
}

char *dctk_shape_str(int ndim, const size_t *shape, char *buf, size_t cap) {
    size_t k = (size_t)snprintf(buf, cap, "[");
    for (int d = 0; d < ndim && k < cap; d++)
        k += (size_t)snprintf(buf + k, cap - k, "%s%zu", d ? ", " : "", shape[d]);
    if (k < cap) snprintf(buf + k, cap - k, "]");
    return buf;
}
