"""from_nc_to_zarr, the Python dc_toolkit's conversion (issue 32, item 4), read back by zarrita:

The input: t of rectilinear_grid_3D.nc (NCAR's example data) packed as ncpdq packs (int16 codes,
scale_factor, add_offset, a _FillValue over the first rows of each level) into a netCDF-4 file in
chunks of (1, 5, 48, 96) with deflate, beside its coordinates and global attributes, by
python3-netCDF4.

- by default (values as stored, source chunks): t is int16 in chunks (1, 5, 48, 96) with the bytes
  serializer alone (no filter, no compressor, no sharding), its attributes scale_factor, add_offset
  and _FillValue kept, its fill value the _FillValue, dimension names the file's; zarrita, through
  the consolidated metadata, reads every variable as netCDF4 reads it raw (digest of the values), the
  root carries the file's global attributes;
- --mask-and-scale --no-preserve-source-chunks: t holds xarray's CF-decoded values (NaN where the
  fill was), in one chunk (under 128 MiB); the packing attributes are gone;
- a netCDF-3 file (uv300.nc) keeps each variable in one chunk (contiguous in the file);
- an existing store is refused (exit 2) unless --overwrite; --no-consolidated leaves no consolidated
  metadata; a GRIB file is refused (exit 2, one line).

    test_nc_to_zarr.py   (DCTK: the dc_toolkit program; DCTK_NCARG, DCTK_SRC)
"""
import hashlib
import json
import os
import subprocess
import sys
import tempfile

import netCDF4
import numpy as np
import xarray

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "interop"))
from checks import NCARG, check, finish, run  # noqa: E402

SRC = os.environ.get("DCTK_SRC") or os.path.dirname(os.path.dirname(HERE))
RECT = os.path.join(NCARG, "nug", "rectilinear_grid_3D.nc")
UV = os.path.join(NCARG, "cdf", "uv300.nc")
tmp = tempfile.mkdtemp(prefix="dctk_nc2zarr_")
CHUNK = [1, 5, 48, 96]


def pack(path):
    with netCDF4.Dataset(RECT) as s, netCDF4.Dataset(path, "w", format="NETCDF4") as d:
        d.setncatts({a: s.getncattr(a) for a in s.ncattrs()})
        for n, dim in s.dimensions.items():
            d.createDimension(n, len(dim))
        for n in ("lon", "lat", "lev", "time"):
            v = s[n]
            w = d.createVariable(n, v.dtype, v.dimensions)
            w.setncatts({a: v.getncattr(a) for a in v.ncattrs()})
            w[:] = v[:]
        x = s["t"][:].astype(np.float64)
        lo, hi = float(x.min()), float(x.max())
        scale, offset = (hi - lo) / 65534, (hi + lo) / 2
        w = d.createVariable("t", "i2", s["t"].dimensions, zlib=True, chunksizes=CHUNK, fill_value=-32768)
        w.setncatts({"units": s["t"].units, "scale_factor": scale, "add_offset": offset})
        w.set_auto_maskandscale(False)
        codes = np.round((x - offset) / scale).astype(np.int16)
        codes[:, :, :3, :] = -32768  # missing
        w[:] = codes


def raw(path, name):
    with netCDF4.Dataset(path) as d:
        v = d[name]
        v.set_auto_maskandscale(False)
        return np.ascontiguousarray(v[...])


def digests(store):
    r = subprocess.run(["node", os.path.join(SRC, "tests", "js", "store_digest.mjs"), store], capture_output=True,
                       text=True)
    return json.loads(r.stdout) if r.returncode == 0 else {"error": r.stderr}


def sha(a):
    return hashlib.sha256(np.ascontiguousarray(a).astype(a.dtype.newbyteorder("<")).tobytes()).hexdigest()


def meta(store, name):
    with open(os.path.join(store, name, "zarr.json")) as f:
        return json.load(f)


nc = os.path.join(tmp, "packed.nc")
pack(nc)

