#!/usr/bin/python3
"""A sweep killed with SIGKILL midway and resumed with --resume ends with the
results of an uninterrupted sweep: the same combos, ratios, errors and keep
flags in results_VAR.parquet (read back through the CSV of a third, clean run
and the resumed run's own rows), and the same best_VAR.json. A second sweep of the field into the same folder
while the first runs is refused (they would append to one CSV)."""
import csv
import json
import os
import signal
import subprocess
import sys
import tempfile

DCTK = os.environ["DCTK"]
FILE = os.path.join(os.environ.get("DCTK_NCARG", "/usr/share/ncarg/data"), "cdf", "meccatemp.cdf")
ARGS = ["--search", "exhaustive", "--field-to-compress", "t", "--compressor-class", "zlib",
        "--eval-data-size-limit", "60KB", "--override-existing-l1-error", "1e-3", "--threads-per-rank", "1"]
METRICS = ("ratio", "l1_rel", "l2_rel", "linf_rel", "euclidean", "max_abs_err", "keep", "error")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import check, finish, start_held  # noqa: E402


def rows(out):
    """The row of each combo; a resumed CSV holds each exactly once."""
    with open(os.path.join(out, "config_space_t_rank0.csv"), newline="") as f:
        got = list(csv.DictReader(f))
    keyed = {(r["comp_idx"], r["filt_idx"], r["ser_idx"]): r for r in got}
    check(len(keyed) == len(got), "%s: %d rows for %d combos" % (out, len(got), len(keyed)))
    return keyed


tmp = tempfile.mkdtemp(prefix="dctk_resume_")
clean, killed = os.path.join(tmp, "clean"), os.path.join(tmp, "killed")
r = subprocess.run([DCTK, "evaluate_combos", FILE, "--where-to-write", clean, *ARGS], capture_output=True, text=True)
check(r.returncode == 0, "clean run failed: " + r.stderr)
total = len(rows(clean))

# killed midway: the program holds after half of the combos (DCTK_TEST_HOLD, a test hook), so the kill
# point does not depend on how fast this machine is
p, _ = start_held([DCTK, "evaluate_combos", FILE, "--where-to-write", killed, *ARGS], tmp, total // 2)
csv_path = os.path.join(killed, "config_space_t_rank0.csv")
p.send_signal(signal.SIGKILL)
p.wait()
partial = sum(1 for _ in open(csv_path)) - 1
check(partial == total // 2, "killed run wrote %d of %d rows: not where it held" % (partial, total))
check(not os.path.exists(os.path.join(killed, "best_t.json")), "a killed run left a best file")

r = subprocess.run([DCTK, "evaluate_combos", FILE, "--where-to-write", killed, *ARGS, "--resume"],
                   capture_output=True, text=True)
check(r.returncode == 0, "resume failed: " + r.stderr)
check("resuming" in r.stderr, "resume did not say how much was done: " + r.stderr[-500:])
a, b = rows(clean), rows(killed)
check(a.keys() == b.keys(), "resumed combos differ: %d vs %d" % (len(a), len(b)))
for k in a:
    if k in b:
        for m in METRICS:
            check(a[k][m] == b[k][m], "%s %s: clean %s, resumed %s" % (k, m, a[k][m], b[k][m]))
ba, bb = (json.load(open(os.path.join(d, "best_t.json"))) for d in (clean, killed))
check({k: ba[k] for k in ("comp_idx", "filt_idx", "ser_idx", "ratio", "l1_rel")} ==
      {k: bb[k] for k in ("comp_idx", "filt_idx", "ser_idx", "ratio", "l1_rel")}, "best combos differ")

# rows are taken by their pipelines: a row naming one this space does not hold (a codec it has no more) is
# left out with one line counting it, and its combo runs again; a changed sample instead starts the field over
# (test_sampling.py checks that line)
with open(csv_path) as f:
    lines = f.read().splitlines(True)
k = next(i for i, line in enumerate(lines) if i and "zlib" in line)
lines[k] = lines[k].replace("zlib", "zlob", 1)
with open(csv_path, "w") as f:
    f.writelines(lines)
r = subprocess.run([DCTK, "evaluate_combos", FILE, "--where-to-write", killed, *ARGS, "--resume"],
                   capture_output=True, text=True)
check(r.returncode == 0 and "1 recorded rows name a pipeline this codec space does not hold" in r.stderr and
      "reused %d recorded rows of %d" % (total - 1, total) in r.stderr, "a foreign row: " + r.stderr[-600:])
b = rows(killed)
check(a.keys() == b.keys() and all(a[k][m] == b[k][m] for k in a for m in METRICS),
      "the foreign row's combo did not run again as the clean run's")

# a row whose stage is not codec JSON is a damaged CSV: refused, naming the file and the row
with open(csv_path) as f:
    lines = f.read().splitlines(True)
head = next(csv.reader([lines[0]]))
cells = next(csv.reader([lines[3]]))
cells[head.index("compressor")] = "{not json"
lines[3] = ",".join('"%s"' % c.replace('"', '""') for c in cells) + "\n"
with open(csv_path, "w") as f:
    f.writelines(lines)
r = subprocess.run([DCTK, "evaluate_combos", FILE, "--where-to-write", killed, *ARGS, "--resume"],
                   capture_output=True, text=True)
check(r.returncode != 0 and csv_path in r.stderr and "row 3" in r.stderr and "compressor" in r.stderr,
      "a damaged row: exit %d: %s" % (r.returncode, r.stderr))

# two sweeps of one field into one folder at once (issue 37 finding 9): the second is refused with a line naming
# the first, and the first's CSV holds each combo once (both appended to it before)
both = os.path.join(tmp, "both")
p, log = start_held([DCTK, "evaluate_combos", FILE, "--where-to-write", both, *ARGS], tmp, 2)
r = subprocess.run([DCTK, "evaluate_combos", FILE, "--where-to-write", both, *ARGS], capture_output=True, text=True)
check(r.returncode != 0 and "another sweep of 't' is writing into this folder" in r.stderr,
      "a second sweep at once: exit %d: %s" % (r.returncode, r.stderr[-400:]))
os.remove(os.path.join(tmp, "hold"))  # the first goes on
p.communicate()
check(p.returncode == 0, "the first sweep failed: " + open(log).read()[-400:])
c = rows(both)
check(len(c) == total and c.keys() == a.keys(), "the first sweep's CSV holds %d rows for %d combos" % (len(c), total))
check(not os.path.exists(os.path.join(both, ".sweep_t.lock")), "the lock file is left behind")
finish("resume: killed after %d of %d rows" % (partial, total))
