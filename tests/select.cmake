# Selection users can trust (issue 17): gates, climate metrics, lossless default, NaN-aware space.
dctk_script_test(select_metrics ${DCTK_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/interop/test_select_metrics.py)
dctk_script_test(select_write ${DCTK_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/interop/test_select_write.py)
dctk_unit_test(test_select unit/test_select.c)
