/* runner.h - load a scenario, build its model, run its replications, write its results.
 * Shared by `spotlab run`, `spotlab check` and sweeps. */
#ifndef APP_RUNNER_H
#define APP_RUNNER_H

#include "sim/model_class.h"
#include "sim/results_io.h"

/* The engine's own scenario keys: group `run`. */
typedef struct app_run_cfg {
  int64_t seed;      /* base seed */
  int64_t reps;      /* replications */
  double end;        /* simulated seconds */
  double max_events; /* refuse a run estimated to take more events per replication (0: no limit) */
} app_run_cfg;
extern const sim_param app_run_params[];

/* How a run under several MPI ranks spreads its work (`--spread`).
 *   APP_SPREAD_REPS   each replication (or sweep point's replication) runs whole, as a sequential
 *                     engine, on one rank (OpenMP threads inside the rank); results go to rank 0;
 *   APP_SPREAD_MODEL  each replication is partitioned over all ranks (conservative windows),
 *                     replications one after another;
 *   APP_SPREAD_AUTO   model when the replications this process runs cannot keep every rank busy
 *                     and the model has at least APP_SPREAD_MODEL_MIN_LPS entities per rank, reps
 *                     otherwise (app_spread_choose; docs/history/performance-log.md has the measurement).
 * Results are bit-identical whichever is chosen. */
typedef enum app_spread { APP_SPREAD_AUTO = 0, APP_SPREAD_REPS, APP_SPREAD_MODEL } app_spread;
#define APP_SPREAD_MODEL_MIN_LPS 50000
/* "auto", "reps", "model" -> the enum; -1 for anything else. */
int app_spread_parse(const char *s);
const char *app_spread_name(int spread);

/* A scenario loaded, validated and built, ready to run. */
typedef struct app_loaded {
  sim_scenario *scn;
  const sim_model_class *cls;
  app_run_cfg run;
  void *cfg; /* the model's parsed keys */
  sim_model model;
  int built;
  const sim_metric_def *metrics; /* the built model's metrics (the class's, or its own) */
  unsigned nmetrics;
  char *effective; /* every key's effective value, scenario syntax */
  /* Set by the caller after app_load (zero: defaults). */
  int spread;    /* app_spread asked for (APP_SPREAD_AUTO by default) */
  int rep_first; /* replications this process runs: [rep_first, rep_first + rep_count) of */
  int rep_count; /* run.reps (a shard, `--shard`); rep_count 0: all of them */
  int local;     /* 1: this process alone, whatever the ranks (a sweep point one rank runs) */
} app_loaded;

/* Loads `path`, applies overrides ("group.key=value"), parses and validates every group and
 * builds the model. Reports to d (FILE:LINE) and returns SIM_ECONFIG on bad input. */
int app_load(const char *path, const char *const *overrides, int noverrides, sim_diag *d, app_loaded *out);
/* The same from scenario text (a results file's effective keys); `path` names it in messages and
 * its folder is where data files are looked for first, as for a scenario file there. */
int app_load_text(const char *text, const char *path, const char *const *overrides, int noverrides, sim_diag *d,
                  app_loaded *out);
double app_memory_available(void);

/* What one replication of a loaded scenario will take, measured by pilot runs of replication 0
 * over growing prefixes of run.end (a sliver first, for what every run costs, then longer ones until
 * the time beyond the first pilot's reaches half of `budget_s` CPU seconds, or the whole run): the
 * marginal events and CPU time per simulated second, extrapolated to run.end. `exact` is 1 when
 * the last pilot was the whole run (the counts are then the run's own). */
typedef struct app_estimate {
  double events;    /* engine events per replication */
  double wall_s;    /* CPU seconds per replication on one core */
  double horizon_s; /* simulated seconds the last pilot covered */
  double pilot_events;
  double pilot_wall_s; /* CPU seconds */
  int exact;
} app_estimate;
int app_estimate_run(const app_loaded *l, double budget_s, app_estimate *e);
/* 1 (with a FILE: message) when the estimate exceeds run.max_events. */
int app_estimate_refused(const app_loaded *l, const char *path, const app_estimate *e, sim_diag *d);
void app_unload(app_loaded *l);

/* Runs replications [first, first + count) of l (all of run.reps unless l->rep_count says a shard)
 * as app_spread_choose says: on OpenMP threads in one process; spread over ranks (each whole, on
 * one rank, gathered to rank 0); or one after another, each over all ranks. Fills reps[] and
 * values[nreps][nmetrics] on rank 0. Returns 0, or 1 if a check failed. `prog` (or NULL) reports
 * each finished replication. A SIGINT or SIGTERM caught by app_stop_install stops it at the next
 * replication boundary: the replications under way finish, no more start; nreps is then the
 * finished ones (a prefix first..first+nreps-1, later ones are dropped) and interrupted the signal. */
typedef struct app_progress app_progress;
typedef struct app_run_out {
  sim_results *reps; /* [count]: replication first + i */
  double *values;    /* [count][nmetrics] */
  double wall_s;
  int threads;
  int ranks;
  int spread;       /* APP_SPREAD_REPS or APP_SPREAD_MODEL: what ran */
  int first, count; /* the replications asked for: [first, first + count) */
  int nreps;        /* replications finished: count unless interrupted */
  int interrupted;  /* the signal that stopped the run, or 0 */
} app_run_out;
/* The spread a run of `l` on this many ranks will use, and one line saying why (why may be NULL). */
int app_spread_choose(const app_loaded *l, int ranks, char *why, size_t len);
int app_run_reps(app_loaded *l, app_progress *prog, app_run_out *o);
void app_run_out_free(app_loaded *l, app_run_out *o);

/* 1 when `pf` is a whole results file (its checksum) of the very run that `l` would make: the same
 * effective scenario (every key, the point's values among them), seed, replications and metrics
 * (names[0..nm)); its metrics are then copied to dst[reps][nm]. 0 otherwise (no file, another run,
 * damaged). Sweeps and experiments resume with it, skipping the points already done. */
int app_point_reusable(const char *pf, const app_loaded *l, char *const *names, unsigned nm, double *dst);

/* Writes the results file for a run (rank 0): its o->nreps replications, marked interrupted
 * (/meta interrupted, reps_requested) when o->interrupted. */
int app_write_results(const char *path, app_loaded *l, app_run_out *o);
/* Prints the summary table of a finished run (rank 0): the headline metrics, or all of them. */
void app_print_summary(FILE *f, app_loaded *l, app_run_out *o, int all);

#endif
