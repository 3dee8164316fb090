#!/usr/bin/python3
"""The default `compress` writes a store that stock readers open (issue 20):
on a real field whose best combo under the bound is dc_toolkit's own dctk.sz
or dctk.ebcc, the store holds the best combo of level numcodecs instead, one
line names the combo that would have won, its ratio and the flag that writes
it, and every array of the store is read here with Debian's numcodecs and a
shard parser of this test's own (zarr_shards.py), without our library, equal
bit for bit to what dc_toolkit reads. Arrays whose pipeline holds a codec
numcodecs 0.11 lacks (pcodec) are skipped with a line: its golden streams test
it. Then compress_with_optimal --combo best_t.json --codecs all writes the
winner from the same sweep, nothing re-run.

    test_compress_portable.py PATH/TO/dctk_zarr_tool"""
import json
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import numpy as np  # noqa: E402
import zarr_shards  # noqa: E402
from checks import check, finish  # noqa: E402

DCTK = os.environ["DCTK"]
FILE = os.path.join(os.environ.get("DCTK_NCARG", "/usr/share/ncarg/data"), "cdf", "meccatemp.cdf")
SPACE = ["--eval-data-size-limit", "30KB", "--override-existing-l1-error", "1e-3", "--compressor-class", "zstd",
         "--filter-class", "bitround", "--serializer-class", "sz,ebcc,zfpy,none"]
ABOVE = ("dctk.", "any-numcodecs.")  # the names of levels plugin and dctk


def arrays(store):
    for root, _dirs, files in os.walk(store):
        if "zarr.json" in files and root != store:
            meta = json.load(open(os.path.join(root, "zarr.json")))
            if meta.get("node_type") == "array":
                yield os.path.relpath(root, store), meta


def read_all(store, label):
    """Every array through numcodecs, compared with dc_toolkit's read; returns the arrays read."""
    done = 0
    with tempfile.TemporaryDirectory() as tmp:
        for name, meta in arrays(store):
            inner = meta["codecs"][0]["configuration"]["codecs"]
            names = [c["name"] for c in inner]
            if label == "default":
                check(not any(n.startswith(ABOVE) for n in names), "%s: %s needs more than numcodecs" % (name, names))
            if "numcodecs.pcodec" in names:
                print("skip %s: pcodec, which numcodecs 0.11 lacks (its golden streams test it)" % name)
                continue
            got, stored = zarr_shards.read_store(store, name)
            back = os.path.join(tmp, "back")
            subprocess.check_call([zarr_shards.TOOL, "read", store, name, back])
            ours = np.fromfile(back, dtype=meta["data_type"]).reshape(meta["shape"])
            check(stored > 0 and got.tobytes() == ours.tobytes(), "%s: numcodecs reads other values" % name)
            print("%s store: %s (%s) read by numcodecs, equal to dc_toolkit's read" % (label, name, " + ".join(names)))
            done += 1
    return done


def main():
    tmp = tempfile.mkdtemp(prefix="dctk_portable_")
    r = subprocess.run([DCTK, "compress", FILE, "--where-to-write", tmp] + SPACE, capture_output=True, text=True)
    check(r.returncode == 0, "compress exit %d: %s" % (r.returncode, r.stderr))
    best = json.load(open(os.path.join(tmp, "best_t.json")))
    check(best["portability"] == "dctk", "the case no longer has a dctk winner: %s" % best["portability"])
    top, level = best["ratio"], best["by_portability"]["numcodecs"]
    line = re.search(r"^t: (.*) \(ratio ([0-9.]+), readers: dctk\) would have won; writing the best at level "
                     r"'numcodecs' \(ratio ([0-9.]+)\); --codecs all writes it$", r.stdout, re.M)
    check(line is not None, "no line naming the winner: " + r.stdout)
    if line:
        check(abs(float(line.group(2)) - top) < 1e-3 and abs(float(line.group(3)) - level["ratio"]) < 1e-3,
              "the line's ratios are not the sweep's: " + line.group(0))
        check("dctk." in line.group(1) and line.group(1) == best.get("name"),
              "the line does not name the winner by its readable name %r: %s" % (best.get("name"), line.group(0)))
    check(level["ratio"] < top and level["portability"] in ("core", "numcodecs"), repr(level))
    store = os.path.join(tmp, "meccatemp.zarr")
    prov = json.load(open(os.path.join(store, "t", "zarr.json")))["attributes"]["dc_toolkit"]
    check(prov["portability"] == level["portability"] and prov["python_packages"] == [] and
          prov["pipeline"] == level["codecs"] and prov["ser_idx"] == level["ser_idx"], "provenance %r" % prov)
    n = read_all(store, "default")
    check(n >= 4, "only %d arrays read" % n)  # t and its three coordinates

    r = subprocess.run([DCTK, "compress_with_optimal", FILE, tmp, "t", "--combo", os.path.join(tmp, "best_t.json"),
                        "--codecs", "all"], capture_output=True, text=True)
    check(r.returncode == 0 and "would have won" not in r.stdout, "--codecs all: %s %s" % (r.stdout, r.stderr))
    prov = json.load(open(os.path.join(store, "t", "zarr.json")))["attributes"]["dc_toolkit"]
    check(prov["pipeline"] == best["codecs"] and prov["portability"] == "dctk" and
          prov["python_packages"] == ["dctk-codecs"], "--codecs all wrote %r" % prov)
    r = subprocess.run([DCTK, "compress_with_optimal", FILE, tmp, "t", "--combo", os.path.join(tmp, "best_t.json"),
                        "--codecs", "everything"], capture_output=True, text=True)
    check(r.returncode == 2 and "--codecs: 'everything'" in r.stderr, "a bad level: " + r.stderr)
    check("dctk_codecs" not in sys.modules, "our package was used")
    finish("compress_portable")


if __name__ == "__main__":
    main()
