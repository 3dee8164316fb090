/* The bytes->bytes compressors: configuration JSON in and out, round trips
 * on seeded and edge data for every codec and several settings, the byte
 * formats numcodecs relies on, and the caps on claimed output sizes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "dctk/codec.h"
#include "dctk/util.h"

/* Every codec with two or more settings; the same list drives the round trips. */
/* The per-thread codec context the contract requires (one thread here). */
static dctk_codec_ctx *tctx;

static const char *const settings[] = {
    "{\"name\":\"blosc\",\"configuration\":{\"cname\":\"lz4\",\"clevel\":5,\"shuffle\":\"shuffle\",\"typesize\":4,\"blocksize\":0}}",
    "{\"name\":\"blosc\",\"configuration\":{\"cname\":\"zstd\",\"clevel\":1,\"shuffle\":\"bitshuffle\",\"typesize\":4,\"blocksize\":0}}",
    "{\"name\":\"blosc\",\"configuration\":{\"cname\":\"blosclz\",\"clevel\":9,\"shuffle\":\"noshuffle\",\"typesize\":1,\"blocksize\":4096}}",
    "{\"name\":\"blosc\",\"configuration\":{\"cname\":\"lz4hc\",\"clevel\":6,\"shuffle\":\"shuffle\",\"typesize\":8,\"blocksize\":0}}",
    "{\"name\":\"blosc\",\"configuration\":{\"cname\":\"zlib\",\"clevel\":1,\"shuffle\":\"shuffle\",\"typesize\":4,\"blocksize\":0}}",
    "{\"name\":\"zstd\",\"configuration\":{\"level\":0,\"checksum\":false}}",
    "{\"name\":\"zstd\",\"configuration\":{\"level\":9,\"checksum\":true}}",
    "{\"name\":\"zstd\",\"configuration\":{\"level\":-5,\"checksum\":false}}",
    "{\"name\":\"gzip\",\"configuration\":{\"level\":1}}",
    "{\"name\":\"gzip\",\"configuration\":{\"level\":9}}",
    "{\"name\":\"numcodecs.lz4\",\"configuration\":{\"acceleration\":1}}",
    "{\"name\":\"numcodecs.lz4\",\"configuration\":{\"acceleration\":100}}",
    "{\"name\":\"numcodecs.zlib\",\"configuration\":{\"level\":1}}",
    "{\"name\":\"numcodecs.zlib\",\"configuration\":{\"level\":9}}",
    "{\"name\":\"numcodecs.bz2\",\"configuration\":{\"level\":1}}",
    "{\"name\":\"numcodecs.bz2\",\"configuration\":{\"level\":9}}",
    "{\"name\":\"numcodecs.lzma\",\"configuration\":{\"format\":1,\"check\":-1,\"preset\":1,\"filters\":null}}",
    "{\"name\":\"numcodecs.lzma\",\"configuration\":{\"format\":1,\"check\":-1,\"preset\":6,\"filters\":null}}",
    "{\"name\":\"numcodecs.shuffle\",\"configuration\":{\"elementsize\":4}}",
    "{\"name\":\"numcodecs.shuffle\",\"configuration\":{\"elementsize\":8}}",
    "{\"name\":\"numcodecs.shuffle\",\"configuration\":{\"elementsize\":1}}",
    "{\"name\":\"numcodecs.shuffle\",\"configuration\":{\"elementsize\":3}}",
};
#define NSETTINGS (sizeof settings / sizeof settings[0])

static dctk_codec *make(const char *json) {
    dctk_codec *c = NULL;
    dctk_status st = dctk_codec_from_string(json, &c);
    if (st != DCTK_OK) fail_msg("%s: %s", json, dctk_detail());
    return c;
}

/* A smooth field with noise, like a temperature slice, plus specials. */
static void fill_field(float *x, size_t n, unsigned seed) {
    srand(seed);
    for (size_t i = 0; i < n; i++) x[i] = 280.0f + 20.0f * sinf((float)i * 0.01f) + (float)(rand() % 100) * 0.001f;
    if (n > 10) x[3] = NAN, x[5] = INFINITY, x[7] = -INFINITY, x[9] = 1e-42f /* subnormal */;
}

