/* sched_model.c - the scheduling core's pure models: checkpoint intervals, Beta reputation,
 * transfers over lossy links (TCP, ARQ, HARQ with chase combining), the speed of a cluster of
 * weak GPUs, and autoscaling. No state; each function is tested with known answers in
 * tests/test_sched.c. */
#include "models/sched/sched.h"

#include <gsl/gsl_cdf.h>
#include <math.h>

/* Young 1974 ("A first order approximation to the optimum checkpoint interval", CACM 17(9)):
 *   T_opt = sqrt(2 C M). */
double sched_young_interval(double C, double M) {
  if (!(C > 0) || !(M > 0)) return 0;
  return sqrt(2.0 * C * M);
}

/* Daly 2006 ("A higher order estimate of the optimum checkpoint interval for restart dumps",
 * FGCS 22(3), eq. 37):
 *   T_opt = sqrt(2 C M) [1 + (1/3) sqrt(C / (2M)) + (1/9) (C / (2M))] - C   for C < 2M
 *   T_opt = M                                                              for C >= 2M */
double sched_daly_interval(double C, double M) {
  if (!(C > 0) || !(M > 0)) return 0;
  if (C >= 2.0 * M) return M;
  double x = C / (2.0 * M);
  return sqrt(2.0 * C * M) * (1.0 + sqrt(x) / 3.0 + x / 9.0) - C;
}

/* Josang & Ismail 2002 ("The Beta Reputation System", Bled eCommerce conf.):
 *   E = (r + 1) / (r + s + 2) for r positive and s negative observations. */
double sched_beta_expect(double r, double s) {
  if (r < 0) r = 0;
  if (s < 0) s = 0;
  return (r + 1.0) / (r + s + 2.0);
}

/* Probability that an L-bit packet fails when each bit errs with probability ber:
 * 1 - (1 - ber)^L, computed without cancellation. */
static double sched__pkt_fail(double ber, double L) {
  if (ber <= 0) return 0;
  if (ber >= 1) return 1;
  return -expm1(L * log1p(-ber));
}

/* Expected transmissions per delivered packet.
 *
 * ARQ and TCP: each transmission is lost independently with probability p, so the count is
 * geometric: E = 1 / (1 - p).
 *
 * HARQ with chase combining (Chase 1985, "Code combining", IEEE Trans. Commun. 33(5)): the
 * receiver adds the soft values of every copy, so k copies have k times the SNR of one. We take
 * losses to come from bit errors of uncoded BPSK on an AWGN channel, BER = Q(sqrt(2 g)), and
 * find the per-copy SNR g that gives the observed single-copy packet loss p:
 *   BER_1 = 1 - (1 - p)^(1/L),  sqrt(2 g) = Qinv(BER_1),
 *   after k copies: BER_k = Q(sqrt(k) Qinv(BER_1)),  P_k = 1 - (1 - BER_k)^L.
 * The receiver combines at most m copies and then flushes (starts over), so with P_0 = 1:
 *   E = (sum_{k=0}^{m-1} P_k) / (1 - P_m)
 * (a renewal argument: copy k+1 is sent iff the first k failed; a cycle succeeds w.p. 1 - P_m).
 * This is a model of noise-driven loss; congestion loss does not combine and is not modelled. */
double sched_net_expected_tx(const sched_net_params *np, double p) {
  if (!(p > 0)) return 1.0;
  if (p >= 1) return INFINITY;
  if (np->mode != SCHED_NET_HARQ_CC || np->harq_max_tx <= 1) return 1.0 / (1.0 - p);
  double L = np->packet_bits > 1 ? np->packet_bits : 1;
  double ber1 = -expm1(log1p(-p) / L);
  double qinv = gsl_cdf_ugaussian_Qinv(ber1);
  double sum = 0, Pk = 1.0;
  for (unsigned k = 0; k < np->harq_max_tx; k++) {
    sum += Pk; /* P_k, k = 0 .. m-1 */
    double berk = gsl_cdf_ugaussian_Q(sqrt((double)(k + 1)) * qinv);
    Pk = sched__pkt_fail(berk, L); /* P_{k+1} */
  }
  if (Pk >= 1) return INFINITY;
  return sum / (1.0 - Pk);
}

/* Goodput of a link, bit/s.
 * ARQ, HARQ: the link's rate divided by the expected transmissions per packet.
 * TCP: the PFTK steady-state throughput (Padhye, Firoiu, Towsley, Kurose 1998, "Modeling TCP
 * throughput: a simple model and its empirical validation", SIGCOMM, eq. 33), in packets/s:
 *   B(p) = min( Wmax/RTT, 1 / (RTT sqrt(2bp/3) + T0 min(1, 3 sqrt(3bp/8)) p (1 + 32 p^2)) )
 * times the packet size, capped by the link rate. */
