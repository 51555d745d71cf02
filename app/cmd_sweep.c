/* cmd_sweep.c - `spotlab sweep SCENARIO --param KEY=V1,V2,... [--param KEY2=...]`: runs a scenario
 * at every value of one key, or at every point of the full grid of several keys (the first key
 * slowest, as nested loops in the order given), and writes one sweep file (layout:
 * docs/reports.md) that `spotlab report` draws as each metric against the key, with its
 * confidence band. Every point's own results file is kept too
 * (FILE.points/point_NNNN.h5) for `spotlab report` and `spotlab compare`.
 *
 * The points run in the point runner (app/points.h), as an experiment's do: --resume, the spread
 * under mpirun (whole points over the ranks, or each point's replications over them, whichever
 * takes fewer rounds), progress and signals are its. Every point uses the same base seed, so
 * points differ only by the key (common random numbers across the sweep). */
#include "analysis/report/rpt.h"
#include "app/app.h"
#include "app/cli.h"
#include "app/points.h"
#include "app/progress.h"

#include <errno.h>
#include <libgen.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SWEEP_MAX_POINTS 1000
#define SWEEP_MAX_KEYS 8

/* One swept key and its values, as given by one --param KEY=V1,V2,... */
typedef struct sweep__axis {
  char key[128];
  char *vals[SWEEP_MAX_POINTS];
  int n;
} sweep__axis;

/* Splits "V1,V2,..." at commas outside brackets and quotes (so "[0.5,0.5]" stays one value). */
static int sweep__split(const char *list, char **vals, int cap) {
  int n = 0, depth = 0, quote = 0;
  const char *start = list;
  for (const char *p = list;; p++) {
    if (*p == '"')
      quote = !quote;
    else if (!quote && (*p == '[' || *p == '('))
      depth++;
    else if (!quote && (*p == ']' || *p == ')'))
      depth--;
    if (*p == 0 || (*p == ',' && !depth && !quote)) {
      if (n == cap) return -1;
      vals[n] = strndup(start, (size_t)(p - start));
      if (!vals[n] || !vals[n][0]) return -2;
      n++;
      if (!*p) break;
      start = p + 1;
    }
  }
  return n;
}

/* A malloc'd "%s=%s" or "%s/point_%04d.h5" (asprintf is not in C11/POSIX). */
static char *sweep__join(const char *a, const char *sep, const char *b, int num) {
  char tmp[8192];
  if (b)
    snprintf(tmp, sizeof tmp, "%s%s%s", a, sep, b);
  else
    snprintf(tmp, sizeof tmp, "%s%s%04d.h5", a, sep, num);
  char *r = strdup(tmp);
  if (!r) SIM_FATAL("out of memory");
  return r;
}

static double sweep__number(const char *s) {
  char *end;
  errno = 0;
  double v = strtod(s, &end);
  return errno || end == s || *end ? NAN : v;
}

static const app_option sweep__opts[] = {
    {"--param", APP_O_STRING, "KEY=V1,V2", 0, 0, APP_REQUIRED | APP_REPEAT,
     "a key and its values (commas inside [..] or \"..\" do not split); a list's item\n"
     "by name or index, as in run: market.regions.us.weekend_factor=0.6,0.8. Several\n"
     "--param: their full grid, the first key slowest (at most " SIM_STR(SWEEP_MAX_KEYS) " keys, " SIM_STR(
         SWEEP_MAX_POINTS) " points)"},
    APP_OPT_REPS("replications per point (overrides run.reps)"),
    APP_OPT_SEED("base seed, the same at every point (overrides run.seed)"),
    {"--out", APP_O_STRING, "FILE.h5", 0, 0, 0, "sweep file (default: results/SCENARIO-sweep.h5)"},
    APP_OPT_SPREAD("under mpirun, as spotlab run's: reps, model or auto (default)"),
    {"--resume", APP_O_FLAG, NULL, 0, 0, 0,
     "keep the points whose results file is already in FILE.points/ (the same scenario,\n"
     "value, seed and replications, whole); run the others"},
    APP_OPT_QUIET("no progress lines"),
    {NULL},
};
static const app_cli sweep__cli = {
    "sweep",
    "SCENARIO",
    1,
    1,
    NULL,
    "Runs the scenario once per value of KEY (a scenario key, group.key), or once per point of\n"
    "the grid of several keys (--param A=1,2 --param B=x,y: A=1 B=x, A=1 B=y, A=2 B=x, A=2 B=y),\n"
    "and writes one sweep file: per point and replication every metric, and their means and\n"
    "95% confidence intervals. Each point's full results file is kept as\n"
    "FILE.points/point_NNNN.h5. `spotlab report FILE.h5` draws every metric against KEY with\n"
    "its confidence band (a grid: against each key, a line or panel per value of the others).\n",
    "Every point is checked before the first one runs. Progress: one line per point on stderr.\n"
    "Under mpirun, whole points go to the ranks (point p to rank p mod P) when that takes fewer\n"
    "rounds than spreading each point's replications over them (--spread; one replication over\n"
    "all ranks when the model is big and reps few); the choice is printed. Same files either way.\n"
    "Exit status: 0 done, 1 a check failed or a file could not be written, 2 bad usage or scenario.\n",
    sweep__opts};

