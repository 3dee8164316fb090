#!/usr/bin/python3
"""Stock linear packing (issue 31 item 2), checked against Debian's numcodecs
on real fields.

numcodecs' FixedScaleOffset is a lossy family of the space: the offset at the
middle of the field's finite range, the scale solved to the budget, astype the
narrowest of int8, uint8, int16, uint16, int32 that holds every level. For
real float32 and float64 fields at relative L1 budgets (the sample is the
whole field), the sweep's solved member is checked with numcodecs itself:
its offset is the middle of the range, its astype holds every level numcodecs
makes and no narrower type of that list does, numcodecs' round trip is within
the budget and uses most of it, and agrees with the row's L1. compress writes
it: numcodecs decodes the store's shards (the stage's astype in them) and
numpy's errors are the best file's. The wrap it prevents: the same field
packed by numcodecs into the next narrower type comes back tens of kelvin off,
and our write of that pipeline is refused with a line that says so. A field
with missing values gets no member, and the log names the family."""
import csv
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
import zarr_shards  # noqa: E402

DCTK = os.environ["DCTK"]
NCARG = os.environ.get("DCTK_NCARG", "/usr/share/ncarg/data")
SCALE = float(os.environ.get("DCTK_TEST_TIMEOUT_SCALE", "1"))
SPACE = ["--filter-class", "fixedscaleoffset,none", "--compressor-class", "zstd", "--serializer-class", "none",
         "--threads-per-rank", "2", "--eval-data-size-limit", "50MB"]
# the types astype is chosen from, narrowest first
TYPES = ["i1", "u1", "i2", "u2", "i4"]
FSO = "numcodecs.fixedscaleoffset"


def run(*args):
    return subprocess.run([DCTK, *args], capture_output=True, text=True, timeout=600 * SCALE)


def values(path, var):
    with netCDF4.Dataset(os.path.join(NCARG, path)) as d:
        return np.ascontiguousarray(np.ma.filled(d[var][:], np.nan))


def fso_of(codecs):
    got = [c["configuration"] for c in codecs if c["name"] == FSO]
    return got[0] if got else None


def codec(conf, astype=None):
    return numcodecs.FixedScaleOffset(offset=conf["offset"], scale=conf["scale"], dtype=conf["dtype"],
                                      astype=astype or conf["astype"])


def round_trip(x, conf, astype=None):
    c = codec(conf, astype)
    return np.asarray(c.decode(c.encode(x)), dtype=x.dtype).reshape(x.shape)


def rel_l1(x, y):
    x64, y64 = x.astype(np.float64), y.astype(np.float64)
    return np.abs(y64 - x64).sum() / np.abs(x64).sum()


def holds(t, lo, hi):
    i = np.iinfo(np.dtype(t))
    return lo >= i.min and hi <= i.max


def sweep(path, var, budget, where):
    r = run("evaluate_combos", os.path.join(NCARG, path), "--where-to-write", where, "--field-to-compress", var,
            "--override-existing-l1-error", str(budget), "--search", "exhaustive", *SPACE)
    check(r.returncode == 0, "%s %s %g: exit %d: %s" % (path, var, budget, r.returncode, r.stderr[-600:]))
    if r.returncode:
        return None, [], r.stderr
    with open(os.path.join(where, "best_%s.json" % var)) as f:
        best = json.load(f)
    with open(os.path.join(where, "config_space_%s_rank0.csv" % var), newline="") as f:
        rows = list(csv.DictReader(f))
    return best, rows, r.stderr


