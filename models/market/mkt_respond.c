/* mkt_respond.c - the reaction models (mkt_respond.h). */
#include "models/market/mkt_respond.h"

#include <math.h>

double mkt_demand_factor(double price, double price_ref, double elasticity) {
  if (!(price > 0) || !(price_ref > 0) || elasticity == 0) return 1.0;
  double f = pow(price / price_ref, -elasticity);
  if (!(f >= MKT_DEMAND_MIN)) return MKT_DEMAND_MIN;
  return f > MKT_DEMAND_MAX ? MKT_DEMAND_MAX : f;
}

unsigned mkt_choice_probs(const mkt_option *o, unsigned n, const mkt_choice_w *w, double v, double run_s,
                          double *prob) {
  double u[8], best = -INFINITY;
  unsigned k = 0;
  if (n > 8) n = 8;
  for (unsigned i = 0; i < n; i++) {
    prob[i] = 0;
    u[i] = -INFINITY;
    if (!(o[i].share > 0) || !(v > 0) || o[i].price > v) continue;
    u[i] = log(o[i].share) - w->cost * o[i].price / v - w->wait * o[i].wait_s / (run_s > 0 ? run_s : 1.0) -
           w->risk * o[i].interruptions;
    if (u[i] > best) best = u[i];
    k++;
  }
  if (!k) return 0;
  double sum = 0;
  for (unsigned i = 0; i < n; i++)
    if (u[i] > -INFINITY) sum += prob[i] = exp(u[i] - best); /* shifted by the best: no overflow */
  for (unsigned i = 0; i < n; i++) prob[i] /= sum;
  return k;
}

int mkt_choice_pick(const double *prob, unsigned n, double u) {
  double acc = 0;
  int last = -1;
  for (unsigned i = 0; i < n; i++) {
    if (!(prob[i] > 0)) continue;
    last = (int)i;
    acc += prob[i];
    if (u < acc) return (int)i;
  }
  return last; /* rounding: u just below 1 */
}

double mkt_announce_prob(double at_stake, double max, double scale) {
  if (!(at_stake > 0) || !(scale > 0) || !(max > 0)) return 0;
  return (max > 1 ? 1 : max) * (1.0 - exp(-at_stake / scale));
}
