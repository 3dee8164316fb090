/* Selection: the gates, the optional threshold-table columns, and which codec
 * families give NaN and Inf back bit for bit (established here by round trips,
 * so the NaN-aware space drops exactly the families that would fail). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "dctk/codec.h"
#include "dctk/eval.h"
#include "eval/space_internal.h"

static void write_table(char *path, const char *csv) {
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, csv, strlen(csv)), (ssize_t)strlen(csv));
    close(fd);
}

static void table_gate_columns(void **state) {
    (void)state;
    char path[] = "/tmp/dctk_gates_XXXXXX";
    write_table(path, "Short Name,Unit,Existing L1 error,L2 error,Linf error,Bias error\n"
                      "t,K,0.001,0.004,,off\nq,kg kg-1,0.01,,,\nbad,1,0.01,-2,,\n");
    dctk_gates asked = dctk_gates_none(), g;
    char src[256];
    /* table columns over the defaults; empty cells are the default multiples; off is off */
    assert_int_equal(dctk_gates_resolve(&asked, path, "t", "K", &g, src, sizeof src), DCTK_OK);
    assert_true(g.l1 == 0.001 && g.l2 == 0.004 && g.linf == 10 * 0.001 && g.bias == DCTK_GATE_OFF);
    assert_non_null(strstr(src, path));
    assert_int_equal(dctk_gates_resolve(&asked, path, "q", "kg kg-1", &g, src, sizeof src), DCTK_OK);
    assert_true(g.l2 == 0.02 && g.linf == 0.1 && g.bias == 0.005);
    /* flags over the table */
    asked.l2 = 0.5;
    asked.bias = DCTK_GATE_OFF;
    assert_int_equal(dctk_gates_resolve(&asked, path, "q", "kg kg-1", &g, src, sizeof src), DCTK_OK);
    assert_true(g.l2 == 0.5 && g.bias == DCTK_GATE_OFF && g.l1 == 0.01);
    /* no row: lossless only, every derived gate off */
    asked = dctk_gates_none();
    assert_int_equal(dctk_gates_resolve(&asked, path, "t", "degC", &g, src, sizeof src), DCTK_OK);
    assert_true(isnan(g.l1) && g.l2 == DCTK_GATE_OFF && g.linf == DCTK_GATE_OFF);
    assert_non_null(strstr(src, "lossless"));
    dctk_space_opts so = {.with_lossy = true};
    assert_false(dctk_space_opts_for(&so, &g).with_lossy);
    /* a bad cell names the column */
    assert_int_equal(dctk_gates_resolve(&asked, path, "bad", "1", &g, src, sizeof src), DCTK_ERR_FORMAT);
    assert_non_null(strstr(dctk_detail(), "L2 error"));
    asked.l1 = -1;
    assert_int_equal(dctk_gates_resolve(&asked, path, "t", "K", &g, src, sizeof src), DCTK_ERR_ARG);
    unlink(path);
    /* the Abs error column, in the field's unit or converted from a scaled one; a flag replaces it */
    char path2[] = "/tmp/dctk_gates_XXXXXX";
    write_table(path2, "Short Name,Unit,Existing L1 error,Abs error\nt,mK,0.001,50\nu,m s-1,0.01,off\n");
    asked = dctk_gates_none();
    assert_int_equal(dctk_gates_resolve(&asked, path2, "t", "K", &g, src, sizeof src), DCTK_OK);
    assert_true(g.l1 == 0.001 && fabs(g.abs_err - 0.05) < 1e-15);
    assert_int_equal(dctk_gates_resolve(&asked, path2, "u", "km/h", &g, src, sizeof src), DCTK_OK);
    assert_true(g.l1 == 0.01 && isnan(g.abs_err));
    asked.abs_err = 0.2;
    assert_int_equal(dctk_gates_resolve(&asked, path2, "t", "K", &g, src, sizeof src), DCTK_OK);
    assert_true(g.abs_err == 0.2);
    unlink(path2);
}

static dctk_combo_result good(void) {
    return (dctk_combo_result){.ratio = 4, .l1_rel = 1e-3, .l2_rel = 1.5e-3, .linf_rel = 5e-3, .bias_rel = -2e-4,
                               .pearson = 0.99999, .ssim = 0.999, .extremes_rel = 5e-4, .gradient_rel = 0.5,
                               .phys_ok = true};
}

