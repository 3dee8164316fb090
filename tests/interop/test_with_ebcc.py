#!/usr/bin/python3
"""--with-ebcc / --without-ebcc as the Python dc_toolkit's (issue 32): spcl EBCC (ebcc_filter) joins the
sweep at that tool's members, on sftlf of nug/sftlf_mod1_rectilinear_grid_2D.nc (land fraction in %,
96 x 192, 66 % exactly 0).

1. without the flag (its default) and with --without-ebcc no row names ebcc_filter;
2. with it: exactly seven ebcc_filter rows, whose arglists are the Python tool's, computed here from
   the field as numpy reads it: [tile height, tile width, float32 bits of 2.0, 1 (max_error_target),
   float32 bits of f x (max - min)] for f in 1e-1, 3e-2, 1e-2, 3e-3, 1e-3, 3e-4, 1e-4, the tile the
   largest side in [32, 2047] dividing each axis of the (lat, lon) frame; each row's largest error is
   within its target; under --serializer-class zfpy (--filter-class none,bitround) they still come (as
   theirs: "under any class"), and behind a filter that is not a cast they are left out; --with-ebcc --without-lossy is refused;
3. compress --codecs plugin writes the EBCC winner: one of those arglists in zarr.json; the chunk
   bytes, cut from the shard by its index here, are EBCC's stream (the 48-byte header: "EBCC",
   version 1, min and max of the chunk as numpy finds them, sizes that add up to the chunk; then a
   JPEG 2000 codestream whose SIZ marker gives the 192 x 96 image, one 192 x 96 tile and one
   unsigned 16-bit component), they decode through the codec tool to what our export reads, within the
   target of netCDF4's values; with a reference build (EBCC_REF_LIB, as test_ebcc_reference) spcl's
   ebcc_decode gives the same floats bit for bit (else that part is said skipped).
"""
import csv
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile

import netCDF4
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import checks  # noqa: E402
from checks import check, finish, run  # noqa: E402

NCARG = os.environ.get("DCTK_NCARG", "/usr/share/ncarg/data")
FILE = os.path.join(NCARG, "nug", "sftlf_mod1_rectilinear_grid_2D.nc")
VAR = "sftlf"
TOOL = os.environ["DCTK_CODEC_TOOL"]
FRACTIONS = (1e-1, 3e-2, 1e-2, 3e-3, 1e-3, 3e-4, 1e-4)  # the Python tool's EBCC error targets
NONE = ["--serializer-class", "none", "--filter-class", "none", "--compressor-class", "none"]
BASE = ["--field-to-compress", VAR, "--l1-threshold", "0.05", "--search", "exhaustive", "--threads-per-rank", "2"]


def f32_bits(v):
    return struct.unpack("<I", struct.pack("<f", v))[0]


def tile_side(n):
    if n < 32:
        return None
    if n <= 2047:
        return n
    return next((d for d in range(2047, 31, -1) if n % d == 0), None)


def expected_arglists(x):
    th, tw = tile_side(x.shape[-2]), tile_side(x.shape[-1])
    span = float(x.max()) - float(x.min())
    return [[th, tw, f32_bits(2.0), 1, f32_bits(f * span)] for f in FRACTIONS]


def ebcc_rows(where):
    with open(os.path.join(where, "config_space_%s_rank0.csv" % VAR)) as f:
        rows = list(csv.DictReader(f))
    return rows, [r for r in rows if "ebcc_filter" in r["serializer"]]


