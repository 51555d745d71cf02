/* test_auction.c - the bidding pool's clearing rules (models/market/mkt_rule.h) on random cases
 * and known answers: individual rationality and feasibility under every rule of the table,
 * truthfulness of vickrey (and that the same check catches pay_as_bid), GigaSPOT's profit rule
 * against pay_as_bid, the knapsack against brute force, determinism, edge cases, home-keeping,
 * and the rule table's look-ups. What each rule does: docs/auction.md.
 */
#include "models/market/mkt.h"
#include "models/market/mkt_rule.h"

#include <CUnit/CUnit.h>
#include "tests/randcase.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXN 48 /* orders per instance */
#define MAXL 12 /* lots per instance */
#define CASES 2000

/* ---- Random instances ---------------------------------------------------------------------- */
typedef struct inst {
  size_t n, nl;
  mkt_order o[MAXN];
  mkt_lot l[MAXL];
} inst;

typedef struct outcome {
  int win[MAXN];
  int32_t lot[MAXN];
  int64_t pay[MAXN];
  long ret;
} outcome;

static void gen_lot(rng *r, mkt_lot *l) {
  static const double mem[] = {8, 16, 24, 48, 80};
  static const double energy[] = {0, 100, 137.5, 150, 300, 500, 1000, 0.333};
  l->gpus = (uint32_t)rng_int(r, 1, 8);
  l->mem_gb = mem[rng_int(r, 0, 4)];
  l->pl_min_w = (double)rng_int(r, 60, 150);
  l->pl_max_w = l->pl_min_w + (double)rng_int(r, 0, 400);
  l->energy_musd_wh = energy[rng_int(r, 0, 7)];
  l->margin = rng_int(r, 0, 3) == 0 ? 0 : rng_unif(r);
  l->min_ask = rng_int(r, 0, 3) == 0 ? 0 : rng_int(r, 1, 60000);
}

static void gen_order(rng *r, mkt_order *o, const inst *in, size_t i) {
  static const double mem[] = {0, 0, 8, 16, 24, 48, 80, 100};
  /* a third of the prices copy an earlier one, so that ties are common */
  if (i > 0 && rng_int(r, 0, 2) == 0)
    o->price = in->o[rng_int(r, 0, (int64_t)i - 1)].price;
  else
    o->price = rng_int(r, 0, 400000);
  o->gpus = rng_int(r, 0, 4) < 2 ? 1 : (uint32_t)rng_int(r, 1, 8);
  o->power_w = (uint32_t)rng_int(r, 50, 550);
  o->mem_min_gb = mem[rng_int(r, 0, 7)];
  int64_t h = rng_int(r, 0, 19);
  if (in->nl == 0 || h < 10)
    o->home = -1;
  else if (h == 19)
    o->home = (int32_t)in->nl + 2; /* a host that left: treated as queued */
  else
    o->home = (int32_t)rng_int(r, 0, (int64_t)in->nl - 1);
}

/* nlmax > 1: one case in three has 8 to 10 small lots (1 to 3 GPUs), where vickrey sorts the lots
 * by ask once instead of scanning them (rule_vickrey.c), the others 1 to nlmax lots. */
static void gen_inst(rng *r, inst *in, size_t nmax, size_t nlmax) {
  int many = nlmax > 1 && rng_int(r, 0, 2) == 0;
  in->nl = many ? (size_t)rng_int(r, 8, 10) : (size_t)rng_int(r, 1, (int64_t)nlmax);
  in->n = (size_t)rng_int(r, 1, (int64_t)nmax);
  for (size_t l = 0; l < in->nl; l++) {
    gen_lot(r, &in->l[l]);
    if (many) in->l[l].gpus = (uint32_t)rng_int(r, 1, 3);
  }
  for (size_t i = 0; i < in->n; i++) gen_order(r, &in->o[i], in, i);
}

static int fits_some(const inst *in, const mkt_order *o) {
  for (size_t l = 0; l < in->nl; l++)
    if (mkt_lot_fits(&in->l[l], in->l[l].gpus, o)) return 1;
  return 0;
}

static long run_rule(const mkt_rule_ops *r, const inst *in, outcome *out) {
  /* garbage in the outputs: a rule must set every entry */
  for (size_t i = 0; i < MAXN; i++) {
    out->win[i] = 7;
    out->lot[i] = 99;
    out->pay[i] = -5;
  }
  mkt_clearing c = {out->win, out->lot, out->pay};
  out->ret = r->clear(in->o, in->n, in->l, in->nl, &c);
  return out->ret;
}

/* ---- 0. host economics ------------------------------------------------------------------------ */
static void test_lot_known(void) {
  mkt_lot l = {.gpus = 2,
               .mem_gb = 24,
               .pl_min_w = 100,
               .pl_max_w = 450,
               .energy_musd_wh = 500,
               .margin = 0.2,
               .min_ask = 50000};
  CU_ASSERT_EQUAL(mkt_lot_energy(&l, 300), 150000);
  CU_ASSERT_EQUAL(mkt_lot_ask(&l, 300), 180000);  /* 150000 x 1.2 */
  CU_ASSERT_EQUAL(mkt_lot_energy(&l, 50), 50000); /* clamped up to 100 W */
  CU_ASSERT_EQUAL(mkt_lot_ask(&l, 50), 60000);
  CU_ASSERT_EQUAL(mkt_lot_energy(&l, 600), 225000); /* clamped down to 450 W */
  l.min_ask = 70000;
  CU_ASSERT_EQUAL(mkt_lot_ask(&l, 50), 70000); /* the reserve */
  mkt_lot r = {.gpus = 1, .pl_min_w = 0, .pl_max_w = 1000, .energy_musd_wh = 0.5, .margin = 0.5};
  CU_ASSERT_EQUAL(mkt_lot_energy(&r, 101), 51); /* 50.5 rounds away from zero */
  CU_ASSERT_EQUAL(mkt_lot_ask(&r, 101), 77);    /* 51 x 1.5 = 76.5 */
  r.energy_musd_wh = 0.333;
  CU_ASSERT_EQUAL(mkt_lot_energy(&r, 100), 33);

  l.min_ask = 50000;
  mkt_order o = {.price = 180000, .gpus = 2, .power_w = 300, .mem_min_gb = 24, .home = -1};
  CU_ASSERT_EQUAL(mkt_lot_fits(&l, 2, &o), 1);
  CU_ASSERT_EQUAL(mkt_lot_fits(&l, 1, &o), 0); /* GPUs left */
  o.price = 179999;
  CU_ASSERT_EQUAL(mkt_lot_fits(&l, 2, &o), 0); /* below the ask */
  o.price = 180000;
  o.mem_min_gb = 24.5;
  CU_ASSERT_EQUAL(mkt_lot_fits(&l, 2, &o), 0); /* memory */
  o.mem_min_gb = 0;
  o.power_w = 99;
  CU_ASSERT_EQUAL(mkt_lot_fits(&l, 2, &o), 0); /* below the card's range */
  o.power_w = 451;
  CU_ASSERT_EQUAL(mkt_lot_fits(&l, 2, &o), 0); /* above the host's ceiling */
  o.power_w = 450;
  o.price = 1000000;
  CU_ASSERT_EQUAL(mkt_lot_fits(&l, 2, &o), 1);
  o.gpus = 0;
  CU_ASSERT_EQUAL(mkt_lot_fits(&l, 2, &o), 0); /* an order wants at least one GPU */
  CU_ASSERT_EQUAL(mkt_lot_fits(NULL, 2, &o), 0);
  CU_ASSERT_EQUAL(mkt_lot_fits(&l, 2, NULL), 0);
}

