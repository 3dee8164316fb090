"""The Python dc_toolkit's chunk, sample and memory flags of the sweep (issue 32, item 3), each for its
effect on NCAR's fields:

- --vertical-floor N (contour.cdf T, 7 steps x 10 levels of 33 x 36, in chunks of one level, a sample
  budget of 21 slabs): the cascade policy keeps max(4, ceil(log2 10)) = 4 levels by default and spends
  the rest on time steps (5 x 4), keeps 6 with --vertical-floor 6 (3 x 7: the floor, then what the time
  steps leave goes back to levels); the plan in sweep_state_T.json is the one the Python tool's rule
  (docs/SAMPLING.md: a floor lowered until 3 time steps fit, never below 3; time steps; the rest to
  levels) gives, computed here; --vertical-floor 2 is a usage error (exit 2);
- --spatial-split / --no-spatial-split and --max-inner-chunk-mib (Tstorm t, 64 x 33 x 36, slices of
  4752 bytes, --inner-chunk-mib 0.002): the sweep's chunks are (1, 14, 36) split and (1, 33, 36) whole
  (sweep_state_t.json, best_t.json); compress with the same flag writes the store in those inner chunks
  (zarr.json) and its values read back by numcodecs are the field's; compress without the flag says the
  sweep no longer holds and sweeps again; --max-inner-chunk-mib 0.004 (below a whole slice) warns, only
  with --no-spatial-split; the manifest records spatial_split and max_inner_chunk_mib;
- --memory-threshold F: the sweep's [memory] line gives a budget of F x the node's memory (0.4 is half
  of the default 0.8's), the writer's (compress --verbose) too; the manifest records it; 0.99 and 0.01
  are usage errors (exit 2).

    test_layout_python.py   (DCTK: the dc_toolkit program; DCTK_NCARG)
"""
import json
import math
import os
import re
import sys
import tempfile

import netCDF4
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "interop"))
import zarr_shards  # noqa: E402
from checks import NCARG, check, finish, run  # noqa: E402

CONTOUR = os.path.join(NCARG, "cdf", "contour.cdf")
TSTORM = os.path.join(NCARG, "cdf", "Tstorm.cdf")
LOSSLESS = ("--compressor-class", "zstd", "--filter-class", "none", "--serializer-class", "none")
tmp = tempfile.mkdtemp(prefix="dctk_layout_")


def state(d, var):
    with open(os.path.join(d, f"sweep_state_{var}.json")) as f:
        return json.load(f)


