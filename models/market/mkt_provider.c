/* mkt_provider.c - the provider LP: one host with its GPUs, its owner's persona (churn, calendar,
 * self-use), its pool, its income and its stake.
 *
 * The provider is the source of truth about its host's availability. It tells its pool's market
 * AVAIL (with a session number) when the host becomes available and UNAVAIL when it stops being
 * (announced for self-use and the owner's calendar, unannounced for churn: the platform then
 * learns it by heartbeat timeout). The market answers PAY (money) and SLASH (stake lost); how
 * many of its GPUs are employed the provider learns when the market employs or releases them
 * (mkt__prov_rented: the rental runs on its GPUs, it needs no message to know). Income and time
 * per state are counted here; money is booked in integer micro-USD.
 */
#include "models/market/mkt_internal.h"

#include <assert.h>
#include <gsl/gsl_randist.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { ST_DOWN, ST_OWNER, ST_IDLE, ST_RENTED, ST_OUT, ST_N };
static const char *const st_names[] = {"down", "owner", "idle", "rented", "out"};
/* Time per state is kept for what the providers table reports: available (idle and rented
 * together), self-use and down, three counters (st_ms); the time out of the market is the rest of
 * the run (mkt__prov_finalize: the spans flush adds up tile the run from 0, in whole ms). */
enum { SC_DOWN, SC_OWNER, SC_AVAIL, SC_N };
static const uint8_t st_counter[ST_N] = {SC_DOWN, SC_OWNER, SC_AVAIL, SC_AVAIL, SC_N};

/* The owner's timers: churn, self-use and calendar. The engine holds only the earliest of them
 * (arm): one pending event for the three, not three, which at a million providers is 48 MB less
 * of the engine's calendar (24 bytes an event) for the 24 bytes a provider keeps their times in.
 * Each is set only by its own event (and at init), so the one pending is always the earliest; a
 * tie goes to the lower index, the order mkt__prov_init sets them in. The review's time, which would not
 * fit in the lines, takes the slot of a timer its persona never sets (review_slot: no calendar, no
 * self-use or no churn), so that it is one of the timers the one event stands for: most personas
 * use two of the three, and at a million GPUs the engine's calendar holds 0.67 review events per
 * provider less (24 bytes each, 8 more of the chunks they leave part empty). A persona that uses
 * all three keeps its review an event of its own (rslot = T_N). */
enum { T_CHURN, T_SELF, T_CAL, T_N };
static const uint8_t t_kind[T_N] = {M_CHURN, M_SELF, M_CAL};

/* The first two lines, every provider's: what the frequent events touch (churn, self-use and
 * calendar changes, rentals, PAY: the flags, the timers, the open span, the counters flush and earn
 * add to), which mkt__prov_prefetch fetches, and the daily statistics. Whether it is available is its
 * state (idle or rented); its starting pool is its persona's (not kept); the days it closed are
 * `day`. A provider whose reviews can change nothing (mkt__persona_reviews: it cannot switch pools
 * or leave, and its pool has no treasury) never stakes, claims or reviews, and has these two lines
 * only: its LP type is "provider"; the others ("provider that reviews") have a third, mkt_prov_rv,
 * right after them. */
typedef struct mkt_prov {
  uint8_t state : 3;
  uint8_t up : 1, cal_busy : 1, self_busy : 1;
  uint8_t out : 1;       /* outside the market (responses.entry; or its pool pays under its energy) */
  uint8_t stake_due : 1; /* its stake is posted but not sent yet: it rides on the AVAIL that follows */
  uint8_t pool : 5;
  uint8_t rslot : 2;   /* the slot of due[] its review's time takes; T_N: an event of its own (review_slot) */
  uint8_t reviews : 1; /* its state has the third line (mkt__persona_reviews of its persona) */
  uint16_t rented;     /* GPUs employed now (mkt__prov_rented) */
  uint16_t interruptions;
  uint16_t day;     /* daily income statistics (Welford): today, = the days closed (run.end < 2^16 days) */
  uint32_t session; /* availability sessions so far */
  uint8_t low;      /* reviews in a row below its goal (up1) */
  uint8_t low_exit; /* reviews in a row with negative surplus (up1) */
  uint16_t nrev;    /* reviews in this pool (income statistics in mkt_prov_rv) */
  double st_since;
  double due[T_N]; /* when each timer fires (now + its delay, as sim_send would have it); INFINITY: not set */
  int64_t income, balance;
  int64_t win_income;    /* review window (only a provider that reviews reads it) */
  int64_t st_ms[SC_N];   /* time per state, ms (st_counter) */
  int64_t rented_gpu_ms; /* GPU time employed */
  int64_t day_income;
  double dmean, dm2;
} mkt_prov;
/* The third line, of a provider that reviews: its review window, its stake and what it learnt. */
typedef struct mkt_prov_rv {
  double win_avail_s;    /* review window: available time (flush) */
  int64_t win_rented_ms; /* and GPU*ms rented */
  double claim_from;     /* staking income claimed up to (its pool's treasury), -1 none */
  int64_t stake;
  /* reactions (market.responses, personas' goal) */
  double rmean, rm2;    /* income per available GPU-hour per review here (Welford) */
  float last_h, last_u; /* last review: income per available GPU-hour (USD), utilization */
  float cv_other;       /* income CV it had in its other pool, -1 never there */
  uint16_t review_id;   /* a quote answers the latest review only (at most a few are in flight) */
  uint16_t switches;
} mkt_prov_rv;
/* Two and three cache lines, which the engine's 64-byte aligned state blocks keep on line
 * boundaries (a block per LP type). */
