"""evaluate_combos --requirements on every entry of a real requirements list: the community list of the
compression-recommendations package (its src/compression_recommendations/recommendations.yaml, MPL-2.0, not
shipped here), named by DCTK_REQUIREMENTS_LIST; without it the test says so in one line and is skipped (exit 77,
ctest's SKIP_RETURN_CODE).

The list is read with PyYAML, and each entry's meaning worked out here, independently of src/cli/requirements.c:
an entry's filters all select it, any/all of filters as the words say; its requirements must all hold, any/all
as the words say; a bound of 0 (pointwise absolute or relative, mean absolute or relative) is y == x,
lossless; the earlier names of the mean bounds (mean-pointwise-...) are theirs. For every
entry, its markers (each name its filters accept, cf-short-name, grib-short-name, cf-standard-name, with its
level-kind) are given to evaluate_combos on uv300's U (a small sample) and the run is watched only until the
sweep starts (its "U: sample" line: the gates are accepted by then), then stopped:
  - no run crashes (a signal, or an exit status other than 0 or 2);
  - the markers select as many entries as the filters do ("N entries" on the [requirements] line);
  - an entry some combination of our gates can hold (pointwise absolute/relative bounds, the mean absolute
    bound, data limits, lossless, a missing value) maps: one [requirements] line and the sweep starts; the
    gates it names hold the entry (each leaf: lossless, or a gate at least as tight as the leaf's bound; the mean
    bound held by a pointwise absolute one too; the mean relative one when the program has --mean-rel-error),
    each number is one of the entry's, and the absolute bound is the entry's: "all" the tightest, "any" the
    loosest of its alternatives that are absolute bounds only (an alternative with a bound of 0 is lossless); an
    entry whose every alternative needs a bound of 0 is lossless;
  - any other entry is refused: exit 2, one line on stderr naming a requirement kind of the entry that no gate
    holds, nothing written; a missing value U does not declare may be refused so too, unless the entry is
    lossless (then every value, the sentinel too, comes back).
    DCTK_REQUIREMENTS_LIST=recommendations.yaml test_requirements_real_list.py   (DCTK; DCTK_NCARG)
"""
import collections
import os
import re
import selectors
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import DCTK, NCARG, check, finish  # noqa: E402

LIST = os.environ.get("DCTK_REQUIREMENTS_LIST", "")
if not LIST:
    print("test_requirements_real_list: skipped: no requirements list (set DCTK_REQUIREMENTS_LIST to the "
          "recommendations.yaml of the compression-recommendations package)")
    sys.exit(77)

import yaml  # noqa: E402

DATA = os.path.join(NCARG, "cdf", "uv300.nc")
U_DECLARES = {-999.0}  # uv300's U: _FillValue -999 (a missing value it declares is its mask)
ABS, REL = "max-pointwise-absolute-error-bound", "max-pointwise-relative-error-bound"
MEAN, MEAN_REL = "mean-absolute-error-bound", "mean-relative-error-bound"
OLD_NAMES = {"mean-pointwise-absolute-error-bound": MEAN, "mean-pointwise-relative-error-bound": MEAN_REL}
GATED = {ABS, REL, MEAN, "data-limits", "lossless", "missing-value"}
# the mean relative bound has a gate once the program has --mean-rel-error (sum |y - x| <= e sum |x|)
if "--mean-rel-error" in subprocess.run([DCTK, "evaluate_combos", "--help"], capture_output=True, text=True).stdout:
    GATED.add(MEAN_REL)
NAMES = ("cf-short-name", "grib-short-name", "cf-standard-name")
GUARD = 120 * float(os.environ.get("DCTK_TEST_TIMEOUT_SCALE") or 1)  # seconds: a guard against a hang only



def current_names(node):
    """The package's earlier releases named the mean bounds mean-pointwise-...: the same requirements."""
    if isinstance(node, dict):
        return {k: OLD_NAMES.get(v, v) if k == "kind" else current_names(v) for k, v in node.items()}
    return [current_names(k) for k in node] if isinstance(node, list) else node


with open(LIST) as f:
    entries = current_names(yaml.safe_load(f)["recommendations"])
check(len(entries) > 0, "%s: no entries" % LIST)


# --- the entries' meaning, from the YAML -------------------------------------------------------------------

def selects(flt, markers):
    kind = flt["kind"]
    if kind in ("any", "all"):
        hits = [selects(k, markers) for k in flt.get("filters", [])]
        return any(hits) if kind == "any" else all(hits)
    return (kind, str(flt["value"])) in markers


def entry_selected(entry, markers):
    return all(selects(f, markers) for f in entry["filters"])


def leaves(node, key):
    if node["kind"] in ("any", "all"):
        for k in node.get(key, []):
            yield from leaves(k, key)
    else:
        yield node


