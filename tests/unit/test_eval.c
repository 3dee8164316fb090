/* The sweep's building blocks: sample plan and indices, statistics, the codec
 * space (sizes, order, resolution, fingerprint), thresholds, and a small
 * sweep whose metrics are checked against a direct computation. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "codec_cases.h"
#include "dctk/eval.h"
#include "dctk/util.h"
#include "eval/space_internal.h"

static void stats_skip_non_finite(void **state) {
    (void)state;
    double x[8] = {1, -2, 3, NAN, 4, INFINITY, -5, 6};
    dctk_sample_stats s;
    dctk_sample_stats_of(DCTK_FLOAT64, x, 8, &s);
    assert_int_equal(s.nfinite, 6);
    assert_int_equal(s.nnan, 1);
    assert_true(fabs(s.mean - 7.0 / 6) < 1e-15);
    assert_true(s.min == -5 && s.max == 6);
    double var = 0;
    double fin[6] = {1, -2, 3, 4, -5, 6};
    for (int i = 0; i < 6; i++) var += (fin[i] - 7.0 / 6) * (fin[i] - 7.0 / 6);
    assert_true(fabs(s.std - sqrt(var / 6)) < 1e-15);
    /* |x| sorted: 1 2 3 4 5 6; numpy.quantile(..., 0.01) = 1 + 0.05 * (2 - 1) */
    assert_true(fabs(s.absq01 - 1.05) < 1e-15);
}

/* The sums of two blocks measured apart and merged are those of the two
 * measured in turn (up to the rounding of the sums' order): what the ranks of
 * a split field's verification add on rank 0. Every member is exercised. */
static void norms_merge_is_whole(void **state) {
    (void)state;
    enum { H = 40, W = 64, N = H * W };
    size_t n = 0;
    double *field = case_real_field(&n);
    assert_non_null(field);
    assert_true(n >= N);
    float x[N], y[N];
    for (size_t i = 0; i < N; i++) {
        x[i] = (float)field[i];
        y[i] = x[i] * (i % 3 ? 1.001f : 0.998f);
    }
    free(field);
    dctk_sample_stats stats;
    dctk_sample_stats_of(DCTK_FLOAT32, x, N, &stats);
    dctk_metric_cfg cfg = dctk_metric_cfg_of(&stats);
    cfg.phys_min = stats.min + 0.25 * (stats.max - stats.min); /* some input out of bounds, some decoded out */
    cfg.phys_max = stats.max;
    x[5] = NAN, y[5] = 1;                 /* a missing value that comes back a number (mask_lost) */
    x[W * 30 + 7] = NAN, y[W * 30 + 7] = NAN;
    size_t half[2] = {H / 2, W};
    dctk_norms whole = {0}, a = {0}, b = {0};
    for (int k = 0; k < 2; k++) { /* the two blocks in turn into whole, each into its own sums */
        const float *xs = x + k * (N / 2), *ys = y + k * (N / 2);
        dctk_norms *part = k ? &b : &a;
        dctk_metrics_add(&whole, &cfg, DCTK_FLOAT32, xs, ys, N / 2);
        assert_int_equal(dctk_metrics_add_planes(&whole, &cfg, DCTK_FLOAT32, 2, half, half, xs, ys), DCTK_OK);
        dctk_metrics_add(part, &cfg, DCTK_FLOAT32, xs, ys, N / 2);
        assert_int_equal(dctk_metrics_add_planes(part, &cfg, DCTK_FLOAT32, 2, half, half, xs, ys), DCTK_OK);
    }
    dctk_norms merged = a, zero = {0};
    dctk_norms_merge(&merged, &b);
#define NEAR(m, scale) assert_true(whole.m != 0 && fabs(merged.m - whole.m) <= 1e-12 * (scale))
#define SUM_NEAR(m) NEAR(m, fabs(whole.m))
#define SAME(m) assert_true(whole.m != 0 && merged.m == whole.m)
    SUM_NEAR(sum_abs_x), SUM_NEAR(sum_sq_x), SUM_NEAR(sum_sq_e);
    /* sums of signed values, near 0 (x - shift, the mean): against the sum of |x| */
    NEAR(sum_e, whole.sum_abs_x), NEAR(sx, whole.sum_abs_x), NEAR(sy, whole.sum_abs_x);
    SUM_NEAR(sxx), SUM_NEAR(syy), SUM_NEAR(sxy), SUM_NEAR(ext_abs_x), SUM_NEAR(ext_abs_e);
    SUM_NEAR(grad_abs_dx), SUM_NEAR(grad_abs_de), SUM_NEAR(ssim_sum);
    SUM_NEAR(sum_abs_e), SAME(max_abs_e), SAME(max_rel_e);
    SAME(max_abs_x), SAME(n), SAME(mask_lost), SAME(n_rel_over), SAME(ssim_n), SAME(phys_bad), SAME(phys_outside);
#undef NEAR
#undef SUM_NEAR
#undef SAME
    /* a part with a finite value that came back infinite: counted, and its errors infinite in the merge */
    float xi[2] = {1, 2}, yi[2] = {1, INFINITY};
    dctk_norms gained = {0}, m1 = merged;
    dctk_norms_add(&gained, DCTK_FLOAT32, xi, yi, 2);
    dctk_norms_merge(&m1, &gained);
    assert_int_equal(m1.mask_gained, merged.mask_gained + 1);
    assert_true(gained.mask_gained == 1 && isinf(m1.sum_abs_e) && isinf(m1.max_abs_e) && m1.n == merged.n + 2);
    /* a part with a zero that came back otherwise: counted in the merge (the mean relative gate's zeros) */
    float xz[2] = {0, 2}, yz[2] = {1e-3f, 2};
    dctk_norms zeros = {0}, m3 = merged;
    dctk_norms_add(&zeros, DCTK_FLOAT32, xz, yz, 2);
    dctk_norms_merge(&m3, &zeros);
    assert_true(zeros.n_zero_changed == 1 && m3.n_zero_changed == merged.n_zero_changed + 1);
    assert_true(isinf(dctk_norms_mean_rel(&m3)) && isinf(m3.max_rel_e));
    /* a NaN error stays NaN whichever side it is on; an empty part changes nothing */
    dctk_norms with_nan = a;
    with_nan.max_abs_e = NAN;
    dctk_norms m2 = b;
    dctk_norms_merge(&m2, &with_nan);
    assert_true(isnan(m2.max_abs_e));
    m2 = with_nan;
    dctk_norms_merge(&m2, &b);
    assert_true(isnan(m2.max_abs_e));
    m2 = a;
    dctk_norms_merge(&m2, &zero);
    assert_memory_equal(&m2, &a, sizeof a);
}

