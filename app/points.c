/* points.c - see points.h. */
#include "app/points.h"
#include "app/app.h"
#include "app/cli.h"
#include "app/progress.h"

#include <errno.h>
#include <libgen.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

static double pts__now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int app_points_where(const char *cmd, const char *const *inputs, int ninputs, const char *out, int dir_ok, char *file,
                     size_t flen, char *pdir, size_t plen) {
  int rank = app_mpi_rank();
  FILE *msg = rank == 0 ? stderr : NULL;
  char defout[4096];
  if (!out) {
    char *c = strdup(inputs[0]);
    char *b = c ? basename(c) : "run";
    char *dot = strrchr(b, '.');
    if (dot) *dot = 0;
    snprintf(defout, sizeof defout, "results/%s-%s.h5", b, cmd);
    free(c);
    out = defout;
    if (rank == 0) mkdir("results", 0777);
  }
  size_t ol = strlen(out);
  if (ol > 4000) { /* the results file and the points' folder are named after it */
    if (msg) fprintf(msg, "spotlab %s: --out '%.60s...' is %zu characters, more than 4000\n", cmd, out, ol);
    return 2;
  }
  int h5 = ol > 3 && !strcmp(out + ol - 3, ".h5"), rc;
  if ((rc = app_out_check(msg, cmd, out, inputs, ninputs, dir_ok && !h5))) return rc;
  if (dir_ok && !h5) {
    if (mkdir(out, 0777) && errno != EEXIST) {
      if (msg) fprintf(msg, "spotlab %s: cannot create the folder '%s': %s\n", cmd, out, strerror(errno));
      return 1;
    }
    snprintf(file, flen, "%s/%s.h5", out, cmd);
    snprintf(pdir, plen, "%s/points", out);
  } else {
    snprintf(file, flen, "%s", out);
    snprintf(pdir, plen, "%.*s.points", (int)(h5 ? ol - 3 : ol), out);
  }
  /* Every rank tries (EEXIST is fine), so that all of them agree on giving up. */
  if (mkdir(pdir, 0777) && errno != EEXIST) {
    if (msg)
      fprintf(msg, "spotlab %s: cannot create the folder '%s' for the points' results: %s\n", cmd, pdir,
              strerror(errno));
    return 1;
  }
  return 0;
}

void app_points_first(app_points *pt, const app_loaded *l) {
  pt->reps = (int)l->run.reps;
  pt->seed = (uint64_t)l->run.seed;
  pt->nm = l->nmetrics;
  pt->names = calloc(pt->nm + 1, sizeof *pt->names);
  pt->units = calloc(pt->nm + 1, sizeof *pt->units);
  if (!pt->names || !pt->units) SIM_FATAL("out of memory");
  for (unsigned k = 0; k < pt->nm; k++) {
    pt->names[k] = strdup(l->metrics[k].name);
    pt->units[k] = strdup(l->metrics[k].unit);
    if (!pt->names[k] || !pt->units[k]) SIM_FATAL("out of memory");
  }
  snprintf(pt->model, sizeof pt->model, "%s", l->cls->name);
  app_loaded asked = *l; /* a copy that reads only: the spread the command was asked for */
  asked.spread = pt->spread;
  pt->point_spread = app_spread_choose(&asked, app_mpi_size(), pt->why, sizeof pt->why);
}

int app_points_same(const app_points *pt, const app_loaded *l) {
  int same = l->nmetrics == pt->nm;
  for (unsigned k = 0; same && k < pt->nm; k++) same = !strcmp(l->metrics[k].name, pt->names[k]);
  return same;
}

void app_points_free(app_points *pt) {
  for (unsigned k = 0; pt->names && k < pt->nm; k++) free(pt->names[k]);
  for (unsigned k = 0; pt->units && k < pt->nm; k++) free(pt->units[k]);
  free(pt->names);
  free(pt->units);
  free(pt->values);
  free(pt->done);
  pt->names = pt->units = NULL;
  pt->values = NULL;
  pt->done = NULL;
}

/* Point p: loaded with its overrides, kept (--resume) or run, its file written by the rank that
 * holds its results. Returns 0 to go on, 1 to stop (a signal inside the point: *sig; or pt->rc). */