static void each_gate_decides(void **state) {
    (void)state;
    dctk_gates g = dctk_gates_none();
    char src[64], failed[128];
    g.l1 = 1e-3;
    assert_int_equal(dctk_gates_resolve(&g, NULL, "t", "K", &g, src, sizeof src), DCTK_OK);
    dctk_combo_result r = good();
    assert_true(dctk_combo_keep(&r, &g));
    g.pearson_min = 0.99999;
    g.ssim_min = 0.995;
    assert_true(dctk_combo_keep(&r, &g));
    /* one gate at a time */
    r = good(), r.l1_rel = 1.1e-3;
    assert_false(dctk_combo_keep(&r, &g));
    assert_false(r.pass_l1);
    dctk_combo_failed_gates(&r, &g, failed, sizeof failed);
    assert_string_equal(failed, "l1");
    r = good(), r.l2_rel = 2.1e-3;
    assert_false(dctk_combo_keep(&r, &g) || r.pass_l2);
    r = good(), r.linf_rel = 1.1e-2;
    assert_false(dctk_combo_keep(&r, &g) || r.pass_linf);
    r = good(), r.bias_rel = -6e-4;
    assert_false(dctk_combo_keep(&r, &g) || r.pass_bias);
    r = good(), r.pearson = 0.9999;
    assert_false(dctk_combo_keep(&r, &g));
    dctk_combo_failed_gates(&r, &g, failed, sizeof failed);
    assert_string_equal(failed, "pearson");
    r = good(), r.ssim = 0.99;
    assert_false(dctk_combo_keep(&r, &g));
    /* the optional gates only when switched on; their pass column is true when off */
    r = good(), r.phys_ok = false, r.extremes_rel = 3e-3, r.gradient_rel = 0.11;
    assert_true(dctk_combo_keep(&r, &g) && r.pass_phys && r.pass_extremes && r.pass_gradient);
    g.phys_min = 0;
    g.extremes = g.gradient = true;
    assert_false(dctk_combo_keep(&r, &g) || r.pass_phys || r.pass_extremes || r.pass_gradient);
    dctk_combo_failed_gates(&r, &g, failed, sizeof failed);
    assert_string_equal(failed, "phys,extremes,gradient");
    /* as the Python tool's: the extremes' budget 2 x L1 (l1 is 1e-3 here), the gradient's an absolute 0.1 */
    r = good(), r.extremes_rel = 1.9e-3, r.gradient_rel = 0.09;
    assert_true(dctk_combo_keep(&r, &g) && r.pass_extremes && r.pass_gradient);
    g.q99 = 1.5e-3, g.grad = 0.05; /* --q99-threshold, --gradient-threshold */
    assert_false(dctk_combo_keep(&r, &g) || r.pass_extremes || r.pass_gradient);
    g.q99 = g.grad = NAN;
    /* a switched-off gate passes whatever the value */
    g = dctk_gates_none();
    g.l1 = 1e-3;
    g.linf = DCTK_GATE_OFF;
    assert_int_equal(dctk_gates_resolve(&g, NULL, "t", "K", &g, src, sizeof src), DCTK_OK);
    r = good(), r.linf_rel = 0.5;
    assert_true(dctk_combo_keep(&r, &g) && r.pass_linf);
    /* failed combos and non-finite metrics are never kept */
    r = good(), snprintf(r.error, sizeof r.error, "codec failed");
    assert_false(dctk_combo_keep(&r, &g));
    r = good(), r.ratio = NAN;
    assert_false(dctk_combo_keep(&r, &g));
}

static void lossless_only_needs_exact(void **state) {
    (void)state;
    dctk_gates g = dctk_gates_none();
    dctk_combo_result r = {.ratio = 2, .pearson = 1, .ssim = 1, .phys_ok = true};
    assert_true(dctk_combo_keep(&r, &g));
    r.l1_rel = 1e-12, r.linf_rel = 1e-11;
    assert_false(dctk_combo_keep(&r, &g));
    assert_false(r.pass_l1);
    assert_false(dctk_combo_keep(&r, NULL));
}

/* An absolute budget is a gate beside the others and a budget on its own:
 * with it alone the relative gates are off and the field is not lossless. */
