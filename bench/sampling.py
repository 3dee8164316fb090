#!/usr/bin/python3
"""Does the sweep's sample predict the whole field? bench/sampling.py NEW_BUILD [LEGACY_EXE]

For each real libncarg-data field below, `dc_toolkit compress` sweeps a sample of at most
10 % of the field (--eval-data-size-limit = 10 % of its bytes), writes the whole field with
the best combo and reports the ratio the sweep predicted and the ratio the store achieved.
It runs twice per field in the same run: with today's sampler (LEGACY_EXE, by default main's
build /work/main/build/dc_toolkit at commit 69421fe: strides the first dimension that does
not fit, cuts rows) and with the new one (NEW_BUILD/dc_toolkit: CF dimension kinds, mid-block
runs shaped like the production chunk, horizontal tiles). Drift = (achieved - predicted) /
predicted.

The codec space is narrowed so the bench takes minutes on a shared 2-core machine: zstd
compressors (with and without shuffle), no filter, the plain and the zfp serializers, under
a relative L1 bound of 1e-3. The production chunk is 1/40 of each field (--inner-chunk-mib
set per field): these files are a few hundred KB to a few MB, and with the default 16 MiB
every field would be one chunk, so a sample could not be production-shaped without being
the whole field; 40 chunks per field stand for the thousands of 16 MiB chunks of a large one.
"write N" marks a field whose whole field missed the bound its sample met (NaN the sample
did not hold), so compress wrote its N-th best combo; the drift is that write's.

The new sampler never takes less than 3 time steps x 3 levels (or all): where that is more
than 10 % of a small field, it says so (the "sample" column is the true fraction).

Issue 34's layouts follow the fields (LAYOUTS): synthetic files built here with netCDF4-python
from real libncarg-data fields, stacked or reshaped as each row says (an ensemble, a forecast
start x lead time, two vertical axes, chunks several slabs deep, dimension names the rules do
not know), and the real global topography of ice5g_21k_1deg.nc sampled at a third of its size
and, with a chunk of 1/8 of it, at a tenth. DCTK_BENCH_ONLY=fields or =layouts runs one part
(each under five minutes on the shared machine).
"""
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile

NCARG = os.environ.get("DCTK_NCARG", "/usr/share/ncarg/data")
FIELDS = [  # file, variable, what kind of shape
    ("cdf/chi200_ud_smooth.nc", "CHI", "2-D time x lon"),
    ("cdf/fice.nc", "fice", "3-D time, masked"),
    ("cdf/Tstorm.cdf", "t", "3-D time"),
    ("cdf/sst30e_netcdf.nc", "sst", "3-D time, masked"),
    ("cdf/contour.cdf", "T", "4-D time x level"),
    ("cdf/vinth2p.nc", "T", "4-D time x level"),
    ("nug/rectilinear_grid_3D.nc", "t", "4-D level"),
    ("cdf/pop.nc", "t", "2-D large"),
    ("nug/HSURF_regional_model_0.11deg.nc", "HSURF", "2-D large"),
    ("nug/tos_ocean_bipolar_grid.nc", "tos", "2-D large, masked"),
    ("nug/atm_phy_mag0004_1985.nc", "rsdt", "unstructured"),
    ("nug/triangular_grid_ICON.nc", "S", "unstructured x depth, masked"),
]
# Issue 34's layouts, synthetic but built from real fields (written here with netCDF4-python):
# (name, source file, variable, how it is reshaped, limit fraction, chunk fraction or None for 1/40)
LAYOUTS = [
    ("ensemble", "cdf/contour.cdf", "T", "first 4 forecast times as member 2 x time 2 x level 10", 0.1, None),
    ("forecast", "cdf/contour.cdf", "T", "first 6 forecast times as start 2 x lead time (step) 3 x level 10", 0.1, None),
    ("two_vertical", "cdf/vinth2p.nc", "T", "18 levels as lev 6 x ilev 3, time 2", 0.1, None),
    ("deep_time", "cdf/fice.nc", "fice", "120 months, production chunk 1/30 of the field (3 months deep)", 0.1, 4 / 120),
    ("deep_steps", "cdf/Tstorm.cdf", "t", "64 steps, production chunk 1/16 of the field (3 steps deep)", 0.1, 4 / 64),
    ("date_name", "cdf/Tstorm.cdf", "t", "time dimension named 'date', no coordinate variable", 0.1, None),
    ("unknown_since", "cdf/Tstorm.cdf", "t", "time dimension named 'foo', coordinate units 'days since'", 0.1, None),
    ("topo_third", "cdf/ice5g_21k_1deg.nc", "Topo", "real global 2-D topography, a third of it", 1 / 3, None),
    ("topo_bigchunk", "cdf/ice5g_21k_1deg.nc", "Topo", "the same, chunk 1/8 of the field, budget 1/10", 0.1, 1 / 8),
]
SPACE = ["--compressor-class", "zstd", "--filter-class", "none", "--serializer-class", "none,zfpy",
         "--override-existing-l1-error", "1e-3", "--threads-per-rank", "2"]
