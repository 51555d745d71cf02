/* sched.c - the scheduling core's state machine: GPUs and their candidate queues, jobs and their
 * runs, the fault-tolerance policies, reputation, staking, billing and autoscaling.
 *
 * Layout. GPUs, providers and nodes are dense arrays indexed by the caller's ids. Idle GPUs sit
 * in one queue per (region, grade) ("per-need queues"), with O(1) removal by swapping. Jobs are
 * a growable array indexed by job id; a job holds up to SCHED__MAX_RUNS runs (restarts reuse
 * slots); queued jobs form a FIFO linked list. Timers (heartbeat deadlines, checkpoints) live in
 * one binary heap with lazy deletion by sequence number. Nothing here reads a clock or does I/O.
 */
#include "models/sched/sched.h"
#include "models/sched/sched_ft.h"

#include "sim/bigmem.h"  /* header-only, no engine: large tables on huge pages */
#include "sim/xoshiro.h" /* header-only: the generator the engine uses */

#include <math.h>
#include <stddef.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SCHED__MAX_RUNS SCHED_MAX_RUNS
#define SCHED__NIL UINT32_MAX
#define SCHED__SCAN_MAX 64           /* candidates examined when sampling found too few (pools above it) */
#define SCHED__MAX_QUEUES (1u << 20) /* idle queues (nodes x regions x grades) a core may keep */

/* ---- Names ---------------------------------------------------------------------------------- */
const char *sched_strerror(int err) { return spotlab_strerror(err); } /* sim/errors.h */

const char *const sched_ckpt_rule_names[] = {"fixed", "young", "daly", NULL};
/* sched_policy_names, sched_policy_name and sched_policy_parse are the policy table's (sched_ft.c) */
const char *sched_reason_name(int r) {
  static const char *const n[SCHED_R_COUNT] = {"none",      "completed", "gpu_lost", "app_failed",
                                               "cancelled", "gave_up",   "degraded", "scale_down",
                                               "preempted", "withdrawn", "released"};
  _Static_assert(sizeof n / sizeof *n == SCHED_R_COUNT, "one name per reason");
  return r >= 0 && r < SCHED_R_COUNT ? n[r] : "?";
}

void sched_config_default(sched_config *c) {
  memset(c, 0, sizeof *c);
  c->nregions = 1;
  c->ngrades = 1;
  c->seed = 1;
  c->policy = SCHED_DEFAULT_POLICY;
  c->ckpt_rule = SCHED_CKPT_YOUNG;
  c->ckpt_interval_s = SCHED_DEFAULT_CKPT_INTERVAL_S;
  c->gpu_mtbf_s = SCHED_DEFAULT_GPU_MTBF_S;
  c->mtbf_min_failures = 10;
  c->standby_k = SCHED_DEFAULT_STANDBY_K;
  c->replicas = SCHED_DEFAULT_REPLICAS;
  c->bill_cancelled = 1;
  c->slow_ratio = 0.5;
  c->degrade_ratio = 0.5;
  c->heartbeat_timeout_s = 0;
  c->max_restarts = SCHED_DEFAULT_MAX_RESTARTS;
  c->queue_scan = 16;
  c->sample = 8;
  c->rep_exponent = 2.0;
  c->min_reputation = 0.0;
  c->rep_half_life_s = 7 * 86400.0;
  c->rep_pos_per_hour = 1.0;
  c->rep_neg_per_failure = 4.0;
  c->stake_min = 0;
  c->slash_per_failure = 0;
  c->slash_per_down_hour = 0;
  c->platform_fee = 0.025; /* Clore.ai spot platform fee (shared/data/README.md) */
  c->node_fee = 0.05;
  c->delegation_fee = 0.2;
  c->price_per_score_s = 1e-4;
  c->target_util = 0.7;
  c->cooldown_s = 300;
  c->cluster.split = SCHED_SPLIT_WEIGHTED;
  c->cluster.even_eff = 1.0;
  c->cluster.weighted_eff = 1.0;
  c->cluster.dynamic_eff = 1.0;
  c->cluster.chunk_overhead_s = 0.01;
  c->cluster.chunks_per_member = 4;
  c->net.mode = SCHED_NET_TCP;
  c->net.packet_bits = 12000;
  c->net.tcp_rto_s = 1.0; /* RFC 6298 minimum RTO */
  c->net.tcp_wmax = 64;
  c->net.tcp_b = 2;
  c->net.harq_max_tx = 4;
}

/* ---- State ---------------------------------------------------------------------------------- */
/* A GPU as the core keeps it: what placing, employing, releasing and losing it read (its state,
 * job and run slot, idle queue position, since when it is employed, its provider and price) in half
 * a cache line, with the fields of its sched_gpu_info that GPUs of one kind share (score, sectors,
 * link, node, region, grade) interned in s->kinds (sched__itab_id; a market pool's GPUs come in a
 * kind per GPU model, whose table stays in cache), and apart (sched__gcold) what only periodic
 * billing, heartbeats, host contention and speed reports write. A selection reads half a line per
 * candidate and writes none (a GPU drawn twice is found in sched.seen, not by a stamp in the
 * record); the table is 64-byte aligned (sched__gpus_resize), so no record straddles two lines.
 * 32 bytes a GPU (64 before 2026-12-06: 32 bytes less a core GPU id, of which a million-GPU market
 * holds 1.2 per GPU by day 30), 56 where something writes the cold part (sched__cold_w). */
typedef struct sched__gpu {
  double since;               /* employed: since when; absent after leaving employed: when it left */
  double price_per_h;         /* sched_gpu_info's */
  uint32_t job;               /* BUSY / STANDBY: its job, else SCHED__NIL */
  uint32_t pos;               /* index in its idle queue */
  uint32_t provider;          /* sched_gpu_info's */
  uint32_t prof : 24;         /* the rest of its sched_gpu_info: its kind, sched.kinds (sched__itab_id); 0 before
                         it first joined (sched__known) */
  uint32_t state : 3;         /* sched_gpu_state */
  uint32_t rslot : 2;         /* BUSY / STANDBY: the slot of its run in the job's runs[] */
  uint32_t lost_employed : 1; /* left while employed: down time is slashed when it returns */
  uint32_t billed : 1;        /* billed since it was employed: up to sched__gcold.billed_until */
  uint32_t slowed : 1;        /* it reported a speed factor other than 1: sched__gcold.speed */
} sched__gpu;
_Static_assert(sizeof(sched__gpu) == 32, "a core GPU record is half a cache line");
_Static_assert(SCHED_MAX_RUNS <= 4, "sched__gpu.rslot holds a run slot in 2 bits");
_Static_assert(SCHED_GPU_STANDBY < 8, "sched__gpu.state holds a state in 3 bits");
_Static_assert(SCHED_MAX_KINDS == (1u << 24) - 1, "sched__gpu.prof holds a kind in 24 bits, 0 for none");
/* What the GPUs of one kind share: the fields of sched_gpu_info that place and weigh a GPU other
 * than its provider, price and host (the link as an index in sched.links). A market pool's GPUs
 * come in one kind per GPU model (and GP Node); at most cfg.max_kinds per core. */
typedef struct sched__prof {
  double score;
  uint32_t sectors, link;
  uint16_t node, region, grade;
  uint16_t zero; /* 0: no padding, the kinds' table compares and hashes records as bytes */
} sched__prof;
_Static_assert(sizeof(sched__prof) == 24 && sizeof(sched_link) == 24, "interned records without padding");

/* A table of distinct records of `size` bytes (a multiple of 8, without padding: compared and hashed
 * as bytes), each known by its index, given in the order they came, and found through an
 * open-addressing index (ixcap slots, a power of 2, SCHED__NIL = free). Records below `first` are
 * not indexed. The GPUs' links and kinds keep one each (sched.links, sched.kinds). */
typedef struct sched__itab {
  void *rec;
  uint32_t size, n, cap, first;
  uint32_t *ix, ixcap;
} sched__itab;
typedef struct sched__gcold {
  double billed_until; /* while employed and billed (sched__gpu.billed); else it is billed from since */
  double speed;        /* reported speed factor, while sched__gpu.slowed (1 otherwise) */
  uint32_t hb_seq;     /* heartbeat timers carry it: a stale one does not match */
  uint32_t host;       /* sched_gpu_info's: co-located GPUs share it, 0 = alone */
} sched__gcold;

typedef struct sched__provider {
  double r, s, t;  /* Beta evidence, decayed to time t; t < 0: never joined */
} sched__provider; /* its stake is in sched.stake, where it has one */

typedef struct sched__run {
  uint32_t id;
  uint8_t active, in_ckpt, slow, backup;
  /* Its members (capacity: width, batch, or max_replicas, service), then its standbys (capacity
   * standby_k), plus one: in the record when that is at most four GPUs (inl 1, the standbys from
   * inl_sb; most runs, whose single member a finish or a checkpoint reads without a miss more, nor
   * a malloc per run), else in a block of their own (sched__run_room). SCHED__MEMB and SCHED__SBY
   * name them. */
  union {
    struct {
      uint32_t *members, *standby;
    } p;
    uint32_t inl[4];
  } u;
  unsigned n, nsb;
  uint32_t ckpt_seq;
  uint8_t inl, inl_sb;
  double start, rate;       /* placement time, expected work rate */
  double last_t, last_work; /* last progress report */
  double billed;            /* USD billed for this run */
  double ckpt_c;            /* time to write a checkpoint over its slowest link, -1 = not known */
} sched__run;
#define SCHED__RUN_INL 4u
#define SCHED__MEMB(r) ((r)->inl ? (r)->u.inl : (r)->u.p.members)
#define SCHED__SBY(r) ((r)->inl ? (r)->u.inl + (r)->inl_sb : (r)->u.p.standby)

/* What every event about a job reads comes first (state, its run slots), so that one record's
 * first two cache lines serve it: the single run slot of most policies is kept in the record.
 * Of its spec, the job keeps what varies from job to job (kind, hold, width, node, work, step work,
 * price limit); the rest, which its class shares (grade, region, sectors, link limits, bytes moved,
 * service sizing) and its fault tolerance, is interned once per distinct value in s->specs
 * (sched__spec_intern): 144 bytes of spec and, since 2026-12-04, 32 of fault tolerance a job less,
 * in a million-GPU market whose running jobs the core holds. */
typedef struct sched__job {
  uint8_t state; /* sched_job_state */
  uint8_t outcome;
  uint8_t inq, speculated;
  uint8_t nruns; /* 1, 2 (speculative) or the replicas (replicate), <= SCHED__MAX_RUNS */
  uint8_t kind;  /* sched_job_kind */
  uint8_t hold;  /* spec.hold */
  uint32_t next_run;
  uint32_t cls;     /* the shared part of its spec: s->specs[cls] (SCHED__CLS); here, where it fills a hole */
  sched__run *runs; /* nruns slots from the first placement: &run0 when nruns is 1, else
                             allocated (sched__runs_alloc, sched__runs_free) */
  sched__run run0;
  uint32_t qprev, qnext;
  unsigned restarts, replacements;
  uint16_t width;                          /* spec.width */
  int32_t node;                            /* spec.node */
  double work, step_work, max_price_per_h; /* spec's */
  double submit, start, end, saved_work, gpu_seconds, cost;
  double load, last_scale_t;
} sched__job;
_Static_assert(sizeof(sched__job) == 224,
               "a core job record has no hole but the byte after hold and the two after width");

/* A job's n run slots (zeroed), the first in its record when n is 1. 0 or SCHED_ENOMEM. */
static int sched__runs_alloc(sched__job *j, unsigned n) {
  j->nruns = (uint8_t)n;
  if (n <= 1) {
    memset(&j->run0, 0, sizeof j->run0);
    j->runs = &j->run0;
    return 0;
  }
  j->runs = calloc(n, sizeof *j->runs);
  return j->runs ? 0 : SCHED_ENOMEM;
}
/* Room for run r's nm members and nsb standbys (and one more), once per run slot: in the record
 * when they fit, else a block. 0 or SCHED_ENOMEM. */
static int sched__run_room(sched__run *r, unsigned nm, unsigned nsb) {
  if (r->inl || r->u.p.members) return 0;
  if (nm + nsb + 1 <= SCHED__RUN_INL) {
    r->inl = 1;
    r->inl_sb = (uint8_t)nm;
    return 0;
  }
  uint32_t *b = malloc((nm + nsb + 1) * sizeof *b);
  if (!b) return SCHED_ENOMEM;
  r->u.p.members = b; /* one block: the members, then the standbys (freed with the members) */
  r->u.p.standby = b + nm;
  return 0;
}
static void sched__runs_free(sched__job *j) {
  if (!j->runs) return;
  for (unsigned k = 0; k < j->nruns; k++)
    if (!j->runs[k].inl) free(j->runs[k].u.p.members); /* the standbys share its block */
  if (j->runs != &j->run0) free(j->runs);
  j->runs = NULL;
}

typedef struct sched__timer {
  double t;
  uint32_t a, b, seq;
  uint8_t kind; /* SCHED__T_* */
} sched__timer;
enum { SCHED__T_HB = 1, SCHED__T_CKPT = 2 };

typedef struct sched__vec {
  uint32_t *v;
  uint32_t n, cap;
} sched__vec;
/* An idle queue's entry: the GPU and its provider (fixed while it is in the pool), so that a
 * selection's fetch goes from the entry to the GPU's and the provider's records at once, not from
 * the entry to the GPU's record and only then to its provider's. */
typedef struct sched__idl {
  uint32_t id, provider;
} sched__idl;
typedef struct sched__ivec {
  sched__idl *v;
  uint32_t n, cap;
} sched__ivec;

typedef struct sched__pending {
  sched_decision d;
  size_t off; /* of its GPU list in `pool` */
} sched__pending;

