/* mkt_internal.h - what the market model's files share: the message protocol, the market and
 * provider LP states, the pool descriptors, and the placement layer on the scheduling core.
 *
 * Files, by concept, each calling only files below it (scripts/market_deps.py, test
 * market_no_cycle):
 *   mkt_model.c     scenario keys, build, metrics, end-of-run checks, the LP type table
 *   mkt_market.c    the market LP: arrivals, traces, billing ticks, stakes
 *   mkt_provider.c  the provider LP: churn, calendar, self-use, income, pool switching
 *   mkt_pool.c      the pools' table; pool_fixed.c, pool_bidding.c, pool_flexible.c one pool each
 *                   (mkt__pool_ops: what differs between pools is in its hooks and fields)
 *   mkt_place.c     the market's side of the scheduling core: hosts join and leave the core, jobs
 *                   are submitted and withdrawn, decisions are played out and billed per GPU
 *   mkt_treasury.c  a pool's treasury as its providers claim from it
 *   mkt_jobs.c      job slots, the bid queue, job records, orders and lots, small helpers
 * The peers' calls go down too: a market tells its providers their rentals through
 * mkt_market.rented, which the market LP sets (mkt__prov_rented).
 *
 * LP layout: `worlds` copies of the whole market (one per compared policy, all on common random
 * numbers: LP k of every world draws from stream k). Within a world: markets first (region *
 * MKT_NPOOLS + pool), then providers in region order.
 */
#ifndef MKT_INTERNAL_H
#define MKT_INTERNAL_H

#include "models/market/mkt_model.h"
#include "models/market/mkt_respond.h"
#include "models/market/mkt_rule.h"
#include "models/market/mkt_strategy.h"
#include "models/sched/sched.h"
#include "models/sched/sched_ft.h"
#include "sim/bigmem.h"

#include <math.h>
#include <string.h>

/* ---- messages -------------------------------------------------------------------------------- */
enum {
  M_AVAIL = 1,
  M_UNAVAIL,
  M_STAKE,
  M_UNSTAKE,
  M_DEPART, /* provider -> market */
  M_PAY,
  M_SLASH, /* market -> provider */
  M_TICK,
  M_ARRIVE,
  M_TRACE,
  M_FINISH,
  M_CKPT,
  M_WAKE,
  M_DETECT,
  M_MCLOSE, /* market self-events */
  M_CHURN,
  M_CAL,
  M_SELF,
  M_REVIEW, /* provider self-events */
  /* reactions (market.responses) */
  M_JOB,      /* front door -> market: a client chose this pool (cls, slot: GPUs, a: value, b: run time) */
  M_BULLETIN, /* market -> front door: what its clients see (cls, flag: pool, a: price, b: wait ms,
                 gen: interruptions per job x 1000) */
  M_QUOTE,    /* provider -> market: what would I earn here? (gen: the provider's review) */
  M_QUOTED    /* market -> provider: a: musd per available GPU-hour, b: utilization x 1e6, flag: pool */
};
enum { PAY_RENTAL, PAY_STAKING, PAY_REFUND };

typedef struct mkt_msg {
  uint8_t kind;
  uint8_t reason; /* PAY: PAY_*; UNAVAIL: 1 announced */
  uint8_t flag;
  uint8_t cls;
  uint32_t slot;  /* job slot (market self-events); provider index (DETECT) */
  uint32_t gen;   /* run id / session / timer generation */
  uint32_t epoch; /* FINISH / CKPT: to drop stale timers */
  int64_t a;      /* amount (musd), GPUs, interval start (ms) */
  int64_t b;      /* interval end (ms), session; CKPT, WAKE: a double's bits (mkt__d2i) */
} mkt_msg;
/* An UNAVAIL with flag 1 carries the provider's staking claim up to its departure (what a CLAIM
 * sent right after it would say: from = gen:epoch, to = a), one message instead of two. */
static inline int64_t mkt__unavail_claim_from(const struct mkt_msg *m);
static inline int64_t mkt__d2i(double x) {
  int64_t i;
  memcpy(&i, &x, sizeof i);
  return i;
}
static inline int64_t mkt__unavail_claim_from(const mkt_msg *m) { return (int64_t)((uint64_t)m->gen << 32 | m->epoch); }
static inline double mkt__i2d(int64_t i) {
  double x;
  memcpy(&x, &i, sizeof x);
  return x;
}

