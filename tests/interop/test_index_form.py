#!/usr/bin/python3
"""The index form from the space the sweep recorded (issue 36 item 3), on the real field t of
rectilinear_grid_3D.nc (a copy, so that the test can touch it).

A sweep (zstd after BitRound or none, a budget that solves a BitRound member) writes
space_t.json beside best_t.json: its fingerprint is the best file's, and it holds the solved
member the CSV names. For a grid BitRound row, the solved row and a lossless row:
  - compress_with_optimal DATASET DIR t C F S resolves them from the record: no line about a
    rebuild, and (strace) it reads no more of the input than the --pipeline form of the same row;
  - with the record moved away it says so in one line, rebuilds the space from the field (reading
    more of the input: the scan and the sample) and writes the same shards;
  - the array's codecs are the CSV row's stages, and numcodecs' own decode of every shard chunk
    equals numcodecs' BitRound of netCDF4's values (the input itself for the lossless row).
A touched input (its modification time changed) or other sampling options make the record not
hold: one line, the space rebuilt, the same store; other class flags are refused as before (the
fingerprint differs)."""
import csv
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

import netCDF4
import numcodecs
import numpy as np

DCTK = os.environ["DCTK"]
NCARG = os.environ.get("DCTK_NCARG", "/usr/share/ncarg/data")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import check, finish  # noqa: E402
import zarr_shards  # noqa: E402

tmp = tempfile.mkdtemp(prefix="dctk_index_form_")
SRC = os.path.join(tmp, "rect.nc")
shutil.copyfile(os.path.join(NCARG, "nug", "rectilinear_grid_3D.nc"), SRC)
SPACE = ["--compressor-class", "zstd", "--filter-class", "bitround,none", "--serializer-class", "none"]
SWEEP = os.path.join(tmp, "sweep")
REBUILT = "the codec space was rebuilt from the field"
STRACE = shutil.which("strace")


def run(args, trace=None):
    """Run dc_toolkit; with trace, under strace, and return the bytes it read from SRC too."""
    cmd = [DCTK] + args
    if trace:
        cmd = [STRACE, "-f", "-y", "-qq", "-e", "trace=read,pread64,readv,preadv", "-o", trace] + cmd
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    nread = None
    if trace and os.path.exists(trace):
        pat = re.compile(r"(?:read|pread64|readv|preadv)\(\d+<%s>.*\)\s+=\s+(\d+)" % re.escape(os.path.realpath(SRC)))
        nread = sum(int(m.group(1)) for m in map(pat.search, open(trace)) if m)
    return r, nread


def stage_list(text):
    if not text:
        return []
    j = json.loads(text)
    return j if isinstance(j, list) else [j]


r, _ = run(["evaluate_combos", SRC, "--where-to-write", SWEEP, "--field-to-compress", "t",
            "--override-existing-l1-error", "1e-3", "--search", "exhaustive", "--threads-per-rank", "2"] + SPACE)
check(r.returncode == 0, "sweep: %d %s" % (r.returncode, r.stderr[-600:]))
best = json.load(open(os.path.join(SWEEP, "best_t.json")))
record = json.load(open(os.path.join(SWEEP, "space_t.json")))
with open(os.path.join(SWEEP, "config_space_t_rank0.csv"), newline="") as f:
    rows = list(csv.DictReader(f))
check(record["fingerprint"] == best["fingerprint"], "record %s, best %s" % (record["fingerprint"],
                                                                           best["fingerprint"]))
solved = [w for w in rows if w["solved"] not in ("", "nan")]
grid = [w for w in rows if w["solved"] in ("", "nan") and w["filter"] and w["status"] == "kept"]
lossless = [w for w in rows if not w["filter"]]
check(solved and grid and lossless, "rows: %d solved, %d grid bitround, %d lossless" % (len(solved), len(grid),
                                                                                     len(lossless)))
members = [m["codecs"] for m in record["members"]["filters"]]
check(solved and stage_list(solved[0]["filter"]) in members,
      "the record's members %s lack the solved filter %s" % (members, solved[0]["filter"] if solved else None))

with netCDF4.Dataset(SRC) as d:
    v = d["t"]
    v.set_auto_maskandscale(False)
    x = np.ascontiguousarray(v[...]).astype("<f4")


def row_codecs(w):
    """The Zarr v3 codec list a CSV row names: filter, bytes, compressor."""
    return stage_list(w["filter"]) + [{"name": "bytes", "configuration": {"endian": "little"}}] + \
        stage_list(w["compressor"])


def inner_codecs(store):
    meta = json.load(open(os.path.join(store, "t", "zarr.json")))
    return meta["codecs"][0]["configuration"]["codecs"]


def shards(store):
    top = os.path.join(store, "t", "c")
    out = {}
    for d, _, files in os.walk(top):
        for name in files:
            out[os.path.relpath(os.path.join(d, name), top)] = open(os.path.join(d, name), "rb").read()
    return out


def write(where, idx, extra=(), trace=None):
    r, nread = run(["compress_with_optimal", SRC, where, "t"] + [str(i) for i in idx] + SPACE + list(extra), trace)
    return r, nread, os.path.join(where, "rect.zarr")


