/* exp.h - experiments over a scenario (docs/experiments.md): an experiment file names a scenario,
 * factors (scenario keys with levels or ranges), a design (full factorial, Latin hypercube, Sobol
 * sequence), constraints and objectives over the model's metrics. This module reads the file,
 * lays out the design's points and analyses the results: which constraints each point meets and
 * how confident that is, the Pareto front of the objectives among feasible points, and the
 * standardized regression coefficients of each objective on the factors.
 *
 * Layers: no model, no engine run, no HDF5 here; `spotlab experiment` (app/cmd_experiment.c) runs
 * the points through the runner and writes the file through analysis/report (rpt_experiment). Every
 * function is pure (designs take their seed), so the tests check them on known and random cases.
 * Errors are negative sim_err codes; bad input is reported as FILE:LINE through a sim_diag. */
#ifndef EXP_EXP_H
#define EXP_EXP_H

#include <stddef.h>
#include <stdint.h>

#include "sim/param.h"

#define EXP_MAX_FACTORS 40    /* GSL's Sobol generator goes to 40 dimensions */
#define EXP_MAX_POINTS 100000 /* points of one design */
#define EXP_MAX_LEVELS 1000

typedef enum exp_design { EXP_FACTORIAL, EXP_LHS, EXP_SOBOL } exp_design;
const char *exp_design_name(exp_design d);

/* One factor: a scenario key and its levels (any scenario value: numbers, strings, arrays), or a
 * range [min, max] (numbers; on a log scale when `log`; rounded when `integer`). */
typedef struct exp_factor {
  char *key;       /* "market.bidding.fee" */
  int line;        /* its line in the experiment file */
  int nlevels;     /* levels factor: > 0; range: 0 */
  char **levels;   /* [nlevels] each level as scenario text ("0.05", "\"fifo\"", "[0.1, 0.8, 0.1]") */
  double *level_x; /* [nlevels] the level as a number, NaN when it is not one */
  double min, max; /* range */
  int log;         /* range on a log scale (min > 0) */
  int integer;     /* range values rounded to whole numbers */
  int n;           /* range under a factorial design: n evenly spaced values from min to max */
} exp_factor;

typedef enum exp_op { EXP_LT, EXP_LE, EXP_GT, EXP_GE } exp_op;

typedef struct exp_constraint {
  char *text;   /* as written: "price_mean < 0.30" */
  char *metric; /* "price_mean" */
  exp_op op;
  double bound;
  int line;
} exp_constraint;

typedef struct exp_objective {
  char *text;   /* "maximize platform_revenue" */
  char *metric; /* "platform_revenue" */
  int sense;    /* +1 maximize, -1 minimize */
  int line;
} exp_objective;

/* A parsed experiment file. */
typedef struct exp_spec {
  char *path;     /* the experiment file */
  char *scenario; /* the scenario file, resolved against the experiment file's folder */
  int scenario_line;
  char **params; /* [nparams] overrides applied at every point ("run.end=\"2d\"") */
  int *params_line;
  int nparams;
  long long reps, seed; /* -1 when the file does not set them (the scenario's run.reps, run.seed) */
  exp_factor *factors;
  int nfactors;
  exp_design design;
  int points;           /* LHS and Sobol: points of the design; factorial: the product of levels */
  uint64_t design_seed; /* LHS */
  int design_line;
  exp_constraint *cons;
  int ncons;
  exp_objective *objs;
  int nobjs;
} exp_spec;

/* Reads the experiment file at `path`; every problem is reported to d as FILE:LINE: ... and the
 * whole read fails (SIM_ECONFIG), returning nothing. */
int exp_spec_load(const char *path, sim_diag *d, exp_spec **out);
void exp_spec_free(exp_spec *s);

/* ---- designs ------------------------------------------------------------------------------- */

/* A full factorial of nf factors with nlevels[f] levels each: idx[p * nf + f], the first factor
 * varying slowest. *np = the product of the levels (SIM_EINVAL beyond EXP_MAX_POINTS). */
int exp_factorial(const int *nlevels, unsigned nf, unsigned *np, int **idx);
/* A Latin hypercube of n points in [0,1)^nf (McKay, Beckman & Conover 1979, Technometrics 21:239):
 * for each factor, the n strata [k/n, (k+1)/n) in a random order, one point drawn uniformly in
 * each; u[p * nf + f]. The order and the draws come from a generator seeded with `seed` alone. */
int exp_lhs(unsigned n, unsigned nf, uint64_t seed, double *u);
/* The first n points of the Sobol sequence in nf <= 40 dimensions, GSL's gsl_qrng_sobol (Bratley &
 * Fox 1988, ACM TOMS 14:88, algorithm 659); u[p * nf + f]. */
int exp_sobol(unsigned n, unsigned nf, double *u);

/* The design's points as scenario text and numbers: labels[p * nf + f] (malloc'd strings; free
 * with exp_labels_free) and x[p * nf + f] (the value as a number; a level's index when the level
 * is not a number). */
int exp_points(const exp_spec *s, unsigned *np, char ***labels, double **x);
void exp_labels_free(char **labels, size_t n);
/* The value of factor f at unit coordinate u in [0,1): a level (floor(u * nlevels)) or a point of
 * the range, min + u (max - min), or min (max/min)^u on a log scale; text as in a scenario. */
void exp_factor_at(const exp_factor *f, double u, char *text, size_t len, double *x);

/* ---- analysis ------------------------------------------------------------------------------ */

/* The probability that the true mean meets `op bound`, given n replications with mean m and sample
 * standard deviation sd: with the t statistic t = (bound - m) / (sd / sqrt(n)), P = T_{n-1}(t) for
 * < and <=, 1 - T_{n-1}(t) for > and >= (T the Student t distribution function with n-1 degrees
 * of freedom). It is the posterior probability of the constraint under the standard noninformative
 * prior for a normal mean (Gelman et al., Bayesian Data Analysis, 3rd ed., sec. 3.2: the mean's
 * posterior is m + sd/sqrt(n) t_{n-1}), and 1 minus the p-value of the one-sided t test of "not
 * met" (Law, Simulation Modeling and Analysis, 5th ed., sec. 9.4). NaN for n < 2 or a NaN mean;
 * with sd = 0, 1 or 0 by the mean alone. */
double exp_confidence(double m, double sd, int n, exp_op op, double bound);
/* 1 when value v meets `op bound`. */
int exp_meets(double v, exp_op op, double bound);

/* The Pareto front: front[p] = 1 when point p is feasible, its objectives are all numbers, and no
 * other such point dominates it (at least as good in every objective and better in one; sense[j]
 * +1 maximize, -1 minimize). obj[p * nobj + j]. feasible may be NULL (all feasible). Returns the
 * size of the front. O(np^2 nobj). */
unsigned exp_pareto(const double *obj, unsigned np, unsigned nobj, const int *sense, const double *feasible,
                    double *front);

/* Standardized regression coefficients of y on the columns of X (np x nf, row-major), from an
 * ordinary least-squares fit with an intercept (GSL gsl_multifit_linear): src[f] = b_f sd(x_f) /
 * sd(y) (Saltelli et al., Global Sensitivity Analysis: The Primer, Wiley 2008, sec. 1.2.5). For
 * uncorrelated factors sum(src^2) = R^2, and |src| ranks the factors when R^2 is near 1; a low R^2
 * says the model is not linear in them. A constant factor gets NaN and is left out of the fit;
 * every src is NaN when y is constant or np < (factors varied) + 2. *r2 the fit's R^2. */
int exp_src(const double *X, const double *y, unsigned np, unsigned nf, double *src, double *r2);

#endif