/* ---- 6. the table ------------------------------------------------------------------------------ */
static void test_table(void) {
  static const int reprice[] = {0, 0, 1, 1, 0};
  size_t k = 0;
  for (; mkt_rule_table[k]; k++) {
    const mkt_rule_ops *r = mkt_rule_table[k];
    CU_ASSERT_FATAL(k < 5);
    CU_ASSERT_PTR_NOT_NULL(r->name);
    CU_ASSERT_STRING_EQUAL(r->name, mkt_rule_names[k]); /* same order as mkt.h's names */
    CU_ASSERT(r->help && strlen(r->help) > 10);
    CU_ASSERT_PTR_NOT_NULL(r->clear);
    CU_ASSERT_PTR_NOT_NULL(r->late_price);
    CU_ASSERT_EQUAL(r->reprice, reprice[k]);
    CU_ASSERT_EQUAL(r->reference != NULL, k == 3); /* only the double auction leaves a price */
    CU_ASSERT_PTR_EQUAL(mkt_rule_find(r->name), r);
    CU_ASSERT_EQUAL(mkt_rule_index(r->name), (int)k);
  }
  CU_ASSERT_EQUAL(k, 5);
  CU_ASSERT_PTR_NULL(mkt_rule_names[k]);
  static const char *const names[] = {"gigaspot", "pay_as_bid", "vickrey", "double", "knapsack"};
  for (int i = 0; i < 5; i++) CU_ASSERT_EQUAL(mkt_rule_index(names[i]), i);
  CU_ASSERT_PTR_NULL(mkt_rule_find("second_price"));
  CU_ASSERT_EQUAL(mkt_rule_index("second_price"), -1);
  CU_ASSERT_EQUAL(mkt_rule_index("Vickrey"), -1);
  CU_ASSERT_EQUAL(mkt_rule_index(""), -1);
  CU_ASSERT_PTR_NULL(mkt_rule_find(NULL));
  CU_ASSERT_EQUAL(mkt_rule_index(NULL), -1);
}

/* ---- 1. individual rationality ----------------------------------------------------------------- */
static void check_late_price(chk *c, const mkt_rule_ops *r, const mkt_order *o, const mkt_lot *l, int64_t last) {
  int64_t p = r->late_price(o, l, last);
  int64_t ask = mkt_lot_ask(l, o->power_w);
  int fits = mkt_lot_fits(l, l->gpus, o);
  CHECK(c, p == -1 || (p >= ask && p <= o->price), "%s late_price %lld outside [ask %lld, price %lld]", r->name,
        (long long)p, (long long)ask, (long long)o->price);
  CHECK(c, fits || p == -1, "%s late_price %lld for an order that does not fit", r->name, (long long)p);
  if (!strcmp(r->name, "vickrey")) CHECK(c, p == (fits ? ask : -1), "vickrey late_price is not the ask");
  if (!strcmp(r->name, "pay_as_bid") || !strcmp(r->name, "knapsack"))
    CHECK(c, p == (fits ? o->price : -1), "%s late_price is not the bid", r->name);
  if (!strcmp(r->name, "gigaspot")) CHECK(c, p == -1 || p == o->price, "gigaspot late_price is not the bid");
}

static void test_rationality(void) {
  rng g = {.s = 1};
  chk c = {0};
  int below[64] = {0}; /* per rule: some winner paid less than its bid */
  for (int t = 0; t < CASES; t++) {
    inst in;
    gen_inst(&g, &in, t % 8 ? 12 : 40, 5); /* some with more than 16 orders (ranked by qsort) */
    for (size_t k = 0; mkt_rule_table[k]; k++) {
      const mkt_rule_ops *r = mkt_rule_table[k];
      outcome out;
      long ret = run_rule(r, &in, &out);
      CHECK(&c, ret >= 0, "%s case %d returned %ld", r->name, t, ret);
      long wins = 0;
      for (size_t i = 0; i < in.n; i++) {
        CHECK(&c, out.win[i] == 0 || out.win[i] == 1, "%s case %d: win[%zu] = %d", r->name, t, i, out.win[i]);
        if (!out.win[i]) {
          CHECK(&c, out.lot[i] == -1 && out.pay[i] == 0, "%s case %d: loser %zu has lot %d pay %lld", r->name, t, i,
                out.lot[i], (long long)out.pay[i]);
          continue;
        }
        wins++;
        CHECK(&c, out.lot[i] >= 0 && (size_t)out.lot[i] < in.nl, "%s case %d: winner %zu on lot %d", r->name, t, i,
              out.lot[i]);
        if (out.lot[i] < 0 || (size_t)out.lot[i] >= in.nl) continue;
        int64_t ask = mkt_lot_ask(&in.l[out.lot[i]], in.o[i].power_w);
        CHECK(&c, out.pay[i] <= in.o[i].price, "%s case %d: order %zu pays %lld above its bid %lld", r->name, t, i,
              (long long)out.pay[i], (long long)in.o[i].price);
        CHECK(&c, out.pay[i] >= ask, "%s case %d: order %zu pays %lld below its lot's ask %lld", r->name, t, i,
              (long long)out.pay[i], (long long)ask);
        /* pays_bid (clients shade their bids under it, mkt_strategy.h) means every winner pays its bid */
        if (r->pays_bid)
          CHECK(&c, out.pay[i] == in.o[i].price, "%s case %d: pay-as-bid rule does not charge the bid", r->name, t);
        else if (out.pay[i] < in.o[i].price)
          below[k] = 1;
      }
      CHECK(&c, ret == wins, "%s case %d: returned %ld for %ld winners", r->name, t, ret, wins);
      int64_t ref = r->reference ? r->reference(in.o, in.n, &(mkt_clearing){out.win, out.lot, out.pay}) : -1;
      if (!strcmp(r->name, "double")) /* a uniform price */
        for (size_t i = 0; i < in.n; i++)
          CHECK(&c, !out.win[i] || out.pay[i] == ref, "double case %d: pay %lld is not the uniform %lld", t,
                (long long)out.pay[i], (long long)ref);
      int64_t lasts[] = {-1, ref, 0, rng_int(&g, 0, 500000), INT64_MAX};
      for (size_t i = 0; i < in.n; i++)
        for (size_t l = 0; l < in.nl; l++) check_late_price(&c, r, &in.o[i], &in.l[l], lasts[rng_int(&g, 0, 4)]);
    }
  }
  /* a rule that does not declare pays_bid does charge some winner less than its bid */
  for (size_t k = 0; mkt_rule_table[k]; k++)
    CHECK(&c, mkt_rule_table[k]->pays_bid || below[k], "%s: declares pays_bid = 0, but every winner paid its bid",
          mkt_rule_table[k]->name);
  chk_report(&c, "individual rationality");
}

