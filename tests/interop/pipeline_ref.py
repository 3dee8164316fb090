"""Reference implementation of a sweep combo with numpy and Debian's numcodecs,
independent of dc_toolkit: used by the sweep test and the sweep benchmark.

A combo is given by the JSON texts of its result row (filter, serializer,
compressor); the sample is cut into chunks of the writer's inner-chunk shape,
edge chunks padded by repeating the last valid value (as dc_toolkit does),
and each chunk goes through the whole pipeline and back, as the Python tool
does per combo."""
import ctypes
import ctypes.util
import json
import math
import zlib

import numpy as np
import numcodecs
from numcodecs.zfpy import ZFPY


def chunks(sample, chunk):
    """Chunks in C order, edge chunks padded by edge replication; yields (padded, valid slices)."""
    chunk = [min(c, s) for c, s in zip(chunk, sample.shape)]
    grid = [math.ceil(s / c) for s, c in zip(sample.shape, chunk)]
    for k in np.ndindex(*grid):
        src = tuple(slice(i * c, min((i + 1) * c, s)) for i, c, s in zip(k, chunk, sample.shape))
        part = sample[src]
        pad = [(0, c - n) for c, n in zip(chunk, part.shape)]
        block = np.pad(part, pad, mode="edge") if any(p[1] for p in pad) else part.copy()
        valid = tuple(slice(0, n) for n in part.shape)
        yield block, valid


_libm = ctypes.CDLL(ctypes.util.find_library("m"))
for _f, _t in (("asinhf", ctypes.c_float), ("sinhf", ctypes.c_float), ("asinh", ctypes.c_double),
               ("sinh", ctypes.c_double)):
    getattr(_libm, _f).restype = _t
    getattr(_libm, _f).argtypes = [_t]


def _libm_ufunc(name32, name64, dtype):
    """The C library's function, element by element: asinh is the formula
    w * asinh(x / w) evaluated in the data's type, and numpy's float32 arcsinh
    rounds differently from libm's in the last bit."""
    f = getattr(_libm, name32 if dtype == np.float32 else name64)
    return np.vectorize(lambda v: f(v), otypes=[dtype])


def filter_codec(j, dtype):
    if not j:
        return None
    name, conf = j["name"], j.get("configuration", {})
    if name == "numcodecs.delta":
        return numcodecs.Delta(dtype=conf["dtype"], astype=conf["astype"])
    if name == "numcodecs.bitround":
        return numcodecs.BitRound(keepbits=conf["keepbits"])
    if name == "numcodecs.quantize":
        return numcodecs.Quantize(digits=conf["digits"], dtype=conf["dtype"], astype=conf["astype"])
    if name == "numcodecs.fixedscaleoffset":  # integers of astype between the filter and the serializer
        c = numcodecs.FixedScaleOffset(offset=conf["offset"], scale=conf["scale"], dtype=conf["dtype"],
                                       astype=conf["astype"])
        # numcodecs' FixedScaleOffset hands back flat arrays: the block's shape again
        return ("fso", lambda x: np.asarray(c.encode(x)).reshape(x.shape),
                lambda y: np.asarray(c.decode(np.ascontiguousarray(y).astype(conf["astype"]))).astype(dtype)
                .reshape(y.shape))
    if conf.get("id") == "asinh.rs":
        w = dtype.type(conf["linear_width"])
        asinh, sinh = _libm_ufunc("asinhf", "asinh", dtype), _libm_ufunc("sinhf", "sinh", dtype)
        return ("asinh", lambda x: asinh(x / w) * w, lambda y: sinh(y / w) * w)
    if conf.get("id") == "fixed-offset-scale.rs":
        o, s = dtype.type(conf["offset"]), dtype.type(conf["scale"])
        inv = dtype.type(1) / s
        return ("fos", lambda x: (x - o) * inv,
                lambda y: (y.astype(np.float64) * float(s) + float(o)).astype(dtype))
    raise ValueError(name)


class LibDeflate:
    """gzip and numcodecs.zlib as dc_toolkit encodes them: through libdeflate (src/codecs/deflate.c),
    whose streams are ordinary RFC 1952/1950 ones but not zlib's bytes, so numcodecs' GZip/Zlib
    cannot give their sizes. The C library is called through ctypes, and every stream is inflated
    back by Python's zlib, which must return the input."""
    _lib = None

    def __init__(self, gzip, level):
        if LibDeflate._lib is None:
            lib = ctypes.CDLL(ctypes.util.find_library("deflate") or "libdeflate.so.0")
            lib.libdeflate_alloc_compressor.restype = ctypes.c_void_p
            lib.libdeflate_alloc_compressor.argtypes = [ctypes.c_int]
            for f in ("libdeflate_gzip_compress", "libdeflate_zlib_compress"):
                getattr(lib, f).restype = ctypes.c_size_t
                getattr(lib, f).argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t,
                                            ctypes.c_void_p, ctypes.c_size_t]
            LibDeflate._lib = lib
        self.gzip = gzip
        # zlib's level -1 is its default 6; libdeflate has no such alias
        self.handle = LibDeflate._lib.libdeflate_alloc_compressor(6 if level < 0 else level)

    def encode(self, buf):
        data = bytes(buf)
        cap = len(data) + len(data) // 8 + 1024
        out = ctypes.create_string_buffer(cap)
        f = LibDeflate._lib.libdeflate_gzip_compress if self.gzip else LibDeflate._lib.libdeflate_zlib_compress
        n = f(self.handle, data, len(data), out, cap)
        if n == 0:
            raise RuntimeError("libdeflate failed")
        enc = out.raw[:n]
        back = zlib.decompress(enc, 31 if self.gzip else 15)
        if back != data:
            raise AssertionError("Python's zlib does not inflate libdeflate's stream to its input")
        return enc


