/* ftsim.h - the `fault_tolerance` model: the scheduling core (models/sched) driven by simulated
 * churning GPUs, to compare fault-tolerance policies side by side.
 *
 * One run holds one independent cluster per (policy, churn level). The GPUs of a churn level are
 * shared by all policies of that level: each GPU LP draws its up/down periods once and tells
 * every policy's scheduler, so policies see the very same churn (common random numbers), and one
 * workload LP sends the same jobs to every cluster. Each scheduler LP holds one `sched` and an
 * executor that plays the jobs out with the GPUs' true speeds. See docs/scheduling.md.
 */
#ifndef MODELS_FTSIM_FTSIM_H
#define MODELS_FTSIM_FTSIM_H

#include "models/churn/churn.h"
#include "models/sched/sched.h"
#include "sim/model_class.h"

#define FTSIM_LEVELS 3 /* churn levels: low, mid, high */

typedef struct ftsim_config {
  int64_t gpus;            /* GPUs per churn level */
  char *policies;          /* comma-separated policy names */
  char *churn_file;        /* FTA fits CSV */
  int churn_dist;          /* exp, weibull, lognormal, gamma */
  char *churn_trace[FTSIM_LEVELS]; /* trace names for low, mid, high */
  double announce_leave;   /* share of departures announced */
  double hb_interval, hb_timeout; /* s */
  double latency;          /* s, every message between LPs (the lookahead) */
  int64_t regions, grades, nodes;
  double delegated_share;  /* nodes that delegate their management */
  /* workload */
  double job_rate;         /* jobs per hour */
  int64_t width_max;
  double job_hours;        /* mean hours on `width` reference GPUs */
  double deadline_slack;   /* deadline = submit + slack x ideal run time */
  double step_s;           /* one synchronous step on reference GPUs, s (0 = no sync) */
  double grad_mb, input_mb, ckpt_mb;
  /* GPUs */
  double price_per_h;      /* USD/h for a reference GPU */
  double bw_mbps, loss_max;
  double degrade_per_day, degrade_factor, degrade_hours;
  double stake;
  /* policies */
  int ckpt_rule;
  double ckpt_interval, gpu_mtbf;
  int64_t standby_k, replicas;
  int bill_cancelled;
  double slow_ratio;
  int net_mode;
  int split;
  char *calibration;       /* kernels calibration CSV, "" = defaults */
  double platform_fee, node_fee, delegation_fee;
  double slash_per_failure, slash_per_down_hour, stake_min;
  double rep_exponent, rep_half_life;
  double billing_interval, progress_interval;
  int64_t max_restarts;
  /* inference service (one per cluster; 0 rps = none) */
  double svc_rps;          /* mean offered load, requests/s */
  double svc_amplitude;    /* daily swing: load = rps (1 + a sin(2 pi t / 1 day)) */
  double svc_req_per_score_s; /* requests/s one unit of compute score serves */
  int64_t svc_min_replicas, svc_max_replicas;
  double svc_load_interval;/* s between load updates */
  double target_util, cooldown, price_per_score_s;
} ftsim_config;

extern const sim_param ftsim_params[];
extern const sim_model_class ftsim_class;

/* Reads kernels calibration (key,value,unit,device,note) into cluster parameters; unknown keys
 * are ignored. 0, or -1 with "FILE:LINE: what" in err. */
int ftsim_calibration_load(const char *path, sched_cluster_params *cp, char *err, size_t len);

/* jobs table record */
typedef struct ftsim_job_rec {
  char policy[16], churn[16];
  uint64_t job;
  int32_t kind;            /* 0 batch, 1 service */
  int32_t width, outcome, restarts, replacements;
  double submit, start, end, deadline;
  double work_gpu_h;       /* job size, reference GPU-hours */
  double gpu_hours;        /* GPU time employed (members and standbys) */
  double lost_gpu_hours;   /* GPU time whose work was discarded or waited on recovery */
  double redundant_gpu_hours; /* GPU time of cancelled copies */
  double cost;             /* USD billed */
} ftsim_job_rec;

typedef struct ftsim_ledger_rec {
  char policy[16], churn[16];
  double billed, provider_income, node_income, delegate_income, platform_income, slashed,
      cancelled_billed;
  uint64_t decisions, gpu_failures, placements, checkpoints, replacements, speculations;
  double svc_offered, svc_served; /* requests */
  double svc_replica_hours, svc_cost;
  uint64_t svc_scale_events;
} ftsim_ledger_rec;

#endif
