"""The sweep's gates as the Python dc_toolkit defines them (issue 32, items 3 and 6), on real data, against
numpy and Debian's numcodecs. Ported from its tests/unit/test_gates.py and test_metrics.py:

- the extremes gate: the tail is |x| >= the 99th percentile of |x|, taken over the non-zero values when
  that percentile is 0 (test_q99_cut_over_nonzero_values: a mostly zero field, as precipitation), and
  its budget is --q99-threshold, 2 x L1 by default (test_derived_thresholds);
- the gradient gate's budget is --gradient-threshold, an absolute 0.1 by default, not a multiple of L1
  (test_gradient_gate_only_when_enabled);
- --no-l2-gate, --no-linf-gate and --no-bias-gate switch a gate off whatever its threshold
  (test_missing_metric_and_disabled_gate_pass, test_derived_thresholds);
- a non-finite or negative budget is a usage error, exit 2 (its click callbacks).

The field: Tstorm's temperature (NCAR's example data) and, for the extremes, its excess over its own
99.5th percentile (zero almost everywhere, as a precipitation field), written by netCDF4. Each row of an
exhaustive sweep over zstd x bitround is decoded by numcodecs' BitRound and measured by numpy.

    test_gates_python.py      (DCTK: the dc_toolkit program; DCTK_NCARG: NCAR's data folder)
"""
import csv
import json
import os
import subprocess
import sys
import tempfile

import netCDF4
import numcodecs
import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "interop"))
from metrics_ref import gradient_rel  # noqa: E402

DCTK = os.environ.get("DCTK", "dc_toolkit")
NCARG = os.environ.get("DCTK_NCARG", "/usr/share/ncarg/data")
SRC = os.path.join(NCARG, "cdf", "Tstorm.cdf")
SPACE = ["--compressor-class", "zstd", "--filter-class", "bitround", "--serializer-class", "none",
         "--search", "exhaustive", "--threads-per-rank", "2"]
failures = []


def check(ok, what):
    if not ok:
        failures.append(what)
        print("FAIL", what)


def sweep(path, var, out, *extra, code=0):
    r = subprocess.run([DCTK, "evaluate_combos", path, "--where-to-write", out, "--field-to-compress", var,
                        *SPACE, *extra], capture_output=True, text=True)
    check(r.returncode == code, f"{' '.join(extra)}: exit {r.returncode}, expected {code}: {r.stderr[-1500:]}")
    if r.returncode:
        return None, None, r.stderr
    with open(os.path.join(out, f"config_space_{var}_rank0.csv"), newline="") as f:
        rows = list(csv.DictReader(f))
    with open(os.path.join(out, f"best_{var}.json")) as f:
        best = json.load(f)
    return rows, best, r.stderr


def decoded(x, row):
    k = json.loads(row["filter"])["configuration"]["keepbits"]
    return np.frombuffer(bytes(numcodecs.BitRound(keepbits=k).encode(x.copy())), dtype=x.dtype).reshape(x.shape)


def q99_cut(x):
    """The Python tool's cut: the 99th percentile of |x|, of the non-zero |x| when that is 0."""
    a = np.abs(x[np.isfinite(x)].astype(np.float64))
    q = np.quantile(a, 0.99)
    return np.quantile(a[a != 0], 0.99) if q == 0 and (a != 0).any() else q


def extremes_rel(x, y, cut):
    xf, yf = x.astype(np.float64), y.astype(np.float64)
    tail = np.isfinite(xf) & (np.abs(xf) >= cut)
    e = np.abs(yf[tail] - xf[tail]).sum()
    return e / np.abs(xf[tail]).sum() if e else 0.0


def yes(v):
    return v.strip().lower() == "true"


tmp = tempfile.mkdtemp(prefix="dctk_gates_py_")
with netCDF4.Dataset(SRC) as nc:
    t = nc.variables["t"]
    t.set_auto_maskandscale(True)
    x = np.ascontiguousarray(np.ma.filled(t[:].astype(np.float32), np.nan))
    dims = t.dimensions

# A precipitation-like field: the excess of the temperature over its 99.5th percentile, zero elsewhere.
rain = np.maximum(x - np.float32(np.nanquantile(x, 0.995)), 0).astype(np.float32)
check(np.nanquantile(np.abs(rain), 0.99) == 0 and (rain != 0).sum() > 100, "the field is not mostly zero")
rain_nc = os.path.join(tmp, "rain.nc")
with netCDF4.Dataset(rain_nc, "w") as nc:
    for d, n in zip(dims, rain.shape):
        nc.createDimension(d, n)
    v = nc.createVariable("rain", "f4", dims)
    v.units = "mm"
    v[:] = rain

