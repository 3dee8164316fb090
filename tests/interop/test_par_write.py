#!/usr/bin/python3
"""The distributed write (issue 36 item 1): `mpirun -n 2 dc_toolkit compress`
writes the fields across the ranks, on a real multi-field file (nc4uvt.nc of
libncarg-data: temperature and both winds, 14 levels, three equal fields).

usage: test_par_write.py spread|kill|split|stop|append

  spread  2 ranks write the store of one process, file for file and byte for
          byte, with a pipeline given and with a sweep; each rank says which
          fields it wrote (--verbose) and both wrote some, as the "write:" line
          planned (the largest first, each to the least loaded rank); zarrita
          reads every array as netCDF4 reads the file; every rank exits 0 and
          the manifest has the three fields written.
  kill    rank 1 killed with its field staged but not verified (DCTK_TEST_HOLD
          "staged U", the kill once rank 0 has verified T): the job fails, every
          array published in the store (T among them) reads back (zarrita) as
          the input, the killed field is not published, and
          the same command again completes the store to the one-process store.
  split   one field, more than a rank's share, is split by shards over both
          ranks: `compress --vars T` and `compress_with_optimal U` under 2 ranks
          write the one-process store byte for byte, each rank a contiguous
          share of the shards (--verbose lines), together every shard once;
          compress_with_optimal prints its lines once; rank 1 killed with its
          part staged ("staged T part 1") leaves T unpublished, and the rerun
          completes it to the one-process store. Each rank reads back and
          verifies the shards it wrote (--verbose lines, the same shares as
          the write): with a lossy pipeline (BitRound) the manifest's errors
          are those numpy measures between netCDF4's values and numcodecs'
          BitRound of them (what zarrita reads back), so every rank's part is
          in the sums; and rank 1 garbling what it reads back
          (DCTK_TEST_GARBLE_VERIFY=1, a shard only rank 1 verifies) fails T on
          every rank: exit 1, T not published, no stage left, the manifest
          says failed.
  stop    --no-continue-on-error: the ranks stop together after the round of
          fields in which one failed, the rest recorded skipped (test_stop).
  append  --append under 2 ranks (issue 36): fice.nc's first 11 months as one
          file of a run, stored with 2-month shards, grown by a second file of
          10 months: each rank writes and verifies a contiguous share of the
          new shards (the partial last one again among them), the store equals
          file for file and byte for byte the one-process append's, and zarrita
          reads fice and time as netCDF4 reads the run's two files; rank 1
          garbling what it reads back fails the append with the store as it
          was and no stage left.
"""
import json
import os
import signal
import subprocess
import sys
import tempfile
import time

import netCDF4
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import store_common as sc  # noqa: E402
from checks import check, finish  # noqa: E402

DCTK = os.environ["DCTK"]
NCARG = os.environ.get("DCTK_NCARG", "/usr/share/ncarg/data")
FILE = os.path.join(NCARG, "cdf", "nc4uvt.nc")
FIELDS = ["T", "U", "V"]
SRC = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TIMEOUT_SCALE = float(os.environ.get("DCTK_TEST_TIMEOUT_SCALE", "1"))
PIPELINE = json.dumps({"compressor": {"name": "numcodecs.zlib", "configuration": {"level": 1}},
                       "filter": None,
                       "serializer": None})
# 3 levels a shard: five shards a field, so a field is more than one unit of work
LAYOUT = ["--inner-chunk-mib", "0.03", "--shard-mib", "0.1", "--threads-per-rank", "1"]
SWEEP = ["--search", "exhaustive", "--compressor-class", "zstd", "--filter-class", "none", "--serializer-class",
         "none", "--l1-threshold", "1e-3", "--eval-data-size-limit", "200KB"]
ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
           OMPI_MCA_rmaps_base_oversubscribe="1")
STORE = "nc4uvt.zarr"


def mpirun(n, args, env=None):
    cmd = ["mpirun", "-n", str(n), "--oversubscribe", DCTK] + args + ["--allow-shared-node"]
    return subprocess.run(cmd, capture_output=True, text=True, env=env or ENV, timeout=120 * TIMEOUT_SCALE)


