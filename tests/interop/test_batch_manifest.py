"""batch_manifest.json accumulates across compress runs into one store (issue 33 item 4, issue 32 item 5).

Three runs into one folder, each with another field of rectilinear_grid_3D.nc and another threshold,
then a rerun that finds a field in the store and a run whose gate fails: the manifest keeps one record
per field, the latest run's replacing that field's, each with its run's time and flags, in our schema
("fields") and in the Python tool's ("results" with its status names "ok", "error",
"skipped-existing", and "any_error"). The errors the manifest records are checked against the store
decoded by numcodecs (tests/interop/zarr_shards.py) and the input read by netCDF4.
"""
import json
import os
import subprocess
import sys
import tempfile

import netCDF4
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import check, finish  # noqa: E402

sys.argv[1:] = [os.environ.get("DCTK_CODEC_TOOL", "")]  # zarr_shards reads its tool's path at import
import zarr_shards  # noqa: E402

DCTK = os.environ["DCTK"]
NCARG = os.environ.get("DCTK_NCARG", "/usr/share/ncarg/data")
RECT = os.path.join(NCARG, "nug", "rectilinear_grid_3D.nc")
ICE = os.path.join(NCARG, "cdf", "ice5g_21k_1deg.nc")
SPACE = ["--compressor-class", "zstd", "--filter-class", "none,bitround", "--serializer-class", "none",
         "--threads-per-rank", "2", "--eval-data-size-limit", "300KB"]
tmp = tempfile.mkdtemp(prefix="dctk_manifest_")
out = os.path.join(tmp, "out")
store = os.path.join(out, "rectilinear_grid_3D.zarr")


def run(*args):
    r = subprocess.run([DCTK] + [str(a) for a in args], capture_output=True, text=True)
    return r.returncode, r.stdout, r.stderr


def manifest():
    with open(os.path.join(out, "batch_manifest.json")) as f:
        return json.load(f)


def l1_rel(var):
    with netCDF4.Dataset(RECT) as d:
        v = d[var]
        v.set_auto_maskandscale(False)
        x = np.asarray(v[...], dtype=np.float64)
    y, _ = zarr_shards.read_store(store, var)
    return float(np.abs(y.astype(np.float64) - x).sum() / np.abs(x).sum())


runs = [("t", "1e-3"), ("rhumidity", "1e-2"), ("var3", "5e-3")]
for var, thr in runs:
    rc, so, se = run("compress", RECT, out, "--vars", var, "--l1-threshold", thr, *SPACE)
    check(rc == 0, "compress --vars %s --l1-threshold %s: exit %d: %s" % (var, thr, rc, se))
m = manifest()
check(set(m.get("fields", {})) == {"t", "rhumidity", "var3"},
      "after three runs the manifest holds %s, not every field" % sorted(m.get("fields", {})))
check(set(m.get("results", {})) == {"t", "rhumidity", "var3"}, "results: %s" % sorted(m.get("results", {})))
check(m.get("any_error") is False and m.get("command") == "compress" and m.get("merged_store") == store
      and m.get("dataset_file") == RECT, "top of the manifest: %s" % {k: m.get(k) for k in
                                                                      ("any_error", "command", "merged_store")})
times = []
for var, thr in runs:
    f, r = m["fields"].get(var, {}), m["results"].get(var, {})
    check(f.get("status") == "written" and r.get("status") == "ok", "%s: %s / %s" % (var, f.get("status"),
                                                                                   r.get("status")))
    # each record carries its own run's flags: the threshold given in that run
    check(thr in f.get("flags", []) and var in f.get("flags", []) and r.get("flags") == f.get("flags"),
          "%s: the record's flags are not its run's: %s" % (var, f.get("flags")))
    check(f.get("threshold") == float(thr), "%s: threshold %s, asked %s" % (var, f.get("threshold"), thr))
    got = r.get("errors", {}).get("Relative_Error_L1")
    want = l1_rel(var)
    check(got is not None and abs(got - want) <= 1e-6 * max(want, 1e-30) + 1e-12 and want <= float(thr),
          "%s: the manifest's L1 %s is not the store's %s (threshold %s)" % (var, got, want, thr))
    check(r.get("ratio") == f.get("achieved_ratio") and isinstance(r.get("seconds"), float)
          and isinstance(r.get("comp_idx"), int), "%s: Python record %s" % (var, r))
    times.append(f.get("time"))
