"""Compressor cost in instructions: this library against numcodecs 0.11, under callgrind.

    /usr/bin/python3 bench/codecs_instr.py BUILD_DIR [--calls 1] [--field FILE:VAR] [--quick] [--only TEXT]

Wall-clock figures on a shared virtual machine move by tens of per cent from
run to run (bench/codecs.py); instruction counts do not. Both sides run under
valgrind --tool=callgrind with collection off, switch it on around exactly
--calls encode (then decode) calls of the same real buffer after one warm-up
call, and dump the count: our harness (dctk_bench_codecs calls=N) through
client requests, numcodecs through a ctypes shim (libdctk_cgmark.so) issuing
the same requests. Start-up and the warm-up call are never counted; the cost
of the empty toggle pair is measured and subtracted on each side.

Both sides load the same Debian libraries (libblosc, libzstd, liblz4, libz,
libbz2, liblzma; numcodecs bundles none), so the instructions spent inside those
libraries ("lib" columns, from the dumps' per-object costs) should be equal, and
the rest is each wrapper's overhead. A row is flagged when ours exceeds
numcodecs' total by more than 5 %.
"""
import argparse
import ctypes
import json
import os
import shutil
import subprocess
import sys
import tempfile
import importlib.util

# bench/codecs.py, by path: its settings, labels and numcodecs constructors
_spec = importlib.util.spec_from_file_location("bench_codecs", os.path.join(os.path.dirname(__file__), "codecs.py"))
bc = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bc)
from cgdump import dumps  # noqa: E402

VALGRIND = ["valgrind", "--tool=callgrind", "--collect-atstart=no"]


def numcodecs_side(build, raw, dtype, shape, jsonl, calls):
    """Run inside valgrind: the numcodecs calls, counted like the harness's."""
    import numpy as np
    cg = ctypes.CDLL(os.path.join(build, "tests", "libdctk_cgmark.so"))
    arr = np.fromfile(raw, dtype=dtype).reshape(shape)
    cg.dctk_cg_toggle()
    cg.dctk_cg_toggle()
    cg.dctk_cg_dump(b"empty")
    with open(jsonl) as f:
        for line in f:
            c = bc.numcodecs_codec(json.loads(line))
            enc = c.encode(arr)
            cg.dctk_cg_toggle()
            for _ in range(calls):
                c.encode(arr)
            cg.dctk_cg_toggle()
            cg.dctk_cg_dump(b"enc")
            c.decode(enc)
            cg.dctk_cg_toggle()
            for _ in range(calls):
                c.decode(enc)
            cg.dctk_cg_toggle()
            cg.dctk_cg_dump(b"dec")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("build")
    ap.add_argument("--calls", type=int, default=1, help="calls counted per codec and direction")
    ap.add_argument("--field", default="/usr/share/ncarg/data/nug/rectilinear_grid_3D.nc:t")
    ap.add_argument("--quick", action="store_true", help="fewer blosc levels")
    ap.add_argument("--only", default="", help="rows whose codec and setting contain this text")
    ap.add_argument("--numcodecs-side", nargs=4, metavar=("RAW", "DTYPE", "SHAPE", "JSONL"), help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.numcodecs_side:
        raw, dtype, shape, jsonl = a.numcodecs_side
        numcodecs_side(a.build, raw, dtype, tuple(int(s) for s in shape.split(",")), jsonl, a.calls)
        return
    if not shutil.which("valgrind"):
        sys.exit("codecs_instr: needs valgrind (apt-get install valgrind)")
    arr = bc.load(a.field)
    objs = [o for o in bc.settings(arr.dtype.itemsize, a.quick) if a.only in " ".join(bc.label(o))]
    tmp = tempfile.mkdtemp(prefix="codecs_instr_")
    try:
        raw, jsonl = os.path.join(tmp, "field.raw"), os.path.join(tmp, "codecs.jsonl")
        arr.tofile(raw)
        with open(jsonl, "w") as f:
            f.writelines(json.dumps(o) + "\n" for o in objs)
        shape, dtype = ",".join(str(s) for s in arr.shape), str(arr.dtype)
        ours_cmd = VALGRIND + ["--callgrind-out-file=" + os.path.join(tmp, "ours"),
                               os.path.join(a.build, "tests", "dctk_bench_codecs"), raw, dtype, shape,
                               "calls=%d" % a.calls]
        nc_cmd = VALGRIND + ["--callgrind-out-file=" + os.path.join(tmp, "nc"), sys.executable,
                             os.path.abspath(__file__), a.build, "--calls", str(a.calls),
                             "--numcodecs-side", raw, dtype, shape, jsonl]
        with open(jsonl) as stdin:
            ours = subprocess.Popen(ours_cmd, stdin=stdin, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        nc = subprocess.Popen(nc_cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        sizes = [int(line.split()[2]) for line in ours.communicate()[0].splitlines()]
        nc_err = nc.communicate()[1]
        if ours.returncode or nc.returncode or len(sizes) != len(objs):
            sys.exit("codecs_instr: a side failed (ours %s, numcodecs %s)\n%s" % (ours.returncode, nc.returncode,
                                                                                  nc_err[-2000:]))
        od, nd = dumps(os.path.join(tmp, "ours")), dumps(os.path.join(tmp, "nc"))
    finally:
        shutil.rmtree(tmp)
    empty = nd.pop(0)
    assert empty[0] == "empty" and len(od) == len(nd) == 2 * len(objs)
    print("field %s: %s %s, %.2f MB; million instructions per call (%d counted), total and inside the "
          "compression libraries; ratio = ours / numcodecs total" % (a.field, arr.dtype, arr.shape, arr.nbytes / 1e6,
                                                                    a.calls))
    head = "%-8s %-24s %6s | %9s %8s %9s %8s %6s | %9s %8s %9s %8s %6s" % (
        "codec", "setting", "cratio", "enc ours", "lib", "enc nc", "lib", "ratio", "dec ours", "lib", "dec nc", "lib",
        "ratio")
    print(head)
    print("-" * len(head))
    over = []
    for i, obj in enumerate(objs):
        cells = []
        for k in (2 * i, 2 * i + 1):
            (_, ot, ol), (_, nt, nl) = od[k], nd[k]
            nt = max(nt - empty[1], 1)
            ratio = ot / nt
            cells.append("%9.2f %8.2f %9.2f %8.2f %5.3f%s" % (ot / 1e6 / a.calls, ol / 1e6 / a.calls, nt / 1e6 / a.calls,
                                                           nl / 1e6 / a.calls, ratio, "*" if ratio > 1.05 else " "))
            if ratio > 1.05:
                over.append("%s %s %s (%.3f)" % (*bc.label(obj), ("encode", "decode")[k % 2], ratio))
        print("%-8s %-24s %6.2f | %s | %s" % (*bc.label(obj), arr.nbytes / sizes[i], *cells))
        sys.stdout.flush()
    print("ours above numcodecs by more than 5 %% (*): %s" % (", ".join(over) if over else "none"))


if __name__ == "__main__":
    main()
