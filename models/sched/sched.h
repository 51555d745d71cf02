/* sched.h - spotlab's scheduling core: fault-tolerant placement of jobs on unreliable GPUs.
 *
 * The core is handed events (a GPU joined, left, degraded, sent or missed a heartbeat; a job
 * arrived, progressed, finished or failed; a checkpoint completed; a billing interval ended; a
 * service's load changed; a time tick) and answers with decisions (place a job run on a set of
 * GPUs, stop a run, checkpoint it, replace a member, reserve a standby, scale a service, end a
 * job). It does no I/O, reads no clock and holds no global state: the simulator (the market model,
 * models/market/mkt_place.c) feeds it simulated events and the lab runner will feed it real ones, through this header only.
 *
 * Time is the `t` of each event, in seconds; events must come in non-decreasing time.
 * Decisions go to the sink given in the configuration, synchronously, at the end of
 * sched_handle, once the event has been applied in full: the sink sees a consistent core and may
 * query it (sched_*_query, sched_check_invariants), but must not call sched_handle itself.
 * Pointers inside a decision are valid during the sink call.
 * Randomness (weighted selection by reputation) comes from a private generator seeded by
 * `sched_config.seed`, so one event stream always gives the same decisions.
 *
 * Identifiers are small dense integers chosen by the caller: GPU ids < max_gpus, provider ids <
 * max_providers, node ids < max_nodes, job ids < max_jobs. A job runs as one or more "runs"
 * (a placement of the job on a set of GPUs: a restart, a replica or a speculative copy); each run
 * has an id unique within its job, which events about that run must repeat. Events about a run
 * that has ended already (a late finish, a checkpoint of a run that was stopped) are ignored and
 * counted as stale, never double-counted.
 */
#ifndef MODELS_SCHED_SCHED_H
#define MODELS_SCHED_SCHED_H

#include "kernels/krn_split.h"
#include "sim/errors.h"
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Errors --------------------------------------------------------------------------------- */
typedef enum sched_err {
  SCHED_OK = 0,
  SCHED_ENOMEM = SPOTLAB_ENOMEM,       /* out of memory */
  SCHED_EINVAL = SPOTLAB_EINVAL,       /* invalid argument: bad configuration value, id out of range, bad event */
  SCHED_ESTATE = SPOTLAB_ESCHED_STATE, /* the event contradicts the state (job id reused, GPU joined twice) */
  SCHED_ETIME = SPOTLAB_ESCHED_TIME,   /* an event earlier than the previous one */
} sched_err;
const char *sched_strerror(int err);

/* ---- Policies and models -------------------------------------------------------------------- */
typedef enum sched_policy {
  SCHED_FT_NONE = 0,    /* a failed run restarts from zero */
  SCHED_FT_CHECKPOINT,  /* periodic checkpoints; a failed run restarts from the last one */
  SCHED_FT_STANDBY,     /* N+k: k standbys per run replace failed members at once */
  SCHED_FT_REPLICATE,   /* k copies; the first to finish wins, the others are cancelled */
  SCHED_FT_SPECULATIVE, /* a run slower than expected gets a backup copy; first finish wins */
  SCHED_FT_COUNT
} sched_policy;
/* A policy is a row of the table of fault-tolerance policies (models/sched/sched_ft.h): the values
 * above are the built-in rows; rows registered at run time and combinations ("checkpoint+standby")
 * follow them. The core asks the table what a policy does, never tests its number. */
const char *sched_policy_name(sched_policy p); /* "?" for a number that names no row */
/* A row's name, or a combination written "a+b[+c...]" (any order, each part once, "none" alone):
 * its row number (a combination is added to the table when first named), or -1. */
int sched_policy_parse(const char *name);
/* NULL-terminated names of the rows that are not combinations, built-in ones first, then those
 * registered (sched_ft_register): the one list that scenario keys naming one policy (market, lab)
 * and `spotlab keys` use. */
extern const char *sched_policy_names[];

