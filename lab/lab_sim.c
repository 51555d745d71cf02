/* lab_sim.c - the simulated twin of a lab, for `spotlab lab --also-simulate`.
 *
 * One engine LP holds a fresh scheduling core (the same sched.c the real runner drives) and plays
 * the lab's workers as a model: worker i computes at its measured score (work units / s, scaled
 * by later `slow` faults), heartbeats every lab.heartbeat while alive and not stalled, and goes
 * silent when killed; kernel runs checkpoint at chunk granularity, command jobs take as long as
 * their last real run did (and fail if it failed). Same job file, same fault schedule, same
 * policy: the differences between the twin and the real lab are what the model leaves out
 * (process start-up, pipe latency, CPU contention between workers, duty-cycle jitter). */
#include "lab/lab_internal.h"
#include "models/market/mkt_names.h"
#include "models/sched/sched.h"
#include "sim/sim.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { LS_ARRIVE = 1, LS_FAULT, LS_HB, LS_TICK, LS_DONE, LS_CONT, LS_RESPAWN, LS_WCKPT, LS_SVC };

typedef struct ls_msg {
  int type;
  int32_t a; /* job, fault index or worker */
  uint32_t run, gen;
} ls_msg;

typedef struct ls_worker {
  int alive, stalled, joined;
  double factor;                  /* speed now / speed at join */
  int slowf;                      /* the `slow` fault in force (index in faults), -1 = none */
  long job;                       /* -1 = idle */
  uint32_t run, gen;              /* gen: invalidates DONE events of a run that was stopped or rescheduled */
  double t0, w0;                  /* the current segment's start and the run's work done then */
  double wend;                    /* work at which the run (a wide run: the piece) is done */
  double setup_left, finish_left; /* kernel runs: fixed costs still ahead, s at full speed alone */
  double f;                       /* contention factor during the segment (1 = none) */
  long svc, req;                  /* a replica of this service (-1 none), serving this request (-1 none) */
} ls_worker;

typedef struct ls_ctx {
  const lab_config *cfg;
  const lab__twin_in *in;
  const lab__fault *faults;
  size_t nfaults;
  unsigned *losses;        /* out: workers the core declared lost */
  lab_job_result *svc_out; /* out, per job: a service's statistics */
} ls_ctx;

/* A run of a job wider than one worker, split as the real runner splits it (lab_wide.c). */
typedef lab__wslot ls_wrun;

typedef struct ls_state {
  sched *s;
  ls_worker *w;
  lab_job_result *jobs;
  ls_wrun *wide; /* njobs x SCHED_MAX_RUNS slots */
  size_t nwide;
  lab__svc *svc;     /* per job: a service's requests, as the runner's (job -1: none) */
  uint32_t *svc_gen; /* per job: the LS_SVC step that counts (older ones were superseded) */
  sched_decision dec[64];
  uint32_t *gpus; /* [64 x LAB__MAX_WIDTH]: dec[k].gpus points at row k */
  size_t ndec;
  int applying; /* the decisions of an event are being applied (the core must not be called) */
  double tick_at;
  int overflow;
} ls_state;

typedef struct ls_rec {
  int32_t job, outcome, ends, restarts;
  double submit, start, end;
} ls_rec;

static const sim_field ls_fields[] = {
    {"job", SIM_F_I32, offsetof(ls_rec, job), "1"},       {"outcome", SIM_F_I32, offsetof(ls_rec, outcome), "1"},
    {"ends", SIM_F_I32, offsetof(ls_rec, ends), "1"},     {"restarts", SIM_F_I32, offsetof(ls_rec, restarts), "1"},
    {"submit", SIM_F_F64, offsetof(ls_rec, submit), "s"}, {"start", SIM_F_F64, offsetof(ls_rec, start), "s"},
    {"end", SIM_F_F64, offsetof(ls_rec, end), "s"},
};
static const sim_table_def ls_tables[] = {{MKT_TABLE_JOBS, sizeof(ls_rec), ls_fields, 7, "simulated jobs"}};

static void ls_sink(void *ctx, const sched_decision *d) {
  ls_state *st = ctx;
  if (st->ndec == 64) {
    st->overflow = 1;
    return;
  }
  st->dec[st->ndec] = *d;
  unsigned n = d->ngpus < LAB__MAX_WIDTH ? d->ngpus : LAB__MAX_WIDTH;
  uint32_t *row = st->gpus + st->ndec * LAB__MAX_WIDTH;
  for (unsigned i = 0; i < n; i++) row[i] = d->gpus[i];
  st->dec[st->ndec].gpus = row;
  st->dec[st->ndec].ngpus = n;
  st->ndec++;
}

