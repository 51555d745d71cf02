/* ftsim.c - the `fault_tolerance` model (see ftsim.h): GPU LPs that churn, a workload LP, and one
 * scheduler LP per (policy, churn level) holding a `sched` core plus an executor that plays the
 * core's decisions out with the GPUs' true speeds.
 *
 * LP ids: GPUs first (level*G + i), then the workload (L*G), then one scheduler slot per
 * (level, policy) of all SCHED_FT_COUNT policies (L*G + 1 + level*SCHED_FT_COUNT + policy); slots
 * of policies not listed stay idle. No id, hence no random stream, depends on the policy list:
 * a cluster gives the same results whichever other policies run beside it. A GPU LP tells every scheduler of its level when it joins, leaves
 * (announced), is found missing (after the heartbeat timeout) and when its true speed changes
 * (hidden degradation: the core only sees it through progress rates).
 */
#include "models/ftsim/ftsim.h"

#include <gsl/gsl_randist.h>
#include <gsl/gsl_statistics_double.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- Context -------------------------------------------------------------------------------- */
typedef struct ftsim_ctx {
  const ftsim_config *cfg;
  int npol;
  sched_policy pol[SCHED_FT_COUNT];
  uint8_t active[SCHED_FT_COUNT]; /* by policy */
  churn_dist up[FTSIM_LEVELS], down[FTSIM_LEVELS];
  sched_cluster_params cluster;
  uint8_t *delegated;      /* per node */
  uint32_t G, max_jobs;    /* batch job ids are < max_jobs - 1; the service is max_jobs - 1 */
  sim_id first_sched, first_gpu, workload;
  sim_time end;
} ftsim_ctx;

static const char *const ftsim__level_names[FTSIM_LEVELS] = {"low", "mid", "high"};

/* ---- Messages ------------------------------------------------------------------------------- */
enum {
  FT_M_JOIN = 1, FT_M_LEAVE, FT_M_MISSED, FT_M_SPEED, FT_M_ARRIVE, /* to schedulers */
  FT_M_TICK, FT_M_FINISH, FT_M_CKPT_END, FT_M_PROGRESS, FT_M_BILLING,  /* scheduler, self */
  FT_M_TOGGLE, FT_M_DEG_START, FT_M_DEG_END,                           /* GPU, self */
  FT_M_NEXT_JOB, FT_M_LOAD_TICK,                                       /* workload, self */
  FT_M_LOAD                                                            /* to schedulers */
};
typedef struct ft_msg {
  uint32_t type, gpu, job, run, epoch;
  double v;
  union {
    sched_gpu_info gpu;
    sched_job_spec job;
  } u;
} ft_msg;

/* ---- Fits and calibration files ------------------------------------------------------------- */
int ftsim_calibration_load(const char *path, sched_cluster_params *cp, char *err, size_t len) {
  FILE *f = fopen(path, "r");
  if (!f) {
    snprintf(err, len, "%s: cannot open the calibration file", path);
    return -1;
  }
  char line[1024];
  int ln = 0;
  while (fgets(line, sizeof line, f)) {
    ln++;
    if (line[0] == '#' || line[0] == '\n' || !strncmp(line, "key,", 4)) continue;
    char *p = line, *key = strsep(&p, ","), *val = p ? strsep(&p, ",\r\n") : NULL;
    if (!val) {
      snprintf(err, len, "%s:%d: expected key,value,unit,device,note", path, ln);
      fclose(f);
      return -1;
    }
    char *e;
    double v = strtod(val, &e);
    double *dst = NULL, lo = 0, hi = 1;
    if (!strcmp(key, "even_split_efficiency")) dst = &cp->even_eff;
    else if (!strcmp(key, "weighted_split_efficiency")) dst = &cp->weighted_eff;
    else if (!strcmp(key, "dynamic_efficiency")) dst = &cp->dynamic_eff;
    else if (!strcmp(key, "chunk_overhead_s")) { dst = &cp->chunk_overhead_s; hi = 3600; }
    if (!dst) continue; /* keys for other models */
    if (e == val || !(v > lo && v <= hi)) {
      snprintf(err, len, "%s:%d: %s = '%s' is not a number in (%g, %g]", path, ln, key, val, lo, hi);
      fclose(f);
      return -1;
    }
    *dst = v;
  }
  fclose(f);
  return 0;
}

/* ---- Scheduler LP: the core and its executor ------------------------------------------------ */
typedef struct ft_run {
  uint8_t active;
  uint32_t id, epoch, ck, n;  /* epoch: finish events; ck: checkpoint completions */
  uint32_t *gpus;          /* capacity: width */
  double work, last_t, pause_until, rate, t_durable, t_start;
} ft_run;

typedef struct ft_job {
  uint8_t known, ended;
  int32_t outcome;
  uint32_t width;
  double submit, start, end, deadline, work;
  double lost_s, redundant_s;
  ft_run runs[4];
} ft_job;

typedef struct ft_exec {
  sched *core;
  sim_lp *lp;              /* set while handling an event */
  const ftsim_ctx *cx;
  int level, pol;
  sched_net_params net;
  sched_gpu_info *info;    /* per GPU, from JOIN */
  double *speed;           /* true speed factor */
  uint32_t *busy_job;      /* executor's view: job holding the GPU, or UINT32_MAX */
  ft_job *jobs;
  uint32_t njobs;
  double tick_at;
  double svc_load, svc_t;  /* current offered load and since when */
  double svc_offered, svc_served;
  uint64_t svc_scales;
  uint32_t *svc_tmp;
  double *sp_tmp;
  sched_link *ln_tmp;
} ft_exec;

typedef struct ft_sched_state {
  ft_exec *x;
} ft_sched_state;

static ft_run *ft__run(ft_exec *x, uint32_t job, uint32_t run) {
  if (job >= x->njobs) return NULL;
  for (int k = 0; k < 4; k++)
    if (x->jobs[job].runs[k].active && x->jobs[job].runs[k].id == run) return &x->jobs[job].runs[k];
  return NULL;
}

/* Work done so far: the run computes at its true rate except while paused (staging, checkpoint,
 * recovery of a replacement). */
static void ft__advance(ft_exec *x, ft_run *r, double now) {
  double from = r->last_t > r->pause_until ? r->last_t : r->pause_until;
  if (now > from) r->work += r->rate * (now - from);
  r->last_t = now;
}

static double ft__true_rate(ft_exec *x, const ft_job *j, const ft_run *r) {
  const ftsim_config *c = x->cx->cfg;
  for (uint32_t i = 0; i < r->n; i++) {
    x->sp_tmp[i] = x->info[r->gpus[i]].score * x->speed[r->gpus[i]];
    x->ln_tmp[i] = x->info[r->gpus[i]].link;
  }
  return sched_cluster_rate(&x->cx->cluster, &x->net, x->sp_tmp, x->ln_tmp, r->n, j->width * c->step_s,
                            c->grad_mb * 1e6);
}

/* (Re)schedules the run's finish at its current rate; older finish events become stale. */
static void ft__arm_finish(ft_exec *x, uint32_t job, ft_run *r) {
  double now = sim_now(x->lp);
  ft_job *j = &x->jobs[job];
  r->epoch++;
  if (!(r->rate > 0)) return;
  double start = r->pause_until > now ? r->pause_until : now;
  double rem = j->work - r->work;
  if (rem < 0) rem = 0;
  ft_msg m = {.type = FT_M_FINISH, .job = job, .run = r->id, .epoch = r->epoch};
  sim_send(x->lp, sim_lp_id(x->lp), start + rem / r->rate - now, &m, sizeof m);
}

static void ft__run_close(ft_exec *x, ft_run *r) {
  for (uint32_t i = 0; i < r->n; i++) x->busy_job[r->gpus[i]] = UINT32_MAX;
  r->active = 0;
  r->epoch++;
  r->ck++;
}

