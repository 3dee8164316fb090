"""Helpers shared by the dataset-reader interop tests (test_io_*.py).

They run our readers through dctk_dump_tool (DCTK_DUMP_TOOL) and dc_toolkit
(DCTK), and collect failures so that one run reports all of them.
"""
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

DUMP = os.environ["DCTK_DUMP_TOOL"]
DCTK = os.environ["DCTK"]
NCARG = os.environ.get("DCTK_NCARG", "/usr/share/ncarg/data")
TMP = tempfile.mkdtemp(prefix="dctk-io-")


class Checker:
    def __init__(self):
        self.checks = 0
        self.failures = []

    def check(self, ok, what):
        self.checks += 1
        if not ok:
            self.failures.append(what)
            print("FAIL:", what, file=sys.stderr)

    def finish(self, name):
        print(f"{name}: {self.checks} checks, {len(self.failures)} failures")
        if self.checks == 0:
            print(f"{name}: nothing was checked", file=sys.stderr)
            sys.exit(1)
        sys.exit(1 if self.failures else 0)


def listing(path):
    """Our view of a dataset: {"format", "attrs", "vars": [...]}."""
    r = subprocess.run([DUMP, path], capture_output=True, text=True, timeout=60)
    if r.returncode != 0:
        raise RuntimeError(f"dump_tool list {path}: {r.stderr.strip()}")
    return json.loads(r.stdout)


def read_all(path):
    """Every variable, decoded, in one run: (listing, {name: array})."""
    d = tempfile.mkdtemp(dir=TMP)
    r = subprocess.run([DUMP, path, "--all", d], capture_output=True, text=True, timeout=60)
    if r.returncode != 0:
        raise RuntimeError(f"dump_tool --all {path}: {r.stderr.strip()}")
    info = json.loads(r.stdout)
    values = {}
    for i, v in enumerate(info["vars"]):
        f = os.path.join(d, f"{i}.bin")
        values[v["name"]] = np.fromfile(f, dtype=np.dtype(v["dtype"])).reshape(v["shape"])
        os.remove(f)
    return info, values


def read(path, var, start=None, count=None):
    """Decoded values of var (or a hyperslab) as a numpy array, and the var's JSON."""
    out = os.path.join(TMP, "values.bin")
    args = [DUMP, path, var, out]
    if start is not None:
        args += [",".join(map(str, start)), ",".join(map(str, count))]
    r = subprocess.run(args, capture_output=True, text=True, timeout=60)
    if r.returncode != 0:
        raise RuntimeError(f"dump_tool {path} {var}: {r.stderr.strip()}")
    meta = json.loads(r.stdout)
    data = np.fromfile(out, dtype=np.dtype(meta["dtype"])).reshape(meta["shape"])
    return data, meta


def run_fail(args):
    """Run a command expected to fail: (returncode, stderr lines)."""
    r = subprocess.run(args, capture_output=True, text=True, timeout=60)
    return r.returncode, [l for l in r.stderr.splitlines() if l.strip()]


def ulp_equal(a, b, max_ulp=1):
    """Same shape, NaN at the same places, other values within max_ulp ulps
    in a's float type (bit-identical for max_ulp=0)."""
    a = np.asarray(a)
    b = np.asarray(b).astype(a.dtype) if a.dtype.kind == "f" else np.asarray(b)
    if a.shape != b.shape:
        return False, f"shape {a.shape} != {b.shape}"
    if a.dtype.kind != "f":
        return bool(np.array_equal(a, b)), "integer values differ"
    na, nb = np.isnan(a), np.isnan(b)
    if not np.array_equal(na, nb):
        return False, f"NaN positions differ ({int(na.sum())} vs {int(nb.sum())} NaN)"
    ok = ~na
    x, y = a[ok], b[ok]
    if max_ulp == 0:
        return bool(np.array_equal(x, y)), "values not bit-identical"
    # one ulp of the larger magnitude, in a's type
    ulp = np.spacing(np.maximum(np.abs(x), np.abs(y)).astype(a.dtype))
    with np.errstate(invalid="ignore"):
        diff = np.abs(x.astype(np.float64) - y.astype(np.float64))
    bad = diff > max_ulp * ulp.astype(np.float64)
    return not bool(bad.any()), f"{int(bad.sum())} values differ by more than {max_ulp} ulp"
