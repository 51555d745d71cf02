/* lab.h - spotlab's lab mode: real jobs on real (or CPU-emulated) workers, every decision made by
 * the same scheduling core (models/sched/sched.h) that the simulator drives.
 *
 * A job file (libconfig syntax, parsed through sim/param.h so every problem is FILE:LINE) names
 * the workers, the fault-tolerance policy, the jobs (built-in kernel jobs from kernels/ sized by a
 * work amount, or shell commands) and the faults to inject. The runner forks one worker process
 * per worker; workers talk to it over pipes (heartbeats, progress, checkpoints, done/failed). The
 * runner turns what it hears into sched events, with its monotonic clock as the time, and carries
 * out the core's decisions. It keeps an append-only journal of the events it handed to the core
 * (fsync'd at each state change): the core is deterministic, so replaying the journal into a fresh
 * core rebuilds its state, which is how `--resume` continues after the runner itself was killed.
 *
 * Results go to the HDF5 layout of simulated runs (docs/results-format.md): a `jobs` table and
 * headline metrics. `also_simulate` replays the same job file through the engine (sim_run) with
 * the workers' measured speeds and the same fault schedule, the same core deciding, and reports
 * simulated and real makespan and completion times side by side.
 *
 * Errors are negative lab_err codes (lab_strerror). Bad job files are reported to a sim_diag.
 */
#ifndef LAB_LAB_H
#define LAB_LAB_H

#include "sim/errors.h"
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "sim/model_class.h"
#include "sim/param.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum lab_err {
  LAB_OK = 0,
  LAB_ENOMEM = SPOTLAB_ENOMEM,         /* out of memory */
  LAB_EINVAL = SPOTLAB_EINVAL,         /* invalid argument */
  LAB_EIO = SPOTLAB_EIO,               /* a file (journal, results, job output) could not be read or written */
  LAB_ECONFIG = SPOTLAB_ECONFIG,       /* the job file has errors (already reported with FILE:LINE) */
  LAB_ESYS = SPOTLAB_ELAB_SYS,         /* a system call failed (fork, pipe, poll) */
  LAB_EJOURNAL = SPOTLAB_ELAB_JOURNAL, /* the journal is damaged or belongs to another job file */
  LAB_ESCHED = SPOTLAB_ELAB_SCHED,     /* the scheduling core rejected an event (a bug in the glue) */
  LAB_ETIMEOUT = SPOTLAB_ELAB_TIMEOUT, /* the lab ran past lab.time_limit with jobs unfinished */
  LAB_ESTOPPED = SPOTLAB_ELAB_STOPPED, /* a write of the lab's own files (journal, a job's output) failed mid-run:
                                          the lab stopped, no job was counted failed, --resume continues */
} lab_err;
const char *lab_strerror(int err);

/* ---- The job file --------------------------------------------------------------------------- */
typedef enum lab_action { LAB_FAULT_KILL = 0, LAB_FAULT_STALL, LAB_FAULT_SLOW } lab_action;
/* What the workers compute kernel chunks on (lab.device). */
typedef enum lab_device { LAB_DEVICE_CPU = 0, LAB_DEVICE_GPU, LAB_DEVICE_AUTO } lab_device;

typedef struct lab_job_def {
  char *name;    /* unique */
  char *kernel;  /* "triad", "gemm", "mlp", or "" for a command job */
  char *command; /* run with /bin/sh -c, or "" for a kernel job */
  double work;   /* kernel: seconds at speed 1.0 on one CPU thread; command: estimate */
  double at;     /* submission time, s after the lab starts */
  int64_t seed;  /* kernel inputs */
  int64_t width; /* kernel: workers per run (data-parallel), 1 = one worker */
  int strategy;  /* width > 1: how the members share the chunks (krn_split: even, weighted, dynamic) */
  /* services (a job with a `trace`): requests from the trace, served by autoscaled replicas */
  char *trace;                        /* the GenAI request trace ("" = not a service) */
  double trace_start;                 /* trace s where the stream starts */
  double time_scale;                  /* trace s per lab s */
  int64_t requests;                   /* requests taken from the trace */
  double work_scale;                  /* lab work s (at speed 1) per trace exec_time_seconds */
  int64_t min_replicas, max_replicas; /* replicas the core may scale between */
  double target_util;                 /* autoscaling target utilisation */
  double load_window;                 /* s over which the offered load is measured */
} lab_job_def;

