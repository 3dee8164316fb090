# Selection users can trust (issue 17): gates, climate metrics, lossless default, NaN-aware space.
dctk_script_test(select_metrics ${DCTK_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/interop/test_select_metrics.py)
dctk_script_test(select_write ${DCTK_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/interop/test_select_write.py)
dctk_unit_test(test_select unit/test_select.c)
# --requirements: an entry of a requirements list (the compression-recommendations format) gates uv300's U as
# the flags it stands for (issue 32 item 6).
dctk_script_test(requirements ${DCTK_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/interop/test_requirements.py)
dctk_unit_test(test_requirements unit/test_requirements.c ${CMAKE_SOURCE_DIR}/src/cli/requirements.c
  ${CMAKE_SOURCE_DIR}/src/cli/streams.c)
target_link_libraries(test_requirements PRIVATE PkgConfig::YAML)
# every entry of the real community list (DCTK_REQUIREMENTS_LIST: its recommendations.yaml, not shipped, MPL-2.0)
# maps to gates that hold it or is refused naming what no gate holds; skipped without the list
dctk_script_test(requirements_real_list ${DCTK_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/interop/test_requirements_real_list.py)
set_tests_properties(requirements_real_list PROPERTIES SKIP_RETURN_CODE 77)
# the pointwise relative and the mean absolute bounds of an entry, on pop.nc's urot (zeros, negatives, a mask) and
# uv300's U: the written fields measured by numpy
dctk_script_test(requirements_relative ${DCTK_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/interop/test_requirements_relative.py)
