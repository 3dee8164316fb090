"""Our bytes->bytes compressors against numcodecs 0.11 (Debian), both ways.

For every codec and several settings, on real fields from libncarg-data and
on edge data (NaN, +-Inf, subnormals, zeros, constant chunks, one element,
empty buffer):
  - bytes we encode (through dctk_codec_tool) decode in numcodecs to the input;
  - bytes numcodecs encodes decode here to the input;
  - where both sides drive the same library the same way, the bytes are equal.
Also: streams from the zstd, xz and gzip command-line tools (a zstd frame
without content size among them) decode here, and bad input exits with the
"rejected" code 3.

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
import numcodecs.blosc
from numcodecs.compat import ensure_bytes

numcodecs.blosc.use_threads = False  # like our blosc_*_ctx calls with one thread

TOOL = os.environ["DCTK_CODEC_TOOL"]
TMP = tempfile.mkdtemp(prefix="dctk-cmp-")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import checks  # noqa: E402
from checks import check, ncarg_field as field  # noqa: E402



def edge_f32():
    special = np.array([np.nan, np.inf, -np.inf, 1e-45, -1e-44, 1.17e-38, 0.0, -0.0,
                        3.4028235e38, -3.4028235e38, 1.0, -1.0], dtype="<f4")
    special.view("<u4")[0] = 0x7FC00001  # a NaN with payload must survive bit for bit
    return np.tile(special, 100)


def inputs():
    yield "meccatemp.t", field("cdf/meccatemp.cdf", "t").astype("<f4")
    yield "icon.clat", field("nug/triangular_grid_ICON.nc", "clat").astype("<f8")
    yield "specials_f32", edge_f32()
    yield "subnormals_f64", (np.arange(1, 2001, dtype="<f8") * 5e-324)
    yield "zeros_f64", np.zeros(8192, dtype="<f8")
    yield "constant_f32", np.full(4096, 273.15, dtype="<f4")
    yield "one_f32", np.array([42.5], dtype="<f4")
    yield "empty_f32", np.zeros(0, dtype="<f4")


def blosc(cname, clevel, shuffle, typesize=None, blocksize=0):
    conf = {"cname": cname, "clevel": clevel, "shuffle": shuffle, "blocksize": blocksize}
    if typesize:
        conf["typesize"] = typesize
    return {"name": "blosc", "configuration": conf}


def settings(itemsize):
    yield blosc("lz4", 5, "shuffle", itemsize)
    yield blosc("zstd", 1, "bitshuffle", itemsize)
    yield blosc("blosclz", 9, "noshuffle", itemsize)
    yield blosc("lz4hc", 6, "shuffle", itemsize, 8192)
    yield blosc("zlib", 1, "shuffle", itemsize)
    yield {"name": "zstd", "configuration": {"level": 0, "checksum": False}}
    yield {"name": "zstd", "configuration": {"level": 9, "checksum": True}}
    yield {"name": "zstd", "configuration": {"level": 22, "checksum": False}}
    yield {"name": "gzip", "configuration": {"level": 1}}
    yield {"name": "gzip", "configuration": {"level": 9}}
    yield {"name": "numcodecs.lz4", "configuration": {"acceleration": 1}}
    yield {"name": "numcodecs.lz4", "configuration": {"acceleration": 100}}
    yield {"name": "numcodecs.zlib", "configuration": {"level": 1}}
    yield {"name": "numcodecs.zlib", "configuration": {"level": 9}}
    yield {"name": "numcodecs.bz2", "configuration": {"level": 1}}
    yield {"name": "numcodecs.bz2", "configuration": {"level": 9}}
    yield {"name": "numcodecs.lzma", "configuration": {"format": 1, "check": -1, "preset": 1, "filters": None}}
    yield {"name": "numcodecs.lzma", "configuration": {"format": 1, "check": -1, "preset": 6, "filters": None}}
    yield {"name": "numcodecs.shuffle", "configuration": {"elementsize": itemsize}}
    yield {"name": "numcodecs.shuffle", "configuration": {"elementsize": 8}}


def numcodecs_codec(obj):
    """The numcodecs object equivalent to a Zarr v3 codec object."""
    name, conf = obj["name"], dict(obj.get("configuration", {}))
    if name == "blosc":
        shuffle = {"noshuffle": 0, "shuffle": 1, "bitshuffle": 2}[conf["shuffle"]]
        return numcodecs.Blosc(cname=conf["cname"], clevel=conf["clevel"], shuffle=shuffle,
                               blocksize=conf["blocksize"])
    if name == "zstd":
        return numcodecs.Zstd(level=conf["level"])  # 0.11 has no checksum option
    if name == "gzip":
        return numcodecs.GZip(level=conf["level"])
    return numcodecs.get_codec(dict(conf, id=name.split(".", 1)[1]))


def numcodecs_input(obj, arr):
    """What numcodecs gets: for blosc an array whose itemsize is the typesize."""
    if obj["name"] == "blosc":
        return arr.view("u%d" % obj["configuration"]["typesize"]) if arr.size else arr
    return arr


def tool(mode, obj, arr, data):
    src = os.path.join(TMP, "in.bin")
    dst = os.path.join(TMP, "out.bin")
    with open(src, "wb") as f:
        f.write(data)
    dtype = {1: "uint8", 4: "float32", 8: "float64"}[arr.dtype.itemsize]
    shape = ",".join(str(s) for s in arr.shape) if arr.ndim else "1"
    r = subprocess.run([TOOL, mode, json.dumps(obj), dtype, shape, src, dst], capture_output=True, text=True)
    if r.returncode != 0:
        return r.returncode, r.stderr.strip()
    with open(dst, "rb") as f:
        return 0, f.read()


# Same library, same parameters: the bytes must agree. numcodecs 0.11's Zstd maps level 0
# (zstd's "default", 3) to 1 and has no checksum option. zlib and gzip are deflated with
# libdeflate, not zlib: other bytes, which must decode both ways and be no more than 1 %
# larger than zlib's at the same level on the real fields (DEFLATE_SLACK; on synthetic
# subnormals libdeflate's level 1 is some 15 % larger, which no real field resembles).
IDENTICAL = {"numcodecs.bz2", "numcodecs.lz4", "numcodecs.shuffle", "blosc"}
DEFLATE = {"numcodecs.zlib", "gzip"}
DEFLATE_SLACK = 1.01
REAL_FIELDS = {"meccatemp.t", "icon.clat"}


# numcodecs 0.11 cannot decode an empty buffer in these formats, not even its
# own encoding of it (Zarr never stores empty chunks): we still decode theirs.
EMPTY_UNDECODABLE = {"blosc", "zstd", "numcodecs.lz4"}


def ragged(obj, raw):
    return obj["name"] == "numcodecs.shuffle" and len(raw) % obj["configuration"]["elementsize"] != 0


def cross_check(label, arr):
    raw = arr.tobytes()
    for obj in settings(arr.dtype.itemsize):
        what = "%s %s" % (label, obj)
        nc = numcodecs_codec(obj)
        rc, ours = tool("encode", obj, arr, raw)
        if ragged(obj, raw):  # numcodecs refuses these too
            check(rc == 3, what + ": partial elements must be refused")
            continue
        check(rc == 0, what + ": our encode failed: %s" % (ours if rc else ""))
        if rc:
            continue
        if raw or obj["name"] not in EMPTY_UNDECODABLE:
            back = ensure_bytes(nc.decode(ours))
            check(back == raw, what + ": numcodecs does not decode our bytes to the input")
        theirs = ensure_bytes(nc.encode(numcodecs_input(obj, arr)))
        rc, mine = tool("decode", obj, arr, theirs)
        check(rc == 0 and mine == raw, what + ": we do not decode numcodecs' bytes (%s)" % (mine if rc else ""))
        if obj["name"] in IDENTICAL:
            check(ours == theirs, what + ": bytes differ from numcodecs' (%d vs %d)" % (len(ours), len(theirs)))
        if obj["name"] == "numcodecs.lzma":  # equal but for the block header: our dictionary is capped at the chunk
            # xz: 12-byte stream header, block header (size byte * 4), then the same LZMA2 data and index
            hs = 12 + (ours[12] + 1) * 4
            check(len(ours) == len(theirs) and ours[:12] == theirs[:12] and ours[hs:] == theirs[hs:],
                  what + ": xz data differ from numcodecs' beyond the block header")
        if obj["name"] in DEFLATE and label in REAL_FIELDS:
            check(len(ours) <= DEFLATE_SLACK * len(theirs),
                  what + ": our deflate stream is over 1 %% larger than zlib's (%d vs %d)" % (len(ours), len(theirs)))
        if obj["name"] == "gzip":  # a header that depends on neither clock nor host: mtime 0, OS 255
            check(ours[:4] == b"\x1f\x8b\x08\x00" and ours[4:8] == b"\0\0\0\0" and ours[9] == 255,
                  what + ": gzip header is not (no flags, mtime 0, OS unknown)")


def auto_shuffle():
    """numcodecs' shuffle -1 (auto) is byte shuffle for wider types and bit shuffle for bytes."""
    f32 = field("cdf/meccatemp.cdf", "t").astype("<f4")
    u8 = np.frombuffer(f32.tobytes()[:20000], dtype="u1")
    for arr, mode, ts in ((f32, "shuffle", 4), (u8, "bitshuffle", 1)):
        theirs = bytes(numcodecs.Blosc("zstd", 1, shuffle=-1).encode(arr))
        rc, ours = tool("encode", blosc("zstd", 1, mode, ts), arr, arr.tobytes())
        check(rc == 0 and ours == theirs, "blosc auto shuffle on itemsize %d is %s" % (ts, mode))


