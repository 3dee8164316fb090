#!/usr/bin/python3
"""The web UI's HTTP API refuses what it must, with a clear status and a JSON
error: paths that leave the data root (.., absolute, a symlink pointing out)
get 403; an upload over --max-upload-mib gets 413 and leaves no file; unknown
job ids get 404; flags the job does not take get 400; a field that is not a
variable of the dataset (such as --help) gets 400, a flag's value stays one
word (--flag=value), a compression's field follows "--"; a flag naming a
file (--spec, --thresholds-table, a --pipeline file, also as @FILE) outside the
data root gets 403 and makes no job, one under it is passed as its real path,
an inline --pipeline as given; an upload under an
existing name gets 409 and leaves the earlier file as it was. Listening beyond the
loopback needs --token, and then every request carries it (401 otherwise);
without a token, Host names other than the loopback and cross-origin posts
are refused (403).

run_web_ui_vcluster writes a Slurm script for 4 nodes and 8 threads per rank;
bash runs it with stand-in srun and sbatch programs that record their
arguments: one task per node, --cpus-per-task 8, --threads-per-rank 8, and the
sweep's flags reach the sweep and the space and threshold flags the write step too.

--target-ratio is a budget field of the form (after the L1 and absolute
ones); a sweep posted with it is judged by it: the results name the target,
and their best is the smallest relative L1 of the rows whose ratio reaches it.

Twin rows (one pipeline under several comp_idx of a stage: the same filt_idx,
ser_idx and compressor JSON, as Python's csv module reads the job's
config_space_t_rank0.csv) are one candidate: the results the page shows give
each the lowest comp_idx of its pipeline (issue 33)."""
import csv
import http.client
import json
import os
import re
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time

import netCDF4
import numpy as np

DCTK = os.environ["DCTK"]
FILE = os.path.join(os.environ.get("DCTK_NCARG", "/usr/share/ncarg/data"), "cdf", "meccatemp.cdf")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import check, finish  # noqa: E402
from store_common import digest, read_store  # noqa: E402


