#!/usr/bin/python3
"""Runs every row of cases.tsv: `dc_toolkit COMMAND INPUT` from this folder
must exit with the given status and print exactly one line on stderr that
names the input and contains the expected text, with no sanitizer report
(this test is also run against the ASan/UBSan build by `make asan`).

Run by ctest with DCTK set."""
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "interop"))
from checks import check, finish  # noqa: E402

DCTK = os.environ["DCTK"]
SANITIZER = ("AddressSanitizer", "LeakSanitizer", "runtime error:", "UndefinedBehaviorSanitizer")
rows = [line.rstrip("\n").split("\t") for line in open(os.path.join(HERE, "cases.tsv"))
        if line.strip() and not line.startswith("#")]
check(len(rows) >= 40, f"only {len(rows)} cases in cases.tsv")
seen = set()
for name, command, rc, expected in rows:
    seen.add(name)
    what = f"{command} {name}"
    check(os.path.exists(os.path.join(HERE, name)), f"{what}: input missing")
    p = subprocess.run([DCTK, command, name], cwd=HERE, capture_output=True, text=True, timeout=60)
    lines = p.stderr.splitlines()
    check(p.returncode == int(rc), f"{what}: exit {p.returncode}, want {rc}; stderr {lines[:3]}")
    check(not any(s in p.stderr for s in SANITIZER), f"{what}: sanitizer report: {p.stderr[:2000]}")
    check(len(lines) == 1, f"{what}: {len(lines)} stderr lines: {lines[:5]}")
    line = lines[0] if lines else ""
    check(name in line, f"{what}: the line does not name the input: {line}")
    check(expected in line, f"{what}: '{expected}' not in: {line}")
inputs = {f for f in os.listdir(HERE) if not f.endswith((".py", ".tsv"))}
check(inputs <= seen, f"inputs without a case: {sorted(inputs - seen)}")
finish(f"bad inputs: {len(rows)} cases")
