# Lab mode (real jobs on CPU worker processes under the scheduling core).
spotlab_add_test(test_lab SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_lab.c LIBS spotlab_lab)
# 300 s: on a loaded 2-core machine the suite has run past 120 s (scaled under sanitizers); the wide
# jobs of 8 workers (--predict, real) and 256 GPUs (the twin) add 25 s at load average 11 (2026-12-07)
math(EXPR _lab_timeout "300 * ${SPOTLAB_TIMEOUT_SCALE}")
set_tests_properties(test_lab PROPERTIES TIMEOUT ${_lab_timeout})
