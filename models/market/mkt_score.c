/* mkt_score.c - NGPU-style unified compute score (formula and source in mkt.h). */
#include "models/market/mkt.h"

#include <math.h>

/* Reference machine: one A100 (fp16 312 TFLOPS, data/gpus.csv), a 1 Gbit/s link and an NVMe disk
 * of 2000 MB/s; weights favour AI throughput as NGPU's description does ("AI inference capability
 * ... combined with storage and network bandwidth"). Weights are spotlab's choice. */
const mkt_score_ref mkt_score_default_ref = {312.0, 1000.0, 2000.0, 0.8, 0.1, 0.1};

double mkt_score(const mkt_score_in *in, const mkt_score_ref *ref) {
  double loss = in->loss < 0 ? 0 : (in->loss > 1 ? 1 : in->loss);
  double neff = in->net_mbps * (1.0 - loss);
  if (in->tflops <= 0 || neff <= 0 || in->disk_mbs <= 0) return 0.0;
  /* S = 100 (T/T_ref)^w_t (N_eff/N_ref)^w_n (D/D_ref)^w_d */
  return 100.0 * pow(in->tflops / ref->tflops, ref->w_t) * pow(neff / ref->net_mbps, ref->w_n) *
         pow(in->disk_mbs / ref->disk_mbs, ref->w_d);
}
