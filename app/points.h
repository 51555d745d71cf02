/* points.h - the point runner of `spotlab sweep` and `spotlab experiment`: a list of points (each a
 * set of scenario overrides), every one run for the same replications on the same seeds (common
 * random numbers), each point's results file written as it finishes.
 *
 * The runner owns what the two commands share: the loop over points x replications; --resume (a
 * point whose results file is already whole, of the very run it would make, is kept, not run:
 * app_point_reusable); under mpirun, whole points over the ranks (point p to rank p mod P) when
 * that takes fewer rounds than spreading each point's replications (app_spread_choose), the files
 * bit-identical either way; the progress lines; SIGINT and SIGTERM (the point under way is dropped,
 * the finished ones kept on disk for --resume). A command builds its points, checks them, calls
 * app_points_run and writes its own summary file from the values it gathered.
 */
#ifndef APP_POINTS_H
#define APP_POINTS_H

#include "app/runner.h"

#include <stdint.h>

typedef struct app_points {
  /* Given by the command. */
  const char *cmd;          /* "sweep", "experiment": messages and progress lines */
  const char *scenario;     /* the scenario file every point loads */
  const char *const *fixed; /* [nfixed] overrides at every point, before the point's own */
  int nfixed;
  char *const *point_ovr; /* [np * nkeys] point p's overrides ("KEY=VALUE"), point_ovr[p * nkeys + k] */
  int nkeys;
  char *const *text; /* [np] point p's overrides in one line, for messages */
  int np;
  const char *pdir; /* the points' folder: point p's results file is pdir/point_NNNN.h5 */
  int spread;       /* --spread asked for (app_spread) */
  int resume;       /* --resume */
  int quiet;        /* no progress lines */

  /* Set by app_points_first (point 1) and checked by app_points_same (every other point). */
  int reps;
  uint64_t seed;
  unsigned nm;  /* metrics every point reports */
  char **names; /* [nm] their names and units (owned) */
  char **units;
  char model[64];
  int point_spread; /* what app_spread_choose gives point 1's replications on every rank */
  char why[512];    /* and why */

  /* Filled by app_points_run. */
  double *values;      /* [np][reps][nm]: each finished point's metrics per replication (rank 0) */
  unsigned char *done; /* [np]: 1 when point p finished, run or kept (every rank agrees) */
  int ndone;           /* points 0..ndone-1 finished (a later one beside a gap is not counted) */
  int kept, ran;       /* points kept from an earlier run (--resume), points run now */
  int sig;             /* the signal that stopped the run before every point finished, or 0 */
  int failed;          /* 1: a replication failed its end-of-run check */
  int rc;              /* 0; 1 a point's file could not be written; 2 a point no longer loads */
} app_points;

/* Where a command's results go: its file (into file[flen]) and the points' folder (into
 * pdir[plen], created). `out`: FILE.h5 (points in FILE.points/); with dir_ok, a DIR without .h5
 * (DIR/CMD.h5, points in DIR/points/, DIR created); NULL: results/NAME-CMD.h5, NAME the first
 * input's name without its extension. The output is checked first (app_out_check: not an input,
 * writable). Every rank calls it. 0, or the exit status after a message (rank 0's). */
int app_points_where(const char *cmd, const char *const *inputs, int ninputs, const char *out, int dir_ok, char *file,
                     size_t flen, char *pdir, size_t plen);
/* Records what point 1 (loaded as l) sets for all: replications, seed, metrics, model, spread. */
void app_points_first(app_points *pt, const app_loaded *l);
/* 1 when l (another point) reports the metrics of point 1, in the same order. */
int app_points_same(const app_points *pt, const app_loaded *l);
/* Runs (or keeps, with resume) every point in order, until all are done or a signal stops it.
 * app_points_first must have been called; MPI initialised (app_mpi_init). Collective: every rank
 * calls it. Returns pt->rc. */
int app_points_run(app_points *pt);
/* Frees what the runner allocated (names, units, values, done). */
void app_points_free(app_points *pt);

#endif
