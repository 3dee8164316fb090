/* Allocation failures reach the sweep, in the manner of test_codec_alloc:
 * a sweep of a small space (zstd levels after bitround and after no
 * filter) on a real field is run once with every allocation of the library
 * counted, then again with allocation 1, 2, ... failing in turn. Each run
 * must end in DCTK_ERR_NOMEM with a detail, or in success with every row
 * the same as the run without a failure (a combo is never judged on a
 * failed allocation), and every block the library took from the allocator
 * must have been given back. One thread, so the allocations come in the
 * same order every run. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "codec_cases.h"
#include "dctk/alloc.h"
#include "failing_alloc.h"
#include "dctk/eval.h"

enum { NY = 40, NX = 64 };

static dctk_status sweep(const dctk_space *sp, const float *x, dctk_combo_result *rows) {
    size_t shape[2] = {NY, NX};
    dctk_gates g = dctk_gates_none();
    dctk_sweep_opts o = {.threads = 1, .threshold = NAN, .gates = &g, .chunk = {NY / 2, NX}};
    memset(rows, 0, dctk_space_ncombos(sp) * sizeof *rows);
    return dctk_sweep_run(sp, x, 2, shape, &o, rows);
}

static bool same(double a, double b) { return a == b || (isnan(a) && isnan(b)); }

static void every_allocation_of_a_sweep_fails_cleanly(void **state) {
    (void)state;
    size_t n = 0;
    double *field = case_real_field(&n);
    assert_non_null(field);
    assert_true(n >= NY * NX);
    float x[NY * NX];
    for (size_t i = 0; i < NY * NX; i++) x[i] = (float)field[i];
    free(field);
    dctk_sample_stats stats;
    dctk_sample_stats_of(DCTK_FLOAT32, x, NY * NX, &stats);
    dctk_space_opts so = {.compressor_class = "zstd", .filter_class = "bitround", .serializer_class = "none",
                          .with_lossy = true};
    dctk_space *sp = NULL;
    assert_int_equal(dctk_space_build(DCTK_FLOAT32, &stats, &so, &sp), DCTK_OK);
    size_t nc = dctk_space_ncombos(sp);
    assert_true(nc > 4);
    dctk_combo_result *ref = calloc(nc, sizeof *ref), *rows = calloc(nc, sizeof *rows);
    assert_true(ref && rows);

    failing_alloc_install();
    failing_alloc_reset(0);
    if (sweep(sp, x, ref) != DCTK_OK) fail_msg("the sweep without a failure: %s", dctk_detail());
    assert_int_equal(al.live, 0);
    size_t lossy = 0;
    for (size_t k = 0; k < nc; k++) {
        if (ref[k].error[0]) fail_msg("combo %zu failed without an allocation failure: %s", k, ref[k].error);
        lossy += ref[k].l1_rel > 0;
    }
    assert_true(lossy > 0 && lossy < nc); /* bitround levels lose something, no filter nothing */
    long total = al.count;
    assert_true(total > 10);
    long nomem = 0;
    for (long f = 1; f <= total; f++) {
        failing_alloc_reset(f);
        dctk_clear_detail();
        dctk_status st = sweep(sp, x, rows);
        if (al.live != 0) fail_msg("allocation %ld of %ld failed: %ld blocks leaked", f, total, (long)al.live);
        if (st != DCTK_OK) {
            if (st != DCTK_ERR_NOMEM || !*dctk_detail())
                fail_msg("allocation %ld of %ld failed: status %d (%s)", f, total, st, dctk_detail());
            nomem++;
            continue;
        }
        for (size_t k = 0; k < nc; k++)
            if (rows[k].keep != ref[k].keep || strcmp(rows[k].error, ref[k].error) || rows[k].l1_rel != ref[k].l1_rel ||
                !same(rows[k].ratio, ref[k].ratio) || !same(rows[k].ssim, ref[k].ssim) ||
                !same(rows[k].gradient_rel, ref[k].gradient_rel))
                fail_msg("allocation %ld of %ld failed, the sweep succeeded with combo %zu changed: keep %d, "
                         "ratio %g, '%s' (without the failure: %d, %g, '%s')", f, total, k, rows[k].keep,
                         rows[k].ratio, rows[k].error, ref[k].keep, ref[k].ratio, ref[k].error);
    }
    dctk_set_allocator(NULL);
    assert_true(nomem > 0); /* the sweep's own allocations (its workers, a unit's chains) are among them */
    printf("sweep of %zu combos: %ld allocations, each failed once (%ld ended out of memory)\n", nc, total, nomem);
    free(ref), free(rows);
    dctk_space_free(sp);
}

/* The plane metrics' row buffers: a failure is out of memory with a detail,
 * nothing added to the sums (it used to leave SSIM and the gradients NaN
 * without a word). */
static void plane_metrics_out_of_memory(void **state) {
    (void)state;
    size_t n = 0;
    double *field = case_real_field(&n);
    assert_non_null(field);
    assert_true(n >= NY * NX);
    float x[NY * NX], y[NY * NX];
    for (size_t i = 0; i < NY * NX; i++) x[i] = (float)field[i], y[i] = (float)field[i] * 1.001f;
    free(field);
    dctk_sample_stats stats;
    dctk_sample_stats_of(DCTK_FLOAT32, x, NY * NX, &stats);
    dctk_metric_cfg cfg = dctk_metric_cfg_of(&stats);
    size_t shape[2] = {NY, NX};
    dctk_norms ref = {0}, a, zero = {0};
    failing_alloc_install();
    failing_alloc_reset(0);
    assert_int_equal(dctk_metrics_add_planes(&ref, &cfg, DCTK_FLOAT32, 2, shape, shape, x, y), DCTK_OK);
    assert_true(ref.ssim_n > 0 && ref.grad_abs_dx > 0 && isfinite(dctk_norms_ssim(&ref)));
    long total = al.count;
    assert_true(total >= 2);
    for (long f = 1; f <= total; f++) {
        failing_alloc_reset(f);
        dctk_clear_detail();
        a = zero;
        assert_int_equal(dctk_metrics_add_planes(&a, &cfg, DCTK_FLOAT32, 2, shape, shape, x, y), DCTK_ERR_NOMEM);
        assert_true(*dctk_detail());
        assert_memory_equal(&a, &zero, sizeof a);
        assert_int_equal(al.live, 0);
    }
    dctk_set_allocator(NULL);
}

int main(void) {
    const struct CMUnitTest tests[] = {cmocka_unit_test(every_allocation_of_a_sweep_fails_cleanly),
                                       cmocka_unit_test(plane_metrics_out_of_memory)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
