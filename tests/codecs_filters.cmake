# The array->array filters (delta, bitround, quantize, fixedscaleoffset,
# asinh.rs, fixed-offset-scale.rs, transpose) and the ZFPY serializer.
dctk_unit_test(test_filters_errors unit/test_filters_errors.c)
# Golden files from numcodecs/zfpy (tests/interop/make_golden_filters.py): the cross-check without Python.
dctk_unit_test(test_filters_golden unit/test_filters_golden.c)
dctk_script_test(test_filters_interop ${DCTK_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/interop/test_filters.py)

# Timing harness for bench/filters.py.
add_executable(dctk_bench_filters ${CMAKE_SOURCE_DIR}/bench/bench_filters.c)
target_link_libraries(dctk_bench_filters PRIVATE dctk)

# Information-content keepbits (dctk_bitinfo_*) against a numpy computation of the method on real fields.
dctk_script_test(bitinfo ${DCTK_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/interop/test_bitinfo.py)
