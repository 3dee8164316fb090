/* Chunk and shard shapes follow the field's dimensions and respect targets. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "dctk/chunking.h"

static void time_lat_lon(void **state) {
    (void)state;
    size_t shape[3] = {1000, 180, 360}, c[3], s[3];
    dctk_chunk_shape_for(DCTK_FLOAT32, 3, shape, 16u << 20, c); /* one slice is 259200 B */
    assert_int_equal(c[0], 64);
    assert_int_equal(c[1], 180);
    assert_int_equal(c[2], 360);
    dctk_shard_shape_for(DCTK_FLOAT32, 3, shape, c, 512u << 20, s);
    assert_int_equal(s[0], 1024); /* 16 chunks of 64 would be 1024 >= 1000: the field needs 16 */
    assert_int_equal(s[1], 180);
    dctk_shard_shape_for(DCTK_FLOAT32, 3, shape, c, 100u << 20, s);
    assert_int_equal(s[0], 6 * 64);
}

static void huge_slice_splits_inner(void **state) {
    (void)state;
    size_t shape[3] = {10, 100000, 100000}, c[3];
    dctk_chunk_shape_for(DCTK_FLOAT64, 3, shape, 8u << 20, c);
    assert_int_equal(c[0], 1);
    assert_int_equal(c[2], 100000);
    assert_int_equal(c[1], (8u << 20) / 8 / 100000);
    size_t row[1] = {1u << 30};
    dctk_chunk_shape_for(DCTK_FLOAT32, 1, row, 1000, c);
    assert_int_equal(c[0], 250);
}

/* --no-spatial-split: a slice over the target stays whole; within it nothing changes. */
static void whole_slices(void **state) {
    (void)state;
    size_t shape[3] = {64, 33, 36}, c[3];
    dctk_chunk_shape_split(DCTK_FLOAT32, 3, shape, 2097, true, c); /* one slice is 4752 B */
    assert_int_equal(c[0], 1);
    assert_int_equal(c[1], 14);
    assert_int_equal(c[2], 36);
    dctk_chunk_shape_split(DCTK_FLOAT32, 3, shape, 2097, false, c);
    assert_int_equal(c[0], 1);
    assert_int_equal(c[1], 33);
    assert_int_equal(c[2], 36);
    dctk_chunk_shape_split(DCTK_FLOAT32, 3, shape, 3 * 4752, false, c); /* three slices fit: as before */
    assert_int_equal(c[0], 3);
    assert_int_equal(c[1], 33);
    size_t row[1] = {1000};
    dctk_chunk_shape_split(DCTK_FLOAT32, 1, row, 400, false, c); /* no spatial dim to keep whole */
    assert_int_equal(c[0], 100);
    assert_false(dctk_chunk_warn_whole("t", DCTK_FLOAT32, 3, (size_t[]){1, 33, 36}, false, 4752));
    assert_true(dctk_chunk_warn_whole("t", DCTK_FLOAT32, 3, (size_t[]){1, 33, 36}, false, 4751));
    assert_false(dctk_chunk_warn_whole("t", DCTK_FLOAT32, 3, (size_t[]){1, 33, 36}, true, 4751));
}

static void small_and_degenerate(void **state) {
    (void)state;
    size_t shape[2] = {3, 0}, c[2];
    dctk_chunk_shape_for(DCTK_INT16, 2, shape, 16u << 20, c);
    assert_int_equal(c[0], 3);
    assert_int_equal(c[1], 1);
    size_t big[2] = {5, 7};
    dctk_chunk_shape_for(DCTK_FLOAT32, 2, big, 1, c); /* below one element: still 1 */
    assert_int_equal(c[0], 1);
    assert_int_equal(c[1], 1);
}

static void pad_edges_replicates(void **state) {
    (void)state;
    /* a 2x3 corner of a 3x4 chunk */
    int16_t b[12] = {1, 2, 3, 0, 4, 5, 6, 0, 0, 0, 0, 0};
    size_t valid[2] = {2, 3}, full[2] = {3, 4};
    dctk_pad_edges(2, sizeof b[0], valid, full, b);
    int16_t want[12] = {1, 2, 3, 3, 4, 5, 6, 6, 4, 5, 6, 6};
    assert_memory_equal(b, want, sizeof b);
    double c[8] = {7, 0, 0, 0, 0, 0, 0, 0};
    size_t v3[3] = {1, 1, 1}, f3[3] = {2, 2, 2};
    dctk_pad_edges(3, sizeof c[0], v3, f3, c);
    for (int i = 0; i < 8; i++) assert_true(c[i] == 7);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(time_lat_lon),
        cmocka_unit_test(huge_slice_splits_inner),
        cmocka_unit_test(whole_slices),
        cmocka_unit_test(small_and_degenerate),
        cmocka_unit_test(pad_edges_replicates),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
