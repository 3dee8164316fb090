"""Shared by the export tests (export_*.py): the fixture layout that
export_store.py builds, a checker that collects failures, and a runner.

Fixture (argument 1, a folder):
  rect/rectilinear_grid_3D.zarr   t, rhumidity lossless; var3 lossy (bitround + zstd from evaluate_combos)
  tos/tos_ocean_bipolar_grid.zarr every field lossless; tos has missing values (land)
  ref/<store>/<var>.bin            each field as python3-netCDF4 reads the input (masked -> NaN), C order
  manifest.json                    {stores: {key: {source, store, vars: {var: {dtype, shape, file, lossy, ...}}}}}
"""
import json
import os
import subprocess
import sys

import numpy as np

DCTK = os.environ.get("DCTK", "dc_toolkit")
NCARG = os.environ.get("DCTK_NCARG", "/usr/share/ncarg/data")
SOURCES = {
    "rect": os.path.join(NCARG, "nug/rectilinear_grid_3D.nc"),
    "tos": os.path.join(NCARG, "nug/tos_ocean_bipolar_grid.nc"),
}
LOSSY = {"rect": "var3"}  # the field written with a lossy combo


class Checker:
    def __init__(self, name):
        self.name = name
        self.checks = 0
        self.failures = 0

    def check(self, ok, what):
        self.checks += 1
        if not ok:
            self.failures += 1
            print("FAIL:", what, file=sys.stderr)
        return ok

    def finish(self):
        print(f"{self.name}: {self.checks - self.failures}/{self.checks} checks passed")
        sys.exit(1 if self.failures or not self.checks else 0)


def run(args, check=True, timeout=60):
    r = subprocess.run([str(a) for a in args], capture_output=True, text=True, timeout=timeout)
    if check and r.returncode != 0:
        raise RuntimeError(f"{' '.join(map(str, args))}: exit {r.returncode}\n{r.stderr}")
    return r


def manifest(fixture):
    with open(os.path.join(fixture, "manifest.json")) as f:
        return json.load(f)


def reference(fixture, info):
    return np.fromfile(os.path.join(fixture, info["file"]), dtype=info["dtype"]).reshape(info["shape"])


def lossy_bound(info):
    """Largest |y - x| allowed at each x for the bitround combo: rounding to
    keepbits mantissa bits moves a value by at most half its last kept bit."""
    return lambda x: np.abs(x) * 2.0 ** -(info["keepbits"] + 1)