_Static_assert(sizeof(mkt_prov) == 128 && sizeof(mkt_prov) == MKT__PROV_STATE,
               "a provider's state: two cache lines, no padding");
_Static_assert(sizeof(mkt_prov_rv) == 64 && sizeof(mkt_prov_rv) == MKT__PROV_RV_STATE,
               "the third line of a provider that reviews");
_Static_assert(MKT_NPOOLS < 32 && T_N < 4, "mkt_prov.pool and rslot fit their bits");

static int prov_avail(const mkt_prov *p) { return p->state == ST_IDLE || p->state == ST_RENTED; }
/* The third line: only a provider that reviews has it (its LP type's state is one line longer). */
static mkt_prov_rv *rv(mkt_prov *p) {
  assert(p->reviews);
  return (mkt_prov_rv *)(p + 1);
}
/* Its stake: none unless it reviews (a provider that does not never joins a pool that stakes). */
static int64_t stake_of(const mkt_prov *p) { return p->reviews ? ((const mkt_prov_rv *)(p + 1))->stake : 0; }
/* A count of reviews in a row, one more, held at 255 (patience and exit_patience are at most 255:
 * a provider whose patience ran out while it was rented switches at its first review after). */
static uint8_t up1(uint8_t n) { return n < UINT8_MAX ? (uint8_t)(n + 1) : UINT8_MAX; }

/* Sends the provider's earliest timer to itself (the one event of its timers the engine holds):
 * called once its event has set its timer anew, and at init. */
static void arm(sim_lp *lp, const mkt_prov *p) {
  _Static_assert(T_N == 3, "arm compares three timers");
  unsigned k = 0;
  if (p->due[1] < p->due[k]) k = 1;
  if (p->due[2] < p->due[k]) k = 2;
  if (p->due[k] == INFINITY) return;
  mkt_msg m = {.kind = k == p->rslot ? (uint8_t)M_REVIEW : t_kind[k]};
  sim_send_at(lp, sim_lp_id(lp), p->due[k], &m, sizeof m);
}
/* Sets timer k to fire `delay` from now (the time sim_send(delay) would give it). */
static void set_timer(sim_lp *lp, mkt_prov *p, unsigned k, double delay) { p->due[k] = sim_now(lp) + delay; }

static uint64_t pidx(const mkt_ctx *c, sim_lp *lp) { return mkt__prov_at(c, sim_lp_id(lp) % mkt__per_world(c)); }
static sim_id my_market(const mkt_ctx *c, sim_lp *lp, const mkt_prov *p) {
  return mkt__market_id(c, mkt__world(c, lp), c->prov[pidx(c, lp)].region, p->pool);
}

/* Energy of a rented GPU-hour of host ps (musd): its tariff x the card's typical draw under load
 * (gpus.csv power_w, the vendor's board power). */
static double energy_musd_h(const mkt_ctx *c, const mkt_pstat *ps) {
  return c->energy_musd_wh[ps->region] * ps->energy_permille / 1000.0 * c->gpus[ps->gpu].power_w;
}
/* Reservation of host ps (musd per GPU-hour): the cost of a rented GPU-hour (energy plus wear) and
 * the owner's own value of an available one. */
static double cost_musd_h(const mkt_ctx *c, const mkt_pstat *ps) {
  return energy_musd_h(c, ps) + c->cfg->personas[ps->persona].wear_usd_h * MKT_MUSD;
}
/* 1 when host ps would rent out GPU-hours in `pool` below its own energy cost and its persona does
 * not say it accepts that (below_energy_cost, issue 46). Only a pool with `imposed` (the fixed pool) posts a price a host
 * does not choose; the bidding pool's asks are at least the energy (mkt_lot_ask) and the flexible
 * pool pays from its treasury per available hour, not per rented one. */
static int below_energy(const mkt_ctx *c, const mkt_pstat *ps, unsigned pool) {
  if (!mkt__pools[pool]->imposed || c->cfg->personas[ps->persona].below_energy_cost) return 0;
  return (double)mkt__pools[pool]->gpu_price(c, ps->region, ps) < energy_musd_h(c, ps);
}
static double own_musd_h(const mkt_ctx *c, const mkt_pstat *ps) {
  return c->cfg->personas[ps->persona].own_value_usd_h * MKT_MUSD * ps->own_permille / 1000.0;
}

