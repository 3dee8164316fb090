"""The library, through ctypes: the entry points of src/capi/codec_abi.c."""
import ctypes
import ctypes.util
import json
import os

import numpy as np


def _find():
    """DCTK_CODECS_LIBRARY, else the path written at install, else the loader's search."""
    path = os.environ.get("DCTK_CODECS_LIBRARY")
    if not path:
        try:
            from ._libpath import LIBRARY as path
        except ImportError:
            path = ctypes.util.find_library("dctk_codec_abi")
    if not path:
        raise ImportError("dctk_codecs: libdctk_codec_abi not found: install dc_toolkit (make install) "
                          "or set DCTK_CODECS_LIBRARY to the library's path")
    return ctypes.CDLL(path)


_lib = _find()
_U64P = ctypes.POINTER(ctypes.c_uint64)
_lib.dctk_codec_abi_encode.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_int, _U64P, ctypes.c_void_p,
                                       ctypes.c_size_t, ctypes.POINTER(ctypes.c_void_p),
                                       ctypes.POINTER(ctypes.c_size_t), ctypes.c_char_p, ctypes.c_size_t]
_lib.dctk_codec_abi_decode.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_int, _U64P, ctypes.c_void_p,
                                       ctypes.c_size_t, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_char_p,
                                       ctypes.c_size_t]
_lib.dctk_codec_abi_free.argtypes = [ctypes.c_void_p]
_lib.dctk_codec_abi_free.restype = None


def _spec(dtype, shape):
    dtype = np.dtype(dtype)
    if dtype.byteorder == ">" or (dtype.byteorder == "=" and np.little_endian is False):
        raise ValueError("dctk codecs work on little-endian chunks, not %s" % dtype)
    shape = tuple(int(s) for s in shape) or (1,)
    return dtype.newbyteorder("<"), (ctypes.c_uint64 * len(shape))(*shape), len(shape)


def _check(rc, err, what):
    if rc != 0:
        raise ValueError("%s: %s" % (what, err.value.decode("utf-8", "replace")))


def encode(codec, array):
    """The bytes of one chunk (a numpy array) encoded by codec {"name", "configuration"}."""
    array = np.ascontiguousarray(array)
    dtype, shape, ndim = _spec(array.dtype, array.shape)
    out, n, err = ctypes.c_void_p(), ctypes.c_size_t(), ctypes.create_string_buffer(1024)
    rc = _lib.dctk_codec_abi_encode(json.dumps(codec).encode(), dtype.name.encode(), ndim, shape,
                                    array.ctypes.data, array.nbytes, ctypes.byref(out), ctypes.byref(n), err, 1024)
    _check(rc, err, codec["name"])
    try:
        return ctypes.string_at(out, n.value)
    finally:
        _lib.dctk_codec_abi_free(out)


def decode(codec, data, dtype, shape):
    """One chunk of dtype and shape decoded from data by codec."""
    dtype, cshape, ndim = _spec(dtype, shape)
    out = np.empty(shape, dtype=dtype)
    src = bytes(memoryview(data).cast("B"))
    err = ctypes.create_string_buffer(1024)
    rc = _lib.dctk_codec_abi_decode(json.dumps(codec).encode(), dtype.name.encode(), ndim, cshape, src, len(src),
                                    out.ctypes.data, out.nbytes, err, 1024)
    _check(rc, err, codec["name"])
    return out
