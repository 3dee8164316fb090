#!/usr/bin/python3
"""Every compressor after every expanding serializer member (issue 24, item 5).

A ZFP stream at a high rate or precision is larger than the raw chunk: on the
real field tas of tas_rotated_grid_EUR11.nc in chunks [1, 1, 154, 424] the two
length-1 axes fill a sixteenth of each 4-d zfp block. The bytes->bytes
decoders once capped their output at what the raw chunk allows (twice it plus
1 MiB) and refused such a stream ("numcodecs.lz4: stored size ... is more
than a chunk of this array holds"), in the sweep and when a store written
with it was read back.

  - which members expand is decided by Debian's zfpy (numcodecs.ZFPY, and the
    zfp.rs stream rebuilt from zfpy, zfprs_ref.py), not by us; at least two
    must pass the old cap, or the test could not fail;
  - sweep path: evaluate_combos runs every compressor of the default space
    (98, with and without a byte shuffle) after every ZFP member; every combo
    of an expanding member must succeed, and after the largest one its ratio
    must equal the one numcodecs computes for the same pipeline (but for
    gzip and zlib, which encode through libdeflate, not zlib);
  - store path: one member of each of the 7 compressor families after every
    member that passes the old cap:
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
from pipeline_ref import compressor_chain, run_combo  # noqa: E402
from sample_plan import rebuild  # noqa: E402
from zfprs_ref import cut_meta, postcard, zfpy_compress  # noqa: E402

DCTK = os.environ["DCTK"]
NCARG = os.environ.get("DCTK_NCARG", "/usr/share/ncarg/data")
FILE = os.path.join(NCARG, "nug", "tas_rotated_grid_EUR11.nc")
VAR = "tas"
CHUNK = ["--inner-chunk-mib", "0.25"]  # [1, 1, 154, 424]: 255 KiB
ROWS = 154
TMP = tempfile.mkdtemp(prefix="dctk-expand-")
ZFPRS_PARAM = {"fixed-rate": "rate", "fixed-precision": "precision", "fixed-accuracy": "tolerance"}


def field():
    with netCDF4.Dataset(FILE) as d:
        v = d.variables[VAR]
        v.set_auto_maskandscale(False)
        return np.ascontiguousarray(v[...]).astype("<f4")


def zfpy_stream(x, conf):
    """numcodecs' ZFPY stream of x for a zfpy member of the space."""
    return bytes(numcodecs.ZFPY(**{k: conf[k] for k in ("mode", "tolerance", "rate", "precision")}).encode(x))


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
                        "--eval-data-size-limit", "280KB", "--l1-threshold", "1e-3", "--threads-per-rank", "2"] + CHUNK,
                       capture_output=True, text=True)
    check(r.returncode == 0, "evaluate_combos failed: " + r.stderr[-1500:])
    if r.returncode:
        return [], None
    with open(os.path.join(out, "best_%s.json" % VAR)) as f:
        sample = np.ascontiguousarray(rebuild(x, json.load(f)["sample"]))
    with open(os.path.join(out, "config_space_%s_rank0.csv" % VAR), newline="") as f:
        return list(csv.DictReader(f)), sample


def check_sweep(sample, rows, expanding, largest):
    ran = 0
    for row in rows:
        if not row["serializer"] or row["serializer"] not in expanding or not row["compressor"]:
            continue
        ran += 1
        what = "%s after %s" % (row["compressor"], row["serializer"])
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
    check(shard[:2] == [1, 1] and shard[3] == inner[3] == x_lon(), "unexpected shard layout %s / %s" % (shard, inner))
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
    past_cap = sorted(s for s in expanding if size[s] > old_cap)
    check(len(past_cap) >= 2, "only %d ZFP members pass the old cap: the test could not fail" % len(past_cap))
    check_sweep(sample, rows, expanding, max(expanding, key=lambda s: size[s]))
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