static void round_trip(const char *json, const dctk_chunk_spec *spec, const void *src, size_t n,
                       dctk_codec_ctx *ctx) {
    dctk_codec *c = make(json);
    dctk_buf enc = DCTK_BUF_INIT, dec = DCTK_BUF_INIT;
    /* shuffle refuses buffers that are not whole elements, as numcodecs does */
    const char *es = strstr(json, "\"elementsize\":");
    bool ragged = es && n % (size_t)atoi(es + 14) != 0;
    dctk_status st = dctk_codec_encode(c, ctx, spec, src, n, &enc);
    if (ragged) {
        assert_int_equal(st, DCTK_ERR_CODEC);
    } else {
        if (st != DCTK_OK) fail_msg("%s encode %zu bytes: %s", json, n, dctk_detail());
        st = dctk_codec_decode(c, ctx, spec, enc.data, enc.size, &dec);
        if (st != DCTK_OK) fail_msg("%s decode %zu bytes: %s", json, n, dctk_detail());
        assert_int_equal(dec.size, n);
        if (n) assert_memory_equal(dec.data, src, n);
    }
    dctk_buf_free(&enc);
    dctk_buf_free(&dec);
    dctk_codec_free(c);
}

static void round_trips_on_fields_and_edges(void **state) {
    (void)state;
    enum { N = 60000 };
    float *x = malloc(N * sizeof *x);
    fill_field(x, N, 7);
    double d[513];
    for (int i = 0; i < 513; i++) d[i] = i % 17 == 0 ? 0.0 : cos(i * 0.3) * 1e300;
    float zeros[4096] = {0}, one = 3.5f;
    dctk_codec_ctx *ctx = dctk_codec_ctx_new();
    for (size_t k = 0; k < NSETTINGS; k++) {
        size_t sh_n = N, sh_d = 513, sh_z = 4096, sh_1 = 1, sh_0 = 0;
        dctk_chunk_spec sf = dctk_spec_make(DCTK_FLOAT32, 1, &sh_n), sd = dctk_spec_make(DCTK_FLOAT64, 1, &sh_d),
                        sz = dctk_spec_make(DCTK_FLOAT32, 1, &sh_z), s1 = dctk_spec_make(DCTK_FLOAT32, 1, &sh_1),
                        s0 = dctk_spec_make(DCTK_FLOAT32, 1, &sh_0);
        round_trip(settings[k], &sf, x, N * sizeof *x, ctx);
        round_trip(settings[k], &sd, d, sizeof d, ctx);
        round_trip(settings[k], &sz, zeros, sizeof zeros, ctx);
        round_trip(settings[k], &s1, &one, sizeof one, ctx);
        round_trip(settings[k], &s0, "", 0, ctx);
        /* the contract: a context is required, and its absence is an error, not a crash */
        dctk_codec *c = make(settings[k]);
        dctk_buf enc = DCTK_BUF_INIT;
        assert_int_equal(dctk_codec_encode(c, NULL, &sf, x, N * sizeof *x, &enc), DCTK_ERR_ARG);
        assert_int_equal(dctk_codec_decode(c, NULL, &sf, x, N * sizeof *x, &enc), DCTK_ERR_ARG);
        dctk_codec_free(c);
    }
    dctk_codec_ctx_free(ctx);
    free(x);
}

/* to_json writes the configuration key for key; reading it back gives the same text. */
/* Encode in a context of its own, which nothing ran in before. */
static void encode_fresh(dctk_codec *c, const dctk_chunk_spec *spec, const void *src, size_t n, dctk_buf *out) {
    dctk_codec_ctx *ctx = dctk_codec_ctx_new();
    if (dctk_codec_encode(c, ctx, spec, src, n, out) != DCTK_OK) fail_msg("fresh encode: %s", dctk_detail());
    dctk_codec_ctx_free(ctx);
}

/* A thread keeps its codecs' state across calls (lzma's streams, the block
 * keeper of lzma and bz2, zstd's and libdeflate's contexts): whatever ran
 * before in the same context, on chunks of other sizes (other lzma
 * dictionaries), with other levels, after a decode that failed, each call
 * writes the bytes a fresh context writes and decodes them back. */
