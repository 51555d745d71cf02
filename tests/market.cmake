# The market model: economics unit tests (no engine) and model tests on the engine (M/M/c against
# Erlang C, money conservation, churn, scenario errors with FILE:LINE), and determinism over ranks.
spotlab_add_test(test_market SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_market.c LIBS spotlab_market)
spotlab_add_test(test_market_model SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_market_model.c
                 LIBS spotlab_market spotlab_sim)
spotlab_add_test(test_auction SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_auction.c LIBS spotlab_market)
spotlab_add_test(test_strategy SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_strategy.c LIBS spotlab_market)
# A toy pool and a toy clearing rule, defined in the test and registered through the model's API,
# run through the market (docs/architecture.md, "Adding a pool", "Adding a rule").
spotlab_add_test(test_market_toy SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_market_toy.c LIBS spotlab_market spotlab_sim)

# Bit-identical results on 1, 2 and 4 ranks: the digest of every series, table and metric of two
# days of scenarios/default.cfg must not depend on the number of ranks. Its three regions are the
# engine's groups: 2 ranks own whole regions and run one window; 4 ranks split them (equal blocks,
# a window per lookahead).
add_executable(test_market_mpi ${CMAKE_CURRENT_SOURCE_DIR}/test_market_mpi.c)
target_link_libraries(test_market_mpi PRIVATE spotlab_market spotlab_sim)
add_test(NAME market_ranks_identical COMMAND sh -c
  "for np in 1 2 4; do $0 --oversubscribe -np $np $1 $2 7 > digest_out_$np.txt || exit 1; grep '^digest' digest_out_$np.txt | cut -d' ' -f2-4,7- > digest_$np.txt; done; \
   cat digest_1.txt; grep -q '^windows 1 ' digest_out_2.txt || { echo '2 ranks: not one window'; exit 1; }; grep '^windows' digest_out_4.txt; grep -q ' ok$' digest_1.txt && cmp digest_1.txt digest_2.txt && cmp digest_1.txt digest_4.txt"
  ${MPIEXEC_EXECUTABLE} $<TARGET_FILE:test_market_mpi> ${CMAKE_SOURCE_DIR}/scenarios/default.cfg)
set_tests_properties(market_ranks_identical PROPERTIES ENVIRONMENT "${SPOTLAB_TEST_ENV}" TIMEOUT ${SPOTLAB_TEST_TIMEOUT})
# The same for GP Nodes with their own queues (scenarios/gp_nodes.cfg).
add_test(NAME market_ranks_identical_nodes COMMAND sh -c
  "for np in 1 2 4; do $0 --oversubscribe -np $np $1 $2 7 > digest_nodes_out_$np.txt || exit 1; grep '^digest' digest_nodes_out_$np.txt | cut -d' ' -f2-4,7- > digest_nodes_$np.txt; done; \
   cat digest_nodes_1.txt; grep -q '^windows 1 ' digest_nodes_out_2.txt || { echo '2 ranks: not one window'; exit 1; }; grep '^windows' digest_nodes_out_4.txt; grep -q ' ok$' digest_nodes_1.txt && cmp digest_nodes_1.txt digest_nodes_2.txt && cmp digest_nodes_1.txt digest_nodes_4.txt"
  ${MPIEXEC_EXECUTABLE} $<TARGET_FILE:test_market_mpi> ${CMAKE_SOURCE_DIR}/scenarios/gp_nodes.cfg)
set_tests_properties(market_ranks_identical_nodes PROPERTIES ENVIRONMENT "${SPOTLAB_TEST_ENV}" TIMEOUT ${SPOTLAB_TEST_TIMEOUT})
# The same for every reaction on (scenarios/pricing_after.cfg: demand, pool choice, entry and exit,
# reliability, pool switching by goal).
add_test(NAME market_ranks_identical_responses COMMAND sh -c
  "for np in 1 2 4; do $0 --oversubscribe -np $np $1 $2 7 > digest_resp_out_$np.txt || exit 1; grep '^digest' digest_resp_out_$np.txt | cut -d' ' -f2-4,7- > digest_resp_$np.txt; done; \
   cat digest_resp_1.txt; grep -q '^windows 1 ' digest_resp_out_2.txt || { echo '2 ranks: not one window'; exit 1; }; grep '^windows' digest_resp_out_4.txt; grep -q ' ok$' digest_resp_1.txt && cmp digest_resp_1.txt digest_resp_2.txt && cmp digest_resp_1.txt digest_resp_4.txt"
  ${MPIEXEC_EXECUTABLE} $<TARGET_FILE:test_market_mpi> ${CMAKE_SOURCE_DIR}/scenarios/pricing_after.cfg)
set_tests_properties(market_ranks_identical_responses PROPERTIES ENVIRONMENT "${SPOTLAB_TEST_ENV}" TIMEOUT ${SPOTLAB_TEST_TIMEOUT})

