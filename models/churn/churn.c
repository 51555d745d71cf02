/* churn.c - see churn.h. */
#include "models/churn/churn.h"

#include <errno.h>
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
  case CHURN_EXP: return gsl_ran_exponential(r, d->p1);         /* mean p1 */
  case CHURN_WEIBULL: return gsl_ran_weibull(r, d->p2, d->p1);  /* GSL: (scale, shape) */
  case CHURN_LOGNORMAL: return gsl_ran_lognormal(r, d->p1, d->p2);
  case CHURN_GAMMA: return gsl_ran_gamma(r, d->p1, d->p2);      /* (shape, scale) */
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

static int churn__err(char *err, size_t len, int rc, const char *fmt, ...) {
  if (err && len) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, len, fmt, ap);
    va_end(ap);
  }
  return rc;
}

static int churn__num(const char *s, double *v) {
  char *e;
  errno = 0;
  *v = strtod(s, &e);
  while (*e == ' ' || *e == '\t' || *e == '\r' || *e == '\n') e++;
  return (e == s || *e || errno || !isfinite(*v)) ? -1 : 0;
}

int churn_fits_load(const char *path, const char *trace, const char *phase, churn_kind kind, churn_dist *out,
                    char *err, size_t errlen) {
  if ((unsigned)kind > CHURN_GAMMA) return churn__err(err, errlen, CHURN_EINVAL, "unknown distribution kind %d", kind);
  FILE *f = fopen(path, "r");
  if (!f) return churn__err(err, errlen, CHURN_EIO, "%s: cannot open the churn fits file: %s", path, strerror(errno));
  char line[1024];
  int lineno = 0, header = 0, rc = CHURN_ENOTFOUND;
  while (fgets(line, sizeof line, f)) {
    lineno++;
    if (line[0] == '#' || line[strspn(line, " \t\r\n")] == 0) continue;
    if (!header) { header = 1; continue; }
    char *fl[6] = {0};
    int nf = 0;
    for (char *p = line, *tok; nf < 6 && (tok = strsep(&p, ",\r\n"));) fl[nf++] = tok;
    if (nf < 5) {
      rc = churn__err(err, errlen, CHURN_EFORMAT, "%s:%d: expected trace,population,phase,dist,p1,p2", path, lineno);
      break;
    }
    if (strcmp(fl[0], trace) || strcmp(fl[2], phase) || strcmp(fl[3], churn_kind_names[kind])) continue;
    churn_dist d = {kind, 0, 0};
    if (churn__num(fl[4], &d.p1) || (kind != CHURN_EXP && (nf < 6 || churn__num(fl[5], &d.p2))) ||
        churn_dist_check(&d)) {
      rc = churn__err(err, errlen, CHURN_EFORMAT, "%s:%d: bad parameters for %s %s %s", path, lineno, trace, phase,
                      fl[3]);
      break;
    }
    *out = d;
    rc = CHURN_OK;
    break;
  }
  fclose(f);
  if (rc == CHURN_ENOTFOUND)
    churn__err(err, errlen, rc, "%s: no fit for trace '%s', phase '%s', distribution '%s'", path, trace, phase,
               churn_kind_names[kind]);
  return rc;
}