typedef struct lab_fault_def {
  double at; /* s after the lab starts */
  int64_t worker;
  int action;      /* lab_action */
  double factor;   /* SLOW: new speed factor (0, 1] */
  double duration; /* STALL: how long (0 = for good) */
} lab_fault_def;

typedef struct lab_random_def {
  double rate;             /* faults per worker per second (Poisson), 0 = none */
  int action;              /* lab_action */
  double until;            /* no random fault after this time */
  double factor, duration; /* as in lab_fault_def */
} lab_random_def;

typedef struct lab_settings {
  int64_t workers; /* CPU worker processes */
  double *speeds;  /* duty cycle per worker (one value = all) */
  size_t nspeeds;
  int64_t threads; /* OpenMP threads per worker */
  int device;      /* lab_device: "cpu", "gpu" (error if none is usable), "auto" (GPU if usable) */
  double *gpu_sms; /* per worker (one value = all): green-context partition of that many SMs, 0 = the
                      whole GPU */
  size_t ngpu_sms;
  char *policy_text; /* the key: a row of the core's policy table, or rows joined by + */
  int policy;        /* sched_policy, parsed from policy_text (a combination is its own value) */
  int64_t replicas, standby;
  double heartbeat;         /* s between heartbeats */
  double heartbeat_timeout; /* s of silence before the core declares a worker lost */
  double ckpt_interval;     /* s between checkpoints (policy checkpoint) */
  int64_t max_restarts;     /* interruptions before a job is given up */
  double respawn;           /* s after a kill before the worker comes back; 0 = never */
  double time_limit;        /* the lab stops (LAB_ETIMEOUT) after this long */
  double calibrate;         /* s each worker spends measuring its speed */
  double predict_calibrate; /* --predict: s of each calibration measurement */
  int64_t predict_rounds;   /* --predict: measurements averaged per figure */
  int verify;               /* kernel jobs: check the output against the reference at the end */
  int64_t seed;             /* the core's generator and the random faults */
  double scale_cooldown;    /* services: no scale-down sooner than this after the last scaling */
  lab_random_def random;
} lab_settings;

typedef struct lab_config {
  lab_settings lab;
  lab_job_def *jobs;
  size_t njobs;
  lab_fault_def *faults;
  size_t nfaults;
  char *path;               /* the job file */
  char *text;               /* its text (stored with the results) */
  char *effective;          /* every key's effective value */
  const char *command_line; /* how the lab was started, for the results' /meta (not owned; NULL: unknown) */
  char workers_at[512];     /* "FILE:LINE" of lab.workers (the file alone if absent): more than the real
                               runner forks is its error, not the twin's */
  char device_at[512];      /* "FILE:LINE" of lab.device (the file alone if absent), for the runner's
                               "no usable GPU" error */
} lab_config;

/* Loads and validates a job file; problems go to d as FILE:LINE messages (LAB_ECONFIG). */
int lab_config_load(const char *path, sim_diag *d, lab_config **out);
int lab_config_load_string(const char *text, const char *name, sim_diag *d, lab_config **out);
void lab_config_free(lab_config *c);
/* `spotlab lab --keys`: every key of the job file. */
void lab_config_describe(FILE *f);

/* ---- Calibration (`spotlab lab --predict`) -------------------------------------------------------
 * What the prediction is made from, measured before the lab runs (lab_predict.c) and stored beside
 * the journal as JOURNAL.calib.csv, in the kernels' calibration layout (`key,value,unit,device,note`,
 * '#' comments), so that a market scenario can name it in market.calibration. Keys (docs/lab.md):
 *   workers, calibrate_s, host_load_1min
 *   chunk_s.KERNEL      seconds per chunk execution, full speed, alone (the chunking's unit)
 *   setup_s.KERNEL      a run's start: the job's inputs made, its output opened
 *   finish_s.KERNEL     a run's end: output synced, read back and verified (lab.verify)
 *   sync_s.KERNEL       one checkpoint (fdatasync of the output)
 *   alone.KERNEL.I      worker I alone: chunk executions per second (at its lab.speeds)
 *   together.KERNEL.K.I worker I while workers 0..K-1 all run KERNEL (K >= 2)
 *   colocated_speed_factor_K   f(K) learned from the above (sched_coloc_learn)
 *   slowed.KERNEL.I@F   worker I alone at duty cycle F (a `slow` fault of the job file)
 *   rounds              measurements averaged per figure (interleaved)
 *   command_s.JOB, command_exit.JOB   one calibration run of command job JOB: seconds, exit status
 */
