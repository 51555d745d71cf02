/* mkt_respond.h - the reaction models of clients and providers (market.responses): pure functions
 * of their arguments, so that tests/test_market.c checks them on random cases, and the market and
 * provider LPs (mkt_market.c, mkt_provider.c) call the very same code.
 *
 *   demand       constant-elasticity demand curve: rate = rate0 x (price / price_ref)^-elasticity
 *   pool choice  multinomial logit over the pools a client can afford (McFadden 1974; Train,
 *                "Discrete Choice Methods with Simulation", 2nd ed. 2009, ch. 3), with the pool
 *                shares as alternative-specific constants, so that zero weights give the shares
 *   reliability  the share of departures a provider announces grows with what an unannounced one
 *                costs it (stake slashed, uptime penalty, reputation): ASSUMPTION, a saturating
 *                response max x (1 - exp(-cost / scale)); the seeds give the motive (staking "to
 *                encourage stable online presence", shared/seeds 001) but no measured curve
 *   reservation  a provider's surplus per available GPU-hour: income - utilization x (energy +
 *                wear) - the owner's own value of the GPU; it takes part while this is >= 0
 */
#ifndef MKT_RESPOND_H
#define MKT_RESPOND_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define MKT_DEMAND_MIN 1e-3 /* the demand multiplier is clamped to [MIN, MAX] */
#define MKT_DEMAND_MAX 1e3

/* Multiplier of the arrival rate at `price` (> 0) for a curve anchored at price_ref (> 0):
 * (price / price_ref)^-elasticity, clamped to [MKT_DEMAND_MIN, MKT_DEMAND_MAX]; 1 when price or
 * price_ref is not > 0 or elasticity is 0. */
double mkt_demand_factor(double price, double price_ref, double elasticity);

/* One pool as a client sees it: share (the scenario's pool_share, > 0 to be an option), expected
 * price per reference GPU-hour, expected wait (s), expected interruptions per job. */
typedef struct mkt_option {
  double share, price, wait_s, interruptions;
} mkt_option;

/* Logit weights: utility of pool m for a job of value v per GPU-hour and run time T s is
 * ln(share) - cost x price / v - wait x wait_s / T - risk x interruptions. */
typedef struct mkt_choice_w {
  double cost, wait, risk;
} mkt_choice_w;

/* Choice probabilities of n options (n <= 8) for a job of value v (> 0) and run time run_s (> 0)
 * into prob[]: 0 for options with share <= 0 or price > v (cannot afford). Returns the number of
 * affordable options (0: the client balks, and every prob is 0). */
unsigned mkt_choice_probs(const mkt_option *o, unsigned n, const mkt_choice_w *w, double v, double run_s, double *prob);
/* The option u in [0, 1) falls on (the first with cumulative probability > u), or -1 when none. */
int mkt_choice_pick(const double *prob, unsigned n, double u);

/* Probability that a provider announces a departure that would cost it `at_stake` USD if it did
 * not: max x (1 - exp(-at_stake / scale)); 0 when at_stake <= 0 or scale <= 0. */
double mkt_announce_prob(double at_stake, double max, double scale);

/* Surplus per available GPU-hour (USD/h) of a provider that earns `income_h` per available
 * GPU-hour at utilization u (rented / available), pays `cost_h` per rented GPU-hour (energy and
 * wear) and values the GPU at own_h per available hour itself. */
static inline double mkt_surplus_h(double income_h, double u, double cost_h, double own_h) {
  return income_h - u * cost_h - own_h;
}

/* Exponentially weighted mean: x + (obs - x) / memory (memory >= 1 observations). */
static inline double mkt_ewma(double x, double obs, double memory) { return memory > 1 ? x + (obs - x) / memory : obs; }

#ifdef __cplusplus
}
#endif
#endif
