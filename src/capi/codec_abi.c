/* C entry points for the Python package in python/ (ctypes): encode and
 * decode one chunk with one codec, named by its Zarr v3 JSON object. Plain C
 * types only, so that a caller needs no header of ours; every failure is a
 * non-zero dctk_status with its detail copied into err. Built as the shared
 * library libdctk_codec_abi (python/CMakeLists.txt), linked with libdctk_codecs. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "dctk/alloc.h"
#include "dctk/codec.h"

/* The codec and chunk spec of a call, or a failure with its detail. */
static dctk_status prepare(const char *codec_json, const char *dtype, int ndim, const uint64_t *shape,
                           dctk_codec **codec, dctk_chunk_spec *spec) {
    dctk_dtype t;
    DCTK_TRY(dctk_dtype_parse(dtype, &t));
    if (ndim < 1 || ndim > DCTK_MAX_DIMS) return DCTK_FAIL(DCTK_ERR_ARG, "a chunk has 1 to %d dimensions, not %d",
                                                           DCTK_MAX_DIMS, ndim);
    size_t sh[DCTK_MAX_DIMS];
    for (int d = 0; d < ndim; d++) sh[d] = (size_t)shape[d];
    *spec = dctk_spec_make(t, ndim, sh);
    return dctk_codec_from_string(codec_json, codec);
}

static int finish(dctk_status st, char *err, size_t errcap) {
    if (err && errcap) snprintf(err, errcap, "%s", st == DCTK_OK ? "" : dctk_detail());
    return (int)st;
}

/* Encode the n bytes at src (a C-order chunk of dtype and shape) into a new
 * buffer *out of *out_n bytes, freed with dctk_codec_abi_free. */
DCTK_API int dctk_codec_abi_encode(const char *codec_json, const char *dtype, int ndim, const uint64_t *shape,
                          const void *src, size_t n, void **out, size_t *out_n, char *err, size_t errcap) {
    dctk_codec *c = NULL;
    dctk_chunk_spec spec;
    dctk_codec_ctx *ctx = NULL;
    dctk_buf b = DCTK_BUF_INIT;
    *out = NULL;
    *out_n = 0;
    dctk_status st = prepare(codec_json, dtype, ndim, shape, &c, &spec);
    if (st == DCTK_OK && n != dctk_spec_nbytes(&spec))
        st = DCTK_FAIL(DCTK_ERR_ARG, "%zu bytes given for a chunk of %zu", n, dctk_spec_nbytes(&spec));
    if (st == DCTK_OK && !(ctx = dctk_codec_ctx_new())) st = DCTK_NOMEM();
    if (st == DCTK_OK) st = dctk_codec_encode(c, ctx, &spec, src, n, &b);
    if (st == DCTK_OK) {
        *out = b.data;
        *out_n = b.size;
    } else {
        dctk_buf_free(&b);
    }
    dctk_codec_ctx_free(ctx);
    dctk_codec_free(c);
    return finish(st, err, errcap);
}

/* Decode the n encoded bytes at src into dst, which holds exactly the chunk
 * (dst_n bytes: its elements of dtype and shape). */
DCTK_API int dctk_codec_abi_decode(const char *codec_json, const char *dtype, int ndim, const uint64_t *shape,
                          const void *src, size_t n, void *dst, size_t dst_n, char *err, size_t errcap) {
    dctk_codec *c = NULL;
    dctk_chunk_spec spec;
    dctk_codec_ctx *ctx = NULL;
    dctk_buf b = DCTK_BUF_INIT;
    dctk_status st = prepare(codec_json, dtype, ndim, shape, &c, &spec);
    if (st == DCTK_OK && c->vt->kind == DCTK_CODEC_BB)
        st = DCTK_FAIL(DCTK_ERR_ARG, "codec '%s' decodes bytes to bytes, not to a chunk", c->vt->name);
    if (st == DCTK_OK && dst_n != dctk_spec_nbytes(&spec))
        st = DCTK_FAIL(DCTK_ERR_ARG, "the output holds %zu bytes, the chunk %zu", dst_n, dctk_spec_nbytes(&spec));
    if (st == DCTK_OK && !(ctx = dctk_codec_ctx_new())) st = DCTK_NOMEM();
    if (st == DCTK_OK) st = dctk_codec_decode(c, ctx, &spec, src, n, &b);
    if (st == DCTK_OK && b.size != dst_n)
        st = DCTK_FAIL(DCTK_ERR_CORRUPT, "codec '%s' decoded %zu bytes, not %zu", c->vt->name, b.size, dst_n);
    if (st == DCTK_OK) memcpy(dst, b.data, dst_n);
    dctk_buf_free(&b);
    dctk_codec_ctx_free(ctx);
    dctk_codec_free(c);
    return finish(st, err, errcap);
}

DCTK_API void dctk_codec_abi_free(void *p) { dctk_free(p); }