#define LAB_CALIB_MAX_WORKERS 64
#define LAB_CALIB_KERNELS 3 /* triad, gemm, mlp (krn_kernel) */
typedef struct lab_calib {
  size_t nworkers;
  double calibrate_s;                 /* seconds of each speed measurement */
  double load1;                       /* 1-minute load average when measured (NaN: unknown) */
  int kernel_used[LAB_CALIB_KERNELS]; /* per krn_kernel: measured */
  double chunk_s[LAB_CALIB_KERNELS];  /* per kernel, as in the file */
  double setup_s[LAB_CALIB_KERNELS], finish_s[LAB_CALIB_KERNELS], sync_s[LAB_CALIB_KERNELS];
  double alone[LAB_CALIB_KERNELS][LAB_CALIB_MAX_WORKERS];                           /* chunks / s */
  double together[LAB_CALIB_KERNELS][LAB_CALIB_MAX_WORKERS][LAB_CALIB_MAX_WORKERS]; /* [kernel][K-1][I], 0 = none */
  unsigned ncoloc;                                                                  /* f(1..ncoloc) */
  unsigned hosts;  /* the hosts (MPI ranks) the workers were measured on, in blocks: worker i on host
                     i x hosts / nworkers; contention is between workers of one host (1 = one host) */
  unsigned rounds; /* each measurement is the mean of this many, interleaved (load drifts) */
  size_t nslow;    /* a `slow` fault's duty cycle, measured: worker alone at `factor` */
  struct {
    int kernel, worker;
    double factor, rate; /* rate: chunks / s */
  } slow[LAB_CALIB_MAX_WORKERS];
  double coloc[LAB_CALIB_MAX_WORKERS];
  size_t njobs;  /* entries of cmd_s / cmd_exit (the job file's jobs) */
  double *cmd_s; /* per job: a command job's calibration run, s (NaN: none or not a command) */
  int *cmd_exit; /* per job: its exit status (128 + N for signal N) */
} lab_calib;

/* An empty calibration for a job file (cmd_s NaN); NULL when out of memory. */
lab_calib *lab_calib_create(const lab_config *cfg);
void lab_calib_free(lab_calib *c);
/* The host of worker i (blocks, as the runner spreads workers over MPI ranks). */
static inline unsigned lab_calib_host(const lab_calib *c, size_t i) {
  return c->nworkers ? (unsigned)(i * (c->hosts ? c->hosts : 1) / c->nworkers) : 0;
}
/* Learns f(k) from alone / together (sched_coloc_learn) into c->coloc, c->ncoloc, k counted among
 * the workers of one host. 0 or LAB_EINVAL. */
int lab_calib_learn(lab_calib *c);
/* Writes / reads the file. Read: every problem is "FILE:LINE: message" in err (LAB_ECONFIG), and a
 * file that does not cover the job file (other worker count, a kernel or command job of the file
 * not calibrated) is "FILE: message". 0 or a negative lab_err. */
int lab_calib_write(const char *path, const lab_config *cfg, const lab_calib *c, char *err, size_t errlen);
int lab_calib_load(const char *path, const lab_config *cfg, lab_calib **out, char *err, size_t errlen);

/* ---- Running -------------------------------------------------------------------------------- */
typedef struct lab_opts {
  const char *journal;     /* journal path (required) */
  const char *out;         /* HDF5 results, or NULL */
  int resume;              /* 1: continue the lab recorded in `journal` */
  int also_simulate;       /* 1: also run the job file through the simulator */
  int verbose;             /* 1: one line per decision on `log` */
  FILE *log;               /* progress and the report (stdout usually), or NULL */
  int use_mpi;             /* 1: collective over MPI_COMM_WORLD: rank 0 runs the core and the
                              journal, every rank runs its block of the workers */
  int predict;             /* 1: calibrate, predict through the twin with the calibration only, then run */
  const char *calibration; /* predict from this calibration file instead of measuring (NULL: measure,
                              or on --resume reuse JOURNAL.calib.csv when it exists) */
} lab_opts;