def marker_sets(entry):
    """Each name an entry's filters accept, with the other (leaf) filters it needs: a set of (kind, value)."""
    fixed = {(f["kind"], str(f["value"])) for f in entry["filters"] if f["kind"] not in ("any", "all")}
    names = [(l["kind"], str(l["value"])) for f in entry["filters"] if f["kind"] in ("any", "all")
             for l in leaves(f, "filters") if l["kind"] in NAMES]
    return [fixed | {n} for n in dict.fromkeys(names)] or [fixed]


def zero(leaf):
    return leaf["kind"] in (ABS, REL, MEAN, MEAN_REL) and float(leaf["value"]) == 0


def gateable(r):
    if r["kind"] == "all":
        return all(gateable(k) for k in r.get("requirements", []))
    if r["kind"] == "any":
        return any(gateable(k) for k in r.get("requirements", []))
    return r["kind"] in GATED or zero(r)


def needs_lossless(r):
    """Every way to meet r is y == x."""
    if r["kind"] == "all":
        return any(needs_lossless(k) for k in r.get("requirements", []))
    if r["kind"] == "any":
        alts = [k for k in r.get("requirements", []) if gateable(k)]
        return bool(alts) and all(needs_lossless(k) for k in alts)
    return r["kind"] == "lossless" or zero(r)


def abs_only(r):
    if r["kind"] in ("any", "all"):
        return all(abs_only(k) for k in r.get("requirements", []))
    return r["kind"] == ABS and not zero(r)


def abs_bound(r):
    """The absolute bound r asks for (None: none): all the tightest, any the loosest of its absolute-only
    alternatives, or of its one alternative a gate can hold."""
    if r["kind"] == "all":
        got = [b for b in map(abs_bound, r.get("requirements", [])) if b is not None]
        return min(got) if got else None
    if r["kind"] == "any":
        alts = [k for k in r.get("requirements", []) if gateable(k)]
        pure = [abs_bound(k) for k in alts if abs_only(k)]
        if pure:
            return max(pure)
        return abs_bound(alts[0]) if len(alts) == 1 else None
    return float(r["value"]) if r["kind"] == ABS and not zero(r) else None


def holds(r, g):
    """Do the gates g (parsed from the [requirements] line) hold the requirement r?"""
    if r["kind"] == "all":
        return all(holds(k, g) for k in r.get("requirements", []))
    if r["kind"] == "any":
        return any(holds(k, g) for k in r.get("requirements", []))
    kind = r["kind"]
    if kind == "data-limits":
        return (r.get("minimum") is None or g.get("pmin", -float("inf")) >= float(r["minimum"])) and \
               (r.get("maximum") is None or g.get("pmax", float("inf")) <= float(r["maximum"]))
    if g.get("lossless"):
        return True
    tight = lambda key: key in g and g[key] <= float(r["value"])  # noqa: E731
    if kind == ABS:
        return tight("abs")
    if kind == REL:
        return tight("rel")
    if kind == MEAN:
        return tight("mean") or tight("abs")
    if kind == MEAN_REL:
        return tight("mean_rel")
    if kind == "missing-value":
        return g.get("missing") == float(r["value"])
    return False


def values(entry, kind, key="value"):
    return {float(l[key]) for r in entry["requirements"] for l in leaves(r, "requirements")
            if l["kind"] == kind and l.get(key) is not None}


# --- a run, watched until the sweep starts -----------------------------------------------------------------

def parse_gates(line):
    g = {}
    pats = {"abs": r"max abs error (\S+) \(--abs-error\)", "rel": r"max pointwise relative error (\S+) \(",
            "mean": r"mean abs error (\S+) \(", "mean_rel": r"mean relative error (\S+) \(",
            "pmin": r"phys-min ([^,;\s]+)", "pmax": r"phys-max ([^,;\s]+)",
            "missing": r"the missing value (\S+) \("}
    for key, pat in pats.items():
        m = re.search(pat, line)
        if m:
            g[key] = float(m.group(1))
    if "lossless (--without-lossy)" in line:
        g["lossless"] = True
    m = re.search(r": (\d+) entr(?:y|ies) of ", line)
    g["n"] = int(m.group(1)) if m else None
    return g