/* ---- the context, per world ------------------------------------------------------------------ */
static inline const mkt_ctx *mkt__ctx(sim_lp *lp) { return sim_lp_ctx(lp); }
static inline uint64_t mkt__per_world(const mkt_ctx *c) { return c->nmarkets + c->nprov; }
/* The LP layout. A world's LPs are its regions one after another, each its MKT_NPOOLS markets (in
 * pool order) and then its providers (reg_first[r] .. reg_first[r + 1]). No message leaves its
 * region, so a region is a group of the engine (sim_model.group_first): on several ranks each rank
 * owns whole regions and the ranks do not synchronise. The entities keep their numbers of the
 * layout before (markets first, then providers), which their random streams and job ids use:
 * market region * MKT_NPOOLS + pool, provider nmarkets + i. Both orders agree within a region,
 * where all messages stay, so every LP sees its events in the same order in both. */
static inline uint64_t mkt__region_first(const mkt_ctx *c, unsigned r) { /* its first market, in its world */
  return c->reg_first[r] + (uint64_t)r * MKT_NPOOLS;
}
/* The region of an LP at x in its world (few regions: a scan). */
static inline unsigned mkt__region_at(const mkt_ctx *c, uint64_t x) {
  unsigned r = 0;
  while (r + 1 < c->nreg && x >= mkt__region_first(c, r + 1)) r++;
  return r;
}
static inline int mkt__is_market_at(const mkt_ctx *c, uint64_t x) {
  return x - mkt__region_first(c, mkt__region_at(c, x)) < MKT_NPOOLS;
}
/* The index of the provider at x in its world (x must be a provider's). */
static inline uint64_t mkt__prov_at(const mkt_ctx *c, uint64_t x) {
  return x - ((uint64_t)mkt__region_at(c, x) + 1) * MKT_NPOOLS;
}
/* The entity number of the LP at x in its world (see the layout above). */
static inline uint64_t mkt__entity_at(const mkt_ctx *c, uint64_t x) {
  unsigned r = mkt__region_at(c, x);
  uint64_t k = x - mkt__region_first(c, r);
  return k < MKT_NPOOLS ? (uint64_t)r * MKT_NPOOLS + k : c->nmarkets + x - ((uint64_t)r + 1) * MKT_NPOOLS;
}
static inline unsigned mkt__world(const mkt_ctx *c, sim_lp *lp) {
  return (unsigned)(sim_lp_id(lp) / mkt__per_world(c));
}
/* This LP's entity number. */
static inline uint64_t mkt__local(const mkt_ctx *c, sim_lp *lp) {
  return mkt__entity_at(c, sim_lp_id(lp) % mkt__per_world(c));
}
static inline sim_id mkt__market_id(const mkt_ctx *c, unsigned world, unsigned region, unsigned pool) {
  return (sim_id)world * mkt__per_world(c) + mkt__region_first(c, region) + pool;
}
/* Provider prov of `region` (its own, c->prov[prov].region, which its markets know). */
static inline sim_id mkt__prov_id(const mkt_ctx *c, unsigned world, unsigned region, uint64_t prov) {
  return (sim_id)world * mkt__per_world(c) + prov + ((uint64_t)region + 1) * MKT_NPOOLS;
}
/* The provider a market of `region` hears from at src (when src is a provider's LP). */
static inline uint64_t mkt__prov_of(const mkt_ctx *c, unsigned region, sim_id src) {
  return src % mkt__per_world(c) - ((uint64_t)region + 1) * MKT_NPOOLS;
}
static inline int64_t mkt__ms(double t) { return mkt_lround(t * 1000.0); }
/* Series of this LP's world. */
static inline void mkt__series(sim_lp *lp, const mkt_ctx *c, unsigned s, unsigned col, double t, int64_t v) {
  sim_series_add(lp, mkt__world(c, lp) * MKT_NSERIES + s, col, t, v);
}
static inline void mkt__book(sim_lp *lp, const mkt_ctx *c, unsigned acct, int64_t v) {
  if (v) mkt__series(lp, c, MKT_S_LEDGER, acct, 0, v);
}
void mkt__send(sim_lp *lp, sim_id dst, double delay, const mkt_msg *m);
/* Array p of *cap elements grown (by an eighth) to hold at least `need`; fatal when out of memory. */
void *mkt__grow(void *p, uint32_t *cap, uint32_t need, size_t elem);
/* The capacity a table of cap entries grows to for need (mkt__grow's). */
uint32_t mkt__grown(uint32_t cap, uint32_t need);
/* Adds mult per ms of [t0, t1) to series s, column col, split over its time bins. */
void mkt__add_span(sim_lp *lp, const mkt_ctx *c, unsigned s, unsigned col, double t0, double t1, int64_t mult);

