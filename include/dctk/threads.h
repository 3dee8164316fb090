/* Threads: how many cores this process may use, a check for nested thread
 * pools that would oversubscribe them, and a small dynamic parallel-for. */
#ifndef DCTK_THREADS_H
#define DCTK_THREADS_H

#ifndef DCTK_STATIC_LINKING_ONLY
#error "dctk/threads.h is not part of the stable API: #define DCTK_STATIC_LINKING_ONLY before any dctk header to use it (dctk/dctk.h)"
#endif

#include <stddef.h>
#include <stdint.h>

#include "dctk/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* --- cores ----------------------------------------------------------------- */

/* The smallest of: the CPUs in this thread's affinity mask (sched_getaffinity),
 * the cgroup CPU quota rounded up (v2 cpu.max, v1 cpu.cfs_quota_us /
 * cpu.cfs_period_us, over the process's cgroup and its ancestors), and
 * SLURM_CPUS_PER_TASK when set to a positive integer. At least 1. */
DCTK_API int dctk_available_cores(void);

/* Bytes this process may still allocate: the smallest of the address-space
 * rlimit (ulimit -v) less what is mapped, the cgroup memory limit less its
 * usage (v2 memory.max over the cgroup and its ancestors, v1
 * memory.limit_in_bytes), and MemAvailable. UINT64_MAX when nothing says;
 * *source (may be NULL) names the limit that decided. */
DCTK_API uint64_t dctk_available_memory(const char **source);

/* The memory this process may use in all, whatever it holds already: the
 * cgroup limit (v2 memory.max, v1 memory.limit_in_bytes, over the process's
 * cgroup and its ancestors), else the physical memory; the address-space
 * rlimit when lower. The memory budget (--max-memory's default) is a safety
 * fraction of it, shared by the ranks of a node. *source (may be NULL)
 * names the limit that decided. */
DCTK_API uint64_t dctk_memory_total(const char **source);

/* This process's resident memory now (/proc/self/statm), 0 when unknown. */
DCTK_API uint64_t dctk_memory_resident(void);
/* The most this process has held resident since it started (getrusage's
 * ru_maxrss, the kernel's VmHWM), 0 when unknown. */
DCTK_API uint64_t dctk_memory_peak_resident(void);

/* --- oversubscription ------------------------------------------------------ */

typedef enum { DCTK_OVERSUB_OFF = 0, DCTK_OVERSUB_WARN = 1, DCTK_OVERSUB_ABORT = 2 } dctk_oversub_mode;

/* "off", "warn" or "abort" (the --oversubscription-check values). */
DCTK_API dctk_status dctk_oversub_mode_parse(const char *s, dctk_oversub_mode *out);

/* Looks at OMP_NUM_THREADS, MKL_NUM_THREADS, OPENBLAS_NUM_THREADS,
 * BLOSC_NTHREADS and NUMBA_NUM_THREADS. Any that is set to something other than
 * 1 (a list such as "1,1" counts as 1) is reported: warn logs a warning and
 * returns DCTK_OK; abort returns DCTK_ERR_ARG with a detail naming each
 * variable and its value; off does nothing. */
DCTK_API dctk_status dctk_oversubscription_check(dctk_oversub_mode mode);

/* --- parallel for ---------------------------------------------------------- */

/* Work on one item; thread is 0..nthreads-1, stable for the call, so it can
 * index per-thread contexts. Must be safe to run concurrently with itself. */
typedef dctk_status (*dctk_item_fn)(void *user, size_t item, int thread);

/* Run fn on every item in [0, nitems) with up to nthreads threads (the caller
 * is thread 0). Items are handed out one at a time from a shared counter, so
 * slow items do not leave threads idle. After the first failure no new item is
 * handed out (items already running finish) and that failure is returned, its
 * detail message copied to the calling thread. nthreads < 1 is DCTK_ERR_ARG;
 * if the system refuses to start a thread, the loop runs on the ones it has. */
DCTK_API dctk_status dctk_parallel_for(int nthreads, size_t nitems, dctk_item_fn fn, void *user);

#ifdef __cplusplus
}
#endif
#endif
