# Results writers (CSV, Parquet).
dctk_unit_test(test_results unit/test_results.c)
set_tests_properties(test_results PROPERTIES TIMEOUT 60)

# Writes results CSV + Parquet from awkward rows for the independent readers.
add_executable(dctk_results_tool tools/results_tool.c)
target_link_libraries(dctk_results_tool PRIVATE dctk_codecs_objects dctk_objects) # uses internals
target_include_directories(dctk_results_tool PRIVATE ${CMAKE_SOURCE_DIR}/src)

find_program(DCTK_NODE node)
if(DCTK_NODE)
  dctk_script_test(results_parquet_duckdb ${DCTK_NODE} ${CMAKE_CURRENT_SOURCE_DIR}/js/results_duckdb.mjs
                   $<TARGET_FILE:dctk_results_tool>)
  dctk_script_test(results_parquet_hyparquet ${DCTK_NODE} ${CMAKE_CURRENT_SOURCE_DIR}/js/results_hyparquet.mjs
                   $<TARGET_FILE:dctk_results_tool>)
  set_tests_properties(results_parquet_duckdb results_parquet_hyparquet PROPERTIES TIMEOUT 120)
endif()

# best_VAR.json: the typed record, its reader and writer, files of the previous release.
dctk_unit_test(test_best unit/test_best.c)
