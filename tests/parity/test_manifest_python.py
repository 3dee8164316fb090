"""manifest_{var}.json, the Python dc_toolkit's record of a sweep (issue 32, item 2), both ways:

- written by our evaluate_combos, it is read by a reader written from the Python tool's schema (what
  its compress_candidates, chunk_geometry and verify_against_manifest take from it): the keys and
  their types, num_combos = num_passed + num_failed_total + num_filtered, the thresholds as the
  flags asked; best.pipeline, rebuilt with Debian's numcodecs as {compressor, filter, serializer},
  encodes and decodes the field (netCDF4's values) within effective_thresholds, with the l1_rel
  the manifest records, and its ratio is best_t.json's;
- `compress --pipeline manifest_t.json` writes the field with that pipeline: the store, decoded
  by numcodecs from its shards, equals numcodecs' own encode/decode of the input value for value;
- a manifest built here in the Python tool's format (numcodecs names, null serializer) drives
  `compress --pipeline` (and `@file`) likewise; with effective_thresholds.l1 tighter than its
  pipeline can meet, the write is refused (exit 1, nothing stored): the manifest's thresholds gate
  it; a manifest whose sweep kept nothing ("best": null) exits 2 with one line;
- `compress DATASET DIR` takes a Python-written DIR/manifest_t.json as the sweep's result, as its
  compress does: no sweep, the store numcodecs' round trip of its pipeline; asked for another L1
  budget, it says the result no longer holds and sweeps.

Data: t of Tstorm.cdf (NCAR's example data), swept in the zstd x bitround x plain-bytes space, so
that numcodecs 0.11 decodes every winner.

    test_manifest_python.py      (DCTK: the dc_toolkit program; DCTK_NCARG: NCAR's data folder)
"""
import json
import math
import os
import sys
import tempfile

import netCDF4
import numcodecs
import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "interop"))
import zarr_shards  # noqa: E402  (our shards, read with numcodecs alone)
from checks import NCARG, check, failures, finish, run  # noqa: E402

SRC = os.path.join(NCARG, "cdf", "Tstorm.cdf")

# --- a reader of the Python tool's schema ---------------------------------------------------------

GATE_KEYS = ("l1", "l2", "linf", "bias", "q99")


def codec(c):
    """One codec object of a Python pipeline as numcodecs: numcodecs.X by its id, zstd (zarr's core name)."""
    name, conf = c["name"], dict(c.get("configuration") or {})
    if name == "zstd":
        return numcodecs.Zstd(level=conf.get("level", 0))
    assert name.startswith("numcodecs."), name
    conf["id"] = name[len("numcodecs."):]
    return numcodecs.get_codec(conf)


def slot(p, key):
    v = p.get(key)
    return [] if v is None else [codec(c) for c in (v if isinstance(v, list) else [v])]


def round_trip(pipeline, x):
    """(decoded, encoded bytes) of x through {compressor, filter, serializer}; a null serializer is plain bytes."""
    assert pipeline.get("serializer") is None, "this reader knows the plain-bytes serializer only"
    filters, comps = slot(pipeline, "filter"), slot(pipeline, "compressor")
    a = x.copy()  # numcodecs 0.11 BitRound rounds its input in place
    for f in filters:
        a = np.asarray(f.encode(a)).reshape(x.shape)
    buf = np.ascontiguousarray(a).tobytes()
    for c in comps:
        buf = c.encode(buf)
    size = len(buf)
    for c in reversed(comps):
        buf = c.decode(buf)
    y = np.frombuffer(bytes(buf), dtype=a.dtype).reshape(x.shape)
    for f in reversed(filters):
        y = np.asarray(f.decode(y)).reshape(x.shape)
    return y.astype(x.dtype), size


def read_manifest(path):
    """What the Python tool's compress takes from a manifest: the candidate, the verify thresholds
    (null = off), the bounds and the chunk geometry (args, else its defaults)."""
    m = json.load(open(path))
    best = m["best"]
    thr = m.get("effective_thresholds") or {}
    args = m.get("args") or {}
    return {
        "manifest": m,
        "pipeline": best["pipeline"] if best else None,
        "ratio": best.get("ratio") if best else None,
        "thresholds": {k: (float(thr[k]) if thr.get(k) is not None else math.inf) for k in GATE_KEYS},
        "bounds": (m.get("phys_min"), m.get("phys_max"), m.get("phys_slack") or 0.0),
        "geometry": {k: args.get(k, d) for k, d in (("inner_chunk_mib", 16), ("max_inner_chunk_mib", 256),
                                                     ("spatial_split", True))},
    }


def norms(x, y):
    f = np.isfinite(x)
    e = np.abs(y[f].astype(np.float64) - x[f].astype(np.float64))
    a = np.abs(x[f].astype(np.float64))
    return {"l1": e.sum() / a.sum(), "l2": math.sqrt((e ** 2).sum() / (a ** 2).sum()), "linf": e.max() / a.max(),
            "bias": abs((y[f].astype(np.float64) - x[f]).mean()) / a.mean()}


