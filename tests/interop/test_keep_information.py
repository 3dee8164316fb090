#!/usr/bin/python3
"""--keep-information F (issue 31 item 5) on real fields, against numpy:

- alone, it is a budget: meccatemp t (float32, no threshold applies: lossless
  only without it) and a float64 field (the awp211 GRIB2 message decoded by
  eccodes, written to netCDF here) are compressed with a BitRound member whose
  keepbits are those numpy's computation of the method (bitinfo_ref.py) gives
  for the share F on the same values (the sample is the whole field); the
  winner is that member, its rows say it was chosen by information (the
  information column holds F, every other row NaN), best_VAR.json records
  the keepbits of 99 % and 99.99 % and that the winner keeps F; the store,
  decoded by Debian's numcodecs (zarr_shards.py), equals numcodecs' own
  BitRound at those keepbits bit for bit, and the errors numpy computes
  from it are those the best file reports;
- with an error budget the member meets the gates like any other: at a
  relative L1 of 1e-6 its rows are rejected (their information column still
  says why they are in the space) and the winner is another;
- the sweep's choice resolves wherever its indices are taken: compress_with_optimal's
  index form writes the member (numcodecs' BitRound at numpy's keepbits, bit
  for bit) with and without the recorded space, and says it was chosen by
  information, never "losslessly only"; --resume at another share measures
  the member of the new share at that index (numpy's keepbits for it, the
  rows' information column the new share, the ratio numcodecs' BitRound +
  Shuffle + Zstd(22) gives), and the index form then writes that one;
- F outside (0, 1] is refused with a line naming the flag, exit 2."""
import csv
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import netCDF4  # noqa: E402
import numcodecs  # noqa: E402
import numpy as np  # noqa: E402
import zarr_shards  # noqa: E402
from bitinfo_ref import keepbits_all_axes  # noqa: E402
from checks import check, finish  # noqa: E402

DCTK = os.environ["DCTK"]
NCARG = os.environ.get("DCTK_NCARG", "/usr/share/ncarg/data")
SPACE = ["--compressor-class", "zstd", "--serializer-class", "none", "--threads-per-rank", "2"]


def run(*args):
    return subprocess.run([DCTK, *args], capture_output=True, text=True)


def rows(out, var):
    with open(os.path.join(out, "config_space_%s_rank0.csv" % var)) as f:
        return list(csv.DictReader(f))


def bitround_keepbits(filter_text):
    f = json.loads(filter_text) if filter_text else None
    return f["configuration"]["keepbits"] if f and f["name"] == "numcodecs.bitround" else None


def netcdf_of(tmp, name, vals):
    path = os.path.join(tmp, name + ".nc")
    with netCDF4.Dataset(path, "w") as d:
        dims = []
        for k, n in enumerate(vals.shape):
            dims.append("d%d" % k)
            d.createDimension(dims[-1], n)
        d.createVariable(name, vals.dtype, dims)[:] = vals
    return path


def grib_float64(tmp):
    """The awp211 GRIB2 message 0, float64 as eccodes decodes it (values the GRIB packing quantized)."""
    import eccodes

    with open(os.path.join(NCARG, "grb", "fh.0012_tl.press_gr.awp211.grb2"), "rb") as f:
        h = eccodes.codes_grib_new_from_file(f)
        ni, nj = eccodes.codes_get(h, "Ni"), eccodes.codes_get(h, "Nj")
        vals = eccodes.codes_get_values(h).astype(np.float64).reshape(nj, ni)
        eccodes.codes_release(h)
    return netcdf_of(tmp, "gribfield", vals), "gribfield", vals


def icon_float64(tmp):
    """The ICON grid's cell vertex longitudes (float64, radians) as a data variable."""
    with netCDF4.Dataset(os.path.join(NCARG, "nug", "triangular_grid_ICON.nc")) as d:
        vals = np.ascontiguousarray(d["clon_vertices"][:].astype(np.float64))
    return netcdf_of(tmp, "vertlon", vals), "vertlon", vals