static void ls_send(sim_lp *lp, double at, int type, int32_t a, uint32_t run, uint32_t gen) {
  ls_msg m = {type, a, run, gen};
  double d = at - sim_now(lp);
  sim_send(lp, sim_lp_id(lp), d > 0 ? d : 0, &m, sizeof m);
}

static int ls_kernel(const ls_ctx *c, long job) { return job >= 0 && c->cfg->jobs[job].kernel[0]; }
static size_t ls_host(const ls_ctx *c, size_t i) {
  int h = c->in->host ? c->in->host[i] : 0;
  return h >= 0 && h < LAB__MAX_WORKERS ? (size_t)h : 0;
}

/* Work units per second of worker i's run at full contention-free pace (its duty cycle and slow
 * factor included). Command jobs: `work` over the duration of a run. */
static double ls_rate(const ls_ctx *c, const ls_worker *w, size_t i) {
  const lab_job_def *jd = &c->cfg->jobs[w->job];
  if (!jd->kernel[0]) {
    double real = c->in->cmd_seconds ? c->in->cmd_seconds[w->job] : NAN;
    if (isfinite(real)) return real > 0 ? jd->work / real : INFINITY;
    return c->in->scores[i] * w->factor;
  }
  double factor = w->factor;
  krn_kernel k;
  /* a slow-down measured by the calibration for this worker, factor and kernel wins over the
   * nominal ratio of duty cycles (under load the two differ: a worker that sleeps more gets the
   * cores sooner when it wakes) */
  if (w->slowf >= 0 && c->in->slow_ratio && krn_kernel_parse(jd->kernel, &k) == 0 &&
      c->in->slow_ratio[(size_t)w->slowf * KRN_NKERNELS + k] > 0)
    factor = c->in->slow_ratio[(size_t)w->slowf * KRN_NKERNELS + k];
  return c->in->rate[i * c->cfg->njobs + (size_t)w->job] * factor;
}

/* Brings the run's state to time t: the segment since t0 went at contention factor f, first
 * through the start-up costs, then the work, then the end's costs (all in seconds alone). */
static void ls_advance(const ls_ctx *c, ls_worker *w, size_t i, double t) {
  if (w->job < 0 || w->stalled || !w->alive || !(t > w->t0)) {
    w->t0 = t > w->t0 ? t : w->t0;
    return;
  }
  const lab_job_def *jd = &c->cfg->jobs[w->job];
  double e = (t - w->t0) * w->f, rs = ls_rate(c, w, i);
  double a = e < w->setup_left ? e : w->setup_left;
  w->setup_left -= a;
  e -= a;
  double need = rs > 0 ? (w->wend - w->w0) / rs : INFINITY;
  if (need < 0) need = 0;
  double b = e < need ? e : need;
  w->w0 = b >= need ? w->wend : w->w0 + b * rs;
  e -= b;
  if (w->w0 >= w->wend) w->finish_left = e < w->finish_left ? w->finish_left - e : 0;
  w->t0 = t;
  (void)jd;
}

static void ls_schedule_done(sim_lp *lp, ls_state *st, size_t i) {
  const ls_ctx *c = sim_lp_ctx(lp);
  ls_worker *w = &st->w[i];
  w->gen++;
  if (w->job < 0 || w->stalled || !w->alive) return;
  double rs = ls_rate(c, w, i), left = w->setup_left + w->finish_left;
  if (w->wend > w->w0) left += rs > 0 ? (w->wend - w->w0) / rs : 1e9;
  left /= w->f > 0 ? w->f : 1;
  ls_send(lp, w->t0 + (left > 0 ? left : 0), LS_DONE, (int32_t)i, w->run, w->gen);
}

/* Contention: every kernel run goes at its alone pace x f(k), k = the load of the kernel runs on
 * workers that are alive and not stalled (sched_coloc_factor, linear between whole k). Each counts
 * for its duty cycle relative to the one it was calibrated at (w->factor, at most 1): f(k) was
 * measured with k workers at their own lab.speeds, and a worker slowed by a `slow` fault to a
 * quarter of its duty cycle computes a quarter of the time. ASSUMPTION: it then takes the shared
 * cores a quarter of the time, so one full worker beside it goes at f(1.25), not f(2) (processor
 * sharing, Kleinrock 1967: the slow-down follows the offered load). Command runs are taken to
 * leave the cores alone (ASSUMPTION: the shipped commands sleep or exit). Called after anything
 * that may change k. */
