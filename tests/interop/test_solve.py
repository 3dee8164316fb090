#!/usr/bin/python3
"""Solved parameters (issue 31 item 1), checked against numcodecs on real fields.

For BitRound on real float32 fields at relative L1 budgets, the sweep solves
keepbits: its CSV has a row of the solved member (solved = K, trials > 0),
and numcodecs' own BitRound says K is the smallest keepbits whose relative L1
on the sample (the whole field here) is within the budget: K passes, K - 1
does not. The solved member beats every grid member that passes (a budget
between the grid's 1, 10, 19, 23 no longer rounds to the next grid member),
the adaptive search finds the same winner as the exhaustive sweep, and the
pipeline the winner names, written with --combo and read back by zarr-python,
is within the budget of netCDF4's values. --resume at a new budget re-solves:
its solved row is the new budget's, and the grid rows are reused. The seeded
solve (issue 31 item 5: BitRound's error model for the budget) finds the same
keepbits as the plain bisection (DCTK_TEST_SOLVE_UNSEEDED), in fewer trials
over the cases."""
import csv
import json
import os
import subprocess
import sys
import tempfile

import numcodecs
import numpy as np

DCTK = os.environ["DCTK"]
NCARG = os.environ.get("DCTK_NCARG", "/usr/share/ncarg/data")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import check, finish, ncarg_field  # noqa: E402

tmp = tempfile.mkdtemp(prefix="dctk_solve_")
SPACE = ["--filter-class", "bitround", "--compressor-class", "zstd", "--serializer-class", "none",
         "--threads-per-rank", "2", "--eval-data-size-limit", "50MB"]


def sweep(path, var, budget, where, extra=(), env=None):
    r = subprocess.run([DCTK, "evaluate_combos", os.path.join(NCARG, path), "--where-to-write", where,
                        "--field-to-compress", var, "--override-existing-l1-error", str(budget)] + SPACE + list(extra),
                       capture_output=True, text=True, timeout=600, env=dict(os.environ, **(env or {})))
    check(r.returncode == 0, "%s %s: exit %d: %s" % (path, var, r.returncode, r.stderr[-600:]))
    with open(os.path.join(where, "best_%s.json" % var)) as f:
        best = json.load(f)
    with open(os.path.join(where, "config_space_%s_rank0.csv" % var), newline="") as f:
        rows = list(csv.DictReader(f))
    return best, rows, r.stderr


def rel_l1(x, k):
    # numcodecs' BitRound rounds its input in place: give it a copy
    y = numcodecs.BitRound(keepbits=k).decode(numcodecs.BitRound(keepbits=k).encode(x.copy()))
    x64, y64 = x.astype(np.float64), np.asarray(y, dtype=np.float64).reshape(x.shape)
    return np.abs(y64 - x64).sum() / np.abs(x64).sum()


def values(path, var):
    """The field's unmasked values as float32 (fill values and NaN left out, as the sweep's norms do)."""
    import netCDF4

    x = ncarg_field(path, var).astype("<f4")
    with netCDF4.Dataset(os.path.join(NCARG, path)) as d:
        fill = getattr(d.variables[var], "_FillValue", None)
    keep = np.isfinite(x) & (x != np.float32(fill) if fill is not None else True)
    return x if keep.all() else x[keep]


def keepbits(row):
    if not row["filter"]:
        return None
    f = json.loads(row["filter"])
    return (f[0] if isinstance(f, list) else f)["configuration"]["keepbits"]


# small fields: the sample is the whole field, so numcodecs sees what the sweep saw
CASES = [("cdf/meccatemp.cdf", "t", 1e-3), ("cdf/meccatemp.cdf", "t", 1e-2), ("cdf/Tstorm.cdf", "t", 1e-4),
         ("cdf/sst30e_netcdf.nc", "sst", 1e-4)]
trials = []
for path, var, budget in CASES:
    x = values(path, var)
    where = os.path.join(tmp, "%s_%s_%g" % (os.path.basename(path), var, budget))
    best, rows, err = sweep(path, var, budget, where, ["--search", "exhaustive"])
    solved = [r for r in rows if r["solved"] not in ("", "nan")]
    check(solved, "%s %g: no solved row" % (var, budget))
    if not solved:
        continue
    k = int(float(solved[0]["solved"]))
    check(all(keepbits(r) == k and int(r["trials"]) > 0 for r in solved), "%s: solved rows %r" % (var, solved[:2]))
    # numcodecs: K is within the budget and K - 1 is not
    check(rel_l1(x, k) <= budget, "%s %g: numcodecs BitRound(%d) has L1 %g" % (var, budget, k, rel_l1(x, k)))
    check(k == 0 or rel_l1(x, k - 1) > budget,
          "%s %g: BitRound(%d) is within the budget too (L1 %g): not solved to it" % (var, budget, k - 1,
                                                                                    rel_l1(x, k - 1)))
    # the sweep's measurement of the solved stage agrees with numcodecs'
    for r in solved:
        check(abs(float(r["l1_rel"]) - rel_l1(x, k)) <= 1e-6 * budget + 1e-9,
              "%s: L1 %s in the CSV, numcodecs %g" % (var, r["l1_rel"], rel_l1(x, k)))
    # the winner keeps K bits, and beats every kept grid member
    check(keepbits({"filter": json.dumps([c for c in best["codecs"] if "bitround" in c["name"]])}) == k,
          "%s %g: the winner %s is not the solved member" % (var, budget, best["name"]))
    grid = [float(r["ratio"]) for r in rows if r["keep"] == "true" and r["solved"] in ("", "nan")]
    check(not grid or best["ratio"] >= max(grid), "%s: winner %g below a grid member %g" % (var, best["ratio"],
                                                                                          max(grid or [0])))
    check(best["l1_rel"] <= budget and best["l1_rel"] >= budget / 2 ** 1.5,
          "%s %g: the winner uses %g of the budget" % (var, budget, best["l1_rel"] / budget))
    # adaptive: the same winner
    ba, ra, _ = sweep(path, var, budget, where + "_ad", ["--search", "adaptive"])
    check(ba["codecs"] == best["codecs"], "%s %g: adaptive %s, exhaustive %s" % (var, budget, ba["name"], best["name"]))
    # the seed (issue 31 item 5): the same keepbits without it, and the trials of both
    _, ru, _ = sweep(path, var, budget, where + "_unseeded", ["--search", "exhaustive"],
                     {"DCTK_TEST_SOLVE_UNSEEDED": "1"})
    unseeded = [r for r in ru if r["solved"] not in ("", "nan")]
    check(unseeded and int(float(unseeded[0]["solved"])) == k,
          "%s %g: unseeded solve gives %s, seeded %d" % (var, budget, unseeded and unseeded[0]["solved"], k))
    trials.append((int(solved[0]["trials"]), int(unseeded[0]["trials"]) if unseeded else 0))
    print("%s %g: keepbits %d: %d trials seeded, %d unseeded" % (var, budget, k, *trials[-1]))

