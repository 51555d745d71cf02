/* cmd_experiment.c - `spotlab experiment FILE.cfg`: runs a scenario at every point of a design over
 * its keys (analysis/experiment/exp.h), on common random numbers (the same base seed and
 * replications at every point, as in a sweep), and writes one experiment file (docs/experiments.md):
 * every point's metrics per replication with means and 95% intervals, which constraints each point
 * meets and how confident that is, the feasible points, the Pareto front of the objectives among
 * them and the sensitivity of each objective to each factor. It prints the feasible points, the
 * front and the sensitivities. Each point's own results file is kept (FILE.points/point_NNNN.h5,
 * written as the point finishes), so `--resume` after an interruption runs only the points that
 * have none.
 *
 * Everything is checked before the first point runs: the experiment file (FILE:LINE), each
 * factor's values against the scenario, every point, and the metric names of the constraints and
 * objectives against the model's metric list. The points run in the point runner it shares with
 * `spotlab sweep` (app/points.h): --resume, the spread under mpirun, progress and signals. */
#include "analysis/experiment/exp.h"
#include "analysis/report/rpt.h"
#include "app/app.h"
#include "app/cli.h"
#include "app/points.h"
#include "app/progress.h"

#include <libgen.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char *xp__join(const char *a, const char *b) {
  size_t n = strlen(a) + strlen(b) + 2;
  char *r = malloc(n);
  if (!r) SIM_FATAL("out of memory");
  snprintf(r, n, "%s=%s", a, b);
  return r;
}

static const app_option xp__opts[] = {
    {"--out", APP_O_STRING, "DIR|FILE.h5", 0, 0, 0,
     "FILE.h5: the experiment file, points in FILE.points/ (default results/NAME-experiment.h5);\n"
     "DIR: DIR/experiment.h5, points in DIR/points/"},
    APP_OPT_REPS("replications per point (overrides the file's reps and run.reps)"),
    APP_OPT_SEED("base seed, the same at every point (overrides the file's seed and run.seed)"),
    APP_OPT_SPREAD("under mpirun, as spotlab run's: reps, model or auto (default)"),
    {"--resume", APP_O_FLAG, NULL, 0, 0, 0,
     "keep the points whose results file is already there (same scenario, values, seed and\n"
     "replications); run the others"},
    APP_OPT_QUIET("no progress lines"),
    {NULL},
};
static const app_cli xp__cli = {
    "experiment",
    "FILE.cfg",
    1,
    1,
    NULL,
    "Runs the scenario that the experiment file names at every point of its design (full\n"
    "factorial, Latin hypercube or Sobol sequence over scenario keys), every point on the same\n"
    "seeds (common random numbers), and writes one experiment file: per point and replication\n"
    "every metric, means and 95% intervals, each constraint met or not and the probability that\n"
    "it is met, the feasible points, the Pareto front of the objectives among them and the\n"
    "standardized regression coefficients of each objective on the factors. Prints the feasible\n"
    "points, the front and the sensitivities. Format and methods: docs/experiments.md.\n",
    "Every point is checked before the first one runs; bad input is reported as FILE:LINE.\n"
    "`spotlab report FILE.h5` draws the Pareto front, the sensitivities and the feasible region.\n"
    "Under mpirun, whole points go to the ranks (point p to rank p mod P) when that takes fewer\n"
    "rounds than spreading each point's replications over them (--spread), as in a sweep; the\n"
    "choice is printed. Same files either way. SIGINT or SIGTERM: the point under way is dropped,\n"
    "the finished points' files are kept for --resume, no experiment file is written.\n"
    "Exit status: 0 done, 1 a check failed or a file could not be written, 2 bad usage or input,\n"
    "128 + the signal when one stopped it.\n",
    xp__opts};

/* ---- the printed tables ------------------------------------------------------------------------ */

static void xp__ci(char *buf, size_t len, double m, double lo, double hi) {
  if (isfinite(lo) && isfinite(hi))
    snprintf(buf, len, "%.4g [%.4g, %.4g]", m, lo, hi);
  else
    snprintf(buf, len, "%.4g", m);
}

/* One line per listed point: its factor values, then each constraint's metric (mean [CI], met,
 * probability) and each objective's mean [CI]. */
