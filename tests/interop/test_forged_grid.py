"""A forged zarr.json of a few hundred bytes must not hang a command (issue 37, finding 6).

Stores made here, each an array x of float32 with fill NaN and no chunk written:
- shape [2^40] in chunks of [1] (the finding's, under 600 bytes): every command refuses it at once, the grid
  having more keys than a store can hold;
- shape [2^31] in chunks of [1] (under that limit): inspect_dataset and open_zarr_and_inspect describe it
  (they read no values, or only what is stored); from_zarr_to_netcdf and compress refuse it with one line
  naming the store, the array and what the store holds (0 of 2^31 chunks, 8 GiB of fill value), exit 1,
  leaving no netCDF file and no array in the output store;
- shape [2^40] in chunks of [2^20]: the export is over --max-size (exit 2), compress refuses it as above.
Every command runs under a timeout; none may take it. A sparse store that is no forgery (1 chunk in 64 of a
4096-chunk grid written, values of meccatemp's t) is still read whole: netCDF4 reads the export, numcodecs the
compressed store, both equal to numpy's array (NaN where nothing was written).

Run by ctest with DCTK and DCTK_NCARG set."""
import json
import os
import subprocess
import sys
import tempfile

import netCDF4
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import check, finish  # noqa: E402

sys.argv[1:] = [os.environ.get("DCTK_CODEC_TOOL", "")]
import zarr_shards  # noqa: E402

DCTK = os.environ["DCTK"]
NCARG = os.environ.get("DCTK_NCARG", "/usr/share/ncarg/data")
TIMEOUT = 120 * float(os.environ.get("DCTK_TEST_TIMEOUT_SCALE", "1") or 1)


def store(path, shape, chunk, chunks=None):
    """A Zarr v3 store with array x (float32, fill NaN, codec bytes); chunks: {index: float32 values}."""
    os.makedirs(os.path.join(path, "x"))
    with open(os.path.join(path, "zarr.json"), "w") as f:
        json.dump({"zarr_format": 3, "node_type": "group", "attributes": {}}, f)
    meta = {"zarr_format": 3, "node_type": "array", "shape": [shape], "data_type": "float32",
            "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [chunk]}},
            "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
            "fill_value": "NaN", "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
            "dimension_names": ["n"], "attributes": {}}
    with open(os.path.join(path, "x", "zarr.json"), "w") as f:
        json.dump(meta, f)
    for i, values in (chunks or {}).items():
        os.makedirs(os.path.join(path, "x", "c"), exist_ok=True)
        with open(os.path.join(path, "x", "c", str(i)), "wb") as f:
            f.write(np.asarray(values, dtype="<f4").tobytes())
    return os.path.getsize(os.path.join(path, "x", "zarr.json"))


def run(*args):
    try:
        r = subprocess.run([DCTK, *args], capture_output=True, text=True, timeout=TIMEOUT)
        return r.returncode, r.stdout, r.stderr
    except subprocess.TimeoutExpired:
        return None, "", "timed out after %g s" % TIMEOUT


def refused(what, got, rc, *needles):
    code, _, err = got
    lines = [ln for ln in err.splitlines() if ln.startswith("dc_toolkit ")]
    ok = code == rc and len(lines) >= 1 and all(n in lines[0] for n in needles)
    check(ok, "%s: want exit %d and one line with %s, got %s: %s" % (what, rc, needles, code, err[-600:]))


with tempfile.TemporaryDirectory() as tmp:
    a, b, c = (os.path.join(tmp, n) for n in ("grid_2e40.zarr", "grid_2e31.zarr", "grid_4tib.zarr"))
    check(store(a, 2**40, 1) < 600, "the forged zarr.json is not a few hundred bytes")
    store(b, 2**31, 1)
    store(c, 2**40, 2**20)

    grid = "makes a grid of 1099511627776 chunks"
    for cmd in ("inspect_dataset", "open_zarr_and_inspect"):
        refused("%s %s" % (cmd, a), run(cmd, a), 1, a, "array 'x'", grid)
    refused("from_zarr_to_netcdf " + a, run("from_zarr_to_netcdf", a, "--out", a + ".nc"), 1, a, grid)
    refused("compress " + a, run("compress", a, a + ".out"), 1, a, grid)

    for path, shape in ((b, "[2147483648]"), (c, "[1099511627776]")):
        code, out, err = run("inspect_dataset", path)
        check(code == 0 and "x " in out and "n=%s" % shape[1:-1] in out, "inspect_dataset %s: %s %s" % (path, code,
                                                                                                      err[-300:]))
        code, out, err = run("open_zarr_and_inspect", path)
        check(code == 0 and shape in out, "open_zarr_and_inspect %s: %s %s" % (path, code, err[-300:]))

    held = "the store holds 0 of its 2147483648 chunks, so reading it whole would make 8.00 GiB of fill value"
    refused("from_zarr_to_netcdf " + b, run("from_zarr_to_netcdf", b, "--out", b + ".nc"), 1, b, "array 'x'", held)
    check(not os.path.exists(b + ".nc"), "a refused export left a file")
    refused("compress " + b, run("compress", b, b + ".out"), 1, b, "array 'x'", held)
    check(not os.path.exists(os.path.join(b + ".out", "grid_2e31.zarr", "x")), "a refused compress wrote x")
    refused("from_zarr_to_netcdf " + c, run("from_zarr_to_netcdf", c, "--out", c + ".nc"), 2, c, "--max-size")
    refused("compress " + c, run("compress", c, c + ".out"), 1, c, "array 'x'",
            "the store holds 0 of its 1048576 chunks, so reading it whole would make 4.00 TiB of fill value")

    # no forgery: 64 of 4096 chunks written, real values; the rest reads as NaN
    with netCDF4.Dataset(os.path.join(NCARG, "cdf", "meccatemp.cdf")) as ds:
        t = np.asarray(ds["t"][...], dtype=np.float32).ravel()
    n, k = 2**22, 2**10
    t = np.resize(t, 64 * k)  # its values again as far as they do not reach
    written = {i * 64 + 3: t[i * k:(i + 1) * k] for i in range(64)}
    want = np.full(n, np.nan, dtype=np.float32)
    for i, values in written.items():
        want[i * k:(i + 1) * k] = values
    d = os.path.join(tmp, "sparse.zarr")
    store(d, n, k, written)
    code, _, err = run("from_zarr_to_netcdf", d, "--out", d + ".nc")
    got = None
    if code == 0:
        with netCDF4.Dataset(d + ".nc") as ds:
            got = np.ma.filled(ds["x"][...].astype(np.float32), np.nan)
    check(code == 0 and got is not None and np.array_equal(got, want, equal_nan=True),
          "the sparse store's export is not numpy's array: %s %s" % (code, err[-300:]))
    code, _, err = run("compress", d, d + ".out", "--compressor-class", "zstd", "--filter-class", "none",
                       "--serializer-class", "none")
    got = zarr_shards.read_store(os.path.join(d + ".out", "sparse.zarr"), "x")[0] if code == 0 else None
    check(code == 0 and got is not None and np.array_equal(got, want, equal_nan=True),
          "the sparse store compressed is not numpy's array: %s %s" % (code, err[-300:]))
finish("forged_grid")
