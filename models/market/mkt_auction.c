/* mkt_auction.c - the auction primitives the clearing rules (rule_*.c, mkt_rule.h) build on: the
 * rules' names, the uniform-price double auction and the 0/1 knapsack. Pure functions. */
#include "models/market/mkt.h"

#include <stdlib.h>
#include <string.h>

const char *mkt_rule_names[MKT_RULES_MAX + 1] = {"gigaspot", "pay_as_bid", "vickrey", "double", "knapsack", NULL};

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
