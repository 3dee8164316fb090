#!/usr/bin/python3
"""The MPI layer, run through mpirun on one machine (2 cores).

usage: test_par.py same|adaptive|pieces|refuse|kill|singleton|compress|resume

  same       2 ranks (--allow-shared-node) give the rows, metrics and best combo
             of one process; every combo is run by exactly one rank, both ran some;
             so do 2 ranks of 2 threads under a --max-memory below one unit.
  adaptive   the adaptive search gives the same winner and rows with 1 and 2 ranks.
  pieces     the sample is broadcast in 1000-byte pieces (DCTK_BCAST_PIECE);
             every rank's checksum equals numpy's over the sample read with
             netCDF4, and the piece count is ceil(bytes / 1000).
  refuse     2 ranks on one node without --allow-shared-node: refused once, on
             rank 0, with the mpirun and srun lines, and nothing written.
  kill       SIGKILL on rank 1 mid-sweep ends the job (no hang); every complete
             row of each rank's CSV parses and matches the single-process row.
  singleton  no mpirun: no MPI output, the usual files; mpirun -n 1 agrees.
  compress   the one-shot command under 2 ranks: the store written, said once (rank 0).
  resume     --resume reads every rank's CSV (issue 37, finding 7): 2 ranks killed
             mid-sweep, then one process resumes; one process killed mid-sweep,
             then 2 ranks resume. Each reuses every row recorded (the count it
             says), ends with every combo exactly once and the rows and best
             combo of an uninterrupted run.
"""
import csv
import json
import math
import os
import re
import signal
import subprocess
import sys
import tempfile
import time

import numpy as np
import netCDF4

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sample_plan import rebuild  # noqa: E402

DCTK = os.environ["DCTK"]
NCARG = os.environ.get("DCTK_NCARG", "/usr/share/ncarg/data")
FILE = os.path.join(NCARG, "cdf", "meccatemp.cdf")
VAR = "t"
NARROW = ["--search", "exhaustive", "--field-to-compress", VAR, "--compressor-class", "zstd",
          "--serializer-class", "none", "--l1-threshold", "1e-3",
          "--eval-data-size-limit", "2MB", "--threads-per-rank", "1"]
METRICS = ["ratio", "l1_rel", "l2_rel", "linf_rel", "euclidean", "max_abs_err"]
SAME = ["var", "comp_idx", "filt_idx", "ser_idx", "compressor", "filter", "serializer", "keep", "error",
        "portability"]

ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
           OMPI_MCA_rmaps_base_oversubscribe="1")
failures = []


def check(cond, msg):
    if not cond:
        failures.append(msg)


def mpirun(n, args, env=None, timeout=50):
    cmd = ["mpirun", "-n", str(n), "--oversubscribe", DCTK] + args
    return subprocess.run(cmd, capture_output=True, text=True, env=env or ENV, timeout=timeout)


def alone(args, timeout=50):
    env = {k: v for k, v in ENV.items() if not k.startswith(("OMPI_COMM", "PMIX_", "PMI_"))}
    return subprocess.run([DCTK] + args, capture_output=True, text=True, env=env, timeout=timeout)


def evaluate(where, extra=()):
    return ["evaluate_combos", FILE, "--where-to-write", where] + NARROW + list(extra)


def read_rows(path):
    """Complete rows of a results CSV; a torn last line (no newline) is dropped."""
    with open(path, newline="") as f:
        text = f.read()
    if not text.endswith("\n"):
        text = text[: text.rfind("\n") + 1]
    reader = csv.DictReader(text.splitlines(keepends=True))
    rows = list(reader)
    for r in rows:  # as many fields as the header, none missing
        check(len(r) == len(reader.fieldnames) and None not in r and None not in r.values(),
              f"{path}: malformed row {r}")
        for m in METRICS + ["encode_mbps", "decode_mbps"]:
            float(r[m])  # raises on a number that does not parse
        check(r["keep"] in ("true", "false"), f"{path}: keep is {r['keep']!r}")
    return rows


def key(r):
    return (int(r["comp_idx"]), int(r["filt_idx"]), int(r["ser_idx"]))