typedef enum sched_ckpt_rule {
  SCHED_CKPT_FIXED = 0, /* every ckpt_interval_s */
  SCHED_CKPT_YOUNG,     /* sqrt(2 C M) (Young 1974) */
  SCHED_CKPT_DALY,      /* Daly 2006 higher-order form */
} sched_ckpt_rule;
extern const char *const sched_ckpt_rule_names[]; /* "fixed", "young", "daly", NULL */

/* The documented defaults, declared once: sched_config_default and every scenario table that
 * exposes these settings (market, lab) use these, as numbers and as the text of the default. */
#define SCHED_DEFAULT_POLICY SCHED_FT_CHECKPOINT
#define SCHED_DEFAULT_POLICY_TEXT "\"checkpoint\""
#define SCHED_DEFAULT_CKPT_RULE_TEXT "\"young\""
#define SCHED_DEFAULT_CKPT_INTERVAL_S 3600.0
#define SCHED_DEFAULT_CKPT_INTERVAL_TEXT "\"1h\""
#define SCHED_DEFAULT_GPU_MTBF_S (24 * 3600.0)
#define SCHED_DEFAULT_GPU_MTBF_TEXT "\"24h\""
#define SCHED_DEFAULT_STANDBY_K 1
#define SCHED_DEFAULT_STANDBY_K_TEXT "1"
#define SCHED_DEFAULT_REPLICAS 2
#define SCHED_DEFAULT_REPLICAS_TEXT "2"
#define SCHED_DEFAULT_MAX_RESTARTS 100
#define SCHED_DEFAULT_MAX_RESTARTS_TEXT "100"
#define SCHED_MAX_RUNS 4     /* runs of one job at once (replicas and backups included) */
#define SCHED_MAX_STANDBY 64 /* standbys per run */

/* Fault tolerance of one job: its policy and the policy's settings. A job spec may carry its own
 * (the market sets one per job class); without one the configuration's apply. */
typedef struct sched_ft {
  sched_policy policy; /* a row of the policy table (sched_ft.h) */
  sched_ckpt_rule ckpt_rule;
  double ckpt_interval_s; /* FIXED rule; also the fallback before any MTBF is known */
  unsigned standby_k;     /* standby (and its combinations): standbys per run (0..SCHED_MAX_STANDBY) */
  unsigned replicas;      /* replicate (and its combinations): copies per job (1..SCHED_MAX_RUNS, with
                             a backup copy's slot when combined with speculative) */
  unsigned max_restarts;  /* a job interrupted more often than this ends as failed */
} sched_ft;

/* How a run's members share a step: the work split's vocabulary (kernels/krn_split.h, header-only;
 * names: krn_split_names). */
typedef enum sched_split {
  SCHED_SPLIT_EVEN = KRN_SPLIT_EVEN,         /* each member gets 1/n of a step: the slowest sets the pace */
  SCHED_SPLIT_WEIGHTED = KRN_SPLIT_WEIGHTED, /* shares proportional to member speed */
  SCHED_SPLIT_DYNAMIC = KRN_SPLIT_DYNAMIC,   /* members pull fixed-size chunks from a queue */
} sched_split;

typedef enum sched_arq {
  SCHED_NET_TCP = 0, /* plain retransmission as TCP does it: PFTK throughput (Padhye 1998) */
  SCHED_NET_ARQ,     /* ideal selective-repeat ARQ: every loss costs one retransmission */
  SCHED_NET_HARQ_CC, /* hybrid ARQ with chase combining (soft combining of copies) */
} sched_arq;

/* A network link as the models see it. */
typedef struct sched_link {
  double bw_bps; /* raw rate of the path, bit/s */
  double rtt_s;  /* round-trip time, s */
  double loss;   /* probability that one packet transmission is lost, [0, 1) */
} sched_link;

/* Parameters of the transfer model (see sched_net_*). */
typedef struct sched_net_params {
  sched_arq mode;
  double packet_bits;   /* bits per packet (12000 = 1500 bytes) */
  double tcp_rto_s;     /* TCP retransmission timeout T0 in PFTK */
  double tcp_wmax;      /* TCP maximum window, packets */
  double tcp_b;         /* packets acknowledged per ACK in PFTK (2 with delayed ACKs) */
  unsigned harq_max_tx; /* transmissions combined before the receiver flushes and starts over */
} sched_net_params;