def sweep(tmp, x):
    for name, extra in (("default", []), ("without", ["--without-ebcc"])):
        where = os.path.join(tmp, name)
        run("evaluate_combos", FILE, "--where-to-write", where, *BASE, *NONE, *extra)
        rows, eb = ebcc_rows(where)
        check(rows and not eb, "%s: %d ebcc_filter rows without --with-ebcc" % (name, len(eb)))
    print("1. no ebcc_filter row by default or with --without-ebcc")

    where = os.path.join(tmp, "with")
    run("evaluate_combos", FILE, "--where-to-write", where, *BASE, *NONE, "--with-ebcc")
    _, eb = ebcc_rows(where)
    want = expected_arglists(x)
    got = [json.loads(r["serializer"])["configuration"]["arglist"] for r in eb]
    check(sorted(got) == sorted(want), "the arglists %s are not the Python tool's %s" % (got, want))
    for r in eb:
        a = json.loads(r["serializer"])["configuration"]["arglist"]
        target = struct.unpack("<f", struct.pack("<I", a[4]))[0]
        check(r["error"] == "" and float(r["max_abs_err"]) <= target,
              "%s: largest error %s over its target %g (%s)" % (r["name"], r["max_abs_err"], target, r["error"]))
        check(r["compressor"] == "" and r["filter"] == "", "%s: not EBCC alone" % r["name"])

    where = os.path.join(tmp, "zfpy")
    run("evaluate_combos", FILE, "--where-to-write", where, *BASE, "--serializer-class", "zfpy", "--filter-class",
        "none,bitround", "--compressor-class", "none", "--with-ebcc")
    rows, eb = ebcc_rows(where)
    alone = sorted(json.loads(r["serializer"])["configuration"]["arglist"] for r in eb if not r["filter"])
    check(alone == sorted(want), "under --serializer-class zfpy the EBCC members are %s" % alone)
    check(any("zfpy" in r["serializer"] for r in rows), "no zfpy row beside EBCC")
    behind = [r for r in eb if r["filter"]]
    # each left out: as not a cast, or (keepbits 23) as the identity, the same pipelines as no filter
    why = "ebcc_filter takes the field's own values (a cast at most)"
    check(behind and all(r["status"] == "left out" for r in behind) and
          sum(why in r["error"] for r in behind) >= len(behind) - len(want),
          "EBCC behind bitround is not left out: %s" % sorted({(r["status"], r["error"]) for r in behind}))
    r = run("evaluate_combos", FILE, "--where-to-write", os.path.join(tmp, "lossless"), *BASE, "--with-ebcc",
            "--without-lossy", code=2)
    check("--with-ebcc needs --with-lossy" in r.stderr and len(r.stderr.strip().splitlines()) == 1,
          "--with-ebcc --without-lossy: %r" % r.stderr)
    print("2. seven ebcc_filter rows at the Python tool's arglists %s..., each within its target; under a "
          "named class too; left out behind bitround" % want[0][:4])
    return want


def chunk_bytes(array):
    """The one inner chunk's bytes, cut from its shard by the index at the shard's end."""
    with open(os.path.join(array, "zarr.json")) as f:
        meta = json.load(f)
    sh = meta["codecs"][0]
    check(sh["name"] == "sharding_indexed", "not sharded: %s" % sh["name"])
    inner = sh["configuration"]["chunk_shape"]
    check(inner == meta["shape"], "the field is not one inner chunk: %s of %s" % (inner, meta["shape"]))
    data = open(os.path.join(array, "c", *["0"] * len(inner)), "rb").read()
    off, n = struct.unpack("<QQ", data[-20:-4])
    return sh["configuration"]["codecs"], inner, data[off:off + n]


def siz(j2k):
    """(width, height, tile width, tile height, components, Ssiz of the first) of a J2K codestream."""
    check(j2k[:4] == b"\xff\x4f\xff\x51", "the tail is not a JPEG 2000 codestream (SOC, SIZ): %r" % j2k[:4])
    _, _, xs, ys, xo, yo, xt, yt, xto, yto, cs = struct.unpack(">HHIIIIIIIIH", j2k[4:42])
    return xs - xo, ys - yo, xt, yt, cs, j2k[42]