static dctk_space *space_for(dctk_dtype t, const char *c, const char *f, const char *s, bool lossy) {
    dctk_sample_stats st = {.n = 10, .nfinite = 10, .mean = 280, .std = 10, .min = 250, .max = 310, .absq01 = 251};
    dctk_space_opts o = {.compressor_class = c, .filter_class = f, .serializer_class = s, .with_lossy = lossy};
    dctk_space *sp = NULL;
    assert_int_equal(dctk_space_build(t, &st, &o, &sp), DCTK_OK);
    return sp;
}

static void space_sizes(void **state) {
    (void)state;
    dctk_space *sp = space_for(DCTK_FLOAT32, NULL, NULL, NULL, true);
    assert_int_equal(sp->ncomp, 98);
    assert_int_equal(sp->nfilt, 11);
    assert_int_equal(sp->nser, 9 + 4 + 4 + 12 + 9); /* zfp, sz, ebcc, pcodec, zfp.rs */
    assert_int_equal(dctk_space_ncombos(sp), 99 * 12 * 39);
    dctk_space_free(sp);
    sp = space_for(DCTK_FLOAT64, NULL, NULL, NULL, true);
    assert_int_equal(sp->nfilt, 16);
    dctk_space_free(sp);
    sp = space_for(DCTK_INT16, NULL, NULL, NULL, true);
    assert_int_equal(sp->nfilt, 1); /* delta only */
    assert_int_equal(sp->nser, 12); /* zfp has no int16: pcodec only */
    dctk_space_free(sp);
    sp = space_for(DCTK_INT32, NULL, NULL, NULL, true);
    assert_int_equal(sp->nser, 3 + 12 + 3); /* zfp fixed rate only, pcodec, zfp.rs fixed rate only */
    dctk_space_free(sp);
    sp = space_for(DCTK_FLOAT32, NULL, NULL, NULL, false);
    assert_int_equal(sp->nfilt, 0); /* bit exact only, as the Python tool: float Delta and the fixed-offset-scales round */
    assert_int_equal(sp->nser, 12); /* pcodec is lossless */
    dctk_space_free(sp);
    sp = space_for(DCTK_FLOAT64, "none", "none", "pcodec", true);
    assert_int_equal(sp->nser, 12);
    assert_false(sp->ser_none);
    assert_int_equal(dctk_space_ncombos(sp), 12);
    dctk_space_free(sp);
    /* numcodecs-wasm's Zfp, as the Python tool writes it through any-numcodecs */
    sp = space_for(DCTK_FLOAT32, "none", "none", "zfprs", true);
    assert_int_equal(sp->nser, 9);
    char *z = json_dumps(json_array_get(sp->ser[8].codecs, 0), JSON_COMPACT | JSON_SORT_KEYS);
    assert_string_equal(z, "{\"configuration\":{\"_version\":\"0.2.0\",\"id\":\"zfp.rs\",\"mode\":\"fixed-rate\","
                           "\"non_finite\":\"deny\",\"rate\":32.0},\"name\":\"any-numcodecs.array-bytes\"}");
    free(z);
    dctk_space_free(sp);
    sp = space_for(DCTK_FLOAT32, "zstd", "none", "zfp", true);
    assert_int_equal(sp->ncomp, 8);
    assert_false(sp->comp_none);
    assert_int_equal(sp->nfilt, 0);
    assert_true(sp->filt_none);
    assert_int_equal(dctk_space_ncombos(sp), 8 * 1 * 9);
    dctk_space_free(sp);
    dctk_sample_stats st = {0};
    dctk_space_opts bad = {.compressor_class = "snappy", .with_lossy = true};
    assert_int_equal(dctk_space_build(DCTK_FLOAT32, &st, &bad, &sp), DCTK_ERR_ARG);
    assert_non_null(strstr(dctk_detail(), "blosc"));
}

