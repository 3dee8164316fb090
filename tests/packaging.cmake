# Packaging: the man page and the bash completion generated from the command
# table cover every option (checked against each command's --help, and rendered
# by groff or mandoc when there is one), and a staged install is usable through
# pkg-config --static dctk.
dctk_script_test(packaging_docs ${DCTK_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/tools/packaging_check.py docs)
dctk_script_test(packaging_install ${DCTK_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/tools/packaging_check.py install
  ${CMAKE_COMMAND} ${CMAKE_C_COMPILER})
# The README, the Dockerfile and check-fresh agree (check-fresh itself runs for
# minutes as root: make check-fresh), and the Spack recipe names real options.
dctk_script_test(packaging_recipes ${DCTK_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/tools/packaging_check.py recipes)
# The libraries others link (cmake --install into a temporary prefix): nm -g over
# every static library lists dctk_ symbols only; a program that links the codec
# library alone builds from its pkg-config file and round-trips a real file.
dctk_script_test(packaging_symbols ${DCTK_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/tools/packaging_check.py symbols
  ${CMAKE_COMMAND})
dctk_script_test(packaging_codecs_only ${DCTK_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/tools/packaging_check.py codecs_only
  ${CMAKE_COMMAND} ${CMAKE_C_COMPILER})
# Its refusals (bad JSON text, unknown codecs, shapes, compress options), also under ASan.
dctk_unit_test(test_stable_api unit/test_stable_api.c)
# The stable API (include/dctk/dctk.h): each stable header compiles alone without
# DCTK_STATIC_LINKING_ONLY and with a jansson.h that #errors first on the path,
# the others stop and the json_t forms stay hidden; a program on it alone,
# linked from the install, round-trips meccatemp's t (as netCDF4 reads it)
# through a codec, a pipeline (bitround's values numcodecs' own), compress
# (with a given pipeline, and swept under a budget that numpy then measures,
# to the command's winner) and a store of its own.
dctk_script_test(packaging_stable_api ${DCTK_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/tools/packaging_check.py stable_api
  ${CMAKE_COMMAND} ${CMAKE_C_COMPILER})
set_tests_properties(packaging_docs packaging_install packaging_recipes packaging_symbols packaging_codecs_only
  PROPERTIES TIMEOUT 60)
set_tests_properties(packaging_stable_api PROPERTIES TIMEOUT 180)

# The user guide runs as written, and every command's help agrees with the README (issue 23).
dctk_script_test(guide_runs ${DCTK_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/tools/guide_check.py)
set_tests_properties(guide_runs PROPERTIES TIMEOUT 600)
set_property(TEST guide_runs APPEND PROPERTY ENVIRONMENT
  LSAN_OPTIONS=suppressions=${CMAKE_CURRENT_SOURCE_DIR}/interop/lsan_fontconfig.supp:print_suppressions=0)
dctk_script_test(help_readme ${DCTK_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/tools/help_readme_check.py)
