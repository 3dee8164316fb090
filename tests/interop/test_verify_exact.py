#!/usr/bin/python3
"""No destroyed field is called verified (issue 37, finding 3), on real fields:

1. compress --pipeline with a float Delta on tos of tos_ocean_bipolar_grid.nc
   (35 % of it missing over land) and no threshold: the delta's NaNs run on
   into the ocean, so finite values come back NaN; exit 1, a line saying how
   many, the manifest 'failed', no tos in the store;
2. a FixedScaleOffset whose int16 packing cannot hold fice (scale 1e5 packs
   0..1 to 0..100000) is refused with a line naming the range, nothing
   stored; one that fits (scale 1000) is written, and what our export reads
   back equals numcodecs' FixedScaleOffset round trip of netCDF4's values;
3. with a threshold every enabled gate is verified (Linf, the physical bounds);
4. a best file's threshold gates when the command line gives none;
5. without any threshold the errors are advisory but --phys-min/--phys-max still gate: values numcodecs'
   FixedScaleOffset rounds over --phys-max (from inputs within it) are refused, exit 1, nothing stored, by
   compress and by compress_with_optimal; within the bounds the field is written, equal to numcodecs; the
   same run again skips it, one without the bounds rewrites it, naming phys_max."""
import json
import os
import subprocess
import sys
import tempfile

import netCDF4
import numcodecs
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import check, finish  # noqa: E402

DCTK = os.environ["DCTK"]
NCARG = os.environ.get("DCTK_NCARG", "/usr/share/ncarg/data")
TOS = os.path.join(NCARG, "nug", "tos_ocean_bipolar_grid.nc")
FICE = os.path.join(NCARG, "cdf", "fice.nc")
tmp = tempfile.mkdtemp(prefix="dctk_verify_exact_")
TAIL = [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "zstd", "configuration": {"level": 3}}]


def pipeline(name, first):
    path = os.path.join(tmp, name + ".json")
    with open(path, "w") as f:
        json.dump([first] + TAIL, f)
    return path


def compress(src, var, name, codecs, *flags, path=None):
    out = os.path.join(tmp, name)
    r = subprocess.run([DCTK, "compress", src, out, "--vars", var, "--pipeline", path or pipeline(name, codecs)]
                       + list(flags), capture_output=True, text=True)
    store = os.path.join(out, os.path.splitext(os.path.basename(src))[0] + ".zarr")
    man = os.path.join(out, "batch_manifest.json")
    fields = json.load(open(man))["fields"] if os.path.exists(man) else {}
    return r, store, fields.get(var, {})


def source(path, var):
    with netCDF4.Dataset(path) as d:
        return np.ma.filled(d[var][:].astype("<f4"), np.nan)


# 1. finite values that come back NaN
x = source(TOS, "tos")
check(0.2 < np.isnan(x).mean() < 0.6, "tos is not the masked field this test needs: %.2f NaN" % np.isnan(x).mean())
r, store, f = compress(TOS, "tos", "delta", {"name": "numcodecs.delta", "configuration": {"dtype": "<f4"}})
check(r.returncode == 1, "a float Delta over a masked field exited %d: %s" % (r.returncode, r.stdout + r.stderr))
check("finite values came back as NaN" in r.stderr, "no line saying finite values came back NaN: " + r.stderr)
check(f.get("status") == "failed", "manifest: %s" % f)
check(not os.path.exists(os.path.join(store, "tos", "zarr.json")), "the destroyed tos is in the store")
check("verified:" not in r.stdout, "the destroyed field was called verified: " + r.stdout)
d = numcodecs.Delta(dtype="<f4")  # one chunk holds the whole of tos: the delta runs over it in C order
y = d.decode(d.encode(x.ravel()))
gained = int((np.isfinite(x.ravel()) & ~np.isfinite(y)).sum())
ver = f.get("verification") or {}
check(gained > 0 and ver.get("mask_gained") == gained,
      "manifest mask_gained %s, numcodecs' Delta turns %d finite values NaN" % (ver.get("mask_gained"), gained))
check("%d finite values came back as NaN" % gained in r.stderr, "the line does not count %d: %s" % (gained, r.stderr))
print("1. float Delta on masked tos: exit %d, %s" % (r.returncode, r.stderr.strip().splitlines()[-1][-90:]))

# 2. integer packing that wraps is refused, one that fits is written and reads back as numcodecs computes it
wrap = {"name": "numcodecs.fixedscaleoffset",
        "configuration": {"offset": 0, "scale": 100000, "dtype": "<f4", "astype": "<i2"}}
r, store, f = compress(FICE, "fice", "wrap", wrap)
check(r.returncode == 1, "a FixedScaleOffset that wraps exited %d" % r.returncode)
check("cannot hold the field's values" in r.stderr and "100000" in r.stderr and "wrap" in r.stderr,
      "no line naming the packing and range: " + r.stderr)
