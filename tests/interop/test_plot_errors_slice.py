"""plot_compression_errors plots the slice where the error is largest (issue 23).

A real field (meccatemp's t, 31 time steps) rewritten by netCDF4 with its
first time step rounded to integers, which bitround keeps exactly: a plot of
the first slice would show no error at all. The expected worst slice and its
max abs error come from numcodecs' BitRound on the values netCDF4 reads, with
the keepbits our command prints. Also: --index picks a slice, an index out of
range is one line and exit 2, and a lossless pipeline is said exact everywhere. A last
dimension in degrees_east (or degree_E) is a longitude, one in metres gets the note.

Run by ctest with DCTK and DCTK_NCARG set.
"""
import json
import os
import re
import subprocess
import sys
import tempfile

import netCDF4
import numpy as np
from numcodecs import BitRound

DCTK = os.environ["DCTK"]
NCARG = os.environ.get("DCTK_NCARG", "/usr/share/ncarg/data")
CLASSES = ["--compressor-class", "zstd", "--filter-class", "bitround", "--serializer-class", "none"]
failures = []


def check(ok, what):
    if not ok:
        failures.append(what)
        print("FAIL:", what)


def plot(path, out, *args):
    return subprocess.run([DCTK, "plot_compression_errors", path, out, "t", "--l1-threshold", "1e-3", *args],
                          capture_output=True, text=True,
                          timeout=300)


with tempfile.TemporaryDirectory() as tmp:
    with netCDF4.Dataset(os.path.join(NCARG, "cdf", "meccatemp.cdf")) as src:
        t = np.asarray(src["t"][:], dtype=np.float32)
        units = src["t"].units
    t[0] = np.round(t[0])
    path = os.path.join(tmp, "t.nc")
    with netCDF4.Dataset(path, "w") as ds:
        for d, n in zip(("time", "lat", "lon"), t.shape):
            ds.createDimension(d, n)
        v = ds.createVariable("t", "f4", ("time", "lat", "lon"))
        v.units = units
        v[:] = t

    r = plot(path, os.path.join(tmp, "a"), "0", "1", "-1", *CLASSES)
    # the pipeline by its readable name, no raw JSON (issue 23, item 3)
    m = re.search(r"^t: zstd\((?:checksum=false, )?level=\S+\) \| bitround\(keepbits=(\d+)\) \| -$", r.stdout, re.M)
    check(r.returncode == 0 and m is not None and "{" not in r.stdout, f"plot: rc {r.returncode} {r.stdout} {r.stderr}")
    if m:
        br = BitRound(keepbits=int(m.group(1)))
        errs = [float(np.max(np.abs(br.decode(br.encode(t[k].copy())).reshape(t[k].shape) - t[k])))
                for k in range(t.shape[0])]
        worst = int(np.argmax(errs))
        check(errs[0] == 0 and worst != 0, f"fixture: slice 0 exact, another not ({errs[:3]})")
        g = re.search(r"t: time=(\d+): the largest max abs error of 31 slice\(s\), (\S+) (\S+);", r.stdout)
        check(g is not None and int(g.group(1)) == worst and abs(float(g.group(2)) - errs[worst]) <= 1e-3 * errs[worst]
              and g.group(3) == units, f"worst slice {worst} ({errs[worst]} {units}): {r.stdout}")
        check(os.path.getsize(os.path.join(tmp, "a", "t_compression_errors.png")) > 0, "the PNG is written")

    r = plot(path, os.path.join(tmp, "b"), "0", "1", "-1", *CLASSES, "--index", "0")
    check(r.returncode == 0 and "t: time=0: slice 0 of 31 (--index)" in r.stdout, f"--index 0: {r.stdout} {r.stderr}")
    r = plot(path, os.path.join(tmp, "b"), "0", "1", "-1", *CLASSES, "--index", "31")
    err = r.stderr.strip().splitlines()
    check(r.returncode == 2 and len(err) == 1 and "--index 31" in err[0] and "31 slice(s)" in err[0],
          f"--index 31: rc {r.returncode}, {err}")
    r = plot(path, os.path.join(tmp, "c"), "0", "-1", "-1", "--compressor-class", "zstd", "--filter-class", "none",
             "--serializer-class", "none")
    check(r.returncode == 0 and "exact on all 31 slice(s)" in r.stdout, f"lossless: {r.stdout} {r.stderr}")

    # the last dimension's coordinate says it is a longitude by its CF units (issue 33 item 7: degrees_east was
    # called "not a longitude"); a dimension that says nothing of the kind still gets the note
    with netCDF4.Dataset(os.path.join(NCARG, "cdf", "meccatemp.cdf")) as src:
        lons = np.asarray(src["lon"][:], dtype=np.float64)
    for name, lon_units, note in (("east", "degrees_east", False), ("xe", "degree_E", False),
                                  ("col", "m", True)):
        p = os.path.join(tmp, name + ".nc")
        with netCDF4.Dataset(p, "w") as ds:
            for d, n in zip(("time", "lat", name), t.shape):
                ds.createDimension(d, n)
            c = ds.createVariable(name, "f8", (name,))
            c.units = lon_units
            c[:] = lons
            v = ds.createVariable("t", "f4", ("time", "lat", name))
            v.units = units
            v[:] = t
        r = plot(p, os.path.join(tmp, name), "0", "-1", "-1", "--compressor-class", "zstd", "--filter-class", "none",
                 "--serializer-class", "none")
        said = "'%s', not a longitude" % name in r.stderr
        check(r.returncode == 0 and said == note, f"{name} in {lon_units}: note {said}: {r.stderr}")

if failures:
    sys.exit("test_plot_errors_slice: %d failure(s)" % len(failures))
print("test_plot_errors_slice: OK")
