/* rpt_stats.c - confidence intervals across replications, computed with GSL independently of the
 * engine's sim_summarize (the report cross-checks the two). */
#include "analysis/report/rpt.h"

#include <gsl/gsl_cdf.h>
#include <gsl/gsl_statistics_double.h>
#include <math.h>
#include <stdlib.h>

/* 95% interval of the mean of n independent replications:
 *   mean +- t_{0.975, n-1} * s / sqrt(n),  s the sample standard deviation (divisor n - 1).
 * Source: Law, "Simulation Modeling and Analysis", 5th ed., section 9.4.1 (independent
 * replications); the t quantile from GSL's gsl_cdf_tdist_Pinv. */
void rpt_ci_t(const double *x, size_t n, size_t stride, rpt_ci *out) {
  out->n = (int)n;
  out->mean = n ? gsl_stats_mean(x, stride, n) : NAN;
  out->sd = n > 1 ? gsl_stats_sd_m(x, stride, n, out->mean) : NAN;
  if (n > 1) {
    double h = gsl_cdf_tdist_Pinv(0.975, (double)(n - 1)) * out->sd / sqrt((double)n);
    out->lo = out->mean - h;
    out->hi = out->mean + h;
  } else {
    out->lo = out->hi = NAN;
  }
}

/* Common random numbers: replication r of both runs shares its seed, so d_r = after_r - before_r
 * are i.i.d. and the paired-t interval on d applies (Law, 5th ed., section 10.2.1, "paired-t
 * confidence interval"). Positive correlation between the pair makes it narrower than the
 * two-sample interval; with unrelated seeds it is still valid, only wider. */
void rpt_ci_paired(const double *before, const double *after, size_t n, size_t stride, rpt_ci *out) {
  double *d = malloc((n ? n : 1) * sizeof *d);
  if (!d) {
    out->n = 0;
    out->mean = out->sd = out->lo = out->hi = NAN;
    return;
  }
  for (size_t i = 0; i < n; i++) d[i] = after[i * stride] - before[i * stride];
  rpt_ci_t(d, n, 1, out);
  free(d);
}
