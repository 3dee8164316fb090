/* The filters and the ZFPY serializer on bad input: bad configurations,
 * chunks of the wrong type or size, and corrupt or truncated ZFP streams give
 * an error status with a detail, never a crash or an out-of-bounds read (this
 * test also runs under ASan/UBSan). Plus the JSON each codec writes and a few
 * exact results that the interop test cannot reach (wrapping, empty chunks). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <zfp.h>

#include "dctk/codec.h"

/* The per-thread codec context the contract requires (one thread here). */
static dctk_codec_ctx *tctx;

static dctk_status make(const char *json, dctk_codec **c) { return dctk_codec_from_string(json, c); }

static void bad_configs(void **state) {
    (void)state;
    static const struct {
        const char *json;
        dctk_status want;
    } cases[] = {
        {"{\"name\":\"numcodecs.bitround\",\"configuration\":{\"keepbits\":-1}}", DCTK_ERR_ARG},
        {"{\"name\":\"numcodecs.bitround\",\"configuration\":{\"keepbits\":53}}", DCTK_ERR_ARG},
        {"{\"name\":\"numcodecs.bitround\",\"configuration\":{}}", DCTK_ERR_ARG},
        {"{\"name\":\"numcodecs.bitround\",\"configuration\":{\"keepbits\":\"7\"}}", DCTK_ERR_ARG},
        {"{\"name\":\"numcodecs.quantize\",\"configuration\":{\"dtype\":\"<f4\"}}", DCTK_ERR_ARG},
        {"{\"name\":\"numcodecs.quantize\",\"configuration\":{\"digits\":3,\"dtype\":\"<i4\"}}", DCTK_ERR_ARG},
        {"{\"name\":\"numcodecs.delta\",\"configuration\":{\"dtype\":\"<c8\"}}", DCTK_ERR_ARG},
        {"{\"name\":\"numcodecs.delta\",\"configuration\":{\"dtype\":\"<f4\",\"levels\":2}}", DCTK_ERR_ARG},
        {"{\"name\":\"numcodecs.fixedscaleoffset\",\"configuration\":{\"offset\":1,\"dtype\":\"<f4\"}}", DCTK_ERR_ARG},
        {"{\"name\":\"numcodecs.fixedscaleoffset\",\"configuration\":{\"offset\":[1],\"scale\":2}}", DCTK_ERR_ARG},
        {"{\"name\":\"transpose\",\"configuration\":{\"order\":[0,0]}}", DCTK_ERR_ARG},
        {"{\"name\":\"transpose\",\"configuration\":{\"order\":[1,2]}}", DCTK_ERR_ARG},
        {"{\"name\":\"transpose\",\"configuration\":{\"order\":\"C\"}}", DCTK_ERR_ARG},
        {"{\"name\":\"transpose\"}", DCTK_ERR_ARG},
        {"{\"name\":\"numcodecs.zfpy\",\"configuration\":{\"mode\":1}}", DCTK_ERR_ARG},
        {"{\"name\":\"numcodecs.zfpy\",\"configuration\":{\"mode\":5}}", DCTK_ERR_ARG},
        {"{\"name\":\"numcodecs.zfpy\",\"configuration\":{\"mode\":4,\"tolerance\":\"x\"}}", DCTK_ERR_ARG},
        {"{\"name\":\"numcodecs.zfpy\",\"configuration\":{\"mode\":3,\"precision\":65}}", DCTK_ERR_ARG},
        {"{\"name\":\"numcodecs.zfpy\",\"configuration\":{\"mode\":2,\"rate\":\"NaN\"}}", DCTK_ERR_ARG},
        {"{\"name\":\"any-numcodecs.array-array\",\"configuration\":{\"linear_width\":1}}", DCTK_ERR_NOT_FOUND},
        {"{\"name\":\"any-numcodecs.array-array\",\"configuration\":{\"id\":\"log.rs\"}}", DCTK_ERR_NOT_FOUND},
        {"{\"name\":\"any-numcodecs.array-array\",\"configuration\":{\"id\":\"asinh.rs\",\"linear_width\":0}}",
         DCTK_ERR_ARG},
        {"{\"name\":\"any-numcodecs.array-array\",\"configuration\":{\"id\":\"asinh.rs\"}}", DCTK_ERR_ARG},
        {"{\"name\":\"any-numcodecs.array-array\",\"configuration\":{\"id\":\"asinh.rs\",\"linear_width\":1,"
         "\"_version\":\"2.0.0\"}}", DCTK_ERR_UNSUPPORTED},
        {"{\"name\":\"any-numcodecs.array-array\",\"configuration\":{\"id\":\"fixed-offset-scale.rs\",\"offset\":1,"
         "\"scale\":0}}", DCTK_ERR_ARG},
        {"{\"name\":\"any-numcodecs.array-array\",\"configuration\":{\"id\":\"fixed-offset-scale.rs\",\"offset\":1}}",
         DCTK_ERR_ARG},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        dctk_codec *c = NULL;
        dctk_status st = make(cases[i].json, &c);
        if (st != cases[i].want) fail_msg("%s: status %d, want %d (%s)", cases[i].json, st, cases[i].want, dctk_detail());
        assert_true(strlen(dctk_detail()) > 0);
        assert_null(c);
    }
}

