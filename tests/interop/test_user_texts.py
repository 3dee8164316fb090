#!/usr/bin/python3
"""The smaller texts a user reads say what the program does (issue 33 item 7), each read as
printed:
  - evaluate_combos --help: the sample is not "evenly spaced along the leading dimension" (the
    sampler takes time steps and levels, at least 3 of each), not every combo is evaluated on it
    (the adaptive search screens on parts), and the threshold flag it names is --l1-threshold
    (the Python tool's), not only its earlier alias."""
import os
import subprocess
import sys

DCTK = os.environ["DCTK"]
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import check, finish  # noqa: E402


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
finish("test_user_texts")
