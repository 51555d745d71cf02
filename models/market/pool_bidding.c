/* pool_bidding.c - the bidding pool (GPGPU's "Bidding Pool", Clore.ai's spot market and
 * GigaSPOT, shared/seeds 000 and 004): clients bid per GPU-hour, the pool's clearing rule
 * (mkt_rule.h: one file per rule) decides who wins which host and at what price, and the
 * scheduling core places each winner on the GPUs of its host (its standbys may come from other
 * hosts). Bids never wait in the core's queue (`hold`): a bid that loses, or whose run the core
 * cannot continue, comes back here with the work it had saved and waits for the next clearing.
 *
 * Between clearings a new bid, or a host with free GPUs, starts at once where the rule's
 * late_price allows (pay as bid: the bid; GigaSPOT: the bid, when profitable to the host); a host
 * with free GPUs takes what the rule's per-host choice picks (mkt_rule_host_choose: GigaSPOT, the
 * set most profitable to it). At every billing interval the rule re-clears running and waiting bids
 * together: running losers are preempted (their checkpointed work is kept under the checkpoint
 * policy), waiting winners start on their host, and under re-pricing rules running winners get
 * the new price. Every winner pays at most its bid (individual rationality, tests/test_auction.c).
 *
 * Scale: a clearing looks at no more than CLEAR_WAITING waiting bids (the best), CLEAR_RUNNING
 * running bids (the weakest, those that can lose) and the hosts they involve plus CLEAR_HOSTS
 * hosts with free GPUs; a new bid at no more than SUBMIT_HOSTS hosts with free GPUs, and a host
 * with free GPUs at the first 1024 places of the queue: exact below those sizes, a bounded window
 * above them. The windows over hosts read the pool's list of hosts with free GPUs
 * (mkt_market.fre), so that busy hosts never fill them, and mkt__q_trim keeps the holes that
 * waiting bids leave out of the queue's first places. */
#include "models/market/mkt_internal.h"

#include <gsl/gsl_rng.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#define CLEAR_WAITING 256
#define CLEAR_RUNNING 256
#define CLEAR_HOSTS 1024
#define SUBMIT_HOSTS 256

/* The core filters on a GPU's price: give it the host's lowest possible ask (at the card's lowest
 * power limit), so that it never refuses a host the rule found profitable. */
static int64_t bid_price(const mkt_ctx *c, unsigned region, const mkt_pstat *ps) {
  mkt_lot l = mkt__lot_of(c, region, (uint32_t)(ps - c->prov), ps->ngpus);
  return mkt_lot_ask(&l, (uint32_t)ceil(l.pl_min_w));
}

#define host_of mkt__host

/* The copy of a waiting bid's job fields beside the queue (m->qe) must be its job's: checked in
 * Debug builds (the tests under ASan), where NDEBUG is not defined. */
static inline const mkt_qent *q_ent(const mkt_market *m, uint32_t i) {
#ifndef NDEBUG
  const mkt_job *j = &m->jobs[m->q[i]];
  if (m->qe[i].bid != j->bid || m->qe[i].gpus != j->gpus || m->qe[i].cls != j->cls)
    SIM_FATAL("bidding pool: waiting bid %u (job slot %u) differs from its job", i, m->q[i]);
#endif
  return &m->qe[i];
}

static unsigned free_gpus(const mkt_ctx *c, mkt_market *m, uint32_t prov) {
  const mkt_host *h = host_of(c, m, prov);
  return h->in ? h->ngpus - h->busy : 0;
}

/* Starts bid s on host prov at `price` (the host's GPUs are the candidates). 1 when it runs. */
static int start_on(sim_lp *lp, const mkt_ctx *c, mkt_market *m, uint32_t s, uint32_t prov, int64_t price) {
  uint32_t buf[8];
  unsigned n;
  const uint32_t *cand = mkt__host_gpus(c, m, prov, &n, buf);
  m->jobs[s].price = price;
  mkt__submit(lp, c, m, s, cand, n);
  return m->jobs[s].state == J_RUNNING;
}

