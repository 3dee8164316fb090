/* "bytes" (array->bytes, Zarr v3 core) and "crc32c" (bytes->bytes).
 *
 * bytes: the chunk's elements in C order, in the configured byte order.
 * crc32c: the input followed by its CRC-32C as a little-endian uint32. */
#include "codec_internal.h"

typedef struct {
    dctk_codec base;
    bool big; /* endian "big" */
    bool has_endian;
} bytes_codec;

static dctk_status bytes_create(const json_t *conf, dctk_codec **out) {
    static const char *const known[] = {"endian", NULL};
    DCTK_TRY(dctk_conf_only(conf, "bytes", known));
    const char *endian;
    DCTK_TRY(dctk_conf_str(conf, "bytes", "endian", false, NULL, &endian));
    if (endian && strcmp(endian, "little") != 0 && strcmp(endian, "big") != 0)
        return DCTK_FAIL(DCTK_ERR_ARG, "codec 'bytes': endian must be \"little\" or \"big\", not \"%s\"", endian);
    bytes_codec *c = DCTK_CODEC_ALLOC(bytes_codec, &dctk_codec_bytes);
    if (!c) return DCTK_NOMEM();
    c->has_endian = endian != NULL;
    c->big = endian && strcmp(endian, "big") == 0;
    *out = &c->base;
    return DCTK_OK;
}

static void plain_destroy(dctk_codec *c) { dctk_free(c); }

static json_t *bytes_to_json(const dctk_codec *base) {
    const bytes_codec *c = (const bytes_codec *)base;
    if (!c->has_endian) return dctk_codec_object("bytes", NULL);
    return dctk_codec_object("bytes", json_pack("{s:s}", "endian", c->big ? "big" : "little"));
}

/* Copy n bytes, reversing each element of size es when swap is set. */
static void copy_order(uint8_t *dst, const uint8_t *src, size_t n, size_t es, bool swap) {
    if (n == 0) return; /* an empty chunk: dst may have no storage yet */
    if (swap) dctk_swap_copy(dst, src, n, es);
    else memcpy(dst, src, n);
}

static size_t same_size(const dctk_codec *c, const dctk_chunk_spec *in, size_t n) {
    (void)c, (void)in;
    return n;
}

static dctk_status bytes_code(const dctk_codec *base, dctk_codec_ctx *ctx, const dctk_chunk_spec *in,
                              const void *src, size_t n, dctk_buf *dst) {
    (void)ctx;
    const bytes_codec *c = (const bytes_codec *)base;
    size_t want = dctk_spec_nbytes(in);
    if (n != want) return DCTK_FAIL(DCTK_ERR_CODEC, "codec 'bytes': chunk has %zu bytes, expected %zu", n, want);
    DCTK_TRY(dctk_buf_resize(dst, n));
    copy_order(dst->data, src, n, dctk_dtype_size(in->dtype), c->big);
    return DCTK_OK;
}

/* copy_order's view of the host: little-endian, so only "big" swaps. */
static bool bytes_identity(const dctk_codec *base, const dctk_chunk_spec *in) {
    return !((const bytes_codec *)base)->big || dctk_dtype_size(in->dtype) == 1;
}

static const dctk_codec_example bytes_examples[] = {
    {"float32", "{\"name\":\"bytes\",\"configuration\":{\"endian\":\"little\"}}"},
    {"float64", "{\"name\":\"bytes\",\"configuration\":{\"endian\":\"big\"}}"},
    {"uint8", "{\"name\":\"bytes\"}"},
    {NULL, NULL},
};

/* The plain serializer is the space's "none" (index -1), not a family. */
const dctk_codec_vt dctk_codec_bytes = {
    .name = "bytes", .kind = DCTK_CODEC_AB, .lossless = true,
    .create = bytes_create, .destroy = plain_destroy, .to_json = bytes_to_json,
    .encode = bytes_code, .decode = bytes_code, .bound = same_size, .identity = bytes_identity,
    .portability = DCTK_PORT_CORE, .nan_exact = true, .examples = bytes_examples,
};

static dctk_status crc_create(const json_t *conf, dctk_codec **out) {
    static const char *const known[] = {NULL};
    DCTK_TRY(dctk_conf_only(conf, "crc32c", known));
    dctk_codec *c = dctk_calloc(1, sizeof *c);
    if (!c) return DCTK_NOMEM();
    c->vt = &dctk_codec_crc32c;
    *out = c;
    return DCTK_OK;
}

static json_t *crc_to_json(const dctk_codec *c) {
    (void)c;
    return dctk_codec_object("crc32c", NULL);
}

static size_t crc_bound(const dctk_codec *c, const dctk_chunk_spec *in, size_t n) {
    (void)c, (void)in;
    return n + 4;
}

static dctk_status crc_encode(const dctk_codec *c, dctk_codec_ctx *ctx, const dctk_chunk_spec *in,
                              const void *src, size_t n, dctk_buf *dst) {
    (void)c, (void)ctx, (void)in;
    DCTK_TRY(dctk_buf_resize(dst, n + 4));
    if (n) memcpy(dst->data, src, n);
    dctk_put_le32(dst->data + n, dctk_crc32c(src, n));
    return DCTK_OK;
}

static dctk_status crc_decode(const dctk_codec *c, dctk_codec_ctx *ctx, const dctk_chunk_spec *in,
                              const void *src, size_t n, dctk_buf *dst) {
    (void)c, (void)ctx, (void)in;
    if (n < 4) return DCTK_FAIL(DCTK_ERR_CORRUPT, "crc32c: %zu bytes is too short to hold a checksum", n);
    uint32_t want = dctk_get_le32((const uint8_t *)src + n - 4), got = dctk_crc32c(src, n - 4);
    if (want != got) return DCTK_FAIL(DCTK_ERR_CORRUPT, "crc32c mismatch: stored %08x, computed %08x", want, got);
    DCTK_TRY(dctk_buf_resize(dst, n - 4));
    if (n > 4) memcpy(dst->data, src, n - 4);
    return DCTK_OK;
}

static const dctk_codec_example crc_examples[] = {
    {"float32", "{\"name\":\"crc32c\"}"},
    {NULL, NULL},
};

const dctk_codec_vt dctk_codec_crc32c = {
    .name = "crc32c", .kind = DCTK_CODEC_BB, .lossless = true,
    .create = crc_create, .destroy = plain_destroy, .to_json = crc_to_json,
    .encode = crc_encode, .decode = crc_decode, .bound = crc_bound,
    .portability = DCTK_PORT_CORE, .nan_exact = true, .examples = crc_examples,
};
