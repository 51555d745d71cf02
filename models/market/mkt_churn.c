/* mkt_churn.c - up/down interval distributions for provider churn (Failure Trace Archive fits). */
#include "models/market/mkt.h"

#include <gsl/gsl_randist.h>
#include <gsl/gsl_sf_gamma.h>
#include <math.h>

const char *const mkt_dist_names[] = {"exp", "weibull", "lognormal", "gamma", NULL};

int mkt_dist_check(const mkt_dist *d) {
  switch (d->kind) {
    case MKT_DIST_EXP: return d->p1 > 0 ? MKT_OK : MKT_EINVAL;
    case MKT_DIST_WEIBULL: return d->p1 > 0 && d->p2 > 0 ? MKT_OK : MKT_EINVAL;
    case MKT_DIST_LOGNORMAL: return d->p2 > 0 && isfinite(d->p1) ? MKT_OK : MKT_EINVAL;
    case MKT_DIST_GAMMA: return d->p1 > 0 && d->p2 > 0 ? MKT_OK : MKT_EINVAL;
  }
  return MKT_EINVAL;
}

double mkt_dist_sample(const mkt_dist *d, gsl_rng *r) {
  double x = 0;
  switch (d->kind) {
    case MKT_DIST_EXP: x = gsl_ran_exponential(r, d->p1); break;          /* mean p1 */
    case MKT_DIST_WEIBULL: x = gsl_ran_weibull(r, d->p2, d->p1); break;   /* GSL: (scale, shape) */
    case MKT_DIST_LOGNORMAL: x = gsl_ran_lognormal(r, d->p1, d->p2); break;
    case MKT_DIST_GAMMA: x = gsl_ran_gamma(r, d->p1, d->p2); break;       /* (shape, scale) */
  }
  /* Intervals shorter than a millisecond are rounded up: the model keeps time in ms. */
  return x > 1e-6 / 3.6 ? x : 1e-6 / 3.6;
}

double mkt_dist_mean(const mkt_dist *d) {
  switch (d->kind) {
    case MKT_DIST_EXP: return d->p1;
    /* Weibull: E = lambda * Gamma(1 + 1/k) */
    case MKT_DIST_WEIBULL: return d->p2 * gsl_sf_gamma(1.0 + 1.0 / d->p1);
    /* log-normal: E = exp(mu + sigma^2/2) */
    case MKT_DIST_LOGNORMAL: return exp(d->p1 + d->p2 * d->p2 / 2);
    /* gamma: E = k theta */
    case MKT_DIST_GAMMA: return d->p1 * d->p2;
  }
  return NAN;
}

double mkt_dist_var(const mkt_dist *d) {
  switch (d->kind) {
    case MKT_DIST_EXP: return d->p1 * d->p1;
    case MKT_DIST_WEIBULL: {
      /* Var = lambda^2 [Gamma(1 + 2/k) - Gamma(1 + 1/k)^2] */
      double g1 = gsl_sf_gamma(1.0 + 1.0 / d->p1), g2 = gsl_sf_gamma(1.0 + 2.0 / d->p1);
      return d->p2 * d->p2 * (g2 - g1 * g1);
    }
    /* log-normal: Var = (exp(sigma^2) - 1) exp(2 mu + sigma^2) */
    case MKT_DIST_LOGNORMAL: return (exp(d->p2 * d->p2) - 1) * exp(2 * d->p1 + d->p2 * d->p2);
    /* gamma: Var = k theta^2 */
    case MKT_DIST_GAMMA: return d->p1 * d->p2 * d->p2;
  }
  return NAN;
}