# 1. the extremes over the non-zero values, gated at 2 x L1 by default and at --q99-threshold when given
cut = q99_cut(rain)
for extra, budget in (((), 2 * 0.05), (("--q99-threshold", "0.002"), 0.002)):
    out = os.path.join(tmp, "rain%d" % len(extra))
    rows, best, _ = sweep(rain_nc, "rain", out, "--l1-threshold", "0.05", "--extremes-sensitive", *extra)
    if rows is None:
        continue
    check(abs(best["metric_config"]["extremes_cut"] - cut) <= 1e-6 * cut,
          f"the extremes' cut {best['metric_config']['extremes_cut']} is not the Python tool's {cut}")
    check(best["gates"]["q99"] == budget, f"{extra}: the recorded extremes budget {best['gates'].get('q99')} != {budget}")
    split = {True: 0, False: 0}
    for r in rows:
        if r["error"]:
            continue
        want = extremes_rel(rain, decoded(rain, r), cut)
        got = float(r["extremes_rel"])
        check(abs(got - want) <= 1e-9 * max(want, 1e-30), f"{r['name']}: extremes_rel {got} != numpy's {want}")
        check(yes(r["pass_extremes"]) == (got <= budget), f"{r['name']}: pass_extremes {r['pass_extremes']} at {got} "
                                                           f"against {budget}")
        split[yes(r["pass_extremes"])] += 1
    check(split[True] and split[False], f"{extra}: the extremes gate split no rows ({split}): the check proves nothing")

# 2. the gradient's budget: an absolute 0.1, or --gradient-threshold
for extra, budget in (((), 0.1), (("--gradient-threshold", "0.002"), 0.002)):
    out = os.path.join(tmp, "grad%d" % len(extra))
    rows, best, _ = sweep(SRC, "t", out, "--l1-threshold", "0.5", "--gradient-gate", "--eval-data-size-limit", "4MB",
                          *extra)
    if rows is None:
        continue
    check(best["gates"]["gradient_threshold"] == budget, f"{extra}: recorded gradient budget "
                                                         f"{best['gates'].get('gradient_threshold')} != {budget}")
    split = {True: 0, False: 0}
    for r in rows:
        if r["error"]:
            continue
        got = float(r["gradient_rel"])
        want = gradient_rel(x, decoded(x, r))
        check(abs(got - want) <= 1e-9 * max(want, 1e-30), f"{r['name']}: gradient_rel {got} != numpy's {want}")
        check(yes(r["pass_gradient"]) == (got <= budget), f"{r['name']}: pass_gradient at {got} against {budget}")
        split[yes(r["pass_gradient"])] += 1
    check(split[True] and split[False], f"{extra}: the gradient gate split no rows ({split})")

# 3. --no-l2-gate & co.: a switched-off gate passes whatever its threshold
out = os.path.join(tmp, "off")
rows, best, _ = sweep(SRC, "t", out, "--l1-threshold", "0.01", "--l2-threshold", "1e-9", "--linf-threshold", "1e-9",
                      "--bias-threshold", "1e-9", "--no-l2-gate", "--no-linf-gate", "--no-bias-gate")
if rows:
    check(all(best["gates"][k] is None for k in ("l2", "linf", "bias")), f"gates not off: {best['gates']}")
    measured = [r for r in rows if not r["error"]]
    check(measured and all(yes(r["pass_l2"]) and yes(r["pass_linf"]) and yes(r["pass_bias"]) for r in measured),
          "a switched-off gate failed a row")
    check(all(yes(r["keep"]) == (float(r["l1_rel"]) <= 0.01) for r in measured), "keep is not the L1 gate alone")
rows, best, _ = sweep(SRC, "t", os.path.join(tmp, "on"), "--l1-threshold", "0.01", "--l2-threshold", "1e-9",
                      "--l2-gate")
if rows:
    check(not any(yes(r["pass_l2"]) for r in rows if not r["error"] and float(r["l2_rel"]) > 1e-9),
          "--l2-gate with --l2-threshold 1e-9 passed a row over it")

# 4. --without-lossy is bit exact, as the Python tool's: no float Delta, no fixed-offset-scale, every row exact
rows, _, _ = sweep(SRC, "t", os.path.join(tmp, "exact"), "--without-lossy", "--l1-threshold", "0.01",
                   "--compressor-class", "zstd", "--filter-class", "all", "--serializer-class", "all")
if rows:
    names = {json.loads(r[k])["name"] for r in rows for k in ("filter", "serializer") if r[k]}
    check(not names & {"numcodecs.delta", "dctk.fixedoffsetscale", "fixedoffsetscale"} and
          not any("fixedoffsetscale" in n for n in names), f"--without-lossy kept a lossy float stage: {names}")
    check(all(not r["error"] and float(r["l1_rel"]) == 0 and float(r["max_abs_err"]) == 0 for r in rows),
          "--without-lossy: a row is not bit exact")

# 5. budgets that are not finite numbers, or negative: usage errors (exit 2), one line naming the flag
for flag, value in (("--l1-threshold", "nan"), ("--l1-threshold", "inf"), ("--q99-threshold", "-1"),
                    ("--gradient-threshold", "nan"), ("--phys-min", "nan")):
    _, _, err = sweep(SRC, "t", os.path.join(tmp, "bad"), "--extremes-sensitive", "--l1-threshold", "0.01",
                      flag, value, code=2)
    check(value in err or flag in err, f"{flag} {value}: the message names neither: {err!r}")

print(f"{len(failures)} failure(s)")
sys.exit(1 if failures else 0)
