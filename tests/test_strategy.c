/* test_strategy.c - the bidding strategies (models/market/mkt_strategy.h) on random cases and
 * known answers: the uniform first-price equilibrium against its closed form and a numerical
 * integral, the log-normal one's shape and that it is a best response, revenue equivalence with a
 * second-price auction (Myerson 1981) by Monte Carlo, the table against the integral, and the
 * adaptive bidder's margin rule. What each strategy does: docs/auction.md ("Bidding strategies").
 */
#include "models/market/mkt_strategy.h"

#include <CUnit/CUnit.h>
#include "tests/randcase.h"
#include <gsl/gsl_cdf.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_integration.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* uniform in (0, 1), on a range, standard normal */
static double rng_open(rng *r) { return ((double)(rng_next(r) >> 11) + 0.5) * 0x1.0p-53; }
static double rng_range(rng *r, double lo, double hi) { return lo + (hi - lo) * rng_unif(r); }
static double rng_normal(rng *r) { return gsl_cdf_ugaussian_Pinv(rng_open(r)); }

/* ---- Random log-normal cases ------------------------------------------------------------------ */
typedef struct lncase {
  double median, sigma, r;
  unsigned n;
} lncase;

/* median log-uniform in [0.1, 10], sigma in [slo, shi], reserve 0 (one case in three) or the
 * value at a random quantile in [0.02, 0.95] */
static lncase gen_lncase(rng *g, double slo, double shi, unsigned nlo, unsigned nhi) {
  lncase c;
  c.median = exp(rng_range(g, log(0.1), log(10)));
  c.sigma = rng_range(g, slo, shi);
  c.r = rng_int(g, 0, 2) == 0 ? 0 : c.median * exp(c.sigma * gsl_cdf_ugaussian_Pinv(rng_range(g, 0.02, 0.95)));
  c.n = (unsigned)rng_int(g, nlo, nhi);
  return c;
}

/* ---- 1. uniform values ------------------------------------------------------------------------ */
/* int_r^v ((x - lo) / (v - lo))^(n-1) dx by QAG: the shading v - b(v), from the definition. */
typedef struct upar {
  double lo, v, m;
} upar;
static double u_integrand(double x, void *p) {
  const upar *q = p;
  return pow((x - q->lo) / (q->v - q->lo), q->m);
}
static double uniform_by_integral(double v, double lo, double r, unsigned n, gsl_integration_workspace *ws) {
  upar p = {lo, v, (double)n - 1};
  gsl_function f = {u_integrand, &p};
  double res = 0, err = 0;
  gsl_integration_qag(&f, r, v, 0, 1e-12, 1000, GSL_INTEG_GAUSS21, ws, &res, &err);
  return v - res;
}

