/* mkt_model.h - the marketplace as a spotlab model: scenario keys (group `market`), the built
 * context shared read-only by all LPs, and the class `mkt_class` registered with `spotlab run`.
 *
 * Entities (LPs): one market LP per (region, pool) holds that pool's clients (job generators and
 * queues), its clearing rule and its treasury; one provider LP per provider holds its GPUs, churn,
 * calendar, self-use and income. LP ids: markets first (region * 3 + pool), then providers in
 * region order. Money moves by messages and is booked in integer micro-USD.
 */
#ifndef MKT_MODEL_H
#define MKT_MODEL_H

#include "models/market/mkt.h"
#include "sim/model_class.h"

enum { MKT_POOL_FIXED, MKT_POOL_BIDDING, MKT_POOL_FLEX, MKT_NPOOLS };
enum { MKT_CLS_TRAINING, MKT_CLS_INFERENCE, MKT_CLS_BATCH, MKT_NCLASSES };
extern const char *const mkt_pool_names[];  /* "fixed", "bidding", "flexible", NULL */
extern const char *const mkt_class_names[]; /* "training", "inference", "batch", NULL */

typedef struct mkt_persona_cfg {
  char *name;
  int pool, alt_pool;           /* preferred pool; pool switched to when income disappoints */
  char *fit;                    /* trace name in churn_fits ("" = use the up/down keys) */
  int up_dist, down_dist;       /* churn_kind */
  double up_p1, up_p2, down_p1, down_p2;
  int busy_days;                /* calendar: 0 none, 1 daily, 2 weekdays, 3 weekends */
  double busy_start_h, busy_len_h; /* local time of the owner's recurring offline period */
  double self_per_day, self_mean_h; /* owner self-use sessions (preempt rentals) */
  double min_margin;            /* ask = energy cost * (1 + min_margin) */
  double target_factor;         /* switch when income per available hour < target * ref price */
  int64_t patience;             /* reviews below target before switching (0 = never) */
} mkt_persona_cfg;

typedef struct mkt_region_cfg {
  char *name;
  double tz_h;                  /* UTC offset, hours */
  int64_t providers;
  double *persona_share; size_t npersona_share;
  char *gpu_mix;                /* "rtx4090:0.5, a100:0.5" */
  double *gpus_per_provider; size_t ngpp; /* P(1, 2, 4, 8 GPUs) */
  double energy_usd_kwh;
  double net_mbps, latency_ms, loss, disk_mbs;
  double jobs_per_h;            /* mean synthetic job arrivals per hour (all pools) */
  double peak_h;                /* local hour of the daily demand peak */
  double weekend_factor;        /* demand multiplier on Saturday and Sunday */
} mkt_region_cfg;

typedef struct mkt_class_cfg {
  double share;                 /* fraction of arrivals */
  double diurnal_amp;           /* daily amplitude of the arrival rate, 0..1 */
  double dur_mean_h, dur_cv;    /* run time (gamma; cv 1 = exponential) */
  int64_t gpus_min, gpus_max;
  double mem_min_gb;            /* minimum GPU memory (the minimum GPU requirement) */
  double value_usd_h, value_sigma; /* valuation per GPU-hour: log-normal median, sigma */
  double checkpoint_h;          /* progress kept on interruption: multiples of this; 0 = none */
  double *pool_share; size_t npool_share; /* [fixed, bidding, flexible] */
  double patience_h;            /* a job not started after this leaves (0 = waits forever) */
  double power_w;               /* GigaSPOT power limit per GPU in bids */
} mkt_class_cfg;

typedef struct mkt_fixed_cfg { double fee, price_factor, penalty_h; } mkt_fixed_cfg;
typedef struct mkt_bidding_cfg { double fee; int rule; double min_bid_usd_h; } mkt_bidding_cfg;
typedef struct mkt_flex_cfg {
  double fee, price_per_score_h, stake_usd, rate0_usd_h, rate_min_usd_h, rate_max_usd_h, reserve_h,
      adjust, seed_usd;
} mkt_flex_cfg;

typedef struct mkt_config {
  char *gpus_file, *churn_fits;
  char *score_tflops;           /* measured AI throughput per GPU model, "name:TFLOPS, ..." */
  double billing_s, latency_s, review_s;
  int churn, calendars, self_use;
  int64_t population_seed;
  int64_t sample_providers;
  int record_jobs, record_providers;
  char *trace_pods, *trace_genai;
  double trace_speedup;
  mkt_fixed_cfg fixed;
  mkt_bidding_cfg bidding;
  mkt_flex_cfg flexible;
  mkt_class_cfg cls[MKT_NCLASSES];
  mkt_region_cfg *regions; size_t nregions;
  mkt_persona_cfg *personas; size_t npersonas;
} mkt_config;

