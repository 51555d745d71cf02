# The scheduling core (no engine) and the fault_tolerance model built on it.
spotlab_add_test(test_sched SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_sched.c LIBS spotlab_sched)
spotlab_add_test(test_ftsim SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_ftsim.c LIBS spotlab_ftsim)
