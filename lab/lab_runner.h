/* lab_runner.h - what the files of the real runner share (not the twin's: lab_sim.c does not
 * include it). The runner is split by what each part is for:
 *   lab_run.c      lab_run(): the steps of a lab in order, one cleanup ladder, the main loop
 *   lab_proc.c     worker processes: spawn, pipes, signals, burial, the processes' journal mark
 *   lab_glue.c     the core's glue: worker lines and journal records into sched events, the core's
 *                  decisions into messages to the workers (wide runs and services included)
 *   lab_relay.c    ranks other than 0: their workers' lines relayed to rank 0 (MPI)
 *   lab_journal.c  the journal's file: its records written, synced and read back
 *   lab_faults.c   the fault schedule (shared with the twin) and its injection into processes
 *   lab_predict.c  --predict: the workers' calibration measured, then the twin's prediction
 * Calls go one way: lab_run.c -> predict -> glue -> proc, glue -> journal, faults -> proc, relay
 * -> proc; none of them calls lab_run.c or the twin back. */
#ifndef LAB_LAB_RUNNER_H
#define LAB_LAB_RUNNER_H

#include "lab/lab_internal.h"
#include "models/sched/sched.h"

#include <poll.h>
#include <stdio.h>

#define LAB__MAXDEC 64
#define LAB__CTRL_TAG 30000 /* MPI tag of control messages (worker lines use the worker's id) */

typedef struct lab__worker {
  int gid;        /* worker id (= the core's GPU id) */
  int rank;       /* MPI rank that runs its process (0 without MPI) */
  int remote;     /* runs on another rank: pipes and signals go through that rank */
  pid_t pid;      /* 0 = no process; -1 = a live process on another rank */
  int to, from;   /* pipes: runner -> worker, worker -> runner */
  char buf[8192]; /* partial line from the worker */
  size_t blen;
  int joined;        /* the core was told it joined (since its last spawn) */
  int want_join;     /* calibrated, waiting for the core to see it absent before JOIN */
  int stalled;       /* SIGSTOPped */
  double cont_at;    /* SIGCONT then (0 = never) */
  double respawn_at; /* spawn again then (0 = no) */
  double speed;      /* duty cycle now */
  double score;      /* measured speed, work units / s */
  long job, run;     /* assignment, job -1 = none */
  double run_start;  /* when the assignment started (s, lab time) */
  pid_t pgid;        /* a command job's process group, 0 = none */
  char last[256];    /* the last answer lab__ask took */
  double wide_work;  /* a piece of a wide run: the work its last progress line reported (absolute) */
  long svc;          /* a replica of this service job (-1 = none) */
  long req;          /* the request it serves (-1 = none) */
  /* observed speed: work reported / time between consecutive progress reports of one run,
   * divided by the worker's slow-down factor at the time (so `slow` faults are not counted) */
  long pw_job, pw_run;
  double pw_t, pw_work, obs_work, obs_time;
  /* --predict's calibration: the answers of this worker */
  double c_rate;     /* "C": chunks / s */
  int c_got, c_done; /* a "C" answer came; a calibration command run ended */
  int c_status;      /* its exit status */
  double c_end;      /* when it ended (monotonic s) */
  double c_v[3];     /* "V": a run's set-up, checkpoint and end, s */
} lab__worker;

typedef struct lab__dec {
  sched_decision d;
  uint32_t gpus[LAB__MAX_WIDTH];
} lab__dec;

/* A run of a kernel job wider than one worker: its pieces (lab_wide.c). */
typedef lab__wslot lab__wrun;

/* ---- lab_journal.c: the journal's file ------------------------------------------------------ */
typedef struct lab__journal {
  FILE *f;          /* NULL = none (not yet, or closed) */
  const char *path; /* as given (--journal) */
  int failed;       /* a write or sync failed (said once) */
} lab__journal;
/* One record read back: kind 'E' (type, t, gpu, job, run, value), 'N' (ljob, nchunks), 'X' (ljob,
 * status, sig, tail), 'S' (ljob, value = chunk_s), 'Q' / 'q' (ljob, run = the request, value = t). */
