# Robustness: fuzz targets, the bad-input table, a full disk during a write.
# Fuzz targets (tests/fuzz/*.c, each an LLVMFuzzerTestOneInput). With
# DCTK_FUZZ they link libFuzzer (`make fuzz` runs them); otherwise each links
# the replay main and runs its committed corpus as a unit test, so `make
# check` replays every corpus, also under ASan/UBSan.
set(DCTK_FUZZ_TARGETS codec_decode zarr_json shard_read dataset_open)
foreach(t ${DCTK_FUZZ_TARGETS})
  if(DCTK_FUZZ)
    add_executable(fuzz_${t} fuzz/${t}.c)
    target_link_options(fuzz_${t} PRIVATE -fsanitize=fuzzer)
  else()
    add_executable(fuzz_${t} fuzz/${t}.c fuzz/replay.c)
    add_test(NAME fuzz_${t} COMMAND fuzz_${t} ${CMAKE_CURRENT_SOURCE_DIR}/fuzz/corpus/${t})
    set_tests_properties(fuzz_${t} PROPERTIES LABELS unit TIMEOUT 300
      ENVIRONMENT "LSAN_OPTIONS=suppressions=${CMAKE_CURRENT_SOURCE_DIR}/fuzz/lsan.supp:print_suppressions=0")
  endif()
  target_link_libraries(fuzz_${t} PRIVATE dctk)
  target_include_directories(fuzz_${t} PRIVATE ${CMAKE_SOURCE_DIR}/src ${CMAKE_CURRENT_SOURCE_DIR}/fuzz)
endforeach()

# Writes the seed corpora from real encodings (not a test: its output is committed).
add_executable(fuzz_make_seeds fuzz/make_seeds.c)
target_link_libraries(fuzz_make_seeds PRIVATE dctk)
target_include_directories(fuzz_make_seeds PRIVATE ${CMAKE_SOURCE_DIR}/src ${CMAKE_CURRENT_SOURCE_DIR}/fuzz)

# The bad-input table (tests/bad_inputs/cases.tsv): labelled unit so that
# `make asan` runs it against the sanitizer build of dc_toolkit too.
add_test(NAME bad_inputs COMMAND ${DCTK_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/bad_inputs/run.py)
set_tests_properties(bad_inputs PROPERTIES LABELS unit TIMEOUT 300
  ENVIRONMENT "DCTK=$<TARGET_FILE:dc_toolkit>;PYTHONDONTWRITEBYTECODE=1;LSAN_OPTIONS=suppressions=${CMAKE_CURRENT_SOURCE_DIR}/interop/lsan_eccodes.supp:print_suppressions=0")

# Forged zarr.json grids (issue 37 finding 6): each command ends at once with a line, a sparse store still reads.
dctk_script_test(forged_grid ${DCTK_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/interop/test_forged_grid.py)
set_tests_properties(forged_grid PROPERTIES TIMEOUT 600)

# A full disk (a 2 MiB tmpfs in a private mount namespace) during compress_with_optimal.
dctk_script_test(full_disk ${DCTK_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/interop/test_full_disk.py)
set_tests_properties(full_disk PROPERTIES TIMEOUT 300)
