"""numcodecs Codec classes for dctk.sz and dctk.ebcc.

These are array->bytes codecs: the stream does not record the chunk's dtype
and shape, which Zarr knows from the array's metadata. So decode() needs
`out`, an array of the chunk's dtype and shape (as zarr passes it), and
encode() takes the chunk as an array."""
import numpy as np
from numcodecs.abc import Codec
from numcodecs.compat import ensure_ndarray

from . import _native


class _DctkCodec(Codec):
    codec_id = None

    def __init__(self, **configuration):
        self.configuration = dict(configuration)

    def get_config(self):
        return {"id": self.codec_id, **self.configuration}

    def __repr__(self):
        return "%s(%s)" % (type(self).__name__, ", ".join("%s=%r" % kv for kv in sorted(self.configuration.items())))

    def _codec(self):
        return {"name": self.codec_id, "configuration": self.configuration}

    def encode(self, buf):
        return _native.encode(self._codec(), ensure_ndarray(buf))

    def decode(self, buf, out=None):
        if out is None:
            raise ValueError("%s: decode needs out=, an array of the chunk's dtype and shape "
                             "(the stream does not record them)" % self.codec_id)
        target = np.asarray(out)
        got = _native.decode(self._codec(), buf, target.dtype, target.shape)
        target[...] = got
        return out


class DctkSz(_DctkCodec):
    """dctk.sz {error_bound, predictor}: dc_toolkit's SZ-style error-bounded serializer."""
    codec_id = "dctk.sz"


class DctkEbcc(_DctkCodec):
    """dctk.ebcc {error_bound, base_rmse}: dc_toolkit's JPEG 2000 base plus bounded residual serializer."""
    codec_id = "dctk.ebcc"
