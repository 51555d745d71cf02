/* test_determinism.c - the engine's promise: one scenario and seed give bit-identical results on
 * 1, 2, 3 and 4 MPI ranks and on 1 or 2 OpenMP threads. Every series, table and metric of every
 * replication is compared exactly (h5diff with no tolerance).
 *
 * The scenarios checked are PHOLD (remote events on every rank boundary) and every scenario
 * named in tests/determinism_scenarios.txt (one path per line, relative to the source tree,
 * with optional --param overrides that keep it short). */
#include "spotlab_config.h"
#include "tests/testutil.h"

#include <CUnit/CUnit.h>
#include <unistd.h>

static const char *det_env = ""; /* environment for the runs (test_calendar sets it) */
static int run_np(const char *scenario, const char *extra, int np, int threads, const char *out) {
  char cmd[8192], *log;
  snprintf(cmd, sizeof cmd, "%s OMP_NUM_THREADS=%d %s --oversubscribe -np %d %s run %s --out %s --quiet %s", det_env,
           threads, SPOTLAB_MPIEXEC, np, tu_bin(), scenario, out, extra ? extra : "");
  int rc = tu_run(cmd, &log);
  if (rc) fprintf(stderr, "\n%s\n-> exit %d\n%s\n", cmd, rc, log);
  free(log);
  return rc;
}

/* 0 when every compared object is identical. */
static int same(const char *a, const char *b, int reps) {
  const char *objs[] = {"/metrics", "/summary"};
  char cmd[8192], *log;
  for (int i = 0; i < 2; i++) {
    snprintf(cmd, sizeof cmd, "h5diff %s %s %s", a, b, objs[i]);
    if (tu_run(cmd, &log)) {
      fprintf(stderr, "\n%s differs:\n%.2000s\n", objs[i], log);
      free(log);
      return 1;
    }
    free(log);
  }
  for (int r = 0; r < reps; r++) {
    const char *parts[] = {"series", "tables"};
    for (int p = 0; p < 2; p++) {
      snprintf(cmd, sizeof cmd, "h5diff %s %s /reps/rep_%04d/%s", a, b, r, parts[p]);
      if (tu_run(cmd, &log)) {
        fprintf(stderr, "\n%s differs:\n%.2000s\n", cmd, log);
        free(log);
        return 1;
      }
      free(log);
    }
  }
  return 0;
}

/* 1 rank against 2 and 4 (and 3, an uneven partition, when `three`), and 2 threads. */
static void check(const char *scenario, const char *extra, int reps, int three) {
  char ref[64] = "det_np1.h5", out[64];
  CU_ASSERT_EQUAL_FATAL(run_np(scenario, extra, 1, 1, ref), 0);
  int nps[] = {2, 4, 3};
  for (int i = 0; i < 2 + !!three; i++) {
    snprintf(out, sizeof out, "det_np%d.h5", nps[i]);
    CU_ASSERT_EQUAL_FATAL(run_np(scenario, extra, nps[i], 1, out), 0);
    CU_ASSERT_EQUAL(same(ref, out, reps), 0);
  }
  CU_ASSERT_EQUAL_FATAL(run_np(scenario, extra, 1, 2, "det_t2.h5"), 0);
  CU_ASSERT_EQUAL(same(ref, "det_t2.h5", reps), 0);
}

static void test_phold(void) {
  char path[4096];
  snprintf(path, sizeof path, "%s/scenarios/phold.cfg", tu_src());
  check(path, "--reps 2 --param run.end=100.0 --param phold.lps=257 --param phold.remote=0.5", 2, 1);
}

/* A seed changes the results: the comparison above is not vacuous. */
static void test_seed_matters(void) {
  char path[4096];
  snprintf(path, sizeof path, "%s/scenarios/phold.cfg", tu_src());
  CU_ASSERT_EQUAL_FATAL(run_np(path, "--param run.end=50.0 --seed 1", 1, 1, "det_s1.h5"), 0);
  CU_ASSERT_EQUAL_FATAL(run_np(path, "--param run.end=50.0 --seed 2", 1, 1, "det_s2.h5"), 0);
  CU_ASSERT_NOT_EQUAL(same("det_s1.h5", "det_s2.h5", 1), 0);
}

static void test_listed_scenarios(void) {
  char list[4096], line[4096];
  snprintf(list, sizeof list, "%s/tests/determinism_scenarios.txt", tu_src());
  FILE *f = fopen(list, "r");
  if (!f) return;
  while (fgets(line, sizeof line, f)) {
    line[strcspn(line, "\n")] = 0;
    if (!line[0] || line[0] == '#') continue;
    char *sp = strchr(line, ' ');
    if (sp) *sp++ = 0;
    char path[8192];
    snprintf(path, sizeof path, "%s/%s", tu_src(), line);
    fprintf(stderr, "\n  determinism of %s %s\n", line, sp ? sp : "");
    check(path, sp, 1, 0);
  }
  fclose(f);
}

/* The engine's calendar of far events (on above 65,536 pending events, which these short
 * scenarios never reach) gives the same results as the heap alone: the reference runs with the
 * calendar off, the others with it on from 64 pending events, on 2 and 4 ranks and 2 threads. */
static void test_calendar(void) {
  char path[4096];
  snprintf(path, sizeof path, "%s/scenarios/default.cfg", tu_src());
  const char *extra = "--param run.end=172800.0 --param run.reps=1";
  det_env = "SPOTLAB_CALENDAR_MIN=0";
  CU_ASSERT_EQUAL_FATAL(run_np(path, extra, 1, 1, "det_cal_off.h5"), 0);
  det_env = "SPOTLAB_CALENDAR_MIN=64";
  const int nps[] = {1, 2, 3, 4};
  for (int i = 0; i < 4; i++) {
    char out[64];
    snprintf(out, sizeof out, "det_cal_np%d.h5", nps[i]);
    CU_ASSERT_EQUAL_FATAL(run_np(path, extra, nps[i], 1, out), 0);
    CU_ASSERT_EQUAL(same("det_cal_off.h5", out, 1), 0);
  }
  CU_ASSERT_EQUAL_FATAL(run_np(path, extra, 1, 2, "det_cal_t2.h5"), 0);
  CU_ASSERT_EQUAL(same("det_cal_off.h5", "det_cal_t2.h5", 1), 0);
  det_env = "";
}

static CU_TestInfo det_tests[] = {
    {"PHOLD identical on 1, 2, 3, 4 ranks and 2 threads", test_phold},
    {"another seed gives other results", test_seed_matters},
    {"listed model scenarios identical on 1, 2, 4 ranks", test_listed_scenarios},
    {"the calendar of far events changes no result (on and off, 1, 2, 3, 4 ranks)", test_calendar},
    CU_TEST_INFO_NULL,
};
CU_SuiteInfo spotlab_suites[] = {
    {"determinism", NULL, NULL, NULL, NULL, det_tests},
    CU_SUITE_INFO_NULL,
};