struct sched {
  sched_config cfg;
  sched__pending *pend; /* decisions of the event being handled, delivered at its end */
  size_t npend, cappend;
  uint32_t *pool; /* their GPU lists */
  size_t npool, cappool;
  int oom;
  double now;
  uint64_t rng[4];
  sched__gpu *gpus; /* gpu_cap entries: ids below the largest one seen, 64-byte aligned in gpus_block */
  void *gpus_block;
  sched__gcold *gcold; /* gpu_cap entries beside gpus from the first write (sched__cold_w), NULL before */
  uint32_t gpu_cap;
  sched__provider *prov; /* prov_cap entries */
  uint32_t prov_cap;
  /* Providers' stakes (USD), as far as the last provider that joined with one: a market's pools
   * where nobody stakes keep none (8 bytes less per provider record, of which a million-GPU market
   * holds 1.4 per GPU). sched__stake reads them (0 past nstake). */
  double *stake;
  uint32_t nstake, capstake;
  double *node_income;
  sched__job *jobs;
  uint32_t njobs_cap; /* allocated job slots */
  /* the shared parts of job specs, each distinct one once (sched__spec_intern): a spec with the
   * per-job fields zeroed; spec_hash: open addressing over them (spec_hcap slots, a power of 2) */
  struct sched__cls *specs;
  uint32_t nspecs, capspecs, *spec_hash, spec_hcap;
  /* the candidates of the arrival being handled (spec.cand), for that job only */
  uint32_t cand_job;
  const uint32_t *cand;
  unsigned ncand;
  sched__ivec *buckets; /* idle queues: (node with node_queues,) region, grade */
  uint64_t idle_total;
  uint32_t qhead, qtail; /* queued jobs */
  sched__timer *heap;
  size_t nheap, capheap;
  sched__vec deficit;        /* jobs whose runs lack standbys */
  uint32_t *seen;            /* a selection's GPUs weighed or dropped (sched__seen_*) */
  uint32_t seen_cap, seen_n; /* slots allocated, in use */
  double obs_up_s;           /* employed GPU time observed, for the MTBF estimate */
  uint64_t obs_failures;
  uint32_t *scratch; /* selection output, scratch_cap */
  double *kscratch;  /* selection keys, scratch_cap */
  size_t scratch_cap;
  double *sp_scratch; /* speeds for rate estimates, rate_cap */
  size_t rate_cap;
  uint32_t *bsel; /* selection: eligible buckets, and their cumulative sizes */
  uint64_t *bcum;
  sched_link *ln_scratch;
  sched__itab links;  /* distinct GPU links (sched_link) */
  sched__itab kinds;  /* distinct GPU kinds (sched__prof; sched__gpu.prof), [0] none (sched__known) */
  uint32_t max_kinds; /* cfg.max_kinds, SCHED_MAX_KINDS for 0 */
  sched_ledger ledger;
  sched_counters cnt;
  uint64_t arrived, ended; /* jobs known now (forgotten ones no longer count) */
  uint64_t forgotten;      /* ended jobs dropped by JOB_FORGET */
};

/* ---- Random numbers: xoshiro256**, seeded by splitmix64 (sim/xoshiro.h) ---------------------- */
static uint64_t sched__next(sched *s) { return sim_xoshiro_next(s->rng); }
static double sched__u01(sched *s) { return ((sched__next(s) >> 11) + 0.5) * 0x1.0p-53; }
static uint64_t sched__below(sched *s, uint64_t k) { return k ? sched__next(s) % k : 0; }

/* ---- Small helpers -------------------------------------------------------------------------- */
/* GPU g joined at least once (its info is valid). */
static inline int sched__known(const sched__gpu *g) { return g->prof != 0; }
/* The kind of GPU g (its interned sched_gpu_info fields). */
static inline const sched__prof *sched__pf(const sched *s, const sched__gpu *g) {
  return (const sched__prof *)s->kinds.rec + g->prof;
}
/* The link of kind f. */
static inline const sched_link *sched__lnk(const sched *s, const sched__prof *f) {
  return (const sched_link *)s->links.rec + f->link;
}
/* Its reported speed factor: 1 unless it reported another (the cold table holds that one). */
static inline double sched__speed(const sched *s, const sched__gpu *g) {
  return g->slowed ? s->gcold[g - s->gpus].speed : 1.0;
}
/* Its expected work units per second: advertised score x reported speed. */
static inline double sched__power(const sched *s, const sched__gpu *g) {
  return sched__pf(s, g)->score * sched__speed(s, g);
}
/* A full array of *cap elements of `size` bytes, grown: twice the room (16 at first); NULL, with
 * the array and *cap as they were, when that cannot be had. */
static void *sched__grow(void *v, uint32_t *cap, size_t size) {
  uint32_t nc = *cap ? *cap * 2 : 16;
  void *p = nc > *cap ? realloc(v, (size_t)nc * size) : NULL;
  if (p) *cap = nc;
  return p;
}
static int sched__vec_push(sched__vec *v, uint32_t x) {
  if (v->n == v->cap) {
    uint32_t *p = sched__grow(v->v, &v->cap, sizeof *p);
    if (!p) return SCHED_ENOMEM;
    v->v = p;
  }
  v->v[v->n++] = x;
  return 0;
}

/* ---- Job specs: the part a class shares, interned ----------------------------------------- */
/* A class: the shared part of a spec (its per-job fields and pointers zero) and the fault
 * tolerance its jobs run under (the spec's *ft, or the core's defaults). */
typedef struct sched__cls {
  sched_job_spec spec;
  sched_ft ft;
} sched__cls;
#define SCHED__CLS(s, j) (&(s)->specs[(j)->cls].spec)
#define SCHED__FT(s, j) (&(s)->specs[(j)->cls].ft)
/* The spec's fields a job keeps as its own (besides kind), under the same names, and those its
 * class shares, interned (the rest, deadline, ft and cand, are not kept in either) */
/* clang-format off */
#define SCHED__JOB_SHARED(X) \
  X(min_grade) X(region) X(sectors) X(step_bytes) X(input_bytes) X(ckpt_bytes) X(max_loss) X(max_rtt_s) \
  X(min_bw_bps) X(req_per_score_s) X(min_replicas) X(max_replicas)
#define SCHED__JOB_OWN(X) X(hold) X(width) X(node) X(work) X(step_work) X(max_price_per_h)
/* clang-format on */

/* FNV-1a's step over its 8-byte words, each folded down (the index takes the low bits); a job's
 * class is its entry's place in s->specs, which the hash does not decide. */
static uint64_t sched__spec_hash(const sched__cls *k) {
  const unsigned char *b = (const unsigned char *)k;
  uint64_t h = 0xcbf29ce484222325ull, w;
  size_t i = 0;
  for (; i + 8 <= sizeof *k; i += 8) {
    memcpy(&w, b + i, 8);
    h = (h ^ w) * 0x100000001b3ull;
    h ^= h >> 29;
  }
  for (; i < sizeof *k; i++) h = (h ^ b[i]) * 0x100000001b3ull;
  return h ^ (h >> 32);
}

/* Files entry e of s->specs in the hash index (which has a free slot). */
static void sched__spec_put(sched *s, uint32_t e) {
  uint32_t i = (uint32_t)sched__spec_hash(&s->specs[e]) & (s->spec_hcap - 1);
  while (s->spec_hash[i]) i = (i + 1) & (s->spec_hcap - 1);
  s->spec_hash[i] = e + 1;
}

/* The index in s->specs of sp's shared part and fault tolerance ft (added when new). 0 or
 * SCHED_ENOMEM. */
static int sched__spec_intern(sched *s, const sched_job_spec *sp, const sched_ft *ft, uint32_t *out) {
  sched__cls k;
  memset(&k, 0, sizeof k); /* padding too: entries are compared bytewise */
#define SCHED__TO_KEY(f) k.spec.f = sp->f;
  SCHED__JOB_SHARED(SCHED__TO_KEY)
#undef SCHED__TO_KEY
  k.ft.policy = ft->policy; /* field by field: its padding stays zero */
  k.ft.ckpt_rule = ft->ckpt_rule;
  k.ft.ckpt_interval_s = ft->ckpt_interval_s;
  k.ft.standby_k = ft->standby_k;
  k.ft.replicas = ft->replicas;
  k.ft.max_restarts = ft->max_restarts;
  uint64_t h = sched__spec_hash(&k);
  for (uint32_t i = s->spec_hcap ? (uint32_t)h & (s->spec_hcap - 1) : 0; s->spec_hcap;
       i = (i + 1) & (s->spec_hcap - 1)) {
    uint32_t e = s->spec_hash[i];
    if (!e) break;
    if (!memcmp(&s->specs[e - 1], &k, sizeof k)) {
      *out = e - 1;
      return 0;
    }
  }
  if (s->nspecs == s->capspecs) {
    uint32_t nc = s->capspecs ? 2 * s->capspecs : 8;
    sched__cls *p = realloc(s->specs, nc * sizeof *p);
    if (!p) return SCHED_ENOMEM;
    s->specs = p;
    s->capspecs = nc;
  }
  if (2 * (s->nspecs + 1) > s->spec_hcap) { /* at most half full: rebuilt twice as large */
    uint32_t nc = s->spec_hcap ? 2 * s->spec_hcap : 16;
    uint32_t *t = calloc(nc, sizeof *t);
    if (!t) return SCHED_ENOMEM;
    free(s->spec_hash);
    s->spec_hash = t;
    s->spec_hcap = nc;
    for (uint32_t e = 0; e < s->nspecs; e++) sched__spec_put(s, e);
  }
  memcpy(&s->specs[s->nspecs], &k, sizeof k); /* with its zero padding (an assignment need not copy it) */
  sched__spec_put(s, s->nspecs);
  *out = s->nspecs++;
  return 0;
}

/* Job jid's whole spec in *out: the shared part and its own fields, with the candidates of the
 * arrival being handled when `cand` and it is that job's (ft and deadline are not kept). */
static const sched_job_spec *sched__spec_of(const sched *s, uint32_t jid, sched_job_spec *out, int cand) {
  const sched__job *j = &s->jobs[jid];
  *out = s->specs[j->cls].spec;
  out->kind = (sched_job_kind)j->kind;
#define SCHED__TO_SPEC(f) out->f = j->f;
  SCHED__JOB_OWN(SCHED__TO_SPEC)
#undef SCHED__TO_SPEC
  if (cand && s->cand_job == jid) {
    out->cand = s->cand;
    out->ncand = s->ncand;
  }
  return out;
}

/* The cold table (sched__gcold) from `from` to nc entries, the new ones zeroed; 0, or nonzero
 * (the table unchanged) when out of memory. */
static int sched__cold_resize(sched *s, uint32_t from, uint32_t nc) {
  sched__gcold *t = sim_bigmem_realloc(s->gcold, (size_t)nc * sizeof *t);
  if (!t) return 1;
  memset(t + from, 0, (size_t)(nc - from) * sizeof *t);
  s->gcold = t;
  return 0;
}
/* Memory grows with the ids in use: a core given a whole region's bounds holds only the GPUs
 * that joined it. The tables are resized to exactly nc entries (new ones zeroed, GPUs unowned). */
static int sched__gpus_resize(sched *s, uint32_t nc) {
  if (nc <= s->gpu_cap) return 0;
  if (s->gcold && sched__cold_resize(s, s->gpu_cap, nc)) return SCHED_ENOMEM;
  sched__gpu *p =
      sim_bigmem_realloc_lines(&s->gpus_block, s->gpus, (size_t)s->gpu_cap * sizeof *p, (size_t)nc * sizeof *p);
  if (!p) return SCHED_ENOMEM;
  memset(p + s->gpu_cap, 0, (size_t)(nc - s->gpu_cap) * sizeof *p);
  for (uint32_t i = s->gpu_cap; i < nc; i++) p[i].job = SCHED__NIL;
  s->gpus = p;
  s->gpu_cap = nc;
  return 0;
}

/* The cold part of GPU id for writing. The table is made (zeroed, for every id) on the first
 * write: a core whose user bills by itself (no SCHED_EV_BILLING), sets no heartbeat timeout and
 * no co-location hosts, as the market's cores, nor reports a speed factor other than 1 (SCHED_EV_GPU_DEGRADE),
 * never writes it and keeps 32 bytes a GPU, not 56 (24 bytes less a core GPU id, of which a
 * million-GPU market holds 1.2 per GPU by day 30). NULL, with s->oom set, when out of memory. */
static sched__gcold *sched__cold_w(sched *s, uint32_t id) {
  if (!s->gcold && sched__cold_resize(s, 0, s->gpu_cap ? s->gpu_cap : 1)) {
    s->oom = 1;
    return NULL;
  }
  return &s->gcold[id];
}
/* ... and for reading: zeros (never billed, heartbeat 0, alone) while nothing was written. */
static const sched__gcold sched__gcold_none;
static const sched__gcold *sched__cold_r(const sched *s, uint32_t id) {
  return s->gcold ? &s->gcold[id] : &sched__gcold_none;
}
static int sched__prov_resize(sched *s, uint32_t nc) {
  if (nc <= s->prov_cap) return 0;
  sched__provider *p = sim_bigmem_realloc(s->prov, (size_t)nc * sizeof *p);
  if (!p) return SCHED_ENOMEM;
  for (uint32_t i = s->prov_cap; i < nc; i++) p[i] = (sched__provider){0, 0, -1};
  s->prov = p;
  s->prov_cap = nc;
  return 0;
}
/* Provider prov's stake (USD): 0 when it has none kept. */
static inline double sched__stake(const sched *s, uint32_t prov) { return prov < s->nstake ? s->stake[prov] : 0; }
static uint32_t sched__grown(uint32_t cap, uint32_t id, uint32_t max);
/* Sets it, keeping stakes up to prov (< max_providers). 0 or SCHED_ENOMEM. */
static int sched__stake_set(sched *s, uint32_t prov, double v) {
  if (prov >= s->capstake) {
    uint32_t nc = sched__grown(s->capstake, prov, s->cfg.max_providers);
    double *p = sim_bigmem_realloc(s->stake, (size_t)nc * sizeof *p);
    if (!p) return SCHED_ENOMEM;
    s->stake = p;
    s->capstake = nc;
  }
  for (; s->nstake <= prov; s->nstake++) s->stake[s->nstake] = 0;
  s->stake[prov] = v;
  return 0;
}
/* Capacity for id: grown by an eighth at a time, at most the configured bound. */
static uint32_t sched__grown(uint32_t cap, uint32_t id, uint32_t max) {
  /* by an eighth: a table that grows one host at a time holds about 6% unused entries on
   * average, not 25%, and the realloc count stays logarithmic */
  uint64_t nc = cap ? cap : 64;
  while (nc <= id) nc += nc / 8 + 16;
  return (uint32_t)(nc > max ? max : nc);
}
static int sched__gpus_reserve(sched *s, uint32_t id) {
  return id < s->gpu_cap ? 0 : sched__gpus_resize(s, sched__grown(s->gpu_cap, id, s->cfg.max_gpus));
}
static int sched__prov_reserve(sched *s, uint32_t id) {
  return id < s->prov_cap ? 0 : sched__prov_resize(s, sched__grown(s->prov_cap, id, s->cfg.max_providers));
}
int sched_reserve(sched *s, uint32_t gpus, uint32_t providers) {
  if (!s || gpus > s->cfg.max_gpus || providers > s->cfg.max_providers) return SCHED_EINVAL;
  int rc = sched__gpus_resize(s, gpus);
  return rc ? rc : sched__prov_resize(s, providers);
}
/* Room for n selected GPUs in scratch / kscratch. Callers reserve before they select (a select
 * writes into scratch and must not move it). */
