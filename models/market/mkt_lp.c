/* mkt_lp.c - the market's entities: market LPs (one per region and pool) and provider LPs.
 *
 * Protocol (every message to another LP travels with the network latency >= lookahead):
 *   provider -> market: AVAIL (ready for rentals), UNAVAIL, END (a rental stopped: done,
 *     interrupted by churn or the owner, outbid, refused, or a book-closing bill; says whether the
 *     host is still available), STAKE / UNSTAKE (flexible pool), CLAIM (flexible pool payout for
 *     an interval of staked availability).
 *   market -> provider: ASSIGN (run job slot for so long), PREEMPT (outbid), PAY (money).
 * The provider is the source of truth about its host; the market keeps an idle set and a table of
 * rentals. Money: the market charges the client and books fee and treasury in its own accounts and
 * sends the provider's share in a PAY message; until it arrives the money sits in `transit`. So
 * every LP's bookings sum to zero, and the ledger series (summed over LPs) must be zero at the end.
 */
#include "models/market/mkt_model.h"

#include <gsl/gsl_randist.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- messages -------------------------------------------------------------------------------- */
enum {
  M_AVAIL = 1, M_UNAVAIL, M_END, M_STAKE, M_UNSTAKE, M_CLAIM, /* provider -> market */
  M_ASSIGN, M_PREEMPT, M_PAY,                                  /* market -> provider */
  M_TICK, M_ARRIVE, M_TRACE,                                   /* market self-events */
  M_CHURN, M_CAL, M_SELF, M_DONE, M_REVIEW, M_CLOSE            /* provider self-events */
};
enum { END_DONE, END_INTERRUPTED, END_OUTBID, END_REFUSED, END_CLOSE };

typedef struct mkt_msg {
  uint8_t kind;
  uint8_t reason;     /* END: END_*; PAY: 0 rental, 1 staking payout, 2 stake refund */
  uint8_t flag;       /* END: host still available */
  uint8_t cls;
  uint32_t slot;      /* rental slot at the market */
  uint32_t gen;       /* provider self-events: generation, to drop stale timers */
  uint32_t pad;
  int64_t a;          /* amount (musd), work (ms), or interval start (ms) */
  int64_t b;          /* interval end (ms) */
} mkt_msg;

static const mkt_ctx *ctx_of(sim_lp *lp) { return sim_lp_ctx(lp); }
static int64_t ms_of(double t) { return (int64_t)llround(t * 1000.0); }

static void send(sim_lp *lp, sim_id dst, double delay, const mkt_msg *m) { sim_send(lp, dst, delay, m, sizeof *m); }

/* Adds `per_ms` * overlap to series s, column col, split over its time bins. */
static void add_span(sim_lp *lp, const mkt_ctx *c, unsigned s, unsigned col, double t0, double t1, int64_t mult) {
  if (t1 <= t0 || mult == 0) return;
  double w = c->series[s].bin_width;
  while (t0 < t1) {
    double edge = (floor(t0 / w) + 1) * w;
    double e = edge < t1 ? edge : t1;
    sim_series_add(lp, s, col, t0, (ms_of(e) - ms_of(t0)) * mult);
    t0 = e;
  }
}

static void book(sim_lp *lp, unsigned acct, int64_t v) {
  if (v) sim_series_add(lp, MKT_S_LEDGER, acct, 0, v);
}

/* ==== market LP ================================================================================ */

enum { J_FREE, J_QUEUED, J_RUNNING, J_PREEMPTING, J_LEAVING };

typedef struct mkt_job {
  uint64_t id;
  double submit, first_start, acc_since;
  int64_t work_left_ms;
  int64_t value;          /* musd per GPU-hour (the bid in the bidding pool) */
  int64_t price;          /* current price, musd per GPU-hour */
  int64_t accrued;        /* cost of the current rental not yet billed */
  int64_t cost;           /* billed so far (net of penalty refunds) */
  uint32_t prov;          /* provider index while running */
  uint16_t gpus, interruptions;
  uint8_t cls, state, from_trace;
} mkt_job;

typedef struct mkt_idle {
  uint32_t prov;          /* global provider index */
  uint16_t gpus;
  uint8_t gpu, persona;
} mkt_idle;

typedef struct mkt_market {
  unsigned region, pool;
  uint64_t nextid;
  mkt_job *jobs; uint32_t njobs, capjobs;   /* slots */
  uint32_t *freeslots; uint32_t nfree;
  uint32_t *q; uint32_t qhead, qlen, qcap;  /* queue of slots, FIFO order; UINT32_MAX = removed */
  uint32_t nlive;                           /* live entries in q */
  mkt_idle *idle; uint32_t nidle, capidle;
  int32_t *pos;                             /* per region provider: idle index, -1 none, -2 reserved */
  size_t trace_next;
  int64_t stakes, staked_score_milli;
  int64_t treasury, shortfall, rate;
  int64_t *rate_hist;                       /* flexible: rate per billing interval */
  int64_t last_clear;                       /* bidding: last uniform clearing price */
} mkt_market;

static unsigned region_of_market(sim_id id) { return (unsigned)(id / MKT_NPOOLS); }

static uint32_t job_alloc(mkt_market *m) {
  if (m->nfree) return m->freeslots[--m->nfree];
  if (m->njobs == m->capjobs) {
    uint32_t nc = m->capjobs ? 2 * m->capjobs : 64;
    mkt_job *nj = realloc(m->jobs, nc * sizeof *nj);
    uint32_t *nf = realloc(m->freeslots, nc * sizeof *nf);
    if (!nj || !nf) SIM_FATAL("out of memory");
    m->jobs = nj;
    m->freeslots = nf;
    m->capjobs = nc;
  }
  return m->njobs++;
}

static void job_free(mkt_market *m, uint32_t s) {
  m->jobs[s].state = J_FREE;
  m->freeslots[m->nfree++] = s;
}

static void q_compact(mkt_market *m) {
  uint32_t k = 0;
  for (uint32_t i = m->qhead; i < m->qlen; i++)
    if (m->q[i] != UINT32_MAX) m->q[k++] = m->q[i];
  m->qhead = 0;
  m->qlen = k;
}

static void q_del(mkt_market *m, uint32_t i) {
  if (m->q[i] == UINT32_MAX) return;
  m->q[i] = UINT32_MAX;
  m->nlive--;
}

static uint32_t q_push(mkt_market *m, uint32_t slot, int front) {
  m->nlive++;
  if (front && m->qhead > 0) { m->q[--m->qhead] = slot; return m->qhead; }
  if (m->qlen == m->qcap) {
    if (m->qhead > m->qcap / 2) q_compact(m);
    if (m->qlen == m->qcap) {
      uint32_t nc = m->qcap ? 2 * m->qcap : 64;
      uint32_t *nq = realloc(m->q, nc * sizeof *nq);
      if (!nq) SIM_FATAL("out of memory");
      m->q = nq;
      m->qcap = nc;
    }
  }
  if (front) {
    memmove(m->q + m->qhead + 1, m->q + m->qhead, (m->qlen - m->qhead) * sizeof *m->q);
    m->q[m->qhead] = slot;
    m->qlen++;
    return m->qhead;
  }
  m->q[m->qlen++] = slot;
  return m->qlen - 1;
}

static void idle_add(const mkt_ctx *c, mkt_market *m, uint32_t prov) {
  uint32_t local = (uint32_t)(prov - c->reg_first[m->region]);
  if (m->pos[local] >= 0) return;
  if (m->nidle == m->capidle) {
    uint32_t nc = m->capidle ? 2 * m->capidle : 64;
    mkt_idle *ni = realloc(m->idle, nc * sizeof *ni);
    if (!ni) SIM_FATAL("out of memory");
    m->idle = ni;
    m->capidle = nc;
  }
  const mkt_pstat *p = &c->prov[prov];
  m->idle[m->nidle] = (mkt_idle){prov, p->ngpus, p->gpu, p->persona};
  m->pos[local] = (int32_t)m->nidle++;
}

