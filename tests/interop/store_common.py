"""Shared by the store-safety tests: two versions (A, B) of a small dataset
built from the real field t of rectilinear_grid_3D.nc, the commands that write
it, and an independent read of a store (zarrita through the consolidated
metadata, tests/js/store_digest.mjs) compared with the values each version
holds."""
import hashlib
import json
import os
import tempfile
import subprocess

import netCDF4
import numpy as np

DCTK = os.environ["DCTK"]
SRC = os.environ.get("DCTK_SRC", os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
REAL = os.path.join(os.environ.get("DCTK_NCARG", "/usr/share/ncarg/data"), "nug", "rectilinear_grid_3D.nc")
FIELDS = ("t", "q")
# Stage and aside folders, lock files and legacy staging: names no reader may see.
PRIVATE = (".stage.", ".old.", ".partial", ".lock")

LOSSLESS = [{"name": "bytes", "configuration": {"endian": "little"}},
            {"name": "gzip", "configuration": {"level": 9}}]


def bitround(keepbits):
    return [{"name": "numcodecs.bitround", "configuration": {"keepbits": keepbits}}] + LOSSLESS


def make_inputs(tmp, ntime):
    """dir A and dir B each hold big.nc (so both write into OUT/big.zarr) with
    the fields t and q of ntime steps and the coordinates; B's fields differ
    from A's. Returns {version: {var: numpy array}}."""
    values = {}
    with netCDF4.Dataset(REAL) as r:
        t0 = np.ma.filled(r["t"][0], np.nan).astype("<f4")
        coords = {k: np.asarray(r[k][:], dtype="<f8") for k in ("lev", "lat", "lon")}
    for ver, shift in (("A", 0.0), ("B", 0.5)):
        os.makedirs(os.path.join(tmp, ver), exist_ok=True)
        path = os.path.join(tmp, ver, "big.nc")
        vals = {}
        with netCDF4.Dataset(path, "w") as w:
            w.createDimension("time", ntime)
            w.createDimension("bnds", 2)
            for k, v in coords.items():
                w.createDimension(k, len(v))
                c = w.createVariable(k, "f8", (k,))
                c[:] = v
                vals[k] = v
            lat = w["lat"]
            lat.setncattr("bounds", "lat_bnds")
            lat.setncattr("units", "degrees_north")
            edges = np.concatenate([[-90.0], (coords["lat"][1:] + coords["lat"][:-1]) / 2, [90.0]])
            b = w.createVariable("lat_bnds", "f8", ("lat", "bnds"))
            vals["lat_bnds"] = np.stack([edges[:-1], edges[1:]], axis=1).astype("<f8")
            b[:] = vals["lat_bnds"]
            tv = w.createVariable("time", "f8", ("time",))
            vals["time"] = np.arange(ntime, dtype="<f8")
            tv[:] = vals["time"]
            for i, name in enumerate(FIELDS):
                x = np.stack([t0 + shift + 0.01 * k + 3 * i for k in range(ntime)]).astype("<f4")
                v = w.createVariable(name, "f4", ("time", "lev", "lat", "lon"))
                v[:] = x
                vals[name] = x
        values[ver] = vals
    return values


def combo_file(tmp, name, var, codecs, threshold=None):
    path = os.path.join(tmp, name)
    best = {"var": var, "codecs": codecs}
    if threshold is not None:
        best["threshold"] = threshold
    with open(path, "w") as f:
        json.dump(best, f)
    return path


def scratch(name, ntime):
    """A scratch folder for test NAME with the two input versions of NTIME steps, the output folder, its
    store's path and a lossless combo file per field: (tmp, values, out, store, combo)."""
    tmp = tempfile.mkdtemp(prefix="dctk_%s_" % name)
    values = make_inputs(tmp, ntime)
    out = os.path.join(tmp, "out")
    combo = {v: combo_file(tmp, "lossless_%s.json" % v, v, LOSSLESS) for v in FIELDS}
    return tmp, values, out, os.path.join(out, "big.zarr"), combo


def write_cmd(tmp, ver, var, combo, out):
    return [DCTK, "compress_with_optimal", os.path.join(tmp, ver, "big.nc"), out, var, "--combo", combo,
            "--inner-chunk-mib", "0.25", "--shard-mib", "1", "--threads-per-rank", "1"]


def merge_cmd(tmp, ver, out):
    return [DCTK, "merge_compressed_fields", os.path.join(tmp, ver, "big.nc"), out]


def digest(a):
    return hashlib.sha256(np.ascontiguousarray(a).tobytes()).hexdigest()


def read_store(store):
    """What zarrita reads through the root's consolidated metadata."""
    r = subprocess.run(["node", os.path.join(SRC, "tests", "js", "store_digest.mjs"), store],
                       capture_output=True, text=True, env=dict(os.environ))
    if r.returncode != 0:
        return {"error": r.stderr.strip()}
    return json.loads(r.stdout)


def which_version(got, values, name):
    """'A' or 'B' when the digest equals that version's values, else None."""
    for ver, vals in values.items():
        if name in vals and got.get("sha256") == digest(vals[name]):
            return ver
    return None


def private_names(store):
    """Staging names and temporary files anywhere at the top of the store."""
    if not os.path.isdir(store):
        return []
    return sorted(n for n in os.listdir(store) if (n.startswith(".") and any(p in n for p in PRIVATE))
                  or ".tmp." in n)


def without_source(node):
    """The metadata less the provenance's "source" (the input a field was written from), everywhere it
    appears (the arrays, the consolidated metadata)."""
    if isinstance(node, dict):
        return {k: without_source(v) for k, v in node.items()
                if not (k == "source" and "pipeline" in node and "python_packages" in node)}
    if isinstance(node, list):
        return [without_source(v) for v in node]
    return node


def tree_files(top, strip_source=False):
    """{relative path: bytes} of every file under top (a store, or an array folder); with strip_source each
    zarr.json as its JSON without the provenance's "source" (keys sorted)."""
    out = {}
    for d, _, files in os.walk(top):
        for f in files:
            p = os.path.join(d, f)
            with open(p, "rb") as fh:
                data = fh.read()
            if strip_source and f == "zarr.json":
                data = json.dumps(without_source(json.loads(data)), sort_keys=True).encode()
            out[os.path.relpath(p, top)] = data
    return out


def field_files(store, name):
    """{relative path: bytes} of every file of an array folder."""
    return tree_files(os.path.join(store, name))


def store_difference(a, b, strip_source=False):
    """What differs between the stores (or folders) a and b: (the names only one holds, the names whose bytes
    differ), both sorted, and a's files."""
    fa, fb = tree_files(a, strip_source), tree_files(b, strip_source)
    return sorted(set(fa) ^ set(fb)), sorted(k for k in fa if k in fb and fa[k] != fb[k]), fa


FICE = os.path.join(os.environ.get("DCTK_NCARG", "/usr/share/ncarg/data"), "cdf", "fice.nc")


def fice_months(path, t0, t1, edit=None):
    """fice.nc's months [t0, t1) as a netCDF file of their own (raw values, attributes kept); edit(d), when
    given, changes the new file before it is closed (test_multifile's mismatching inputs)."""
    with netCDF4.Dataset(FICE) as src, netCDF4.Dataset(path, "w", format="NETCDF3_64BIT_OFFSET") as d:
        d.setncatts({k: src.getncattr(k) for k in src.ncattrs()})
        for name, dim in src.dimensions.items():
            d.createDimension(name, None if name == "time" else len(dim))
        for name, v in src.variables.items():
            fill = v.getncattr("_FillValue") if "_FillValue" in v.ncattrs() else None
            o = d.createVariable(name, v.dtype, v.dimensions, fill_value=fill)
            o.setncatts({k: v.getncattr(k) for k in v.ncattrs() if k != "_FillValue"})
            v.set_auto_maskandscale(False)
            o.set_auto_maskandscale(False)
            o[:] = v[t0:t1] if v.dimensions[:1] == ("time",) else v[:]
        if edit:
            edit(d)
