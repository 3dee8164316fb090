/* EBCC's own format ("ebcc_filter" under any-numcodecs.array-bytes) against
 * the reference: streams that spcl/EBCC's ebcc_encode wrote
 * (tests/interop/make_golden_ebcc.py; real libncarg-data fields, base layer
 * alone and base plus SPIHT residual) decode here to exactly the floats its
 * ebcc_decode gives, bit for bit. Then our own streams of the same inputs
 * decode here within the bound, and damaged golden streams are refused or
 * decoded without harm. (That EBCC's decoder reads our streams is
 * tests/interop/test_ebcc_reference.py, run when a reference build is at
 * hand.) */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <math.h>

#include <cmocka.h>

#include "golden.h"

static dctk_codec_ctx *ctx;

static dctk_codec *codec_for(const json_t *c) {
    json_t *obj = json_pack("{s:s,s:{s:s,s:O}}", "name", "any-numcodecs.array-bytes", "configuration", "id",
                            "ebcc_filter", "arglist", json_object_get(c, "arglist"));
    dctk_codec *codec = NULL;
    if (dctk_codec_from_json(obj, &codec) != DCTK_OK) fail_msg("codec: %s", dctk_detail());
    json_decref(obj);
    return codec;
}

static void golden_decode_bit_exact(void **state) {
    (void)state;
    golden_set g;
    const json_t *cases = golden_open(&g, "ebcc", 20);
    size_t i, residual = 0;
    const json_t *c;
    json_array_foreach(cases, i, c) {
        const char *name = json_string_value(json_object_get(c, "name"));
        dctk_chunk_spec s = golden_spec(c);
        size_t ne, nd;
        uint8_t *enc = golden_load(&g, c, "encoded", &ne), *want = golden_load(&g, c, "decoded", &nd);
        assert_int_equal(nd, dctk_spec_nbytes(&s));
        dctk_codec *codec = codec_for(c);
        dctk_buf out = DCTK_BUF_INIT;
        if (dctk_codec_decode(codec, ctx, &s, enc, ne, &out) != DCTK_OK) fail_msg("%s: %s", name, dctk_detail());
        assert_int_equal(out.size, nd);
        size_t diff = 0;
        for (size_t k = 0; k < nd / 4; k++) diff += memcmp(out.data + 4 * k, want + 4 * k, 4) != 0;
        if (diff) fail_msg("%s: %zu of %zu values differ from EBCC's decoder", name, diff, nd / 4);
        uint64_t coeffs;
        memcpy(&coeffs, enc + 16, 8);
        residual += coeffs > 0;
        dctk_buf_free(&out);
        dctk_codec_free(codec);
        free(enc), free(want);
    }
    /* the residual layer must be exercised, not only the base layer */
    if (residual < 5) fail_msg("only %zu golden streams carry a SPIHT residual", residual);
    golden_close(&g);
}

/* Ours: the same inputs, encoded here, come back within the bound. */
static void ours_within_bound(void **state) {
    (void)state;
    golden_set g;
    const json_t *cases = golden_open(&g, "ebcc", 20);
    size_t i, written = 0;
    const json_t *c;
    json_array_foreach(cases, i, c) {
        const char *name = json_string_value(json_object_get(c, "name"));
        dctk_chunk_spec s = golden_spec(c);
        size_t nx;
        float *x = (float *)golden_load(&g, c, "input", &nx);
        double bound = json_real_value(json_object_get(c, "max_error_target"));
        dctk_codec *codec = codec_for(c);
        dctk_buf enc = DCTK_BUF_INIT, out = DCTK_BUF_INIT;
        dctk_status st = dctk_codec_encode(codec, ctx, &s, x, nx, &enc);
        if (st == DCTK_OK) {
            written++;
            if (dctk_codec_decode(codec, ctx, &s, enc.data, enc.size, &out) != DCTK_OK)
                fail_msg("%s: %s", name, dctk_detail());
            const float *y = (const float *)out.data;
            for (size_t k = 0; k < nx / 4; k++)
                if (!(fabsf(x[k] - y[k]) <= (float)bound))
                    fail_msg("%s: value %zu: |%g - %g| > %g", name, k, (double)x[k], (double)y[k], bound);
        } else if (st != DCTK_ERR_UNSUPPORTED) {
            fail_msg("%s: encode: %s", name, dctk_detail());
        }
        dctk_buf_free(&enc), dctk_buf_free(&out);
        dctk_codec_free(codec);
        free(x);
    }
    if (written < 15) fail_msg("only %zu of the golden inputs could be written within their bound", written);
    golden_close(&g);
}

/* Damage: truncations and bit flips of golden streams with a residual are
 * refused as corrupt or decoded, never crash or read out of bounds (ASan). */
static void damaged_streams(void **state) {
    (void)state;
    golden_set g;
    const json_t *cases = golden_open(&g, "ebcc", 20);
    size_t i;
    const json_t *c;
    json_array_foreach(cases, i, c) {
        if (!json_is_true(json_object_get(c, "residual_layer"))) continue;
        dctk_chunk_spec s = golden_spec(c);
        size_t ne;
        uint8_t *enc = golden_load(&g, c, "encoded", &ne);
        dctk_codec *codec = codec_for(c);
        dctk_buf out = DCTK_BUF_INIT;
        for (size_t cut = 0; cut < ne; cut += ne / 7 + 1) {
            dctk_status st = dctk_codec_decode(codec, ctx, &s, enc, cut, &out);
            assert_int_equal(st, DCTK_ERR_CORRUPT);
        }
        uint8_t *copy = malloc(ne);
        for (size_t k = 0; k < 24; k++) {
            memcpy(copy, enc, ne);
            copy[48 + (k * 7919) % (ne - 48)] ^= (uint8_t)(1u << (k % 8));
            dctk_status st = dctk_codec_decode(codec, ctx, &s, copy, ne, &out);
            assert_true(st == DCTK_OK || st == DCTK_ERR_CORRUPT);
        }
        free(copy);
        dctk_buf_free(&out);
        dctk_codec_free(codec);
        free(enc);
    }
    golden_close(&g);
}

int main(void) {
    ctx = dctk_codec_ctx_new();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(golden_decode_bit_exact),
        cmocka_unit_test(ours_within_bound),
        cmocka_unit_test(damaged_streams),
    };
    int r = cmocka_run_group_tests(tests, NULL, NULL);
    dctk_codec_ctx_free(ctx);
    return r;
}
