"""Our EBCC streams ("ebcc_filter") read by the reference decoder.

Needs a build of spcl/EBCC's library (see make_golden_ebcc.py), named by
EBCC_REF_LIB; without one the test says so in one line and is skipped (exit
77, ctest's SKIP_RETURN_CODE). For every golden input (real libncarg-data
fields) and the Python tool's arglist, we encode through dctk_codec_tool; the
reference's ebcc_decode must give back exactly as many values, each within
max_error_target of the input, and exactly the values our decoder gives.
The reference's own streams of the same inputs are decoded both ways too, as
a check that the two decoders are one (the golden test does it offline).
"""
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import check, finish  # noqa: E402

LIB = os.environ.get("EBCC_REF_LIB", "")
if not LIB or not os.path.exists(LIB):
    print("test_ebcc_reference: skipped: no reference EBCC build (set EBCC_REF_LIB to its libh5z_ebcc.so)")
    sys.exit(77)

from ebcc_ref import Ref  # noqa: E402

TOOL = os.environ["DCTK_CODEC_TOOL"]
GOLDEN = os.path.join(os.environ["DCTK_SRC"], "tests", "golden", "ebcc")
TMP = tempfile.mkdtemp(prefix="dctk-ebcc-")
os.environ["EBCC_LOG_LEVEL"] = "4"


def tool(mode, obj, shape, data):
    src, dst = os.path.join(TMP, "in.bin"), os.path.join(TMP, "out.bin")
    with open(src, "wb") as f:
        f.write(data)
    r = subprocess.run([TOOL, mode, json.dumps(obj), "float32", ",".join(map(str, shape)), src, dst],
                       capture_output=True, text=True)
    if r.returncode:
        return r.returncode, r.stderr.strip()
    with open(dst, "rb") as f:
        return 0, f.read()


def main():
    ref = Ref(LIB)
    with open(os.path.join(GOLDEN, "manifest.json")) as f:
        cases = json.load(f)["cases"]
    written = 0
    for c in cases:
        name, shape, bound = c["name"], c["shape"], c["max_error_target"]
        x = np.fromfile(os.path.join(GOLDEN, c["input"]), "<f4")
        obj = {"name": "any-numcodecs.array-bytes", "configuration": {"id": "ebcc_filter", "arglist": c["arglist"]}}
        rc, ours = tool("encode", obj, shape, x.tobytes())
        if rc:
            check("finer than" in ours, "%s: encode failed: %s" % (name, ours))
            continue
        written += 1
        theirs = ref.decode(ours)
        check(theirs is not None and theirs.size == x.size, "%s: the reference cannot decode our stream" % name)
        if theirs is None or theirs.size != x.size:
            continue
        err = float(np.max(np.abs(theirs.astype("f8") - x.astype("f8"))))
        check(err <= bound, "%s: the reference decodes ours with error %g > %g" % (name, err, bound))
        rc, back = tool("decode", obj, shape, ours)
        check(rc == 0 and back == theirs.tobytes(), "%s: our decoder and the reference's disagree on our stream" % name)
        rc, back = tool("decode", obj, shape, ref.encode(x, c["arglist"]))
        check(rc == 0 and back == ref.decode(ref.encode(x, c["arglist"])).tobytes(),
              "%s: our decoder and the reference's disagree on a fresh reference stream" % name)
    check(written >= 15, "only %d of %d inputs written within the bound" % (written, len(cases)))
    finish("ebcc reference")


main()
