/* The staging protocol of src/zarr/stage.c on both stores: nothing replaces
 * the array at a path before commit, a second writer of the same path is
 * refused, an abandoned stage leaves the earlier copy, the walk never lists a
 * staging name, and repair puts back what a writer killed mid-swap left
 * (aside copy restored, stages and dead writers' temporary files removed).
 * Also the node probe, and the stage's sync: its own files one by one (a
 * FIFO in the tree is passed over, not opened, which would block), the file
 * system at once for a tree of many files. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "dctk/util.h"
#include "dctk/zarr.h"

static char *make_tmpdir(void) {
    char *t = strdup("/tmp/dctk_stage_test_XXXXXX");
    assert_non_null(mkdtemp(t));
    return t;
}

static void rm_rf(const char *dir) {
    char cmd[512];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

enum { N = 6 };

/* An array of N float32 values base, base + 1, ... at path. */
static void write_values(dctk_store *s, const char *path, float base) {
    size_t shape[1] = {N}, chunk[1] = {4};
    dctk_zarr_meta m;
    assert_int_equal(dctk_zarr_meta_init(&m, DCTK_FLOAT32, 1, shape, chunk, NULL, NAN, NULL, NULL, NULL), DCTK_OK);
    dctk_zarr_array *a;
    assert_int_equal(dctk_zarr_create(s, path, &m, &a), DCTK_OK);
    float v[N];
    for (int i = 0; i < N; i++) v[i] = base + (float)i;
    assert_int_equal(dctk_zarr_write_buffer(a, v, 1), DCTK_OK);
    dctk_zarr_close(a);
    dctk_zarr_meta_clear(&m);
}

/* The first value of the array at path (NAN when it cannot be read). */
static float first_value(dctk_store *s, const char *path) {
    dctk_zarr_array *a;
    if (dctk_zarr_open(s, path, &a) != DCTK_OK) return NAN;
    size_t start[1] = {0}, count[1] = {N};
    float v[N];
    dctk_status st = dctk_zarr_read(a, start, count, v);
    dctk_zarr_close(a);
    return st == DCTK_OK ? v[0] : NAN;
}

static int count_node(const char *path, const json_t *meta, bool is_array, void *user) {
    (void)meta, (void)is_array;
    if (path[0] == '.') (*(int *)user) += 100; /* a staging name listed as a node */
    else (*(int *)user)++;
    return 0;
}

static int count_names(const char *name, void *user) {
    if (name[0] == '.') (*(int *)user)++;
    return 0;
}

static int private_names(dctk_store *s) {
    int n = 0;
    assert_int_equal(dctk_store_list(s, "", count_names, &n), DCTK_OK);
    return n;
}

static void check_protocol(dctk_store *s) {
    write_values(s, "t", 1);
    dctk_zarr_stage *g, *g2;
    assert_int_equal(dctk_zarr_stage_begin(s, "t", &g), DCTK_OK);
    /* a second writer of the same field, while the first is alive */
    assert_int_equal(dctk_zarr_stage_begin(s, "t", &g2), DCTK_ERR_BUSY);
    assert_non_null(strstr(dctk_detail(), "being written by another process"));
    write_values(s, dctk_zarr_stage_path(g), 100);
    assert_true(first_value(s, "t") == 1); /* nothing replaced yet */
    int nodes = 0;
    assert_int_equal(dctk_zarr_walk(s, count_node, &nodes), DCTK_OK);
    assert_int_equal(nodes, 1); /* the stage is no node */
    assert_int_equal(dctk_zarr_stage_commit(g), DCTK_OK);
    dctk_zarr_stage_end(g);
    assert_true(first_value(s, "t") == 100);
    assert_int_equal(private_names(s), 0);

    /* abandoned: the earlier copy stays, the stage goes */
    assert_int_equal(dctk_zarr_stage_begin(s, "t", &g), DCTK_OK);
    write_values(s, dctk_zarr_stage_path(g), 7);
    dctk_zarr_stage_end(g);
    assert_true(first_value(s, "t") == 100);
    assert_int_equal(private_names(s), 0);

    /* a first write: nothing to replace */
    assert_int_equal(dctk_zarr_stage_begin(s, "u", &g), DCTK_OK);
    write_values(s, dctk_zarr_stage_path(g), 5);
    assert_int_equal(dctk_zarr_stage_commit(g), DCTK_OK);
    dctk_zarr_stage_end(g);
    assert_true(first_value(s, "u") == 5);
    assert_int_equal(dctk_zarr_stage_begin(s, ".u", &g), DCTK_ERR_ARG);
}

