/* rule_knapsack.c - the revenue-maximising rule: the hosts run the set of bids with the highest
 * total revenue, sum of price x gpus, that packs on them, and each winner pays its bid (TensorDock
 * spot, as gathered in shared/data/README.md: "the host runs the set of bids with the highest total
 * revenue").
 *
 * The promise: max sum(price_i x gpus_i) over sets of orders that can be assigned to lots, each on
 * one lot it fits (mkt_lot_fits: memory, power range, ask <= price) with the GPUs of a lot's orders
 * within its GPUs (a multiple knapsack with assignment restrictions; Martello & Toth, Knapsack
 * Problems, 1990, ch. 6). Two steps:
 *  1. the relaxation: mkt_knapsack over the sum of all lots' GPUs, among orders that fit some lot.
 *     When its table is exact (n x capacity <= 4e6) and its set packs by first-fit decreasing (most
 *     GPUs first; each order tries its home lot, then the lots in index order), that set is optimal:
 *     nothing beats the relaxation.
 *  2. otherwise a depth-first branch and bound (knap_search) from the better of two feasible sets:
 *     the part of step 1's set that packed, topped up by price, and the greedy by price, first fit
 *     (pay_as_bid's set). The orders go by price, highest first; each is placed on every lot it fits
 *     with room (its home first), or left out. A branch is cut when its revenue plus the fractional
 *     fill of the GPUs left by the orders left that still fit a lot with room cannot beat the best
 *     set found; lots alike for every order (same fits, same free GPUs) are tried once; the search
 *     stops at a proven upper bound (the relaxation, and the LP bound where each order's GPUs may
 *     split over the lots it fits, a flow computed at the root: knap_flow_bound). It ends when the
 *     search is complete (the set is then optimal) or after KNAP_NODES nodes: then the best set
 *     found, at least the starting one. Every brute-force test book finishes. In the shipped
 *     pool_design scenario with this rule about half the searches end on the budget, the best set
 *     found then within about 5% of the LP bound on average (docs/auction.md gives the figures).
 * Then a running winner placed away from its home moves home when its home has room, and orders left
 * out take any room left, by price, first fit. Pay as bid, kept (reprice = 0). docs/auction.md.
 */
#include "models/market/mkt_rule_internal.h"

#include <stdlib.h>
#include <string.h>

#define KNAP_NODES 5000 /* search nodes per clearing (each O(orders + fits)): bounds its time */

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

/* First-fit decreasing of the chosen orders (chosen[i] = 1): lot[i] is set for them (-1 for one
 * that finds no room, the others going on); 1 when all are placed. `key` holds n. */
static int knap_pack(const mkt_order *orders, size_t n, const mkt_lot *lots, size_t nl, const int *chosen, int32_t *lot,
                     uint32_t *free_gpus, knap_key *key) {
  size_t m = 0;
  for (size_t i = 0; i < n; i++)
    if (chosen[i]) key[m++] = (knap_key){.gpus = orders[i].gpus, .price = orders[i].price, .idx = i};
  qsort(key, m, sizeof *key, knap_key_cmp);
  mkt__free_reset(lots, nl, free_gpus);
  int all = 1;
  for (size_t k = 0; k < m; k++) {
    size_t i = key[k].idx;
    lot[i] = mkt__place_first_fit(&orders[i], lots, nl, free_gpus, INT64_MAX);
    all &= lot[i] >= 0;
  }
  return all;
}

/* ---- the branch and bound ------------------------------------------------------------------------ */
typedef struct knap_bb {
  const mkt_order *orders;
  size_t m, stride;
  const size_t *item;     /* the orders searched, by price (highest first, ties lower index) */
  const int32_t *fit;     /* fit[k * stride + j]: the j-th lot item k fits (home first), -1 ends */
  const size_t *lbeg;     /* the items that fit lot l: litem[lbeg[l] .. lbeg[l + 1]) */
  const uint32_t *litem;  /*   (items, by index) */
  uint32_t *cnt;          /* per item: lots it fits with room for it now */
  const uint32_t *cls;    /* lots alike for every item share a class */
  uint32_t maxg;          /* GPUs of the largest lot */
  uint32_t *free_gpus;    /* per lot, now */
  uint64_t room;          /* sum of free_gpus */
  int32_t *at, *best_at;  /* per item: its lot now, and in the best set (-1: out) */
  int64_t cur, best, ub;  /* revenue now, of the best set, and a proven upper bound */
  uint64_t *stamp, nodes; /* stamp[cls * (maxg + 1) + free]: the node that tried that lot kind */
} knap_bb;

