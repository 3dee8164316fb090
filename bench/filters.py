"""Filter and ZFP throughput: this library against numcodecs 0.11 / zfpy on
the same real field, side by side.

    /usr/bin/python3 bench/filters.py BUILD_DIR [--min-seconds 0.15] [--field FILE:VAR]

Every filter setting of the codec space (DESIGN.md section 4) plus ZFPY in its
three modes, on one whole field (default: rectilinear_grid_3D.nc "t", 1.25 MB
of float32, also run as float64). MB/s are of uncompressed data; each figure
is the best single call over repeated runs. numcodecs has no asinh.rs or
fixed-offset-scale.rs (numcodecs-rs ships them as WebAssembly), so those rows
show ours only. numcodecs' bitround and quantize decode are views or casts
of the encoded buffer (no copy), so their decode figures are not comparable.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import netCDF4
import numcodecs
import numpy as np
from numcodecs.zfpy import ZFPY


def settings(x):
    dt = x.dtype.str
    f32 = x.dtype == np.float32
    m, d = (23, 7) if f32 else (52, 15)
    fin = x[np.isfinite(x)].astype("<f8")
    yield {"name": "numcodecs.delta", "configuration": {"dtype": dt, "astype": dt}}
    kbs = sorted(set(list(range(1, m + 1, 9)) + [m]))
    for kb in kbs:
        yield {"name": "numcodecs.bitround", "configuration": {"keepbits": kb}}
    for dg in sorted(set(list(range(1, d + 1, 4)) + [d])):
        yield {"name": "numcodecs.quantize", "configuration": {"digits": dg, "dtype": dt, "astype": dt}}
    yield {"name": "numcodecs.fixedscaleoffset",
           "configuration": {"offset": round(float(fin.mean()), 2), "scale": 100, "dtype": dt, "astype": "<i4"}}
    w = float(np.quantile(np.abs(fin), 0.01)) or 1.0
    rs = lambda id_, **kw: {"name": "any-numcodecs.array-array", "configuration": dict(id=id_, _version="1.0.0", **kw)}
    yield rs("asinh.rs", linear_width=w)
    yield rs("fixed-offset-scale.rs", offset=float(fin.mean()), scale=float(fin.std()) or 1.0)
    z = lambda mode, **kw: {"name": "numcodecs.zfpy",
                            "configuration": dict({"mode": mode, "tolerance": -1, "rate": -1, "precision": -1}, **kw)}
    for tol in (0.5, 0.25, 0.0625):
        yield z(4, tolerance=tol)
    for p in (8, 16, 32):
        yield z(3, precision=p)
    for r in (8, 16, 32):
        yield z(2, rate=r)


def numcodecs_codec(c):
    if c["name"] == "any-numcodecs.array-array":
        return None
    if c["name"] == "numcodecs.zfpy":
        return ZFPY(**c["configuration"])
    return numcodecs.get_codec(dict(c["configuration"], id=c["name"].split(".", 1)[1]))


def best(fn, min_s, arg):
    """Best time of fn(copy of arg): numcodecs' BitRound rounds its input in
    place, so every call gets a fresh copy, made outside the timing."""
    b, start, r = 1e30, time.perf_counter(), 0
    while r < 3 or time.perf_counter() - start < min_s:
        a = arg.copy()
        t0 = time.perf_counter()
        fn(a)
        b = min(b, time.perf_counter() - t0)
        r += 1
    return b


def label(c):
    conf = {k: v for k, v in c["configuration"].items() if k not in ("dtype", "_version") and v != -1}
    return c["name"].replace("numcodecs.", "").replace("any-numcodecs.array-array", "rs") + " " + \
        json.dumps(conf, separators=(",", ":"))[:46]


def run_field(build, x, min_s):
    mb = x.nbytes / 1e6
    codecs = list(settings(x))
    with tempfile.TemporaryDirectory() as tmp:
        raw = os.path.join(tmp, "x.bin")
        x.tofile(raw)
        out = subprocess.run([os.path.join(build, "tests", "dctk_bench_filters"), raw, x.dtype.str, ",".join(map(str, x.shape)),
                              str(min_s)], input="\n".join(json.dumps(c) for c in codecs) + "\n",
                             capture_output=True, text=True, check=True).stdout.splitlines()
    print(f"\n{x.dtype} {x.shape} ({mb:.2f} MB)")
    print(f"{'codec':62} {'enc MB/s':>9} {'numcodecs':>9} {'dec MB/s':>9} {'numcodecs':>9} {'bytes':>9}")
    for c, line in zip(codecs, out):
        if line.startswith("error"):
            print(f"{label(c):62} {line}")
            continue
        te, td, nb = line.split()
        nc = numcodecs_codec(c)
        zfp = c["name"] == "numcodecs.zfpy"
        ne = nd = "-"
        if nc is not None:
            enc = nc.encode(x.copy())
            encb = np.frombuffer(enc if isinstance(enc, bytes) else np.ascontiguousarray(enc).tobytes(), np.uint8)
            ne = f"{mb / best(nc.encode, min_s, x):9.0f}"
            nd = f"{mb / best(lambda b: nc.decode(b.tobytes() if zfp else b), min_s, encb):9.0f}"
        print(f"{label(c):62} {mb / float(te):9.0f} {ne:>9} {mb / float(td):9.0f} {nd:>9} {int(nb):9d}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("--min-seconds", type=float, default=0.15)
    ap.add_argument("--field", default="/usr/share/ncarg/data/nug/rectilinear_grid_3D.nc:t")
    a = ap.parse_args()
    path, var = a.field.rsplit(":", 1)
    with netCDF4.Dataset(path) as d:
        v = d.variables[var]
        v.set_auto_maskandscale(False)
        x = np.ascontiguousarray(v[...]).astype("<f4")
    x = x.reshape(x.shape[-3:]) if x.ndim > 3 and x.shape[0] == 1 else x
    print("filters and ZFPY: dc_toolkit vs numcodecs", numcodecs.__version__, "(MB/s of uncompressed data, best call)")
    run_field(a.build, x, a.min_seconds)
    run_field(a.build, x.astype("<f8"), a.min_seconds)


if __name__ == "__main__":
    sys.exit(main())
