/* "blosc" {cname, clevel, shuffle, typesize, blocksize} (bytes->bytes, Zarr
 * v3 core), through c-blosc 1.x: the chunk format is the library's (a 16-byte
 * header with version, flags, typesize, nbytes, blocksize and cbytes, then
 * the block offsets and the compressed blocks).
 *
 * The context calls (blosc_compress_ctx / blosc_decompress_ctx) with one
 * internal thread keep blosc's global state and its thread pool out of the
 * way: the sweep runs its own threads, and no environment variable can
 * change what we asked for.
 *
 * Configuration as zarr-python v3 writes it. When typesize or shuffle is
 * absent we resolve them at encode time the way zarr-python does: typesize
 * = element size of the array, shuffle = bitshuffle for 1-byte elements and
 * byte shuffle otherwise; to_json then omits what was not given. */
#include <blosc.h>
#define ZSTD_STATIC_LINKING_ONLY /* ZSTD_estimate*: blosc-zstd's working memory */
#include <zstd.h>

#include "compressor_util.h"

enum { SHUF_AUTO = -1 };

typedef struct {
    dctk_codec base;
    char cname[16];
    int clevel;
    int shuffle;     /* BLOSC_NOSHUFFLE, BLOSC_SHUFFLE, BLOSC_BITSHUFFLE or SHUF_AUTO */
    long long typesize; /* 0: the array's element size */
    long long blocksize;
} blosc_codec;

static const char *const shuffle_names[] = {"noshuffle", "shuffle", "bitshuffle"};

/* numcodecs' rule for AUTOSHUFFLE: bit shuffle for single bytes, else byte shuffle. */
static int auto_shuffle(size_t typesize) { return typesize == 1 ? BLOSC_BITSHUFFLE : BLOSC_SHUFFLE; }

/* zarr-python writes the name; numcodecs' Blosc takes the integer (-1 for
 * AUTOSHUFFLE, 0, 1, 2), which the codec space keeps for "auto". */
static dctk_status parse_shuffle(const json_t *conf, int *out) {
    const json_t *v = conf ? json_object_get(conf, "shuffle") : NULL;
    if (json_is_integer(v)) {
        long long k;
        DCTK_TRY(dctk_conf_int_range(conf, "blosc", "shuffle", SHUF_AUTO, SHUF_AUTO, BLOSC_BITSHUFFLE, &k));
        *out = (int)k;
        return DCTK_OK;
    }
    const char *s;
    DCTK_TRY(dctk_conf_str(conf, "blosc", "shuffle", false, NULL, &s));
    *out = SHUF_AUTO;
    if (!s) return DCTK_OK;
    for (int i = 0; i < 3; i++)
        if (strcmp(s, shuffle_names[i]) == 0) *out = i;
    if (*out == SHUF_AUTO)
        return DCTK_FAIL(DCTK_ERR_ARG, "codec 'blosc': shuffle must be \"noshuffle\", \"shuffle\" or \"bitshuffle\", "
                                       "not \"%s\"", s);
    return DCTK_OK;
}

static dctk_status parse_cname(const json_t *conf, char *out, size_t cap) {
    const char *s;
    DCTK_TRY(dctk_conf_str(conf, "blosc", "cname", false, "zstd", &s));
    if (strlen(s) >= cap || blosc_compname_to_compcode(s) < 0)
        return DCTK_FAIL(DCTK_ERR_ARG, "codec 'blosc': cname \"%s\" is not one this blosc library provides", s);
    strcpy(out, s);
    return DCTK_OK;
}

/* 0 when absent: resolved from the array at encode time. */
static dctk_status parse_typesize(const json_t *conf, long long *out) {
    const json_t *v = conf ? json_object_get(conf, "typesize") : NULL;
    *out = 0;
    if (!v || json_is_null(v)) return DCTK_OK;
    return dctk_conf_int_range(conf, "blosc", "typesize", 0, 1, INT32_MAX, out);
}

static dctk_status blosc_create(const json_t *conf, dctk_codec **out) {
    static const char *const known[] = {"cname", "clevel", "shuffle", "typesize", "blocksize", NULL};
    DCTK_TRY(dctk_conf_only(conf, "blosc", known));
    blosc_codec tmp = {0};
    long long clevel;
    DCTK_TRY(parse_cname(conf, tmp.cname, sizeof tmp.cname));
    DCTK_TRY(dctk_conf_int_range(conf, "blosc", "clevel", 5, 0, 9, &clevel));
    DCTK_TRY(parse_shuffle(conf, &tmp.shuffle));
    DCTK_TRY(parse_typesize(conf, &tmp.typesize));
    DCTK_TRY(dctk_conf_int_range(conf, "blosc", "blocksize", 0, 0, BLOSC_MAX_BUFFERSIZE, &tmp.blocksize));
    tmp.clevel = (int)clevel;
    blosc_codec *c = DCTK_CODEC_ALLOC(blosc_codec, &dctk_codec_blosc);
    if (!c) return DCTK_NOMEM();
    tmp.base = c->base;
    *c = tmp;
    *out = &c->base;
    return DCTK_OK;
}

