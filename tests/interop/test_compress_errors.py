#!/usr/bin/python3
"""compress_with_optimal refuses bad requests with one clear line, a non-zero
exit, and no array that claims to be complete:
wrong indices, a codec space whose fingerprint differs from the sweep's, a
missing field, an unwritable output folder, and a --combo file of another
field. A good run afterwards writes the field, and zarrita-free checks (the
store's own zarr.json) show exactly one array of that name."""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

DCTK = os.environ["DCTK"]
FILE = os.path.join(os.environ.get("DCTK_NCARG", "/usr/share/ncarg/data"), "cdf", "meccatemp.cdf")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import check, finish  # noqa: E402


def run(*args):
    return subprocess.run([DCTK, *args], capture_output=True, text=True)


def refused(what, r, needle):
    lines = [l for l in r.stderr.splitlines() if l.strip()]
    check(r.returncode != 0, "%s: exit %d, expected non-zero" % (what, r.returncode))
    check(len(lines) == 1, "%s: %d stderr lines, expected one: %r" % (what, len(lines), r.stderr))
    check(needle in r.stderr, "%s: %r not in %r" % (what, needle, r.stderr))


def no_complete_array(what, out, var="t"):
    store = os.path.join(out, "meccatemp.zarr")
    check(not os.path.exists(os.path.join(store, var, "zarr.json")),
          "%s: an array %s/%s claims to be complete" % (what, store, var))
    if os.path.isdir(store):
        check(not any(n.startswith(".") and (".stage." in n or n.endswith(".partial")) for n in os.listdir(store)),
              "%s: a partial array was left" % what)


tmp = tempfile.mkdtemp(prefix="dctk_compress_errors_")
space = ["--compressor-class", "zstd", "--serializer-class", "none", "--eval-data-size-limit", "60KB"]
out = os.path.join(tmp, "out")
r = run("evaluate_combos", FILE, "--where-to-write", out, "--field-to-compress", "t",
        "--override-existing-l1-error", "1e-3", *space)
check(r.returncode == 0, "sweep failed: " + r.stderr)

# indices outside the space
r = run("compress_with_optimal", FILE, out, "t", "500", "0", "-1", *space)
refused("wrong indices", r, "no combo (500, 0, -1)")
no_complete_array("wrong indices", out)
r = run("compress_with_optimal", FILE, out, "t", "x", "0", "-1", *space)
refused("index that is not a number", r, "not an index")

# the same indices against another space (another compressor family: index 0 names zlib 1,
# not zstd 0; a smaller sample no longer does it, the fitted filters take the full field's range)
r = run("compress_with_optimal", FILE, out, "t", "0", "0", "-1", "--compressor-class", "zlib",
        "--serializer-class", "none", "--eval-data-size-limit", "60KB")
refused("fingerprint", r, "fingerprint")
no_complete_array("fingerprint", out)

# a missing field names the ones there are
r = run("compress_with_optimal", FILE, out, "t2m", "0", "0", "-1", *space)
refused("missing field", r, "t2m")
check("t" in r.stderr.split("t2m", 1)[-1], "missing field: the available fields are not named: " + r.stderr)

# an output folder that cannot be made (a regular file stands in the way)
blocker = os.path.join(tmp, "file")
open(blocker, "w").close()
shutil.copy(os.path.join(out, "best_t.json"), tmp)
r = run("compress_with_optimal", FILE, os.path.join(blocker, "sub"), "t", "--combo",
        os.path.join(tmp, "best_t.json"), *space)
refused("unwritable output", r, "file/sub")
check(not os.path.exists(os.path.join(blocker, "sub")), "unwritable output: something was created")

# a combo file of another field
best = json.load(open(os.path.join(out, "best_t.json")))
best["var"] = "u"
other = os.path.join(tmp, "best_u.json")
json.dump(best, open(other, "w"))
r = run("compress_with_optimal", FILE, out, "t", "--combo", other, *space)
refused("combo of another field", r, "not of 't'")
no_complete_array("combo of another field", out)

# and the good run writes exactly that array, verified
r = run("compress_with_optimal", FILE, out, "t", str(best["comp_idx"]), str(best["filt_idx"]),
        str(best["ser_idx"]), *space)
check(r.returncode == 0, "good run failed: " + r.stderr)
check("verified" in r.stdout and re.search(r"ratio predicted [\d.]+, achieved [\d.]+, drift [-+][\d.]+ %", r.stdout),
      "good run did not report: " + r.stdout)
meta = json.load(open(os.path.join(out, "meccatemp.zarr", "t", "zarr.json")))
check(meta["node_type"] == "array" and meta["dimension_names"] == ["time", "lat", "lon"], "array metadata: %r" % meta)
check(meta["attributes"]["dc_toolkit"]["pipeline"] == best["codecs"], "provenance pipeline differs")
# the drift printed is the one recorded: achieved = stored bytes in / out, drift against best_t.json's ratio
prov = meta["attributes"]["dc_toolkit"]
m = re.search(r"ratio predicted ([\d.]+), achieved ([\d.]+), drift ([-+][\d.]+) %", r.stdout)
check(abs(prov["achieved_ratio"] - float(m[2])) < 1e-3 and abs(prov["ratio_drift_pct"] - float(m[3])) < 0.06,
      "provenance drift %r differs from the printed line %r" % (prov, m[0]))
check(abs(prov["ratio_drift_pct"] - 100 * (prov["achieved_ratio"] - best["ratio"]) / best["ratio"]) < 1e-6,
      "recorded drift is not (achieved - predicted) / predicted: %r" % prov)

shutil.rmtree(tmp)
finish("compress_with_optimal errors")