def same_row(a, b, what):
    for c in SAME:
        check(a[c] == b[c], f"{what} {key(a)}: {c} {a[c]!r} != {b[c]!r}")
    for m in METRICS:
        x, y = float(a[m]), float(b[m])
        check(x == y or (math.isnan(x) and math.isnan(y)), f"{what} {key(a)}: {m} {x!r} != {y!r}")


def rank_files(where):
    return sorted(f for f in os.listdir(where) if f.startswith(f"config_space_{VAR}_rank"))


def single_run(tmp):
    ref = os.path.join(tmp, "one")
    p = alone(evaluate(ref))
    check(p.returncode == 0, f"single process failed: {p.stderr}")
    return ref, {key(r): r for r in read_rows(os.path.join(ref, f"config_space_{VAR}_rank0.csv"))}


def compare_to(ref, rows, where, what):
    check(set(rows) == set(ref), f"{what}: combos differ: {set(rows) ^ set(ref)}")
    for k in ref.keys() & rows.keys():
        same_row(ref[k], rows[k], what)
    best = [json.load(open(os.path.join(d, f"best_{VAR}.json"))) for d in where]
    check(best[0] == best[1], f"{what}: best_{VAR}.json differs:\n{best[0]}\n{best[1]}")


def test_same(tmp):
    ref_dir, ref = single_run(tmp)
    two = os.path.join(tmp, "two")
    p = mpirun(2, evaluate(two, ["--allow-shared-node"]))
    check(p.returncode == 0, f"2 ranks failed: {p.stderr}")
    check("--allow-shared-node: 2 ranks" in p.stderr, "the log does not say that ranks share a node")
    check(p.stdout.count("best combo") == 1, f"the optimum is not printed once:\n{p.stdout}")
    files = rank_files(two)
    check(files == [f"config_space_{VAR}_rank0.csv", f"config_space_{VAR}_rank1.csv"], f"rank CSVs: {files}")
    rows = {}
    for f in files:
        mine = read_rows(os.path.join(two, f))
        check(len(mine) > 0, f"{f}: this rank ran no unit")
        for r in mine:
            check(key(r) not in rows, f"combo {key(r)} run by two ranks")
            rows[key(r)] = r
    compare_to(ref, rows, [ref_dir, two], "2 ranks")
    check(os.path.getsize(os.path.join(two, f"results_{VAR}.parquet")) > 0, "no Parquet from rank 0")
    line = lambda out: [l for l in out.splitlines() if "best combo" in l]
    one = alone(evaluate(os.path.join(tmp, "again")))
    check(line(one.stdout) == line(p.stdout), f"printed optimum differs: {line(one.stdout)} {line(p.stdout)}")
    # the memory budget: the node's, shared by the ranks on it (issue 24 item 3)
    budget = lambda err: re.findall(r"\[memory\] sample .*?budget ([\d.]+) MiB \(([^)]*)\)", err)
    b1, b2 = budget(one.stderr), budget(p.stderr)
    check(len(b1) == 1 and len(b2) == 1, f"[memory] lines: one process {b1}, 2 ranks {b2}")
    if len(b1) == 1 and len(b2) == 1:
        check("shared by the ranks of this node" in b2[0][1] and "shared" not in b1[0][1], f"budgets: {b1} {b2}")
        check(abs(2 * float(b2[0][0]) - float(b1[0][0])) <= 0.2, f"2 ranks' budget {b2[0][0]} is not half of {b1[0][0]}")
    # a memory-limited run: 2 ranks of 2 threads, each rank's budget below one unit, so every
    # unit runs alone on its rank; the rows and the winner are the lone process's
    tight = os.path.join(tmp, "tight")
    q = mpirun(2, evaluate(tight, ["--allow-shared-node", "--threads-per-rank", "2", "--max-memory", "30MB"]))
    check(q.returncode == 0, f"2 ranks under --max-memory failed: {q.stderr}")
    check(re.search(r"\[rank \d\] \[memory\] unit \d+ needs .* it runs alone", q.stderr), "no unit ran alone: "
          + "\n".join(l for l in q.stderr.splitlines() if "[memory]" in l))
    if q.returncode == 0:
        rows = {}
        for f in rank_files(tight):
            rows.update({key(r): r for r in read_rows(os.path.join(tight, f))})
        compare_to(ref, rows, [ref_dir, tight], "2 ranks under --max-memory")


