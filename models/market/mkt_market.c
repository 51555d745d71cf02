/* mkt_market.c - the market LP, one per (region, pool): its clients' jobs (synthetic arrivals and
 * trace replay), the billing tick (demand, abandonment, the pool's clearing, the flexible pool's
 * staking rate), the flexible treasury, and job records. Placement, recovery and billing per GPU
 * go through the pool's scheduling core (mkt_place.c); what differs between pools is in their
 * descriptors (pool_*.c).
 *
 * Protocol (every message to another LP travels with market.latency >= the lookahead):
 *   provider -> market: AVAIL (session), UNAVAIL (announced or not, when; with the staking claim
 *     up to then), STAKE, UNSTAKE;
 *   market -> provider: PAY (money), SLASH (stake taken).
 * Without a message, through the state a region's LPs share (sim_peer): the provider learns the
 * GPUs employed now when the market employs or releases them (mkt__prov_rented), and the market
 * computes a staking claim when the provider makes it (mkt__market_claim, at reviews and when the
 * books close).
 * Money: the market charges the client and books fees and treasury in its own accounts and sends
 * the provider's share in a PAY message; until it arrives the money sits in `transit`. So every
 * LP's bookings sum to zero, and the ledger series (summed over LPs) is zero at the end.
 */
#include "models/market/mkt_internal.h"

#include <gsl/gsl_randist.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

void mkt__send(sim_lp *lp, sim_id dst, double delay, const mkt_msg *m) { sim_send(lp, dst, delay, m, sizeof *m); }

void mkt__add_span(sim_lp *lp, const mkt_ctx *c, unsigned s, unsigned col, double t0, double t1, int64_t mult) {
  if (t1 <= t0 || mult == 0) return;
  double w = c->series[s].bin_width;
  while (t0 < t1) {
    double edge = (floor(t0 / w) + 1) * w;
    double e = edge < t1 ? edge : t1;
    mkt__series(lp, c, s, col, t0, (mkt__ms(e) - mkt__ms(t0)) * mult);
    t0 = e;
  }
}

void mkt__price_sample(sim_lp *lp, const mkt_ctx *c, unsigned gpu, double t, int64_t price) {
  mkt__series(lp, c, MKT_S_PRICE_SUM, gpu, t, price);
  mkt__series(lp, c, MKT_S_PRICE_N, gpu, t, 1);
}

/* ---- job slots and the bid queue ------------------------------------------------------------- */
static uint32_t job_alloc(mkt_market *m) {
  if (m->nfree) return m->freeslots[--m->nfree];
  if (m->njobs == m->capjobs) { /* the free-slot list holds at most as many as there are slots */
    uint32_t capf = m->capjobs;
    m->jobs = mkt__grow(m->jobs, &m->capjobs, m->njobs + 1, sizeof *m->jobs);
    for (uint32_t s = 0; s < m->njobs; s++) /* the records moved: so did their own run slots */
      if (m->jobs[s].runs && m->jobs[s].nruns <= 1) m->jobs[s].runs = &m->jobs[s].run0;
    m->freeslots = mkt__grow(m->freeslots, &capf, m->capjobs, sizeof *m->freeslots);
  }
  return m->njobs++;
}

void mkt__job_free(mkt_market *m, uint32_t s) {
  mkt__job_runs_free(&m->jobs[s]);
  m->jobs[s].state = J_FREE;
  m->freeslots[m->nfree++] = s;
}

static void q_compact(mkt_market *m) {
  uint32_t k = 0;
  for (uint32_t i = m->qhead; i < m->qlen; i++)
    if (m->q[i] != UINT32_MAX) {
      m->qe[k] = m->qe[i];
      m->q[k++] = m->q[i];
    }
  m->qhead = 0;
  m->qlen = k;
}

static void q_set(mkt_market *m, uint32_t i, uint32_t slot) {
  const mkt_job *j = &m->jobs[slot];
  m->q[i] = slot;
  m->qe[i] = (mkt_qent){j->bid, j->gpus, j->cls};
}

void mkt__q_del(mkt_market *m, uint32_t i) {
  if (m->q[i] == UINT32_MAX) return;
  m->q[i] = UINT32_MAX;
  m->nlive--;
  m->qdel++;
}

/* Holes gather where bids leave: at the front, behind a head bid that no host takes (one below
 * every ask waits out its patience). Trimming stops at that bid, and the compaction of
 * mkt__market_event waits for holes to be half the queue, so a scan of the first 1024 positions
 * (bid_host_free) found 1023 holes and the one bid that fits nowhere, while tens of thousands of
 * bids behind them fitted free hosts (docs/history/performance-log.md, "Holes at the head of the bid
 * queue"). Packing the front moves its live entries, in order, to the end of the span. */
static void q_pack_front(mkt_market *m) {
  uint32_t end = m->qlen - m->qhead > MKT__Q_PACK_SPAN ? m->qhead + MKT__Q_PACK_SPAN : m->qlen;
  uint32_t k = end;
  for (uint32_t i = end; i-- > m->qhead;)
    if (m->q[i] != UINT32_MAX) {
      if (--k != i) {
        m->q[k] = m->q[i];
        m->qe[k] = m->qe[i];
        m->q[i] = UINT32_MAX;
      }
    }
  m->qhead = k;
}

void mkt__q_trim(mkt_market *m) {
  while (m->qhead < m->qlen && m->q[m->qhead] == UINT32_MAX) m->qhead++;
  if (m->qdel >= MKT__Q_PACK_EVERY) {
    m->qdel = 0;
    q_pack_front(m);
  }
}