/* The sink: decisions of the core, applied to the executor. Never calls the core back. */
static void ft__sink(void *ctx, const sched_decision *d) {
  ft_exec *x = ctx;
  double now = sim_now(x->lp);
  ft_job *j = d->job < x->cx->max_jobs ? &x->jobs[d->job] : NULL;
  if (!j) SIM_FATAL("sched decided about unknown job %u", d->job);
  switch (d->type) {
  case SCHED_D_PLACE: {
    ft_run *r = NULL;
    for (int k = 0; k < 4; k++)
      if (!j->runs[k].active) { r = &j->runs[k]; break; }
    if (!r) SIM_FATAL("job %u: more than 4 runs", d->job);
    if (!r->gpus) {
      r->gpus = malloc(j->width * sizeof *r->gpus);
      if (!r->gpus) SIM_FATAL("out of memory");
    }
    sched_job_status st;
    sched_job_query(x->core, d->job, &st);
    int resumes = x->pol == SCHED_FT_CHECKPOINT;
    r->active = 1;
    r->id = d->run;
    r->n = d->ngpus;
    memcpy(r->gpus, d->gpus, d->ngpus * sizeof *r->gpus);
    for (uint32_t i = 0; i < r->n; i++) x->busy_job[r->gpus[i]] = d->job;
    r->work = resumes ? st.saved_work : 0;
    r->last_t = r->t_start = r->t_durable = now;
    r->pause_until = now + d->value;
    r->rate = ft__true_rate(x, j, r);
    if (j->start < 0) j->start = now;
    ft__arm_finish(x, d->job, r);
    break;
  }
  case SCHED_D_STOP: {
    ft_run *r = ft__run(x, d->job, d->run);
    if (!r) SIM_FATAL("stop of unknown run %u of job %u", d->run, d->job);
    if (d->reason == SCHED_R_CANCELLED) j->redundant_s += r->n * (now - r->t_start);
    else j->lost_s += r->n * (now - r->t_durable);
    ft__run_close(x, r);
    break;
  }
  case SCHED_D_CHECKPOINT: {
    ft_run *r = ft__run(x, d->job, d->run);
    if (!r) SIM_FATAL("checkpoint of unknown run");
    ft__advance(x, r, now);
    double from = r->pause_until > now ? r->pause_until : now;
    r->pause_until = from + d->value; /* a blocking checkpoint: the run waits while it writes */
    ft_msg m = {.type = FT_M_CKPT_END, .job = d->job, .run = d->run, .epoch = ++r->ck, .v = r->work};
    ft__arm_finish(x, d->job, r);
    sim_send(x->lp, sim_lp_id(x->lp), r->pause_until - now, &m, sizeof m);
    break;
  }
  case SCHED_D_REPLACE: {
    ft_run *r = ft__run(x, d->job, d->run);
    if (!r) SIM_FATAL("replace in unknown run");
    ft__advance(x, r, now);
    for (uint32_t i = 0; i < r->n; i++)
      if (r->gpus[i] == d->old_gpu) r->gpus[i] = d->gpu;
    x->busy_job[d->old_gpu] = UINT32_MAX;
    x->busy_job[d->gpu] = d->job;
    /* The newcomer loads the state from its peers; the whole run waits meanwhile. */
    double from = r->pause_until > now ? r->pause_until : now;
    r->pause_until = from + d->value;
    j->lost_s += r->n * d->value;
    r->rate = ft__true_rate(x, j, r);
    ft__arm_finish(x, d->job, r);
    break;
  }
  case SCHED_D_END:
    j->ended = 1;
    j->outcome = d->reason;
    j->end = now;
    for (int k = 0; k < 4; k++)
      if (j->runs[k].active) ft__run_close(x, &j->runs[k]);
    break;
  case SCHED_D_SCALE: x->svc_scales++; break;
  default: break; /* STANDBY, UNSTANDBY: nothing to play out */
  }
}

static void ft__feed(ft_exec *x, sched_event *e) {
  e->t = sim_now(x->lp);
  int rc = sched_handle(x->core, e);
  if (rc) SIM_FATAL("scheduler (%s, churn %s) refused event %d at t=%g: %s",
                    sched_policy_name((sched_policy)x->pol), ftsim__level_names[x->level], e->type, e->t,
                    sched_strerror(rc));
  double w = sched_next_wakeup(x->core);
  if (w < x->tick_at) {
    x->tick_at = w;
    ft_msg m = {.type = FT_M_TICK};
    double now = sim_now(x->lp);
    sim_send(x->lp, sim_lp_id(x->lp), w > now ? w - now : 0, &m, sizeof m);
  }
}

/* The service's last load interval, played out: replicas share the offered load in proportion
 * to their capacity (score x req_per_score_s); what exceeds the total capacity is not served.
 * Each replica is busy u = min(1, load / capacity) of the interval and bills that as tasks
 * (pay per task: score x busy time x price_per_score_s, in the core). */
static void ft__svc_account(ft_exec *x, double now) {
  const ftsim_config *c = x->cx->cfg;
  uint32_t svc = x->cx->max_jobs - 1;
  double dt = now - x->svc_t;
  x->svc_t = now;
  if (!(dt > 0) || !x->jobs[svc].known) return;
  int n = sched_run_members(x->core, svc, 0, x->svc_tmp, 65536);
  double cap = 0;
  for (int i = 0; i < n; i++) cap += x->info[x->svc_tmp[i]].score * c->svc_req_per_score_s;
  double served = cap < x->svc_load ? cap : x->svc_load;
  x->svc_offered += x->svc_load * dt;
  x->svc_served += served * dt;
  double u = cap > 0 ? served / cap : 0;
  for (int i = 0; i < n && u > 0; i++) {
    sched_event e = {.type = SCHED_EV_TASK_DONE, .job = svc, .gpu = x->svc_tmp[i], .value = u * dt};
    e.t = now;
    int rc = sched_handle(x->core, &e);
    if (rc) SIM_FATAL("TASK_DONE refused: %s", sched_strerror(rc));
  }
}

static void ft__sched_init(sim_lp *lp, void *st) {
  const ftsim_ctx *cx = sim_lp_ctx(lp);
  const ftsim_config *c = cx->cfg;
  ft_sched_state *s = st;
  uint64_t k = sim_lp_id(lp) - cx->first_sched;
  if (!cx->active[k % SCHED_FT_COUNT]) return; /* a policy not in the list: idle slot (x NULL) */
  ft_exec *x = calloc(1, sizeof *x);
  if (!x) SIM_FATAL("out of memory");
  s->x = x;
  x->cx = cx;
  x->lp = lp;
  x->level = (int)(k / SCHED_FT_COUNT);
  x->pol = (int)(k % SCHED_FT_COUNT);
  x->tick_at = INFINITY;
  x->info = calloc(cx->G, sizeof *x->info);
  x->speed = calloc(cx->G, sizeof *x->speed);
  x->busy_job = malloc(cx->G * sizeof *x->busy_job);
  x->jobs = calloc(cx->max_jobs, sizeof *x->jobs);
  x->sp_tmp = malloc(65536 * sizeof *x->sp_tmp);
  x->ln_tmp = malloc(65536 * sizeof *x->ln_tmp);
  x->svc_tmp = malloc(65536 * sizeof *x->svc_tmp);
  if (!x->info || !x->speed || !x->busy_job || !x->jobs || !x->sp_tmp || !x->ln_tmp || !x->svc_tmp)
    SIM_FATAL("out of memory");
  for (uint32_t i = 0; i < cx->G; i++) x->busy_job[i] = UINT32_MAX;

  sched_config sc;
  sched_config_default(&sc);
  sc.max_gpus = cx->G;
  sc.max_providers = cx->G;
  sc.max_nodes = (uint32_t)c->nodes;
  sc.max_jobs = cx->max_jobs;
  sc.nregions = (unsigned)c->regions;
  sc.ngrades = (unsigned)c->grades;
  sc.sink = ft__sink;
  sc.sink_ctx = x;
  /* The core's selection draws come from this LP's own stream. */
  sc.seed = gsl_rng_get(sim_lp_rng(lp)) ^ ((uint64_t)x->level << 32);
  sc.policy = (sched_policy)x->pol;
  sc.ckpt_rule = (sched_ckpt_rule)c->ckpt_rule;
  sc.ckpt_interval_s = c->ckpt_interval;
  sc.gpu_mtbf_s = c->gpu_mtbf;
  sc.standby_k = (unsigned)c->standby_k;
  sc.replicas = (unsigned)c->replicas;
  sc.bill_cancelled = c->bill_cancelled;
  sc.slow_ratio = c->slow_ratio;
  sc.heartbeat_timeout_s = 0; /* the GPU LPs model the timeout (FT_M_MISSED) */
  sc.max_restarts = (unsigned)c->max_restarts;
  sc.rep_exponent = c->rep_exponent;
  sc.rep_half_life_s = c->rep_half_life;
  sc.stake_min = c->stake_min;
  sc.slash_per_failure = c->slash_per_failure;
  sc.slash_per_down_hour = c->slash_per_down_hour;
  sc.platform_fee = c->platform_fee;
  sc.node_fee = c->node_fee;
  sc.delegation_fee = c->delegation_fee;
  sc.node_delegated = cx->delegated;
  sc.target_util = c->target_util;
  sc.cooldown_s = c->cooldown;
  sc.price_per_score_s = c->price_per_score_s;
  sc.cluster = cx->cluster;
  sc.net.mode = (sched_arq)c->net_mode;
  x->net = sc.net;
  int rc = sched_create(&sc, &x->core);
  if (rc) SIM_FATAL("sched_create: %s", sched_strerror(rc));
  ft_msg m = {.type = FT_M_PROGRESS};
  sim_send(lp, sim_lp_id(lp), c->progress_interval, &m, sizeof m);
  m.type = FT_M_BILLING;
  sim_send(lp, sim_lp_id(lp), c->billing_interval, &m, sizeof m);
}

