"""Stores that name their codecs as zarr-python 3 and the Python dc_toolkit do, written without us,
read back value for value (issue 32, item 1).

zarr-python 3 writes numcodecs' codecs (numcodecs.zarr3, zarr.codecs.numcodecs) as "numcodecs.<id>"
with numcodecs' own configuration: numcodecs.zstd, numcodecs.blosc (shuffle an integer),
numcodecs.gzip beside the names we write ourselves, and the Python dc_toolkit adds numcodecs.astype,
numcodecs.zfpy_flat, numcodecs.ebcc_filter {arglist} and numcodecs.clamp. This script writes such a
store itself: the chunk bytes by Debian's numcodecs (and zfpy; EBCC's by spcl/EBCC, from
tests/golden/ebcc), the zarr.json as zarr-python 3 lays it out, one array per codec, some sharded.
Our reader (dctk_zarr_tool read) must give back what numcodecs decodes, bit for bit, and exactly the
input where the pipeline is lossless. Every alias our registry reads (dctk_zarr_tool aliases) must be
one of the cases, so a new alias comes with its store.

    test_numcodecs_names.py PATH/TO/dctk_zarr_tool
"""
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile

import netCDF4
import numcodecs
import numpy as np
from numcodecs.zfpy import ZFPY

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import checks  # noqa: E402
from pipeline_ref import zfp_folded  # noqa: E402

