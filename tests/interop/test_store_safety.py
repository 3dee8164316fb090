#!/usr/bin/python3
"""Writes that never destroy what is there (issue 22, findings 1-4), on a
small dataset built from the real field t of rectilinear_grid_3D.nc, the
store read back by zarrita through its consolidated metadata:

1. two compress_with_optimal processes writing the same field at once: at
   most one reports success, the other is refused naming the writer, and the
   field reads back complete as the winner wrote it, or as the earlier copy;
2. a write whose verification fails exits 1 and leaves the earlier copy bit
   for bit (every file of the array folder), with nothing staged left;
3. an overwrite killed with SIGKILL, and a merge killed while writing the
   root document (its temporary file), then merge: exit 0, no staging name in
   the consolidated metadata, no staging folder or temporary file left, every
   listed array reads back;
4. a coordinate and a CF bounds variable written lossily (bitround) are
   rewritten losslessly by merge, with a line saying so."""
import os
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import check, finish  # noqa: E402
import store_common as sc  # noqa: E402

tmp, values, out, store, combo = sc.scratch("store_safety", 8)


def run(cmd):
    return subprocess.run(cmd, capture_output=True, text=True)


for v in sc.FIELDS:
    r = run(sc.write_cmd(tmp, "A", v, combo[v], out))
    check(r.returncode == 0, "first write of %s: %s" % (v, r.stderr))
r = run(sc.merge_cmd(tmp, "A", out))
check(r.returncode == 0, "first merge: " + r.stderr)
got = sc.read_store(store)
for v in sc.FIELDS:
    check(sc.which_version(got["arrays"].get(v, {}), values, v) == "A", "%s does not read back as written: %r"
          % (v, got["arrays"].get(v)))

# 1. two writers of t at once, from B and from A (A's values again, so either outcome is known)
procs = [subprocess.Popen(sc.write_cmd(tmp, ver, "t", combo["t"], out), stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True) for ver in ("B", "A")]
res = [(p.wait(), p.stdout.read(), p.stderr.read()) for p in procs]
ok = [i for i, (rc, _, _) in enumerate(res) if rc == 0]
check(len(ok) <= 1, "both concurrent writers reported success: %r" % res)
refused = [e for rc, _, e in res if rc != 0]
check(all("being written by another process" in e for e in refused),
      "the loser did not say another process is writing: %r" % refused)
got = sc.read_store(store)
ver = sc.which_version(got["arrays"].get("t", {}), values, "t")
want = ("B", "A")[ok[0]] if ok else "A"
check(ver == want, "after two writers t reads as %r, want %s: %r" % (ver, want, got["arrays"].get("t")))
check(sc.private_names(store) == [], "left behind: %r" % sc.private_names(store))
print("1. concurrent writers: exits %r, t reads as version %s" % ([rc for rc, _, _ in res], ver))

# 2. a failed verification keeps the earlier copy bit for bit
before = sc.field_files(store, "q")
bad = sc.combo_file(tmp, "lossy_q.json", "q", sc.bitround(2), threshold=1e-6)
r = run(sc.write_cmd(tmp, "B", "q", bad, out))
check(r.returncode == 1, "a write that misses its bound exited %d" % r.returncode)
check("exceeds the bound" in r.stderr and "earlier copy is kept" in r.stderr, "no clear line: " + r.stderr)
check(sc.field_files(store, "q") == before, "the earlier copy of q changed after a failed verification")
check(sc.private_names(store) == [], "left behind: %r" % sc.private_names(store))
print("2. failed verification: exit 1, the earlier copy unchanged (%d files)" % len(before))

# 3. an overwrite killed mid-write, a merge killed while writing zarr.json, then merge
killed = False
for delay in (0.5, 1.0, 0.25, 1.6):
    p = subprocess.Popen(sc.write_cmd(tmp, "B", "q", combo["q"], out), stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL)
    time.sleep(delay)
    p.send_signal(signal.SIGKILL)
    p.wait()
    if p.returncode == -signal.SIGKILL and any(".stage." in n for n in os.listdir(store)):
        killed = True
        break
check(killed, "could not kill the overwrite while it was staging")
dead = subprocess.Popen(["true"])
dead.wait()
with open(os.path.join(store, "zarr.json.tmp.%d.0" % dead.pid), "w") as f:
    f.write("{")  # what a merge killed while writing the root document leaves
r = run(sc.merge_cmd(tmp, "A", out))
check(r.returncode == 0, "merge after the kills: " + r.stderr)
check(sc.private_names(store) == [], "merge left: %r" % sc.private_names(store))
got = sc.read_store(store)
check(all(not n.startswith(".") for n in got["listed"]), "merge published %r" % got["listed"])
check(all("sha256" in a for a in got["arrays"].values()), "an array does not read back: %r" % got)
check(sc.which_version(got["arrays"].get("q", {}), values, "q") in ("A", "B"), "q is neither copy")
print("3. killed overwrite and merge: merge lists %s" % got["listed"])

# 4. a lossy coordinate and CF bounds are rewritten losslessly by merge
for v in ("lat", "lat_bnds"):
    c = sc.combo_file(tmp, "lossy_%s.json" % v, v, sc.bitround(1))
    r = run(sc.write_cmd(tmp, "A", v, c, out))
    check(r.returncode == 0, "lossy write of %s: %s" % (v, r.stderr))
got = sc.read_store(store)
check(sc.which_version(got["arrays"].get("lat", {}), values, "lat") is None, "bitround 1 left lat exact?")
r = run(sc.merge_cmd(tmp, "A", out))
check(r.returncode == 0, "merge: " + r.stderr)
for v in ("lat", "lat_bnds"):
    check("'%s' is a coordinate or bounds variable stored with a lossy pipeline" % v in r.stderr,
          "no line about rewriting %s: %s" % (v, r.stderr))
got = sc.read_store(store)
for v in ("lat", "lat_bnds", "lon", "lev", "time"):
    check(sc.which_version(got["arrays"].get(v, {}), values, v) == "A", "%s is not exact after merge" % v)
print("4. lossy coordinate and bounds rewritten losslessly")
finish("store safety")