#define SCHED_MAX_COLOC 64 /* co-located members a contention table describes */

/* Parameters of the clustering speed model (see sched_cluster_rate). The efficiencies, chunk
 * overhead and so on are plain numbers here; the market fills them from a kernels calibration
 * CSV when the scenario names one (mkt_calibration_load). */
typedef struct sched_cluster_params {
  sched_split split;
  double even_eff;          /* achieved / ideal compute throughput, even split */
  double weighted_eff;      /* same, capacity-weighted split */
  double dynamic_eff;       /* same, dynamic chunking */
  double chunk_overhead_s;  /* cost of fetching one chunk (dynamic) */
  double chunks_per_member; /* chunks per member per step (dynamic) */
  /* Contention between co-located members (GPUs or CPU workers sharing one host: its cores,
   * caches and memory bandwidth). coloc[k-1] = f(k), the speed of a member while k members of its
   * host are busy, as a fraction of its speed alone (f(1) = 1), measured for k = 1..ncoloc (a lab
   * calibration: lab/lab_calib.c, sched_coloc_learn). ncoloc = 0: no contention (f = 1). See
   * sched_coloc_factor. */
  unsigned ncoloc;
  double coloc[SCHED_MAX_COLOC];
} sched_cluster_params;

/* ---- Configuration -------------------------------------------------------------------------- */
typedef struct sched_decision sched_decision;
typedef void (*sched_sink)(void *ctx, const sched_decision *d);
/* Told (with sink_ctx) of each GPU a placement chose, as soon as it is chosen: the decision that
 * names it reaches the sink at the end of the event, and the caller may fetch its own records of
 * that GPU meanwhile. It must not call the core nor change what the sink will see. */
typedef void (*sched_chosen)(void *ctx, uint32_t gpu);

/* GP Node ids are kept in 16 bits per kind of GPU (sched_config.max_kinds). */
#define SCHED_MAX_NODES 65536u
/* Kinds of GPU a core can hold (sched_config.max_kinds): 2^24 - 1. */
#define SCHED_MAX_KINDS 16777215u

