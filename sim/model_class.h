/* model_class.h - what a model provides to the `spotlab` command: its scenario keys, how to build
 * a sim_model from them, and the headline metrics of one replication.
 *
 * The scenario names its model at the top level (model = "market";) and gives the model's keys
 * in a group of the same name (market = { ... };). The engine's own keys live in group `run`.
 */
#ifndef SIM_MODEL_CLASS_H
#define SIM_MODEL_CLASS_H

#include "sim/sim.h"
#include "sim/param.h"

typedef struct sim_metric_def {
  const char *name;   /* e.g. "provider_income_cv_katie" */
  const char *unit;   /* e.g. "USD/h", "1", "s" */
  const char *help;
} sim_metric_def;

typedef struct sim_model_class {
  const char *name;
  const char *help;                    /* one line for `spotlab keys` / `spotlab run --help` */
  const sim_param *params;             /* keys of the group named `name` */
  size_t params_size;                  /* sizeof the struct that `params` describes */
  /* Cross-field checks after parsing; report with sim_param_error. 0 or SIM_ECONFIG. May be NULL. */
  int (*validate)(const void *cfg, const sim_scenario *s, sim_diag *d);
  /* Builds the model (once; replications share it, read-only). Files named in the scenario are
   * resolved against the scenario's folder (`base_dir`). end_time is `run.end`, in seconds.
   * Reports problems to d and returns SIM_ECONFIG, or another sim_err. */
  int (*build)(const void *cfg, sim_time end_time, const char *base_dir, const sim_scenario *s,
               sim_diag *d, sim_model *out);
  void (*destroy)(sim_model *m);
  /* Headline metrics of one replication (rank 0), averaged over replications with 95% CIs. */
  const sim_metric_def *metrics;
  unsigned nmetrics;
  void (*compute_metrics)(const sim_model *m, const sim_results *r, double *out);
  /* End-of-run invariant checks (money conserved, ...): 0, or non-zero with a message. May be NULL. */
  int (*check)(const sim_model *m, const sim_results *r, char *msg, size_t len);
} sim_model_class;

#endif