uint32_t mkt__q_push(mkt_market *m, uint32_t slot, int front) {
  m->nlive++;
  if (front && m->qhead > 0) {
    q_set(m, --m->qhead, slot);
    return m->qhead;
  }
  if (m->qlen == m->qcap) {
    if (m->qhead > m->qcap / 2) q_compact(m);
    if (m->qlen == m->qcap) {
      uint32_t nc = m->qcap ? 2 * m->qcap : 64;
      uint32_t *nq = realloc(m->q, nc * sizeof *nq);
      if (!nq) SIM_FATAL("out of memory");
      m->q = nq;
      mkt_qent *ne = realloc(m->qe, nc * sizeof *ne);
      if (!ne) SIM_FATAL("out of memory");
      m->qe = ne;
      m->qcap = nc;
    }
  }
  if (front) {
    memmove(m->q + m->qhead + 1, m->q + m->qhead, (m->qlen - m->qhead) * sizeof *m->q);
    memmove(m->qe + m->qhead + 1, m->qe + m->qhead, (m->qlen - m->qhead) * sizeof *m->qe);
    q_set(m, m->qhead, slot);
    m->qlen++;
    return m->qhead;
  }
  q_set(m, m->qlen++, slot);
  return m->qlen - 1;
}

/* ---- records --------------------------------------------------------------------------------- */
/* Whether job j missed its deadline: it has one, and did not complete by it (completed late,
 * failed or reneged: it never will), or it is still under way (end NaN) and the deadline is at or
 * before `now`, the end of the run. The jobs table's deadline_missed and the deadline_misses
 * metrics (MKT_J_MISSED) both count this. */
int mkt__deadline_missed(const mkt_job *j, double end, const char *outcome, double now) {
  if (!(j->deadline > 0)) return 0;
  if (isnan(end)) return j->deadline <= now;
  return strcmp(outcome, "done") != 0 || end > j->deadline;
}

void mkt__job_record(sim_lp *lp, const mkt_ctx *c, const mkt_market *m, const mkt_job *j, double end,
                     const char *outcome) {
  if (!c->cfg->record_jobs) return;
  mkt_job_rec r;
  memset(&r, 0, sizeof r);
  r.id = j->id;
  snprintf(r.cls, sizeof r.cls, "%s", mkt_class_names[j->cls]);
  snprintf(r.region, sizeof r.region, "%s", c->cfg->regions[m->region].name);
  snprintf(r.pool, sizeof r.pool, "%s", mkt_pool_names[m->pool]);
  snprintf(r.outcome, sizeof r.outcome, "%s", outcome);
  snprintf(r.policy, sizeof r.policy, "%s", sched_policy_name(c->ft[m->world][j->cls].policy));
  r.world = (int32_t)m->world;
  r.gpus = j->gpus;
  r.interruptions = j->interruptions;
  r.replacements = j->replacements;
  r.hosts = (int32_t)j->hosts;
  r.node = j->node ? (int32_t)j->node - 1 : -1;
  r.submit_s = j->submit;
  r.start_s = j->started ? j->first_start : NAN;
  r.end_s = end;
  r.wait_s = j->started ? j->first_start - j->submit : NAN;
  r.deadline_missed = mkt__deadline_missed(j, end, outcome, sim_now(lp));
  r.cost_musd = j->cost;
  r.cost_usd = (double)j->cost / MKT_MUSD;
  r.value_musd_h = j->value;
  r.bid_musd_h = m->pool == MKT_POOL_BIDDING ? j->bid : 0;
  r.value_usd_h = (double)j->value / MKT_MUSD;
  r.bid_usd_h = (double)r.bid_musd_h / MKT_MUSD;
  r.gpu_h = (double)j->gpu_ms / 3.6e6;
  r.paid_usd_h = j->gpu_ms > 0 ? r.cost_usd / r.gpu_h : NAN;
  r.work_gpu_h = j->work_total / 3600.0;
  r.standby_gpu_h = (double)j->standby_ms / 3.6e6;
  r.checkpoint_gpu_h = (double)j->ckpt_ms / 3.6e6;
  r.lost_gpu_h = (double)j->lost_ms / 3.6e6;
  r.comm_gpu_h = mkt__ms(j->comm_gpu_s) / 3.6e6; /* the ms the jobs series has of it */
  sim_table_put(lp, MKT_T_JOBS, &r);
}

/* ---- bids as the clearing rules see them ---------------------------------------------------- */
mkt_lot mkt__lot_of(const mkt_ctx *c, unsigned region, uint32_t prov, uint32_t free_gpus) {
  const mkt_pstat *ps = &c->prov[prov];
  const mkt_gpu *g = &c->gpus[ps->gpu];
  /* ASSUMPTION: the host's power ceiling is the card's maximum power limit (data/gpus.csv); no
   * scenario key lowers it yet. */
  return (mkt_lot){free_gpus,
                   g->mem_gb,
                   g->pl_min_w,
                   g->pl_max_w,
                   c->energy_musd_wh[region] * ps->energy_permille / 1000.0,
                   c->cfg->personas[ps->persona].min_margin,
                   c->min_bid};
}

mkt_order mkt__class_order(const mkt_ctx *c, unsigned k, int64_t price, uint32_t gpus, int32_t home) {
  const mkt_class_cfg *cc = &c->cfg->cls[k];
  return (mkt_order){price, gpus, (uint32_t)llround(cc->power_w), cc->mem_min_gb, home};
}

mkt_order mkt__order_of(const mkt_ctx *c, const mkt_job *j, int32_t home) {
  return mkt__class_order(c, j->cls, j->bid, j->gpus, home);
}

/* ---- arrivals -------------------------------------------------------------------------------- */
/* Arrival rate multiplier of class k at time t in region r: daily cosine peaking at peak_h local
 * time, times the weekend factor. The week starts Monday 00:00 UTC at t = 0. */
