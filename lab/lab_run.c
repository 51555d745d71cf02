/* lab_run.c - the lab runner: worker processes, the scheduling core driven by real events, fault
 * injection, and the journal that makes the runner itself restartable.
 *
 * The glue is thin on purpose: every decision (where a job runs, when it is stopped, restarted,
 * checkpointed or given up) comes from sched_handle; this file only turns what the workers say
 * into sched events and the core's decisions into messages to the workers.
 *
 * Journal (append-only text, one record a line, fdatasync'd after every event that changed the
 * core's state, i.e. any event but a heartbeat or a tick that produced no decision):
 *   # spotlab-lab-journal 1 NJOBS NWORKERS HASH   (HASH: FNV-1a of the job file's text)
 *   N JOB NCHUNKS                       the chunking of a kernel job (fixed once, at first start)
 *   E TYPE T GPU JOB RUN VALUE          one event handed to the core (JOIN: VALUE = score;
 *                                       ARRIVE: the spec is rebuilt from the job file)
 *   X JOB EXIT SIGNAL TAIL              why a run failed (before its FAIL event)
 *   R T                                 the runner resumed here
 * Resume replays every E record into a fresh core (decisions are recorded, not carried out):
 * the core is deterministic, so it ends in the state it had when the runner died. The workers of
 * that runner are gone (they die with it, PR_SET_PDEATHSIG), so each GPU the core still holds is
 * reported missed: its run is requeued from its checkpoint by the core's own rules. Jobs the
 * journal shows ended are never started again. */
#include "lab/lab_internal.h"
#include "models/sched/sched.h"
#include "sim/failpoint.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <mpi.h>
#include <libgen.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

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
  FILE *journal;
  const char *journal_path;
  int journal_failed; /* a write failed (reported once) */
  char outdir[4096];  /* kernel outputs go here */
  int replaying;
  lab__dec dec[LAB__MAXDEC];
  size_t ndec;
  size_t ended;
  int err;
  int rank, nranks;    /* MPI: rank 0 runs the core, every rank runs its own workers */
  int calibrating;     /* --predict: worker lines are calibration answers, not events */
  lab_calib *calib;    /* --predict: what the prediction used (NULL otherwise) */
  double *calib_score; /* --predict: per worker, the score it joins with (the twin's too) */
  int gpu;             /* the workers compute on the GPU (lab.device resolved): "E SPEC" after each spawn */
  lab__wrun *wide;     /* runs of jobs wider than one worker, njobs x SCHED_MAX_RUNS slots */
  size_t nwide;
  lab__svc *svc; /* per job: a service's requests (job -1: not a service) */
} lab__lab;

static double lab__t(lab__lab *L) {
  double t = L->t_base + (lab__now() - L->t_origin);
  return t > L->t_last ? t : L->t_last;
}

/* FNV-1a 64 of the job file's text: a journal belongs to one job file. */
static unsigned long long lab__hash(const char *t) {
  unsigned long long h = 0xcbf29ce484222325ULL;
  for (; t && *t; t++) h = (h ^ (unsigned char)*t) * 0x100000001b3ULL;
  return h;
}

