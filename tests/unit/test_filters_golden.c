/* Our filters and ZFPY serializer against golden files written by numcodecs
 * 0.11 and zfpy (tests/interop/make_golden_filters.py): for every case our
 * encoding of the input equals numcodecs' bytes, and our decoding of
 * numcodecs' bytes equals numcodecs' decoding, bit for bit. Runs without
 * Python. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "unit/golden.h"

static golden_set g;

static void check_case(const json_t *c, dctk_codec_ctx *ctx, dctk_buf *out) {
    const char *name = json_string_value(json_object_get(c, "name"));
    dctk_codec *codec;
    if (dctk_codec_from_json(json_object_get(c, "codec"), &codec) != DCTK_OK) fail_msg("%s: %s", name, dctk_detail());
    dctk_chunk_spec spec = golden_spec(c);
    size_t nin, nenc, ndec;
    uint8_t *in = golden_load(&g, c, "input", &nin);
    uint8_t *enc = golden_load(&g, c, "encoded", &nenc);
    uint8_t *dec = golden_load(&g, c, "decoded", &ndec);

    if (dctk_codec_encode(codec, ctx, &spec, in, nin, out) != DCTK_OK) fail_msg("%s encode: %s", name, dctk_detail());
    if (out->size != nenc || memcmp(out->data, enc, nenc) != 0) fail_msg("%s: encoded bytes differ from numcodecs'", name);
    if (dctk_codec_decode(codec, ctx, &spec, enc, nenc, out) != DCTK_OK) fail_msg("%s decode: %s", name, dctk_detail());
    if (out->size != ndec || memcmp(out->data, dec, ndec) != 0) fail_msg("%s: decoding differs from numcodecs'", name);
    free(in);
    free(enc);
    free(dec);
    dctk_codec_free(codec);
}

static void golden_cases(void **state) {
    (void)state;
    const json_t *cases = golden_open(&g, "filters", 20);
    dctk_codec_ctx *ctx = dctk_codec_ctx_new();
    dctk_buf out = DCTK_BUF_INIT;
    for (size_t i = 0; i < json_array_size(cases); i++) check_case(json_array_get(cases, i), ctx, &out);
    dctk_buf_free(&out);
    dctk_codec_ctx_free(ctx);
    golden_close(&g);
}

int main(void) {
    const struct CMUnitTest tests[] = {cmocka_unit_test(golden_cases)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
