"""evaluate_combos/compress --requirements (issue 32 item 6): an entry of a requirements list in the
compression-recommendations package's format (tests/requirements/recommendations.yaml, our own entries)
gates a real field (uv300's U, 300 hPa wind in m/s) as the flags it stands for do.
  - the entry's absolute bound gives the same rows (every combo, every metric but the speeds) and the same
    winner as --abs-error with that bound; an entry with data limits as --phys-min/--phys-max beside it;
    an entry of alternatives (any) as the loosest of its absolute bounds, the relative one named as not gated;
    a missing value U declares (_FillValue) as its mask; lossless as --without-lossy;
  - --requirements-unit-factor F gives the rows of the bounds and limits times F;
  - compress writes U under the entry, and the values netCDF4 reads back from the export are within the
    entry's bound of the input's, as numpy measures them;
  - what no gate of ours holds, a missing value U does not declare, a unit factor on a sentinel, an unknown
    entry, bad markers, a factor without an entry or not positive,
    and no list: exit 2 with one line, nothing written.
    test_requirements.py      (DCTK, DCTK_SRC; DCTK_NCARG: libncarg-data's folder)
"""
import csv
import json
import os
import shutil
import subprocess
import sys
import tempfile

import checks
import netCDF4
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import DCTK, check, finish, ncarg_field, run  # noqa: E402

SRC = os.environ.get("DCTK_SRC") or os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
NCARG = os.environ.get("DCTK_NCARG", "/usr/share/ncarg/data")
LIST = os.path.join(SRC, "tests", "requirements", "recommendations.yaml")
DATA = os.path.join(NCARG, "cdf", "uv300.nc")
SPEEDS = {"encode_mbps", "decode_mbps"}
U = "cf-short-name=u,level-kind=pressure"

tmp = tempfile.mkdtemp(prefix="dctk_requirements_")
table = os.path.join(tmp, "no_rows.csv")  # no L1 row for U: the requirement is the budget
with open(table, "w") as f:
    f.write("Short Name,Unit,Existing L1 error\n")
BASE = ["--field-to-compress", "U", "--thresholds-table", table, "--compressor-class", "zstd"]
runs = [0]


def sweep(*flags):
    """The rows (speeds left out, sorted) and best_U.json's pipeline of a sweep of U, and its stdout."""
    runs[0] += 1
    out = os.path.join(tmp, "s%d" % runs[0])
    r = run("evaluate_combos", DATA, "--where-to-write", out, *BASE, *flags)
    with open(os.path.join(out, "config_space_U_rank0.csv")) as f:
        rows = sorted(tuple((k, v) for k, v in row.items() if k not in SPEEDS) for row in csv.DictReader(f))
    with open(os.path.join(out, "best_U.json")) as f:
        best = json.load(f)
    with open(os.path.join(out, "manifest_U.json")) as f:
        args = json.load(f)["args"]
    flag = dict(zip(flags, flags[1:]))  # the manifest records the flags as the Python tool's does
    check(args["requirements"] == flag.get("--requirements") and
          args["requirements_unit_factor"] == (float(flag["--requirements-unit-factor"])
                                               if "--requirements-unit-factor" in flag else None),
          "manifest args %s, flags %s" % ({k: args[k] for k in args if "requirements" in k}, flags))
    return rows, (best["comp_idx"], best["filt_idx"], best["ser_idx"], best["codecs"], best["gates"]), r.stdout


def same_as(what, req_flags, explicit_flags):
    a_rows, a_best, a_out = sweep("--requirements-list", LIST, *req_flags)
    b_rows, b_best, _ = sweep(*explicit_flags)
    check(len(a_rows) > 10 and a_rows == b_rows, "%s: the rows differ from %s's (%d, %d rows)"
          % (what, " ".join(explicit_flags), len(a_rows), len(b_rows)))
    check(a_best == b_best, "%s: best %s, with %s %s" % (what, a_best, " ".join(explicit_flags), b_best))
    check("[requirements] " in a_out, "%s: no [requirements] line: %s" % (what, a_out[-600:]))
    return a_rows, a_out


def max_abs(rows):
    return [float(dict(r)["max_abs_err"]) for r in rows if dict(r)["keep"] == "true"]


# the entry's absolute bound is --abs-error
rows, out = same_as("u", ["--requirements", U], ["--abs-error", "0.5"])
kept = max_abs(rows)
check(kept and max(kept) <= 0.5 and max(kept) > 0.05, "u: kept combos' max abs errors %s, not within 0.5" % kept[:5])
# an entry of alternatives: the loosest absolute bound; the relative alternative is named, not gated
_, out = same_as("t", ["--requirements", "cf-short-name=t,level-kind=pressure"], ["--abs-error", "0.2"])
check("max-pointwise-relative-error-bound value 0.01" in out and "not gated" in out,
      "t: the alternative not gated is not named: %s" % out[-600:])
# data limits beside a bound
same_as("tcc", ["--requirements", "cf-short-name=tcc,level-kind=single"],
        ["--abs-error", "0.25", "--phys-min", "-40", "--phys-max", "50"])
# the unit factor multiplies bounds and limits
scaled, _ = same_as("u x 100", ["--requirements", U, "--requirements-unit-factor", "100"], ["--abs-error", "50"])
check(max(max_abs(scaled)) > 0.5, "u x 100: no kept combo uses more than the unscaled bound")
same_as("tcc x 2", ["--requirements", "cf-short-name=tcc,level-kind=single", "--requirements-unit-factor", "2"],
        ["--abs-error", "0.5", "--phys-min", "-80", "--phys-max", "100"])
