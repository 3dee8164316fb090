/* Fuzz target: the dataset openers (recognition by content, netCDF, GRIB,
 * Zarr v2 and v3 inputs, CF decoding). Byte 0 says how the rest becomes a
 * dataset on disk (in a private temporary folder):
 *   0  a regular file (netCDF, GRIB, or anything else);
 *   1  a Zarr v3 array folder: zarr.json, then after the first NUL byte the
 *      chunk (or shard) c/0/0;
 *   2  a Zarr v2 array folder: .zarray, then after the first NUL byte chunk 0.0.
 * It is opened and a corner of every variable (at most MAX_READ_ELEMS
 * values) is read. Failures must be clean errors with a detail. */
#include <ftw.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dctk/dataset.h"
#include "fuzz.h"

enum { MAX_READ_ELEMS = 1 << 16 };

static char root[64];

static int rm_one(const char *p, const struct stat *st, int flag, struct FTW *f) {
    (void)st, (void)flag, (void)f;
    return remove(p);
}

static void cleanup(void) { nftw(root, rm_one, 8, FTW_DEPTH | FTW_PHYS); }

static void setup(void) {
    const char *base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
    snprintf(root, sizeof root, "%s/dctk_fuzz_XXXXXX", base);
    if (!mkdtemp(root)) fuzz_die("mkdtemp %s", root);
    atexit(cleanup);
    char p[128];
    static const char *const dirs[] = {"v3", "v3/c", "v3/c/0", "v2"};
    for (int i = 0; i < 4; i++) {
        snprintf(p, sizeof p, "%s/%s", root, dirs[i]);
        if (mkdir(p, 0700) != 0) fuzz_die("mkdir %s", p);
    }
}

static void put(const char *name, const uint8_t *p, size_t n) {
    char path[128];
    snprintf(path, sizeof path, "%s/%s", root, name);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(p, 1, n, f) != n || fclose(f) != 0) fuzz_die("cannot write %s", path);
}

static void read_corner(dctk_dataset *ds, size_t i) {
    const dctk_var *v = dctk_dataset_var(ds, i);
    size_t start[DCTK_MAX_DIMS] = {0}, count[DCTK_MAX_DIMS], n = 1;
    for (int d = v->ndim - 1; d >= 0; d--) {
        size_t room = MAX_READ_ELEMS / n;
        count[d] = v->shape[d] < room ? v->shape[d] : room;
        n *= count[d] ? count[d] : 1;
    }
    void *buf = malloc(n * dctk_dtype_size(v->dtype));
    if (!buf) return;
    dctk_clear_detail();
    dctk_status st = dctk_dataset_read(ds, i, start, count, buf);
    if (st != DCTK_OK) fuzz_expect_error(v->name, st);
    free(buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (!root[0]) setup();
    if (size < 1) return 0;
    int mode = data[0] % 3;
    const uint8_t *p = data + 1;
    size_t n = size - 1;
    const uint8_t *nul = memchr(p, 0, n);
    size_t head = nul ? (size_t)(nul - p) : n;
    const uint8_t *tail = nul ? nul + 1 : p + n;
    size_t tail_n = (size_t)(p + n - tail);
    char path[128];
    if (mode == 0) {
        put("input", p, n);
        snprintf(path, sizeof path, "%s/input", root);
    } else if (mode == 1) {
        put("v3/zarr.json", p, head);
        put("v3/c/0/0", tail, tail_n);
        snprintf(path, sizeof path, "%s/v3", root);
    } else {
        put("v2/.zarray", p, head);
        put("v2/0.0", tail, tail_n);
        snprintf(path, sizeof path, "%s/v2", root);
    }
    dctk_dataset *ds = NULL;
    dctk_clear_detail();
    dctk_status st = dctk_dataset_open(path, &ds);
    if (st != DCTK_OK) {
        fuzz_expect_error("open", st);
        return 0;
    }
    for (size_t i = 0; i < dctk_dataset_nvars(ds); i++) read_corner(ds, i);
    dctk_dataset_close(ds);
    return 0;
}
