"""Write the golden files of the compressors: small inputs and what numcodecs
0.11 (Debian) encodes them to, under tests/golden/codecs/, with a manifest
that test_compressors_golden.c reads. So the cross-check with numcodecs also
runs where Python is not installed.

    /usr/bin/python3 tests/interop/make_golden_compressors.py [OUT_DIR]

The files are committed; rerun only to add cases. gzip output carries the
time of the run in its header, so regenerating changes those bytes only.
"""
import json
import os
import sys

import netCDF4
import numpy as np
import numcodecs
import numcodecs.blosc
from numcodecs.compat import ensure_bytes

numcodecs.blosc.use_threads = False

HERE = os.path.dirname(os.path.abspath(__file__))
NCARG = os.environ.get("DCTK_NCARG", "/usr/share/ncarg/data")
SHUFFLE = {"noshuffle": 0, "shuffle": 1, "bitshuffle": 2}
# Same library driven the same way: our encoder must reproduce these bytes.
# lzma is not: we cap its dictionary at the chunk size, which changes the block header only
# numcodecs.zlib is not here: we deflate with libdeflate, whose bytes differ from zlib's (they still
# decode both ways, which every case checks).
IDENTICAL = {"blosc", "numcodecs.lz4", "numcodecs.bz2", "numcodecs.shuffle"}


def inputs():
    with netCDF4.Dataset(os.path.join(NCARG, "cdf/meccatemp.cdf")) as d:
        t = np.asarray(d.variables["t"][0, :, :]).astype("<f4").reshape(-1)[:512]  # a real 2 KB slice
    special = np.array([np.nan, np.inf, -np.inf, 5e-324, -1e-310, 0.0, -0.0, 1.7976931348623157e308],
                       dtype="<f8")
    edge = np.concatenate([np.tile(special, 8), np.linspace(-1, 1, 64)]).astype("<f8")  # 1 KB
    return [("field_f32", t, "float32"), ("edge_f64", edge, "float64")]


def cases(itemsize):
    def blosc(cname, clevel, shuffle):
        return {"name": "blosc", "configuration": {"cname": cname, "clevel": clevel, "shuffle": shuffle,
                                                   "typesize": itemsize, "blocksize": 0}}
    yield blosc("lz4", 5, "shuffle")
    yield blosc("zstd", 1, "bitshuffle")
    yield blosc("blosclz", 9, "noshuffle")
    yield blosc("zlib", 6, "shuffle")
    yield blosc("lz4hc", 9, "bitshuffle")
    for level in (1, 22):
        yield {"name": "zstd", "configuration": {"level": level, "checksum": False}}
    for level in (1, 9):
        yield {"name": "gzip", "configuration": {"level": level}}
        yield {"name": "numcodecs.zlib", "configuration": {"level": level}}
        yield {"name": "numcodecs.bz2", "configuration": {"level": level}}
    for acc in (1, 100):
        yield {"name": "numcodecs.lz4", "configuration": {"acceleration": acc}}
    for preset in (1, 6):
        yield {"name": "numcodecs.lzma", "configuration": {"format": 1, "check": -1, "preset": preset,
                                                           "filters": None}}
    for es in (itemsize, 2):
        yield {"name": "numcodecs.shuffle", "configuration": {"elementsize": es}}


def encode(obj, arr):
    conf = obj["configuration"]
    if obj["name"] == "blosc":
        c = numcodecs.Blosc(conf["cname"], conf["clevel"], SHUFFLE[conf["shuffle"]], conf["blocksize"])
        return c.encode(arr)  # typesize = arr.itemsize, as configured
    if obj["name"] == "zstd":
        return numcodecs.Zstd(conf["level"]).encode(arr)
    if obj["name"] == "gzip":
        return numcodecs.GZip(conf["level"]).encode(arr)
    return numcodecs.get_codec(dict(conf, id=obj["name"].split(".", 1)[1])).encode(arr)


def case_name(obj):
    conf = obj["configuration"]
    parts = [obj["name"].replace("numcodecs.", "")]
    for k in ("cname", "shuffle", "clevel", "level", "acceleration", "preset", "elementsize"):
        if k in conf:
            parts.append(str(conf[k]))
    return "_".join(parts)


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "..", "golden", "codecs")
    os.makedirs(out, exist_ok=True)
    manifest = []
    for label, arr, dtype in inputs():
        with open(os.path.join(out, label + ".bin"), "wb") as f:
            f.write(arr.tobytes())
        for obj in cases(arr.dtype.itemsize):
            name = "%s.%s.enc" % (label, case_name(obj))
            with open(os.path.join(out, name), "wb") as f:
                f.write(ensure_bytes(encode(obj, arr)))
            manifest.append({"input": label + ".bin", "dtype": dtype, "shape": list(arr.shape),
                             "codec": obj, "encoded": name, "identical": obj["name"] in IDENTICAL})
    with open(os.path.join(out, "manifest.json"), "w") as f:
        json.dump({"generator": "tests/interop/make_golden_compressors.py",
                   "numcodecs": numcodecs.__version__, "cases": manifest}, f, indent=1)
        f.write("\n")
    print("%d cases in %s" % (len(manifest), out))


if __name__ == "__main__":
    main()
