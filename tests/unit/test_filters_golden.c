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

#include "dctk/codec.h"
#include "dctk/util.h"

static char dir[4096];

static uint8_t *load(const char *name, size_t *n) {
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    uint8_t *p = NULL;
    if (dctk_read_file(path, &p, n) != DCTK_OK) fail_msg("cannot read %s: %s", path, dctk_detail());
    return p;
}

static dctk_chunk_spec spec_of(const json_t *c) {
    dctk_chunk_spec s = {0};
    assert_int_equal(dctk_dtype_parse(json_string_value(json_object_get(c, "dtype")), &s.dtype), DCTK_OK);
    const json_t *shape = json_object_get(c, "shape");
    s.ndim = (int)json_array_size(shape);
    for (int d = 0; d < s.ndim; d++) s.shape[d] = (size_t)json_integer_value(json_array_get(shape, (size_t)d));
    return s;
}

static void check_case(const json_t *c, dctk_codec_ctx *ctx, dctk_buf *out) {
    const char *name = json_string_value(json_object_get(c, "name"));
    dctk_codec *codec;
    if (dctk_codec_from_json(json_object_get(c, "codec"), &codec) != DCTK_OK) fail_msg("%s: %s", name, dctk_detail());
    dctk_chunk_spec spec = spec_of(c);
    size_t nin, nenc, ndec;
    uint8_t *in = load(json_string_value(json_object_get(c, "input")), &nin);
    uint8_t *enc = load(json_string_value(json_object_get(c, "encoded")), &nenc);
    uint8_t *dec = load(json_string_value(json_object_get(c, "decoded")), &ndec);

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
    const char *src = getenv("DCTK_SRC");
    snprintf(dir, sizeof dir, "%s/tests/golden/filters", src ? src : ".");
    char path[4200];
    snprintf(path, sizeof path, "%s/manifest.json", dir);
    json_error_t err;
    json_t *m = json_load_file(path, 0, &err);
    if (!m) fail_msg("%s: %s", path, err.text);
    const json_t *cases = json_object_get(m, "cases");
    assert_true(json_array_size(cases) >= 20);
    dctk_codec_ctx *ctx = dctk_codec_ctx_new();
    dctk_buf out = DCTK_BUF_INIT;
    for (size_t i = 0; i < json_array_size(cases); i++) check_case(json_array_get(cases, i), ctx, &out);
    dctk_buf_free(&out);
    dctk_codec_ctx_free(ctx);
    json_decref(m);
}

int main(void) {
    const struct CMUnitTest tests[] = {cmocka_unit_test(golden_cases)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
