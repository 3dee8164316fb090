"""Our sharded stores, read without our reader: this script parses each shard
index itself (checking its CRC-32C), decodes the inner chunks with Debian's
numcodecs, and compares with the input (lossless codecs) or with what our own
reader returns (lossy ones, which must also stay within their error bound).
It covers the codecs zarrita does not ship: bz2, lzma, quantize,
fixedscaleoffset, zfpy, plus zstd and blosc as a control.

    zarr_shards.py PATH/TO/dctk_zarr_tool
"""
import json
import os
import struct
import subprocess
import sys
import tempfile

import numcodecs
import numpy as np

TOOL = sys.argv[1] if len(sys.argv) > 1 else None  # None: imported for read_store
ABSENT = 2**64 - 1


def crc32c(data):
    table = crc32c.table
    if table is None:
        table = crc32c.table = []
        for i in range(256):
            c = i
            for _ in range(8):
                c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
            table.append(c)
    c = 0xFFFFFFFF
    for b in data:
        c = table[(c ^ b) & 0xFF] ^ (c >> 8)
    return c ^ 0xFFFFFFFF


crc32c.table = None
assert crc32c(b"123456789") == 0xE3069283


def nc_codec(c):
    """A numcodecs codec for one v3 codec object."""
    name, conf = c["name"], dict(c.get("configuration", {}))
    if name == "zstd":
        return numcodecs.Zstd(level=conf["level"])
    if name == "blosc":
        shuffle = {"noshuffle": 0, "shuffle": 1, "bitshuffle": 2}[conf["shuffle"]]
        return numcodecs.Blosc(cname=conf["cname"], clevel=conf["clevel"], shuffle=shuffle)
    if name == "gzip":
        return numcodecs.GZip(level=conf["level"])
    if name.startswith("dctk."):  # only with python/'s package installed: registered under the v3 name
        conf["id"] = name
        return numcodecs.get_codec(conf)
    assert name.startswith("numcodecs."), name
    conf["id"] = name[len("numcodecs."):]
    return numcodecs.get_codec(conf)


# the array->bytes codecs this reader knows
SERIALIZERS = ("bytes", "numcodecs.zfpy", "numcodecs.pcodec", "dctk.sz", "dctk.ebcc")


def decode_chunk(raw, codecs, dtype, shape):
    """Decode one inner chunk: bytes->bytes codecs in reverse, the serializer,
    then the filters in reverse, tracking the dtype each filter outputs."""
    ab = next(i for i, c in enumerate(codecs) if c["name"] in SERIALIZERS)
    stage = np.dtype(dtype)
    for c in codecs[:ab]:
        astype = c.get("configuration", {}).get("astype")
        if astype:
            stage = np.dtype(astype)
    buf = raw
    for c in reversed(codecs[ab + 1:]):
        buf = nc_codec(c).decode(buf)
    ser = codecs[ab]
    if ser["name"] == "bytes":
        endian = ser.get("configuration", {}).get("endian", "little")
        arr = np.frombuffer(bytes(buf), dtype=stage.newbyteorder("<" if endian == "little" else ">")).astype(stage)
    elif ser["name"].startswith("dctk."):  # its stream does not record the chunk's dtype and shape: zarr's out=
        arr = nc_codec(ser).decode(buf, out=np.empty(shape, dtype=stage))
    else:
        arr = nc_codec(ser).decode(buf)
    arr = np.asarray(arr).reshape(shape)
    for c in reversed(codecs[:ab]):
        arr = np.asarray(nc_codec(c).decode(arr)).reshape(shape)
    return arr.astype(dtype)


