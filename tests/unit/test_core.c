/* Core: sizes, CRC-32C, buffers, dtypes, error detail. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "dctk/array.h"
#include "dctk/buf.h"
#include "dctk/util.h"

static uint64_t size_of(const char *s) {
    uint64_t v = 12345;
    assert_int_equal(dctk_parse_size(s, &v), DCTK_OK);
    return v;
}

static void parse_size_units(void **state) {
    (void)state;
    assert_true(size_of("5GB") == 5000000000ULL);
    assert_true(size_of("1.5GiB") == 1610612736ULL);
    assert_true(size_of("512mib") == 536870912ULL);
    assert_true(size_of("0") == 0);
    assert_true(size_of("100") == 100);
    assert_true(size_of("2 kb") == 2000);
    assert_true(size_of("1TiB") == 1099511627776ULL);
    assert_true(size_of("0.5KB") == 500);
    assert_true(size_of("7B") == 7);
}

static void parse_size_rejects(void **state) {
    (void)state;
    const char *bad[] = {"", "GB", "-5GB", "5XB", "1.2.3MB", "abc", "5 G B", "1e3", "99999999999TB"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        uint64_t v;
        assert_int_equal(dctk_parse_size(bad[i], &v), DCTK_ERR_ARG);
        assert_true(strlen(dctk_detail()) > 0);
    }
}

static void crc32c_known(void **state) {
    (void)state;
    assert_true(dctk_crc32c("123456789", 9) == 0xE3069283u);
    assert_true(dctk_crc32c("", 0) == 0);
    /* 32 zero bytes, a vector of RFC 3720 B.4 */
    uint8_t z[32] = {0};
    assert_true(dctk_crc32c(z, 32) == 0x8A9136AAu);
    uint8_t ff[32];
    memset(ff, 0xff, sizeof ff);
    assert_true(dctk_crc32c(ff, 32) == 0x62A8AB43u);
}

static void buf_grows(void **state) {
    (void)state;
    dctk_buf b = DCTK_BUF_INIT;
    for (int i = 0; i < 1000; i++) assert_int_equal(dctk_buf_append(&b, &i, sizeof i), DCTK_OK);
    assert_int_equal(b.size, 1000 * sizeof(int));
    assert_int_equal(((int *)b.data)[999], 999);
    dctk_buf_free(&b);
    dctk_buf_free(&b);
    dctk_buf_free(NULL);
}

static void dtypes(void **state) {
    (void)state;
    dctk_dtype t;
    assert_int_equal(dctk_dtype_parse("<f4", &t), DCTK_OK);
    assert_int_equal(t, DCTK_FLOAT32);
    assert_int_equal(dctk_dtype_parse("float64", &t), DCTK_OK);
    assert_int_equal(t, DCTK_FLOAT64);
    assert_int_equal(dctk_dtype_parse("|u1", &t), DCTK_OK);
    assert_int_equal(t, DCTK_UINT8);
    assert_int_equal(dctk_dtype_parse("i2", &t), DCTK_OK);
    assert_int_equal(t, DCTK_INT16);
    assert_int_equal(dctk_dtype_parse(">f4", &t), DCTK_ERR_UNSUPPORTED);
    assert_int_equal(dctk_dtype_parse("complex64", &t), DCTK_ERR_UNSUPPORTED);
    assert_int_equal(dctk_dtype_size(DCTK_INT64), 8);
    assert_string_equal(dctk_dtype_numpy(DCTK_INT8), "|i1");
    size_t shape[3] = {2, 3, 4};
    dctk_array a = dctk_array_view(DCTK_FLOAT32, 3, shape, NULL);
    assert_int_equal(a.stride[0], 12);
    assert_int_equal(dctk_array_nbytes(&a), 96);
    assert_true(dctk_array_is_contiguous(&a));
}

static void detail_is_per_thread_text(void **state) {
    (void)state;
    dctk_status st = DCTK_FAIL(DCTK_ERR_NOT_FOUND, "variable '%s' not found", "t2m");
    assert_int_equal(st, DCTK_ERR_NOT_FOUND);
    dctk_prefix_detail("%s: ", "x.nc");
    assert_string_equal(dctk_detail(), "x.nc: variable 't2m' not found");
    assert_string_equal(dctk_strerror(DCTK_ERR_CORRUPT), "corrupt data");
}

/* Debug builds record where a failure was set, relative to the checkout; release builds nothing. */
static void fail_records_its_origin_in_debug_builds(void **state) {
    (void)state;
    int line = __LINE__ + 1;
    (void)DCTK_FAIL(DCTK_ERR_ARG, "bad %s", "x");
    assert_string_equal(dctk_detail(), "bad x");
#ifdef NDEBUG
    (void)line;
    assert_string_equal(dctk_detail_origin(), "");
#else
    /* relative to the checkout (-fmacro-prefix-map), or to the build folder where a compiler
     * launcher such as ccache rewrites the path first */
    char want[64];
    snprintf(want, sizeof want, "tests/unit/test_core.c:%d", line);
    const char *at = dctk_detail_origin();
    size_t n = strlen(at), w = strlen(want);
    assert_true(n >= w && strcmp(at + n - w, want) == 0 && (n == w || at[n - w - 1] == '/'));
#endif
    dctk_set_detail("plain");
    assert_string_equal(dctk_detail_origin(), "");
    (void)DCTK_FAIL(DCTK_ERR_ARG, "again");
    dctk_clear_detail();
    assert_string_equal(dctk_detail_origin(), "");
}

/* Element byte reversal against byte-by-byte indexing, apart and in place. */
static void swap_copy_reverses_each_element(void **state) {
    (void)state;
    uint8_t src[48], dst[48], in_place[48];
    for (size_t i = 0; i < sizeof src; i++) src[i] = (uint8_t)(i * 37 + 11);
    static const size_t sizes[] = {1, 2, 3, 4, 8};
    for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++) {
        size_t es = sizes[k];
        memcpy(in_place, src, sizeof src);
        dctk_swap_copy(dst, src, sizeof src, es);
        dctk_swap_copy(in_place, in_place, sizeof src, es);
        for (size_t i = 0; i < sizeof src; i++) {
            size_t first = i - i % es, want = first + es - 1 - i % es;
            assert_int_equal(dst[i], src[want]);
            assert_int_equal(in_place[i], src[want]);
        }
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(parse_size_units), cmocka_unit_test(parse_size_rejects),
        cmocka_unit_test(crc32c_known),     cmocka_unit_test(buf_grows),
        cmocka_unit_test(swap_copy_reverses_each_element),
        cmocka_unit_test(dtypes),           cmocka_unit_test(detail_is_per_thread_text),
        cmocka_unit_test(fail_records_its_origin_in_debug_builds),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
