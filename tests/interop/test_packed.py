#!/usr/bin/python3
"""Packed and integer inputs (issue 31 item 3), on real fields of
rectilinear_grid_3D.nc packed here as ncpdq packs (int16 codes, scale_factor =
range / 65534, add_offset = mid-range) by python3-netCDF4 into a classic file:

- `compress` with its defaults, rhumidity without any threshold (lossless
  only) and t with its table row: each field's store is no larger than the
  variable's bytes in the input file, and the manifest, the best files and
  the console give the ratio against those bytes as well as against the
  decoded size;
- the lossless-only field's winner is numcodecs' FixedScaleOffset with the
  file's own packing back to int16 (offset add_offset, scale 1/scale_factor);
- written with compressors only (what Debian's numcodecs 0.11 decodes: no
  pcodec), Debian's numcodecs reads the store (zarr_shards.py, no dc_toolkit
  code) into values within one float32 unit in the last place of xarray's
  decoded values (CF rules: float64 with add_offset, float32 with
  scale_factor alone), and numcodecs' own FixedScaleOffset encodes them back
  to the file's int16 codes (read raw by python3-netCDF4) exactly;
- an integer field (the same codes, no packing) gets an integer pipeline
  (no float cast anywhere) and comes back exactly; written without a
  compressor, its store is larger than the input, and the console says so.

    test_packed.py PATH/TO/dctk_zarr_tool"""
import json
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import netCDF4  # noqa: E402
import numcodecs  # noqa: E402
import numpy as np  # noqa: E402
import xarray  # noqa: E402
import zarr_shards  # noqa: E402
from checks import check, finish  # noqa: E402

DCTK = os.environ["DCTK"]
SRC = os.path.join(os.environ.get("DCTK_NCARG", "/usr/share/ncarg/data"), "nug", "rectilinear_grid_3D.nc")
FAST = ["--eval-data-size-limit", "300KB"]


def run(*args):
    return subprocess.run([DCTK, *args], capture_output=True, text=True)


def pack(path):
    """t and rhumidity as int16 with scale_factor and add_offset (decoded as
    float64 by CF rules), rhumidity again with scale_factor alone (float32),
    and its codes as a plain int16 field."""
    with netCDF4.Dataset(SRC) as s, netCDF4.Dataset(path, "w", format="NETCDF3_CLASSIC") as d:
        for n, dim in s.dimensions.items():
            d.createDimension(n, len(dim))
        for n in ("lon", "lat", "lev", "time"):
            v = s[n]
            w = d.createVariable(n, v.dtype, v.dimensions)
            w.setncatts({a: v.getncattr(a) for a in v.ncattrs()})
            w[:] = v[:]
        for n, src, offset in (("t", "t", True), ("rhumidity", "rhumidity", True), ("rh_scaled", "rhumidity", False),
                               ("rh_codes", "rhumidity", None)):
            v = s[src]
            x = np.ma.filled(v[:], np.nan).astype(np.float64)
            lo, hi = float(x.min()), float(x.max())
            w = d.createVariable(n, "i2", v.dimensions)
            w.setncatts({a: v.getncattr(a) for a in v.ncattrs()})
            w.set_auto_maskandscale(False)
            if offset is None:
                w[:] = np.round((x - lo) / (hi - lo) * 30000).astype(np.int16)
                continue
            sf = (hi - lo) / 65534.0 if offset else max(abs(lo), abs(hi)) / 32767.0
            ao = (hi + lo) / 2.0 if offset else 0.0
            w.scale_factor = sf
            if offset:
                w.add_offset = ao
            w[:] = np.round((x - ao) / sf).astype(np.int16)


def file_values(path, name):
    """xarray's decoded values, the raw codes and the attributes."""
    with xarray.open_dataset(path) as ds:
        dec = ds[name].values
    with netCDF4.Dataset(path) as d:
        v = d[name]
        v.set_auto_maskandscale(False)
        return dec, v[:], {a: v.getncattr(a) for a in v.ncattrs()}


def within_f32_ulp(got, want):
    ulp = np.spacing(np.abs(want).astype(np.float32)).astype(np.float64)
    err = np.abs(got.astype(np.float64) - want.astype(np.float64))
    return bool(np.all(err <= ulp)), float(np.mean(got == want))