/* SZ and EBCC: absolute bounds from the sample's range, lossy only, floats only. */
static void space_error_bounded(void **state) {
    (void)state;
    dctk_sample_stats st0 = {0};
    dctk_space *sp = space_for(DCTK_FLOAT32, "none", "none", "SZ", true);
    assert_int_equal(sp->nser, 4);
    static const double rel[] = {1e-2, 1e-3, 1e-4, 1e-6};
    for (int k = 0; k < 4; k++) {
        json_t *conf = json_object_get(json_array_get(sp->ser[k].codecs, 0), "configuration");
        assert_string_equal(json_string_value(json_object_get(json_array_get(sp->ser[k].codecs, 0), "name")),
                            "dctk.sz");
        assert_true(fabs(json_real_value(json_object_get(conf, "error_bound")) - rel[k] * 60) < 1e-12 * 60);
        assert_string_equal(json_string_value(json_object_get(conf, "predictor")), k ? "lorenzo" : "interp");
        assert_true(sp->ser[k].lossy);
    }
    dctk_space_free(sp);
    sp = space_for(DCTK_FLOAT64, "none", "none", "ebcc", true);
    assert_int_equal(sp->nser, 4);
    json_t *conf = json_object_get(json_array_get(sp->ser[3].codecs, 0), "configuration");
    assert_true(fabs(json_real_value(json_object_get(conf, "error_bound")) - 1e-9 * 60) < 1e-20);
    dctk_space_free(sp);
    sp = space_for(DCTK_FLOAT32, "none", "none", "sz", false);
    assert_int_equal(sp->nser, 0);
    dctk_space_free(sp);
    sp = space_for(DCTK_INT32, "none", "none", "ebcc", true);
    assert_int_equal(sp->nser, 0);
    dctk_space_free(sp);
    /* classes may be lists: the union of their families */
    sp = space_for(DCTK_FLOAT32, "zstd,lz4", "none", "none,ZFP", true);
    assert_int_equal(sp->ncomp, 8 + 6); /* each plain and shuffled */
    assert_int_equal(sp->nser, 9);
    assert_true(sp->ser_none);
    dctk_space_free(sp);
    sp = space_for(DCTK_FLOAT32, "none", "none", "sz,ebcc", true);
    assert_int_equal(sp->nser, 8);
    assert_false(sp->ser_none);
    dctk_space_free(sp);
    dctk_space_opts bad = {.compressor_class = "zstd,snappy", .with_lossy = true};
    assert_int_equal(dctk_space_build(DCTK_FLOAT32, &st0, &bad, &sp), DCTK_ERR_ARG);
    assert_non_null(strstr(dctk_detail(), "'snappy'"));
    /* a constant sample has no range to take a bound from */
    dctk_sample_stats st = {.n = 10, .nfinite = 10, .mean = 5, .min = 5, .max = 5};
    dctk_space_opts o = {.compressor_class = "none", .filter_class = "none", .serializer_class = "sz", .with_lossy = true};
    assert_int_equal(dctk_space_build(DCTK_FLOAT32, &st, &o, &sp), DCTK_OK);
    assert_int_equal(sp->nser, 0);
    dctk_space_free(sp);
}

