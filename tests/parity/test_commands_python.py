"""The Python dc_toolkit's store commands on our stores (issue 32, item 4), as its tests/cli/test_commands.py
runs them, checked against netCDF4 and numpy:

- open_zarr_and_inspect STORE --head 2 prints the head slice a[:2, :2, :2] of every array: the values
  netCDF4 reads from the source;
- from_zarr_to_netcdf --compression none writes the variables without deflate, --complevel 9 with zlib
  at level 9 (netCDF4's filters()), both value for value; --max-size below the store's uncompressed
  size refuses (exit 2, one line) and writes nothing.

The store: the 300 hPa wind of uv300.nc (NCAR's example data) written by compress with a lossless pipeline.

    test_commands_python.py      (DCTK: the dc_toolkit program; DCTK_NCARG: NCAR's data folder)
"""
import os
import re
import subprocess
import sys
import tempfile

import netCDF4
import numpy as np

DCTK = os.environ.get("DCTK", "dc_toolkit")
NCARG = os.environ.get("DCTK_NCARG", "/usr/share/ncarg/data")
SRC = os.path.join(NCARG, "cdf", "uv300.nc")
failures = []


def check(ok, what):
    if not ok:
        failures.append(what)
        print("FAIL", what)


def run(*args, code=0):
    r = subprocess.run([DCTK, *args], capture_output=True, text=True)
    check(r.returncode == code, f"{' '.join(args)}: exit {r.returncode}, expected {code}: {r.stderr[-1500:]}")
    return r


tmp = tempfile.mkdtemp(prefix="dctk_cmds_py_")
run("compress", SRC, tmp, "--vars", "U", "--pipeline",
    '{"compressor": {"name": "zstd", "configuration": {"level": 3}}, "filter": null, "serializer": null}')
store = os.path.join(tmp, "uv300.zarr")
with netCDF4.Dataset(SRC) as nc:
    v = nc.variables["U"]
    v.set_auto_maskandscale(True)
    t = np.ma.filled(v[:].astype(np.float32), np.nan)

# open_zarr_and_inspect --head 2: the head slice of t, a line per row of its last dimension
out = run("open_zarr_and_inspect", store, "--head", "2").stdout
block = out[out.index("array U"):]
check("head [:2, :2, :2]:" in block, "no head slice of U in the listing")
rows = re.findall(r"^    \[(\d+), (\d+), :\] (.*)$", block, re.M)
check(len(rows) == 4, f"expected 4 rows of the head slice, got {len(rows)}")
for i, j, vals in rows:
    got = np.array([float(x) for x in vals.split()], dtype=np.float32)
    want = t[int(i), int(j), :2]
    check(np.allclose(got, want, rtol=1e-6, equal_nan=True), f"head row [{i}, {j}]: {got} != netCDF4's {want}")
out0 = run("open_zarr_and_inspect", store, "--head", "0").stdout
check("head [" not in out0, "--head 0 still prints a head slice")
run("open_zarr_and_inspect", store, "--head", "-1", code=2)

# from_zarr_to_netcdf --compression none / --complevel 9, value for value
for flags, deflate in ((("--compression", "none"), None), (("--complevel", "9"), 9)):
    nc_out = os.path.join(tmp, "out_%s.nc" % flags[1])
    run("from_zarr_to_netcdf", store, "--out", nc_out, *flags)
    with netCDF4.Dataset(nc_out) as nc:
        v = nc.variables["U"]
        f = v.filters() or {}
        if deflate is None:
            check(not f.get("zlib"), f"{flags}: the variable is deflated: {f}")
        else:
            check(f.get("zlib") and f.get("complevel") == deflate, f"{flags}: filters {f}")
        v.set_auto_maskandscale(True)
        back = np.ma.filled(v[:].astype(np.float32), np.nan)
    check(np.array_equal(back, t, equal_nan=True), f"{flags}: values differ from the source")

# --max-size below the values' size: refused, nothing written
small = os.path.join(tmp, "small.nc")
r = run("from_zarr_to_netcdf", store, "--out", small, "--max-size", "20KB", code=2)
check(len(r.stderr.strip().splitlines()) == 1 and "--max-size" in r.stderr, f"--max-size: {r.stderr!r}")
check(not os.path.exists(small), "--max-size refused but a file was written")
run("from_zarr_to_netcdf", store, "--out", small, "--compression", "gzip", code=2)

print(f"{len(failures)} failure(s)")
sys.exit(1 if failures else 0)
