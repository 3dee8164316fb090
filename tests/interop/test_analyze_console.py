"""analyze_clustering tells the truth (issue 23), on a real 24-combo sweep of
meccatemp's t: k suits the number of kept points (not 9 clusters for 12
points), the winner of best_t.json is marked and named, the threshold is the
number best_t.json holds (never a placeholder), and without best_t.json the
console says there is neither threshold nor winner. A sweep with
--linf-threshold: each panel draws its bound (the L1 threshold, the L2 and Linf
gates of best_t.json) where its scale puts it, the three error axes are all
logarithmic or all linear, and every point sits at its CSV row's error.

Run by ctest with DCTK and DCTK_NCARG set.
"""
import csv
import json
import math
import os
import re
import subprocess
import sys
import tempfile

DCTK = os.environ["DCTK"]
SRC = os.path.join(os.environ.get("DCTK_NCARG", "/usr/share/ncarg/data"), "cdf", "meccatemp.cdf")
failures = []


def check(ok, what):
    if not ok:
        failures.append(what)
        print("FAIL:", what)


def run(*args):
    return subprocess.run([DCTK, *args], capture_output=True, text=True, timeout=300)


with tempfile.TemporaryDirectory() as tmp:
    r = run("evaluate_combos", SRC, "--where-to-write", tmp, "--eval-data-size-limit", "100KB", "--compressor-class",
            "lz4", "--filter-class", "bitround", "--serializer-class", "none", "--override-existing-l1-error", "1e-4")
    check(r.returncode == 0, f"sweep: {r.stderr}")
    best = json.load(open(os.path.join(tmp, "best_t.json")))
    r = run("analyze_clustering", "--where-to-write", tmp, "--var", "t")
    check(r.returncode == 0 and "best_VAR" not in r.stdout, f"analyze: {r.stdout} {r.stderr}")
    m = re.search(r"(\d+) combos: (\d+) kept[a-z0-9, ]*; relative L1 threshold (\S+?),? "
                  r"(?:L2 \S+ and Linf \S+ gates )?from ", r.stdout)
    check(bool(m) and float(m.group(3)) == float("%.3g" % best["threshold"]), f"threshold line: {r.stdout}")
    # the winner by its readable name (issue 23, item 3), the one best_t.json holds, not by indices
    check("best combo %s marked with a red diamond" % best["name"] in r.stdout and "comp_idx" not in r.stdout
          and re.search(r"lz4\(acceleration=\d+\) \| bitround\(keepbits=\d+\) \| -$", best["name"]),
          f"winner line: {r.stdout}")
    html = open(os.path.join(tmp, "analyze_clustering_t.html")).read()
    data = json.loads(re.search(r'<script type="application/json" id="dctk-data">(.*?)</script>', html, re.S).group(1)
                      .replace("\\/", "/")) if '<script type="application/json" id="dctk-data">' in html else None
    if data:
        # the plotted points are the rows measured on the whole sample (status kept or rejected in the
        # CSV, read here): the adaptive search's pruned rows are counted, never drawn
        with open(os.path.join(tmp, "config_space_t_rank0.csv"), newline="") as f:
            rows = {(int(x["comp_idx"]), int(x["filt_idx"]), int(x["ser_idx"])): x for x in csv.DictReader(f)}
        pruned = [k for k, x in rows.items() if x["status"] == "pruned"]
        check(pruned, "the sweep pruned no row: nothing to leave out of the figure")
        for p in data["panels"]:
            drawn = {tuple(data["rows"][q[2]][:3]) for q in p["pts"]}
            measured = {k for k, x in rows.items() if x["status"] in ("kept", "rejected")}
            check(drawn == measured, f"{p['label']}: drawn {sorted(drawn)}, measured {sorted(measured)}")
        counts = {st: sum(x["status"] == st for x in rows.values()) for st in ("kept", "pruned", "left out")}
        said = ", ".join(f"{n} {st}" for st, n in counts.items() if n or st == "kept")
        svg = open(os.path.join(tmp, "analyze_clustering_t.svg")).read()
        check(f"combos: {said}" in r.stdout, f"console counts {said}: {r.stdout}")
        check("over threshold" not in html and "over threshold" not in r.stdout, "'over threshold' said")
        check(f"combos: {said}. Only kept and rejected combos are drawn" in html and "<svg" in svg
              and "only the kept and rejected combos are drawn" in r.stdout, "what is not drawn, said")
        kept = int(m.group(2)) if m else 0
        for p in data["panels"]:
            check(1 <= p["k"] <= max(2, int(math.sqrt(kept / 2))), f"{p['label']}: k {p['k']} for {kept} points")
            check(p["best"] >= 0, f"{p['label']}: winner marked")
    else:
        check('"best":' in html and '"k":2' in html, "the page's data: winner and k")
    # --linf-threshold given to the sweep is drawn in the Linf panel, the L2 gate in the L2 panel, at the height
    # the panel's scale gives; the three error axes are all logarithmic or all linear (issue 33 item 7); each
    # drawn point sits where its CSV row's ratio and error map to
    r = run("evaluate_combos", SRC, "--where-to-write", tmp, "--eval-data-size-limit", "100KB", "--compressor-class",
            "lz4", "--filter-class", "bitround", "--serializer-class", "none", "--override-existing-l1-error", "1e-4",
            "--linf-threshold", "4e-4", "--search", "exhaustive")
    check(r.returncode == 0, f"sweep with --linf-threshold: {r.stderr[-300:]}")
    gates = json.load(open(os.path.join(tmp, "best_t.json")))["gates"]
    check(gates["linf"] == 4e-4, f"best_t.json gates: {gates}")
    r = run("analyze_clustering", "--where-to-write", tmp, "--var", "t")
    check("Linf 0.0004 gates from" in r.stdout, f"the gates said: {r.stdout}")
    html = open(os.path.join(tmp, "analyze_clustering_t.html")).read()
    data = json.loads(re.search(r'<script type="application/json" id="dctk-data">(.*?)</script>', html, re.S).group(1)
                      .replace("\\/", "/"))
    with open(os.path.join(tmp, "config_space_t_rank0.csv"), newline="") as f:
        rows = {(int(x["comp_idx"]), int(x["filt_idx"]), int(x["ser_idx"])): x for x in csv.DictReader(f)}
    logs = {p["axes"]["ylog"] for p in data["panels"]}
    check(len(logs) == 1, f"the error axes: {[(p['label'], p['axes']['ylog']) for p in data['panels']]}")

    def py(ax, v):
        if ax["ylog"]:
            f = (math.log10(v) - math.log10(ax["ymin"])) / (math.log10(ax["ymax"]) - math.log10(ax["ymin"])) if v > 0 else 0
        else:
            f = (v - ax["ymin"]) / (ax["ymax"] - ax["ymin"])
        return ax["y"] + ax["h"] - f * ax["h"]

    for p, col, bound in zip(data["panels"], ("l1_rel", "l2_rel", "linf_rel"), (best["threshold"], gates["l2"], 4e-4)):
        ax = p["axes"]
        check(p["bound"] is not None and math.isclose(p["bound"], bound, rel_tol=1e-9) and
              abs(p["bound_py"] - py(ax, bound)) < 0.02 and ax["y"] <= p["bound_py"] <= ax["y"] + ax["h"],
              f"{p['label']}: bound {p['bound']} at {p['bound_py']}, expected {bound} at {py(ax, bound)}")
        off = [q for q in p["pts"] if abs(q[1] - py(ax, float(rows[tuple(data["rows"][q[2]][:3])][col]))) > 0.02]
        check(p["pts"] and not off, f"{p['label']}: points off their rows' errors: {off[:3]}")
    os.remove(os.path.join(tmp, "best_t.json"))
    r = run("analyze_clustering", "--where-to-write", tmp, "--var", "t")
    check(r.returncode == 0 and "no threshold and no winner marked" in r.stdout and "red diamond" not in r.stdout,
          f"without best_t.json: {r.stdout}")

if failures:
    sys.exit("test_analyze_console: %d failure(s)" % len(failures))
print("test_analyze_console: OK")