/* Removes host from the idle set; marks it reserved (assignment in flight) or absent. */
static void idle_remove(const mkt_ctx *c, mkt_market *m, uint32_t prov, int32_t mark) {
  uint32_t local = (uint32_t)(prov - c->reg_first[m->region]);
  int32_t i = m->pos[local];
  if (i >= 0) {
    mkt_idle last = m->idle[--m->nidle];
    if ((uint32_t)i < m->nidle) {
      m->idle[i] = last;
      m->pos[last.prov - c->reg_first[m->region]] = i;
    }
  }
  m->pos[local] = mark;
}

/* Energy cost of one GPU at the job's power limit, musd per GPU-hour: W * musd/Wh. */
static int64_t energy_cost(const mkt_ctx *c, unsigned region, const mkt_gpu *g, double power_w) {
  double w = power_w < g->pl_min_w ? g->pl_min_w : (power_w > g->pl_max_w ? g->pl_max_w : power_w);
  return (int64_t)llround(w * c->energy_musd_wh[region]);
}

/* The host's ask per GPU-hour in the bidding pool: energy at the bid's power limit times
 * (1 + persona margin), and at least the pool's minimum bid. */
static int64_t host_ask(const mkt_ctx *c, unsigned region, const mkt_idle *h, double power_w) {
  int64_t e = energy_cost(c, region, &c->gpus[h->gpu], power_w);
  int64_t ask = (int64_t)llround((double)e * (1.0 + c->cfg->personas[h->persona].min_margin));
  return ask > c->min_bid ? ask : c->min_bid;
}

/* Price per GPU-hour of job j on host h in this pool, or -1 if the host cannot take it. */
static int64_t fit_price(const mkt_ctx *c, const mkt_market *m, const mkt_job *j, const mkt_idle *h) {
  const mkt_gpu *g = &c->gpus[h->gpu];
  if (h->gpus < j->gpus || g->mem_gb < c->cfg->cls[j->cls].mem_min_gb) return -1;
  int64_t p;
  switch (m->pool) {
    case MKT_POOL_FIXED: p = c->posted[h->gpu]; break;
    case MKT_POOL_FLEX: p = c->flex_price[h->gpu]; break;
    default:
      p = host_ask(c, m->region, h, c->cfg->cls[j->cls].power_w);
      if (j->value < p) return -1;
      /* Provisional price until the next billing interval's clearing. */
      if (c->cfg->bidding.rule == MKT_RULE_VICKREY) return p;
      if (c->cfg->bidding.rule == MKT_RULE_DOUBLE) return m->last_clear > p && m->last_clear <= j->value ? m->last_clear : p;
      return j->value;
  }
  return j->value >= p ? p : -1;
}

static void accrue(mkt_job *j, double now) {
  int64_t dt = ms_of(now) - ms_of(j->acc_since);
  if (dt > 0) j->accrued += mkt_cost(j->price * j->gpus, dt);
  j->acc_since = now;
}

static void price_sample(sim_lp *lp, const mkt_ctx *c, unsigned gpu, double t, int64_t price) {
  sim_series_add(lp, MKT_S_PRICE_SUM, gpu, t, price);
  sim_series_add(lp, MKT_S_PRICE_N, gpu, t, 1);
}

static void start_job(sim_lp *lp, const mkt_ctx *c, mkt_market *m, uint32_t slot, uint32_t hi, int64_t price) {
  mkt_job *j = &m->jobs[slot];
  mkt_idle h = m->idle[hi];
  double now = sim_now(lp), lat = c->cfg->latency_s;
  idle_remove(c, m, h.prov, -2);
  j->state = J_RUNNING;
  j->prov = h.prov;
  j->price = price;
  j->acc_since = now + lat;   /* billing starts when the host starts */
  if (j->first_start < 0) {
    j->first_start = now + lat;
    sim_series_add(lp, MKT_S_JOBS, j->cls * MKT_NJCOLS + MKT_J_STARTED, 0, 1);
    sim_series_add(lp, MKT_S_JOBS, j->cls * MKT_NJCOLS + MKT_J_WAIT_MS, 0, ms_of(j->first_start) - ms_of(j->submit));
  }
  price_sample(lp, c, h.gpu, now, price);
  mkt_msg msg = {.kind = M_ASSIGN, .cls = j->cls, .slot = slot, .a = j->work_left_ms};
  send(lp, c->nmarkets + h.prov, lat, &msg);
}

static void job_record(sim_lp *lp, const mkt_ctx *c, const mkt_market *m, const mkt_job *j, double end,
                       const char *outcome) {
  if (!c->cfg->record_jobs) return;
  mkt_job_rec r;
  memset(&r, 0, sizeof r);
  r.id = j->id;
  snprintf(r.cls, sizeof r.cls, "%s", mkt_class_names[j->cls]);
  snprintf(r.region, sizeof r.region, "%s", c->cfg->regions[m->region].name);
  snprintf(r.pool, sizeof r.pool, "%s", mkt_pool_names[m->pool]);
  snprintf(r.outcome, sizeof r.outcome, "%s", outcome);
  r.gpus = j->gpus;
  r.interruptions = j->interruptions;
  r.submit_s = j->submit;
  r.start_s = j->first_start >= 0 ? j->first_start : NAN;
  r.end_s = end;
  r.wait_s = j->first_start >= 0 ? j->first_start - j->submit : NAN;
  r.cost_musd = j->cost;
  r.cost_usd = (double)j->cost / MKT_MUSD;
  sim_table_put(lp, MKT_T_JOBS, &r);
}

/* FIFO with first-fit backfilling for the fixed and flexible pools: each queued job (in order)
 * takes the first idle host that fits. Bounded scans keep it O(1) per event at scale. */
static void dispatch_fifo(sim_lp *lp, const mkt_ctx *c, mkt_market *m) {
  unsigned misses = 0;
  for (uint32_t i = m->qhead; i < m->qlen && m->nidle && misses < 64; i++) {
    uint32_t s = m->q[i];
    if (s == UINT32_MAX) continue;
    mkt_job *j = &m->jobs[s];
    int done = 0;
    uint32_t lim = m->nidle < 256 ? m->nidle : 256;
    for (uint32_t k = 0; k < lim; k++) {
      int64_t p = fit_price(c, m, j, &m->idle[k]);
      if (p >= 0) {
        q_del(m, i);
        if (i == m->qhead) m->qhead++;
        start_job(lp, c, m, s, k, p);
        done = 1;
        break;
      }
    }
    if (!done) misses++;
  }
  while (m->qhead < m->qlen && m->q[m->qhead] == UINT32_MAX) m->qhead++;
}

/* Bidding pool, a new or returned bid: run at once on an idle host that profits from it. */
static int try_start_bid(sim_lp *lp, const mkt_ctx *c, mkt_market *m, uint32_t s) {
  mkt_job *j = &m->jobs[s];
  uint32_t lim = m->nidle < 256 ? m->nidle : 256;
  for (uint32_t k = 0; k < lim; k++) {
    int64_t p = fit_price(c, m, j, &m->idle[k]);
    if (p >= 0) {
      start_job(lp, c, m, s, k, p);
      return 1;
    }
  }
  return 0;
}

static void dispatch(sim_lp *lp, const mkt_ctx *c, mkt_market *m);

typedef struct mkt__cand {
  uint32_t slot;
  int running;
  uint32_t qpos;          /* queue position of a queued bid */
} mkt__cand;

/* Bidding pool, at every billing interval: clear all bids (running and queued) against the
 * pool's GPUs (idle and rented) with the configured rule; outbid running work is preempted,
 * winners start on idle hosts, and running winners are re-priced. */
