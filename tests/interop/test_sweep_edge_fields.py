#!/usr/bin/python3
"""evaluate_combos on awkward fields, written with python3-netCDF4:
  holes  float32 with NaN holes: finishes; a ZFP combo that loses the mask is
         recorded as not kept with the reason, and the best combo keeps it;
  allnan every value is the fill value: no sweep, a line naming the field,
         best_allnan.json a lossless pipeline, exit status 0;
  zeros  constant 0 under a threshold (every relative error 0/0): the same;
  ints   int16 without a fill: Delta is the only filter, no ZFP (no int16 in zfp),
         the best combo is lossless;
  tiny   float64 3 x 4, smaller than one chunk: finishes.
Then `compress` of the same file (issue 22, finding 6): exit 0; the all-missing
and constant fields are in the store and read back (through from_zarr_to_netcdf
and netCDF4) as the input; the char and string variables, which the store
cannot hold, each get a warning line naming them."""
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
    zeros = nc.createVariable("zeros", "f4", ("a", "b", "b"))
    zeros.units = "K"
    zeros[:] = np.zeros((2, 5, 5), "f4")
    nc.createDimension("len", 8)
    names = nc.createVariable("names", "S1", ("a", "len"))
    names[:] = netCDF4.stringtochar(np.array(["abc", "defgh"], "S8"))
    label = nc.createVariable("label", str, ("a",))
    label[0], label[1] = "hello", "wörld"

out = os.path.join(tmp, "out")
r = subprocess.run([DCTK, "evaluate_combos", path, "--where-to-write", out, "--compressor-class", "zstd",
                    "--override-existing-l1-error", "1e-2", "--threads-per-rank", "2", "--search", "exhaustive"],
                   capture_output=True, text=True)
errors = [l for l in r.stderr.splitlines() if l.startswith("dc_toolkit")]
check(r.returncode == 0, "exit status %d: %r" % (r.returncode, errors))
check(errors == [], "error lines: %r" % errors)
# the full-field scan (issue 18) finds them: the line speaks of every value, not of a sample
for var, what in (("allnan", "every value is missing"), ("zeros", "every value is 0")):
    said = [ln for ln in r.stdout.splitlines() if ln.startswith("%s: %s" % (var, what)) and "no sweep needed" in ln]
    check(len(said) == 1, "%s: no line saying why there is no sweep" % var)
    with open(os.path.join(out, "best_%s.json" % var)) as f:
        b = json.load(f)
    names = [c["name"] for c in b["codecs"]]
    check(names[0] == "bytes" and all(n in ("bytes", "zstd") for n in names) and b["threshold"] is None,
          "%s: best file is not a lossless pipeline: %r" % (var, b))
    check(not os.path.exists(os.path.join(out, "config_space_%s_rank0.csv" % var)), "%s: a CSV without a sweep" % var)


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
# rows left out before the sweep (bitround keeping every bit: the no-filter pipelines) say so
check(len(tr) > 0 and all(x["error"] == "" or "mask" in x["error"] or x["error"].startswith("left out: ") for x in tr)
      and best("tiny")["ratio"] > 0,
      "tiny: rows with errors or no ratio")
# compress: every numeric field written, the dataset merged, the text named
cout = os.path.join(tmp, "compress")
r = subprocess.run([DCTK, "compress", path, "--where-to-write", cout, "--compressor-class", "zstd", "--filter-class",
                    "none", "--serializer-class", "none", "--override-existing-l1-error", "1e-2"],
                   capture_output=True, text=True, timeout=600)
check(r.returncode == 0, "compress: exit %d: %s" % (r.returncode, r.stderr[-600:]))
warn = [ln for ln in r.stderr.splitlines() if "warning" in ln]
check(len(warn) == 2 and "'names'" in warn[0] + warn[1] and "'label'" in warn[0] + warn[1]
      and all("not in the store" in ln for ln in warn), "compress: warning lines for the text: %r" % warn)
back = os.path.join(tmp, "back.nc")
p = subprocess.run([DCTK, "from_zarr_to_netcdf", os.path.join(cout, "edge.zarr"), "--out", back],
                   capture_output=True, text=True, timeout=300)
check(p.returncode == 0, "from_zarr_to_netcdf: " + p.stderr[-300:])
if p.returncode == 0:
    with netCDF4.Dataset(path) as a, netCDF4.Dataset(back) as b:
        for var in ("allnan", "zeros", "holes", "ints", "tiny"):
            x = np.ma.filled(a[var][:].astype("f8"), np.nan)
            y = np.ma.filled(b[var][:].astype("f8"), np.nan) if var in b.variables else None
            check(y is not None and np.array_equal(x, y, equal_nan=True), "%s: not in the store as it was" % var)
finish("edge fields")
