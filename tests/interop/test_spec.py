#!/usr/bin/python3
"""The per-variable spec file (issue 31 item 4), on the three real fields of
rectilinear_grid_3D.nc:

- each field takes its own entry over the "default" entry: t an absolute
  budget and a filter class of its own beside the default's L1 and classes,
  var3 "lossless" (no budget, every kept row exact), rhumidity the default
  alone; the rows of each field's CSV hold only the classes its entry allows;
  an entry naming no variable of the file gets a warning line;
- `compress --spec` writes all three, and the store, decoded by Debian's
  numcodecs (zarr_shards.py), is within each field's budget of
  python3-netCDF4's values (var3 bit for bit);
- flags win over the file (--l1-threshold, --filter-class);
- an entry's "target-ratio" is that field's --target-ratio: its winner is
  the smallest relative L1 of the rows whose ratio reaches it (the other
  fields keep the default's L1 budget), and its store, decoded by Debian's
  numcodecs, is that small a share of the values' bytes;
- a bad file stops before any sweep with one line naming the file, the entry
  and the key.

    test_spec.py PATH/TO/dctk_zarr_tool"""
import csv
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import netCDF4  # noqa: E402
import numpy as np  # noqa: E402
import zarr_shards  # noqa: E402
from checks import check, finish  # noqa: E402

DCTK = os.environ["DCTK"]
FILE = os.path.join(os.environ.get("DCTK_NCARG", "/usr/share/ncarg/data"), "nug", "rectilinear_grid_3D.nc")
SPEC = {"default": {"l1-threshold": 1e-3, "compressor-class": "zstd", "serializer-class": "none"},
        "t": {"abs-error": 0.05, "filter-class": ["bitround", "none"]},
        "var3": "lossless",
        "zz": {"phys-min": 0}}
LIMIT = ["--eval-data-size-limit", "300KB"]


def run(*args):
    return subprocess.run([DCTK, *args], capture_output=True, text=True)


def write_spec(tmp, spec, name="spec.json"):
    path = os.path.join(tmp, name)
    with open(path, "w") as f:
        json.dump(spec, f) if not isinstance(spec, str) else f.write(spec)
    return path


def families(out, var, column):
    """The codec names of a column over every row ("" for none)."""
    names = set()
    with open(os.path.join(out, "config_space_%s_rank0.csv" % var)) as f:
        for r in csv.DictReader(f):
            j = json.loads(r[column]) if r[column] else []
            names |= {c["name"] for c in (j if isinstance(j, list) else [j])} or {""}
    return names


def per_field(tmp, spec):
    out = os.path.join(tmp, "out")
    r = run("compress", FILE, "--where-to-write", out, "--spec", spec, *LIMIT)
    check(r.returncode == 0, "compress --spec: %s %s" % (r.stdout, r.stderr))
    check("the entry 'zz' names no variable" in r.stderr, "no warning for zz: " + r.stderr)
    best = {v: json.load(open(os.path.join(out, "best_%s.json" % v))) for v in ("t", "var3", "rhumidity")}
    g = best["t"]["gates"]
    check(g["l1"] == 1e-3 and g["abs_error"] == 0.05 and g["l2"] == 2e-3, "t's gates %r" % g)
    check(best["t"]["threshold_source"].endswith("entry 'default'"), best["t"]["threshold_source"])
    check(families(out, "t", "filter") <= {"", "numcodecs.bitround"} and
          families(out, "t", "serializer") == {""}, "t's space is not its entry's: %r" % families(out, "t", "filter"))
    check("numcodecs.quantize" in families(out, "rhumidity", "filter"), "rhumidity lost the default filter class")
    check(families(out, "rhumidity", "compressor") <= {"", "zstd", "numcodecs.shuffle"},
          "rhumidity's compressors %r" % families(out, "rhumidity", "compressor"))
    g = best["var3"]["gates"]
    check(g["lossless_only"] and best["var3"]["threshold_source"].endswith("entry 'var3': lossless only") and
          best["var3"]["max_abs_err"] == 0, "var3: %r %r" % (g, best["var3"]["threshold_source"]))
    g = best["rhumidity"]["gates"]
    check(g["l1"] == 1e-3 and g.get("abs_error") is None, "rhumidity's gates %r" % g)
    store = os.path.join(out, "rectilinear_grid_3D.zarr")
    with netCDF4.Dataset(FILE) as d:
        for var, budget in (("t", 0.05), ("var3", 0.0), ("rhumidity", None)):
            x = np.ma.filled(d[var][:], np.nan).astype(np.float64)
            got, stored = zarr_shards.read_store(store, var)
            err = np.abs(got.astype(np.float64) - x)
            if budget is None:  # the relative L1 of the default entry
                ok = err.sum() / np.abs(x).sum() <= 1e-3
            else:
                ok = err.max() <= budget
            check(stored > 0 and ok, "%s: numcodecs' decode is off by %g at worst" % (var, err.max()))
            print("%s: %s, max error %.3g by numpy on numcodecs' decode" % (var, best[var]["name"], err.max()))


