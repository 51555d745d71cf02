# install.cmake - `make install PREFIX=...` (cmake --install): the command to bin/, the data to
# share/spotlab/data (found there by sim/datapath.h), the example scenarios to
# share/spotlab/scenarios, README, LICENSE, CITATION.cff, CHANGELOG.md and docs/ to share/doc/spotlab,
# the man page to share/man/man1 and the bash completion to share/bash-completion/completions,
# and the Python package of python/ when it exists (pip, no network).
install(TARGETS spotlab RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
# the man page and the bash completion that the command writes from its option tables (app/CMakeLists.txt)
install(FILES ${CMAKE_BINARY_DIR}/spotlab.1 DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
install(FILES ${CMAKE_BINARY_DIR}/spotlab.bash-completion DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions
        RENAME spotlab)
install(DIRECTORY ${CMAKE_SOURCE_DIR}/data/ DESTINATION ${SPOTLAB_INSTALL_DATA})
install(DIRECTORY ${CMAKE_SOURCE_DIR}/scenarios/ DESTINATION ${CMAKE_INSTALL_DATADIR}/spotlab/scenarios)
install(FILES ${CMAKE_SOURCE_DIR}/README.md ${CMAKE_SOURCE_DIR}/LICENSE ${CMAKE_SOURCE_DIR}/CITATION.cff
              ${CMAKE_SOURCE_DIR}/CHANGELOG.md DESTINATION ${CMAKE_INSTALL_DOCDIR})
# docs/ beside the README, whose links name docs/*.md (history/ and the notebook come along)
install(DIRECTORY ${CMAKE_SOURCE_DIR}/docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR}/docs)
option(SPOTLAB_INSTALL_PYTHON "Install the Python package of python/ with pip (when python/pyproject.toml exists)" ON)
if(SPOTLAB_INSTALL_PYTHON)
  # Debian's interpreter first: the package is built on Debian's python3-h5py and python3-pandas
  # (another python3 earlier on PATH, such as pyenv's, lacks them); -DSPOTLAB_PYTHON3=... to choose
  find_program(SPOTLAB_PYTHON3 NAMES python3 PATHS /usr/bin NO_DEFAULT_PATH)
  find_program(SPOTLAB_PYTHON3 NAMES python3)
  install(CODE "set(SPOTLAB_PYTHON_DIR \"${CMAKE_SOURCE_DIR}/python\")
                set(SPOTLAB_PYTHON \"${SPOTLAB_PYTHON3}\")
                set(SPOTLAB_PYTHON_STAGE \"${CMAKE_BINARY_DIR}/python-install\")")
  install(SCRIPT ${CMAKE_SOURCE_DIR}/cmake/install_python.cmake)
endif()
