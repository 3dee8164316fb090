"""Threshold rows found by unit, as udunits2 reads units (issue 23).

Real libncarg-data files, their units read by python3-netCDF4:
- uv300.nc's U and V in "m/s" get the table's u and v rows in "m s-1";
- pop.nc's t in "degC" is refused the table's t row in "K" (an offset changes
  a relative error), with the reason, by inspect_dataset and by a sweep;
- a real field rewritten by netCDF4 as q in "kg/kg" and in "kg kg**-1" gets the
  table's q row in "kg kg-1".
Two rows that apply alike and differ are refused naming both lines; the same
row twice, or a tie beaten by a better row (the name as written), is not.
The expected thresholds come from reading the shipped CSV with Python's csv
module, not from our lookup. After a write, the max abs error carries the
field's units.

Run by ctest with DCTK, DCTK_SRC and DCTK_NCARG set.
"""
import csv
import os
import re
import subprocess
import sys
import tempfile

import netCDF4
import numpy as np

DCTK = os.environ["DCTK"]
NCARG = os.environ.get("DCTK_NCARG", "/usr/share/ncarg/data")
TABLE = os.path.join(os.environ["DCTK_SRC"], "data", "l1_error_thresholds.csv")
failures = []


def check(ok, what):
    if not ok:
        failures.append(what)
        print("FAIL:", what)


def rows():
    with open(TABLE, newline="") as f:
        return {(r["Short Name"], r["Unit"]): float(r["Existing L1 error"]) for r in csv.DictReader(f)}


def inspect(path):
    """{variable: (units printed, threshold line)} from inspect_dataset."""
    r = subprocess.run([DCTK, "inspect_dataset", path], capture_output=True, text=True, timeout=60)
    check(r.returncode == 0, f"inspect_dataset {path}: rc {r.returncode} {r.stderr}")
    out, name = {}, None
    for line in r.stdout.splitlines():
        m = re.match(r"  (\S+)\s+\(.*units: (.*?)  ", line)
        if m:
            name = m.group(1)
            out[name] = [m.group(2), None]
        elif line.startswith("      threshold: ") and name:
            out[name][1] = line.split(": ", 1)[1]
    return out


TAB = rows()
uv = os.path.join(NCARG, "cdf", "uv300.nc")
with netCDF4.Dataset(uv) as ds:
    check(ds["U"].units == "m/s" and ds["V"].units == "m/s", "uv300.nc: units as netCDF4 reads them")
got = inspect(uv)
for var, row in (("U", "u"), ("V", "v")):
    want = TAB[(row, "m s-1")]
    line = got.get(var, ["", ""])[1] or ""
    m = re.match(r"relative L1 (\S+) \(row '(\S+)' in 'm s-1'\)", line)
    check(bool(m) and float(m.group(1)) == float("%.3g" % want) and m.group(2) == row,
          f"uv300 {var} (m/s): expected row {row} in m s-1 = {want}, got {line!r}")

pop = os.path.join(NCARG, "cdf", "pop.nc")
with netCDF4.Dataset(pop) as ds:
    check(ds["t"].units == "degC", "pop.nc: t in degC as netCDF4 reads it")
check(("t", "K") in TAB, "the table has t in K")
line = inspect(pop).get("t", ["", ""])[1] or ""
check(line.startswith("none (row 't' is in 'K', the field in 'degC'") and "offset" in line,
      f"pop t (degC): refused with the reason, got {line!r}")

