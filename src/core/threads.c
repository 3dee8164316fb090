/* Core count, oversubscription check, dynamic parallel-for.
 *
 * Why the core count is a minimum of three sources: a batch job or container
 * usually limits CPU in only one of them. Slurm may pin the task to a CPU set
 * (affinity) or only export SLURM_CPUS_PER_TASK; Docker and Kubernetes set a
 * CFS quota (cgroup) while the affinity mask still shows every CPU of the host.
 * Counting any one alone runs many more threads than the CPU time available. */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "core/threads_internal.h"
#include "dctk/alloc.h"
#include "dctk/threads.h"
#include "dctk/util.h"

/* --- cgroup quota ------------------------------------------------------------ */

static bool read_line(const char *path, char *buf, size_t cap) {
    FILE *f = fopen(path, "r");
    if (!f) return false;
    bool ok = fgets(buf, (int)cap, f) != NULL;
    fclose(f);
    return ok;
}

/* ceil(quota / period), 0 for no limit. */
static int quota_cpus(long long quota, long long period) {
    if (quota <= 0 || period <= 0) return 0;
    long long n = (quota + period - 1) / period;
    return n > INT_MAX ? INT_MAX : (int)n;
}

int dctk_cgroup_v2_cpus(const char *cpu_max_path) {
    char line[128], q[32];
    long long period;
    if (!read_line(cpu_max_path, line, sizeof line)) return 0;
    if (sscanf(line, "%31s %lld", q, &period) != 2 || !strcmp(q, "max")) return 0;
    char *end;
    long long quota = strtoll(q, &end, 10);
    return *end ? 0 : quota_cpus(quota, period);
}

int dctk_cgroup_v1_cpus(const char *quota_path, const char *period_path) {
    char a[64], b[64];
    long long quota, period;
    if (!read_line(quota_path, a, sizeof a) || !read_line(period_path, b, sizeof b)) return 0;
    if (sscanf(a, "%lld", &quota) != 1 || sscanf(b, "%lld", &period) != 1) return 0;
    return quota_cpus(quota, period);
}

static int min_limit(int a, int b) { return a == 0 ? b : b == 0 ? a : a < b ? a : b; }

/* Tightest quota in dir and its ancestors down to (and including) top; a
 * limit on a parent cgroup binds every child. */
static int walk_up(char *dir, size_t top_len, bool v2) {
    int best = 0;
    char a[PATH_MAX + 32], b[PATH_MAX + 32];
    for (;;) {
        if (v2) {
            snprintf(a, sizeof a, "%s/cpu.max", dir);
            best = min_limit(best, dctk_cgroup_v2_cpus(a));
        } else {
            snprintf(a, sizeof a, "%s/cpu.cfs_quota_us", dir);
            snprintf(b, sizeof b, "%s/cpu.cfs_period_us", dir);
            best = min_limit(best, dctk_cgroup_v1_cpus(a, b));
        }
        char *slash = strrchr(dir, '/');
        if (strlen(dir) <= top_len || !slash || (size_t)(slash - dir) < top_len) return best;
        *slash = '\0';
    }
}

static bool has_cpu_controller(const char *list) {
    char tmp[256];
    snprintf(tmp, sizeof tmp, "%s", list);
    for (char *save, *t = strtok_r(tmp, ",", &save); t; t = strtok_r(NULL, ",", &save))
        if (!strcmp(t, "cpu")) return true;
    return false;
}

/* One line of /proc/self/cgroup: "ID:CONTROLLERS:PATH". */
static int line_limit(const char *root, char *line) {
    char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
    if (!c2) return 0;
    *c1 = *c2 = '\0';
    char *ctrl = c1 + 1, *path = c2 + 1;
    path[strcspn(path, "\n")] = '\0';
    if (!strcmp(path, "/")) path = "";
    char dir[PATH_MAX];
    if (!strcmp(line, "0") && *ctrl == '\0') {
        snprintf(dir, sizeof dir, "%s%s", root, path);
        return walk_up(dir, strlen(root), true);
    }
    if (!has_cpu_controller(ctrl)) return 0;
    snprintf(dir, sizeof dir, "%s/%s", root, ctrl);
    size_t top = strlen(dir);
    snprintf(dir + top, sizeof dir - top, "%s", path);
    int lim = walk_up(dir, top, false);
    if (lim == 0 && strcmp(ctrl, "cpu") != 0) { /* some systems mount the v1 controller as plain "cpu" */
        snprintf(dir, sizeof dir, "%s/cpu", root);
        top = strlen(dir);
        snprintf(dir + top, sizeof dir - top, "%s", path);
        lim = walk_up(dir, top, false);
    }
    return lim;
}