static void clear_bidding(sim_lp *lp, const mkt_ctx *c, mkt_market *m) {
  double now = sim_now(lp);
  int rule = c->cfg->bidding.rule;
  uint32_t n = 0;
  for (uint32_t s = 0; s < m->njobs; s++)
    if (m->jobs[s].state == J_QUEUED || m->jobs[s].state == J_RUNNING) n++;
  int queued = 0;
  queued = m->nlive > 0;
  if (!n || (!queued && (rule == MKT_RULE_GIGASPOT || rule == MKT_RULE_PAYASBID || rule == MKT_RULE_KNAPSACK)))
    return; /* every bid runs at its own price: nothing to re-clear */
  if (rule == MKT_RULE_GIGASPOT || rule == MKT_RULE_PAYASBID) {
    /* Under these rules a full clearing changes nothing unless some queued bid outranks some
     * running one; then idle hosts just take the best queued bids. An O(n) test instead of a sort. */
    double qmax = -INFINITY, rmin = INFINITY, e = rule == MKT_RULE_GIGASPOT ? c->energy_musd_wh[m->region] : 0;
    for (uint32_t s = 0; s < m->njobs; s++) {
      const mkt_job *j = &m->jobs[s];
      double key = (double)j->value - e * c->cfg->cls[j->cls].power_w;
      if (j->state == J_QUEUED && key > qmax) qmax = key;
      if (j->state == J_RUNNING && key < rmin) rmin = key;
    }
    if (qmax <= rmin) { dispatch(lp, c, m); return; }
  }
  mkt__cand *cand = malloc(n * sizeof *cand);
  mkt_bid *bids = malloc(n * sizeof *bids);
  int *win = malloc(n * sizeof *win);
  int64_t *pay = malloc(n * sizeof *pay);
  if (!cand || !bids || !win || !pay) SIM_FATAL("out of memory");
  uint64_t units = 0;
  for (uint32_t k = 0; k < m->nidle; k++) units += m->idle[k].gpus;
  uint32_t k = 0;
  /* Candidates in a fixed order: running first (by slot), then the queue. */
  for (uint32_t s = 0; s < m->njobs; s++)
    if (m->jobs[s].state == J_RUNNING) {
      cand[k] = (mkt__cand){s, 1, 0};
      units += c->prov[m->jobs[s].prov].ngpus;
      k++;
    }
  for (uint32_t i = m->qhead; i < m->qlen; i++)
    if (m->q[i] != UINT32_MAX) cand[k++] = (mkt__cand){m->q[i], 0, i};
  n = k;
  for (uint32_t i = 0; i < n; i++) {
    const mkt_job *j = &m->jobs[cand[i].slot];
    bids[i] = (mkt_bid){j->value, j->gpus, (uint32_t)c->cfg->cls[j->cls].power_w};
  }
  /* Reserve: the pool minimum bid. The GigaSPOT rule ranks by profit at the region's energy price. */
  int64_t clear_price = -1;
  if (rule == MKT_RULE_DOUBLE) {
    /* unit bids against unit asks: every GPU in the pool asks its energy cost plus margin */
    size_t nb = 0, na = 0;
    for (uint32_t i = 0; i < n; i++) nb += bids[i].gpus;
    int64_t *ub = malloc((nb ? nb : 1) * sizeof *ub), *ua = malloc((units ? units : 1) * sizeof *ua);
    if (!ub || !ua) SIM_FATAL("out of memory");
    nb = 0;
    for (uint32_t i = 0; i < n; i++)
      for (uint32_t g = 0; g < bids[i].gpus; g++) ub[nb++] = bids[i].price;
    for (uint32_t h = 0; h < m->nidle; h++) {
      int64_t a = host_ask(c, m->region, &m->idle[h], 1e9); /* full power */
      for (uint32_t g = 0; g < m->idle[h].gpus; g++) ua[na++] = a;
    }
    for (uint32_t i = 0; i < n; i++)
      if (cand[i].running) {
        mkt_idle hh = {m->jobs[cand[i].slot].prov, c->prov[m->jobs[cand[i].slot].prov].ngpus,
                       c->prov[m->jobs[cand[i].slot].prov].gpu, c->prov[m->jobs[cand[i].slot].prov].persona};
        int64_t a = host_ask(c, m->region, &hh, 1e9);
        for (uint32_t g = 0; g < hh.gpus; g++) ua[na++] = a;
      }
    size_t traded = mkt_double_auction(ub, nb, ua, na, &clear_price);
    free(ub);
    free(ua);
    /* Whole bids at or above the clearing price win, best first, up to the traded units. */
    mkt_clear(MKT_RULE_PAYASBID, bids, n, traded, traded ? clear_price : INT64_MAX, 0, win, pay);
    for (uint32_t i = 0; i < n; i++) pay[i] = win[i] ? clear_price : 0;
    if (traded) m->last_clear = clear_price;
  } else {
    mkt_clear((mkt_rule)rule, bids, n, units, c->min_bid, c->energy_musd_wh[m->region], win, pay);
  }
  /* Preempt losers that run; re-price winners that run. */
  for (uint32_t i = 0; i < n; i++) {
    if (!cand[i].running) continue;
    mkt_job *j = &m->jobs[cand[i].slot];
    if (!win[i]) {
      mkt_msg msg = {.kind = M_PREEMPT, .slot = cand[i].slot};
      send(lp, c->nmarkets + j->prov, c->cfg->latency_s, &msg);
      j->state = J_PREEMPTING;
    } else if (pay[i] != j->price && pay[i] > 0) {
      accrue(j, now);
      j->price = pay[i];
      price_sample(lp, c, c->prov[j->prov].gpu, now, j->price);
    }
  }
  /* Queued winners start on idle hosts, highest bid first (the order mkt_clear ranked them in). */
  for (uint32_t i = 0; i < n; i++) {
    if (cand[i].running || !win[i]) continue;
    mkt_job *j = &m->jobs[cand[i].slot];
    uint32_t lim = m->nidle < 256 ? m->nidle : 256;
    for (uint32_t h = 0; h < lim; h++) {
      int64_t p = fit_price(c, m, j, &m->idle[h]);
      if (p < 0) continue;
      q_del(m, cand[i].qpos);
      start_job(lp, c, m, cand[i].slot, h, pay[i] > 0 ? pay[i] : p);
      break;
    }
  }
  while (m->qhead < m->qlen && m->q[m->qhead] == UINT32_MAX) m->qhead++;
  free(cand);
  free(bids);
  free(win);
  free(pay);
}

static void q_trim(mkt_market *m) {
  while (m->qhead < m->qlen && m->q[m->qhead] == UINT32_MAX) m->qhead++;
}

/* A job joined the queue at position qi: start it at once if an idle host fits (for the bidding
 * pool, one that profits from the bid). Bounded scan: O(1) per event at any scale. */
static void place_job(sim_lp *lp, const mkt_ctx *c, mkt_market *m, uint32_t qi) {
  uint32_t s = m->q[qi];
  if (s == UINT32_MAX || !m->nidle) return;
  int ok;
  if (m->pool == MKT_POOL_BIDDING) ok = try_start_bid(lp, c, m, s);
  else {
    ok = 0;
    uint32_t lim = m->nidle < 256 ? m->nidle : 256;
    for (uint32_t k = 0; k < lim && !ok; k++) {
      int64_t p = fit_price(c, m, &m->jobs[s], &m->idle[k]);
      if (p >= 0) { start_job(lp, c, m, s, k, p); ok = 1; }
    }
  }
  if (ok) { q_del(m, qi); q_trim(m); }
}

/* Host `prov` became idle: it takes the first queued job that fits (fixed and flexible pools:
 * FIFO), or the highest fitting bid (bidding pool). Scans at most 256 / 1024 queued jobs. */
static void place_on_host(sim_lp *lp, const mkt_ctx *c, mkt_market *m, uint32_t prov) {
  int32_t hi = m->pos[prov - c->reg_first[m->region]];
  if (hi < 0) return;
  const mkt_idle *h = &m->idle[hi];
  uint32_t best = UINT32_MAX, seen = 0, lim = m->pool == MKT_POOL_BIDDING ? 1024 : 256;
  int64_t best_p = -1, best_key = 0;
  for (uint32_t i = m->qhead; i < m->qlen && seen < lim; i++) {
    uint32_t s = m->q[i];
    seen++; /* holes count too: the market compacts the queue when they pile up */
    if (s == UINT32_MAX) continue;
    int64_t p = fit_price(c, m, &m->jobs[s], h);
    if (p < 0) continue;
    if (m->pool != MKT_POOL_BIDDING) { best = i; best_p = p; break; }
    /* GigaSPOT: the host runs the most profitable bid (price - energy at its power limit) */
    int64_t key = m->jobs[s].value;
    if (c->cfg->bidding.rule == MKT_RULE_GIGASPOT)
      key -= energy_cost(c, m->region, &c->gpus[h->gpu], c->cfg->cls[m->jobs[s].cls].power_w);
    if (best == UINT32_MAX || key > best_key) { best = i; best_p = p; best_key = key; }
  }
  if (best == UINT32_MAX) return;
  uint32_t s = m->q[best];
  q_del(m, best);
  q_trim(m);
  start_job(lp, c, m, s, (uint32_t)hi, best_p);
}

