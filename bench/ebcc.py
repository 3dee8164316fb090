#!/usr/bin/python3
"""EBCC benchmark: bench/ebcc.py BUILD_DIR   (EBCC_REF_LIB=/path/libh5z_ebcc.so)

On real float32 fields of libncarg-data (each one chunk, EBCC's tile the
whole field, as the Python tool's compute_chunks picks it for fields this
size), at the same absolute bounds (1e-2, 1e-3, 1e-4, 1e-6 of the field's range,
and the Python tool's max_error_target 1e-2), side by side:
  - dctk.ebcc            our EBCC-style serializer (error_bound = the bound),
  - EBCC (reference)     spcl/EBCC's ebcc_encode/ebcc_decode through its
                         arglist [h, w, base_cr 2, max_error_target, bound],
                         a build named by EBCC_REF_LIB (column left out when
                         there is none),
  - ebcc_filter (ours)   our writer of EBCC's format, same arglist.
Each: compression ratio, max |error| of the decoded field (decoded by the
reference for the reference's streams, by us for ours), and encode / decode
CPU milliseconds (best of 3; ours through dctk_codec_tool, whose run on the
plain bytes serializer is subtracted as process overhead; the reference
in-process through ctypes). "over" marks an error above the bound,
"refused" a bound our EBCC writer cannot keep.
"""
import json
import os
import resource
import struct
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "interop"))
from checks import ncarg_field  # noqa: E402

build = sys.argv[1] if len(sys.argv) > 1 else "build"
TOOL = os.path.join(build, "tests", "dctk_codec_tool")
TMP = tempfile.mkdtemp(prefix="dctk-bench-ebcc-")
FIELDS = [("cdf/hgt.nc", "HGT", lambda a: a[0]), ("nug/HSURF_regional_model_0.44deg.nc", "HSURF", lambda a: a[0]),
          ("nug/orog_mod1_rectilinear_grid_2D.nc", "orog", None), ("cdf/chi200_ud_smooth.nc", "CHI", None),
          ("cdf/ice5g_21k_1deg.nc", "Topo", None), ("cdf/uv300.nc", "U", lambda a: a[0])]
os.environ["EBCC_LOG_LEVEL"] = "4"


def child_cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def run_tool(mode, obj, shape, src, dst):
    t0 = child_cpu()
    r = subprocess.run([TOOL, mode, json.dumps(obj), "float32", ",".join(map(str, shape)), src, dst],
                       capture_output=True, text=True)
    return r.returncode, r.stderr.strip(), child_cpu() - t0


def ours(obj, x, overhead):
    src, enc, dec = (os.path.join(TMP, n) for n in ("x", "enc", "dec"))
    x.tofile(src)
    te = td = 1e9
    for _ in range(3):
        rc, msg, t = run_tool("encode", obj, x.shape, src, enc)
        if rc:
            return None
        te = min(te, t)
        rc, msg, t = run_tool("decode", obj, x.shape, enc, dec)
        td = min(td, t)
    y = np.fromfile(dec, "<f4").reshape(x.shape)
    return os.path.getsize(enc), y, max(te - overhead, 0), max(td - overhead, 0)


def reference(ref, x, args):
    te = td = 1e9
    for _ in range(3):
        t0 = time.process_time()
        enc = ref.encode(x, args)
        te = min(te, time.process_time() - t0)
        t0 = time.process_time()
        y = ref.decode(enc)
        td = min(td, time.process_time() - t0)
    return len(enc), y.reshape(x.shape), te, td


def arglist(h, w, bound):
    f = lambda v: struct.unpack("<I", struct.pack("<f", v))[0]
    return [h, w, f(2.0), 1, f(bound)]


def cell(res, x, bound):
    if res is None:
        return "refused"
    n, y, te, td = res
    err = float(np.max(np.abs(y.astype("f8") - x.astype("f8"))))
    return "%7.1f %9.3g%s %7.1f %7.1f" % (x.nbytes / n, err, " over" if err > bound else "     ", te * 1e3, td * 1e3)


def main():
    lib = os.environ.get("EBCC_REF_LIB", "")
    ref = None
    if lib and os.path.exists(lib):
        from ebcc_ref import Ref
        ref = Ref(lib)
    head = "%7s %9s      %7s %7s" % ("ratio", "max err", "enc ms", "dec ms")
    print("%-22s %-9s | %-38s | %-38s | %-38s" % ("field (shape)", "bound", "dctk.ebcc", "EBCC (reference)" if ref else
                                                  "EBCC (reference): no EBCC_REF_LIB", "ebcc_filter (ours)"))
    print("%-22s %-9s | %s | %s | %s" % ("", "", head, head, head))
    for path, var, pick in FIELDS:
        a = ncarg_field(path, var)
        x = np.ascontiguousarray((pick(a) if pick else a).astype("<f4"))
        if not np.all(np.isfinite(x)) or x.ndim != 2:
            print("%s %s: skipped (non-finite values or not 2-D)" % (path, var))
            continue
        h, w = x.shape
        src = os.path.join(TMP, "x")
        x.tofile(src)
        overhead = min(run_tool("encode", {"name": "bytes"}, x.shape, src, os.path.join(TMP, "b"))[2] for _ in range(3))
        r = float(x.max() - x.min())
        for label, bound in (("1e-2 R", 1e-2 * r), ("1e-3 R", 1e-3 * r), ("1e-4 R", 1e-4 * r), ("1e-6 R", 1e-6 * r),
                             ("1e-2", 1e-2)):
            mine = ours({"name": "dctk.ebcc", "configuration": {"error_bound": bound}}, x, overhead)
            args = arglist(h, w, bound)
            theirs = reference(ref, x, args) if ref else None
            filt = ours({"name": "any-numcodecs.array-bytes", "configuration": {"id": "ebcc_filter", "arglist": args}},
                        x, overhead)
            print("%-22s %-9s | %s | %s | %s" % ("%s %dx%d" % (var, h, w), label, cell(mine, x, bound),
                                                 cell(theirs, x, bound) if ref else "-", cell(filt, x, bound)))
            sys.stdout.flush()


main()
