/* mkt_treasury.c - a pool's treasury as its providers claim from it (the flexible pool's, shared/seeds
 * 000): what a staked provider is owed for a span of availability at the rates the treasury set
 * per billing interval, and the payment of a claim. A provider claims through the state its region's
 * LPs share (sim_peer, mkt__market_claim) at its reviews, when it leaves and when the books close;
 * so the provider LP reaches the treasury here, not the market LP's file (scripts/market_deps.py). */
#include "models/market/mkt_internal.h"

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