double sched_net_goodput(const sched_net_params *np, const sched_link *l) {
  double p = l->loss > 0 ? l->loss : 0;
  if (p >= 1 || !(l->bw_bps > 0)) return 0;
  if (np->mode == SCHED_NET_TCP) {
    double rtt = l->rtt_s > 1e-6 ? l->rtt_s : 1e-6, L = np->packet_bits;
    double b = np->tcp_b > 0 ? np->tcp_b : 1;
    double win = np->tcp_wmax / rtt;
    double bp = win;
    if (p > 0) {
      double den =
          rtt * sqrt(2 * b * p / 3) + np->tcp_rto_s * fmin(1.0, 3 * sqrt(3 * b * p / 8)) * p * (1 + 32 * p * p);
      bp = fmin(win, 1.0 / den);
    }
    return fmin(l->bw_bps, bp * L);
  }
  return l->bw_bps / sched_net_expected_tx(np, p);
}

double sched_net_transfer_time(const sched_net_params *np, const sched_link *l, double bytes) {
  if (!(bytes > 0)) return 0;
  double g = sched_net_goodput(np, l);
  if (!(g > 0)) return INFINITY;
  return 0.5 * l->rtt_s + bytes * 8.0 / g;
}

/* Speed of a run of n members (speeds s_i in work units/s) on a job that does synchronous
 * steps of W work units and all-reduces B bytes per step (data parallelism).
 *
 * Compute time of one step:
 *   even split:      t = (W / n) / min_i s_i / eff_even      (the slowest member sets the pace)
 *   weighted split:  t = W / sum_i s_i / eff_weighted        (shares proportional to speed)
 *   dynamic chunks:  t = W / sum_i s_i / eff_dynamic + (m/n) h + (1/2) (W/m) / mean_i s_i
 *     with m = ceil(chunks_per_member n) chunks and h the overhead of fetching one chunk; the
 *     last term is half a chunk of idle tail, the expected slack of greedy list scheduling
 *     (Graham 1969 bounds it by one whole chunk). Our approximation, stated in docs.
 * Communication (ring all-reduce, Patarasuk & Yuan 2009, "Bandwidth optimal all-reduce
 * algorithms for clusters of workstations", JPDC 69(2)):
 *   t_comm = 2 (n-1)/n * 8B / g_min + 2 (n-1) a
 *   with g_min the smallest member goodput (the ring's bottleneck, from the transfer model)
 *   and a the largest one-way latency.
 * Rate = W / (t_compute + t_comm), and the share of a step spent communicating t_comm / (t_compute
 * + t_comm) (sched_cluster_step gives both times). Without synchronisation (W = 0) the run's rate
 * is eff * n * min s (even) or eff * sum s (weighted, dynamic), and nothing is communicated. */
static double sched__cluster_step(const sched_cluster_params *cp, const sched_net_params *np, const double *speed,
                                  const sched_link *links, unsigned n, double step_work, double step_bytes,
                                  double *tc_out, double *tm_out) {
  *tc_out = *tm_out = 0;
  if (n == 0) return 0;
  double sum = 0, mn = INFINITY;
  for (unsigned i = 0; i < n; i++) {
    double si = speed[i] > 0 ? speed[i] : 0;
    sum += si;
    if (si < mn) mn = si;
  }
  if (!(sum > 0)) return 0;
  double eff;
  switch (cp->split) {
  case SCHED_SPLIT_EVEN: eff = cp->even_eff; break;
  case SCHED_SPLIT_WEIGHTED: eff = cp->weighted_eff; break;
  default: eff = cp->dynamic_eff; break;
  }
  if (!(eff > 0)) eff = 1;
  if (!(step_work > 0)) return cp->split == SCHED_SPLIT_EVEN ? eff * n * mn : eff * sum;
  double W = step_work, tc;
  if (cp->split == SCHED_SPLIT_EVEN) {
    if (!(mn > 0)) return 0;
    tc = (W / n) / mn / eff;
  } else if (cp->split == SCHED_SPLIT_WEIGHTED) {
    tc = W / sum / eff;
  } else {
    double m = ceil((cp->chunks_per_member > 0 ? cp->chunks_per_member : 1) * n);
    tc = W / sum / eff + (m / n) * cp->chunk_overhead_s + 0.5 * (W / m) / (sum / n);
  }
  double tm = sched_allreduce_time(np, links, n, step_bytes);
  *tc_out = tc;
  *tm_out = tm;
  if (!isfinite(tm)) return 0;
  return W / (tc + tm);
}