static void xp__points(FILE *o, const rpt_experiment *e, const unsigned *pts, unsigned n) {
  unsigned nf = e->nfactors, nm = e->nmetrics;
  fprintf(o, "%6s", "point");
  for (unsigned f = 0; f < nf; f++)
    fprintf(o, "  %-*s", (int)(strlen(e->factors[f]) > 14 ? strlen(e->factors[f]) : 14), e->factors[f]);
  for (unsigned c = 0; c < e->ncons; c++) fprintf(o, "  %-40s", e->cons[c]);
  for (unsigned j = 0; j < e->nobjs; j++) fprintf(o, "  %-30s", e->objs[j]);
  fputc('\n', o);
  for (unsigned i = 0; i < n; i++) {
    unsigned p = pts[i];
    fprintf(o, "%6u", p + 1);
    for (unsigned f = 0; f < nf; f++)
      fprintf(o, "  %-*s", (int)(strlen(e->factors[f]) > 14 ? strlen(e->factors[f]) : 14),
              e->labels[(size_t)p * nf + f]);
    for (unsigned c = 0; c < e->ncons; c++) {
      unsigned k = (unsigned)e->cons_metric[c];
      char ci[96], cell[160];
      xp__ci(ci, sizeof ci, e->mean[(size_t)p * nm + k], e->lo[(size_t)p * nm + k], e->hi[(size_t)p * nm + k]);
      double pc = e->confidence[(size_t)p * e->ncons + c];
      char pr[32];
      if (isfinite(pc))
        snprintf(pr, sizeof pr, "P=%.3f", pc);
      else
        snprintf(pr, sizeof pr, "P=-");
      snprintf(cell, sizeof cell, "%s %s %s", ci, e->met[(size_t)p * e->ncons + c] == 1 ? "met" : "NOT", pr);
      fprintf(o, "  %-40s", cell);
    }
    for (unsigned j = 0; j < e->nobjs; j++) {
      unsigned k = (unsigned)e->obj_metric[j];
      char ci[96];
      xp__ci(ci, sizeof ci, e->mean[(size_t)p * nm + k], e->lo[(size_t)p * nm + k], e->hi[(size_t)p * nm + k]);
      fprintf(o, "  %-30s", ci);
    }
    fputc('\n', o);
  }
}

static void xp__print(FILE *o, const rpt_experiment *e, const char *exp_path) {
  unsigned np = e->npoints, nf = e->nfactors;
  unsigned *pts = malloc((np ? np : 1) * sizeof *pts), n = 0;
  if (!pts) SIM_FATAL("out of memory");
  fprintf(o, "\nexperiment %s: %u points (%s design) x %d replication%s, base seed %llu (the same at every point)\n",
          exp_path, np, e->design, e->reps, e->reps == 1 ? "" : "s", (unsigned long long)e->seed);
  if (e->ncons) {
    fprintf(o, "constraints:");
    for (unsigned c = 0; c < e->ncons; c++) fprintf(o, "%s %s", c ? "," : "", e->cons[c]);
    fprintf(o, " (met: on the mean; P: probability that the true mean meets it, one-sided t)\n");
  }
  for (unsigned p = 0; p < np; p++)
    if (e->feasible[p] == 1) pts[n++] = p;
  fprintf(o, "\nfeasible points (every constraint met): %u of %u\n", n, np);
  if (n) {
    xp__points(o, e, pts, n);
  } else if (e->ncons) {
    /* Nothing feasible: per constraint, how many points meet it and the point with the best mean. */
    for (unsigned c = 0; c < e->ncons; c++) {
      unsigned k = (unsigned)e->cons_metric[c], met = 0, best = 0;
      for (unsigned p = 0; p < np; p++) {
        met += e->met[(size_t)p * e->ncons + c] == 1;
        double v = e->mean[(size_t)p * e->nmetrics + k], b = e->mean[(size_t)best * e->nmetrics + k];
        int below = strchr(e->cons[c], '<') != NULL;
        if (isfinite(v) && (!isfinite(b) || (below ? v < b : v > b))) best = p;
      }
      fprintf(o, "  %s: met at %u of %u points; best mean %.4g at point %u\n", e->cons[c], met, np,
              e->mean[(size_t)best * e->nmetrics + k], best + 1);
    }
    fprintf(o, "the points with the best mean of each constraint:\n");
    unsigned m = 0;
    for (unsigned c = 0; c < e->ncons; c++) {
      unsigned k = (unsigned)e->cons_metric[c], best = 0;
      int below = strchr(e->cons[c], '<') != NULL;
      for (unsigned p = 0; p < np; p++) {
        double v = e->mean[(size_t)p * e->nmetrics + k], b = e->mean[(size_t)best * e->nmetrics + k];
        if (isfinite(v) && (!isfinite(b) || (below ? v < b : v > b))) best = p;
      }
      unsigned i;
      for (i = 0; i < m && pts[i] != best; i++) {}
      if (i == m) pts[m++] = best;
    }
    xp__points(o, e, pts, m);
  }
  if (e->nobjs) {
    n = 0;
    for (unsigned p = 0; p < np; p++)
      if (e->pareto[p] == 1) pts[n++] = p;
    fprintf(o, "\nPareto front of");
    for (unsigned j = 0; j < e->nobjs; j++) fprintf(o, "%s %s", j ? "," : "", e->objs[j]);
    fprintf(o, " among the feasible points (non-dominated on means): %u point%s\n", n, n == 1 ? "" : "s");
    if (n) xp__points(o, e, pts, n);
    fprintf(o, "\nsensitivity: %s\n", e->sens_method);
    fprintf(o, "%-32s", "objective");
    for (unsigned f = 0; f < nf; f++)
      fprintf(o, "  %*s", (int)(strlen(e->factors[f]) > 10 ? strlen(e->factors[f]) : 10), e->factors[f]);
    fprintf(o, "  %8s\n", "R^2");
    for (unsigned j = 0; j < e->nobjs; j++) {
      fprintf(o, "%-32s", e->objs[j]);
      for (unsigned f = 0; f < nf; f++) {
        double v = e->sensitivity[(size_t)j * nf + f];
        int w = (int)(strlen(e->factors[f]) > 10 ? strlen(e->factors[f]) : 10);
        if (isfinite(v))
          fprintf(o, "  %*.3f", w, v);
        else
          fprintf(o, "  %*s", w, "-");
      }
      if (isfinite(e->r2[j]))
        fprintf(o, "  %8.3f\n", e->r2[j]);
      else
        fprintf(o, "  %8s\n", "-");
    }
  }
  free(pts);
}

