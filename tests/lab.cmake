# Lab mode (real jobs on CPU worker processes under the scheduling core).
spotlab_add_test(test_lab SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_lab.c LIBS spotlab_lab)
# 240 s: on a loaded 2-core machine the suite has run past 120 s (scaled under sanitizers)
math(EXPR _lab_timeout "240 * ${SPOTLAB_TIMEOUT_SCALE}")
set_tests_properties(test_lab PROPERTIES TIMEOUT ${_lab_timeout})
