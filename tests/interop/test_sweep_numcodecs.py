#!/usr/bin/python3
"""The default sweep on a real field, checked by an independent computation.

Runs `dc_toolkit evaluate_combos` with the whole default codec space on a real
field from libncarg-data, then:
  - the CSV has exactly one row per combo of the space, none duplicated;
  - best_VAR.json names the highest ratio among the kept rows, and `keep`
    agrees with the threshold (and with the metrics being finite) on every row;
  - for 60 combos drawn at random, numpy + Debian's numcodecs apply the same
    pipeline to the same sample, chunk by chunk, and get the same ratio and
    relative L1/L2/Linf errors (1e-6 relative; the two numcodecs-rs filters,
    which numcodecs 0.11 lacks, are recomputed with numpy and may differ in
    the last bit, so their errors get an absolute slack of 1e-9).
"""
import csv
import json
import math
import os
import random
import subprocess
import sys
import tempfile

import numpy as np
import netCDF4
import numcodecs
from numcodecs.zfpy import ZFPY

DCTK = os.environ["DCTK"]
NCARG = os.environ.get("DCTK_NCARG", "/usr/share/ncarg/data")
FILE = os.path.join(NCARG, "cdf", "meccatemp.cdf")
VAR = "t"
THRESHOLD = 1e-3

failures = []


def check(cond, msg):
    if not cond:
        failures.append(msg)


def close(a, b, rel=1e-6, abs_=0.0):
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return abs(a - b) <= max(rel * max(abs(a), abs(b)), abs_)


def load_sample(best):
    with netCDF4.Dataset(FILE) as nc:
        v = nc.variables[VAR]
        v.set_auto_maskandscale(True)
        data = np.ma.filled(v[:].astype(v.dtype), np.nan)
    d, k = best["sample"]["dim"], best["sample"]["count"]
    idx = np.round(np.linspace(0, data.shape[d] - 1, k)).astype(int)
    sl = [0 if e < d else slice(None) for e in range(data.ndim)]
    sl[d] = idx
    sample = data[tuple(sl)]
    sample = sample.reshape(best["sample"]["shape"])
    return np.ascontiguousarray(sample)


def chunks(sample, chunk):
    """Chunks in C order, edge chunks padded with NaN; yields (padded, valid slices)."""
    chunk = [min(c, s) for c, s in zip(chunk, sample.shape)]
    grid = [math.ceil(s / c) for s, c in zip(sample.shape, chunk)]
    for k in np.ndindex(*grid):
        src = tuple(slice(i * c, min((i + 1) * c, s)) for i, c, s in zip(k, chunk, sample.shape))
        block = np.full(chunk, np.nan, dtype=sample.dtype)
        valid = tuple(slice(0, sl.stop - sl.start) for sl in src)
        block[valid] = sample[src]
        yield block, valid


def filter_codec(j, dtype):
    if not j:
        return None
    name, conf = j["name"], j.get("configuration", {})
    if name == "numcodecs.delta":
        return numcodecs.Delta(dtype=conf["dtype"], astype=conf["astype"])
    if name == "numcodecs.bitround":
        return numcodecs.BitRound(keepbits=conf["keepbits"])
    if name == "numcodecs.quantize":
        return numcodecs.Quantize(digits=conf["digits"], dtype=conf["dtype"], astype=conf["astype"])
    if conf.get("id") == "asinh.rs":
        w = dtype.type(conf["linear_width"])
        return ("asinh", lambda x: np.arcsinh(x / w) * w, lambda y: np.sinh(y / w) * w)
    if conf.get("id") == "fixed-offset-scale.rs":
        o, s = dtype.type(conf["offset"]), dtype.type(conf["scale"])
        inv = dtype.type(1) / s
        return ("fos", lambda x: (x - o) * inv,
                lambda y: (y.astype(np.float64) * float(s) + float(o)).astype(dtype))
    raise ValueError(name)


def compressor_chain(j):
    if not j:
        return []
    out = []
    for c in (j if isinstance(j, list) else [j]):
        name, conf = c["name"], c.get("configuration", {})
        if name == "blosc":
            sh = {"noshuffle": 0, "shuffle": 1, "bitshuffle": 2}[conf["shuffle"]]
            out.append(("blosc", conf["typesize"],
                        numcodecs.Blosc(cname=conf["cname"], clevel=conf["clevel"], shuffle=sh,
                                        blocksize=conf.get("blocksize", 0))))
        elif name == "numcodecs.shuffle":
            out.append(("plain", 1, numcodecs.Shuffle(elementsize=conf["elementsize"])))
        elif name == "zstd":
            out.append(("plain", 1, numcodecs.Zstd(level=conf["level"])))
        elif name == "gzip":
            out.append(("plain", 1, numcodecs.GZip(level=conf["level"])))
        elif name == "numcodecs.zlib":
            out.append(("plain", 1, numcodecs.Zlib(level=conf["level"])))
        elif name == "numcodecs.lz4":
            out.append(("plain", 1, numcodecs.LZ4(acceleration=conf["acceleration"])))
        elif name == "numcodecs.bz2":
            out.append(("plain", 1, numcodecs.BZ2(level=conf["level"])))
        elif name == "numcodecs.lzma":
            out.append(("plain", 1, numcodecs.LZMA(format=1, check=-1, preset=conf["preset"])))
        else:
            raise ValueError(name)
    return out


