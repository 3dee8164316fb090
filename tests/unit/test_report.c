/* Reports: the Parquet reader against our writer (round trip bit for bit,
 * many pages, every truncation and many corruptions refused without reading
 * out of bounds), the CSV fallback, k-means and silhouette on cases with a
 * known answer, the Pareto front, and the figures written as valid files.
 * The comparison with scikit-learn is tests/interop/test_report_sklearn.py. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <dirent.h>
#include <dlfcn.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dctk/report.h"
#include "dctk/util.h"
#include "report/plot.h"
#include "results/results_internal.h"
#include "unit/tmpdir.h"

#define BLOSC "{\"name\":\"blosc\",\"configuration\":{\"cname\":\"zstd\",\"clevel\":5,\"shuffle\":\"bitshuffle\"}}"

/* the selection columns: metrics then gates */
#define SEL(b, p, ps, ss, f, e, g, p1, p2, p3, p4, p5, p6, p7) b, p, ps, ss, f, e, g, p1, p2, p3, p4, p5, p6, p7, p7
static const dctk_result_row rows[] = {
    {"t2m", 0, 1, 2, BLOSC, "{\"name\":\"numcodecs.bitround\",\"configuration\":{\"keepbits\":9}}", "",
     "blosc(clevel=5) | bitround(keepbits=9) | -", 3.25, 1e-3, 2e-3, 0.1, 12.5, 0.25, 123.456, 789.0,
     SEL(-1e-4, 0.999999, 87.5, 0.9987, 0.25, 2e-3, 0.5, true, true, true, true, true, false, true), "numcodecs", true, "", 1.0, "kept", 0.99, 12, 5, 0.125, 0.0625, true, true, 1e-3, true},
    {"", -1, -1, -1, "", "", "", "", NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN,
     SEL(NAN, NAN, NAN, NAN, NAN, NAN, NAN, false, false, false, false, false, false, false), "", false, "codec failed", 0.0, "failed", NAN, NAN, 0, NAN, NAN, false, false, NAN, false},
    {"a,b", INT64_MAX, INT64_MIN, -1, "\"q\"", ",", "\n", "a | b, \"c\"", INFINITY, -INFINITY, -0.0, DBL_MAX,
     DBL_MIN, 5e-324, 1.0 / 3.0, 0.30000000000000004,
     SEL(INFINITY, -INFINITY, INFINITY, -0.0, 5e-324, DBL_MAX, DBL_MIN, true, false, true, false, true, false, true),
     "dctk", false, "line one\nline two", 0.0625, "failed", 1.0, 1e-300, INT64_MIN, INFINITY, 5e-324, true, false, INFINITY, false},
    {"température ☃ 😀", 97, 15, 8, "\r", " x ", "\"", "☃", 1e300, -1e-300, 2.5e-310, 1, 2, 3, 4, 5,
     SEL(6, 7, 8, 9, 10, 11, 12, false, true, false, true, false, true, false), "plugin", true, "\"", NAN, "kept", NAN, INFINITY, 3, 1e-300, 0.5, true, true, 0.25, true},
};
#define NROWS (sizeof rows / sizeof rows[0])

static char dir[64];

static int setup(void **state) {
    (void)state;
    return tmpdir_make(dir, sizeof dir, "dctk-test-report");
}

static int teardown(void **state) {
    (void)state;
    return tmpdir_remove(dir);
}

static void assert_same_row(const dctk_result_row *a, const dctk_result_row *b) {
    assert_string_equal(a->var, b->var);
    assert_true(a->comp_idx == b->comp_idx && a->filt_idx == b->filt_idx && a->ser_idx == b->ser_idx);
    assert_string_equal(a->compressor, b->compressor);
    assert_string_equal(a->filter, b->filter);
    assert_string_equal(a->serializer, b->serializer);
    for (int c = 0; c < DCTK_RESULT_NCOLS; c++)
        if (dctk_result_cols[c].kind == DCTK_COL_F64) assert_same_double(dctk_col_f64(a, c), dctk_col_f64(b, c));
    assert_int_equal(a->keep, b->keep);
    assert_string_equal(a->error, b->error);
}

