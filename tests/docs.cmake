# Docs that cannot drift: every command and Python block of README.md and docs/*.md run from a
# scratch copy, synopsis blocks checked against --help, quoted figures and printed outputs compared
# with what the blocks print now, what they write checked against .gitignore, metric names, keys
# and paths checked (tests/docs_test.py says how a block is marked and shortened).
# Debian's interpreter, as for the Python package's tests (the python3 first on PATH may be another)
if(EXISTS /usr/bin/python3)
  add_test(NAME docs COMMAND /usr/bin/python3 ${CMAKE_CURRENT_SOURCE_DIR}/docs_test.py
           --bin $<TARGET_FILE:spotlab> --src ${CMAKE_SOURCE_DIR}
           --timeout-scale ${SPOTLAB_TIMEOUT_SCALE})
else()
  add_test(NAME docs COMMAND sh -c "echo 'docs test: python3 not found'; exit 1")
endif()
# twice the others' limit: it runs every block of the docs (about 45, two files at a time), 6 min
# of wall for 2.3 min of CPU with load average 13 on 2 cores (2026-12-07), where 300 s timed out
math(EXPR SPOTLAB_DOCS_TIMEOUT "2 * ${SPOTLAB_TEST_TIMEOUT}")
set_tests_properties(docs PROPERTIES ENVIRONMENT "${SPOTLAB_TEST_ENV}" TIMEOUT ${SPOTLAB_DOCS_TIMEOUT})
# docs/metrics.md is `spotlab metrics --markdown`, generated from the metric catalogue: it fails
# when one changes without the other (regenerate: spotlab metrics --markdown > docs/metrics.md).
add_test(NAME docs_metrics
         COMMAND sh -c "\"$1\" metrics --markdown 2>/dev/null | diff -u \"$2\" - && echo 'docs/metrics.md matches the catalogue'"
                 sh $<TARGET_FILE:spotlab> ${CMAKE_SOURCE_DIR}/docs/metrics.md)
set_tests_properties(docs_metrics PROPERTIES ENVIRONMENT "${SPOTLAB_TEST_ENV}" TIMEOUT 60)
# python/spotlab/names.py is generated from models/market/mkt_names.h (the market's table and
# series names, declared once): it fails when one changes without the other (regenerate:
# scripts/names.py). Its test that the names are the ones a run writes is python_package's.
add_test(NAME names_python COMMAND python3 ${CMAKE_SOURCE_DIR}/scripts/names.py --check)
set_tests_properties(names_python PROPERTIES TIMEOUT 60)
# No function over 150 lines in the market model, the lab and the command line (issue 48's house
# rule; scripts/funclen.py lists the longest).
add_test(NAME function_length COMMAND python3 ${CMAKE_SOURCE_DIR}/scripts/funclen.py 150
         ${CMAKE_SOURCE_DIR}/models/market ${CMAKE_SOURCE_DIR}/lab ${CMAKE_SOURCE_DIR}/app)
set_tests_properties(function_length PROPERTIES TIMEOUT 60)
