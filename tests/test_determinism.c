/* test_determinism.c - the engine's promise: one scenario and seed give bit-identical results on
 * 1, 2, 3 and 4 MPI ranks and on 1 or 2 OpenMP threads, whichever way the work is spread over the
 * ranks (`--spread model`: each replication partitioned over all ranks; `--spread reps`: each
 * replication whole on one rank, gathered to rank 0). Every series, table and metric of every
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

/* 1 rank against the model partitioned over 2 and 4 ranks (and 3, an uneven partition, when
 * `three`; --spread model: the engine's parallel path), and 2 threads. */
static void check(const char *scenario, const char *extra, int reps, int three) {
  char ref[64] = "det_np1.h5", out[64], ex[4096];
  snprintf(ex, sizeof ex, "--spread model %s", extra ? extra : "");
  CU_ASSERT_EQUAL_FATAL(run_np(scenario, extra, 1, 1, ref), 0);
  int nps[] = {2, 4, 3};
  for (int i = 0; i < 2 + !!three; i++) {
    snprintf(out, sizeof out, "det_np%d.h5", nps[i]);
    CU_ASSERT_EQUAL_FATAL(run_np(scenario, ex, nps[i], 1, out), 0);
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
    check(path, sp, 1, 1); /* 3 ranks too: an uneven partition */
  }
  fclose(f);
}

/* The engine's calendar of far events (on above 65,536 pending events, which these short
 * scenarios never reach) gives the same results as the heap alone: the reference runs with the
 * calendar off, the others with it on from 64 pending events, on 2 and 4 ranks and 2 threads. */