static void test_uniform(void) {
  rng g = {.s = 11};
  chk c = {0};
  gsl_integration_workspace *ws = gsl_integration_workspace_alloc(1000);
  CU_ASSERT_PTR_NOT_NULL_FATAL(ws);
  gsl_error_handler_t *old = gsl_set_error_handler_off(); /* QAG's best estimate is checked below */
  for (int t = 0; t < 4000; t++) {
    unsigned n = (unsigned)rng_int(&g, 1, 64);
    /* U[0, 1] without reserve: (n - 1) / n v */
    double v = rng_unif(&g), b = mkt_bne_uniform(v, 0, 1, 0, n);
    CHECK(&c, fabs(b - (n - 1.0) / n * v) <= 1e-15, "U[0,1] n %u v %.17g: %.17g, not (n-1)/n v", n, v, b);
    /* U[0, 1] with reserve r <= v: (n - 1) / n v + r^n / (n v^(n - 1)) */
    double r = rng_unif(&g);
    if (v < r) {
      double x = v;
      v = r;
      r = x;
    }
    b = mkt_bne_uniform(v, 0, 1, r, n);
    double want = n == 1 ? r : (n - 1.0) / n * v + pow(r, n) / (n * pow(v, n - 1.0));
    CHECK(&c, fabs(b - want) <= 1e-13, "U[0,1] n %u v %.17g r %.17g: %.17g, formula %.17g", n, v, r, b, want);
    CHECK(&c, mkt_bne_uniform(r * 0.999, 0, 1, r, n) == r * 0.999 || r == 0, "U[0,1]: v < r must bid v");
    /* U[lo, hi], reserve in [lo, hi]: the affine image of U[0, 1], and the definition by QAG */
    double lo = rng_range(&g, -5, 5), w = rng_range(&g, 0.01, 20), hi = lo + w;
    double u = rng_unif(&g), s = rng_int(&g, 0, 3) == 0 ? 0 : rng_unif(&g) * u;
    double vv = lo + w * u, rr = lo + w * s, bb = mkt_bne_uniform(vv, lo, hi, rr, n);
    double wa = lo + w * mkt_bne_uniform(u, 0, 1, s, n);
    CHECK(&c, fabs(bb - wa) <= 1e-12 * (fabs(lo) + w), "U[%g,%g] n %u v %g r %g: %.17g, affine %.17g", lo, hi, n, vv,
          rr, bb, wa);
    if (t % 8 == 0 && n > 1 && vv > rr && u > 1e-3) {
      double bi = uniform_by_integral(vv, lo, rr, n, ws);
      CHECK(&c, fabs(bb - bi) <= 1e-10 * w, "U[%g,%g] n %u v %g r %g: %.17g, integral %.17g", lo, hi, n, vv, rr, bb,
            bi);
    }
    /* bid <= v, >= r, increasing in v and in n */
    CHECK(&c, bb <= vv && bb >= rr, "U[%g,%g] n %u v %g r %g: bid %g outside [r, v]", lo, hi, n, vv, rr, bb);
    double v2 = vv + (hi - vv) * rng_unif(&g);
    double b2 = mkt_bne_uniform(v2, lo, hi, rr, n), bn = mkt_bne_uniform(vv, lo, hi, rr, n + 1);
    CHECK(&c, b2 >= bb - 1e-13 * w, "U[%g,%g] n %u r %g: b(%g) = %.17g < b(%g) = %.17g", lo, hi, n, rr, v2, b2, vv, bb);
    CHECK(&c, bn >= bb - 1e-13 * w, "U[%g,%g] v %g r %g: %u bidders bid %.17g < %u bidders %.17g", lo, hi, vv, rr,
          n + 1, bn, n, bb);
    CHECK(&c, mkt_bne_uniform(vv, lo, hi, rr, 1) == rr, "U: alone, the bid is the reserve");
  }
  gsl_set_error_handler(old);
  gsl_integration_workspace_free(ws);
  CU_ASSERT_DOUBLE_EQUAL(mkt_bne_uniform(0.5, 0, 1, 0, 2), 0.25, 1e-15);
  CU_ASSERT_DOUBLE_EQUAL(mkt_bne_uniform(0.5, 0, 1, 0.4, 2), 0.25 + 0.16, 1e-15); /* 0.5/2 + 0.4^2 / (2 x 0.5) */
  CU_ASSERT_DOUBLE_EQUAL(mkt_bne_uniform(0.3, 0, 1, 0.4, 5), 0.3, 0);             /* below the reserve */
  CU_ASSERT_DOUBLE_EQUAL(mkt_bne_uniform(0.4, 0, 1, 0.4, 5), 0.4, 1e-15);         /* at the reserve */
  CU_ASSERT_DOUBLE_EQUAL(mkt_bne_uniform(3, 2, 4, 2, 1), 2, 0);                   /* alone */
  CU_ASSERT_DOUBLE_EQUAL(mkt_bne_uniform(2, 2, 4, 2, 3), 2, 0);                   /* v = lo */
  CU_ASSERT(isnan(mkt_bne_uniform(NAN, 0, 1, 0, 3)));
  chk_report(&c, "uniform equilibrium");
}

