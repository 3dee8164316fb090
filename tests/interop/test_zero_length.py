#!/usr/bin/python3
"""A variable without values (issue 37, finding 8): a netCDF-4 file written
here by netCDF4-python from fice.nc, with an unlimited dimension 'rec' that
has no records yet, a field obs(rec, hlat, hlon) and its coordinate rec.
merge_compressed_fields used to refuse the dataset for ever ("dimension
'rec' has length zero"). Now:
  - compress writes the real field and says obs has no values; the merge
    stores obs and rec as empty arrays with their metadata (exit 0, and
    again on a second merge);
  - zarrita opens them through the consolidated metadata: shape [0, 49, 100]
    and [0], float32 / float64, the input's attributes;
  - open_zarr_and_inspect and inspect_dataset list them; from_zarr_to_netcdf
    writes a file in which xarray finds obs with the input's dims, shape and
    attributes and the real field equal to the input's;
  - the store itself, as a Zarr input, compresses the same way."""
import json
import os
import shutil
import subprocess
import sys
import tempfile

import netCDF4
import numpy as np
import xarray as xr

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import check, finish  # noqa: E402

DCTK = os.environ["DCTK"]
SRC = os.environ["DCTK_SRC"]
SCALE = float(os.environ.get("DCTK_TEST_TIMEOUT_SCALE", "1"))
FICE = os.path.join(os.environ.get("DCTK_NCARG", "/usr/share/ncarg/data"), "cdf", "fice.nc")
PIPE = '[{"name":"bytes","configuration":{"endian":"little"}},{"name":"zstd","configuration":{"level":3}}]'
tmp = tempfile.mkdtemp(prefix="dctk_zero_len_")


def run(*args):
    return subprocess.run([DCTK, *args], capture_output=True, text=True, timeout=300 * SCALE)


src = os.path.join(tmp, "norecs.nc")
with netCDF4.Dataset(FICE) as f, netCDF4.Dataset(src, "w") as d:
    d.createDimension("rec", None)
    for n in ("hlat", "hlon"):
        d.createDimension(n, f.dimensions[n].size)
        v = d.createVariable(n, "f4", (n,))
        v[:] = f[n][:]
        v.units = f[n].units
    ice = d.createVariable("ice", "f4", ("hlat", "hlon"))
    ice[:] = f["fice"][0]
    ice.units = "1"
    obs = d.createVariable("obs", "f4", ("rec", "hlat", "hlon"))
    obs.units = "K"
    obs.long_name = "observed temperature, no records yet"
    rec = d.createVariable("rec", "f8", ("rec",))
    rec.units = "days since 2000-01-01"
with netCDF4.Dataset(src) as d:
    d.set_auto_mask(False)
    want_ice = d["ice"][:]

out = os.path.join(tmp, "out")
store = os.path.join(out, "norecs.zarr")
r = run("compress", src, out, "--pipeline", PIPE)
check(r.returncode == 0, f"compress exit {r.returncode}: {r.stdout[-600:]} {r.stderr}")
check("obs: no values (dimension 'rec' has length 0)" in r.stdout, f"no line on obs: {r.stdout[-600:]}")
r = run("merge_compressed_fields", src, out)
check(r.returncode == 0, f"a second merge: exit {r.returncode}: {r.stderr}")
r = run("compress", src, os.path.join(tmp, "named"), "--vars", "obs", "--pipeline", PIPE)
check(r.returncode == 0, f"compress --vars obs: exit {r.returncode}: {r.stdout[-600:]} {r.stderr}")

# zarrita, through the consolidated metadata
z = subprocess.run(["node", os.path.join(SRC, "tests", "js", "array_shapes.mjs"), store], capture_output=True,
                   text=True, timeout=120 * SCALE)
got = json.loads(z.stdout) if z.returncode == 0 else {"error": z.stderr}
check("error" not in got, f"zarrita: {got.get('error')}")
o, rc = got.get("obs", {}), got.get("rec", {})
check(o.get("shape") == [0, 49, 100] and o.get("dtype") == "float32", f"zarrita's obs: {o}")
check(o.get("attrs", {}).get("units") == "K" and o["attrs"].get("long_name", "").endswith("no records yet"),
      f"zarrita's obs attributes: {o.get('attrs')}")
check(rc.get("shape") == [0] and rc.get("dtype") == "float64", f"zarrita's rec: {rc}")
check(got.get("ice", {}).get("n") == 49 * 100, f"zarrita's ice: {got.get('ice')}")

r = run("open_zarr_and_inspect", store)
check(r.returncode == 0 and "obs  float32 [0,49,100]" in r.stdout, f"open_zarr_and_inspect: {r.returncode} {r.stderr}")
r = run("inspect_dataset", store)
check(r.returncode == 0 and "(rec=0, hlat=49, hlon=100)" in r.stdout, f"inspect_dataset: {r.stdout} {r.stderr}")

nc = os.path.join(tmp, "back.nc")
r = run("from_zarr_to_netcdf", store, "--out", nc)
check(r.returncode == 0, f"export exit {r.returncode}: {r.stderr}")
if r.returncode == 0:
    with xr.open_dataset(nc, mask_and_scale=False) as b, xr.open_dataset(src, mask_and_scale=False) as a:
        check(b["obs"].dims == a["obs"].dims and b["obs"].shape == (0, 49, 100), f"xarray's obs: {b['obs']}")
        check(all(b["obs"].attrs.get(k) == v for k, v in a["obs"].attrs.items()), f"obs attrs {b['obs'].attrs}")
        check(b["rec"].shape == (0,), f"xarray's rec: {b['rec']}")
        check(np.array_equal(b["ice"].values, want_ice), "the real field came back changed")

# the store as a Zarr input
r = run("compress", store, os.path.join(tmp, "again"), "--pipeline", PIPE)
check(r.returncode == 0, f"compress of the store: exit {r.returncode}: {r.stdout[-600:]} {r.stderr}")
check(os.path.exists(os.path.join(tmp, "again", "norecs.zarr", "obs", "zarr.json")), "no empty obs from the store")

shutil.rmtree(tmp)
finish("zero-length variables")
