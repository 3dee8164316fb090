/* CF decoding rules, as xarray 2023.01 applies them (src/io/cf.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <math.h>
#include <string.h>

#include "io/cf.h"

static dctk_cf plan(dctk_dtype t, const char *attrs_json) {
    json_t *a = json_loads(attrs_json, 0, NULL);
    assert_non_null(a);
    dctk_cf cf;
    json_t *exposed = NULL;
    assert_int_equal(dctk_cf_plan(t, a, &cf, &exposed), DCTK_OK);
    json_decref(a);
    json_decref(exposed);
    return cf;
}

static dctk_dtype out_type(dctk_dtype t, const char *attrs_json) { return plan(t, attrs_json).out; }

/* _choose_float_dtype and maybe_promote, including the int16 + fill + offset quirk. */
static void dtype_choice(void **state) {
    (void)state;
    assert_int_equal(out_type(DCTK_INT16, "{}"), DCTK_INT16);
    assert_int_equal(out_type(DCTK_INT16, "{\"scale_factor\": 0.01}"), DCTK_FLOAT32);
    assert_int_equal(out_type(DCTK_INT16, "{\"scale_factor\": 0.01, \"add_offset\": 273.15}"), DCTK_FLOAT64);
    assert_int_equal(out_type(DCTK_INT16, "{\"add_offset\": 0}"), DCTK_FLOAT64);
    assert_int_equal(out_type(DCTK_INT16, "{\"scale_factor\": 0.01, \"add_offset\": 1, \"_FillValue\": -32767}"),
                     DCTK_FLOAT32);
    assert_int_equal(out_type(DCTK_UINT8, "{\"_FillValue\": 255}"), DCTK_FLOAT32);
    assert_int_equal(out_type(DCTK_INT8, "{\"missing_value\": -1}"), DCTK_FLOAT32);
    assert_int_equal(out_type(DCTK_INT32, "{\"_FillValue\": -1}"), DCTK_FLOAT64);
    assert_int_equal(out_type(DCTK_INT32, "{\"scale_factor\": 2}"), DCTK_FLOAT64);
    assert_int_equal(out_type(DCTK_INT64, "{\"_FillValue\": 0}"), DCTK_FLOAT64);
    assert_int_equal(out_type(DCTK_FLOAT32, "{\"scale_factor\": 2.0}"), DCTK_FLOAT32);
    assert_int_equal(out_type(DCTK_FLOAT32, "{\"_FillValue\": 1e20}"), DCTK_FLOAT32);
    assert_int_equal(out_type(DCTK_FLOAT64, "{\"scale_factor\": 2.0, \"add_offset\": 1}"), DCTK_FLOAT64);
    /* a NaN fill masks nothing, so the integer type stays */
    assert_int_equal(out_type(DCTK_INT16, "{\"_FillValue\": \"NaN\"}"), DCTK_INT16);
    assert_int_equal(out_type(DCTK_FLOAT32, "{\"_FillValue\": \"NaN\"}"), DCTK_FLOAT32);
    /* _Unsigned reinterprets, and the promotion follows the new type */
    assert_int_equal(out_type(DCTK_INT8, "{\"_Unsigned\": \"true\"}"), DCTK_UINT8);
    assert_int_equal(out_type(DCTK_UINT16, "{\"_Unsigned\": \"false\"}"), DCTK_INT16);
    assert_int_equal(out_type(DCTK_FLOAT32, "{\"_Unsigned\": \"true\"}"), DCTK_FLOAT32);
}

static void fill_to_nan(void **state) {
    (void)state;
    dctk_cf cf = plan(DCTK_INT16, "{\"_FillValue\": -999, \"missing_value\": [7, 8]}");
    assert_int_equal(cf.nfill, 3);
    float buf[5];
    int16_t raw[5] = {1, -999, 7, 8, 9};
    memcpy((uint8_t *)buf + dctk_cf_stored_offset(&cf, 5), raw, sizeof raw);
    dctk_cf_apply(&cf, buf, 5);
    assert_true(buf[0] == 1.0f && isnan(buf[1]) && isnan(buf[2]) && isnan(buf[3]) && buf[4] == 9.0f);

    /* a float64 fill compares in float32 against float32 data, as numpy does */
    cf = plan(DCTK_FLOAT32, "{\"_FillValue\": 1e20}");
    float f[3] = {1e20f, 1.5f, -1e20f};
    dctk_cf_apply(&cf, f, 3);
    assert_true(isnan(f[0]) && f[1] == 1.5f && f[2] == -1e20f);

    /* _FillValue follows _Unsigned (-1 -> 255); missing_value does not */
    cf = plan(DCTK_INT8, "{\"_Unsigned\": \"true\", \"_FillValue\": -1, \"missing_value\": -2}");
    float u[3];
    int8_t ru[3] = {-1, -2, 5};
    memcpy((uint8_t *)u + dctk_cf_stored_offset(&cf, 3), ru, sizeof ru);
    dctk_cf_apply(&cf, u, 3);
    assert_true(isnan(u[0]) && u[1] == 254.0f && u[2] == 5.0f);
}

