# The Zarr engine: stores, metadata, sharding, writer and reader, v2 input,
# consolidation; checked against zarrita, numcodecs and zarr-python.
dctk_unit_test(test_zarr unit/test_zarr.c)
dctk_unit_test(test_zarr_alloc unit/test_zarr_alloc.c)
# The staging protocol (per-writer stage, verify before replace, swap, repair) and the node probe.
dctk_unit_test(test_zarr_stage unit/test_zarr_stage.c)

# Writes and reads arrays on raw files for the interop tests.
add_executable(dctk_zarr_tool tools/zarr_tool.c)
target_link_libraries(dctk_zarr_tool PRIVATE dctk)

dctk_script_test(zarr_zarrita node ${CMAKE_CURRENT_SOURCE_DIR}/js/zarr_zarrita.mjs $<TARGET_FILE:dctk_zarr_tool>)
dctk_script_test(zarr_numcodecs ${DCTK_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/interop/zarr_shards.py $<TARGET_FILE:dctk_zarr_tool>)
dctk_script_test(zarr_v2_input ${DCTK_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/interop/zarr_v2_input.py $<TARGET_FILE:dctk_zarr_tool>)
dctk_script_test(zarr_concurrent ${DCTK_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/interop/zarr_concurrent.py $<TARGET_FILE:dctk_zarr_tool>)
# Grids of 2^31 keys with a few stored: readers list what is stored (issue 37, finding 6).
dctk_script_test(zarr_sparse ${DCTK_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/interop/test_zarr_sparse.py)
set_tests_properties(zarr_sparse PROPERTIES TIMEOUT 600)
# A large, sparse and valid store (zarrita's 2^24 one-value chunks; 2 of 20 shards of [1e6, 1000]): the
# export, inspect and compress cost what is stored, and read every value back (issue 37, item 6).
dctk_script_test(zarr_sparse_export ${DCTK_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/interop/test_zarr_sparse_export.py)
set_tests_properties(zarr_sparse_export PROPERTIES TIMEOUT 600)

# Throughput, overhead over the raw codec time, and peak memory of the writer.
add_executable(bench_zarr ${CMAKE_SOURCE_DIR}/bench/bench_zarr.c)
target_link_libraries(bench_zarr PRIVATE dctk)
# instruction counts under callgrind (bench/zarr_instr.py): valgrind's client requests
include(CheckIncludeFile)
check_include_file(valgrind/callgrind.h DCTK_HAVE_CALLGRIND)
if(DCTK_HAVE_CALLGRIND)
  target_compile_definitions(bench_zarr PRIVATE DCTK_HAVE_CALLGRIND)
endif()
