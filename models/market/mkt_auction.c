/* mkt_auction.c - clearing rules of the bidding pool: GigaSPOT, pay-as-bid, Vickrey, the
 * uniform-price double auction and the revenue-maximising knapsack. Pure functions. */
#include "models/market/mkt.h"

#include <stdlib.h>
#include <string.h>

const char *const mkt_rule_names[] = {"gigaspot", "pay_as_bid", "vickrey", "double", "knapsack", NULL};

typedef struct mkt__rank {
  double key; /* ranking key, higher first */
  size_t idx; /* tie-break: lower index first */
} mkt__rank;

static int mkt__rank_cmp(const void *a, const void *b) {
  const mkt__rank *x = a, *y = b;
  if (x->key != y->key) return x->key > y->key ? -1 : 1;
  return x->idx < y->idx ? -1 : (x->idx > y->idx);
}

static int mkt__i64_desc(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return x > y ? -1 : (x < y);
}
static int mkt__i64_asc(const void *a, const void *b) { return -mkt__i64_desc(a, b); }

long mkt_clear(mkt_rule rule, const mkt_bid *bids, size_t n, uint64_t units, int64_t reserve, double energy_musd_per_wh,
               int *win, int64_t *pay) {
  if ((n && (!bids || !win || !pay)) || rule == MKT_RULE_DOUBLE) return MKT_EINVAL;
  for (size_t i = 0; i < n; i++) {
    win[i] = 0;
    pay[i] = 0;
  }
  if (!n) return 0;
  if (rule == MKT_RULE_KNAPSACK) {
    /* Only bids at or above the reserve may enter; winners pay their bid. */
    mkt_bid *ok = malloc(n * sizeof *ok);
    if (!ok) return MKT_ENOMEM;
    for (size_t i = 0; i < n; i++) {
      ok[i] = bids[i];
      if (bids[i].price < reserve) ok[i].gpus = (uint32_t)(units + 1 > UINT32_MAX ? UINT32_MAX : units + 1);
    }
    mkt_knapsack(ok, n, units, win);
    free(ok);
    long sold = 0;
    for (size_t i = 0; i < n; i++)
      if (win[i]) {
        pay[i] = bids[i].price;
        sold += bids[i].gpus;
      }
    return sold;
  }
  mkt__rank *r = malloc(n * sizeof *r);
  if (!r) return MKT_ENOMEM;
  for (size_t i = 0; i < n; i++) {
    /* GigaSPOT: "the most profitable bid for the host": price minus the energy at the bid's power
     * limit, which Clore counts as the workload's consumption (Clore.ai GigaSPOT docs). */
    double key = (double)bids[i].price;
    if (rule == MKT_RULE_GIGASPOT) key -= energy_musd_per_wh * bids[i].power_w;
    r[i].key = key;
    r[i].idx = i;
  }
  qsort(r, n, sizeof *r, mkt__rank_cmp);
  uint64_t left = units;
  long sold = 0;
  int64_t highest_loser = reserve; /* Vickrey: a winner pays what it displaced, at least reserve */
  for (size_t k = 0; k < n; k++) {
    const mkt_bid *b = &bids[r[k].idx];
    int eligible = b->price >= reserve && b->gpus >= 1 && (rule != MKT_RULE_GIGASPOT || r[k].key > 0);
    if (eligible && b->gpus <= left) {
      win[r[k].idx] = 1;
      left -= b->gpus;
      sold += b->gpus;
    } else if (eligible && b->price > highest_loser) {
      highest_loser = b->price;
    }
  }
  for (size_t i = 0; i < n; i++) {
    if (!win[i]) continue;
    /* Vickrey (1961): with unit demands and identical units, charging every winner the highest
     * losing bid makes truthful bidding dominant. With multi-GPU bids this per-GPU uniform price
     * is not the full VCG payment (documented in docs/market.md). */
    if (rule == MKT_RULE_VICKREY)
      pay[i] = highest_loser;
    else
      pay[i] = bids[i].price;
  }
  free(r);
  return sold;
}

