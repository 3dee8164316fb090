#!/usr/bin/python3
"""The sample plan on the layouts of issue 34, each a netCDF file written here with
netCDF4-python from a real libncarg-data field (stacked or reshaped, with CF attributes),
swept by evaluate_combos; the plan recorded in best_VAR.json (which indices of which axes)
is checked against the rule computed here with numpy:

- a dimension whose name the rules do not know: its kind from its coordinate variable
  (units '... since ...', '... as %Y%m%d', pressure units), else horizontal as the Python
  tool does, with one line naming the kind and the --dim-kind flag that changes it.

The mid-block rule (C2SM data-compression docs/SAMPLING.md): count picks over n candidates
are the candidates at floor((k + 1/2) n / count); candidates are the runs (production-chunk
deep) holding an index where the field takes more than one finite value.
"""
import json
import os
import subprocess
import sys
import tempfile

import netCDF4
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import check, finish, ncarg_field  # noqa: E402

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

finish("sample_layouts")
