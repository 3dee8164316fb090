#!/usr/bin/python3
"""compress_with_optimal against nccopy: bench/compress.py BUILD_DIR

Writes the same field (a real libncarg-data field tiled in time to ~100 MB)
with `nccopy -d 1 -s` (deflate level 1 + shuffle, the netCDF-4 path users
know) and with `dc_toolkit compress_with_optimal` and the comparable
lossless pipeline shuffle + zlib level 1, given with --combo (with indices
the command first re-reads the sample to rebuild the codec space, which is
not writing), in 4 MiB inner chunks and 16 MiB shards, at 1 and 2 threads,
and prints throughput and output size side by side.
Target: at 2 threads at least 2 x nccopy's throughput, with an output no larger.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np
import netCDF4

build = sys.argv[1] if len(sys.argv) > 1 else "build"
exe = os.path.join(build, "dc_toolkit")
REAL, VAR = "/usr/share/ncarg/data/nug/rectilinear_grid_3D.nc", "t"


def tiled(path):
    with netCDF4.Dataset(REAL) as src, netCDF4.Dataset(path, "w", format="NETCDF3_64BIT_OFFSET") as dst:
        t = np.ma.filled(src[VAR][:], np.nan)[0]
        reps = max(1, int(100e6 // t.nbytes))
        dims = ("time",) + src[VAR].dimensions[1:]
        for name, n in zip(dims, (reps,) + t.shape):
            dst.createDimension(name, n)
        v = dst.createVariable(VAR, "f4", dims)
        v.units = "K"
        for i in range(reps):
            v[i] = t + 0.01 * i
    return os.path.getsize(path)


def timed(cmd):
    t0 = time.perf_counter()
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode:
        sys.exit("bench: %s failed:\n%s" % (" ".join(cmd), r.stderr[-2000:]))
    return time.perf_counter() - t0


def du(path):
    if os.path.isfile(path):
        return os.path.getsize(path)
    return sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(path) for f in fs)


tmp = tempfile.mkdtemp(prefix="dctk_bench_compress_")
src = os.path.join(tmp, "tiled.nc")
raw = tiled(src)
rows = []
nc_out = os.path.join(tmp, "nccopy.nc")
s = timed(["nccopy", "-d", "1", "-s", src, nc_out])
rows.append(("nccopy -d 1 -s", s, du(nc_out)))
combo = os.path.join(tmp, "best_%s.json" % VAR)
with open(combo, "w") as f:
    json.dump({"var": VAR, "codecs": [{"name": "bytes", "configuration": {"endian": "little"}},
                                      {"name": "numcodecs.shuffle", "configuration": {"elementsize": 4}},
                                      {"name": "numcodecs.zlib", "configuration": {"level": 1}}]}, f)
for threads in (1, 2):
    out = os.path.join(tmp, "out%d" % threads)
    s = timed([exe, "compress_with_optimal", src, out, VAR, "--combo", combo, "--threads", str(threads),
               "--inner-chunk-mib", "4", "--shard-mib", "16", "--no-verify"])
    rows.append(("dc_toolkit shuffle+zlib 1, %d thread%s" % (threads, "s" if threads > 1 else ""), s,
                 du(os.path.join(out, "tiled.zarr", VAR))))
print("== compress_with_optimal vs nccopy (%s), field %.0f MB" % (time.strftime("%Y-%m-%d"), raw / 1e6))
print("   %-36s %8s %10s %12s %10s" % ("writer", "seconds", "MB/s", "output MB", "vs nccopy"))
base = rows[0][1]
for name, s, size in rows:
    print("   %-36s %8.2f %10.1f %12.2f %9.2fx" % (name, s, raw / 1e6 / s, size / 1e6, base / s))
print("   target: 2 threads >= 2.00x nccopy, output <= nccopy's (%s)" %
      ("output no larger" if rows[2][2] <= rows[0][2] else "OUTPUT LARGER"))
shutil.rmtree(tmp)