/* ---- market LP state ------------------------------------------------------------------------- */
/* What clients observe per pool and class (responses.pool_choice, demand). */
enum { MKT_OBS_PRICE, MKT_OBS_WAIT, MKT_OBS_INTR, MKT_NOBS }; /* musd per GPU-hour, s, per job */
enum { J_FREE, J_QUEUED, J_CORE, J_RUNNING, J_LEAVING };

#define MKT__RUN_INL 8 /* members a run keeps in its record; a wider run keeps them in a block */
typedef struct mkt_run {
  uint32_t id, epoch, ck;
  uint8_t active : 1, doomed : 1; /* doomed: a member left unseen; the run cannot finish */
  uint8_t nsb;
  uint16_t n; /* members: the job's width (up to MKT_MAX_JOB_GPUS); MKT__RG names them */
  union {
    uint32_t gpus[MKT__RUN_INL]; /* core GPU ids of its members, n <= MKT__RUN_INL */
    uint32_t *wide;              /* n > MKT__RUN_INL: a block of n (runs of a job all have its width) */
  };
  uint32_t sb[8]; /* and of its standbys (the core frees them without a decision when
                  it stops the run or ends the job) */
  double work, last_t, pause_until, rate, t_durable, t_start;
  double fin_t; /* when its pending finish timer (epoch) fires, INFINITY if none */
  /* the core's checkpoint plan (sched cfg.ckpt_analytic), played out by mkt_place.c's ckpt_play:
   * interval and cost (s), when the next checkpoint starts (INFINITY: none), when the last one
   * started completes and the work it saves (ck_done INFINITY: none pending), and the durable
   * work the core was last told; the durable work */
  double ck_T, ck_C, ck_next, ck_done, ck_work, told, ck_saved;
} mkt_run;
_Static_assert(sizeof(mkt_run) == 192, "a run record is three cache lines (a wide run's members apart)");

typedef struct mkt_job {
  uint64_t id;
  double submit, first_start, deadline;
  double work;       /* work units (reference GPU-seconds) of this submission */
  double work_total; /* of the whole job */
  double done;       /* work units already saved by earlier submissions (bids that came back) */
  int64_t value;     /* valuation, musd per GPU-hour */
  int64_t bid;       /* what it bids in the bidding pool (truthful: = value) */
  int64_t price;     /* bidding pool: price per GPU-hour it pays now */
  int64_t cost;      /* billed so far (net of penalty refunds), musd */
  int64_t gpu_ms;    /* GPU time billed (members and standbys), GPU*ms */
  int64_t standby_ms, lost_ms, ckpt_ms, redundant_ms; /* overheads, GPU*ms */
  /* communication: all-reduce seconds per work unit of its runs (sched_cluster_step's t_comm / the
   * step's work; 0 for one member) and the members' GPU-seconds spent in it so far */
  double comm_per_work, comm_gpu_s;
  uint16_t hosts; /* distinct hosts of its first placement */
  uint16_t node;  /* 1 + the GP Node that took it (nodes.queues), 0 none */
  uint16_t gpus, interruptions, replacements;
  uint8_t cls, state, from_trace, started, nruns;
  uint8_t strat; /* bidding pool: mkt_strategy of its client */
  float margin;  /* adaptive bidder: bid = value x (1 - margin) */
  uint32_t cj;   /* its job id in the core while the core holds it (mkt__submit to the JOB_FORGET
                    that follows its end), MKT__NOCORE else; in the line of runs and run0 */
  mkt_run *runs; /* nruns: as many as its policy runs at once (mkt__job_runs); &run0 when
                             that is one (most policies), so that no other block is read */
  mkt_run run0;
} mkt_job;
#define MKT__NOCORE UINT32_MAX
/* The members of run r (r->n of them). */
#define MKT__RG(r) ((r)->n > MKT__RUN_INL ? (r)->wide : (r)->gpus)
/* Frees a job's run slots (those not in its record) and the member blocks of its wide runs. */
static inline void mkt__job_runs_free(mkt_job *j) {
  if (j->runs)
    for (unsigned k = 0; k < j->nruns; k++)
      if (j->runs[k].n > MKT__RUN_INL) {
        free(j->runs[k].wide);
        j->runs[k].n = 0;
      }
  if (j->runs != &j->run0) free(j->runs);
  j->runs = NULL;
}
/* Run slots a job of class k needs in world w, as its policy's row says (sched_ft_slots: its
 * copies, and a backup's slot). */
static inline uint8_t mkt__job_runs(const mkt_ctx *c, unsigned w, unsigned k) {
  return (uint8_t)sched_ft_slots(&c->ft[w][k]);
}

#define MKT__MAX_HOST_GPUS 8 /* GPUs per provider */