static void abs_error_gate(void **state) {
    (void)state;
    dctk_gates g = dctk_gates_none(), asked = dctk_gates_none();
    char src[256], failed[128];
    asked.abs_err = 0.05;
    assert_int_equal(dctk_gates_resolve(&asked, NULL, "t", "K", &g, src, sizeof src), DCTK_OK);
    assert_false(dctk_gates_lossless(&g));
    assert_true(isnan(g.l1) && g.l2 == DCTK_GATE_OFF && g.linf == DCTK_GATE_OFF && g.bias == DCTK_GATE_OFF);
    dctk_space_opts so = {.with_lossy = true};
    assert_true(dctk_space_opts_for(&so, &g).with_lossy);
    dctk_combo_result r = good();
    r.l1_rel = 0.5, r.max_abs_err = 0.05; /* a large relative error passes: no L1 budget */
    assert_true(dctk_combo_keep(&r, &g) && r.pass_abs && r.pass_l1);
    r.max_abs_err = 0.0500001;
    assert_false(dctk_combo_keep(&r, &g) || r.pass_abs);
    dctk_combo_failed_gates(&r, &g, failed, sizeof failed);
    assert_string_equal(failed, "abs");
    /* beside an L1 budget both must pass */
    asked.l1 = 1e-3;
    assert_int_equal(dctk_gates_resolve(&asked, NULL, "t", "K", &g, src, sizeof src), DCTK_OK);
    r = good(), r.max_abs_err = 0.06;
    assert_false(dctk_combo_keep(&r, &g) || r.pass_abs || !r.pass_l1);
    /* the extremes' default budget derives from L1: without one it needs --q99-threshold; the gradient's
     * is absolute (0.1, as the Python tool's) */
    asked = dctk_gates_none(), asked.abs_err = 0.05, asked.extremes = true;
    assert_int_equal(dctk_gates_resolve(&asked, NULL, "t", "K", &g, src, sizeof src), DCTK_ERR_ARG);
    assert_non_null(strstr(dctk_detail(), "--q99-threshold"));
    asked.q99 = 0.02;
    assert_int_equal(dctk_gates_resolve(&asked, NULL, "t", "K", &g, src, sizeof src), DCTK_OK);
    assert_true(g.q99 == 0.02);
    asked = dctk_gates_none(), asked.abs_err = 0.05, asked.gradient = true;
    assert_int_equal(dctk_gates_resolve(&asked, NULL, "t", "K", &g, src, sizeof src), DCTK_OK);
    assert_true(g.grad == 0.1 && isnan(g.q99));
    asked = dctk_gates_none(), asked.l1 = 4e-3, asked.extremes = true;
    assert_int_equal(dctk_gates_resolve(&asked, NULL, "t", "K", &g, src, sizeof src), DCTK_OK);
    assert_true(g.q99 == 8e-3 && g.grad == 0.1);
    asked.q99 = NAN, asked.grad = -1;
    assert_int_equal(dctk_gates_resolve(&asked, NULL, "t", "K", &g, src, sizeof src), DCTK_ERR_ARG);
    asked = dctk_gates_none(), asked.abs_err = -1;
    assert_int_equal(dctk_gates_resolve(&asked, NULL, "t", "K", &g, src, sizeof src), DCTK_ERR_ARG);
    /* recorded, read back, described */
    g = dctk_gates_none(), g.abs_err = 0.25;
    json_t *j = dctk_gates_json(&g);
    assert_false(json_is_true(json_object_get(j, "lossless_only")));
    assert_true(dctk_gates_from_json(j).abs_err == 0.25);
    json_decref(j);
    char text[256];
    dctk_gates_describe(&g, text, sizeof text);
    assert_string_equal(text, "max abs error <= 0.25");
}

/* The pointwise relative bound (|y - x| <= r |x| at every finite point, a
 * zero kept exactly) and the mean absolute one (sum |y - x| / n over the
 * finite points), measured by the norms and judged as --abs-error is. */
