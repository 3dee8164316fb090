"""zarr-python 3 codecs for dctk.sz and dctk.ebcc (entry point group
"zarr.codecs", names "dctk.sz" and "dctk.ebcc", as zarr-python documents for
codecs of other packages). Array->bytes codecs: zarr gives each chunk's dtype
and shape in its ArraySpec.

zarr-python 3 is not installable on the machines this was written on (Debian
ships zarr 2): this module follows zarr's documented codec interface but is
not run by the tests; the numcodecs codecs next to it are."""
from dataclasses import dataclass, field

import numpy as np
from zarr.abc.codec import ArrayBytesCodec

from . import _native


def _native_dtype(spec):
    dt = spec.dtype
    return dt.to_native_dtype() if hasattr(dt, "to_native_dtype") else np.dtype(dt)


@dataclass(frozen=True)
class _DctkCodec(ArrayBytesCodec):
    configuration: dict = field(default_factory=dict)
    is_fixed_size = False
    codec_name = None

    @classmethod
    def from_dict(cls, data):
        return cls(configuration=dict(data.get("configuration", {})))

    def to_dict(self):
        return {"name": self.codec_name, "configuration": dict(self.configuration)}

    def _codec(self):
        return self.to_dict()

    async def _decode_single(self, chunk_bytes, chunk_spec):
        arr = _native.decode(self._codec(), chunk_bytes.as_numpy_array(), _native_dtype(chunk_spec),
                             chunk_spec.shape)
        return chunk_spec.prototype.nd_buffer.from_numpy_array(arr)

    async def _encode_single(self, chunk_array, chunk_spec):
        data = _native.encode(self._codec(), chunk_array.as_numpy_array())
        return chunk_spec.prototype.buffer.from_bytes(data)

    def compute_encoded_size(self, input_byte_length, chunk_spec):
        raise NotImplementedError("the size of a dctk stream depends on the data")


@dataclass(frozen=True)
class DctkSz(_DctkCodec):
    codec_name = "dctk.sz"


@dataclass(frozen=True)
class DctkEbcc(_DctkCodec):
    codec_name = "dctk.ebcc"
