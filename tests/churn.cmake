# Host availability distributions and the FTA fits loader (models/churn).
spotlab_add_test(test_churn SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_churn.c LIBS spotlab_churn)
