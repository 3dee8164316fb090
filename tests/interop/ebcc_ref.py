"""ctypes access to a build of the reference EBCC library (spcl/EBCC's
libh5z_ebcc.so), the way its ebcc/zarr_filter.py calls it: populate_config
from the arglist and the buffer size, then ebcc_encode / ebcc_decode."""
import ctypes

import numpy as np


class _Config(ctypes.Structure):
    _fields_ = [("dims", ctypes.c_size_t * 3), ("base_cr", ctypes.c_float),
                ("residual_compression_type", ctypes.c_int), ("residual_cr", ctypes.c_float),
                ("error", ctypes.c_float), ("chunk_dims", ctypes.c_size_t * 3)]


class Ref:
    def __init__(self, path):
        lib = ctypes.CDLL(path)
        lib.populate_config.argtypes = [ctypes.POINTER(_Config), ctypes.c_size_t,
                                        ctypes.POINTER(ctypes.c_uint), ctypes.c_size_t]
        lib.ebcc_encode.restype = ctypes.c_size_t
        lib.ebcc_encode.argtypes = [ctypes.c_void_p, ctypes.POINTER(_Config),
                                    ctypes.POINTER(ctypes.POINTER(ctypes.c_ubyte))]
        lib.ebcc_decode.restype = ctypes.c_size_t
        lib.ebcc_decode.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.POINTER(ctypes.POINTER(ctypes.c_float))]
        lib.free_buffer.argtypes = [ctypes.c_void_p]
        self.lib = lib

    def encode(self, a, arglist):
        a = np.ascontiguousarray(a, dtype="<f4").reshape(-1)
        args = (ctypes.c_uint * len(arglist))(*arglist)
        cfg = _Config()
        self.lib.populate_config(ctypes.byref(cfg), len(arglist), args, a.nbytes)
        out = ctypes.POINTER(ctypes.c_ubyte)()
        n = self.lib.ebcc_encode(a.ctypes.data, ctypes.byref(cfg), ctypes.byref(out))
        data = ctypes.string_at(out, n)
        self.lib.free_buffer(out)
        return data

    def decode(self, data):
        buf = ctypes.create_string_buffer(bytes(data), len(data))
        out = ctypes.POINTER(ctypes.c_float)()
        n = self.lib.ebcc_decode(buf, len(data), ctypes.byref(out))
        if n == 0 or not out:
            return None
        arr = np.ctypeslib.as_array(out, shape=(n,)).copy()
        self.lib.free_buffer(out)
        return arr