static void kept_contexts_write_the_bytes_of_fresh_ones(void **state) {
    (void)state;
    static const char *const codecs[] = {
        "{\"name\":\"numcodecs.lzma\",\"configuration\":{\"format\":1,\"check\":-1,\"preset\":1,\"filters\":null}}",
        "{\"name\":\"numcodecs.lzma\",\"configuration\":{\"format\":1,\"check\":-1,\"preset\":9,\"filters\":null}}",
        "{\"name\":\"numcodecs.bz2\",\"configuration\":{\"level\":9}}",
        "{\"name\":\"numcodecs.lzma\",\"configuration\":{\"format\":1,\"check\":0,\"preset\":6,\"filters\":null}}",
        "{\"name\":\"zstd\",\"configuration\":{\"level\":19,\"checksum\":false}}",
        "{\"name\":\"numcodecs.bz2\",\"configuration\":{\"level\":1}}",
        "{\"name\":\"numcodecs.zlib\",\"configuration\":{\"level\":9}}",
        "{\"name\":\"blosc\",\"configuration\":{\"cname\":\"zstd\",\"clevel\":9,\"shuffle\":\"shuffle\",\"typesize\":4,\"blocksize\":0}}",
    };
    enum { NC = sizeof codecs / sizeof codecs[0], N = 600000 };
    static const size_t sizes[] = {24576, N, 6000, 300000}; /* floats: 24 KiB to 2.3 MiB, lzma dictionaries 1-2.3 MiB */
    float *x = malloc((N + 7) * sizeof *x); /* the second round starts 7 values in */
    fill_field(x, N + 7, 11);
    dctk_codec_ctx *ctx = dctk_codec_ctx_new();
    dctk_buf kept = DCTK_BUF_INIT, fresh = DCTK_BUF_INIT, dec = DCTK_BUF_INIT;
    for (int round = 0; round < 2; round++)
        for (size_t z = 0; z < sizeof sizes / sizeof sizes[0]; z++)
            for (int k = 0; k < NC; k++) {
                int i = round ? NC - 1 - k : k; /* the other order on the second round */
                dctk_codec *c = make(codecs[i]);
                size_t n = sizes[z] * sizeof *x;
                dctk_chunk_spec spec = dctk_spec_make(DCTK_FLOAT32, 1, &sizes[z]);
                const float *src = x + (size_t)round * 7;
                if (dctk_codec_encode(c, ctx, &spec, src, n, &kept) != DCTK_OK) fail_msg("%s: %s", codecs[i], dctk_detail());
                encode_fresh(c, &spec, src, n, &fresh);
                if (kept.size != fresh.size || memcmp(kept.data, fresh.data, kept.size) != 0)
                    fail_msg("%s on %zu bytes: a kept context wrote other bytes than a fresh one", codecs[i], n);
                /* a corrupt stream fails and leaves the state usable */
                kept.data[kept.size / 2] ^= 0x5a;
                (void)dctk_codec_decode(c, ctx, &spec, kept.data, kept.size, &dec);
                kept.data[kept.size / 2] ^= 0x5a;
                if (dctk_codec_decode(c, ctx, &spec, kept.data, kept.size, &dec) != DCTK_OK)
                    fail_msg("%s: %s", codecs[i], dctk_detail());
                assert_int_equal(dec.size, n);
                assert_memory_equal(dec.data, src, n);
                dctk_codec_free(c);
            }
    dctk_buf_free(&kept);
    dctk_buf_free(&fresh);
    dctk_buf_free(&dec);
    dctk_codec_ctx_free(ctx);
    free(x);
}

