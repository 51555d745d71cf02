# Experiments (analysis/experiment, app/cmd_experiment.c): designs, constraint confidence, Pareto
# selection, sensitivities, bad experiment files, a PHOLD factorial with a known answer, resume.
spotlab_add_test(test_experiment SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_experiment.c LIBS spotlab_experiment
                 spotlab_report spotlab_sim)
add_dependencies(test_experiment spotlab)
# At 3 ranks (whole points) and 2 (--spread model): the files of 1 rank; --resume keeps the finished points.
add_test(NAME mpi_experiment_ranks COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/experiment_mpi.sh ${MPIEXEC_EXECUTABLE}
                                            $<TARGET_FILE:spotlab> ${CMAKE_SOURCE_DIR})
set_tests_properties(mpi_experiment_ranks PROPERTIES ENVIRONMENT "${SPOTLAB_TEST_ENV}" TIMEOUT ${SPOTLAB_TEST_TIMEOUT})