with netCDF4.Dataset(SRC) as nc:
    v = nc.variables["t"]
    v.set_auto_maskandscale(True)
    t = np.ma.filled(v[:].astype(np.float32), np.nan)

tmp = tempfile.mkdtemp(prefix="dctk_manifest_")
sweep = os.path.join(tmp, "sweep")
run("evaluate_combos", SRC, "--where-to-write", sweep, "--field-to-compress", "t", "--l1-threshold", "0.005",
    "--l2-threshold", "0.02", "--no-bias-gate", "--compressor-class", "zstd", "--filter-class", "bitround",
    "--serializer-class", "none")
mpath = os.path.join(sweep, "manifest_t.json")
check(os.path.isfile(mpath), "evaluate_combos wrote no manifest_t.json beside best_t.json")
if failures:
    finish("manifest_python")

# --- ours, read as theirs -------------------------------------------------------------------------
r = read_manifest(mpath)
m = r["manifest"]
for key, kind in (("command", str), ("dataset_file", str), ("var", str), ("where_to_write", str), ("args", dict),
                  ("topology", dict), ("effective_thresholds", dict), ("num_combos", int), ("num_passed", int),
                  ("num_failed_total", int), ("num_filtered", int), ("var_sweep_seconds", float), ("env", dict),
                  ("outputs", dict), ("best", dict), ("phys_slack", float)):
    check(isinstance(m.get(key), kind), f"manifest key {key}: {type(m.get(key)).__name__}, expected {kind.__name__}")
check(m["command"] == "evaluate_combos" and m["var"] == "t" and m["dataset_file"] == SRC,
      f"command/var/dataset_file: {m['command']} {m['var']} {m['dataset_file']}")
check(m["num_combos"] == m["num_passed"] + m["num_failed_total"] + m["num_filtered"] and m["num_passed"] >= 1,
      f"counts: {m['num_combos']} != {m['num_passed']} + {m['num_failed_total']} + {m['num_filtered']}")
check(isinstance(r["geometry"]["inner_chunk_mib"], int) and r["geometry"]["inner_chunk_mib"] == 16,
      f"args.inner_chunk_mib {r['geometry']['inner_chunk_mib']!r}: the Python tool's compress reuses it as an int")
check(all(v is not None for v in r["geometry"].values()),
      f"a geometry key present but null (its compress would take None): {r['geometry']}")
thr = r["thresholds"]
check(thr["l1"] == 0.005 and thr["l2"] == 0.02 and thr["linf"] == 0.05 and thr["bias"] == math.inf
      and thr["q99"] == math.inf, f"effective_thresholds as asked (l2 given, linf 10 x L1, bias off, no q99): {thr}")
a = m["args"]
check(a["l1_threshold"] == 0.005 and a["bias_gate"] is False and a["compressor_class"] == "zstd"
      and a["serializer_class"] == "none" and a["with_lossy"] is True, f"args: {a}")
check(all(v is None for v in m["env"].values()), f"env: {m['env']} (the Python packages' versions: none here)")
check(set(r["pipeline"]) == {"compressor", "filter", "serializer"}, f"best.pipeline keys: {set(r['pipeline'])}")
best_file = json.load(open(os.path.join(sweep, "best_t.json")))
check(r["ratio"] == best_file["ratio"], f"best.ratio {r['ratio']} != best_t.json's {best_file['ratio']}")
check(m["best"]["l1_rel"] == best_file["l1_rel"], "best.l1_rel is not best_t.json's")

y, nbytes = round_trip(r["pipeline"], t)
n = norms(t, y)
check(all(n[k] <= thr[k] for k in ("l1", "l2", "linf", "bias")),
      f"numcodecs' round trip of best.pipeline: {n}, over the manifest's thresholds {thr}")
check(math.isclose(n["l1"], m["best"]["l1_rel"], rel_tol=1e-6),
      f"relative L1 of numcodecs' round trip {n['l1']:.9e} != the manifest's l1_rel {m['best']['l1_rel']:.9e} "
      "(the sample is the whole field)")
print(f"our manifest: best {m['best']['name']}, L1 {n['l1']:.3e}, ratio {r['ratio']:.3f} (numcodecs: "
      f"{t.nbytes / nbytes:.3f} in one chunk)")

# --- compress --pipeline OUR manifest: the store is numcodecs' round trip, value for value ------------
out = os.path.join(tmp, "ours")
res = run("compress", SRC, out, "--vars", "t", "--pipeline", mpath)
check("verification gates on the threshold" in res.stdout, f"the manifest's thresholds do not gate: {res.stdout}")
got, stored = zarr_shards.read_store(os.path.join(out, "Tstorm.zarr"), "t")
check(stored > 0 and np.array_equal(got, y, equal_nan=True),
      "the store written from our manifest differs from numcodecs' round trip of its best.pipeline")