def written(tmp, x, want):
    where = os.path.join(tmp, "write")
    run("compress", FILE, "--where-to-write", where, "--vars", VAR, "--codecs", "plugin", *BASE[2:], *NONE,
        "--with-ebcc")
    store = os.path.join(where, "sftlf_mod1_rectilinear_grid_2D.zarr")
    codecs, inner, enc = chunk_bytes(os.path.join(store, VAR))
    ser = codecs[0].get("configuration", {})
    args = ser.get("arglist")
    check(ser.get("id") == "ebcc_filter" and args in want, "the stored serializer %s is not one of the members" % ser)
    if args not in want:
        return
    target = struct.unpack("<f", struct.pack("<I", args[4]))[0]
    blk = x.reshape(inner).astype("<f4")
    magic, ver, flags, _, mn, mx, coeffs, rmn, rmx, packed, tail = struct.unpack("<4sBBHffQffQQ", enc[:48])
    check(magic == b"EBCC" and ver == 1 and flags == 0, "header %r %d %d" % (magic, ver, flags))
    check(mn == blk.min() and mx == blk.max(), "header min/max %g %g, numpy %g %g" % (mn, mx, blk.min(), blk.max()))
    check(48 + packed + tail == len(enc), "header sizes %d + %d + 48 != %d bytes" % (packed, tail, len(enc)))
    w, h, tw, th, comps, ssiz = siz(enc[48 + packed:])
    check((w, h, tw, th, comps, ssiz) == (args[1], args[0], args[1], args[0], 1, 15),
          "SIZ: image %dx%d, tile %dx%d, %d component(s), Ssiz %d" % (w, h, tw, th, comps, ssiz))
    obj = {"name": "any-numcodecs.array-bytes", "configuration": {"id": "ebcc_filter", "arglist": args}}
    src, dst = os.path.join(tmp, "chunk.ebcc"), os.path.join(tmp, "chunk.out")
    with open(src, "wb") as f:
        f.write(enc)
    r = subprocess.run([TOOL, "decode", json.dumps(obj), "float32", ",".join(map(str, inner)), src, dst],
                       capture_output=True, text=True)
    check(r.returncode == 0, "codec tool decode: " + r.stderr)
    ours = np.fromfile(dst, "<f4").reshape(inner) if r.returncode == 0 else None
    nc = os.path.join(tmp, "export.nc")
    run("from_zarr_to_netcdf", store, "--out", nc)
    with netCDF4.Dataset(nc) as d:
        exported = np.ma.filled(d[VAR][:].astype("<f4"), np.nan)
    check(ours is not None and np.array_equal(ours, exported.reshape(inner)), "the export differs from the chunk")
    err = float(np.abs(exported.astype(np.float64) - x.astype(np.float64)).max())
    check(err <= target, "stored values %g from netCDF4's, over the target %g" % (err, target))
    lib = os.environ.get("EBCC_REF_LIB", "")
    if lib and os.path.exists(lib) and ours is not None:
        from ebcc_ref import Ref
        ref = np.asarray(Ref(lib).decode(enc), "<f4").reshape(inner)
        check(ref.tobytes() == ours.tobytes(), "spcl's ebcc_decode differs from ours on the stored chunk")
        print("3b. spcl's ebcc_decode reads the stored chunk as ours does")
    else:
        print("3b. skipped: no reference EBCC build (EBCC_REF_LIB) to decode the stored chunk")
    print("3. compress wrote ebcc_filter %s: EBCC header and JPEG 2000 SIZ as the format says, decoded within %g "
          "(%g)" % (args, target, err))


def main():
    tmp = tempfile.mkdtemp(prefix="dctk_with_ebcc_")
    try:
        with netCDF4.Dataset(FILE) as d:
            x = np.ma.filled(d[VAR][:].astype("<f4"), np.nan)
        check(np.isfinite(x).all() and x.shape[-2:] == (96, 192), "sftlf is not the field this test needs")
        want = sweep(tmp, x)
        written(tmp, x, want)
    finally:
        if not checks.failures:
            shutil.rmtree(tmp, ignore_errors=True)
    finish("with ebcc")


if __name__ == "__main__":
    main()
