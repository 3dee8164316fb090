#!/usr/bin/python3
"""Codec state kept per worker thread (issue 36 item 4), this build against an
earlier one, side by side: bench/codec_state.py BUILD --vs BEFORE_BUILD [RUNS]

Four cases on real fields, each build RUNS times (default 3), alternated
(this, before, this, before ...), so that a drift of the shared machine's load
falls on both:
  sweep     evaluate_combos of trinidad.nc `data` (libncarg-data cdf/, 11 MB
            float32 topography), exhaustive, the error-bounded serializers
            dctk.sz and dctk.ebcc alone (no filter, no compressor, so their
            own temporaries are what is measured), 4 MiB chunks, one thread,
            --l1-threshold 1e-3 (the solved bounds included);
  write     compress of that field concatenated 6 times along a new time axis
            (66 MB, each copy offset by 0.01 x its index), --pipeline dctk.sz
            (interp, bound 19 m: the sweep's winner at 1e-3), 4 MiB chunks,
            two encoder threads, with verification;
  pc-sweep  the sweep with PCodec's 12 members alone (lossless);
  pc-write  the write with PCodec (level 8, auto).
The two builds' stores of each write must be byte-identical (checked: the
codecs' bytes do not depend on what a thread keeps).
Per run: wall seconds, the process's user and system seconds (the children's
rusage); for the sweep also the codecs' CPU time (each thread's own
getrusage(RUSAGE_THREAD) around every codec call, from --verbose) and its
system part. Medians last. TMPDIR holds the inputs and outputs.
"""
import os
import re
import shutil
import statistics
import sys
import tempfile
import time

import numpy as np
import netCDF4

from benchlib import measured

NCARG = os.environ.get("DCTK_NCARG", "/usr/share/ncarg/data")
TRINIDAD = os.path.join(NCARG, "cdf", "trinidad.nc")
SZ = '[{"name":"dctk.sz","configuration":{"error_bound":19.0,"predictor":"interp"}}]'
PCODEC = '[{"name":"numcodecs.pcodec","configuration":{"level":8}}]'


def usage():
    sys.exit("usage: bench/codec_state.py BUILD --vs BEFORE_BUILD [RUNS]")


args = sys.argv[1:]
if len(args) < 3 or args[1] != "--vs":
    usage()
BUILDS = [("this", os.path.join(args[0], "dc_toolkit")), ("before", os.path.join(args[2], "dc_toolkit"))]
RUNS = int(args[3]) if len(args) > 3 else 3
tmp = tempfile.mkdtemp(prefix="dctk_bench_state_")


def tiled(path, copies):
    with netCDF4.Dataset(TRINIDAD) as s, netCDF4.Dataset(path, "w", format="NETCDF3_64BIT_OFFSET") as d:
        x = np.ma.filled(s["data"][...].astype(np.float32), np.nan)
        for name, n in zip(("copy",) + s["data"].dimensions, (copies,) + x.shape):
            d.createDimension(name, n)
        v = d.createVariable("data", "f4", ("copy",) + s["data"].dimensions)
        for i in range(copies):
            v[i] = x + np.float32(0.01 * i)


def timer(text, name):
    m = re.search(r"^%s\s+\d+\s+\S+\s+(\S+)\s*$" % re.escape(name), text, re.M)
    return float(m.group(1)) if m else float("nan")


def run(cmd, name):
    out = os.path.join(tmp, "out_" + name)
    shutil.rmtree(out, ignore_errors=True)
    cmd = [c if c != "OUT" else out for c in cmd]
    wall, user_s, system_s, r = measured(cmd)
    text = r.stderr + r.stdout
    codec = timer(text, "sweep: inside codecs [thread CPU s]")
    user = timer(text, "sweep: inside codecs, user space [thread CPU s]")
    return [wall, user_s, system_s, codec, codec - user]


big = os.path.join(tmp, "trinidad_x6.nc")
tiled(big, 6)


def sweep(classes):
    return lambda exe: [exe, "evaluate_combos", TRINIDAD, "--where-to-write", "OUT", "--field-to-compress", "data",
                        "--search", "exhaustive", "--serializer-class", classes, "--filter-class", "none",
                        "--compressor-class", "none", "--l1-threshold", "1e-3", "--threads-per-rank", "1",
                        "--inner-chunk-mib", "4", "--verbose"]


def write(pipeline):
    return lambda exe: [exe, "compress", big, "OUT", "--vars", "data", "--pipeline", pipeline, "--threads-per-rank",
                        "2", "--inner-chunk-mib", "4"]


def chunks(out):
    """The bytes of every chunk file of the store under out, by path."""
    got = {}
    for d, _, fs in os.walk(out):
        for f in fs:
            p = os.path.join(d, f)
            if "/c/" in p or os.path.basename(d) == "c":
                with open(p, "rb") as h:
                    got[os.path.relpath(p, out)] = h.read()
    return got


CASES = [("sweep", sweep("sz,ebcc")), ("write", write(SZ)), ("pc-sweep", sweep("pcodec")), ("pc-write", write(PCODEC))]

print("== codec state benchmark %s, load %s" % (time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
                                                 " ".join("%.1f" % x for x in os.getloadavg())))
head = "%-8s %-7s %8s %8s %8s %9s %9s %7s"
print(head % ("case", "build", "wall s", "user s", "sys s", "codec s", "codec sys", "share"))
for case, cmd in CASES:
    got = {name: [] for name, _ in BUILDS}
    for rep in range(RUNS):
        for name, exe in BUILDS:
            m = run(cmd(exe), name)
            got[name].append(m)
            share = "%6.1f%%" % (100 * m[4] / m[3]) if m[3] == m[3] else "      -"
            print("%-8s %-7s %8.2f %8.2f %8.2f %9.2f %9.2f %s" % (case, name, *m, share), flush=True)
    if "write" in case:
        a, b = (chunks(os.path.join(tmp, "out_" + name)) for name, _ in BUILDS)
        if not a or a != b:
            sys.exit("bench: %s: the two builds wrote different chunks (%d and %d files)" % (case, len(a), len(b)))
        print("%-8s the two stores' %d shard files are byte-identical" % (case, len(a)))
    for name, _ in BUILDS:
        med = [statistics.median(r[i] for r in got[name]) for i in range(5)]
        share = "%6.1f%%" % (100 * med[4] / med[3]) if med[3] == med[3] else "      -"
        print("%-8s %-7s %8.2f %8.2f %8.2f %9.2f %9.2f %s  (median of %d)" % (case, name, *med, share, RUNS))
shutil.rmtree(tmp, ignore_errors=True)