static void json_is_stable(void **state) {
    (void)state;
    static const char *const expect[][2] = {
        {"{\"name\":\"blosc\",\"configuration\":{\"cname\":\"lz4\",\"clevel\":5,\"shuffle\":\"shuffle\",\"typesize\":4,\"blocksize\":0}}",
         "{\"configuration\":{\"blocksize\":0,\"clevel\":5,\"cname\":\"lz4\",\"shuffle\":\"shuffle\",\"typesize\":4},\"name\":\"blosc\"}"},
        {"{\"name\":\"zstd\",\"configuration\":{\"level\":3}}",
         "{\"configuration\":{\"checksum\":false,\"level\":3},\"name\":\"zstd\"}"},
        {"{\"name\":\"gzip\"}", "{\"configuration\":{\"level\":5},\"name\":\"gzip\"}"},
        {"{\"name\":\"numcodecs.lz4\",\"configuration\":{\"acceleration\":10}}",
         "{\"configuration\":{\"acceleration\":10},\"name\":\"numcodecs.lz4\"}"},
        {"{\"name\":\"numcodecs.zlib\",\"configuration\":{\"level\":6}}",
         "{\"configuration\":{\"level\":6},\"name\":\"numcodecs.zlib\"}"},
        {"{\"name\":\"numcodecs.bz2\",\"configuration\":{\"level\":9}}",
         "{\"configuration\":{\"level\":9},\"name\":\"numcodecs.bz2\"}"},
        {"{\"name\":\"numcodecs.lzma\",\"configuration\":{\"format\":1,\"check\":-1,\"preset\":null,\"filters\":null}}",
         "{\"configuration\":{\"check\":-1,\"filters\":null,\"format\":1,\"preset\":6},\"name\":\"numcodecs.lzma\"}"},
        {"{\"name\":\"numcodecs.shuffle\",\"configuration\":{\"elementsize\":8}}",
         "{\"configuration\":{\"elementsize\":8},\"name\":\"numcodecs.shuffle\"}"},
    };
    for (size_t i = 0; i < sizeof expect / sizeof expect[0]; i++) {
        dctk_codec *c = make(expect[i][0]);
        char *s = dctk_codec_to_string(c);
        assert_string_equal(s, expect[i][1]);
        dctk_codec *again = make(s);
        char *s2 = dctk_codec_to_string(again);
        assert_string_equal(s2, s);
        free(s), free(s2);
        dctk_codec_free(c), dctk_codec_free(again);
    }
}

static void bad_configurations_are_refused(void **state) {
    (void)state;
    static const char *const bad[] = {
        "{\"name\":\"blosc\",\"configuration\":{\"cname\":\"nope\"}}",
        "{\"name\":\"blosc\",\"configuration\":{\"clevel\":10}}",
        "{\"name\":\"blosc\",\"configuration\":{\"shuffle\":\"auto\"}}",
        "{\"name\":\"blosc\",\"configuration\":{\"typesize\":0}}",
        "{\"name\":\"blosc\",\"configuration\":{\"blocksize\":-1}}",
        "{\"name\":\"blosc\",\"configuration\":{\"extra\":1}}",
        "{\"name\":\"zstd\",\"configuration\":{\"level\":23}}",
        "{\"name\":\"zstd\",\"configuration\":{\"checksum\":\"yes\"}}",
        "{\"name\":\"gzip\",\"configuration\":{\"level\":10}}",
        "{\"name\":\"gzip\",\"configuration\":{\"level\":\"9\"}}",
        "{\"name\":\"numcodecs.zlib\",\"configuration\":{\"level\":-2}}",
        "{\"name\":\"numcodecs.bz2\",\"configuration\":{\"level\":0}}",
        "{\"name\":\"numcodecs.lzma\",\"configuration\":{\"preset\":10}}",
        "{\"name\":\"numcodecs.lzma\",\"configuration\":{\"check\":7}}",
        "{\"name\":\"numcodecs.shuffle\",\"configuration\":{\"elementsize\":0}}",
        "{\"name\":\"numcodecs.lz4\",\"configuration\":{\"acceleration\":1.5}}",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        dctk_codec *c = NULL;
        if (dctk_codec_from_string(bad[i], &c) != DCTK_ERR_ARG) fail_msg("accepted %s", bad[i]);
        assert_true(strlen(dctk_detail()) > 0);
    }
    dctk_codec *c = NULL;
    assert_int_equal(dctk_codec_from_string("{\"name\":\"numcodecs.lzma\",\"configuration\":{\"format\":2}}", &c),
                     DCTK_ERR_UNSUPPORTED);
    assert_int_equal(dctk_codec_from_string("{\"name\":\"numcodecs.lzma\",\"configuration\":{\"filters\":[{\"id\":33}]}}", &c),
                     DCTK_ERR_UNSUPPORTED);
}

