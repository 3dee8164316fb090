"""The bookkeeping of the script tests: count checks, keep failures, and end
with the closing line ctest's logs and CI read ('N passed, N failed'); and
the program under test (DCTK) with its runner, and the real data (NCARG)."""
import csv
import os
import sys

DCTK = os.environ.get("DCTK", "dc_toolkit")
NCARG = os.environ.get("DCTK_NCARG", "/usr/share/ncarg/data")

failures = []
checks = 0


def check(cond, msg):
    global checks
    checks += 1
    if not cond:
        failures.append(msg)


def run(*args, code=0, env=None):
    """dc_toolkit with args (each str()'d), checked to exit with code; the
    CompletedProcess (stdout, stderr as text)."""
    import subprocess

    r = subprocess.run([DCTK, *map(str, args)], capture_output=True, text=True,
                       env=None if env is None else {**os.environ, **env})
    check(r.returncode == code, "%s: exit %d, expected %d: %s %s" % (
        " ".join(map(str, args)), r.returncode, code, r.stdout[-1500:], r.stderr[-800:]))
    return r


def finish(label):
    for f in failures[:20]:
        print("FAIL:", f)
    print("%s: %d checks, %d failures" % (label, checks, len(failures)))
    print("%d passed, %d failed" % (checks - len(failures), len(failures)))
    sys.exit(1 if failures else 0)


def rows_by_combo(where, var="t"):
    """Rank 0's results CSV of var in where, as {(comp_idx, filt_idx, ser_idx): row}; a combo recorded
    twice fails a check."""
    with open(os.path.join(where, "config_space_%s_rank0.csv" % var), newline="") as f:
        got = list(csv.DictReader(f))
    keyed = {(r["comp_idx"], r["filt_idx"], r["ser_idx"]): r for r in got}
    check(len(keyed) == len(got), "%s: %d rows for %d combos" % (where, len(got), len(keyed)))
    return keyed


def ncarg_field(path, var):
    """The raw stored values (no mask, no scaling) of a variable of a
    libncarg-data netCDF file, path relative to $DCTK_NCARG."""
    import os

    import netCDF4
    import numpy as np

    root = os.environ.get("DCTK_NCARG", "/usr/share/ncarg/data")
    with netCDF4.Dataset(os.path.join(root, path)) as d:
        v = d.variables[var]
        v.set_auto_maskandscale(False)
        return np.ascontiguousarray(v[...])


def start_held(cmd, tmp, after, phase=""):
    """Start the sweep cmd with DCTK_TEST_HOLD (a test hook of the program):
    it holds after `after` combos of a phase whose name starts with `phase`
    (any phase when empty) until it gets a signal. Returns the process once it
    holds (or has ended), and the path of its stderr. The point where a test
    stops a sweep then does not depend on how fast the machine is."""
    import os
    import subprocess
    import time

    hold, log = os.path.join(tmp, "hold"), os.path.join(tmp, "held.%d.log" % time.monotonic_ns())
    with open(hold, "w") as f:
        f.write("%s\n%d\n" % (phase, after))
    with open(log, "w") as err:
        p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=err, text=True,
                             env={**os.environ, "DCTK_TEST_HOLD": hold})
    while p.poll() is None and "[test hold]" not in open(log).read():
        time.sleep(0.02)
    return p, log
