/* mkt_rule.h - the bidding pool's clearing rules as descriptors (one file per rule, one table).
 *
 * A rule decides price and priority, never placement: it is handed the orders (bids, running and
 * queued) and the lots (the pool's hosts, each with the GPUs it offers now), and answers which
 * orders win, which host each winner may run on, and what each winner pays per GPU-hour. The
 * market then asks the scheduling core (models/sched) to place each winner on the GPUs of its lot;
 * the core owns selection, standbys and recovery. Pure functions of their arguments: tested in
 * tests/test_auction.c on random cases (individual rationality, truthfulness, feasibility).
 *
 * A bid runs on one host (a Clore.ai GigaSPOT order rents GPUs of one server, shared/seeds 004).
 * An order fits a lot when the lot has the GPUs, enough memory per GPU, a power range that holds
 * the order's power limit, and an ask at or below the bid. Money is integer micro-USD.
 *
 * Adding a rule: one file rule_NAME.c defining `const mkt_rule_ops mkt_rule_NAME`, and one entry
 * in mkt_rule_table (mkt_rules.c) and mkt_rule_names (mkt_auction.c); or, from outside the model,
 * mkt_rule_register (docs/architecture.md, tests/test_market_toy.c).
 */
#ifndef MKT_RULE_H
#define MKT_RULE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* One bid. */
typedef struct mkt_order {
  int64_t price;     /* musd per GPU-hour offered (the bid) */
  uint32_t gpus;     /* GPUs wanted on one host (>= 1) */
  uint32_t power_w;  /* GigaSPOT power limit per GPU, W; must lie in the lot's range */
  double mem_min_gb; /* minimum memory per GPU, GB */
  int32_t home;      /* lot it runs on now (a running bid), or -1 (queued) */
} mkt_order;

/* One host's offer in the pool. */
typedef struct mkt_lot {
  uint32_t gpus;         /* GPUs offered: idle ones plus those held by running bids */
  double mem_gb;         /* memory per GPU, GB */
  double pl_min_w;       /* lowest power limit of the card, W */
  double pl_max_w;       /* highest power limit the host allows (card range capped by the host's
                           ceiling), W */
  double energy_musd_wh; /* the host's energy price, musd per Wh */
  double margin;         /* the owner's margin over energy: ask = energy x (1 + margin) */
  int64_t min_ask;       /* the pool's minimum price (reserve), musd per GPU-hour */
} mkt_lot;

/* The host's ask for an order per GPU-hour: energy at the order's power limit times
 * (1 + margin), at least min_ask. Energy at power P W for one hour is P Wh. */
int64_t mkt_lot_ask(const mkt_lot *l, uint32_t power_w);
/* The host's energy cost of one GPU-hour at the order's power limit (musd), without margin. */
int64_t mkt_lot_energy(const mkt_lot *l, uint32_t power_w);
/* 1 when the order can run on the lot with `free_gpus` GPUs left: gpus <= free_gpus,
 * mem_gb >= mem_min_gb, pl_min_w <= power_w <= pl_max_w, and ask <= price. */
int mkt_lot_fits(const mkt_lot *l, uint32_t free_gpus, const mkt_order *o);

/* What a clearing returns, per order i (arrays of n, caller-allocated):
 *   win[i]  1 for a winner, 0 for a loser;
 *   lot[i]  the lot a winner runs on (a running winner keeps its home whenever it still fits
 *           there), -1 for a loser;
 *   pay[i]  musd per GPU-hour the winner pays (0 for a loser); always <= orders[i].price
 *           (individual rationality) and >= the ask of its lot at its power limit.
 * The GPUs of the winners assigned to one lot never exceed that lot's GPUs. */
typedef struct mkt_clearing {
  int *win;
  int32_t *lot;
  int64_t *pay;
} mkt_clearing;

typedef struct mkt_rule_ops {
  const char *name; /* as in the scenario: bidding.rule = "NAME" */
  const char *help; /* one line, with the source of the rule */
  /* Clears n orders against nl lots. Returns the number of winners, or a negative mkt_err.
   * Deterministic: ties go to the lower order index, lots are tried in index order. */
  long (*clear)(const mkt_order *orders, size_t n, const mkt_lot *lots, size_t nl, mkt_clearing *out);
  /* Price per GPU-hour of an order that starts on lot `l` between clearings, given the last
   * clearing's reference price (`last`, musd per GPU-hour, -1 before any). Returns a price in
   * [ask of l, order price], or -1 when the order must wait for the next clearing. */
  int64_t (*late_price)(const mkt_order *o, const mkt_lot *l, int64_t last);
  /* 1 when running winners are re-priced at every clearing (their price may change); 0 when a
   * winner keeps the price it started at. */
  int reprice;
  /* 1 when every winner pays its bid (pay as bid): clients then shade their bids
   * (mkt_strategy.h); 0 when the price is set by others' bids or asks. */
  int pays_bid;
  /* The reference price a clearing leaves for late_price (e.g. the uniform price of the double
   * auction), or -1. May be NULL. */
  int64_t (*reference)(const mkt_order *orders, size_t n, const mkt_clearing *out);
  /* Per-host choice, or NULL. The value to the host of one GPU-hour of order o on lot l (GigaSPOT:
   * price - energy x power limit, mkt_lot_energy). A rule that sets it lets every host run the set
   * of orders with the highest sum of value x GPUs that fits its GPUs (mkt_rule_host_choose): its
   * clear does so at each billing interval, and the pool calls mkt_rule_host_choose when a host has
   * free GPUs between clearings and ranks bids by this value (at the region's energy price) to
   * decide whether a clearing can change anything. NULL: a host takes the highest bid that fits,
   * and bids rank by price. */
  int64_t (*host_value)(const mkt_order *o, const mkt_lot *l);
} mkt_rule_ops;

/* What a host with `free_gpus` GPUs (lot l) takes among n candidate orders under rule r, between
 * clearings: the indices of the orders it starts, in index order, written to pick (n entries);
 * returns how many (0: none), or MKT_ENOMEM. Only orders that fit (mkt_lot_fits at free_gpus) are
 * taken. With r->host_value: the set that maximises sum(value x gpus) within free_gpus, over
 * orders of positive value (exact, mkt__host_best). Without: the one highest bid that fits (ties to
 * the lower index). */
long mkt_rule_host_choose(const mkt_rule_ops *r, const mkt_order *cand, size_t n, const mkt_lot *l, uint32_t free_gpus,
                          size_t *pick);

/* The rules, NULL-terminated, in the order `spotlab keys` lists them: the built-in ones, then those
 * registered. */
extern const mkt_rule_ops *mkt_rule_table[MKT_RULES_MAX + 1];
/* Registers a clearing rule defined outside the model (a plug-in, a test's toy rule): after it a
 * scenario may name it (bidding.rule = "NAME") and mkt_rule_find finds it. Call before any scenario
 * is read, from one thread; the rule stays registered for the process. Returns its index in
 * mkt_rule_table, or -1 when ops or its name or clear or late_price is missing, the name is taken,
 * or MKT_RULES_MAX rules are registered. */
int mkt_rule_register(const mkt_rule_ops *ops);
/* The rule named `name`, or NULL. */
const mkt_rule_ops *mkt_rule_find(const char *name);
/* Index of the rule in mkt_rule_table, or -1. */
int mkt_rule_index(const char *name);

#ifdef __cplusplus
}
#endif
#endif
