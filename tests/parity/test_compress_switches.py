"""The Python dc_toolkit's compress switches (issue 32, item 3), ported from its tests/cli/test_compress.py
to our command line and checked for their effect, on NCAR's Tstorm.cdf (t) and uv300.nc (U, V):

- --cr-drift-tol / --cr-drift-gate: with a prediction the field cannot reach (the sweep's ratio x 20 in
  best_t.json, as its test edits manifest_t.json) compress warns "[cr-drift] WARNING" and stores the
  field; with --cr-drift-gate the stored field is rewritten ("written without --cr-drift-gate") and
  fails ("cr-drift gate FAILED", exit 1), the earlier copy kept; --cr-drift-tol 9 silences the warning;
- --no-verify-gate: a manifest whose L1 budget the pipeline cannot meet is stored all the same, with
  a "[verify-gate] FAIL (advisory" line, value for value numcodecs' round trip; the next run without it
  rewrites the field ("written with --no-verify-gate") and refuses it (exit 1), the copy kept;
- --no-continue-on-error: U fails, V is not written ("an earlier field failed"; batch_manifest.json:
  U failed, V skipped); without it both are tried (both failed);
- --consolidate (default) after --vars: the root's consolidated metadata lists t and zarrita reads t
  through it, value for value; --no-consolidate on a whole-file run drops it (the line says so), and
  merge_compressed_fields makes it again;
- --cr-drift-tol -1: exit 2.

    test_compress_switches.py   (DCTK: the dc_toolkit program; DCTK_NCARG, DCTK_SRC)
"""
import hashlib
import json
import os
import subprocess
import sys
import tempfile

import netCDF4
import numcodecs
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "interop"))
import zarr_shards  # noqa: E402
from checks import NCARG, check, finish, run  # noqa: E402

SRC = os.environ.get("DCTK_SRC") or os.path.dirname(os.path.dirname(HERE))
TSTORM = os.path.join(NCARG, "cdf", "Tstorm.cdf")
UV = os.path.join(NCARG, "cdf", "uv300.nc")


def values(path, name):
    with netCDF4.Dataset(path) as nc:
        v = nc.variables[name]
        v.set_auto_maskandscale(True)
        return np.ma.filled(v[:].astype(np.float32), np.nan)


def bitround_zlib(x, keepbits):
    """numcodecs' own round trip of the pipeline the manifests below name."""
    y = np.asarray(numcodecs.BitRound(keepbits=keepbits).encode(x.copy())).reshape(x.shape)
    z = numcodecs.Zlib(level=5)
    return np.frombuffer(z.decode(z.encode(y.tobytes())), dtype=x.dtype).reshape(x.shape)


def manifest(path, var, l1):
    """A manifest_{var}.json in the Python tool's schema, with an L1 budget of l1."""
    pipeline = {"compressor": {"name": "numcodecs.zlib", "configuration": {"level": 5}},
                "filter": {"name": "numcodecs.bitround", "configuration": {"keepbits": 8}}, "serializer": None}
    doc = {"command": "evaluate_combos", "var": var, "args": {"inner_chunk_mib": 16},
           "effective_thresholds": {"l1": l1, "l2": None, "linf": None, "bias": None, "q99": None},
           "phys_min": None, "phys_max": None, "phys_slack": 0.0, "q99_abs": None,
           "best": {"name": "Zlib | BitRound(8) | -", "pipeline": pipeline, "ratio": 5.0, "l1_rel": 1e-3, "eucd": 1.0}}
    with open(path, "w") as f:
        json.dump(doc, f)
    return path


def provenance(store, name):
    with open(os.path.join(store, name, "zarr.json")) as f:
        return json.load(f)["attributes"]["dc_toolkit"]


def fields(d):
    with open(os.path.join(d, "batch_manifest.json")) as f:
        return json.load(f)["fields"]


tmp = tempfile.mkdtemp(prefix="dctk_switches_")
t = values(TSTORM, "t")

# --- --cr-drift-tol / --cr-drift-gate ----------------------------------------------------------------
d = os.path.join(tmp, "drift")
store = os.path.join(d, "Tstorm.zarr")
SWEEP = ("--l1-threshold", "0.005", "--compressor-class", "zstd", "--filter-class", "bitround", "--serializer-class",
         "none")  # our compress reuses a sweep under its settings
run("evaluate_combos", TSTORM, "--where-to-write", d, *SWEEP)
bpath = os.path.join(d, "best_t.json")
best = json.load(open(bpath))
for entry in [best, best.get("overall_winner")] + list((best.get("by_portability") or {}).values()):
    if entry and "ratio" in entry:  # a level none of whose combos was kept is null
        entry["ratio"] *= 20  # a prediction the field cannot reach, whichever entry the write takes
json.dump(best, open(bpath, "w"))
out = run("compress", TSTORM, d, *SWEEP).stdout
check("[cr-drift] WARNING" in out and "wrote " in out, f"no drift warning, or not stored: {out}")
first = provenance(store, "t")
check(first.get("ratio_drift_pct", 0) < -90 and first["write"].get("cr_drift_gate") is False,
      f"the stored record of the drift: {first.get('ratio_drift_pct')} {first.get('write')}")
