/* mkt_churn.c - provider churn draws at the market's time resolution (models/churn does the rest). */
#include "models/market/mkt.h"

double mkt_dist_sample(const churn_dist *d, gsl_rng *r) {
  double x = churn_dist_draw(d, r);
  /* Intervals shorter than a millisecond are rounded up: the model keeps time in ms. */
  return x > 1e-6 / 3.6 ? x : 1e-6 / 3.6;
}
