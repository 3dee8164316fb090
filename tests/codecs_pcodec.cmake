# The PCodec serializer (numcodecs.pcodec): our pco encoder and decoder, golden
# streams of a reference pco build (tests/interop/make_golden_pcodec.py), real
# fields, edge data, corrupt streams and a sharded store.
dctk_unit_test(test_pcodec unit/test_pcodec.c)
# The whole tool on a real field: sweep (error exactly 0), compress_with_optimal
# into a sharded store, from_zarr_to_netcdf back, compared with python3-netCDF4.
dctk_script_test(test_pcodec_sweep ${DCTK_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/interop/test_pcodec_sweep.py)