def alone(args):
    env = {k: v for k, v in ENV.items() if not k.startswith(("OMPI_COMM", "PMIX_", "PMI_"))}
    return subprocess.run([DCTK] + args, capture_output=True, text=True, env=env, timeout=120 * TIMEOUT_SCALE)


def files(store):
    """Relative path -> bytes of every file of a store."""
    return sc.tree_files(store)


def same_store(a, b, label):
    only, differ, fa = sc.store_difference(a, b)
    check(not only, "%s: the stores hold other files: %s" % (label, only[:10]))
    check(not differ, "%s: files differ: %s" % (label, differ[:10]))
    shards = [k for k in fa if k.startswith(("T/c/", "c/"))]
    check(len(shards) >= 5, "%s: T has %d shards, the test wants several" % (label, len(shards)))


digest = sc.digest


def want_digests():
    """The values as netCDF4 reads them, missing values NaN (the store's fill)."""
    with netCDF4.Dataset(FILE) as d:
        return {n: digest(np.ma.filled(d[n][:].astype(d[n].dtype), np.nan)) for n in FIELDS}


def read_store(store, published=False):
    args = ["node", os.path.join(SRC, "tests", "js", "store_digest.mjs"), store] + (["--published"] if published
                                                                                     else [])
    r = subprocess.run(args, capture_output=True, text=True)
    if r.returncode != 0:
        return {"error": r.stderr.strip()}
    return json.loads(r.stdout)


def wrote_by_rank(stderr):
    """{rank: [fields]} from the debug lines "[rank R] debug: wrote field F ..."."""
    out = {}
    for line in stderr.splitlines():
        if "] debug: wrote field " in line and line.startswith("[rank "):
            rank = int(line[6:line.index("]")])
            out.setdefault(rank, []).append(line.split("wrote field ", 1)[1].split()[0])
    return out


def planned(stdout):
    """{rank: [fields]} from the line "write: N field(s) over R ranks, ...: rank 0 SIZE (A, B); rank 1 ..."."""
    line = next((x for x in stdout.splitlines() if x.startswith("write: ")), "")
    out = {}
    for part in line.split(":", 2)[-1].split(";"):
        part = part.strip()
        if part.startswith("rank ") and "(" in part:
            names = part[part.index("(") + 1:part.rindex(")")]
            out[int(part.split()[1])] = [n.strip() for n in names.split(",") if n.strip()]
    return out


def spread_case(tmp, label, extra):
    one, two = os.path.join(tmp, label + "1"), os.path.join(tmp, label + "2")
    p = alone(["compress", FILE, one] + LAYOUT + extra)
    check(p.returncode == 0, "%s: one process failed: %s" % (label, p.stderr[-800:]))
    q = mpirun(2, ["compress", FILE, two, "--verbose"] + LAYOUT + extra)
    check(q.returncode == 0, "%s: 2 ranks failed: %s" % (label, q.stderr[-1500:]))
    if p.returncode or q.returncode:
        return
    same_store(os.path.join(one, STORE), os.path.join(two, STORE), label)
    plan, done = planned(q.stdout), wrote_by_rank(q.stderr)
    check(sorted(plan) == [0, 1] and all(plan.values()), "%s: the write line does not give both ranks fields: %s" %
          (label, plan))
    check({r: sorted(f) for r, f in done.items()} == {r: sorted(f) for r, f in plan.items()},
          "%s: the ranks wrote %s, the plan said %s" % (label, done, plan))
    check(sorted(sum(done.values(), [])) == FIELDS, "%s: fields written: %s" % (label, done))
    check(q.stdout.count("store:") == 1, "%s: the store is not reported once" % label)
    want, got = want_digests(), read_store(os.path.join(two, STORE))
    for n in FIELDS:
        check(got.get("arrays", {}).get(n, {}).get("sha256") == want[n], "%s: zarrita reads %s: %s" %
              (label, n, got.get("arrays", {}).get(n, got.get("error"))))
    with open(os.path.join(two, "batch_manifest.json")) as f:
        m = json.load(f)
    check(m.get("written") == 3 and m.get("failed") == 0, "%s: manifest written %s failed %s" %
          (label, m.get("written"), m.get("failed")))
    check(sorted(m.get("fields", {})) == FIELDS, "%s: manifest fields %s" % (label, sorted(m.get("fields", {}))))
    return one


