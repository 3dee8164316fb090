#!/usr/bin/python3
"""Readers of a large, sparse but valid Zarr store work by what is stored (issue 37, item 6).

Absent chunks of a Zarr array mean the fill value. Two stores no code of ours wrote, holding real
values (meccatemp.cdf's t) in a few places and nothing elsewhere:
  A. zarrita (npm) writes an [8192, 8192] float32 array in chunks of [1, 1] (2^26 possible keys), fill 280.5,
     2^16 chunks in 1024 runs of 64 (the fewest dctk_zarr_check_dense takes for a sparse array, not a forgery);
  B. this script writes the brief's [1000000, 1000] float32 array in shards of [50000, 1000] with inner
     chunks of [1000, 1000] (codec bytes, index bytes + crc32c at the end, as the sharding spec says):
     2 of its 20 shards, each holding 2 of its 50 inner chunks (the other entries absent), fill NaN.
from_zarr_to_netcdf exports each, and netCDF4 reads every value back equal to the array numpy builds (the
fill value wherever nothing was written); open_zarr_and_inspect's summary equals numpy's; compress of A
with a given pipeline reads it and our export of the result equals numpy's (its fill value the missing
value, NaN). Each command runs under a timeout of 20 s x TIMEOUT_SCALE. Before, the readers walked every
possible key of A in every block that held a stored one (67 million), and the export read and wrote all
3.7 GiB of B's fill value: on the 2-core test machine, busy, export A 48 s, compress A 96 s, export B 33 s;
now the absent keys and blocks cost nothing (the keys are listed, the fill value placed in one pass, the
stored chunks alone read; a block with no stored chunk is left unwritten in the netCDF file, whose fill
value is the array's): 2.3 s, 3.4 s and 2.4 s there.

Run by ctest with DCTK and DCTK_NCARG set."""
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import time

import netCDF4
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import check, finish, ncarg_field  # noqa: E402
from zarr_shards import crc32c  # noqa: E402

DCTK = os.environ["DCTK"]
HERE = os.path.dirname(os.path.abspath(__file__))
SCALE = float(os.environ.get("DCTK_TEST_TIMEOUT_SCALE", "1") or 1)
TIMEOUT = 20 * SCALE  # over 5 times what the commands take now on a busy 2-core machine
ABSENT = 2**64 - 1


def run(*args):
    t0 = time.monotonic()
    try:
        r = subprocess.run([DCTK, *args], capture_output=True, text=True, timeout=TIMEOUT)
        print("%s %s: %.2f s" % (args[0], os.path.basename(args[1]), time.monotonic() - t0))  # for the log only
        return r.returncode, r.stdout, r.stderr
    except subprocess.TimeoutExpired:
        return None, "", "timed out after %g s: the reader walks the keys or values that are not stored" % TIMEOUT


t = ncarg_field("cdf/meccatemp.cdf", "t").astype(np.float32)  # (31, 40, 49), kelvin
check(t.min() > 190 and t.max() < 330 and not np.any(t == np.float32(280.5)), "meccatemp's t is not the field")
# tmpfs when there is one: 65536 chunk files written and removed on a disk busy with other work take minutes
tmp = tempfile.mkdtemp(prefix="dctk_sparse_export_", dir="/dev/shm" if os.path.isdir("/dev/shm") else None)


def summary(out):
    m = re.search(r"stats: min (\S+)\s+max (\S+)\s+mean (\S+)\s+NaN (\d+)\s+of (\d+) values", out)
    return None if not m else (float(m[1]), float(m[2]), float(m[3]), int(m[4]), int(m[5]))


def check_summary(name, path, stored, n, fill):
    """open_zarr_and_inspect's stats against numpy's: the stored values and n - len(stored) fill values."""
    code, out, err = run("open_zarr_and_inspect", path)
    s = summary(out) if code == 0 else None
    stored = stored.astype(np.float64)
    if np.isnan(fill):
        want = (stored.min(), stored.max(), stored.mean(), n - stored.size, n)
    else:
        both = np.append(stored, fill)
        want = (both.min(), both.max(), (stored.sum() + fill * (n - stored.size)) / n, 0, n)
    check(s is not None and s[3:] == want[3:] and np.allclose(s[:3], want[:3], rtol=1e-6, atol=0),
          "%s: open_zarr_and_inspect %s, numpy %s (exit %s %s)" % (name, s, want, code, err[-300:]))


def exported(name, store):
    """Our export of the store, open in netCDF4 (None when it failed)."""
    nc = os.path.join(tmp, name + ".nc")
    code, _, err = run("from_zarr_to_netcdf", store, "--out", nc)
    check(code == 0, "%s: from_zarr_to_netcdf exit %s: %s" % (name, code, err[-400:]))
    if code != 0:
        return None
    ds = netCDF4.Dataset(nc)
    ds.set_auto_mask(False)  # the fill value is a value here
    return ds