/* An upper bound: the revenue now + the fractional fill of the room by the items k.. (price order)
 * that still fit some lot with room for them (LP bound of the relaxation, less the items that no
 * lot can take any more). */
static int64_t knap_bound(const knap_bb *b, size_t k) {
  int64_t v = b->cur;
  uint64_t r = b->room;
  for (; k < b->m && r > 0; k++) {
    if (!b->cnt[k]) continue;
    const mkt_order *o = &b->orders[b->item[k]];
    uint64_t g = o->gpus < r ? o->gpus : r;
    v += o->price * (int64_t)g;
    r -= g;
  }
  return v;
}

/* Lot l's free GPUs go from `from` to `to`: the items that fit it gain or lose it as a lot with
 * room for them. */
static void knap_lot_free(knap_bb *b, uint32_t l, uint32_t from, uint32_t to) {
  for (size_t q = b->lbeg[l]; q < b->lbeg[l + 1]; q++) {
    uint32_t k = b->litem[q], g = b->orders[b->item[k]].gpus;
    int had = g <= from, has = g <= to;
    if (had != has) b->cnt[k] += has ? 1u : (uint32_t)-1;
  }
  b->free_gpus[l] = to;
}

static void knap_search(knap_bb *b, size_t k) {
  if (b->cur > b->best) {
    b->best = b->cur;
    memcpy(b->best_at, b->at, b->m * sizeof *b->at);
  }
  if (k == b->m || b->best >= b->ub || b->nodes >= KNAP_NODES) return;
  b->nodes++;
  if (knap_bound(b, k) <= b->best) return;
  const mkt_order *o = &b->orders[b->item[k]];
  uint64_t node = b->nodes;
  for (const int32_t *f = &b->fit[k * b->stride]; *f >= 0 && b->cnt[k]; f++) {
    uint32_t l = (uint32_t)*f, fr = b->free_gpus[l];
    if (fr < o->gpus) continue;
    uint64_t *st = &b->stamp[(size_t)b->cls[l] * (b->maxg + 1) + fr];
    if (*st == node) continue; /* a lot alike was tried from this node */
    *st = node;
    knap_lot_free(b, l, fr, fr - o->gpus);
    b->room -= o->gpus;
    b->cur += o->price * (int64_t)o->gpus;
    b->at[k] = (int32_t)l;
    knap_search(b, k + 1);
    b->at[k] = -1;
    b->cur -= o->price * (int64_t)o->gpus;
    b->room += o->gpus;
    knap_lot_free(b, l, fr - o->gpus, fr);
    if (b->best >= b->ub || b->nodes >= KNAP_NODES) return;
  }
  knap_search(b, k + 1); /* left out */
}

/* The LP bound of the whole problem, each order's GPUs free to split over the lots it fits: a flow
 * of GPUs from the orders to the lots, of value price per GPU. The orders' GPUs form a gammoid, so
 * routing them greedily by price, one GPU at a time along an augmenting path (that may move GPUs
 * already routed to other lots), is optimal (Schrijver, Combinatorial Optimization, 2003, ch. 39
 * and 40). O(GPUs x fits) time; INT64_MAX when that exceeds 2e7 steps (no bound). */
