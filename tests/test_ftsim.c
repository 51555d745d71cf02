/* test_ftsim.c - the `fault_tolerance` model on the engine: its input files, small runs of every
 * policy with the end-of-run checks, determinism, and properties that must hold whatever the
 * churn (no failures -> nothing lost; replicas cost more; checkpoints never finish sooner). */
#include "models/ftsim/ftsim.h"

#include <CUnit/CUnit.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *src_dir(void) {
  const char *s = getenv("SPOTLAB_SOURCE_DIR");
  return s ? s : "..";
}

static void fits_path(char *p, size_t n) { snprintf(p, n, "%s/data/churn_fta_fits.csv", src_dir()); }

static void test_fits(void) {
  char p[1024], err[512];
  fits_path(p, sizeof p);
  churn_dist d;
  CU_ASSERT_EQUAL_FATAL(churn_fits_load(p, "microsoft99", "up", CHURN_WEIBULL, &d, err, sizeof err), 0);
  CU_ASSERT_DOUBLE_EQUAL(d.p1, 0.55, 0);
  CU_ASSERT_DOUBLE_EQUAL(d.p2, 35.30, 0);
  /* Weibull mean lambda Gamma(1 + 1/k). */
  CU_ASSERT_DOUBLE_EQUAL(churn_dist_mean(&d), 35.30 * tgamma(1 + 1 / 0.55), 1e-12);
  CU_ASSERT_EQUAL(churn_fits_load(p, "overnet03", "down", CHURN_EXP, &d, err, sizeof err), 0);
  CU_ASSERT_DOUBLE_EQUAL(churn_dist_mean(&d), 12.00, 0);
  CU_ASSERT_EQUAL(churn_fits_load(p, "nosuch", "up", CHURN_WEIBULL, &d, err, sizeof err), CHURN_ENOTFOUND);
  CU_ASSERT_PTR_NOT_NULL(strstr(err, "no fit for trace 'nosuch', phase 'up', distribution 'weibull'"));
  CU_ASSERT_EQUAL(churn_fits_load("/nonexistent.csv", "x", "up", CHURN_WEIBULL, &d, err, sizeof err), CHURN_EIO);
  CU_ASSERT_PTR_NOT_NULL(strstr(err, "cannot open"));
}

static void test_calibration(void) {
  char p[] = "/tmp/test_ftsim_calib_XXXXXX";
  int fd = mkstemp(p);
  CU_ASSERT_FATAL(fd >= 0);
  FILE *f = fdopen(fd, "w");
  fputs("key,value,unit,device,note\n"
        "stream_bw_gbs,3661,GB/s,H200,\"triad, 3 arrays\"\n"
        "even_split_efficiency,0.8,1,H200,measured\n"
        "dynamic_efficiency,0.9,1,H200,measured\n"
        "chunk_overhead_s,0.002,s,H200,measured\n",
        f);
  fclose(f);
  sched_config c;
  sched_config_default(&c);
  char err[512];
  CU_ASSERT_EQUAL(ftsim_calibration_load(p, &c.cluster, err, sizeof err), 0);
  CU_ASSERT_DOUBLE_EQUAL(c.cluster.even_eff, 0.8, 0);
  CU_ASSERT_DOUBLE_EQUAL(c.cluster.dynamic_eff, 0.9, 0);
  CU_ASSERT_DOUBLE_EQUAL(c.cluster.weighted_eff, 1.0, 0); /* not in the file: default */
  CU_ASSERT_DOUBLE_EQUAL(c.cluster.chunk_overhead_s, 0.002, 0);
  f = fopen(p, "w");
  fputs("key,value,unit,device,note\nweighted_split_efficiency,1.7,1,x,y\n", f);
  fclose(f);
  CU_ASSERT_EQUAL(ftsim_calibration_load(p, &c.cluster, err, sizeof err), -1);
  char want[600];
  snprintf(want, sizeof want, "%s:2: weighted_split_efficiency", p);
  CU_ASSERT_PTR_NOT_NULL(strstr(err, want));
  unlink(p);
}

/* Builds and runs the model from scenario text; returns 0 and fills res / metrics. */
typedef struct ft_run_out {
  sim_model model;
  ftsim_config cfg;
  sim_scenario *scn;
  sim_results res;
  double metrics[256];
  int check;
  char msg[256];
} ft_run_out;

