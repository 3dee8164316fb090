"""numcodecs-wasm's Zfp ("zfp.rs") rebuilt from Debian's zfpy, for tests that
cannot run numcodecs-wasm: its stream is a postcard header (dtype index,
shape, version "0.2.0") and a zfp stream whose zfp header has no field
metadata (docs/codecs.md). zfpy writes the field metadata (52 bits after the
32-bit magic): cutting them out of its bit stream gives numcodecs-zfp's
bytes for the same field and mode, putting them back lets zfpy read ours."""
import numpy as np
import zfpy

DTYPES = {"int32": 0, "int64": 1, "float32": 2, "float64": 3}
MAGIC_BITS, META_BITS = 32, 52
PARAM = {"fixed-rate": "rate", "fixed-precision": "precision", "fixed-accuracy": "tolerance"}


def varint(v):
    out = bytearray()
    while True:
        out.append((v & 0x7F) | (0x80 if v > 0x7F else 0))
        v >>= 7
        if not v:
            return bytes(out)


def postcard(arr):
    h = varint(DTYPES[arr.dtype.name]) + varint(arr.ndim)
    for s in arr.shape:
        h += varint(s)
    return h + varint(5) + b"0.2.0"


def _to_bytes(value, nbits):
    return value.to_bytes((nbits + 63) // 64 * 8, "little")  # zfp streams end on a 64-bit word


def cut_meta(stream):
    v, n = int.from_bytes(stream, "little"), len(stream) * 8
    low = v & ((1 << MAGIC_BITS) - 1)
    return _to_bytes(low | ((v >> (MAGIC_BITS + META_BITS)) << MAGIC_BITS), n - META_BITS)


def put_meta(stream, meta):
    v, n = int.from_bytes(stream, "little"), len(stream) * 8
    low = v & ((1 << MAGIC_BITS) - 1)
    return _to_bytes(low | (meta << MAGIC_BITS) | ((v >> MAGIC_BITS) << (MAGIC_BITS + META_BITS)), n + META_BITS)


def meta_of(stream):
    return (int.from_bytes(stream, "little") >> MAGIC_BITS) & ((1 << META_BITS) - 1)


def zfpy_compress(arr, mode, value):
    """zfpy's stream of the array without its length-1 axes, as numcodecs-zfp squeezes it."""
    return zfpy.compress_numpy(np.ascontiguousarray(arr.squeeze()), **{PARAM[mode]: value})
