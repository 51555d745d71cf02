/* mkt_model.h - the marketplace as a spotlab model: scenario keys (group `market`), the built
 * context shared read-only by all LPs, and the class `mkt_class` registered with `spotlab run`.
 *
 * Entities (LPs): one market LP per (region, pool) holds that pool's clients (job generators and
 * queues), its clearing rule, its treasury and its scheduling core (models/sched), which places
 * every job on the pool's hosts and recovers it when they fail; one provider LP per provider holds
 * its GPUs, churn, calendar, self-use and income. LP ids: markets first (region * 3 + pool), then
 * providers in region order, repeated once per compared policy (`compare_policies`). Money moves
 * by messages and is booked in integer micro-USD. Internals: mkt_internal.h.
 */
#ifndef MKT_MODEL_H
#define MKT_MODEL_H

#include "models/market/mkt.h"
#include "models/sched/sched.h"
#include "sim/model_class.h"

enum { MKT_POOL_FIXED, MKT_POOL_BIDDING, MKT_POOL_FLEX, MKT_NPOOLS };
enum { MKT_CLS_TRAINING, MKT_CLS_INFERENCE, MKT_CLS_BATCH, MKT_NCLASSES };
extern const char *const mkt_pool_names[];  /* "fixed", "bidding", "flexible", NULL */
extern const char *const mkt_class_names[]; /* "training", "inference", "batch", NULL */

typedef struct mkt_persona_cfg {
  char *name;
  int pool, alt_pool;     /* preferred pool; pool switched to when income disappoints */
  char *fit;              /* trace name in churn_fits ("" = use the up/down keys) */
  int up_dist, down_dist; /* churn_kind */
  double up_p1, up_p2, down_p1, down_p2;
  int busy_days;                    /* calendar: 0 none, 1 daily, 2 weekdays, 3 weekends */
  double busy_start_h, busy_len_h;  /* local time of the owner's recurring offline period */
  double self_per_day, self_mean_h; /* owner self-use sessions (preempt rentals) */
  double min_margin;                /* ask = energy cost * (1 + min_margin) */
  double target_factor;             /* switch when income per available hour < target * ref price */
  int64_t patience;                 /* reviews below target before switching (0 = never) */
  int goal;                         /* mkt_goal: what pool switching judges (threshold: target_factor) */
  double target_cv;                 /* goal stability: switch when the income CV over reviews exceeds it */
  double own_value_usd_h;           /* reservation: the owner's value of the GPU per available hour */
  double own_value_spread;          /* hosts' own value: own_value x U(1 - s, 1 + s) */
  double wear_usd_h;                /* reservation: wear per rented GPU-hour (energy is the host's own) */
  int64_t exit_patience;            /* responses.entry: reviews with negative surplus before leaving */
  int below_energy_cost;            /* 1: offers in the fixed pool even where its price is under the energy */
} mkt_persona_cfg;
/* What a persona's pool switching judges on experienced income (issue "people who respond"). */
enum { MKT_GOAL_THRESHOLD, MKT_GOAL_INCOME, MKT_GOAL_STABILITY, MKT_GOAL_UTILIZATION, MKT_NGOALS };
extern const char *const mkt_goal_names[]; /* "threshold", "income", "stability", "utilization", NULL */

typedef struct mkt_region_cfg {
  char *name;
  double tz_h; /* UTC offset, hours */
  int64_t providers;
  double *persona_share;
  size_t npersona_share;
  char *gpu_mix; /* "rtx4090:0.5, a100:0.5" */
  double *gpus_per_provider;
  size_t ngpp; /* P(1, 2, 4, 8 GPUs) */
  double energy_usd_kwh;
  double energy_spread; /* hosts' energy prices: uniform in region price x [1 - s, 1 + s] */
  double net_mbps, latency_ms, loss, disk_mbs;
  double jobs_per_h;     /* mean synthetic job arrivals per hour (all pools) */
  double peak_h;         /* local hour of the daily demand peak */
  double weekend_factor; /* demand multiplier on Saturday and Sunday */
} mkt_region_cfg;

