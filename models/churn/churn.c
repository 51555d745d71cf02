/* churn.c - see churn.h. */
#include "models/churn/churn.h"
#include "sim/csvfile.h"

#include <gsl/gsl_randist.h>
#include <gsl/gsl_sf_gamma.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const churn_kind_names[] = {"exp", "weibull", "lognormal", "gamma", NULL};

int churn_dist_check(const churn_dist *d) {
  switch (d->kind) {
  case CHURN_EXP: return d->p1 > 0 ? CHURN_OK : CHURN_EINVAL;
  case CHURN_WEIBULL: return d->p1 > 0 && d->p2 > 0 ? CHURN_OK : CHURN_EINVAL;
  case CHURN_LOGNORMAL: return d->p2 > 0 && isfinite(d->p1) ? CHURN_OK : CHURN_EINVAL;
  case CHURN_GAMMA: return d->p1 > 0 && d->p2 > 0 ? CHURN_OK : CHURN_EINVAL;
  }
  return CHURN_EINVAL;
}

double churn_dist_draw(const churn_dist *d, gsl_rng *r) {
  switch (d->kind) {
  case CHURN_EXP: return gsl_ran_exponential(r, d->p1);        /* mean p1 */
  case CHURN_WEIBULL: return gsl_ran_weibull(r, d->p2, d->p1); /* GSL: (scale, shape) */
  case CHURN_LOGNORMAL: return gsl_ran_lognormal(r, d->p1, d->p2);
  case CHURN_GAMMA: return gsl_ran_gamma(r, d->p1, d->p2); /* (shape, scale) */
  }
  return NAN;
}

double churn_dist_mean(const churn_dist *d) {
  switch (d->kind) {
  case CHURN_EXP: return d->p1;
  /* Weibull: E = lambda * Gamma(1 + 1/k) */
  case CHURN_WEIBULL: return d->p2 * gsl_sf_gamma(1.0 + 1.0 / d->p1);
  /* log-normal: E = exp(mu + sigma^2/2) */
  case CHURN_LOGNORMAL: return exp(d->p1 + d->p2 * d->p2 / 2);
  /* gamma: E = k theta */
  case CHURN_GAMMA: return d->p1 * d->p2;
  }
  return NAN;
}

double churn_dist_var(const churn_dist *d) {
  switch (d->kind) {
  case CHURN_EXP: return d->p1 * d->p1;
  case CHURN_WEIBULL: {
    /* Var = lambda^2 [Gamma(1 + 2/k) - Gamma(1 + 1/k)^2] */
    double g1 = gsl_sf_gamma(1.0 + 1.0 / d->p1), g2 = gsl_sf_gamma(1.0 + 2.0 / d->p1);
    return d->p2 * d->p2 * (g2 - g1 * g1);
  }
  /* log-normal: Var = (exp(sigma^2) - 1) exp(2 mu + sigma^2) */
  case CHURN_LOGNORMAL: return (exp(d->p2 * d->p2) - 1) * exp(2 * d->p1 + d->p2 * d->p2);
  /* gamma: Var = k theta^2 */
  case CHURN_GAMMA: return d->p1 * d->p2 * d->p2;
  }
  return NAN;
}

/* The fits file's columns (trace,population,phase,dist,p1,p2). */
enum { FIT_TRACE, FIT_PHASE, FIT_DIST, FIT_P1, FIT_P2, FIT_NCOLS };
static const sim_csv_col churn__cols[FIT_NCOLS] = {{"trace", 0}, {"phase", 2}, {"dist", 3}, {"p1", 4}, {"p2", 5}};

int churn_fits_load(const char *path, const char *trace, const char *phase, churn_kind kind, churn_dist *out, char *err,
                    size_t errlen) {
  if ((unsigned)kind > CHURN_GAMMA)
    return spotlab_errf(err, errlen, CHURN_EINVAL, "unknown distribution kind %d", kind);
  sim_csv *c;
  int rc = sim_csv_open(&c, path, SIM_CSV_COMMENTS | SIM_CSV_HEADER, "churn fits file", err, errlen);
  if (rc) return rc;
  size_t col[FIT_NCOLS], need = 0;
  sim_csv_columns(c, churn__cols, FIT_NCOLS, col, NULL);
  for (int k = 0; k < FIT_P2; k++) /* p2 is optional: exp has one parameter */
    if (col[k] + 1 > need) need = col[k] + 1;
  rc = CHURN_ENOTFOUND;
  sim_csv_row row;
  int more;
  while ((more = sim_csv_next(c, &row, err, errlen)) > 0) {
    const char *const *fl = row.f;
    if (row.n < need) {
      rc = spotlab_errf(err, errlen, CHURN_EFORMAT, "%s:%ld: expected trace,population,phase,dist,p1,p2", path,
                        row.line);
      break;
    }
    if (strcmp(fl[col[FIT_TRACE]], trace) || strcmp(fl[col[FIT_PHASE]], phase) ||
        strcmp(fl[col[FIT_DIST]], churn_kind_names[kind]))
      continue;
    churn_dist d = {kind, 0, 0};
    if (sim_csv_num(fl[col[FIT_P1]], &d.p1) ||
        (kind != CHURN_EXP && (row.n <= col[FIT_P2] || sim_csv_num(fl[col[FIT_P2]], &d.p2))) || churn_dist_check(&d)) {
      rc = spotlab_errf(err, errlen, CHURN_EFORMAT, "%s:%ld: bad parameters for %s %s %s", path, row.line, trace, phase,
                        fl[col[FIT_DIST]]);
      break;
    }
    *out = d;
    rc = CHURN_OK;
    break;
  }
  if (more < 0) rc = more;
  sim_csv_close(c);
  if (rc == CHURN_ENOTFOUND)
    spotlab_errf(err, errlen, rc, "%s: no fit for trace '%s', phase '%s', distribution '%s'", path, trace, phase,
                 churn_kind_names[kind]);
  return rc;
}
