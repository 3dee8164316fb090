#!/usr/bin/python3
"""Budgets in the field's units (issue 31 item 4), on real fields of
rectilinear_grid_3D.nc:

- `--abs-error X` alone is a budget: var3 (no units, no table row, so lossless
  only without it) is swept with lossy members, every kept row has max_abs_err
  <= X and pass_abs, rows that fail only this gate are not kept, the winner is
  lossy and beats every lossless row; best_var3.json records the gate and the
  winner's max_abs_err; `compress` writes it and the store, decoded here by
  Debian's numcodecs (zarr_shards.py, no dc_toolkit code), stays within X of
  python3-netCDF4's values;
- re-gating with --resume and a tighter X reuses the rows measured whole (the members
  solved to the new budget and the rows pruned under the old one run) and keeps a winner
  within the new X;
- the table's "Abs error" column, in a scaled unit of the field's (mK for K),
  is converted by udunits2 and changes the winner that the L1 column alone
  picks (BitRound 10 bits, 0.125 K at worst, over 0.1 K);
- the extremes gate with an absolute budget alone is refused with a line.

    test_abs_error.py PATH/TO/dctk_zarr_tool"""
import csv
import json
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import netCDF4  # noqa: E402
import numpy as np  # noqa: E402
import zarr_shards  # noqa: E402
from checks import check, finish  # noqa: E402

DCTK = os.environ["DCTK"]
FILE = os.path.join(os.environ.get("DCTK_NCARG", "/usr/share/ncarg/data"), "nug", "rectilinear_grid_3D.nc")
SPACE = ["--eval-data-size-limit", "300KB", "--compressor-class", "zstd", "--filter-class", "none,bitround,quantize",
         "--serializer-class", "none,zfpy"]


def run(*args):
    return subprocess.run([DCTK, *args], capture_output=True, text=True)


def rows(out, var):
    """The rows with a measured error (the adaptive search's pruned rows too)."""
    with open(os.path.join(out, "config_space_%s_rank0.csv" % var)) as f:
        return [r for r in csv.DictReader(f) if np.isfinite(float(r["max_abs_err"] or "nan"))]


def abs_alone(tmp):
    out, budget = os.path.join(tmp, "alone"), 0.05
    r = run("compress", FILE, "--where-to-write", out, "--vars", "var3", "--abs-error", str(budget), *SPACE)
    check(r.returncode == 0, "compress --abs-error: %s %s" % (r.stdout, r.stderr))
    check("losslessly only" not in r.stdout + r.stderr, "var3 was still lossless only: " + r.stdout)
    check(re.search(r"^var3: .* threshold none \(.*absolute error budget only\); max abs error 0\.05$", r.stdout, re.M),
          "the summary names no absolute budget: " + r.stdout)
    best = json.load(open(os.path.join(out, "best_var3.json")))
    g = best["gates"]
    check(g["abs_error"] == budget and g["l1"] is None and not g["lossless_only"], "gates %r" % g)
    check(0 < best["max_abs_err"] <= budget, "the winner's max_abs_err %r" % best.get("max_abs_err"))
    line = re.search(r"^var3: best combo .*, max abs error (\S+)$", r.stdout, re.M)
    check(line and abs(float(line.group(1)) - best["max_abs_err"]) <= 1e-6 * budget, "summary line: " + r.stdout)
    measured = rows(out, "var3")
    kept = [x for x in measured if x["keep"] == "true"]
    check(kept and all(float(x["max_abs_err"]) <= budget and x["pass_abs"] == "true" for x in kept),
          "a kept row over the budget")
    over = [x for x in measured if float(x["max_abs_err"]) > budget]
    check(over and all(x["pass_abs"] == "false" and x["keep"] == "false" for x in over), "rows over it kept")
    lossless = [float(x["ratio"]) for x in kept if float(x["max_abs_err"]) == 0]
    check(lossless and best["ratio"] > max(lossless), "the winner %r does not beat lossless %r" %
          (best["ratio"], max(lossless or [0])))
    got, stored = zarr_shards.read_store(os.path.join(out, "rectilinear_grid_3D.zarr"), "var3")
    with netCDF4.Dataset(FILE) as d:
        x = np.ma.filled(d["var3"][:], np.nan).astype(np.float64)
    err = float(np.max(np.abs(got.astype(np.float64) - x)))
    check(stored > 0 and 0 < err <= budget, "numcodecs reads var3 %g from netCDF4's values (budget %g)" % (err, budget))
    print("var3 --abs-error %g: %s, ratio %.3f, max error %.4g by numpy on numcodecs' decode" %
          (budget, best["name"], best["ratio"], err))
    return out


