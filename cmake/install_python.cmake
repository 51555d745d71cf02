# install_python.cmake - run by `cmake --install`: installs python/ (import spotlab) under the
# install prefix with pip, without network and without build isolation (the build backend and
# h5py/pandas come from Debian's packages). Skipped, with a message, while python/ has no
# pyproject.toml. SPOTLAB_PYTHON_DIR and SPOTLAB_PYTHON are set by install.cmake.
if(NOT EXISTS "${SPOTLAB_PYTHON_DIR}/pyproject.toml")
  message(STATUS "spotlab: no ${SPOTLAB_PYTHON_DIR}/pyproject.toml: the Python package is not installed")
  return()
endif()
if(NOT SPOTLAB_PYTHON)
  message(FATAL_ERROR "spotlab: python/ needs python3 to install (apt-get install python3 python3-pip), "
                      "or configure with -DSPOTLAB_INSTALL_PYTHON=OFF")
endif()
set(prefix "${CMAKE_INSTALL_PREFIX}")
if(DEFINED ENV{DESTDIR} AND NOT "$ENV{DESTDIR}" STREQUAL "")
  set(root --root "$ENV{DESTDIR}")
endif()
# pip builds in the folder it is given (build/, *.egg-info): a copy, so the checkout stays clean
file(REMOVE_RECURSE "${SPOTLAB_PYTHON_STAGE}")
file(COPY "${SPOTLAB_PYTHON_DIR}/" DESTINATION "${SPOTLAB_PYTHON_STAGE}")
message(STATUS "spotlab: ${SPOTLAB_PYTHON} -m pip install --no-build-isolation --no-index --prefix ${prefix} python/")
execute_process(COMMAND "${SPOTLAB_PYTHON}" -m pip install --quiet --no-build-isolation --no-index
                        --disable-pip-version-check --prefix "${prefix}" ${root} "${SPOTLAB_PYTHON_STAGE}"
                RESULT_VARIABLE rc)
file(REMOVE_RECURSE "${SPOTLAB_PYTHON_STAGE}")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "spotlab: installing the Python package failed (pip exit ${rc}; it needs python3-pip, "
                      "python3-setuptools and python3-wheel), or configure with -DSPOTLAB_INSTALL_PYTHON=OFF")
endif()
# where it went (Debian's python puts a --prefix install in PREFIX/local/lib/python3.X/dist-packages)
file(GLOB sites "$ENV{DESTDIR}${prefix}/lib/python3*/site-packages" "$ENV{DESTDIR}${prefix}/local/lib/python3*/dist-packages"
                "$ENV{DESTDIR}${prefix}/lib/python3/dist-packages")
message(STATUS "spotlab: the Python package is in ${sites} (on PYTHONPATH unless Python already looks there)")
