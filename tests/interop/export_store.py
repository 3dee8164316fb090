"""Fixture for the export tests: stores built from real libncarg-data files
with our own commands, plus the reference values python3-netCDF4 reads from
the inputs (see export_common.py for the layout).

rectilinear_grid_3D.nc: evaluate_combos sweeps var3 (zstd compressors,
bitround filters, no serializer, L1 threshold 1e-3); compress_with_optimal
writes t and rhumidity with the plain lossless pipeline (-1 -1 -1) and var3
with the indices of the sweep's best combo; merge_compressed_fields adds the
coordinates and consolidates. tos_ocean_bipolar_grid.nc (missing values over
land, 2-D lon/lat, bounds) is written losslessly field by field.

    export_store.py FIXTURE_DIR
"""
import json
import os
import shutil
import sys

import netCDF4
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from export_common import DCTK, LOSSY, SOURCES, run  # noqa: E402

FIX = sys.argv[1]
SWEEP = ["--compressor-class", "zstd", "--filter-class", "bitround", "--serializer-class", "none",
         "--eval-data-size-limit", "400KB"]


def data_vars(path):
    """Every variable but the 1-D coordinates (name == its only dimension)."""
    with netCDF4.Dataset(path) as nc:
        return [n for n, v in nc.variables.items() if not (v.ndim == 1 and v.dimensions[0] == n)]


def write_reference(key, source, store):
    ref = os.path.join(FIX, "ref", key)
    os.makedirs(ref)
    out = {}
    with netCDF4.Dataset(source) as nc:
        for name, v in nc.variables.items():
            x = v[...]
            x = np.ma.filled(x, np.nan) if x.dtype.kind == "f" else np.ma.getdata(x)
            x = np.ascontiguousarray(x, dtype=x.dtype.newbyteorder("<"))
            f = os.path.join("ref", key, name + ".bin")
            x.tofile(os.path.join(FIX, f))
            out[name] = {"dtype": x.dtype.str, "shape": list(x.shape), "dims": list(v.dimensions), "file": f,
                         "lossy": False}
    return {"source": source, "store": store, "vars": out}


def build(key, source):
    where = os.path.join(FIX, key)
    os.makedirs(where)
    lossy = LOSSY.get(key)
    best = None
    if lossy:
        run([DCTK, "evaluate_combos", source, "--where-to-write", where, "--field-to-compress", lossy,
             "--override-existing-l1-error", "1e-3", "--threads-per-rank", "2", *SWEEP], timeout=120)
        with open(os.path.join(where, f"best_{lossy}.json")) as f:
            best = json.load(f)
    for var in data_vars(source):
        idx = [best["comp_idx"], best["filt_idx"], best["ser_idx"]] if var == lossy else [-1, -1, -1]
        extra = SWEEP if var == lossy else []
        r = run([DCTK, "compress_with_optimal", source, where, var, *idx, "--threads-per-rank", "2", *extra])
        print(r.stdout.strip())
    r = run([DCTK, "merge_compressed_fields", source, where])
    print(r.stdout.strip())
    store = os.path.join(where, os.path.basename(source)[:-3] + ".zarr")
    m = write_reference(key, source, store)
    if lossy:
        bitround = [c for c in best["codecs"] if c["name"] == "numcodecs.bitround"]
        assert bitround, f"the sweep's best combo has no bitround filter: {best['codecs']}"
        m["vars"][lossy].update(lossy=True, keepbits=bitround[0]["configuration"]["keepbits"],
                                l1_bound=best["threshold"], codecs=best["codecs"],
                                predicted_ratio=best["ratio"])
    return m


def main():
    shutil.rmtree(FIX, ignore_errors=True)
    os.makedirs(FIX)
    stores = {key: build(key, src) for key, src in SOURCES.items()}
    with open(os.path.join(FIX, "manifest.json"), "w") as f:
        json.dump({"stores": stores}, f, indent=1)
    print(f"fixture: {', '.join(s['store'] for s in stores.values())}")


if __name__ == "__main__":
    main()
