#!/usr/bin/python3
"""Selection benchmark: bench/selection.py BUILD_DIR [SAMPLE_SIZE]

One full default sweep (every combo of the float32 space, 35,640 rows) of a
real field on a small sample, then, in the same run and on the same field:
  1. re-gating: `evaluate_combos --resume` with other thresholds and gates
     (L1 10x looser, L2 off, Pearson >= 0.9999, extremes and gradient gates
     on) re-decides keep and the best from the recorded rows; its wall time
     against the sweep's (target < 5 %);
  2. the cost of measuring: the time the sweep spent in the error metrics
     (the norms and every selection metric: bias, Pearson, PSNR, SSIM, error
     fraction, extremes, gradients), summed over its threads, against the
     sweep's wall time times its threads (target <= 10 %). This is an upper
     bound for the new metrics alone, since it includes the norms that were
     measured before them.
"""
import csv
import os
import re
import subprocess
import sys
import tempfile
import time

build = sys.argv[1] if len(sys.argv) > 1 else "build"
size = sys.argv[2] if len(sys.argv) > 2 else "20KB"
exe = os.path.join(build, "dc_toolkit")
FILE = "/usr/share/ncarg/data/nug/rectilinear_grid_3D.nc"
VAR = "t"
THREADS = 2


def run(args):
    t0 = time.perf_counter()
    r = subprocess.run([exe, *args], capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if r.returncode:
        sys.exit("failed: %s\n%s" % (" ".join(args), r.stderr[-2000:]))
    return wall, r.stderr


def timer(stderr, name):
    m = re.search(r"^%s\s+(\d+)\s+([\d.]+)\s+([\d.]+)$" % re.escape(name), stderr, re.M)
    return float(m.group(3)) if m else float("nan")


out = tempfile.mkdtemp(prefix="dctk_bench_select_")
base = ["evaluate_combos", FILE, "--where-to-write", out, "--field-to-compress", VAR, "--eval-data-size-limit", size,
        "--threads-per-rank", str(THREADS)]
sweep_wall, log = run(base + ["--l1-threshold", "1e-3"])
with open(os.path.join(out, "config_space_%s_rank0.csv" % VAR), newline="") as f:
    nrows = sum(1 for _ in csv.DictReader(f))
sweep_s, metric_s = timer(log, "sweep"), timer(log, "sweep: selection metrics")
regate_wall, relog = run(base + ["--l1-threshold", "1e-2", "--l2-threshold", "off", "--pearson-min", "0.9999",
                                 "--extremes-sensitive", "--gradient-gate", "--resume"])
reused = re.search(r"reused (\d+) recorded rows of (\d+).*?(\d+) combos left", relog)

print("selection benchmark: %s %s, sample %s, %d threads, %d rows" % (os.path.basename(FILE), VAR, size, THREADS, nrows))
print("  %-44s %10s" % ("", "seconds"))
print("  %-44s %10.2f" % ("full default sweep (process wall)", sweep_wall))
print("  %-44s %10.2f" % ("re-gating every row with --resume (wall)", regate_wall))
print("  %-44s %9.1f %%   (target < 5 %%)" % ("re-gating / sweep", 100 * regate_wall / sweep_wall))
print("  %-44s %s" % ("rows reused / left to evaluate", "%s of %s / %s" % reused.groups() if reused else "?"))
print("  %-44s %10.2f" % ("sweep engine wall ('sweep' timer)", sweep_s))
print("  %-44s %10.2f" % ("error metrics, summed over threads", metric_s))
print("  %-44s %9.2f %%   (target <= 10 %%)" % ("metrics / (sweep wall x threads)",
                                               100 * metric_s / (sweep_s * THREADS)))