typedef struct mkt_class_cfg {
  double share;              /* fraction of arrivals */
  double diurnal_amp;        /* daily amplitude of the arrival rate, 0..1 */
  double dur_mean_h, dur_cv; /* run time (gamma; cv 1 = exponential) */
  int64_t gpus_min, gpus_max;
  double mem_min_gb;               /* minimum GPU memory (the minimum GPU requirement) */
  double value_usd_h, value_sigma; /* valuation per GPU-hour: log-normal median, sigma */
  double checkpoint_h;             /* checkpoint policy, fixed rule: interval; 0 = no checkpoints */
  char *policy;                    /* its jobs' policy: a row or a combination (sched_policy_parse) */
  int ckpt_rule;                   /* sched_ckpt_rule */
  int64_t standby_k, replicas, max_restarts;
  double deadline_slack;             /* deadline = submit + slack x ideal run time; 0 = none */
  double step_s;                     /* synchronous step on reference GPUs, s (0 = no all-reduce) */
  double grad_mb, input_mb, ckpt_mb; /* all-reduced per step, staged per member, per checkpoint */
  double *pool_share;
  size_t npool_share; /* [fixed, bidding, flexible] */
  double patience_h;  /* a job not started after this leaves (0 = waits forever) */
  double power_w;     /* GigaSPOT power limit per GPU in bids */
  /* reactions (market.responses switches them on) */
  double elasticity;      /* responses.demand: arrival rate ~ (price seen / price_ref)^-elasticity */
  double price_ref_usd_h; /* the price per reference GPU-hour at which arrivals are jobs_per_h x share */
  double choice_cost, choice_wait, choice_risk; /* responses.pool_choice: logit weights */
  double *strategies;
  size_t nstrategies;                       /* bidding: shares of [truthful, shade, adaptive] */
  double shade_factor;                      /* shade under a rule that is not pay-as-bid: bid = factor x value */
  double adapt_rate, adapt_step, adapt_max; /* adaptive bidders (mkt_adapt_update) */
} mkt_class_cfg;

/* Reactions of clients and providers, each switched on by itself (all off: the market of fixed
 * valuations, pool shares and churn of before, bit for bit). */
typedef struct mkt_resp_cfg {
  int demand;                        /* arrival rates follow the prices clients see (class elasticity) */
  int pool_choice;                   /* clients choose their pool by multinomial logit, and balk */
  int entry;                         /* providers enter and leave by their reservation income */
  int reliability;                   /* stakes, slashing, penalties and reputation make departures announced */
  double memory_jobs;                /* clients' and providers' estimates average over about this many jobs */
  double entry_potential;            /* responses.entry: share of providers that start outside the market */
  double announce_max, announce_usd; /* P(announced) = max x (1 - exp(-at stake / announce_usd)) */
  double reputation_usd;             /* the value a provider puts on its reputation per departure */
} mkt_resp_cfg;

typedef struct mkt_fixed_cfg {
  double fee, price_factor, penalty_h;
} mkt_fixed_cfg;
typedef struct mkt_bidding_cfg {
  double fee;
  int rule;
  double min_bid_usd_h;
} mkt_bidding_cfg;
typedef struct mkt_flex_cfg {
  double fee, price_per_score_h, stake_usd, rate0_usd_h, rate_min_usd_h, rate_max_usd_h, reserve_h, adjust, seed_usd;
} mkt_flex_cfg;

typedef struct mkt_nodes_cfg {
  int64_t count;          /* GP Node licences per region (0 = no GP Nodes) */
  double node_fee;        /* share of every rental to the node that manages the host */
  double delegated_share; /* share of licences whose holders delegate the node */
  double delegation_fee;  /* share of a delegated node's fees paid to its operator */
  int queues;             /* 1: each node selects and replaces from its own hosts */
} mkt_nodes_cfg;

typedef struct mkt_config {
  char *gpus_file, *churn_fits;
  char *reference_gpu;                 /* the GPU whose speed is 1 (work is in its GPU-seconds) */
  char *calibration;                   /* kernels calibration CSVs, comma-separated, "" = none */
  char *compare_policies;              /* "none,standby": one world per policy on common random numbers */
  double heartbeat_s;                  /* an unannounced departure is detected this long after it */
  double slash_usd;                    /* stake slashed per unannounced departure while employed */
  double rep_exponent, min_reputation; /* core selection: weight ~ E^x; floor on E */
  int net;                             /* sched_arq: transfers (staging, checkpoints, all-reduce) */
  mkt_nodes_cfg nodes;
  mkt_resp_cfg responses;
  char *score_tflops; /* measured AI throughput per GPU model, "name:TFLOPS, ..." */
  double billing_s, latency_s, review_s;
  int churn, calendars, self_use;
  int checkpoint_events; /* 1: a timer and a completion event per checkpoint (sched cfg.ckpt_analytic = 0) */
  int64_t population_seed;
  int64_t sample_providers;
  int record_jobs, record_providers;
  int64_t daily_income_providers; /* providers whose income per day goes to the daily_income table */
  char *trace_pods, *trace_genai;
  double trace_speedup;
  mkt_fixed_cfg fixed;
  mkt_bidding_cfg bidding;
  mkt_flex_cfg flexible;
  mkt_class_cfg cls[MKT_NCLASSES];
  mkt_region_cfg *regions;
  size_t nregions;
  mkt_persona_cfg *personas;
  size_t npersonas;
} mkt_config;

