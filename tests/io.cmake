# Dataset readers: CF decoding rules (unit), and netCDF/GRIB reads checked
# against python3-netCDF4, xarray and python3-eccodes (interop).
dctk_unit_test(test_cf unit/test_cf.c)

# Writes what our readers decode, for the Python cross-checks.
add_executable(dctk_dump_tool tools/dump_tool.c)
target_link_libraries(dctk_dump_tool PRIVATE dctk)

foreach(t netcdf grib bad_inputs)
  dctk_script_test(test_io_${t} ${DCTK_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/interop/test_io_${t}.py)
  set_property(TEST test_io_${t} APPEND PROPERTY ENVIRONMENT DCTK_DUMP_TOOL=$<TARGET_FILE:dctk_dump_tool>
    LSAN_OPTIONS=suppressions=${CMAKE_CURRENT_SOURCE_DIR}/interop/lsan_eccodes.supp:print_suppressions=0)
  set_tests_properties(test_io_${t} PROPERTIES TIMEOUT 120)
endforeach()