# a missing value the field declares (U's _FillValue -999) is its mask; lossless is the space without lossy codecs
same_as("v", ["--requirements", "cf-short-name=v,level-kind=pressure"], ["--abs-error", "0.5"])
rows, _ = same_as("slt", ["--requirements", "cf-short-name=slt,level-kind=single"], ["--without-lossy"])
check(set(max_abs(rows)) == {0.0}, "slt: a kept combo is lossy: %s" % sorted(set(max_abs(rows)))[-3:])
# an undeclared missing value is held by a lossless sweep
same_as("sst lossless", ["--requirements", "cf-short-name=sst,level-kind=single", "--without-lossy"],
        ["--without-lossy", "--abs-error", "0.1"])
# a requirement an explicit flag already tightens: the tighter holds
same_as("u and --abs-error 0.1", ["--requirements", U, "--abs-error", "0.1"], ["--abs-error", "0.1"])

# compress holds the whole field to the entry: numpy measures what the store gives back
out = os.path.join(tmp, "c")
run("compress", DATA, "--where-to-write", out, *BASE, "--requirements-list", LIST, "--requirements", U)
nc = os.path.join(tmp, "U.nc")
run("from_zarr_to_netcdf", os.path.join(out, "uv300.zarr"), "--out", nc)
x = ncarg_field("cdf/uv300.nc", "U").astype(np.float64)
with netCDF4.Dataset(nc) as d:
    y = np.asarray(d.variables["U"][...], dtype=np.float64)
err = np.abs(y - x).max()
check(y.shape == x.shape and err <= 0.5 and err > 0, "compress under the u entry: max |y - x| %g, not in (0, 0.5]" % err)

# refused: one line, exit 2, nothing written
refusals = [
    (["--requirements-list", LIST, "--requirements", "cf-short-name=w,level-kind=pressure"],
     "mean-range-relative-error-bound value 0.01, which no gate of ours holds"),
    (["--requirements-list", LIST, "--requirements", "cf-short-name=u,level-kind=single"], "no entry of"),
    (["--requirements-list", LIST, "--requirements", "u"], "takes the entry's markers KIND=VALUE"),
    (["--requirements-list", LIST, "--requirements", "cf-short-name=sst,level-kind=single"],
     "the missing value -32767, which 'U' does not declare"),
    (["--requirements-list", LIST, "--requirements", "cf-short-name=v,level-kind=pressure",
      "--requirements-unit-factor", "2"], "a unit factor cannot convert the sentinel"),
    (["--requirements-unit-factor", "400"], "converts the entry of --requirements"),
    (["--requirements-list", LIST, "--requirements", U, "--requirements-unit-factor", "0"], "a positive number"),
    (["--requirements", U], "give its recommendations.yaml"),
    (["--requirements-list", os.path.join(tmp, "none.yaml"), "--requirements", U], "cannot read"),
    (["--requirements-list", table, "--requirements", U], "not a requirements list"),
]
for flags, words in refusals:
    where = os.path.join(tmp, "refused")
    r = subprocess.run([DCTK, "evaluate_combos", DATA, "--where-to-write", where, *BASE, *flags],
                       capture_output=True, text=True)
    lines = r.stderr.strip().splitlines()
    check(r.returncode == 2 and len(lines) == 1 and words in lines[0],
          "%s: exit %d, stderr %r, expected one line with %r" % (" ".join(flags), r.returncode, r.stderr, words))
    check(not os.path.exists(where) or not os.listdir(where), "%s: wrote %s" % (" ".join(flags), where))
# a --pipeline write verifies the entry's gates (BitRound 4 bits: errors of several m/s), and refuses what only the
# sweep holds
pipeline = json.dumps({"compressor": {"name": "zstd", "configuration": {"level": 3, "checksum": False}},
                       "filter": {"name": "numcodecs.bitround", "configuration": {"keepbits": 4}}, "serializer": None})
r = subprocess.run([DCTK, "compress", DATA, "--where-to-write", os.path.join(tmp, "gated"), *BASE, "--pipeline",
                    pipeline, "--requirements-list", LIST, "--requirements", U], capture_output=True, text=True)
check(r.returncode == 1 and "max abs error <= 0.5" in r.stderr and
      not os.path.exists(os.path.join(tmp, "gated", "uv300.zarr", "U")),
      "a --pipeline beyond the u entry's bound: %d %r" % (r.returncode, r.stderr))
r = subprocess.run([DCTK, "compress", DATA, "--where-to-write", os.path.join(tmp, "lossy"), *BASE, "--pipeline",
                    pipeline, "--requirements-list", LIST, "--requirements", "cf-short-name=slt,level-kind=single"],
                   capture_output=True, text=True)
check(r.returncode == 2 and "a --pipeline write does not check" in r.stderr and
      not os.path.exists(os.path.join(tmp, "lossy", "uv300.zarr")),
      "a lossy --pipeline under a lossless entry: %d %r" % (r.returncode, r.stderr))
r = subprocess.run([DCTK, "evaluate_combos", DATA, "--where-to-write", os.path.join(tmp, "nofield"),
                    "--requirements-list", LIST, "--requirements", U], capture_output=True, text=True)
check(r.returncode == 2 and "--field-to-compress" in r.stderr, "no field named: %d %r" % (r.returncode, r.stderr))

if not checks.failures:
    shutil.rmtree(tmp, ignore_errors=True)
finish("requirements")