/* ---- 2. log-normal values: shape ---------------------------------------------------------------- */
static void test_lognormal_shape(void) {
  rng g = {.s = 22};
  chk c = {0};
  for (int t = 0; t < 600; t++) {
    lncase k = gen_lncase(&g, 0.05, 2.5, 1, 64);
    double v = k.median * exp(k.sigma * rng_range(&g, -5, 5));
    double b = mkt_bne_lognormal(v, k.median, k.sigma, k.r, k.n);
    CHECK(&c, isfinite(b), "median %g sigma %g r %g n %u v %g: bid %g", k.median, k.sigma, k.r, k.n, v, b);
    if (v < k.r) {
      CHECK(&c, b == v, "v %g < r %g bids %g, not v", v, k.r, b);
      continue;
    }
    CHECK(&c, b <= v && b >= k.r, "median %g sigma %g r %g n %u v %g: bid %.17g outside [r, v]", k.median, k.sigma, k.r,
          k.n, v, b);
    if (k.n == 1) CHECK(&c, b == k.r, "alone: bid %g, not the reserve %g", b, k.r);
    /* increasing in v */
    double v2 = v * exp(k.sigma * rng_range(&g, 0, 1));
    double b2 = mkt_bne_lognormal(v2, k.median, k.sigma, k.r, k.n);
    CHECK(&c, b2 >= b * (1 - 1e-12), "sigma %g r %g n %u: b(%.17g) = %.17g < b(%.17g) = %.17g", k.sigma, k.r, k.n, v2,
          b2, v, b);
    if (k.n > 1 && v > k.r * 1.001)
      CHECK(&c, b2 > b || v2 == v, "sigma %g n %u: not strictly increasing", k.sigma, k.n);
    /* increasing in n: more bidders, a bid closer to the value */
    unsigned n2 = k.n + (unsigned)rng_int(&g, 1, 20);
    double bn = mkt_bne_lognormal(v, k.median, k.sigma, k.r, n2);
    CHECK(&c, bn >= b * (1 - 1e-12), "sigma %g r %g v %g: %u bidders bid %.17g < %u bidders %.17g", k.sigma, k.r, v, n2,
          bn, k.n, b);
    /* scale: b(v; median) = median b(v / median; 1) */
    double bs = k.median * mkt_bne_lognormal(v / k.median, 1, k.sigma, k.r / k.median, k.n);
    CHECK(&c, fabs(bs - b) <= 1e-9 * v, "sigma %g r %g n %u v %g: %.17g, scaled %.17g", k.sigma, k.r, k.n, v, b, bs);
  }
  /* the tails: F(v)^(n-1) far below the smallest double, and values far above the median */
  static const double tiny[] = {1e-10, 1e-30, 1e-200, 1e-300, 4.9e-324, 0};
  for (size_t i = 0; i < sizeof tiny / sizeof *tiny; i++)
    for (unsigned n = 2; n <= 1024; n *= 4) {
      double b = mkt_bne_lognormal(tiny[i], 1, 0.5, 0, n);
      CHECK(&c, isfinite(b) && b >= 0 && b <= tiny[i], "v %g n %u: bid %g", tiny[i], n, b);
      CHECK(&c, tiny[i] < 1e-300 || b > 0.9 * tiny[i], "v %g n %u: bid %g, far below v", tiny[i], n, b);
    }
  double prev = 0;
  for (double v = 1; v < 1e300; v *= 1e10) { /* tends to E[max(r, Y)], bounded */
    double b = mkt_bne_lognormal(v, 1, 0.5, 0.5, 10);
    CHECK(&c, isfinite(b) && b <= v && b >= prev * (1 - 1e-9) && b < 5, "v %g: bid %g", v, b);
    prev = b;
  }
  double b64 = mkt_bne_lognormal(3, 1, 0.7, 0.5, 64), b1000 = mkt_bne_lognormal(3, 1, 0.7, 0.5, 1000);
  CHECK(&c, b1000 >= b64 && b1000 <= 3, "1000 bidders: %g, 64: %g", b1000, b64);
  CU_ASSERT_EQUAL(mkt_bne_lognormal(0.3, 1, 0.5, 0.4, 5), 0.3);
  CU_ASSERT_EQUAL(mkt_bne_lognormal(0.5, 1, 0.5, 0.4, 1), 0.4);
  CU_ASSERT(isnan(mkt_bne_lognormal(1, 0, 0.5, 0, 3)));
  CU_ASSERT(isnan(mkt_bne_lognormal(1, 1, 0, 0, 3)));
  CU_ASSERT(isnan(mkt_bne_lognormal(1, 1, 0.5, -1, 3)));
  chk_report(&c, "log-normal equilibrium shape");
}