/* A host of this pool as the market sees it (cid: -1 never joined, -2 departed, ids recycled). */
typedef struct mkt_host {
  uint32_t prov;      /* global provider index */
  uint32_t session;   /* provider's availability session (from AVAIL) */
  int32_t cid;        /* first core GPU id of its GPUs, -1 before it first joins */
  uint8_t busy;       /* its GPUs employed (members and standbys; at most MKT__MAX_HOST_GPUS) */
  uint8_t sby;        /* of which standbys */
  uint8_t told;       /* busy as its provider last learnt it in this session (mkt__prov_rented) */
  uint8_t in : 1;     /* available in this pool */
  uint8_t unseen : 1; /* left unannounced; the core is told at detection */
  uint8_t gpu, ngpus; /* its provider's GPU model and count (c->prov[prov]'s, fixed for the run): employing,
                       * releasing and billing its GPUs read them here, on the line they write */
  uint16_t failures;  /* departures while employed */
  int32_t pos;        /* index in the pool's avail list, -1 when not available */
  double gone_t;      /* when it left (billing stops there) */
} mkt_host;           /* 32 bytes; its stake, where it has one, is in mkt_market.hstake */
_Static_assert(sizeof(mkt_host) == 32, "a host record is half a cache line");

/* The money a host has at stake in its pool, kept beside the host records (the same index) and
 * only as far as a host with a stake: only the flexible pool's providers stake, so the other pools
 * keep none (16 bytes less per host record, of which a million-GPU market holds 1.4 per GPU). */
typedef struct mkt_stake {
  int64_t stake;   /* held for it, musd */
  int64_t slashed; /* slashed from it, musd */
} mkt_stake;

/* A core GPU, as the market bills it. */
typedef struct mkt_cgpu {
  uint32_t host : 31;   /* its host's index in mkt_market.host (host records never move to another index, and
                         * a provider has one in each pool, so the host names the provider, h->prov);
                         * MKT__NOHOST: a free id */
  uint32_t standby : 1; /* employed as a standby */
  uint32_t slot;        /* job slot while employed, UINT32_MAX when not */
  double since;         /* billed up to; its rate follows from its job or GPU model (cg_rate, mkt_place.c) */
} mkt_cgpu;             /* 16 bytes: a core GPU id of the market's, one per GPU */
_Static_assert(sizeof(mkt_cgpu) == 16, "a market GPU record is 16 bytes");
#define MKT__NOHOST 0x7fffffffu

/* A waiting bid as the bidding pool's scans read it (a copy of its job's fields). */
typedef struct mkt_qent {
  int64_t bid;
  uint16_t gpus;
  uint8_t cls;
} mkt_qent;

