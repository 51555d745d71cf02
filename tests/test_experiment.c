/* test_experiment.c - experiments (analysis/experiment/exp.h, app/cmd_experiment.c): the designs
 * (factorial order, Latin hypercube strata on random seeds, Sobol points against the published
 * sequence and GSL), the constraint confidence on a known t value, Pareto selection on a
 * hand-made front and on random cases, standardized regression coefficients on exact linear
 * data, bad experiment files (FILE:LINE, exit 2, nothing written), a PHOLD factorial whose
 * metric is a known function of a factor, and --resume after a kill. */
#include "analysis/experiment/exp.h"
#include "analysis/report/rpt.h"
#include "tests/testutil.h"

#include <CUnit/CUnit.h>
#include <gsl/gsl_qrng.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- designs ------------------------------------------------------------------------------- */

static void test_factorial(void) {
  int nl[3] = {3, 2, 4}, *idx;
  unsigned np;
  CU_ASSERT_EQUAL_FATAL(exp_factorial(nl, 3, &np, &idx), 0);
  CU_ASSERT_EQUAL(np, 24);
  /* the last factor turns fastest; every combination once */
  CU_ASSERT(idx[0] == 0 && idx[1] == 0 && idx[2] == 0);
  CU_ASSERT(idx[3] == 0 && idx[4] == 0 && idx[5] == 1);
  CU_ASSERT(idx[23 * 3] == 2 && idx[23 * 3 + 1] == 1 && idx[23 * 3 + 2] == 3);
  int seen[24] = {0};
  for (unsigned p = 0; p < np; p++) seen[idx[p * 3] * 8 + idx[p * 3 + 1] * 4 + idx[p * 3 + 2]]++;
  for (int i = 0; i < 24; i++) CU_ASSERT_EQUAL(seen[i], 1);
  free(idx);
  int big[2] = {1000, 1000};
  CU_ASSERT_EQUAL(exp_factorial(big, 2, &np, &idx), SIM_EINVAL);
}

/* Each factor's range stratified: exactly one point in each of the n strata, on random seeds and
 * sizes; the same seed gives the same design, another seed another. */
static void test_lhs_strata(void) {
  gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
  gsl_rng_set(r, 7);
  for (int trial = 0; trial < 200; trial++) {
    unsigned n = 1 + (unsigned)gsl_rng_uniform_int(r, 64), nf = 1 + (unsigned)gsl_rng_uniform_int(r, 6);
    uint64_t seed = gsl_rng_get(r);
    double *u = malloc(n * nf * sizeof *u), *u2 = malloc(n * nf * sizeof *u2), *u3 = malloc(n * nf * sizeof *u3);
    CU_ASSERT_EQUAL_FATAL(exp_lhs(n, nf, seed, u), 0);
    CU_ASSERT_EQUAL_FATAL(exp_lhs(n, nf, seed, u2), 0);
    CU_ASSERT_EQUAL_FATAL(exp_lhs(n, nf, seed + 1, u3), 0);
    CU_ASSERT(memcmp(u, u2, n * nf * sizeof *u) == 0);
    if (n > 2) CU_ASSERT(memcmp(u, u3, n * nf * sizeof *u) != 0);
    int *count = calloc(n, sizeof *count);
    for (unsigned f = 0; f < nf; f++) {
      memset(count, 0, n * sizeof *count);
      for (unsigned p = 0; p < n; p++) {
        double x = u[p * nf + f];
        CU_ASSERT(x >= 0 && x < 1);
        count[(unsigned)floor(x * n)]++;
      }
      for (unsigned k = 0; k < n; k++) CU_ASSERT_EQUAL(count[k], 1);
    }
    free(count);
    free(u);
    free(u2);
    free(u3);
  }
  gsl_rng_free(r);
}

/* Sobol: the published first points of the two-dimensional sequence (Bratley & Fox 1988; the
 * points 1/2, 3/4 1/4, 1/4 3/4, 3/8 3/8, 7/8 7/8, as GSL gives them),
 * and GSL's sequence itself in 5 dimensions for 100 points. */