static void test_calendar(void) {
  char path[4096];
  snprintf(path, sizeof path, "%s/scenarios/default.cfg", tu_src());
  const char *extra = "--spread model --param run.end=172800.0 --param run.reps=1";
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

/* Replications whole on one rank each (--spread reps), gathered to rank 0: identical to one process
 * on 1, 2 and 3 ranks (3 does not divide the replications, so ranks hold 1 or 2), with 1 and 2
 * threads inside a rank; and a shard's replications are the whole run's. */
static void check_reps(const char *scenario, const char *extra, int reps) {
  char ref[64] = "det_r1.h5", out[64], ex[4096];
  snprintf(ex, sizeof ex, "--spread reps %s", extra);
  CU_ASSERT_EQUAL_FATAL(run_np(scenario, extra, 1, 1, ref), 0);
  const int nps[] = {2, 3};
  for (int i = 0; i < 2; i++)
    for (int th = 1; th <= 2; th++) {
      snprintf(out, sizeof out, "det_r%d_t%d.h5", nps[i], th);
      CU_ASSERT_EQUAL_FATAL(run_np(scenario, ex, nps[i], th, out), 0);
      CU_ASSERT_EQUAL(same(ref, out, reps), 0);
    }
}

static void test_reps_spread(void) {
  char path[4096];
  snprintf(path, sizeof path, "%s/scenarios/phold.cfg", tu_src());
  check_reps(path, "--reps 5 --param run.end=60.0 --param phold.lps=257 --param phold.remote=0.5", 5);
  snprintf(path, sizeof path, "%s/scenarios/default.cfg", tu_src());
  check_reps(path, "--reps 4 --param run.end=86400.0", 4);
}

/* A sweep's points under mpirun: each point's replications spread over the ranks, every point's
 * file identical to one process's. */
/* 0 when the sweep files a and b hold the same metrics for the same points. */
static int same_sweep(const char *a, const char *b) {
  const char *objs[] = {"/sweep/metrics", "/sweep/mean", "/sweep/ci95_lo",
                        "/sweep/ci95_hi", "/sweep/x",    "/sweep/labels"};
  char cmd[8192], *log;
  for (int i = 0; i < 6; i++) {
    snprintf(cmd, sizeof cmd, "h5diff %s %s %s", a, b, objs[i]);
    int rc = tu_run(cmd, &log);
    if (rc) fprintf(stderr, "\n%s differs:\n%.2000s\n", cmd, log);
    free(log);
    if (rc) return 1;
  }
  return 0;
}

/* np ranks sweep phold.remote over `values` with `reps` replications; what it printed in `said`. */
static int sweep_np(int np, int reps, const char *values, const char *out, char *said, size_t len) {
  char cmd[8192], *log;
  snprintf(cmd, sizeof cmd,
           "OMP_NUM_THREADS=1 %s --oversubscribe -np %d %s sweep %s/scenarios/phold.cfg --param "
           "phold.remote=%s --reps %d --out %s",
           SPOTLAB_MPIEXEC, np, tu_bin(), tu_src(), values, reps, out);
  int rc = tu_run(cmd, &log);
  if (rc) fprintf(stderr, "\n%s\n-> exit %d\n%s\n", cmd, rc, log);
  snprintf(said, len, "%s", log);
  free(log);
  return rc;
}

/* A sweep under mpirun: each point's replications spread over the ranks (3 replications on 3
 * ranks), or whole points over the ranks (3 points of 1 replication on 2 ranks: rank 1 writes
 * point 1's file); every point's file and the sweep file identical to one process's. */
static void test_sweep_spread(void) {
  char said[8192];
  CU_ASSERT_EQUAL_FATAL(sweep_np(1, 3, "0.1,0.5", "det_sw1.h5", said, sizeof said), 0);
  CU_ASSERT_EQUAL_FATAL(sweep_np(3, 3, "0.1,0.5", "det_sw3.h5", said, sizeof said), 0);
  CU_ASSERT_PTR_NOT_NULL(strstr(said, "each point: 3 replications over 3 ranks: spread reps"));
  CU_ASSERT_EQUAL(same("det_sw1.points/point_0000.h5", "det_sw3.points/point_0000.h5", 3), 0);
  CU_ASSERT_EQUAL(same("det_sw1.points/point_0001.h5", "det_sw3.points/point_0001.h5", 3), 0);
  CU_ASSERT_EQUAL(same_sweep("det_sw1.h5", "det_sw3.h5"), 0);
  CU_ASSERT_NOT_EQUAL(same("det_sw1.points/point_0000.h5", "det_sw1.points/point_0001.h5", 3), 0);

  CU_ASSERT_EQUAL_FATAL(sweep_np(1, 1, "0.1,0.3,0.5", "det_swp1.h5", said, sizeof said), 0);
  CU_ASSERT_EQUAL_FATAL(sweep_np(2, 1, "0.1,0.3,0.5", "det_swp2.h5", said, sizeof said), 0);
  CU_ASSERT_PTR_NOT_NULL(strstr(said, "3 points over 2 ranks: spread points"));
  CU_ASSERT_PTR_NOT_NULL(strstr(said, "point 2/3 (phold.remote=0.3): 1 replication in"));
  CU_ASSERT_PTR_NOT_NULL(strstr(said, "on rank 1"));
  for (int p = 0; p < 3; p++) {
    char a[64], b[64];
    snprintf(a, sizeof a, "det_swp1.points/point_%04d.h5", p);
    snprintf(b, sizeof b, "det_swp2.points/point_%04d.h5", p);
    CU_ASSERT_EQUAL(same(a, b, 1), 0);
  }
  CU_ASSERT_EQUAL(same_sweep("det_swp1.h5", "det_swp2.h5"), 0);
}

/* The automatic choice: a model with fewer replications than ranks and at least
 * APP_SPREAD_MODEL_MIN_LPS entities per rank is partitioned, otherwise replications are spread;
 * it is printed and recorded in /meta's spread. */
static int spread_of(const char *extra, int np, char *line, size_t len) {
  char path[4096], cmd[8192], *log;
  snprintf(path, sizeof path, "%s/scenarios/phold.cfg", tu_src());
  snprintf(cmd, sizeof cmd,
           "OMP_NUM_THREADS=1 %s --oversubscribe -np %d %s run %s --out det_auto.h5 %s 2>&1 >/dev/null && "
           "h5dump -a /meta/spread det_auto.h5",
           SPOTLAB_MPIEXEC, np, tu_bin(), path, extra);
  int rc = tu_run(cmd, &log);
  snprintf(line, len, "%s", log);
  free(log);
  return rc;
}

static void test_spread_auto(void) {
  char out[8192];
  CU_ASSERT_EQUAL_FATAL(spread_of("--reps 4 --param run.end=10.0 --param phold.lps=300", 2, out, sizeof out), 0);
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "spread reps (at least one replication per rank"));
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "\"reps\""));
  CU_ASSERT_EQUAL_FATAL(spread_of("--reps 1 --param run.end=10.0 --param phold.lps=300", 2, out, sizeof out), 0);
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "spread reps (a model too small"));
  CU_ASSERT_EQUAL_FATAL(spread_of("--reps 1 --param run.end=2.0 --param phold.lps=100002", 2, out, sizeof out), 0);
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "spread model (fewer replications than ranks"));
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "\"model\""));
  CU_ASSERT_EQUAL_FATAL(
      spread_of("--reps 1 --param run.end=2.0 --param phold.lps=100002 --spread reps", 2, out, sizeof out), 0);
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "spread reps (asked for"));
  CU_ASSERT_EQUAL_FATAL(spread_of("--reps 1 --param run.end=10.0 --param phold.lps=300", 1, out, sizeof out), 0);
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "spread reps (one process"));
}

static CU_TestInfo det_tests[] = {
    {"PHOLD identical on 1, 2, 3, 4 ranks and 2 threads", test_phold},
    {"another seed gives other results", test_seed_matters},
    {"listed model scenarios identical on 1, 2, 3, 4 ranks", test_listed_scenarios},
    {"the calendar of far events changes no result (on and off, 1, 2, 3, 4 ranks)", test_calendar},
    {"replications spread over 1, 2, 3 ranks (1 and 2 threads each) identical to one process", test_reps_spread},
    {"the automatic spread: printed, recorded, forced by --spread", test_spread_auto},
    {"sweep: replications or whole points over ranks, identical to one process", test_sweep_spread},
    CU_TEST_INFO_NULL,
};
CU_SuiteInfo spotlab_suites[] = {
    {"determinism", NULL, NULL, NULL, NULL, det_tests},
    CU_SUITE_INFO_NULL,
};
