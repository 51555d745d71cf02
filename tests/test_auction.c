/* test_auction.c - the bidding pool's clearing rules (models/market/mkt_rule.h) on random cases
 * and known answers: individual rationality and feasibility under every rule of the table,
 * truthfulness of vickrey (and that the same check catches pay_as_bid), GigaSPOT's host-optimal
 * sets and the knapsack's optimal revenue against brute force, the per-host choice between
 * clearings, determinism, edge cases, home-keeping,
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

/* Where the best bid one by one is not the best set, and the GigaSPOT docs' power-limit example,
 * on one host. */
static void test_gigaspot_sets(void) {
  const mkt_rule_ops *gs = mkt_rule_find("gigaspot"), *pb = mkt_rule_find("pay_as_bid");
  /* a 4-GPU host, no energy cost: a 1-GPU bid at 0.010 USD/GPU-h and a 4-GPU bid at 0.009; the best
   * single bid per GPU earns 10000 musd/h and leaves 3 GPUs idle, the set {4-GPU bid} 36000 */
  inst a = {.n = 2, .nl = 1};
  a.l[0] = (mkt_lot){.gpus = 4, .mem_gb = 24, .pl_min_w = 100, .pl_max_w = 450};
  a.o[0] = (mkt_order){.price = 10000, .gpus = 1, .power_w = 200, .home = -1};
  a.o[1] = (mkt_order){.price = 9000, .gpus = 4, .power_w = 200, .home = -1};
  outcome o;
  CU_ASSERT_EQUAL(run_rule(gs, &a, &o), 1);
  CU_ASSERT(!o.win[0] && o.win[1] && o.lot[1] == 0 && o.pay[1] == 9000);
  /* the same when the 1-GPU bid already runs there: it is re-evaluated and preempted */
  a.o[0].home = 0;
  CU_ASSERT_EQUAL(run_rule(gs, &a, &o), 1);
  CU_ASSERT(!o.win[0] && o.win[1]);
  /* between clearings (the pool's per-host choice), on the 4 free GPUs: the 4-GPU bid; pay_as_bid's
   * host takes the highest bid */
  size_t pick[2];
  CU_ASSERT_EQUAL(mkt_rule_host_choose(gs, a.o, 2, &a.l[0], 4, pick), 1);
  CU_ASSERT_EQUAL(pick[0], 1);
  CU_ASSERT_EQUAL(mkt_rule_host_choose(pb, a.o, 2, &a.l[0], 4, pick), 1);
  CU_ASSERT_EQUAL(pick[0], 0);
  /* with 3 GPUs free the 4-GPU bid does not fit: the 1-GPU one */
  CU_ASSERT_EQUAL(mkt_rule_host_choose(gs, a.o, 2, &a.l[0], 3, pick), 1);
  CU_ASSERT_EQUAL(pick[0], 0);
  /* a 450 W card whose workload is capped at 280 W (the GigaSPOT docs' example): at 300 musd/Wh a
   * 200000 musd/h bid at 450 W nets 65000, a 180000 bid at 280 W nets 96000: the host takes the
   * second; a 2-GPU bid at 500000 and 280 W nets 416000 per GPU and takes a 2-GPU host */
  inst d = {.n = 3, .nl = 1};
  d.l[0] = (mkt_lot){.gpus = 1, .mem_gb = 24, .pl_min_w = 100, .pl_max_w = 450, .energy_musd_wh = 300};
  d.o[0] = (mkt_order){.price = 200000, .gpus = 1, .power_w = 450, .home = -1};
  d.o[1] = (mkt_order){.price = 180000, .gpus = 1, .power_w = 280, .home = -1};
  d.o[2] = (mkt_order){.price = 500000, .gpus = 2, .power_w = 280, .home = -1};
  CU_ASSERT_EQUAL(run_rule(gs, &d, &o), 1);
  CU_ASSERT(!o.win[0] && o.win[1] && !o.win[2]);
  d.l[0].gpus = 2;
  CU_ASSERT_EQUAL(run_rule(gs, &d, &o), 1);
  CU_ASSERT(!o.win[0] && !o.win[1] && o.win[2]);
  d.l[0].energy_musd_wh = 2000; /* nothing profits the host: 500000 - 280 x 2000 < 0, ... */
  CU_ASSERT_EQUAL(run_rule(gs, &d, &o), 0);
  CU_ASSERT_EQUAL(mkt_rule_host_choose(gs, d.o, 3, &d.l[0], 2, pick), 0);
}

