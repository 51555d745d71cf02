/* pool_flexible.c - the flexible pool (GPGPU's DeFi "Flexible Pool", shared/seeds 000, billed
 * per task as NGPU does, shared/seeds 001): clients pay compute score x duration x
 * price_per_score_h; that revenue feeds the pool's treasury, which pays staked providers a steady
 * rate per available hour (mkt_treasury_next_rate). Jobs wait in the core's queue like the fixed
 * pool's. Providers stake to join; an unannounced departure while employed is slashed. */
#include "models/market/mkt_internal.h"

static int64_t flex_price(const mkt_ctx *c, unsigned region, const mkt_pstat *ps) {
  (void)region;
  return c->flex_price[ps->gpu];
}

static void flex_submit(sim_lp *lp, const mkt_ctx *c, mkt_market *m, uint32_t s) {
  if (mkt__could_run(c, m, &m->jobs[s])) {
    mkt__submit(lp, c, m, s, NULL, 0);
  } else { /* no GPU model of the region could take it: it waits here until its patience ends */
    m->jobs[s].state = J_QUEUED;
    mkt__q_push(m, s, 0);
  }
}

static void flex_tick(sim_lp *lp, const mkt_ctx *c, mkt_market *m) { (void)lp, (void)c, (void)m; }

static int flex_handed_back(sim_lp *lp, const mkt_ctx *c, mkt_market *m, uint32_t s, double saved) {
  (void)lp, (void)c, (void)m, (void)s, (void)saved;
  return 0;
}

const mkt__pool_ops mkt__pool_flexible = {"flexible", flex_price, flex_submit, flex_tick, NULL, flex_handed_back,
                                          0, 1, 0};
