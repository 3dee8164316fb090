dctk_unit_test(test_eval unit/test_eval.c)
dctk_unit_test(test_sweep_alloc unit/test_sweep_alloc.c)
dctk_unit_test(test_evaluate_alloc unit/test_evaluate_alloc.c)
dctk_unit_test(test_sample unit/test_sample.c)
dctk_script_test(sweep_numcodecs ${DCTK_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/interop/test_sweep_numcodecs.py)
dctk_script_test(compress_errors ${DCTK_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/interop/test_compress_errors.py)
# node by name, as export.cmake and zarr.cmake do: configuring the tests (for the
# unit tests alone, as Spack's check does) needs no node; running this one does.
dctk_script_test(sweep_parquet node ${CMAKE_CURRENT_SOURCE_DIR}/js/sweep_parquet.mjs
                 $<TARGET_FILE:dc_toolkit> ${DCTK_NCARG})
dctk_script_test(sweep_edge_fields ${DCTK_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/interop/test_sweep_edge_fields.py)
dctk_script_test(sweep_resume ${DCTK_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/interop/test_sweep_resume.py)
# --resume at another threshold re-measures what the search pruned under the old gates (issue 37 finding 5)
dctk_script_test(resume_gates ${DCTK_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/interop/test_resume_gates.py)
set_tests_properties(resume_gates PROPERTIES TIMEOUT 300)
# --resume after the codec space changed takes the saved rows by their pipelines (issue 35 item 2)
dctk_script_test(resume_space ${DCTK_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/interop/test_resume_space.py)
# it draws with analyze_clustering: cairo's fontconfig cache is reported at exit under ASan (report.cmake)
set_property(TEST resume_space APPEND PROPERTY ENVIRONMENT
  LSAN_OPTIONS=suppressions=${CMAKE_CURRENT_SOURCE_DIR}/interop/lsan_fontconfig.supp:print_suppressions=0)
dctk_script_test(sampling ${DCTK_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/interop/test_sampling.py)
# the plan on ensembles, forecasts, two vertical axes, deep chunks, big slabs, unknown names (issue 34)
dctk_script_test(sample_layouts ${DCTK_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/interop/test_sample_layouts.py)
dctk_script_test(sweep_failures ${DCTK_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/interop/test_sweep_failures.py)
set_tests_properties(sweep_failures PROPERTIES TIMEOUT 600)
dctk_script_test(compress_kill ${DCTK_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/interop/test_compress_kill.py)
# compress falls back to the next lossy stage when the whole field misses the bound the sample met
dctk_script_test(compress_next_best ${DCTK_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/interop/test_compress_next_best.py)
# error-bounded serializers after a scaling filter: the bound in the filter's units (issue 22)
dctk_script_test(errbound_scaled ${DCTK_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/interop/test_errbound_scaled.py)
# threshold rows found by unit as udunits2 reads them, on real files (issue 23)
dctk_script_test(units_thresholds ${DCTK_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/interop/test_units_thresholds.py)
# no timer table unless --verbose, no ETA before the rate is stable (issue 23)
dctk_script_test(console_quiet ${DCTK_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/interop/test_console_quiet.py)
# the adaptive search finds the exhaustive sweep's winner and keeps only what exhaustive keeps (issue 19)
dctk_script_test(search_adaptive ${DCTK_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/interop/test_search.py)
set_tests_properties(search_adaptive PROPERTIES TIMEOUT 600)
# every compressor after every expanding ZFP member, in the sweep and through a store read back (issue 24)
dctk_script_test(expanding_serializers ${DCTK_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/interop/test_expanding_serializers.py)
set_tests_properties(expanding_serializers PROPERTIES TIMEOUT 900)
# budgets in the field's units: --abs-error as a gate and a budget, the table's Abs error column (issue 31)
dctk_script_test(abs_error ${DCTK_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/interop/test_abs_error.py
  $<TARGET_FILE:dctk_zarr_tool>)
# the per-variable spec file (--spec FILE): entries over the default, flags over both (issue 31)
dctk_script_test(spec_file ${DCTK_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/interop/test_spec.py
  $<TARGET_FILE:dctk_zarr_tool>)
# the sample over --eval-data-size-limit is said before the sweep, with the time expected (issue 33 item 6)
dctk_script_test(sample_budget ${DCTK_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/interop/test_sample_budget.py)
# the smaller texts a user reads: help, units, plot labels (issue 33 item 7)
dctk_script_test(user_texts ${DCTK_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/interop/test_user_texts.py
  $<TARGET_FILE:dctk_zarr_tool>)
# packed inputs (integer codes with scale_factor/add_offset) and integer fields (issue 31 item 3)
dctk_script_test(packed ${DCTK_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/interop/test_packed.py
  $<TARGET_FILE:dctk_zarr_tool>)
set_tests_properties(packed PROPERTIES TIMEOUT 900)

# --keep-information (issue 31 item 5): the member numpy's computation of the information content chooses,
# read back by numcodecs; refused shares.
dctk_script_test(keep_information ${DCTK_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/interop/test_keep_information.py
                 $<TARGET_FILE:dctk_zarr_tool>)

# the lossy parameters solved to the budget, checked against numcodecs (issue 31 item 1)
dctk_script_test(solve_budget ${DCTK_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/interop/test_solve.py
  $<TARGET_FILE:dctk_zarr_tool>)
set_tests_properties(solve_budget PROPERTIES TIMEOUT 600)
# stock linear packing: numcodecs FixedScaleOffset with its scale solved to the budget (issue 31 item 2)
dctk_script_test(linear_packing ${DCTK_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/interop/test_linear_packing.py)
set_tests_properties(linear_packing PROPERTIES TIMEOUT 600)
# --target-ratio R: the smallest relative L1 whose ratio reaches R, checked with numcodecs and numpy (issue 31 item 6)
dctk_script_test(target_ratio ${DCTK_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/interop/test_target_ratio.py)
set_tests_properties(target_ratio PROPERTIES TIMEOUT 900)
