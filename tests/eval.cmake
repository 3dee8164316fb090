dctk_unit_test(test_eval unit/test_eval.c)
dctk_script_test(sweep_numcodecs ${DCTK_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/interop/test_sweep_numcodecs.py)
dctk_script_test(compress_errors ${DCTK_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/interop/test_compress_errors.py)
