#!/usr/bin/python3
"""--target-ratio R (issue 31 item 6), checked with numcodecs and numpy on a
real field.

The budget is a compression ratio: every row is kept exactly when its ratio
reaches R (and it ran), the winner is the kept row of the smallest relative
L1 (ties: the higher ratio), and the solver adds members solved for the
smallest error reaching R (a solved BitRound's keepbits: numcodecs' BitRound
one bit finer, followed by any compressor of the space, chunk by chunk as
pipeline_ref computes it, does not reach R on the sample). compress --target-ratio
writes the winner: numcodecs decodes the store, numpy's errors are the best
file's and the stored ratio reaches R. A ratio nothing reaches is refused with
one line naming the highest; a ratio under 1 is refused as an argument."""
import csv
import json
import math
import os
import subprocess
import sys
import tempfile

import netCDF4
import numcodecs
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import check, finish  # noqa: E402
from pipeline_ref import run_combo  # noqa: E402
import zarr_shards  # noqa: E402

DCTK = os.environ["DCTK"]
NCARG = os.environ.get("DCTK_NCARG", "/usr/share/ncarg/data")
SCALE = float(os.environ.get("DCTK_TEST_TIMEOUT_SCALE", "1"))
PATH = os.path.join(NCARG, "cdf", "meccatemp.cdf")
VAR = "t"
SPACE = ["--filter-class", "bitround,fixedscaleoffset", "--compressor-class", "zstd", "--serializer-class", "none",
         "--threads-per-rank", "2", "--eval-data-size-limit", "50MB"]
R = 8.0


def run(*args):
    return subprocess.run([DCTK, *args], capture_output=True, text=True, timeout=900 * SCALE)


def rows_of(out):
    with open(os.path.join(out, "config_space_%s_rank0.csv" % VAR), newline="") as f:
        return list(csv.DictReader(f))


def field():
    with netCDF4.Dataset(PATH) as d:
        return np.ascontiguousarray(np.ma.filled(d[VAR][:], np.nan))


def filt(row):
    f = json.loads(row["filter"]) if row["filter"] else None
    return (f[0] if isinstance(f, list) else f) if f else None


def best_ratio(y_filter, x, chunk, compressors):
    """The highest ratio the filter (a codec object) followed by any of the compressors gives x in chunks of
    `chunk`, by numcodecs (pipeline_ref, as test_sweep_numcodecs checks the sweep's rows)."""
    return max(run_combo(x, chunk, {"filter": json.dumps(y_filter), "serializer": "", "compressor": c})[0]
               for c in compressors)


def evaluate(tmp, x):
    out = os.path.join(tmp, "eval")
    r = run("evaluate_combos", PATH, "--where-to-write", out, "--field-to-compress", VAR, "--target-ratio", str(R),
            *SPACE)
    check(r.returncode == 0, "evaluate --target-ratio %g: exit %d %s" % (R, r.returncode, r.stderr[-600:]))
    if r.returncode:
        return
    rows = rows_of(out)
    best = json.load(open(os.path.join(out, "best_%s.json" % VAR)))
    for w in rows:  # kept exactly when it ran and reaches R
        want = not w["error"] and math.isfinite(float(w["ratio"])) and float(w["ratio"]) >= R
        check((w["keep"] == "true") == want, "row %s: keep %s, ratio %s, error %r" % (w["name"], w["keep"], w["ratio"],
                                                                                     w["error"]))
    kept = [w for w in rows if w["keep"] == "true"]
    top = min(kept, key=lambda w: (float(w["l1_rel"]), -float(w["ratio"]))) if kept else None
    check(top is not None and float(top["l1_rel"]) == best["l1_rel"] and float(top["ratio"]) == best["ratio"],
          "the winner (L1 %r, ratio %r) is not the kept row of the smallest L1 %r" %
          (best["l1_rel"], best["ratio"], top and (top["l1_rel"], top["ratio"])))
    check(best["ratio"] >= R and best["gates"].get("target_ratio") == R,
          "best file: ratio %r, gates %r" % (best["ratio"], best["gates"]))
    check("--target-ratio" in r.stdout and "smallest relative L1" in r.stdout, "summary: %s" % r.stdout[-600:])
    # the solved BitRound: reaches R; one bit finer does not (numcodecs and each compressor the space pairs BitRound with)
    solved = [w for w in rows if w["solved"] not in ("", "nan") and filt(w) and filt(w)["name"] == "numcodecs.bitround"]
    check(solved, "no solved BitRound row")
    if solved:
        k = filt(solved[0])["configuration"]["keepbits"]
        comps = sorted({w["compressor"] for w in rows
                        if w["compressor"] and filt(w) and filt(w)["name"] == "numcodecs.bitround"})
        chunk = best["inner_chunk_shape"]
        mine = max(float(w["ratio"]) for w in solved)
        check(mine >= R, "the solved BitRound(%d) reaches only %g" % (k, mine))
        finer = best_ratio({"name": "numcodecs.bitround", "configuration": {"keepbits": k + 1}}, x, chunk, comps) \
            if k < 23 else 0
        check(finer < R, "BitRound(%d) reaches %g >= %g with a compressor of the space: not solved to the smallest "
              "error" % (k + 1, finer, R))
        print("solved BitRound keepbits %d: ratio %.3f; keepbits %d: %.3f at best by numcodecs (%d compressors)" %
              (k, mine, k + 1, finer, len(comps)))
    print("evaluate: %d rows, %d reach %g; winner %s: L1 %.3g, ratio %.3f" % (len(rows), len(kept), R, best["name"],
                                                                           best["l1_rel"], best["ratio"]))


