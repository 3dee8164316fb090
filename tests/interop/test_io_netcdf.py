"""Our netCDF reader against python3-netCDF4 and python3-xarray.

1. Real files from libncarg-data (both folders, .nc and .cdf; classic,
   64-bit offset and netCDF-4; float32/float64/int8/int32 fields with
   _FillValue and missing_value, valid_range): every data variable decodes to
   what netCDF4 returns with auto mask-and-scale (NaN where it masks, values
   bit-identical or within 1 ulp), with the dtype xarray chooses, and one
   hyperslab per file matches netCDF4's slice. Two netCDF4 habits are not CF
   decoding and xarray does not follow them, so neither do we: masking the
   library's default fill value when a variable has no _FillValue, and
   masking outside valid_range. For those variables netCDF4 reads unmasked,
   and variables with valid_* attributes are compared with xarray instead.
2. A CDF5 copy of a real field, written here with netCDF4.
3. Packed fixtures made from a real field (int16 with scale_factor,
   add_offset, _FillValue, some points set to fill; and variants): dtype and
   values as xarray 2023.01 decodes them (bit for bit), and within 1 ulp of
   netCDF4; packing attributes gone, units kept.

Run by ctest with DCTK_DUMP_TOOL, DCTK and DCTK_NCARG set.
"""
import os
import sys
import warnings

import netCDF4
import numpy as np
import xarray as xr

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from io_common import NCARG, TMP, Checker, listing, read, read_all, ulp_equal  # noqa: E402

warnings.simplefilter("ignore")
C = Checker()

REAL = [
    "cdf/nc4uvt.nc",                # netCDF-4 (HDF5), float32 with _FillValue, int32 coordinates
    "nug/atm_phy_mag0004_1985.nc",  # 64-bit offset, ICON output
    "cdf/95031800_sao.cdf",         # .cdf, int8 field, float32 with _FillValue, char variables
    "cdf/ocean.nc",                 # _FillValue and missing_value
    "cdf/climdiv_polygons.nc",      # int32 with _FillValue -> float64
    "cdf/hgt.nc",                   # int32 time with _FillValue, float32 field
    "cdf/seam.nc",                  # float64 with _FillValue
    "cdf/landsea.nc",               # int8 without fill
    "nug/tos_ocean_bipolar_grid.nc",
    "cdf/contour.cdf",              # 4-D
]


def reference(v, sl=None):
    """netCDF4 with auto mask-and-scale, masked points as NaN; without
    default-fill masking when the variable declares no fill value."""
    declared = {"_FillValue", "missing_value"} & set(v.ncattrs())
    v.set_auto_maskandscale(True)
    v.set_auto_mask(bool(declared))
    a = v[sl] if sl is not None else v[...]
    if np.ma.isMaskedArray(a):
        return np.ma.filled(a.astype(np.float64), np.nan) if a.mask.any() else a.data
    return np.asarray(a)


VALID = {"valid_min", "valid_max", "valid_range"}


def open_xr(path):
    return xr.open_dataset(path, decode_times=False, decode_timedelta=False, mask_and_scale=True)


def compare_var(path, nc, xds, var, ours):
    name = var["name"]
    want_dtype = str(xds[name].dtype)
    C.check(var["dtype"] == want_dtype, f"{path}:{name}: dtype {var['dtype']}, xarray {want_dtype}")
    C.check(list(ours.shape) == list(nc.variables[name].shape), f"{path}:{name}: shape")
    if VALID & set(nc.variables[name].ncattrs()):
        ok, why = ulp_equal(ours, xds[name].values, max_ulp=0)
        C.check(ok, f"{path}:{name} (has valid_*): vs xarray: {why}")
        return
    ok, why = ulp_equal(ours, reference(nc.variables[name]))
    C.check(ok, f"{path}:{name}: {why}")


