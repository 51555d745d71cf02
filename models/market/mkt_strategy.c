/* mkt_strategy.c - how clients bid (mkt_strategy.h): the first-price equilibrium bid for uniform
 * and log-normal values, its table, and the adaptive bidder's margin.
 *
 * The symmetric Bayes-Nash equilibrium of a first-price auction with n bidders, IID values of CDF F
 * and reserve r is, for v >= r (Krishna, "Auction Theory", 2nd ed. 2010, prop. 2.2 and sec. 2.5;
 * Riley & Samuelson 1981),
 *
 *   b(v) = v - int_r^v F(x)^(n-1) dx / F(v)^(n-1) = E[max(r, Y) | Y < v],  Y the highest of n - 1 rivals,
 *
 * and a bidder with v < r cannot win (it bids v here). It solves b'(v) = (n - 1) f(v) / F(v) (v - b),
 * b(r) = r, so b is increasing for v > r, b(v) in [r, v], and b grows with n. By revenue
 * equivalence (Myerson 1981, "Optimal auction design", Math. Oper. Res. 6(1)) it gives the seller
 * the expected revenue of a second-price auction with the same reserve and truthful bids.
 *
 * Log-normal values are computed in log space so that F(v)^(n-1) never underflows: with
 * t = ln(x / median), z = t / sigma, m = n - 1 and x = v / median, at or below the median
 *
 *   b(v) / v = 1 - K,  K = int_{ln(r / median)}^{ln x} exp(t - ln x + m (ln F(t) - ln F(ln x))) dt,
 *
 * the integrand at most exp(t - ln x) (F(t) <= F(ln x)), so K <= 1 - r / v and b >= r follows;
 * above the median the expectation itself (ln_expect), where 1 - K would cancel. ln F = ln Phi(z)
 * (F = gsl_cdf_lognormal_P(v, ln median, sigma), whose logarithm this is) comes from erfc's
 * logarithm for z < -1, so that a very small v still has a finite ln F(v) (about -z^2 / 2).
 *
 * GSL's QAG calls the GSL error handler (by default abort()) when it cannot reach the tolerance;
 * here its best estimate is good enough for a bid, so mkt_bne_lognormal and mkt_bne_table_init
 * switch the handler off around their integrations and restore it afterwards. The handler is
 * process-wide and the runner runs replications in threads (app/runner.c), so the switch and the
 * integrations hold one mutex: concurrent calls are serialised (a table takes milliseconds).
 * mkt_bne_bid, on the simulation's hot path, never takes it: its one-cell integrals use GSL's
 * 21-point Gauss-Kronrod rule (QAG's rule, gsl_integration_qk21, which reports no errors) in a
 * bisection of its own.
 *
 * The adaptive bidder is Cliff's ZIP trader's margin rule (Cliff 1997, "Minimal-intelligence
 * agents for bargaining behaviours in market-based environments", HP Labs HPL-97-91): a
 * Widrow-Hoff step of the margin towards a target. docs/auction.md ("Bidding strategies").
 */
#include "models/market/mkt_strategy.h"

#include <gsl/gsl_cdf.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_integration.h>
#include <gsl/gsl_math.h>
#include <gsl/gsl_sf_erf.h>
#include <math.h>
#include <pthread.h>

const char *const mkt_strat_names[MKT_NSTRATS + 1] = {"truthful", "shade", "adaptive", NULL};

/* ---- Uniform values: exact ------------------------------------------------------------------- */
/* F(x) = clamp((x - lo) / w, 0, 1), w = hi - lo, u = F(v), s = F(r) <= u, m = n - 1:
 *   int_r^v F^m dx = w (u^n - s^n) / n + max(0, v - max(r, hi))   (F = 1 above hi)
 *   b(v) = v - w / n (u - s (s / u)^m) - max(0, v - max(r, hi)) / u^m
 * On U[0, 1]: b = (n - 1) / n v + r^n / (n v^(n - 1)); without reserve (n - 1) / n v. */
static double clamp01(double x) { return x < 0 ? 0 : x > 1 ? 1 : x; }

