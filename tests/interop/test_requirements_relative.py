"""--requirements with the pointwise relative and the mean absolute bounds (issue 32 item 6), as the
compression-recommendations package means them, on real fields, measured by numpy:
  - max-pointwise-relative-error-bound r: |y - x| <= r |x| at every finite point, so a zero comes back
    zero (pop.nc's urot: ocean velocities in cm/s, negative values, 6160 zeros, land masked). The entry
    gives the rows and winner of --rel-error r; the kept rows are within r and a rejected row of a higher
    ratio shows the gate decides; the unit factor leaves a relative bound as it is; compress writes urot
    and the values netCDF4 reads back from the export hold the bound where numpy measures it, the zeros
    and the mask exact; a --pipeline beyond it fails its verification.
  - mean-absolute-error-bound v: sum |y - x| / n <= v in the field's units (uv300's U, m/s): the rows of
    --mean-abs-error v, v x F under --requirements-unit-factor F, and the written field's mean error as
    numpy measures it within v.
  - mean-relative-error-bound e: sum |y - x| <= e sum |x| over the finite points and every zero decoded
    exactly (pop.nc's vrot: 6160 zeros, negatives, land masked): the rows of --mean-rel-error e, under the
    package's current name and its earlier one (mean-pointwise-relative-error-bound), whatever the unit
    factor; rows within e in relative L1 that change a zero are rejected; the written field holds both
    clauses where numpy measures them; --pipeline writes beyond the sum, or changing zeros alone, fail
    their verification.
    test_requirements_relative.py      (DCTK, DCTK_SRC; DCTK_NCARG: libncarg-data's folder)
"""
import csv
import json
import os
import shutil
import subprocess
import sys
import tempfile

import netCDF4
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import checks  # noqa: E402
from checks import DCTK, check, finish, run  # noqa: E402

SRC = os.environ.get("DCTK_SRC") or os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
NCARG = os.environ.get("DCTK_NCARG", "/usr/share/ncarg/data")
LIST = os.path.join(SRC, "tests", "requirements", "recommendations.yaml")
POP = os.path.join(NCARG, "cdf", "pop.nc")
UV = os.path.join(NCARG, "cdf", "uv300.nc")
SPEEDS = {"encode_mbps", "decode_mbps"}
REL = "cf-short-name=urot,level-kind=ocean"  # max-pointwise-relative-error-bound 0.01
MEAN = "cf-short-name=u,level-kind=model"    # mean-absolute-error-bound 0.05
MEAN_REL = "cf-short-name=vrot,level-kind=ocean"  # mean-relative-error-bound 0.001
MEAN_REL_OLD = "cf-standard-name=sea_water_y_velocity,level-kind=ocean"  # mean-pointwise-relative-error-bound 0.001

tmp = tempfile.mkdtemp(prefix="dctk_requirements_rel_")
table = os.path.join(tmp, "no_rows.csv")  # no L1 row: the requirement is the budget
with open(table, "w") as f:
    f.write("Short Name,Unit,Existing L1 error\n")
runs = [0]


def base(data, var):
    return [data, "--field-to-compress", var, "--thresholds-table", table, "--compressor-class", "zstd"]


def sweep(data, var, *flags):
    """The rows (speeds left out, sorted; and as dicts), best_VAR.json and stdout of a sweep."""
    runs[0] += 1
    out = os.path.join(tmp, "s%d" % runs[0])
    data_var = base(data, var)
    r = run("evaluate_combos", data_var[0], "--where-to-write", out, *data_var[1:], *flags)
    with open(os.path.join(out, "config_space_%s_rank0.csv" % var)) as f:
        dicts = list(csv.DictReader(f))
    rows = sorted(tuple((k, v) for k, v in row.items() if k not in SPEEDS) for row in dicts)
    with open(os.path.join(out, "best_%s.json" % var)) as f:
        best = json.load(f)
    return rows, dicts, best, r.stdout