static void rel_and_mean_gates(void **state) {
    (void)state;
    /* negative values take |x|; a masked point (NaN given back NaN) counts in neither */
    const float x[] = {-2, 4, NAN, 0, 0.5f, -8}, y[] = {-2.1f, 4, NAN, 0, 0.5f, -7.8f};
    dctk_norms n = {0};
    dctk_norms_add(&n, DCTK_FLOAT32, x, y, 6);
    double e0 = fabs((double)-2.1f + 2), e5 = fabs((double)-7.8f + 8);
    assert_true(n.n == 5 && n.mask_lost == 0);
    assert_true(n.max_rel_e == e0 / 2 && e5 > e0); /* 0.05 at -2, not the larger absolute error at -8 (0.025) */
    assert_true(dctk_norms_mean_abs(&n) == (e0 + e5) / 5);
    /* a zero given back as anything else is an infinite relative error; given back zero, none */
    const double z[] = {0, 1}, zy[] = {1e-30, 1}, zz[] = {-0.0, 1};
    n = (dctk_norms){0};
    dctk_norms_add(&n, DCTK_FLOAT64, z, zy, 2);
    assert_true(isinf(n.max_rel_e) && n.max_rel_e > 0);
    n = (dctk_norms){0};
    dctk_norms_add(&n, DCTK_FLOAT64, z, zz, 2);
    assert_true(n.max_rel_e == 0 && dctk_norms_mean_abs(&n) == 0);
    /* a finite point given back NaN: NaN, which no gate passes; a lost mask is counted, not measured */
    const double f[] = {1, 2}, fy[] = {NAN, 2}, m[] = {NAN, 2}, my[] = {5, 2};
    n = (dctk_norms){0};
    dctk_norms_add(&n, DCTK_FLOAT64, f, fy, 2);
    assert_true(isnan(n.max_rel_e) && n.mask_gained == 1);
    n = (dctk_norms){0};
    dctk_norms_add(&n, DCTK_FLOAT64, m, my, 2);
    assert_true(n.max_rel_e == 0 && n.mask_lost == 1 && n.n == 1);
    /* integers: the same measure */
    const int16_t ix[] = {-100, 0, 50}, iy[] = {-99, 0, 50};
    n = (dctk_norms){0};
    dctk_norms_add(&n, DCTK_INT16, ix, iy, 3);
    assert_true(n.max_rel_e == 0.01 && dctk_norms_mean_abs(&n) == 1.0 / 3);

    /* each is a budget of its own: alone, the field is not lossless and the relative L1 gates are off */
    dctk_gates g, asked = dctk_gates_none();
    char src[256], failed[128], text[256];
    asked.rel_err = 0.05;
    assert_int_equal(dctk_gates_resolve(&asked, NULL, "t", "K", &g, src, sizeof src), DCTK_OK);
    assert_false(dctk_gates_lossless(&g));
    assert_true(isnan(g.l1) && g.linf == DCTK_GATE_OFF && strstr(src, "pointwise relative"));
    dctk_combo_result r = good();
    r.l1_rel = 0.5, r.max_rel_err = 0.05, r.mean_abs_err = 100;
    assert_true(dctk_combo_keep(&r, &g) && r.pass_rel && r.pass_mean_abs);
    r.max_rel_err = 0.0500001;
    assert_false(dctk_combo_keep(&r, &g) || r.pass_rel);
    dctk_combo_failed_gates(&r, &g, failed, sizeof failed);
    assert_string_equal(failed, "rel");
    r.max_rel_err = INFINITY; /* a zero not kept */
    assert_false(dctk_combo_keep(&r, &g));
    r.max_rel_err = NAN;
    assert_false(dctk_combo_keep(&r, &g));
    asked = dctk_gates_none(), asked.mean_abs_err = 0.1;
    assert_int_equal(dctk_gates_resolve(&asked, NULL, "t", "K", &g, src, sizeof src), DCTK_OK);
    assert_false(dctk_gates_lossless(&g));
    r = good(), r.max_rel_err = INFINITY, r.mean_abs_err = 0.1;
    assert_true(dctk_combo_keep(&r, &g) && r.pass_mean_abs && r.pass_rel);
    r.mean_abs_err = 0.11;
    assert_false(dctk_combo_keep(&r, &g) || r.pass_mean_abs);
    dctk_combo_failed_gates(&r, &g, failed, sizeof failed);
    assert_string_equal(failed, "mean_abs");
    /* not positive: refused */
    asked = dctk_gates_none(), asked.rel_err = 0;
    assert_int_equal(dctk_gates_resolve(&asked, NULL, "t", "K", &g, src, sizeof src), DCTK_ERR_ARG);
    asked = dctk_gates_none(), asked.mean_abs_err = -1;
    assert_int_equal(dctk_gates_resolve(&asked, NULL, "t", "K", &g, src, sizeof src), DCTK_ERR_ARG);
    /* recorded, read back, described; a gates record without them has neither */
    g = dctk_gates_none(), g.rel_err = 0.01, g.mean_abs_err = 0.5;
    json_t *j = dctk_gates_json(&g);
    dctk_gates back = dctk_gates_from_json(j);
    assert_true(back.rel_err == 0.01 && back.mean_abs_err == 0.5 && !dctk_gates_lossless(&back));
    json_decref(j);
    dctk_gates_describe(&g, text, sizeof text);
    assert_string_equal(text, "max pointwise relative error <= 0.01, mean abs error <= 0.5");
    g = dctk_gates_none(), g.abs_err = 1;
    j = dctk_gates_json(&g);
    assert_null(json_object_get(j, "rel_error"));
    back = dctk_gates_from_json(j);
    assert_true(isnan(back.rel_err) && isnan(back.mean_abs_err));
    json_decref(j);
}

/* The mean relative bound (sum |y - x| <= e sum |x| over the finite points,
 * every zero decoded exactly): the relative L1 when the zeros are kept, +inf
 * when one is not; a gate of its own that sets no L2, Linf or bias gate. */
