/* zarr_inspect.h: block walks cover an array exactly once, block shapes stay
 * within their bound and aligned to the storage, the stored-bytes count
 * agrees with the writer, and summaries come out the same whatever the block
 * size (so bounded memory changes nothing but the number of reads). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <math.h>
#include <string.h>

#include "dctk/zarr.h"
#include "dctk/zarr_inspect.h"

static void walk_covers_once(void **state) {
    (void)state;
    size_t shape[2] = {5, 7}, block[2] = {2, 3}, start[2], count[2];
    int seen[5][7] = {{0}};
    int nblocks = 0;
    bool first = true;
    while (dctk_block_next(2, shape, block, &first, start, count)) {
        nblocks++;
        for (size_t i = 0; i < count[0]; i++)
            for (size_t j = 0; j < count[1]; j++) seen[start[0] + i][start[1] + j]++;
    }
    assert_int_equal(nblocks, 9);
    for (int i = 0; i < 5; i++)
        for (int j = 0; j < 7; j++) assert_int_equal(seen[i][j], 1);

    size_t empty[2] = {3, 0};
    first = true;
    assert_false(dctk_block_next(2, empty, block, &first, start, count));
    first = true; /* a scalar is one block */
    assert_true(dctk_block_next(0, NULL, NULL, &first, start, count));
    assert_false(dctk_block_next(0, NULL, NULL, &first, start, count));
}

static void block_shapes(void **state) {
    (void)state;
    size_t shape[3] = {10, 8, 8}, shard[3] = {4, 8, 8}, inner[3] = {2, 4, 8}, block[3];
    dctk_zarr_meta m;
    assert_int_equal(dctk_zarr_meta_init(&m, DCTK_FLOAT32, 3, shape, inner, shard, NAN, NULL, NULL, NULL), DCTK_OK);
    dctk_zarr_block_shape(&m, 1 << 20, block); /* the shard fits */
    assert_memory_equal(block, shard, sizeof block);
    dctk_zarr_block_shape(&m, 256, block); /* one inner chunk, 2*4*8*4 bytes */
    assert_memory_equal(block, inner, sizeof block);
    dctk_zarr_block_shape(&m, 40, block); /* cut from the leading dimension */
    assert_int_equal(block[0], 1);
    assert_int_equal(block[1], 1);
    assert_int_equal(block[2], 8);
    dctk_zarr_block_shape(&m, 1, block); /* never below one element */
    for (int d = 0; d < 3; d++) assert_int_equal(block[d], 1);
    dctk_zarr_meta_clear(&m);
    /* a chunk larger than the array counts only for its part inside */
    size_t small[1] = {5}, big[1] = {100};
    assert_int_equal(dctk_zarr_meta_init(&m, DCTK_FLOAT64, 1, small, big, NULL, 0, NULL, NULL, NULL), DCTK_OK);
    dctk_zarr_block_shape(&m, 40, block);
    assert_int_equal(block[0], 5);
    dctk_zarr_meta_clear(&m);
}

typedef struct {
    const float *x;
    const size_t *shape;
} source;

static dctk_status read_box(void *user, const size_t *start, const size_t *count, void *out) {
    const source *s = user;
    float *o = out;
    for (size_t i = 0; i < count[0]; i++)
        for (size_t j = 0; j < count[1]; j++)
            for (size_t k = 0; k < count[2]; k++)
                *o++ = s->x[((start[0] + i) * s->shape[1] + start[1] + j) * s->shape[2] + start[2] + k];
    return DCTK_OK;
}

#define N0 9
#define N1 10
#define N2 11

static void field(float *x) {
    for (size_t i = 0; i < N0 * N1 * N2; i++) x[i] = 250.0f + (float)(i % 97) * 0.37f - (float)(i % 13);
    for (size_t i = 0; i < 3 * N1 * N2; i++) x[i] = NAN; /* whole inner chunks of fill: not stored */
    x[500] = NAN;
    x[777] = INFINITY;
}

static void summaries_do_not_depend_on_blocks(void **state) {
    (void)state;
    static float x[N0 * N1 * N2];
    field(x);
    size_t shape[3] = {N0, N1, N2}, inner[3] = {3, 4, 5}, shard[3] = {6, 8, 10};
    dctk_store *s;
    assert_int_equal(dctk_store_mem_new(&s), DCTK_OK);
    json_t *codecs = json_loads("[{\"name\":\"bytes\",\"configuration\":{\"endian\":\"little\"}},"
                                "{\"name\":\"zstd\",\"configuration\":{\"level\":1,\"checksum\":false}}]", 0, NULL);
    dctk_zarr_meta m;
    assert_int_equal(dctk_zarr_meta_init(&m, DCTK_FLOAT32, 3, shape, inner, shard, NAN, codecs, NULL, NULL), DCTK_OK);
    dctk_zarr_array *a;
    assert_int_equal(dctk_zarr_create(s, "x", &m, &a), DCTK_OK);
    source src = {x, shape};
    dctk_zarr_write_opts wo = {.threads = 2};
    dctk_zarr_write_stats ws = {0};
    assert_int_equal(dctk_zarr_write(a, read_box, &src, &wo, &ws), DCTK_OK);

    uint64_t bytes, keys;
    assert_int_equal(dctk_zarr_stored_bytes(s, "x", &bytes, &keys), DCTK_OK);
    assert_int_equal(bytes, ws.bytes_out);
    assert_int_equal(keys, ws.shards_written);

    dctk_zarr_summary big, tiny;
    assert_int_equal(dctk_zarr_summarize(a, 1 << 20, 4, &big), DCTK_OK);
    assert_int_equal(dctk_zarr_summarize(a, 64, 4, &tiny), DCTK_OK);
    assert_int_equal(big.nelems, N0 * N1 * N2);
    assert_int_equal(big.n_nan, 3 * N1 * N2 + 1);
    assert_int_equal(big.n_inf, 1);
    assert_true(isinf(big.max) && big.min == tiny.min);
    double sum = 0, mn = INFINITY;
    size_t n = 0;
    for (size_t i = 0; i < N0 * N1 * N2; i++)
        if (isfinite(x[i])) sum += x[i], n++, mn = x[i] < mn ? x[i] : mn;
    assert_int_equal(big.n_finite, n);
    assert_float_equal(big.mean, sum / (double)n, 1e-9);
    assert_float_equal(big.min, mn, 0);
    assert_memory_equal(&big, &tiny, offsetof(dctk_zarr_summary, npreview));
    assert_int_equal(big.npreview, 4);
    assert_true(isnan(big.preview[0])); /* the first row is in the NaN leading slices */

    dctk_zarr_close(a);
    dctk_zarr_meta_clear(&m);
    json_decref(codecs);
    dctk_store_close(s);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(walk_covers_once),
        cmocka_unit_test(block_shapes),
        cmocka_unit_test(summaries_do_not_depend_on_blocks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