/* profit per GPU-hour to the host, as the rule states it: price - mkt_lot_energy */
static int64_t gs_value(const mkt_lot *l, const mkt_order *o) { return o->price - mkt_lot_energy(l, o->power_w); }

typedef struct gs_best {
  int64_t profit;
  uint32_t kept; /* GPUs of the host's running orders in the set */
} gs_best;

/* Every subset of cand[k..m) within `left` GPUs, each once (indices increase): the best (profit,
 * kept) into *best. The only pruning is the GPU count, so this is exhaustive. */
static void gs_brute(const mkt_lot *l, const mkt_order *o, const size_t *cand, const int *mine, size_t m, size_t k,
                     uint32_t left, int64_t profit, uint32_t kept, gs_best *best) {
  if (profit > best->profit || (profit == best->profit && kept > best->kept)) *best = (gs_best){profit, kept};
  for (size_t j = k; j < m; j++) {
    const mkt_order *x = &o[cand[j]];
    if (x->gpus <= left)
      gs_brute(l, o, cand, mine, m, j + 1, left - x->gpus, profit + gs_value(l, x) * (int64_t)x->gpus,
               kept + (mine[j] ? x->gpus : 0), best);
  }
}

/* The old rule, for the count of books where it falls short: the lot repeatedly takes the order
 * with the highest profit per GPU-hour that fits its GPUs left. */
static int64_t gs_one_by_one(const mkt_lot *l, const mkt_order *o, const size_t *cand, size_t m) {
  int took[MAXN] = {0};
  uint32_t left = l->gpus;
  int64_t total = 0;
  for (;;) {
    long b = -1;
    for (size_t j = 0; j < m; j++)
      if (!took[j] && o[cand[j]].gpus <= left && (b < 0 || gs_value(l, &o[cand[j]]) > gs_value(l, &o[cand[b]])))
        b = (long)j;
    if (b < 0) return total;
    took[b] = 1;
    left -= o[cand[b]].gpus;
    total += gs_value(l, &o[cand[b]]) * (int64_t)o[cand[b]].gpus;
  }
}

/* GigaSPOT's promise, against brute force on random books (one lot, and up to 12 lots; memory,
 * power range, asks, running orders): the lots in index order, each takes, among the orders not
 * won by an earlier lot that are queued or run on it, fit it and profit it, a set of the highest
 * total profit sum((price - energy) x gpus) within its GPUs, and among those one that keeps the most
 * of its running GPUs. */
static void test_gigaspot_brute(void) {
  const mkt_rule_ops *gs = mkt_rule_find("gigaspot");
  rng g = {.s = 5};
  chk c = {0};
  long short_one_by_one = 0, lots_seen = 0, sets = 0;
  for (int t = 0; t < 3 * CASES / 2; t++) {
    inst in;
    gen_inst(&g, &in, 14, t % 2 ? 1 : MAXL);
    if (t % 3 == 1) /* a market's orders come in a few classes, a power limit each */
      for (size_t i = 0; i < in.n; i++) in.o[i].power_w = 100 + 40 * (uint32_t)rng_int(&g, 0, 2);
    if (t % 4 == 3) /* many orders that fit: plain lots */
      for (size_t l = 0; l < in.nl; l++) {
        in.l[l].mem_gb = 80;
        in.l[l].pl_min_w = 50;
        in.l[l].pl_max_w = 600;
      }
    outcome out;
    long ret = run_rule(gs, &in, &out);
    int taken[MAXN] = {0};
    long wins = 0;
    for (size_t l = 0; l < in.nl; l++) {
      const mkt_lot *lot = &in.l[l];
      size_t cand[MAXN], m = 0;
      int mine[MAXN], is_cand[MAXN] = {0};
      for (size_t i = 0; i < in.n; i++) {
        const mkt_order *o = &in.o[i];
        int32_t h = o->home >= 0 && (size_t)o->home < in.nl ? o->home : -1;
        if (taken[i] || (h >= 0 && h != (int32_t)l) || !mkt_lot_fits(lot, lot->gpus, o) || gs_value(lot, o) <= 0)
          continue;
        is_cand[i] = 1;
        mine[m] = h == (int32_t)l;
        cand[m++] = i;
      }
      gs_best best = {0, 0};
      gs_brute(lot, in.o, cand, mine, m, 0, lot->gpus, 0, 0, &best);
      int64_t got = 0;
      uint32_t kept = 0, used = 0, n_here = 0;
      for (size_t i = 0; i < in.n; i++) {
        if (!out.win[i] || out.lot[i] != (int32_t)l) continue;
        CHECK(&c, is_cand[i], "case %d: order %zu wins lot %zu, for which it is no candidate", t, i, l);
        got += gs_value(lot, &in.o[i]) * (int64_t)in.o[i].gpus;
        kept += in.o[i].home == (int32_t)l ? in.o[i].gpus : 0;
        used += in.o[i].gpus;
        taken[i] = 1;
        n_here++;
      }
      CHECK(&c, used <= lot->gpus, "case %d: lot %zu holds %u of %u GPUs", t, l, used, lot->gpus);
      CHECK(&c, got == best.profit, "case %d: lot %zu earns %lld, its best set %lld", t, l, (long long)got,
            (long long)best.profit);
      CHECK(&c, got != best.profit || kept == best.kept, "case %d: lot %zu keeps %u running GPUs, could keep %u", t, l,
            kept, best.kept);
      short_one_by_one += gs_one_by_one(lot, in.o, cand, m) < best.profit;
      lots_seen += m > 0;
      sets += n_here > 1;
      wins += n_here;
    }
    CHECK(&c, ret == wins, "case %d: returned %ld for %ld winners on the lots", t, ret, wins);
  }
  chk_report(&c, "gigaspot against brute force");
  printf("\n  %ld lots with candidates, %ld took several orders, %ld where one by one falls short\n", lots_seen, sets,
         short_one_by_one);
  /* the books have teeth: the former one-by-one rule falls short on some of them */
  CU_ASSERT(short_one_by_one > 20);
  CU_ASSERT(sets > CASES / 4);
}

