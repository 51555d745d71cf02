/* lab_internal.h - what the lab's files share: the worker process and its line protocol, and the
 * shape of kernel jobs. Not part of the public API.
 *
 * Runner -> worker, one line each:
 *   C SECONDS [KERNEL [PATH]]       measure speed for SECONDS on KERNEL's chunks (default gemm),
 *                                   writing them to PATH as a run writes its output;
 *                                   answer "C RATE" (chunks/s)
 *   V KERNEL VERIFY PATH            a kernel run's fixed costs at full speed (--predict); answer
 *                                   "V SETUP SYNC FINISH" (s)
 *   K JOB RUN KERNEL NCHUNKS START WPC SEED VERIFY PATH   run a kernel job from chunk START
 *   X JOB RUN COMMAND...            run a command job (/bin/sh -c COMMAND...)
 *   P JOB RUN                       checkpoint the run
 *   T JOB RUN                       stop the run
 *   S FACTOR                        new speed factor (duty cycle)
 *   Q                               is a GPU usable? answer "Q 1 NAME, N SMs, ..." or "Q 0 WHY"
 *   E SPEC                          compute kernel chunks on executor SPEC from now on (krn_exec_open:
 *                                   cpu, gpu, gpu:SMS); answer "E 1 DESCRIPTION" or "E 0 WHY" (then
 *                                   the worker has no executor and its kernel runs fail with WHY)
 * Worker -> runner:
 *   H                               heartbeat (every lab.heartbeat)
 *   G JOB RUN PGID                  a command job's process group (killed if the worker dies)
 *   W JOB RUN WORK                  progress: work units done by the run so far
 *   K JOB RUN WORK                  checkpoint written: work units durable
 *   D JOB RUN                       the run completed the job
 *   F JOB RUN EXIT SIGNAL TAIL      the run failed (exit status, signal, stderr tail escaped)
 *   I JOB RUN WHY                   the run's output file could not be opened, written, synced or
 *                                   read back (full disk, I/O error): the lab's failure, not the
 *                                   job's; the runner stops the lab (LAB_ESTOPPED)
 * Lines are written with one write() of at most LAB__LINE bytes (< PIPE_BUF: atomic). */
#ifndef LAB_LAB_INTERNAL_H
#define LAB_LAB_INTERNAL_H

#include <stdarg.h>
#include <stdio.h>
#include <sys/types.h> /* pid_t */

#include "kernels/krn.h"
#include "lab/lab.h"
#include "models/sched/sched.h"

#define LAB__LINE 1024
/* One protocol line: fmt formatted into b (cap bytes), cut to fit, and a newline added; its length,
 * or -1 when fmt could not be formatted. The runner's lines and the worker's are made alike. */
static inline int lab__line_vformat(char *b, size_t cap, const char *fmt, va_list ap) {
  int n = vsnprintf(b, cap - 1, fmt, ap);
  if (n < 0) return -1;
  if ((size_t)n > cap - 2) n = (int)cap - 2;
  b[n++] = '\n';
  return n;
}
/* Most worker processes the real runner forks (its tables and the calibration's are sized by it):
 * a job file of more is refused by lab_run (FILE:LINE, exit 2). The simulated twin (lab_sim.c,
 * lab_simulate) plays up to LAB__MAX_TWIN_WORKERS, the bound of lab.workers in lab_config.c: a job
 * as wide as a large training run (256 GPUs) is predicted from a job file alone. */
#define LAB__MAX_WORKERS 64
#define LAB__MAX_TWIN_WORKERS 512
/* Longest command a job may have: LAB__LINE less "X JOB RUN " and the newline. */
#define LAB__MAX_COMMAND 960
#define LAB__ENV_MARK "SPOTLAB_LAB_JOURNAL" /* every process of a lab carries its journal's path */
#define LAB__NAME_CHARS "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-" /* job names */
#define LAB__TAIL 400

/* The shape of every kernel job of kernel k: LAB__DISTINCT distinct chunks of a fixed size; a job
 * of N chunk executions runs chunk c % LAB__DISTINCT as its c-th (see lab_worker.c). */
#define LAB__DISTINCT 16
void lab__kernel_dims(krn_kernel k, krn_dims *d);
/* Calibration kernel job (gemm, a few chunks) used to measure worker speeds. */
void lab__calib_dims(krn_dims *d);

/* Body of a worker process (after fork): never returns. */
void lab__worker_main(pid_t runner, int id, int rfd, int wfd, double speed, int threads, double heartbeat)
    __attribute__((noreturn));

/* One fault to inject: the scheduled ones and the random ones (a Poisson process per worker
 * from lab.seed), merged and sorted by time. The real lab and its simulated twin share it. */
typedef struct lab__fault {
  double at;
  int worker, action;
  double factor, duration;
} lab__fault;
int lab__faults(const lab_config *c, lab__fault **out, size_t *n);

typedef struct lab__svc lab__svc; /* a service's requests (below) */