typedef struct mkt_market {
  unsigned world, region, pool;
  uint64_t nextid;
  const struct mkt__pool_ops *ops;
  /* Tells the provider at plp that this pool employs n of its GPUs in its session (mkt__prov_rented,
   * set by the market LP at init: the placement on the core reaches the provider LP through it). */
  void (*rented)(sim_lp *plp, unsigned pool, unsigned n, uint32_t session);
  sched *core;
  sim_lp *lp; /* set while handling an event (the core's sink) */
  mkt_job *jobs;
  uint32_t njobs, capjobs; /* slots = the core's job ids */
  uint32_t *freeslots;
  uint32_t nfree;
  uint32_t *q;
  mkt_qent *qe; /* beside q: each waiting bid's price, GPUs and class (mkt__q_push, adapt_losers), which the
                   bidding pool's scans read instead of the job records */
  uint32_t qhead, qlen, qcap; /* bids waiting (bidding pool), FIFO; UINT32_MAX = removed */
  uint32_t nlive;
  uint32_t qdel; /* entries removed since mkt__q_trim last packed the queue's front */
  uint32_t *avail;
  uint32_t navail, capavail; /* hosts available in the pool (global provider ids) */
  uint8_t *afree;            /* beside avail: each host's GPUs not employed (a scan skips the busy ones
                                without reading their records; avail_free_set, mkt_place.c) */
  /* Pools that find hosts for their jobs themselves (ops->free_hosts: the bidding pool) keep, per
   * job class, the available hosts with free GPUs whose GPU model fits the class (memory and power
   * range, c->gpu_cls_fit): their avail positions in fre[k][0 .. nfre[k]), and beside avail each
   * host's index there (UINT32_MAX: not in it). A scan for a free host reads that list, never the
   * busy hosts nor the GPUs that can never take the job: at a million GPUs x 10 days region 0's
   * bidding pool listed 96,674 available hosts, a new bid's scan of the first 256 found them all
   * busy while 84,608 had free GPUs, and 122,259 of its 122,287 waiting bids fitted one of those
   * (docs/history/performance-log.md, "Bids that waited beside free GPUs"). */
  uint32_t *fre[MKT_NCLASSES], *fpos[MKT_NCLASSES];
  uint32_t nfre[MKT_NCLASSES];
  int32_t *hix;   /* per region provider: index in host, -1 */
  mkt_host *host; /* on cache lines in host_block (sim_bigmem_realloc_lines) */
  void *host_block;
  uint32_t nhost, caphost; /* hosts that ever staked or joined this pool */
  mkt_stake *hstake;       /* the stakes of host[0 .. nhstake) (mkt__stake), zero past it */
  uint32_t nhstake, caphstake;
  mkt_cgpu *cg;
  uint32_t ncg, capcg;                     /* core GPUs */
  uint32_t *spare[MKT__MAX_HOST_GPUS + 1]; /* first ids of recycled ranges, by GPU count */
  uint32_t nspare[MKT__MAX_HOST_GPUS + 1], capspare[MKT__MAX_HOST_GPUS + 1];
  uint32_t *dirty;
  uint32_t ndirty, capdirty; /* hosts (indices in host) whose rented count changed in this event */
  uint32_t *dirty_out;
  uint32_t capdirty_out; /* the list being sent (swapped with dirty) */
  /* While the bidding pool's clearing preempts its losers and starts its winners (clearing = 1),
   * hosts whose GPUs come free are held here (by its host_free) instead of taking waiting bids at
   * once, so that a loser's host goes to the winner the rule chose for it; the pool lets them take
   * waiting bids after its winners started. */
  uint32_t *held;
  uint32_t nheld, capheld;
  uint8_t clearing;
  uint32_t *forget;
  uint32_t nforget, capforget; /* core ids of the jobs the core ended: forget after the event */
  /* The core's job ids are its own, dense over the jobs it holds (not the market's slots, which
   * bids waiting in the pool's queue take too): the core's job table is as long as the most jobs
   * it held at once. cslot: the market slot of each core id (NIL when free); cfree: free ids. */
  uint32_t *cslot, *cfree;
  uint32_t ncj, capcj, ncfree, capcfree;
  double wake_at;
  size_t trace_next;
  int64_t stakes, staked_score_milli;
  int64_t treasury, shortfall, rate;
  int64_t *rate_hist;
  int64_t last_clear; /* bidding: the rule's reference price, -1 */
  /* reactions (market.responses) */
  uint32_t arr_gen;                                /* front door: generation of the pending arrival */
  double demand_f[MKT_NCLASSES];                   /* front door: demand multiplier per class */
  double obs[MKT_NCLASSES][MKT_NOBS];              /* this pool, per class: what its clients experienced */
  double seen[MKT_NPOOLS][MKT_NCLASSES][MKT_NOBS]; /* front door: the region's pools as reported */
  double margin[MKT_NCLASSES];                     /* bidding: adaptive bidders' learned margin per class */
  double util;                                     /* rented / available GPUs of the pool (moving mean) */
  double price_h;                                  /* musd per GPU-hour of rentals started (moving mean) */
} mkt_market;

/* ---- pools (one file each) ------------------------------------------------------------------- */
typedef struct mkt__pool_ops {
  const char *name;
  /* musd per GPU-hour a host of this pool is billed at for a GPU of model g in region r (the
   * bidding pool: its ask at full power, the floor the core's price filter uses). */
  int64_t (*gpu_price)(const mkt_ctx *c, unsigned region, const mkt_pstat *ps);
  /* A new job (or a bid that came back) is in slot s. */
  void (*submit)(sim_lp *lp, const mkt_ctx *c, mkt_market *m, uint32_t s);
  /* Every billing interval, after the abandon pass. */
  void (*tick)(sim_lp *lp, const mkt_ctx *c, mkt_market *m);
  /* GPUs of host prov became free (joined, or released). May be NULL. */
  void (*host_free)(sim_lp *lp, const mkt_ctx *c, mkt_market *m, uint32_t prov);
  /* The core handed job s back (withdrawn or released) with `saved` work units kept. Returns 1
   * when the pool keeps the job (a bid waits again), 0 when the job leaves the market. */
  int (*handed_back)(sim_lp *lp, const mkt_ctx *c, mkt_market *m, uint32_t s, double saved);
  /* What a provider with GPUs like ps's would earn per available GPU-hour here now (musd), for
   * entry and goal-based switching (responses.entry, personas' goal). */
  int64_t (*quote)(const mkt_ctx *c, const mkt_market *m, const mkt_pstat *ps);
  /* What clients believe a reference GPU-hour costs here before any client of their class started
   * (musd per GPU-hour; responses.pool_choice, the pools' first quotes). */
  double (*prior_price)(const mkt_ctx *c);
  /* New job j arrives here (value drawn, bid = value): the pool may set its bid (the bidding pool
   * draws its client's strategy). May be NULL. */
  void (*arrive)(sim_lp *lp, const mkt_ctx *c, mkt_market *m, mkt_job *j);
  /* Job j started a run here (a bid won its host). May be NULL. */
  void (*started)(const mkt_ctx *c, mkt_market *m, const mkt_job *j);
  uint8_t hold;       /* jobs never wait in the core's queue (the pool's rule ranks them) */
  uint8_t treasury;   /* rental revenue feeds the pool's treasury; providers stake and claim */
  uint8_t penalty;    /* the host refunds penalty_h hours of an interrupted rental */
  uint8_t free_hosts; /* keeps the list of available hosts with free GPUs (mkt_market.fre) */
  uint8_t bids;       /* clients bid: a job pays its own price (mkt_job.price), at most its bid, its
                       * record shows the bid, and its payments count per client strategy */
  uint8_t front_door; /* the region's front door (mkt__front): it draws the region's clients and
                       * the other pools report to it; exactly one pool */
  uint8_t imposed;    /* posts a price per rented GPU-hour that its hosts do not choose (their
                       * personas' below_energy_cost decides whether they rent below energy) */
} mkt__pool_ops;

