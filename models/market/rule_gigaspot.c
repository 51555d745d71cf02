/* rule_gigaspot.c - Clore.ai's GigaSPOT rule: every host runs the bids most profitable to it.
 *
 * "GigaSPOT choisit l'enchère la plus rentable pour l'hôte", the power limit the client sets is
 * "la consommation réelle de la charge de travail", and workloads are "réévaluées à chaque
 * intervalle de facturation" (Clore.ai GigaSPOT docs, shared/seeds 004). Host-centric: the lots
 * are visited in index order and each one repeatedly takes, among the orders not yet won that fit
 * its remaining GPUs, the one with the highest profit per GPU-hour,
 *     profit = price - energy price x power limit,
 * through mkt_gigaspot_pick (mkt.h), until none fits or none is profitable (profit <= 0). Ties
 * go to an order running on this lot, then to the lower index. A picked order that runs on another
 * lot and still fits there stays there (its home is tried first). Winners pay their bid and keep
 * it (reprice = 0). docs/auction.md.
 */
#include "models/market/mkt_rule_internal.h"

#include <stdlib.h>
#include <string.h>

static long gigaspot_clear(const mkt_order *orders, size_t n, const mkt_lot *lots, size_t nl, mkt_clearing *out) {
  int rc = mkt__clear_begin(orders, n, lots, nl, out);
  if (rc < 0) return rc;
  if (n == 0 || nl == 0) return 0;
  uint32_t *free_gpus = malloc(nl * sizeof *free_gpus);
  mkt_bid *cand = malloc(n * sizeof *cand);
  size_t *of = malloc(n * sizeof *of), *away = malloc(n * sizeof *away);
  if (!free_gpus || !cand || !of || !away) {
    free(free_gpus);
    free(cand);
    free(of);
    free(away);
    return MKT_ENOMEM;
  }
  mkt__free_reset(lots, nl, free_gpus);
  long winners = 0;
  for (size_t l = 0; l < nl; l++) {
    const mkt_lot *lot = &lots[l];
    /* The candidates for this lot: orders not yet won that fit its remaining GPUs, those running
     * here first (so that mkt_gigaspot_pick's lower-index tie-break favours them), then the others
     * (away), each group in index order. */
    size_t m = 0, na = 0;
    mkt__ask_memo memo = {0};
    for (size_t i = 0; i < n; i++) {
      if (out->win[i] || !mkt__lot_fits_memo(&memo, lot, free_gpus[l], &orders[i])) continue;
      if (mkt__home(&orders[i], nl) == (int32_t)l)
        of[m++] = i;
      else
        away[na++] = i;
    }
    memcpy(of + m, away, na * sizeof *of);
    m += na;
    for (size_t k = 0; k < m; k++) {
      cand[k].price = orders[of[k]].price;
      cand[k].gpus = orders[of[k]].gpus;
      cand[k].power_w = orders[of[k]].power_w;
    }
    while (m > 0) {
      /* profit = price - energy_musd_wh x power_w, the highest strictly positive one wins
       * (mkt_gigaspot_pick, Clore.ai GigaSPOT). */
      long k =
          mkt_gigaspot_pick(cand, m, free_gpus[l], lot->min_ask, lot->pl_min_w, lot->pl_max_w, lot->energy_musd_wh);
      if (k < 0) break;
      size_t i = of[k];
      int32_t at = (int32_t)l;
      int32_t h = mkt__home(&orders[i], nl);
      if (h >= 0 && h != at && mkt_lot_fits(&lots[h], free_gpus[h], &orders[i])) at = h;
      free_gpus[at] -= orders[i].gpus;
      /* Pay as bid: pay = price >= ask of the lot it runs on (it fits there). */
      out->win[i] = 1;
      out->lot[i] = at;
      out->pay[i] = orders[i].price;
      winners++;
      /* The next candidates: the same list, less the winner and what no longer fits (only the GPU
       * count changed, and only downwards), in the same order; their bids move with them. */
      size_t w = 0;
      for (size_t q = 0; q < m; q++)
        if (of[q] != i && orders[of[q]].gpus <= free_gpus[l]) {
          cand[w] = cand[q];
          of[w++] = of[q];
        }
      m = w;
    }
  }
  free(free_gpus);
  free(cand);
  free(of);
  free(away);
  return winners;
}

/* Between clearings a host takes an order only if it is profitable to it: the bid, when the order
 * fits the lot and price - energy price x power limit > 0 (the test of mkt_gigaspot_pick). */
static int64_t gigaspot_late_price(const mkt_order *o, const mkt_lot *l, int64_t last) {
  (void)last;
  if (!o || !l || !mkt_lot_fits(l, l->gpus, o)) return -1;
  mkt_bid b = {.price = o->price, .gpus = o->gpus, .power_w = o->power_w};
  return mkt_gigaspot_pick(&b, 1, l->gpus, l->min_ask, l->pl_min_w, l->pl_max_w, l->energy_musd_wh) == 0 ? o->price
                                                                                                         : -1;
}

const mkt_rule_ops mkt_rule_gigaspot = {
    .name = "gigaspot",
    .help = "each host runs the bids most profitable to it (price - energy x power limit), pay as bid "
            "(Clore.ai GigaSPOT)",
    .clear = gigaspot_clear,
    .late_price = gigaspot_late_price,
    .reprice = 0,
    .pays_bid = 1,
    .reference = NULL,
};