def fnv1a64(data):
    h = 0xCBF29CE484222325
    for b in data:
        h = ((h ^ b) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return h


def sample_bytes(best):
    with netCDF4.Dataset(FILE) as nc:
        v = nc.variables[VAR]
        v.set_auto_maskandscale(True)
        data = np.ma.filled(v[:].astype(v.dtype), np.nan)
    return np.ascontiguousarray(rebuild(data, best["sample"])).tobytes()


def test_pieces(tmp):
    where = os.path.join(tmp, "pieces")
    env = dict(ENV, DCTK_BCAST_PIECE="1000")
    p = mpirun(2, evaluate(where, ["--allow-shared-node", "--verbose"]), env=env)
    check(p.returncode == 0, f"2 ranks failed: {p.stderr}")
    check("broadcast pieces of 1000 bytes (DCTK_BCAST_PIECE)" in p.stderr, "the piece override is not logged")
    sample = sample_bytes(json.load(open(os.path.join(where, f"best_{VAR}.json"))))
    pat = re.compile(r"\[rank (\d)\] debug: broadcast of (\d+) bytes in (\d+) piece\(s\): "
                     r"fnv1a64 ([0-9a-f]{16}) \(rank 0: ([0-9a-f]{16})\)")
    got = {int(m[0]): m for m in pat.findall(p.stderr) if int(m[1]) == len(sample)}
    check(set(got) == {0, 1}, f"no sample checksum from each rank:\n{p.stderr}")
    want = f"{fnv1a64(sample):016x}"
    for rank, (_, n, pieces, mine, root) in got.items():
        check(int(pieces) == -(-len(sample) // 1000) and int(pieces) > 1, f"rank {rank}: {pieces} pieces")
        check(mine == want and root == want, f"rank {rank}: checksum {mine} (rank 0 {root}), numpy {want}")


def test_refuse(tmp):
    where = os.path.join(tmp, "refused")
    p = mpirun(2, evaluate(where))
    check(p.returncode != 0, "2 ranks on one node were not refused")
    args = " ".join(["dc_toolkit"] + evaluate(where))
    for hint in (f"mpirun -n 1 --map-by ppr:1:node {args}", f"srun --nodes=1 --ntasks-per-node=1 {args}"):
        check(p.stderr.count(hint) == 1, f"launch line missing or repeated: {hint}\n{p.stderr}")
    check("--allow-shared-node" in p.stderr, "the refusal does not name --allow-shared-node")
    check(not os.path.exists(where) or not os.listdir(where), "a refused run wrote files")


def rank_pid(launcher, rank):
    """The pid of a rank started by mpirun: a child whose environment names the rank."""
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            stat = open(f"/proc/{pid}/stat").read()
            env = open(f"/proc/{pid}/environ", "rb").read().split(b"\0")
        except OSError:
            continue
        if int(stat.rsplit(")", 1)[1].split()[1]) == launcher and f"OMPI_COMM_WORLD_RANK={rank}".encode() in env:
            return int(pid)
    return None


def test_kill(tmp):
    where = os.path.join(tmp, "killed")
    # all compressors on bitround stages: units of about a second, ten of them
    args = ["evaluate_combos", FILE, "--where-to-write", where, "--field-to-compress", VAR, "--filter-class",
            "bitround", "--serializer-class", "none", "--eval-data-size-limit", "2MB", "--threads-per-rank", "1",
            "--l1-threshold", "1e-3", "--search", "exhaustive", "--allow-shared-node"]
    # rank 0 holds after its first combo (DCTK_TEST_HOLD, a test hook) with most units still to come, whatever
    # the speed of this machine; it holds until mpirun ends it
    hold, log = os.path.join(tmp, "hold"), os.path.join(tmp, "kill.log")
    with open(hold, "w") as f:
        f.write("\n1\n")
    with open(log, "w") as errf:
        job = subprocess.Popen(["mpirun", "-n", "2", "--oversubscribe", DCTK] + args, stdout=subprocess.PIPE,
                               stderr=errf, env={**ENV, "DCTK_TEST_HOLD": hold}, text=True, start_new_session=True)
    deadline = time.time() + 120
    while time.time() < deadline and job.poll() is None and "[test hold]" not in open(log).read():
        time.sleep(0.05)
    pid = rank_pid(job.pid, 1)
    check(job.poll() is None and pid, "the job ended before rank 1 could be killed")
    if pid:
        os.kill(pid, signal.SIGKILL)
    t0 = time.time()
    try:
        job.communicate(timeout=30)
        print(f"the job ended {time.time() - t0:.1f} s after the kill, exit code {job.returncode}")
    except subprocess.TimeoutExpired:
        os.killpg(job.pid, signal.SIGKILL)
        job.communicate()
        check(False, "the job hung after rank 1 was killed")
        return
    check(job.returncode != 0, "the job reported success after a rank was killed")
    check(not os.path.exists(os.path.join(where, f"best_{VAR}.json")), "a best combo from an incomplete sweep")
    one = os.path.join(tmp, "kill_ref")
    ref = alone(args[:3] + [one] + args[4:-1])
    check(ref.returncode == 0, f"reference run failed: {ref.stderr}")
    want = {key(r): r for r in read_rows(os.path.join(one, f"config_space_{VAR}_rank0.csv"))}
    n = 0
    for f in rank_files(where):
        for r in read_rows(os.path.join(where, f)):
            check(key(r) in want, f"{f}: unknown combo {key(r)}")
            if key(r) in want:
                same_row(want[key(r)], r, f)
            n += 1
    check(n > 0 and n < len(want), f"{n} rows survived of {len(want)}: the kill was not mid-sweep")


def test_singleton(tmp):
    where = os.path.join(tmp, "alone")
    p = alone(evaluate(where))
    check(p.returncode == 0, f"single process failed: {p.stderr}")
    check("[rank" not in p.stderr and "MPI:" not in p.stderr, f"MPI output without mpirun:\n{p.stderr}")
    check(rank_files(where) == [f"config_space_{VAR}_rank0.csv"], f"CSVs: {rank_files(where)}")
    for f in (f"results_{VAR}.parquet", f"best_{VAR}.json"):
        check(os.path.exists(os.path.join(where, f)), f"{f} missing")
    one = os.path.join(tmp, "n1")
    q = mpirun(1, evaluate(one))
    check(q.returncode == 0, f"mpirun -n 1 failed: {q.stderr}")
    ref = {key(r): r for r in read_rows(os.path.join(where, f"config_space_{VAR}_rank0.csv"))}
    rows = {key(r): r for r in read_rows(os.path.join(one, f"config_space_{VAR}_rank0.csv"))}
    compare_to(ref, rows, [where, one], "mpirun -n 1")


def test_compress(tmp):
    where = os.path.join(tmp, "store")
    p = mpirun(2, ["compress", FILE, "--where-to-write", where] + NARROW + ["--allow-shared-node"])
    check(p.returncode == 0, f"compress under 2 ranks failed: {p.stderr}")
    check(p.stdout.count("store:") == 1, f"the store is not reported once:\n{p.stdout}")
    meta = os.path.join(where, "meccatemp.zarr", VAR, "zarr.json")
    check(os.path.exists(meta), f"{meta} missing")


def test_adaptive(tmp):
    """The adaptive search decides from measured ratios and errors only, so 1
    and 2 ranks screen alike: the same winner, the same finalists, and every
    row the same (pruned rows with the same reason)."""
    args = ["--field-to-compress", VAR, "--compressor-class", "zstd,lz4,zlib,blosc", "--filter-class",
            "none,bitround,quantize", "--serializer-class", "none,zfpy", "--eval-data-size-limit", "120KB",
            "--inner-chunk-mib", "0.03", "--override-existing-l1-error", "1e-3", "--threads-per-rank", "1"]
    one, two = os.path.join(tmp, "adaptive1"), os.path.join(tmp, "adaptive2")
    p = alone(["evaluate_combos", FILE, "--where-to-write", one] + args, timeout=300)
    check(p.returncode == 0, f"one process failed: {p.stderr}")
    q = mpirun(2, ["evaluate_combos", FILE, "--where-to-write", two] + args + ["--allow-shared-node"], timeout=300)
    check(q.returncode == 0, f"2 ranks failed: {q.stderr}")
    if p.returncode or q.returncode:
        return
    b1, b2 = (json.load(open(os.path.join(d, f"best_{VAR}.json"))) for d in (one, two))
    for k in ("comp_idx", "filt_idx", "ser_idx", "ratio", "l1_rel", "l2_rel", "linf_rel"):
        check(b1[k] == b2[k], f"best {k}: one process {b1[k]}, 2 ranks {b2[k]}")
    ref = {key(r): r for r in read_rows(os.path.join(one, f"config_space_{VAR}_rank0.csv"))}
    rows = {}
    for f in rank_files(two):
        rows.update({key(r): r for r in read_rows(os.path.join(two, f))})
    pruned = sum(r["error"].startswith("pruned:") for r in ref.values())
    check(0 < pruned < len(ref), f"{pruned} of {len(ref)} rows pruned: the search did not screen")
    check(set(ref) == set(rows), f"{len(ref)} rows alone, {len(rows)} with 2 ranks")
    for k in ref:
        if k in rows:
            for c in ["keep", "error", "fraction", "status"] + (METRICS if ref[k]["error"] == "" else []):
                check(ref[k][c] == rows[k][c], f"{k} {c}: one process {ref[k][c]}, 2 ranks {rows[k][c]}")


def resume_args(where):
    # all compressors on bitround stages: units of about a second, ten of them
    return ["evaluate_combos", FILE, "--where-to-write", where, "--field-to-compress", VAR, "--filter-class",
            "bitround", "--serializer-class", "none", "--eval-data-size-limit", "2MB", "--threads-per-rank", "1",
            "--l1-threshold", "1e-3", "--search", "exhaustive", "--allow-shared-node"]


def held_job(cmd, tmp, after, name):
    """cmd started under DCTK_TEST_HOLD, holding after `after` combos; returns it once it holds."""
    hold, log = os.path.join(tmp, name + ".hold"), os.path.join(tmp, name + ".log")
    with open(hold, "w") as f:
        f.write("\n%d\n" % after)
    with open(log, "w") as errf:
        job = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=errf, env={**ENV, "DCTK_TEST_HOLD": hold},
                               text=True, start_new_session=True)
    deadline = time.time() + 120
    while time.time() < deadline and job.poll() is None and "[test hold]" not in open(log).read():
        time.sleep(0.05)
    return job


def end(job):
    try:
        job.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        os.killpg(job.pid, signal.SIGKILL)
        job.communicate()


def recorded(where):
    """The distinct combos the CSVs of every rank hold."""
    keys = set()
    for f in rank_files(where):
        keys |= {key(r) for r in read_rows(os.path.join(where, f))}
    return keys


def resumed_rows(where, what):
    rows = {}
    for f in rank_files(where):
        for r in read_rows(os.path.join(where, f)):
            check(key(r) not in rows, f"{what}: combo {key(r)} recorded twice")
            rows[key(r)] = r
    return rows


def reused(stderr):
    m = re.search(r"reused (\d+) recorded rows", stderr)
    return int(m.group(1)) if m else -1


def test_resume(tmp):
    ref = os.path.join(tmp, "ref")
    p = alone(resume_args(ref), timeout=200)
    check(p.returncode == 0, f"reference run failed: {p.stderr}")
    want = {key(r): r for r in read_rows(os.path.join(ref, f"config_space_{VAR}_rank0.csv"))}

    # 2 ranks: rank 0 holds after its first combo (its unit never ends), rank 1 (which shows no progress,
    # so never holds) is killed once its CSV has a row; then one process resumes
    two = os.path.join(tmp, "two_then_one")
    job = held_job(["mpirun", "-n", "2", "--oversubscribe", DCTK] + resume_args(two), tmp, 1, "two")
    rank1_csv = os.path.join(two, f"config_space_{VAR}_rank1.csv")
    deadline = time.time() + 120
    while time.time() < deadline and job.poll() is None and not (os.path.exists(rank1_csv) and read_rows(rank1_csv)):
        time.sleep(0.02)
    pid = rank_pid(job.pid, 1)
    check(job.poll() is None and pid, "the job ended before rank 1 could be killed")
    if pid:
        os.kill(pid, signal.SIGKILL)
    end(job)
    have = recorded(two)
    check(len(rank_files(two)) == 2 and 0 < len(have) < len(want),
          f"the killed 2-rank run left {rank_files(two)} with {len(have)} of {len(want)} combos")
    by_rank1 = {key(r) for r in read_rows(os.path.join(two, f"config_space_{VAR}_rank1.csv"))}
    check(len(by_rank1) > 0, "rank 1 recorded no row before it was killed: nothing to show")
    p = alone(resume_args(two) + ["--resume"], timeout=200)
    check(p.returncode == 0, f"one process resuming 2 ranks' sweep failed: {p.stderr}")
    check(reused(p.stderr) == len(have), f"reused {reused(p.stderr)} rows, the ranks' CSVs hold {len(have)}")
    check(rank_files(two) == [f"config_space_{VAR}_rank0.csv"], f"after the resume: {rank_files(two)}")
    rows = resumed_rows(two, "2 ranks then 1")
    compare_to(want, rows, [ref, two], "2 ranks then 1")

    # one process held after a third of the combos and killed; then 2 ranks resume
    one = os.path.join(tmp, "one_then_two")
    alone_env = {k: v for k, v in ENV.items() if not k.startswith(("OMPI_COMM", "PMIX_", "PMI_"))}
    third = len(want) // 3
    hold, log = os.path.join(tmp, "one.hold"), os.path.join(tmp, "one.log")
    with open(hold, "w") as f:
        f.write("\n%d\n" % third)
    with open(log, "w") as errf:
        job = subprocess.Popen([DCTK] + resume_args(one), stdout=subprocess.PIPE, stderr=errf,
                               env={**alone_env, "DCTK_TEST_HOLD": hold}, text=True, start_new_session=True)
    deadline = time.time() + 120
    while time.time() < deadline and job.poll() is None and "[test hold]" not in open(log).read():
        time.sleep(0.05)
    check(job.poll() is None, "the single process ended before it could be killed")
    os.killpg(job.pid, signal.SIGKILL)
    job.communicate()
    have = recorded(one)
    check(0 < len(have) < len(want), f"the killed process recorded {len(have)} of {len(want)} combos")
    p = mpirun(2, resume_args(one) + ["--resume"], timeout=200)
    check(p.returncode == 0, f"2 ranks resuming one process's sweep failed: {p.stderr}")
    check(reused(p.stderr) == len(have), f"reused {reused(p.stderr)} rows, the CSV holds {len(have)}")
    files = rank_files(one)
    check(files == [f"config_space_{VAR}_rank0.csv", f"config_space_{VAR}_rank1.csv"], f"after the resume: {files}")
    rows = resumed_rows(one, "1 then 2 ranks")
    compare_to(want, rows, [ref, one], "1 then 2 ranks")
    if len(files) == 2:
        mine = {key(r) for r in read_rows(os.path.join(one, files[1]))}
        check(mine and not (mine & have), f"rank 1 ran {len(mine)} combos, {len(mine & have)} of them recorded")


TESTS = {"same": test_same, "adaptive": test_adaptive, "pieces": test_pieces, "refuse": test_refuse, "kill": test_kill,
         "singleton": test_singleton, "compress": test_compress, "resume": test_resume}

if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as tmp:
        TESTS[sys.argv[1]](tmp)
    for f in failures[:20]:
        print("FAIL:", f)
    print(f"{sys.argv[1]}: {'FAILED' if failures else 'ok'} ({len(failures)} failures)")
    sys.exit(1 if failures else 0)
