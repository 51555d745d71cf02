/* mkt_place.c - the market's side of the scheduling core (models/sched): every job of a pool is
 * placed, protected and recovered by the pool's core, and billed here, per GPU.
 *
 * Each market LP (region, pool) owns one core. A host that becomes available in the pool joins
 * the core as its GPUs (pool-local dense ids, in join order) with its GP Node, memory grade,
 * speed (reference GPU = 1), price, stake and network link. The pool submits jobs with the fault
 * tolerance of their class; the core answers with decisions (place, standby, replace, checkpoint,
 * stop, end), which this file plays out: runs progress at the cluster speed of their members
 * (sched_cluster_rate: slowest member, links, all-reduce), checkpoints pause them, replacements
 * reload state, and every employed GPU (member or standby) is billed at its rate until it is
 * released. An announced departure is told to the core at once; an unannounced one (churn) only
 * after market.heartbeat_timeout, like a heartbeat monitor would see it, and the runs it hits
 * stall meanwhile. Money is integer micro-USD; the host's share goes by a PAY message.
 */
#include "models/market/mkt_internal.h"

#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define NIL UINT32_MAX

mkt_host *mkt__host(const mkt_ctx *c, mkt_market *m, uint32_t prov) {
  int32_t *ix = &m->hix[prov - c->reg_first[m->region]];
  if (*ix < 0) {
    if (m->nhost == m->caphost) { /* on cache lines: no record straddles two */
      uint32_t nc = mkt__grown(m->caphost, m->nhost + 1);
      mkt_host *t =
          sim_bigmem_realloc_lines(&m->host_block, m->host, (size_t)m->caphost * sizeof *t, (size_t)nc * sizeof *t);
      if (!t) SIM_FATAL("out of memory");
      m->host = t;
      m->caphost = nc;
    }
    mkt_host *h = &m->host[m->nhost];
    memset(h, 0, sizeof *h);
    h->prov = prov;
    h->gpu = c->prov[prov].gpu;
    h->ngpus = c->prov[prov].ngpus;
    h->cid = -1;
    h->pos = -1;
    h->gone_t = INFINITY;
    *ix = (int32_t)m->nhost++;
  }
  return &m->host[*ix];
}
#define host_of mkt__host

mkt_stake *mkt__stake(mkt_market *m, const mkt_host *h) {
  uint32_t i = (uint32_t)(h - m->host);
  if (i >= m->nhstake) {
    m->hstake = mkt__grow(m->hstake, &m->caphstake, i + 1, sizeof *m->hstake);
    memset(m->hstake + m->nhstake, 0, (size_t)(i + 1 - m->nhstake) * sizeof *m->hstake);
    m->nhstake = i + 1;
  }
  return &m->hstake[i];
}

const uint32_t *mkt__host_gpus(const mkt_ctx *c, mkt_market *m, uint32_t prov, unsigned *n, uint32_t *buf) {
  const mkt_host *h = host_of(c, m, prov);
  *n = 0;
  if (h->cid < 0) return NULL;
  unsigned k = h->ngpus;
  for (unsigned g = 0; g < k; g++) buf[g] = (uint32_t)h->cid + g;
  *n = k;
  return buf;
}

/* Host h's employed GPUs changed in the event being fed to the core (m->lp): its provider learns
 * it at the event's end (mkt__feed), whose LP record is fetched now. The list names hosts by
 * index, which the loop there reads without a lookup through hix. */
static void mark_dirty(const mkt_ctx *c, mkt_market *m, const mkt_host *h) {
  m->dirty = mkt__grow(m->dirty, &m->capdirty, m->ndirty + 1, sizeof *m->dirty);
  m->dirty[m->ndirty++] = (uint32_t)(h - m->host);
  if (m->lp) __builtin_prefetch(sim_peer(m->lp, mkt__prov_id(c, m->world, m->region, h->prov)));
}

/* ---- money ----------------------------------------------------------------------------------- */

/* Books `amount` billed to the client for host prov (less `penalty` refunded by the host): the
 * platform's fee, the GP Node's fee (and its operator's share when the node is delegated), and
 * the rest to the host, or to the pool's treasury where rentals feed it. */
static void pay_host(sim_lp *lp, const mkt_ctx *c, mkt_market *m, uint32_t prov, int64_t amount, int64_t penalty) {
  if (!amount && !penalty) return;
  int64_t fee = mkt_fee(amount, c->fee_ppm[m->pool]);
  int64_t nodefee = 0, deleg = 0;
  if (c->cfg->nodes.count > 0) {
    nodefee = mkt_fee(amount, c->fee_node_ppm);
    if (c->node_delegated[c->prov[prov].node]) deleg = mkt_fee(nodefee, c->fee_deleg_ppm);
  }
  int64_t net = amount - fee - nodefee - penalty;
  mkt__book(lp, c, MKT_A_CLIENTS, -(amount - penalty));
  mkt__book(lp, c, MKT_A_PLATFORM, fee);
  mkt__book(lp, c, MKT_A_NODES, nodefee - deleg);
  mkt__book(lp, c, MKT_A_OPERATORS, deleg);
  if (fee) mkt__series(lp, c, MKT_S_FEES, m->pool, 0, fee);
  if (m->ops->treasury) {
    mkt__book(lp, c, MKT_A_TREASURY, net); /* pay-per-task revenue feeds the pool treasury */
    m->treasury += net;
  } else if (net != 0) {
    mkt__book(lp, c, MKT_A_TRANSIT, net);
    mkt__series(lp, c, MKT_S_MONEY, MKT_M_RENTAL_PAID, 0, net);
    mkt_msg pay = {.kind = M_PAY, .reason = PAY_RENTAL, .a = net};
    mkt__send(lp, mkt__prov_id(c, m->world, m->region, prov), c->cfg->latency_s, &pay);
  }
}

/* Bills core GPU `cid` up to time t (never past its host's departure). Returns the amount. */
/* What job j's client paid (amount musd, < 0 for a refund), by pool and by bidding strategy. */
static void job_paid(sim_lp *lp, const mkt_ctx *c, const mkt_market *m, const mkt_job *j, int64_t amount) {
  mkt__rpool(lp, c, m->pool, MKT_RP_COST, amount);
  if (m->ops->bids) mkt__series(lp, c, MKT_S_RSTRAT, j->strat * MKT_RS_N + MKT_RS_COST, 0, amount);
}

int64_t mkt__quote_rental(const mkt_ctx *c, const mkt_market *m, int64_t price) {
  int64_t net =
      price - mkt_fee(price, c->fee_ppm[m->pool]) - (c->cfg->nodes.count > 0 ? mkt_fee(price, c->fee_node_ppm) : 0);
  return mkt_lround(m->util * (double)net);
}

/* What employed GPU g is billed, musd per hour: its job's price in the bidding pool (mkt__reprice
 * bills the GPUs of a job up to the change before it sets the new one), else the pool's price of
 * its GPU model, which is fixed for the run (mkt_model.c). Not kept in the record: 8 bytes less a
 * core GPU id. */
/* A provider of one GPU of model gpu in this pool's region: all a posted price reads. */
static mkt_pstat model_pstat(const mkt_market *m, unsigned gpu) {
  return (mkt_pstat){.gpu = (uint8_t)gpu, .region = (uint8_t)m->region, .ngpus = 1};
}

static int64_t cg_rate(const mkt_ctx *c, const mkt_market *m, const mkt_cgpu *g) {
  if (m->ops->bids) return m->jobs[g->slot].price;
  mkt_pstat ps = model_pstat(m, mkt__cg_host(m, g)->gpu);
  return m->ops->gpu_price(c, m->region, &ps);
}

static int64_t bill_gpu(sim_lp *lp, const mkt_ctx *c, mkt_market *m, uint32_t cid, double t) {
  mkt_cgpu *g = &m->cg[cid];
  if (g->slot == NIL) return 0;
  const mkt_host *h = mkt__cg_host(m, g);
  if (!h->in && h->gone_t < t) t = h->gone_t;
  if (!(t > g->since)) return 0;
  int64_t ms = mkt__ms(t) - mkt__ms(g->since);
  g->since = t;
  if (ms <= 0) return 0;
  int64_t amount = mkt_cost(cg_rate(c, m, g), ms);
  mkt_job *j = &m->jobs[g->slot];
  j->cost += amount;
  j->gpu_ms += ms;
  mkt__series(lp, c, MKT_S_JOBS, j->cls * MKT_NJCOLS + MKT_J_COST, 0, amount);
  job_paid(lp, c, m, j, amount);
  mkt__series(lp, c, MKT_S_JOBS, j->cls * MKT_NJCOLS + MKT_J_GPU_MS, 0, ms);
  if (g->standby) {
    j->standby_ms += ms;
    mkt__series(lp, c, MKT_S_JOBS, j->cls * MKT_NJCOLS + MKT_J_STANDBY_MS, 0, ms);
  }
  pay_host(lp, c, m, h->prov, amount, 0);
  return amount;
}