/* The simulated twin's inputs (lab_sim.c). `--also-simulate` fills them from what the lab observed,
 * `--predict` from the calibration only. */
typedef struct lab__twin_in {
  const double *scores;                      /* per worker: the score it joins the core with (work units / s) */
  const double *rate;                        /* [i * njobs + j]: worker i's work units / s on kernel job j, alone, at
                                its lab.speeds */
  const size_t *nchunks;                     /* per job: chunk executions (checkpoint granularity; 0 = command) */
  const double *cmd_seconds;                 /* per command job: how long a run takes (NaN: `work` at the score) */
  const int *cmd_failed;                     /* per command job: a run fails */
  const double *setup_s, *finish_s, *sync_s; /* per kernel job: a run's fixed costs at full speed
                                alone (start, end, one checkpoint), s; NULL = none */
  const sched_cluster_params *coloc;         /* contention between the workers, NULL = none */
  double join_delay;                         /* s between a respawn and the worker's join (its calibration) */
  const double *slow_ratio;                  /* [f * KRN_NKERNELS + k]: measured speed ratio of `slow` fault f (in
                               lab__faults order) on kernel k; 0 or NULL = the nominal ratio */
  const lab__svc *svc;                       /* per job: a service's request stream (job -1: not a service);
                                                NULL = the lab has no service */
  const int *host; /* per worker: its host (MPI rank); contention is between the workers of one
                      host. NULL = one host */
} lab__twin_in;
/* lab_simulate with the services' request streams (NULL: none). */
int lab__simulate_observed(const lab_config *cfg, const double *scores, const size_t *nchunks,
                           const double *cmd_seconds, const int *cmd_failed, const lab__svc *svc, lab_job_result *sim,
                           double *makespan);
int lab__simulate(const lab_config *cfg, const lab__twin_in *in, lab_job_result *sim, double *makespan,
                  unsigned *losses);

/* The scheduling core as the runner and the twin both set it up (lab_core.c): its configuration
 * from the job file, and an event's content (GPU_JOIN: the worker's GPU, JOB_ARRIVE: the job's
 * spec, svc[job] a service's stream; other types carry only their fields). */
void lab__core_config(const lab_config *cfg, sched_sink sink, void *ctx, sched_config *sc);
void lab__core_event(const lab_config *cfg, const lab__svc *svc, sched_event *ev, int type, double t, uint32_t gpu,
                     uint32_t job, uint32_t run, double value);

/* Kernel jobs wider than one worker (lab_wide.c): a run's chunk executions cut into pieces that
 * its members run one at a time, by strategy. The runner and the twin share it. */
#define LAB__MAX_WIDTH LAB__MAX_TWIN_WORKERS /* workers per run (job key `width`, at most lab.workers) */
#define LAB__MAX_REPLICAS 8                  /* a service's replicas (min_replicas, max_replicas) */
#define LAB__PIECES_PER_MEMBER 8             /* pieces a run is cut into, per member */
typedef struct lab__wide {
  int strategy;                    /* krn_split (kernels/krn_split.h) */
  size_t first, nchunks;           /* the run does chunk executions [first, nchunks) */
  size_t piece, npieces;           /* executions per piece (the last may be shorter), pieces */
  unsigned char *state;            /* per piece: 0 to do, 1 running, 2 done (durable) */
  int *owner;                      /* per piece: the member slot it belongs to (even, weighted) */
  unsigned n;                      /* members */
  uint32_t member[LAB__MAX_WIDTH]; /* slot -> worker */
  long cur[LAB__MAX_WIDTH];        /* slot -> piece it runs, -1 = none */
  int verifying;                   /* slot + 1 of the member doing the last step (the last execution again and
                                   the output verified); 0 = not sent */
} lab__wide;
/* 0, LAB_EINVAL or LAB_ENOMEM. weight[n]: the members' speeds (weighted), NULL = equal. */
int lab__wide_init(lab__wide *x, int strategy, size_t first, size_t nchunks, const uint32_t *members,
                   const double *weight, unsigned n);