static void scale_offset_arithmetic(void **state) {
    (void)state;
    /* float64 path: exact double arithmetic, x * scale + offset in two roundings */
    dctk_cf cf = plan(DCTK_INT16, "{\"scale_factor\": 0.01, \"add_offset\": 273.15}");
    double d[3];
    int16_t r[3] = {1, -31771, 32767};
    memcpy((uint8_t *)d + dctk_cf_stored_offset(&cf, 3), r, sizeof r);
    dctk_cf_apply(&cf, d, 3);
    volatile double s = 0.01, o = 273.15, p1 = 1 * s, p2 = -31771 * s, p3 = 32767 * s;
    assert_true(d[0] == p1 + o && d[1] == p2 + o && d[2] == p3 + o);

    /* float32 path: scale and offset cast to float32, each step rounded to float32 */
    cf = plan(DCTK_INT16, "{\"scale_factor\": 0.01, \"add_offset\": 273.15, \"_FillValue\": 0}");
    float f[3];
    memcpy((uint8_t *)f + dctk_cf_stored_offset(&cf, 3), r, sizeof r);
    dctk_cf_apply(&cf, f, 3);
    volatile float fs = 0.01f, fo = 273.15f, q = -31771.0f * fs;
    assert_true(f[0] == (float)(fs + fo));
    assert_true(f[1] == (float)(q + fo));
    assert_true(f[1] != (float)(-31771 * 0.01 + 273.15)); /* double arithmetic then rounding differs here */

    /* only add_offset: no multiplication */
    cf = plan(DCTK_UINT8, "{\"add_offset\": -0.5}");
    double g[2];
    uint8_t rg[2] = {0, 255};
    memcpy((uint8_t *)g + dctk_cf_stored_offset(&cf, 2), rg, sizeof rg);
    dctk_cf_apply(&cf, g, 2);
    assert_true(g[0] == -0.5 && g[1] == 254.5);
}

static void exposed_attributes(void **state) {
    (void)state;
    json_t *a = json_loads("{\"units\": \"K\", \"long_name\": \"t\", \"scale_factor\": 2, \"add_offset\": 1,"
                           "\"_FillValue\": 0, \"missing_value\": 1, \"_Unsigned\": \"false\", \"valid_range\": [0, 9]}",
                           0, NULL);
    dctk_cf cf;
    json_t *e;
    assert_int_equal(dctk_cf_plan(DCTK_INT16, a, &cf, &e), DCTK_OK);
    assert_int_equal(json_object_size(e), 3);
    assert_string_equal(json_string_value(json_object_get(e, "units")), "K");
    assert_non_null(json_object_get(e, "valid_range"));
    assert_int_equal(json_object_size(a), 8); /* the input is not modified */
    json_decref(e);
    json_decref(a);
}

static void bad_packing_attributes(void **state) {
    (void)state;
    const char *bad[] = {"{\"scale_factor\": \"x\"}", "{\"scale_factor\": [1, 2]}", "{\"_FillValue\": \"abc\"}",
                         "{\"missing_value\": [1, \"a\"]}"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        json_t *a = json_loads(bad[i], 0, NULL);
        dctk_cf cf;
        json_t *e = NULL;
        assert_int_equal(dctk_cf_plan(DCTK_INT16, a, &cf, &e), DCTK_ERR_FORMAT);
        assert_null(e);
        assert_true(strlen(dctk_detail()) > 0);
        json_decref(a);
    }
}

static void identity(void **state) {
    (void)state;
    dctk_cf cf = plan(DCTK_FLOAT64, "{\"units\": \"m\"}");
    assert_true(dctk_cf_is_identity(&cf));
    double x[2] = {1.5, -2};
    dctk_cf_apply(&cf, x, 2);
    assert_true(x[0] == 1.5 && x[1] == -2);
    assert_int_equal(dctk_cf_stored_offset(&cf, 10), 0);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(dtype_choice),        cmocka_unit_test(fill_to_nan),
        cmocka_unit_test(scale_offset_arithmetic), cmocka_unit_test(exposed_attributes),
        cmocka_unit_test(bad_packing_attributes), cmocka_unit_test(identity),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