def compressor_chain(j, deflate="numcodecs"):
    """The compressors of a combo. deflate="libdeflate" sizes gzip and numcodecs.zlib with the
    library dc_toolkit encodes them with (see LibDeflate); "numcodecs" with zlib's own bytes."""
    if not j:
        return []
    out = []
    for c in (j if isinstance(j, list) else [j]):
        name, conf = c["name"], c.get("configuration", {})
        if name == "blosc":
            sh = {"noshuffle": 0, "shuffle": 1, "bitshuffle": 2}[conf["shuffle"]]
            out.append(("blosc", conf["typesize"],
                        numcodecs.Blosc(cname=conf["cname"], clevel=conf["clevel"], shuffle=sh,
                                        blocksize=conf.get("blocksize", 0))))
        elif name == "numcodecs.shuffle":
            out.append(("plain", 1, numcodecs.Shuffle(elementsize=conf["elementsize"])))
        elif name == "zstd":
            # level 0 is zstd's default (3); numcodecs 0.11 reads 0 as its own default, 1
            out.append(("plain", 1, numcodecs.Zstd(level=conf["level"] or 3)))
        elif name in ("gzip", "numcodecs.zlib") and deflate == "libdeflate":
            out.append(("plain", 1, LibDeflate(name == "gzip", conf["level"])))
        elif name == "gzip":
            out.append(("plain", 1, numcodecs.GZip(level=conf["level"])))
        elif name == "numcodecs.zlib":
            out.append(("plain", 1, numcodecs.Zlib(level=conf["level"])))
        elif name == "numcodecs.lz4":
            out.append(("plain", 1, numcodecs.LZ4(acceleration=conf["acceleration"])))
        elif name == "numcodecs.bz2":
            out.append(("plain", 1, numcodecs.BZ2(level=conf["level"])))
        elif name == "numcodecs.lzma":
            out.append(("plain", 1, numcodecs.LZMA(format=1, check=-1, preset=conf["preset"])))
        else:
            raise ValueError(name)
    return out


def zfp_folded(f):
    """The chunk as the Python dc_toolkit hands it to zfpy: size-1 axes dropped, the slowest pair
    merged while there are more than 4 axes or one exceeds what zfp's header holds."""
    side = {1: 2**48, 2: 2**24, 3: 2**16, 4: 2**12}
    dims = [d for d in f.shape if d > 1] or [1]
    while len(dims) > 1 and (len(dims) > 4 or any(d > side[len(dims)] for d in dims)):
        dims = [dims[0] * dims[1]] + dims[2:]
    return np.ascontiguousarray(f).reshape(dims)


def run_combo(sample, chunk, row, deflate="numcodecs"):
    dtype = sample.dtype
    filt = filter_codec(json.loads(row["filter"]) if row["filter"] else None, dtype)
    ser = json.loads(row["serializer"]) if row["serializer"] else None
    comps = compressor_chain(json.loads(row["compressor"]) if row["compressor"] else None, deflate)
    zfp = ZFPY(**{k: ser["configuration"][k] for k in ("mode", "tolerance", "rate", "precision")}) if ser else None
    stored = 0
    sums = np.zeros(6)  # sum|x|, sum x^2, max|x|, sum|e|, sum e^2, max|e|
    for block, valid in chunks(sample, chunk):
        if np.all(np.isnan(block)):
            continue
        if filt is None:
            f = block
        elif isinstance(filt, tuple):
            f = filt[1](block)
        else:  # numcodecs 0.11's BitRound rounds its input in place and hands back an integer view
            f = np.frombuffer(bytes(filt.encode(block.copy())), dtype=dtype).reshape(block.shape)
        data = zfp.encode(zfp_folded(f)) if zfp else f.tobytes()
        for kind, ts, c in comps:
            buf = np.frombuffer(data, dtype="u%d" % ts) if kind == "blosc" and ts in (2, 4, 8) else data
            data = bytes(c.encode(buf))
        stored += len(data)
        back = zfp.decode(zfp.encode(zfp_folded(f))) if zfp else f
        back = np.asarray(back).reshape(block.shape)
        if filt is None:
            y = back
        elif isinstance(filt, tuple):
            y = filt[2](back if filt[0] == "fso" else back.astype(dtype))
        else:
            y = np.frombuffer(filt.decode(np.ascontiguousarray(back)), dtype=dtype).reshape(block.shape)
        x = block[valid].astype(np.float64)
        y = y[valid].astype(np.float64)
        m = np.isfinite(x)
        x, e = x[m], np.abs(y[m] - x[m])
        sums[[0, 1, 3, 4]] += [np.abs(x).sum(), (x * x).sum(), e.sum(), (e * e).sum()]
        sums[2] = max(sums[2], np.abs(x).max(initial=0))
        sums[5] = max(sums[5], e.max(initial=0))
    rel = lambda a, b: 0.0 if a == 0 else a / b
    ratio = sample.nbytes / stored
    return ratio, rel(sums[3], sums[0]), rel(math.sqrt(sums[4]), math.sqrt(sums[1])), rel(sums[5], sums[2])