/* Price of order o (a bid, mkt__order_of) on host prov, with f of its GPUs free (free_gpus),
 * between clearings, or -1 when it does not fit there now. */
static int64_t late_f(const mkt_ctx *c, const mkt_market *m, const mkt_order *o, uint32_t prov, unsigned f) {
  if (f < o->gpus) return -1;
  mkt_lot l = mkt__lot_of(c, m->region, prov, f);
  if (!mkt_lot_fits(&l, f, o)) return -1;
  return c->rule->late_price(o, &l, m->last_clear);
}
static int64_t late(const mkt_ctx *c, mkt_market *m, const mkt_order *o, uint32_t prov) {
  return late_f(c, m, o, prov, free_gpus(c, m, prov));
}

/* A new bid (or a clearing's winner whose host is taken) tries the first SUBMIT_HOSTS hosts with
 * free GPUs of its class's list and starts on the first whose price it meets, or waits. */
static void bid_submit(sim_lp *lp, const mkt_ctx *c, mkt_market *m, uint32_t s) {
  mkt_job *j = &m->jobs[s];
  const uint32_t *fre = m->fre[j->cls];
  uint32_t lim = m->nfre[j->cls] < SUBMIT_HOSTS ? m->nfre[j->cls] : SUBMIT_HOSTS;
  mkt_order o = mkt__order_of(c, j, -1); /* once, not per host tried */
  for (uint32_t k = 0; k < lim; k++) {
    uint32_t i = fre[k];
    if (m->afree[i] < o.gpus) continue; /* what late() finds first, without the host's record */
    uint32_t prov = m->avail[i];
    int64_t p = late_f(c, m, &o, prov, m->afree[i]); /* afree: free_gpus of an available host */
    if (p < 0) continue;
    start_on(lp, c, m, s, prov, p);
    return; /* placed, or handed back to the queue by the core */
  }
  j->state = J_QUEUED;
  mkt__q_push(m, s, 0);
}

/* A host has free GPUs: it takes waiting bids, as the rule's per-host choice says
 * (mkt_rule_host_choose: GigaSPOT, the set most profitable to it; other rules, the highest bid that
 * fits). One bid per round, the first of the chosen set: the rest of an optimal set is optimal for
 * the GPUs it leaves, so the next round goes on with the same set (queue positions may move when a
 * bid starts, so they are read again). A host has at most 8 GPUs: 8 rounds take a full set. */
static void bid_host_free(sim_lp *lp, const mkt_ctx *c, mkt_market *m, uint32_t prov) {
  if (m->clearing) { /* it waits for the clearing's winners (mkt_market.held; bid_tick) */
    m->held = mkt__grow(m->held, &m->capheld, m->nheld + 1, sizeof *m->held);
    m->held[m->nheld++] = prov;
    return;
  }
  for (int rounds = 0; rounds < 8; rounds++) {
    unsigned f = free_gpus(c, m, prov);
    if (!f || !m->nlive) return;
    mkt_order cand[1024];
    uint32_t at[1024];
    size_t pick[1024];
    uint32_t n = 0, seen = 0;
    mkt_lot l = mkt__lot_of(c, m->region, prov, f);
    /* mkt_lot_fits of each class's bids on this lot, but the bid and the GPUs: once per class */
    mkt_order ko[MKT_NCLASSES];
    int64_t ask[MKT_NCLASSES];
    int kfits[MKT_NCLASSES];
    for (unsigned k = 0; k < MKT_NCLASSES; k++) {
      ko[k] = mkt__class_order(c, k, INT64_MAX, 1, -1);
      kfits[k] = mkt_lot_fits(&l, f, &ko[k]); /* memory and power range (f >= 1) */
      ask[k] = mkt_lot_ask(&l, ko[k].power_w);
    }
    for (uint32_t i = m->qhead; i < m->qlen && seen < 1024; i++) {
      seen++; /* holes count too: mkt__q_trim packs the queue's front, where they gather */
      if (m->q[i] == UINT32_MAX) continue;
      const mkt_qent *e = q_ent(m, i); /* its job's bid, GPUs and class */
      if (!(e->gpus >= 1 && e->gpus <= f && kfits[e->cls] && ask[e->cls] <= e->bid)) continue; /* mkt_lot_fits */
      cand[n] = ko[e->cls]; /* mkt__class_order of its bid */
      cand[n].price = e->bid;
      cand[n].gpus = e->gpus;
      at[n++] = i;
    }
    if (!n) return;
    long np = mkt_rule_host_choose(c->rule, cand, n, &l, f, pick);
    if (np < 0) SIM_FATAL("clearing rule %s: %s", c->rule->name, mkt_strerror((int)np));
    if (np == 0) return;
    uint32_t qi = at[pick[0]], s = m->q[qi];
    mkt_order o = mkt__order_of(c, &m->jobs[s], -1);
    int64_t p = late(c, m, &o, prov);
    if (p < 0) return;
    mkt__q_del(m, qi);
    mkt__q_trim(m);
    if (!start_on(lp, c, m, s, prov, p)) return;
  }
}