typedef struct sched_config {
  /* Id ranges. Memory grows with the largest id used, not with these bounds, so a core may be
   * given the bounds of a whole region and hold only the GPUs that join it. */
  uint32_t max_gpus, max_providers, max_nodes, max_jobs; /* max_nodes <= SCHED_MAX_NODES */
  /* Kinds of GPU the core holds at most: distinct (score, sectors, link, node, region, grade) of
   * the GPUs that joined, kept once per kind; 0 = SCHED_MAX_KINDS (the default). A GPU_JOIN of one
   * kind more is refused (SCHED_EINVAL). */
  uint32_t max_kinds;
  unsigned nregions; /* regions are 0 .. nregions-1 */
  unsigned ngrades;  /* GPU classes 0 (weakest) .. ngrades-1 */
  sched_sink sink;   /* where decisions go (required) */
  void *sink_ctx;
  sched_chosen chosen; /* optional (NULL: none) */
  uint64_t seed;       /* the core's private generator */

  sched_policy policy;
  sched_ckpt_rule ckpt_rule;
  double ckpt_interval_s;     /* FIXED rule; also the fallback before any MTBF is known */
  double gpu_mtbf_s;          /* prior MTBF of one employed GPU for Young/Daly (> 0) */
  unsigned mtbf_min_failures; /* use the observed MTBF once this many failures were seen */
  unsigned standby_k;         /* STANDBY: standbys per run */
  unsigned replicas;          /* REPLICATE: copies per job (2..4) */
  int bill_cancelled;         /* REPLICATE/SPECULATIVE: 1 = cancelled copies are billed */
  double slow_ratio;          /* observed / expected progress rate below this = slow run */
  double degrade_ratio;       /* a GPU reported below this speed factor is degraded */
  double heartbeat_timeout_s; /* 0 = no heartbeat tracking (the caller reports misses) */
  /* 1: checkpoints are a plan, not timers. The core arms no checkpoint timer: it decides each
   * CHECKPOINT run's interval T and cost C once, at placement, and hands them over in the PLACE
   * decision (ckpt_interval, ckpt_cost): the run writes a checkpoint of C seconds (a blocking
   * pause) T seconds after its staging ends and T seconds after each checkpoint completes. The
   * caller plays the plan out when it needs to (a simulator knows the run's progress at any
   * instant) and reports the work saved with SCHED_EV_CKPT_DONE (value = work saved, any number
   * of checkpoints at once) before any event that may stop the run (a GPU lost, a withdrawal).
   * Young/Daly intervals use the MTBF estimate at placement (with timers: at each checkpoint's
   * end). 0 (default): a timer per checkpoint, SCHED_D_CHECKPOINT, then SCHED_EV_CKPT_DONE. */
  int ckpt_analytic;
  unsigned max_restarts; /* a job interrupted more often than this ends as failed */
  unsigned queue_scan;   /* queued jobs tried per capacity change */

  /* selection */
  unsigned sample;       /* candidates drawn per needed GPU (power of d choices) */
  double rep_exponent;   /* weight ~ E^rep_exponent x (score / price) */
  double min_reputation; /* providers below this expected reputation are not selected */
  /* reputation (Beta, Josang & Ismail 2002) */
  double rep_half_life_s;     /* evidence halves every this many seconds */
  double rep_pos_per_hour;    /* positive evidence per hour employed without failure */
  double rep_neg_per_failure; /* negative evidence per disconnect while employed */
  /* staking */
  double stake_min;           /* providers with less stake are not selected */
  double slash_per_failure;   /* slashed per disconnect while employed */
  double slash_per_down_hour; /* slashed per hour a GPU stayed away after leaving while employed
                                 (charged when it comes back) */
  /* fees */
  double platform_fee;           /* share of billed amount to the platform */
  double node_fee;               /* share of billed amount to the GP Node that manages the GPU */
  double delegation_fee;         /* share of a delegating node's fee income paid to its operator */
  const uint8_t *node_delegated; /* max_nodes flags (caller-owned, may be NULL = none): node
                                    delegates its management for delegation_fee */
  /* GP Nodes (shared/seeds, "GP Node": each node does selection and replacement for the Spots it
   * manages). 1: every node keeps its own idle queues, and a job whose spec names a node
   * (spec.node >= 0) takes its members, its replacements and its standbys only from that node's
   * GPUs, and waits while the node has none that fit; spec.node = -1 draws from every node.
   * 0 (default): one set of queues, spec.node ignored. */
  int node_queues;
  /* pay-per-task services */
  double price_per_score_s; /* USD per (compute score x second) of a task */
  double target_util;       /* autoscaling target utilization (0, 1] */
  double cooldown_s;        /* no scale-down sooner than this after the last scaling */

  sched_cluster_params cluster;
  sched_net_params net;
} sched_config;

/* Fills a configuration with the documented defaults (docs/scheduling.md). The caller sets
 * sink, the id ranges and what else it needs. */
void sched_config_default(sched_config *c);

