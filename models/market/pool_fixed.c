/* pool_fixed.c - the fixed pool (GPGPU's "Fixed Pool", shared/seeds 000): posted prices per GPU
 * model, first come first served. Jobs wait in the scheduling core's queue (FIFO with a little
 * backfilling) and the core places them; a client never runs on a GPU posted above its value.
 * Uptime commitment: when a host interrupts a rental it refunds penalty_h hours of it. */
#include "models/market/mkt_internal.h"

static int64_t fixed_price(const mkt_ctx *c, unsigned region, const mkt_pstat *ps) {
  (void)region;
  return c->posted[ps->gpu];
}

static double fixed_prior(const mkt_ctx *c) { return (double)c->posted[c->ref_gpu]; }

static int64_t fixed_quote(const mkt_ctx *c, const mkt_market *m, const mkt_pstat *ps) {
  return mkt__quote_rental(c, m, c->posted[ps->gpu]);
}

const mkt__pool_ops mkt__pool_fixed = {.name = "fixed",
                                       .gpu_price = fixed_price,
                                       .submit = mkt__posted_submit,
                                       .tick = mkt__posted_tick,
                                       .handed_back = mkt__posted_handed_back,
                                       .quote = fixed_quote,
                                       .prior_price = fixed_prior,
                                       .penalty = 1,
                                       .front_door = 1,
                                       .imposed = 1};