extern const mkt__pool_ops mkt__pool_fixed, mkt__pool_bidding, mkt__pool_flexible;
extern const mkt__pool_ops *mkt__pools[MKT_NPOOLS];
/* Puts the pool `ops` (defined outside the model: a plug-in, a test's toy pool) in the place of pool
 * `pool` (MKT_POOL_*): its markets run it, with that pool's scenario keys (share, fee) and, in the
 * results, ops->name. Call before a model is built, from one thread. Returns the descriptor it
 * replaced (to put back), or NULL, changing nothing, when pool is out of range or ops lacks a
 * name or one of gpu_price, submit, tick, handed_back, quote, prior_price. */
const mkt__pool_ops *mkt__pool_register(unsigned pool, const mkt__pool_ops *ops);
/* The index of the front-door pool (its descriptor's front_door). */
unsigned mkt__front_pool(void);
/* The descriptor of the pool called `name` (its first n characters at most, as a record holds
 * it), NULL for none. */
const mkt__pool_ops *mkt__pool_named(const char *name, size_t n);

/* Whether a persona's providers review their income: when it can change anything, that is they may
 * leave or come in (responses.entry), switch pools (patience and another pool), or claim staking
 * income (their pool's treasury: a persona that cannot switch stays in it). The others' reviews
 * would only split the spans of time they account, so they have none, and their LP type's state
 * is a line shorter (mkt_provider.c, mkt__type_of). */
static inline int mkt__persona_reviews(const mkt_config *cfg, const mkt_persona_cfg *pc) {
  return cfg->responses.entry || (pc->patience > 0 && pc->alt_pool != pc->pool) || mkt__pools[pc->pool]->treasury;
}

/* ---- placement on the core (mkt_place.c) ----------------------------------------------------- */
void mkt__place_init(sim_lp *lp, const mkt_ctx *c, mkt_market *m);
void mkt__place_fini(mkt_market *m);
void mkt__free_hosts_check(const mkt_ctx *c, const mkt_market *m);
/* Feeds one event to the core, then sends what the decisions changed (rented counts, wake-up,
 * forgotten jobs). */
void mkt__feed(sim_lp *lp, const mkt_ctx *c, mkt_market *m, sched_event *e);
/* Host prov's GPUs join / leave the core. announced = 0: the platform learns by heartbeat
 * timeout, market.heartbeat_timeout after the departure. */
void mkt__host_join(sim_lp *lp, const mkt_ctx *c, mkt_market *m, uint32_t prov, uint32_t session);
void mkt__host_leave(sim_lp *lp, const mkt_ctx *c, mkt_market *m, uint32_t prov, int announced, double t_left);
void mkt__host_detect(sim_lp *lp, const mkt_ctx *c, mkt_market *m, uint32_t prov, uint32_t session);
/* Host prov has left this pool for another (it switched pools): its core GPU ids are recycled
 * for the next host that joins with as many GPUs; its record (reputation, stake, failures)
 * stays, and it gets fresh ids if it comes back. */
void mkt__host_depart(sim_lp *lp, const mkt_ctx *c, mkt_market *m, uint32_t prov);
/* Posted-price pools: 1 when some GPU model of the region has the memory job s needs and a price
 * (the pool's gpu_price) at or below its value; a job no model can take waits in the market's
 * queue until its patience runs out instead of blocking the head of the core's queue. */