/* ---- 2b. the log-normal bid is a best response ---------------------------------------------------- */
/* The value whose equilibrium bid is b (b in [r, sup b)), by bisection in ln v on the increasing
 * mkt_bne_lognormal; +inf when b is at or above the bid of a value 12 sigma above the median
 * (F = 1 there to double precision). */
static double inverse_bid(const lncase *k, double b) {
  double lo = k->r > 0 ? log(k->r) : log(k->median) - 12 * k->sigma, hi = log(k->median) + 12 * k->sigma;
  if (b >= mkt_bne_lognormal(exp(hi), k->median, k->sigma, k->r, k->n)) return INFINITY;
  if (b <= k->r) return k->r;
  for (int i = 0; i < 50; i++) {
    double mid = 0.5 * (lo + hi);
    if (mkt_bne_lognormal(exp(mid), k->median, k->sigma, k->r, k->n) < b)
      lo = mid;
    else
      hi = mid;
  }
  return exp(0.5 * (lo + hi));
}
/* Expected payoff of value v bidding b when the n - 1 others bid the equilibrium:
 * (v - b) F(beta^-1(b))^(n-1), 0 below the reserve. */
static double payoff(const lncase *k, double v, double b) {
  if (b < k->r) return 0;
  double w = inverse_bid(k, b);
  double f = isinf(w) ? 1 : gsl_cdf_lognormal_P(w, log(k->median), k->sigma);
  return (v - b) * pow(f, k->n - 1.0);
}

static void test_lognormal_best_response(void) {
  rng g = {.s = 33};
  chk c = {0}, teeth = {0};
  double worst = 0; /* largest relative gain of an alternative, to print */
  int nteeth = 0;
  for (int t = 0; t < 40; t++) {
    lncase k = gen_lncase(&g, 0.2, 1.2, 2, 16);
    double v = k.median * exp(k.sigma * rng_range(&g, -2.5, 2.5));
    if (v <= k.r) v = k.r * exp(k.sigma * rng_range(&g, 0.05, 1));
    double bs = mkt_bne_lognormal(v, k.median, k.sigma, k.r, k.n), ps = payoff(&k, v, bs), best = ps;
    double alt[40];
    int na = 0;
    for (int j = 0; j <= 20; j++) alt[na++] = k.r + (v - k.r) * j / 20.0;
    static const double d[] = {-0.05, -0.01, -1e-3, -1e-5, 1e-5, 1e-3, 0.01, 0.05};
    for (size_t j = 0; j < sizeof d / sizeof *d; j++) alt[na++] = fmin(v, fmax(k.r, bs * (1 + d[j])));
    for (int j = 0; j < 4; j++) alt[na++] = rng_range(&g, k.r, v);
    for (int j = 0; j < na; j++) {
      double p = payoff(&k, v, alt[j]);
      if (p > best) best = p;
      if (ps > 0 && (p - ps) / ps > worst) worst = (p - ps) / ps;
      CHECK(&c, p <= ps * (1 + 1e-7) + 1e-300,
            "sigma %g r %g n %u v %g: bid %.17g earns %.17g > equilibrium %.17g "
            "earns %.17g",
            k.sigma, k.r, k.n, v, alt[j], p, bs, ps);
    }
    /* the check has teeth: shading 30% more than the equilibrium is beaten by the same grid */
    double wrong = fmax(k.r, v - 1.3 * (v - bs));
    if (v - bs > 1e-6 * v && wrong > k.r) {
      double pw = payoff(&k, v, wrong);
      nteeth++;
      CHECK(&teeth, best > pw * (1 + 1e-6), "sigma %g n %u v %g: over-shaded bid %g not beaten", k.sigma, k.n, v,
            wrong);
    }
  }
  printf("(largest relative gain of an alternative %.1e; %d over-shaded bids beaten) ", worst, nteeth);
  CU_ASSERT(nteeth >= 30);
  chk_report(&c, "best response");
  chk_report(&teeth, "best response check's teeth");
}

