"""numcodecs codecs (and zarr-python 3 codecs) for dc_toolkit's own codecs,
dctk.sz and dctk.ebcc, decoded and encoded by dc_toolkit's library
(libdctk_codec_abi) through ctypes.

Installed by `make install`, whose dist-info names the codecs as entry points
(numcodecs.codecs, zarr.codecs), so numcodecs.get_codec({"id": "dctk.sz",
...}) and zarr-python 3 find them without an import; importing this package
registers them with numcodecs too."""
import numcodecs

from .numcodecs_codecs import DctkEbcc, DctkSz

for _cls in (DctkSz, DctkEbcc):
    numcodecs.register_codec(_cls)

__all__ = ["DctkSz", "DctkEbcc"]
