#!/usr/bin/python3
"""python/'s package, as `make install` installs it: a store whose arrays are
written with dctk.sz and dctk.ebcc chunks (real fields of libncarg-data) is
read through numcodecs' registry alone (numcodecs.get_codec finds the codecs
by the installed entry points, no import of ours), every inner chunk decoded
by the package, and the arrays must equal what dc_toolkit's own reader
decodes, bit for bit, and be within each codec's bound of the input.

    test_python_codecs.py PATH/TO/dctk_zarr_tool
The install is staged into a temporary prefix (cmake --install --prefix)."""
import glob
import json
import os
import subprocess
import sys
import tempfile

BUILD = os.environ["DCTK_BUILD"]
NCARG = os.environ.get("DCTK_NCARG", "/usr/share/ncarg/data")
HERE = os.path.dirname(os.path.abspath(__file__))


def staged():
    """Install into a temporary prefix and run this script again with its site directory on the path."""
    prefix = tempfile.mkdtemp(prefix="dctk_py_install_")
    r = subprocess.run(["cmake", "--install", BUILD, "--prefix", prefix], capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit("FAIL: cmake --install: " + r.stderr)
    (site,) = glob.glob(os.path.join(prefix, "lib", "python3*", "dist-packages"))
    env = dict(os.environ, PYTHONPATH=site, DCTK_STAGED=prefix)
    env.pop("DCTK_CODECS_LIBRARY", None)  # the installed package must find the installed library
    return subprocess.run([sys.executable] + sys.argv, env=env).returncode


def main():
    sys.path.insert(0, HERE)
    import netCDF4
    import numcodecs
    import numpy as np
    import zarr_shards
    from checks import check, finish

    check("dctk_codecs" not in sys.modules, "the package was imported before numcodecs needed it")
    sz = numcodecs.get_codec({"id": "dctk.sz", "error_bound": 0.05, "predictor": "lorenzo"})
    check(type(sz).__module__ == "dctk_codecs.numcodecs_codecs", "dctk.sz came from %s" % type(sz).__module__)
    check(sz.get_config() == {"id": "dctk.sz", "error_bound": 0.05, "predictor": "lorenzo"}, repr(sz.get_config()))
    check(os.environ["DCTK_STAGED"] in sys.modules["dctk_codecs._native"]._lib._name, "not the installed library")

    cases = [  # file, variable, codec, bound on |error|, inner chunk, shard
        ("cdf/meccatemp.cdf", "t", {"name": "dctk.sz", "configuration": {"error_bound": 0.05, "predictor": "lorenzo"}},
         0.05, "8,20,25", "16,40,50"),
        ("cdf/Tstorm.cdf", "t", {"name": "dctk.sz", "configuration": {"error_bound": 0.01, "predictor": "interp"}},
         0.01, "16,33,36", "32,33,36"),
        ("cdf/meccatemp.cdf", "t", {"name": "dctk.ebcc", "configuration": {"error_bound": 0.1, "base_rmse": 1.0}},
         0.1, "4,40,49", "16,40,49"),
        ("nug/rectilinear_grid_3D.nc", "rhumidity",
         {"name": "dctk.ebcc", "configuration": {"error_bound": 0.5, "base_rmse": 2.0}}, 0.5, "1,4,96,192",
         "1,8,96,192"),
    ]
    with tempfile.TemporaryDirectory() as tmp:
        store = os.path.join(tmp, "s.zarr")
        for k, (path, var, codec, bound, chunk, shard) in enumerate(cases):
            with netCDF4.Dataset(os.path.join(NCARG, path)) as ds:
                x = np.asarray(ds[var][...].filled(np.nan), dtype=np.float32)
            raw, back = os.path.join(tmp, "%d.raw" % k), os.path.join(tmp, "%d.back" % k)
            x.tofile(raw)
            shape = ",".join(map(str, x.shape))
            subprocess.check_call([zarr_shards.TOOL, "write", store, "a%d" % k, "--dtype", "float32", "--shape", shape,
                                   "--chunk", chunk, "--shard", shard, "--fill", "NaN", "--codecs", json.dumps([codec]),
                                   raw])
            got, stored = zarr_shards.read_store(store, "a%d" % k)
            subprocess.check_call([zarr_shards.TOOL, "read", store, "a%d" % k, back])
            ours = np.fromfile(back, dtype=np.float32).reshape(x.shape)
            err = float(np.nanmax(np.abs(got.astype(np.float64) - x)))
            check(stored > 1 and np.array_equal(got.view(np.uint32), ours.view(np.uint32)),
                  "%s %s: numcodecs' decode differs from dc_toolkit's" % (codec["name"], var))
            check(err <= bound, "%s %s: error %.3g over the bound %g" % (codec["name"], var, err, bound))
            print("%s on %s:%s: %d inner chunks decoded through numcodecs.get_codec, equal to dc_toolkit's read, "
                  "max error %.3g <= %g" % (codec["name"], path, var, stored, err, bound))
            # encode through the package too: the round trip stays within the bound
            part = x[:2] if x.ndim == 3 else x[:, :2]
            c = numcodecs.get_codec(dict(codec["configuration"], id=codec["name"]))
            rt = c.decode(c.encode(part), out=np.empty_like(part))
            check(float(np.nanmax(np.abs(rt.astype(np.float64) - part))) <= bound and
                  np.array_equal(np.isnan(rt), np.isnan(part)), "%s: the package's own round trip" % codec["name"])
    finish("python_codecs")


if __name__ == "__main__":
    sys.exit(main() if os.environ.get("DCTK_STAGED") else staged())