/* ---- the analysis ------------------------------------------------------------------------------ */

/* Fills means, intervals, constraints, feasibility, the front and the sensitivities from values. */
static void xp__analyse(rpt_experiment *e, const exp_spec *s) {
  unsigned np = e->npoints, nm = e->nmetrics, nf = e->nfactors, nc = e->ncons, no = e->nobjs;
  for (unsigned p = 0; p < np; p++)
    for (unsigned k = 0; k < nm; k++) {
      rpt_ci ci;
      rpt_ci_t(e->values + (size_t)p * e->reps * nm + k, (size_t)e->reps, nm, &ci);
      e->mean[(size_t)p * nm + k] = ci.mean;
      e->lo[(size_t)p * nm + k] = ci.lo;
      e->hi[(size_t)p * nm + k] = ci.hi;
      /* the constraints' confidence needs the sd: kept per (point, constraint) below */
    }
  for (unsigned p = 0; p < np; p++) {
    int all = 1;
    for (unsigned c = 0; c < nc; c++) {
      unsigned k = (unsigned)e->cons_metric[c];
      rpt_ci ci;
      rpt_ci_t(e->values + (size_t)p * e->reps * nm + k, (size_t)e->reps, nm, &ci);
      int met = exp_meets(ci.mean, s->cons[c].op, s->cons[c].bound);
      e->met[(size_t)p * nc + c] = met;
      e->confidence[(size_t)p * nc + c] = exp_confidence(ci.mean, ci.sd, ci.n, s->cons[c].op, s->cons[c].bound);
      all &= met;
    }
    e->feasible[p] = all;
  }
  double *obj = malloc(((size_t)np * no + 1) * sizeof *obj), *y = malloc((np + 1) * sizeof *y);
  int sense[64];
  if (!obj || !y) SIM_FATAL("out of memory");
  for (unsigned j = 0; j < no && j < 64; j++) sense[j] = s->objs[j].sense;
  for (unsigned p = 0; p < np; p++)
    for (unsigned j = 0; j < no; j++) obj[(size_t)p * no + j] = e->mean[(size_t)p * nm + (unsigned)e->obj_metric[j]];
  if (no)
    exp_pareto(obj, np, no, sense, e->feasible, e->pareto);
  else
    for (unsigned p = 0; p < np; p++) e->pareto[p] = 0;
  /* Sensitivity over every point of the design (feasible or not): the objective's mean at each
   * point against the factors' values. */
  for (unsigned j = 0; j < no; j++) {
    for (unsigned p = 0; p < np; p++) y[p] = obj[(size_t)p * no + j];
    exp_src(e->x, y, np, nf, e->sensitivity + (size_t)j * nf, &e->r2[j]);
  }
  snprintf(e->sens_method, sizeof e->sens_method,
           "standardized regression coefficients of each objective's mean on the factors (OLS with intercept, "
           "GSL multifit; Saltelli et al. 2008, sec. 1.2.5)");
  free(obj);
  free(y);
}

