#!/usr/bin/python3
"""The sample budget said before the sweep (issue 33 item 6), on rectilinear_grid_3D's t
(libncarg-data; one time step of 17 levels, 96 x 192, float32):
  - under --eval-data-size-limit 300KB the smallest sample (the Python tool's rule: 3 time
    steps and 3 levels, or all there are) is the whole field; one line before the sweep's
    first progress line says the sample's size, the limit, how many times the limit it is,
    and the time the sweep is expected to take (positive seconds, the combos and threads);
    the sizes are those netCDF4 gives for the field and the limit as given;
  - under a limit the sample fits (2MB) no such line."""
import os
import re
import subprocess
import sys
import tempfile

import netCDF4

DCTK = os.environ["DCTK"]
NCARG = os.environ.get("DCTK_NCARG", "/usr/share/ncarg/data")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import check, finish  # noqa: E402

SRC = os.path.join(NCARG, "nug", "rectilinear_grid_3D.nc")
SPACE = ["--field-to-compress", "t", "--compressor-class", "zstd", "--filter-class", "none,bitround",
         "--serializer-class", "none", "--threads-per-rank", "2"]


def mib(n):
    return "%.2f MiB" % (n / 2**20)


def sweep(limit, where):
    r = subprocess.run([DCTK, "evaluate_combos", SRC, "--where-to-write", where, "--eval-data-size-limit", limit]
                       + SPACE, capture_output=True, text=True, timeout=600)
    check(r.returncode == 0, "limit %s: exit %d: %s" % (limit, r.returncode, r.stderr[-500:]))
    return r.stderr.splitlines()


v = netCDF4.Dataset(SRC).variables["t"]
field = v.dtype.itemsize
for n in v.shape:
    field *= n
with tempfile.TemporaryDirectory() as tmp:
    lines = sweep("300KB", os.path.join(tmp, "small"))
    said = [k for k, x in enumerate(lines) if "--eval-data-size-limit" in x]
    first = next((k for k, x in enumerate(lines) if re.match(r"t: \d+/\d+ combos", x)), len(lines))
    check(len(said) == 1 and said[0] < first, "one line on the budget before the sweep: %s" % lines[:8])
    line = lines[said[0]] if said else ""
    m = re.search(r"t: the sample is (\S+ MiB), ([\d.]+)x --eval-data-size-limit (\S+ KiB): the smallest sample the "
                  r"sampler takes \(3 time steps and 3 levels, or all there are\) is over the limit; expected to take "
                  r"about (\d+) s to measure all (\d+) combos on 2 thread\(s\)", line)
    check(bool(m), "the budget line: %s" % line)
    if m:
        check(m.group(1) == mib(field), "sample %s, the field netCDF4 reads %s" % (m.group(1), mib(field)))
        check(m.group(3) == "%.2f KiB" % (300000 / 1024), "the limit %s, not 300KB" % m.group(3))
        check(m.group(2) == "%.1f" % (field / 300000), "times the limit %s" % m.group(2))
        check(int(m.group(4)) > 0 and int(m.group(5)) > 0, "expected time %s s for %s combos" % m.group(4, 5))
    lines = sweep("2MB", os.path.join(tmp, "fits"))
    check(not any("--eval-data-size-limit" in x for x in lines), "a budget line when the sample fits: %s" % lines)
finish("test_sample_budget")