check(times == sorted(times) and all(times), "the records' times are not their runs' in order: %s" % times)
check([r["written"] for r in m.get("runs", [])] == [["t"], ["rhumidity"], ["var3"]],
      "runs: %s" % m.get("runs"))

# a rerun over a field already in the store, under the thresholds it was written with (a --spec giving each
# its own; without them the table's would apply, and the fields be written again): the field keeps the record
# of the run that wrote it
spec = os.path.join(tmp, "spec.json")
with open(spec, "w") as f:
    json.dump({var: {"l1-threshold": float(thr)} for var, thr in runs}, f)
rc, so, se = run("compress", RECT, out, "--vars", "t,var3", "--spec", spec, *SPACE)
m2 = manifest()
check(rc == 0 and "t: already in" in so, "rerun: exit %d %s %s" % (rc, so, se))
check(m2["fields"]["t"] == m["fields"]["t"] and m2["results"]["t"] == m["results"]["t"],
      "a skipped field lost the record of the run that wrote it: %s" % m2["fields"]["t"])
check(sorted(m2["runs"][-1]["skipped"]) == ["t", "var3"] and len(m2["runs"]) == 4, "the rerun: %s" % m2["runs"][-1])

# a run whose gate fails replaces that field's record only; any_error says so
rc, so, se = run("compress", RECT, out, "--vars", "rhumidity", "--no-skip-existing", "--pipeline",
                 json.dumps({"filter": {"name": "numcodecs.bitround", "configuration": {"keepbits": 2}},
                             "compressor": {"name": "zstd", "configuration": {"level": 1}}, "serializer": None}),
                 "--l1-threshold", "1e-9", *SPACE)
m3 = manifest()
check(rc == 1, "a failed gate must exit 1, got %d" % rc)
check(m3["results"]["rhumidity"]["status"] == "error" and m3["results"]["rhumidity"].get("error")
      and m3["fields"]["rhumidity"]["status"] == "failed" and m3.get("any_error") is True,
      "the failed run's record: %s, any_error %s" % (m3["results"]["rhumidity"], m3.get("any_error")))
check(m3["fields"]["t"] == m["fields"]["t"] and m3["fields"]["var3"] == m["fields"]["var3"],
      "the failed run changed other fields' records")
# and a later success clears it
rc, so, se = run("compress", RECT, out, "--vars", "rhumidity", "--no-skip-existing", "--l1-threshold", "1e-2",
                 *SPACE)
m4 = manifest()
check(rc == 0 and m4["results"]["rhumidity"]["status"] == "ok" and m4.get("any_error") is False,
      "the rewrite after the failure: exit %d, %s" % (rc, m4["results"]["rhumidity"]))

# the whole file at last: every field recorded, the store merged
rc, so, se = run("compress", RECT, out, *SPACE)
m5 = manifest()
check(rc == 0 and set(m5["fields"]) == {"t", "rhumidity", "var3"} and m5["written"] == 3 and m5["failed"] == 0,
      "whole-file run: exit %d, %s" % (rc, {k: m5[k] for k in ("written", "skipped", "failed")}))

# another dataset into the same folder: a manifest of its own store
rc, so, se = run("compress", ICE, out, "--vars", "Topo", "--compressor-class", "zstd", "--filter-class", "none",
                 "--serializer-class", "none")
m6 = manifest()
check(rc == 0 and set(m6["fields"]) == {"Topo"} and m6["merged_store"].endswith("ice5g_21k_1deg.zarr"),
      "another dataset's run kept the records of rectilinear_grid_3D's store: %s" % sorted(m6["fields"]))
finish("batch_manifest")