def test_spread(tmp):
    spread_case(tmp, "pipeline", ["--pipeline", PIPELINE])
    spread_case(tmp, "sweep", SWEEP)


def rank_pid(launcher, rank):
    """The pid of a rank started by mpirun: a child whose environment names the rank."""
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            stat = open("/proc/%s/stat" % pid).read()
            env = open("/proc/%s/environ" % pid, "rb").read().split(b"\0")
        except OSError:
            continue
        if int(stat.rsplit(")", 1)[1].split()[1]) == launcher and ("OMPI_COMM_WORLD_RANK=%d" % rank).encode() in env:
            return int(pid)
    return None


def test_kill(tmp):
    one = os.path.join(tmp, "one")
    p = alone(["compress", FILE, one, "--pipeline", PIPELINE] + LAYOUT)
    check(p.returncode == 0, "one process failed: %s" % p.stderr[-800:])
    where = os.path.join(tmp, "killed")
    args = ["compress", FILE, where, "--pipeline", PIPELINE, "--verbose"] + LAYOUT + ["--allow-shared-node"]
    # three equal fields, the largest first to the least loaded rank: T on rank 0, U on rank 1, V on rank 0.
    # Rank 1 holds once U is staged, before its verification, whatever the speed of this machine.
    # The kill comes once rank 0 has published T, so the store holds a field of the cut run.
    hold, log, outlog = os.path.join(tmp, "hold"), os.path.join(tmp, "kill.log"), os.path.join(tmp, "kill.out")
    with open(hold, "w") as f:
        f.write("staged U\n1\n")
    with open(log, "w") as errf, open(outlog, "w") as outf:
        job = subprocess.Popen(["mpirun", "-n", "2", "--oversubscribe", DCTK] + args, stdout=outf,
                               stderr=errf, env={**ENV, "DCTK_TEST_HOLD": hold}, text=True, start_new_session=True)
    deadline = time.time() + 120 * TIMEOUT_SCALE
    while time.time() < deadline and job.poll() is None and not (
            "[test hold]" in open(log).read() and "T: verified" in open(outlog).read()):
        time.sleep(0.05)
    pid = rank_pid(job.pid, 1)
    check(job.poll() is None and pid, "the job ended before rank 1 could be killed: %s" % open(log).read()[-800:])
    if pid:
        os.kill(pid, signal.SIGKILL)
    try:
        job.communicate(timeout=60 * TIMEOUT_SCALE)
        out = open(outlog).read()
    except subprocess.TimeoutExpired:
        os.killpg(job.pid, signal.SIGKILL)
        job.communicate()
        check(False, "the job hung after rank 1 was killed")
        return
    check(job.returncode != 0, "the job reported success after a rank was killed")
    check(planned(out).get(1) == ["U"], "rank 1 was to write U: %s" % out[-500:])
    store = os.path.join(where, STORE)
    got, want = read_store(store, published=True), want_digests()
    listed = got.get("listed", [])
    check("U" not in listed, "the field of the killed rank was published: %s" % listed)
    check("T" in listed, "T, verified before the kill, is not in the store: %s" % listed)
    for n in listed:
        if n in FIELDS:
            check(got["arrays"][n].get("sha256") == want[n], "published %s does not read back as the input: %s" %
                  (n, got["arrays"][n]))
    check(not os.path.exists(os.path.join(where, "batch_manifest.json")) or
          json.load(open(os.path.join(where, "batch_manifest.json"))).get("written") != 3,
          "a manifest says the killed run wrote every field")
    os.unlink(hold)
    q = mpirun(2, args[:-1])
    check(q.returncode == 0, "the rerun failed: %s" % q.stderr[-1500:])
    if q.returncode == 0 and p.returncode == 0:
        same_store(os.path.join(one, STORE), store, "the rerun")
        got = read_store(store)
        for n in FIELDS:
            check(got.get("arrays", {}).get(n, {}).get("sha256") == want[n], "rerun: zarrita reads %s: %s" %
                  (n, got.get("arrays", {}).get(n, got.get("error"))))


