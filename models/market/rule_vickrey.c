/* rule_vickrey.c - the second-price rule, truthful with multi-GPU bids: a greedy by price (the
 * ranking of pay_as_bid, ties to the lower index) decides who wins, and every winner pays its
 * critical value (threshold price), the lowest price at which it would still have won, all other
 * bids unchanged. At its threshold an order wins.
 *
 * For a monotone allocation (a winner still wins when it bids more) charging the threshold makes
 * truthful bidding dominant (Myerson 1981, "Optimal auction design", Math. Oper. Res. 6(1)); for
 * single-minded bidders under a greedy allocation this is Lehmann, O'Callaghan & Shoham 2002,
 * "Truth revelation in approximately efficient combinatorial auctions", J. ACM 49(5). With unit
 * bids on identical GPUs it is Vickrey's (1961) highest losing bid.
 *
 * Placement differs from pay_as_bid's first fit, because the payment must also be at least the
 * ask of the winner's lot: under first fit a bid high enough for an expensive low-index lot would
 * pay more than one shaded just enough to land on a cheap lot, and bidding the truth would not be
 * dominant. So an order is placed where the price it bids cannot move it:
 *   - a running order whose home can hold it (GPUs, memory, power range) competes for its home
 *     only: it stays there or it is outbid, it never moves in a clearing;
 *   - any other order takes, among the lots with room, memory and power range for it, the one with
 *     the lowest ask for it (ties to the lower lot index), and wins if that ask <= its price.
 * Both keep the allocation monotone (a higher bid is processed earlier, when every lot has at least
 * as much room) and make the threshold >= the ask of the lot the order gets at its true bid (at
 * its threshold it may get another lot; it pays the threshold all the same). Winners are re-priced
 * at every clearing (reprice = 1). docs/auction.md.
 */
#include "models/market/mkt_rule_internal.h"

#include <math.h>
#include <stdlib.h>

/* The lots each kind of order may use, cheapest first. Orders with the same power limit and
 * memory floor see the same asks and the same power and memory fit, so they share one list of the
 * lots that fit them, sorted by (ask, lot index): the cheapest lot with room is the first one in
 * the list with enough free GPUs. Without the lists (fewer than VK_MIN_LOTS lots, where a scan
 * costs as little; more than VK_MAX_ENTRIES entries; or no memory) every placement scans the lots,
 * with the same result (tests/test_auction.c runs both). */
#define VK_MIN_LOTS 8
#define VK_MAX_ENTRIES (1u << 20)
typedef struct vk_entry {
  int64_t ask; /* the lot's ask for this kind */
  uint32_t lot;
} vk_entry;
typedef struct vk_lists {
  uint32_t *kind; /* per order: its kind, or UINT32_MAX when the lists are off */
  size_t *off;    /* per kind: its first entry; off[nkinds] = number of entries */
  vk_entry *e;
} vk_lists;

static int vk_entry_cmp(const void *a, const void *b) {
  const vk_entry *x = a, *y = b;
  if (x->ask != y->ask) return x->ask < y->ask ? -1 : 1;
  return x->lot < y->lot ? -1 : (x->lot > y->lot);
}

typedef struct vk_key {
  uint32_t power_w;
  double mem_min_gb;
  size_t idx;
} vk_key;
static int vk_key_cmp(const void *a, const void *b) {
  const vk_key *x = a, *y = b;
  if (x->power_w != y->power_w) return x->power_w < y->power_w ? -1 : 1;
  int xn = isnan(x->mem_min_gb), yn = isnan(y->mem_min_gb); /* a total order, NaN last */
  if (xn != yn) return xn - yn;
  if (!xn && x->mem_min_gb != y->mem_min_gb) return x->mem_min_gb < y->mem_min_gb ? -1 : 1;
  return x->idx < y->idx ? -1 : (x->idx > y->idx);
}

static int vk_fits_kind(const mkt_lot *l, const mkt_order *o) {
  return l->mem_gb >= o->mem_min_gb && l->pl_min_w <= (double)o->power_w && (double)o->power_w <= l->pl_max_w;
}

