"""numcodecs-wasm's Zfp ("zfp.rs" under any-numcodecs.array-bytes) against zfpy.

No build of numcodecs-wasm runs here (it is a WebAssembly component from
PyPI, which this machine cannot reach), so the reference streams are built
by hand from what the public numcodecs-zfp source writes (docs/codecs.md):
a postcard header (dtype index, shape, version "0.2.0") followed by a zfp
stream whose zfp header has no field metadata. The zfp part comes from
Debian's zfpy, an implementation we did not write:

  - reference streams: zfpy compresses the squeezed array with a full header;
    the 52 metadata bits after the 32-bit magic are cut out of the bit
    stream and the postcard header put in front. Our decoder must give
    exactly zfpy.decompress_numpy's values.
  - our streams: the postcard header is checked byte for byte, the metadata
    bits of a zfpy stream of the same field are put back, and zfpy must
    decode them to exactly our decoded values. Same libzfp, same
    parameters: the zfp bits must equal zfpy's too.
Also: truncated and mismatched streams are refused (exit 3), non-finite input
is refused in "deny" mode. Real fields from libncarg-data.
"""
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import zfpy

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import check, finish, ncarg_field as field  # noqa: E402
from zfprs_ref import cut_meta, meta_of, postcard, put_meta, zfpy_compress  # noqa: E402

TOOL = os.environ["DCTK_CODEC_TOOL"]
TMP = tempfile.mkdtemp(prefix="dctk-zfprs-")
ZFPY_MODE = {"fixed-rate": ("rate", "rate"), "fixed-precision": ("precision", "precision"),
             "fixed-accuracy": ("tolerance", "tolerance")}


def codec(mode, value, non_finite="deny"):
    return {"name": "any-numcodecs.array-bytes",
            "configuration": {"id": "zfp.rs", "mode": mode, ZFPY_MODE[mode][0]: value,
                              "non_finite": non_finite, "_version": "0.2.0"}}


def tool(mode, obj, arr, data):
    src, dst = os.path.join(TMP, "in.bin"), os.path.join(TMP, "out.bin")
    with open(src, "wb") as f:
        f.write(data)
    shape = ",".join(str(s) for s in arr.shape)
    r = subprocess.run([TOOL, mode, json.dumps(obj), arr.dtype.name, shape, src, dst], capture_output=True, text=True)
    if r.returncode != 0:
        return r.returncode, r.stderr.strip()
    with open(dst, "rb") as f:
        return 0, f.read()


def same(a, b):
    return a.shape == b.shape and a.tobytes() == b.tobytes()


def inputs():
    t = field("cdf/meccatemp.cdf", "t").astype("<f4")
    yield "meccatemp.t[0] (1,lat,lon)", np.ascontiguousarray(t[:1])
    yield "meccatemp.t 3d", np.ascontiguousarray(t[:4])
    yield "icon.clat f64", field("nug/triangular_grid_ICON.nc", "clat").astype("<f8")
    yield "meccatemp.t as int32", np.ascontiguousarray((t[:2] * 100).astype("<i4"))


def members(arr):
    if arr.dtype.kind == "i":
        return [("fixed-rate", float(1 << (k + 3))) for k in range(3)]
    return ([("fixed-accuracy", 2.0 ** -(1 << k)) for k in range(3)]
            + [("fixed-precision", 1 << (k + 3)) for k in range(3)]
            + [("fixed-rate", float(1 << (k + 3))) for k in range(3)])


def one(name, arr, mode, value):
    label = "%s %s=%s" % (name, mode, value)
    ref = zfpy_compress(arr, mode, value)
    expect = zfpy.decompress_numpy(ref).reshape(arr.shape)
    hand = postcard(arr) + cut_meta(ref)
    rc, out = tool("decode", codec(mode, value), arr, hand)
    check(rc == 0 and same(np.frombuffer(out, arr.dtype).reshape(arr.shape), expect),
          "%s: a hand-built reference stream does not decode to zfpy's values (%s)" % (label, out if rc else ""))
    rc, ours = tool("encode", codec(mode, value), arr, arr.tobytes())
    check(rc == 0, "%s: encode failed: %s" % (label, ours))
    if rc:
        return
    head = postcard(arr)
    check(ours[:len(head)] == head, "%s: the postcard header differs" % label)
    # the cut stream may keep a word of zero padding that ours, 52 bits shorter, does not need
    cut, body = cut_meta(ref), ours[len(head):]
    check(cut[:len(body)] == body and not any(cut[len(body):]), "%s: the zfp bits differ from zfpy's (same libzfp, same mode)" % label)
    back = zfpy.decompress_numpy(put_meta(ours[len(head):], meta_of(ref))).reshape(arr.shape)
    rc, dec = tool("decode", codec(mode, value), arr, ours)
    check(rc == 0 and same(np.frombuffer(dec, arr.dtype).reshape(arr.shape), back),
          "%s: zfpy reads our stream differently from us" % label)
    for cut in (len(head) - 1, len(head) + 4, len(ours) // 2):
        rc, _ = tool("decode", codec(mode, value), arr, ours[:cut])
        check(rc == 3, "%s: a stream cut at %d bytes was not refused as corrupt (exit %d)" % (label, cut, rc))
    other = np.zeros((arr.shape[0] + 1,) + arr.shape[1:], arr.dtype)
    rc, _ = tool("decode", codec(mode, value), other, ours)
    check(rc == 3, "%s: a stream of another shape was accepted" % label)


def main():
    for name, arr in inputs():
        for mode, value in members(arr):
            one(name, arr, mode, value)
    # empty arrays are only the header; "deny" refuses NaN in a lossy mode
    empty = np.zeros((0, 5), "<f4")
    rc, out = tool("encode", codec("fixed-rate", 8.0), empty, b"")
    check(rc == 0 and out == postcard(empty), "empty array: not the bare postcard header")
    nan = np.full((8, 8), np.nan, "<f4")
    rc, msg = tool("encode", codec("fixed-rate", 8.0), nan, nan.tobytes())
    check(rc != 0 and "non-finite" in msg, "NaN input in deny mode was not refused")
    rc, _ = tool("encode", codec("fixed-rate", 8.0, "allow-unsafe"), nan, nan.tobytes())
    check(rc == 0, "NaN input in allow-unsafe mode was refused")
    finish("zfp.rs")


main()