WROTE = re.compile(r"-> [^,]+, ratio ([\d.]+)")
PRED = re.compile(r"(?:sweep predicted|ratio predicted) ([\d.]+)")


def field_bytes(path, var):
    out = subprocess.run(["ncdump", "-h", path], capture_output=True, text=True).stdout
    dims = dict((m[0], int(m[1])) for m in re.findall(r"^\s+(\w+) = (\d+)", out, re.M))
    unl = re.search(r"^\s+(\w+) = UNLIMITED ; // \((\d+) currently\)", out, re.M)
    if unl:
        dims[unl[1]] = int(unl[2])
    decl = re.search(r"^\s+(\w+) " + re.escape(var) + r"\(([^)]*)\)", out, re.M)
    n = 1
    for d in decl[2].split(","):
        n *= dims[d.strip()]
    return n * {"float": 4, "double": 8, "short": 2, "int": 4, "byte": 1}[decl[1]], decl[2]


def build_layout(name, rel, var, tmp):
    """The layout's netCDF file (variable x) from a real libncarg-data field; returns its path."""
    import netCDF4
    import numpy as np
    with netCDF4.Dataset(os.path.join(NCARG, rel)) as nc:
        v = nc.variables[var]
        v.set_auto_maskandscale(True)
        data = np.ma.filled(v[:].astype("f4"), np.nan)
    coords = []
    if name in ("ensemble", "forecast"):
        data = data[:4].reshape(2, 2, *data.shape[1:]) if name == "ensemble" else data[:6].reshape(2, 3, *data.shape[1:])
        dims = ("member", "time", "level", "lat", "lon") if name == "ensemble" else ("time", "step", "level", "lat", "lon")
        coords.append(("time", np.arange(data.shape[1] if name == "ensemble" else 2.0),
                       {"units": "hours since 1990-01-01"}))
        if name == "forecast":
            coords[-1][2]["standard_name"] = "forecast_reference_time"
            coords.append(("step", np.arange(3.0) * 12, {"standard_name": "forecast_period", "units": "hours"}))
    elif name == "two_vertical":
        data = data.reshape(2, 6, 3, *data.shape[2:])
        dims = ("time", "lev", "ilev", "lat", "lon")
    elif name in ("deep_time", "deep_steps"):
        dims = ("time", "lat", "lon")
    elif name == "date_name":
        dims = ("date", "lat", "lon")
    elif name == "unknown_since":
        dims = ("foo", "lat", "lon")
        coords.append(("foo", np.arange(float(data.shape[0])), {"units": "days since 1990-01-01"}))
    else:
        dims = ("lat", "lon")
        coords += [("lat", np.linspace(-89.5, 89.5, data.shape[0]), {"units": "degrees_north"}),
                   ("lon", np.linspace(0.5, 359.5, data.shape[1]), {"units": "degrees_east"})]
    path = os.path.join(tmp, name + ".nc")
    with netCDF4.Dataset(path, "w") as nc:
        for d, n in zip(dims, data.shape):
            nc.createDimension(d, n)
        for d, values, attrs in coords:
            c = nc.createVariable(d, "f8", (d,))
            c[:] = values
            c.setncatts(attrs)
        x = nc.createVariable("x", "f4", dims, fill_value=np.float32(1e20))
        x[:] = np.where(np.isnan(data), np.float32(1e20), data)
    return path, data.nbytes, "(" + ", ".join(dims) + ")"