/* A bid came back from the core (outbid, or its run could not go on): it waits again, with the
 * work it had saved. */
static int bid_handed_back(sim_lp *lp, const mkt_ctx *c, mkt_market *m, uint32_t s, double saved) {
  (void)lp, (void)c;
  mkt_job *j = &m->jobs[s];
  if (saved > 0) {
    j->done += saved;
    j->work -= saved;
    if (j->work < 1e-3) j->work = 1e-3;
  }
  j->state = J_QUEUED;
  mkt__q_push(m, s, 0);
  return 1;
}

/* The ranking key of a bid for the quick "can anything change" test: its price, or, under a rule
 * that chooses per host, its value to a host at the region's mean energy price (hosts' own prices
 * spread around it, so the test is a filter for when to clear, not the clearing: the rule itself
 * values the bid on every host). */
static double key_of(const mkt_ctx *c, const mkt_market *m, int64_t bid, unsigned cls) {
  if (!c->rule->host_value) return (double)bid;
  mkt_order o = mkt__class_order(c, cls, bid, 1, -1);
  mkt_lot l = {.gpus = 1, .mem_gb = INFINITY, .pl_min_w = 0, .pl_max_w = INFINITY};
  l.energy_musd_wh = c->energy_musd_wh[m->region];
  return (double)c->rule->host_value(&o, &l);
}

typedef struct cand {
  double key;
  uint32_t slot;
  uint32_t qpos;
} cand;
static int cand_desc(const void *a, const void *b) {
  const cand *x = a, *y = b;
  if (x->key != y->key) return x->key > y->key ? -1 : 1;
  return x->slot < y->slot ? -1 : (x->slot > y->slot);
}

/* ---- clients' strategies (mkt_strategy.h) ----------------------------------------------------- */
/* Draws the strategy of new bid j from its class's mix and sets its bid. */
static void bid_strategy(sim_lp *lp, const mkt_ctx *c, mkt_market *m, mkt_job *j) {
  const mkt_class_cfg *cc = &c->cfg->cls[j->cls];
  double tot = c->strat_tot[j->cls];
  j->strat = MKT_STRAT_TRUTHFUL;
  j->bid = j->value;
  if (!(tot > cc->strategies[MKT_STRAT_TRUTHFUL])) return; /* all truthful: no draw, as before strategies */
  double u = gsl_rng_uniform(sim_lp_rng(lp)) * tot, acc = 0;
  for (unsigned i = 0; i < MKT_NSTRATS; i++) {
    acc += cc->strategies[i];
    if (u < acc) {
      j->strat = (uint8_t)i;
      break;
    }
  }
  double v = (double)j->value;
  if (j->strat == MKT_STRAT_SHADE) {
    /* pay as bid: the first-price equilibrium among the bids waiting now and this one */
    if (c->rule->pays_bid && c->bne[j->cls]) {
      unsigned n = m->nlive + 1 < MKT_BNE_NMAX ? m->nlive + 1 : MKT_BNE_NMAX;
      j->bid = mkt_lround(mkt_bne_bid(c->bne[j->cls], v, cc->value_usd_h * MKT_MUSD, n));
    } else {
      j->bid = mkt_lround(cc->shade_factor * v);
    }
  } else if (j->strat == MKT_STRAT_ADAPTIVE) {
    j->margin = (float)m->margin[j->cls];
    j->bid = mkt_lround(v * (1.0 - j->margin));
  }
  if (j->bid > j->value) j->bid = j->value;
  if (j->bid < 0) j->bid = 0;
}