/* ---- 2. feasibility, and 5. home-keeping on random cases -------------------------------------- */
/* An order that fits no lot: too many GPUs, too much memory, or a power limit outside every
 * range, at a price above everything else. */
static void make_impossible(rng *g, const inst *in, mkt_order *o) {
  uint32_t maxg = 0;
  double maxmem = 0, minpl = 1e9, maxpl = 0;
  for (size_t l = 0; l < in->nl; l++) {
    if (in->l[l].gpus > maxg) maxg = in->l[l].gpus;
    if (in->l[l].mem_gb > maxmem) maxmem = in->l[l].mem_gb;
    if (in->l[l].pl_min_w < minpl) minpl = in->l[l].pl_min_w;
    if (in->l[l].pl_max_w > maxpl) maxpl = in->l[l].pl_max_w;
  }
  o->price = 5000000;
  o->gpus = 1;
  o->power_w = 200 < minpl ? 200 : (uint32_t)minpl;
  o->mem_min_gb = 0;
  o->home = in->nl ? (int32_t)rng_int(g, 0, (int64_t)in->nl - 1) : -1;
  switch (rng_int(g, 0, 2)) {
  case 0: o->gpus = maxg + 1; break;
  case 1: o->mem_min_gb = maxmem + 1; break;
  default: o->power_w = rng_int(g, 0, 1) && minpl >= 2 ? (uint32_t)minpl - 1 : (uint32_t)maxpl + 1; break;
  }
}

static void check_feasible(chk *c, const mkt_rule_ops *r, const inst *in, const outcome *out, int t) {
  uint32_t used[MAXL] = {0};
  for (size_t i = 0; i < in->n; i++)
    if (out->win[i] && out->lot[i] >= 0 && (size_t)out->lot[i] < in->nl) used[out->lot[i]] += in->o[i].gpus;
  for (size_t l = 0; l < in->nl; l++)
    CHECK(c, used[l] <= in->l[l].gpus, "%s case %d: lot %zu holds %u of %u GPUs", r->name, t, l, used[l],
          in->l[l].gpus);
  for (size_t i = 0; i < in->n; i++) {
    const mkt_order *o = &in->o[i];
    if (!fits_some(in, o)) CHECK(c, !out->win[i], "%s case %d: order %zu fits no lot but wins", r->name, t, i);
    if (!out->win[i] || out->lot[i] < 0 || (size_t)out->lot[i] >= in->nl) continue;
    const mkt_lot *l = &in->l[out->lot[i]];
    CHECK(c, mkt_lot_fits(l, l->gpus, o), "%s case %d: order %zu does not fit its lot %d", r->name, t, i, out->lot[i]);
    /* Home-keeping: a running winner away from home did not fit there, even with the GPUs its home
     * has left at the end (a lot's free GPUs only shrink during a clearing, so it did not fit when
     * it was placed). Under the double auction a lot must also ask at most the uniform price. */
    int32_t h = o->home;
    if (h < 0 || (size_t)h >= in->nl || h == out->lot[i]) continue;
    uint32_t left = in->l[h].gpus > used[h] ? in->l[h].gpus - used[h] : 0;
    int home_fits = mkt_lot_fits(&in->l[h], left, o);
    if (!strcmp(r->name, "double")) home_fits = home_fits && mkt_lot_ask(&in->l[h], o->power_w) <= out->pay[i];
    CHECK(c, !home_fits, "%s case %d: running order %zu moved from home %d (fits, %u GPUs left) to lot %d", r->name, t,
          i, h, left, out->lot[i]);
  }
}

static void test_feasibility(void) {
  rng g = {.s = 2};
  chk c = {0};
  for (int t = 0; t < CASES; t++) {
    inst in;
    gen_inst(&g, &in, t % 8 ? 12 : 40, 5);
    /* up to three orders that fit nowhere, at the top price, at random places */
    int nimp = (int)rng_int(&g, 0, 3);
    for (int k = 0; k < nimp && in.n < MAXN; k++) {
      size_t at = (size_t)rng_int(&g, 0, (int64_t)in.n);
      memmove(&in.o[at + 1], &in.o[at], (in.n - at) * sizeof in.o[0]);
      make_impossible(&g, &in, &in.o[at]);
      in.n++;
      CHECK(&c, !fits_some(&in, &in.o[at]), "case %d: the impossible order fits", t);
    }
    for (size_t k = 0; mkt_rule_table[k]; k++) {
      outcome out;
      run_rule(mkt_rule_table[k], &in, &out);
      check_feasible(&c, mkt_rule_table[k], &in, &out, t);
    }
  }
  chk_report(&c, "feasibility");
}

/* ---- 3. truthfulness --------------------------------------------------------------------------- */
/* Utility of order i with true value v per GPU-hour: (v - pay) x gpus when it wins, else 0. */
static int64_t utility(const outcome *out, const inst *in, size_t i, int64_t v) {
  return out->win[i] ? (v - out->pay[i]) * (int64_t)in->o[i].gpus : 0;
}

/* The largest gain over bidding the truth v = in->o[i].price that a misreport from a grid of about
 * 40 bids gives order i (0 when none helps); *best_b set to that bid. */
static int64_t best_misreport_gain(const mkt_rule_ops *r, const inst *in0, size_t i, rng *g, int64_t *best_b) {
  inst in = *in0;
  int64_t v = in.o[i].price;
  outcome out;
  run_rule(r, &in, &out);
  int64_t truthful = utility(&out, &in, i, v);
  int64_t grid[64];
  size_t m = 0;
  int64_t fixed[] = {0, 1, v - 1, v + 1, v / 2, v / 4, 3 * v / 4, 5 * v / 4, 2 * v, v + 100000};
  for (size_t k = 0; k < sizeof fixed / sizeof *fixed; k++) grid[m++] = fixed[k];
  for (int k = 0; k < 8; k++) grid[m++] = rng_int(g, 0, 2 * v + 1);
  for (size_t j = 0; j < in.n && m + 3 <= 40; j++) /* around the other bids */
    if (j != i) {
      grid[m++] = in.o[j].price - 1;
      grid[m++] = in.o[j].price;
      grid[m++] = in.o[j].price + 1;
    }
  for (size_t l = 0; l < in.nl && m + 2 <= 60; l++) { /* around the asks */
    int64_t a = mkt_lot_ask(&in.l[l], in.o[i].power_w);
    grid[m++] = a - 1;
    grid[m++] = a;
  }
  int64_t gain = 0;
  *best_b = v;
  for (size_t k = 0; k < m; k++) {
    if (grid[k] < 0) continue;
    in.o[i].price = grid[k];
    run_rule(r, &in, &out);
    int64_t u = utility(&out, &in, i, v);
    if (u - truthful > gain) {
      gain = u - truthful;
      *best_b = grid[k];
    }
  }
  return gain;
}

