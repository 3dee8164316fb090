"""Our GRIB reader against python3-eccodes, on the files of ncarg/data/grb.

For every decodable file: every message lands in exactly one of our arrays,
at the step/level position our coordinate variables give, and its values
(missing points as NaN when a bitmap is present) are bit-identical to
eccodes' own decoding. Grid dimensions follow Ni/Nj where the grid has them.
A hyperslab read matches the same slice of the full array.

ced1.lf00.t00z.eta.grb uses NCEP predefined GRIB1 grids without a grid
description section, which eccodes cannot decode either (checked here): we
must refuse it with one clear line instead of reading garbage.

Run by ctest with DCTK_DUMP_TOOL, DCTK and DCTK_NCARG set.
"""
import csv
import os
import re
import shutil
import subprocess
import sys
import tempfile

import eccodes
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from io_common import DCTK, NCARG, Checker, read, read_all, run_fail, ulp_equal  # noqa: E402

C = Checker()
GRB = os.path.join(NCARG, "grb")
DECODABLE = ["MET9_IR108_cosmode_0909210000.grb2", "fh.0012_tl.press_gr.awp211.grb2",
             "wafsgfs_L_t06z_intdsk60.grib2"]


def get(h, key, default=None):
    try:
        return eccodes.codes_get(h, key)
    except eccodes.CodesInternalError:
        return default


def messages(path):
    """Every message: identity, step, level, grid and decoded values."""
    out = []
    with open(path, "rb") as f:
        while True:
            h = eccodes.codes_grib_new_from_file(f)
            if h is None:
                return out
            vals = eccodes.codes_get_values(h).astype(np.float64)
            if get(h, "bitmapPresent", 0):
                vals[vals == get(h, "missingValue")] = np.nan
            cf = get(h, "cfVarName", "unknown")
            short = get(h, "shortName", "unknown")
            out.append(dict(short=short, tol=get(h, "typeOfLevel", "unknown"),
                            cfgrib=short if cf in ("unknown", "undef") else cf,
                            param=get(h, "paramId", 0), step=get(h, "step", 0), level=float(get(h, "level", 0)),
                            ni=get(h, "Ni"), nj=get(h, "Nj"), values=vals))
            eccodes.codes_release(h)


def leading_positions(var, values):
    """For each leading index tuple: (step, level) of our array."""
    attrs = var["attrs"]
    lead = var["dims"][:len(var["dims"]) - (2 if attrs["GRIB_Ni"] * attrs["GRIB_Nj"] == attrs["GRIB_numberOfPoints"]
                                            and attrs["GRIB_Ni"] > 0 else 1)]
    axes = []
    for d in lead:
        coord = values[d]
        axes.append([("step" if d.startswith("step") else "level", float(x)) for x in coord])
    return lead, axes


def match(msg, var):
    a = var["attrs"]
    return (msg["short"], msg["tol"], msg["param"]) == (a["GRIB_shortName"], a["GRIB_typeOfLevel"], a["GRIB_paramId"])


def check_var(name, var, arr, msgs, axes, used):
    a = var["attrs"]
    mine = [i for i, m in enumerate(msgs) if match(m, var) and m["values"].size == a["GRIB_numberOfPoints"]]
    grid = arr.shape[len(axes):]
    if len(axes) == 0:
        cells = {(): None}
    elif len(axes) == 1:
        cells = {(i,): dict([axes[0][i]]) for i in range(len(axes[0]))}
    else:
        cells = {(i, j): dict([axes[0][i], axes[1][j]]) for i in range(len(axes[0])) for j in range(len(axes[1]))}
    for idx, pos in cells.items():
        cand = [i for i in mine if pos is None
                or all((msgs[i]["step"] if k == "step" else msgs[i]["level"]) == v for k, v in pos.items())]
        if not cand:
            C.check(bool(np.isnan(arr[idx]).all()), f"{name}{list(idx)}: hole should read as NaN")
            continue
        C.check(len(cand) == 1, f"{name}{list(idx)}: {len(cand)} messages match")
        i = cand[0]
        used[i] = used.get(i, 0) + 1
        ok, why = ulp_equal(arr[idx].reshape(-1), msgs[i]["values"], max_ulp=0)
        C.check(ok, f"{name}{list(idx)}: vs eccodes: {why}")
        m = msgs[i]
        if len(grid) == 2:
            C.check(grid == (m["nj"], m["ni"]), f"{name}: grid {grid} vs Nj, Ni = {m['nj']}, {m['ni']}")


