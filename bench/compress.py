#!/usr/bin/python3
"""compress_with_optimal against nccopy: bench/compress.py BUILD_DIR [ZLIB_BUILD_DIR] [RUNS]

Three real fields of different sizes, same run:
  - trinidad.nc `data` (libncarg-data cdf/, 11.5 MB float32 topography), as it is;
  - rectilinear_grid_3D.nc `t` (nug/) concatenated 28 times along time (~35 MB);
  - fice.nc `fice` (cdf/) concatenated 40 times along time (~94 MB);
(libncarg-data has fewer than three real fields of 5-100 MB, so two are built by
concatenating a real field along time, each copy offset by 0.01 so that no two
copies are equal bit for bit), written as netCDF 64-bit offset inputs.

Each field is written with the same algorithm on both sides, byte shuffle +
zlib level 1: `nccopy -k nc4 -d 1 -s` and `dc_toolkit compress_with_optimal
--combo` (the pipeline bytes + numcodecs.shuffle + numcodecs.zlib 1) at 2
threads, in 4 MiB inner chunks and 16 MiB shards (1 MiB chunks balance two threads
better on the 11.5 MB field but cut rect_t's 4-D slabs so that its output grows
5 %), with --no-verify (nccopy does
not read back) and with verification; dctk fsyncs the files and folders it wrote before it
renames the array into place and nccopy never syncs, so "nccopy+sync" times nccopy followed
by `sync FILE FOLDER` on its output (fsync of both, the same durability) beside plain nccopy
(the target's reference), alternated, RUNS times each (default 5),
median wall time (the target) and, beside it, the fastest run ("min", the run
least disturbed by other processes) and CPU time (user + system). Peak memory is each process's
maximum resident set (GNU time). The machine may be shared: CPU time says what
the wall time would be alone. Where the time goes, from the same runs' medians: "bytes" only
(read + store write), + shuffle, + zlib 1 (the whole write), + verify.

Target (issue 21): at 2 threads >= 2x nccopy's speed on each field, output at
most 1 % larger, peak memory at most nccopy's + 64 MiB per thread.

With ZLIB_BUILD_DIR (a build whose deflate is zlib, e.g. main before
libdeflate), its write and a zlib/gzip-only sweep run beside this build's:
the side-by-side measure of libdeflate against zlib.

Environment: BEFORE=DIR adds the write of another build (e.g. this branch before
a change) to every field's table, without and with verification, alternated with the others, so that a change
is measured side by side in one run; ONLY=trinidad,fice runs those fields only; CHUNK_MIB=3 writes dctk's arrays in inner
chunks of that size instead of 4 MiB (shards stay 16 MiB).
The load average is printed before each field: on a shared machine the wall
times stretch with it, the CPU times much less.
"""
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

from benchlib import COMPRESS_FIELDS as FIELDS, compress_input as make_input


def threads_flag(binary):
    """compress_with_optimal's thread flag: --threads-per-rank since the guide's help work, --threads before."""
    h = subprocess.run([binary, "compress_with_optimal", "--help"], capture_output=True, text=True)
    return "--threads-per-rank" if "--threads-per-rank" in h.stdout + h.stderr else "--threads"

build = sys.argv[1] if len(sys.argv) > 1 else "build"
zlib_build = sys.argv[2] if len(sys.argv) > 2 and sys.argv[2] else None
RUNS = int(sys.argv[3]) if len(sys.argv) > 3 else 5
BEFORE = os.environ.get("BEFORE")
ONLY = [x for x in os.environ.get("ONLY", "").split(",") if x]
CHUNK_MIB = os.environ.get("CHUNK_MIB", "4")
THREADS = 2
exe = os.path.join(build, "dc_toolkit")
BYTES = {"name": "bytes", "configuration": {"endian": "little"}}
SHUFFLE = {"name": "numcodecs.shuffle", "configuration": {"elementsize": 4}}
ZLIB1 = {"name": "numcodecs.zlib", "configuration": {"level": 1}}


