#!/usr/bin/python3
"""The sample plan on the layouts of issue 34, each a netCDF file written here with
netCDF4-python from a real libncarg-data field (stacked or reshaped, with CF attributes),
swept by evaluate_combos; the plan recorded in best_VAR.json (which indices of which axes)
is checked against the rule computed here with numpy:

- a dimension whose name the rules do not know: its kind from its coordinate variable
  (units '... since ...', '... as %Y%m%d', pressure units), else horizontal as the Python
  tool does, with one line naming the kind and the --dim-kind flag that changes it;
- several time-like axes (ensemble member x time, forecast reference time x lead time) and
  several vertical axes (full and half levels): at the smallest sample the Python tool's
  rule (its tests/unit/test_sampling.py: member 2 x time 2 x 3 levels; 3 time steps x lev 2
  x ilev 2; member 2 x time 5: 1 x 3), at a larger budget at least two picks on every axis,
  within the budget; the plan line names each axis's picks;
- a production chunk several slabs deep: the picks are whole chunks (runs of the chunk's
  depth) spread along the axis, at least 3 of them, and numpy's rebuild of the sample from
  the plan has the digest the sweep recorded;
- one slab over the budget (ice5g's global 1-degree topography, 180 x 360): at least 3 tiles
  of the production chunk's shape, north, middle and south, at mid-block positions among
  the tiles, even when the budget holds one; at a third of the field, tiles spread from the
  northern to the southern sixth.

The mid-block rule (C2SM data-compression docs/SAMPLING.md): count picks over n candidates
are the candidates at floor((k + 1/2) n / count); candidates are the runs (production-chunk
deep) holding an index where the field takes more than one finite value.
"""
import json
import os
import re
import subprocess
import sys
import tempfile

import netCDF4
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import check, finish, ncarg_field  # noqa: E402
from sample_plan import rebuild  # noqa: E402

DCTK = os.environ["DCTK"]
ONE = ["--compressor-class", "zstd", "--filter-class", "none", "--serializer-class", "none", "--threads-per-rank", "1"]
tmp = tempfile.mkdtemp(prefix="dctk_layouts_")

# Tstorm's temperature: 64 time steps of 33 x 36, fill -9999 (one step holds nothing that varies)
TSTORM = ncarg_field("cdf/Tstorm.cdf", "t").astype("f4")
SLAB = 33 * 36 * 4


def write(name, dims, data, coords=(), fill=-9999.0):
    """A netCDF4 file with variable x(dims) = data; coords: (dim, values, attrs) of coordinate variables."""
    path = os.path.join(tmp, name + ".nc")
    with netCDF4.Dataset(path, "w") as nc:
        for d, n in zip(dims, data.shape):
            nc.createDimension(d, n)
        for d, values, attrs in coords:
            v = nc.createVariable(d, "f8", (d,))
            v[:] = values
            v.setncatts(attrs)
        v = nc.createVariable("x", "f4", dims, fill_value=np.float32(fill))
        v[:] = data
    return path


def sweep(path, limit, chunk_mib, *extra):
    where = os.path.join(tmp, "o_" + os.path.basename(path) + "_" + "_".join(extra).replace("=", "-"))
    r = subprocess.run([DCTK, "evaluate_combos", path, "--where-to-write", where, "--field-to-compress", "x",
                        "--eval-data-size-limit", f"{limit}B", "--inner-chunk-mib", f"{chunk_mib:.9f}", *extra, *ONE],
                       capture_output=True, text=True)
    check(r.returncode == 0, f"{path} {extra}: {r.stderr}")
    if r.returncode:
        return None, r.stderr
    return json.load(open(os.path.join(where, "best_x.json")))["sample"], r.stderr


def varying(data, d):
    """Per index along d: does the field take more than one finite value there?"""
    moved = np.moveaxis(data, d, 0).reshape(data.shape[d], -1)
    out = []
    for x in moved:
        f = x[np.isfinite(x) & (x != -9999.0)]
        out.append(f.size > 0 and f.max() > f.min())
    return out