static double demand_shape(const mkt_ctx *c, unsigned r, unsigned k, double t) {
  const mkt_region_cfg *rg = &c->cfg->regions[r];
  double loc = t + rg->tz_h * 3600.0;
  double h = fmod(loc / 3600.0, 24.0);
  long day = (long)floor(loc / 86400.0);
  int dow = (int)(((day % 7) + 7) % 7);
  double f = 1.0 + c->cfg->cls[k].diurnal_amp * cos(2 * M_PI * (h - rg->peak_h) / 24.0);
  return dow >= 5 ? f * rg->weekend_factor : f;
}

/* Synthetic arrival rate per second of class k into market m, before the shape. With a front door
 * (mkt__front), the region's fixed-pool market draws every client of the region (times the demand
 * multiplier) and the other markets none; otherwise each market draws its pool_share of them. */
static double class_rate(const mkt_ctx *c, const mkt_market *m, unsigned k) {
  const mkt_class_cfg *cc = &c->cfg->cls[k];
  double tot = c->share_tot;
  if (tot <= 0) return 0;
  double base = c->cfg->regions[m->region].jobs_per_h / 3600.0 * cc->share / tot;
  if (mkt__front(c)) return m->pool == MKT_POOL_FIXED ? base * m->demand_f[k] : 0;
  double ps = c->pool_share_tot[k];
  if (ps <= 0) return 0;
  return base * cc->pool_share[m->pool] / ps;
}

static double max_rate(const mkt_ctx *c, const mkt_market *m) {
  double wf = c->cfg->regions[m->region].weekend_factor > 1 ? c->cfg->regions[m->region].weekend_factor : 1;
  double s = 0;
  for (unsigned k = 0; k < MKT_NCLASSES; k++) s += class_rate(c, m, k) * (1 + c->cfg->cls[k].diurnal_amp) * wf;
  return s;
}

/* The next arrival, at the rates of now (exponential, so redrawing it when the rates change at a
 * tick is exact: an arrival of an older generation is dropped). */
static void schedule_arrival(sim_lp *lp, const mkt_ctx *c, mkt_market *m) {
  double lam = max_rate(c, m);
  if (lam <= 0) return;
  mkt_msg msg = {.kind = M_ARRIVE, .gen = m->arr_gen};
  mkt__send(lp, sim_lp_id(lp), gsl_ran_exponential(sim_lp_rng(lp), 1.0 / lam), &msg);
}

/* Gamma-distributed run time with mean and coefficient of variation (cv = 1: exponential). */
static double draw_duration_s(gsl_rng *r, const mkt_class_cfg *cc) {
  double mean = cc->dur_mean_h * 3600.0;
  if (cc->dur_cv <= 0) return mean;
  double k = 1.0 / (cc->dur_cv * cc->dur_cv);
  return gsl_ran_gamma(r, k, mean / k);
}

static int64_t draw_value(gsl_rng *r, const mkt_class_cfg *cc) {
  return (int64_t)llround(cc->value_usd_h * MKT_MUSD * exp(cc->value_sigma * gsl_ran_gaussian(r, 1.0)));
}

/* A new job of class k: dur_s of run time on `gpus` reference GPUs (speed 1), so its work is
 * dur_s x gpus reference GPU-seconds. */
static void new_job(sim_lp *lp, const mkt_ctx *c, mkt_market *m, unsigned k, double dur_s, unsigned gpus, int trace,
                    int64_t value) {
  gsl_rng *r = sim_lp_rng(lp);
  const mkt_class_cfg *cc = &c->cfg->cls[k];
  uint32_t s = job_alloc(m);
  mkt_job *j = &m->jobs[s];
  memset(j, 0, sizeof *j);
  j->cj = MKT__NOCORE;
  j->id = ((uint64_t)(mkt__local(c, lp)) << 40) | m->nextid++;
  j->submit = sim_now(lp);
  double w = dur_s > 1e-3 ? dur_s : 1e-3;
  j->work = j->work_total = w * gpus;
  /* valuation per GPU-hour: log-normal around the class median (drawn by the front door when the
   * client chose its pool there) */
  j->value = value >= 0 ? value : draw_value(r, cc);
  j->bid = j->value; /* truthful, unless its class mixes strategies (bidding pool, below) */
  j->gpus = (uint16_t)gpus;
  j->cls = (uint8_t)k;
  if (m->pool == MKT_POOL_BIDDING) {
    mkt__bid_strategy(lp, c, m, j);
    mkt__series(lp, c, MKT_S_RSTRAT, j->strat * MKT_RS_N + MKT_RS_JOBS, 0, 1);
  }
  j->price = j->bid;
  mkt__rpool(lp, c, m->pool, MKT_RP_SUBMITTED, 1);
  j->from_trace = (uint8_t)trace;
  j->nruns = mkt__job_runs(c, m->world, k);
  j->runs = j->nruns <= 1 ? &j->run0 : calloc(j->nruns, sizeof *j->runs);
  if (!j->runs) SIM_FATAL("out of memory");
  j->deadline = cc->deadline_slack > 0 ? j->submit + cc->deadline_slack * w : 0;
  mkt__series(lp, c, MKT_S_JOBS, k * MKT_NJCOLS + MKT_J_SUBMITTED, 0, 1);
  /* censored sums (mkt_model.h): the job counts to the run's end until it starts or completes */
  int64_t horizon = mkt__ms(c->end) - mkt__ms(j->submit);
  mkt__series(lp, c, MKT_S_JOBS, k * MKT_NJCOLS + MKT_J_UNSTARTED_WAIT_MS, 0, horizon);
  mkt__series(lp, c, MKT_S_JOBS, k * MKT_NJCOLS + MKT_J_RCOMPLETION_MS, 0, horizon);
  m->ops->submit(lp, c, m, s);
}

