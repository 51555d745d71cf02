/* exp_design.c - the designs (full factorial, Latin hypercube, Sobol) and the analysis of an
 * experiment's results (constraint confidence, Pareto front, standardized regression
 * coefficients). Pure functions: no files, no global state; formulas and sources in exp.h and at
 * the code below. */
#include "analysis/experiment/exp.h"
#include "sim/sim.h"

#include <gsl/gsl_cdf.h>
#include <gsl/gsl_multifit.h>
#include <gsl/gsl_qrng.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <gsl/gsl_statistics_double.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *exp_design_name(exp_design d) {
  switch (d) {
  case EXP_FACTORIAL: return "factorial";
  case EXP_LHS: return "lhs";
  case EXP_SOBOL: return "sobol";
  }
  return "?";
}

int exp_factorial(const int *nlevels, unsigned nf, unsigned *np, int **idx) {
  *idx = NULL;
  *np = 0;
  unsigned long long n = 1;
  for (unsigned f = 0; f < nf; f++) {
    if (nlevels[f] < 1) return SIM_EINVAL;
    n *= (unsigned long long)nlevels[f];
    if (n > EXP_MAX_POINTS) return SIM_EINVAL;
  }
  int *v = malloc((size_t)n * (nf ? nf : 1) * sizeof *v);
  if (!v) return SIM_ENOMEM;
  /* An odometer: the last factor turns fastest. */
  for (unsigned long long p = 0; p < n; p++) {
    unsigned long long r = p;
    for (unsigned f = nf; f-- > 0;) {
      v[p * nf + f] = (int)(r % (unsigned long long)nlevels[f]);
      r /= (unsigned long long)nlevels[f];
    }
  }
  *np = (unsigned)n;
  *idx = v;
  return 0;
}

int exp_lhs(unsigned n, unsigned nf, uint64_t seed, double *u) {
  if (n < 1 || n > EXP_MAX_POINTS) return SIM_EINVAL;
  gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
  size_t *perm = malloc(n * sizeof *perm);
  if (!r || !perm) {
    gsl_rng_free(r);
    free(perm);
    return SIM_ENOMEM;
  }
  /* mt19937 takes an unsigned long seed; fold the 64 bits so that every bit of the seed counts. */
  gsl_rng_set(r, (unsigned long)(seed ^ (seed >> 32)));
  for (unsigned f = 0; f < nf; f++) {
    for (unsigned k = 0; k < n; k++) perm[k] = k;
    gsl_ran_shuffle(r, perm, n, sizeof *perm);
    /* u = (stratum + U) / n: one point in each stratum [k/n, (k+1)/n) (McKay et al. 1979) */
    for (unsigned p = 0; p < n; p++) {
      double x = ((double)perm[p] + gsl_rng_uniform(r)) / (double)n;
      if (x >= ((double)perm[p] + 1.0) / (double)n) x = nextafter(((double)perm[p] + 1.0) / (double)n, 0.0);
      u[(size_t)p * nf + f] = x;
    }
  }
  free(perm);
  gsl_rng_free(r);
  return 0;
}

int exp_sobol(unsigned n, unsigned nf, double *u) {
  if (n < 1 || n > EXP_MAX_POINTS || nf < 1 || nf > EXP_MAX_FACTORS) return SIM_EINVAL;
  gsl_qrng *q = gsl_qrng_alloc(gsl_qrng_sobol, nf);
  if (!q) return SIM_ENOMEM;
  for (unsigned p = 0; p < n; p++) gsl_qrng_get(q, u + (size_t)p * nf);
  gsl_qrng_free(q);
  return 0;
}

/* "%.17g" would write 0.1 as 0.10000000000000001: the shortest text that reads back the same. */
static void exp__num(char *buf, size_t len, double v) {
  for (int prec = 6; prec <= 17; prec++) {
    snprintf(buf, len, "%.*g", prec, v);
    if (strtod(buf, NULL) == v) break;
  }
  /* a scenario's float key wants a number that looks like one: "1" would be read as an integer */
  if (!strpbrk(buf, ".eEn") && strlen(buf) + 3 < len) strcat(buf, ".0");
}