def timed(cmd):
    """Wall seconds, peak resident MiB and CPU seconds (user + system) of one
    run: the peak from GNU time (a child of Python inherits Python's
    resident set in its rusage, so wait4's maximum would be Python's), the CPU
    time from the children's rusage (GNU time's own start-up included, the same for every writer)."""
    u0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    r = subprocess.run(["/usr/bin/time", "-f", "BENCH_RUSAGE %M %U %S"] + cmd, stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE, text=True)
    s = time.perf_counter() - t0
    u1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    if r.returncode:
        sys.exit("bench: %s failed:\n%s" % (" ".join(cmd), r.stderr[-2000:]))
    line = [x for x in r.stderr.splitlines() if x.startswith("BENCH_RUSAGE ")][-1].split()
    # CPU from the children's rusage in microseconds (GNU time prints hundredths)
    return s, int(line[1]) / 1024, (u1.ru_utime - u0.ru_utime) + (u1.ru_stime - u0.ru_stime)


def du(path):
    if os.path.isfile(path):
        return os.path.getsize(path)
    return sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(path) for f in fs)


def combo(tmp, var, codecs):
    path = os.path.join(tmp, "combo_%s_%d.json" % (var, len(codecs)))
    with open(path, "w") as f:
        json.dump({"var": var, "codecs": codecs}, f)
    return path


def writers(tmp, src, var):
    """name -> (command, output path)."""
    out = lambda k: os.path.join(tmp, "out_" + k)  # noqa: E731
    stem = os.path.splitext(os.path.basename(src))[0]
    w = {"nccopy": (["nccopy", "-k", "nc4", "-d", "1", "-s", src, out("nc.nc")], out("nc.nc")),
         # the same durability as ours: dctk fsyncs what it wrote (files, then folders) before it renames
         # the array into place; nccopy never syncs, so `sync FILE FOLDER` (fsync of both) runs right after
         # it, timed with it
         "nccopy+sync": (["nccopy", "-k", "nc4", "-d", "1", "-s", src, out("ns.nc")], out("ns.nc"))}

    def ours(key, binary, codecs, verify):
        cmd = [binary, "compress_with_optimal", src, out(key), var, "--combo", combo(tmp, var, codecs),
               threads_flag(binary), str(THREADS), "--inner-chunk-mib", CHUNK_MIB, "--shard-mib", "16"]
        w[key] = (cmd + ([] if verify else ["--no-verify"]), os.path.join(out(key), stem + ".zarr", var))

    ours("dctk", exe, [BYTES, SHUFFLE, ZLIB1], False)
    ours("dctk+verify", exe, [BYTES, SHUFFLE, ZLIB1], True)
    ours("bytes", exe, [BYTES], False)
    ours("shuffle", exe, [BYTES, SHUFFLE], False)
    if BEFORE:
        ours("before", os.path.join(BEFORE, "dc_toolkit"), [BYTES, SHUFFLE, ZLIB1], False)
        ours("before+verify", os.path.join(BEFORE, "dc_toolkit"), [BYTES, SHUFFLE, ZLIB1], True)
    if zlib_build:
        ours("dctk zlib", os.path.join(zlib_build, "dc_toolkit"), [BYTES, SHUFFLE, ZLIB1], False)
    return w


def clean(path):
    if os.path.isdir(os.path.dirname(path)) and not path.endswith(".nc"):
        shutil.rmtree(os.path.dirname(os.path.dirname(path)), ignore_errors=True)
    elif os.path.exists(path):
        os.remove(path)


