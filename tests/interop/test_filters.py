"""Our array->array filters and the ZFPY serializer against numcodecs 0.11 and
zfpy (Debian), both ways.

On real fields from libncarg-data (float32 and float64, 2-D and 3-D) and on
edge data (NaN, +-Inf, subnormals, zeros, constant chunks, one element, empty
chunk):
  - delta, bitround, quantize, fixedscaleoffset: our encoded bytes equal
    numcodecs' bit for bit (several settings each, both float types, delta on
    integer types too); numcodecs' encoded bytes decode here to numcodecs'
    own decoding, bit for bit;
  - asinh.rs and fixed-offset-scale.rs: the formula and the round trip;
    non-finite input to asinh is rejected;
  - transpose: equals numpy.transpose, and back;
  - ZFPY: our streams equal numcodecs' (the same libzfp drives both), decode
    in numcodecs.ZFPY and zfpy.decompress_numpy to our values, zfpy streams
    decode here, for the three modes, 1-4 dimensions and four types; a chunk
    of 5 dimensions round-trips; fixed accuracy stays within the tolerance.

Run by ctest with DCTK_CODEC_TOOL, DCTK_PYTHON and DCTK_NCARG set.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np
import numcodecs
import zfpy
from numcodecs.zfpy import ZFPY

TOOL = os.environ["DCTK_CODEC_TOOL"]
TMP = tempfile.mkdtemp(prefix="dctk-filt-")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import checks  # noqa: E402
from checks import check, ncarg_field as field  # noqa: E402
from pipeline_ref import zfp_folded  # noqa: E402



def tool(mode, codec, arr_dtype, shape, data):
    """Run dctk_codec_tool; returns (exit code, output bytes)."""
    src, dst = os.path.join(TMP, "in.bin"), os.path.join(TMP, "out.bin")
    with open(src, "wb") as f:
        f.write(data)
    shp = ",".join(str(s) for s in shape) if len(shape) else "1"
    r = subprocess.run([TOOL, mode, json.dumps(codec), np.dtype(arr_dtype).str, shp, src, dst],
                       capture_output=True)
    if r.returncode != 0:
        return r.returncode, r.stderr.decode()
    with open(dst, "rb") as f:
        return 0, f.read()


def real_fields():
    t = field("cdf/meccatemp.cdf", "t").astype("<f4")                 # 3-D float32
    yield "meccatemp.t", t
    yield "pop.t", field("cdf/pop.nc", "t").astype("<f4")[:96, :160]   # 2-D float32, with fill values
    yield "seam.lat2d", field("cdf/seam.nc", "lat2d").astype("<f8")    # 2-D float64
    yield "hgt.HGT_f8", field("cdf/hgt.nc", "HGT").astype("<f8")[:6]    # 3-D float64


def edge_fields():
    sp = np.array([np.nan, np.inf, -np.inf, 1e-45, -1e-44, 1.17e-38, 0.0, -0.0,
                   3.4028235e38, -3.4028235e38, 1.0, -1.0, 0.5, 1.5, 2.5, -2.5], dtype="<f4")
    yield "specials_f32", np.tile(sp, 8).reshape(8, 16)
    yield "specials_f64", np.tile(sp.astype("<f8"), 4)
    yield "subnormals_f64", np.arange(1, 257, dtype="<f8") * 5e-324
    yield "subnormals_f32", (np.arange(1, 257, dtype="<f4") * np.float32(1.4e-45)).reshape(16, 16)
    yield "zeros_f32", np.zeros((4, 8, 8), dtype="<f4")
    yield "constant_f64", np.full((32, 32), 273.15, dtype="<f8")
    yield "one_f32", np.array([42.5], dtype="<f4")
    yield "empty_f64", np.zeros(0, dtype="<f8")


def same_bytes(a, b):
    return isinstance(a, (bytes, bytearray)) and bytes(a) == bytes(b)


def np_codec(zname, conf):
    return numcodecs.get_codec(dict(conf, id=zname.split(".", 1)[1]))


def cross_check(name, x, zname, conf):
    """Bit-identical encode, and decode both ways, against numcodecs."""
    codec = {"name": zname, "configuration": conf}
    nc = np_codec(zname, conf)
    what = f"{zname} {json.dumps(conf)} on {name}"
    rc, ours = tool("encode", codec, x.dtype, x.shape, x.tobytes())
    if x.size == 0:  # numcodecs' Delta cannot index an empty chunk; we give empty output
        check(rc == 0 and ours == b"", what + ": empty chunk")
        return
    ref = np.ascontiguousarray(nc.encode(x.copy()))
    check(rc == 0 and same_bytes(ours, ref.tobytes()), what + ": encoded bytes differ" + ("" if rc == 0 else f" ({ours})"))
    ref_dec = np.asarray(nc.decode(ref.tobytes()))  # bitround hands back bytes: compare bytes
    rc, dec = tool("decode", codec, x.dtype, x.shape, ref.tobytes())
    check(rc == 0 and same_bytes(dec, ref_dec.tobytes()), what + ": decode of numcodecs bytes differs")
    if rc == 0 and same_bytes(ours, ref.tobytes()):
        back = np.asarray(nc.decode(ours))
        check(back.tobytes() == dec, what + ": numcodecs decode of our bytes differs")


def filter_settings(x):
    dt = x.dtype.str
    f32 = x.dtype == np.float32
    finite = x[np.isfinite(x)] if x.size else x
    mean = float(finite.astype("<f8").mean()) if finite.size else 0.0
    if abs(mean) > 1e15:  # keep the integer offset below inside int64
        mean = 0.0
    other = "<f8" if f32 else "<f4"
    yield "numcodecs.delta", {"dtype": dt, "astype": dt}
    yield "numcodecs.delta", {"dtype": dt, "astype": other}
    for kb in ([0, 7, 23] if f32 else [1, 30, 52]):
        yield "numcodecs.bitround", {"keepbits": kb}
    for d in ([1, 7] if f32 else [2, 15]):
        yield "numcodecs.quantize", {"digits": d, "dtype": dt, "astype": dt}
    yield "numcodecs.quantize", {"digits": 4, "dtype": dt, "astype": other}
    # int vs float scalars on purpose: numpy promotes them differently
    yield "numcodecs.fixedscaleoffset", {"offset": round(mean, 3), "scale": 100, "dtype": dt, "astype": "<i4"}
    yield "numcodecs.fixedscaleoffset", {"offset": int(mean), "scale": 1000.0, "dtype": dt, "astype": dt}
    yield "numcodecs.fixedscaleoffset", {"offset": 0, "scale": 70000, "dtype": dt, "astype": dt}
    yield "numcodecs.fixedscaleoffset", {"offset": round(mean, 1), "scale": 0.5, "dtype": dt, "astype": "<i2"}


def int_fields():
    rng = np.random.default_rng(7)
    t = field("cdf/meccatemp.cdf", "t")
    yield "meccatemp_i2", np.round(t * 100).astype("<i2")
    yield "walk_i4", np.cumsum(rng.integers(-1000, 1000, 5000)).astype("<i4")
    yield "wrap_u1", rng.integers(0, 256, 3000).astype("|u1")
    yield "wrap_i1", rng.integers(-128, 128, 3000).astype("|i1")
    big = rng.integers(0, 2**63, 1000, dtype="<u8") * 2
    big[0] = 12345  # numpy refuses to assign a first element above 2^63 into int64
    yield "big_u8", big
    yield "big_i8", rng.integers(-2**62, 2**62, 1000, dtype="<i8")
    yield "u2", rng.integers(0, 65536, 1000).astype("<u2")
    yield "u4", rng.integers(0, 2**32, 1000).astype("<u4")


def int_settings(x):
    dt = x.dtype.str
    yield {"dtype": dt, "astype": dt}
    narrower = {"<i2": "|i1", "<i4": "<i2", "|u1": "|i1", "|i1": "|u1", "<u8": "<i8", "<i8": "<i4",
                "<u2": "<f4", "<u4": "<f8"}[dt]
    yield {"dtype": dt, "astype": narrower}


def test_numcodecs_filters():
    for name, x in list(real_fields()) + list(edge_fields()):
        for zname, conf in filter_settings(x):
            cross_check(name, x, zname, conf)
    for name, x in int_fields():
        for conf in int_settings(x):
            cross_check(name, x, "numcodecs.delta", conf)
        cross_check(name, x, "numcodecs.fixedscaleoffset", {"offset": 3, "scale": 2, "dtype": x.dtype.str,
                                                          "astype": x.dtype.str})
        cross_check(name, x, "numcodecs.fixedscaleoffset", {"offset": 1.5, "scale": 2, "dtype": x.dtype.str,
                                                          "astype": "<f8"})


def rs(id_, **kw):
    return {"name": "any-numcodecs.array-array", "configuration": dict(id=id_, _version="1.0.0", **kw)}


def test_rs_codecs():
    for name, x in real_fields():
        x = x[np.isfinite(x)]
        x = x[np.abs(x) < 1e30]  # pop.t fill values would dominate the tolerance
        ax = np.abs(x)
        f32 = x.dtype == np.float32
        w = float(np.quantile(ax, 0.01)) or 1.0
        c = rs("asinh.rs", linear_width=w)
        rc, enc = tool("encode", c, x.dtype, x.shape, x.tobytes())
        e = np.frombuffer(enc, x.dtype) if rc == 0 else None
        want = w * np.arcsinh(x.astype("<f8") / w)
        tol = 4e-7 if f32 else 1e-15
        check(e is not None and np.all(np.abs(e - want) <= tol * np.maximum(np.abs(want), w)),
              f"asinh formula on {name}")
        rc, dec = tool("decode", c, x.dtype, x.shape, enc if rc == 0 else b"")
        d = np.frombuffer(dec, x.dtype) if rc == 0 else None
        rtol = 1e-5 if f32 else 1e-12
        check(d is not None and np.all(np.abs(d - x) <= rtol * np.maximum(ax, w)), f"asinh round trip on {name}")
        for off, sc in [(float(x.mean()), float(x.std()) or 1.0), (float(x.min()), float(x.max() - x.min()) or 1.0)]:
            c = rs("fixed-offset-scale.rs", offset=off, scale=sc)
            rc, enc = tool("encode", c, x.dtype, x.shape, x.tobytes())
            t = x.dtype.type
            want = (x - t(off)) * (t(1) / t(sc))
            check(rc == 0 and enc == want.astype(x.dtype).tobytes(), f"fixed-offset-scale formula on {name}")
            rc, dec = tool("decode", c, x.dtype, x.shape, enc if rc == 0 else b"")
            d = np.frombuffer(dec, x.dtype) if rc == 0 else None
            check(d is not None and np.allclose(d, x, rtol=4e-6 if f32 else 1e-13, atol=abs(sc) * (1e-6 if f32 else 1e-14)),
                  f"fixed-offset-scale round trip on {name}")
    bad = np.array([1.0, np.nan, 2.0], dtype="<f4")
    rc, _ = tool("encode", rs("asinh.rs", linear_width=1.0), bad.dtype, bad.shape, bad.tobytes())
    check(rc == 3, "asinh must reject NaN with the codec-error exit code")
    bad = np.array([1.0, np.inf], dtype="<f8")
    rc, _ = tool("decode", rs("asinh.rs", linear_width=1.0), bad.dtype, bad.shape, bad.tobytes())
    check(rc == 3, "asinh decode must reject Inf")


def test_transpose():
    x = field("cdf/meccatemp.cdf", "t").astype("<f4")
    for order in ([2, 0, 1], [1, 2, 0], [0, 1, 2], [2, 1, 0]):
        c = {"name": "transpose", "configuration": {"order": order}}
        rc, enc = tool("encode", c, x.dtype, x.shape, x.tobytes())
        check(rc == 0 and enc == np.ascontiguousarray(np.transpose(x, order)).tobytes(), f"transpose {order}")
        rc, dec = tool("decode", c, x.dtype, x.shape, enc if rc == 0 else b"")
        check(rc == 0 and dec == x.tobytes(), f"transpose {order} back")


def zfp_inputs():
    t = field("cdf/meccatemp.cdf", "t").astype("<f4")          # (31, 40, 49)
    v = field("nug/rectilinear_grid_3D.nc", "t").astype("<f8")  # (1, 17, 96, 192)
    yield "1d_f32", t[0, 0].copy()
    yield "2d_f32", t[0].copy()
    yield "3d_f32", t
    yield "4d_f32", t.reshape(31, 2, 20, 49).copy()
    yield "2d_f64", v[0, 0].copy()
    yield "3d_f64", v[0, :5].copy()
    yield "4d_f64", v[:, :3, :40, :50].copy()
    yield "1d_f64_subnormals", np.arange(1, 301, dtype="<f8") * 5e-324
    yield "2d_f32_zeros", np.zeros((9, 13), dtype="<f4")
    yield "3d_f64_constant", np.full((5, 6, 7), -3.25, dtype="<f8")
    yield "1d_f32_one", np.array([42.5], dtype="<f4")
    yield "2d_i32", np.round(t[3] * 10).astype("<i4")
    yield "3d_i64", np.round(v[0, :3] * 1000).astype("<i8")


def zfp_settings(x):
    span = float(np.ptp(x)) if x.size else 1.0
    f = x.dtype.kind == "f"
    for tol in ([0.5, 0.0625] if f else [1.0]):
        yield {"mode": 4, "tolerance": tol * max(span, 1e-300) / 100 if span < 1 else tol, "rate": -1, "precision": -1}
    for rate in (8, 32):
        yield {"mode": 2, "tolerance": -1, "rate": rate, "precision": -1}
    for prec in (8, 32):
        yield {"mode": 3, "tolerance": -1, "rate": -1, "precision": prec}
    yield {"mode": 4, "tolerance": -1, "rate": -1, "precision": -1}  # negative: reversible


def test_zfpy():
    for name, x in zfp_inputs():
        for conf in zfp_settings(x):
            what = f"zfpy {json.dumps(conf)} on {name} {x.shape}"
            c = {"name": "numcodecs.zfpy", "configuration": conf}
            nc = ZFPY(**conf)
            ref = nc.encode(zfp_folded(x))
            rc, ours = tool("encode", c, x.dtype, x.shape, x.tobytes())
            check(rc == 0 and ours == bytes(ref), what + ": stream differs from numcodecs'")
            if rc != 0:
                continue
            theirs = np.asarray(nc.decode(ours))
            rc, dec = tool("decode", c, x.dtype, x.shape, ours)
            check(rc == 0 and dec == theirs.astype(x.dtype).tobytes() and theirs.size == x.size,
                  what + ": numcodecs decodes our stream differently")
            check(zfpy.decompress_numpy(ours).tobytes() == dec, what + ": zfpy decodes our stream differently")
            kw = {"tolerance": conf["tolerance"]} if conf["mode"] == 4 else \
                 {"rate": conf["rate"]} if conf["mode"] == 2 else {"precision": conf["precision"]}
            zs = zfpy.compress_numpy(x, **kw)
            rc, dec2 = tool("decode", c, x.dtype, x.shape, zs)
            check(rc == 0 and dec2 == zfpy.decompress_numpy(zs).tobytes(), what + ": zfpy stream decodes differently here")
            if conf["mode"] == 4 and x.dtype.kind == "f":  # zfp's accuracy mode is for floats
                err = np.max(np.abs(np.frombuffer(dec, x.dtype).astype("<f8") - x.reshape(-1).astype("<f8")))
                bound = conf["tolerance"] if conf["tolerance"] >= 0 else 0.0
                check(err <= bound, what + f": error {err} above tolerance {bound}")
    # five dimensions: the leading two fold into zfp's w axis
    x = field("cdf/meccatemp.cdf", "t").astype("<f4")[:30].reshape(3, 10, 2, 20, 49)
    c = {"name": "numcodecs.zfpy", "configuration": {"mode": 4, "tolerance": 0.01, "rate": -1, "precision": -1}}
    rc, enc = tool("encode", c, x.dtype, x.shape, x.tobytes())
    folded = zfpy.decompress_numpy(enc) if rc == 0 else None
    check(folded is not None and folded.shape == (30, 2, 20, 49), "5-D chunk folds to 4-D")
    rc, dec = tool("decode", c, x.dtype, x.shape, enc if rc == 0 else b"")
    check(rc == 0 and np.max(np.abs(np.frombuffer(dec, x.dtype) - x.reshape(-1))) <= 0.01, "5-D round trip")
    # (70000, 3, 3) is more than zfp's 3-D header holds (2^16 a side): coded as (210000, 3)
    x = np.sin(np.arange(70000 * 9, dtype="<f4") / 97).reshape(70000, 3, 3)
    rc, enc = tool("encode", c, x.dtype, x.shape, x.tobytes())
    check(rc == 0 and zfpy.decompress_numpy(enc).shape == (210000, 3), "(70000, 3, 3) folds to (210000, 3)")
    # zfpy_flat, the Python tool's other zfpy: every chunk one 1-D field; any zfp stream of the
    # chunk's size decodes under either name
    x = field("cdf/meccatemp.cdf", "t").astype("<f4")[:4]
    for name in ("numcodecs.zfpy_flat", "numcodecs.zfpy"):
        conf = {"mode": 2, "tolerance": -1, "rate": 8, "precision": -1}
        flat = bytes(ZFPY(**conf).encode(x.reshape(-1)))
        if name == "numcodecs.zfpy_flat":
            rc, enc = tool("encode", {"name": name, "configuration": conf}, x.dtype, x.shape, x.tobytes())
            check(rc == 0 and enc == flat, "zfpy_flat: numcodecs' ZFPY of the chunk as 1-D")
        rc, dec = tool("decode", {"name": name, "configuration": conf}, x.dtype, x.shape, flat)
        check(rc == 0 and dec == ZFPY(**conf).decode(flat).tobytes(), f"{name} decodes a 1-D stream of the chunk")
    # a stream for another type or size is rejected, not misread
    x32 = field("cdf/meccatemp.cdf", "t").astype("<f4")[0]
    zs = zfpy.compress_numpy(x32, tolerance=0.1)
    rc, _ = tool("decode", c, "<f8", x32.shape, zs)
    check(rc == 3, "zfp stream of float32 decoded as float64 must be rejected")
    rc, _ = tool("decode", c, "<f4", (x32.shape[0] + 1, x32.shape[1]), zs)
    check(rc == 3, "zfp stream of another size must be rejected")
    rc, _ = tool("decode", c, "<f4", x32.shape, zs[: len(zs) // 2])
    check(rc == 3, "truncated zfp stream must be rejected")


if __name__ == "__main__":
    try:
        test_numcodecs_filters()
        test_rs_codecs()
        test_transpose()
        test_zfpy()
    finally:
        shutil.rmtree(TMP, ignore_errors=True)
    for f in checks.failures:
        print("FAIL:", f, file=sys.stderr)
    print(f"{checks.checks} checks, {len(checks.failures)} failures")
    sys.exit(1 if checks.failures else 0)
