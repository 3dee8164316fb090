#!/usr/bin/python3
"""compress --vars "" (or ",") names no field: refused with a line, exit 2,
nothing written (issue 37, finding 9), on the real file fice.nc."""
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import check, finish  # noqa: E402

DCTK = os.environ["DCTK"]
FICE = os.path.join(os.environ.get("DCTK_NCARG", "/usr/share/ncarg/data"), "cdf", "fice.nc")
tmp = tempfile.mkdtemp(prefix="dctk_vars_empty_")
for arg in ("", ",", " , "):
    out = os.path.join(tmp, "out%d" % len(arg))
    r = subprocess.run([DCTK, "compress", FICE, out, "--vars", arg], capture_output=True, text=True)
    check(r.returncode == 2, "--vars %r exited %d: %s" % (arg, r.returncode, r.stdout + r.stderr))
    check("--vars" in r.stderr and "names no field" in r.stderr, "no line naming --vars: " + r.stderr)
    left = os.listdir(out) if os.path.exists(out) else []
    check(not left, "--vars %r wrote %r" % (arg, left))
r = subprocess.run([DCTK, "compress", FICE, os.path.join(tmp, "named"), "--vars", "nosuchfield"],
                   capture_output=True, text=True)
check(r.returncode != 0, "--vars naming a missing field exited 0")
finish("compress --vars empty")