def solved_member(path, var, budget, x, tmp):
    """The sweep's solved FixedScaleOffset, checked against numcodecs; its configuration."""
    label = "%s %s %g" % (path, var, budget)
    best, rows, _ = sweep(path, var, budget, os.path.join(tmp, "%s_%s_%g" % (os.path.basename(path), var, budget)))
    solved = [r for r in rows if r["solved"] not in ("", "nan") and r["filter"]]
    check(solved, "%s: no solved row" % label)
    if not solved:
        return None, best
    f = json.loads(solved[0]["filter"])
    f = f[0] if isinstance(f, list) else f
    conf = f["configuration"]
    check(f["name"] == FSO and all(json.loads(r["filter"]) == json.loads(solved[0]["filter"]) and int(r["trials"]) > 0
                                   for r in solved), "%s: solved rows %r" % (label, [r["filter"] for r in solved[:2]]))
    check(abs(float(solved[0]["solved"]) - conf["scale"]) <= 1e-6 * conf["scale"],
          "%s: solved %s, scale %r" % (label, solved[0]["solved"], conf["scale"]))
    fin = x[np.isfinite(x)]
    mid = float(fin.min()) + (float(fin.max()) - float(fin.min())) / 2
    mid = float(np.float32(mid)) if x.dtype == np.float32 else mid
    check(conf["offset"] == mid and conf["dtype"] == x.dtype.str,
          "%s: offset %r dtype %r, the middle of the range is %r" % (label, conf["offset"], conf["dtype"], mid))
    # every level numcodecs makes fits astype; no narrower type of the list holds them with a level to spare
    levels = codec(conf, "<i8").encode(x)
    lo, hi = int(levels.min()), int(levels.max())
    at = np.dtype(conf["astype"]).str[1:]
    check(at in TYPES and holds(at, lo, hi), "%s: astype %s for levels [%d, %d]" % (label, at, lo, hi))
    narrower = TYPES[:TYPES.index(at)] if at in TYPES else []
    check(not any(holds(t, lo - 1, hi + 1) for t in narrower),
          "%s: astype %s, but %s holds the levels [%d, %d]" % (label, at, narrower, lo, hi))
    # numcodecs' round trip: within the budget, most of it used, the row's L1
    y = round_trip(x, conf)
    l1 = rel_l1(x, y)
    check(budget / 2 <= l1 <= budget, "%s: numcodecs' L1 %g (budget %g)" % (label, l1, budget))
    check(abs(float(solved[0]["l1_rel"]) - l1) <= 1e-6 * l1, "%s: row L1 %s, numcodecs %r" %
          (label, solved[0]["l1_rel"], l1))
    check(fso_of(best["codecs"]) == conf, "%s: the winner %s is not the solved member" % (label, best["name"]))
    print("%-36s %s: scale %.6g, astype %s, levels [%d, %d], L1 %.3g of %g, ratio %.3f" %
          (label, x.dtype, conf["scale"], at, lo, hi, l1, budget, best["ratio"]))
    return conf, best


def compress(path, var, budget, x, conf, tmp):
    """compress writes the solved member; numcodecs decodes the store; numpy's errors are the best file's."""
    out = os.path.join(tmp, "store_%s_%g" % (var, budget))
    r = run("compress", os.path.join(NCARG, path), out, "--vars", var, "--override-existing-l1-error", str(budget),
            "--search", "exhaustive", *SPACE)
    check(r.returncode == 0, "compress %s %g: exit %d: %s" % (var, budget, r.returncode, r.stderr[-600:]))
    if r.returncode:
        return
    best = json.load(open(os.path.join(out, "best_%s.json" % var)))
    store = os.path.join(out, os.path.splitext(os.path.basename(path))[0] + ".zarr")
    meta = json.load(open(os.path.join(store, var, "zarr.json")))
    stored = fso_of(meta["codecs"][0]["configuration"]["codecs"])
    check(stored == conf, "compress %s %g: the store's packing %r, the sweep's %r" % (var, budget, stored, conf))
    got, n = zarr_shards.read_store(store, var)
    check(n > 0 and got.dtype == x.dtype, "compress %s: %d chunks, %s" % (var, n, got.dtype))
    e = np.abs(got.astype(np.float64) - x.astype(np.float64))
    l1 = e.sum() / np.abs(x.astype(np.float64)).sum()
    check(l1 <= budget and abs(l1 - best["l1_rel"]) <= 1e-6 * l1 and
          abs(e.max() - best["max_abs_err"]) <= 1e-6 * e.max(),
          "compress %s: numpy L1 %r max %r, best file %r %r" % (var, l1, e.max(), best["l1_rel"], best["max_abs_err"]))
    check(np.array_equal(got, round_trip(x, conf)), "compress %s: the store is not numcodecs' round trip" % var)