def read_store(store, name):
    meta = json.load(open(os.path.join(store, name, "zarr.json")))
    shape, dtype = meta["shape"], np.dtype(meta["data_type"])
    shard = meta["chunk_grid"]["configuration"]["chunk_shape"]
    (sh,) = meta["codecs"]
    assert sh["name"] == "sharding_indexed" and sh["configuration"]["index_location"] == "end"
    conf = sh["configuration"]
    inner, codecs = conf["chunk_shape"], conf["codecs"]
    fill = meta["fill_value"]
    fill = float(fill) if isinstance(fill, str) else fill
    grid = [s // i for s, i in zip(shard, inner)]
    nin = int(np.prod(grid))
    nshards = [-(-s // c) for s, c in zip(shape, shard)]
    padded = [n * c for n, c in zip(nshards, shard)]
    out = np.full(padded, fill, dtype=dtype)
    stored = 0
    for sidx in np.ndindex(*nshards):
        path = os.path.join(store, name, "c", *map(str, sidx))
        if not os.path.exists(path):
            continue
        data = open(path, "rb").read()
        index = data[len(data) - 16 * nin - 4:]
        assert struct.unpack("<I", index[-4:])[0] == crc32c(index[:-4]), f"{path}: index CRC"
        for k, iidx in enumerate(np.ndindex(*grid)):
            off, n = struct.unpack_from("<QQ", index, 16 * k)
            if off == ABSENT:
                continue
            assert off + n <= len(data) - 16 * nin - 4
            chunk = decode_chunk(data[off:off + n], codecs, dtype, inner)
            sl = tuple(slice(s * c + i * ic, s * c + (i + 1) * ic) for s, c, i, ic in zip(sidx, shard, iidx, inner))
            out[sl] = chunk
            stored += 1
    return out[tuple(slice(0, s) for s in shape)], stored


def field(shape, dtype):
    idx = np.indices(shape).sum(axis=0).astype(np.float64)
    x = 280 + 15 * np.sin(idx / 7) + np.random.default_rng(3).normal(0, 0.3, shape)
    x.flat[: x.size // 4] = np.nan  # whole chunks of fill value
    return x.astype(dtype)


def available():
    return set(subprocess.check_output([TOOL, "codecs"]).decode().split())


def main():
    have = available()
    B = {"name": "bytes", "configuration": {"endian": "little"}}
    cases = [  # name, codecs, dtype, bound on |error| (0: exact)
        ("zstd", [B, {"name": "zstd", "configuration": {"level": 3, "checksum": False}}], "float32", 0),
        ("blosc", [B, {"name": "blosc", "configuration": {"cname": "zstd", "clevel": 3, "shuffle": "bitshuffle",
                                                          "typesize": 4, "blocksize": 0}}], "float32", 0),
        ("numcodecs.bz2", [B, {"name": "numcodecs.bz2", "configuration": {"level": 5}}], "float64", 0),
        ("numcodecs.lzma", [B, {"name": "numcodecs.lzma", "configuration": {"format": 1, "check": -1, "preset": 6}}],
         "float32", 0),
        ("numcodecs.quantize", [{"name": "numcodecs.quantize", "configuration": {"digits": 3, "dtype": "<f8"}}, B],
         "float64", 1e-3),
        ("numcodecs.fixedscaleoffset", [{"name": "numcodecs.fixedscaleoffset",
                                         "configuration": {"offset": 280, "scale": 100, "dtype": "<f8",
                                                           "astype": "<i4"}}, B], "float64", 0.00501),
        ("numcodecs.zfpy", [{"name": "numcodecs.zfpy", "configuration": {"mode": 4, "tolerance": 0.01}}], "float64",
         0.01),
    ]
    failures = tested = 0
    with tempfile.TemporaryDirectory() as tmp:
        store = os.path.join(tmp, "s.zarr")
        for k, (cname, codecs, dt, bound) in enumerate(cases):
            if cname not in have:
                print(f"skip {cname}: not registered yet")
                continue
            tested += 1
            shape = (7, 10, 13)
            x = field(shape, dt)
            if cname in ("numcodecs.fixedscaleoffset", "numcodecs.zfpy"):
                x = np.nan_to_num(x, nan=0.0)  # these codecs have no NaN
            raw = os.path.join(tmp, f"{k}.raw")
            x.tofile(raw)
            fill = "0" if cname in ("numcodecs.fixedscaleoffset", "numcodecs.zfpy") else "NaN"
            subprocess.check_call([TOOL, "write", store, f"a{k}", "--dtype", dt, "--shape", "7,10,13",
                                   "--chunk", "2,4,8", "--shard", "4,8,16", "--fill", fill,
                                   "--codecs", json.dumps(codecs), raw])
            got, stored = read_store(store, f"a{k}")
            back = os.path.join(tmp, f"{k}.back")
            subprocess.check_call([TOOL, "read", store, f"a{k}", back])
            ours = np.fromfile(back, dtype=dt).reshape(shape)
            ok = stored > 0 and np.array_equal(got, ours, equal_nan=True)
            if bound == 0:
                ok = ok and np.array_equal(got, x, equal_nan=True)
            else:
                err = np.nanmax(np.abs(got.astype(np.float64) - x))
                ok = ok and err <= bound and np.array_equal(np.isnan(got), np.isnan(x))
            print(f"{'ok' if ok else 'FAIL'} {cname}: {stored} inner chunks decoded by numcodecs")
            failures += not ok
    print(f"{tested - failures}/{tested} codecs read back by numcodecs")
    return 1 if failures or tested == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
