/* mkt_ledger.c - integer double-entry ledger, fee and cost arithmetic, the flexible pool's
 * treasury rule and the Erlang C formula. */
#include "models/market/mkt.h"

#include <math.h>
#include <stdlib.h>

const char *mkt_strerror(int err) { return spotlab_strerror(err); } /* sim/errors.h */

int mkt_ledger_init(mkt_ledger *l, size_t naccounts) {
  l->bal = calloc(naccounts ? naccounts : 1, sizeof *l->bal);
  l->n = l->bal ? naccounts : 0;
  return l->bal ? MKT_OK : MKT_ENOMEM;
}

void mkt_ledger_fini(mkt_ledger *l) {
  free(l->bal);
  l->bal = NULL;
  l->n = 0;
}

int mkt_ledger_transfer(mkt_ledger *l, size_t from, size_t to, int64_t amount) {
  if (from >= l->n || to >= l->n) return MKT_EINVAL;
  int64_t f, t;
  if (__builtin_sub_overflow(l->bal[from], amount, &f)) return MKT_EINVAL;
  if (from == to) return MKT_OK;
  if (__builtin_add_overflow(l->bal[to], amount, &t)) return MKT_EINVAL;
  l->bal[from] = f;
  l->bal[to] = t;
  return MKT_OK;
}

int64_t mkt_ledger_sum(const mkt_ledger *l, int *overflow) {
  int64_t s = 0;
  int of = 0;
  for (size_t i = 0; i < l->n; i++) of |= __builtin_add_overflow(s, l->bal[i], &s);
  if (overflow) *overflow = of;
  return s;
}

int64_t mkt_fee(int64_t amount, int64_t fee_ppm) {
  /* fee = amount * ppm / 1e6 toward zero; 128-bit product so no overflow. */
  __int128 p = (__int128)amount * fee_ppm;
  return (int64_t)(p / 1000000);
}

int64_t mkt_cost(int64_t price_musd_h, int64_t dur_ms) {
  /* cost = price per hour * ms / 3.6e6 ms per hour */
  __int128 p = (__int128)price_musd_h * dur_ms;
  return (int64_t)(p / 3600000);
}

int64_t mkt_treasury_next_rate(const mkt_treasury_rule *r, int64_t rate, int64_t balance, uint64_t staked_gpus) {
  /* target = reserve_h * rate * staked GPUs; see mkt.h for the rule and its source. */
  double target = r->reserve_h * (double)rate * (double)staked_gpus;
  double next = (double)rate;
  if ((double)balance < target)
    next *= 1.0 - r->adjust;
  else if ((double)balance > 2.0 * target)
    next *= 1.0 + r->adjust;
  int64_t n = (int64_t)llround(next);
  if (n == rate && next > rate) n = rate + 1; /* integer rates must still be able to climb */
  if (n < r->rate_min) n = r->rate_min;
  if (n > r->rate_max) n = r->rate_max;
  return n;
}

int64_t mkt_treasury_pay(int64_t *balance, int64_t owed, int64_t *shortfall) {
  if (owed <= 0) return 0;
  int64_t avail = *balance > 0 ? *balance : 0;
  int64_t paid = owed < avail ? owed : avail;
  *balance -= paid;
  *shortfall += owed - paid;
  return paid;
}

double mkt_erlang_c_wait(double lambda, double mu, unsigned c) {
  double a = lambda / mu, rho = a / c;
  if (c == 0 || rho >= 1.0) return INFINITY;
  /* Erlang C (Kleinrock 1975, sec. 3.5): C = (a^c/c!)/(1-rho) / (sum_{k<c} a^k/k! + (a^c/c!)/(1-rho));
   * Wq = C / (c mu - lambda). Terms built iteratively to stay finite for large c. */
  double term = 1.0, sum = 0.0;
  for (unsigned k = 0; k < c; k++) {
    sum += term;
    term *= a / (k + 1);
  }
  double last = term / (1.0 - rho);
  double C = last / (sum + last);
  return C / (c * mu - lambda);
}
