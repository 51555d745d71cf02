# The market model: economics unit tests (no engine) and model tests on the engine (M/M/c against
# Erlang C, money conservation, churn, scenario errors with FILE:LINE), and determinism over ranks.
spotlab_add_test(test_market SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_market.c LIBS spotlab_market)
spotlab_add_test(test_market_model SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_market_model.c
                 LIBS spotlab_market spotlab_sim)
spotlab_add_test(test_auction SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_auction.c LIBS spotlab_market)
spotlab_add_test(test_strategy SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_strategy.c LIBS spotlab_market)

# Bit-identical results on 1, 2 and 4 ranks: the digest of every series, table and metric of two
# days of scenarios/default.cfg must not depend on the number of ranks.
add_executable(test_market_mpi ${CMAKE_CURRENT_SOURCE_DIR}/test_market_mpi.c)
target_link_libraries(test_market_mpi PRIVATE spotlab_market spotlab_sim)
add_test(NAME market_ranks_identical COMMAND sh -c
  "for np in 1 2 4; do $0 --oversubscribe -np $np $1 $2 7 | grep '^digest' | cut -d' ' -f2-4,7- > digest_$np.txt || exit 1; done; \
   cat digest_1.txt; grep -q ' ok$' digest_1.txt && cmp digest_1.txt digest_2.txt && cmp digest_1.txt digest_4.txt"
  ${MPIEXEC_EXECUTABLE} $<TARGET_FILE:test_market_mpi> ${CMAKE_SOURCE_DIR}/scenarios/default.cfg)
set_tests_properties(market_ranks_identical PROPERTIES ENVIRONMENT "${SPOTLAB_TEST_ENV}" TIMEOUT 300)
# The same for GP Nodes with their own queues (scenarios/gp_nodes.cfg).
add_test(NAME market_ranks_identical_nodes COMMAND sh -c
  "for np in 1 2 4; do $0 --oversubscribe -np $np $1 $2 7 | grep '^digest' | cut -d' ' -f2-4,7- > digest_nodes_$np.txt || exit 1; done; \
   cat digest_nodes_1.txt; grep -q ' ok$' digest_nodes_1.txt && cmp digest_nodes_1.txt digest_nodes_2.txt && cmp digest_nodes_1.txt digest_nodes_4.txt"
  ${MPIEXEC_EXECUTABLE} $<TARGET_FILE:test_market_mpi> ${CMAKE_SOURCE_DIR}/scenarios/gp_nodes.cfg)
set_tests_properties(market_ranks_identical_nodes PROPERTIES ENVIRONMENT "${SPOTLAB_TEST_ENV}" TIMEOUT 300)
# The same for every reaction on (scenarios/pricing_after.cfg: demand, pool choice, entry and exit,
# reliability, pool switching by goal).
add_test(NAME market_ranks_identical_responses COMMAND sh -c
  "for np in 1 2 4; do $0 --oversubscribe -np $np $1 $2 7 | grep '^digest' | cut -d' ' -f2-4,7- > digest_resp_$np.txt || exit 1; done; \
   cat digest_resp_1.txt; grep -q ' ok$' digest_resp_1.txt && cmp digest_resp_1.txt digest_resp_2.txt && cmp digest_resp_1.txt digest_resp_4.txt"
  ${MPIEXEC_EXECUTABLE} $<TARGET_FILE:test_market_mpi> ${CMAKE_SOURCE_DIR}/scenarios/pricing_after.cfg)
set_tests_properties(market_ranks_identical_responses PROPERTIES ENVIRONMENT "${SPOTLAB_TEST_ENV}" TIMEOUT 300)