double sched_cluster_step(const sched_cluster_params *cp, const sched_net_params *np, const double *speed,
                          const sched_link *links, unsigned n, double step_work, double step_bytes, double *t_compute,
                          double *t_comm) {
  double tc_out = 0, tm_out = 0;
  double rate = sched__cluster_step(cp, np, speed, links, n, step_work, step_bytes, &tc_out, &tm_out);
  if (t_compute) *t_compute = tc_out;
  if (t_comm) *t_comm = tm_out;
  return rate;
}

double sched_cluster_rate(const sched_cluster_params *cp, const sched_net_params *np, const double *speed,
                          const sched_link *links, unsigned n, double step_work, double step_bytes) {
  double tc, tm;
  return sched__cluster_step(cp, np, speed, links, n, step_work, step_bytes, &tc, &tm);
}

/* The all-reduce time of one step, s (the t_comm above): 0 for one member or no bytes, INFINITY
 * when a member's link passes nothing. */
double sched_allreduce_time(const sched_net_params *np, const sched_link *links, unsigned n, double step_bytes) {
  if (n <= 1 || !(step_bytes > 0)) return 0;
  double gmin = INFINITY, amax = 0;
  for (unsigned i = 0; i < n; i++) {
    double g = sched_net_goodput(np, &links[i]);
    if (g < gmin) gmin = g;
    if (0.5 * links[i].rtt_s > amax) amax = 0.5 * links[i].rtt_s;
  }
  if (!(gmin > 0)) return INFINITY;
  return 2.0 * (n - 1) / n * 8.0 * step_bytes / gmin + 2.0 * (n - 1) * amax;
}

/* Contention between co-located members; the form and its sources are in sched.h. */
double sched_coloc_factor(const sched_cluster_params *cp, double k) {
  unsigned n = cp->ncoloc < SCHED_MAX_COLOC ? cp->ncoloc : SCHED_MAX_COLOC;
  if (n == 0 || !(k >= 1)) return 1.0;
  if (k >= (double)n) return cp->coloc[n - 1] * (double)n / k;
  unsigned lo = (unsigned)floor(k); /* 1 <= lo < n */
  double w = k - (double)lo;
  return (1 - w) * cp->coloc[lo - 1] + w * cp->coloc[lo];
}

int sched_coloc_learn(sched_cluster_params *cp, const double *alone, const double *together, const unsigned *k,
                      size_t n, unsigned kmax) {
  if (kmax < 1 || kmax > SCHED_MAX_COLOC) return SCHED_EINVAL;
  double sa[SCHED_MAX_COLOC] = {0}, st[SCHED_MAX_COLOC] = {0};
  for (size_t i = 0; i < n; i++) {
    if (!(alone[i] > 0) || !(together[i] > 0) || k[i] < 1 || k[i] > kmax) return SCHED_EINVAL;
    sa[k[i] - 1] += alone[i];
    st[k[i] - 1] += together[i];
  }
  double f[SCHED_MAX_COLOC];
  int have[SCHED_MAX_COLOC];
  for (unsigned j = 0; j < kmax; j++) {
    have[j] = sa[j] > 0;
    f[j] = have[j] ? st[j] / sa[j] : NAN;
  }
  if (!have[0]) {
    f[0] = 1.0;
    have[0] = 1;
  }
  /* gaps: linear between the measured neighbours, processor sharing past the last one */
  for (unsigned j = 1; j < kmax; j++) {
    if (have[j]) continue;
    unsigned lo = j - 1, hi = j + 1;
    while (hi < kmax && !have[hi]) hi++;
    if (hi < kmax) {
      double w = (double)(j - lo) / (double)(hi - lo);
      f[j] = (1 - w) * f[lo] + w * f[hi];
    } else {
      f[j] = f[lo] * (double)(lo + 1) / (double)(j + 1);
    }
    have[j] = 1;
  }
  for (unsigned j = 0; j < kmax; j++) cp->coloc[j] = f[j];
  cp->ncoloc = kmax;
  return 0;
}

/* Kubernetes Horizontal Pod Autoscaler rule (kubernetes.io, "Horizontal Pod Autoscaling":
 * desired = ceil(current * currentMetric / target)); with utilization = load / (current *
 * capacity) this is ceil(load / (capacity * target)), clamped to [min_r, max_r]. */
unsigned sched_autoscale_replicas(double load, double capacity_per_replica, double target_util, unsigned min_r,
                                  unsigned max_r) {
  double want = 0;
  if (load > 0 && capacity_per_replica > 0 && target_util > 0)
    want = ceil(load / (capacity_per_replica * target_util) - 1e-9);
  if (want < min_r) want = min_r;
  if (want > max_r) want = max_r;
  return (unsigned)want;
}