# A: zarrita, 2^26 one-value chunks, 2^16 written in 1024 runs of 64 along rows (the first chunk and the last
# among them): the fewest stored that dctk_zarr_check_dense takes for a sparse array, not a forgery
shape_a = (8192, 8192)
flat = np.resize(t.ravel(), 65536)  # t's values again as far as they do not reach
rows_a = np.linspace(0, 8191, 1024).astype(int)
writes = [((int(y), int(k * 8128 // 1023)), flat[k * 64:(k + 1) * 64].reshape(1, 64)) for k, y in enumerate(rows_a)]
want_a = np.full(shape_a, np.float32(280.5))
spec = {"shape": list(shape_a), "chunks": [1, 1], "fill": 280.5, "dims": ["y", "x"], "writes": []}
for k, (start, v) in enumerate(writes):
    f = os.path.join(tmp, "a%d.f32" % k)
    np.ascontiguousarray(v, dtype="<f4").tofile(f)
    spec["writes"].append({"start": list(start), "shape": list(v.shape), "values": f})
    want_a[start[0]:start[0] + v.shape[0], start[1]:start[1] + v.shape[1]] = v
with open(os.path.join(tmp, "a.json"), "w") as fh:
    json.dump(spec, fh)
store_a = os.path.join(tmp, "a.zarr")
t0 = time.monotonic()
r = subprocess.run(["node", os.path.join(HERE, "..", "js", "sparse_store.mjs"), store_a, os.path.join(tmp, "a.json")],
                   capture_output=True, text=True, timeout=300 * SCALE)
print("zarrita: %.2f s" % (time.monotonic() - t0))
check(r.returncode == 0, "zarrita could not write store A: %s" % r.stderr[-600:])
nfiles = sum(len(fs) for _, _, fs in os.walk(os.path.join(store_a, "x", "c")))
check(nfiles == 65536, "zarrita wrote %d chunk files, not 65536" % nfiles)

ds = exported("a", store_a)
if ds is not None:
    got = ds["x"][:]
    ds.close()
    check(got.shape == shape_a and np.array_equal(got, want_a),
          "A: the export differs from numpy's array in %d values" % int(np.sum(got != want_a)))
stored_a = np.concatenate([v.ravel() for _, v in writes])
check_summary("A", store_a, stored_a, want_a.size, 280.5)

out = os.path.join(tmp, "out")
pipe = '[{"name":"bytes","configuration":{"endian":"little"}},{"name":"zstd","configuration":{"level":3}}]'
code, o, err = run("compress", store_a, out, "--pipeline", pipe)
check(code == 0, "A: compress exit %s: %s %s" % (code, o[-400:], err[-400:]))
if code == 0:
    ds = exported("a_compressed", os.path.join(out, "a.zarr"))
    if ds is not None:
        got = ds["x"][:]
        ds.close()
        # the input's fill value is its missing value (as xarray reads it): NaN in the compressed field
        check(np.array_equal(got, np.where(want_a == np.float32(280.5), np.float32(np.nan), want_a), equal_nan=True),
              "A: the compressed store's values differ from numpy's array")
print("A: 2^26 one-value chunks, 2^16 written by zarrita: export, inspect and compress equal numpy's")

# B: [1000000, 1000] in 20 shards of [50000, 1000], inner chunks [1000, 1000]; shards 0 and 19 written,
# each with 2 of its 50 inner chunks
shape_b, shard, inner = (1000000, 1000), (50000, 1000), (1000, 1000)
nin = shard[0] // inner[0]
store_b = os.path.join(tmp, "b.zarr")
os.makedirs(os.path.join(store_b, "x", "c"))
with open(os.path.join(store_b, "zarr.json"), "w") as fh:
    json.dump({"zarr_format": 3, "node_type": "group", "attributes": {}}, fh)
with open(os.path.join(store_b, "x", "zarr.json"), "w") as fh:
    json.dump({"zarr_format": 3, "node_type": "array", "shape": list(shape_b), "data_type": "float32",
               "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": list(shard)}},
               "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
               "fill_value": "NaN",
               "codecs": [{"name": "sharding_indexed", "configuration": {
                   "chunk_shape": list(inner), "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
                   "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "crc32c"}],
                   "index_location": "end"}}],
               "dimension_names": ["n", "m"], "attributes": {}}, fh)
tile = np.resize(t.ravel(), inner[0] * inner[1]).reshape(inner)  # t's values again as far as they do not reach
written = {0: {3: tile, 47: tile[::-1]}, 19: {0: tile * np.float32(0.5), 49: tile + np.float32(1)}}
for s, chunks in written.items():
    data, index = b"", [(ABSENT, ABSENT)] * nin
    for i, v in sorted(chunks.items()):
        raw = np.ascontiguousarray(v, dtype="<f4").tobytes()
        index[i] = (len(data), len(raw))
        data += raw
    idx = b"".join(struct.pack("<QQ", *e) for e in index)
    os.makedirs(os.path.join(store_b, "x", "c", str(s)), exist_ok=True)
    with open(os.path.join(store_b, "x", "c", str(s), "0"), "wb") as fh:
        fh.write(data + idx + struct.pack("<I", crc32c(idx)))

ds = exported("b", store_b)
if ds is not None:
    bad, slab = 0, 50000
    for s in range(shape_b[0] // slab):  # one shard's rows at a time: numpy's array of them, then netCDF4's
        want = np.full((slab, shape_b[1]), np.float32(np.nan))
        for i, v in written.get(s, {}).items():
            want[i * inner[0]:(i + 1) * inner[0]] = v
        got = ds["x"][s * slab:(s + 1) * slab]
        bad += int(np.sum(~((got == want) | (np.isnan(got) & np.isnan(want)))))
    ds.close()
    check(bad == 0, "B: the export differs from numpy's array in %d values" % bad)
stored_b = np.concatenate([v.ravel() for c in written.values() for v in c.values()])
check_summary("B", store_b, stored_b, shape_b[0] * shape_b[1], np.nan)
print("B: 2 of 20 shards of [1000000, 1000], 2 inner chunks each: export and inspect equal numpy's")
shutil.rmtree(tmp, ignore_errors=True)
finish("zarr_sparse_export")