def alone(tmp, path, var, x, share):
    out = os.path.join(tmp, var + "_alone")
    r = run("compress", path, out, "--vars", var, "--keep-information", str(share), *SPACE)
    label = "%s --keep-information %s" % (var, share)
    check(r.returncode == 0, "%s: exit %d: %s %s" % (label, r.returncode, r.stdout, r.stderr))
    want = keepbits_all_axes(x, share)
    best = json.load(open(os.path.join(out, "best_%s.json" % var)))
    info = best.get("information", {})
    check(info.get("keepbits_99") == keepbits_all_axes(x, 0.99) and
          info.get("keepbits_9999") == keepbits_all_axes(x, 0.9999),
          "%s: recorded keepbits %r, numpy %d and %d" % (label, info, keepbits_all_axes(x, 0.99),
                                                          keepbits_all_axes(x, 0.9999)))
    measured = rows(out, var)
    chosen = [w for w in measured if bitround_keepbits(w["filter"]) == want]
    check(chosen and all(float(w["information"]) == share for w in chosen),
          "%s: the member's rows do not say information %s" % (label, share))
    others = [w for w in measured if bitround_keepbits(w["filter"]) != want]
    check(others and all(np.isnan(float(w["information"])) for w in others),
          "%s: rows not chosen by information carry a share" % label)
    kept = [w for w in measured if w["keep"] == "true"]
    check(all(w in chosen or float(w["max_abs_err"]) == 0 for w in kept),
          "%s: a lossy row kept that information did not choose" % label)
    check(any(w in chosen for w in kept), "%s: no row of the member kept" % label)
    check(kept and best["ratio"] == max(float(w["ratio"]) for w in kept),
          "%s: the winner's ratio %r is not the best kept %r" % (label, best["ratio"],
                                                                 max(float(w["ratio"]) for w in kept)))
    filters = [c for c in best["codecs"] if c["name"] == "numcodecs.bitround"]
    if not filters:  # a lossless pipeline compresses better (values the file quantized already)
        check(info.get("winner_keeps") is None and best["max_abs_err"] == 0,
              "%s: a lossless winner said to be chosen by information: %r" % (label, info))
        print("%-36s %s: keepbits %d (99 %%: %d, 99.99 %%: %d); a lossless pipeline wins, ratio %.3f" %
              (label, x.dtype, want, info.get("keepbits_99", -1), info.get("keepbits_9999", -1), best["ratio"]))
        return
    check("%s: chosen by information" % var in r.stdout, "%s: the summary does not say so: %s" % (label, r.stdout))
    check(info.get("winner_keeps") == share, "%s: winner_keeps %r" % (label, info.get("winner_keeps")))
    got_kb = filters[0]["configuration"]["keepbits"]
    check(got_kb == want, "%s: the winner keeps %r bits, numpy says %d" % (label, got_kb, want))
    store = os.path.join(out, os.path.splitext(os.path.basename(path))[0] + ".zarr")
    got, _ = zarr_shards.read_store(store, var)
    mask = np.isnan(x)
    ref = numcodecs.BitRound(keepbits=want).decode(numcodecs.BitRound(keepbits=want).encode(x.copy()))
    ref = np.asarray(ref).reshape(x.shape)
    check(got.dtype == x.dtype and np.array_equal(got.view("u%d" % x.itemsize), ref.view("u%d" % x.itemsize)),
          "%s: the store is not numcodecs' BitRound(%d) bit for bit" % (label, want))
    e = np.abs(got[~mask].astype(np.float64) - x[~mask].astype(np.float64))
    l1 = e.sum() / np.abs(x[~mask].astype(np.float64)).sum()
    check(abs(l1 - best["l1_rel"]) <= 1e-6 * l1 and abs(e.max() - best["max_abs_err"]) <= 1e-9 * e.max(),
          "%s: numpy's L1 %r and max error %r, the best file's %r and %r" % (label, l1, e.max(), best["l1_rel"],
                                                                            best["max_abs_err"]))
    print("%-36s %s: keepbits %d (99 %%: %d, 99.99 %%: %d), ratio %.3f, relative L1 %.3g by numpy on numcodecs' "
          "decode" % (label, x.dtype, want, info.get("keepbits_99", -1), info.get("keepbits_9999", -1),
                      best["ratio"], l1))


