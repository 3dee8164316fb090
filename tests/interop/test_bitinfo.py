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
import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
from bitinfo_ref import keepbits, reference  # noqa: E402
from checks import check, finish, ncarg_field  # noqa: E402

TOOL = os.environ["DCTK_CODEC_TOOL"]
KEEP = ["0.5", "0.9", "0.99", "0.9999", "1"]


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