def mid_block(count, cands):
    return [cands[(2 * k + 1) * len(cands) // (2 * count)] for k in range(count)]


def candidates(vary, run):
    """Starts of the runs holding a varying index (a run cut by the edge only when no whole one does)."""
    n = len(vary)
    whole = [j * run for j in range(n // run) if any(vary[j * run:(j + 1) * run])]
    if whole:
        return whole
    return [j * run for j in range(-(-n // run)) if any(vary[j * run:(j + 1) * run])]


def dim(smp, name):
    return next(e for e in smp["dims"] if e["name"] == name)


def check_mid_block(what, smp, data, name, axis):
    e = dim(smp, name)
    cands = candidates(varying(data, axis), e["run"])
    want = mid_block(len(e["starts"]), cands)
    check(e["starts"] == want, f"{what}: {name} starts {e['starts']}, the mid-block rule gives {want}")


# --- item 3: dimension names the rules do not know -------------------------------------------------
CHUNK1 = 1.1 * SLAB / 1048576  # a production chunk of one slab
since = ("foo", np.arange(64.0), {"units": "days since 1990-01-01"})
cdo = ("foo", 19900101.0 + np.arange(64), {"units": "day as %Y%m%d.%f"})
for tag, dims, coords, kind in (
        ("date_bare", ("date", "lat", "lon"), (), "time"),              # a listed name, no coordinate
        ("foo_since", ("foo", "lat", "lon"), (since,), "time"),         # units '... since ...'
        ("foo_cdo", ("foo", "lat", "lon"), (cdo,), "time"),             # CDO's absolute dates
        ("foo_bare", ("foo", "lat", "lon"), (), "horizontal")):         # nothing says: the Python tool's rule
    path = write(tag, dims, TSTORM, coords)
    smp, err = sweep(path, 3 * SLAB, CHUNK1)
    if not smp:
        continue
    check(dim(smp, dims[0])["kind"] == kind, f"{tag}: {dims[0]} is {dim(smp, dims[0])['kind']}, not {kind}")
    line = [ln for ln in err.splitlines() if f"dimension '{dims[0]}'" in ln]
    if tag == "date_bare":
        check(not line, f"{tag}: a known name got a line: {line}")
    else:
        check(len(line) == 1 and f"--dim-kind {dims[0]}=" in line[0], f"{tag}: no one line with the flag: {err}")
    if kind == "time":
        check(len(dim(smp, dims[0])["starts"]) == 3, f"{tag}: {dim(smp, dims[0])}")
        check_mid_block(tag, smp, TSTORM, dims[0], 0)
        if line:
            check("time-like" in line[0] and "units '" in line[0], f"{tag}: the line does not say why: {line}")
    else:
        check("horizontal" in line[0] and "Python tool" in line[0], f"{tag}: {line}")
        # the flag turns it into time, with no line
        smp, err = sweep(path, 3 * SLAB, CHUNK1, "--dim-kind", "foo=time")
        check(smp and dim(smp, "foo")["kind"] == "time" and "dimension 'foo'" not in err, f"--dim-kind: {err}")
        if smp:
            check_mid_block("--dim-kind foo=time", smp, TSTORM, "foo", 0)
# a pressure coordinate under an unknown name is vertical (units hPa)
pres = ("p", np.linspace(1000.0, 100.0, 64), {"units": "hPa"})
smp, err = sweep(write("p_hpa", ("p", "lat", "lon"), TSTORM, (pres,)), 3 * SLAB, CHUNK1)
check(smp and dim(smp, "p")["kind"] == "vertical" and "vertical (thinned) by its coordinate variable's units 'hPa'"
      in err, f"p in hPa: {err}")

# --- item 1: several time-like axes, several vertical axes -----------------------------------------
def python_minimum(sizes):
    """The Python tool's smallest sample for the axes of one kind: the longest first takes up to 3 picks,
    the next what the product still lacks, the rest 1 (sizes: candidates per axis, in axis order)."""
    picks, prod = [1] * len(sizes), 1
    for i in sorted(range(len(sizes)), key=lambda i: -sizes[i]):  # stable: the first on ties
        picks[i] = max(1, min(sizes[i], -(-3 // prod)))
        prod *= picks[i]
    return picks


def fnv1a64(data):
    h = 0xCBF29CE484222325
    for b in np.frombuffer(data, np.uint8):
        h = ((h ^ int(b)) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return f"fnv1a64:{h:016x}"


def check_layout(tag, dims, kinds, data, limit, chunk_mib, minimum=True, coords=()):
    path = write(tag, dims, data, coords)
    smp, err = sweep(path, limit, chunk_mib)
    if not smp:
        return None
    thin = [i for i, k in enumerate(kinds) if k in ("time", "vertical")]
    for i in thin:
        check(dim(smp, dims[i])["kind"] == kinds[i], f"{tag}: {dims[i]} is {dim(smp, dims[i])['kind']}")
    picks = {dims[i]: len(dim(smp, dims[i])["starts"]) for i in thin}
    for kind in ("time", "vertical"):
        axes = [i for i in thin if kinds[i] == kind]
        if not axes:
            continue
        cands = [len(candidates(varying(data, i), dim(smp, dims[i])["run"])) for i in axes]
        if minimum:  # the Python tool's rule, over the candidate runs of each axis
            want = python_minimum(cands)
            check([picks[dims[i]] for i in axes] == want, f"{tag}: {kind} picks {picks}, the rule gives {want}")
        else:  # a larger budget: every axis of the kind at two places or more
            check(all(picks[dims[i]] >= min(2, c) for i, c in zip(axes, cands)), f"{tag}: {kind} picks {picks}")
    for i in thin:
        check_mid_block(tag, smp, data, dims[i], i)
    check(smp["bytes"] <= max(limit, smp["budget"]), f"{tag}: {smp['bytes']} bytes over the budget {smp['budget']}")
    if not minimum:
        check(smp["bytes"] <= limit, f"{tag}: {smp['bytes']} bytes over the limit {limit}")
    for i in thin:  # the plan line names each axis's picks
        e = dim(smp, dims[i])
        check(re.search(rf"(^| x ){dims[i]} (\d+/\d+ \[|\d+ runs of \d+ of \d+ \[|\d+ whole)", smp["plan"]),
              f"{tag}: the plan line does not name {dims[i]}'s picks: {smp['plan']}")
    decoded = np.where(data == -9999.0, np.float32(np.nan), data)  # the fill value, as netCDF4 masks it
    sample = np.ascontiguousarray(rebuild(decoded, smp))
    check(fnv1a64(sample.tobytes()) == smp["digest"], f"{tag}: numpy's sample from the plan differs from the sweep's")
    return smp


# contour.cdf's temperature (forecast time 7 x level 10 x 33 x 36): its first 4 forecast times as
# 2 members x 2 times, and as 2 forecast starts x 2 lead times (consecutive forecasts stacked)
CONTOUR = ncarg_field("cdf/contour.cdf", "T").astype("f4")
SLAB = 33 * 36 * 4
ens = CONTOUR[:4].reshape(2, 2, 10, 33, 36)
check_layout("ensemble", ("member", "time", "level", "lat", "lon"), ("time", "time", "vertical", "h", "h"),
             ens, 1, CHUNK1)
frt = ("time", np.arange(2.0), {"standard_name": "forecast_reference_time", "units": "hours since 1990-01-01"})
lead = ("step", np.arange(2.0) * 6, {"standard_name": "forecast_period", "units": "hours"})
check_layout("forecast", ("time", "step", "level", "lat", "lon"), ("time", "time", "vertical", "h", "h"),
             ens, 1, CHUNK1, coords=(frt, lead))
# Tstorm's 64 steps reshaped: 10 times x 2 full levels x 2 half levels; 2 members x 5 times x 6 levels
check_layout("two_vertical", ("time", "lev", "ilev", "lat", "lon"), ("time", "vertical", "vertical", "h", "h"),
             TSTORM[:40].reshape(10, 2, 2, 33, 36), 1, CHUNK1)
check_layout("member_short", ("member", "time", "lev", "lat", "lon"), ("time", "time", "vertical", "h", "h"),
             TSTORM[:60].reshape(2, 5, 6, 33, 36), 1, CHUNK1)
# a larger budget spreads over every axis: 8 members x 8 times (Tstorm's 64 steps) at 20 slabs, both policies
for pol in ("cascade", "balanced"):
    smp = check_layout("ens_wide_" + pol, ("member", "time", "lat", "lon"), ("time", "time", "h", "h"),
                       TSTORM.reshape(8, 8, 33, 36), 20 * SLAB, CHUNK1, minimum=False)

# --- item 2: a production chunk several slabs deep -------------------------------------------------
# rectilinear_grid_3D's temperature (17 levels of 96 x 192, a real 3-D field) in chunks 4 levels deep:
# 3 whole chunks spread along the levels, not one run of 4 adjacent ones
RECT = ncarg_field("nug/rectilinear_grid_3D.nc", "t").astype("f4")
RSLAB = 96 * 192 * 4
smp = check_layout("deep_levels", ("time", "lev", "lat", "lon"), ("time", "vertical", "h", "h"), RECT, 1,
                   4.5 * RSLAB / 1048576)
if smp:
    e = dim(smp, "lev")
    check(e["run"] == 4 and len(e["starts"]) == 3 and e["starts"][-1] - e["starts"][0] >= 8,
          f"deep_levels: lev {e}")
    check(smp["shape"][1] == 12, f"deep_levels: the sample holds {smp['shape'][1]} levels, not 3 chunks of 4")
# Tstorm in chunks 4 time steps deep, at a budget of 16 slabs: 4 chunks spread over the 64 steps
path = write("deep_time", ("time", "lat", "lon"), TSTORM)
smp, err = sweep(path, 16 * SLAB, 4.5 * SLAB / 1048576)
if smp:
    e = dim(smp, "time")
    check(e["run"] == 4 and len(e["starts"]) == 4 and e["starts"][-1] - e["starts"][0] >= 32, f"deep_time: {e}")
    check_mid_block("deep_time", smp, TSTORM, "time", 0)

# --- item 4: one slab over the budget --------------------------------------------------------------
TOPO = ncarg_field("cdf/ice5g_21k_1deg.nc", "Topo").astype("f4")
lat = ("lat", np.linspace(-89.5, 89.5, 180), {"units": "degrees_north"})
lon = ("lon", np.linspace(0.5, 359.5, 360), {"units": "degrees_east"})
path = write("topo", ("lat", "lon"), TOPO, (lat, lon))
ROW4 = 4 * 360 * 4  # a production chunk of 4 rows: 45 tiles
for limit, want in ((ROW4, [7, 22, 37]), (TOPO.nbytes // 3, None)):
    smp, err = sweep(path, limit, 1.05 * ROW4 / 1048576)
    if not smp:
        continue
    tiles = smp.get("tiles", [])
    if want:  # the budget holds one tile: raised to 3, at mid-block positions
        check(tiles == want and "raised the sample budget" in err, f"topo at one tile: tiles {tiles}: {err}")
    else:
        check(len(tiles) >= 10 and tiles[0] <= 45 // 6 and tiles[-1] >= 45 * 5 // 6 and smp["bytes"] <= limit,
              f"topo at a third: tiles {tiles}, {smp['bytes']} bytes")
        check(tiles == [(2 * k + 1) * 45 // (2 * len(tiles)) for k in range(len(tiles))],
              f"topo at a third: tiles {tiles} are not mid-block")
    rows = [r for t in tiles for r in range(4 * t, 4 * t + 4)]
    check(np.array_equal(np.ascontiguousarray(rebuild(TOPO, smp)), TOPO[rows]), f"topo: the sample is not rows {rows}")
    sample = np.ascontiguousarray(rebuild(TOPO, smp))
    check(fnv1a64(sample.tobytes()) == smp["digest"], "topo: numpy's sample from the plan differs from the sweep's")

finish("sample_layouts")