static void test_vickrey_truthful(void) {
  const mkt_rule_ops *vk = mkt_rule_find("vickrey");
  CU_ASSERT_PTR_NOT_NULL_FATAL(vk);
  rng g = {.s = 3};
  chk c = {0};
  long winners = 0;
  for (int t = 0; t < CASES; t++) {
    inst in;
    gen_inst(&g, &in, t % 8 ? 10 : 30, 4);
    size_t i = (size_t)rng_int(&g, 0, (int64_t)in.n - 1);
    int64_t b;
    int64_t gain = best_misreport_gain(vk, &in, i, &g, &b);
    CHECK(&c, gain == 0, "case %d: order %zu (value %lld) gains %lld by bidding %lld", t, i, (long long)in.o[i].price,
          (long long)gain, (long long)b);
    /* the payment is exactly the threshold: a winner still wins bidding its payment, and loses
     * one musd below it */
    outcome out;
    run_rule(vk, &in, &out);
    for (size_t w = 0; w < in.n; w++) {
      if (!out.win[w]) continue;
      winners++;
      inst at = in;
      at.o[w].price = out.pay[w];
      outcome o2;
      run_rule(vk, &at, &o2);
      CHECK(&c, o2.win[w] && o2.pay[w] == out.pay[w], "case %d: winner %zu loses bidding its pay %lld", t, w,
            (long long)out.pay[w]);
      if (out.pay[w] > 0) {
        at.o[w].price = out.pay[w] - 1;
        run_rule(vk, &at, &o2);
        CHECK(&c, !o2.win[w], "case %d: winner %zu still wins below its pay %lld", t, w, (long long)out.pay[w]);
      }
    }
  }
  CU_ASSERT(winners > CASES / 2); /* the cases are not all trivial */
  chk_report(&c, "vickrey truthfulness");
}

static void test_vickrey_known(void) {
  const mkt_rule_ops *vk = mkt_rule_find("vickrey");
  /* unit bids on identical GPUs: every winner pays the highest losing bid (Vickrey 1961); at a tie
   * the lower index ranks first, so bidding 100 beats order 2's 100 */
  inst a = {.n = 3, .nl = 1};
  a.l[0] = (mkt_lot){.gpus = 2, .mem_gb = 24, .pl_min_w = 100, .pl_max_w = 300, .energy_musd_wh = 0, .min_ask = 10};
  int64_t pa[] = {300, 200, 100};
  for (int i = 0; i < 3; i++) a.o[i] = (mkt_order){.price = pa[i], .gpus = 1, .power_w = 200, .home = -1};
  outcome o;
  CU_ASSERT_EQUAL(run_rule(vk, &a, &o), 2);
  CU_ASSERT(o.win[0] && o.win[1] && !o.win[2]);
  CU_ASSERT_EQUAL(o.pay[0], 100);
  CU_ASSERT_EQUAL(o.pay[1], 100);
  /* with no competition the threshold is the ask */
  a.n = 1;
  CU_ASSERT_EQUAL(run_rule(vk, &a, &o), 1);
  CU_ASSERT_EQUAL(o.pay[0], 10);
  /* multi-GPU: a 4-GPU order below 250 is beaten to the 4-GPU lot by the 1-GPU bid of 250, so it
   * pays 250, above the highest losing bid (200) that a per-GPU uniform price would charge */
  inst b = {.n = 3, .nl = 2};
  b.l[0] = a.l[0];
  b.l[0].gpus = 4;
  b.l[1] = a.l[0];
  b.l[1].gpus = 1;
  b.o[0] = (mkt_order){.price = 300, .gpus = 4, .power_w = 200, .home = -1};
  b.o[1] = (mkt_order){.price = 250, .gpus = 1, .power_w = 200, .home = -1};
  b.o[2] = (mkt_order){.price = 200, .gpus = 1, .power_w = 200, .home = -1};
  CU_ASSERT_EQUAL(run_rule(vk, &b, &o), 2);
  CU_ASSERT(o.win[0] && o.win[1] && !o.win[2]);
  CU_ASSERT_EQUAL(o.lot[0], 0);
  CU_ASSERT_EQUAL(o.lot[1], 1);
  CU_ASSERT_EQUAL(o.pay[0], 250);
  CU_ASSERT_EQUAL(o.pay[1], 200);
  /* a queued order takes the cheapest lot with room: first fit would put it on the expensive
   * lot 0 at pay >= 100, and bidding 50 would then win lot 1 cheaper (not truthful) */
  inst d = {.n = 1, .nl = 2};
  d.l[0] = a.l[0];
  d.l[0].min_ask = 100;
  d.l[1] = a.l[0];
  d.o[0] = (mkt_order){.price = 200, .gpus = 1, .power_w = 200, .home = -1};
  CU_ASSERT_EQUAL(run_rule(vk, &d, &o), 1);
  CU_ASSERT_EQUAL(o.lot[0], 1);
  CU_ASSERT_EQUAL(o.pay[0], 10);
  /* a running order competes for its home only: it stays on its expensive home and pays its ask */
  d.o[0].home = 0;
  CU_ASSERT_EQUAL(run_rule(vk, &d, &o), 1);
  CU_ASSERT_EQUAL(o.lot[0], 0);
  CU_ASSERT_EQUAL(o.pay[0], 100);
  d.o[0].price = 99; /* below its home's ask: outbid, it does not move in this clearing */
  CU_ASSERT_EQUAL(run_rule(vk, &d, &o), 0);
  CU_ASSERT_EQUAL(o.lot[0], -1);
  /* the same with 9 lots (sorted once by ask): asks 90, 80, ..., 20; lots 7 and 8 both ask 20 */
  inst e = {.n = 3, .nl = 9};
  for (int l = 0; l < 9; l++) {
    e.l[l] = a.l[0];
    e.l[l].gpus = 1;
    e.l[l].min_ask = l < 8 ? 90 - 10 * l : 20;
  }
  e.l[2].mem_gb = 8; /* too little memory for the orders */
  for (int i = 0; i < 3; i++)
    e.o[i] = (mkt_order){.price = 200 - i, .gpus = 1, .power_w = 200, .mem_min_gb = 16, .home = -1};
  CU_ASSERT_EQUAL(run_rule(vk, &e, &o), 3);
  CU_ASSERT(o.lot[0] == 7 && o.lot[1] == 8 && o.lot[2] == 6);
  /* each pays 30: bidding below 30 it would come last and find only lot 6 (ask 30) left */
  CU_ASSERT(o.pay[0] == 30 && o.pay[1] == 30 && o.pay[2] == 30);
}

