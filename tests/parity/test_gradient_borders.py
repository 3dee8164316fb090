#!/usr/bin/python3
"""The gradient gate's metric as the Python dc_toolkit computes it (issue 32): over every neighbour pair
of the sample, those straddling two inner chunks included (theirs differences the whole decoded sample;
ours measured each chunk alone and left the pairs across its borders out).

On fice of cdf/fice.nc (120 x 49 x 100, no missing value), swept in chunks of [1, 13, 100] (so 3
borders cut each level's 49 latitudes), with BitRound filters and zfpy serializers and no compressor:
for every row that ran, numpy decodes the same sample (numcodecs' BitRound on the whole field, zfpy
chunk by chunk on the chunks the sweep used, edges padded as dc_toolkit pads them) and computes the
gradient's relative L1 over the whole decoded sample (metrics_ref.gradient_rel, the gates' reference);
the row's gradient_rel equals it within 1e-9, and for most rows differs from the same sum over the
pairs inside chunks only, so the check would fail without the border pairs.
"""
import csv
import json
import os
import shutil
import sys
import tempfile

import netCDF4
import numcodecs
import numpy as np
from numcodecs.zfpy import ZFPY

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "interop"))
import checks  # noqa: E402
from checks import check, finish, run  # noqa: E402
from metrics_ref import gradient_rel  # noqa: E402
from pipeline_ref import chunks, zfp_folded  # noqa: E402

NCARG = os.environ.get("DCTK_NCARG", "/usr/share/ncarg/data")
FILE = os.path.join(NCARG, "cdf", "fice.nc")
VAR = "fice"


def decoded(x, chunk, row):
    y = x
    if row["filter"]:
        k = json.loads(row["filter"])["configuration"]["keepbits"]
        y = np.frombuffer(bytes(numcodecs.BitRound(keepbits=k).encode(x.copy())), dtype=x.dtype).reshape(x.shape)
    if not row["serializer"]:
        return y
    c = json.loads(row["serializer"])["configuration"]
    zfp = ZFPY(**{k: c[k] for k in ("mode", "tolerance", "rate", "precision")})
    out = np.empty_like(y)
    grid = [-(-s // n) for s, n in zip(y.shape, chunk)]
    for (block, valid), k in zip(chunks(y, chunk), np.ndindex(*grid)):
        back = np.asarray(zfp.decode(zfp.encode(zfp_folded(block)))).reshape(block.shape)
        at = tuple(slice(i * n, i * n + v.stop) for i, n, v in zip(k, chunk, valid))
        out[at] = back[valid]
    return out


def inside_chunks(x, y, chunk):
    """The same sum over the pairs inside each chunk only (what the sweep measured before)."""
    num = den = 0.0
    grid = [-(-s // n) for s, n in zip(x.shape, chunk)]
    for k in np.ndindex(*grid):
        at = tuple(slice(i * n, (i + 1) * n) for i, n in zip(k, chunk))
        for ax in (-1, -2):
            dx, dy = np.diff(x[at].astype(np.float64), axis=ax), np.diff(y[at].astype(np.float64), axis=ax)
            ok = np.isfinite(dx)
            den += np.abs(dx[ok]).sum()
            num += np.abs(dy[ok] - dx[ok]).sum()
    return num / den if num else 0.0


def main():
    tmp = tempfile.mkdtemp(prefix="dctk_grad_borders_")
    try:
        with netCDF4.Dataset(FILE) as d:
            x = np.ma.filled(d[VAR][:].astype("<f4"), np.nan)
        check(np.isfinite(x).all(), "fice holds missing values: the reference assumes none")
        run("evaluate_combos", FILE, "--where-to-write", tmp, "--field-to-compress", VAR, "--l1-threshold", "0.05",
            "--gradient-gate", "--search", "exhaustive", "--serializer-class", "zfpy,none", "--filter-class",
            "none,bitround", "--compressor-class", "none", "--inner-chunk-mib", "0.005", "--threads-per-rank", "2")
        with open(os.path.join(tmp, "sweep_state_%s.json" % VAR)) as f:
            chunk = json.load(f)["inner_chunk_shape"]
        with open(os.path.join(tmp, "best_%s.json" % VAR)) as f:
            check(json.load(f)["sample"]["shape"] == list(x.shape), "the sample is not the whole field")
        check(chunk[-1] == x.shape[-1] and 1 < -(-x.shape[-2] // chunk[-2]), "the chunks %s cut no latitude" % chunk)
        with open(os.path.join(tmp, "config_space_%s_rank0.csv" % VAR)) as f:
            rows = [r for r in csv.DictReader(f) if not r["error"] and r["status"] != "left out"]
        check(len(rows) >= 10, "only %d rows ran" % len(rows))
        differs = 0
        for r in rows:
            y = decoded(x, chunk, r)
            want, alone = gradient_rel(x, y), inside_chunks(x, y, chunk)
            got = float(r["gradient_rel"])
            check(abs(got - want) <= 1e-9 * max(want, 1e-30), "%s: gradient_rel %r, numpy over the whole sample %r "
                  "(inside chunks only %r)" % (r["name"], got, want, alone))
            differs += abs(alone - want) > 1e-6 * max(want, 1e-30)
        check(differs * 2 > len(rows), "only %d of %d rows tell the border pairs apart" % (differs, len(rows)))
        print("%d rows: gradient_rel is numpy's over the whole sample in chunks %s; %d differ from the sum inside "
              "chunks only" % (len(rows), chunk, differs))
    finally:
        if not checks.failures:
            shutil.rmtree(tmp, ignore_errors=True)
    finish("gradient borders")


if __name__ == "__main__":
    main()