def cascade(T, V, slabs, floor=None):
    """(time steps, levels) of the Python tool's cascade rule for T steps, V levels, `slabs` slabs."""
    t_min, v_min = min(T, 3), min(V, 3)
    P = max(slabs, t_min * v_min)
    vfloor = floor if floor is not None else max(4, math.ceil(math.log2(V)))
    level_target = max(v_min, min(vfloor, V, P // t_min))
    kt = max(t_min, min(T, P // level_target))
    return kt, max(v_min, min(V, P // kt))


# --- --vertical-floor ----------------------------------------------------------------------------------
SLAB = 33 * 36 * 4
LIMIT = 21 * SLAB  # 21 slabs of one level of one step
for floor in (None, 6, 3):
    d = os.path.join(tmp, f"floor{floor}")
    args = ["evaluate_combos", CONTOUR, "--where-to-write", d, "--field-to-compress", "T", "--l1-threshold", "0.001",
            "--eval-data-size-limit", str(LIMIT), "--inner-chunk-mib", str(SLAB / 1048576), *LOSSLESS]
    if floor:
        args += ["--vertical-floor", floor]
    run(*args)
    shape = state(d, "T")["sample"]["shape"]
    want = cascade(7, 10, 21, floor)
    check(shape[:2] == list(want) and shape[2:] == [33, 36],
          f"--vertical-floor {floor}: sample {shape}, the Python tool's rule gives {want} x 33 x 36")
    with open(os.path.join(d, "manifest_T.json")) as f:
        check(json.load(f)["args"].get("vertical_floor") == floor, f"manifest_T.json: vertical_floor is not {floor}")
check(cascade(7, 10, 21) != cascade(7, 10, 21, 6), "the floors tried give the same plan: the test says nothing")
r = run("evaluate_combos", CONTOUR, "--where-to-write", os.path.join(tmp, "floor2"), "--vertical-floor", "2", code=2)
check("--vertical-floor" in r.stderr, f"--vertical-floor 2: {r.stderr}")

# --- --spatial-split / --no-spatial-split / --max-inner-chunk-mib ------------------------------------------
with netCDF4.Dataset(TSTORM) as nc:
    t = np.ma.filled(nc.variables["t"][:].astype(np.float32), np.nan)  # its fill value is missing: NaN
SMALL = ("--inner-chunk-mib", "0.002", "--l1-threshold", "0.001", *LOSSLESS)
for flag, chunk in ((None, [1, 14, 36]), ("--no-spatial-split", [1, 33, 36])):
    d = os.path.join(tmp, f"split{flag}")
    extra = [flag] if flag else []
    r = run("evaluate_combos", TSTORM, "--where-to-write", d, *SMALL, *extra)
    check(state(d, "t")["inner_chunk_shape"] == chunk, f"{flag}: swept in {state(d, 't')['inner_chunk_shape']}")
    with open(os.path.join(d, "best_t.json")) as f:
        check(json.load(f).get("inner_chunk_shape") == chunk, f"{flag}: best_t.json's chunk is not {chunk}")
    with open(os.path.join(d, "manifest_t.json")) as f:
        args = json.load(f)["args"]
    check(args.get("spatial_split") is (flag is None) and args.get("max_inner_chunk_mib") == 256,
          f"{flag}: manifest args {args}")
    check("max-inner-chunk-mib" not in r.stderr, f"{flag}: a chunk warning under the default 256 MiB: {r.stderr}")
    r = run("compress", TSTORM, d, *SMALL, *extra)
    check("sweeping again" not in r.stdout + r.stderr, f"{flag}: compress swept again: {r.stdout}")
    store = os.path.join(d, "Tstorm.zarr")
    with open(os.path.join(store, "t", "zarr.json")) as f:
        inner = json.load(f)["codecs"][0]["configuration"]["chunk_shape"]
    check(inner == chunk, f"{flag}: the store's inner chunks are {inner}, not {chunk}")
    got, n = zarr_shards.read_store(store, "t")
    check(n > 0 and np.array_equal(got, t, equal_nan=True), f"{flag}: the store read back by numcodecs is not the field")
    # the same store asked the other way: the sweep no longer holds, and the field is swept again
    other = [] if flag else ["--no-spatial-split"]
    r = run("compress", TSTORM, d, *SMALL, *other)
    check("--spatial-split" in r.stdout + r.stderr and "sweeping again" in r.stdout + r.stderr,
          f"{flag}: compress with the other split did not sweep again: {r.stdout} {r.stderr}")
    with open(os.path.join(store, "t", "zarr.json")) as f:
        inner = json.load(f)["codecs"][0]["configuration"]["chunk_shape"]
    check(inner != chunk, f"{flag}: the rewrite with the other split kept the chunks {inner}")

d = os.path.join(tmp, "maxwarn")
for extra, warned in ((["--no-spatial-split"], True), ([], False)):
    r = run("evaluate_combos", TSTORM, "--where-to-write", d, *SMALL, "--max-inner-chunk-mib", "0.004", *extra)
    says = "over --max-inner-chunk-mib" in r.stderr
    check(says == warned, f"--max-inner-chunk-mib 0.004 {extra}: warned {says}, expected {warned}: {r.stderr}")

# --- --memory-threshold -------------------------------------------------------------------------------------
def budget(text):
    m = re.search(r"\[memory\] sample .* budget ([0-9.]+) MiB \(([^)]*)\)", text)
    return (float(m.group(1)), m.group(2)) if m else (None, text[-600:])


d = os.path.join(tmp, "memory")
base = ["evaluate_combos", TSTORM, "--where-to-write", d, "--l1-threshold", "0.001", *LOSSLESS]
default, how = budget(run(*base).stderr)
check(default is not None and how.endswith("x 0.8"), f"the default budget's line: {how}")
half, how = budget(run(*base, "--memory-threshold", "0.4").stderr)
check(default and half and abs(half / default - 0.5) < 1e-3 and how.endswith("x 0.4"),
      f"--memory-threshold 0.4: budget {half} MiB ({how}), default {default} MiB")
with open(os.path.join(d, "manifest_t.json")) as f:
    check(json.load(f)["args"].get("memory_threshold") == 0.4, "manifest_t.json does not record memory_threshold 0.4")
r = run("compress", TSTORM, d, "--l1-threshold", "0.001", *LOSSLESS, "--memory-threshold", "0.2", "--verbose")
m = re.search(r"\[memory\] writer: .* budget ([0-9.]+) MiB \(([^)]*)\)", r.stderr)
check(m is not None and default and abs(float(m.group(1)) / default - 0.25) < 1e-3 and m.group(2).endswith("x 0.2"),
      f"compress --memory-threshold 0.2: the writer's budget: {m.group(0) if m else r.stderr[-600:]}")
for bad in ("0.99", "0.01"):
    r = run(*base, "--memory-threshold", bad, code=2)
    check("--memory-threshold" in r.stderr, f"--memory-threshold {bad}: {r.stderr}")

finish("layout_python")
