/* churn.h - host availability: up/down interval distributions and the Failure Trace Archive fits.
 *
 * Shared by the models that churn GPUs (market, fault_tolerance): one parser of
 * data/churn_fta_fits.csv, one set of samplers and moments. Pure: no engine, no state; every draw
 * takes the caller's generator (an LP's stream).
 */
#ifndef MODELS_CHURN_H
#define MODELS_CHURN_H

#include "sim/errors.h"
#include <gsl/gsl_rng.h>
#include <stddef.h>

typedef enum churn_err {
  CHURN_OK = 0,
  CHURN_EINVAL = SPOTLAB_EINVAL,      /* parameters invalid for the kind */
  CHURN_EIO = SPOTLAB_EIO,            /* the file cannot be read */
  CHURN_EFORMAT = SPOTLAB_EFORMAT,    /* the file is malformed (the message names file and line) */
  CHURN_ENOTFOUND = SPOTLAB_ENOTFOUND /* no fit for that trace, phase and distribution */
} churn_err;

typedef enum churn_kind { CHURN_EXP, CHURN_WEIBULL, CHURN_LOGNORMAL, CHURN_GAMMA } churn_kind;
extern const char *const churn_kind_names[]; /* "exp", "weibull", "lognormal", "gamma", NULL */

/* Parameters as in the Failure Trace Archive fits (hours): exp(p1 = mean), weibull(p1 = shape k,
 * p2 = scale lambda), lognormal(p1 = mu, p2 = sigma of log hours), gamma(p1 = shape, p2 = scale). */
typedef struct churn_dist {
  churn_kind kind;
  double p1, p2;
} churn_dist;

/* CHURN_OK if the parameters are valid for the kind, else CHURN_EINVAL. */
int churn_dist_check(const churn_dist *d);
/* One interval, hours (>= 0). */
double churn_dist_draw(const churn_dist *d, gsl_rng *r);
/* Analytic mean (hours) and variance (hours^2). */
double churn_dist_mean(const churn_dist *d);
double churn_dist_var(const churn_dist *d);

/* Looks up (trace, phase "up"/"down", kind) in a churn_fta_fits.csv (header
 * trace,population,phase,dist,p1,p2; '#' comments). CHURN_OK, or a negative churn_err with
 * "FILE[:LINE]: what" in err (err may be NULL). */
int churn_fits_load(const char *path, const char *trace, const char *phase, churn_kind kind, churn_dist *out, char *err,
                    size_t errlen);

#endif
