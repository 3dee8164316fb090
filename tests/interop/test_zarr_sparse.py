#!/usr/bin/python3
"""Readers bound their work by what is stored (issue 37, finding 6).

Stores whose grid allows 2^31 one-value chunks, of which a few dozen hold
real values (Tstorm.cdf's temperature), in four key layouts: Zarr v2 flat
("i", written by zarr-python) and nested ("i/j", zarr-python), Zarr v3
"c/i" and "c.i" (written here, raw little-endian values). Before, the
readers asked the store about every key the grid allows: inspect, export
and compress never ended. Now:
  - open_zarr_and_inspect ends and its stats equal numpy's over the values
    zarr-python reads back plus the fill value everywhere else;
  - from_zarr_to_netcdf and compress --pipeline of a 2^22-value sparse store
    end, and netCDF4 reads the exported values (of the store and of the
    compressed store) equal to the array numpy builds.
No timing is asserted: a reader that walks the grid again times out."""
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile

import numpy as np
import zarr

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import check, finish, ncarg_field  # noqa: E402

import netCDF4  # noqa: E402

DCTK = os.environ["DCTK"]
SCALE = float(os.environ.get("DCTK_TEST_TIMEOUT_SCALE", "1"))
tmp = tempfile.mkdtemp(prefix="dctk_sparse_")

t = ncarg_field("cdf/Tstorm.cdf", "t").astype(np.float32).ravel()
vals = t[np.isfinite(t)][::97][:40]
check(len(vals) == 40 and np.ptp(vals) > 1, "Tstorm gives 40 distinct real values")
rng = np.random.default_rng(37)


def run(*args):
    return subprocess.run([DCTK, *args], capture_output=True, text=True, timeout=300 * SCALE)


def v3_store(path, n, chunk_sep, fill, idx):
    os.makedirs(os.path.join(path, "x"))
    with open(os.path.join(path, "zarr.json"), "w") as f:
        json.dump({"zarr_format": 3, "node_type": "group", "attributes": {}}, f)
    doc = {"zarr_format": 3, "node_type": "array", "shape": [n], "data_type": "float32",
           "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [1]}},
           "chunk_key_encoding": {"name": "default", "configuration": {"separator": chunk_sep}},
           "fill_value": fill, "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
           "attributes": {}, "dimension_names": ["t"]}
    with open(os.path.join(path, "x", "zarr.json"), "w") as f:
        json.dump(doc, f)
    for i, v in zip(idx, vals):
        key = os.path.join(path, "x", "c", str(i)) if chunk_sep == "/" else os.path.join(path, "x", "c.%d" % i)
        os.makedirs(os.path.dirname(key), exist_ok=True)
        with open(key, "wb") as f:
            f.write(struct.pack("<f", v))


def stats(out):
    m = re.search(r"stats: min (\S+)\s+max (\S+)\s+mean (\S+)\s+NaN (\d+)\s+of (\d+) values", out)
    return None if not m else (float(m[1]), float(m[2]), float(m[3]), int(m[4]), int(m[5]))


def expect(stored, n, fill):
    """numpy's summary of n values: the stored ones, the fill value elsewhere."""
    stored = stored.astype(np.float64)
    rest = n - stored.size
    if np.isnan(fill):
        return stored.min(), stored.max(), stored.mean(), rest, n
    allv = np.append(stored, fill)
    return allv.min(), allv.max(), (stored.sum() + fill * rest) / n, 0, n


N = 2**31
idx = np.sort(rng.choice(N, size=len(vals), replace=False))
cases = []
# Zarr v2, flat keys, written by zarr-python
p = os.path.join(tmp, "v2flat.zarr")
a = zarr.open(p, mode="w", shape=(N,), chunks=(1,), dtype="f4", fill_value=0, compressor=None)
for i, v in zip(idx, vals):
    a[int(i)] = v
cases.append((p, 0.0, a))
# Zarr v2, nested keys, 2-D, NaN fill
p = os.path.join(tmp, "v2nest.zarr")
b = zarr.open(p, mode="w", shape=(2**16, 2**15), chunks=(1, 1), dtype="f4", fill_value=np.nan, compressor=None,
              dimension_separator="/")
for i, v in zip(idx, vals):
    b[int(i) // 2**15, int(i) % 2**15] = v
cases.append((p, np.nan, b))
# Zarr v3, both separators
for sep, fill in (("/", 280.0), (".", "NaN")):
    p = os.path.join(tmp, "v3%s.zarr" % ("slash" if sep == "/" else "dot"))
    v3_store(p, N, sep, fill, idx)
    cases.append((os.path.join(p), float(fill), None))

for path, fill, z in cases:
    name = os.path.basename(path)
    if z is not None:  # zarr-python reads back what was written
        got = np.array([z[int(i)] if z.ndim == 1 else z[int(i) // 2**15, int(i) % 2**15] for i in idx])
        check(np.array_equal(got, vals), f"{name}: zarr-python reads other values")
    r = run("open_zarr_and_inspect", path)
    check(r.returncode == 0, f"{name}: inspect exit {r.returncode}: {r.stderr}")
    s, e = stats(r.stdout), expect(vals, N, fill)
    check(s is not None, f"{name}: no stats line: {r.stdout[-500:]}")
    if s:
        check(s[3:] == e[3:], f"{name}: NaN/count {s[3:]}, numpy {e[3:]}")
        check(np.allclose(s[:3], e[:3], rtol=1e-6, atol=0), f"{name}: min/max/mean {s[:3]}, numpy {e[:3]}")

# export and compress walk every value: a smaller grid of the same kind
n = 2**22
small_idx = np.sort(rng.choice(n, size=len(vals), replace=False))
p = os.path.join(tmp, "small.zarr")
zarr.group(p)
c = zarr.open(os.path.join(p, "x"), mode="w", shape=(n,), chunks=(1,), dtype="f4", fill_value=0, compressor=None)
for i, v in zip(small_idx, vals):
    c[int(i)] = v
want = np.zeros(n, np.float32)
want[small_idx] = vals

nc = os.path.join(tmp, "small.nc")
r = run("from_zarr_to_netcdf", p, "--out", nc)
check(r.returncode == 0, f"export exit {r.returncode}: {r.stderr}")
if r.returncode == 0:
    with netCDF4.Dataset(nc) as d:
        d.set_auto_mask(False)  # the fill value 0 is a value here
        got = d["x"][:]
    check(np.array_equal(got, want), "exported values differ from numpy's array")

out = os.path.join(tmp, "out")
pipe = '[{"name":"bytes","configuration":{"endian":"little"}},{"name":"zstd","configuration":{"level":3}}]'
r = run("compress", p, out, "--pipeline", pipe)
check(r.returncode == 0, f"compress exit {r.returncode}: {r.stdout[-800:]} {r.stderr}")
store = os.path.join(out, "small.zarr")
nc2 = os.path.join(tmp, "small2.nc")
r = run("from_zarr_to_netcdf", store, "--out", nc2)
check(r.returncode == 0, f"export of the compressed store: exit {r.returncode}: {r.stderr}")
if r.returncode == 0:
    with netCDF4.Dataset(nc2) as d:
        d.set_auto_mask(False)
        got = d["x"][:]
    # the input's fill value is its missing value (as xarray reads it): NaN in the compressed field
    check(np.array_equal(got, np.where(want == 0, np.float32(np.nan), want), equal_nan=True),
          "compressed store's values differ from numpy's array")

shutil.rmtree(tmp)
finish("zarr sparse")
