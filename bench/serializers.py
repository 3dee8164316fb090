#!/usr/bin/python3
"""Error-bounded serializers benchmark: bench/serializers.py BUILD_DIR [--full] [--only VAR]

On real fields from libncarg-data, one sweep per field over all filters and
all serializers (compressors narrowed to none and zstd, or the whole default
space with --full), then from that sweep's rows:
  1. the best ratio at the same relative L1 threshold, in the space without
     dctk.sz / dctk.ebcc and in the space with them (the space is a product,
     so the best of the rows without them is what a sweep of that smaller
     space finds);
  2. each error-bounded serializer (no filter, best compressor) against the
     best ZFP combo (no filter) whose max absolute error is no larger;
  3. that no dctk.sz / dctk.ebcc row without a filter exceeds its bound.
"""
import csv
import json
import os
import subprocess
import sys
import tempfile
import time

build = sys.argv[1] if len(sys.argv) > 1 else "build"
exe = os.path.join(build, "dc_toolkit")
NCARG = os.environ.get("DCTK_NCARG", "/usr/share/ncarg/data")
FIELDS = [("nug/rectilinear_grid_3D.nc", "t"), ("nug/tos_ocean_bipolar_grid.nc", "tos"),
          ("cdf/meccatemp.cdf", "t"), ("nug/FR-LAND_regional_model_0.11deg.nc", "FR_LAND"),
          ("cdf/sst30e_netcdf.nc", "sst")]
THRESHOLDS = [1e-2, 1e-3, 1e-4, 1e-5]
full = "--full" in sys.argv
if "--only" in sys.argv:
    FIELDS = [f for f in FIELDS if f[1] == sys.argv[sys.argv.index("--only") + 1]]
LIMIT = "250KB"  # a few levels of each field: zstd 22 over every lossy stage takes minutes beyond that


def sweep(path, var):
    out = tempfile.mkdtemp(prefix="dctk_bench_ser_")
    cmd = [exe, "evaluate_combos", path, "--where-to-write", out, "--field-to-compress", var,
           "--threads-per-rank", "2", "--override-existing-l1-error", "1e-3", "--eval-data-size-limit", LIMIT]
    if not full:
        cmd += ["--compressor-class", "none,zstd"]
    t0 = time.perf_counter()
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode:
        sys.exit("bench: %s failed:\n%s" % (" ".join(cmd), r.stderr[-3000:]))
    rows = list(csv.DictReader(open(os.path.join(out, "config_space_%s_rank0.csv" % var))))
    return rows, time.perf_counter() - t0


def ser_obj(r):
    s = json.loads(r["serializer"]) if r["serializer"] else {"name": "bytes"}
    return s[0] if isinstance(s, list) else s


def family(r):
    return ser_obj(r)["name"]


def best(rows, pred):
    ok = [r for r in rows if r["error"] == "" and pred(r)]
    return max(ok, key=lambda r: float(r["ratio"])) if ok else None


def describe(r):
    if r is None:
        return "-"
    ser = ser_obj(r)
    name, conf = ser["name"], ser.get("configuration", {})
    if name == "numcodecs.zfpy":
        name += "(m%d)" % conf["mode"]
    elif name.startswith("dctk."):
        name += "(%.2g)" % conf["error_bound"]
    filt = json.loads(r["filter"]) if r["filter"] else None
    filt = filt[0] if isinstance(filt, list) else filt
    fname = "-"
    if filt:
        fconf = filt.get("configuration", {})
        fname = fconf.get("id", filt["name"]).split(".")[-2 if "id" in fconf else -1]
    return "%s/%s" % (fname, name)


ours = lambda r: family(r).startswith("dctk.")
print("== error-bounded serializers (%s), space: all filters x all serializers x %s, samples <= %s" %
      (time.strftime("%Y-%m-%d"), "all compressors" if full else "compressors none,zstd", LIMIT))
print("1. best ratio at the same relative L1 threshold, without / with dctk.sz and dctk.ebcc")
print("   %-36s %8s %8s %8s %7s  %s" % ("field", "L1 <=", "without", "with", "gain", "winner with them"))
zfp_table = []
for f, var in FIELDS:
    rows, secs = sweep(os.path.join(NCARG, f), var)
    label = "%s:%s" % (os.path.basename(f)[:24], var)
    for th in THRESHOLDS:
        keep = lambda r, th=th: float(r["l1_rel"]) <= th
        a = best(rows, lambda r: keep(r) and not ours(r))
        b = best(rows, keep)
        ra, rb = (float(a["ratio"]) if a else float("nan")), (float(b["ratio"]) if b else float("nan"))
        print("   %-36s %8.0e %8.2f %8.2f %6.2fx  %s" % (label, th, ra, rb, rb / ra, describe(b)))
    print("   %-36s (sweep of %d combos: %.0f s)" % ("", len(rows), secs))
    bad = [r for r in rows if ours(r) and r["filt_idx"] == "-1" and r["error"] == "" and
           float(r["max_abs_err"]) > ser_obj(r)["configuration"]["error_bound"]]
    if bad:
        sys.exit("bench: %d rows exceed their bound, e.g. %s" % (len(bad), bad[0]))
    sers = sorted({r["serializer"] for r in rows if ours(r)})
    for s in sers:
        mine = best(rows, lambda r: r["serializer"] == s and r["filt_idx"] == "-1")
        err = float(mine["max_abs_err"])
        z = best(rows, lambda r: family(r) == "numcodecs.zfpy" and r["filt_idx"] == "-1" and
                 float(r["max_abs_err"]) <= err)
        zfp_table.append((label, describe(mine), err, float(mine["ratio"]), float(z["ratio"]) if z else float("nan")))
print("2. each error-bounded serializer (no filter) against the best ZFP (no filter) with no larger max error")
print("   (ZFP '-': no ZFP combo that small, or none keeps the field's NaN mask)")
print("   %-36s %-26s %10s %8s %8s" % ("field", "serializer(bound)", "max err", "ratio", "ZFP"))
for label, d, err, r, z in zfp_table:
    print("   %-36s %-26s %10.3g %8.2f %8s" % (label, d.split("/")[1], err, r, "-" if z != z else "%.2f" % z))
print("3. every dctk.sz / dctk.ebcc row without a filter is within its bound")