def cli_streams():
    """Streams written by other tools, including a zstd frame without content size."""
    arr = field("cdf/meccatemp.cdf", "t").astype("<f4")
    raw = arr.tobytes()
    cases = [("zstd", ["zstd", "-q", "-c", "-"], {"name": "zstd", "configuration": {"level": 3}}),
             ("xz", ["xz", "-c", "-3"], {"name": "numcodecs.lzma", "configuration": {"preset": 3}}),
             ("gzip", ["gzip", "-c", "-6"], {"name": "gzip", "configuration": {"level": 6}}),
             ("bzip2", ["bzip2", "-c"], {"name": "numcodecs.bz2", "configuration": {"level": 9}})]
    for label, cmd, obj in cases:
        if not shutil.which(cmd[0]):
            continue
        enc = subprocess.run(cmd, input=raw, capture_output=True, check=True).stdout
        if label == "zstd":  # streamed from a pipe: the frame header has no content size
            check(enc[4] & 0xC0 == 0 and not enc[4] & 0x20, "zstd CLI frame should lack a content size")
        rc, dec = tool("decode", obj, arr, enc)
        check(rc == 0 and dec == raw, "%s command-line stream decodes here" % label)
        rc, _ = tool("decode", obj, arr, enc[: len(enc) // 2])
        check(rc == 3, "%s stream cut in half is rejected (exit %d)" % (label, rc))


def main():
    try:
        for label, arr in inputs():
            cross_check(label, arr)
        auto_shuffle()
        cli_streams()
    finally:
        shutil.rmtree(TMP, ignore_errors=True)
    print("%d checks, %d failures" % (checks.checks, len(checks.failures)))
    for f in checks.failures:
        print("FAIL:", f, file=sys.stderr)
    return 1 if checks.failures or checks.checks < 300 else 0


if __name__ == "__main__":
    sys.exit(main())
