#!/usr/bin/python3
"""Readers never mix two copies, and a store cut mid-swap is never exported
as if whole (issue 37, findings 2 and 4), on the small dataset built from the
real field t of rectilinear_grid_3D.nc (store_common), t in several shards:

1. an export held (DCTK_TEST_HOLD) after reading t's first shard while a
   writer replaces t with version B: the export fails naming the writer,
   writes no file; never a mix of A and B;
2. exports in a loop while a writer rewrites t in a loop (A, B, A, ...):
   each export exits 0 with t equal to A or to B as netCDF4 reads it, or
   fails with the line of 1; never exit 0 with a mix;
3. a writer killed between the two renames of the swap (the path of file
   systems without an exchange, DCTK_TEST_NO_EXCHANGE): inspect and export
   fail with a line naming t and merge, export writes no file; merge puts
   the previous copy back and zarrita reads it;
4. a writer killed just after the swap (exchange), before the consolidated
   metadata is refreshed, t rewritten with other codecs: the consolidated
   metadata never describes t's replaced copy (no entry, or t's own
   zarr.json); after merge zarrita reads the new copy through it."""
import json
import os
import signal
import subprocess
import sys
import time

import netCDF4
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import check, finish  # noqa: E402
import store_common as sc  # noqa: E402

tmp, values, out, store, combo = sc.scratch("store_readers", 8)
HOLD = os.path.join(tmp, "hold")
REPLACED = "replaced it while it was being read"


def run(cmd, env=None):
    return subprocess.run(cmd, capture_output=True, text=True, env=env)


def held(cmd, point, count=1, extra=None):
    """Start cmd holding at the store point; returns it once it holds (or has ended)."""
    with open(HOLD, "w") as f:
        f.write("%s\n%d\n" % (point, count))
    log = os.path.join(tmp, "held.%d.log" % time.monotonic_ns())
    env = {**os.environ, "DCTK_TEST_HOLD": HOLD, **(extra or {})}
    with open(log, "w") as err:
        p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err, env=env)
    while p.poll() is None and "[test hold]" not in open(log).read():
        time.sleep(0.02)
    return p, log


def export(nc):
    if os.path.exists(nc):
        os.remove(nc)
    return run([sc.DCTK, "from_zarr_to_netcdf", store, "--out", nc])


def version_in(nc):
    with netCDF4.Dataset(nc) as d:
        got = np.ascontiguousarray(np.ma.filled(d["t"][:], np.nan).astype("<f4"))
    for ver, vals in values.items():
        if np.array_equal(got, vals["t"], equal_nan=True):
            return ver
    return None


for v in sc.FIELDS:
    r = run(sc.write_cmd(tmp, "A", v, combo[v], out))
    check(r.returncode == 0, "first write of %s: %s" % (v, r.stderr))
r = run(sc.merge_cmd(tmp, "A", out))
check(r.returncode == 0, "first merge: " + r.stderr)
shards = sum(len(f) for _, _, f in os.walk(os.path.join(store, "t", "c")))
check(shards >= 3, "t has %d shards: the test needs several" % shards)

# 1. an export held after t's first shard while t is replaced
nc = os.path.join(tmp, "held.nc")
p, log = held([sc.DCTK, "from_zarr_to_netcdf", store, "--out", nc], "store: read t", 1)
check(p.poll() is None, "the export did not hold: " + open(log).read())
r = run(sc.write_cmd(tmp, "B", "t", combo["t"], out))
check(r.returncode == 0, "writing B while a reader holds: " + r.stderr)
os.remove(HOLD)
rc = p.wait()
err = open(log).read()
check(rc != 0, "an export that read t across a replacement exited 0")
check(REPLACED in err and "'t'" in err, "no line saying t was replaced while read: " + err[-600:])
check(not os.path.exists(nc) or version_in(nc) in ("A", "B"), "a mixed t was exported")
print("1. held export across a rewrite: exit %d" % rc)

# 2. exports in a loop against a writer in a loop
stop = os.path.join(tmp, "stop")
loop = ("import subprocess, os, sys\n"
        "cmds = [%r, %r]\n"
        "i = 0\n"
        "while not os.path.exists(%r) and i < 60:\n"
        "    subprocess.run(cmds[i %% 2], capture_output=True)\n"
        "    i += 1\n") % (sc.write_cmd(tmp, "A", "t", combo["t"], out), sc.write_cmd(tmp, "B", "t", combo["t"], out),
                         stop)