static void mean_rel_gate(void **state) {
    (void)state;
    const double x[] = {-2, 4, NAN, 0, 0.5, -8}, y[] = {-2.5, 4, NAN, -0.0, 0.5, -7};
    dctk_norms n = {0};
    dctk_norms_add(&n, DCTK_FLOAT64, x, y, 6);
    assert_true(n.n_zero_changed == 0 && n.n == 5);
    assert_true(dctk_norms_mean_rel(&n) == 1.5 / 14.5 && dctk_norms_mean_rel(&n) == dctk_norms_l1(&n));
    const double zy[] = {-2, 4, NAN, 1e-300, 0.5, -8}; /* the one error at a zero: no sum holds it */
    n = (dctk_norms){0};
    dctk_norms_add(&n, DCTK_FLOAT64, x, zy, 6);
    assert_true(n.n_zero_changed == 1 && isinf(dctk_norms_mean_rel(&n)) && dctk_norms_l1(&n) < 1e-299);
    const int8_t ix[] = {0, 0, 10}, iy[] = {0, 0, 9};
    n = (dctk_norms){0};
    dctk_norms_add(&n, DCTK_INT8, ix, iy, 3);
    assert_true(n.n_zero_changed == 0 && dctk_norms_mean_rel(&n) == 0.1);
    n = (dctk_norms){0};
    dctk_norms_add(&n, DCTK_FLOAT64, x, x, 0);
    assert_true(dctk_norms_mean_rel(&n) == 0); /* no point: no error */

    dctk_gates g, asked = dctk_gates_none();
    char src[256], failed[128], text[256];
    asked.mean_rel_err = 0.01;
    assert_int_equal(dctk_gates_resolve(&asked, NULL, "t", "K", &g, src, sizeof src), DCTK_OK);
    assert_false(dctk_gates_lossless(&g));
    assert_true(isnan(g.l1) && g.l2 == DCTK_GATE_OFF && g.linf == DCTK_GATE_OFF && g.bias == DCTK_GATE_OFF);
    dctk_combo_result r = good();
    r.l1_rel = 0.5, r.linf_rel = 0.9, r.mean_rel_err = 0.01; /* only the mean relative error is judged */
    assert_true(dctk_combo_keep(&r, &g) && r.pass_mean_rel);
    r.mean_rel_err = 0.0100001;
    assert_false(dctk_combo_keep(&r, &g) || r.pass_mean_rel);
    dctk_combo_failed_gates(&r, &g, failed, sizeof failed);
    assert_string_equal(failed, "mean_rel");
    r.mean_rel_err = INFINITY;
    assert_false(dctk_combo_keep(&r, &g));
    r.mean_rel_err = NAN;
    assert_false(dctk_combo_keep(&r, &g));
    /* off: any value passes */
    asked = dctk_gates_none(), asked.l1 = 1;
    assert_int_equal(dctk_gates_resolve(&asked, NULL, "t", "K", &g, src, sizeof src), DCTK_OK);
    r = good(), r.mean_rel_err = INFINITY;
    assert_true(dctk_combo_keep(&r, &g) && r.pass_mean_rel);
    asked = dctk_gates_none(), asked.mean_rel_err = 0;
    assert_int_equal(dctk_gates_resolve(&asked, NULL, "t", "K", &g, src, sizeof src), DCTK_ERR_ARG);
    g = dctk_gates_none(), g.mean_rel_err = 0.02;
    json_t *j = dctk_gates_json(&g);
    dctk_gates back = dctk_gates_from_json(j);
    assert_true(back.mean_rel_err == 0.02 && !dctk_gates_lossless(&back));
    json_decref(j);
    dctk_gates_describe(&g, text, sizeof text);
    assert_string_equal(text, "mean relative error <= 0.02");
    g = dctk_gates_none(), g.abs_err = 1;
    j = dctk_gates_json(&g);
    assert_null(json_object_get(j, "mean_rel_error"));
    assert_true(isnan(dctk_gates_from_json(j).mean_rel_err));
    json_decref(j);
}

/* The spec file: the variable's entry over the default entry over the table;
 * flags over all of them; a lossless entry takes no table row. */