/* ---- checks before anything runs ------------------------------------------------------------- */

/* Loads the scenario with overrides, silently; 0, or the first message in why. */
static int xp__try(const char *scenario, const char *const *ovr, int n, char *why, size_t len) {
  sim_diag q;
  sim_diag_init(&q, NULL);
  app_loaded l;
  if (app_load(scenario, ovr, n, &q, &l)) {
    snprintf(why, len, "%s", q.first[0] ? q.first : "the scenario rejects it");
    return -1;
  }
  app_unload(&l);
  return 0;
}

/* Names of metrics that share the quantity (the part before the first dot) of `name`: a hint. */
static void xp__similar(const app_loaded *l, const char *name, char *buf, size_t len) {
  size_t q = strcspn(name, ".");
  size_t o = 0;
  int n = 0;
  buf[0] = 0;
  for (unsigned k = 0; k < l->nmetrics && n < 6; k++)
    if (!strncmp(l->metrics[k].name, name, q) && (l->metrics[k].name[q] == '.' || !l->metrics[k].name[q])) {
      o += (size_t)snprintf(buf + o, o < len ? len - o : 0, "%s%s", n ? ", " : "", l->metrics[k].name);
      n++;
    }
}

static int xp__metric(const app_loaded *l, const char *name) {
  for (unsigned k = 0; k < l->nmetrics; k++)
    if (!strcmp(l->metrics[k].name, name)) return (int)k;
  return -1;
}

/* A constraint's or objective's metric that the built model does not have: FILE:LINE, with the
 * metrics of the same quantity as a hint. */
static void xp__check_metric(const app_loaded *l, sim_diag *d, const char *file, int line, const char *what,
                             const char *text, const char *metric) {
  if (xp__metric(l, metric) >= 0) return;
  char sim[1024];
  xp__similar(l, metric, sim, sizeof sim);
  sim_diag_report(d, file, line,
                  "%s '%s': unknown metric '%s' (%s%s; `spotlab run SCENARIO --all` lists the %u metrics)", what, text,
                  metric, sim[0] ? "metrics of that quantity: " : "no metric of that quantity", sim, l->nmetrics);
}

/* An experiment's points: the overrides at every point (the file's params, reps and seed) and each
 * point's factor values, for the point runner. */
typedef struct xp__plan {
  const char **fixed; /* [nfix + 1] */
  int nfix;
  char repsbuf[64], seedbuf[64];
  char **ptext; /* [np * nf] "key=value" of every point and factor */
  char **text;  /* [np] a point's values in one line, for messages */
  unsigned np, nf;
  char **labels; /* [np * nf] the design's values, as scenario text */
  double *x;     /* [np][nf] the same as numbers */
} xp__plan;