def bench_field(tmp, label, src, var, raw):
    w = writers(tmp, src, var)
    times = {k: [] for k in w}
    cpu = {k: [] for k in w}
    rss = {k: 0.0 for k in w}
    size = {}
    for _ in range(RUNS):  # alternated, so load on the machine hits every writer alike
        for k, (cmd, out) in w.items():
            clean(out)
            s, m, c = timed(cmd)
            if k == "nccopy+sync":
                s2, _, c2 = timed(["sync", out, os.path.dirname(out)])
                s, c = s + s2, c + c2
            times[k].append(s)
            cpu[k].append(c)
            rss[k] = max(rss[k], m)
            size[k] = du(out)
    med = {k: statistics.median(v) for k, v in times.items()}
    mcpu = {k: statistics.median(v) for k, v in cpu.items()}
    nc = med["nccopy"]
    print("\n== %s `%s`: %.1f MB float32, %d threads, %s MiB inner chunks, median of %d; load average %s" % (
        label, var, raw / 1e6, THREADS, CHUNK_MIB, RUNS, " ".join(open("/proc/loadavg").read().split()[:3])))
    print("   %-14s %8s %8s %8s %8s %10s %9s %10s %9s" % ("writer", "wall s", "MB/s", "min s", "CPU s", "output MB",
                                                          "peak MiB", "vs nccopy", "min vs"))
    for k in w:
        if k in ("bytes", "shuffle"):
            continue
        print("   %-14s %8.3f %8.1f %8.3f %8.3f %10.3f %9.1f %9.2fx %8.2fx" % (
            k, med[k], raw / 1e6 / med[k], min(times[k]), mcpu[k], size[k] / 1e6, rss[k], nc / med[k],
            min(times["nccopy"]) / min(times[k])))
    if BEFORE:
        print("   dctk vs before: wall %.3f / %.3f s (%.2fx), CPU %.3f / %.3f s (%.2fx)" % (
            med["dctk"], med["before"], med["before"] / med["dctk"], mcpu["dctk"], mcpu["before"],
            mcpu["before"] / mcpu["dctk"]))
        print("   CPU per MB written, verified: dctk %.2f ms, before %.2f ms (%.3f of before)" % (
            1e9 * mcpu["dctk+verify"] / raw, 1e9 * mcpu["before+verify"] / raw,
            mcpu["dctk+verify"] / mcpu["before+verify"]))
    print("   where the time goes (dctk, medians): read + store write %.3f s, shuffle %.3f s, zlib 1 %.3f s, "
          "verify %.3f s" % (med["bytes"], med["shuffle"] - med["bytes"], med["dctk"] - med["shuffle"],
                             med["dctk+verify"] - med["dctk"]))
    print("   same durability (nccopy then sync of its file and folder, both timed): %.2fx" %
          (med["nccopy+sync"] / med["dctk"]))
    ok_speed = nc / med["dctk"] >= 2
    ok_size = size["dctk"] <= 1.01 * size["nccopy"]
    ok_mem = rss["dctk"] <= rss["nccopy"] + 64 * THREADS
    print("   target: >= 2x nccopy %s (%.2fx); output <= 1.01x nccopy's %s (%.4f); peak <= nccopy + %d MiB %s"
          % ("met" if ok_speed else "MISSED", nc / med["dctk"], "met" if ok_size else "MISSED",
             size["dctk"] / size["nccopy"], 64 * THREADS, "met" if ok_mem else "MISSED"))
    return ok_speed and ok_size and ok_mem


def sweep_side_by_side(tmp, src, var):
    """A zlib/gzip-only sweep of the same field with both builds (libdeflate vs zlib)."""
    flags = ["--field-to-compress", var, "--compressor-class", "zlib,gzip", "--filter-class", "none",
             "--serializer-class", "none", "--threads-per-rank", str(THREADS), "--eval-data-size-limit", "20MB"]
    times = {"libdeflate": [], "zlib": []}
    for _ in range(RUNS):
        for k, b in (("libdeflate", exe), ("zlib", os.path.join(zlib_build, "dc_toolkit"))):
            d = os.path.join(tmp, "sweep_" + k)
            shutil.rmtree(d, ignore_errors=True)
            times[k].append(timed([b, "evaluate_combos", src, "--where-to-write", d] + flags)[2])
    a, b = statistics.median(times["libdeflate"]), statistics.median(times["zlib"])
    print("\n== sweep, zlib and gzip levels 1/6/9 with and without shuffle, 20 MB sample of %s, median of %d" %
          (var, RUNS))
    print("   CPU seconds: libdeflate build %.3f s, zlib build %.3f s: %.2fx" % (a, b, b / a))


def main():
    tmp = tempfile.mkdtemp(prefix="dctk_bench_compress_")
    try:
        print("load average before: %s" % " ".join(open("/proc/loadavg").read().split()[:3]))
        print("== compress_with_optimal vs nccopy -k nc4 -d 1 -s (%s), %s" %
              (time.strftime("%Y-%m-%d"), subprocess.run(["nccopy"], capture_output=True, text=True).stderr
               .split("\n")[0][:60]))
        ok = True
        for label, rel, var, copies in FIELDS:
            if ONLY and label not in ONLY:
                continue
            src = os.path.join(tmp, label + ".nc")
            raw = make_input(src, rel, var, copies)
            ok = bench_field(tmp, label + (" (real)" if copies == 1 else " (real, x%d along time)" % copies),
                             src, var, raw) and ok
            if zlib_build and label == "trinidad":
                sweep_side_by_side(tmp, src, var)
            os.remove(src)
        print("\nall targets met" if ok else "\nsome target MISSED")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


main()