/* The same check on pay_as_bid must find a profitable misreport: shading the bid. */
static void test_pay_as_bid_not_truthful(void) {
  const mkt_rule_ops *pb = mkt_rule_find("pay_as_bid");
  inst a = {.n = 2, .nl = 1};
  a.l[0] = (mkt_lot){.gpus = 1, .mem_gb = 24, .pl_min_w = 100, .pl_max_w = 300, .energy_musd_wh = 0, .min_ask = 100};
  a.o[0] = (mkt_order){.price = 1000, .gpus = 1, .power_w = 200, .home = -1};
  a.o[1] = (mkt_order){.price = 400, .gpus = 1, .power_w = 200, .home = -1};
  rng g = {.s = 4};
  int64_t b;
  int64_t gain = best_misreport_gain(pb, &a, 0, &g, &b);
  CU_ASSERT(gain > 0);
  CU_ASSERT(b >= 400 && b < 1000); /* it still wins, and pays less */
  CU_ASSERT_EQUAL(gain, 1000 - b);
  CU_ASSERT_EQUAL(best_misreport_gain(mkt_rule_find("vickrey"), &a, 0, &g, &b), 0);
}

/* ---- 4. GigaSPOT ---------------------------------------------------------------------------------- */
static void test_gigaspot_power(void) {
  const mkt_rule_ops *gs = mkt_rule_find("gigaspot"), *pb = mkt_rule_find("pay_as_bid");
  /* one GPU, energy 500 musd/Wh: profit A = 300000 - 450 x 500 = 75000, B = 280000 - 150 x 500 =
   * 205000; the host prefers B, a price ranking prefers A */
  inst a = {.n = 2, .nl = 1};
  a.l[0] = (mkt_lot){.gpus = 1, .mem_gb = 24, .pl_min_w = 100, .pl_max_w = 450, .energy_musd_wh = 500};
  a.o[0] = (mkt_order){.price = 300000, .gpus = 1, .power_w = 450, .home = -1};
  a.o[1] = (mkt_order){.price = 280000, .gpus = 1, .power_w = 150, .home = -1};
  outcome o;
  CU_ASSERT_EQUAL(run_rule(gs, &a, &o), 1);
  CU_ASSERT(!o.win[0] && o.win[1]);
  CU_ASSERT_EQUAL(o.pay[1], 280000);
  CU_ASSERT_EQUAL(run_rule(pb, &a, &o), 1);
  CU_ASSERT(o.win[0] && !o.win[1]);
  CU_ASSERT_EQUAL(o.pay[0], 300000);
  /* the same through mkt_gigaspot_pick (mkt.h) */
  mkt_bid bids[] = {{300000, 1, 450}, {280000, 1, 150}};
  CU_ASSERT_EQUAL(mkt_gigaspot_pick(bids, 2, 1, 0, 100, 450, 500), 1);
  /* equal profit: the order running on the lot wins the tie, otherwise the lower index */
  a.o[0] = (mkt_order){.price = 200000, .gpus = 1, .power_w = 200, .home = -1};
  a.o[1] = (mkt_order){.price = 200000, .gpus = 1, .power_w = 200, .home = -1};
  run_rule(gs, &a, &o);
  CU_ASSERT(o.win[0] && !o.win[1]);
  a.o[1].home = 0;
  run_rule(gs, &a, &o);
  CU_ASSERT(!o.win[0] && o.win[1]);
  /* late: the bid when profitable, else wait */
  CU_ASSERT_EQUAL(gs->late_price(&a.o[0], &a.l[0], -1), 200000);
  mkt_order z = {.price = 100000, .gpus = 1, .power_w = 200, .home = -1}; /* profit 0 */
  CU_ASSERT_EQUAL(gs->late_price(&z, &a.l[0], -1), -1);
  CU_ASSERT_EQUAL(pb->late_price(&z, &a.l[0], -1), 100000);
}

static double profit(const mkt_lot *l, const mkt_order *o) {
  return (double)o->price - l->energy_musd_wh * (double)o->power_w;
}

/* On one lot GigaSPOT's winners are the most profitable bids: the most profitable order that fits
 * wins, no loser that still fits is profitable, and with single-GPU orders no loser that fits is
 * more profitable than a winner. */
static void test_gigaspot_single_lot(void) {
  const mkt_rule_ops *gs = mkt_rule_find("gigaspot");
  rng g = {.s = 5};
  chk c = {0};
  for (int t = 0; t < CASES; t++) {
    inst in;
    gen_inst(&g, &in, 12, 1);
    int unit = t % 2;
    for (size_t i = 0; i < in.n; i++) {
      if (unit) in.o[i].gpus = 1;
      if (in.o[i].home > 0) in.o[i].home = -1;
    }
    const mkt_lot *l = &in.l[0];
    outcome out;
    run_rule(gs, &in, &out);
    uint32_t used = 0;
    for (size_t i = 0; i < in.n; i++)
      if (out.win[i]) used += in.o[i].gpus;
    double best = 0;
    long besti = -1;
    for (size_t i = 0; i < in.n; i++)
      if (mkt_lot_fits(l, l->gpus, &in.o[i]) && profit(l, &in.o[i]) > best) {
        best = profit(l, &in.o[i]);
        besti = (long)i;
      }
    if (besti >= 0) {
      /* the best, or one tied with it, wins */
      int tied_wins = 0;
      for (size_t i = 0; i < in.n; i++)
        if (out.win[i] && profit(l, &in.o[i]) == best) tied_wins = 1;
      CHECK(&c, tied_wins, "case %d: the most profitable order %ld (profit %.1f) loses", t, besti, best);
    }
    for (size_t i = 0; i < in.n; i++) {
      if (out.win[i]) {
        CHECK(&c, profit(l, &in.o[i]) > 0, "case %d: winner %zu is not profitable", t, i);
        continue;
      }
      if (!mkt_lot_fits(l, l->gpus, &in.o[i])) continue;
      CHECK(&c, !(mkt_lot_fits(l, l->gpus - used, &in.o[i]) && profit(l, &in.o[i]) > 0),
            "case %d: profitable loser %zu fits the %u GPUs left", t, i, l->gpus - used);
      if (unit)
        for (size_t w = 0; w < in.n; w++)
          CHECK(&c, !out.win[w] || profit(l, &in.o[w]) >= profit(l, &in.o[i]),
                "case %d: loser %zu more profitable than winner %zu", t, i, w);
    }
  }
  chk_report(&c, "gigaspot on one lot");
}