static void lab__log(lab__lab *L, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void lab__log(lab__lab *L, const char *fmt, ...) {
  if (!L->o->log || !L->o->verbose || L->replaying) return;
  va_list ap;
  va_start(ap, fmt);
  fprintf(L->o->log, "[%8.3f] ", L->t_last);
  vfprintf(L->o->log, fmt, ap);
  fputc('\n', L->o->log);
  va_end(ap);
  fflush(L->o->log);
}

/* ---- Talking to workers --------------------------------------------------------------------- */
static void lab__send(lab__worker *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void lab__send(lab__worker *w, const char *fmt, ...) {
  if (!w->pid || (!w->remote && w->to < 0)) return;
  char b[LAB__LINE + 64];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(b, sizeof b - 1, fmt, ap);
  va_end(ap);
  if (n < 0) return;
  if ((size_t)n > sizeof b - 2) n = (int)sizeof b - 2;
  b[n++] = '\n';
  if (w->remote) {
    MPI_Send(b, n, MPI_CHAR, w->rank, w->gid, MPI_COMM_WORLD);
    return;
  }
  ssize_t rc;
  do rc = write(w->to, b, (size_t)n);
  while (rc < 0 && errno == EINTR);
  /* EPIPE: the worker died; its silence is how the core will learn it. */
}

/* A control message to the rank that runs remote worker w ("SPAWN", "SIG", "BURY"). */
static void lab__ctrl(const lab__worker *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void lab__ctrl(const lab__worker *w, const char *fmt, ...) {
  char b[256];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(b, sizeof b, fmt, ap);
  va_end(ap);
  if (n > 0) MPI_Send(b, n + 1, MPI_CHAR, w->rank, LAB__CTRL_TAG, MPI_COMM_WORLD);
}

/* Sends a signal to the worker (and to its command's process group first). */
static void lab__signal(lab__worker *w, int sig) {
  if (!w->pid) return;
  if (w->remote) {
    lab__ctrl(w, "SIG %d %d %ld", w->gid, sig, (long)w->pgid);
    return;
  }
  if (w->pgid > 0) kill(-w->pgid, sig);
  kill(w->pid, sig);
}

static double lab__speed_of(const lab_config *c, size_t i) {
  return c->lab.nspeeds == 1 ? c->lab.speeds[0] : c->lab.speeds[i];
}

static int lab__spawn_into(lab__lab *L, lab__worker *w, size_t i) {
  int a[2], b[2];
  if (pipe(a) != 0) return LAB_ESYS;
  if (pipe(b) != 0) {
    close(a[0]);
    close(a[1]);
    return LAB_ESYS;
  }
  if (L->journal) fflush(L->journal);
  if (L->o->log) fflush(L->o->log);
  fflush(stdout);
  fflush(stderr);
  pid_t runner = getpid();
  pid_t pid = fork();
  if (pid < 0) {
    close(a[0]);
    close(a[1]);
    close(b[0]);
    close(b[1]);
    return LAB_ESYS;
  }
  if (pid == 0) {
    /* Only this worker's own pipe ends stay open. */
    for (size_t k = 0; k < L->nw; k++)
      if (L->w[k].pid) {
        close(L->w[k].to);
        close(L->w[k].from);
      }
    if (L->journal) close(fileno(L->journal));
    close(a[1]);
    close(b[0]);
    lab__worker_main(runner, (int)i, a[0], b[1], w->speed, (int)L->cfg->lab.threads, L->cfg->lab.heartbeat);
  }
  close(a[0]);
  close(b[1]);
  fcntl(a[1], F_SETFD, FD_CLOEXEC);
  fcntl(b[0], F_SETFD, FD_CLOEXEC);
  w->pid = pid;
  w->to = a[1];
  w->from = b[0];
  w->blen = 0;
  w->joined = w->want_join = w->stalled = 0;
  w->cont_at = w->respawn_at = 0;
  w->job = -1;
  w->pgid = 0;
  return 0;
}
/* Worker i's executor spec (kernels/krn.h, krn_exec_open): "gpu" for the whole GPU, "gpu:N" for
 * a green-context partition of N SMs (lab.gpu_sms). */
static void lab__gpu_spec(const lab_config *c, size_t i, char *out, size_t len) {
  double sms = c->lab.ngpu_sms == 1 ? c->lab.gpu_sms[0] : c->lab.gpu_sms[i];
  if (sms > 0)
    snprintf(out, len, "gpu:%d", (int)sms);
  else
    snprintf(out, len, "gpu");
}

static int lab__spawn(lab__lab *L, size_t i) {
  lab__worker *w = &L->w[i];
  if (!w->remote) {
    int rc = lab__spawn_into(L, w, i);
    if (rc) return rc;
  } else {
    lab__ctrl(w, "SPAWN %d %.17g", w->gid, w->speed);
    w->pid = -1;
    w->blen = 0;
    w->joined = w->want_join = w->stalled = 0;
    w->cont_at = w->respawn_at = 0;
    w->job = -1;
    w->pgid = 0;
  }
  if (L->gpu) { /* before anything else it is asked: lines are handled in order */
    char spec[32];
    lab__gpu_spec(L->cfg, i, spec, sizeof spec);
    lab__send(w, "E %s", spec);
  }
  return 0;
}

/* The process is gone or must go: reap it, and its command's process group. */
static void lab__bury(lab__worker *w) {
  if (w->remote) {
    if (w->pid) lab__ctrl(w, "BURY %d", w->gid);
    w->pid = 0;
    w->pgid = 0;
    w->job = -1;
    w->stalled = 0;
    return;
  }
  if (w->pgid > 0) kill(-w->pgid, SIGKILL);
  if (w->pid) {
    kill(w->pid, SIGKILL);
    waitpid(w->pid, NULL, 0);
  }
  if (w->to >= 0) close(w->to);
  if (w->from >= 0) close(w->from);
  w->pid = 0;
  w->to = w->from = -1;
  w->pgid = 0;
  w->job = -1;
  w->stalled = 0;
}

/* ---- The core ------------------------------------------------------------------------------- */
static void lab__sink(void *ctx, const sched_decision *d) {
  lab__lab *L = ctx;
  if (L->ndec == LAB__MAXDEC) {
    L->err = LAB_ESCHED;
    return;
  }
  lab__dec *x = &L->dec[L->ndec++];
  x->d = *d;
  unsigned n = d->ngpus < LAB__MAX_WIDTH ? d->ngpus : LAB__MAX_WIDTH;
  for (unsigned i = 0; i < n; i++) x->gpus[i] = d->gpus[i];
  x->d.gpus = x->gpus;
  x->d.ngpus = n;
}

static void lab__add_worker_name(lab_job_result *r, uint32_t g) {
  char one[16];
  snprintf(one, sizeof one, "%s%u", r->workers[0] ? "," : "", g);
  /* a worker that already appears is not repeated */
  char key[18];
  snprintf(key, sizeof key, ",%u,", g);
  char have[80];
  snprintf(have, sizeof have, ",%s,", r->workers);
  if (strstr(have, key)) return;
  if (strlen(r->workers) + strlen(one) < sizeof r->workers) strcat(r->workers, one);
}

static void lab__start_run(lab__lab *L, uint32_t g, uint32_t job, uint32_t run) {
  lab__worker *w = &L->w[g];
  const lab_job_def *jd = &L->cfg->jobs[job];
  w->job = job;
  w->run = run;
  w->run_start = L->t_last;
  w->pgid = 0;
  if (L->nchunks[job]) {
    sched_job_status st;
    sched_job_query(L->s, job, &st);
    /* Resume from the durable progress: whole chunks saved by the last checkpoint. */
    size_t start = (size_t)floor(st.saved_work / L->wpc[job] + 1e-9);
    if (start >= L->nchunks[job]) start = L->nchunks[job] - 1;
    lab__send(w, "K %u %u %s %zu %zu %.17g %llu %d %s/%s.out", job, run, jd->kernel, L->nchunks[job], start,
              L->wpc[job], (unsigned long long)jd->seed, L->cfg->lab.verify, L->outdir, jd->name);
    lab__log(L, "start %s run %u on worker %u from chunk %zu/%zu", jd->name, run, g, start, L->nchunks[job]);
  } else {
    lab__send(w, "X %u %u %s", job, run, jd->command);
    lab__log(L, "start %s run %u on worker %u: %s", jd->name, run, g, jd->command);
  }
}

/* ---- Wide runs: the members share the chunk executions piece by piece (lab_wide.c) ----------- */
static lab__wrun *lab__wide_find(lab__lab *L, long job, long run) {
  return lab__wslot_find(L->wide, L->nwide, job, run);
}
static void lab__wide_drop(lab__lab *L, long job, long run) { lab__wslot_drop(L->wide, L->nwide, job, run); }

/* Hands member `slot` of wide run r its next piece, or, when every piece is done, the last step to
 * one member: the run's last execution once more and the whole output verified (lab.verify). Its
 * "D" is the run's FINISH. Without verify the run is done when its pieces are: 1, else 0. */
static int lab__wide_feed(lab__lab *L, lab__wrun *r, unsigned slot) {
  const lab_job_def *jd = &L->cfg->jobs[r->job];
  lab__worker *w = &L->w[r->x.member[slot]];
  size_t a = 0, b = 0, n = L->nchunks[r->job];
  int t = lab__wide_take(&r->x, slot, L->cfg->lab.verify, &a, &b);
  if (t == LAB_TAKE_DONE) return 1;
  if (t == LAB_TAKE_WAIT) return 0;
  int last = t == LAB_TAKE_VERIFY;
  w->job = r->job;
  w->run = r->run;
  w->run_start = L->t_last;
  w->pgid = 0;
  w->pw_job = -1; /* a new piece: its first progress line is a new baseline for the observed speed */
  lab__send(w, "K %ld %ld %s %zu %zu %.17g %llu %d %s/%s.out %zu", r->job, r->run, jd->kernel, b, a, L->wpc[r->job],
            (unsigned long long)jd->seed, last ? L->cfg->lab.verify : 0, L->outdir, jd->name, last ? n : r->x.first);
  lab__log(L, "%s run %ld: worker %u takes chunks %zu..%zu%s", jd->name, r->run, r->x.member[slot], a, b - 1,
           last ? " and verifies" : "");
  return 0;
}

/* PLACE of a wide run: its pieces from the core's saved work (whole chunks), every member fed. */
static void lab__wide_start(lab__lab *L, uint32_t job, uint32_t run, const uint32_t *gpus, unsigned n) {
  sched_job_status st;
  sched_job_query(L->s, job, &st);
  size_t first = (size_t)floor(st.saved_work / L->wpc[job] + 1e-9);
  if (first >= L->nchunks[job]) first = L->nchunks[job] - 1;
  lab__wrun *r = lab__wslot_unused(L->wide, L->nwide);
  double wt[LAB__MAX_WIDTH];
  for (unsigned m = 0; m < n; m++) wt[m] = L->w[gpus[m]].score;
  if (!r || lab__wide_init(&r->x, L->cfg->jobs[job].strategy, first, L->nchunks[job], gpus, wt, n) != 0) {
    L->err = LAB_ENOMEM;
    return;
  }
  r->job = job;
  r->run = run;
  r->ckpt = 0;
  lab__log(L, "start %s run %u on %u workers (%s) from chunk %zu/%zu, %zu pieces of %zu", L->cfg->jobs[job].name, run,
           n, lab__strategy_names[r->x.strategy], first, L->nchunks[job], r->x.npieces, r->x.piece);
  for (unsigned m = 0; m < n; m++) lab__wide_feed(L, r, m);
}

/* The work a wide run has done: its done pieces and what its members report of the ones they run. */
static double lab__wide_work(lab__lab *L, lab__wrun *r) {
  size_t done = 0, a, b;
  for (size_t k = 0; k < r->x.npieces; k++)
    if (r->x.state[k] == 2) {
      lab__wide_span(&r->x, (long)k, &a, &b);
      done += b - a;
    }
  double part = 0;
  for (unsigned m = 0; m < r->x.n; m++) {
    lab__worker *w = &L->w[r->x.member[m]];
    if (r->x.cur[m] < 0 || w->job != r->job || w->run != r->run) continue;
    lab__wide_span(&r->x, r->x.cur[m], &a, &b);
    double p = w->wide_work / L->wpc[r->job] - (double)a;
    part += p < 0 ? 0 : p > (double)(b - a) ? (double)(b - a) : p;
  }
  return ((double)(r->x.first + done) + part) * L->wpc[r->job];
}

/* ---- Services: replicas serve the request queue (lab_svc.c) ------------------------------------ */
/* Every idle replica of service sv takes the oldest waiting request: a kernel piece of its size. */
static void lab__svc_feed(lab__lab *L, lab__svc *sv) {
  const lab_job_def *jd = &L->cfg->jobs[sv->job];
  for (size_t i = 0; i < L->nw; i++) {
    lab__worker *w = &L->w[i];
    if (w->svc != sv->job || w->req >= 0 || !w->pid) continue;
    long k = lab__svc_take(sv);
    if (k < 0) return;
    w->req = k;
    w->job = sv->job;
    w->pgid = 0;
    lab__send(w, "K %ld %ld %s %zu 0 %.17g %llu 0 %s/%s.out 0", sv->job, w->run, jd->kernel, sv->nch[k], sv->chunk_s,
              (unsigned long long)jd->seed, L->outdir, jd->name);
  }
}

/* SCALE: replicas added start serving; removed ones stop (scaled down: their request waits again;
 * lost: their request is lost to the fault). */
static void lab__svc_scale(lab__lab *L, const sched_decision *d, int live) {
  lab__svc *sv = &L->svc[d->job];
  if (sv->job < 0) return;
  lab__svc_replicas(sv, d->t, (unsigned)d->value);
  int add = d->reason != SCHED_R_SCALE_DOWN && d->reason != SCHED_R_GPU_LOST;
  lab__log(L, "%s: %s %u replica%s, now %g", L->cfg->jobs[d->job].name,
           add                             ? "add"
           : d->reason == SCHED_R_GPU_LOST ? "lost"
                                           : "remove",
           d->ngpus, d->ngpus == 1 ? "" : "s", d->value);
  for (unsigned k = 0; k < d->ngpus; k++) {
    if (add) lab__add_worker_name(&L->rep->jobs[d->job], d->gpus[k]);
    if (!live || d->gpus[k] >= L->nw) continue;
    lab__worker *w = &L->w[d->gpus[k]];
    if (add) {
      w->svc = (long)d->job;
      w->run = d->run;
      w->req = -1;
      continue;
    }
    if (w->req >= 0) {
      if (d->reason == SCHED_R_GPU_LOST) {
        lab__svc_lost(sv, w->req);
        if (L->journal) fprintf(L->journal, "q %u %ld\n", d->job, w->req);
      } else {
        lab__svc_requeue(sv, w->req);
      }
      if (w->job == (long)d->job) lab__send(w, "T %u %u", d->job, d->run);
    }
    w->svc = w->req = -1;
    if (w->job == (long)d->job) w->job = -1;
  }
  if (live) lab__svc_feed(L, sv);
}

static void lab__unassign(lab__lab *L, uint32_t job, long run) {
  for (size_t i = 0; i < L->nw; i++) {
    lab__worker *w = &L->w[i];
    if (w->job == (long)job && (run < 0 || w->run == run)) {
      lab__send(w, "T %ld %ld", w->job, w->run);
      w->job = -1;
      w->pgid = 0;
    }
  }
}

/* Records a decision, and carries it out unless replaying the journal. */
static void lab__apply(lab__lab *L, const sched_decision *d) {
  lab_job_result *r = d->job < L->rep->njobs ? &L->rep->jobs[d->job] : NULL;
  int live = !L->replaying;
  switch (d->type) {
  case SCHED_D_PLACE:
    r->runs++;
    for (unsigned i = 0; i < d->ngpus; i++) lab__add_worker_name(r, d->gpus[i]);
    if (live && d->ngpus > 1 && L->nchunks[d->job]) {
      lab__wide_start(L, d->job, d->run, d->gpus, d->ngpus);
    } else {
      for (unsigned i = 0; i < d->ngpus && live; i++) lab__start_run(L, d->gpus[i], d->job, d->run);
    }
    break;
  case SCHED_D_STOP:
    lab__log(L, "stop %s run %u (%s)", L->cfg->jobs[d->job].name, d->run, sched_reason_name(d->reason));
    if (live) lab__unassign(L, d->job, d->run);
    lab__wide_drop(L, d->job, d->run);
    break;
  case SCHED_D_CHECKPOINT: {
    /* a wide run's done pieces are durable already (synced at their end): answered with them */
    lab__wrun *wr = live ? lab__wide_find(L, d->job, d->run) : NULL;
    if (wr) {
      wr->ckpt = 1;
      break;
    }
    if (live)
      for (size_t i = 0; i < L->nw; i++)
        if (L->w[i].job == (long)d->job && L->w[i].run == (long)d->run) lab__send(&L->w[i], "P %u %u", d->job, d->run);
    break;
  }
  case SCHED_D_REPLACE:
    lab__add_worker_name(r, d->gpu);
    lab__log(L, "replace worker %u by %u in %s run %u", d->old_gpu, d->gpu, L->cfg->jobs[d->job].name, d->run);
    if (live) {
      if (d->old_gpu < L->nw && L->w[d->old_gpu].job == (long)d->job) {
        lab__send(&L->w[d->old_gpu], "T %u %u", d->job, d->run);
        L->w[d->old_gpu].job = -1;
      }
      lab__wrun *wr = lab__wide_find(L, d->job, d->run);
      if (wr) { /* the newcomer takes the lost member's slot: its piece, then its share */
        lab__wide_replace(&wr->x, d->old_gpu, d->gpu);
        int slot = lab__wide_slot(&wr->x, d->gpu);
        if (slot >= 0) lab__wide_feed(L, wr, (unsigned)slot);
      } else {
        lab__start_run(L, d->gpu, d->job, d->run);
      }
    }
    break;
  case SCHED_D_END:
    r->ends++;
    r->outcome = d->reason;
    L->ended++;
    lab__log(L, "end %s: %s", L->cfg->jobs[d->job].name, sched_reason_name(d->reason));
    if (live) lab__unassign(L, d->job, -1);
    lab__wide_drop(L, d->job, -1);
    if (L->svc[d->job].job >= 0) {
      lab__svc_end(&L->svc[d->job], d->t);
      for (size_t i = 0; i < L->nw; i++)
        if (L->w[i].svc == (long)d->job) L->w[i].svc = L->w[i].req = -1;
    }
    break;
  case SCHED_D_SCALE: lab__svc_scale(L, d, live); break;
  default: break; /* STANDBY/UNSTANDBY reserve nothing physical here */
  }
}

static void lab__fill_event(lab__lab *L, sched_event *ev, int type, double t, uint32_t gpu, uint32_t job, uint32_t run,
                            double value) {
  memset(ev, 0, sizeof *ev);
  ev->type = (sched_ev_type)type;
  ev->t = t;
  ev->gpu = gpu;
  ev->job = job;
  ev->run = run;
  ev->value = value;
  if (type == SCHED_EV_GPU_JOIN) {
    /* One provider per worker, one node, one region and class: the lab's machines are alike
     * except for their measured speed. The link is a LAN (1 Gbit/s, 1 ms). */
    ev->u.gpu.provider = gpu;
    ev->u.gpu.score = value;
    ev->u.gpu.price_per_h = 1.0;
    ev->u.gpu.link.bw_bps = 1e9;
    ev->u.gpu.link.rtt_s = 1e-3;
  } else if (type == SCHED_EV_JOB_ARRIVE) {
    const lab_job_def *jd = &L->cfg->jobs[job];
    ev->u.job.kind = lab__is_service(jd) ? SCHED_JOB_SERVICE : SCHED_JOB_BATCH;
    ev->u.job.width = (uint16_t)jd->width;
    ev->u.job.region = -1;
    ev->u.job.work = jd->work;
    if (lab__is_service(jd)) {
      ev->u.job.min_replicas = (uint16_t)jd->min_replicas;
      ev->u.job.max_replicas = (uint16_t)jd->max_replicas;
      ev->u.job.req_per_score_s = L->svc[job].req_per_score_s;
    }
  }
}

/* Hands one event to the core (journaling it first), then applies the decisions. */
static int lab__handle(lab__lab *L, int type, double t, uint32_t gpu, uint32_t job, uint32_t run, double value) {
  sched_event ev;
  lab__fill_event(L, &ev, type, t, gpu, job, run, value);
  if (!L->replaying && L->journal) fprintf(L->journal, "E %d %.17g %u %u %u %.17g\n", type, t, gpu, job, run, value);
  sched_counters before, after;
  sched_counters_get(L->s, &before);
  L->ndec = 0;
  L->t_last = t;
  int rc = sched_handle(L->s, &ev);
  if (rc) {
    fprintf(stderr, "spotlab lab: the scheduling core rejected event %d (t=%g gpu=%u job=%u run=%u): %s\n", type, t,
            gpu, job, run, sched_strerror(rc));
    return LAB_ESCHED;
  }
  if (L->err) return L->err;
  sched_counters_get(L->s, &after);
  if (type == SCHED_EV_JOB_FINISH && after.stale_events == before.stale_events) L->rep->jobs[job].finishes++;
  if (type == SCHED_EV_GPU_JOIN && gpu < L->rep->nworkers) L->rep->scores[gpu] = value;
  L->rep->worker_losses += (unsigned)(after.gpu_failures - before.gpu_failures);
  size_t n = L->ndec;
  for (size_t i = 0; i < n; i++) lab__apply(L, &L->dec[i].d);
  if (L->err) return L->err;
  if (!L->replaying && L->journal && ((type != SCHED_EV_HEARTBEAT && type != SCHED_EV_TICK) || n > 0)) {
    /* kill points (tests): the decisions applied, their event not yet synced; then synced */
    sim_failpoint("journal");
    if (fflush(L->journal) != 0 || fdatasync(fileno(L->journal)) != 0) {
      /* said once, with the reason: the lab stops here, its journal whole up to the last record */
      if (!L->journal_failed)
        fprintf(stderr, "spotlab lab: writing the journal %s failed: %s\n", L->journal_path ? L->journal_path : "",
                strerror(errno ? errno : EIO));
      L->journal_failed = 1;
      return LAB_ESTOPPED;
    }
    sim_failpoint("journal");
  }
  /* checkpoints of wide runs the core asked for: their durable prefix of whole chunks */
  for (size_t k = 0; k < L->nwide; k++) {
    lab__wrun *r = &L->wide[k];
    if (r->job < 0 || !r->ckpt) continue;
    r->ckpt = 0;
    int rc2 = lab__handle(L, SCHED_EV_CKPT_DONE, t, r->x.member[0], (uint32_t)r->job, (uint32_t)r->run,
                          (double)lab__wide_prefix(&r->x) * L->wpc[r->job]);
    if (rc2) return rc2;
  }
  return 0;
}

/* ---- Worker messages ------------------------------------------------------------------------ */
/* "I JOB RUN WHY": worker i could not open, write, sync or read back a run's output file, the
 * lab's own file (a full disk, an I/O error). That is no fault of the job: nothing is journaled
 * against it, and the lab stops (LAB_ESTOPPED) with its journal whole, so that `--resume`, once
 * the disk has room, continues every job from its last durable checkpoint. A lab that went on
 * would fail every job that writes, one restart after another, until each gave up. */
static int lab__output_failed(lab__lab *L, size_t i, char *line) {
  long job = -1, run = -1;
  int pos = 0;
  if (sscanf(line + 1, "%ld %ld %n", &job, &run, &pos) < 2 || job < 0 || (size_t)job >= L->cfg->njobs) return 0;
  char why[LAB__LINE];
  snprintf(why, sizeof why, "%s", pos ? line + 1 + pos : "");
  lab__unescape(why);
  fprintf(stderr,
          "spotlab lab: the lab stops: job %s (run %ld on worker %zu): %s. The job is not counted as failed: "
          "free space (or fix the disk), then continue with --resume\n",
          L->cfg->jobs[job].name, run, i, why);
  return LAB_ESTOPPED;
}

static int lab__on_line(lab__lab *L, size_t i, char *line) {
  lab__worker *w = &L->w[i];
  long job = -1, run = -1, a = 0, b = 0;
  double x = 0;
  int pos = 0;
  double t = lab__t(L);
  if (L->calibrating) { /* --predict's calibration: nothing goes to the core */
    switch (line[0]) {
    case 'C':
      if (sscanf(line + 1, "%lg", &x) == 1) {
        w->c_rate = x;
        w->c_got = 1;
      }
      return 0;
    case 'G':
      if (sscanf(line + 1, "%ld %ld %ld", &job, &run, &a) == 3) w->pgid = (pid_t)a;
      return 0;
    case 'V':
      if (sscanf(line + 1, "%lg %lg %lg", &w->c_v[0], &w->c_v[1], &w->c_v[2]) == 3) {
        w->c_got = 1;
        w->c_rate = 1;
      }
      return 0;
    case 'I': return lab__output_failed(L, i, line);
    case 'D':
    case 'F':
      b = 0;
      a = 0;
      if (line[0] == 'F' && sscanf(line + 1, "%ld %ld %ld %ld", &job, &run, &a, &b) < 4) a = 1;
      w->c_status = line[0] == 'D' ? 0 : b ? 128 + (int)b : (int)a;
      w->c_done = 1;
      w->c_end = lab__now();
      w->pgid = 0;
      return 0;
    default: return 0;
    }
  }
  switch (line[0]) {
  case 'H':
    if (w->joined) return lab__handle(L, SCHED_EV_HEARTBEAT, t, (uint32_t)i, 0, 0, 0);
    return 0;
  case 'E': /* the executor it computes on ("E 1 DESCRIPTION"), or why it has none ("E 0 WHY") */
    if (line[1] == ' ' && (line[2] == '0' || line[2] == '1') && L->rep->executors) {
      snprintf(L->rep->executors[i], sizeof L->rep->executors[i], "%s%s", line[2] == '0' ? "none: " : "",
               line[3] ? line + 4 : "");
      lab__unescape(L->rep->executors[i]);
      if (line[2] == '0') fprintf(stderr, "spotlab lab: worker %zu has no executor: %s\n", i, L->rep->executors[i]);
    }
    return 0;
  case 'C':
    if (sscanf(line + 1, "%lg", &x) == 1) {
      w->score = L->ref_rate > 0 ? x / L->ref_rate : 0;
      if (L->calib_score) w->score = L->calib_score[i]; /* --predict: the twin's score */
      if (!(w->score > 0)) w->score = 1e-3;
      w->want_join = 1;
    }
    return 0;
  case 'G':
    if (sscanf(line + 1, "%ld %ld %ld", &job, &run, &a) == 3 && w->job == job && w->run == run) w->pgid = (pid_t)a;
    return 0;
  case 'W':
    if (sscanf(line + 1, "%ld %ld %lg", &job, &run, &x) == 3 && job >= 0 && (size_t)job < L->cfg->njobs) {
      if ((L->nchunks[job] || L->svc[job].job >= 0) && w->pw_job == job && w->pw_run == run && x >= w->pw_work &&
          t > w->pw_t && t - w->pw_t < 3 * L->cfg->lab.heartbeat) {
        w->obs_work += x - w->pw_work;
        w->obs_time += (t - w->pw_t) * (w->speed / lab__speed_of(L->cfg, i));
      }
      w->pw_job = job;
      w->pw_run = run;
      w->pw_t = t;
      w->pw_work = x;
      if (L->svc[job].job >= 0) return 0; /* a request's progress: the core judges a service by its load */
      lab__wrun *wr = lab__wide_find(L, job, run);
      if (wr) { /* a piece: the run's progress is the sum over its members */
        if (w->job != job || w->run != run) return 0;
        w->wide_work = x;
        x = lab__wide_work(L, wr);
      }
      return lab__handle(L, SCHED_EV_JOB_PROGRESS, t, (uint32_t)i, (uint32_t)job, (uint32_t)run, x);
    }
    return 0;
  case 'K':
    if (sscanf(line + 1, "%ld %ld %lg", &job, &run, &x) == 3 && job >= 0 && (size_t)job < L->cfg->njobs)
      return lab__handle(L, SCHED_EV_CKPT_DONE, t, (uint32_t)i, (uint32_t)job, (uint32_t)run, x);
    return 0;
  case 'D':
    if (sscanf(line + 1, "%ld %ld", &job, &run) == 2 && job >= 0 && (size_t)job < L->cfg->njobs &&
        L->svc[job].job >= 0) {
      /* a request served: journaled (a resumed lab does not serve it again), the next one taken */
      if (w->svc == job && w->req >= 0 && w->job == job) {
        lab__svc_served(&L->svc[job], w->req, t);
        if (L->journal) fprintf(L->journal, "Q %ld %ld %.17g\n", job, w->req, t);
        w->req = -1;
        w->job = -1;
        lab__svc_feed(L, &L->svc[job]);
      }
      return 0;
    }
    if (sscanf(line + 1, "%ld %ld", &job, &run) == 2 && job >= 0 && (size_t)job < L->cfg->njobs) {
      lab__wrun *wr = lab__wide_find(L, job, run);
      int slot = wr ? lab__wide_slot(&wr->x, (uint32_t)i) : -1;
      if (wr && (slot < 0 || w->job != job || w->run != run)) return 0; /* stale */
      if (wr && wr->x.verifying != slot + 1) {
        /* a piece done (synced): the member takes its next; the run is done when all are */
        lab__wide_done(&wr->x, (unsigned)slot);
        w->job = -1;
        int fin = lab__wide_feed(L, wr, (unsigned)slot);
        if (!fin) return 0;
      }
      if (w->job == job && w->run == run) {
        if (!L->nchunks[job]) {
          L->cmd_seconds[job] = t - w->run_start;
          L->cmd_failed[job] = 0;
        }
        w->job = -1;
        w->pgid = 0;
      }
      L->rep->jobs[job].exit_status = L->nchunks[job] ? -1 : 0;
      return lab__handle(L, SCHED_EV_JOB_FINISH, t, (uint32_t)i, (uint32_t)job, (uint32_t)run, 0);
    }
    return 0;
  case 'I': return lab__output_failed(L, i, line);
  case 'F':
    if (sscanf(line + 1, "%ld %ld %ld %ld %n", &job, &run, &a, &b, &pos) >= 4 && job >= 0 &&
        (size_t)job < L->cfg->njobs && L->svc[job].job >= 0) {
      /* a request whose piece failed (its output could not be written): lost, not retried */
      if (w->svc == job && w->req >= 0 && w->job == job) {
        lab__svc_lost(&L->svc[job], w->req);
        if (L->journal) fprintf(L->journal, "q %ld %ld\n", job, w->req);
        w->req = -1;
        w->job = -1;
        lab__svc_feed(L, &L->svc[job]);
      }
      return 0;
    }
    if (sscanf(line + 1, "%ld %ld %ld %ld %n", &job, &run, &a, &b, &pos) >= 4 && job >= 0 &&
        (size_t)job < L->cfg->njobs) {
      const char *tail = pos ? line + 1 + pos : "";
      if (w->job == job && w->run == run) {
        if (!L->nchunks[job]) {
          L->cmd_seconds[job] = t - w->run_start;
          L->cmd_failed[job] = 1;
        }
        w->job = -1;
        w->pgid = 0;
      }
      /* The exit status as a shell reports it: 128 + N when killed by signal N. */
      int status = b ? 128 + (int)b : (int)a;
      lab_job_result *r = &L->rep->jobs[job];
      r->exit_status = status;
      snprintf(r->stderr_tail, sizeof r->stderr_tail, "%s", tail);
      lab__unescape(r->stderr_tail);
      if (L->journal) fprintf(L->journal, "X %ld %d %ld %s\n", job, status, b, tail);
      lab__log(L, "%s run %ld failed on worker %zu: exit %d", L->cfg->jobs[job].name, run, i, status);
      return lab__handle(L, SCHED_EV_JOB_FAIL, t, (uint32_t)i, (uint32_t)job, (uint32_t)run, 0);
    }
    return 0;
  default: return 0;
  }
}

/* The worker's process is gone (killed). The core is not told: it learns it from the silence. */
static void lab__worker_gone(lab__lab *L, size_t i) {
  lab__worker *w = &L->w[i];
  lab__log(L, "worker %zu exited", i);
  if (w->remote) {
    w->pid = 0; /* its rank reaped it already */
    w->pgid = 0;
    w->job = -1;
    w->stalled = 0;
  } else {
    lab__bury(w);
  }
  if (L->cfg->lab.respawn > 0) w->respawn_at = lab__t(L) + L->cfg->lab.respawn;
}

static int lab__read_worker(lab__lab *L, size_t i) {
  lab__worker *w = &L->w[i];
  ssize_t n = read(w->from, w->buf + w->blen, sizeof w->buf - 1 - w->blen);
  if (n < 0 && errno == EINTR) return 0;
  if (n <= 0) {
    lab__worker_gone(L, i);
    return 0;
  }
  w->blen += (size_t)n;
  char *start = w->buf, *nl;
  while ((nl = memchr(start, '\n', w->blen - (size_t)(start - w->buf)))) {
    *nl = 0;
    int rc = lab__on_line(L, i, start);
    if (rc) return rc;
    start = nl + 1;
  }
  w->blen -= (size_t)(start - w->buf);
  memmove(w->buf, start, w->blen);
  if (w->blen == sizeof w->buf - 1) w->blen = 0;
  return 0;
}

/* ---- Faults --------------------------------------------------------------------------------- */
static int lab__fault_cmp(const void *a, const void *b) {
  const lab__fault *x = a, *y = b;
  if (x->at != y->at) return x->at < y->at ? -1 : 1;
  return x->worker - y->worker;
}

/* splitmix64 (Steele, Lea & Flood, OOPSLA 2014): the random faults' stream per worker. */
static uint64_t lab__mix(uint64_t *s) {
  uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

int lab__faults(const lab_config *c, lab__fault **out, size_t *nout) {
  size_t cap = c->nfaults + 16, n = 0;
  lab__fault *f = malloc(cap * sizeof *f);
  if (!f) return LAB_ENOMEM;
  for (size_t i = 0; i < c->nfaults; i++)
    f[n++] = (lab__fault){c->faults[i].at, (int)c->faults[i].worker, c->faults[i].action, c->faults[i].factor,
                          c->faults[i].duration};
  const lab_random_def *r = &c->lab.random;
  if (r->rate > 0) {
    for (int64_t wk = 0; wk < c->lab.workers; wk++) {
      uint64_t st = (uint64_t)c->lab.seed * 0x2545F4914F6CDD1DULL + (uint64_t)wk + 1;
      double t = 0;
      for (;;) {
        /* Poisson process: exponential gaps, -ln(U) / rate. */
        double u = ((double)(lab__mix(&st) >> 11) + 0.5) * 0x1.0p-53;
        t += -log(u) / r->rate;
        if (t > r->until) break;
        if (n == cap) {
          cap *= 2;
          lab__fault *g = realloc(f, cap * sizeof *f);
          if (!g) {
            free(f);
            return LAB_ENOMEM;
          }
          f = g;
        }
        f[n++] = (lab__fault){t, (int)wk, r->action, r->factor, r->duration};
      }
    }
  }
  qsort(f, n, sizeof *f, lab__fault_cmp);
  *out = f;
  *nout = n;
  return 0;
}

static void lab__inject(lab__lab *L, const lab__fault *f) {
  lab__worker *w = &L->w[f->worker];
  static const char *const names[] = {"kill", "stall", "slow"};
  lab__log(L, "fault: %s worker %d", names[f->action], f->worker);
  if (!w->pid) return;
  switch (f->action) {
  case LAB_FAULT_KILL:
    lab__signal(w, SIGKILL); /* the pipe's EOF tells the runner; heartbeats stop for the core */
    break;
  case LAB_FAULT_STALL:
    lab__signal(w, SIGSTOP);
    w->stalled = 1;
    w->cont_at = f->duration > 0 ? f->at + f->duration : 0;
    break;
  default:
    w->speed = f->factor;
    lab__send(w, "S %.17g", f->factor);
    break;
  }
}

/* ---- Setup ----------------------------------------------------------------------------------
 * The runner itself never runs a kernel: libgomp's thread pool does not survive fork(), so a
 * runner that had used OpenMP could not start workers any more. Reference measurements are made
 * by a helper worker at full speed, before the lab's workers exist. */

/* The first line from worker w that starts with `tag` (others, heartbeats, are dropped), parsed
 * as a number; NaN on timeout or death. */
static double lab__ask(lab__worker *w, char tag, double timeout) {
  double until = lab__now() + timeout;
  for (;;) {
    char *nl;
    while ((nl = memchr(w->buf, '\n', w->blen))) {
      *nl = 0;
      double v = NAN;
      int hit = w->buf[0] == tag && sscanf(w->buf + 1, "%lg", &v) == 1;
      if (hit) {
        const char *q = w->buf + 1;
        while (*q == ' ') q++;
        snprintf(w->last, sizeof w->last, "%s", q);
      }
      size_t used = (size_t)(nl + 1 - w->buf);
      w->blen -= used;
      memmove(w->buf, nl + 1, w->blen);
      if (hit) return v;
    }
    double left = until - lab__now();
    if (left <= 0) return NAN;
    struct pollfd p = {w->from, POLLIN, 0};
    if (poll(&p, 1, (int)(left * 1000) + 1) > 0) {
      ssize_t n = read(w->from, w->buf + w->blen, sizeof w->buf - 1 - w->blen);
      if (n <= 0) return NAN;
      w->blen += (size_t)n;
    }
  }
}

/* The local workers' pipes to poll: pf[k] is worker idx[k]. pf and idx hold LAB__MAX_WORKERS. */
static nfds_t lab__pollset(const lab__lab *L, struct pollfd *pf, size_t *idx) {
  nfds_t np = 0;
  for (size_t i = 0; i < L->nw && np < LAB__MAX_WORKERS; i++)
    if (L->w[i].pid > 0 && !L->w[i].remote) {
      pf[np].fd = L->w[i].from;
      pf[np].events = POLLIN;
      pf[np].revents = 0;
      idx[np++] = i;
    }
  return np;
}

/* Waits up to `ms` for anything from the workers, local (pipes) or on other ranks (MPI), and
 * handles it; *got (when not NULL) counts the pipes and messages that had something. */
static int lab__pump(lab__lab *L, struct pollfd *pf, size_t *idx, int ms, unsigned *got) {
  nfds_t np = lab__pollset(L, pf, idx);
  if (L->nranks > 1 && ms > 2) ms = 2; /* MPI messages are looked for between polls */
  int n = poll(pf, np, ms);
  if (n < 0 && errno != EINTR) return LAB_ESYS;
  if (got) *got = n > 0 ? (unsigned)n : 0;
  for (nfds_t k = 0; n > 0 && k < np; k++)
    if (pf[k].revents) {
      int rc = lab__read_worker(L, idx[k]);
      if (rc) return rc;
    }
  while (L->nranks > 1) {
    int flag = 0;
    MPI_Status st;
    MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st);
    if (!flag) break;
    if (got) ++*got;
    int len;
    MPI_Get_count(&st, MPI_CHAR, &len);
    char buf[LAB__LINE + 64];
    if (len < 0 || len >= (int)sizeof buf) len = (int)sizeof buf - 1;
    MPI_Recv(buf, (int)sizeof buf - 1, MPI_CHAR, st.MPI_SOURCE, st.MPI_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    buf[len] = 0;
    if (st.MPI_TAG < 0 || (size_t)st.MPI_TAG >= L->nw) continue;
    size_t i = (size_t)st.MPI_TAG;
    if (!L->w[i].pid) continue; /* a late line of a worker already buried */
    if (buf[0] == 1) {
      lab__worker_gone(L, i);
      continue;
    }
    char *nl = strchr(buf, '\n');
    if (nl) *nl = 0;
    int rc = lab__on_line(L, i, buf);
    if (rc) return rc;
  }
  return 0;
}

/* Handles every line the workers wrote before *t, the time it returns: reads the clock, then looks
 * at the pipes without waiting, and when something was there handles it and looks again. A runner
 * that stalled (a slow journal sync, in a handler too, or the machine) thus never decides at *t
 * (the core's heartbeat timers above all) before reading a heartbeat sent before *t. */
#define LAB__DRAIN_ROUNDS 64 /* a bound against workers that write faster than the runner reads */
static int lab__drain(lab__lab *L, struct pollfd *pf, size_t *idx, double *t) {
  for (unsigned round = 0; round < LAB__DRAIN_ROUNDS; round++) {
    *t = lab__t(L);
    unsigned got = 0;
    int rc = lab__pump(L, pf, idx, 0, &got);
    if (rc || got == 0) return rc;
  }
  *t = lab__t(L); /* not after what it handled: the core's time only goes forward */
  return 0;
}

/* Waits for worker i's calibration answer (other lines are dropped: it has not joined). */
static int lab__wait_calibration(lab__lab *L, size_t i, double timeout, struct pollfd *pf, size_t *idx) {
  double until = lab__now() + timeout;
  while (!L->w[i].want_join) {
    if (lab__now() > until || !L->w[i].pid) return LAB_ESYS;
    int rc = lab__pump(L, pf, idx, 20, NULL);
    if (rc) return rc;
  }
  return 0;
}

/* ---- Ranks other than 0: run the local workers, relay their lines to rank 0 and its messages
 * to them, carry out its control messages. No scheduling happens here. */
static int lab__relay(lab__lab *L) {
  struct pollfd pf[LAB__MAX_WORKERS];
  size_t idx[LAB__MAX_WORKERS];
  for (;;) {
    nfds_t np = lab__pollset(L, pf, idx);
    int n = poll(pf, np, 2);
    for (nfds_t k = 0; n > 0 && k < np; k++) {
      if (!pf[k].revents) continue;
      lab__worker *w = &L->w[idx[k]];
      ssize_t r = read(w->from, w->buf + w->blen, sizeof w->buf - 1 - w->blen);
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0) {
        char eof = 1;
        lab__bury(w);
        MPI_Send(&eof, 1, MPI_CHAR, 0, w->gid, MPI_COMM_WORLD);
        continue;
      }
      w->blen += (size_t)r;
      char *start = w->buf, *nl;
      while ((nl = memchr(start, '\n', w->blen - (size_t)(start - w->buf)))) {
        MPI_Send(start, (int)(nl - start + 1), MPI_CHAR, 0, w->gid, MPI_COMM_WORLD);
        start = nl + 1;
      }
      w->blen -= (size_t)(start - w->buf);
      memmove(w->buf, start, w->blen);
      if (w->blen == sizeof w->buf - 1) w->blen = 0;
    }
    for (;;) {
      int flag = 0;
      MPI_Status st;
      MPI_Iprobe(0, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st);
      if (!flag) break;
      int len;
      MPI_Get_count(&st, MPI_CHAR, &len);
      char buf[LAB__LINE + 64];
      if (len < 0 || len >= (int)sizeof buf) len = (int)sizeof buf - 1;
      MPI_Recv(buf, (int)sizeof buf - 1, MPI_CHAR, 0, st.MPI_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      buf[len] = 0;
      if (st.MPI_TAG != LAB__CTRL_TAG) {
        if (st.MPI_TAG >= 0 && (size_t)st.MPI_TAG < L->nw) {
          lab__worker *w = &L->w[st.MPI_TAG];
          if (w->pid > 0) {
            ssize_t rc;
            do rc = write(w->to, buf, (size_t)len);
            while (rc < 0 && errno == EINTR);
          }
        }
        continue;
      }
      int g = -1, sig = 0;
      long pg = 0;
      double speed = 1;
      if (!strncmp(buf, "QUIT", 4)) {
        for (size_t i = 0; i < L->nw; i++)
          if (!L->w[i].remote) lab__bury(&L->w[i]);
        return 0;
      } else if (sscanf(buf, "SPAWN %d %lg", &g, &speed) == 2 && g >= 0 && (size_t)g < L->nw && !L->w[g].remote) {
        L->w[g].speed = speed;
        if (L->w[g].pid > 0) lab__bury(&L->w[g]);
        if (lab__spawn_into(L, &L->w[g], (size_t)g) != 0) {
          char eof = 1;
          MPI_Send(&eof, 1, MPI_CHAR, 0, g, MPI_COMM_WORLD);
        }
      } else if (sscanf(buf, "SIG %d %d %ld", &g, &sig, &pg) == 3 && g >= 0 && (size_t)g < L->nw && !L->w[g].remote &&
                 L->w[g].pid > 0) {
        if (pg > 0) kill(-(pid_t)pg, sig);
        kill(L->w[g].pid, sig);
      } else if (sscanf(buf, "BURY %d", &g) == 1 && g >= 0 && (size_t)g < L->nw && !L->w[g].remote) {
        lab__bury(&L->w[g]);
      }
    }
  }
}

static int lab__join(lab__lab *L, size_t i, double t) {
  lab__worker *w = &L->w[i];
  w->want_join = 0;
  w->joined = 1;
  lab__log(L, "worker %zu joins, score %.3f", i, w->score);
  return lab__handle(L, SCHED_EV_GPU_JOIN, t, (uint32_t)i, 0, 0, w->score);
}

/* Reads the journal into a fresh core. */
static int lab__replay(lab__lab *L, const char *path) {
  FILE *f = fopen(path, "r+");
  if (!f) {
    fprintf(stderr, "spotlab lab: cannot open journal %s: %s\n", path, strerror(errno));
    return LAB_EIO;
  }
  /* The whole journal, so that a record is judged by its bytes: only the last one may be torn
   * (no newline: dropped, with a warning); a NUL byte or an over-long record anywhere before is
   * damage, an error naming the line, and the file is left as it is. */
  char *buf = NULL;
  long size = -1;
  if (fseek(f, 0, SEEK_END) == 0) size = ftell(f);
  if (size < 0 || fseek(f, 0, SEEK_SET) != 0 || !(buf = malloc((size_t)size + 1)) ||
      fread(buf, 1, (size_t)size, f) != (size_t)size) {
    fprintf(stderr, "spotlab lab: cannot read journal %s: %s\n", path, strerror(errno ? errno : EIO));
    free(buf);
    fclose(f);
    return LAB_EIO;
  }
  char line[LAB__LINE * 2];
  long good_end = 0;
  int lineno = 0, rc = 0;
  unsigned long nj = 0, nwk = 0;
  unsigned long long hash = 0;
  L->replaying = 1;
  for (long off = 0; off < size;) {
    const char *rec = buf + off, *nl = memchr(rec, '\n', (size_t)(size - off));
    if (!nl) { /* a torn last record */
      fprintf(stderr, "%s:%d: warning: the last record is torn (%ld bytes, no newline): dropped\n", path, lineno + 1,
              size - off);
      break;
    }
    size_t len = (size_t)(nl - rec);
    lineno++;
    if (memchr(rec, '\0', len) || len >= sizeof line) {
      fprintf(stderr, "%s:%d: damaged journal record (%s); the journal is left unchanged\n", path, lineno,
              len >= sizeof line ? "too long" : "a NUL byte");
      rc = LAB_EJOURNAL;
      break;
    }
    memcpy(line, rec, len);
    line[len] = 0;
    off += (long)len + 1;
    int type;
    double t, v;
    unsigned g, j, r;
    long job, sig;
    int status, pos = 0;
    size_t nc;
    if (lineno == 1) {
      if (sscanf(line, "# spotlab-lab-journal 1 %lu %lu %llx", &nj, &nwk, &hash) != 3 || nj != L->cfg->njobs ||
          nwk != L->nw || hash != lab__hash(L->cfg->text)) {
        fprintf(stderr, "%s:1: not a journal of job file %s (as it is now)\n", path, L->cfg->path);
        rc = LAB_EJOURNAL;
        break;
      }
    } else if (line[0] == 'E' && sscanf(line, "E %d %lg %u %u %u %lg", &type, &t, &g, &j, &r, &v) == 6) {
      if (type == SCHED_EV_JOB_ARRIVE && j < L->cfg->njobs) L->arrived[j] = 1;
      rc = lab__handle(L, type, t, g, j, r, v);
      if (rc) {
        fprintf(stderr, "%s:%d: the core rejects this record\n", path, lineno);
        rc = LAB_EJOURNAL;
        break;
      }
    } else if (line[0] == 'N' && sscanf(line, "N %ld %zu", &job, &nc) == 2 && job >= 0 && (size_t)job < L->cfg->njobs &&
               nc > 0) {
      L->nchunks[job] = nc;
      L->wpc[job] = L->cfg->jobs[job].work / (double)nc;
    } else if (line[0] == 'X' && sscanf(line, "X %ld %d %ld %n", &job, &status, &sig, &pos) >= 3 && job >= 0 &&
               (size_t)job < L->cfg->njobs) {
      L->rep->jobs[job].exit_status = status;
      snprintf(L->rep->jobs[job].stderr_tail, sizeof L->rep->jobs[job].stderr_tail, "%s", pos ? line + pos : "");
      lab__unescape(L->rep->jobs[job].stderr_tail);
    } else if (line[0] == 'S' && sscanf(line, "S %ld %lg", &job, &v) == 2 && job >= 0 && (size_t)job < L->cfg->njobs &&
               lab__is_service(&L->cfg->jobs[job]) && L->svc[job].job < 0 && v > 0) {
      /* a service's chunk time, fixed once: its request stream is rebuilt from it */
      char err[1024];
      int src = lab__svc_load(L->cfg, (size_t)job, v, &L->svc[job], err, sizeof err);
      if (src) {
        fprintf(stderr, "%s\n", err);
        L->svc[job].job = -1;
        rc = src;
        break;
      }
      L->wpc[job] = v;
    } else if ((line[0] == 'Q' || line[0] == 'q') && sscanf(line + 1, " %ld %u %lg", &job, &r, &v) >= 2 && job >= 0 &&
               (size_t)job < L->cfg->njobs && L->svc[job].job >= 0 && r < L->svc[job].n) {
      if (line[0] == 'Q')
        lab__svc_served(&L->svc[job], (long)r, v);
      else
        lab__svc_lost(&L->svc[job], (long)r);
    } else if (line[0] == 'R' || line[0] == '#') {
    } else {
      fprintf(stderr, "%s:%d: unreadable journal record\n", path, lineno);
      rc = LAB_EJOURNAL;
      break;
    }
    good_end = off;
  }
  free(buf);
  L->replaying = 0;
  if (!rc && lineno == 0) {
    fprintf(stderr, "%s: empty journal\n", path);
    rc = LAB_EJOURNAL;
  }
  if (rc) {
    fclose(f);
    return rc;
  }
  /* Drop a torn tail, then append after the last whole record. */
  if (ftruncate(fileno(f), good_end) != 0 || fseek(f, good_end, SEEK_SET) != 0) {
    fclose(f);
    return LAB_EIO;
  }
  L->journal = f;
  return 0;
}

static int lab__mkdir_for(const char *journal, char *outdir, size_t len) {
  snprintf(outdir, len, "%s.d", journal);
  if (mkdir(outdir, 0777) != 0 && errno != EEXIST) {
    fprintf(stderr, "spotlab lab: cannot create %s: %s\n", outdir, strerror(errno));
    return LAB_EIO;
  }
  return 0;
}

static void lab__finish_report(lab__lab *L) {
  lab_report *R = L->rep;
  double first = INFINITY, last = 0;
  R->completed = R->failed = 0;
  for (size_t j = 0; j < R->njobs; j++) {
    sched_job_status st;
    lab_job_result *r = &R->jobs[j];
    if (sched_job_query(L->s, (uint32_t)j, &st) != 0 || st.state == SCHED_JOB_UNKNOWN) {
      r->submit = r->start = r->end = NAN;
      continue;
    }
    r->submit = st.submit;
    r->start = st.start >= 0 ? st.start : NAN;
    r->end = st.state == SCHED_JOB_ENDED ? st.end : NAN;
    r->restarts = st.restarts;
    if (L->svc[j].job >= 0) lab__svc_stats(&L->svc[j], r);
    if (st.state == SCHED_JOB_ENDED) {
      /* a service ends when its stream is done: withdrawn by the runner, and that is its success */
      if (st.outcome == SCHED_R_COMPLETED || (L->svc[j].job >= 0 && st.outcome == SCHED_R_WITHDRAWN))
        R->completed++;
      else
        R->failed++;
      if (st.end > last) last = st.end;
    }
    if (st.submit < first) first = st.submit;
  }
  R->makespan = isfinite(first) ? last - first : NAN;
}

/* Every process a lab starts (workers, commands and whatever a command forks) carries
 * SPOTLAB_LAB_JOURNAL=<absolute journal path> in its environment. A runner killed with SIGKILL
 * takes its workers and their shells with it (PR_SET_PDEATHSIG), but not the processes a command
 * forked (`sleep 60` in `sleep 60; echo x`): reparented to init, they would run beside the copy a
 * resumed lab starts. So a resume first kills every process that carries its journal's mark. */
static void lab__mark(const char *journal, char *out, size_t len) {
  char cwd[4096];
  if (journal[0] == '/' || !getcwd(cwd, sizeof cwd))
    snprintf(out, len, "%s=%s", LAB__ENV_MARK, journal);
  else
    snprintf(out, len, "%s=%s/%s", LAB__ENV_MARK, cwd, journal);
}
/* Kills the processes (not this one) whose environment holds `mark`; returns how many. */
static int lab__kill_marked(const char *mark) {
  DIR *d = opendir("/proc");
  if (!d) return 0;
  size_t ml = strlen(mark);
  int n = 0;
  struct dirent *e;
  pid_t self = getpid();
  while ((e = readdir(d))) {
    char *end;
    long pid = strtol(e->d_name, &end, 10);
    if (*end || pid <= 0 || (pid_t)pid == self) continue;
    char p[64];
    snprintf(p, sizeof p, "/proc/%ld/environ", pid);
    FILE *f = fopen(p, "r");
    if (!f) continue;
    char var[8192];
    size_t k = 0;
    int c, hit = 0;
    while (!hit && (c = fgetc(f)) != EOF) { /* NUL-separated NAME=VALUE entries */
      if (c) {
        if (k < sizeof var - 1) var[k++] = (char)c;
        continue;
      }
      hit = k == ml && !memcmp(var, mark, ml);
      k = 0;
    }
    fclose(f);
    if (hit && kill((pid_t)pid, SIGKILL) == 0) n++;
  }
  closedir(d);
  return n;
}

/* ---- --predict: calibrate, then predict ------------------------------------------------------ */
/* Waits until every worker of set[nset] has answered "C" (what = 0) or ended its calibration
 * command (what = 1). */
static int lab__calib_wait(lab__lab *L, const size_t *set, size_t nset, int what, double timeout, struct pollfd *pf,
                           size_t *idx) {
  double until = lab__now() + timeout;
  for (;;) {
    size_t k = 0;
    while (k < nset && (what ? L->w[set[k]].c_done : L->w[set[k]].c_got)) k++;
    if (k == nset) return 0;
    if (lab__now() > until || !L->w[set[k]].pid) return LAB_ESYS;
    int rc = lab__pump(L, pf, idx, 20, NULL);
    if (rc) return rc;
  }
}

/* One "C" measurement of kernel kn on the workers set[nset] at once; rates into out[nset]. */
static int lab__calib_measure(lab__lab *L, const size_t *set, size_t nset, const char *kn, double *out,
                              struct pollfd *pf, size_t *idx) {
  double secs = L->cfg->lab.predict_calibrate;
  for (size_t q = 0; q < nset; q++) L->w[set[q]].c_got = 0;
  for (size_t q = 0; q < nset; q++)
    lab__send(&L->w[set[q]], "C %.17g %s %s/calibration.%zu.tmp", secs, kn, L->outdir, set[q]);
  int rc = lab__calib_wait(L, set, nset, 0, 30 + 10 * secs, pf, idx);
  for (size_t q = 0; q < nset && !rc; q++) out[q] = L->w[set[q]].c_rate > 0 ? L->w[set[q]].c_rate : 1e-6;
  return rc;
}

static int lab__dcmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}
/* The median of v[n] (sorted in place): a burst of the machine's other load in one round does not
 * move it, where it would move a mean. */
static double lab__median(double *v, size_t n) {
  qsort(v, n, sizeof *v, lab__dcmp);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* The calibration, measured with the lab's own workers (spawned, not joined yet): for each kernel
 * the job file uses, each worker alone (and at the duty cycle of each `slow` fault it will get),
 * then workers 0..K-1 at once for K = 2..N, so that contention is measured; `rounds` times,
 * interleaved, each figure the median over the rounds (the machine's other load drifts and comes
 * in bursts). Then one run of each command job on worker 0, alone. */
static int lab__calibrate_workers(lab__lab *L, lab_calib *c, struct pollfd *pf, size_t *idx) {
  const lab_config *cfg = L->cfg;
  size_t set[LAB__MAX_WORKERS], nw = L->nw;
  double got[LAB__MAX_WORKERS];
  unsigned rounds = (unsigned)cfg->lab.predict_rounds;
  int rc = 0;
  c->calibrate_s = cfg->lab.predict_calibrate;
  c->rounds = rounds;
  /* the slowed duty cycles to measure: each (worker, factor) of a slow fault, per kernel */
  c->nslow = 0;
  for (int k = 0; k < KRN_NKERNELS; k++)
    for (size_t f = 0; c->kernel_used[k] && f < L->nfaults; f++) {
      const lab__fault *x = &L->faults[f];
      if (x->action != LAB_FAULT_SLOW) continue;
      size_t q = 0;
      while (q < c->nslow &&
             !(c->slow[q].kernel == k && c->slow[q].worker == x->worker && c->slow[q].factor == x->factor))
        q++;
      if (q == c->nslow && c->nslow < LAB_CALIB_MAX_WORKERS) {
        c->slow[q].kernel = k;
        c->slow[q].worker = x->worker;
        c->slow[q].factor = x->factor;
        c->slow[q].rate = 0;
        c->nslow++;
      }
    }
  /* per round: [kernel][slot] with slot i (alone), nw + K * nw + i (together), then the slowed */
  size_t slots = nw + (nw + 1) * nw + c->nslow + 3;
  double *m = calloc((size_t)rounds * KRN_NKERNELS * slots + 1, sizeof *m), *v = calloc(rounds + 1, sizeof *v);
  if (!m || !v) {
    free(m);
    free(v);
    return LAB_ENOMEM;
  }
#define LAB__M(r, k, slot) m[((size_t)(r)*KRN_NKERNELS + (size_t)(k)) * slots + (slot)]
  L->calibrating = 1;
  for (unsigned r = 0; r < rounds && !rc; r++)
    for (int k = 0; k < KRN_NKERNELS && !rc; k++) {
      if (!c->kernel_used[k]) continue;
      const char *kn = krn_kernel_name((krn_kernel)k);
      for (size_t i = 0; i < nw && !rc; i++) {
        set[0] = i;
        if (!(rc = lab__calib_measure(L, set, 1, kn, got, pf, idx))) LAB__M(r, k, i) = got[0];
      }
      for (size_t q = 0; q < c->nslow && !rc; q++) {
        if (c->slow[q].kernel != k) continue;
        lab__worker *w = &L->w[c->slow[q].worker];
        lab__send(w, "S %.17g", c->slow[q].factor);
        set[0] = (size_t)c->slow[q].worker;
        if (!(rc = lab__calib_measure(L, set, 1, kn, got, pf, idx))) LAB__M(r, k, nw + (nw + 1) * nw + q) = got[0];
        lab__send(w, "S %.17g", w->speed);
      }
      /* a run's fixed costs, on worker 0 alone at full speed (set-up, one checkpoint, the end) */
      set[0] = 0;
      L->w[0].c_got = 0;
      lab__send(&L->w[0], "V %s %d %s/calibration.v.tmp", kn, cfg->lab.verify, L->outdir);
      if (!(rc = lab__calib_wait(L, set, 1, 0, 120, pf, idx)))
        for (int q = 0; q < 3; q++) LAB__M(r, k, slots - 3 + (size_t)q) = L->w[0].c_v[q];
      for (size_t K = 2; K <= nw && !rc; K++) {
        for (size_t i = 0; i < K; i++) set[i] = i;
        if (!(rc = lab__calib_measure(L, set, K, kn, got, pf, idx)))
          for (size_t i = 0; i < K; i++) LAB__M(r, k, nw + K * nw + i) = got[i];
      }
    }
  for (int k = 0; k < KRN_NKERNELS && !rc; k++) {
    if (!c->kernel_used[k]) continue;
    for (size_t slot = 0; slot < slots; slot++) {
      for (unsigned r = 0; r < rounds; r++) v[r] = LAB__M(r, k, slot);
      double med = lab__median(v, rounds);
      if (slot < nw)
        c->alone[k][slot] = med;
      else if (slot < nw + (nw + 1) * nw) {
        size_t K = (slot - nw) / nw, i = (slot - nw) % nw;
        if (K >= 2 && i < K) c->together[k][K - 1][i] = med;
      } else if (slot >= slots - 3) {
        double *dst[3] = {&c->setup_s[k], &c->sync_s[k], &c->finish_s[k]};
        *dst[slot - (slots - 3)] = med;
      } else if (c->slow[slot - nw - (nw + 1) * nw].kernel == k)
        c->slow[slot - nw - (nw + 1) * nw].rate = med;
    }
  }
#undef LAB__M
  free(m);
  free(v);
  for (size_t j = 0; j < cfg->njobs && !rc; j++) {
    if (cfg->jobs[j].kernel[0]) continue;
    lab__worker *w = &L->w[0];
    w->c_done = 0;
    double t0 = lab__now();
    lab__send(w, "X %zu 0 %s", j, cfg->jobs[j].command);
    set[0] = 0;
    rc = lab__calib_wait(L, set, 1, 1, cfg->lab.time_limit, pf, idx);
    c->cmd_s[j] = w->c_end - t0;
    c->cmd_exit[j] = w->c_status;
  }
  L->calibrating = 0;
  return rc;
}

/* The score a worker joins the core with under --predict, in the real lab and in its twin alike:
 * its work units / s alone, the mean over the kernels calibrated (1 with none). */
static double lab__calib_score(const lab_calib *c, size_t i) {
  double sum = 0;
  int n = 0;
  for (int k = 0; k < KRN_NKERNELS; k++)
    if (c->kernel_used[k] && c->alone[k][i] > 0 && c->chunk_s[k] > 0) {
      sum += c->alone[k][i] * c->chunk_s[k];
      n++;
    }
  return n ? sum / n : 1.0;
}

/* The prediction: the twin (lab_sim.c) run from the calibration alone. */
static int lab__predict(lab__lab *L) {
  const lab_config *cfg = L->cfg;
  const lab_calib *c = L->calib;
  size_t nw = L->nw, nj = cfg->njobs;
  int rc = LAB_ENOMEM;
  double *rate = calloc(nw * nj + 1, sizeof *rate), *setup = calloc(nj + 1, sizeof *setup);
  double *fin = calloc(nj + 1, sizeof *fin), *sync = calloc(nj + 1, sizeof *sync);
  int *failed = calloc(nj + 1, sizeof *failed);
  double *slow = calloc(L->nfaults * KRN_NKERNELS + 1, sizeof *slow);
  L->rep->pred = calloc(nj + 1, sizeof *L->rep->pred);
  if (!rate || !setup || !fin || !sync || !failed || !slow || !L->rep->pred) goto out;
  /* a slow fault's measured effect, relative to the worker alone at its own duty cycle */
  for (size_t f = 0; f < L->nfaults; f++)
    for (size_t q = 0; L->faults[f].action == LAB_FAULT_SLOW && q < c->nslow; q++)
      if (c->slow[q].worker == L->faults[f].worker && c->slow[q].factor == L->faults[f].factor &&
          c->alone[c->slow[q].kernel][c->slow[q].worker] > 0)
        slow[f * KRN_NKERNELS + (size_t)c->slow[q].kernel] =
            c->slow[q].rate / c->alone[c->slow[q].kernel][c->slow[q].worker];
  for (size_t j = 0; j < nj; j++) {
    krn_kernel k;
    if (cfg->jobs[j].kernel[0] && krn_kernel_parse(cfg->jobs[j].kernel, &k) == 0) {
      for (size_t i = 0; i < nw; i++) rate[i * nj + j] = c->alone[k][i] * L->wpc[j];
      setup[j] = c->setup_s[k];
      fin[j] = c->finish_s[k];
      sync[j] = c->sync_s[k];
    } else {
      failed[j] = c->cmd_exit[j] != 0;
    }
  }
  sched_cluster_params cp;
  memset(&cp, 0, sizeof cp);
  cp.ncoloc = c->ncoloc;
  memcpy(cp.coloc, c->coloc, c->ncoloc * sizeof cp.coloc[0]);
  int host[LAB__MAX_WORKERS];
  for (size_t i = 0; i < nw && i < LAB__MAX_WORKERS; i++) host[i] = L->w[i].rank; /* this run's hosts */
  lab__twin_in in = {L->calib_score, rate, L->nchunks,         c->cmd_s, failed, setup, fin,
                     sync,           &cp,  cfg->lab.calibrate, slow,     L->svc, host};
  rc = lab__simulate(cfg, &in, L->rep->pred, &L->rep->pred_makespan, &L->rep->pred_losses);
out:
  free(rate);
  free(setup);
  free(fin);
  free(sync);
  free(failed);
  free(slow);
  return rc;
}

/* lab.device: "cpu" needs nothing; "gpu" and "auto" ask the helper worker (a CUDA context does not
 * survive fork(), so the runner never opens one) to make every worker's executor in turn, then
 * the whole GPU, on which the chunk times `work` is counted in are measured. "gpu" without a
 * usable one is an error of the job file (FILE:LINE, LAB_ECONFIG: exit 2) before anything ran:
 * the new journal and its output folder are removed. "auto" then stays on the CPU and says so. */
static int lab__choose_device(lab__lab *L, lab__worker *helper) {
  const lab_config *c = L->cfg;
  snprintf(L->rep->lab_device, sizeof L->rep->lab_device, "cpu");
  for (size_t i = 0; i < L->nw; i++) /* what a worker starts with (lab_worker.c); GPU workers say theirs */
    snprintf(L->rep->executors[i], sizeof L->rep->executors[i], "cpu, %d thread%s", (int)c->lab.threads,
             c->lab.threads == 1 ? "" : "s");
  if (c->lab.device == LAB_DEVICE_CPU) return 0;
  char why[300] = "";
  char spec[32];
  for (size_t i = 0; i <= L->nw && !why[0]; i++) {
    if (i < L->nw)
      lab__gpu_spec(c, i, spec, sizeof spec);
    else
      snprintf(spec, sizeof spec, "gpu");
    lab__send(helper, "E %s", spec);
    double ok = lab__ask(helper, 'E', 60);
    if (ok == 1) continue;
    char *text = isnan(ok) ? NULL : strchr(helper->last, ' ');
    snprintf(why, sizeof why, "%s: %s", spec, text ? text + 1 : "the probing worker did not answer");
    lab__unescape(why);
  }
  if (!why[0]) {
    L->gpu = 1;
    snprintf(L->rep->lab_device, sizeof L->rep->lab_device, "gpu");
    return 0;
  }
  if (c->lab.device == LAB_DEVICE_AUTO) {
    if (L->o->log) fprintf(L->o->log, "lab.device = \"auto\": no usable GPU (%s); the workers run on the CPU\n", why);
    lab__send(helper, "E cpu");
    return isnan(lab__ask(helper, 'E', 60)) ? LAB_ESYS : 0;
  }
  fprintf(stderr, "%s: key 'lab.device': \"gpu\" but no usable GPU here (%s); use \"cpu\" or \"auto\"\n", c->device_at,
          why);
  if (!L->o->resume && L->journal) { /* nothing ran: leave nothing behind */
    fclose(L->journal);
    L->journal = NULL;
    unlink(L->o->journal);
    rmdir(L->outdir);
  }
  return LAB_ECONFIG;
}

int lab_run(const lab_config *cfg, const lab_opts *o, lab_report *rep) {
  memset(rep, 0, sizeof *rep);
  if (!cfg || !o || !o->journal) return LAB_EINVAL;
  signal(SIGPIPE, SIG_IGN);
  int rc = 0;
  lab__lab L;
  memset(&L, 0, sizeof L);
  L.cfg = cfg;
  L.o = o;
  L.journal_path = o->journal;
  L.rep = rep;
  L.nw = (size_t)cfg->lab.workers;
  rep->njobs = cfg->njobs;
  rep->nworkers = L.nw;
  rep->jobs = calloc(cfg->njobs, sizeof *rep->jobs);
  rep->scores = calloc(L.nw, sizeof *rep->scores);
  rep->executors = calloc(L.nw, sizeof *rep->executors);
  L.w = calloc(L.nw, sizeof *L.w);
  L.nchunks = calloc(cfg->njobs, sizeof *L.nchunks);
  L.wpc = calloc(cfg->njobs, sizeof *L.wpc);
  L.arrived = calloc(cfg->njobs, sizeof *L.arrived);
  L.cmd_seconds = calloc(cfg->njobs, sizeof *L.cmd_seconds);
  L.cmd_failed = calloc(cfg->njobs, sizeof *L.cmd_failed);
  L.nwide = cfg->njobs * SCHED_MAX_RUNS;
  L.wide = calloc(L.nwide, sizeof *L.wide);
  L.svc = calloc(cfg->njobs, sizeof *L.svc);
  if (!rep->jobs || !rep->scores || !rep->executors || !L.w || !L.nchunks || !L.wpc || !L.arrived || !L.cmd_seconds ||
      !L.cmd_failed || !L.wide || !L.svc) {
    rc = LAB_ENOMEM;
    goto out;
  }
  for (size_t k = 0; k < L.nwide; k++) L.wide[k].job = -1;
  for (size_t j = 0; j < cfg->njobs; j++) L.svc[j].job = -1;
  for (size_t j = 0; j < cfg->njobs; j++) {
    rep->jobs[j].outcome = -1;
    rep->jobs[j].exit_status = -1;
    L.cmd_seconds[j] = NAN;
  }
  L.nranks = 1;
  if (o->use_mpi) {
    MPI_Comm_rank(MPI_COMM_WORLD, &L.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &L.nranks);
  }
  {
    char mark[4200];
    lab__mark(o->journal, mark, sizeof mark);
    if (o->resume) {
      int killed = lab__kill_marked(mark);
      if (killed)
        fprintf(stderr, "spotlab lab: killed %d process%s the interrupted lab had left running\n", killed,
                killed == 1 ? "" : "es");
    }
    char *eq = strchr(mark, '=');
    *eq = '\0';
    setenv(mark, eq + 1, 1); /* inherited by the workers and their commands */
  }
  if (L.nw > 64 || (size_t)L.nranks > L.nw) {
    if (L.rank == 0)
      fprintf(stderr,
              "spotlab lab: %zu workers cannot be spread over %d ranks (at most 64, at least one per "
              "rank)\n",
              L.nw, L.nranks);
    rc = LAB_EINVAL;
    goto out;
  }
  for (size_t i = 0; i < L.nw; i++) {
    lab__worker *w = &L.w[i];
    w->to = w->from = -1;
    w->job = -1;
    w->speed = lab__speed_of(cfg, i);
    w->gid = (int)i;
    w->pw_job = -1;
    w->svc = w->req = -1;
    /* blocks of workers per rank (host): rank r runs workers [r n / R, (r + 1) n / R) */
    w->rank = (int)(i * (size_t)L.nranks / L.nw);
    w->remote = w->rank != L.rank;
  }
  if (L.rank != 0) {
    rc = lab__relay(&L);
    goto out;
  }
  struct pollfd pf[LAB__MAX_WORKERS];
  size_t idx[LAB__MAX_WORKERS];

  /* The core, configured from the job file. */
  sched_config sc;
  sched_config_default(&sc);
  sc.max_gpus = sc.max_providers = (uint32_t)L.nw;
  sc.max_nodes = 1;
  sc.max_jobs = (uint32_t)cfg->njobs;
  sc.sink = lab__sink;
  sc.sink_ctx = &L;
  sc.seed = (uint64_t)cfg->lab.seed;
  sc.policy = (sched_policy)cfg->lab.policy;
  sc.ckpt_rule = SCHED_CKPT_FIXED;
  sc.ckpt_interval_s = cfg->lab.ckpt_interval;
  sc.standby_k = (unsigned)cfg->lab.standby;
  sc.replicas = (unsigned)cfg->lab.replicas;
  sc.heartbeat_timeout_s = cfg->lab.heartbeat_timeout;
  sc.max_restarts = (unsigned)cfg->lab.max_restarts;
  sc.queue_scan = (unsigned)(cfg->njobs < 64 ? cfg->njobs : 64);
  /* services: the lab's cool-down and target (the core's defaults are for hours); the twin's too */
  sc.cooldown_s = cfg->lab.scale_cooldown;
  for (size_t j = 0; j < cfg->njobs; j++)
    if (lab__is_service(&cfg->jobs[j])) sc.target_util = cfg->jobs[j].target_util;
  rc = sched_create(&sc, &L.s);
  if (rc) {
    fprintf(stderr, "spotlab lab: scheduling core: %s\n", sched_strerror(rc));
    rc = LAB_ESCHED;
    goto out;
  }
  /* the services' traces are read once before anything is written: a bad one stops the lab here */
  for (size_t j = 0; j < cfg->njobs; j++) {
    if (!lab__is_service(&cfg->jobs[j])) continue;
    lab__svc probe;
    char err[1024];
    if ((rc = lab__svc_load(cfg, j, 1.0, &probe, err, sizeof err))) {
      fprintf(stderr, "%s\n", err);
      goto out;
    }
    lab__svc_free(&probe);
  }
  if ((rc = lab__mkdir_for(o->journal, L.outdir, sizeof L.outdir))) goto out;
  if ((rc = lab__faults(cfg, &L.faults, &L.nfaults))) goto out;

  if (o->resume) {
    if ((rc = lab__replay(&L, o->journal))) goto out;
    rep->resumed = 1;
  } else {
    int fd = open(o->journal, O_WRONLY | O_CREAT | O_EXCL | O_APPEND, 0644);
    if (fd < 0) {
      fprintf(stderr, "spotlab lab: cannot create journal %s: %s%s\n", o->journal, strerror(errno),
              errno == EEXIST ? " (continue it with --resume, or remove it)" : "");
      rc = LAB_EIO;
      goto out;
    }
    L.journal = fdopen(fd, "a");
    fprintf(L.journal, "# spotlab-lab-journal 1 %zu %zu %016llx\n", cfg->njobs, L.nw, lab__hash(cfg->text));
  }
  /* Kernel jobs are cut into chunk executions of a fixed size once: `work` seconds at speed 1.0
   * make round(work / seconds-per-chunk) of them (measured here, unslowed, before any worker
   * runs; at least LAB__DISTINCT). The count is journaled, so a resumed lab keeps it. */
  lab__worker helper;
  memset(&helper, 0, sizeof helper);
  helper.speed = 1.0;
  helper.to = helper.from = -1;
  if ((rc = lab__spawn_into(&L, &helper, 0))) goto out;
  lab__send(&helper, "Q");
  if (!isnan(lab__ask(&helper, 'Q', 60))) {
    /* the line's text after the flag is the device or why there is none */
    snprintf(rep->device, sizeof rep->device, "%s", helper.last);
    lab__unescape(rep->device);
  }
  if ((rc = lab__choose_device(&L, &helper))) {
    lab__bury(&helper);
    goto out;
  }
  double chunk_s[KRN_NKERNELS] = {0};
  for (size_t j = 0; j < cfg->njobs; j++) {
    krn_kernel k;
    if (!lab__is_service(&cfg->jobs[j]) || L.svc[j].job >= 0 || krn_kernel_parse(cfg->jobs[j].kernel, &k) != 0)
      continue;
    /* a service: its requests' sizes in chunks of its kernel, from the chunk time (journaled) */
    if (!(chunk_s[k] > 0)) {
      lab__send(&helper, "M %s", krn_kernel_name(k));
      chunk_s[k] = lab__ask(&helper, 'M', 60);
    }
    double cs = chunk_s[k] > 0 ? chunk_s[k] : 1e-3;
    char err[1024];
    if ((rc = lab__svc_load(cfg, j, cs, &L.svc[j], err, sizeof err))) {
      fprintf(stderr, "%s\n", err);
      L.svc[j].job = -1;
      lab__bury(&helper);
      goto out;
    }
    L.wpc[j] = cs;
    fprintf(L.journal, "S %zu %.17g\n", j, cs);
  }
  for (size_t j = 0; j < cfg->njobs; j++) {
    krn_kernel k;
    if (!cfg->jobs[j].kernel[0] || lab__is_service(&cfg->jobs[j]) || L.nchunks[j] ||
        krn_kernel_parse(cfg->jobs[j].kernel, &k) != 0)
      continue;
    if (!(chunk_s[k] > 0)) {
      lab__send(&helper, "M %s", krn_kernel_name(k));
      chunk_s[k] = lab__ask(&helper, 'M', 60);
    }
    double n = chunk_s[k] > 0 ? floor(cfg->jobs[j].work / chunk_s[k] + 0.5) : LAB__DISTINCT;
    /* at least every distinct chunk once, so that the output is whole */
    L.nchunks[j] = n < LAB__DISTINCT ? LAB__DISTINCT : n > 1e7 ? 10000000 : (size_t)n;
    L.wpc[j] = cfg->jobs[j].work / (double)L.nchunks[j];
    fprintf(L.journal, "N %zu %zu\n", j, L.nchunks[j]);
  }
  if (fflush(L.journal) != 0 || fdatasync(fileno(L.journal)) != 0) {
    fprintf(stderr, "spotlab lab: writing the journal %s failed: %s\n", o->journal, strerror(errno ? errno : EIO));
    L.journal_failed = 1;
    rc = LAB_EIO;
    lab__bury(&helper);
    goto out;
  }
  /* --predict: the calibration stored beside the journal (or named) is reused; otherwise the
   * helper measures each kernel's chunk time and fixed costs here, the workers the rest below. */
  int measure = 0;
  if (o->predict) {
    char err[1024];
    snprintf(rep->calib_path, sizeof rep->calib_path, "%s", o->calibration ? o->calibration : "");
    if (!o->calibration) snprintf(rep->calib_path, sizeof rep->calib_path, "%s.calib.csv", o->journal);
    if (o->calibration || (o->resume && access(rep->calib_path, F_OK) == 0)) {
      if ((rc = lab_calib_load(rep->calib_path, cfg, &L.calib, err, sizeof err))) {
        fprintf(stderr, "%s\n", err);
        lab__bury(&helper);
        goto out;
      }
    } else if (!(L.calib = lab_calib_create(cfg))) {
      rc = LAB_ENOMEM;
      lab__bury(&helper);
      goto out;
    } else {
      measure = 1;
    }
    for (size_t j = 0; measure && j < cfg->njobs; j++) {
      krn_kernel k;
      if (cfg->jobs[j].kernel[0] && krn_kernel_parse(cfg->jobs[j].kernel, &k) == 0) L.calib->kernel_used[k] = 1;
    }
    for (int k = 0; measure && k < KRN_NKERNELS; k++) {
      if (!L.calib->kernel_used[k]) continue;
      const char *kn = krn_kernel_name((krn_kernel)k);
      if (!(chunk_s[k] > 0)) {
        lab__send(&helper, "M %s", kn);
        chunk_s[k] = lab__ask(&helper, 'M', 60);
      }
      L.calib->chunk_s[k] = chunk_s[k] > 0 ? chunk_s[k] : 1e-3;
    }
  }
  lab__send(&helper, "C %.17g", cfg->lab.calibrate);
  L.ref_rate = lab__ask(&helper, 'C', 30 + 10 * cfg->lab.calibrate);
  lab__bury(&helper);
  if (!(L.ref_rate > 0)) {
    fprintf(stderr, "spotlab lab: the reference worker did not report its speed\n");
    rc = LAB_ESYS;
    goto out;
  }

  /* Workers: spawn, measure one at a time (so they do not slow each other's measurement). */
  for (size_t i = 0; i < L.nw; i++) {
    if ((rc = lab__spawn(&L, i))) goto out;
    lab__send(&L.w[i], "C %.17g", cfg->lab.calibrate);
    if ((rc = lab__wait_calibration(&L, i, 30 + 10 * cfg->lab.calibrate, pf, idx))) {
      fprintf(stderr, "spotlab lab: worker %zu did not report its speed\n", i);
      goto out;
    }
  }
  if (o->predict) {
    if (measure) {
      if (o->log && L.nw > 1)
        fprintf(o->log, "calibrating %zu workers (each alone, then 2..%zu together)...\n", L.nw, L.nw);
      if (o->log && L.nw == 1) fprintf(o->log, "calibrating the worker...\n");
      if ((rc = lab__calibrate_workers(&L, L.calib, pf, idx))) {
        fprintf(stderr, "spotlab lab: the calibration did not finish (a worker died or did not answer)\n");
        goto out;
      }
      double la[1];
      if (getloadavg(la, 1) == 1) L.calib->load1 = la[0];
      char err[1024];
      L.calib->hosts = (unsigned)L.nranks; /* workers in blocks per rank, as lab_calib_host has them */
      if ((rc = lab_calib_learn(L.calib)) || (rc = lab_calib_write(rep->calib_path, cfg, L.calib, err, sizeof err))) {
        fprintf(stderr, "spotlab lab: calibration: %s\n", rc == LAB_EIO ? err : lab_strerror(rc));
        goto out;
      }
    }
    rep->calib_load1 = L.calib->load1;
    if (!(L.calib_score = calloc(L.nw, sizeof *L.calib_score))) {
      rc = LAB_ENOMEM;
      goto out;
    }
    for (size_t i = 0; i < L.nw; i++) L.w[i].score = L.calib_score[i] = lab__calib_score(L.calib, i);
    if ((rc = lab__predict(&L))) goto out;
    if (o->log) {
      fprintf(o->log, "calibration %s %s (load average %.2f); contention f(k), k = 1..%u:", rep->calib_path,
              measure ? "measured" : "read", L.calib->load1, L.calib->ncoloc);
      for (unsigned k = 0; k < L.calib->ncoloc; k++) fprintf(o->log, " %.3f", L.calib->coloc[k]);
      fprintf(o->log, "\npredicted makespan %.3f s; now the real lab\n", rep->pred_makespan);
      fflush(o->log);
    }
  }
  /* The clock starts (or continues, after a resume) now. */
  L.t_origin = lab__now();
  L.t_base = L.t_last;
  double t = lab__t(&L);
  if (o->resume) {
    fprintf(L.journal, "R %.17g\n", t);
    while (L.next_fault < L.nfaults && L.faults[L.next_fault].at <= t) L.next_fault++;
    /* a service's load samples go on from now, as the faults do */
    for (size_t j = 0; j < cfg->njobs; j++)
      while (L.svc[j].job >= 0 && L.arrived[j] && L.svc[j].next_load < t) L.svc[j].next_load += L.svc[j].window / 4;
    /* The previous runner's workers died with it: every GPU the core still holds is lost. */
    for (size_t i = 0; i < L.nw; i++) {
      sched_gpu_status gs;
      if (sched_gpu_query(L.s, (uint32_t)i, t, &gs) == 0 && gs.state != SCHED_GPU_ABSENT)
        if ((rc = lab__handle(&L, SCHED_EV_GPU_MISSED, t, (uint32_t)i, 0, 0, 0))) goto out;
    }
  }
  for (size_t i = 0; i < L.nw; i++)
    if ((rc = lab__join(&L, i, t))) goto out;

  while (L.ended < cfg->njobs) {
    /* what the workers said before t is handled before anything is decided at t */
    if ((rc = lab__drain(&L, pf, idx, &t))) break;
    if (t > cfg->lab.time_limit) {
      fprintf(stderr, "spotlab lab: time limit of %g s reached with %zu of %zu jobs ended\n", cfg->lab.time_limit,
              L.ended, cfg->njobs);
      rc = LAB_ETIMEOUT;
      break;
    }
    double next = t + 0.05;
    /* arrivals */
    for (size_t j = 0; j < cfg->njobs && !rc; j++) {
      if (L.arrived[j]) continue;
      if (cfg->jobs[j].at <= t) {
        L.arrived[j] = 1;
        rc = lab__handle(&L, SCHED_EV_JOB_ARRIVE, t, 0, (uint32_t)j, 0, 0);
      } else if (cfg->jobs[j].at < next) {
        next = cfg->jobs[j].at;
      }
    }
    /* faults, resumed stalls, respawns, pending joins */
    while (!rc && L.next_fault < L.nfaults && L.faults[L.next_fault].at <= t)
      lab__inject(&L, &L.faults[L.next_fault++]);
    if (L.next_fault < L.nfaults && L.faults[L.next_fault].at < next) next = L.faults[L.next_fault].at;
    for (size_t i = 0; i < L.nw && !rc; i++) {
      lab__worker *w = &L.w[i];
      if (w->stalled && w->cont_at > 0 && w->cont_at <= t) {
        lab__signal(w, SIGCONT);
        w->stalled = 0;
        lab__log(&L, "worker %zu resumes", i);
      }
      if (!w->pid && w->respawn_at > 0 && w->respawn_at <= t) {
        w->speed = lab__speed_of(cfg, i);
        if ((rc = lab__spawn(&L, i))) break;
        lab__send(w, "C %.17g", cfg->lab.calibrate);
        lab__log(&L, "worker %zu respawned", i);
      }
      if (w->want_join) {
        sched_gpu_status gs;
        sched_gpu_query(L.s, (uint32_t)i, t, &gs);
        if (gs.state == SCHED_GPU_ABSENT) rc = lab__join(&L, i, t);
      }
    }
    /* services: arrivals, load samples for the core's autoscaling, serving; done when every
     * request of the stream was served or lost (the service is withdrawn: it ends) */
    for (size_t j = 0; j < cfg->njobs && !rc; j++) {
      lab__svc *sv = &L.svc[j];
      if (sv->job < 0 || !L.arrived[j] || sv->ended) continue;
      lab__svc_arrive(sv, t);
      double step = sv->window / 4;
      while (!rc && sv->next_load <= t) {
        rc = lab__handle(&L, SCHED_EV_LOAD, t, 0, (uint32_t)j, 0, lab__svc_load_at(sv, sv->next_load));
        sv->next_load += step;
      }
      if (rc) break;
      lab__svc_feed(&L, sv);
      if (lab__svc_finished(sv)) {
        rc = lab__handle(&L, SCHED_EV_JOB_WITHDRAW, t, 0, (uint32_t)j, 0, 0);
        continue;
      }
      if (sv->next_load < next) next = sv->next_load;
      if (lab__svc_next_arrival(sv) < next) next = lab__svc_next_arrival(sv);
    }
    /* the core's timers */
    if (!rc && sched_next_wakeup(L.s) <= t) rc = lab__handle(&L, SCHED_EV_TICK, t, 0, 0, 0, 0);
    if (rc) break;
    double wake = sched_next_wakeup(L.s);
    if (wake < next) next = wake;
    /* wait for workers */
    int ms = (int)ceil((next - lab__t(&L)) * 1000);
    if (ms < 0) ms = 0;
    if (ms > 50) ms = 50;
    if ((rc = lab__pump(&L, pf, idx, ms, NULL))) break;
  }

out:
  if (L.w && L.rank == 0) {
    for (size_t i = 0; i < L.nw; i++) lab__bury(&L.w[i]);
    for (int r = 1; r < L.nranks; r++) MPI_Send("QUIT", 5, MPI_CHAR, r, LAB__CTRL_TAG, MPI_COMM_WORLD);
  }
  if (L.rank != 0) {
    sched_destroy(L.s);
    free(L.w);
    free(L.nchunks);
    free(L.wpc);
    free(L.arrived);
    free(L.cmd_seconds);
    free(L.cmd_failed);
    free(L.wide);
    free(L.svc);
    rep->njobs = 0; /* the report lives on rank 0 */
    return rc;
  }
  if (L.s) {
    lab__finish_report(&L);
    char msg[256];
    if (sched_check_invariants(L.s, msg, sizeof msg) != 0) {
      fprintf(stderr, "spotlab lab: scheduling core invariant broken: %s\n", msg);
      if (!rc) rc = LAB_ESCHED;
    }
  }
  if (L.journal) {
    fflush(L.journal);
    fdatasync(fileno(L.journal));
    fclose(L.journal);
  }
  /* Observed speeds (at least 0.3 s of kernel progress seen), for the report and the twin. */
  rep->observed = calloc(L.nw ? L.nw : 1, sizeof *rep->observed);
  double *twin_speed = calloc(L.nw ? L.nw : 1, sizeof *twin_speed);
  for (size_t i = 0; rep->observed && twin_speed && i < L.nw; i++) {
    rep->observed[i] = L.w[i].obs_time >= 0.3 ? L.w[i].obs_work / L.w[i].obs_time : NAN;
    twin_speed[i] = isfinite(rep->observed[i]) && rep->observed[i] > 0 ? rep->observed[i] : rep->scores[i];
  }
  if (!rc && o->also_simulate) {
    rep->sim = calloc(cfg->njobs, sizeof *rep->sim);
    if (!rep->sim || !twin_speed)
      rc = LAB_ENOMEM;
    else
      rc = lab__simulate_observed(cfg, twin_speed, L.nchunks, L.cmd_seconds, L.cmd_failed, L.svc, rep->sim,
                                  &rep->sim_makespan);
  }
  free(twin_speed);
  lab_calib_free(L.calib);
  free(L.calib_score);
  sched_destroy(L.s);
  free(L.w);
  free(L.nchunks);
  free(L.wpc);
  free(L.arrived);
  free(L.cmd_seconds);
  free(L.cmd_failed);
  for (size_t k = 0; L.wide && k < L.nwide; k++) lab__wide_free(&L.wide[k].x);
  free(L.wide);
  for (size_t j = 0; L.svc && j < cfg->njobs; j++) lab__svc_free(&L.svc[j]);
  free(L.svc);
  free(L.faults);
  return rc;
}

void lab_report_free(lab_report *r) {
  if (!r) return;
  free(r->executors);
  free(r->jobs);
  free(r->sim);
  free(r->pred);
  free(r->scores);
  free(r->observed);
  memset(r, 0, sizeof *r);
}
