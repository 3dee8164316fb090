"""Several processes write different arrays into one new store at the same
time, each then consolidating: no array is lost, the root group survives its
racing creation, and the last consolidation lists every array.

    zarr_concurrent.py PATH/TO/dctk_zarr_tool
"""
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

TOOL = sys.argv[1]
NPROC, ROUNDS = 3, 4


def main():
    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        data = {}
        for p in range(NPROC):
            x = (np.sin(np.arange(64 * 128 * 96) / (50.0 + p)) * 100 + p).astype("<f4").reshape(64, 128, 96)
            data[p] = x
            x.tofile(os.path.join(tmp, f"in{p}.raw"))
        for r in range(ROUNDS):
            store = os.path.join(tmp, f"r{r}.zarr")
            procs = []
            for p in range(NPROC):
                name = f"field{p}" if p % 2 == 0 else f"grp/field{p}"
                cmd = (f"'{TOOL}' write '{store}' {name} --dtype float32 --shape 64,128,96 --chunk 4,128,96 "
                       f"--shard 16,128,96 --threads 1 --codecs "
                       "'[{\"name\":\"bytes\",\"configuration\":{\"endian\":\"little\"}},"
                       "{\"name\":\"zstd\",\"configuration\":{\"level\":1,\"checksum\":false}}]' "
                       f"'{tmp}/in{p}.raw' && '{TOOL}' consolidate '{store}'")
                procs.append((name, subprocess.Popen(cmd, shell=True)))
            ok = all(pr.wait() == 0 for _, pr in procs)
            root = json.load(open(os.path.join(store, "zarr.json")))
            listed = root.get("consolidated_metadata", {}).get("metadata", {})
            ok = ok and root["node_type"] == "group"
            for p, (name, _) in enumerate(procs):
                out = os.path.join(tmp, "back.raw")
                ok = ok and subprocess.call([TOOL, "read", store, name, out]) == 0
                ok = ok and np.array_equal(np.fromfile(out, dtype="<f4").reshape(64, 128, 96), data[p])
                ok = ok and listed.get(name, {}).get("node_type") == "array"
            ok = ok and listed.get("grp", {}).get("node_type") == "group"
            leftovers = [f for _, _, fs in os.walk(store) for f in fs if ".tmp." in f]
            ok = ok and not leftovers
            print(f"{'ok' if ok else 'FAIL'} round {r}: {NPROC} writers, consolidated {sorted(listed)}")
            failures += not ok
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
