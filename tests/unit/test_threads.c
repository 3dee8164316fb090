/* Core count (cgroup quota files, Slurm, affinity), oversubscription check,
 * and the dynamic parallel-for. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/threads_internal.h"
#include "dctk/threads.h"
#include "dctk/util.h"

/* --- cgroup fixtures ---------------------------------------------------------- */

static char root[64];

static void put(const char *rel, const char *text) {
    char p[256], dir[256];
    snprintf(p, sizeof p, "%s/%s", root, rel);
    snprintf(dir, sizeof dir, "%s", p);
    *strrchr(dir, '/') = '\0';
    assert_int_equal(dctk_mkdirs(dir), DCTK_OK);
    assert_int_equal(dctk_write_file_atomic(p, text, strlen(text)), DCTK_OK);
}

/* Two rotating buffers, so that one call can take two paths. */
static const char *at(const char *rel) {
    static char p[2][256];
    static int k;
    k ^= 1;
    snprintf(p[k], sizeof p[k], "%s/%s", root, rel);
    return p[k];
}

static int setup(void **state) {
    (void)state;
    snprintf(root, sizeof root, "/tmp/dctk-test-cgroup-XXXXXX");
    return mkdtemp(root) ? 0 : -1;
}

static int teardown(void **state) {
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    return system(cmd);
}

static void cgroup_v2_file(void **state) {
    (void)state;
    put("a/cpu.max", "max 100000\n");
    assert_int_equal(dctk_cgroup_v2_cpus(at("a/cpu.max")), 0);
    put("a/cpu.max", "150000 100000\n");
    assert_int_equal(dctk_cgroup_v2_cpus(at("a/cpu.max")), 2); /* 1.5 CPUs: round up */
    put("a/cpu.max", "200000 100000\n");
    assert_int_equal(dctk_cgroup_v2_cpus(at("a/cpu.max")), 2);
    put("a/cpu.max", "5000 100000\n");
    assert_int_equal(dctk_cgroup_v2_cpus(at("a/cpu.max")), 1);
    put("a/cpu.max", "garbage\n");
    assert_int_equal(dctk_cgroup_v2_cpus(at("a/cpu.max")), 0);
    put("a/cpu.max", "12x 100000\n");
    assert_int_equal(dctk_cgroup_v2_cpus(at("a/cpu.max")), 0);
    assert_int_equal(dctk_cgroup_v2_cpus(at("missing/cpu.max")), 0);
}

static void cgroup_v1_files(void **state) {
    (void)state;
    put("v1/q", "-1\n");
    put("v1/p", "100000\n");
    assert_int_equal(dctk_cgroup_v1_cpus(at("v1/q"), at("v1/p")), 0);
    put("v1/q", "250000\n");
    assert_int_equal(dctk_cgroup_v1_cpus(at("v1/q"), at("v1/p")), 3);
    put("v1/p", "0\n");
    assert_int_equal(dctk_cgroup_v1_cpus(at("v1/q"), at("v1/p")), 0);
    assert_int_equal(dctk_cgroup_v1_cpus(at("v1/q"), at("v1/none")), 0);
}

/* A limit on an ancestor binds the process even when its own cgroup has none. */
static void cgroup_v2_hierarchy(void **state) {
    (void)state;
    put("h2/cpu.max", "max 100000\n");
    put("h2/job/cpu.max", "300000 100000\n");
    put("h2/job/step/cpu.max", "max 100000\n");
    put("h2/proc", "0::/job/step\n");
    char r[128];
    snprintf(r, sizeof r, "%s/h2", root);
    assert_int_equal(dctk_cgroup_cpus(r, at("h2/proc")), 3);
    put("h2/job/step/cpu.max", "100000 100000\n");
    assert_int_equal(dctk_cgroup_cpus(r, at("h2/proc")), 1);
    put("h2/proc", "0::/\n");
    assert_int_equal(dctk_cgroup_cpus(r, at("h2/proc")), 0);
    put("h2/cpu.max", "400000 100000\n");
    assert_int_equal(dctk_cgroup_cpus(r, at("h2/proc")), 4);
    assert_int_equal(dctk_cgroup_cpus(r, at("h2/no-such-file")), 0);
}