static int cmd_sweep__go(const char *scenario, sweep__axis *ax, int nkeys, const char *out, const char *const *fixed,
                         int nfixed, int quiet, int spread, int resume, int argc, char **argv);

/* 1 when values a and b of one key would make the same run: the same text, or the same number. */
static int sweep__same_value(const char *a, const char *b) {
  if (!strcmp(a, b)) return 1;
  double x = sweep__number(a), y = sweep__number(b);
  return isfinite(x) && isfinite(y) && x == y;
}

/* One --param KEY=V1,V2,... into ax (its values malloc'd); 0, or 2 after the message. Keys that
 * cannot be swept, an empty or repeated value, a key given twice (against ax[0..k)) are refused. */
static int sweep__axis_parse(const char *param, sweep__axis *ax, int k) {
  const char *eq = strchr(param, '=');
  if (!eq || eq == param || !eq[1]) {
    fprintf(stderr, "spotlab sweep: --param wants KEY=V1,V2,... (got '%s')\n", param);
    return 2;
  }
  if ((size_t)(eq - param) >= sizeof ax[k].key) {
    fprintf(stderr, "spotlab sweep: --param '%.40s...': the key is longer than %zu characters\n", param,
            sizeof ax[k].key - 1);
    return 2;
  }
  sweep__axis *a = &ax[k];
  snprintf(a->key, sizeof a->key, "%.*s", (int)(eq - param), param);
  if (!strcmp(a->key, "run.reps") || !strcmp(a->key, "run.seed")) {
    fprintf(stderr, "spotlab sweep: %s cannot be swept (every point shares the replications and their seeds)\n",
            a->key);
    return 2;
  }
  for (int j = 0; j < k; j++)
    if (!strcmp(ax[j].key, a->key)) {
      fprintf(stderr, "spotlab sweep: --param %s is given twice (give every value of a key in one --param)\n", a->key);
      return 2;
    }
  a->n = sweep__split(eq + 1, a->vals, SWEEP_MAX_POINTS);
  if (a->n <= 0) {
    fprintf(stderr, "spotlab sweep: --param %s: %s\n", a->key,
            a->n == -1 ? "more than " SIM_STR(SWEEP_MAX_POINTS) " values"
                       : "an empty value (two commas in a row, or a trailing comma?)");
    for (int i = 0; i < SWEEP_MAX_POINTS && a->vals[i]; i++) free(a->vals[i]);
    a->n = 0;
    return 2;
  }
  for (int i = 0; i < a->n; i++)
    for (int j = 0; j < i; j++)
      if (sweep__same_value(a->vals[i], a->vals[j])) {
        fprintf(stderr,
                "spotlab sweep: --param %s: the value '%s' is given twice (values %d and %d would be the same "
                "run)\n",
                a->key, a->vals[i], j + 1, i + 1);
        return 2;
      }
  return 0;
}