static void protocol_on_both_stores(void **state) {
    (void)state;
    dctk_store *s;
    assert_int_equal(dctk_store_mem_new(&s), DCTK_OK);
    check_protocol(s);
    dctk_store_close(s);
    char *dir = make_tmpdir();
    assert_int_equal(dctk_store_dir_open(dir, false, &s), DCTK_OK);
    check_protocol(s);
    dctk_store_close(s);
    rm_rf(dir);
    free(dir);
}

/* A pid that no process has now: a child that has exited and been reaped. */
static long dead_pid(void) {
    pid_t p = fork();
    if (p == 0) _exit(0);
    waitpid(p, NULL, 0);
    return (long)p;
}

static void repair_after_crashes(void **state) {
    (void)state;
    char *dir = make_tmpdir(), path[1024];
    dctk_store *s;
    assert_int_equal(dctk_store_dir_open(dir, false, &s), DCTK_OK);
    /* killed between the two renames of a swap: only the aside copy is left */
    write_values(s, ".t.old.host.1.00000001", 3);
    /* killed while staging */
    write_values(s, ".t.stage.host.2.00000002", 9);
    write_values(s, ".v.partial", 9);
    /* a swap that finished, its aside copy not yet removed */
    write_values(s, "w", 4);
    write_values(s, ".w.old.host.3.00000003", 8);
    /* a merge killed while writing the root document */
    long pid = dead_pid();
    snprintf(path, sizeof path, "%s/zarr.json.tmp.%ld.0", dir, pid);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fclose(f);
    int nodes = 0;
    assert_int_equal(dctk_zarr_walk(s, count_node, &nodes), DCTK_OK);
    assert_int_equal(nodes, 1); /* only w */
    dctk_zarr_repair_report r;
    assert_int_equal(dctk_zarr_repair(s, &r), DCTK_OK);
    assert_int_equal(r.restored, 1);
    assert_int_equal(r.removed, 3);
    assert_int_equal(r.temps, 1);
    assert_int_equal(r.busy, 0);
    assert_true(first_value(s, "t") == 3);
    assert_true(first_value(s, "w") == 4);
    assert_int_equal(private_names(s), 0);
    assert_int_equal(access(path, F_OK), -1);
    dctk_store_close(s);
    rm_rf(dir);
    free(dir);
}

typedef struct {
    dctk_store *s;
    void *h;
} held_lock;

static void *release_later(void *arg) {
    held_lock *l = arg;
    usleep(100 * 1000);
    l->s->vt->unlock(l->s, l->h);
    return NULL;
}

/* A merge holds a field's lock for a moment while it repairs: a writer that
 * arrives then waits for it instead of being refused. */
static void repair_lock_is_waited_for(void **state) {
    (void)state;
    char *dir = make_tmpdir();
    dctk_store *s;
    assert_int_equal(dctk_store_dir_open(dir, false, &s), DCTK_OK);
    held_lock l = {s, NULL};
    char owner[64];
    assert_int_equal(s->vt->trylock(s, ".t.lock", "repairing", &l.h, owner, sizeof owner), DCTK_OK);
    assert_non_null(l.h);
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, release_later, &l), 0);
    dctk_zarr_stage *g;
    assert_int_equal(dctk_zarr_stage_begin(s, "t", &g), DCTK_OK);
    pthread_join(th, NULL);
    dctk_zarr_stage_end(g);
    dctk_store_close(s);
    rm_rf(dir);
    free(dir);
}

