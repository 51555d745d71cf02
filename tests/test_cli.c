/* test_cli.c - the `spotlab` command as a user meets it: help, exit codes, FILE:LINE errors for
 * bad scenarios, nothing run and nothing written on bad input, results written atomically. */
#include "tests/testutil.h"

#include <CUnit/CUnit.h>
#include <unistd.h>

static char cmd[8192];

static int sl(const char *args, char **out) {
  snprintf(cmd, sizeof cmd, "%s %s", tu_bin(), args);
  return tu_run(cmd, out);
}

static void test_help(void) {
  char *out;
  CU_ASSERT_EQUAL(sl("--help", &out), 0);
  CU_ASSERT(strstr(out, "run") && strstr(out, "check") && strstr(out, "bench phold"));
  free(out);
  CU_ASSERT_EQUAL(sl("run --help", &out), 0);
  CU_ASSERT(strstr(out, "--reps") != NULL);
  free(out);
  CU_ASSERT_EQUAL(sl("bench phold --help", &out), 0);
  free(out);
  CU_ASSERT_EQUAL(sl("frobnicate", &out), 2);
  CU_ASSERT(strstr(out, "unknown command") != NULL);
  free(out);
  CU_ASSERT_EQUAL(sl("run", &out), 2);
  free(out);
  CU_ASSERT_EQUAL(sl("run x.cfg --reps 0", &out), 2);
  CU_ASSERT(strstr(out, "--reps") != NULL);
  free(out);
}

/* Each bad scenario: exit 2, the FILE:LINE message, and no results file. */
static void expect_bad(const char *text, const char *message) {
  tu_write("bad.cfg", text);
  unlink("bad.h5");
  char *out;
  CU_ASSERT_EQUAL(sl("run bad.cfg --out bad.h5", &out), 2);
  if (!strstr(out, message)) fprintf(stderr, "\nexpected '%s' in:\n%s\n", message, out);
  CU_ASSERT(strstr(out, message) != NULL);
  CU_ASSERT(strstr(out, "nothing was run") != NULL);
  CU_ASSERT(access("bad.h5", F_OK) != 0);
  free(out);
}

static void test_bad_scenarios(void) {
  expect_bad("model = \"phold\";\nphold = {\n  lps = 16;\n  lpz = 3;\n};\n",
             "bad.cfg:4: key 'phold.lpz': unknown key (did you mean 'lps'?)");
  expect_bad("model = \"phold\";\nphold = {\n  remote = 1.5;\n};\n",
             "bad.cfg:3: key 'phold.remote': value 1.5 is out of range [0, 1]");
  expect_bad("model = \"phold\";\nrun = {\n  reps = \"four\";\n};\n",
             "bad.cfg:3: key 'run.reps': expected an integer, found a string");
  expect_bad("model = \"phold\";\nrun = { end = \"1 fortnight\"; };\n", "bad.cfg:2: key 'run.end'");
  expect_bad("model = \"philosophy\";\n", "bad.cfg:1: key 'model': unknown model 'philosophy'");
  expect_bad("run = { seed = 1; };\n", "key 'model': is required");
  expect_bad("model = \"phold\";\nphold = { lps = ; };\n", "bad.cfg:2: syntax error");
  expect_bad("model = \"phold\";\nextra = 1;\n", "bad.cfg:2: key 'extra': unknown key");
  char *out;
  CU_ASSERT_EQUAL(sl("run /no/such/file.cfg", &out), 2);
  CU_ASSERT(strstr(out, "/no/such/file.cfg: cannot read the scenario file") != NULL);
  free(out);
}

static void test_check_and_keys(void) {
  char *out, args[4096];
  snprintf(args, sizeof args, "check %s/scenarios/phold.cfg --print", tu_src());
  CU_ASSERT_EQUAL(sl(args, &out), 0);
  CU_ASSERT(strstr(out, "OK: model phold") != NULL);
  CU_ASSERT(strstr(out, "lookahead = 0.10000000000000001;") != NULL);
  free(out);
  CU_ASSERT_EQUAL(sl("keys", &out), 0);
  CU_ASSERT(strstr(out, "run.seed") && strstr(out, "phold.remote"));
  free(out);
  CU_ASSERT_EQUAL(sl("keys nosuchmodel", &out), 2);
  free(out);
}

static void test_run_writes_results(void) {
  tu_write("ok.cfg", "model = \"phold\";\nrun = { end = 50.0; reps = 3; seed = 9; };\nphold = { lps = 32; };\n");
  unlink("ok.h5");
  char *out;
  CU_ASSERT_EQUAL(sl("run ok.cfg --out ok.h5", &out), 0);
  CU_ASSERT(strstr(out, "events_per_lp") != NULL);
  CU_ASSERT(strstr(out, "results: ok.h5") != NULL);
  free(out);
  CU_ASSERT(access("ok.h5", F_OK) == 0);
  /* nothing temporary is left next to it */
  CU_ASSERT_EQUAL(tu_run("ls ok.h5.tmp.* 2>/dev/null | wc -l | grep -qx 0", NULL), 0);
  /* an unwritable destination is refused before running */
  CU_ASSERT_EQUAL(sl("run ok.cfg --out /nonexistent-dir/ok.h5", &out), 2);
  CU_ASSERT(strstr(out, "cannot write results") != NULL);
  free(out);
  /* --param overrides a key; a bad override is a usage error */
  CU_ASSERT_EQUAL(sl("run ok.cfg --out ok2.h5 --param phold.lps=8 --quiet", &out), 0);
  free(out);
  CU_ASSERT_EQUAL(sl("run ok.cfg --out ok2.h5 --param phold.lps=0 --quiet", &out), 2);
  CU_ASSERT(strstr(out, "phold.lps") != NULL);
  free(out);
}

static CU_TestInfo cli_tests[] = {
    {"help and usage errors", test_help},
    {"bad scenarios: FILE:LINE, exit 2, nothing written", test_bad_scenarios},
    {"check and keys", test_check_and_keys},
    {"run writes its results file", test_run_writes_results},
    CU_TEST_INFO_NULL,
};
CU_SuiteInfo spotlab_suites[] = {
    {"cli", NULL, NULL, NULL, NULL, cli_tests},
    CU_SUITE_INFO_NULL,
};
