# Parity with the Python dc_toolkit (issue 32): its codec names, pipelines, flags and commands.
dctk_script_test(numcodecs_names ${DCTK_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/interop/test_numcodecs_names.py $<TARGET_FILE:dctk_zarr_tool>)
