/* "zstd" {level, checksum} (bytes->bytes, Zarr v3 core).
 *
 * Encode writes exactly one frame with the content size set (what
 * numcodecs 0.11 requires to decode), with an XXH64 checksum when asked.
 * Decode accepts one or more frames; when every frame states its content
 * size the output is allocated once, otherwise (frames written by streaming
 * encoders) it streams into a growing buffer. Either way the output is capped
 * by what a chunk of the array can hold. Contexts live in the per-thread
 * dctk_codec_ctx so that a sweep does not allocate per chunk. */
#define ZSTD_STATIC_LINKING_ONLY /* ZSTD_estimate*: the memory budget's figures */
#include <zstd.h>

#include "compressor_util.h"

typedef struct {
    dctk_codec base;
    long long level;
    bool checksum;
} zstd_codec;

static dctk_status zstd_create(const json_t *conf, dctk_codec **out) {
    static const char *const known[] = {"level", "checksum", NULL};
    DCTK_TRY(dctk_conf_only(conf, "zstd", known));
    long long level;
    bool checksum;
    DCTK_TRY(dctk_conf_int_range(conf, "zstd", "level", 0, ZSTD_minCLevel(), ZSTD_maxCLevel(), &level));
    DCTK_TRY(dctk_conf_bool(conf, "zstd", "checksum", false, &checksum));
    zstd_codec *c = DCTK_CODEC_ALLOC(zstd_codec, &dctk_codec_zstd);
    if (!c) return DCTK_NOMEM();
    c->level = level;
    c->checksum = checksum;
    *out = &c->base;
    return DCTK_OK;
}

static json_t *zstd_to_json(const dctk_codec *base) {
    const zstd_codec *c = (const zstd_codec *)base;
    return dctk_codec_object("zstd", json_pack("{s:I,s:b}", "level", (json_int_t)c->level, "checksum", c->checksum));
}

/* --- the per-thread state: one compression and one decompression context,
 * each made on first use (a thread that only reads never makes the first) */

typedef struct {
    ZSTD_CCtx *c;
    ZSTD_DCtx *d;
} zstd_state;

static void *zstd_state_new(void) { return dctk_calloc(1, sizeof(zstd_state)); }

static void zstd_state_free(void *p) {
    zstd_state *s = p;
    if (!s) return;
    ZSTD_freeCCtx(s->c);
    ZSTD_freeDCtx(s->d);
    dctk_free(s);
}

const dctk_codec_ctx_type dctk_zstd_ctx_type = {"zstd", zstd_state_new, zstd_state_free};

ZSTD_CCtx *dctk_zstd_cctx(dctk_codec_ctx *ctx) {
    zstd_state *s = dctk_codec_ctx_state(ctx, &dctk_zstd_ctx_type);
    if (s && !s->c && !(s->c = ZSTD_createCCtx())) (void)DCTK_FAIL(DCTK_ERR_NOMEM, "zstd: cannot create a compression context");
    return s ? s->c : NULL;
}

ZSTD_DCtx *dctk_zstd_dctx(dctk_codec_ctx *ctx) {
    zstd_state *s = dctk_codec_ctx_state(ctx, &dctk_zstd_ctx_type);
    if (s && !s->d && !(s->d = ZSTD_createDCtx())) (void)DCTK_FAIL(DCTK_ERR_NOMEM, "zstd: cannot create a decompression context");
    return s ? s->d : NULL;
}

