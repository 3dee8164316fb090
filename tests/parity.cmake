# Parity with the Python dc_toolkit (issue 32): its codec names, pipelines, flags and commands.
dctk_script_test(numcodecs_names ${DCTK_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/interop/test_numcodecs_names.py $<TARGET_FILE:dctk_zarr_tool>)
# Every command and option of the Python tool's cli.py (tests/parity/python_cli.txt): taken with its
# meaning or refused naming ours; docs/guide.md section 11 made from the same list.
dctk_script_test(python_cli ${DCTK_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/parity/test_python_cli.py)
# The gates as the Python tool defines them: extremes over the non-zero values at 2 x L1, the gradient's
# absolute 0.1, --no-l2-gate & co., non-finite budgets refused; against numpy and numcodecs on Tstorm.
dctk_script_test(gates_python ${DCTK_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/parity/test_gates_python.py)
# The Python tool's store commands on our stores: open_zarr_and_inspect --head, from_zarr_to_netcdf
# --compression/--complevel/--max-size, against netCDF4.
dctk_script_test(commands_python ${DCTK_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/parity/test_commands_python.py)
# manifest_{var}.json both ways: ours read by a reader of the Python tool's schema and numcodecs, and
# one in its format (or ours) driving compress --pipeline, gated by its thresholds; on Tstorm.
dctk_script_test(manifest_python ${DCTK_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/parity/test_manifest_python.py)
# The Python tool's compress switches for their effect: --cr-drift-tol/--cr-drift-gate, --no-verify-gate,
# --no-continue-on-error, --consolidate/--no-consolidate, on Tstorm and uv300.
dctk_script_test(compress_switches ${DCTK_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/parity/test_compress_switches.py)
# The Python tool's chunk, sample and memory flags for their effect: --vertical-floor (the plan its rule
# gives), --spatial-split/--no-spatial-split and --max-inner-chunk-mib (sweep, store, re-sweep),
# --memory-threshold (the sweep's and the writer's budget); on contour.cdf and Tstorm.
dctk_script_test(layout_python ${DCTK_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/parity/test_layout_python.py)
# from_nc_to_zarr: a packed, chunked netCDF-4 file into an uncompressed store, values as stored or
# CF-decoded (xarray's), source chunks or one; zarrita reads every variable as netCDF4 does.
dctk_script_test(nc_to_zarr ${DCTK_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/parity/test_nc_to_zarr.py)
# --clamp-to-bounds: the lossy serializers' combos decode through numcodecs.clamp at --phys-min/--phys-max;
# on fice, rows recomputed by numcodecs + np.clip, the written store read by numcodecs and numpy.
dctk_script_test(clamp_to_bounds ${DCTK_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/interop/test_clamp_to_bounds.py)
# --with-ebcc/--without-ebcc: spcl EBCC (ebcc_filter) at the Python tool's members, off by default; the
# stored chunk checked against EBCC's format (and spcl's decoder when EBCC_REF_LIB names a build).
dctk_script_test(with_ebcc ${DCTK_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/interop/test_with_ebcc.py)
# The gradient metric over every neighbour pair of the sample, those across inner-chunk borders too
# (the Python tool's): fice swept in chunks that cut its latitudes, against numpy and numcodecs.
dctk_script_test(gradient_borders ${DCTK_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/parity/test_gradient_borders.py)
