# Every C file formatted as .clang-format says (clang-format 14; `make format` applies it).
add_test(NAME format COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/format_check.sh ${CMAKE_SOURCE_DIR})
set_tests_properties(format PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 120)