static void test_sobol(void) {
  double u[10];
  CU_ASSERT_EQUAL_FATAL(exp_sobol(5, 2, u), 0);
  const double want[10] = {0.5, 0.5, 0.75, 0.25, 0.25, 0.75, 0.375, 0.375, 0.875, 0.875};
  for (int i = 0; i < 10; i++) CU_ASSERT_DOUBLE_EQUAL(u[i], want[i], 1e-15);
  double *v = malloc(100 * 5 * sizeof *v), w[5];
  CU_ASSERT_EQUAL_FATAL(exp_sobol(100, 5, v), 0);
  gsl_qrng *q = gsl_qrng_alloc(gsl_qrng_sobol, 5);
  for (int p = 0; p < 100; p++) {
    gsl_qrng_get(q, w);
    for (int f = 0; f < 5; f++) CU_ASSERT_EQUAL(v[p * 5 + f], w[f]);
  }
  gsl_qrng_free(q);
  free(v);
  CU_ASSERT_EQUAL(exp_sobol(4, 41, u), SIM_EINVAL);
}

static void test_factor_at(void) {
  exp_factor f = {0};
  char t[64];
  double x;
  f.min = 0.01;
  f.max = 1.0;
  exp_factor_at(&f, 0.5, t, sizeof t, &x);
  CU_ASSERT_DOUBLE_EQUAL(x, 0.505, 1e-12);
  f.log = 1; /* min (max/min)^u: the geometric midpoint */
  exp_factor_at(&f, 0.5, t, sizeof t, &x);
  CU_ASSERT_DOUBLE_EQUAL(x, 0.1, 1e-12);
  CU_ASSERT_STRING_EQUAL(t, "0.1");
  f.log = 0;
  f.min = 1;
  f.max = 10;
  f.integer = 1;
  exp_factor_at(&f, 0.5, t, sizeof t, &x);
  CU_ASSERT_STRING_EQUAL(t, "6");
  char *lv[3] = {"\"a\"", "\"b\"", "\"c\""};
  double lx[3] = {NAN, NAN, NAN};
  exp_factor g = {0};
  g.nlevels = 3;
  g.levels = lv;
  g.level_x = lx;
  exp_factor_at(&g, 0.7, t, sizeof t, &x); /* floor(0.7 * 3) = 2 */
  CU_ASSERT_STRING_EQUAL(t, "\"c\"");
  CU_ASSERT_EQUAL(x, 2);
}

/* ---- analysis ------------------------------------------------------------------------------ */

/* m = 0.18, sd = 0.02, n = 4, bound 0.2: t = 0.02 / (0.02 / 2) = 2 with 3 degrees of freedom;
 * P(T_3 < 2) = 0.5 + (1/pi)(atan(t/sqrt3) + (t/sqrt3)/(1 + t^2/3)) = 0.930337 (the closed form of
 * the t distribution with 3 degrees of freedom). */
static void test_confidence(void) {
  double a = 2 / sqrt(3.0), want = 0.5 + (atan(a) + a / (1 + a * a)) / M_PI;
  CU_ASSERT_DOUBLE_EQUAL(want, 0.930337, 1e-6);
  CU_ASSERT_DOUBLE_EQUAL(exp_confidence(0.18, 0.02, 4, EXP_LT, 0.2), want, 1e-9);
  CU_ASSERT_DOUBLE_EQUAL(exp_confidence(0.18, 0.02, 4, EXP_GT, 0.2), 1 - want, 1e-9);
  CU_ASSERT_DOUBLE_EQUAL(exp_confidence(0.2, 0.05, 10, EXP_LE, 0.2), 0.5, 1e-12);
  CU_ASSERT(isnan(exp_confidence(0.1, 0.0, 1, EXP_LT, 0.2)));
  CU_ASSERT_EQUAL(exp_confidence(0.1, 0.0, 3, EXP_LT, 0.2), 1.0);
  CU_ASSERT_EQUAL(exp_confidence(0.3, 0.0, 3, EXP_LT, 0.2), 0.0);
  CU_ASSERT(exp_meets(0.1, EXP_LT, 0.2) && !exp_meets(0.2, EXP_LT, 0.2) && exp_meets(0.2, EXP_LE, 0.2));
  CU_ASSERT(exp_meets(0.3, EXP_GT, 0.2) && !exp_meets(0.2, EXP_GT, 0.2) && exp_meets(0.2, EXP_GE, 0.2));
}

/* Maximize both: (1,5) (2,4) (3,3) (4,1) are the front; (1,1) (2,3) are dominated; (5,5) is
 * better than all but infeasible; (0,9) is on the front; (3,3) twice: equal points do not dominate
 * each other. */
