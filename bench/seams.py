#!/usr/bin/python3
"""Sweep and write throughput before and after the codec seams work (issue 16):
bench/seams.py OLD_DC_TOOLKIT NEW_DC_TOOLKIT [REPS]

Runs the same narrowed sweep (`evaluate_combos` on the 11.5 MB elevation field
of cdf/trinidad.nc, --compressor-class zstd, a 150KB sample, one thread) and the
same write (`compress_with_optimal` of that field with the pipeline the sweep
chose, --combo, no verification, one thread) with both programs, alternated
within each repetition so that load on the shared machine hits both alike,
and prints the median times side by side. It also checks that both sweeps
name the same best combo with the same space fingerprint and that both
writes produce the same chunk bytes.
"""
import hashlib
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

from benchlib import threads_flag

FIELD, VAR = "/usr/share/ncarg/data/cdf/trinidad.nc", "data"
SWEEP = ["--eval-data-size-limit", "150KB", "--compressor-class", "zstd", "--threads-per-rank", "1",
         "--override-existing-l1-error", "1e-3", "--field-to-compress", VAR]


def run(cmd):
    """(wall seconds, CPU seconds of the child): on a shared machine the CPU
    time is the steadier of the two."""
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.perf_counter() - t
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    if p.returncode:
        sys.exit(f"{' '.join(cmd)}: exit {p.returncode}\n{p.stderr[-2000:]}")
    return wall, (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)


def chunk_digest(store):
    h = hashlib.sha256()
    for root, dirs, files in os.walk(store):
        dirs.sort()
        for f in sorted(files):
            if f != "zarr.json":
                h.update(os.path.relpath(os.path.join(root, f), store).encode())
                h.update(open(os.path.join(root, f), "rb").read())
    return h.hexdigest()[:16]


def main():
    progs = {"before": sys.argv[1], "after": sys.argv[2]}
    reps = int(sys.argv[3]) if len(sys.argv) > 3 else 2
    times = {k: {"sweep": [], "write": []} for k in progs}
    best, digest = {}, {}
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(reps):
            for k, exe in progs.items():
                out = os.path.join(tmp, f"{k}{r}")
                times[k]["sweep"].append(run([exe, "evaluate_combos", FIELD, "--where-to-write", out] + SWEEP))
                b = json.load(open(os.path.join(out, f"best_{VAR}.json")))
                best[k] = (b.get("fingerprint"), b.get("comp_idx"), b.get("filt_idx"), b.get("ser_idx"))
            for k, exe in progs.items():
                out = os.path.join(tmp, f"{k}{r}")
                combo = os.path.join(tmp, f"before{r}", f"best_{VAR}.json")  # the same pipeline for both
                times[k]["write"].append(run([exe, "compress_with_optimal", FIELD, out, VAR, "--combo", combo,
                                              "--no-verify", threads_flag(exe), "1"]))
                digest[k] = chunk_digest(os.path.join(out, os.path.basename(FIELD).rsplit(".", 1)[0] + ".zarr"))
    mb = os.path.getsize(FIELD) / 1e6
    med = {k: {w: [statistics.median(x[i] for x in times[k][w]) for i in (0, 1)] for w in times[k]} for k in times}
    print(f"field {FIELD} {VAR} ({mb:.1f} MB), {reps} repetitions, medians, before and after alternated")
    print(f"{'':13} {'sweep wall s':>12} {'sweep CPU s':>12} {'write wall s':>12} {'write CPU s':>12} {'write MB/s CPU':>14}")
    for k in progs:
        (sw, sc), (ww, wc) = med[k]["sweep"], med[k]["write"]
        print(f"{k:13} {sw:12.2f} {sc:12.2f} {ww:12.3f} {wc:12.3f} {mb / wc:14.1f}")
    b, a = med["before"], med["after"]
    print(f"{'after/before':13} {a['sweep'][0] / b['sweep'][0]:12.3f} {a['sweep'][1] / b['sweep'][1]:12.3f}"
          f" {a['write'][0] / b['write'][0]:12.3f} {a['write'][1] / b['write'][1]:12.3f}")
    print(f"best combo (fingerprint, c, f, s): before {best['before']}, after {best['after']}:",
          "same" if best["before"] == best["after"] else "DIFFERENT")
    print(f"chunk bytes: before {digest['before']}, after {digest['after']}:",
          "same" if digest["before"] == digest["after"] else "DIFFERENT")


if __name__ == "__main__":
    main()