/* Builds the lists; when they are off, kind is NULL or all UINT32_MAX. */
static void vk_lists_build(vk_lists *v, const mkt_order *orders, size_t n, const mkt_lot *lots, size_t nl) {
  v->kind = NULL;
  v->off = NULL;
  v->e = NULL;
  if (nl < VK_MIN_LOTS) return;
  v->kind = malloc(n * sizeof *v->kind);
  vk_key *key = malloc(n * sizeof *key);
  if (!v->kind || !key) goto off;
  for (size_t i = 0; i < n; i++) key[i] = (vk_key){orders[i].power_w, orders[i].mem_min_gb, i};
  qsort(key, n, sizeof *key, vk_key_cmp);
  size_t nk = 0;
  for (size_t k = 0; k < n; k++) {
    if (k > 0 && (key[k].power_w != key[k - 1].power_w || key[k].mem_min_gb != key[k - 1].mem_min_gb)) nk++;
    v->kind[key[k].idx] = (uint32_t)nk;
  }
  nk++;
  if ((double)nk * (double)nl > VK_MAX_ENTRIES) goto off;
  v->off = malloc((nk + 1) * sizeof *v->off);
  v->e = malloc((nk * nl > 0 ? nk * nl : 1) * sizeof *v->e);
  if (!v->off || !v->e) goto off;
  size_t m = 0, kind = 0;
  for (size_t k = 0; k < n; k++) {
    if (k > 0 && v->kind[key[k].idx] == v->kind[key[k - 1].idx]) continue;
    const mkt_order *o = &orders[key[k].idx]; /* the first order of this kind stands for all */
    v->off[kind++] = m;
    size_t first = m;
    for (size_t l = 0; l < nl; l++)
      if (vk_fits_kind(&lots[l], o)) v->e[m++] = (vk_entry){mkt_lot_ask(&lots[l], o->power_w), (uint32_t)l};
    qsort(v->e + first, m - first, sizeof *v->e, vk_entry_cmp);
  }
  v->off[kind] = m;
  free(key);
  return;
off:
  free(key);
  free(v->off);
  free(v->e);
  v->off = NULL;
  v->e = NULL;
  if (v->kind)
    for (size_t i = 0; i < n; i++) v->kind[i] = UINT32_MAX;
}

static void vk_lists_free(vk_lists *v) {
  free(v->kind);
  free(v->off);
  free(v->e);
}

/* Where order i would go with free[] GPUs left, whatever it bids: its home when the home can hold
 * it (GPUs, memory, power range), else the lot with room and the lowest ask for it (ties to the
 * lower index). Returns that lot, or -1 when it has no room, and sets *need to the lowest bid that
 * wins it (that lot's ask). */
static int32_t vickrey_slot(const mkt_order *orders, size_t i, const mkt_lot *lots, size_t nl, const vk_lists *v,
                            const uint32_t *free_gpus, int64_t *need) {
  const mkt_order *o = &orders[i];
  if (o->gpus < 1) return -1;
  int32_t h = mkt__home(o, nl);
  if (h >= 0 && mkt__lot_fits_static(&lots[h], o)) {
    if (free_gpus[h] < o->gpus) return -1;
    *need = mkt_lot_ask(&lots[h], o->power_w);
    return h;
  }
  if (v->kind && v->kind[i] != UINT32_MAX) {
    for (size_t k = v->off[v->kind[i]]; k < v->off[v->kind[i] + 1]; k++)
      if (free_gpus[v->e[k].lot] >= o->gpus) {
        *need = v->e[k].ask;
        return (int32_t)v->e[k].lot;
      }
    return -1;
  }
  int32_t at = -1;
  for (size_t l = 0; l < nl; l++) {
    if (!mkt__lot_fits_static(&lots[l], o) || free_gpus[l] < o->gpus) continue;
    int64_t a = mkt_lot_ask(&lots[l], o->power_w);
    if (at < 0 || a < *need) {
      at = (int32_t)l;
      *need = a;
    }
  }
  return at;
}

/* The lot order i gets when it bids b, or -1; takes its GPUs off free[] when it wins. */
static int32_t vickrey_place(const mkt_order *orders, size_t i, int64_t b, const mkt_lot *lots, size_t nl,
                             const vk_lists *v, uint32_t *free_gpus) {
  int64_t need = 0;
  int32_t at = vickrey_slot(orders, i, lots, nl, v, free_gpus, &need);
  if (at < 0 || need > b) return -1;
  free_gpus[at] -= orders[i].gpus;
  return at;
}