static void spec_layers(void **state) {
    (void)state;
    char table[] = "/tmp/dctk_gates_XXXXXX", path[] = "/tmp/dctk_spec_XXXXXX";
    write_table(table, "Short Name,Unit,Existing L1 error,Abs error\nt,K,0.001,0.5\nq,1,0.002,\n");
    write_table(path, "{\"default\": \"lossless\", \"t\": {\"abs-error\": 0.1, \"filter-class\": \"bitround\"},"
                      " \"q\": {\"phys-min\": 0, \"with-lossy\": false}, \"u\": {\"linf-threshold\": \"off\","
                      " \"l1-threshold\": 0.01}}");
    dctk_spec *sp;
    assert_int_equal(dctk_spec_load(path, &sp), DCTK_OK);
    dctk_gates flags = dctk_gates_none(), g;
    char src[512];
    /* t: its own absolute budget, the table's L1 under it */
    assert_int_equal(dctk_gates_for(&flags, sp, table, "t", "K", &g, src, sizeof src), DCTK_OK);
    assert_true(g.l1 == 0.001 && g.abs_err == 0.1);
    /* q: no budget of its own, so the default's lossless: not even the table's row */
    assert_int_equal(dctk_gates_for(&flags, sp, table, "q", "1", &g, src, sizeof src), DCTK_OK);
    assert_true(dctk_gates_lossless(&g) && g.phys_min == 0 && strstr(src, "entry 'default': lossless only"));
    /* u: its entry's L1 and a gate switched off; x: the default's lossless */
    assert_int_equal(dctk_gates_for(&flags, sp, table, "u", "1", &g, src, sizeof src), DCTK_OK);
    assert_true(g.l1 == 0.01 && g.linf == DCTK_GATE_OFF && g.l2 == 0.02 && strstr(src, "entry 'u'"));
    assert_int_equal(dctk_gates_for(&flags, sp, table, "x", "1", &g, src, sizeof src), DCTK_OK);
    assert_true(dctk_gates_lossless(&g));
    /* a flag wins */
    flags.l1 = 1e-5;
    assert_int_equal(dctk_gates_for(&flags, sp, table, "q", "1", &g, src, sizeof src), DCTK_OK);
    assert_true(g.l1 == 1e-5 && !strcmp(src, "--l1-threshold"));
    /* classes: the entry's unless a flag names one; with-lossy false turns lossy off */
    dctk_space_opts o = {.with_lossy = true}, s = dctk_spec_space(sp, "t", &o);
    assert_true(!strcmp(s.filter_class, "bitround") && !s.compressor_class && s.with_lossy);
    o.filter_class = "quantize";
    assert_string_equal(dctk_spec_space(sp, "t", &o).filter_class, "quantize");
    assert_false(dctk_spec_space(sp, "q", &o).with_lossy);
    assert_string_equal(dctk_spec_var(sp, 0), "t");
    assert_null(dctk_spec_var(sp, 3));
    dctk_spec_free(sp);
    unlink(table), unlink(path);
}

/* The spec key mean-rel-error: a variable's budget of its own over the
 * default's lossless; not positive: refused naming the key. */
static void spec_mean_rel(void **state) {
    (void)state;
    char table[] = "/tmp/dctk_gates_XXXXXX", path[] = "/tmp/dctk_spec_XXXXXX";
    write_table(table, "Short Name,Unit,Existing L1 error\n");
    write_table(path, "{\"default\": \"lossless\", \"pr\": {\"mean-rel-error\": 0.002}}");
    dctk_spec *sp;
    assert_int_equal(dctk_spec_load(path, &sp), DCTK_OK);
    dctk_gates flags = dctk_gates_none(), g;
    char src[512];
    assert_int_equal(dctk_gates_for(&flags, sp, table, "pr", "1", &g, src, sizeof src), DCTK_OK);
    assert_true(g.mean_rel_err == 0.002 && isnan(g.l1) && !dctk_gates_lossless(&g));
    assert_int_equal(dctk_gates_for(&flags, sp, table, "x", "1", &g, src, sizeof src), DCTK_OK);
    assert_true(dctk_gates_lossless(&g) && isnan(g.mean_rel_err));
    flags.mean_rel_err = 0.01; /* a flag wins */
    assert_int_equal(dctk_gates_for(&flags, sp, table, "pr", "1", &g, src, sizeof src), DCTK_OK);
    assert_true(g.mean_rel_err == 0.01);
    dctk_spec_free(sp);
    char bad[] = "/tmp/dctk_spec_XXXXXX";
    write_table(bad, "{\"pr\": {\"mean-rel-error\": 0}}");
    assert_int_equal(dctk_spec_load(bad, &sp), DCTK_ERR_ARG);
    assert_non_null(strstr(dctk_detail(), "mean-rel-error"));
    unlink(table), unlink(path), unlink(bad);
}