static void json_round_trips(void **state) {
    (void)state;
    static const char *const texts[] = {
        "{\"configuration\":{\"astype\":\"<f8\",\"dtype\":\"<f4\"},\"name\":\"numcodecs.delta\"}",
        "{\"configuration\":{\"keepbits\":7},\"name\":\"numcodecs.bitround\"}",
        "{\"configuration\":{\"astype\":\"<f4\",\"digits\":3,\"dtype\":\"<f4\"},\"name\":\"numcodecs.quantize\"}",
        /* integer and float scalars keep their kind: numpy computes differently with each */
        "{\"configuration\":{\"astype\":\"|u1\",\"dtype\":\"<f8\",\"offset\":1000,\"scale\":10.5},"
        "\"name\":\"numcodecs.fixedscaleoffset\"}",
        "{\"configuration\":{\"_version\":\"1.0.0\",\"id\":\"asinh.rs\",\"linear_width\":0.25},"
        "\"name\":\"any-numcodecs.array-array\"}",
        "{\"configuration\":{\"_version\":\"1.0.0\",\"id\":\"fixed-offset-scale.rs\",\"offset\":-3.5,\"scale\":2.0},"
        "\"name\":\"any-numcodecs.array-array\"}",
        "{\"configuration\":{\"order\":[2,0,1]},\"name\":\"transpose\"}",
        "{\"configuration\":{\"mode\":4,\"precision\":-1,\"rate\":-1.0,\"tolerance\":0.5},\"name\":\"numcodecs.zfpy\"}",
    };
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++) {
        dctk_codec *c;
        if (make(texts[i], &c) != DCTK_OK) fail_msg("%s: %s", texts[i], dctk_detail());
        char *s = dctk_codec_to_string(c);
        assert_string_equal(s, texts[i]);
        free(s);
        dctk_codec_free(c);
    }
    /* numcodecs' own get_config carries compression_kwargs: accepted */
    dctk_codec *c;
    assert_int_equal(make("{\"name\":\"numcodecs.zfpy\",\"configuration\":{\"mode\":2,\"rate\":8,\"tolerance\":-1,"
                          "\"precision\":-1,\"compression_kwargs\":{\"rate\":8}}}", &c), DCTK_OK);
    dctk_codec_free(c);
}

/* Encode then decode n values of t with a codec given as JSON; returns the status of the step that failed. */
static dctk_status run(const char *json, dctk_dtype t, int ndim, const size_t *shape, const void *src, size_t n,
                       dctk_buf *enc, dctk_buf *dec) {
    dctk_codec *c;
    if (make(json, &c) != DCTK_OK) fail_msg("%s: %s", json, dctk_detail());
    dctk_chunk_spec spec = dctk_spec_make(t, ndim, shape);
    dctk_codec_ctx *ctx = dctk_codec_ctx_new();
    dctk_status st = dctk_codec_encode(c, ctx, &spec, src, n, enc);
    if (st == DCTK_OK) st = dctk_codec_decode(c, ctx, &spec, enc->data, enc->size, dec);
    dctk_codec_ctx_free(ctx);
    dctk_codec_free(c);
    return st;
}