static void ft__sched_event(sim_lp *lp, void *st, const void *msg, sim_id src) {
  ft_exec *x = ((ft_sched_state *)st)->x;
  const ft_msg *m = msg;
  const ftsim_config *c = x->cx->cfg;
  x->lp = lp;
  double now = sim_now(lp);
  sched_event e = {0};
  switch (m->type) {
  case FT_M_JOIN:
    x->info[m->gpu] = m->u.gpu;
    x->speed[m->gpu] = 1;
    e.type = SCHED_EV_GPU_JOIN;
    e.gpu = m->gpu;
    e.u.gpu = m->u.gpu;
    ft__feed(x, &e);
    break;
  case FT_M_LEAVE: case FT_M_MISSED:
    e.type = m->type == FT_M_LEAVE ? SCHED_EV_GPU_LEAVE : SCHED_EV_GPU_MISSED;
    e.gpu = m->gpu;
    ft__feed(x, &e);
    break;
  case FT_M_SPEED: {
    x->speed[m->gpu] = m->v;
    uint32_t jb = x->busy_job[m->gpu];
    if (jb == UINT32_MAX) break;
    for (int k = 0; k < 4; k++) {
      ft_run *r = &x->jobs[jb].runs[k];
      if (!r->active) continue;
      for (uint32_t i = 0; i < r->n; i++)
        if (r->gpus[i] == m->gpu) {
          ft__advance(x, r, now);
          r->rate = ft__true_rate(x, &x->jobs[jb], r);
          ft__arm_finish(x, jb, r);
          break;
        }
    }
    break;
  }
  case FT_M_ARRIVE: {
    if (m->job >= x->cx->max_jobs) SIM_FATAL("job id %u over the bound %u", m->job, x->cx->max_jobs);
    ft_job *j = &x->jobs[m->job];
    j->known = 1;
    j->width = m->u.job.width;
    j->submit = now;
    j->start = -1;
    j->end = -1;
    j->deadline = m->u.job.deadline;
    j->work = m->u.job.work;
    if (m->u.job.kind == SCHED_JOB_SERVICE) x->svc_t = now;
    else if (m->job >= x->njobs) x->njobs = m->job + 1;
    e.type = SCHED_EV_JOB_ARRIVE;
    e.job = m->job;
    e.u.job = m->u.job;
    ft__feed(x, &e);
    break;
  }
  case FT_M_LOAD:
    ft__svc_account(x, now);
    x->svc_load = m->v;
    e.type = SCHED_EV_LOAD;
    e.job = m->job;
    e.value = m->v;
    ft__feed(x, &e);
    break;
  case FT_M_TICK:
    x->tick_at = INFINITY;
    e.type = SCHED_EV_TICK;
    ft__feed(x, &e);
    break;
  case FT_M_FINISH: {
    ft_run *r = ft__run(x, m->job, m->run);
    if (!r || r->epoch != m->epoch) break; /* stale */
    e.type = SCHED_EV_JOB_FINISH;
    e.job = m->job;
    e.run = m->run;
    ft__feed(x, &e);
    break;
  }
  case FT_M_CKPT_END: {
    ft_run *r = ft__run(x, m->job, m->run);
    if (!r || r->ck != m->epoch) break; /* the run died while writing: the checkpoint is lost */
    r->t_durable = now;
    e.type = SCHED_EV_CKPT_DONE;
    e.job = m->job;
    e.run = m->run;
    e.value = m->v;
    ft__feed(x, &e);
    break;
  }
  case FT_M_PROGRESS: {
    for (uint32_t jb = 0; jb < x->njobs; jb++) {
      ft_job *j = &x->jobs[jb];
      if (!j->known || j->ended) continue;
      for (int k = 0; k < 4; k++) {
        ft_run *r = &j->runs[k];
        if (!r->active || now <= r->pause_until) continue;
        ft__advance(x, r, now);
        e = (sched_event){.type = SCHED_EV_JOB_PROGRESS, .job = jb, .run = r->id, .value = r->work};
        ft__feed(x, &e);
      }
    }
    ft_msg n = {.type = FT_M_PROGRESS};
    sim_send(lp, sim_lp_id(lp), c->progress_interval, &n, sizeof n);
    break;
  }
  case FT_M_BILLING: {
    e.type = SCHED_EV_BILLING;
    ft__feed(x, &e);
    ft_msg n = {.type = FT_M_BILLING};
    sim_send(lp, sim_lp_id(lp), c->billing_interval, &n, sizeof n);
    break;
  }
  default: SIM_FATAL("scheduler LP: unexpected message %u", m->type);
  }
}

static void ft__strcpy16(char *dst, const char *src) {
  memset(dst, 0, 16);
  strncpy(dst, src, 15);
}

static void ft__sched_finalize(sim_lp *lp, void *st) {
  ft_exec *x = ((ft_sched_state *)st)->x;
  if (!x) return; /* idle slot */
  const ftsim_ctx *cx = x->cx;
  x->lp = lp;
  /* Bill employed GPUs up to the end of the run (no decisions come of it). */
  ft__svc_account(x, cx->end);
  sched_event e = {.type = SCHED_EV_BILLING, .t = cx->end};
  if (sched_handle(x->core, &e)) SIM_FATAL("final billing refused");
  char pol[16], lev[16];
  ft__strcpy16(pol, sched_policy_name((sched_policy)x->pol));
  ft__strcpy16(lev, ftsim__level_names[x->level]);
  uint32_t svc = cx->max_jobs - 1;
  double svc_hours = 0, svc_cost = 0;
  for (uint32_t jb = 0; jb < cx->max_jobs; jb++) {
    if (jb == x->njobs && jb < svc) jb = svc; /* batch ids, then the service */
    ft_job *j = &x->jobs[jb];
    if (!j->known) continue;
    sched_job_status st2;
    sched_job_query(x->core, jb, &st2);
    ftsim_job_rec rec;
    memset(&rec, 0, sizeof rec);
    memcpy(rec.policy, pol, 16);
    memcpy(rec.churn, lev, 16);
    rec.job = jb;
    rec.kind = jb == svc;
    rec.width = jb == svc ? (int32_t)st2.replicas : (int32_t)j->width;
    if (jb == svc) {
      svc_hours = st2.gpu_seconds / 3600.0;
      svc_cost = st2.cost;
    }
    rec.outcome = j->ended ? j->outcome : 0;
    rec.restarts = (int32_t)st2.restarts;
    rec.replacements = (int32_t)st2.replacements;
    rec.submit = j->submit;
    rec.start = j->start;
    rec.end = j->end;
    rec.deadline = j->deadline;
    rec.work_gpu_h = j->work / 3600.0;
    rec.gpu_hours = st2.gpu_seconds / 3600.0;
    rec.lost_gpu_hours = j->lost_s / 3600.0;
    rec.redundant_gpu_hours = j->redundant_s / 3600.0;
    rec.cost = st2.cost;
    sim_table_put(lp, 0, &rec);
  }
  sched_ledger l;
  sched_counters cn;
  sched_ledger_get(x->core, &l);
  sched_counters_get(x->core, &cn);
  ftsim_ledger_rec lr;
  memset(&lr, 0, sizeof lr);
  memcpy(lr.policy, pol, 16);
  memcpy(lr.churn, lev, 16);
  lr.billed = l.billed;
  lr.provider_income = l.provider_income;
  lr.node_income = l.node_income;
  lr.delegate_income = l.delegate_income;
  lr.platform_income = l.platform_income;
  lr.slashed = l.slashed;
  lr.cancelled_billed = l.cancelled_billed;
  lr.decisions = cn.decisions;
  lr.gpu_failures = cn.gpu_failures;
  lr.placements = cn.placements;
  lr.checkpoints = cn.checkpoints;
  lr.replacements = cn.replacements;
  lr.speculations = cn.speculations;
  lr.svc_offered = x->svc_offered;
  lr.svc_served = x->svc_served;
  lr.svc_replica_hours = svc_hours;
  lr.svc_cost = svc_cost;
  lr.svc_scale_events = x->svc_scales;
  sim_table_put(lp, 1, &lr);
  char msg[256];
  if (sched_check_invariants(x->core, msg, sizeof msg)) SIM_FATAL("scheduler invariant broken: %s", msg);
  for (uint32_t jb = 0; jb < x->njobs; jb++)
    for (int k = 0; k < 4; k++) free(x->jobs[jb].runs[k].gpus);
  sched_destroy(x->core);
  free(x->info);
  free(x->speed);
  free(x->busy_job);
  free(x->jobs);
  free(x->sp_tmp);
  free(x->ln_tmp);
  free(x->svc_tmp);
  free(x);
}