static void probe_tells_nodes_apart(void **state) {
    (void)state;
    dctk_store *s;
    assert_int_equal(dctk_store_mem_new(&s), DCTK_OK);
    dctk_zarr_node_info info;
    json_t *doc;
    assert_int_equal(dctk_zarr_probe(s, "", &info, &doc), DCTK_OK);
    assert_int_equal(info.zarr_format, 0);
    assert_null(doc);
    write_values(s, "g/a", 0);
    assert_int_equal(dctk_zarr_probe(s, "", &info, NULL), DCTK_OK);
    assert_true(info.zarr_format == 3 && !info.is_array);
    assert_int_equal(dctk_zarr_probe(s, "g/a", &info, &doc), DCTK_OK);
    assert_true(info.zarr_format == 3 && info.is_array);
    assert_string_equal(json_string_value(json_object_get(doc, "data_type")), "float32");
    json_decref(doc);
    const char *zarray = "{\"zarr_format\":2,\"shape\":[2],\"chunks\":[2],\"dtype\":\"<f4\",\"compressor\":null,"
                         "\"fill_value\":null,\"order\":\"C\",\"filters\":null}";
    assert_int_equal(dctk_store_set(s, "v2/.zarray", zarray, strlen(zarray)), DCTK_OK);
    assert_int_equal(dctk_store_set(s, "v2/.zattrs", "{\"units\":\"K\"}", 13), DCTK_OK);
    assert_int_equal(dctk_zarr_probe(s, "v2", &info, &doc), DCTK_OK);
    assert_true(info.zarr_format == 2 && info.is_array);
    assert_string_equal(json_string_value(json_object_get(json_object_get(doc, "attributes"), "units")), "K");
    json_decref(doc);
    assert_int_equal(dctk_store_set(s, "bad/zarr.json", "{", 1), DCTK_OK);
    assert_int_equal(dctk_zarr_probe(s, "bad", &info, NULL), DCTK_ERR_FORMAT);
    assert_non_null(strstr(dctk_detail(), "bad/zarr.json"));
    dctk_store_close(s);
}

static void sync_flushes_the_tree(void **state) {
    (void)state;
    char *root = make_tmpdir(), path[600];
    dctk_store *s;
    assert_int_equal(dctk_store_dir_open(root, true, &s), DCTK_OK);
    write_values(s, ".a.stage.h.1.0/x", 1);
    snprintf(path, sizeof path, "%s/.a.stage.h.1.0/fifo", root);
    assert_int_equal(mkfifo(path, 0600), 0);
    assert_int_equal(dctk_store_sync(s, ".a.stage.h.1.0", true), DCTK_OK);
    assert_float_equal(first_value(s, ".a.stage.h.1.0/x"), 1, 0);
    for (int i = 0; i < 70; i++) { /* beyond the file-by-file limit (64) */
        snprintf(path, sizeof path, "many/c/%d", i);
        assert_int_equal(dctk_store_set(s, path, "v", 1), DCTK_OK);
    }
    assert_int_equal(dctk_store_sync(s, "many", true), DCTK_OK);
    assert_int_equal(dctk_store_sync(s, "absent", true), DCTK_ERR_IO);
    assert_non_null(strstr(dctk_detail(), "absent"));
    dctk_store_close(s);
    rm_rf(root);
    free(root);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(protocol_on_both_stores),
        cmocka_unit_test(repair_after_crashes),
        cmocka_unit_test(repair_lock_is_waited_for),
        cmocka_unit_test(probe_tells_nodes_apart),
        cmocka_unit_test(sync_flushes_the_tree),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
