#!/usr/bin/python3
"""The default space, adaptive search, under a cgroup memory limit, ends with the unlimited run's winner (issue 24).

The real field t of Tstorm.cdf (a 297 KiB sample), the whole default space
with the default (adaptive) search and no --max-memory, 2 threads: once
without a limit, once in a cgroup v1 memory group of its own, nested in this
process's (so whatever limits that one still applies), limited to LIMIT. The
limited run must find the limit by itself: its [memory] line names the cgroup
and a budget of 0.8 x LIMIT. It must end (exit 0, no OOM kill in the group),
name the same best combo with the same ratio and errors, and peak below the
limit (the child's ru_maxrss and the sweep's [memcheck] line). Where no
memory group can be made (no cgroup v1 memory controller, not root), an
address-space limit (RLIMIT_AS, which any process may lower) stands in for
it, with a line.
"""
import json
import os
import re
import resource
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import check, finish  # noqa: E402

DCTK = os.environ["DCTK"]
NCARG = os.environ.get("DCTK_NCARG", "/usr/share/ncarg/data")
FILE = os.path.join(NCARG, "cdf", "Tstorm.cdf")
LIMIT = 96 << 20   # the process peaks near 65 MiB; the codecs' bounds alone would ask for more
AS_LIMIT = 3 << 30  # the fallback: address space (thread arenas reserve far more than they touch)
TMP = tempfile.mkdtemp(prefix="dctk-memcgroup-")


def own_memory_cgroup():
    """This process's cgroup v1 memory directory, or None."""
    try:
        for line in open("/proc/self/cgroup"):
            _, ctrl, path = line.rstrip("\n").split(":", 2)
            if "memory" in ctrl.split(","):
                d = "/sys/fs/cgroup/memory" + path
                return d if os.path.isdir(d) else None
    except OSError:
        pass
    return None


def make_group():
    base = own_memory_cgroup()
    if not base:
        return None
    group = os.path.join(base, "dctk-test-%d" % os.getpid())
    try:
        os.mkdir(group)
        with open(os.path.join(group, "memory.limit_in_bytes"), "w") as f:
            f.write(str(LIMIT))
        if int(open(os.path.join(group, "memory.limit_in_bytes")).read()) > LIMIT:
            raise OSError("limit not taken")
        return group
    except OSError as e:
        print("no cgroup memory group (%s)" % e)
        try:
            os.rmdir(group)
        except OSError:
            pass
        return None


def run(name, group=None, as_limit=0):
    out = os.path.join(TMP, name)
    cmd = [DCTK, "evaluate_combos", FILE, "--where-to-write", out, "--field-to-compress", "t",
           "--eval-data-size-limit", "50KB", "--l1-threshold", "1e-3", "--threads-per-rank", "2"]

    def pre():
        if group:
            with open(os.path.join(group, "cgroup.procs"), "w") as f:
                f.write(str(os.getpid()))
        if as_limit:
            resource.setrlimit(resource.RLIMIT_AS, (as_limit, as_limit))
    log = open(os.path.join(TMP, name + ".log"), "w+")
    p = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, preexec_fn=pre)
    _, status, usage = os.wait4(p.pid, 0)
    p.returncode = os.waitstatus_to_exitcode(status)
    log.seek(0)
    text = log.read()
    check(p.returncode == 0, "%s: evaluate_combos exited %d:\n%s" % (name, p.returncode, text[-1500:]))
    best = {}
    if os.path.exists(os.path.join(out, "best_t.json")):
        b = json.load(open(os.path.join(out, "best_t.json")))
        best = {k: b.get(k) for k in ("comp_idx", "filt_idx", "ser_idx", "ratio", "l1_rel", "l2_rel", "linf_rel")}
    return {"text": text, "best": best, "maxrss": usage.ru_maxrss * 1024}


def main():
    free = run("free")
    check(free["best"].get("comp_idx") is not None, "no best combo without a limit")
    group = make_group()
    if group:
        try:
            lim = run("cgroup", group=group)
            oom = open(os.path.join(group, "memory.oom_control")).read()
            check(re.search(r"oom_kill 0\b", oom) or "oom_kill" not in oom, "OOM kills in the group: " + oom)
        finally:
            os.rmdir(group)
        source, want = "cgroup memory.max", LIMIT
    else:
        print("no cgroup memory group: the limit is RLIMIT_AS instead")
        lim = run("rlimit", as_limit=AS_LIMIT)
        source, want = "ulimit -v", AS_LIMIT
    m = re.search(r"\[memory\] sample .*?budget ([\d.]+) MiB \(([^)]*)\)", lim["text"])
    check(m is not None, "no [memory] line under the limit")
    if m:
        check(m.group(2).startswith(source), "the budget's source is %r, expected %r" % (m.group(2), source))
        check(abs(float(m.group(1)) - 0.8 * want / 1048576) < 0.2,
              "budget %s MiB, expected 0.8 x %.1f MiB" % (m.group(1), want / 1048576))
    check(lim["best"] == free["best"], "best under the limit %s, without %s" % (lim["best"], free["best"]))
    c = re.search(r"\[memcheck\] peak estimate ([\d.]+) MiB .*?measured peak RSS ([\d.]+) MiB", lim["text"])
    check(c is not None, "no [memcheck] line under the limit")
    if group:
        check(lim["maxrss"] <= LIMIT, "peak RSS %.1f MiB over the %.1f MiB limit" % (lim["maxrss"] / 2**20, LIMIT / 2**20))
    print("limit %s: peak RSS %.1f MiB (unlimited %.1f MiB), %s" % (source, lim["maxrss"] / 2**20,
                                                                     free["maxrss"] / 2**20, c.group(0) if c else ""))
    finish("memory_cgroup")


if __name__ == "__main__":
    main()