# `bench market --repeat 2 --versus G:D`: each size runs twice with the same engine events (the
# model's statics start afresh), a ratio line per pair and the median, four CSV lines of which only
# the first carries memory per GPU (the process's peak belongs to the first run alone).
add_test(NAME bench_market_versus COMMAND sh -c
  "rm -f versus.csv; $0 bench market --gpus 3000 --days 1 --versus 1000:2 --repeat 2 --out versus.csv > versus.txt 2>&1 || { cat versus.txt; exit 1; }; \
   cat versus.txt; test $(awk '$1 == 3000 && $2 == 1 && $3 == 1' versus.txt | wc -l) = 2 || exit 1; \
   test $(awk '$1 == 3000 {print $4}' versus.txt | sort -u | wc -l) = 1 || { echo 'repeats differ in events'; exit 1; }; \
   test $(grep -c '^events/s at 3000 GPUs x 1 days over 1000 GPUs x 2 days run after it: ' versus.txt) = 2 || exit 1; \
   grep -q '^median of 2: .* ratio of events/s against 1000 GPUs x 2 days [0-9.]* ' versus.txt || exit 1; \
   test $(wc -l < versus.csv) = 4 && head -1 versus.csv | grep -q '^3000,1,1,[0-9]*,[0-9.]*,[0-9.e+]*,[0-9]*,[0-9]*,conserved$' && \
   sed -n 2p versus.csv | grep -q '^1000,2,1,[0-9]*,[0-9.]*,[0-9.e+]*,,,conserved$'" $<TARGET_FILE:spotlab>)
set_tests_properties(bench_market_versus PROPERTIES ENVIRONMENT "${SPOTLAB_TEST_ENV}" TIMEOUT ${SPOTLAB_TEST_TIMEOUT})

# `bench market --sizes A,B --repeat 2`: two rounds of both sizes, each run printing its own memory
# (the peak is reset before each), the same engine events in both rounds, and a table by size whose
# first size is the reference (1.000) and whose events are the runs'.
add_test(NAME bench_market_sizes COMMAND sh -c
  "rm -f sizes.csv; $0 bench market --sizes 1000,3000 --days 1 --repeat 2 --out sizes.csv > sizes.txt 2>&1 || { cat sizes.txt; exit 1; }; \
   cat sizes.txt; test $(awk '($1 == 1000 || $1 == 3000) && $2 == 1 && $3 == 1 && $7 != \"-\"' sizes.txt | wc -l) = 4 || { echo 'not four runs with their memory'; exit 1; }; \
   test $(awk '$1 == 3000 && $2 == 1 {print $4}' sizes.txt | sort -u | wc -l) = 1 || { echo 'rounds differ in events'; exit 1; }; \
   grep -q '^cost per event by size, 1 days, 1 rank, median of 2 rounds (caches of cpu0: ' sizes.txt || exit 1; \
   test \"$(awk '/^cost per event/ {t = 1; next} t && $1 == 1000 {print $NF}' sizes.txt)\" = 1.000 || { echo 'first size not the reference'; exit 1; }; \
   test \"$(awk '/^cost per event/ {t = 1; next} t && $1 == 3000 {print $2}' sizes.txt)\" = \"$(awk '$1 == 3000 && $2 == 1 {print $4; exit}' sizes.txt)\" || { echo 'table events differ from the runs'; exit 1; }; \
   awk '/^cost per event/ {t = 1; next} t && $1 == 3000 { ok = ($6 + 0 > 0) && ($NF + 0 > 0) } END { exit !ok }' sizes.txt || { echo 'no memory or ratio for 3000'; exit 1; }; \
   test $(grep -c ',conserved$' sizes.csv) = 4 && ! grep -q ',,,' sizes.csv" $<TARGET_FILE:spotlab>)
set_tests_properties(bench_market_sizes PROPERTIES ENVIRONMENT "${SPOTLAB_TEST_ENV}" TIMEOUT ${SPOTLAB_TEST_TIMEOUT})

# `bench market` on 2 ranks says how evenly the ranks shared the engine events: one region is one
# group, kept whole on one rank, so the other rank handles none (100%, 1.00x); two regions give each
# rank one, a share above half whose bound is its inverse, and the same events as one rank.
add_test(NAME bench_market_rank_share COMMAND sh -c
  "$0 --oversubscribe -np 2 $1 bench market --gpus 2000 --days 1 --regions 1 > share1.txt 2>&1 || { cat share1.txt; exit 1; }; \
   cat share1.txt; grep -q '^ranks: the busiest handled 100.0% of the engine events, 1.00x at most from the split alone' share1.txt || exit 1; \
   $0 --oversubscribe -np 2 $1 bench market --gpus 2000 --days 1 --regions 2 > share2.txt 2>&1 || { cat share2.txt; exit 1; }; \
   $1 bench market --gpus 2000 --days 1 --regions 2 > share2_seq.txt 2>&1 || { cat share2_seq.txt; exit 1; }; \
   cat share2.txt; grep -q '^ranks:' share2_seq.txt && { echo 'one rank printed a share'; exit 1; }; \
   test $(awk '$1 == 2000 && $3 == 2 {print $4}' share2.txt) = $(awk '$1 == 2000 && $3 == 1 {print $4}' share2_seq.txt) || { echo 'events differ from one rank'; exit 1; }; \
   awk '/^ranks: the busiest handled/ { s = $5 + 0; x = $10 + 0; n++ } END { exit !(n == 1 && s > 50 && s < 100 && x > 1 && x < 2 && (x - 100 / s) < 0.006 && (100 / s - x) < 0.006) }' share2.txt || { echo 'share and bound disagree'; exit 1; }"
  ${MPIEXEC_EXECUTABLE} $<TARGET_FILE:spotlab>)