long mkt_gigaspot_pick(const mkt_bid *bids, size_t n, unsigned host_gpus, int64_t min_bid, double pl_min_w,
                       double pl_max_w, double energy_musd_per_wh) {
  long best = -1;
  double best_profit = 0;
  for (size_t i = 0; i < n; i++) {
    const mkt_bid *b = &bids[i];
    if (b->gpus > host_gpus || b->price < min_bid || b->power_w < pl_min_w || b->power_w > pl_max_w) continue;
    /* profit per GPU-hour = bid - energy price * power limit (Clore.ai GigaSPOT) */
    double profit = (double)b->price - energy_musd_per_wh * b->power_w;
    if (profit > best_profit) {
      best_profit = profit;
      best = (long)i;
    }
  }
  return best;
}

size_t mkt_double_auction(const int64_t *bids, size_t nb, const int64_t *asks, size_t na, int64_t *price) {
  if (!nb || !na) return 0;
  int64_t *b = malloc(nb * sizeof *b), *a = malloc(na * sizeof *a);
  if (!b || !a) {
    free(b);
    free(a);
    return 0;
  }
  memcpy(b, bids, nb * sizeof *b);
  memcpy(a, asks, na * sizeof *a);
  qsort(b, nb, sizeof *b, mkt__i64_desc);
  qsort(a, na, sizeof *a, mkt__i64_asc);
  size_t k = 0;
  while (k < nb && k < na && b[k] >= a[k]) k++;
  if (k > 0 && price) {
    /* k-double auction, k = 1/2: p = (b_k + a_k) / 2 over the last traded pair
     * (Satterthwaite & Williams, "The rate of convergence to efficiency in the buyer's bid double
     * auction", J. Econ. Theory 1989). Written to avoid overflow. */
    int64_t lo = a[k - 1], hi = b[k - 1];
    *price = lo + (hi - lo) / 2;
  }
  free(b);
  free(a);
  return k;
}

int64_t mkt_knapsack(const mkt_bid *bids, size_t n, uint64_t capacity, int *win) {
  for (size_t i = 0; i < n; i++) win[i] = 0;
  if (!n || !capacity) return 0;
  if ((double)n * (double)(capacity + 1) <= 4e6) {
    /* Exact 0/1 knapsack by dynamic programming over capacity (Martello & Toth, Knapsack
     * Problems, 1990, ch. 2): best[i][c] = max(best[i-1][c], best[i-1][c-w_i] + v_i),
     * v_i = price_i * gpus_i, w_i = gpus_i. Keeps a take-table to recover the set. */
    size_t C = (size_t)capacity;
    int64_t *best = calloc(C + 1, sizeof *best);
    unsigned char *take = calloc(n * (C + 1), 1);
    if (!best || !take) {
      free(best);
      free(take);
      return -1;
    }
    for (size_t i = 0; i < n; i++) {
      size_t w = bids[i].gpus;
      if (w == 0 || w > C) continue;
      int64_t v = bids[i].price * (int64_t)w;
      if (v <= 0) continue;
      for (size_t c = C; c >= w; c--) {
        if (best[c - w] + v > best[c]) {
          best[c] = best[c - w] + v;
          take[i * (C + 1) + c] = 1;
        }
        if (c == w) break;
      }
    }
    int64_t total = best[C];
    size_t c = C;
    for (size_t i = n; i-- > 0;)
      if (take[i * (C + 1) + c]) {
        win[i] = 1;
        c -= bids[i].gpus;
      }
    free(best);
    free(take);
    return total;
  }
  /* Too large for the exact table: greedy by price per GPU (a 1/2-approximation with the
   * single-best-item fix is not applied; documented as a fallback). */
  mkt__rank *r = malloc(n * sizeof *r);
  if (!r) return -1;
  for (size_t i = 0; i < n; i++) {
    r[i].key = (double)bids[i].price;
    r[i].idx = i;
  }
  qsort(r, n, sizeof *r, mkt__rank_cmp);
  int64_t total = 0;
  uint64_t left = capacity;
  for (size_t k = 0; k < n; k++) {
    const mkt_bid *b = &bids[r[k].idx];
    if (b->gpus && b->gpus <= left && b->price > 0) {
      win[r[k].idx] = 1;
      left -= b->gpus;
      total += b->price * (int64_t)b->gpus;
    }
  }
  free(r);
  return total;
}
