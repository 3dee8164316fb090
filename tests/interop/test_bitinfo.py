"""Information-content keepbits (issue 31 item 5) against a numpy
computation written here from the method's description (Kloewer et al.
2021, as BitInformation.jl and xbitinfo apply it), on real libncarg-data
fields, float32 and float64, masked and not.

The reference: each value's bits with the exponent in sign-magnitude form;
for each bit, the mutual information (bits) between its values in
neighbours along an axis, pairs with a NaN left out; information not above
the free entropy of a fair coin tossed as many times at 99 % confidence set
to 0; keepbits = the mantissa bits up to the bit at which the cumulative
information, bits under 1.5 x the last four bits' maximum dropped, first
exceeds the fraction. The program's numbers come from dctk_codec_tool
bitinfo (the library's dctk_bitinfo_along / dctk_bitinfo_keepbits) on the
same raw values."""
import json
import os
import subprocess
import sys
import tempfile
from statistics import NormalDist

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
from checks import check, finish, ncarg_field  # noqa: E402

TOOL = os.environ["DCTK_CODEC_TOOL"]
KEEP = ["0.5", "0.9", "0.99", "0.9999", "1"]


def sign_magnitude_exponent(x):
    bits = x.dtype.itemsize * 8
    nexp = 8 if bits == 32 else 11
    nman = bits - 1 - nexp
    u = x.view("u%d" % x.dtype.itemsize).astype(np.uint64)
    bias = 2 ** (nexp - 1) - 1
    e = ((u >> np.uint64(nman)) & np.uint64(2**nexp - 1)).astype(np.int64) - bias
    keep = np.uint64((1 << (bits - 1)) | ((1 << nman) - 1))
    esign = np.where(e < 0, np.uint64(1 << (bits - 2)), np.uint64(0))
    return (u & keep) | esign | (np.abs(e).astype(np.uint64) << np.uint64(nman))


def reference(x, axis):
    bits = x.dtype.itemsize * 8
    w = sign_magnitude_exponent(x)
    n = x.shape[axis]
    a = np.take(w, range(0, n - 1), axis=axis).ravel()
    b = np.take(w, range(1, n), axis=axis).ravel()
    xa = np.take(x, range(0, n - 1), axis=axis).ravel()
    xb = np.take(x, range(1, n), axis=axis).ravel()
    ok = ~np.isnan(xa) & ~np.isnan(xb)
    a, b = a[ok], b[ok]
    pairs = a.size
    mi = np.zeros(bits)
    for i in range(bits):
        s = np.uint64(bits - 1 - i)
        ab = ((a >> s) & np.uint64(1)).astype(np.int8)
        bb = ((b >> s) & np.uint64(1)).astype(np.int8)
        p = np.array([[np.sum((ab == j) & (bb == k)) for k in (0, 1)] for j in (0, 1)], float) / pairs
        pr, pc = p.sum(axis=1), p.sum(axis=0)
        for j in (0, 1):
            for k in (0, 1):
                if p[j, k] > 0:
                    mi[i] += p[j, k] * np.log2(p[j, k] / (pr[j] * pc[k]))
    z = NormalDist().inv_cdf(1 - (1 - 0.99) / 2)
    q = min(1.0, 0.5 + z / (2 * np.sqrt(pairs)))
    free = 1 - (-q * np.log2(q) - (1 - q) * np.log2(1 - q)) if q < 1 else 1.0
    info = np.where(mi > free, mi, 0.0)
    return pairs, free, mi, info


def keepbits(info, dtype, keep):
    bits = dtype.itemsize * 8
    nexp = 8 if bits == 32 else 11
    nman = bits - 1 - nexp
    if keep >= 1:
        return nman
    cleaned = np.where(info > 1.5 * info[-4:].max(), info, 0.0)
    if cleaned.sum() <= 0:
        return 0
    cdf = np.cumsum(cleaned) / cleaned.sum()
    k = int(np.argmax(cdf > keep)) + 1 - (1 + nexp)
    return min(max(k, 0), nman)


def ours(x, tmp):
    raw = os.path.join(tmp, "x.raw")
    x.tofile(raw)
    out = subprocess.run([TOOL, "bitinfo", "<f%d" % x.dtype.itemsize, ",".join(map(str, x.shape)), raw] + KEEP,
                         capture_output=True, text=True)
    check(out.returncode == 0, "dctk_codec_tool bitinfo failed: %s" % out.stderr)
    return json.loads(out.stdout) if out.returncode == 0 else None


def field(path, var, dtype=None):
    x = ncarg_field(path, var)
    import netCDF4

    with netCDF4.Dataset(os.path.join(os.environ.get("DCTK_NCARG", "/usr/share/ncarg/data"), path)) as d:
        v = d.variables[var]
        fill = getattr(v, "_FillValue", getattr(v, "missing_value", None))
    x = x.astype(dtype or x.dtype)
    if fill is not None:
        x = np.where(x == np.asarray(fill).astype(x.dtype), np.nan, x).astype(x.dtype)
    return np.ascontiguousarray(x)