int dctk_cgroup_cpus(const char *root, const char *proc_cgroup_path) {
    FILE *f = fopen(proc_cgroup_path, "r");
    if (!f) return 0;
    int best = 0;
    char line[PATH_MAX + 256];
    while (fgets(line, sizeof line, f)) best = min_limit(best, line_limit(root, line));
    fclose(f);
    return best;
}

/* --- affinity, Slurm ---------------------------------------------------------- */

/* CPUs in the affinity mask; the mask is grown for machines beyond CPU_SETSIZE. */
static int affinity_cpus(void) {
    for (int ncpu = 1024; ncpu <= (1 << 20); ncpu *= 2) {
        cpu_set_t *set = CPU_ALLOC(ncpu);
        if (!set) break;
        size_t size = CPU_ALLOC_SIZE(ncpu);
        int r = sched_getaffinity(0, size, set);
        int n = r == 0 ? CPU_COUNT_S(size, set) : 0;
        CPU_FREE(set);
        if (r == 0) return n;
        if (errno != EINVAL) break;
    }
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 && n < INT_MAX ? (int)n : 1;
}

static int slurm_cpus(void) {
    const char *s = getenv("SLURM_CPUS_PER_TASK");
    if (!s || !*s) return 0;
    char *end;
    errno = 0;
    long n = strtol(s, &end, 10);
    if (*end || errno || n <= 0 || n > INT_MAX) {
        dctk_log(DCTK_LOG_DEBUG, "ignoring SLURM_CPUS_PER_TASK='%s': not a positive integer", s);
        return 0;
    }
    return (int)n;
}

int dctk_available_cores(void) {
    int n = affinity_cpus();
    n = min_limit(n, dctk_cgroup_cpus("/sys/fs/cgroup", "/proc/self/cgroup"));
    n = min_limit(n, slurm_cpus());
    return n < 1 ? 1 : n;
}

/* --- oversubscription --------------------------------------------------------- */

static const char *const pool_vars[] = {"OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS",
                                        "BLOSC_NTHREADS", "NUMBA_NUM_THREADS"};

dctk_status dctk_oversub_mode_parse(const char *s, dctk_oversub_mode *out) {
    static const char *const names[] = {"off", "warn", "abort"};
    for (int i = 0; i < 3; i++)
        if (s && !strcmp(s, names[i])) {
            *out = (dctk_oversub_mode)i;
            return DCTK_OK;
        }
    return DCTK_FAIL(DCTK_ERR_ARG, "--oversubscription-check must be warn, abort or off, not '%s'", s ? s : "");
}

/* "1", " 1 ", "1,1" (OpenMP's nested list): every entry is one thread. */
static bool means_one(const char *v) {
    for (;;) {
        while (isspace((unsigned char)*v)) v++;
        if (*v++ != '1') return false;
        while (isspace((unsigned char)*v)) v++;
        if (*v == '\0') return true;
        if (*v++ != ',') return false;
    }
}

dctk_status dctk_oversubscription_check(dctk_oversub_mode mode) {
    if (mode == DCTK_OVERSUB_OFF) return DCTK_OK;
    char found[512] = "";
    size_t len = 0;
    for (size_t i = 0; i < sizeof pool_vars / sizeof pool_vars[0]; i++) {
        const char *v = getenv(pool_vars[i]);
        if (!v || means_one(v) || len >= sizeof found) continue;
        len += (size_t)snprintf(found + len, sizeof found - len, "%s%s='%s'", len ? ", " : "", pool_vars[i], v);
    }
    if (len == 0) return DCTK_OK;
    const char *why = "nested thread pools would oversubscribe the cores; set them to 1";
    if (mode == DCTK_OVERSUB_ABORT)
        return DCTK_FAIL(DCTK_ERR_ARG, "%s: %s (or pass --oversubscription-check warn)", found, why);
    dctk_log(DCTK_LOG_WARN, "%s: %s", found, why);
    return DCTK_OK;
}