static void test_pareto_known(void) {
  double obj[] = {1, 5, 2, 4, 3, 3, 4, 1, 1, 1, 2, 3, 5, 5, 0, 9, 3, 3};
  double feas[] = {1, 1, 1, 1, 1, 1, 0, 1, 1}, front[9];
  int sense[2] = {1, 1};
  CU_ASSERT_EQUAL(exp_pareto(obj, 9, 2, sense, feas, front), 6);
  double want[9] = {1, 1, 1, 1, 0, 0, 0, 1, 1};
  for (int i = 0; i < 9; i++) CU_ASSERT_EQUAL(front[i], want[i]);
  /* maximize the first, minimize the second: (4,1) is the largest first and the smallest second
   * among the feasible points, so it dominates every other one */
  int sense2[2] = {1, -1};
  CU_ASSERT_EQUAL(exp_pareto(obj, 9, 2, sense2, feas, front), 1);
  CU_ASSERT_EQUAL(front[3], 1);
  /* a NaN objective keeps a point off the front */
  double o2[] = {1, NAN, 0, 0};
  CU_ASSERT_EQUAL(exp_pareto(o2, 2, 2, sense, NULL, front), 1);
  CU_ASSERT(front[0] == 0 && front[1] == 1);
}

static int dominates(const double *a, const double *b, unsigned no, const int *sense) {
  int better = 0;
  for (unsigned j = 0; j < no; j++) {
    if (sense[j] * a[j] < sense[j] * b[j]) return 0;
    if (sense[j] * a[j] > sense[j] * b[j]) better = 1;
  }
  return better;
}

/* Random cases: no returned point is dominated by a feasible point; every feasible point not
 * returned is dominated by one that is; no infeasible point is returned. */
static void test_pareto_random(void) {
  gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
  gsl_rng_set(r, 11);
  for (int trial = 0; trial < 500; trial++) {
    unsigned np = 1 + (unsigned)gsl_rng_uniform_int(r, 40), no = 1 + (unsigned)gsl_rng_uniform_int(r, 4);
    double *obj = malloc(np * no * sizeof *obj), *feas = malloc(np * sizeof *feas), *front = malloc(np * sizeof *front);
    int sense[4];
    for (unsigned j = 0; j < no; j++) sense[j] = gsl_rng_uniform(r) < 0.5 ? 1 : -1;
    for (unsigned i = 0; i < np * no; i++) obj[i] = (double)gsl_rng_uniform_int(r, 6); /* ties happen */
    for (unsigned p = 0; p < np; p++) feas[p] = gsl_rng_uniform(r) < 0.7;
    unsigned n = exp_pareto(obj, np, no, sense, feas, front), count = 0;
    for (unsigned p = 0; p < np; p++) {
      count += front[p] == 1;
      if (front[p] == 1) {
        CU_ASSERT_EQUAL(feas[p], 1);
        for (unsigned q = 0; q < np; q++)
          if (feas[q] == 1) CU_ASSERT(!dominates(obj + q * no, obj + p * no, no, sense));
      } else if (feas[p] == 1) {
        int dom = 0;
        for (unsigned q = 0; q < np && !dom; q++)
          dom = front[q] == 1 && dominates(obj + q * no, obj + p * no, no, sense);
        CU_ASSERT(dom);
      }
    }
    CU_ASSERT_EQUAL(n, count);
    free(obj);
    free(feas);
    free(front);
  }
  gsl_rng_free(r);
}

/* y = 3 x1 - 0 x2 + 2 exactly: src = (1, 0), R^2 = 1. y = x1 + x2 on a full 2-level factorial
 * (orthogonal, equal spreads): src = (1/sqrt2, 1/sqrt2). A constant factor gets NaN. */