/* ---- Events --------------------------------------------------------------------------------- */
typedef enum sched_ev_type {
  SCHED_EV_GPU_JOIN = 0, /* gpu, u.gpu: a GPU becomes available (or comes back); refused
                            (SCHED_EINVAL) when it is of a kind more than cfg.max_kinds */
  SCHED_EV_GPU_LEAVE,    /* gpu: announced departure */
  SCHED_EV_GPU_MISSED,   /* gpu: the caller's monitor saw its heartbeats stop */
  SCHED_EV_GPU_DEGRADE,  /* gpu, value = speed factor now (1 = as advertised) */
  SCHED_EV_HEARTBEAT,    /* gpu */
  SCHED_EV_TICK,         /* nothing: time passes (heartbeat timeouts, checkpoint timers) */
  SCHED_EV_JOB_ARRIVE,   /* job, u.job */
  SCHED_EV_JOB_PROGRESS, /* job, run, value = work done by the run (work units) */
  SCHED_EV_JOB_FINISH,   /* job, run: the run completed the job's work */
  SCHED_EV_JOB_FAIL,     /* job, run: the run crashed for a reason of its own */
  SCHED_EV_CKPT_DONE,    /* job, run, value = work saved (cfg.ckpt_analytic: the caller's report of
                             the work its played-out plan has saved so far) */
  SCHED_EV_BILLING,      /* nothing: a billing interval ended; employed GPUs are billed */
  SCHED_EV_LOAD,         /* job (a service), value = offered load, requests/s */
  SCHED_EV_TASK_DONE,    /* job (a service), gpu, value = task duration, s: pay-per-task */
  SCHED_EV_JOB_WITHDRAW, /* job: the caller takes the job back (outbid, cancelled): its runs stop
                             (SCHED_R_PREEMPTED) and it ends (SCHED_R_WITHDRAWN, value = work
                             saved); a queued job just ends */
  SCHED_EV_JOB_FORGET,   /* job: an ended job is dropped; its id may arrive again */
  SCHED_EV_GPU_FORGET,   /* gpu: an absent GPU's record is dropped; its id may join again as
                             another GPU (of any provider). Its provider's reputation and stake
                             stay. For callers that recycle ids of GPUs gone for good. */
  SCHED_EV_COUNT
} sched_ev_type;

typedef struct sched_gpu_info {
  uint32_t provider;  /* who owns it (< max_providers) */
  uint32_t node;      /* GP Node that manages it (< max_nodes) */
  uint16_t region;    /* < nregions */
  uint16_t grade;     /* class, < ngrades */
  uint32_t sectors;   /* bit mask of sectors it suits (ML, rendering, ...) */
  double score;       /* unified compute score: work units per second */
  double price_per_h; /* USD per hour employed */
  double stake;       /* provider's stake when it first joins (USD) */
  sched_link link;    /* its public network link */
  uint32_t host;      /* the machine it shares with other GPUs (1, 2, ...): its busy neighbours slow it
                         down by cluster.coloc; 0 = a machine of its own */
} sched_gpu_info;

typedef enum sched_job_kind { SCHED_JOB_BATCH = 0, SCHED_JOB_SERVICE = 1 } sched_job_kind;

typedef struct sched_job_spec {
  sched_job_kind kind;
  uint16_t width;     /* GPUs per run (batch); ignored for services */
  uint16_t min_grade; /* weakest acceptable class */
  int32_t region;     /* required region, or -1 for any */
  uint32_t sectors;   /* sectors the GPUs must suit (all bits), 0 = any */
  double work;        /* work units to do (score x seconds) */
  double deadline;    /* absolute time, s; 0 = none */
  double step_work;   /* work per synchronous step; 0 = no synchronisation */
  double step_bytes;  /* bytes all-reduced per step */
  double input_bytes; /* staged to each member before it starts */
  double ckpt_bytes;  /* written by a checkpoint, read back by a replacement */
  double max_loss;    /* link limits: 0 = no limit */
  double max_rtt_s;
  double min_bw_bps;
  double max_price_per_h; /* 0 = no limit */
  const sched_ft *ft;     /* its fault tolerance (copied at arrival), NULL = the configuration's */
  /* Candidate GPUs for the placement tried at arrival (caller-owned, read during the JOB_ARRIVE
   * event only; NULL = any eligible GPU). A pool whose clearing rule has chosen a host for the
   * job names that host's GPUs here; the members come from these, standbys from anywhere. */
  const uint32_t *cand;
  unsigned ncand;
  /* 1: the job never waits in the core's queue. If it cannot be placed at arrival, or a failure
   * leaves it with no run, it ends at once with reason SCHED_R_RELEASED (value = work saved),
   * and the caller decides what happens next (a bid goes back to its pool's clearing). */
  uint8_t hold;
  /* with cfg.node_queues: the GP Node that takes the job (< max_nodes), or -1 for any node */
  int32_t node;
  /* services */
  double req_per_score_s; /* requests one unit of compute score serves per second */
  uint16_t min_replicas, max_replicas;
} sched_job_spec;

