/* The stable API's own forms (dctk/dctk.h) on what they must refuse: bad
 * JSON text, unknown codecs, impossible shapes and compress options, each
 * with a status and a line naming the culprit and nothing left behind (ASan
 * runs this too). What they do with real data: packaging_stable_api. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "dctk/dctk.h"

static const char *const BYTES = "[{\"name\":\"bytes\",\"configuration\":{\"endian\":\"little\"}}]";

static void pipeline_text_in_and_out(void **state) {
    (void)state;
    dctk_pipeline *p = NULL;
    assert_int_equal(dctk_pipeline_from_string("[{\"name\":\"bytes\"", &p), DCTK_ERR_ARG);
    assert_null(p);
    assert_non_null(strstr(dctk_detail(), "codec list JSON"));
    assert_int_equal(dctk_pipeline_from_string(NULL, &p), DCTK_ERR_ARG);
    assert_int_equal(dctk_pipeline_from_string("{\"name\":\"bytes\"}", &p), DCTK_ERR_ARG); /* not a list */
    assert_int_equal(dctk_pipeline_from_string("[{\"name\":\"zstd\"}]", &p), DCTK_ERR_ARG); /* no serializer */
    assert_int_equal(dctk_pipeline_from_string("[{\"name\":\"bytes\"},{\"name\":\"no.such\"}]", &p),
                     DCTK_ERR_NOT_FOUND);
    assert_non_null(strstr(dctk_detail(), "no.such"));
    assert_int_equal(dctk_pipeline_from_string(BYTES, &p), DCTK_OK);
    char *s = dctk_pipeline_to_string(p);
    assert_string_equal(s, "[{\"configuration\":{\"endian\":\"little\"},\"name\":\"bytes\"}]"); /* keys sorted */
    free(s);
    dctk_pipeline_free(p);
}

static void array_refusals(void **state) {
    (void)state;
    dctk_store *s;
    assert_int_equal(dctk_store_mem_new(&s), DCTK_OK);
    const size_t shape[2] = {4, 6}, chunk[2] = {2, 3}, shard[2] = {4, 6};
    dctk_zarr_array *a = NULL;
    assert_int_equal(dctk_zarr_create_array(s, "x", DCTK_FLOAT32, 2, shape, chunk, NULL, 0, "[", &a), DCTK_ERR_ARG);
    assert_null(a);
    assert_int_equal(dctk_zarr_create_array(s, "x", DCTK_FLOAT32, 0, shape, chunk, NULL, 0, NULL, &a), DCTK_ERR_ARG);
    assert_int_equal(dctk_zarr_create_array(s, "x", DCTK_FLOAT32, 2, shape, chunk, NULL, 0,
                                            "[{\"name\":\"bytes\"},{\"name\":\"no.such\"}]", &a), DCTK_ERR_NOT_FOUND);
    assert_non_null(strstr(dctk_detail(), "no.such"));
    const size_t bad_shard[2] = {3, 6}; /* not a multiple of the chunk */
    assert_int_equal(dctk_zarr_create_array(s, "x", DCTK_FLOAT32, 2, shape, chunk, bad_shard, 0, NULL, &a),
                     DCTK_ERR_ARG);
    assert_null(a);
    assert_int_equal(dctk_zarr_open(s, "x", &a), DCTK_ERR_NOT_FOUND); /* nothing was written */
    /* and the accepted form is described as made */
    assert_int_equal(dctk_zarr_create_array(s, "x", DCTK_INT16, 2, shape, chunk, shard, -1, BYTES, &a), DCTK_OK);
    dctk_zarr_info info;
    dctk_zarr_info_of(a, &info);
    assert_int_equal(info.dtype, DCTK_INT16);
    assert_int_equal(info.ndim, 2);
    assert_true(info.sharded);
    assert_int_equal(info.chunk[1], 6);
    assert_int_equal(info.inner[1], 3);
    assert_true(info.fill == -1);
    dctk_zarr_close(a);
    dctk_store_close(s);
}

typedef struct {
    char text[2048];
} said;

static void collect(void *user, dctk_say_to to, const char *text) {
    said *s = user;
    if (to == DCTK_SAY_ERR) strncat(s->text, text, sizeof s->text - strlen(s->text) - 1);
}

/* The exit code and the error line of a dctk_compress_run that is refused before reading anything. */
static int refused(const char *dataset, const char *options, said *s) {
    s->text[0] = 0;
    return dctk_compress_run(dataset, "/nonexistent-dctk-dir", options, collect, s);
}

static void compress_options_refused(void **state) {
    (void)state;
    said s;
    assert_int_equal(refused("x.nc", "{\"vars\":\"t\",\"colour\":1}", &s), 2);
    assert_non_null(strstr(s.text, "unknown key 'colour'"));
    assert_int_equal(refused("x.nc", "{\"threads\":\"two\"}", &s), 2);
    assert_non_null(strstr(s.text, "'threads' cannot be \"two\""));
    assert_int_equal(refused("x.nc", "{\"l1_threshold\":-1}", &s), 2);
    assert_non_null(strstr(s.text, "l1_threshold"));
    assert_int_equal(refused("x.nc", "{\"codecs\":\"dctk\"}", &s), 2);
    assert_int_equal(refused("x.nc", "{\"search\":\"greedy\"}", &s), 2);
    assert_int_equal(refused("x.nc", "{\"eval_data_size_limit\":\"lots\"}", &s), 2);
    assert_int_equal(refused("x.nc", "[1]", &s), 2);
    assert_non_null(strstr(s.text, "JSON object"));
    assert_int_equal(refused("x.nc", "{", &s), 2);
    assert_int_equal(refused(NULL, NULL, &s), 2);
    assert_non_null(strstr(s.text, "dc_toolkit compress:"));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(pipeline_text_in_and_out),
        cmocka_unit_test(array_refusals),
        cmocka_unit_test(compress_options_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
