"""The sweep's console is quiet by default (issue 23): no timer table unless
--verbose, and then its columns say which figures are wall seconds and which
are thread-seconds; the first progress line shows no ETA (its rate misleads),
and the last says done. On a real field of libncarg-data, narrow classes.

Run by ctest with DCTK and DCTK_NCARG set.
"""
import os
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


def sweep(tmp, *extra):
    r = subprocess.run([DCTK, "evaluate_combos", SRC, "--where-to-write", tmp, "--compressor-class", "zstd",
                        "--filter-class", "bitround", "--serializer-class", "none", "--eval-data-size-limit", "50KB",
                        "--l1-threshold", "1e-3", *extra], capture_output=True, text=True, timeout=300)
    check(r.returncode == 0, f"sweep {extra}: rc {r.returncode}: {r.stderr[-300:]}")
    return r


with tempfile.TemporaryDirectory() as tmp:
    r = sweep(tmp)
    check("timer" not in r.stderr and "timer" not in r.stdout, f"timer table without --verbose: {r.stderr}")
    lines = [x for x in r.stderr.splitlines() if "combos (" in x]
    check(len(lines) >= 2 and lines[0].endswith("ETA --") and lines[-1].endswith("done"),
          f"progress lines: {lines}")
    r = sweep(tmp, "--verbose")
    table = [x for x in r.stderr.splitlines() if "timer (" in x or "[thread-s]" in x or "[wall s]" in x]
    check(any("sweep: inside codecs [thread-s]" in x for x in table) and any("sweep [wall s]" in x for x in table),
          f"timer table with --verbose: {table}")

if failures:
    sys.exit("test_console_quiet: %d failure(s)" % len(failures))
print("test_console_quiet: OK")
