#!/usr/bin/python3
"""The smaller texts a user reads say what the program does (issue 33 item 7), each read as
printed:
  - evaluate_combos --help: the sample is not "evenly spaced along the leading dimension" (the
    sampler takes time steps and levels, at least 3 of each), not every combo is evaluated on it
    (the adaptive search screens on parts), and the threshold flag it names is --l1-threshold
    (the Python tool's), not only its earlier alias;
  - a write the verification refuses is not announced as "wrote" (a combo of rectilinear_grid_3D's
    t whose error is over 1e-3, against the threshold of 1e-4 its best_t.json holds): the line says it was tried
    and refused, then why;
  - a field whose units read as a byte size ("MB", millibar in the Python tool's climatologies;
    here rectilinear_grid_3D's t written by netCDF4 with units "MB") has its errors printed with
    "(the field's units)", not beside KiB sizes as if it were megabytes;
  - the index form of compress_with_optimal on a field without a threshold (uv300's Gaussian
    weights gw, no table row) given a lossy row (0 2 -1 of zstd, bitround, none): one line,
    first, says the field has no threshold and which lossy combo the indices name, not "no combo
    ... in this space" nor "written losslessly only"; nothing is written. Given --l1-threshold,
    the same indices write that combo: numcodecs' BitRound with the keepbits the line named, on
    netCDF4's values, equals the store read back by numcodecs; the store's provenance records the
    bound that gated the write (write.bound_l1, not null, and gates.l1)."""
import csv
import json
import os
import re
import subprocess
import sys
import tempfile

import netCDF4
import numcodecs
import numpy as np

DCTK = os.environ["DCTK"]
SRC = os.path.join(os.environ.get("DCTK_NCARG", "/usr/share/ncarg/data"), "nug", "rectilinear_grid_3D.nc")
SPACE = ["--eval-data-size-limit", "2MB", "--compressor-class", "zstd", "--filter-class", "none",
         "--serializer-class", "sz"]
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import check, finish  # noqa: E402
import zarr_shards  # noqa: E402


def run(*args):
    return subprocess.run([DCTK, *args], capture_output=True, text=True, timeout=120)


h = run("evaluate_combos", "--help").stdout
desc = " ".join(h.split("\noptions:")[0].split())
check("evenly spaced" not in desc and "leading dimension" not in desc, "help: the old sampler: %s" % desc[:300])
check("at least 3 of each" in desc and "time steps and levels" in desc, "help: the sampler's rule: %s" % desc[:400])
check("--search adaptive, the default" in desc and "evaluates every combo" not in desc,
      "help: the adaptive search: %s" % desc)
check("--l1-threshold" in desc and desc.find("--l1-threshold") < (desc.find("--override-existing-l1-error") % 10**9),
      "help: --l1-threshold named first: %s" % desc)
