/* "gzip" {level} (Zarr v3 core, RFC 1952) and "numcodecs.zlib" {level}
 * (RFC 1950): the same deflate stream in two wrappers.
 *
 * Encoding goes through libdeflate, whole buffer at a time: its streams are
 * ordinary RFC 1950/1952 streams that zlib (and so numcodecs and every
 * Zarr reader) inflates, and at level 1 it is about 2-3x faster than zlib
 * with a ratio as good (bench/compress.py measures both). The bytes differ
 * from zlib's; the codec JSON, which is all the space fingerprint covers,
 * does not. The gzip header carries mtime 0 and OS 255 ("unknown", what
 * Python's gzip module writes), so our output does not depend on the clock
 * or the host.
 *
 * Decoding first tries libdeflate into a buffer of the chunk's raw size (the
 * common case: one stream that fills the chunk); anything else (several gzip
 * members, zero padding, a larger output, a corrupt stream) goes through
 * zlib's streaming inflate into a growing buffer capped by what a chunk of
 * the array can hold, which also words the errors. gzip accepts several
 * members and trailing zero padding, as Python's gzip reader does; zlib
 * refuses bytes after the stream. */
#include <libdeflate.h>
#include <limits.h>
#include <zlib.h>

#include "compressor_util.h"

typedef struct {
    dctk_codec base;
    long long level;
    bool gzip;
} deflate_codec;

static const char *codec_name(bool gzip) { return gzip ? "gzip" : "numcodecs.zlib"; }

static dctk_status deflate_create(const json_t *conf, dctk_codec **out, bool gzip, long long def,
                                  const dctk_codec_vt *vt) {
    static const char *const known[] = {"level", NULL};
    DCTK_TRY(dctk_conf_only(conf, codec_name(gzip), known));
    long long level;
    DCTK_TRY(dctk_conf_int_range(conf, codec_name(gzip), "level", def, -1, 9, &level));
    deflate_codec *c = DCTK_CODEC_ALLOC(deflate_codec, vt);
    if (!c) return DCTK_NOMEM();
    c->level = level;
    c->gzip = gzip;
    *out = &c->base;
    return DCTK_OK;
}

/* Defaults: zarr-python's GzipCodec uses 5, numcodecs' Zlib 1. */
static dctk_status gzip_create(const json_t *conf, dctk_codec **out) {
    return deflate_create(conf, out, true, 5, &dctk_codec_gzip);
}

static dctk_status zlib_create(const json_t *conf, dctk_codec **out) {
    return deflate_create(conf, out, false, 1, &dctk_codec_zlib);
}

static json_t *deflate_to_json(const dctk_codec *base) {
    const deflate_codec *c = (const deflate_codec *)base;
    return dctk_codec_object(codec_name(c->gzip), json_pack("{s:I}", "level", (json_int_t)c->level));
}

/* Feed input in pieces zlib's 32-bit counters can hold. */
static void feed(z_stream *z, const uint8_t *src, size_t n, size_t *used) {
    if (z->avail_in > 0 || *used >= n) return;
    size_t k = n - *used < UINT_MAX ? n - *used : UINT_MAX;
    z->next_in = (Bytef *)(src + *used);
    z->avail_in = (uInt)k;
    *used += k;
}

/* zlib's level -1 is its default, 6; libdeflate has no such alias. */
static int libdeflate_level(long long level) { return level < 0 ? 6 : (int)level; }

/* Any libdeflate compressor's worst case (NULL), so the pipeline may let us
 * write straight into the free tail of a shard buffer. */
static size_t deflate_bound(const dctk_codec *base, const dctk_chunk_spec *in, size_t n) {
    (void)in;
    return ((const deflate_codec *)base)->gzip ? libdeflate_gzip_compress_bound(NULL, n)
                                               : libdeflate_zlib_compress_bound(NULL, n);
}

/* --- the per-thread state: a compressor per level and one decompressor, each
 * made on first use. A level-1 compressor is a few hundred KiB whose pages
 * are faulted in afresh at every allocation; kept, a write's chunks reuse it. */

typedef struct {
    struct libdeflate_compressor *c[13]; /* by libdeflate level, 0-12 */
    struct libdeflate_decompressor *d;
} deflate_state;

