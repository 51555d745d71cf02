# Experiments (analysis/experiment, app/cmd_experiment.c): designs, constraint confidence, Pareto
# selection, sensitivities, bad experiment files, a PHOLD factorial with a known answer, resume.
spotlab_add_test(test_experiment SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_experiment.c LIBS spotlab_experiment
                 spotlab_report spotlab_sim)
add_dependencies(test_experiment spotlab)