writer = subprocess.Popen([sys.executable, "-c", loop])
outcomes = {"A": 0, "B": 0, "refused": 0}
for i in range(12):
    nc = os.path.join(tmp, "loop%d.nc" % i)
    r = export(nc)
    if r.returncode == 0:
        ver = version_in(nc)
        check(ver in ("A", "B"), "export %d exited 0 with t mixing copies" % i)
        outcomes[ver or "A"] += ver is not None
    else:
        check(REPLACED in r.stderr or "missing" in r.stderr, "export %d failed without the line: %s" % (i, r.stderr))
        check(not os.path.exists(nc), "a failed export left %s" % nc)
        outcomes["refused"] += 1
open(stop, "w").close()
writer.wait()
print("2. 12 exports against a writer loop: %r" % outcomes)

# 3. a writer killed between the two renames (no exchange)
r = run(sc.write_cmd(tmp, "A", "t", combo["t"], out))
check(r.returncode == 0, "settling t to A: " + r.stderr)
p, log = held(sc.write_cmd(tmp, "B", "t", combo["t"], out), "store: between the renames t",
              extra={"DCTK_TEST_NO_EXCHANGE": "1"})
check(p.poll() is None, "the writer did not hold between the renames: " + open(log).read())
p.send_signal(signal.SIGKILL)
p.wait()
os.remove(HOLD)
check(not os.path.exists(os.path.join(store, "t")), "t is there: the kill was not between the renames")
nc = os.path.join(tmp, "cut.nc")
r = export(nc)
check(r.returncode != 0 and "'t' is missing" in r.stderr and "merge_compressed_fields" in r.stderr,
      "export of a store cut mid-swap: exit %d %s" % (r.returncode, r.stderr))
check(not os.path.exists(nc), "the export of a store without t wrote a file")
r = run([sc.DCTK, "open_zarr_and_inspect", store])
check(r.returncode != 0 and "'t' is missing" in r.stderr, "inspect of a store cut mid-swap: exit %d %s" %
      (r.returncode, r.stderr))
r = run(sc.merge_cmd(tmp, "A", out))
check(r.returncode == 0, "merge after the cut: " + r.stderr)
got = sc.read_store(store)
check(sc.which_version(got.get("arrays", {}).get("t", {}), values, "t") == "A",
      "after merge t is not the previous copy: %r" % got.get("arrays", {}).get("t", got.get("error")))
print("3. killed between the renames: export and inspect refuse, merge restores A")

# 4. a writer killed after the swap, before the consolidated metadata is refreshed, with other codecs
lossy = sc.combo_file(tmp, "bitround_t.json", "t", sc.bitround(12))
p, log = held(sc.write_cmd(tmp, "B", "t", lossy, out), "store: swapped t")
check(p.poll() is None, "the writer did not hold after the swap: " + open(log).read())
p.send_signal(signal.SIGKILL)
p.wait()
os.remove(HOLD)
root = json.load(open(os.path.join(store, "zarr.json")))
entry = root.get("consolidated_metadata", {}).get("metadata", {}).get("t")
own = json.load(open(os.path.join(store, "t", "zarr.json")))
check(entry is None or entry.get("codecs") == own.get("codecs"),
      "the consolidated metadata describes t's replaced copy: %s vs %s" % (entry and entry.get("codecs"),
                                                                             own.get("codecs")))
r = run(sc.merge_cmd(tmp, "B", out))
check(r.returncode == 0, "merge after the kill: " + r.stderr)
root = json.load(open(os.path.join(store, "zarr.json")))
check(root["consolidated_metadata"]["metadata"].get("t", {}).get("codecs") == own.get("codecs"),
      "after merge the consolidated metadata does not describe t's copy")
got = sc.read_store(store)
check("sha256" in got.get("arrays", {}).get("t", {}), "zarrita cannot read t after merge: %r" % got)
print("4. killed after the swap: consolidated entry %s, merge consolidates" % ("absent" if entry is None else "own"))
check(sc.private_names(store) == [], "left behind: %r" % sc.private_names(store))
finish("store readers")
