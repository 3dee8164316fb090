#!/usr/bin/python3
"""Estimated against measured peak memory of evaluate_combos and compress_with_optimal (issue 24).

    /usr/bin/python3 bench/memory.py BUILD_DIR [COPIES] [SAMPLE] [EXTRA FLAGS...]

Input: the real field t of libncarg-data's rectilinear_grid_3D.nc (one time
step, 17 x 96 x 192 float32, 1.2 MiB) stacked COPIES times along a new time
axis (default 200: 250 MB), each copy shifted by 0.01 K so no two are equal
bit for bit: a real field's values, not a real 250 MB field's variability
(no single field of libncarg-data is over 200 MB). The sweep takes a SAMPLE
(default 12MB) of it over the whole default space with the default search
(adaptive) and inner chunks; EXTRA FLAGS (a class subset, --search
exhaustive, ...) are passed to every sweep.

Sweeps, in one go: 1 thread, 2 threads, 2 threads with --max-memory set to
what one heaviest unit needs by the up-front bound (so those run one at a
time), and 2 threads with --max-memory 0.8 x that, below one such unit (they
run alone; much lower, the sampler's own cap, which sets aside the workers'
buffers by the bounds, refuses the smallest sample). For
each: the [memory] line's figures and its up-front bound (what the process
held before the sweep + the heaviest units that may run at once x the
per-thread peak estimate, by the streams' bounds), the [memcheck] line's
estimate (what was held before + the most the running units' estimates,
with their real stream sizes, summed to at once), the peak resident memory
measured by GNU time (wait4's rusage of the child), the ratios, whether the
measured peak stayed within the budget, and the winner (the same in every
run). Then the writer: compress_with_optimal of the winner at 1 and 2
threads on the stacked field and on a real field of libncarg-data
(meccatemp.cdf t, swept first), its [memory] line's peak estimate against
GNU time's peak.
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
EXTRA = sys.argv[4:]
EXE = os.path.join(build, "dc_toolkit")
NCARG = os.environ.get("DCTK_NCARG", "/usr/share/ncarg/data")
REAL = (os.path.join(NCARG, "cdf", "meccatemp.cdf"), "t")
UNITS = {"B": 1 / 1048576, "KiB": 1 / 1024, "MiB": 1, "GiB": 1024}
MEM = re.compile(r"\[memory\] sample ([\d.]+ (?:B|KiB|MiB|GiB)), per-thread peak estimate ([\d.]+) MiB \((.*?)\), threads (\d+) "
                 r"(?:\((\d+) at a time for the heaviest units\))?.*?budget ([\d.]+) MiB.*?([\d.]+) MiB held")
CHECK = re.compile(r"\[memcheck\] peak estimate ([\d.]+) MiB")
WRITER = re.compile(r"\[memory\] writer: peak estimate ([\d.]+) MiB with (\d+) encoder thread")


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


def timed(cmd):
    r = subprocess.run(["/usr/bin/time", "-f", "BENCH_RUSAGE %M %e"] + cmd, capture_output=True, text=True)
    if r.returncode:
        sys.exit("bench: %s failed:\n%s" % (" ".join(cmd), r.stderr[-2000:]))
    text = r.stdout + r.stderr
    rss_kb, wall = [x for x in text.splitlines() if x.startswith("BENCH_RUSAGE ")][-1].split()[1:]
    return text, int(rss_kb) / 1024, float(wall)


def sweep(out, src, var, name, threads, extra):
    text, rss, wall = timed([EXE, "evaluate_combos", src, "--where-to-write", out, "--field-to-compress", var,
                             "--eval-data-size-limit", SAMPLE, "--l1-threshold", "1e-3", "--threads-per-rank",
                             str(threads)] + EXTRA + extra)
    m, c = MEM.search(text), CHECK.search(text)
    best = [x for x in text.splitlines() if "best combo" in x][-1].split("best combo ")[1].split("; ratio")[0]
    alone = sum("runs alone" in x for x in text.splitlines())
    size, unit = m.group(1).split()
    sample, peak, heaviest, nthreads = float(size) * UNITS[unit], float(m.group(2)), m.group(3), int(m.group(4))
    at_once = int(m.group(5)) if m.group(5) else nthreads
    budget, held = float(m.group(6)), float(m.group(7))
    return dict(name=name, threads=threads, sample=sample, peak=peak, heaviest=heaviest, at_once=at_once,
                budget=budget, held=held, bound=held + at_once * peak, check=float(c.group(1)), rss=rss, wall=wall,
                best=best, alone=alone)


def write(src, out, var, threads):
    text, rss, wall = timed([EXE, "compress_with_optimal", src, out, var, "--combo",
                             os.path.join(out, "best_%s.json" % var), "--threads-per-rank", str(threads)])
    m = WRITER.search(text)
    return dict(field="%s %s" % (os.path.basename(src), var), threads=int(m.group(2)), est=float(m.group(1)), rss=rss,
                wall=wall)


def main():
    tmp = tempfile.mkdtemp(prefix="dctk_bench_memory_")
    src = os.path.join(tmp, "t_x%d.nc" % COPIES)
    size = make_input(src)
    print("input: rectilinear_grid_3D.nc t, one time step stacked %d times (+0.01 K per copy): %.1f MB; sample %s; %s"
          % (COPIES, size / 1e6, SAMPLE, " ".join(EXTRA) or "the default space and search"))
    print("load average before: %s" % " ".join(open("/proc/loadavg").read().split()[:3]))
    out = lambda name: os.path.join(tmp, name.replace(" ", "_").replace(",", ""))
    runs = [sweep(out("one"), src, "t", "1 thread", 1, []), sweep(out("two"), src, "t", "2 threads", 2, [])]
    one = runs[0]["held"] + runs[0]["peak"]
    for f in (1.1, 0.8):
        mb = "%dMB" % int(one * f * 1.048576 + (f > 1))
        runs.append(sweep(out("two" + mb), src, "t", "2 threads, --max-memory " + mb, 2, ["--max-memory", mb]))
    print("| run | sample MiB | per-thread peak by the bounds MiB (heaviest) | at once | held before MiB | budget MiB | "
          "up-front bound MiB | [memcheck] estimate MiB | measured peak RSS MiB | measured / bound | "
          "measured / [memcheck] | within budget | units alone | wall s | best |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in runs:
        print("| %s | %.1f | %.1f (%s) | %d | %.1f | %.0f | %.1f | %.1f | %.1f | %.2f | %.2f | %s | %d | %.1f | %s |"
              % (r["name"], r["sample"], r["peak"], r["heaviest"], r["at_once"], r["held"], r["budget"], r["bound"],
                 r["check"], r["rss"], r["rss"] / r["bound"], r["rss"] / r["check"],
                 "yes" if r["rss"] <= r["budget"] else "NO", r["alone"], r["wall"], r["best"]))
    same = len({r["best"] for r in runs}) == 1
    print("same winner in every run: %s" % ("yes" if same else "NO"))
    near = all(abs(r["rss"] / r["check"] - 1) <= 0.15 for r in runs)
    print("measured within 15 %% of the [memcheck] estimate in every run: %s" % ("yes" if near else "NO"))
    # the writer: the winner of the 2-thread sweep, and a real field's
    real = out("real")
    sweep(real, REAL[0], REAL[1], "real", 2, [])
    writes = [write(src, out("two"), "t", t) for t in (1, 2)] + [write(REAL[0], real, REAL[1], t) for t in (1, 2)]
    print()
    print("| field written (compress_with_optimal, the sweep's winner) | encoder threads | [memory] writer peak estimate "
          "MiB | measured peak RSS MiB | measured / estimated | wall s |")
    print("|---|---|---|---|---|---|")
    for w in writes:
        print("| %s | %d | %.1f | %.1f | %.2f | %.1f |" % (w["field"], w["threads"], w["est"], w["rss"],
                                                          w["rss"] / w["est"], w["wall"]))


if __name__ == "__main__":
    main()