static int by_value_desc(const void *a, const void *b) {
  const int64_t *x = a, *y = b; /* (value, queue position) pairs */
  if (x[0] != y[0]) return x[0] > y[0] ? -1 : 1;
  return x[1] < y[1] ? -1 : (x[1] > y[1]);
}

static void dispatch(sim_lp *lp, const mkt_ctx *c, mkt_market *m) {
  if (m->pool != MKT_POOL_BIDDING) { dispatch_fifo(lp, c, m); return; }
  if (!m->nidle || m->qhead == m->qlen) return;
  /* bidding: the highest queued bids start at once where an idle host profits; the rest wait */
  uint32_t n = m->qlen - m->qhead, k = 0;
  int64_t *v = malloc(2 * (size_t)n * sizeof *v);
  if (!v) SIM_FATAL("out of memory");
  for (uint32_t i = m->qhead; i < m->qlen; i++)
    if (m->q[i] != UINT32_MAX) { v[2 * k] = m->jobs[m->q[i]].value; v[2 * k + 1] = i; k++; }
  qsort(v, k, 2 * sizeof *v, by_value_desc);
  for (uint32_t r = 0; r < k && m->nidle; r++) {
    uint32_t i = (uint32_t)v[2 * r + 1];
    if (try_start_bid(lp, c, m, m->q[i])) q_del(m, i);
  }
  free(v);
  while (m->qhead < m->qlen && m->q[m->qhead] == UINT32_MAX) m->qhead++;
}

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

/* Synthetic arrival rate per second of class k into market (r, pool), before the shape. */
static double class_rate(const mkt_ctx *c, unsigned r, unsigned pool, unsigned k) {
  const mkt_class_cfg *cc = &c->cfg->cls[k];
  double tot = 0;
  for (unsigned i = 0; i < MKT_NCLASSES; i++) tot += c->cfg->cls[i].share;
  if (tot <= 0) return 0;
  double ps = 0;
  for (size_t i = 0; i < cc->npool_share; i++) ps += cc->pool_share[i];
  if (ps <= 0) return 0;
  return c->cfg->regions[r].jobs_per_h / 3600.0 * cc->share / tot * cc->pool_share[pool] / ps;
}

static double max_rate(const mkt_ctx *c, unsigned r, unsigned pool) {
  double wf = c->cfg->regions[r].weekend_factor > 1 ? c->cfg->regions[r].weekend_factor : 1;
  double s = 0;
  for (unsigned k = 0; k < MKT_NCLASSES; k++) s += class_rate(c, r, pool, k) * (1 + c->cfg->cls[k].diurnal_amp) * wf;
  return s;
}

static void schedule_arrival(sim_lp *lp, const mkt_ctx *c, mkt_market *m) {
  double lam = max_rate(c, m->region, m->pool);
  if (lam <= 0) return;
  mkt_msg msg = {.kind = M_ARRIVE};
  sim_send(lp, sim_lp_id(lp), gsl_ran_exponential(sim_lp_rng(lp), 1.0 / lam), &msg, sizeof msg);
}

/* Gamma-distributed run time with mean and coefficient of variation (cv = 1: exponential). */
static double draw_duration_s(gsl_rng *r, const mkt_class_cfg *cc) {
  double mean = cc->dur_mean_h * 3600.0;
  if (cc->dur_cv <= 0) return mean;
  double k = 1.0 / (cc->dur_cv * cc->dur_cv);
  return gsl_ran_gamma(r, k, mean / k);
}

static void new_job(sim_lp *lp, const mkt_ctx *c, mkt_market *m, unsigned k, double dur_s, unsigned gpus, int trace) {
  gsl_rng *r = sim_lp_rng(lp);
  const mkt_class_cfg *cc = &c->cfg->cls[k];
  uint32_t s = job_alloc(m);
  mkt_job *j = &m->jobs[s];
  memset(j, 0, sizeof *j);
  j->id = ((uint64_t)sim_lp_id(lp) << 40) | m->nextid++;
  j->submit = sim_now(lp);
  j->first_start = -1;
  int64_t w = ms_of(dur_s);
  j->work_left_ms = w > 0 ? w : 1;
  /* valuation per GPU-hour: log-normal around the class median */
  j->value = (int64_t)llround(cc->value_usd_h * MKT_MUSD * exp(cc->value_sigma * gsl_ran_gaussian(r, 1.0)));
  j->gpus = (uint16_t)gpus;
  j->cls = (uint8_t)k;
  j->state = J_QUEUED;
  j->from_trace = (uint8_t)trace;
  sim_series_add(lp, MKT_S_JOBS, k * MKT_NJCOLS + MKT_J_SUBMITTED, 0, 1);
  place_job(lp, c, m, q_push(m, s, 0));
}

static void on_arrive(sim_lp *lp, const mkt_ctx *c, mkt_market *m) {
  gsl_rng *r = sim_lp_rng(lp);
  double t = sim_now(lp), lam = max_rate(c, m->region, m->pool);
  double wf = c->cfg->regions[m->region].weekend_factor > 1 ? c->cfg->regions[m->region].weekend_factor : 1;
  /* Thinning (Lewis & Shedler 1979): pick the class by its maximal rate, accept with
   * rate(t) / max rate. */
  double u = gsl_rng_uniform(r) * lam, acc = 0;
  unsigned k = 0;
  for (; k < MKT_NCLASSES; k++) {
    acc += class_rate(c, m->region, m->pool, k) * (1 + c->cfg->cls[k].diurnal_amp) * wf;
    if (u < acc) break;
  }
  if (k == MKT_NCLASSES) k = MKT_NCLASSES - 1;
  double accept = demand_shape(c, m->region, k, t) / ((1 + c->cfg->cls[k].diurnal_amp) * wf);
  if (gsl_rng_uniform(r) < accept) {
    const mkt_class_cfg *cc = &c->cfg->cls[k];
    unsigned g = (unsigned)(cc->gpus_min + (int64_t)gsl_rng_uniform_int(r, (unsigned long)(cc->gpus_max - cc->gpus_min + 1)));
    new_job(lp, c, m, k, draw_duration_s(r, cc), g, 0);
  }
  schedule_arrival(lp, c, m);
}

/* Trace job i belongs to market (i mod regions, pool drawn from its class's pool shares by a hash
 * of i): a pure function of i, so the split is the same on any number of ranks. */
static int trace_owner(const mkt_ctx *c, size_t i, unsigned *region, unsigned *pool) {
  const mkt_trace_job *tj = &c->trace[i];
  const mkt_class_cfg *cc = &c->cfg->cls[tj->cls];
  *region = (unsigned)(i % c->nreg);
  uint64_t h = (uint64_t)i * 0x9E3779B97F4A7C15ull;
  h ^= h >> 31;
  double u = (double)(h >> 11) / 9007199254740992.0, ps = 0, acc = 0;
  for (size_t p = 0; p < cc->npool_share; p++) ps += cc->pool_share[p];
  if (ps <= 0) return 0;
  for (unsigned p = 0; p < MKT_NPOOLS; p++) {
    acc += cc->pool_share[p] / ps;
    if (u < acc) { *pool = p; return 1; }
  }
  *pool = MKT_NPOOLS - 1;
  return 1;
}

static void trace_schedule(sim_lp *lp, const mkt_ctx *c, mkt_market *m) {
  for (; m->trace_next < c->ntrace; m->trace_next++) {
    unsigned r, p;
    if (!trace_owner(c, m->trace_next, &r, &p) || r != m->region || p != m->pool) continue;
    double t = c->trace[m->trace_next].submit_s / c->cfg->trace_speedup;
    if (t >= c->end) { m->trace_next = c->ntrace; return; }
    mkt_msg msg = {.kind = M_TRACE};
    double d = t - sim_now(lp);
    sim_send(lp, sim_lp_id(lp), d > 0 ? d : 0, &msg, sizeof msg);
    return;
  }
}

