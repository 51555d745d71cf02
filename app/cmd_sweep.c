/* cmd_sweep.c - `spotlab sweep SCENARIO --param KEY=V1,V2,... [--param KEY2=...]`: runs a scenario
 * at every value of one key, or at every point of the full grid of several keys (the first key
 * slowest, as nested loops in the order given), and writes one sweep file (layout:
 * docs/reports.md) that `spotlab report` draws as each metric against the key, with its
 * confidence band. Every point's own results file is kept too
 * (FILE.points/point_NNNN.h5) for `spotlab report` and `spotlab compare`.
 *
 * Parallelism: replications on OpenMP threads and, under mpirun, whole points over the ranks, or
 * each point's replications over them (the runner's app_spread_choose: whole replications per
 * rank, or each over all ranks), whichever takes fewer rounds. Every point uses the same base seed, so points differ
 * only by the key (common random numbers across the sweep). */
#include "analysis/report/rpt.h"
#include "app/app.h"
#include "app/cli.h"
#include "app/progress.h"
#include "app/runner.h"

#include <errno.h>
#include <libgen.h>
#include <math.h>
#include <mpi.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define SWEEP_MAX_POINTS 1000
#define SWEEP_MAX_KEYS 8

/* One swept key and its values, as given by one --param KEY=V1,V2,... */
typedef struct sweep__axis {
  char key[128];
  char *vals[SWEEP_MAX_POINTS];
  int n;
} sweep__axis;

static double sweep__now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

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

/* The sweep over the grid of ax[0..nkeys) (the first key slowest) with the overrides
 * fixed[0..nfixed) at every point. */
