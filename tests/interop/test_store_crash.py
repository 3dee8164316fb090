#!/usr/bin/python3
"""Crash consistency of the store: writers (compress_with_optimal, of either
version A or B of a field) and merges are killed with SIGKILL at random
points, fixed seeds, in a bounded loop. After each kill, every array that the
root's consolidated metadata lists reads back completely through zarrita and
equals a version someone wrote; no staging name is ever listed; and each
field's own folder holds a complete copy (A or B). At the end one merge
without a kill leaves no staging folder, lock or temporary file.

    test_store_crash.py [ROUNDS]"""
import json
import os
import random
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import check, finish  # noqa: E402
import store_common as sc  # noqa: E402

ROUNDS = int(sys.argv[1]) if len(sys.argv) > 1 else 8
SEED = 20261201

tmp, values, out, store, combo = sc.scratch("store_crash", 4)


def settle(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True)
    check(r.returncode == 0, "%s: %s" % (" ".join(cmd[1:3]), r.stderr))


# how long one write takes here and now: kill points are drawn as fractions of
# it, so that a faster write path (or a faster machine) still gets killed mid-way
write_s = 0.0
for v in sc.FIELDS:
    t0 = time.monotonic()
    settle(sc.write_cmd(tmp, "A", v, combo[v], out))
    write_s = max(write_s, time.monotonic() - t0)
settle(sc.merge_cmd(tmp, "A", out))


def check_state(what):
    got = sc.read_store(store)
    check("error" not in got, "%s: zarrita cannot open the store: %s" % (what, got.get("error")))
    check(all(not n.startswith(".") for n in got.get("listed", [])), "%s: listed %r" % (what, got.get("listed")))
    for name, a in got.get("arrays", {}).items():
        check(sc.which_version(a, values, name) is not None, "%s: %s does not read back as written: %r"
              % (what, name, a))
    for v in sc.FIELDS:  # the folder itself, whatever the root lists
        meta = os.path.join(store, v, "zarr.json")
        check(os.path.exists(meta), "%s: %s has no complete copy" % (what, v))
    return got


rng = random.Random(SEED)
kinds = {"writer": 0, "merge": 0}
for i in range(ROUNDS):
    ver = rng.choice("AB")
    if rng.random() < 0.7:
        v = rng.choice(sc.FIELDS)
        cmd, kind, delay = sc.write_cmd(tmp, ver, v, combo[v], out), "writer", rng.uniform(0.05, 0.9) * write_s
    else:
        cmd, kind, delay = sc.merge_cmd(tmp, ver, out), "merge", rng.uniform(0.0, 0.2)
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(delay)
    p.send_signal(signal.SIGKILL)
    rc = p.wait()
    kinds[kind] += rc == -signal.SIGKILL
    got = check_state("round %d (%s %s killed after %.2f s, exit %d)" % (i, kind, ver, delay, rc))
    print("round %2d: %-6s %s killed after %.2f s (exit %3d); listed %d arrays, left %r"
          % (i, kind, ver, delay, rc, len(got.get("listed", [])), sc.private_names(store)))

check(kinds["writer"] > 0, "no writer was killed mid-way: %r" % kinds)
settle(sc.merge_cmd(tmp, "A", out))
check_state("final merge")
check(sc.private_names(store) == [], "the final merge left %r" % sc.private_names(store))
with open(os.path.join(store, "zarr.json")) as f:
    listed = sorted(json.load(f)["consolidated_metadata"]["metadata"])
check(listed == sorted(["lat", "lat_bnds", "lev", "lon", "q", "t", "time"]), "final listing %r" % listed)
finish("store crash consistency (%d rounds, kills %r)" % (ROUNDS, kinds))
