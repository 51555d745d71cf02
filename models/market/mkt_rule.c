/* mkt_rule.c - what every clearing rule of the bidding pool shares: a host's energy cost and ask,
 * whether an order fits a host, and the ranking and first-fit placement the rules build on
 * (mkt_rule_internal.h). The rules themselves are rule_*.c, their table mkt_rules.c; what each
 * does, and how it is tested, is docs/auction.md.
 */
#include "models/market/mkt_rule_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- Host economics ---------------------------------------------------------------------------- */

/* llround that saturates instead of being undefined: NaN and values beyond int64 give INT64_MAX
 * (or INT64_MIN below), so a lot with a broken energy price asks too much to take any order. */
static int64_t mkt__llround_sat(double x) {
  if (isnan(x) || x >= 9.2e18) return INT64_MAX;
  if (x <= -9.2e18) return INT64_MIN;
  return mkt_lround(x);
}

int64_t mkt_lot_energy(const mkt_lot *l, uint32_t power_w) {
  if (!l) return 0;
  /* The power limit is counted as the workload's consumption (Clore.ai GigaSPOT, shared/seeds 004:
   * "considérer la limite de puissance comme la consommation réelle de la charge de travail"),
   * clamped to the card's range: energy of one GPU-hour = clamp(P, pl_min, pl_max) W x 1 h x
   * energy price (musd/Wh). */
  double p = (double)power_w;
  if (p > l->pl_max_w) p = l->pl_max_w;
  if (p < l->pl_min_w) p = l->pl_min_w;
  return mkt__llround_sat(p * l->energy_musd_wh);
}

int64_t mkt_lot_ask(const mkt_lot *l, uint32_t power_w) {
  if (!l) return INT64_MAX;
  /* ask = max(min_ask, energy x (1 + margin)): the owner's margin over energy (docs/market.md,
   * bidding pool), at least the pool's reserve. */
  int64_t e = mkt_lot_energy(l, power_w);
  int64_t a = e == INT64_MAX ? INT64_MAX : mkt__llround_sat((double)e * (1.0 + l->margin));
  return a > l->min_ask ? a : l->min_ask;
}

int mkt_lot_fits(const mkt_lot *l, uint32_t free_gpus, const mkt_order *o) {
  return mkt__lot_fits_memo(NULL, l, free_gpus, o);
}

int mkt__lot_fits_memo(mkt__ask_memo *mm, const mkt_lot *l, uint32_t free_gpus, const mkt_order *o) {
  if (!l || !o) return 0;
  if (o->gpus < 1 || o->gpus > free_gpus) return 0;
  if (!(l->mem_gb >= o->mem_min_gb)) return 0;
  if (!(l->pl_min_w <= (double)o->power_w && (double)o->power_w <= l->pl_max_w)) return 0;
  if (!mm) return mkt_lot_ask(l, o->power_w) <= o->price;
  for (unsigned k = 0; k < mm->n; k++)
    if (mm->w[k] == o->power_w) return mm->a[k] <= o->price;
  int64_t a = mkt_lot_ask(l, o->power_w);
  if (mm->n < MKT__ASK_MEMO) {
    mm->w[mm->n] = o->power_w;
    mm->a[mm->n++] = a;
  }
  return a <= o->price;
}

/* ---- Shared by the rules ------------------------------------------------------------------------- */

int mkt__clear_begin(const mkt_order *orders, size_t n, const mkt_lot *lots, size_t nl, mkt_clearing *out) {
  if (n == 0) return MKT_OK;
  if (!orders || !out || !out->win || !out->lot || !out->pay) return MKT_EINVAL;
  if (nl > 0 && !lots) return MKT_EINVAL;
  for (size_t i = 0; i < n; i++) {
    out->win[i] = 0;
    out->lot[i] = -1;
    out->pay[i] = 0;
  }
  return MKT_OK;
}

int32_t mkt__home(const mkt_order *o, size_t nl) { return o->home >= 0 && (size_t)o->home < nl ? o->home : -1; }

