/* Writing a field as a library call (src/write), on the real file
 * rectilinear_grid_3D.nc: a lossless write reads back exact; a write whose
 * verification fails, by the default gates or by a plugged-in predicate,
 * returns DCTK_ERR_BOUND with the metrics measured, and leaves the earlier
 * copy as it was; merge rewrites a lossy coordinate losslessly; without the
 * sweep's metric config the verification measures the norms alone. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dctk/dataset.h"
#include "dctk/util.h"
#include "dctk/write.h"
#include "dctk/zarr.h"

static const char *LOSSLESS = "[{\"name\":\"bytes\",\"configuration\":{\"endian\":\"little\"}},"
                              "{\"name\":\"zstd\",\"configuration\":{\"level\":3,\"checksum\":false}}]";
static const char *LOSSY = "[{\"name\":\"numcodecs.bitround\",\"configuration\":{\"keepbits\":1}},"
                           "{\"name\":\"bytes\",\"configuration\":{\"endian\":\"little\"}}]";

typedef struct {
    char dir[64], store[128];
    dctk_dataset *ds;
    size_t v;
} fixture;

static int setup(void **state) {
    fixture *f = calloc(1, sizeof *f);
    snprintf(f->dir, sizeof f->dir, "/tmp/dctk_write_test_XXXXXX");
    if (!mkdtemp(f->dir)) return -1;
    snprintf(f->store, sizeof f->store, "%s/out.zarr", f->dir);
    const char *ncarg = getenv("DCTK_NCARG");
    char path[512];
    snprintf(path, sizeof path, "%s/nug/rectilinear_grid_3D.nc", ncarg ? ncarg : "/usr/share/ncarg/data");
    if (dctk_dataset_open(path, &f->ds) != DCTK_OK || dctk_dataset_find(f->ds, "lat", &f->v) != DCTK_OK) return -1;
    *state = f;
    return 0;
}

static int teardown(void **state) {
    fixture *f = *state;
    char cmd[256];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", f->dir);
    int rc = system(cmd);
    dctk_dataset_close(f->ds);
    free(f);
    return rc;
}

static dctk_status write_with(fixture *f, const char *codecs, double bound, dctk_write_accept_fn accept,
                              dctk_write_report *r) {
    json_t *c = json_loads(codecs, 0, NULL);
    dctk_write_opts o = {.store_path = f->store, .codecs = c, .inner_chunk_bytes = 1 << 20, .shard_bytes = 1 << 20,
                         .threads = 1, .verify = true, .bound_l1 = bound, .accept = accept};
    dctk_status st = dctk_write_field(f->ds, f->v, &o, r);
    json_decref(c);
    return st;
}

/* The stored latitudes and the bytes of the array's metadata. */
static void stored(fixture *f, double *lat, size_t n, char **meta) {
    dctk_store *s;
    assert_int_equal(dctk_store_dir_open(f->store, false, &s), DCTK_OK);
    dctk_zarr_array *a;
    assert_int_equal(dctk_zarr_open(s, "lat", &a), DCTK_OK);
    size_t start[1] = {0}, count[1] = {n};
    assert_int_equal(dctk_zarr_read(a, start, count, lat), DCTK_OK);
    dctk_zarr_close(a);
    dctk_buf b = DCTK_BUF_INIT;
    assert_int_equal(dctk_store_get(s, "lat/zarr.json", &b), DCTK_OK);
    *meta = strndup((char *)b.data, b.size);
    dctk_buf_free(&b);
    dctk_store_close(s);
}

static dctk_status reject_all(const dctk_var *var, const dctk_write_opts *o, const dctk_write_report *r) {
    (void)o;
    return DCTK_FAIL(DCTK_ERR_BOUND, "'%s': a plugged-in gate refused L1 %g", var->name, r->l1_rel);
}