/* The front door: a client of class k (value, GPUs, run time drawn) chooses its pool, or balks. */
static void front_door(sim_lp *lp, const mkt_ctx *c, mkt_market *m, unsigned k, unsigned g, double dur) {
  gsl_rng *r = sim_lp_rng(lp);
  const mkt_class_cfg *cc = &c->cfg->cls[k];
  int64_t value = draw_value(r, cc);
  double ps = c->pool_share_tot[k];
  mkt_option o[MKT_NPOOLS];
  double prob[MKT_NPOOLS];
  for (unsigned p = 0; p < MKT_NPOOLS; p++) {
    const double *x = p == m->pool ? m->obs[k] : m->seen[p][k];
    o[p] = (mkt_option){ps > 0 ? cc->pool_share[p] / ps : 0, x[MKT_OBS_PRICE], x[MKT_OBS_WAIT], x[MKT_OBS_INTR]};
  }
  int pick;
  if (c->cfg->responses.pool_choice) {
    mkt_choice_w w = {cc->choice_cost, cc->choice_wait, cc->choice_risk};
    double run_s = dur > 1e-3 ? dur : 1e-3;
    if (!mkt_choice_probs(o, MKT_NPOOLS, &w, (double)value, run_s, prob)) {
      mkt__series(lp, c, MKT_S_JOBS, k * MKT_NJCOLS + MKT_J_BALKED, 0, 1);
      return;
    }
  } else {
    for (unsigned p = 0; p < MKT_NPOOLS; p++) prob[p] = o[p].share;
  }
  pick = mkt_choice_pick(prob, MKT_NPOOLS, gsl_rng_uniform(r));
  if (pick < 0) return;
  if ((unsigned)pick == m->pool) {
    new_job(lp, c, m, k, dur, g, 0, value);
    return;
  }
  mkt_msg msg = {.kind = M_JOB, .cls = (uint8_t)k, .slot = g, .a = value, .b = mkt__d2i(dur)};
  mkt__send(lp, mkt__market_id(c, m->world, m->region, (unsigned)pick), c->cfg->latency_s, &msg);
}

static void on_arrive(sim_lp *lp, const mkt_ctx *c, mkt_market *m, const mkt_msg *msg) {
  if (msg->gen != m->arr_gen) return; /* redrawn at a tick */
  gsl_rng *r = sim_lp_rng(lp);
  double t = sim_now(lp), lam = max_rate(c, m);
  double wf = c->cfg->regions[m->region].weekend_factor > 1 ? c->cfg->regions[m->region].weekend_factor : 1;
  /* Thinning (Lewis & Shedler 1979): pick the class by its maximal rate, accept with
   * rate(t) / max rate. */
  double u = gsl_rng_uniform(r) * lam, acc = 0;
  unsigned k = 0;
  for (; k < MKT_NCLASSES; k++) {
    acc += class_rate(c, m, k) * (1 + c->cfg->cls[k].diurnal_amp) * wf;
    if (u < acc) break;
  }
  if (k == MKT_NCLASSES) k = MKT_NCLASSES - 1;
  double accept = demand_shape(c, m->region, k, t) / ((1 + c->cfg->cls[k].diurnal_amp) * wf);
  if (gsl_rng_uniform(r) < accept) {
    const mkt_class_cfg *cc = &c->cfg->cls[k];
    unsigned g =
        (unsigned)(cc->gpus_min + (int64_t)gsl_rng_uniform_int(r, (unsigned long)(cc->gpus_max - cc->gpus_min + 1)));
    double dur = draw_duration_s(r, cc);
    if (mkt__front(c))
      front_door(lp, c, m, k, g, dur);
    else
      new_job(lp, c, m, k, dur, g, 0, -1);
  }
  schedule_arrival(lp, c, m);
}

/* ---- what clients and providers see (market.responses) -------------------------------------- */
/* Before any client of the class has started here: the pool's list price for the reference GPU
 * (the bidding pool: its minimum bid, or half the fixed pool's price when it has none, an
 * ASSUMPTION), no wait, no interruptions. */
static double prior_price(const mkt_ctx *c, unsigned pool) {
  int ref = c->ref_gpu;
  return pool == MKT_POOL_FIXED  ? (double)c->posted[ref]
         : pool == MKT_POOL_FLEX ? (double)c->flex_price[ref]
         : c->min_bid > 0        ? (double)c->min_bid
                                 : 0.5 * (double)c->posted[ref];
}
static void obs_prior(const mkt_ctx *c, mkt_market *m) {
  double price = prior_price(c, m->pool);
  for (unsigned k = 0; k < MKT_NCLASSES; k++) {
    m->obs[k][MKT_OBS_PRICE] = price;
    m->obs[k][MKT_OBS_WAIT] = 0;
    m->obs[k][MKT_OBS_INTR] = 0;
    m->demand_f[k] = 1;
  }
  for (unsigned p = 0; p < MKT_NPOOLS; p++) /* the front door's view of the other pools, until they report */
    for (unsigned k = 0; k < MKT_NCLASSES; k++) {
      m->seen[p][k][MKT_OBS_PRICE] = prior_price(c, p);
      m->seen[p][k][MKT_OBS_WAIT] = 0;
      m->seen[p][k][MKT_OBS_INTR] = 0;
    }
  m->util = 0.5; /* ASSUMPTION: an unknown pool is believed half rented until its first tick */
  m->price_h = price;
}

/* At every tick: the other pools report to the front door; the front door updates the demand
 * multipliers from the prices its clients see (pool shares as weights) and redraws its next
 * arrival when they changed. */