static int64_t knap_flow_bound(const mkt_order *orders, const size_t *item, size_t m, const mkt_lot *lots, size_t nl,
                               const unsigned char *fits) {
  uint64_t cap = 0, edges = 0;
  for (size_t l = 0; l < nl; l++) cap += lots[l].gpus;
  for (size_t q = 0; q < nl * m; q++) edges += fits[q];
  if ((double)(cap + m) * (double)(edges + m + nl) > 2e7) return INT64_MAX;
  uint32_t *x = calloc(m * nl + 1, sizeof *x), *left = malloc((nl + 1) * sizeof *left);
  int32_t *from_item = malloc((nl + 1) * sizeof *from_item), *from_lot = malloc((m + 1) * sizeof *from_lot);
  uint32_t *queue = malloc((nl + 1) * sizeof *queue);
  unsigned char *seen = malloc(m + 1);
  int64_t ub = INT64_MAX;
  if (!x || !left || !from_item || !from_lot || !queue || !seen) goto done;
  ub = 0;
  for (size_t l = 0; l < nl; l++) left[l] = lots[l].gpus;
  for (size_t k = 0; k < m; k++) {
    for (uint32_t u = 0; u < orders[item[k]].gpus; u++) {
      /* breadth first over lots: from item k to the lots it fits; from a full lot back to an item
       * routed there, and on to the lots that item fits */
      memset(seen, 0, m);
      for (size_t l = 0; l < nl; l++) from_item[l] = -1;
      size_t qh = 0, qt = 0;
      int32_t end = -1;
      seen[k] = 1;
      from_lot[k] = -1;
      for (size_t l = 0; l < nl; l++)
        if (fits[l * m + k]) {
          from_item[l] = (int32_t)k;
          queue[qt++] = (uint32_t)l;
        }
      while (qh < qt && end < 0) {
        uint32_t l = queue[qh++];
        if (left[l] > 0) {
          end = (int32_t)l;
          break;
        }
        for (size_t j = 0; j < m; j++) {
          if (seen[j] || !x[j * nl + l]) continue;
          seen[j] = 1;
          from_lot[j] = (int32_t)l;
          for (size_t l2 = 0; l2 < nl; l2++)
            if (fits[l2 * m + j] && from_item[l2] < 0) {
              from_item[l2] = (int32_t)j;
              queue[qt++] = (uint32_t)l2;
            }
        }
      }
      if (end < 0) break; /* no more of item k's GPUs can be routed */
      left[end]--;
      for (int32_t l = end; l >= 0;) { /* one GPU more into l from its item, one less from where it came */
        int32_t j = from_item[l];
        x[(size_t)j * nl + (size_t)l]++;
        l = from_lot[j];
        if (l >= 0) x[(size_t)j * nl + (size_t)l]--;
      }
      ub += orders[item[k]].price;
    }
  }
done:
  free(x);
  free(left);
  free(from_item);
  free(from_lot);
  free(queue);
  free(seen);
  return ub;
}

typedef struct knap_col {
  const unsigned char *col; /* lot's fits over the items */
  size_t m;
  uint32_t lot;
} knap_col;
static int knap_col_cmp(const void *a, const void *b) {
  const knap_col *x = a, *y = b;
  int c = memcmp(x->col, y->col, x->m);
  return c ? c : (x->lot > y->lot) - (x->lot < y->lot);
}

/* Step 2 on the orders eligible (elig[i]); lot[] holds a feasible assignment to start from (-1:
 * out), and receives the best one found. 0 or MKT_ENOMEM. ub: a proven upper bound on the revenue
 * (INT64_MAX: none). */
