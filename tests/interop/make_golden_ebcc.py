"""Writes tests/golden/ebcc: streams of the reference EBCC (public repository
spcl/EBCC, its ebcc_filter numcodecs codec) for test_ebcc_golden.

Needs a build of the reference library (libh5z_ebcc.so, built from EBCC's
public source against Debian's OpenJPEG and zstd; neither the build nor the
library belongs to this repository): EBCC_REF_LIB=/path/to/libh5z_ebcc.so.
Each case is a real float32 field of libncarg-data (a block of it, to keep
the files small), encoded as the Python tool's EBCCZarrFilter does
(populate_config from the arglist, then ebcc_encode), and decoded by the
reference (ebcc_decode): our decoder must give exactly those values.
"""
import json
import os
import struct
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import ncarg_field as field  # noqa: E402
from ebcc_ref import Ref  # noqa: E402

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "golden", "ebcc")


def bits(f):
    return struct.unpack("<I", struct.pack("<f", f))[0]


def arglist(h, w, atol, base_cr=2.0):
    # EBCC_Filter(base_cr, height, width, residual_opt=("max_error_target", atol))
    return [h, w, bits(base_cr), 1, bits(atol)]


def cases():
    hgt = field("cdf/hgt.nc", "HGT")[0, :64, :128].astype("<f4")
    u = field("cdf/uv300.nc", "U")[0, :, :64].astype("<f4")
    orog = field("nug/orog_mod1_rectilinear_grid_2D.nc", "orog")[:64, :96].astype("<f4")
    t = field("cdf/Tstorm.cdf", "t")[:2].astype("<f4")  # two 33 x 36 tiles: a 66 x 36 image
    chi = field("cdf/chi200_ud_smooth.nc", "CHI")[:64, :64].astype("<f4")
    for name, a in (("hgt", hgt), ("u300", u), ("orog", orog), ("tstorm", t), ("chi", chi)):
        r = float(a.max() - a.min())
        h, w = a.shape[-2], a.shape[-1]
        for tag, atol in (("1e-2R", 1e-2 * r), ("1e-3R", 1e-3 * r)):
            yield "%s_%s" % (name, tag), a, arglist(h, w, atol), atol, False
        # fields this small get a base layer that meets the bound on its own
        # (the reference lets 1e-6 of the points miss it, i.e. none): these
        # cases let 5 % miss it (EBCC_INIT_BASE_ERROR_QUANTILE) and keep the
        # residual layer (EBCC_DISABLE_PURE_BASE_COMPRESSION_FALLBACK), so
        # that its SPIHT layer is decoded too
        for tag, atol in (("1e-3R_res", 1e-3 * r), ("1e-4R_res", 1e-4 * r)):
            yield "%s_%s" % (name, tag), a, arglist(h, w, atol), atol, True
    const = np.full((32, 32), 273.15, "<f4")
    yield "constant", const, arglist(32, 32, 1e-2), 1e-2, False


def main():
    ref = Ref(os.environ["EBCC_REF_LIB"])
    os.makedirs(OUT, exist_ok=True)
    manifest = []
    for name, a, args, atol, residual in cases():
        a = np.ascontiguousarray(a)
        if residual:
            os.environ["EBCC_DISABLE_PURE_BASE_COMPRESSION_FALLBACK"] = "1"
            os.environ["EBCC_INIT_BASE_ERROR_QUANTILE"] = "0.05"
        else:
            os.environ.pop("EBCC_DISABLE_PURE_BASE_COMPRESSION_FALLBACK", None)
            os.environ.pop("EBCC_INIT_BASE_ERROR_QUANTILE", None)
        enc = ref.encode(a, args)
        dec = ref.decode(enc)
        assert dec.size == a.size, name
        for suffix, data in (("in", a.tobytes()), ("ebcc", enc), ("out", dec.tobytes())):
            with open(os.path.join(OUT, "%s.%s" % (name, suffix)), "wb") as f:
                f.write(data)
        err = float(np.max(np.abs(dec.astype("f8") - a.reshape(-1).astype("f8"))))
        manifest.append({"name": name, "residual_layer": residual, "dtype": "float32", "shape": list(a.shape), "arglist": args,
                         "max_error_target": atol, "input": name + ".in", "encoded": name + ".ebcc",
                         "decoded": name + ".out", "reference_max_error": err})
        print("%-16s %7d B -> %6d B  max error %.3g (target %.3g)" % (name, a.nbytes, len(enc), err, atol))
    with open(os.path.join(OUT, "manifest.json"), "w") as f:
        json.dump({"source": "spcl/EBCC ebcc_encode/ebcc_decode through its arglist (populate_config)",
                   "cases": manifest}, f, indent=1)


if __name__ == "__main__":
    main()