void mkt__bill_all(sim_lp *lp, const mkt_ctx *c, mkt_market *m) {
  double now = sim_now(lp);
  for (uint32_t i = 0; i < m->ncg; i++) bill_gpu(lp, c, m, i, now);
}

/* Takes avail position i out of class k's free-host list (mkt_market.fre), where it is. */
static void fre_del(mkt_market *m, unsigned k, uint32_t i) {
  uint32_t x = m->fpos[k][i];
  if (x == NIL) return;
  m->fpos[k][i] = NIL;
  uint32_t last = m->fre[k][--m->nfre[k]];
  if (x < m->nfre[k]) {
    m->fre[k][x] = last;
    m->fpos[k][last] = x;
  }
}

/* Keeps m->afree[h->pos] (a host in the avail list) equal to its GPUs not employed, and the
 * free-host lists of the pools that keep them to the hosts whose count is not 0. */
static void avail_free_set(const mkt_ctx *c, mkt_market *m, const mkt_host *h) {
  if (h->pos < 0) return;
  unsigned n = h->ngpus;
  uint32_t i = (uint32_t)h->pos;
  uint8_t was = m->afree[i];
  m->afree[i] = (uint8_t)(h->busy < n ? n - h->busy : 0);
  if (!m->ops->free_hosts || !was == !m->afree[i]) return;
  unsigned fit = c->gpu_cls_fit[h->gpu];
  for (unsigned k = 0; k < MKT_NCLASSES; k++) {
    if (!(fit >> k & 1)) continue;
    if (!m->afree[i]) {
      fre_del(m, k, i);
    } else {
      m->fpos[k][i] = m->nfre[k];
      m->fre[k][m->nfre[k]++] = i;
    }
  }
}

/* The GPU starts working for job `slot` (member or standby), billed at cg_rate from now. */
static void employ(const mkt_ctx *c, mkt_market *m, uint32_t cid, uint32_t slot, int standby, double now) {
  mkt_cgpu *g = &m->cg[cid];
  const mkt_job *j = &m->jobs[slot];
  mkt_host *h = mkt__cg_host(m, g);
  if (j->node && c->prov[h->prov].node != j->node - 1) /* GP Nodes' own queues (nodes.queues) */
    SIM_FATAL("job %u of GP Node %u got a GPU of node %u", slot, j->node - 1u, (unsigned)c->prov[h->prov].node);
  g->slot = slot;
  g->standby = standby != 0;
  g->since = now;
  h->busy++;
  h->sby += (uint16_t)(standby != 0);
  avail_free_set(c, m, h);
  mark_dirty(c, m, h);
}

/* The GPU stops working for its job: billed up to now, then free. `penalty_ms`: the fixed pool's
 * uptime refund when its host interrupted the rental, capped so that the refund never exceeds
 * what the client paid for this GPU's rental (a job's cost is never negative). */
static void release(sim_lp *lp, const mkt_ctx *c, mkt_market *m, uint32_t cid, int64_t penalty_ms) {
  mkt_cgpu *g = &m->cg[cid];
  if (g->slot == NIL) return;
  double now = sim_now(lp);
  bill_gpu(lp, c, m, cid, now);
  mkt_host *h = mkt__cg_host(m, g);
  if (penalty_ms > 0) {
    mkt_job *j = &m->jobs[g->slot];
    int64_t pen = mkt_cost(cg_rate(c, m, g), penalty_ms);
    if (pen > j->cost) pen = j->cost;
    if (pen > 0) {
      j->cost -= pen;
      mkt__series(lp, c, MKT_S_JOBS, j->cls * MKT_NJCOLS + MKT_J_COST, 0, -pen);
      job_paid(lp, c, m, j, -pen);
      pay_host(lp, c, m, h->prov, 0, pen);
    }
  }
  if (g->standby && h->sby) h->sby--;
  g->slot = NIL;
  g->standby = 0;
  if (h->busy) h->busy--;
  avail_free_set(c, m, h);
  mark_dirty(c, m, h);
}

/* ---- runs ------------------------------------------------------------------------------------ */
static mkt_run *run_find(mkt_job *j, uint32_t run) {
  for (int k = 0; k < j->nruns; k++)
    if (j->runs[k].active && j->runs[k].id == run) return &j->runs[k];
  return NULL;
}

/* The running run a FINISH or CKPT timer of slot msg->slot was set for, or NULL when the timer is
 * another core job's (a job that left the slot, or this job before the core handed it back: run
 * ids are unique per core job id only, and msg->a is the core id the timer was set for); its
 * epoch the caller checks. */
static mkt_run *timer_run(mkt_market *m, const mkt_msg *msg) {
  if (msg->slot >= m->njobs) return NULL;
  mkt_job *j = &m->jobs[msg->slot];
  return j->state == J_RUNNING && msg->a == (int64_t)j->cj ? run_find(j, msg->gen) : NULL;
}

/* Work done so far: the run computes at its rate except while paused (staging, checkpoint,
 * recovery of a replacement, a member gone unseen). Of that computing time, each step's all-reduce
 * is communication: dw work units are dw / step_work steps of t_comm each, on every member (the
 * jobs series gets the job's GPU time in whole ms, so that its sum is the jobs table's). */
static void advance(sim_lp *lp, const mkt_ctx *c, mkt_job *j, mkt_run *r, double now) {
  double from = r->last_t > r->pause_until ? r->last_t : r->pause_until;
  if (now > from) {
    double dw = r->rate * (now - from);
    r->work += dw;
    if (j->comm_per_work > 0) {
      int64_t was = mkt__ms(j->comm_gpu_s);
      j->comm_gpu_s += dw * j->comm_per_work * r->n;
      int64_t add = mkt__ms(j->comm_gpu_s) - was;
      if (add) mkt__series(lp, c, MKT_S_JOBS, j->cls * MKT_NJCOLS + MKT_J_COMM_MS, 0, add);
    }
  }
  r->last_t = now;
}

/* Contention applies to a host of several GPUs when a calibration gave the cluster model a
 * contention table (a lab calibration's f(k), market.calibration). */
static int contended(const mkt_ctx *c, uint32_t prov) { return c->cluster.ncoloc > 0 && c->prov[prov].ngpus > 1; }
/* Checkpoints as the core's plan (sched cfg.ckpt_analytic): a run writes a checkpoint of ck_C
 * seconds (the run pauses) ck_T after its staging ends and ck_T after each checkpoint completes.
 * Between failures that schedule is fixed, so it is played out here, exactly as the timers and
 * completion events did it (the work at each checkpoint's start is what it saves, its pause is
 * booked when it starts), but only when the run's progress is needed: before its work is
 * advanced (a finish, a stop, a replacement, the books' closing) and before an event that may
 * stop it (ckpt_sync). One that completes at `now` is durable. One that starts at `now`
 * exactly is played (at_now = 1) only before a provider's departure at that instant: the timers'
 * events were the market's own and came before a provider's message of the same time (lower
 * source LP id in the engine's key); the market's own events of that instant (a finish, the
 * tick's withdrawals) come first (at_now = 0), as the tick, sent an interval earlier, came
 * before the wake-up (ASSUMPTION: the wake-up of a timer could also have been sent before a
 * finish timer of the same instant; the timers' order then depended on when they were sent). */
static void ckpt_play(sim_lp *lp, const mkt_ctx *c, mkt_job *j, mkt_run *r, double now, int at_now) {
  for (;;) {
    if (r->ck_done <= now) {
      r->t_durable = r->ck_done;
      r->ck_saved = r->ck_work;
      r->ck_done = INFINITY;
    }
    if (!(r->ck_next < now || (at_now && r->ck_next == now))) return;
    double t = r->ck_next;
    advance(lp, c, j, r, t); /* the work it saves */
    double from = r->pause_until > t ? r->pause_until : t;
    r->pause_until = from + r->ck_C; /* a blocking checkpoint: the run waits while it writes */
    int64_t ck = mkt__ms(r->ck_C) * r->n;
    j->ckpt_ms += ck;
    mkt__series(lp, c, MKT_S_JOBS, j->cls * MKT_NJCOLS + MKT_J_CKPT_MS, 0, ck);
    r->ck_work = r->work;
    r->ck_done = r->pause_until;
    r->ck_next = r->pause_until + r->ck_T;
  }
}
/* The run's work brought to now, its checkpoints first. */
static void run_to(sim_lp *lp, const mkt_ctx *c, mkt_job *j, mkt_run *r, double now) {
  ckpt_play(lp, c, j, r, now, 0);
  advance(lp, c, j, r, now);
}
static void ckpt_cancel(mkt_run *r) { r->ck_next = r->ck_done = INFINITY; }

