"""Compressor throughput: this library against numcodecs 0.11 on the same buffer.

    /usr/bin/python3 bench/codecs.py BUILD_DIR [--min-seconds 0.15] [--field FILE:VAR] [--quick] [--only TEXT]

For every codec and setting of the codec space (DESIGN.md section 4), encode
and decode one whole real field (default: rectilinear_grid_3D.nc "t", 1.25 MB
of float32) and report MB/s of uncompressed data for both implementations,
side by side. Each side's figure is the best single call over repeated runs,
in the calling thread's CPU time (both sides compress on the calling thread),
so that other processes on a shared machine disturb it little; runs alternate
ours, numcodecs, numcodecs, ours so that both see the same background load. numcodecs' Blosc runs without threads (use_threads = False),
as ours does. Our zstd level 0 is zstd's default level 3; numcodecs 0.11 maps
0 to 1, so that row compares against numcodecs' Zstd(3).
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import netCDF4
import numpy as np
import numcodecs
import numcodecs.blosc
from numcodecs.compat import ensure_bytes

numcodecs.blosc.use_threads = False
SHUFFLE = {"noshuffle": 0, "shuffle": 1, "bitshuffle": 2}


def settings(itemsize, quick):
    clevels = (1, 9) if quick else (1, 6, 9)
    for cname in ("blosclz", "lz4", "lz4hc", "zlib", "zstd"):
        for clevel in clevels:
            for shuffle in SHUFFLE:
                yield {"name": "blosc", "configuration": {"cname": cname, "clevel": clevel, "shuffle": shuffle,
                                                          "typesize": itemsize, "blocksize": 0}}
    for acc in (1, 10, 100):
        yield {"name": "numcodecs.lz4", "configuration": {"acceleration": acc}}
    for level in (0, 1, 9, 22):
        yield {"name": "zstd", "configuration": {"level": level, "checksum": False}}
    for name in ("numcodecs.zlib", "gzip", "numcodecs.bz2"):
        for level in (1, 6, 9):
            yield {"name": name, "configuration": {"level": level}}
    for preset in (1, 6, 9):
        yield {"name": "numcodecs.lzma", "configuration": {"format": 1, "check": -1, "preset": preset,
                                                           "filters": None}}
    yield {"name": "numcodecs.shuffle", "configuration": {"elementsize": itemsize}}


def numcodecs_codec(obj):
    conf = obj["configuration"]
    if obj["name"] == "blosc":
        return numcodecs.Blosc(conf["cname"], conf["clevel"], SHUFFLE[conf["shuffle"]], conf["blocksize"])
    if obj["name"] == "zstd":
        return numcodecs.Zstd(conf["level"] or 3)
    if obj["name"] == "gzip":
        return numcodecs.GZip(conf["level"])
    return numcodecs.get_codec(dict(conf, id=obj["name"].split(".", 1)[1]))


def best_of(fn, min_s):
    best, spent, k = 1e30, 0.0, 0
    while k < 3 or spent < min_s:
        t0 = time.thread_time()
        fn()
        dt = time.thread_time() - t0
        best, spent, k = min(best, dt), spent + dt, k + 1
    return best


def time_numcodecs(obj, arr, min_s):
    c = numcodecs_codec(obj)
    enc = c.encode(arr)
    assert ensure_bytes(c.decode(enc)) == arr.tobytes()
    return best_of(lambda: c.encode(arr), min_s), best_of(lambda: c.decode(enc), min_s), len(enc)


class Ours:
    """The C harness, fed one codec at a time so runs can interleave with numcodecs'."""

    def __init__(self, build, raw_path, arr, min_s):
        exe = os.path.join(build, "tests", "dctk_bench_codecs")
        shape = ",".join(str(s) for s in arr.shape)
        dtype = {4: "float32", 8: "float64"}[arr.dtype.itemsize]
        self.p = subprocess.Popen([exe, raw_path, dtype, shape, str(min_s)], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, text=True)

    def run(self, obj):
        self.p.stdin.write(json.dumps(obj) + "\n")
        self.p.stdin.flush()
        line = self.p.stdout.readline().split()
        if len(line) != 3:
            sys.exit("bench: our harness failed on %s" % json.dumps(obj))
        return float(line[0]), float(line[1]), int(line[2])

    def close(self):
        self.p.stdin.close()
        self.p.wait()


def label(obj):
    conf = obj["configuration"]
    if obj["name"] == "blosc":
        return "blosc", "%s %d %s" % (conf["cname"], conf["clevel"], conf["shuffle"])
    key = [k for k in conf if k not in ("format", "check", "filters", "checksum")][0]
    return obj["name"].replace("numcodecs.", ""), "%s=%s" % (key, conf[key])


def load(spec):
    path, var = spec.rsplit(":", 1)
    with netCDF4.Dataset(path) as d:
        v = d.variables[var]
        v.set_auto_maskandscale(False)
        return np.ascontiguousarray(v[...]).astype(v.dtype.newbyteorder("<"))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("build")
    ap.add_argument("--min-seconds", type=float, default=0.15)
    ap.add_argument("--field", default="/usr/share/ncarg/data/nug/rectilinear_grid_3D.nc:t")
    ap.add_argument("--quick", action="store_true", help="fewer blosc levels")
    ap.add_argument("--only", default="", help="rows whose codec and setting contain this text")
    a = ap.parse_args()
    arr = load(a.field)
    mb = arr.nbytes / 1e6
    fd, raw_path = tempfile.mkstemp(suffix=".raw")
    with os.fdopen(fd, "wb") as f:
        f.write(arr.tobytes())
    ours = Ours(a.build, raw_path, arr, a.min_seconds / 2)
    print("field %s: %s %s, %.2f MB; MB/s of uncompressed data, best call; delta = ours / numcodecs - 1"
          % (a.field, arr.dtype, arr.shape, mb))
    head = "%-8s %-24s %6s | %9s %9s %7s | %9s %9s %7s" % ("codec", "setting", "ratio", "enc ours", "enc nc",
                                                          "delta", "dec ours", "dec nc", "delta")
    print(head)
    print("-" * len(head))
    worst = []
    try:
        for obj in settings(arr.dtype.itemsize, a.quick):
            if a.only not in " ".join(label(obj)):
                continue
            e1, d1, size = ours.run(obj)
            te1, td1, _ = time_numcodecs(obj, arr, a.min_seconds / 2)
            te2, td2, _ = time_numcodecs(obj, arr, a.min_seconds / 2)
            e2, d2, _ = ours.run(obj)
            oe, od, ne, nd = min(e1, e2), min(d1, d2), min(te1, te2), min(td1, td2)
            de, dd = ne / oe - 1, nd / od - 1
            worst.append((min(de, dd), "%s %s" % label(obj)))
            print("%-8s %-24s %6.2f | %9.1f %9.1f %+6.1f%% | %9.1f %9.1f %+6.1f%%" % (
                *label(obj), arr.nbytes / size, mb / oe, mb / ne, 100 * de, mb / od, mb / nd, 100 * dd))
            sys.stdout.flush()
    finally:
        ours.close()
        os.unlink(raw_path)
    worst.sort()
    slow = [w for w in worst if w[0] < -0.05]
    print("slower than numcodecs by more than 5 %%: %s" % (", ".join("%s (%+.1f%%)" % (n, 100 * d) for d, n in slow)
                                                           if slow else "none"))


if __name__ == "__main__":
    main()