/* n generated rows (cycling through `rows`, indices made unique). */
static dctk_result_row *many_rows(size_t n) {
    dctk_result_row *r = malloc(sizeof *r * n);
    for (size_t i = 0; i < n; i++) {
        r[i] = rows[i % NROWS];
        r[i].comp_idx = (int64_t)i;
        r[i].keep = (i * 7) % 3 == 0;
    }
    return r;
}

static void parquet_round_trip(void **state) {
    (void)state;
    size_t n = 1003;
    dctk_result_row *r = many_rows(n);
    size_t page_sizes[] = {0, 64, 1}; /* one page per column; several; one value per page */
    size_t group_rows[] = {0, 100, 1}; /* one row group; eleven, the last short; one row each */
    for (size_t p = 0; p < 9; p++) {
        dctk_buf b = DCTK_BUF_INIT;
        assert_int_equal(dctk_parquet_encode(&b, r, n, page_sizes[p % 3], group_rows[p / 3]), DCTK_OK);
        dctk_result_table t = DCTK_RESULT_TABLE_INIT;
        assert_int_equal(dctk_parquet_read_mem(b.data, b.size, &t), DCTK_OK);
        assert_int_equal(t.n, n);
        for (size_t i = 0; i < n; i++) assert_same_row(&t.rows[i], &r[i]);
        dctk_result_table_free(&t);
        dctk_buf_free(&b);
    }
    free(r);
}

static void parquet_empty_and_file(void **state) {
    (void)state;
    char path[128];
    snprintf(path, sizeof path, "%s/results_t.parquet", dir);
    assert_int_equal(dctk_parquet_write(path, rows, 0), DCTK_OK);
    dctk_result_table t = DCTK_RESULT_TABLE_INIT;
    assert_int_equal(dctk_results_read(path, &t), DCTK_OK);
    assert_int_equal(t.n, 0);
    assert_int_equal(dctk_parquet_write(path, rows, NROWS), DCTK_OK);
    assert_int_equal(dctk_results_read(path, &t), DCTK_OK);
    assert_int_equal(t.n, NROWS);
    for (size_t i = 0; i < NROWS; i++) assert_same_row(&t.rows[i], &rows[i]);
    dctk_result_table_free(&t);
}

static void csv_fallback(void **state) {
    (void)state;
    char path[128];
    snprintf(path, sizeof path, "%s/config_space_t_rank0.csv", dir);
    dctk_csv_writer *w;
    assert_int_equal(dctk_csv_writer_open(path, false, false, &w, NULL), DCTK_OK);
    for (size_t i = 0; i < NROWS; i++) assert_int_equal(dctk_csv_writer_append(w, &rows[i]), DCTK_OK);
    assert_int_equal(dctk_csv_writer_close(w), DCTK_OK);
    dctk_result_table t = DCTK_RESULT_TABLE_INIT;
    assert_int_equal(dctk_results_read(path, &t), DCTK_OK);
    assert_int_equal(t.n, NROWS);
    for (size_t i = 0; i < NROWS; i++) assert_same_row(&t.rows[i], &rows[i]);
    dctk_result_table_free(&t);
}

/* Every truncation, and many byte changes, either read or fail cleanly
 * (AddressSanitizer in the sanitizer build catches any stray read). */
static void parquet_damage_refused(void **state) {
    (void)state;
    dctk_buf b = DCTK_BUF_INIT;
    assert_int_equal(dctk_parquet_encode(&b, rows, NROWS, 16, 3), DCTK_OK);
    for (size_t len = 0; len < b.size; len++) {
        uint8_t *cut = malloc(len + !len); /* exactly len bytes, so a read past them is caught */
        memcpy(cut, b.data, len);
        dctk_result_table t = DCTK_RESULT_TABLE_INIT;
        assert_int_not_equal(dctk_parquet_read_mem(cut, len, &t), DCTK_OK);
        dctk_result_table_free(&t);
        free(cut);
    }
    uint8_t *copy = malloc(b.size);
    uint64_t s = 0x9e3779b97f4a7c15ULL;
    for (int trial = 0; trial < 20000; trial++) {
        memcpy(copy, b.data, b.size);
        for (int k = 0; k < 1 + trial % 3; k++) {
            s = s * 6364136223846793005ULL + 1442695040888963407ULL;
            copy[(s >> 33) % b.size] = (uint8_t)(s >> 13);
        }
        dctk_result_table t = DCTK_RESULT_TABLE_INIT;
        dctk_status st = dctk_parquet_read_mem(copy, b.size, &t);
        assert_true(st == DCTK_OK || st == DCTK_ERR_FORMAT || st == DCTK_ERR_UNSUPPORTED);
        dctk_result_table_free(&t);
    }
    free(copy);
    dctk_buf_free(&b);
}