static void gates_json_round_trip(void **state) {
    (void)state;
    dctk_gates g = dctk_gates_none();
    g.l1 = 1e-3, g.l2 = 2e-3, g.linf = DCTK_GATE_OFF, g.bias = 5e-4, g.ssim_min = 0.99, g.phys_min = 0,
    g.phys_tol = 1e-4, g.gradient = true;
    json_t *j = dctk_gates_json(&g);
    assert_true(json_is_null(json_object_get(j, "linf")) && json_is_null(json_object_get(j, "phys_max")));
    dctk_gates h = dctk_gates_from_json(j);
    assert_true(h.l1 == g.l1 && h.l2 == g.l2 && h.linf == DCTK_GATE_OFF && h.bias == g.bias && h.ssim_min == 0.99 &&
                h.phys_min == 0 && isnan(h.phys_max) && h.phys_tol == 1e-4 && h.gradient && !h.extremes &&
                isnan(h.pearson_min) && h.grad == 0.1 && isnan(h.q99));
    assert_null(json_object_get(j, "q99")); /* the extremes gate is off */
    json_decref(j);
    /* a file from before the budgets compared both with l1, and reads back so */
    j = json_pack("{s:f,s:b,s:b}", "l1", 2e-3, "extremes", 1, "gradient", 1);
    h = dctk_gates_from_json(j);
    assert_true(h.q99 == 2e-3 && h.grad == 2e-3);
    json_decref(j);
    char text[256];
    dctk_gates_describe(&g, text, sizeof text);
    assert_non_null(strstr(text, "l1 <= 0.001"));
    assert_null(strstr(text, "linf"));
}

static void pipeline_names(void **state) {
    (void)state;
    json_t *comp = json_loads("[{\"name\":\"zstd\",\"configuration\":{\"level\":9,\"checksum\":false}}]", 0, NULL);
    json_t *filt = json_loads("[{\"name\":\"numcodecs.bitround\",\"configuration\":{\"keepbits\":12}}]", 0, NULL);
    json_t *asinh = json_loads("[{\"name\":\"any-numcodecs.array-array\",\"configuration\":{\"id\":\"asinh.rs\","
                               "\"linear_width\":0.5,\"_version\":\"1.0.0\"}}]", 0, NULL);
    char *n = dctk_pipeline_name(comp, filt, NULL);
    assert_string_equal(n, "zstd(checksum=false, level=9) | bitround(keepbits=12) | -");
    dctk_free(n);
    n = dctk_pipeline_name(NULL, asinh, NULL);
    assert_string_equal(n, "- | asinh.rs(linear_width=0.5) | -");
    dctk_free(n);
    json_decref(comp), json_decref(filt), json_decref(asinh);
}

/* The name from a Zarr v3 codec list (a best file, a store) is the name from
 * the three stages (a results row), for every filter and serializer of the
 * default float32 space, behind the first, a chained (shuffle + ...) and no
 * compressor. */
static void codec_list_names(void **state) {
    (void)state;
    dctk_sample_stats st = {.n = 10, .nfinite = 10, .mean = 280, .std = 10, .min = 250, .max = 310, .absq01 = 251};
    dctk_space_opts o = {0};
    o.with_lossy = true;
    dctk_space *sp = NULL;
    assert_int_equal(dctk_space_build(DCTK_FLOAT32, &st, &o, &sp), DCTK_OK);
    const int comps[] = {0, sp->ncomp - 1, -1};
    for (size_t k = 0; k < 3; k++)
        for (int f = -1; f < sp->nfilt; f++)
            for (int s = -1; s < sp->nser; s++) {
                int c = comps[k];
                if (!dctk_space_has(sp, c, f, s)) continue;
                json_t *comp = dctk_space_compressor(sp, c, f, s), *ser = dctk_space_serializer(sp, f, s);
                json_t *codecs = dctk_space_pipeline(sp, c, f, s);
                char *a = dctk_pipeline_name(comp, f >= 0 ? sp->filt[f].codecs : NULL, ser);
                char *b = dctk_codecs_name(codecs);
                assert_string_equal(a, b);
                dctk_free(a), dctk_free(b);
                json_decref(comp), json_decref(ser), json_decref(codecs);
            }
    /* inside a sharding_indexed codec (a store's zarr.json), and a bytes serializer that is none */
    json_t *shard = json_loads("[{\"name\":\"sharding_indexed\",\"configuration\":{\"codecs\":["
                               "{\"name\":\"numcodecs.bitround\",\"configuration\":{\"keepbits\":19}},"
                               "{\"name\":\"bytes\",\"configuration\":{\"endian\":\"little\"}},"
                               "{\"name\":\"zstd\",\"configuration\":{\"level\":22}}]}}]", 0, NULL);
    char *n = dctk_codecs_name(shard);
    assert_string_equal(n, "zstd(level=22) | bitround(keepbits=19) | -");
    dctk_free(n);
    json_decref(shard);
    dctk_space_free(sp);
}

/* --- which families carry NaN and Inf ------------------------------------------ */

enum { H = 16, W = 24 };

/* A smooth float32 chunk with NaN, +Inf and -Inf at a few places. */
static void chunk_with_nonfinite(float *x) {
    for (int i = 0; i < H * W; i++) x[i] = 280.0f + 10.0f * sinf((float)i / 37.0f);
    x[3] = NAN, x[100] = NAN, x[H * W - 1] = NAN, x[50] = INFINITY, x[77] = -INFINITY;
}

