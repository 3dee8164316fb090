#!/usr/bin/python3
"""Adaptive against exhaustive search: bench/search.py BUILD_DIR [--sample KB,KB] [--fields N] [--big] [--big-only]

For each real field below and each setting (--l1-threshold 1e-3, 1e-5, and
lossless: --without-lossy with a thresholds table that has no rows), the same
evaluate_combos run twice in this one run, --search adaptive and --search
exhaustive, over the whole default space (nothing narrowed), 2 threads. Per
case it prints:
  - the winner of each (comp, filt, ser) and its ratio, adaptive over exhaustive,
    and whether they are the same (the same combo, or one of equal ratio);
  - the CPU seconds inside codecs, summed over threads (the sweep's own timer,
    --verbose: each thread's CPU time, user and system, so neither the
    neighbours' load nor the sweep's own overhead counts) and their ratio: the
    issue's measure of cost, and the verdict;
  - the same in user space only: the kernel's part (page faults and the
    zeroing of fresh pages, for the large allocations of lzma's presets
    chiefly) varies with the machine's state by a factor of two and more;
  - the CPU seconds of each whole run (user + system of that child process,
    from wait4) and their ratio: this also counts what both searches pay
    whatever they measure (start-up, reading, writing 4,000 to 66,000 rows);
  - whether every row adaptive keeps is kept by exhaustive too, with the same
    metrics (adaptive's kept rows are whole-sample measurements).
Then the summary against issue 19's acceptance.

Samples: LOSSY_LIMIT and LOSSLESS_LIMIT (the lossless space is 1/9 of the lossy
one, so its sample is larger), with 24 KiB production chunks (CHUNK_MIB, as
`make demo`): these fields are small, and with the default 16 MiB chunk the
whole field is one chunk, so the sample would be the whole field whatever the
limit. The sampler keeps 3 time steps x 3 levels at least (the Python tool's
minimum), so some samples exceed the limit; each case prints its sample. The
fields are chosen so those minima stay under 100 KB: the exhaustive sweep of
the default space costs about a CPU-second per KB of sample, and the 30 cases
must fit in well under an hour on 2 shared cores. One case runs at a time
(each has 2 threads); adaptive runs three times, once before exhaustive and
twice after, and the median by codec CPU time is reported.

--big: after the cases, one adaptive run of the full default space on a 66 MiB
sample, 2 threads, wall and CPU, with the load average before and after. No
single field of libncarg-data reaches 64 MB (the largest, cdf/trinidad.nc data,
is 11.5 MB), so the field is built from real data: trinidad's 1201 x 2401
topography stacked 6 times along a new dimension (6 x 11.5 MB = 66 MiB), with
the default production chunk (one copy per chunk, so no codec sees a copy next
to another: each chunk is compressed on its own). --big-only: that run alone.
--sample KB,KB: the lossy and lossless sample limits (default 50,200). A
sweep in production samples many production chunks (the default limit is
5 GB), while 50 KB of 24 KiB chunks is two or three: the floor below which
the search's fixed part (every stage once on a 16 KB piece) dominates. A
larger sample shows the search in its production regime, at a cost: the
exhaustive sweeps grow in proportion.
--fields N: the first N fields only. --only 6,7,8: those fields (1-based) only,
so the cases can be split between runs at once; --summary OUT1 OUT2 ...: the
table and summary over the case lines those runs printed. --against OUT1 OUT2
...: the adaptive search alone, its figures against the exhaustive ones in the
case lines of those outputs (the exhaustive path does not run the search, so a
change to the search can be measured without sweeping everything again; the
kept-rows check then needs the exhaustive rows and says n/a).
--vs OLD_BUILD: the adaptive search of two binaries side by side, no exhaustive
sweep (issue 31: the solved members must not cost the adaptive search more
than twice its codec CPU): per case both binaries' adaptive runs alternate
(REPEAT each, the median by codec CPU), and the line gives each one's
winner and ratio and codec CPU seconds, and new / old."""
import csv
import json
import math
import os
import re
from concurrent.futures import ThreadPoolExecutor
import statistics
import subprocess
import sys
import tempfile
import time

