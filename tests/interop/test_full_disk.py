#!/usr/bin/python3
"""A full disk during a write: compress_with_optimal into a 2 MiB tmpfs.

The script re-runs itself in a private mount namespace (as root: unshare
--mount; otherwise also a user namespace) and mounts the tmpfs there, so
nothing outside sees it. Checked:
- a field of 4 MiB of noise (incompressible, plain bytes pipeline, 1 MiB
  shards) into a store that already holds a small field: non-zero exit, one
  line on stderr with 'No space left on device' naming the store, no 'wrote'
  claim; the store keeps the small field, which reads back, and no array of
  the big one (no zarr.json, no partial folder, the space is freed again);
- a disk full before any metadata is written: the same clear line, no array;
- a sweep whose CSV fills the disk: non-zero exit naming the full disk and
  --resume; resumed with room, each combo is in the CSV exactly once, with the
  rows of a sweep that never failed;
- after the tmpfs grows to 64 MiB, both runs finish, and the stored field's
  min/max/mean (open_zarr_and_inspect) match numpy's.

Run by ctest with DCTK set."""
import csv
import os
import re
import shutil
import subprocess
import sys
import tempfile

import netCDF4
import numpy as np

if os.environ.get("DCTK_FULL_DISK_NS") is None:
    ns = ["unshare", "--mount"] if os.geteuid() == 0 else ["unshare", "--user", "--map-root-user", "--mount"]
    # In a chroot "/" is no mount point, so unshare cannot make it private:
    # then keep the propagation and make the mount holding the work folder
    # private inside the namespace, before the tmpfs goes on it.
    probe = subprocess.run(ns + ["true"], capture_output=True, text=True)
    own = probe.returncode != 0 and "propagation" in probe.stderr
    os.environ["DCTK_FULL_DISK_NS"] = "own" if own else "private"
    if own:
        ns.append("--propagation=unchanged")
    os.execvp(ns[0], ns + [sys.executable, os.path.abspath(__file__)])

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import check, finish  # noqa: E402

DCTK = os.environ["DCTK"]
work = tempfile.mkdtemp(prefix="dctk_full_disk_")
mnt = os.path.join(work, "mnt")
os.mkdir(mnt)
if os.environ["DCTK_FULL_DISK_NS"] == "own":
    holder = subprocess.run(["findmnt", "-n", "-o", "TARGET", "-T", work], capture_output=True, text=True,
                            check=True).stdout.strip()
    subprocess.run(["mount", "--make-rprivate", holder], check=True)
subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", mnt], check=True)

src = os.path.join(work, "big.nc")
noise = np.random.default_rng(7).random((4, 256, 1024), dtype=np.float32) * 40 + 250
with netCDF4.Dataset(src, "w", format="NETCDF3_64BIT_OFFSET") as d:
    for name, n in (("time", 4), ("lat", 256), ("lon", 1024), ("n", 1000)):
        d.createDimension(name, n)
    v = d.createVariable("noise", "f4", ("time", "lat", "lon"))
    v.units = "K"
    v[:] = noise
    s = d.createVariable("small", "f4", ("n",))
    s.units = "K"
    s[:] = np.arange(1000, dtype=np.float32)


def compress(where, field):
    return subprocess.run([DCTK, "compress_with_optimal", src, where, field, "-1", "-1", "-1",
                           "--eval-data-size-limit", "100KB", "--inner-chunk-mib", "1", "--shard-mib", "1"],
                          capture_output=True, text=True, timeout=300)


def used_kib():
    st = os.statvfs(mnt)
    return (st.f_blocks - st.f_bfree) * st.f_frsize // 1024


def arrays_in(store):
    """Folders (relative) that hold an array's zarr.json."""
    found = []
    for root, dirs, files in os.walk(store):
        if "zarr.json" in files and root != store:
            found.append(os.path.relpath(root, store))
    return sorted(found)


def expect_enospc(p, store, what):
    lines = p.stderr.splitlines()
    check(p.returncode != 0, f"{what}: exit 0 on a full disk")
    check(len(lines) == 1, f"{what}: {len(lines)} stderr lines: {lines[:5]}")
    line = lines[0] if lines else ""
    check("No space left on device" in line, f"{what}: no 'No space left on device' in: {line}")
    check(store in line, f"{what}: the line does not name the store {store}: {line}")
    check(" wrote " not in p.stdout, f"{what}: claims to have written: {p.stdout}")


def stats_of(store, array):
    p = subprocess.run([DCTK, "open_zarr_and_inspect", store], capture_output=True, text=True, timeout=120)
    check(p.returncode == 0, f"open_zarr_and_inspect {store}: exit {p.returncode}: {p.stderr}")
    block = p.stdout.split(f"  {array}", 1)[-1] if f"  {array}" in p.stdout else ""
    m = re.search(r"stats: min (\S+)\s+max (\S+)\s+mean (\S+)", block)
    return tuple(float(x) for x in m.groups()) if m else None


store = os.path.join(mnt, "big.zarr")
p = compress(mnt, "small")
check(p.returncode == 0, f"small field on an empty tmpfs: exit {p.returncode}: {p.stderr}")