static dctk_status compress_frame(const zstd_codec *c, ZSTD_CCtx *z, const void *src, size_t n, dctk_buf *dst) {
    ZSTD_CCtx_reset(z, ZSTD_reset_session_and_parameters);
    size_t r = ZSTD_CCtx_setParameter(z, ZSTD_c_compressionLevel, (int)c->level);
    if (!ZSTD_isError(r)) r = ZSTD_CCtx_setParameter(z, ZSTD_c_checksumFlag, c->checksum);
    if (!ZSTD_isError(r)) r = ZSTD_CCtx_setParameter(z, ZSTD_c_contentSizeFlag, 1);
    if (ZSTD_isError(r)) return DCTK_FAIL(DCTK_ERR_CODEC, "zstd: %s", ZSTD_getErrorName(r));
    DCTK_TRY(dctk_buf_resize(dst, ZSTD_compressBound(n)));
    r = ZSTD_compress2(z, dst->data, dst->cap, src, n);
    if (ZSTD_isError(r)) return DCTK_FAIL(DCTK_ERR_CODEC, "zstd: %s", ZSTD_getErrorName(r));
    dst->size = r;
    return DCTK_OK;
}

static size_t zstd_bound(const dctk_codec *c, const dctk_chunk_spec *in, size_t n) {
    (void)c, (void)in;
    return ZSTD_compressBound(n);
}

static dctk_status zstd_encode(const dctk_codec *base, dctk_codec_ctx *ctx, const dctk_chunk_spec *in,
                               const void *src, size_t n, dctk_buf *dst) {
    (void)in;
    ZSTD_CCtx *z = dctk_zstd_cctx(ctx);
    if (!z) return DCTK_ERR_NOMEM;
    return compress_frame((const zstd_codec *)base, z, src, n, dst);
}

/* Frames without a content size: stream, growing dst up to limit. */
static dctk_status decode_stream(ZSTD_DCtx *z, const void *src, size_t n, size_t hint, size_t limit, dctk_buf *dst) {
    ZSTD_inBuffer ib = {src, n, 0};
    size_t r = 1;
    dst->size = 0;
    while (ib.pos < ib.size || r != 0) {
        size_t avail;
        DCTK_TRY(dctk_cmp_room(dst, hint, limit, "zstd", &avail));
        ZSTD_outBuffer ob = {dst->data + dst->size, avail, 0};
        r = ZSTD_decompressStream(z, &ob, &ib);
        if (ZSTD_isError(r)) return DCTK_FAIL(DCTK_ERR_CORRUPT, "zstd: %s", ZSTD_getErrorName(r));
        dst->size += ob.pos;
        /* zstd flushes all it can: output room left with no input means the frame is cut */
        if (r != 0 && ib.pos == ib.size && ob.pos < avail)
            return DCTK_FAIL(DCTK_ERR_CORRUPT, "zstd: truncated frame");
    }
    return DCTK_OK;
}

/* Total content size of all frames, or ZSTD_CONTENTSIZE_UNKNOWN / _ERROR
 * (ZSTD_findDecompressedSize is not in zstd's stable API). */
static unsigned long long content_size(const uint8_t *src, size_t n) {
    unsigned long long total = 0;
    while (n > 0) {
        size_t fs = ZSTD_findFrameCompressedSize(src, n);
        if (ZSTD_isError(fs)) return ZSTD_CONTENTSIZE_ERROR;
        unsigned long long cs = ZSTD_getFrameContentSize(src, fs);
        if (cs == ZSTD_CONTENTSIZE_ERROR || cs == ZSTD_CONTENTSIZE_UNKNOWN) return cs;
        if (cs > ZSTD_CONTENTSIZE_ERROR - 1 - total) return ZSTD_CONTENTSIZE_ERROR;
        total += cs;
        src += fs;
        n -= fs;
    }
    return total;
}