def with_budget(tmp, path, var, x):
    out = os.path.join(tmp, var + "_budget")
    r = run("evaluate_combos", path, "--where-to-write", out, "--field-to-compress", var, "--keep-information", "0.99",
            "--l1-threshold", "1e-6", "--search", "exhaustive", *SPACE)
    check(r.returncode == 0, "with a budget: %s" % r.stderr)
    want = keepbits_all_axes(x, 0.99)
    chosen = [w for w in rows(out, var) if float(w["information"] or "nan") == 0.99]
    check(chosen and all(bitround_keepbits(w["filter"]) == want and w["keep"] == "false" and w["pass_l1"] == "false"
                         for w in chosen), "with L1 1e-6 the information member's rows: %r" %
          [(w["filter"], w["keep"]) for w in chosen])
    best = json.load(open(os.path.join(out, "best_%s.json" % var)))
    check("winner_keeps" not in best.get("information", {}) and best["l1_rel"] <= 1e-6,
          "with L1 1e-6 the winner: %r" % best.get("information"))
    # the console's count of new members: the solved ones and the one chosen by information when the
    # grid (keepbits 1, 10, 19, 23 of float32) does not hold it already
    said = re.search(r"budget: (\d+) new members \((\d+) solved in \d+ measurements, [\d.]+ s"
                     r"(?:, (\d+) chosen by information)?", r.stderr)
    info = 0 if want in (1, 10, 19, 23) else 1
    check(said is not None and int(said.group(1)) == int(said.group(2)) + info and
          int(said.group(3) or 0) == info, "with a budget, the new members: %r (information member keeps %d)" %
          (said and said.group(0), want))


def by_spec(tmp, path, var, x):
    """The --spec file's key (the flag without its dashes) per variable, as the flag."""
    spec = os.path.join(tmp, "spec.json")
    json.dump({var: {"keep-information": 0.99}}, open(spec, "w"))
    out = os.path.join(tmp, var + "_spec")
    r = run("evaluate_combos", path, "--where-to-write", out, "--field-to-compress", var, "--spec", spec, *SPACE)
    check(r.returncode == 0, "--spec keep-information: %s" % r.stderr)
    best = json.load(open(os.path.join(out, "best_%s.json" % var)))
    kb = [c["configuration"]["keepbits"] for c in best["codecs"] if c["name"] == "numcodecs.bitround"]
    check(best["gates"].get("keep_information") == 0.99 and kb == [keepbits_all_axes(x, 0.99)],
          "--spec keep-information: gates %r, bitround %r" % (best["gates"], kb))
    json.dump({var: {"keep-information": 1.5}}, open(spec, "w"))
    r = run("evaluate_combos", path, "--where-to-write", out, "--field-to-compress", var, "--spec", spec, *SPACE)
    check(r.returncode != 0 and "--keep-information" in r.stderr, "--spec keep-information 1.5: exit %d %r" %
          (r.returncode, r.stderr))


def store_is_bitround(store, var, x, k, label):
    got, _ = zarr_shards.read_store(store, var)
    ref = np.asarray(numcodecs.BitRound(keepbits=k).encode(x.copy())).view(x.dtype).reshape(x.shape)
    check(got.dtype == x.dtype and np.array_equal(got.view("u%d" % x.itemsize), ref.view("u%d" % x.itemsize)),
          "%s: the store is not numcodecs' BitRound(%d) bit for bit" % (label, k))


def index_form(path, out, var, x, k, label):
    best = json.load(open(os.path.join(out, "best_%s.json" % var)))
    idx = [str(best[key]) for key in ("comp_idx", "filt_idx", "ser_idx")]
    store = os.path.join(out, os.path.splitext(os.path.basename(path))[0] + ".zarr")
    shutil.rmtree(store, ignore_errors=True)
    r = run("compress_with_optimal", path, out, var, *idx, *SPACE)
    said = r.stdout + r.stderr
    check(r.returncode == 0 and "losslessly only" not in said and "chose by information" in said,
          "%s: index form %s: exit %d: %s" % (label, idx, r.returncode, said[-800:]))
    if r.returncode == 0:
        store_is_bitround(store, var, x, k, label + ", index form")
    return said


