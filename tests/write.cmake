# Store safety (issue 22, findings 1-4): concurrent writers of one field, a
# failed verification, killed writers and merges, lossy coordinates; and the
# crash-consistency loop. The stores are read back by zarrita.
dctk_script_test(store_safety ${DCTK_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/interop/test_store_safety.py)
dctk_script_test(store_crash ${DCTK_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/interop/test_store_crash.py)
set_tests_properties(store_safety store_crash PROPERTIES TIMEOUT 180)

# Nothing outside the store through a symbolic link (issue 37, finding 1): a field folder, a folder
# inside it, staging names, the writer lock and the results CSV as links to sentinels that must survive.
dctk_script_test(store_links ${DCTK_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/interop/test_store_links.py)
set_tests_properties(store_links PROPERTIES TIMEOUT 180)

# The write path as a library call: verify before replace, plugged-in gates, merge of a lossy coordinate.
dctk_unit_test(test_write unit/test_write.c)
dctk_unit_test(test_write_alloc unit/test_write_alloc.c)

# The write workflow (issue 21): compress reuses sweep results, skips what is stored, --pipeline
# in three forms, its gate, batch_manifest.json, CF bounds left out of sweeps but kept exact.
dctk_script_test(compress_workflow ${DCTK_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/interop/test_compress_workflow.py)
set_tests_properties(compress_workflow PROPERTIES TIMEOUT 300)

# Many files, one dataset (issue 36): 12 monthly files of a real field (a glob, and a directory of
# Zarr inputs) into the store of the single file, byte for byte; files that do not fit refused.
dctk_script_test(multifile ${DCTK_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/interop/test_multifile.py)
set_tests_properties(multifile PROPERTIES TIMEOUT 300)

# No destroyed field called verified (issue 37, finding 3): finite values that come back NaN (a float
# Delta over a masked field) and a FixedScaleOffset that wraps are refused, exit 1, nothing stored.
dctk_script_test(verify_exact ${DCTK_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/interop/test_verify_exact.py)
set_tests_properties(verify_exact PROPERTIES TIMEOUT 120)

# batch_manifest.json accumulates across compress runs (issue 33 item 4).
dctk_script_test(batch_manifest ${DCTK_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/interop/test_batch_manifest.py)
set_tests_properties(batch_manifest PROPERTIES TIMEOUT 300)

# Readers never mix two copies, a store cut mid-swap is never exported whole (issue 37, findings 2
# and 4): an export held across a rewrite, exports against a writer loop, writers killed between
# the renames and after the swap (DCTK_TEST_HOLD points of the store protocol).
dctk_script_test(store_readers ${DCTK_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/interop/test_store_readers.py)
set_tests_properties(store_readers PROPERTIES TIMEOUT 240)

# compress --vars "" names no field: exit 2 with a line, nothing written (issue 37, finding 9).
dctk_script_test(compress_vars_empty ${DCTK_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/interop/test_compress_vars_empty.py)
# A field without values (an unlimited dimension with no records): stored empty, merged, read by zarrita and xarray.
dctk_script_test(zero_length ${DCTK_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/interop/test_zero_length.py)
# --append refuses new steps a stored FixedScaleOffset's int16 cannot hold.
dctk_script_test(append_wrap ${DCTK_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/interop/test_append_wrap.py)
# compress skips a stored field only when it would write the same (issue 32 item 5): each change said
# and rewritten, an array with no record of ours rewritten.
dctk_script_test(skip_rules ${DCTK_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/interop/test_skip_rules.py)
set_tests_properties(skip_rules PROPERTIES TIMEOUT 300)

# The index form from the space the sweep recorded (issue 36 item 3): space_VAR.json beside best_VAR.json;
# compress_with_optimal C F S reads no more of the input than --pipeline (strace), the same shards as the
# space rebuilt from the field, numcodecs' decode = numcodecs' BitRound; a touched input falls back with a line.
dctk_script_test(index_form ${DCTK_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/interop/test_index_form.py)
set_tests_properties(index_form PROPERTIES TIMEOUT 300)