static void test_src(void) {
  double X[40], y[20], src[3], r2;
  gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
  for (int p = 0; p < 20; p++) {
    X[p * 2] = gsl_rng_uniform(r);
    X[p * 2 + 1] = gsl_rng_uniform(r);
    y[p] = 3 * X[p * 2] + 2;
  }
  CU_ASSERT_EQUAL(exp_src(X, y, 20, 2, src, &r2), 0);
  CU_ASSERT_DOUBLE_EQUAL(src[0], 1.0, 1e-9);
  CU_ASSERT_DOUBLE_EQUAL(src[1], 0.0, 1e-9);
  CU_ASSERT_DOUBLE_EQUAL(r2, 1.0, 1e-9);
  double F[] = {0, 0, 0, 1, 1, 0, 1, 1}, fy[4];
  for (int p = 0; p < 4; p++) fy[p] = F[p * 2] + F[p * 2 + 1];
  CU_ASSERT_EQUAL(exp_src(F, fy, 4, 2, src, &r2), 0);
  CU_ASSERT_DOUBLE_EQUAL(src[0], M_SQRT1_2, 1e-9);
  CU_ASSERT_DOUBLE_EQUAL(src[1], M_SQRT1_2, 1e-9);
  double C[] = {0, 5, 1, 5, 2, 5, 3, 5}, cy[] = {1, 2, 3, 5};
  CU_ASSERT_EQUAL(exp_src(C, cy, 4, 2, src, &r2), 0);
  CU_ASSERT(isfinite(src[0]) && src[0] > 0.9);
  CU_ASSERT(isnan(src[1]));
  double k[] = {1, 1, 1, 1};
  exp_src(C, k, 4, 2, src, &r2);
  CU_ASSERT(isnan(src[0]) && isnan(r2));
  gsl_rng_free(r);
}

/* ---- the experiment file --------------------------------------------------------------------- */

static char tmpd[64];
static int suite_init(void) {
  snprintf(tmpd, sizeof tmpd, "/tmp/spotlab_exp_XXXXXX");
  return mkdtemp(tmpd) ? 0 : 1;
}
static int suite_clean(void) {
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf %s", tmpd);
  return system(cmd) ? 1 : 0;
}

/* Writes an experiment file over scenarios/phold.cfg with `body` appended; its path in path. */
static void write_exp(const char *name, const char *body, char *path, size_t len) {
  snprintf(path, len, "%s/%s", tmpd, name);
  char text[4096];
  snprintf(text, sizeof text, "scenario = \"%s/scenarios/phold.cfg\";\n%s", tu_src(), body);
  tu_write(path, text);
}

/* A bad file: exit 2, a message FILE:LINE: with `want`, and no output written. */
static void bad_case(const char *name, const char *body, int line, const char *want) {
  char path[256], cmd[1024], out[256], expect[512];
  write_exp(name, body, path, sizeof path);
  snprintf(out, sizeof out, "%s/out_%s", tmpd, name);
  snprintf(cmd, sizeof cmd, "%s experiment %s --out %s", tu_bin(), path, out);
  char *o = NULL;
  int st = tu_run(cmd, &o);
  CU_ASSERT_EQUAL(st, 2);
  snprintf(expect, sizeof expect, "%s:%d: ", path, line);
  if (!strstr(o, expect) || !strstr(o, want)) printf("\n%s: want '%s' and '%s' in:\n%s\n", name, expect, want, o);
  CU_ASSERT_PTR_NOT_NULL(strstr(o, expect));
  CU_ASSERT_PTR_NOT_NULL(strstr(o, want));
  CU_ASSERT_PTR_NOT_NULL(strstr(o, "nothing was run"));
  struct stat st2;
  CU_ASSERT(stat(out, &st2) != 0); /* nothing written */
  free(o);
}