# --- default: values as stored, in the source's chunks ---------------------------------------------------
run("from_nc_to_zarr", nc)
store = os.path.join(tmp, "packed.zarr")
m = meta(store, "t")
check(m["data_type"] == "int16" and m["chunk_grid"]["configuration"]["chunk_shape"] == CHUNK,
      f"t: {m['data_type']} in chunks {m['chunk_grid']['configuration']['chunk_shape']}, expected int16 in {CHUNK}")
check([c["name"] for c in m["codecs"]] == ["bytes"], f"t's codecs: {m['codecs']} (the bytes serializer alone)")
check(m["fill_value"] == -32768 and m.get("dimension_names") == ["time", "lev", "lat", "lon"],
      f"t's fill value {m['fill_value']} and dimension names {m.get('dimension_names')}")
attrs = m.get("attributes", {})
check(all(k in attrs for k in ("scale_factor", "add_offset", "_FillValue", "units")),
      f"t's attributes lost the packing: {sorted(attrs)}")
got = digests(store)
check(sorted(got.get("listed", [])) == ["lat", "lev", "lon", "t", "time"], f"zarrita lists {got.get('listed')}")
for name in ("t", "lat", "lon", "lev", "time"):
    want = sha(raw(nc, name))
    check(got.get("arrays", {}).get(name, {}).get("sha256") == want,
          f"{name}: zarrita's values are not netCDF4's raw values: {got.get('arrays', {}).get(name)}")
with open(os.path.join(store, "zarr.json")) as f:
    root = json.load(f)
with netCDF4.Dataset(nc) as d:
    check(root.get("attributes", {}).get("Conventions") == d.getncattr("Conventions"),
          f"the root lacks the file's attributes: {root.get('attributes')}")

# an existing store: refused, then replaced with --overwrite
r = run("from_nc_to_zarr", nc, code=2)
check("--overwrite" in r.stderr and len(r.stderr.strip().splitlines()) == 1, f"an existing store: {r.stderr}")

# --- --mask-and-scale --no-preserve-source-chunks: xarray's decoded values, one chunk ------------------------
run("from_nc_to_zarr", nc, "--out", store, "--overwrite", "--mask-and-scale", "--no-preserve-source-chunks")
m = meta(store, "t")
with xarray.open_dataset(nc) as ds:
    dec = ds["t"].values
check(m["data_type"] == str(dec.dtype) and m["chunk_grid"]["configuration"]["chunk_shape"] == list(dec.shape),
      f"decoded t: {m['data_type']} in {m['chunk_grid']['configuration']['chunk_shape']}, xarray: {dec.dtype} "
      f"{dec.shape}")
check(not any(k in m.get("attributes", {}) for k in ("scale_factor", "add_offset")),
      f"decoded t keeps its packing attributes: {m.get('attributes')}")
got = digests(store)
check(np.isnan(dec).any() and got.get("arrays", {}).get("t", {}).get("sha256") == sha(dec),
      f"--mask-and-scale: zarrita's t is not xarray's decoded values: {got.get('arrays', {}).get('t')}")

# --- netCDF-3: one chunk per variable; --no-consolidated ------------------------------------------------------
out = os.path.join(tmp, "uv.zarr")
run("from_nc_to_zarr", UV, "--out", out, "--no-consolidated")
m = meta(out, "U")
check(m["chunk_grid"]["configuration"]["chunk_shape"] == list(raw(UV, "U").shape),
      f"netCDF-3 U: chunks {m['chunk_grid']['configuration']['chunk_shape']}, expected the whole variable")
with open(os.path.join(out, "zarr.json")) as f:
    check("consolidated_metadata" not in json.load(f), "--no-consolidated wrote consolidated metadata")
grib = os.path.join(NCARG, "grb", sorted(os.listdir(os.path.join(NCARG, "grb")))[0])
r = run("from_nc_to_zarr", grib, "--out", os.path.join(tmp, "g.zarr"), code=2)
check(len(r.stderr.strip().splitlines()) == 1 and "netCDF" in r.stderr, f"a GRIB input: {r.stderr}")

finish("nc_to_zarr")
