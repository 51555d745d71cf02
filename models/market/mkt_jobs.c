/* mkt_jobs.c - what the market LP's files share below the market and its pools: the job slots and
 * the bid queue of a market (mkt_market.jobs, .q), a job's record in the jobs table, the orders and
 * lots the clearing rules read, and the small helpers (sending a message, adding a span of time to
 * a series, growing a table). It calls no other file of the market model (scripts/market_deps.py,
 * the market_no_cycle test): the market LP (mkt_market.c), the pools (pool_*.c) and the placement
 * on the core (mkt_place.c) build on it. */
#include "models/market/mkt_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define NIL UINT32_MAX

/* The job classes, in the order of their configuration (mkt_model.h); a job's record names its own. */
const char *const mkt_class_names[] = {"training", "inference", "batch", NULL};

/* The capacity a table of cap entries grows to for need: by an eighth, as the host and GPU tables
 * grow one host at a time. */
uint32_t mkt__grown(uint32_t cap, uint32_t need) {
  uint32_t nc = cap ? cap : 16;
  while (nc < need) nc += nc / 8 + 1;
  return nc;
}

void *mkt__grow(void *p, uint32_t *cap, uint32_t need, size_t elem) {
  if (need <= *cap) return p;
  uint32_t nc = mkt__grown(*cap, need);
  void *q = sim_bigmem_realloc(p, (size_t)nc * elem);
  if (!q) SIM_FATAL("out of memory");
  *cap = nc;
  return q;
}

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
uint32_t mkt__job_alloc(mkt_market *m) {
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

void mkt__q_compact(mkt_market *m) {
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
    if (m->qhead > m->qcap / 2) mkt__q_compact(m);
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
  snprintf(r.pool, sizeof r.pool, "%s", m->ops->name);
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
  r.bid_musd_h = m->ops->bids ? j->bid : 0;
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