static void ls_recontend(sim_lp *lp, ls_state *st) {
  const ls_ctx *c = sim_lp_ctx(lp);
  size_t nw = (size_t)c->cfg->lab.workers;
  double k[LAB__MAX_WORKERS] = {0}; /* per host: the load of its kernel runs (workers of other hosts
                                       do not slow them: a host is an MPI rank) */
  for (size_t i = 0; i < nw; i++)
    if (st->w[i].alive && !st->w[i].stalled && ls_kernel(c, st->w[i].job))
      k[ls_host(c, i)] += st->w[i].factor < 1 ? st->w[i].factor : 1;
  for (size_t i = 0; i < nw; i++) {
    ls_worker *w = &st->w[i];
    if (w->job < 0 || !w->alive || w->stalled) continue;
    double f = c->in->coloc ? sched_coloc_factor(c->in->coloc, k[ls_host(c, i)]) : 1.0;
    double fi = ls_kernel(c, w->job) ? f : 1.0;
    if (fi == w->f) continue;
    ls_advance(c, w, i, sim_now(lp));
    w->f = fi;
    ls_schedule_done(lp, st, i);
  }
}

static void ls_start(sim_lp *lp, ls_state *st, size_t i, uint32_t job, uint32_t run) {
  const ls_ctx *c = sim_lp_ctx(lp);
  ls_worker *w = &st->w[i];
  sched_job_status js;
  sched_job_query(st->s, job, &js);
  w->job = job;
  w->run = run;
  w->t0 = sim_now(lp);
  w->f = 1;
  /* kernels resume from the last checkpoint; commands restart from zero */
  int kern = c->cfg->jobs[job].kernel[0] != 0;
  w->w0 = kern ? js.saved_work : 0;
  w->wend = c->cfg->jobs[job].work;
  w->setup_left = kern && c->in->setup_s ? c->in->setup_s[job] : 0;
  w->finish_left = kern && c->in->finish_s ? c->in->finish_s[job] : 0;
  ls_schedule_done(lp, st, i);
}

static void ls_handle(sim_lp *lp, ls_state *st, int type, uint32_t gpu, uint32_t job, uint32_t run, double value);

/* ---- Wide runs: the real runner's split (lab_wide.c), each piece a run of its own on its member:
 * the inputs made (setup_s), the piece's chunks at the member's pace, its output synced (sync_s);
 * the last step, the run's last execution once more and the output verified (finish_s). */
static ls_wrun *ls_wide_find(ls_state *st, long job, uint32_t run) {
  return lab__wslot_find(st->wide, st->nwide, job, (long)run);
}
static void ls_wide_drop(ls_state *st, long job, long run) { lab__wslot_drop(st->wide, st->nwide, job, run); }

/* Member `slot` takes its next piece (or the last step): 1 when the run is done without a last
 * step (lab.verify = false), else 0. */
static int ls_wide_feed(sim_lp *lp, ls_state *st, ls_wrun *r, unsigned slot) {
  const ls_ctx *c = sim_lp_ctx(lp);
  uint32_t g = r->x.member[slot];
  ls_worker *w = &st->w[g];
  size_t a = 0, b = 0, n = r->x.nchunks;
  int t = lab__wide_take(&r->x, slot, c->cfg->lab.verify, &a, &b);
  if (t == LAB_TAKE_DONE) return 1;
  if (t == LAB_TAKE_WAIT) return 0;
  int last = t == LAB_TAKE_VERIFY;
  if (!w->alive) return 0;
  double unit = c->cfg->jobs[r->job].work / (double)n;
  w->job = r->job;
  w->run = r->run;
  w->t0 = sim_now(lp);
  w->f = 1;
  w->w0 = (double)a * unit;
  w->wend = (double)b * unit;
  w->setup_left = c->in->setup_s ? c->in->setup_s[r->job] : 0;
  w->finish_left = last ? (c->in->finish_s ? c->in->finish_s[r->job] : 0) : (c->in->sync_s ? c->in->sync_s[r->job] : 0);
  ls_schedule_done(lp, st, g);
  return 0;
}

static void ls_wide_start(sim_lp *lp, ls_state *st, uint32_t job, uint32_t run, const uint32_t *gpus, unsigned n) {
  const ls_ctx *c = sim_lp_ctx(lp);
  sched_job_status js;
  sched_job_query(st->s, job, &js);
  size_t nc = c->in->nchunks[job];
  double unit = c->cfg->jobs[job].work / (double)nc;
  size_t first = (size_t)floor(js.saved_work / unit + 1e-9);
  if (first >= nc) first = nc - 1;
  ls_wrun *r = lab__wslot_unused(st->wide, st->nwide);
  double wt[LAB__MAX_WIDTH];
  for (unsigned m = 0; m < n; m++) wt[m] = c->in->scores[gpus[m]];
  if (!r || lab__wide_init(&r->x, c->cfg->jobs[job].strategy, first, nc, gpus, wt, n) != 0)
    SIM_FATAL("lab twin: out of memory");
  r->job = job;
  r->run = run;
  for (unsigned m = 0; m < n; m++) ls_wide_feed(lp, st, r, m);
}