double mkt_bne_uniform(double v, double lo, double hi, double r, unsigned n) {
  if (isnan(v) || isnan(lo) || isnan(hi) || isnan(r)) return NAN;
  if (v < r) return v;
  if (n <= 1) return r; /* alone: the reserve wins */
  double w = hi - lo;
  if (!(w > 0)) return fmax(r, fmin(v, lo)); /* degenerate: every rival values lo (Bertrand) */
  double u = clamp01((v - lo) / w), s = clamp01((r - lo) / w);
  if (u <= 0) return v; /* v <= lo: F(v) = 0, it never wins */
  double m = (double)n - 1, above = v - fmax(r, hi);
  double b = v - w / (double)n * (u - s * pow(s / u, m));
  if (above > 0) b -= above / pow(u, m); /* u = 1 here */
  return fmin(v, fmax(r, b));
}

/* ---- Log-normal values: numerical ------------------------------------------------------------ */
#define LN_LIMIT 1000   /* QAG subintervals */
#define LN_EPSREL 1e-9  /* QAG's relative error (mkt_strategy.h) */
#define LN_EPSABS 1e-13 /* and absolute, on K = 1 - bid / value, far below a float's precision */
#define LN_CUT 60.0     /* lower end of the integral: ln x - 60 at most */

/* QAG with GSL's error handler off, one thread at a time (see the top of the file). */
static pthread_mutex_t ln_gsl_lock = PTHREAD_MUTEX_INITIALIZER;
static gsl_error_handler_t *ln_quiet_begin(void) {
  pthread_mutex_lock(&ln_gsl_lock);
  return gsl_set_error_handler_off();
}
static void ln_quiet_end(gsl_error_handler_t *old) {
  gsl_set_error_handler(old);
  pthread_mutex_unlock(&ln_gsl_lock);
}

/* ln Phi(z), accurate in both tails: log1p of the upper tail above -1, erfc's logarithm below. */
static double log_Phi(double z) {
  if (z > -1) return log1p(-gsl_cdf_ugaussian_Q(z));
  return gsl_sf_log_erfc(-z * M_SQRT1_2) - M_LN2;
}

typedef struct ln_par {
  double tx, lfx, sigma, m; /* ln x, ln F at ln x, sigma, n - 1 */
} ln_par;

static double ln_integrand(double t, void *p) {
  const ln_par *q = p;
  return exp(t - q->tx + q->m * (log_Phi(t / q->sigma) - q->lfx));
}

/* int_a^b of the integrand normalised at tx (a <= b <= tx). */
static double ln_piece(double a, double b, double tx, double lfx, double sigma, double m,
                       gsl_integration_workspace *ws) {
  if (!(b > a)) return 0;
  ln_par p = {tx, lfx, sigma, m};
  gsl_function f = {ln_integrand, &p};
  double res = 0, err = 0;
  gsl_integration_qag(&f, a, b, LN_EPSABS, LN_EPSREL, LN_LIMIT, GSL_INTEG_GAUSS21, ws, &res, &err);
  return isfinite(res) && res > 0 ? res : 0; /* status ignored: the best estimate (see above) */
}

/* d ln F / dt at t = ln x: the inverse Mills ratio phi(z) / Phi(z) over sigma (lfx = ln Phi(z)). */
static double ln_hazard(double z, double lfx, double sigma) {
  return exp(-0.5 * z * z - 0.5 * log(2 * M_PI) - lfx) / sigma;
}

/* Lower end of the integral for value ln x = tx and reserve ln(r / median) = tr (-inf without).
 * ln Phi is concave, so ln F(t) <= ln F(tx) + lambda (t - tx) and the integrand is at most
 * exp((t - tx)(1 + m lambda)): from tx - 50 / (1 + m lambda) down it adds less than e^-50 to K.
 * (A fixed cut would leave QAG's first nodes all in the flat part when n is large.) */
static double ln_lower(double tx, double tr, double lfx, double sigma, double m) {
  double lam = ln_hazard(tx / sigma, lfx, sigma);
  double w = 50 / (1 + m * lam);
  if (!(w < LN_CUT)) w = LN_CUT;
  return fmax(tr, tx - w);
}