static json_t *blosc_to_json(const dctk_codec *base) {
    const blosc_codec *c = (const blosc_codec *)base;
    json_t *conf = json_pack("{s:s,s:i}", "cname", c->cname, "clevel", c->clevel);
    if (c->shuffle != SHUF_AUTO) json_object_set_new(conf, "shuffle", json_string(shuffle_names[c->shuffle]));
    if (c->typesize > 0) json_object_set_new(conf, "typesize", json_integer(c->typesize));
    json_object_set_new(conf, "blocksize", json_integer(c->blocksize));
    return dctk_codec_object("blosc", conf);
}

static size_t blosc_bound(const dctk_codec *c, const dctk_chunk_spec *in, size_t n) {
    (void)c, (void)in;
    return n + BLOSC_MAX_OVERHEAD;
}

/* blosc's scratch (about four blocks; the block grows with clevel, and is
 * 4 times larger for zstd, twice for zlib) and, for zstd, a
 * compression context at the level blosc maps clevel to (2 clevel - 1, 9
 * -> zstd's maximum) for one block. Fitted by test_codec_memory. */
static size_t blosc_work_mem(const dctk_codec *base, const dctk_chunk_spec *in, size_t n) {
    (void)in;
    const blosc_codec *c = (const blosc_codec *)base;
    bool zstd = !strcmp(c->cname, "zstd");
    size_t block = c->blocksize > 0 ? (size_t)c->blocksize : c->clevel >= 9 ? 256u << 10 : c->clevel >= 6 ? 128u << 10 : 64u << 10;
    if (c->blocksize <= 0) block *= zstd ? 4 : !strcmp(c->cname, "zlib") ? 2 : 1;
    if (block > n && n > 0) block = n;
    size_t mem = 4 * block;
    if (zstd) {
        int level = c->clevel < 9 ? 2 * c->clevel - 1 : ZSTD_maxCLevel();
        mem += ZSTD_estimateCCtxSize_usingCParams(ZSTD_getCParams(level, block, 0)) + ZSTD_estimateDCtxSize();
    }
    return mem;
}

static dctk_status blosc_encode(const dctk_codec *base, dctk_codec_ctx *ctx, const dctk_chunk_spec *in,
                                const void *src, size_t n, dctk_buf *dst) {
    (void)ctx;
    const blosc_codec *c = (const blosc_codec *)base;
    size_t typesize = c->typesize > 0 ? (size_t)c->typesize : in ? dctk_dtype_size(in->dtype) : 1;
    int shuffle = c->shuffle != SHUF_AUTO ? c->shuffle : auto_shuffle(typesize);
    if (n > BLOSC_MAX_BUFFERSIZE)
        return DCTK_FAIL(DCTK_ERR_CODEC, "blosc: %zu bytes is above blosc's limit of %d", n, BLOSC_MAX_BUFFERSIZE);
    DCTK_TRY(dctk_buf_resize(dst, n + BLOSC_MAX_OVERHEAD));
    int got = blosc_compress_ctx(c->clevel, shuffle, typesize, n, src, dst->data, dst->size, c->cname,
                                 (size_t)c->blocksize, 1);
    if (got <= 0) return DCTK_FAIL(DCTK_ERR_CODEC, "blosc: compression failed (%d)", got);
    dst->size = (size_t)got;
    return DCTK_OK;
}

/* blosc_decompress_ctx takes no source length: it trusts the header, so the
 * header must agree with the bytes we actually have before we call it. */
static dctk_status check_header(const void *src, size_t n, size_t limit, size_t *nbytes) {
    size_t cbytes, blocksize;
    if (n < BLOSC_MIN_HEADER_LENGTH)
        return DCTK_FAIL(DCTK_ERR_CORRUPT, "blosc: %zu bytes is shorter than a blosc header", n);
    if (blosc_cbuffer_validate(src, n, nbytes) != 0)
        return DCTK_FAIL(DCTK_ERR_CORRUPT, "blosc: header does not match the %zu bytes of the chunk", n);
    blosc_cbuffer_sizes(src, nbytes, &cbytes, &blocksize);
    if (*nbytes > limit)
        return DCTK_FAIL(DCTK_ERR_CORRUPT, "blosc: header claims %zu bytes, more than a chunk of this array holds",
                         *nbytes);
    if (blocksize > *nbytes && *nbytes > 0)
        return DCTK_FAIL(DCTK_ERR_CORRUPT, "blosc: header blocksize %zu exceeds its %zu bytes", blocksize, *nbytes);
    return DCTK_OK;
}

static dctk_status blosc_decode(const dctk_codec *c, dctk_codec_ctx *ctx, const dctk_chunk_spec *in,
                                const void *src, size_t n, dctk_buf *dst) {
    (void)c;
    size_t nbytes;
    DCTK_TRY(check_header(src, n, dctk_cmp_limit(ctx, in), &nbytes));
    DCTK_TRY(dctk_buf_reserve(dst, nbytes ? nbytes : 1));
    if (nbytes == 0) {
        dst->size = 0;
        return DCTK_OK;
    }
    int got = blosc_decompress_ctx(src, dst->data, nbytes, 1);
    if (got <= 0 || (size_t)got != nbytes)
        return DCTK_FAIL(DCTK_ERR_CORRUPT, "blosc: corrupt chunk (decompression returned %d)", got);
    dst->size = nbytes;
    return DCTK_OK;
}