set_tests_properties(bench_market_rank_share PROPERTIES ENVIRONMENT "${SPOTLAB_TEST_ENV}" TIMEOUT ${SPOTLAB_TEST_TIMEOUT})

# `bench market --wide LO-HI`: the market without wide jobs, then with training jobs of LO-HI GPUs
# gang-placed over the single-GPU hosts (started, with their share of time in all-reduces), and a
# table of the two whose events are the runs'; a range out of 1..1024, or --wide with --sizes, is
# refused with exit status 2.
add_test(NAME bench_market_wide COMMAND sh -c
  "$0 bench market --gpus 3000 --days 1 --wide 16-32 > wide.txt 2>&1 || { cat wide.txt; exit 1; }; \
   cat wide.txt; test $(awk '$1 == 3000 && $2 == 1 && $3 == 1' wide.txt | wc -l) = 2 || { echo 'not two runs'; exit 1; }; \
   awk '/^training jobs of 16-32 GPUs: / { s = $8 + 0; c = $NF + 0; n++ } END { exit !(n == 1 && s > 0 && c > 0 && c < 1) }' wide.txt || { echo 'no wide job started'; exit 1; }; \
   test \"$(awk '/^wide jobs against none/ {t = 1; next} t && $1 == \"16-32\" {print $3}' wide.txt)\" = \"$(awk '$1 == 3000 && $2 == 1 {e = $4} END {print e}' wide.txt)\" || { echo 'table events differ from the wide run'; exit 1; }; \
   test \"$(awk '/^wide jobs against none/ {t = 1; next} t && $1 == 1 && $2 == \"GPU\" {print $3}' wide.txt)\" = \"$(awk '$1 == 3000 && $2 == 1 {print $4; exit}' wide.txt)\" || { echo 'table events differ from the run without'; exit 1; }; \
   grep -q '^events/s with wide jobs over without, same round: [0-9.]* (median)' wide.txt || exit 1; \
   for bad in '--wide 0-3' '--wide 4-2000' '--wide 8' '--wide 4-8 --sizes 1000,2000'; do \
     $0 bench market --gpus 3000 --days 1 $bad > wide_bad.txt 2>&1; rc=$?; \
     test $rc = 2 && grep -q 'spotlab bench market: --wide' wide_bad.txt || { echo \"$bad: exit $rc\"; cat wide_bad.txt; exit 1; }; done" $<TARGET_FILE:spotlab>)
set_tests_properties(bench_market_wide PROPERTIES ENVIRONMENT "${SPOTLAB_TEST_ENV}" TIMEOUT ${SPOTLAB_TEST_TIMEOUT})

# No circle among the market model's files: scripts/market_deps.py lists, per .c file of
# models/market, the files whose non-static functions and tables it names, and fails on a circle or
# on a test of a pool's or rule's identity outside its descriptor. It is first shown a circle of its
# own (two files calling each other) and an identity test, which it must report.
add_test(NAME market_no_cycle COMMAND sh -c
  "rm -rf cycle_probe && mkdir cycle_probe && printf 'void a(void) { b(); }\\n' > cycle_probe/a.c && \
   printf 'void b(void) { a(); }\\n' > cycle_probe/b.c && \
   if python3 $0 cycle_probe > cycle_probe.txt; then cat cycle_probe.txt; echo 'a circle went unseen'; exit 1; fi; \
   grep -q '^CIRCLE: a.c <-> b.c$' cycle_probe.txt || { cat cycle_probe.txt; exit 1; }; \
   rm -rf cycle_probe && mkdir cycle_probe && printf 'int f(int p) { return p == MKT_POOL_FIXED; }\\n' > cycle_probe/a.c && \
   if python3 $0 cycle_probe > cycle_probe.txt; then cat cycle_probe.txt; echo 'a pool identity test went unseen'; exit 1; fi; \
   grep -q '^IDENTITY: a.c:1: ' cycle_probe.txt || { cat cycle_probe.txt; exit 1; }; \
   python3 $0 $1" ${CMAKE_SOURCE_DIR}/scripts/market_deps.py ${CMAKE_SOURCE_DIR}/models/market)
set_tests_properties(market_no_cycle PROPERTIES TIMEOUT 60)