static void on_trace(sim_lp *lp, const mkt_ctx *c, mkt_market *m) {
  const mkt_trace_job *tj = &c->trace[m->trace_next];
  unsigned g = tj->gpus > 8 ? 8 : tj->gpus;
  new_job(lp, c, m, tj->cls, tj->dur_s / c->cfg->trace_speedup, g, 1);
  m->trace_next++;
  trace_schedule(lp, c, m);
}

/* Owed to a staker for [t0, t1): sum over billing intervals of rate * overlap * score / 100. */
static int64_t flex_owed(const mkt_ctx *c, const mkt_market *m, int64_t t0_ms, int64_t t1_ms, uint32_t score_milli) {
  int64_t owed = 0, bill_ms = ms_of(c->cfg->billing_s);
  for (int64_t t = t0_ms; t < t1_ms;) {
    int64_t i = t / bill_ms, edge = (i + 1) * bill_ms, e = edge < t1_ms ? edge : t1_ms;
    int64_t rate = m->rate_hist[i < (int64_t)c->nbill ? i : (int64_t)c->nbill - 1];
    /* rate is per score-100 GPU-hour: rate * score/100 per hour */
    owed += mkt_cost((int64_t)((__int128)rate * score_milli / 100000), e - t);
    t = e;
  }
  return owed;
}

static void on_tick(sim_lp *lp, const mkt_ctx *c, mkt_market *m) {
  double now = sim_now(lp);
  int64_t bill_ms = ms_of(c->cfg->billing_s);
  /* demand: GPUs wanted by queued and running jobs over the next interval */
  int64_t want = 0;
  uint32_t abandoned = 0;
  for (uint32_t s = 0; s < m->njobs; s++) {
    mkt_job *j = &m->jobs[s];
    if (j->state == J_FREE) continue;
    /* abandon: a job never started within its patience leaves the queue */
    double pat = c->cfg->cls[j->cls].patience_h * 3600.0;
    if (j->state == J_QUEUED && j->first_start < 0 && pat > 0 && now - j->submit >= pat) {
      sim_series_add(lp, MKT_S_JOBS, j->cls * MKT_NJCOLS + MKT_J_ABANDONED, 0, 1);
      job_record(lp, c, m, j, now, "abandoned");
      j->state = J_LEAVING;
      abandoned++;
      continue;
    }
    want += j->gpus;
  }
  if (abandoned) { /* one pass over the queue, then free the slots */
    for (uint32_t q = m->qhead; q < m->qlen; q++)
      if (m->q[q] != UINT32_MAX && m->jobs[m->q[q]].state == J_LEAVING) q_del(m, q);
    for (uint32_t s = 0; s < m->njobs; s++)
      if (m->jobs[s].state == J_LEAVING) job_free(m, s);
  }
  while (m->qhead < m->qlen && m->q[m->qhead] == UINT32_MAX) m->qhead++;
  add_span(lp, c, MKT_S_DEMAND, m->region, now, now + c->cfg->billing_s < c->end ? now + c->cfg->billing_s : c->end, want);
  if (m->pool == MKT_POOL_BIDDING) clear_bidding(lp, c, m);
  else dispatch(lp, c, m);
  if (m->pool == MKT_POOL_FLEX) {
    size_t i = (size_t)(ms_of(now) / bill_ms);
    if (i < c->nbill) {
      m->rate = mkt_treasury_next_rate(&c->trule, m->rate, m->treasury, (uint64_t)(m->staked_score_milli / 100000));
      m->rate_hist[i] = m->rate;
      sim_series_add(lp, MKT_S_FLEX, MKT_F_BALANCE, now, m->treasury);
      sim_series_add(lp, MKT_S_FLEX, MKT_F_RATE, now, m->rate);
    }
  }
  mkt_msg msg = {.kind = M_TICK};
  sim_send(lp, sim_lp_id(lp), c->cfg->billing_s, &msg, sizeof msg);
}

/* A rental stopped (message from the provider at time msg->a ms). Bill it, pay the host, and
 * complete or requeue the job. */
static void on_end(sim_lp *lp, const mkt_ctx *c, mkt_market *m, const mkt_msg *msg, sim_id src) {
  double now = sim_now(lp), t_end = (double)msg->b / 1000.0;
  uint32_t prov = (uint32_t)(src - c->nmarkets);
  mkt_job *j = msg->slot < m->njobs ? &m->jobs[msg->slot] : NULL;
  if (!j || (j->state != J_RUNNING && j->state != J_PREEMPTING) || j->prov != prov)
    SIM_FATAL("market %llu: END for slot %u that host %u does not run", (unsigned long long)sim_lp_id(lp), msg->slot, prov);
  accrue(j, t_end < j->acc_since ? j->acc_since : t_end);
  int64_t amount = msg->reason == END_REFUSED ? 0 : j->accrued;
  j->accrued = 0;
  int64_t penalty = 0;
  if (m->pool == MKT_POOL_FIXED && msg->reason == END_INTERRUPTED)
    /* uptime commitment: the host refunds penalty_h hours of the rental to the client */
    penalty = mkt_cost(j->price * j->gpus, ms_of(c->cfg->fixed.penalty_h * 3600.0));
  int64_t fee = mkt_fee(amount, c->fee_ppm[m->pool]);
  int64_t net = amount - fee - penalty;
  book(lp, MKT_A_CLIENTS, -(amount - penalty));
  book(lp, MKT_A_PLATFORM, fee);
  if (fee) sim_series_add(lp, MKT_S_FEES, m->pool, 0, fee);
  j->cost += amount - penalty;
  sim_series_add(lp, MKT_S_JOBS, j->cls * MKT_NJCOLS + MKT_J_COST, 0, amount - penalty);
  if (m->pool == MKT_POOL_FLEX) {
    book(lp, MKT_A_TREASURY, net);  /* pay-per-task revenue feeds the pool treasury */
    m->treasury += net;
  } else if (net != 0) {
    book(lp, MKT_A_TRANSIT, net);
    mkt_msg pay = {.kind = M_PAY, .reason = 0, .a = net};
    send(lp, src, c->cfg->latency_s, &pay);
  }
  if (msg->reason == END_CLOSE) return; /* billed up to now; the rental goes on */
  uint32_t slot = msg->slot, requeued = UINT32_MAX;
  if (msg->reason == END_DONE) {
    sim_series_add(lp, MKT_S_JOBS, j->cls * MKT_NJCOLS + MKT_J_DONE, 0, 1);
    sim_series_add(lp, MKT_S_JOBS, j->cls * MKT_NJCOLS + MKT_J_TURN_MS, 0, ms_of(t_end) - ms_of(j->submit));
    job_record(lp, c, m, j, t_end, "done");
    job_free(m, slot);
  } else {
    int64_t done = msg->a;
    double ck = c->cfg->cls[j->cls].checkpoint_h * 3600000.0;
    /* progress kept up to the last checkpoint; none without checkpoints */
    int64_t kept = ck > 0 ? (int64_t)(floor((double)done / ck) * ck) : 0;
    if (kept > j->work_left_ms - 1) kept = j->work_left_ms - 1;
    if (kept > 0) j->work_left_ms -= kept;
    if (msg->reason != END_REFUSED) {
      j->interruptions++;
      sim_series_add(lp, MKT_S_JOBS, j->cls * MKT_NJCOLS + MKT_J_INTERRUPTS, 0, 1);
    }
    j->state = J_QUEUED;
    requeued = q_push(m, slot, 1);
  }
  (void)now;
  uint32_t local = (uint32_t)(prov - c->reg_first[m->region]);
  m->pos[local] = -1;
  if (msg->flag) {
    idle_add(c, m, prov);
    place_on_host(lp, c, m, prov);
  }
  if (requeued != UINT32_MAX) place_job(lp, c, m, requeued);
}