static void responses_tick(sim_lp *lp, const mkt_ctx *c, mkt_market *m, int64_t want) {
  if (mkt__quotes(c)) {
    /* the utilization a provider can expect here: GPUs demanded (queued and running jobs) per GPU
     * available, at most 1 (a pool nobody serves yet is full when anyone wants it) */
    uint64_t av = 0;
    for (uint32_t i = 0; i < m->navail; i++) av += c->prov[m->avail[i]].ngpus;
    double u = av ? (double)want / (double)av : want > 0 ? 1.0 : 0.0;
    m->util = mkt_ewma(m->util, u < 1 ? u : 1.0, c->cfg->responses.memory_jobs);
  }
  if (!mkt__front(c)) return;
  if (m->pool != MKT_POOL_FIXED) {
    for (unsigned k = 0; k < MKT_NCLASSES; k++) {
      mkt_msg b = {.kind = M_BULLETIN,
                   .cls = (uint8_t)k,
                   .flag = (uint8_t)m->pool,
                   .a = mkt_lround(m->obs[k][MKT_OBS_PRICE]),
                   .b = mkt_lround(m->obs[k][MKT_OBS_WAIT] * 1000.0),
                   .gen = (uint32_t)mkt_lround(m->obs[k][MKT_OBS_INTR] * 1000.0)};
      mkt__send(lp, mkt__market_id(c, m->world, m->region, MKT_POOL_FIXED), c->cfg->latency_s, &b);
    }
    return;
  }
  if (!c->cfg->responses.demand) return;
  int changed = 0;
  for (unsigned k = 0; k < MKT_NCLASSES; k++) {
    const mkt_class_cfg *cc = &c->cfg->cls[k];
    double ps = c->pool_share_tot[k], p = 0;
    for (unsigned q = 0; q < MKT_NPOOLS && ps > 0; q++)
      p += cc->pool_share[q] / ps * (q == m->pool ? m->obs[k][MKT_OBS_PRICE] : m->seen[q][k][MKT_OBS_PRICE]);
    mkt__series(lp, c, MKT_S_JOBS, k * MKT_NJCOLS + MKT_J_SEEN_SUM, 0, mkt_lround(p));
    mkt__series(lp, c, MKT_S_JOBS, k * MKT_NJCOLS + MKT_J_SEEN_N, 0, 1);
    double f = mkt_demand_factor(p / MKT_MUSD, cc->price_ref_usd_h, cc->elasticity);
    changed |= f != m->demand_f[k];
    m->demand_f[k] = f;
  }
  if (changed) {
    m->arr_gen++;
    schedule_arrival(lp, c, m);
  }
}

/* Trace job i belongs to market (i mod regions, pool drawn from its class's pool shares by a hash
 * of i): a pure function of i, so the split is the same on any number of ranks. */
static int trace_owner(const mkt_ctx *c, size_t i, unsigned *region, unsigned *pool) {
  const mkt_trace_job *tj = &c->trace[i];
  const mkt_class_cfg *cc = &c->cfg->cls[tj->cls];
  *region = (unsigned)(i % c->nreg);
  uint64_t h = (uint64_t)i * 0x9E3779B97F4A7C15ull;
  h ^= h >> 31;
  double u = (double)(h >> 11) / 9007199254740992.0, ps = c->pool_share_tot[tj->cls], acc = 0;
  if (ps <= 0) return 0;
  for (unsigned p = 0; p < MKT_NPOOLS; p++) {
    acc += cc->pool_share[p] / ps;
    if (u < acc) {
      *pool = p;
      return 1;
    }
  }
  *pool = MKT_NPOOLS - 1;
  return 1;
}

static void trace_schedule(sim_lp *lp, const mkt_ctx *c, mkt_market *m) {
  for (; m->trace_next < c->ntrace; m->trace_next++) {
    unsigned r, p;
    if (!trace_owner(c, m->trace_next, &r, &p) || r != m->region || p != m->pool) continue;
    double t = c->trace[m->trace_next].submit_s / c->cfg->trace_speedup;
    if (t >= c->end) {
      m->trace_next = c->ntrace;
      return;
    }
    mkt_msg msg = {.kind = M_TRACE};
    double d = t - sim_now(lp);
    mkt__send(lp, sim_lp_id(lp), d > 0 ? d : 0, &msg);
    return;
  }
}

static void on_trace(sim_lp *lp, const mkt_ctx *c, mkt_market *m) {
  const mkt_trace_job *tj = &c->trace[m->trace_next];
  unsigned g = tj->gpus; /* <= MKT_TRACE_MAX_GPUS (wider rows were refused when the trace was read) */
  new_job(lp, c, m, tj->cls, tj->dur_s / c->cfg->trace_speedup, g ? g : 1, 1, -1);
  m->trace_next++;
  trace_schedule(lp, c, m);
}

/* ---- the flexible treasury ------------------------------------------------------------------- */
/* Owed to a staker for [t0, t1): sum over billing intervals of rate * overlap * score / 100. */
static int64_t flex_owed(const mkt_ctx *c, const mkt_market *m, int64_t t0_ms, int64_t t1_ms, uint32_t score_milli) {
  int64_t owed = 0, bill_ms = mkt__ms(c->cfg->billing_s);
  for (int64_t t = t0_ms; t < t1_ms;) {
    int64_t i = t / bill_ms, edge = (i + 1) * bill_ms, e = edge < t1_ms ? edge : t1_ms;
    int64_t rate = m->rate_hist[i < (int64_t)c->nbill ? i : (int64_t)c->nbill - 1];
    /* rate is per score-100 GPU-hour: rate * score/100 per hour */
    owed += mkt_cost((int64_t)((__int128)rate * score_milli / 100000), e - t);
    t = e;
  }
  return owed;
}