static void not_parquet(void **state) {
    (void)state;
    dctk_result_table t = DCTK_RESULT_TABLE_INIT;
    assert_int_equal(dctk_parquet_read_mem((const uint8_t *)"PAR1xxxxPAR1", 12, &t), DCTK_ERR_FORMAT);
    char path[128];
    snprintf(path, sizeof path, "%s/nope.parquet", dir);
    assert_int_equal(dctk_results_read(path, &t), DCTK_ERR_NOT_FOUND);
    assert_non_null(strstr(dctk_detail(), "nope.parquet"));
}

/* --- k-means ------------------------------------------------------------------ */

static void kmeans_separated(void **state) {
    (void)state;
    /* two tight groups far apart and a third: the only sensible 3-partition */
    double x[] = {0, 0, 0.1, 0, 0, 0.1, 10, 10, 10.1, 10, 10, 10.1, -10, 5, -10.1, 5};
    dctk_kmeans km;
    assert_int_equal(dctk_kmeans_run(x, 8, 2, 3, NULL, &km), DCTK_OK);
    assert_int_equal(km.labels[0], km.labels[1]);
    assert_int_equal(km.labels[0], km.labels[2]);
    assert_int_equal(km.labels[3], km.labels[5]);
    assert_int_equal(km.labels[6], km.labels[7]);
    assert_true(km.labels[0] != km.labels[3] && km.labels[3] != km.labels[6] && km.labels[0] != km.labels[6]);
    double s = dctk_silhouette(x, 8, 2, km.labels, 3);
    assert_true(s > 0.95 && s <= 1);
    dctk_kmeans_free(&km);
}

static void kmeans_deterministic_and_edges(void **state) {
    (void)state;
    double x[200];
    uint64_t s = 42;
    for (int i = 0; i < 200; i++) {
        s = s * 6364136223846793005ULL + 1;
        x[i] = (double)(s >> 11) * 0x1.0p-53;
    }
    dctk_kmeans a, b;
    assert_int_equal(dctk_kmeans_run(x, 100, 2, 5, NULL, &a), DCTK_OK);
    assert_int_equal(dctk_kmeans_run(x, 100, 2, 5, NULL, &b), DCTK_OK);
    assert_memory_equal(a.labels, b.labels, sizeof(int) * 100);
    assert_memory_equal(a.centers, b.centers, sizeof(double) * 10);
    dctk_kmeans_free(&a);
    dctk_kmeans_free(&b);
    /* k == n: every point its own centre */
    assert_int_equal(dctk_kmeans_run(x, 6, 2, 6, NULL, &a), DCTK_OK);
    assert_true(a.inertia == 0);
    assert_true(isnan(dctk_silhouette(x, 6, 2, a.labels, 6)));
    dctk_kmeans_free(&a);
    assert_int_equal(dctk_kmeans_run(x, 3, 2, 4, NULL, &a), DCTK_ERR_ARG);
    dctk_kmeans_free(&a);
    /* identical points: seeding still yields k centres, no NaN */
    double same[20];
    for (int i = 0; i < 20; i++) same[i] = 1.5;
    assert_int_equal(dctk_kmeans_run(same, 10, 2, 3, NULL, &a), DCTK_OK);
    assert_true(a.inertia == 0);
    for (int i = 0; i < 6; i++) assert_true(a.centers[i] == 1.5);
    dctk_kmeans_free(&a);
}