def same_as(what, data, var, req_flags, explicit_flags):
    a_rows, dicts, a_best, out = sweep(data, var, "--requirements-list", LIST, *req_flags)
    b_rows, _, b_best, _ = sweep(data, var, *explicit_flags)
    check(len(a_rows) > 10 and a_rows == b_rows, "%s: the rows differ from %s's (%d, %d rows)"
          % (what, " ".join(explicit_flags), len(a_rows), len(b_rows)))
    pick = ("comp_idx", "filt_idx", "ser_idx", "codecs", "gates")
    check([a_best.get(k) for k in pick] == [b_best.get(k) for k in pick],
          "%s: best %s, with %s %s" % (what, a_best, " ".join(explicit_flags), b_best))
    check("[requirements] " in out, "%s: no [requirements] line: %s" % (what, out[-600:]))
    return dicts, a_best, out


def written(data, var, nc_name, *flags):
    """compress var under flags, exported to netCDF: the input's and the store's values as netCDF4 reads
    them (masked arrays, float64)."""
    runs[0] += 1
    out = os.path.join(tmp, "c%d" % runs[0])
    data_var = base(data, var)
    run("compress", data_var[0], "--where-to-write", out, *data_var[1:], *flags)
    nc = os.path.join(tmp, "%s_%d.nc" % (var, runs[0]))
    run("from_zarr_to_netcdf", os.path.join(out, nc_name), "--out", nc)
    with netCDF4.Dataset(data) as d:
        x = d.variables[var][...].astype(np.float64)
    with netCDF4.Dataset(nc) as d:
        y = d.variables[var][...].astype(np.float64)
    return np.ma.masked_array(x), np.ma.masked_array(y)


# --- the pointwise relative bound on urot ------------------------------------------------------------
R = 0.01
dicts, best, out = same_as("urot", POP, "urot", ["--requirements", REL], ["--rel-error", str(R)])
check("max pointwise relative error 0.01 (--rel-error)" in out, "urot: the line names no relative gate: %s" % out)
check(best["gates"].get("rel_error") == R, "urot: best_urot.json's gates %s" % best["gates"])
kept = [d for d in dicts if d["keep"] == "true"]
check(kept and all(float(d["max_rel_err"]) <= R and d["pass_rel"] == "true" for d in kept),
      "urot: a kept row beyond %g: %s" % (R, [(d["name"], d["max_rel_err"]) for d in kept][:5]))
# the gate decides on the recorded metric (on the whole sample, or on the part a pruned row was measured on)
measured = [d for d in dicts if d["status"] in ("kept", "rejected", "pruned") and d["max_rel_err"] not in ("", "nan")]
check(all((float(d["max_rel_err"]) <= R) == (d["pass_rel"] == "true") for d in measured),
      "urot: a row's pass_rel disagrees with its max_rel_err")
# a zero decoded as anything else is an infinite relative error: rows that lose urot's zeros fail so
check(sum(d["max_rel_err"] == "inf" and d["keep"] == "false" for d in measured) > 10,
      "urot: no measured row that changed a zero (max_rel_err inf) is rejected")
# a relative bound has no unit: the factor leaves it
same_as("urot x 100", POP, "urot", ["--requirements", REL, "--requirements-unit-factor", "100"],
        ["--rel-error", str(R)])

x, y = written(POP, "urot", "pop.zarr", "--requirements-list", LIST, "--requirements", REL)
check(x.shape == y.shape and np.array_equal(np.ma.getmaskarray(x), np.ma.getmaskarray(y)),
      "urot: the mask read back differs from the input's")
valid = ~np.ma.getmaskarray(x)
xv, yv = x.data[valid], y.data[valid]
zero = xv == 0
rel = np.abs(yv[~zero] - xv[~zero]) / np.abs(xv[~zero])
check(zero.sum() > 1000 and np.all(yv[zero] == 0), "urot: %d zeros, %d read back non-zero"
      % (zero.sum(), np.count_nonzero(yv[zero])))
check(rel.max() <= R and rel.max() > 0, "urot: numpy's max pointwise relative error %g, not in (0, %g]" % (rel.max(), R))
# the sample is the whole field (480 KiB), written with the winner's pipeline: the sweep measured what numpy does
check(best["sample"]["shape"] == list(x.shape) and np.isclose(best["max_rel_err"], rel.max(), rtol=1e-12, atol=0),
      "urot: best_urot.json's max_rel_err %s, numpy's %g" % (best.get("max_rel_err"), rel.max()))
