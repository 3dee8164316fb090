#!/usr/bin/python3
"""The write workflow of issue 21, on real libncarg-data fields, read back by
zarrita (tests/js/store_digest.mjs) and compared with netCDF4's values:

- evaluate_combos for the two fields of ice5g_21k_1deg.nc, then `compress` on
  the same DIR: no sweep runs (the log names the results it used), the store is
  written and merged; a second `compress` skips both fields;
  `--no-skip-existing --vars Topo` rewrites one; so does another --eval-data-size-limit that
  takes the same sample (the best file's plan and digest decide), reusing the result without a
  sweep; a result of another sample is swept again;
- `--pipeline` in each of the three forms (the Python tool's
  {"compressor", "filter", "serializer"} inline, our codec list in a file, a
  best_VAR.json) writes a field without a sweep, also in compress_with_optimal;
  a pipeline that fails its gate exits 1 and leaves the store without that
  field; invalid pairings are refused with the reason; batch_manifest.json
  says what happened each time;
- orog_mod1_rectilinear_grid_2D.nc: its CF bounds (lat_bnds, lon_bnds) are not
  swept in a whole-file run, yet in the store bit for bit; naming one sweeps it.
"""
import hashlib
import json
import os
import re
import subprocess
import sys
import tempfile

import netCDF4
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import store_common as sc  # noqa: E402
from checks import check, finish  # noqa: E402

DCTK = os.environ["DCTK"]
NCARG = os.environ.get("DCTK_NCARG", "/usr/share/ncarg/data")
ICE = os.path.join(NCARG, "cdf", "ice5g_21k_1deg.nc")
OROG = os.path.join(NCARG, "nug", "orog_mod1_rectilinear_grid_2D.nc")
# a small lossless space keeps the sweeps quick
SPACE = ["--compressor-class", "zstd", "--filter-class", "none", "--serializer-class", "none",
         "--threads-per-rank", "2"]
SWEPT = " combos on a sample "  # the line every sweep prints per field
tmp = tempfile.mkdtemp(prefix="dctk_workflow_")


def run(*args):
    r = subprocess.run([DCTK] + [str(a) for a in args], capture_output=True, text=True)
    return r.returncode, r.stdout, r.stderr


def manifest(d):
    with open(os.path.join(d, "batch_manifest.json")) as f:
        return json.load(f)["fields"]


def values(path, var):
    with netCDF4.Dataset(path) as d:
        v = d[var]
        v.set_auto_maskandscale(False)
        a = np.ascontiguousarray(v[...])
    return hashlib.sha256(a.astype(a.dtype.newbyteorder("<")).tobytes()).hexdigest()


def store_has(store, name):
    return os.path.exists(os.path.join(store, name, "zarr.json"))


def exact_in_store(store, names, src, what):
    got = sc.read_store(store)
    for n in names:
        a = got.get("arrays", {}).get(n, {})
        check(a.get("sha256") == values(src, n), "%s: %s not read back bit for bit by zarrita: %s" % (what, n, a))


# --- reuse of the sweep results, skip, rewrite --------------------------------------------
out = os.path.join(tmp, "ice")
for var in ("Topo", "Icemask"):
    rc, so, se = run("evaluate_combos", ICE, "--where-to-write", out, "--field-to-compress", var, *SPACE)
    check(rc == 0, "evaluate_combos %s: %s" % (var, se))
rc, so, se = run("compress", ICE, out, *SPACE)
store = os.path.join(out, "ice5g_21k_1deg.zarr")
check(rc == 0, "compress after the sweeps: exit %d: %s" % (rc, se))
check(SWEPT not in so, "compress swept although both fields had results:\n" + so)
for var in ("Topo", "Icemask"):
    check("%s: using the sweep result %s/best_%s.json" % (var, out, var) in so,
          "the log does not say which result %s used:\n%s" % (var, so))
with open(os.path.join(store, "zarr.json")) as f:
    check("consolidated_metadata" in f.read(), "the store was not merged (no consolidated metadata)")