static void test_bad_files(void) {
  const char *F = "factors = ( { key = \"phold.mean\"; levels = [0.5, 1.0]; } );\n";
  char body[2048];
  bad_case("unknown_key.cfg", "factors = (\n  { key = \"phold.nokey\"; levels = [1, 2]; }\n);\n", 3,
           "factor 'phold.nokey'");
  bad_case("empty.cfg", "factors = (\n  { key = \"phold.mean\";\n    levels = [ ]; }\n);\n", 4, "empty levels");
  bad_case(
      "minmax.cfg",
      "design = { type = \"lhs\"; points = 4; };\nfactors = (\n  { key = \"phold.mean\"; min = 2.0; max = 1.0; }\n);\n",
      4, "min >= max");
  snprintf(body, sizeof body, "%sconstraints = [\n  \"events_per_lp < 10\",\n  \"no_such_metric < 0.2\" ];\n", F);
  bad_case("metric.cfg", body, 5, "unknown metric 'no_such_metric'");
  snprintf(body, sizeof body, "%sobjectives = [ \"maximize nothing_here\" ];\n", F);
  bad_case("objective.cfg", body, 3, "unknown metric 'nothing_here'");
  snprintf(body, sizeof body, "%sconstraints = [ \"events_per_lp ~ 3\" ];\n", F);
  bad_case("syntax_con.cfg", body, 3, "write METRIC < NUMBER");
  bad_case("bad_value.cfg", "factors = (\n  { key = \"phold.remote\"; levels = [0.5, 7.0]; }\n);\n", 3,
           "factor 'phold.remote' = 7.0");
  bad_case("range_factorial.cfg", "factors = (\n  { key = \"phold.mean\"; min = 0.5; max = 1.0; }\n);\n", 3, "needs n");
  bad_case("unknown_top.cfg", "colour = 3;\nfactors = ( { key = \"phold.mean\"; levels = [0.5]; } );\n", 2,
           "unknown key 'colour'");
  bad_case("reps_factor.cfg", "factors = (\n  { key = \"run.seed\"; levels = [1, 2]; }\n);\n", 3, "cannot be a factor");
  bad_case("syntax.cfg", "\nfactors = ( { key = ; } );\n", 3, "syntax error");
  /* an --out too long to name the results file and the points' folder after: refused, not cut */
  char path[256], cmd[8192], out[4200];
  write_exp("long_out.cfg", F, path, sizeof path);
  int n = snprintf(out, sizeof out, "%s/", tmpd);
  for (int i = 0; i < 4050; i++) out[n++] = i % 200 == 199 ? '/' : 'a';
  snprintf(out + n, sizeof out - (size_t)n, ".h5");
  snprintf(cmd, sizeof cmd, "%s experiment %s --out %s", tu_bin(), path, out);
  char *o = NULL;
  CU_ASSERT_EQUAL(tu_run(cmd, &o), 2);
  CU_ASSERT_PTR_NOT_NULL(strstr(o, "more than 4000"));
  free(o);
  out[strlen(tmpd) + 1 + 199] = 0; /* its first folder (199 letters): never made */
  struct stat st;
  CU_ASSERT(stat(out, &st) != 0);
}

/* Runs an experiment and reads its file. */
static int run_exp(const char *cmdargs, rpt_experiment *e, char **out) {
  char cmd[2048];
  snprintf(cmd, sizeof cmd, "%s experiment %s", tu_bin(), cmdargs);
  int st = tu_run(cmd, out);
  return st;
}
static int read_exp(const char *path, rpt_experiment *e) {
  rpt_file *f;
  char err[RPT_ERRLEN];
  int rc = rpt_open(path, &f, err, sizeof err);
  if (rc) {
    printf("%s\n", err);
    return rc;
  }
  rc = rpt_experiment_read(f, e);
  rpt_close(f);
  return rc;
}

/* PHOLD: each LP's events form a renewal process with mean gap lookahead + mean, so the events
 * per LP over [0, end] are start * end / (lookahead + mean) to first order (the elementary
 * renewal theorem): 100 / 0.5 = 200, 100 / 1 = 100, 100 / 2 = 50. The constraint < 150 keeps the
 * last two means; the objective maximize events_per_lp puts the mean 0.9 points on the front; the
 * SRC of events_per_lp on phold.mean is strongly negative, on phold.remote near 0. */
