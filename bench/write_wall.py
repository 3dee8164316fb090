#!/usr/bin/python3
"""Wall time of the small field's write, several builds and nccopy side by side:
bench/write_wall.py ROUNDS BUILD_DIR... [--verify]

The write that bench/compress.py compares with nccopy, in many short rounds for
changes that shorten the write's critical path rather than its CPU time (see
bench/write_cpu.py for that): the real field trinidad.nc `data` (libncarg-data,
11.5 MB float32), byte shuffle + zlib 1 given as --combo, 2 threads, 4 MiB inner
chunks in 16 MiB shards, --no-verify unless --verify; `nccopy -k nc4 -d 1 -s`
in the same rounds. Each round runs every writer once, in turn, so load on the
machine hits all alike; prints per writer the median and fastest wall time and
nccopy's median over it, with the load average.
"""
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

from benchlib import trinidad_write_input


def main():
    args = [a for a in sys.argv[1:] if a != "--verify"]
    if len(args) < 2:
        sys.exit(__doc__)
    rounds, builds, verify = int(args[0]), args[1:], "--verify" in sys.argv
    tmp = tempfile.mkdtemp(prefix="dctk_bench_wall_")
    try:
        src, combo = trinidad_write_input(tmp)
        out, nc = os.path.join(tmp, "out"), os.path.join(tmp, "out.nc")
        cmds = {b: [os.path.join(b, "dc_toolkit"), "compress_with_optimal", src, out, "data", "--combo", combo,
                    "--threads-per-rank", "2", "--inner-chunk-mib", "4", "--shard-mib", "16"] +
                   ([] if verify else ["--no-verify"]) for b in builds}
        cmds["nccopy"] = ["nccopy", "-k", "nc4", "-d", "1", "-s", src, nc]
        times = {k: [] for k in cmds}
        load0 = " ".join(open("/proc/loadavg").read().split()[:3])
        for _ in range(rounds):
            for k, cmd in cmds.items():
                shutil.rmtree(out, ignore_errors=True)
                if os.path.exists(nc):
                    os.remove(nc)
                t0 = time.perf_counter()
                subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
                times[k].append(time.perf_counter() - t0)
        med = {k: statistics.median(v) for k, v in times.items()}
        print("trinidad `data` 11.5 MB, shuffle + zlib 1, 2 threads, %s, %d alternated rounds; load average %s "
              "before, %s after" % ("with verification" if verify else "--no-verify", rounds, load0,
                                    " ".join(open("/proc/loadavg").read().split()[:3])))
        for k in cmds:
            print("  %-40s wall median %6.1f ms (fastest %6.1f)  nccopy median / this %.2fx" % (
                k, 1e3 * med[k], 1e3 * min(times[k]), med["nccopy"] / med[k]))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


main()