def run(exe, path, var, limit, chunk_mib, where):
    shutil.rmtree(where, ignore_errors=True)
    r = subprocess.run([exe, "compress", path, "--where-to-write", where, "--field-to-compress", var,
                        "--eval-data-size-limit", f"{limit}B", "--inner-chunk-mib", f"{chunk_mib:.9f}", *SPACE],
                       capture_output=True, text=True)
    if r.returncode != 0:
        return {"error": (r.stderr.strip().splitlines() or ["?"])[-1]}
    best = json.load(open(os.path.join(where, f"best_{var}.json")))
    smp = best.get("sample", {})
    nbytes = smp.get("bytes")
    if nbytes is None and "shape" in smp:  # the legacy sampler records the shape only
        nbytes = 4
        for s in smp["shape"]:
            nbytes *= s
    wrote = [line for line in r.stdout.splitlines() if " wrote " in line and "ratio" in line][-1]
    achieved = float(WROTE.search(wrote)[1])
    # when the whole field misses the bound, compress writes the next best combos: the last write counts
    predicted = float(PRED.findall(r.stdout)[-1])
    plan = [line.split(": sample ", 1)[1] for line in r.stderr.splitlines() if f"{var}: sample " in line]
    tries = sum(" wrote " in line and "ratio" in line for line in r.stdout.splitlines())
    return {"pred": predicted, "ach": achieved, "drift": 100 * (achieved - predicted) / predicted,
            "frac": nbytes, "plan": plan[0] if plan else "", "tries": tries}


def main():
    new = os.path.join(sys.argv[1] if len(sys.argv) > 1 else "build", "dc_toolkit")
    legacy = sys.argv[2] if len(sys.argv) > 2 else "/work/main/build/dc_toolkit"
    tmp = tempfile.mkdtemp(prefix="dctk_sampling_")
    rows, drifts = [], {"today": [], "new": []}
    print("| field | shape | kind | today: sample, predicted, achieved, drift | new: sample, predicted, achieved, drift |")
    print("|---|---|---|---|---|")
    only = os.environ.get("DCTK_BENCH_ONLY", "")  # "fields", "layouts" or empty: both
    cases = []
    if only != "layouts":
        for rel, var, kind in FIELDS:
            path = os.path.join(NCARG, rel)
            size, dims = field_bytes(path, var)
            cases.append((path, rel, var, kind, size, dims, size // 10, size / 40))
    if only != "fields":
        for name, rel, var, how, lim, chunk in LAYOUTS:
            path, size, dims = build_layout(name, rel, var, tmp)
            cases.append((path, f"{name} ({rel} {var})", "x", how, size, dims, int(size * lim),
                          size * (chunk or 1 / 40)))
    for path, rel, var, kind, size, dims, limit, chunk in cases:
        cells = []
        for tag, exe in (("today", legacy), ("new", new)):
            res = run(exe, path, var, limit, chunk / 1048576, os.path.join(tmp, tag, var))
            if "error" in res:
                cells.append("failed: " + res["error"][:80])
                continue
            drifts[tag].append(abs(res["drift"]))
            cells.append(f"{100 * res['frac'] / size:.1f} %, {res['pred']:.3f}, {res['ach']:.3f}, "
                         f"{res['drift']:+.1f} %" + (f" (write {res['tries']})" if res["tries"] > 1 else ""))
            if tag == "new":
                rows.append((rel if rel.startswith(tuple(n for n, *_ in LAYOUTS)) else os.path.basename(rel), var,
                             res["plan"]))
        name = rel if rel.startswith(tuple(n for n, *_ in LAYOUTS)) else f"{os.path.basename(rel)} {var}"
        print(f"| {name} | ({dims.strip('()')}) | {kind} | {cells[0]} | {cells[1]} |", flush=True)
    print()
    for tag in ("today", "new"):
        d = drifts[tag]
        if d:
            print(f"{tag}: |drift| median {statistics.median(d):.1f} %, worst {max(d):.1f} % over {len(d)} fields")
    print("\nnew sampler's plans:")
    for rel, var, plan in rows:
        print(f"  {rel.split(' ')[0]} {var}: {plan}")
    shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
