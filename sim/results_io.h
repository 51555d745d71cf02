/* results_io.h - writing a run's results to HDF5 (layout: docs/results-format.md), and the
 * statistics across replications that go with them. Rank 0 only; the engine's other code and the
 * models never touch HDF5. */
#ifndef SIM_RESULTS_IO_H
#define SIM_RESULTS_IO_H

#include "sim/model_class.h"

#define SIM_RESULTS_FORMAT "spotlab-results"
#define SIM_RESULTS_FORMAT_VERSION 1

typedef struct sim_run_meta {
  const char *model;
  const char *scenario_path;
  const char *scenario_text;
  const char *effective; /* effective configuration text */
  uint64_t seed;         /* base seed */
  int reps, ranks, threads;
  double wall_s, end_s;
  const char *command_line; /* argv, shell-quoted (app_command_line); NULL: "unknown" */
  int interrupted;          /* 1: a signal stopped the run; `reps` are the replications that finished */
  int reps_requested;       /* with interrupted: the replications the run was asked for */
  /* A part of a run (one shard of its replications, `spotlab run --shard`): the file holds `reps`
   * replications from rep_first on, of reps_total; /meta gets part_first and part_count. A whole
   * run has rep_first 0 and reps_total 0 or reps. */
  int rep_first, reps_total;
  const char *spread; /* how the work was spread: "reps", "model" (NULL: not recorded) */
  /* The behavioural assumptions the run used: the keys marked ASSUMPTION, one line each with its
   * value and help (sim_param_dump_tagged), written as /meta/assumptions; NULL: none recorded. */
  const char *assumptions;
} sim_run_meta;

/* Joins part files of one run (written with rep_first/reps_total) into `out`, identical dataset by
 * dataset to the file one process would have written: /meta of the first part (reps the total,
 * spread "merged", merged_parts), /metrics in replication order, /summary recomputed, every
 * /reps/rep_NNNN copied. Refuses (SIM_EFORMAT or SIM_EINVAL, the reason in err) parts of other
 * runs (model, seed, replications, end time, scenario, effective keys, metrics), replications in
 * two parts, replications in none, and damaged or foreign files. */
int sim_results_merge(const char *out, const char *const *parts, int nparts, char *err, size_t errlen);

/* Mean, standard deviation and 95% confidence interval (Student t) of n values. */
typedef struct sim_summary {
  double mean, sd, ci95_lo, ci95_hi;
  int n;
} sim_summary;
void sim_summarize(const double *x, size_t n, size_t stride, sim_summary *out);

/* Writes `path` atomically (PATH.tmp.PID, then rename). values: [reps][nmetrics]. /meta also gets
 * how the file was made (sim/provenance.h). Returns 0 or SIM_EIO with a message in err. */
int sim_results_write(const char *path, const sim_run_meta *meta, const sim_model *m, const sim_results *reps,
                      const sim_metric_def *metrics, unsigned nmetrics, const double *values, char *err, size_t errlen);

/* The run a results file records: its model, the scenario as written and every key's effective
 * value (scenario syntax), the scenario's path when it ran, base seed and replications; whole: 0
 * for one shard of a run. For rerunning the same run with some keys changed (`spotlab compare
 * --robust`). 0, or SIM_EFORMAT / SIM_ENOMEM with the reason in err. */
typedef struct sim_run_record {
  char *model, *scenario, *effective, *scenario_path;
  uint64_t seed;
  int reps, whole;
} sim_run_record;
int sim_results_read_run(const char *path, sim_run_record *r, char *err, size_t errlen);
void sim_run_record_free(sim_run_record *r);

#endif