/* Tells the core the work job s's runs have saved by now, before an event that may stop them
 * (the core resumes a restart from it, or hands it back with a withdrawn job). */
static void ckpt_sync(sim_lp *lp, const mkt_ctx *c, mkt_market *m, uint32_t s, int at_now) {
  mkt_job *j = &m->jobs[s];
  if (j->state != J_RUNNING) return;
  double now = sim_now(lp);
  for (int k = 0; k < j->nruns; k++) {
    mkt_run *r = &j->runs[k];
    if (!r->active) continue;
    ckpt_play(lp, c, j, r, now, at_now);
    if (!(r->ck_saved > r->told)) continue;
    r->told = r->ck_saved;
    sched_event e = {.type = SCHED_EV_CKPT_DONE, .t = now, .job = j->cj, .run = r->id, .value = r->ck_saved};
    int rc = sched_handle(m->core, &e); /* no decision comes of it */
    if (rc) SIM_FATAL("CKPT_DONE refused: %s", sched_strerror(rc));
  }
}
/* The same for every job employing one of host h's n GPUs. */
static void ckpt_sync_host(sim_lp *lp, const mkt_ctx *c, mkt_market *m, const mkt_host *h, unsigned n, int at_now) {
  if (h->cid < 0 || c->cfg->checkpoint_events || !h->busy) return; /* !busy: no GPU of it employed */
  for (unsigned g = 0; g < n; g++) {
    uint32_t slot = m->cg[(uint32_t)h->cid + g].slot;
    if (slot != NIL && slot < m->njobs) ckpt_sync(lp, c, m, slot, at_now);
  }
}

void mkt__ckpt_all(sim_lp *lp, const mkt_ctx *c, mkt_market *m) {
  double now = sim_now(lp);
  for (uint32_t s = 0; s < m->njobs; s++) {
    mkt_job *j = &m->jobs[s];
    if (j->state != J_RUNNING) continue;
    for (int k = 0; k < j->nruns; k++) /* the checkpoints and work (and communication) up to now */
      if (j->runs[k].active) run_to(lp, c, j, &j->runs[k], now);
  }
}

/* The run's work rate; sets the job's all-reduce time per work unit (the same for all its runs:
 * their width, and the links of the pool's region). */
static double run_rate(const mkt_ctx *c, mkt_market *m, mkt_job *j, const mkt_run *r) {
  double spb[MKT__RUN_INL], *sp = spb;
  sched_link lnb[MKT__RUN_INL], *ln = lnb;
  if (r->n > MKT__RUN_INL) { /* a wide run */
    sp = malloc(r->n * sizeof *sp);
    ln = malloc(r->n * sizeof *ln);
    if (!sp || !ln) SIM_FATAL("out of memory");
  }
  const mkt_class_cfg *cc = &c->cfg->cls[j->cls];
  for (unsigned i = 0; i < r->n; i++) {
    const mkt_host *hg = mkt__cg_host(m, &m->cg[MKT__RG(r)[i]]);
    uint32_t prov = hg->prov;
    const mkt_pstat *ps = &c->prov[prov];
    const mkt_region_cfg *rg = &c->cfg->regions[ps->region];
    sp[i] = c->speed[ps->gpu];
    ln[i] = (sched_link){rg->net_mbps * 1e6, rg->latency_ms * 2e-3, rg->loss};
    /* a member computes at f(k) of its speed alone while k GPUs of its host compute (standbys
     * idle); ASSUMPTION: the pool counts the GPUs it employs on the host, and the slow-down
     * measured between a lab's co-located workers (lab/lab_calib.c) holds for a rig's GPUs
     * sharing its CPU, memory and PCIe links */
    if (contended(c, prov)) {
      unsigned k = hg->busy > hg->sby ? (unsigned)(hg->busy - hg->sby) : 1u;
      sp[i] *= sched_coloc_factor(&c->cluster, (double)k);
    }
  }
  double W = cc->step_s * j->gpus, tm = 0;
  double rate = sched_cluster_step(&c->cluster, &c->net, sp, ln, r->n, W, cc->grad_mb * 1e6, NULL, &tm);
  j->comm_per_work = rate > 0 && W > 0 ? tm / W : 0;
  if (sp != spb) {
    free(sp);
    free(ln);
  }
  return rate;
}

/* When the run would finish at its current rate (INFINITY: stalled, doomed or not computing),
 * with the pauses of its checkpoint plan (the checkpoints up to now played out): computing until
 * the next checkpoint starts, then cycles of ck_C paused and ck_T computing. */
static double finish_time(const mkt_job *j, const mkt_run *r, double now) {
  if (!(r->rate > 0) || r->doomed) return INFINITY;
  double start = r->pause_until > now ? r->pause_until : now;
  double rem = j->work - r->work;
  double need = (rem > 0 ? rem : 0) / r->rate; /* computing time still needed */
  if (!(r->ck_next < start + need)) return start + need;
  need -= r->ck_next > start ? r->ck_next - start : 0; /* what is left once the next checkpoint starts */
  double k = ceil(need / r->ck_T) - 1;                 /* whole intervals before the last, partial one */
  if (k < 0) k = 0;
  return r->ck_next + (k + 1) * r->ck_C + k * r->ck_T + (need - k * r->ck_T);
}

/* Keeps one finish timer per run, at or before the run's finish. A pause (staging, checkpoint,
 * replacement) only delays the finish, so the timer already pending stays and is checked when it
 * fires (mkt__on_finish re-arms it if work remains); only a finish that moved earlier (a faster
 * run) needs a new timer. One checkpoint therefore costs no finish event of its own, and the
 * event set holds no stale finish timers. */
static void arm_finish(sim_lp *lp, mkt_market *m, uint32_t slot, mkt_run *r) {
  double now = sim_now(lp), t = finish_time(&m->jobs[slot], r, now);
  if (!(t < r->fin_t)) return;
  r->epoch++;
  r->fin_t = t;
  mkt_msg msg = {.kind = M_FINISH, .slot = slot, .gen = r->id, .epoch = r->epoch, .a = m->jobs[slot].cj};
  mkt__send(lp, sim_lp_id(lp), t - now, &msg);
}
static void cancel_finish(mkt_run *r) {
  r->epoch++;
  r->fin_t = INFINITY;
}

/* The runs computing on host prov's GPUs change speed when its busy count changed (contention):
 * each is advanced to now at its old rate, then goes on at the new one. A rate that did not
 * change leaves the run as it is (bit-identical to a market without contention when f = 1). */
static void rerate_host(sim_lp *lp, const mkt_ctx *c, mkt_market *m, uint32_t prov) {
  uint32_t buf[MKT__MAX_HOST_GPUS > 8 ? MKT__MAX_HOST_GPUS : 8], *ids = buf;
  unsigned n;
  if (c->prov[prov].ngpus > sizeof buf / sizeof *buf) return; /* hosts that big are not contended */
  if (!mkt__host_gpus(c, m, prov, &n, ids)) return;
  double now = sim_now(lp);
  for (unsigned g = 0; g < n; g++) {
    const mkt_cgpu *cg = &m->cg[ids[g]];
    if (cg->slot == NIL || cg->standby) continue;
    mkt_job *j = &m->jobs[cg->slot];
    if (j->state != J_RUNNING) continue;
    for (int k = 0; k < j->nruns; k++) {
      mkt_run *r = &j->runs[k];
      int member = 0;
      for (unsigned i = 0; r->active && i < r->n && !member; i++) member = MKT__RG(r)[i] == ids[g];
      if (!member) continue;
      double rate = run_rate(c, m, j, r);
      if (rate == r->rate) continue;
      run_to(lp, c, j, r, now); /* its checkpoints and work so far at the old rate */
      r->rate = rate;
      arm_finish(lp, m, cg->slot, r);
    }
  }
}

static void run_close(mkt_run *r) {
  r->active = 0;
  cancel_finish(r);
  ckpt_cancel(r);
  r->ck++;
}

/* ---- the sink -------------------------------------------------------------------------------- */
static void count_interrupt(sim_lp *lp, const mkt_ctx *c, mkt_job *j) {
  j->interruptions++;
  mkt__series(lp, c, MKT_S_JOBS, j->cls * MKT_NJCOLS + MKT_J_INTERRUPTS, 0, 1);
}