check((xv < 0).sum() > 1000, "urot: too few negative values to tell |x| from x")

# a --pipeline beyond the bound (BitRound 4 bits: up to 1/32 of |x|) fails its verification, nothing committed
pipeline = json.dumps({"compressor": {"name": "zstd", "configuration": {"level": 3, "checksum": False}},
                       "filter": {"name": "numcodecs.bitround", "configuration": {"keepbits": 4}}, "serializer": None})
r = subprocess.run([DCTK, "compress", POP, "--where-to-write", os.path.join(tmp, "gated"), *base(POP, "urot")[1:],
                    "--pipeline", pipeline, "--requirements-list", LIST, "--requirements", REL],
                   capture_output=True, text=True)
check(r.returncode == 1 and "max pointwise relative error <= 0.01" in r.stderr and "rel" in r.stderr and
      not os.path.exists(os.path.join(tmp, "gated", "pop.zarr", "urot")),
      "a --pipeline beyond the urot entry's bound: %d %r" % (r.returncode, r.stderr))

# --- the mean absolute bound on U ------------------------------------------------------------------
V = 0.05
dicts, best, out = same_as("u mean", UV, "U", ["--requirements", MEAN], ["--mean-abs-error", str(V)])
check("mean abs error 0.05 (--mean-abs-error)" in out, "u mean: the line names no mean gate: %s" % out)
kept = [d for d in dicts if d["keep"] == "true"]
check(kept and all(float(d["mean_abs_err"]) <= V for d in kept), "u mean: a kept row beyond %g" % V)
measured = [d for d in dicts if d["status"] in ("kept", "rejected", "pruned") and d["mean_abs_err"] not in ("", "nan")]
check(all((float(d["mean_abs_err"]) <= V) == (d["pass_mean_abs"] == "true") for d in measured) and
      any(d["pass_mean_abs"] == "false" for d in measured),
      "u mean: pass_mean_abs disagrees with mean_abs_err, or no row fails the mean gate")
same_as("u mean x 100", UV, "U", ["--requirements", MEAN, "--requirements-unit-factor", "100"],
        ["--mean-abs-error", str(V * 100)])
x, y = written(UV, "U", "uv300.zarr", "--requirements-list", LIST, "--requirements", MEAN)
valid = ~np.ma.getmaskarray(x)
err = np.abs(y.data[valid] - x.data[valid])
check(y.shape == x.shape and err.mean() <= V and err.mean() > 0,
      "U: numpy's mean |y - x| %g, not in (0, %g]" % (err.mean(), V))
check(best["sample"]["shape"] == list(x.shape) and np.isclose(best["mean_abs_err"], err.mean(), rtol=1e-9, atol=0),
      "U: best_U.json's mean_abs_err %s, numpy's %g" % (best.get("mean_abs_err"), err.mean()))

# --- the mean relative bound on vrot ---------------------------------------------------------------
E = 0.001
dicts, best, out = same_as("vrot mean rel", POP, "vrot", ["--requirements", MEAN_REL], ["--mean-rel-error", str(E)])
check("mean relative error 0.001 (--mean-rel-error)" in out, "vrot: the line names no mean relative gate: %s" % out)
check(best["gates"].get("mean_rel_error") == E and best["gates"].get("l1") is None,
      "vrot: best_vrot.json's gates %s" % best["gates"])
kept = [d for d in dicts if d["keep"] == "true"]
check(kept and all(float(d["mean_rel_err"]) <= E and d["pass_mean_rel"] == "true" for d in kept),
      "vrot: a kept row beyond %g: %s" % (E, [(d["name"], d["mean_rel_err"]) for d in kept][:5]))
measured = [d for d in dicts if d["status"] in ("kept", "rejected", "pruned") and d["mean_rel_err"] not in ("", "nan")]
check(all((float(d["mean_rel_err"]) <= E) == (d["pass_mean_rel"] == "true") for d in measured),
      "vrot: a row's pass_mean_rel disagrees with its mean_rel_err")