extern const sim_param mkt_params[];
extern const sim_model_class mkt_class;

/* What one engine event of the market is, for `spotlab bench market`'s account of the model's
 * overhead: the message kind (1 .. MKT_NKINDS - 1) of a message the market's handlers receive, its
 * name, and which modelled event it is (MKT_EV_*: a payment is a bill) or MKT_EV_NONE when it is bookkeeping (a relay
 * between LPs, a timer, a payment). Job starts are decided inside other handlers and have no
 * event of their own: mkt_run_starts counts them from the results. */
#define MKT_NKINDS 24
/* MKT_EV_OWNER: the owner takes the host back or lets it go (self-use sessions and calendar
 * periods starting or ending): availability changes of the persona model, as churn transitions
 * are (counted apart, since before 2026-12-02 only churn was). */
enum { MKT_EV_NONE, MKT_EV_ARRIVAL, MKT_EV_END, MKT_EV_CHURN, MKT_EV_BILL, MKT_EV_OWNER, MKT_NEV };
unsigned mkt_msg_kind(const void *msg);
/* Runs placed in a run's results (every world, class: first starts and restarts), the modelled
 * job starts that have no event of their own. */
uint64_t mkt_run_starts(const sim_model *m, const sim_results *r);
const char *mkt_msg_kind_name(unsigned kind);
int mkt_msg_kind_event(unsigned kind);

/* Per-provider constants drawn at build time from population_seed (same in every replication). */
typedef struct mkt_pstat {
  uint32_t score_milli; /* compute score of all its GPUs, 1/1000 points */
  uint8_t gpu, persona, region, ngpus;
  uint16_t node;            /* GP Node (within its region) that manages it */
  uint16_t energy_permille; /* its energy price / the region's, x 1000 (energy is per host) */
  uint16_t own_permille;    /* its owner's value of the GPU / the persona's own_value, x 1000 */
} mkt_pstat;

#define MKT_MAX_REGIONS 16
#define MKT_MAX_REGION_PROVIDERS 100000000 /* market.regions.[i].providers */
#define MKT_MAX_NODE_QUEUES 4096           /* GP Nodes with their own queues (nodes.queues) */
#define MKT_MAX_PERSONAS 16
#define MKT_MAX_WORLDS 8 /* policies compare_policies compares */

typedef struct mkt_ctx {
  const mkt_config *cfg;
  mkt_gpu *gpus;
  size_t ngpus;
  churn_dist up[MKT_MAX_PERSONAS], down[MKT_MAX_PERSONAS];
  unsigned nreg, npers;
  uint64_t nmarkets, nprov;
  uint64_t reg_first[MKT_MAX_REGIONS + 1]; /* provider index range per region */
  mkt_pstat *prov;
  int64_t *posted;           /* fixed pool price per GPU model, musd per GPU-hour */
  int64_t *flex_price;       /* flexible pay-per-task price per GPU model, musd per GPU-hour */
  uint32_t *gpu_score_milli; /* score per GPU model (one GPU, region-independent part) */
  uint8_t *gpu_cls_fit;      /* per GPU model: bit k set when class k's jobs fit its memory and power range (the bidding
                           pool's free-host lists, mkt_market.fre) */
  double energy_musd_wh[MKT_MAX_REGIONS]; /* musd per Wh */
  int64_t fee_ppm[MKT_NPOOLS];
  int64_t min_bid;                 /* musd per GPU-hour */
  const struct mkt_rule_ops *rule; /* the bidding pool's clearing rule */
  mkt_treasury_rule trule;
  int64_t rate0;
  mkt_trace_job *trace;
  size_t ntrace;                             /* both traces merged, by submit time */
  unsigned nworlds;                          /* compared policies (1 when none are compared) */
  int world_policy[MKT_MAX_WORLDS];          /* policy of world w, -1 = each class's own */
  sched_ft ft[MKT_MAX_WORLDS][MKT_NCLASSES]; /* fault tolerance per world and class */
  double *speed;                             /* per GPU model: work units per second (reference GPU = 1) */
  uint16_t *grade;                           /* per GPU model: rank by memory (0 = least) */
  int quotes;                                /* pools track utilization and price for providers' quotes */
  double share_tot;                          /* sum of the classes' shares of arrivals */
  double pool_share_tot[MKT_NCLASSES];       /* sum of each class's pool_share */
  double strat_tot[MKT_NCLASSES];            /* sum of each class's strategies */
  int has_adaptive;                          /* some class has adaptive bidders */
  int ref_gpu;                               /* index of market.reference_gpu in gpus */
  struct mkt_bne_table *bne[MKT_NCLASSES];   /* shade strategy under pay-as-bid rules: equilibrium bids */
  size_t trace_rows[1 + MKT_TR_NREASONS];    /* rows replayed, then not replayed by reason */
  uint16_t min_grade[MKT_NCLASSES];          /* weakest grade with enough memory for the class */
  uint16_t ngrades;
  uint64_t models_in[MKT_MAX_REGIONS]; /* bit g: GPU model g is in the region's gpu_mix (g < 64) */
  uint8_t *node_delegated;             /* per node of a region (count entries): delegates its management */
  int64_t fee_node_ppm, fee_deleg_ppm;
  int64_t slash;                /* musd */
  sched_cluster_params cluster; /* cluster speed model (calibrated when a file is named) */
  sched_net_params net;
  size_t nbill;          /* billing intervals in the run */
  double end, close_t;   /* end time; time providers close their books */
  uint64_t daily_stride; /* daily_income table: every daily_stride-th provider, 0 = none */
  /* output definitions (column names depend on the scenario) */
  const char **region_cols, **gpu_cols, **persona_cols;
  sim_series_def *series;
  unsigned nseries;
  sim_metric_def *metrics; /* headline metrics, named after this scenario's personas, regions */
  char **metric_names;
  unsigned nmetrics;
} mkt_ctx;