/* Above the median the shading form b = v (1 - K) cancels (K -> 1 - b / v as v grows: b tends to
 * E[max(r, Y)], v does not), so there the bid is the expectation itself, integrated by parts:
 *   b(v) = r G(r) + int_r^v x dG(x),  G(x) = (F(x) / F(v))^m,  dG = m lambda(t) G dt,
 * all terms positive. With z_x > 0, F(v) >= 1/2 and G <= (2 Phi(z))^m <= exp(-m z^2 / 2) for z < 0
 * (Chernoff), so below z = -(sqrt(100 / m) + 2) it adds less than about e^-50; and e^t phi(z) peaks
 * at z = sigma, so above z = sigma + 11 it adds less than e^-60 of that peak. The range is cut in
 * pieces of 2 in z so that QAG's first nodes see the peak of dG, which narrows as n grows. */
typedef struct ln_epar {
  double lfx, sigma, m;
} ln_epar;

static double ln_e_integrand(double t, void *p) {
  const ln_epar *q = p;
  double z = t / q->sigma, lf = log_Phi(z);
  return q->m / q->sigma * exp(t + q->m * (lf - q->lfx) - 0.5 * z * z - 0.5 * log(2 * M_PI) - lf);
}

static double ln_expect(double tx, double tr, double lfx, double sigma, double m, gsl_integration_workspace *ws) {
  ln_epar p = {lfx, sigma, m};
  gsl_function f = {ln_e_integrand, &p};
  double zlo = fmax(tr / sigma, -(sqrt(100 / m) + 2)), zhi = fmin(tx / sigma, sigma + 11), sum = 0;
  if (tr > -INFINITY) sum = exp(tr + m * (log_Phi(tr / sigma) - lfx)); /* r G(r) */
  for (double z = zlo; z < zhi; z += 2) {
    double res = 0, err = 0, z2 = fmin(z + 2, zhi);
    gsl_integration_qag(&f, sigma * z, sigma * z2, 0, LN_EPSREL, LN_LIMIT, GSL_INTEG_GAUSS21, ws, &res, &err);
    if (isfinite(res) && res > 0) sum += res;
  }
  return sum;
}

double mkt_bne_lognormal(double v, double median, double sigma, double r, unsigned n) {
  if (isnan(v) || !(median > 0) || !(sigma > 0) || !(r >= 0) || isinf(median) || isinf(sigma)) return NAN;
  if (v < r) return v;
  if (n <= 1) return r;
  if (v == 0 || isinf(v)) return v; /* v = r = 0; an infinite value bids it (never above v) */
  double tx = log(v / median), tr = r > 0 ? log(r / median) : -INFINITY;
  if (!isfinite(tx)) return fmax(r, v); /* v / median under- or overflows: the bid tends to v */
  gsl_integration_workspace *ws = gsl_integration_workspace_alloc(LN_LIMIT);
  if (!ws) return NAN;
  gsl_error_handler_t *old = ln_quiet_begin();
  double m = (double)n - 1, lfx = log_Phi(tx / sigma), b;
  if (tx > 0)
    b = median * ln_expect(tx, tr, lfx, sigma, m, ws);
  else
    b = v * (1 - ln_piece(ln_lower(tx, tr, lfx, sigma, m), tx, tx, lfx, sigma, m, ws));
  ln_quiet_end(old);
  gsl_integration_workspace_free(ws);
  if (isnan(b)) b = r;
  return fmin(v, fmax(r, b));
}

/* ---- The table ------------------------------------------------------------------------------- */
/* Row n - 1, at z_k = -4 + 8 k / (NZ - 1), holds b(v_k) / v_k with median 1 (scale invariance,
 * mkt_strategy.h), v_k = exp(sigma z_k), reserve rr: 1 below the reserve, rr / v_k for n = 1.
 * For n >= 2 the integral is carried along the grid: with J(v) = int_rr^v F^m = v K(v) F(v)^m,
 *   K_k = K_{k-1} exp(t_{k-1} - t_k + m (ln F_{k-1} - ln F_k)) + int_{t_{k-1}}^{t_k} (normalised at t_k),
 * each step a QAG over one grid cell; the first point at or above the reserve is integrated from
 * the reserve (or from ln_lower's cut without one), as mkt_bne_lognormal does at or below the
 * median (above it the reference takes the other form: the test compares two computations). */