check(f.get("status") == "failed", "manifest: %s" % f)
check(not os.path.exists(os.path.join(store, "fice", "zarr.json")), "the wrapped fice is in the store")
fit = {"name": "numcodecs.fixedscaleoffset",
       "configuration": {"offset": 0, "scale": 1000, "dtype": "<f4", "astype": "<i2"}}
r, store, f = compress(FICE, "fice", "fit", fit)
check(r.returncode == 0 and f.get("status") == "written", "a FixedScaleOffset that fits: exit %d %s" %
      (r.returncode, r.stderr))
nc = os.path.join(tmp, "fit.nc")
r = subprocess.run([DCTK, "from_zarr_to_netcdf", store, "--out", nc], capture_output=True, text=True)
check(r.returncode == 0, "export: " + r.stderr)
if r.returncode == 0:
    x = source(FICE, "fice")
    c = numcodecs.FixedScaleOffset(offset=0, scale=1000, dtype="<f4", astype="<i2")
    ref = c.decode(c.encode(x)).reshape(x.shape)
    got = source(nc, "fice")
    check(np.array_equal(got, ref, equal_nan=True), "fice read back differs from numcodecs' round trip: max %g" %
          np.nanmax(np.abs(got - ref)))
print("2. FixedScaleOffset: wrap refused, fit written and equal to numcodecs")


def norms(x, y):
    """The relative errors as dc_toolkit defines them, over the finite input."""
    m = np.isfinite(x)
    x, y = x[m].astype(np.float64), y[m].astype(np.float64)
    e = y - x
    ax = np.abs(x).sum()
    return {"l1": np.abs(e).sum() / ax, "l2": np.sqrt((e * e).sum() / (x * x).sum()),
            "linf": np.abs(e).max() / np.abs(x).max(), "bias": abs(e.sum()) / ax}


def exported(store, var, name):
    nc = os.path.join(tmp, name + ".nc")
    r = subprocess.run([DCTK, "from_zarr_to_netcdf", store, "--out", nc], capture_output=True, text=True)
    check(r.returncode == 0, "export: " + r.stderr)
    return source(nc, var) if r.returncode == 0 else None


def refused(r, store, f, var, gate, what):
    check(r.returncode == 1, "%s: exit %d: %s" % (what, r.returncode, r.stdout + r.stderr))
    check("verification failed the gates" in r.stderr and gate in r.stderr.split("verification failed the gates")[-1]
          .split(":")[0], "%s: no line naming the failed gate %s: %s" % (what, gate, r.stderr))
    check(f.get("status") == "failed", "%s: manifest %s" % (what, f))
    check(not os.path.exists(os.path.join(store, var, "zarr.json")), "%s: the field is in the store" % what)


# 3. every enabled gate verified with a threshold: Linf (default and flag), the physical bounds
x = source(FICE, "fice")
fin = x[np.isfinite(x)]
top = float(np.quantile(fin[fin > 0], 0.999))  # clip the top 0.1 % of the ice: few, large errors
clamp = {"name": "numcodecs.clamp", "configuration": {"maximum": top}}
ref = np.clip(x, None, np.float32(top))
e = norms(x, ref)
L = 2 * e["l1"]
check(e["linf"] > 10 * L * 1.5, "the clamp's Linf %.3g is not well over 10 x the threshold %.3g" % (e["linf"], L))
off = ["--l2-threshold", "off", "--bias-threshold", "off"]
r, store, f = compress(FICE, "fice", "clamp_default", clamp, "--l1-threshold", repr(L), *off)
refused(r, store, f, "fice", "linf", "Linf over the default 10 x L1")
check("linf <= %.6g" % (10 * L) in r.stdout, "the gates said are not the threshold's: " + r.stdout)
r, store, f = compress(FICE, "fice", "clamp_flag", clamp, "--l1-threshold", repr(L), *off, "--linf-threshold",
                       repr(e["linf"] / 2))
refused(r, store, f, "fice", "linf", "Linf over --linf-threshold")
r, store, f = compress(FICE, "fice", "clamp_off", clamp, "--l1-threshold", repr(L), *off, "--linf-threshold",
                       repr(e["linf"] * 2))
check(r.returncode == 0 and f.get("status") == "written", "Linf within its gate: exit %d %s" % (r.returncode,
                                                                                               r.stderr))
got = exported(store, "fice", "clamp_off")
check(got is not None and np.array_equal(got, ref, equal_nan=True), "the clamped fice differs from numpy's clip")
ver = f.get("verification") or {}
check(abs(ver.get("linf_rel", 0) - e["linf"]) <= 1e-6 * e["linf"], "manifest Linf %s, numpy %g" %
      (ver.get("linf_rel"), e["linf"]))

