#!/usr/bin/python3
"""Sweep benchmark: bench/sweep.py BUILD_DIR

Prints, measured side by side in one run:
  1. the exhaustive sweep's wall time against the time spent inside codec
     calls (overhead ratio; target <= 1.15), at one thread, and the kernel's
     share of the codecs' CPU time (system over user + system, each thread's
     own, around each codec call; target < 10 %: codecs keep their state and
     memory per thread, issue 36);
  2. its speed against a Python reference that applies the same combos with
     Debian's numcodecs per combo, as the Python tool does (whole pipeline,
     encode, decode, norms, per combo), at one thread (target >= 2.5x), in
     wall time and in CPU time (user + system of each side: the steadier
     figure on a shared machine);
  3. peak memory against the sample size on a larger field (a real field
     tiled in time), with 2 threads (target <= 1.5 x sample + 64 MiB/thread).

bench/sweep.py BUILD --kernel BEFORE_BUILD: only the kernel's share, side by
side: exhaustive sweeps of Tstorm.cdf t in 24 KiB chunks at one thread
(lossless on a 200 KB sample, and 1e-3 on 50 KB: bench/search.py's cases), each
build twice, alternated, with the codecs' CPU time (user + system, each
thread's own around each codec call), its system part and share, and the
process's user and system time.
"""
import csv
import json
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np
import netCDF4


here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "tests", "interop"))
from pipeline_ref import run_combo  # noqa: E402
from sample_plan import rebuild  # noqa: E402

build = sys.argv[1] if len(sys.argv) > 1 else "build"  # bench/sweep.py BUILD [--memory-only]
exe = os.path.join(build, "dc_toolkit")
REAL = "/usr/share/ncarg/data/nug/rectilinear_grid_3D.nc"
VAR = "t"


def run(cmd):
    """Run a command; return (wall seconds, its stderr, peak RSS of children so far in bytes)."""
    t0 = time.perf_counter()
    r = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if r.returncode:
        sys.exit("bench: %s failed:\n%s" % (" ".join(cmd), r.stderr[-3000:]))
    return wall, r.stderr + r.stdout, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024


def timer(text, label):
    m = re.search(r"^%s\s+\d+\s+[\d.]+\s+([\d.]+)" % re.escape(label), text, re.M)
    return float(m.group(1)) if m else float("nan")


def cpu_self():
    """User + system CPU seconds of this process so far."""
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def cpu_children():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def speed():
    out = tempfile.mkdtemp(prefix="dctk_bench_sweep_")
    # the default space (what users run) less dctk.sz and dctk.ebcc, which numcodecs cannot run,
    # every combo on the whole sample (exhaustive), a 150 KB sample of 24 KiB production chunks
    # (the field's three levels, as the Python tool's minimum) so the reference finishes in minutes
    cmd = [exe, "evaluate_combos", REAL, "--where-to-write", out, "--field-to-compress", VAR, "--serializer-class", "none,zfpy",
           "--threads-per-rank", "1", "--eval-data-size-limit", "150KB", "--override-existing-l1-error", "1e-3",
           "--search", "exhaustive", "--inner-chunk-mib", "0.0234375", "--verbose"]
    c0 = cpu_children()
    wall, text, _ = run(cmd)
    sweep_cpu = cpu_children() - c0
    sweep_s, codec_s = timer(text, "sweep [wall s]"), timer(text, "sweep: inside codecs [thread-s]")
    codec_cpu = timer(text, "sweep: inside codecs [thread CPU s]")
    codec_user = timer(text, "sweep: inside codecs, user space [thread CPU s]")
    best = json.load(open(os.path.join(out, "best_%s.json" % VAR)))
    rows = [r for r in csv.DictReader(open(os.path.join(out, "config_space_%s_rank0.csv" % VAR)))
            if r["error"] == ""]
    with netCDF4.Dataset(REAL) as nc:
        data = np.ma.filled(nc[VAR][:].astype(nc[VAR].dtype), np.nan)
    sample = np.ascontiguousarray(rebuild(data, best["sample"]))
    t0, r0 = time.perf_counter(), cpu_self()
    for r in rows:
        run_combo(sample, best["inner_chunk_shape"], r)
    ref_s, ref_cpu = time.perf_counter() - t0, cpu_self() - r0
    print("1-2. exhaustive sweep of the default space, %d combos that ran, on %s:%s (sample %s, %.2f MB, "
          "chunks %s), one thread" % (len(rows), os.path.basename(REAL), VAR, best["sample"]["shape"],
                                     sample.nbytes / 1e6, best["inner_chunk_shape"]))
    print("   %-44s %10.2f s" % ("dc_toolkit sweep wall time", sweep_s))
    print("   %-44s %10.2f s" % ("  of which inside codec calls", codec_s))
    print("   %-44s %10.3f   (target <= 1.15)" % ("  overhead ratio wall / codec time", sweep_s / codec_s))
    print("   %-44s %10.2f s" % ("  codecs' CPU time (user + system)", codec_cpu))
    print("   %-44s %10.2f s" % ("  of which system (the kernel)", codec_cpu - codec_user))
    print("   %-44s %10.1f %% (target < 10)" % ("  system share of the codecs' CPU time", 100 * (codec_cpu - codec_user) / codec_cpu))
    print("   %-44s %10.2f s" % ("  the process's CPU time (user + system)", sweep_cpu))
    print("   %-44s %10.2f s (CPU %.2f s)" % ("Python reference, numcodecs per combo", ref_s, ref_cpu))
    print("   %-44s %10.2f x (target >= 2.5)" % ("  speed-up over the reference, wall", ref_s / sweep_s))
    print("   %-44s %10.2f x" % ("  speed-up over the reference, CPU", ref_cpu / sweep_cpu))


