# The MPI layer: pieces, topology fallback and a lone process (unit), and
# mpirun with 2 ranks on this machine (interop/test_par.py; each case < 60 s).
dctk_unit_test(test_par unit/test_par.c)
target_link_libraries(test_par PRIVATE dctk_par_objects)
set_tests_properties(test_par PROPERTIES TIMEOUT 30)

# Without MPI (DCTK_MPI=OFF) there is nothing to launch: the unit test above
# covers the single-process layer, and these are left out.
if(DCTK_MPI)
  find_program(DCTK_MPIRUN mpirun)
endif()
if(DCTK_MPI AND DCTK_MPIRUN)
  foreach(t same adaptive pieces refuse kill singleton compress resume)
    dctk_script_test(par_${t} ${DCTK_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/interop/test_par.py ${t})
    # Open MPI's own allocations at exit are not ours to free; the suppressions
    # match only on full stacks (its plugins are unloaded by then).
    set_property(TEST par_${t} APPEND PROPERTY ENVIRONMENT ASAN_OPTIONS=fast_unwind_on_malloc=0
      LSAN_OPTIONS=suppressions=${CMAKE_CURRENT_SOURCE_DIR}/interop/lsan_openmpi.supp:print_suppressions=0)
    set_tests_properties(par_${t} PROPERTIES TIMEOUT 60 LABELS "interop;mpi")
  endforeach()
  # the distributed write (issue 36): nc4uvt.nc's three fields over 2 ranks, each rank verifying its shards of
  # a split field; --append of fice.nc's months with the new shards over 2 ranks
  foreach(t spread kill split stop append)
    dctk_script_test(par_write_${t} ${DCTK_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/interop/test_par_write.py ${t})
    set_property(TEST par_write_${t} APPEND PROPERTY ENVIRONMENT ASAN_OPTIONS=fast_unwind_on_malloc=0
      LSAN_OPTIONS=suppressions=${CMAKE_CURRENT_SOURCE_DIR}/interop/lsan_openmpi.supp:print_suppressions=0)
    set_tests_properties(par_write_${t} PROPERTIES TIMEOUT 240 LABELS "interop;mpi")
  endforeach()
  # two searches of a 1440-combo space, one of them under 2 ranks
  set_tests_properties(par_adaptive PROPERTIES TIMEOUT 300)
  # --resume reads every rank's CSV (issue 37 finding 7): five sweeps, two of them killed
  set_tests_properties(par_resume PROPERTIES TIMEOUT 400)
endif()