static void market_init(sim_lp *lp, void *st) {
  const mkt_ctx *c = ctx_of(lp);
  mkt_market *m = st;
  sim_id id = sim_lp_id(lp);
  m->region = region_of_market(id);
  m->pool = (unsigned)(id % MKT_NPOOLS);
  uint64_t np = c->reg_first[m->region + 1] - c->reg_first[m->region];
  m->pos = malloc((np ? np : 1) * sizeof *m->pos);
  if (!m->pos) SIM_FATAL("out of memory");
  for (uint64_t i = 0; i < np; i++) m->pos[i] = -1;
  if (m->pool == MKT_POOL_FLEX) {
    m->rate_hist = calloc(c->nbill ? c->nbill : 1, sizeof *m->rate_hist);
    if (!m->rate_hist) SIM_FATAL("out of memory");
    m->rate = c->rate0;
    /* the platform seeds the treasury (a transfer, so the ledger stays balanced) */
    int64_t seed = (int64_t)llround(c->cfg->flexible.seed_usd * MKT_MUSD);
    m->treasury = seed;
    book(lp, MKT_A_PLATFORM, -seed);
    book(lp, MKT_A_TREASURY, seed);
  }
  schedule_arrival(lp, c, m);
  trace_schedule(lp, c, m);
  mkt_msg t = {.kind = M_TICK};
  sim_send(lp, id, 0, &t, sizeof t);
}

static void market_event(sim_lp *lp, void *st, const void *vmsg, sim_id src) {
  const mkt_ctx *c = ctx_of(lp);
  mkt_market *m = st;
  const mkt_msg *msg = vmsg;
  uint32_t prov = (uint32_t)(src - c->nmarkets);
  /* keep removed entries (holes) at most about half the queue, so bounded scans see live jobs;
   * done here, where no handler holds a queue position */
  if (m->qlen - m->qhead > 2 * m->nlive + 64) q_compact(m);
  switch (msg->kind) {
    case M_TICK: on_tick(lp, c, m); break;
    case M_ARRIVE: on_arrive(lp, c, m); break;
    case M_TRACE: on_trace(lp, c, m); break;
    case M_AVAIL: {
      uint32_t local = (uint32_t)(prov - c->reg_first[m->region]);
      if (m->pos[local] == -2) break; /* an assignment is in flight: its END decides */
      idle_add(c, m, prov);
      place_on_host(lp, c, m, prov);
      break;
    }
    case M_UNAVAIL: {
      uint32_t local = (uint32_t)(prov - c->reg_first[m->region]);
      if (m->pos[local] >= 0) idle_remove(c, m, prov, -1);
      break;
    }
    case M_END: on_end(lp, c, m, msg, src); break;
    case M_STAKE:
      book(lp, MKT_A_TRANSIT, -msg->a);
      book(lp, MKT_A_STAKES, msg->a);
      m->stakes += msg->a;
      m->staked_score_milli += c->prov[prov].score_milli;
      break;
    case M_UNSTAKE: {
      book(lp, MKT_A_STAKES, -msg->a);
      book(lp, MKT_A_TRANSIT, msg->a);
      m->stakes -= msg->a;
      m->staked_score_milli -= c->prov[prov].score_milli;
      mkt_msg pay = {.kind = M_PAY, .reason = 2, .a = msg->a};
      send(lp, src, c->cfg->latency_s, &pay);
      break;
    }
    case M_CLAIM: {
      int64_t owed = flex_owed(c, m, msg->a, msg->b, c->prov[prov].score_milli);
      int64_t sf = 0;
      int64_t paid = mkt_treasury_pay(&m->treasury, owed, &sf);
      m->shortfall += sf;
      if (sf) sim_series_add(lp, MKT_S_FLEX, MKT_F_SHORTFALL, sim_now(lp), sf);
      if (paid) {
        book(lp, MKT_A_TREASURY, -paid);
        book(lp, MKT_A_TRANSIT, paid);
        mkt_msg pay = {.kind = M_PAY, .reason = 1, .a = paid};
        send(lp, src, c->cfg->latency_s, &pay);
      }
      break;
    }
    default: SIM_FATAL("market: unexpected message kind %d", msg->kind);
  }
}

static void market_finalize(sim_lp *lp, void *st) {
  const mkt_ctx *c = ctx_of(lp);
  mkt_market *m = st;
  for (uint32_t s = 0; s < m->njobs; s++) {
    const mkt_job *j = &m->jobs[s];
    if (j->state == J_FREE) continue;
    job_record(lp, c, m, j, NAN, j->state == J_QUEUED ? "queued" : "running");
  }
  free(m->jobs);
  free(m->freeslots);
  free(m->q);
  free(m->idle);
  free(m->pos);
  free(m->rate_hist);
  memset(m, 0, sizeof *m);
}

/* ==== provider LP ============================================================================= */

enum { ST_DOWN, ST_OWNER, ST_IDLE, ST_RENTED };
static const char *const st_names[] = {"down", "owner", "idle", "rented"};

typedef struct mkt_prov {
  uint8_t up, cal_busy, self_busy, pool, start_pool, renting, state, low;
  uint32_t slot, gen, churn_gen;
  uint16_t switches, interruptions;
  double st_since, claim_from;
  int64_t income, balance, stake;
  int64_t win_income; double win_avail_s;   /* review window */
  int64_t st_ms[4];                         /* time per state, ms */
  int64_t day; int64_t day_income;          /* daily income statistics (Welford) */
  uint32_t ndays; double dmean, dm2;
  double rent_start;
} mkt_prov;

static uint64_t pidx(const mkt_ctx *c, sim_lp *lp) { return sim_lp_id(lp) - c->nmarkets; }
static sim_id market_id(const mkt_ctx *c, unsigned region, unsigned pool) {
  (void)c;
  return (sim_id)region * MKT_NPOOLS + pool;
}

/* Closes whole days up to day `d` in the daily income statistics. */
static void day_roll(mkt_prov *p, int64_t d) {
  while (p->day < d) {
    double x = (double)p->day_income;
    p->ndays++;
    double delta = x - p->dmean;   /* Welford's running mean and M2 */
    p->dmean += delta / p->ndays;
    p->dm2 += delta * (x - p->dmean);
    p->day_income = 0;
    p->day++;
  }
}

/* Adds v to column `col` of the per-persona, per-pool, per-region and per-GPU-model counters. */
static void by_groups(sim_lp *lp, const mkt_pstat *ps, unsigned pool, unsigned col, int64_t v) {
  sim_series_add(lp, MKT_S_PERSONA, ps->persona * MKT_NPCOLS + col, 0, v);
  sim_series_add(lp, MKT_S_POOL, pool * MKT_NPCOLS + col, 0, v);
  sim_series_add(lp, MKT_S_REGION, ps->region * MKT_NPCOLS + col, 0, v);
  sim_series_add(lp, MKT_S_GPU, ps->gpu * MKT_NPCOLS + col, 0, v);
}

static void earn(sim_lp *lp, const mkt_ctx *c, mkt_prov *p, int64_t amount, int is_income) {
  book(lp, MKT_A_TRANSIT, -amount);
  book(lp, MKT_A_PROVIDERS, amount);
  p->balance += amount;
  if (!is_income) return;
  const mkt_pstat *ps = &c->prov[pidx(c, lp)];
  p->income += amount;
  p->win_income += amount;
  day_roll(p, (int64_t)floor(sim_now(lp) / 86400.0));
  p->day_income += amount;
  by_groups(lp, ps, p->pool, MKT_P_INCOME, amount);
}

/* Accounts the time since st_since in the current state (series, counters, the availability
 * sample) and restarts the span at now. */
static void flush(sim_lp *lp, const mkt_ctx *c, mkt_prov *p) {
  double now = sim_now(lp), t0 = p->st_since;
  if (now <= t0) return;
  const mkt_pstat *ps = &c->prov[pidx(c, lp)];
  int64_t d = ms_of(now) - ms_of(t0);
  p->st_ms[p->state] += d;
  if (p->state == ST_IDLE || p->state == ST_RENTED) {
    add_span(lp, c, MKT_S_AVAIL, ps->region, t0, now, ps->ngpus);
    by_groups(lp, ps, p->pool, MKT_P_AVAIL_MS, d * ps->ngpus);
    p->win_avail_s += now - t0;
  }
  if (p->state == ST_RENTED) {
    add_span(lp, c, MKT_S_RENTED, ps->region, t0, now, ps->ngpus);
    by_groups(lp, ps, p->pool, MKT_P_RENTED_MS, d * ps->ngpus);
  }
  if (pidx(c, lp) < (uint64_t)c->cfg->sample_providers) {
    mkt_avail_rec r;
    memset(&r, 0, sizeof r);
    r.provider = pidx(c, lp);
    r.start_s = t0;
    r.end_s = now;
    snprintf(r.state, sizeof r.state, "%s", st_names[p->state]);
    sim_table_put(lp, MKT_T_AVAIL, &r);
  }
  p->st_since = now;
}