def shard_parts(stderr, field, verb="wrote"):
    """{rank: (begin, end, n)} from "[rank R] debug: wrote shards B to E of N of field F on this rank"
    (verb "verified": the shards each rank read back)."""
    out = {}
    for line in stderr.splitlines():
        if line.startswith("[rank ") and ("debug: %s shards " % verb) in line and line.split()[-4] == field:
            w = line.split("%s shards " % verb, 1)[1].split()
            out[int(line[6:line.index("]")])] = (int(w[0]), int(w[2]), int(w[4]))
    return out


def check_parts(label, stderr, field, first=0, verb="wrote"):
    """Both ranks did a contiguous share of the shards [first, n) of field, together each once."""
    parts = shard_parts(stderr, field, verb)
    check(sorted(parts) == [0, 1], "%s: the ranks that %s shards of %s: %s" % (label, verb, field, parts))
    if sorted(parts) == [0, 1]:
        (b0, e0, n0), (b1, e1, n1) = parts[0], parts[1]
        check(b0 == first and e0 == b1 and e1 == n0 == n1 and b0 < e0 and b1 < e1 and n0 - first >= 4,
              "%s: shards of %s %s by rank: %s, not every shard from %d once by both" % (label, field, verb, parts,
                                                                                        first))
    return parts


def check_verified(label, stderr, field, first=0):
    """Each rank read back the shards [first, n) it wrote: the same shares."""
    wrote = shard_parts(stderr, field)
    verified = check_parts(label, stderr, field, first, "verified")
    check(verified == wrote, "%s: %s verified by rank %s, written %s" % (label, field, verified, wrote))


LOSSY = json.dumps({"compressor": {"name": "numcodecs.zlib", "configuration": {"level": 1}},
                    "filter": {"name": "numcodecs.bitround", "configuration": {"keepbits": 8}},
                    "serializer": None})


def split_lossy(tmp):
    """A lossy split field: the verification's errors are the whole field's, every rank's shards in the sums."""
    import numcodecs
    one, two = os.path.join(tmp, "lossy1"), os.path.join(tmp, "lossy2")
    args = ["compress", FILE, "--vars", "T", "--pipeline", LOSSY] + LAYOUT
    p = alone(args[:2] + [one] + args[2:])
    q = mpirun(2, args[:2] + [two, "--verbose"] + args[2:])
    check(p.returncode == 0 and q.returncode == 0, "lossy T: %s %s" % (p.stderr[-600:], q.stderr[-1500:]))
    if p.returncode or q.returncode:
        return
    same_store(os.path.join(one, STORE), os.path.join(two, STORE), "lossy T")
    check_verified("lossy T", q.stderr, "T")
    with netCDF4.Dataset(FILE) as d:
        x = np.ma.filled(d["T"][:].astype(np.float32), np.nan)
    br = numcodecs.BitRound(keepbits=8)
    y = np.asarray(br.decode(br.encode(x.copy()))).reshape(x.shape)  # encode rounds its buffer in place
    got = read_store(os.path.join(two, STORE), published=True).get("arrays", {}).get("T", {})
    check(got.get("sha256") == digest(y), "lossy T: zarrita does not read numcodecs' BitRound of the input: %s" % got)
    ok = np.isfinite(x)
    x64, e = x[ok].astype(np.float64), np.abs(y[ok].astype(np.float64) - x[ok].astype(np.float64))
    want = {"l1_rel": e.sum() / np.abs(x64).sum(), "l2_rel": np.sqrt((e * e).sum()) / np.sqrt((x64 * x64).sum()),
            "linf_rel": e.max() / np.abs(x64).max(), "max_abs_err": e.max()}
    check(want["l1_rel"] > 0, "lossy T: BitRound(8) changed nothing, the test measures nothing")
    for d in (one, two):
        with open(os.path.join(d, "batch_manifest.json")) as f:
            ver = json.load(f)["fields"]["T"].get("verification", {})
        for k, w in want.items():
            check(abs(ver.get(k, float("nan")) - w) <= 1e-9 * w, "lossy T (%s): verification %s %r, numpy %r" %
                  (os.path.basename(d), k, ver.get(k), w))