void exp_factor_at(const exp_factor *f, double u, char *text, size_t len, double *x) {
  if (u < 0) u = 0;
  if (f->nlevels > 0) {
    int k = (int)floor(u * f->nlevels);
    if (k >= f->nlevels) k = f->nlevels - 1;
    snprintf(text, len, "%s", f->levels[k]);
    *x = isfinite(f->level_x[k]) ? f->level_x[k] : (double)k;
    return;
  }
  double v = f->log ? f->min * pow(f->max / f->min, u) : f->min + u * (f->max - f->min);
  if (v > f->max) v = f->max;
  if (f->integer) {
    v = floor(v + 0.5);
    snprintf(text, len, "%.0f", v);
  } else
    exp__num(text, len, v);
  *x = v;
}

void exp_labels_free(char **labels, size_t n) {
  if (!labels) return;
  for (size_t i = 0; i < n; i++) free(labels[i]);
  free(labels);
}

int exp_points(const exp_spec *s, unsigned *np_out, char ***labels_out, double **x_out) {
  *labels_out = NULL;
  *x_out = NULL;
  unsigned nf = (unsigned)s->nfactors, np = 0;
  double *u = NULL; /* [np][nf] unit coordinates (LHS, Sobol) */
  int *idx = NULL;  /* [np][nf] level indices (factorial) */
  int rc = 0;
  if (s->design == EXP_FACTORIAL) {
    int nl[EXP_MAX_FACTORS];
    for (unsigned f = 0; f < nf; f++) nl[f] = s->factors[f].nlevels > 0 ? s->factors[f].nlevels : s->factors[f].n;
    rc = exp_factorial(nl, nf, &np, &idx);
  } else {
    np = (unsigned)s->points;
    u = malloc((size_t)np * nf * sizeof *u);
    if (!u) return SIM_ENOMEM;
    rc = s->design == EXP_LHS ? exp_lhs(np, nf, s->design_seed, u) : exp_sobol(np, nf, u);
  }
  char **labels = rc ? NULL : calloc((size_t)np * nf + 1, sizeof *labels);
  double *x = rc ? NULL : malloc(((size_t)np * nf + 1) * sizeof *x);
  if (!rc && (!labels || !x)) rc = SIM_ENOMEM;
  for (unsigned p = 0; !rc && p < np; p++)
    for (unsigned f = 0; !rc && f < nf; f++) {
      const exp_factor *fa = &s->factors[f];
      char text[4096];
      double v;
      if (idx) {
        /* a factorial's range: n values from min to max, the ends included */
        int k = idx[(size_t)p * nf + f];
        if (fa->nlevels > 0) {
          snprintf(text, sizeof text, "%s", fa->levels[k]);
          v = isfinite(fa->level_x[k]) ? fa->level_x[k] : (double)k;
        } else {
          double uu = fa->n > 1 ? (double)k / (double)(fa->n - 1) : 0.0;
          exp_factor_at(fa, uu, text, sizeof text, &v);
        }
      } else
        exp_factor_at(fa, u[(size_t)p * nf + f], text, sizeof text, &v);
      labels[(size_t)p * nf + f] = strdup(text);
      x[(size_t)p * nf + f] = v;
      if (!labels[(size_t)p * nf + f]) rc = SIM_ENOMEM;
    }
  free(u);
  free(idx);
  if (rc) {
    exp_labels_free(labels, labels ? (size_t)np * nf : 0);
    free(x);
    return rc;
  }
  *np_out = np;
  *labels_out = labels;
  *x_out = x;
  return 0;
}

int exp_meets(double v, exp_op op, double bound) {
  switch (op) {
  case EXP_LT: return v < bound;
  case EXP_LE: return v <= bound;
  case EXP_GT: return v > bound;
  case EXP_GE: return v >= bound;
  }
  return 0;
}

double exp_confidence(double m, double sd, int n, exp_op op, double bound) {
  if (n < 2 || !isfinite(m) || !isfinite(sd)) return NAN;
  int below = op == EXP_LT || op == EXP_LE;
  double p_below;
  if (sd == 0)
    p_below = m < bound ? 1.0 : m > bound ? 0.0 : 0.5;
  else {
    /* t = (bound - m) / (sd / sqrt(n)); P(mu < bound) = T_{n-1}(t) (exp.h: Gelman et al. sec. 3.2) */
    double t = (bound - m) / (sd / sqrt((double)n));
    p_below = gsl_cdf_tdist_P(t, (double)(n - 1));
  }
  return below ? p_below : 1.0 - p_below;
}