def compress(tmp, x):
    out = os.path.join(tmp, "store")
    r = run("compress", PATH, out, "--vars", VAR, "--target-ratio", str(R), *SPACE)
    check(r.returncode == 0, "compress --target-ratio: exit %d %s" % (r.returncode, r.stderr[-600:]))
    if r.returncode:
        return
    best = json.load(open(os.path.join(out, "best_%s.json" % VAR)))
    store = os.path.join(out, "meccatemp.zarr")
    got, n = zarr_shards.read_store(store, VAR)
    e = np.abs(got.astype(np.float64) - x.astype(np.float64))
    l1 = e.sum() / np.abs(x.astype(np.float64)).sum()
    check(n > 0 and abs(l1 - best["l1_rel"]) <= 1e-6 * l1 and abs(e.max() - best["max_abs_err"]) <= 1e-6 * e.max(),
          "compress: numpy L1 %r max %r, best file %r %r" % (l1, e.max(), best["l1_rel"], best["max_abs_err"]))
    stored = sum(os.path.getsize(os.path.join(root, f)) for root, _d, files in os.walk(os.path.join(store, VAR, "c"))
                 for f in files)
    check(x.nbytes / stored >= R * 0.95, "compress: stored ratio %g (target %g)" % (x.nbytes / stored, R))
    print("compress: %s, numpy L1 %.3g, max %.3g, stored ratio %.3f" % (best["name"], l1, e.max(), x.nbytes / stored))


def refused(tmp):
    r = run("evaluate_combos", PATH, "--where-to-write", os.path.join(tmp, "far"), "--field-to-compress", VAR,
            "--target-ratio", "5000", *SPACE)
    lines = [ln for ln in r.stderr.splitlines() if "reaches ratio" in ln]
    check(r.returncode != 0 and len(lines) == 1 and "no pipeline reaches ratio 5000" in lines[0] and "highest" in lines[0],
          "--target-ratio 5000: exit %d %r" % (r.returncode, r.stderr[-600:]))
    for bad in ("0.5", "-2", "x"):  # "x": the parser says it expects a number
        r = run("evaluate_combos", PATH, "--where-to-write", os.path.join(tmp, "bad"), "--target-ratio", bad)
        said = "--target-ratio" in r.stderr if bad != "x" else "expects a number, got 'x'" in r.stderr
        check(r.returncode == 2 and said and len(r.stderr.splitlines()) <= 2,
              "--target-ratio %s: exit %d %r" % (bad, r.returncode, r.stderr[-300:]))


def main():
    x = field()
    with tempfile.TemporaryDirectory() as tmp:
        refused(tmp)
        evaluate(tmp, x)
        compress(tmp, x)
    finish("target_ratio")


if __name__ == "__main__":
    main()