/* The space's blosc: cname x clevel x shuffle {-1 auto, 0 none, 1 byte,
 * 2 bit}, typesize the array's element size (DESIGN.md section 4). Blosc
 * shuffles by itself, so it has no second round after a byte shuffle. */
static dctk_status blosc_grid(const dctk_grid_in *in, const dctk_grid_sink *sink) {
    static const char *const cnames[] = {"blosclz", "lz4", "lz4hc", "zlib", "zstd"};
    static const int clevels[] = {1, 6, 9};
    if (in->after_shuffle) return DCTK_OK;
    int es = (int)dctk_dtype_size(in->dtype);
    for (int a = 0; a < 5; a++)
        for (int b = 0; b < 3; b++)
            for (int sh = SHUF_AUTO; sh <= BLOSC_BITSHUFFLE; sh++) {
                json_t *conf = json_pack("{s:s,s:i,s:i,s:i,s:i}", "cname", cnames[a], "clevel", clevels[b],
                                         "shuffle", sh, "typesize", es, "blocksize", 0);
                DCTK_TRY(dctk_grid_emit1(sink, dctk_grid_codec("blosc", conf), false));
            }
    return DCTK_OK;
}

/* As written into a store whose compressor input has elements of es bytes
 * (1 after a stream serializer): typesize es, the auto shuffle resolved and
 * named the way zarr-python writes it. */
static bool blosc_resolve(json_t *codec, size_t es) {
    static const char *const names[] = {"noshuffle", "shuffle", "bitshuffle"};
    json_t *conf = json_object_get(codec, "configuration");
    if (!conf) return true;
    if (es == 0) es = (size_t)json_integer_value(json_object_get(conf, "typesize"));
    const json_t *v = json_object_get(conf, "shuffle");
    if (json_is_integer(v)) {
        json_int_t sh = json_integer_value(v);
        if (sh < SHUF_AUTO || sh > BLOSC_BITSHUFFLE) return true;
        if (sh == SHUF_AUTO) sh = auto_shuffle(es);
        json_object_set_new(conf, "shuffle", json_string(names[sh]));
    }
    json_object_set_new(conf, "typesize", json_integer((json_int_t)es));
    return true;
}

static const dctk_codec_example blosc_examples[] = {
    {"float32", "{\"name\":\"blosc\",\"configuration\":{\"cname\":\"lz4\",\"clevel\":5,\"shuffle\":\"shuffle\",\"typesize\":4,\"blocksize\":0}}"},
    {"float32", "{\"name\":\"blosc\",\"configuration\":{\"cname\":\"zstd\",\"clevel\":1,\"shuffle\":\"bitshuffle\",\"typesize\":4,\"blocksize\":256}}"},
    {"float64", "{\"name\":\"blosc\",\"configuration\":{\"cname\":\"blosclz\",\"clevel\":9,\"shuffle\":\"noshuffle\",\"typesize\":8,\"blocksize\":0}}"},
    {"float32", "{\"name\":\"blosc\",\"configuration\":{\"cname\":\"zlib\",\"clevel\":1,\"shuffle\":\"shuffle\",\"typesize\":4,\"blocksize\":0}}"},
    {"float64", "{\"name\":\"blosc\",\"configuration\":{\"cname\":\"lz4hc\",\"clevel\":6,\"shuffle\":\"shuffle\",\"typesize\":8,\"blocksize\":0}}"},
    {NULL, NULL},
};

/* A Zarr v2 numcodecs Blosc object: shuffle is a number there (-1 auto
 * decodes the same as 1, byte shuffle), a word in v3; v3 also wants the
 * typesize, which v2 takes from the array. */
static void blosc_from_v2(json_t *conf, dctk_dtype t) {
    json_int_t v = json_integer_value(json_object_get(conf, "shuffle"));
    json_object_set_new(conf, "shuffle", json_string(v == 0 ? "noshuffle" : v == 2 ? "bitshuffle" : "shuffle"));
    json_object_set_new(conf, "typesize", json_integer((json_int_t)dctk_dtype_size(t)));
    if (!json_object_get(conf, "blocksize")) json_object_set_new(conf, "blocksize", json_integer(0));
}

const dctk_codec_vt dctk_codec_blosc = {
    .name = "blosc", .kind = DCTK_CODEC_BB, .lossless = true,
    .create = blosc_create, .destroy = dctk_cmp_destroy, .to_json = blosc_to_json,
    .encode = blosc_encode, .decode = blosc_decode, .bound = blosc_bound, .work_mem = blosc_work_mem,
    .space_v1 = true, .family = "blosc", .portability = DCTK_PORT_CORE, .nan_exact = true,
    .grid = blosc_grid, .resolve = blosc_resolve, .examples = blosc_examples,
    .scout = DCTK_SCOUT_PLAIN, .level_key = "clevel", .v2_id = "blosc", .from_v2 = blosc_from_v2,
};