check(sum(t[0] for t in trials) < sum(t[1] for t in trials), "the seeded solves took %s trials, the unseeded %s" %
      ([t[0] for t in trials], [t[1] for t in trials]))

# the winner written with --combo and read back: within the budget of netCDF4's values
path, var, budget = CASES[0]
where = os.path.join(tmp, "%s_%s_%g" % (os.path.basename(path), var, budget))
out = os.path.join(tmp, "store")
r = subprocess.run([DCTK, "compress_with_optimal", os.path.join(NCARG, path), out, var, "--combo",
                    os.path.join(where, "best_%s.json" % var)], capture_output=True, text=True, timeout=300)
check(r.returncode == 0, "compress_with_optimal --combo: %d %s" % (r.returncode, r.stderr[-400:]))
# the index form cannot rebuild a solved member: one clear line that names --combo
with open(os.path.join(where, "best_%s.json" % var)) as f:
    best = json.load(f)
r2 = subprocess.run([DCTK, "compress_with_optimal", os.path.join(NCARG, path), os.path.join(tmp, "store2"), var,
                     str(best["comp_idx"]), str(best["filt_idx"]), str(best["ser_idx"])] + SPACE[:6] +
                    ["--override-existing-l1-error", str(budget)], capture_output=True, text=True, timeout=300)
check(r2.returncode != 0 and "solved" in r2.stderr and "--combo" in r2.stderr,
      "index form of a solved member without the sweep's folder: %d %s" % (r2.returncode, r2.stderr[-400:]))
# with the sweep's folder, the index form takes the solved winner's pipeline from its best file
out3 = os.path.join(tmp, "store3")
os.makedirs(out3)
for name in os.listdir(where):
    if name.startswith(("best_", "results_", "config_space_", "sweep_state_")):
        with open(os.path.join(where, name), "rb") as src, open(os.path.join(out3, name), "wb") as dst:
            dst.write(src.read())
r3 = subprocess.run([DCTK, "compress_with_optimal", os.path.join(NCARG, path), out3, var,
                     str(best["comp_idx"]), str(best["filt_idx"]), str(best["ser_idx"])] + SPACE[:6] +
                    ["--override-existing-l1-error", str(budget), "--eval-data-size-limit", "50MB"],
                    capture_output=True, text=True, timeout=300)
check(r3.returncode == 0, "index form of a solved winner: %d %s" % (r3.returncode, r3.stderr[-400:]))
metas = [os.path.join(root, "zarr.json") for root, _d, files in os.walk(out3) if "zarr.json" in files]
inner = [json.load(open(m))["codecs"][0]["configuration"]["codecs"] for m in metas
         if json.load(open(m)).get("node_type") == "array" and json.load(open(m)).get("codecs", [{}])[0].get("name") ==
         "sharding_indexed"]
check(best["codecs"] in inner, "index form wrote %s, not the winner %s" % (inner, best["codecs"]))
if r.returncode == 0:
    import zarr_shards  # numcodecs' own decode of every shard chunk

    stores = [os.path.join(out, d) for d in os.listdir(out) if d.endswith(".zarr")]
    y, stored = zarr_shards.read_store(stores[0], var)
    x = ncarg_field(path, var).astype(np.float64)
    y = np.asarray(y, dtype=np.float64).reshape(x.shape)
    check(stored > 0 and np.abs(y - x).sum() / np.abs(x).sum() <= budget, "store read back exceeds the budget")

# --resume at a new budget: grid rows reused, the solved member solved again for the new budget
_, rows1, err = sweep(path, var, 1e-2, where, ["--search", "exhaustive", "--resume"])
solved = [r for r in rows1 if r["solved"] not in ("", "nan")]
x = values(path, var)
k = int(float(solved[-1]["solved"])) if solved else -1
check(solved and rel_l1(x, k) <= 1e-2 < rel_l1(x, k - 1), "resume at 1e-2: solved %s" % k)
check("reused" in err, "resume: no rows reused: %s" % err[-400:])
finish("solve")