/* ---- knapsack and double: known answers ---------------------------------------------------------- */
/* On one lot any set within its GPUs packs, so the knapsack rule must reach the best revenue. */
static void test_knapsack_single_lot(void) {
  const mkt_rule_ops *ks = mkt_rule_find("knapsack"), *pb = mkt_rule_find("pay_as_bid");
  rng g = {.s = 6};
  chk c = {0};
  for (int t = 0; t < CASES; t++) {
    inst in;
    gen_inst(&g, &in, 12, 1);
    const mkt_lot *l = &in.l[0];
    int64_t best = 0;
    for (unsigned m = 0; m < (1u << in.n); m++) {
      uint32_t w = 0;
      int64_t v = 0;
      int ok = 1;
      for (size_t i = 0; i < in.n && ok; i++)
        if (m & (1u << i)) {
          ok = mkt_lot_fits(l, l->gpus, &in.o[i]);
          w += in.o[i].gpus;
          v += in.o[i].price * (int64_t)in.o[i].gpus;
        }
      if (ok && w <= l->gpus && v > best) best = v;
    }
    outcome out, op;
    run_rule(ks, &in, &out);
    run_rule(pb, &in, &op);
    int64_t got = 0, greedy = 0;
    for (size_t i = 0; i < in.n; i++) {
      if (out.win[i]) got += in.o[i].price * (int64_t)in.o[i].gpus;
      if (op.win[i]) greedy += in.o[i].price * (int64_t)in.o[i].gpus;
    }
    CHECK(&c, got == best, "case %d: knapsack revenue %lld, best %lld", t, (long long)got, (long long)best);
    CHECK(&c, got >= greedy, "case %d: knapsack %lld below pay_as_bid %lld", t, (long long)got, (long long)greedy);
  }
  chk_report(&c, "knapsack on one lot");
  /* where the greedy by price is wrong: 3 GPUs, 1-GPU bids of 120 and 100 against a 3-GPU bid of
   * 90: the greedy earns 220, the knapsack 270 */
  inst k = {.n = 3, .nl = 1};
  k.l[0] = (mkt_lot){.gpus = 3, .mem_gb = 24, .pl_min_w = 100, .pl_max_w = 300, .min_ask = 10};
  k.o[0] = (mkt_order){.price = 120, .gpus = 1, .power_w = 200, .home = -1};
  k.o[1] = (mkt_order){.price = 100, .gpus = 1, .power_w = 200, .home = -1};
  k.o[2] = (mkt_order){.price = 90, .gpus = 3, .power_w = 200, .home = -1};
  outcome o;
  CU_ASSERT_EQUAL(run_rule(ks, &k, &o), 1);
  CU_ASSERT(!o.win[0] && !o.win[1] && o.win[2]);
  CU_ASSERT_EQUAL(o.pay[2], 90);
  CU_ASSERT_EQUAL(run_rule(pb, &k, &o), 2);
  CU_ASSERT(o.win[0] && o.win[1] && !o.win[2]);
  /* a 3-GPU order fits no lot of 2 GPUs, whatever it bids: it stays out of the knapsack, which
   * counts the GPUs of both lots together */
  inst p = {.n = 3, .nl = 2};
  p.l[0] = k.l[0];
  p.l[0].gpus = 2;
  p.l[1] = p.l[0];
  p.o[0] = (mkt_order){.price = 500, .gpus = 3, .power_w = 200, .home = -1};
  p.o[1] = (mkt_order){.price = 100, .gpus = 2, .power_w = 200, .home = -1};
  p.o[2] = (mkt_order){.price = 100, .gpus = 2, .power_w = 200, .home = -1};
  CU_ASSERT_EQUAL(run_rule(ks, &p, &o), 2);
  CU_ASSERT(!o.win[0] && o.win[1] && o.win[2]);
  /* a set within the total GPUs that does not pack: 3 orders of 2 GPUs on lots of 3 + 3 GPUs; the
   * lowest bid is dropped, then the 1-GPU order fills the room left */
  inst q = {.n = 4, .nl = 2};
  q.l[0] = k.l[0];
  q.l[1] = k.l[0];
  q.o[0] = (mkt_order){.price = 300, .gpus = 2, .power_w = 200, .home = -1};
  q.o[1] = (mkt_order){.price = 200, .gpus = 2, .power_w = 200, .home = -1};
  q.o[2] = (mkt_order){.price = 250, .gpus = 2, .power_w = 200, .home = -1};
  q.o[3] = (mkt_order){.price = 20, .gpus = 1, .power_w = 200, .home = -1};
  CU_ASSERT_EQUAL(run_rule(ks, &q, &o), 3);
  CU_ASSERT(o.win[0] && !o.win[1] && o.win[2] && o.win[3]);
}

static void test_double_known(void) {
  const mkt_rule_ops *da = mkt_rule_find("double");
  /* unit asks 100, 100; unit bids 300, 200, 50: k = 2, p = 100 + (200 - 100) / 2 = 150 */
  inst a = {.n = 3, .nl = 1};
  a.l[0] = (mkt_lot){.gpus = 2, .mem_gb = 24, .pl_min_w = 100, .pl_max_w = 300, .energy_musd_wh = 0, .min_ask = 100};
  int64_t pa[] = {300, 200, 50};
  for (int i = 0; i < 3; i++) a.o[i] = (mkt_order){.price = pa[i], .gpus = 1, .power_w = 200, .home = -1};
  outcome o;
  CU_ASSERT_EQUAL(run_rule(da, &a, &o), 2);
  CU_ASSERT(o.win[0] && o.win[1] && !o.win[2]);
  CU_ASSERT_EQUAL(o.pay[0], 150);
  CU_ASSERT_EQUAL(o.pay[1], 150);
  int64_t ref = da->reference(a.o, a.n, &(mkt_clearing){o.win, o.lot, o.pay});
  CU_ASSERT_EQUAL(ref, 150);
  CU_ASSERT_EQUAL(da->late_price(&a.o[0], &a.l[0], ref), 150);
  CU_ASSERT_EQUAL(da->late_price(&a.o[0], &a.l[0], -1), 100);  /* no clearing yet: the ask */
  CU_ASSERT_EQUAL(da->late_price(&a.o[0], &a.l[0], 400), 100); /* above its bid: the ask */
  CU_ASSERT_EQUAL(da->late_price(&a.o[2], &a.l[0], ref), -1);  /* below the ask */
  /* asks are at full power (pl_max): energy 100 musd/Wh x 300 W = 30000; a 2-GPU bid at 50000 and a
   * 1-GPU one at 40000: k = 2 (bids 50000, 50000 vs asks 30000, 30000), p = 40000 */
  inst b = {.n = 2, .nl = 1};
  b.l[0] = (mkt_lot){.gpus = 2, .mem_gb = 24, .pl_min_w = 100, .pl_max_w = 300, .energy_musd_wh = 100};
  b.o[0] = (mkt_order){.price = 50000, .gpus = 2, .power_w = 150, .home = -1};
  b.o[1] = (mkt_order){.price = 40000, .gpus = 1, .power_w = 150, .home = -1};
  CU_ASSERT_EQUAL(run_rule(da, &b, &o), 1);
  CU_ASSERT(o.win[0] && !o.win[1]);
  CU_ASSERT_EQUAL(o.pay[0], 40000);
  /* nobody trades: -1 */
  b.o[0].price = b.o[1].price = 20000;
  CU_ASSERT_EQUAL(run_rule(da, &b, &o), 0);
  CU_ASSERT_EQUAL(da->reference(b.o, b.n, &(mkt_clearing){o.win, o.lot, o.pay}), -1);
}