static void test_phold_factorial(void) {
  char path[256], out[256], args[1024];
  write_exp("phold_exp.cfg",
            "params = [ \"phold.lps=64\", \"run.end=100.0\" ];\nreps = 3;\n"
            "factors = (\n  { key = \"phold.mean\"; levels = [0.4, 0.9, 1.9]; },\n"
            "  { key = \"phold.remote\"; levels = [0.0, 0.5]; }\n);\n"
            "constraints = [ \"events_per_lp < 150\" ];\nobjectives = [ \"maximize events_per_lp\" ];\n",
            path, sizeof path);
  snprintf(out, sizeof out, "%s/phold.h5", tmpd);
  snprintf(args, sizeof args, "%s --out %s", path, out);
  rpt_experiment e;
  char *o = NULL;
  CU_ASSERT_EQUAL_FATAL(run_exp(args, &e, &o), 0);
  CU_ASSERT_PTR_NOT_NULL(strstr(o, "feasible points (every constraint met): 4 of 6"));
  CU_ASSERT_PTR_NOT_NULL(strstr(o, "Pareto front of maximize events_per_lp"));
  free(o);
  CU_ASSERT_EQUAL_FATAL(read_exp(out, &e), 0);
  CU_ASSERT_EQUAL(e.npoints, 6);
  CU_ASSERT_EQUAL(e.nfactors, 2);
  CU_ASSERT_EQUAL(e.reps, 3);
  int k = -1;
  for (unsigned i = 0; i < e.nmetrics; i++)
    if (!strcmp(e.names[i], "events_per_lp")) k = (int)i;
  CU_ASSERT_FATAL(k >= 0);
  const double means[3] = {0.4, 0.9, 1.9};
  for (unsigned p = 0; p < 6; p++) {
    double want = 100.0 / (0.1 + means[p / 2]), got = e.mean[p * e.nmetrics + (unsigned)k];
    CU_ASSERT(fabs(got - want) < 0.05 * want);
    CU_ASSERT_EQUAL(e.x[p * 2], means[p / 2]);
    CU_ASSERT_EQUAL(e.feasible[p], p >= 2);
    CU_ASSERT(e.lo[p * e.nmetrics + (unsigned)k] <= got && got <= e.hi[p * e.nmetrics + (unsigned)k]);
    if (p >= 2) CU_ASSERT(e.mean[(p - 2) * e.nmetrics + (unsigned)k] > got); /* decreasing in the mean */
  }
  /* the front: the feasible point with the most events per LP (a mean of 0.9, either remote) */
  unsigned nfront = 0;
  for (unsigned p = 0; p < 6; p++) nfront += e.pareto[p] == 1;
  CU_ASSERT_EQUAL(nfront, 1);
  CU_ASSERT(e.pareto[2] == 1 || e.pareto[3] == 1);
  CU_ASSERT(e.sensitivity[0] < -0.8);
  CU_ASSERT(fabs(e.sensitivity[1]) < 0.1);
  /* common random numbers: replication r has the same seed at every point, so two points that
   * differ only in phold.remote = 0 vs 0.5 still differ (the factor matters to the event order),
   * but a rerun is bit-identical */
  rpt_experiment e2;
  char out2[256];
  snprintf(out2, sizeof out2, "%s/phold2.h5", tmpd);
  snprintf(args, sizeof args, "%s --out %s --quiet", path, out2);
  CU_ASSERT_EQUAL_FATAL(run_exp(args, &e2, NULL), 0);
  CU_ASSERT_EQUAL_FATAL(read_exp(out2, &e2), 0);
  CU_ASSERT(memcmp(e.values, e2.values, (size_t)6 * 3 * e.nmetrics * sizeof *e.values) == 0);
  rpt_experiment_free(&e2);
  /* the report: the tables without gnuplot ('none'), and the Pareto figure skipped with its reason
   * (one objective) */
  char cmd[1024];
  snprintf(cmd, sizeof cmd, "%s report %s --out %s/rep --gnuplot none", tu_bin(), out, tmpd);
  char *ro = NULL;
  CU_ASSERT_EQUAL(tu_run(cmd, &ro), 0);
  CU_ASSERT_PTR_NOT_NULL(strstr(ro, "skipped figure 'Pareto front of the first two objectives': one objective"));
  free(ro);
  char md[300];
  snprintf(md, sizeof md, "%s/rep/summary.md", tmpd);
  FILE *f = fopen(md, "r");
  CU_ASSERT_PTR_NOT_NULL_FATAL(f);
  char buf[8192];
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  buf[n] = 0;
  fclose(f);
  CU_ASSERT_PTR_NOT_NULL(strstr(buf, "| 3 | 0.9 | 0.0 |"));
  CU_ASSERT_PTR_NOT_NULL(strstr(buf, "## Sensitivity"));
  /* with gnuplot: the sensitivity and feasible-region figures, PNG and SVG */
  snprintf(cmd, sizeof cmd, "%s report %s --out %s/repg", tu_bin(), out, tmpd);
  CU_ASSERT_EQUAL(tu_run(cmd, &ro), 0);
  const char *figs[2] = {"sensitivity", "feasible_map"};
  for (int i = 0; i < 2; i++) {
    char png[300], svg[300];
    snprintf(png, sizeof png, "%s/repg/%s.png", tmpd, figs[i]);
    snprintf(svg, sizeof svg, "%s/repg/%s.svg", tmpd, figs[i]);
    if (rpt_gnuplot_available(NULL)) {
      struct stat a, b;
      CU_ASSERT(stat(png, &a) == 0 && a.st_size > 1000);
      CU_ASSERT(stat(svg, &b) == 0 && b.st_size > 1000);
    } else
      CU_ASSERT_PTR_NOT_NULL(strstr(ro, "gnuplot not found"));
  }
  free(ro);
  rpt_experiment_free(&e);
}

