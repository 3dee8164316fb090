#!/usr/bin/python3
"""The one-shot `compress` judges combos on a sample; the whole field can miss
a bound the sample met. Then it must not stop with a store that breaks the
bound, nor retry compressors on the same lossy stage (they are lossless): it
writes the next best lossy stage that verifies. On rhumidity of
rectilinear_grid_3D.nc a 50 KB sample (one level of 17) makes quantize + dctk.ebcc
look within 1e-4 when the whole field is not. The store's values, read back by
netCDF4 after from_zarr_to_netcdf, must be within the bound, and the store
must name the combo that was written."""
import json
import os
import re
import subprocess
import sys
import tempfile

import netCDF4
import numpy as np

DCTK = os.environ["DCTK"]
FILE = os.path.join(os.environ.get("DCTK_NCARG", "/usr/share/ncarg/data"), "nug", "rectilinear_grid_3D.nc")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import check, finish  # noqa: E402

tmp = tempfile.mkdtemp(prefix="dctk_next_best_")
r = subprocess.run([DCTK, "compress", FILE, "--where-to-write", tmp, "--field-to-compress", "rhumidity",
                    "--override-existing-l1-error", "1e-4", "--eval-data-size-limit", "50KB",
                    "--compressor-class", "none", "--filter-class", "quantize", "--serializer-class", "ebcc,sz,none",
                    "--codecs", "all"],
                   capture_output=True, text=True)
check(r.returncode == 0, "compress exit %d: %s" % (r.returncode, r.stderr))
tried = re.findall(r"trying the next best combo comp_idx=(-?\d+) filt_idx=(-?\d+) ser_idx=(-?\d+)", r.stdout)
best = re.search(r"best combo comp_idx=(-?\d+) filt_idx=(-?\d+) ser_idx=(-?\d+)", r.stdout)
check(best is not None and len(tried) >= 1, "no fallback happened (the case no longer shows a sample miss?): "
      + r.stdout)
stages = [best.groups()[1:]] + [t[1:] for t in tried] if best else []
check(len(stages) == len(set(stages)), "a lossy stage was tried twice: %r" % stages)
check(r.stdout.rstrip().splitlines()[-1].startswith("store: "), "no store line at the end")

store = os.path.join(tmp, "rectilinear_grid_3D.zarr")
with open(os.path.join(store, "rhumidity", "zarr.json")) as f:
    attrs = json.load(f)["attributes"]["dc_toolkit"]
if tried:
    check([str(attrs["comp_idx"]), str(attrs["filt_idx"]), str(attrs["ser_idx"])] == list(tried[-1]),
          "the store names %r, the last combo tried was %r" % (attrs, tried[-1]))

nc = os.path.join(tmp, "back.nc")
r = subprocess.run([DCTK, "from_zarr_to_netcdf", store, "--out", nc], capture_output=True, text=True)
check(r.returncode == 0, "from_zarr_to_netcdf: " + r.stderr)
if r.returncode == 0:
    with netCDF4.Dataset(FILE) as a, netCDF4.Dataset(nc) as b:
        x = np.asarray(a["rhumidity"][...], dtype=np.float64)
        y = np.asarray(b["rhumidity"][...], dtype=np.float64)
    l1 = np.abs(x - y).sum() / np.abs(x).sum()
    check(l1 <= 1e-4, "relative L1 of the store %.3e over the bound 1e-4" % l1)
finish("compress_next_best")
