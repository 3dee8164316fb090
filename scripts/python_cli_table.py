#!/usr/bin/env python3
"""The migration table of docs/guide.md section 11, made from tests/parity/python_cli.txt (the Python
dc_toolkit's commands and options and what we do with each). Prints the table; with --write, puts it
into docs/guide.md between its markers. tests/parity/test_python_cli.py checks the guide against it.

    scripts/python_cli_table.py [--write]
"""
import os
import sys

SRC = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LIST = os.path.join(SRC, "tests", "parity", "python_cli.txt")
GUIDE = os.path.join(SRC, "docs", "guide.md")
BEGIN = "<!-- python-cli table: made by scripts/python_cli_table.py from tests/parity/python_cli.txt -->"
END = "<!-- end of the python-cli table -->"
STATUSES = ("same", "alias", "differs", "refused")


def read_list(path=LIST):
    """[(command, option, value, status, here)], in the file's order."""
    rows = []
    with open(path) as f:
        for n, line in enumerate(f, 1):
            if not line.strip() or line.startswith("#"):
                continue
            parts = [p.strip() for p in line.rstrip("\n").split("|", 4)]
            if len(parts) != 5 or parts[3] not in STATUSES:
                sys.exit(f"{path}:{n}: expected 'command | option | value | status | here', status one of {STATUSES}")
            rows.append(tuple(parts))
    return rows


def verdict(status, here):
    here = here.replace("|", "\\|")  # a table cell
    if status == "same":
        return "the same" + (f" ({here})" if here else "")
    if status == "alias":
        return f"the same, another name of our `{here}`"
    if status == "differs":
        return f"differs: {here}"
    return f"refused: {here}" if here.startswith("not ") else f"refused: use {here}"


def table(rows):
    """One row per command, then one per run of its options with the same status and words."""
    out = ["| Python tool | here |", "|---|---|"]
    i = 0
    while i < len(rows):
        cmd, opt, _, status, here = rows[i]
        if not opt:
            out.append(f"| `{cmd}` | {verdict(status, here)} |")
            i += 1
            continue
        opts = [opt]
        j = i + 1
        while j < len(rows) and rows[j][0] == cmd and rows[j][1] and rows[j][3:] == (status, here):
            opts.append(rows[j][1])
            j += 1
        names = ", ".join(f"`{o}`" for o in opts)
        out.append(f"| `{cmd}` {names} | {verdict(status, here)} |")
        i = j
    return "\n".join(out) + "\n"


def guide_block(text):
    """The table between the guide's markers, or None."""
    a, b = text.find(BEGIN), text.find(END)
    if a < 0 or b < a:
        return None
    return text[a + len(BEGIN):b].strip("\n") + "\n"


def main():
    t = table(read_list())
    if "--write" not in sys.argv[1:]:
        sys.stdout.write(t)
        return
    with open(GUIDE) as f:
        text = f.read()
    a, b = text.find(BEGIN), text.find(END)
    if a < 0 or b < a:
        sys.exit(f"{GUIDE}: no markers {BEGIN!r} ... {END!r}")
    with open(GUIDE, "w") as f:
        f.write(text[:a + len(BEGIN)] + "\n" + t + text[b:])


if __name__ == "__main__":
    main()