static void wrong_chunks(void **state) {
    (void)state;
    int32_t i32[8] = {0};
    float f32[8] = {1, 2, 3, NAN, 5, 6, 7, 8};
    size_t shape[1] = {8};
    dctk_buf enc = DCTK_BUF_INIT, dec = DCTK_BUF_INIT;
    assert_int_equal(run("{\"name\":\"numcodecs.bitround\",\"configuration\":{\"keepbits\":3}}", DCTK_INT32, 1, shape,
                         i32, sizeof i32, &enc, &dec), DCTK_ERR_UNSUPPORTED);
    assert_int_equal(run("{\"name\":\"numcodecs.bitround\",\"configuration\":{\"keepbits\":30}}", DCTK_FLOAT32, 1,
                         shape, f32, sizeof f32, &enc, &dec), DCTK_ERR_ARG);
    assert_int_equal(run("{\"name\":\"numcodecs.delta\",\"configuration\":{\"dtype\":\"<f8\"}}", DCTK_FLOAT32, 1,
                         shape, f32, sizeof f32, &enc, &dec), DCTK_ERR_ARG);
    assert_int_equal(run("{\"name\":\"numcodecs.delta\",\"configuration\":{\"dtype\":\"<f4\"}}", DCTK_FLOAT32, 1,
                         shape, f32, sizeof f32 - 4, &enc, &dec), DCTK_ERR_CODEC);
    assert_int_equal(run("{\"name\":\"any-numcodecs.array-array\",\"configuration\":{\"id\":\"asinh.rs\","
                         "\"linear_width\":1}}", DCTK_FLOAT32, 1, shape, f32, sizeof f32, &enc, &dec), DCTK_ERR_CODEC);
    assert_int_equal(run("{\"name\":\"numcodecs.zfpy\",\"configuration\":{\"mode\":4,\"tolerance\":0.1}}", DCTK_INT16,
                         1, shape, i32, 16, &enc, &dec), DCTK_ERR_UNSUPPORTED);
    assert_int_equal(run("{\"name\":\"transpose\",\"configuration\":{\"order\":[1,0]}}", DCTK_INT32, 1, shape, i32,
                         sizeof i32, &enc, &dec), DCTK_ERR_ARG);
    /* a decode given the wrong number of bytes */
    dctk_codec *c;
    assert_int_equal(make("{\"name\":\"numcodecs.quantize\",\"configuration\":{\"digits\":2,\"dtype\":\"<f4\","
                          "\"astype\":\"<f8\"}}", &c), DCTK_OK);
    dctk_chunk_spec spec = dctk_spec_make(DCTK_FLOAT32, 1, shape);
    assert_int_equal(dctk_codec_decode(c, tctx, &spec, f32, sizeof f32, &dec), DCTK_ERR_CORRUPT);
    dctk_codec_free(c);
    dctk_buf_free(&enc);
    dctk_buf_free(&dec);
}