/* Between clearings the pool asks mkt_rule_host_choose for a host's free GPUs: under gigaspot the
 * best set (brute force), under the others the highest bid that fits (ties to the lower index). */
static void test_host_choose(void) {
  const mkt_rule_ops *gs = mkt_rule_find("gigaspot");
  rng g = {.s = 12};
  chk c = {0};
  for (int t = 0; t < CASES; t++) {
    inst in;
    gen_inst(&g, &in, 14, 1);
    mkt_lot *lot = &in.l[0];
    uint32_t f = (uint32_t)rng_int(&g, 0, lot->gpus);
    size_t pick[MAXN], cand[MAXN], m = 0;
    int mine[MAXN] = {0};
    for (size_t i = 0; i < in.n; i++)
      if (mkt_lot_fits(lot, f, &in.o[i]) && gs_value(lot, &in.o[i]) > 0) cand[m++] = i;
    gs_best best = {0, 0};
    gs_brute(lot, in.o, cand, mine, m, 0, f, 0, 0, &best);
    long np = mkt_rule_host_choose(gs, in.o, in.n, lot, f, pick);
    int64_t got = 0;
    uint32_t used = 0;
    for (long q = 0; q < np; q++) {
      CHECK(&c, q == 0 || pick[q] > pick[q - 1], "case %d: picks not in increasing order", t);
      CHECK(&c, mkt_lot_fits(lot, f, &in.o[pick[q]]), "case %d: pick %zu does not fit", t, pick[q]);
      got += gs_value(lot, &in.o[pick[q]]) * (int64_t)in.o[pick[q]].gpus;
      used += in.o[pick[q]].gpus;
    }
    CHECK(&c, np >= 0 && used <= f && got == best.profit, "case %d: host choice earns %lld in %u of %u GPUs, best %lld",
          t, (long long)got, used, f, (long long)best.profit);
    for (size_t k = 1; mkt_rule_table[k]; k++) { /* the rules without a per-host choice */
      const mkt_rule_ops *r = mkt_rule_table[k];
      CHECK(&c, r->host_value == NULL, "%s has a host value", r->name);
      long hb = -1;
      for (size_t i = 0; i < in.n; i++)
        if (mkt_lot_fits(lot, f, &in.o[i]) && (hb < 0 || in.o[i].price > in.o[hb].price)) hb = (long)i;
      np = mkt_rule_host_choose(r, in.o, in.n, lot, f, pick);
      CHECK(&c, np == (hb >= 0) && (np == 0 || (long)pick[0] == hb), "%s case %d: host takes %ld orders, first %zu",
            r->name, t, np, np > 0 ? pick[0] : 0);
    }
  }
  chk_report(&c, "host choice between clearings");
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
   * best that packs leaves out the lowest 2-GPU bid and takes the 1-GPU order */
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

/* Whether the orders ord[k..m) pack on the lots with left[] GPUs free: every assignment. */
static int ks_packs(const inst *in, const size_t *ord, size_t k, size_t m, uint32_t *left) {
  if (k == m) return 1;
  const mkt_order *o = &in->o[ord[k]];
  for (size_t l = 0; l < in->nl; l++) {
    if (left[l] < o->gpus || !mkt_lot_fits(&in->l[l], in->l[l].gpus, o)) continue;
    left[l] -= o->gpus;
    int ok = ks_packs(in, ord, k + 1, m, left);
    left[l] += o->gpus;
    if (ok) return 1;
  }
  return 0;
}

/* The highest revenue sum(price x gpus) of a set of orders that packs: every subset. */
static int64_t ks_brute(const inst *in) {
  int64_t best = 0;
  uint64_t cap = 0;
  for (size_t l = 0; l < in->nl; l++) cap += in->l[l].gpus;
  for (uint32_t mask = 1; mask < (1u << in->n); mask++) {
    int64_t v = 0;
    uint64_t w = 0;
    size_t ord[MAXN], m = 0;
    for (size_t i = 0; i < in->n; i++)
      if (mask & (1u << i)) {
        v += in->o[i].price * (int64_t)in->o[i].gpus;
        w += in->o[i].gpus;
        ord[m++] = i;
      }
    if (v <= best || w > cap) continue;
    uint32_t left[MAXL];
    for (size_t l = 0; l < in->nl; l++) left[l] = in->l[l].gpus;
    if (ks_packs(in, ord, 0, m, left)) best = v;
  }
  return best;
}

static int64_t revenue(const inst *in, const outcome *out) {
  int64_t v = 0;
  for (size_t i = 0; i < in->n; i++)
    if (out->win[i]) v += in->o[i].price * (int64_t)in->o[i].gpus;
  return v;
}

/* knapsack's promise on several lots, against brute force: the highest revenue of a set that packs
 * (each order on a lot it fits, a lot's GPUs at most its GPUs). Half the books have plain lots and
 * small orders, where the relaxation over the total GPUs does not pack and the search decides. */
static void test_knapsack_brute(void) {
  const mkt_rule_ops *ks = mkt_rule_find("knapsack"), *pb = mkt_rule_find("pay_as_bid");
  rng g = {.s = 13};
  chk c = {0};
  long binds = 0;
  for (int t = 0; t < CASES; t++) {
    inst in;
    gen_inst(&g, &in, 10, 4);
    if (in.nl > 5) in.nl = 5; /* of the 8 to 10 small lots, 5; homes beyond are queued orders */
    if (t % 2) {
      for (size_t l = 0; l < in.nl; l++) {
        in.l[l].gpus = (uint32_t)rng_int(&g, 1, 6);
        in.l[l].mem_gb = 80;
        in.l[l].pl_min_w = 50;
        in.l[l].pl_max_w = 600;
        in.l[l].energy_musd_wh = rng_int(&g, 0, 1) ? 0 : 100;
      }
      for (size_t i = 0; i < in.n; i++) in.o[i].gpus = (uint32_t)rng_int(&g, 1, 4);
    }
    int64_t best = ks_brute(&in);
    outcome out, op;
    run_rule(ks, &in, &out);
    run_rule(pb, &in, &op);
    check_feasible(&c, ks, &in, &out, t);
    int64_t got = revenue(&in, &out);
    CHECK(&c, got == best, "case %d: knapsack revenue %lld, best that packs %lld", t, (long long)got, (long long)best);
    CHECK(&c, got >= revenue(&in, &op), "case %d: knapsack below pay_as_bid", t);
    /* the relaxation over the lots' total GPUs, among orders that fit some lot */
    mkt_bid b[MAXN];
    int win[MAXN];
    uint64_t cap = 0;
    for (size_t l = 0; l < in.nl; l++) cap += in.l[l].gpus;
    for (size_t i = 0; i < in.n; i++)
      b[i] = (mkt_bid){in.o[i].price, fits_some(&in, &in.o[i]) ? in.o[i].gpus : (uint32_t)cap + 1, 0};
    binds += mkt_knapsack(b, in.n, cap, win) > best;
  }
  chk_report(&c, "knapsack against brute force on several lots");
  printf("\n  %ld books where the lots' total GPUs overstate the best revenue\n", binds);
  CU_ASSERT(binds > CASES / 10); /* the packing decides in many books */
  /* the old drop step's loss: lots of 4 + 4 GPUs, orders A 3 GPUs at 10, B 3 at 11, C 2 at 12, D 1
   * at 1. {A, B, C} fills the 8 GPUs but does not pack; dropping the lowest price (A) gave {B, C, D}
   * = 58; the best that packs is {A, B, D} = 64 */
  inst k = {.n = 4, .nl = 2};
  k.l[0] = (mkt_lot){.gpus = 4, .mem_gb = 24, .pl_min_w = 100, .pl_max_w = 300};
  k.l[1] = k.l[0];
  int64_t pr[] = {10, 11, 12, 1};
  uint32_t gp[] = {3, 3, 2, 1};
  for (int i = 0; i < 4; i++) k.o[i] = (mkt_order){.price = pr[i], .gpus = gp[i], .power_w = 200, .home = -1};
  outcome o;
  CU_ASSERT_EQUAL(run_rule(ks, &k, &o), 3);
  CU_ASSERT(o.win[0] && o.win[1] && !o.win[2] && o.win[3]);
  CU_ASSERT_EQUAL(revenue(&k, &o), 64);
}

/* A book of the pool's clearing size (256 waiting and 256 running bids of 3 classes on 600 hosts
 * of 1 to 8 GPUs, demand above supply): the knapsack ends (the search has a node budget) with a
 * feasible set at least as good as pay_as_bid's. */
static void test_knapsack_market_size(void) {
  const mkt_rule_ops *ks = mkt_rule_find("knapsack"), *pb = mkt_rule_find("pay_as_bid");
  enum { N = 512, NL = 600 };
  static mkt_order o[N];
  static mkt_lot l[NL];
  static int win[N], win2[N];
  static int32_t lot[N], lot2[N];
  static int64_t pay[N], pay2[N];
  rng g = {.s = 14};
  static const uint32_t sizes[] = {1, 2, 4, 8};
  uint32_t used[NL] = {0};
  for (size_t j = 0; j < NL; j++) {
    l[j] = (mkt_lot){.gpus = sizes[rng_int(&g, 0, 3)],
                     .mem_gb = rng_int(&g, 0, 1) ? 24 : 80,
                     .pl_min_w = 100,
                     .pl_max_w = 450,
                     .energy_musd_wh = 150.0 * (0.8 + 0.4 * rng_unif(&g)),
                     .margin = 0.1,
                     .min_ask = 20000};
  }
  for (size_t i = 0; i < N; i++) {
    int cls = (int)rng_int(&g, 0, 2);
    o[i] = (mkt_order){.price = rng_int(&g, 50000, 600000),
                       .gpus = (uint32_t)rng_int(&g, 1, cls == 0 ? 4 : 2),
                       .power_w = cls == 0 ? 350 : 250,
                       .mem_min_gb = cls == 0 ? 16 : 8,
                       .home = -1};
    if (i >= N / 2) { /* running: on a lot with room */
      size_t j = (size_t)rng_int(&g, 0, NL - 1);
      if (used[j] + o[i].gpus <= l[j].gpus) {
        used[j] += o[i].gpus;
        o[i].home = (int32_t)j;
      }
    }
  }
  mkt_clearing a = {win, lot, pay}, b = {win2, lot2, pay2};
  CU_ASSERT(ks->clear(o, N, l, NL, &a) > 0);
  CU_ASSERT(pb->clear(o, N, l, NL, &b) > 0);
  int64_t va = 0, vb = 0;
  uint32_t on[NL] = {0};
  for (size_t i = 0; i < N; i++) {
    if (win[i]) {
      va += o[i].price * (int64_t)o[i].gpus;
      on[lot[i]] += o[i].gpus;
      CU_ASSERT(mkt_lot_fits(&l[lot[i]], l[lot[i]].gpus, &o[i]));
    }
    if (win2[i]) vb += o[i].price * (int64_t)o[i].gpus;
  }
  for (size_t j = 0; j < NL; j++) CU_ASSERT(on[j] <= l[j].gpus);
  CU_ASSERT(va >= vb);
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
    {"gigaspot takes the host's best set (known answers, power limits)", test_gigaspot_sets},
    {"gigaspot: every host's set has the highest profit (brute force)", test_gigaspot_brute},
    {"per-host choice between clearings (brute force)", test_host_choose},
    {"knapsack reaches the best revenue on one lot", test_knapsack_single_lot},
    {"knapsack: the highest revenue that packs on several lots (brute force)", test_knapsack_brute},
    {"knapsack on a book of the pool's size", test_knapsack_market_size},
    {"double auction known answers", test_double_known},
    {"ranking by price, ties to the lower index", test_ranking},
    {"same input, same output", test_determinism},
    {"n = 0, nl = 0 and bad arguments", test_edges},
    {"a running winner keeps its home", test_home_keeping},
    CU_TEST_INFO_NULL};

CU_SuiteInfo spotlab_suites[] = {{"clearing rules", NULL, NULL, NULL, NULL, rule_tests}, CU_SUITE_INFO_NULL};