/* An adaptive bid that lost a clearing bids closer to its value. */
static void adapt_losers(const mkt_ctx *c, mkt_market *m) {
  if (!c->has_adaptive) return; /* no pass over the queue for nothing */
  for (uint32_t i = m->qhead; i < m->qlen; i++) {
    if (m->q[i] == UINT32_MAX) continue;
    mkt_job *j = &m->jobs[m->q[i]];
    if (j->strat != MKT_STRAT_ADAPTIVE) continue;
    const mkt_class_cfg *cc = &c->cfg->cls[j->cls];
    j->margin = (float)mkt_adapt_update(j->margin, 0, cc->adapt_rate, cc->adapt_step, cc->adapt_max);
    int64_t b = mkt_lround((double)j->value * (1.0 - j->margin));
    if (b > j->bid) j->bid = b < j->value ? b : j->value; /* a waiting bid only rises */
    m->qe[i].bid = j->bid;
  }
}

/* A new bid (the pool's arrive): its client's strategy and bid, counted per strategy. */
static void bid_arrive(sim_lp *lp, const mkt_ctx *c, mkt_market *m, mkt_job *j) {
  bid_strategy(lp, c, m, j);
  mkt__series(lp, c, MKT_S_RSTRAT, j->strat * MKT_RS_N + MKT_RS_JOBS, 0, 1);
}

/* An adaptive bid won (the pool's started): its class's next bidders shade as it would have next
 * time. */
static void bid_won(const mkt_ctx *c, mkt_market *m, const mkt_job *j) {
  if (j->strat != MKT_STRAT_ADAPTIVE) return;
  const mkt_class_cfg *cc = &c->cfg->cls[j->cls];
  m->margin[j->cls] = mkt_adapt_update(j->margin, 1, cc->adapt_rate, cc->adapt_step, cc->adapt_max);
}

/* Before any rental: the minimum bid, or half the fixed pool's price when there is none (an
 * ASSUMPTION). */
static double bid_prior(const mkt_ctx *c) {
  return c->min_bid > 0 ? (double)c->min_bid : 0.5 * (double)c->posted[c->ref_gpu];
}

/* The pool's quote to providers: what the rentals started lately paid, at its utilization. */
static int64_t bid_quote(const mkt_ctx *c, const mkt_market *m, const mkt_pstat *ps) {
  (void)ps;
  return mkt__quote_rental(c, m, mkt_lround(m->price_h));
}