static dctk_status encode_str(const char *json, const dctk_chunk_spec *spec, const void *src, size_t n, dctk_buf *out) {
    dctk_codec *c = make(json);
    dctk_status st = dctk_codec_encode(c, tctx, spec, src, n, out);
    dctk_codec_free(c);
    return st;
}

static dctk_status decode_str(const char *json, const dctk_chunk_spec *spec, const void *src, size_t n, dctk_buf *out) {
    dctk_codec *c = make(json);
    dctk_status st = dctk_codec_decode(c, tctx, spec, src, n, out);
    dctk_codec_free(c);
    return st;
}

/* The bytes numcodecs expects: header fields and layout. */
static void byte_formats(void **state) {
    (void)state;
    uint8_t src[12];
    for (int i = 0; i < 12; i++) src[i] = (uint8_t)i;
    size_t three = 3;
    dctk_chunk_spec spec = dctk_spec_make(DCTK_FLOAT32, 1, &three);
    dctk_buf b = DCTK_BUF_INIT;
    /* shuffle: byte i of element j at i * n + j */
    assert_int_equal(encode_str(settings[18], &spec, src, 12, &b), DCTK_OK);
    const uint8_t want[12] = {0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11};
    assert_memory_equal(b.data, want, 12);
    /* lz4: 4-byte little-endian size, then the block */
    assert_int_equal(encode_str(settings[10], &spec, src, 12, &b), DCTK_OK);
    assert_int_equal(dctk_get_le32(b.data), 12);
    /* zstd: exactly one frame, content size set */
    assert_int_equal(encode_str(settings[5], &spec, src, 12, &b), DCTK_OK);
    assert_int_equal(ZSTD_findFrameCompressedSize(b.data, b.size), b.size);
    assert_int_equal(ZSTD_getFrameContentSize(b.data, b.size), 12);
    assert_int_equal(b.data[4] & 0x04, 0); /* no checksum unless asked */
    assert_int_equal(encode_str(settings[6], &spec, src, 12, &b), DCTK_OK);
    assert_int_equal(b.data[4] & 0x04, 0x04);
    assert_int_equal(ZSTD_findFrameCompressedSize(b.data, b.size), b.size);
    /* gzip: RFC 1952 magic, deflate, mtime 0 */
    assert_int_equal(encode_str(settings[8], &spec, src, 12, &b), DCTK_OK);
    assert_int_equal(b.data[0], 0x1f), assert_int_equal(b.data[1], 0x8b), assert_int_equal(b.data[2], 8);
    assert_int_equal(dctk_get_le32(b.data + 4), 0);
    /* zlib: RFC 1950 header (CMF 0x78, FCHECK makes it a multiple of 31) */
    assert_int_equal(encode_str(settings[12], &spec, src, 12, &b), DCTK_OK);
    assert_int_equal(b.data[0], 0x78), assert_int_equal((b.data[0] * 256 + b.data[1]) % 31, 0);
    /* bz2: "BZh" and the block size digit of the level */
    assert_int_equal(encode_str(settings[15], &spec, src, 12, &b), DCTK_OK);
    assert_memory_equal(b.data, "BZh9", 4);
    /* xz: magic, then stream flags with check id 4 (CRC64) */
    assert_int_equal(encode_str(settings[16], &spec, src, 12, &b), DCTK_OK);
    assert_memory_equal(b.data, "\xfd\x37\x7a\x58\x5a\x00", 6);
    assert_int_equal(b.data[6], 0), assert_int_equal(b.data[7], 4);
    /* blosc: version 2 header, typesize and nbytes */
    assert_int_equal(encode_str(settings[0], &spec, src, 12, &b), DCTK_OK);
    assert_int_equal(b.data[0], 2), assert_int_equal(b.data[3], 4);
    assert_int_equal(dctk_get_le32(b.data + 4), 12);
    assert_int_equal(dctk_get_le32(b.data + 12), b.size);
    dctk_buf_free(&b);
}