static void cgroup_v1_hierarchy(void **state) {
    (void)state;
    put("h1/cpu,cpuacct/cpu.cfs_quota_us", "-1\n");
    put("h1/cpu,cpuacct/cpu.cfs_period_us", "100000\n");
    put("h1/cpu,cpuacct/slurm/job7/cpu.cfs_quota_us", "600000\n");
    put("h1/cpu,cpuacct/slurm/job7/cpu.cfs_period_us", "100000\n");
    put("h1/proc", "12:memory:/slurm/job7\n4:cpu,cpuacct:/slurm/job7\n0::/slurm/job7\n");
    char r[128];
    snprintf(r, sizeof r, "%s/h1", root);
    assert_int_equal(dctk_cgroup_cpus(r, at("h1/proc")), 6);
    /* Controllers mounted separately, as on this kind of host: "1:cpu:/". */
    put("h1b/cpu/cpu.cfs_quota_us", "50000\n");
    put("h1b/cpu/cpu.cfs_period_us", "100000\n");
    put("h1b/proc", "2:cpuacct:/\n1:cpu:/\n0::/\n");
    snprintf(r, sizeof r, "%s/h1b", root);
    assert_int_equal(dctk_cgroup_cpus(r, at("h1b/proc")), 1);
}

static int affinity_count(void) {
    cpu_set_t set;
    assert_int_equal(sched_getaffinity(0, sizeof set, &set), 0);
    return CPU_COUNT(&set);
}

static void available_cores_takes_the_minimum(void **state) {
    (void)state;
    unsetenv("SLURM_CPUS_PER_TASK");
    int n = dctk_available_cores();
    assert_true(n >= 1 && n <= affinity_count());
    setenv("SLURM_CPUS_PER_TASK", "1", 1);
    assert_int_equal(dctk_available_cores(), 1);
    setenv("SLURM_CPUS_PER_TASK", "100000", 1);
    assert_int_equal(dctk_available_cores(), n);
    setenv("SLURM_CPUS_PER_TASK", "two", 1);
    assert_int_equal(dctk_available_cores(), n);
    setenv("SLURM_CPUS_PER_TASK", "-3", 1);
    assert_int_equal(dctk_available_cores(), n);
    unsetenv("SLURM_CPUS_PER_TASK");
}

/* --- oversubscription ---------------------------------------------------------- */

static const char *const vars[] = {"OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "BLOSC_NTHREADS",
                                   "NUMBA_NUM_THREADS"};
static char logged[2048];
static int nlogged;

static void capture(dctk_log_level lvl, const char *msg, void *user) {
    (void)user;
    if (lvl < DCTK_LOG_WARN) return;
    snprintf(logged, sizeof logged, "%s", msg);
    nlogged++;
}

static void clear_vars(void) {
    for (int i = 0; i < 5; i++) unsetenv(vars[i]);
    logged[0] = '\0';
    nlogged = 0;
}