def watch(markers, where):
    """exit status (None: stopped by us once the sweep started), stdout lines, stderr lines."""
    cmd = ["stdbuf", "-oL", DCTK, "evaluate_combos", DATA, "--field-to-compress", "U", "--requirements", markers,
           "--requirements-list", LIST, "--where-to-write", where, "--eval-data-size-limit", "20KB"]
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out_fd, err_fd, started, t0 = p.stdout.fileno(), p.stderr.fileno(), False, time.monotonic()
    got = {out_fd: [b"", []], err_fd: [b"", []]}  # fd: [partial line, lines]
    sel = selectors.DefaultSelector()
    for fd in got:
        sel.register(fd, selectors.EVENT_READ)
    while sel.get_map() and not started and time.monotonic() - t0 < GUARD:
        for key, _ in sel.select(timeout=1):
            chunk = os.read(key.fd, 65536)
            if not chunk:
                sel.unregister(key.fd)
                continue
            buf = got[key.fd]
            *lines, buf[0] = (buf[0] + chunk).split(b"\n")
            buf[1] += [l.decode(errors="replace") for l in lines]
            started = started or (key.fd == err_fd and any(l.startswith("U: sample ") for l in buf[1]))
    if p.poll() is None:
        p.send_signal(signal.SIGKILL if started else signal.SIGABRT)
    rc = p.wait()
    for fd, buf in got.items():
        if buf[0]:
            buf[1].append(buf[0].decode(errors="replace"))
    p.stdout.close()
    p.stderr.close()
    out, err = got[out_fd][1], got[err_fd][1]
    return (None if started and rc == -signal.SIGKILL else rc), out, err


tmp = tempfile.mkdtemp(prefix="dctk_requirements_real_")
table = collections.Counter()
for i, entry in enumerate(entries):
    for n_run, mset in enumerate(marker_sets(entry)):
        markers = ",".join("%s=%s" % kv for kv in sorted(mset, key=lambda kv: (kv[0] == "level-kind", kv)))
        what = "entry %d (%s)" % (i, markers)
        where = os.path.join(tmp, "e%d_%d" % (i, n_run))
        rc, out, err = watch(markers, where)
        req = [l for l in out if l.startswith("[requirements] ")]
        check(rc is None or rc in (0, 2), "%s: crashed or failed: exit %s, stderr %s" % (what, rc, err[-3:]))
        n_sel = sum(entry_selected(e, mset) for e in entries)
        must_lossless = any(needs_lossless(r) for r in entry["requirements"])
        if gateable({"kind": "all", "requirements": entry["requirements"]}) and req:
            g = parse_gates(req[0])
            check(len(req) == 1 and rc in (None, 0), "%s: mapped, but the sweep did not start: exit %s, %s" %
                  (what, rc, (req + err)[-3:]))
            check(g["n"] == n_sel, "%s: %s entries selected, the filters select %d" % (what, g["n"], n_sel))
            if n_sel != 1:
                continue
            check(all(holds(r, g) for r in entry["requirements"]),
                  "%s: the gates %s do not hold the entry %s" % (what, g, entry["requirements"]))
            for key, kind, field in (("abs", ABS, "value"), ("rel", REL, "value"), ("mean", MEAN, "value"),
                                     ("mean_rel", MEAN_REL, "value"), ("pmin", "data-limits", "minimum"),
                                     ("pmax", "data-limits", "maximum")):
                allowed = values(entry, kind, field)
                check(key not in g or g[key] in allowed,
                      "%s: %s %s is none of the entry's %s" % (what, key, g.get(key), sorted(allowed)))
            want = min([b for b in map(abs_bound, entry["requirements"]) if b is not None], default=None)
            check(must_lossless or want is None or g.get("abs") == want,
                  "%s: absolute bound %s, the entry's is %s" % (what, g.get("abs"), want))
            check(not must_lossless or g.get("lossless"), "%s: the entry is lossless (a bound of 0), the gates %s"
                  % (what, g))
            if n_run == 0:
                last = (err or [""])[-1].split(": ", 1)[-1][:100]
                then = "" if rc in (None, 0) else "; then exit %s: %s" % (rc, last)
                table["mapped: " + ", ".join(sorted(k for k in g if k != "n")) + then] += 1
            continue
        # refused (or should have been)
        line = err[0] if len(err) == 1 else ""
        named = [k for k in {l["kind"] for r in entry["requirements"] for l in leaves(r, "requirements")}
                 if k in line or k.replace("-", " ") in line]
        kinds_ok = bool(named) and all(k not in GATED for k in named)
        missing = [k for k in named if k == "missing-value"] and not must_lossless and \
            values(entry, "missing-value") - U_DECLARES
        check(rc == 2 and not req and len(err) == 1 and (kinds_ok or missing),
              "%s: expected %s; exit %s, stdout %s, stderr %s" % (
                  what, "a refusal naming a kind no gate holds" if not req else "the entry mapped, the sweep started",
                  rc, out[-2:], err[-3:]))
        check(not os.path.exists(where) or not os.listdir(where), "%s: refused, but wrote %s" % (what, where))
        if n_run == 0:
            table["refused: " + (", ".join(sorted(named)) or line[:80])] += 1

print("%s: %d entries" % (LIST, len(entries)))
for k, n in sorted(table.items()):
    print("  %4d  %s" % (n, k))
if not __import__("checks").failures:
    shutil.rmtree(tmp, ignore_errors=True)
finish("test_requirements_real_list")
