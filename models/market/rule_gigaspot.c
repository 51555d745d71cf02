/* rule_gigaspot.c - Clore.ai's GigaSPOT rule: every host runs the set of bids most profitable to it.
 *
 * "GigaSPOT choisit l'enchère la plus rentable pour l'hôte", the power limit the client sets is
 * "la consommation réelle de la charge de travail", and workloads are "réévaluées à chaque
 * intervalle de facturation" (Clore.ai GigaSPOT docs, shared/seeds 004). Host-centric: the lots
 * are visited in index order and each one takes, among the orders not yet won that fit it, the set
 * with the highest profit for the host,
 *     max sum over the set of (price - energy x power limit) x gpus,  sum of gpus <= the lot's GPUs,
 * energy x power limit being mkt_lot_energy (the energy of one GPU-hour, musd). Exact: a 0/1
 * knapsack over the lot's GPUs (mkt__host_best), O(orders x GPUs) per lot, a host having at most 8
 * GPUs in the model; memory, power range and ask are per-order tests (mkt_lot_fits), so the GPU
 * count is the only constraint the orders share. Orders of profit <= 0 never win. A running order
 * competes for its own host only (its home: the pool does not move a running bid), together with
 * the queued ones; among sets of equal profit the host keeps more of its running GPUs. Winners pay
 * their bid and keep it (reprice = 0). docs/auction.md; tests/test_auction.c checks every lot's
 * choice against brute force.
 */
#include "models/market/mkt_rule_internal.h"

#include <stdlib.h>

/* profit per GPU-hour to the host: the bid less the energy at the order's power limit */
static int64_t gigaspot_value(const mkt_order *o, const mkt_lot *l) {
  int64_t e = mkt_lot_energy(l, o->power_w);
  return e < 0 ? o->price : o->price - e; /* energy prices are >= 0; e < 0 only from a broken lot */
}

static long gigaspot_clear(const mkt_order *orders, size_t n, const mkt_lot *lots, size_t nl, mkt_clearing *out) {
  int rc = mkt__clear_begin(orders, n, lots, nl, out);
  if (rc < 0) return rc;
  if (n == 0 || nl == 0) return 0;
  uint32_t *w = malloc(n * sizeof *w);
  int64_t *v = malloc(n * sizeof *v);
  unsigned char *keep = malloc(n);
  size_t *of = malloc(n * sizeof *of), *pick = malloc(n * sizeof *pick);
  long winners = MKT_ENOMEM;
  if (!w || !v || !keep || !of || !pick) goto done;
  winners = 0;
  for (size_t l = 0; l < nl; l++) {
    const mkt_lot *lot = &lots[l];
    /* the lot's candidates: queued orders not yet won and its own running orders, that fit it and
     * profit it */
    size_t m = 0;
    mkt__ask_memo memo = {0};
    for (size_t i = 0; i < n; i++) {
      int32_t h = mkt__home(&orders[i], nl);
      if (out->win[i] || (h >= 0 && h != (int32_t)l) || !mkt__lot_fits_memo(&memo, lot, lot->gpus, &orders[i]))
        continue;
      int64_t p = gigaspot_value(&orders[i], lot);
      if (p <= 0) continue;
      w[m] = orders[i].gpus;
      v[m] = p * (int64_t)orders[i].gpus;
      keep[m] = h == (int32_t)l;
      of[m++] = i;
    }
    long k = mkt__host_best(w, v, keep, m, lot->gpus, pick);
    if (k < 0) {
      winners = k;
      goto done;
    }
    for (long q = 0; q < k; q++) {
      size_t i = of[pick[q]];
      /* Pay as bid: pay = price >= ask of the lot (it fits there). */
      out->win[i] = 1;
      out->lot[i] = (int32_t)l;
      out->pay[i] = orders[i].price;
      winners++;
    }
  }
done:
  if (winners < 0) mkt__clear_begin(orders, n, lots, nl, out); /* nothing half-written */
  free(w);
  free(v);
  free(keep);
  free(of);
  free(pick);
  return winners;
}

/* Between clearings a host takes an order only if it is profitable to it: the bid, when the order
 * fits the lot and price - energy x power limit > 0. */
static int64_t gigaspot_late_price(const mkt_order *o, const mkt_lot *l, int64_t last) {
  (void)last;
  if (!o || !l || !mkt_lot_fits(l, l->gpus, o)) return -1;
  return gigaspot_value(o, l) > 0 ? o->price : -1;
}

const mkt_rule_ops mkt_rule_gigaspot = {
    .name = "gigaspot",
    .help = "each host runs the set of bids most profitable to it (sum of (price - energy x power limit) x "
            "GPUs), pay as bid (Clore.ai GigaSPOT)",
    .clear = gigaspot_clear,
    .late_price = gigaspot_late_price,
    .reprice = 0,
    .pays_bid = 1,
    .reference = NULL,
    .host_value = gigaspot_value,
};
