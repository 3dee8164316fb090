"""Reading callgrind's client-request dumps (bench/codecs_instr.py, bench/zarr_instr.py)."""
import glob
import re

# the compression libraries both sides call (Debian's; numcodecs bundles none)
LIBS = re.compile(r"lib(blosc|zstd|lz4|z|bz2|lzma)\.so")


def dump_costs(path):
    """(total, inside the compression libraries) instructions of one callgrind dump."""
    names, ob, total, lib, inclusive = {}, None, 0, 0, False
    with open(path) as f:
        for line in f:
            if line.startswith("ob="):
                m = re.match(r"ob=\((\d+)\)(?: (.*))?", line.rstrip("\n"))
                if m.group(2):
                    names[m.group(1)] = m.group(2)
                ob = names.get(m.group(1), "")
            elif line.startswith("cob="):
                m = re.match(r"cob=\((\d+)\)(?: (.*))?", line.rstrip("\n"))
                if m.group(2):
                    names[m.group(1)] = m.group(2)
            elif line.startswith("calls="):
                inclusive = True
            elif line[:1].isdigit() or line[:1] in "+-*":
                if inclusive:  # the line after calls= is the call's inclusive cost
                    inclusive = False
                    continue
                cost = int(line.split()[-1])
                total += cost
                if ob and LIBS.search(ob):
                    lib += cost
    return total, lib


def dumps(prefix):
    """The client-request dumps of one run, in order: [(label, total, lib)]."""
    out = []
    for path in glob.glob(prefix + ".*"):
        m = re.search(r"\.(\d+)$", path)
        if not m:
            continue
        with open(path) as f:
            label = next((ln.split("Client Request: ", 1)[1].strip() for ln in f if "Client Request: " in ln), None)
        if label:
            out.append((int(m.group(1)), label, *dump_costs(path)))
    return [o[1:] for o in sorted(out)]
