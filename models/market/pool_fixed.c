/* pool_fixed.c - the fixed pool (GPGPU's "Fixed Pool", shared/seeds 000): posted prices per GPU
 * model, first come first served. Jobs wait in the scheduling core's queue (FIFO with
 * backfilling) and the core places them; a client never runs on a GPU posted above its value.
 * Uptime commitment: when a host interrupts a rental it refunds penalty_h hours of it. */
#include "models/market/mkt_internal.h"

static int64_t fixed_price(const mkt_ctx *c, unsigned region, const mkt_pstat *ps) {
  (void)region;
  return c->posted[ps->gpu];
}

static void fixed_submit(sim_lp *lp, const mkt_ctx *c, mkt_market *m, uint32_t s) {
  if (mkt__could_run(c, m, &m->jobs[s])) {
    mkt__submit(lp, c, m, s, NULL, 0);
  } else { /* no GPU model of the region could take it: it waits here until its patience ends */
    m->jobs[s].state = J_QUEUED;
    mkt__q_push(m, s, 0);
  }
}

static void fixed_tick(sim_lp *lp, const mkt_ctx *c, mkt_market *m) { (void)lp, (void)c, (void)m; }

/* Handed back only when it gave up waiting (abandoned at the tick): it leaves. */
static int fixed_handed_back(sim_lp *lp, const mkt_ctx *c, mkt_market *m, uint32_t s, double saved) {
  (void)lp, (void)c, (void)m, (void)s, (void)saved;
  return 0;
}

const mkt__pool_ops mkt__pool_fixed = {"fixed", fixed_price, fixed_submit, fixed_tick, NULL, fixed_handed_back,
                                       0, 0, 1};
