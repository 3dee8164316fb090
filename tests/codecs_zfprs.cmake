# numcodecs-wasm's Zfp serializer ("zfp.rs" under any-numcodecs.array-bytes):
# hand-built reference streams from zfpy, both ways, on real fields.
dctk_script_test(test_zfprs_interop ${DCTK_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/interop/test_zfprs.py)