/* Whether the pipeline gives every non-finite value back bit for bit (a codec
 * that refuses them does not). */
static bool round_trip_keeps(json_t *pipe, const float *x) {
    dctk_pipeline *p;
    if (dctk_pipeline_from_json(pipe, &p) != DCTK_OK) return false;
    dctk_codec_ctx *ctx = dctk_codec_ctx_new();
    size_t shape[2] = {H, W};
    dctk_chunk_spec spec = dctk_spec_make(DCTK_FLOAT32, 2, shape);
    dctk_buf out = DCTK_BUF_INIT, tmp[2] = {DCTK_BUF_INIT, DCTK_BUF_INIT};
    float y[H * W];
    bool ok = dctk_pipeline_encode(p, ctx, &spec, x, &out, tmp) == DCTK_OK &&
              dctk_pipeline_decode(p, ctx, &spec, out.data, out.size, y, tmp) == DCTK_OK;
    for (int i = 0; ok && i < H * W; i++)
        if (!isfinite(x[i])) ok = memcmp(&x[i], &y[i], sizeof x[i]) == 0;
    /* a NaN that spreads onto finite points counts too */
    for (int i = 0; ok && i < H * W; i++)
        if (isfinite(x[i])) ok = isfinite(y[i]);
    dctk_buf_free(&out), dctk_buf_free(&tmp[0]), dctk_buf_free(&tmp[1]);
    dctk_codec_ctx_free(ctx);
    dctk_pipeline_free(p);
    return ok;
}

static void nonfinite_families_by_round_trip(void **state) {
    (void)state;
    float x[H * W];
    chunk_with_nonfinite(x);
    /* a space built from finite statistics holds every family */
    float finite[H * W];
    for (int i = 0; i < H * W; i++) finite[i] = 280.0f + 10.0f * sinf((float)i / 37.0f);
    dctk_sample_stats st;
    dctk_sample_stats_of(DCTK_FLOAT32, finite, H * W, &st);
    dctk_space_opts o = {.with_lossy = true};
    dctk_space *sp;
    assert_int_equal(dctk_space_build(DCTK_FLOAT32, &st, &o, &sp), DCTK_OK);
    assert_string_equal(sp->dropped, "");
    int checked = 0;
    for (int k = 0; k < sp->nfilt + sp->nser; k++) {
        bool is_filt = k < sp->nfilt;
        const dctk_space_entry *e = is_filt ? &sp->filt[k] : &sp->ser[k - sp->nfilt];
        json_t *pipe = is_filt ? dctk_space_pipeline(sp, -1, k, -1) : dctk_space_pipeline(sp, -1, -1, k - sp->nfilt);
        bool keeps = round_trip_keeps(pipe, x);
        if (keeps != dctk_family_carries_nonfinite(e->family, DCTK_FLOAT32))
            fail_msg("%s: round trip %s NaN/Inf, the space says it %s", e->family, keeps ? "keeps" : "loses",
                     keeps ? "cannot" : "can");
        json_decref(pipe);
        checked++;
    }
    assert_true(checked >= 20);
    /* and the space of a sample with NaN leaves out exactly those that lose them */
    dctk_sample_stats_of(DCTK_FLOAT32, x, H * W, &st);
    dctk_space *sn;
    assert_int_equal(dctk_space_build(DCTK_FLOAT32, &st, &o, &sn), DCTK_OK);
    /* the families whose round trip lost NaN/Inf above, named once each in space order */
    assert_non_null(strstr(sn->dropped, "delta, asinh, zfpy"));
    for (int k = 0; k < sn->nfilt; k++) assert_true(dctk_family_carries_nonfinite(sn->filt[k].family, DCTK_FLOAT32));
    for (int k = 0; k < sn->nser; k++) assert_true(dctk_family_carries_nonfinite(sn->ser[k].family, DCTK_FLOAT32));
    assert_string_not_equal(sp->fingerprint, sn->fingerprint);
    dctk_space_free(sp);
    dctk_space_free(sn);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(table_gate_columns),     cmocka_unit_test(each_gate_decides),
        cmocka_unit_test(lossless_only_needs_exact), cmocka_unit_test(gates_json_round_trip),
        cmocka_unit_test(abs_error_gate),           cmocka_unit_test(rel_and_mean_gates),
        cmocka_unit_test(mean_rel_gate),           cmocka_unit_test(spec_layers),
        cmocka_unit_test(spec_mean_rel),
        cmocka_unit_test(pipeline_names),
        cmocka_unit_test(codec_list_names),         cmocka_unit_test(nonfinite_families_by_round_trip),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