/* ---- GPU LP --------------------------------------------------------------------------------- */
typedef struct ft_gpu_state {
  uint8_t up, degraded;
  uint32_t deg_epoch;
  double last_arrival;     /* when the schedulers get this GPU's latest message */
  sched_gpu_info info;
} ft_gpu_state;

/* Sends to every scheduler of the GPU's level. Messages of one GPU arrive in the order they were
 * sent (a join never overtakes the miss notice before it): each arrives no earlier than the
 * previous one, and equal times keep send order (the engine orders by source sequence). */
static void ft__to_scheds(sim_lp *lp, ft_gpu_state *g, double delay, const ft_msg *m) {
  const ftsim_ctx *cx = sim_lp_ctx(lp);
  double now = sim_now(lp);
  if (now + delay < g->last_arrival) delay = g->last_arrival - now;
  g->last_arrival = now + delay;
  uint64_t k = sim_lp_id(lp) - cx->first_gpu, level = k / cx->G;
  for (int p = 0; p < cx->npol; p++)
    sim_send(lp, cx->first_sched + level * SCHED_FT_COUNT + (uint64_t)cx->pol[p], delay, m, sizeof *m);
}

static void ft__gpu_schedule_degrade(sim_lp *lp, ft_gpu_state *g) {
  const ftsim_config *c = ((const ftsim_ctx *)sim_lp_ctx(lp))->cfg;
  if (!(c->degrade_per_day > 0)) return;
  ft_msg m = {.type = FT_M_DEG_START, .epoch = g->deg_epoch};
  sim_send(lp, sim_lp_id(lp), gsl_ran_exponential(sim_lp_rng(lp), 86400.0 / c->degrade_per_day), &m, sizeof m);
}

static void ft__gpu_up(sim_lp *lp, ft_gpu_state *g, double delay) {
  const ftsim_ctx *cx = sim_lp_ctx(lp);
  uint64_t level = (sim_lp_id(lp) - cx->first_gpu) / cx->G;
  g->up = 1;
  g->degraded = 0;
  g->deg_epoch++;
  ft_msg m = {.type = FT_M_JOIN, .gpu = (uint32_t)((sim_lp_id(lp) - cx->first_gpu) % cx->G)};
  m.u.gpu = g->info;
  ft__to_scheds(lp, g, delay, &m);
  ft_msg t = {.type = FT_M_TOGGLE};
  sim_send(lp, sim_lp_id(lp), 3600.0 * churn_dist_draw(&cx->up[level], sim_lp_rng(lp)), &t, sizeof t);
  ft__gpu_schedule_degrade(lp, g);
}

static void ft__gpu_init(sim_lp *lp, void *st) {
  const ftsim_ctx *cx = sim_lp_ctx(lp);
  const ftsim_config *c = cx->cfg;
  ft_gpu_state *g = st;
  gsl_rng *r = sim_lp_rng(lp);
  uint32_t i = (uint32_t)((sim_lp_id(lp) - cx->first_gpu) % cx->G);
  uint64_t level = (sim_lp_id(lp) - cx->first_gpu) / cx->G;
  /* Synthetic heterogeneous consumer GPUs (docs/scheduling.md): grade g has score 2^(g-1)
   * (+-20%), price proportional to score (+-30%), a log-normal access link around bw_mbps,
   * RTT 20-200 ms and loss uniform in [0, loss_max]. */
  g->info.provider = i;
  g->info.node = i % (uint32_t)c->nodes;
  g->info.region = (uint16_t)gsl_rng_uniform_int(r, (unsigned long)c->regions);
  g->info.grade = (uint16_t)gsl_rng_uniform_int(r, (unsigned long)c->grades);
  g->info.sectors = 1;
  g->info.score = pow(2.0, g->info.grade - 1.0) * (0.8 + 0.4 * gsl_rng_uniform(r));
  g->info.price_per_h = c->price_per_h * g->info.score * (0.7 + 0.6 * gsl_rng_uniform(r));
  g->info.stake = c->stake;
  g->info.link.bw_bps = c->bw_mbps * 1e6 * gsl_ran_lognormal(r, 0, 0.7);
  g->info.link.rtt_s = 0.02 + 0.18 * gsl_rng_uniform(r);
  g->info.link.loss = c->loss_max * gsl_rng_uniform(r);
  /* Start in the stationary mix of up and down (alternating renewal process: P(up) =
   * E[up] / (E[up] + E[down])); the first period is drawn whole, an approximation of the
   * residual life that the docs state. */
  double mu = churn_dist_mean(&cx->up[level]), md = churn_dist_mean(&cx->down[level]);
  if (gsl_rng_uniform(r) < mu / (mu + md)) {
    ft__gpu_up(lp, g, c->latency);
  } else {
    g->up = 0;
    ft_msg t = {.type = FT_M_TOGGLE};
    sim_send(lp, sim_lp_id(lp), 3600.0 * churn_dist_draw(&cx->down[level], r), &t, sizeof t);
  }
}

static void ft__gpu_event(sim_lp *lp, void *st, const void *msg, sim_id src) {
  const ftsim_ctx *cx = sim_lp_ctx(lp);
  const ftsim_config *c = cx->cfg;
  ft_gpu_state *g = st;
  const ft_msg *m = msg;
  gsl_rng *r = sim_lp_rng(lp);
  uint32_t i = (uint32_t)((sim_lp_id(lp) - cx->first_gpu) % cx->G);
  uint64_t level = (sim_lp_id(lp) - cx->first_gpu) / cx->G;
  switch (m->type) {
  case FT_M_TOGGLE:
    if (g->up) {
      g->up = 0;
      g->deg_epoch++;
      ft_msg o = {.gpu = i};
      if (gsl_rng_uniform(r) < c->announce_leave) {
        o.type = FT_M_LEAVE;
        ft__to_scheds(lp, g, c->latency, &o);
      } else {
        /* Silent: the last heartbeat went out U(0, interval) ago; the schedulers notice at the
         * timeout after it. */
        o.type = FT_M_MISSED;
        double delay = c->latency + c->hb_timeout - c->hb_interval * gsl_rng_uniform(r);
        ft__to_scheds(lp, g, delay, &o);
      }
      ft_msg t = {.type = FT_M_TOGGLE};
      sim_send(lp, sim_lp_id(lp), 3600.0 * churn_dist_draw(&cx->down[level], r), &t, sizeof t);
    } else {
      ft__gpu_up(lp, g, c->latency);
    }
    break;
  case FT_M_DEG_START:
    if (!g->up || m->epoch != g->deg_epoch) break;
    {
      g->degraded = 1;
      ft_msg o = {.type = FT_M_SPEED, .gpu = i, .v = c->degrade_factor};
      ft__to_scheds(lp, g, c->latency, &o);
      ft_msg e = {.type = FT_M_DEG_END, .epoch = g->deg_epoch};
      sim_send(lp, sim_lp_id(lp), gsl_ran_exponential(r, 3600.0 * c->degrade_hours), &e, sizeof e);
    }
    break;
  case FT_M_DEG_END:
    if (!g->up || m->epoch != g->deg_epoch) break;
    {
      g->degraded = 0;
      ft_msg o = {.type = FT_M_SPEED, .gpu = i, .v = 1.0};
      ft__to_scheds(lp, g, c->latency, &o);
      ft__gpu_schedule_degrade(lp, g);
    }
    break;
  default: SIM_FATAL("GPU LP: unexpected message %u", m->type);
  }
}