/* The ranking by price, ties to the lower index, for small and large n (insertion sort up to 16
 * orders, qsort above): on one lot of G GPUs with single-GPU orders that all fit, pay_as_bid's and
 * vickrey's winners are the first G of that ranking. */
static void test_ranking(void) {
  rng g = {.s = 8};
  chk c = {0};
  for (int t = 0; t < 400; t++) {
    inst in = {.n = (size_t)rng_int(&g, 1, MAXN), .nl = 1};
    in.l[0] =
        (mkt_lot){.gpus = (uint32_t)rng_int(&g, 1, 30), .mem_gb = 24, .pl_min_w = 100, .pl_max_w = 300, .min_ask = 100};
    for (size_t i = 0; i < in.n; i++)
      in.o[i] = (mkt_order){.price = rng_int(&g, 100, 110), .gpus = 1, .power_w = 200, .home = -1};
    for (int r = 0; r < 2; r++) {
      outcome out;
      run_rule(mkt_rule_find(r ? "vickrey" : "pay_as_bid"), &in, &out);
      for (size_t i = 0; i < in.n; i++) {
        size_t before = 0; /* orders ranked before i */
        for (size_t j = 0; j < in.n; j++)
          before += in.o[j].price > in.o[i].price || (in.o[j].price == in.o[i].price && j < i);
        CHECK(&c, out.win[i] == (before < in.l[0].gpus), "case %d (n = %zu): order %zu ranked %zu, win %d", t, in.n, i,
              before, out.win[i]);
      }
    }
  }
  chk_report(&c, "ranking");
}

/* ---- 5. determinism, edges, home-keeping --------------------------------------------------------- */
static void test_determinism(void) {
  rng g = {.s = 7};
  chk c = {0};
  for (int t = 0; t < CASES / 4; t++) {
    inst in;
    gen_inst(&g, &in, 12, 5);
    for (size_t k = 0; mkt_rule_table[k]; k++) {
      outcome a, b;
      run_rule(mkt_rule_table[k], &in, &a);
      inst copy = in;
      run_rule(mkt_rule_table[k], &copy, &b);
      CHECK(&c,
            a.ret == b.ret && !memcmp(a.win, b.win, in.n * sizeof a.win[0]) &&
                !memcmp(a.lot, b.lot, in.n * sizeof a.lot[0]) && !memcmp(a.pay, b.pay, in.n * sizeof a.pay[0]),
            "%s case %d differs between two runs", mkt_rule_table[k]->name, t);
      CHECK(&c, !memcmp(&copy, &in, sizeof in), "%s case %d changed its input", mkt_rule_table[k]->name, t);
    }
  }
  chk_report(&c, "determinism");
}

/* GigaSPOT as docs/auction.md states it, the plain way: each lot in index order rescans every
 * order for each pick (those running on it first, each group in index order), picks with
 * mkt_gigaspot_pick, and an order that runs elsewhere and still fits there stays there. The rule
 * keeps one candidate list per lot instead; both must give the same clearing on every book. */
static long gigaspot_plain(const inst *in, outcome *out) {
  uint32_t free_gpus[MAXL];
  mkt_bid cand[MAXN];
  size_t of[MAXN];
  long winners = 0;
  for (size_t i = 0; i < in->n; i++) {
    out->win[i] = 0;
    out->lot[i] = -1;
    out->pay[i] = 0;
  }
  for (size_t l = 0; l < in->nl; l++) free_gpus[l] = in->l[l].gpus;
  for (size_t l = 0; l < in->nl; l++) {
    const mkt_lot *lot = &in->l[l];
    for (;;) {
      size_t m = 0;
      for (int here = 1; here >= 0; here--)
        for (size_t i = 0; i < in->n; i++) {
          const mkt_order *o = &in->o[i];
          int32_t h = o->home >= 0 && (size_t)o->home < in->nl ? o->home : -1;
          if (out->win[i] || (h == (int32_t)l) != here || !mkt_lot_fits(lot, free_gpus[l], o)) continue;
          cand[m] = (mkt_bid){.price = o->price, .gpus = o->gpus, .power_w = o->power_w};
          of[m++] = i;
        }
      if (m == 0) break;
      long k =
          mkt_gigaspot_pick(cand, m, free_gpus[l], lot->min_ask, lot->pl_min_w, lot->pl_max_w, lot->energy_musd_wh);
      if (k < 0) break;
      size_t i = of[k];
      const mkt_order *o = &in->o[i];
      int32_t at = (int32_t)l, h = o->home >= 0 && (size_t)o->home < in->nl ? o->home : -1;
      if (h >= 0 && h != at && mkt_lot_fits(&in->l[h], free_gpus[h], o)) at = h;
      free_gpus[at] -= o->gpus;
      out->win[i] = 1;
      out->lot[i] = at;
      out->pay[i] = o->price;
      winners++;
    }
  }
  return winners;
}

static void test_gigaspot_plain(void) {
  rng g = {.s = 11};
  chk c = {0};
  const mkt_rule_ops *gs = mkt_rule_find("gigaspot");
  CU_ASSERT_PTR_NOT_NULL_FATAL(gs);
  long won = 0, multi = 0;
  for (int t = 0; t < CASES; t++) {
    inst in;
    gen_inst(&g, &in, t % 4 ? 16 : MAXN, t % 3 ? 5 : MAXL);
    if (t % 2) /* a market's orders come in a few classes, a power limit each: the rule's asks, kept
                  per lot and power limit, are then read again (up to 8 kept; 3 or 12 limits here) */
      for (size_t i = 0; i < in.n; i++) in.o[i].power_w = 100 + 40 * (uint32_t)rng_int(&g, 0, t % 4 == 1 ? 2 : 11);
    outcome a, b;
    run_rule(gs, &in, &a);
    long ret = gigaspot_plain(&in, &b);
    CHECK(&c,
          a.ret == ret && !memcmp(a.win, b.win, in.n * sizeof a.win[0]) &&
              !memcmp(a.lot, b.lot, in.n * sizeof a.lot[0]) && !memcmp(a.pay, b.pay, in.n * sizeof a.pay[0]),
          "case %d: the rule's clearing (%ld winners) differs from the plain one (%ld)", t, a.ret, ret);
    won += ret;
    for (size_t l = 0; l < in.nl; l++) { /* lots that took more than one order: the list was reused */
      int n = 0;
      for (size_t i = 0; i < in.n; i++) n += b.win[i] && b.lot[i] == (int32_t)l;
      multi += n > 1;
    }
  }
  CU_ASSERT(won > CASES);        /* the books clear: orders do win */
  CU_ASSERT(multi > CASES / 10); /* and lots often take several */
  chk_report(&c, "gigaspot against the plain statement");
}

