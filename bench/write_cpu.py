#!/usr/bin/python3
"""CPU time of one write, several builds side by side: bench/write_cpu.py RUNS BUILD_DIR...

For changes too small for wall-clock figures on a shared machine: runs
`compress_with_optimal` of each build in turn, RUNS rounds alternated, on the
real field trinidad.nc `data` (libncarg-data, 11.5 MB float32) with byte shuffle
+ zlib 1 given as --combo, 2 threads, 4 MiB inner chunks in 16 MiB shards,
--no-verify (the write that bench/compress.py compares with nccopy), under
`perf stat`; prints per build the median and lowest task-clock (CPU time of all
threads, start-up included) and the median page faults, with the load average.
"""
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

from benchlib import trinidad_write_input


def perf_stat(exe, src, combo, out):
    shutil.rmtree(out, ignore_errors=True)
    r = subprocess.run(["perf", "stat", "-x,", "-e", "task-clock,page-faults", exe, "compress_with_optimal", src, out,
                        "data", "--combo", combo, "--threads-per-rank", "2", "--inner-chunk-mib", "4", "--shard-mib",
                        "16", "--no-verify"], capture_output=True, text=True)
    if r.returncode:
        sys.exit("bench: %s failed:\n%s" % (exe, r.stderr[-2000:]))
    got = {p[2]: float(p[0]) for p in (l.split(",") for l in r.stderr.splitlines()) if len(p) > 3}
    return got["task-clock"], got["page-faults"]


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    runs, builds = int(sys.argv[1]), sys.argv[2:]
    tmp = tempfile.mkdtemp(prefix="dctk_bench_write_cpu_")
    try:
        src, combo = trinidad_write_input(tmp)
        cpu = {b: [] for b in builds}
        faults = {b: [] for b in builds}
        load0 = " ".join(open("/proc/loadavg").read().split()[:3])
        for _ in range(runs):
            for b in builds:
                c, f = perf_stat(os.path.join(b, "dc_toolkit"), src, combo, os.path.join(tmp, "out"))
                cpu[b].append(c)
                faults[b].append(f)
        print("trinidad `data` 11.5 MB, shuffle + zlib 1, 2 threads, --no-verify, %d alternated runs; "
              "load average %s before, %s after" % (runs, load0, " ".join(open("/proc/loadavg").read().split()[:3])))
        for b in builds:
            print("  %-40s task-clock median %6.1f ms (lowest %6.1f)  page faults %6d" % (
                b, statistics.median(cpu[b]), min(cpu[b]), statistics.median(faults[b])))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


main()