/* ---- Services: the runner's queue (lab_svc.c); a request is a kernel piece on its replica: the
 * inputs made (setup_s), its chunks at the replica's pace, the output synced (sync_s). */
static void ls_svc_feed(sim_lp *lp, ls_state *st, lab__svc *sv) {
  const ls_ctx *c = sim_lp_ctx(lp);
  size_t nw = (size_t)c->cfg->lab.workers;
  for (size_t i = 0; i < nw; i++) {
    ls_worker *w = &st->w[i];
    if (w->svc != sv->job || w->req >= 0 || !w->alive) continue;
    long k = lab__svc_take(sv);
    if (k < 0) return;
    w->req = k;
    w->job = sv->job;
    w->t0 = sim_now(lp);
    w->f = 1;
    w->w0 = 0;
    w->wend = (double)sv->nch[k] * sv->chunk_s;
    w->setup_left = c->in->setup_s ? c->in->setup_s[sv->job] : 0;
    w->finish_left = c->in->sync_s ? c->in->sync_s[sv->job] : 0;
    ls_schedule_done(lp, st, i);
  }
}

/* A service's next step soon: a new generation supersedes the steps already scheduled. */
static void ls_svc_later(sim_lp *lp, ls_state *st, long job, double at) {
  ls_send(lp, at, LS_SVC, (int32_t)job, 0, ++st->svc_gen[job]);
}

/* Arrivals, load samples (every load_window / 4, as the runner takes them), serving, and the end
 * when every request was served or lost. */
static void ls_svc_step(sim_lp *lp, ls_state *st, long job) {
  lab__svc *sv = &st->svc[job];
  double now = sim_now(lp);
  if (sv->job < 0 || sv->ended) return;
  lab__svc_arrive(sv, now);
  while (sv->next_load <= now) {
    ls_handle(lp, st, SCHED_EV_LOAD, 0, (uint32_t)job, 0, lab__svc_load_at(sv, sv->next_load));
    sv->next_load += sv->window / 4;
  }
  ls_svc_feed(lp, st, sv);
  if (lab__svc_finished(sv)) {
    ls_handle(lp, st, SCHED_EV_JOB_WITHDRAW, 0, (uint32_t)job, 0, 0);
    return;
  }
  double next = lab__svc_next_arrival(sv);
  ls_svc_later(lp, st, job, next < sv->next_load ? next : sv->next_load);
}

static void ls_svc_scale(sim_lp *lp, ls_state *st, const sched_decision *d) {
  lab__svc *sv = &st->svc[d->job];
  if (sv->job < 0) return;
  int add = lab__svc_rescale(sv, d, sim_now(lp));
  for (unsigned k = 0; k < d->ngpus; k++) {
    ls_worker *w = &st->w[d->gpus[k]];
    if (add) {
      w->svc = (long)d->job;
      w->run = d->run;
      w->req = -1;
      continue;
    }
    lab__svc_release(sv, d, w->req);
    if (w->job == (long)d->job) {
      w->job = -1;
      w->gen++;
    }
    w->svc = w->req = -1;
  }
  ls_svc_feed(lp, st, sv);
  if (lab__svc_finished(sv)) ls_svc_later(lp, st, (long)d->job, sim_now(lp));
}