/* The core chose GPU cid for a run: employ() will read its record (sched_config.chosen). */
static void chosen(void *ctx, uint32_t cid) {
  const mkt_market *m = ctx;
  if (cid < m->ncg) __builtin_prefetch(&m->cg[cid]);
}

/* The core started a run of job s: its members are employed and billed from now, its checkpoint
 * plan and finish timer set. */
static void sink_place(sim_lp *lp, const mkt_ctx *c, mkt_market *m, const sched_decision *d, uint32_t s, double now) {
  const uint32_t cj = d->job;
  mkt_job *j = &m->jobs[s];
  const sched_ft *ft = &c->ft[m->world][j->cls];
  mkt_run *r = NULL;
  for (int k = 0; k < j->nruns; k++)
    if (!j->runs[k].active) {
      r = &j->runs[k];
      break;
    }
  if (!r || d->ngpus > UINT16_MAX) SIM_FATAL("job %u: more than %d runs or %u GPUs", s, j->nruns, UINT16_MAX);
  sched_job_status st;
  sched_job_query(m->core, cj, &st);
  r->active = 1;
  r->doomed = 0;
  r->id = d->run;
  if (d->ngpus > MKT__RUN_INL && r->n <= MKT__RUN_INL) { /* a wide run: its members in a block of their own,
                                                            kept for the slot's next runs (as wide) */
    r->wide = malloc(d->ngpus * sizeof *r->wide);
    if (!r->wide) SIM_FATAL("out of memory");
  } else if (r->n > MKT__RUN_INL && d->ngpus != r->n) {
    SIM_FATAL("job %u: a run of %u GPUs in a slot of %u", s, d->ngpus, r->n);
  }
  r->n = (uint16_t)d->ngpus;
  memcpy(MKT__RG(r), d->gpus, d->ngpus * sizeof *d->gpus);
  r->nsb = 0;
  for (unsigned i = 0; i < r->n; i++) {
    employ(c, m, MKT__RG(r)[i], s, 0, now);
    mkt__price_sample(lp, c, c->prov[mkt__cg_host(m, &m->cg[MKT__RG(r)[i]])->prov].gpu, now,
                      cg_rate(c, m, &m->cg[MKT__RG(r)[i]]));
  }
  r->work = sched_ft_checkpoints(ft) ? st.saved_work : 0;
  r->last_t = r->t_start = r->t_durable = now;
  r->pause_until = now + d->value; /* staging: inputs (and the checkpoint) reach every member */
  r->rate = run_rate(c, m, j, r);
  r->fin_t = INFINITY;
  /* the core's checkpoint plan (none with timers: cfg.ckpt_analytic = 0) */
  r->ck_T = d->ckpt_interval;
  r->ck_C = d->ckpt_cost;
  r->ck_next = r->ck_T > 0 ? r->pause_until + r->ck_T : INFINITY;
  r->ck_done = INFINITY;
  r->ck_saved = r->told = r->work;
  mkt__series(lp, c, MKT_S_JOBS, j->cls * MKT_NJCOLS + MKT_J_RUNS, 0, 1);
  if (mkt__quotes(c) && r->n)
    m->price_h = mkt_ewma(m->price_h, (double)cg_rate(c, m, &m->cg[MKT__RG(r)[0]]), c->cfg->responses.memory_jobs);
  if (m->ops->started) m->ops->started(c, m, j);
  if (!j->started) {
    j->started = 1;
    j->first_start = now;
    mkt__observe(c, m, j->cls, MKT_OBS_WAIT, now - j->submit);
    if (r->n) mkt__observe(c, m, j->cls, MKT_OBS_PRICE, (double)cg_rate(c, m, &m->cg[MKT__RG(r)[0]]));
    mkt__series(lp, c, MKT_S_JOBS, j->cls * MKT_NJCOLS + MKT_J_STARTED, 0, 1);
    mkt__series(lp, c, MKT_S_JOBS, j->cls * MKT_NJCOLS + MKT_J_WAIT_MS, 0, mkt__ms(now) - mkt__ms(j->submit));
    mkt__series(lp, c, MKT_S_JOBS, j->cls * MKT_NJCOLS + MKT_J_UNSTARTED_WAIT_MS, 0,
                mkt__ms(j->submit) - mkt__ms(c->end));
    uint32_t hosts = 0;
    for (unsigned i = 0; i < r->n; i++) {
      int seen = 0;
      for (unsigned k = 0; k < i; k++)
        seen |= m->cg[MKT__RG(r)[k]].host == m->cg[MKT__RG(r)[i]].host; /* a host per provider */
      hosts += !seen;
    }
    j->hosts = hosts;
  }
  j->state = J_RUNNING;
  arm_finish(lp, m, s, r);
}

/* A member of a run was replaced: the newcomer loads the job's state while the run waits. */
static void sink_replace(sim_lp *lp, const mkt_ctx *c, mkt_market *m, const sched_decision *d, uint32_t s, double now) {
  mkt_job *j = &m->jobs[s];
  mkt_run *r = run_find(j, d->run);
  if (!r) SIM_FATAL("replace in unknown run %u of job %u", d->run, s);
  run_to(lp, c, j, r, now);
  j->replacements++;
  for (unsigned i = 0; i < r->n; i++)
    if (MKT__RG(r)[i] == d->old_gpu) MKT__RG(r)[i] = d->gpu;
  for (unsigned i = 0; i < r->nsb; i++)
    if (r->sb[i] == d->gpu) {
      r->sb[i] = r->sb[--r->nsb];
      break;
    }
  release(lp, c, m, d->old_gpu, 0);
  if (m->cg[d->gpu].slot == NIL) employ(c, m, d->gpu, s, 0, now); /* taken from the idle pool */
  if (m->cg[d->gpu].standby) {
    m->cg[d->gpu].standby = 0;
    mkt__cg_host(m, &m->cg[d->gpu])->sby--;
  }
  /* The newcomer loads the job's state from its peers; the whole run waits meanwhile. A run
   * stalled by a member gone unseen resumes from the state its other members kept. */
  double from = r->pause_until > now && isfinite(r->pause_until) ? r->pause_until : now;
  r->pause_until = from + d->value;
  int64_t lost = mkt__ms(d->value) * r->n;
  j->lost_ms += lost;
  mkt__series(lp, c, MKT_S_JOBS, j->cls * MKT_NJCOLS + MKT_J_LOST_MS, 0, lost);
  r->doomed = 0;
  for (unsigned i = 0; i < r->n; i++) r->doomed |= mkt__cg_host(m, &m->cg[MKT__RG(r)[i]])->unseen;
  r->rate = run_rate(c, m, j, r);
  arm_finish(lp, m, s, r);
}

/* A run writes a blocking checkpoint. */
static void sink_checkpoint(sim_lp *lp, const mkt_ctx *c, mkt_market *m, const sched_decision *d, uint32_t s,
                            double now) {
  const uint32_t cj = d->job;
  mkt_job *j = &m->jobs[s];
  mkt_run *r = run_find(j, d->run);
  if (!r) SIM_FATAL("checkpoint of unknown run %u of job %u", d->run, s);
  run_to(lp, c, j, r, now);
  double from = r->pause_until > now ? r->pause_until : now;
  if (!isfinite(from)) return;      /* stalled: a member is gone; this checkpoint never completes */
  r->pause_until = from + d->value; /* a blocking checkpoint: the run waits while it writes */
  int64_t ck = mkt__ms(d->value) * r->n;
  j->ckpt_ms += ck;
  mkt__series(lp, c, MKT_S_JOBS, j->cls * MKT_NJCOLS + MKT_J_CKPT_MS, 0, ck);
  mkt_msg msg = {.kind = M_CKPT, .slot = s, .gen = d->run, .epoch = ++r->ck, .a = cj, .b = mkt__d2i(r->work)};
  arm_finish(lp, m, s, r);
  mkt__send(lp, sim_lp_id(lp), r->pause_until - now, &msg);
}

/* A run stopped (cancelled, or a member lost): its work since the last checkpoint is lost, its GPUs
 * released (with the uptime refund where the pool owes one). */
