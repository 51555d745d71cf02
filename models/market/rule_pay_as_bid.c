/* rule_pay_as_bid.c - the pay-as-bid clearing rule: the highest bids win, each pays its bid.
 *
 * Orders are ranked by price (highest first, ties to the lower index) and placed greedily, first
 * fit: a running order tries its home lot first, then every order tries the lots in index order.
 * A winner keeps the price it bid (reprice = 0). Not truthful: a winner that shades its bid down
 * to just above what it needs to win pays less (tests/test_auction.c shows it on a hand case).
 */
#include "models/market/mkt_rule_internal.h"

#include <stdlib.h>

static long pay_as_bid_clear(const mkt_order *orders, size_t n, const mkt_lot *lots, size_t nl, mkt_clearing *out) {
  int rc = mkt__clear_begin(orders, n, lots, nl, out);
  if (rc < 0) return rc;
  if (n == 0 || nl == 0) return 0;
  size_t *rank;
  uint32_t *free_gpus;
  if (mkt__ranked_scratch(orders, n, lots, nl, &rank, &free_gpus)) return MKT_ENOMEM;
  long winners = 0;
  for (size_t k = 0; k < n; k++) {
    size_t i = rank[k];
    int32_t at = mkt__place_first_fit(&orders[i], lots, nl, free_gpus, INT64_MAX);
    if (at < 0) continue;
    /* Pay as bid: pay = price, which is >= the lot's ask since the order fits the lot. */
    out->win[i] = 1;
    out->lot[i] = at;
    out->pay[i] = orders[i].price;
    winners++;
  }
  free(rank);
  free(free_gpus);
  return winners;
}

const mkt_rule_ops mkt_rule_pay_as_bid = {
    .name = "pay_as_bid",
    .help = "highest bids win, first fit on the hosts, each pays its bid",
    .clear = pay_as_bid_clear,
    .late_price = mkt__late_price_bid,
    .reprice = 0,
    .pays_bid = 1,
    .reference = NULL,
};