static void *deflate_state_new(void) { return dctk_calloc(1, sizeof(deflate_state)); }

static void deflate_state_free(void *p) {
    deflate_state *s = p;
    if (!s) return;
    for (int i = 0; i < 13; i++) libdeflate_free_compressor(s->c[i]);
    libdeflate_free_decompressor(s->d);
    dctk_free(s);
}

static const dctk_codec_ctx_type deflate_ctx_type = {"deflate", deflate_state_new, deflate_state_free};

static struct libdeflate_compressor *compressor_for(dctk_codec_ctx *ctx, int level) {
    deflate_state *s = dctk_codec_ctx_state(ctx, &deflate_ctx_type);
    if (s && !s->c[level]) s->c[level] = libdeflate_alloc_compressor(level);
    return s ? s->c[level] : NULL;
}

static dctk_status deflate_encode(const dctk_codec *base, dctk_codec_ctx *ctx, const dctk_chunk_spec *in,
                                  const void *src, size_t n, dctk_buf *dst) {
    const deflate_codec *c = (const deflate_codec *)base;
    const char *name = codec_name(c->gzip);
    struct libdeflate_compressor *z = compressor_for(ctx, libdeflate_level(c->level));
    if (!z) return DCTK_FAIL(DCTK_ERR_NOMEM, "%s: cannot initialise deflate", name);
    DCTK_TRY(dctk_buf_reserve(dst, deflate_bound(base, in, n)));
    dst->size = c->gzip ? libdeflate_gzip_compress(z, src, n, dst->data, dst->cap)
                        : libdeflate_zlib_compress(z, src, n, dst->data, dst->cap);
    if (dst->size == 0) return DCTK_FAIL(DCTK_ERR_CODEC, "%s: deflate failed", name);
    return DCTK_OK;
}

/* One stream that inflates to exactly `hint` bytes and ends the input: true
 * when libdeflate did it, false to let zlib's path handle (and word) the rest. */
static bool inflate_fast(dctk_codec_ctx *ctx, const uint8_t *src, size_t n, bool gzip, size_t hint, dctk_buf *dst) {
    if (hint == 0 || dctk_buf_reserve(dst, hint) != DCTK_OK) return false;
    deflate_state *s = dctk_codec_ctx_state(ctx, &deflate_ctx_type);
    if (s && !s->d) s->d = libdeflate_alloc_decompressor();
    struct libdeflate_decompressor *d = s ? s->d : NULL;
    if (!d) return false;
    size_t used = 0, got = 0;
    enum libdeflate_result r = gzip ? libdeflate_gzip_decompress_ex(d, src, n, dst->data, hint, &used, &got)
                                    : libdeflate_zlib_decompress_ex(d, src, n, dst->data, hint, &used, &got);
    if (r != LIBDEFLATE_SUCCESS || used != n || got != hint) return false;
    dst->size = got;
    return true;
}

/* Skip the zero padding Python's gzip reader tolerates between members. */
static size_t skip_zeros(const uint8_t *s, size_t n, size_t at) {
    while (at < n && s[at] == 0) at++;
    return at;
}

/* Inflate every member of src into dst. */
static dctk_status inflate_all(z_stream *z, const uint8_t *src, size_t n, bool gzip, size_t hint, size_t limit,
                               dctk_buf *dst) {
    const char *name = codec_name(gzip);
    size_t used = 0;
    dst->size = 0;
    for (;;) {
        size_t avail;
        DCTK_TRY(dctk_cmp_room(dst, hint, limit, name, &avail));
        feed(z, src, n, &used);
        z->next_out = dst->data + dst->size;
        z->avail_out = (uInt)(avail < UINT_MAX ? avail : UINT_MAX);
        uInt before = z->avail_out;
        int r = inflate(z, Z_NO_FLUSH);
        dst->size += before - z->avail_out;
        if (r == Z_STREAM_END) {
            size_t at = used - z->avail_in;
            if (gzip) at = skip_zeros(src, n, at);
            if (at == n) return DCTK_OK;
            if (!gzip) return DCTK_FAIL(DCTK_ERR_CORRUPT, "%s: %zu bytes after the end of the stream", name, n - at);
            inflateReset(z);
            z->next_in = (Bytef *)(src + at), z->avail_in = 0, used = at;
            continue;
        }
        if (r == Z_BUF_ERROR && z->avail_in == 0 && used == n)
            return DCTK_FAIL(DCTK_ERR_CORRUPT, "%s: truncated stream", name);
        if (r != Z_OK && r != Z_BUF_ERROR)
            return DCTK_FAIL(DCTK_ERR_CORRUPT, "%s: corrupt stream (%s)", name, z->msg ? z->msg : "inflate failed");
    }
}