def check_file(fname):
    path = os.path.join(GRB, fname)
    info, values = read_all(path)
    C.check(info["format"] == "GRIB", f"{fname}: format {info['format']}")
    msgs = messages(path)
    used = {}
    for var in info["vars"]:
        if var["is_coord"]:
            continue
        lead, axes = leading_positions(var, values)
        C.check("GRIB_note" not in var["attrs"], f"{fname}:{var['name']}: fell back to one dimension per message")
        check_var(f"{fname}:{var['name']}", var, values[var["name"]], msgs, axes, used)
    C.check(sorted(used) == list(range(len(msgs))) and set(used.values()) == {1},
            f"{fname}: {len(used)} of {len(msgs)} messages each found once in our arrays")
    big = max((v for v in info["vars"] if not v["is_coord"]), key=lambda v: (len(v["shape"]), np.prod(v["shape"])))
    start = [s // 4 for s in big["shape"]]
    count = [max(1, s // 2) for s in big["shape"]]
    slab, _ = read(path, big["name"], start, count)
    full = values[big["name"]][tuple(slice(b, b + c) for b, c in zip(start, count))]
    ok, why = ulp_equal(slab, full, max_ulp=0)
    C.check(ok, f"{fname}:{big['name']} slab {start}+{count}: {why}")


def cfgrib_names(msgs):
    """The names cfgrib gives (cfVarName, else shortName), each level type a
    dataset of its own; in one dataset a name on several level types becomes
    NAME_typeOfLevel."""
    tols = {}
    for m in msgs:
        tols.setdefault(m["cfgrib"], set()).add(m["tol"])
    return {(n if len(tols[n]) == 1 else "%s_%s" % (n, t)): n for n, ts in tols.items() for t in ts}


def check_names(fname):
    path = os.path.join(GRB, fname)
    info, _ = read_all(path)
    msgs = messages(path)
    want = cfgrib_names(msgs)
    got = {v["name"]: v["attrs"].get("GRIB_cfVarName") for v in info["vars"] if not v["is_coord"]}
    C.check(got == want, f"{fname}: names {sorted(got)} vs cfgrib's {sorted(want)}")
    split = sorted({n for k, n in want.items() if k != n})
    r = subprocess.run([DCTK, "inspect_dataset", path], capture_output=True, text=True, timeout=60)
    lines = [ln for ln in r.stderr.splitlines() if "NAME_typeOfLevel" in ln]
    C.check(r.returncode == 0 and (len(lines) == 1) == bool(split), f"{fname}: the split names' line: {r.stderr}")
    if lines:
        C.check(sorted(lines[0].rsplit(": ", 1)[1].split(", ")) == split, f"{fname}: line {lines[0]}, split {split}")


def check_thresholds():
    """Fields split by level type, and cfgrib's t2m, u10, find their table rows
    (GRIB's 'm s**-1' is the table's 'm s-1')."""
    path = os.path.join(GRB, "fh.0012_tl.press_gr.awp211.grb2")
    table = {}
    with open(os.path.join(os.environ.get("DCTK_SRC", "."), "data", "l1_error_thresholds.csv")) as f:
        for row in list(csv.DictReader(f)):
            table[(row["Short Name"], row["Unit"])] = row["Existing L1 error"]
    tmp = tempfile.mkdtemp(prefix="dctk_grib_thr_")
    for field, short, unit in [("t_isobaricInhPa", "t", "K"), ("u_isobaricInhPa", "u", "m s-1"),
                               ("t2m", "t2m", "K"), ("u10", "u10", "m s-1")]:
        r = subprocess.run([DCTK, "evaluate_combos", path, "--where-to-write", tmp, "--field-to-compress", field,
                            "--compressor-class", "none", "--filter-class", "none", "--serializer-class", "none"],
                           capture_output=True, text=True, timeout=120)
        m = re.search(r"threshold (\S+) \((.*?)\)(; max abs error .*)?$",
                      r.stdout.splitlines()[0] if r.stdout else "")
        C.check(r.returncode == 0 and m is not None and float(m.group(1)) == float(table[(short, unit)])
                and "row '%s' in '%s'" % (short, unit) in m.group(2), f"{field}: threshold of the table's {short}: {r.stdout} {r.stderr}")
    shutil.rmtree(tmp)


def check_undecodable():
    path = os.path.join(GRB, "ced1.lf00.t00z.eta.grb")
    with open(path, "rb") as f:
        h = eccodes.codes_grib_new_from_file(f)
        try:
            eccodes.codes_get_values(h)
            eccodes_ok = True
        except eccodes.CodesInternalError:
            eccodes_ok = False
        eccodes.codes_release(h)
    C.check(not eccodes_ok, "ced1: eccodes now decodes it; this test should compare values instead")
    rc, err = run_fail([DCTK, "inspect_dataset", path])
    C.check(rc == 1 and len(err) == 1, f"ced1: rc {rc}, stderr {err}")
    C.check(bool(err) and path in err[0] and "predefined grid" in err[0], f"ced1: message {err}")


def loaded_libraries(args):
    """The shared libraries the dynamic linker initialised while running args."""
    r = subprocess.run(args, capture_output=True, text=True, timeout=120, env=dict(os.environ, LD_DEBUG="files"))
    return r.returncode, {os.path.basename(l.split("calling init: ")[1].strip()) for l in r.stderr.splitlines()
                          if "calling init: " in l}


def check_loaded_on_demand():
    """eccodes is opened by the first GRIB file, cairo by the first figure:
    reading a netCDF file loads neither, reading a GRIB file loads eccodes."""
    rc, libs = loaded_libraries([DCTK, "inspect_dataset", os.path.join(NCARG, "cdf", "trinidad.nc")])
    C.check(rc == 0 and any(x.startswith("libnetcdf.so") for x in libs),
            f"netCDF inspect: rc {rc}, libraries {sorted(libs)}")
    C.check(not any(x.startswith(("libeccodes.so", "libcairo.so")) for x in libs),
            f"netCDF inspect loaded eccodes or cairo: {sorted(libs)}")
    rc, libs = loaded_libraries([DCTK, "inspect_dataset", os.path.join(GRB, DECODABLE[0])])
    C.check(rc == 0 and any(x.startswith("libeccodes.so") for x in libs), f"GRIB inspect: rc {rc}, {sorted(libs)}")


for f in DECODABLE:
    check_file(f)
    check_names(f)
check_thresholds()
check_undecodable()
check_loaded_on_demand()
C.finish("test_io_grib")
