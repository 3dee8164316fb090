/* Golden files written by numcodecs 0.11 (tests/interop/make_golden_compressors.py):
 * every committed encoding decodes here to the committed input, and where
 * numcodecs drives the same library the same way (manifest "identical") our
 * encoder reproduces its bytes exactly. Runs without Python. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "unit/golden.h"

static golden_set g;

static void check_case(const json_t *c, dctk_codec_ctx *ctx) {
    const char *enc_name = json_string_value(json_object_get(c, "encoded"));
    dctk_codec *codec;
    if (dctk_codec_from_json(json_object_get(c, "codec"), &codec) != DCTK_OK) fail_msg("%s: %s", enc_name, dctk_detail());
    dctk_chunk_spec spec = golden_spec(c);
    size_t n_in, n_enc;
    uint8_t *in = golden_load(&g, c, "input", &n_in);
    uint8_t *enc = golden_load(&g, c, "encoded", &n_enc);
    assert_int_equal(n_in, dctk_spec_nbytes(&spec));
    dctk_buf out = DCTK_BUF_INIT;
    if (dctk_codec_decode(codec, ctx, &spec, enc, n_enc, &out) != DCTK_OK) fail_msg("%s: %s", enc_name, dctk_detail());
    if (out.size != n_in || memcmp(out.data, in, n_in) != 0) fail_msg("%s: decodes to other bytes", enc_name);
    if (json_is_true(json_object_get(c, "identical"))) {
        assert_int_equal(dctk_codec_encode(codec, ctx, &spec, in, n_in, &out), DCTK_OK);
        if (out.size != n_enc || memcmp(out.data, enc, n_enc) != 0)
            fail_msg("%s: our encoding differs from numcodecs' (%zu vs %zu bytes)", enc_name, out.size, n_enc);
    }
    dctk_buf_free(&out);
    free(in);
    free(enc);
    dctk_codec_free(codec);
}

static void golden_files_decode(void **state) {
    (void)state;
    const json_t *cases = golden_open(&g, "codecs", 30);
    dctk_codec_ctx *ctx = dctk_codec_ctx_new();
    size_t i, identical = 0;
    const json_t *c;
    json_array_foreach(cases, i, c) {
        check_case(c, ctx);
        identical += json_is_true(json_object_get(c, "identical"));
    }
    assert_true(identical >= 20);
    dctk_codec_ctx_free(ctx);
    golden_close(&g);
}

int main(void) {
    const struct CMUnitTest tests[] = {cmocka_unit_test(golden_files_decode)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
