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
  const char *name; /* "quantity" or "quantity.dimension.value", e.g. "income_cv.persona.katie" */
  const char *unit; /* e.g. "USD/h", "1", "s" */
  const char *help;
  int headline; /* 1: shown in the short table `spotlab run` prints (all are stored) */
  /* The catalogue (`spotlab metrics`, docs/metrics.md, the results' /metrics attributes labels,
   * formulas, over, weights, censored); NULL: not stated. */
  const char *label;    /* words for figures: "total spend per useful GPU-hour" */
  const char *formula;  /* how it is computed, in words */
  const char *over;     /* the population: "submitted jobs", "completed jobs", "provider-hours", ... */
  const char *weight;   /* how it is weighted: "per job", "per billed GPU-hour", ... */
  const char *censored; /* what happens to jobs (or providers) still running when the run ends */
} sim_metric_def;

typedef struct sim_model_class {
  const char *name;
  const char *help;        /* one line for `spotlab keys` / `spotlab run --help` */
  const sim_param *params; /* keys of the group named `name` */
  size_t params_size;      /* sizeof the struct that `params` describes */
  /* Cross-field checks after parsing; report with sim_param_error. 0 or SIM_ECONFIG. May be NULL. */
  int (*validate)(const void *cfg, const sim_scenario *s, sim_diag *d);
  /* Builds the model (once; replications share it, read-only). Data files named in the scenario
   * are found with sim_data_find (sim/datapath.h), starting in the scenario's folder (`base_dir`).
   * end_time is `run.end`, in seconds.
   * Reports problems to d and returns SIM_ECONFIG, or another sim_err. */
  int (*build)(const void *cfg, sim_time end_time, const char *base_dir, const sim_scenario *s, sim_diag *d,
               sim_model *out);
  void (*destroy)(sim_model *m);
  /* Headline metrics of one replication (rank 0), averaged over replications with 95% CIs:
   * the class's fixed list, or, when model_metrics is set, the built model's own list (names that
   * depend on the scenario, such as one metric per persona the scenario defines). */
  const sim_metric_def *metrics;
  unsigned nmetrics;
  void (*compute_metrics)(const sim_model *m, const sim_results *r, double *out);
  /* End-of-run invariant checks (money conserved, ...): 0, or non-zero with a message. May be NULL. */
  int (*check)(const sim_model *m, const sim_results *r, char *msg, size_t len);
  /* May be NULL. The metric list of a built model (owned by it, valid until destroy); overrides
   * metrics/nmetrics. compute_metrics then fills that many values. */
  const sim_metric_def *(*model_metrics)(const sim_model *m, unsigned *n);
  /* May be NULL. Bytes one replication's model state will take (LPs, their states, pending events,
   * what handlers allocate), estimated from the validated keys alone, before building: `check`
   * and `run` refuse a scenario whose replications in flight need more than the machine gives a
   * process, instead of an allocation failing mid-run. */
  double (*memory_estimate)(const void *cfg);
} sim_model_class;

#endif
