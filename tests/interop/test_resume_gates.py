#!/usr/bin/python3
"""--resume at another threshold gives what a fresh sweep at that threshold
gives (issue 37, finding 5), on meccatemp's t.

An adaptive sweep at a tight threshold (T1 = 1e-6) prunes most lossy stages
on parts of the sample: under T1 they fail. Resumed at a loose one (T2 =
1e-2) those pruned rows say nothing about T2, so they are measured again;
the resumed CSV then holds, row for row, the ratios, errors, keep flags and
errors of a fresh exhaustive sweep at T2 (--resume goes on exhaustively), and
the same best combo. The resumed winner is at least as good as a fresh
adaptive sweep's at T2 (whose finalists it measured too). A resume at T2
again (same gates) measures nothing: every row is reused."""
import json
import math
import os
import re
import subprocess
import sys
import tempfile

DCTK = os.environ["DCTK"]
FILE = os.path.join(os.environ.get("DCTK_NCARG", "/usr/share/ncarg/data"), "cdf", "meccatemp.cdf")
SPACE = ["--field-to-compress", "t", "--compressor-class", "zstd,lz4", "--filter-class", "none,bitround",
         "--serializer-class", "none,zfpy", "--eval-data-size-limit", "100KB", "--inner-chunk-mib", "0.02",
         "--threads-per-rank", "2"]
METRICS = ("ratio", "l1_rel", "l2_rel", "linf_rel", "euclidean", "max_abs_err")
SAME = ("compressor", "filter", "serializer", "keep", "error")
BEST = ("comp_idx", "filt_idx", "ser_idx", "ratio", "l1_rel", "codecs")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import check, finish, rows_by_combo  # noqa: E402


def sweep(where, threshold, *extra):
    r = subprocess.run([DCTK, "evaluate_combos", FILE, "--where-to-write", where, *SPACE,
                        "--override-existing-l1-error", threshold, *extra], capture_output=True, text=True)
    check(r.returncode == 0, "%s at %s %s: exit %d: %s" % (where, threshold, extra, r.returncode, r.stderr[-800:]))
    return r


rows = rows_by_combo


def best(where):
    with open(os.path.join(where, "best_t.json")) as f:
        return json.load(f)


def same_number(a, b):
    x, y = float(a), float(b)
    return x == y or (math.isnan(x) and math.isnan(y))


tmp = tempfile.mkdtemp(prefix="dctk_resume_gates_")
resumed, fresh, fresh_adaptive = (os.path.join(tmp, d) for d in ("resumed", "fresh", "fresh_adaptive"))

sweep(resumed, "1e-6")
first = rows(resumed)
t1 = best(resumed)["ratio"]
pruned = [k for k, r in first.items() if r["error"].startswith("pruned:")]
# the members solved for 1e-6 are solved again for 1e-2 (new rows, whatever became of them): the grid's pruned rows
# are the ones to measure again
grid_pruned = [k for k in pruned if first[k]["solved"] in ("nan", "")]
check(len(pruned) > len(first) // 4, "the adaptive search at 1e-6 pruned %d of %d rows: too few to tell"
      % (len(pruned), len(first)))

r = sweep(resumed, "1e-2", "--resume")
m = re.search(r"(\d+) rows were pruned by a search under other gates", r.stderr)
check(m is not None and int(m.group(1)) == len(grid_pruned), "the resume does not say it measures the %d pruned "
      "rows of the grid again: %s" % (len(grid_pruned), r.stderr[-800:]))
sweep(fresh, "1e-2", "--search", "exhaustive")
sweep(fresh_adaptive, "1e-2")

a, b = rows(fresh), rows(resumed)
check(a.keys() == b.keys(), "combos differ: %s" % sorted(a.keys() ^ b.keys())[:10])
differ = 0
for k in a.keys() & b.keys():
    for c in SAME:
        if a[k][c] != b[k][c]:
            differ += 1
            check(False, "%s %s: fresh at 1e-2 %r, resumed %r" % (k, c, a[k][c], b[k][c]))
    for c in METRICS:
        if not same_number(a[k][c], b[k][c]):
            differ += 1
            check(False, "%s %s: fresh at 1e-2 %s, resumed %s" % (k, c, a[k][c], b[k][c]))
check(not any(r["error"].startswith("pruned:") for r in b.values()), "the resumed CSV still holds pruned rows")
bf, br, ba = best(fresh), best(resumed), best(fresh_adaptive)
check({k: bf.get(k) for k in BEST} == {k: br.get(k) for k in BEST},
      "best differs: fresh %s, resumed %s" % ({k: bf.get(k) for k in BEST}, {k: br.get(k) for k in BEST}))
check(br["ratio"] >= ba["ratio"], "the resumed winner's ratio %g is below a fresh adaptive sweep's %g" %
      (br["ratio"], ba["ratio"]))
check(br["ratio"] > t1, "the winner at 1e-2 (ratio %g) is no better than at 1e-6 (%g)" % (br["ratio"], t1))

# the same gates again: every row reused, nothing measured
r = sweep(resumed, "1e-2", "--resume")
m = re.search(r"reused (\d+) recorded rows of (\d+).*?(\d+) combos left", r.stderr)
check(m is not None and m.group(1) == m.group(2) and m.group(3) == "0",
      "a resume under the same gates measured again: %s" % r.stderr[-600:])
check("pruned by a search under other gates" not in r.stderr, "pruned rows measured again under the same gates")
finish("resume at another threshold: %d pruned at 1e-6, %d rows as a fresh sweep at 1e-2, winner ratio %.3f "
       "(fresh adaptive %.3f)" % (len(pruned), len(a), br["ratio"], ba["ratio"]))
