"""Bad inputs to open_zarr_and_inspect and from_zarr_to_netcdf: one line on
stderr naming the file and the problem, a non-zero exit, and no netCDF file
left behind (nor a temporary one; a file already at --out stays as it was).

Cases: a missing path, a regular file, a folder without Zarr metadata, a
shard whose index was altered (CRC mismatch), a shard cut short, a chunk
whose compressed bytes were altered, and --out in a missing folder, below a
regular file, or naming a folder; a default output that already exists
(x.zarr next to its input x.nc). (Tests run as root, so a read-only folder
would not stop the write; those cases take its place.)

    export_errors.py FIXTURE_DIR
"""
import atexit
import os
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from export_common import DCTK, Checker, manifest, run  # noqa: E402

FIX = sys.argv[1]
TMP = tempfile.mkdtemp(prefix="dctk-export-errors-")
atexit.register(shutil.rmtree, TMP, ignore_errors=True)
C = Checker("export errors")
SENTINEL = b"an older file that a failed export must not touch\n"


def leftovers(folder, stem):
    return [f for f in os.listdir(folder) if f.startswith(stem)]


def expect_fail(cmd, args, *words, rc=1):
    r = run([DCTK, cmd, *args], check=False)
    lines = r.stderr.strip().splitlines()
    what = f"{cmd} {' '.join(os.path.basename(a.rstrip('/')) for a in args)}"
    C.check(r.returncode == rc, f"{what}: exit {r.returncode}, want {rc}")
    C.check(len(lines) == 1, f"{what}: {len(lines)} stderr lines: {lines}")
    for w in (f"dc_toolkit {cmd}: ",) + words:
        C.check(bool(lines) and w in lines[0], f"{what}: {w!r} not in {lines}")
    print(f"{what}: exit {r.returncode}: {lines[0] if lines else ''}")


def both(store, *words):
    """Both commands fail on store; the export leaves nothing, keeps an older file."""
    expect_fail("open_zarr_and_inspect", [store], store, *words)
    out = os.path.join(TMP, "out.nc")
    with open(out, "wb") as f:
        f.write(SENTINEL)
    expect_fail("from_zarr_to_netcdf", [store, "--out", out], store, *words)
    C.check(open(out, "rb").read() == SENTINEL, f"{store}: the file already at --out was changed")
    os.remove(out)
    C.check(leftovers(TMP, "out.nc") == [], f"{store}: left {leftovers(TMP, 'out.nc')}")
    default = store.rstrip("/")[: -len(".zarr")] + ".nc" if store.endswith(".zarr") else None
    if default and os.path.isdir(os.path.dirname(default)):
        expect_fail("from_zarr_to_netcdf", [store], store, *words)
        C.check(leftovers(os.path.dirname(default), os.path.basename(default)) == [],
                f"{store}: default output left behind")


def damaged_copy(src, name, damage):
    dst = os.path.join(TMP, name + ".zarr")
    shutil.copytree(src, dst)
    damage(dst)
    return dst


def flip(path, offset):
    b = bytearray(open(path, "rb").read())
    b[offset] ^= 0xFF
    open(path, "wb").write(b)


def cut(path):
    b = open(path, "rb").read()
    open(path, "wb").write(b[: len(b) // 2])


def main():
    store = manifest(FIX)["stores"]["rect"]["store"]
    shard = os.path.join("t", "c", "0", "0", "0", "0")
    lossy_shard = os.path.join("var3", "c", "0", "0", "0", "0")

    both(os.path.join(TMP, "missing.zarr"), "not a Zarr store", "no such directory")
    both(manifest(FIX)["stores"]["rect"]["source"], "not a Zarr store", "not a directory")
    os.makedirs(os.path.join(TMP, "empty.zarr"))
    both(os.path.join(TMP, "empty.zarr"), "not a Zarr store", "no zarr.json, .zarray or .zgroup")
    # the index sits at the end: entries, then their CRC-32C
    both(damaged_copy(store, "bad_index", lambda d: flip(os.path.join(d, shard), -10)), "t/c/0/0/0/0",
         "checksum mismatch")
    both(damaged_copy(store, "cut_shard", lambda d: cut(os.path.join(d, shard))), "t/c/0/0/0/0")
    # zstd without its checksum: the altered frame fails to decode or decodes to the wrong size
    both(damaged_copy(store, "bad_chunk", lambda d: flip(os.path.join(d, lossy_shard), 5)), "var3/c/0/0/0/0")

    good = manifest(FIX)["stores"]["tos"]["store"]
    expect_fail("from_zarr_to_netcdf", [good, "--out", os.path.join(TMP, "no", "such", "x.nc")],
                os.path.join(TMP, "no", "such", "x.nc"), "cannot create", "No such file or directory")
    blocker = os.path.join(TMP, "a_file")
    open(blocker, "w").close()
    expect_fail("from_zarr_to_netcdf", [good, "--out", os.path.join(blocker, "x.nc")], "cannot create",
                "Not a directory")
    expect_fail("from_zarr_to_netcdf", [good, "--out", TMP], TMP, "is a directory", rc=2)
    C.check(leftovers(TMP, "a_file") == ["a_file"] and not any(".tmp." in f for f in os.listdir(TMP)),
            f"temporary files left in {TMP}: {os.listdir(TMP)}")
    expect_fail("from_zarr_to_netcdf", [good, "--deflate-level", "12"], "--deflate-level", rc=2)
    # the default output of x.zarr is x.nc, which may be the input the store came from
    twin = os.path.join(TMP, "twin.zarr")
    shutil.copytree(good, twin)
    with open(os.path.join(TMP, "twin.nc"), "wb") as f:
        f.write(SENTINEL)
    expect_fail("from_zarr_to_netcdf", [twin], os.path.join(TMP, "twin.nc"), "not overwritten", "--out", rc=2)
    C.check(open(os.path.join(TMP, "twin.nc"), "rb").read() == SENTINEL, "the default output was replaced")
    C.finish()


if __name__ == "__main__":
    main()
