# Core count, oversubscription check, parallel-for.
dctk_unit_test(test_threads unit/test_threads.c)
set_tests_properties(test_threads PROPERTIES TIMEOUT 60)
