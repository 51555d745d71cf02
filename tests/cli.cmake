# The command's registry (app/main.c compiled into the test with its main renamed).
spotlab_add_test(test_registry SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_registry.c ${CMAKE_SOURCE_DIR}/app/cli.c
                 LIBS spotlab_sim)