static void xp__plan_make(xp__plan *pl, const exp_spec *s, long long reps_opt, long long seed_opt) {
  memset(pl, 0, sizeof *pl);
  pl->nf = (unsigned)s->nfactors;
  if (exp_points(s, &pl->np, &pl->labels, &pl->x)) SIM_FATAL("out of memory");
  unsigned np = pl->np, nf = pl->nf;
  pl->fixed = calloc((size_t)(s->nparams + 2) + 1, sizeof *pl->fixed);
  pl->ptext = calloc((size_t)np * nf + 1, sizeof *pl->ptext);
  pl->text = calloc((size_t)np + 1, sizeof *pl->text);
  if (!pl->fixed || !pl->ptext || !pl->text) SIM_FATAL("out of memory");
  for (int i = 0; i < s->nparams; i++) pl->fixed[pl->nfix++] = s->params[i];
  long long reps = reps_opt >= 0 ? reps_opt : s->reps, seed = seed_opt >= 0 ? seed_opt : s->seed;
  if (reps >= 0) {
    snprintf(pl->repsbuf, sizeof pl->repsbuf, "run.reps=%lld", reps);
    pl->fixed[pl->nfix++] = pl->repsbuf;
  }
  if (seed >= 0) {
    snprintf(pl->seedbuf, sizeof pl->seedbuf, "run.seed=%lld", seed);
    pl->fixed[pl->nfix++] = pl->seedbuf;
  }
  for (unsigned p = 0; p < np; p++) {
    size_t len = 1;
    for (unsigned f = 0; f < nf; f++) {
      pl->ptext[(size_t)p * nf + f] = xp__join(s->factors[f].key, pl->labels[(size_t)p * nf + f]);
      len += strlen(pl->ptext[(size_t)p * nf + f]) + 1;
    }
    pl->text[p] = calloc(len, 1);
    if (!pl->text[p]) SIM_FATAL("out of memory");
    for (unsigned f = 0; f < nf; f++) {
      if (f) strcat(pl->text[p], " ");
      strcat(pl->text[p], pl->ptext[(size_t)p * nf + f]);
    }
  }
}

static void xp__plan_free(xp__plan *pl) {
  for (size_t i = 0; i < (size_t)pl->np * pl->nf; i++) free(pl->ptext[i]);
  for (unsigned p = 0; pl->text && p < pl->np; p++) free(pl->text[p]);
  free(pl->ptext);
  free(pl->text);
  free(pl->fixed);
  exp_labels_free(pl->labels, (size_t)pl->np * pl->nf);
  free(pl->x);
}

/* Checks, each at its line of the experiment file: the fixed overrides, each factor alone at each
 * of its values, then every point; the metrics of the constraints and objectives. Point 1 sets
 * the runner's replications, metrics and spread. Returns the number of errors reported to d. */
static int xp__check(const exp_spec *s, const char *file, const xp__plan *pl, app_points *pt, sim_diag *d) {
  unsigned nf = pl->nf;
  int nfix = pl->nfix, before = d->nerrors;
  const char **ovr = calloc((size_t)nfix + nf + 1, sizeof *ovr);
  if (!ovr) SIM_FATAL("out of memory");
  memcpy(ovr, pl->fixed, (size_t)nfix * sizeof *ovr);
  char why[SIM_DIAG_MSG];
  if (xp__try(s->scenario, ovr, nfix, why, sizeof why)) {
    sim_diag_report(d, file, s->nparams ? s->params_line[0] : s->scenario_line, "the scenario with params: %s", why);
  } else {
    for (unsigned f = 0; f < nf; f++) {
      const exp_factor *fa = &s->factors[f];
      int nval = fa->nlevels > 0 ? fa->nlevels : 2;
      for (int k = 0; k < nval; k++) {
        char text[4096];
        double dummy;
        if (fa->nlevels > 0)
          snprintf(text, sizeof text, "%s", fa->levels[k]);
        else
          exp_factor_at(fa, k ? 0.999999999 : 0.0, text, sizeof text, &dummy);
        char *one = xp__join(fa->key, text);
        ovr[nfix] = one;
        int bad = xp__try(s->scenario, ovr, nfix + 1, why, sizeof why);
        free(one);
        if (bad) {
          sim_diag_report(d, file, fa->line, "factor '%s' = %s: %s", fa->key, text, why);
          break;
        }
      }
    }
  }
  for (unsigned p = 0; d->nerrors == before && p < pl->np; p++) {
    for (unsigned f = 0; f < nf; f++) ovr[nfix + (int)f] = pl->ptext[(size_t)p * nf + f];
    sim_diag q;
    sim_diag_init(&q, NULL);
    app_loaded l;
    if (app_load(s->scenario, ovr, nfix + (int)nf, &q, &l)) {
      sim_diag_report(d, file, s->design_line ? s->design_line : s->factors[0].line, "point %u (%s%s): %s", p + 1,
                      pl->ptext[(size_t)p * nf], nf > 1 ? ", ..." : "", q.first);
      break;
    }
    if (p == 0) {
      app_points_first(pt, &l);
      for (int c = 0; c < s->ncons; c++)
        xp__check_metric(&l, d, file, s->cons[c].line, "constraint", s->cons[c].text, s->cons[c].metric);
      for (int j = 0; j < s->nobjs; j++)
        xp__check_metric(&l, d, file, s->objs[j].line, "objective", s->objs[j].text, s->objs[j].metric);
    } else if (!app_points_same(pt, &l)) {
      sim_diag_report(d, file, s->factors[0].line,
                      "point %u reports other metrics than point 1 (%u vs %u): a factor must not change which "
                      "metrics the model has",
                      p + 1, l.nmetrics, pt->nm);
    }
    app_unload(&l);
  }
  free(ovr);
  return d->nerrors - before;
}

