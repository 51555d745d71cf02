/* cu_main.c - the main() of every CUnit test program: runs the suites its test file declares in
 * `spotlab_suites` and exits non-zero when any assertion failed. */
#include <CUnit/Basic.h>
#include <stdio.h>

extern CU_SuiteInfo spotlab_suites[];

int main(void) {
  if (CU_initialize_registry() != CUE_SUCCESS) return 2;
  if (CU_register_suites(spotlab_suites) != CUE_SUCCESS) {
    fprintf(stderr, "cannot register suites: %s\n", CU_get_error_msg());
    return 2;
  }
  CU_basic_set_mode(CU_BRM_VERBOSE);
  CU_basic_run_tests();
  unsigned failed = CU_get_number_of_tests_failed() + CU_get_number_of_suites_failed();
  unsigned run = CU_get_number_of_tests_run();
  printf("%u passed, %u failed\n", run - CU_get_number_of_tests_failed(), CU_get_number_of_tests_failed());
  CU_cleanup_registry();
  return failed ? 1 : 0;
}