def everywhere(tmp, path, var, x):
    out = os.path.join(tmp, var + "_everywhere")
    k99, k90 = keepbits_all_axes(x, 0.99), keepbits_all_axes(x, 0.9)
    r = run("evaluate_combos", path, "--where-to-write", out, "--field-to-compress", var, "--keep-information", "0.99",
            *SPACE)
    said = r.stdout + r.stderr
    check(r.returncode == 0 and "losslessly only" not in said and "keep 0.99 of the field's real information" in said,
          "the sweep at 0.99: exit %d: %s" % (r.returncode, said[-800:]))
    index_form(path, out, var, x, k99, "0.99 with the recorded space")
    os.rename(os.path.join(out, "space_%s.json" % var), os.path.join(tmp, "space_aside.json"))
    said = index_form(path, out, var, x, k99, "0.99 without the recorded space")
    check("the codec space was rebuilt from the field" in said, "no record, yet not rebuilt: " + said[-400:])
    os.rename(os.path.join(tmp, "space_aside.json"), os.path.join(out, "space_%s.json" % var))
    r = run("evaluate_combos", path, "--where-to-write", out, "--field-to-compress", var, "--keep-information", "0.9",
            "--resume", *SPACE)
    check(r.returncode == 0, "--resume at 0.9: exit %d: %s" % (r.returncode, r.stderr[-600:]))
    chosen = [w for w in rows(out, var) if not np.isnan(float(w["information"] or "nan"))]
    check(chosen and all(bitround_keepbits(w["filter"]) == k90 and float(w["information"]) == 0.9 for w in chosen),
          "--resume at 0.9: the rows chosen by information %r, numpy's keepbits %d" %
          ({(w["filter"], w["information"]) for w in chosen}, k90))
    best = json.load(open(os.path.join(out, "best_%s.json" % var)))
    raw = numcodecs.Shuffle(elementsize=x.itemsize).encode(
        np.ascontiguousarray(numcodecs.BitRound(keepbits=k90).encode(x.copy())).view(np.uint8))
    stock = x.nbytes / len(numcodecs.Zstd(level=22).encode(raw))
    check(best["gates"].get("keep_information") == 0.9 and best["ratio"] >= 0.99 * stock,
          "--resume at 0.9: winner ratio %.3f, numcodecs' BitRound(%d) + Shuffle + Zstd(22) %.3f, gates %r" %
          (best["ratio"], k90, stock, best["gates"]))
    index_form(path, out, var, x, k90, "0.9 after --resume")
    print("index form and --resume: keepbits %d at 0.99, %d at 0.9 (numpy), ratio %.3f against numcodecs' %.3f" %
          (k99, k90, best["ratio"], stock))


def refused():
    for bad in ("0", "1.5", "-0.2"):
        r = run("evaluate_combos", os.path.join(NCARG, "cdf", "meccatemp.cdf"), "--where-to-write", "/nonexistent",
                "--keep-information", bad)
        check(r.returncode == 2 and "--keep-information" in r.stderr and bad in r.stderr,
              "--keep-information %s: exit %d, %r" % (bad, r.returncode, r.stderr))


def main():
    refused()
    with tempfile.TemporaryDirectory() as tmp:
        mecca = os.path.join(NCARG, "cdf", "meccatemp.cdf")
        with netCDF4.Dataset(mecca) as d:
            t = np.ascontiguousarray(np.ma.filled(d["t"][:], np.nan))
        alone(tmp, mecca, "t", t, 0.99)
        for make in (grib_float64, icon_float64):
            path, var, g = make(tmp)
            alone(tmp, path, var, g, 0.9999)
        with_budget(tmp, mecca, "t", t)
        by_spec(tmp, mecca, "t", t)
        everywhere(tmp, mecca, "t", t)
    finish("keep_information")


if __name__ == "__main__":
    main()