def split_garbled(tmp):
    """Rank 1 garbles the values it reads back: the split field fails on every rank, nothing published."""
    where = os.path.join(tmp, "garbled")
    q = mpirun(2, ["compress", FILE, where, "--vars", "T", "--verbose", "--pipeline", PIPELINE] + LAYOUT,
               env={**ENV, "DCTK_TEST_GARBLE_VERIFY": "1"})
    check(q.returncode == 1, "garbled T: exit %d, expected 1: %s" % (q.returncode, q.stderr[-1500:]))
    check_verified("garbled T", q.stderr, "T")
    errors = [x for x in q.stderr.splitlines() if x.startswith("dc_toolkit compress:")]
    check(len(errors) == 1 and "'T'" in errors[0] and "verification failed" in errors[0],
          "garbled T: not one line saying T failed its verification: %s" % errors)
    store = os.path.join(where, STORE)
    listed = read_store(store, published=True).get("listed", []) if os.path.isdir(store) else []
    check("T" not in listed, "garbled T was published: %s" % listed)
    left = [n for n in os.listdir(store) if n.startswith(".")] if os.path.isdir(store) else []
    check(not left, "garbled T left %s in the store" % left)
    try:
        with open(os.path.join(where, "batch_manifest.json")) as f:
            status = json.load(f)["fields"]["T"]["status"]
    except (OSError, ValueError, KeyError) as e:
        status = str(e)
    check(status == "failed", "garbled T: the manifest says %s" % status)


def test_split(tmp):
    pipe = ["--pipeline", PIPELINE]
    # compress of one field: more than a rank's share, so both ranks write its shards
    one, two = os.path.join(tmp, "one"), os.path.join(tmp, "two")
    p = alone(["compress", FILE, one, "--vars", "T"] + pipe + LAYOUT)
    q = mpirun(2, ["compress", FILE, two, "--vars", "T", "--verbose"] + pipe + LAYOUT)
    check(p.returncode == 0 and q.returncode == 0, "compress --vars T: %s %s" % (p.stderr[-600:], q.stderr[-1500:]))
    if p.returncode == 0 and q.returncode == 0:
        same_store(os.path.join(one, STORE), os.path.join(two, STORE), "compress --vars T")
        check_parts("compress --vars T", q.stderr, "T")
        check("split by shards over every rank: T" in q.stdout, "no line says T is split: %s" % q.stdout[-500:])
        got = read_store(os.path.join(two, STORE), published=True)
        check(got.get("arrays", {}).get("T", {}).get("sha256") == want_digests()["T"], "zarrita reads T: %s" %
              got.get("arrays", {}).get("T", got.get("error")))
    check_verified("compress --vars T", q.stderr, "T")
    split_lossy(tmp)
    split_garbled(tmp)
    # compress_with_optimal: the one field over both ranks, its lines printed once
    p = alone(["compress_with_optimal", FILE, one, "U"] + pipe + LAYOUT)
    q = mpirun(2, ["compress_with_optimal", FILE, two, "U", "--verbose"] + pipe + LAYOUT)
    check(p.returncode == 0 and q.returncode == 0, "compress_with_optimal U: %s %s" % (p.stderr[-600:],
                                                                                        q.stderr[-1500:]))
    if p.returncode == 0 and q.returncode == 0:
        check_parts("compress_with_optimal U", q.stderr, "U")
        check_verified("compress_with_optimal U", q.stderr, "U")
        check(q.stdout.count("U: wrote ") == 1 and q.stdout.count("U: verified") == 1,
              "compress_with_optimal under 2 ranks: lines not once: %s" % q.stdout)
        fa, fb = files(os.path.join(one, STORE, "U")), files(os.path.join(two, STORE, "U"))
        check(fa == fb and len(fa) >= 6, "compress_with_optimal U: the arrays differ (%d and %d files)" %
              (len(fa), len(fb)))
        got = read_store(os.path.join(two, STORE), published=True)
        check(got.get("arrays", {}).get("U", {}).get("sha256") == want_digests()["U"], "zarrita reads U: %s" %
              got.get("arrays", {}).get("U", got.get("error")))
    # rank 1 killed with its part of T staged: T not published; the rerun completes it
    where = os.path.join(tmp, "killed")
    args = ["compress", FILE, where, "--vars", "T", "--verbose"] + pipe + LAYOUT + ["--allow-shared-node"]
    hold, log = os.path.join(tmp, "hold"), os.path.join(tmp, "kill.log")
    with open(hold, "w") as f:
        f.write("staged T part 1\n1\n")
    with open(log, "w") as errf:
        job = subprocess.Popen(["mpirun", "-n", "2", "--oversubscribe", DCTK] + args, stdout=subprocess.DEVNULL,
                               stderr=errf, env={**ENV, "DCTK_TEST_HOLD": hold}, text=True, start_new_session=True)
    deadline = time.time() + 120 * TIMEOUT_SCALE
    while time.time() < deadline and job.poll() is None and "[test hold]" not in open(log).read():
        time.sleep(0.05)
    pid = rank_pid(job.pid, 1)
    check(job.poll() is None and pid, "the job ended before rank 1 could be killed: %s" % open(log).read()[-800:])
    if pid:
        os.kill(pid, signal.SIGKILL)
    try:
        job.wait(timeout=60 * TIMEOUT_SCALE)
    except subprocess.TimeoutExpired:
        os.killpg(job.pid, signal.SIGKILL)
        job.wait()
        check(False, "the job hung after rank 1 was killed")
        return
    check(job.returncode != 0, "the job reported success after a rank was killed")
    store = os.path.join(where, STORE)
    listed = read_store(store, published=True).get("listed", []) if os.path.isdir(store) else []
    check("T" not in listed, "T, cut mid-write, was published: %s" % listed)
    os.unlink(hold)
    q = mpirun(2, args[:-1])
    check(q.returncode == 0, "the rerun failed: %s" % q.stderr[-1500:])
    if q.returncode == 0:
        same_store(os.path.join(one, STORE, "T"), os.path.join(store, "T"), "the rerun of T")


