# The Python package (python/, docs/python.md): its pytest suite on results the built binary writes,
# the example notebook executed with nbclient (docs/example.ipynb), and an offline pip install into a
# fresh virtual environment. Debian's interpreter, whose python3-h5py and python3-pandas setup.sh
# installs (the python3 first on PATH may be another one). Each skips (77) only when h5py or pandas
# are missing; a missing pytest, nbclient or venv is a failure.
find_program(SPOTLAB_PYTHON NAMES python3 PATHS /usr/bin NO_DEFAULT_PATH)
if(NOT SPOTLAB_PYTHON)
  find_program(SPOTLAB_PYTHON NAMES python3)
endif()
set(SPOTLAB_PY_ENV ${SPOTLAB_TEST_ENV} "PYTHONPATH=${CMAKE_SOURCE_DIR}/python" "PYTHONDONTWRITEBYTECODE=1"
    "OMP_NUM_THREADS=2")
if(SPOTLAB_PYTHON)
  add_test(NAME python_package COMMAND ${SPOTLAB_PYTHON} ${CMAKE_SOURCE_DIR}/python/tests/ctest_pytest.py
           ${CMAKE_SOURCE_DIR}/python/tests/test_spotlab.py --basetemp=${CMAKE_CURRENT_BINARY_DIR}/pytest-tmp
           WORKING_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR})
  # every replication's metrics recomputed from its tables and ledger by the catalogue's formulas
  add_test(NAME python_metric_formulas COMMAND ${SPOTLAB_PYTHON} ${CMAKE_SOURCE_DIR}/python/tests/ctest_pytest.py
           ${CMAKE_SOURCE_DIR}/python/tests/test_metric_formulas.py --basetemp=${CMAKE_CURRENT_BINARY_DIR}/pytest-formulas
           WORKING_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR})
  add_test(NAME python_notebook COMMAND ${SPOTLAB_PYTHON} ${CMAKE_SOURCE_DIR}/python/tests/run_notebook.py
           WORKING_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR})
  add_test(NAME python_install COMMAND sh ${CMAKE_SOURCE_DIR}/python/tests/check_install.sh ${SPOTLAB_PYTHON}
           ${CMAKE_SOURCE_DIR} WORKING_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR})
  set_tests_properties(python_package python_metric_formulas python_notebook python_install PROPERTIES
                       ENVIRONMENT "${SPOTLAB_PY_ENV}" SKIP_RETURN_CODE 77 TIMEOUT ${SPOTLAB_TEST_TIMEOUT})
else()
  add_test(NAME python_package COMMAND sh -c "echo 'SKIP: no python3 interpreter'; exit 77")
  set_tests_properties(python_package PROPERTIES SKIP_RETURN_CODE 77)
endif()
