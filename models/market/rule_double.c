/* rule_double.c - the uniform-price double auction: every GPU an order wants is a unit bid at the
 * order's price, every GPU a lot offers a unit ask at the lot's ask for a full-power order; the
 * k-double auction with k = 1/2 (mkt_double_auction, Satterthwaite & Williams 1989) gives the k
 * units traded and one price p, and every winner pays p.
 *
 * Units are then matched to hosts: the orders bidding at least p, by price (ties to the lower
 * index), take lots first fit (home first, then index order) among those whose ask for the order
 * is at most p, until the k traded units are used up (an order needing more units than are left
 * is skipped, a smaller one after it may still trade). Winners are re-priced at every clearing
 * (reprice = 1), and p is the reference price for orders that start between clearings.
 * docs/auction.md.
 */
#include "models/market/mkt_rule_internal.h"

#include <stdlib.h>

static long double_clear(const mkt_order *orders, size_t n, const mkt_lot *lots, size_t nl, mkt_clearing *out) {
  int rc = mkt__clear_begin(orders, n, lots, nl, out);
  if (rc < 0) return rc;
  if (n == 0 || nl == 0) return 0;
  /* Orders that fit no lot at any price they offer never trade, so their units stay out of the
   * book: they would raise p without ever buying. */
  size_t nb = 0, na = 0;
  for (size_t i = 0; i < n; i++)
    if (mkt__fits_some_lot(&orders[i], lots, nl)) nb += orders[i].gpus;
  for (size_t l = 0; l < nl; l++) na += lots[l].gpus;
  if (nb == 0 || na == 0) return 0;
  int64_t *bids = malloc(nb * sizeof *bids), *asks = malloc(na * sizeof *asks);
  size_t *rank = malloc(n * sizeof *rank);
  uint32_t *free_gpus = malloc(nl * sizeof *free_gpus);
  if (!bids || !asks || !rank || !free_gpus) {
    free(bids);
    free(asks);
    free(rank);
    free(free_gpus);
    return MKT_ENOMEM;
  }
  size_t b = 0, a = 0;
  for (size_t i = 0; i < n; i++)
    if (mkt__fits_some_lot(&orders[i], lots, nl))
      for (uint32_t g = 0; g < orders[i].gpus; g++) bids[b++] = orders[i].price;
  for (size_t l = 0; l < nl; l++) {
    /* a lot's unit ask: its ask for a full-power order, mkt_lot_ask(l, pl_max) (the cast clamped,
     * so that a range outside uint32 is not undefined) */
    double pm = lots[l].pl_max_w;
    uint32_t full = !(pm > 0) ? 0 : pm >= 4294967295.0 ? UINT32_MAX : (uint32_t)pm;
    int64_t ask = mkt_lot_ask(&lots[l], full);
    for (uint32_t g = 0; g < lots[l].gpus; g++) asks[a++] = ask;
  }
  int64_t p = 0;
  /* k = max{i : bid_(i) >= ask_(i)}, p = (bid_k + ask_k) / 2 (Satterthwaite & Williams 1989) */
  size_t k = mkt_double_auction(bids, nb, asks, na, &p);
  long winners = 0;
  if (k > 0) {
    mkt__rank_by_price(orders, n, rank);
    mkt__free_reset(lots, nl, free_gpus);
    size_t left = k;
    for (size_t r = 0; r < n && left > 0; r++) {
      size_t i = rank[r];
      if (orders[i].price < p) break; /* ranked by price: no later order bids p */
      if (orders[i].gpus > left) continue;
      int32_t at = mkt__place_first_fit(&orders[i], lots, nl, free_gpus, p);
      if (at < 0) continue;
      /* uniform price: ask of the lot <= p <= price */
      out->win[i] = 1;
      out->lot[i] = at;
      out->pay[i] = p;
      left -= orders[i].gpus;
      winners++;
    }
  }
  free(bids);
  free(asks);
  free(rank);
  free(free_gpus);
  return winners;
}

/* The clearing's uniform price: what its winners pay, or -1 when nobody won. */
static int64_t double_reference(const mkt_order *orders, size_t n, const mkt_clearing *out) {
  (void)orders;
  if (!out || !out->win || !out->pay) return -1;
  for (size_t i = 0; i < n; i++)
    if (out->win[i]) return out->pay[i];
  return -1;
}

/* An order starting between clearings pays the last uniform price when that price lies between
 * the lot's ask and its bid; otherwise (no clearing yet, or the last price outside that range) it
 * pays the lot's ask, the price at which the lot's seller still trades. -1 when it does not fit. */
static int64_t double_late_price(const mkt_order *o, const mkt_lot *l, int64_t last) {
  if (!o || !l || !mkt_lot_fits(l, l->gpus, o)) return -1;
  int64_t ask = mkt_lot_ask(l, o->power_w);
  if (last >= ask && last <= o->price) return last;
  return ask;
}

const mkt_rule_ops mkt_rule_double = {
    .name = "double",
    .help = "uniform-price double auction of unit bids against unit host asks, price (b_k + a_k)/2 "
            "(Satterthwaite & Williams 1989)",
    .clear = double_clear,
    .late_price = double_late_price,
    .reprice = 1,
    .pays_bid = 0,
    .reference = double_reference,
};