void lab__wide_free(lab__wide *x);
/* The runs of wide jobs, in slots (the runner's and the twin's: njobs x SCHED_MAX_RUNS of them). */
typedef struct lab__wslot {
  long job, run; /* job -1 = a free slot */
  int ckpt;      /* runner: the core asked for a checkpoint, answered after its event (the sink must
                    not call it) */
  lab__wide x;
} lab__wslot;
/* The slot of run `run` of job `job`, NULL if none; drop: frees it (run < 0: every run of the job). */
lab__wslot *lab__wslot_find(lab__wslot *v, size_t n, long job, long run);
lab__wslot *lab__wslot_unused(lab__wslot *v, size_t n); /* a free slot, NULL if none */
void lab__wslot_drop(lab__wslot *v, size_t n, long job, long run);
int lab__wide_slot(const lab__wide *x, uint32_t gpu); /* the worker's slot, -1 = not a member */
long lab__wide_next(lab__wide *x, unsigned slot);     /* the next piece for slot (now running), -1 = none */
void lab__wide_span(const lab__wide *x, long piece, size_t *a, size_t *b); /* executions [a, b) */
void lab__wide_done(lab__wide *x, unsigned slot);                          /* slot's piece is done */
void lab__wide_replace(lab__wide *x, uint32_t old, uint32_t gpu);          /* REPLACE: its piece is to do again */
size_t lab__wide_prefix(const lab__wide *x); /* durable: first + the leading done pieces */
int lab__wide_all_done(const lab__wide *x);
/* What member `slot` does next (the runner and the twin alike): its next piece, executions [a, b);
 * or, once every piece is done, the last step for one member, the run's last execution once more
 * and the output verified [n - 1, n) (only with verify); or nothing (its share is done, or nothing
 * is left to take: it waits); or DONE, every piece done and no last step (the run is finished). */
enum { LAB_TAKE_WAIT = 0, LAB_TAKE_PIECE, LAB_TAKE_VERIFY, LAB_TAKE_DONE };
int lab__wide_take(lab__wide *x, unsigned slot, int verify, size_t *a, size_t *b);

/* An inference service of a lab (lab_svc.c): its request stream from the GenAI trace, its FIFO
 * queue, its load samples and statistics. The runner and the twin keep one each, alike. */
enum { LAB_REQ_FUTURE = 0, LAB_REQ_QUEUED, LAB_REQ_SERVING, LAB_REQ_SERVED, LAB_REQ_LOST };
struct lab__svc {
  long job;             /* its job, -1 = none */
  size_t n;             /* requests of the stream */
  double *arrive;       /* per request: arrival, lab s */
  size_t *nch;          /* per request: chunk executions of its kernel */
  unsigned char *state; /* per request: LAB_REQ_* */
  double *done_t;       /* per request: when it was served */
  size_t narrived, nserved, nlost;
  double chunk_s;                 /* work units of one chunk execution (its seconds at speed 1) */
  double req_per_score_s;         /* requests one unit of score serves per second (the core's model) */
  double window;                  /* load_window, s */
  double t0, next_load;           /* the service's `at`; the next load sample */
  double rep_t, rep_t0, rep_area; /* replica count integrated over time (NaN: no count yet) */
  unsigned rep_n, rep_min, rep_max;
  int ended;
};
/* Reads job `job`'s request stream (chunk_s: seconds of one chunk of its kernel at speed 1).
 * 0, LAB_EIO (the trace: message in err), LAB_ECONFIG (no request in the window), LAB_ENOMEM. */
int lab__svc_load(const lab_config *cfg, size_t job, double chunk_s, lab__svc *out, char *err, size_t errlen);
int lab__svc_copy(const lab__svc *a, lab__svc *out); /* the same stream, nothing arrived yet */
void lab__svc_free(lab__svc *s);
size_t lab__svc_arrive(lab__svc *s, double t); /* requests arrived by t now queued; how many new */
double lab__svc_next_arrival(const lab__svc *s);
double lab__svc_load_at(const lab__svc *s, double t); /* arrivals in (t - window, t] / window */
long lab__svc_take(lab__svc *s);                      /* the oldest queued request, now serving; -1 none */
void lab__svc_served(lab__svc *s, long k, double t);
void lab__svc_lost(lab__svc *s, long k);    /* its replica was lost (a fault) */
void lab__svc_requeue(lab__svc *s, long k); /* its replica was scaled down: it waits again */
int lab__svc_finished(const lab__svc *s);   /* every request served or lost */
void lab__svc_replicas(lab__svc *s, double t, unsigned n);
/* A SCALE decision d at t: the replica count recorded; 1 when it adds its GPUs as replicas, 0 when
 * it removes them (scaled down, or lost). */
int lab__svc_rescale(lab__svc *s, const sched_decision *d, double t);
/* A replica removed by SCALE decision d while serving request k (-1: none): the request is lost
 * with a lost replica (1), and waits again for a scaled-down one (0). */
int lab__svc_release(lab__svc *s, const sched_decision *d, long k);
void lab__svc_end(lab__svc *s, double t);
void lab__svc_stats(const lab__svc *s, lab_job_result *r);
/* The median and 99th percentile (nearest rank) of n jobs' completion times (end - submit), a
 * job that did not complete counting as infinite (lab_report.c). */
void lab__completions(const lab_job_result *jr, size_t n, double *p50, double *p99);

static inline int lab__is_service(const lab_job_def *j) { return j->trace && j->trace[0]; }

/* Monotonic seconds. */
double lab__now(void);
void lab__sleep(double s);

/* Escapes text for one protocol line (\n -> \\n, others non-printable -> '?', ' ' -> '_'
 * never: spaces are kept, the tail is the last field). */
void lab__escape(const char *in, size_t n, char *out, size_t outlen);
void lab__unescape(char *s);

#endif
