"""compress skips a field already in the store only when it would write the same thing (issue 32 item 5).

On ice5g_21k_1deg.nc's Topo (a copy, so that its time can change): a rerun skips; another shard size,
a changed input (its modification time), another --pipeline, a write without verification followed by
a verified run, and an array with no record of ours (its dc_toolkit attribute removed, as a store
written by another program) are each said in one line and rewritten, without a new sweep when the
sweep result still holds; the store then reads back bit for bit with numcodecs against netCDF4.
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
finish("skip_rules")