cases = [("grid", grid[:1]), ("solved", solved[:1]), ("lossless", lossless[:1])]
for label, pick in cases:
    if not pick:
        continue
    w = pick[0]
    idx = (w["comp_idx"], w["filt_idx"], w["ser_idx"])
    out = os.path.join(tmp, "out_" + label)
    shutil.copytree(SWEEP, out)
    trace = os.path.join(tmp, "trace_" + label) if STRACE else None
    r1, read_rec, store = write(out, idx, trace=trace)
    check(r1.returncode == 0, "%s %s: %d %s" % (label, idx, r1.returncode, r1.stderr[-400:]))
    check(REBUILT not in r1.stdout, "%s: rebuilt although the record holds: %s" % (label, r1.stdout[:400]))
    check(inner_codecs(store) == row_codecs(w), "%s: wrote %s, the row names %s" % (label, inner_codecs(store),
                                                                                   row_codecs(w)))
    y, stored = zarr_shards.read_store(store, "t")
    y = np.asarray(y).reshape(x.shape)
    filt = stage_list(w["filter"])
    k = filt[0]["configuration"]["keepbits"] if filt else None
    want = x if k is None else numcodecs.BitRound(keepbits=k).decode(
        numcodecs.BitRound(keepbits=k).encode(x.copy())).reshape(x.shape)
    check(stored > 0 and np.array_equal(y, want, equal_nan=True),
          "%s: numcodecs' decode differs from numcodecs' BitRound(%s) of the input" % (label, k))
    # the --pipeline form of the same row: the reads the write itself needs
    r2, read_pipe = run(["compress_with_optimal", SRC, os.path.join(tmp, "pipe_" + label), "t", "--pipeline",
                         json.dumps(row_codecs(w))], trace and trace + ".pipe")
    check(r2.returncode == 0, "%s --pipeline: %d %s" % (label, r2.returncode, r2.stderr[-400:]))
    check(shards(store) == shards(os.path.join(tmp, "pipe_" + label, "rect.zarr")),
          "%s: the index form's shards differ from --pipeline's" % label)
    # without the record: one line, the space rebuilt from the field, the same shards
    os.rename(os.path.join(out, "space_t.json"), os.path.join(tmp, "away.json"))
    shutil.rmtree(store)
    r3, read_rebuilt, _ = write(out, idx, trace=trace and trace + ".rebuilt")
    os.rename(os.path.join(tmp, "away.json"), os.path.join(out, "space_t.json"))
    check(r3.returncode == 0, "%s without the record: %d %s" % (label, r3.returncode, r3.stderr[-400:]))
    lines = [s for s in r3.stdout.splitlines() if REBUILT in s]
    check(len(lines) == 1 and "no " in lines[0] and "space_t.json" in lines[0],
          "%s without the record: %r" % (label, r3.stdout[-400:]))
    check(r3.returncode != 0 or shards(store) == shards(os.path.join(tmp, "pipe_" + label, "rect.zarr")),
          "%s: the rebuilt space wrote other shards" % label)
    if STRACE:
        check(read_rec is not None and read_pipe is not None and 0 < read_rec <= read_pipe + 65536,
              "%s: the index form read %s bytes of the input, --pipeline %s" % (label, read_rec, read_pipe))
        check(read_rebuilt is not None and read_rec is not None and read_rebuilt >= read_rec + x.nbytes,
              "%s: rebuilding read %s bytes, the record %s (field %d)" % (label, read_rebuilt, read_rec, x.nbytes))

# a touched input, other sampling options: the record does not hold, one line each, the same store
w = grid[0] if grid else rows[0]
idx = (w["comp_idx"], w["filt_idx"], w["ser_idx"])
ref = shards(os.path.join(tmp, "pipe_grid", "rect.zarr")) if grid else None
for label, extra, why in (("limit", ["--eval-data-size-limit", "300KB"], "sampling options differ"),
                          ("touched", [], "input changed")):
    out = os.path.join(tmp, "stale_" + label)
    shutil.copytree(SWEEP, out)
    if label == "touched":
        st = os.stat(SRC)
        os.utime(SRC, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))
    r, _, store = write(out, idx, extra)
    lines = [s for s in r.stdout.splitlines() if REBUILT in s]
    if label == "limit":  # another sample may build another space: refused then, as before the record
        check(len(lines) == 1 and why in lines[0], "%s: %r" % (label, r.stdout[:600]))
        check(r.returncode == 0 or "differs from the one the sweep used" in r.stderr,
              "%s: %d %s" % (label, r.returncode, r.stderr[-400:]))
        continue
    check(r.returncode == 0 and len(lines) == 1 and why in lines[0],
          "%s: %d %r %s" % (label, r.returncode, r.stdout[:600], r.stderr[-300:]))
    check(ref is None or shards(store) == ref, "%s: other shards than the record's" % label)

# other class flags: another space, refused with the fingerprints as before
r, _ = run(["compress_with_optimal", SRC, os.path.join(tmp, "stale_touched"), "t", *idx, "--compressor-class",
            "lz4", "--filter-class", "bitround,none", "--serializer-class", "none"])
check(r.returncode != 0 and "differs from the one the sweep used" in r.stderr,
      "other class flags: %d %s" % (r.returncode, r.stderr[-400:]))
shutil.rmtree(tmp, ignore_errors=True)
finish("index_form")
