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

static double flex_prior(const mkt_ctx *c) { return (double)c->flex_price[c->ref_gpu]; }

/* The treasury pays stakers its rate per available score-100 GPU-hour, rented or not. */
static int64_t flex_quote(const mkt_ctx *c, const mkt_market *m, const mkt_pstat *ps) {
  return (int64_t)((__int128)m->rate * c->gpu_score_milli[ps->gpu] / 100000);
}

const mkt__pool_ops mkt__pool_flexible = {.name = "flexible",
                                          .gpu_price = flex_price,
                                          .submit = mkt__posted_submit,
                                          .tick = mkt__posted_tick,
                                          .handed_back = mkt__posted_handed_back,
                                          .quote = flex_quote,
                                          .prior_price = flex_prior,
                                          .treasury = 1};