exact_in_store(store, ["Topo", "Icemask"], ICE, "reused sweep results (lossless space)")
m = manifest(out)
for var in ("Topo", "Icemask"):
    f = m.get(var, {})
    check(f.get("status") == "written" and f.get("source", "").endswith("best_%s.json" % var),
          "manifest of %s after the write: %s" % (var, f))
    check(isinstance(f.get("achieved_ratio"), float) and isinstance(f.get("predicted_ratio"), float)
          and f.get("verification") and f["verification"]["max_abs_err"] == 0 and f.get("pipeline")
          and f.get("pipeline_name") and f.get("wall_s", -1) >= 0, "manifest of %s lacks figures: %s" % (var, f))
mtime = os.stat(os.path.join(store, "Topo", "zarr.json")).st_mtime_ns

rc, so, se = run("compress", ICE, out, *SPACE)
check(rc == 0 and SWEPT not in so, "second compress: exit %d, %s %s" % (rc, so, se))
for var in ("Topo", "Icemask"):
    check("%s: already in" % var in so, "second compress did not skip %s:\n%s" % (var, so))
    # the field keeps the record of the run that wrote it; the run says it skipped it
    check(manifest(out).get(var) == m.get(var), "manifest: %s lost its record: %s" % (var, manifest(out).get(var)))
with open(os.path.join(out, "batch_manifest.json")) as f:
    check(sorted(json.load(f)["runs"][-1]["skipped"]) == ["Icemask", "Topo"], "the second run's record")

rc, so, se = run("compress", ICE, out, "--no-skip-existing", "--vars", "Topo", *SPACE)
m = manifest(out)
check(rc == 0 and "Topo: wrote " in so and "Icemask" not in so, "--no-skip-existing --vars Topo: %s %s" % (so, se))
check(set(m) == {"Topo", "Icemask"} and m["Topo"]["status"] == "written" and "--no-skip-existing" in m["Topo"]["flags"],
      "manifest after the rewrite: %s" % m)
check(os.stat(os.path.join(store, "Topo", "zarr.json")).st_mtime_ns != mtime, "Topo was not rewritten")

# another --eval-data-size-limit that takes the same sample (Topo, 253 KiB, whole under both): the sweep
# result holds (its plan and digest decide, not the flag's text), reused with a line saying so, no sweep
rc, so, se = run("compress", ICE, out, "--no-skip-existing", "--vars", "Topo", "--eval-data-size-limit", "1MB",
                 *SPACE)
check(rc == 0 and SWEPT not in so and "Topo: wrote " in so and
      re.search(r"^Topo: using the sweep result %s/best_Topo.json \(.*; swept with --eval-data-size-limit 5GB, now "
                r"1MB: the same sample \(.*whole.*, digest fnv1a64:[0-9a-f]{16}\)\): no sweep$" % re.escape(out), so,
                re.M), "a limit giving the same sample swept again: %s %s" % (so, se))

# a limit under the smallest sample is no other sample (a 2-D field is sampled whole): still reused
rc, so, se = run("compress", ICE, out, "--no-skip-existing", "--vars", "Topo", "--eval-data-size-limit", "100KB",
                 *SPACE)
check(rc == 0 and SWEPT not in so and "now 100KB: the same sample" in so, "100KB: %s %s" % (so, se))

# a result swept on another sample no longer holds: swept again, with a line naming both samples (meccatemp t:
# 31 time steps in chunks of 3, whole under the default limit, a few of them under 30KB)
MECCA = os.path.join(NCARG, "cdf", "meccatemp.cdf")
mout = os.path.join(tmp, "mecca")
THIN = ["--inner-chunk-mib", "0.025"]  # chunks of 3 time steps, so that a sample may hold a few of them
rc, so, se = run("evaluate_combos", MECCA, "--where-to-write", mout, "--field-to-compress", "t", *THIN, *SPACE)
check(rc == 0, "evaluate_combos meccatemp t: %s" % se)
rc, so, se = run("compress", MECCA, mout, "--vars", "t", "--eval-data-size-limit", "30KB", *THIN, *SPACE)
said = re.search(r"^t: %s/best_t.json no longer holds \(swept with --eval-data-size-limit 5GB on (.*whole.*), now "
                 r"30KB takes another sample \((.*)\)\): sweeping again$" % re.escape(mout), so, re.M)
