#!/usr/bin/python3
"""PCodec benchmark: bench/pcodec.py BUILD_DIR [SIZE_LIMIT] [--compressor-class C] [--fields N]

For real fields, two sweeps each, and from their result rows:
  1. the default space (narrowed by --compressor-class, since the full space
     takes about half an hour per field on a loaded 2-core machine): the best
     ratio whose relative L1 error is within each threshold, of the whole
     space and of the space without the PCodec serializers (the same rows
     less those whose serializer is numcodecs.pcodec: the space is a product,
     so that is exactly the smaller space's sweep);
  2. the lossless space (--without-lossy) with every compressor: the best
     ratio with and without PCodec, PCodec alone (no filter, no compressor),
     and the best plain zstd and blosc pipelines (bytes serializer, no filter).
Ratios are summed over the sample's chunks as the sweep reports them;
--fields takes the first N fields only."""
import csv
import os
import subprocess
import sys
import tempfile

args = sys.argv[1:]
narrow, nfields = [], 99
for flag in ("--compressor-class", "--fields"):
    if flag in args:
        i = args.index(flag)
        if flag == "--fields":
            nfields = int(args[i + 1])
        else:
            narrow = [flag, args[i + 1]]
        del args[i:i + 2]
build = args[0] if args else "build"
limit = args[1] if len(args) > 1 else "300KB"
exe = os.path.join(build, "dc_toolkit")
D = "/usr/share/ncarg/data/"
FIELDS = [("nug/rectilinear_grid_3D.nc", "t"), ("cdf/Tstorm.cdf", "t"), ("nug/atm_phy_mag0004_1985.nc", "rsdt"),
          ("nug/FR-LAND_regional_model_0.11deg.nc", "FR_LAND"), ("nug/HSURF_regional_model_0.11deg.nc", "HSURF")]
THRESHOLD = "1e-3"


def sweep(path, var, extra):
    out = tempfile.mkdtemp(prefix="dctk_bench_ser_")
    cmd = [exe, "evaluate_combos", D + path, "--where-to-write", out, "--field-to-compress", var,
           "--eval-data-size-limit", limit, "--threads-per-rank", "2"] + extra
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode:
        sys.exit("bench: %s failed:\n%s" % (" ".join(cmd), r.stderr[-2000:]))
    with open(os.path.join(out, "config_space_%s_rank0.csv" % var)) as f:
        return [row for row in csv.DictReader(f) if row["error"] == ""]


def best(rows, keep=lambda r: True, thr=None):
    """Best ratio among rows within thr (None: the sweep's own keep flag)."""
    def ok(r):
        if thr is None:
            return r["keep"].lower() in ("true", "1")
        return r["error"] == "" and float(r["l1_rel"]) <= thr
    got = [(float(r["ratio"]), r) for r in rows if ok(r) and keep(r)]
    return max(got, key=lambda x: x[0]) if got else (float("nan"), None)


def describe(r):
    if r is None:
        return "-"
    parts = []
    for k in ("filter", "serializer", "compressor"):
        if r[k]:
            name = r[k].split('"name":"')[1].split('"')[0] if '"name":"' in r[k] else r[k][:30]
            parts.append(name.replace("numcodecs.", ""))
    return " + ".join(parts) or "bytes"


def is_pco(r):
    return "numcodecs.pcodec" in r["serializer"]


THRESHOLDS = (1e-3, 1e-4, 1e-5, 0.0)


def main():
    print("sample limit %s per field; 2 threads; compressors of the lossy sweep: %s" %
          (limit, narrow[1] if narrow else "all"))
    print("%-40s %8s %9s %9s %7s  %s" % ("field", "L1 <=", "without", "with", "gain", "best with pcodec"))
    lossless = []
    for path, var in FIELDS[:nfields]:
        rows = sweep(path, var, narrow + ["--override-existing-l1-error", THRESHOLD])
        for thr in THRESHOLDS:
            a, _ = best(rows, lambda r: not is_pco(r), thr)
            b, rb = best(rows, thr=thr)
            print("%-40s %8g %9.2f %9.2f %6.1f%%  %s" % (os.path.basename(path) + ":" + var, thr, a, b,
                                                       100 * (b / a - 1), describe(rb)))
        lossless.append((path, var, sweep(path, var, ["--without-lossy"])))
    print()
    print("%-40s %9s %9s %9s %9s %9s" % ("field (lossless, all compressors)", "no pcodec", "with", "pco alone",
                                         "zstd", "blosc"))
    for path, var, rows in lossless:
        plain = lambda fam: (lambda r: r["filter"] == "" and r["serializer"] == "" and fam in r["compressor"])
        print("%-40s %9.2f %9.2f %9.2f %9.2f %9.2f" % (
            os.path.basename(path) + ":" + var, best(rows, lambda r: not is_pco(r))[0], best(rows)[0],
            best(rows, lambda r: is_pco(r) and r["filter"] == "" and r["compressor"] == "")[0],
            best(rows, plain('"zstd"'))[0], best(rows, plain('"blosc"'))[0]))


if __name__ == "__main__":
    main()