/* --- parallel for --------------------------------------------------------------- */

typedef struct {
    dctk_item_fn fn;
    void *user;
    size_t nitems;
    atomic_size_t next;
    atomic_bool failed;
    pthread_mutex_t lock; /* guards st and detail */
    dctk_status st;
    char detail[1024];
} pfor_shared;

typedef struct {
    pfor_shared *sh;
    int thread;
} pfor_worker;

static void pfor_fail(pfor_shared *sh, dctk_status st) {
    pthread_mutex_lock(&sh->lock);
    if (sh->st == DCTK_OK) {
        sh->st = st;
        snprintf(sh->detail, sizeof sh->detail, "%s", dctk_detail());
    }
    pthread_mutex_unlock(&sh->lock);
    atomic_store(&sh->failed, true);
}

static void *pfor_run(void *arg) {
    pfor_worker *w = arg;
    pfor_shared *sh = w->sh;
    while (!atomic_load_explicit(&sh->failed, memory_order_relaxed)) {
        size_t i = atomic_fetch_add_explicit(&sh->next, 1, memory_order_relaxed);
        if (i >= sh->nitems) break;
        dctk_status st = sh->fn(sh->user, i, w->thread);
        if (st != DCTK_OK) pfor_fail(sh, st);
    }
    return NULL;
}

dctk_status dctk_parallel_for(int nthreads, size_t nitems, dctk_item_fn fn, void *user) {
    if (nthreads < 1 || !fn) return DCTK_FAIL(DCTK_ERR_ARG, "parallel for: %d threads", nthreads);
    if ((size_t)nthreads > nitems) nthreads = nitems > 0 ? (int)nitems : 1;
    pfor_shared sh = {.fn = fn, .user = user, .nitems = nitems, .st = DCTK_OK};
    atomic_init(&sh.next, 0);
    atomic_init(&sh.failed, false);
    pthread_mutex_init(&sh.lock, NULL);
    pthread_t *tid = dctk_malloc((size_t)nthreads * sizeof *tid);
    pfor_worker *w = dctk_malloc((size_t)nthreads * sizeof *w);
    int started = 1;
    if (tid && w) {
        for (; started < nthreads; started++) {
            w[started] = (pfor_worker){&sh, started};
            if (pthread_create(&tid[started], NULL, pfor_run, &w[started]) != 0) break;
        }
    }
    if (started < nthreads) dctk_log(DCTK_LOG_DEBUG, "parallel for: running on %d of %d threads", started, nthreads);
    pfor_worker self = {&sh, 0};
    pfor_run(&self);
    for (int t = 1; t < started; t++) pthread_join(tid[t], NULL);
    dctk_free(tid);
    dctk_free(w);
    pthread_mutex_destroy(&sh.lock);
    if (sh.st != DCTK_OK) dctk_set_detail("%s", sh.detail);
    return sh.st;
}

/* --- memory ------------------------------------------------------------------
 * Like the core count, the memory this process may use is the tightest of
 * several limits, each set by a different layer: the address-space rlimit
 * (ulimit -v), the cgroup's memory.max less what the cgroup already holds
 * (containers, Slurm's cgroup plugin), and what the kernel reports as
 * available. A sample sized from the node's total would be killed. */

static uint64_t min_u64(uint64_t a, uint64_t b) { return a < b ? a : b; }

static uint64_t file_u64(const char *path) {
    char buf[64];
    if (!read_line(path, buf, sizeof buf) || !isdigit((unsigned char)buf[0])) return UINT64_MAX; /* "max" */
    return strtoull(buf, NULL, 10);
}

/* Headroom of a cgroup directory and its ancestors down to top_len. */
static uint64_t cgroup_headroom(char *dir, size_t top_len, const char *max_name, const char *cur_name) {
    uint64_t best = UINT64_MAX;
    for (;;) {
        char a[PATH_MAX + 32], b[PATH_MAX + 32];
        snprintf(a, sizeof a, "%s/%s", dir, max_name);
        snprintf(b, sizeof b, "%s/%s", dir, cur_name);
        uint64_t max = file_u64(a), cur = cur_name ? file_u64(b) : 0;
        if (max != UINT64_MAX && max < ((uint64_t)1 << 62)) best = min_u64(best, cur != UINT64_MAX && cur < max ? max - cur : 0);
        char *slash = strrchr(dir, '/');
        if (!slash || (size_t)(slash - dir) < top_len) break;
        *slash = '\0';
    }
    return best;
}