class Server:
    def __init__(self, root, *extra, cmd="run_web_ui", env=None):
        self.p = subprocess.Popen([DCTK, cmd, "--port", "0", "--data-root", root, *extra],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        line = self.p.stdout.readline()
        m = re.search(r"listening on http://([0-9.]+):(\d+)/", line)
        if not m:
            self.p.kill()
            raise RuntimeError("no listening line: %r %s" % (line, self.p.stderr.read()))
        self.host, self.port = m.group(1), int(m.group(2))

    def request(self, method, path, body=None, headers=None):
        c = http.client.HTTPConnection(self.host, self.port, timeout=60)
        h = {"Content-Type": "application/json"} if isinstance(body, (dict, list)) else {}
        h.update(headers or {})
        if isinstance(body, (dict, list)):
            body = json.dumps(body)
        c.request(method, path, body=body, headers=h)
        r = c.getresponse()
        data = r.read()
        c.close()
        try:
            return r.status, json.loads(data), r
        except ValueError:
            return r.status, data, r

    def stop(self):
        """SIGTERM ends the server cleanly: exit 0, and nothing from the sanitizers when the program is built
        with them (the ASan stage of make check runs this test too: the jobs run inside the server)."""
        self.p.send_signal(signal.SIGTERM)
        _, err = self.p.communicate(timeout=60)
        check(self.p.returncode == 0 and "Sanitizer" not in err and "runtime error:" not in err,
              "the server ended with %d: %s" % (self.p.returncode, err[-3000:]))


def refused(srv, what, want, method, path, body=None, headers=None, needle=None):
    code, j, _ = srv.request(method, path, body, headers)
    ok = code == want and isinstance(j, dict) and j.get("error")
    check(ok, "%s: want %d with a JSON error, got %d %r" % (what, want, code, j))
    if ok and needle:
        check(needle in j["error"], "%s: error %r lacks %r" % (what, j["error"], needle))


def confinement(srv, root, outside):
    for p in ["../" + os.path.basename(outside) + "/secret.nc", "../../../../etc/passwd", "/etc/passwd",
              "uploads/../../x.nc", "link-out/secret.nc", "link-out"]:
        refused(srv, "fields of %s" % p, 403, "GET", "/api/fields?path=" + p.replace("/", "%2F"),
                needle="outside the data root")
    refused(srv, "sweep of ../", 403, "POST", "/api/jobs", {"kind": "sweep", "dataset": "../x.nc"})
    refused(srv, "slurm for a symlink out", 403, "POST", "/api/slurm",
            {"dataset": "link-out/secret.nc", "nodes": 1, "threads_per_rank": 1})
    refused(srv, "a file that is not there", 404, "GET", "/api/fields?path=nothing.nc")
    code, j, _ = srv.request("GET", "/api/files")
    paths = [f["path"] for f in j.get("files", [])]
    check(code == 200 and "data.nc" in paths, "file list: %r" % paths)
    check(not any("secret" in p for p in paths), "the list follows the link out: %r" % paths)
    code, j, _ = srv.request("GET", "/api/fields?path=data.nc")
    check(code == 200 and [v["name"] for v in j["vars"]][-1] == "t", "fields of data.nc: %r" % j)


def uploads(srv, root):
    big = b"\0" * (1024 * 1024 + 1)  # one byte over --max-upload-mib 1
    refused(srv, "oversized upload", 413, "POST", "/api/upload?name=big.nc", big,
            {"Content-Type": "application/octet-stream"}, needle="larger than the limit")
    left = os.listdir(os.path.join(root, "uploads")) if os.path.isdir(os.path.join(root, "uploads")) else []
    check(left == [], "the refused upload left files: %r" % left)
    with open(FILE, "rb") as f:
        small = f.read()
    code, j, _ = srv.request("POST", "/api/upload?name=../../evil%2Fm.cdf", small,
                             {"Content-Type": "application/octet-stream"})
    check(code == 200 and j.get("path") == "uploads/m.cdf", "upload under the limit: %d %r" % (code, j))
    with open(os.path.join(root, "uploads", "m.cdf"), "rb") as f:
        check(f.read() == small, "the uploaded bytes differ")
    refused(srv, "upload without a name", 400, "POST", "/api/upload", b"x",
            {"Content-Type": "application/octet-stream"})
    # the same name again never replaces the earlier file
    refused(srv, "an upload over an earlier one", 409, "POST", "/api/upload?name=m.cdf", b"other bytes",
            {"Content-Type": "application/octet-stream"}, needle="already exists")
    with open(os.path.join(root, "uploads", "m.cdf"), "rb") as f:
        check(f.read() == small, "a second upload of the same name changed the first")
    check(sorted(os.listdir(os.path.join(root, "uploads"))) == ["m.cdf"],
          "files after the refused upload: %r" % os.listdir(os.path.join(root, "uploads")))


def field_names(srv):
    """A field is a variable of the dataset, and no value ever starts an option."""
    for bad in ["--help", "-h", "nothere", "--field-to-compress=t"]:
        refused(srv, "a sweep of field %r" % bad, 400, "POST", "/api/jobs",
                {"kind": "sweep", "dataset": "data.nc", "field": bad}, needle="no field")
        refused(srv, "a Slurm script for field %r" % bad, 400, "POST", "/api/slurm",
                {"dataset": "data.nc", "field": bad, "nodes": 1, "threads_per_rank": 1}, needle="no field")
    quick = {"--compressor-class": "none", "--filter-class": "none", "--serializer-class": "none"}
    code, sweep, _ = srv.request("POST", "/api/jobs", {"kind": "sweep", "dataset": "data.nc", "field": "t",
                                                       "flags": dict(quick, **{"--eval-data-size-limit": "--help"})})
    check(code == 201 and sweep.get("id"), "a sweep of field t: %d %r" % (code, sweep))
    argv = sweep.get("argv", [])
    check("--help" not in argv and "--eval-data-size-limit=--help" in argv and "--field-to-compress=t" in argv,
          "a flag's value became a word of its own: %r" % argv)
    sid = sweep.get("id", "")
    for bad in ["--help", "-1", "nothere"]:
        refused(srv, "a compression of field %r" % bad, 400, "POST", "/api/jobs",
                {"kind": "compress", "sweep": sid, "var": bad, "combo": [-1, -1, -1]}, needle="no field")
    code, job, _ = srv.request("POST", "/api/jobs", {"kind": "compress", "sweep": sid, "var": "t",
                                                     "combo": [-1, -1, -1]})
    argv = job.get("argv", []) if isinstance(job, dict) else []
    check(code == 201 and argv[-5:] == ["--", "t", "-1", "-1", "-1"], "a compression of t: %d %r" % (code, argv))
    # the merge is for a finished compression's store only
    refused(srv, "the merge of a sweep", 409, "POST", "/api/jobs/%s/merge" % sid, {}, needle="not a finished compression")
    srv.request("POST", "/api/jobs/%s/cancel" % sid, {})
    srv.request("POST", "/api/jobs/%s/cancel" % job.get("id", ""), {})


def file_flags(srv, root, outside):
    """A flag naming a file the job reads (--thresholds-table, --spec, a --pipeline file) names one under the
    data root, as the dataset does (issue 37 finding 9): else 403, no job; under it, its real path is passed."""
    with open(os.path.join(outside, "table.csv"), "w") as f:
        f.write("Short Name,Unit,Existing L1 error\nt,K,0.5\n")
    shutil.copy(os.path.join(outside, "table.csv"), os.path.join(root, "table.csv"))
    with open(os.path.join(root, "spec.json"), "w") as f:
        f.write('{"default": {"l1-threshold": 0.001}}')
    quick = {"--compressor-class": "none", "--filter-class": "none", "--serializer-class": "none"}
    code, sweep, _ = srv.request("POST", "/api/jobs", {"kind": "sweep", "dataset": "data.nc", "field": "t",
                                                       "flags": quick})
    check(code == 201 and sweep.get("id"), "a sweep of t: %d %r" % (code, sweep))
    sid = sweep.get("id", "")
    before = sorted(os.listdir(os.path.join(root, ".dctk-web", "jobs")))
    for bad in [os.path.join(outside, "table.csv"), "../outside/table.csv", "link-out/table.csv", "/etc/passwd"]:
        refused(srv, "a compression with --thresholds-table %s" % bad, 403, "POST", "/api/jobs",
                {"kind": "compress", "sweep": sid, "var": "t", "combo": [-1, -1, -1],
                 "flags": {"--thresholds-table": bad}}, needle="outside the data root")
        refused(srv, "a sweep with --spec %s" % bad, 403, "POST", "/api/jobs",
                {"kind": "sweep", "dataset": "data.nc", "field": "t", "flags": dict(quick, **{"--spec": bad})},
                needle="outside the data root")
    pipe_out = os.path.join(outside, "pipe.json")
    with open(pipe_out, "w") as f:
        f.write('[{"name": "zstd", "configuration": {"level": 3}}]')
    shutil.copy(pipe_out, os.path.join(root, "pipe.json"))
    for bad in [pipe_out, "@" + pipe_out, "link-out/pipe.json", "@../outside/pipe.json"]:
        refused(srv, "a compression with --pipeline %s" % bad, 403, "POST", "/api/jobs",
                {"kind": "compress", "sweep": sid, "var": "t", "combo": [-1, -1, -1],
                 "flags": {"--pipeline": bad}}, needle="outside the data root")
    check(sorted(os.listdir(os.path.join(root, ".dctk-web", "jobs"))) == before, "a refused job was made")
    made = []
    for given, want in [("pipe.json", "--pipeline=" + os.path.realpath(os.path.join(root, "pipe.json"))),
                        ("@pipe.json", "--pipeline=" + os.path.realpath(os.path.join(root, "pipe.json"))),
                        ('[{"name": "zstd"}]', '--pipeline=[{"name": "zstd"}]')]:  # inline JSON names no file
        code, job, _ = srv.request("POST", "/api/jobs", {"kind": "compress", "sweep": sid, "var": "t",
                                                         "combo": [-1, -1, -1], "flags": {"--pipeline": given}})
        argv = job.get("argv", []) if isinstance(job, dict) else []
        check(code == 201 and want in argv, "--pipeline %s: %d %r" % (given, code, argv))
        made.append(job.get("id", "") if isinstance(job, dict) else "")
    code, job, _ = srv.request("POST", "/api/jobs", {"kind": "compress", "sweep": sid, "var": "t",
                                                     "combo": [-1, -1, -1], "flags": {"--thresholds-table":
                                                                                      "table.csv"}})
    argv = job.get("argv", []) if isinstance(job, dict) else []
    real = os.path.realpath(os.path.join(root, "table.csv"))
    check(code == 201 and "--thresholds-table=" + real in argv, "a table under the root: %d %r" % (code, argv))
    code, spec, _ = srv.request("POST", "/api/jobs", {"kind": "sweep", "dataset": "data.nc", "field": "t",
                                                      "flags": dict(quick, **{"--spec": "spec.json"})})
    argv = spec.get("argv", []) if isinstance(spec, dict) else []
    check(code == 201 and "--spec=" + os.path.realpath(os.path.join(root, "spec.json")) in argv,
          "a spec under the root: %d %r" % (code, argv))
    for j in made + [sid, job.get("id", "") if isinstance(job, dict) else "",
                     spec.get("id", "") if isinstance(spec, dict) else ""]:
        srv.request("POST", "/api/jobs/%s/cancel" % j, {})


def jobs(srv):
    for path in ["/api/jobs/20990101-000000-1", "/api/jobs/..%2F..%2Fetc", "/api/jobs/nope/results?var=t",
                 "/api/jobs/nope/download", "/api/jobs/nope/inspect"]:
        refused(srv, "unknown job %s" % path, 404, "GET", path, needle="no job")
    refused(srv, "cancel an unknown job", 404, "POST", "/api/jobs/nope/cancel", {})
    refused(srv, "merge an unknown job", 404, "POST", "/api/jobs/nope/merge", {}, needle="no job")
    refused(srv, "a flag the sweep does not take", 400, "POST", "/api/jobs",
            {"kind": "sweep", "dataset": "data.nc", "flags": {"--thresholds-table": "/etc/passwd"}},
            needle="not an option")
    refused(srv, "an unknown kind", 400, "POST", "/api/jobs", {"kind": "rm", "dataset": "data.nc"})
    refused(srv, "not JSON", 400, "POST", "/api/jobs", "{kind", {"Content-Type": "application/json"})
    refused(srv, "an unknown endpoint", 404, "GET", "/api/nothing")
    refused(srv, "a page that is not there", 404, "GET", "/nothing.html")
    code, j, r = srv.request("GET", "/")
    check(code == 200 and b"dc_toolkit" in j and "default-src 'self'" in r.getheader("Content-Security-Policy", ""),
          "the page: %d" % code)


def wait_job(srv, jid):
    """The job once it has ended (its status with the log)."""
    job = {}
    for _ in range(600):
        _, job, _ = srv.request("GET", "/api/jobs/%s" % jid)
        if not isinstance(job, dict) or job.get("state") not in ("queued", "running", "stopping"):
            break
        time.sleep(0.5)
    return job if isinstance(job, dict) else {}


def orphans(srv, root):
    """Jobs a killed server left (no exit code, no server holding them): lost, and the status says whether
    it had started (its log exists) so the page does not claim a job ran that never did. A job.json
    damaged on disk is no job (404, left out of the list), not a crash of the server."""
    base = os.path.join(root, ".dctk-web", "jobs")
    for jid, bad in [("20200101-000000-3", {"kind": "sweep", "argv": [DCTK, "evaluate_combos"]}),
                     ("20200101-000000-4", {"kind": 7, "argv": []}), ("20200101-000000-5", [1, 2])]:
        os.makedirs(os.path.join(base, jid))
        with open(os.path.join(base, jid, "job.json"), "w") as f:
            json.dump(dict(bad, id=jid) if isinstance(bad, dict) else bad, f)
        refused(srv, "the status of a damaged job.json", 404, "GET", "/api/jobs/%s" % jid, needle="no job")
        code, listed, _ = srv.request("GET", "/api/jobs")
        check(code == 200 and jid not in [j.get("id") for j in listed.get("jobs", [])],
              "the list with a damaged job.json: %d %r" % (code, listed))
        shutil.rmtree(os.path.join(base, jid))
    for jid, started in [("20200101-000000-1", False), ("20200101-000000-2", True)]:
        os.makedirs(os.path.join(base, jid, "out"))
        with open(os.path.join(base, jid, "job.json"), "w") as f:
            json.dump({"id": jid, "kind": "sweep", "dataset": "data.nc", "created": 0,
                       "argv": [DCTK, "evaluate_combos", os.path.join(root, "data.nc"), "--where-to-write",
                                os.path.join(base, jid, "out")]}, f)
        if started:
            with open(os.path.join(base, jid, "log"), "w") as f:
                f.write("t: 1/32 combos (3%), 0.6 combos/s, ETA --\n")
        code, job, _ = srv.request("GET", "/api/jobs/%s" % jid)
        check(code == 200 and job.get("state") == "lost" and job.get("started") is started and "exit" not in job,
              "a job a killed server left (started: %s): %d %r" % (started, code, job))
        shutil.rmtree(os.path.join(base, jid))


def sweep_job(srv, flags):
    """Posts a sweep of data.nc's t with these flags and waits for it: (code of the post, the job as posted,
    the job as it ended, its state)."""
    code, sweep, _ = srv.request("POST", "/api/jobs", {"kind": "sweep", "dataset": "data.nc", "field": "t",
                                                       "flags": flags})
    job, state = {}, None
    for _ in range(600):
        _, job, _ = srv.request("GET", "/api/jobs/%s" % sweep.get("id", ""))
        state = job.get("state") if isinstance(job, dict) else None
        if state not in ("queued", "running", "stopping"):
            break
        time.sleep(0.5)
    return code, sweep, job, state


def ratio_budget(srv):
    """--target-ratio is one of the form's budgets (beside the L1 and absolute ones, before the sample and
    the space); a sweep given it from the form has it as its budget, and the results say so."""
    code, conf, _ = srv.request("GET", "/api/config")
    names = [f["name"] for f in conf.get("sweep_flags", [])] if code == 200 else []
    check(names[:4] == ["--l1-threshold", "--abs-error", "--target-ratio", "--spec"],
          "the form's budget fields: %r" % names[:5])
    flags = {"--target-ratio": "6", "--compressor-class": "zstd", "--filter-class": "bitround",
             "--serializer-class": "none", "--eval-data-size-limit": "100KB"}
    code, sweep, _, state = sweep_job(srv, flags)
    check(code == 201 and "--target-ratio=6" in sweep.get("argv", []), "a sweep at ratio 6: %d %r" % (code, sweep))
    sid = sweep.get("id", "")
    check(state == "done", "the sweep at ratio 6 ended %r" % state)
    code, res, _ = srv.request("GET", "/api/jobs/%s/results?var=t" % sid)
    best = [r for r in res.get("rows", []) if res.get("best") and r[:3] == res["best"]] if code == 200 else []
    reach = [r for r in res.get("rows", []) if r[5]] if code == 200 else []
    check(code == 200 and res.get("target_ratio") == 6 and best and best[0][3] >= 6 and
          all(r[3] >= 6 for r in reach) and best[0][8] == min(r[8] for r in reach),
          "results at ratio 6: %d target %r best %r of %r" % (code, res.get("target_ratio") if code == 200 else None,
                                                              best, res.get("best") if code == 200 else None))
    return sid


def compress_all(srv, root, sid):
    """The workflow over a finished sweep (kind compress_all): `compress` in the sweep's folder with the sweep's
    flags that it takes, so the sweep's result still holds and t is written with it without a second sweep; the
    manifest records it; the merge the page offers completes the store, which zarrita opens through its
    consolidated metadata with t and the coordinates (these exactly netCDF4's values)."""
    refused(srv, "the workflow over a job that is no sweep", 404, "POST", "/api/jobs",
            {"kind": "compress_all", "sweep": "20990101-000000-1"}, needle="no sweep job")
    code, job, _ = srv.request("POST", "/api/jobs", {"kind": "compress_all", "sweep": sid,
                                                     "flags": {"--shard-mib": "1"}})
    argv = job.get("argv", []) if isinstance(job, dict) else []
    out = os.path.join(root, ".dctk-web", "jobs", sid, "out")
    check(code == 201 and argv[1:4] == ["compress", os.path.join(os.path.realpath(root), "data.nc"),
                                        os.path.realpath(out)] and "--field-to-compress=t" in argv and
          "--target-ratio=6" in argv and "--shard-mib=1" in argv and "--where-to-write" not in " ".join(argv),
          "the workflow's command line: %d %r" % (code, argv))
    job = wait_job(srv, job.get("id", "") if isinstance(job, dict) else "")
    log = job.get("log", "")
    check(job.get("state") == "done" and job.get("exit") == 0, "the workflow ended %r (exit %r): %s" %
          (job.get("state"), job.get("exit"), log[-2000:]))
    check("t: using the sweep result %s/best_t.json" % os.path.realpath(out) in log and "combos (" not in log,
          "the workflow swept again instead of using the sweep's result: %s" % log[-2000:])
    with open(os.path.join(out, "batch_manifest.json")) as f:
        rec = json.load(f)["fields"].get("t", {})
    with open(os.path.join(out, "best_t.json")) as f:
        best = json.load(f)
    check(rec.get("status") == "written" and json.dumps(rec.get("pipeline"), sort_keys=True) ==
          json.dumps(best.get("codecs"), sort_keys=True),
          "the manifest's record of t: %r, the sweep's best: %r" % (rec, best.get("codecs")))
    code, merged, _ = srv.request("POST", "/api/jobs/%s/merge" % job.get("id", ""), {})
    check(code == 200 and merged.get("exit") == 0 and merged.get("gaps", {}).get("complete"),
          "the merge of the workflow's store: %d %r" % (code, merged))
    got = read_store(os.path.join(out, "data.zarr"))
    with netCDF4.Dataset(os.path.join(root, "data.nc")) as nc:
        want = {k: digest(np.asarray(nc[k][:], dtype=nc[k].dtype)) for k in ("time", "lat", "lon")}
    arrays = got.get("arrays", {})
    check(sorted(got.get("listed", [])) == ["lat", "lon", "t", "time"] and "sha256" in arrays.get("t", {}) and
          all(arrays.get(k, {}).get("sha256") == v for k, v in want.items()),
          "zarrita's read of the merged store: %r" % got)


def twin_indices(srv, root):
    flags = {"--l1-threshold": "1e-3", "--compressor-class": "zstd", "--serializer-class": "none",
             "--eval-data-size-limit": "100KB"}
    code, sweep, job, state = sweep_job(srv, flags)
    check(code == 201, "a sweep with twin rows: %d %r" % (code, sweep))
    sid = sweep.get("id", "")
    check(state == "done", "the sweep with twin rows ended %r" % state)
    if state != "done":
        return
    with open(os.path.join(root, job["out"], "config_space_t_rank0.csv"), newline="") as f:
        csv_rows = list(csv.DictReader(f))
    lowest = {}
    for r in csv_rows:
        k = (int(r["filt_idx"]), int(r["ser_idx"]), r["compressor"])
        lowest[k] = min(lowest.get(k, 1 << 30), int(r["comp_idx"]))
    twins = [r for r in csv_rows if int(r["comp_idx"]) != lowest[(int(r["filt_idx"]), int(r["ser_idx"]),
                                                                    r["compressor"])]]
    check(twins, "the sweep has no twin rows: nothing to check")
    code, res, _ = srv.request("GET", "/api/jobs/%s/results?var=t" % sid)
    check(code == 200 and res.get("rows"), "results: %d" % code)
    shown = [(x[:3], c[0]) for x, c in zip(res.get("rows", []), res.get("codecs", []))] if code == 200 else []
    wrong = [(i, comp) for i, comp in shown if i[0] != lowest.get((i[1], i[2], comp))]
    check(not wrong, "rows shown under another index than their pipeline's lowest: %r" % wrong[:3])
    twin_pipes = {(int(r["filt_idx"]), int(r["ser_idx"]), r["compressor"]) for r in twins}
    check(any((i[1], i[2], comp) in twin_pipes for i, comp in shown), "no twin row among the results shown")


def origin(srv):
    refused(srv, "a foreign Host", 403, "GET", "/api/config", headers={"Host": "evil.example:80"})
    refused(srv, "a cross-origin post", 403, "POST", "/api/jobs", {"kind": "sweep", "dataset": "data.nc"},
            {"Origin": "http://evil.example"})


def tokens(root):
    r = subprocess.run([DCTK, "run_web_ui", "--listen", "0.0.0.0", "--port", "0", "--data-root", root],
                       capture_output=True, text=True, timeout=30)
    check(r.returncode == 2 and "--token" in r.stderr, "0.0.0.0 without a token: %d %r" % (r.returncode, r.stderr))
    srv = Server(root, "--listen", "127.0.0.1", "--token", "s3cret-token")
    try:
        refused(srv, "no token", 401, "GET", "/api/config", needle="token")
        refused(srv, "a wrong token", 401, "GET", "/api/config", headers={"X-DCTK-Token": "s3cret-tokem"})
        code, _, _ = srv.request("GET", "/api/config", headers={"X-DCTK-Token": "s3cret-token"})
        check(code == 200, "the token in a header: %d" % code)
        code, _, r = srv.request("GET", "/?token=s3cret-token")
        check(code == 200 and "dctk_token=s3cret-token" in (r.getheader("Set-Cookie") or ""), "the page sets the cookie")
        code, _, _ = srv.request("GET", "/api/jobs", headers={"Cookie": "dctk_token=s3cret-token"})
        check(code == 200, "the token in the cookie: %d" % code)
    finally:
        srv.stop()


FAKE = """#!/bin/sh
echo "$0 $*" >> "%s"
case "$*" in *evaluate_combos*)
  out=$(echo "$*" | sed 's/.*--where-to-write \\([^ ]*\\).*/\\1/'); echo '{}' > "$out/best_t.json";;
esac
case "$0" in *sbatch) echo "Submitted batch job 4242";; esac
"""


def slurm(root, tmp):
    bindir = os.path.join(tmp, "bin")
    os.makedirs(bindir)
    calls = os.path.join(tmp, "calls.txt")
    for prog in ["srun", "sbatch"]:
        p = os.path.join(bindir, prog)
        with open(p, "w") as f:
            f.write(FAKE % calls)
        os.chmod(p, stat.S_IRWXU)
    env = dict(os.environ, PATH=bindir + ":" + os.environ["PATH"])
    srv = Server(root, cmd="run_web_ui_vcluster", env=env)
    try:
        code, cfg, _ = srv.request("GET", "/api/config")
        check(cfg.get("vcluster") is True and cfg.get("sbatch") is True, "vcluster config: %r" % cfg)
        body = {"dataset": "data.nc", "field": "t", "nodes": 4, "threads_per_rank": 8, "time": "01:30:00",
                "partition": "normal", "flags": {"--compressor-class": "zstd", "--override-existing-l1-error": "1e-3",
                                                 "--threads-per-rank": "99"}, "submit": True}
        code, j, _ = srv.request("POST", "/api/slurm", body)
        check(code == 200 and j.get("submitted") is True and "4242" in j.get("sbatch_output", ""),
              "submitted with sbatch: %d %r" % (code, j))
        script = j.get("script", "")
        for line in ["#SBATCH --nodes=4", "#SBATCH --ntasks-per-node=1", "#SBATCH --cpus-per-task=8",
                     "#SBATCH --time=01:30:00", "#SBATCH --partition=normal"]:
            check(re.search("^%s$" % re.escape(line), script, re.M), "script lacks %r" % line)
        refused(srv, "a partition with a space", 400, "POST", "/api/slurm",
                dict(body, partition="a b", submit=False), needle="partition")
        refused(srv, "a Slurm sweep with --spec outside the root", 403, "POST", "/api/slurm",
                dict(body, flags={"--spec": "link-out/spec.json"}, submit=False), needle="outside the data root")
        refused(srv, "zero nodes", 400, "POST", "/api/slurm", dict(body, nodes=0, submit=False), needle="nodes")
        path = os.path.join(root, j["path"])
        os.makedirs(os.path.join(root, j["out"]), exist_ok=True)
        r = subprocess.run(["bash", path], capture_output=True, text=True, env=env, timeout=60)
        check(r.returncode == 0, "the script failed under stand-ins: %s %s" % (r.stdout, r.stderr))
        with open(calls) as f:
            lines = f.read().splitlines()
        sweep = [ln for ln in lines if "evaluate_combos" in ln]
        write = [ln for ln in lines if "compress_with_optimal" in ln]
        merge = [ln for ln in lines if "merge_compressed_fields" in ln]
        check(len(lines) >= 4 and lines[0].endswith("sbatch " + path), "sbatch call: %r" % lines[:1])
        check(len(sweep) == 1 and "--nodes=4 --ntasks-per-node=1 --cpus-per-task=8 " in sweep[0]
              and "--threads-per-rank 8 " in sweep[0] + " " and "--field-to-compress t" in sweep[0]
              and "--compressor-class=zstd" in sweep[0] and "--override-existing-l1-error=1e-3" in sweep[0]
              and "=99" not in sweep[0], "the sweep's srun: %r" % sweep)
        check(len(write) == 1 and "--cpus-per-task=8" in write[0] and "--compressor-class=zstd" in write[0]
              and "--threads-per-rank 8" in write[0] and "--override-existing-l1-error=1e-3" in write[0],
              "the write step (it verifies against the sweep's thresholds): %r" % write)
        check(len(merge) == 1, "the merge step: %r" % merge)
    finally:
        srv.stop()


def main():
    tmp = tempfile.mkdtemp(prefix="dctk-webhttp-")
    root = os.path.join(tmp, "root")
    outside = os.path.join(tmp, "outside")
    os.makedirs(root)
    os.makedirs(outside)
    shutil.copy(FILE, os.path.join(root, "data.nc"))
    shutil.copy(FILE, os.path.join(outside, "secret.nc"))
    os.symlink(outside, os.path.join(root, "link-out"))
    try:
        srv = Server(root, "--max-upload-mib", "1")
        try:
            confinement(srv, root, outside)
            uploads(srv, root)
            jobs(srv)
            orphans(srv, root)
            field_names(srv)
            file_flags(srv, root, outside)
            compress_all(srv, root, ratio_budget(srv))
            twin_indices(srv, root)
            origin(srv)
        finally:
            srv.stop()
        tokens(root)
        slurm(root, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    finish("web_http")


main()