/* The experiment file from the points' values (rank 0): analysed, written, printed. 0, or 1 when
 * it could not be written. e borrows from s, pl and pt, which free what they own. */
static int xp__write(const exp_spec *s, const char *file, const xp__plan *pl, app_points *pt, const char *expfile,
                     int quiet) {
  unsigned np = pl->np, nf = pl->nf, nm = pt->nm;
  rpt_experiment e;
  memset(&e, 0, sizeof e);
  snprintf(e.model, sizeof e.model, "%s", pt->model);
  snprintf(e.design, sizeof e.design, "%s", exp_design_name(s->design));
  e.seed = pt->seed;
  e.reps = pt->reps;
  e.npoints = np;
  e.nfactors = nf;
  e.nmetrics = nm;
  e.ncons = (unsigned)s->ncons;
  e.nobjs = (unsigned)s->nobjs;
  e.factors = calloc(nf + 1, sizeof *e.factors);
  e.labels = pl->labels;
  e.x = pl->x;
  e.names = pt->names;
  e.units = pt->units;
  e.values = pt->values;
  e.mean = calloc((size_t)np * nm + 1, sizeof *e.mean);
  e.lo = calloc((size_t)np * nm + 1, sizeof *e.lo);
  e.hi = calloc((size_t)np * nm + 1, sizeof *e.hi);
  e.cons = calloc(e.ncons + 1, sizeof *e.cons);
  e.cons_metric = calloc(e.ncons + 1, sizeof *e.cons_metric);
  e.met = calloc((size_t)np * e.ncons + 1, sizeof *e.met);
  e.confidence = calloc((size_t)np * e.ncons + 1, sizeof *e.confidence);
  e.feasible = calloc(np + 1, sizeof *e.feasible);
  e.objs = calloc(e.nobjs + 1, sizeof *e.objs);
  e.obj_metric = calloc(e.nobjs + 1, sizeof *e.obj_metric);
  e.pareto = calloc(np + 1, sizeof *e.pareto);
  e.sensitivity = calloc((size_t)e.nobjs * nf + 1, sizeof *e.sensitivity);
  e.r2 = calloc(e.nobjs + 1, sizeof *e.r2);
  e.point_files = calloc(np + 1, sizeof *e.point_files);
  char *pbase = strdup(pt->pdir);
  if (!e.factors || !e.mean || !e.lo || !e.hi || !e.cons || !e.cons_metric || !e.met || !e.confidence || !e.feasible ||
      !e.objs || !e.obj_metric || !e.pareto || !e.sensitivity || !e.r2 || !e.point_files || !pbase)
    SIM_FATAL("out of memory");
  for (unsigned f = 0; f < nf; f++) e.factors[f] = s->factors[f].key;
  for (unsigned c = 0; c < e.ncons; c++) {
    e.cons[c] = s->cons[c].text;
    for (unsigned k = 0; k < nm; k++)
      if (!strcmp(pt->names[k], s->cons[c].metric)) e.cons_metric[c] = (int)k;
  }
  for (unsigned j = 0; j < e.nobjs; j++) {
    e.objs[j] = s->objs[j].text;
    for (unsigned k = 0; k < nm; k++)
      if (!strcmp(pt->names[k], s->objs[j].metric)) e.obj_metric[j] = (int)k;
  }
  const char *rel = basename(pbase); /* point files relative to the experiment file's folder */
  for (unsigned p = 0; p < np; p++) {
    char pf[4400];
    snprintf(pf, sizeof pf, "%s/point_%04u.h5", rel, p);
    e.point_files[p] = strdup(pf);
    if (!e.point_files[p]) SIM_FATAL("out of memory");
  }
  int rc = 0;
  xp__analyse(&e, s);
  char err[RPT_ERRLEN];
  if (rpt_experiment_write(expfile, &e, file, s->scenario, err, sizeof err)) {
    fprintf(stderr, "spotlab experiment: %s\n", err);
    rc = 1;
  } else {
    xp__print(stdout, &e, file);
    if (!quiet)
      printf("\nresults: %s (points in %s/; %d run, %d kept from an earlier run)\nnext: spotlab report %s\n", expfile,
             pt->pdir, pt->ran, pt->kept, expfile);
  }
  free(e.factors);
  free(e.cons);
  free(e.objs);
  e.factors = e.cons = e.objs = e.labels = e.names = e.units = NULL; /* borrowed: freed by their owners */
  e.x = e.values = NULL;
  rpt_experiment_free(&e);
  free(pbase);
  return rc;
}