int mkt__could_run(const mkt_ctx *c, const mkt_market *m, const mkt_job *j);
/* What the posted-price pools (fixed, flexible) share: submit to the core's queue (or wait in
 * the market when no GPU model could take the job), nothing to do at the tick, and a job handed
 * back (it gave up waiting) leaves. */
void mkt__posted_submit(sim_lp *lp, const mkt_ctx *c, mkt_market *m, uint32_t s);
void mkt__posted_tick(sim_lp *lp, const mkt_ctx *c, mkt_market *m);
int mkt__posted_handed_back(sim_lp *lp, const mkt_ctx *c, mkt_market *m, uint32_t s, double saved);
/* Quote of a pool whose providers earn a price per rented GPU-hour: utilization x (price - the
 * platform's fee - the GP Node's fee), musd per available GPU-hour. */
int64_t mkt__quote_rental(const mkt_ctx *c, const mkt_market *m, int64_t price);
/* Submits job s to the core (cand/ncand: the bidding rule's host, or NULL). */
void mkt__submit(sim_lp *lp, const mkt_ctx *c, mkt_market *m, uint32_t s, const uint32_t *cand, unsigned ncand);
void mkt__withdraw(sim_lp *lp, const mkt_ctx *c, mkt_market *m, uint32_t s);
/* Self-events of the executor. */
void mkt__on_finish(sim_lp *lp, const mkt_ctx *c, mkt_market *m, const mkt_msg *msg);
void mkt__on_ckpt(sim_lp *lp, const mkt_ctx *c, mkt_market *m, const mkt_msg *msg);
void mkt__on_wake(sim_lp *lp, const mkt_ctx *c, mkt_market *m, const mkt_msg *msg);
/* Plays every running job's checkpoints and work up to now (book closing: their pauses and
 * communication are booked). */
void mkt__ckpt_all(sim_lp *lp, const mkt_ctx *c, mkt_market *m);
/* Bills every employed GPU up to now (book closing). */
void mkt__bill_all(sim_lp *lp, const mkt_ctx *c, mkt_market *m);
/* Re-prices job s (bidding rules that re-price): bills at the old price first. */
void mkt__reprice(sim_lp *lp, const mkt_ctx *c, mkt_market *m, uint32_t s, int64_t price);
/* Host prov of this pool (created on first use; pointers stay valid until the next creation). */
mkt_host *mkt__host(const mkt_ctx *c, mkt_market *m, uint32_t prov);
/* What host h of this pool has at stake (zero for a host past the stakes kept). */
static inline mkt_stake mkt__stake_of(const mkt_market *m, const mkt_host *h) {
  uint32_t i = (uint32_t)(h - m->host);
  return i < m->nhstake ? m->hstake[i] : (mkt_stake){0, 0};
}
/* Host h's stake, to change it (the stakes kept grow to cover it). */
mkt_stake *mkt__stake(mkt_market *m, const mkt_host *h);
/* The host of core GPU g (its record names it by index: no lookup through hix). */
static inline mkt_host *mkt__cg_host(const mkt_market *m, const mkt_cgpu *g) { return &m->host[g->host]; }
/* The core GPU ids of host prov (pool-local), *n of them; NULL before it first joined. */
const uint32_t *mkt__host_gpus(const mkt_ctx *c, mkt_market *m, uint32_t prov, unsigned *n, uint32_t *buf);

/* ---- job slots, the bid queue, job records, orders and lots (mkt_jobs.c) ---------------------- */
/* A free job slot of market m (the job table grown when none is free). */
uint32_t mkt__job_alloc(mkt_market *m);
/* Packs the queue's live entries to its front (their order kept). */
void mkt__q_compact(mkt_market *m);
uint32_t mkt__q_push(mkt_market *m, uint32_t slot, int front);
void mkt__q_del(mkt_market *m, uint32_t i);
/* After removals, where no queue position is held: drops the holes at the head and, every
 * MKT__Q_PACK_EVERY removals, packs the live entries of the first MKT__Q_PACK_SPAN positions
 * (their order kept), so that a scan of the head's window sees live bids. */
void mkt__q_trim(mkt_market *m);
#define MKT__Q_PACK_EVERY 256u
#define MKT__Q_PACK_SPAN 4096u
void mkt__job_record(sim_lp *lp, const mkt_ctx *c, const mkt_market *m, const mkt_job *j, double end,
                     const char *outcome);
/* 1 when job j (outcome, ended at `end`, NaN when still under way at `now`, the end of the run)
 * missed its deadline. */
