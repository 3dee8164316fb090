#!/usr/bin/python3
"""The sampler end to end, checked with netCDF4 and numpy:

- the sample's bytes: numpy rebuilds the sample from the plan recorded in best_VAR.json
  (runs of adjacent time steps, horizontal tiles, edges padded like the writer's) and its
  FNV-1a digest must equal the one the sweep recorded, on real libncarg-data fields;
- the scan: the full-field range and NaN count recorded equal numpy's;
- dimension kinds from CF attributes of a file whose dimension names say nothing, and the
  --dim-kind flag;
- a constant field and an all-NaN field: no sweep, written losslessly;
- the memory cap: under ulimit -v the sample shrinks with a line, or the sweep refuses
  with a line saying what to change;
- --resume starts a field over, with a line, when the sample limit changed.
"""
import json
import os
import re
import resource
import subprocess
import sys
import tempfile

import netCDF4
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import check, finish  # noqa: E402
from sample_plan import rebuild  # noqa: E402

DCTK = os.environ["DCTK"]
NCARG = os.environ.get("DCTK_NCARG", "/usr/share/ncarg/data")
ONE = ["--compressor-class", "zstd", "--filter-class", "none", "--serializer-class", "none", "--threads-per-rank", "1"]
tmp = tempfile.mkdtemp(prefix="dctk_sampling_")


def run(*args, limit_as=None):
    pre = (lambda: resource.setrlimit(resource.RLIMIT_AS, (limit_as, limit_as))) if limit_as else None
    return subprocess.run([DCTK, *args], capture_output=True, text=True, preexec_fn=pre)