static int run_text(const char *body, double end, uint64_t seed, ft_run_out *o) {
  char text[4096], fits[1024];
  fits_path(fits, sizeof fits);
  snprintf(text, sizeof text, "model = \"fault_tolerance\";\nfault_tolerance = {\n churn_file = \"%s\";\n%s\n};\n",
           fits, body);
  memset(o, 0, sizeof *o);
  sim_diag d;
  sim_diag_init(&d, stderr);
  o->scn = sim_scenario_load_string(text, "test.cfg", &d);
  if (!o->scn) return -1;
  if (sim_param_parse(o->scn, "fault_tolerance", ftsim_params, &o->cfg, NULL, &d)) return -2;
  if (ftsim_class.validate(&o->cfg, o->scn, &d)) return -3;
  if (ftsim_class.build(&o->cfg, end, ".", o->scn, &d, &o->model)) return -4;
  sim_run_opts opts = {seed, 0, 0, NULL};
  if (sim_run(&o->model, &opts, &o->res)) return -5;
  CU_ASSERT_FATAL(ftsim_class.nmetrics <= 256);
  ftsim_class.compute_metrics(&o->model, &o->res, o->metrics);
  o->check = ftsim_class.check(&o->model, &o->res, o->msg, sizeof o->msg);
  return 0;
}
static void run_free(ft_run_out *o) {
  sim_results_free(&o->res);
  ftsim_class.destroy(&o->model);
  sim_param_free(ftsim_params, &o->cfg);
  sim_scenario_free(o->scn);
}

static double metric(const ft_run_out *o, const char *name) {
  for (unsigned i = 0; i < ftsim_class.nmetrics; i++)
    if (!strcmp(ftsim_class.metrics[i].name, name)) return o->metrics[i];
  CU_FAIL("no such metric");
  return NAN;
}

static const char *const pols[] = {"none", "checkpoint", "standby", "replicate", "speculative"};
static const char *const levels[] = {"low", "mid", "high"};

static void test_small_run_all_policies(void) {
  ft_run_out a, b;
  const char *body = " gpus = 24;\n job_rate = 1.0;\n job_hours = 2.0;\n service_rps = 4.0;\n";
  CU_ASSERT_EQUAL_FATAL(run_text(body, 3 * 86400.0, 7, &a), 0);
  if (a.check) fprintf(stderr, "check: %s\n", a.msg);
  CU_ASSERT_EQUAL(a.check, 0);
  /* 5 policies x 3 levels ledgers; the same jobs in every cluster. */
  CU_ASSERT_EQUAL(a.res.nrecords[1], 15);
  CU_ASSERT(a.res.nrecords[0] > 15 * 30);
  double done_low = 0, done_high = 0;
  for (int p = 0; p < 5; p++) {
    char n1[128], n2[128];
    snprintf(n1, sizeof n1, "completed.policy.%s.churn.low", pols[p]);
    snprintf(n2, sizeof n2, "completed.policy.%s.churn.high", pols[p]);
    done_low += metric(&a, n1);
    done_high += metric(&a, n2);
    for (int l = 0; l < 3; l++) {
      char n[128];
      snprintf(n, sizeof n, "cost.policy.%s.churn.%s", pols[p], levels[l]);
      CU_ASSERT(metric(&a, n) > 0);
      snprintf(n, sizeof n, "efficiency.policy.%s.churn.%s", pols[p], levels[l]);
      CU_ASSERT(metric(&a, n) > 0 && metric(&a, n) <= 1.0 + 1e-9);
    }
  }
  CU_ASSERT(done_low > 0);
  /* Churn hurts: the high-churn clusters (overnet03: ~20% of hosts up) complete fewer jobs
   * than the low-churn ones (microsoft99: ~80% up), summed over policies. */
  CU_ASSERT(done_high < done_low);
  /* The service under churn: some requests served, never more than offered. */
  double sv = metric(&a, "service_served.policy.standby.churn.mid");
  CU_ASSERT(sv > 0 && sv <= 1.0 + 1e-12);
  /* Failures happened and cost GPU time at high churn under "none". */
  CU_ASSERT(metric(&a, "lost_gpu_hours.policy.none.churn.high") > 0);
  /* Same seed, same results, bit for bit. */
  CU_ASSERT_EQUAL_FATAL(run_text(body, 3 * 86400.0, 7, &b), 0);
  CU_ASSERT_EQUAL(memcmp(a.metrics, b.metrics, ftsim_class.nmetrics * sizeof(double)), 0);
  CU_ASSERT_EQUAL(a.res.nrecords[0], b.res.nrecords[0]);
  CU_ASSERT_EQUAL(memcmp(a.res.tables[0], b.res.tables[0], a.res.nrecords[0] * sizeof(ftsim_job_rec)), 0);
  /* A cluster does not depend on which other policies run beside it: the checkpoint cluster of
   * a checkpoint-only run has the very same job rows. */
  char body2[256];
  snprintf(body2, sizeof body2, "%s policies = \"checkpoint\";\n", body);
  ft_run_out c1;
  CU_ASSERT_EQUAL_FATAL(run_text(body2, 3 * 86400.0, 7, &c1), 0);
  const ftsim_job_rec *ja = (const ftsim_job_rec *)a.res.tables[0], *jc = (const ftsim_job_rec *)c1.res.tables[0];
  size_t k = 0, same = 0;
  for (size_t i = 0; i < a.res.nrecords[0]; i++) {
    if (strcmp(ja[i].policy, "checkpoint")) continue;
    if (k < c1.res.nrecords[0] && !memcmp(&ja[i], &jc[k], sizeof ja[i])) same++;
    k++;
  }
  CU_ASSERT_EQUAL(k, c1.res.nrecords[0]);
  CU_ASSERT_EQUAL(same, k);
  run_free(&c1);
  run_free(&a);
  run_free(&b);
}