int mkt__deadline_missed(const mkt_job *j, double end, const char *outcome, double now);
void mkt__job_free(mkt_market *m, uint32_t s);
void mkt__price_sample(sim_lp *lp, const mkt_ctx *c, unsigned gpu, double t, int64_t price);
/* The lot of host prov for the bidding rule (its GPUs not held by other pools' work). */
mkt_lot mkt__lot_of(const mkt_ctx *c, unsigned region, uint32_t prov, uint32_t free_gpus);
mkt_order mkt__order_of(const mkt_ctx *c, const mkt_job *j, int32_t home);
/* The order of a bid of class k at `price` for `gpus` GPUs (what mkt__order_of makes of its job). */
mkt_order mkt__class_order(const mkt_ctx *c, unsigned k, int64_t price, uint32_t gpus, int32_t home);

/* ---- reactions (market.responses) ----------------------------------------------------------- */
/* Arrivals go through each region's front door (its fixed-pool market), which draws the client,
 * chooses its pool and forwards it, when demand or pool choice respond. */
static inline int mkt__front(const mkt_ctx *c) { return c->cfg->responses.demand || c->cfg->responses.pool_choice; }
/* Pools' utilization and price are tracked for providers' quotes. */
static inline int mkt__quotes(const mkt_ctx *c) { return c->quotes; }
static inline void mkt__observe(const mkt_ctx *c, mkt_market *m, unsigned k, unsigned what, double x) {
  if (mkt__front(c)) m->obs[k][what] = mkt_ewma(m->obs[k][what], x, c->cfg->responses.memory_jobs);
}
/* Counters of the reactions' series (one bin). */
static inline void mkt__rpool(sim_lp *lp, const mkt_ctx *c, unsigned pool, unsigned col, int64_t v) {
  if (v) mkt__series(lp, c, MKT_S_RPOOL, pool * MKT_RP_N + col, 0, v);
}
/* A job's value of its completed work: value per GPU-hour x reference GPU-hours, musd. */
static inline int64_t mkt__job_value(const mkt_job *j) { return mkt_lround((double)j->value * j->work_total / 3600.0); }

/* ---- the provider, as its markets reach it (mkt_provider.c) ----------------------------------- */
/* The market of `pool` employs n of the GPUs of the provider at plp (its peer: the same region's
 * group) in its availability session `session`: heeded when that is its pool and session and it
 * is available. */
void mkt__prov_rented(sim_lp *plp, unsigned pool, unsigned n, uint32_t session);
/* The books of `pool` close (market.close, before the end): the provider at plp claims its staking
 * income up to now if it is in that pool. */
void mkt__prov_close(sim_lp *plp, unsigned pool);
/* ---- the treasury, as its providers reach it (mkt_treasury.c) ---------------------------------------- */
/* Provider prov (its LP src) claims its staking income of [from_ms, to_ms) from the treasury of the
 * market at mlp (its peer): paid now, the money arriving a latency later. */
void mkt__market_claim(sim_lp *mlp, uint32_t prov, sim_id src, int64_t from_ms, int64_t to_ms);

/* market, provider, provider that reviews (mkt__type_of); the table is the model's (mkt_model.c) */
enum { MKT__LP_MARKET, MKT__LP_PROV, MKT__LP_PROV_RV, MKT__NLPTYPES };
extern const sim_lptype mkt__lptypes[MKT__NLPTYPES];
extern const size_t mkt__msg_size;
/* The market LP's handlers (mkt_market.c). */
void mkt__market_init(sim_lp *lp, void *st);
void mkt__market_event(sim_lp *lp, void *st, const void *vmsg, sim_id src);
void mkt__market_finalize(sim_lp *lp, void *st);
void mkt__market_prefetch(const sim_lp *lp, const void *st, const void *vmsg, sim_id src);
void mkt__market_prefetch_early(const sim_lp *lp, const void *st, const void *vmsg, sim_id src);
/* The provider LP's handlers (mkt_provider.c), and its state's size: two cache lines, and a third
 * for a provider that reviews (mkt_provider.c checks them against its records). */
#define MKT__PROV_STATE 128
#define MKT__PROV_RV_STATE 64
void mkt__prov_init(sim_lp *lp, void *st);
void mkt__prov_event(sim_lp *lp, void *st, const void *vmsg, sim_id src);
void mkt__prov_finalize(sim_lp *lp, void *st);
void mkt__prov_prefetch(const sim_lp *lp, const void *st, const void *vmsg, sim_id src);
void mkt__prov_rv_prefetch(const sim_lp *lp, const void *st, const void *vmsg, sim_id src);

#endif