typedef struct sched_event {
  sched_ev_type type;
  double t; /* seconds */
  uint32_t gpu;
  uint32_t job;
  uint32_t run;
  double value;
  union {
    sched_gpu_info gpu;
    sched_job_spec job;
  } u;
} sched_event;

/* ---- Decisions ------------------------------------------------------------------------------ */
typedef enum sched_dec_type {
  SCHED_D_PLACE = 0,  /* job, run, gpus[ngpus]: start the run (value = staging time, s) */
  SCHED_D_STOP,       /* job, run, reason: stop the run, its GPUs are free */
  SCHED_D_CHECKPOINT, /* job, run: write a checkpoint (value = expected duration, s) */
  SCHED_D_REPLACE,    /* job, run, old_gpu -> gpu (value = recovery time, s) */
  SCHED_D_STANDBY,    /* job, run, gpu: reserve gpu as a standby of the run */
  SCHED_D_UNSTANDBY,  /* job, run, gpu: the standby is released */
  SCHED_D_SCALE,      /* job (service), value = replica count; gpus = replicas added */
  SCHED_D_END,        /* job, reason: the job ended (completed, failed, gave up, withdrawn,
                             released; value = work saved for the last two) */
  SCHED_D_COUNT
} sched_dec_type;

typedef enum sched_reason {
  SCHED_R_NONE = 0,
  SCHED_R_COMPLETED,  /* END: the job's work is done */
  SCHED_R_GPU_LOST,   /* STOP: a member left or missed heartbeats */
  SCHED_R_APP_FAILED, /* STOP: the run crashed */
  SCHED_R_CANCELLED,  /* STOP: another copy finished first */
  SCHED_R_GAVE_UP,    /* END: interrupted more than max_restarts times */
  SCHED_R_DEGRADED,   /* REPLACE: a member was degraded */
  SCHED_R_SCALE_DOWN, /* STOP of a service replica */
  SCHED_R_PREEMPTED,  /* STOP: the caller withdrew the job */
  SCHED_R_WITHDRAWN,  /* END: the caller withdrew the job (value = work saved) */
  SCHED_R_RELEASED,   /* END: a `hold` job could not run (value = work saved) */
  SCHED_R_COUNT
} sched_reason;
const char *sched_reason_name(int r);

struct sched_decision {
  sched_dec_type type;
  double t;
  uint32_t job, run;
  uint32_t gpu, old_gpu;
  sched_reason reason;
  double value;
  const uint32_t *gpus; /* PLACE, SCALE: valid during the sink call */
  unsigned ngpus;
  /* PLACE with cfg.ckpt_analytic: the run's checkpoint plan, interval and cost in seconds
   * (0 and 0: it takes no checkpoints) */
  double ckpt_interval, ckpt_cost;
};

/* ---- The core ------------------------------------------------------------------------------- */
typedef struct sched sched;

/* Checks the configuration and builds the core; 0 or a negative sched_err (*out = NULL). */
int sched_create(const sched_config *cfg, sched **out);
/* Sizes the GPU and provider tables for ids below `gpus` and `providers` now (they grow by
 * doubling otherwise): a caller that knows its population avoids the slack. 0 or SCHED_ENOMEM;
 * SCHED_EINVAL beyond the configured bounds. */
int sched_reserve(sched *s, uint32_t gpus, uint32_t providers);
void sched_destroy(sched *s);

/* Handles one event: updates the state, then sends the resulting decisions to the sink.
 * Returns 0, or a negative sched_err: for an invalid event (SCHED_EINVAL, SCHED_ESTATE,
 * SCHED_ETIME) the state is unchanged; after SCHED_ENOMEM the core should be destroyed. */
int sched_handle(sched *s, const sched_event *ev);

/* Reputation (Beta mean, decayed to time t) of provider p, and its stake; NaN and 0 for a
 * provider none of whose GPUs ever joined. */
double sched_provider_reputation(const sched *s, uint32_t provider, double t, double *stake);

/* Earliest time at which the core wants a SCHED_EV_TICK (heartbeat deadline, checkpoint timer),
 * or +infinity. */
double sched_next_wakeup(const sched *s);