def memory():
    tmp = tempfile.mkdtemp(prefix="dctk_bench_mem_")
    big = os.path.join(tmp, "tiled.nc")
    with netCDF4.Dataset(REAL) as src, netCDF4.Dataset(big, "w") as dst:
        t = np.ma.filled(src[VAR][:], np.nan)[0]  # (lev, lat, lon) of the real field
        reps = max(1, int(96e6 // t.nbytes))
        for name, n in (("time", reps),) + tuple(zip(src[VAR].dimensions[1:], t.shape)):
            dst.createDimension(name, n)
        v = dst.createVariable(VAR, "f4", ("time",) + src[VAR].dimensions[1:])
        v.units = "K"
        for i in range(reps):  # each step the real field, slightly shifted, so chunks differ
            v[i] = t + 0.01 * i
    limit = 64e6
    out = os.path.join(tmp, "out")
    _, _, base = run(["true"])
    wall, text, rss = run([exe, "evaluate_combos", big, "--where-to-write", out, "--threads-per-rank", "2",
                           "--eval-data-size-limit", "64MB", "--compressor-class", "lz4", "--filter-class",
                           "bitround", "--serializer-class", "none"])
    best = json.load(open(os.path.join(out, "best_%s.json" % VAR)))
    sample = float(np.prod(best["sample"]["shape"]) * 4)
    bound = 1.5 * sample + 2 * 64 * 2**20
    print("3. peak memory, field %.0f MB tiled from the real one, sample %.1f MB, 2 threads" %
          (os.path.getsize(big) / 1e6, sample / 1e6))
    print("   %-44s %10.1f MB" % ("peak RSS of evaluate_combos", rss / 1e6))
    print("   %-44s %10.1f MB" % ("bound 1.5 x sample + 64 MiB per thread", bound / 1e6))
    print("   %-44s %10.2f   (target <= 1.0)" % ("  peak / bound", rss / bound))
    print("   %-44s %10.2f" % ("  peak / sample", rss / sample))


def kernel(before):
    """The codecs' system share in exhaustive sweeps, this build against BEFORE, alternated."""
    tstorm = "/usr/share/ncarg/data/cdf/Tstorm.cdf"
    none = os.path.join(tempfile.mkdtemp(prefix="dctk_bench_kernel_"), "none.csv")
    with open(none, "w") as f:
        f.write("Short Name,Unit,Existing L1 error\n")
    cases = [("lossless, 200 KB", ["--without-lossy", "--thresholds-table", none, "--eval-data-size-limit", "200KB"]),
             ("1e-3, 50 KB", ["--l1-threshold", "1e-3", "--eval-data-size-limit", "50KB"])]
    builds = [("this build", exe), ("before", os.path.join(before, "dc_toolkit"))]
    print("kernel share of the codecs' CPU time, exhaustive sweeps of Tstorm.cdf t, 24 KiB chunks, one thread")
    print("   %-17s %-11s %9s %9s %9s %8s %9s %9s" % ("case", "build", "codec s", "user s", "system s", "share",
                                                     "proc usr", "proc sys"))
    for label, flags in cases:
        for rep in range(2):
            for name, binary in builds:
                out = tempfile.mkdtemp(prefix="dctk_bench_kernel_")
                r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
                _, text, _ = run([binary, "evaluate_combos", tstorm, "--where-to-write", out, "--field-to-compress", "t",
                                  "--search", "exhaustive", "--inner-chunk-mib", "0.0234375", "--threads-per-rank", "1",
                                  "--verbose"] + flags)
                r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
                cpu = timer(text, "sweep: inside codecs [thread CPU s]")
                user = timer(text, "sweep: inside codecs, user space [thread CPU s]")
                print("   %-17s %-11s %9.2f %9.2f %9.2f %7.1f%% %9.2f %9.2f" %
                      (label, name, cpu, user, cpu - user, 100 * (cpu - user) / cpu, r1.ru_utime - r0.ru_utime,
                       r1.ru_stime - r0.ru_stime))
                shutil.rmtree(out, ignore_errors=True)


print("== sweep benchmark (%s)" % time.strftime("%Y-%m-%d"))
if "--kernel" in sys.argv:
    kernel(sys.argv[sys.argv.index("--kernel") + 1])
    sys.exit(0)
if "--memory-only" not in sys.argv:
    speed()
memory()