static int pts__point(app_points *pt, int p, int by_points, const char **ovr, sim_diag *d, app_progress *prog,
                      double t0, int *sig) {
  int rank = app_mpi_rank(), P = app_mpi_size(), reps = pt->reps, np = pt->np;
  unsigned nm = pt->nm;
  for (int k = 0; k < pt->nkeys; k++) ovr[pt->nfixed + k] = pt->point_ovr[(size_t)p * pt->nkeys + k];
  app_loaded l;
  if (app_load(pt->scenario, ovr, pt->nfixed + pt->nkeys, d, &l)) { /* checked before: a file changed */
    pt->rc = 2;
    return 1;
  }
  if ((int)l.run.reps != reps || !app_points_same(pt, &l)) { /* the values' layout is point 1's */
    if (rank == 0 || by_points)
      fprintf(stderr, "spotlab %s: point %d (%s) has other replications or metrics than point 1\n", pt->cmd, p + 1,
              pt->text[p]);
    app_unload(&l);
    pt->rc = 2;
    return 1;
  }
  l.spread = pt->spread;
  l.local = by_points;
  char pf[4400];
  snprintf(pf, sizeof pf, "%s/point_%04d.h5", pt->pdir, p);
  double *dst = pt->values + (size_t)p * (size_t)reps * nm;
  int holder = rank == 0 || by_points; /* the rank that gets the point's results */
  if (pt->resume) {                    /* a point already done (an interrupted run again): kept, not run */
    int have = holder && app_point_reusable(pf, &l, pt->names, nm, dst);
    if (P > 1 && !by_points) MPI_Bcast(&have, 1, MPI_INT, 0, MPI_COMM_WORLD); /* every rank skips it, or none */
    if (have) {
      pt->kept++;
      if (!pt->quiet && holder)
        fprintf(stderr, "%s: point %d/%d (%s): finished earlier, kept (%s)\n", pt->cmd, p + 1, np, pt->text[p], pf);
      pt->done[p] = 1;
      app_progress_step(prog, pt->text[p], 1);
      app_unload(&l);
      return 0;
    }
  }
  app_run_out o;
  double tp = pts__now();
  pt->failed |= app_run_reps(&l, NULL, &o);
  if (o.nreps < reps) { /* stopped inside the point: its replications are not all there, drop it */
    *sig = o.interrupted ? o.interrupted : app_stop_signal();
    app_run_out_free(&l, &o);
    app_unload(&l);
    return 1;
  }
  if (holder) {
    if (app_write_results(pf, &l, &o)) pt->rc = 1;
    memcpy(dst, o.values, (size_t)reps * nm * sizeof *dst);
    if (!pt->quiet && by_points)
      fprintf(stderr, "%s: point %d/%d (%s): %d replication%s in %.1f s on rank %d; %.0f s elapsed\n", pt->cmd, p + 1,
              np, pt->text[p], reps, reps == 1 ? "" : "s", pts__now() - tp, rank, pts__now() - t0);
  }
  pt->ran++;
  pt->done[p] = 1;
  app_progress_step(prog, pt->text[p], 1);
  app_run_out_free(&l, &o);
  app_unload(&l);
  /* every rank stops after a point rank 0 could not write (the next boundary is collective) */
  if (P > 1 && !by_points) pt->rc = app_mpi_max_int(pt->rc);
  return pt->rc != 0;
}

/* After whole points on the ranks: what finished where, then every finished point's metrics to
 * every rank (rank 0 writes the command's file). */
static void pts__gather(app_points *pt, int *sig) {
  int P = app_mpi_size(), reps = pt->reps;
  unsigned nm = pt->nm;
  pt->rc = app_mpi_max_int(pt->rc);
  pt->failed = app_mpi_max_int(pt->failed);
  *sig = app_mpi_max_int(*sig);
  int counts[2] = {pt->kept, pt->ran};
  MPI_Allreduce(MPI_IN_PLACE, counts, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  pt->kept = counts[0];
  pt->ran = counts[1];
  MPI_Allreduce(MPI_IN_PLACE, pt->done, pt->np, MPI_UNSIGNED_CHAR, MPI_MAX, MPI_COMM_WORLD);
  for (int p = 0; !pt->rc && p < pt->np; p++)
    if (pt->done[p]) app_mpi_bcast_doubles(pt->values + (size_t)p * reps * nm, (size_t)reps * nm, p % P);
}

int app_points_run(app_points *pt) {
  int np = pt->np, reps = pt->reps, P = app_mpi_size(), rank = app_mpi_rank();
  pt->values = calloc((size_t)np * (size_t)reps * pt->nm + 1, sizeof *pt->values);
  pt->done = calloc((size_t)np + 1, 1);
  const char **ovr = calloc((size_t)(pt->nfixed + pt->nkeys) + 1, sizeof *ovr); /* one point's overrides */
  if (!pt->values || !pt->done || !ovr) SIM_FATAL("out of memory");
  for (int k = 0; k < pt->nfixed; k++) ovr[k] = pt->fixed[k];
  pt->kept = pt->ran = pt->sig = pt->failed = pt->rc = 0;
  /* Under mpirun, whole points go to ranks (point p to rank p mod P, its replications on that
   * rank's threads) when that takes fewer rounds than spreading each point's replications:
   * ceil(points / P) * reps against points * ceil(reps / P) (equal: points, which move no results
   * between ranks). Either way every point's file is the same bits. */
  int by_points = P > 1 && pt->point_spread == APP_SPREAD_REPS &&
                  (long long)((np + P - 1) / P) * reps <= (long long)np * ((reps + P - 1) / P);
  if (!pt->quiet && rank == 0) {
    if (by_points)
      fprintf(stderr,
              "%s: %d points over %d ranks: spread points (each point whole on one rank, its %d "
              "replication%s on the rank's threads)\n",
              pt->cmd, np, P, reps, reps == 1 ? "" : "s");
    else
      fprintf(stderr, "%s: each point: %s\n", pt->cmd, pt->why);
  }
  sim_diag d;
  sim_diag_init(&d, rank == 0 ? stderr : NULL);
  int sig = 0; /* the signal that stopped the run */
  app_stop_install();
  /* whole points on the ranks: one line per point from the rank that ran it (rank 0's progress
   * would count its own points only); otherwise the progress line with its ETA */
  app_progress *prog = app_progress_start("point", np, pt->quiet || by_points);
  double t0 = pts__now();
  app_progress_engine_lines(prog, 0); /* the timer line: points can be long */
  for (int p = 0; p < np && !pt->rc; p++) {
    if (by_points) {
      if (p % P != rank) continue;
      if ((sig = app_stop_signal())) break; /* this rank's point boundary; agreed in pts__gather */
    } else if ((sig = app_stop_agreed())) {
      break; /* a point boundary on every rank: stop here, keep what finished */
    }
    if (pts__point(pt, p, by_points, ovr, &d, prog, t0, &sig)) break;
  }
  app_progress_end(prog);
  free(ovr);
  if (by_points) pts__gather(pt, &sig);
  while (pt->ndone < np && pt->done[pt->ndone]) pt->ndone++;
  pt->sig = pt->ndone < np ? sig : 0; /* a signal after the last point stopped nothing */
  return pt->rc;
}