typedef struct lab__record {
  char kind;
  int type, status;
  double t, value;
  unsigned gpu, job, run;
  long ljob, sig;
  size_t nchunks;
  const char *tail;
} lab__record;
/* What a record's handler returns besides 0 and the LAB_ codes (passed on as they are): */
enum { LAB__REC_UNREADABLE = 1, LAB__REC_REJECTED = 2 }; /* both LAB_EJOURNAL, with the line */
typedef int (*lab__record_fn)(void *ctx, const lab__record *r);
int lab__journal_outdir(const char *journal, char *outdir, size_t len);           /* JOURNAL.d, made */
int lab__journal_create(lab__journal *j, const lab_config *cfg, size_t nworkers); /* a new one */
int lab__journal_replay(lab__journal *j, const lab_config *cfg, size_t nworkers, lab__record_fn fn, void *ctx);
void lab__journal_put(lab__journal *j, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int lab__journal_sync(lab__journal *j);  /* fflush + fdatasync: 0 or LAB_EIO (said once) */
int lab__journal_close(lab__journal *j); /* synced, then closed */

typedef struct lab__lab {
  const lab_config *cfg;
  const lab_opts *o;
  lab_report *rep;
  sched *s;
  lab__worker *w;
  size_t nw;
  size_t *nchunks; /* per job: kernel chunks (0 = command job) */
  double *wpc;     /* per job: work units per chunk */
  int *arrived;
  double *cmd_seconds; /* per job: duration of its last command run (NaN = none) */
  int *cmd_failed;     /* per job: that run failed */
  lab__fault *faults;
  size_t nfaults, next_fault;
  double ref_rate; /* calibration chunks / s of an unslowed worker */
  double t_origin; /* monotonic clock at lab time t_base */
  double t_base;
  double t_last; /* last event time */
  lab__journal jr;
  char outdir[4096]; /* kernel outputs go here */
  int replaying;
  lab__dec dec[LAB__MAXDEC];
  size_t ndec;
  size_t ended;
  int err;
  int rank, nranks;             /* MPI: rank 0 runs the core, every rank runs its own workers */
  int quit_sent;                /* rank 0: the other ranks were told to quit */
  int calibrating;              /* --predict: worker lines are calibration answers, not events */
  lab_calib *calib;             /* --predict: what the prediction used (NULL otherwise) */
  double *calib_score;          /* --predict: per worker, the score it joins with (the twin's too) */
  int measure;                  /* --predict: the calibration is measured here (not read from a file) */
  double chunk_s[KRN_NKERNELS]; /* per kernel: a chunk's seconds at full speed (the helper's), 0 = unknown */
  int gpu;                      /* the workers compute on the GPU (lab.device resolved): "E SPEC" after each spawn */
  lab__wrun *wide;              /* runs of jobs wider than one worker, njobs x SCHED_MAX_RUNS slots */
  size_t nwide;
  lab__svc *svc; /* per job: a service's requests (job -1: not a service) */
  /* the local workers' pipes to poll: pf[k] is worker idx[k] */
  struct pollfd pf[LAB__MAX_WORKERS];
  size_t idx[LAB__MAX_WORKERS];
} lab__lab;

/* ---- lab_proc.c: worker processes ----------------------------------------------------------- */
double lab__t(lab__lab *L); /* lab time now (never before the last event's) */
void lab__log(lab__lab *L, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void lab__send(lab__worker *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void lab__signal(lab__worker *w, int sig); /* to the worker and its command's process group */
double lab__speed_of(const lab_config *c, size_t i);
int lab__spawn_into(lab__lab *L, lab__worker *w, size_t i); /* a local process for slot w */
int lab__spawn(lab__lab *L, size_t i);                      /* worker i, local or on its rank */
void lab__gpu_spec(const lab_config *c, size_t i, char *out, size_t len);
void lab__bury(lab__worker *w);                            /* reaped, with its command's process group */
void lab__worker_gone(lab__lab *L, size_t i);              /* its process is gone: buried, respawn planned */
double lab__ask(lab__worker *w, char tag, double timeout); /* the first answer `tag`, NaN if none */
nfds_t lab__pollset(lab__lab *L);                          /* L->pf, L->idx: the local workers' pipes */
void lab__mark(const char *journal, char *out, size_t len);
int lab__kill_marked(const char *mark);

/* ---- lab_glue.c: the core's glue -------------------------------------------------------------- */
void lab__sink(void *ctx, const sched_decision *d);
int lab__handle(lab__lab *L, int type, double t, uint32_t gpu, uint32_t job, uint32_t run, double value);
int lab__join(lab__lab *L, size_t i, double t);
void lab__svc_feed(lab__lab *L, lab__svc *sv);
int lab__pump(lab__lab *L, int ms, unsigned *got);
int lab__drain(lab__lab *L, double *t);
int lab__wait_calibration(lab__lab *L, size_t i, double timeout);
int lab__on_record(void *ctx, const lab__record *r); /* a journal record, replayed into the core */

/* ---- lab_relay.c, lab_faults.c, lab_predict.c ------------------------------------------------ */
int lab__relay(lab__lab *L);
void lab__inject(lab__lab *L, const lab__fault *f);
int lab__calibrate_workers(lab__lab *L, lab_calib *c);
double lab__calib_score(const lab_calib *c, size_t i);
int lab__predict(lab__lab *L);

#endif