opts = h.split("\noptions:")[1]
check(opts.find("--l1-threshold") < opts.find("--override-existing-l1-error"), "options: the alias before the flag")
with tempfile.TemporaryDirectory() as tmp:
    loose = os.path.join(tmp, "loose")
    r = run("evaluate_combos", SRC, "--where-to-write", loose, "--field-to-compress", "t", *SPACE,
            "--l1-threshold", "5e-3")
    r = run("evaluate_combos", SRC, "--where-to-write", loose, "--field-to-compress", "t", *SPACE,
            "--l1-threshold", "1e-4", "--resume")
    check(r.returncode == 0, "sweeps: %s" % r.stderr[-400:])
    with open(os.path.join(loose, "config_space_t_rank0.csv"), newline="") as f:
        over = [x for x in csv.DictReader(f) if x["error"] == "" and float(x["l1_rel"]) > 1e-3]
    check(over, "no combo over 1e-3 in the sweep")
    combo = [over[0][k] for k in ("comp_idx", "filt_idx", "ser_idx")] if over else ["0", "-1", "2"]
    r = run("compress_with_optimal", SRC, loose, "t", *combo, *SPACE)
    out = r.stdout
    check(r.returncode != 0 and not re.search(r"^t: wrote ", out, re.M), "refused, yet 'wrote': %s" % out)
    tried = out.find("t: tried (verification refused it) ")
    check(0 <= tried < out.find("t: read back, not kept: "), "the refusal said in order: %s" % out)

    # --pipeline of the sweep's best file, no flag: the file's threshold gated the write, and the store says so
    # (as compress records it)
    bp = os.path.join(tmp, "bp")
    r = run("compress_with_optimal", SRC, bp, "t", "--pipeline", os.path.join(loose, "best_t.json"))
    base = os.path.splitext(os.path.basename(SRC))[0]
    if r.returncode == 0:
        prov = json.load(open(os.path.join(bp, base + ".zarr", "t", "zarr.json")))["attributes"]["dc_toolkit"]
        check(prov["write"]["bound_l1"] == 1e-4, "--pipeline best_t.json: the recorded bound %r" % prov["write"])
    else:
        check(False, "--pipeline best_t.json: %s" % r.stderr[-400:])

    mb = os.path.join(tmp, "mb.nc")
    with netCDF4.Dataset(SRC) as src, netCDF4.Dataset(mb, "w") as dst:
        v = src.variables["t"]
        for d in v.dimensions:
            dst.createDimension(d, len(src.dimensions[d]))
        w = dst.createVariable("p", v.dtype, v.dimensions)
        w.units = "MB"
        w[:] = v[:]
    r = run("evaluate_combos", mb, "--where-to-write", os.path.join(tmp, "mbout"), *SPACE, "--abs-error", "0.05")
    check(r.returncode == 0, "MB sweep: %s" % r.stderr[-400:])
    check("max abs error 0.05 MB (the field's units)" in r.stdout and
          re.search(r"best combo .* max abs error \S+ MB \(the field's units\)$", r.stdout, re.M),
          "units beside sizes: %s" % r.stdout)

    uv = os.path.join(os.path.dirname(SRC), "..", "cdf", "uv300.nc")
    narrow = ["--compressor-class", "zstd", "--filter-class", "bitround", "--serializer-class", "none"]
    out = os.path.join(tmp, "gw")
    r = run("compress_with_optimal", uv, out, "gw", "0", "2", "-1", *narrow)
    lines = r.stderr.splitlines()
    check(r.returncode == 2 and len(lines) == 1, "gw 0 2 -1 without a threshold: exit 2, one line: %r" % r)
    first = lines[0] if lines else ""
    m = re.match(r"dc_toolkit compress_with_optimal: variable 'gw' has no threshold \(no row for 'gw' in units "
                 r"'dimensionless' in the table, no --l1-threshold\), so only lossless combos apply, and "
                 r"\(0, 2, -1\) is '(zstd\(.*\) \| bitround\(keepbits=(\d+)\) \| -)', a combo of the space "
                 r"with lossy codecs: give --l1-threshold X to write it$", first)
    check(m, "the reason first: %r" % first)
    check("no combo" not in r.stderr + r.stdout and "written losslessly" not in r.stdout,
          "no second reason: %r" % (r.stdout + r.stderr))
    store = os.path.join(out, "uv300.zarr")
    check(not os.path.exists(os.path.join(store, "gw")), "a refused combo left gw in the store")
    r = run("compress_with_optimal", uv, out, "gw", "0", "2", "-1", *narrow, "--l1-threshold", "1e-3")
    check(r.returncode == 0 and m and ("with %s (" % m.group(1)) in r.stdout, "the named combo written: %r" % r)
    if m and r.returncode == 0:
        with netCDF4.Dataset(uv) as d:
            gw = np.asarray(d["gw"][:], dtype="<f4")
        got, _ = zarr_shards.read_store(store, "gw")
        br = numcodecs.BitRound(keepbits=int(m.group(2)))
        want = np.asarray(br.decode(br.encode(gw.copy()))).reshape(gw.shape)  # encode rounds its input in place
        check(np.array_equal(got, want) and not np.array_equal(got, gw),
              "gw is the BitRound the line named: %s vs %s" % (got[:3], gw[:3]))
        # the store says what gated the write: the bound given, in the write's record as in its gates
        prov = json.load(open(os.path.join(store, "gw", "zarr.json")))["attributes"]["dc_toolkit"]
        check(prov["write"]["bound_l1"] == 1e-3 and prov["gates"]["l1"] == 1e-3,
              "the provenance's bound: write %r, gates %r" % (prov["write"], prov.get("gates")))
finish("test_user_texts")