/* The vector paths of shuffle against the definition, at sizes around their 16-element step. */
static void shuffle_matches_definition(void **state) {
    (void)state;
    static const size_t sizes[] = {2, 3, 4, 8, 5};
    uint8_t src[8 * 53], want[8 * 53];
    for (size_t i = 0; i < sizeof src; i++) src[i] = (uint8_t)(i * 37 + 11);
    dctk_buf b = DCTK_BUF_INIT, back = DCTK_BUF_INIT;
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        size_t es = sizes[k];
        char json[96];
        snprintf(json, sizeof json, "{\"name\":\"numcodecs.shuffle\",\"configuration\":{\"elementsize\":%zu}}", es);
        for (size_t n = 0; n <= 53; n++) { /* 0..53 elements: whole vectors plus every tail */
            for (size_t j = 0; j < n; j++)
                for (size_t i = 0; i < es; i++) want[i * n + j] = src[j * es + i];
            size_t shape = n * es;
            dctk_chunk_spec spec = dctk_spec_make(DCTK_UINT8, 1, &shape);
            assert_int_equal(encode_str(json, &spec, src, n * es, &b), DCTK_OK);
            assert_int_equal(b.size, n * es);
            if (n) assert_memory_equal(b.data, want, n * es);
            assert_int_equal(decode_str(json, &spec, b.data, b.size, &back), DCTK_OK);
            if (n) assert_memory_equal(back.data, src, n * es);
        }
    }
    dctk_buf_free(&b), dctk_buf_free(&back);
}

/* Blosc without typesize/shuffle resolves them from the array like zarr-python. */
static void blosc_defaults_follow_the_array(void **state) {
    (void)state;
    size_t n = 1000;
    dctk_chunk_spec f8 = dctk_spec_make(DCTK_FLOAT64, 1, &n), u1 = dctk_spec_make(DCTK_UINT8, 1, &n);
    double x[1000];
    for (int i = 0; i < 1000; i++) x[i] = i;
    dctk_buf b = DCTK_BUF_INIT;
    assert_int_equal(encode_str("{\"name\":\"blosc\",\"configuration\":{\"cname\":\"lz4\"}}", &f8, x, sizeof x, &b),
                     DCTK_OK);
    assert_int_equal(b.data[3], 8);
    assert_true(b.data[2] & 0x1); /* byte shuffle */
    assert_int_equal(encode_str("{\"name\":\"blosc\",\"configuration\":{\"cname\":\"lz4\"}}", &u1, x, 1000, &b),
                     DCTK_OK);
    assert_int_equal(b.data[3], 1);
    assert_true(b.data[2] & 0x4); /* bit shuffle */
    dctk_buf_free(&b);
}

/* Frames written by a streaming encoder carry no content size; several frames may follow each other. */
static void zstd_streamed_and_concatenated_frames(void **state) {
    (void)state;
    enum { N = 1000000 }; /* two frames: above the 1 MiB slack of a tiny chunk */
    uint8_t *src = malloc(N);
    for (int i = 0; i < N; i++) src[i] = (uint8_t)(i * 7 / 1000);
    size_t cap = ZSTD_compressBound(N) * 2 + 64, pos = 0;
    uint8_t *z = malloc(cap);
    ZSTD_CCtx *cc = ZSTD_createCCtx();
    for (int f = 0; f < 2; f++) { /* two frames, each of the whole input, no pledged size */
        ZSTD_CCtx_reset(cc, ZSTD_reset_session_and_parameters);
        ZSTD_inBuffer in = {src, N, 0}, none = {src, 0, 0};
        ZSTD_outBuffer out = {z, cap, pos};
        size_t r = ZSTD_compressStream2(cc, &out, &in, ZSTD_e_continue); /* size unknown when the frame starts */
        assert_int_equal(in.pos, N);
        do r = ZSTD_compressStream2(cc, &out, &none, ZSTD_e_end);
        while (r != 0 && !ZSTD_isError(r));
        pos = out.pos;
    }
    ZSTD_freeCCtx(cc);
    assert_int_equal(ZSTD_getFrameContentSize(z, pos), ZSTD_CONTENTSIZE_UNKNOWN);
    size_t shape = 2 * N;
    dctk_chunk_spec spec = dctk_spec_make(DCTK_UINT8, 1, &shape);
    dctk_buf b = DCTK_BUF_INIT;
    assert_int_equal(decode_str(settings[5], &spec, z, pos, &b), DCTK_OK);
    assert_int_equal(b.size, 2 * N);
    assert_memory_equal(b.data, src, N);
    assert_memory_equal(b.data + N, src, N);
    /* a chunk spec too small for the stream stops the decoder at the cap */
    size_t tiny = 1000;
    dctk_chunk_spec small = dctk_spec_make(DCTK_UINT8, 1, &tiny);
    assert_int_equal(decode_str(settings[5], &small, z, pos, &b), DCTK_ERR_CORRUPT);
    assert_int_equal(decode_str(settings[5], &spec, z, pos - 3, &b), DCTK_ERR_CORRUPT);
    free(z);
    free(src);
    dctk_buf_free(&b);
}

