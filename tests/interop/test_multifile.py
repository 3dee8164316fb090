#!/usr/bin/python3
"""Many files, one dataset (issue 36 item 2), on a real field: the first 12
months of fice.nc (libncarg-data cdf/, sea-ice fraction, masked) written by
netCDF4 as 12 monthly files and as one file of 12 months.

- `compress 'DIR/fice_*.nc'` (a glob) writes one store, fice.zarr, equal file
  for file and byte for byte to the store of the single 12-month file, with a
  pipeline given and with a sweep (whose sample is drawn across the files: the
  best file names the same sample); zarrita reads the joined field and its
  time coordinate as netCDF4 reads the single file;
- a directory of Zarr inputs (the months as Zarr v2 groups written by
  zarr-python) joins the same way: zarrita reads the same field and time;
- files that do not fit are refused, naming the file and the first
  difference, with nothing written: a grid coordinate changed in one month, a
  month out of time order, a variable missing;
- `--append`: the store of the 12 files, grown by a 13th file (the glob of
  the 13), equals byte for byte the store of the single 13-month file; only
  the shard the new month touches is written (the others keep their inodes),
  a partial last shard again whole; a second --append has nothing to add; a
  run whose time does not continue the store, --pipeline with --append and a
  missing store are refused with one line, the store unchanged, and so are
  a lossy field's new shards that miss the --l1-threshold given; the state a
  cut append leaves (its shard moved in, zarr.json not yet grown, a stage
  left) reads as the 12 months, and running --append again completes it.
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
import store_common as sc  # noqa: E402
from checks import check, finish  # noqa: E402

DCTK = os.environ["DCTK"]
NCARG = os.environ.get("DCTK_NCARG", "/usr/share/ncarg/data")
PIPELINE = '{"filter": null, "serializer": null, "compressor": {"name": "zstd", "configuration": {"level": 3}}}'
# 3 months a chunk: the chunks of the joined field straddle the files
CHUNK = ["--inner-chunk-mib", str(3 * 49 * 100 * 4 / 2**20)]
SPACE = ["--compressor-class", "zstd", "--filter-class", "none", "--serializer-class", "none",
         "--eval-data-size-limit", "60KB", "--threads-per-rank", "2"]
tmp = tempfile.mkdtemp(prefix="dctk_multifile_")


write_months = sc.fice_months


def run(*args):
    r = subprocess.run([DCTK] + [str(a) for a in args], capture_output=True, text=True)
    return r.returncode, r.stdout, r.stderr


def files(store):
    """Relative path -> bytes of every file of a store (zarr.json: without the provenance's source, the glob
    or the single file, by design not the same)."""
    return sc.tree_files(store, strip_source=True)


def same_store(a, b, label):
    only, differ, fa = sc.store_difference(a, b, strip_source=True)
    check(not only, "%s: the stores hold other files: %s" % (label, only))
    check(not differ, "%s: files differ: %s" % (label, differ))
    check(len(fa) >= 6, "%s: the store has %d files" % (label, len(fa)))


single = os.path.join(tmp, "single12.nc")
write_months(single, 0, 12)
months = os.path.join(tmp, "months")
os.makedirs(months)
for m in range(12):
    write_months(os.path.join(months, "fice_%02d.nc" % (m + 1)), m, m + 1)
glob = os.path.join(months, "fice_*.nc")

# 1. a pipeline given: one store, equal to the single file's
code, _, err = run("compress", single, "--where-to-write", os.path.join(tmp, "one"), "--pipeline", PIPELINE, *CHUNK)
check(code == 0, "compress of the single file: exit %d: %s" % (code, err[-500:]))
code, _, err = run("compress", glob, "--where-to-write", os.path.join(tmp, "many"), "--pipeline", PIPELINE, *CHUNK)
check(code == 0, "compress of the glob: exit %d: %s" % (code, err[-500:]))
check("many/fice.zarr" in err + _, "the store of 'fice_*.nc' is fice.zarr: %s" % err[-300:])
same_store(os.path.join(tmp, "one", "single12.zarr"), os.path.join(tmp, "many", "fice.zarr"), "pipeline")

# what an independent reader sees: the joined field and the time coordinate of the single file
with netCDF4.Dataset(single) as d:
    want = {n: sc.digest(np.ma.filled(d[n][:].astype(d[n].dtype), np.nan)) for n in ("fice", "time")}
got = sc.read_store(os.path.join(tmp, "many", "fice.zarr"))
for n in ("fice", "time"):
    check(got.get("arrays", {}).get(n, {}).get("sha256") == want[n], "zarrita reads %s of the joined store: %s" %
          (n, got.get("arrays", {}).get(n)))

# 2. a sweep, its sample drawn across the files
code, _, err = run("compress", single, "--where-to-write", os.path.join(tmp, "one_swept"), *SPACE, *CHUNK)
check(code == 0, "swept compress of the single file: exit %d: %s" % (code, err[-500:]))
code, _, err = run("compress", glob, "--where-to-write", os.path.join(tmp, "many_swept"), *SPACE, *CHUNK)
check(code == 0, "swept compress of the glob: exit %d: %s" % (code, err[-500:]))
same_store(os.path.join(tmp, "one_swept", "single12.zarr"), os.path.join(tmp, "many_swept", "fice.zarr"), "swept")
best = [json.load(open(os.path.join(tmp, d, "best_fice.json"))) for d in ("one_swept", "many_swept")]
check(best[0]["sample"] == best[1]["sample"], "the sample of the glob is the single file's: %s against %s" %
      (best[1]["sample"], best[0]["sample"]))
check(len(best[0]["sample"]["shape"]) == 3 and best[0]["sample"]["shape"][0] > 1,
      "the sample spans several months: %s" % best[0]["sample"])

# 3. a directory of Zarr inputs: each month a Zarr v2 group written by zarr-python
import zarr  # noqa: E402

zdir = os.path.join(tmp, "zmonths")
with netCDF4.Dataset(single) as d:
    for m in range(12):
        g = zarr.open_group(os.path.join(zdir, "fice_%02d.zarr" % (m + 1)), mode="w")
        for n in ("fice", "time", "hlat", "hlon"):
            v = d[n]
            x = np.ma.filled(v[m:m + 1] if n in ("fice", "time") else v[:], np.nan).astype(v.dtype)
            a = g.create_dataset(n, data=x, chunks=x.shape, fill_value=np.nan)  # as xarray writes floats
            a.attrs["_ARRAY_DIMENSIONS"] = list(v.dimensions)
            a.attrs.update({k: v.getncattr(k) for k in v.ncattrs() if k in ("units", "long_name")})
code, _, err = run("compress", zdir, "--where-to-write", os.path.join(tmp, "zmany"), "--pipeline", PIPELINE, *CHUNK)
check(code == 0, "compress of a directory of Zarr inputs: exit %d: %s" % (code, err[-500:]))
got = sc.read_store(os.path.join(tmp, "zmany", "zmonths.zarr"))
for n in ("fice", "time"):
    check(got.get("arrays", {}).get(n, {}).get("sha256") == want[n], "zarrita reads %s joined from Zarr inputs: %s" %
          (n, got.get("arrays", {}).get(n)))

# 4. files that do not fit: refused, naming the file and the difference, nothing written
def refused(label, make, words):
    d = os.path.join(tmp, "bad_" + label)
    shutil.copytree(months, d)
    culprit = make(d)
    out = os.path.join(tmp, "out_" + label)
    code, so, err = run("compress", os.path.join(d, "fice_*.nc"), "--where-to-write", out, "--pipeline", PIPELINE)
    lines = [x for x in err.strip().splitlines() if x]
    check(code != 0, "%s: exit %d" % (label, code))
    check(any(culprit in x and all(w in x for w in words) for x in lines),
          "%s: no line names %s and %s: %s" % (label, culprit, words, err[-400:]))
    check(not os.path.exists(os.path.join(out, "fice.zarr")), "%s: a store was written" % label)


def grid_moved(d):
    with netCDF4.Dataset(os.path.join(d, "fice_07.nc"), "a") as f:
        f["hlat"][5] = f["hlat"][5] + 0.5
    return "fice_07.nc"


def out_of_order(d):
    os.rename(os.path.join(d, "fice_03.nc"), os.path.join(d, "fice_99.nc"))  # March after December
    return "fice_99.nc"


def variable_missing(d):
    p = os.path.join(d, "fice_05.nc")
    os.remove(p)
    write_months(p, 4, 5, edit=lambda f: f.renameVariable("fice", "ice"))
    return "fice_05.nc"


# 5. --append: shards of 5 months (1-month inner chunks), so that the 12 months end inside a shard
SHARDED = ["--inner-chunk-mib", str(49 * 100 * 4 / 2**20), "--shard-mib", str(5.5 * 49 * 100 * 4 / 2**20),
           "--threads-per-rank", "2"]
run13 = os.path.join(tmp, "run13")
os.makedirs(run13)
for m in range(12):
    shutil.copy(os.path.join(months, "fice_%02d.nc" % (m + 1)), run13)
single13 = os.path.join(tmp, "single13.nc")
write_months(single13, 0, 13)
code, _, err = run("compress", single13, "--where-to-write", os.path.join(tmp, "one13"), "--pipeline", PIPELINE,
                   *SHARDED)
check(code == 0, "compress of the single 13-month file: exit %d: %s" % (code, err[-500:]))
glob13 = os.path.join(run13, "fice_*.nc")
grown = os.path.join(tmp, "grown")
store = os.path.join(grown, "fice.zarr")
code, _, err = run("compress", glob13, "--where-to-write", grown, "--pipeline", PIPELINE, *SHARDED)
check(code == 0, "compress of the 12 files: exit %d: %s" % (code, err[-500:]))
shards = {k: os.stat(os.path.join(store, "fice", "c", k, "0", "0")) for k in ("0", "1", "2")}
twelve = files(store)
write_months(os.path.join(run13, "fice_13.nc"), 12, 13)

# refused, with one line and the store as it was
def refused_append(label, args, words, where=grown):
    code, so, err = run("compress", *args, "--where-to-write", where, "--append", *SHARDED)
    lines = [x for x in err.strip().splitlines() if x]
    check(code != 0, "append %s: exit %d" % (label, code))
    check(len(lines) == 1 and all(w in lines[0] for w in words), "append %s: not one line with %s: %r" %
          (label, words, lines))
    check(files(store) == twelve, "append %s: the store changed" % label)


later = os.path.join(tmp, "later")  # February to January: the store's January is not the run's first month
os.makedirs(later)
for m in range(2, 14):
    shutil.copy(os.path.join(run13 if m == 13 else months, "fice_%02d.nc" % m), later)
refused_append("not continuing", [os.path.join(later, "fice_*.nc")], ["fice.zarr", "'time'", "index 0"])
refused_append("with --pipeline", [glob13, "--pipeline", PIPELINE], ["--append", "--pipeline"])
refused_append("without a store", [glob13], ["no store", "without --append"], where=os.path.join(tmp, "nowhere"))

code, out, err = run("compress", glob13, "--where-to-write", grown, "--append", *SHARDED)
check(code == 0, "append of the 13th month: exit %d: %s" % (code, err[-500:]))
check("fice: appended 1 steps along 'time' (12 -> 13)" in out and "verified" in out,
      "the append's line: %s" % out[-400:])
same_store(os.path.join(tmp, "one13", "single13.zarr"), store, "appended")
after = {k: os.stat(os.path.join(store, "fice", "c", k, "0", "0")) for k in ("0", "1", "2")}
for k in ("0", "1"):
    check((after[k].st_ino, after[k].st_mtime_ns) == (shards[k].st_ino, shards[k].st_mtime_ns),
          "shard %s (months before the new one) was written again" % k)
check(after["2"].st_ino != shards["2"].st_ino, "the partial last shard was not written again")
import re  # noqa: E402
mb = re.search(r"([0-9.]+) MB written", out)
check(mb and abs(float(mb.group(1)) - after["2"].st_size / 1e6) < 1e-3,
      "the append wrote more than the last shard (%d bytes): %s" % (after["2"].st_size, out[-300:]))
with netCDF4.Dataset(single13) as d:
    want13 = {n: sc.digest(np.ma.filled(d[n][:].astype(d[n].dtype), np.nan)) for n in ("fice", "time")}
got = sc.read_store(store)
for n in ("fice", "time"):
    check(got.get("arrays", {}).get(n, {}).get("sha256") == want13[n], "zarrita reads %s of the grown store: %s" %
          (n, got.get("arrays", {}).get(n)))
code, out, _ = run("compress", glob13, "--where-to-write", grown, "--append", *SHARDED)
check(code == 0 and "nothing to append" in out, "a second append: exit %d: %s" % (code, out[-300:]))
same_store(os.path.join(tmp, "one13", "single13.zarr"), store, "appended twice")

# a lossy field's new shards judged by the bound given: missed, nothing moved in
LOSSY = '{"filter": {"name": "numcodecs.bitround", "configuration": {"keepbits": 8}}, "serializer": null, ' \
        '"compressor": {"name": "zstd", "configuration": {"level": 3}}}'
tight = os.path.join(tmp, "tight")
code, _, err = run("compress", os.path.join(months, "fice_*.nc"), "--where-to-write", tight, "--pipeline", LOSSY,
                   *SHARDED)
check(code == 0, "lossy compress of the 12 files: exit %d: %s" % (code, err[-500:]))
before = files(os.path.join(tight, "fice.zarr"))
code, _, err = run("compress", glob13, "--where-to-write", tight, "--append", "--l1-threshold", "1e-6", *SHARDED)
check(code != 0 and "exceeds the bound 1.000e-06" in err, "a lossy append over its bound: exit %d: %s" %
      (code, err[-300:]))
check(files(os.path.join(tight, "fice.zarr")) == before, "a lossy append over its bound changed the store")
check(not [n for n in os.listdir(os.path.join(tight, "fice.zarr")) if n.startswith(".")],
      "a refused append left %r" % os.listdir(os.path.join(tight, "fice.zarr")))

# what a cut append leaves: the grown shard moved in, zarr.json and the coordinates not yet, a stage
cut = os.path.join(tmp, "cut")
code, _, err = run("compress", os.path.join(months, "fice_*.nc"), "--where-to-write", cut, "--pipeline", PIPELINE,
                   *SHARDED)
check(code == 0, "compress of the 12 files again: exit %d: %s" % (code, err[-500:]))
cut_store = os.path.join(cut, "fice.zarr")
shutil.copy(os.path.join(store, "fice", "c", "2", "0", "0"), os.path.join(cut_store, "fice", "c", "2", "0", "0"))
stage = os.path.join(cut_store, ".fice.stage.host.999999.cut")
shutil.copytree(os.path.join(store, "fice"), stage)
got = sc.read_store(cut_store)
for n in ("fice", "time"):
    check(got.get("arrays", {}).get(n, {}).get("sha256") == want[n], "a cut append: zarrita reads %s: %s" %
          (n, got.get("arrays", {}).get(n)))
code, _, err = run("compress", glob13, "--where-to-write", cut, "--append", *SHARDED)
check(code == 0, "the append after a cut one: exit %d: %s" % (code, err[-500:]))
same_store(os.path.join(tmp, "one13", "single13.zarr"), cut_store, "appended after a cut")

refused("grid", grid_moved, ["hlat", "index 5"])
refused("order", out_of_order, ["time"])
refused("missing", variable_missing, ["fice"])
finish("test_multifile")