static void failed_verification_keeps_earlier_copy(void **state) {
    fixture *f = *state;
    const dctk_var *var = dctk_dataset_var(f->ds, f->v);
    size_t n = var->shape[0];
    double want[256], got[256];
    assert_true(n <= 256);
    size_t start[1] = {0};
    assert_int_equal(dctk_dataset_read(f->ds, f->v, start, var->shape, want), DCTK_OK);

    dctk_write_report r;
    assert_int_equal(write_with(f, LOSSLESS, NAN, NULL, &r), DCTK_OK);
    assert_true(r.verified && r.committed && r.lossless && r.max_abs_err == 0);
    char *meta0;
    stored(f, got, n, &meta0);
    assert_memory_equal(got, want, n * sizeof *got);

    /* bitround 1 misses a bound of 1e-9: measured, refused, nothing replaced */
    assert_int_equal(write_with(f, LOSSY, 1e-9, NULL, &r), DCTK_ERR_BOUND);
    assert_true(r.verified && !r.committed && r.l1_rel > 1e-9);
    assert_non_null(strstr(dctk_detail(), "any earlier copy is kept"));
    char *meta1;
    stored(f, got, n, &meta1);
    assert_memory_equal(got, want, n * sizeof *got);
    assert_string_equal(meta1, meta0);

    /* a gate plugged in by the caller decides on the same metrics */
    assert_int_equal(write_with(f, LOSSLESS, NAN, reject_all, &r), DCTK_ERR_BOUND);
    assert_non_null(strstr(dctk_detail(), "plugged-in gate"));
    assert_true(r.verified && !r.committed);
    free(meta1);
    stored(f, got, n, &meta1);
    assert_string_equal(meta1, meta0);
    free(meta0);
    free(meta1);
}

static void merge_rewrites_lossy_coordinate(void **state) {
    fixture *f = *state;
    const dctk_var *var = dctk_dataset_var(f->ds, f->v);
    size_t n = var->shape[0];
    double want[256], got[256];
    size_t start[1] = {0};
    assert_int_equal(dctk_dataset_read(f->ds, f->v, start, var->shape, want), DCTK_OK);
    dctk_write_report r;
    assert_int_equal(write_with(f, LOSSY, NAN, NULL, &r), DCTK_OK); /* no bound: kept */
    char *meta;
    stored(f, got, n, &meta);
    free(meta);
    assert_true(memcmp(got, want, n * sizeof *got) != 0);
    /* the data fields are not in the store: merge names them, after fixing lat */
    assert_int_equal(dctk_merge_fields(f->ds, f->store, 1), DCTK_ERR_NOT_FOUND);
    assert_non_null(strstr(dctk_detail(), "rhumidity"));
    stored(f, got, n, &meta);
    free(meta);
    assert_memory_equal(got, want, n * sizeof *got);
}

/* The norms do not depend on the metric config; the selection metrics are
 * measured only with one (they are what the sweep's gates judge). */
static void selection_metrics_only_with_config(void **state) {
    fixture *f = *state;
    dctk_write_report plain, full;
    assert_int_equal(write_with(f, LOSSY, NAN, NULL, &plain), DCTK_OK);
    json_t *c = json_loads(LOSSY, 0, NULL);
    dctk_metric_cfg cfg = {.shift = 0, .range = 180, .extremes_cut = INFINITY, .phys_min = NAN, .phys_max = NAN};
    dctk_write_opts o = {.store_path = f->store, .codecs = c, .inner_chunk_bytes = 1 << 20, .shard_bytes = 1 << 20,
                         .threads = 1, .verify = true, .bound_l1 = NAN, .metrics = &cfg};
    assert_int_equal(dctk_write_field(f->ds, f->v, &o, &full), DCTK_OK);
    json_decref(c);
    assert_true(plain.l1_rel > 0);
    assert_true(plain.l1_rel == full.l1_rel && plain.l2_rel == full.l2_rel && plain.linf_rel == full.linf_rel);
    assert_true(plain.metrics.l1_rel == plain.l1_rel);
    assert_true(isnan(plain.metrics.gradient_rel) && isnan(plain.metrics.pearson));
    assert_true(isfinite(full.metrics.gradient_rel) && full.metrics.gradient_rel > 0);
    assert_true(full.metrics.pearson > 0.9 && full.metrics.pearson <= 1);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(failed_verification_keeps_earlier_copy, setup, teardown),
        cmocka_unit_test_setup_teardown(merge_rewrites_lossy_coordinate, setup, teardown),
        cmocka_unit_test_setup_teardown(selection_metrics_only_with_config, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
