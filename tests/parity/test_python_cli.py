"""Every command and option of the Python dc_toolkit (tests/parity/python_cli.txt, written from its
cli.py) is taken by ours with its meaning, or refused with a line naming our equivalent (issue 32,
items 3 and 7), and docs/guide.md section 11 says of each what the list says.

For each entry of the list:
  same, alias, differs  `dc_toolkit CMD [OPTION [VALUE]] --help` exits 0 (the parser takes the option
                        before it reaches --help) and the help lists the option; an alias's help line
                        says it is the Python tool's name and names ours;
  refused               `dc_toolkit CMD [OPTION [VALUE]]` exits 2, its one line on stderr names the
                        option or command as the Python tool's and contains the list's `here` words.
Then: the guide's table is the one scripts/python_cli_table.py makes from the list; outside it,
section 11 says "the same" of nothing; our own help says nothing is "the same as" a Python name the
list does not give as same or alias.

    test_python_cli.py            (DCTK: the dc_toolkit program; DCTK_SRC: the source tree)
"""
import os
import re
import subprocess
import sys

SRC = os.environ.get("DCTK_SRC") or os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(SRC, "scripts"))
import python_cli_table as pct  # noqa: E402

DCTK = os.environ.get("DCTK", "dc_toolkit")
failures = []


def check(ok, what):
    if not ok:
        failures.append(what)
        print("FAIL", what)


def run(*args):
    p = subprocess.run([DCTK, *args], capture_output=True, text=True, timeout=60)
    return p.returncode, p.stdout, p.stderr


_helps = {}


def help_lines(cmd):
    if cmd not in _helps:
        rc, out, _ = run(cmd, "--help")
        _helps[cmd] = out.splitlines() if rc == 0 else None
    return _helps[cmd]


def option_line(lines, opt):
    """The help line that lists opt (as itself or in a --x/--no-x pair)."""
    for line in lines:
        left = line.strip().split(" ")[0] if line.startswith("  --") else ""
        if opt in left.split("/"):
            return line
    return None


rows = pct.read_list()
_, top, _ = run("--help")
built = set(re.findall(r"^  (\w+) ", top, re.M))
web = {"run_web_ui", "run_web_ui_vcluster"}

seen = set()
for cmd, opt, value, status, here in rows:
    check((cmd, opt) not in seen, f"{cmd} {opt}: listed twice")
    seen.add((cmd, opt))
    if cmd in web and cmd not in built:
        print(f"skip {cmd} {opt}: built without the web UI")
        continue
    argv = [cmd] + ([opt] if opt else []) + ([value] if value else [])
    what = " ".join(argv)
    if status == "refused":
        rc, out, err = run(*argv)
        lines = err.strip().splitlines()
        check(rc == 2, f"{what}: exit {rc}, expected 2 (refused)")
        check(len(lines) == 1, f"{what}: expected one line on stderr, got {err!r}")
        name = opt or cmd
        check(bool(lines) and f"'{name}' is the Python dc_toolkit's" in lines[0] and here in lines[0],
              f"{what}: the refusal does not name it as the Python tool's with {here!r}: {err!r}")
        continue
    if not opt:
        rc, out, err = run(cmd) if cmd == "help" else run(cmd, "--help")
        check(rc == 0 and out.strip(), f"{cmd}: exit {rc} ({err.strip()}), not one of our commands")
        continue
    rc, out, err = run(*argv, "--help")
    check(rc == 0, f"{what} --help: exit {rc}: {err.strip()}")
    lines = help_lines(cmd) or []
    line = option_line(lines, opt)
    check(line is not None, f"{cmd} --help does not list {opt}")
    if status == "alias" and line:
        ours = here.split(" ")[0]
        check("the Python tool's" in line and ours in line,
              f"{cmd} {opt}: the help line does not say it is the Python tool's name of {ours}: {line!r}")
        check(option_line(lines, ours) is not None, f"{cmd} --help does not list {ours}, which {opt} names")

# A Python option the list leaves out, typed by a user, must still be refused (exit 2), not run.
rc, _, err = run("evaluate_combos", "x.nc", "--no-such-python-flag")
check(rc == 2 and "unknown option" in err, f"an unknown option: exit {rc}, {err!r}")

# The guide's table is the list's.
with open(os.path.join(SRC, "docs", "guide.md")) as f:
    guide = f.read()
block = pct.guide_block(guide)
check(block is not None, "docs/guide.md has no python-cli table markers")
check(block == pct.table(rows), "docs/guide.md section 11's table is not the list's: run scripts/python_cli_table.py --write")

# Outside the generated table, section 11 says "the same" of nothing: only the list may.
sec = guide[guide.index("## 11."):guide.index("## 12.")]
rest = sec.replace(block or "", "")
for line in rest.splitlines():
    if line.startswith("|"):
        check("the same" not in line.split("|")[2], f"guide section 11 says 'the same' outside the table: {line}")

# Our help calls an option "the Python tool's name" only when the list gives it as an alias (of one
# of the commands that has it there).
aliases = {o for c, o, _, s, _ in rows if s == "alias"}
for cmd in sorted(built):
    for line in help_lines(cmd) or []:
        if "the Python tool's name of" in line or "the Python tool's earlier name of" in line:
            opt = line.strip().split(" ")[0]
            check(opt in aliases,
                  f"{cmd} --help calls {opt} the Python tool's, but python_cli.txt does not list it as an alias")

print(f"{len(rows)} entries walked, {len(failures)} failure(s)")
sys.exit(1 if failures else 0)