static void silhouette_by_hand(void **state) {
    (void)state;
    /* 1-D points 0, 1 | 5: a(0)=1, b(0)=5 -> 0.8; a(1)=1, b(1)=4 -> 0.75; singleton -> 0 */
    double x[] = {0, 1, 5};
    int labels[] = {0, 0, 1};
    assert_true(fabs(dctk_silhouette(x, 3, 1, labels, 2) - (0.8 + 0.75 + 0) / 3) < 1e-15);
    int one[] = {0, 0, 0};
    assert_true(isnan(dctk_silhouette(x, 3, 1, one, 1)));
}

static void standardize_constant_column(void **state) {
    (void)state;
    double x[] = {1, 7, 2, 7, 3, 7};
    double mean[2], scale[2];
    dctk_standardize(x, 3, 2, mean, scale);
    assert_true(fabs(x[0] + sqrt(1.5)) < 1e-15 && x[2] == 0 && fabs(x[4] - sqrt(1.5)) < 1e-15);
    assert_true(x[1] == 0 && x[3] == 0 && x[5] == 0 && scale[1] == 1 && mean[1] == 7);
}

static void pareto_front(void **state) {
    (void)state;
    /* (ratio, error): 3 and 0 and 4 are optimal; 1 is dominated by 0, 2 by 3, 5 duplicates 4 */
    double xy[] = {5, 0.1, 4, 0.2, 2, 0.05, 3, 0.01, 1, 0, 1, 0};
    size_t out[6];
    size_t n = dctk_pareto_front(xy, 6, out);
    assert_int_equal(n, 3);
    assert_int_equal(out[0], 0);
    assert_int_equal(out[1], 3);
    assert_int_equal(out[2], 4);
}

static void metric_names(void **state) {
    (void)state;
    assert_string_equal(dctk_result_columns[dctk_report_metric_column("L1")], "l1_rel");
    assert_string_equal(dctk_result_columns[dctk_report_metric_column("l2")], "l2_rel");
    assert_string_equal(dctk_result_columns[dctk_report_metric_column("LInf")], "linf_rel");
    assert_string_equal(dctk_result_columns[dctk_report_metric_column("Linf")], "linf_rel");
    assert_int_equal(dctk_report_metric_column("L3"), -1);
}

/* The error columns are the norms and the selection metrics of the row
 * schema (README "Thresholds and selection"), by column name in any case;
 * dctk_report_row_value reads any double column and gives the selection
 * metrics as errors (0 perfect). */
static void error_columns_and_values(void **state) {
    (void)state;
    const char *sel[] = {"bias_rel", "pearson", "psnr_db", "ssim", "rel_err_frac", "extremes_rel", "gradient_rel"};
    for (size_t i = 0; i < sizeof sel / sizeof sel[0]; i++) {
        int c = dctk_report_error_column(sel[i]);
        assert_true(c >= 0);
        assert_string_equal(dctk_result_columns[c], sel[i]);
        assert_int_equal(dctk_report_metric_column(sel[i]), -1);
    }
    assert_string_equal(dctk_result_columns[dctk_report_error_column("SSIM")], "ssim");
    assert_string_equal(dctk_result_columns[dctk_report_error_column("linf")], "linf_rel");
    const char *not_errors[] = {"ratio", "euclidean", "encode_mbps", "var", "pass_l1", "fraction", "", "L3"};
    for (size_t i = 0; i < sizeof not_errors / sizeof not_errors[0]; i++)
        assert_int_equal(dctk_report_error_column(not_errors[i]), -1);
    assert_int_equal(dctk_report_error_column(NULL), -1);

    dctk_result_row r = {.var = "t", .comp_idx = 3, .ratio = 3.5, .l1_rel = 1e-3, .encode_mbps = 250,
                         .bias_rel = -0.25, .pearson = 0.875, .psnr_db = 40, .ssim = 0.75,
                         .rel_err_frac = 0.125, .gradient_rel = 0.5, .keep = true};
    struct {
        const char *name;
        double want;
    } cases[] = {{"ratio", 3.5},   {"l1_rel", 1e-3},      {"encode_mbps", 250}, {"bias_rel", 0.25},
                 {"pearson", 0.125}, {"psnr_db", 0.01},   {"ssim", 0.25},       {"rel_err_frac", 0.125},
                 {"gradient_rel", 0.5}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int c = -1;
        for (int k = 0; k < DCTK_RESULT_NCOLS; k++)
            if (!strcmp(dctk_result_columns[k], cases[i].name)) c = k;
        assert_true(c >= 0);
        double v = dctk_report_row_value(&r, c);
        if (fabs(v - cases[i].want) > 1e-15 * fabs(cases[i].want))
            fail_msg("%s: %.17g, want %.17g", cases[i].name, v, cases[i].want);
    }
    for (int k = 0; k < DCTK_RESULT_NCOLS; k++)
        if (!strcmp(dctk_result_columns[k], "var") || !strcmp(dctk_result_columns[k], "comp_idx") ||
            !strcmp(dctk_result_columns[k], "keep"))
            assert_true(isnan(dctk_report_row_value(&r, k)));
    assert_true(isnan(dctk_report_row_value(&r, -1)) && isnan(dctk_report_row_value(&r, DCTK_RESULT_NCOLS)));
}

