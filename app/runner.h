/* runner.h - load a scenario, build its model, run its replications, write its results.
 * Shared by `spotlab run`, `spotlab check` and sweeps. */
#ifndef APP_RUNNER_H
#define APP_RUNNER_H

#include "sim/model_class.h"
#include "sim/results_io.h"

/* The engine's own scenario keys: group `run`. */
typedef struct app_run_cfg {
  int64_t seed;   /* base seed */
  int64_t reps;   /* replications */
  double end;     /* simulated seconds */
} app_run_cfg;
extern const sim_param app_run_params[];

/* A scenario loaded, validated and built, ready to run. */
typedef struct app_loaded {
  sim_scenario *scn;
  const sim_model_class *cls;
  app_run_cfg run;
  void *cfg;             /* the model's parsed keys */
  sim_model model;
  int built;
  const sim_metric_def *metrics; /* the built model's metrics (the class's, or its own) */
  unsigned nmetrics;
  char *effective;       /* every key's effective value, scenario syntax */
} app_loaded;

/* Loads `path`, applies overrides ("group.key=value"), parses and validates every group and
 * builds the model. Reports to d (FILE:LINE) and returns SIM_ECONFIG on bad input. */
int app_load(const char *path, const char *const *overrides, int noverrides, sim_diag *d, app_loaded *out);
double app_memory_available(void);
void app_unload(app_loaded *l);

/* Runs l->run.reps replications (OpenMP threads on one rank, or one after another over all ranks)
 * and fills reps[] and values[reps][nmetrics] (rank 0). Returns 0, or 1 if a check failed. */
typedef struct app_run_out {
  sim_results *reps;
  double *values;
  double wall_s;
  int threads;
  int ranks;
} app_run_out;
int app_run_reps(app_loaded *l, int progress, app_run_out *o);
void app_run_out_free(app_loaded *l, app_run_out *o);

/* Writes the results file for a finished run (rank 0). */
int app_write_results(const char *path, app_loaded *l, app_run_out *o);
/* Prints the summary table of a finished run (rank 0): the headline metrics, or all of them. */
void app_print_summary(FILE *f, app_loaded *l, app_run_out *o, int all);

#endif