def test_stop(tmp):
    """--no-continue-on-error under 2 ranks (issue 32 item 3): a manifest in the Python tool's schema whose
    L1 budget its BitRound pipeline cannot meet fails every field it writes. The three fields go to the
    ranks in two rounds (two at once, then one): with --no-continue-on-error both fields of the first
    round fail and the third is recorded skipped, with its line; with --continue-on-error all three fail.
    Exit 1 either way."""
    manifest = os.path.join(tmp, "tight.json")
    pipeline = {"compressor": {"name": "numcodecs.zlib", "configuration": {"level": 1}},
                "filter": {"name": "numcodecs.bitround", "configuration": {"keepbits": 4}}, "serializer": None}
    with open(manifest, "w") as f:
        json.dump({"command": "evaluate_combos", "var": "T", "args": {},
                   "effective_thresholds": {"l1": 1e-9, "l2": None, "linf": None, "bias": None, "q99": None},
                   "phys_min": None, "phys_max": None, "phys_slack": 0.0,
                   "best": {"name": "Zlib | BitRound(4) | -", "pipeline": pipeline, "ratio": 3.0, "l1_rel": 1e-3}},
                  f)
    for flag, skipped in (("--no-continue-on-error", 1), ("--continue-on-error", 0)):
        where = os.path.join(tmp, flag)
        q = mpirun(2, ["compress", FILE, where, "--pipeline", manifest, flag])
        check(q.returncode == 1, "%s: exit %d, expected 1: %s" % (flag, q.returncode, q.stderr[-800:]))
        try:
            with open(os.path.join(where, "batch_manifest.json")) as f:
                status = {k: v.get("status") for k, v in json.load(f)["fields"].items()}
        except (OSError, ValueError) as e:
            status = {"error": str(e)}
        got = sorted(status.get(n, "?") for n in FIELDS)
        want = sorted(["failed"] * (3 - skipped) + ["skipped"] * skipped)
        check(got == want, "%s: the fields' status %s, expected %s" % (flag, status, want))
        check(("not written: an earlier field failed" in q.stdout) == bool(skipped),
              "%s: the stop line: %s" % (flag, q.stdout[-800:]))


