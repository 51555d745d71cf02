/* mkt.h - the economics of spotlab's GPU marketplace, as pure, engine-free C.
 *
 * Everything here is a function of its arguments (and a gsl_rng where it samples): auctions and
 * clearing rules, the double-entry ledger, churn distributions, the unified compute score, the
 * flexible pool's treasury rule, and loaders for the GPU table and the real traces. The engine
 * model (mkt_model.c, `mkt_class`) is built on top of these; the unit tests in
 * tests/test_market.c check them without the engine.
 *
 * Money is integer micro-USD (int64, "musd"), so every sum is exact and conservation is checked
 * with ==, never with a tolerance.
 */
#ifndef MKT_MKT_H
#define MKT_MKT_H

#include "sim/errors.h"
#include "models/churn/churn.h"
#include "models/sched/sched.h"

#include <stddef.h>
#include <stdint.h>
#include <gsl/gsl_rng.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Errors ---------------------------------------------------------------------------------- */
typedef enum mkt_err {
  MKT_OK = 0,
  MKT_ENOMEM = SPOTLAB_ENOMEM,      /* out of memory */
  MKT_EINVAL = SPOTLAB_EINVAL,      /* invalid argument */
  MKT_EIO = SPOTLAB_EIO,            /* file cannot be read */
  MKT_EFORMAT = SPOTLAB_EFORMAT,    /* file read but malformed (message names file and line) */
  MKT_ENOTFOUND = SPOTLAB_ENOTFOUND /* named row (GPU, fit) not in the file */
} mkt_err;
const char *mkt_strerror(int err);

#define MKT_MUSD 1000000LL /* micro-USD per USD */

/* ---- GPU table (data/gpus.csv) -------------------------------------------------------------- */
typedef struct mkt_gpu {
  char name[16];      /* "rtx4090" */
  int datacenter;     /* 1 for data-centre parts */
  double fp16_tflops; /* dense FP16 tensor, TFLOPS */
  double fp32_tflops; /* FP32, TFLOPS */
  double mem_gb;      /* GB */
  double bw_gbs;      /* memory bandwidth, GB/s */
  double pl_min_w;    /* power limit range, W */
  double pl_max_w;
  double ref_price_usd_h;     /* reference (on-demand) price per GPU-hour, USD */
  double power_w;             /* typical draw under load, W (column power_w; pl_max_w when absent) */
  double interruptible_usd_h; /* interruptible price level, USD/GPU-h (0 when the table has none) */
} mkt_gpu;

/* Reads a gpus.csv ('#' comments, a header line, then rows). On failure returns a negative
 * mkt_err and writes "FILE:LINE: what" to err. *out is malloc'ed (free()). */
int mkt_gpus_load(const char *path, mkt_gpu **out, size_t *n, char *err, size_t errlen);
/* Index of the GPU named `name`, or -1. */
int mkt_gpu_find(const mkt_gpu *g, size_t n, const char *name);

/* ---- Churn distributions -------------------------------------------------------------------- */
/* The distributions and the fits file are models/churn (shared with the fault_tolerance model).
 * The market keeps time in milliseconds, so its draws are at least 1 ms. */
double mkt_dist_sample(const churn_dist *d, gsl_rng *r); /* hours, >= 1 ms */

/* llround(x) for finite x with |x| < 2^63 (half away from zero), inline: the library call was
 * 2% of the market at 1M GPUs. x - trunc(x) is exact below 2^52; above, x is an integer. */
static inline int64_t mkt_lround(double x) {
  int64_t t = (int64_t)x;
  double f = x - (double)t;
  return t + (f >= 0.5) - (f <= -0.5);
}

/* ---- Unified compute score (NGPU) ----------------------------------------------------------- */
/* NGPU "measures the AI inference capability of the nodes and combines it with the measurement of
 * storage and network bandwidth to form a unified computing power value" (shared/seeds, NGPU).
 * NGPU publishes no formula; spotlab uses a weighted geometric mean of normalised measurements,
 *   S = 100 * (T/T_ref)^w_t * (N_eff/N_ref)^w_n * (D/D_ref)^w_d,   N_eff = N * (1 - loss),
 * so that a machine twice as fast in every input scores twice as much, and any input can be a
 * measurement (kernels/ measure T on real hardware) instead of a spec-sheet value. */
typedef struct mkt_score_in {
  double tflops;   /* measured (or spec) AI throughput, TFLOPS */
  double net_mbps; /* network bandwidth, Mbit/s */
  double loss;     /* packet loss ratio, 0..1 */
  double disk_mbs; /* storage bandwidth, MB/s */
} mkt_score_in;
typedef struct mkt_score_ref {
  double tflops, net_mbps, disk_mbs; /* reference machine: scores 100 */
  double w_t, w_n, w_d;              /* weights, summing to 1 */
} mkt_score_ref;
/* Defaults: reference = one A100 (312 TFLOPS FP16, data/gpus.csv), 1000 Mbit/s, 2000 MB/s NVMe;
 * weights 0.8 / 0.1 / 0.1 (spotlab's choice, documented in docs/market.md). */