/* The threshold of winner i (it wins at its price):
 *   t_i = min { b : order i wins bidding b, the other bids unchanged }
 * (critical value: Myerson 1981; Lehmann, O'Callaghan & Shoham 2002). The others keep their order
 * whatever i bids; i ranks before other order j iff b >= c_j = p_j + [j < i] (ties to the lower
 * index). So the bids b in [c_next, c_prev - 1] put i in the same slot of the others' ranking, after
 * the same orders, with the same GPUs left: there it wins iff b >= need, the ask of the lot
 * vickrey_slot gives. Walking the slots from i's own one down, the first slot that does not win
 * all the way to its lowest bid holds t_i. One pass of the greedy without i, stopped there. Bids
 * below min(0, p_i) are not considered. */
static int64_t vickrey_threshold(const mkt_order *orders, size_t n, const mkt_lot *lots, size_t nl, const vk_lists *v,
                                 const size_t *rank, uint32_t *free_gpus, size_t i) {
  mkt__free_reset(lots, nl, free_gpus);
  size_t k = 0;
  for (; rank[k] != i; k++) vickrey_place(orders, rank[k], orders[rank[k]].price, lots, nl, v, free_gpus);
  k++;
  int64_t p = orders[i].price, lo = p < 0 ? p : 0, hi = p;
  for (;;) {
    int64_t need = 0;
    if (vickrey_slot(orders, i, lots, nl, v, free_gpus, &need) < 0 || need > hi)
      return hi + 1; /* no bid in this slot wins: the lowest of the slot above did (hi < p here) */
    if (k == n) return need > lo ? need : lo;
    size_t j = rank[k];
    int64_t c = orders[j].price + (j < i);
    int64_t lower = c > lo ? c : lo;
    if (need > lower) return need;
    if (lower == lo) return lo;
    vickrey_place(orders, j, orders[j].price, lots, nl, v, free_gpus);
    k++;
    hi = c - 1;
  }
}

static long vickrey_clear(const mkt_order *orders, size_t n, const mkt_lot *lots, size_t nl, mkt_clearing *out) {
  int rc = mkt__clear_begin(orders, n, lots, nl, out);
  if (rc < 0) return rc;
  if (n == 0 || nl == 0) return 0;
  size_t *rank;
  uint32_t *free_gpus;
  if (mkt__ranked_scratch(orders, n, lots, nl, &rank, &free_gpus)) return MKT_ENOMEM;
  vk_lists v;
  vk_lists_build(&v, orders, n, lots, nl);
  long winners = 0;
  for (size_t k = 0; k < n; k++) {
    size_t i = rank[k];
    int32_t at = vickrey_place(orders, i, orders[i].price, lots, nl, &v, free_gpus);
    if (at < 0) continue;
    out->win[i] = 1;
    out->lot[i] = at;
    winners++;
  }
  for (size_t i = 0; i < n; i++) {
    if (!out->win[i]) continue;
    int64_t t = vickrey_threshold(orders, n, lots, nl, &v, rank, free_gpus, i);
    /* pay = max(t_i, ask of its lot): the placement makes t_i >= that ask (docs/auction.md), the
     * max only guards the host's reserve */
    int64_t ask = mkt_lot_ask(&lots[out->lot[i]], orders[i].power_w);
    out->pay[i] = t > ask ? t : ask;
  }
  vk_lists_free(&v);
  free(rank);
  free(free_gpus);
  return winners;
}

/* Between clearings no other bid competes for an idle lot, so an order's threshold there is the
 * lot's ask: it pays the ask when it fits the lot, else it waits. */
static int64_t vickrey_late_price(const mkt_order *o, const mkt_lot *l, int64_t last) {
  (void)last;
  if (!o || !l || !mkt_lot_fits(l, l->gpus, o)) return -1;
  return mkt_lot_ask(l, o->power_w);
}

const mkt_rule_ops mkt_rule_vickrey = {
    .name = "vickrey",
    .help = "highest bids win, each pays its threshold price (critical value): truthful with "
            "multi-GPU bids (Myerson 1981; Lehmann, O'Callaghan & Shoham 2002)",
    .clear = vickrey_clear,
    .late_price = vickrey_late_price,
    .reprice = 1,
    .pays_bid = 0,
    .reference = NULL,
};
