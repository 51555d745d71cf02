# The scheduling core (no engine); the market drives it (tests/test_market_model.c).
spotlab_add_test(test_sched SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_sched.c LIBS spotlab_sched)
