#!/usr/bin/python3
"""Every compressor after every expanding serializer member (issue 24, item 5).

A ZFP stream at a high rate or precision is larger than the raw chunk: zfp
codes 4^d blocks, and axes of 2 fill half of theirs. The field is the real tas
of tas_rotated_grid_EUR11.nc (its first 100 rows) in two time steps and two
heights (copies shifted by a fraction of a kelvin), one chunk [2, 2, 100, 424]
that both ZFP serializers code in 4-D, a quarter of each block padding (axes
of 1 would be dropped: zfpy codes a chunk as the Python tool folds it). The bytes->bytes
decoders once capped their output at what the raw chunk allows (twice it plus
1 MiB) and refused such a stream ("numcodecs.lz4: stored size ... is more
than a chunk of this array holds"), in the sweep and when a store written
with it was read back.

  - which members expand is decided by Debian's zfpy (numcodecs.ZFPY, and the
    zfp.rs stream rebuilt from zfpy, zfprs_ref.py), not by us; at least one
    must pass the old cap (one zfpy member: 4 times the raw chunk at rate 32),
    or the test could not fail;
  - sweep path: evaluate_combos runs every compressor of the default space
    (98, with and without a byte shuffle) after every ZFP member; every combo
    of an expanding member must succeed, and after the largest one its ratio
    must equal the one numcodecs computes for the same pipeline (but for
    gzip and zlib, which encode through libdeflate, not zlib);
  - store path: one member of each of the 7 compressor families after every
    zfpy member that passes the old cap:
    compress_with_optimal writes the field and verifies it; each full chunk
    is decoded from its shard by numcodecs (the compressors) and must be
    byte for byte zfpy's stream of that chunk, and our own reader
    (from_zarr_to_netcdf) must give back exactly what zfpy decodes.
"""
import csv
import json
import math
import os
import struct
import subprocess
import sys
import tempfile

import netCDF4
import numcodecs
import numpy as np
import zfpy

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import check, finish  # noqa: E402
from pipeline_ref import compressor_chain, run_combo, zfp_folded  # noqa: E402
from sample_plan import rebuild  # noqa: E402
from zfprs_ref import cut_meta, postcard, zfpy_compress  # noqa: E402

DCTK = os.environ["DCTK"]
NCARG = os.environ.get("DCTK_NCARG", "/usr/share/ncarg/data")
REAL = os.path.join(NCARG, "nug", "tas_rotated_grid_EUR11.nc")
VAR = "tas"
CHUNK = ["--inner-chunk-mib", "1"]  # one chunk [2, 2, 100, 424]: 662.5 KiB
ROWS = 100
TMP = tempfile.mkdtemp(prefix="dctk-expand-")
FILE = os.path.join(TMP, "tas4d.nc")
ZFPRS_PARAM = {"fixed-rate": "rate", "fixed-precision": "precision", "fixed-accuracy": "tolerance"}


def field():
    """FILE, written from the real field: (time 2, height 2, rlat 100, rlon 424)."""
    with netCDF4.Dataset(REAL) as d:
        v = d.variables[VAR]
        v.set_auto_maskandscale(False)
        t = np.asarray(v[0, 0, :ROWS]).astype("<f4")
    x = np.stack([np.stack([t + 0.5 * i + 0.25 * j for j in range(2)]) for i in range(2)]).astype("<f4")
    with netCDF4.Dataset(FILE, "w") as w:
        for name, n in zip(("time", "height", "rlat", "rlon"), x.shape):
            w.createDimension(name, n)
        w.createVariable(VAR, "f4", ("time", "height", "rlat", "rlon"))[:] = x
    return x


def zfpy_stream(x, conf):
    """numcodecs' ZFPY stream of x for a zfpy member of the space, folded as the Python tool folds it."""
    return bytes(numcodecs.ZFPY(**{k: conf[k] for k in ("mode", "tolerance", "rate", "precision")}).encode(zfp_folded(x)))


def zfprs_stream(x, conf):
    """numcodecs-zfp's stream rebuilt from zfpy (zfprs_ref.py)."""
    mode = conf["mode"]
    return postcard(x) + cut_meta(zfpy_compress(x, mode, conf[ZFPRS_PARAM[mode]]))


def reference_stream(x, ser):
    conf = ser["configuration"]
    return zfprs_stream(x, conf) if conf.get("id") == "zfp.rs" else zfpy_stream(x, conf)


def sweep(x):
    out = os.path.join(TMP, "sweep")
    r = subprocess.run([DCTK, "evaluate_combos", FILE, "--where-to-write", out, "--field-to-compress", VAR,
                        "--filter-class", "none", "--serializer-class", "zfpy,zfprs", "--search", "exhaustive",
                        "--eval-data-size-limit", "700KB", "--l1-threshold", "1e-3", "--threads-per-rank", "2"] + CHUNK,
                       capture_output=True, text=True)
    check(r.returncode == 0, "evaluate_combos failed: " + r.stderr[-1500:])
    if r.returncode:
        return [], None
    with open(os.path.join(out, "best_%s.json" % VAR)) as f:
        sample = np.ascontiguousarray(rebuild(x, json.load(f)["sample"]))
    check(sample.shape == x.shape, "the sample is not the whole field: %s" % (sample.shape,))
    with open(os.path.join(out, "config_space_%s_rank0.csv" % VAR), newline="") as f:
        return list(csv.DictReader(f)), sample