static int knap_branch(const mkt_order *orders, size_t n, const mkt_lot *lots, size_t nl, const int *elig, int64_t ub,
                       int32_t *lot) {
  size_t m = 0, *item = malloc(n * sizeof *item), *rank = malloc(n * sizeof *rank);
  size_t *lbeg = malloc((nl + 1) * sizeof *lbeg);
  int32_t *fit = NULL, *at = NULL, *best_at = NULL;
  unsigned char *fits = NULL;
  uint32_t *cls = NULL, *litem = NULL, *cnt = NULL, *free_gpus = malloc(nl * sizeof *free_gpus);
  knap_col *col = NULL;
  uint64_t *stamp = NULL;
  int rc = MKT_ENOMEM;
  if (!item || !rank || !lbeg || !free_gpus) goto done;
  mkt__rank_by_price(orders, n, rank);
  for (size_t k = 0; k < n; k++)
    if (elig[rank[k]]) item[m++] = rank[k];
  uint32_t maxg = 0;
  for (size_t l = 0; l < nl; l++) maxg = lots[l].gpus > maxg ? lots[l].gpus : maxg;
  fit = malloc((m * (nl + 1) + 1) * sizeof *fit);
  fits = calloc(nl * m + 1, 1); /* lot-major: fits[l * m + k] */
  litem = malloc((nl * m + 1) * sizeof *litem);
  cnt = calloc(m + 1, sizeof *cnt);
  at = malloc((m + 1) * sizeof *at);
  best_at = malloc((m + 1) * sizeof *best_at);
  cls = malloc(nl * sizeof *cls);
  col = malloc(nl * sizeof *col);
  if (!fit || !fits || !litem || !cnt || !at || !best_at || !cls || !col) goto done;
  size_t nli = 0;
  for (size_t l = 0; l < nl; l++) { /* a lot's asks for the few power limits of the orders, once */
    mkt__ask_memo memo = {0};
    lbeg[l] = nli;
    for (size_t k = 0; k < m; k++) {
      fits[l * m + k] = (unsigned char)mkt__lot_fits_memo(&memo, &lots[l], lots[l].gpus, &orders[item[k]]);
      if (fits[l * m + k]) {
        litem[nli++] = (uint32_t)k;
        cnt[k]++;
      }
    }
  }
  lbeg[nl] = nli;
  for (size_t k = 0; k < m; k++) {
    int32_t h = mkt__home(&orders[item[k]], nl), *f = &fit[k * (nl + 1)];
    size_t j = 0;
    if (h >= 0 && fits[(size_t)h * m + k]) f[j++] = h;
    for (size_t l = 0; l < nl; l++)
      if (fits[l * m + k] && (int32_t)l != h) f[j++] = (int32_t)l;
    f[j] = -1;
    at[k] = -1;
    best_at[k] = lot[item[k]];
  }
  /* classes: lots with the same fits for every item (and the same GPUs, which the free count
   * covers: a lot alike is tried once per free count) */
  for (size_t l = 0; l < nl; l++) col[l] = (knap_col){fits + l * m, m, (uint32_t)l};
  qsort(col, nl, sizeof *col, knap_col_cmp);
  uint32_t nc = 0;
  for (size_t j = 0; j < nl; j++) {
    if (j > 0 && memcmp(col[j].col, col[j - 1].col, m) != 0) nc++;
    cls[col[j].lot] = nc;
  }
  stamp = calloc((size_t)(nc + 1) * (maxg + 1), sizeof *stamp);
  if (!stamp) goto done;
  int64_t flow = knap_flow_bound(orders, item, m, lots, nl, fits);
  if (flow < ub) ub = flow;
  mkt__free_reset(lots, nl, free_gpus);
  uint64_t room = 0;
  for (size_t l = 0; l < nl; l++) room += lots[l].gpus;
  int64_t start = 0;
  for (size_t k = 0; k < m; k++)
    if (best_at[k] >= 0) start += orders[item[k]].price * (int64_t)orders[item[k]].gpus;
  knap_bb b = {.orders = orders,
               .m = m,
               .stride = nl + 1,
               .item = item,
               .fit = fit,
               .lbeg = lbeg,
               .litem = litem,
               .cnt = cnt,
               .cls = cls,
               .maxg = maxg,
               .free_gpus = free_gpus,
               .room = room,
               .at = at,
               .best_at = best_at,
               .best = start,
               .ub = ub,
               .stamp = stamp};
  knap_search(&b, 0);
  for (size_t i = 0; i < n; i++) lot[i] = -1;
  for (size_t k = 0; k < m; k++) lot[item[k]] = best_at[k];
  rc = 0;
done:
  free(item);
  free(rank);
  free(lbeg);
  free(fit);
  free(fits);
  free(litem);
  free(cnt);
  free(at);
  free(best_at);
  free(cls);
  free(col);
  free(stamp);
  free(free_gpus);
  return rc;
}

/* A running winner away from its home moves home when its home has room; free[] is updated. */
static void knap_home(const mkt_order *orders, size_t n, const mkt_lot *lots, size_t nl, int32_t *lot,
                      uint32_t *free_gpus) {
  for (int moved = 1; moved;) {
    moved = 0;
    for (size_t i = 0; i < n; i++) {
      int32_t h = mkt__home(&orders[i], nl);
      if (lot[i] < 0 || h < 0 || h == lot[i] || !mkt_lot_fits(&lots[h], free_gpus[h], &orders[i])) continue;
      free_gpus[lot[i]] += orders[i].gpus;
      free_gpus[h] -= orders[i].gpus;
      lot[i] = h;
      moved = 1;
    }
  }
}

