# scripts/ab_pairs.py, the paired timing the performance docs quote: two commands in turn, a line
# per run, the table of medians and the per-pair ratio, --out; a failing command stops it (exit 1,
# its output shown), bad arguments are exit 2. Its figures are not checked: it is timing.
add_test(NAME ab_pairs COMMAND sh -c
  "p=$0/scripts/ab_pairs.py; rm -f ab.txt; \
   /usr/bin/python3 $p -n 2 --out ab.txt -- 'echo one' 'sleep 0.01' > ab_out.txt || { cat ab_out.txt; exit 1; }; cat ab_out.txt; \
   test $(grep -c '^pair [12]/2: [AB] [0-9.]* s, [0-9.]* MiB$' ab_out.txt) = 4 || exit 1; \
   for r in 'A wall s' 'A peak MiB' 'B wall s' 'B peak MiB' 'A/B wall'; do grep -q \"^$r  *[0-9.]*  *[0-9.]*  *[0-9.]*$\" ab.txt || { echo \"no row: $r\"; exit 1; }; done; \
   grep -q '^2 pairs, A first$' ab.txt && grep -q '^A: echo one$' ab.txt || exit 1; \
   /usr/bin/python3 $p -n 1 --first b -- true 'echo boom; exit 3' > ab_fail.txt 2>&1; st=$?; \
   [ $st -eq 1 ] && grep -q 'exited with status 3' ab_fail.txt && grep -q boom ab_fail.txt || { echo \"failing command: $st\"; cat ab_fail.txt; exit 1; }; \
   grep -q '^pair 1/1: A' ab_fail.txt && { echo 'A ran after B failed'; exit 1; }; \
   for bad in '-n 0 -- a b' '-n x -- a b' '--warmup -1 -- a b' '--first c -- a b' '-- a' 'a b'; do /usr/bin/python3 $p $bad > /dev/null 2>ab_bad.txt; st=$?; \
     [ $st -eq 2 ] && grep -q '^ab_pairs.py: ' ab_bad.txt || { echo \"bad args '$bad': $st\"; exit 1; }; done"
  ${CMAKE_SOURCE_DIR})
set_tests_properties(ab_pairs PROPERTIES ENVIRONMENT "${SPOTLAB_TEST_ENV}" TIMEOUT 60)