/* ---- 3. revenue equivalence ---------------------------------------------------------------------- */
typedef struct rev {
  double sum_fp, sum_sp, sum_d, sum_d2, sum_fp2, sum_sp2;
  long draws;
} rev;
static void rev_add(rev *a, double fp, double sp) {
  double d = fp - sp;
  a->sum_fp += fp;
  a->sum_sp += sp;
  a->sum_fp2 += fp * fp;
  a->sum_sp2 += sp * sp;
  a->sum_d += d;
  a->sum_d2 += d * d;
  a->draws++;
}
/* standard error of the mean of x from its sums */
static double se(double s, double s2, long n) {
  double m = s / n, var = (s2 - n * m * m) / (n - 1);
  return sqrt(var > 0 ? var / n : 0);
}

/* The two highest of n values. */
static void top2(const double *x, unsigned n, double *first, double *second) {
  *first = -INFINITY;
  *second = -INFINITY;
  for (unsigned i = 0; i < n; i++) {
    if (x[i] > *first) {
      *second = *first;
      *first = x[i];
    } else if (x[i] > *second) {
      *second = x[i];
    }
  }
}

static void test_revenue_lognormal(void) {
  rng g = {.s = 44};
  chk c = {0}, teeth = {0};
  const long draws = 8000;
  double zmax = 0;
  for (int t = 0; t < 10; t++) {
    lncase k = gen_lncase(&g, 0.2, 1.2, 2, 10);
    if (t < 2) k.r = 0; /* at least two without reserve */
    rev a = {0}, truthful = {0};
    for (long d = 0; d < draws; d++) {
      double x[10], y1, y2;
      for (unsigned i = 0; i < k.n; i++) x[i] = k.median * exp(k.sigma * rng_normal(&g));
      top2(x, k.n, &y1, &y2);
      double fp = 0, sp = 0;
      if (y1 >= k.r) {
        fp = mkt_bne_lognormal(y1, k.median, k.sigma, k.r, k.n); /* bids increase: the highest value wins */
        sp = fmax(y2, k.r);
      }
      rev_add(&a, fp, sp);
      rev_add(&truthful, y1 >= k.r ? y1 : 0, sp); /* first price, bidding the value */
    }
    double md = a.sum_d / draws, s = se(a.sum_d, a.sum_d2, draws);
    zmax = fmax(zmax, fabs(md) / s);
    CHECK(&c, fabs(md) <= 4 * s,
          "median %g sigma %g r %g n %u: first price %g, second price %g, difference %g "
          "> 4 x %g",
          k.median, k.sigma, k.r, k.n, a.sum_fp / draws, a.sum_sp / draws, md, s);
    double mt = truthful.sum_d / draws, st = se(truthful.sum_d, truthful.sum_d2, draws);
    CHECK(&teeth, fabs(mt) > 4 * st, "n %u: truthful first price not told apart (%g, se %g)", k.n, mt, st);
  }
  printf("(largest |difference| %.2f standard errors) ", zmax);
  chk_report(&c, "revenue equivalence, log-normal");
  chk_report(&teeth, "revenue check's teeth");
}

static void test_revenue_uniform(void) {
  rng g = {.s = 55};
  chk c = {0};
  const long draws = 20000;
  double zmax = 0;
  for (int t = 0; t < 24; t++) {
    unsigned n = (unsigned)rng_int(&g, 2, 10);
    int unit = t < 12; /* U[0, 1]: half without reserve, half with; then random [lo, hi] */
    double lo = unit ? 0 : rng_range(&g, -3, 3), hi = unit ? 1 : lo + rng_range(&g, 0.1, 10);
    double r = (t % 2 == 0) ? lo : lo + (hi - lo) * rng_range(&g, 0.05, 0.95);
    rev a = {0};
    for (long d = 0; d < draws; d++) {
      double x[10], y1, y2;
      for (unsigned i = 0; i < n; i++) x[i] = lo + (hi - lo) * rng_unif(&g);
      top2(x, n, &y1, &y2);
      double fp = 0, sp = 0;
      if (y1 >= r) {
        fp = mkt_bne_uniform(y1, lo, hi, r, n);
        sp = fmax(y2, r);
      }
      rev_add(&a, fp, sp);
    }
    double md = a.sum_d / draws, s = se(a.sum_d, a.sum_d2, draws);
    zmax = fmax(zmax, fabs(md) / s);
    CHECK(&c, fabs(md) <= 4 * s, "U[%g,%g] r %g n %u: first price %g, second price %g, difference %g > 4 x %g", lo, hi,
          r, n, a.sum_fp / draws, a.sum_sp / draws, md, s);
    if (unit) { /* known answer: n int_r^1 (2v - 1) v^(n-1) dv = 2n (1 - r^(n+1)) / (n + 1) - 1 + r^n */
      double want = 2.0 * n * (1 - pow(r, n + 1)) / (n + 1) - 1 + pow(r, n);
      if (r == 0) CHECK(&c, fabs(want - (n - 1.0) / (n + 1)) < 1e-15, "closed form");
      double mf = a.sum_fp / draws, sf = se(a.sum_fp, a.sum_fp2, draws);
      double ms = a.sum_sp / draws, ss = se(a.sum_sp, a.sum_sp2, draws);
      CHECK(&c, fabs(mf - want) <= 4 * sf, "U[0,1] r %g n %u: first price %g, expected %g (se %g)", r, n, mf, want, sf);
      CHECK(&c, fabs(ms - want) <= 4 * ss, "U[0,1] r %g n %u: second price %g, expected %g (se %g)", r, n, ms, want,
            ss);
    }
  }
  printf("(largest |difference| %.2f standard errors) ", zmax);
  chk_report(&c, "revenue equivalence, uniform");
}