/* Series indices. */
enum {
  MKT_S_RENTED,
  MKT_S_AVAIL,
  MKT_S_DEMAND,
  MKT_S_PRICE_SUM,
  MKT_S_PRICE_N,
  MKT_S_LEDGER,
  MKT_S_PERSONA,
  MKT_S_POOL,
  MKT_S_JOBS,
  MKT_S_FLEX,
  MKT_S_FEES,
  MKT_S_REGION,
  MKT_S_GPU,
  MKT_S_RPOOL,
  MKT_S_RSTRAT,
  MKT_S_POP,
  MKT_S_MONEY,
  MKT_NSERIES
};
/* Columns of MKT_S_MONEY (one bin): money flows the ledger's balances do not show, for the
 * ledger identity (docs/market.md): the platform's seed outlay, stakes slashed (to the treasuries),
 * staking payouts sent by the treasuries, rental income sent to providers by the pools without a
 * treasury (received, it is provider income; sent but not yet received, income in transit). */
enum { MKT_M_SEED, MKT_M_SLASHED, MKT_M_STAKING_PAID, MKT_M_RENTAL_PAID, MKT_M_N };
/* Columns per pool of MKT_S_RPOOL (one bin): jobs and money by pool, providers' entry and exit,
 * departures by notice. */
enum {
  MKT_RP_SUBMITTED,
  MKT_RP_DONE,
  MKT_RP_VALUE,
  MKT_RP_COST,
  MKT_RP_PCOST,
  MKT_RP_ENTERED,
  MKT_RP_EXITED,
  MKT_RP_ANNOUNCED,
  MKT_RP_UNANNOUNCED,
  MKT_RP_N
};
/* Columns per bidding strategy of MKT_S_RSTRAT (one bin). */
enum { MKT_RS_JOBS, MKT_RS_DONE, MKT_RS_VALUE, MKT_RS_COST, MKT_RS_N };
/* MKT_S_POP: per (persona, pool), providers that entered the market (+1) or left it (-1) in each
 * bin; the cumulative sum is the number in the market. */
