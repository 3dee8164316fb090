"""Every command's help agrees with itself and with the README (issue 23).

- `dc_toolkit --help` lists the same commands as the README's command table, with the same
  one-line description;
- each row's synopsis is the command's usage line (`[options]` aside), and each usage line
  follows one convention: positionals, then required flags, then `[options]`, no argument
  offered twice (a positional and a flag for the same thing);
- every `dc_toolkit CMD ...` line in a ```sh block of README.md and docs/guide.md names a
  command that exists, uses only flags its --help lists, and gives a number of positionals
  the usage allows;
- every option listed by --help is described (no empty help), and no two commands call the
  worker-thread count by different names.

Environment (dctk_script_test): DCTK, DCTK_SRC."""
import os
import re
import shlex
import subprocess
import sys

DCTK = os.environ["DCTK"]
SRC = os.environ["DCTK_SRC"]
failures = []


def check(ok, what):
    if not ok:
        failures.append(what)
        print("FAIL:", what)


def run(*args):
    return subprocess.run([DCTK, *args], capture_output=True, text=True, timeout=30)


def commands():
    out = run("--help").stdout
    block = out.split("commands:\n", 1)[1].split("\n\n", 1)[0]
    return {m.group(1): m.group(2).strip() for m in re.finditer(r"^  (\S+)\s+(.*)$", block, re.M)}


def help_of(cmd):
    out = run(cmd, "--help").stdout
    usage = re.search(r"^usage: dc_toolkit (\S+)(.*)$", out, re.M)
    opts = {}
    if "\noptions:\n" in out:
        for line in out.split("\noptions:\n", 1)[1].splitlines():
            m = re.match(r"^  (--[a-z0-9-]+)(?:/(--[a-z0-9-]+))?(?: (\S+))?\s{2,}(.*)$", line)
            if m:
                opts[m.group(1)] = (m.group(3), m.group(4))
                if m.group(2):
                    opts[m.group(2)] = (None, m.group(4))
    return (usage.group(2).strip() if usage else None), opts, out


def readme_table(text):
    sect = text.split("## Commands", 1)[1]
    sect = re.search(r"^\|.*?(?=^[^|])", sect, re.M | re.S).group(0)  # its first table only
    rows = {}
    for m in re.finditer(r"^\| `([a-z_]+)((?: [^`]*)?)` \| (.*?) \|$", sect, re.M):
        rows[m.group(1)] = (m.group(2).strip().replace("\\|", "|"), m.group(3).strip())
    return rows


def usage_parts(usage):
    """The usage line as (kind, token): kind 'pos', 'optpos' (optional positional) or 'flag'
    (a flag with its value, or a bracketed flag, or [options])."""
    toks = re.findall(r"\[[^\]]*\]|\S+", usage)
    parts, k = [], 0
    while k < len(toks):
        t = toks[k]
        if t.startswith("--"):
            value = k + 1 < len(toks) and not toks[k + 1].startswith(("-", "["))
            parts.append(("flag", t + (" " + toks[k + 1] if value else "")))
            k += 2 if value else 1
            continue
        if t.startswith("["):
            inner = t[1:-1]
            parts.append(("flag" if inner == "options" or inner.startswith("--") else "optpos", t))
        else:
            parts.append(("pos", t))
        k += 1
    return parts


def usage_shape(usage):
    """Positionals (min, max) the usage line allows."""
    parts = usage_parts(usage)
    lo = sum(1 for kind, _ in parts if kind == "pos")
    hi = lo + sum(len(t[1:-1].split()) for kind, t in parts if kind == "optpos")
    return lo, hi


def sh_lines(text):
    for block in re.findall(r"^```sh[^\n]*\n(.*?)^```", text, re.S | re.M):
        joined = re.sub(r"\\\n\s*", " ", block)
        for line in joined.splitlines():
            line = re.sub(r"\s+#.*$", "", line).strip()
            if "dc_toolkit " in line:
                yield line


