# Data that travels and `make install` (tests/install.sh): install to a temporary prefix, run a
# scenario copied outside the checkout, SPOTLAB_DATA, the not-found message.
add_test(NAME install_travel COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/install.sh ${CMAKE_COMMAND} ${CMAKE_BINARY_DIR}
         ${CMAKE_SOURCE_DIR})
set_tests_properties(install_travel PROPERTIES ENVIRONMENT "${SPOTLAB_TEST_ENV}" TIMEOUT ${SPOTLAB_TEST_TIMEOUT})
