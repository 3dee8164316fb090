#!/usr/bin/python3
"""--append checks the stored pipeline's integer packing like a first write
(issue 37, second read): a run of fice.nc months written with a
FixedScaleOffset into int16 whose scale just holds month 0's largest ice
fraction (0.99726); month 1 (largest 0.99875) packs past 32767. The first
write fits and reads back as numcodecs' round trip; the append is refused
with one line naming the packing and the range, exit 1, and the store keeps
its one month (netCDF4 reads the export)."""
import os
import shutil
import subprocess
import sys
import tempfile

import netCDF4
import numcodecs
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import check, finish  # noqa: E402

DCTK = os.environ["DCTK"]
SCALE = float(os.environ.get("DCTK_TEST_TIMEOUT_SCALE", "1"))
FICE = os.path.join(os.environ.get("DCTK_NCARG", "/usr/share/ncarg/data"), "cdf", "fice.nc")
tmp = tempfile.mkdtemp(prefix="dctk_append_wrap_")
run_dir = os.path.join(tmp, "run")
os.makedirs(run_dir)


def month(i):
    """Month i of fice.nc as its own file, time continuing the run."""
    with netCDF4.Dataset(FICE) as f, netCDF4.Dataset(os.path.join(run_dir, "fice_%03d.nc" % i), "w") as d:
        d.createDimension("time", None)
        for n in ("hlat", "hlon"):
            d.createDimension(n, f.dimensions[n].size)
            v = d.createVariable(n, "f4", (n,))
            v[:] = f[n][:]
            v.units = f[n].units
        t = d.createVariable("time", "f4", ("time",))
        t.units = f["time"].units
        t[:] = f["time"][i:i + 1]
        x = f["fice"]
        x.set_auto_maskandscale(False)
        v = d.createVariable("fice", "f4", ("time", "hlat", "hlon"), fill_value=np.float32(x.missing_value))
        v.units = x.units
        v.set_auto_maskandscale(False)
        v[:] = x[i:i + 1]
        return np.where(np.abs(x[i]) < 1e30, x[i], np.nan)


def run(*args):
    return subprocess.run([DCTK, *args], capture_output=True, text=True, timeout=300 * SCALE)


m0 = month(0)
scale = float(np.floor(32767 / np.nanmax(m0)))
fos = ('[{"name":"numcodecs.fixedscaleoffset","configuration":{"offset":0,"scale":%d,"dtype":"<f4","astype":"<i2"}},'
       '{"name":"bytes","configuration":{"endian":"little"}},{"name":"zstd","configuration":{"level":3}}]' % scale)
out = os.path.join(tmp, "out")
glob = os.path.join(run_dir, "fice_*.nc")
r = run("compress", glob, "--where-to-write", out, "--pipeline", fos)
check(r.returncode == 0, "month 0 with scale %d: exit %d: %s" % (scale, r.returncode, r.stderr))
store = [os.path.join(out, n) for n in os.listdir(out) if n.endswith(".zarr")] if os.path.isdir(out) else []
check(len(store) == 1, "one store: %s" % store)
store = store[0] if store else os.path.join(out, "none.zarr")


def exported():
    nc = os.path.join(tmp, "back.nc")
    if os.path.exists(nc):
        os.remove(nc)
    e = run("from_zarr_to_netcdf", store, "--out", nc)
    check(e.returncode == 0, "export: " + e.stderr)
    if e.returncode:
        return None
    with netCDF4.Dataset(nc) as d:
        d.set_auto_mask(False)
        return d["fice"][:]


got = exported()
c = numcodecs.FixedScaleOffset(offset=0, scale=scale, dtype="<f4", astype="<i2")
want = c.decode(c.encode(m0.astype("<f4"))).reshape(m0.shape)
check(got is not None and got.shape[0] == 1 and np.array_equal(got[0], want, equal_nan=True),
      "month 0 does not read back as numcodecs' round trip")

m1 = month(1)
check(np.nanmax(m1) * scale > 32767, "month 1 is not the case this test needs: %g" % (np.nanmax(m1) * scale))
r = run("compress", glob, "--where-to-write", out, "--append")
lines = r.stderr.strip().splitlines()
check(r.returncode == 1, "the wrapping append exited %d: %s %s" % (r.returncode, r.stdout[-300:], r.stderr))
check(any("cannot hold the field's values" in ln and "%d" % scale in ln and "wrap" in ln for ln in lines),
      "no line naming the packing and range: %s" % lines)
got = exported()
check(got is not None and got.shape[0] == 1 and np.array_equal(got[0], want, equal_nan=True),
      "the store changed after the refused append")

shutil.rmtree(tmp)
finish("append wrap")
