#!/usr/bin/python3
"""No destroyed field is called verified (issue 37, finding 3), on real fields:

1. compress --pipeline with a float Delta on tos of tos_ocean_bipolar_grid.nc
   (35 % of it missing over land) and no threshold: the delta's NaNs run on
   into the ocean, so finite values come back NaN; exit 1, a line saying how
   many, the manifest 'failed', no tos in the store;
2. a FixedScaleOffset whose int16 packing cannot hold fice (scale 1e5 packs
   0..1 to 0..100000) is refused with a line naming the range, nothing
   stored; one that fits (scale 1000) is written, and what our export reads
   back equals numcodecs' FixedScaleOffset round trip of netCDF4's values."""
import json
import os
import subprocess
import sys
import tempfile

import netCDF4
import numcodecs
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import check, finish  # noqa: E402

DCTK = os.environ["DCTK"]
NCARG = os.environ.get("DCTK_NCARG", "/usr/share/ncarg/data")
TOS = os.path.join(NCARG, "nug", "tos_ocean_bipolar_grid.nc")
FICE = os.path.join(NCARG, "cdf", "fice.nc")
tmp = tempfile.mkdtemp(prefix="dctk_verify_exact_")
TAIL = [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "zstd", "configuration": {"level": 3}}]


def pipeline(name, first):
    path = os.path.join(tmp, name + ".json")
    with open(path, "w") as f:
        json.dump([first] + TAIL, f)
    return path


def compress(src, var, name, codecs):
    out = os.path.join(tmp, name)
    r = subprocess.run([DCTK, "compress", src, out, "--vars", var, "--pipeline", pipeline(name, codecs)],
                       capture_output=True, text=True)
    store = os.path.join(out, os.path.splitext(os.path.basename(src))[0] + ".zarr")
    man = os.path.join(out, "batch_manifest.json")
    fields = json.load(open(man))["fields"] if os.path.exists(man) else {}
    return r, store, fields.get(var, {})


def source(path, var):
    with netCDF4.Dataset(path) as d:
        return np.ma.filled(d[var][:].astype("<f4"), np.nan)


# 1. finite values that come back NaN
x = source(TOS, "tos")
check(0.2 < np.isnan(x).mean() < 0.6, "tos is not the masked field this test needs: %.2f NaN" % np.isnan(x).mean())
r, store, f = compress(TOS, "tos", "delta", {"name": "numcodecs.delta", "configuration": {"dtype": "<f4"}})
check(r.returncode == 1, "a float Delta over a masked field exited %d: %s" % (r.returncode, r.stdout + r.stderr))
check("finite values came back as NaN" in r.stderr, "no line saying finite values came back NaN: " + r.stderr)
check(f.get("status") == "failed", "manifest: %s" % f)
check(not os.path.exists(os.path.join(store, "tos", "zarr.json")), "the destroyed tos is in the store")
check("verified:" not in r.stdout, "the destroyed field was called verified: " + r.stdout)
print("1. float Delta on masked tos: exit %d, %s" % (r.returncode, r.stderr.strip().splitlines()[-1][-90:]))

# 2. integer packing that wraps is refused, one that fits is written and reads back as numcodecs computes it
wrap = {"name": "numcodecs.fixedscaleoffset",
        "configuration": {"offset": 0, "scale": 100000, "dtype": "<f4", "astype": "<i2"}}
r, store, f = compress(FICE, "fice", "wrap", wrap)
check(r.returncode == 1, "a FixedScaleOffset that wraps exited %d" % r.returncode)
check("cannot hold the field's values" in r.stderr and "100000" in r.stderr and "wrap" in r.stderr,
      "no line naming the packing and range: " + r.stderr)
check(f.get("status") == "failed", "manifest: %s" % f)
check(not os.path.exists(os.path.join(store, "fice", "zarr.json")), "the wrapped fice is in the store")
fit = {"name": "numcodecs.fixedscaleoffset",
       "configuration": {"offset": 0, "scale": 1000, "dtype": "<f4", "astype": "<i2"}}
r, store, f = compress(FICE, "fice", "fit", fit)
check(r.returncode == 0 and f.get("status") == "written", "a FixedScaleOffset that fits: exit %d %s" %
      (r.returncode, r.stderr))
nc = os.path.join(tmp, "fit.nc")
r = subprocess.run([DCTK, "from_zarr_to_netcdf", store, "--out", nc], capture_output=True, text=True)
check(r.returncode == 0, "export: " + r.stderr)
if r.returncode == 0:
    x = source(FICE, "fice")
    c = numcodecs.FixedScaleOffset(offset=0, scale=1000, dtype="<f4", astype="<i2")
    ref = c.decode(c.encode(x)).reshape(x.shape)
    got = source(nc, "fice")
    check(np.array_equal(got, ref, equal_nan=True), "fice read back differs from numcodecs' round trip: max %g" %
          np.nanmax(np.abs(got - ref)))
print("2. FixedScaleOffset: wrap refused, fit written and equal to numcodecs")
finish("verify exact")
