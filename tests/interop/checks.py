"""The bookkeeping of the script tests: count checks, keep failures, and end
with the closing line ctest's logs and CI read ('N passed, N failed')."""
import sys

failures = []
checks = 0


def check(cond, msg):
    global checks
    checks += 1
    if not cond:
        failures.append(msg)


def finish(label):
    for f in failures[:20]:
        print("FAIL:", f)
    print("%s: %d checks, %d failures" % (label, checks, len(failures)))
    print("%d passed, %d failed" % (checks - len(failures), len(failures)))
    sys.exit(1 if failures else 0)


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
