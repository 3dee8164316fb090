"""Bad inputs get one clear line on stderr and a non-zero exit, never a crash.

Through `dc_toolkit inspect_dataset` (and dctk_dump_tool for variables):
missing variable (the line lists the data variables), text variable, a
classic netCDF cut in half, a netCDF-4 file cut in half, a netCDF header cut
short, random bytes named .nc, an empty file, a directory without Zarr
metadata, a missing file, a GRIB file cut in half, and a hyperslab outside
the variable. Each line names the file and says what is wrong.

Run by ctest with DCTK, DCTK_DUMP_TOOL and DCTK_NCARG set.
"""
import os
import shutil
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from io_common import DCTK, DUMP, NCARG, TMP, Checker, run_fail  # noqa: E402

C = Checker()


def cut(src, name, fraction):
    data = open(os.path.join(NCARG, src), "rb").read()
    path = os.path.join(TMP, name)
    with open(path, "wb") as f:
        f.write(data[: int(len(data) * fraction)])
    return path


def expect(args, *words, rc=1):
    """One stderr line containing every word, the given exit code (a
    signal would give a negative one)."""
    got_rc, lines = run_fail(args)
    what = " ".join(os.path.basename(a) for a in args[1:])
    C.check(got_rc == rc, f"{what}: exit {got_rc}, want {rc}; stderr {lines}")
    C.check(len(lines) == 1, f"{what}: {len(lines)} stderr lines: {lines}")
    for w in words:
        C.check(bool(lines) and w in lines[0], f"{what}: '{w}' not in {lines}")


def inspect(path, *words):
    expect([DCTK, "inspect_dataset", path], "dc_toolkit inspect_dataset: " + path, *words)


nc4 = os.path.join(NCARG, "cdf/nc4uvt.nc")
expect([DUMP, nc4, "nope", os.path.join(TMP, "x.bin")], nc4, "no variable 'nope'", "data variables: T, U, V")
sao = os.path.join(NCARG, "cdf/95031800_sao.cdf")
expect([DUMP, sao, "id", os.path.join(TMP, "x.bin")], sao, "variable 'id'", "char")
expect([DUMP, nc4, "T", os.path.join(TMP, "x.bin"), "0,10,0,0", "1,5,64,128"], nc4, "variable 'T'", "exceeds size 14",
       rc=1)

inspect(cut("nug/tas_rectilinear_grid_2D.nc", "half_classic.nc", 0.5), "truncated netCDF file")
inspect(cut("nug/atm_phy_mag0004_1985.nc", "half_64bit.nc", 0.5), "truncated netCDF file")
# the last record only partly there
inspect(cut("nug/tas_rectilinear_grid_2D.nc", "tail_classic.nc", 0.99), "truncated netCDF file")
inspect(cut("nug/atm_phy_mag0004_1985.nc", "tail_64bit.nc", 0.999), "truncated netCDF file")
inspect(cut("nug/tas_rectilinear_grid_2D.nc", "header_cut.nc", 0.0005), "truncated or corrupt netCDF header")
inspect(cut("cdf/nc4uvt.nc", "half_nc4.nc", 0.5), "truncated or corrupt netCDF file")

rnd = os.path.join(TMP, "random.nc")
with open(rnd, "wb") as f:
    f.write(os.urandom(100000).replace(b"CDF", b"cdf").replace(b"GRIB", b"grib").replace(b"\x89HDF", b"\x89hdf"))
inspect(rnd, "not a netCDF, GRIB or Zarr dataset")
empty = os.path.join(TMP, "empty.nc")
open(empty, "wb").close()
inspect(empty, "not a netCDF, GRIB or Zarr dataset (empty file)")
d = os.path.join(TMP, "plain_dir")
os.makedirs(d, exist_ok=True)
open(os.path.join(d, "README"), "w").write("not zarr\n")
inspect(d, "directory without zarr.json")
inspect(os.path.join(TMP, "does_not_exist.nc"), "No such file")

grib = cut("grb/fh.0012_tl.press_gr.awp211.grb2", "half.grb2", 0.5)
inspect(grib, "truncated or corrupt", "GRIB message")
grib1 = cut("grb/wafsgfs_L_t06z_intdsk60.grib2", "first_cut.grib2", 0.003)
inspect(grib1, "GRIB message 1")

# a file that only looks like netCDF by its name is still read by content
renamed = os.path.join(TMP, "actually_grib.nc")
shutil.copy(os.path.join(NCARG, "grb/wafsgfs_L_t06z_intdsk60.grib2"), renamed)
r_rc, r_err = run_fail([DCTK, "inspect_dataset", renamed])
# (the one line allowed names the variables split by level type, as cfgrib splits them)
C.check(r_rc == 0 and all("NAME_typeOfLevel" in ln for ln in r_err), f"GRIB named .nc: exit {r_rc}, stderr {r_err}")

C.finish("test_io_bad_inputs")
