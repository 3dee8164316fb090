"""Runs the user guide (docs/guide.md) so that it cannot rot (issue 23).

Every fenced block is run in order, in one scratch folder, with the dc_toolkit under test
first on PATH:
- ```sh        run by bash -euo pipefail (state carries over through the folder, not variables);
- ```sh mpi    the same, under Open MPI on this one machine (OMPI_ALLOW_RUN_AS_ROOT set);
- ```sh slurm  Slurm is not here: each line's dc_toolkit command is run without its launcher
               (srun and its options), and an sbatch line's script must exist and parse (bash -n);
- ```sh setup  install steps: `make TARGET` lines are dry-run (make -n) in the source tree,
               other lines (the dependency script) are run there as written;
- ```js        written to a .mjs file and run by node, NODE_PATH at tests/js/node_modules
               (DuckDB, as the guide shows it);
- ```python    run by python3;
- ```text, ```csv, ```json are output shown, not run.
A block fails the test when it exits non-zero; its output is shown.

Environment (dctk_script_test): DCTK, DCTK_SRC, NODE_PATH."""
import os
import re
import shlex
import subprocess
import sys
import tempfile
import time

DCTK = os.environ["DCTK"]
SRC = os.environ["DCTK_SRC"]
GUIDE = os.path.join(SRC, "docs", "guide.md")
RUNNABLE = {"sh", "js", "python"}


def blocks(text):
    for m in re.finditer(r"^```([a-z]*)([^\n]*)\n(.*?)^```", text, re.S | re.M):
        yield m.group(1), m.group(2).strip(), m.group(3), text[:m.start()].count("\n") + 1


def env():
    e = dict(os.environ)
    e["PATH"] = os.path.dirname(os.path.abspath(DCTK)) + os.pathsep + e.get("PATH", "")
    e.setdefault("NODE_PATH", os.path.join(SRC, "tests", "js", "node_modules"))
    e.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", OMPI_MCA_rmaps_base_oversubscribe="1")
    return e


def slurm_lines(body):
    """Each line as it runs here: srun's options dropped, sbatch's script checked."""
    out = []
    for line in re.sub(r"\\\n\s*", " ", body).splitlines():
        line = re.sub(r"\s+#.*$", "", line).strip()
        if not line or line.startswith("#"):
            continue
        words = shlex.split(line)
        if words[0] == "srun":
            k = 1
            while k < len(words) and words[k].startswith("-"):
                k += 1
            out.append(shlex.join(words[k:]))
        elif words[0] == "sbatch":
            script = [w for w in words[1:] if not w.startswith("-")][-1]
            out.append("bash -n " + shlex.quote(os.path.join(SRC, script)))
        else:
            out.append(line)
    return "\n".join(out)


def setup_lines(body):
    out = []
    for line in body.splitlines():
        line = re.sub(r"\s+#.*$", "", line).strip()
        if line.startswith("make "):
            out.append("make -n " + line[5:] + " >/dev/null")
        elif line:
            out.append(line)
    return "\n".join(out)


def run_block(lang, tag, body, cwd, where):
    if lang == "sh" and tag == "slurm":
        cmd, body = ["bash", "-euo", "pipefail", "-c"], slurm_lines(body)
    elif lang == "sh" and tag == "setup":
        cmd, body, cwd = ["bash", "-euo", "pipefail", "-c"], setup_lines(body), SRC
    elif lang == "sh":
        cmd = ["bash", "-euo", "pipefail", "-c"]
    elif lang == "js":
        # ES modules ignore NODE_PATH: they find packages in a node_modules beside the file
        link = os.path.join(cwd, "node_modules")
        if not os.path.exists(link):
            os.symlink(env()["NODE_PATH"], link)
        path = os.path.join(cwd, "guide_block.mjs")
        with open(path, "w") as f:
            f.write(body)
        cmd, body = ["node", path], None
    else:
        cmd = [sys.executable, "-c"]  # the python the suite uses (DCTK_PYTHON), with its modules
    t0 = time.time()
    r = subprocess.run(cmd + ([body] if body is not None else []), cwd=cwd, env=env(), capture_output=True,
                       text=True, timeout=600)
    print(f"--- {where} ({lang} {tag}) exit {r.returncode} in {time.time() - t0:.1f} s")
    if r.returncode != 0:
        print(r.stdout[-3000:], r.stderr[-3000:], sep="\n")
        sys.exit(f"guide_check: the block at {where} failed")


def main():
    text = open(GUIDE).read()
    n = 0
    with tempfile.TemporaryDirectory(prefix="dctk_guide_") as cwd:
        for lang, tag, body, line in blocks(text):
            if lang in RUNNABLE:
                run_block(lang, tag, body, cwd, f"docs/guide.md:{line}")
                n += 1
    if n == 0:
        sys.exit("guide_check: no runnable block in docs/guide.md")
    print(f"guide_check: {n} blocks of docs/guide.md ran")


main()