with tempfile.TemporaryDirectory() as tmp:
    # a sweep on the degC field says why it has no threshold (two combos, a small sample)
    r = subprocess.run([DCTK, "evaluate_combos", pop, "--where-to-write", tmp, "--field-to-compress", "t",
                        "--compressor-class", "zstd", "--filter-class", "none", "--serializer-class", "none",
                        "--eval-data-size-limit", "100KB"], capture_output=True, text=True, timeout=300)
    check(r.returncode == 0 and "threshold none (row 't' is in 'K'" in r.stdout,
          f"sweep on pop t: rc {r.returncode}, {r.stdout[-400:]} {r.stderr[-400:]}")

    # q in two spellings of kg kg-1, values from a real field (meccatemp's t scaled to a humidity)
    with netCDF4.Dataset(os.path.join(NCARG, "cdf", "meccatemp.cdf")) as src:
        t = np.asarray(src["t"][:4], dtype=np.float32)
    q = (t - t.min()) / (t.max() - t.min()) * 0.02
    want = TAB[("q", "kg kg-1")]
    for spelling in ("kg/kg", "kg kg**-1", "kg kg-1"):
        path = os.path.join(tmp, "q_%d.nc" % len(spelling))
        with netCDF4.Dataset(path, "w") as ds:
            for d, n in zip(("time", "lat", "lon"), q.shape):
                ds.createDimension(d, n)
            v = ds.createVariable("q", "f4", ("time", "lat", "lon"))
            v.units = spelling
            v[:] = q
        line = inspect(path).get("q", ["", ""])[1] or ""
        m = re.match(r"relative L1 (\S+) \(row 'q' in 'kg kg-1'\)", line)
        check(bool(m) and float(m.group(1)) == float("%.3g" % want), f"q in {spelling!r}: got {line!r}")

    # the error after a write is in the field's units
    out = os.path.join(tmp, "w")
    r = subprocess.run([DCTK, "compress_with_optimal", pop, out, "t", "0", "-1", "-1",
                        "--compressor-class", "zstd", "--filter-class", "none", "--serializer-class", "none"],
                       capture_output=True, text=True, timeout=300)
    m = re.search(r"max abs error (\S+) degC", r.stdout)
    check(r.returncode == 0 and bool(m), f"compress_with_optimal pop t: units of the error: {r.stdout} {r.stderr}")

    # a duplicate row (issue 37 finding 9): two rows for U in "m s-1" that say different things are refused,
    # naming both lines, not the first taken silently; the same row twice is the same threshold
    with open(TABLE, newline="") as f:
        lines = f.read().splitlines()
    row = next(i for i, line in enumerate(lines) if line.split(",")[:2] == ["u", "m s-1"])
    cells = lines[row].split(",")
    other = ",".join(cells[:2] + ["%g" % (float(cells[2]) * 10)] + cells[3:])
    # a row with the name as the file writes it (U) applies before both u rows, so their difference is moot
    exact = ",".join(["U"] + cells[1:])
    for name, extra, applies in (("dup_differ.csv", [other], None), ("dup_same.csv", [lines[row]], "u"),
                                 ("dup_beaten.csv", [other, exact], "U")):
        table = os.path.join(tmp, name)
        with open(table, "w") as f:
            f.write("\n".join(lines + extra) + "\n")
        r = subprocess.run([DCTK, "evaluate_combos", uv, "--where-to-write", os.path.join(tmp, name + ".out"),
                            "--field-to-compress", "U", "--compressor-class", "zstd", "--filter-class", "none",
                            "--serializer-class", "none", "--eval-data-size-limit", "40KB", "--thresholds-table",
                            table], capture_output=True, text=True, timeout=300)
        said = "lines %d and %d both give the thresholds of 'U'" % (row + 1, len(lines) + 1)
        if applies is None:
            check(r.returncode != 0 and said in r.stderr and table in r.stderr,
                  f"{name}: rc {r.returncode}, want a line with {said!r}: {r.stderr[-500:]}")
        else:
            m = re.search(r"threshold (\S+) \(%s, row '(\S+)' in 'm s-1'\)" % re.escape(table), r.stdout)
            check(r.returncode == 0 and bool(m) and float(m.group(1)) == float("%.3g" % TAB[("u", "m s-1")])
                  and m.group(2) == applies,
                  f"{name}: rc {r.returncode} {r.stdout[-400:]} {r.stderr[-400:]}")

if failures:
    sys.exit("test_units_thresholds: %d failure(s)" % len(failures))
print("test_units_thresholds: OK")