static long knapsack_clear(const mkt_order *orders, size_t n, const mkt_lot *lots, size_t nl, mkt_clearing *out) {
  int rc = mkt__clear_begin(orders, n, lots, nl, out);
  if (rc < 0) return rc;
  if (n == 0 || nl == 0) return 0;
  uint64_t capacity = 0;
  for (size_t l = 0; l < nl; l++) capacity += lots[l].gpus;
  mkt_bid *bids = malloc(n * sizeof *bids);
  int *chosen = malloc(n * sizeof *chosen), *elig = malloc(n * sizeof *elig);
  int32_t *lot = malloc(n * sizeof *lot), *greedy = malloc(n * sizeof *greedy);
  size_t *rank = malloc(n * sizeof *rank);
  knap_key *key = malloc(n * sizeof *key);
  uint32_t *free_gpus = malloc(nl * sizeof *free_gpus);
  long ret = MKT_ENOMEM;
  if (!bids || !chosen || !elig || !lot || !greedy || !rank || !key || !free_gpus) goto done;
  /* Orders that fit no lot, or add no revenue, are kept out by a weight above the capacity. */
  uint32_t too_big = capacity + 1 > UINT32_MAX ? UINT32_MAX : (uint32_t)(capacity + 1);
  for (size_t i = 0; i < n; i++) {
    elig[i] = orders[i].price > 0 && mkt__fits_some_lot(&orders[i], lots, nl);
    bids[i].price = orders[i].price;
    bids[i].gpus = elig[i] ? orders[i].gpus : too_big;
    bids[i].power_w = orders[i].power_w;
  }
  /* 1. max sum(price_i x gpus_i) s.t. sum(gpus_i) <= sum of the lots' GPUs (mkt_knapsack) */
  int64_t relax = mkt_knapsack(bids, n, capacity, chosen);
  if (relax < 0) goto done;
  int exact = (double)n * (double)(capacity + 1) <= 4e6; /* mkt_knapsack's table, not its greedy */
  int packed = knap_pack(orders, n, lots, nl, chosen, lot, free_gpus, key);
  if (!exact || !packed) {
    /* 2. the set does not pack (or the relaxation was not solved): search the assignments, from
     * the better of (a) the part of the set that packed, with the orders left out that fit the room
     * left, by price, and (b) the greedy by price, first fit (pay_as_bid's set) */
    mkt__rank_by_price(orders, n, rank);
    int64_t va = 0, vb = 0;
    for (size_t k = 0; k < n; k++) {
      size_t i = rank[k];
      if (!chosen[i]) lot[i] = -1;
      if (lot[i] < 0 && elig[i]) lot[i] = mkt__place_first_fit(&orders[i], lots, nl, free_gpus, INT64_MAX);
      if (lot[i] >= 0) va += orders[i].price * (int64_t)orders[i].gpus;
    }
    mkt__free_reset(lots, nl, free_gpus);
    for (size_t k = 0; k < n; k++) {
      size_t i = rank[k];
      greedy[i] = elig[i] ? mkt__place_first_fit(&orders[i], lots, nl, free_gpus, INT64_MAX) : -1;
      if (greedy[i] >= 0) vb += orders[i].price * (int64_t)orders[i].gpus;
    }
    if (vb > va) memcpy(lot, greedy, n * sizeof *lot);
    if (knap_branch(orders, n, lots, nl, elig, exact ? relax : INT64_MAX, lot) < 0) goto done;
    mkt__free_reset(lots, nl, free_gpus);
    for (size_t i = 0; i < n; i++) {
      chosen[i] = lot[i] >= 0;
      if (chosen[i]) free_gpus[lot[i]] -= orders[i].gpus;
    }
  }
  knap_home(orders, n, lots, nl, lot, free_gpus);
  /* The orders left out take the room that remains, by price, first fit (only those that add
   * revenue): nothing after a complete search, some after one that ran out of nodes. */
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
  free(elig);
  free(lot);
  free(greedy);
  free(rank);
  free(key);
  free(free_gpus);
  return ret;
}

const mkt_rule_ops mkt_rule_knapsack = {
    .name = "knapsack",
    .help = "the set of bids with the highest total revenue that packs on the hosts (TensorDock spot), "
            "pay as bid",
    .clear = knapsack_clear,
    .late_price = mkt__late_price_bid,
    .reprice = 0,
    .pays_bid = 1,
    .reference = NULL,
};
