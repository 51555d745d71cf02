/* rule_knapsack.c - the revenue-maximising rule: the hosts run the set of bids with the highest
 * total revenue, sum of price x gpus, and each winner pays its bid (TensorDock spot, as gathered
 * in shared/data/README.md: "the host runs the set of bids with the highest total revenue").
 *
 * Exact on the pool's total GPUs, a heuristic on the hosts: mkt_knapsack (mkt.h; exact dynamic
 * programming up to n x capacity = 4e6) chooses the set over the sum of all lots' GPUs, among the
 * orders that fit some lot; the set is then packed onto the lots by first-fit decreasing (most
 * GPUs first, then higher price, then lower index; each order tries its home lot first, then the
 * lots in index order). When the set does not pack, its lowest-priced order (ties: the higher
 * index) is dropped and the packing retried. At the end the orders left out take any room that
 * remains, by price, first fit. When the first packing succeeds the result is optimal (the total
 * capacity is a relaxation of the lots); otherwise it is a feasible set, not always the best one.
 * Pay as bid, kept (reprice = 0). docs/auction.md.
 */
#include "models/market/mkt_rule_internal.h"

#include <stdlib.h>

typedef struct knap_key {
  uint32_t gpus; /* more first */
  int64_t price; /* then higher first */
  size_t idx;    /* then lower index first */
} knap_key;

static int knap_key_cmp(const void *a, const void *b) {
  const knap_key *x = a, *y = b;
  if (x->gpus != y->gpus) return x->gpus > y->gpus ? -1 : 1;
  if (x->price != y->price) return x->price > y->price ? -1 : 1;
  return x->idx < y->idx ? -1 : (x->idx > y->idx);
}

/* First-fit decreasing of the chosen orders (chosen[i] = 1); on success lot[i] is set for them and
 * 1 is returned; on failure 0 (lot[] and free[] then hold a partial packing). `key` holds n. */
static int knap_pack(const mkt_order *orders, size_t n, const mkt_lot *lots, size_t nl, const int *chosen, int32_t *lot,
                     uint32_t *free_gpus, knap_key *key) {
  size_t m = 0;
  for (size_t i = 0; i < n; i++)
    if (chosen[i]) key[m++] = (knap_key){.gpus = orders[i].gpus, .price = orders[i].price, .idx = i};
  qsort(key, m, sizeof *key, knap_key_cmp);
  mkt__free_reset(lots, nl, free_gpus);
  for (size_t k = 0; k < m; k++) {
    size_t i = key[k].idx;
    lot[i] = mkt__place_first_fit(&orders[i], lots, nl, free_gpus, INT64_MAX);
    if (lot[i] < 0) return 0;
  }
  return 1;
}

static long knapsack_clear(const mkt_order *orders, size_t n, const mkt_lot *lots, size_t nl, mkt_clearing *out) {
  int rc = mkt__clear_begin(orders, n, lots, nl, out);
  if (rc < 0) return rc;
  if (n == 0 || nl == 0) return 0;
  uint64_t capacity = 0;
  for (size_t l = 0; l < nl; l++) capacity += lots[l].gpus;
  mkt_bid *bids = malloc(n * sizeof *bids);
  int *chosen = malloc(n * sizeof *chosen);
  int32_t *lot = malloc(n * sizeof *lot);
  size_t *rank = malloc(n * sizeof *rank);
  knap_key *key = malloc(n * sizeof *key);
  uint32_t *free_gpus = malloc(nl * sizeof *free_gpus);
  long ret = MKT_ENOMEM;
  if (!bids || !chosen || !lot || !rank || !key || !free_gpus) goto done;
  /* Orders that fit no lot are kept out of the knapsack by a weight above the capacity. */
  uint32_t too_big = capacity + 1 > UINT32_MAX ? UINT32_MAX : (uint32_t)(capacity + 1);
  for (size_t i = 0; i < n; i++) {
    bids[i].price = orders[i].price;
    bids[i].gpus = mkt__fits_some_lot(&orders[i], lots, nl) ? orders[i].gpus : too_big;
    bids[i].power_w = orders[i].power_w;
  }
  /* max sum(price_i x gpus_i) s.t. sum(gpus_i) <= sum of the lots' GPUs (Martello & Toth 1990,
   * through mkt_knapsack) */
  if (mkt_knapsack(bids, n, capacity, chosen) < 0) goto done;
  while (!knap_pack(orders, n, lots, nl, chosen, lot, free_gpus, key)) {
    /* Does not pack on the lots: drop the lowest-priced chosen order (ties: the higher index). */
    size_t drop = n;
    for (size_t i = 0; i < n; i++)
      if (chosen[i] && (drop == n || orders[i].price <= orders[drop].price)) drop = i;
    chosen[drop] = 0;
  }
  /* The orders left out take the room that remains, by price, first fit (only those that add
   * revenue, as in the knapsack). */
  mkt__rank_by_price(orders, n, rank);
  for (size_t k = 0; k < n; k++) {
    size_t i = rank[k];
    if (chosen[i] || orders[i].price <= 0) continue;
    lot[i] = mkt__place_first_fit(&orders[i], lots, nl, free_gpus, INT64_MAX);
    if (lot[i] >= 0) chosen[i] = 1;
  }
  ret = 0;
  for (size_t i = 0; i < n; i++) {
    if (!chosen[i]) continue;
    /* pay as bid: price >= ask of its lot (it fits there) */
    out->win[i] = 1;
    out->lot[i] = lot[i];
    out->pay[i] = orders[i].price;
    ret++;
  }
done:
  free(bids);
  free(chosen);
  free(lot);
  free(rank);
  free(key);
  free(free_gpus);
  return ret;
}

const mkt_rule_ops mkt_rule_knapsack = {
    .name = "knapsack",
    .help = "the set of bids with the highest total revenue (TensorDock spot), packed first-fit "
            "decreasing on the hosts, pay as bid",
    .clear = knapsack_clear,
    .late_price = mkt__late_price_bid,
    .reprice = 0,
    .pays_bid = 1,
    .reference = NULL,
};