def regate(out):
    r = run("evaluate_combos", FILE, "--where-to-write", out, "--field-to-compress", "var3", "--abs-error", "0.002",
            "--resume", *SPACE)
    # the recorded rows measured on the whole sample are re-gated, not measured
    # again; what the budget changes (the members solved to it, the rows the
    # search pruned under the looser gate) runs
    reused = re.search(r"reused (\d+) recorded rows", r.stderr)
    check(r.returncode == 0 and reused and int(reused.group(1)) > 0, "re-gating reused nothing: " + r.stderr)
    best = json.load(open(os.path.join(out, "best_var3.json")))
    check(best["gates"]["abs_error"] == 0.002 and best["max_abs_err"] <= 0.002, "re-gated best %r" % best["gates"])
    kept = [x for x in rows(out, "var3") if x["keep"] == "true"]
    check(kept and all(float(x["max_abs_err"]) <= 0.002 for x in kept), "a re-gated kept row over 0.002")
    check(kept and abs(best["ratio"] - max(float(x["ratio"]) for x in kept)) <= 1e-9 * best["ratio"],
          "the re-gated best %r is not the best kept row" % best["ratio"])


def table_column(tmp):
    """A row in mK for the field's K: 100 mK is 0.1 K."""
    picked = {}
    for label, header, row in (("l1 only", "Existing L1 error", "t,mK,1e-2"),
                               ("abs column", "Existing L1 error,Abs error", "t,mK,1e-2,100")):
        table = os.path.join(tmp, label.replace(" ", "_") + ".csv")
        open(table, "w").write("Short Name,Unit,%s\n%s\n" % (header, row))
        out = os.path.join(tmp, label.replace(" ", "_"))
        r = run("evaluate_combos", FILE, "--where-to-write", out, "--field-to-compress", "t", "--thresholds-table",
                table, "--eval-data-size-limit", "300KB", "--compressor-class", "zstd", "--filter-class", "bitround",
                "--serializer-class", "none")
        check(r.returncode == 0, "%s: %s" % (label, r.stderr))
        picked[label] = json.load(open(os.path.join(out, "best_t.json")))
    a, b = picked["l1 only"], picked["abs column"]
    check(a["gates"].get("abs_error") is None and a["max_abs_err"] > 0.1, "L1 alone: %r" % a["max_abs_err"])
    check(abs(b["gates"]["abs_error"] - 0.1) < 1e-12 and b["max_abs_err"] <= 0.1 and b["ratio"] < a["ratio"],
          "the mK column: gate %r, max error %r" % (b["gates"]["abs_error"], b["max_abs_err"]))
    print("t, table row in mK: L1 alone %s (%.3g K), with Abs error 100 mK %s (%.3g K)" %
          (a["name"], a["max_abs_err"], b["name"], b["max_abs_err"]))


def refusals(tmp):
    r = run("evaluate_combos", FILE, "--where-to-write", os.path.join(tmp, "x"), "--field-to-compress", "var3",
            "--abs-error", "0.05", "--extremes-sensitive", *SPACE)
    check(r.returncode != 0 and "--extremes-sensitive's budget is 2 x the relative L1 threshold" in r.stderr and
          "var3" in r.stderr, "extremes with an absolute budget alone: %s" % r.stderr)
    r = run("evaluate_combos", FILE, "--where-to-write", os.path.join(tmp, "x"), "--field-to-compress", "var3",
            "--abs-error", "-1", *SPACE)
    check(r.returncode != 0 and "--abs-error must be a positive number" in r.stderr, "a negative budget: " + r.stderr)


def main():
    with tempfile.TemporaryDirectory(prefix="dctk_abs_") as tmp:
        out = abs_alone(tmp)
        regate(out)
        table_column(tmp)
        refusals(tmp)
    finish("abs_error")


if __name__ == "__main__":
    main()