TOOL = sys.argv[1]
SRC = os.environ.get("DCTK_SRC", os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
NCARG = os.environ.get("DCTK_NCARG", "/usr/share/ncarg/data")
check = checks.check


def field():
    with netCDF4.Dataset(os.path.join(NCARG, "nug", "rectilinear_grid_3D.nc")) as r:
        return np.ma.filled(r["t"][0, :8], np.nan).astype("<f4")  # (8, 96, 192), real temperatures


# Each case: (array name, dtype, filters, serializer, compressors), every codec as (v3 object, numcodecs
# encoder or None for the serializer). The serializer is "bytes" unless one is named.
def cases(x32):
    nc = numcodecs
    z = lambda **c: {"mode": c.get("mode", 4), "tolerance": c.get("tolerance", -1), "rate": c.get("rate", -1),
                     "precision": c.get("precision", -1)}
    lo, hi = float(np.nanmin(x32)), float(np.nanmax(x32))
    return [
        ("zstd", "float32", [], None, [({"name": "numcodecs.zstd", "configuration": {"level": 5, "checksum": False}},
                                        nc.Zstd(level=5))]),
        ("blosc", "float32", [], None, [({"name": "numcodecs.blosc", "configuration":
                                          {"cname": "lz4", "clevel": 5, "shuffle": 1, "blocksize": 0}},
                                         nc.Blosc(cname="lz4", clevel=5, shuffle=nc.Blosc.SHUFFLE))]),
        ("blosc_bit", "float32", [], None, [({"name": "numcodecs.blosc", "configuration":
                                              {"cname": "zstd", "clevel": 1, "shuffle": 2, "blocksize": 0,
                                               "typesize": 4}},
                                             nc.Blosc(cname="zstd", clevel=1, shuffle=nc.Blosc.BITSHUFFLE))]),
        ("gzip", "float32", [], None, [({"name": "numcodecs.gzip", "configuration": {"level": 6}}, nc.GZip(level=6))]),
        ("shuffle_lz4", "float32", [], None,
         [({"name": "numcodecs.shuffle", "configuration": {"elementsize": 4}}, nc.Shuffle(elementsize=4)),
          ({"name": "numcodecs.lz4", "configuration": {"acceleration": 1}}, nc.LZ4(acceleration=1))]),
        ("zlib_bz2", "float32", [], None,
         [({"name": "numcodecs.zlib", "configuration": {"level": 1}}, nc.Zlib(level=1)),
          ({"name": "numcodecs.bz2", "configuration": {"level": 9}}, nc.BZ2(level=9))]),
        ("lzma", "float32", [], None, [({"name": "numcodecs.lzma", "configuration":
                                         {"format": 1, "check": -1, "preset": 6, "filters": None}},
                                        nc.LZMA(preset=6))]),
        ("delta", "float64", [({"name": "numcodecs.delta", "configuration": {"dtype": "<f8"}}, nc.Delta(dtype="<f8"))],
         None, [({"name": "numcodecs.zstd", "configuration": {"level": 3, "checksum": False}}, nc.Zstd(level=3))]),
        ("bitround", "float32", [({"name": "numcodecs.bitround", "configuration": {"keepbits": 9}},
                                  nc.BitRound(keepbits=9))], None,
         [({"name": "numcodecs.zstd", "configuration": {"level": 9, "checksum": False}}, nc.Zstd(level=9))]),
        ("quantize", "float64", [({"name": "numcodecs.quantize", "configuration": {"digits": 3, "dtype": "float64"}},
                                  nc.Quantize(digits=3, dtype="f8"))], None,
         [({"name": "numcodecs.blosc", "configuration": {"cname": "zstd", "clevel": 5, "shuffle": 1, "blocksize": 0}},
           nc.Blosc(cname="zstd", clevel=5, shuffle=nc.Blosc.SHUFFLE))]),
        ("fixedscaleoffset", "float32",
         [({"name": "numcodecs.fixedscaleoffset", "configuration":
            {"offset": lo, "scale": 65535 / (hi - lo), "dtype": "<f4", "astype": "<u2"}},
           nc.FixedScaleOffset(offset=lo, scale=65535 / (hi - lo), dtype="<f4", astype="<u2"))], None,
         [({"name": "numcodecs.zstd", "configuration": {"level": 1, "checksum": False}}, nc.Zstd(level=1))]),
        ("astype", "float64", [({"name": "numcodecs.astype", "configuration":
                                 {"encode_dtype": "float32", "decode_dtype": "float64"}},
                                nc.AsType(encode_dtype="f4", decode_dtype="f8"))], None,
         [({"name": "numcodecs.zstd", "configuration": {"level": 3, "checksum": False}}, nc.Zstd(level=3))]),
        ("zfpy", "float32", [], ({"name": "numcodecs.zfpy", "configuration": z(mode=4, tolerance=0.25)},
                                 ZFPY(**z(mode=4, tolerance=0.25))),
         [({"name": "numcodecs.zstd", "configuration": {"level": 3, "checksum": False}}, nc.Zstd(level=3))]),
        ("zfpy_flat", "float64", [], ({"name": "numcodecs.zfpy_flat", "configuration": z(mode=2, rate=8)},
                                      ZFPY(**z(mode=2, rate=8))), []),
        ("clamp_zfpy", "float32", [({"name": "numcodecs.clamp", "configuration": {"minimum": 250.0}}, None)],
         ({"name": "numcodecs.zfpy", "configuration": z(mode=2, rate=4)}, ZFPY(**z(mode=2, rate=4))), []),
    ]


def encode_chunk(block, filters, ser, comps):
    """Bytes of one chunk, and what numcodecs decodes them to (the reference for our reader)."""
    a = block
    for obj, codec in filters:
        if codec is None:  # numcodecs.clamp is the identity on encode
            continue
        enc = codec.encode(a.copy())  # numcodecs 0.11's BitRound hands back an integer view
        a = np.frombuffer(bytes(enc), a.dtype).reshape(a.shape) if obj["name"] == "numcodecs.bitround" \
            else np.asarray(enc).reshape(a.shape)
    if ser is None:
        data = np.ascontiguousarray(a).astype(a.dtype.newbyteorder("<")).tobytes()
    else:
        flat = ser[0]["name"] == "numcodecs.zfpy_flat"
        data = bytes(ser[1].encode(np.ascontiguousarray(a).reshape(-1) if flat else zfp_folded(a)))
    for _, codec in comps:
        data = bytes(codec.encode(data))
    # decode as numcodecs does, in reverse
    raw = data
    for _, codec in reversed(comps):
        raw = bytes(codec.decode(raw))
    back = np.frombuffer(raw, a.dtype).reshape(a.shape) if ser is None else \
        np.asarray(ser[1].decode(raw)).reshape(a.shape).astype(a.dtype)
    for obj, codec in reversed(filters):
        if obj["name"] == "numcodecs.clamp":
            c = obj["configuration"]
            back = np.clip(back, c.get("minimum"), c.get("maximum"))
        elif obj["name"] == "numcodecs.bitround":
            back = back.copy()
        else:
            back = np.asarray(codec.decode(back.copy())).reshape(a.shape)
    return data, np.asarray(back, dtype=block.dtype)


def write_array(root, name, x, chunk, codecs_v3, encode, shard=None):
    """An array as zarr-python 3 writes it: zarr.json, then c/i/j/k chunk keys (or shards)."""
    top = os.path.join(root, name)
    os.makedirs(top)
    meta = {"zarr_format": 3, "node_type": "array", "shape": list(x.shape), "data_type": str(x.dtype),
            "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": list(shard or chunk)}},
            "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
            "fill_value": 0.0, "codecs": codecs_v3, "attributes": {}, "dimension_names": ["lev", "lat", "lon"],
            "storage_transformers": []}
    if shard:
        meta["codecs"] = [{"name": "sharding_indexed", "configuration": {
            "chunk_shape": list(chunk), "codecs": codecs_v3,
            "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "crc32c"}],
            "index_location": "end"}}]
    with open(os.path.join(top, "zarr.json"), "w") as f:
        json.dump(meta, f)
    expect = np.empty_like(x)
    outer = shard or chunk
    for k in np.ndindex(*[s // c for s, c in zip(x.shape, outer)]):
        sl = tuple(slice(i * c, (i + 1) * c) for i, c in zip(k, outer))
        if shard:
            data, back = write_shard(x[sl], chunk, encode)
        else:
            data, back = encode(x[sl])
        expect[sl] = back
        key = os.path.join(top, "c", *map(str, k))
        os.makedirs(os.path.dirname(key), exist_ok=True)
        with open(key, "wb") as f:
            f.write(data)
    return expect


def crc32c(data):
    c = 0xFFFFFFFF
    for b in data:
        c ^= b
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
    return c ^ 0xFFFFFFFF


def write_shard(x, chunk, encode):
    body, index, back = b"", b"", np.empty_like(x)
    for k in np.ndindex(*[s // c for s, c in zip(x.shape, chunk)]):
        sl = tuple(slice(i * c, (i + 1) * c) for i, c in zip(k, chunk))
        data, b = encode(x[sl])
        back[sl] = b
        index += struct.pack("<QQ", len(body), len(data))
        body += data
    return body + index + struct.pack("<I", crc32c(index)), back


def read_ours(store, name, x):
    out = os.path.join(store, name + ".raw")
    r = subprocess.run([TOOL, "read", store, name, out], capture_output=True, text=True)
    if r.returncode:
        return None, r.stderr.strip()
    return np.fromfile(out, dtype=x.dtype).reshape(x.shape), ""


def ebcc_case(store):
    """An EBCC stream by spcl/EBCC (tests/golden/ebcc) under the Python tool's name."""
    gold = os.path.join(SRC, "tests", "golden", "ebcc")
    case = json.load(open(os.path.join(gold, "manifest.json")))["cases"][0]
    shape = tuple(case["shape"])
    data = open(os.path.join(gold, case["encoded"]), "rb").read()
    want = np.fromfile(os.path.join(gold, case["decoded"]), dtype="<f4").reshape(shape)
    top = os.path.join(store, "ebcc")
    os.makedirs(os.path.join(top, "c", "0"))
    meta = {"zarr_format": 3, "node_type": "array", "shape": list(shape), "data_type": "float32",
            "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": list(shape)}},
            "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}}, "fill_value": 0.0,
            "codecs": [{"name": "numcodecs.ebcc_filter", "configuration": {"arglist": case["arglist"]}}],
            "attributes": {}, "storage_transformers": []}
    json.dump(meta, open(os.path.join(top, "zarr.json"), "w"))
    open(os.path.join(top, "c", "0", "0"), "wb").write(data)
    got, err = read_ours(store, "ebcc", want)
    check(got is not None and got.tobytes() == want.tobytes(), f"numcodecs.ebcc_filter: spcl/EBCC's decode ({err})")
    return "numcodecs.ebcc_filter"


def main():
    tmp = tempfile.mkdtemp(prefix="dctk_ncnames_")
    try:
        store = os.path.join(tmp, "python_tool.zarr")
        os.makedirs(store)
        json.dump({"zarr_format": 3, "node_type": "group", "attributes": {}}, open(os.path.join(store, "zarr.json"), "w"))
        x32 = field()
        x32 = np.where(np.isnan(x32), np.float32(260), x32)
        named = set()
        for i, (name, dtype, filters, ser, comps) in enumerate(cases(x32)):
            x = x32.astype(dtype)
            serializer = ser[0] if ser else {"name": "bytes", "configuration": {"endian": "little"}}
            codecs_v3 = [f[0] for f in filters] + [serializer] + [c[0] for c in comps]
            named |= {c["name"] for c in codecs_v3}
            shard = (8, 48, 96) if i % 3 == 0 and ser is None else None
            expect = write_array(store, name, x, (2, 48, 96), codecs_v3,
                                 lambda b, f=filters, s=ser, c=comps: encode_chunk(b, f, s, c), shard)
            got, err = read_ours(store, name, x)
            what = f"{name} ({', '.join(c['name'] for c in codecs_v3)}{', sharded' if shard else ''})"
            check(got is not None, f"{what}: our reader refuses it: {err}")
            if got is None:
                continue
            check(got.tobytes() == expect.tobytes(), f"{what}: not numcodecs' decode, value for value")
            if not filters and ser is None:
                check(got.tobytes() == x.tobytes(), f"{what}: a lossless pipeline must give the input back")
            if name == "clamp_zfpy":
                check(float(got.min()) >= 250.0 and float(expect.min()) >= 250.0 and
                      float(np.asarray(ZFPY(mode=2, rate=4).decode(ZFPY(mode=2, rate=4).encode(
                          zfp_folded(x[:2, :48, :96])))).min()) < 250.0,
                      "numcodecs.clamp: zfp rings below the bound, the clamp keeps every value at or above it")
        named.add(ebcc_case(store))
        aliases = subprocess.run([TOOL, "aliases"], capture_output=True, text=True, check=True).stdout.split("\n")
        for line in filter(None, aliases):
            alias = line.split()[0]
            check(alias in named, f"alias {alias}: no store of this test names it")
        # the whole store through our netCDF export: the same values as the tool read
        r = subprocess.run([os.environ["DCTK"], "open_zarr_and_inspect", store], capture_output=True, text=True)
        check(r.returncode == 0 and "numcodecs.zstd" in r.stdout, f"open_zarr_and_inspect: {r.stderr.strip()}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    checks.finish("numcodecs names")


if __name__ == "__main__":
    main()