def fnv1a64(data):
    h = 0xCBF29CE484222325
    for b in np.frombuffer(data, np.uint8):
        h = ((h ^ int(b)) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return f"fnv1a64:{h:016x}"


def read_field(path, var):
    with netCDF4.Dataset(path) as nc:
        v = nc.variables[var]
        v.set_auto_maskandscale(True)
        return np.ma.filled(v[:].astype(v.dtype), np.nan)


def check_sample(rel, var, limit, chunk_mib, want_plan):
    path = os.path.join(NCARG, rel)
    where = os.path.join(tmp, "s_" + var)
    r = run("evaluate_combos", path, "--where-to-write", where, "--field-to-compress", var,
            "--eval-data-size-limit", limit, "--inner-chunk-mib", chunk_mib, *ONE)
    check(r.returncode == 0, f"{rel} {var}: {r.stderr}")
    if r.returncode:
        return
    smp = json.load(open(os.path.join(where, f"best_{var}.json")))["sample"]
    check(re.search(want_plan, smp["plan"]), f"{rel} {var}: plan {smp['plan']!r} does not match {want_plan!r}")
    check(f"{var}: sample {smp['plan']}" in r.stderr, f"{rel} {var}: plan line not printed: {r.stderr}")
    data = read_field(path, var)
    sample = np.ascontiguousarray(rebuild(data, smp))
    check(list(sample.shape) == smp["shape"], f"{rel} {var}: numpy sample {sample.shape}, recorded {smp['shape']}")
    check(fnv1a64(sample.tobytes()) == smp["digest"], f"{rel} {var}: the sample's bytes differ from numpy's")
    sc = smp["scan"]
    check(sc["nan"] == int(np.isnan(data).sum()) and sc["min"] == float(np.nanmin(data))
          and sc["max"] == float(np.nanmax(data)), f"{rel} {var}: scan {sc} differs from numpy")
    for d, e in enumerate(smp["dims"]):  # the indices where the field takes more than one finite value
        if e["kind"] in ("time", "vertical"):
            moved = np.moveaxis(data, d, 0).reshape(data.shape[d], -1)
            varying = sum(np.nanmax(x) > np.nanmin(x) for x in moved if np.isfinite(x).any())
            check(e["varying"] == varying, f"{rel} {var}: {e['name']} varies on {e['varying']}, numpy {varying}")
    state = json.load(open(os.path.join(where, f"sweep_state_{var}.json")))
    check(state["sample"]["digest"] == smp["digest"] and "zstd" in state["codec_libraries"],
          f"{rel} {var}: sweep_state lacks the digest or the library versions")


# runs of 6 adjacent time steps (the 32 KiB production chunk is 6 slabs deep), mid-block: at least 3 of
# them, spread over the steps, however small the limit
check_sample("cdf/Tstorm.cdf", "t", "60KB", "0.03125", r"^timestep 3 runs of 6 of 64 \[\d+, \d+, \d+\] (\(of the 63 that vary\) )?x \(lat, lon\) whole")
# one slab of pop.nc is the whole 2-D field: contiguous tiles of the chunk's 25 rows, at least 3 (north,
# middle, south) though 50 KB holds one
check_sample("cdf/pop.nc", "t", "50KB", "0.03125", r"^\(nlat, nlon\) 3 tiles of 25x320 of 16x1 \[2, 8, 13\]")
# 4-D with levels: 3 of 18 levels at mid-block indices, both time steps
check_sample("cdf/vinth2p.nc", "T", "100KB", "0.03125", r"time 2 whole x lev 3/18 \[3, 9, 15\] x \(lat, lon\) whole")
# an ocean field: tiles only where there is ocean
check_sample("nug/tos_ocean_bipolar_grid.nc", "tos", "40KB", "0.0078125", r"tiles of 8x256")

# --- dimension kinds from CF attributes, names that say nothing ---------------------------
kinds = os.path.join(tmp, "kinds.nc")
with netCDF4.Dataset(kinds, "w") as nc:
    for name, n in (("a", 6), ("b", 5), ("c", 12), ("d", 10)):
        nc.createDimension(name, n)
    nc.createVariable("a", "f8", ("a",)).units = "days since 2000-01-01"
    nc.createVariable("b", "f8", ("b",)).positive = "down"
    v = nc.createVariable("x", "f4", ("a", "b", "c", "d"))
    v[:] = np.random.default_rng(1).normal(size=(6, 5, 12, 10)).astype("f4")
r = run("evaluate_combos", kinds, "--where-to-write", os.path.join(tmp, "k"), "--eval-data-size-limit", "2KB", *ONE)
check(r.returncode == 0, "kinds: " + r.stderr)
dims = json.load(open(os.path.join(tmp, "k", "best_x.json")))["sample"]["dims"]
check([d["kind"] for d in dims] == ["time", "vertical", "horizontal", "horizontal"], f"kinds from CF: {dims}")
r = run("evaluate_combos", kinds, "--where-to-write", os.path.join(tmp, "k2"), "--eval-data-size-limit", "2KB",
        "--dim-kind", "c=other,a=vertical", *ONE)
dims = json.load(open(os.path.join(tmp, "k2", "best_x.json")))["sample"]["dims"]
check([d["kind"] for d in dims] == ["vertical", "vertical", "other", "horizontal"], f"--dim-kind: {dims}")
r = run("evaluate_combos", kinds, "--where-to-write", os.path.join(tmp, "k3"), "--dim-kind", "c=sideways", *ONE)
check(r.returncode == 2 and "--dim-kind" in r.stderr and "sideways" in r.stderr, "bad --dim-kind: " + r.stderr)

# --- constant and all-NaN fields: no sweep, lossless ---------------------------------------
const = os.path.join(tmp, "const.nc")
with netCDF4.Dataset(const, "w") as nc:
    nc.createDimension("time", 4)
    nc.createDimension("lat", 30)
    nc.createVariable("flat", "f4", ("time", "lat"))[:] = np.full((4, 30), 273.15, "f4")
    nc.createVariable("gone", "f4", ("time", "lat"), fill_value=np.float32(-999))[:] = np.full((4, 30), -999, "f4")
for var in ("flat", "gone"):
    where = os.path.join(tmp, "c_" + var)
    r = run("compress", const, "--where-to-write", where, "--field-to-compress", var, *ONE)
    check(r.returncode == 0, f"{var}: {r.stderr}")
    check(re.search(rf"^{var}: every value is (missing \(NaN or fill\)|273\.1499939): no sweep needed", r.stdout, re.M),
          f"{var}: no line saying there is no sweep: {r.stdout}")
    check(not os.path.exists(os.path.join(where, f"results_{var}.parquet")), f"{var}: swept anyway")
    check("(lossless)" in r.stdout, f"{var}: not verified lossless: {r.stdout}")
    best = json.load(open(os.path.join(where, f"best_{var}.json")))
    check(best["sample"]["scan"]["constant"] is True and "plan" not in best["sample"],
          f"{var}: best_{var}.json does not carry the scan that found it constant: {best}")

# --- the memory cap under ulimit -v ---------------------------------------------------------
big = os.path.join(tmp, "big.nc")
with netCDF4.Dataset(big, "w") as nc:
    for name, n in (("time", 60), ("lat", 200), ("lon", 250)):
        nc.createDimension(name, n)
    nc.createVariable("time", "f8", ("time",)).units = "hours since 2000-01-01"
    nc.createVariable("f", "f4", ("time", "lat", "lon"))[:] = \
        np.random.default_rng(2).normal(size=(60, 200, 250)).astype("f4")
mem = ["--eval-data-size-limit", "1GB", "--inner-chunk-mib", "0.2", "--verbose", *ONE]
GB4 = 4 << 30
r = run("evaluate_combos", big, "--where-to-write", os.path.join(tmp, "m0"), *mem, limit_as=GB4)
m = re.search(r"memory this process may use: (\d+) bytes \(ulimit -v\)", r.stderr)
check(r.returncode == 0 and m, "no memory line under ulimit -v 4 GiB: " + r.stderr)
if m:
    base = GB4 - int(m[1])  # what the process had mapped when it asked
    # 0.8 x 27 MiB less 16 MiB and 8 chunks of 200 KB leaves about 4 MiB for a 12 MB field: shrunk
    r = run("evaluate_combos", big, "--where-to-write", os.path.join(tmp, "m1"), *mem, limit_as=base + (27 << 20))
    check(r.returncode == 0, "shrunk run failed: " + r.stderr)
    check(re.search(r"f: .*shrunk the sample budget from 953\.67 MiB to [\d.]+ MiB: the memory this process may use "
                    r"\(ulimit -v\)", r.stderr), "no shrink line: " + r.stderr)
    smp = json.load(open(os.path.join(tmp, "m1", "best_f.json")))["sample"]
    check(3 * 200000 <= smp["bytes"] <= 6 << 20, f"shrunk sample of {smp['bytes']} bytes")
    # with 10 MiB not even the sweep's buffers fit: refused, saying what to change
    r = run("evaluate_combos", big, "--where-to-write", os.path.join(tmp, "m2"), *mem, limit_as=base + (10 << 20))
    check(r.returncode != 0 and re.search(r"variable 'f': the smallest sample .* does not fit the memory this process "
                                          r"may use .*ulimit -v.*raise the memory limit", r.stderr),
          "no refusal line: " + r.stderr)

# an explicit cap, as a job that knows its memory gives it: 0.8 x 24 MiB less 16 MiB and the chunks
r = run("evaluate_combos", big, "--where-to-write", os.path.join(tmp, "m3"), *mem, "--memory-cap", "24MiB")
check(r.returncode == 0 and re.search(r"f: shrunk the sample budget from 953\.67 MiB to [\d.]+ MiB: the memory this "
                                      r"process may use \(--memory-cap\)", r.stderr), "--memory-cap: " + r.stderr)
r = run("evaluate_combos", big, "--where-to-write", os.path.join(tmp, "m4"), "--memory-cap", "lots", *ONE)
check(r.returncode == 2 and "--memory-cap must be auto, off or a size" in r.stderr, "bad --memory-cap: " + r.stderr)

# --- --resume restarts when the sample limit changed -----------------------------------------
where = os.path.join(tmp, "resume")
args = ["evaluate_combos", os.path.join(NCARG, "cdf/meccatemp.cdf"), "--where-to-write", where,
        "--field-to-compress", "t", *ONE]
r = run(*args, "--eval-data-size-limit", "60KB")
check(r.returncode == 0, "first run: " + r.stderr)
r = run(*args, "--eval-data-size-limit", "60KB", "--resume")
check(re.search(r"t: resuming: (reused )?\d+ (recorded rows )?of \d+", r.stderr) and "starting the field over" not in r.stderr,
      "same limit did not resume: " + r.stderr)
r = run(*args, "--eval-data-size-limit", "120KB", "--resume")
check(re.search(r"t: --resume: starting the field over: eval_data_size_limit changed \(60000 -> 120000\)", r.stderr),
      "changed limit did not restart with a line: " + r.stderr)
check("already done" not in r.stderr, "changed limit resumed rows: " + r.stderr)
state = json.load(open(os.path.join(where, "sweep_state_t.json")))
check(state["eval_data_size_limit"] == 120000, f"sweep_state not rewritten: {state['eval_data_size_limit']}")

finish("sampling")