def check_sweep(sample, rows, expanding, largest):
    ran = 0
    for row in rows:
        if not row["serializer"] or not row["compressor"]:
            continue
        what = "%s after %s" % (row["compressor"], row["serializer"])
        if row["serializer"] in expanding:
            ran += 1
            check(row["error"] == "", "sweep: %s failed: %s" % (what, row["error"]))
        # gzip and zlib encode through libdeflate (deflate.c), whose bytes differ from zlib's
        if row["serializer"] != largest or row["error"] or '"gzip"' in row["compressor"] or "zlib" in row["compressor"]:
            continue
        ratio = run_combo(sample, list(sample.shape), row)[0]
        check(math.isclose(float(row["ratio"]), ratio, rel_tol=1e-6),
              "sweep: %s: ratio %s, numcodecs %.9g" % (what, row["ratio"], ratio))
    # 98 compressors after each expanding member
    check(ran == 98 * len(expanding), "sweep: %d combos after expanding members, expected %d"
          % (ran, 98 * len(expanding)))


def shard_chunk(store, c):
    """Inner chunk c along rlat, from its shard's index (at the end: offset and
    length of each inner chunk as little-endian u64 in C order, then a crc32c)."""
    with open(os.path.join(store, VAR, "zarr.json")) as f:
        meta = json.load(f)
    shard = meta["chunk_grid"]["configuration"]["chunk_shape"]
    inner = meta["codecs"][0]["configuration"]["chunk_shape"]
    check(shard[:2] == [2, 2] and shard[3] == inner[3] == x_lon(), "unexpected shard layout %s / %s" % (shard, inner))
    per = shard[2] // inner[2]
    with open(os.path.join(store, VAR, "c", "0", "0", str(c // per), "0"), "rb") as f:
        data = f.read()
    index = data[-(16 * per + 4):-4]
    off, n = struct.unpack("<QQ", index[16 * (c % per):16 * (c % per) + 16])
    return data[off:off + n]


def x_lon():
    return 424


def decode_compressors(comp, data):
    for kind, ts, c in reversed(compressor_chain(comp)):
        data = bytes(c.decode(data))
    return data


def zfpy_decode(x, ser):
    conf = ser["configuration"]
    if conf.get("id") == "zfp.rs":
        return zfpy.decompress_numpy(zfpy_compress(x, conf["mode"], conf[ZFPRS_PARAM[conf["mode"]]]))
    return zfpy.decompress_numpy(zfpy_stream(x, conf))


def write_and_read(x, ser, comp, k):
    out = os.path.join(TMP, "store%d" % k)
    what = "%s after %s" % (json.dumps(comp), json.dumps(ser))
    codecs = [ser] + (comp if isinstance(comp, list) else [comp])
    r = subprocess.run([DCTK, "compress_with_optimal", FILE, out, VAR, "--pipeline", json.dumps(codecs),
                        "--threads-per-rank", "1", "--shard-mib", "1"] + CHUNK, capture_output=True, text=True)
    check(r.returncode == 0, "store: %s: compress_with_optimal failed: %s" % (what, r.stderr[-800:]))
    if r.returncode:
        return
    store = os.path.join(out, os.path.basename(FILE).replace(".nc", ".zarr"))
    nc = os.path.join(TMP, "back%d.nc" % k)
    r = subprocess.run([DCTK, "from_zarr_to_netcdf", store, "--out", nc], capture_output=True, text=True)
    check(r.returncode == 0, "store: %s: read back failed: %s" % (what, r.stderr[-800:]))
    if r.returncode:
        return
    with netCDF4.Dataset(nc) as d:
        got = np.asarray(d.variables[VAR][...]).astype("<f4")
    for c in range(x.shape[2] // ROWS):  # the full chunks; the edge one is padded
        part = np.ascontiguousarray(x[:, :, c * ROWS:(c + 1) * ROWS])
        stream = decode_compressors(comp, shard_chunk(store, c))
        check(stream == reference_stream(part, ser),
              "store: %s: chunk %d: the stored stream is not zfpy's" % (what, c))
        want = np.asarray(zfpy_decode(part, ser), dtype="<f4").reshape(part.shape)
        check(got[:, :, c * ROWS:(c + 1) * ROWS].tobytes() == want.tobytes(),
              "store: %s: chunk %d: values read back differ from zfpy's decode" % (what, c))


def main():
    x = field()
    rows, sample = sweep(x)
    if sample is None:
        finish("expanding_serializers")
    sers = {r["serializer"] for r in rows if r["serializer"]}
    size = {s: len(reference_stream(sample, json.loads(s))) for s in sers}
    expanding = {s for s in sers if size[s] > sample.nbytes}
    old_cap = 2 * sample.nbytes + (1 << 20)
    # the store part checks zfpy members: zfprs_ref rebuilds zfp.rs's fixed-rate stream with zfpy's rate rule,
    # which numcodecs-zfp does not follow
    past_cap = sorted(s for s in expanding if size[s] > old_cap and json.loads(s)["name"] == "numcodecs.zfpy")
    check(len(past_cap) >= 1, "no zfpy member passes the old cap: the test could not fail")
    # numcodecs' ratio after the largest zfpy member (pipeline_ref codes zfpy, not zfp.rs)
    zfpy_members = [s for s in sers if json.loads(s)["name"] == "numcodecs.zfpy"]
    check_sweep(sample, rows, expanding, max(zfpy_members, key=lambda s: size[s]))
    # one member of every compressor family (the space puts no byte shuffle after a serializer)
    picked, seen = [], set()
    for r in rows:
        comp = json.loads(r["compressor"]) if r["compressor"] else None
        name = comp and (comp[-1]["name"] if isinstance(comp, list) else comp["name"])
        if name and name not in seen:
            seen.add(name)
            picked.append(comp)
    check(len(picked) == 7, "compressor families found: %s" % sorted(seen))
    k = 0
    for s in past_cap:
        for comp in picked:
            write_and_read(x, json.loads(s), comp, k)
            k += 1
    finish("expanding_serializers")


if __name__ == "__main__":
    main()