/* Moves the provider to state `ns`, accounting the time spent in the old one. */
static void set_state(sim_lp *lp, const mkt_ctx *c, mkt_prov *p, int ns) {
  if (ns == p->state) return;
  flush(lp, c, p);
  p->state = (uint8_t)ns;
  p->st_since = sim_now(lp);
}

static void flex_claim(sim_lp *lp, const mkt_ctx *c, mkt_prov *p) {
  double now = sim_now(lp);
  if (p->pool != MKT_POOL_FLEX || p->claim_from < 0) return;
  if (now > p->claim_from) {
    mkt_msg m = {.kind = M_CLAIM, .a = ms_of(p->claim_from), .b = ms_of(now)};
    send(lp, market_id(c, c->prov[pidx(c, lp)].region, p->pool), c->cfg->latency_s, &m);
  }
  p->claim_from = now;
}

/* Recomputes availability from churn, calendar and self-use, and tells the market. */
static void update(sim_lp *lp, const mkt_ctx *c, mkt_prov *p) {
  const mkt_pstat *ps = &c->prov[pidx(c, lp)];
  int avail = p->up && !p->cal_busy && !p->self_busy;
  int was = p->state == ST_IDLE || p->state == ST_RENTED;
  sim_id mk = market_id(c, ps->region, p->pool);
  double now = sim_now(lp);
  if (was && !avail) {
    if (p->renting) {
      p->renting = 0;
      p->interruptions++;
      mkt_msg m = {.kind = M_END, .reason = END_INTERRUPTED, .flag = 0, .slot = p->slot,
                   .a = ms_of(now) - ms_of(p->rent_start), .b = ms_of(now)};
      send(lp, mk, c->cfg->latency_s, &m);
    } else {
      mkt_msg m = {.kind = M_UNAVAIL};
      send(lp, mk, c->cfg->latency_s, &m);
    }
    flex_claim(lp, c, p);
    p->claim_from = -1;
    set_state(lp, c, p, p->up ? ST_OWNER : ST_DOWN);
  } else if (!was && avail) {
    set_state(lp, c, p, ST_IDLE);
    mkt_msg m = {.kind = M_AVAIL};
    send(lp, mk, c->cfg->latency_s, &m);
    if (p->pool == MKT_POOL_FLEX) p->claim_from = now;
  } else if (!was) {
    set_state(lp, c, p, p->up ? ST_OWNER : ST_DOWN);
  }
}

/* Calendar: is the owner's recurring period on at local time, and when does it next change. */
static int cal_on(const mkt_persona_cfg *pc, double loc) {
  if (pc->busy_days == 0 || pc->busy_len_h <= 0) return 0;
  long day = (long)floor(loc / 86400.0);
  for (long d = day - 1; d <= day; d++) {
    int dow = (int)(((d % 7) + 7) % 7);
    int ok = pc->busy_days == 1 || (pc->busy_days == 2 && dow < 5) || (pc->busy_days == 3 && dow >= 5);
    double ws = d * 86400.0 + pc->busy_start_h * 3600.0, we = ws + pc->busy_len_h * 3600.0;
    if (ok && loc >= ws && loc < we) return 1;
  }
  return 0;
}

static double cal_next(const mkt_persona_cfg *pc, double loc) {
  long day = (long)floor(loc / 86400.0);
  double best = INFINITY;
  for (long d = day - 1; d <= day + 8; d++) {
    double ws = d * 86400.0 + pc->busy_start_h * 3600.0, we = ws + pc->busy_len_h * 3600.0;
    if (ws > loc + 1e-6 && ws < best) best = ws;
    if (we > loc + 1e-6 && we < best) best = we;
  }
  return best;
}

static void cal_schedule(sim_lp *lp, const mkt_ctx *c, const mkt_pstat *ps) {
  const mkt_persona_cfg *pc = &c->cfg->personas[ps->persona];
  if (!c->cfg->calendars || pc->busy_days == 0 || pc->busy_len_h <= 0) return;
  double off = c->cfg->regions[ps->region].tz_h * 3600.0, now = sim_now(lp);
  double nxt = cal_next(pc, now + off) - off;
  mkt_msg m = {.kind = M_CAL};
  sim_send(lp, sim_lp_id(lp), nxt - now, &m, sizeof m);
}

static void churn_schedule(sim_lp *lp, const mkt_ctx *c, mkt_prov *p, const mkt_pstat *ps) {
  const churn_dist *d = p->up ? &c->up[ps->persona] : &c->down[ps->persona];
  mkt_msg m = {.kind = M_CHURN};
  sim_send(lp, sim_lp_id(lp), mkt_dist_sample(d, sim_lp_rng(lp)) * 3600.0, &m, sizeof m);
}

/* A provider joining the flexible pool stakes stake_usd per GPU: the money leaves its account
 * for transit now and reaches the pool's treasury with the message. */
static void post_stake(sim_lp *lp, const mkt_ctx *c, mkt_prov *p, const mkt_pstat *ps, sim_id market) {
  int64_t stake = (int64_t)llround(c->cfg->flexible.stake_usd * MKT_MUSD) * ps->ngpus;
  if (stake <= 0) return;
  book(lp, MKT_A_PROVIDERS, -stake);
  book(lp, MKT_A_TRANSIT, stake);
  p->balance -= stake;
  p->stake = stake;
  mkt_msg m = {.kind = M_STAKE, .a = stake};
  send(lp, market, c->cfg->latency_s, &m);
}

static void self_schedule(sim_lp *lp, const mkt_ctx *c, mkt_prov *p, const mkt_pstat *ps) {
  const mkt_persona_cfg *pc = &c->cfg->personas[ps->persona];
  if (!c->cfg->self_use || pc->self_per_day <= 0 || pc->self_mean_h <= 0) return;
  /* self-use sessions: Poisson starts at self_per_day, exponential lengths of self_mean_h */
  double mean_s = p->self_busy ? pc->self_mean_h * 3600.0 : 86400.0 / pc->self_per_day;
  mkt_msg m = {.kind = M_SELF};
  sim_send(lp, sim_lp_id(lp), gsl_ran_exponential(sim_lp_rng(lp), mean_s), &m, sizeof m);
}

static void prov_init(sim_lp *lp, void *st) {
  const mkt_ctx *c = ctx_of(lp);
  mkt_prov *p = st;
  const mkt_pstat *ps = &c->prov[pidx(c, lp)];
  const mkt_persona_cfg *pc = &c->cfg->personas[ps->persona];
  gsl_rng *r = sim_lp_rng(lp);
  p->pool = p->start_pool = (uint8_t)pc->pool;
  p->claim_from = -1;
  p->state = ST_DOWN;
  p->st_since = 0;
  p->up = 1;
  if (c->cfg->churn) {
    /* start up with the stationary probability mean_up / (mean_up + mean_down) */
    double mu = churn_dist_mean(&c->up[ps->persona]), md = churn_dist_mean(&c->down[ps->persona]);
    p->up = gsl_rng_uniform(r) < mu / (mu + md);
    churn_schedule(lp, c, p, ps);
  }
  if (c->cfg->calendars)
    p->cal_busy = (uint8_t)cal_on(pc, c->cfg->regions[ps->region].tz_h * 3600.0);
  self_schedule(lp, c, p, ps);
  cal_schedule(lp, c, ps);
  if (p->pool == MKT_POOL_FLEX) {
    post_stake(lp, c, p, ps, market_id(c, ps->region, p->pool));
  }
  by_groups(lp, ps, p->pool, MKT_P_PROVIDERS, 1);
  by_groups(lp, ps, p->pool, MKT_P_GPUS, ps->ngpus);
  update(lp, c, p);
  /* daily review (pool switching, flexible claims) at a provider-specific phase */
  mkt_msg rv = {.kind = M_REVIEW};
  sim_send(lp, sim_lp_id(lp), c->cfg->review_s * (0.5 + 0.5 * gsl_rng_uniform(r)), &rv, sizeof rv);
  if (c->close_t > 0) {
    mkt_msg cl = {.kind = M_CLOSE};
    sim_send(lp, sim_lp_id(lp), c->close_t, &cl, sizeof cl);
  }
}

