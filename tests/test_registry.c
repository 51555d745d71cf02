/* test_registry.c - the command registry of app/main.c: it held 32 commands and dropped any
 * later one silently; now it grows. main.c is compiled here with its main renamed. */
#define main spotlab_main
#include "app/main.c"
#undef main

#include <CUnit/CUnit.h>

#define T_NCMDS 40
static char t_names[T_NCMDS][16];
static app_command t_cmds[T_NCMDS];
static int t_ran = -1;
static int t_main(int argc, char **argv) {
  (void)argc;
  t_ran = atoi(argv[0] + 3); /* "cmdNN" */
  return 0;
}

static void test_more_than_32_commands(void) {
  int before = app__ncmds;
  for (int i = 0; i < T_NCMDS; i++) {
    snprintf(t_names[i], sizeof t_names[i], "cmd%02d", i);
    t_cmds[i] = (app_command){t_names[i], "a test command", t_main, NULL};
    app_register(&t_cmds[i]);
  }
  CU_ASSERT_EQUAL(app__ncmds, before + T_NCMDS);
  /* the last one registered is reached by its name */
  char a0[] = "spotlab", a1[] = "cmd39";
  char *argv[] = {a0, a1, NULL};
  CU_ASSERT_EQUAL(spotlab_main(2, argv), 0);
  CU_ASSERT_EQUAL(t_ran, 39);
  /* and a misspelt one gets its closest name */
  char b1[] = "cmd3x";
  char *argv2[] = {a0, b1, NULL};
  CU_ASSERT_EQUAL(spotlab_main(2, argv2), 2);
}

static CU_TestInfo registry_tests[] = {
    {"more than 32 commands are all registered", test_more_than_32_commands},
    CU_TEST_INFO_NULL,
};
CU_SuiteInfo spotlab_suites[] = {
    {"registry", NULL, NULL, NULL, NULL, registry_tests},
    CU_SUITE_INFO_NULL,
};