static char *dump(json_t *j) {
    char *s = json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS);
    json_decref(j);
    return s;
}

static void space_order_and_resolution(void **state) {
    (void)state;
    dctk_space *sp = space_for(DCTK_FLOAT32, NULL, NULL, NULL, true);
    int c, f, s;
    dctk_space_combo(sp, 0, &c, &f, &s);
    assert_true(c == -1 && f == -1 && s == -1);
    dctk_space_combo(sp, 1, &c, &f, &s);
    assert_true(c == -1 && f == -1 && s == 0);
    dctk_space_combo(sp, 39, &c, &f, &s); /* none + 9 zfp + 4 sz + 4 ebcc + 12 pcodec + 9 zfp.rs serializers */
    assert_true(c == -1 && f == 0 && s == -1);
    dctk_space_combo(sp, 12 * 39, &c, &f, &s);
    assert_true(c == 0 && f == -1 && s == -1);
    /* blosc blosclz 1 auto: byte shuffle of 4-byte elements after bytes, bit shuffle after zfp */
    char *a = dump(dctk_space_compressor(sp, 0, -1, -1)), *b = dump(dctk_space_compressor(sp, 0, -1, 0));
    assert_non_null(strstr(a, "\"shuffle\":\"shuffle\""));
    assert_non_null(strstr(a, "\"typesize\":4"));
    assert_non_null(strstr(b, "\"shuffle\":\"bitshuffle\""));
    assert_non_null(strstr(b, "\"typesize\":1"));
    free(a), free(b);
    /* the shuffled zstd variants lose their shuffle after a zfp stream */
    int zs = 60 + 19 + 3; /* shuffle + zstd 0 */
    a = dump(dctk_space_compressor(sp, zs, -1, -1));
    b = dump(dctk_space_compressor(sp, zs, -1, 0));
    assert_non_null(strstr(a, "numcodecs.shuffle"));
    assert_null(strstr(b, "numcodecs.shuffle"));
    free(a), free(b);
    a = dump(dctk_space_pipeline(sp, -1, -1, -1));
    assert_string_equal(a, "[{\"configuration\":{\"endian\":\"little\"},\"name\":\"bytes\"}]");
    free(a);
    /* the fingerprint changes with the sample statistics that parameterise filters */
    dctk_space *sp2 = space_for(DCTK_FLOAT32, NULL, NULL, NULL, true);
    assert_string_equal(sp->fingerprint, sp2->fingerprint);
    dctk_sample_stats st = {.n = 10, .nfinite = 10, .mean = 281, .std = 10, .min = 250, .max = 310, .absq01 = 251};
    dctk_space_opts o = {.with_lossy = true};
    dctk_space *sp3;
    assert_int_equal(dctk_space_build(DCTK_FLOAT32, &st, &o, &sp3), DCTK_OK);
    assert_string_not_equal(sp->fingerprint, sp3->fingerprint);
    dctk_space_free(sp), dctk_space_free(sp2), dctk_space_free(sp3);
}