/* LHS and Sobol through the command: the points lie in their ranges, one per stratum (LHS). */
static void test_lhs_sobol_command(void) {
  const char *designs[2] = {"lhs", "sobol"};
  for (int i = 0; i < 2; i++) {
    char path[256], out[256], args[1024], body[1024];
    snprintf(body, sizeof body,
             "params = [ \"phold.lps=16\", \"run.end=20.0\" ];\nreps = 2;\ndesign = { type = \"%s\"; points = 8; "
             "seed = 3; };\nfactors = (\n  { key = \"phold.mean\"; min = 0.1; max = 2.0; scale = \"log\"; },\n"
             "  { key = \"phold.remote\"; min = 0.0; max = 1.0; }\n);\nobjectives = [ \"maximize events_per_lp\", "
             "\"minimize events\" ];\n",
             designs[i]);
    char name[64];
    snprintf(name, sizeof name, "%s.cfg", designs[i]);
    write_exp(name, body, path, sizeof path);
    snprintf(out, sizeof out, "%s/%s_out", tmpd, designs[i]); /* a folder: DIR/experiment.h5 */
    snprintf(args, sizeof args, "%s --out %s --quiet", path, out);
    rpt_experiment e;
    char *o = NULL;
    CU_ASSERT_EQUAL_FATAL(run_exp(args, &e, &o), 0);
    free(o);
    char file[300];
    snprintf(file, sizeof file, "%s/experiment.h5", out);
    CU_ASSERT_EQUAL_FATAL(read_exp(file, &e), 0);
    CU_ASSERT_EQUAL(e.npoints, 8);
    CU_ASSERT_STRING_EQUAL(e.design, designs[i]);
    int strata[8] = {0};
    for (unsigned p = 0; p < 8; p++) {
      double m = e.x[p * 2], rm = e.x[p * 2 + 1];
      CU_ASSERT(m >= 0.1 && m <= 2.0);
      CU_ASSERT(rm >= 0 && rm <= 1);
      strata[(int)floor(log(m / 0.1) / log(20.0) * 8)]++; /* the log scale's strata */
    }
    if (i == 0)
      for (int k = 0; k < 8; k++) CU_ASSERT_EQUAL(strata[k], 1);
    /* two objectives: the Pareto figure (drawn when gnuplot is there) */
    char cmd[1024], png[400];
    snprintf(cmd, sizeof cmd, "%s report %s --out %s/rep --quiet", tu_bin(), file, out);
    CU_ASSERT_EQUAL(tu_run(cmd, NULL), 0);
    snprintf(png, sizeof png, "%s/rep/pareto.png", out);
    struct stat st;
    if (rpt_gnuplot_available(NULL)) CU_ASSERT(stat(png, &st) == 0 && st.st_size > 1000);
    rpt_experiment_free(&e);
  }
}

/* Killed while writing its third point's file (SIGKILL at a kill point of sim/failpoint.h), then
 * run again with --resume: the finished points are kept, the rest run, and the experiment file
 * equals that of an uninterrupted run. */