static void exact_results(void **state) {
    (void)state;
    dctk_buf enc = DCTK_BUF_INIT, dec = DCTK_BUF_INIT;
    /* integer delta wraps both ways */
    uint8_t u[4] = {5, 3, 250, 1}, want[4] = {5, 254, 247, 7};
    size_t four[1] = {4};
    assert_int_equal(run("{\"name\":\"numcodecs.delta\",\"configuration\":{\"dtype\":\"|u1\"}}", DCTK_UINT8, 1, four, u,
                         4, &enc, &dec), DCTK_OK);
    assert_memory_equal(enc.data, want, 4);
    assert_memory_equal(dec.data, u, 4);
    /* empty chunks give empty output */
    size_t zero[2] = {0, 3};
    static const char *const filters[] = {
        "{\"name\":\"numcodecs.delta\",\"configuration\":{\"dtype\":\"<f8\"}}",
        "{\"name\":\"numcodecs.bitround\",\"configuration\":{\"keepbits\":3}}",
        "{\"name\":\"numcodecs.quantize\",\"configuration\":{\"digits\":3,\"dtype\":\"<f8\",\"astype\":\"<f4\"}}",
        "{\"name\":\"numcodecs.fixedscaleoffset\",\"configuration\":{\"offset\":1,\"scale\":2,\"dtype\":\"<f8\"}}",
        "{\"name\":\"transpose\",\"configuration\":{\"order\":[1,0]}}",
    };
    for (size_t i = 0; i < sizeof filters / sizeof filters[0]; i++) {
        assert_int_equal(run(filters[i], DCTK_FLOAT64, 2, zero, NULL, 0, &enc, &dec), DCTK_OK);
        assert_int_equal(enc.size, 0);
        assert_int_equal(dec.size, 0);
    }
    /* transpose of a 4-D int16 chunk and back */
    size_t shape[4] = {2, 3, 4, 5};
    int16_t x[120];
    for (int i = 0; i < 120; i++) x[i] = (int16_t)(i * 7 - 300);
    assert_int_equal(run("{\"name\":\"transpose\",\"configuration\":{\"order\":[3,1,0,2]}}", DCTK_INT16, 4, shape, x,
                         sizeof x, &enc, &dec), DCTK_OK);
    /* out[a][b][c][d] = x[c][b][d][a]: element (1,2,1,3) of the output */
    int16_t *o = (int16_t *)enc.data;
    assert_int_equal(o[((1 * 3 + 2) * 2 + 1) * 4 + 3], x[((1 * 3 + 2) * 4 + 3) * 5 + 1]);
    assert_memory_equal(dec.data, x, sizeof x);
    dctk_buf_free(&enc);
    dctk_buf_free(&dec);
}

/* A valid stream of a smooth 3-D float32 chunk. */
static void valid_stream(const char *json, dctk_chunk_spec *spec, float *x, dctk_buf *enc) {
    size_t shape[3] = {6, 10, 14};
    *spec = dctk_spec_make(DCTK_FLOAT32, 3, shape);
    for (size_t i = 0; i < 840; i++) x[i] = (float)(sin((double)i * 0.05) * 100.0 + (double)(i % 14));
    dctk_codec *c;
    assert_int_equal(make(json, &c), DCTK_OK);
    assert_int_equal(dctk_codec_encode(c, tctx, spec, x, 840 * sizeof(float), enc), DCTK_OK);
    dctk_codec_free(c);
}

static void zfp_truncated_and_corrupt(void **state) {
    (void)state;
    static const char *const modes[] = {
        "{\"name\":\"numcodecs.zfpy\",\"configuration\":{\"mode\":4,\"tolerance\":0.01}}",
        "{\"name\":\"numcodecs.zfpy\",\"configuration\":{\"mode\":2,\"rate\":12}}",
        "{\"name\":\"numcodecs.zfpy\",\"configuration\":{\"mode\":3,\"precision\":20}}",
        "{\"name\":\"numcodecs.zfpy\",\"configuration\":{\"mode\":4}}",
    };
    float x[840];
    dctk_buf enc = DCTK_BUF_INIT, dec = DCTK_BUF_INIT;
    uint8_t *copy = malloc(16384);
    srand(12345);
    for (size_t m = 0; m < sizeof modes / sizeof modes[0]; m++) {
        dctk_chunk_spec spec;
        dctk_codec *c;
        valid_stream(modes[m], &spec, x, &enc);
        assert_int_equal(make(modes[m], &c), DCTK_OK);
        assert_true(enc.size <= 16384);
        assert_int_equal(dctk_codec_decode(c, tctx, &spec, enc.data, enc.size, &dec), DCTK_OK);
        /* every truncation is refused; copies sized exactly so ASan sees any overread */
        for (size_t n = 0; n < enc.size; n++) {
            uint8_t *t = malloc(n ? n : 1);
            memcpy(t, enc.data, n);
            dctk_status st = dctk_codec_decode(c, tctx, &spec, t, n, &dec);
            if (st != DCTK_ERR_CORRUPT) fail_msg("mode %zu: truncated to %zu of %zu bytes: status %d", m, n, enc.size, st);
            free(t);
        }
        /* flipped bytes and random garbage: an error or some values, never a crash */
        for (size_t i = 0; i < enc.size; i++) {
            memcpy(copy, enc.data, enc.size);
            copy[i] ^= (uint8_t)(1 + rand() % 255);
            dctk_status st = dctk_codec_decode(c, tctx, &spec, copy, enc.size, &dec);
            assert_true(st == DCTK_OK || st == DCTK_ERR_CORRUPT);
            if (i < 4) assert_int_equal(st, DCTK_ERR_CORRUPT); /* the magic */
        }
        for (int r = 0; r < 200; r++) {
            size_t n = (size_t)(rand() % 300);
            for (size_t i = 0; i < n; i++) copy[i] = (uint8_t)rand();
            if (n > 3) memcpy(copy, "zfp\x05", 4); /* get past the magic now and then */
            dctk_status st = dctk_codec_decode(c, tctx, &spec, copy, n, &dec);
            assert_true(st == DCTK_OK || st == DCTK_ERR_CORRUPT);
        }
        dctk_codec_free(c);
    }
    free(copy);
    dctk_buf_free(&enc);
    dctk_buf_free(&dec);
}