def run_combo(sample, chunk, row):
    dtype = sample.dtype
    filt = filter_codec(json.loads(row["filter"]) if row["filter"] else None, dtype)
    ser = json.loads(row["serializer"]) if row["serializer"] else None
    comps = compressor_chain(json.loads(row["compressor"]) if row["compressor"] else None)
    zfp = ZFPY(**{k: ser["configuration"][k] for k in ("mode", "tolerance", "rate", "precision")}) if ser else None
    stored = 0
    sums = np.zeros(6)  # sum|x|, sum x^2, max|x|, sum|e|, sum e^2, max|e|
    for block, valid in chunks(sample, chunk):
        if np.all(np.isnan(block)):
            continue
        if filt is None:
            f = block
        elif isinstance(filt, tuple):
            f = filt[1](block)
        else:
            f = filt.encode(block).reshape(block.shape)
        data = zfp.encode(np.ascontiguousarray(f)) if zfp else f.tobytes()
        for kind, ts, c in comps:
            buf = np.frombuffer(data, dtype="u%d" % ts) if kind == "blosc" and ts in (2, 4, 8) else data
            data = bytes(c.encode(buf))
        stored += len(data)
        back = zfp.decode(zfp.encode(np.ascontiguousarray(f))) if zfp else f
        back = np.asarray(back).reshape(block.shape)
        if filt is None:
            y = back
        elif isinstance(filt, tuple):
            y = filt[2](back.astype(dtype))
        else:
            y = np.frombuffer(filt.decode(np.ascontiguousarray(back)), dtype=dtype).reshape(block.shape)
        x = block[valid].astype(np.float64)
        y = y[valid].astype(np.float64)
        m = np.isfinite(x)
        x, e = x[m], np.abs(y[m] - x[m])
        sums[[0, 1, 3, 4]] += [np.abs(x).sum(), (x * x).sum(), e.sum(), (e * e).sum()]
        sums[2] = max(sums[2], np.abs(x).max(initial=0))
        sums[5] = max(sums[5], e.max(initial=0))
    rel = lambda a, b: 0.0 if a == 0 else a / b
    ratio = sample.nbytes / stored
    return ratio, rel(sums[3], sums[0]), rel(math.sqrt(sums[4]), math.sqrt(sums[1])), rel(sums[5], sums[2])


def main():
    out = tempfile.mkdtemp(prefix="dctk_sweep_")
    cmd = [DCTK, "evaluate_combos", FILE, "--where-to-write", out, "--field-to-compress", VAR,
           "--override-existing-l1-error", str(THRESHOLD), "--threads-per-rank", "2", "--inner-chunk-mib", "0.1"]
    # a small inner chunk (13 time steps) so the sample spans several chunks, a padded edge chunk included
    r = subprocess.run(cmd, capture_output=True, text=True)
    check(r.returncode == 0, "evaluate_combos failed: " + r.stderr[-2000:])
    if r.returncode:
        return
    with open(os.path.join(out, "best_%s.json" % VAR)) as f:
        best = json.load(f)
    with open(os.path.join(out, "config_space_%s_rank0.csv" % VAR), newline="") as f:
        rows = list(csv.DictReader(f))
    # float32: 98 compressors, 11 filters, 9 serializers, each with none
    check(len(rows) == 99 * 12 * 10, "rows: %d, expected %d" % (len(rows), 99 * 12 * 10))
    keys = {(int(r["comp_idx"]), int(r["filt_idx"]), int(r["ser_idx"])) for r in rows}
    check(len(keys) == len(rows), "duplicate combos in the CSV")

    kept = [r for r in rows if r["keep"] == "true"]
    for r in rows:
        vals = [float(r[k]) for k in ("ratio", "l1_rel", "l2_rel", "linf_rel")]
        want = r["error"] == "" and all(math.isfinite(v) for v in vals) and vals[1] <= THRESHOLD
        check((r["keep"] == "true") == want, "keep disagrees with the threshold: %s" % r)
    top = max(kept, key=lambda r: float(r["ratio"]))
    check(float(top["ratio"]) == best["ratio"], "best ratio %s is not the top kept %s" % (best["ratio"], top["ratio"]))
    check((int(top["comp_idx"]), int(top["filt_idx"]), int(top["ser_idx"])) ==
          (best["comp_idx"], best["filt_idx"], best["ser_idx"]) or float(top["ratio"]) == best["ratio"],
          "best combo differs")

    sample = load_sample(best)
    chunk = best["inner_chunk_shape"]
    ok = [r for r in rows if r["error"] == ""]
    random.seed(20261130)
    picks = random.sample(ok, 60)
    for r in picks:
        ratio, l1, l2, linf = run_combo(sample, chunk, r)
        fj = json.loads(r["filter"]) if r["filter"] else {}
        slack = 1e-9 if "any-numcodecs" in fj.get("name", "") else 0.0
        combo = (r["comp_idx"], r["filt_idx"], r["ser_idx"])
        check(close(ratio, float(r["ratio"])), "%s ratio %r vs ours %s" % (combo, ratio, r["ratio"]))
        for name, mine in (("l1_rel", l1), ("l2_rel", l2), ("linf_rel", linf)):
            check(close(mine, float(r[name]), abs_=slack), "%s %s %r vs ours %s" % (combo, name, mine, r[name]))
    print("%d rows, %d kept, %d combos recomputed with numcodecs" % (len(rows), len(kept), len(picks)))


main()
for f in failures[:20]:
    print("FAIL:", f)
print("%d passed, %d failed" % (1 if not failures else 0, 1 if failures else 0))
sys.exit(1 if failures else 0)