/* ---- 4. the table ---------------------------------------------------------------------------------- */
static double grid_z(int k) { return -4.0 + 8.0 * k / (MKT_BNE_NZ - 1); }

static void test_table(void) {
  rng g = {.s = 66};
  chk c = {0};
  static mkt_bne_table tab, save;
  double worst = 0;
  for (int t = 0; t < 16; t++) {
    lncase k = gen_lncase(&g, 0.2, 1.2, 1, 64);
    if (t == 0) k.r = 0;
    if (t == 1) k.r = k.median; /* the reserve on a grid point */
    double rr = k.r / k.median;
    CU_ASSERT_EQUAL_FATAL(mkt_bne_table_init(&tab, k.sigma, rr), 0);
    CHECK(&c, tab.sigma == k.sigma && tab.reserve_rel == rr, "table keeps sigma %g and reserve %g", k.sigma, rr);
    for (int n = 1; n <= MKT_BNE_NMAX; n++)
      for (int j = 0; j < MKT_BNE_NZ; j++) {
        double vj = exp(k.sigma * grid_z(j)), q = tab.ratio[n - 1][j];
        CHECK(&c, q >= 0 && q <= 1, "ratio[%d][%d] = %g", n - 1, j, q); /* 0: alone, no reserve */
        if (vj < rr)
          CHECK(&c, q == 1, "below the reserve the ratio is 1, not %g", q);
        else if (n == 1)
          CHECK(&c, fabs(q - rr / vj) <= 1e-7, "alone: ratio %g, not r / v %g", q, rr / vj);
      }
    /* random points, and points just above the reserve, where the bid turns fastest */
    double zr = rr > 0 ? log(rr) / k.sigma : -5;
    for (int j = 0; j < 400; j++) {
      unsigned n = (unsigned)rng_int(&g, 1, 64);
      double z = rng_range(&g, -4, 4);
      if (j % 4 == 0 && zr > -4 && zr < 4) z = fmin(4, zr + rng_range(&g, 0, 0.3) * rng_unif(&g));
      double v = k.median * exp(k.sigma * z);
      double b = mkt_bne_bid(&tab, v, k.median, n), ref = mkt_bne_lognormal(v, k.median, k.sigma, k.r, n);
      if (fabs(b - ref) / v > worst) worst = fabs(b - ref) / v;
      CHECK(&c, fabs(b - ref) <= 1e-3 * v, "sigma %g r/median %g n %u z %g: table %.9g, integral %.9g", k.sigma, rr, n,
            z, b, ref);
      CHECK(&c, b <= v && (v < k.r || b >= k.r), "table bid %g outside [r %g, v %g]", b, k.r, v);
      /* the same in other units, and more than MKT_BNE_NMAX bidders as MKT_BNE_NMAX */
      CHECK(&c, fabs(k.median * mkt_bne_bid(&tab, v / k.median, 1, n) - b) <= 1e-12 * v, "table: not scale-free");
      if (n == MKT_BNE_NMAX)
        CHECK(&c, mkt_bne_bid(&tab, v, k.median, 100) == b && mkt_bne_bid(&tab, v, k.median, 5000) == b,
              "more than %d bidders", MKT_BNE_NMAX);
    }
    /* outside [-4, 4]: the end ratios, and still in [r, v] */
    for (unsigned n = 1; n <= MKT_BNE_NMAX; n += 9) {
      double vhi = k.median * exp(4 * k.sigma), blo = mkt_bne_bid(&tab, k.median * exp(-4 * k.sigma), k.median, n);
      double bhi = mkt_bne_bid(&tab, vhi, k.median, n);
      for (int j = 0; j < 5; j++) {
        double out = rng_range(&g, 0, 3), vo = vhi * exp(k.sigma * out), bo = mkt_bne_bid(&tab, vo, k.median, n);
        if (vhi >= k.r)
          CHECK(&c, fabs(bo / vo - bhi / vhi) <= 1e-12 || bo == k.r, "z > 4: ratio %.17g, at 4 %.17g", bo / vo,
                bhi / vhi);
        double vl = k.median * exp(-k.sigma * (4 + out)), bl = mkt_bne_bid(&tab, vl, k.median, n);
        if (k.r == 0)
          CHECK(&c, fabs(bl / vl - blo / (k.median * exp(-4 * k.sigma))) <= 1e-12, "z < -4: ratio %.17g", bl / vl);
        CHECK(&c, bo <= vo && bo >= fmin(vo, k.r) && bl <= vl && bl >= fmin(vl, k.r),
              "outside the grid: not in [r, v]");
      }
    }
    /* refusals leave the table as it was */
    memcpy(&save, &tab, sizeof tab);
    static const double bad_sigma[] = {0, -0.5, NAN, INFINITY};
    for (size_t j = 0; j < sizeof bad_sigma / sizeof *bad_sigma; j++)
      CHECK(&c, mkt_bne_table_init(&tab, bad_sigma[j], rr) == -1, "sigma %g accepted", bad_sigma[j]);
    static const double bad_r[] = {-1e-9, -1, NAN};
    for (size_t j = 0; j < sizeof bad_r / sizeof *bad_r; j++)
      CHECK(&c, mkt_bne_table_init(&tab, k.sigma, bad_r[j]) == -1, "reserve %g accepted", bad_r[j]);
    CHECK(&c, memcmp(&save, &tab, sizeof tab) == 0, "a refused init changed the table");
  }
  CU_ASSERT_EQUAL(mkt_bne_table_init(NULL, 0.5, 0), -1);
  printf("(largest table error %.1e x v) ", worst);
  chk_report(&c, "table");
}