static int cmd_sweep_main(int argc, char **argv) {
  app_args a;
  int prc = app_cli_parse(&sweep__cli, argc, argv, &a);
  if (prc) {
    app_args_free(&a);
    return prc == 1 ? 0 : 2;
  }
  int nkeys = app_args_count(&a, "--param");
  if (nkeys > SWEEP_MAX_KEYS) {
    fprintf(stderr, "spotlab sweep: %d --param keys: at most %d (an experiment file designs larger spaces)\n", nkeys,
            SWEEP_MAX_KEYS);
    app_args_free(&a);
    return 2;
  }
  sweep__axis *ax = calloc((size_t)nkeys, sizeof *ax);
  if (!ax) SIM_FATAL("out of memory");
  int rc = 0;
  long long npoints = 1;
  for (int k = 0; k < nkeys && !rc; k++) {
    rc = sweep__axis_parse(app_args_at(&a, "--param", k), ax, k);
    if (!rc) npoints *= ax[k].n;
    if (!rc && npoints > SWEEP_MAX_POINTS) {
      fprintf(stderr,
              "spotlab sweep: the grid of these --param has more than %d points (an experiment file "
              "samples larger spaces: docs/experiments.md)\n",
              SWEEP_MAX_POINTS);
      rc = 2;
    }
  }
  char runbuf[2][64];
  const char *fixed[2];
  int nfixed = 0;
  app_args_run_overrides(&a, runbuf, fixed, &nfixed);
  int spread = app_spread_parse(app_spread_choices[app_args_choice(&a, "--spread", 0)]);
  if (!rc)
    rc = cmd_sweep__go(a.operand[0], ax, nkeys, app_args_str(&a, "--out", NULL), fixed, nfixed,
                       app_args_flag(&a, "--quiet"), spread, app_args_flag(&a, "--resume"), argc, argv);
  for (int k = 0; k < nkeys; k++)
    for (int i = 0; i < ax[k].n; i++) free(ax[k].vals[i]);
  free(ax);
  app_args_free(&a);
  return rc;
}

/* The points of the grid of ax[0..nkeys) (the first key slowest): point p's value of key k is digit
 * k of p in the mixed radix (n_0, ..., n_{K-1}), the last key fastest. ovr_kv[p * nkeys + k] is its
 * override "KEY=VALUE"; ovr_text[p] all of them, for messages; vals[p] the point's label in the
 * sweep file (the value; on a grid, the values joined by ", "); kvals[p * nkeys + k] the value
 * (borrowed from ax); key the swept key (on a grid, the keys joined by " x "). */
typedef struct sweep__grid {
  int np;
  char **ovr_kv, **ovr_text, **vals, **kvals;
  char key[128];
} sweep__grid;

static void sweep__grid_make(sweep__grid *g, sweep__axis *ax, int nkeys) {
  int np = 1;
  for (int k = 0; k < nkeys; k++) np *= ax[k].n;
  g->np = np;
  g->ovr_kv = calloc((size_t)np * (size_t)nkeys + 1, sizeof *g->ovr_kv);
  g->ovr_text = calloc((size_t)np, sizeof *g->ovr_text);
  g->vals = calloc((size_t)np, sizeof *g->vals);
  g->kvals = calloc((size_t)np * (size_t)nkeys + 1, sizeof *g->kvals);
  if (!g->ovr_kv || !g->ovr_text || !g->vals || !g->kvals) SIM_FATAL("out of memory");
  g->key[0] = 0;
  for (int k = 0; k < nkeys; k++) {
    size_t l = strlen(g->key);
    snprintf(g->key + l, sizeof g->key - l, "%s%s", k ? " x " : "", ax[k].key);
  }
  for (int p = 0; p < np; p++) {
    char text[8192] = "", label[4096] = "";
    for (int k = 0, rest = p; k < nkeys; k++) {
      int stride = 1;
      for (int j = k + 1; j < nkeys; j++) stride *= ax[j].n;
      const char *v = ax[k].vals[rest / stride];
      rest %= stride;
      g->kvals[(size_t)p * nkeys + k] = (char *)v; /* borrowed from ax */
      g->ovr_kv[(size_t)p * nkeys + k] = sweep__join(ax[k].key, "=", v, 0);
      size_t tl = strlen(text), ll = strlen(label);
      snprintf(text + tl, sizeof text - tl, "%s%s", k ? " " : "", g->ovr_kv[(size_t)p * nkeys + k]);
      snprintf(label + ll, sizeof label - ll, "%s%s", k ? ", " : "", v);
    }
    g->ovr_text[p] = strdup(text);
    g->vals[p] = strdup(label);
    if (!g->ovr_text[p] || !g->vals[p]) SIM_FATAL("out of memory");
  }
}