static int cmd_sweep__go(const char *scenario, sweep__axis *ax, int nkeys, const char *out, const char *const *fixed,
                         int nfixed, int quiet, int spread, int resume, int argc, char **argv) {
  int rc = 0, failed = 0, sig_out = 0;   /* sig_out: the signal that stopped the sweep */
  char *base = NULL;                     /* freed at done: declared before the first goto */
  char **names0 = NULL, **units0 = NULL; /* metric names of point 1, which every point must share */
  unsigned nm0 = 0;
  int point_spread = APP_SPREAD_REPS;
  char why[512] = "";
  int np = 1;
  for (int k = 0; k < nkeys; k++) np *= ax[k].n;
  /* Point p's value of key k: digit k of p in the mixed radix (n_0, ..., n_{K-1}), the last key
   * fastest. ovr_kv[p * nkeys + k] is its override "KEY=VALUE"; ovr_text[p] all of them, for
   * messages; vals[p] the point's label in the sweep file (the value; on a grid, the values
   * joined by ", "); key the swept key (on a grid, the keys joined by " x "). */
  char **ovr_kv = calloc((size_t)np * (size_t)nkeys, sizeof *ovr_kv), **ovr_text = calloc((size_t)np, sizeof *ovr_text),
       **vals = calloc((size_t)np, sizeof *vals), **kvals = calloc((size_t)np * (size_t)nkeys, sizeof *kvals);
  if (!ovr_kv || !ovr_text || !vals || !kvals) SIM_FATAL("out of memory");
  char key[128] = "";
  for (int k = 0; k < nkeys; k++) {
    size_t l = strlen(key);
    snprintf(key + l, sizeof key - l, "%s%s", k ? " x " : "", ax[k].key);
  }
  for (int p = 0; p < np; p++) {
    char text[8192] = "", label[4096] = "";
    for (int k = 0, rest = p; k < nkeys; k++) {
      int stride = 1;
      for (int j = k + 1; j < nkeys; j++) stride *= ax[j].n;
      const char *v = ax[k].vals[rest / stride];
      rest %= stride;
      kvals[(size_t)p * nkeys + k] = (char *)v; /* borrowed from ax */
      ovr_kv[(size_t)p * nkeys + k] = sweep__join(ax[k].key, "=", v, 0);
      size_t tl = strlen(text), ll = strlen(label);
      snprintf(text + tl, sizeof text - tl, "%s%s", k ? " " : "", ovr_kv[(size_t)p * nkeys + k]);
      snprintf(label + ll, sizeof label - ll, "%s%s", k ? ", " : "", v);
    }
    ovr_text[p] = strdup(text);
    vals[p] = strdup(label);
    if (!ovr_text[p] || !vals[p]) SIM_FATAL("out of memory");
  }
  const char **ovr = calloc((size_t)(nfixed + nkeys), sizeof *ovr); /* one point's overrides */
  if (!ovr) SIM_FATAL("out of memory");
  for (int k = 0; k < nfixed; k++) ovr[k] = fixed[k];

  app_mpi_init(&argc, &argv);
  int rank = app_mpi_rank();

  /* Check every point before the first one runs: a bad value must not surface after hours. */
  sim_diag d;
  sim_diag_init(&d, rank == 0 ? stderr : NULL);
  app_loaded l;
  int reps = 0;
  const sim_model_class *cls = NULL;
  for (int p = 0; p < np; p++) {
    for (int k = 0; k < nkeys; k++) ovr[nfixed + k] = ovr_kv[(size_t)p * nkeys + k];
    if (app_load(scenario, ovr, nfixed + nkeys, &d, &l)) {
      if (rank == 0) fprintf(stderr, "spotlab sweep: point %d (%s) has errors; nothing was run\n", p + 1, ovr_text[p]);
      rc = 2;
      goto done;
    }
    reps = (int)l.run.reps;
    cls = l.cls;
    if (p == 0) {
      l.spread = spread;
      point_spread = app_spread_choose(&l, app_mpi_size(), why, sizeof why);
    }
    /* Every point must report the same metrics (a key that changes, say, the number of regions
     * changes a model's metric list, and the sweep's table has one set of columns). */
    if (p == 0) {
      nm0 = l.nmetrics;
      names0 = calloc(nm0 ? nm0 : 1, sizeof *names0);
      units0 = calloc(nm0 ? nm0 : 1, sizeof *units0);
      if (!names0 || !units0) SIM_FATAL("out of memory");
      for (unsigned k = 0; k < nm0; k++) {
        names0[k] = strdup(l.metrics[k].name);
        units0[k] = strdup(l.metrics[k].unit);
        if (!names0[k] || !units0[k]) SIM_FATAL("out of memory");
      }
    } else {
      int same = l.nmetrics == nm0;
      for (unsigned k = 0; same && k < nm0; k++) same = !strcmp(l.metrics[k].name, names0[k]);
      if (!same) {
        if (rank == 0)
          fprintf(stderr,
                  "spotlab sweep: point %d (%s) reports other metrics than point 1 (%u vs %u): a sweep "
                  "axis must not change which metrics the model has\n",
                  p + 1, ovr_text[p], l.nmetrics, nm0);
        app_unload(&l);
        rc = 2;
        goto done;
      }
    }
    app_unload(&l);
  }

  char defout[4096], pdir[4200];
  if (!out) {
    char *c = strdup(scenario);
    char *b = c ? basename(c) : "run";
    char *dot = strrchr(b, '.');
    if (dot) *dot = 0;
    snprintf(defout, sizeof defout, "results/%s-sweep.h5", b);
    free(c);
    out = defout;
    if (rank == 0) mkdir("results", 0777);
  }
  const char *ins[1] = {scenario};
  if ((rc = app_out_check(rank == 0 ? stderr : NULL, "sweep", out, ins, 1, 0))) goto done;
  size_t ol = strlen(out);
  snprintf(pdir, sizeof pdir, "%.*s.points", (int)(ol > 3 && !strcmp(out + ol - 3, ".h5") ? ol - 3 : ol), out);
  /* Every rank tries (EEXIST is fine), so that all of them agree on giving up. */
  if (mkdir(pdir, 0777) && errno != EEXIST) {
    if (rank == 0)
      fprintf(stderr, "spotlab sweep: cannot create the folder '%s' for the points' results: %s\n", pdir,
              strerror(errno));
    rc = 1;
    goto done;
  }
  base = strdup(pdir);
  if (!base) SIM_FATAL("out of memory");
  const char *rel = basename(base); /* point files relative to the sweep file's folder */

  unsigned nm = nm0;
  rpt_sweep s;
  memset(&s, 0, sizeof s);
  snprintf(s.param, sizeof s.param, "%s", key);
  snprintf(s.model, sizeof s.model, "%s", cls->name);
  s.npoints = (unsigned)np;
  s.nmetrics = nm;
  if (nkeys > 1) { /* a grid: every key, and each point's value of each */
    s.nkeys = (unsigned)nkeys;
    s.keys = calloc((size_t)nkeys, sizeof *s.keys);
    s.key_labels = kvals;
    s.key_x = calloc((size_t)np * (size_t)nkeys, sizeof *s.key_x);
    if (!s.keys || !s.key_x) SIM_FATAL("out of memory");
    for (int k = 0; k < nkeys; k++) s.keys[k] = ax[k].key;
    for (size_t i = 0; i < (size_t)np * (size_t)nkeys; i++) s.key_x[i] = sweep__number(kvals[i]);
  }
  s.reps = reps;
  s.labels = vals;
  s.x = calloc((size_t)np, sizeof *s.x);
  s.names = calloc(nm ? nm : 1, sizeof *s.names);
  s.units = calloc(nm ? nm : 1, sizeof *s.units);
  s.values = calloc((size_t)np * (size_t)reps * (nm ? nm : 1), sizeof *s.values);
  s.point_files = calloc((size_t)np, sizeof *s.point_files);
  if (!s.x || !s.names || !s.units || !s.values || !s.point_files) SIM_FATAL("out of memory");
  for (unsigned k = 0; k < nm; k++) {
    s.names[k] = names0[k];
    s.units[k] = units0[k];
  }
  /* Under mpirun, whole points go to ranks (point p to rank p mod P, its replications on that
   * rank's threads) when that takes fewer rounds than spreading each point's replications:
   * ceil(points / P) * reps against points * ceil(reps / P) (equal: points, which move no results
   * between ranks). Either way every point's file is the same bits. */
  int P = app_mpi_size();
  int by_points = P > 1 && point_spread == APP_SPREAD_REPS &&
                  (long long)((np + P - 1) / P) * reps <= (long long)np * ((reps + P - 1) / P);
  if (!quiet && rank == 0) {
    if (by_points)
      fprintf(stderr,
              "sweep: %d points over %d ranks: spread points (each point whole on one rank, its %d "
              "replication%s on the rank's threads)\n",
              np, P, reps, reps == 1 ? "" : "s");
    else
      fprintf(stderr, "sweep: each point: %s\n", why);
  }
  uint64_t seed = 0;
  int sig = 0, kept = 0; /* the signal that stopped the sweep; points kept from an earlier run (--resume) */
  unsigned char *pdone = calloc((size_t)np, 1); /* pdone[p]: point p finished (on any rank, once agreed) */
  if (!pdone) SIM_FATAL("out of memory");
  app_stop_install();
  /* whole points on the ranks: one line per point from the rank that ran it (rank 0's progress
   * would count its own points only); otherwise the progress line with its ETA */
  app_progress *prog = app_progress_start("point", np, quiet || by_points);
  double t0 = sweep__now();
  app_progress_engine_lines(prog, 0); /* the timer line: points can be long */
  for (int p = 0; p < np; p++) {
    s.x[p] = nkeys == 1 ? sweep__number(vals[p]) : NAN; /* a grid's point is no one number */
    s.point_files[p] = sweep__join(rel, "/point_", NULL, p);
  }
  for (int p = 0; p < np && !rc; p++) {
    if (by_points) {
      if (p % P != rank) continue;
      if ((sig = app_stop_signal())) break; /* this rank's point boundary; agreed below */
    } else if ((sig = app_stop_agreed())) {
      break; /* a point boundary on every rank: stop here, keep what finished */
    }
    for (int k = 0; k < nkeys; k++) ovr[nfixed + k] = ovr_kv[(size_t)p * nkeys + k];
    if (app_load(scenario, ovr, nfixed + nkeys, &d, &l)) { /* checked above; a file changed under us */
      rc = 2;
      break;
    }
    seed = (uint64_t)l.run.seed;
    l.spread = spread;
    l.local = by_points;
    if (resume) { /* a point already done (an interrupted sweep run again): kept, not run */
      char pf[4400];
      snprintf(pf, sizeof pf, "%s/point_%04d.h5", pdir, p);
      int have = (rank == 0 || by_points) && app_point_reusable(pf, &l, names0, nm, s.values + (size_t)p * reps * nm);
      if (P > 1 && !by_points) MPI_Bcast(&have, 1, MPI_INT, 0, MPI_COMM_WORLD); /* every rank skips it, or none */
      if (have) {
        kept++;
        if (!quiet && (rank == 0 || by_points))
          fprintf(stderr, "sweep: point %d/%d (%s): finished earlier, kept (%s)\n", p + 1, np, ovr_text[p], pf);
        pdone[p] = 1;
        app_progress_step(prog, ovr_text[p], 1);
        app_unload(&l);
        continue;
      }
    }
    app_run_out o;
    double tp = sweep__now();
    failed |= app_run_reps(&l, NULL, &o);
    if (o.nreps < reps) { /* stopped inside the point: its replications are not all there, drop it */
      sig = o.interrupted ? o.interrupted : app_stop_signal();
      app_run_out_free(&l, &o);
      app_unload(&l);
      break;
    }
    if (rank == 0 || by_points) {
      char pf[4400];
      snprintf(pf, sizeof pf, "%s/point_%04d.h5", pdir, p);
      if (app_write_results(pf, &l, &o)) rc = 1;
      memcpy(s.values + (size_t)p * reps * nm, o.values, (size_t)reps * nm * sizeof *o.values);
      if (!quiet && by_points)
        fprintf(stderr, "sweep: point %d/%d (%s): %d replication%s in %.1f s on rank %d; %.0f s elapsed\n", p + 1, np,
                ovr_text[p], reps, reps == 1 ? "" : "s", sweep__now() - tp, rank, sweep__now() - t0);
    }
    pdone[p] = 1;
    app_progress_step(prog, ovr_text[p], 1);
    app_run_out_free(&l, &o);
    app_unload(&l);
  }
  app_progress_end(prog);
  if (by_points) { /* what finished where, then every finished point's metrics to rank 0 */
    rc = app_mpi_max_int(rc);
    failed = app_mpi_max_int(failed);
    sig = app_mpi_max_int(sig);
    kept = app_mpi_max_int(kept);
    MPI_Allreduce(MPI_IN_PLACE, pdone, np, MPI_UNSIGNED_CHAR, MPI_MAX, MPI_COMM_WORLD);
    for (int p = 0; !rc && p < np; p++)
      if (pdone[p]) app_mpi_bcast_doubles(s.values + (size_t)p * reps * nm, (size_t)reps * nm, p % P);
  }
  /* the sweep file holds points 0..ndone-1 (a later one finished beside a gap is left out of it) */
  int ndone = 0;
  while (ndone < np && pdone[ndone]) ndone++;
  free(pdone);
  sig_out = ndone < np ? sig : 0; /* a signal after the last point stopped nothing */
  if (sig_out && rank == 0)
    fprintf(stderr, "spotlab sweep: stopped by signal %d after %d of %d points%s\n", sig, ndone, np,
            ndone ? "; the sweep file holds the finished ones, marked interrupted" : "; nothing was written");
  if (rank == 0 && !rc && ndone > 0) {
    char err[RPT_ERRLEN];
    s.npoints = (unsigned)ndone;
    s.interrupted = sig_out != 0;
    s.npoints_requested = (unsigned)np;
    if (rpt_sweep_write(out, &s, scenario, seed, err, sizeof err)) {
      fprintf(stderr, "spotlab sweep: %s\n", err);
      rc = 1;
    } else if (!quiet) {
      printf("sweep: %d of %d points of %s%s, %d replication%s each%s\nresults: %s (points in %s/)\nnext: spotlab "
             "report %s\n",
             ndone, np, key, s.interrupted ? " (interrupted)" : "", reps, reps == 1 ? "" : "s",
             kept ? " (some kept from an earlier run: --resume)" : "", out, pdir, out);
    }
  }
  for (int p = 0; s.point_files && p < np; p++) free(s.point_files[p]);
  free(s.point_files);
  free(s.x);
  free(s.names);
  free(s.units);
  free(s.values);
  free(s.keys);
  free(s.key_x);
done:
  free(base);
  for (unsigned k = 0; names0 && k < nm0; k++) {
    free(names0[k]);
    free(units0[k]);
  }
  free(names0);
  free(units0);
  for (int p = 0; p < np; p++) {
    free(vals[p]);
    free(ovr_text[p]);
    for (int k = 0; k < nkeys; k++) free(ovr_kv[(size_t)p * nkeys + k]);
  }
  free(ovr_text);
  free(ovr_kv);
  free(vals);
  free(kvals);
  free(ovr);
  if (rc) return rc;
  if (sig_out) return app_stop_status(sig_out);
  return failed ? 1 : 0;
}

static const app_command cmd_sweep = {"sweep",
                                      "run a scenario over the values of one key, or a grid of keys; one sweep file",
                                      cmd_sweep_main, &sweep__cli};
APP_COMMAND(cmd_sweep)
