/* test_churn.c - host availability distributions and the FTA fits file (models/churn). */
#include "models/churn/churn.h"
#include "tests/testutil.h"

#include <CUnit/CUnit.h>
#include <math.h>

static void fits(char *p, size_t n) { snprintf(p, n, "%s/data/churn_fta_fits.csv", tu_src()); }

/* Known rows of data/churn_fta_fits.csv. */
static void test_loader_known_rows(void) {
  char p[4096], err[512];
  fits(p, sizeof p);
  churn_dist d;
  CU_ASSERT_EQUAL_FATAL(churn_fits_load(p, "skype06", "up", CHURN_WEIBULL, &d, err, sizeof err), CHURN_OK);
  CU_ASSERT_EQUAL(d.kind, CHURN_WEIBULL);
  CU_ASSERT_DOUBLE_EQUAL(d.p1, 0.64, 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(d.p2, 10.86, 1e-12);
  CU_ASSERT_EQUAL(churn_fits_load(p, "overnet03", "down", CHURN_EXP, &d, err, sizeof err), CHURN_OK);
  CU_ASSERT_DOUBLE_EQUAL(churn_dist_mean(&d), 12.00, 0);
}

static void test_loader_errors(void) {
  char p[4096], err[512];
  fits(p, sizeof p);
  churn_dist d;
  CU_ASSERT_EQUAL(churn_fits_load(p, "nosuch", "up", CHURN_GAMMA, &d, err, sizeof err), CHURN_ENOTFOUND);
  CU_ASSERT_PTR_NOT_NULL(strstr(err, "no fit for trace 'nosuch'"));
  CU_ASSERT_EQUAL(churn_fits_load("/no/such.csv", "x", "up", CHURN_EXP, &d, err, sizeof err), CHURN_EIO);
  CU_ASSERT_PTR_NOT_NULL(strstr(err, "/no/such.csv: cannot open"));
  /* a malformed row: FILE:LINE */
  tu_write("bad_fits.csv", "# comment\ntrace,population,phase,dist,p1,p2\nt,pop,up,weibull,-1,2\n");
  CU_ASSERT_EQUAL(churn_fits_load("bad_fits.csv", "t", "up", CHURN_WEIBULL, &d, err, sizeof err), CHURN_EFORMAT);
  CU_ASSERT_PTR_NOT_NULL(strstr(err, "bad_fits.csv:3: bad parameters"));
  tu_write("short_fits.csv", "trace,population,phase,dist,p1,p2\nt,pop\n");
  CU_ASSERT_EQUAL(churn_fits_load("short_fits.csv", "t", "up", CHURN_WEIBULL, &d, err, sizeof err), CHURN_EFORMAT);
  CU_ASSERT_PTR_NOT_NULL(strstr(err, "short_fits.csv:2:"));
  CU_ASSERT_EQUAL(churn_fits_load(p, "skype06", "up", (churn_kind)7, &d, err, sizeof err), CHURN_EINVAL);
}

/* Exact moments: gamma(2, 3) mean 6 variance 18; exp(5) mean 5 variance 25; Weibull(k=1, l) is
 * exp(l); log-normal(0, 1) mean e^0.5. */
static void test_moments_known(void) {
  churn_dist g = {CHURN_GAMMA, 2, 3}, e = {CHURN_EXP, 5, 0}, w = {CHURN_WEIBULL, 1, 4}, l = {CHURN_LOGNORMAL, 0, 1};
  CU_ASSERT_DOUBLE_EQUAL(churn_dist_mean(&g), 6, 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(churn_dist_var(&g), 18, 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(churn_dist_mean(&e), 5, 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(churn_dist_var(&e), 25, 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(churn_dist_mean(&w), 4, 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(churn_dist_var(&w), 16, 1e-9);
  CU_ASSERT_DOUBLE_EQUAL(churn_dist_mean(&l), exp(0.5), 1e-12);
  churn_dist bad = {CHURN_WEIBULL, 0.5, -1};
  CU_ASSERT_EQUAL(churn_dist_check(&bad), CHURN_EINVAL);
  CU_ASSERT_EQUAL(churn_dist_check(&g), CHURN_OK);
}

/* Draws match the analytic mean within 4 standard errors, for the Weibull of a real fit (shape
 * below 1: the heavy tail that makes exponential churn a poor default). */
static void test_draws_match_mean(void) {
  gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
  gsl_rng_set(r, 17);
  churn_dist d = {CHURN_WEIBULL, 0.64, 10.86};
  enum { N = 200000 };
  double s = 0;
  for (int i = 0; i < N; i++) {
    double x = churn_dist_draw(&d, r);
    CU_ASSERT_FATAL(x >= 0);
    s += x;
  }
  double se = sqrt(churn_dist_var(&d) / N);
  CU_ASSERT(fabs(s / N - churn_dist_mean(&d)) < 4 * se);
  gsl_rng_free(r);
}

static CU_TestInfo churn_tests[] = {
    {"loader: known rows", test_loader_known_rows},
    {"loader: missing fit, missing file, malformed rows", test_loader_errors},
    {"exact moments", test_moments_known},
    {"draws match the mean", test_draws_match_mean},
    CU_TEST_INFO_NULL,
};
CU_SuiteInfo spotlab_suites[] = {
    {"churn", NULL, NULL, NULL, NULL, churn_tests},
    CU_SUITE_INFO_NULL,
};