static void test_edges(void) {
  mkt_lot l = {.gpus = 2, .mem_gb = 24, .pl_min_w = 100, .pl_max_w = 300, .min_ask = 10};
  mkt_order o[2] = {{.price = 100, .gpus = 1, .power_w = 200, .home = 0},
                    {.price = 90, .gpus = 1, .power_w = 200, .home = -1}};
  int win[2] = {5, 5};
  int32_t lot[2] = {5, 5};
  int64_t pay[2] = {5, 5};
  mkt_clearing out = {win, lot, pay}, bad = {win, NULL, pay};
  for (size_t k = 0; mkt_rule_table[k]; k++) {
    const mkt_rule_ops *r = mkt_rule_table[k];
    CU_ASSERT_EQUAL(r->clear(NULL, 0, &l, 1, NULL), 0); /* n = 0: nothing to read or write */
    CU_ASSERT_EQUAL(r->clear(o, 0, NULL, 0, &out), 0);
    win[0] = win[1] = 5;
    CU_ASSERT_EQUAL(r->clear(o, 2, NULL, 0, &out), 0); /* nl = 0: everybody loses */
    CU_ASSERT(win[0] == 0 && win[1] == 0 && lot[0] == -1 && lot[1] == -1 && pay[0] == 0 && pay[1] == 0);
    CU_ASSERT_EQUAL(r->clear(NULL, 2, &l, 1, &out), MKT_EINVAL);
    CU_ASSERT_EQUAL(r->clear(o, 2, &l, 1, NULL), MKT_EINVAL);
    CU_ASSERT_EQUAL(r->clear(o, 2, &l, 1, &bad), MKT_EINVAL);
    CU_ASSERT_EQUAL(r->clear(o, 2, NULL, 1, &out), MKT_EINVAL);
    CU_ASSERT_EQUAL(r->clear(o, 2, &l, 1, &out), 2);
    CU_ASSERT_EQUAL(r->late_price(NULL, &l, -1), -1);
    CU_ASSERT_EQUAL(r->late_price(&o[0], NULL, -1), -1);
    /* a home beyond the lots (a host that left) is a queued order */
    o[0].home = 7;
    CU_ASSERT_EQUAL(r->clear(o, 2, &l, 1, &out), 2);
    CU_ASSERT_EQUAL(lot[0], 0);
    o[0].home = 0;
  }
  /* an order for no GPU never wins, with few lots or many */
  for (size_t nl = 1; nl <= 9; nl += 8) {
    inst z = {.n = 2, .nl = nl};
    for (size_t k = 0; k < nl; k++) z.l[k] = l;
    z.o[0] = (mkt_order){.price = 1000000, .gpus = 0, .power_w = 200, .home = -1};
    z.o[1] = o[1];
    for (size_t k = 0; mkt_rule_table[k]; k++) {
      outcome oz;
      CU_ASSERT_EQUAL(run_rule(mkt_rule_table[k], &z, &oz), 1);
      CU_ASSERT(!oz.win[0] && oz.win[1]);
    }
  }
}

/* Two identical lots: first fit would put a running order on lot 0, but it keeps its home, lot 1,
 * under every rule; the queued order gets lot 0. */
static void test_home_keeping(void) {
  inst a = {.n = 2, .nl = 2};
  a.l[0] = (mkt_lot){.gpus = 2, .mem_gb = 24, .pl_min_w = 100, .pl_max_w = 400, .energy_musd_wh = 100, .margin = 0.1};
  a.l[1] = a.l[0];
  a.o[0] = (mkt_order){.price = 200000, .gpus = 2, .power_w = 200, .home = 1};
  a.o[1] = (mkt_order){.price = 150000, .gpus = 2, .power_w = 200, .home = -1};
  for (size_t k = 0; mkt_rule_table[k]; k++) {
    outcome o;
    CU_ASSERT_EQUAL(run_rule(mkt_rule_table[k], &a, &o), 2);
    CU_ASSERT_EQUAL(o.lot[0], 1);
    CU_ASSERT_EQUAL(o.lot[1], 0);
    if (o.lot[0] != 1) printf("\n  %s moved the running order to lot %d\n", mkt_rule_table[k]->name, o.lot[0]);
  }
  /* when its home is full, first fit moves it (pay_as_bid); vickrey keeps it competing for its home
   * only, so it is outbid there */
  a.o[1] = (mkt_order){.price = 300000, .gpus = 2, .power_w = 200, .home = 1};
  outcome o;
  run_rule(mkt_rule_find("pay_as_bid"), &a, &o);
  CU_ASSERT(o.win[0] && o.win[1] && o.lot[1] == 1 && o.lot[0] == 0);
  run_rule(mkt_rule_find("vickrey"), &a, &o);
  CU_ASSERT(!o.win[0] && o.win[1] && o.lot[1] == 1);
}

static CU_TestInfo rule_tests[] = {
    {"host energy, ask and fit", test_lot_known},
    {"rule table and look-ups", test_table},
    {"individual rationality under every rule (and pays_bid as declared)", test_rationality},
    {"feasibility and home-keeping under every rule", test_feasibility},
    {"vickrey: truthful bidding is dominant, pay = threshold", test_vickrey_truthful},
    {"vickrey known answers", test_vickrey_known},
    {"pay_as_bid is not truthful", test_pay_as_bid_not_truthful},
    {"gigaspot ranks by profit, not price", test_gigaspot_power},
    {"gigaspot on one lot maximises profit", test_gigaspot_single_lot},
    {"gigaspot equals its plain statement on random books", test_gigaspot_plain},
    {"knapsack reaches the best revenue on one lot", test_knapsack_single_lot},
    {"double auction known answers", test_double_known},
    {"ranking by price, ties to the lower index", test_ranking},
    {"same input, same output", test_determinism},
    {"n = 0, nl = 0 and bad arguments", test_edges},
    {"a running winner keeps its home", test_home_keeping},
    CU_TEST_INFO_NULL};

CU_SuiteInfo spotlab_suites[] = {{"clearing rules", NULL, NULL, NULL, NULL, rule_tests}, CU_SUITE_INFO_NULL};