static void ls_apply(sim_lp *lp, ls_state *st, const sched_decision *d) {
  const ls_ctx *c = sim_lp_ctx(lp);
  size_t nw = (size_t)c->cfg->lab.workers;
  switch (d->type) {
  case SCHED_D_PLACE:
    st->jobs[d->job].runs++;
    if (d->ngpus > 1 && ls_kernel(c, d->job)) {
      ls_wide_start(lp, st, d->job, d->run, d->gpus, d->ngpus);
      break;
    }
    for (unsigned k = 0; k < d->ngpus; k++)
      if (st->w[d->gpus[k]].alive) ls_start(lp, st, d->gpus[k], d->job, d->run);
    break;
  case SCHED_D_REPLACE: {
    for (size_t i = 0; i < nw; i++)
      if ((uint32_t)i == d->old_gpu && st->w[i].job == (long)d->job) {
        st->w[i].job = -1;
        st->w[i].gen++;
      }
    ls_wrun *wr = ls_wide_find(st, d->job, d->run);
    if (wr) {
      lab__wide_replace(&wr->x, d->old_gpu, d->gpu);
      int slot = lab__wide_slot(&wr->x, d->gpu);
      if (slot >= 0) ls_wide_feed(lp, st, wr, (unsigned)slot);
    } else if (st->w[d->gpu].alive) {
      ls_start(lp, st, d->gpu, d->job, d->run);
    }
    break;
  }
  case SCHED_D_STOP:
    for (size_t i = 0; i < nw; i++)
      if (st->w[i].job == (long)d->job && st->w[i].run == d->run) {
        st->w[i].job = -1;
        st->w[i].gen++;
      }
    ls_wide_drop(st, d->job, d->run);
    break;
  case SCHED_D_CHECKPOINT:
    if (ls_wide_find(st, d->job, d->run)) { /* done pieces are durable: answered with them, at once */
      ls_send(lp, sim_now(lp), LS_WCKPT, (int32_t)d->job, d->run, 0);
      break;
    }
    for (size_t i = 0; i < nw; i++) {
      ls_worker *w = &st->w[i];
      if (w->job != (long)d->job || w->run != d->run || w->stalled || !w->alive) continue;
      if (ls_kernel(c, w->job) && c->in->sync_s) { /* the worker pauses for the fdatasync */
        ls_advance(c, w, i, sim_now(lp));
        w->setup_left += c->in->sync_s[w->job];
        ls_schedule_done(lp, st, i);
      }
      /* answered at once (a chunk checkpoint is an fdatasync): a message to self at time now,
       * since the sink must not call the core back */
      ls_send(lp, sim_now(lp), LS_TICK, -2 - (int32_t)i, d->run, (uint32_t)d->job);
    }
    break;
  case SCHED_D_END:
    st->jobs[d->job].ends++;
    st->jobs[d->job].outcome = d->reason;
    for (size_t i = 0; i < nw; i++)
      if (st->w[i].job == (long)d->job) {
        st->w[i].job = -1;
        st->w[i].gen++;
      }
    ls_wide_drop(st, d->job, -1);
    if (st->svc[d->job].job >= 0) {
      lab__svc_end(&st->svc[d->job], sim_now(lp));
      for (size_t i = 0; i < nw; i++)
        if (st->w[i].svc == (long)d->job) st->w[i].svc = st->w[i].req = -1;
    }
    break;
  case SCHED_D_SCALE: ls_svc_scale(lp, st, d); break;
  default: break;
  }
}

static void ls_handle(sim_lp *lp, ls_state *st, int type, uint32_t gpu, uint32_t job, uint32_t run, double value) {
  const ls_ctx *c = sim_lp_ctx(lp);
  /* The decisions are applied where the sink put them: applying one only sends messages and never
   * calls the core again (a wide run's checkpoint answer, for one, is a message to self). */
  if (st->applying) SIM_FATAL("lab twin: event %d handed to the core while its decisions were applied", type);
  sched_event ev;
  lab__core_event(c->cfg, st->svc, &ev, type, sim_now(lp), gpu, job, run, value);
  st->ndec = 0;
  if (sched_handle(st->s, &ev) != 0 || st->overflow) SIM_FATAL("lab twin: the core rejected event %d", type);
  st->applying = 1;
  for (size_t k = 0; k < st->ndec; k++) ls_apply(lp, st, &st->dec[k]);
  st->applying = 0;
  double wake = sched_next_wakeup(st->s);
  if (isfinite(wake) && (wake < st->tick_at || st->tick_at <= sim_now(lp))) {
    st->tick_at = wake;
    ls_send(lp, wake, LS_TICK, -1, 0, 0);
  }
}

