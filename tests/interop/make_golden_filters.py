"""Writes tests/golden/filters/: small inputs and what numcodecs 0.11 (Debian)
and zfpy make of them, so that test_filters_golden checks our filters and the
ZFPY serializer against the other implementation without Python.

    /usr/bin/python3 tests/interop/make_golden_filters.py [OUT_DIR]

manifest.json lists one case per codec setting: the Zarr v3 codec object, the
input's dtype and shape, the input file, numcodecs' encoded bytes and
numcodecs' decoding of those bytes. The files are committed; rerun this only
when a case is added.
"""
import json
import os
import sys

import numcodecs
import numpy as np
from numcodecs.zfpy import ZFPY

OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "golden", "filters")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import ncarg_field as field  # noqa: E402


def inputs():
    t = field("cdf/meccatemp.cdf", "t")
    sp = np.array([np.nan, np.inf, -np.inf, 1e-45, -1e-44, 1.17e-38, 0.0, -0.0,
                   3.4028235e38, -3.4028235e38, 1.0, -1.0, 0.5, 1.5, 2.5, -2.5], dtype="<f4")
    return {
        "f32_2d": t[0, :16, :24].astype("<f4").copy(),
        "f32_3d": t[:4, :8, :12].astype("<f4").copy(),
        "f64_2d": field("cdf/seam.nc", "lat2d")[:12, :16].astype("<f8").copy(),
        "f32_edge": np.tile(sp, 4).reshape(4, 16),
        "i16": np.round(t[0, 0] * 100).astype("<i2"),
    }


def cases():
    z = lambda mode, **kw: ("numcodecs.zfpy", dict({"mode": mode, "tolerance": -1, "rate": -1, "precision": -1}, **kw))
    return [
        ("delta_f32", "f32_2d", "numcodecs.delta", {"dtype": "<f4", "astype": "<f4"}),
        ("delta_f32_f64", "f32_2d", "numcodecs.delta", {"dtype": "<f4", "astype": "<f8"}),
        ("delta_f64", "f64_2d", "numcodecs.delta", {"dtype": "<f8", "astype": "<f8"}),
        ("delta_i16_i8", "i16", "numcodecs.delta", {"dtype": "<i2", "astype": "|i1"}),
        ("delta_edge", "f32_edge", "numcodecs.delta", {"dtype": "<f4", "astype": "<f4"}),
        ("bitround_f32_7", "f32_2d", "numcodecs.bitround", {"keepbits": 7}),
        ("bitround_f64_30", "f64_2d", "numcodecs.bitround", {"keepbits": 30}),
        ("bitround_edge_3", "f32_edge", "numcodecs.bitround", {"keepbits": 3}),
        ("quantize_f32_3", "f32_2d", "numcodecs.quantize", {"digits": 3, "dtype": "<f4", "astype": "<f4"}),
        ("quantize_f64_10", "f64_2d", "numcodecs.quantize", {"digits": 10, "dtype": "<f8", "astype": "<f8"}),
        ("quantize_f32_f64", "f32_2d", "numcodecs.quantize", {"digits": 2, "dtype": "<f4", "astype": "<f8"}),
        ("quantize_edge_1", "f32_edge", "numcodecs.quantize", {"digits": 1, "dtype": "<f4", "astype": "<f4"}),
        ("fso_f32_i4", "f32_2d", "numcodecs.fixedscaleoffset",
         {"offset": 273.15, "scale": 100, "dtype": "<f4", "astype": "<i4"}),
        ("fso_f32_int_scale_f64", "f32_2d", "numcodecs.fixedscaleoffset",
         {"offset": 250, "scale": 70000, "dtype": "<f4", "astype": "<f4"}),
        ("fso_f64_u1", "f64_2d", "numcodecs.fixedscaleoffset",
         {"offset": 20.0, "scale": 2.5, "dtype": "<f8", "astype": "|u1"}),
        ("fso_i16", "i16", "numcodecs.fixedscaleoffset", {"offset": 3, "scale": 2, "dtype": "<i2", "astype": "<i2"}),
        ("zfpy_accuracy_3d",  "f32_3d") + z(4, tolerance=0.1),
        ("zfpy_rate_2d", "f64_2d") + z(2, rate=16),
        ("zfpy_precision_2d", "f32_2d") + z(3, precision=16),
        ("zfpy_reversible_3d", "f32_3d") + z(4),
    ]


def encode(zname, conf, x):
    if zname == "numcodecs.zfpy":
        c = ZFPY(**conf)
        enc = bytes(c.encode(x))
        return enc, np.asarray(c.decode(enc)).tobytes()
    c = numcodecs.get_codec(dict(conf, id=zname.split(".", 1)[1]))
    enc = np.ascontiguousarray(c.encode(x.copy())).tobytes()
    return enc, np.asarray(c.decode(enc)).tobytes()


def main():
    os.makedirs(OUT, exist_ok=True)
    ins = inputs()
    for name, x in ins.items():
        with open(os.path.join(OUT, f"in_{name}.bin"), "wb") as f:
            f.write(x.tobytes())
    manifest = []
    for name, inp, zname, conf in cases():
        x = ins[inp]
        enc, dec = encode(zname, conf, x)
        for kind, data in (("enc", enc), ("dec", dec)):
            with open(os.path.join(OUT, f"{kind}_{name}.bin"), "wb") as f:
                f.write(data)
        manifest.append({"name": name, "codec": {"name": zname, "configuration": conf}, "dtype": x.dtype.str,
                         "shape": list(x.shape), "input": f"in_{inp}.bin", "encoded": f"enc_{name}.bin",
                         "decoded": f"dec_{name}.bin"})
    with open(os.path.join(OUT, "manifest.json"), "w") as f:
        json.dump({"generator": "tests/interop/make_golden_filters.py", "numcodecs": numcodecs.__version__,
                   "numpy": np.__version__, "cases": manifest}, f, indent=1)
        f.write("\n")
    print(f"{len(manifest)} cases in {OUT}")


if __name__ == "__main__":
    main()