/* ---- Workload LP ---------------------------------------------------------------------------- */
typedef struct ft_work_state {
  uint32_t next_job;
} ft_work_state;

static void ft__work_next(sim_lp *lp) {
  const ftsim_config *c = ((const ftsim_ctx *)sim_lp_ctx(lp))->cfg;
  ft_msg m = {.type = FT_M_NEXT_JOB};
  sim_send(lp, sim_lp_id(lp), gsl_ran_exponential(sim_lp_rng(lp), 3600.0 / c->job_rate), &m, sizeof m);
}
static void ft__to_all_scheds(sim_lp *lp, double delay, const ft_msg *m) {
  const ftsim_ctx *cx = sim_lp_ctx(lp);
  for (int l = 0; l < FTSIM_LEVELS; l++)
    for (int p = 0; p < cx->npol; p++)
      sim_send(lp, cx->first_sched + (sim_id)l * SCHED_FT_COUNT + (sim_id)cx->pol[p], delay, m, sizeof *m);
}

/* Offered load of the service at time t: a daily cycle (the Alibaba GenAI inference trace in
 * shared/data shows a strong one; the sinusoid is our simplification). */
static double ft__svc_load(const ftsim_config *c, double t) {
  double v = c->svc_rps * (1 + c->svc_amplitude * sin(2 * M_PI * t / 86400.0));
  return v > 0 ? v : 0;
}

static void ft__work_init(sim_lp *lp, void *st) {
  const ftsim_ctx *cx = sim_lp_ctx(lp);
  const ftsim_config *c = cx->cfg;
  ft__work_next(lp);
  if (!(c->svc_rps > 0)) return;
  ft_msg m = {.type = FT_M_ARRIVE, .job = cx->max_jobs - 1};
  sched_job_spec *sp = &m.u.job;
  sp->kind = SCHED_JOB_SERVICE;
  sp->region = -1;
  sp->req_per_score_s = c->svc_req_per_score_s;
  sp->min_replicas = (uint16_t)c->svc_min_replicas;
  sp->max_replicas = (uint16_t)c->svc_max_replicas;
  ft__to_all_scheds(lp, c->latency, &m);
  ft_msg t = {.type = FT_M_LOAD_TICK};
  sim_send(lp, sim_lp_id(lp), c->svc_load_interval, &t, sizeof t);
}

static void ft__work_event(sim_lp *lp, void *st, const void *msg, sim_id src) {
  const ftsim_ctx *cx = sim_lp_ctx(lp);
  const ftsim_config *c = cx->cfg;
  ft_work_state *w = st;
  gsl_rng *r = sim_lp_rng(lp);
  if (((const ft_msg *)msg)->type == FT_M_LOAD_TICK) {
    ft_msg m = {.type = FT_M_LOAD, .job = cx->max_jobs - 1, .v = ft__svc_load(c, sim_now(lp) + c->latency)};
    ft__to_all_scheds(lp, c->latency, &m);
    ft_msg t = {.type = FT_M_LOAD_TICK};
    sim_send(lp, sim_lp_id(lp), c->svc_load_interval, &t, sizeof t);
    return;
  }
  if (w->next_job >= cx->max_jobs - 1) return; /* bound reached: build sized it at 3x the mean */
  /* Jobs: width uniform in 1..width_max, ideal duration Exp(job_hours) on `width` reference
   * GPUs (score 1), deadline after `deadline_slack` times that. */
  double hours = gsl_ran_exponential(r, c->job_hours);
  ft_msg m = {.type = FT_M_ARRIVE, .job = w->next_job++};
  sched_job_spec *sp = &m.u.job;
  sp->kind = SCHED_JOB_BATCH;
  sp->width = (uint16_t)(1 + gsl_rng_uniform_int(r, (unsigned long)c->width_max));
  sp->region = -1;
  sp->work = sp->width * hours * 3600.0;
  sp->deadline = sim_now(lp) + c->latency + c->deadline_slack * hours * 3600.0;
  sp->step_work = c->step_s > 0 ? sp->width * c->step_s : 0;
  sp->step_bytes = c->grad_mb * 1e6;
  sp->input_bytes = c->input_mb * 1e6;
  sp->ckpt_bytes = c->ckpt_mb * 1e6;
  ft__to_all_scheds(lp, c->latency, &m);
  ft__work_next(lp);
}

/* ---- Model description ---------------------------------------------------------------------- */
static const sim_lptype ftsim__types[] = {
    {"workload", sizeof(ft_work_state), ft__work_init, ft__work_event, NULL},
    {"scheduler", sizeof(ft_sched_state), ft__sched_init, ft__sched_event, ft__sched_finalize},
    {"gpu", sizeof(ft_gpu_state), ft__gpu_init, ft__gpu_event, NULL},
};

static unsigned ftsim__type_of(const void *ctx, sim_id id) {
  const ftsim_ctx *cx = ctx;
  return id < cx->workload ? 2 : id == cx->workload ? 0 : 1;
}

static const sim_field ftsim__job_fields[] = {
    {"policy", SIM_F_STR16, offsetof(ftsim_job_rec, policy), "1"},
    {"churn", SIM_F_STR16, offsetof(ftsim_job_rec, churn), "1"},
    {"job", SIM_F_U64, offsetof(ftsim_job_rec, job), "1"},
    {"kind", SIM_F_I32, offsetof(ftsim_job_rec, kind), "0 batch, 1 service"},
    {"width", SIM_F_I32, offsetof(ftsim_job_rec, width), "GPUs (service: replicas at the end)"},
    {"outcome", SIM_F_I32, offsetof(ftsim_job_rec, outcome), "0 unfinished, 1 completed, 5 gave up"},
    {"restarts", SIM_F_I32, offsetof(ftsim_job_rec, restarts), "1"},
    {"replacements", SIM_F_I32, offsetof(ftsim_job_rec, replacements), "1"},
    {"submit", SIM_F_F64, offsetof(ftsim_job_rec, submit), "s"},
    {"start", SIM_F_F64, offsetof(ftsim_job_rec, start), "s"},
    {"end", SIM_F_F64, offsetof(ftsim_job_rec, end), "s"},
    {"deadline", SIM_F_F64, offsetof(ftsim_job_rec, deadline), "s"},
    {"work_gpu_hours", SIM_F_F64, offsetof(ftsim_job_rec, work_gpu_h), "GPU*h"},
    {"gpu_hours", SIM_F_F64, offsetof(ftsim_job_rec, gpu_hours), "GPU*h"},
    {"lost_gpu_hours", SIM_F_F64, offsetof(ftsim_job_rec, lost_gpu_hours), "GPU*h"},
    {"redundant_gpu_hours", SIM_F_F64, offsetof(ftsim_job_rec, redundant_gpu_hours), "GPU*h"},
    {"cost", SIM_F_F64, offsetof(ftsim_job_rec, cost), "USD"},
};
static const sim_field ftsim__ledger_fields[] = {
    {"policy", SIM_F_STR16, offsetof(ftsim_ledger_rec, policy), "1"},
    {"churn", SIM_F_STR16, offsetof(ftsim_ledger_rec, churn), "1"},
    {"billed", SIM_F_F64, offsetof(ftsim_ledger_rec, billed), "USD"},
    {"provider_income", SIM_F_F64, offsetof(ftsim_ledger_rec, provider_income), "USD"},
    {"node_income", SIM_F_F64, offsetof(ftsim_ledger_rec, node_income), "USD"},
    {"delegate_income", SIM_F_F64, offsetof(ftsim_ledger_rec, delegate_income), "USD"},
    {"platform_income", SIM_F_F64, offsetof(ftsim_ledger_rec, platform_income), "USD"},
    {"slashed", SIM_F_F64, offsetof(ftsim_ledger_rec, slashed), "USD"},
    {"cancelled_billed", SIM_F_F64, offsetof(ftsim_ledger_rec, cancelled_billed), "USD"},
    {"decisions", SIM_F_U64, offsetof(ftsim_ledger_rec, decisions), "1"},
    {"gpu_failures", SIM_F_U64, offsetof(ftsim_ledger_rec, gpu_failures), "1"},
    {"placements", SIM_F_U64, offsetof(ftsim_ledger_rec, placements), "1"},
    {"checkpoints", SIM_F_U64, offsetof(ftsim_ledger_rec, checkpoints), "1"},
    {"replacements", SIM_F_U64, offsetof(ftsim_ledger_rec, replacements), "1"},
    {"speculations", SIM_F_U64, offsetof(ftsim_ledger_rec, speculations), "1"},
    {"svc_offered", SIM_F_F64, offsetof(ftsim_ledger_rec, svc_offered), "requests"},
    {"svc_served", SIM_F_F64, offsetof(ftsim_ledger_rec, svc_served), "requests"},
    {"svc_replica_hours", SIM_F_F64, offsetof(ftsim_ledger_rec, svc_replica_hours), "GPU*h"},
    {"svc_cost", SIM_F_F64, offsetof(ftsim_ledger_rec, svc_cost), "USD"},
    {"svc_scale_events", SIM_F_U64, offsetof(ftsim_ledger_rec, svc_scale_events), "1"},
};
static const sim_table_def ftsim__tables[] = {
    {"jobs", sizeof(ftsim_job_rec), ftsim__job_fields, sizeof ftsim__job_fields / sizeof ftsim__job_fields[0],
     "one row per (policy, churn level, job): outcome, times, GPU-hours employed and lost, cost"},
    {"ledger", sizeof(ftsim_ledger_rec), ftsim__ledger_fields,
     sizeof ftsim__ledger_fields / sizeof ftsim__ledger_fields[0],
     "one row per (policy, churn level): money flows and scheduler counters"},
};