/* ---- the billing tick ------------------------------------------------------------------------ */
static void on_tick(sim_lp *lp, const mkt_ctx *c, mkt_market *m) {
  double now = sim_now(lp);
  int64_t bill_ms = mkt__ms(c->cfg->billing_s);
  /* demand: GPUs wanted by queued and running jobs over the next interval; a job never started
   * within its class's patience leaves */
  int64_t want = 0;
  uint32_t abandoned = 0;
  for (uint32_t s = 0; s < m->njobs; s++) {
    mkt_job *j = &m->jobs[s];
    if (j->state == J_FREE || j->state == J_LEAVING) continue;
    double pat = c->cfg->cls[j->cls].patience_h * 3600.0;
    if (!j->started && pat > 0 && now - j->submit >= pat && (j->state == J_QUEUED || j->state == J_CORE)) {
      mkt__series(lp, c, MKT_S_JOBS, j->cls * MKT_NJCOLS + MKT_J_ABANDONED, 0, 1);
      mkt__series(lp, c, MKT_S_JOBS, j->cls * MKT_NJCOLS + MKT_J_UNSTARTED_WAIT_MS, 0, mkt__ms(now) - mkt__ms(c->end));
      if (j->deadline > 0) mkt__series(lp, c, MKT_S_JOBS, j->cls * MKT_NJCOLS + MKT_J_MISSED, 0, 1);
      mkt__observe(c, m, j->cls, MKT_OBS_WAIT, now - j->submit); /* it waited this long, and more */
      mkt__job_record(lp, c, m, j, now, "abandoned");
      if (j->state == J_CORE) {
        j->state = J_LEAVING; /* the core hands it back; the pool then lets it go */
        mkt__withdraw(lp, c, m, s);
      } else {
        j->state = J_LEAVING;
        abandoned++;
      }
      continue;
    }
    want += j->gpus;
  }
  if (abandoned) { /* one pass over the queue, then free the slots */
    for (uint32_t q = m->qhead; q < m->qlen; q++)
      if (m->q[q] != UINT32_MAX && m->jobs[m->q[q]].state == J_LEAVING) mkt__q_del(m, q);
    /* (jobs the core held were freed when it handed them back, inside mkt__withdraw) */
    for (uint32_t s = 0; s < m->njobs; s++)
      if (m->jobs[s].state == J_LEAVING) mkt__job_free(m, s);
  }
  mkt__q_trim(m);
  mkt__add_span(lp, c, MKT_S_DEMAND, m->region, now,
                now + c->cfg->billing_s < c->end ? now + c->cfg->billing_s : c->end, want);
  /* progress reports: the core judges slow runs (speculation) from them; the classes whose policy
   * backs slow runs up are asked once per tick, not once per job */
  int backs_up[MKT_NCLASSES], any = 0;
  for (int k = 0; k < MKT_NCLASSES; k++) any |= backs_up[k] = sched_ft_backs_up_slow(&c->ft[m->world][k]);
  for (uint32_t s = 0; any && s < m->njobs; s++) {
    mkt_job *j = &m->jobs[s];
    if (j->state != J_RUNNING || !backs_up[j->cls]) continue;
    for (int k = 0; k < j->nruns; k++) {
      mkt_run *r = &j->runs[k];
      if (!r->active || r->doomed) continue;
      double from = r->last_t > r->pause_until ? r->last_t : r->pause_until;
      double w = r->work + (now > from ? r->rate * (now - from) : 0);
      sched_event e = {.type = SCHED_EV_JOB_PROGRESS, .job = j->cj, .run = r->id, .value = w};
      mkt__feed(lp, c, m, &e);
      if (j->state != J_RUNNING) break;
    }
  }
  m->ops->tick(lp, c, m);
  responses_tick(lp, c, m, want);
  if (m->ops->treasury) {
    size_t i = (size_t)(mkt__ms(now) / bill_ms);
    if (i < c->nbill) {
      m->rate = mkt_treasury_next_rate(&c->trule, m->rate, m->treasury, (uint64_t)(m->staked_score_milli / 100000));
      m->rate_hist[i] = m->rate;
      mkt__series(lp, c, MKT_S_FLEX, MKT_F_BALANCE, now, m->treasury);
      mkt__series(lp, c, MKT_S_FLEX, MKT_F_RATE, now, m->rate);
    }
  }
  mkt_msg msg = {.kind = M_TICK};
  mkt__send(lp, sim_lp_id(lp), c->cfg->billing_s, &msg);
}

/* ---- the LP ---------------------------------------------------------------------------------- */
void mkt__market_init(sim_lp *lp, void *st) {
  const mkt_ctx *c = mkt__ctx(lp);
  mkt_market *m = st;
  uint64_t local = mkt__local(c, lp);
  m->world = mkt__world(c, lp);
  m->region = (unsigned)(local / MKT_NPOOLS);
  m->pool = (unsigned)(local % MKT_NPOOLS);
  m->ops = mkt__pools[m->pool];
  m->last_clear = -1;
  obs_prior(c, m);
  mkt__place_init(lp, c, m);
  if (m->ops->treasury) {
    m->rate_hist = calloc(c->nbill ? c->nbill : 1, sizeof *m->rate_hist);
    if (!m->rate_hist) SIM_FATAL("out of memory");
    m->rate = c->rate0;
    /* the platform seeds the treasury (a transfer, so the ledger stays balanced) */
    int64_t seed = (int64_t)llround(c->cfg->flexible.seed_usd * MKT_MUSD);
    m->treasury = seed;
    mkt__book(lp, c, MKT_A_PLATFORM, -seed);
    mkt__book(lp, c, MKT_A_TREASURY, seed);
    mkt__series(lp, c, MKT_S_MONEY, MKT_M_SEED, 0, seed);
  }
  schedule_arrival(lp, c, m);
  trace_schedule(lp, c, m);
  mkt_msg t = {.kind = M_TICK};
  mkt__send(lp, sim_lp_id(lp), 0, &t);
  if (c->close_t > 0) {
    mkt_msg cl = {.kind = M_MCLOSE};
    mkt__send(lp, sim_lp_id(lp), c->close_t, &cl);
  }
}

/* The provider an event from src is about, as an index in this market's region (-1: none). */
static int64_t hint_prov(const mkt_ctx *c, const mkt_market *m, sim_id src) {
  uint64_t prov = mkt__prov_of(c, m->region, src);
  if (prov < c->reg_first[m->region] || prov >= c->reg_first[m->region + 1]) return -1;
  return (int64_t)(prov - c->reg_first[m->region]);
}