def wrap(path, var, x, conf, tmp):
    """The next narrower type: numcodecs wraps the levels it cannot hold; our write refuses."""
    at = np.dtype(conf["astype"]).str[1:]
    narrower = [t for t in TYPES[:TYPES.index(at)] if t.startswith("i")]
    check(narrower, "wrap: no narrower signed type than %s" % at)
    if not narrower:
        return
    t = "<" + narrower[-1] if narrower[-1] != "i1" else "|i1"
    y = round_trip(x, conf, t)
    worst = np.abs(y.astype(np.float64) - x.astype(np.float64)).max()
    check(worst > 0.25 * (np.nanmax(x) - np.nanmin(x)),
          "wrap: numcodecs into %s is only %g off at worst" % (t, worst))
    bad = dict(conf, astype=t)
    pipe = json.dumps([{"name": FSO, "configuration": bad}, {"name": "bytes", "configuration": {"endian": "little"}},
                       {"name": "zstd", "configuration": {"level": 3}}])
    out = os.path.join(tmp, "wrap")
    r = run("compress", os.path.join(NCARG, path), out, "--vars", var, "--pipeline", pipe)
    check(r.returncode != 0 and "would wrap" in r.stderr and var in r.stderr,
          "wrap: our write into %s: exit %d %r" % (t, r.returncode, r.stderr[-400:]))
    print("%-36s into %s numcodecs is %.3g off at worst; our write refused" % ("wrap", t, worst))


def masked(tmp):
    """Tstorm's t has missing values: no FixedScaleOffset member, and the log says why."""
    out = os.path.join(tmp, "masked")
    r = run("evaluate_combos", os.path.join(NCARG, "cdf", "Tstorm.cdf"), "--where-to-write", out,
            "--field-to-compress", "t", "--override-existing-l1-error", "1e-3", *SPACE)
    check(r.returncode == 0, "masked: exit %d %s" % (r.returncode, r.stderr[-400:]))
    line = [ln for ln in r.stderr.splitlines() if "cannot give them back bit for bit" in ln]
    check(line and "fixedscaleoffset" in line[0], "masked: no line names fixedscaleoffset: %r" % r.stderr[-600:])
    rows = []
    if r.returncode == 0:
        with open(os.path.join(out, "config_space_t_rank0.csv"), newline="") as f:
            rows = list(csv.DictReader(f))
    check(rows and not any(FSO in (w["filter"] or "") for w in rows), "masked: a fixedscaleoffset row was swept")


def main():
    with tempfile.TemporaryDirectory() as tmp:
        masked(tmp)
        # (file, variable, budget): int8, int16 and int32 levels, float32 and float64 data
        cases = [("cdf/meccatemp.cdf", "t", 1e-3), ("cdf/meccatemp.cdf", "t", 1e-5),
                 ("nug/rectilinear_grid_3D.nc", "t", 1e-4), ("cdf/seam.nc", "lat2d", 1e-4),
                 ("cdf/seam.nc", "lat2d", 1e-8)]
        confs = {}
        for path, var, budget in cases:
            x = values(path, var)
            conf, _ = solved_member(path, var, budget, x, tmp)
            if conf:
                confs[(path, var, budget)] = (x, conf)
        astypes = {np.dtype(c["astype"]).str[1:] for _, c in confs.values()}
        check({"i1", "i2", "i4"} <= astypes, "the cases gave astypes %s" % sorted(astypes))
        for key in (cases[1], cases[3]):
            if key in confs:
                compress(key[0], key[1], key[2], confs[key][0], confs[key][1], tmp)
        if cases[1] in confs:
            wrap(cases[1][0], cases[1][1], *confs[cases[1]], tmp)
    finish("linear_packing")


if __name__ == "__main__":
    main()