static void oversubscription_modes(void **state) {
    (void)state;
    dctk_set_log_hook(capture, NULL);
    clear_vars();
    for (int m = 0; m < 3; m++) assert_int_equal(dctk_oversubscription_check((dctk_oversub_mode)m), DCTK_OK);
    for (int i = 0; i < 5; i++) setenv(vars[i], i % 2 ? " 1 " : "1", 1);
    setenv("OMP_NUM_THREADS", "1,1", 1);
    assert_int_equal(dctk_oversubscription_check(DCTK_OVERSUB_ABORT), DCTK_OK);
    assert_int_equal(nlogged, 0);

    setenv("OMP_NUM_THREADS", "8", 1);
    setenv("BLOSC_NTHREADS", "4,1", 1);
    assert_int_equal(dctk_oversubscription_check(DCTK_OVERSUB_OFF), DCTK_OK);
    assert_int_equal(nlogged, 0);
    assert_int_equal(dctk_oversubscription_check(DCTK_OVERSUB_WARN), DCTK_OK);
    assert_int_equal(nlogged, 1);
    assert_non_null(strstr(logged, "OMP_NUM_THREADS='8'"));
    assert_non_null(strstr(logged, "BLOSC_NTHREADS='4,1'"));
    assert_null(strstr(logged, "MKL_NUM_THREADS"));
    dctk_clear_detail();
    assert_int_equal(dctk_oversubscription_check(DCTK_OVERSUB_ABORT), DCTK_ERR_ARG);
    assert_non_null(strstr(dctk_detail(), "OMP_NUM_THREADS='8'"));
    assert_non_null(strstr(dctk_detail(), "BLOSC_NTHREADS='4,1'"));
    assert_null(strstr(dctk_detail(), "NUMBA"));

    clear_vars();
    setenv("NUMBA_NUM_THREADS", "", 1); /* set but empty: the library picks its own count */
    assert_int_equal(dctk_oversubscription_check(DCTK_OVERSUB_ABORT), DCTK_ERR_ARG);
    assert_non_null(strstr(dctk_detail(), "NUMBA_NUM_THREADS"));
    clear_vars();
    dctk_set_log_hook(NULL, NULL);

    dctk_oversub_mode m;
    assert_int_equal(dctk_oversub_mode_parse("abort", &m), DCTK_OK);
    assert_int_equal(m, DCTK_OVERSUB_ABORT);
    assert_int_equal(dctk_oversub_mode_parse("off", &m), DCTK_OK);
    assert_int_equal(m, DCTK_OVERSUB_OFF);
    assert_int_equal(dctk_oversub_mode_parse("sometimes", &m), DCTK_ERR_ARG);
    assert_non_null(strstr(dctk_detail(), "sometimes"));
}

/* --- parallel for ------------------------------------------------------------------ */

typedef struct {
    size_t n;
    atomic_int *hits;
    atomic_int bad_thread;
    int nthreads;
    long fail_at; /* -1: never */
    atomic_size_t started;
} count_job;

static dctk_status count_item(void *user, size_t item, int thread) {
    count_job *j = user;
    atomic_fetch_add(&j->started, 1);
    if (thread < 0 || thread >= j->nthreads) atomic_store(&j->bad_thread, 1);
    atomic_fetch_add(&j->hits[item], 1);
    if ((long)item == j->fail_at) return DCTK_FAIL(DCTK_ERR_CODEC, "item %zu failed on purpose", item);
    if (j->fail_at >= 0 && (long)item > j->fail_at) usleep(50);
    return DCTK_OK;
}

static count_job *new_job(size_t n, int nthreads, long fail_at) {
    count_job *j = calloc(1, sizeof *j);
    j->n = n;
    j->hits = calloc(n ? n : 1, sizeof *j->hits);
    j->nthreads = nthreads;
    j->fail_at = fail_at;
    return j;
}

static void free_job(count_job *j) {
    free(j->hits);
    free(j);
}

static void parallel_for_every_item_once(void **state) {
    (void)state;
    const int threads[] = {1, 2, 4, 8, 64};
    for (size_t t = 0; t < sizeof threads / sizeof threads[0]; t++) {
        count_job *j = new_job(20000, threads[t], -1);
        assert_int_equal(dctk_parallel_for(threads[t], j->n, count_item, j), DCTK_OK);
        for (size_t i = 0; i < j->n; i++) assert_int_equal(atomic_load(&j->hits[i]), 1);
        assert_int_equal(atomic_load(&j->bad_thread), 0);
        free_job(j);
    }
    count_job *j = new_job(0, 4, -1);
    assert_int_equal(dctk_parallel_for(4, 0, count_item, j), DCTK_OK);
    assert_int_equal(atomic_load(&j->started), 0);
    assert_int_equal(dctk_parallel_for(0, 10, count_item, j), DCTK_ERR_ARG);
    free_job(j);
}