# --- a manifest in the Python tool's format drives the write ------------------------------------------
def theirs(path, l1, best=True):
    pipeline = {"compressor": {"name": "numcodecs.zlib", "configuration": {"level": 5}},
                "filter": {"name": "numcodecs.bitround", "configuration": {"keepbits": 9}}, "serializer": None}
    doc = {"command": "evaluate_combos", "dataset_file": SRC, "var": "t", "where_to_write": tmp,
           "args": {"inner_chunk_mib": 16, "max_inner_chunk_mib": 256, "spatial_split": True, "l1_threshold": l1},
           "effective_thresholds": {"l1": l1, "l2": 2 * l1, "linf": 10 * l1, "bias": 0.5 * l1, "q99": None},
           "gradient_threshold": None, "phys_min": None, "phys_max": None, "phys_slack": 0.0, "q99_abs": None,
           "num_combos": 1, "num_passed": 1, "num_failed_total": 0, "num_filtered": 0, "var_sweep_seconds": 1.0,
           "env": {"zarr": "3.1.0", "numpy": "2.2.0"}, "outputs": {},
           "best": {"name": "Zlib(level=5) | BitRound(keepbits=9) | -", "pipeline": pipeline, "ratio": 4.0,
                    "l1_rel": 1e-4, "eucd": 1.0} if best else None}
    with open(path, "w") as f:
        json.dump(doc, f, indent=2)
    return pipeline


pipeline = theirs(os.path.join(tmp, "manifest_t.json"), 0.01)
want, _ = round_trip(pipeline, t)
for i, arg in enumerate((os.path.join(tmp, "manifest_t.json"), "@" + os.path.join(tmp, "manifest_t.json"))):
    out = os.path.join(tmp, "theirs%d" % i)
    run("compress", SRC, out, "--vars", "t", "--pipeline", arg)
    got, stored = zarr_shards.read_store(os.path.join(out, "Tstorm.zarr"), "t")
    check(stored > 0 and np.array_equal(got, want, equal_nan=True),
          f"--pipeline {arg}: the store differs from numcodecs' Zlib/BitRound(9) round trip of the input")

# its thresholds gate: an L1 budget the pipeline cannot meet refuses the write
tight = os.path.join(tmp, "tight", "manifest_t.json")
os.makedirs(os.path.dirname(tight))
theirs(tight, 1e-6)
out = os.path.join(tmp, "tight_out")
res = run("compress", SRC, out, "--vars", "t", "--pipeline", tight, code=1)
check("l1" in res.stderr and "1e-06" in res.stderr, f"the refusal does not name the manifest's L1 bound: {res.stderr}")
check(not os.path.exists(os.path.join(out, "Tstorm.zarr", "t", "zarr.json")), "a refused write left an array")

# a sweep that kept nothing: one line, exit 2
empty = os.path.join(tmp, "empty", "manifest_t.json")
os.makedirs(os.path.dirname(empty))
theirs(empty, 0.01, best=False)
res = run("compress_with_optimal", SRC, os.path.join(tmp, "empty_out"), "t", "--pipeline", empty, code=2)
check(len(res.stderr.strip().splitlines()) == 1 and "kept no combo" in res.stderr,
      f"a manifest with best null: {res.stderr!r}")

# --- compress DIR takes a Python-written manifest_t.json as the sweep's result: no sweep -----------------
d = os.path.join(tmp, "python_sweep")
os.makedirs(d)
theirs(os.path.join(d, "manifest_t.json"), 0.01)
res = run("compress", SRC, d)
check("using the Python tool's sweep result" in res.stdout, f"compress DIR did not take manifest_t.json: {res.stdout}")
check(not os.path.exists(os.path.join(d, "results_t.parquet")), "compress DIR swept t although manifest_t.json holds")
got, stored = zarr_shards.read_store(os.path.join(d, "Tstorm.zarr"), "t")
check(stored > 0 and np.array_equal(got, want, equal_nan=True),
      "compress DIR with a Python manifest: the store differs from numcodecs' round trip of its best.pipeline")
with open(os.path.join(d, "batch_manifest.json")) as f:
    rec = json.load(f)["fields"].get("t", {})
check(rec.get("status") == "written", f"batch_manifest.json's record of t: {rec}")
# another L1 budget than its sweep's: it no longer holds, and t is swept
res = run("compress", SRC, d, "--l1-threshold", "0.001", "--compressor-class", "zstd", "--filter-class", "bitround",
          "--serializer-class", "none", "--no-skip-existing")
check("no longer holds (swept with threshold 0.01, now 0.001): sweeping again" in res.stdout
      and os.path.exists(os.path.join(d, "results_t.parquet")), f"a changed budget did not sweep again: {res.stdout}")

finish("manifest_python")
