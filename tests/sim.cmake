# Engine tests: unit tests, scenario errors, command line, determinism over ranks and threads.
spotlab_add_test(test_sim SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_sim.c LIBS spotlab_phold spotlab_sim)
spotlab_add_test(test_param SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_param.c LIBS spotlab_sim)
# One error space: every module's codes and their texts (sim/errors.h).
spotlab_add_test(test_errors SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_errors.c
                 LIBS spotlab_lab spotlab_kernels spotlab_market spotlab_sched spotlab_sim)
spotlab_add_test(test_cli SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_cli.c LIBS spotlab_sim)
add_dependencies(test_cli spotlab)
# The same scenario and seed on 1, 2 and 4 ranks and on 1 or 2 threads: identical bits.
spotlab_add_test(test_determinism SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_determinism.c LIBS spotlab_sim)
add_dependencies(test_determinism spotlab)
# MPI sanity at 2 ranks: the engine's parallel path through the command itself.
spotlab_add_mpi_test(mpi_phold_2ranks 2 $<TARGET_FILE:spotlab> bench phold --lps 512 --end 200 --no-reference --ranks-info)
# Results onto a full disk (a small tmpfs; skipped where it cannot be mounted).
add_test(NAME full_disk COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/full_disk.sh $<TARGET_FILE:spotlab> ${CMAKE_SOURCE_DIR})
set_tests_properties(full_disk PROPERTIES ENVIRONMENT "${SPOTLAB_TEST_ENV}" TIMEOUT ${SPOTLAB_TEST_TIMEOUT} SKIP_RETURN_CODE 77)
# run, sweep, report and compare killed (SIGKILL) at random points of their writes, three seeds each
add_test(NAME kill_points COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/kill_points.sh $<TARGET_FILE:spotlab> ${CMAKE_SOURCE_DIR})
set_tests_properties(kill_points PROPERTIES ENVIRONMENT "${SPOTLAB_TEST_ENV}" TIMEOUT ${SPOTLAB_TEST_TIMEOUT})
# The one CSV reader (sim/csvfile.h on libcsv): quoting, line ends, BOM, header, errors at their line.
spotlab_add_test(test_csv SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_csv.c LIBS spotlab_sim)