/* Two events ahead (sim_lptype.prefetch_early): the records whose fields the hint below reads. */
void mkt__market_prefetch_early(const sim_lp *lp, const void *st, const void *vmsg, sim_id src) {
  const mkt_ctx *c = sim_lp_ctx(lp);
  const mkt_market *m = st;
  const mkt_msg *msg = vmsg;
  if (!msg) return;
  if (msg->kind == M_FINISH || msg->kind == M_CKPT) {
    if (msg->slot < m->njobs) __builtin_prefetch(&m->jobs[msg->slot].run0); /* its run's members */
  } else if (msg->kind <= M_DEPART) {
    int64_t i = hint_prov(c, m, src);
    if (i >= 0) __builtin_prefetch(&m->hix[i]);
  }
}

/* The engine's hint for the next event of a market: the job records (the market's and the core's)
 * a job timer will read, and its members' GPU records; the host record a provider's message will
 * (its index fetched by the early hint). */
void mkt__market_prefetch(const sim_lp *lp, const void *st, const void *vmsg, sim_id src) {
  const mkt_ctx *c = sim_lp_ctx(lp);
  const mkt_market *m = st;
  const mkt_msg *msg = vmsg;
  __builtin_prefetch(m);
  if (!msg) return;
  if (msg->kind == M_FINISH || msg->kind == M_CKPT) {
    if (msg->slot < m->njobs) {
      const mkt_job *j = &m->jobs[msg->slot];
      const char *p = (const char *)j; /* its head and its run slot */
      __builtin_prefetch(p);
      __builtin_prefetch(p + offsetof(mkt_job, run0));
      __builtin_prefetch(p + offsetof(mkt_job, run0) + 64);
      if (m->core && j->cj != MKT__NOCORE) sched_prefetch_job(m->core, j->cj); /* cj: the early hint's line */
      if (j->runs == &j->run0 &&
          j->run0.n <= MKT__RUN_INL) /* its members' GPU records (the early hint fetched the run) */
        for (unsigned k = 0; k < j->run0.n; k++)
          if (j->run0.gpus[k] < m->ncg) {
            __builtin_prefetch(&m->cg[j->run0.gpus[k]]);
            if (m->core) sched_prefetch_gpu(m->core, j->run0.gpus[k]);
          }
    }
  } else if (msg->kind == M_WAKE) {
    if (m->core) sched_prefetch_due(m->core);
  } else if (msg->kind <= M_DEPART) {
    int64_t i = hint_prov(c, m, src);
    if (i >= 0) {
      int32_t h = m->hix[i]; /* fetched by the early hint */
      if (h >= 0 && (uint32_t)h < m->nhost) {
        __builtin_prefetch(&m->host[h]); /* a record on one line (mkt_market.host) */
      }
    }
  }
}

/* Provider prov stakes `amount` (musd) on joining this pool (M_STAKE, or riding on its AVAIL). */
static void stake(sim_lp *lp, const mkt_ctx *c, mkt_market *m, uint32_t prov, int64_t amount) {
  mkt__book(lp, c, MKT_A_TRANSIT, -amount);
  mkt__book(lp, c, MKT_A_STAKES, amount);
  m->stakes += amount;
  m->staked_score_milli += c->prov[prov].score_milli;
  mkt__stake(m, mkt__host(c, m, prov))->stake += amount;
}

/* A flexible-pool provider claims its staking income for the available span [from_ms, to_ms). */
static void claim(sim_lp *lp, const mkt_ctx *c, mkt_market *m, uint32_t prov, sim_id src, int64_t from_ms,
                  int64_t to_ms) {
  int64_t owed = flex_owed(c, m, from_ms, to_ms, c->prov[prov].score_milli);
  int64_t sf = 0;
  int64_t paid = mkt_treasury_pay(&m->treasury, owed, &sf);
  m->shortfall += sf;
  if (sf) mkt__series(lp, c, MKT_S_FLEX, MKT_F_SHORTFALL, sim_now(lp), sf);
  if (paid) {
    mkt__book(lp, c, MKT_A_TREASURY, -paid);
    mkt__book(lp, c, MKT_A_TRANSIT, paid);
    mkt__series(lp, c, MKT_S_MONEY, MKT_M_STAKING_PAID, 0, paid);
    mkt_msg pay = {.kind = M_PAY, .reason = PAY_STAKING, .a = paid};
    mkt__send(lp, src, c->cfg->latency_s, &pay);
  }
}

void mkt__market_claim(sim_lp *mlp, uint32_t prov, sim_id src, int64_t from_ms, int64_t to_ms) {
  claim(mlp, mkt__ctx(mlp), sim_lp_state(mlp), prov, src, from_ms, to_ms);
}

