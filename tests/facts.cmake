# Stylized facts the market must reproduce (issue 46, docs/facts.md): scripts/facts.py runs the
# shipped scenario of each row of data/facts.csv and checks the measurement against the published
# band; a fact the model does not reproduce is checked to stay outside its band (the doc says so).
# `ctest -L facts` runs them. Debian's interpreter with python3-h5py and python3-pandas (as the
# python tests); skipped (77) only when those are missing.
find_program(SPOTLAB_FACTS_PYTHON NAMES python3 PATHS /usr/bin NO_DEFAULT_PATH)
if(SPOTLAB_FACTS_PYTHON)
  add_test(NAME facts
           COMMAND sh -c "'${SPOTLAB_FACTS_PYTHON}' -c 'import h5py, pandas' 2>/dev/null || { echo 'SKIP: no h5py or pandas'; exit 77; }; exec '${SPOTLAB_FACTS_PYTHON}' '${CMAKE_SOURCE_DIR}/scripts/facts.py' --work '${CMAKE_CURRENT_BINARY_DIR}/facts-tmp'"
           WORKING_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR})
  set_tests_properties(facts PROPERTIES LABELS facts SKIP_RETURN_CODE 77 TIMEOUT ${SPOTLAB_TEST_TIMEOUT}
                       ENVIRONMENT "${SPOTLAB_TEST_ENV};PYTHONDONTWRITEBYTECODE=1")
  # the checker itself: a bad table row is an error at its line (exit 2), a fact outside its band fails
  add_test(NAME facts_checker
           COMMAND ${SPOTLAB_FACTS_PYTHON} ${CMAKE_SOURCE_DIR}/tests/facts_checker_test.py
           WORKING_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR})
  set_tests_properties(facts_checker PROPERTIES LABELS facts SKIP_RETURN_CODE 77 TIMEOUT ${SPOTLAB_TEST_TIMEOUT}
                       ENVIRONMENT "${SPOTLAB_TEST_ENV};PYTHONDONTWRITEBYTECODE=1")
endif()
