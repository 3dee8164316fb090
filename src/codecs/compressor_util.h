/* Private to the bytes->bytes compressors (blosc.c, zstd.c, deflate.c, lz4.c,
 * bz2.c, lzma.c, shuffle.c): output limits and buffer growth for decoders
 * that do not know their output size up front, and small config helpers. */
#ifndef DCTK_COMPRESSOR_UTIL_H
#define DCTK_COMPRESSOR_UTIL_H

#include "codec_internal.h"

/* Largest output a compressor's decode may produce for a chunk whose array is
 * `in`. A compressor sees the serializer's output: the raw chunk for "bytes"
 * and "numcodecs.shuffle", less for most lossy serializers, a little more for
 * a stacked compressor's frame. Twice the raw size plus 1 MiB covers these.
 * A ZFP stream at a high rate or precision may be several times the raw
 * chunk (a length-1 axis fills only a quarter of each block): its bound
 * arrives through the context (dctk_codec_ctx_set_stream_cap), and the limit
 * is the larger of the two. A forged size field never makes us allocate
 * more than that. */
size_t dctk_cmp_limit(const dctk_codec_ctx *ctx, const dctk_chunk_spec *in);

/* The first capacity to try when the output size is not stored: the raw
 * chunk size, which is exact after "bytes", capped by the limit. */
size_t dctk_cmp_hint(const dctk_codec_ctx *ctx, const dctk_chunk_spec *in);

/* Make sure dst has room past dst->size, growing by doubling from `hint`
 * but never beyond `limit`. Fails with DCTK_ERR_CORRUPT naming `codec` when
 * dst already holds `limit` bytes and the stream wants to write more.
 * Returns the number of bytes that may be written at dst->data + dst->size. */
dctk_status dctk_cmp_room(dctk_buf *dst, size_t hint, size_t limit, const char *codec, size_t *avail);

/* A boolean key (true/false; 0/1 accepted too). */
dctk_status dctk_conf_bool(const json_t *conf, const char *codec, const char *key, bool def, bool *out);

/* An integer key that must lie in [lo, hi]. */
dctk_status dctk_conf_int_range(const json_t *conf, const char *codec, const char *key, long long def,
                                long long lo, long long hi, long long *out);

/* The grid of a plain compressor: one member per value v, the codec object
 * made by conf_of(v), preceded by a byte shuffle in the second round. */
dctk_status dctk_cmp_grid(const dctk_grid_in *in, const dctk_grid_sink *sink, const char *name,
                          json_t *(*conf_of)(int v), const int *values, int n);
/* The byte shuffle the space puts before a compressor (shuffle.c). */
json_t *dctk_shuffle_grid_codec(size_t elementsize);

/* destroy() of every compressor: its instance is one flat struct. */
void dctk_cmp_destroy(dctk_codec *c);

#endif