static void sink_stop(sim_lp *lp, const mkt_ctx *c, mkt_market *m, const sched_decision *d, uint32_t s, double now) {
  mkt_job *j = &m->jobs[s];
  mkt_run *r = run_find(j, d->run);
  if (!r) SIM_FATAL("stop of unknown run %u of job %u", d->run, s);
  run_to(lp, c, j, r, now);
  int64_t w = 0;
  if (d->reason == SCHED_R_CANCELLED) {
    w = (mkt__ms(now) - mkt__ms(r->t_start)) * r->n;
    j->redundant_ms += w;
  } else {
    w = (mkt__ms(now) - mkt__ms(r->t_durable)) * r->n; /* work since the last checkpoint is lost */
    j->lost_ms += w;
    count_interrupt(lp, c, j);
  }
  mkt__series(lp, c, MKT_S_JOBS, j->cls * MKT_NJCOLS + MKT_J_LOST_MS, 0, w);
  int64_t pen = m->ops->penalty && d->reason == SCHED_R_GPU_LOST ? mkt__ms(c->cfg->fixed.penalty_h * 3600.0) : 0;
  /* the uptime refund is owed for the members whose host left, not for the others */
  for (unsigned i = 0; i < r->n; i++) {
    int gone = !mkt__cg_host(m, &m->cg[MKT__RG(r)[i]])->in;
    release(lp, c, m, MKT__RG(r)[i], gone ? pen : 0);
  }
  for (unsigned i = 0; i < r->nsb; i++) release(lp, c, m, r->sb[i], 0);
  r->nsb = 0;
  run_close(r);
}

/* The core ended job s: completed, given up, or handed back to its pool. */
static void sink_end(sim_lp *lp, const mkt_ctx *c, mkt_market *m, const sched_decision *d, uint32_t s, double now) {
  const uint32_t cj = d->job;
  mkt_job *j = &m->jobs[s];
  for (int k = 0; k < j->nruns; k++)
    if (j->runs[k].active) {
      mkt_run *r = &j->runs[k];
      for (unsigned i = 0; i < r->n; i++) release(lp, c, m, MKT__RG(r)[i], 0);
      for (unsigned i = 0; i < r->nsb; i++) release(lp, c, m, r->sb[i], 0);
      r->nsb = 0;
      run_close(r);
    }
  m->forget = mkt__grow(m->forget, &m->capforget, m->nforget + 1, sizeof *m->forget);
  m->forget[m->nforget++] = cj;
  unsigned k = j->cls;
  if (d->reason == SCHED_R_COMPLETED || d->reason == SCHED_R_GAVE_UP)
    mkt__observe(c, m, k, MKT_OBS_INTR, j->interruptions);
  if (d->reason == SCHED_R_COMPLETED) {
    int64_t val = mkt__job_value(j);
    mkt__rpool(lp, c, m->pool, MKT_RP_DONE, 1);
    mkt__rpool(lp, c, m->pool, MKT_RP_VALUE, val);
    if (m->ops->bids) {
      mkt__series(lp, c, MKT_S_RSTRAT, j->strat * MKT_RS_N + MKT_RS_DONE, 0, 1);
      mkt__series(lp, c, MKT_S_RSTRAT, j->strat * MKT_RS_N + MKT_RS_VALUE, 0, val);
    }
    mkt__series(lp, c, MKT_S_JOBS, k * MKT_NJCOLS + MKT_J_DONE, 0, 1);
    mkt__series(lp, c, MKT_S_JOBS, k * MKT_NJCOLS + MKT_J_TURN_MS, 0, mkt__ms(now) - mkt__ms(j->submit));
    mkt__series(lp, c, MKT_S_JOBS, k * MKT_NJCOLS + MKT_J_RCOMPLETION_MS, 0, mkt__ms(now) - mkt__ms(c->end));
    mkt__series(lp, c, MKT_S_JOBS, k * MKT_NJCOLS + MKT_J_USEFUL_MS, 0, mkt__ms(j->work_total));
    mkt__series(lp, c, MKT_S_JOBS, k * MKT_NJCOLS + MKT_J_DONE_COST, 0, j->cost);
    if (j->deadline > 0 && now > j->deadline) mkt__series(lp, c, MKT_S_JOBS, k * MKT_NJCOLS + MKT_J_MISSED, 0, 1);
    mkt__job_record(lp, c, m, j, now, "done");
    j->state = J_LEAVING;
  } else if (d->reason == SCHED_R_GAVE_UP) {
    mkt__series(lp, c, MKT_S_JOBS, k * MKT_NJCOLS + MKT_J_FAILED, 0, 1);
    if (j->deadline > 0) mkt__series(lp, c, MKT_S_JOBS, k * MKT_NJCOLS + MKT_J_MISSED, 0, 1);
    mkt__job_record(lp, c, m, j, now, "failed");
    j->state = J_LEAVING;
  } else if (!m->ops->handed_back(lp, c, m, s, d->value)) {
    j->state = J_LEAVING;
  }
}

static void sink(void *ctx, const sched_decision *d) {
  mkt_market *m = ctx;
  sim_lp *lp = m->lp;
  const mkt_ctx *c = mkt__ctx(lp);
  double now = sim_now(lp);
  const uint32_t cj = d->job; /* the core's id; s, the market's slot */
  const uint32_t s = cj < m->ncj ? m->cslot[cj] : NIL;
  if (s >= m->njobs) SIM_FATAL("core decided about unknown job %u", cj);
  mkt_job *j = &m->jobs[s];
  switch (d->type) {
  case SCHED_D_PLACE: sink_place(lp, c, m, d, s, now); break;
  case SCHED_D_STANDBY: {
    mkt_run *r = run_find(j, d->run);
    if (!r) SIM_FATAL("standby for unknown run %u of job %u", d->run, s);
    if (r->nsb >= 8) SIM_FATAL("job %u: more than 8 standbys", s);
    r->sb[r->nsb++] = d->gpu;
    employ(c, m, d->gpu, s, 1, now);
    break;
  }
  case SCHED_D_UNSTANDBY: {
    mkt_run *r = run_find(j, d->run);
    if (r)
      for (unsigned i = 0; i < r->nsb; i++)
        if (r->sb[i] == d->gpu) {
          r->sb[i] = r->sb[--r->nsb];
          break;
        }
    release(lp, c, m, d->gpu, 0);
    break;
  }
  case SCHED_D_REPLACE: sink_replace(lp, c, m, d, s, now); break;
  case SCHED_D_CHECKPOINT: sink_checkpoint(lp, c, m, d, s, now); break;
  case SCHED_D_STOP: sink_stop(lp, c, m, d, s, now); break;
  case SCHED_D_END: sink_end(lp, c, m, d, s, now); break;
  default: break; /* SCALE: the market runs no services */
  }
}

/* ---- feeding the core ------------------------------------------------------------------------ */
void mkt__feed(sim_lp *lp, const mkt_ctx *c, mkt_market *m, sched_event *e) {
  sim_lp *outer = m->lp;
  m->lp = lp;
  e->t = sim_now(lp);
  int rc = sched_handle(m->core, e);
  if (rc)
    SIM_FATAL("market %s/%s: the scheduling core refused event %d at t=%g: %s", c->cfg->regions[m->region].name,
              m->ops->name, e->type, e->t, sched_strerror(rc));
  /* jobs the core ended: dropped from the core, their slots freed unless the pool keeps them */
  while (m->nforget) {
    uint32_t cj = m->forget[--m->nforget], s = m->cslot[cj];
    sched_event f = {.type = SCHED_EV_JOB_FORGET, .t = e->t, .job = cj};
    rc = sched_handle(m->core, &f);
    if (rc) SIM_FATAL("JOB_FORGET refused: %s", sched_strerror(rc));
    m->cslot[cj] = NIL;
    m->jobs[s].cj = MKT__NOCORE;
    m->cfree = mkt__grow(m->cfree, &m->capcfree, m->ncfree + 1, sizeof *m->cfree);
    m->cfree[m->ncfree++] = cj;
    if (m->jobs[s].state == J_LEAVING) mkt__job_free(m, s);
  }
  /* the core's next timer */
  double w = sched_next_wakeup(m->core), now = sim_now(lp);
  if (w < m->wake_at) {
    m->wake_at = w;
    mkt_msg msg = {.kind = M_WAKE, .b = mkt__d2i(w)};
    mkt__send(lp, sim_lp_id(lp), w > now ? w - now : 0, &msg);
  }
  /* hosts whose employed GPUs changed: their providers learn it now (the rental runs on their
   * GPUs), once per host and round, through the state they share with the market (sim_peer) */
  while (m->ndirty && !outer) {
    /* take the list (host_free below may dirty hosts again: the next round tells those) */
    uint32_t n = m->ndirty, *v = m->dirty, cap = m->capdirty;
    m->dirty = m->dirty_out;
    m->capdirty = m->capdirty_out;
    m->dirty_out = v;
    m->capdirty_out = cap;
    m->ndirty = 0;
    for (uint32_t i = 0; i < n; i++) /* their states, while the loop below works on the first */
      __builtin_prefetch(sim_lp_state(sim_peer(lp, mkt__prov_id(c, m->world, m->region, m->host[v[i]].prov))));
    for (uint32_t i = 0; i < n; i++) {
      int dup = 0;
      for (uint32_t k = 0; k < i && !dup; k++) dup = v[k] == v[i];
      if (dup) continue;
      mkt_host *h = &m->host[v[i]];
      uint32_t prov = h->prov;
      if (contended(c, prov)) rerate_host(lp, c, m, prov);
      /* only a change the provider does not know: what it was told last in this session (a
       * release and a placement in one event, a join with nothing placed, tell it nothing) */
      if (!h->in || h->busy == h->told) continue;
      h->told = h->busy;
      m->rented(sim_peer(lp, mkt__prov_id(c, m->world, m->region, prov)), m->pool, h->busy, h->session);
    }
    /* freed GPUs may take waiting bids at once */
    if (m->ops->host_free)
      for (uint32_t i = 0; i < n; i++) {
        const mkt_host *h = &m->host[v[i]];
        if (h->in && h->busy < h->ngpus) m->ops->host_free(lp, c, m, h->prov);
      }
  }
  m->lp = outer;
}