static void sweep__grid_free(sweep__grid *g, int nkeys) {
  for (int p = 0; p < g->np; p++) {
    free(g->vals[p]);
    free(g->ovr_text[p]);
    for (int k = 0; k < nkeys; k++) free(g->ovr_kv[(size_t)p * nkeys + k]);
  }
  free(g->ovr_text);
  free(g->ovr_kv);
  free(g->vals);
  free(g->kvals);
}

/* Checks every point before the first one runs (a bad value must not surface after hours), and
 * that every point reports the metrics of point 1 (a key that changes, say, the number of regions
 * changes a model's metric list, and the sweep's table has one set of columns). Point 1 sets the
 * runner's replications, metrics and spread. 0, or 2 after the messages. */
static int sweep__check(app_points *pt, int rank) {
  sim_diag d;
  sim_diag_init(&d, rank == 0 ? stderr : NULL);
  const char **ovr = calloc((size_t)(pt->nfixed + pt->nkeys) + 1, sizeof *ovr); /* one point's overrides */
  if (!ovr) SIM_FATAL("out of memory");
  for (int k = 0; k < pt->nfixed; k++) ovr[k] = pt->fixed[k];
  int rc = 0;
  for (int p = 0; p < pt->np && !rc; p++) {
    for (int k = 0; k < pt->nkeys; k++) ovr[pt->nfixed + k] = pt->point_ovr[(size_t)p * pt->nkeys + k];
    app_loaded l;
    if (app_load(pt->scenario, ovr, pt->nfixed + pt->nkeys, &d, &l)) {
      if (rank == 0) fprintf(stderr, "spotlab sweep: point %d (%s) has errors; nothing was run\n", p + 1, pt->text[p]);
      rc = 2;
      break;
    }
    if (p == 0) {
      app_points_first(pt, &l);
    } else if (!app_points_same(pt, &l)) {
      if (rank == 0)
        fprintf(stderr,
                "spotlab sweep: point %d (%s) reports other metrics than point 1 (%u vs %u): a sweep "
                "axis must not change which metrics the model has\n",
                p + 1, pt->text[p], l.nmetrics, pt->nm);
      rc = 2;
    }
    app_unload(&l);
  }
  free(ovr);
  return rc;
}

/* The sweep file of the finished points 0..pt->ndone-1 (rank 0), marked interrupted when a signal
 * stopped the sweep; its summary on stdout. 0, or 1 when it could not be written. */