static int sched__scratch_reserve(sched *s, size_t n) {
  if (n <= s->scratch_cap) return 0;
  size_t nc = s->scratch_cap ? s->scratch_cap : 16;
  while (nc < n) nc *= 2;
  uint32_t *a = realloc(s->scratch, nc * sizeof *a);
  if (!a) return SCHED_ENOMEM;
  s->scratch = a;
  double *k = realloc(s->kscratch, nc * sizeof *k);
  if (!k) return SCHED_ENOMEM;
  s->kscratch = k;
  s->scratch_cap = nc;
  return 0;
}

/* Decisions are queued and delivered once the event has been applied in full, so that the sink
 * always sees a consistent core (it may query it, and tests check the invariants there). */
static void sched__emit(sched *s, sched_decision *d) {
  d->t = s->now;
  s->cnt.decisions++;
  if (s->npend == s->cappend) {
    size_t nc = s->cappend ? 2 * s->cappend : 64;
    sched__pending *p = realloc(s->pend, nc * sizeof *p);
    if (!p) {
      s->oom = 1;
      return;
    }
    s->pend = p;
    s->cappend = nc;
  }
  if (s->npool + d->ngpus > s->cappool) {
    size_t nc = s->cappool ? 2 * s->cappool : 256;
    while (nc < s->npool + d->ngpus) nc *= 2;
    uint32_t *p = realloc(s->pool, nc * sizeof *p);
    if (!p) {
      s->oom = 1;
      return;
    }
    s->pool = p;
    s->cappool = nc;
  }
  sched__pending *q = &s->pend[s->npend++];
  q->d = *d;
  q->off = s->npool;
  if (d->ngpus) memcpy(s->pool + s->npool, d->gpus, d->ngpus * sizeof *s->pool);
  s->npool += d->ngpus;
}

static void sched__flush(sched *s) {
  for (size_t i = 0; i < s->npend; i++) {
    sched_decision d = s->pend[i].d;
    d.gpus = d.ngpus ? s->pool + s->pend[i].off : NULL;
    s->cfg.sink(s->cfg.sink_ctx, &d);
  }
  s->npend = s->npool = 0;
}

/* Idle queues: one per (node, region, grade) with node queues, else per (region, grade). */
static uint32_t sched__nodeq(const sched *s) { return s->cfg.node_queues ? s->cfg.max_nodes : 1; }
static size_t sched__nbuckets(const sched *s) { return (size_t)sched__nodeq(s) * s->cfg.nregions * s->cfg.ngrades; }
static size_t sched__bucket(const sched *s, uint32_t node, unsigned region, unsigned grade) {
  return ((size_t)(s->cfg.node_queues ? node : 0) * s->cfg.nregions + region) * s->cfg.ngrades + grade;
}
static size_t sched__bucket_of(const sched *s, const sched__gpu *g) {
  const sched__prof *f = sched__pf(s, g);
  return sched__bucket(s, f->node, f->region, f->grade);
}

static int sched__idle_add(sched *s, uint32_t id) {
  sched__gpu *g = &s->gpus[id];
  sched__ivec *b = &s->buckets[sched__bucket_of(s, g)];
  if (b->n == b->cap) {
    sched__idl *p = sched__grow(b->v, &b->cap, sizeof *p);
    if (!p) {
      s->oom = 1; /* reported by sched_handle */
      return SCHED_ENOMEM;
    }
    b->v = p;
  }
  b->v[b->n++] = (sched__idl){id, g->provider};
  g->pos = b->n - 1;
  g->state = SCHED_GPU_IDLE;
  s->idle_total++;
  return 0;
}

static void sched__idle_remove(sched *s, uint32_t id) {
  sched__gpu *g = &s->gpus[id];
  sched__ivec *b = &s->buckets[sched__bucket_of(s, g)];
  sched__idl last = b->v[--b->n];
  if (last.id != id) {
    b->v[g->pos] = last;
    s->gpus[last.id].pos = g->pos;
  }
  s->idle_total--;
}

/* Timers: a binary min-heap on t. */
static int sched__timer_push(sched *s, double t, int kind, uint32_t a, uint32_t b, uint32_t seq) {
  if (s->nheap == s->capheap) {
    size_t nc = s->capheap ? s->capheap * 2 : 256;
    sched__timer *p = realloc(s->heap, nc * sizeof *p);
    if (!p) return SCHED_ENOMEM;
    s->heap = p;
    s->capheap = nc;
  }
  size_t i = s->nheap++;
  while (i) {
    size_t p = (i - 1) / 2;
    if (s->heap[p].t <= t) break;
    s->heap[i] = s->heap[p];
    i = p;
  }
  s->heap[i] = (sched__timer){t, a, b, seq, (uint8_t)kind};
  return 0;
}
static sched__timer sched__timer_pop(sched *s) {
  sched__timer top = s->heap[0], last = s->heap[--s->nheap];
  size_t i = 0, n = s->nheap;
  for (;;) {
    size_t c = 2 * i + 1;
    if (c >= n) break;
    if (c + 1 < n && s->heap[c + 1].t < s->heap[c].t) c++;
    if (s->heap[c].t >= last.t) break;
    s->heap[i] = s->heap[c];
    i = c;
  }
  if (n) s->heap[i] = last;
  return top;
}

/* ---- Reputation, staking, billing ----------------------------------------------------------- */

/* Evidence decays with a half-life: r <- r 2^(-dt / half_life) (the "forgetting factor" of
 * Josang & Ismail 2002, applied per unit of time instead of per observation). */
static void sched__rep_decay(const sched *s, const sched__provider *p, double t, double *r, double *sv) {
  double f = 1;
  if (s->cfg.rep_half_life_s > 0 && t > p->t) f = exp2(-(t - p->t) / s->cfg.rep_half_life_s);
  *r = p->r * f;
  *sv = p->s * f;
}
static double sched__rep(const sched *s, uint32_t prov, double t) {
  double r, sv;
  sched__rep_decay(s, &s->prov[prov], t, &r, &sv);
  return sched_beta_expect(r, sv);
}
static void sched__rep_add(sched *s, uint32_t prov, double pos, double neg) {
  sched__provider *p = &s->prov[prov];
  sched__rep_decay(s, p, s->now, &p->r, &p->s);
  p->t = s->now;
  p->r += pos;
  p->s += neg;
}

static void sched__slash(sched *s, uint32_t prov, double amount) {
  if (!(amount > 0)) return;
  double held = sched__stake(s, prov);
  if (amount > held) amount = held;
  if (prov < s->nstake) s->stake[prov] -= amount; /* (none held past nstake: amount is 0) */
  s->ledger.slashed += amount;
}

/* Splits an amount billed to a client: platform_fee to the platform, node_fee to the GP Node
 * that manages the GPU (less delegation_fee of that when the node delegates), the rest to the
 * provider. */
static void sched__ledger_split(sched *s, sched__job *j, const sched__gpu *g, double amount) {
  double plat = amount * s->cfg.platform_fee, node = amount * s->cfg.node_fee;
  double deleg = 0;
  uint32_t gn = sched__pf(s, g)->node;
  if (s->cfg.node_delegated && s->cfg.node_delegated[gn]) deleg = node * s->cfg.delegation_fee;
  s->ledger.billed += amount;
  s->ledger.platform_income += plat;
  s->ledger.node_income += node - deleg;
  s->ledger.delegate_income += deleg;
  s->ledger.provider_income += amount - plat - node;
  s->node_income[gn] += node - deleg;
  j->cost += amount;
}

/* The run in slot k of job j, when it is running: an employed GPU's (sched__gpu.rslot). */
static sched__run *sched__run_at(const sched__job *j, unsigned k) {
  return j->runs && k < j->nruns && j->runs[k].active ? &j->runs[k] : NULL;
}
/* Bills an employed GPU up to now: price_per_h x hours since it was last billed. Services are
 * billed per task instead (sched__task_done). */
static void sched__bill(sched *s, uint32_t id, int keep) {
  sched__gpu *g = &s->gpus[id];
  if (g->state != SCHED_GPU_BUSY && g->state != SCHED_GPU_STANDBY) return;
  double dt = s->now - (g->billed ? sched__cold_r(s, id)->billed_until : g->since);
  if (!(dt > 0)) return;
  if (keep) { /* it stays employed: billed up to now (a release or a loss ends it here) */
    sched__gcold *c = sched__cold_w(s, id);
    if (!c) return; /* s->oom: sched_handle reports it */
    c->billed_until = s->now;
    g->billed = 1;
  }
  sched__job *j = &s->jobs[g->job];
  j->gpu_seconds += dt;
  if (j->kind == SCHED_JOB_SERVICE) return;
  double amount = g->price_per_h * dt / 3600.0;
  sched__ledger_split(s, j, g, amount);
  sched__run *r = sched__run_at(j, g->rslot);
  if (r) r->billed += amount;
}

/* ---- Runs ----------------------------------------------------------------------------------- */
static sched__run *sched__run_find(sched *s, sched__job *j, uint32_t run) {
  if (!j->runs) return NULL;
  for (unsigned k = 0; k < j->nruns; k++)
    if (j->runs[k].active && j->runs[k].id == run) return &j->runs[k];
  return NULL;
}
static unsigned sched__active_runs(const sched__job *j) {
  unsigned n = 0;
  if (j->runs)
    for (unsigned k = 0; k < j->nruns; k++) n += j->runs[k].active;
  return n;
}

/* Expected work rate of a run from its members' advertised scores and reported speeds. */
static double sched__run_rate(sched *s, sched__job *j, sched__run *r) {
  if (r->n > s->rate_cap) {
    size_t nc = s->rate_cap ? s->rate_cap : 16;
    while (nc < r->n) nc *= 2;
    double *a = realloc(s->sp_scratch, nc * sizeof *a);
    if (a) s->sp_scratch = a;
    sched_link *b = a ? realloc(s->ln_scratch, nc * sizeof *b) : NULL;
    if (b) s->ln_scratch = b;
    if (!a || !b) {
      s->oom = 1;
      return 0;
    }
    s->rate_cap = nc;
  }
  for (unsigned i = 0; i < r->n; i++) {
    const sched__gpu *g = &s->gpus[SCHED__MEMB(r)[i]];
    s->sp_scratch[i] = sched__power(s, g);
    s->ln_scratch[i] = *sched__lnk(s, sched__pf(s, g));
    /* contention: a member slows down with the busy GPUs of its host (sched_coloc_factor). The
     * scan is over every GPU id, so only a configuration with a contention table pays for it. */
    uint32_t host = sched__cold_r(s, SCHED__MEMB(r)[i])->host;
    if (s->cfg.cluster.ncoloc > 0 && host != 0) {
      unsigned k = 0;
      for (uint32_t o = 0; o < s->gpu_cap; o++)
        if (s->gpus[o].state == SCHED_GPU_BUSY && s->gcold[o].host == host) k++;
      s->sp_scratch[i] *= sched_coloc_factor(&s->cfg.cluster, (double)k);
    }
  }
  return sched_cluster_rate(&s->cfg.cluster, &s->cfg.net, s->sp_scratch, s->ln_scratch, r->n, j->step_work,
                            SCHED__CLS(s, j)->step_bytes);
}

/* MTBF of one employed GPU: observed employed time / failures once enough failures were seen,
 * else the configured prior. */
static double sched__gpu_mtbf(const sched *s) {
  if (s->obs_failures >= s->cfg.mtbf_min_failures && s->obs_failures > 0) return s->obs_up_s / (double)s->obs_failures;
  return s->cfg.gpu_mtbf_s;
}

/* Checkpoint interval of a run: fixed, or Young/Daly (Young 1974, "A first order approximation to
 * the optimum checkpoint interval", CACM 17(9); Daly 2006, "A higher order estimate of the optimum
 * checkpoint interval for restart dumps", FGCS 22(3)) with C = time to write ckpt_bytes over the
 * slowest member link (the transfer model) and M = 1 / the rate at which the run loses unsaved work
 * under its policy (sched_ft_loss_rate: MTBF of one GPU / n when nothing but checkpoints protects
 * it, as any member's failure stops a synchronous run; independent exponential failures). A
 * combination with standbys loses work far less often, and checkpoints less often. */
static double sched__ckpt_interval(sched *s, sched__job *j, sched__run *r, double *cost) {
  double C = r->ckpt_c;
  if (!(C >= 0)) { /* once per membership: the members' GPU records are cold in a large pool */
    C = 0;
    for (unsigned i = 0; i < r->n; i++) {
      double c = sched_net_transfer_time(&s->cfg.net, sched__lnk(s, sched__pf(s, &s->gpus[SCHED__MEMB(r)[i]])),
                                         SCHED__CLS(s, j)->ckpt_bytes);
      if (c > C) C = c;
    }
    r->ckpt_c = C;
  }
  *cost = C;
  const sched_ft *ft = SCHED__FT(s, j);
  if (ft->ckpt_rule == SCHED_CKPT_FIXED || !(C > 0) || !isfinite(C)) return ft->ckpt_interval_s;
  double M = sched_ft_loss_default(ft) ? sched__gpu_mtbf(s) / (r->n ? r->n : 1)
                                       : 1.0 / sched_ft_loss_rate(ft, r->n ? r->n : 1, 1.0 / sched__gpu_mtbf(s), C);
  double T = ft->ckpt_rule == SCHED_CKPT_DALY ? sched_daly_interval(C, M) : sched_young_interval(C, M);
  return T > 1.0 ? T : 1.0;
}

/* The job's runs take periodic checkpoints. */
static int sched__ckpt_on(const sched *s, const sched__job *j) {
  return sched_ft_checkpoints(SCHED__FT(s, j)) && j->kind == SCHED_JOB_BATCH;
}

static void sched__arm_ckpt(sched *s, sched__job *j, sched__run *r, double after) {
  if (!sched__ckpt_on(s, j) || s->cfg.ckpt_analytic) return;
  double C;
  double T = sched__ckpt_interval(s, j, r, &C);
  r->ckpt_seq++;
  sched__timer_push(s, s->now + after + T, SCHED__T_CKPT, (uint32_t)(j - s->jobs), r->id, r->ckpt_seq);
}

/* Releases a GPU from employment (bills it, credits reputation for the hours served) and puts it
 * back in the idle queues. */
static void sched__release(sched *s, uint32_t id) {
  sched__gpu *g = &s->gpus[id];
  sched__bill(s, id, 0);
  double hours = (s->now - g->since) / 3600.0;
  s->obs_up_s += s->now - g->since;
  if (hours > 0) sched__rep_add(s, g->provider, hours * s->cfg.rep_pos_per_hour, 0);
  g->job = SCHED__NIL;
  sched__idle_add(s, id);
}

/* ---- Selection -------------------------------------------------------------------------------
 * Candidates come from the idle queues that match the job's region and grade. When they hold
 * more than `sample` per needed GPU, that many are drawn at random (the "power of d choices"
 * keeps a placement O(sample x need) at 100k GPUs); otherwise all are examined. Candidates that
 * fail the job's sector, link, price, stake or reputation limits are dropped; among the rest,
 * `need` are drawn without replacement with weight w = E^rep_exponent x score x speed / price
 * (Efraimidis & Spirakis 2006: keep the largest u^(1/w)), so reputation raises the chance of
 * being chosen without excluding newcomers. */
