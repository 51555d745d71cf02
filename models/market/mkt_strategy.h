/* mkt_strategy.h - how clients bid in the bidding pool: pure functions, no simulation state.
 *
 * Strategies (a scenario gives each job class a mix of them):
 *   truthful  bid = value (dominant under Vickrey-like rules);
 *   shade     under pay-as-bid rules, the symmetric Bayes-Nash equilibrium bid of a first-price
 *             auction with n bidders whose values are IID log-normal (the scenario's value
 *             distribution), with the pool's reserve; under other rules a fixed fraction of value;
 *   adaptive  a learning bidder: its shading margin moves by a Widrow-Hoff rule after every win and
 *             loss (Cliff 1997, ZIP traders), bid = value x (1 - margin).
 *
 * Sources: the first-price equilibrium b(v) = v - int_r^v F(x)^(n-1) dx / F(v)^(n-1) for v >= r
 * (Krishna, "Auction Theory", 2nd ed. 2010, prop. 2.2 and sec. 2.5 for the reserve r; Riley &
 * Samuelson 1981); revenue equivalence (Myerson 1981). Values are log-normal with median `median`
 * and log-sd `sigma`, so b(v; median) = median x b(v / median; 1): one table per (sigma, reserve /
 * median) serves every median.
 */
#ifndef MKT_STRATEGY_H
#define MKT_STRATEGY_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum { MKT_STRAT_TRUTHFUL, MKT_STRAT_SHADE, MKT_STRAT_ADAPTIVE, MKT_NSTRATS };
extern const char *const mkt_strat_names[]; /* "truthful", "shade", "adaptive", NULL */

/* The equilibrium bid of a bidder of value v among n >= 1 bidders (itself included) with IID
 * values uniform on [lo, hi], reserve r in [lo, hi]: exact closed form. v < r: returns v (it cannot
 * win, and bidding its value is as good as anything). n = 1: returns r for v >= r. */
double mkt_bne_uniform(double v, double lo, double hi, double r, unsigned n);

/* The same for IID log-normal values (median > 0, sigma > 0) with reserve r >= 0, by numerical
 * integration (GSL QAG, relative error 1e-9). The reference the table is tested against. */
double mkt_bne_lognormal(double v, double median, double sigma, double r, unsigned n);

#define MKT_BNE_NMAX 64 /* bidders the table holds (more: treated as MKT_BNE_NMAX) */
#define MKT_BNE_NZ 129  /* value grid points per n, in z = ln(v / median) / sigma on [-4, 4] */

/* Equilibrium bid / value of the log-normal case for one (sigma, reserve / median), on a grid of
 * z = ln(v / median) / sigma, for n = 1 .. MKT_BNE_NMAX. */
typedef struct mkt_bne_table {
  double sigma, reserve_rel;             /* reserve_rel = reserve / median */
  float ratio[MKT_BNE_NMAX][MKT_BNE_NZ]; /* bid / value at grid point z_k = -4 + 8 k / (NZ - 1) */
} mkt_bne_table;

/* Fills t. Returns 0, or -1 when sigma <= 0 or reserve_rel < 0 (t unchanged). */
int mkt_bne_table_init(mkt_bne_table *t, double sigma, double reserve_rel);
/* Equilibrium bid of value v (same units as median) among n bidders: linear interpolation of the
 * table in z, clamped to the grid's ends, except next to the reserve, where the bid bends faster
 * than the grid: there the cell starts at b(r) = r, and where that is still not close enough it is
 * integrated from the grid point below (mkt_strategy.c). Never above v, never below the reserve
 * when v >= the reserve. Within 1e-3 x v of mkt_bne_lognormal for z in [-4, 4] (tested). */
double mkt_bne_bid(const mkt_bne_table *t, double v, double median, unsigned n);

/* The adaptive bidder's margin (bid = value x (1 - margin)), in [0, max_margin]. After each
 * outcome: target = margin + step on a win (try to pay less), margin - 2 x step on a loss (bid
 * closer to value), clamped to [0, max_margin]; margin += rate x (target - margin) (Widrow-Hoff,
 * as in Cliff 1997). rate in (0, 1]. */
double mkt_adapt_update(double margin, int won, double rate, double step, double max_margin);

#ifdef __cplusplus
}
#endif
#endif