static void ls_init(sim_lp *lp, void *state) {
  const ls_ctx *c = sim_lp_ctx(lp);
  ls_state *st = state;
  size_t nw = (size_t)c->cfg->lab.workers;
  sched_config sc;
  lab__core_config(c->cfg, ls_sink, st, &sc);
  st->w = calloc(nw, sizeof *st->w);
  st->jobs = calloc(c->cfg->njobs, sizeof *st->jobs);
  st->nwide = c->cfg->njobs * SCHED_MAX_RUNS;
  st->wide = calloc(st->nwide, sizeof *st->wide);
  st->svc = calloc(c->cfg->njobs, sizeof *st->svc);
  st->svc_gen = calloc(c->cfg->njobs, sizeof *st->svc_gen);
  st->gpus = calloc(64 * (size_t)LAB__MAX_WIDTH, sizeof *st->gpus);
  if (!st->w || !st->jobs || !st->wide || !st->svc || !st->svc_gen || !st->gpus || sched_create(&sc, &st->s) != 0)
    SIM_FATAL("lab twin: out of memory");
  for (size_t k = 0; k < st->nwide; k++) st->wide[k].job = -1;
  for (size_t j = 0; j < c->cfg->njobs; j++) {
    st->svc[j].job = -1;
    if (lab__is_service(&c->cfg->jobs[j]) &&
        (!c->in->svc || c->in->svc[j].job < 0 || lab__svc_copy(&c->in->svc[j], &st->svc[j]) != 0))
      SIM_FATAL("lab twin: service %zu has no request stream", j);
  }

  for (size_t j = 0; j < c->cfg->njobs; j++) {
    st->jobs[j].outcome = -1;
    ls_send(lp, c->cfg->jobs[j].at, LS_ARRIVE, (int32_t)j, 0, 0);
  }
  for (size_t f = 0; f < c->nfaults; f++) ls_send(lp, c->faults[f].at, LS_FAULT, (int32_t)f, 0, 0);
  for (size_t i = 0; i < nw; i++) {
    st->w[i].alive = 1;
    st->w[i].factor = 1;
    st->w[i].slowf = -1;
    st->w[i].job = -1;
    st->w[i].svc = st->w[i].req = -1;
    st->w[i].joined = 1;
  }
  st->tick_at = INFINITY;
  for (size_t i = 0; i < nw; i++) {
    ls_handle(lp, st, SCHED_EV_GPU_JOIN, (uint32_t)i, 0, 0, c->in->scores[i] > 0 ? c->in->scores[i] : 1e-3);
    ls_send(lp, c->cfg->lab.heartbeat, LS_HB, (int32_t)i, 0, 0);
  }
}

