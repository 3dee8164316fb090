#!/usr/bin/python3
"""The default sweep on a real field, checked by an independent computation.

Runs `dc_toolkit evaluate_combos` with the whole default codec space on a real
field from libncarg-data, then:
  - the CSV has exactly one row per combo of the space, none duplicated;
  - best_VAR.json names the highest ratio among the kept rows, and `keep`
    agrees with the default gates (and with the metrics being finite) on every row;
  - for 60 combos drawn at random, and 3 with each solved member numcodecs
    has, numpy + Debian's numcodecs apply the same pipeline (the row's own
    codec JSON) to the same sample, chunk by chunk, and get the same ratio and
    relative L1/L2/Linf errors within 1e-6 relative. The two numcodecs-rs
    filters (asinh, fixed-offset-scale), which numcodecs 0.11 lacks, are
    recomputed from their formulas with numpy and the C library's asinh;
    gzip and numcodecs.zlib, which dc_toolkit deflates with libdeflate (other
    bytes than zlib's), are sized by libdeflate through ctypes and inflated
    back by Python's zlib (pipeline_ref.LibDeflate).

The space is the grid (98 compressors, 11 filters, 38 serializers, each with
none) and the members the solver added after it for this budget (issue 31
item 1): filter and serializer indices past the grid's, each a member with its
solved value in its rows, as many as the console's "N new members" (every member
past the grid: the solved ones, and any chosen by information, none here).
"""
import csv
import json
import math
import os
import random
import re
import subprocess
import sys
import tempfile

import numpy as np
import netCDF4

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pipeline_ref import run_combo  # noqa: E402
from sample_plan import rebuild  # noqa: E402

DCTK = os.environ["DCTK"]
NCARG = os.environ.get("DCTK_NCARG", "/usr/share/ncarg/data")
FILE = os.path.join(NCARG, "cdf", "meccatemp.cdf")
VAR = "t"
THRESHOLD = 1e-3

failures = []


def check(cond, msg):
    if not cond:
        failures.append(msg)


def close(a, b, rel=1e-6):
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return abs(a - b) <= rel * max(abs(a), abs(b))


def load_sample(best):
    with netCDF4.Dataset(FILE) as nc:
        v = nc.variables[VAR]
        v.set_auto_maskandscale(True)
        data = np.ma.filled(v[:].astype(v.dtype), np.nan)
    sample = rebuild(data, best["sample"])
    return np.ascontiguousarray(sample)


