# Work spread over machines: shards of a run merged into one file (spotlab run --shard, spotlab
# merge), and the Slurm batch scripts (scripts/slurm/) against a real controller and compute
# daemon started on this machine (skipped, exit 77, only where they cannot be installed or started).
add_test(NAME merge COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/merge_test.sh $<TARGET_FILE:spotlab> ${CMAKE_SOURCE_DIR}
                            ${MPIEXEC_EXECUTABLE})
set_tests_properties(merge PROPERTIES ENVIRONMENT "${SPOTLAB_TEST_ENV}" TIMEOUT ${SPOTLAB_TEST_TIMEOUT})
add_test(NAME slurm COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/slurm_test.sh $<TARGET_FILE:spotlab> ${CMAKE_SOURCE_DIR})
set_tests_properties(slurm PROPERTIES ENVIRONMENT "${SPOTLAB_TEST_ENV}" TIMEOUT 900 SKIP_RETURN_CODE 77)