static sched_gpu_info gpu_info(const mkt_ctx *c, mkt_market *m, uint32_t prov) {
  const mkt_pstat *ps = &c->prov[prov];
  const mkt_region_cfg *rg = &c->cfg->regions[ps->region];
  const mkt_host *h = mkt__host(c, (mkt_market *)m, prov);
  sched_gpu_info in;
  memset(&in, 0, sizeof in);
  in.provider = (uint32_t)m->hix[prov - c->reg_first[m->region]]; /* pool-local, in join order */
  in.node = c->cfg->nodes.count > 0 ? ps->node : 0;
  in.region = 0;
  in.grade = c->grade[ps->gpu];
  in.score = c->speed[ps->gpu];
  in.price_per_h = (double)m->ops->gpu_price(c, m->region, ps) / MKT_MUSD;
  in.stake = (double)mkt__stake_of(m, h).stake / MKT_MUSD;
  /* the core's expected rates see the same contention (sched_coloc_factor over busy GPUs of a host) */
  if (contended(c, prov)) in.host = in.provider + 1;
  /* the region's links: bandwidth, round trip = 2 x one-way latency, packet loss */
  in.link = (sched_link){rg->net_mbps * 1e6, rg->latency_ms * 2e-3, rg->loss};
  return in;
}

void mkt__host_join(sim_lp *lp, const mkt_ctx *c, mkt_market *m, uint32_t prov, uint32_t session) {
  mkt_host *h = host_of(c, m, prov);
  if (h->unseen) mkt__host_detect(lp, c, m, prov, h->session); /* back before the timeout fired */
  unsigned n = h->ngpus;
  if (h->cid < 0) {
    if (n <= MKT__MAX_HOST_GPUS && m->nspare[n]) { /* ids a departed host of as many GPUs left */
      h->cid = (int32_t)m->spare[n][--m->nspare[n]];
    } else {
      h->cid = (int32_t)m->ncg;
      m->cg = mkt__grow(m->cg, &m->capcg, m->ncg + n, sizeof *m->cg);
      m->ncg += n;
    }
    for (unsigned g = 0; g < n; g++)
      m->cg[(uint32_t)h->cid + g] = (mkt_cgpu){.host = (uint32_t)(h - m->host), .slot = NIL};
  }
  h->in = 1;
  h->session = session;
  h->told = 0; /* a provider starts each session with no rentals */
  h->gone_t = INFINITY;
  if (m->navail == m->capavail) {
    uint32_t cap = m->capavail;
    m->afree = mkt__grow(m->afree, &cap, m->navail + 1, sizeof *m->afree);
    for (unsigned k = 0; k < MKT_NCLASSES && m->ops->free_hosts; k++) {
      cap = m->capavail;
      m->fre[k] = mkt__grow(m->fre[k], &cap, m->navail + 1, sizeof *m->fre[k]);
      cap = m->capavail;
      m->fpos[k] = mkt__grow(m->fpos[k], &cap, m->navail + 1, sizeof *m->fpos[k]);
    }
    m->avail = mkt__grow(m->avail, &m->capavail, m->navail + 1, sizeof *m->avail);
  }
  h->pos = (int32_t)m->navail;
  for (unsigned k = 0; k < MKT_NCLASSES && m->ops->free_hosts; k++) m->fpos[k][m->navail] = NIL;
  m->afree[m->navail] = 0; /* avail_free_set lists it where it has free GPUs */
  m->avail[m->navail++] = prov;
  avail_free_set(c, m, h);
  sched_gpu_info in = gpu_info(c, m, prov);
  for (unsigned g = 0; g < n; g++) {
    sched_event e = {.type = SCHED_EV_GPU_JOIN, .gpu = (uint32_t)h->cid + g};
    e.u.gpu = in;
    mkt__feed(lp, c, m, &e);
  }
  mark_dirty(c, m, h); /* tells the host its rented count for this session, if not 0 */
  if (m->ops->host_free && h->busy < n) m->ops->host_free(lp, c, m, prov);
}

static void avail_remove(const mkt_ctx *c, mkt_market *m, mkt_host *h) {
  int32_t i = h->pos;
  if (i < 0) return;
  h->pos = -1;
  for (unsigned k = 0; k < MKT_NCLASSES && m->ops->free_hosts; k++) fre_del(m, k, (uint32_t)i);
  uint32_t last = m->avail[--m->navail];
  if ((uint32_t)i < m->navail) {
    m->avail[i] = last;
    m->afree[i] = m->afree[m->navail];
    host_of(c, m, last)->pos = i;
    for (unsigned k = 0; k < MKT_NCLASSES && m->ops->free_hosts; k++) { /* the last host's entries follow it */
      uint32_t x = m->fpos[k][m->navail];
      m->fpos[k][i] = x;
      if (x != NIL) m->fre[k][x] = (uint32_t)i;
    }
  }
}

/* The records the core and the market will read when host h's n GPUs leave or are missed: the
 * core's GPUs, and the jobs of those employed (fetched together rather than one after another).
 * Returns 1 when one of them is employed. A host none of whose GPUs is employed (busy 0, the count
 * of its GPUs whose market record names a job) has its market records left unread: at a million
 * GPUs each was a miss, on most departures. */
static int prefetch_host(const mkt_market *m, const mkt_host *h, unsigned n) {
  if (h->cid < 0) return 0;
  if (!h->busy) { /* none employed: only the core's records are fetched */
    for (unsigned g = 0; g < n; g++) sched_prefetch_gpu(m->core, (uint32_t)h->cid + g);
    return 0;
  }
  int employed = 0;
  for (unsigned g = 0; g < n; g++) {
    uint32_t cid = (uint32_t)h->cid + g, slot = m->cg[cid].slot;
    sched_prefetch_gpu(m->core, cid);
    employed |= slot != NIL;
    if (slot != NIL && slot < m->njobs) { /* (not the core's job record: its id is in this one, not here yet) */
      __builtin_prefetch(&m->jobs[slot]);
      __builtin_prefetch(&m->jobs[slot].run0);
    }
  }
  return employed;
}

void mkt__host_leave(sim_lp *lp, const mkt_ctx *c, mkt_market *m, uint32_t prov, int announced, double t_left) {
  mkt_host *h = host_of(c, m, prov);
  if (!h->in) return;
  unsigned n = h->ngpus;
  prefetch_host(m, h, n);
  h->in = 0;
  h->gone_t = t_left;
  avail_remove(c, m, h);
  if (announced || h->busy == 0) {
    ckpt_sync_host(lp, c, m, h, n, 1); /* a provider's message */
    for (unsigned g = 0; g < n; g++) {
      sched_event e = {.type = SCHED_EV_GPU_LEAVE, .gpu = (uint32_t)h->cid + g};
      mkt__feed(lp, c, m, &e);
    }
    return;
  }
  /* Unannounced while employed: its idle GPUs are dropped at once (a placement on them would
   * fail at first contact); the runs it serves stall, and the core learns of the employed GPUs
   * when their heartbeats time out. */
  h->unseen = 1;
  for (unsigned g = 0; g < n; g++) {
    uint32_t cid = (uint32_t)h->cid + g;
    if (m->cg[cid].slot == NIL) {
      sched_event e = {.type = SCHED_EV_GPU_MISSED, .gpu = cid};
      mkt__feed(lp, c, m, &e);
      continue;
    }
    mkt_job *j = &m->jobs[m->cg[cid].slot];
    for (int k = 0; k < j->nruns; k++) {
      mkt_run *r = &j->runs[k];
      if (!r->active) continue;
      for (unsigned i = 0; i < r->n; i++)
        if (MKT__RG(r)[i] == cid && !r->doomed) {
          /* the checkpoints that started before the market learnt of it, as the timers had them */
          ckpt_play(lp, c, j, r, sim_now(lp), 1);
          advance(lp, c, j, r, t_left > r->last_t ? t_left : r->last_t);
          r->doomed = 1;
          r->pause_until = INFINITY;
          cancel_finish(r); /* its finish and checkpoint never come */
          ckpt_cancel(r);
          r->ck++;
        }
    }
  }
  double at = t_left + c->cfg->heartbeat_s, now = sim_now(lp);
  mkt_msg msg = {.kind = M_DETECT, .slot = prov, .gen = h->session};
  mkt__send(lp, sim_lp_id(lp), at > now ? at - now : 0, &msg);
}

