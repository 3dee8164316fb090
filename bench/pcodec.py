#!/usr/bin/python3
"""PCodec benchmark: bench/pcodec.py BUILD_DIR [SIZE_LIMIT] [--compressor-class C] [--fields N]

For real fields, one sweep each of the default space at an L1 threshold and
one of the lossless space (--without-lossy), and from their results:
  - the best kept ratio of the whole space and of the space without the
    PCodec serializers (the same rows less those whose serializer is
    numcodecs.pcodec: the space is a product, so that is exactly the smaller
    space's sweep), at the same threshold;
  - lossless: PCodec alone (no filter, no compressor) against the best plain
    zstd and blosc pipelines (bytes serializer, no filter) of the same sweep.
Ratios are summed over the sample's chunks as the sweep reports them.
--compressor-class narrows both sweeps to one compressor family (the full
default space takes about half an hour per field on a loaded 2-core
machine); --fields takes the first N fields only."""
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
           "--eval-data-size-limit", limit, "--threads-per-rank", "2"] + narrow + extra
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode:
        sys.exit("bench: %s failed:\n%s" % (" ".join(cmd), r.stderr[-2000:]))
    with open(os.path.join(out, "config_space_%s_rank0.csv" % var)) as f:
        return [row for row in csv.DictReader(f) if row["error"] == ""]


def best(rows, keep=lambda r: True):
    got = [(float(r["ratio"]), r) for r in rows if r["keep"].lower() in ("true", "1") and keep(r)]
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


def main():
    print("sample limit %s per field; threshold relative L1 %s; 2 threads; compressors: %s" %
          (limit, THRESHOLD, narrow[1] if narrow else "all"))
    print("%-34s %9s %9s %7s  %s" % ("field (L1 <= %s)" % THRESHOLD, "without", "with", "gain", "best with pcodec"))
    lossless = []
    for path, var in FIELDS[:nfields]:
        rows = sweep(path, var, ["--override-existing-l1-error", THRESHOLD])
        a, _ = best(rows, lambda r: not is_pco(r))
        b, rb = best(rows)
        print("%-34s %9.2f %9.2f %6.1f%%  %s" % (os.path.basename(path) + ":" + var, a, b, 100 * (b / a - 1),
                                               describe(rb)))
        lossless.append((path, var, sweep(path, var, ["--without-lossy"])))
    print()
    print("%-34s %9s %9s %9s %9s %9s" % ("field (lossless)", "no pcodec", "with", "pco alone", "zstd", "blosc"))
    for path, var, rows in lossless:
        plain = lambda fam: (lambda r: r["filter"] == "" and r["serializer"] == "" and fam in r["compressor"])
        print("%-34s %9.2f %9.2f %9.2f %9.2f %9.2f" % (
            os.path.basename(path) + ":" + var, best(rows, lambda r: not is_pco(r))[0], best(rows)[0],
            best(rows, lambda r: is_pco(r) and r["filter"] == "" and r["compressor"] == "")[0],
            best(rows, plain('"zstd"'))[0], best(rows, plain('"blosc"'))[0]))


if __name__ == "__main__":
    main()
