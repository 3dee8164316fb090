#!/usr/bin/python3
"""PCodec through the whole tool on a real field (ncarg Tstorm.cdf t, with
missing values): the sweep of the 12 PCodec serializers alone records error
exactly 0 and keeps every combo; compress_with_optimal writes the best one
into a sharded store (verified); from_zarr_to_netcdf reads it back and
python3-netCDF4 finds the values bit for bit, NaN where the input is
missing."""
import csv
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import netCDF4

DCTK = os.environ["DCTK"]
NCARG = os.environ.get("DCTK_NCARG") or "/usr/share/ncarg/data"
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import check, finish  # noqa: E402

src = os.path.join(NCARG, "cdf", "Tstorm.cdf")
tmp = tempfile.mkdtemp(prefix="dctk_pcodec_")
out = os.path.join(tmp, "out")


def run(*args):
    r = subprocess.run([DCTK] + list(args), capture_output=True, text=True)
    check(r.returncode == 0, "%s: exit %d: %s" % (args[0], r.returncode, r.stderr[-800:]))
    return r


run("evaluate_combos", src, "--where-to-write", out, "--field-to-compress", "t", "--compressor-class", "none",
    "--filter-class", "none", "--serializer-class", "pcodec", "--threads-per-rank", "2", "--inner-chunk-mib", "0.05",
    "--search", "exhaustive")  # every row measured, to compare each
with open(os.path.join(out, "config_space_t_rank0.csv"), newline="") as f:
    rows = list(csv.DictReader(f))
check(len(rows) == 12, "%d combos, expected the 12 PCodec serializers" % len(rows))
for r in rows:
    ser = json.loads(r["serializer"])
    check(ser["name"] == "numcodecs.pcodec", "serializer %s" % r["serializer"])
    check(r["error"] == "" and r["keep"].lower() in ("true", "1"), "combo %s not kept: %s" % (r["ser_idx"], r["error"]))
    check(float(r["l1_rel"]) == 0 and float(r["max_abs_err"]) == 0, "combo %s has error %s" % (r["ser_idx"], r["l1_rel"]))
    check(float(r["ratio"]) > 1, "combo %s ratio %s" % (r["ser_idx"], r["ratio"]))
ratios = {(json.loads(r["serializer"])["configuration"]["level"],
           json.loads(r["serializer"])["configuration"]["delta_encoding_order"]): float(r["ratio"]) for r in rows}
check(ratios.get((12, 3), 0) > ratios.get((0, 0), 1e9), "level 12 order 3 does not beat level 0 order 0: %r" % ratios)

best = os.path.join(out, "best_t.json")
b = json.load(open(best))
check(b["codecs"][0]["name"] == "numcodecs.pcodec", "best codecs %r" % b["codecs"])
check(b["ratio"] > 2, "best ratio %.2f" % b["ratio"])
run("compress_with_optimal", src, out, "t", str(b["comp_idx"]), str(b["filt_idx"]), str(b["ser_idx"]),
    "--combo", best, "--compressor-class", "none", "--filter-class", "none", "--serializer-class", "pcodec",
    "--inner-chunk-mib", "0.05", "--shard-mib", "1")
stores = [d for d in os.listdir(out) if d.endswith(".zarr")]
check(len(stores) == 1, "stores written: %r" % stores)
if stores:
    store = os.path.join(out, stores[0])
    meta = json.load(open(os.path.join(store, "t", "zarr.json")))
    shard = meta["codecs"][0]
    check(shard["name"] == "sharding_indexed" and shard["configuration"]["codecs"][0]["name"] == "numcodecs.pcodec",
          "codecs in zarr.json: %r" % meta["codecs"])
    nc_out = os.path.join(tmp, "back.nc")
    run("from_zarr_to_netcdf", store, "--out", nc_out)
    with netCDF4.Dataset(src) as a, netCDF4.Dataset(nc_out) as c:
        x = np.ma.filled(a["t"][:].astype("f4"), np.nan)
        y = np.ma.filled(c["t"][:].astype("f4"), np.nan)
        check(x.shape == y.shape, "shape %r vs %r" % (x.shape, y.shape))
        if x.shape == y.shape:
            check(np.array_equal(np.isnan(x), np.isnan(y)), "missing values moved")
            m = ~np.isnan(x)
            check(np.array_equal(x[m].view("u4"), y[m].view("u4")), "values differ after the round trip")
finish("test_pcodec_sweep")