static int sched__eligible(const sched *s, const sched_job_spec *sp, const sched__gpu *g) {
  const sched__gpu *in = g;
  const sched__prof *f = sched__pf(s, g);
  const sched_link *ln = sched__lnk(s, f);
  if (sp->sectors && (f->sectors & sp->sectors) != sp->sectors) return 0;
  if (sp->max_loss > 0 && ln->loss > sp->max_loss) return 0;
  if (sp->max_rtt_s > 0 && ln->rtt_s > sp->max_rtt_s) return 0;
  if (sp->min_bw_bps > 0 && ln->bw_bps < sp->min_bw_bps) return 0;
  if (sp->max_price_per_h > 0 && in->price_per_h > sp->max_price_per_h) return 0;
  if (sched__stake(s, in->provider) < s->cfg.stake_min) return 0;
  if (sched__speed(s, g) < s->cfg.degrade_ratio) return 0; /* degraded: back when it reports better */
  if (s->cfg.min_reputation > 0 && sched__rep(s, in->provider, s->now) < s->cfg.min_reputation) return 0;
  return 1;
}

typedef struct sched__pick {
  unsigned need, got;
  uint32_t *ids;
  double *keys;
} sched__pick;

/* The GPUs a selection has drawn (or, from a candidate list, weighed), so that a GPU drawn twice
 * is weighed once: an open-addressing set of at least 2n slots (a power of 2; SCHED__NIL = empty),
 * emptied for each pass. A stamp in each GPU record did this before, which wrote every record a
 * selection drew. 0 or SCHED_ENOMEM. */
static int sched__seen_reset(sched *s, uint64_t n) {
  uint64_t cap = 16;
  while (cap < 2 * n) cap *= 2;
  if (cap > UINT32_MAX / 2) return SCHED_ENOMEM;
  if (cap > s->seen_cap) {
    uint32_t *p = realloc(s->seen, (size_t)cap * sizeof *p);
    if (!p) return SCHED_ENOMEM;
    s->seen = p;
    s->seen_cap = (uint32_t)cap;
  }
  /* a small set for a small selection: only its first cap slots are used and cleared */
  s->seen_n = (uint32_t)cap;
  memset(s->seen, 0xff, (size_t)cap * sizeof *s->seen);
  return 0;
}
/* Adds GPU id to the set; 1 when it was there already. */
static int sched__seen_add(sched *s, uint32_t id) {
  uint32_t mask = s->seen_n - 1, i = (id * 2654435761u) & mask; /* Knuth's multiplicative hash */
  while (s->seen[i] != SCHED__NIL) {
    if (s->seen[i] == id) return 1;
    i = (i + 1) & mask;
  }
  s->seen[i] = id;
  return 0;
}

static void sched__consider(sched *s, sched__pick *pk, uint32_t id) {
  sched__gpu *g = &s->gpus[id];
  double w = sched__power(s, g);
  if (g->price_per_h > 0) w /= g->price_per_h;
  if (s->cfg.rep_exponent != 0) {
    double e = sched__rep(s, g->provider, s->now);
    /* pow is the costliest step of a placement; the usual exponents need none. */
    w *= s->cfg.rep_exponent == 2 ? e * e : s->cfg.rep_exponent == 1 ? e : pow(e, s->cfg.rep_exponent);
  }
  if (!(w > 0)) w = 1e-300;
  double key = log(sched__u01(s)) / w; /* log(u^(1/w)): larger is better */
  if (pk->got < pk->need) {
    unsigned i = pk->got++;
    while (i > 0 && pk->keys[i - 1] < key) {
      pk->keys[i] = pk->keys[i - 1];
      pk->ids[i] = pk->ids[i - 1];
      i--;
    }
    pk->keys[i] = key;
    pk->ids[i] = id;
  } else if (key > pk->keys[pk->need - 1]) {
    unsigned i = pk->need - 1;
    while (i > 0 && pk->keys[i - 1] < key) {
      pk->keys[i] = pk->keys[i - 1];
      pk->ids[i] = pk->ids[i - 1];
      i--;
    }
    pk->keys[i] = key;
    pk->ids[i] = id;
  }
}

/* The GPU that draw x (below total) of the sampling loop names: bucket k of the nb selected is
 * the first with x < bcum[k]. */
static const sched__idl *sched__drawn_at(const sched *s, unsigned nb, uint64_t x) {
  unsigned lo = 0, hi = nb - 1;
  while (lo < hi) {
    unsigned mid = (lo + hi) / 2;
    if (x < s->bcum[mid])
      hi = mid;
    else
      lo = mid + 1;
  }
  return &s->buckets[s->bsel[lo]].v[x - (lo ? s->bcum[lo - 1] : 0)];
}
static uint32_t sched__drawn(const sched *s, unsigned nb, uint64_t x) { return sched__drawn_at(s, nb, x)->id; }

/* A sampling loop's candidates are fetched before it runs: its d-th draw is the (d + c)-th number
 * of the core's stream, c being the candidates it weighed before (each takes one number more,
 * sched__consider), so numbers 0 .. 2 draws - 2 hold every draw it can make. Their entries in the
 * idle queues, then their GPU records with the providers' records and stakes the filter reads (the
 * entry names both), are fetched a stage at a time, each stage's misses together instead of one after another (at a
 * million GPUs the queue entries missed as often as the records, and a stage that read them while
 * it fetched the next waited on each). The stream is read from a copy: nothing changes. Every pool
 * does it. It was once kept to pools of 65,536 GPUs or more, whose records alone outgrow the
 * caches, but a core's records share the cache with the rest of the model: at 100k GPUs in three
 * regions (pools of 10,000 to 13,000) sched__eligible and sched__consider took 135 ns of an event's
 * 1,026, against 41 at a million GPUs, whose pools fetched (perf, 2 days). With every pool fetching,
 * 10k GPUs run as fast as before (docs/history/performance-log.md, "Every pool fetches its candidates ahead"). */
#define SCHED__FETCH_MAX 32u
static void sched__fetch_draws(const sched *s, unsigned nb, uint64_t total, uint64_t draws) {
  uint64_t q[4];
  const sched__idl *at[SCHED__FETCH_MAX];
  memcpy(q, s->rng, sizeof q);
  unsigned n = draws * 2 - 1 < SCHED__FETCH_MAX ? (unsigned)(draws * 2 - 1) : SCHED__FETCH_MAX;
  for (unsigned i = 0; i < n; i++) {
    at[i] = sched__drawn_at(s, nb, sim_xoshiro_next(q) % total);
    __builtin_prefetch(at[i]);
  }
  for (unsigned i = 0; i < n; i++) {
    sched__idl e = *at[i];
    __builtin_prefetch(&s->gpus[e.id]);
    if (e.provider < s->prov_cap) { /* a 24-byte record: one in three spans two lines */
      __builtin_prefetch(&s->prov[e.provider]);
      __builtin_prefetch(&s->prov[e.provider].t);
    }
    if (e.provider < s->nstake) __builtin_prefetch(&s->stake[e.provider]); /* the stake filter's (a pool with stakes) */
  }
}

/* Picks `need` idle GPUs for spec into out (not yet removed from the queues). 0 or -1. */
static int sched__select(sched *s, const sched_job_spec *sp, unsigned need, uint32_t *out) {
  if (need == 0) return 0;
  if (s->idle_total < need) return -1;
  if (sp->cand) {
    /* The pool named the candidates: the members come from them (the same weights). */
    if (sched__seen_reset(s, sp->ncand)) {
      s->oom = 1;
      return -1;
    }
    sched__pick pk = {need, 0, out, s->kscratch};
    for (unsigned i = 0; i < sp->ncand; i++) {
      uint32_t id = sp->cand[i];
      if (id >= s->gpu_cap) continue;
      const sched__gpu *g = &s->gpus[id];
      if (g->state != SCHED_GPU_IDLE) continue;
      const sched__prof *f = sched__pf(s, g);
      if (f->grade < sp->min_grade || (sp->region >= 0 && f->region != (unsigned)sp->region)) continue;
      if (s->cfg.node_queues && sp->node >= 0 && f->node != (uint32_t)sp->node) continue;
      if (sched__eligible(s, sp, g) && !sched__seen_add(s, id)) sched__consider(s, &pk, id);
    }
    return pk.got == need ? 0 : -1;
  }
  unsigned r0 = 0, r1 = s->cfg.nregions;
  if (sp->region >= 0) {
    r0 = (unsigned)sp->region;
    r1 = r0 + 1;
  }
  uint32_t n0 = 0, n1 = sched__nodeq(s);
  if (s->cfg.node_queues && sp->node >= 0) {
    n0 = (uint32_t)sp->node;
    n1 = n0 + 1;
  }
  unsigned g0 = sp->min_grade < s->cfg.ngrades ? sp->min_grade : s->cfg.ngrades;
  uint64_t total = 0;
  unsigned nb = 0;
  for (uint32_t n = n0; n < n1; n++)
    for (unsigned r = r0; r < r1; r++)
      for (unsigned g = g0; g < s->cfg.ngrades; g++) {
        size_t b = sched__bucket(s, n, r, g);
        if (!s->buckets[b].n) continue;
        total += s->buckets[b].n;
        s->bsel[nb] = (uint32_t)b;
        s->bcum[nb++] = total; /* draws below bcum[k] and at or above bcum[k-1] fall in bucket k */
      }
  if (total < need) return -1;
  sched__pick pk = {need, 0, out, s->kscratch};
  /* the window of the second pass: SCHED__SCAN_MAX candidates, or 4 per needed GPU for a wide job
   * (a window narrower than the need could never fill it) */
  uint64_t window = (uint64_t)need * 4 > SCHED__SCAN_MAX ? (uint64_t)need * 4 : SCHED__SCAN_MAX;
  for (int pass = 0; pass < 2; pass++) {
    pk.got = 0;
    uint64_t draws = (uint64_t)s->cfg.sample * need;
    if (pass == 0 && draws < total) {
      if (sched__seen_reset(s, draws)) {
        s->oom = 1;
        return -1;
      }
      sched__fetch_draws(s, nb, total, draws);
      for (uint64_t d = 0; d < draws; d++) {
        uint32_t id = sched__drawn(s, nb, sched__below(s, total));
        if (!sched__seen_add(s, id) && sched__eligible(s, sp, &s->gpus[id])) sched__consider(s, &pk, id);
      }
      if (pk.got == need) return 0;
      continue; /* too few passed the filters: examine everyone (or a window of SCHED__SCAN_MAX) */
    }
    if (total <= window) {
      for (unsigned k = 0; k < nb; k++) {
        const sched__ivec *b = &s->buckets[s->bsel[k]];
        for (uint32_t i = 0; i < b->n; i++)
          if (sched__eligible(s, sp, &s->gpus[b->v[i].id])) sched__consider(s, &pk, b->v[i].id);
      }
      return pk.got == need ? 0 : -1;
    }
    /* Large pools: `window` consecutive candidates (in bucket order, wrapping; fewer than the pool
     * holds, so none is seen twice) from a random start, so that a job few GPUs can take costs
     * O(window), not O(pool), per attempt; it may miss a rare eligible GPU and is then retried at
     * the next capacity change. */
    uint64_t x = sched__below(s, total);
    unsigned k = 0;
    while (x >= s->bcum[k]) k++;
    uint64_t off = x - (k ? s->bcum[k - 1] : 0);
    for (uint64_t seen = 0; seen < window; seen++) {
      const sched__ivec *b = &s->buckets[s->bsel[k]];
      uint32_t id = b->v[off].id;
      if (sched__eligible(s, sp, &s->gpus[id])) sched__consider(s, &pk, id);
      if (++off >= b->n) {
        off = 0;
        k = (k + 1) % nb;
      }
    }
    return pk.got == need ? 0 : -1;
  }
  return -1;
}

static void sched__employ(sched *s, uint32_t id, uint32_t job, const sched__run *r, int state) {
  sched__gpu *g = &s->gpus[id];
  sched__idle_remove(s, id);
  g->state = (uint8_t)state;
  g->job = job;
  g->rslot = (uint8_t)(r - s->jobs[job].runs) & 3u;
  g->since = s->now;
  g->billed = 0;
}

/* Places a new run of job j (width members, plus the standbys its policy keeps). Returns 0,
 * -1 when the GPUs are not there (nothing changed), or SCHED_ENOMEM. */
static int sched__place_run(sched *s, uint32_t jid, int backup) {
  sched__job *j = &s->jobs[jid];
  const sched_ft *ft = SCHED__FT(s, j);
  unsigned width = j->width;
  unsigned k = sched_ft_standbys(ft);
  if (!j->runs) {
    /* as many run slots as the policy can use at once: copies, and a backup */
    unsigned n = sched_ft_slots(ft);
    if (sched__runs_alloc(j, n)) return SCHED_ENOMEM;
  }
  sched__run *r = NULL;
  for (unsigned i = 0; i < j->nruns; i++)
    if (!j->runs[i].active) {
      r = &j->runs[i];
      break;
    }
  if (!r) return -1;
  if (sched__scratch_reserve(s, width > k ? width : k)) return SCHED_ENOMEM;
  if (sched__run_room(r, width, k)) return SCHED_ENOMEM; /* room for the standbys its row asks for */
  /* Members first; standbys are best effort (a run starts without them when the pool is short
   * and gets them as GPUs join). */
  sched_job_spec sp;
  if (sched__select(s, sched__spec_of(s, jid, &sp, 1), width, s->scratch) != 0) return -1;
  if (s->cfg.chosen)
    for (unsigned i = 0; i < width; i++) s->cfg.chosen(s->cfg.sink_ctx, s->scratch[i]);
  uint32_t run = j->next_run++;
  r->id = run;
  r->active = 1;
  r->in_ckpt = r->slow = 0;
  r->backup = (uint8_t)backup;
  r->n = width;
  r->ckpt_c = -1; /* members changed: the checkpoint cost is recomputed */
  r->nsb = 0;
  r->start = r->last_t = s->now;
  r->last_work = backup ? 0 : j->saved_work;
  r->billed = 0;
  for (unsigned i = 0; i < width; i++) {
    SCHED__MEMB(r)[i] = s->scratch[i];
    sched__employ(s, s->scratch[i], jid, r, SCHED_GPU_BUSY);
  }
  r->rate = sched__run_rate(s, j, r);
  /* Staging: every member fetches the inputs (and the checkpoint, when resuming from one) over
   * its own link; the run starts when the slowest has them. */
  double bytes = SCHED__CLS(s, j)->input_bytes + (j->saved_work > 0 && !backup ? SCHED__CLS(s, j)->ckpt_bytes : 0);
  double stage = 0;
  for (unsigned i = 0; i < width; i++) {
    double t = sched_net_transfer_time(&s->cfg.net, sched__lnk(s, sched__pf(s, &s->gpus[SCHED__MEMB(r)[i]])), bytes);
    if (t > stage) stage = t;
  }
  r->last_t = s->now + stage; /* progress is judged from when it can compute */
  if (j->state != SCHED_JOB_RUNNING && j->start < 0) j->start = s->now;
  j->state = SCHED_JOB_RUNNING;
  s->cnt.placements++;
  sched_decision d = {
      .type = SCHED_D_PLACE, .job = jid, .run = run, .gpus = SCHED__MEMB(r), .ngpus = width, .value = stage};
  if (s->cfg.ckpt_analytic) {
    if (sched__ckpt_on(s, j)) d.ckpt_interval = sched__ckpt_interval(s, j, r, &d.ckpt_cost);
  } else {
    sched__arm_ckpt(s, j, r, stage);
  }
  sched__emit(s, &d);
  /* the candidates are for members; standbys come from anywhere */
  if (k && sched__select(s, sched__spec_of(s, jid, &sp, 0), k, s->scratch) == 0) {
    for (unsigned i = 0; i < k; i++) {
      SCHED__SBY(r)[r->nsb++] = s->scratch[i];
      sched__employ(s, s->scratch[i], jid, r, SCHED_GPU_STANDBY);
      sched_decision e = {.type = SCHED_D_STANDBY, .job = jid, .run = run, .gpu = s->scratch[i]};
      sched__emit(s, &e);
    }
  } else if (k) {
    sched__vec_push(&s->deficit, jid);
  }
  return 0;
}

