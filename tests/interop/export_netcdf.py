"""from_zarr_to_netcdf, checked with tools that are not ours: ncdump -h and
python3-xarray open the netCDF written back from each fixture store with the
dimensions, variables, values and attributes of the original input (less the
dc_toolkit provenance attribute we add); python3-netCDF4 sees chunked,
deflated variables. Also a Zarr v2 store that xarray writes (to_zarr), and a
v2 store with nested groups (netCDF-4 groups).

    export_netcdf.py FIXTURE_DIR
"""
import atexit
import json
import os
import re
import shutil
import sys
import tempfile

import netCDF4
import numpy as np
import xarray as xr
import zarr

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from export_common import DCTK, Checker, lossy_bound, manifest, run  # noqa: E402

FIX = sys.argv[1]
TMP = tempfile.mkdtemp(prefix="dctk-export-")
atexit.register(shutil.rmtree, TMP, ignore_errors=True)
C = Checker("export netcdf")


def ncdump_header(path):
    """{dim: length}, {var: "type(dims)"} from ncdump -h."""
    text = run(["ncdump", "-h", path]).stdout
    dims = {}
    for m in re.finditer(r"^\t(\S+) = (?:(\d+)|UNLIMITED ; // \((\d+) currently\))", text, re.M):
        dims[m.group(1)] = int(m.group(2) or m.group(3))
    decls = {m.group(2): f"{m.group(1)}({m.group(3)})"
             for m in re.finditer(r"^\t(\w+) (\S+)\((.*?)\) ;", text, re.M)}
    return dims, decls


def same_attr(a, b):
    if isinstance(a, str) or isinstance(b, str):
        return a == b
    a, b = np.asarray(a), np.asarray(b)
    return a.shape == b.shape and a.dtype.kind == b.dtype.kind and np.array_equal(a, b, equal_nan=True)


def compare_attrs(got, want, what, extra=("dc_toolkit",)):
    got = {k: v for k, v in got.items() if k not in extra}
    C.check(set(got) == set(want), f"{what}: attributes {sorted(got)} vs {sorted(want)}")
    for k in set(got) & set(want):
        C.check(same_attr(got[k], want[k]), f"{what}: attribute {k}: {got[k]!r} vs {want[k]!r}")


def compare_values(got, want, info, what):
    if info and info.get("lossy"):
        x, y = np.asarray(want, dtype=np.float64), np.asarray(got, dtype=np.float64)
        ok = np.isnan(x) == np.isnan(y)
        C.check(ok.all(), f"{what}: masks differ")
        m = ~np.isnan(x)
        C.check(np.all(np.abs(y[m] - x[m]) <= lossy_bound(info)(x[m])), f"{what}: beyond the bitround bound")
        l1 = np.abs(y[m] - x[m]).sum() / np.abs(x[m]).sum()
        C.check(l1 <= info["l1_bound"], f"{what}: relative L1 {l1} > {info['l1_bound']}")
    else:
        C.check(np.array_equal(got, want, equal_nan=got.dtype.kind == "f"), f"{what}: values differ")


def compare_xarray(src, out, vars_info, what):
    with xr.open_dataset(src) as a, xr.open_dataset(out) as b:
        C.check(dict(a.sizes) == dict(b.sizes), f"{what}: sizes {dict(b.sizes)} vs {dict(a.sizes)}")
        C.check(set(a.variables) == set(b.variables), f"{what}: variables {sorted(b.variables)} vs {sorted(a.variables)}")
        compare_attrs(b.attrs, a.attrs, f"{what}: global")
        for name in set(a.variables) & set(b.variables):
            va, vb = a[name], b[name]
            C.check(va.dims == vb.dims, f"{what}/{name}: dims {vb.dims} vs {va.dims}")
            C.check(va.dtype == vb.dtype, f"{what}/{name}: dtype {vb.dtype} vs {va.dtype}")
            compare_values(vb.values, va.values, vars_info.get(name), f"{what}/{name}")
            compare_attrs(vb.attrs, va.attrs, f"{what}/{name}")


def check_storage(out, lossy, what):
    """Chunked and deflated with shuffle; the provenance attribute is JSON."""
    with netCDF4.Dataset(out) as nc:
        C.check(nc.data_model == "NETCDF4", f"{what}: data model {nc.data_model}")
        for name, v in nc.variables.items():
            f = v.filters()
            C.check(f.get("zlib") and f.get("shuffle") and f.get("complevel") == 1, f"{what}/{name}: filters {f}")
            C.check(v.chunking() != "contiguous", f"{what}/{name}: not chunked")
            if "dc_toolkit" not in v.ncattrs():
                C.check(v.ndim == 1 and v.dimensions[0] == name, f"{what}/{name}: no dc_toolkit attribute")
                continue
            prov = json.loads(v.getncattr("dc_toolkit"))
            C.check(isinstance(prov.get("pipeline"), list), f"{what}/{name}: dc_toolkit {prov}")
            if name == lossy:
                C.check(prov.get("threshold") == 1e-3 and prov.get("predicted_ratio", 0) > 1,
                        f"{what}/{name}: dc_toolkit {prov}")


