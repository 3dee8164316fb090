# The memory budget (issue 24): codec working memory against measured peak RSS.
dctk_unit_test(test_codec_memory unit/test_codec_memory.c)
# a sweep under --max-memory and an address-space limit ends with the unlimited run's rows and winner
dctk_script_test(memory_budget ${DCTK_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/interop/test_memory_budget.py)
set_tests_properties(memory_budget PROPERTIES TIMEOUT 900)
# the default space (adaptive) in a cgroup memory group of its own finds the limit and ends with the unlimited winner
dctk_script_test(memory_cgroup ${DCTK_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/interop/test_memory_cgroup.py)
set_tests_properties(memory_cgroup PROPERTIES TIMEOUT 300)
