#!/usr/bin/python3
"""--clamp-to-bounds as the Python dc_toolkit's (issue 32): every combo with a lossy serializer decodes
through numcodecs.clamp at --phys-min/--phys-max, the clamp first in its filter chain; on fice of
cdf/fice.nc (sea-ice fraction, 0 to 1, 62 % exactly 0), where zfp rings below 0 and above 1.

1. the same sweep (zfpy and none, no filter, zstd; exhaustive) without and with the flag: without it
   some zfpy rows leave [0, 1] and fail the physical gate; with it every zfpy row's filter is the clamp
   {minimum 0, maximum 1} and its name says so, the rows without a serializer have no filter, every
   row passes the physical gate, more rows are kept, and each zfpy pipeline's largest error is at most
   its unclamped one; numpy + numcodecs (ZFPY, Zstd, np.clip) recompute every clamped row's ratio and
   relative L1/L2/Linf on the same chunks within 1e-6; manifest_fice.json names the clamp;
2. without --phys-min/--phys-max the flag is refused (exit 2, one line);
3. compress --codecs plugin writes the clamped winner: the array's codecs start with numcodecs.clamp,
   and the store read without dc_toolkit (shard indexes parsed here, chunks decoded by numcodecs,
   clipped by numpy) equals our export bit for bit, lies within [0, 1], while the same chunks
   unclipped do not.
"""
import csv
import json
import math
import os
import shutil
import struct
import subprocess
import sys
import tempfile

import netCDF4
import numcodecs
import numpy as np
from numcodecs.zfpy import ZFPY

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import check, finish, run  # noqa: E402
from pipeline_ref import chunks, compressor_chain, zfp_folded  # noqa: E402

NCARG = os.environ.get("DCTK_NCARG", "/usr/share/ncarg/data")
FILE = os.path.join(NCARG, "cdf", "fice.nc")
VAR = "fice"
CLAMP = {"name": "numcodecs.clamp", "configuration": {"maximum": 1.0, "minimum": 0.0}}
SWEEP = ["--field-to-compress", VAR, "--l1-threshold", "0.05", "--phys-min", "0", "--phys-max", "1",
         "--serializer-class", "zfpy,none", "--filter-class", "none", "--compressor-class", "zstd",
         "--search", "exhaustive", "--inner-chunk-mib", "0.5", "--threads-per-rank", "2"]


def rows(where):
    with open(os.path.join(where, "config_space_%s_rank0.csv" % VAR)) as f:
        return list(csv.DictReader(f))


def field():
    with netCDF4.Dataset(FILE) as d:
        return np.ma.filled(d[VAR][:].astype("<f4"), np.nan)


def reference(x, chunk, row):
    """Ratio and relative L1, L2, Linf of a clamped zfpy row, by numcodecs and numpy alone."""
    c = json.loads(row["serializer"])["configuration"]
    zfp = ZFPY(**{k: c[k] for k in ("mode", "tolerance", "rate", "precision")})
    comps = compressor_chain(json.loads(row["compressor"]) if row["compressor"] else None)
    lo, hi = np.float32(0), np.float32(1)
    stored, s, emax = 0, np.zeros(5), 0.0  # s: sum|x|, sum x^2, max|x|, sum|e|, sum e^2
    for block, valid in chunks(x, chunk):
        data = bytes(zfp.encode(zfp_folded(block)))
        for _, _, comp in comps:
            data = bytes(comp.encode(data))
        stored += len(data)
        y = np.clip(np.asarray(zfp.decode(zfp.encode(zfp_folded(block)))).reshape(block.shape), lo, hi)
        a, e = block[valid].astype(np.float64), np.abs(y[valid].astype(np.float64) - block[valid])
        s += [np.abs(a).sum(), (a * a).sum(), 0, e.sum(), (e * e).sum()]
        s[2] = max(s[2], np.abs(a).max())
        emax = max(emax, float(e.max()))
    return x.nbytes / stored, s[3] / s[0], math.sqrt(s[4]) / math.sqrt(s[1]), emax / s[2]


def close(a, b, rel=1e-6):
    return abs(a - b) <= rel * max(abs(a), abs(b), 1e-300)