static void ls_event(sim_lp *lp, void *state, const void *msg, sim_id src) {
  const ls_ctx *c = sim_lp_ctx(lp);
  ls_state *st = state;
  const ls_msg *m = msg;
  double now = sim_now(lp);
  switch (m->type) {
  case LS_ARRIVE:
    ls_handle(lp, st, SCHED_EV_JOB_ARRIVE, 0, (uint32_t)m->a, 0, 0);
    ls_svc_step(lp, st, m->a);
    break;
  case LS_SVC:
    if (m->gen == st->svc_gen[m->a]) ls_svc_step(lp, st, m->a);
    break;
  case LS_HB: {
    ls_worker *w = &st->w[m->a];
    if (!w->alive) break;
    if (!w->stalled && w->joined) ls_handle(lp, st, SCHED_EV_HEARTBEAT, (uint32_t)m->a, 0, 0, 0);
    ls_send(lp, now + c->cfg->lab.heartbeat, LS_HB, m->a, 0, 0);
    break;
  }
  case LS_TICK:
    if (m->a == -1) {
      if (sched_next_wakeup(st->s) <= now) ls_handle(lp, st, SCHED_EV_TICK, 0, 0, 0, 0);
    } else {
      /* a checkpoint answer: worker -2 - a, job in gen */
      size_t i = (size_t)(-2 - m->a);
      ls_worker *w = &st->w[i];
      uint32_t job = m->gen;
      double saved = 0;
      if (w->job == (long)job && w->run == m->run && c->cfg->jobs[job].kernel[0]) {
        double unit = c->cfg->jobs[job].work / (double)(c->in->nchunks[job] ? c->in->nchunks[job] : 1);
        ls_advance(c, w, i, now); /* the projected end does not move: same pace */
        saved = floor(w->w0 / unit + 1e-9) * unit;
      }
      ls_handle(lp, st, SCHED_EV_CKPT_DONE, (uint32_t)i, job, m->run, saved);
    }
    break;
  case LS_WCKPT: {
    ls_wrun *wr = ls_wide_find(st, m->a, m->run);
    if (!wr) break;
    double unit = c->cfg->jobs[m->a].work / (double)wr->x.nchunks;
    ls_handle(lp, st, SCHED_EV_CKPT_DONE, wr->x.member[0], (uint32_t)m->a, m->run,
              (double)lab__wide_prefix(&wr->x) * unit);
    break;
  }
  case LS_DONE: {
    ls_worker *w = &st->w[m->a];
    if (m->gen != w->gen || w->job < 0) break;
    uint32_t job = (uint32_t)w->job;
    if (w->svc == w->job && w->req >= 0) { /* a request served: the replica takes the next */
      lab__svc *sv = &st->svc[job];
      lab__svc_served(sv, w->req, now);
      w->req = -1;
      w->job = -1;
      ls_svc_feed(lp, st, sv);
      if (lab__svc_finished(sv)) ls_svc_later(lp, st, (long)job, now);
      break;
    }
    ls_wrun *wr = ls_wide_find(st, w->job, w->run);
    if (wr) {
      int slot = lab__wide_slot(&wr->x, (uint32_t)m->a);
      if (slot < 0) break;
      if (wr->x.verifying != slot + 1) { /* a piece done: the member takes its next */
        lab__wide_done(&wr->x, (unsigned)slot);
        w->job = -1;
        if (!ls_wide_feed(lp, st, wr, (unsigned)slot)) break;
      }
    }
    int fail = !c->cfg->jobs[job].kernel[0] && c->in->cmd_failed && c->in->cmd_failed[job];
    w->job = -1;
    ls_handle(lp, st, fail ? SCHED_EV_JOB_FAIL : SCHED_EV_JOB_FINISH, (uint32_t)m->a, job, m->run, 0);
    break;
  }
  case LS_FAULT: {
    const lab__fault *f = &c->faults[m->a];
    ls_worker *w = &st->w[f->worker];
    if (!w->alive) break;
    if (f->action == LAB_FAULT_KILL) {
      w->alive = 0;
      w->joined = 0;
      w->job = -1;
      w->gen++;
      if (c->cfg->lab.respawn > 0)
        ls_send(lp, now + c->cfg->lab.respawn + c->in->join_delay, LS_RESPAWN, f->worker, 0, 0);
    } else if (f->action == LAB_FAULT_STALL) {
      if (w->stalled) break;
      ls_advance(c, w, (size_t)f->worker, now);
      w->stalled = 1;
      w->gen++;
      if (f->duration > 0) ls_send(lp, now + f->duration, LS_CONT, f->worker, 0, 0);
    } else {
      ls_advance(c, w, (size_t)f->worker, now);
      w->factor = f->factor / (c->cfg->lab.nspeeds == 1 ? c->cfg->lab.speeds[0] : c->cfg->lab.speeds[f->worker]);
      w->slowf = (int)m->a;
      ls_schedule_done(lp, st, (size_t)f->worker);
    }
    break;
  }
  case LS_CONT: {
    ls_worker *w = &st->w[m->a];
    if (!w->alive || !w->stalled) break;
    w->stalled = 0;
    w->t0 = now;
    ls_schedule_done(lp, st, (size_t)m->a);
    break;
  }
  case LS_RESPAWN: {
    ls_worker *w = &st->w[m->a];
    sched_gpu_status gs;
    sched_gpu_query(st->s, (uint32_t)m->a, now, &gs);
    if (gs.state != SCHED_GPU_ABSENT) { /* the core has not noticed the loss yet */
      ls_send(lp, now + c->cfg->lab.heartbeat, LS_RESPAWN, m->a, 0, 0);
      break;
    }
    w->alive = 1;
    w->joined = 1;
    w->factor = 1;
    w->slowf = -1;
    w->job = -1;
    ls_handle(lp, st, SCHED_EV_GPU_JOIN, (uint32_t)m->a, 0, 0, c->in->scores[m->a] > 0 ? c->in->scores[m->a] : 1e-3);
    ls_send(lp, now + c->cfg->lab.heartbeat, LS_HB, m->a, 0, 0);
    break;
  }
  default: break;
  }
  ls_recontend(lp, st);
  (void)src;
}

static void ls_final(sim_lp *lp, void *state) {
  const ls_ctx *c = sim_lp_ctx(lp);
  ls_state *st = state;
  for (size_t j = 0; j < c->cfg->njobs; j++) {
    sched_job_status js;
    ls_rec r = {(int32_t)j, st->jobs[j].outcome, st->jobs[j].ends, 0, NAN, NAN, NAN};
    if (sched_job_query(st->s, (uint32_t)j, &js) == 0 && js.state != SCHED_JOB_UNKNOWN) {
      r.restarts = (int32_t)js.restarts;
      r.submit = js.submit;
      r.start = js.start >= 0 ? js.start : NAN;
      r.end = js.state == SCHED_JOB_ENDED ? js.end : NAN;
    }
    sim_table_put(lp, 0, &r);
  }
  sched_counters cnt;
  sched_counters_get(st->s, &cnt);
  if (c->losses) *c->losses = (unsigned)cnt.gpu_failures;
  for (size_t j = 0; j < c->cfg->njobs; j++)
    if (st->svc[j].job >= 0) {
      if (c->svc_out) lab__svc_stats(&st->svc[j], &c->svc_out[j]);
      lab__svc_free(&st->svc[j]);
    }
  free(st->svc);
  free(st->svc_gen);
  free(st->gpus);
  sched_destroy(st->s);
  for (size_t k = 0; k < st->nwide; k++) lab__wide_free(&st->wide[k].x);
  free(st->wide);
  free(st->w);
  free(st->jobs);
}