/* Per-job outcome of a lab (or of its simulation). */
typedef struct lab_job_result {
  int outcome;               /* sched_reason of the END (COMPLETED, GAVE_UP), or -1 if none */
  int ends;                  /* END decisions seen for the job (exactly 1 when all went well) */
  int finishes;              /* runs that completed the job's work (FINISH events accepted) */
  double submit, start, end; /* s since the lab started */
  unsigned restarts, runs;
  int exit_status;       /* command jobs: last exit status (-1 none, 128+N killed by N) */
  char stderr_tail[512]; /* command jobs: the end of stderr of the last failed run */
  char workers[64];      /* workers that ran it, e.g. "0,2" */
  /* services (service = 1) */
  int service;
  unsigned req_total, req_arrived, req_served, req_lost; /* the stream; arrived; served; lost to faults */
  double lat_p50, lat_p99;                               /* request latency (served - arrival), s, nearest rank */
  unsigned rep_min, rep_max, rep_final;                  /* replicas over the service's life; at its end */
  double rep_mean;                                       /* time-weighted mean replicas */
} lab_job_result;

typedef struct lab_report {
  size_t njobs;
  lab_job_result *jobs; /* njobs, in job-file order */
  lab_job_result *sim;  /* njobs, when also_simulate; NULL otherwise */
  lab_job_result *pred; /* njobs, when predict: the twin run from the calibration before the lab */
  double makespan, sim_makespan, pred_makespan;
  unsigned pred_losses;  /* workers the core declared lost in the prediction */
  char calib_path[4200]; /* the calibration the prediction used */
  double calib_load1;    /* its load average */
  double *scores;        /* worker speeds measured alone before the lab (work units / s) */
  double *observed;      /* worker speeds observed from progress during the lab (NaN: too
                              little seen); the simulated twin uses these where known */
  size_t nworkers;
  unsigned completed, failed;
  unsigned worker_losses; /* workers the core declared lost */
  unsigned resumed;       /* 1 if this run continued a journal */
  char device[256];       /* the GPU probe's answer: "1 NAME..." or "0 why there is none" */
  char lab_device[8];     /* what the workers computed on: "cpu" or "gpu" (lab.device resolved) */
  char (*executors)[128]; /* per worker: its executor, e.g. "cpu, 1 thread", "NVIDIA H200, 16 of 132 SMs" */
} lab_report;
void lab_report_free(lab_report *r);

/* Runs the lab to the end of every job. 0, or a negative lab_err (the report holds what is known). */
int lab_run(const lab_config *cfg, const lab_opts *o, lab_report *rep);

/* Prints the per-job table (and simulation side by side when present). */
void lab_report_print(FILE *f, const lab_config *cfg, const lab_report *r);

/* Error statistics of a prediction (--predict): completion = end - submit, over the jobs that
 * ended in both the prediction and the lab; NaN without one. */
typedef struct lab_pred_stats {
  size_t n;            /* jobs compared */
  double mae;          /* mean |predicted - real completion|, s */
  double mae_pct;      /* the same, % of the real makespan */
  double max;          /* largest |predicted - real completion|, s */
  double makespan_pct; /* (predicted - real makespan) / real makespan, % */
} lab_pred_stats;
void lab_pred_stats_get(const lab_report *r, lab_pred_stats *out);

/* The lab's metrics (their catalogue: `spotlab metrics --model lab`), n of them. */
const sim_metric_def *lab_metric_defs(unsigned *n);
/* Writes the report in the HDF5 results layout. 0 or LAB_EIO with a message in err. */
int lab_results_write(const char *path, const lab_config *cfg, const lab_report *r, double wall_s, char *err,
                      size_t errlen);

/* The simulated twin of a lab: the job file, the measured worker scores, per kernel job its
 * number of chunk executions (checkpoint granularity; 0 for command jobs), and per command job
 * the duration of its last real run (s, NaN = unknown: `work` is used) and whether that run
 * failed. Runs one engine LP that holds a fresh scheduling core. Fills sim[njobs], *makespan.
 * A job file with a service: LAB_EINVAL (the twin needs its request stream, which the runner
 * builds: lab_run's --also-simulate and --predict give it). The twin takes job files of up to 512
 * workers (a job 256 GPUs wide, say), where lab_run forks at most 64 worker processes. */
int lab_simulate(const lab_config *cfg, const double *scores, const size_t *nchunks, const double *cmd_seconds,
                 const int *cmd_failed, lab_job_result *sim, double *makespan);

#ifdef __cplusplus
}
#endif
#endif