/* A forged size field must not make us allocate what it claims. */
static void claimed_sizes_are_capped(void **state) {
    (void)state;
    size_t n = 256;
    dctk_chunk_spec spec = dctk_spec_make(DCTK_FLOAT32, 1, &n);
    uint8_t x[1024] = {0};
    dctk_buf b = DCTK_BUF_INIT, out = DCTK_BUF_INIT;
    /* lz4 header claiming 4 GiB - 1 */
    assert_int_equal(encode_str(settings[10], &spec, x, sizeof x, &b), DCTK_OK);
    dctk_put_le32(b.data, 0xffffffffu);
    assert_int_equal(decode_str(settings[10], &spec, b.data, b.size, &out), DCTK_ERR_CORRUPT);
    assert_non_null(strstr(dctk_detail(), "numcodecs.lz4"));
    /* zstd frame whose header says 1 TB */
    uint8_t frame[32] = {0x28, 0xb5, 0x2f, 0xfd, 0xc0}; /* FCS 8 bytes, single segment */
    uint64_t big = (uint64_t)1 << 40;
    for (int i = 0; i < 8; i++) frame[5 + i] = (uint8_t)(big >> (8 * i));
    frame[13] = 0x01, frame[14] = 0x00, frame[15] = 0x00; /* last raw block of size 0 */
    assert_int_equal(decode_str(settings[5], &spec, frame, 16, &out), DCTK_ERR_CORRUPT);
    /* blosc header claiming 1 GiB */
    assert_int_equal(encode_str(settings[0], &spec, x, sizeof x, &b), DCTK_OK);
    dctk_put_le32(b.data + 4, 1u << 30);
    assert_int_equal(decode_str(settings[0], &spec, b.data, b.size, &out), DCTK_ERR_CORRUPT);
    /* a zlib bomb: 8 MiB of zeros squeezed into a few KB, for a 1 KiB chunk */
    size_t big_n = 8u << 20;
    uint8_t *zeros = calloc(big_n, 1);
    dctk_chunk_spec bigspec = dctk_spec_make(DCTK_UINT8, 1, &big_n);
    dctk_buf bomb = DCTK_BUF_INIT;
    for (size_t k = 8; k <= 16; k++) { /* gzip, zlib, bz2, lzma */
        if (k != 8 && k != 12 && k != 14 && k != 16) continue;
        assert_int_equal(encode_str(settings[k], &bigspec, zeros, big_n, &bomb), DCTK_OK);
        dctk_buf_free(&out);
        assert_int_equal(decode_str(settings[k], &spec, bomb.data, bomb.size, &out), DCTK_ERR_CORRUPT);
        assert_true(out.cap <= (4u << 20));
    }
    free(zeros);
    dctk_buf_free(&bomb);
    dctk_buf_free(&out);
    dctk_buf_free(&b);
}

/* Python's gzip reader accepts several members and zero padding; so do we. */
static void gzip_members_and_padding(void **state) {
    (void)state;
    size_t n = 5;
    dctk_chunk_spec spec = dctk_spec_make(DCTK_UINT8, 1, &n);
    dctk_buf a = DCTK_BUF_INIT, b = DCTK_BUF_INIT, out = DCTK_BUF_INIT;
    assert_int_equal(encode_str(settings[8], &spec, "hello", 5, &a), DCTK_OK);
    assert_int_equal(encode_str(settings[8], &spec, "world", 5, &b), DCTK_OK);
    assert_int_equal(dctk_buf_append(&a, b.data, b.size), DCTK_OK);
    assert_int_equal(dctk_buf_append(&a, "\0\0\0", 3), DCTK_OK);
    assert_int_equal(decode_str(settings[8], &spec, a.data, a.size, &out), DCTK_OK);
    assert_int_equal(out.size, 10);
    assert_memory_equal(out.data, "helloworld", 10);
    dctk_buf_free(&a), dctk_buf_free(&b), dctk_buf_free(&out);
}