def sweeps(tmp, x):
    plain, clamped = os.path.join(tmp, "plain"), os.path.join(tmp, "clamped")
    run("evaluate_combos", FILE, "--where-to-write", plain, *SWEEP)
    r = run("evaluate_combos", FILE, "--where-to-write", clamped, *SWEEP, "--clamp-to-bounds")
    check("--clamp-to-bounds: the combos of the" in r.stderr + r.stdout and "decode through clamp(maximum=1.0, "
          "minimum=0.0)" in r.stderr + r.stdout, "no line naming the clamp: " + r.stderr[-1500:])
    p, c = rows(plain), rows(clamped)
    zp = [r for r in p if r["serializer"]]
    check(any(r["pass_phys"] == "false" for r in zp), "no unclamped zfpy row left [0, 1]: the case tests nothing")
    check(all(r["pass_phys"] == "true" for r in c), "a clamped row fails the physical gate")
    check(sum(r["keep"] == "true" for r in c) > sum(r["keep"] == "true" for r in p),
          "the clamp kept no more rows than without it")
    zc = [r for r in c if r["serializer"]]
    check(len(zc) >= len(zp) > 0, "%d clamped zfpy rows, %d unclamped" % (len(zc), len(zp)))
    for r in c:
        want = CLAMP if r["serializer"] else None
        got = json.loads(r["filter"]) if r["filter"] else None
        check(got == want, "row %s %s %s: filter %s, expected %s" % (r["comp_idx"], r["filt_idx"], r["ser_idx"],
                                                                    got, want))
        check(("| clamp(maximum=1.0, minimum=0.0) |" in r["name"]) == bool(r["serializer"]),
              "row name %r" % r["name"])
    plain_err = {(r["compressor"], r["serializer"]): float(r["max_abs_err"]) for r in zp}
    for r in zc:
        was = plain_err.get((r["compressor"], r["serializer"]))
        if was is not None:
            check(float(r["max_abs_err"]) <= was, "%s: clamped max error %s over the unclamped %g" %
                  (r["name"], r["max_abs_err"], was))
    best = json.load(open(os.path.join(clamped, "best_%s.json" % VAR)))
    check(best["sample"]["shape"] == list(x.shape), "the sample is not the whole field: %s" % best["sample"]["plan"])
    with open(os.path.join(clamped, "sweep_state_%s.json" % VAR)) as f:
        chunk = json.load(f)["inner_chunk_shape"]  # the chunks the sweep measured in
    seen = set()
    for r in zc:
        key = (r["compressor"], r["serializer"])
        if key in seen:
            continue
        seen.add(key)
        ratio, l1, l2, linf = reference(x, chunk, r)
        for name, ours, ref in (("ratio", r["ratio"], ratio), ("l1", r["l1_rel"], l1), ("l2", r["l2_rel"], l2),
                                ("linf", r["linf_rel"], linf)):
            check(close(float(ours), ref), "%s: %s %s, numcodecs + np.clip %.9g" % (r["name"], name, ours, ref))
    check(len(seen) >= 8, "only %d distinct clamped pipelines recomputed" % len(seen))
    m = json.load(open(os.path.join(clamped, "manifest_%s.json" % VAR)))
    check(m.get("clamp") == CLAMP and m["args"].get("clamp_to_bounds") is True, "manifest: %s" % m.get("clamp"))
    mp = json.load(open(os.path.join(plain, "manifest_%s.json" % VAR)))
    check(mp.get("clamp") is None and mp["args"].get("clamp_to_bounds") is False, "plain manifest: %s" % mp.get("clamp"))
    print("1. %d clamped zfpy rows, %d pipelines recomputed by numcodecs + np.clip" % (len(zc), len(seen)))