/* Income review: switch to the persona's other pool after `patience` reviews below target. */
static void review(sim_lp *lp, const mkt_ctx *c, mkt_prov *p) {
  const mkt_pstat *ps = &c->prov[pidx(c, lp)];
  const mkt_persona_cfg *pc = &c->cfg->personas[ps->persona];
  flex_claim(lp, c, p);
  flush(lp, c, p); /* counts the open available span into this window */
  double hours = p->win_avail_s / 3600.0;
  if (pc->patience > 0 && hours > 1.0 && pc->alt_pool != pc->pool) {
    double per_h = (double)p->win_income / MKT_MUSD / hours / ps->ngpus;
    double target = pc->target_factor * c->gpus[ps->gpu].ref_price_usd_h;
    p->low = per_h < target ? (uint8_t)(p->low + 1) : 0;
    if (p->low >= pc->patience && !p->renting) {
      /* leave the pool: withdraw from the market, unstake, join the other pool */
      sim_id old = market_id(c, ps->region, p->pool);
      if (p->state == ST_IDLE) {
        mkt_msg m = {.kind = M_UNAVAIL};
        send(lp, old, c->cfg->latency_s, &m);
      }
      if (p->stake > 0) {
        mkt_msg m = {.kind = M_UNSTAKE, .a = p->stake};
        send(lp, old, c->cfg->latency_s, &m);
        p->stake = 0;
      }
      p->pool = (uint8_t)(p->pool == pc->pool ? pc->alt_pool : pc->pool);
      p->switches++;
      p->low = 0;
      p->claim_from = -1;
      sim_id nw = market_id(c, ps->region, p->pool);
      if (p->pool == MKT_POOL_FLEX) {
        post_stake(lp, c, p, ps, nw);
      }
      if (p->state == ST_IDLE) {
        mkt_msg m = {.kind = M_AVAIL};
        send(lp, nw, c->cfg->latency_s, &m);
        if (p->pool == MKT_POOL_FLEX) p->claim_from = sim_now(lp);
      }
    }
  }
  p->win_income = 0;
  p->win_avail_s = 0;
  mkt_msg rv = {.kind = M_REVIEW};
  sim_send(lp, sim_lp_id(lp), c->cfg->review_s, &rv, sizeof rv);
}

static void prov_event(sim_lp *lp, void *st, const void *vmsg, sim_id src) {
  const mkt_ctx *c = ctx_of(lp);
  mkt_prov *p = st;
  const mkt_msg *msg = vmsg;
  const mkt_pstat *ps = &c->prov[pidx(c, lp)];
  double now = sim_now(lp);
  switch (msg->kind) {
    case M_CHURN:
      p->up = !p->up;
      churn_schedule(lp, c, p, ps);
      update(lp, c, p);
      break;
    case M_CAL: {
      const mkt_persona_cfg *pc = &c->cfg->personas[ps->persona];
      p->cal_busy = (uint8_t)cal_on(pc, now + c->cfg->regions[ps->region].tz_h * 3600.0);
      cal_schedule(lp, c, ps);
      update(lp, c, p);
      break;
    }
    case M_SELF:
      p->self_busy = !p->self_busy;
      self_schedule(lp, c, p, ps);
      update(lp, c, p);
      break;
    case M_ASSIGN: {
      if (p->state != ST_IDLE || p->renting || src != market_id(c, ps->region, p->pool)) {
        mkt_msg m = {.kind = M_END, .reason = END_REFUSED, .flag = 0, .slot = msg->slot, .a = 0, .b = ms_of(now)};
        /* still available only if idle in that market (it then sent AVAIL, which the market ignored) */
        m.flag = (uint8_t)(p->state == ST_IDLE && !p->renting && src == market_id(c, ps->region, p->pool));
        send(lp, src, c->cfg->latency_s, &m);
        break;
      }
      p->renting = 1;
      p->slot = msg->slot;
      p->gen++;
      p->rent_start = now;
      set_state(lp, c, p, ST_RENTED);
      mkt_msg d = {.kind = M_DONE, .gen = p->gen};
      sim_send(lp, sim_lp_id(lp), (double)msg->a / 1000.0, &d, sizeof d);
      break;
    }
    case M_DONE:
    case M_PREEMPT: {
      if (!p->renting || (msg->kind == M_DONE && msg->gen != p->gen) || (msg->kind == M_PREEMPT && msg->slot != p->slot))
        break; /* stale */
      p->renting = 0;
      mkt_msg m = {.kind = M_END, .reason = msg->kind == M_DONE ? END_DONE : END_OUTBID, .flag = 1, .slot = p->slot,
                   .a = ms_of(now) - ms_of(p->rent_start), .b = ms_of(now)};
      send(lp, market_id(c, ps->region, p->pool), c->cfg->latency_s, &m);
      set_state(lp, c, p, ST_IDLE);
      break;
    }
    case M_PAY: earn(lp, c, p, msg->a, msg->reason != 2); break;
    case M_REVIEW: review(lp, c, p); break;
    case M_CLOSE:
      /* close the books before the end: bill the running rental, claim the staking payout */
      if (p->renting) {
        mkt_msg m = {.kind = M_END, .reason = END_CLOSE, .flag = 1, .slot = p->slot, .a = 0, .b = ms_of(now)};
        send(lp, market_id(c, ps->region, p->pool), c->cfg->latency_s, &m);
      }
      flex_claim(lp, c, p);
      break;
    default: SIM_FATAL("provider: unexpected message kind %d", msg->kind);
  }
}

static void prov_finalize(sim_lp *lp, void *st) {
  const mkt_ctx *c = ctx_of(lp);
  mkt_prov *p = st;
  const mkt_pstat *ps = &c->prov[pidx(c, lp)];
  /* account the open state up to the end */
  flush(lp, c, p);
  day_roll(p, (int64_t)floor(c->end / 86400.0)); /* whole days only */
  if (!c->cfg->record_providers) return;
  mkt_prov_rec r;
  memset(&r, 0, sizeof r);
  r.id = pidx(c, lp);
  snprintf(r.persona, sizeof r.persona, "%s", c->cfg->personas[ps->persona].name);
  snprintf(r.pool, sizeof r.pool, "%s", mkt_pool_names[p->pool]);
  snprintf(r.start_pool, sizeof r.start_pool, "%s", mkt_pool_names[p->start_pool]);
  snprintf(r.region, sizeof r.region, "%s", c->cfg->regions[ps->region].name);
  snprintf(r.gpu_class, sizeof r.gpu_class, "%s", c->gpus[ps->gpu].name);
  r.gpus = ps->ngpus;
  r.switches = p->switches;
  r.interruptions = p->interruptions;
  r.days = (int32_t)p->ndays;
  r.income_musd = p->income;
  r.balance_musd = p->balance;
  r.income_usd = (double)p->income / MKT_MUSD;
  r.balance_usd = (double)p->balance / MKT_MUSD;
  r.available_h = (double)(p->st_ms[ST_IDLE] + p->st_ms[ST_RENTED]) / 3.6e6;
  r.rented_h = (double)p->st_ms[ST_RENTED] / 3.6e6;
  r.self_use_h = (double)p->st_ms[ST_OWNER] / 3.6e6;
  r.down_h = (double)p->st_ms[ST_DOWN] / 3.6e6;
  double var = p->ndays > 1 ? p->dm2 / (p->ndays - 1) : 0;
  /* coefficient of variation of daily income: sd / mean (NaN when it never earned) */
  r.daily_income_cv = p->dmean > 0 ? sqrt(var) / p->dmean : NAN;
  sim_table_put(lp, MKT_T_PROVIDERS, &r);
}

const sim_lptype mkt__lptypes[2] = {
    {"market", sizeof(mkt_market), market_init, market_event, market_finalize},
    {"provider", sizeof(mkt_prov), prov_init, prov_event, prov_finalize},
};
const size_t mkt__msg_size = sizeof(mkt_msg);
