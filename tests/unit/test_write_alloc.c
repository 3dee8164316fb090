/* Allocation failures reach the field writer (src/write), beyond the Zarr
 * writer test_zarr_alloc covers: dctk_write_field streams the temperature t
 * of rectilinear_grid_3D.nc through bitround and zstd into a directory
 * store (staging name, flush, read back, verification against a bound,
 * commit), once with every allocation of the library counted, then with
 * each allocation failing in turn, each write into a store of its own. A
 * write must end in DCTK_ERR_NOMEM with a detail, the store then holding no
 * array t or the whole of it (a failure after the commit), or succeed with
 * the report and the stored values of the write without a failure; every
 * block taken from the allocator is given back (failing_alloc.h also makes a
 * block freed by the wrong allocator an invalid free). One thread, so the
 * allocations come in the same order every time. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "dctk/alloc.h"
#include "dctk/dataset.h"
#include "dctk/util.h"
#include "dctk/write.h"
#include "dctk/zarr.h"
#include "failing_alloc.h"

static const char *CODECS = "[{\"name\":\"numcodecs.bitround\",\"configuration\":{\"keepbits\":10}},"
                            "{\"name\":\"bytes\",\"configuration\":{\"endian\":\"little\"}},"
                            "{\"name\":\"zstd\",\"configuration\":{\"level\":3,\"checksum\":false}}]";

static dctk_status write_t(dctk_dataset *ds, size_t v, const json_t *codecs, const char *store, dctk_write_report *r) {
    dctk_write_opts o = {.store_path = store, .codecs = codecs, .inner_chunk_bytes = 64 << 10, .shard_bytes = 256 << 10,
                         .threads = 1, .verify = true, .bound_l1 = 1e-2, .information = NAN};
    memset(r, 0, sizeof *r);
    return dctk_write_field(ds, v, &o, r);
}

/* The stored t, n floats, into out; DCTK_ERR_NOT_FOUND when the store has no t. */
static dctk_status stored(const char *store, float *out, size_t ndim, const size_t *shape) {
    dctk_store *s;
    DCTK_TRY(dctk_store_dir_open(store, false, &s));
    dctk_zarr_array *a;
    dctk_status st = dctk_zarr_open(s, "t", &a);
    size_t start[DCTK_MAX_DIMS] = {0};
    (void)ndim;
    if (st == DCTK_OK) st = dctk_zarr_read(a, start, shape, out);
    dctk_zarr_close(a);
    dctk_store_close(s);
    return st;
}

static void every_allocation_of_a_field_write_fails_cleanly(void **state) {
    (void)state;
    char path[512], dir[128], store[200];
    const char *root = getenv("DCTK_NCARG");
    snprintf(path, sizeof path, "%s/nug/rectilinear_grid_3D.nc", root ? root : "/usr/share/ncarg/data");
    snprintf(dir, sizeof dir, "/tmp/dctk-write-alloc-XXXXXX");
    assert_non_null(mkdtemp(dir));
    json_t *codecs = json_loads(CODECS, 0, NULL);
    assert_non_null(codecs);
    /* the dataset is opened through the counting allocator too: its blocks are freed by it */
    failing_alloc_install();
    failing_alloc_reset(0);
    dctk_dataset *ds;
    size_t v = 0;
    if (dctk_dataset_open(path, &ds) != DCTK_OK || dctk_dataset_find(ds, "t", &v) != DCTK_OK)
        fail_msg("%s: %s", path, dctk_detail());
    const dctk_var *var = dctk_dataset_var(ds, v);
    size_t n = dctk_shape_nelems(var->ndim, var->shape);
    float *want = malloc(n * sizeof *want), *got = malloc(n * sizeof *got), *input = malloc(n * sizeof *input);
    assert_true(want && got && input);
    size_t start[DCTK_MAX_DIMS] = {0};
    assert_int_equal(dctk_dataset_read(ds, v, start, var->shape, input), DCTK_OK);

    snprintf(store, sizeof store, "%s/ref.zarr", dir);
    dctk_write_report ref, r;
    failing_alloc_reset(0);
    if (write_t(ds, v, codecs, store, &ref) != DCTK_OK) fail_msg("the write without a failure: %s", dctk_detail());
    long total = al.count;
    if (al.live != 0) fail_msg("the write without a failure leaked %ld blocks", (long)al.live);
    assert_true(ref.verified && ref.committed && !ref.lossless);
    assert_true(ref.l1_rel > 0 && ref.l1_rel < 1e-2 && ref.ratio > 1);
    assert_int_equal(stored(store, want, (size_t)var->ndim, var->shape), DCTK_OK);
    assert_memory_not_equal(want, input, n * sizeof *want); /* bitround changed the values */
    assert_true(total > 20);

    long nomem = 0, succeeded = 0;
    for (long f = 1; f <= total; f++) {
        snprintf(store, sizeof store, "%s/w%ld.zarr", dir, f);
        failing_alloc_reset(f);
        dctk_clear_detail();
        dctk_status st = write_t(ds, v, codecs, store, &r);
        if (!al.failed) fail_msg("allocation %ld of %ld was never reached", f, total);
        if (al.live != 0) fail_msg("allocation %ld of %ld failed: %ld blocks leaked", f, total, (long)al.live);
        char detail[1024];
        snprintf(detail, sizeof detail, "%s", dctk_detail());
        failing_alloc_reset(0);
        dctk_status held = stored(store, got, (size_t)var->ndim, var->shape);
        if (st != DCTK_OK) {
            if (st != DCTK_ERR_NOMEM || !*detail)
                fail_msg("allocation %ld of %ld failed: status %d (%s)", f, total, st, detail);
            if (held == DCTK_OK && memcmp(got, want, n * sizeof *got))
                fail_msg("allocation %ld of %ld failed: the store holds another t", f, total);
            nomem++;
        } else {
            if (held != DCTK_OK || memcmp(got, want, n * sizeof *got))
                fail_msg("allocation %ld of %ld failed, the write succeeded with other values", f, total);
            if (r.ratio != ref.ratio || r.l1_rel != ref.l1_rel || r.bytes_out != ref.bytes_out || !r.committed)
                fail_msg("allocation %ld of %ld failed, the write succeeded with another report: ratio %g, L1 %g "
                         "(without the failure: %g, %g)", f, total, r.ratio, r.l1_rel, ref.ratio, ref.l1_rel);
            succeeded++;
        }
    }
    dctk_dataset_close(ds);
    dctk_set_allocator(NULL);
    json_decref(codecs);
    assert_true(nomem > 0);
    printf("a field write: %ld allocations, each failed once (%ld ended out of memory, %ld succeeded alike)\n", total,
           nomem, succeeded);
    free(want), free(got), free(input);
    char cmd[256];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

int main(void) {
    const struct CMUnitTest tests[] = {cmocka_unit_test(every_allocation_of_a_field_write_fails_cleanly)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