c = numcodecs.FixedScaleOffset(offset=0, scale=10, dtype="<f4", astype="<i2")
ref = c.decode(c.encode(x)).reshape(x.shape)
cap = 0.47  # inputs in [0.45, 0.47] come back 0.5: over the bound, though they were within it
m = np.isfinite(x) & (x <= cap)
over = int((ref[m] > np.float32(cap)).sum())
check(over > 0, "no fice value rounds over %g" % cap)
tens = {"name": "numcodecs.fixedscaleoffset", "configuration": {"offset": 0, "scale": 10, "dtype": "<f4",
                                                                "astype": "<i2"}}
loose = ["--l1-threshold", "1", "--l2-threshold", "off", "--linf-threshold", "off", "--bias-threshold", "off"]
r, store, f = compress(FICE, "fice", "phys_over", tens, *loose, "--phys-min", "0", "--phys-max", repr(cap))
refused(r, store, f, "fice", "phys", "%d values over --phys-max" % over)
r, store, f = compress(FICE, "fice", "phys_in", tens, *loose, "--phys-min", "0", "--phys-max", "1")
check(r.returncode == 0 and f.get("status") == "written", "within the physical bounds: exit %d %s" %
      (r.returncode, r.stderr))
got = exported(store, "fice", "phys_in")
check(got is not None and np.array_equal(got, ref, equal_nan=True), "fice differs from numcodecs' round trip")
print("3. gates on --pipeline: Linf over 10 x L1 and over --linf-threshold refused, %d values over --phys-max "
      "refused; written within them, equal to numpy" % over)

# 4. a best_VAR.json's threshold gates when the command line gives none
best = os.path.join(tmp, "best_fice.json")
with open(best, "w") as fh:
    json.dump({"var": "fice", "codecs": [clamp] + TAIL, "threshold": L}, fh)
r, store, f = compress(FICE, "fice", "best_threshold", None, path=best)
check(r.returncode == 1 and "verification failed the gates" in r.stderr and f.get("status") == "failed",
      "a best file's threshold %g did not gate: exit %d %s" % (L, r.returncode, r.stdout + r.stderr))
check("linf <= %.6g" % (10 * L) in r.stdout, "the gates said are not its threshold's: " + r.stdout)
check(not os.path.exists(os.path.join(store, "fice", "zarr.json")), "refused by its threshold, yet in the store")
print("4. a best file's threshold %.3g gates the --pipeline write" % L)
# 5. the physical bounds gate without a threshold (issue 37, item 3): the errors are advisory, the bounds are not
r, store, f = compress(FICE, "fice", "phys_only_over", tens, "--phys-min", "0", "--phys-max", repr(cap))
refused(r, store, f, "fice", "phys", "no threshold, %d values over --phys-max" % over)
check("--phys-max %s" % repr(cap) in r.stderr, "the line does not name the bound: " + r.stderr)
check("verified:" not in r.stdout or "read back, not kept" in r.stdout, "called verified: " + r.stdout)
r, store, f = compress(FICE, "fice", "phys_only_in", tens, "--phys-min", "0", "--phys-max", "1")
check(r.returncode == 0 and f.get("status") == "written", "no threshold, within the physical bounds: exit %d %s" %
      (r.returncode, r.stderr))
check("physical bounds" in r.stdout and "advisory" in r.stdout, "the console does not say the bounds gate: " + r.stdout)
got = exported(store, "fice", "phys_only_in")
check(got is not None and np.array_equal(got, ref, equal_nan=True), "fice differs from numcodecs' round trip")
# the bounds are part of what the field was written under: the same run skips it, one without them rewrites it
r, store, f = compress(FICE, "fice", "phys_only_in", tens, "--phys-min", "0", "--phys-max", "1")
check(r.returncode == 0 and "fice: already in" in r.stdout and "skipped" in r.stdout, "the same bounds again: " + r.stdout)
r, store, f = compress(FICE, "fice", "phys_only_in", tens)
check(r.returncode == 0 and "written under the gate phys_max 1, now off: rewritten" in r.stdout,
      "the bounds dropped: %s" % r.stdout)
# compress_with_optimal's --pipeline form takes the same gates
out = os.path.join(tmp, "cwo_phys")
r = subprocess.run([DCTK, "compress_with_optimal", FICE, out, "fice", "--pipeline", pipeline("cwo", tens),
                    "--phys-min", "0", "--phys-max", repr(cap)], capture_output=True, text=True)
check(r.returncode == 1 and "verification failed the gates phys" in r.stderr,
      "compress_with_optimal --pipeline, no threshold, %d values over --phys-max: exit %d %s" %
      (over, r.returncode, r.stdout + r.stderr))
check(not os.path.exists(os.path.join(out, "fice.zarr", "fice", "zarr.json")), "compress_with_optimal stored fice")
print("5. no threshold: %d values over --phys-max %g refused (compress and compress_with_optimal), written within "
      "--phys-max 1, equal to numcodecs" % (over, cap))
finish("verify exact")
