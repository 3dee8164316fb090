dctk_unit_test(test_core unit/test_core.c)
dctk_unit_test(test_pipeline unit/test_pipeline.c)

# Runs our codecs on raw files for the Python cross-implementation tests.
add_executable(dctk_codec_tool tools/codec_tool.c)
target_link_libraries(dctk_codec_tool PRIVATE dctk)
dctk_unit_test(test_chunking unit/test_chunking.c)

# The shipped threshold table is exactly what its documented method derives.
add_test(NAME thresholds_reproducible
  COMMAND sh -c "${DCTK_PYTHON} ${CMAKE_SOURCE_DIR}/scripts/make_thresholds.py | cmp - ${CMAKE_SOURCE_DIR}/data/l1_error_thresholds.csv")

# DCTK_VERSION_MAJOR exists and matches dctk_version() and the CMake project version.
dctk_unit_test(test_version unit/test_version.c)
target_compile_definitions(test_version PRIVATE DCTK_PROJECT_VERSION="${PROJECT_VERSION}")