/* Checks every invariant (each GPU holds at most one job, member lists agree with GPU states,
 * every job is queued, running or ended exactly once, the ledger balances). Returns 0, or -1 and
 * a description in msg. O(GPUs + jobs): for tests and debug runs. */
int sched_check_invariants(const sched *s, char *msg, size_t len);

/* ---- Queries -------------------------------------------------------------------------------- */
typedef enum sched_gpu_state {
  SCHED_GPU_ABSENT = 0, /* never joined, or left */
  SCHED_GPU_IDLE,       /* available, in the candidate queues */
  SCHED_GPU_BUSY,       /* member of a run */
  SCHED_GPU_STANDBY,    /* reserved as a standby of a run */
} sched_gpu_state;

typedef struct sched_gpu_status {
  sched_gpu_state state;
  uint32_t job, run; /* when BUSY or STANDBY */
  double speed;      /* reported speed factor */
  double reputation; /* its provider's E = (r+1)/(r+s+2) now */
  double stake;      /* its provider's stake now */
} sched_gpu_status;
int sched_gpu_query(const sched *s, uint32_t gpu, double t, sched_gpu_status *out);

typedef enum sched_job_state {
  SCHED_JOB_UNKNOWN = 0,
  SCHED_JOB_QUEUED,
  SCHED_JOB_RUNNING,
  SCHED_JOB_ENDED
} sched_job_state;

typedef struct sched_job_status {
  sched_job_state state;
  sched_reason outcome;      /* when ENDED */
  double submit, start, end; /* start: first placement; end: when ENDED */
  unsigned runs_active;      /* runs now placed */
  unsigned restarts;         /* interruptions that sent the job back to the queue */
  unsigned replacements;     /* members replaced in place */
  double saved_work;         /* durable progress (checkpoint), work units */
  double gpu_seconds;        /* GPU time employed on it (members and standbys) */
  double cost;               /* USD billed for it */
  double expected_rate;      /* of its first active run, work units / s; 0 if none */
  unsigned replicas;         /* services: replicas now */
} sched_job_status;
int sched_job_query(const sched *s, uint32_t job, sched_job_status *out);

/* Run members (the first `cap`): returns how many there are, or a negative sched_err. */
int sched_run_members(const sched *s, uint32_t job, uint32_t run, uint32_t *gpus, unsigned cap);

typedef struct sched_ledger {
  double billed;          /* paid by clients */
  double provider_income; /* to GPU owners */
  double node_income;     /* to GP Node license holders (fees, after delegation fees) */
  double delegate_income; /* to operators managing delegated nodes */
  double platform_income;
  double slashed;          /* taken from stakes */
  double cancelled_billed; /* part of `billed` for cancelled copies */
} sched_ledger;
void sched_ledger_get(const sched *s, sched_ledger *out);
/* Fee income of one GP Node's license holder, or a negative value for a bad id. */
double sched_node_income(const sched *s, uint32_t node);
/* Hints (they change nothing): the caller will soon send an event about this job, or this GPU,
 * or a tick (the records of the job the earliest timer is about). */
void sched_prefetch_job(const sched *s, uint32_t job);
void sched_prefetch_gpu(const sched *s, uint32_t gpu);
void sched_prefetch_due(const sched *s);
/* With cfg.node_queues: the idle GPUs of a GP Node at grade min_grade or above (every region),
 * what a dispatcher routing jobs to nodes looks at; 0 for a bad id or without node queues. */
uint64_t sched_node_idle(const sched *s, uint32_t node, unsigned min_grade);

typedef struct sched_counters {
  uint64_t events, decisions, stale_events;
  uint64_t gpu_failures; /* employed GPUs lost (left, missed heartbeats) */
  uint64_t placements, stops, checkpoints, replacements, scale_events;
  uint64_t jobs_arrived, jobs_completed, jobs_failed;
  uint64_t jobs_released; /* ended as withdrawn or released (handed back to the caller) */
  uint64_t speculations;  /* backup copies launched */
} sched_counters;
void sched_counters_get(const sched *s, sched_counters *out);

/* ---- Pure models (no state; tested with known answers) -------------------------------------- */