static double grid_z(int k) { return -4.0 + 8.0 * k / (MKT_BNE_NZ - 1); }

int mkt_bne_table_init(mkt_bne_table *t, double sigma, double reserve_rel) {
  if (!t || !(sigma > 0) || isinf(sigma) || !(reserve_rel >= 0) || isinf(reserve_rel)) return -1;
  gsl_integration_workspace *ws = gsl_integration_workspace_alloc(LN_LIMIT);
  if (!ws) return -1;
  gsl_error_handler_t *old = ln_quiet_begin();
  double tr = reserve_rel > 0 ? log(reserve_rel) : -INFINITY;
  double tk[MKT_BNE_NZ], lf[MKT_BNE_NZ];
  for (int k = 0; k < MKT_BNE_NZ; k++) {
    tk[k] = sigma * grid_z(k);
    lf[k] = log_Phi(grid_z(k));
  }
  t->sigma = sigma;
  t->reserve_rel = reserve_rel;
  for (int n = 1; n <= MKT_BNE_NMAX; n++) {
    double m = n - 1, kprev = 0;
    int started = 0;
    for (int k = 0; k < MKT_BNE_NZ; k++) {
      double vk = exp(tk[k]), ratio;
      if (vk < reserve_rel) {
        ratio = 1;
      } else if (n == 1) {
        ratio = reserve_rel / vk;
      } else {
        double kk;
        if (!started) {
          kk = ln_piece(ln_lower(tk[k], tr, lf[k], sigma, m), tk[k], tk[k], lf[k], sigma, m, ws);
          started = 1;
        } else {
          kk = kprev * exp(tk[k - 1] - tk[k] + m * (lf[k - 1] - lf[k]));
          kk += ln_piece(fmax(tk[k - 1], tr), tk[k], tk[k], lf[k], sigma, m, ws);
        }
        kprev = kk;
        ratio = 1 - kk;
        if (ratio < reserve_rel / vk) ratio = reserve_rel / vk;
      }
      t->ratio[n - 1][k] = (float)(ratio > 1 ? 1 : ratio);
    }
  }
  ln_quiet_end(old);
  gsl_integration_workspace_free(ws);
  return 0;
}

/* Above the reserve the bid rises from b(r) = r with b'(r) = 0 to v - (shading) within about
 * 1 / (m lambda) of the reserve in z (lambda = phi(z) / Phi(z), the hazard of ln F): with many
 * bidders that is a fraction of a grid cell, and a straight line between two grid points misses it
 * (measured: up to 8e-3 x v, sigma 1.2, reserve at the median, 58 bidders). Exactly: with
 * J(v) = int_r^v F^m = v K F(v)^m,
 *   J(v) = J(v_k) + int_{max(v_k, r)}^v F^m,
 * one cell's integral from the grid point below, whose K_k = 1 - ratio the table holds (J = 0 when
 * v_k < r). mkt_bne_bid uses this in the cells where the reserve's part of the bid / value,
 * (F(r) / F(v))^m (r - b_0(r)) / v with b_0 the bid without reserve (Krishna 2010, sec. 2.5; at
 * most (F(r) / F(v))^m r / v), still bends more than the grid resolves: an exponential of rate
 * a = m lambda + sigma in z and size A at the cell's lower end z0 is off a straight line over the
 * cell of width h by at most (h a)^2 / 8 x A; above BNE_BEND, the exact form. Elsewhere, a line in
 * z between the two grid points (in the reserve's cell from (z_r, 1), since b(r) = r). */
#define BNE_BEND 2e-5
#define BNE_CELL_TOL 1e-10 /* absolute, on K: the table's floats hold 6e-8 */
#define BNE_CELL_DEPTH 12  /* bisections at most */

/* int_a^b f by GSL's 21-point Gauss-Kronrod rule, halving until its error estimate is below tol. */
static double qk21_bisect(const gsl_function *f, double a, double b, double tol, int depth) {
  double res = 0, err = 0, resabs = 0, resasc = 0;
  gsl_integration_qk21(f, a, b, &res, &err, &resabs, &resasc);
  if (!(err > tol) || depth <= 0) return res;
  double mid = 0.5 * (a + b);
  return qk21_bisect(f, a, mid, 0.5 * tol, depth - 1) + qk21_bisect(f, mid, b, 0.5 * tol, depth - 1);
}

