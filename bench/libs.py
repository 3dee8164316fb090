#!/usr/bin/python3
"""Before and after a change to how the library is built: bench/libs.py BEFORE_BUILD AFTER_BUILD

Written for the library split (issue 16: dctk_codecs / dctk / dctk_report, hidden
visibility, each archive one `ld -r` object), which must not slow the program down
nor change a byte it writes. Runs both builds' dc_toolkit, alternating, on the same
real field (libncarg-data, tiled in time to ~50 MB):
  - evaluate_combos on a 300 KB sample, every filter and serializer, the zstd
    compressors (the whole default space takes tens of minutes on a shared
    2-core machine), one thread;
  - compress_with_optimal of the whole field with shuffle + zlib 1, one thread;
and prints the median of ROUNDS (environment, default 3) runs of each side by side, then whether the two
builds wrote the same bytes: best_VAR.json and the whole Zarr store (the results
files hold measured MB/s, which differ from run to run). WRITE_ONLY=1 skips the
sweep (its time prints as 0).
"""
import filecmp
import json
import os
import shutil
import statistics
import sys
import tempfile
import time

from benchlib import VAR, threads_flag, tiled, timed

ROUNDS = int(os.environ.get("ROUNDS", "3"))
COMBO = [{"name": "bytes", "configuration": {"endian": "little"}},
         {"name": "numcodecs.shuffle", "configuration": {"elementsize": 4}},
         {"name": "numcodecs.zlib", "configuration": {"level": 1}}]


def same_tree(a, b):
    """Every file of a is in b with the same bytes (and no more files)."""
    fa = sorted(os.path.relpath(os.path.join(d, f), a) for d, _, fs in os.walk(a) for f in fs)
    fb = sorted(os.path.relpath(os.path.join(d, f), b) for d, _, fs in os.walk(b) for f in fs)
    return fa == fb and all(filecmp.cmp(os.path.join(a, f), os.path.join(b, f), shallow=False) for f in fa)


def runs(exe, src, tmp, tag, k):
    ev = os.path.join(tmp, "%s_eval%d" % (tag, k))
    os.makedirs(ev)
    t_eval = 0.0 if os.environ.get("WRITE_ONLY") else timed([exe, "evaluate_combos", src, "--where-to-write", ev, "--eval-data-size-limit", "300KB",
                    "--compressor-class", "zstd",
                    "--override-existing-l1-error", "1e-4", "--threads-per-rank", "1"])
    out = os.path.join(tmp, "%s_out%d" % (tag, k))
    t_write = timed([exe, "compress_with_optimal", src, out, VAR, "--combo", os.path.join(tmp, "combo.json"),
                     threads_flag(exe), "1", "--inner-chunk-mib", "4", "--shard-mib", "16", "--no-verify"])
    return t_eval, t_write, ev, out


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    exes = {"before": os.path.join(sys.argv[1], "dc_toolkit"), "after": os.path.join(sys.argv[2], "dc_toolkit")}
    tmp = tempfile.mkdtemp(prefix="dctk_bench_libs_")
    try:
        src = os.path.join(tmp, "tiled.nc")
        raw = tiled(src)
        with open(os.path.join(tmp, "combo.json"), "w") as f:
            json.dump({"var": VAR, "codecs": COMBO}, f)
        times = {tag: ([], []) for tag in exes}
        last = {}
        for k in range(ROUNDS):
            # who goes first alternates, so that neither always follows the other's file deletions
            for tag, exe in (list(exes.items()) if k % 2 == 0 else list(exes.items())[::-1]):
                te, tw, ev, out = runs(exe, src, tmp, tag, k)
                times[tag][0].append(te)
                times[tag][1].append(tw)
                if k == ROUNDS - 1:
                    last[tag] = (ev, out)
                else:
                    shutil.rmtree(ev), shutil.rmtree(out)
        print("== library split before/after (%s), field %.0f MB, median of %d" % (time.strftime("%Y-%m-%d"),
                                                                                 raw / 1e6, ROUNDS))
        print("   %-44s %10s %10s %8s" % ("step", "before s", "after s", "after/before"))
        for i, step in enumerate(("evaluate_combos, 300 KB, zstd, 1 thread", "compress_with_optimal, 1 thread")):
            b, a = statistics.median(times["before"][i]), statistics.median(times["after"][i])
            print("   %-44s %10.2f %10.2f %8.3f" % (step, b, a, a / b if b else 0.0))
        b, a = statistics.median(times["before"][1]), statistics.median(times["after"][1])
        print("   write throughput: before %.1f MB/s, after %.1f MB/s" % (raw / 1e6 / b, raw / 1e6 / a))
        eb, ea = last["before"][0], last["after"][0]
        same_best = os.environ.get("WRITE_ONLY") or filecmp.cmp(os.path.join(eb, "best_%s.json" % VAR), os.path.join(ea, "best_%s.json" % VAR), False)
        same_store = same_tree(last["before"][1], last["after"][1])
        print("   same bytes: best_%s.json %s, Zarr store %s" % (VAR, "yes" if same_best else "NO",
                                                               "yes" if same_store else "NO"))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