/* Optimal checkpoint interval for checkpoint cost C and mean time between failures M (s).
 * Young 1974: sqrt(2 C M). Daly 2006: see sched_model.c. */
double sched_young_interval(double C, double M);
double sched_daly_interval(double C, double M);

/* Beta reputation expectation E = (r + 1) / (r + s + 2) (Josang & Ismail 2002). */
double sched_beta_expect(double r, double s);

/* Expected transmissions per delivered packet on a link with packet loss p. */
double sched_net_expected_tx(const sched_net_params *np, double p);
/* Goodput of a link under the model, bit/s. */
double sched_net_goodput(const sched_net_params *np, const sched_link *l);
/* Time to move `bytes` over the link: one-way latency + bytes*8 / goodput, s. */
double sched_net_transfer_time(const sched_net_params *np, const sched_link *l, double bytes);

/* Work rate (work units / s) of a run whose members have speeds `speed[i]` (work units / s)
 * and links `links[i]`, for a job of step_work and step_bytes. */
double sched_cluster_rate(const sched_cluster_params *cp, const sched_net_params *np, const double *speed,
                          const sched_link *links, unsigned n, double step_work, double step_bytes);
/* The same rate, with the two parts of one step (s): computing (*t_compute) and the ring all-reduce
 * of step_bytes (*t_comm); t_comm / (t_compute + t_comm) is the share of the run's computing time
 * spent communicating (0 for one member, no bytes or no synchronous step: step_work <= 0). Either
 * pointer may be NULL. */
double sched_cluster_step(const sched_cluster_params *cp, const sched_net_params *np, const double *speed,
                          const sched_link *links, unsigned n, double step_work, double step_bytes, double *t_compute,
                          double *t_comm);
/* The ring all-reduce of step_bytes over n members' links, s: 2 (n-1)/n x 8 bytes / smallest goodput
 * + 2 (n-1) x largest one-way latency (Patarasuk & Yuan 2009); 0 for n <= 1 or no bytes, INFINITY
 * when a link passes nothing. It does not depend on the members' speeds. */
double sched_allreduce_time(const sched_net_params *np, const sched_link *links, unsigned n, double step_bytes);

/* Contention: f(k), the speed of one of k busy co-located members relative to its speed alone.
 *   1 <= k <= ncoloc:  linear interpolation of the measured coloc[] (f(1) = coloc[0]);
 *   k > ncoloc:        f(ncoloc) x ncoloc / k (ASSUMPTION: beyond the measured range the host is
 *                      saturated and shares itself equally, the processor-sharing discipline of
 *                      Kleinrock 1967, "Time-shared systems: a theoretical analysis", JACM 14(2));
 *   k < 1 or ncoloc = 0: 1.
 * ASSUMPTION: the slow-down depends on how many co-located members are busy, not on what they run. */
double sched_coloc_factor(const sched_cluster_params *cp, double k);

/* Learns the contention table from measurements: sample i is a member's rate `together[i]` while
 * `k[i]` members of its host were busy, and its rate `alone[i]` measured alone. For each k in
 * 1..kmax, f(k) = sum together / sum alone over the samples at that k (the rate-weighted mean of
 * the ratios); f(1) = 1 when no sample has k = 1; a k without samples is interpolated between its
 * neighbours (or extrapolated as sched_coloc_factor does). Fills cp->coloc[0..kmax-1] and
 * cp->ncoloc = kmax. 0, or SCHED_EINVAL (kmax out of 1..SCHED_MAX_COLOC, a rate not > 0, a k
 * outside 1..kmax). */
int sched_coloc_learn(sched_cluster_params *cp, const double *alone, const double *together, const unsigned *k,
                      size_t n, unsigned kmax);

/* Replicas wanted for a load (req/s), per-replica capacities (req/s) and target utilization,
 * as the Kubernetes HPA computes it: ceil(load / (mean capacity x target)). */
unsigned sched_autoscale_replicas(double load, double capacity_per_replica, double target_util, unsigned min_r,
                                  unsigned max_r);

#ifdef __cplusplus
}
#endif
#endif
