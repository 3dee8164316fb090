# The Spack recipe of dc_toolkit, kept in the project's own repository:
#   spack repo add packaging/spack
#   spack install --test=root dc-toolkit@main          (+mpi +web by default)
#   spack install dc-toolkit@main ~mpi ~web            (one process, no web UI)
# or, to build a working copy: spack develop --path . dc-toolkit@main

import os

from spack.package import *

try:  # Spack 1.x: the build systems live in the builtin package repository
    from spack_repo.builtin.build_systems.cmake import CMakePackage
except ImportError:  # Spack 0.x: spack.package provides CMakePackage
    pass


class DcToolkit(CMakePackage):
    """Finds, for each field of a weather or climate dataset, the compression
    pipeline (filter, serializer, compressor) with the highest ratio under the
    field's error bound, and writes the dataset with it into one sharded Zarr v3
    store. Sweeps across nodes with MPI, one rank per node, threads inside."""

    # The Python dc_toolkit, whose commands and flags this C rewrite keeps; the
    # rewrite has no public release yet, so the source is the git checkout this
    # recipe lives in (packaging/spack/packages/dc-toolkit/ is four levels down).
    homepage = "https://github.com/C2SM/data-compression"
    git = "file://" + os.path.abspath(os.path.join(os.path.dirname(__file__), *[os.pardir] * 4))

    version("main", branch="main")

    variant("mpi", default=True, description="Sweep across nodes with MPI (else one process)")
    variant("web", default=True, description="Build the web UI (libmicrohttpd)")

    depends_on("cmake@3.18:", type="build")
    depends_on("pkgconfig", type="build")

    depends_on("netcdf-c")
    depends_on("eccodes")
    depends_on("c-blosc")
    depends_on("zstd")
    depends_on("lz4")
    depends_on("zlib-api")
    depends_on("libdeflate")
    depends_on("bzip2")
    depends_on("xz")
    depends_on("zfp")
    depends_on("jansson")
    depends_on("udunits")
    # the report figures: PNG, SVG and PDF surfaces, text through FreeType/Fontconfig
    depends_on("cairo+png+svg+pdf+ft+fc")
    depends_on("libmicrohttpd", when="+web")
    depends_on("mpi", when="+mpi")

    depends_on("cmocka", type="test")

    def cmake_args(self):
        return [
            self.define_from_variant("DCTK_MPI", "mpi"),
            self.define_from_variant("DCTK_WEB", "web"),
            # the unit tests need cmocka, which is there only with --test
            self.define("DCTK_TESTS", self.run_tests),
            # warnings stay warnings with compilers the project does not test
            self.define("DCTK_WERROR", False),
        ]

    def check(self):
        # The unit tests (label unit). The interop tests compare against Python
        # and Node.js readers that this build does not provide; `make check` in
        # a checkout runs them.
        with working_dir(self.build_directory):
            ctest("--output-on-failure", "-L", "unit")
