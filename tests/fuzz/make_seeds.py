#!/usr/bin/python3
"""Seeds of the dataset_open fuzz target from real files, cut down so that one
input costs little: tiny netCDF files of ncarg/data as they are, a slice of
meccatemp.cdf in every netCDF flavour (classic, 64-bit offset, CDF5,
netCDF-4 compressed), a packed (scale_factor/add_offset/_FillValue) copy, and
the smallest message of each ncarg GRIB file.

    /usr/bin/python3 tests/fuzz/make_seeds.py CORPUS_DIR [NCARG_DATA]

Each seed is mode byte 0 (a regular file) followed by the file's bytes."""
import os
import sys
import tempfile

import eccodes
import netCDF4
import numpy as np

out = os.path.join(sys.argv[1], "dataset_open")
ncarg = sys.argv[2] if len(sys.argv) > 2 else "/usr/share/ncarg/data"
os.makedirs(out, exist_ok=True)


def save(name, data):
    with open(os.path.join(out, "seed_" + name), "wb") as f:
        f.write(b"\0" + data)
    print(f"{name}: {len(data)} bytes")


for f in ("cdf/cn10n.cdf", "cdf/meteo_data.nc"):
    save(os.path.basename(f), open(os.path.join(ncarg, f), "rb").read())

src = netCDF4.Dataset(os.path.join(ncarg, "cdf/meccatemp.cdf"))
t = src["t"][0:2, 0:5, 0:6]
tmp = tempfile.mkdtemp()
for fmt in ("NETCDF3_CLASSIC", "NETCDF3_64BIT_OFFSET", "NETCDF3_64BIT_DATA", "NETCDF4", "NETCDF4_CLASSIC"):
    p = os.path.join(tmp, fmt + ".nc")
    with netCDF4.Dataset(p, "w", format=fmt) as d:
        d.title = "meccatemp slice"
        for name, n in (("time", 2), ("lat", 5), ("lon", 6)):
            d.createDimension(name, None if name == "time" else n)
            v = d.createVariable(name, "i4", (name,))
            v.units = src[name].units
            v[:] = src[name][:n]
        zlib = fmt.startswith("NETCDF4")
        v = d.createVariable("t", "f4", ("time", "lat", "lon"), zlib=zlib, fill_value=np.float32(-999))
        v.units = src["t"].units
        v[:] = t
        if fmt in ("NETCDF3_CLASSIC", "NETCDF4"):
            p16 = d.createVariable("t_packed", "i2", ("time", "lat", "lon"), zlib=zlib, fill_value=np.int16(-32767))
            p16.scale_factor = np.float32(0.01)
            p16.add_offset = np.float32(250)
            p16.units = "K"
            p16[:] = t
            p16[0, 0, 0] = np.ma.masked
    save(fmt.lower() + ".nc", open(p, "rb").read())
    os.remove(p)
os.rmdir(tmp)

for f in sorted(os.listdir(os.path.join(ncarg, "grb"))):
    best = None
    with open(os.path.join(ncarg, "grb", f), "rb") as fh:
        while True:
            h = eccodes.codes_grib_new_from_file(fh)
            if h is None:
                break
            msg = eccodes.codes_get_message(h)
            eccodes.codes_release(h)
            if best is None or len(msg) < len(best):
                best = msg
    if best is not None and len(best) <= 64 * 1024:
        save(f, best)
