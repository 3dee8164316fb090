/* Private to src/core/threads.c and its unit test: the cgroup quota parsers
 * behind dctk_available_cores, exposed so the test can feed them files. */
#ifndef DCTK_THREADS_INTERNAL_H
#define DCTK_THREADS_INTERNAL_H

/* CPUs allowed by one cgroup v2 "cpu.max" file ("max 100000" or
 * "QUOTA PERIOD"), rounded up; 0 when unlimited, missing or unreadable. */
int dctk_cgroup_v2_cpus(const char *cpu_max_path);
/* The same for a cgroup v1 pair (quota -1 = unlimited). */
int dctk_cgroup_v1_cpus(const char *quota_path, const char *period_path);
/* The tightest quota over the cgroups named in proc_cgroup_path (the format of
 * /proc/self/cgroup) and all their ancestors, with the cgroup file systems
 * mounted under root (/sys/fs/cgroup): v2 "0::/path" -> root/path/cpu.max,
 * v1 "N:cpu,cpuacct:/path" -> root/cpu,cpuacct/path (then root/cpu/path).
 * 0 when nothing limits. */
int dctk_cgroup_cpus(const char *root, const char *proc_cgroup_path);

#endif
