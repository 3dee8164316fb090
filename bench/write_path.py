#!/usr/bin/python3
"""The write path before and after a change: bench/write_path.py BUILD_BEFORE BUILD_AFTER

Runs `compress_with_optimal` of both builds on the same field (the real field t
of rectilinear_grid_3D.nc tiled in time to ~50 MB), lossless shuffle + zlib 1
given with --combo, verification on (the default), 2 threads: a first write
into an empty store and an overwrite of the field, each 3 times, alternating
the builds so that load on the machine hits both alike. Prints the median
seconds and MB/s side by side.
"""
import json
import os
import shutil
import statistics
import sys
import tempfile
import time

from benchlib import VAR, threads_flag, tiled, timed

builds = {"before": sys.argv[1], "after": sys.argv[2]} if len(sys.argv) > 2 else sys.exit(__doc__)


tmp = tempfile.mkdtemp(prefix="dctk_bench_write_path_")
src = os.path.join(tmp, "tiled.nc")
raw = tiled(src)
combo = os.path.join(tmp, "best_%s.json" % VAR)
with open(combo, "w") as f:
    json.dump({"var": VAR, "codecs": [{"name": "bytes", "configuration": {"endian": "little"}},
                                      {"name": "numcodecs.shuffle", "configuration": {"elementsize": 4}},
                                      {"name": "numcodecs.zlib", "configuration": {"level": 1}}]}, f)
times = {(b, k): [] for b in builds for k in ("first write", "overwrite")}
for rep in range(3):
    for b, build in builds.items():
        out = os.path.join(tmp, "out_" + b)
        shutil.rmtree(out, ignore_errors=True)
        cmd = [os.path.join(build, "dc_toolkit"), "compress_with_optimal", src, out, VAR, "--combo", combo,
               threads_flag(os.path.join(build, "dc_toolkit")), "2", "--inner-chunk-mib", "4", "--shard-mib", "16"]
        times[(b, "first write")].append(timed(cmd))
        times[(b, "overwrite")].append(timed(cmd))
print("== compress_with_optimal write path (%s), field %.0f MB, verify on, 2 threads, median of 3"
      % (time.strftime("%Y-%m-%d"), raw / 1e6))
print("   %-12s %-10s %8s %8s %9s" % ("case", "build", "seconds", "MB/s", "after/bef"))
for k in ("first write", "overwrite"):
    base = statistics.median(times[("before", k)])
    for b in builds:
        s = statistics.median(times[(b, k)])
        print("   %-12s %-10s %8.2f %8.1f %8.2fx" % (k, b, s, raw / 1e6 / s, s / base))
shutil.rmtree(tmp)