/* A fits file where hosts never leave within the run and never degrade: nothing may be lost,
 * no job restarts, and replicas cost about twice (each copy billed). */
static void test_no_churn_properties(void) {
  char p[] = "/tmp/test_ftsim_fits_XXXXXX";
  int fd = mkstemp(p);
  CU_ASSERT_FATAL(fd >= 0);
  FILE *f = fdopen(fd, "w");
  fputs("trace,population,phase,dist,p1,p2\n"
        "forever,test,up,exp,1e9,\nforever,test,down,exp,1e-6,\n",
        f);
  fclose(f);
  char body[2048];
  snprintf(body, sizeof body,
           " churn_file = \"%s\";\n churn_dist = \"exp\";\n churn_low = \"forever\";\n churn_mid = \"forever\";\n"
           " churn_high = \"forever\";\n gpus = 64;\n job_rate = 0.5;\n degrade_per_day = 0.0;\n"
           " policies = \"none,checkpoint,replicate\";\n service_rps = 10.0;\n",
           p);
  /* This scenario names its own churn file, so it is built here rather than by run_text. */
  char text[4096];
  snprintf(text, sizeof text, "model = \"fault_tolerance\";\nfault_tolerance = {\n%s};\n", body);
  sim_diag d;
  sim_diag_init(&d, stderr);
  ft_run_out o;
  memset(&o, 0, sizeof o);
  o.scn = sim_scenario_load_string(text, "nochurn.cfg", &d);
  CU_ASSERT_PTR_NOT_NULL_FATAL(o.scn);
  CU_ASSERT_EQUAL_FATAL(sim_param_parse(o.scn, "fault_tolerance", ftsim_params, &o.cfg, NULL, &d), 0);
  CU_ASSERT_EQUAL_FATAL(ftsim_class.build(&o.cfg, 2 * 86400.0, ".", o.scn, &d, &o.model), 0);
  sim_run_opts opts = {11, 0, 0, NULL};
  CU_ASSERT_EQUAL_FATAL(sim_run(&o.model, &opts, &o.res), 0);
  ftsim_class.compute_metrics(&o.model, &o.res, o.metrics);
  CU_ASSERT_EQUAL(ftsim_class.check(&o.model, &o.res, o.msg, sizeof o.msg), 0);
  const ftsim_job_rec *jr = (const ftsim_job_rec *)o.res.tables[0];
  for (size_t i = 0; i < o.res.nrecords[0]; i++) {
    CU_ASSERT_EQUAL(jr[i].restarts, 0);
    CU_ASSERT_DOUBLE_EQUAL(jr[i].lost_gpu_hours, 0, 0);
    /* No run can beat its ideal: work at the best possible speed (score <= 2^(grades-1) x 1.2
     * per member with 3 grades: 2^1 x 1.2). */
    if (jr[i].kind == 0 && jr[i].outcome == 1)
      CU_ASSERT(jr[i].end - jr[i].start >= jr[i].work_gpu_h * 3600.0 / (jr[i].width * 2.0 * 1.2) - 1e-6);
  }
  const ftsim_ledger_rec *lr = (const ftsim_ledger_rec *)o.res.tables[1];
  for (size_t i = 0; i < o.res.nrecords[1]; i++) {
    CU_ASSERT_EQUAL(lr[i].gpu_failures, 0);
    if (!strcmp(lr[i].policy, "checkpoint")) CU_ASSERT(lr[i].checkpoints > 0);
  }
  for (int l = 0; l < 3; l++) {
    char a[128], b[128], c[128];
    snprintf(a, sizeof a, "completed.policy.none.churn.%s", levels[l]);
    snprintf(b, sizeof b, "completed.policy.checkpoint.churn.%s", levels[l]);
    snprintf(c, sizeof c, "completed.policy.replicate.churn.%s", levels[l]);
    /* Without failures every policy completes jobs; (the clusters' selection draws differ, so
     * "checkpoints only slow runs down" holds on average, not sample by sample: not tested). */
    CU_ASSERT(metric(&o, a) > 0);
    CU_ASSERT(metric(&o, b) > 0);
    snprintf(a, sizeof a, "cost.policy.none.churn.%s", levels[l]);
    snprintf(c, sizeof c, "cost.policy.replicate.churn.%s", levels[l]);
    CU_ASSERT(metric(&o, c) > 1.3 * metric(&o, a));
    /* The service: enough GPUs, so every request is served (the load is re-measured every 5
     * minutes and the target utilization 0.7 leaves headroom for the daily swing in between).
     * Pay per task: a replica of score q serves q x 2 req/s and bills q x busy time x price, so
     * 1000 requests cost 1000 x price / 2 whatever the replicas (NGPU: score x duration). */
    snprintf(a, sizeof a, "service_served.policy.none.churn.%s", levels[l]);
    CU_ASSERT(metric(&o, a) > 0.999 && metric(&o, a) <= 1.0 + 1e-12);
    snprintf(a, sizeof a, "service_cost_per_kreq.policy.checkpoint.churn.%s", levels[l]);
    CU_ASSERT_DOUBLE_EQUAL(metric(&o, a), 1000 * 5.6e-5 / 2, 1e-12);
    snprintf(a, sizeof a, "service_replica_hours.policy.replicate.churn.%s", levels[l]);
    CU_ASSERT(metric(&o, a) > 48); /* at least one replica for the 2 days */
    /* Unused policies are NaN. */
    snprintf(a, sizeof a, "cost.policy.standby.churn.%s", levels[l]);
    CU_ASSERT(isnan(metric(&o, a)));
  }
  run_free(&o);
  unlink(p);
}