r = run("compress", TSTORM, d, *SWEEP, "--cr-drift-gate", code=1)
check("written without --cr-drift-gate" in r.stdout and "rewritten" in r.stdout,
      f"the field stored short of the prediction is not rewritten under the gate: {r.stdout}")
check("cr-drift gate FAILED" in r.stderr, f"the gate's failure is not said: {r.stderr}")
check("trying the next best" not in r.stdout, "a ratio failure tried the next best combo")
check(provenance(store, "t") == first, "the failed rewrite replaced the stored copy")
check(fields(d)["t"]["status"] == "failed", f"batch_manifest.json: {fields(d)['t']}")
r = run("compress", TSTORM, d, *SWEEP, "--no-skip-existing", "--cr-drift-tol", "9")
check("[cr-drift]" not in r.stdout and "wrote " in r.stdout, f"--cr-drift-tol 9 still warns: {r.stdout}")
run("compress", TSTORM, d, "--cr-drift-tol", "-1", code=2)
run("compress", TSTORM, d, "--cr-drift-tol", "11", code=2)

# --- --no-verify-gate ----------------------------------------------------------------------------------
d = os.path.join(tmp, "advisory")
tight = manifest(os.path.join(tmp, "tight_t.json"), "t", 1e-7)
r = run("compress", TSTORM, d, "--vars", "t", "--pipeline", tight, "--no-verify-gate")
check("[verify-gate] FAIL (advisory" in r.stdout, f"no advisory line: {r.stdout}")
want = bitround_zlib(t, 8)
got, n = zarr_shards.read_store(os.path.join(d, "Tstorm.zarr"), "t")
check(n > 0 and np.array_equal(got, want, equal_nan=True), "--no-verify-gate: the store is not numcodecs' round trip")
kept = provenance(os.path.join(d, "Tstorm.zarr"), "t")
check(kept["write"].get("verify_gate") is False, f"the record does not say --no-verify-gate: {kept['write']}")
r = run("compress", TSTORM, d, "--vars", "t", "--pipeline", tight, code=1)
check("written with --no-verify-gate" in r.stdout, f"not rewritten once the gate is back: {r.stdout}")
check(provenance(os.path.join(d, "Tstorm.zarr"), "t") == kept, "the refused rewrite replaced the advisory copy")

# --- --no-continue-on-error ----------------------------------------------------------------------------
tight_uv = manifest(os.path.join(tmp, "tight_U.json"), "U", 1e-7)
for flag, want_v in (("--no-continue-on-error", "skipped"), ("--continue-on-error", "failed")):
    d = os.path.join(tmp, "stop" + flag)
    r = run("compress", UV, d, "--vars", "U,V", "--pipeline", tight_uv, flag, code=1)
    f = fields(d)
    check(f.get("U", {}).get("status") == "failed" and f.get("V", {}).get("status") == want_v,
          f"{flag}: U {f.get('U', {}).get('status')}, V {f.get('V', {}).get('status')} (V expected {want_v})")
    check((flag == "--no-continue-on-error") == ("V: not written: an earlier field failed" in r.stdout),
          f"{flag}: the stop line: {r.stdout}")

# --- --consolidate / --no-consolidate --------------------------------------------------------------------
d = os.path.join(tmp, "cons")
loose = manifest(os.path.join(tmp, "loose_t.json"), "t", 0.01)
run("compress", TSTORM, d, "--vars", "t", "--pipeline", loose)
root = json.load(open(os.path.join(d, "Tstorm.zarr", "zarr.json")))
check("t" in root.get("consolidated_metadata", {}).get("metadata", {}), "a --vars run left the store unconsolidated")
z = subprocess.run(["node", os.path.join(SRC, "tests", "js", "store_digest.mjs"), os.path.join(d, "Tstorm.zarr")],
                   capture_output=True, text=True)
digest = json.loads(z.stdout).get("arrays", {}).get("t", {}).get("sha256") if z.returncode == 0 else None
check(digest == hashlib.sha256(np.ascontiguousarray(want).tobytes()).hexdigest(),
      f"zarrita through the consolidated metadata does not read numcodecs' round trip: {z.stdout} {z.stderr}")

d = os.path.join(tmp, "nocons")
zstd = '{"compressor": {"name": "zstd", "configuration": {"level": 3}}, "filter": null, "serializer": null}'
run("compress", UV, d, "--pipeline", zstd)
rootp = os.path.join(d, "uv300.zarr", "zarr.json")
check("consolidated_metadata" in json.load(open(rootp)), "a whole-file run was not merged")
r = run("compress", UV, d, "--pipeline", zstd, "--no-skip-existing", "--no-consolidate")
check("consolidated_metadata" not in json.load(open(rootp)) and "consolidated metadata dropped" in r.stdout,
      f"--no-consolidate kept the consolidated metadata: {r.stdout}")
run("merge_compressed_fields", UV, d)
check("consolidated_metadata" in json.load(open(rootp)), "merge_compressed_fields did not consolidate")

finish("compress_switches")
