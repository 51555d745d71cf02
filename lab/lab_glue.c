/* lab_glue.c - the runner's glue between the workers and the scheduling core. It is thin on
 * purpose: every decision (where a job runs, when it is stopped, restarted, checkpointed or given
 * up) comes from sched_handle; this file only turns what the workers say (and, on a resume, what
 * the journal recorded) into sched events, and the core's decisions into messages to the workers.
 * Each event is journaled before the core sees it (lab_journal.c). */
#include "lab/lab_runner.h"
#include "sim/failpoint.h"

#include <errno.h>
#include <math.h>
#include <mpi.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- The core ------------------------------------------------------------------------------- */
void lab__sink(void *ctx, const sched_decision *d) {
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
           n, krn_split_names[r->x.strategy], first, L->nchunks[job], r->x.npieces, r->x.piece);
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
void lab__svc_feed(lab__lab *L, lab__svc *sv) {
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
  int add = lab__svc_rescale(sv, d, d->t);
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
      if (lab__svc_release(sv, d, w->req)) lab__journal_put(&L->jr, "q %u %ld\n", d->job, w->req);
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

/* Hands one event to the core (journaling it first), then applies the decisions. */
int lab__handle(lab__lab *L, int type, double t, uint32_t gpu, uint32_t job, uint32_t run, double value) {
  sched_event ev;
  lab__core_event(L->cfg, L->svc, &ev, type, t, gpu, job, run, value);
  if (!L->replaying) lab__journal_put(&L->jr, "E %d %.17g %u %u %u %.17g\n", type, t, gpu, job, run, value);
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
  if (!L->replaying && L->jr.f && ((type != SCHED_EV_HEARTBEAT && type != SCHED_EV_TICK) || n > 0)) {
    /* kill points (tests): the decisions applied, their event not yet synced; then synced */
    sim_failpoint("journal");
    if (lab__journal_sync(&L->jr) != 0) return LAB_ESTOPPED;
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

/* --predict's calibration: a worker's answers are recorded, nothing goes to the core. */
static int lab__on_calib_line(lab__lab *L, size_t i, char *line) {
  lab__worker *w = &L->w[i];
  long job = -1, run = -1, a = 0, b = 0;
  double x = 0;
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
    if (line[0] == 'F' && sscanf(line + 1, "%ld %ld %ld %ld", &job, &run, &a, &b) < 4) a = 1;
    w->c_status = line[0] == 'D' ? 0 : b ? 128 + (int)b : (int)a;
    w->c_done = 1;
    w->c_end = lab__now();
    w->pgid = 0;
    return 0;
  default: return 0;
  }
}

/* "W JOB RUN WORK": the observed speed's bookkeeping, then the run's progress to the core (a wide
 * run's: the sum over its members; a service's requests: none, the core judges it by its load). */
static int lab__on_progress(lab__lab *L, size_t i, long job, long run, double x, double t) {
  lab__worker *w = &L->w[i];
  if ((L->nchunks[job] || L->svc[job].job >= 0) && w->pw_job == job && w->pw_run == run && x >= w->pw_work &&
      t > w->pw_t && t - w->pw_t < 3 * L->cfg->lab.heartbeat) {
    w->obs_work += x - w->pw_work;
    w->obs_time += (t - w->pw_t) * (w->speed / lab__speed_of(L->cfg, i));
  }
  w->pw_job = job;
  w->pw_run = run;
  w->pw_t = t;
  w->pw_work = x;
  if (L->svc[job].job >= 0) return 0;
  lab__wrun *wr = lab__wide_find(L, job, run);
  if (wr) {
    if (w->job != job || w->run != run) return 0;
    w->wide_work = x;
    x = lab__wide_work(L, wr);
  }
  return lab__handle(L, SCHED_EV_JOB_PROGRESS, t, (uint32_t)i, (uint32_t)job, (uint32_t)run, x);
}

/* A service's request ended on replica i ("D": served, journaled so that a resumed lab does not
 * serve it again; "F": its piece failed, lost and not retried; a full disk stops the lab: "I"),
 * and the replica takes the next. */
static void lab__on_request_end(lab__lab *L, size_t i, long job, int served, double t) {
  lab__worker *w = &L->w[i];
  if (w->svc != job || w->req < 0 || w->job != job) return;
  if (served) {
    lab__svc_served(&L->svc[job], w->req, t);
    lab__journal_put(&L->jr, "Q %ld %ld %.17g\n", job, w->req, t);
  } else {
    lab__svc_lost(&L->svc[job], w->req);
    lab__journal_put(&L->jr, "q %ld %ld\n", job, w->req);
  }
  w->req = -1;
  w->job = -1;
  lab__svc_feed(L, &L->svc[job]);
}

/* "D JOB RUN": a run (or a wide run's piece, or its last step) completed on worker i. */
static int lab__on_done(lab__lab *L, size_t i, long job, long run, double t) {
  lab__worker *w = &L->w[i];
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

/* "F JOB RUN EXIT SIGNAL TAIL": a run failed on worker i. */
static int lab__on_failed(lab__lab *L, size_t i, long job, long run, long a, long b, const char *tail, double t) {
  lab__worker *w = &L->w[i];
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
  lab__journal_put(&L->jr, "X %ld %d %ld %s\n", job, status, b, tail);
  lab__log(L, "%s run %ld failed on worker %zu: exit %d", L->cfg->jobs[job].name, run, i, status);
  return lab__handle(L, SCHED_EV_JOB_FAIL, t, (uint32_t)i, (uint32_t)job, (uint32_t)run, 0);
}

/* One line from worker i (lab_internal.h's protocol). */
static int lab__on_line(lab__lab *L, size_t i, char *line) {
  lab__worker *w = &L->w[i];
  long job = -1, run = -1, a = 0, b = 0;
  double x = 0;
  int pos = 0;
  if (L->calibrating) return lab__on_calib_line(L, i, line);
  double t = lab__t(L);
  /* the lines about a job: JOB RUN first, a job of this job file */
  int nf = line[0] && strchr("WKDF", line[0]) ? sscanf(line + 1, "%ld %ld", &job, &run) : 0;
  int ok = nf == 2 && job >= 0 && (size_t)job < L->cfg->njobs;
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
    if (ok && sscanf(line + 1, "%ld %ld %lg", &job, &run, &x) == 3) return lab__on_progress(L, i, job, run, x, t);
    return 0;
  case 'K':
    if (ok && sscanf(line + 1, "%ld %ld %lg", &job, &run, &x) == 3)
      return lab__handle(L, SCHED_EV_CKPT_DONE, t, (uint32_t)i, (uint32_t)job, (uint32_t)run, x);
    return 0;
  case 'D':
    if (!ok) return 0;
    if (L->svc[job].job >= 0) {
      lab__on_request_end(L, i, job, 1, t);
      return 0;
    }
    return lab__on_done(L, i, job, run, t);
  case 'I': return lab__output_failed(L, i, line);
  case 'F':
    if (!ok || sscanf(line + 1, "%ld %ld %ld %ld %n", &job, &run, &a, &b, &pos) < 4) return 0;
    if (L->svc[job].job >= 0) {
      lab__on_request_end(L, i, job, 0, t);
      return 0;
    }
    return lab__on_failed(L, i, job, run, a, b, pos ? line + 1 + pos : "", t);
  default: return 0;
  }
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

/* Waits up to `ms` for anything from the workers, local (pipes) or on other ranks (MPI), and
 * handles it; *got (when not NULL) counts the pipes and messages that had something. */
int lab__pump(lab__lab *L, int ms, unsigned *got) {
  struct pollfd *pf = L->pf;
  size_t *idx = L->idx;
  nfds_t np = lab__pollset(L);
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
int lab__drain(lab__lab *L, double *t) {
  for (unsigned round = 0; round < LAB__DRAIN_ROUNDS; round++) {
    *t = lab__t(L);
    unsigned got = 0;
    int rc = lab__pump(L, 0, &got);
    if (rc || got == 0) return rc;
  }
  *t = lab__t(L); /* not after what it handled: the core's time only goes forward */
  return 0;
}

/* Waits for worker i's calibration answer (other lines are dropped: it has not joined). */
int lab__wait_calibration(lab__lab *L, size_t i, double timeout) {
  double until = lab__now() + timeout;
  while (!L->w[i].want_join) {
    if (lab__now() > until || !L->w[i].pid) return LAB_ESYS;
    int rc = lab__pump(L, 20, NULL);
    if (rc) return rc;
  }
  return 0;
}

int lab__join(lab__lab *L, size_t i, double t) {
  lab__worker *w = &L->w[i];
  w->want_join = 0;
  w->joined = 1;
  lab__log(L, "worker %zu joins, score %.3f", i, w->score);
  return lab__handle(L, SCHED_EV_GPU_JOIN, t, (uint32_t)i, 0, 0, w->score);
}

/* ---- A resume: the journal's records replayed into a fresh core (lab__journal_replay) -------- */
int lab__on_record(void *ctx, const lab__record *r) {
  lab__lab *L = ctx;
  long job = r->ljob;
  switch (r->kind) {
  case 'E':
    if (r->type == SCHED_EV_JOB_ARRIVE && r->job < L->cfg->njobs) L->arrived[r->job] = 1;
    return lab__handle(L, r->type, r->t, r->gpu, r->job, r->run, r->value) ? LAB__REC_REJECTED : 0;
  case 'N':
    L->nchunks[job] = r->nchunks;
    L->wpc[job] = L->cfg->jobs[job].work / (double)r->nchunks;
    return 0;
  case 'X':
    L->rep->jobs[job].exit_status = r->status;
    snprintf(L->rep->jobs[job].stderr_tail, sizeof L->rep->jobs[job].stderr_tail, "%s", r->tail);
    lab__unescape(L->rep->jobs[job].stderr_tail);
    return 0;
  case 'S': {
    /* a service's chunk time, fixed once: its request stream is rebuilt from it */
    if (!lab__is_service(&L->cfg->jobs[job]) || L->svc[job].job >= 0 || !(r->value > 0)) return LAB__REC_UNREADABLE;
    char err[1024];
    int rc = lab__svc_load(L->cfg, (size_t)job, r->value, &L->svc[job], err, sizeof err);
    if (rc) {
      fprintf(stderr, "%s\n", err);
      L->svc[job].job = -1;
      return rc;
    }
    L->wpc[job] = r->value;
    return 0;
  }
  case 'Q':
  case 'q':
    if (L->svc[job].job < 0 || r->run >= L->svc[job].n) return LAB__REC_UNREADABLE;
    if (r->kind == 'Q')
      lab__svc_served(&L->svc[job], (long)r->run, r->value);
    else
      lab__svc_lost(&L->svc[job], (long)r->run);
    return 0;
  default: return LAB__REC_UNREADABLE;
  }
}