static void test_bad_scenario(void) {
  ft_run_out o;
  CU_ASSERT_EQUAL(run_text(" policies = \"none,bogus\";", 3600, 1, &o), -3);
  sim_scenario_free(o.scn);
  sim_param_free(ftsim_params, &o.cfg);
  CU_ASSERT_EQUAL(run_text(" churn_high = \"nosuch\";", 3600, 1, &o), -4);
  sim_scenario_free(o.scn);
  sim_param_free(ftsim_params, &o.cfg);
  CU_ASSERT_EQUAL(run_text(" heartbeat_timeout = \"10s\";", 3600, 1, &o), -3);
  sim_scenario_free(o.scn);
  sim_param_free(ftsim_params, &o.cfg);
}

static CU_TestInfo tests[] = {
    {"churn fits loader", test_fits},
    {"kernels calibration loader", test_calibration},
    {"every policy at three churn levels, deterministic", test_small_run_all_policies},
    {"no churn: nothing lost, replicas cost more", test_no_churn_properties},
    {"bad scenarios are reported", test_bad_scenario},
    CU_TEST_INFO_NULL,
};
CU_SuiteInfo spotlab_suites[] = {
    {"ftsim", NULL, NULL, NULL, NULL, tests},
    CU_SUITE_INFO_NULL,
};
