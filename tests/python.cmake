# python/'s package (dctk.* codecs for numcodecs), installed into a staged
# prefix and used through numcodecs' registry on a store we wrote.
dctk_script_test(python_codecs ${DCTK_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/interop/test_python_codecs.py
  $<TARGET_FILE:dctk_zarr_tool>)
set_tests_properties(python_codecs PROPERTIES TIMEOUT 120)
# The default compress writes only numcodecs-level codecs, read here by numcodecs alone.
dctk_script_test(compress_portable ${DCTK_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/interop/test_compress_portable.py
  $<TARGET_FILE:dctk_zarr_tool>)
set_tests_properties(compress_portable PROPERTIES TIMEOUT 300)