/* ---- Parameters ----------------------------------------------------------------------------- */
static const char *const ftsim__ckpt_names[] = {"fixed", "young", "daly", NULL};
static const char *const ftsim__net_names[] = {"tcp", "arq", "harq", NULL};
static const char *const ftsim__split_names[] = {"even", "weighted", "dynamic", NULL};
#define FO(f) offsetof(ftsim_config, f)
const sim_param ftsim_params[] = {
    {"gpus", SIM_P_INT, FO(gpus), "96", 1, 1e6, "GPUs", "GPUs per churn level (shared by its policies)"},
    {"policies", SIM_P_STRING, FO(policies), "\"none,checkpoint,standby,replicate,speculative\"", SIM_UNBOUNDED,
     "1", "comma-separated policies to compare: none, checkpoint, standby, replicate, speculative"},
    {"churn_file", SIM_P_STRING, FO(churn_file), "\"../data/churn_fta_fits.csv\"", SIM_UNBOUNDED, "1",
     "FTA fits of up/down periods (hours), relative to the scenario's folder"},
    {"churn_dist", SIM_P_ENUM, FO(churn_dist), "\"weibull\"", SIM_UNBOUNDED, "1",
     "which fitted family to draw periods from", churn_kind_names},
    {"churn_low", SIM_P_STRING, FO(churn_trace[0]), "\"microsoft99\"", SIM_UNBOUNDED, "1", "trace of the low churn level"},
    {"churn_mid", SIM_P_STRING, FO(churn_trace[1]), "\"skype06\"", SIM_UNBOUNDED, "1", "trace of the mid churn level"},
    {"churn_high", SIM_P_STRING, FO(churn_trace[2]), "\"overnet03\"", SIM_UNBOUNDED, "1", "trace of the high churn level"},
    {"announce_leave", SIM_P_DOUBLE, FO(announce_leave), "0.2", 0, 1, "1", "share of departures announced in advance"},
    {"heartbeat_interval", SIM_P_DURATION, FO(hb_interval), "\"30s\"", 0.001, 86400, "s", "heartbeat period"},
    {"heartbeat_timeout", SIM_P_DURATION, FO(hb_timeout), "\"90s\"", 0.001, 86400, "s",
     "silence after which a GPU is declared lost (>= heartbeat_interval)"},
    {"latency", SIM_P_DURATION, FO(latency), "\"1s\"", 0.001, 3600, "s", "delay of every message between LPs (lookahead)"},
    {"regions", SIM_P_INT, FO(regions), "3", 1, 1000, "1", "regions"},
    {"grades", SIM_P_INT, FO(grades), "3", 1, 16, "1", "GPU classes; grade g has compute score 2^(g-1)"},
    {"nodes", SIM_P_INT, FO(nodes), "4", 1, 1e6, "1", "GP Nodes managing the GPUs (GPU i -> node i mod nodes)"},
    {"delegated_share", SIM_P_DOUBLE, FO(delegated_share), "0.5", 0, 1, "1", "share of nodes that delegate management"},
    {"job_rate", SIM_P_DOUBLE, FO(job_rate), "1.5", 1e-6, 1e6, "1/h", "batch job arrivals per hour (Poisson)"},
    {"width_max", SIM_P_INT, FO(width_max), "4", 1, 1024, "GPUs", "job width is uniform in 1..width_max"},
    {"job_hours", SIM_P_DOUBLE, FO(job_hours), "3", 1e-3, 1e4, "h", "mean ideal duration on reference GPUs (exponential)"},
    {"deadline_slack", SIM_P_DOUBLE, FO(deadline_slack), "4", 1, 1e6, "1", "deadline = submit + slack x ideal duration"},
    {"step_s", SIM_P_DOUBLE, FO(step_s), "10", 0, 1e6, "s", "synchronous step length on reference GPUs (0 = none)"},
    {"grad_mb", SIM_P_DOUBLE, FO(grad_mb), "10", 0, 1e6, "MB", "bytes all-reduced per step"},
    {"input_mb", SIM_P_DOUBLE, FO(input_mb), "500", 0, 1e9, "MB", "inputs staged to every member"},
    {"ckpt_mb", SIM_P_DOUBLE, FO(ckpt_mb), "200", 0, 1e9, "MB", "checkpoint size (also a replacement's state)"},
    {"price_per_h", SIM_P_DOUBLE, FO(price_per_h), "0.2", 0, 1e6, "USD/h", "price of a reference GPU (score 1)"},
    {"bw_mbps", SIM_P_DOUBLE, FO(bw_mbps), "100", 1e-3, 1e6, "Mbit/s", "median access link rate"},
    {"loss_max", SIM_P_DOUBLE, FO(loss_max), "0.005", 0, 0.99, "1", "packet loss is uniform in [0, loss_max]"},
    {"degrade_per_day", SIM_P_DOUBLE, FO(degrade_per_day), "0.5", 0, 1e4, "1/day", "hidden slow-down episodes per up GPU"},
    {"degrade_factor", SIM_P_DOUBLE, FO(degrade_factor), "0.2", 0.001, 1, "1", "speed during an episode"},
    {"degrade_hours", SIM_P_DOUBLE, FO(degrade_hours), "2", 1e-3, 1e4, "h", "mean episode length (exponential)"},
    {"stake", SIM_P_DOUBLE, FO(stake), "100", 0, 1e9, "USD", "each provider's initial stake"},
    {"ckpt_rule", SIM_P_ENUM, FO(ckpt_rule), "\"young\"", SIM_UNBOUNDED, "1", "checkpoint interval rule", ftsim__ckpt_names},
    {"ckpt_interval", SIM_P_DURATION, FO(ckpt_interval), "\"1h\"", 1, 1e9, "s", "interval of the fixed rule"},
    {"gpu_mtbf", SIM_P_DURATION, FO(gpu_mtbf), "\"12h\"", 1, 1e12, "s",
     "prior MTBF of an employed GPU for Young/Daly (replaced by the observed one after 10 failures)"},
    {"standby_k", SIM_P_INT, FO(standby_k), "1", 0, 64, "GPUs", "standbys per run (standby policy)"},
    {"replicas", SIM_P_INT, FO(replicas), "2", 1, 4, "1", "copies per job (replicate policy)"},
    {"bill_cancelled", SIM_P_BOOL, FO(bill_cancelled), "true", SIM_UNBOUNDED, "1",
     "clients pay for cancelled copies (false: the platform does)"},
    {"slow_ratio", SIM_P_DOUBLE, FO(slow_ratio), "0.5", 0, 1, "1", "progress below this x expected = straggler"},
    {"net", SIM_P_ENUM, FO(net_mode), "\"tcp\"", SIM_UNBOUNDED, "1", "transfer protocol model", ftsim__net_names},
    {"split", SIM_P_ENUM, FO(split), "\"weighted\"", SIM_UNBOUNDED, "1", "how a run splits work over its members",
     ftsim__split_names},
    {"calibration", SIM_P_STRING, FO(calibration), "\"\"", SIM_UNBOUNDED, "1",
     "kernels calibration CSV (key,value,unit,device,note); \"\" = efficiencies 1, chunk overhead 0.01 s"},
    {"platform_fee", SIM_P_DOUBLE, FO(platform_fee), "0.025", 0, 1, "1", "platform share (Clore.ai spot: 2.5%)"},
    {"node_fee", SIM_P_DOUBLE, FO(node_fee), "0.05", 0, 1, "1", "GP Node share of what its GPUs earn"},
    {"delegation_fee", SIM_P_DOUBLE, FO(delegation_fee), "0.2", 0, 1, "1", "share of a delegating node's fees to its operator"},
    {"slash_per_failure", SIM_P_DOUBLE, FO(slash_per_failure), "1", 0, 1e9, "USD", "stake slashed per disconnect while employed"},
    {"slash_per_down_hour", SIM_P_DOUBLE, FO(slash_per_down_hour), "0.1", 0, 1e9, "USD/h",
     "stake slashed per hour down after such a disconnect"},
    {"stake_min", SIM_P_DOUBLE, FO(stake_min), "50", 0, 1e9, "USD", "providers below this stake are not selected"},
    {"rep_exponent", SIM_P_DOUBLE, FO(rep_exponent), "2", 0, 100, "1", "selection weight ~ reputation^this"},
    {"rep_half_life", SIM_P_DURATION, FO(rep_half_life), "\"7d\"", 1, 1e12, "s", "reputation evidence half-life"},
    {"billing_interval", SIM_P_DURATION, FO(billing_interval), "\"1h\"", 1, 1e9, "s", "billing period"},
    {"progress_interval", SIM_P_DURATION, FO(progress_interval), "\"10m\"", 1, 1e9, "s", "progress reports of running jobs"},
    {"max_restarts", SIM_P_INT, FO(max_restarts), "50", 0, 1e6, "1", "a job restarted more often gives up"},
    {"service_rps", SIM_P_DOUBLE, FO(svc_rps), "0", 0, 1e9, "req/s",
     "mean load of one inference service per cluster (0 = no service)"},
    {"service_amplitude", SIM_P_DOUBLE, FO(svc_amplitude), "0.6", 0, 1, "1", "daily swing of the service load"},
    {"service_req_per_score", SIM_P_DOUBLE, FO(svc_req_per_score_s), "2", 1e-9, 1e9, "req/s",
     "requests per second one unit of compute score serves"},
    {"service_min_replicas", SIM_P_INT, FO(svc_min_replicas), "1", 0, 65535, "GPUs", "fewest replicas"},
    {"service_max_replicas", SIM_P_INT, FO(svc_max_replicas), "16", 1, 65535, "GPUs", "most replicas"},
    {"service_load_interval", SIM_P_DURATION, FO(svc_load_interval), "\"5m\"", 1, 1e9, "s",
     "how often the load is measured and the service rescaled"},
    {"target_util", SIM_P_DOUBLE, FO(target_util), "0.7", 0.01, 1, "1", "autoscaling target utilization"},
    {"cooldown", SIM_P_DURATION, FO(cooldown), "\"10m\"", 0, 1e9, "s", "no scale-down sooner after a scaling"},
    {"price_per_score_s", SIM_P_DOUBLE, FO(price_per_score_s), "5.6e-5", 0, 1e9, "USD",
     "pay per task: USD per (compute score x second); default = price_per_h / 3600"},
    {NULL},
};
#undef FO

