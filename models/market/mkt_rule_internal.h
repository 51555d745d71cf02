/* mkt_rule_internal.h - what the clearing rules (rule_*.c) share and mkt_rule.c defines: the rule
 * descriptors, argument checks, the price ranking and the placement of an order on the lots.
 * Not part of the market's API: only mkt_rule.c and rule_*.c include it.
 */
#ifndef MKT_RULE_INTERNAL_H
#define MKT_RULE_INTERNAL_H

#include "models/market/mkt.h"
#include "models/market/mkt_rule.h"

#include <stddef.h>
#include <stdint.h>

/* The rules, one per file, listed in mkt_rule_table in this order. */
extern const mkt_rule_ops mkt_rule_gigaspot;
extern const mkt_rule_ops mkt_rule_pay_as_bid;
extern const mkt_rule_ops mkt_rule_vickrey;
extern const mkt_rule_ops mkt_rule_double;
extern const mkt_rule_ops mkt_rule_knapsack;

/* MKT_OK, or MKT_EINVAL when n > 0 and orders, out or one of its arrays is NULL, or when nl > 0
 * and lots is NULL. On MKT_OK with n > 0, every order is set to lose (win 0, lot -1, pay 0). */
int mkt__clear_begin(const mkt_order *orders, size_t n, const mkt_lot *lots, size_t nl, mkt_clearing *out);

/* The order's home lot when it is a valid index in [0, nl), else -1: a home outside the lots
 * (a host that left the pool) makes the order a queued one. */
int32_t mkt__home(const mkt_order *o, size_t nl);

/* 1 when the order could run on the lot if the lot were empty and the price were no object:
 * gpus in [1, lot gpus], memory per GPU and power range (the price-independent part of
 * mkt_lot_fits). */
int mkt__lot_fits_static(const mkt_lot *l, const mkt_order *o);

/* mkt_lot_fits, with the lot's asks remembered for the first MKT__ASK_MEMO power limits it was
 * asked about: an ask depends on the lot and the order's power limit only, and a market's orders
 * come in a few classes with a power limit each, so a rule that tries every order on a lot computes
 * a few asks instead of one per order. *mm holds one lot's asks: zero it for each lot. mm NULL is
 * mkt_lot_fits. */
#define MKT__ASK_MEMO 8
typedef struct mkt__ask_memo {
  unsigned n;
  uint32_t w[MKT__ASK_MEMO];
  int64_t a[MKT__ASK_MEMO];
} mkt__ask_memo;
int mkt__lot_fits_memo(mkt__ask_memo *mm, const mkt_lot *l, uint32_t free_gpus, const mkt_order *o);

/* 1 when the order fits some lot with all its GPUs free (mkt_lot_fits at l->gpus). */
int mkt__fits_some_lot(const mkt_order *o, const mkt_lot *lots, size_t nl);

/* The orders' indices ranked by price, highest first, ties to the lower index: a strict total
 * order, so the ranking does not depend on the sort. rank must hold n entries. */
void mkt__rank_by_price(const mkt_order *orders, size_t n, size_t *rank);

/* First-fit placement shared by the rules: tries the order's home lot first, then every lot in
 * index order; a lot takes the order when mkt_lot_fits(lot, free[lot], o) and the lot's ask for
 * the order is at most max_ask (INT64_MAX: no limit beyond the bid). Takes the order's GPUs off
 * free[] and returns the lot, or -1 (free[] unchanged). */
int32_t mkt__place_first_fit(const mkt_order *o, const mkt_lot *lots, size_t nl, uint32_t *free_gpus, int64_t max_ask);

/* free[l] = lots[l].gpus. */
void mkt__free_reset(const mkt_lot *lots, size_t nl, uint32_t *free_gpus);

/* The scratch of the price-ranked rules: *rank (n entries) ranked by mkt__rank_by_price and
 * *free_gpus (nl entries) reset from the lots. 0, or MKT_ENOMEM with nothing allocated; the
 * caller frees both. */
int mkt__ranked_scratch(const mkt_order *orders, size_t n, const mkt_lot *lots, size_t nl, size_t **rank,
                        uint32_t **free_gpus);

/* The exact per-host choice (0/1 knapsack over the host's GPUs; Martello & Toth, Knapsack Problems,
 * 1990, ch. 2): among n items of weight w[i] >= 1 GPUs and value v[i] > 0 (musd per hour, the
 * value per GPU-hour x GPUs), the set of highest total value whose weights sum to at most cap; among
 * sets of equal value the one with the most GPUs of the host's running orders (keep[i] = 1), then the
 * one the table meets first (earlier items). Writes the chosen indices in increasing order to pick
 * (n entries) and returns how many, or MKT_ENOMEM. O(n x cap) time and n x (cap + 1) bytes; a host
 * has at most 8 GPUs in the model (gpus_per_provider: 1, 2, 4, 8), so at most 9 steps per item.
 * Weights and cap are the only constraint: memory per GPU, the power range and the ask are per-order
 * tests against the host (mkt_lot_fits), made before. */
long mkt__host_best(const uint32_t *w, const int64_t *v, const unsigned char *keep, size_t n, uint32_t cap,
                    size_t *pick);

/* late_price of the pay-as-bid rules: the bid when the order fits the empty lot, else -1. */
int64_t mkt__late_price_bid(const mkt_order *o, const mkt_lot *l, int64_t last);

#endif