static void thresholds_by_name_and_units(void **state) {
    (void)state;
    char path[] = "/tmp/dctk_thresholds_XXXXXX";
    int fd = mkstemp(path);
    const char *csv = "Short Name,Unit,Existing L1 error\nt,K,0.001\nt,degC,0.5\n\"q, x\",\"kg kg-1\",2e-3\n"
                      "u,m s-1,1.14e-4\nta,K,3e-6\nw,m/s,7e-4\n";
    assert_int_equal(write(fd, csv, strlen(csv)), (ssize_t)strlen(csv));
    close(fd);
    double v;
    char why[512];
    assert_int_equal(dctk_threshold_lookup(path, "t", "K", &v), DCTK_OK);
    assert_true(v == 0.001);
    assert_int_equal(dctk_threshold_lookup(path, "t", "degC", &v), DCTK_OK);
    assert_true(v == 0.5);
    assert_int_equal(dctk_threshold_lookup(path, "q, x", "kg kg-1", &v), DCTK_OK);
    assert_true(v == 2e-3);
    assert_int_equal(dctk_threshold_lookup(path, "t", "F", &v), DCTK_ERR_NOT_FOUND);
    /* GRIB's units through eccodes write the power as ** */
    assert_int_equal(dctk_threshold_lookup(path, "q, x", "kg kg**-1", &v), DCTK_OK);
    assert_int_equal(dctk_threshold_lookup(path, "q, x", "kg kg^-1", &v), DCTK_OK);
    assert_int_equal(dctk_threshold_lookup(path, "q, x", "kg kg**-2", &v), DCTK_ERR_NOT_FOUND);
    /* the same unit spelled otherwise, as udunits2 reads it (not as text) */
    v = 0;
    assert_int_equal(dctk_threshold_explain(path, "q, x", "kg/kg", &v, why, sizeof why), DCTK_OK);
    assert_true(v == 2e-3);
    assert_string_equal(why, "row 'q, x' in 'kg kg-1'");
    v = 0;
    assert_int_equal(dctk_threshold_lookup(path, "u", "m/s", &v), DCTK_OK);
    assert_true(v == 1.14e-4);
    v = 0;
    assert_int_equal(dctk_threshold_lookup(path, "u", "m.s-1", &v), DCTK_OK);
    assert_true(v == 1.14e-4);
    v = 0;
    assert_int_equal(dctk_threshold_lookup(path, "w", "m s-1", &v), DCTK_OK); /* and the other way round */
    assert_true(v == 7e-4);
    /* a scaled unit: a relative error does not change with scale, so the row applies and says so */
    v = 0;
    assert_int_equal(dctk_threshold_explain(path, "u", "km/h", &v, why, sizeof why), DCTK_OK);
    assert_true(v == 1.14e-4);
    assert_non_null(strstr(why, "scaled"));
    /* an offset (degC against K) changes a relative error: refused, with the reason */
    assert_int_equal(dctk_threshold_explain(path, "ta", "degC", &v, why, sizeof why), DCTK_ERR_NOT_FOUND);
    assert_non_null(strstr(why, "'K'"));
    assert_non_null(strstr(why, "offset"));
    assert_int_equal(dctk_threshold_explain(path, "ta", "celsius", &v, why, sizeof why), DCTK_ERR_NOT_FOUND);
    assert_non_null(strstr(why, "offset"));
    /* the same unit is preferred to a row that would need a conversion */
    v = 0;
    assert_int_equal(dctk_threshold_lookup(path, "t", "Celsius", &v), DCTK_OK);
    assert_true(v == 0.5);
    /* not convertible, unknown, no row: three different reasons */
    assert_int_equal(dctk_threshold_explain(path, "u", "K", &v, why, sizeof why), DCTK_ERR_NOT_FOUND);
    assert_non_null(strstr(why, "not convertible"));
    assert_int_equal(dctk_threshold_explain(path, "u", "furlongs per glorp", &v, why, sizeof why), DCTK_ERR_NOT_FOUND);
    assert_non_null(strstr(why, "unknown to udunits2"));
    /* a name in another case gets the row when no row has it as written */
    v = 0;
    assert_int_equal(dctk_threshold_explain(path, "U", "m/s", &v, why, sizeof why), DCTK_OK);
    assert_true(v == 1.14e-4);
    assert_string_equal(why, "row 'u' in 'm s-1'");
    assert_int_equal(dctk_threshold_explain(path, "zz", "K", &v, why, sizeof why), DCTK_ERR_NOT_FOUND);
    assert_string_equal(why, "no row named 'zz'");
    /* no units attribute is not the dimensionless "1" */
    assert_int_equal(dctk_threshold_lookup(path, "q, x", "", &v), DCTK_ERR_NOT_FOUND);
    unlink(path);
}

static double bound_of(json_t *list) {
    double b = json_real_value(json_object_get(json_object_get(json_array_get(list, 0), "configuration"), "error_bound"));
    json_decref(list);
    return b;
}

/* After fixed-offset-scale an error bound follows the scale; elsewhere the
 * space's entry is used as it is, and the fingerprint does not move. */