/* Appending an encoded chunk to a buffer gives the bytes a plain encode
 * gives, after what the buffer held; a codec's bound holds for data it cannot
 * compress (random bytes) and for empty input. With a bound the codec writes
 * into the buffer's tail, so a buffer reserved to the bound never moves. */
static void append_and_bounds(void **state) {
    (void)state;
    size_t n = 40008; /* whole elements of 1, 3, 4 and 8 bytes */
    uint8_t *noise = malloc(n);
    srand(7);
    for (size_t i = 0; i < n; i++) noise[i] = (uint8_t)(rand() >> 7);
    dctk_codec_ctx *ctx = dctk_codec_ctx_new();
    dctk_buf plain = DCTK_BUF_INIT, out = DCTK_BUF_INIT, tmp[2] = {DCTK_BUF_INIT, DCTK_BUF_INIT};
    for (size_t i = 0; i < NSETTINGS + 1; i++) {
        const char *last = i < NSETTINGS ? settings[i] : "{\"name\":\"crc32c\"}";
        char list[1024];
        snprintf(list, sizeof list, "[{\"name\":\"bytes\",\"configuration\":{\"endian\":\"little\"}},%s]", last);
        json_t *j = json_loads(list, 0, NULL);
        dctk_pipeline *p;
        if (dctk_pipeline_from_json(j, &p) != DCTK_OK) fail_msg("%s: %s", list, dctk_detail());
        json_decref(j);
        const dctk_codec *c = p->codecs[1];
        for (size_t len = 0; len <= n; len += n) {
            size_t shape[1] = {len};
            dctk_chunk_spec spec = dctk_spec_make(DCTK_UINT8, 1, shape);
            if (dctk_pipeline_encode(p, ctx, &spec, noise, &plain, tmp) != DCTK_OK)
                fail_msg("%s, %zu bytes: %s", last, len, dctk_detail());
            if (c->vt->bound) assert_true(plain.size <= c->vt->bound(c, &spec, len));
            dctk_buf_resize(&out, 3);
            memcpy(out.data, "abc", 3);
            if (c->vt->bound) dctk_buf_reserve(&out, 3 + c->vt->bound(c, &spec, len));
            uint8_t *before = out.data;
            assert_int_equal(dctk_pipeline_encode_append(p, ctx, &spec, noise, &out, tmp), DCTK_OK);
            if (c->vt->bound) assert_ptr_equal(out.data, before);
            assert_int_equal(out.size, 3 + plain.size);
            assert_memory_equal(out.data, "abc", 3);
            assert_memory_equal(out.data + 3, plain.data, plain.size);
        }
        dctk_pipeline_free(p);
    }
    dctk_buf_free(&plain), dctk_buf_free(&out), dctk_buf_free(&tmp[0]), dctk_buf_free(&tmp[1]);
    dctk_codec_ctx_free(ctx);
    free(noise);
}

static int ctx_up(void **state) {
    (void)state;
    return (tctx = dctk_codec_ctx_new()) ? 0 : -1;
}

static int ctx_down(void **state) {
    (void)state;
    dctk_codec_ctx_free(tctx);
    return 0;
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(round_trips_on_fields_and_edges),
        cmocka_unit_test(kept_contexts_write_the_bytes_of_fresh_ones),
        cmocka_unit_test(json_is_stable),
        cmocka_unit_test(bad_configurations_are_refused),
        cmocka_unit_test(byte_formats),
        cmocka_unit_test(shuffle_matches_definition),
        cmocka_unit_test(blosc_defaults_follow_the_array),
        cmocka_unit_test(zstd_streamed_and_concatenated_frames),
        cmocka_unit_test(claimed_sizes_are_capped),
        cmocka_unit_test(gzip_members_and_padding),
        cmocka_unit_test(append_and_bounds),
    };
    return cmocka_run_group_tests(tests, ctx_up, ctx_down);
}
