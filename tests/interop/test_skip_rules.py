"""compress skips a field already in the store only when it would write the same thing (issue 32 item 5).

On ice5g_21k_1deg.nc's Topo (a copy, so that its time can change): a rerun skips; another shard size,
a changed input (its modification time), another --pipeline, a write without verification followed by
a verified run, and an array with no record of ours (its dc_toolkit attribute removed, as a store
written by another program) are each said in one line and rewritten, without a new sweep when the
sweep result still holds; the store then reads back bit for bit with numcodecs against netCDF4.
Every gate the write was verified by decides too (issue 37): another --linf-threshold, --abs-error,
--phys-max or --l1-threshold is said in one line and written again (or refused, the old copy kept),
with --pipeline and after a sweep, whose result is then not reused either.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

import netCDF4
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import check, finish  # noqa: E402

sys.argv[1:] = [os.environ.get("DCTK_CODEC_TOOL", "")]  # zarr_shards reads its tool's path at import
import zarr_shards  # noqa: E402

DCTK = os.environ["DCTK"]
NCARG = os.environ.get("DCTK_NCARG", "/usr/share/ncarg/data")
SPACE = ["--compressor-class", "zstd", "--filter-class", "none", "--serializer-class", "none",
         "--threads-per-rank", "2"]
SWEPT = " combos on a sample "
tmp = tempfile.mkdtemp(prefix="dctk_skip_")
src = os.path.join(tmp, "ice.nc")
shutil.copy(os.path.join(NCARG, "cdf", "ice5g_21k_1deg.nc"), src)
out = os.path.join(tmp, "out")
meta = os.path.join(out, "ice.zarr", "Topo", "zarr.json")


def compress(*extra):
    r = subprocess.run([DCTK, "compress", src, out, "--vars", "Topo"] + SPACE + list(extra), capture_output=True,
                       text=True)
    return r.returncode, r.stdout, r.stderr


def rewritten(so, why):
    return "Topo: in %s, but %s" % (os.path.join(out, "ice.zarr"), why) in so and "Topo: wrote " in so


rc, so, se = compress()
check(rc == 0 and "Topo: wrote " in so, "first write: exit %d %s" % (rc, se))
rc, so, se = compress()
check(rc == 0 and "Topo: already in" in so and "Topo: wrote " not in so, "an unchanged rerun was not skipped: " + so)

rc, so, se = compress("--shard-mib", "1")
check(rc == 0 and rewritten(so, "written in inner chunks of 16777216 bytes and shards of 536870912, now "
                                "16777216 and 1048576") and SWEPT not in so, "another shard size: " + so)

st = os.stat(src)
os.utime(src, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))
rc, so, se = compress("--shard-mib", "1")
check(rc == 0 and rewritten(so, "the input changed since it was written") and SWEPT not in so,
      "a changed input was not rewritten (or was swept again although its sample is the same): " + so)

PIPE = json.dumps({"compressor": {"name": "numcodecs.zlib", "configuration": {"level": 1}}, "filter": None,
                   "serializer": None})
rc, so, se = compress("--shard-mib", "1", "--pipeline", PIPE)
check(rc == 0 and rewritten(so, "written with another pipeline than this run's"), "another pipeline: " + so)
rc, so, se = compress("--shard-mib", "1", "--pipeline", PIPE)
check(rc == 0 and "Topo: already in" in so, "the same pipeline again was not skipped: " + so)

rc, so, se = compress("--shard-mib", "1", "--no-verify")
check(rc == 0 and rewritten(so, "written with another pipeline than this run's"), "back to the sweep's: " + so)
rc, so, se = compress("--shard-mib", "1")
check(rc == 0 and rewritten(so, "written without verification, now verified"), "verified after --no-verify: " + so)

with open(meta) as f:
    doc = json.load(f)
doc["attributes"].pop("dc_toolkit")
with open(meta, "w") as f:
    json.dump(doc, f)
rc, so, se = compress("--shard-mib", "1")
check(rc == 0 and rewritten(so, "it has no record of dc_toolkit") and SWEPT not in so,
      "an array with no record of ours was not rewritten: " + so)
with open(meta) as f:
    check("dc_toolkit" in json.load(f)["attributes"], "the rewritten array has no provenance")

with netCDF4.Dataset(src) as d:
    v = d["Topo"]
    v.set_auto_maskandscale(False)
    want = np.asarray(v[...])
got, _ = zarr_shards.read_store(os.path.join(out, "ice.zarr"), "Topo")
check(got.dtype == want.dtype and np.array_equal(got, want), "Topo does not read back bit for bit")


def gates(tmp_out, src, want):
    """Every gate the write was verified by decides the skip (issue 37): a rerun with another --linf-threshold,
    --abs-error or --phys-max rewrites the field (or refuses the write, keeping the old copy), never skips it.
    The errors are numpy's, on numcodecs' BitRound round trip and on the store decoded by numcodecs."""
    store = os.path.join(tmp_out, "ice.zarr")
    x = want.astype(np.float64)
    br = numcodecs.BitRound(keepbits=7)
    rt = br.decode(br.encode(want.copy())).reshape(want.shape)  # encode rounds its argument in place
    linf = float(np.max(np.abs(rt - x)) / np.max(np.abs(x)))
    abs_err = float(np.max(np.abs(rt - x)))
    pipe = json.dumps({"compressor": {"name": "numcodecs.zstd", "configuration": {"level": 3}},
                       "filter": {"name": "numcodecs.bitround", "configuration": {"keepbits": 7}}, "serializer": None})

    def run(*extra):
        r = subprocess.run([DCTK, "compress", src, tmp_out, "--vars", "Topo", "--threads-per-rank", "2"] + list(extra),
                           capture_output=True, text=True)
        return r.returncode, r.stdout, r.stderr

    def stored():
        return zarr_shards.read_store(store, "Topo")[0]

    def redone(so, why):
        return "Topo: in %s, but written under the gate %s: rewritten" % (store, why) in so

    base = ["--pipeline", pipe, "--l1-threshold", "1e-2"]
    rc, so, se = run(*base)
    check(rc == 0 and "Topo: wrote " in so and np.array_equal(stored(), rt),
          "the BitRound(7) pipeline, read back, is not numcodecs' round trip: %d %s" % (rc, se[-300:]))
    rc, so, se = run(*base)
    check(rc == 0 and "Topo: already in" in so, "the same pipeline and gates again: not skipped: " + so[-300:])
    # a --pipeline that does not load is said and fails; it never passes for the field stored
    rc, so, se = run("--pipeline", '[{"name": "nosuchcodec"}]', "--l1-threshold", "1e-2")
    check(rc == 1 and "Topo: in %s, but this run's --pipeline does not load for it: rewritten" % store in so
          and "nosuchcodec" in se and np.array_equal(stored(), rt),
          "a --pipeline that does not load: rc %d %s %s" % (rc, so[-300:], se[-300:]))
    # a Linf gate under the pipeline's Linf: the rerun is verified again and refused, the old copy kept
    tight = "%.6g" % (linf / 2)
    rc, so, se = run(*base, "--linf-threshold", tight)
    check(rc == 1 and redone(so, "linf 0.1, now %s" % tight) and "linf" in se and np.array_equal(stored(), rt),
          "a tighter --linf-threshold (numpy's Linf %.4g): rc %d %s %s" % (linf, rc, so[-400:], se[-300:]))
    loose = "%.6g" % (linf * 2)
    rc, so, se = run(*base, "--linf-threshold", loose)
    check(rc == 0 and redone(so, "linf 0.1, now %s" % loose) and "Topo: wrote " in so,
          "a looser --linf-threshold was not rewritten: %d %s" % (rc, so[-400:]))
    rc, so, se = run(*base, "--linf-threshold", loose)
    check(rc == 0 and "Topo: already in" in so, "the same Linf gate again: not skipped: " + so[-300:])
    half = "%.6g" % (abs_err / 2)
    rc, so, se = run(*base, "--linf-threshold", loose, "--abs-error", half)
    check(rc == 1 and redone(so, "abs_error off, now %s" % half) and np.array_equal(stored(), rt),
          "--abs-error under numpy's max error %g: rc %d %s %s" % (abs_err, rc, so[-400:], se[-300:]))
    # the largest value BitRound rounds up: the source holds it within the bound, the round trip does not
    top = "%.9g" % float(np.max(want[rt > want]))
    rc, so, se = run(*base, "--linf-threshold", loose, "--phys-max", top)
    check(rc == 1 and redone(so, "phys_max off, now %g" % float(top)) and np.array_equal(stored(), rt),
          "--phys-max under the largest value written: rc %d %s %s" % (rc, so[-400:], se[-300:]))

    # a sweep's result is reused, and the stored field skipped, only under the gates it was swept with
    space = ["--compressor-class", "zstd", "--filter-class", "bitround", "--serializer-class", "none"]
    rc, so, se = run(*space, "--l1-threshold", "1e-3", "--no-skip-existing")
    got = stored().astype(np.float64)
    was = float(np.max(np.abs(got - x)) / np.max(np.abs(x)))
    check(rc == 0 and "Topo: wrote " in so and was > 0, "the swept write: rc %d Linf %g %s" % (rc, was, se[-300:]))
    tight = "%.6g" % (was / 2)
    rc, so, se = run(*space, "--l1-threshold", "1e-3", "--linf-threshold", tight)
    got = stored().astype(np.float64)
    now = float(np.max(np.abs(got - x)) / np.max(np.abs(x)))
    check(rc == 0 and "but written under the gate linf 0.01, now %s: rewritten" % tight in so
          and "no longer holds (swept under the gate linf 0.01, now %s)" % tight in so and now <= float(tight),
          "a tighter --linf-threshold after a sweep: rc %d, numpy's Linf %g against %s: %s" % (rc, now, tight, so[-600:]))
    rc, so, se = run(*space, "--l1-threshold", "1e-2", "--linf-threshold", tight)
    check(rc == 0 and "but written under the gate l1 0.001, now 0.01: rewritten" in so,
          "another --l1-threshold after a sweep: not rewritten: " + so[-400:])


import numcodecs  # noqa: E402

with tempfile.TemporaryDirectory() as gtmp:
    gsrc = os.path.join(gtmp, "ice.nc")
    shutil.copy(os.path.join(NCARG, "cdf", "ice5g_21k_1deg.nc"), gsrc)
    gates(os.path.join(gtmp, "out"), gsrc, want)
finish("skip_rules")