check(rc == 0 and said and said.group(1).startswith("whole field") and not said.group(2).startswith("whole") and SWEPT in so,
      "a result of another sample was reused: %s %s" % (so, se))

# --- --pipeline, three forms, no sweep ------------------------------------------------------
PY = json.dumps({"compressor": {"name": "numcodecs.zlib", "configuration": {"level": 1}}, "filter": None,
                 "serializer": None})
ours = os.path.join(tmp, "ours.json")
with open(ours, "w") as f:
    json.dump([{"name": "bytes", "configuration": {"endian": "little"}},
               {"name": "gzip", "configuration": {"level": 6}}], f)
forms = [("python-inline", PY, "zlib(level=1) | - | -"), ("codec-list-file", ours, "gzip(level=6) | - | -"),
         ("best-file", os.path.join(out, "best_Topo.json"), None)]
for label, p, name in forms:
    d = os.path.join(tmp, "pipe_" + label)
    rc, so, se = run("compress", ICE, d, "--vars", "Topo", "--pipeline", p, *SPACE)
    f = manifest(d).get("Topo", {}) if os.path.exists(os.path.join(d, "batch_manifest.json")) else {}
    check(rc == 0 and SWEPT not in so and not os.path.exists(os.path.join(d, "best_Topo.json")),
          "--pipeline %s: exit %d, swept or failed: %s %s" % (label, rc, so, se))
    check(f.get("status") == "written" and f.get("source") == "pipeline" and (name is None or f.get("pipeline_name")
                                                                            == name),
          "--pipeline %s: manifest %s" % (label, f))
    # the rest of the file (Topo is skipped), so that the store is merged and zarrita can list it
    rc, so, se = run("compress", ICE, d, "--pipeline", PY, *SPACE)
    # the same pipeline skips Topo; another one rewrites it, saying so
    said = "Topo: already in" if label == "python-inline" else "but written with another pipeline than this run's"
    check(rc == 0 and said in so, "--pipeline %s, then the rest: %s %s" % (label, so, se))
    exact_in_store(os.path.join(d, "ice5g_21k_1deg.zarr"), ["Topo", "Icemask"], ICE, "--pipeline " + label)
d = os.path.join(tmp, "cwo")
rc, so, se = run("compress_with_optimal", ICE, d, "Icemask", "--pipeline", PY)
check(rc == 0, "compress_with_optimal --pipeline: %s" % se)
check(store_has(os.path.join(d, "ice5g_21k_1deg.zarr"), "Icemask"), "compress_with_optimal --pipeline wrote nothing")

# a lossy pipeline: advisory without a threshold, a gate with one
LOSSY = json.dumps({"filter": {"name": "numcodecs.bitround", "configuration": {"keepbits": 2}},
                    "serializer": None, "compressor": {"name": "zstd", "configuration": {"level": 3}}})
d = os.path.join(tmp, "advisory")
rc, so, se = run("compress", ICE, d, "--vars", "Topo", "--pipeline", LOSSY, *SPACE)
check(rc == 0 and "advisory" in so and store_has(os.path.join(d, "ice5g_21k_1deg.zarr"), "Topo"),
      "lossy pipeline without threshold: exit %d %s %s" % (rc, so, se))
d = os.path.join(tmp, "gate")
rc, so, se = run("compress", ICE, d, "--vars", "Topo", "--pipeline", LOSSY, "--override-existing-l1-error",
                 "1e-9", *SPACE)
