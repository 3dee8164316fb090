# open_zarr_and_inspect and from_zarr_to_netcdf, on stores that our own commands
# build from real libncarg-data files (export_store, a ctest fixture), checked
# with readers that are not ours: zarrita, ncdump, python3-netCDF4/xarray/zarr.
dctk_unit_test(test_zarr_inspect unit/test_zarr_inspect.c)

set(DCTK_EXPORT_FIXTURE ${CMAKE_CURRENT_BINARY_DIR}/export_fixture)

dctk_script_test(export_store ${DCTK_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/interop/export_store.py ${DCTK_EXPORT_FIXTURE})
set_tests_properties(export_store PROPERTIES FIXTURES_SETUP dctk_export TIMEOUT 60)

dctk_script_test(export_zarrita node ${CMAKE_CURRENT_SOURCE_DIR}/js/export_zarrita.mjs ${DCTK_EXPORT_FIXTURE})
foreach(t netcdf inspect errors)
  dctk_script_test(export_${t} ${DCTK_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/interop/export_${t}.py ${DCTK_EXPORT_FIXTURE})
endforeach()
set_tests_properties(export_zarrita export_netcdf export_inspect export_errors
  PROPERTIES FIXTURES_REQUIRED dctk_export TIMEOUT 60)