void mkt__market_event(sim_lp *lp, void *st, const void *vmsg, sim_id src) {
  const mkt_ctx *c = mkt__ctx(lp);
  mkt_market *m = st;
  const mkt_msg *msg = vmsg;
  uint32_t prov = (uint32_t)mkt__prov_of(c, m->region, src);
  /* keep removed entries (holes) at most about half the queue, so bounded scans see live bids;
   * done here, where no handler holds a queue position */
  if (m->qlen - m->qhead > 2 * m->nlive + 64) q_compact(m);
  switch (msg->kind) {
  case M_TICK: on_tick(lp, c, m); break;
  case M_ARRIVE: on_arrive(lp, c, m, msg); break;
  case M_JOB: new_job(lp, c, m, msg->cls, mkt__i2d(msg->b), msg->slot, 0, msg->a); break;
  case M_BULLETIN:
    if (msg->flag < MKT_NPOOLS && msg->cls < MKT_NCLASSES) {
      double *x = m->seen[msg->flag][msg->cls];
      x[MKT_OBS_PRICE] = (double)msg->a;
      x[MKT_OBS_WAIT] = (double)msg->b / 1000.0;
      x[MKT_OBS_INTR] = msg->gen / 1000.0;
    }
    break;
  case M_QUOTE: {
    mkt_msg q = {.kind = M_QUOTED,
                 .flag = (uint8_t)m->pool,
                 .gen = msg->gen,
                 .a = m->ops->quote(c, m, &c->prov[prov]),
                 .b = mkt_lround(m->util * 1e6)};
    mkt__send(lp, src, c->cfg->latency_s, &q);
    break;
  }
  case M_TRACE: on_trace(lp, c, m); break;
  case M_FINISH: mkt__on_finish(lp, c, m, msg); break;
  case M_CKPT: mkt__on_ckpt(lp, c, m, msg); break;
  case M_WAKE: mkt__on_wake(lp, c, m, msg); break;
  case M_DETECT: mkt__host_detect(lp, c, m, msg->slot, msg->gen); break;
  case M_MCLOSE: /* close the books before the end; then the staking providers claim up to now */
    mkt__ckpt_all(lp, c, m);
    mkt__bill_all(lp, c, m);
    if (m->ops->treasury)
      for (uint64_t i = c->reg_first[m->region]; i < c->reg_first[m->region + 1]; i++)
        mkt__prov_close(sim_peer(lp, mkt__prov_id(c, m->world, m->region, i)), m->pool);
    break;
  case M_AVAIL:
    if (msg->flag) stake(lp, c, m, prov, msg->a); /* the stake rode along: it came first */
    mkt__host_join(lp, c, m, prov, (uint32_t)msg->b);
    break;
  case M_UNAVAIL:
    mkt__host_leave(lp, c, m, prov, msg->reason, (double)msg->a / 1000.0);
    if (msg->flag) claim(lp, c, m, prov, src, mkt__unavail_claim_from(msg), msg->a); /* its claim rides along */
    break;
  case M_DEPART: mkt__host_depart(lp, c, m, prov); break;
  case M_STAKE: stake(lp, c, m, prov, msg->a); break;
  case M_UNSTAKE: {
    /* the provider asks for what it staked; it gets what is left after slashing */
    const mkt_host *h = mkt__host(c, m, prov);
    int64_t held = mkt__stake_of(m, h).stake, back = msg->a < held ? msg->a : held;
    if (back < 0) back = 0;
    if (back) mkt__stake(m, h)->stake -= back;
    mkt__book(lp, c, MKT_A_STAKES, -back);
    mkt__book(lp, c, MKT_A_TRANSIT, back);
    m->stakes -= back;
    m->staked_score_milli -= c->prov[prov].score_milli;
    mkt_msg pay = {.kind = M_PAY, .reason = PAY_REFUND, .a = back};
    mkt__send(lp, src, c->cfg->latency_s, &pay);
    break;
  }
  default: SIM_FATAL("market: unexpected message kind %d", msg->kind);
  }
}

void mkt__market_finalize(sim_lp *lp, void *st) {
  const mkt_ctx *c = mkt__ctx(lp);
  mkt_market *m = st;
  for (uint32_t s = 0; s < m->njobs; s++) {
    const mkt_job *j = &m->jobs[s];
    if (j->state != J_FREE && j->state != J_LEAVING) {
      const char *outcome = j->state == J_RUNNING ? "running" : "queued";
      /* censored: still under way; a deadline already passed is missed (as in the jobs table) */
      mkt__series(lp, c, MKT_S_JOBS, j->cls * MKT_NJCOLS + (j->started ? MKT_J_RUNNING_END : MKT_J_QUEUED_END), 0, 1);
      if (mkt__deadline_missed(j, NAN, outcome, sim_now(lp)))
        mkt__series(lp, c, MKT_S_JOBS, j->cls * MKT_NJCOLS + MKT_J_MISSED, 0, 1);
      mkt__job_record(lp, c, m, j, NAN, outcome);
    }
    mkt__job_runs_free(&m->jobs[s]);
  }
  if (c->cfg->record_providers) {
    double now = sim_now(lp);
    int wp = c->world_policy[m->world];
    uint64_t np = c->reg_first[m->region + 1] - c->reg_first[m->region];
    for (uint64_t i = 0; i < np; i++) {
      if (m->hix[i] < 0) continue;
      const mkt_host *h = &m->host[m->hix[i]];
      if (h->cid == -1) continue; /* staked, never joined */
      mkt_host_rec r;
      memset(&r, 0, sizeof r);
      r.provider = c->reg_first[m->region] + i;
      snprintf(r.pool, sizeof r.pool, "%s", mkt_pool_names[m->pool]);
      snprintf(r.policy, sizeof r.policy, "%s", wp < 0 ? "by_class" : sched_policy_name((sched_policy)wp));
      r.world = (int32_t)m->world;
      r.node = c->cfg->nodes.count > 0 ? c->prov[r.provider].node : -1;
      r.failures = (int32_t)h->failures;
      r.reputation = sched_provider_reputation(m->core, (uint32_t)m->hix[i], now, NULL);
      mkt_stake st = mkt__stake_of(m, h);
      r.stake_musd = st.stake;
      r.slashed_musd = st.slashed;
      r.stake_usd = (double)st.stake / MKT_MUSD;
      r.slashed_usd = (double)st.slashed / MKT_MUSD;
      sim_table_put(lp, MKT_T_HOSTS, &r);
    }
  }
#ifndef NDEBUG
  mkt__free_hosts_check(c, m);
#endif
  mkt__place_fini(m);
  free(m->jobs);
  free(m->freeslots);
  free(m->q);
  free(m->qe);
  free(m->rate_hist);
  memset(m, 0, sizeof *m);
}