def read_store(array):
    """The array as a reader without dc_toolkit sees it, and its inner chunks unclipped."""
    with open(os.path.join(array, "zarr.json")) as f:
        meta = json.load(f)
    shape, shard = meta["shape"], meta["chunk_grid"]["configuration"]["chunk_shape"]
    sh = meta["codecs"][0]["configuration"]
    inner, codecs = sh["chunk_shape"], sh["codecs"]
    check(codecs[0] == CLAMP and codecs[1]["name"] == "numcodecs.zfpy", "the stored codecs: %s" % codecs)
    c = codecs[1]["configuration"]
    zfp = ZFPY(**{k: c[k] for k in ("mode", "tolerance", "rate", "precision")})
    comps = compressor_chain(codecs[2:])
    out = np.full(shape, np.nan, "<f4")
    raw = np.full(shape, np.nan, "<f4")
    per = [s // i for s, i in zip(shard, inner)]
    for k in np.ndindex(*[math.ceil(n / s) for n, s in zip(shape, shard)]):
        path = os.path.join(array, "c", *map(str, k))
        if not os.path.exists(path):
            continue
        data = open(path, "rb").read()
        n = int(np.prod(per))
        index = data[-(16 * n + 4):-4]
        for j, q in enumerate(np.ndindex(*per)):
            off, size = struct.unpack("<QQ", index[16 * j:16 * j + 16])
            if off == 2**64 - 1:
                continue
            b = data[off:off + size]
            for _, _, comp in reversed(comps):
                b = bytes(comp.decode(b))
            y = np.asarray(zfp.decode(b)).reshape(inner)
            lo = [a * s + b_ * i for a, s, b_, i in zip(k, shard, q, inner)]
            sl = tuple(slice(l, min(l + i, n_)) for l, i, n_ in zip(lo, inner, shape))
            part = tuple(slice(0, s.stop - s.start) for s in sl)
            raw[sl] = y[part]
            out[sl] = np.clip(y, np.float32(c0(codecs, "minimum")), np.float32(c0(codecs, "maximum")))[part]
    return out, raw


def c0(codecs, key):
    return codecs[0]["configuration"][key]


def written(tmp, x):
    where = os.path.join(tmp, "write")
    run("compress", FILE, "--where-to-write", where, "--vars", VAR, "--codecs", "plugin", *SWEEP[2:],
        "--clamp-to-bounds")
    store = os.path.join(where, "fice.zarr")
    got, raw = read_store(os.path.join(store, VAR))
    nc = os.path.join(tmp, "fice.nc")
    run("from_zarr_to_netcdf", store, "--out", nc)
    with netCDF4.Dataset(nc) as d:
        ours = np.ma.filled(d[VAR][:].astype("<f4"), np.nan)
    check(np.array_equal(got, ours, equal_nan=True), "our export differs from numcodecs + np.clip on the stored bytes")
    check(np.nanmin(got) >= 0 and np.nanmax(got) <= 1, "the clipped store leaves [0, 1]: %g %g" %
          (np.nanmin(got), np.nanmax(got)))
    check(np.nanmin(raw) < 0 or np.nanmax(raw) > 1, "zfp's stored chunks stay in [0, 1]: the clamp did nothing")
    check(not np.isnan(got).any() and got.shape == x.shape, "the store misses values")
    print("3. compress --codecs plugin: the clamp stored before zfpy; numcodecs + np.clip read what our export "
          "reads (unclipped %.3g to %.3g)" % (np.nanmin(raw), np.nanmax(raw)))


def main():
    tmp = tempfile.mkdtemp(prefix="dctk_clamp_")
    try:
        x = field()
        check(not np.isnan(x).any() and x.min() == 0 and x.max() == 1, "fice is not the 0..1 field this test needs")
        sweeps(tmp, x)
        r = run("evaluate_combos", FILE, "--where-to-write", os.path.join(tmp, "none"), "--field-to-compress", VAR,
                "--l1-threshold", "0.05", "--clamp-to-bounds", code=2)
        lines = r.stderr.strip().splitlines()
        check(len(lines) == 1 and "--clamp-to-bounds needs --phys-min or --phys-max" in r.stderr,
              "without bounds: %r" % r.stderr)
        print("2. --clamp-to-bounds without bounds refused with one line")
        written(tmp, x)
    finally:
        if not __import__("checks").failures:
            shutil.rmtree(tmp, ignore_errors=True)
    finish("clamp to bounds")


if __name__ == "__main__":
    main()
