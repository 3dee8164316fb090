/* Fuzz target: the shard index reader. Byte 0 picks one of a few small
 * sharded float32 arrays (FUZZ_SHARD_ARRAYS: index at the end or the start,
 * with or without a compressor); the rest is its only shard, "c/0/0", in a
 * memory store. The whole array and a corner are read; wrong offsets,
 * lengths, sizes or a CRC mismatch must come back as a clean error. */
#include <string.h>

#include "dctk/zarr.h"
#include "fuzz.h"
#include "shard_table.h"

static char *docs[FUZZ_NSHARD_ARRAYS];

static void read_box(dctk_zarr_array *a, size_t r0, size_t c0, size_t nr, size_t nc) {
    static float out[FUZZ_SHARD_ROWS * FUZZ_SHARD_COLS];
    size_t start[2] = {r0, c0}, count[2] = {nr, nc};
    dctk_clear_detail();
    dctk_status st = dctk_zarr_read(a, start, count, out);
    if (st != DCTK_OK) fuzz_expect_error("shard read", st);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1) return 0;
    size_t k = data[0] % FUZZ_NSHARD_ARRAYS;
    dctk_store *s = NULL;
    if (dctk_store_mem_new(&s) != DCTK_OK) fuzz_die("no memory store");
    if (!docs[k] && !(docs[k] = fuzz_shard_doc(k))) fuzz_die("shard table entry %zu: %s", k, dctk_detail());
    if (dctk_store_set(s, "zarr.json", docs[k], strlen(docs[k])) != DCTK_OK ||
        dctk_store_set(s, "c/0/0", data + 1, size - 1) != DCTK_OK)
        fuzz_die("memory store set");
    dctk_zarr_array *a = NULL;
    if (dctk_zarr_open(s, "", &a) != DCTK_OK) fuzz_die("shard table entry %zu does not open: %s", k, dctk_detail());
    read_box(a, 0, 0, FUZZ_SHARD_ROWS, FUZZ_SHARD_COLS);
    read_box(a, 1, 2, 3, 3);
    dctk_zarr_close(a);
    dctk_store_close(s);
    return 0;
}
