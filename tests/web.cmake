# The web UI (run_web_ui, run_web_ui_vcluster), built with DCTK_WEB.
if(DCTK_WEB)
  # the Slurm script generator and the data-root confinement
  dctk_unit_test(test_web unit/test_web.c)
  target_link_libraries(test_web PRIVATE dctk_web_objects)

  # HTTP errors (.., symlinks, oversized uploads, unknown jobs, tokens, origins) and the
  # vcluster script run under stand-in srun and sbatch
  dctk_script_test(web_http ${DCTK_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/interop/test_web_http.py)
  set_tests_properties(web_http PROPERTIES TIMEOUT 120)
  # also in the ASan stage (label asan): the jobs run inside the server, whose exit the test checks
  set_property(TEST web_http APPEND PROPERTY LABELS asan)

  find_program(DCTK_NODE_WEB node)
  if(DCTK_NODE_WEB AND EXISTS /usr/bin/chromium)
    # the whole page in headless Chromium: upload, sweep, scatter, compress, download (read by zarrita)
    dctk_script_test(web_e2e ${DCTK_NODE_WEB} ${CMAKE_CURRENT_SOURCE_DIR}/js/web_e2e.mjs)
    set_tests_properties(web_e2e PROPERTIES TIMEOUT 180)
  endif()
endif()
