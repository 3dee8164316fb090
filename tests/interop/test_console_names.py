"""The console names pipelines by their readable name, not by indices (issue 23, item 3).

On a real field (meccatemp's t), a narrowed sweep (zstd after bitround, plain bytes):
- evaluate_combos announces the winner as "best combo NAME; ratio ...", with no comp_idx=,
  NAME being best_t.json's name and the name this test derives on its own from the winner's
  Zarr v3 codec list (compressor | filter | serializer, "-" for none, short codec names,
  settings key=value in key order); the indices appear only as compress_with_optimal's hint;
- compress prints the same name when it sweeps, when it reuses the sweep result, and on the
  line of each write;
- compress_with_optimal (indices in, as it takes them) names what it wrote, and the errors it
  prints after writing carry the field's units, as netCDF4 reads them.

Run by ctest with DCTK and DCTK_NCARG set."""
import glob
import json
import os
import re
import subprocess
import sys
import tempfile

import netCDF4

DCTK = os.environ["DCTK"]
NCARG = os.environ.get("DCTK_NCARG", "/usr/share/ncarg/data")
SRC = os.path.join(NCARG, "cdf", "meccatemp.cdf")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import check, finish  # noqa: E402

FLAGS = ["--eval-data-size-limit", "100KB", "--compressor-class", "zstd", "--filter-class", "bitround",
         "--serializer-class", "none", "--l1-threshold", "1e-3"]


def run(*args):
    return subprocess.run([DCTK, *args], capture_output=True, text=True, timeout=300)


def short(codec):
    conf = codec.get("configuration", {})
    name = conf["id"] if codec["name"].startswith("any-numcodecs.") else codec["name"].replace("numcodecs.", "", 1)
    text = lambda v: v if isinstance(v, str) else json.dumps(v)
    return "%s(%s)" % (name, ", ".join("%s=%s" % (k, text(conf[k])) for k in sorted(conf)))


def expected_name(codecs):
    """Zarr v3 order is filters, one serializer, compressors; here the serializer is bytes (none)."""
    at = [c["name"] for c in codecs].index("bytes")
    stage = lambda cs: " + ".join(short(c) for c in cs) or "-"
    return "%s | %s | -" % (stage(codecs[at + 1:]), stage(codecs[:at]))


with netCDF4.Dataset(SRC) as nc:
    units = nc["t"].units

with tempfile.TemporaryDirectory() as tmp:
    out = os.path.join(tmp, "sweep")
    r = run("evaluate_combos", SRC, "--where-to-write", out, "--field-to-compress", "t", *FLAGS)
    check(r.returncode == 0, "evaluate_combos: %s" % r.stderr)
    best = json.load(open(os.path.join(out, "best_t.json")))
    name = expected_name(best["codecs"])
    check(best.get("name") == name, "best_t.json names %r, the codecs say %r" % (best.get("name"), name))
    line = [ln for ln in r.stdout.splitlines() if ln.startswith("t: best combo ")]
    check(len(line) == 1 and line[0].startswith("t: best combo %s; ratio %.3f," % (name, best["ratio"]))
          and "comp_idx" not in line[0], "winner line: %r, expected the name %r" % (line, name))
    check("comp_idx=" not in r.stdout, "indices by name in the console: " + r.stdout)
    hint = "(indices %d %d %d for compress_with_optimal)" % (best["comp_idx"], best["filt_idx"], best["ser_idx"])
    check(hint in r.stdout, "no compress_with_optimal hint %r: %s" % (hint, r.stdout))

    # compress: a sweep, then a reuse of its result; each write is named
    where = os.path.join(tmp, "one")
    r = run("compress", SRC, "--where-to-write", where, "--vars", "t", *FLAGS)
    check(r.returncode == 0 and "t: best combo %s; ratio " % name in r.stdout
          and re.search(r"^t: wrote \S+ with %s \(chunks " % re.escape(name), r.stdout, re.M),
          "compress: %s %s" % (r.stdout, r.stderr))
    r = run("compress", SRC, "--where-to-write", where, "--vars", "t", "--no-skip-existing", *FLAGS)
    check(r.returncode == 0 and "t: using the sweep result %s/best_t.json (%s; space fingerprint " % (where, name)
          in r.stdout and "comp_idx" not in r.stdout, "compress again: %s %s" % (r.stdout, r.stderr))

    # compress_with_optimal takes indices; it names the pipeline it wrote, and the errors carry units
    r = run("compress_with_optimal", SRC, out, "t", str(best["comp_idx"]), str(best["filt_idx"]),
            str(best["ser_idx"]), *FLAGS)
    check(r.returncode == 0 and re.search(r"^t: wrote \S+ with %s \(chunks " % re.escape(name), r.stdout, re.M),
          "compress_with_optimal: %s %s" % (r.stdout, r.stderr))
    m = re.search(r"^t: verified: .*, max abs error (\S+) (.+)$", r.stdout, re.M)
    check(m is not None and float(m.group(1)) > 0 and m.group(2) == units,
          "the max abs error is not in %r: %s" % (units, r.stdout))

    # open_zarr_and_inspect names the pipeline it reads from the store's own metadata
    store = glob.glob(os.path.join(out, "*.zarr"))
    inner = json.load(open(os.path.join(store[0], "t", "zarr.json")))["codecs"][0]["configuration"]["codecs"]
    r = run("open_zarr_and_inspect", store[0])
    check(r.returncode == 0 and "  pipeline: %s  (compressor | filter | serializer)\n" % expected_name(inner) in r.stdout,
          "open_zarr_and_inspect does not name %r: %s" % (expected_name(inner), r.stdout))

finish("console_names")