static int ftsim__parse_policies(const char *text, sched_policy *out, int *n) {
  char buf[256];
  snprintf(buf, sizeof buf, "%s", text);
  *n = 0;
  for (char *p = buf, *tok; (tok = strsep(&p, ","));) {
    while (*tok == ' ') tok++;
    char *e = tok + strlen(tok);
    while (e > tok && e[-1] == ' ') *--e = 0;
    int k = sched_policy_parse(tok);
    if (k < 0) return -1;
    for (int i = 0; i < *n; i++)
      if (out[i] == (sched_policy)k) return -2;
    if (*n >= SCHED_FT_COUNT) return -2;
    out[(*n)++] = (sched_policy)k;
  }
  return *n ? 0 : -1;
}

static int ftsim__validate(const void *cfgv, const sim_scenario *s, sim_diag *d) {
  const ftsim_config *c = cfgv;
  int bad = 0;
  sched_policy p[SCHED_FT_COUNT];
  int n, rc = ftsim__parse_policies(c->policies, p, &n);
  if (rc == -1) {
    sim_param_error(s, "fault_tolerance.policies", d,
                    "'%s': expected comma-separated names among none, checkpoint, standby, replicate, speculative",
                    c->policies);
    bad = 1;
  } else if (rc == -2) {
    sim_param_error(s, "fault_tolerance.policies", d, "'%s' names a policy twice", c->policies);
    bad = 1;
  }
  if (c->hb_timeout < c->hb_interval) {
    sim_param_error(s, "fault_tolerance.heartbeat_timeout", d, "must be at least heartbeat_interval (%g s)",
                    c->hb_interval);
    bad = 1;
  }
  if (c->svc_min_replicas > c->svc_max_replicas) {
    sim_param_error(s, "fault_tolerance.service_min_replicas", d, "exceeds service_max_replicas (%lld)",
                    (long long)c->svc_max_replicas);
    bad = 1;
  }
  if (c->platform_fee + c->node_fee > 1) {
    sim_param_error(s, "fault_tolerance.node_fee", d, "platform_fee + node_fee exceed 1");
    bad = 1;
  }
  return bad ? SIM_ECONFIG : 0;
}

static void ftsim__path(char *out, size_t len, const char *base_dir, const char *p) {
  if (p[0] == '/' || !base_dir || !base_dir[0]) snprintf(out, len, "%s", p);
  else snprintf(out, len, "%s/%s", base_dir, p);
}

static int ftsim__build(const void *cfgv, sim_time end, const char *base_dir, const sim_scenario *s, sim_diag *d,
                        sim_model *out) {
  const ftsim_config *c = cfgv;
  ftsim_ctx *cx = calloc(1, sizeof *cx);
  if (!cx) return SIM_ENOMEM;
  cx->cfg = c;
  cx->end = end;
  if (ftsim__parse_policies(c->policies, cx->pol, &cx->npol)) {
    free(cx);
    return SIM_ECONFIG;
  }
  for (int p = 0; p < cx->npol; p++) cx->active[cx->pol[p]] = 1;
  char path[2048], err[512];
  ftsim__path(path, sizeof path, base_dir, c->churn_file);
  for (int l = 0; l < FTSIM_LEVELS; l++) {
    int frc = churn_fits_load(path, c->churn_trace[l], "up", (churn_kind)c->churn_dist, &cx->up[l], err, sizeof err);
    if (!frc) frc = churn_fits_load(path, c->churn_trace[l], "down", (churn_kind)c->churn_dist, &cx->down[l], err, sizeof err);
    if (frc) {
      static const char *const keys[] = {"fault_tolerance.churn_low", "fault_tolerance.churn_mid",
                                         "fault_tolerance.churn_high"};
      sim_param_error(s, frc == CHURN_ENOTFOUND ? keys[l] : "fault_tolerance.churn_file", d, "%s", err);
      free(cx);
      return SIM_ECONFIG;
    }
  }
  sched_config dflt;
  sched_config_default(&dflt);
  cx->cluster = dflt.cluster;
  cx->cluster.split = (sched_split)c->split;
  if (c->calibration && c->calibration[0]) {
    ftsim__path(path, sizeof path, base_dir, c->calibration);
    if (ftsim_calibration_load(path, &cx->cluster, err, sizeof err)) {
      sim_param_error(s, "fault_tolerance.calibration", d, "%s", err);
      free(cx);
      return SIM_ECONFIG;
    }
  }
  cx->G = (uint32_t)c->gpus;
  /* Job ids: the bound is 3x the expected arrivals plus 100 (Poisson: exceeding it has
   * negligible probability; the workload stops at the bound if it ever happens). */
  double expect = c->job_rate * end / 3600.0;
  cx->max_jobs = (uint32_t)fmin(3 * expect + 100, 1e8) + 1; /* + the service's id */
  cx->delegated = calloc((size_t)c->nodes, 1);
  if (!cx->delegated) {
    free(cx);
    return SIM_ENOMEM;
  }
  /* The first round(share x nodes) nodes delegate. */
  for (int64_t i = 0; i < (int64_t)llround(c->delegated_share * (double)c->nodes); i++) cx->delegated[i] = 1;
  cx->first_gpu = 0;
  cx->workload = (sim_id)FTSIM_LEVELS * cx->G;
  cx->first_sched = cx->workload + 1;
  memset(out, 0, sizeof *out);
  out->name = "fault_tolerance";
  out->types = ftsim__types;
  out->ntypes = 3;
  out->type_of = ftsim__type_of;
  out->nlps = cx->first_sched + (sim_id)FTSIM_LEVELS * SCHED_FT_COUNT;
  out->msg_size = sizeof(ft_msg);
  out->lookahead = c->latency;
  out->end_time = end;
  out->ctx = cx;
  out->tables = ftsim__tables;
  out->ntables = 2;
  return 0;
}