/* After item 37 fails the loop stops: one thread runs exactly 38 items; with
 * more, each thread checks the flag before each item, so only the items started
 * before the flag was stored run. How many that is depends on the scheduler (a
 * failing thread preempted before it stores the flag lets the others go on), so
 * the items past 37 take 50 us each: never stopping runs all 100,000 of them,
 * stopping runs a few, and reaching the bound of a tenth would take a stall of
 * 60 ms or more. */
static void parallel_for_stops_on_error(void **state) {
    (void)state;
    for (int nthreads = 1; nthreads <= 8; nthreads *= 2) {
        count_job *j = new_job(100000, nthreads, 37);
        dctk_clear_detail();
        assert_int_equal(dctk_parallel_for(nthreads, j->n, count_item, j), DCTK_ERR_CODEC);
        assert_string_equal(dctk_detail(), "item 37 failed on purpose");
        assert_int_equal(atomic_load(&j->hits[37]), 1);
        assert_true(atomic_load(&j->started) < j->n / 10);
        if (nthreads == 1) assert_int_equal(atomic_load(&j->started), 38);
        free_job(j);
    }
}

/* Every item fails with its own status; the one returned comes with its own detail. */
static dctk_status fail_all(void *user, size_t item, int thread) {
    (void)user, (void)thread;
    dctk_status st = item % 2 ? DCTK_ERR_IO : DCTK_ERR_CODEC;
    return DCTK_FAIL(st, "%s from item %zu", st == DCTK_ERR_IO ? "io" : "codec", item);
}

static void parallel_for_status_matches_detail(void **state) {
    (void)state;
    for (int rep = 0; rep < 50; rep++) {
        dctk_status st = dctk_parallel_for(4, 1000, fail_all, NULL);
        assert_true(st == DCTK_ERR_IO || st == DCTK_ERR_CODEC);
        assert_true(strncmp(dctk_detail(), st == DCTK_ERR_IO ? "io from" : "codec from", 7) == 0);
    }
}

/* The first four items wait for each other: only four threads running at once pass. */
typedef struct {
    pthread_barrier_t barrier;
    pthread_t who[4];
    int thread_of[4];
} meet_job;

static dctk_status meet(void *user, size_t item, int thread) {
    meet_job *m = user;
    if (item < 4) {
        m->who[item] = pthread_self();
        m->thread_of[item] = thread;
        pthread_barrier_wait(&m->barrier);
    }
    return DCTK_OK;
}

static void parallel_for_runs_concurrently(void **state) {
    (void)state;
    meet_job m;
    pthread_barrier_init(&m.barrier, NULL, 4);
    assert_int_equal(dctk_parallel_for(4, 100, meet, &m), DCTK_OK);
    pthread_barrier_destroy(&m.barrier);
    int seen = 0;
    for (int i = 0; i < 4; i++) {
        seen |= 1 << m.thread_of[i];
        for (int k = 0; k < i; k++) assert_false(pthread_equal(m.who[i], m.who[k]));
    }
    assert_int_equal(seen, 0xF); /* thread ids 0..3, one each */
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(cgroup_v2_file),
        cmocka_unit_test(cgroup_v1_files),
        cmocka_unit_test(cgroup_v2_hierarchy),
        cmocka_unit_test(cgroup_v1_hierarchy),
        cmocka_unit_test(available_cores_takes_the_minimum),
        cmocka_unit_test(oversubscription_modes),
        cmocka_unit_test(parallel_for_every_item_once),
        cmocka_unit_test(parallel_for_stops_on_error),
        cmocka_unit_test(parallel_for_status_matches_detail),
        cmocka_unit_test(parallel_for_runs_concurrently),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
