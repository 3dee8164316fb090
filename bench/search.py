#!/usr/bin/python3
"""Adaptive against exhaustive search: bench/search.py BUILD_DIR [--fields N] [--big SIZE]

For each real field below and each setting (relative L1 threshold 1e-3, 1e-5,
and lossless: --without-lossy with no threshold), the same evaluate_combos
run twice in this one run, --search adaptive and --search exhaustive, over the
whole default space (nothing narrowed), 2 threads. Per case it prints:
  - the winner of each (comp, filt, ser) and its ratio, adaptive over exhaustive;
  - the CPU seconds of each run (user + system of the child process: the time
    inside codecs plus the sweep's own, which is within a per cent of it);
  - whether every row adaptive keeps is kept by exhaustive too, with the same
    metrics (adaptive's kept rows are whole-sample measurements).
CPU time rather than wall time, because the machine is shared: wall time
measures the neighbours. Samples are small (LOSSY_LIMIT, LOSSLESS_LIMIT) so the
exhaustive runs stay affordable; the lossless space is 1/7 of the lossy one, so
its sample is larger. --big SIZE: one more adaptive run on the largest real
field (cdf/trinidad.nc data, 11.5 MB) with a sample of SIZE, wall and CPU.
--fields N: the first N fields only."""
import csv
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

args = sys.argv[1:]
nfields, big = 99, None
for flag in ("--fields", "--big"):
    if flag in args:
        i = args.index(flag)
        if flag == "--fields":
            nfields = int(args[i + 1])
        else:
            big = args[i + 1]
        del args[i:i + 2]
build = args[0] if args else "build"
exe = os.path.join(build, "dc_toolkit")
D = "/usr/share/ncarg/data/"
FIELDS = [("nug/rectilinear_grid_3D.nc", "t"), ("cdf/Tstorm.cdf", "t"), ("cdf/nc4uvt.nc", "U"),
          ("cdf/pop.nc", "t"), ("cdf/sstanom.robinsonproj.nc", "SST"), ("nug/orog_mod3_rectilinear_grid_2D.nc", "orog"),
          ("nug/tas_rotated_grid_EUR11.nc", "tas"), ("nug/HSURF_regional_model_0.11deg.nc", "HSURF"),
          ("cdf/sst30e_netcdf.nc", "sst"), ("cdf/hgt.nc", "HGT")][:nfields]
LOSSY_LIMIT, LOSSLESS_LIMIT = "50KB", "200KB"
# lossless: no threshold applies (a table with no rows), and lossless codecs only
NO_TABLE = os.path.join(tempfile.mkdtemp(prefix="dctk_bench_search_"), "none.csv")
with open(NO_TABLE, "w") as f:
    f.write("Short Name,Unit,Existing L1 error\n")
SETTINGS = [("1e-3", ["--override-existing-l1-error", "1e-3"], LOSSY_LIMIT),
            ("1e-5", ["--override-existing-l1-error", "1e-5"], LOSSY_LIMIT),
            ("lossless", ["--without-lossy", "--thresholds-table", NO_TABLE], LOSSLESS_LIMIT)]


def child_cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def run(path, var, extra, limit, mode):
    out = tempfile.mkdtemp(prefix="dctk_bench_search_")
    cmd = [exe, "evaluate_combos", path, "--where-to-write", out, "--field-to-compress", var,
           "--eval-data-size-limit", limit, "--threads-per-rank", "2", "--search", mode] + extra
    c0, t0 = child_cpu(), time.time()
    r = subprocess.run(cmd, capture_output=True, text=True)
    cpu, wall = child_cpu() - c0, time.time() - t0
    if r.returncode:
        sys.exit("bench: %s failed:\n%s" % (" ".join(cmd), r.stderr[-2000:]))
    with open(os.path.join(out, "best_%s.json" % var)) as f:
        best = json.load(f)
    with open(os.path.join(out, "config_space_%s_rank0.csv" % var)) as f:
        rows = {(r["comp_idx"], r["filt_idx"], r["ser_idx"]): r for r in csv.DictReader(f)}
    return best, rows, cpu, wall


def key(b):
    return (str(b["comp_idx"]), str(b["filt_idx"]), str(b["ser_idx"]))


def kept(r):
    return r["keep"].lower() in ("true", "1")


def same_metrics(a, e):
    return all(a[c] == e[c] for c in ("ratio", "l1_rel", "l2_rel", "linf_rel", "max_abs_err"))


def main():
    print("| field | setting | sample | exhaustive winner (ratio) | adaptive winner (ratio) | ratio a/e | same | "
          "measured whole | CPU e [s] | CPU a [s] | CPU a/e | adaptive keeps only e-kept, same metrics |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    ratios, fracs, same, safe = [], [], 0, True
    for path, var in FIELDS:
        for name, extra, limit in SETTINGS:
            ba, ra, ca, _ = run(D + path, var, extra, limit, "adaptive")
            be, re_, ce, _ = run(D + path, var, extra, limit, "exhaustive")
            q = ba["ratio"] / be["ratio"]
            ident = key(ba) == key(be) or ba["ratio"] == be["ratio"]
            ok = all(kept(re_[k]) and same_metrics(r, re_[k]) for k, r in ra.items() if kept(r))
            nmeasured = sum(1 for r in ra.values() if not r["error"].startswith(("pruned", "left out")))
            ratios.append(q)
            fracs.append(ca / ce)
            same += ident
            safe = safe and ok
            print("| %s %s | %s | %s | %s (%.4f) | %s (%.4f) | %.4f | %s | %d of %d | %.1f | %.2f | %.1f %% | %s |" % (
                os.path.basename(path), var, name, limit, ",".join(key(be)), be["ratio"], ",".join(key(ba)),
                ba["ratio"], q, "yes" if ident else "no", nmeasured, len(ra), ce, ca, 100 * ca / ce,
                "yes" if ok else "NO"), flush=True)
    n = len(ratios)
    print()
    print("cases %d; winner ratio adaptive/exhaustive: min %.4f; identical winner (same combo or same ratio) in "
          "%d of %d (%.0f %%)" % (n, min(ratios), same, n, 100 * same / n))
    print("adaptive CPU / exhaustive CPU: median %.1f %%, worst %.1f %%" % (100 * statistics.median(fracs),
                                                                          100 * max(fracs)))
    print("adaptive keeps only rows exhaustive keeps, with the same metrics: %s" % ("yes" if safe else "NO"))
    if big:
        b, rows, cpu, wall = run(D + "cdf/trinidad.nc", "data", ["--override-existing-l1-error", "1e-3"], big,
                                 "adaptive")
        print("big: cdf/trinidad.nc data, sample limit %s, adaptive, 2 threads, full default space (%d combos): "
              "wall %.1f s, CPU %.1f s; winner %s ratio %.4f" % (big, len(rows), wall, cpu, ",".join(key(b)),
                                                                b["ratio"]))


main()
