#!/usr/bin/python3
"""compress_with_optimal's index form against its --pipeline form: bench/index_form.py BUILD_DIR [RUNS]

Issue 36 item 3: `compress_with_optimal DATASET DIR FIELD C F S` resolves its indices in the
space the sweep recorded (DIR/space_FIELD.json) instead of rebuilding it (a scan of the whole
field and a read of the sample); target: the index form's median wall time within 5 % of the
--pipeline form's on the three fields of bench/compress.py (benchlib.COMPRESS_FIELDS: trinidad
`data` 11.5 MB as it is, rectilinear_grid_3D `t` x28 along time ~35 MB, fice `fice` x40 ~94 MB).

Per field: one sweep of zlib with and without a byte shuffle (--compressor-class zlib, no filter
or serializer, 2 threads, 4 MiB inner chunks, as the writes), then the row byte shuffle + zlib 1
written RUNS times (default 5) by each form, alternated, at 2 threads in 4 MiB inner chunks and
16 MiB shards, --no-verify (as bench/compress.py's headline):
  index       the three indices of that row;
  pipeline    --pipeline with the same codec list;
  rebuilt     the index form with the record removed (the space rebuilt from the field: the
              cost before the record, measured in the same run by the same build).
The shards of the index and --pipeline forms must be the same bytes. Medians, the fastest run,
CPU time (user + system); the load average is printed, as the machine may be shared.
"""
import csv
import filecmp
import json
import os
import shutil
import statistics
import sys
import tempfile
import time

from benchlib import COMPRESS_FIELDS, compress_input, measured, threads_flag

build = sys.argv[1] if len(sys.argv) > 1 else "build"
RUNS = int(sys.argv[2]) if len(sys.argv) > 2 else 5
exe = os.path.join(build, "dc_toolkit")
SPACE = ["--compressor-class", "zlib", "--filter-class", "none", "--serializer-class", "none",
         "--inner-chunk-mib", "4"]


def timed(cmd):
    """Wall and CPU seconds (user + system) of one run, which must succeed; its stdout."""
    wall, user, system, r = measured(cmd)
    return wall, user + system, r.stdout


def shuffle_zlib1(sweep, var):
    """The indices and codec list of the sweep's row byte shuffle + zlib level 1."""
    with open(os.path.join(sweep, "config_space_%s_rank0.csv" % var), newline="") as f:
        for row in csv.DictReader(f):
            comp = json.loads(row["compressor"]) if row["compressor"] else []
            comp = comp if isinstance(comp, list) else [comp]
            names = [c["name"] for c in comp]
            zl = [c for c in comp if c["name"] == "numcodecs.zlib"]
            if names == ["numcodecs.shuffle", "numcodecs.zlib"] and zl[0]["configuration"]["level"] == 1:
                idx = [row["comp_idx"], row["filt_idx"], row["ser_idx"]]
                return idx, [{"name": "bytes", "configuration": {"endian": "little"}}] + comp
    sys.exit("bench: no shuffle + zlib 1 row in the sweep of %s" % var)


def same_tree(a, b):
    """Whether two folders hold the same files with the same bytes."""
    cmp = filecmp.dircmp(a, b)
    if cmp.left_only or cmp.right_only or cmp.funny_files:
        return False
    _, mismatch, errors = filecmp.cmpfiles(a, b, cmp.common_files, shallow=False)
    return not mismatch and not errors and all(same_tree(os.path.join(a, d), os.path.join(b, d))
                                               for d in cmp.common_dirs)


def bench_field(tmp, label, src, var, raw):
    sweep = os.path.join(tmp, "sweep_" + label)
    tflag = threads_flag(exe)
    timed([exe, "evaluate_combos", src, "--where-to-write", sweep, "--field-to-compress", var, tflag, "2"] + SPACE)
    record = os.path.join(sweep, "space_%s.json" % var)
    if not os.path.exists(record):
        sys.exit("bench: the sweep wrote no %s" % record)
    idx, codecs = shuffle_zlib1(sweep, var)
    common = [tflag, "2", "--shard-mib", "16", "--no-verify"] + SPACE
    outs = {k: os.path.join(tmp, "out_%s_%s" % (label, k)) for k in ("index", "pipeline", "rebuilt")}
    forms = {"index": [exe, "compress_with_optimal", src, sweep, var] + idx + common,
             "pipeline": [exe, "compress_with_optimal", src, outs["pipeline"], var, "--pipeline",
                          json.dumps(codecs)] + common,
             "rebuilt": [exe, "compress_with_optimal", src, sweep, var] + idx + common}
    wall = {k: [] for k in forms}
    cpu = {k: [] for k in forms}
    stem = os.path.splitext(os.path.basename(src))[0]
    for _ in range(RUNS):  # alternated, so load on the machine hits every form alike
        for k, cmd in forms.items():
            store = os.path.join(sweep if k != "pipeline" else outs[k], stem + ".zarr")
            shutil.rmtree(store, ignore_errors=True)
            if k == "rebuilt":
                os.rename(record, record + ".away")
            s, c, out = timed(cmd)
            if k == "rebuilt":
                os.rename(record + ".away", record)
                if "rebuilt from the field" not in out:
                    sys.exit("bench: without its record the index form did not say it rebuilt the space:\n" + out)
            elif k == "index" and "rebuilt from the field" in out:
                sys.exit("bench: the index form rebuilt the space although the record holds:\n" + out)
            wall[k].append(s)
            cpu[k].append(c)
            if k != "pipeline":  # keep this form's store to compare with the next --pipeline one
                shutil.rmtree(outs[k], ignore_errors=True)
                shutil.move(store, outs[k])
    # the shards (the array's attributes name how the pipeline was chosen, and differ)
    same = same_tree(os.path.join(outs["index"], var, "c"), os.path.join(outs["pipeline"], stem + ".zarr", var, "c"))
    med = {k: statistics.median(v) for k, v in wall.items()}
    mcpu = {k: statistics.median(v) for k, v in cpu.items()}
    print("\n== %s `%s`: %.1f MB float32, indices %s (byte shuffle + zlib 1), 2 threads, median of %d; "
          "load average %s" % (label, var, raw / 1e6, " ".join(idx), RUNS,
                               " ".join(open("/proc/loadavg").read().split()[:3])))
    print("   %-10s %8s %8s %8s %12s" % ("form", "wall s", "min s", "CPU s", "vs pipeline"))
    for k in forms:
        print("   %-10s %8.3f %8.3f %8.3f %11.3fx" % (k, med[k], min(wall[k]), mcpu[k], med[k] / med["pipeline"]))
    ok = med["index"] <= 1.05 * med["pipeline"]
    print("   target: index form within 5 %% of --pipeline: %s (%+.1f %%); %s" % (
        "met" if ok else "MISSED", 100 * (med["index"] / med["pipeline"] - 1), "shards identical" if same else "shards DIFFER"))
    return ok and same


def main():
    tmp = tempfile.mkdtemp(prefix="dctk_bench_index_")
    try:
        print("== compress_with_optimal: index form vs --pipeline (%s), load average %s" % (
            time.strftime("%Y-%m-%d"), " ".join(open("/proc/loadavg").read().split()[:3])))
        ok = True
        for label, rel, var, copies in COMPRESS_FIELDS:
            src = os.path.join(tmp, label + ".nc")
            raw = compress_input(src, rel, var, copies)
            ok = bench_field(tmp, label, src, var, raw) and ok
            os.remove(src)
        print("\nall targets met" if ok else "\nsome target MISSED")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


main()
