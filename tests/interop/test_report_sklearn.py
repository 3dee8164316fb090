"""Our k-means and silhouette against Debian's scikit-learn on the same points.

With our k-means++ seeds passed as sklearn's init (n_init=1, tol=0: iterate
until no label changes, as we do), Lloyd must land on the same labels (up to
renaming), the same inertia, and silhouette_score must agree within 1e-9. On
well-separated blobs sklearn's own seeding must find the same partition too.
Also checks the standardisation against StandardScaler, and the points the
clustering commands take from a real sweep's results_t.parquet.

usage: test_report_sklearn.py DCTK_REPORT_TOOL   (DCTK, DCTK_NCARG in the environment)
"""
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
from sklearn.cluster import KMeans
from sklearn.metrics import silhouette_score
from sklearn.preprocessing import StandardScaler

TOOL = sys.argv[1]


def ours(points, k, standardize=False):
    text = f"{len(points)} {points.shape[1]}\n" + "\n".join(" ".join(repr(float(v)) for v in p) for p in points)
    args = [TOOL, "kmeans", str(k)] + (["--standardize"] if standardize else [])
    r = subprocess.run(args, input=text, capture_output=True, text=True, check=True)
    return json.loads(r.stdout)


def same_partition(a, b):
    """Labels equal up to renaming: the mapping between them is a bijection."""
    pairs = set(zip(a, b))
    return len(pairs) == len(set(a)) == len(set(b))


def check(name, x, k, res):
    km = KMeans(n_clusters=k, init=np.array(res["init"]), n_init=1, tol=0, max_iter=300, algorithm="lloyd").fit(x)
    assert same_partition(res["labels"], km.labels_.tolist()), f"{name} k={k}: labels differ from sklearn"
    assert np.isclose(res["inertia"], km.inertia_, rtol=1e-9, atol=1e-12), (name, k, res["inertia"], km.inertia_)
    assert np.allclose(np.sort(np.array(res["centers"]), axis=0), np.sort(km.cluster_centers_, axis=0),
                       rtol=1e-9, atol=1e-12), f"{name} k={k}: centres differ"
    nlab = len(set(res["labels"]))
    if 2 <= nlab <= len(x) - 1:
        sk = silhouette_score(x, res["labels"])
        assert abs(res["silhouette"] - sk) <= 1e-9, f"{name} k={k}: silhouette {res['silhouette']} vs {sk}"
    else:
        assert res["silhouette"] is None
    return nlab


def test_seeded(rng):
    sets = {
        "uniform": rng.random((400, 2)),
        "skewed": np.column_stack((rng.lognormal(size=300) * 10, rng.exponential(1e-4, 300))),
        # repeated points; exact distance ties are left out on purpose: sklearn computes
        # |x|^2 - 2 x.c + |c|^2, so which centre wins a tie depends on its rounding
        "duplicates": np.repeat(rng.random((70, 2)), 3, axis=0),
        "three_d": rng.normal(size=(250, 3)),
    }
    for name, x in sets.items():
        for k in range(3, 10):
            check(name, x, k, ours(x, k))
        print(f"ok seeded {name}: k = 3..9 agree with sklearn")


def test_separated(rng):
    centres = np.array([[0, 0], [10, 0], [0, 10], [10, 10]])
    x = np.vstack([c + rng.normal(scale=0.5, size=(60, 2)) for c in centres])
    res = ours(x, 4)
    check("blobs", x, 4, res)
    km = KMeans(n_clusters=4, n_init=10, random_state=0).fit(x)  # sklearn's own seeding
    assert same_partition(res["labels"], km.labels_.tolist()), "blobs: partition differs from sklearn's own"
    assert abs(res["silhouette"] - silhouette_score(x, km.labels_)) <= 1e-9
    print("ok separated blobs: same partition as sklearn's own k-means++")


def test_standardize(rng):
    x = np.column_stack((rng.random(100) * 50 + 1, rng.random(100) * 1e-3, np.full(100, 7.0)))
    res = ours(x, 3, standardize=True)
    z = StandardScaler().fit_transform(x)
    assert np.allclose(np.array(res["points"]), z, rtol=1e-12, atol=1e-12), "standardisation differs"
    check("standardized", z, 3, res)
    print("ok standardisation matches StandardScaler (constant column centred)")


def test_real_sweep():
    dctk, ncarg = os.environ.get("DCTK"), os.environ.get("DCTK_NCARG")
    data = f"{ncarg}/cdf/meccatemp.cdf"
    if not dctk or not os.path.exists(data):
        print("skip real sweep: DCTK or meccatemp.cdf missing")
        return
    with tempfile.TemporaryDirectory() as d:
        subprocess.run([dctk, "evaluate_combos", data, "--where-to-write", d, "--field-to-compress", "t",
                        "--compressor-class", "zstd", "--serializer-class", "none",
                        "--override-existing-l1-error", "1e-3", "--threads-per-rank", "2", "--eval-data-size-limit", "100KB",
                        "--search", "exhaustive"],  # every row measured: points enough for k = 9
                       check=True, capture_output=True)
        for metric in ("L1", "L2", "LInf"):
            for k in (3, 6, 9):
                r = subprocess.run([TOOL, "results", f"{d}/results_t.parquet", metric, str(k)],
                                   capture_output=True, text=True, check=True)
                res = json.loads(r.stdout)
                check(f"sweep {metric}", np.array(res["points"]), k, res)
    print("ok real sweep: results_t.parquet points agree for L1, L2, LInf")


def main():
    rng = np.random.default_rng(20240501)
    test_seeded(rng)
    test_separated(rng)
    test_standardize(rng)
    test_real_sweep()


if __name__ == "__main__":
    main()