int mkt__lot_fits_static(const mkt_lot *l, const mkt_order *o) {
  return o->gpus >= 1 && o->gpus <= l->gpus && l->mem_gb >= o->mem_min_gb && l->pl_min_w <= (double)o->power_w &&
         (double)o->power_w <= l->pl_max_w;
}

int mkt__fits_some_lot(const mkt_order *o, const mkt_lot *lots, size_t nl) {
  for (size_t l = 0; l < nl; l++)
    if (mkt_lot_fits(&lots[l], lots[l].gpus, o)) return 1;
  return 0;
}

typedef struct mkt__price_key {
  int64_t price; /* higher first */
  size_t idx;    /* then lower index first */
} mkt__price_key;

static int mkt__price_key_cmp(const void *a, const void *b) {
  const mkt__price_key *x = a, *y = b;
  if (x->price != y->price) return x->price > y->price ? -1 : 1;
  return x->idx < y->idx ? -1 : (x->idx > y->idx);
}

/* Insertion sort on (price desc, index asc): inserting the orders in index order, an order passes
 * only those with a strictly lower price, so equal prices keep the lower index first. */
static void mkt__rank_insertion(const mkt_order *orders, size_t n, size_t *rank) {
  for (size_t i = 0; i < n; i++) {
    size_t j = i;
    while (j > 0 && orders[rank[j - 1]].price < orders[i].price) {
      rank[j] = rank[j - 1];
      j--;
    }
    rank[j] = i;
  }
}

void mkt__rank_by_price(const mkt_order *orders, size_t n, size_t *rank) {
  /* The key is a strict total order, so qsort (not stable) and the insertion sort give the same
   * ranking; the insertion sort serves small n and the case where the keys cannot be allocated. */
  mkt__price_key *k = n > 16 ? malloc(n * sizeof *k) : NULL;
  if (!k) {
    mkt__rank_insertion(orders, n, rank);
    return;
  }
  for (size_t i = 0; i < n; i++) {
    k[i].price = orders[i].price;
    k[i].idx = i;
  }
  qsort(k, n, sizeof *k, mkt__price_key_cmp);
  for (size_t i = 0; i < n; i++) rank[i] = k[i].idx;
  free(k);
}

void mkt__free_reset(const mkt_lot *lots, size_t nl, uint32_t *free_gpus) {
  for (size_t l = 0; l < nl; l++) free_gpus[l] = lots[l].gpus;
}

static int mkt__takes(const mkt_lot *l, uint32_t free_gpus, const mkt_order *o, int64_t max_ask) {
  return mkt_lot_fits(l, free_gpus, o) && (max_ask == INT64_MAX || mkt_lot_ask(l, o->power_w) <= max_ask);
}

int32_t mkt__place_first_fit(const mkt_order *o, const mkt_lot *lots, size_t nl, uint32_t *free_gpus, int64_t max_ask) {
  int32_t h = mkt__home(o, nl);
  int32_t at = -1;
  if (h >= 0 && mkt__takes(&lots[h], free_gpus[h], o, max_ask)) {
    at = h;
  } else {
    for (size_t l = 0; l < nl; l++)
      if ((int32_t)l != h && mkt__takes(&lots[l], free_gpus[l], o, max_ask)) {
        at = (int32_t)l;
        break;
      }
  }
  if (at >= 0) free_gpus[at] -= o->gpus;
  return at;
}