void mkt__host_depart(sim_lp *lp, const mkt_ctx *c, mkt_market *m, uint32_t prov) {
  mkt_host *h = host_of(c, m, prov);
  unsigned n = h->ngpus;
  /* only a host whose GPUs the core has let go: not available, none employed, not awaiting
   * detection (an unannounced departure keeps its ids until the core learns of it) */
  if (h->cid < 0 || h->in || h->unseen || h->busy || n > MKT__MAX_HOST_GPUS) return;
  for (unsigned g = 0; g < n; g++) {
    sched_event e = {.type = SCHED_EV_GPU_FORGET, .gpu = (uint32_t)h->cid + g};
    mkt__feed(lp, c, m, &e);
    m->cg[(uint32_t)h->cid + g] = (mkt_cgpu){.host = MKT__NOHOST, .slot = NIL};
  }
  m->spare[n] = mkt__grow(m->spare[n], &m->capspare[n], m->nspare[n] + 1, sizeof *m->spare[n]);
  m->spare[n][m->nspare[n]++] = (uint32_t)h->cid;
  h->cid = -2;
}

void mkt__host_detect(sim_lp *lp, const mkt_ctx *c, mkt_market *m, uint32_t prov, uint32_t session) {
  mkt_host *h = host_of(c, m, prov);
  if (!h->unseen || session != h->session) return; /* stale */
  h->unseen = 0;
  unsigned n = h->ngpus;
  int employed = prefetch_host(m, h, n);
  if (employed) ckpt_sync_host(lp, c, m, h, n, 0);
  if (employed) {
    /* Staking: an unannounced departure while employed is slashed (NGPU's incentive to stay
     * online, shared/seeds 001); the stake goes to the pool's treasury. */
    h->failures++;
    int64_t held = mkt__stake_of(m, h).stake, x = c->slash < held ? c->slash : held;
    if (x > 0 && m->ops->treasury) {
      mkt_stake *st = mkt__stake(m, h);
      st->stake -= x;
      st->slashed += x;
      m->stakes -= x;
      m->treasury += x;
      mkt__book(lp, c, MKT_A_STAKES, -x);
      mkt__book(lp, c, MKT_A_TREASURY, x);
      mkt__series(lp, c, MKT_S_MONEY, MKT_M_SLASHED, 0, x);
      mkt_msg s = {.kind = M_SLASH, .a = x};
      mkt__send(lp, mkt__prov_id(c, m->world, m->region, prov), c->cfg->latency_s, &s);
    }
  }
  for (unsigned g = 0; g < n; g++) {
    sched_event e = {.type = SCHED_EV_GPU_MISSED, .gpu = (uint32_t)h->cid + g};
    mkt__feed(lp, c, m, &e);
  }
}

/* ---- jobs ------------------------------------------------------------------------------------ */
void mkt__submit(sim_lp *lp, const mkt_ctx *c, mkt_market *m, uint32_t s, const uint32_t *cand, unsigned ncand) {
  mkt_job *j = &m->jobs[s];
  const mkt_class_cfg *cc = &c->cfg->cls[j->cls];
  if (j->cj != MKT__NOCORE) SIM_FATAL("job %u submitted again before the core forgot it", s);
  uint32_t cj;
  if (m->ncfree) {
    cj = m->cfree[--m->ncfree];
  } else {
    m->cslot = mkt__grow(m->cslot, &m->capcj, m->ncj + 1, sizeof *m->cslot);
    cj = m->ncj++;
  }
  m->cslot[cj] = s;
  j->cj = cj;
  sched_event e = {.type = SCHED_EV_JOB_ARRIVE, .job = cj};
  sched_job_spec *sp = &e.u.job;
  sp->kind = SCHED_JOB_BATCH;
  sp->width = j->gpus;
  sp->min_grade = c->min_grade[j->cls];
  sp->region = -1;
  sp->work = j->work > 1e-3 ? j->work : 1e-3;
  sp->deadline = j->deadline;
  sp->step_work = cc->step_s * j->gpus;
  sp->step_bytes = cc->grad_mb * 1e6;
  sp->input_bytes = cc->input_mb * 1e6;
  sp->ckpt_bytes = cc->ckpt_mb * 1e6;
  /* a client never pays more per GPU-hour than it values (fixed, flexible) or bids (bidding) */
  sp->max_price_per_h = (double)(m->ops->bids ? j->bid : j->value) / MKT_MUSD;
  if (!(sp->max_price_per_h > 0)) sp->max_price_per_h = 1e-12;
  sp->ft = &c->ft[m->world][j->cls];
  sp->cand = cand;
  sp->ncand = ncand;
  sp->hold = m->ops->hold;
  sp->node = -1;
  if (c->cfg->nodes.count > 0 && c->cfg->nodes.queues) {
    /* GP Nodes with their own queues: a job the clearing put on a host goes to that host's node;
     * another goes to the node with the most idle GPUs of the grade it needs, ties (all nodes full,
     * say) broken evenly by a hash of the job's id (an ASSUMPTION: the seed says each node queues
     * for its clients, not how clients pick one). */
    if (ncand) {
      sp->node = (int32_t)c->prov[mkt__cg_host(m, &m->cg[cand[0]])->prov].node;
    } else {
      uint64_t best = 0, ties = 0;
      for (int64_t n = 0; n < c->cfg->nodes.count; n++) {
        uint64_t idle = sched_node_idle(m->core, (uint32_t)n, sp->min_grade);
        if (idle > best || n == 0) {
          best = idle;
          ties = 0;
        }
        ties += idle == best;
      }
      uint64_t h = (j->id + 1) * 0x9E3779B97F4A7C15ull, pick = (h ^ h >> 31) % ties;
      for (int64_t n = 0; n < c->cfg->nodes.count; n++)
        if (sched_node_idle(m->core, (uint32_t)n, sp->min_grade) == best && pick-- == 0) {
          sp->node = (int32_t)n;
          break;
        }
    }
    j->node = (uint16_t)(sp->node + 1);
  }
  j->state = J_CORE;
  for (int k = 0; k < j->nruns; k++) j->runs[k].active = 0;
  mkt__feed(lp, c, m, &e);
}

int mkt__could_run(const mkt_ctx *c, const mkt_market *m, const mkt_job *j) {
  uint64_t in = c->models_in[m->region];
  for (size_t g = 0; g < c->ngpus && g < 64; g++) {
    if (!(in >> g & 1) || c->grade[g] < c->min_grade[j->cls]) continue;
    mkt_pstat ps = model_pstat(m, (unsigned)g);
    if (m->ops->gpu_price(c, m->region, &ps) <= j->value) return 1;
  }
  return c->ngpus > 64; /* more models than the mask holds: let the core decide */
}

void mkt__posted_submit(sim_lp *lp, const mkt_ctx *c, mkt_market *m, uint32_t s) {
  if (mkt__could_run(c, m, &m->jobs[s])) {
    mkt__submit(lp, c, m, s, NULL, 0);
  } else { /* no GPU model of the region could take it: it waits here until its patience ends */
    m->jobs[s].state = J_QUEUED;
    mkt__q_push(m, s, 0);
  }
}
void mkt__posted_tick(sim_lp *lp, const mkt_ctx *c, mkt_market *m) { (void)lp, (void)c, (void)m; }
int mkt__posted_handed_back(sim_lp *lp, const mkt_ctx *c, mkt_market *m, uint32_t s, double saved) {
  (void)lp, (void)c, (void)m, (void)s, (void)saved;
  return 0;
}

void mkt__withdraw(sim_lp *lp, const mkt_ctx *c, mkt_market *m, uint32_t s) {
  if (!c->cfg->checkpoint_events && s < m->njobs) ckpt_sync(lp, c, m, s, 0);
  sched_event e = {.type = SCHED_EV_JOB_WITHDRAW, .job = m->jobs[s].cj};
  mkt__feed(lp, c, m, &e);
}