/* Tops up the standbys of a run from the idle pool (as many as possible). */
static void sched__refill_standby(sched *s, uint32_t jid, sched__run *r) {
  sched__job *j = &s->jobs[jid];
  sched_job_spec any; /* not from the candidates of an arrival being handled */
  sched__spec_of(s, jid, &any, 0);
  if (sched__scratch_reserve(s, 1)) {
    s->oom = 1;
    return;
  }
  unsigned k = sched_ft_standbys(SCHED__FT(s, j));
  while (r->nsb < k && sched__select(s, &any, 1, s->scratch) == 0) {
    uint32_t id = s->scratch[0];
    SCHED__SBY(r)[r->nsb++] = id;
    sched__employ(s, id, jid, r, SCHED_GPU_STANDBY);
    sched_decision e = {.type = SCHED_D_STANDBY, .job = jid, .run = r->id, .gpu = id};
    sched__emit(s, &e);
  }
  if (r->nsb < k) sched__vec_push(&s->deficit, jid);
}

static void sched__queue_push(sched *s, uint32_t jid, int front) {
  sched__job *j = &s->jobs[jid];
  j->inq = 1;
  if (front) {
    j->qprev = SCHED__NIL;
    j->qnext = s->qhead;
    if (s->qhead != SCHED__NIL)
      s->jobs[s->qhead].qprev = jid;
    else
      s->qtail = jid;
    s->qhead = jid;
  } else {
    j->qnext = SCHED__NIL;
    j->qprev = s->qtail;
    if (s->qtail != SCHED__NIL)
      s->jobs[s->qtail].qnext = jid;
    else
      s->qhead = jid;
    s->qtail = jid;
  }
}
static void sched__queue_remove(sched *s, uint32_t jid) {
  sched__job *j = &s->jobs[jid];
  if (!j->inq) return;
  if (j->qprev != SCHED__NIL)
    s->jobs[j->qprev].qnext = j->qnext;
  else
    s->qhead = j->qnext;
  if (j->qnext != SCHED__NIL)
    s->jobs[j->qnext].qprev = j->qprev;
  else
    s->qtail = j->qprev;
  j->inq = 0;
}

/* Tries queued jobs in FIFO order (skipping those that do not fit: backfilling), at most
 * queue_scan of them. A policy of several copies places up to that many runs, the first being
 * required. */
static int sched__schedule(sched *s) {
  unsigned tried = 0;
  uint32_t jid = s->qhead;
  while (jid != SCHED__NIL && tried < s->cfg.queue_scan && s->idle_total > 0) {
    uint32_t next = s->jobs[jid].qnext;
    tried++;
    int rc = sched__place_run(s, jid, 0);
    if (rc < -1) return rc;
    if (rc == 0) {
      sched__queue_remove(s, jid);
      for (unsigned c = 1, nc = sched_ft_copies(SCHED__FT(s, &s->jobs[jid])); c < nc; c++)
        if (sched__place_run(s, jid, 0) != 0) break;
    }
    jid = next;
  }
  /* Runs that lack standbys get them as GPUs come. */
  while (s->deficit.n && s->idle_total > 0) {
    uint32_t d = s->deficit.v[--s->deficit.n];
    sched__job *j = &s->jobs[d];
    if (j->state != SCHED_JOB_RUNNING || !j->runs) continue;
    unsigned want = sched_ft_standbys(SCHED__FT(s, j));
    for (unsigned k = 0; k < j->nruns; k++)
      if (j->runs[k].active && j->runs[k].nsb < want) {
        sched__refill_standby(s, d, &j->runs[k]);
        if (j->runs[k].nsb < want) return 0; /* pool dry; it was pushed back */
      }
  }
  return 0;
}

static void sched__end_job(sched *s, uint32_t jid, sched_reason why) {
  sched__job *j = &s->jobs[jid];
  sched__queue_remove(s, jid);
  j->state = SCHED_JOB_ENDED;
  j->outcome = (uint8_t)why;
  j->end = s->now;
  s->ended++;
  if (why == SCHED_R_COMPLETED)
    s->cnt.jobs_completed++;
  else if (why == SCHED_R_WITHDRAWN || why == SCHED_R_RELEASED)
    s->cnt.jobs_released++;
  else
    s->cnt.jobs_failed++;
  sched_decision d = {.type = SCHED_D_END, .job = jid, .reason = why};
  if (why == SCHED_R_WITHDRAWN || why == SCHED_R_RELEASED) d.value = j->saved_work;
  sched__emit(s, &d);
}

/* Stops a run: all members and standbys go back to the pool. */
static void sched__stop_run(sched *s, uint32_t jid, sched__run *r, sched_reason why) {
  sched__job *j = &s->jobs[jid];
  sched_decision d = {.type = SCHED_D_STOP, .job = jid, .run = r->id, .reason = why};
  sched__emit(s, &d);
  s->cnt.stops++;
  for (unsigned i = 0; i < r->n; i++) sched__release(s, SCHED__MEMB(r)[i]);
  for (unsigned i = 0; i < r->nsb; i++) sched__release(s, SCHED__SBY(r)[i]);
  if (why == SCHED_R_CANCELLED) {
    s->ledger.cancelled_billed += r->billed;
    if (!s->cfg.bill_cancelled) {
      /* The client is not charged for a losing copy; the platform pays its hosts. */
      s->ledger.billed -= r->billed;
      s->ledger.platform_income -= r->billed;
      j->cost -= r->billed;
    }
  }
  r->active = 0;
  r->n = r->nsb = 0;
  r->ckpt_seq++;
}

/* A run was interrupted (member lost, crash). Other runs of the job carry on; a job left with
 * none goes back to the head of the queue, resuming from its checkpoint (CHECKPOINT) or from
 * zero, or ends as given up after max_restarts. */
static int sched__interrupt(sched *s, uint32_t jid, sched__run *r, sched_reason why) {
  sched__job *j = &s->jobs[jid];
  sched__stop_run(s, jid, r, why);
  if (sched__active_runs(j) > 0) {
    if (sched_ft_copies(SCHED__FT(s, j)) > 1) {
      int rc = sched__place_run(s, jid, 0); /* keep its copies when GPUs allow */
      if (rc < -1) return rc;
    }
    return 0;
  }
  j->restarts++;
  j->speculated = 0;
  if (!sched_ft_checkpoints(SCHED__FT(s, j))) j->saved_work = 0;
  if (j->restarts > SCHED__FT(s, j)->max_restarts) {
    sched__end_job(s, jid, SCHED_R_GAVE_UP);
    return 0;
  }
  if (j->hold) { /* the caller takes it back: it decides whether and where it runs again */
    sched__end_job(s, jid, SCHED_R_RELEASED);
    return 0;
  }
  j->state = SCHED_JOB_QUEUED;
  sched__queue_push(s, jid, 1);
  return 0;
}

/* ---- GPU events ----------------------------------------------------------------------------- */
static int sched__service_fill(sched *s, uint32_t jid);

/* A GPU is gone (announced, reported missed, or timed out). */
static int sched__gpu_lost(sched *s, uint32_t id) {
  sched__gpu *g = &s->gpus[id];
  if (g->state == SCHED_GPU_IDLE) {
    sched__idle_remove(s, id);
    g->state = SCHED_GPU_ABSENT;
    return 0;
  }
  if (g->state == SCHED_GPU_ABSENT) {
    s->cnt.stale_events++;
    return 0;
  }
  /* Employed: a disconnect while employed counts against its provider and is slashed. */
  uint32_t jid = g->job;
  sched__job *j = &s->jobs[jid];
  sched__run *r = sched__run_at(j, g->rslot);
  uint32_t run = r ? r->id : SCHED__NIL;
  sched__bill(s, id, 0);
  s->obs_up_s += s->now - g->since;
  s->obs_failures++;
  s->cnt.gpu_failures++;
  sched__rep_add(s, g->provider, (s->now - g->since) / 3600.0 * s->cfg.rep_pos_per_hour, s->cfg.rep_neg_per_failure);
  sched__slash(s, g->provider, s->cfg.slash_per_failure);
  g->lost_employed = 1;
  g->since = s->now; /* when it left (its down time is slashed from here) */
  int was_standby = g->state == SCHED_GPU_STANDBY;
  g->state = SCHED_GPU_ABSENT;
  g->job = SCHED__NIL;
  if (!r) return SCHED_ESTATE; /* cannot happen: checked by sched_check_invariants */
  if (was_standby) {
    for (unsigned i = 0; i < r->nsb; i++)
      if (SCHED__SBY(r)[i] == id) {
        SCHED__SBY(r)[i] = SCHED__SBY(r)[--r->nsb];
        break;
      }
    sched_decision d = {.type = SCHED_D_UNSTANDBY, .job = jid, .run = run, .gpu = id, .reason = SCHED_R_GPU_LOST};
    sched__emit(s, &d);
    sched__refill_standby(s, jid, r);
    return 0;
  }
  unsigned slot = 0;
  while (slot < r->n && SCHED__MEMB(r)[slot] != id) slot++;
  if (j->kind == SCHED_JOB_SERVICE) {
    SCHED__MEMB(r)[slot] = SCHED__MEMB(r)[--r->n];
    r->ckpt_c = -1; /* members changed: the checkpoint cost is recomputed */
    uint32_t gone = id;
    sched_decision d = {.type = SCHED_D_SCALE,
                        .job = jid,
                        .run = run,
                        .value = r->n,
                        .gpus = &gone,
                        .ngpus = 1,
                        .reason = SCHED_R_GPU_LOST};
    sched__emit(s, &d);
    s->cnt.scale_events++;
    return sched__service_fill(s, jid);
  }
  if (sched_ft_replaces_lost(SCHED__FT(s, j))) {
    /* N+k: promote a standby at once, else take an idle GPU; the newcomer loads the job's state
     * from its peers (ckpt_bytes over its link) while the run waits. */
    uint32_t nid = SCHED__NIL;
    if (sched__scratch_reserve(s, 1)) return SCHED_ENOMEM;
    if (r->nsb) {
      nid = SCHED__SBY(r)[--r->nsb];
    } else if (sched__select(s, sched__spec_of(s, jid, &(sched_job_spec){0}, 1), 1, s->scratch) == 0) {
      nid = s->scratch[0];
      sched__employ(s, nid, jid, r, SCHED_GPU_STANDBY);
    }
    if (nid != SCHED__NIL) {
      s->gpus[nid].state = SCHED_GPU_BUSY;
      SCHED__MEMB(r)[slot] = nid;
      r->ckpt_c = -1; /* members changed: the checkpoint cost is recomputed */
      r->rate = sched__run_rate(s, j, r);
      j->replacements++;
      s->cnt.replacements++;
      sched_decision d = {.type = SCHED_D_REPLACE,
                          .job = jid,
                          .run = run,
                          .gpu = nid,
                          .old_gpu = id,
                          .reason = SCHED_R_GPU_LOST,
                          .value = sched_net_transfer_time(&s->cfg.net, sched__lnk(s, sched__pf(s, &s->gpus[nid])),
                                                           SCHED__CLS(s, j)->ckpt_bytes)};
      r->last_t = fmax(r->last_t, s->now) + d.value; /* the run waits for the newcomer */
      sched__emit(s, &d);
      sched__refill_standby(s, jid, r);
      return 0;
    }
  }
  /* The run cannot go on without the member: remove it and interrupt the run. */
  SCHED__MEMB(r)[slot] = SCHED__MEMB(r)[--r->n];
  r->ckpt_c = -1; /* members changed: the checkpoint cost is recomputed */
  int rc = sched__interrupt(s, jid, r, SCHED_R_GPU_LOST);
  if (rc) return rc;
  return sched__schedule(s);
}

static uint64_t sched__itab_hash(const sched__itab *t, const void *r) {
  uint64_t w, h = 0x9e3779b97f4a7c15u;
  for (uint32_t o = 0; o < t->size; o += 8) {
    memcpy(&w, (const char *)r + o, 8);
    h = (h ^ w) * 0xff51afd7ed558ccdu, h ^= h >> 32;
  }
  return h;
}
static const void *sched__itab_at(const sched__itab *t, uint32_t k) {
  return (const char *)t->rec + (size_t)k * t->size;
}
/* Where record *r is in t's index (its slot; SCHED__NIL when the index is empty); *out = its id,
 * or SCHED__NIL when it is not there. */
static uint32_t sched__itab_find(const sched__itab *t, const void *r, uint32_t *out) {
  *out = SCHED__NIL;
  if (!t->ixcap) return SCHED__NIL;
  uint32_t h = (uint32_t)sched__itab_hash(t, r) & (t->ixcap - 1);
  for (; t->ix[h] != SCHED__NIL; h = (h + 1) & (t->ixcap - 1))
    if (!memcmp(sched__itab_at(t, t->ix[h]), r, t->size)) {
      *out = t->ix[h];
      break;
    }
  return h;
}
/* Rebuilds t's index at twice its size (16 at first). 0 or SCHED_ENOMEM (the index unchanged). */
static int sched__itab_grow_ix(sched__itab *t) {
  uint32_t nc = t->ixcap ? 2 * t->ixcap : 16;
  uint32_t *x = malloc((size_t)nc * sizeof *x);
  if (!x) return SCHED_ENOMEM;
  for (uint32_t i = 0; i < nc; i++) x[i] = SCHED__NIL;
  for (uint32_t k = t->first; k < t->n; k++) {
    uint32_t h = (uint32_t)sched__itab_hash(t, sched__itab_at(t, k)) & (nc - 1);
    while (x[h] != SCHED__NIL) h = (h + 1) & (nc - 1);
    x[h] = k;
  }
  free(t->ix);
  t->ix = x;
  t->ixcap = nc;
  return 0;
}
/* The id of record *r in t, added when new. 0, SCHED_ENOMEM, or SCHED_EINVAL when t holds `max`
 * indexed records already (nothing changed). */