extern const mkt_score_ref mkt_score_default_ref;
double mkt_score(const mkt_score_in *in, const mkt_score_ref *ref);

/* ---- Auctions and clearing rules ------------------------------------------------------------ */
typedef enum mkt_rule {
  MKT_RULE_GIGASPOT, /* each host runs its most profitable set of bids (price - energy), pay as bid */
  MKT_RULE_PAYASBID, /* highest bids win, each pays its bid */
  MKT_RULE_VICKREY,  /* highest bids win, each pays the highest losing bid (per GPU) */
  MKT_RULE_DOUBLE,   /* uniform-price double auction of bids against host asks */
  MKT_RULE_KNAPSACK  /* set of bids with the highest revenue that packs on the hosts, pay as bid */
} mkt_rule;
/* The clearing rules' names: "gigaspot", "pay_as_bid", "vickrey", "double", "knapsack", then those
 * registered (mkt_rule_register, mkt_rule.h), NULL-terminated. */
#define MKT_RULES_MAX 16
extern const char *mkt_rule_names[MKT_RULES_MAX + 1];

typedef struct mkt_bid {
  int64_t price;    /* musd per GPU-hour offered */
  uint32_t gpus;    /* GPUs wanted (>= 1) */
  uint32_t power_w; /* GigaSPOT: mandatory power limit per GPU, W (counted as consumption) */
} mkt_bid;

/* Uniform-price double auction on unit bids and unit asks (musd per GPU-hour): sort bids down and
 * asks up, trade the k = max{i : bid_i >= ask_i} units, price = (bid_k + ask_k) / 2 rounded down
 * (the k-double auction with k = 1/2; Satterthwaite & Williams 1989). Returns k; *price set when
 * k > 0. bids/asks are not modified. */
size_t mkt_double_auction(const int64_t *bids, size_t nb, const int64_t *asks, size_t na, int64_t *price);

/* 0/1 knapsack: choose bids maximising sum(price * gpus) subject to sum(gpus) <= capacity. Exact
 * dynamic programming when n * capacity <= 4e6, else greedy by price (documented fallback).
 * Returns the total revenue per hour (musd); win[i] set. Ties keep the earlier bids. */
int64_t mkt_knapsack(const mkt_bid *bids, size_t n, uint64_t capacity, int *win);

/* ---- Double-entry ledger -------------------------------------------------------------------- */
/* Accounts are indices into an int64 array; a transfer debits one and credits another, so the
 * sum of all balances is 0 at all times (double entry). Overflow is reported, not wrapped. */
typedef struct mkt_ledger {
  int64_t *bal;
  size_t n;
} mkt_ledger;
int mkt_ledger_init(mkt_ledger *l, size_t naccounts);
void mkt_ledger_fini(mkt_ledger *l);
/* Moves `amount` (may be negative) from account `from` to `to`. MKT_EINVAL on bad index or
 * overflow (nothing changes). */
int mkt_ledger_transfer(mkt_ledger *l, size_t from, size_t to, int64_t amount);
/* Sum of balances (0 in a consistent ledger); *overflow set if the sum overflowed. */
int64_t mkt_ledger_sum(const mkt_ledger *l, int *overflow);
/* Platform fee on an amount, rounded toward zero: amount * fee_ppm / 1e6. The payee gets
 * amount - fee, so fee + net == amount exactly. */
int64_t mkt_fee(int64_t amount, int64_t fee_ppm);
/* price (musd per hour) * duration (ms) / 3.6e6, rounded toward zero, without overflow for any
 * price below 9e12 musd/h and duration below 2^63 ms. */
int64_t mkt_cost(int64_t price_musd_h, int64_t dur_ms);

/* ---- Flexible pool treasury (GPGPU's DeFi pool) --------------------------------------------- */
/* The treasury receives rentals (net of fees) and pays stakers a steady rate per staked available
 * GPU-hour. At each billing interval the rate is adjusted against a reserve target:
 *   target = reserve_h * rate * staked_gpus          (musd: reserve_h hours of payouts)
 *   balance < target       -> rate *= (1 - adjust)  (protect solvency)
 *   balance > 2 * target   -> rate *= (1 + adjust)  (hand surplus back to stakers)
 * clamped to [rate_min, rate_max]. A proportional controller on the reserve ratio, spotlab's
 * reading of GPGPU's "reserve buffer and a rule for adjusting the rate" (no formula published). */
typedef struct mkt_treasury_rule {
  double reserve_h; /* hours of payouts to keep as reserve */
  double adjust;    /* relative change per interval, 0..1 */
  int64_t rate_min; /* musd per GPU-hour */
  int64_t rate_max;
} mkt_treasury_rule;
/* Returns the next rate. */
int64_t mkt_treasury_next_rate(const mkt_treasury_rule *r, int64_t rate, int64_t balance, uint64_t staked_gpus);
/* Pays `owed` from `*balance` as far as it goes: returns the amount paid (<= owed, >= 0) and adds
 * the unpaid rest to *shortfall. */
int64_t mkt_treasury_pay(int64_t *balance, int64_t owed, int64_t *shortfall);

