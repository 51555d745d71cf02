/* cu_main.c - the main() of every CUnit test program: runs the suites its test file declares in
 * `spotlab_suites` and exits non-zero when any assertion failed. With arguments, only the tests
 * whose name contains one of them run (`./test_lab service` runs the service tests): for chasing a
 * test in a loop without the rest of its program. */
#include <CUnit/Basic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern CU_SuiteInfo spotlab_suites[];

static int wanted(const char *name, int argc, char **argv) {
  if (argc < 2) return 1;
  for (int a = 1; a < argc; a++)
    if (strstr(name, argv[a])) return 1;
  return 0;
}

int main(int argc, char **argv) {
  size_t ns = 0;
  while (spotlab_suites[ns].pName) ns++;
  CU_SuiteInfo *suites = calloc(ns + 1, sizeof *suites);
  CU_TestInfo **kept = calloc(ns + 1, sizeof *kept);
  if (!suites || !kept) return 2;
  size_t nrun = 0;
  for (size_t s = 0; s < ns; s++) {
    size_t nt = 0, k = 0;
    while (spotlab_suites[s].pTests[nt].pName) nt++;
    if (!(kept[s] = calloc(nt + 1, sizeof *kept[s]))) return 2;
    for (size_t t = 0; t < nt; t++)
      if (wanted(spotlab_suites[s].pTests[t].pName, argc, argv)) kept[s][k++] = spotlab_suites[s].pTests[t];
    suites[s] = spotlab_suites[s];
    suites[s].pTests = kept[s];
    nrun += k;
  }
  if (!nrun) {
    fprintf(stderr, "%s: no test name contains", argv[0]);
    for (int a = 1; a < argc; a++) fprintf(stderr, " \"%s\"", argv[a]);
    fprintf(stderr, "\n");
    return 2;
  }
  if (CU_initialize_registry() != CUE_SUCCESS) return 2;
  if (CU_register_suites(suites) != CUE_SUCCESS) {
    fprintf(stderr, "cannot register suites: %s\n", CU_get_error_msg());
    return 2;
  }
  CU_basic_set_mode(CU_BRM_VERBOSE);
  CU_basic_run_tests();
  unsigned failed = CU_get_number_of_tests_failed() + CU_get_number_of_suites_failed();
  unsigned run = CU_get_number_of_tests_run();
  printf("%u passed, %u failed\n", run - CU_get_number_of_tests_failed(), CU_get_number_of_tests_failed());
  CU_cleanup_registry();
  for (size_t s = 0; s < ns; s++) free(kept[s]);
  free(kept);
  free(suites);
  return failed ? 1 : 0;
}
