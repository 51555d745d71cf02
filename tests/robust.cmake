# `spotlab compare --robust` (app/cmd_compare_robust.c): the rerun at the files' own value
# reproduces their change, verdicts agree with their counts, bad input writes nothing.
add_test(NAME compare_robust COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/robust_test.sh $<TARGET_FILE:spotlab>
         ${CMAKE_SOURCE_DIR})
set_tests_properties(compare_robust PROPERTIES ENVIRONMENT "${SPOTLAB_TEST_ENV}" TIMEOUT ${SPOTLAB_TEST_TIMEOUT})