static int sched__itab_id(sched__itab *t, const void *r, uint32_t max, uint32_t *out) {
  if (2 * (t->n + 1) > t->ixcap && sched__itab_grow_ix(t)) return SCHED_ENOMEM;
  uint32_t h = sched__itab_find(t, r, out);
  if (*out != SCHED__NIL) return 0;
  if (t->n - t->first >= max) return SCHED_EINVAL;
  if (t->n == t->cap) {
    uint32_t nc = t->cap ? 2 * t->cap : 8;
    void *p = realloc(t->rec, (size_t)nc * t->size);
    if (!p) return SCHED_ENOMEM;
    t->rec = p;
    t->cap = nc;
  }
  memcpy((char *)t->rec + (size_t)t->n * t->size, r, t->size);
  t->ix[h] = t->n;
  *out = t->n++;
  return 0;
}

/* The kind of GPU info *in, whose link is link. */
static sched__prof sched__prof_of(const sched_gpu_info *in, uint32_t link) {
  return (sched__prof){in->score, in->sectors, link, (uint16_t)in->node, in->region, in->grade, 0};
}
/* Kinds the core holds (kinds[0], made with the core, is no kind: the prof of a GPU that never
 * joined). */
static uint32_t sched__nkinds(const sched *s) { return s->kinds.n - s->kinds.first; }
/* 1 when a GPU of info *in would make the core hold more than cfg.max_kinds kinds. */
static int sched__prof_full(const sched *s, const sched_gpu_info *in) {
  if (sched__nkinds(s) < s->max_kinds) return 0;
  uint32_t link, id;
  sched__itab_find(&s->links, &in->link, &link);
  if (link == SCHED__NIL) return 1;
  sched__prof f = sched__prof_of(in, link);
  sched__itab_find(&s->kinds, &f, &id);
  return id == SCHED__NIL;
}

static int sched__gpu_join(sched *s, uint32_t id, const sched_gpu_info *in) {
  sched__gpu *g = &s->gpus[id];
  if (g->state != SCHED_GPU_ABSENT) return SCHED_ESTATE;
  uint32_t link;
  int rc = sched__itab_id(&s->links, &in->link, UINT32_MAX, &link);
  if (rc) return rc;
  sched__prof f = sched__prof_of(in, link);
  uint32_t prof;
  rc = sched__itab_id(&s->kinds, &f, s->max_kinds, &prof); /* (sched__prof_full refused a kind more) */
  if (rc) return rc;
  if (in->host || s->gcold) { /* 0, alone, is what a core without the table reads */
    sched__gcold *c = sched__cold_w(s, id);
    if (!c) return SCHED_ENOMEM;
    c->host = in->host;
  }
  g->provider = in->provider;
  g->prof = prof;
  g->price_per_h = in->price_per_h;
  g->slowed = 0;
  sched__provider *p = &s->prov[in->provider];
  if (p->t < 0) { /* its first GPU */
    if (in->stake != 0 || in->provider < s->nstake) {
      rc = sched__stake_set(s, in->provider, in->stake);
      if (rc) return rc;
    }
    p->t = s->now;
  }
  return 0;
}

/* The GPU is (back) in the pool: heartbeat tracking, down-time slashing, then scheduling. */
/* Arms GPU id's heartbeat timer: it is lost unless a heartbeat comes within the timeout (a new
 * sequence number, so that the timer an earlier heartbeat armed never matches). */
static int sched__hb_arm(sched *s, uint32_t id) {
  sched__gcold *c = sched__cold_w(s, id);
  if (!c) return SCHED_ENOMEM;
  return sched__timer_push(s, s->now + s->cfg.heartbeat_timeout_s, SCHED__T_HB, id, 0, ++c->hb_seq);
}

static int sched__gpu_up(sched *s, uint32_t id) {
  sched__gpu *g = &s->gpus[id];
  if (g->lost_employed) {
    /* Staking: down time of a GPU that left while employed is slashed per hour when it returns
     * (NGPU's incentive to stay online; rate is a scenario parameter). */
    sched__slash(s, g->provider, s->cfg.slash_per_down_hour * (s->now - g->since) / 3600.0);
    g->lost_employed = 0;
  }
  int rc = sched__idle_add(s, id);
  if (rc) return rc;
  g->job = SCHED__NIL;
  if (s->cfg.heartbeat_timeout_s > 0) {
    rc = sched__hb_arm(s, id);
    if (rc) return rc;
  }
  return sched__schedule(s);
}

static int sched__gpu_degrade(sched *s, uint32_t id, double f) {
  sched__gpu *g = &s->gpus[id];
  if (f == 1.0) { /* as advertised: what a GPU that never reported reads */
    g->slowed = 0;
  } else {
    sched__gcold *c = sched__cold_w(s, id);
    if (!c) return SCHED_ENOMEM;
    c->speed = f;
    g->slowed = 1;
  }
  if (g->state != SCHED_GPU_BUSY) return 0;
  sched__job *j = &s->jobs[g->job];
  sched__run *r = sched__run_at(j, g->rslot);
  if (!r) return SCHED_ESTATE;
  r->rate = sched__run_rate(s, j, r);
  if (f >= s->cfg.degrade_ratio || !sched_ft_replaces_degraded(SCHED__FT(s, j)) || !r->nsb ||
      j->kind != SCHED_JOB_BATCH)
    return 0;
  /* Replace the degraded member by a standby; the degraded GPU goes back to the pool, where its
   * speed factor lowers its selection weight. */
  uint32_t nid = SCHED__SBY(r)[--r->nsb];
  unsigned slot = 0;
  while (slot < r->n && SCHED__MEMB(r)[slot] != id) slot++;
  SCHED__MEMB(r)[slot] = nid;
  r->ckpt_c = -1; /* members changed: the checkpoint cost is recomputed */
  s->gpus[nid].state = SCHED_GPU_BUSY;
  r->rate = sched__run_rate(s, j, r);
  j->replacements++;
  s->cnt.replacements++;
  uint32_t jid = g->job;
  sched_decision d = {.type = SCHED_D_REPLACE,
                      .job = jid,
                      .run = r->id,
                      .gpu = nid,
                      .old_gpu = id,
                      .reason = SCHED_R_DEGRADED,
                      .value = sched_net_transfer_time(&s->cfg.net, sched__lnk(s, sched__pf(s, &s->gpus[nid])),
                                                       SCHED__CLS(s, j)->ckpt_bytes)};
  r->last_t = fmax(r->last_t, s->now) + d.value;
  sched__emit(s, &d);
  sched__release(s, id);
  sched__refill_standby(s, jid, r);
  return 0;
}

/* ---- Services ------------------------------------------------------------------------------- */
static double sched__svc_capacity(sched *s, sched__job *j, sched__run *r) {
  double sum = 0;
  for (unsigned i = 0; i < r->n; i++) sum += sched__power(s, &s->gpus[SCHED__MEMB(r)[i]]);
  double mean = r->n ? sum / r->n : 1.0; /* before any replica: one unit of score */
  return mean * SCHED__CLS(s, j)->req_per_score_s;
}

/* Brings a service to the replica count its load asks for (scale-up at once, scale-down only
 * after the cool-down). */
static int sched__service_fill(sched *s, uint32_t jid) {
  sched__job *j = &s->jobs[jid];
  sched__run *r = &j->runs[0];
  unsigned want = sched_autoscale_replicas(j->load, sched__svc_capacity(s, j, r), s->cfg.target_util,
                                           SCHED__CLS(s, j)->min_replicas, SCHED__CLS(s, j)->max_replicas);
  if (sched__scratch_reserve(s, want > r->n ? want - r->n : r->n)) return SCHED_ENOMEM;
  if (want > r->n) {
    unsigned add = want - r->n, got = 0;
    sched_job_spec sp;
    sched__spec_of(s, jid, &sp, 1);
    while (got < add && sched__select(s, &sp, 1, s->scratch + got) == 0) {
      sched__employ(s, s->scratch[got], jid, r, SCHED_GPU_BUSY);
      SCHED__MEMB(r)[r->n++] = s->scratch[got];
      r->ckpt_c = -1; /* members changed: the checkpoint cost is recomputed */
      got++;
    }
    if (got) {
      j->last_scale_t = s->now;
      s->cnt.scale_events++;
      sched_decision d = {
          .type = SCHED_D_SCALE, .job = jid, .run = r->id, .value = r->n, .gpus = s->scratch, .ngpus = got};
      sched__emit(s, &d);
    }
  } else if (want < r->n && s->now - j->last_scale_t >= s->cfg.cooldown_s) {
    unsigned drop = r->n - want;
    /* The slowest replicas go first. */
    for (unsigned k = 0; k < drop; k++) {
      unsigned worst = 0;
      for (unsigned i = 1; i < r->n; i++) {
        const sched__gpu *a = &s->gpus[SCHED__MEMB(r)[i]], *b = &s->gpus[SCHED__MEMB(r)[worst]];
        if (sched__power(s, a) < sched__power(s, b)) worst = i;
      }
      s->scratch[k] = SCHED__MEMB(r)[worst];
      SCHED__MEMB(r)[worst] = SCHED__MEMB(r)[--r->n];
      r->ckpt_c = -1; /* members changed: the checkpoint cost is recomputed */
    }
    j->last_scale_t = s->now;
    s->cnt.scale_events++;
    sched_decision d = {.type = SCHED_D_SCALE,
                        .job = jid,
                        .run = r->id,
                        .value = r->n,
                        .gpus = s->scratch,
                        .ngpus = drop,
                        .reason = SCHED_R_SCALE_DOWN};
    sched__emit(s, &d);
    for (unsigned k = 0; k < drop; k++) sched__release(s, s->scratch[k]);
  }
  return 0;
}

/* Pay per task (NGPU): cost = compute score x task duration x price_per_score_s. */
static int sched__task_done(sched *s, uint32_t jid, uint32_t gid, double dur) {
  sched__job *j = &s->jobs[jid];
  sched__gpu *g = &s->gpus[gid];
  if (g->state != SCHED_GPU_BUSY || g->job != jid) {
    s->cnt.stale_events++;
    return 0;
  }
  sched__ledger_split(s, j, g, sched__pf(s, g)->score * dur * s->cfg.price_per_score_s);
  return 0;
}

/* ---- Timers --------------------------------------------------------------------------------- */
static int sched__tick(sched *s) {
  while (s->nheap && s->heap[0].t <= s->now) {
    sched__timer tm = sched__timer_pop(s);
    if (tm.kind == SCHED__T_HB) {
      sched__gpu *g = &s->gpus[tm.a];
      if (sched__cold_r(s, tm.a)->hb_seq != tm.seq || g->state == SCHED_GPU_ABSENT) continue;
      int rc = sched__gpu_lost(s, tm.a);
      if (rc) return rc;
    } else if (tm.kind == SCHED__T_CKPT) {
      sched__job *j = &s->jobs[tm.a];
      sched__run *r = sched__run_find(s, j, tm.b);
      if (!r || r->ckpt_seq != tm.seq || r->in_ckpt) continue;
      double C;
      sched__ckpt_interval(s, j, r, &C);
      r->in_ckpt = 1;
      r->last_t = fmax(r->last_t, s->now) + C; /* a blocking checkpoint pauses progress */
      s->cnt.checkpoints++;
      sched_decision d = {.type = SCHED_D_CHECKPOINT, .job = tm.a, .run = tm.b, .value = C};
      sched__emit(s, &d);
    }
  }
  return 0;
}

double sched_next_wakeup(const sched *s) {
  /* Stale heap entries may wake the caller early; a TICK then does nothing. */
  return s->nheap ? s->heap[0].t : INFINITY;
}

/* ---- Jobs ----------------------------------------------------------------------------------- */
static int sched__job_grow(sched *s, uint32_t jid) {
  if (jid < s->njobs_cap) return 0;
  uint64_t nc = sched__grown(s->njobs_cap, jid, s->cfg.max_jobs); /* new slots are zeroed (touched) */
  sched__job *p = sim_bigmem_realloc(s->jobs, nc * sizeof *p);
  if (!p) return SCHED_ENOMEM;
  for (uint32_t i = 0; i < s->njobs_cap; i++) /* the records moved: so did their own run slots */
    if (p[i].runs && p[i].nruns <= 1) p[i].runs = &p[i].run0;
  memset(p + s->njobs_cap, 0, (nc - s->njobs_cap) * sizeof *p);
  s->jobs = p;
  s->njobs_cap = (uint32_t)nc;
  return 0;
}

/* A fault tolerance the core can run: a row of the policy table, settings in range, and no more
 * run slots or standbys than a job holds. */
static int sched__ft_valid(const sched_ft *ft) {
  if (!sched_ft_row_of((int)ft->policy) || (unsigned)ft->ckpt_rule > SCHED_CKPT_DALY || !(ft->ckpt_interval_s > 0) ||
      ft->standby_k > SCHED_MAX_STANDBY || ft->replicas < 1 || ft->replicas > SCHED_MAX_RUNS)
    return 0;
  return sched_ft_slots(ft) <= SCHED_MAX_RUNS && sched_ft_standbys(ft) <= SCHED_MAX_STANDBY;
}

/* A job spec is checked before the event changes anything (the clock, the counters). */
static int sched__spec_check(const sched *s, const sched_job_spec *sp) {
  if (sp->kind == SCHED_JOB_BATCH && (sp->width == 0 || !(sp->work > 0))) return SCHED_EINVAL;
  if (sp->kind == SCHED_JOB_SERVICE &&
      (sp->max_replicas == 0 || sp->min_replicas > sp->max_replicas || !(sp->req_per_score_s > 0)))
    return SCHED_EINVAL;
  if (sp->region >= (int32_t)s->cfg.nregions) return SCHED_EINVAL;
  if (s->cfg.node_queues && (sp->node < -1 || (sp->node >= 0 && (uint32_t)sp->node >= s->cfg.max_nodes)))
    return SCHED_EINVAL;
  if (sp->ft && !sched__ft_valid(sp->ft)) return SCHED_EINVAL;
  if (sp->ncand && !sp->cand) return SCHED_EINVAL;
  return 0;
}

