#!/usr/bin/python3
"""evaluate_combos on awkward fields, written with python3-netCDF4:
  holes  float32 with NaN holes: finishes; a ZFP combo that loses the mask is
         recorded as not kept with the reason, and the best combo keeps it;
  allnan every value is the fill value: no sweep (issue 18: the full-field scan
         finds it constant), a line saying so, a best file with a lossless
         pipeline and "constant": true;
  ints   int16 without a fill: Delta is the only filter, no ZFP (no int16 in zfp),
         the best combo is lossless;
  tiny   float64 3 x 4, smaller than one chunk: finishes."""
import csv
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import netCDF4

DCTK = os.environ["DCTK"]
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import check, finish  # noqa: E402


tmp = tempfile.mkdtemp(prefix="dctk_edge_")
path = os.path.join(tmp, "edge.nc")
rng = np.random.default_rng(7)
with netCDF4.Dataset(path, "w") as nc:
    for name, n in (("t", 4), ("y", 20), ("x", 30), ("a", 2), ("b", 5), ("p", 3), ("q", 4)):
        nc.createDimension(name, n)
    holes = nc.createVariable("holes", "f4", ("t", "y", "x"), fill_value=np.float32(-999))
    data = (280 + 10 * np.sin(np.arange(4 * 20 * 30) / 50)).reshape(4, 20, 30).astype("f4")
    data[rng.random(data.shape) < 0.25] = -999
    holes[:] = data
    allnan = nc.createVariable("allnan", "f4", ("a", "b", "b"), fill_value=np.float32(-999))
    allnan[:] = np.full((2, 5, 5), -999, "f4")
    ints = nc.createVariable("ints", "i2", ("t", "y", "x"))
    ints[:] = (np.arange(4 * 20 * 30) % 700 - 350).reshape(4, 20, 30).astype("i2")
    tiny = nc.createVariable("tiny", "f8", ("p", "q"))
    tiny[:] = np.arange(12, dtype="f8").reshape(3, 4) / 7

out = os.path.join(tmp, "out")
r = subprocess.run([DCTK, "evaluate_combos", path, "--where-to-write", out, "--compressor-class", "zstd",
                    "--override-existing-l1-error", "1e-2", "--threads-per-rank", "2"], capture_output=True, text=True)
errors = [l for l in r.stderr.splitlines() if l.startswith("dc_toolkit")]
check(r.returncode == 0 and not errors, "exit status %d, errors %r" % (r.returncode, errors))
check("allnan: every value is missing: no sweep, stored losslessly" in r.stderr, "no line for the all-missing field")
check(not os.path.exists(os.path.join(out, "config_space_allnan_rank0.csv")), "the all-missing field was swept")
with open(os.path.join(out, "best_allnan.json")) as f:
    b = json.load(f)
check(b.get("constant") is True and [c["name"] for c in b["codecs"]] == ["bytes", "zstd"],
      "best file of the all-missing field: %r" % b)


def rows(var):
    with open(os.path.join(out, "config_space_%s_rank0.csv" % var), newline="") as f:
        return list(csv.DictReader(f))


def best(var):
    with open(os.path.join(out, "best_%s.json" % var)) as f:
        return json.load(f)


for var in ("holes", "ints", "tiny"):
    check(os.path.exists(os.path.join(out, "best_%s.json" % var)), "%s: no best file" % var)
    check("%s: best combo" % var in r.stdout, "%s: no optimum printed" % var)

hr = rows("holes")
zfp_rows = [x for x in hr if "numcodecs.zfpy" in x["serializer"]]
check(zfp_rows and all(x["keep"] == "false" for x in zfp_rows if "mask lost" in x["error"]),
      "holes: a combo that lost the mask was kept")
check(any("mask lost" in x["error"] for x in zfp_rows), "holes: no ZFP combo reported losing the mask")
check(best("holes")["ser_idx"] == -1 or not any("mask lost" in x["error"] and x["ser_idx"] == str(best("holes")["ser_idx"])
                                                 for x in hr), "holes: the best combo loses the mask")

ir = rows("ints")
check(len(ir) == 8 * 2 * 13, "ints: %d rows, expected 8 compressors x (none, delta) x (bytes, 12 PCodec)" % len(ir))
check(all(x["serializer"] == "" or "numcodecs.pcodec" in x["serializer"] for x in ir), "ints: a ZFP serializer for int16")
check(best("ints")["l1_rel"] == 0, "ints: the best combo is not lossless: %r" % best("ints")["l1_rel"])

tr = rows("tiny")
check(len(tr) > 0 and all(x["error"] == "" or "mask" in x["error"] for x in tr) and best("tiny")["ratio"] > 0,
      "tiny: rows with errors or no ratio")
finish("edge fields")
