"""Zarr v2 stores written by Debian's zarr-python 2.13 read back equal here:
every numcodecs compressor we register, filters, missing chunks, NaN fill,
big-endian and Fortran-order arrays, "/" key separators; and a v2 group opened
as a dataset input (dimension names from _ARRAY_DIMENSIONS, attributes).

    zarr_v2_input.py PATH/TO/dctk_zarr_tool
"""
import json
import os
import subprocess
import sys
import tempfile

import numcodecs
import numpy as np
import zarr

TOOL = sys.argv[1]


def have():
    return set(subprocess.check_output([TOOL, "codecs"]).decode().split())


def field(shape, dtype):
    rng = np.random.default_rng(7)
    x = 100 * np.sin(np.indices(shape).sum(axis=0) / 5.0) + rng.normal(0, 1, shape)
    return x.astype(dtype)


def cases(reg):
    """name, compressor, filters, dtype, order, key separator, required codecs"""
    out = [("raw", None, None, "<f4", "C", ".", set()),
           ("big_endian", None, None, ">i4", "C", ".", set()),
           ("slash_keys", None, None, "<f8", "C", "/", set())]
    comp = [("blosc", numcodecs.Blosc(cname="lz4", clevel=5, shuffle=numcodecs.Blosc.BITSHUFFLE), "blosc"),
            ("zstd", numcodecs.Zstd(level=3), "zstd"),
            ("gzip", numcodecs.GZip(level=5), "gzip"),
            ("zlib", numcodecs.Zlib(level=5), "numcodecs.zlib"),
            ("lz4", numcodecs.LZ4(acceleration=1), "numcodecs.lz4"),
            ("bz2", numcodecs.BZ2(level=5), "numcodecs.bz2"),
            ("lzma", numcodecs.LZMA(preset=1), "numcodecs.lzma")]
    for name, c, need in comp:
        out.append((name, c, None, "<f4", "C", ".", {need}))
    out.append(("delta_zlib", numcodecs.Zlib(level=1), [numcodecs.Delta(dtype="<i2")], "<i2", "C", ".",
                {"numcodecs.delta", "numcodecs.zlib"}))
    out.append(("shuffle_zstd", numcodecs.Zstd(level=1), [numcodecs.Shuffle(elementsize=8)], "<f8", "C", ".",
                {"numcodecs.shuffle", "zstd"}))
    out.append(("fortran", numcodecs.Zstd(level=1), None, "<f4", "F", ".", {"transpose", "zstd"}))
    return [c for c in out if c[6] <= reg]


def main():
    reg = have()
    failures = n = 0
    with tempfile.TemporaryDirectory() as tmp:
        for name, comp, filters, dtype, order, sep, _ in cases(reg):
            n += 1
            path = os.path.join(tmp, name + ".zarr")
            shape = (9, 14, 11)
            x = field(shape, dtype)
            fill = np.nan if np.dtype(dtype).kind == "f" else 0
            z = zarr.open_array(path, mode="w", shape=shape, chunks=(4, 5, 6), dtype=dtype, compressor=comp,
                                filters=filters, order=order, fill_value=fill, dimension_separator=sep)
            x[:4, :5, :6] = fill  # an all-fill chunk, which zarr does not store
            z[...] = x
            z.attrs["_ARRAY_DIMENSIONS"] = ["t", "y", "x"]
            z.attrs["units"] = "m"
            back = os.path.join(tmp, name + ".raw")
            rc = subprocess.call([TOOL, "read", path, "/", back])
            got = np.fromfile(back, dtype=np.dtype(dtype).newbyteorder("<")).reshape(shape) if rc == 0 else None
            ok = got is not None and np.array_equal(got, x.astype(np.dtype(dtype).newbyteorder("<")), equal_nan=True)
            # a region across chunk edges
            rc = subprocess.call([TOOL, "read", path, "/", back, "--start", "3,4,5", "--count", "5,6,6"])
            part = np.fromfile(back, dtype=np.dtype(dtype).newbyteorder("<")).reshape(5, 6, 6) if rc == 0 else None
            ok = ok and part is not None and np.array_equal(part, x[3:8, 4:10, 5:11], equal_nan=True)
            res = subprocess.run([TOOL, "meta", path, "/"], stdout=subprocess.PIPE)
            meta = json.loads(res.stdout) if res.returncode == 0 else {}
            ok = ok and meta.get("dimension_names") == ["t", "y", "x"] and meta.get("attributes") == {"units": "m"}
            print(f"{'ok' if ok else 'FAIL'} v2 {name} ({dtype}, order {order}, separator '{sep}')")
            failures += not ok

        # a group of arrays as a dataset input
        n += 1
        gpath = os.path.join(tmp, "group.zarr")
        g = zarr.open_group(gpath, mode="w")
        g.attrs["title"] = "fixture"
        t = g.create_dataset("t2m", shape=(3, 4, 5), chunks=(2, 2, 5), dtype="<f4", fill_value=np.nan)
        t[...] = field((3, 4, 5), "<f4")
        t.attrs.update({"_ARRAY_DIMENSIONS": ["time", "lat", "lon"], "units": "K"})
        lat = g.create_dataset("lat", shape=(4,), dtype="<f8")
        lat[...] = np.linspace(-45, 45, 4)
        lat.attrs["_ARRAY_DIMENSIONS"] = ["lat"]
        vars_ = {v["name"]: v for v in json.loads(subprocess.check_output([TOOL, "dataset", gpath]))}
        ok = set(vars_) == {"t2m", "lat"} and vars_["t2m"]["dims"] == ["time", "lat", "lon"]
        ok = ok and vars_["t2m"]["units"] == "K" and vars_["t2m"]["dtype"] == "float32"
        out = os.path.join(tmp, "t2m.raw")
        subprocess.check_call([TOOL, "dataset", gpath, "t2m", out])
        ok = ok and np.array_equal(np.fromfile(out, dtype="<f4").reshape(3, 4, 5), t[...])
        print(f"{'ok' if ok else 'FAIL'} v2 group as a dataset input: {sorted(vars_)}")
        failures += not ok
    print(f"{n - failures}/{n} zarr-python v2 fixtures read back equal")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