args = sys.argv[1:]
nfields, big, big_only = 99, "--big" in args, "--big-only" in args
only, summaries = None, []
if "--fields" in args:
    i = args.index("--fields")
    nfields = int(args[i + 1])
    del args[i:i + 2]
if "--only" in args:  # 1-based field numbers, e.g. 6,7,8,9,10: part of the cases (see --summary)
    i = args.index("--only")
    only = [int(k) for k in args[i + 1].split(",")]
    del args[i:i + 2]


def case_lines(paths):
    """The case lines of earlier runs' outputs: (line, its cells)."""
    for path in paths:
        for line in open(path):
            c = [x.strip() for x in line.split("|")[1:-1]]
            if len(c) == 19 and c[7] in ("yes", "no"):
                yield line, c


against = {}
if "--against" in args:  # adaptive only, against the exhaustive figures of an earlier run's case lines
    i = args.index("--against")
    for _, c in case_lines(args[i + 1:]):
        w, r = c[4].split(" (")
        against[(c[0], c[2])] = {"best": dict(zip(("comp_idx", "filt_idx", "ser_idx"), w.split(",")),
                                              ratio=float(r.rstrip(")"))),
                                 "cpu": float(c[9]), "codec": float(c[12]), "user": float(c[15]), "rows": None}
    del args[i:]
vs = None
if "--vs" in args:  # adaptive of BUILD against adaptive of OLD_BUILD, side by side
    i = args.index("--vs")
    vs = os.path.join(args[i + 1], "dc_toolkit")
    del args[i:i + 2]
if "--sample" in args:  # lossy,lossless sample limits in KB
    i = args.index("--sample")
    sample_kb = [int(k) for k in args[i + 1].split(",")]
    del args[i:i + 2]
else:
    sample_kb = [50, 200]
if "--summary" in args:  # the summary over the case lines of the outputs of earlier runs (with --only)
    i = args.index("--summary")
    summaries = args[i + 1:]
    del args[i:]
args = [a for a in args if a not in ("--big", "--big-only")]
build = args[0] if args else "build"
exe = os.path.join(build, "dc_toolkit")
D = "/usr/share/ncarg/data/"
# (file, variable, what it is): 2-D and 3-D/4-D, masked, float64 (the GRIB reader decodes to float64)
FIELDS = [("cdf/contour.cdf", "T", "4-D (frtime, level, lat, lon) f32"),
          ("cdf/Tstorm.cdf", "t", "3-D (time, lat, lon) f32, masked"),
          ("cdf/pop.nc", "t", "2-D ocean grid f32, masked"),
          ("cdf/sstanom.robinsonproj.nc", "SST", "2-D f32, masked"),
          ("nug/tas_rotated_grid_EUR11.nc", "tas", "2-D rotated grid f32"),
          ("nug/HSURF_regional_model_0.11deg.nc", "HSURF", "2-D regional f32"),
          ("cdf/fice.nc", "fice", "3-D (time, lat, lon) f32, masked"),
          ("cdf/meccatemp.cdf", "t", "3-D (time, lat, lon) f32"),
          ("grb/MET9_IR108_cosmode_0909210000.grb2", "p260532", "2-D satellite f64 (GRIB2)"),
          ("grb/wafsgfs_L_t06z_intdsk60.grib2", "t_isobaricInhPa", "2-D (level, point) f64 (GRIB2)")][:nfields]
if only:
    FIELDS = [FIELDS[k - 1] for k in only]
LOSSY_LIMIT, LOSSLESS_LIMIT, CHUNK_MIB = "%dKB" % sample_kb[0], "%dKB" % sample_kb[1], "0.0234375"
PARALLEL = 1  # cases at a time: each runs 2 threads on the 2 cores, so a second one adds nothing but contention
REPEAT = 3  # adaptive runs per case, the median reported
# lossless: no threshold applies (a table with no rows), and lossless codecs only
TMP = tempfile.mkdtemp(prefix="dctk_bench_search_")
NO_TABLE = os.path.join(TMP, "none.csv")
with open(NO_TABLE, "w") as f:
    f.write("Short Name,Unit,Existing L1 error\n")
