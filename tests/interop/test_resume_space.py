#!/usr/bin/python3
"""--resume after the codec space changed (issue 35 item 2): a sweep saved
with --compressor-class zstd resumes with --compressor-class lz4,zstd, where
lz4's members come first and every zstd combo of the saved sweep has another
comp_idx. The rows are taken by their pipelines: every saved row is reused
(none measured again), only lz4's combos run, and the resumed CSV and best
file are, row for row and index for index, those of a clean sweep of the new
space. A resume that drops a class (back to zstd alone) keeps the zstd rows
and says how many rows of pipelines it no longer holds it left out; and
analyze_clustering marks the zstd sweep's winner in the lz4,zstd table, where
its pipeline has another comp_idx."""
import json
import os
import re
import subprocess
import sys
import tempfile

DCTK = os.environ["DCTK"]
FILE = os.path.join(os.environ.get("DCTK_NCARG", "/usr/share/ncarg/data"), "cdf", "meccatemp.cdf")
SPACE = ["--search", "exhaustive", "--field-to-compress", "t", "--filter-class", "none,bitround",
         "--serializer-class", "none,zfpy", "--eval-data-size-limit", "60KB", "--override-existing-l1-error", "1e-3",
         "--threads-per-rank", "2"]
METRICS = ("ratio", "l1_rel", "l2_rel", "linf_rel", "euclidean", "max_abs_err", "keep", "error", "compressor",
           "filter", "serializer", "name")
BEST = ("comp_idx", "filt_idx", "ser_idx", "ratio", "l1_rel", "codecs")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import check, finish, rows_by_combo  # noqa: E402


def sweep(where, classes, *extra):
    r = subprocess.run([DCTK, "evaluate_combos", FILE, "--where-to-write", where, *SPACE, "--compressor-class",
                        classes, *extra], capture_output=True, text=True)
    check(r.returncode == 0, "%s %s %s: exit %d: %s" % (where, classes, extra, r.returncode, r.stderr[-800:]))
    return r


rows = rows_by_combo


def reused(stderr):
    m = re.search(r"reused (\d+) recorded rows of (\d+)", stderr)
    return (int(m.group(1)), int(m.group(2))) if m else (0, 0)


tmp = tempfile.mkdtemp(prefix="dctk_resume_space_")
saved, clean = os.path.join(tmp, "saved"), os.path.join(tmp, "clean")
sweep(saved, "zstd")
before = rows(saved)
by_pipeline = {(r["compressor"], r["filter"], r["serializer"]): r for r in before.values()}

r = sweep(saved, "lz4,zstd", "--resume")
check("the codec space changed since" in r.stderr, "no line says the space changed: " + r.stderr[-600:])
sweep(clean, "lz4,zstd")
a, b = rows(clean), rows(saved)
n_reused, n_all = reused(r.stderr)
check(n_reused == len(before) and n_all == len(a), "reused %d of %d; saved %d rows, the new space %d combos"
      % (n_reused, n_all, len(before), len(a)))
moved = sum(1 for k, x in b.items() if (x["compressor"], x["filter"], x["serializer"]) in by_pipeline and
            by_pipeline[(x["compressor"], x["filter"], x["serializer"])]["comp_idx"] != k[0])
check(moved == len(before) - sum(1 for k in before if k[0] == "-1"),
      "%d of the %d saved rows with a compressor changed comp_idx" % (moved, len(before)))
check(a.keys() == b.keys(), "resumed combos differ from the clean sweep's: %d vs %d" % (len(b), len(a)))
for k in a:
    for m in METRICS:
        check(a[k][m] == b.get(k, {}).get(m), "%s %s: clean %s, resumed %s" % (k, m, a[k][m], b.get(k, {}).get(m)))
    x = by_pipeline.get((b[k]["compressor"], b[k]["filter"], b[k]["serializer"]))
    if x:  # a saved row: taken as it was measured
        check(x["encode_mbps"] == b[k]["encode_mbps"], "%s was measured again" % (k,))
ba, bb = (json.load(open(os.path.join(d, "best_t.json"))) for d in (clean, saved))
check({k: ba[k] for k in BEST} == {k: bb[k] for k in BEST}, "best files differ: %s vs %s"
      % ({k: ba[k] for k in BEST}, {k: bb[k] for k in BEST}))

# back to zstd alone: its rows are kept, lz4's are left out with one line counting them
n_lz4 = sum(1 for x in b.values() if "lz4" in x["compressor"])
r = sweep(saved, "zstd", "--resume")
check(("%d recorded rows name a pipeline this codec space does not hold" % n_lz4) in r.stderr,
      "the lz4 rows (%d) are not counted as left out: %s" % (n_lz4, r.stderr))
check(reused(r.stderr) == (len(before), len(before)), "back to zstd: %s" % (reused(r.stderr),))
after = rows(saved)
check(after.keys() == before.keys() and all(after[k][m] == before[k][m] for k in before for m in METRICS),
      "back to zstd: the rows are not those of the first sweep")
# analyze_clustering of the lz4,zstd table with the zstd sweep's best file marks the winner by its pipeline, which
# that table holds under other indices
bz = json.load(open(os.path.join(saved, "best_t.json")))
win = after[(str(bz["comp_idx"]), str(bz["filt_idx"]), str(bz["ser_idx"]))]
there = [k for k, x in a.items() if (x["compressor"], x["filter"], x["serializer"]) ==
         (win["compressor"], win["filter"], win["serializer"])]
check(len(there) == 1 and there[0][0] != str(bz["comp_idx"]), "the winner %s is at %s in the lz4,zstd table"
      % (win["name"], there))
r = subprocess.run([DCTK, "analyze_clustering", "--where-to-write", saved, "--var", "t", "--results",
                    os.path.join(clean, "results_t.parquet"), "--out", os.path.join(tmp, "an")],
                   capture_output=True, text=True)
check(r.returncode == 0 and ("best combo %s marked" % win["name"]) in r.stdout,
      "analyze_clustering: exit %d: %s %s" % (r.returncode, r.stdout[-400:], r.stderr[-400:]))
finish("resume after the space changed: %d saved rows reused in a space of %d combos" % (len(before), len(a)))