extern const sim_param mkt_params[];
extern const sim_model_class mkt_class;

/* Per-provider constants drawn at build time from population_seed (same in every replication). */
typedef struct mkt_pstat {
  uint32_t score_milli;         /* compute score of all its GPUs, 1/1000 points */
  uint8_t gpu, persona, region, ngpus;
} mkt_pstat;

#define MKT_MAX_REGIONS 16
#define MKT_MAX_PERSONAS 16

typedef struct mkt_ctx {
  const mkt_config *cfg;
  mkt_gpu *gpus; size_t ngpus;
  churn_dist up[MKT_MAX_PERSONAS], down[MKT_MAX_PERSONAS];
  unsigned nreg, npers;
  uint64_t nmarkets, nprov;
  uint64_t reg_first[MKT_MAX_REGIONS + 1]; /* provider index range per region */
  mkt_pstat *prov;
  int64_t *posted;              /* fixed pool price per GPU model, musd per GPU-hour */
  int64_t *flex_price;          /* flexible pay-per-task price per GPU model, musd per GPU-hour */
  uint32_t *gpu_score_milli;    /* score per GPU model (one GPU, region-independent part) */
  double energy_musd_wh[MKT_MAX_REGIONS]; /* musd per Wh */
  int64_t fee_ppm[MKT_NPOOLS];
  int64_t min_bid;              /* musd per GPU-hour */
  mkt_treasury_rule trule;
  int64_t rate0;
  mkt_trace_job *trace; size_t ntrace; /* both traces merged, by submit time */
  size_t nbill;                 /* billing intervals in the run */
  double end, close_t;          /* end time; time providers close their books */
  /* output definitions (column names depend on the scenario) */
  const char **region_cols, **gpu_cols, **persona_cols;
  sim_series_def *series;
  unsigned nseries;
  sim_metric_def *metrics;      /* headline metrics, named after this scenario's personas, regions */
  char **metric_names;
  unsigned nmetrics;
} mkt_ctx;

/* Series indices. */
enum {
  MKT_S_RENTED, MKT_S_AVAIL, MKT_S_DEMAND, MKT_S_PRICE_SUM, MKT_S_PRICE_N, MKT_S_LEDGER,
  MKT_S_PERSONA, MKT_S_POOL, MKT_S_JOBS, MKT_S_FLEX, MKT_S_FEES, MKT_S_REGION, MKT_S_GPU, MKT_NSERIES
};
/* Columns of the ledger series (one bin): balances that sum to zero. */
enum { MKT_A_CLIENTS, MKT_A_PROVIDERS, MKT_A_PLATFORM, MKT_A_TREASURY, MKT_A_STAKES, MKT_A_TRANSIT, MKT_NACCOUNTS };
/* Columns per persona / pool / region / GPU model in MKT_S_PERSONA, _POOL, _REGION, _GPU (one bin). */
enum { MKT_P_INCOME, MKT_P_AVAIL_MS, MKT_P_RENTED_MS, MKT_P_PROVIDERS, MKT_P_GPUS, MKT_NPCOLS };
/* Columns per class in MKT_S_JOBS (one bin). */
enum { MKT_J_SUBMITTED, MKT_J_STARTED, MKT_J_DONE, MKT_J_WAIT_MS, MKT_J_TURN_MS, MKT_J_INTERRUPTS, MKT_J_COST,
       MKT_J_ABANDONED, MKT_NJCOLS };
/* Columns of MKT_S_FLEX (one bin per billing interval, summed over regions). */
enum { MKT_F_BALANCE, MKT_F_RATE, MKT_F_SHORTFALL, MKT_NFCOLS };

/* Table records. */
typedef struct mkt_prov_rec {
  uint64_t id;
  char persona[16], pool[16], start_pool[16], region[16], gpu_class[16];
  int32_t gpus, switches, interruptions, days;
  double income_usd, balance_usd, available_h, rented_h, self_use_h, down_h, daily_income_cv;
  int64_t income_musd, balance_musd;
} mkt_prov_rec;

typedef struct mkt_job_rec {
  uint64_t id;
  char cls[16], region[16], pool[16], outcome[16];
  int32_t gpus, interruptions;
  double submit_s, start_s, end_s, wait_s, cost_usd;
  int64_t cost_musd;
} mkt_job_rec;

typedef struct mkt_avail_rec {
  uint64_t provider;
  double start_s, end_s;
  char state[16];
} mkt_avail_rec;

enum { MKT_T_PROVIDERS, MKT_T_JOBS, MKT_T_AVAIL, MKT_NTABLES };

#endif