def flags_win(tmp, spec):
    out = os.path.join(tmp, "flags")
    r = run("evaluate_combos", FILE, "--where-to-write", out, "--field-to-compress", "t", "--spec", spec,
            "--l1-threshold", "1e-5", "--filter-class", "quantize", *LIMIT)
    check(r.returncode == 0, "flags over the spec: " + r.stderr)
    best = json.load(open(os.path.join(out, "best_t.json")))
    check(best["gates"]["l1"] == 1e-5 and best["gates"]["abs_error"] == 0.05 and
          best["threshold_source"] == "--l1-threshold", "the flag did not win: %r" % best["gates"])
    check(families(out, "t", "filter") <= {"", "numcodecs.quantize"}, "the filter flag did not win")


def target_ratio(tmp):
    spec = write_spec(tmp, {"default": {"l1-threshold": 1e-3, "compressor-class": "zstd", "serializer-class": "none",
                                        "filter-class": "bitround"},
                            "t": {"target-ratio": 6}}, "ratio.json")
    out = os.path.join(tmp, "ratio")
    r = run("compress", FILE, "--where-to-write", out, "--spec", spec, "--vars", "t,rhumidity", *LIMIT)
    check(r.returncode == 0, "compress --spec with a target ratio: %s %s" % (r.stdout, r.stderr))
    if r.returncode:
        return
    best = {v: json.load(open(os.path.join(out, "best_%s.json" % v))) for v in ("t", "rhumidity")}
    g, w = best["t"]["gates"], best["t"]
    check(g.get("target_ratio") == 6 and best["rhumidity"]["gates"].get("target_ratio") is None,
          "target-ratio did not reach t alone: %r / %r" % (g, best["rhumidity"]["gates"]))
    with open(os.path.join(out, "config_space_t_rank0.csv")) as f:
        reach = [row for row in csv.DictReader(f) if row["status"] == "kept"]
    smallest = min((float(row["l1_rel"]) for row in reach), default=None)
    check(reach and all(float(row["ratio"]) >= 6 for row in reach) and w["ratio"] >= 6 and
          w["l1_rel"] == smallest, "t: winner ratio %.3f L1 %g, the smallest L1 reaching 6 %r" %
          (w["ratio"], w["l1_rel"], smallest))
    check(best["rhumidity"]["gates"]["l1"] == 1e-3 and best["rhumidity"]["l1_rel"] <= 1e-3,
          "rhumidity lost the default's budget: %r" % best["rhumidity"]["gates"])
    store = os.path.join(out, "rectilinear_grid_3D.zarr")
    with netCDF4.Dataset(FILE) as d:
        x = np.ma.filled(d["t"][:], np.nan)
    got, chunks = zarr_shards.read_store(store, "t")
    nbytes = sum(os.path.getsize(os.path.join(dp, f)) for dp, _, fs in os.walk(os.path.join(store, "t", "c"))
                 for f in fs)
    l1 = np.abs(got.astype(np.float64) - x).sum() / np.abs(x.astype(np.float64)).sum()
    check(chunks > 0 and x.nbytes / nbytes >= 5 and l1 <= 1.5 * w["l1_rel"] + 1e-12,
          "t: the store's shards hold %d bytes of %d (ratio %.2f), relative L1 %g by numpy on numcodecs' decode" %
          (nbytes, x.nbytes, x.nbytes / max(nbytes, 1), l1))
    print("t at ratio >= 6: %s, ratio %.3f, relative L1 %.3g" % (w["name"], w["ratio"], w["l1_rel"]))


def bad_files(tmp):
    cases = [({"t": {"abs_error": 0.05}}, "entry 't', key 'abs_error': unknown"),
             ({"t": {"filter-class": "bitrund"}}, "entry 't', key 'filter-class': 'bitrund' is not all, none"),
             ({"default": {"l1-threshold": -1}}, "entry 'default', key 'l1-threshold': must be positive"),
             ({"t": "lossy"}, "entry 't' is neither an object of settings nor \"lossless\""),
             ({"t": {"lossless": True, "abs-error": 1}}, "a lossless entry has no budget"),
             ({"t": {"lossless": True, "target-ratio": 4}}, "key 'target-ratio': a lossless entry has no budget"),
             ({"t": {"target-ratio": 0.5}}, "key 'target-ratio': a compression ratio of 1 or more"),
             ("[1, 2]", "a spec is a JSON object"),
             ("{\"t\": ", "not a spec file")]
    for k, (spec, want) in enumerate(cases):
        path = write_spec(tmp, spec, "bad%d.json" % k)
        r = run("evaluate_combos", FILE, "--where-to-write", os.path.join(tmp, "bad"), "--spec", path, *LIMIT)
        lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
        check(r.returncode == 2 and len(lines) == 1 and path in lines[0] and want in lines[0],
              "bad spec %r: exit %d, %r" % (spec, r.returncode, r.stderr))
    check(not os.path.exists(os.path.join(tmp, "bad", "best_t.json")), "a bad spec still swept")


def main():
    with tempfile.TemporaryDirectory(prefix="dctk_spec_") as tmp:
        spec = write_spec(tmp, SPEC)
        per_field(tmp, spec)
        flags_win(tmp, spec)
        target_ratio(tmp)
        bad_files(tmp)
    finish("spec")


if __name__ == "__main__":
    main()
