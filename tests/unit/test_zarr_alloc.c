/* Allocation failures reach the writer, as test_sweep_alloc does the sweep:
 * a sharded float32 array of a real field is written through zstd into a
 * memory store, on one thread and on two (the inner chunks of its one
 * shard then split among them), once with every allocation of the library
 * counted, then with allocation 1, 2, ... failing in turn. Each write must
 * end in DCTK_ERR_NOMEM with a detail, or in success with the array read
 * back bit for bit; every block taken from the allocator is given back. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "codec_cases.h"
#include "dctk/alloc.h"
#include "failing_alloc.h"
#include "dctk/zarr.h"

enum { NY = 40, NX = 64 };

/* Write x as array "v" of a new memory store and read it back into back. */
static dctk_status write_field(const float *x, int threads, float *back) {
    static const char *codecs = "[{\"name\":\"bytes\",\"configuration\":{\"endian\":\"little\"}},"
                                "{\"name\":\"zstd\",\"configuration\":{\"level\":3,\"checksum\":false}}]";
    size_t shape[2] = {NY, NX}, chunk[2] = {10, 16}, shard[2] = {NY, NX}, zero[2] = {0, 0};
    json_t *c = json_loads(codecs, 0, NULL);
    dctk_store *s = NULL;
    dctk_zarr_array *a = NULL;
    dctk_zarr_meta m;
    dctk_status st = dctk_zarr_meta_init(&m, DCTK_FLOAT32, 2, shape, chunk, shard, NAN, c, NULL, NULL);
    json_decref(c);
    if (st != DCTK_OK) return st;
    st = dctk_store_mem_new(&s);
    if (st == DCTK_OK) st = dctk_zarr_create(s, "v", &m, &a);
    if (st == DCTK_OK) st = dctk_zarr_write_buffer(a, x, threads);
    dctk_zarr_close(a);
    a = NULL;
    if (st == DCTK_OK) st = dctk_zarr_open(s, "v", &a);
    if (st == DCTK_OK) st = dctk_zarr_read(a, zero, shape, back);
    dctk_zarr_close(a);
    dctk_store_close(s);
    dctk_zarr_meta_clear(&m);
    return st;
}

static void every_allocation_of_a_write_fails_cleanly(void **state) {
    (void)state;
    size_t n = 0;
    double *field = case_real_field(&n);
    assert_non_null(field);
    assert_true(n >= NY * NX);
    static float x[NY * NX], back[NY * NX];
    for (size_t i = 0; i < NY * NX; i++) x[i] = (float)field[i];
    free(field);
    failing_alloc_install();
    for (int threads = 1; threads <= 2; threads++) {
        failing_alloc_reset(0);
        memset(back, 0, sizeof back);
        if (write_field(x, threads, back) != DCTK_OK) fail_msg("the write without a failure: %s", dctk_detail());
        assert_int_equal(al.live, 0);
        assert_memory_equal(back, x, sizeof x);
        long total = al.count, nomem = 0;
        assert_true(total > 10);
        for (long f = 1; f <= total; f++) {
            failing_alloc_reset(f);
            dctk_clear_detail();
            memset(back, 0, sizeof back);
            dctk_status st = write_field(x, threads, back);
            if (al.live != 0) fail_msg("%d threads, allocation %ld of %ld failed: %ld blocks leaked", threads, f, total,
                                       (long)al.live);
            if (st == DCTK_OK) {
                if (memcmp(back, x, sizeof x))
                    fail_msg("%d threads, allocation %ld of %ld failed: written, read back different", threads, f,
                             total);
                continue;
            }
            if (st != DCTK_ERR_NOMEM || !*dctk_detail())
                fail_msg("%d threads, allocation %ld of %ld failed: status %d (%s)", threads, f, total, st,
                         dctk_detail());
            nomem++;
        }
        assert_true(nomem > 0);
        printf("write on %d thread(s): %ld allocations, each failed once (%ld ended out of memory)\n", threads, total,
               nomem);
    }
    dctk_set_allocator(NULL);
}

int main(void) {
    const struct CMUnitTest tests[] = {cmocka_unit_test(every_allocation_of_a_write_fails_cleanly)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