/* --- figures -------------------------------------------------------------------- */

static void assert_file_starts(const char *path, const char *magic) {
    uint8_t *data;
    size_t n;
    assert_int_equal(dctk_read_file(path, &data, &n), DCTK_OK);
    assert_true(n > strlen(magic));
    assert_memory_equal(data, magic, strlen(magic));
    free(data);
}

/* cairo is opened by the first figure, not at start-up (cairo_lazy.h): not
 * in the process before, there and drawing after. Runs first. */
static void draw_square(cairo_t *cr, void *user) {
    (void)user;
    cairo_set_source_rgb(cr, 1, 0, 0);
    cairo_rectangle(cr, 2, 2, 4, 4);
    cairo_fill(cr);
}

static void cairo_opened_on_first_figure(void **state) {
    (void)state;
    assert_null(dlopen("libcairo.so.2", RTLD_NOW | RTLD_NOLOAD));
    dctk_buf png = DCTK_BUF_INIT;
    assert_int_equal(fig_render(FIG_PNG, 8, 8, 1, draw_square, NULL, &png), DCTK_OK);
    assert_true(png.size > 8 && memcmp(png.data, "\x89PNG", 4) == 0);
    dctk_buf_free(&png);
    void *h = dlopen("libcairo.so.2", RTLD_NOW | RTLD_NOLOAD);
    assert_non_null(h);
    dlclose(h);
}

static void figures_written(void **state) {
    (void)state;
    dctk_result_table t = DCTK_RESULT_TABLE_INIT;
    for (int i = 0; i < 60; i++) {
        dctk_result_row r = rows[0];
        r.comp_idx = i, r.filt_idx = -1, r.ser_idx = -1;
        r.ratio = 1 + i * 0.7;
        r.l1_rel = i % 5 == 0 ? 0 : 1e-6 * pow(1.3, i);
        r.l2_rel = r.l1_rel * 1.5;
        r.linf_rel = r.l1_rel * 10;
        r.keep = r.l1_rel < 1e-3;
        char comp[96]; /* one pipeline a row: rows of one pipeline are twins, one candidate */
        snprintf(comp, sizeof comp, "{\"name\":\"x\",\"configuration\":{\"level\":%d,\"s\":\"</script><b>\"}}", i);
        r.compressor = comp;
        assert_int_equal(dctk_result_table_add(&t, &r), DCTK_OK);
    }
    char prefix[128], path[160];
    snprintf(prefix, sizeof prefix, "%s/analyze", dir);
    dctk_analyze_opts o = {.var = "t2m", .threshold = 1e-3, .best = {3, -1, -1}, .has_best = true};
    assert_int_equal(dctk_report_analyze(&t, &o, prefix), DCTK_OK);
    snprintf(path, sizeof path, "%s.png", prefix);
    assert_file_starts(path, "\x89PNG");
    snprintf(path, sizeof path, "%s.svg", prefix);
    assert_file_starts(path, "<?xml");
    snprintf(path, sizeof path, "%s.html", prefix);
    assert_file_starts(path, "<!DOCTYPE html>");
    uint8_t *html;
    size_t n;
    assert_int_equal(dctk_read_file(path, &html, &n), DCTK_OK);
    html = realloc(html, n + 1);
    html[n] = 0;
    assert_null(strstr((char *)html, "</script><b>")); /* a codec string cannot end the script */
    assert_non_null(strstr((char *)html, "\"best\":3")); /* the winner's row, comp_idx 3 */
    free(html);
    dctk_cluster_curve c;
    double *xy;
    size_t np;
    assert_int_equal(dctk_report_points(&t, dctk_report_metric_column("L1"), &xy, NULL, &np), DCTK_OK);
    assert_int_equal(dctk_cluster_curve_compute(xy, np, 3, 9, &c), DCTK_OK);
    assert_true(c.best_k >= 3 && c.best_k <= 9);
    /* k suited to the number of points: 24 points are not split into 9 clusters */
    assert_int_equal(dctk_cluster_k_max(3), 1);
    assert_int_equal(dctk_cluster_k_max(4), 2);
    assert_int_equal(dctk_cluster_k_max(24), 3);
    assert_int_equal(dctk_cluster_k_max(60), 5);
    assert_int_equal(dctk_cluster_k_max(100000), 9);
    snprintf(prefix, sizeof prefix, "%s/curve", dir);
    assert_int_equal(dctk_plot_cluster_curve(&c, "t2m, relative L1 error", prefix), DCTK_OK);
    free(xy);
    dctk_result_table_free(&t);
}

