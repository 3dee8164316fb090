#!/usr/bin/python3
"""PCodec encode time, one build against another: bench/pcodec_speed.py OLD_BUILD NEW_BUILD

For chunks of real fields (the first 6,144 values, 24 KiB of float32: the
production chunk of bench/search.py; and 262,144 values, 1 MiB, where the
field has them: trinidad only) and every
PCodec configuration of the default space (levels 0, 4, 8, 12, delta orders
up to 0, 3, 7), dctk_bench_filters of each build times encode and decode (the
best single call over at least 3 runs and 0.2 s) and gives the stream's size.
The builds are run alternately, three times each, and the best of each kept,
so a slow minute of the shared machine falls on both. Prints per chunk and
level the encode time of each build summed over the three orders, their
ratio, and whether every stream has the same size in both (the change under
test must not change the bytes)."""
import json
import os
import subprocess
import sys
import tempfile

import netCDF4
import numpy as np

old, new = sys.argv[1:3]
D = "/usr/share/ncarg/data/"
FIELDS = [("cdf/meccatemp.cdf", "t"), ("nug/HSURF_regional_model_0.11deg.nc", "HSURF"), ("cdf/pop.nc", "t"),
          ("cdf/trinidad.nc", "data")]
SIZES = [6144, 262144]
LEVELS, ORDERS = (0, 4, 8, 12), (0, 3, 7)
CODECS = [{"name": "numcodecs.pcodec", "configuration": {
    "level": lv, "mode_spec": "auto", "delta_spec": "try_consecutive", "delta_encoding_order": k,
    "paging_spec": "equal_pages_up_to", "equal_pages_up_to": 262144}} for lv in LEVELS for k in ORDERS]
tmp = tempfile.mkdtemp(prefix="dctk_pco_speed_")


def times(build, raw, n):
    out = subprocess.run([os.path.join(build, "tests", "dctk_bench_filters"), raw, "<f4", str(n), "0.2"],
                         input="".join(json.dumps(c) + "\n" for c in CODECS), capture_output=True, text=True,
                         check=True).stdout.split("\n")
    return [tuple(float(x) for x in line.split()) for line in out if line.strip()]


print("| field | values | level | encode old [ms] | encode new [ms] | new / old | same bytes |")
print("|---|---|---|---|---|---|---|")
for path, var in FIELDS:
    with netCDF4.Dataset(D + path) as ds:
        x = np.ma.filled(ds[var][:].astype("<f4"), np.nan).ravel()
    for n in SIZES:
        if x.size < n:
            continue
        raw = os.path.join(tmp, "%s_%d.raw" % (var, n))
        x[:n].tofile(raw)
        best = {old: None, new: None}
        for _ in range(3):
            for b in (old, new):
                t = times(b, raw, n)
                best[b] = t if best[b] is None else [(min(p[0], q[0]), min(p[1], q[1]), q[2])
                                                     for p, q in zip(best[b], t)]
        for li, lv in enumerate(LEVELS):
            rows = range(li * len(ORDERS), (li + 1) * len(ORDERS))
            eo = sum(best[old][j][0] for j in rows)
            en = sum(best[new][j][0] for j in rows)
            same = all(best[old][j][2] == best[new][j][2] for j in rows)
            print("| %s %s | %d | %d | %.3f | %.3f | %.2f | %s |" % (os.path.basename(path), var, n, lv, 1e3 * eo,
                                                                  1e3 * en, en / eo, "yes" if same else "NO"),
                  flush=True)
