#!/usr/bin/python3
"""A sweep and a write under a memory limit end with the winner of an unlimited run (issue 24).

A reduced but real space (zstd after no serializer and after zfpy,
whose rate-32 streams are four times the chunk, on the field t of
rectilinear_grid_3D.nc) runs three times with 2 threads:
  - unlimited;
  - with --max-memory 60MB under an address-space limit (RLIMIT_AS, set
    here with Python's resource module), which the heaviest units
    (zstd 22 after zfpy: about 150 MiB each) do not fit: they must run one
    at a time ("runs alone" lines), never fail for memory;
  - with --max-memory 400MB, where two heavy units fit at once.
Every run prints one [memory] line naming the budget and one [memcheck]
line, whose estimate (what the scheduler admitted at once) is within 15 % of
the measured peak when heavy units run side by side; all three name the same
best combo and record the same ratio and errors for every combo (the budget
changes when units run, never what they compute). compress_with_optimal then
writes the winner under the same limits and verifies it.
"""
import csv
import os
import re
import resource
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import check, finish  # noqa: E402

DCTK = os.environ["DCTK"]
NCARG = os.environ.get("DCTK_NCARG", "/usr/share/ncarg/data")
FILE = os.path.join(NCARG, "nug", "rectilinear_grid_3D.nc")
TMP = tempfile.mkdtemp(prefix="dctk-membudget-")
AS_LIMIT = 3 << 30  # address space: libraries, thread stacks and lzma's dictionaries fit; runaway use does not


def run(cmd, limit):
    def pre():
        if limit:
            resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    r = subprocess.run(cmd, capture_output=True, text=True, preexec_fn=pre)
    return r.returncode, r.stdout, r.stderr


def sweep(name, extra, limit):
    out = os.path.join(TMP, name)
    cmd = [DCTK, "evaluate_combos", FILE, "--where-to-write", out, "--field-to-compress", "t",
           "--compressor-class", "zstd", "--filter-class", "none", "--serializer-class", "none,zfpy",
           "--search", "exhaustive", "--l1-threshold", "1e-3", "--threads-per-rank", "2"] + extra
    rc, so, se = run(cmd, limit)
    check(rc == 0, "%s: evaluate_combos failed: %s" % (name, se[-1500:]))
    lines = (so + se).splitlines()
    mem = [ln for ln in lines if "[memory] sample" in ln]
    check(len(mem) == 1, "%s: %d [memory] lines, expected 1" % (name, len(mem)))
    best = [ln for ln in lines if "best combo" in ln]
    rows = {}
    path = os.path.join(out, "config_space_t_rank0.csv")
    if os.path.exists(path):
        with open(path, newline="") as f:
            for r in csv.DictReader(f):
                rows[(r["comp_idx"], r["filt_idx"], r["ser_idx"])] = (r["ratio"], r["l1_rel"], r["linf_rel"], r["error"])
    chk = [re.search(r"\[memcheck\] peak estimate ([\d.]+) MiB .*measured peak RSS ([\d.]+) MiB", ln) for ln in lines]
    chk = [m for m in chk if m]
    check(len(chk) == 1, "%s: %d [memcheck] lines, expected 1" % (name, len(chk)))
    ratio = float(chk[0].group(2)) / float(chk[0].group(1)) if chk else 0
    print("%s: [memcheck] measured / estimated %.2f" % (name, ratio))
    return {"best": best[0].split(": ", 1)[1] if best else None, "rows": rows, "lines": lines, "mem": mem,
            "out": out, "memcheck": ratio}


def main():
    free = sweep("free", [], 0)
    tight = sweep("tight", ["--max-memory", "60MB"], AS_LIMIT)
    roomy = sweep("roomy", ["--max-memory", "400MB"], AS_LIMIT)
    check(free["best"] is not None, "no best combo in the unlimited run")
    # two heavy units at once: the scheduler's admitted peak is the process's within 15 %
    for r in (free, roomy):
        check(0.85 <= r["memcheck"] <= 1.15, "[memcheck] measured / estimated %.2f" % r["memcheck"])
    check(len(free["rows"]) >= 40, "rows: %d" % len(free["rows"]))
    for r in (tight, roomy):
        check(r["best"] == free["best"], "best under a budget: %s, unlimited: %s" % (r["best"], free["best"]))
        check(r["rows"] == free["rows"], "the rows under a budget differ from the unlimited run's")
        check(not any("out of memory" in e for (_, _, _, e) in r["rows"].values()), "a combo failed for memory")
    check(any("budget 57.2 MiB (--max-memory)" in ln for ln in tight["mem"]), "tight: %s" % tight["mem"])
    check(any("runs alone" in ln for ln in tight["lines"]), "tight: no unit ran alone under a 60 MB budget")
    check(not any("runs alone" in ln for ln in roomy["lines"]), "roomy: a unit ran alone under a 400 MB budget")
    # the write of the winner under the same budget, verified
    out = tight["out"]
    rc, so, se = run([DCTK, "compress_with_optimal", FILE, out, "t", "--combo", os.path.join(out, "best_t.json"),
                      "--threads-per-rank", "2", "--max-memory", "60MB"], AS_LIMIT)
    check(rc == 0, "compress_with_optimal under the budget failed: " + se[-800:])
    check("verified" in so, "the write was not verified: " + so[-500:])
    finish("memory_budget")


if __name__ == "__main__":
    main()