def check_fixture_store(key, m):
    src, store = m["source"], m["store"]
    # default output: the store's name with .nc for .zarr
    default = store[: -len(".zarr")] + ".nc"
    r = run([DCTK, "from_zarr_to_netcdf", store + "/"])
    C.check(os.path.exists(default) and default in r.stdout, f"{key}: default output {default}: {r.stdout}")
    out = os.path.join(TMP, key + ".nc")
    run([DCTK, "from_zarr_to_netcdf", store, "--out", out])
    C.check(open(out, "rb").read(8) == b"\x89HDF\r\n\x1a\n", f"{key}: {out} is not an HDF5 (netCDF-4) file")
    din, vin = ncdump_header(src)
    dout, vout = ncdump_header(out)
    C.check(din == dout, f"{key}: ncdump dimensions {dout} vs {din}")
    C.check(vin == vout, f"{key}: ncdump variables {vout} vs {vin}")
    lossy = [n for n, i in m["vars"].items() if i.get("lossy")]
    compare_xarray(src, out, m["vars"], key)
    check_storage(out, lossy[0] if lossy else None, key)
    print(f"ok {key}: {out} ({os.path.getsize(out)} bytes) matches {os.path.basename(src)}")


def check_xarray_v2(src):
    """A v2 store as xarray writes it: _ARRAY_DIMENSIONS, CF time units, coordinates."""
    store = os.path.join(TMP, "xr_v2.zarr")
    with xr.open_dataset(src) as ds:
        ds.to_zarr(store, mode="w", consolidated=True)
    out = os.path.join(TMP, "xr_v2.nc")
    run([DCTK, "from_zarr_to_netcdf", store, "--out", out])
    with xr.open_zarr(store, consolidated=False) as a, xr.open_dataset(out) as b:
        C.check(dict(a.sizes) == dict(b.sizes), f"xarray v2: sizes {dict(b.sizes)} vs {dict(a.sizes)}")
        C.check(set(a.variables) == set(b.variables), f"xarray v2: variables {sorted(b.variables)}")
        compare_attrs(b.attrs, a.attrs, "xarray v2: global")
        for name in set(a.variables) & set(b.variables):
            C.check(a[name].dims == b[name].dims, f"xarray v2/{name}: dims")
            C.check(np.array_equal(a[name].values, b[name].values, equal_nan=a[name].dtype.kind == "f"),
                    f"xarray v2/{name}: values differ")
            compare_attrs(b[name].attrs, a[name].attrs, f"xarray v2/{name}")
    print(f"ok xarray-written v2 store -> {out}")


def check_v2_groups():
    """Nested v2 groups become netCDF-4 groups; JSON attributes map to netCDF types."""
    store = os.path.join(TMP, "groups_v2.zarr")
    root = zarr.open_group(store, mode="w")
    root.attrs.update({"title": "nested", "version": 3, "weights": [0.5, 0.25], "tags": ["a", "b"],
                       "meta": {"k": [1, 2]}})
    sub = root.create_group("sub").create_group("deeper")
    x = np.arange(24, dtype="<i2").reshape(4, 6)
    a = sub.create_dataset("counts", data=x, chunks=(3, 4), compressor=zarr.Zstd(level=1))
    a.attrs.update({"_ARRAY_DIMENSIONS": ["row", "col"], "scale": 0.5, "big": 2**40})
    y = np.linspace(0, 1, 6, dtype="<f4")
    b = root.create_dataset("col_values", data=y, chunks=(4,), fill_value=np.nan)
    b.attrs["_ARRAY_DIMENSIONS"] = ["col"]
    out = os.path.join(TMP, "groups_v2.nc")
    run([DCTK, "from_zarr_to_netcdf", store, "--out", out])
    with netCDF4.Dataset(out) as nc:
        C.check(nc.getncattr("title") == "nested" and nc.getncattr("version") == 3, "groups: global attributes")
        C.check(list(nc.getncattr("weights")) == [0.5, 0.25], "groups: numeric list attribute")
        C.check(list(nc.getncattr("tags")) == ["a", "b"], "groups: string list attribute")
        C.check(json.loads(nc.getncattr("meta")) == {"k": [1, 2]}, "groups: nested object as JSON text")
        v = nc["sub/deeper/counts"]
        C.check(v.dimensions == ("row", "col") and v.dtype == np.int16, f"groups: counts {v.dimensions} {v.dtype}")
        C.check(np.array_equal(v[...], x), "groups: counts values")
        C.check(v.getncattr("big") == 2**40 and v.getncattr("scale") == 0.5, "groups: int64 and real attributes")
        C.check(np.array_equal(nc["col_values"][...], y), "groups: col_values values")
    print(f"ok v2 store with nested groups -> {out}")


def main():
    m = manifest(FIX)
    for key, info in m["stores"].items():
        check_fixture_store(key, info)
    check_xarray_v2(m["stores"]["tos"]["source"])
    check_v2_groups()
    C.finish()


if __name__ == "__main__":
    main()
