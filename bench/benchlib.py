"""What several bench scripts share: the thread flag of the build under test,
a run that must succeed (wall and CPU seconds), and a ~50 MB field tiled from a real one, the small
field of the write benches."""
import json
import os
import resource
import subprocess
import sys
import time

import netCDF4
import numpy as np

REAL, VAR = "/usr/share/ncarg/data/nug/rectilinear_grid_3D.nc", "t"


def threads_flag(binary):
    """compress_with_optimal's thread flag: --threads-per-rank since the guide's help work, --threads before."""
    h = subprocess.run([binary, "compress_with_optimal", "--help"], capture_output=True, text=True)
    return "--threads-per-rank" if "--threads-per-rank" in h.stdout + h.stderr else "--threads"


def measured(cmd):
    """One run, which must succeed (else the bench stops with its stderr): wall seconds, the child's
    user and system CPU seconds, and the completed process (its stdout and stderr)."""
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    r = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    if r.returncode:
        sys.exit("bench: %s failed:\n%s" % (" ".join(cmd), r.stderr[-3000:]))
    return wall, r1.ru_utime - r0.ru_utime, r1.ru_stime - r0.ru_stime, r


def timed(cmd):
    """Wall seconds of one run, which must succeed."""
    return measured(cmd)[0]


def tiled(path):
    """REAL's VAR (one time step) stacked to ~50 MB along time, each copy shifted by
    0.01, as a classic netCDF file at path; returns the field's bytes."""
    with netCDF4.Dataset(REAL) as src, netCDF4.Dataset(path, "w", format="NETCDF3_64BIT_OFFSET") as dst:
        t = np.ma.filled(src[VAR][:], np.nan)[0]
        reps = max(1, int(50e6 // t.nbytes))
        dims = ("time",) + src[VAR].dimensions[1:]
        for name, n in zip(dims, (reps,) + t.shape):
            dst.createDimension(name, n)
        v = dst.createVariable(VAR, "f4", dims)
        v.units = "K"
        for i in range(reps):
            v[i] = t + 0.01 * i
        return reps * t.nbytes


NCARG = os.environ.get("DCTK_NCARG", "/usr/share/ncarg/data")
SHUFFLE_ZLIB1 = [{"name": "bytes", "configuration": {"endian": "little"}},
                 {"name": "numcodecs.shuffle", "configuration": {"elementsize": 4}},
                 {"name": "numcodecs.zlib", "configuration": {"level": 1}}]


def trinidad_write_input(tmp):
    """The small field of the write benches: trinidad.nc `data` (11.5 MB float32)
    as a classic netCDF file in tmp, and a --combo file of byte shuffle + zlib 1
    (nccopy -d1 -s's algorithm); returns (the file, the combo file)."""
    src = os.path.join(tmp, "trinidad.nc")
    with netCDF4.Dataset(os.path.join(NCARG, "cdf/trinidad.nc")) as s, \
            netCDF4.Dataset(src, "w", format="NETCDF3_64BIT_OFFSET") as d:
        v = s["data"]
        for name, n in zip(v.dimensions, v.shape):
            d.createDimension(name, n)
        d.createVariable("data", "f4", v.dimensions)[...] = np.ma.filled(v[...].astype(np.float32), np.nan)
    combo = os.path.join(tmp, "combo.json")
    with open(combo, "w") as f:
        json.dump({"var": "data", "codecs": SHUFFLE_ZLIB1}, f)
    return src, combo


# The three fields of bench/compress.py (and bench/index_form.py): label, file under NCARG,
# variable, copies along a new time axis (1: the field as it is)
COMPRESS_FIELDS = [("trinidad", "cdf/trinidad.nc", "data", 1), ("rect_t", "nug/rectilinear_grid_3D.nc", "t", 28),
                   ("fice", "cdf/fice.nc", "fice", 40)]


def compress_input(path, src, var, copies):
    """The real field, or `copies` of it concatenated along a new time axis (each copy offset
    by 0.01 so that no two are equal bit for bit), as a netCDF 64-bit offset file; its size."""
    with netCDF4.Dataset(os.path.join(NCARG, src)) as s, netCDF4.Dataset(path, "w", format="NETCDF3_64BIT_OFFSET") as d:
        v = s[var]
        x = np.ma.filled(v[...].astype(np.float32), np.nan)
        dims = v.dimensions if copies == 1 else ("copy",) + v.dimensions
        shape = x.shape if copies == 1 else (copies,) + x.shape
        for name, n in zip(dims, shape):
            d.createDimension(name, n)
        out = d.createVariable(var, "f4", dims)
        if copies == 1:
            out[...] = x
        for i in range(copies if copies > 1 else 0):
            out[i] = x + np.float32(0.01 * i)
    return os.path.getsize(path)
