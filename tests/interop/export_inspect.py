"""open_zarr_and_inspect prints what is really in a store: for each fixture
store (built by our commands) and for Zarr v2 stores that python3-zarr 2.13
writes, every array's shape, dimension names, dtype, chunk and shard shapes,
codecs (as in its metadata), stored and uncompressed bytes and their ratio
(from the files on disk), provenance, first values and min/max/mean/NaN count
(from numpy on the same values).

    export_inspect.py FIXTURE_DIR
"""
import atexit
import json
import os
import re
import shutil
import sys
import tempfile

import numcodecs
import numpy as np
import zarr

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from export_common import DCTK, Checker, manifest, reference, run  # noqa: E402

FIX = sys.argv[1]
TMP = tempfile.mkdtemp(prefix="dctk-inspect-")
atexit.register(shutil.rmtree, TMP, ignore_errors=True)
C = Checker("export inspect")
META = {"zarr.json", ".zarray", ".zattrs", ".zgroup", ".zmetadata"}


def blocks(text):
    """{array path: [lines]} from the listing."""
    out, cur = {}, None
    for line in text.splitlines():
        m = re.match(r"^array (\S+)$", line)
        if m:
            cur = out.setdefault(m.group(1), [])
        elif cur is not None and line.startswith("  "):
            cur.append(line)
    return out


def field(lines, key):
    for line in lines:
        if line.strip().startswith(key + ":"):
            return line.strip()[len(key) + 1:].strip()
    return None


def codec_lines(lines):
    i = next((k for k, line in enumerate(lines) if line.strip().startswith("codecs")), None)
    out = []
    for line in lines[i + 1:] if i is not None else []:
        if not line.startswith("    {"):
            break
        out.append(json.loads(line))
    return out


def stored_on_disk(folder):
    total = keys = 0
    for d, _, files in os.walk(folder):
        for f in files:
            if not (d == folder and f in META):
                total += os.path.getsize(os.path.join(d, f))
                keys += 1
    return total, keys


def shape_str(shape):
    return "[" + ", ".join(map(str, shape)) + "]"


def check_sizes(lines, folder, shape, itemsize, what):
    stored, keys = stored_on_disk(folder)
    raw = int(np.prod(shape)) * itemsize
    s = field(lines, "stored") or ""
    m = re.search(r"\((\d+) bytes\) in (\d+) keys?\s+uncompressed: .*?\((\d+) bytes\)\s+ratio: ([\d.]+|inf)", s)
    if not C.check(m is not None, f"{what}: stored line {s!r}"):
        return
    C.check(int(m.group(1)) == stored and int(m.group(2)) == keys, f"{what}: stored {m.group(1)} in {m.group(2)}, "
            f"disk has {stored} in {keys}")
    C.check(int(m.group(3)) == raw, f"{what}: uncompressed {m.group(3)} vs {raw}")
    C.check(stored == 0 or abs(float(m.group(4)) - raw / stored) < 1e-3, f"{what}: ratio {m.group(4)} vs {raw / stored}")


def check_values(lines, x, what, rel=1e-6):
    """Preview and statistics against numpy on the same values."""
    first = x.reshape(-1, x.shape[-1])[0, :6] if x.ndim else x.reshape(1)
    pv = re.search(r"first row \[(.*?)(, \.\.\.)?\]", field(lines, "values") or "")
    got = [float(v) for v in pv.group(1).split(", ")] if pv else []
    C.check(len(got) == len(first) and np.allclose(got, first, rtol=rel, equal_nan=True),
            f"{what}: preview {got} vs {first}")
    st = re.search(r"min (\S+)\s+max (\S+)\s+mean (\S+)\s+NaN (\d+).*of (\d+) values", field(lines, "stats") or "")
    if not C.check(st is not None, f"{what}: stats line"):
        return
    xf = x.astype(np.float64)
    want = [np.nanmin(xf), np.nanmax(xf), np.nanmean(xf)]
    got = [float(st.group(k)) for k in (1, 2, 3)]
    C.check(np.allclose(got, want, rtol=rel, atol=1e-12), f"{what}: min/max/mean {got} vs {want}")
    C.check(int(st.group(4)) == int(np.isnan(xf).sum()) and int(st.group(5)) == x.size,
            f"{what}: NaN {st.group(4)} of {st.group(5)}")