static int sched__job_arrive(sched *s, uint32_t jid, const sched_job_spec *sp) {
  int rc = sched__job_grow(s, jid);
  if (rc) return rc;
  sched__job *j = &s->jobs[jid];
  if (j->state != SCHED_JOB_UNKNOWN) return SCHED_ESTATE;
  sched__runs_free(j);             /* a forgotten job's buffers */
  uint32_t next_run = j->next_run; /* run ids go on across the id's lives: the timers and late */
  memset(j, 0, sizeof *j);         /* reports of a forgotten job stay stale for the new one */
  j->next_run = next_run;
  sched_ft ft = sp->ft ? *sp->ft : (sched_ft){s->cfg.policy,    s->cfg.ckpt_rule, s->cfg.ckpt_interval_s,
                                              s->cfg.standby_k, s->cfg.replicas,  s->cfg.max_restarts};
  rc = sched__spec_intern(s, sp, &ft, &j->cls);
  if (rc) return rc;
  j->kind = (uint8_t)sp->kind;
#define SCHED__FROM_SPEC(f) j->f = sp->f;
  SCHED__JOB_OWN(SCHED__FROM_SPEC)
#undef SCHED__FROM_SPEC
  s->cand_job = jid; /* its candidates, for the placement tried now */
  s->cand = sp->cand;
  s->ncand = sp->ncand;
  j->submit = s->now;
  j->start = -1;
  j->end = -1;
  j->qprev = j->qnext = SCHED__NIL;
  s->arrived++;
  s->cnt.jobs_arrived++;
  if (sp->kind == SCHED_JOB_SERVICE) {
    if (sched__runs_alloc(j, 1)) return SCHED_ENOMEM;
    sched__run *r = &j->runs[0];
    if (sched__run_room(r, sp->max_replicas, 0)) return SCHED_ENOMEM;
    r->id = j->next_run++;
    r->active = 1;
    r->start = s->now;
    r->ckpt_c = -1;
    j->state = SCHED_JOB_RUNNING;
    j->start = s->now;
    j->last_scale_t = -INFINITY;
    rc = sched__service_fill(s, jid);
    s->cand_job = SCHED__NIL;
    return rc;
  }
  if (sp->hold) {
    /* Placed now (on its candidates when it names some) or handed back at once. */
    rc = sched__place_run(s, jid, 0);
    s->cand_job = SCHED__NIL;
    if (rc < -1) return rc;
    if (rc == -1) {
      j->state = SCHED_JOB_RUNNING; /* so that ending it is counted like any other end */
      sched__end_job(s, jid, SCHED_R_RELEASED);
      return 0;
    }
    for (unsigned c = 1, nc = sched_ft_copies(SCHED__FT(s, j)); c < nc; c++)
      if (sched__place_run(s, jid, 0) != 0) break;
    return 0;
  }
  j->state = SCHED_JOB_QUEUED;
  sched__queue_push(s, jid, 0);
  rc = sched__schedule(s);
  s->cand_job = SCHED__NIL; /* the candidates were the caller's for this event only */
  return rc;
}

/* The caller takes a job back: every run stops, the job ends with the work it had saved. */
static int sched__job_withdraw(sched *s, uint32_t jid) {
  sched__job *j = &s->jobs[jid];
  if (j->state == SCHED_JOB_ENDED) {
    s->cnt.stale_events++;
    return 0;
  }
  if (j->runs)
    for (unsigned k = 0; k < j->nruns; k++)
      if (j->runs[k].active) sched__stop_run(s, jid, &j->runs[k], SCHED_R_PREEMPTED);
  if (!sched_ft_checkpoints(SCHED__FT(s, j))) j->saved_work = 0;
  sched__end_job(s, jid, SCHED_R_WITHDRAWN);
  return sched__schedule(s);
}

static int sched__job_finish(sched *s, uint32_t jid, sched__run *win) {
  sched__job *j = &s->jobs[jid];
  for (unsigned k = 0; k < j->nruns; k++)
    if (j->runs[k].active && &j->runs[k] != win) sched__stop_run(s, jid, &j->runs[k], SCHED_R_CANCELLED);
  for (unsigned i = 0; i < win->n; i++) sched__release(s, SCHED__MEMB(win)[i]);
  for (unsigned i = 0; i < win->nsb; i++) sched__release(s, SCHED__SBY(win)[i]);
  win->active = 0;
  win->n = win->nsb = 0;
  win->ckpt_seq++;
  j->saved_work = j->work;
  sched__end_job(s, jid, SCHED_R_COMPLETED);
  return sched__schedule(s);
}

/* Progress report: a run whose observed rate falls under slow_ratio x its expected rate is slow
 * (degradation detected by progress rate). SPECULATIVE then starts one backup copy of the job
 * (Dean & Ghemawat 2004's backup tasks; LATE, Zaharia et al. 2008, for the rate test). */
static int sched__progress(sched *s, uint32_t jid, sched__run *r, double work) {
  sched__job *j = &s->jobs[jid];
  if (s->now <= r->last_t) return 0; /* staging, checkpoint or recovery: nothing to judge */
  /* with contention, the expected rate moves with the host's other busy GPUs */
  if (s->cfg.cluster.ncoloc > 0) r->rate = sched__run_rate(s, j, r);
  double dt = s->now - r->last_t;
  if (dt > 0 && r->rate > 0) {
    double obs = (work - r->last_work) / dt;
    r->slow = obs < s->cfg.slow_ratio * r->rate;
  }
  r->last_t = s->now;
  r->last_work = work;
  if (r->slow && sched_ft_backs_up_slow(SCHED__FT(s, j)) && !j->speculated && !r->backup &&
      sched__active_runs(j) == 1) {
    int rc = sched__place_run(s, jid, 1);
    if (rc < -1) return rc;
    if (rc == 0) {
      j->speculated = 1;
      s->cnt.speculations++;
    }
  }
  return 0;
}

/* ---- Dispatch ------------------------------------------------------------------------------- */
static int sched__check_gpu(const sched *s, uint32_t id) { return id < s->cfg.max_gpus ? 0 : SCHED_EINVAL; }

static int sched__run_event(sched *s, const sched_event *ev, sched__job **jp, sched__run **rp) {
  if (ev->job >= s->njobs_cap || s->jobs[ev->job].state == SCHED_JOB_UNKNOWN) return SCHED_EINVAL;
  *jp = &s->jobs[ev->job];
  *rp = (*jp)->state == SCHED_JOB_RUNNING ? sched__run_find(s, *jp, ev->run) : NULL;
  if (!*rp) s->cnt.stale_events++;
  return 0;
}

static int sched__handle(sched *s, const sched_event *ev);

int sched_handle(sched *s, const sched_event *ev) {
  if (!s || !ev) return SCHED_EINVAL;
  int rc = sched__handle(s, ev);
  if (s->oom) {
    s->oom = 0;
    rc = SCHED_ENOMEM;
  }
  sched__flush(s);
  return rc;
}

static int sched__handle(sched *s, const sched_event *ev) {
  if (!isfinite(ev->t)) return SCHED_EINVAL;
  if (ev->t < s->now) return SCHED_ETIME;
  if ((unsigned)ev->type >= SCHED_EV_COUNT) return SCHED_EINVAL;
  /* Validate before changing anything. */
  switch (ev->type) {
  case SCHED_EV_GPU_JOIN: {
    const sched_gpu_info *in = &ev->u.gpu;
    if (sched__check_gpu(s, ev->gpu) || in->provider >= s->cfg.max_providers || in->node >= s->cfg.max_nodes ||
        in->region >= s->cfg.nregions || in->grade >= s->cfg.ngrades || !(in->score > 0) || !(in->price_per_h >= 0) ||
        !(in->link.loss >= 0 && in->link.loss < 1) || !(in->link.bw_bps > 0) || !(in->link.rtt_s >= 0) ||
        sched__prof_full(s, in))
      return SCHED_EINVAL;
    break;
  }
  case SCHED_EV_GPU_LEAVE:
  case SCHED_EV_GPU_MISSED:
  case SCHED_EV_HEARTBEAT:
    if (sched__check_gpu(s, ev->gpu)) return SCHED_EINVAL;
    break;
  case SCHED_EV_GPU_DEGRADE:
    if (sched__check_gpu(s, ev->gpu) || !(ev->value > 0)) return SCHED_EINVAL;
    break;
  case SCHED_EV_JOB_ARRIVE:
    if (ev->job >= s->cfg.max_jobs) return SCHED_EINVAL;
    if (ev->job < s->njobs_cap && s->jobs[ev->job].state != SCHED_JOB_UNKNOWN) return SCHED_ESTATE;
    if (sched__spec_check(s, &ev->u.job)) return SCHED_EINVAL;
    break;
  case SCHED_EV_GPU_FORGET:
    if (sched__check_gpu(s, ev->gpu)) return SCHED_EINVAL;
    if (!sched__known(&s->gpus[ev->gpu]) || s->gpus[ev->gpu].state != SCHED_GPU_ABSENT) return SCHED_ESTATE;
    break;
  case SCHED_EV_JOB_WITHDRAW:
  case SCHED_EV_JOB_FORGET:
    if (ev->job >= s->njobs_cap || s->jobs[ev->job].state == SCHED_JOB_UNKNOWN) return SCHED_EINVAL;
    if (ev->type == SCHED_EV_JOB_FORGET && s->jobs[ev->job].state != SCHED_JOB_ENDED) return SCHED_ESTATE;
    break;
  case SCHED_EV_LOAD:
  case SCHED_EV_TASK_DONE:
    if (ev->job >= s->njobs_cap || s->jobs[ev->job].kind != SCHED_JOB_SERVICE ||
        s->jobs[ev->job].state != SCHED_JOB_RUNNING || !(ev->value >= 0))
      return SCHED_EINVAL;
    if (ev->type == SCHED_EV_TASK_DONE && sched__check_gpu(s, ev->gpu)) return SCHED_EINVAL;
    break;
  default: break;
  }
  if (ev->type <= SCHED_EV_HEARTBEAT || ev->type == SCHED_EV_TASK_DONE) {
    if (sched__gpus_reserve(s, ev->gpu)) return SCHED_ENOMEM;
    if (ev->type == SCHED_EV_GPU_JOIN && sched__prov_reserve(s, ev->u.gpu.provider)) return SCHED_ENOMEM;
  }
  if ((ev->type == SCHED_EV_GPU_DEGRADE || ev->type == SCHED_EV_HEARTBEAT) && !sched__known(&s->gpus[ev->gpu]))
    return SCHED_ESTATE;
  if (ev->type == SCHED_EV_GPU_JOIN && s->gpus[ev->gpu].state != SCHED_GPU_ABSENT) return SCHED_ESTATE;
  s->now = ev->t;
  s->cnt.events++;
  sched__job *j;
  sched__run *r;
  int rc = 0;
  switch (ev->type) {
  case SCHED_EV_GPU_JOIN:
    rc = sched__gpu_join(s, ev->gpu, &ev->u.gpu);
    if (!rc) rc = sched__gpu_up(s, ev->gpu);
    break;
  case SCHED_EV_GPU_LEAVE:
  case SCHED_EV_GPU_MISSED: rc = sched__gpu_lost(s, ev->gpu); break;
  case SCHED_EV_HEARTBEAT: {
    sched__gpu *g = &s->gpus[ev->gpu];
    if (g->state == SCHED_GPU_ABSENT) {
      /* A heartbeat after its timeout: the GPU is back, as a fresh idle GPU; the job it held
       * has been dealt with already. */
      s->cnt.stale_events++;
      g->slowed = 0;
      rc = sched__gpu_up(s, ev->gpu);
    } else if (s->cfg.heartbeat_timeout_s > 0) {
      rc = sched__hb_arm(s, ev->gpu);
    }
    break;
  }
  case SCHED_EV_GPU_DEGRADE: rc = sched__gpu_degrade(s, ev->gpu, ev->value); break;
  case SCHED_EV_TICK: rc = sched__tick(s); break;
  case SCHED_EV_JOB_ARRIVE: rc = sched__job_arrive(s, ev->job, &ev->u.job); break;
  case SCHED_EV_JOB_PROGRESS:
    rc = sched__run_event(s, ev, &j, &r);
    if (!rc && r) rc = sched__progress(s, ev->job, r, ev->value);
    break;
  case SCHED_EV_JOB_FINISH:
    rc = sched__run_event(s, ev, &j, &r);
    if (!rc && r) rc = sched__job_finish(s, ev->job, r);
    break;
  case SCHED_EV_JOB_FAIL:
    rc = sched__run_event(s, ev, &j, &r);
    if (!rc && r) {
      rc = sched__interrupt(s, ev->job, r, SCHED_R_APP_FAILED);
      if (!rc) rc = sched__schedule(s);
    }
    break;
  case SCHED_EV_CKPT_DONE:
    rc = sched__run_event(s, ev, &j, &r);
    if (!rc && r) {
      if (s->cfg.ckpt_analytic) { /* the caller's report of its plan's progress */
        if (ev->value > j->saved_work) j->saved_work = ev->value < j->work ? ev->value : j->work;
        break;
      }
      if (!r->in_ckpt) {
        s->cnt.stale_events++;
        break;
      }
      r->in_ckpt = 0;
      if (ev->value > j->saved_work) j->saved_work = ev->value < j->work ? ev->value : j->work;
      sched__arm_ckpt(s, j, r, 0);
    }
    break;
  case SCHED_EV_BILLING:
    for (uint32_t i = 0; i < s->gpu_cap; i++) sched__bill(s, i, 1);
    break;
  case SCHED_EV_LOAD:
    s->jobs[ev->job].load = ev->value;
    rc = sched__service_fill(s, ev->job);
    break;
  case SCHED_EV_TASK_DONE: rc = sched__task_done(s, ev->job, ev->gpu, ev->value); break;
  case SCHED_EV_JOB_WITHDRAW: rc = sched__job_withdraw(s, ev->job); break;
  case SCHED_EV_JOB_FORGET: {
    /* Counted as arrived and ended no more; its run ids go on when the id arrives again. */
    sched__job *fj = &s->jobs[ev->job];
    s->arrived--;
    s->ended--;
    s->forgotten++;
    fj->state = SCHED_JOB_UNKNOWN;
    break;
  }
  case SCHED_EV_GPU_FORGET: {
    /* Absent: in no idle queue, no run, no standby list. Its heartbeat sequence goes on, so
     * that a timer still pending for the old GPU never matches the new one. */
    sched__gpu *g = &s->gpus[ev->gpu];
    memset(g, 0, sizeof *g);
    g->job = SCHED__NIL;
    if (s->gcold) {
      uint32_t hb = s->gcold[ev->gpu].hb_seq;
      memset(&s->gcold[ev->gpu], 0, sizeof s->gcold[ev->gpu]);
      s->gcold[ev->gpu].hb_seq = hb;
    }
    break;
  }
  default: break;
  }
  return rc;
}

