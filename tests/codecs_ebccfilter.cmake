# EBCC's own format (spcl/EBCC's ebcc_filter, under any-numcodecs.array-bytes):
# golden streams of the reference build decode bit for bit; ours stay within
# the bound; with a reference build at hand (EBCC_REF_LIB), its decoder reads
# ours within the bound too (skipped with a line otherwise).
dctk_unit_test(test_ebcc_golden unit/test_ebcc_golden.c)
dctk_script_test(test_ebcc_reference ${DCTK_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/interop/test_ebcc_reference.py)
set_tests_properties(test_ebcc_reference PROPERTIES SKIP_RETURN_CODE 77)