static dctk_status decode_frames(ZSTD_DCtx *z, const dctk_codec_ctx *ctx, const dctk_chunk_spec *in,
                                 const void *src, size_t n, dctk_buf *dst) {
    size_t limit = dctk_cmp_limit(ctx, in);
    unsigned long long size = content_size(src, n);
    if (size == ZSTD_CONTENTSIZE_ERROR) return DCTK_FAIL(DCTK_ERR_CORRUPT, "zstd: not a valid zstd frame");
    ZSTD_DCtx_reset(z, ZSTD_reset_session_and_parameters);
    if (size == ZSTD_CONTENTSIZE_UNKNOWN) return decode_stream(z, src, n, dctk_cmp_hint(ctx, in), limit, dst);
    if (size > limit)
        return DCTK_FAIL(DCTK_ERR_CORRUPT, "zstd: frame claims %llu bytes, more than a chunk of this array holds", size);
    DCTK_TRY(dctk_buf_reserve(dst, size ? (size_t)size : 1));
    size_t r = ZSTD_decompressDCtx(z, dst->data, (size_t)size, src, n);
    if (ZSTD_isError(r)) return DCTK_FAIL(DCTK_ERR_CORRUPT, "zstd: %s", ZSTD_getErrorName(r));
    if (r != size) return DCTK_FAIL(DCTK_ERR_CORRUPT, "zstd: decoded %zu bytes, frame says %llu", r, size);
    dst->size = r;
    return DCTK_OK;
}

static dctk_status zstd_decode(const dctk_codec *c, dctk_codec_ctx *ctx, const dctk_chunk_spec *in,
                               const void *src, size_t n, dctk_buf *dst) {
    (void)c;
    if (n == 0) return DCTK_FAIL(DCTK_ERR_CORRUPT, "zstd: empty input is not a frame");
    ZSTD_DCtx *z = dctk_zstd_dctx(ctx);
    if (!z) return DCTK_ERR_NOMEM;
    return decode_frames(z, ctx, in, src, n, dst);
}

/* zstd's own estimate of a compression context for this level and input
 * size (the parameters it picks for n bytes) and of a decompression context
 * into a buffer. */
static size_t zstd_work_mem(const dctk_codec *base, const dctk_chunk_spec *in, size_t n) {
    (void)in;
    const zstd_codec *c = (const zstd_codec *)base;
    ZSTD_compressionParameters p = ZSTD_getCParams((int)c->level, n, 0);
    return ZSTD_estimateCCtxSize_usingCParams(p) + ZSTD_estimateDCtxSize();
}

static json_t *zstd_grid_conf(int v) { return json_pack("{s:i,s:b}", "level", v, "checksum", 0); }

/* The Python tool's grid: level 0, 1, 9, 22. */
static dctk_status zstd_grid(const dctk_grid_in *in, const dctk_grid_sink *sink) {
    static const int values[] = {0, 1, 9, 22};
    return dctk_cmp_grid(in, sink, "zstd", zstd_grid_conf, values, 4);
}

static const dctk_codec_example zstd_examples[] = {
    {"float32", "{\"name\":\"zstd\",\"configuration\":{\"level\":1,\"checksum\":false}}"},
    {"float64", "{\"name\":\"zstd\",\"configuration\":{\"level\":3,\"checksum\":true}}"},
    {NULL, NULL},
};

/* A Zarr v2 numcodecs Zstd object may leave out checksum (off). */
static void zstd_from_v2(json_t *conf, dctk_dtype t) {
    (void)t;
    if (!json_object_get(conf, "checksum")) json_object_set_new(conf, "checksum", json_false());
}

const dctk_codec_vt dctk_codec_zstd = {
    .name = "zstd", .kind = DCTK_CODEC_BB, .lossless = true,
    .create = zstd_create, .destroy = dctk_cmp_destroy, .to_json = zstd_to_json,
    .encode = zstd_encode, .decode = zstd_decode, .bound = zstd_bound, .work_mem = zstd_work_mem,
    .space_v1 = true, .family = "zstd", .portability = DCTK_PORT_CORE, .nan_exact = true,
    .ctx_type = &dctk_zstd_ctx_type, .grid = zstd_grid, .examples = zstd_examples,
    .scout = DCTK_SCOUT_PLAIN | DCTK_SCOUT_SHUFFLED, .level_key = "level", .default_lossless = true,
    .coordinate = "{\"name\":\"zstd\",\"configuration\":{\"level\":5,\"checksum\":false}}",
    .v2_id = "zstd", .from_v2 = zstd_from_v2,
};