static double bne_cell_exact(const mkt_bne_table *t, const float *row, int k, double z, double zr, double m) {
  double sigma = t->sigma, tx = sigma * z, lfx = log_Phi(z), zk = grid_z(k), kk = 0, lower;
  if (zk >= zr) { /* the grid point is at or above the reserve: carry its integral */
    kk = (1 - row[k]) * exp(sigma * (zk - z) + m * (log_Phi(zk) - lfx));
    lower = sigma * zk;
  } else {
    lower = sigma * zr;
  }
  if (tx > lower) {
    ln_par p = {tx, lfx, sigma, m};
    gsl_function f = {ln_integrand, &p};
    double res = qk21_bisect(&f, lower, tx, BNE_CELL_TOL, BNE_CELL_DEPTH);
    if (isfinite(res) && res > 0) kk += res;
  }
  return 1 - kk;
}

double mkt_bne_bid(const mkt_bne_table *t, double v, double median, unsigned n) {
  if (!t || isnan(v) || !(median > 0)) return NAN;
  double r = t->reserve_rel * median;
  if (v < r) return v;
  if (n <= 1) return r;
  if (v == 0 || isinf(v)) return v;
  if (n > MKT_BNE_NMAX) n = MKT_BNE_NMAX;
  const float *row = t->ratio[n - 1];
  double z = log(v / median) / t->sigma;
  if (isnan(z)) return fmax(r, v);
  double ratio;
  if (z <= -4) {
    ratio = row[0];
  } else if (z >= 4) {
    ratio = row[MKT_BNE_NZ - 1];
  } else {
    double pos = (z + 4) * (MKT_BNE_NZ - 1) / 8.0;
    int k = (int)pos;
    if (k > MKT_BNE_NZ - 2) k = MKT_BNE_NZ - 2;
    double z0 = grid_z(k), z1 = grid_z(k + 1), r0 = row[k], r1 = row[k + 1];
    double zr = t->reserve_rel > 0 ? log(t->reserve_rel) / t->sigma : -INFINITY;
    if (zr > z0 && zr <= z) { /* the reserve's cell, above the reserve: b(r) = r is a knot */
      z0 = zr;
      r0 = 1;
    }
    if (zr > -INFINITY && zr <= z) {
      double m = (double)n - 1, lfr = log_Phi(zr), lf0 = log_Phi(z0);
      double lam = exp(-0.5 * z0 * z0 - 0.5 * log(2 * M_PI) - lf0), hm = (z1 - z0) * (m * lam + t->sigma);
      if (hm * hm / 8 * exp(m * (lfr - lf0) + t->sigma * (zr - z0)) > BNE_BEND)
        return fmin(v, fmax(r, v * bne_cell_exact(t, row, k, z, zr, m)));
    }
    ratio = z1 > z0 ? r0 + (r1 - r0) * (z - z0) / (z1 - z0) : r1;
  }
  double b = ratio * v;
  return fmin(v, fmax(r, b));
}

/* ---- The adaptive bidder --------------------------------------------------------------------- */
/* Cliff 1997 (HPL-97-91), ZIP: the margin moves a fraction `rate` of the way to a target, above it
 * after a win (try to pay less), below it after a loss (bid closer to value). */
static double clamp(double x, double lo, double hi) { return x < lo ? lo : x > hi ? hi : x; }

double mkt_adapt_update(double margin, int won, double rate, double step, double max_margin) {
  if (!(max_margin > 0)) return 0; /* also NaN */
  if (isnan(margin)) margin = 0;
  margin = clamp(margin, 0, max_margin);
  if (!(rate > 0) || !(step >= 0) || isinf(step)) return margin; /* no learning */
  if (rate > 1) rate = 1;
  double target = clamp(won ? margin + step : margin - 2 * step, 0, max_margin);
  return clamp(margin + rate * (target - margin), 0, max_margin);
}