def grib_field(path, index):
    """Message `index` of a GRIB2 file decoded by eccodes (float64), missing values NaN."""
    import eccodes

    root = os.environ.get("DCTK_NCARG", "/usr/share/ncarg/data")
    with open(os.path.join(root, path), "rb") as f:
        for _ in range(index + 1):
            h = eccodes.codes_grib_new_from_file(f)
        ni, nj = eccodes.codes_get(h, "Ni"), eccodes.codes_get(h, "Nj")
        vals = eccodes.codes_get_values(h).astype(np.float64)
        if eccodes.codes_get(h, "bitmapPresent"):
            vals[vals == eccodes.codes_get(h, "missingValue")] = np.nan
        eccodes.codes_release(h)
    return np.ascontiguousarray(vals.reshape(nj, ni))


def compare(label, x, tmp):
    got = ours(x, tmp)
    if got is None:
        return
    overall = {k: -1 for k in KEEP}
    nan_pairs = False
    for axis in range(x.ndim):
        g = got["axes"][axis]
        if x.shape[axis] < 2:
            check(g["pairs"] == 0, "%s axis %d: %d pairs along an axis of 1" % (label, axis, g["pairs"]))
            continue
        pairs, free, mi, info = reference(x, axis)
        nan_pairs |= pairs < x.size // x.shape[axis] * (x.shape[axis] - 1)
        check(g["pairs"] == pairs, "%s axis %d: %d pairs, numpy %d" % (label, axis, g["pairs"], pairs))
        check(abs(g["free_entropy"] - free) < 1e-12, "%s axis %d: free entropy %r, numpy %r"
              % (label, axis, g["free_entropy"], free))
        d = np.abs(np.array(g["mi"]) - mi)
        check(d.max() < 1e-9, "%s axis %d: mutual information differs by %g at bit %d (%r vs %r)"
              % (label, axis, d.max(), int(d.argmax()), g["mi"][int(d.argmax())], mi[int(d.argmax())]))
        check(list(np.array(g["info"]) > 0) == list(info > 0), "%s axis %d: significant bits %s, numpy %s"
              % (label, axis, np.flatnonzero(np.array(g["info"]) > 0), np.flatnonzero(info > 0)))
        for k in KEEP:
            want = keepbits(info, x.dtype, float(k))
            overall[k] = max(overall[k], want)
            check(g["keepbits"][k] == want, "%s axis %d: keepbits at %s is %d, numpy %d"
                  % (label, axis, k, g["keepbits"][k], want))
    for k in KEEP:
        check(got["keepbits"][k] == overall[k], "%s: keepbits at %s over the axes is %d, numpy %d"
              % (label, k, got["keepbits"][k], overall[k]))
    print("%-34s %-8s %-18s keepbits 0.99: %2d  0.9999: %2d%s" % (label, x.dtype, x.shape, overall["0.99"],
          overall["0.9999"], "  (masked)" if nan_pairs else ""))
    return overall


def main():
    with tempfile.TemporaryDirectory() as tmp:
        cases = [
            ("meccatemp t", field("cdf/meccatemp.cdf", "t")),
            ("rectilinear_grid_3D t", field("nug/rectilinear_grid_3D.nc", "t")),
            ("ice5g Topo", field("cdf/ice5g_21k_1deg.nc", "Topo")),
            ("uv300 U", field("cdf/uv300.nc", "U")),
            ("Tstorm t (masked)", field("cdf/Tstorm.cdf", "t")),
            ("pop t (masked)", field("cdf/pop.nc", "t")),
            ("seam lat2d", field("cdf/seam.nc", "lat2d")),
            ("ICON clon_vertices", field("nug/triangular_grid_ICON.nc", "clon_vertices")),
            ("awp211 GRIB2 message 0", grib_field("grb/fh.0012_tl.press_gr.awp211.grb2", 0)),
            ("meccatemp t as float64", field("cdf/meccatemp.cdf", "t", np.float64)),
        ]
        kept = {}
        for label, x in cases:
            kept[label] = compare(label, x, tmp)
        # The method's point: a real field keeps far fewer bits than its type has.
        check(kept["meccatemp t"]["0.99"] < 23, "meccatemp t keeps all 23 bits at 99 %")
        check(kept["meccatemp t as float64"]["0.99"] <= 23,
              "float32 values held as float64 keep %d bits at 99 %% (more than float32 has)"
              % kept["meccatemp t as float64"]["0.99"])
        for label in kept:
            check(kept[label]["0.99"] <= kept[label]["0.9999"] <= kept[label]["1"],
                  "%s: keepbits do not grow with the fraction: %s" % (label, kept[label]))
        # An integer field has no mantissa: refused with a line, not a crash.
        raw = os.path.join(tmp, "i.raw")
        np.arange(100, dtype="<i2").tofile(raw)
        out = subprocess.run([TOOL, "bitinfo", "<i2", "100", raw, "0.99"], capture_output=True, text=True)
        check(out.returncode == 1 and "only float32 and float64" in out.stderr,
              "int16 input: exit %d, %r" % (out.returncode, out.stderr))
    finish("bitinfo")


if __name__ == "__main__":
    main()
