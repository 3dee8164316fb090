/* Fuzz target: array metadata. The input is stored as a v3 zarr.json (root
 * array) and as a v2 .zarray (array "v2") in a memory store; both are opened,
 * which parses the document and builds the codec pipeline. An array that
 * opens must describe itself in a zarr.json that parses again, and must read
 * a small corner region (no chunks stored: the fill value comes back); the
 * hierarchy walk visits both nodes. */
#include <string.h>

#include "dctk/zarr.h"
#include "fuzz.h"

enum { MAX_READ_ELEMS = 4096 };

static int count_node(const char *path, const json_t *meta, bool is_array, void *user) {
    (void)path, (void)meta, (void)is_array;
    ++*(int *)user;
    return 0;
}

/* The corner region of at most MAX_READ_ELEMS elements. */
static void read_corner(dctk_zarr_array *a) {
    const dctk_zarr_meta *m = dctk_zarr_get_meta(a);
    size_t start[DCTK_MAX_DIMS] = {0}, count[DCTK_MAX_DIMS], n = 1;
    for (int d = m->ndim - 1; d >= 0; d--) {
        size_t room = MAX_READ_ELEMS / n;
        count[d] = m->shape[d] < room ? m->shape[d] : room;
        n *= count[d] ? count[d] : 1;
    }
    void *buf = malloc(n * 8 + 8);
    if (!buf) return;
    dctk_clear_detail();
    dctk_status st = dctk_zarr_read(a, start, count, buf);
    if (st != DCTK_OK) fuzz_expect_error("read", st);
    free(buf);
}

static void open_one(dctk_store *s, const char *path, bool v3) {
    dctk_zarr_array *a = NULL;
    dctk_clear_detail();
    dctk_status st = dctk_zarr_open(s, path, &a);
    if (st != DCTK_OK) {
        fuzz_expect_error(path, st);
        return;
    }
    if (v3) { /* what we parsed, written back, parses again */
        json_t *j = dctk_zarr_meta_to_json(dctk_zarr_get_meta(a));
        dctk_zarr_meta m2;
        if (!j || dctk_zarr_meta_from_json(j, &m2) != DCTK_OK) fuzz_die("metadata does not parse again: %s", dctk_detail());
        dctk_zarr_meta_clear(&m2);
        json_decref(j);
    }
    read_corner(a);
    dctk_zarr_close(a);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    dctk_store *s = NULL;
    if (dctk_store_mem_new(&s) != DCTK_OK) fuzz_die("no memory store");
    if (dctk_store_set(s, "zarr.json", data, size) != DCTK_OK || dctk_store_set(s, "v2/.zarray", data, size) != DCTK_OK)
        fuzz_die("memory store set");
    open_one(s, "", true);
    open_one(s, "v2", false);
    int nodes = 0;
    dctk_clear_detail();
    dctk_status st = dctk_zarr_walk(s, count_node, &nodes);
    if (st != DCTK_OK) fuzz_expect_error("walk", st);
    dctk_store_close(s);
    return 0;
}