static int cmd_experiment_main(int argc, char **argv) {
  app_args args;
  int prc = app_cli_parse(&xp__cli, argc, argv, &args);
  if (prc) {
    app_args_free(&args);
    return prc == 1 ? 0 : 2;
  }
  const char *file = args.operand[0], *out = app_args_str(&args, "--out", NULL);
  long long reps_opt = app_args_count(&args, "--reps") ? (long long)app_args_u64(&args, "--reps", 0) : -1;
  long long seed_opt = app_args_count(&args, "--seed") ? (long long)app_args_u64(&args, "--seed", 0) : -1;
  int quiet = app_args_flag(&args, "--quiet"), resume = app_args_flag(&args, "--resume");
  int spread = app_spread_parse(app_spread_choices[app_args_choice(&args, "--spread", 0)]);
  app_args_free(&args); /* the values point into argv, which outlives this */
  app_mpi_init(&argc, &argv);
  int rank = app_mpi_rank(), rc = 0;
  sim_diag d;
  sim_diag_init(&d, rank == 0 ? stderr : NULL);
  exp_spec *s = NULL;
  if (exp_spec_load(file, &d, &s)) {
    if (rank == 0)
      fprintf(stderr, "spotlab experiment: %d error%s in %s; nothing was run\n", d.nerrors, d.nerrors == 1 ? "" : "s",
              file);
    return 2;
  }
  xp__plan pl;
  xp__plan_make(&pl, s, reps_opt, seed_opt);
  char expfile[4096], pdir[4200];
  app_points pt;
  memset(&pt, 0, sizeof pt);
  pt.cmd = "experiment";
  pt.scenario = s->scenario;
  pt.fixed = pl.fixed;
  pt.nfixed = pl.nfix;
  pt.point_ovr = pl.ptext;
  pt.nkeys = (int)pl.nf;
  pt.text = pl.text;
  pt.np = (int)pl.np;
  pt.pdir = pdir;
  pt.spread = spread;
  pt.resume = resume;
  pt.quiet = quiet;
  int nerr = xp__check(s, file, &pl, &pt, &d);
  if (nerr) {
    if (rank == 0)
      fprintf(stderr, "spotlab experiment: %d error%s in %s; nothing was run\n", nerr, nerr == 1 ? "" : "s", file);
    rc = 2;
  }
  const char *ins[2] = {file, s->scenario};
  if (!rc) rc = app_points_where("experiment", ins, 2, out, 1, expfile, sizeof expfile, pdir, sizeof pdir);
  /* Run the points (or keep the finished ones), each written as it finishes. */
  if (!rc) rc = app_points_run(&pt);
  if (pt.sig && rank == 0) /* the analysis needs every point: no experiment file of some */
    fprintf(stderr,
            "spotlab experiment: stopped by signal %d after %d of %d points; no experiment file was written, the "
            "finished points' files are kept in %s/ (run again with --resume to keep them)\n",
            pt.sig, pt.ndone, pt.np, pdir);
  if (rank == 0 && !rc && !pt.sig) rc = xp__write(s, file, &pl, &pt, expfile, quiet);
  int sig = pt.sig, failed = pt.failed;
  app_points_free(&pt);
  xp__plan_free(&pl);
  exp_spec_free(s);
  if (rc) return rc;
  if (sig) return app_stop_status(sig);
  return failed ? 1 : 0;
}

static const app_command cmd_experiment = {
    "experiment", "run a design of points over scenario keys; constraints, Pareto front, sensitivities",
    cmd_experiment_main, &xp__cli};
APP_COMMAND(cmd_experiment)