static dctk_status deflate_decode(const dctk_codec *base, dctk_codec_ctx *ctx, const dctk_chunk_spec *in,
                                  const void *src, size_t n, dctk_buf *dst) {
    const deflate_codec *c = (const deflate_codec *)base;
    if (n == 0) return DCTK_FAIL(DCTK_ERR_CORRUPT, "%s: empty input is not a stream", codec_name(c->gzip));
    if (inflate_fast(ctx, src, n, c->gzip, dctk_cmp_hint(ctx, in), dst)) return DCTK_OK;
    z_stream z = {0};
    if (inflateInit2(&z, c->gzip ? 16 + MAX_WBITS : MAX_WBITS) != Z_OK)
        return DCTK_FAIL(DCTK_ERR_NOMEM, "%s: cannot initialise inflate", codec_name(c->gzip));
    dctk_status st = inflate_all(&z, src, n, c->gzip, dctk_cmp_hint(ctx, in), dctk_cmp_limit(ctx, in), dst);
    inflateEnd(&z);
    return st;
}

static json_t *level_conf(int v) { return json_pack("{s:i}", "level", v); }

/* The Python tool's grid for both: level 1, 6, 9. */
static const int levels[] = {1, 6, 9};

static dctk_status gzip_grid(const dctk_grid_in *in, const dctk_grid_sink *sink) {
    return dctk_cmp_grid(in, sink, "gzip", level_conf, levels, 3);
}

static dctk_status zlib_grid(const dctk_grid_in *in, const dctk_grid_sink *sink) {
    return dctk_cmp_grid(in, sink, "numcodecs.zlib", level_conf, levels, 3);
}

static const dctk_codec_example gzip_examples[] = {
    {"float32", "{\"name\":\"gzip\",\"configuration\":{\"level\":6}}"},
    {NULL, NULL},
};

static const dctk_codec_example zlib_examples[] = {
    {"float64", "{\"name\":\"numcodecs.zlib\",\"configuration\":{\"level\":1}}"},
    {NULL, NULL},
};

/* libdeflate's compressor (its hash tables: about 0.55 MiB from level 2 up,
 * 0.15 MiB at level 1) and zlib's inflate window, measured by
 * test_codec_memory. */
static size_t deflate_work_mem(const dctk_codec *base, const dctk_chunk_spec *in, size_t n) {
    (void)in, (void)n;
    return libdeflate_level(((const deflate_codec *)base)->level) <= 1 ? 160u << 10 : 576u << 10;
}

const dctk_codec_vt dctk_codec_gzip = {
    .name = "gzip", .kind = DCTK_CODEC_BB, .lossless = true,
    .create = gzip_create, .destroy = dctk_cmp_destroy, .to_json = deflate_to_json,
    .encode = deflate_encode, .decode = deflate_decode, .bound = deflate_bound, .work_mem = deflate_work_mem,
    .space_v1 = true, .family = "gzip", .portability = DCTK_PORT_CORE, .nan_exact = true,
    .grid = gzip_grid, .examples = gzip_examples, .ctx_type = &deflate_ctx_type,
    .level_key = "level", .v2_id = "gzip",
};

const dctk_codec_vt dctk_codec_zlib = {
    .name = "numcodecs.zlib", .kind = DCTK_CODEC_BB, .lossless = true,
    .create = zlib_create, .destroy = dctk_cmp_destroy, .to_json = deflate_to_json,
    .encode = deflate_encode, .decode = deflate_decode, .bound = deflate_bound, .work_mem = deflate_work_mem,
    .space_v1 = true, .family = "zlib", .portability = DCTK_PORT_NUMCODECS, .nan_exact = true,
    .grid = zlib_grid, .examples = zlib_examples, .ctx_type = &deflate_ctx_type,
    .scout = DCTK_SCOUT_PLAIN, .level_key = "level",
};
