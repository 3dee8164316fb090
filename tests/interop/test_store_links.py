#!/usr/bin/python3
"""Nothing outside the store is touched through a symbolic link (issue 37,
finding 1). A sentinel folder outside the store holds files that must
survive every variant, on the small dataset built from the real field t of
rectilinear_grid_3D.nc (store_common):

a. the field's folder in the store is a link to the sentinel folder: the
   write is refused with a line naming the link, exit non-zero;
b. a folder inside the field's folder is a link: replacing the field removes
   the link itself, never the files it points to; the new copy reads back;
c. folders with staging names (.t.stage.*, .t.old.* beside t) that are links:
   merge's cleanup removes the links, not their targets;
d. the writer lock .t.lock is a link to a sentinel file: refused, the file
   unchanged;
e. the results CSV of a sweep is a link to a sentinel file: refused, the file
   unchanged."""
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import check, finish  # noqa: E402
import store_common as sc  # noqa: E402

tmp, values, out, store, combo = sc.scratch("store_links", 2)
outside = os.path.join(tmp, "outside")


def run(cmd):
    return subprocess.run(cmd, capture_output=True, text=True)


def sentinel(name):
    """A folder outside the store with a file and a sub-folder; returns its path."""
    d = os.path.join(outside, name)
    os.makedirs(os.path.join(d, "sub"))
    for p in ("keep.txt", os.path.join("sub", "c")):
        with open(os.path.join(d, p), "w") as f:
            f.write("sentinel " + name)
    return d


def intact(d, name):
    for p in ("keep.txt", os.path.join("sub", "c")):
        f = os.path.join(d, p)
        if not os.path.isfile(f) or open(f).read() != "sentinel " + name:
            return False
    return True


for v in sc.FIELDS:
    r = run(sc.write_cmd(tmp, "A", v, combo[v], out))
    check(r.returncode == 0, "first write of %s: %s" % (v, r.stderr))
r = run(sc.merge_cmd(tmp, "A", out))
check(r.returncode == 0, "first merge: " + r.stderr)

# a. the field's folder is a link
os.rename(os.path.join(store, "q"), os.path.join(tmp, "q_real"))
target = sentinel("a")
os.symlink(target, os.path.join(store, "q"))
r = run(sc.write_cmd(tmp, "B", "q", combo["q"], out))
check(r.returncode != 0, "writing through a field folder that is a link exited 0")
check("symbolic link" in r.stderr and "q" in r.stderr, "no line naming the link: " + r.stderr)
check(intact(target, "a"), "the link's target lost files")
check(os.path.islink(os.path.join(store, "q")), "the link was replaced")
r = run(sc.merge_cmd(tmp, "A", out))
check(intact(target, "a"), "merge removed the link's target's files")
os.remove(os.path.join(store, "q"))
os.rename(os.path.join(tmp, "q_real"), os.path.join(store, "q"))
print("a. field folder a link: exit %d, target intact" % r.returncode)

# b. a folder inside the field is a link: replacing t removes the link, not its target
target = sentinel("b")
os.symlink(target, os.path.join(store, "t", "extra"))
r = run(sc.write_cmd(tmp, "B", "t", combo["t"], out))
check(r.returncode == 0, "rewriting t: " + r.stderr)
check(intact(target, "b"), "removing the old copy of t deleted files outside the store")
check(not os.path.lexists(os.path.join(store, "t", "extra")), "the old copy's link survived into the new copy")
r = run(sc.merge_cmd(tmp, "B", out))
check(r.returncode == 0, "merge: " + r.stderr)
got = sc.read_store(store)
check(sc.which_version(got.get("arrays", {}).get("t", {}), values, "t") == "B", "t does not read back as written: %r"
      % got.get("error", got.get("arrays", {}).get("t")))
print("b. a link inside the field: target intact, t reads back")

# c. staging names that are links, then merge's cleanup
targets = [sentinel("c%d" % i) for i in range(3)]
os.symlink(targets[0], os.path.join(store, ".t.stage.host.999999.0000abcd"))
os.symlink(targets[1], os.path.join(store, ".t.old.host.999999.0000abce"))
os.symlink(targets[2], os.path.join(store, ".q.partial"))
r = run(sc.merge_cmd(tmp, "B", out))
check(r.returncode == 0, "merge with staging links: " + r.stderr)
for i, t in enumerate(targets):
    check(intact(t, "c%d" % i), "merge's cleanup deleted files of %s" % t)
check(sc.private_names(store) == [], "left behind: %r" % sc.private_names(store))
print("c. staging links: removed, targets intact")

# d. the writer lock is a link to a file outside
lock_target = os.path.join(outside, "lockfile")
with open(lock_target, "w") as f:
    f.write("sentinel lock")
os.symlink(lock_target, os.path.join(store, ".t.lock"))
r = run(sc.write_cmd(tmp, "A", "t", combo["t"], out))
check(r.returncode != 0, "a write whose lock is a link exited 0")
check("symbolic link" in r.stderr and ".t.lock" in r.stderr, "no line naming the lock: " + r.stderr)
check(open(lock_target).read() == "sentinel lock", "the lock's target was written")
os.remove(os.path.join(store, ".t.lock"))
print("d. lock a link: exit %d, target unchanged" % r.returncode)

# e. a sweep's results CSV is a link
where = os.path.join(tmp, "sweep")
os.makedirs(where)
csv_target = os.path.join(outside, "results.csv")
with open(csv_target, "w") as f:
    f.write("sentinel csv")
os.symlink(csv_target, os.path.join(where, "config_space_t_rank0.csv"))
r = run([sc.DCTK, "evaluate_combos", os.path.join(tmp, "A", "big.nc"), "--where-to-write", where,
         "--field-to-compress", "t", "--compressor-class", "zlib", "--search", "exhaustive",
         "--override-existing-l1-error", "1e-3", "--threads-per-rank", "1"])
check(r.returncode != 0, "a sweep whose CSV is a link exited 0")
check("symbolic link" in r.stderr and "config_space_t_rank0.csv" in r.stderr, "no line naming the CSV: " + r.stderr)
check(open(csv_target).read() == "sentinel csv", "the CSV's target was written")
print("e. results CSV a link: exit %d, target unchanged" % r.returncode)
finish("store links")