MONTH_MIB = 49 * 100 * 4 / 2**20  # one month of fice
MONTHS_LAYOUT = ["--inner-chunk-mib", str(MONTH_MIB), "--shard-mib", str(2.5 * MONTH_MIB), "--threads-per-rank", "1"]

write_months = sc.fice_months


def test_append(tmp):
    import shutil
    run = os.path.join(tmp, "run")
    os.makedirs(run)
    write_months(os.path.join(run, "fice_a.nc"), 0, 11)
    glob = os.path.join(run, "fice_*.nc")
    base = os.path.join(tmp, "base")
    p = alone(["compress", glob, base, "--pipeline", PIPELINE] + MONTHS_LAYOUT)
    check(p.returncode == 0, "compress of the 11 months: %s" % p.stderr[-800:])
    if p.returncode:
        return
    write_months(os.path.join(run, "fice_b.nc"), 11, 21)
    before = files(os.path.join(base, "fice.zarr"))
    one, two, garbled = (os.path.join(tmp, n) for n in ("one", "two", "garbled"))
    for d in (one, two, garbled):
        shutil.copytree(base, d)
    p = alone(["compress", glob, one, "--append", "--threads-per-rank", "1"])
    q = mpirun(2, ["compress", glob, two, "--append", "--verbose", "--threads-per-rank", "1"])
    check(p.returncode == 0 and q.returncode == 0, "append: %s %s" % (p.stderr[-600:], q.stderr[-1500:]))
    if p.returncode or q.returncode:
        return
    only, differ, fa = sc.store_difference(os.path.join(one, "fice.zarr"), os.path.join(two, "fice.zarr"))
    check(not only and not differ, "2-rank append against 1-rank: other files %s, differing %s" % (only, differ))
    check(len([k for k in fa if k.startswith("fice/c/")]) == 11, "the grown fice has not 11 shards: %s" % sorted(fa))
    check(files(os.path.join(one, "fice.zarr")) != before, "the append changed nothing")
    # 11 months in 2-month shards: the new ones from the partial sixth (index 5) to the eleventh
    check_parts("append", q.stderr, "fice", first=5)
    check_verified("append", q.stderr, "fice", first=5)
    check(q.stdout.count("fice: appended 10 steps along 'time' (11 -> 21)") == 1 and q.stdout.count("store:") == 1,
          "append: the lines not once: %s" % q.stdout[-800:])
    with netCDF4.Dataset(os.path.join(run, "fice_a.nc")) as a, netCDF4.Dataset(os.path.join(run, "fice_b.nc")) as b:
        want = {n: digest(np.concatenate([np.ma.filled(f[n][:].astype(f[n].dtype), np.nan) for f in (a, b)]))
                for n in ("fice", "time")}
    got = read_store(os.path.join(two, "fice.zarr"))
    for n in ("fice", "time"):
        check(got.get("arrays", {}).get(n, {}).get("sha256") == want[n], "append: zarrita reads %s: %s" %
              (n, got.get("arrays", {}).get(n, got.get("error"))))
    # rank 1 garbles what it reads back: the append fails on every rank, the store as it was
    q = mpirun(2, ["compress", glob, garbled, "--append", "--verbose", "--threads-per-rank", "1"],
               env={**ENV, "DCTK_TEST_GARBLE_VERIFY": "1"})
    check(q.returncode != 0, "garbled append: exit 0")
    check_verified("garbled append", q.stderr, "fice", first=5)
    errors = [x for x in q.stderr.splitlines() if x.startswith("dc_toolkit compress:")]
    check(len(errors) == 1 and "'fice'" in errors[0] and "verification failed" in errors[0],
          "garbled append: not one line saying fice failed its verification: %s" % errors)
    check(files(os.path.join(garbled, "fice.zarr")) == before, "garbled append: the store changed")
    left = [n for n in os.listdir(os.path.join(garbled, "fice.zarr")) if n.startswith(".")]
    check(not left, "garbled append left %s" % left)


TESTS = {"spread": test_spread, "kill": test_kill, "split": test_split, "stop": test_stop, "append": test_append}

if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as tmp:
        TESTS[sys.argv[1]](tmp)
    finish("par_write_" + sys.argv[1])
