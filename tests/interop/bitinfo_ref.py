"""The bitwise real information of Kloewer et al. (2021), computed with numpy
from the method's description (BitInformation.jl's mutual information with
the binomial significance filter, xbitinfo's keepbits rule), as the tests'
reference for dctk_bitinfo_* and --keep-information."""
from statistics import NormalDist

import numpy as np


def sign_magnitude_exponent(x):
    bits = x.dtype.itemsize * 8
    nexp = 8 if bits == 32 else 11
    nman = bits - 1 - nexp
    u = x.view("u%d" % x.dtype.itemsize).astype(np.uint64)
    bias = 2 ** (nexp - 1) - 1
    e = ((u >> np.uint64(nman)) & np.uint64(2**nexp - 1)).astype(np.int64) - bias
    keep = np.uint64((1 << (bits - 1)) | ((1 << nman) - 1))
    esign = np.where(e < 0, np.uint64(1 << (bits - 2)), np.uint64(0))
    return (u & keep) | esign | (np.abs(e).astype(np.uint64) << np.uint64(nman))


def reference(x, axis):
    bits = x.dtype.itemsize * 8
    w = sign_magnitude_exponent(x)
    n = x.shape[axis]
    a = np.take(w, range(0, n - 1), axis=axis).ravel()
    b = np.take(w, range(1, n), axis=axis).ravel()
    xa = np.take(x, range(0, n - 1), axis=axis).ravel()
    xb = np.take(x, range(1, n), axis=axis).ravel()
    ok = ~np.isnan(xa) & ~np.isnan(xb)
    a, b = a[ok], b[ok]
    pairs = a.size
    mi = np.zeros(bits)
    for i in range(bits):
        s = np.uint64(bits - 1 - i)
        ab = ((a >> s) & np.uint64(1)).astype(np.int8)
        bb = ((b >> s) & np.uint64(1)).astype(np.int8)
        p = np.array([[np.sum((ab == j) & (bb == k)) for k in (0, 1)] for j in (0, 1)], float) / pairs
        pr, pc = p.sum(axis=1), p.sum(axis=0)
        for j in (0, 1):
            for k in (0, 1):
                if p[j, k] > 0:
                    mi[i] += p[j, k] * np.log2(p[j, k] / (pr[j] * pc[k]))
    z = NormalDist().inv_cdf(1 - (1 - 0.99) / 2)
    q = min(1.0, 0.5 + z / (2 * np.sqrt(pairs)))
    free = 1 - (-q * np.log2(q) - (1 - q) * np.log2(1 - q)) if q < 1 else 1.0
    info = np.where(mi > free, mi, 0.0)
    return pairs, free, mi, info


def keepbits(info, dtype, keep):
    bits = dtype.itemsize * 8
    nexp = 8 if bits == 32 else 11
    nman = bits - 1 - nexp
    if keep >= 1:
        return nman
    cleaned = np.where(info > 1.5 * info[-4:].max(), info, 0.0)
    if cleaned.sum() <= 0:
        return 0
    cdf = np.cumsum(cleaned) / cleaned.sum()
    k = int(np.argmax(cdf > keep)) + 1 - (1 + nexp)
    return min(max(k, 0), nman)


def keepbits_all_axes(x, keep):
    """The largest keepbits over the axes of two or more values (the program's rule)."""
    return max(keepbits(reference(x, a)[3], x.dtype, keep) for a in range(x.ndim) if x.shape[a] >= 2)