SETTINGS = [("1e-3", ["--l1-threshold", "1e-3"], LOSSY_LIMIT),
            ("1e-5", ["--l1-threshold", "1e-5"], LOSSY_LIMIT),
            ("lossless", ["--without-lossy", "--thresholds-table", NO_TABLE], LOSSLESS_LIMIT)]
USER_TIMER = re.compile(r"sweep: inside codecs, user space \[thread CPU s\]\s+\d+\s+[\d.]+\s+([\d.]+)")
CODEC_TIMER = re.compile(r"sweep: inside codecs \[thread CPU s\]\s+\d+\s+[\d.]+\s+([\d.]+)")
SOLVE_TIMER = re.compile(r"search: solving \[codec CPU s\]\s+\d+\s+[\d.]+\s+([\d.]+)")
SAMPLE = re.compile(r"combos on a sample \[([\d, ]+)\] \(([\d.]+ [KMG]?i?B)\)")


def run(path, var, extra, limit, mode, chunk=CHUNK_MIB, binary=None):
    out = tempfile.mkdtemp(prefix="run_", dir=TMP)
    cmd = [binary or exe, "evaluate_combos", path, "--where-to-write", out, "--field-to-compress", var,
           "--eval-data-size-limit", limit, "--threads-per-rank", "2", "--search", mode, "--verbose"] + extra
    if chunk:
        cmd += ["--inner-chunk-mib", chunk]
    t0 = time.time()
    with open(os.path.join(out, "stdout"), "w+") as so, open(os.path.join(out, "stderr"), "w+") as se:
        p = subprocess.Popen(cmd, stdout=so, stderr=se)
        _, status, ru = os.wait4(p.pid, 0)  # this child's own CPU time, whatever else runs
        p.returncode = os.waitstatus_to_exitcode(status)
        wall, cpu = time.time() - t0, ru.ru_utime + ru.ru_stime
        so.seek(0)
        se.seek(0)
        stdout, stderr = so.read(), se.read()
    if p.returncode:
        sys.exit("bench: %s failed:\n%s" % (" ".join(cmd), stderr[-2000:]))
    with open(os.path.join(out, "best_%s.json" % var)) as f:
        # the winner over every reader level: overall_winner where the top
        # level is the numcodecs level's best (since 495d7d6), else the top
        best = json.load(f)
        best = best.get("overall_winner") or best
    with open(os.path.join(out, "config_space_%s_rank0.csv" % var)) as f:
        rows = {(r["comp_idx"], r["filt_idx"], r["ser_idx"]): r for r in csv.DictReader(f)}
    codec, user, solve = CODEC_TIMER.search(stderr), USER_TIMER.search(stderr), SOLVE_TIMER.search(stderr)
    sample = SAMPLE.search(stdout)
    return {"best": best, "rows": rows, "cpu": cpu, "wall": wall, "codec": float(codec.group(1)) if codec else
            float("nan"), "user": float(user.group(1)) if user else float("nan"),
            "solve": float(solve.group(1)) if solve else float("nan"),
            "sample": "[%s] %s" % sample.groups() if sample else "?"}


def key(b):
    return (str(b["comp_idx"]), str(b["filt_idx"]), str(b["ser_idx"]))


def kept(r):
    return r["keep"].lower() in ("true", "1")


def same_metrics(a, e):
    return all(a[c] == e[c] for c in ("ratio", "l1_rel", "l2_rel", "linf_rel", "max_abs_err"))


