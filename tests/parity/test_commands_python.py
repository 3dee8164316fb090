"""The Python dc_toolkit's store commands on our stores (issue 32, item 4), as its tests/cli/test_commands.py
runs them, checked against netCDF4 and numpy:

- open_zarr_and_inspect STORE --head 2 prints the head slice a[:2, :2, :2] of every array: the values
  netCDF4 reads from the source;
- from_zarr_to_netcdf --compression none writes the variables without deflate, --complevel 9 with zlib
  at level 9 (netCDF4's filters()), both value for value; --max-size below the store's uncompressed
  size refuses (exit 2, one line) and writes nothing;
- analyze_clustering RESULTS.parquet (its positional form) prints and draws what --where-to-write DIR
  --var VAR does, the figures beside it; a name that is not results_VAR.parquet asks for --var;
- plot_compression_errors with no pipeline plots the best of DIR/manifest_U.json (the same as --combo
  best_U.json), --manifest-dir D takes it from D, --pipeline a JSON pipeline (lossless zlib: exact);
  --pipeline with indices, and no pipeline without a sweep, are usage errors.

The store: the 300 hPa wind of uv300.nc (NCAR's example data) written by compress with a lossless pipeline.

    test_commands_python.py      (DCTK: the dc_toolkit program; DCTK_NCARG: NCAR's data folder)
"""
import json
import os
import re
import sys
import tempfile

import netCDF4
import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "interop"))
from checks import NCARG, check, finish, run  # noqa: E402

SRC = os.path.join(NCARG, "cdf", "uv300.nc")

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

# --- analyze_clustering RESULTS.parquet, as the Python tool takes it ------------------------------------
sweep = os.path.join(tmp, "sweep")
run("evaluate_combos", SRC, "--where-to-write", sweep, "--field-to-compress", "U", "--l1-threshold", "0.001",
    "--compressor-class", "zstd,zlib", "--filter-class", "bitround", "--serializer-class", "none")
ours = run("analyze_clustering", "--where-to-write", sweep, "--var", "U").stdout
for ext in ("png", "svg", "html"):
    os.remove(os.path.join(sweep, "analyze_clustering_U." + ext))
theirs = run("analyze_clustering", os.path.join(sweep, "results_U.parquet")).stdout
check(theirs == ours and "best combo" in theirs, f"RESULTS.parquet: {theirs!r}, --where-to-write/--var: {ours!r}")
check(all(os.path.isfile(os.path.join(sweep, "analyze_clustering_U." + e)) for e in ("png", "svg", "html")),
      "analyze_clustering RESULTS.parquet did not write its figures beside it")
r = run("analyze_clustering", os.path.join(tmp, "elsewhere.parquet"), code=2)
check("--var" in r.stderr, f"a RESULTS not named results_VAR.parquet: {r.stderr}")

# --- plot_compression_errors --pipeline / --manifest-dir --------------------------------------------------
def plotted(*args, where=sweep):
    out = run("plot_compression_errors", SRC, where, "U", *args).stdout
    check(os.path.isfile(os.path.join(where, "U_compression_errors.pdf")), f"{args}: no PDF")
    return out.splitlines()[0] if out else ""


with open(os.path.join(sweep, "manifest_U.json")) as f:
    manifest_name = json.load(f)["best"]["name"]
by_combo = plotted("--combo", os.path.join(sweep, "best_U.json"))
by_default = plotted()  # the best of DIR/manifest_U.json
check(by_default == by_combo and manifest_name in by_default,
      f"no pipeline given: {by_default!r}; --combo best_U.json: {by_combo!r}; the manifest's best {manifest_name!r}")
elsewhere = os.path.join(tmp, "plots")
check(plotted("--manifest-dir", sweep, where=elsewhere) == by_combo, "--manifest-dir did not plot the manifest's best")
zlib = '{"compressor": {"name": "numcodecs.zlib", "configuration": {"level": 5}}, "filter": null, "serializer": null}'
out = run("plot_compression_errors", SRC, elsewhere, "U", "--pipeline", zlib).stdout
check("zlib" in out and "exact on all" in out, f"--pipeline (lossless zlib): {out}")
r = run("plot_compression_errors", SRC, elsewhere, "U", "0", "0", "0", "--pipeline", zlib, code=2)
check("only" in r.stderr, f"--pipeline with indices: {r.stderr}")
r = run("plot_compression_errors", SRC, os.path.join(tmp, "nothing_here"), "U", code=2)
check("manifest_U.json" in r.stderr, f"no pipeline and no sweep: {r.stderr}")

finish("commands_python")
