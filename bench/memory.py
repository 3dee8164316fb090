#!/usr/bin/python3
"""Estimated against measured peak memory of evaluate_combos (issue 24).

    /usr/bin/python3 bench/memory.py BUILD_DIR [COPIES] [SAMPLE] [CLASSES...]

Input: the real field t of libncarg-data's rectilinear_grid_3D.nc (one time
step, 17 x 96 x 192 float32, 1.2 MiB) stacked COPIES times along a new time
axis (default 200: 240 MB), each copy shifted by 0.01 K so no two are equal
bit for bit: a real field's values, not a real 240 MB field's variability.
The sweep takes a SAMPLE (default 12MB) of it, over a class subset of the
default space in 4 MiB inner chunks (default: zstd after no serializer and
after zfpy, no filter, --inner-chunk-mib 4; the full space in 16 MiB chunks
would take hours on this shared 2-core machine).

Runs, in one go: 1 thread, 2 threads, 2 threads with --max-memory set to what
one heavy unit needs (so the heaviest units run one at a time), and 2 threads
with --max-memory below that (units larger than the budget run alone). For
each: the [memory] line's figures, the process's estimated peak (what it held
before the sweep + the heaviest units that may run at once x the per-thread
peak estimate), the peak resident memory measured by GNU time (wait4's
rusage of the child), their ratio, and the winner (the same in every run).
"""
import os
import re
import subprocess
import sys
import tempfile

import netCDF4
import numpy as np

build = sys.argv[1] if len(sys.argv) > 1 else "build"
COPIES = int(sys.argv[2]) if len(sys.argv) > 2 else 200
SAMPLE = sys.argv[3] if len(sys.argv) > 3 else "12MB"
CLASSES = sys.argv[4:] or ["--compressor-class", "zstd", "--filter-class", "none", "--serializer-class", "none,zfpy",
                           "--inner-chunk-mib", "4"]
EXE = os.path.join(build, "dc_toolkit")
NCARG = os.environ.get("DCTK_NCARG", "/usr/share/ncarg/data")
UNITS = {"B": 1 / 1048576, "KiB": 1 / 1024, "MiB": 1, "GiB": 1024}
MEM = re.compile(r"\[memory\] sample ([\d.]+ (?:B|KiB|MiB|GiB)), per-thread peak estimate ([\d.]+) MiB \((.*?)\), threads (\d+) "
                 r"(?:\((\d+) at a time for the heaviest units\))?.*?budget ([\d.]+) MiB.*?([\d.]+) MiB held")


def make_input(path):
    with netCDF4.Dataset(os.path.join(NCARG, "nug", "rectilinear_grid_3D.nc")) as s, \
            netCDF4.Dataset(path, "w", format="NETCDF3_64BIT_OFFSET") as d:
        v = s["t"]
        x = np.ma.filled(v[0].astype(np.float32), np.nan)
        d.createDimension("time", COPIES)
        for name, n in zip(v.dimensions[1:], x.shape):
            d.createDimension(name, n)
        out = d.createVariable("t", "f4", ("time",) + v.dimensions[1:])
        out.units = "K"
        for i in range(COPIES):
            out[i] = x + np.float32(0.01 * i)
    return os.path.getsize(path)


def sweep(tmp, src, name, threads, extra):
    out = os.path.join(tmp, name)
    cmd = ["/usr/bin/time", "-f", "BENCH_RUSAGE %M %e", EXE, "evaluate_combos", src, "--where-to-write", out,
           "--field-to-compress", "t", "--eval-data-size-limit", SAMPLE, "--search", "exhaustive",
           "--l1-threshold", "1e-3", "--threads-per-rank", str(threads)] + CLASSES + extra
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode:
        sys.exit("bench: %s failed:\n%s" % (" ".join(cmd), r.stderr[-2000:]))
    text = r.stdout + r.stderr
    m = MEM.search(text)
    rss_kb, wall = [x for x in text.splitlines() if x.startswith("BENCH_RUSAGE ")][-1].split()[1:]
    best = [x for x in text.splitlines() if "best combo" in x][-1].split("best combo ")[1].split(":")[0]
    alone = sum("runs alone" in x for x in text.splitlines())
    size, unit = m.group(1).split()
    sample, peak, heaviest, nthreads = float(size) * UNITS[unit], float(m.group(2)), m.group(3), int(m.group(4))
    at_once = int(m.group(5)) if m.group(5) else nthreads
    budget, held = float(m.group(6)), float(m.group(7))
    est = held + at_once * peak
    return dict(name=name, threads=threads, sample=sample, peak=peak, heaviest=heaviest, at_once=at_once,
                budget=budget, held=held, est=est, rss=int(rss_kb) / 1024, wall=float(wall), best=best, alone=alone)


def main():
    tmp = tempfile.mkdtemp(prefix="dctk_bench_memory_")
    src = os.path.join(tmp, "t_x%d.nc" % COPIES)
    size = make_input(src)
    print("input: rectilinear_grid_3D.nc t, one time step stacked %d times (+0.01 K per copy): %.1f MB; sample %s; %s"
          % (COPIES, size / 1e6, SAMPLE, " ".join(CLASSES)))
    print("load average before: %s" % " ".join(open("/proc/loadavg").read().split()[:3]))
    runs = [sweep(tmp, src, "1 thread", 1, []), sweep(tmp, src, "2 threads", 2, [])]
    one = runs[0]["held"] + runs[0]["peak"]
    runs.append(sweep(tmp, src, "2 threads, --max-memory %dMB" % int(one * 1.1 * 1.048576 + 1), 2,
                      ["--max-memory", "%dMB" % int(one * 1.1 * 1.048576 + 1)]))
    runs.append(sweep(tmp, src, "2 threads, --max-memory %dMB" % int(one * 0.6 * 1.048576), 2,
                      ["--max-memory", "%dMB" % int(one * 0.6 * 1.048576)]))
    print("| run | sample MiB | per-thread peak est. MiB (heaviest) | at once | held before MiB | budget MiB | "
          "estimated peak MiB | measured peak RSS MiB | measured / estimated | units alone | wall s | best |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in runs:
        print("| %s | %.1f | %.1f (%s) | %d | %.1f | %.0f | %.1f | %.1f | %.2f | %d | %.1f | %s |"
              % (r["name"], r["sample"], r["peak"], r["heaviest"], r["at_once"], r["held"], r["budget"], r["est"],
                 r["rss"], r["rss"] / r["est"], r["alone"], r["wall"], r["best"]))
    same = len({r["best"] for r in runs}) == 1
    print("same winner in every run: %s" % ("yes" if same else "NO"))


if __name__ == "__main__":
    main()