def compare_slab(path, nc, var):
    shape = var["shape"]
    start = [s // 3 for s in shape]
    count = [max(1, s // 2) if s > 1 else 1 for s in shape]
    count = [min(c, s - b) for c, s, b in zip(count, shape, start)]
    ours, _ = read(path, var["name"], start, count)
    sl = tuple(slice(b, b + c) for b, c in zip(start, count))
    ok, why = ulp_equal(ours, reference(nc.variables[var["name"]], sl))
    C.check(ok, f"{path}:{var['name']} slab {start}+{count}: {why}")


def compare_pieces(path, nc, var):
    """Hyperslabs that lie in one piece in a classic file, read there directly
    (netcdf.c): whole trailing dimensions from an offset row, and a single row
    at an inner index; each against netCDF4's slice."""
    shape = var["shape"]
    if len(shape) < 1 or shape[0] < 2:
        return
    boxes = [([shape[0] // 3] + [0] * (len(shape) - 1), [shape[0] - shape[0] // 3] + shape[1:])]
    if len(shape) >= 2:
        boxes.append(([shape[0] - 1] + [shape[1] // 2] + [0] * (len(shape) - 2), [1, 1] + shape[2:]))
    for start, count in boxes:
        ours, _ = read(path, var["name"], start, count)
        sl = tuple(slice(b, b + c) for b, c in zip(start, count))
        ok, why = ulp_equal(ours, reference(nc.variables[var["name"]], sl))
        C.check(ok, f"{path}:{var['name']} piece {start}+{count}: {why}")


def check_real(rel):
    path = os.path.join(NCARG, rel)
    info, values = read_all(path)
    C.check(info["format"] == "netCDF", f"{rel}: format {info['format']}")
    data = [v for v in info["vars"] if not v["is_coord"]]
    C.check(len(data) > 0, f"{rel}: no data variables")
    with netCDF4.Dataset(path) as nc, open_xr(path) as xds:
        numeric = [n for n, v in nc.variables.items() if v.dtype != str and v.dtype.kind in "iuf"]
        C.check(sorted(v["name"] for v in info["vars"]) == sorted(numeric), f"{rel}: variable list differs")
        for v in info["vars"]:
            want_coord = len(v["dims"]) == 1 and v["dims"][0] == v["name"]
            C.check(v["is_coord"] == want_coord, f"{rel}:{v['name']}: is_coord")
        for v in data:
            compare_var(path, nc, xds, v, values[v["name"]])
        plain = [v for v in data if not VALID & set(nc.variables[v["name"]].ncattrs())]
        multi = [v for v in plain if len(v["shape"]) >= 2] or plain
        if multi:
            compare_slab(path, nc, max(multi, key=lambda v: np.prod(v["shape"])))
        for v in plain:  # every type and packing a file holds, not only the largest field
            compare_pieces(path, nc, v)
        C.check(sorted(info["attrs"]) == sorted(nc.ncattrs()), f"{rel}: global attribute names")


def field():
    with netCDF4.Dataset(os.path.join(NCARG, "nug/tas_rectilinear_grid_2D.nc")) as nc:
        return np.asarray(nc.variables["tas"][...], dtype=np.float64)  # (12, 96, 192) K


def make_cdf5(tas):
    path = os.path.join(TMP, "cdf5.nc")
    with netCDF4.Dataset(path, "w", format="NETCDF3_64BIT_DATA") as nc:
        for n, s in zip(("time", "lat", "lon"), tas.shape):
            nc.createDimension(n, s)
        v = nc.createVariable("tas", "f4", ("time", "lat", "lon"), fill_value=np.float32(1e20))
        v[...] = np.where(tas > 300, 1e20, tas).astype(np.float32)
        c = nc.createVariable("count", "u8", ("lat", "lon"))
        c[...] = np.arange(96 * 192, dtype=np.uint64).reshape(96, 192) * 1000003
        d = nc.createVariable("level", "i8", ("time",))
        d[...] = np.arange(12, dtype=np.int64) - 6
    return path


def check_cdf5(tas):
    path = make_cdf5(tas)
    with open(path, "rb") as f:
        C.check(f.read(4) == b"CDF\x05", "CDF5 fixture magic")
    info, values = read_all(path)
    with netCDF4.Dataset(path) as nc, open_xr(path) as xds:
        for v in info["vars"]:
            compare_var(path, nc, xds, v, values[v["name"]])
        compare_slab(path, nc, {"name": "tas", "shape": list(tas.shape)})


def pack(x, scale, offset):
    return np.clip(np.round((x - offset) / scale), -32766, 32767).astype(np.int16)


def make_packed(tas):
    """Packed fields as CDO or NCO would write them, from a real field."""
    path = os.path.join(TMP, "packed.nc")
    hole = np.zeros(tas.shape, bool)
    hole[:, 10:20, 30:60] = True
    hole[3] = True
    scale, offset = (tas.max() - tas.min()) / 65000.0, (tas.max() + tas.min()) / 2
    with netCDF4.Dataset(path, "w", format="NETCDF4") as nc:
        for n, s in zip(("time", "lat", "lon"), tas.shape):
            nc.createDimension(n, s)
        dims = ("time", "lat", "lon")

        def var(name, typ, data, fill=None, **attrs):
            v = nc.createVariable(name, typ, dims, fill_value=fill)
            v.set_auto_maskandscale(False)
            v.setncatts(dict(units="K", long_name="near-surface air temperature", **attrs))
            v[...] = data

        packed = pack(tas, scale, offset)
        # int16 + scale + offset + _FillValue: xarray 2023.01 gives float32
        var("tas_packed", "i2", np.where(hole, -32767, packed), np.int16(-32767), scale_factor=scale, add_offset=offset)
        # no fill: float64
        var("tas_nofill", "i2", packed, None, scale_factor=scale, add_offset=offset)
        # float32 scale only, with fill: float32
        s32 = np.float32(0.01)
        var("tas_scale32", "i2", np.where(hole, -1, np.round(tas / 0.01 - 20000).astype(np.int16)), np.int16(-1),
            scale_factor=s32)
        # int32 with missing_value only: float64
        var("tas_mk", "i4", np.where(hole, -999, np.round(tas * 1000)).astype(np.int32), None,
            missing_value=np.int32(-999))
    return path


def check_packed(tas):
    path = make_packed(tas)
    info = {v["name"]: v for v in listing(path)["vars"]}
    with xr.open_dataset(path, decode_times=False) as xds, netCDF4.Dataset(path) as nc:
        for name in ("tas_packed", "tas_nofill", "tas_scale32", "tas_mk"):
            ours, meta = read(path, name)
            want = xds[name].values
            C.check(meta["dtype"] == str(want.dtype), f"packed {name}: dtype {meta['dtype']}, xarray {want.dtype}")
            ok, why = ulp_equal(ours, want, max_ulp=0)
            C.check(ok and ours.dtype == want.dtype, f"packed {name}: vs xarray: {why}")
            ok, why = ulp_equal(ours, reference(nc.variables[name]), max_ulp=1)
            C.check(ok, f"packed {name}: vs netCDF4: {why}")
            attrs = info[name]["attrs"]
            C.check(not {"scale_factor", "add_offset", "_FillValue", "missing_value"} & set(attrs),
                    f"packed {name}: packing attributes still exposed: {sorted(attrs)}")
            C.check(attrs.get("units") == "K" and info[name]["units"] == "K", f"packed {name}: units")
            C.check(attrs == xds[name].attrs, f"packed {name}: attrs {attrs} vs xarray {xds[name].attrs}")
        C.check(bool(np.isnan(read(path, "tas_packed")[0][3]).all()), "packed: filled time step reads as NaN")
        start, count = [2, 5, 25], [3, 20, 40]
        ours, _ = read(path, "tas_packed", start, count)
        ok, why = ulp_equal(ours, xds["tas_packed"].values[2:5, 5:25, 25:65], max_ulp=0)
        C.check(ok, f"packed slab vs xarray: {why}")


for rel in REAL:
    check_real(rel)
tas = field()
check_cdf5(tas)
check_packed(tas)
C.finish("test_io_netcdf")
