/* stats.c - summary statistics across replications. */
#include "sim/results_io.h"

#include <gsl/gsl_cdf.h>
#include <math.h>

/* Mean and sample standard deviation; the 95% interval is mean +- t_{0.975, n-1} * sd / sqrt(n)
 * (Student's t, as for independent replications: Law, "Simulation Modeling and Analysis",
 * 5th ed., section 9.4.1). With one replication the interval is undefined (NaN). */
void sim_summarize(const double *x, size_t n, size_t stride, sim_summary *out) {
  double mean = 0, m2 = 0;
  for (size_t i = 0; i < n; i++) { /* Welford's update */
    double v = x[i * stride], dlt = v - mean;
    mean += dlt / (double)(i + 1);
    m2 += dlt * (v - mean);
  }
  out->n = (int)n;
  out->mean = n ? mean : NAN;
  out->sd = n > 1 ? sqrt(m2 / (double)(n - 1)) : NAN;
  if (n > 1) {
    double h = gsl_cdf_tdist_Pinv(0.975, (double)(n - 1)) * out->sd / sqrt((double)n);
    out->ci95_lo = mean - h;
    out->ci95_hi = mean + h;
  } else {
    out->ci95_lo = out->ci95_hi = NAN;
  }
}