/* ---- 5. the adaptive bidder -------------------------------------------------------------------------- */
static void test_adapt(void) {
  rng g = {.s = 77};
  chk c = {0};
  /* known answers: a win moves a fraction rate towards margin + step, a loss towards margin - 2 step */
  CU_ASSERT_DOUBLE_EQUAL(mkt_adapt_update(0.2, 1, 0.5, 0.1, 0.9), 0.25, 1e-15);
  CU_ASSERT_DOUBLE_EQUAL(mkt_adapt_update(0.2, 0, 0.5, 0.1, 0.9), 0.1, 1e-15);
  CU_ASSERT_DOUBLE_EQUAL(mkt_adapt_update(0.85, 1, 0.5, 0.1, 0.9), 0.875, 1e-15); /* target clamped to 0.9 */
  CU_ASSERT_DOUBLE_EQUAL(mkt_adapt_update(0.1, 0, 1, 0.1, 0.9), 0, 0);            /* and to 0 */
  CU_ASSERT_DOUBLE_EQUAL(mkt_adapt_update(0.3, 1, 1, 0.1, 0.9), 0.4, 1e-15);
  /* in [0, max] whatever comes in */
  for (int t = 0; t < 10000; t++) {
    double max = rng_range(&g, 0, 1), m = rng_range(&g, -0.5, 1.5);
    double rate = rng_range(&g, 0, 1), step = rng_range(&g, 0, 0.5);
    double x = mkt_adapt_update(m, (int)rng_int(&g, 0, 1), rate, step, max);
    CHECK(&c, x >= 0 && x <= max, "margin %g rate %g step %g max %g: %g", m, rate, step, max, x);
  }
  /* stationary: a bid wins iff bid >= q. The margin that bids q is m* = 1 - q / value; below it
   * a win adds rate x step, above it a loss takes 2 rate x step, so once there the bid stays in
   * [q - value rate step, q + 2 value rate step). */
  for (int t = 0; t < 300; t++) {
    double value = exp(rng_range(&g, log(0.01), log(100))), q = value * rng_range(&g, 0.2, 0.95);
    double rate = rng_range(&g, 0.1, 1), step = rng_range(&g, 0.002, 0.02), ms = 1 - q / value;
    double max = fmin(1, ms + rng_range(&g, 0.05, 0.5)), m = rng_int(&g, 0, 1) ? 0 : max;
    long steps = (long)(max / (rate * step)) + 200;
    int wins = 0;
    for (long s = 0; s < steps + 200; s++) {
      double bid = value * (1 - m);
      int won = bid >= q;
      m = mkt_adapt_update(m, won, rate, step, max);
      if (s < steps) continue;
      wins += won;
      double nb = value * (1 - m), eps = 1e-12 * value;
      CHECK(&c, nb >= q - value * rate * step - eps && nb < q + 2 * value * rate * step + eps,
            "value %g q %g rate %g step %g: bid %.17g after %ld steps", value, q, rate, step, nb, s);
    }
    CHECK(&c, wins > 0 && wins < 200, "value %g q %g: %d wins of 200 once converged", value, q, wins);
  }
  /* never wins (q above the value): the margin goes to 0; always wins: to max */
  for (int t = 0; t < 100; t++) {
    double rate = rng_range(&g, 0.1, 1), step = rng_range(&g, 0.002, 0.02), max = rng_range(&g, 0.1, 1);
    double m = rng_range(&g, 0, max), a = m, prev = m;
    for (int s = 0; s < 5000; s++) {
      m = mkt_adapt_update(m, 0, rate, step, max);
      CHECK(&c, m <= prev, "a loss raised the margin from %g to %g", prev, m);
      prev = m;
      a = mkt_adapt_update(a, 1, rate, step, max);
    }
    CHECK(&c, m < 1e-9, "rate %g step %g: margin %g after 5000 losses", rate, step, m);
    CHECK(&c, max - a < 1e-9, "rate %g step %g: margin %g after 5000 wins, max %g", rate, step, a, max);
  }
  CU_ASSERT_DOUBLE_EQUAL(mkt_adapt_update(0.3, 1, 0, 0.1, 0.9), 0.3, 0); /* rate 0: no learning */
  CU_ASSERT_DOUBLE_EQUAL(mkt_adapt_update(0.3, 1, 0.5, 0.1, 0), 0, 0);   /* max 0: truthful */
  chk_report(&c, "adaptive margin");
}