static void bid_tick(sim_lp *lp, const mkt_ctx *c, mkt_market *m) {
  const mkt_rule_ops *rule = c->rule;
  adapt_losers(c, m);
  /* running bids on hosts still in the pool (a bid runs on one host: its first run's) */
  uint32_t nrun = 0, nq = 0;
  for (uint32_t s = 0; s < m->njobs; s++) nrun += m->jobs[s].state == J_RUNNING;
  if (!m->nlive && (!rule->reprice || !nrun)) return; /* nothing waits and prices stand */
  cand *run = malloc((nrun ? nrun : 1) * sizeof *run), *wq = malloc((m->nlive ? m->nlive : 1) * sizeof *wq);
  if (!run || !wq) SIM_FATAL("out of memory");
  double rmin = INFINITY, qmax = -INFINITY;
  int idle_beside = 0; /* a running bid's host has idle GPUs (read under a per-host rule) */
  uint32_t k = 0;
  for (uint32_t s = 0; s < m->njobs; s++) {
    const mkt_job *j = &m->jobs[s];
    if (j->state != J_RUNNING) continue;
    const mkt_run *r = NULL;
    for (int i = 0; i < j->nruns && !r; i++)
      if (j->runs[i].active && !j->runs[i].doomed) r = &j->runs[i];
    const mkt_host *h = r ? mkt__cg_host(m, &m->cg[r->gpus[0]]) : NULL;
    if (!h || h->pos < 0) continue;
    if (rule->host_value && !idle_beside) idle_beside = free_gpus(c, m, h->prov) > 0;
    run[k] = (cand){key_of(c, m, j->bid, j->cls), s, 0};
    if (run[k].key < rmin) rmin = run[k].key;
    k++;
  }
  nrun = k;
  for (uint32_t i = m->qhead; i < m->qlen; i++) {
    if (m->q[i] != UINT32_MAX) {
      const mkt_qent *e = q_ent(m, i);
      wq[nq] = (cand){key_of(c, m, e->bid, e->cls), m->q[i], i};
      if (wq[nq].key > qmax) qmax = wq[nq].key;
      nq++;
    }
  }
  /* Rules that keep prices: nothing changes unless a waiting bid outranks a running one (idle GPUs
   * took what fits them between clearings), or, under a per-host rule, a running bid's host has
   * idle GPUs: a bid below every running one may take them and a running bid's (a bigger set that
   * profits the host more). */
  if (!rule->reprice && (nq == 0 || (qmax <= rmin && !idle_beside))) {
    for (uint32_t i = 0; i < m->navail && m->nlive; i++)
      if (m->afree[i]) bid_host_free(lp, c, m, m->avail[i]); /* it does nothing on a busy host */
    free(run);
    free(wq);
    return;
  }
  qsort(wq, nq, sizeof *wq, cand_desc);
  qsort(run, nrun, sizeof *run, cand_desc);
  if (nq > CLEAR_WAITING) nq = CLEAR_WAITING;                    /* the best waiting bids */
  uint32_t r0 = nrun > CLEAR_RUNNING ? nrun - CLEAR_RUNNING : 0; /* the weakest running bids */
  uint32_t nr = nrun - r0;
  /* lots: the running bids' hosts, then hosts with free GPUs */
  uint32_t cap = nr + CLEAR_HOSTS, nl = 0;
  uint32_t *lot_prov = malloc((cap ? cap : 1) * sizeof *lot_prov);
  mkt_lot *lots = malloc((cap ? cap : 1) * sizeof *lots);
  mkt_order *ord = malloc((nr + nq ? nr + nq : 1) * sizeof *ord);
  uint32_t *oslot = malloc((nr + nq ? nr + nq : 1) * sizeof *oslot);
  int *win = malloc((nr + nq ? nr + nq : 1) * sizeof *win);
  int32_t *lot = malloc((nr + nq ? nr + nq : 1) * sizeof *lot);
  int64_t *pay = malloc((nr + nq ? nr + nq : 1) * sizeof *pay);
  int32_t *lot_of_host = malloc((m->navail ? m->navail : 1) * sizeof *lot_of_host);
  if (!lot_prov || !lots || !ord || !oslot || !win || !lot || !pay || !lot_of_host) SIM_FATAL("out of memory");
  for (uint32_t i = 0; i < m->navail; i++) lot_of_host[i] = -1;
  uint32_t no = 0;
  for (uint32_t i = r0; i < nrun; i++) {
    const mkt_job *j = &m->jobs[run[i].slot];
    const mkt_run *r = NULL;
    for (int q = 0; q < j->nruns && !r; q++)
      if (j->runs[q].active && !j->runs[q].doomed) r = &j->runs[q];
    const mkt_host *h = mkt__cg_host(m, &m->cg[r->gpus[0]]);
    uint32_t prov = h->prov;
    int32_t ai = h->pos;
    if (lot_of_host[ai] < 0) {
      lot_of_host[ai] = (int32_t)nl;
      lot_prov[nl] = prov;
      lots[nl] = mkt__lot_of(c, m->region, prov, free_gpus(c, m, prov));
      nl++;
    }
    lots[lot_of_host[ai]].gpus += r->n; /* its own GPUs are on offer again */
    ord[no] = mkt__order_of(c, j, lot_of_host[ai]);
    oslot[no++] = run[i].slot;
  }
  /* hosts with free GPUs: the classes' lists in turn, each host once */
  for (uint32_t x = 0, more = 1; more && nl < cap; x++) {
    more = 0;
    for (unsigned k = 0; k < MKT_NCLASSES && nl < cap; k++) {
      if (x >= m->nfre[k]) continue;
      more = 1;
      uint32_t i = m->fre[k][x];
      if (lot_of_host[i] >= 0) continue;
      unsigned f = m->afree[i]; /* free_gpus of an available host, without its record */
      uint32_t prov = m->avail[i];
      lot_of_host[i] = (int32_t)nl;
      lot_prov[nl] = prov;
      lots[nl++] = mkt__lot_of(c, m->region, prov, f);
    }
  }
  uint32_t first_waiting = no;
  for (uint32_t i = 0; i < nq; i++) {
    const mkt_qent *e = q_ent(m, wq[i].qpos);
    ord[no] = mkt__class_order(c, e->cls, e->bid, e->gpus, -1); /* mkt__order_of of its job */
    oslot[no++] = wq[i].slot;
  }
  mkt_clearing out = {win, lot, pay};
  long rc = rule->clear(ord, no, lots, nl, &out);
  if (rc < 0) SIM_FATAL("clearing rule %s failed: %s", rule->name, mkt_strerror((int)rc));
  if (rule->reference) {
    int64_t ref = rule->reference(ord, no, &out);
    if (ref >= 0) m->last_clear = ref;
  }
  /* Waiting winners leave the queue first (positions stay valid until the core hands bids back
   * and the queue may be compacted). */
  for (uint32_t i = 0; i < nq; i++)
    if (win[first_waiting + i]) mkt__q_del(m, wq[i].qpos);
  mkt__q_trim(m);
  /* Running losers are preempted; running winners are re-priced where the rule re-prices. The
   * hosts the losers leave wait for the winners the rule chose for them (mkt_market.held). */
  m->clearing = 1;
  for (uint32_t i = 0; i < first_waiting; i++) {
    if (!win[i])
      mkt__withdraw(lp, c, m, oslot[i]);
    else if (rule->reprice && m->jobs[oslot[i]].state == J_RUNNING)
      mkt__reprice(lp, c, m, oslot[i], pay[i]);
  }
  /* Waiting winners start on their host, best first. */
  for (uint32_t i = first_waiting; i < no; i++) {
    if (!win[i]) continue;
    uint32_t s = oslot[i], prov = lot_prov[lot[i]];
    if (free_gpus(c, m, prov) >= m->jobs[s].gpus) {
      start_on(lp, c, m, s, prov, pay[i]);
    } else {
      /* its lot is a running winner's host that the rule moved elsewhere (a running bid stays
       * where it runs) or went to another bid's standby: it goes to a free host as a new bid does */
      bid_submit(lp, c, m, s);
    }
  }
  m->clearing = 0;
  for (uint32_t i = 0; i < m->nheld; i++) /* hosts still free take waiting bids, as always */
    bid_host_free(lp, c, m, m->held[i]);  /* (it does nothing on a host with none free) */
  m->nheld = 0;
  free(run);
  free(wq);
  free(lot_prov);
  free(lots);
  free(ord);
  free(oslot);
  free(win);
  free(lot);
  free(pay);
  free(lot_of_host);
}

const mkt__pool_ops mkt__pool_bidding = {.name = "bidding",
                                         .gpu_price = bid_price,
                                         .submit = bid_submit,
                                         .tick = bid_tick,
                                         .host_free = bid_host_free,
                                         .handed_back = bid_handed_back,
                                         .quote = bid_quote,
                                         .prior_price = bid_prior,
                                         .arrive = bid_arrive,
                                         .started = bid_won,
                                         .hold = 1,
                                         .free_hosts = 1,
                                         .bids = 1};