# the sum alone is the relative L1; a row within it that changed a zero is infinite and fails
check(all(d["mean_rel_err"] == "inf" or float(d["mean_rel_err"]) == float(d["l1_rel"]) for d in measured),
      "vrot: a finite mean_rel_err is not the row's l1_rel")
zeros_lost = [d for d in measured if d["mean_rel_err"] == "inf" and float(d["l1_rel"]) <= E]
check(len(zeros_lost) > 10 and all(d["keep"] == "false" for d in zeros_lost),
      "vrot: %d rows within %g in L1 that changed a zero, or one kept" % (len(zeros_lost), E))
# no L2/Linf/bias gate of its own: a kept row may exceed what --l1-threshold E would derive (Linf 10 E)
check(all(d["pass_l2"] == d["pass_linf"] == d["pass_bias"] == "true" for d in measured),
      "vrot: the mean relative bound brought a relative L2, Linf or bias gate")
# the package's earlier name: the same requirement; a relative bound takes no unit factor
same_as("vrot older name", POP, "vrot", ["--requirements", MEAN_REL_OLD, "--requirements-unit-factor", "100"],
        ["--mean-rel-error", str(E)])

x, y = written(POP, "vrot", "pop.zarr", "--requirements-list", LIST, "--requirements", MEAN_REL)
check(x.shape == y.shape and np.array_equal(np.ma.getmaskarray(x), np.ma.getmaskarray(y)),
      "vrot: the mask read back differs from the input's")
valid = ~np.ma.getmaskarray(x)
xv, yv = x.data[valid], y.data[valid]
zero = xv == 0
mean_rel = np.abs(yv - xv).sum() / np.abs(xv).sum()
check(zero.sum() > 1000 and np.all(yv[zero] == 0), "vrot: %d zeros, %d read back non-zero"
      % (zero.sum(), np.count_nonzero(yv[zero])))
check(0 < mean_rel <= E, "vrot: numpy's sum|y - x| / sum|x| %g, not in (0, %g]" % (mean_rel, E))
check(best["sample"]["shape"] == list(x.shape) and np.isclose(best["mean_rel_err"], mean_rel, rtol=1e-9, atol=0),
      "vrot: best_vrot.json's mean_rel_err %s, numpy's %g" % (best.get("mean_rel_err"), mean_rel))


def pipeline_write(name, serializer, filt):
    p = json.dumps({"compressor": {"name": "zstd", "configuration": {"level": 3, "checksum": False}},
                    "filter": filt, "serializer": serializer})
    where = os.path.join(tmp, name)
    r = subprocess.run([DCTK, "compress", POP, "--where-to-write", where, *base(POP, "vrot")[1:], "--pipeline", p,
                        "--requirements-list", LIST, "--requirements", MEAN_REL], capture_output=True, text=True)
    return r, os.path.exists(os.path.join(where, "pop.zarr", "vrot"))


# beyond the sum (BitRound 4 bits: about 1/64 of |x| on average; zeros stay zero)
r, made = pipeline_write("mean_rel_sum", None, {"name": "numcodecs.bitround", "configuration": {"keepbits": 4}})
check(r.returncode == 1 and "mean relative error <= 0.001" in r.stderr and "mean_rel" in r.stderr and not made,
      "a --pipeline beyond the vrot entry's mean bound: %d %r" % (r.returncode, r.stderr))
# within the sum many times over, but the zeros changed (SZ3's Lorenzo predictor, an absolute bound of 1e-4 of
# the mean |x|): refused all the same, where the relative L1 alone would pass it
sz = dict(zeros_lost[0])
r, made = pipeline_write("mean_rel_zeros", json.loads(sz["serializer"]), json.loads(sz["filter"]) if sz["filter"] else None)
check(r.returncode == 1 and "mean_rel" in r.stderr and "mean relative error inf" in r.stderr and not made,
      "a --pipeline that changes vrot's zeros (%s): %d %r" % (sz["name"], r.returncode, r.stderr))

if not checks.failures:
    shutil.rmtree(tmp, ignore_errors=True)
finish("requirements_relative")