static void errbound_after_scaling(void **state) {
    (void)state;
    dctk_space *sp = space_for(DCTK_FLOAT32, "none", "bitround,fixedoffsetscale", "sz,ebcc", true);
    int fos[2] = {-1, -1}, nf = 0, br = -1;
    for (int f = 0; f < sp->nfilt; f++) {
        if (!strcmp(sp->filt[f].family, "fixedoffsetscale")) fos[nf++] = f;
        else if (br < 0) br = f;
    }
    assert_int_equal(nf, 2);
    for (int s = 0; s < sp->nser; s++) {
        double raw = bound_of(json_incref(sp->ser[s].codecs));
        assert_true(bound_of(dctk_space_serializer(sp, -1, s)) == raw);
        assert_true(bound_of(dctk_space_serializer(sp, br, s)) == raw);
        assert_true(fabs(bound_of(dctk_space_serializer(sp, fos[0], s)) - raw / 10) < 1e-12 * raw); /* std 10 */
        assert_true(fabs(bound_of(dctk_space_serializer(sp, fos[1], s)) - raw / 60) < 1e-12 * raw); /* range 60 */
        json_t *p = dctk_space_pipeline(sp, -1, fos[1], s); /* [filter, serializer] */
        assert_true(fabs(bound_of(json_pack("[O]", json_array_get(p, 1))) - raw / 60) < 1e-12 * raw);
        json_decref(p);
    }
    assert_null(dctk_space_serializer(sp, fos[0], -1));
    dctk_space *again = space_for(DCTK_FLOAT32, "none", "bitround,fixedoffsetscale", "sz,ebcc", true);
    assert_string_equal(sp->fingerprint, again->fingerprint);
    dctk_space_free(sp), dctk_space_free(again);
}

static void count_result(void *user, const dctk_combo_result *r) {
    (void)r;
    (*(int *)user)++;
}

/* A stop already requested: no unit starts, no row is reported, and the sweep says it was interrupted. */
static void sweep_stops_when_asked(void **state) {
    (void)state;
    dctk_space *sp = space_for(DCTK_FLOAT32, "zstd", "none", "none", true);
    float sample[64];
    for (int i = 0; i < 64; i++) sample[i] = (float)i;
    size_t shape[1] = {64};
    dctk_combo_result *res = calloc(dctk_space_ncombos(sp), sizeof *res);
    volatile sig_atomic_t stop = 0;
    int rows = 0;
    dctk_sweep_opts o = {.threads = 2, .threshold = NAN, .on_result = count_result, .user = &rows, .stop = &stop};
    assert_int_equal(dctk_sweep_run(sp, sample, 1, shape, &o, res), DCTK_OK);
    assert_int_equal(rows, (int)dctk_space_ncombos(sp));
    stop = SIGINT;
    rows = 0;
    assert_int_equal(dctk_sweep_run(sp, sample, 1, shape, &o, res), DCTK_ERR_INTERRUPTED);
    assert_int_equal(rows, 0);
    free(res);
    dctk_space_free(sp);
}

/* Each sweep keeps its own timers and hands them to its caller at the end:
 * two sweeps with two timer structs each get their own units and codec
 * time, and the process-wide timer report is not touched while they run. */
static void sweep_timers_are_the_sweeps(void **state) {
    (void)state;
    dctk_space *sp = space_for(DCTK_FLOAT32, "zstd", "none", "none", true);
    float sample[4096];
    for (int i = 0; i < 4096; i++) sample[i] = sinf((float)i / 50.0f);
    size_t shape[1] = {4096};
    dctk_combo_result *res = calloc(dctk_space_ncombos(sp), sizeof *res);
    dctk_timer_reset();
    dctk_sweep_timers a = {0}, b = {0};
    dctk_sweep_opts o = {.threads = 2, .threshold = NAN, .timers = &a};
    assert_int_equal(dctk_sweep_run(sp, sample, 1, shape, &o, res), DCTK_OK);
    assert_int_equal(a.units, dctk_sweep_nunits(sp));
    assert_true(a.codec_s > 0 && a.codec_cpu_s >= 0 && a.codec_user_s <= a.codec_cpu_s + 1e-9);
    o.timers = &b;
    assert_int_equal(dctk_sweep_run(sp, sample, 1, shape, &o, res), DCTK_OK);
    assert_int_equal(b.units, a.units);
    assert_true(b.codec_s > 0);
    assert_int_equal(a.units, dctk_sweep_nunits(sp)); /* the first one's figures stay its own */
    assert_true(dctk_timer_total("sweep: inside codecs [thread CPU s]") == 0);
    assert_true(dctk_timer_total("sweep: inside codecs [thread-s]") == 0);
    free(res);
    dctk_space_free(sp);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(sweep_timers_are_the_sweeps),
        cmocka_unit_test(stats_skip_non_finite),     cmocka_unit_test(space_sizes),
        cmocka_unit_test(space_order_and_resolution), cmocka_unit_test(thresholds_by_name_and_units),
        cmocka_unit_test(space_error_bounded),       cmocka_unit_test(errbound_after_scaling),
        cmocka_unit_test(sweep_stops_when_asked),    cmocka_unit_test(norms_merge_is_whole),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