def cases():
    print("| field | kind | setting | sample | exhaustive winner (ratio) | adaptive winner (ratio) | ratio a/e | same | "
          "measured whole | CPU e [s] | CPU a [s] | CPU a/e | codecs e [CPU s] | codecs a [CPU s] | "
          "codecs a/e | user e [CPU s] | user a [CPU s] | user a/e | a keeps only e-kept, same metrics |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    ratios, cpu, codec, user, same, safe = [], [], [], [], 0, True

    def case(c):
        (path, var, kind), (name, extra, limit) = c
        # the median of REPEAT adaptive runs by codec CPU time, one before the exhaustive run and the others after
        # it: a CPU second of this shared machine buys more or less work from one minute to the next (by 20 % and
        # more), so the two searches are measured close together
        runs = [run(D + path, var, extra, limit, "adaptive")]
        e = against[("%s %s" % (os.path.basename(path), var), name)] if against else \
            run(D + path, var, extra, limit, "exhaustive")
        runs = sorted(runs + [run(D + path, var, extra, limit, "adaptive") for _ in range(REPEAT - 1)],
                      key=lambda r: r["codec"])
        return runs[len(runs) // 2], e

    todo = [(f, s) for f in FIELDS for s in SETTINGS]
    with ThreadPoolExecutor(max_workers=PARALLEL) as pool:
        for ((path, var, kind), (name, extra, limit)), (a, e) in zip(todo, pool.map(case, todo)):
            ba, be = a["best"], e["best"]
            q = ba["ratio"] / be["ratio"]
            ident = key(ba) == key(be) or ba["ratio"] == be["ratio"]
            ok = e["rows"] is None or all(kept(e["rows"][k]) and same_metrics(r, e["rows"][k])
                                          for k, r in a["rows"].items() if kept(r))
            nmeasured = sum(1 for r in a["rows"].values() if float(r["fraction"]) == 1)
            ratios.append(q)
            cpu.append(a["cpu"] / e["cpu"])
            codec.append(a["codec"] / e["codec"])
            user.append(a["user"] / e["user"])
            same += ident
            safe = safe and ok
            print("| %s %s | %s | %s | %s | %s (%.4f) | %s (%.4f) | %.4f | %s | %d of %d | %.1f | %.2f | %.1f %% | "
                  "%.1f | %.2f | %.1f %% | %.1f | %.2f | %.1f %% | %s |" % (
                      os.path.basename(path), var, kind, name, a["sample"], ",".join(key(be)), be["ratio"],
                      ",".join(key(ba)), ba["ratio"], q, "yes" if ident else "no", nmeasured, len(a["rows"]),
                      e["cpu"], a["cpu"], 100 * cpu[-1], e["codec"], a["codec"], 100 * codec[-1],
                      e["user"], a["user"], 100 * user[-1], "n/a" if e["rows"] is None else "yes" if ok else "NO"),
                  flush=True)
    summary(ratios, cpu, codec, user, same, None if against else safe)


def versus():
    """Adaptive of this build against adaptive of OLD_BUILD (--vs), per case."""
    print("| field | setting | sample | old winner (ratio) | new winner (ratio) | ratio new/old | codecs old [CPU s] | "
          "codecs new [CPU s] | codecs new/old | solve [CPU s] |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    q, better = [], 0
    for (path, var, kind), (name, extra, limit) in [(f, s) for f in FIELDS for s in SETTINGS]:
        old, new = [], []
        for _ in range(REPEAT):
            old.append(run(D + path, var, extra, limit, "adaptive", binary=vs))
            new.append(run(D + path, var, extra, limit, "adaptive"))
        o, n = (sorted(r, key=lambda x: x["codec"])[REPEAT // 2] for r in (old, new))
        q.append(n["codec"] / o["codec"])
        better += n["best"]["ratio"] >= o["best"]["ratio"]
        print("| %s %s | %s | %s | %s (%.4f) | %s (%.4f) | %.4f | %.2f | %.2f | %.2f | %s |" % (
            os.path.basename(path), var, name, n["sample"], ",".join(key(o["best"])), o["best"]["ratio"],
            ",".join(key(n["best"])), n["best"]["ratio"], n["best"]["ratio"] / o["best"]["ratio"], o["codec"],
            n["codec"], q[-1], "%.2f" % n["solve"] if math.isfinite(n["solve"]) else "-"), flush=True)
    print()
    print("cases %d; adaptive codec CPU new / old: median %.2f, worst %.2f (issue 31: <= 2); new winner's ratio >= "
          "old's in %d" % (len(q), statistics.median(q), max(q), better))


def summary(ratios, cpu, codec, user, same, safe):
    n = len(ratios)
    print()
    print("cases %d; winner ratio adaptive/exhaustive: min %.4f (target >= 0.99 in every case): %s" % (
        n, min(ratios), "met" if min(ratios) >= 0.99 else "MISSED"))
    print("identical winner (same combo or same ratio) in %d of %d (%.0f %%; target >= 80 %%): %s" % (
        same, n, 100 * same / n, "met" if same >= 0.8 * n else "MISSED"))
    mc, wc = statistics.median(codec), max(codec)
    print("adaptive / exhaustive CPU time inside codecs: median %.1f %%, worst %.1f %% (targets <= 5 %%, <= 10 %%): "
          "%s" % (100 * mc, 100 * wc, "met" if mc <= 0.05 and wc <= 0.10 else "MISSED"))
    print("adaptive / exhaustive CPU time inside codecs in user space (without the kernel's page faults): median "
          "%.1f %%, worst %.1f %%" % (100 * statistics.median(user), 100 * max(user)))
    print("adaptive / exhaustive CPU time of the whole run (start-up, reading, writing every row too): median "
          "%.1f %%, worst %.1f %%" % (100 * statistics.median(cpu), 100 * max(cpu)))
    print("adaptive keeps only rows exhaustive keeps, with the same metrics: %s" % (
        "n/a (no exhaustive rows in this run)" if safe is None else "yes" if safe else "NO"))


def summary_of(paths):
    """The summary over the case lines printed by earlier runs (each case's two
    searches ran in one run; the runs split the fields with --only)."""
    ratios, cpu, codec, user, same, safe = [], [], [], [], 0, None  # None: no line had the exhaustive rows
    for line, c in case_lines(paths):
        print(line.rstrip())
        ratios.append(float(c[6]))
        same += c[7] == "yes"
        cpu.append(float(c[11].rstrip(" %")) / 100)
        codec.append(float(c[14].rstrip(" %")) / 100)
        user.append(float(c[17].rstrip(" %")) / 100)
        safe = (safe if c[18] == "n/a" else (safe is not False) and c[18] == "yes")
    summary(ratios, cpu, codec, user, same, safe)


def make_big():
    """trinidad's topography stacked 6 times (see the docstring): 66 MiB of float32."""
    import netCDF4
    import numpy as np
    with netCDF4.Dataset(D + "cdf/trinidad.nc") as s:
        a = np.asarray(s["data"][:], dtype="<f4")
    path = os.path.join(TMP, "trinidad_x6.nc")
    with netCDF4.Dataset(path, "w") as d:
        d.createDimension("copy", 6)
        d.createDimension("lat", a.shape[0])
        d.createDimension("lon", a.shape[1])
        d.createVariable("data", "f4", ("copy", "lat", "lon"))[:] = np.stack([a] * 6)
    return path


def big_run():
    path = make_big()
    load0 = os.getloadavg()
    b = run(path, "data", ["--l1-threshold", "1e-3"], "70MB", "adaptive", chunk=None)
    load1 = os.getloadavg()
    print("big: trinidad.nc data x 6 (built, see --help), sample %s, adaptive, 2 threads, full default space "
          "(%d combos, %d measured on the whole sample): wall %.1f s (target < 600 s: %s), CPU %.1f s, inside "
          "codecs %.1f CPU s; winner %s ratio %.4f; load average before %.2f %.2f %.2f, after %.2f %.2f %.2f" % (
              b["sample"], len(b["rows"]), sum(1 for r in b["rows"].values() if float(r["fraction"]) == 1),
              b["wall"], "met" if b["wall"] < 600 else "MISSED", b["cpu"], b["codec"], ",".join(key(b["best"])),
              b["best"]["ratio"], *load0, *load1), flush=True)


if "-h" in args or "--help" in args:
    print(__doc__)
    sys.exit(0)
if summaries:
    summary_of(summaries)
elif vs:
    versus()
elif not big_only:
    cases()
if big or big_only:
    big_run()