/* ---- Erlang C (tests and docs) -------------------------------------------------------------- */
/* Mean wait in queue of M/M/c with arrival rate lambda and service rate mu per server:
 *   a = lambda/mu, rho = a/c,  C(c,a) = [a^c/c! * 1/(1-rho)] / [sum_{k<c} a^k/k! + a^c/c! * 1/(1-rho)]
 *   Wq = C(c,a) / (c*mu - lambda)        (Kleinrock, Queueing Systems vol. 1, 1975, sec. 3.5)
 * Returns +inf when rho >= 1. */
double mkt_erlang_c_wait(double lambda, double mu, unsigned c);

/* ---- Traces --------------------------------------------------------------------------------- */
typedef struct mkt_trace_job {
  double submit_s; /* from the trace start */
  double dur_s;    /* run time */
  uint32_t gpus;   /* whole GPUs (a share of one GPU, gpu_milli < 1000, takes one) */
  uint8_t cls;     /* 0 training, 1 inference, 2 batch */
} mkt_trace_job;
/* Why a trace row is not replayed: every row is used or counted under one reason. */
typedef enum mkt_trace_reason {
  MKT_TR_CPU_ONLY,      /* num_gpu = 0: a CPU pod */
  MKT_TR_PENDING,       /* never scheduled (pod_phase Pending, or no scheduled/deletion time) */
  MKT_TR_NO_RUN_TIME,   /* deleted at or before it was scheduled: no run time */
  MKT_TR_BAD_TIMES,     /* negative times, scheduled before created, a date out of 1970-2100 */
  MKT_TR_FRACTIONAL,    /* a fractional GPU count (0.5 GPUs): refused, not rounded to 0 */
  MKT_TR_TOO_WIDE,      /* more GPUs than a market job may ask for (MKT_TRACE_MAX_GPUS): refused, not capped */
  MKT_TR_NOT_SUCCEEDED, /* a GenAI request that did not succeed */
  MKT_TR_NREASONS
} mkt_trace_reason;
/* GPUs one job may ask for (job classes' gpus_min and gpus_max, trace rows): a job wider than a
 * host is gang-placed over as many hosts as it needs */
#define MKT_MAX_JOB_GPUS 1024
#define MKT_TRACE_MAX_GPUS MKT_MAX_JOB_GPUS
extern const char *const mkt_trace_reason_names[MKT_TR_NREASONS]; /* "cpu_only", ... */
typedef struct mkt_trace_stats {
  size_t rows, used; /* data rows read, rows replayed */
  size_t dropped[MKT_TR_NREASONS];
} mkt_trace_stats;
/* Alibaba cluster-trace-gpu-v2023 pods (name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,
 * pod_phase,creation_time,deletion_time,scheduled_time): GPU pods with a run time (deletion -
 * scheduled > 0); the others are counted by reason in *st (may be NULL). A file with no usable row
 * (empty, only a header, a directory) is an error. Class: qos LS -> inference, BE -> batch,
 * others -> training. */
int mkt_trace_load_alibaba_pods(const char *path, mkt_trace_job **out, size_t *n, mkt_trace_stats *st, char *err,
                                size_t errlen);
/* Alibaba cluster-trace-v2026-GenAI requests (gmt_create,...,exec_time_seconds,...): SUCCEED
 * requests as 1-GPU inference jobs of exec_time_seconds, submit relative to the first request;
 * others counted in *st. */
int mkt_trace_load_genai(const char *path, mkt_trace_job **out, size_t *n, mkt_trace_stats *st, char *err,
                         size_t errlen);

/* ---- Calibration from kernels/ (files in data/calibration) --------------------------------- */
/* What a calibration file says besides the cluster model: the device it was measured on (its
 * `device` column) and its measured FP32 matrix-multiply throughput (`gemm_cublas_gflops` when
 * present, else spotlab's own `gemm_gflops`; 0 when the file has neither). */
typedef struct mkt_calib_info {
  char device[128];
  double sgemm_gflops;
  unsigned ncoloc; /* entries of a lab calibration's contention table (colocated_speed_factor_K) */
} mkt_calib_info;
/* Reads a kernels calibration file (key,value,unit,device,note, as `spotlab bench kernels`
 * writes it) into the cluster speed model: the even / weighted / dynamic split efficiencies and
 * the dynamic strategy's chunk overhead, and a lab calibration's contention table
 * (`colocated_speed_factor_K`, lab/lab_calib.c) as cp->coloc; `info` (may be NULL) gets the
 * device, its SGEMM rate and the table's size; other keys are for other models and are skipped. 0, or a negative mkt_err with
 * "FILE:LINE: what" in err. */
int mkt_calibration_load(const char *path, sched_cluster_params *cp, mkt_calib_info *info, char *err, size_t len);
/* The catalog model a device name stands for: the longest catalog name equal to a run of
 * consecutive alphanumeric words of the name ("NVIDIA GeForce RTX 4090" -> rtx4090, "NVIDIA H200"
 * -> h200, "Tesla T4" -> t4), case-insensitive; -1 when none does ("AMD EPYC (2 threads)"). */
int mkt_gpu_match(const mkt_gpu *g, size_t n, const char *device);

#ifdef __cplusplus
}
#endif
#endif