/* The twin of `--also-simulate`: one speed per worker for every job, no fixed costs, no contention. */
int lab_simulate(const lab_config *cfg, const double *scores, const size_t *nchunks, const double *cmd_seconds,
                 const int *cmd_failed, lab_job_result *sim, double *makespan) {
  for (size_t j = 0; j < cfg->njobs; j++)
    if (lab__is_service(&cfg->jobs[j])) return LAB_EINVAL; /* a service needs its stream: lab__simulate_observed */
  return lab__simulate_observed(cfg, scores, nchunks, cmd_seconds, cmd_failed, NULL, sim, makespan);
}

int lab__simulate_observed(const lab_config *cfg, const double *scores, const size_t *nchunks,
                           const double *cmd_seconds, const int *cmd_failed, const lab__svc *svc, lab_job_result *sim,
                           double *makespan) {
  size_t nw = (size_t)cfg->lab.workers, nj = cfg->njobs;
  double *rate = malloc((nw * nj > 0 ? nw * nj : 1) * sizeof *rate);
  if (!rate) return LAB_ENOMEM;
  for (size_t i = 0; i < nw; i++)
    for (size_t j = 0; j < nj; j++) rate[i * nj + j] = scores[i];
  lab__twin_in in = {scores, rate, nchunks, cmd_seconds, cmd_failed, NULL, NULL, NULL, NULL, 0, NULL, svc};
  int rc = lab__simulate(cfg, &in, sim, makespan, NULL);
  free(rate);
  return rc;
}

int lab__simulate(const lab_config *cfg, const lab__twin_in *in, lab_job_result *sim, double *makespan,
                  unsigned *losses) {
  lab_job_result *svc_out = calloc(cfg->njobs ? cfg->njobs : 1, sizeof *svc_out);
  if (!svc_out) return LAB_ENOMEM;
  ls_ctx c = {cfg, in, NULL, 0, losses, svc_out};
  int rc = lab__faults(cfg, (lab__fault **)&c.faults, &c.nfaults);
  if (rc) {
    free(svc_out);
    return rc;
  }
  static const sim_lptype types[] = {{"lab", sizeof(ls_state), ls_init, ls_event, ls_final}};
  sim_model m;
  memset(&m, 0, sizeof m);
  m.name = "lab-twin";
  m.types = types;
  m.ntypes = 1;
  m.nlps = 1;
  m.msg_size = sizeof(ls_msg);
  m.lookahead = 1.0; /* one LP: no message crosses LPs */
  m.end_time = cfg->lab.time_limit;
  m.ctx = &c;
  m.tables = ls_tables;
  m.ntables = 1;
  sim_run_opts o = {(uint64_t)cfg->lab.seed, 0, 0, NULL};
  sim_results res;
  rc = sim_run(&m, &o, &res);
  free((void *)c.faults);
  if (rc) {
    free(svc_out);
    return LAB_ESYS;
  }
  const ls_rec *r = (const ls_rec *)res.tables[0];
  double first = INFINITY, last = 0;
  for (size_t k = 0; k < res.nrecords[0] && k < cfg->njobs; k++) {
    lab_job_result *x = &sim[r[k].job];
    memset(x, 0, sizeof *x);
    x->outcome = r[k].outcome;
    x->ends = r[k].ends;
    x->restarts = (unsigned)r[k].restarts;
    x->submit = r[k].submit;
    x->start = r[k].start;
    x->end = r[k].end;
    x->exit_status = -1;
    if (svc_out[r[k].job].service) {
      const lab_job_result *q = &svc_out[r[k].job];
      x->service = 1;
      x->req_total = q->req_total;
      x->req_arrived = q->req_arrived;
      x->req_served = q->req_served;
      x->req_lost = q->req_lost;
      x->lat_p50 = q->lat_p50;
      x->lat_p99 = q->lat_p99;
      x->rep_min = q->rep_min;
      x->rep_max = q->rep_max;
      x->rep_final = q->rep_final;
      x->rep_mean = q->rep_mean;
    }
    if (r[k].submit < first) first = r[k].submit;
    if (isfinite(r[k].end) && r[k].end > last) last = r[k].end;
  }
  *makespan = isfinite(first) ? last - first : NAN;
  sim_results_free(&res);
  free(svc_out);
  return 0;
}
