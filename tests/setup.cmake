# Set-up on any machine (tests/setup_test.sh): scripts/setup.sh against fake apt-get, dpkg-query,
# sudo and id that record their calls: root, sudo, no sudo, no apt, a held lock, the skip switch.
add_test(NAME setup_script COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/setup_test.sh ${CMAKE_SOURCE_DIR})
set_tests_properties(setup_script PROPERTIES TIMEOUT 120 SKIP_RETURN_CODE 77)