static int sweep__write(const app_points *pt, const sweep__grid *g, sweep__axis *ax, int nkeys, const char *scenario,
                        const char *out, int quiet) {
  int np = pt->np, rc = 0;
  rpt_sweep s;
  memset(&s, 0, sizeof s);
  snprintf(s.param, sizeof s.param, "%s", g->key);
  snprintf(s.model, sizeof s.model, "%s", pt->model);
  s.nmetrics = pt->nm;
  if (nkeys > 1) { /* a grid: every key, and each point's value of each */
    s.nkeys = (unsigned)nkeys;
    s.keys = calloc((size_t)nkeys, sizeof *s.keys);
    s.key_labels = g->kvals;
    s.key_x = calloc((size_t)np * (size_t)nkeys, sizeof *s.key_x);
    if (!s.keys || !s.key_x) SIM_FATAL("out of memory");
    for (int k = 0; k < nkeys; k++) s.keys[k] = ax[k].key;
    for (size_t i = 0; i < (size_t)np * (size_t)nkeys; i++) s.key_x[i] = sweep__number(g->kvals[i]);
  }
  s.reps = pt->reps;
  s.labels = g->vals;
  s.names = pt->names;
  s.units = pt->units;
  s.values = pt->values;
  s.x = calloc((size_t)np, sizeof *s.x);
  s.point_files = calloc((size_t)np, sizeof *s.point_files);
  char *base = strdup(pt->pdir);
  if (!s.x || !s.point_files || !base) SIM_FATAL("out of memory");
  const char *rel = basename(base); /* point files relative to the sweep file's folder */
  for (int p = 0; p < np; p++) {
    s.x[p] = nkeys == 1 ? sweep__number(g->vals[p]) : NAN; /* a grid's point is no one number */
    s.point_files[p] = sweep__join(rel, "/point_", NULL, p);
  }
  char err[RPT_ERRLEN];
  s.npoints = (unsigned)pt->ndone;
  s.interrupted = pt->sig != 0;
  s.npoints_requested = (unsigned)np;
  if (rpt_sweep_write(out, &s, scenario, pt->seed, err, sizeof err)) {
    fprintf(stderr, "spotlab sweep: %s\n", err);
    rc = 1;
  } else if (!quiet) {
    printf("sweep: %d of %d points of %s%s, %d replication%s each%s\nresults: %s (points in %s/)\nnext: spotlab "
           "report %s\n",
           pt->ndone, np, g->key, s.interrupted ? " (interrupted)" : "", pt->reps, pt->reps == 1 ? "" : "s",
           pt->kept ? " (some kept from an earlier run: --resume)" : "", out, pt->pdir, out);
  }
  for (int p = 0; p < np; p++) free(s.point_files[p]);
  free(s.point_files);
  free(s.x);
  free(s.keys);
  free(s.key_x);
  free(base);
  return rc;
}

/* The sweep over the grid of ax[0..nkeys) (the first key slowest) with the overrides
 * fixed[0..nfixed) at every point: checked, run by the point runner, written. */
static int cmd_sweep__go(const char *scenario, sweep__axis *ax, int nkeys, const char *out, const char *const *fixed,
                         int nfixed, int quiet, int spread, int resume, int argc, char **argv) {
  sweep__grid g;
  sweep__grid_make(&g, ax, nkeys);
  char file[4096], pdir[4200];
  app_points pt;
  memset(&pt, 0, sizeof pt);
  pt.cmd = "sweep";
  pt.scenario = scenario;
  pt.fixed = fixed;
  pt.nfixed = nfixed;
  pt.point_ovr = g.ovr_kv;
  pt.nkeys = nkeys;
  pt.text = g.ovr_text;
  pt.np = g.np;
  pt.pdir = pdir;
  pt.spread = spread;
  pt.resume = resume;
  pt.quiet = quiet;

  app_mpi_init(&argc, &argv);
  int rank = app_mpi_rank();
  int rc = sweep__check(&pt, rank);
  const char *ins[1] = {scenario};
  if (!rc) rc = app_points_where("sweep", ins, 1, out, 0, file, sizeof file, pdir, sizeof pdir);
  if (!rc) rc = app_points_run(&pt);
  if (pt.sig && rank == 0)
    fprintf(stderr, "spotlab sweep: stopped by signal %d after %d of %d points%s\n", pt.sig, pt.ndone, pt.np,
            pt.ndone ? "; the sweep file holds the finished ones, marked interrupted" : "; nothing was written");
  if (rank == 0 && !rc && pt.ndone > 0) rc = sweep__write(&pt, &g, ax, nkeys, scenario, file, quiet);
  int sig = pt.sig, failed = pt.failed;
  app_points_free(&pt);
  sweep__grid_free(&g, nkeys);
  if (rc) return rc;
  if (sig) return app_stop_status(sig);
  return failed ? 1 : 0;
}

static const app_command cmd_sweep = {"sweep",
                                      "run a scenario over the values of one key, or a grid of keys; one sweep file",
                                      cmd_sweep_main, &sweep__cli};
APP_COMMAND(cmd_sweep)
