# Reports: results reader, k-means, silhouette, figures and the HTML page.
# cairo's text keeps a fontconfig cache that LeakSanitizer reports at exit.
set(DCTK_LSAN_FONTCONFIG
  LSAN_OPTIONS=suppressions=${CMAKE_CURRENT_SOURCE_DIR}/interop/lsan_fontconfig.supp:print_suppressions=0)

dctk_unit_test(test_report unit/test_report.c)
set_tests_properties(test_report PROPERTIES TIMEOUT 60)
set_property(TEST test_report APPEND PROPERTY ENVIRONMENT ${DCTK_LSAN_FONTCONFIG})

# Prints our k-means and silhouette on given points, for the sklearn comparison.
add_executable(dctk_report_tool tools/report_tool.c)
target_link_libraries(dctk_report_tool PRIVATE dctk_report)

dctk_script_test(report_kmeans_sklearn ${DCTK_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/interop/test_report_sklearn.py
                 $<TARGET_FILE:dctk_report_tool>)
set_tests_properties(report_kmeans_sklearn PROPERTIES TIMEOUT 60)

find_program(DCTK_NODE node)
find_program(DCTK_CHROMIUM chromium PATHS /usr/bin NO_DEFAULT_PATH)
if(DCTK_NODE AND DCTK_CHROMIUM)
  # The analyze_clustering page in headless Chromium: hovering a point shows its combo.
  dctk_script_test(report_html_hover ${DCTK_NODE} ${CMAKE_CURRENT_SOURCE_DIR}/js/report_hover.mjs)
  set_tests_properties(report_html_hover PROPERTIES TIMEOUT 60)
  set_property(TEST report_html_hover APPEND PROPERTY ENVIRONMENT ${DCTK_LSAN_FONTCONFIG})
endif()

# plot_compression_errors: the worst slice by default, --index, exact everywhere (issue 23)
dctk_script_test(plot_errors_slice ${DCTK_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/interop/test_plot_errors_slice.py)
set_property(TEST plot_errors_slice APPEND PROPERTY ENVIRONMENT ${DCTK_LSAN_FONTCONFIG})
# analyze_clustering: k for the number of points, the winner marked, no placeholder (issue 23)
dctk_script_test(analyze_console ${DCTK_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/interop/test_analyze_console.py)
set_property(TEST analyze_console APPEND PROPERTY ENVIRONMENT ${DCTK_LSAN_FONTCONFIG})
# the console names pipelines by their readable name; errors after a write carry units (issue 23)
dctk_script_test(console_names ${DCTK_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/interop/test_console_names.py)