static void zfp_header_mismatch(void **state) {
    (void)state;
    const char *json = "{\"name\":\"numcodecs.zfpy\",\"configuration\":{\"mode\":4,\"tolerance\":0.01}}";
    float x[840];
    dctk_buf enc = DCTK_BUF_INIT, dec = DCTK_BUF_INIT;
    dctk_chunk_spec spec;
    valid_stream(json, &spec, x, &enc);
    dctk_codec *c;
    assert_int_equal(make(json, &c), DCTK_OK);
    dctk_chunk_spec other = spec;
    other.dtype = DCTK_FLOAT64;
    assert_int_equal(dctk_codec_decode(c, tctx, &other, enc.data, enc.size, &dec), DCTK_ERR_CORRUPT);
    assert_non_null(strstr(dctk_detail(), "type"));
    other = spec;
    other.shape[0] = 7;
    assert_int_equal(dctk_codec_decode(c, tctx, &other, enc.data, enc.size, &dec), DCTK_ERR_CORRUPT);
    assert_non_null(strstr(dctk_detail(), "values"));
    /* same count, other shape: accepted, as numcodecs reshapes */
    other = spec;
    other.shape[0] = 60, other.shape[1] = 14, other.ndim = 2;
    assert_int_equal(dctk_codec_decode(c, tctx, &other, enc.data, enc.size, &dec), DCTK_OK);
    /* the accuracy bound holds */
    assert_int_equal(dctk_codec_decode(c, tctx, &spec, enc.data, enc.size, &dec), DCTK_OK);
    const float *y = (const float *)dec.data;
    for (int i = 0; i < 840; i++) assert_true(fabs((double)y[i] - (double)x[i]) <= 0.01);
    dctk_codec_free(c);
    dctk_buf_free(&enc);
    dctk_buf_free(&dec);
}

/* A fixed rate too small for a float block's exponent (1 + 8 bits, 1 + 11
 * for doubles): zfpy hands zfp_stream_set_rate no type, so zfp does not raise
 * the rate and its encoder writes past zfp_stream_maximum_size (a solved rate
 * of 1 or 2 on a chunk zfp codes in 1-D corrupted the heap of a sweep). Such
 * a rate is refused before zfp runs, and a stream whose header claims one is
 * corrupt, not read past its end. */