def check_fixture_store(key, m):
    text = run([DCTK, "open_zarr_and_inspect", m["store"]]).stdout
    C.check("format: Zarr v3" in text, f"{key}: format line")
    C.check(f"consolidated metadata: {len(m['vars'])} nodes" in text, f"{key}: consolidated metadata line")
    got = blocks(text)
    C.check(sorted(got) == sorted(m["vars"]), f"{key}: arrays {sorted(got)}")
    for name, info in m["vars"].items():
        lines, what = got.get(name, []), f"{key}/{name}"
        with open(os.path.join(m["store"], name, "zarr.json")) as f:
            zj = json.load(f)
        shard = zj["codecs"][0]["configuration"]
        C.check(field(lines, "shape") == f"{shape_str(info['shape'])}  dims: {', '.join(info['dims'])}",
                f"{what}: shape line {field(lines, 'shape')!r}")
        C.check(field(lines, "dtype") == zj["data_type"], f"{what}: dtype")
        C.check(field(lines, "chunks") == f"{shape_str(shard['chunk_shape'])} (inner)  shards: "
                f"{shape_str(zj['chunk_grid']['configuration']['chunk_shape'])}", f"{what}: chunks line")
        C.check(codec_lines(lines) == shard["codecs"], f"{what}: codecs {codec_lines(lines)} vs {shard['codecs']}")
        C.check(field(lines, "fill value") == "NaN", f"{what}: fill value")
        x = reference(FIX, info)
        check_sizes(lines, os.path.join(m["store"], name), info["shape"], x.itemsize, what)
        if info.get("lossy"):
            C.check(codec_lines(lines) == info["codecs"], f"{what}: codecs are not the sweep's best")
            C.check(any(re.match(r"\s+threshold: 0.001$", line) for line in lines), f"{what}: no threshold")
            C.check(any(re.match(r"\s+predicted_ratio: [\d.]+$", line) for line in lines), f"{what}: no predicted_ratio")
            check_values(lines, x, what, rel=2.0 ** -info["keepbits"])
        else:
            check_values(lines, x, what)
    print(f"ok {key}: {len(got)} arrays")


def write_v2():
    """A v2 group as python3-zarr writes it, and a store that is one array."""
    path = os.path.join(TMP, "v2.zarr")
    g = zarr.open_group(path, mode="w")
    g.attrs["title"] = "v2 fixture"
    rng = np.random.default_rng(3)
    t = (280 + 10 * rng.standard_normal((5, 7, 9))).astype("<f4")
    t[0, 0, 3] = t[2, 4, :] = np.nan
    a = g.create_dataset("t2m", data=t, chunks=(2, 4, 9), fill_value=np.nan,
                         compressor=numcodecs.Blosc(cname="zstd", clevel=3, shuffle=numcodecs.Blosc.SHUFFLE))
    a.attrs.update({"_ARRAY_DIMENSIONS": ["time", "lat", "lon"], "units": "K"})
    h = np.arange(-30, 33, dtype="<i2").reshape(7, 9)
    b = g.create_group("static").create_dataset("height", data=h, chunks=(7, 5), compressor=numcodecs.Zlib(level=1),
                                                filters=[numcodecs.Delta(dtype="<i2")])
    b.attrs["_ARRAY_DIMENSIONS"] = ["lat", "lon"]
    single = os.path.join(TMP, "single.zarr")
    zarr.save_array(single, t[1], chunks=(7, 9))
    return path, single, {"t2m": (a, t), "static/height": (b, h)}


def check_v2():
    path, single, arrays = write_v2()
    text = run([DCTK, "open_zarr_and_inspect", path]).stdout
    C.check("format: Zarr v2" in text and "title: v2 fixture" in text, "v2: format and attributes")
    C.check(re.search(r"^\s+static/$", text, re.M) and re.search(r"^\s+height\s+int16 \[7,9\]$", text, re.M),
            "v2: tree shows the group and its array")
    got = blocks(text)
    for name, (a, x) in arrays.items():
        lines, what = got.get(name, []), f"v2/{name}"
        dims = ", ".join(a.attrs["_ARRAY_DIMENSIONS"])
        C.check(field(lines, "shape") == f"{shape_str(x.shape)}  dims: {dims}", f"{what}: shape line")
        C.check(field(lines, "chunks") == f"{shape_str(a.chunks)} (not sharded)", f"{what}: chunks line")
        names = [c["name"] for c in codec_lines(lines)]
        want = ["bytes", "blosc"] if name == "t2m" else ["numcodecs.delta", "bytes", "numcodecs.zlib"]
        C.check(names == want, f"{what}: codecs {names} vs {want}")
        check_sizes(lines, os.path.join(path, name), x.shape, x.itemsize, what)
        check_values(lines, x, what)
    text = run([DCTK, "open_zarr_and_inspect", single]).stdout
    C.check("(a single array)" in text and "shape: [7, 9]" in text, "v2 single array store")
    check_values(blocks(text).get("/", []), arrays["t2m"][1][1], "v2 single array")
    print(f"ok zarr-python v2 stores: {path}, {single}")


def main():
    for key, info in manifest(FIX)["stores"].items():
        check_fixture_store(key, info)
    check_v2()
    C.finish()


if __name__ == "__main__":
    main()