static void test_resume_after_kill(void) {
  char path[256], args[1024], cmd[2048];
  write_exp("resume.cfg",
            "params = [ \"phold.lps=32\", \"run.end=50.0\" ];\nreps = 2;\n"
            "factors = ( { key = \"phold.mean\"; levels = [0.4, 0.9, 1.4, 1.9]; } );\n"
            "objectives = [ \"maximize events_per_lp\" ];\n",
            path, sizeof path);
  /* how often one point's results file passes the kill point: a `spotlab run` of the same
   * scenario writes the same file */
  char *o = NULL;
  snprintf(cmd, sizeof cmd,
           "SPOTLAB_KILL=write:0 %s run %s/scenarios/phold.cfg --param phold.lps=32 --param run.end=50.0 --reps 2 "
           "--param phold.mean=1.4 --out %s/count_run.h5 --quiet",
           tu_bin(), tu_src(), tmpd);
  CU_ASSERT_EQUAL_FATAL(tu_run(cmd, &o), 0);
  long per_point = -1;
  const char *m = strstr(o, "kill point write passed ");
  if (m) per_point = strtol(m + strlen("kill point write passed "), NULL, 10);
  free(o);
  CU_ASSERT_FATAL(per_point >= 2); /* at least a chunk, then once whole */
  snprintf(cmd, sizeof cmd, "%s experiment %s --out %s/count.h5 --quiet", tu_bin(), path, tmpd);
  CU_ASSERT_EQUAL_FATAL(tu_run(cmd, NULL), 0);
  /* killed in the middle of the third point's file */
  snprintf(cmd, sizeof cmd, "SPOTLAB_KILL=write:%ld %s experiment %s --out %s/r.h5 --quiet", 2 * per_point + 1,
           tu_bin(), path, tmpd);
  int st = tu_run(cmd, NULL);
  CU_ASSERT(st == 137 || st == -1); /* killed by SIGKILL: the shell's 128 + 9, or the signal itself */
  char f[300];
  snprintf(f, sizeof f, "%s/r.h5", tmpd);
  CU_ASSERT(access(f, F_OK) != 0);
  snprintf(args, sizeof args, "%s --out %s/r.h5 --resume", path, tmpd);
  rpt_experiment e, c;
  CU_ASSERT_EQUAL_FATAL(run_exp(args, &e, &o), 0);
  CU_ASSERT_PTR_NOT_NULL(strstr(o, "point 1/4 (phold.mean=0.4): finished earlier, kept"));
  CU_ASSERT_PTR_NOT_NULL(strstr(o, "point 2/4 (phold.mean=0.9): finished earlier, kept"));
  CU_ASSERT_PTR_NOT_NULL(strstr(o, "2 run, 2 kept"));
  free(o);
  CU_ASSERT_EQUAL_FATAL(read_exp(f, &e), 0);
  snprintf(f, sizeof f, "%s/count.h5", tmpd);
  CU_ASSERT_EQUAL_FATAL(read_exp(f, &c), 0);
  CU_ASSERT_EQUAL_FATAL(e.npoints, c.npoints);
  CU_ASSERT(memcmp(e.values, c.values, (size_t)e.npoints * e.reps * e.nmetrics * sizeof *e.values) == 0);
  rpt_experiment_free(&e);
  rpt_experiment_free(&c);
  /* --resume does not keep a point whose file was made for other values: change a level */
  write_exp("resume.cfg",
            "params = [ \"phold.lps=32\", \"run.end=50.0\" ];\nreps = 2;\n"
            "factors = ( { key = \"phold.mean\"; levels = [0.4, 0.9, 1.5, 1.9]; } );\n"
            "objectives = [ \"maximize events_per_lp\" ];\n",
            path, sizeof path);
  CU_ASSERT_EQUAL_FATAL(run_exp(args, &e, &o), 0);
  CU_ASSERT_PTR_NOT_NULL(strstr(o, "1 run, 3 kept"));
  free(o);
}

static CU_TestInfo design_tests[] = {
    {"full factorial: order and every combination once", test_factorial},
    {"Latin hypercube: one point per stratum, random seeds", test_lhs_strata},
    {"Sobol: the published points and GSL's sequence", test_sobol},
    {"factor values: linear, log, integer, levels", test_factor_at},
    CU_TEST_INFO_NULL,
};
static CU_TestInfo analysis_tests[] = {
    {"constraint confidence: a known t value", test_confidence},
    {"Pareto front: a hand-made case", test_pareto_known},
    {"Pareto front: random cases", test_pareto_random},
    {"standardized regression coefficients: exact linear data", test_src},
    CU_TEST_INFO_NULL,
};
static CU_TestInfo command_tests[] = {
    {"bad experiment files: FILE:LINE, exit 2, nothing written", test_bad_files},
    {"PHOLD factorial: known events per LP, feasible set, front, SRC", test_phold_factorial},
    {"LHS and Sobol designs through the command", test_lhs_sobol_command},
    {"--resume after a kill keeps finished points", test_resume_after_kill},
    CU_TEST_INFO_NULL,
};
CU_SuiteInfo spotlab_suites[] = {
    {"experiment_design", NULL, NULL, NULL, NULL, design_tests},
    {"experiment_analysis", NULL, NULL, NULL, NULL, analysis_tests},
    {"experiment_command", suite_init, suite_clean, NULL, NULL, command_tests},
    CU_SUITE_INFO_NULL,
};