/* Surplus per available GPU-hour (USD/h) of host ps earning income_h at utilization u. */
static double surplus_h(const mkt_ctx *c, const mkt_pstat *ps, double income_h, double u) {
  return mkt_surplus_h(income_h, u, cost_musd_h(c, ps) / MKT_MUSD, own_musd_h(c, ps) / MKT_MUSD);
}

/* Closes whole days up to day `d` in the daily income statistics, and writes each closed day of a
 * recorded provider (every daily_stride-th) to the daily_income table. A day is closed at the
 * first income or pool switch after it, or at the end, so the pool written is the one it was in
 * at the end of that day. */
static void day_roll(sim_lp *lp, const mkt_ctx *c, mkt_prov *p, int64_t d) {
  uint64_t ix = pidx(c, lp);
  int rec = c->daily_stride && ix % c->daily_stride == 0;
  while (p->day < d) {
    double x = (double)p->day_income;
    uint32_t n = (uint32_t)p->day + 1; /* days closed with this one */
    double delta = x - p->dmean;       /* Welford's running mean and M2 */
    p->dmean += delta / n;
    p->dm2 += delta * (x - p->dmean);
    if (rec) {
      const mkt_pstat *ps = &c->prov[ix];
      mkt_day_rec r;
      memset(&r, 0, sizeof r); /* padding too: records are compared bytewise across ranks */
      r.provider = ix;
      r.world = (int32_t)mkt__world(c, lp);
      r.day = p->day;
      snprintf(r.persona, sizeof r.persona, "%s", c->cfg->personas[ps->persona].name);
      snprintf(r.pool, sizeof r.pool, "%s", mkt__pools[p->pool]->name);
      r.income_musd = p->day_income;
      r.income_usd = (double)p->day_income / MKT_MUSD;
      sim_table_put(lp, MKT_T_DAILY, &r);
    }
    p->day_income = 0;
    p->day++;
  }
}

/* Adds v to column `col` of the per-persona, per-pool, per-region and per-GPU-model counters. */
static void by_groups(sim_lp *lp, const mkt_ctx *c, const mkt_pstat *ps, unsigned pool, unsigned col, int64_t v) {
  mkt__series(lp, c, MKT_S_PERSONA, ps->persona * MKT_NPCOLS + col, 0, v);
  mkt__series(lp, c, MKT_S_POOL, pool * MKT_NPCOLS + col, 0, v);
  mkt__series(lp, c, MKT_S_REGION, ps->region * MKT_NPCOLS + col, 0, v);
  mkt__series(lp, c, MKT_S_GPU, ps->gpu * MKT_NPCOLS + col, 0, v);
}

static void earn(sim_lp *lp, const mkt_ctx *c, mkt_prov *p, int64_t amount, int is_income) {
  mkt__book(lp, c, MKT_A_TRANSIT, -amount);
  mkt__book(lp, c, MKT_A_PROVIDERS, amount);
  p->balance += amount;
  if (!is_income) return;
  const mkt_pstat *ps = &c->prov[pidx(c, lp)];
  p->income += amount;
  p->win_income += amount;
  day_roll(lp, c, p, (int64_t)floor(sim_now(lp) / 86400.0));
  p->day_income += amount;
  by_groups(lp, c, ps, p->pool, MKT_P_INCOME, amount);
}

/* Accounts the time since st_since in the current state (series, counters, the availability
 * sample) and restarts the span at now. */