static uint64_t cgroup_memory_walk(bool limit_only) {
    FILE *f = fopen("/proc/self/cgroup", "r");
    if (!f) return UINT64_MAX;
    uint64_t best = UINT64_MAX;
    char line[PATH_MAX + 256], dir[PATH_MAX];
    while (fgets(line, sizeof line, f)) {
        char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
        if (!c2) continue;
        *c2 = '\0';
        char *path = c2 + 1;
        path[strcspn(path, "\n")] = '\0';
        if (!strcmp(path, "/")) path = "";
        if (!strcmp(c1 + 1, "")) {
            snprintf(dir, sizeof dir, "/sys/fs/cgroup%s", path);
            best = min_u64(best, cgroup_headroom(dir, strlen("/sys/fs/cgroup"), "memory.max",
                                                 limit_only ? NULL : "memory.current"));
        } else if (strstr(c1 + 1, "memory")) {
            snprintf(dir, sizeof dir, "/sys/fs/cgroup/memory%s", path);
            best = min_u64(best, cgroup_headroom(dir, strlen("/sys/fs/cgroup/memory"), "memory.limit_in_bytes",
                                                 limit_only ? NULL : "memory.usage_in_bytes"));
        }
    }
    fclose(f);
    return best;
}

/* ulimit -v less the address space already mapped (libraries, heaps, stacks). */
static uint64_t rlimit_memory(void) {
    struct rlimit r;
    if (getrlimit(RLIMIT_AS, &r) != 0 || r.rlim_cur == RLIM_INFINITY) return UINT64_MAX;
    unsigned long long pages = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    if (f) {
        if (fscanf(f, "%llu", &pages) != 1) pages = 0;
        fclose(f);
    }
    uint64_t used = (uint64_t)pages * (uint64_t)sysconf(_SC_PAGESIZE);
    return (uint64_t)r.rlim_cur > used ? (uint64_t)r.rlim_cur - used : 0;
}

static uint64_t meminfo_available(void) {
    FILE *f = fopen("/proc/meminfo", "r");
    if (!f) return UINT64_MAX;
    char line[256];
    uint64_t kb = UINT64_MAX;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "MemAvailable: %" SCNu64 " kB", &kb) == 1) break;
    fclose(f);
    return kb == UINT64_MAX ? kb : kb * 1024;
}

uint64_t dctk_available_memory(const char **source) {
    uint64_t a = rlimit_memory(), c = cgroup_memory_walk(false), m = meminfo_available();
    uint64_t best = min_u64(a, min_u64(c, m));
    if (source) *source = best == UINT64_MAX ? "unknown" : best == a ? "ulimit -v" : best == c ? "cgroup memory.max"
                                                                                                : "MemAvailable";
    return best;
}

uint64_t dctk_memory_total(const char **source) {
    struct rlimit r;
    uint64_t as = getrlimit(RLIMIT_AS, &r) == 0 && r.rlim_cur != RLIM_INFINITY ? (uint64_t)r.rlim_cur : UINT64_MAX;
    uint64_t cg = cgroup_memory_walk(true);
    long pages = sysconf(_SC_PHYS_PAGES), psize = sysconf(_SC_PAGESIZE);
    uint64_t phys = pages > 0 && psize > 0 ? (uint64_t)pages * (uint64_t)psize : UINT64_MAX;
    uint64_t best = min_u64(as, min_u64(cg, phys));
    if (source) *source = best == UINT64_MAX ? "unknown" : best == cg ? "cgroup memory.max" : best == as ? "ulimit -v"
                                                                                                  : "physical memory";
    return best;
}

uint64_t dctk_memory_resident(void) {
    unsigned long long size = 0, pages = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    if (f) {
        if (fscanf(f, "%llu %llu", &size, &pages) != 2) pages = 0;
        fclose(f);
    }
    return (uint64_t)pages * (uint64_t)sysconf(_SC_PAGESIZE);
}

uint64_t dctk_memory_peak_resident(void) {
    struct rusage u;
    return getrusage(RUSAGE_SELF, &u) == 0 && u.ru_maxrss > 0 ? (uint64_t)u.ru_maxrss * 1024 : 0; /* KiB on Linux */
}