long mkt__host_best(const uint32_t *w, const int64_t *v, const unsigned char *keep, size_t n, uint32_t cap,
                    size_t *pick) {
  uint64_t sum = 0;
  for (size_t i = 0; i < n; i++) sum += w[i];
  size_t C = sum < cap ? (size_t)sum : cap; /* no more room than all the items take */
  if (n == 0 || C == 0) return 0;
  /* best[c]: the highest value within c GPUs over the items seen; kg[c]: its running GPUs (the tie
   * key); take[i][c]: item i is in that set. One row per item, so the set can be read back. */
  int64_t *best = calloc(C + 1, sizeof *best);
  uint32_t *kg = calloc(C + 1, sizeof *kg);
  unsigned char *take = calloc(n * (C + 1), 1);
  if (!best || !kg || !take) {
    free(best);
    free(kg);
    free(take);
    return MKT_ENOMEM;
  }
  for (size_t i = 0; i < n; i++) {
    size_t wi = w[i];
    if (wi == 0 || wi > C || v[i] <= 0) continue;
    uint32_t ki = keep && keep[i] ? w[i] : 0;
    for (size_t c = C; c >= wi; c--) {
      int64_t b = best[c - wi] + v[i];
      uint32_t k = kg[c - wi] + ki;
      if (b > best[c] || (b == best[c] && k > kg[c])) { /* strictly better: earlier items keep ties */
        best[c] = b;
        kg[c] = k;
        take[i * (C + 1) + c] = 1;
      }
      if (c == wi) break;
    }
  }
  long m = 0;
  size_t c = C;
  for (size_t i = n; i-- > 0;)
    if (take[i * (C + 1) + c]) {
      pick[m++] = i;
      c -= w[i];
    }
  for (long a = 0, b = m - 1; a < b; a++, b--) { /* increasing order */
    size_t t = pick[a];
    pick[a] = pick[b];
    pick[b] = t;
  }
  free(best);
  free(kg);
  free(take);
  return m;
}

long mkt_rule_host_choose(const mkt_rule_ops *r, const mkt_order *cand, size_t n, const mkt_lot *l, uint32_t free_gpus,
                          size_t *pick) {
  if (!r || !l || n == 0 || !cand || !pick) return 0;
  mkt__ask_memo memo = {0};
  if (!r->host_value) { /* the highest bid that fits, ties to the lower index */
    long best = -1;
    for (size_t i = 0; i < n; i++)
      if ((best < 0 || cand[i].price > cand[best].price) && mkt__lot_fits_memo(&memo, l, free_gpus, &cand[i]))
        best = (long)i;
    if (best < 0) return 0;
    pick[0] = (size_t)best;
    return 1;
  }
  uint32_t *w = malloc(n * sizeof *w);
  int64_t *v = malloc(n * sizeof *v);
  size_t *of = malloc(n * sizeof *of);
  long m = MKT_ENOMEM;
  if (!w || !v || !of) goto done;
  size_t k = 0;
  for (size_t i = 0; i < n; i++) {
    if (!mkt__lot_fits_memo(&memo, l, free_gpus, &cand[i])) continue;
    int64_t val = r->host_value(&cand[i], l);
    if (val <= 0) continue;
    w[k] = cand[i].gpus;
    v[k] = val * (int64_t)cand[i].gpus;
    of[k++] = i;
  }
  m = mkt__host_best(w, v, NULL, k, free_gpus, pick);
  for (long q = 0; q < m; q++) pick[q] = of[pick[q]];
done:
  free(w);
  free(v);
  free(of);
  return m;
}

int64_t mkt__late_price_bid(const mkt_order *o, const mkt_lot *l, int64_t last) {
  (void)last;
  if (!o || !l) return -1;
  return mkt_lot_fits(l, l->gpus, o) ? o->price : -1;
}

int mkt__ranked_scratch(const mkt_order *orders, size_t n, const mkt_lot *lots, size_t nl, size_t **rank,
                        uint32_t **free_gpus) {
  *rank = malloc((n ? n : 1) * sizeof **rank);
  *free_gpus = malloc((nl ? nl : 1) * sizeof **free_gpus);
  if (!*rank || !*free_gpus) {
    free(*rank);
    free(*free_gpus);
    *rank = NULL;
    *free_gpus = NULL;
    return MKT_ENOMEM;
  }
  mkt__rank_by_price(orders, n, *rank);
  mkt__free_reset(lots, nl, *free_gpus);
  return 0;
}