def main():
    out = tempfile.mkdtemp(prefix="dctk_sweep_")
    cmd = [DCTK, "evaluate_combos", FILE, "--where-to-write", out, "--field-to-compress", VAR,
           "--override-existing-l1-error", str(THRESHOLD), "--threads-per-rank", "2",
           "--eval-data-size-limit", "55KB", "--inner-chunk-mib", "0.025",
           "--search", "exhaustive"]  # every row measured, to check each
    # 3 runs of 3 adjacent time steps of the 31 (the chunk is 3 slabs deep): production-shaped chunks
    r = subprocess.run(cmd, capture_output=True, text=True)
    console = r.stderr + r.stdout
    check(r.returncode == 0, "evaluate_combos failed: " + r.stderr[-2000:])
    if r.returncode:
        return
    with open(os.path.join(out, "best_%s.json" % VAR)) as f:
        best = json.load(f)
    with open(os.path.join(out, "config_space_%s_rank0.csv" % VAR), newline="") as f:
        rows = list(csv.DictReader(f))
    # float32 grid: 98 compressors, 11 filters, 9 + 4 + 4 + 12 + 9 serializers (zfp, sz, ebcc, pcodec, zfp.rs),
    # each with none; the solved members follow the grid's filters and serializers
    GRID_C, GRID_F, GRID_S = 99, 12, 39
    solved_f = sorted({int(r["filt_idx"]) for r in rows if int(r["filt_idx"]) >= GRID_F - 1})
    solved_s = sorted({int(r["ser_idx"]) for r in rows if int(r["ser_idx"]) >= GRID_S - 1})
    check(solved_f == list(range(GRID_F - 1, GRID_F - 1 + len(solved_f))), "solved filters not after the grid: %s" % solved_f)
    check(solved_s == list(range(GRID_S - 1, GRID_S - 1 + len(solved_s))), "solved serializers not after the grid: %s"
          % solved_s)
    said = re.search(r"solved the lossy parameters for the budget: (\d+) new members", console)
    check(said is not None, "no solve line on the console")
    check(said is None or int(said.group(1)) == len(solved_f) + len(solved_s),
          "console says %s new members, the rows hold %d" % (said and said.group(1), len(solved_f) + len(solved_s)))
    check(len(solved_f) + len(solved_s) > 0, "no solved member at a 1e-3 budget")
    for r in rows:  # a solved member's rows carry its value (the filter's, else the serializer's)
        if int(r["filt_idx"]) in solved_f or int(r["ser_idx"]) in solved_s:
            check(math.isfinite(float(r["solved"])) and int(r["trials"]) > 0,
                  "solved member's row without its value: %s" % {k: r[k] for k in ("filter", "serializer", "solved")})
    n_f, n_s = GRID_F + len(solved_f), GRID_S + len(solved_s)
    check(len(rows) == GRID_C * n_f * n_s, "rows: %d, expected %d x %d x %d" % (len(rows), GRID_C, n_f, n_s))
    keys = {(int(r["comp_idx"]), int(r["filt_idx"]), int(r["ser_idx"])) for r in rows}
    check(len(keys) == len(rows), "duplicate combos in the CSV")

    kept = [r for r in rows if r["keep"] == "true"]
    for r in rows:
        vals = [float(r[k]) for k in ("ratio", "l1_rel", "l2_rel", "linf_rel")]
        # every default gate: L1, L2 2x, Linf 10x, |bias| 0.5x
        want = (r["error"] == "" and all(math.isfinite(v) for v in vals) and vals[1] <= THRESHOLD and
                vals[2] <= 2 * THRESHOLD and vals[3] <= 10 * THRESHOLD and abs(float(r["bias_rel"])) <= 0.5 * THRESHOLD)
        check((r["keep"] == "true") == want, "keep disagrees with the threshold: %s" % r)
    # the overall winner is the top kept row; the top level, what compress writes by default, the top kept
    # row zarr-python with numcodecs reads (its portability column)
    top = max(kept, key=lambda r: float(r["ratio"]))
    win = best.get("overall_winner", best)
    check(float(top["ratio"]) == win["ratio"], "winner ratio %s is not the top kept %s" % (win["ratio"], top["ratio"]))
    check((int(top["comp_idx"]), int(top["filt_idx"]), int(top["ser_idx"])) ==
          (win["comp_idx"], win["filt_idx"], win["ser_idx"]) or float(top["ratio"]) == win["ratio"],
          "best combo differs")
    readable = max((r for r in kept if r["portability"] in ("core", "numcodecs")), key=lambda r: float(r["ratio"]))
    check(best["reader_level"] == "numcodecs" and float(readable["ratio"]) == best["ratio"] and
          best["portability"] in ("core", "numcodecs"),
          "best_%s.json's top level %s (%s) is not the top kept row numcodecs reads, %s" %
          (VAR, best["ratio"], best["portability"], readable["ratio"]))

    sample = load_sample(best)
    chunk = best["inner_chunk_shape"]
    # numcodecs has no dctk.sz / dctk.ebcc: those rows are checked against their own bound
    # (without a filter the serializer's input is the data), the others recomputed with numcodecs
    is_ours = lambda r: '"dctk.' in r["serializer"]
    ours = [r for r in rows if is_ours(r)]
    # 4 dctk.sz and 4 dctk.ebcc in the grid, and the solved ones
    n_ours = 8 + len({r["ser_idx"] for r in ours if int(r["ser_idx"]) in solved_s})
    check(len(ours) == GRID_C * n_f * n_ours, "dctk.* rows: %d, expected %d" % (len(ours), GRID_C * n_f * n_ours))
    for r in ours:
        bound = json.loads(r["serializer"])["configuration"]["error_bound"]
        check(r["error"] == "" or r["error"].startswith("left out: "),
              "%s failed: %s" % (r["serializer"], r["error"]))
        if r["filt_idx"] == "-1":
            check(float(r["max_abs_err"]) <= bound, "%s: max error %s" % (r["serializer"], r["max_abs_err"]))
    # numcodecs 0.11 has no PCodec either: its rows are checked by test_pcodec and test_pcodec_sweep;
    # nor numcodecs-wasm's Zfp (zfp.rs): test_zfprs checks its streams bit for bit against zfpy
    ok = [r for r in rows if r["error"] == "" and not is_ours(r) and "numcodecs.pcodec" not in r["serializer"]
          and '"zfp.rs"' not in r["serializer"]]
    random.seed(20261130)
    picks = random.sample(ok, 60)
    # and 3 rows of each solved member numcodecs can run, whatever their compressor
    for idx, key in [(i, "filt_idx") for i in solved_f] + [(i, "ser_idx") for i in solved_s]:
        mine = [r for r in ok if int(r[key]) == idx]
        picks += random.sample(mine, min(3, len(mine)))
    for r in picks:
        ratio, l1, l2, linf = run_combo(sample, chunk, r, deflate="libdeflate")
        tol = 1e-6
        combo = (r["comp_idx"], r["filt_idx"], r["ser_idx"])
        check(close(ratio, float(r["ratio"]), tol), "%s ratio %r vs ours %s" % (combo, ratio, r["ratio"]))
        for name, mine in (("l1_rel", l1), ("l2_rel", l2), ("linf_rel", linf)):
            check(close(mine, float(r[name]), tol), "%s %s %r vs ours %s" % (combo, name, mine, r[name]))
    print("%d rows, %d kept, %d combos recomputed with numcodecs" % (len(rows), len(kept), len(picks)))


main()
for f in failures[:20]:
    print("FAIL:", f)
print("%d passed, %d failed" % (1 if not failures else 0, 1 if failures else 0))
sys.exit(1 if failures else 0)