static void error_panel_written(void **state) {
    (void)state;
    enum { NLAT = 30, NLON = 64 };
    static double f[NLAT * NLON], d[NLAT * NLON], sh[NLAT * NLON], shd[NLAT * NLON], lat[NLAT], lon[NLON];
    for (int i = 0; i < NLAT; i++) lat[i] = -87 + 6 * i;
    for (int j = 0; j < NLON; j++) lon[j] = j * 5.625;
    for (int i = 0; i < NLAT; i++)
        for (int j = 0; j < NLON; j++) {
            int k = i * NLON + j;
            f[k] = 280 + 20 * cos(lat[i] * M_PI / 180) + sin(lon[j] * M_PI / 90);
            d[k] = f[k] + (j == 0 ? 0.5 : 0.01); /* a seam artefact */
        }
    for (int i = 0; i < NLAT; i++)
        for (int j = 0; j < NLON; j++) sh[i * NLON + j] = f[i * NLON + (j + NLON / 2) % NLON];
    memcpy(shd, sh, sizeof sh);
    f[5] = NAN, d[5] = NAN;
    /* a name longer than two lines of the title: wrapped, then shortened with "..." */
    char name[1200] = "";
    for (int i = 0; i < 12; i++)
        strcat(name, i ? " + blosc(blocksize=0, clevel=9, cname=zstd, shuffle=bitshuffle, typesize=4)" : "shuffle(x=1)");
    strcat(name, " | bitround(keepbits=10) | -");
    dctk_error_panel_in in = {.var = "t2m", .units = "K", .pipeline = name, .note = "slice 0 of 1", .nlat = NLAT,
                              .nlon = NLON, .orig = f, .dec = d, .shifted = sh, .shifted_dec = shd, .lat = lat,
                              .lon = lon, .lat_name = "lat", .lon_name = "lon"};
    char prefix[128], path[160];
    snprintf(prefix, sizeof prefix, "%s/t2m_compression_errors", dir);
    assert_int_equal(dctk_plot_compression_errors(&in, prefix), DCTK_OK);
    snprintf(path, sizeof path, "%s.pdf", prefix);
    assert_file_starts(path, "%PDF");
    snprintf(path, sizeof path, "%s.png", prefix);
    assert_file_starts(path, "\x89PNG");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(cairo_opened_on_first_figure),
        cmocka_unit_test(parquet_round_trip),
        cmocka_unit_test(parquet_empty_and_file),
        cmocka_unit_test(csv_fallback),
        cmocka_unit_test(parquet_damage_refused),
        cmocka_unit_test(not_parquet),
        cmocka_unit_test(kmeans_separated),
        cmocka_unit_test(kmeans_deterministic_and_edges),
        cmocka_unit_test(silhouette_by_hand),
        cmocka_unit_test(standardize_constant_column),
        cmocka_unit_test(pareto_front),
        cmocka_unit_test(metric_names),
        cmocka_unit_test(error_columns_and_values),
        cmocka_unit_test(figures_written),
        cmocka_unit_test(error_panel_written),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