def check_line(line, cmds, helps, where):
    try:
        words = shlex.split(line)
    except ValueError:
        check(False, f"{where}: cannot split {line!r}")
        return
    i = next((k for k, w in enumerate(words) if w == "dc_toolkit" or w.endswith("/dc_toolkit")), None)
    if i is None or i + 1 >= len(words):
        return
    cmd = words[i + 1]
    if cmd.startswith("-"):
        return
    if cmd == "help":  # `dc_toolkit help [CMD]` prints the commands' help
        check(len(words) <= i + 3 and (len(words) == i + 2 or words[i + 2] in cmds), f"{where}: {line!r}")
        return
    if cmd not in cmds:
        check(False, f"{where}: {line!r}: no command {cmd}")
        return
    usage, opts, _ = helps[cmd]
    rest, npos = words[i + 2:], 0
    k = 0
    while k < len(rest):
        w = rest[k]
        if w in ("|", "&&", ";", ">", "2>&1") or w.startswith(">"):
            break
        if w.startswith("--"):
            name = w.split("=", 1)[0]
            check(name in opts, f"{where}: {line!r}: {cmd} has no option {name}")
            if name in opts and opts[name][0] and "=" not in w:
                k += 1
        else:
            npos += 1
        k += 1
    lo, hi = usage_shape(usage or "")
    if "--combo" in rest or "--pipeline" in rest:
        lo = min(lo, 3)
    if "--where-to-write" in rest and re.search(r"\bDIR\b", usage.split("[")[0].split("--")[0]):
        lo, hi = lo - 1, hi - 1  # DIR given as the flag its options list
    check(lo <= npos <= hi, f"{where}: {line!r}: {npos} positionals, the usage allows {lo}..{hi} ({usage})")


cmds = commands()
helps = {c: help_of(c) for c in cmds}
readme = open(os.path.join(SRC, "README.md")).read()
table = readme_table(readme)
check(set(table) == set(cmds), f"README table {sorted(table)} vs --help {sorted(cmds)}")
for c, summary in cmds.items():
    usage, opts, out = helps[c]
    check(usage is not None, f"{c}: no usage line")
    if usage is None:
        continue
    core = re.sub(r"\s*\[options\]", "", usage).strip()
    if c in table:
        check(table[c][0] == core, f"{c}: README synopsis {table[c][0]!r} vs usage {core!r}")
        check(table[c][1] == summary, f"{c}: README says {table[c][1]!r}, --help says {summary!r}")
    # one convention: positionals, then flags, then [options]
    seen_flag = False
    for kind, t in usage_parts(usage):
        check(not (seen_flag and kind != "flag"), f"{c}: usage {usage!r}: a positional ({t}) after a flag")
        seen_flag = seen_flag or kind == "flag"
    check(bool(opts) == ("\noptions:\n" in out) and "--help" in opts, f"{c}: an options header listing --help")
    for o, (_, text) in opts.items():
        check(bool(text.strip()), f"{c}: option {o} has no description")
    for flag in re.findall(r"--[a-z0-9-]+", usage):
        check(flag in opts, f"{c}: usage names {flag}, which its options do not list")
    # the same thing offered as a positional and as a flag
    check(not ("WHERE_TO_WRITE" in usage and "--where-to-write" in usage), f"{c}: usage offers DIR twice: {usage}")
    # one thread flag of ours; the Python tool's names of it (issue 32) say so in their help
    thread_flags = sorted(o for o, (_, text) in opts.items() if "thread" in o and not text.startswith("the Python tool's"))
    check(len(thread_flags) <= 1, f"{c}: several thread flags {thread_flags}")
thread_names = {o for c in cmds for o, (_, text) in helps[c][1].items()
                if "thread" in o and not text.startswith("the Python tool's")}
check(len(thread_names) <= 1, f"commands call the thread count by different names: {sorted(thread_names)}")

docs = [("README.md", readme)]
guide = os.path.join(SRC, "docs", "guide.md")
if os.path.exists(guide):
    docs.append(("docs/guide.md", open(guide).read()))
n = 0
for name, text in docs:
    for line in sh_lines(text):
        check_line(line, cmds, helps, name)
        n += 1
        m = re.search(r"dc_toolkit (\S+)", line)
        if m and m.group(1) in cmds:
            pass
# the hints a command prints name paths that exist from where the user stands
r = run("compress_with_optimal", "/nonexistent.nc", "some/dir", "t")
check(r.returncode == 2 and "--combo some/dir/best_t.json" in r.stderr, f"the --combo hint: {r.stderr!r}")
print(f"help_readme_check: {len(cmds)} commands, {n} example lines")
if failures:
    sys.exit("help_readme_check: %d failure(s)" % len(failures))
print("help_readme_check: OK")
