# The bytes->bytes compressors (blosc, zstd, gzip, numcodecs.lz4/zlib/bz2/lzma/shuffle).
dctk_unit_test(test_compressors unit/test_compressors.c)
dctk_unit_test(test_compressors_fuzz unit/test_compressors_fuzz.c)
# numcodecs' bytes, committed under tests/golden/codecs/ (tests/interop/make_golden_compressors.py)
dctk_unit_test(test_compressors_golden unit/test_compressors_golden.c)
dctk_script_test(test_compressors_interop ${DCTK_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/interop/test_compressors.py)

# The timing harness of bench/codecs.py (make bench), built with the tests.
add_executable(dctk_bench_codecs ${CMAKE_SOURCE_DIR}/bench/bench_codecs.c)
target_link_libraries(dctk_bench_codecs PRIVATE dctk)
# bench/codecs_instr.py counts instructions under callgrind: client requests in
# the harness, and a ctypes shim for the numcodecs side (valgrind's header).
include(CheckIncludeFile)
check_include_file(valgrind/callgrind.h DCTK_HAVE_CALLGRIND)
if(DCTK_HAVE_CALLGRIND)
  target_compile_definitions(dctk_bench_codecs PRIVATE DCTK_HAVE_CALLGRIND)
  add_library(dctk_cgmark MODULE ${CMAKE_SOURCE_DIR}/bench/cgmark.c)
endif()