/* 1 when a dominates b: no worse in every objective, better in at least one (sense +1: larger is
 * better). */
static int exp__dominates(const double *a, const double *b, unsigned nobj, const int *sense) {
  int better = 0;
  for (unsigned j = 0; j < nobj; j++) {
    double da = sense[j] * a[j], db = sense[j] * b[j];
    if (da < db) return 0;
    if (da > db) better = 1;
  }
  return better;
}

unsigned exp_pareto(const double *obj, unsigned np, unsigned nobj, const int *sense, const double *feasible,
                    double *front) {
  unsigned n = 0;
  for (unsigned p = 0; p < np; p++) {
    int ok = !feasible || feasible[p] == 1.0;
    for (unsigned j = 0; ok && j < nobj; j++) ok = isfinite(obj[(size_t)p * nobj + j]);
    front[p] = ok;
  }
  /* A point leaves the front when any candidate dominates it; dominance is transitive, so testing
   * against every candidate (on or off the front so far) gives the non-dominated set. */
  double *cand = malloc((np ? np : 1) * sizeof *cand);
  if (!cand) SIM_FATAL("out of memory");
  memcpy(cand, front, np * sizeof *cand);
  for (unsigned p = 0; p < np; p++) {
    if (!cand[p]) continue;
    for (unsigned q = 0; q < np && front[p]; q++)
      if (q != p && cand[q] && exp__dominates(obj + (size_t)q * nobj, obj + (size_t)p * nobj, nobj, sense))
        front[p] = 0;
    n += front[p] != 0;
  }
  free(cand);
  return n;
}

int exp_src(const double *X, const double *y, unsigned np, unsigned nf, double *src, double *r2) {
  for (unsigned f = 0; f < nf; f++) src[f] = NAN;
  *r2 = NAN;
  unsigned used[EXP_MAX_FACTORS], nu = 0;
  if (nf > EXP_MAX_FACTORS) return SIM_EINVAL;
  double sdx[EXP_MAX_FACTORS];
  for (unsigned f = 0; f < nf; f++) {
    double m = gsl_stats_mean(X + f, nf, np);
    sdx[f] = np > 1 ? gsl_stats_sd_m(X + f, nf, np, m) : 0;
    if (sdx[f] > 0 && isfinite(sdx[f])) used[nu++] = f;
  }
  for (unsigned p = 0; p < np; p++)
    if (!isfinite(y[p])) return 0; /* a point without a value: no fit */
  double my = gsl_stats_mean(y, 1, np), sdy = np > 1 ? gsl_stats_sd_m(y, 1, np, my) : 0;
  if (!(sdy > 0) || np < nu + 2 || nu == 0) return 0;
  gsl_matrix *A = gsl_matrix_alloc(np, nu + 1), *cov = gsl_matrix_alloc(nu + 1, nu + 1);
  gsl_vector *b = gsl_vector_alloc(np), *c = gsl_vector_alloc(nu + 1);
  gsl_multifit_linear_workspace *w = gsl_multifit_linear_alloc(np, nu + 1);
  int rc = 0;
  if (!A || !cov || !b || !c || !w)
    rc = SIM_ENOMEM;
  else {
    for (unsigned p = 0; p < np; p++) {
      gsl_matrix_set(A, p, 0, 1.0);
      for (unsigned j = 0; j < nu; j++) gsl_matrix_set(A, p, j + 1, X[(size_t)p * nf + used[j]]);
      gsl_vector_set(b, p, y[p]);
    }
    double chisq;
    if (gsl_multifit_linear(A, b, c, cov, &chisq, w) == 0) {
      /* src_f = b_f sd(x_f) / sd(y); R^2 = 1 - SS_res / SS_tot (Saltelli et al. 2008, sec. 1.2.5) */
      for (unsigned j = 0; j < nu; j++) src[used[j]] = gsl_vector_get(c, j + 1) * sdx[used[j]] / sdy;
      double sstot = sdy * sdy * (double)(np - 1);
      *r2 = 1.0 - chisq / sstot;
    }
  }
  gsl_multifit_linear_free(w);
  gsl_matrix_free(A);
  gsl_matrix_free(cov);
  gsl_vector_free(b);
  gsl_vector_free(c);
  return rc;
}