f = manifest(d).get("Topo", {}) if os.path.exists(os.path.join(d, "batch_manifest.json")) else {}
check(rc == 1, "a pipeline failing its gate must exit 1, got %d" % rc)
check(not store_has(os.path.join(d, "ice5g_21k_1deg.zarr"), "Topo"), "the gate failed but Topo is in the store")
check(f.get("status") == "failed" and f.get("verification") and f["verification"]["l1_rel"] > 1e-9,
      "manifest of the failed gate: %s" % f)
rc, so, se = run("compress_with_optimal", ICE, d, "Topo", "--pipeline", LOSSY, "--l1-threshold", "1e-9")
check(rc == 1 and not store_has(os.path.join(d, "ice5g_21k_1deg.zarr"), "Topo"),
      "compress_with_optimal --pipeline failing its gate: exit %d" % rc)

# invalid pairings, refused with the reason
bad = [(json.dumps({"serializer": {"name": "zstd", "configuration": {"level": 1}}}), "Topo",
        "cannot be the serializer"),
       (json.dumps({"filter": {"name": "numcodecs.bitround", "configuration": {"keepbits": 3}}}), "Icemask",
        "does not fit field 'Icemask'"),
       (json.dumps({"compressor": [{"name": "numcodecs.shuffle", "configuration": {"elementsize": 4}},
                                   {"name": "zstd", "configuration": {"level": 1}}]}), "Icemask",
        "elementsize 4"),
       ('{"compressor": ', "Topo", "--pipeline")]
for p, var, why in bad:
    rc, so, se = run("compress_with_optimal", ICE, os.path.join(tmp, "bad"), var, "--pipeline", p)
    check(rc != 0 and why in se and len(se.strip().splitlines()) == 1,
          "invalid pipeline %s for %s: exit %d, stderr %r" % (p, var, rc, se))
check(not store_has(os.path.join(tmp, "bad", "ice5g_21k_1deg.zarr"), "Icemask"), "an invalid pipeline wrote")

# --- CF bounds ------------------------------------------------------------------------------
d = os.path.join(tmp, "orog")
rc, so, se = run("compress", OROG, d, *SPACE)
check(rc == 0, "compress of a file with bounds: %s" % se)
for b in ("lat_bnds", "lon_bnds"):
    check("%s: CF bounds or grid geometry: not swept" % b in so, "no line for %s:\n%s" % (b, so))
    check(not os.path.exists(os.path.join(d, "best_%s.json" % b))
          and not os.path.exists(os.path.join(d, "config_space_%s_rank0.csv" % b)), "%s was swept" % b)
    check(manifest(d).get(b, {}).get("status") == "skipped", "manifest: %s" % manifest(d).get(b))
exact_in_store(os.path.join(d, "orog_mod1_rectilinear_grid_2D.zarr"), ["lat_bnds", "lon_bnds", "orog"], OROG,
               "bounds")
d = os.path.join(tmp, "orog_named")
rc, so, se = run("compress", OROG, d, "--vars", "lat_bnds", *SPACE)
check(rc == 0 and SWEPT in so and os.path.exists(os.path.join(d, "best_lat_bnds.json")),
      "naming lat_bnds must sweep it: %s %s" % (so, se))
rc, so, se = run("evaluate_combos", OROG, "--where-to-write", os.path.join(tmp, "orog_eval"), *SPACE)
check(rc == 0 and "lat_bnds: CF bounds or grid geometry: not swept" in so
      and not os.path.exists(os.path.join(tmp, "orog_eval", "best_lat_bnds.json")),
      "evaluate_combos of the whole file swept the bounds: %s %s" % (so, se))

# --- help ------------------------------------------------------------------------------------
rc, so, se = run("help")
for cmd in ("compress", "evaluate_combos", "compress_with_optimal", "merge_compressed_fields"):
    check(rc == 0 and ("usage: dc_toolkit %s " % cmd) in so, "`dc_toolkit help` lacks the help of %s" % cmd)
finish("compress_workflow")
