/* Registry and pipeline: JSON in and out, order checks, round trips. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "dctk/codec.h"

static void unknown_codec_is_named(void **state) {
    (void)state;
    dctk_codec *c;
    assert_int_equal(dctk_codec_from_string("{\"name\":\"nosuch\"}", &c), DCTK_ERR_NOT_FOUND);
    assert_non_null(strstr(dctk_detail(), "nosuch"));
    assert_int_equal(dctk_codec_from_string("{\"name\":\"bytes\",\"configuration\":{\"endian\":\"middle\"}}", &c),
                     DCTK_ERR_ARG);
    assert_int_equal(dctk_codec_from_string("[1]", &c), DCTK_ERR_ARG);
}

static void bytes_json_round_trip(void **state) {
    (void)state;
    dctk_codec *c;
    assert_int_equal(dctk_codec_from_string("{\"name\":\"bytes\",\"configuration\":{\"endian\":\"little\"}}", &c),
                     DCTK_OK);
    char *s = dctk_codec_to_string(c);
    assert_string_equal(s, "{\"configuration\":{\"endian\":\"little\"},\"name\":\"bytes\"}");
    free(s);
    dctk_codec_free(c);
}

static void pipeline_order_and_round_trip(void **state) {
    (void)state;
    json_t *bad = json_loads("[{\"name\":\"crc32c\"},{\"name\":\"bytes\"}]", 0, NULL);
    dctk_pipeline *p;
    assert_int_equal(dctk_pipeline_from_json(bad, &p), DCTK_ERR_ARG);
    json_decref(bad);

    json_t *good = json_loads("[{\"name\":\"bytes\",\"configuration\":{\"endian\":\"big\"}},{\"name\":\"crc32c\"}]", 0, NULL);
    assert_int_equal(dctk_pipeline_from_json(good, &p), DCTK_OK);
    json_decref(good);
    size_t shape[2] = {3, 5};
    dctk_chunk_spec spec = dctk_spec_make(DCTK_INT32, 2, shape);
    int32_t in[15], back[15];
    for (int i = 0; i < 15; i++) in[i] = i * 1000003 - 7;
    dctk_codec_ctx *ctx = dctk_codec_ctx_new();
    dctk_buf out = DCTK_BUF_INIT, tmp[2] = {DCTK_BUF_INIT, DCTK_BUF_INIT};
    assert_int_equal(dctk_pipeline_encode(p, ctx, &spec, in, &out, tmp), DCTK_OK);
    assert_int_equal(out.size, 15 * 4 + 4);
    /* big endian: most significant byte first */
    assert_int_equal(out.data[4 + 3], (uint8_t)(in[1] & 0xff));
    assert_int_equal(dctk_pipeline_decode(p, ctx, &spec, out.data, out.size, back, tmp), DCTK_OK);
    assert_memory_equal(in, back, sizeof in);
    out.data[5] ^= 1; /* the checksum must catch it */
    assert_int_equal(dctk_pipeline_decode(p, ctx, &spec, out.data, out.size, back, tmp), DCTK_ERR_CORRUPT);
    assert_int_equal(dctk_pipeline_decode(p, ctx, &spec, out.data, 3, back, tmp), DCTK_ERR_CORRUPT);
    dctk_buf_free(&out);
    dctk_buf_free(&tmp[0]);
    dctk_buf_free(&tmp[1]);
    dctk_codec_ctx_free(ctx);
    dctk_pipeline_free(p);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(unknown_codec_is_named),
        cmocka_unit_test(bytes_json_round_trip),
        cmocka_unit_test(pipeline_order_and_round_trip),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