/* Columns of the ledger series (one bin): balances that sum to zero. */
enum {
  MKT_A_CLIENTS,
  MKT_A_PROVIDERS,
  MKT_A_PLATFORM,
  MKT_A_TREASURY,
  MKT_A_STAKES,
  MKT_A_TRANSIT,
  MKT_A_NODES,
  MKT_A_OPERATORS,
  MKT_NACCOUNTS
};
/* Columns per persona / pool / region / GPU model in MKT_S_PERSONA, _POOL, _REGION, _GPU (one bin). */
enum { MKT_P_INCOME, MKT_P_AVAIL_MS, MKT_P_RENTED_MS, MKT_P_PROVIDERS, MKT_P_GPUS, MKT_NPCOLS };
/* Columns per class in MKT_S_JOBS (one bin). */
enum {
  MKT_J_SUBMITTED,
  MKT_J_STARTED,
  MKT_J_DONE,
  MKT_J_WAIT_MS,
  MKT_J_TURN_MS,
  MKT_J_INTERRUPTS,
  MKT_J_COST,
  MKT_J_ABANDONED,
  MKT_J_FAILED,
  MKT_J_GPU_MS,
  MKT_J_USEFUL_MS,
  MKT_J_LOST_MS,
  MKT_J_STANDBY_MS,
  MKT_J_CKPT_MS,
  MKT_J_MISSED,
  MKT_J_DONE_COST,
  MKT_J_BALKED,
  MKT_J_SEEN_SUM,
  MKT_J_SEEN_N,
  MKT_J_RUNS,        /* runs placed (first starts and restarts), the modelled job starts */
  MKT_J_QUEUED_END,  /* jobs never started when the run ended */
  MKT_J_RUNNING_END, /* jobs started and not ended when the run ended */
  /* censored sums, kept by signed steps so that no end-of-run pass is needed (T = the run's end):
   * + (T - submit) at submission, then (start - T) at the first start or (leave - T) when a job
   * never started gives up: the sum of the waits of jobs never started, to when they gave up or
   * to T */
  MKT_J_UNSTARTED_WAIT_MS,
  /* + (T - submit) at submission, + (end - T) at completion: sum over submitted jobs of
   * min(completion time, T - submit), the restricted completion time */
  MKT_J_RCOMPLETION_MS,
  MKT_J_COMM_MS, /* members' GPU time in the all-reduce of gradients (sched_cluster_step) */
  MKT_NJCOLS
};
/* Columns of MKT_S_FLEX (one bin per billing interval, summed over regions). */
enum { MKT_F_BALANCE, MKT_F_RATE, MKT_F_SHORTFALL, MKT_NFCOLS };

/* Table records. */
typedef struct mkt_prov_rec {
  uint64_t id;
  char persona[16], pool[16], start_pool[16], region[16], gpu_class[16];
  char policy[32]; /* a combination's name is longer: "checkpoint+standby" */
  int32_t world;   /* index of the compared policy (0 = the baseline) */
  int32_t gpus, switches, interruptions, days;
  double income_usd, balance_usd, available_h, rented_h, self_use_h, down_h, out_h, daily_income_cv;
  int64_t income_musd, balance_musd;
} mkt_prov_rec;

typedef struct mkt_job_rec {
  uint64_t id;
  char cls[16], region[16], pool[16], outcome[16];
  char policy[32];
  int32_t world; /* index of the compared policy (0 = the baseline) */
  int32_t gpus, interruptions, replacements, hosts, deadline_missed;
  int32_t node; /* GP Node that took it (nodes.queues), -1 none */
  double submit_s, start_s, end_s, wait_s, cost_usd;
  double value_usd_h, bid_usd_h, paid_usd_h; /* per GPU-hour: valuation, bid, cost / GPU-hours */
  double gpu_h, work_gpu_h, standby_gpu_h, checkpoint_gpu_h, lost_gpu_h;
  int64_t cost_musd, value_musd_h, bid_musd_h;
  double comm_gpu_h; /* members' GPU time spent synchronising gradients (all-reduce) */
} mkt_job_rec;

/* One record per (pool, provider that joined it): what the pool's core knew of it at the end. */
typedef struct mkt_host_rec {
  uint64_t provider;
  char pool[16];
  char policy[32];
  int32_t world, node, failures;
  double reputation, stake_usd, slashed_usd;
  int64_t stake_musd, slashed_musd;
} mkt_host_rec;

typedef struct mkt_avail_rec {
  uint64_t provider;
  double start_s, end_s;
  char state[16];
} mkt_avail_rec;

/* One record per (recorded provider, whole day of the run): its income that day. Written when the
 * provider closes the day, so a provider's rows are in day order. */
typedef struct mkt_day_rec {
  uint64_t provider;
  int32_t world;              /* index of the compared policy (0 = the baseline) */
  int32_t day;                /* day d is [d, d + 1) x 86400 s of simulated time */
  char persona[16], pool[16]; /* pool: the one it was in at the end of the day */
  double income_usd;
  int64_t income_musd;
} mkt_day_rec;

enum { MKT_T_PROVIDERS, MKT_T_JOBS, MKT_T_AVAIL, MKT_T_HOSTS, MKT_T_DAILY, MKT_NTABLES };

#endif