static void zfp_rate_below_exponent(void **state) {
    (void)state;
    float x[64];
    double d[64];
    for (int i = 0; i < 64; i++) x[i] = (float)(1000.0 + 10.0 * sin(i * 0.3)), d[i] = x[i];
    size_t shape1[1] = {64}, shape2[2] = {8, 8};
    dctk_buf enc = DCTK_BUF_INIT, dec = DCTK_BUF_INIT;
    static const struct {
        const char *json;
        dctk_dtype t;
        int ndim;
        dctk_status want;
    } cases[] = {
        /* 1-D: 4 values a block, rate r gives 4r bits */
        {"{\"name\":\"numcodecs.zfpy\",\"configuration\":{\"mode\":2,\"rate\":2}}", DCTK_FLOAT32, 1, DCTK_ERR_UNSUPPORTED},
        {"{\"name\":\"numcodecs.zfpy\",\"configuration\":{\"mode\":2,\"rate\":3}}", DCTK_FLOAT32, 1, DCTK_OK},
        {"{\"name\":\"numcodecs.zfpy\",\"configuration\":{\"mode\":2,\"rate\":2}}", DCTK_FLOAT64, 1, DCTK_ERR_UNSUPPORTED},
        {"{\"name\":\"numcodecs.zfpy\",\"configuration\":{\"mode\":2,\"rate\":3}}", DCTK_FLOAT64, 1, DCTK_OK},
        /* 2-D: 16 values a block; zfpy_flat codes the same chunk in 1-D */
        {"{\"name\":\"numcodecs.zfpy\",\"configuration\":{\"mode\":2,\"rate\":0.5}}", DCTK_FLOAT32, 2, DCTK_ERR_UNSUPPORTED},
        {"{\"name\":\"numcodecs.zfpy\",\"configuration\":{\"mode\":2,\"rate\":1}}", DCTK_FLOAT32, 2, DCTK_OK},
        {"{\"name\":\"numcodecs.zfpy_flat\",\"configuration\":{\"mode\":2,\"rate\":1}}", DCTK_FLOAT32, 2,
         DCTK_ERR_UNSUPPORTED},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        const void *src = cases[k].t == DCTK_FLOAT32 ? (const void *)x : (const void *)d;
        size_t n = 64 * (cases[k].t == DCTK_FLOAT32 ? sizeof(float) : sizeof(double));
        dctk_status st = run(cases[k].json, cases[k].t, cases[k].ndim, cases[k].ndim == 1 ? shape1 : shape2, src, n,
                             &enc, &dec);
        if (st != cases[k].want) fail_msg("%s on %d-D: status %d, want %d", cases[k].json, cases[k].ndim, st, cases[k].want);
        if (st != DCTK_OK) assert_non_null(strstr(dctk_detail(), "exponent"));
    }
    /* a header written by libzfp itself claiming 8 bits a block of 1-D floats,
     * followed by set bits, sized exactly so that ASan sees any overread */
    uint8_t *s = calloc(1, 96);
    bitstream *bs = stream_open(s, 96);
    zfp_stream *zs = zfp_stream_open(bs);
    zfp_field *f = zfp_field_1d(NULL, zfp_type_float, 64);
    zfp_stream_set_rate(zs, 2, zfp_type_none, 1, 0);
    size_t head = zfp_write_header(zs, f, ZFP_HEADER_FULL);
    assert_true(head > 0);
    zfp_stream_flush(zs);
    size_t used = stream_size(bs);
    memset(s + used, 0xff, 96 - used);
    zfp_field_free(f);
    zfp_stream_close(zs);
    stream_close(bs);
    dctk_codec *c;
    assert_int_equal(make(cases[0].json, &c), DCTK_OK);
    dctk_chunk_spec spec = dctk_spec_make(DCTK_FLOAT32, 1, shape1);
    assert_int_equal(dctk_codec_decode(c, tctx, &spec, s, 96, &dec), DCTK_ERR_CORRUPT);
    assert_non_null(strstr(dctk_detail(), "exponent"));
    dctk_codec_free(c);
    free(s);
    dctk_buf_free(&enc);
    dctk_buf_free(&dec);
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
        cmocka_unit_test(bad_configs),     cmocka_unit_test(json_round_trips),
        cmocka_unit_test(wrong_chunks),    cmocka_unit_test(exact_results),
        cmocka_unit_test(zfp_truncated_and_corrupt), cmocka_unit_test(zfp_header_mismatch),
        cmocka_unit_test(zfp_rate_below_exponent),
    };
    return cmocka_run_group_tests(tests, ctx_up, ctx_down);
}