static void flush(sim_lp *lp, const mkt_ctx *c, mkt_prov *p) {
  double now = sim_now(lp), t0 = p->st_since;
  if (now <= t0) return;
  const mkt_pstat *ps = &c->prov[pidx(c, lp)];
  int64_t d = mkt__ms(now) - mkt__ms(t0);
  if (p->state != ST_OUT) p->st_ms[st_counter[p->state]] += d;
  if (p->state == ST_IDLE || p->state == ST_RENTED) {
    mkt__add_span(lp, c, MKT_S_AVAIL, ps->region, t0, now, ps->ngpus);
    by_groups(lp, c, ps, p->pool, MKT_P_AVAIL_MS, d * ps->ngpus);
    if (p->reviews) rv(p)->win_avail_s += now - t0;
  }
  if (p->state == ST_RENTED) {
    mkt__add_span(lp, c, MKT_S_RENTED, ps->region, t0, now, p->rented);
    by_groups(lp, c, ps, p->pool, MKT_P_RENTED_MS, d * p->rented);
    p->rented_gpu_ms += d * p->rented;
    if (p->reviews) rv(p)->win_rented_ms += d * p->rented;
  }
  if (p->state == ST_IDLE || p->state == ST_RENTED) /* what taking part cost it (provider surplus) */
    mkt__rpool(lp, c, p->pool, MKT_RP_PCOST,
               mkt_lround(((double)d * ps->ngpus * own_musd_h(c, ps) +
                           (p->state == ST_RENTED ? (double)d * p->rented * cost_musd_h(c, ps) : 0)) /
                          3.6e6));
  if (pidx(c, lp) < (uint64_t)c->cfg->sample_providers && mkt__world(c, lp) == 0) {
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

/* Claims its staking income since claim_from from its pool's treasury (the flexible pool's): the
 * market computes what it is owed at once (a peer of its group, mkt__market_claim) and pays it,
 * the money taking the latency to arrive. */
static void flex_claim(sim_lp *lp, const mkt_ctx *c, mkt_prov *p) {
  double now = sim_now(lp);
  if (!mkt__pools[p->pool]->treasury) return; /* (a pool with a treasury: its providers review) */
  mkt_prov_rv *r = rv(p);
  if (r->claim_from < 0) return;
  if (now > r->claim_from)
    mkt__market_claim(sim_peer(lp, my_market(c, lp, p)), (uint32_t)pidx(c, lp), sim_lp_id(lp), mkt__ms(r->claim_from),
                      mkt__ms(now));
  r->claim_from = now;
}

void mkt__prov_close(sim_lp *plp, unsigned pool) {
  mkt_prov *p = sim_lp_state(plp);
  if (p->pool == pool) flex_claim(plp, mkt__ctx(plp), p);
}

/* Schedules the next review `delay` from now, for a persona whose reviews can change something: in
 * its timer slot (the caller arms), else as an event of its own. */
static void next_review(sim_lp *lp, mkt_prov *p, double delay) {
  if (!p->reviews) return;
  if (p->rslot < T_N) {
    set_timer(lp, p, p->rslot, delay);
    return;
  }
  mkt_msg m = {.kind = M_REVIEW};
  mkt__send(lp, sim_lp_id(lp), delay, &m);
}

static void tell_avail(sim_lp *lp, const mkt_ctx *c, mkt_prov *p) {
  p->session++;
  mkt_msg m = {.kind = M_AVAIL, .b = p->session};
  if (p->stake_due) { /* the STAKE it would have sent just before: flag 1, a = the stake */
    m.flag = 1;
    m.a = rv(p)->stake; /* (posted in a pool that stakes: post_stake) */
    p->stake_due = 0;
  }
  mkt__send(lp, my_market(c, lp, p), c->cfg->latency_s, &m);
  if (mkt__pools[p->pool]->treasury) rv(p)->claim_from = sim_now(lp);
}

/* claim: the staking claim up to now rides along (flex_claim's message, mkt__unavail_claim_from) */
static void tell_unavail(sim_lp *lp, const mkt_ctx *c, mkt_prov *p, int announced, int claim) {
  mkt_msg m = {.kind = M_UNAVAIL, .reason = (uint8_t)announced, .a = mkt__ms(sim_now(lp)), .b = p->session};
  double now = sim_now(lp);
  if (claim && mkt__pools[p->pool]->treasury && rv(p)->claim_from >= 0 && now > rv(p)->claim_from) {
    uint64_t from = (uint64_t)mkt__ms(rv(p)->claim_from);
    m.flag = 1;
    m.gen = (uint32_t)(from >> 32);
    m.epoch = (uint32_t)from;
    rv(p)->claim_from = now;
  }
  mkt__send(lp, my_market(c, lp, p), c->cfg->latency_s, &m);
}

/* Recomputes availability from churn, calendar and self-use, and tells the market. A departure
 * by churn is unannounced (the machine just goes); the owner's own use and calendar are
 * announced. */
static void update(sim_lp *lp, const mkt_ctx *c, mkt_prov *p, int announced) {
  int avail = p->up && !p->cal_busy && !p->self_busy && !p->out, was = prov_avail(p);
  if (was && !avail) {
    if (p->rented) p->interruptions++;
    if (!announced && !p->up) { /* a departure by churn: announced when what is at stake says so */
      if (c->cfg->responses.reliability) {
        const mkt_resp_cfg *rc = &c->cfg->responses;
        double at_stake = 0;
        if (p->rented && mkt__pools[p->pool]->treasury) /* the stake slashed (mkt__host_detect) */
          at_stake += (double)(c->slash < stake_of(p) ? c->slash : stake_of(p)) / MKT_MUSD;
        if (p->rented && c->cfg->rep_exponent > 0) at_stake += rc->reputation_usd; /* a failure on its record */
        announced = gsl_rng_uniform(sim_lp_rng(lp)) < mkt_announce_prob(at_stake, rc->announce_max, rc->announce_usd);
      }
      mkt__rpool(lp, c, p->pool, announced ? MKT_RP_ANNOUNCED : MKT_RP_UNANNOUNCED, 1);
    }
    tell_unavail(lp, c, p, announced, 1); /* with the claim flex_claim would send next */
    flex_claim(lp, c, p);
    if (mkt__pools[p->pool]->treasury) rv(p)->claim_from = -1;         /* -1 already in any other pool */
    set_state(lp, c, p, p->out ? ST_OUT : p->up ? ST_OWNER : ST_DOWN); /* no longer available */
    p->rented = 0;
  } else if (!was && avail) {
    set_state(lp, c, p, ST_IDLE); /* available */
    tell_avail(lp, c, p);
  } else if (!was) {
    set_state(lp, c, p, p->out ? ST_OUT : p->up ? ST_OWNER : ST_DOWN);
  }
}

/* The persona has a recurring busy period (its calendar). */
static int has_cal(const mkt_persona_cfg *pc) { return pc->busy_days != 0 && pc->busy_len_h > 0; }
/* Which of the owner's timers a persona ever sets (the same for all its providers, all run). */
static int cal_used(const mkt_ctx *c, const mkt_persona_cfg *pc) { return c->cfg->calendars && has_cal(pc); }
static int self_used(const mkt_ctx *c, const mkt_persona_cfg *pc) {
  return c->cfg->self_use && pc->self_per_day > 0 && pc->self_mean_h > 0;
}
/* The slot of due[] a provider of persona pc keeps its review's time in: one of a timer it never
 * sets, T_N when it sets all three. */
static unsigned review_slot(const mkt_ctx *c, const mkt_persona_cfg *pc) {
  return !cal_used(c, pc) ? T_CAL : !self_used(c, pc) ? T_SELF : !c->cfg->churn ? T_CHURN : T_N;
}

/* Calendar: is the owner's recurring period on at local time, and when does it next change. */
static int cal_on(const mkt_persona_cfg *pc, double loc) {
  if (!has_cal(pc)) return 0;
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

static void cal_schedule(sim_lp *lp, const mkt_ctx *c, mkt_prov *p, const mkt_pstat *ps) {
  const mkt_persona_cfg *pc = &c->cfg->personas[ps->persona];
  if (!cal_used(c, pc)) return; /* its slot may hold the review */
  p->due[T_CAL] = INFINITY;
  double off = c->cfg->regions[ps->region].tz_h * 3600.0, now = sim_now(lp);
  double nxt = cal_next(pc, now + off) - off;
  set_timer(lp, p, T_CAL, nxt - now);
}

static void churn_schedule(sim_lp *lp, const mkt_ctx *c, mkt_prov *p, const mkt_pstat *ps) {
  const churn_dist *d = p->up ? &c->up[ps->persona] : &c->down[ps->persona];
  set_timer(lp, p, T_CHURN, mkt_dist_sample(d, sim_lp_rng(lp)) * 3600.0);
}

/* Joining a pool whose providers stake (the flexible pool) stakes stake_usd per GPU: the money
 * leaves its account for transit now and reaches the pool with the message. */
static void post_stake(sim_lp *lp, const mkt_ctx *c, mkt_prov *p, const mkt_pstat *ps) {
  if (!mkt__pools[p->pool]->treasury) return;
  int64_t stake = (int64_t)llround(c->cfg->flexible.stake_usd * MKT_MUSD) * ps->ngpus;
  if (stake <= 0) return;
  mkt__book(lp, c, MKT_A_PROVIDERS, -stake);
  mkt__book(lp, c, MKT_A_TRANSIT, stake);
  p->balance -= stake;
  rv(p)->stake = stake; /* (a pool with a treasury: its providers review) */
  p->stake_due = 1;     /* rides on the AVAIL that follows, else stake_send */
}
/* Sends a posted stake that no AVAIL carried (the host is not available). */
static void stake_send(sim_lp *lp, const mkt_ctx *c, mkt_prov *p) {
  if (!p->stake_due) return;
  p->stake_due = 0;
  mkt_msg m = {.kind = M_STAKE, .a = rv(p)->stake};
  mkt__send(lp, my_market(c, lp, p), c->cfg->latency_s, &m);
}

static void self_schedule(sim_lp *lp, const mkt_ctx *c, mkt_prov *p, const mkt_pstat *ps) {
  const mkt_persona_cfg *pc = &c->cfg->personas[ps->persona];
  if (!self_used(c, pc)) return; /* its slot may hold the review */
  p->due[T_SELF] = INFINITY;
  /* self-use sessions: Poisson starts at self_per_day, exponential lengths of self_mean_h */
  double mean_s = p->self_busy ? pc->self_mean_h * 3600.0 : 86400.0 / pc->self_per_day;
  set_timer(lp, p, T_SELF, gsl_ran_exponential(sim_lp_rng(lp), mean_s));
}

/* The provider enters (+1) or leaves (-1) the market, or its pool (population series). */
static void pop(sim_lp *lp, const mkt_ctx *c, const mkt_prov *p, const mkt_pstat *ps, int64_t d) {
  mkt__series(lp, c, MKT_S_POP, ps->persona * MKT_NPOOLS + p->pool, sim_now(lp), d);
}

void mkt__prov_init(sim_lp *lp, void *st) {
  const mkt_ctx *c = mkt__ctx(lp);
  mkt_prov *p = st;
  const mkt_pstat *ps = &c->prov[pidx(c, lp)];
  const mkt_persona_cfg *pc = &c->cfg->personas[ps->persona];
  gsl_rng *r = sim_lp_rng(lp);
  p->pool = (uint8_t)pc->pool;
  p->reviews = (uint8_t)mkt__persona_reviews(c->cfg, pc); /* its LP type's (mkt__type_of) */
  p->rslot = (uint8_t)(p->reviews ? review_slot(c, pc) : T_N);
  if (p->reviews) {
    rv(p)->claim_from = -1;
    rv(p)->cv_other = -1;
  }
  p->state = ST_DOWN;
  p->st_since = 0;
  p->up = 1;
  for (unsigned i = 0; i < T_N; i++) p->due[i] = INFINITY;
  if (c->cfg->churn) {
    /* start up with the stationary probability mean_up / (mean_up + mean_down) */
    double mu = churn_dist_mean(&c->up[ps->persona]), md = churn_dist_mean(&c->down[ps->persona]);
    p->up = gsl_rng_uniform(r) < mu / (mu + md);
    churn_schedule(lp, c, p, ps);
  }
  if (c->cfg->calendars) p->cal_busy = (uint8_t)cal_on(pc, c->cfg->regions[ps->region].tz_h * 3600.0);
  self_schedule(lp, c, p, ps);
  cal_schedule(lp, c, p, ps);
  if (c->cfg->responses.entry) p->out = gsl_rng_uniform(r) < c->cfg->responses.entry_potential;
  p->out |= below_energy(c, ps, p->pool); /* keeps its GPU: the pool pays less than its energy */
  if (!p->out) {
    post_stake(lp, c, p, ps);
    pop(lp, c, p, ps, 1);
  }
  by_groups(lp, c, ps, p->pool, MKT_P_PROVIDERS, 1);
  by_groups(lp, c, ps, p->pool, MKT_P_GPUS, ps->ngpus);
  update(lp, c, p, 1);
  stake_send(lp, c, p);
  /* daily review (pool switching, flexible claims) at a provider-specific phase */
  next_review(lp, p, c->cfg->review_s * (0.5 + 0.5 * gsl_rng_uniform(r))); /* drawn with or without reviews */
  arm(lp, p);
}

/* Leaves its pool (an announced departure): unstakes and tells the market it is gone for good,
 * so that the pool may recycle its GPU ids. */
static void leave_pool(sim_lp *lp, const mkt_ctx *c, mkt_prov *p, const mkt_pstat *ps) {
  if (prov_avail(p)) tell_unavail(lp, c, p, 1, 0);
  if (stake_of(p) > 0) {
    mkt_msg m = {.kind = M_UNSTAKE, .a = rv(p)->stake};
    mkt__send(lp, my_market(c, lp, p), c->cfg->latency_s, &m);
    rv(p)->stake = 0;
  }
  mkt_msg dep = {.kind = M_DEPART};
  mkt__send(lp, my_market(c, lp, p), c->cfg->latency_s, &dep);
  pop(lp, c, p, ps, -1);
  p->nrev = 0;
  if (p->reviews) { /* (only a provider that reviews switches or leaves) */
    rv(p)->claim_from = -1;
    rv(p)->rmean = rv(p)->rm2 = 0;
  }
}

/* CV of its income per review in this pool: NaN before 3 reviews, infinite when it earned nothing. */
static double income_cv(mkt_prov *p) {
  if (p->nrev <= 2) return NAN;
  const mkt_prov_rv *r = rv(p);
  return r->rmean > 0 ? sqrt(r->rm2 / (p->nrev - 1)) / r->rmean : INFINITY;
}

/* Moves to the persona's other pool. */
static void switch_pool(sim_lp *lp, const mkt_ctx *c, mkt_prov *p, const mkt_pstat *ps) {
  const mkt_persona_cfg *pc = &c->cfg->personas[ps->persona];
  if (below_energy(c, ps, p->pool == pc->pool ? (unsigned)pc->alt_pool : (unsigned)pc->pool)) return;
  double cv = income_cv(p);
  day_roll(lp, c, p, (int64_t)floor(sim_now(lp) / 86400.0)); /* days before today end in the old pool */
  leave_pool(lp, c, p, ps);
  rv(p)->cv_other = isfinite(cv) ? (float)cv : -1;
  p->pool = (uint8_t)(p->pool == pc->pool ? pc->alt_pool : pc->pool);
  rv(p)->switches++;
  p->low = 0;
  pop(lp, c, p, ps, 1);
  post_stake(lp, c, p, ps);
  if (prov_avail(p)) tell_avail(lp, c, p);
  stake_send(lp, c, p);
}

static void ask_quote(sim_lp *lp, const mkt_ctx *c, mkt_prov *p, unsigned pool) {
  mkt_msg q = {.kind = M_QUOTE, .gen = ++rv(p)->review_id};
  mkt__send(lp, mkt__market_id(c, mkt__world(c, lp), c->prov[pidx(c, lp)].region, pool), c->cfg->latency_s, &q);
}

/* A pool's quote came back: enter (from outside), or switch by the persona's goal. */
static void on_quoted(sim_lp *lp, const mkt_ctx *c, mkt_prov *p, const mkt_msg *msg) {
  if ((uint16_t)msg->gen != rv(p)->review_id) return; /* an older review's */
  const mkt_pstat *ps = &c->prov[pidx(c, lp)];
  const mkt_persona_cfg *pc = &c->cfg->personas[ps->persona];
  double q = (double)msg->a / MKT_MUSD, u = (double)msg->b / 1e6;
  if (p->out) {
    if (msg->flag != p->pool) return;
    if (surplus_h(c, ps, q, u) > 0) {
      p->out = 0; /* enters: its pool, its stake, and its availability as of now */
      p->low_exit = 0;
      mkt__rpool(lp, c, p->pool, MKT_RP_ENTERED, 1);
      pop(lp, c, p, ps, 1);
      post_stake(lp, c, p, ps);
      update(lp, c, p, 1);
      stake_send(lp, c, p);
    }
    return;
  }
  if (msg->flag == p->pool || p->rented) return;
  /* income: the other pool quotes more per available hour than it earned here; utilization: it
   * rents a larger share of available time */
  int better = pc->goal == MKT_GOAL_INCOME        ? q > rv(p)->last_h
               : pc->goal == MKT_GOAL_UTILIZATION ? u > rv(p)->last_u
                                                  : 0;
  p->low = better ? up1(p->low) : 0;
  if (p->low >= pc->patience) switch_pool(lp, c, p, ps);
}

/* Income review: entry and exit (responses.entry), then pool switching by the persona's goal. */
static void review(sim_lp *lp, const mkt_ctx *c, mkt_prov *p) {
  const mkt_pstat *ps = &c->prov[pidx(c, lp)];
  const mkt_persona_cfg *pc = &c->cfg->personas[ps->persona];
  mkt_prov_rv *r = rv(p); /* (only a provider that reviews has reviews: next_review) */
  flex_claim(lp, c, p);
  flush(lp, c, p); /* counts the open available span into this window */
  double hours = r->win_avail_s / 3600.0;
  if (p->out) {
    ask_quote(lp, c, p, p->pool); /* should it come (back) in? */
  } else if (hours > 1.0) {
    double per_h = (double)p->win_income / MKT_MUSD / hours / ps->ngpus;
    double u = (double)r->win_rented_ms / (r->win_avail_s * 1000.0 * ps->ngpus);
    r->last_h = (float)per_h;
    r->last_u = (float)u;
    p->nrev++;
    double delta = per_h - r->rmean; /* Welford */
    r->rmean += delta / p->nrev;
    r->rm2 += delta * (per_h - r->rmean);
    int left = 0;
    if (c->cfg->responses.entry) {
      double sur = surplus_h(c, ps, per_h, u);
      p->low_exit = sur < 0 ? up1(p->low_exit) : 0;
      if (p->low_exit >= pc->exit_patience) {
        /* leaves now, announced, like an owner taking the GPU back (a rental it interrupts is
         * recovered by the pool's core) */
        if (p->rented) p->interruptions++;
        leave_pool(lp, c, p, ps); /* told its pool it is unavailable and gone */
        p->rented = 0;
        mkt__rpool(lp, c, p->pool, MKT_RP_EXITED, 1);
        p->out = 1;
        p->low_exit = 0;
        set_state(lp, c, p, ST_OUT); /* no longer available */
        left = 1;
      }
    }
    if (!left && pc->patience > 0 && pc->alt_pool != pc->pool) {
      if (pc->goal == MKT_GOAL_THRESHOLD) {
        double target = pc->target_factor * c->gpus[ps->gpu].ref_price_usd_h;
        p->low = per_h < target ? up1(p->low) : 0;
        if (p->low >= pc->patience && !p->rented) switch_pool(lp, c, p, ps);
      } else if (pc->goal == MKT_GOAL_STABILITY) {
        /* income CV over its reviews here above what it accepts, and the other pool was steadier
         * (or never tried) */
        double cv = income_cv(p);
        if (isnan(cv)) cv = 0; /* too few reviews to judge */
        p->low = cv > pc->target_cv && (r->cv_other < 0 || r->cv_other < cv) ? up1(p->low) : 0;
        if (p->low >= pc->patience && !p->rented) switch_pool(lp, c, p, ps);
      } else {
        ask_quote(lp, c, p, p->pool == pc->pool ? (unsigned)pc->alt_pool : (unsigned)pc->pool);
      }
    }
  }
  p->win_income = 0;
  r->win_avail_s = 0;
  r->win_rented_ms = 0;
  next_review(lp, p, c->cfg->review_s);
}

void mkt__prov_rented(sim_lp *plp, unsigned pool, unsigned n, uint32_t session) {
  const mkt_ctx *c = mkt__ctx(plp);
  mkt_prov *p = sim_lp_state(plp);
  if (!prov_avail(p) || session != p->session || pool != p->pool) return;
  flush(plp, c, p);
  p->rented = (uint16_t)n;
  set_state(plp, c, p, p->rented ? ST_RENTED : ST_IDLE);
}

void mkt__prov_event(sim_lp *lp, void *st, const void *vmsg, sim_id src) {
  const mkt_ctx *c = mkt__ctx(lp);
  mkt_prov *p = st;
  const mkt_msg *msg = vmsg;
  const mkt_pstat *ps = &c->prov[pidx(c, lp)];
  double now = sim_now(lp);
  switch (msg->kind) {
  case M_CHURN:
    p->up = !p->up;
    churn_schedule(lp, c, p, ps);
    update(lp, c, p, 0);
    arm(lp, p);
    break;
  case M_CAL: {
    const mkt_persona_cfg *pc = &c->cfg->personas[ps->persona];
    p->cal_busy = (uint8_t)cal_on(pc, now + c->cfg->regions[ps->region].tz_h * 3600.0);
    cal_schedule(lp, c, p, ps);
    update(lp, c, p, 1);
    arm(lp, p);
    break;
  }
  case M_SELF:
    p->self_busy = !p->self_busy;
    self_schedule(lp, c, p, ps);
    update(lp, c, p, 1);
    arm(lp, p);
    break;
  case M_PAY: earn(lp, c, p, msg->a, msg->reason != PAY_REFUND); break;
  case M_SLASH: rv(p)->stake -= msg->a; break; /* (a provider that staked) */
  case M_REVIEW:
    review(lp, c, p);
    if (p->rslot < T_N) arm(lp, p); /* it was the one timer event (a review of its own was not) */
    break;
  case M_QUOTED: on_quoted(lp, c, p, msg); break;
  default: SIM_FATAL("provider: unexpected message kind %d", msg->kind);
  }
}

void mkt__prov_finalize(sim_lp *lp, void *st) {
  const mkt_ctx *c = mkt__ctx(lp);
  mkt_prov *p = st;
  const mkt_pstat *ps = &c->prov[pidx(c, lp)];
  flush(lp, c, p);                                      /* account the open state up to the end */
  day_roll(lp, c, p, (int64_t)floor(c->end / 86400.0)); /* whole days only */
  if (!c->cfg->record_providers) return;
  mkt_prov_rec r;
  memset(&r, 0, sizeof r);
  r.id = pidx(c, lp);
  snprintf(r.persona, sizeof r.persona, "%s", c->cfg->personas[ps->persona].name);
  snprintf(r.pool, sizeof r.pool, "%s", mkt__pools[p->pool]->name);
  snprintf(r.start_pool, sizeof r.start_pool, "%s", mkt__pools[c->cfg->personas[ps->persona].pool]->name);
  snprintf(r.region, sizeof r.region, "%s", c->cfg->regions[ps->region].name);
  snprintf(r.gpu_class, sizeof r.gpu_class, "%s", c->gpus[ps->gpu].name);
  int wp = c->world_policy[mkt__world(c, lp)];
  snprintf(r.policy, sizeof r.policy, "%s", wp < 0 ? "by_class" : sched_policy_name((sched_policy)wp));
  r.world = (int32_t)mkt__world(c, lp);
  r.gpus = ps->ngpus;
  r.switches = p->reviews ? rv(p)->switches : 0;
  r.interruptions = p->interruptions;
  r.days = (int32_t)p->day;
  r.income_musd = p->income;
  r.balance_musd = p->balance;
  r.income_usd = (double)p->income / MKT_MUSD;
  r.balance_usd = (double)p->balance / MKT_MUSD;
  r.available_h = (double)p->st_ms[SC_AVAIL] / 3.6e6;
  r.rented_h = (double)p->rented_gpu_ms / 3.6e6 / ps->ngpus; /* host-hours: GPU-hours / GPUs */
  r.self_use_h = (double)p->st_ms[SC_OWNER] / 3.6e6;
  r.down_h = (double)p->st_ms[SC_DOWN] / 3.6e6;
  /* out of the market: the rest of the run, whose spans flush counted up to now from 0 */
  r.out_h = (double)(mkt__ms(sim_now(lp)) - p->st_ms[SC_DOWN] - p->st_ms[SC_OWNER] - p->st_ms[SC_AVAIL]) / 3.6e6;
  double var = p->day > 1 ? p->dm2 / (p->day - 1) : 0;
  /* coefficient of variation of daily income: sd / mean (NaN when it never earned) */
  r.daily_income_cv = p->dmean > 0 ? sqrt(var) / p->dmean : NAN;
  sim_table_put(lp, MKT_T_PROVIDERS, &r);
}

/* the engine's hint for the next event: the provider's shared record (c->prov) */
void mkt__prov_prefetch(const sim_lp *lp, const void *st, const void *vmsg, sim_id src) {
  (void)vmsg, (void)src;
  __builtin_prefetch(st); /* its two lines: what most of its events touch */
  __builtin_prefetch((const char *)st + 64);
  const mkt_ctx *c = sim_lp_ctx(lp);
  __builtin_prefetch(&c->prov[mkt__prov_at(c, sim_lp_id(lp) % mkt__per_world(c))]);
}
/* the same, and the third line, whose review window flush adds to */
void mkt__prov_rv_prefetch(const sim_lp *lp, const void *st, const void *vmsg, sim_id src) {
  __builtin_prefetch((const char *)st + sizeof(mkt_prov));
  mkt__prov_prefetch(lp, st, vmsg, src);
}
