#!/usr/bin/python3
"""The default `compress` writes a store that stock readers open (issue 20):
on a real field whose best combo under the bound is dc_toolkit's own dctk.sz
or dctk.ebcc, the store holds the best combo of level numcodecs instead, one
line names the combo that would have won, its ratio and the flag that writes
it, and every array of the store is read here with Debian's numcodecs and a
shard parser of this test's own (zarr_shards.py), without our library, equal
bit for bit to what dc_toolkit reads. Arrays whose pipeline holds a codec
numcodecs 0.11 lacks (pcodec) are skipped with a line: its golden streams test
it. best_t.json names at its top level the pipeline the store holds (the
numcodecs level's best, the sweep's "best combo"), the overall winner beside
it as overall_winner, and the plot and analysis of the best file show the
store's pipeline. --pipeline best_t.json writes the store's pipeline with no
readers line; the winner's own codec list as --pipeline, and
compress_with_optimal --combo best_t.json --codecs all (the winner from the
same sweep, nothing re-run), print who reads it. evaluate_combos --codecs all
names the winner at the top level.

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


def readers_line(out):
    return re.search(r"^t: readers: (.*)$", out, re.M)


def main():
    tmp = tempfile.mkdtemp(prefix="dctk_portable_")
    r = subprocess.run([DCTK, "compress", FILE, "--where-to-write", tmp] + SPACE, capture_output=True, text=True)
    check(r.returncode == 0, "compress exit %d: %s" % (r.returncode, r.stderr))
    best = json.load(open(os.path.join(tmp, "best_t.json")))
    # one meaning of best: the top level is what compress writes (numcodecs), the winner beside it, named so
    win, level = best.get("overall_winner") or {}, best["by_portability"]["numcodecs"]
    check(win.get("portability") == "dctk", "the case no longer has a dctk winner: %r" % win)
    check(best["reader_level"] == "numcodecs" and best["portability"] in ("core", "numcodecs") and
          best["codecs"] == level["codecs"] and best["ratio"] == level["ratio"],
          "best_t.json's top level is not the numcodecs level's best: %s %r" % (best["portability"], best["name"]))
    top = win.get("ratio", 0)
    line = re.search(r"^t: (.*) \(ratio ([0-9.]+), readers: dctk\) would have won; writing the best at level "
                     r"'numcodecs' \(ratio ([0-9.]+)\); --codecs all writes it$", r.stdout, re.M)
    check(line is not None, "no line naming the winner: " + r.stdout)
    if line:
        check(abs(float(line.group(2)) - top) < 1e-3 and abs(float(line.group(3)) - level["ratio"]) < 1e-3,
              "the line's ratios are not the sweep's: " + line.group(0))
        check("dctk." in line.group(1) and line.group(1) == win.get("name"),
              "the line does not name the winner by its readable name %r: %s" % (win.get("name"), line.group(0)))
    summary = re.search(r"^t: best combo (.*); ratio ([0-9.]+),", r.stdout, re.M)
    check(summary and summary.group(1) == best["name"], "the sweep's 'best combo' is not best_t.json's: " + r.stdout)
    said = re.search(r"^t: that is the best combo at reader level 'numcodecs' \(what compress writes\); the overall "
                     r"winner, (.*) \(ratio ([0-9.]+), readers: dctk\), is best_t.json's overall_winner: compress "
                     r"--codecs all writes it$", r.stdout, re.M)
    check(said and said.group(1) == win.get("name") and abs(float(said.group(2)) - top) < 1e-3,
          "the sweep does not name the overall winner as such: " + r.stdout)
    check(level["ratio"] < top and level["portability"] in ("core", "numcodecs"), repr(level))
    check(readers_line(r.stdout) is None, "a numcodecs store with a readers line: " + r.stdout)
    store = os.path.join(tmp, "meccatemp.zarr")
    prov = json.load(open(os.path.join(store, "t", "zarr.json")))["attributes"]["dc_toolkit"]
    check(prov["portability"] == level["portability"] and prov["python_packages"] == [] and
          prov["pipeline"] == best["codecs"] and prov["ser_idx"] == best["ser_idx"], "provenance %r" % prov)
    n = read_all(store, "default")
    check(n >= 4, "only %d arrays read" % n)  # t and its three coordinates

    # the figures of the best file show the pipeline in the store
    r = subprocess.run([DCTK, "plot_compression_errors", FILE, tmp, "t", "--combo", os.path.join(tmp, "best_t.json")],
                       capture_output=True, text=True)
    check(r.returncode == 0 and r.stdout.startswith("t: %s\n" % best["name"]),
          "plot of best_t.json: %s %s" % (r.stdout, r.stderr))
    r = subprocess.run([DCTK, "analyze_clustering", "--where-to-write", tmp, "--var", "t"], capture_output=True,
                       text=True)
    check(r.returncode == 0 and "best combo %s marked with a red diamond" % best["name"] in r.stdout,
          "analyze_clustering marks another combo: %s %s" % (r.stdout, r.stderr))

    # --pipeline best_t.json writes the top level, which numcodecs reads: no readers line
    r = subprocess.run([DCTK, "compress_with_optimal", FILE, tmp, "t", "--pipeline", os.path.join(tmp, "best_t.json")],
                       capture_output=True, text=True)
    prov = json.load(open(os.path.join(store, "t", "zarr.json")))["attributes"]["dc_toolkit"]
    check(r.returncode == 0 and prov["pipeline"] == best["codecs"] and readers_line(r.stdout) is None,
          "--pipeline best_t.json: %r %s %s" % (prov["pipeline"], r.stdout, r.stderr))
    # the winner's codec list as --pipeline: who reads it is said
    listed = os.path.join(tmp, "winner.json")
    json.dump(win["codecs"], open(listed, "w"))
    r = subprocess.run([DCTK, "compress_with_optimal", FILE, tmp, "t", "--pipeline", listed], capture_output=True,
                       text=True)
    said = readers_line(r.stdout)
    check(r.returncode == 0 and said and said.group(1) == "dc_toolkit, or zarr-python with numcodecs and the package "
          "dctk-codecs (level 'dctk'); zarr-python with numcodecs alone cannot open this array",
          "--pipeline of the dctk winner: no readers line: %s %s" % (r.stdout, r.stderr))

    r = subprocess.run([DCTK, "compress_with_optimal", FILE, tmp, "t", "--combo", os.path.join(tmp, "best_t.json"),
                        "--codecs", "all"], capture_output=True, text=True)
    check(r.returncode == 0 and "would have won" not in r.stdout, "--codecs all: %s %s" % (r.stdout, r.stderr))
    check(readers_line(r.stdout) is not None, "--codecs all: no readers line: " + r.stdout)
    prov = json.load(open(os.path.join(store, "t", "zarr.json")))["attributes"]["dc_toolkit"]
    check(prov["pipeline"] == win["codecs"] and prov["portability"] == "dctk" and
          prov["python_packages"] == ["dctk-codecs"], "--codecs all wrote %r" % prov)
    r = subprocess.run([DCTK, "compress_with_optimal", FILE, tmp, "t", "--combo", os.path.join(tmp, "best_t.json"),
                        "--codecs", "everything"], capture_output=True, text=True)
    check(r.returncode == 2 and "--codecs: 'everything'" in r.stderr, "a bad level: " + r.stderr)

    # a sweep for readers of every level names the winner at its top level, with no second line
    other = tempfile.mkdtemp(prefix="dctk_portable_all_")
    r = subprocess.run([DCTK, "evaluate_combos", FILE, "--where-to-write", other, "--codecs", "all"] + SPACE,
                       capture_output=True, text=True)
    every = json.load(open(os.path.join(other, "best_t.json"))) if r.returncode == 0 else {}
    check(every.get("reader_level") == "dctk" and every.get("codecs") == win["codecs"] and
          every["overall_winner"]["codecs"] == win["codecs"] and "overall winner" not in r.stdout,
          "evaluate_combos --codecs all: %s %s" % (r.stdout, r.stderr))
    check("dctk_codecs" not in sys.modules, "our package was used")
    finish("compress_portable")


if __name__ == "__main__":
    main()
