"""The Zarr writer's overhead in instructions, under callgrind: repeatable on a loaded machine.

    /usr/bin/python3 bench/zarr_instr.py BUILD_DIR [NT] [ST]

Runs tests/bench_zarr under valgrind --tool=callgrind, which then counts each
phase apart (see bench/bench_zarr.c): the raw codec (the pipeline's encode of
every inner chunk, with the chunk's generation subtracted), the data
generation over the writer's regions, and the writer at 1 and 2 threads.
Overhead = (writer - generation - raw codec) / raw codec, in user-space
instructions (the kernel's file writes and page faults are not counted here;
bench_zarr's CPU-time figures include them).
"""
import os
import shutil
import subprocess
import sys
import tempfile

from cgdump import dumps


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    if not shutil.which("valgrind"):
        sys.exit("zarr_instr: needs valgrind (apt-get install valgrind)")
    tmp = tempfile.mkdtemp(prefix="zarr_instr_")
    try:
        out = os.path.join(tmp, "cg")
        subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=" + out,
                        os.path.join(sys.argv[1], "tests", "bench_zarr"), tmp, *sys.argv[2:4]],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        d = {label: total for label, total, _ in dumps(out)}
    finally:
        shutil.rmtree(tmp)
    raw = d["raw+gen"] - d["gen"]
    gen = d["gen-shards"]
    print("Zarr writer, instructions (callgrind, user space): raw codec %.1f M; data generation %.1f M (apart)"
          % (raw / 1e6, gen / 1e6))
    print("%-8s %12s %12s %9s" % ("threads", "writer_M", "beyond_M", "overhead"))
    for n in (1, 2):
        w = d["write%d" % n] - gen
        print("%-8d %12.1f %12.1f %8.2f%%" % (n, w / 1e6, (w - raw) / 1e6, 100 * (w - raw) / raw))


if __name__ == "__main__":
    main()