double sched_provider_reputation(const sched *s, uint32_t provider, double t, double *stake) {
  if (stake) *stake = 0;
  if (!s || provider >= s->prov_cap || s->prov[provider].t < 0) return NAN;
  if (stake) *stake = sched__stake(s, provider);
  return sched__rep(s, provider, t);
}

/* ---- Life cycle ----------------------------------------------------------------------------- */
int sched_create(const sched_config *cfg, sched **out) {
  *out = NULL;
  if (!cfg || !cfg->sink || cfg->max_gpus == 0 || cfg->max_gpus >= SCHED__NIL || cfg->max_providers == 0 ||
      cfg->max_nodes == 0 || cfg->max_nodes > SCHED_MAX_NODES || cfg->max_jobs == 0 || cfg->max_jobs >= SCHED__NIL ||
      cfg->nregions == 0 || cfg->ngrades == 0 || cfg->nregions > 65535 || cfg->ngrades > 65535 ||
      !sched__ft_valid(&(sched_ft){cfg->policy, cfg->ckpt_rule, cfg->ckpt_interval_s, cfg->standby_k, cfg->replicas,
                                   cfg->max_restarts}) ||
      !(cfg->ckpt_interval_s > 0) || !(cfg->gpu_mtbf_s > 0) || cfg->replicas < 1 || cfg->replicas > SCHED__MAX_RUNS ||
      cfg->standby_k > 64 || cfg->sample == 0 || !(cfg->platform_fee >= 0) || !(cfg->node_fee >= 0) ||
      cfg->platform_fee + cfg->node_fee > 1 || !(cfg->delegation_fee >= 0 && cfg->delegation_fee <= 1) ||
      !(cfg->target_util > 0 && cfg->target_util <= 1) || cfg->heartbeat_timeout_s < 0 ||
      !(cfg->net.packet_bits >= 1) ||
      (cfg->node_queues && (uint64_t)cfg->max_nodes * cfg->nregions * cfg->ngrades > SCHED__MAX_QUEUES) ||
      cfg->max_kinds > SCHED_MAX_KINDS)
    return SCHED_EINVAL;
  sched *s = calloc(1, sizeof *s);
  if (!s) return SCHED_ENOMEM;
  s->cfg = *cfg;
  s->max_kinds = cfg->max_kinds ? cfg->max_kinds : SCHED_MAX_KINDS;
  s->qhead = s->qtail = SCHED__NIL;
  s->cand_job = SCHED__NIL;
  uint64_t x = cfg->seed;
  for (int i = 0; i < 4; i++) s->rng[i] = sim_splitmix64(&x);
  size_t nb = sched__nbuckets(s);
  s->node_income = calloc(cfg->max_nodes, sizeof *s->node_income);
  s->buckets = calloc(nb, sizeof *s->buckets);
  s->bsel = malloc(nb * sizeof *s->bsel);
  s->bcum = malloc(nb * sizeof *s->bcum);
  s->links = (sched__itab){.size = sizeof(sched_link)};
  s->kinds =
      (sched__itab){.rec = calloc(8, sizeof(sched__prof)), .size = sizeof(sched__prof), .n = 1, .cap = 8, .first = 1};
  if (!s->bsel || !s->bcum || !s->node_income || !s->buckets || !s->kinds.rec || sched__scratch_reserve(s, 16)) {
    sched_destroy(s);
    return SCHED_ENOMEM;
  }
  *out = s;
  return 0;
}

void sched_destroy(sched *s) {
  if (!s) return;
  for (uint32_t i = 0; i < s->njobs_cap; i++) sched__runs_free(&s->jobs[i]);
  if (s->buckets)
    for (size_t b = 0; b < sched__nbuckets(s); b++) free(s->buckets[b].v);
  free(s->buckets);
  free(s->jobs);
  free(s->specs);
  free(s->spec_hash);
  free(s->gpus_block);
  free(s->gcold);
  free(s->seen);
  free(s->prov);
  free(s->stake);
  free(s->node_income);
  free(s->heap);
  free(s->deficit.v);
  free(s->scratch);
  free(s->kscratch);
  free(s->sp_scratch);
  free(s->ln_scratch);
  free(s->links.rec);
  free(s->links.ix);
  free(s->kinds.rec);
  free(s->kinds.ix);
  free(s->pend);
  free(s->pool);
  free(s->bsel);
  free(s->bcum);
  free(s);
}

/* ---- Queries -------------------------------------------------------------------------------- */
int sched_gpu_query(const sched *s, uint32_t gpu, double t, sched_gpu_status *out) {
  if (!s || gpu >= s->cfg.max_gpus) return SCHED_EINVAL;
  memset(out, 0, sizeof *out);
  if (gpu >= s->gpu_cap) return 0; /* never seen: absent */
  const sched__gpu *g = &s->gpus[gpu];
  out->state = (sched_gpu_state)g->state;
  out->job = g->job;
  const sched__run *r = g->job < s->njobs_cap ? sched__run_at(&s->jobs[g->job], g->rslot) : NULL;
  out->run = r ? r->id : SCHED__NIL;
  out->speed = sched__known(g) ? sched__speed(s, g) : 0; /* (0 for a GPU that never joined, as before) */
  if (sched__known(g)) {
    out->reputation = sched__rep(s, g->provider, t);
    out->stake = sched__stake(s, g->provider);
  }
  return 0;
}

int sched_job_query(const sched *s, uint32_t job, sched_job_status *out) {
  if (!s) return SCHED_EINVAL;
  memset(out, 0, sizeof *out);
  if (job >= s->njobs_cap || s->jobs[job].state == SCHED_JOB_UNKNOWN) {
    out->state = SCHED_JOB_UNKNOWN;
    return job < s->cfg.max_jobs ? 0 : SCHED_EINVAL;
  }
  const sched__job *j = &s->jobs[job];
  out->state = (sched_job_state)j->state;
  out->outcome = (sched_reason)j->outcome;
  out->submit = j->submit;
  out->start = j->start;
  out->end = j->end;
  out->runs_active = sched__active_runs(j);
  out->restarts = j->restarts;
  out->replacements = j->replacements;
  out->saved_work = j->saved_work;
  out->gpu_seconds = j->gpu_seconds;
  out->cost = j->cost;
  if (j->runs)
    for (unsigned k = 0; k < j->nruns; k++)
      if (j->runs[k].active) {
        if (out->expected_rate == 0) out->expected_rate = j->runs[k].rate;
        if (j->kind == SCHED_JOB_SERVICE) out->replicas = j->runs[k].n;
      }
  return 0;
}

int sched_run_members(const sched *s, uint32_t job, uint32_t run, uint32_t *gpus, unsigned cap) {
  if (!s || job >= s->njobs_cap) return SCHED_EINVAL;
  const sched__job *j = &s->jobs[job];
  if (!j->runs) return SCHED_EINVAL;
  for (unsigned k = 0; k < j->nruns; k++)
    if (j->runs[k].active && j->runs[k].id == run) {
      for (unsigned i = 0; i < j->runs[k].n && i < cap; i++) gpus[i] = SCHED__MEMB(&j->runs[k])[i];
      return (int)j->runs[k].n;
    }
  return SCHED_EINVAL;
}

void sched_ledger_get(const sched *s, sched_ledger *out) { *out = s->ledger; }
void sched_prefetch_job(const sched *s, uint32_t job) {
  if (job < s->njobs_cap) { /* the whole record: a checkpoint or a finish reads most of it */
    const char *p = (const char *)&s->jobs[job];
    for (size_t o = 0; o < sizeof(sched__job); o += 64) __builtin_prefetch(p + o);
    __builtin_prefetch(p + sizeof(sched__job) - 1);
  }
}
void sched_prefetch_gpu(const sched *s, uint32_t gpu) {
  if (gpu < s->gpu_cap) { __builtin_prefetch(&s->gpus[gpu]); }
}
void sched_prefetch_due(const sched *s) {
  if (s->nheap && s->heap[0].kind == SCHED__T_CKPT) sched_prefetch_job(s, s->heap[0].a);
}
uint64_t sched_node_idle(const sched *s, uint32_t node, unsigned min_grade) {
  if (!s->cfg.node_queues || node >= s->cfg.max_nodes) return 0;
  uint64_t n = 0;
  for (unsigned r = 0; r < s->cfg.nregions; r++)
    for (unsigned g = min_grade; g < s->cfg.ngrades; g++) n += s->buckets[sched__bucket(s, node, r, g)].n;
  return n;
}
double sched_node_income(const sched *s, uint32_t node) {
  return node < s->cfg.max_nodes ? s->node_income[node] : -1.0;
}
void sched_counters_get(const sched *s, sched_counters *out) { *out = s->cnt; }

/* ---- Invariants ----------------------------------------------------------------------------- */
static int sched__fail(char *msg, size_t len, const char *fmt, ...) {
  if (msg && len) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, len, fmt, ap);
    va_end(ap);
  }
  return -1;
}

int sched_check_invariants(const sched *s, char *msg, size_t len) {
  uint64_t idle = 0, busy = 0, standby = 0;
  for (size_t b = 0; b < sched__nbuckets(s); b++) {
    const sched__ivec *v = &s->buckets[b];
    idle += v->n;
    for (uint32_t i = 0; i < v->n; i++) {
      const sched__gpu *g = &s->gpus[v->v[i].id];
      if (g->state != SCHED_GPU_IDLE || g->pos != i || sched__bucket_of(s, g) != b)
        return sched__fail(msg, len, "idle queue %zu slot %u: gpu %u is not idle there", b, i, v->v[i].id);
      if (v->v[i].provider != g->provider)
        return sched__fail(msg, len, "idle queue %zu slot %u: gpu %u's provider %u, its record's %u", b, i, v->v[i].id,
                           v->v[i].provider, g->provider);
    }
  }
  if (idle != s->idle_total)
    return sched__fail(msg, len, "idle count %llu != %llu", (unsigned long long)idle,
                       (unsigned long long)s->idle_total);
  for (uint32_t i = 0; i < s->gpu_cap; i++) {
    const sched__gpu *g = &s->gpus[i];
    if (g->state == SCHED_GPU_BUSY || g->state == SCHED_GPU_STANDBY) {
      if (g->job >= s->njobs_cap) return sched__fail(msg, len, "gpu %u employed by unknown job", i);
      const sched__job *j = &s->jobs[g->job];
      const sched__run *r = sched__run_at(j, g->rslot);
      if (!r || j->state != SCHED_JOB_RUNNING)
        return sched__fail(msg, len, "gpu %u employed by job %u run slot %u, which is not running", i, g->job,
                           (unsigned)g->rslot);
      unsigned seen = 0;
      const uint32_t *list = g->state == SCHED_GPU_BUSY ? SCHED__MEMB(r) : SCHED__SBY(r);
      unsigned n = g->state == SCHED_GPU_BUSY ? r->n : r->nsb;
      for (unsigned m = 0; m < n; m++) seen += list[m] == i;
      if (seen != 1) return sched__fail(msg, len, "gpu %u appears %u times in job %u run %u", i, seen, g->job, r->id);
      if (s->cfg.node_queues && j->node >= 0 && sched__pf(s, g)->node != (uint32_t)j->node)
        return sched__fail(msg, len, "gpu %u of node %u employed by job %u of node %d", i, sched__pf(s, g)->node,
                           g->job, j->node);
      if (g->state == SCHED_GPU_BUSY)
        busy++;
      else
        standby++;
    }
  }
  uint64_t members = 0, sbs = 0, queued = 0, running = 0, ended = 0;
  for (uint32_t i = 0; i < s->njobs_cap; i++) {
    const sched__job *j = &s->jobs[i];
    if (j->state == SCHED_JOB_UNKNOWN) continue;
    unsigned act = sched__active_runs(j);
    if (j->runs)
      for (unsigned k = 0; k < j->nruns; k++)
        if (j->runs[k].active) {
          const sched__run *r = &j->runs[k];
          members += r->n;
          sbs += r->nsb;
          for (unsigned m = 0; m < r->n; m++) {
            const sched__gpu *g = &s->gpus[SCHED__MEMB(r)[m]];
            if (g->state != SCHED_GPU_BUSY || g->job != i || g->rslot != k)
              return sched__fail(msg, len, "job %u run %u lists gpu %u, which is not its member", i, r->id,
                                 SCHED__MEMB(r)[m]);
          }
          if (j->kind == SCHED_JOB_BATCH && r->n != j->width)
            return sched__fail(msg, len, "job %u run %u has %u members, wants %u", i, r->id, r->n, j->width);
        }
    switch (j->state) {
    case SCHED_JOB_QUEUED:
      queued++;
      if (!j->inq || act) return sched__fail(msg, len, "queued job %u: in queue %d, %u runs", i, j->inq, act);
      break;
    case SCHED_JOB_RUNNING:
      running++;
      if (j->inq) return sched__fail(msg, len, "running job %u is also queued", i);
      if (j->kind == SCHED_JOB_BATCH && act == 0)
        return sched__fail(msg, len, "job %u is running with no run (interrupted and not requeued)", i);
      break;
    case SCHED_JOB_ENDED:
      ended++;
      if (j->inq || act) return sched__fail(msg, len, "ended job %u: in queue %d, %u runs", i, j->inq, act);
      if (j->outcome != SCHED_R_COMPLETED && j->outcome != SCHED_R_GAVE_UP && j->outcome != SCHED_R_WITHDRAWN &&
          j->outcome != SCHED_R_RELEASED)
        return sched__fail(msg, len, "ended job %u has no reason", i);
      break;
    }
  }
  if (members != busy || sbs != standby)
    return sched__fail(msg, len, "members %llu vs busy GPUs %llu, standbys %llu vs %llu", (unsigned long long)members,
                       (unsigned long long)busy, (unsigned long long)sbs, (unsigned long long)standby);
  if (queued + running + ended != s->arrived || ended != s->ended ||
      ended + s->forgotten != s->cnt.jobs_completed + s->cnt.jobs_failed + s->cnt.jobs_released)
    return sched__fail(msg, len, "job count: %llu queued + %llu running + %llu ended != %llu arrived",
                       (unsigned long long)queued, (unsigned long long)running, (unsigned long long)ended,
                       (unsigned long long)s->arrived);
  uint64_t inq = 0;
  for (uint32_t q = s->qhead; q != SCHED__NIL; q = s->jobs[q].qnext)
    if (++inq > queued) break;
  if (inq != queued)
    return sched__fail(msg, len, "queue holds %llu jobs, %llu are queued", (unsigned long long)inq,
                       (unsigned long long)queued);
  const sched_ledger *l = &s->ledger;
  double parts = l->provider_income + l->node_income + l->delegate_income + l->platform_income;
  if (fabs(l->billed - parts) > 1e-9 * fmax(1.0, fabs(l->billed)))
    return sched__fail(msg, len, "ledger: billed %.12g != shares %.12g", l->billed, parts);
  return 0;
}
