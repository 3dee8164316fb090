#!/usr/bin/python3
"""compress_with_optimal killed with SIGKILL at several points while writing
leaves no array that claims to be complete (no FIELD/zarr.json; the work in
progress only under the writer's own staging name .FIELD.stage.HOST.PID.RAND),
and running it again finishes the job: the array reads back equal to the
input and nothing staged or locked is left."""
import json
import os
import signal
import subprocess
import sys
import tempfile
import time

import numpy as np
import netCDF4

DCTK = os.environ["DCTK"]
REAL = os.path.join(os.environ.get("DCTK_NCARG", "/usr/share/ncarg/data"), "nug", "rectilinear_grid_3D.nc")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import check, finish  # noqa: E402


tmp = tempfile.mkdtemp(prefix="dctk_kill_")
src = os.path.join(tmp, "big.nc")
with netCDF4.Dataset(REAL) as r, netCDF4.Dataset(src, "w") as w:
    t = np.ma.filled(r["t"][:], np.nan)[0]
    for name, n in zip(("time",) + r["t"].dimensions[1:], (48,) + t.shape):
        w.createDimension(name, n)
    v = w.createVariable("t", "f4", ("time",) + r["t"].dimensions[1:])
    for i in range(48):
        v[i] = t + 0.01 * i
combo = os.path.join(tmp, "best_t.json")
json.dump({"var": "t", "codecs": [{"name": "bytes", "configuration": {"endian": "little"}},
                                  {"name": "numcodecs.bz2", "configuration": {"level": 9}}]}, open(combo, "w"))
out = os.path.join(tmp, "out")
store = os.path.join(out, "big.zarr")
cmd = [DCTK, "compress_with_optimal", src, out, "t", "--combo", combo, "--inner-chunk-mib", "0.5",
       "--shard-mib", "1", "--threads-per-rank", "1"]

for delay in (0.2, 0.6, 1.2):
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(delay)
    p.send_signal(signal.SIGKILL)
    p.wait()
    if p.returncode != -signal.SIGKILL:
        continue  # it finished before the kill: nothing to check at this point
    check(not os.path.exists(os.path.join(store, "t", "zarr.json")),
          "killed after %.1f s: an array t claims to be complete" % delay)
    staged = [n for n in os.listdir(store) if n.startswith(".t.stage.")] if os.path.isdir(store) else []
    check(len(staged) <= 1, "killed after %.1f s: staging folders %r" % (delay, staged))

r = subprocess.run(cmd, capture_output=True, text=True)
check(r.returncode == 0 and "verified" in r.stdout, "the rerun did not finish: " + r.stderr)
check(os.path.exists(os.path.join(store, "t", "zarr.json")), "no array after the rerun")
check(not [n for n in os.listdir(store) if n.startswith(".")], "left behind: %r" % os.listdir(store))
finish("kill and rerun")
