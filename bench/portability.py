#!/usr/bin/python3
"""What each reader level costs: bench/portability.py [BUILD_DIR] [SAMPLE_LIMIT]

One sweep (the default space, adaptive search) per real field and bound;
best_VAR.json's `by_portability` then holds the best kept combo at or below
each reader level (core, numcodecs, plugin, dctk), all measured on the same
full sample, so the table prints, side by side from one run, the ratio a
store readable by every Zarr v3 reader, by zarr-python + numcodecs (the
default of `compress`), by numcodecs + plugin packages, and by dc_toolkit
only would get, and what the default gives up against the best of all.
"""
import json
import os
import statistics
import subprocess
import sys
import tempfile

build = sys.argv[1] if len(sys.argv) > 1 else "build"
limit = sys.argv[2] if len(sys.argv) > 2 else "100KB"
exe = os.path.join(build, "dc_toolkit")
D = "/usr/share/ncarg/data/"
FIELDS = [("nug/rectilinear_grid_3D.nc", "t"), ("cdf/Tstorm.cdf", "t"), ("cdf/nc4uvt.nc", "U"),
          ("cdf/pop.nc", "t"), ("nug/orog_mod3_rectilinear_grid_2D.nc", "orog"),
          ("nug/tas_rotated_grid_EUR11.nc", "tas"), ("nug/HSURF_regional_model_0.11deg.nc", "HSURF"),
          ("cdf/hgt.nc", "HGT")]
BOUNDS = ["1e-3", "1e-5"]
LEVELS = ["core", "numcodecs", "plugin", "dctk"]


def sweep(path, var, bound, out):
    r = subprocess.run([exe, "evaluate_combos", D + path, "--where-to-write", out, "--field-to-compress", var,
                        "--l1-threshold", bound, "--eval-data-size-limit", limit, "--threads-per-rank", "2"],
                       capture_output=True, text=True)
    if r.returncode:
        sys.exit("%s %s: evaluate_combos failed:\n%s" % (path, var, r.stderr[-2000:]))
    with open(os.path.join(out, "best_%s.json" % var)) as f:
        return json.load(f)


def short(name, width=44):
    return name if len(name) <= width else name[:width - 3] + "..."


print("reader levels: best kept ratio at or below each level, sample limit %s, adaptive search, 2 threads" % limit)
print("%-36s %5s | %7s %9s %7s %7s | %6s | %s" % ("field", "L1", *LEVELS, "loss %", "winner (level of the best of all)"))
losses = []
for path, var in FIELDS:
    for bound in BOUNDS:
        best = sweep(path, var, bound, tempfile.mkdtemp(prefix="dctk_bench_port_"))
        by = best["by_portability"]
        ratio = {lv: (by[lv]["ratio"] if by.get(lv) else float("nan")) for lv in LEVELS}
        loss = 100 * (1 - ratio["numcodecs"] / ratio["dctk"]) if ratio["dctk"] == ratio["dctk"] else float("nan")
        losses.append(loss)
        win = by["dctk"]
        print("%-36s %5s | %7.2f %9.2f %7.2f %7.2f | %6.1f | %s (%s)" % (
            "%s %s" % (os.path.basename(path), var), bound, *(ratio[lv] for lv in LEVELS), loss,
            short(best.get("name", "")), win.get("portability", "?") if win else "-"))
ok = [x for x in losses if x == x]
print("default (numcodecs) against the best of all levels: median loss %.1f %%, worst %.1f %%, "
      "no loss in %d of %d cases" % (statistics.median(ok), max(ok), sum(1 for x in ok if x < 1e-9), len(ok)))