def defaults(tmp, path):
    out = os.path.join(tmp, "default")
    r = run("compress", path, "--where-to-write", out, "--vars", "rhumidity,t", *FAST)
    check(r.returncode == 0, "compress: %s %s" % (r.stdout, r.stderr))
    man = json.load(open(os.path.join(out, "batch_manifest.json")))
    for name in ("rhumidity", "t"):
        _, codes, _ = file_values(path, name)
        nbytes = codes.size * codes.itemsize
        f = man["fields"][name]
        check(f["input_bytes"] == nbytes, "%s: manifest input_bytes %r, the file holds %d" %
              (name, f["input_bytes"], nbytes))
        check(0 < f["stored_bytes"] <= nbytes, "%s: the store (%r bytes) is larger than the input's %d" %
              (name, f["stored_bytes"], nbytes))
        check(abs(f["ratio_vs_input"] - nbytes / f["stored_bytes"]) < 1e-9 * f["ratio_vs_input"],
              "%s: ratio_vs_input %r" % (name, f["ratio_vs_input"]))
        best = json.load(open(os.path.join(out, "best_%s.json" % name)))
        check(best["input_bytes"] == nbytes and best["field_bytes"] == codes.size * 8 and
              abs(best["ratio_vs_input"] - best["ratio"] * nbytes / best["field_bytes"]) < 1e-9 * best["ratio"],
              "%s: best file %r" % (name, {k: best.get(k) for k in ("ratio", "field_bytes", "input_bytes",
                                                                    "ratio_vs_input")}))
        check(re.search(r"^%s: against the 612\.00 KiB it takes in the input file \(int16, packed\): ratio [0-9.]+$"
                        % name, r.stdout, re.M), "%s: no ratio against the input in the summary: %s" % (name, r.stdout))
        check(re.search(r"^%s: against its 612\.00 KiB in the input file: ratio [0-9.]+$" % name, r.stdout, re.M),
              "%s: no ratio against the input after the write: %s" % (name, r.stdout))
        print("%s: default compress: %d bytes stored, %d in the input file (ratio %.3f against it, %.3f against "
              "the decoded float64), %s" % (name, f["stored_bytes"], nbytes, f["ratio_vs_input"], f["achieved_ratio"],
                                            best["name"]))
    best = json.load(open(os.path.join(out, "best_rhumidity.json")))
    _, _, attrs = file_values(path, "rhumidity")
    fso = [c for c in best["codecs"] if c["name"] == "numcodecs.fixedscaleoffset"]
    check(len(fso) == 1 and fso[0]["configuration"]["astype"] == "<i2" and
          fso[0]["configuration"]["offset"] == attrs["add_offset"] and
          abs(fso[0]["configuration"]["scale"] * attrs["scale_factor"] - 1) < 1e-15,
          "the lossless-only field is not packed with the file's packing: %r" % best["codecs"])
    check(best["gates"]["lossless_only"] and best["gates"]["lossless_equivalent_linf"] == np.finfo(np.float32).eps,
          "gates %r" % best["gates"])


def numcodecs_reads(tmp, path, zarr_tool):
    """Compressors only, so that numcodecs 0.11 decodes every codec."""
    out = os.path.join(tmp, "readable")
    names = ("rhumidity", "rh_scaled", "rh_codes")
    r = run("compress", path, "--where-to-write", out, "--vars", ",".join(names), "--serializer-class", "none",
            "--compressor-class", "zstd,zlib,lzma", *FAST)
    check(r.returncode == 0, "compress: %s %s" % (r.stdout, r.stderr))
    store = os.path.join(out, "packed.zarr")
    for name in names:
        dec, codes, attrs = file_values(path, name)
        got, stored = zarr_shards.read_store(store, name)
        meta = json.load(open(os.path.join(store, name, "zarr.json")))
        inner = meta["codecs"][0]["configuration"]["codecs"]
        check(stored > 0 and got.dtype == dec.dtype, "%s: %d chunks, %s against netCDF4's %s" %
              (name, stored, got.dtype, dec.dtype))
        if name == "rh_codes":
            check(np.array_equal(got, codes), "the integer field does not come back exactly")
            check(meta["data_type"] == "int16" and all(
                  c.get("configuration", {}).get(k, "<i2") in ("<i2", "int16")
                  for c in inner for k in ("dtype", "astype")), "a float cast in the integer pipeline: %r" % inner)
            print("rh_codes (int16, no packing): %s, exact" % " | ".join(c["name"] for c in inner))
            continue
        ok, exact = within_f32_ulp(got, dec)
        check(ok, "%s: numcodecs' decode is more than a float32 ulp from xarray's" % name)
        fso = [c for c in inner if c["name"] == "numcodecs.fixedscaleoffset"]
        check(len(fso) == 1, "%s: not packed: %r" % (name, inner))
        conf = dict(fso[0]["configuration"])
        conf["id"] = "fixedscaleoffset"
        again = numcodecs.get_codec(conf).encode(got.astype(np.dtype(conf["dtype"])))
        check(np.array_equal(np.asarray(again).reshape(codes.shape), codes),
              "%s: numcodecs packs the decoded values into other codes than the file's" % name)
        print("%s (%s decoded): numcodecs decodes within a float32 ulp of xarray, %.1f %% bit for bit, codes "
              "exact; %s" % (name, dec.dtype, 100 * exact, " | ".join(c["name"] for c in inner)))


def larger(tmp, path):
    """Without a compressor the codes take their own bytes plus the shard index: more than the input, and said."""
    out = os.path.join(tmp, "larger")
    r = run("compress", path, "--where-to-write", out, "--vars", "rh_codes", "--compressor-class", "none",
            "--filter-class", "none", "--serializer-class", "none", *FAST)
    check(r.returncode == 0, "compress: %s %s" % (r.stdout, r.stderr))
    f = json.load(open(os.path.join(out, "batch_manifest.json")))["fields"]["rh_codes"]
    check(f["stored_bytes"] > f["input_bytes"] and f["ratio_vs_input"] < 1, "manifest %r" % f)
    check(re.search(r"^rh_codes: against its 612\.00 KiB in the input file: ratio [0-9.]+: the store is larger than "
                    r"the input$", r.stdout, re.M), "a store larger than its input is not said: " + r.stdout)
    # the sweep's prediction counts no shard index: the codes' own size
    check(re.search(r"^rh_codes: against the 612\.00 KiB it takes in the input file \(int16\): ratio 1\.000$",
                    r.stdout, re.M), "the summary: " + r.stdout)


def main():
    zarr_tool = sys.argv[1]
    with tempfile.TemporaryDirectory(prefix="dctk_packed_") as tmp:
        path = os.path.join(tmp, "packed.nc")
        pack(path)
        defaults(tmp, path)
        numcodecs_reads(tmp, path, zarr_tool)
        larger(tmp, path)
    finish("packed")


if __name__ == "__main__":
    main()