static void test_names(void) {
  CU_ASSERT_EQUAL(MKT_NSTRATS, 3);
  CU_ASSERT_STRING_EQUAL(mkt_strat_names[MKT_STRAT_TRUTHFUL], "truthful");
  CU_ASSERT_STRING_EQUAL(mkt_strat_names[MKT_STRAT_SHADE], "shade");
  CU_ASSERT_STRING_EQUAL(mkt_strat_names[MKT_STRAT_ADAPTIVE], "adaptive");
  CU_ASSERT_PTR_NULL(mkt_strat_names[MKT_NSTRATS]);
}

static CU_TestInfo strategy_tests[] = {{"strategy names", test_names},
                                       {"uniform: closed form, integral, shape", test_uniform},
                                       {"log-normal: shape and tails", test_lognormal_shape},
                                       {"log-normal: a best response", test_lognormal_best_response},
                                       {"revenue equivalence: log-normal", test_revenue_lognormal},
                                       {"revenue equivalence: uniform", test_revenue_uniform},
                                       {"table against the integral", test_table},
                                       {"adaptive margin", test_adapt},
                                       CU_TEST_INFO_NULL};

CU_SuiteInfo spotlab_suites[] = {{"bidding strategies", NULL, NULL, NULL, NULL, strategy_tests}, CU_SUITE_INFO_NULL};
