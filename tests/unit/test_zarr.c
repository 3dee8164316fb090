/* The Zarr engine: stores, metadata documents, shard layout byte for byte,
 * round trips through the parallel writer and the region reader, corruption
 * handling, error propagation, v2 arrays, consolidation, dataset input. */
#include <dirent.h>
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
#include "dctk/zarr.h"

static char *make_tmpdir(void) {
    char *t = strdup("/tmp/dctk_zarr_test_XXXXXX");
    assert_non_null(mkdtemp(t));
    return t;
}

static void rm_rf(const char *dir) {
    char cmd[512];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

static json_t *load_doc(dctk_store *s, const char *key) {
    dctk_buf b = DCTK_BUF_INIT;
    assert_int_equal(dctk_store_get(s, key, &b), DCTK_OK);
    json_t *j = json_loadb((char *)b.data, b.size, 0, NULL);
    assert_non_null(j);
    dctk_buf_free(&b);
    return j;
}

/* --- stores ------------------------------------------------------------ */

static int count_name(const char *name, void *user) {
    (void)name;
    (*(int *)user)++;
    return 0;
}

/* A value from many parts, some empty, more than one writev takes. */
static void check_set_parts(dctk_store *s) {
    static uint8_t bytes[200 * 199 / 2];
    dctk_store_part parts[200];
    size_t off = 0;
    for (size_t i = 0; i < 200; i++) {
        parts[i] = (dctk_store_part){bytes + off, i % 7 == 3 ? 0 : i};
        for (size_t j = 0; j < parts[i].n; j++) bytes[off + j] = (uint8_t)(i * 31 + j);
        off += parts[i].n;
    }
    dctk_buf b = DCTK_BUF_INIT;
    assert_int_equal(dctk_store_set_parts(s, "p/v", parts, 200), DCTK_OK);
    assert_int_equal(dctk_store_get(s, "p/v", &b), DCTK_OK);
    assert_int_equal(b.size, off);
    assert_memory_equal(b.data, bytes, off);
    assert_int_equal(dctk_store_set_parts(s, "p/v", parts, 0), DCTK_OK);
    assert_int_equal(dctk_store_get(s, "p/v", &b), DCTK_OK);
    assert_int_equal(b.size, 0);
    dctk_buf_free(&b);
}

static void check_store(dctk_store *s) {
    dctk_buf b = DCTK_BUF_INIT;
    check_set_parts(s);
    assert_int_equal(dctk_store_get(s, "a/b/k", &b), DCTK_ERR_NOT_FOUND);
    assert_int_equal(dctk_store_set(s, "a/b/k", "hello world", 11), DCTK_OK);
    assert_int_equal(dctk_store_set(s, "a/c", "x", 1), DCTK_OK);
    assert_int_equal(dctk_store_get_range(s, "a/b/k", 6, 5, &b), DCTK_OK);
    assert_int_equal(b.size, 5);
    assert_memory_equal(b.data, "world", 5);
    assert_int_equal(dctk_store_get_range(s, "a/b/k", 8, 5, &b), DCTK_ERR_FORMAT);
    uint64_t n;
    assert_int_equal(dctk_store_size(s, "a/b/k", &n), DCTK_OK);
    assert_int_equal(n, 11);
    bool ex, created;
    assert_int_equal(dctk_store_exists(s, "a/c", &ex), DCTK_OK);
    assert_true(ex);
    int names = 0;
    assert_int_equal(dctk_store_list(s, "a", count_name, &names), DCTK_OK);
    assert_int_equal(names, 2); /* "b" and "c" */
    assert_int_equal(s->vt->create(s, "a/new", "1", 1, &created), DCTK_OK);
    assert_true(created);
    assert_int_equal(s->vt->create(s, "a/new", "2", 1, &created), DCTK_OK);
    assert_false(created);
    assert_int_equal(dctk_store_get(s, "a/new", &b), DCTK_OK);
    assert_memory_equal(b.data, "1", 1);
    assert_int_equal(dctk_store_set(s, "/abs", "x", 1), DCTK_ERR_ARG);
    assert_int_equal(dctk_store_delete_tree(s, "a"), DCTK_OK);
    assert_int_equal(dctk_store_exists(s, "a/b/k", &ex), DCTK_OK);
    assert_false(ex);
    assert_int_equal(dctk_store_delete(s, "a/missing"), DCTK_OK);
    dctk_buf_free(&b);
}

static void stores_behave_alike(void **state) {
    (void)state;
    dctk_store *s;
    assert_int_equal(dctk_store_mem_new(&s), DCTK_OK);
    check_store(s);
    dctk_store_close(s);
    char *dir = make_tmpdir();
    assert_int_equal(dctk_store_dir_open(dir, false, &s), DCTK_OK);
    check_store(s);
    /* a writer killed before renaming its temporary file left one behind */
    assert_int_equal(dctk_store_set(s, "p/c/0", "x", 1), DCTK_OK);
    char left[4096];
    snprintf(left, sizeof left, "%s/p/c/1.tmp.123.0", dir);
    FILE *f = fopen(left, "w");
    assert_non_null(f);
    fclose(f);
    assert_int_equal(dctk_store_delete_tree(s, "p"), DCTK_OK);
    snprintf(left, sizeof left, "%s/p", dir);
    assert_int_equal(access(left, F_OK), -1);
    dctk_store_close(s);
    rm_rf(dir);
    free(dir);
}

/* --- metadata ------------------------------------------------------------ */

static dctk_zarr_array *make_array(dctk_store *s, const char *path, dctk_dtype t, int nd, const size_t *shape,
                                   const size_t *chunk, const size_t *shard, double fill, const char *codecs) {
    json_t *c = codecs ? json_loads(codecs, 0, NULL) : NULL;
    const char *dims[4] = {"time", "lat", "lon", "lev"};
    dctk_zarr_meta m;
    assert_int_equal(dctk_zarr_meta_init(&m, t, nd, shape, chunk, shard, fill, c, NULL, dims), DCTK_OK);
    dctk_zarr_array *a;
    assert_int_equal(dctk_zarr_create(s, path, &m, &a), DCTK_OK);
    dctk_zarr_meta_clear(&m);
    json_decref(c);
    return a;
}

static void metadata_document(void **state) {
    (void)state;
    dctk_store *s;
    assert_int_equal(dctk_store_mem_new(&s), DCTK_OK);
    size_t shape[2] = {7, 9}, chunk[2] = {2, 3}, shard[2] = {4, 9};
    dctk_zarr_close(make_array(s, "t2m", DCTK_FLOAT32, 2, shape, chunk, shard, NAN, NULL));
    dctk_buf b = DCTK_BUF_INIT;
    assert_int_equal(dctk_store_get(s, "t2m/zarr.json", &b), DCTK_OK);
    assert_int_equal(dctk_buf_append(&b, "", 1), DCTK_OK);
    assert_non_null(strstr((char *)b.data, "\"fill_value\": \"NaN\""));
    json_t *j = load_doc(s, "t2m/zarr.json");
    json_t *want = json_loads(
        "{\"zarr_format\":3,\"node_type\":\"array\",\"shape\":[7,9],\"data_type\":\"float32\","
        "\"chunk_grid\":{\"name\":\"regular\",\"configuration\":{\"chunk_shape\":[4,9]}},"
        "\"chunk_key_encoding\":{\"name\":\"default\",\"configuration\":{\"separator\":\"/\"}},"
        "\"fill_value\":\"NaN\",\"codecs\":[{\"name\":\"sharding_indexed\",\"configuration\":{"
        "\"chunk_shape\":[2,3],\"codecs\":[{\"name\":\"bytes\",\"configuration\":{\"endian\":\"little\"}}],"
        "\"index_codecs\":[{\"name\":\"bytes\",\"configuration\":{\"endian\":\"little\"}},{\"name\":\"crc32c\"}],"
        "\"index_location\":\"end\"}}],\"attributes\":{},\"dimension_names\":[\"time\",\"lat\"],"
        "\"storage_transformers\":[]}", 0, NULL);
    assert_true(json_equal(j, want));
    json_decref(j);
    json_decref(want);
    /* the root group was made on the way */
    j = load_doc(s, "zarr.json");
    assert_string_equal(json_string_value(json_object_get(j, "node_type")), "group");
    json_decref(j);

    /* 1-byte types: "bytes" without configuration; infinite fills as strings */
    dctk_zarr_close(make_array(s, "mask", DCTK_UINT8, 2, shape, chunk, NULL, 255, NULL));
    j = load_doc(s, "mask/zarr.json");
    json_t *ser = json_array_get(json_object_get(j, "codecs"), 0);
    assert_null(json_object_get(ser, "configuration"));
    assert_int_equal(json_integer_value(json_object_get(j, "fill_value")), 255);
    json_decref(j);
    dctk_zarr_close(make_array(s, "inf", DCTK_FLOAT64, 2, shape, chunk, NULL, -INFINITY, NULL));
    j = load_doc(s, "inf/zarr.json");
    assert_string_equal(json_string_value(json_object_get(j, "fill_value")), "-Infinity");
    json_decref(j);

    /* a shard that is not a multiple of the inner chunk is refused */
    size_t bad[2] = {3, 9};
    dctk_zarr_meta m;
    assert_int_equal(dctk_zarr_meta_init(&m, DCTK_FLOAT32, 2, shape, chunk, bad, 0, NULL, NULL, NULL), DCTK_ERR_ARG);
    /* unknown codecs are named */
    json_t *c = json_loads("[{\"name\":\"nosuch\"}]", 0, NULL);
    dctk_zarr_array *a;
    assert_int_equal(dctk_zarr_meta_init(&m, DCTK_FLOAT32, 2, shape, chunk, NULL, 0, c, NULL, NULL), DCTK_OK);
    assert_int_equal(dctk_zarr_create(s, "x", &m, &a), DCTK_ERR_NOT_FOUND);
    assert_non_null(strstr(dctk_detail(), "nosuch"));
    dctk_zarr_meta_clear(&m);
    json_decref(c);
    dctk_buf_free(&b);
    dctk_store_close(s);
}

/* --- round trips ---------------------------------------------------------- */

static uint64_t rng = 88172645463325252ULL;
static uint64_t next_rand(void) {
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return rng;
}

/* Random values, with runs equal to the fill value so some chunks are skipped. */
static void *make_data(dctk_dtype t, size_t n, double fill) {
    uint8_t *p = malloc(n * dctk_dtype_size(t) + 1);
    for (size_t i = 0; i < n; i++) {
        bool is_fill = (i / 7) % 3 == 0 || i < n / 3;
        double v = is_fill ? fill : (double)(next_rand() % 2000) - 1000.0 + (dctk_dtype_is_float(t) ? 0.25 : 0);
        if (t == DCTK_UINT8 && !is_fill) v = (double)(next_rand() % 200);
        dctk_store_f64(t, p, i, v);
    }
    return p;
}

/* expected region [start, start+count) of a C-order array */
static void extract(dctk_dtype t, int nd, const size_t *shape, const void *src, const size_t *start,
                    const size_t *count, void *dst) {
    size_t n = dctk_shape_nelems(nd, count), es = dctk_dtype_size(t);
    for (size_t i = 0; i < n; i++) {
        size_t rem = i, lin = 0, idx[8];
        for (int d = nd - 1; d >= 0; d--) idx[d] = rem % count[d], rem /= count[d];
        for (int d = 0; d < nd; d++) lin = lin * shape[d] + start[d] + idx[d];
        memcpy((uint8_t *)dst + i * es, (const uint8_t *)src + lin * es, es);
    }
}

static void check_case(dctk_store *s, dctk_dtype t, int nd, bool sharded, int threads, const char *codecs) {
    static const size_t shapes[4][4] = {{37}, {11, 13}, {5, 7, 9}, {3, 4, 5, 6}};
    static const size_t chunks[4][4] = {{4}, {3, 4}, {2, 3, 4}, {2, 3, 2, 4}};
    static const size_t shards[4][4] = {{12}, {6, 8}, {4, 6, 4}, {2, 3, 4, 8}};
    const size_t *shape = shapes[nd - 1];
    double fill = dctk_dtype_is_float(t) ? NAN : 3;
    size_t n = dctk_shape_nelems(nd, shape), es = dctk_dtype_size(t);
    void *data = make_data(t, n, fill), *back = malloc(n * es);
    dctk_zarr_array *a = make_array(s, "v", t, nd, shape, chunks[nd - 1], sharded ? shards[nd - 1] : NULL, fill, codecs);
    assert_int_equal(dctk_zarr_write_buffer(a, data, threads), DCTK_OK);
    dctk_zarr_close(a);
    assert_int_equal(dctk_zarr_open(s, "v", &a), DCTK_OK);
    size_t zero[4] = {0};
    assert_int_equal(dctk_zarr_read(a, zero, shape, back), DCTK_OK);
    assert_memory_equal(data, back, n * es); /* NaN fills are the same bits: dctk_store_f64 of NAN */
    for (int k = 0; k < 5; k++) {
        size_t start[4], count[4];
        for (int d = 0; d < nd; d++) {
            start[d] = next_rand() % shape[d];
            count[d] = 1 + next_rand() % (shape[d] - start[d]);
        }
        void *want = malloc(dctk_shape_nelems(nd, count) * es);
        extract(t, nd, shape, data, start, count, want);
        assert_int_equal(dctk_zarr_read(a, start, count, back), DCTK_OK);
        assert_memory_equal(want, back, dctk_shape_nelems(nd, count) * es);
        free(want);
    }
    dctk_zarr_close(a);
    free(data);
    free(back);
}

static void round_trips(void **state) {
    (void)state;
    dctk_store *s;
    assert_int_equal(dctk_store_mem_new(&s), DCTK_OK);
    const dctk_dtype types[] = {DCTK_FLOAT32, DCTK_FLOAT64, DCTK_INT16, DCTK_UINT8};
    for (int ti = 0; ti < 4; ti++)
        for (int nd = 1; nd <= 4; nd++)
            for (int sh = 0; sh < 2; sh++) check_case(s, types[ti], nd, sh, 1 + (nd + sh) % 3, NULL);
    /* through a compressor, and with a checksum inside the shard */
    check_case(s, DCTK_FLOAT32, 3, true, 2,
               "[{\"name\":\"bytes\",\"configuration\":{\"endian\":\"little\"}},{\"name\":\"zstd\",\"configuration\":"
               "{\"level\":1,\"checksum\":false}},{\"name\":\"crc32c\"}]");
    check_case(s, DCTK_INT16, 2, false, 2,
               "[{\"name\":\"bytes\",\"configuration\":{\"endian\":\"big\"}},{\"name\":\"crc32c\"}]");
    dctk_store_close(s);
}

static void zero_dim_array(void **state) {
    (void)state;
    dctk_store *s;
    assert_int_equal(dctk_store_mem_new(&s), DCTK_OK);
    dctk_zarr_array *a = make_array(s, "scalar", DCTK_FLOAT64, 0, NULL, NULL, NULL, 0, NULL);
    double v = 2.5, back = 0;
    assert_int_equal(dctk_zarr_write_buffer(a, &v, 2), DCTK_OK);
    assert_int_equal(dctk_zarr_read(a, NULL, NULL, &back), DCTK_OK);
    assert_true(back == 2.5);
    bool ex;
    assert_int_equal(dctk_store_exists(s, "scalar/c", &ex), DCTK_OK);
    assert_true(ex);
    dctk_zarr_close(a);
    dctk_store_close(s);
}

/* --- shard layout --------------------------------------------------------- */

static void shard_bytes(void **state) {
    (void)state;
    dctk_store *s;
    assert_int_equal(dctk_store_mem_new(&s), DCTK_OK);
    size_t shape[1] = {26}, chunk[1] = {4}, shard[1] = {8};
    dctk_zarr_array *a = make_array(s, "x", DCTK_INT32, 1, shape, chunk, shard, -1, NULL);
    int32_t v[26];
    for (int i = 0; i < 26; i++) v[i] = (i < 4 || (i >= 16 && i < 24)) ? -1 : i; /* chunks 0, 4, 5 are fill */
    assert_int_equal(dctk_zarr_write_buffer(a, v, 2), DCTK_OK);
    dctk_buf b = DCTK_BUF_INIT;
    /* shard 0: chunk 0 absent, chunk 1 at offset 0 */
    assert_int_equal(dctk_store_get(s, "x/c/0", &b), DCTK_OK);
    assert_int_equal(b.size, 16 + 2 * 16 + 4);
    const uint8_t *ix = b.data + 16;
    assert_true(dctk_get_le64(ix) == UINT64_MAX && dctk_get_le64(ix + 8) == UINT64_MAX);
    assert_true(dctk_get_le64(ix + 16) == 0 && dctk_get_le64(ix + 24) == 16);
    assert_int_equal(dctk_get_le32(ix + 32), dctk_crc32c(ix, 32));
    assert_int_equal((int32_t)dctk_get_le32(b.data), 4);
    /* shard 2 (elements 16..23) is all fill: not stored */
    assert_int_equal(dctk_store_get(s, "x/c/2", &b), DCTK_ERR_NOT_FOUND);
    /* shard 3: elements 24, 25, then padding that repeats the last value; chunk 7 is outside the array */
    assert_int_equal(dctk_store_get(s, "x/c/3", &b), DCTK_OK);
    assert_int_equal(b.size, 16 + 36);
    int32_t want[4] = {24, 25, 25, 25};
    for (int i = 0; i < 4; i++) assert_int_equal((int32_t)dctk_get_le32(b.data + 4 * i), want[i]);
    assert_true(dctk_get_le64(b.data + 16 + 16) == UINT64_MAX);
    dctk_buf_free(&b);
    dctk_zarr_close(a);
    dctk_store_close(s);
}

/* --- corruption ------------------------------------------------------------ */

static dctk_status read_all(dctk_store *s, const char *path, void *out) {
    dctk_zarr_array *a;
    DCTK_TRY(dctk_zarr_open(s, path, &a));
    size_t zero[4] = {0};
    dctk_status st = dctk_zarr_read(a, zero, dctk_zarr_get_meta(a)->shape, out);
    dctk_zarr_close(a);
    return st;
}

static void corruption_is_reported(void **state) {
    (void)state;
    dctk_store *s;
    assert_int_equal(dctk_store_mem_new(&s), DCTK_OK);
    size_t shape[2] = {8, 8}, chunk[2] = {4, 4}, shard[2] = {8, 8};
    dctk_zarr_array *a = make_array(s, "f", DCTK_FLOAT32, 2, shape, chunk, shard, 0,
                                    "[{\"name\":\"bytes\",\"configuration\":{\"endian\":\"little\"}},"
                                    "{\"name\":\"zstd\",\"configuration\":{\"level\":3,\"checksum\":false}}]");
    float v[64], back[64];
    for (int i = 0; i < 64; i++) v[i] = (float)i + 0.5f;
    assert_int_equal(dctk_zarr_write_buffer(a, v, 1), DCTK_OK);
    dctk_zarr_close(a);
    dctk_buf good = DCTK_BUF_INIT, bad = DCTK_BUF_INIT;
    assert_int_equal(dctk_store_get(s, "f/c/0/0", &good), DCTK_OK);
    size_t n = good.size, ix = n - 4 - 64;

    /* a flipped byte in the index */
    assert_int_equal(dctk_buf_append(&bad, good.data, n), DCTK_OK);
    bad.data[ix + 3] ^= 0x10;
    assert_int_equal(dctk_store_set(s, "f/c/0/0", bad.data, n), DCTK_OK);
    assert_int_equal(read_all(s, "f", back), DCTK_ERR_CORRUPT);
    assert_non_null(strstr(dctk_detail(), "f/c/0/0"));
    assert_non_null(strstr(dctk_detail(), "checksum"));

    /* truncated shards: shorter than the index, and cut inside the chunks */
    for (size_t cut = 1; cut < n; cut += 5) {
        assert_int_equal(dctk_store_set(s, "f/c/0/0", good.data, n - cut), DCTK_OK); /* end cut off */
        assert_int_equal(read_all(s, "f", back), DCTK_ERR_CORRUPT);
        assert_non_null(strstr(dctk_detail(), "f/c/0/0"));
        assert_int_equal(dctk_store_set(s, "f/c/0/0", good.data + cut, n - cut), DCTK_OK); /* start cut off */
        assert_int_not_equal(read_all(s, "f", back), DCTK_OK);
    }

    /* an offset past the data, with a valid CRC */
    bad.size = 0;
    assert_int_equal(dctk_buf_append(&bad, good.data, n), DCTK_OK);
    dctk_put_le64(bad.data + ix + 16, n);
    dctk_put_le32(bad.data + n - 4, dctk_crc32c(bad.data + ix, 64));
    assert_int_equal(dctk_store_set(s, "f/c/0/0", bad.data, n), DCTK_OK);
    assert_int_equal(read_all(s, "f", back), DCTK_ERR_CORRUPT);
    assert_non_null(strstr(dctk_detail(), "outside"));

    /* garbage where a chunk should be: the codec fails, the shard is named */
    bad.size = 0;
    assert_int_equal(dctk_buf_append(&bad, good.data, n), DCTK_OK);
    memset(bad.data, 0xAB, 8);
    assert_int_equal(dctk_store_set(s, "f/c/0/0", bad.data, n), DCTK_OK);
    assert_int_not_equal(read_all(s, "f", back), DCTK_OK);
    assert_non_null(strstr(dctk_detail(), "f/c/0/0"));

    /* and the good shard still reads */
    assert_int_equal(dctk_store_set(s, "f/c/0/0", good.data, n), DCTK_OK);
    assert_int_equal(read_all(s, "f", back), DCTK_OK);
    assert_memory_equal(v, back, sizeof v);
    dctk_buf_free(&good);
    dctk_buf_free(&bad);
    dctk_store_close(s);
}

/* --- writer errors ---------------------------------------------------------- */

static dctk_status failing_reader(void *user, const size_t *start, const size_t *count, void *out) {
    (void)user;
    if (start[0] == 12) return DCTK_FAIL(DCTK_ERR_IO, "disk on fire at row %zu", start[0]);
    memset(out, 0x11, count[0] * count[1] * 4);
    return DCTK_OK;
}

/* Reads boxes of a C-order float array held in memory. */
typedef struct {
    const size_t *shape;
    const float *data;
} mem_box;

static dctk_status box_reader(void *user, const size_t *start, const size_t *count, void *out) {
    const mem_box *b = user;
    extract(DCTK_FLOAT32, 3, b->shape, b->data, start, count, out);
    return DCTK_OK;
}

static void writer_stops_on_first_error(void **state) {
    (void)state;
    dctk_store *s;
    assert_int_equal(dctk_store_mem_new(&s), DCTK_OK);
    size_t shape[2] = {40, 5}, chunk[2] = {2, 5}, shard[2] = {4, 5};
    dctk_zarr_array *a = make_array(s, "e", DCTK_INT32, 2, shape, chunk, shard, 0, NULL);
    dctk_zarr_write_opts o = {.threads = 3};
    dctk_zarr_write_stats stats;
    assert_int_equal(dctk_zarr_write(a, failing_reader, NULL, &o, &stats), DCTK_ERR_IO);
    assert_non_null(strstr(dctk_detail(), "disk on fire at row 12"));
    assert_non_null(strstr(dctk_detail(), "e/c/3/0"));
    dctk_zarr_close(a);
    dctk_store_close(s);
}

static dctk_status const_reader(void *user, const size_t *start, const size_t *count, void *out) {
    (void)user, (void)start;
    float *f = out;
    for (size_t i = 0; i < count[0] * count[1]; i++) f[i] = 1.0f;
    return DCTK_OK;
}

static void writer_stats_and_memory(void **state) {
    (void)state;
    dctk_store *s;
    assert_int_equal(dctk_store_mem_new(&s), DCTK_OK);
    size_t shape[2] = {64, 64}, chunk[2] = {8, 64}, shard[2] = {32, 64};
    dctk_zarr_array *a = make_array(s, "m", DCTK_FLOAT32, 2, shape, chunk, shard, 0, NULL);
    dctk_zarr_write_opts o = {.threads = 2};
    dctk_zarr_write_stats st;
    assert_int_equal(dctk_zarr_write(a, const_reader, NULL, &o, &st), DCTK_OK);
    size_t shard_bytes = 32 * 64 * 4;
    assert_int_equal(st.shards_written, 2);
    assert_int_equal(st.chunks_written, 8);
    assert_int_equal(st.bytes_in, 64 * 64 * 4);
    assert_int_equal(st.bytes_out, 2 * (shard_bytes + 4 * 16 + 4));
    /* input + output shard and a few inner-chunk buffers per thread */
    assert_true(st.peak_buffer_bytes <= 2 * (2 * shard_bytes + 4 * 8 * 64 * 4 + 4096));
    dctk_zarr_close(a);
    dctk_store_close(s);
}

/* Fewer shards than threads: the threads share each shard's inner chunks.
 * The shards must come out byte for byte as one thread writes them (chunks
 * in C order, fill-value chunks absent, edge chunks padded), and read back. */
static void writer_splits_few_shards(void **state) {
    (void)state;
    size_t shape[3] = {7, 10, 9}, chunk[3] = {2, 3, 9}, shard[3] = {4, 12, 9};
    size_t n = dctk_shape_nelems(3, shape);
    float *data = make_data(DCTK_FLOAT32, n, NAN), *back = malloc(n * sizeof(float));
    const char *codecs = "[{\"name\":\"bytes\",\"configuration\":{\"endian\":\"little\"}},"
                         "{\"name\":\"zstd\",\"configuration\":{\"level\":1,\"checksum\":false}}]";
    static const char *keys[] = {"v/c/0/0/0", "v/c/1/0/0"};
    dctk_buf one[2] = {DCTK_BUF_INIT, DCTK_BUF_INIT}, got = DCTK_BUF_INIT;
    char *dir = make_tmpdir();
    for (int threads = 1; threads <= 5; threads += 2) {
        dctk_store *s; /* memory, then a directory (shards written with writev) */
        if (threads < 5) assert_int_equal(dctk_store_mem_new(&s), DCTK_OK);
        else assert_int_equal(dctk_store_dir_open(dir, false, &s), DCTK_OK);
        dctk_zarr_array *a = make_array(s, "v", DCTK_FLOAT32, 3, shape, chunk, shard, NAN, codecs);
        dctk_zarr_write_opts o = {.threads = threads, .concurrent_read = true};
        dctk_zarr_write_stats st;
        mem_box box = {shape, data};
        assert_int_equal(dctk_zarr_write(a, box_reader, &box, &o, &st), DCTK_OK);
        assert_int_equal(st.shards_written, 2);
        assert_int_equal(st.chunks_written + st.chunks_skipped, 4 * 4); /* within the array */
        assert_true(st.chunks_skipped > 0);
        for (int k = 0; k < 2; k++) {
            assert_int_equal(dctk_store_get(s, keys[k], threads == 1 ? &one[k] : &got), DCTK_OK);
            if (threads > 1) {
                assert_int_equal(got.size, one[k].size);
                assert_memory_equal(got.data, one[k].data, got.size);
            }
        }
        size_t zero[3] = {0};
        assert_int_equal(dctk_zarr_read(a, zero, shape, back), DCTK_OK);
        assert_memory_equal(data, back, n * sizeof(float));
        dctk_zarr_close(a);
        dctk_store_close(s);
    }
    dctk_buf_free(&one[0]), dctk_buf_free(&one[1]), dctk_buf_free(&got);
    rm_rf(dir);
    free(dir);
    free(data);
    free(back);
}

/* Entries in a folder, its temporary files included (-1: no folder). */
static int entries(const char *path) {
    DIR *d = opendir(path);
    if (!d) return -1;
    int n = 0;
    for (struct dirent *e; (e = readdir(d));) n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
    closedir(d);
    return n;
}

/* A reader failing on one inner chunk of a shard shared by threads: on a
 * directory store the chunks before it were already in the shard's file,
 * which must go (no shard, no temporary file left). */
static void writer_split_stops_on_error(void **state) {
    (void)state;
    char *dir = make_tmpdir(), path[600];
    for (int on_disk = 0; on_disk < 2; on_disk++) {
        dctk_store *s;
        if (on_disk) assert_int_equal(dctk_store_dir_open(dir, false, &s), DCTK_OK);
        else assert_int_equal(dctk_store_mem_new(&s), DCTK_OK);
        size_t shape[2] = {16, 5}, chunk[2] = {2, 5}, shard[2] = {16, 5};
        dctk_zarr_array *a = make_array(s, "e", DCTK_INT32, 2, shape, chunk, shard, 0, NULL);
        dctk_zarr_write_opts o = {.threads = 3};
        assert_int_equal(dctk_zarr_write(a, failing_reader, NULL, &o, NULL), DCTK_ERR_IO);
        assert_non_null(strstr(dctk_detail(), "disk on fire at row 12"));
        assert_non_null(strstr(dctk_detail(), "e/c/0/0"));
        bool ex = true;
        assert_int_equal(dctk_store_exists(s, "e/c/0/0", &ex), DCTK_OK);
        assert_false(ex);
        snprintf(path, sizeof path, "%s/e/c/0", dir);
        if (on_disk) assert_true(entries(path) <= 0);
        dctk_zarr_close(a);
        dctk_store_close(s);
    }
    rm_rf(dir);
    free(dir);
}

/* --- replacing an array ------------------------------------------------------ */

static void create_replaces_old_chunks(void **state) {
    (void)state;
    dctk_store *s;
    assert_int_equal(dctk_store_mem_new(&s), DCTK_OK);
    size_t shape[1] = {8}, chunk[1] = {4};
    int16_t v[8] = {1, 2, 3, 4, 5, 6, 7, 8}, z[8] = {0}, back[8];
    dctk_zarr_array *a = make_array(s, "r", DCTK_INT16, 1, shape, chunk, NULL, 0, NULL);
    assert_int_equal(dctk_zarr_write_buffer(a, v, 1), DCTK_OK);
    dctk_zarr_close(a);
    a = make_array(s, "r", DCTK_INT16, 1, shape, chunk, NULL, 0, NULL);
    assert_int_equal(dctk_zarr_write_buffer(a, z, 1), DCTK_OK);
    dctk_zarr_close(a);
    assert_int_equal(read_all(s, "r", back), DCTK_OK);
    assert_memory_equal(back, z, sizeof z);
    dctk_store_close(s);
}

/* --- Zarr v2 ------------------------------------------------------------------ */

static void v2_arrays(void **state) {
    (void)state;
    dctk_store *s;
    assert_int_equal(dctk_store_mem_new(&s), DCTK_OK);
    const char *za = "{\"zarr_format\":2,\"shape\":[3,5],\"chunks\":[2,3],\"dtype\":\">i2\",\"fill_value\":7,"
                     "\"order\":\"C\",\"compressor\":null,\"filters\":null}";
    assert_int_equal(dctk_store_set(s, "b/.zarray", za, strlen(za)), DCTK_OK);
    const char *attrs = "{\"_ARRAY_DIMENSIONS\":[\"y\",\"x\"],\"units\":\"K\"}";
    assert_int_equal(dctk_store_set(s, "b/.zattrs", attrs, strlen(attrs)), DCTK_OK);
    /* chunk 0.0 holds rows 0-1, cols 0-2, big-endian; the other chunks are missing */
    uint8_t c00[12];
    for (int i = 0; i < 6; i++) c00[2 * i] = 0, c00[2 * i + 1] = (uint8_t)(10 + i);
    assert_int_equal(dctk_store_set(s, "b/0.0", c00, sizeof c00), DCTK_OK);
    int16_t back[15];
    assert_int_equal(read_all(s, "b", back), DCTK_OK);
    int16_t want[15] = {10, 11, 12, 7, 7, 13, 14, 15, 7, 7, 7, 7, 7, 7, 7};
    assert_memory_equal(back, want, sizeof want);
    dctk_zarr_array *a;
    assert_int_equal(dctk_zarr_open(s, "b", &a), DCTK_OK);
    const dctk_zarr_meta *m = dctk_zarr_get_meta(a);
    assert_int_equal(m->zarr_format, 2);
    assert_string_equal(m->dim_names[1], "x");
    assert_null(json_object_get(m->attrs, "_ARRAY_DIMENSIONS"));
    assert_string_equal(json_string_value(json_object_get(m->attrs, "units")), "K");
    dctk_zarr_close(a);

    /* order F: each chunk is stored transposed */
    const char *zf = "{\"zarr_format\":2,\"shape\":[2,3],\"chunks\":[2,3],\"dtype\":\"<i2\",\"fill_value\":0,"
                     "\"order\":\"F\",\"compressor\":null,\"filters\":null,\"dimension_separator\":\"/\"}";
    assert_int_equal(dctk_store_set(s, "f/.zarray", zf, strlen(zf)), DCTK_OK);
    int16_t fort[6] = {1, 4, 2, 5, 3, 6}, wantf[6] = {1, 2, 3, 4, 5, 6};
    assert_int_equal(dctk_store_set(s, "f/0/0", fort, sizeof fort), DCTK_OK);
    if (read_all(s, "f", back) == DCTK_OK) assert_memory_equal(back, wantf, sizeof wantf);
    else assert_non_null(strstr(dctk_detail(), "transpose")); /* until the transpose codec lands */
    dctk_store_close(s);
}

/* --- consolidation -------------------------------------------------------------- */

static void consolidated_metadata(void **state) {
    (void)state;
    char *dir = make_tmpdir();
    dctk_store *s;
    assert_int_equal(dctk_store_dir_open(dir, false, &s), DCTK_OK);
    json_t *attrs = json_pack("{s:s}", "title", "test");
    assert_int_equal(dctk_zarr_ensure_group(s, "", attrs), DCTK_OK);
    json_decref(attrs);
    size_t shape[1] = {4};
    dctk_zarr_close(make_array(s, "a", DCTK_FLOAT32, 1, shape, shape, NULL, 0, NULL));
    dctk_zarr_close(make_array(s, "g/b", DCTK_INT8, 1, shape, shape, NULL, 0, NULL));
    assert_int_equal(dctk_zarr_consolidate(s), DCTK_OK);
    json_t *root = load_doc(s, "zarr.json");
    json_t *cm = json_object_get(root, "consolidated_metadata");
    assert_string_equal(json_string_value(json_object_get(cm, "kind")), "inline");
    assert_true(json_is_false(json_object_get(cm, "must_understand")));
    json_t *md = json_object_get(cm, "metadata");
    assert_int_equal(json_object_size(md), 3);
    json_t *a = load_doc(s, "a/zarr.json");
    assert_true(json_equal(json_object_get(md, "a"), a));
    assert_string_equal(json_string_value(json_object_get(json_object_get(md, "g"), "node_type")), "group");
    assert_string_equal(json_string_value(json_object_get(json_object_get(md, "g/b"), "data_type")), "int8");
    assert_string_equal(json_string_value(json_object_get(json_object_get(root, "attributes"), "title")), "test");
    json_decref(a);
    json_decref(root);
    /* an array cannot be made a group */
    assert_int_equal(dctk_zarr_ensure_group(s, "a", NULL), DCTK_ERR_ARG);
    dctk_store_close(s);
    rm_rf(dir);
    free(dir);
}

/* --- as a dataset input ---------------------------------------------------------- */

static void dataset_input(void **state) {
    (void)state;
    char *dir = make_tmpdir(), path[512];
    snprintf(path, sizeof path, "%s/in.zarr", dir);
    dctk_store *s;
    assert_int_equal(dctk_store_dir_open(path, true, &s), DCTK_OK);
    size_t shape[2] = {4, 6}, chunk[2] = {2, 4}, shard[2] = {4, 8};
    float t[24];
    for (int i = 0; i < 24; i++) t[i] = i == 5 ? -999.0f : (float)i / 4;
    json_t *attrs = json_pack("{s:s,s:f}", "units", "K", "missing_value", -999.0);
    dctk_zarr_meta m;
    const char *dims[2] = {"lat", "lon"};
    assert_int_equal(dctk_zarr_meta_init(&m, DCTK_FLOAT32, 2, shape, chunk, shard, NAN, NULL, attrs, dims), DCTK_OK);
    dctk_zarr_array *a;
    assert_int_equal(dctk_zarr_create(s, "t", &m, &a), DCTK_OK);
    assert_int_equal(dctk_zarr_write_buffer(a, t, 2), DCTK_OK);
    dctk_zarr_close(a);
    dctk_zarr_meta_clear(&m);
    json_decref(attrs);
    dctk_store_close(s);

    dctk_dataset *ds;
    assert_int_equal(dctk_dataset_open(path, &ds), DCTK_OK);
    assert_int_equal(dctk_dataset_format(ds), DCTK_FMT_ZARR3);
    assert_int_equal(dctk_dataset_nvars(ds), 1);
    const dctk_var *v = dctk_dataset_var(ds, 0);
    assert_string_equal(v->name, "t");
    assert_string_equal(v->dims[1], "lon");
    assert_string_equal(v->units, "K");
    assert_int_equal(v->dtype, DCTK_FLOAT32);
    assert_null(json_object_get(v->attrs, "missing_value"));
    size_t start[2] = {0, 1}, count[2] = {2, 5};
    float out[10];
    assert_int_equal(dctk_dataset_read(ds, 0, start, count, out), DCTK_OK);
    for (int i = 0; i < 10; i++) {
        int src = (i / 5) * 6 + 1 + i % 5;
        if (src == 5) assert_true(isnan(out[i]));
        else assert_true(out[i] == t[src]);
    }
    dctk_dataset_close(ds);
    rm_rf(dir);
    free(dir);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(stores_behave_alike),
        cmocka_unit_test(metadata_document),
        cmocka_unit_test(round_trips),
        cmocka_unit_test(zero_dim_array),
        cmocka_unit_test(shard_bytes),
        cmocka_unit_test(corruption_is_reported),
        cmocka_unit_test(writer_stops_on_first_error),
        cmocka_unit_test(writer_stats_and_memory),
        cmocka_unit_test(writer_splits_few_shards),
        cmocka_unit_test(writer_split_stops_on_error),
        cmocka_unit_test(create_replaces_old_chunks),
        cmocka_unit_test(v2_arrays),
        cmocka_unit_test(consolidated_metadata),
        cmocka_unit_test(dataset_input),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