static void ftsim__destroy(sim_model *m) {
  ftsim_ctx *cx = (ftsim_ctx *)m->ctx;
  if (!cx) return;
  free(cx->delegated);
  free(cx);
  m->ctx = NULL;
}

/* ---- Metrics: (quantity) x (policy) x (churn level), named quantity.policy.P.churn.L -------- */
/* The last argument flags the headline metrics `spotlab run` prints (goodput, lost GPU-hours,
 * deadline misses); every metric is stored and reported. */
#define FT_Q(X)                                                                                            \
  X(goodput, "GPU*h/h", "completed work (reference GPU-hours) per hour of simulated time", 1)                 \
  X(efficiency, "1", "completed work / GPU-hours employed (members and standbys)", 0)                         \
  X(lost_gpu_hours, "GPU*h", "GPU time whose work was discarded by failures, or spent on recovery", 1)        \
  X(completion_p50, "s", "median completion time (end - submit) of completed jobs", 0)                        \
  X(completion_p99, "s", "99th percentile completion time of completed jobs", 0)                              \
  X(deadline_misses, "jobs", "jobs that finished after their deadline or were unfinished past it", 1)         \
  X(cost, "USD", "total billed to clients", 0)                                                                \
  X(node_fees, "USD", "GP Node fee income (license holders and delegated operators)", 0)                      \
  X(completed, "jobs", "jobs completed", 0)                                                                     \
  X(service_served, "1", "share of the service's offered requests that were served", 0)                      \
  X(service_cost_per_kreq, "USD", "pay-per-task cost of 1000 served requests", 0)                             \
  X(service_replica_hours, "GPU*h", "GPU time the service held", 0)
#define FT_P(Y, q, u, h, hl)                                                                                    \
  Y(q, u, h, hl, none, low) Y(q, u, h, hl, none, mid) Y(q, u, h, hl, none, high)                                        \
  Y(q, u, h, hl, checkpoint, low) Y(q, u, h, hl, checkpoint, mid) Y(q, u, h, hl, checkpoint, high)                      \
  Y(q, u, h, hl, standby, low) Y(q, u, h, hl, standby, mid) Y(q, u, h, hl, standby, high)                               \
  Y(q, u, h, hl, replicate, low) Y(q, u, h, hl, replicate, mid) Y(q, u, h, hl, replicate, high)                         \
  Y(q, u, h, hl, speculative, low) Y(q, u, h, hl, speculative, mid) Y(q, u, h, hl, speculative, high)
#define FT_DEF(q, u, h, hl, p, l) {#q ".policy." #p ".churn." #l, u, h, hl},
#define FT_ROW(q, u, h, hl) FT_P(FT_DEF, q, u, h, hl)
static const sim_metric_def ftsim__metrics[] = {FT_Q(FT_ROW)};
#define FT_NQ 12
#define FT_NM (FT_NQ * SCHED_FT_COUNT * FTSIM_LEVELS)

static int ftsim__cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static void ftsim__compute(const sim_model *m, const sim_results *r, double *out) {
  const ftsim_ctx *cx = m->ctx;
  for (int i = 0; i < FT_NM; i++) out[i] = NAN;
  const ftsim_job_rec *jr = (const ftsim_job_rec *)r->tables[0];
  const ftsim_ledger_rec *lr = (const ftsim_ledger_rec *)r->tables[1];
  size_t nj = r->nrecords[0];
  double *times = malloc((nj ? nj : 1) * sizeof *times);
  if (!times) SIM_FATAL("out of memory");
  for (int pi = 0; pi < cx->npol; pi++) {
    int p = cx->pol[pi];
    const char *pn = sched_policy_name((sched_policy)p);
    for (int l = 0; l < FTSIM_LEVELS; l++) {
      double work = 0, hours = 0, lost = 0, misses = 0, done = 0;
      size_t nt = 0;
      for (size_t i = 0; i < nj; i++) {
        const ftsim_job_rec *j = &jr[i];
        if (j->kind || strcmp(j->policy, pn) || strcmp(j->churn, ftsim__level_names[l])) continue;
        hours += j->gpu_hours;
        lost += j->lost_gpu_hours;
        if (j->outcome == SCHED_R_COMPLETED) {
          work += j->work_gpu_h;
          done++;
          times[nt++] = j->end - j->submit;
          if (j->deadline > 0 && j->end > j->deadline) misses++;
        } else if (j->deadline > 0 && j->deadline < m->end_time) {
          misses++;
        }
      }
      qsort(times, nt, sizeof *times, ftsim__cmp);
      int base = p * FTSIM_LEVELS + l, stride = SCHED_FT_COUNT * FTSIM_LEVELS;
      out[0 * stride + base] = work / (m->end_time / 3600.0);
      out[1 * stride + base] = hours > 0 ? work / hours : NAN;
      out[2 * stride + base] = lost;
      out[3 * stride + base] = nt ? gsl_stats_quantile_from_sorted_data(times, 1, nt, 0.5) : NAN;
      out[4 * stride + base] = nt ? gsl_stats_quantile_from_sorted_data(times, 1, nt, 0.99) : NAN;
      out[5 * stride + base] = misses;
      out[8 * stride + base] = done;
      for (size_t i = 0; i < r->nrecords[1]; i++)
        if (!strcmp(lr[i].policy, pn) && !strcmp(lr[i].churn, ftsim__level_names[l])) {
          out[6 * stride + base] = lr[i].billed;
          out[7 * stride + base] = lr[i].node_income + lr[i].delegate_income;
          if (lr[i].svc_offered > 0) {
            out[9 * stride + base] = lr[i].svc_served / lr[i].svc_offered;
            out[10 * stride + base] = lr[i].svc_served > 0 ? 1000 * lr[i].svc_cost / lr[i].svc_served : NAN;
            out[11 * stride + base] = lr[i].svc_replica_hours;
          }
        }
    }
  }
  free(times);
}

/* End-of-run checks: every cluster wrote its ledger; money balances; every cluster saw the same
 * jobs (the workload is common); per-job costs add up to the ledger. */
static int ftsim__check(const sim_model *m, const sim_results *r, char *msg, size_t len) {
  const ftsim_ctx *cx = m->ctx;
  size_t nclusters = (size_t)cx->npol * FTSIM_LEVELS;
  if (r->nrecords[1] != nclusters) {
    snprintf(msg, len, "%zu ledger rows for %zu clusters", r->nrecords[1], nclusters);
    return 1;
  }
  if (r->nrecords[0] % nclusters) {
    snprintf(msg, len, "%zu job rows do not split evenly over %zu clusters", r->nrecords[0], nclusters);
    return 1;
  }
  const ftsim_ledger_rec *lr = (const ftsim_ledger_rec *)r->tables[1];
  const ftsim_job_rec *jr = (const ftsim_job_rec *)r->tables[0];
  for (size_t i = 0; i < nclusters; i++) {
    const ftsim_ledger_rec *l = &lr[i];
    double parts = l->provider_income + l->node_income + l->delegate_income + l->platform_income;
    double cost = 0;
    for (size_t k = 0; k < r->nrecords[0]; k++)
      if (!strcmp(jr[k].policy, l->policy) && !strcmp(jr[k].churn, l->churn)) cost += jr[k].cost;
    double tol = 1e-9 * fmax(1.0, fabs(l->billed));
    if (fabs(parts - l->billed) > tol || fabs(cost - l->billed) > tol) {
      snprintf(msg, len, "%s/%s: billed %.9g, shares %.9g, job costs %.9g", l->policy, l->churn, l->billed, parts,
               cost);
      return 1;
    }
  }
  return 0;
}

const sim_model_class ftsim_class = {
    "fault_tolerance",
    "fault-tolerance policies of the scheduling core on churning consumer GPUs, side by side",
    ftsim_params,
    sizeof(ftsim_config),
    ftsim__validate,
    ftsim__build,
    ftsim__destroy,
    ftsim__metrics,
    FT_NM,
    ftsim__compute,
    ftsim__check,
};
