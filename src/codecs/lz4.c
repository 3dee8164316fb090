/* "numcodecs.lz4" {acceleration} (bytes->bytes).
 *
 * Format (numcodecs lz4.pyx): the uncompressed size as a 4-byte little-endian
 * integer, then one raw LZ4 block (the block format, not the frame format).
 * The size field bounds the output, so decode allocates exactly that much
 * after checking it against what a chunk of the array can hold, and
 * LZ4_decompress_safe never writes or reads past either buffer. */
#include <limits.h>
#include <lz4.h>

#include "compressor_util.h"

typedef struct {
    dctk_codec base;
    long long acceleration;
} lz4_codec;

static dctk_status lz4_create(const json_t *conf, dctk_codec **out) {
    static const char *const known[] = {"acceleration", NULL};
    DCTK_TRY(dctk_conf_only(conf, "numcodecs.lz4", known));
    long long acc;
    /* LZ4 treats values below 1 as 1, as numcodecs passes them through */
    DCTK_TRY(dctk_conf_int_range(conf, "numcodecs.lz4", "acceleration", 1, INT_MIN, INT_MAX, &acc));
    lz4_codec *c = DCTK_CODEC_ALLOC(lz4_codec, &dctk_codec_lz4);
    if (!c) return DCTK_NOMEM();
    c->acceleration = acc;
    *out = &c->base;
    return DCTK_OK;
}

static json_t *lz4_to_json(const dctk_codec *base) {
    const lz4_codec *c = (const lz4_codec *)base;
    return dctk_codec_object("numcodecs.lz4", json_pack("{s:I}", "acceleration", (json_int_t)c->acceleration));
}

static size_t lz4_bound(const dctk_codec *c, const dctk_chunk_spec *in, size_t n) {
    (void)c, (void)in;
    return 4 + (n > LZ4_MAX_INPUT_SIZE ? 0 : (size_t)LZ4_compressBound((int)n));
}

static dctk_status lz4_encode(const dctk_codec *base, dctk_codec_ctx *ctx, const dctk_chunk_spec *in,
                              const void *src, size_t n, dctk_buf *dst) {
    (void)ctx, (void)in;
    const lz4_codec *c = (const lz4_codec *)base;
    if (n > LZ4_MAX_INPUT_SIZE)
        return DCTK_FAIL(DCTK_ERR_CODEC, "numcodecs.lz4: %zu bytes is above LZ4's limit of %d", n, LZ4_MAX_INPUT_SIZE);
    int bound = LZ4_compressBound((int)n);
    DCTK_TRY(dctk_buf_resize(dst, 4 + (size_t)bound));
    int got = LZ4_compress_fast(src, (char *)dst->data + 4, (int)n, bound, (int)c->acceleration);
    if (got <= 0) return DCTK_FAIL(DCTK_ERR_CODEC, "numcodecs.lz4: compression failed");
    dctk_put_le32(dst->data, (uint32_t)n);
    dst->size = 4 + (size_t)got;
    return DCTK_OK;
}

static dctk_status lz4_decode(const dctk_codec *c, dctk_codec_ctx *ctx, const dctk_chunk_spec *in,
                              const void *src, size_t n, dctk_buf *dst) {
    (void)c;
    const uint8_t *s = src;
    if (n < 5) return DCTK_FAIL(DCTK_ERR_CORRUPT, "numcodecs.lz4: %zu bytes is too short for a size and a block", n);
    if (n - 4 > INT_MAX) return DCTK_FAIL(DCTK_ERR_CORRUPT, "numcodecs.lz4: %zu-byte block is too large", n);
    size_t size = dctk_get_le32(s);
    if (size > dctk_cmp_limit(ctx, in) || size > INT_MAX)
        return DCTK_FAIL(DCTK_ERR_CORRUPT, "numcodecs.lz4: stored size %zu is more than a chunk of this array holds",
                         size);
    DCTK_TRY(dctk_buf_reserve(dst, size ? size : 1));
    int got = LZ4_decompress_safe((const char *)s + 4, (char *)dst->data, (int)(n - 4), (int)size);
    if (got < 0 || (size_t)got != size)
        return DCTK_FAIL(DCTK_ERR_CORRUPT, "numcodecs.lz4: corrupt block (decoded %d of %zu bytes)", got, size);
    dst->size = size;
    return DCTK_OK;
}

static json_t *lz4_grid_conf(int v) { return json_pack("{s:i}", "acceleration", v); }

/* The Python tool's grid: acceleration 1, 10, 100. */
static dctk_status lz4_grid(const dctk_grid_in *in, const dctk_grid_sink *sink) {
    static const int values[] = {1, 10, 100};
    return dctk_cmp_grid(in, sink, "numcodecs.lz4", lz4_grid_conf, values, 3);
}

static const dctk_codec_example lz4_examples[] = {
    {"float32", "{\"name\":\"numcodecs.lz4\",\"configuration\":{\"acceleration\":1}}"},
    {NULL, NULL},
};

const dctk_codec_vt dctk_codec_lz4 = {
    .name = "numcodecs.lz4", .kind = DCTK_CODEC_BB, .lossless = true,
    .create = lz4_create, .destroy = dctk_cmp_destroy, .to_json = lz4_to_json,
    .encode = lz4_encode, .decode = lz4_decode, .bound = lz4_bound,
    .space_v1 = true, .family = "lz4", .portability = DCTK_PORT_NUMCODECS, .nan_exact = true,
    .grid = lz4_grid, .examples = lz4_examples,
    .scout = DCTK_SCOUT_PLAIN, .level_key = "acceleration",
};