# 1. the disk fills while the shards of a big field are written
p = compress(mnt, "noise")
expect_enospc(p, store, "big field")
check(arrays_in(store) == ["small"], f"arrays after the failed write: {arrays_in(store)}")
check(not [f for f in os.listdir(store) if "noise" in f], f"leftovers of the big field: {os.listdir(store)}")
check(used_kib() < 200, f"{used_kib()} KiB still used after the failed write: the partial array was not removed")
check(stats_of(store, "small") == (0.0, 999.0, 499.5), f"small field after the failure: {stats_of(store, 'small')}")

# 2. the disk is full before the first metadata document
sub = os.path.join(mnt, "sub")
os.mkdir(sub)
fd = os.open(os.path.join(mnt, "ballast"), os.O_WRONLY | os.O_CREAT)
try:
    while True:
        os.write(fd, b"\0" * 4096)
except OSError:
    pass
os.close(fd)
p = compress(sub, "small")
sub_store = os.path.join(sub, "big.zarr")
expect_enospc(p, sub_store, "metadata on a full disk")
check(arrays_in(sub_store) == [] if os.path.isdir(sub_store) else True,
      f"arrays after a failed metadata write: {arrays_in(sub_store)}")

# 3. a sweep whose CSV fills the disk midway stops saying so; resumed with room,
#    it records each combo exactly once, with the rows of an uninterrupted run
#    (a unit cut short used to be appended a second time: 47 rows for 40 combos)
SWEEP = ["--search", "exhaustive", "--field-to-compress", "noise", "--eval-data-size-limit", "20KB",
         "--compressor-class", "zlib",
         "--filter-class", "none", "--serializer-class", "zfpy", "--override-existing-l1-error", "1e-2",
         "--threads-per-rank", "2"]


def sweep(where, *extra):
    return subprocess.run([DCTK, "evaluate_combos", src, "--where-to-write", where, *SWEEP, *extra],
                          capture_output=True, text=True, timeout=300)


def sweep_rows(where):
    with open(os.path.join(where, "config_space_noise_rank0.csv"), newline="") as f:
        return list(csv.DictReader(f))


clean = os.path.join(work, "sweep_clean")
p = sweep(clean)
check(p.returncode == 0, f"clean sweep: {p.stderr[-300:]}")
want = {(r["comp_idx"], r["filt_idx"], r["ser_idx"]): r for r in sweep_rows(clean)}
swept = os.path.join(mnt, "sweep")
os.mkdir(swept)
with open(os.path.join(mnt, "ballast"), "r+b") as f:  # room for about a third of the rows
    f.truncate(os.path.getsize(os.path.join(mnt, "ballast")) - 8192)
p = sweep(swept)
line = [x for x in p.stderr.splitlines() if x.startswith("dc_toolkit")]
line = line[-1] if line else ""
check(p.returncode != 0, "sweep on a full disk: exit 0")
check("No space left on device" in line and "--resume" in line, f"sweep on a full disk: {line}")
check(not os.path.exists(os.path.join(swept, "best_noise.json")), "sweep on a full disk left a best file")
cut = len(sweep_rows(swept))
check(0 < cut < len(want), f"the full disk left {cut} of {len(want)} rows: not midway")
os.remove(os.path.join(mnt, "ballast"))
p = sweep(swept, "--resume")
check(p.returncode == 0, f"resumed sweep: {p.stderr[-300:]}")
got = sweep_rows(swept)
keys = [(r["comp_idx"], r["filt_idx"], r["ser_idx"]) for r in got]
check(len(keys) == len(set(keys)) == len(want),
      f"resumed after a full disk: {len(keys)} rows, {len(set(keys))} distinct, {len(want)} combos")
for r in got:
    w = want.get((r["comp_idx"], r["filt_idx"], r["ser_idx"]), {})
    check(all(w.get(c) == r[c] for c in ("ratio", "l1_rel", "keep", "error")), f"resumed row differs: {r}")
shutil.rmtree(swept)

# 4. with room again, both finish and read back
subprocess.run(["mount", "-o", "remount,size=64m", mnt], check=True)
p = compress(mnt, "noise")
check(p.returncode == 0 and "noise: verified" in p.stdout, f"big field with room: exit {p.returncode}: {p.stderr}")
check(arrays_in(store) == ["noise", "small"], f"arrays after the second run: {arrays_in(store)}")
got = stats_of(store, "noise")
want = (float(noise.min()), float(noise.max()), float(noise.astype(np.float64).mean()))
check(got is not None and all(abs(a - b) <= 1e-4 * abs(b) for a, b in zip(got, want)),
      f"big field stats {got}, numpy {want}")
p = compress(sub, "small")
check(p.returncode == 0, f"small field with room: exit {p.returncode}: {p.stderr}")
check(stats_of(sub_store, "small") == (0.0, 999.0, 499.5), "small field in sub")

subprocess.run(["umount", mnt], check=True)
shutil.rmtree(work)
finish("full disk")