void mkt__reprice(sim_lp *lp, const mkt_ctx *c, mkt_market *m, uint32_t s, int64_t price) {
  mkt_job *j = &m->jobs[s];
  if (price == j->price) return;
  double now = sim_now(lp);
  for (int k = 0; k < j->nruns; k++) {
    mkt_run *r = &j->runs[k];
    if (!r->active) continue;
    for (unsigned i = 0; i < r->n; i++) {
      bill_gpu(lp, c, m, MKT__RG(r)[i], now); /* at the old price, j->price until the end */
      mkt__price_sample(lp, c, c->prov[mkt__cg_host(m, &m->cg[MKT__RG(r)[i]])->prov].gpu, now, price);
    }
    for (unsigned i = 0; i < r->nsb; i++) bill_gpu(lp, c, m, r->sb[i], now);
  }
  j->price = price;
}

void mkt__on_finish(sim_lp *lp, const mkt_ctx *c, mkt_market *m, const mkt_msg *msg) {
  mkt_run *r = timer_run(m, msg);
  if (!r || r->epoch != msg->epoch || r->doomed) return; /* stale: another core job, a stopped run, a moved finish */
  mkt_job *j = &m->jobs[msg->slot];
  /* a pause since the timer was set moved the finish later: wait for it (sub-microsecond
   * remainders are rounding, not work) */
  double now = sim_now(lp);
  r->fin_t = INFINITY;
  run_to(lp, c, j, r, now); /* a checkpoint due at this instant comes after the finish */
  if (finish_time(j, r, now) > now + 1e-6) {
    arm_finish(lp, m, msg->slot, r);
    return;
  }
  sched_event e = {.type = SCHED_EV_JOB_FINISH, .job = j->cj, .run = msg->gen};
  mkt__feed(lp, c, m, &e);
}

void mkt__on_ckpt(sim_lp *lp, const mkt_ctx *c, mkt_market *m, const mkt_msg *msg) {
  mkt_run *r = timer_run(m, msg);
  if (!r || r->ck != msg->epoch || r->doomed) return; /* stale: another core job, or the run stopped or stalled */
  const mkt_job *j = &m->jobs[msg->slot];
  r->t_durable = sim_now(lp);
  sched_event e = {.type = SCHED_EV_CKPT_DONE, .job = j->cj, .run = msg->gen, .value = mkt__i2d(msg->b)};
  mkt__feed(lp, c, m, &e);
}

void mkt__on_wake(sim_lp *lp, const mkt_ctx *c, mkt_market *m, const mkt_msg *msg) {
  if (mkt__i2d(msg->b) != m->wake_at) return; /* superseded by an earlier wake-up */
  m->wake_at = INFINITY;
  sched_event e = {.type = SCHED_EV_TICK};
  mkt__feed(lp, c, m, &e);
}

/* ---- life cycle ------------------------------------------------------------------------------ */
void mkt__place_init(sim_lp *lp, const mkt_ctx *c, mkt_market *m) {
  uint64_t np = c->reg_first[m->region + 1] - c->reg_first[m->region], ng = 0;
  for (uint64_t i = c->reg_first[m->region]; i < c->reg_first[m->region + 1]; i++) ng += c->prov[i].ngpus;
  m->hix = sim_bigmem_realloc(NULL, (np ? np : 1) * sizeof *m->hix);
  if (!m->hix) SIM_FATAL("out of memory");
  for (uint64_t i = 0; i < np; i++) m->hix[i] = -1;
  sched_config sc;
  sched_config_default(&sc);
  sc.max_gpus = (uint32_t)(ng ? ng : 1);
  sc.max_providers = (uint32_t)(np ? np : 1);
  sc.max_nodes = (uint32_t)(c->cfg->nodes.count > 0 ? c->cfg->nodes.count : 1);
  sc.node_queues = c->cfg->nodes.count > 0 && c->cfg->nodes.queues;
  sc.max_jobs = 0x7fffffffu;
  sc.nregions = 1;
  sc.ngrades = c->ngrades;
  sc.sink = sink;
  sc.sink_ctx = m;
  sc.chosen = chosen;
  /* the core's own stream, from the market's (the same in every world: common random numbers) */
  sc.seed = (uint64_t)gsl_rng_get(sim_lp_rng(lp)) << 32 ^ gsl_rng_get(sim_lp_rng(lp));
  sc.heartbeat_timeout_s = 0;                    /* the market reports misses (market.heartbeat_timeout) */
  sc.ckpt_analytic = !c->cfg->checkpoint_events; /* checkpoints as a plan, played out here (ckpt_play) */
  /* queued jobs tried per capacity change: the head of the queue and a little backfilling (a
   * spotlab choice: each try samples candidates, and the queue moves at every change) */
  sc.queue_scan = 4;
  sc.rep_exponent = c->cfg->rep_exponent;
  sc.min_reputation = c->cfg->min_reputation;
  sc.platform_fee = 0; /* money is the market's: integer ledger, pay_host */
  sc.node_fee = 0;
  sc.cluster = c->cluster;
  sc.net = c->net;
  int rc = sched_create(&sc, &m->core);
  if (rc)
    SIM_FATAL("market %s/%s: cannot create the scheduling core: %s", c->cfg->regions[m->region].name, m->ops->name,
              sched_strerror(rc));
  /* size the tables for the providers that start in this pool (switchers grow them later) */
  uint32_t g0 = 0, p0 = 0;
  for (uint64_t i = c->reg_first[m->region]; i < c->reg_first[m->region + 1]; i++)
    if ((unsigned)c->cfg->personas[c->prov[i].persona].pool == m->pool) {
      g0 += c->prov[i].ngpus;
      p0++;
    }
  if (g0 && (sched_reserve(m->core, g0, p0) || !(m->cg = sim_bigmem_realloc(NULL, (size_t)g0 * sizeof *m->cg)) ||
             !(m->host = sim_bigmem_realloc_lines(&m->host_block, NULL, 0, (size_t)p0 * sizeof *m->host))))
    SIM_FATAL("out of memory");
  m->capcg = g0;
  m->caphost = p0;
  m->wake_at = INFINITY;
}

/* The free-host lists hold exactly the available hosts with free GPUs of the classes their GPU
 * fits, each position once, and fpos inverts fre: fatal otherwise. Called on a pool's last event
 * in Debug builds (the tests under ASan). */
void mkt__free_hosts_check(const mkt_ctx *c, const mkt_market *m) {
  if (!m->ops->free_hosts) return;
  for (unsigned k = 0; k < MKT_NCLASSES; k++) {
    uint32_t listed = 0;
    for (uint32_t i = 0; i < m->navail; i++) {
      int want = m->afree[i] && (c->gpu_cls_fit[c->prov[m->avail[i]].gpu] >> k & 1);
      uint32_t x = m->fpos[k][i];
      if (want != (x != NIL) || (x != NIL && (x >= m->nfre[k] || m->fre[k][x] != i)))
        SIM_FATAL("bidding pool %s: class %u's free-host list is wrong at avail position %u",
                  c->cfg->regions[m->region].name, k, i);
      listed += want;
    }
    if (listed != m->nfre[k])
      SIM_FATAL("bidding pool %s: class %u's free-host list holds %u hosts, not %u", c->cfg->regions[m->region].name, k,
                m->nfre[k], listed);
  }
}

void mkt__place_fini(mkt_market *m) {
  /* The core's books at the end, once per market (a pass over its GPUs and jobs): every invariant
   * holds, its floating-point ledger among them (billed = the providers', nodes', operators' and
   * platform's shares). A broken one is a bug of the core or of the events the market fed it. */
  char msg[256];
  if (m->core && sched_check_invariants(m->core, msg, sizeof msg))
    SIM_FATAL("market of region %u, pool %u: the scheduling core's invariants fail at the end: %s", m->region, m->pool,
              msg);
  sched_destroy(m->core);
  free(m->host_block);
  free(m->hstake);
  free(m->hix);
  free(m->cg);
  for (unsigned k = 0; k <= MKT__MAX_HOST_GPUS; k++) free(m->spare[k]);
  free(m->avail);
  free(m->afree);
  for (unsigned k = 0; k < MKT_NCLASSES; k++) {
    free(m->fre[k]);
    free(m->fpos[k]);
  }
  free(m->dirty);
  free(m->dirty_out);
  free(m->held);
  free(m->forget);
  free(m->cslot);
  free(m->cfree);
  m->core = NULL;
}
