/* test_sched.c - the scheduling core without any engine: known answers for its models, scripted
 * event streams for each fault-tolerance policy (failure at every step of a job's life, double
 * failures, a standby failing while promoted, a heartbeat back after its timeout), randomized
 * streams, and the invariants checked after every single event. */
#include "models/sched/sched.h"
#include "models/sched/sched_ft.h"

#include <CUnit/CUnit.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/randcase.h"

/* ---- Harness -------------------------------------------------------------------------------- */
#define MAXD 20000
typedef struct rec {
  sched_decision d[MAXD];
  uint32_t gpus[MAXD][8];
  size_t n;
  /* GPUs the core said it chose (sched_config.chosen) and no PLACE decision named yet, in order
   * (the decisions name them in that order, in the same event), and how many were named so far; the
   * counts of all told and of all members placed */
  uint32_t chosen[1024];
  unsigned nchosen, named;
  uint64_t told, placed;
} rec;

static sched *S;

/* Every decision is recorded, and the invariants are checked as each one arrives. */
static void sink(void *ctx, const sched_decision *d) {
  rec *r = ctx;
  if (S) {
    char msg[256];
    int inv = sched_check_invariants(S, msg, sizeof msg);
    if (inv) fprintf(stderr, "invariant broken at decision %d (job %u) t=%g: %s\n", d->type, d->job, d->t, msg);
    CU_ASSERT_EQUAL(inv, 0);
  }
  if (d->type == SCHED_D_PLACE) { /* its members were told as chosen (by a core told to), in order */
    r->placed += d->ngpus;
    for (unsigned i = 0; i < d->ngpus && r->nchosen; i++) {
      CU_ASSERT_FATAL(r->named < r->nchosen);
      CU_ASSERT_EQUAL(r->chosen[r->named], d->gpus[i]);
      if (++r->named == r->nchosen) r->named = r->nchosen = 0;
    }
  }
  if (r->n >= MAXD) return;
  r->d[r->n] = *d;
  for (unsigned i = 0; i < d->ngpus && i < 8; i++) r->gpus[r->n][i] = d->gpus[i];
  r->d[r->n].gpus = r->gpus[r->n];
  r->n++;
}

static rec *R;

static void chosen(void *ctx, uint32_t gpu) {
  rec *r = ctx;
  CU_ASSERT_FATAL(r->nchosen < sizeof r->chosen / sizeof *r->chosen);
  r->chosen[r->nchosen++] = gpu;
  r->told++;
}

static void setup(sched_policy p, void (*tweak)(sched_config *)) {
  R = calloc(1, sizeof *R);
  sched_config c;
  sched_config_default(&c);
  c.max_gpus = 64;
  c.max_providers = 64;
  c.max_nodes = 4;
  c.max_jobs = 1000;
  c.nregions = 2;
  c.ngrades = 2;
  c.sink = sink;
  c.sink_ctx = R;
  c.chosen = chosen;
  c.policy = p;
  c.ckpt_rule = SCHED_CKPT_FIXED;
  c.ckpt_interval_s = 100;
  c.net.mode = SCHED_NET_ARQ;
  if (tweak) tweak(&c);
  if (c.sink != sink) c.chosen = NULL; /* a test's own sink: chosen GPUs are checked against this one's */
  CU_ASSERT_FATAL(sched_create(&c, &S) == 0);
}
static void teardown(void) {
  sched_destroy(S);
  free(R);
  S = NULL;
  R = NULL;
}

/* Every event goes through here: the invariants are checked after each one. */
static int ev(sched_event e) {
  int rc = sched_handle(S, &e);
  char msg[256];
  int inv = sched_check_invariants(S, msg, sizeof msg);
  if (inv) fprintf(stderr, "invariant broken after event %d at t=%g: %s\n", e.type, e.t, msg);
  CU_ASSERT_EQUAL_FATAL(inv, 0);
  /* every GPU told as chosen was a member of a PLACE decision of this event */
  CU_ASSERT_EQUAL(R->nchosen, 0);
  R->named = R->nchosen = 0;
  return rc;
}

static sched_gpu_info ginfo(uint32_t provider, unsigned region, unsigned grade, double score) {
  sched_gpu_info g = {0};
  g.provider = provider;
  g.node = provider % 4;
  g.region = (uint16_t)region;
  g.grade = (uint16_t)grade;
  g.score = score;
  g.price_per_h = 1.0;
  g.stake = 10;
  g.link.bw_bps = 100e6;
  g.link.rtt_s = 0.05;
  g.link.loss = 0.0;
  return g;
}
static int join(double t, uint32_t id) {
  sched_event e = {.type = SCHED_EV_GPU_JOIN, .t = t, .gpu = id};
  e.u.gpu = ginfo(id, 0, 0, 1.0);
  return ev(e);
}
static int gev(sched_ev_type type, double t, uint32_t gpu, double v) {
  return ev((sched_event){.type = type, .t = t, .gpu = gpu, .value = v});
}
static int jev(sched_ev_type type, double t, uint32_t job, uint32_t run, double v) {
  return ev((sched_event){.type = type, .t = t, .job = job, .run = run, .value = v});
}
static sched_job_spec batch(unsigned width, double work) {
  sched_job_spec j = {0};
  j.kind = SCHED_JOB_BATCH;
  j.width = (uint16_t)width;
  j.region = -1;
  j.work = work;
  j.ckpt_bytes = 1e6;
  return j;
}
static int arrive(double t, uint32_t job, sched_job_spec sp) {
  sched_event e = {.type = SCHED_EV_JOB_ARRIVE, .t = t, .job = job};
  e.u.job = sp;
  return ev(e);
}
/* The last decision of a type (and its index), or NULL. */
static const sched_decision *last(sched_dec_type type) {
  for (size_t i = R->n; i-- > 0;)
    if (R->d[i].type == type) return &R->d[i];
  return NULL;
}
static unsigned count(sched_dec_type type) {
  unsigned n = 0;
  for (size_t i = 0; i < R->n; i++) n += R->d[i].type == type;
  return n;
}
static sched_job_status jstat(uint32_t job) {
  sched_job_status st;
  sched_job_query(S, job, &st);
  return st;
}
static sched_gpu_state gstate(uint32_t gpu) {
  sched_gpu_status st;
  sched_gpu_query(S, gpu, 0, &st);
  return st.state;
}

/* ---- Known answers: models ------------------------------------------------------------------ */
static void test_young_daly(void) {
  /* Young 1974: sqrt(2 C M); C = 60 s, M = 1 day. */
  CU_ASSERT_DOUBLE_EQUAL(sched_young_interval(60, 86400), sqrt(2.0 * 60 * 86400), 1e-9);
  CU_ASSERT_DOUBLE_EQUAL(sched_young_interval(50, 10000), 1000.0, 1e-9);
  /* Young's T minimizes the first-order waste per unit time C/T + T/(2M) (Young 1974, eq. 3):
   * the derivative -C/T^2 + 1/(2M) vanishes there, so nearby T waste strictly more. */
  double C = 50, M = 10000, T = sched_young_interval(C, M);
  double w0 = C / T + T / (2 * M);
  CU_ASSERT(C / (0.95 * T) + 0.95 * T / (2 * M) > w0);
  CU_ASSERT(C / (1.05 * T) + 1.05 * T / (2 * M) > w0);
  /* Daly 2006 eq. 37 at C = 50, M = 10000: x = C/2M = 0.0025,
   * sqrt(2CM) (1 + sqrt(x)/3 + x/9) - C = 1000 (1 + 0.05/3 + 0.0025/9) - 50. */
  CU_ASSERT_DOUBLE_EQUAL(sched_daly_interval(50, 10000), 1000.0 * (1 + 0.05 / 3 + 0.0025 / 9) - 50, 1e-9);
  /* Daly -> Young as C/M -> 0: the relative gap is sqrt(x)/3 + x/9 - C/T_young, O(sqrt(C/M)). */
  double C2 = 1, M2 = 1e8, y = sched_young_interval(C2, M2), d = sched_daly_interval(C2, M2);
  CU_ASSERT(fabs(d - y) / y < sqrt(C2 / (2 * M2)));
  /* C >= 2M: Daly says checkpoint every M. */
  CU_ASSERT_DOUBLE_EQUAL(sched_daly_interval(300, 100), 100, 0);
  CU_ASSERT_EQUAL(sched_young_interval(0, 100), 0);
}

static void test_beta(void) {
  CU_ASSERT_DOUBLE_EQUAL(sched_beta_expect(0, 0), 0.5, 0);
  CU_ASSERT_DOUBLE_EQUAL(sched_beta_expect(8, 2), 0.75, 1e-15);
  CU_ASSERT_DOUBLE_EQUAL(sched_beta_expect(0, 10), 1.0 / 12, 1e-15);
}

static void test_net(void) {
  sched_net_params np;
  sched_config c;
  sched_config_default(&c);
  np = c.net;
  np.mode = SCHED_NET_ARQ;
  CU_ASSERT_DOUBLE_EQUAL(sched_net_expected_tx(&np, 0.0), 1.0, 0);
  CU_ASSERT_DOUBLE_EQUAL(sched_net_expected_tx(&np, 0.5), 2.0, 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(sched_net_expected_tx(&np, 0.9), 10.0, 1e-9);
  /* HARQ with one transmission combined is plain ARQ. */
  np.mode = SCHED_NET_HARQ_CC;
  np.harq_max_tx = 1;
  CU_ASSERT_DOUBLE_EQUAL(sched_net_expected_tx(&np, 0.3), 1.0 / 0.7, 1e-12);
  /* Known answer at p = 0.5, L = 12000, m = 2, computed here independently with erfc:
   * BER1 = 1 - 0.5^(1/L); x = Qinv(BER1) found by bisection; P2 = 1 - (1 - Q(sqrt2 x))^L;
   * E = (1 + 0.5) / (1 - P2). */
  np.harq_max_tx = 2;
  double L = 12000, ber1 = 1 - pow(0.5, 1 / L), lo = 0, hi = 40;
  for (int i = 0; i < 200; i++) {
    double mid = 0.5 * (lo + hi);
    if (0.5 * erfc(mid / sqrt(2)) > ber1)
      lo = mid;
    else
      hi = mid;
  }
  double q2 = 0.5 * erfc(sqrt(2.0) * lo / sqrt(2.0));
  double P2 = 1 - pow(1 - q2, L);
  CU_ASSERT_DOUBLE_EQUAL(sched_net_expected_tx(&np, 0.5), 1.5 / (1 - P2), 1e-9);
  /* Soft combining never needs more transmissions than ARQ, and its advantage grows with p. */
  np.harq_max_tx = 4;
  double prev = 1;
  sched_net_params arq = np;
  arq.mode = SCHED_NET_ARQ;
  for (double p = 0.05; p < 0.999; p += 0.05) {
    double h = sched_net_expected_tx(&np, p), a = sched_net_expected_tx(&arq, p);
    CU_ASSERT(h <= a * (1 + 1e-12));
    CU_ASSERT(a / h >= prev * (1 - 1e-12));
    prev = a / h;
  }
  /* PFTK without loss is window-limited: Wmax / RTT packets/s, capped by the link. */
  np.mode = SCHED_NET_TCP;
  sched_link l = {1e9, 0.1, 0.0};
  CU_ASSERT_DOUBLE_EQUAL(sched_net_goodput(&np, &l), np.tcp_wmax / 0.1 * np.packet_bits, 1e-6);
  l.bw_bps = 1e6;
  CU_ASSERT_DOUBLE_EQUAL(sched_net_goodput(&np, &l), 1e6, 1e-9);
  /* PFTK with loss, by hand: p = 0.01, b = 2, RTT = 0.1, T0 = 1:
   * den = 0.1 sqrt(4 0.01/3) + 1 min(1, 3 sqrt(6 0.01/8)) 0.01 (1 + 32e-4). */
  l = (sched_link){1e9, 0.1, 0.01};
  double den = 0.1 * sqrt(2 * 2 * 0.01 / 3) + 1.0 * fmin(1, 3 * sqrt(3 * 2 * 0.01 / 8)) * 0.01 * (1 + 32e-4);
  CU_ASSERT_DOUBLE_EQUAL(sched_net_goodput(&np, &l), fmin(64 / 0.1, 1 / den) * 12000, 1e-6);
  /* Transfer time: half an RTT plus bits over goodput. */
  np.mode = SCHED_NET_ARQ;
  l = (sched_link){8e6, 0.2, 0.5};
  CU_ASSERT_DOUBLE_EQUAL(sched_net_transfer_time(&np, &l, 1e6), 0.1 + 8e6 / 4e6, 1e-12);
}

static void test_cluster(void) {
  sched_config c;
  sched_config_default(&c);
  sched_cluster_params cp = c.cluster;
  sched_net_params np = c.net;
  np.mode = SCHED_NET_ARQ;
  double sp[4] = {1, 1, 1, 0.5};
  sched_link ln[4];
  for (int i = 0; i < 4; i++) ln[i] = (sched_link){8e6, 0.0, 0.0};
  /* Step of 4 work units, no communication: even split waits for the 0.5-speed member:
   * (4/4)/0.5 = 2 s per step -> rate 2; weighted: 4/3.5 s -> rate 3.5. */
  cp.split = SCHED_SPLIT_EVEN;
  CU_ASSERT_DOUBLE_EQUAL(sched_cluster_rate(&cp, &np, sp, ln, 4, 4, 0), 2.0, 1e-12);
  cp.split = SCHED_SPLIT_WEIGHTED;
  CU_ASSERT_DOUBLE_EQUAL(sched_cluster_rate(&cp, &np, sp, ln, 4, 4, 0), 3.5, 1e-12);
  /* Dynamic: m = 16 chunks, h = 0.01: t = 4/3.5 + 4*0.01 + 0.5*(4/16)/(3.5/4). */
  cp.split = SCHED_SPLIT_DYNAMIC;
  double t = 4 / 3.5 + 4 * 0.01 + 0.5 * 0.25 / 0.875;
  CU_ASSERT_DOUBLE_EQUAL(sched_cluster_rate(&cp, &np, sp, ln, 4, 4, 0), 4 / t, 1e-12);
  /* Ring all-reduce of 1 MB on 8 Mbit/s links, 2 members, no latency: 2 (1/2) 8e6/8e6 = 1 s. */
  cp.split = SCHED_SPLIT_WEIGHTED;
  double sp2[2] = {1, 1};
  CU_ASSERT_DOUBLE_EQUAL(sched_cluster_rate(&cp, &np, sp2, ln, 2, 2, 1e6), 2.0 / (1.0 + 1.0), 1e-12);
  /* Efficiency from calibration scales compute only. */
  cp.weighted_eff = 0.5;
  CU_ASSERT_DOUBLE_EQUAL(sched_cluster_rate(&cp, &np, sp2, ln, 2, 2, 0), 1.0, 1e-12);
  /* More members on slow links can be slower than fewer: communication dominates. */
  cp.weighted_eff = 1;
  double r1 = sched_cluster_rate(&cp, &np, sp2, ln, 1, 2, 1e6), r2 = sched_cluster_rate(&cp, &np, sp2, ln, 2, 2, 1e6);
  CU_ASSERT(r2 < 2 * r1);
  /* The share of time spent communicating: 2 members of speed 1, a step of 2 work units (1 s of
   * computing, weighted), 1 MB all-reduced over 8 Mbit/s links of 20 ms RTT: t_comm = 2 (1/2)
   * 8e6 / 8e6 + 2 (2-1) 0.01 = 1.02 s, so the share is 1.02 / 2.02 and the rate 2 / 2.02. */
  sched_link ln2[2] = {{8e6, 0.02, 0.0}, {8e6, 0.02, 0.0}};
  double tcomp = -1, tcomm = -1;
  CU_ASSERT_DOUBLE_EQUAL(sched_cluster_step(&cp, &np, sp2, ln2, 2, 2, 1e6, &tcomp, &tcomm), 2.0 / 2.02, 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(tcomp, 1.0, 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(tcomm, 1.02, 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(tcomm / (tcomp + tcomm), 1.02 / 2.02, 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(sched_allreduce_time(&np, ln2, 2, 1e6), 1.02, 1e-12);
  /* the same rate as sched_cluster_rate, bit for bit */
  CU_ASSERT_EQUAL(sched_cluster_step(&cp, &np, sp2, ln2, 2, 2, 1e6, NULL, NULL),
                  sched_cluster_rate(&cp, &np, sp2, ln2, 2, 2, 1e6));
  /* one member, no bytes, or no synchronous step: nothing is communicated */
  sched_cluster_step(&cp, &np, sp2, ln2, 1, 2, 1e6, &tcomp, &tcomm);
  CU_ASSERT_EQUAL(tcomm, 0.0);
  sched_cluster_step(&cp, &np, sp2, ln2, 2, 2, 0, &tcomp, &tcomm);
  CU_ASSERT_EQUAL(tcomm, 0.0);
  sched_cluster_step(&cp, &np, sp2, ln2, 2, 0, 1e6, &tcomp, &tcomm);
  CU_ASSERT_EQUAL(tcomm, 0.0);
  /* half the bandwidth: the bandwidth term doubles, the latency term stays: 2.02 s */
  ln2[0].bw_bps = 4e6;
  CU_ASSERT_DOUBLE_EQUAL(sched_allreduce_time(&np, ln2, 2, 1e6), 2.02, 1e-12);
  ln2[0].bw_bps = 0; /* a dead link: no progress, infinite communication */
  CU_ASSERT_EQUAL(sched_cluster_step(&cp, &np, sp2, ln2, 2, 2, 1e6, &tcomp, &tcomm), 0.0);
  CU_ASSERT(isinf(tcomm));
  CU_ASSERT_EQUAL(sched_autoscale_replicas(100, 10, 0.5, 1, 100), 20);
  CU_ASSERT_EQUAL(sched_autoscale_replicas(0, 10, 0.5, 2, 100), 2);
  CU_ASSERT_EQUAL(sched_autoscale_replicas(1e9, 10, 0.5, 1, 7), 7);
}

/* ---- Scripted streams ----------------------------------------------------------------------- */

/* A job's life with a failure injected after step `k` of it (k = 0: no failure). Steps: 1 arrive
 * with no GPU, 2 GPUs join (placed, staging), 3 progress, 4 checkpoint timer, 5 checkpoint done,
 * 6 progress, 7 finish, 8 after the end. The failing GPU is member 0 of the current run (or a
 * free GPU when there is no run). After the stream the job must be ended once (completed) or
 * be queued/running, never lost; invariants hold at every event. */
static void life_with_failure(sched_policy pol, int k) {
  setup(pol, NULL);
  double t = 0, saved_after = -1;
  int failed = 0;
  for (int step = 1; step <= 8; step++) {
    t += 10;
    sched_job_status st = jstat(7);
    uint32_t run = 0;
    const sched_decision *pl = last(SCHED_D_PLACE);
    if (pl) run = pl->run;
    switch (step) {
    case 1: arrive(t, 7, batch(2, 1000)); break;
    case 2:
      for (uint32_t g = 0; g < 6; g++) join(t, g);
      break;
    case 3:
    case 6:
      if (st.state == SCHED_JOB_RUNNING) jev(SCHED_EV_JOB_PROGRESS, t, 7, run, step * 10.0);
      break;
    case 4:
      ev((sched_event){.type = SCHED_EV_TICK, .t = 200});
      t = 200;
      break;
    case 5: {
      const sched_decision *c = last(SCHED_D_CHECKPOINT);
      if (c) jev(SCHED_EV_CKPT_DONE, t, 7, c->run, 500);
      break;
    }
    case 7:
      if (st.state == SCHED_JOB_RUNNING) jev(SCHED_EV_JOB_FINISH, t, 7, run, 0);
      break;
    case 8: break;
    }
    if (step == k) {
      uint32_t victim = 5;
      pl = last(SCHED_D_PLACE);
      if (pl && jstat(7).state == SCHED_JOB_RUNNING) victim = pl->gpus[0];
      CU_ASSERT_EQUAL(gev(SCHED_EV_GPU_LEAVE, t, victim, 0), 0);
      failed = 1;
      saved_after = jstat(7).saved_work;
    }
  }
  sched_job_status st = jstat(7);
  CU_ASSERT(st.state == SCHED_JOB_ENDED || st.state == SCHED_JOB_RUNNING || st.state == SCHED_JOB_QUEUED);
  CU_ASSERT(count(SCHED_D_END) <= 1);
  if (st.state == SCHED_JOB_ENDED) CU_ASSERT_EQUAL(st.outcome, SCHED_R_COMPLETED);
  if (!failed || k == 1 || k >= 7) CU_ASSERT_EQUAL(st.state, SCHED_JOB_ENDED);
  /* Under CHECKPOINT a failure after the checkpoint keeps the saved work; other policies that
   * restart start over from zero. */
  if (pol == SCHED_FT_CHECKPOINT && k == 6) CU_ASSERT_DOUBLE_EQUAL(saved_after, 500, 0);
  if (pol == SCHED_FT_NONE && k == 6) CU_ASSERT_DOUBLE_EQUAL(saved_after, 0, 0);
  if (pol == SCHED_FT_CHECKPOINT) CU_ASSERT(count(SCHED_D_CHECKPOINT) > 0);
  /* A checkpoint whose run died while writing it is stale: nothing saved. */
  if (pol == SCHED_FT_CHECKPOINT && k == 4) {
    sched_counters c;
    sched_counters_get(S, &c);
    CU_ASSERT(c.stale_events >= 1);
    CU_ASSERT_DOUBLE_EQUAL(saved_after, 0, 0);
  }
  /* N+k: a member failure is absorbed by a standby, no restart. */
  if (pol == SCHED_FT_STANDBY && k >= 2 && k <= 6) {
    CU_ASSERT_EQUAL(st.restarts, 0);
    CU_ASSERT_EQUAL(st.replacements, 1);
  }
  teardown();
}

static void test_failure_each_step(void) {
  for (int p = 0; p < SCHED_FT_COUNT; p++)
    for (int k = 0; k <= 8; k++) life_with_failure((sched_policy)p, k);
}

static void test_double_failure(void) {
  setup(SCHED_FT_CHECKPOINT, NULL);
  for (uint32_t g = 0; g < 2; g++) join(0, g);
  arrive(1, 1, batch(2, 100));
  const sched_decision *pl = last(SCHED_D_PLACE);
  CU_ASSERT_FATAL(pl != NULL);
  uint32_t a = pl->gpus[0], b = pl->gpus[1];
  gev(SCHED_EV_GPU_LEAVE, 5, a, 0);
  gev(SCHED_EV_GPU_MISSED, 5, b, 0); /* the same job, same instant */
  sched_job_status st = jstat(1);
  /* One interruption (one STOP), the job requeued once, waiting: only one GPU is left. */
  CU_ASSERT_EQUAL(count(SCHED_D_STOP), 1);
  CU_ASSERT_EQUAL(st.restarts, 1);
  CU_ASSERT_EQUAL(st.state, SCHED_JOB_QUEUED);
  sched_counters c;
  sched_counters_get(S, &c);
  CU_ASSERT_EQUAL(c.gpu_failures, 1); /* b was already released when it went */
  /* Both come back: the job runs again, on a new run id. */
  join(20, a);
  CU_ASSERT_EQUAL(jstat(1).state, SCHED_JOB_QUEUED);
  join(21, b);
  CU_ASSERT_EQUAL(jstat(1).state, SCHED_JOB_RUNNING);
  CU_ASSERT_NOT_EQUAL(last(SCHED_D_PLACE)->run, pl->run);
  teardown();
}

static void k2(sched_config *c) { c->standby_k = 2; }
static void test_standby_fails_while_promoted(void) {
  setup(SCHED_FT_STANDBY, NULL);
  for (uint32_t g = 0; g < 4; g++) join(0, g);
  arrive(1, 1, batch(2, 100));
  const sched_decision *pl = last(SCHED_D_PLACE), *sb = last(SCHED_D_STANDBY);
  CU_ASSERT_FATAL(pl && sb);
  uint32_t m0 = pl->gpus[0], spare = sb->gpu;
  gev(SCHED_EV_GPU_LEAVE, 5, m0, 0);
  const sched_decision *rp = last(SCHED_D_REPLACE);
  CU_ASSERT_FATAL(rp != NULL);
  CU_ASSERT_EQUAL(rp->gpu, spare);
  CU_ASSERT_EQUAL(rp->old_gpu, m0);
  CU_ASSERT(rp->value > 0); /* recovery: state from peers */
  /* The promoted standby fails during its recovery: the last free GPU (4 - 2 members - 1
   * failed) became the new standby at once and now takes its place. */
  gev(SCHED_EV_GPU_LEAVE, 5.5, spare, 0);
  CU_ASSERT_EQUAL(count(SCHED_D_REPLACE), 2);
  CU_ASSERT_EQUAL(jstat(1).restarts, 0);
  /* A third failure with nothing left interrupts the run; the job is requeued, not lost. */
  gev(SCHED_EV_GPU_LEAVE, 6, last(SCHED_D_REPLACE)->gpu, 0);
  sched_job_status st = jstat(1);
  CU_ASSERT_EQUAL(st.state, SCHED_JOB_QUEUED);
  CU_ASSERT_EQUAL(st.restarts, 1);
  teardown();
  /* With k = 2, both standbys are reserved at placement. */
  setup(SCHED_FT_STANDBY, k2);
  for (uint32_t g = 0; g < 5; g++) join(0, g);
  arrive(1, 1, batch(2, 100));
  CU_ASSERT_EQUAL(count(SCHED_D_STANDBY), 2);
  teardown();
}

static void hb(sched_config *c) { c->heartbeat_timeout_s = 30; }
static void test_heartbeat_after_timeout(void) {
  setup(SCHED_FT_NONE, hb);
  join(0, 0);
  join(0, 1);
  arrive(1, 1, batch(1, 100));
  uint32_t m = last(SCHED_D_PLACE)->gpus[0], other = 1 - m;
  CU_ASSERT_DOUBLE_EQUAL(sched_next_wakeup(S), 30, 0);
  gev(SCHED_EV_HEARTBEAT, 20, other, 0);
  gev(SCHED_EV_HEARTBEAT, 20, m, 0);
  gev(SCHED_EV_HEARTBEAT, 45, other, 0);
  /* m is silent after t = 20: its deadline is 50. A tick at 49 changes nothing. */
  ev((sched_event){.type = SCHED_EV_TICK, .t = 49});
  CU_ASSERT_EQUAL(gstate(m), SCHED_GPU_BUSY);
  ev((sched_event){.type = SCHED_EV_TICK, .t = 50});
  CU_ASSERT_EQUAL(gstate(m), SCHED_GPU_ABSENT);
  CU_ASSERT_EQUAL(last(SCHED_D_STOP)->reason, SCHED_R_GPU_LOST);
  /* The job moved to the other GPU at once. */
  CU_ASSERT_EQUAL(jstat(1).state, SCHED_JOB_RUNNING);
  CU_ASSERT_EQUAL(last(SCHED_D_PLACE)->gpus[0], other);
  uint32_t newrun = last(SCHED_D_PLACE)->run;
  /* m's heartbeat returns late: it is an idle GPU again, holding nothing. */
  gev(SCHED_EV_HEARTBEAT, 55, m, 0);
  CU_ASSERT_EQUAL(gstate(m), SCHED_GPU_IDLE);
  /* A finish reported by the old run is stale; the new run's finish counts once. */
  jev(SCHED_EV_JOB_FINISH, 60, 1, 0, 0);
  CU_ASSERT_EQUAL(jstat(1).state, SCHED_JOB_RUNNING);
  jev(SCHED_EV_JOB_FINISH, 70, 1, newrun, 0);
  jev(SCHED_EV_JOB_FINISH, 71, 1, newrun, 0);
  CU_ASSERT_EQUAL(jstat(1).state, SCHED_JOB_ENDED);
  CU_ASSERT_EQUAL(count(SCHED_D_END), 1);
  sched_counters c;
  sched_counters_get(S, &c);
  CU_ASSERT_EQUAL(c.jobs_completed, 1);
  CU_ASSERT(c.stale_events >= 2);
  teardown();
}

/* A fresh core of 8 GPUs with the Young checkpoint rule over a lossless ARQ link, prior MTBF 1 day
 * (replaces the one setup made); analytic: cfg.ckpt_analytic. */
static void young_core(int analytic) {
  sched_destroy(S);
  sched_config c;
  sched_config_default(&c);
  c.max_gpus = c.max_providers = 8;
  c.max_nodes = 4;
  c.max_jobs = 10;
  c.sink = sink;
  c.sink_ctx = R;
  c.net.mode = SCHED_NET_ARQ;
  c.ckpt_rule = SCHED_CKPT_YOUNG;
  c.gpu_mtbf_s = 86400;
  c.ckpt_analytic = analytic;
  CU_ASSERT_FATAL(sched_create(&c, &S) == 0);
}

static void test_checkpoint_young(void) {
  /* Young rule: C = transfer of 1e6 bytes over 100 Mbit/s lossless ARQ link with 50 ms RTT
   * = 0.025 + 0.08 s; M = prior MTBF 86400 / 2 members. */
  setup(SCHED_FT_CHECKPOINT, NULL);
  young_core(0);
  join(0, 0);
  join(0, 1);
  arrive(0, 1, batch(2, 1e6));
  double C = 0.025 + 8e6 / 100e6, T = sqrt(2 * C * 43200.0);
  CU_ASSERT_DOUBLE_EQUAL(sched_next_wakeup(S), last(SCHED_D_PLACE)->value + T, 1e-9);
  ev((sched_event){.type = SCHED_EV_TICK, .t = sched_next_wakeup(S)});
  const sched_decision *ck = last(SCHED_D_CHECKPOINT);
  CU_ASSERT_FATAL(ck != NULL);
  CU_ASSERT_DOUBLE_EQUAL(ck->value, C, 1e-12);
  teardown();
}

/* Analytic checkpoints (cfg.ckpt_analytic): the plan comes with the placement (the same interval
 * and cost the timer would have used), no wake-up is armed, and the caller's reports of saved
 * work are what a restart resumes from and what a withdrawn job hands back. */
static void analytic(sched_config *c) { c->ckpt_analytic = 1; }
static void test_checkpoint_analytic(void) {
  setup(SCHED_FT_CHECKPOINT, analytic);
  young_core(1);
  for (uint32_t g = 0; g < 3; g++) join(0, g);
  arrive(0, 1, batch(2, 1e6));
  const sched_decision *p = last(SCHED_D_PLACE);
  CU_ASSERT_FATAL(p != NULL);
  double C = 0.025 + 8e6 / 100e6, T = sqrt(2 * C * 43200.0);
  CU_ASSERT_DOUBLE_EQUAL(p->ckpt_cost, C, 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(p->ckpt_interval, T, 1e-9);
  CU_ASSERT(isinf(sched_next_wakeup(S))); /* no checkpoint timer */
  uint32_t run = p->run, member = p->gpus[0];
  /* two checkpoints reported at once, then a smaller (older) value that must not lower it */
  CU_ASSERT_EQUAL(jev(SCHED_EV_CKPT_DONE, 3 * T, 1, run, 700), 0);
  CU_ASSERT_EQUAL(jev(SCHED_EV_CKPT_DONE, 3 * T, 1, run, 300), 0);
  CU_ASSERT_DOUBLE_EQUAL(jstat(1).saved_work, 700, 0);
  CU_ASSERT_EQUAL(count(SCHED_D_CHECKPOINT), 0);
  /* a member leaves: the restart resumes from 700 and gets a plan of its own */
  CU_ASSERT_EQUAL(gev(SCHED_EV_GPU_LEAVE, 3 * T + 1, member, 0), 0);
  CU_ASSERT_EQUAL(count(SCHED_D_PLACE), 2);
  const sched_decision *p2 = last(SCHED_D_PLACE);
  CU_ASSERT_FATAL(p2 != NULL && p2->run != run);
  CU_ASSERT(p2->ckpt_interval > 0);
  CU_ASSERT_DOUBLE_EQUAL(jstat(1).saved_work, 700, 0);
  /* withdrawn: it hands back what was reported */
  CU_ASSERT_EQUAL(jev(SCHED_EV_CKPT_DONE, 4 * T, 1, p2->run, 900), 0);
  CU_ASSERT_EQUAL(ev((sched_event){.type = SCHED_EV_JOB_WITHDRAW, .t = 4 * T, .job = 1}), 0);
  const sched_decision *e = last(SCHED_D_END);
  CU_ASSERT_FATAL(e != NULL);
  CU_ASSERT_EQUAL(e->reason, SCHED_R_WITHDRAWN);
  CU_ASSERT_DOUBLE_EQUAL(e->value, 900, 0);
  CU_ASSERT(isinf(sched_next_wakeup(S)));
  teardown();
}

/* ---- The policy table (sched_ft.h) ------------------------------------------------------------ */

/* What each built-in row answers, combinations named in any order, and what is refused. */
static void test_policy_table(void) {
  sched_ft f = {SCHED_FT_NONE, SCHED_CKPT_FIXED, 100, 3, 2, 100};
  static const struct {
    sched_policy p;
    unsigned copies, standbys, slots;
    int ckpt, lost, degr, slow;
  } want[SCHED_FT_COUNT] = {{SCHED_FT_NONE, 1, 0, 1, 0, 0, 0, 0},
                            {SCHED_FT_CHECKPOINT, 1, 0, 1, 1, 0, 0, 0},
                            {SCHED_FT_STANDBY, 1, 3, 1, 0, 1, 1, 0},
                            {SCHED_FT_REPLICATE, 2, 0, 2, 0, 0, 0, 0},
                            {SCHED_FT_SPECULATIVE, 1, 0, 2, 0, 0, 0, 1}};
  for (int i = 0; i < SCHED_FT_COUNT; i++) {
    f.policy = want[i].p;
    CU_ASSERT_EQUAL(sched_ft_copies(&f), want[i].copies);
    CU_ASSERT_EQUAL(sched_ft_standbys(&f), want[i].standbys);
    CU_ASSERT_EQUAL(sched_ft_slots(&f), want[i].slots);
    CU_ASSERT_EQUAL(sched_ft_checkpoints(&f), want[i].ckpt);
    CU_ASSERT_EQUAL(sched_ft_replaces_lost(&f), want[i].lost);
    CU_ASSERT_EQUAL(sched_ft_replaces_degraded(&f), want[i].degr);
    CU_ASSERT_EQUAL(sched_ft_backs_up_slow(&f), want[i].slow);
    CU_ASSERT_EQUAL(sched_ft_loss_default(&f), want[i].p != SCHED_FT_STANDBY);
  }
  /* combinations: the same row in any order, named in table order, each part's mechanisms */
  int cs = sched_policy_parse("checkpoint+standby");
  CU_ASSERT_FATAL(cs >= SCHED_FT_COUNT);
  CU_ASSERT_EQUAL(sched_policy_parse("standby+checkpoint"), cs);
  CU_ASSERT_EQUAL(sched_ft_compose(SCHED_FT_STANDBY, SCHED_FT_CHECKPOINT), cs);
  CU_ASSERT_STRING_EQUAL(sched_policy_name((sched_policy)cs), "checkpoint+standby");
  f.policy = (sched_policy)cs;
  CU_ASSERT_EQUAL(sched_ft_copies(&f), 1);
  CU_ASSERT_EQUAL(sched_ft_standbys(&f), 3);
  CU_ASSERT(sched_ft_checkpoints(&f) && sched_ft_replaces_lost(&f) && sched_ft_replaces_degraded(&f));
  CU_ASSERT(!sched_ft_backs_up_slow(&f) && !sched_ft_loss_default(&f));
  CU_ASSERT_EQUAL(sched_ft_without_checkpoints(cs), SCHED_FT_STANDBY);
  CU_ASSERT_EQUAL(sched_ft_without_checkpoints(SCHED_FT_CHECKPOINT), SCHED_FT_NONE);
  CU_ASSERT_EQUAL(sched_ft_without_checkpoints(SCHED_FT_REPLICATE), SCHED_FT_REPLICATE);
  int rc = sched_policy_parse("replicate+checkpoint");
  CU_ASSERT_FATAL(rc >= SCHED_FT_COUNT && rc != cs);
  CU_ASSERT_STRING_EQUAL(sched_policy_name((sched_policy)rc), "checkpoint+replicate");
  f.policy = (sched_policy)rc;
  CU_ASSERT_EQUAL(sched_ft_copies(&f), 2); /* the replicas carry checkpoints */
  CU_ASSERT_EQUAL(sched_ft_slots(&f), 2);
  CU_ASSERT(sched_ft_checkpoints(&f) && !sched_ft_replaces_lost(&f) && sched_ft_loss_default(&f));
  int three = sched_policy_parse("replicate+standby+checkpoint");
  CU_ASSERT_EQUAL(sched_ft_compose(cs, SCHED_FT_REPLICATE), three);
  CU_ASSERT_EQUAL(sched_ft_compose(rc, SCHED_FT_STANDBY), three);
  CU_ASSERT_STRING_EQUAL(sched_policy_name((sched_policy)three), "checkpoint+standby+replicate");
  f.policy = (sched_policy)sched_policy_parse("replicate+speculative");
  CU_ASSERT_EQUAL(sched_ft_slots(&f), 3); /* two copies and a backup's slot */
  /* refused: unknown parts, a part twice, none combined, empty parts */
  const char *bad[] = {"checkpoint+",
                       "+standby",
                       "checkpoint+bogus",
                       "none+checkpoint",
                       "standby+none",
                       "checkpoint+checkpoint",
                       "checkpoint+standby+checkpoint",
                       "checkpoint++standby",
                       "Checkpoint"};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) CU_ASSERT_EQUAL(sched_policy_parse(bad[i]), -1);
  /* combinations are not single-policy names (the choices of the keys naming one policy) */
  for (int i = 0; sched_policy_names[i]; i++) CU_ASSERT_PTR_NULL(strchr(sched_policy_names[i], '+'));
  /* registration refuses taken and malformed names */
  CU_ASSERT_EQUAL(sched_ft_register(&(sched_ft_row){.name = "standby"}), -1);
  CU_ASSERT_EQUAL(sched_ft_register(&(sched_ft_row){.name = "a+b"}), -1);
  CU_ASSERT_EQUAL(sched_ft_register(&(sched_ft_row){.name = ""}), -1);
  CU_ASSERT_EQUAL(sched_ft_register(NULL), -1);
  CU_ASSERT_PTR_NULL(sched_ft_row_of(sched_ft_rows()));
  CU_ASSERT_STRING_EQUAL(sched_policy_name((sched_policy)sched_ft_rows()), "?");
}

/* The loss rate of N+k (sched_ft.c): k = 0 is the unprotected n lambda; k = 1 and 2 the
 * rare-failure products worked by hand; a combination takes its most protective part's. */
static void test_policy_loss_rates(void) {
  double lam = 1.0 / 86400, R = 0.105;
  sched_ft f = {SCHED_FT_STANDBY, SCHED_CKPT_YOUNG, 100, 0, 1, 100};
  CU_ASSERT_DOUBLE_EQUAL(sched_ft_loss_rate(&f, 4, lam, R), 4 * lam, 1e-18);
  f.standby_k = 1; /* n lambda x (n+1) lambda R */
  CU_ASSERT_DOUBLE_EQUAL(sched_ft_loss_rate(&f, 4, lam, R) / (4 * lam * 5 * lam * R), 1, 1e-12);
  f.standby_k = 2; /* n lambda x (n+2) lambda R x (n+1) lambda R / 2 */
  CU_ASSERT_DOUBLE_EQUAL(sched_ft_loss_rate(&f, 4, lam, R) / (4 * lam * 6 * lam * R * 5 * lam * R / 2), 1, 1e-12);
  f.policy = (sched_policy)sched_policy_parse("checkpoint+standby");
  CU_ASSERT_DOUBLE_EQUAL(sched_ft_loss_rate(&f, 4, lam, R) / (4 * lam * 6 * lam * R * 5 * lam * R / 2), 1, 1e-12);
  f.policy = SCHED_FT_CHECKPOINT;
  CU_ASSERT_DOUBLE_EQUAL(sched_ft_loss_rate(&f, 4, lam, R), 4 * lam, 1e-18);
}

/* A core of policy p with the Young rule (prior MTBF 1 day) and k standbys, as young_core. */
static void young_core_policy(int analytic, sched_policy p, unsigned k) {
  sched_destroy(S);
  sched_config c;
  sched_config_default(&c);
  c.max_gpus = c.max_providers = 8;
  c.max_nodes = 4;
  c.max_jobs = 10;
  c.sink = sink;
  c.sink_ctx = R;
  c.net.mode = SCHED_NET_ARQ;
  c.ckpt_rule = SCHED_CKPT_YOUNG;
  c.gpu_mtbf_s = 86400;
  c.ckpt_analytic = analytic;
  c.policy = p;
  c.standby_k = k;
  CU_ASSERT_FATAL(sched_create(&c, &S) == 0);
}

/* checkpoint+standby: the run gets its standby, a lost member is replaced in place (no restart),
 * and the Young interval is computed for the combination's loss rate, not for n lambda:
 * T = sqrt(2 C M) (Young 1974) with M = 1 / (n lambda (n+1) lambda C), n = 2, C = the checkpoint's
 * transfer time, which is also what a newcomer takes to load the state. */
static void test_checkpoint_plus_standby(void) {
  setup(SCHED_FT_NONE, NULL);
  young_core_policy(1, (sched_policy)sched_policy_parse("checkpoint+standby"), 1);
  for (uint32_t g = 0; g < 5; g++) join(0, g);
  arrive(0, 1, batch(2, 1e6));
  const sched_decision *p = last(SCHED_D_PLACE);
  CU_ASSERT_FATAL(p != NULL);
  double C = 0.025 + 8e6 / 100e6, lam = 1.0 / 86400, M = 1.0 / (2 * lam * 3 * lam * C);
  CU_ASSERT_DOUBLE_EQUAL(p->ckpt_cost, C, 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(p->ckpt_interval / sqrt(2 * C * M), 1, 1e-12);
  CU_ASSERT(p->ckpt_interval > 100 * sqrt(2 * C * 43200.0)); /* far rarer than checkpoint alone */
  CU_ASSERT_EQUAL(count(SCHED_D_STANDBY), 1);
  uint32_t run = p->run, member = p->gpus[0];
  CU_ASSERT_EQUAL(jev(SCHED_EV_CKPT_DONE, 500, 1, run, 400), 0);
  CU_ASSERT_EQUAL(gev(SCHED_EV_GPU_LEAVE, 600, member, 0), 0);
  CU_ASSERT_EQUAL(count(SCHED_D_REPLACE), 1); /* replaced in place: the run goes on */
  CU_ASSERT_EQUAL(count(SCHED_D_PLACE), 1);
  CU_ASSERT_EQUAL(count(SCHED_D_STOP), 0);
  CU_ASSERT_EQUAL(count(SCHED_D_STANDBY), 2); /* and its standby is topped up */
  /* every GPU lost at once but one: the run stops and the job resumes from its checkpoint */
  for (uint32_t g = 0; g < 5; g++)
    if (gstate(g) != SCHED_GPU_ABSENT && g != 4) gev(SCHED_EV_GPU_LEAVE, 700, g, 0);
  CU_ASSERT(count(SCHED_D_STOP) >= 1);
  CU_ASSERT_DOUBLE_EQUAL(jstat(1).saved_work, 400, 0);
  teardown();
}

/* replicate+checkpoint: both copies write checkpoints (timers), the job keeps the most saved, and a
 * copy placed again after a loss resumes from it. */
static void test_replicas_carry_checkpoints(void) {
  setup((sched_policy)sched_policy_parse("replicate+checkpoint"), NULL); /* fixed interval 100 */
  for (uint32_t g = 0; g < 6; g++) join(0, g);
  arrive(0, 1, batch(1, 1e6));
  CU_ASSERT_EQUAL_FATAL(count(SCHED_D_PLACE), 2);
  uint32_t runs[2] = {R->d[0].run, 0}, seen[2] = {0, 0};
  for (size_t i = 0; i < R->n; i++)
    if (R->d[i].type == SCHED_D_PLACE) runs[R->d[i].run != runs[0]] = R->d[i].run;
  CU_ASSERT_NOT_EQUAL(runs[0], runs[1]);
  ev((sched_event){.type = SCHED_EV_TICK, .t = sched_next_wakeup(S)});
  ev((sched_event){.type = SCHED_EV_TICK, .t = sched_next_wakeup(S)});
  for (size_t i = 0; i < R->n; i++)
    if (R->d[i].type == SCHED_D_CHECKPOINT) seen[R->d[i].run == runs[1]]++;
  CU_ASSERT(seen[0] == 1 && seen[1] == 1); /* each copy checkpoints */
  double t = R->d[R->n - 1].t;
  CU_ASSERT_EQUAL(jev(SCHED_EV_CKPT_DONE, t, 1, runs[0], 300), 0);
  CU_ASSERT_EQUAL(jev(SCHED_EV_CKPT_DONE, t, 1, runs[1], 250), 0);
  CU_ASSERT_DOUBLE_EQUAL(jstat(1).saved_work, 300, 0);
  /* the first copy's member leaves: a new copy is placed at once, resuming from 300 */
  const sched_decision *p0 = NULL;
  for (size_t i = 0; i < R->n; i++)
    if (R->d[i].type == SCHED_D_PLACE && R->d[i].run == runs[0]) p0 = &R->d[i];
  CU_ASSERT_FATAL(p0 != NULL);
  size_t before = R->n;
  CU_ASSERT_EQUAL(gev(SCHED_EV_GPU_LEAVE, t + 1, p0->gpus[0], 0), 0);
  CU_ASSERT_EQUAL(count(SCHED_D_PLACE), 3);
  CU_ASSERT(last(SCHED_D_PLACE) > &R->d[before - 1]);
  CU_ASSERT_EQUAL(jstat(1).runs_active, 2);
  CU_ASSERT_DOUBLE_EQUAL(jstat(1).saved_work, 300, 0); /* kept: checkpoints are part of the policy */
  teardown();
}

/* A policy defined here, in the test file alone: three copies each of which checkpoints. The core
 * places three runs and checkpoints them, with no line of the core naming it. */
static unsigned trio_copies(const sched_ft *ft) {
  (void)ft;
  return 3;
}
static unsigned spare3_standbys(const sched_ft *ft) {
  (void)ft;
  return 3;
}
static int trio_policy(void) {
  static int id = -1;
  if (id < 0)
    id = sched_ft_register(
        &(sched_ft_row){.name = "trio", .help = "three checkpointing copies", .copies = trio_copies, .checkpoints = 1});
  return id;
}
static void test_registered_policy(void) {
  int trio = trio_policy();
  CU_ASSERT_FATAL(trio >= SCHED_FT_COUNT);
  CU_ASSERT_EQUAL(sched_policy_parse("trio"), trio);
  CU_ASSERT_STRING_EQUAL(sched_policy_name((sched_policy)trio), "trio");
  int named = 0;
  for (int i = 0; sched_policy_names[i]; i++) named |= !strcmp(sched_policy_names[i], "trio");
  CU_ASSERT(named); /* a choice of every key naming one policy */
  CU_ASSERT_STRING_EQUAL(sched_policy_name((sched_policy)sched_policy_parse("standby+trio")), "standby+trio");
  setup((sched_policy)trio, NULL);
  for (uint32_t g = 0; g < 8; g++) join(0, g);
  arrive(0, 1, batch(2, 1e6));
  CU_ASSERT_EQUAL(count(SCHED_D_PLACE), 3);
  CU_ASSERT_EQUAL(jstat(1).runs_active, 3);
  ev((sched_event){.type = SCHED_EV_TICK, .t = sched_next_wakeup(S)});
  CU_ASSERT(count(SCHED_D_CHECKPOINT) >= 1);
  teardown();
  /* a row whose standbys do not follow standby_k: the run has room for as many as it asks for */
  static int spare3 = -1;
  if (spare3 < 0)
    spare3 = sched_ft_register(
        &(sched_ft_row){.name = "spare3", .standbys = spare3_standbys, .on_lost = SCHED_FT_LOST_REPLACE});
  CU_ASSERT_FATAL(spare3 >= SCHED_FT_COUNT);
  setup((sched_policy)spare3, NULL); /* standby_k 1, the default */
  for (uint32_t g = 0; g < 8; g++) join(0, g);
  arrive(0, 1, batch(3, 1e6));
  CU_ASSERT_EQUAL(count(SCHED_D_STANDBY), 3);
  uint32_t lost = last(SCHED_D_PLACE)->gpus[1];
  CU_ASSERT_EQUAL(gev(SCHED_EV_GPU_LEAVE, 5, lost, 0), 0);
  CU_ASSERT_EQUAL(count(SCHED_D_REPLACE), 1);
  CU_ASSERT_EQUAL(count(SCHED_D_STANDBY), 4); /* topped up to three again */
  teardown();
}

static void test_replicate(void) {
  setup(SCHED_FT_REPLICATE, NULL);
  for (uint32_t g = 0; g < 4; g++) join(0, g);
  arrive(1, 1, batch(2, 100));
  CU_ASSERT_EQUAL(count(SCHED_D_PLACE), 2);
  uint32_t r0 = R->d[0].type == SCHED_D_PLACE ? R->d[0].run : 0;
  (void)r0;
  const sched_decision *p1 = last(SCHED_D_PLACE);
  uint32_t win = p1->run;
  ev((sched_event){.type = SCHED_EV_BILLING, .t = 3601});
  jev(SCHED_EV_JOB_FINISH, 3601, 1, win, 0);
  const sched_decision *st = last(SCHED_D_STOP);
  CU_ASSERT_FATAL(st != NULL);
  CU_ASSERT_EQUAL(st->reason, SCHED_R_CANCELLED);
  CU_ASSERT_NOT_EQUAL(st->run, win);
  uint32_t loser = st->run;
  jev(SCHED_EV_JOB_FINISH, 3602, 1, loser, 0); /* the loser's late finish */
  CU_ASSERT_EQUAL(count(SCHED_D_END), 1);
  /* 4 GPUs x 3600 s x 1 USD/h, the cancelled copy billed (bill_cancelled = 1). */
  sched_ledger l;
  sched_ledger_get(S, &l);
  CU_ASSERT_DOUBLE_EQUAL(l.billed, 4.0, 1e-9);
  CU_ASSERT_DOUBLE_EQUAL(l.cancelled_billed, 2.0, 1e-9);
  teardown();
}
static void nobill(sched_config *c) { c->bill_cancelled = 0; }
static void test_replicate_unbilled(void) {
  setup(SCHED_FT_REPLICATE, nobill);
  for (uint32_t g = 0; g < 4; g++) join(0, g);
  arrive(0, 1, batch(2, 100));
  uint32_t win = last(SCHED_D_PLACE)->run;
  jev(SCHED_EV_JOB_FINISH, 3600, 1, win, 0);
  sched_ledger l;
  sched_ledger_get(S, &l);
  CU_ASSERT_DOUBLE_EQUAL(l.billed, 2.0, 1e-9);
  CU_ASSERT_DOUBLE_EQUAL(jstat(1).cost, 2.0, 1e-9);
  /* Hosts of the losing copy are still paid; the platform absorbs it. */
  CU_ASSERT_DOUBLE_EQUAL(l.provider_income, 4.0 * (1 - 0.025 - 0.05), 1e-9);
  teardown();
}

static void test_speculative(void) {
  setup(SCHED_FT_SPECULATIVE, NULL);
  for (uint32_t g = 0; g < 4; g++) join(0, g);
  arrive(0, 1, batch(2, 1000));
  uint32_t run = last(SCHED_D_PLACE)->run;
  double rate = jstat(1).expected_rate;
  CU_ASSERT_DOUBLE_EQUAL(rate, 2.0, 1e-12);   /* two members of score 1, no synchronisation */
  jev(SCHED_EV_JOB_PROGRESS, 10, 1, run, 19); /* 1.9 / s: fine */
  CU_ASSERT_EQUAL(count(SCHED_D_PLACE), 1);
  jev(SCHED_EV_JOB_PROGRESS, 20, 1, run, 24); /* 0.5 / s < 0.5 x 2: slow -> backup copy */
  CU_ASSERT_EQUAL(count(SCHED_D_PLACE), 2);
  uint32_t backup = last(SCHED_D_PLACE)->run;
  jev(SCHED_EV_JOB_PROGRESS, 30, 1, run, 25);
  CU_ASSERT_EQUAL(count(SCHED_D_PLACE), 2); /* one backup per job */
  jev(SCHED_EV_JOB_FINISH, 500, 1, backup, 0);
  CU_ASSERT_EQUAL(last(SCHED_D_STOP)->run, run);
  CU_ASSERT_EQUAL(jstat(1).state, SCHED_JOB_ENDED);
  teardown();
}

static void test_degrade_replaced(void) {
  setup(SCHED_FT_STANDBY, NULL);
  for (uint32_t g = 0; g < 3; g++) join(0, g);
  arrive(0, 1, batch(2, 1000));
  uint32_t m = last(SCHED_D_PLACE)->gpus[1];
  gev(SCHED_EV_GPU_DEGRADE, 5, m, 0.8); /* mild: kept, rate drops */
  CU_ASSERT_DOUBLE_EQUAL(jstat(1).expected_rate, 1.8, 1e-12);
  gev(SCHED_EV_GPU_DEGRADE, 6, m, 0.2); /* under degrade_ratio: replaced by the standby */
  CU_ASSERT_EQUAL(last(SCHED_D_REPLACE)->reason, SCHED_R_DEGRADED);
  CU_ASSERT_EQUAL(gstate(m), SCHED_GPU_IDLE);
  CU_ASSERT_DOUBLE_EQUAL(jstat(1).expected_rate, 2.0, 1e-12);
  teardown();
}

static void test_reputation_and_stake(void) {
  setup(SCHED_FT_NONE, NULL);
  join(0, 0);
  arrive(0, 1, batch(1, 10));
  gev(SCHED_EV_GPU_LEAVE, 3600, 0, 0);
  sched_gpu_status st;
  sched_gpu_query(S, 0, 3600, &st);
  /* One hour served (+1) then a disconnect while employed (+4 negative): E = 2/7. */
  CU_ASSERT_DOUBLE_EQUAL(st.reputation, 2.0 / 7.0, 1e-12);
  /* Evidence halves after a half-life (7 days): r = 0.5, s = 2 -> E = 1.5/4.5. */
  sched_gpu_query(S, 0, 3600 + 7 * 86400.0, &st);
  CU_ASSERT_DOUBLE_EQUAL(st.reputation, 1.5 / 4.5, 1e-12);
  teardown();
}

static void slashcfg(sched_config *c) {
  c->slash_per_failure = 4;
  c->slash_per_down_hour = 1;
  c->stake_min = 5;
}
static void test_slashing(void) {
  setup(SCHED_FT_NONE, slashcfg);
  join(0, 0);
  join(0, 1);
  arrive(0, 1, batch(1, 10));
  uint32_t m = last(SCHED_D_PLACE)->gpus[0];
  gev(SCHED_EV_GPU_LEAVE, 10, m, 0);
  sched_gpu_status st;
  sched_gpu_query(S, m, 10, &st);
  CU_ASSERT_DOUBLE_EQUAL(st.stake, 6, 1e-12);
  /* Back after 2 hours down: 2 more slashed -> 4 < stake_min: never selected again. */
  join(10 + 7200, m);
  sched_gpu_query(S, m, 0, &st);
  CU_ASSERT_DOUBLE_EQUAL(st.stake, 4, 1e-12);
  sched_ledger l;
  sched_ledger_get(S, &l);
  CU_ASSERT_DOUBLE_EQUAL(l.slashed, 6, 1e-12);
  arrive(8000, 2, batch(1, 10));
  arrive(8000, 3, batch(1, 10));
  /* job 1 runs on the other GPU; 2 and 3 wait although m is idle. */
  CU_ASSERT_EQUAL(gstate(m), SCHED_GPU_IDLE);
  CU_ASSERT_EQUAL(jstat(2).state + jstat(3).state, SCHED_JOB_QUEUED * 2);
  teardown();
}

/* Two idle GPUs of equal score and price; provider A has a bad record. A 1-GPU job picks A with
 * probability wA / (wA + wB), w = E^2 (Efraimidis-Spirakis sampling of one item is exactly
 * proportional). 4000 trials: the count must lie within 5 binomial standard deviations. */
static void manyjobs(sched_config *c) { c->max_jobs = 10000; }
static void test_selection_weight(void) {
  setup(SCHED_FT_NONE, manyjobs);
  join(0, 0);
  join(0, 1);
  /* Give provider 0 negative evidence: employ, then fail. */
  arrive(0, 1, batch(2, 10));
  gev(SCHED_EV_GPU_LEAVE, 0, 0, 0); /* 0 fails; 1 released with 0 hours */
  join(0, 0);
  /* job 1 requeued and placed on both again: finish it */
  jev(SCHED_EV_JOB_FINISH, 0, 1, last(SCHED_D_PLACE)->run, 0);
  sched_gpu_status a, b;
  sched_gpu_query(S, 0, 0, &a);
  sched_gpu_query(S, 1, 0, &b);
  double wa = a.reputation * a.reputation, wb = b.reputation * b.reputation, pa = wa / (wa + wb);
  int n = 4000, hits = 0;
  for (int i = 0; i < n; i++) {
    uint32_t jid = 2 + (uint32_t)i;
    sched_job_spec sp = batch(1, 10);
    sched_event e = {.type = SCHED_EV_JOB_ARRIVE, .t = 0, .job = jid};
    e.u.job = sp;
    CU_ASSERT_EQUAL_FATAL(sched_handle(S, &e), 0);
    const sched_decision *pl = last(SCHED_D_PLACE);
    hits += pl->gpus[0] == 0;
    sched_event f = {.type = SCHED_EV_JOB_FINISH, .t = 0, .job = jid, .run = pl->run};
    CU_ASSERT_EQUAL_FATAL(sched_handle(S, &f), 0);
    R->n = 0;
  }
  double sd = sqrt(n * pa * (1 - pa));
  CU_ASSERT(fabs(hits - n * pa) < 5 * sd);
  CU_ASSERT(pa < 0.5);
  teardown();
}

static uint8_t deleg[4] = {0, 1, 0, 0};
static void fees(sched_config *c) {
  c->platform_fee = 0.1;
  c->node_fee = 0.2;
  c->delegation_fee = 0.5;
  c->node_delegated = deleg;
}
static void test_ledger_fees(void) {
  setup(SCHED_FT_NONE, fees);
  join(0, 0); /* node 0 */
  join(0, 1); /* node 1, delegated */
  arrive(0, 1, batch(2, 10));
  ev((sched_event){.type = SCHED_EV_BILLING, .t = 7200});
  sched_ledger l;
  sched_ledger_get(S, &l);
  /* 2 GPUs x 2 h x 1 USD/h = 4: platform 0.4, nodes 0.8 of which node 1 pays half of its 0.4. */
  CU_ASSERT_DOUBLE_EQUAL(l.billed, 4, 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(l.platform_income, 0.4, 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(l.provider_income, 2.8, 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(sched_node_income(S, 0), 0.4, 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(sched_node_income(S, 1), 0.2, 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(l.delegate_income, 0.2, 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(jstat(1).cost, 4, 1e-12);
  teardown();
}

static void test_autoscale_service(void) {
  setup(SCHED_FT_NONE, NULL);
  for (uint32_t g = 0; g < 10; g++) join(0, g);
  sched_job_spec sp = {0};
  sp.kind = SCHED_JOB_SERVICE;
  sp.region = -1;
  sp.req_per_score_s = 10; /* a score-1 replica serves 10 req/s */
  sp.min_replicas = 1;
  sp.max_replicas = 8;
  arrive(0, 1, sp);
  CU_ASSERT_EQUAL(jstat(1).replicas, 1);
  /* 35 req/s at target 0.7: ceil(35 / 7) = 5 replicas. */
  jev(SCHED_EV_LOAD, 10, 1, 0, 35);
  CU_ASSERT_EQUAL(jstat(1).replicas, 5);
  CU_ASSERT_EQUAL(last(SCHED_D_SCALE)->ngpus, 4);
  /* Load falls inside the cool-down (300 s): no change; after it: down to 2. */
  jev(SCHED_EV_LOAD, 100, 1, 0, 10);
  CU_ASSERT_EQUAL(jstat(1).replicas, 5);
  jev(SCHED_EV_LOAD, 400, 1, 0, 10);
  CU_ASSERT_EQUAL(jstat(1).replicas, 2);
  CU_ASSERT_EQUAL(last(SCHED_D_SCALE)->reason, SCHED_R_SCALE_DOWN);
  /* Pay per task: score 1 x 20 s x 1e-4 USD. No hourly billing for services. */
  uint32_t rep;
  CU_ASSERT_EQUAL(sched_run_members(S, 1, 0, &rep, 1), 2);
  ev((sched_event){.type = SCHED_EV_TASK_DONE, .t = 500, .job = 1, .gpu = rep, .value = 20});
  ev((sched_event){.type = SCHED_EV_BILLING, .t = 3600});
  CU_ASSERT_DOUBLE_EQUAL(jstat(1).cost, 20 * 1e-4, 1e-15);
  /* A replica lost is replaced from the pool. */
  gev(SCHED_EV_GPU_LEAVE, 3700, rep, 0);
  CU_ASSERT_EQUAL(jstat(1).replicas, 2);
  teardown();
}

static void test_bad_input(void) {
  setup(SCHED_FT_NONE, NULL);
  sched_event e = {.type = SCHED_EV_GPU_JOIN, .t = 5, .gpu = 64};
  e.u.gpu = ginfo(0, 0, 0, 1);
  CU_ASSERT_EQUAL(sched_handle(S, &e), SCHED_EINVAL); /* id out of range */
  e.gpu = 1;
  e.u.gpu.region = 2;
  CU_ASSERT_EQUAL(sched_handle(S, &e), SCHED_EINVAL); /* region out of range */
  e.u.gpu = ginfo(0, 0, 0, 1);
  CU_ASSERT_EQUAL(sched_handle(S, &e), 0);
  CU_ASSERT_EQUAL(sched_handle(S, &e), SCHED_ESTATE); /* joined twice */
  e.t = 4;
  e.gpu = 2;
  CU_ASSERT_EQUAL(sched_handle(S, &e), SCHED_ETIME); /* back in time */
  sched_event h = {.type = SCHED_EV_HEARTBEAT, .t = 6, .gpu = 9};
  CU_ASSERT_EQUAL(sched_handle(S, &h), SCHED_ESTATE); /* never joined */
  sched_event j = {.type = SCHED_EV_JOB_ARRIVE, .t = 6, .job = 3};
  j.u.job = batch(0, 1);
  CU_ASSERT_EQUAL(sched_handle(S, &j), SCHED_EINVAL); /* zero width */
  j.u.job = batch(1, 1);
  CU_ASSERT_EQUAL(sched_handle(S, &j), 0);
  CU_ASSERT_EQUAL(sched_handle(S, &j), SCHED_ESTATE); /* job id reused */
  sched_event f = {.type = SCHED_EV_JOB_FINISH, .t = 6, .job = 999};
  CU_ASSERT_EQUAL(sched_handle(S, &f), SCHED_EINVAL);
  char msg[128];
  CU_ASSERT_EQUAL(sched_check_invariants(S, msg, sizeof msg), 0);
  sched_config c;
  sched_config_default(&c);
  sched *x;
  CU_ASSERT_EQUAL(sched_create(&c, &x), SCHED_EINVAL); /* no sink, no sizes */
  CU_ASSERT_PTR_NULL(x);
  sched_config_default(&c);
  c.sink = sink;
  c.max_gpus = c.max_providers = c.max_jobs = 16;
  c.nregions = c.ngrades = 1;
  c.max_nodes = SCHED_MAX_NODES + 1; /* node ids are kept in 16 bits */
  CU_ASSERT_EQUAL(sched_create(&c, &x), SCHED_EINVAL);
  CU_ASSERT_PTR_NULL(x);
  c.max_nodes = SCHED_MAX_NODES;
  CU_ASSERT_EQUAL_FATAL(sched_create(&c, &x), 0);
  sched_destroy(x);
  CU_ASSERT_STRING_EQUAL(sched_strerror(SCHED_ETIME), "event earlier than the previous one");
  teardown();
}

/* ---- Randomized streams --------------------------------------------------------------------- */
/* What the fuzzers share: an absent GPU joins (region, grade and score from its id), a present
 * one leaves (what = 0) or is missed (what = 1); and the FNV-1a hash of the decisions since
 * `from`, folded into h. */
static int fuzz_nodes; /* GPUs 4i..4i+3 (both regions, both grades) on node i mod 4 */
static void fuzz_join_or_leave(double t, uint32_t g, sched_gpu_state state, unsigned what) {
  if (state == SCHED_GPU_ABSENT) {
    sched_event e = {.type = SCHED_EV_GPU_JOIN, .t = t, .gpu = g};
    e.u.gpu = ginfo(g, g % 2, (g / 2) % 2, 0.5 + (g % 5) * 0.5);
    if (fuzz_nodes) e.u.gpu.node = (g / 4) % 4;
    CU_ASSERT_EQUAL(ev(e), 0);
  } else {
    CU_ASSERT_EQUAL(gev(what ? SCHED_EV_GPU_MISSED : SCHED_EV_GPU_LEAVE, t, g, 0), 0);
  }
}
static uint64_t hash_decisions(uint64_t h, size_t from) {
  for (size_t k = from; k < R->n; k++) {
    h = (h ^ (uint64_t)R->d[k].type) * 1099511628211ull;
    h = (h ^ R->d[k].job) * 1099511628211ull;
    h = (h ^ R->d[k].gpu) * 1099511628211ull;
    for (unsigned m = 0; m < R->d[k].ngpus && m < 8; m++) h = (h ^ R->gpus[k][m]) * 1099511628211ull;
  }
  return h;
}

/* Random joins, leaves, misses, heartbeats, degradations, arrivals, progress, finishes, crashes,
 * checkpoints and ticks for each policy, 3000 events each; invariants after every event, and at
 * the end: every job ended once or is still queued/running. Returns a hash of the decisions. */
static void hb_nodes(sched_config *c) { c->node_queues = 1; } /* no heartbeat timeouts: GPUs stay longer */
static uint64_t fuzz(sched_policy pol, uint64_t seed, int nodeq) {
  setup(pol, nodeq ? hb_nodes : hb);
  fuzz_nodes = nodeq;
  uint64_t x = seed, h = 1469598103934665603ull;
  double t = 0;
  uint32_t njobs = 0;
#define RND() (x ^= x << 13, x ^= x >> 7, x ^= x << 17, x)
  for (int i = 0; i < 3000; i++) {
    t += (double)(RND() % 100) / 10.0;
    unsigned what = RND() % 12;
    uint32_t g = RND() % 24;
    sched_gpu_status gs;
    sched_gpu_query(S, g, t, &gs);
    size_t before = R->n;
    if (what <= 1) {
      fuzz_join_or_leave(t, g, gs.state, what);
    } else if (what == 2) {
      if (gs.state != SCHED_GPU_ABSENT || R->n) {
        sched_event e = {.type = SCHED_EV_HEARTBEAT, .t = t, .gpu = g};
        int rc = sched_handle(S, &e);
        CU_ASSERT(rc == 0 || rc == SCHED_ESTATE);
        char msg[256];
        CU_ASSERT_EQUAL_FATAL(sched_check_invariants(S, msg, sizeof msg), 0);
      }
    } else if (what == 3 && gs.state != SCHED_GPU_ABSENT) {
      gev(SCHED_EV_GPU_DEGRADE, t, g, 0.1 + (RND() % 10) / 10.0);
    } else if (what <= 5 && njobs < 900) {
      sched_job_spec sp = batch(1 + RND() % 3, 100);
      sp.region = (RND() % 3) ? -1 : (int32_t)(RND() % 2);
      sp.min_grade = (uint16_t)(RND() % 2);
      if (nodeq) sp.node = (RND() % 5) ? (int32_t)(RND() % 4) : -1; /* GP Node, or any */
      CU_ASSERT_EQUAL(arrive(t, njobs++, sp), 0);
    } else if (what <= 10 && njobs) {
      uint32_t jid = RND() % njobs;
      /* half the time, the run placed last: more of them finish (combinations keep their GPUs
       * longer, with standbys, and finish only so) */
      int recent = (nodeq || (unsigned)pol >= SCHED_FT_COUNT) && (RND() % 2);
      if (recent)
        for (size_t k = R->n; k-- > 0;)
          if (R->d[k].type == SCHED_D_PLACE) {
            jid = R->d[k].job;
            break;
          }
      sched_job_status st = jstat(jid);
      /* A run id that may be current or stale. */
      uint32_t run = st.state == SCHED_JOB_RUNNING ? (uint32_t)(RND() % 6) : 0;
      for (size_t k = R->n; k-- > 0 && (recent || (RND() % 2));)
        if (R->d[k].job == jid && R->d[k].type == SCHED_D_PLACE) {
          run = R->d[k].run;
          break;
        }
      sched_ev_type ty = what == 6   ? SCHED_EV_JOB_PROGRESS
                         : what == 7 ? SCHED_EV_JOB_FINISH
                         : what == 8 ? SCHED_EV_JOB_FAIL
                         : what == 9 ? SCHED_EV_CKPT_DONE
                                     : SCHED_EV_JOB_PROGRESS;
      CU_ASSERT_EQUAL(jev(ty, t, jid, run, (double)(RND() % 100)), 0);
    } else {
      ev((sched_event){.type = (RND() % 4) ? SCHED_EV_TICK : SCHED_EV_BILLING, .t = t});
    }
    h = hash_decisions(h, before);
    if (R->n > MAXD - 200) R->n = 0;
  }
#undef RND
  unsigned ended = 0;
  for (uint32_t j = 0; j < njobs; j++) {
    sched_job_status st = jstat(j);
    CU_ASSERT(st.state == SCHED_JOB_QUEUED || st.state == SCHED_JOB_RUNNING || st.state == SCHED_JOB_ENDED);
    ended += st.state == SCHED_JOB_ENDED;
  }
  sched_counters c;
  sched_counters_get(S, &c);
  CU_ASSERT_EQUAL(c.jobs_completed + c.jobs_failed, ended);
  if (!c.jobs_completed) fprintf(stderr, "fuzz %s: no job completed\n", sched_policy_name(pol));
  CU_ASSERT(c.jobs_completed > 0);
  CU_ASSERT(c.gpu_failures > 0);
  /* every member of every placement was told as chosen, and nothing else */
  CU_ASSERT(R->placed > 0);
  CU_ASSERT_EQUAL(R->told, R->placed);
  teardown();
  return h;
}

/* The combinations the fuzzers run besides the built-in rows. */
static const char *const fuzz_combos[] = {"checkpoint+standby", "replicate+checkpoint", "standby+replicate",
                                          "checkpoint+speculative", "checkpoint+standby+replicate"};
#define NFUZZ_COMBOS (sizeof fuzz_combos / sizeof *fuzz_combos)
static sched_policy fuzz_policy(unsigned i) {
  return (sched_policy)(i < SCHED_FT_COUNT ? (int)i : sched_policy_parse(fuzz_combos[i - SCHED_FT_COUNT]));
}

static void test_fuzz_all_policies(void) {
  for (unsigned p = 0; p < SCHED_FT_COUNT + NFUZZ_COMBOS; p++) {
    uint64_t a = fuzz(fuzz_policy(p), 88172645463325252ull + (uint64_t)p, 0);
    uint64_t b = fuzz(fuzz_policy(p), 88172645463325252ull + (uint64_t)p, 0);
    CU_ASSERT_EQUAL(a, b); /* same events, same decisions */
  }
}

/* Wide jobs on random streams: 1,100 GPUs on hosts of 1 to 4 (the consumer rigs of the market),
 * jobs of 1 to 512 GPUs (log-uniform widths, so that a few are very wide), and every kind of event
 * (joins, leaves, misses, degradations, progress, finishes, crashes, checkpoints, ticks); the
 * invariants hold after every event and every decision, for every policy and the combinations.
 * Every policy places a job of 200 GPUs or more (some of 480 or more), and jobs of 64 GPUs or more
 * complete. */
#define WIDE_GPUS 1100u
static unsigned wide_asked_512; /* jobs of the widest width (512 GPUs) the streams submitted */
static void wide_cfg(sched_config *c) {
  c->max_gpus = c->max_providers = 2048;
  c->heartbeat_timeout_s = 0;
}
static void wide_join(double t, uint32_t g) {
  sched_event e = {.type = SCHED_EV_GPU_JOIN, .t = t, .gpu = g};
  e.u.gpu = ginfo(g, g % 2, (g / 7) % 2, 0.5 + (g % 5) * 0.5);
  e.u.gpu.host = 1 + g / 3;          /* hosts of 3 GPUs (the last may have fewer), consecutive ids */
  if (g % 11 == 0) e.u.gpu.host = 0; /* some single-GPU machines */
  CU_ASSERT_EQUAL(ev(e), 0);
}
static uint64_t fuzz_wide(sched_policy pol, uint64_t seed, unsigned *widest, unsigned *wide_done) {
  setup(pol, wide_cfg);
  uint64_t x = seed, h = 1469598103934665603ull;
  double t = 0;
  uint32_t njobs = 0;
  *widest = 0;
  *wide_done = 0;
  unsigned widths[1000] = {0};
#define RND() (x ^= x << 13, x ^= x >> 7, x ^= x << 17, x)
  for (uint32_t g = 0; g < WIDE_GPUS; g++) wide_join(0, g);
  for (int i = 0; i < 2500; i++) {
    t += (double)(RND() % 100) / 10.0;
    unsigned what = RND() % 12;
    uint32_t g = (uint32_t)(RND() % WIDE_GPUS);
    sched_gpu_status gs;
    sched_gpu_query(S, g, t, &gs);
    size_t before = R->n;
    if (what <= 1) {
      if (gs.state == SCHED_GPU_ABSENT)
        wide_join(t, g);
      else
        CU_ASSERT_EQUAL(gev(what ? SCHED_EV_GPU_MISSED : SCHED_EV_GPU_LEAVE, t, g, 0), 0);
    } else if (what == 2 && gs.state != SCHED_GPU_ABSENT) {
      gev(SCHED_EV_GPU_DEGRADE, t, g, 0.1 + (RND() % 10) / 10.0);
    } else if (what <= 4 && njobs < 1000) {
      /* width 2^u for u uniform in [0, 9], then uniform below the next power: 1 .. 512 */
      unsigned u = (unsigned)(RND() % 10), w = (1u << u) + (u ? (unsigned)(RND() % (1u << u)) : 0);
      if (w > 512) w = 512;
      wide_asked_512 += w == 512;
      sched_job_spec sp = batch(w, 100.0 * w);
      sp.region = (RND() % 4) ? -1 : (int32_t)(RND() % 2);
      sp.step_work = (RND() % 2) ? 1.0 : 0;
      sp.step_bytes = sp.step_work > 0 ? 1e6 : 0;
      widths[njobs] = w;
      CU_ASSERT_EQUAL(arrive(t, njobs++, sp), 0);
    } else if (what <= 10 && njobs) {
      /* half the time the job placed last, else any job */
      uint32_t jid = (uint32_t)(RND() % njobs), run = 0;
      int recent = RND() % 2;
      for (size_t k = R->n; k-- > 0;)
        if (R->d[k].type == SCHED_D_PLACE && (recent || R->d[k].job == jid)) {
          jid = R->d[k].job;
          run = R->d[k].run;
          break;
        }
      sched_ev_type ty = what == 5   ? SCHED_EV_JOB_PROGRESS
                         : what == 6 ? SCHED_EV_JOB_FINISH
                         : what == 7 ? SCHED_EV_JOB_FAIL
                         : what == 8 ? SCHED_EV_CKPT_DONE
                         : what == 9 ? SCHED_EV_JOB_FINISH
                                     : SCHED_EV_JOB_PROGRESS;
      sched_job_status st = jstat(jid);
      CU_ASSERT_EQUAL(jev(ty, t, jid, run, (double)(RND() % 100)), 0);
      if (ty == SCHED_EV_JOB_FINISH && st.state == SCHED_JOB_RUNNING && jstat(jid).state == SCHED_JOB_ENDED &&
          widths[jid] >= 64)
        (*wide_done)++;
    } else {
      ev((sched_event){.type = (RND() % 4) ? SCHED_EV_TICK : SCHED_EV_BILLING, .t = t});
    }
    for (size_t k = before; k < R->n; k++)
      if (R->d[k].type == SCHED_D_PLACE && R->d[k].ngpus > *widest) *widest = R->d[k].ngpus;
    h = hash_decisions(h, before);
    if (R->n > MAXD - 2000) R->n = 0;
  }
#undef RND
  unsigned ended = 0;
  for (uint32_t j = 0; j < njobs; j++) ended += jstat(j).state == SCHED_JOB_ENDED;
  sched_counters c;
  sched_counters_get(S, &c);
  CU_ASSERT_EQUAL(c.jobs_completed + c.jobs_failed, ended);
  CU_ASSERT_EQUAL(R->told, R->placed); /* every member of every placement was told as chosen */
  teardown();
  return h;
}

static void test_fuzz_wide_jobs(void) {
  unsigned widest_all = 0, done_all = 0;
  wide_asked_512 = 0;
  for (unsigned p = 0; p < SCHED_FT_COUNT + NFUZZ_COMBOS; p++) {
    unsigned widest, done, w2, d2;
    uint64_t a = fuzz_wide(fuzz_policy(p), 0x51ED270B27D5E3ull + p, &widest, &done);
    uint64_t b = fuzz_wide(fuzz_policy(p), 0x51ED270B27D5E3ull + p, &w2, &d2);
    CU_ASSERT_EQUAL(a, b);
    if (getenv("SPOTLAB_TEST_VERBOSE"))
      fprintf(stderr, "fuzz_wide %s: widest placement %u, %u jobs of 64+ GPUs completed\n",
              sched_policy_name(fuzz_policy(p)), widest, done);
    CU_ASSERT(widest >= 200);
    widest_all = widest > widest_all ? widest : widest_all;
    done_all += done;
  }
  CU_ASSERT(widest_all >= 480);
  CU_ASSERT(wide_asked_512 > 0); /* the streams reach the widest width, 512 */
  CU_ASSERT(done_all > 0);       /* jobs of 64 GPUs or more completed */
}

/* GP Nodes with their own queues, on random streams for every policy: the invariants (checked
 * after every event) include that a job naming a node holds only that node's GPUs, as members,
 * replacements and standbys. */
static void test_fuzz_node_queues(void) {
  for (unsigned p = 0; p < SCHED_FT_COUNT + NFUZZ_COMBOS; p++) {
    uint64_t a = fuzz(fuzz_policy(p), 1234567 + (uint64_t)p, 1);
    uint64_t b = fuzz(fuzz_policy(p), 1234567 + (uint64_t)p, 1);
    CU_ASSERT_EQUAL(a, b);
  }
}

/* ---- Per-job fault tolerance, candidates, hold, withdraw, forget, memory growth -------------- */

static unsigned count_job(sched_dec_type type, uint32_t job) {
  unsigned n = 0;
  for (size_t i = 0; i < R->n; i++) n += R->d[i].type == type && R->d[i].job == job;
  return n;
}
/* The last decision of a type for a job, or NULL. */
static const sched_decision *last_job(sched_dec_type type, uint32_t job) {
  for (size_t i = R->n; i-- > 0;)
    if (R->d[i].type == type && R->d[i].job == job) return &R->d[i];
  return NULL;
}
/* The same, required: the test stops here if there is none. */
static const sched_decision *must(sched_dec_type type, uint32_t job) {
  const sched_decision *d = last_job(type, job);
  CU_ASSERT_PTR_NOT_NULL_FATAL(d);
  return d;
}
static size_t idx(const sched_decision *d) { return (size_t)(d - R->d); }
static sched_ft ftmake(sched_policy p, unsigned k) {
  sched_ft f = {p, SCHED_CKPT_FIXED, 100, k, 1, 100};
  return f;
}
static int in_set(uint32_t x, const uint32_t *set, unsigned n) {
  for (unsigned i = 0; i < n; i++)
    if (set[i] == x) return 1;
  return 0;
}
static sched_counters counters(void) {
  sched_counters c;
  sched_counters_get(S, &c);
  return c;
}

/* One core, three jobs with three policies: N+k (its own ft), none (its own ft) and the
 * configuration's checkpointing (ft = NULL); each reacts to the loss of a member in its own way. */
static void test_per_job_policies(void) {
  setup(SCHED_FT_CHECKPOINT, NULL);
  for (uint32_t g = 0; g < 5; g++) join(0, g);
  sched_ft fa = ftmake(SCHED_FT_STANDBY, 1), fb = ftmake(SCHED_FT_NONE, 0);
  sched_job_spec a = batch(2, 1000), b = batch(1, 1000), c = batch(1, 1000);
  a.ft = &fa;
  b.ft = &fb;
  CU_ASSERT_EQUAL(arrive(1, 1, a), 0);
  fa = ftmake(SCHED_FT_NONE, 0); /* copied at arrival: the caller's struct no longer matters */
  CU_ASSERT_EQUAL(arrive(2, 2, b), 0);
  CU_ASSERT_EQUAL(arrive(3, 3, c), 0);
  for (uint32_t j = 1; j <= 3; j++) CU_ASSERT_EQUAL(count_job(SCHED_D_PLACE, j), 1);
  CU_ASSERT_EQUAL(count_job(SCHED_D_STANDBY, 1), 1);
  CU_ASSERT_EQUAL(count_job(SCHED_D_STANDBY, 2), 0);
  CU_ASSERT_EQUAL(count_job(SCHED_D_STANDBY, 3), 0);
  const sched_decision *sb = last_job(SCHED_D_STANDBY, 1);
  CU_ASSERT_FATAL(sb != NULL);
  uint32_t spare = sb->gpu;
  CU_ASSERT_EQUAL(gstate(spare), SCHED_GPU_STANDBY);
  for (uint32_t g = 0; g < 5; g++) CU_ASSERT_NOT_EQUAL(gstate(g), SCHED_GPU_IDLE); /* 2+1, 1, 1 */

  /* N+k: a member leaves, the standby takes its place; no stop, no restart. */
  uint32_t m1 = must(SCHED_D_PLACE, 1)->gpus[0];
  size_t n0 = R->n;
  CU_ASSERT_EQUAL(gev(SCHED_EV_GPU_LEAVE, 10, m1, 0), 0);
  const sched_decision *rp = last_job(SCHED_D_REPLACE, 1);
  CU_ASSERT_FATAL(rp != NULL && idx(rp) >= n0);
  CU_ASSERT_EQUAL(rp->old_gpu, m1);
  CU_ASSERT_EQUAL(rp->gpu, spare);
  CU_ASSERT_EQUAL(rp->reason, SCHED_R_GPU_LOST);
  CU_ASSERT_EQUAL(count_job(SCHED_D_STOP, 1), 0);
  CU_ASSERT_EQUAL(gstate(spare), SCHED_GPU_BUSY);
  sched_job_status st = jstat(1);
  CU_ASSERT_EQUAL(st.state, SCHED_JOB_RUNNING);
  CU_ASSERT_EQUAL(st.restarts, 0);
  CU_ASSERT_EQUAL(st.replacements, 1);

  /* none: the same kind of loss stops the run and requeues the job (no idle GPU left). */
  uint32_t m2 = must(SCHED_D_PLACE, 2)->gpus[0];
  n0 = R->n;
  CU_ASSERT_EQUAL(gev(SCHED_EV_GPU_LEAVE, 11, m2, 0), 0);
  const sched_decision *sp2 = last_job(SCHED_D_STOP, 2);
  CU_ASSERT_FATAL(sp2 != NULL && idx(sp2) >= n0);
  CU_ASSERT_EQUAL(sp2->reason, SCHED_R_GPU_LOST);
  CU_ASSERT_EQUAL(count_job(SCHED_D_REPLACE, 2), 0);
  st = jstat(2);
  CU_ASSERT_EQUAL(st.state, SCHED_JOB_QUEUED);
  CU_ASSERT_EQUAL(st.restarts, 1);
  CU_ASSERT_EQUAL(st.runs_active, 0);

  /* ft = NULL: the configuration's checkpointing; the other two never checkpoint. */
  double w = sched_next_wakeup(S);
  CU_ASSERT_FATAL(isfinite(w) && w > 11);
  ev((sched_event){.type = SCHED_EV_TICK, .t = w});
  CU_ASSERT_EQUAL(count(SCHED_D_CHECKPOINT), 1);
  const sched_decision *ck = last_job(SCHED_D_CHECKPOINT, 3);
  CU_ASSERT_FATAL(ck != NULL);
  CU_ASSERT_EQUAL(jev(SCHED_EV_CKPT_DONE, w + 1, 3, ck->run, 40), 0);
  CU_ASSERT_DOUBLE_EQUAL(jstat(3).saved_work, 40, 0);
  uint32_t m3 = must(SCHED_D_PLACE, 3)->gpus[0];
  CU_ASSERT_EQUAL(gev(SCHED_EV_GPU_LEAVE, w + 2, m3, 0), 0);
  CU_ASSERT_EQUAL(count_job(SCHED_D_REPLACE, 3), 0);
  CU_ASSERT_EQUAL(must(SCHED_D_STOP, 3)->reason, SCHED_R_GPU_LOST);
  st = jstat(3);
  CU_ASSERT_EQUAL(st.state, SCHED_JOB_QUEUED);
  CU_ASSERT_DOUBLE_EQUAL(st.saved_work, 40, 0); /* resumes from its checkpoint */
  CU_ASSERT_EQUAL(count_job(SCHED_D_CHECKPOINT, 1) + count_job(SCHED_D_CHECKPOINT, 2), 0);
  teardown();

  /* The other way round: configuration N+k; ft = NULL gets a standby, an own checkpoint ft none
   * (and its checkpoints), an own replicate ft its SCHED_MAX_RUNS copies. */
  setup(SCHED_FT_STANDBY, NULL);
  for (uint32_t g = 0; g < 8; g++) join(0, g);
  sched_ft fc = ftmake(SCHED_FT_CHECKPOINT, 3), fr = ftmake(SCHED_FT_REPLICATE, 0);
  fr.replicas = SCHED_MAX_RUNS;
  sched_job_spec d = batch(1, 1000), e = batch(1, 1000), f = batch(1, 1000);
  e.ft = &fc;
  f.ft = &fr;
  CU_ASSERT_EQUAL(arrive(0, 1, d), 0);
  CU_ASSERT_EQUAL(arrive(0, 2, e), 0);
  CU_ASSERT_EQUAL(arrive(0, 3, f), 0);
  CU_ASSERT_EQUAL(count_job(SCHED_D_STANDBY, 1), 1);
  CU_ASSERT_EQUAL(count_job(SCHED_D_STANDBY, 2), 0);
  CU_ASSERT_EQUAL(count_job(SCHED_D_PLACE, 3), SCHED_MAX_RUNS);
  CU_ASSERT_EQUAL(jstat(3).runs_active, SCHED_MAX_RUNS);
  ev((sched_event){.type = SCHED_EV_TICK, .t = sched_next_wakeup(S)});
  CU_ASSERT_EQUAL(count_job(SCHED_D_CHECKPOINT, 2), 1);
  CU_ASSERT_EQUAL(count_job(SCHED_D_CHECKPOINT, 1) + count_job(SCHED_D_CHECKPOINT, 3), 0);
  teardown();
}

/* An invalid ft is refused before anything changes: no job, no decision, same counters, and the
 * clock did not move (an earlier event is still accepted). */
static void test_per_job_ft_invalid(void) {
  setup(SCHED_FT_CHECKPOINT, NULL);
  join(0, 0);
  join(0, 1);
  CU_ASSERT_EQUAL(arrive(5, 1, batch(1, 10)), 0);
  uint32_t run = must(SCHED_D_PLACE, 1)->run;
  sched_ft bad[9];
  for (int i = 0; i < 9; i++) bad[i] = ftmake(SCHED_FT_NONE, 0);
  bad[0].replicas = 0;
  bad[1].replicas = SCHED_MAX_RUNS + 1;
  bad[2].standby_k = SCHED_MAX_STANDBY + 1;
  bad[3].ckpt_interval_s = 0;
  bad[4].ckpt_interval_s = -100;
  bad[5].ckpt_interval_s = NAN;
  bad[6].policy = (sched_policy)SCHED_FT_MAX_ROWS;
  bad[7].ckpt_rule = (sched_ckpt_rule)3;
  bad[8].policy = SCHED_FT_STANDBY;
  bad[8].standby_k = 1000;
  sched_counters c0 = counters();
  size_t n0 = R->n;
  for (int i = 0; i < 9; i++)
    for (int hold = 0; hold < 2; hold++) {
      sched_job_spec sp = batch(1, 10);
      sp.ft = &bad[i];
      sp.hold = (uint8_t)hold;
      CU_ASSERT_EQUAL(arrive(1000 + i, 2, sp), SCHED_EINVAL);
      CU_ASSERT_EQUAL(jstat(2).state, SCHED_JOB_UNKNOWN);
      sched_counters c1 = counters();
      CU_ASSERT(memcmp(&c0, &c1, sizeof c0) == 0);
      CU_ASSERT_EQUAL(R->n, n0);
      CU_ASSERT_EQUAL(gstate(1), SCHED_GPU_IDLE);
    }
  /* The clock is where it was: t = 6 < 1000 is not SCHED_ETIME. */
  CU_ASSERT_EQUAL(jev(SCHED_EV_JOB_FINISH, 6, 1, run, 0), 0);
  CU_ASSERT_EQUAL(jstat(1).state, SCHED_JOB_ENDED);
  /* The limits themselves are valid. */
  sched_ft ok = ftmake(SCHED_FT_NONE, SCHED_MAX_STANDBY);
  ok.replicas = SCHED_MAX_RUNS;
  sched_job_spec sp = batch(1, 10);
  sp.ft = &ok;
  CU_ASSERT_EQUAL(arrive(7, 2, sp), 0);
  CU_ASSERT_EQUAL(jstat(2).state, SCHED_JOB_RUNNING);
  teardown();
}

/* Members come from the candidates named at arrival, and only from them. */
static void test_candidates(void) {
  setup(SCHED_FT_NONE, NULL);
  for (uint32_t g = 0; g < 8; g++) join(0, g);
  /* One named GPU among eight idle ones, six times over: each job lands exactly there. */
  for (uint32_t k = 0; k < 3; k++) {
    uint32_t want = 7 - 3 * k; /* 7, 4, 1 */
    uint32_t c[1] = {want};
    sched_job_spec sp = batch(1, 100);
    sp.cand = c;
    sp.ncand = 1;
    CU_ASSERT_EQUAL(arrive(1, 10 + k, sp), 0);
    const sched_decision *pl = last_job(SCHED_D_PLACE, 10 + k);
    CU_ASSERT_FATAL(pl != NULL);
    CU_ASSERT_EQUAL(pl->ngpus, 1);
    CU_ASSERT_EQUAL(pl->gpus[0], want);
  }
  /* Width 2 from {0, 2, 5}: both members from the set. */
  uint32_t c3[3] = {0, 2, 5};
  sched_job_spec sp = batch(2, 100);
  sp.cand = c3;
  sp.ncand = 3;
  CU_ASSERT_EQUAL(arrive(2, 20, sp), 0);
  const sched_decision *pl = last_job(SCHED_D_PLACE, 20);
  CU_ASSERT_FATAL(pl != NULL && pl->ngpus == 2);
  CU_ASSERT(in_set(pl->gpus[0], c3, 3) && in_set(pl->gpus[1], c3, 3));
  CU_ASSERT_NOT_EQUAL(pl->gpus[0], pl->gpus[1]);
  /* Named GPUs busy (7), never seen (40) or gone (6 leaves): not placed, although three GPUs
   * are idle; it waits in the queue. The candidates are caller memory for the arrival only:
   * freed right after it (ASan would catch a later read). */
  CU_ASSERT_EQUAL(gev(SCHED_EV_GPU_LEAVE, 3, 6, 0), 0);
  unsigned idle = 0;
  for (uint32_t g = 0; g < 8; g++) idle += gstate(g) == SCHED_GPU_IDLE;
  CU_ASSERT_EQUAL(idle, 2);
  uint32_t *cb = malloc(3 * sizeof *cb);
  cb[0] = 7;
  cb[1] = 40;
  cb[2] = 6;
  sp = batch(1, 100);
  sp.cand = cb;
  sp.ncand = 3;
  CU_ASSERT_EQUAL(arrive(4, 30, sp), 0);
  free(cb);
  CU_ASSERT_EQUAL(count_job(SCHED_D_PLACE, 30), 0);
  CU_ASSERT_EQUAL(jstat(30).state, SCHED_JOB_QUEUED);
  /* The same with hold: it ends at once, released, in the same call. */
  uint32_t cbad[2] = {7, 40};
  sp = batch(1, 100);
  sp.cand = cbad;
  sp.ncand = 2;
  sp.hold = 1;
  size_t n0 = R->n;
  CU_ASSERT_EQUAL(arrive(5, 31, sp), 0);
  CU_ASSERT_EQUAL(count_job(SCHED_D_PLACE, 31), 0);
  const sched_decision *end = last_job(SCHED_D_END, 31);
  CU_ASSERT_FATAL(end != NULL && idx(end) >= n0);
  CU_ASSERT_EQUAL(end->reason, SCHED_R_RELEASED);
  CU_ASSERT_EQUAL(jstat(31).state, SCHED_JOB_ENDED);
  /* After its arrival the queued job may run anywhere: the next capacity change places it. */
  join(6, 9);
  CU_ASSERT_EQUAL(jstat(30).state, SCHED_JOB_RUNNING);
  teardown();
}

/* "The members come from these, standbys from anywhere": an N+k job named two GPUs gets its
 * members there and its standbys elsewhere, at once. */
static void test_candidates_standby_anywhere(void) {
  setup(SCHED_FT_NONE, NULL);
  for (uint32_t g = 0; g < 6; g++) join(0, g);
  sched_ft f = ftmake(SCHED_FT_STANDBY, 2);
  uint32_t c[2] = {1, 4};
  for (int hold = 0; hold < 2; hold++) {
    uint32_t jid = 1 + (uint32_t)hold;
    if (hold) { /* room for the second job: the first one finishes */
      CU_ASSERT_EQUAL(jev(SCHED_EV_JOB_FINISH, 2, 1, must(SCHED_D_PLACE, 1)->run, 0), 0);
      for (uint32_t g = 0; g < 6; g++) CU_ASSERT_EQUAL(gstate(g), SCHED_GPU_IDLE);
    }
    sched_job_spec sp = batch(2, 100);
    sp.ft = &f;
    sp.cand = c;
    sp.ncand = 2;
    sp.hold = (uint8_t)hold;
    size_t n0 = R->n;
    CU_ASSERT_EQUAL(arrive(1 + 2 * hold, jid, sp), 0);
    const sched_decision *pl = last_job(SCHED_D_PLACE, jid);
    CU_ASSERT_FATAL(pl != NULL && idx(pl) >= n0 && pl->ngpus == 2);
    CU_ASSERT(in_set(pl->gpus[0], c, 2) && in_set(pl->gpus[1], c, 2));
    unsigned nsb = 0;
    for (size_t i = n0; i < R->n; i++)
      if (R->d[i].type == SCHED_D_STANDBY && R->d[i].job == jid) {
        nsb++;
        CU_ASSERT(!in_set(R->d[i].gpu, c, 2));
        CU_ASSERT_EQUAL(gstate(R->d[i].gpu), SCHED_GPU_STANDBY);
      }
    CU_ASSERT_EQUAL(nsb, 2);
  }
  teardown();
}

/* hold: placed when it can be, else handed back at once; a held job that loses its run is
 * handed back with its checkpoint and never placed again by the core. */
static void test_hold(void) {
  setup(SCHED_FT_CHECKPOINT, NULL);
  for (uint32_t g = 0; g < 3; g++) join(0, g);
  sched_job_spec sp = batch(2, 1000);
  sp.hold = 1;
  CU_ASSERT_EQUAL(arrive(0, 1, sp), 0);
  CU_ASSERT_EQUAL(count_job(SCHED_D_PLACE, 1), 1);
  CU_ASSERT_EQUAL(jstat(1).state, SCHED_JOB_RUNNING);
  /* Width 2 with one idle GPU: released in the same call, nothing placed, never queued. */
  size_t n0 = R->n;
  CU_ASSERT_EQUAL(arrive(1, 2, sp), 0);
  CU_ASSERT_EQUAL(R->n, n0 + 1);
  CU_ASSERT_EQUAL(R->d[n0].type, SCHED_D_END);
  CU_ASSERT_EQUAL(R->d[n0].job, 2);
  CU_ASSERT_EQUAL(R->d[n0].reason, SCHED_R_RELEASED);
  CU_ASSERT_DOUBLE_EQUAL(R->d[n0].value, 0, 0);
  sched_job_status st = jstat(2);
  CU_ASSERT_EQUAL(st.state, SCHED_JOB_ENDED);
  CU_ASSERT_EQUAL(st.outcome, SCHED_R_RELEASED);
  sched_counters c = counters();
  CU_ASSERT_EQUAL(c.jobs_released, 1);
  CU_ASSERT_EQUAL(c.jobs_failed + c.jobs_completed, 0);
  /* Job 1 checkpoints 400 units, then loses a member. */
  double w = sched_next_wakeup(S);
  ev((sched_event){.type = SCHED_EV_TICK, .t = w});
  const sched_decision *ck = last_job(SCHED_D_CHECKPOINT, 1);
  CU_ASSERT_FATAL(ck != NULL);
  CU_ASSERT_EQUAL(jev(SCHED_EV_CKPT_DONE, w + 1, 1, ck->run, 400), 0);
  uint32_t m = must(SCHED_D_PLACE, 1)->gpus[0];
  n0 = R->n;
  CU_ASSERT_EQUAL(gev(SCHED_EV_GPU_LEAVE, w + 2, m, 0), 0);
  CU_ASSERT_EQUAL_FATAL(R->n, n0 + 2);
  CU_ASSERT_EQUAL(R->d[n0].type, SCHED_D_STOP);
  CU_ASSERT_EQUAL(R->d[n0].reason, SCHED_R_GPU_LOST);
  CU_ASSERT_EQUAL(R->d[n0 + 1].type, SCHED_D_END);
  CU_ASSERT_EQUAL(R->d[n0 + 1].reason, SCHED_R_RELEASED);
  CU_ASSERT_DOUBLE_EQUAL(R->d[n0 + 1].value, 400, 0);
  st = jstat(1);
  CU_ASSERT_EQUAL(st.state, SCHED_JOB_ENDED);
  CU_ASSERT_EQUAL(st.outcome, SCHED_R_RELEASED);
  CU_ASSERT_DOUBLE_EQUAL(st.saved_work, 400, 0);
  /* Two idle GPUs would fit it, and more come: the core leaves it alone. */
  unsigned idle = 0;
  for (uint32_t g = 0; g < 3; g++) idle += gstate(g) == SCHED_GPU_IDLE;
  CU_ASSERT_EQUAL(idle, 2);
  join(w + 3, m);
  CU_ASSERT_EQUAL(count_job(SCHED_D_PLACE, 1), 1);
  CU_ASSERT_EQUAL(jstat(1).state, SCHED_JOB_ENDED);
  /* A held job whose run crashes is handed back too. */
  sp = batch(1, 100);
  sp.hold = 1;
  CU_ASSERT_EQUAL(arrive(w + 4, 3, sp), 0);
  CU_ASSERT_EQUAL(jev(SCHED_EV_JOB_FAIL, w + 5, 3, must(SCHED_D_PLACE, 3)->run, 0), 0);
  CU_ASSERT_EQUAL(must(SCHED_D_STOP, 3)->reason, SCHED_R_APP_FAILED);
  CU_ASSERT_EQUAL(must(SCHED_D_END, 3)->reason, SCHED_R_RELEASED);
  CU_ASSERT_EQUAL(count_job(SCHED_D_PLACE, 3), 1);
  c = counters();
  CU_ASSERT_EQUAL(c.jobs_released, 3);
  CU_ASSERT_EQUAL(c.jobs_failed + c.jobs_completed, 0);
  teardown();
}

static void test_withdraw(void) {
  setup(SCHED_FT_CHECKPOINT, NULL);
  join(0, 0);
  join(0, 1);
  CU_ASSERT_EQUAL(arrive(0, 1, batch(2, 1000)), 0);
  double w = sched_next_wakeup(S);
  ev((sched_event){.type = SCHED_EV_TICK, .t = w});
  CU_ASSERT_EQUAL(jev(SCHED_EV_CKPT_DONE, w, 1, must(SCHED_D_CHECKPOINT, 1)->run, 250), 0);
  /* Running: STOP (preempted), then END (withdrawn, the saved work); the GPUs are idle. */
  uint32_t run1 = must(SCHED_D_PLACE, 1)->run;
  size_t n0 = R->n;
  double t = w + 1;
  CU_ASSERT_EQUAL(jev(SCHED_EV_JOB_WITHDRAW, t, 1, 0, 0), 0);
  CU_ASSERT_EQUAL_FATAL(R->n, n0 + 2);
  CU_ASSERT_EQUAL(R->d[n0].type, SCHED_D_STOP);
  CU_ASSERT_EQUAL(R->d[n0].run, run1);
  CU_ASSERT_EQUAL(R->d[n0].reason, SCHED_R_PREEMPTED);
  CU_ASSERT_EQUAL(R->d[n0 + 1].type, SCHED_D_END);
  CU_ASSERT_EQUAL(R->d[n0 + 1].reason, SCHED_R_WITHDRAWN);
  CU_ASSERT_DOUBLE_EQUAL(R->d[n0 + 1].value, 250, 0);
  CU_ASSERT_EQUAL(gstate(0), SCHED_GPU_IDLE);
  CU_ASSERT_EQUAL(gstate(1), SCHED_GPU_IDLE);
  sched_job_status st = jstat(1);
  CU_ASSERT_EQUAL(st.state, SCHED_JOB_ENDED);
  CU_ASSERT_EQUAL(st.outcome, SCHED_R_WITHDRAWN);
  CU_ASSERT_EQUAL(st.runs_active, 0);
  CU_ASSERT_EQUAL(counters().jobs_released, 1);
  /* Withdrawing a running job while another waits: the waiting job takes its GPUs, same call. */
  CU_ASSERT_EQUAL(arrive(t, 2, batch(2, 1000)), 0);
  CU_ASSERT_EQUAL(arrive(t, 3, batch(2, 1000)), 0);
  CU_ASSERT_EQUAL(jstat(3).state, SCHED_JOB_QUEUED);
  uint32_t gone[2] = {must(SCHED_D_PLACE, 2)->gpus[0], must(SCHED_D_PLACE, 2)->gpus[1]};
  n0 = R->n;
  t += 1;
  CU_ASSERT_EQUAL(jev(SCHED_EV_JOB_WITHDRAW, t, 2, 0, 0), 0);
  const sched_decision *stp = last_job(SCHED_D_STOP, 2), *end = last_job(SCHED_D_END, 2),
                       *pl = last_job(SCHED_D_PLACE, 3);
  CU_ASSERT_FATAL(stp && end && pl && idx(stp) >= n0 && idx(pl) >= n0);
  CU_ASSERT_EQUAL(stp->reason, SCHED_R_PREEMPTED);
  CU_ASSERT_EQUAL(end->reason, SCHED_R_WITHDRAWN);
  CU_ASSERT_DOUBLE_EQUAL(end->value, 0, 0);
  CU_ASSERT(idx(stp) < idx(end));
  CU_ASSERT(in_set(pl->gpus[0], gone, 2) && in_set(pl->gpus[1], gone, 2));
  CU_ASSERT_EQUAL(jstat(3).state, SCHED_JOB_RUNNING);
  /* Queued: it just ends (no STOP). */
  CU_ASSERT_EQUAL(arrive(t, 4, batch(2, 1000)), 0);
  CU_ASSERT_EQUAL(jstat(4).state, SCHED_JOB_QUEUED);
  n0 = R->n;
  CU_ASSERT_EQUAL(jev(SCHED_EV_JOB_WITHDRAW, t, 4, 0, 0), 0);
  CU_ASSERT_EQUAL_FATAL(R->n, n0 + 1);
  CU_ASSERT_EQUAL(R->d[n0].type, SCHED_D_END);
  CU_ASSERT_EQUAL(R->d[n0].reason, SCHED_R_WITHDRAWN);
  CU_ASSERT_EQUAL(jstat(4).state, SCHED_JOB_ENDED);
  /* Queued after an interruption, with a checkpoint: the END carries the saved work. (The
   * earliest wake-ups may be the stopped runs' timers: tick until job 3's comes.) */
  for (int k = 0; k < 4 && !last_job(SCHED_D_CHECKPOINT, 3); k++) {
    w = sched_next_wakeup(S);
    ev((sched_event){.type = SCHED_EV_TICK, .t = w});
  }
  const sched_decision *ck = last_job(SCHED_D_CHECKPOINT, 3);
  CU_ASSERT_FATAL(ck != NULL);
  CU_ASSERT_EQUAL(jev(SCHED_EV_CKPT_DONE, w, 3, ck->run, 123), 0);
  CU_ASSERT_EQUAL(gev(SCHED_EV_GPU_LEAVE, w + 1, must(SCHED_D_PLACE, 3)->gpus[0], 0), 0);
  CU_ASSERT_EQUAL(jstat(3).state, SCHED_JOB_QUEUED);
  n0 = R->n;
  CU_ASSERT_EQUAL(jev(SCHED_EV_JOB_WITHDRAW, w + 2, 3, 0, 0), 0);
  CU_ASSERT_EQUAL_FATAL(R->n, n0 + 1);
  CU_ASSERT_EQUAL(R->d[n0].type, SCHED_D_END);
  CU_ASSERT_DOUBLE_EQUAL(R->d[n0].value, 123, 0);
  /* Ended already: stale, nothing else changes. */
  sched_counters c0 = counters();
  sched_job_status s0 = jstat(1);
  n0 = R->n;
  CU_ASSERT_EQUAL(jev(SCHED_EV_JOB_WITHDRAW, w + 3, 1, 0, 0), 0);
  sched_counters c1 = counters();
  CU_ASSERT_EQUAL(R->n, n0);
  CU_ASSERT_EQUAL(c1.stale_events, c0.stale_events + 1);
  c1.stale_events = c0.stale_events;
  c1.events = c0.events;
  CU_ASSERT(memcmp(&c0, &c1, sizeof c0) == 0);
  sched_job_status s1 = jstat(1);
  CU_ASSERT(memcmp(&s0, &s1, sizeof s0) == 0);
  CU_ASSERT_EQUAL(c1.jobs_released, 4);
  /* Never arrived, or out of range. */
  CU_ASSERT_EQUAL(jev(SCHED_EV_JOB_WITHDRAW, w + 3, 77, 0, 0), SCHED_EINVAL);
  CU_ASSERT_EQUAL(jev(SCHED_EV_JOB_WITHDRAW, w + 3, 5000, 0, 0), SCHED_EINVAL);
  teardown();
  /* A service: its replicas stop, it ends. */
  setup(SCHED_FT_NONE, NULL);
  join(0, 0);
  sched_job_spec sv = {0};
  sv.kind = SCHED_JOB_SERVICE;
  sv.region = -1;
  sv.req_per_score_s = 10;
  sv.min_replicas = 1;
  sv.max_replicas = 2;
  CU_ASSERT_EQUAL(arrive(0, 1, sv), 0);
  CU_ASSERT_EQUAL(gstate(0), SCHED_GPU_BUSY);
  CU_ASSERT_EQUAL(jev(SCHED_EV_JOB_WITHDRAW, 1, 1, 0, 0), 0);
  CU_ASSERT_EQUAL(must(SCHED_D_STOP, 1)->reason, SCHED_R_PREEMPTED);
  CU_ASSERT_EQUAL(must(SCHED_D_END, 1)->reason, SCHED_R_WITHDRAWN);
  CU_ASSERT_EQUAL(gstate(0), SCHED_GPU_IDLE);
  teardown();
}

static void test_forget(void) {
  setup(SCHED_FT_NONE, NULL);
  join(0, 0);
  CU_ASSERT_EQUAL(arrive(0, 1, batch(1, 10)), 0);
  CU_ASSERT_EQUAL(arrive(0, 2, batch(1, 10)), 0);
  /* Only ended jobs can be forgotten; refused events change nothing. */
  sched_counters c0 = counters();
  CU_ASSERT_EQUAL(jev(SCHED_EV_JOB_FORGET, 1, 1, 0, 0), SCHED_ESTATE); /* running */
  CU_ASSERT_EQUAL(jev(SCHED_EV_JOB_FORGET, 1, 2, 0, 0), SCHED_ESTATE); /* queued */
  CU_ASSERT_EQUAL(jev(SCHED_EV_JOB_FORGET, 1, 3, 0, 0), SCHED_EINVAL); /* unknown */
  CU_ASSERT_EQUAL(jev(SCHED_EV_JOB_FORGET, 1, 5000, 0, 0), SCHED_EINVAL);
  sched_counters c1 = counters();
  CU_ASSERT(memcmp(&c0, &c1, sizeof c0) == 0);
  CU_ASSERT_EQUAL(jstat(1).state, SCHED_JOB_RUNNING);
  CU_ASSERT_EQUAL(jstat(2).state, SCHED_JOB_QUEUED);
  /* Finished, forgotten, back under the same id: a new job that runs and completes. */
  CU_ASSERT_EQUAL(jev(SCHED_EV_JOB_FINISH, 2, 1, must(SCHED_D_PLACE, 1)->run, 0), 0);
  CU_ASSERT_EQUAL(jstat(2).state, SCHED_JOB_RUNNING);
  CU_ASSERT_EQUAL(jev(SCHED_EV_JOB_FORGET, 3, 1, 0, 0), 0);
  CU_ASSERT_EQUAL(jstat(1).state, SCHED_JOB_UNKNOWN);
  CU_ASSERT_EQUAL(jev(SCHED_EV_JOB_FORGET, 3, 1, 0, 0), SCHED_EINVAL); /* gone */
  CU_ASSERT_EQUAL(arrive(4, 1, batch(1, 10)), 0);
  sched_job_status st = jstat(1);
  CU_ASSERT_EQUAL(st.state, SCHED_JOB_QUEUED);
  CU_ASSERT_DOUBLE_EQUAL(st.submit, 4, 0);
  CU_ASSERT_EQUAL(st.restarts, 0);
  CU_ASSERT_DOUBLE_EQUAL(st.cost, 0, 0);
  CU_ASSERT_EQUAL(jev(SCHED_EV_JOB_FINISH, 5, 2, must(SCHED_D_PLACE, 2)->run, 0), 0);
  CU_ASSERT_EQUAL(jstat(1).state, SCHED_JOB_RUNNING);
  CU_ASSERT_EQUAL(count_job(SCHED_D_PLACE, 1), 2);
  CU_ASSERT_EQUAL(jev(SCHED_EV_JOB_FINISH, 6, 1, must(SCHED_D_PLACE, 1)->run, 0), 0);
  CU_ASSERT_EQUAL(jstat(1).state, SCHED_JOB_ENDED);
  CU_ASSERT_EQUAL(jstat(1).outcome, SCHED_R_COMPLETED);
  /* Released, forgotten, back again. */
  CU_ASSERT_EQUAL(jev(SCHED_EV_JOB_FORGET, 7, 1, 0, 0), 0);
  sched_job_spec sp = batch(2, 10); /* width 2 on one GPU: released at once */
  sp.hold = 1;
  CU_ASSERT_EQUAL(arrive(8, 1, sp), 0);
  CU_ASSERT_EQUAL(jstat(1).outcome, SCHED_R_RELEASED);
  CU_ASSERT_EQUAL(jev(SCHED_EV_JOB_FORGET, 9, 1, 0, 0), 0);
  CU_ASSERT_EQUAL(arrive(10, 1, batch(1, 10)), 0);
  CU_ASSERT_EQUAL(jev(SCHED_EV_JOB_FINISH, 11, 1, must(SCHED_D_PLACE, 1)->run, 0), 0);
  sched_counters c = counters();
  CU_ASSERT_EQUAL(c.jobs_arrived, 5);
  CU_ASSERT_EQUAL(c.jobs_completed, 4);
  CU_ASSERT_EQUAL(c.jobs_released, 1);
  CU_ASSERT_EQUAL(c.jobs_failed, 0);
  CU_ASSERT_EQUAL(count(SCHED_D_END), c.jobs_completed + c.jobs_released + c.jobs_failed);
  teardown();
}

/* A job id that arrives again is a new job: the timers and runs of its previous life do not
 * touch it. Its first checkpoint is due ckpt_interval_s after its own placement, and a late
 * report of the old run is stale. */
/* A GPU gone for good is forgotten and its id joins again as another provider's GPU; the first
 * provider's reputation and stake stay with the provider. */
static void test_gpu_forget(void) {
  setup(SCHED_FT_NONE, NULL);
  CU_ASSERT(isnan(sched_provider_reputation(S, 0, 0, NULL))); /* never joined */
  join(0, 0);
  CU_ASSERT_EQUAL(gev(SCHED_EV_GPU_FORGET, 1, 0, 0), SCHED_ESTATE);  /* present */
  CU_ASSERT_EQUAL(gev(SCHED_EV_GPU_FORGET, 1, 3, 0), SCHED_ESTATE);  /* never joined */
  CU_ASSERT_EQUAL(gev(SCHED_EV_GPU_FORGET, 1, 64, 0), SCHED_EINVAL); /* out of range */
  CU_ASSERT_EQUAL(gstate(0), SCHED_GPU_IDLE);
  /* five hours of work raise provider 0's reputation */
  CU_ASSERT_EQUAL(arrive(2, 1, batch(1, 18000)), 0);
  CU_ASSERT_EQUAL(jev(SCHED_EV_JOB_FINISH, 18002, 1, must(SCHED_D_PLACE, 1)->run, 0), 0);
  double stake = -1, rep = sched_provider_reputation(S, 0, 18002, &stake);
  CU_ASSERT(rep > 0.5);
  CU_ASSERT_DOUBLE_EQUAL(stake, 10, 0);
  CU_ASSERT_EQUAL(gev(SCHED_EV_GPU_LEAVE, 18003, 0, 0), 0);
  CU_ASSERT_EQUAL(gev(SCHED_EV_GPU_FORGET, 18004, 0, 0), 0);
  CU_ASSERT_EQUAL(gev(SCHED_EV_GPU_FORGET, 18004, 0, 0), SCHED_ESTATE); /* already forgotten */
  sched_gpu_status gs;
  sched_gpu_query(S, 0, 18004, &gs);
  CU_ASSERT_EQUAL(gs.state, SCHED_GPU_ABSENT);
  CU_ASSERT_DOUBLE_EQUAL(gs.reputation, 0, 0); /* no provider behind it now */
  CU_ASSERT_DOUBLE_EQUAL(sched_provider_reputation(S, 0, 18002, NULL), rep, 1e-12);
  /* the id comes back as provider 7's GPU and takes work */
  sched_event e = {.type = SCHED_EV_GPU_JOIN, .t = 18005, .gpu = 0};
  e.u.gpu = ginfo(7, 0, 0, 1.0);
  CU_ASSERT_EQUAL(ev(e), 0);
  CU_ASSERT_EQUAL(gstate(0), SCHED_GPU_IDLE);
  CU_ASSERT(!isnan(sched_provider_reputation(S, 7, 18005, NULL)));
  CU_ASSERT_EQUAL(arrive(18006, 2, batch(1, 10)), 0);
  CU_ASSERT_EQUAL(must(SCHED_D_PLACE, 2)->gpus[0], 0);
  teardown();
}

static void test_forget_old_life(void) {
  setup(SCHED_FT_CHECKPOINT, NULL); /* fixed interval 100 */
  join(0, 0);
  CU_ASSERT_EQUAL(arrive(0, 5, batch(1, 1e6)), 0);
  uint32_t old = must(SCHED_D_PLACE, 5)->run;
  CU_ASSERT_EQUAL(jev(SCHED_EV_JOB_WITHDRAW, 10, 5, 0, 0), 0);
  CU_ASSERT_EQUAL(jev(SCHED_EV_JOB_FORGET, 10, 5, 0, 0), 0);
  CU_ASSERT_EQUAL(arrive(50, 5, batch(1, 1e6)), 0);
  const sched_decision *pl = last_job(SCHED_D_PLACE, 5);
  uint32_t now = pl->run;
  double due = 50 + pl->value + 100;
  ev((sched_event){.type = SCHED_EV_TICK, .t = 120}); /* the old life's timer was due at ~100 */
  CU_ASSERT_EQUAL(count_job(SCHED_D_CHECKPOINT, 5), 0);
  CU_ASSERT_DOUBLE_EQUAL(sched_next_wakeup(S), due, 1e-9);
  ev((sched_event){.type = SCHED_EV_TICK, .t = due});
  CU_ASSERT_EQUAL(count_job(SCHED_D_CHECKPOINT, 5), 1);
  CU_ASSERT_EQUAL(must(SCHED_D_CHECKPOINT, 5)->run, now);
  /* The old run's late finish must not finish the new job. */
  CU_ASSERT_NOT_EQUAL(now, old);
  uint64_t stale = counters().stale_events;
  CU_ASSERT_EQUAL(jev(SCHED_EV_JOB_FINISH, due + 1, 5, old, 0), 0);
  CU_ASSERT_EQUAL(jstat(5).state, SCHED_JOB_RUNNING);
  CU_ASSERT_EQUAL(counters().stale_events, stale + 1);
  teardown();
}

/* Memory follows the ids used, not max_gpus / max_providers. */
static void test_memory_growth(void) {
  R = calloc(1, sizeof *R);
  sched_config c;
  sched_config_default(&c);
  c.max_gpus = 10000000;
  c.max_providers = 10000000;
  c.max_nodes = 4;
  c.max_jobs = 100;
  c.sink = sink;
  c.sink_ctx = R;
  c.policy = SCHED_FT_NONE;
  c.net.mode = SCHED_NET_ARQ;
  CU_ASSERT_FATAL(sched_create(&c, &S) == 0);
  sched_gpu_status st;
  CU_ASSERT_EQUAL(sched_gpu_query(S, 9999999, 0, &st), 0); /* before anything joined */
  CU_ASSERT_EQUAL(st.state, SCHED_GPU_ABSENT);
  sched_event e = {.type = SCHED_EV_GPU_JOIN, .t = 0, .gpu = 9999999};
  e.u.gpu = ginfo(9999999, 0, 0, 1.0);
  CU_ASSERT_EQUAL(ev(e), 0);
  CU_ASSERT_EQUAL(gstate(9999999), SCHED_GPU_IDLE);
  CU_ASSERT_EQUAL(sched_gpu_query(S, 5000000, 0, &st), 0);
  CU_ASSERT_EQUAL(st.state, SCHED_GPU_ABSENT);
  CU_ASSERT_EQUAL(sched_gpu_query(S, 10000000, 0, &st), SCHED_EINVAL);
  /* Ids are still checked against the bounds. */
  e.gpu = 10000000;
  CU_ASSERT_EQUAL(ev(e), SCHED_EINVAL);
  e.gpu = 1;
  e.u.gpu = ginfo(10000000, 0, 0, 1.0);
  CU_ASSERT_EQUAL(ev(e), SCHED_EINVAL);
  CU_ASSERT_EQUAL(gstate(1), SCHED_GPU_ABSENT);
  CU_ASSERT_EQUAL(gev(SCHED_EV_GPU_LEAVE, 0, 10000000, 0), SCHED_EINVAL);
  /* A job on the highest id and a small one. */
  join(0, 0);
  CU_ASSERT_EQUAL(arrive(0, 0, batch(2, 10)), 0);
  const sched_decision *pl = last(SCHED_D_PLACE);
  CU_ASSERT_FATAL(pl != NULL && pl->ngpus == 2);
  CU_ASSERT(pl->gpus[0] == 9999999 || pl->gpus[1] == 9999999);
  ev((sched_event){.type = SCHED_EV_BILLING, .t = 3600});
  CU_ASSERT_DOUBLE_EQUAL(jstat(0).cost, 2.0, 1e-9);
  CU_ASSERT_EQUAL(gev(SCHED_EV_GPU_LEAVE, 3600, 7000000, 0), 0); /* never seen: stale */
  CU_ASSERT_EQUAL(jev(SCHED_EV_JOB_FINISH, 3601, 0, pl->run, 0), 0);
  CU_ASSERT_EQUAL(jstat(0).outcome, SCHED_R_COMPLETED);
  teardown();
  /* The bounds of a whole region, 4e9 GPUs and providers: nothing is allocated for them. */
  R = calloc(1, sizeof *R);
  c.sink_ctx = R;
  c.max_gpus = c.max_providers = UINT32_MAX - 1;
  CU_ASSERT_FATAL(sched_create(&c, &S) == 0);
  join(0, 3);
  CU_ASSERT_EQUAL(arrive(0, 1, batch(1, 10)), 0);
  CU_ASSERT_EQUAL(last(SCHED_D_PLACE)->gpus[0], 3);
  CU_ASSERT_EQUAL(sched_gpu_query(S, UINT32_MAX - 2, 0, &st), 0);
  CU_ASSERT_EQUAL(st.state, SCHED_GPU_ABSENT);
  teardown();
}

static void test_names_and_defaults(void) {
  for (int i = 0; i < SCHED_FT_COUNT; i++) {
    CU_ASSERT_PTR_NOT_NULL_FATAL(sched_policy_names[i]);
    CU_ASSERT_EQUAL(sched_policy_parse(sched_policy_names[i]), i);
    CU_ASSERT_STRING_EQUAL(sched_policy_name((sched_policy)i), sched_policy_names[i]);
    for (int k = 0; k < i; k++) CU_ASSERT(strcmp(sched_policy_names[k], sched_policy_names[i]) != 0);
  }
  /* after the built-in rows, only rows registered at run time (none but a test's) */
  for (int i = SCHED_FT_COUNT; sched_policy_names[i]; i++)
    CU_ASSERT(!strcmp(sched_policy_names[i], "trio") || !strcmp(sched_policy_names[i], "spare3"));
  /* The spellings scenarios use (docs/scheduling.md). */
  static const char *const doc[SCHED_FT_COUNT] = {"none", "checkpoint", "standby", "replicate", "speculative"};
  for (int i = 0; i < SCHED_FT_COUNT; i++) CU_ASSERT_STRING_EQUAL(sched_policy_names[i], doc[i]);
  CU_ASSERT_EQUAL(sched_policy_parse("bogus"), -1);
  CU_ASSERT_EQUAL(sched_policy_parse(""), -1);
  CU_ASSERT_EQUAL(sched_policy_parse(NULL), -1);
  CU_ASSERT_STRING_EQUAL(sched_policy_name((sched_policy)SCHED_FT_MAX_ROWS), "?");
  CU_ASSERT_STRING_EQUAL(sched_ckpt_rule_names[SCHED_CKPT_FIXED], "fixed");
  CU_ASSERT_STRING_EQUAL(sched_ckpt_rule_names[SCHED_CKPT_YOUNG], "young");
  CU_ASSERT_STRING_EQUAL(sched_ckpt_rule_names[SCHED_CKPT_DALY], "daly");
  CU_ASSERT_PTR_NULL(sched_ckpt_rule_names[SCHED_CKPT_DALY + 1]);
  CU_ASSERT_STRING_EQUAL(sched_reason_name(SCHED_R_PREEMPTED), "preempted");
  CU_ASSERT_STRING_EQUAL(sched_reason_name(SCHED_R_WITHDRAWN), "withdrawn");
  CU_ASSERT_STRING_EQUAL(sched_reason_name(SCHED_R_RELEASED), "released");
  CU_ASSERT_STRING_EQUAL(sched_reason_name(SCHED_R_COUNT), "?");
  /* The defaults, as numbers and as text, agree with sched_config_default. */
  sched_config c;
  sched_config_default(&c);
  char buf[64];
  CU_ASSERT_EQUAL(c.policy, SCHED_DEFAULT_POLICY);
  snprintf(buf, sizeof buf, "\"%s\"", sched_policy_names[c.policy]);
  CU_ASSERT_STRING_EQUAL(buf, SCHED_DEFAULT_POLICY_TEXT);
  snprintf(buf, sizeof buf, "\"%s\"", sched_ckpt_rule_names[c.ckpt_rule]);
  CU_ASSERT_STRING_EQUAL(buf, SCHED_DEFAULT_CKPT_RULE_TEXT);
  CU_ASSERT_DOUBLE_EQUAL(c.ckpt_interval_s, SCHED_DEFAULT_CKPT_INTERVAL_S, 0);
  CU_ASSERT_DOUBLE_EQUAL(SCHED_DEFAULT_CKPT_INTERVAL_S, 3600, 0); /* "1h" */
  CU_ASSERT_STRING_EQUAL(SCHED_DEFAULT_CKPT_INTERVAL_TEXT, "\"1h\"");
  CU_ASSERT_DOUBLE_EQUAL(c.gpu_mtbf_s, SCHED_DEFAULT_GPU_MTBF_S, 0);
  CU_ASSERT_DOUBLE_EQUAL(SCHED_DEFAULT_GPU_MTBF_S, 24 * 3600, 0); /* "24h" */
  CU_ASSERT_STRING_EQUAL(SCHED_DEFAULT_GPU_MTBF_TEXT, "\"24h\"");
  CU_ASSERT_EQUAL(c.standby_k, SCHED_DEFAULT_STANDBY_K);
  CU_ASSERT_EQUAL(atoi(SCHED_DEFAULT_STANDBY_K_TEXT), SCHED_DEFAULT_STANDBY_K);
  CU_ASSERT_EQUAL(c.replicas, SCHED_DEFAULT_REPLICAS);
  CU_ASSERT_EQUAL(atoi(SCHED_DEFAULT_REPLICAS_TEXT), SCHED_DEFAULT_REPLICAS);
  CU_ASSERT_EQUAL(c.max_restarts, SCHED_DEFAULT_MAX_RESTARTS);
  CU_ASSERT_EQUAL(atoi(SCHED_DEFAULT_MAX_RESTARTS_TEXT), SCHED_DEFAULT_MAX_RESTARTS);
}

/* Randomized streams with the new API: per-job policies, hold, candidates, withdrawals and
 * forgotten ids arriving again, invariants after every event. Checked as it goes: a held job is
 * never queued; whatever is placed at arrival comes from the job's candidates. At the end every
 * END is counted once in jobs_completed + jobs_failed + jobs_released. */
static uint64_t fuzz_ext(sched_policy pol, uint64_t seed) {
  setup(pol, hb);
  enum { NJ = 600 };
  static uint8_t held[NJ];
  static uint32_t forgot[NJ], lastrun[NJ];
  uint32_t recent[16] = {0}; /* jobs of the latest placements */
  unsigned nplaced = 0;
  memset(held, 0, sizeof held);
  memset(lastrun, 0, sizeof lastrun);
  unsigned nforgot = 0;
  uint64_t x = seed, h = 1469598103934665603ull, ends = 0, arrivals = 0;
  double t = 0;
  uint32_t njobs = 0;
#define RND() (x ^= x << 13, x ^= x >> 7, x ^= x << 17, x)
  for (int i = 0; i < 3000; i++) {
    t += (double)(RND() % 100) / 10.0;
    unsigned what = RND() % 14;
    uint32_t g = RND() % 24;
    sched_gpu_status gs;
    sched_gpu_query(S, g, t, &gs);
    size_t before = R->n;
    if (what <= 1) {
      fuzz_join_or_leave(t, g, gs.state, what);
    } else if (what == 2 && gs.state != SCHED_GPU_ABSENT) {
      CU_ASSERT_EQUAL(gev(SCHED_EV_HEARTBEAT, t, g, 0), 0);
    } else if (what <= 5) {
      uint32_t jid;
      if (nforgot && RND() % 2) {
        unsigned k = (unsigned)(RND() % nforgot);
        jid = forgot[k];
        forgot[k] = forgot[--nforgot];
      } else if (njobs < NJ) {
        jid = njobs++;
      } else {
        continue;
      }
      sched_job_spec sp = batch(1 + RND() % 3, 100);
      sp.region = (RND() % 3) ? -1 : (int32_t)(RND() % 2);
      sched_policy fp = fuzz_policy((unsigned)(RND() % (SCHED_FT_COUNT + NFUZZ_COMBOS)));
      sched_ft f = ftmake(fp, (unsigned)(RND() % 3));
      f.ckpt_rule = (sched_ckpt_rule)(RND() % 3);
      f.ckpt_interval_s = 20 + (double)(RND() % 200);
      f.replicas = 1 + (unsigned)(RND() % SCHED_MAX_RUNS);
      f.max_restarts = (unsigned)(RND() % 5);
      if (RND() % 3) sp.ft = &f;
      sp.hold = RND() % 3 == 0;
      uint32_t cand[6];
      if (RND() % 3 == 0) {
        sp.ncand = 1 + (unsigned)(RND() % 6);
        for (unsigned k = 0; k < sp.ncand; k++) cand[k] = (uint32_t)(RND() % 24);
        sp.cand = cand;
      }
      held[jid] = sp.hold;
      CU_ASSERT_EQUAL(arrive(t, jid, sp), 0);
      arrivals++;
      for (size_t k = before; k < R->n; k++)
        if (R->d[k].type == SCHED_D_PLACE && R->d[k].job == jid && sp.cand)
          for (unsigned m = 0; m < R->d[k].ngpus && m < 8; m++) CU_ASSERT(in_set(R->gpus[k][m], cand, sp.ncand));
    } else if (what <= 10 && njobs) {
      uint32_t jid = RND() % 4 ? recent[RND() % 16] : RND() % njobs; /* mostly a job placed lately */
      sched_job_status st = jstat(jid);
      /* Mostly its latest run, sometimes one that may be stale. */
      uint32_t run = RND() % 4 ? lastrun[jid] : (uint32_t)(RND() % 6);
      sched_ev_type ty = what == 6   ? SCHED_EV_JOB_PROGRESS
                         : what == 7 ? SCHED_EV_JOB_FINISH
                         : what == 8 ? SCHED_EV_JOB_FAIL
                         : what == 9 ? SCHED_EV_CKPT_DONE
                                     : SCHED_EV_JOB_PROGRESS;
      int rc = jev(ty, t, jid, run, (double)(RND() % 100));
      CU_ASSERT_EQUAL(rc, st.state == SCHED_JOB_UNKNOWN ? SCHED_EINVAL : 0);
    } else if (what == 11 && njobs) {
      uint32_t jid = RND() % njobs;
      sched_job_status st = jstat(jid);
      int rc = jev(SCHED_EV_JOB_WITHDRAW, t, jid, 0, 0);
      CU_ASSERT_EQUAL(rc, st.state == SCHED_JOB_UNKNOWN ? SCHED_EINVAL : 0);
      if (st.state != SCHED_JOB_UNKNOWN) CU_ASSERT_EQUAL(jstat(jid).state, SCHED_JOB_ENDED);
    } else if (what == 12 && njobs) {
      uint32_t jid = RND() % njobs;
      sched_job_status st = jstat(jid);
      int rc = jev(SCHED_EV_JOB_FORGET, t, jid, 0, 0);
      CU_ASSERT_EQUAL(rc, st.state == SCHED_JOB_ENDED     ? 0
                          : st.state == SCHED_JOB_UNKNOWN ? SCHED_EINVAL
                                                          : SCHED_ESTATE);
      if (rc == 0) forgot[nforgot++] = jid;
    } else {
      ev((sched_event){.type = (RND() % 4) ? SCHED_EV_TICK : SCHED_EV_BILLING, .t = t});
    }
    for (uint32_t j = 0; j < njobs; j++)
      if (held[j] && jstat(j).state == SCHED_JOB_QUEUED) {
        CU_FAIL("a held job waits in the queue");
        held[j] = 0;
      }
    for (size_t k = before; k < R->n; k++) {
      ends += R->d[k].type == SCHED_D_END;
      if (R->d[k].type == SCHED_D_PLACE) {
        lastrun[R->d[k].job] = R->d[k].run;
        recent[nplaced++ % 16] = R->d[k].job;
      }
    }
    h = hash_decisions(h, before);
    if (R->n > MAXD - 200) R->n = 0;
  }
#undef RND
  sched_counters c = counters();
  CU_ASSERT_EQUAL(c.jobs_completed + c.jobs_failed + c.jobs_released, ends);
  CU_ASSERT_EQUAL(c.jobs_arrived, arrivals);
  CU_ASSERT(c.jobs_released > 0);
  CU_ASSERT(c.jobs_completed > 0);
  CU_ASSERT(nforgot > 0 || arrivals > njobs);
  teardown();
  return h;
}

static void test_fuzz_new_api(void) {
  for (int p = 0; p < SCHED_FT_COUNT; p++) {
    uint64_t a = fuzz_ext((sched_policy)p, 0x9E3779B97F4A7C15ull + (uint64_t)p);
    uint64_t b = fuzz_ext((sched_policy)p, 0x9E3779B97F4A7C15ull + (uint64_t)p);
    CU_ASSERT_EQUAL(a, b);
  }
}

/* A job for node 1 waits while only node 0 has idle GPUs, starts when a node-1 GPU joins, and
 * replaces a lost member and refills its standby from node 1 only; sched_node_idle counts them. */
static void nq_standby(sched_config *c) {
  c->node_queues = 1;
  c->standby_k = 1;
}
static int join_node(double t, uint32_t id, uint32_t node) {
  sched_event e = {.type = SCHED_EV_GPU_JOIN, .t = t, .gpu = id};
  e.u.gpu = ginfo(id, 0, 0, 1.0);
  e.u.gpu.node = node;
  return ev(e);
}
static void test_node_queues(void) {
  setup(SCHED_FT_STANDBY, nq_standby);
  for (uint32_t g = 0; g < 4; g++) CU_ASSERT_EQUAL(join_node(0, g, 0), 0); /* node 0: GPUs 0-3 */
  CU_ASSERT_EQUAL(sched_node_idle(S, 0, 0), 4);
  CU_ASSERT_EQUAL(sched_node_idle(S, 1, 0), 0);
  CU_ASSERT_EQUAL(sched_node_idle(S, 1, 1), 0);
  CU_ASSERT_EQUAL(sched_node_idle(S, 99, 0), 0); /* no such node */
  sched_job_spec sp = batch(2, 1000);
  sp.node = 1;
  CU_ASSERT_EQUAL(arrive(1, 7, sp), 0);
  CU_ASSERT_EQUAL(jstat(7).state, SCHED_JOB_QUEUED); /* node 0's idle GPUs are not its node's */
  CU_ASSERT_EQUAL(count(SCHED_D_PLACE), 0);
  for (uint32_t g = 10; g < 14; g++) CU_ASSERT_EQUAL(join_node(2, g, 1), 0); /* node 1: GPUs 10-13 */
  const sched_decision *pl = must(SCHED_D_PLACE, 7), *sb = must(SCHED_D_STANDBY, 7);
  for (unsigned i = 0; i < pl->ngpus; i++) CU_ASSERT(pl->gpus[i] >= 10);
  CU_ASSERT(sb->gpu >= 10);
  CU_ASSERT_EQUAL(sched_node_idle(S, 1, 0), 1);
  CU_ASSERT_EQUAL(sched_node_idle(S, 0, 0), 4);
  uint32_t m0 = pl->gpus[0], spare = sb->gpu;
  gev(SCHED_EV_GPU_LEAVE, 5, m0, 0);
  const sched_decision *rp = must(SCHED_D_REPLACE, 7);
  CU_ASSERT_EQUAL(rp->gpu, spare); /* the node's standby takes the place */
  sb = must(SCHED_D_STANDBY, 7);
  CU_ASSERT(sb->gpu >= 10 && sb->gpu != spare); /* and the node's last idle GPU is the new one */
  CU_ASSERT_EQUAL(sched_node_idle(S, 1, 0), 0);
  /* the new standby fails too: none left on node 1, none taken from node 0 */
  gev(SCHED_EV_GPU_LEAVE, 6, sb->gpu, 0);
  CU_ASSERT_EQUAL(sched_node_idle(S, 0, 0), 4);
  CU_ASSERT_EQUAL(jstat(7).state, SCHED_JOB_RUNNING);
  /* a job for any node may use node 0 */
  sched_job_spec any = batch(1, 10);
  any.node = -1;
  CU_ASSERT_EQUAL(arrive(7, 8, any), 0);
  CU_ASSERT_EQUAL(jstat(8).state, SCHED_JOB_RUNNING);
  CU_ASSERT(must(SCHED_D_PLACE, 8)->gpus[0] < 4);
  /* a node id out of range is refused */
  sched_job_spec badn = batch(1, 10);
  badn.node = 4;
  CU_ASSERT_EQUAL(sched_handle(S, &(sched_event){.type = SCHED_EV_JOB_ARRIVE, .t = 8, .job = 9, .u.job = badn}),
                  SCHED_EINVAL);
  teardown();
}

/* Contention: f(k) recovered from synthetic measurements made with a known f, its interpolation and
 * processor-sharing extrapolation, bad input; and the core's expected rate of co-located runs. */
static void test_coloc(void) {
  /* known f: 2 cores shared by k processes that each also lose 5% per co-runner to memory traffic */
  double ftrue[6];
  for (int k = 1; k <= 6; k++) ftrue[k - 1] = (k <= 2 ? 1.0 : 2.0 / k) * pow(0.95, k - 1);
  double alone[64], together[64];
  unsigned kk[64];
  size_t n = 0;
  uint64_t x = 12345;
  for (unsigned k = 1; k <= 6; k++)
    for (unsigned i = 0; i < k; i++) {
      x = x * 6364136223846793005ULL + 1442695040888963407ULL;
      alone[n] = 10 + (double)(x >> 40) / (double)(1ULL << 24) * 90; /* alone rates 10..100 */
      together[n] = alone[n] * ftrue[k - 1];
      kk[n++] = k;
    }
  sched_cluster_params cp;
  memset(&cp, 0, sizeof cp);
  CU_ASSERT_EQUAL_FATAL(sched_coloc_learn(&cp, alone, together, kk, n, 6), 0);
  CU_ASSERT_EQUAL(cp.ncoloc, 6);
  for (int k = 1; k <= 6; k++) CU_ASSERT_DOUBLE_EQUAL(cp.coloc[k - 1], ftrue[k - 1], 1e-12);
  /* symmetric multiplicative noise of +-10% on every sample, 200 samples per k: within 2% */
  double a2[1200], t2[1200];
  unsigned k2[1200];
  n = 0;
  for (unsigned k = 1; k <= 6; k++)
    for (int r = 0; r < 200; r++) {
      x = x * 6364136223846793005ULL + 1442695040888963407ULL;
      double u = (double)(x >> 11) * 0x1.0p-53;
      a2[n] = 50;
      t2[n] = 50 * ftrue[k - 1] * (1 + 0.2 * (u - 0.5));
      k2[n++] = k;
    }
  CU_ASSERT_EQUAL_FATAL(sched_coloc_learn(&cp, a2, t2, k2, n, 6), 0);
  for (int k = 1; k <= 6; k++) CU_ASSERT(fabs(cp.coloc[k - 1] / ftrue[k - 1] - 1) < 0.02);
  /* gaps: nothing at k = 1 (f(1) = 1), k = 3 interpolated, k = 5..6 past the last measured k = 4 */
  double a3[2] = {10, 10}, t3[2] = {6, 4};
  unsigned k3[2] = {2, 4};
  CU_ASSERT_EQUAL_FATAL(sched_coloc_learn(&cp, a3, t3, k3, 2, 6), 0);
  CU_ASSERT_DOUBLE_EQUAL(cp.coloc[0], 1.0, 1e-15);
  CU_ASSERT_DOUBLE_EQUAL(cp.coloc[2], 0.5, 1e-15);
  CU_ASSERT_DOUBLE_EQUAL(cp.coloc[4], 0.4 * 4 / 5, 1e-15);
  CU_ASSERT_DOUBLE_EQUAL(cp.coloc[5], 0.4 * 4 / 6, 1e-15);
  /* the factor: interpolated between measured k, processor sharing beyond, 1 without a table */
  CU_ASSERT_DOUBLE_EQUAL(sched_coloc_factor(&cp, 2.5), 0.55, 1e-15);
  cp.ncoloc = 4;
  CU_ASSERT_DOUBLE_EQUAL(sched_coloc_factor(&cp, 8), 0.4 * 4 / 8, 1e-15);
  CU_ASSERT_DOUBLE_EQUAL(sched_coloc_factor(&cp, 0), 1.0, 0);
  cp.ncoloc = 0;
  CU_ASSERT_DOUBLE_EQUAL(sched_coloc_factor(&cp, 3), 1.0, 0);
  /* bad input */
  unsigned kbad[1] = {7};
  CU_ASSERT_EQUAL(sched_coloc_learn(&cp, a3, t3, kbad, 1, 6), SCHED_EINVAL);
  CU_ASSERT_EQUAL(sched_coloc_learn(&cp, a3, t3, k3, 2, 0), SCHED_EINVAL);
  double zero[1] = {0};
  CU_ASSERT_EQUAL(sched_coloc_learn(&cp, zero, t3, k3, 1, 6), SCHED_EINVAL);
}

static void coloc_tweak(sched_config *c) {
  c->cluster.ncoloc = 2;
  c->cluster.coloc[0] = 1.0;
  c->cluster.coloc[1] = 0.6;
}
/* The core's expected rate: two GPUs of one host both busy go at 0.6 of their score each; GPUs of
 * hosts of their own (host 0) are not slowed. */
static void test_coloc_core(void) {
  for (int shared = 0; shared < 2; shared++) {
    setup(SCHED_FT_CHECKPOINT, coloc_tweak);
    for (uint32_t g = 0; g < 2; g++) {
      sched_event e = {.type = SCHED_EV_GPU_JOIN, .t = 0, .gpu = g};
      e.u.gpu = ginfo(g, 0, 0, 2.0);
      e.u.gpu.host = shared ? 7 : 0;
      CU_ASSERT_EQUAL(ev(e), 0);
    }
    CU_ASSERT_EQUAL(arrive(1, 0, batch(1, 100)), 0);
    CU_ASSERT_DOUBLE_EQUAL(jstat(0).expected_rate, 2.0, 1e-12); /* alone on its host */
    CU_ASSERT_EQUAL(arrive(2, 1, batch(1, 100)), 0);
    CU_ASSERT_DOUBLE_EQUAL(jstat(1).expected_rate, shared ? 1.2 : 2.0, 1e-12);
    /* job 0's expected rate follows at its next progress report */
    CU_ASSERT_EQUAL(jev(SCHED_EV_JOB_PROGRESS, 3, 0, 0, 3.0), 0);
    CU_ASSERT_DOUBLE_EQUAL(jstat(0).expected_rate, shared ? 1.2 : 2.0, 1e-12);
    teardown();
  }
}

/* The cold part of a GPU's record (billed-up-to time, heartbeat sequence, co-location host) is made
 * only on its first write (sched__cold_w): a core that nothing writes it for keeps 64 bytes a GPU.
 * What is written survives the table being made after GPUs joined and grown after it was made:
 * (a) a job billed by a periodic billing made before and after the table grew is billed price x
 * time exactly once; (b) two co-located GPUs, the second joining at an id that grows the table,
 * slow each other, and a GPU alone (host 0) joined before the table existed is not slowed. */
static void wide(sched_config *c) { c->max_gpus = 1000; }
static void wide_coloc(sched_config *c) {
  wide(c);
  coloc_tweak(c);
}
static void test_cold_part_on_first_write(void) {
  setup(SCHED_FT_NONE, wide); /* the GPU table starts at 64 ids and grows for id 900 */
  CU_ASSERT_EQUAL(join(0, 0), 0);
  CU_ASSERT_EQUAL(arrive(0, 0, batch(1, 1e9)), 0);
  CU_ASSERT_EQUAL(jstat(0).state, SCHED_JOB_RUNNING);
  CU_ASSERT_EQUAL(ev((sched_event){.type = SCHED_EV_BILLING, .t = 1800}), 0); /* makes the table */
  sched_event e = {.type = SCHED_EV_GPU_JOIN, .t = 1800, .gpu = 900};
  e.u.gpu = ginfo(1, 0, 0, 1.0);
  CU_ASSERT_EQUAL(ev(e), 0); /* grows it */
  CU_ASSERT_EQUAL(ev((sched_event){.type = SCHED_EV_BILLING, .t = 3600}), 0);
  sched_ledger l;
  sched_ledger_get(S, &l);
  CU_ASSERT_DOUBLE_EQUAL(l.billed, 1.0, 1e-12); /* 1 GPU x 1 h x 1 USD/h */
  CU_ASSERT_EQUAL(ev((sched_event){.type = SCHED_EV_JOB_WITHDRAW, .t = 5400, .job = 0}), 0);
  sched_ledger_get(S, &l);
  CU_ASSERT_DOUBLE_EQUAL(l.billed, 1.5, 1e-12);
  teardown();
  for (int shared = 0; shared < 2; shared++) {
    setup(SCHED_FT_NONE, wide_coloc);
    const uint32_t ids[2] = {1, 900};
    for (uint32_t k = 0; k < 2; k++) {
      sched_event j = {.type = SCHED_EV_GPU_JOIN, .t = 0, .gpu = ids[k]};
      j.u.gpu = ginfo(k, 0, 0, 2.0);
      j.u.gpu.host = k == 0 && !shared ? 0 : 7; /* alone: no table until the second joins */
      CU_ASSERT_EQUAL(ev(j), 0);
    }
    CU_ASSERT_EQUAL(arrive(1, 0, batch(1, 100)), 0);
    CU_ASSERT_EQUAL(arrive(2, 1, batch(1, 100)), 0);
    CU_ASSERT_EQUAL(jstat(0).state, SCHED_JOB_RUNNING);
    CU_ASSERT_EQUAL(jstat(1).state, SCHED_JOB_RUNNING);
    CU_ASSERT_DOUBLE_EQUAL(jstat(1).expected_rate, shared ? 1.2 : 2.0, 1e-12);
    teardown();
  }
}

/* A GPU's score, link, node, region and grade are kept once per kind of GPU (sched__prof), its
 * speed factor apart from its record once it reports one: random cases of 16 GPUs of random kinds
 * (score 1, 2 or 3.5; grade, region, bandwidth), that report speed factors (1 among them), leave
 * and join again as another kind, while one-GPU jobs with random grade and region limits arrive and
 * finish. After every step each GPU reports the speed it last reported (1 since it last joined),
 * an employed one the run its placement named, a placed job runs on a GPU of a grade and region it
 * accepts, and at the rate of that GPU's own score times speed. */
static void test_gpu_kinds(void) {
  rng g = {0x6b1d5eedull};
  chk k = {0};
  static const double scores[3] = {1, 2, 3.5}, speeds[4] = {1, 0.3, 0.75, 1.25};
  for (int rep = 0; rep < 40; rep++) {
    setup(SCHED_FT_NONE, NULL);
    double score[16], speed[16];
    unsigned grade[16], region[16];
    int in[16];
    uint32_t run_of[16], job_of[16];
    double t = 0;
    uint32_t jobs = 0;
    for (uint32_t i = 0; i < 16; i++) in[i] = 0, job_of[i] = UINT32_MAX;
    for (int step = 0; step < 120; step++) {
      uint32_t i = (uint32_t)rng_int(&g, 0, 15);
      t += 1 + 100 * rng_unif(&g);
      int what = (int)rng_int(&g, 0, 3);
      if (!in[i]) { /* joins (again), as a kind drawn anew */
        sched_event e = {.type = SCHED_EV_GPU_JOIN, .t = t, .gpu = i};
        score[i] = scores[rng_int(&g, 0, 2)];
        grade[i] = (unsigned)rng_int(&g, 0, 1);
        region[i] = (unsigned)rng_int(&g, 0, 1);
        e.u.gpu = ginfo(i, region[i], grade[i], score[i]);
        e.u.gpu.link.bw_bps = rng_int(&g, 0, 1) ? 1e9 : 100e6;
        CHECK(&k, ev(e) == 0, "rep %d: gpu %u did not join", rep, i);
        in[i] = 1;
        speed[i] = 1;
        job_of[i] = UINT32_MAX;
      } else if (what == 0) { /* reports a speed factor */
        speed[i] = speeds[rng_int(&g, 0, 3)];
        CHECK(&k, gev(SCHED_EV_GPU_DEGRADE, t, i, speed[i]) == 0, "rep %d: degrade of %u refused", rep, i);
      } else if (what == 1) { /* leaves */
        CHECK(&k, gev(SCHED_EV_GPU_LEAVE, t, i, 0) == 0, "rep %d: leave of %u refused", rep, i);
        in[i] = 0;
        job_of[i] = UINT32_MAX;
      } else if (what == 2) { /* a one-GPU job with limits */
        sched_job_spec sp = batch(1, 1e9);
        sp.min_grade = (uint16_t)rng_int(&g, 0, 1);
        sp.region = (int32_t)rng_int(&g, -1, 1);
        uint32_t jid = jobs++;
        size_t n0 = R->n;
        CHECK(&k, arrive(t, jid, sp) == 0, "rep %d: job %u refused", rep, jid);
        for (size_t d = n0; d < R->n; d++) {
          if (R->d[d].type != SCHED_D_PLACE || R->d[d].job != jid) continue;
          uint32_t gp = R->d[d].gpus[0];
          CHECK(&k,
                gp < 16 && in[gp] && grade[gp] >= sp.min_grade && (sp.region < 0 || region[gp] == (unsigned)sp.region),
                "rep %d: job %u (grade >= %u, region %d) placed on gpu %u (grade %u, region %u)", rep, jid,
                (unsigned)sp.min_grade, sp.region, gp, grade[gp], region[gp]);
          job_of[gp] = jid;
          run_of[gp] = R->d[d].run;
        }
      } else { /* the job on gpu i (if any) finishes */
        if (job_of[i] != UINT32_MAX) {
          CHECK(&k, jev(SCHED_EV_JOB_FINISH, t, job_of[i], run_of[i], 0) == 0, "rep %d: finish refused", rep);
          job_of[i] = UINT32_MAX;
        }
      }
      for (uint32_t x = 0; x < 16; x++) {
        if (!in[x]) continue;
        sched_gpu_status st;
        sched_gpu_query(S, x, t, &st);
        CHECK(&k, st.speed == speed[x], "rep %d step %d: gpu %u reports speed %g, not %g", rep, step, x, st.speed,
              speed[x]);
        if (job_of[x] == UINT32_MAX) continue;
        CHECK(&k, st.state == SCHED_GPU_BUSY && st.job == job_of[x] && st.run == run_of[x],
              "rep %d step %d: gpu %u in state %d job %u run %u, not job %u run %u", rep, step, x, st.state, st.job,
              st.run, job_of[x], run_of[x]);
        double want = score[x] * speed[x], got = jstat(job_of[x]).expected_rate;
        CHECK(&k, fabs(got - want) <= 1e-12 * want, "rep %d step %d: job %u on gpu %u runs at %g, not %g", rep, step,
              job_of[x], x, got, want);
      }
    }
    teardown();
  }
  chk_report(&k, "gpu kinds");
}

/* A core holds at most cfg.max_kinds kinds of GPU: a join of one kind more is refused
 * (SCHED_EINVAL) with nothing changed (the GPU absent, the event not counted), and GPUs of kinds it
 * holds still join, at that id too. A limit above SCHED_MAX_KINDS is refused at creation. */
static void kinds_cfg(sched_config *c) {
  c->max_gpus = 1000;
  c->max_providers = 1000;
  c->nregions = 1;
  c->ngrades = 1;
  c->max_kinds = 300;
}
static void test_gpu_kinds_limit(void) {
  setup(SCHED_FT_NONE, kinds_cfg);
  for (uint32_t i = 0; i < 300; i++) {
    sched_event e = {.type = SCHED_EV_GPU_JOIN, .t = 0, .gpu = i};
    e.u.gpu = ginfo(i, 0, 0, 1.0 + i / 1024.0); /* a kind of its own */
    CU_ASSERT_EQUAL_FATAL(ev(e), 0);
  }
  sched_counters c0, c1;
  sched_counters_get(S, &c0);
  sched_event e = {.type = SCHED_EV_GPU_JOIN, .t = 5, .gpu = 300};
  e.u.gpu = ginfo(300, 0, 0, 3.0);
  CU_ASSERT_EQUAL(ev(e), SCHED_EINVAL);
  e.u.gpu = ginfo(300, 0, 0, 1.0);
  e.u.gpu.link.bw_bps = 1e9; /* a new link makes a new kind too */
  CU_ASSERT_EQUAL(ev(e), SCHED_EINVAL);
  sched_counters_get(S, &c1);
  CU_ASSERT_EQUAL(c1.events, c0.events);
  CU_ASSERT_EQUAL(gstate(300), SCHED_GPU_ABSENT);
  e.u.gpu = ginfo(300, 0, 0, 1.0 + 8 / 1024.0); /* the kind of GPU 8 (GP Node 300 % 4 = 8 % 4) */
  CU_ASSERT_EQUAL(ev(e), 0);
  CU_ASSERT_EQUAL(gstate(300), SCHED_GPU_IDLE);
  teardown();
  sched_config c;
  sched_config_default(&c);
  c.max_gpus = c.max_providers = c.max_nodes = c.max_jobs = 10;
  c.sink = sink;
  c.max_kinds = SCHED_MAX_KINDS;
  sched *x = NULL;
  CU_ASSERT_EQUAL(sched_create(&c, &x), 0);
  sched_destroy(x);
  c.max_kinds = SCHED_MAX_KINDS + 1;
  CU_ASSERT_EQUAL(sched_create(&c, &x), SCHED_EINVAL);
  CU_ASSERT_PTR_NULL(x);
}

/* Stakes are kept only as far as a provider that joined with one (sched.stake): random cases of 16
 * GPUs of 12 providers, a third of them staking 2.5 or 10 USD (in any order of provider ids, so
 * that stakers come before and after stakeless providers), jobs arriving, GPUs leaving while
 * employed (slashed per failure) and coming back hours later (slashed per hour down). Every
 * provider reports 0 when it staked nothing, at most its stake otherwise, never below 0, and what
 * the stakers lost is what the ledger slashed. */
static void slashcfg0(sched_config *c) {
  c->slash_per_failure = 4;
  c->slash_per_down_hour = 1;
  c->stake_min = 0;
}
static void test_stakes_of_stakers(void) {
  rng g = {0x5eed57a4e5ull};
  chk k = {0};
  double slashed_all = 0;
  for (int rep = 0; rep < 40; rep++) {
    setup(SCHED_FT_NONE, slashcfg0);
    double stake0[12];
    uint32_t prov_of[16];
    int in[16] = {0};
    for (unsigned p = 0; p < 12; p++) {
      int64_t x = rng_int(&g, 0, 5);
      stake0[p] = x == 4 ? 2.5 : x == 5 ? 10 : 0;
    }
    for (unsigned i = 0; i < 16; i++) prov_of[i] = (uint32_t)rng_int(&g, 0, 11);
    double t = 0;
    uint32_t jobs = 0;
    for (int step = 0; step < 80; step++) {
      uint32_t i = (uint32_t)rng_int(&g, 0, 15);
      t += 60 + 3600 * rng_unif(&g);
      int what = (int)rng_int(&g, 0, 2);
      if (!in[i]) { /* joins (again) */
        sched_event e = {.type = SCHED_EV_GPU_JOIN, .t = t, .gpu = i};
        e.u.gpu = ginfo(prov_of[i], 0, 0, 1.0);
        e.u.gpu.stake = stake0[prov_of[i]];
        CHECK(&k, ev(e) == 0, "case %d: join of GPU %u refused", rep, i);
        in[i] = 1;
      } else if (what == 0) {
        CHECK(&k, gev(SCHED_EV_GPU_LEAVE, t, i, 0) == 0, "case %d: leave of GPU %u refused", rep, i);
        in[i] = 0;
      } else {
        CHECK(&k, arrive(t, jobs++, batch(1, 600 + 7200 * rng_unif(&g))) == 0, "case %d: arrival refused", rep);
      }
    }
    sched_ledger l;
    sched_ledger_get(S, &l);
    double lost = 0;
    for (unsigned p = 0; p < 12; p++) {
      double st = -1;
      double rep_p = sched_provider_reputation(S, p, t, &st);
      if (isnan(rep_p)) continue; /* never joined */
      CHECK(&k, st >= 0 && st <= stake0[p], "case %d: provider %u holds %g of its %g", rep, p, st, stake0[p]);
      CHECK(&k, stake0[p] > 0 || st == 0, "case %d: provider %u staked nothing but holds %g", rep, p, st);
      lost += stake0[p] - st;
    }
    CHECK(&k, fabs(lost - l.slashed) < 1e-9, "case %d: stakers lost %g, the ledger slashed %g", rep, lost, l.slashed);
    slashed_all += l.slashed;
    teardown();
  }
  chk_report(&k, "stakes of stakers");
  CU_ASSERT(slashed_all > 0); /* the cases slash: the property is not vacuous */
}

/* The core keeps of each job's spec what varies per job and interns the part its class shares
 * (sched__spec_intern). Random cases: 64 GPUs of random sectors, grades and link losses; 400 jobs
 * drawn from 120 random classes (sectors, minimum grade, loss limit and checkpoint size: far more
 * distinct shared parts than the intern table's first size), width 1 or 2 and work of their own,
 * under N+1 standbys; GPUs leave and come back and runs finish, so that members, standbys and
 * replacements are all chosen again from the interned spec. Every GPU the core gives a job, in any
 * decision, must meet that job's own class's limits, and every job's placed width is its own. */
typedef struct spec_case {
  uint32_t sectors;
  unsigned grade;
  double loss;
} spec_case;
static spec_case SC_gpu[64], SC_job[400];
static unsigned SC_width[400], SC_bad, SC_seen;
static uint32_t SC_run[400]; /* the latest run placed, per job */
static void sc_check(uint32_t job, uint32_t gpu) {
  const spec_case *g = &SC_gpu[gpu], *j = &SC_job[job];
  SC_seen++;
  SC_bad += (g->sectors & j->sectors) != j->sectors || g->grade < j->grade || (j->loss > 0 && g->loss > j->loss);
}
static void sc_sink(void *ctx, const sched_decision *d) {
  (void)ctx;
  if (d->type == SCHED_D_PLACE) {
    SC_bad += d->ngpus != SC_width[d->job];
    SC_run[d->job] = d->run;
    for (unsigned i = 0; i < d->ngpus; i++) sc_check(d->job, d->gpus[i]);
  } else if (d->type == SCHED_D_STANDBY || d->type == SCHED_D_REPLACE) {
    sc_check(d->job, d->gpu);
  }
}
static void sc_tweak(sched_config *c) {
  c->sink = sc_sink;
  c->policy = SCHED_FT_STANDBY;
  c->standby_k = 1;
  c->max_jobs = 400;
}
static void test_interned_specs(void) {
  setup(SCHED_FT_STANDBY, sc_tweak);
  uint64_t x = 12345;
#define SC_RND() (x = x * 6364136223846793005ull + 1442695040888963407ull, (uint32_t)(x >> 33))
  for (uint32_t g = 0; g < 64; g++) {
    SC_gpu[g] = (spec_case){SC_RND() & 15u, SC_RND() % 2, (SC_RND() % 5) * 0.01};
    sched_event e = {.type = SCHED_EV_GPU_JOIN, .t = 0, .gpu = g};
    e.u.gpu = ginfo(g, 0, SC_gpu[g].grade, 1.0 + g % 3);
    e.u.gpu.sectors = SC_gpu[g].sectors;
    e.u.gpu.link.loss = SC_gpu[g].loss;
    CU_ASSERT_EQUAL(ev(e), 0);
  }
  spec_case cls[120];
  double ckpt[120];
  for (int k = 0; k < 120; k++) {
    cls[k] = (spec_case){SC_RND() & 3u, SC_RND() % 2, (SC_RND() % 3) * 0.02};
    ckpt[k] = 1e6 * (1 + k);
  }
  SC_bad = SC_seen = 0;
  double t = 1;
  for (uint32_t jb = 0; jb < 400; jb++, t += 1) {
    int k = (int)(SC_RND() % 120);
    SC_job[jb] = cls[k];
    SC_width[jb] = 1 + SC_RND() % 2;
    sched_job_spec sp = batch(SC_width[jb], 5 + SC_RND() % 50);
    sp.sectors = cls[k].sectors;
    sp.min_grade = (uint16_t)cls[k].grade;
    sp.max_loss = cls[k].loss;
    sp.ckpt_bytes = ckpt[k];
    CU_ASSERT_EQUAL(arrive(t, jb, sp), 0);
    uint32_t g = SC_RND() % 64; /* churn: a GPU leaves, and another one comes back */
    sched_gpu_status st;
    sched_gpu_query(S, g, 0, &st);
    if (st.state != SCHED_GPU_ABSENT) CU_ASSERT_EQUAL(gev(SCHED_EV_GPU_LEAVE, t + 0.25, g, 0), 0);
    for (uint32_t h = 0; h < 64; h++) {
      sched_gpu_query(S, h, 0, &st);
      if (st.state == SCHED_GPU_ABSENT && SC_RND() % 4 == 0) {
        sched_event e = {.type = SCHED_EV_GPU_JOIN, .t = t + 0.5, .gpu = h};
        e.u.gpu = ginfo(h, 0, SC_gpu[h].grade, 1.0 + h % 3);
        e.u.gpu.sectors = SC_gpu[h].sectors;
        e.u.gpu.link.loss = SC_gpu[h].loss;
        CU_ASSERT_EQUAL(ev(e), 0);
        break;
      }
    }
    if (jb >= 10) { /* an older job reports its work done, if it runs */
      uint32_t o = jb - 10;
      sched_job_status js = jstat(o);
      if (js.state == SCHED_JOB_RUNNING && js.runs_active > 0)
        (void)ev((sched_event){.type = SCHED_EV_JOB_PROGRESS, .t = t + 0.75, .job = o, .run = SC_run[o], .value = 1e9});
    }
  }
#undef SC_RND
  CU_ASSERT(SC_seen > 400); /* the checks did run: members, standbys and replacements */
  CU_ASSERT_EQUAL(SC_bad, 0);
  teardown();
}

static CU_TestInfo model_tests[] = {
    {"contention f(k): learned from synthetic measurements, interpolated, extrapolated", test_coloc},
    {"Young/Daly intervals", test_young_daly},
    {"Beta reputation", test_beta},
    {"ARQ, HARQ-CC and TCP transfers", test_net},
    {"cluster speed and autoscaling", test_cluster},
    CU_TEST_INFO_NULL,
};
static CU_TestInfo core_tests[] = {
    {"contention: co-located runs' expected rate", test_coloc_core},
    {"the cold part of a GPU record is made on its first write", test_cold_part_on_first_write},
    {"GPU kinds: each GPU keeps its own score, speed, grade and region (random)", test_gpu_kinds},
    {"GPU kinds: one more than max_kinds is refused, nothing changed", test_gpu_kinds_limit},
    {"interned specs: each job keeps its own class's limits (random)", test_interned_specs},
    {"stakes kept for stakers only; what they lost is what was slashed (random)", test_stakes_of_stakers},
    {"failure at each step of a job's life, every policy", test_failure_each_step},
    {"double failure of one job", test_double_failure},
    {"standby fails while promoted", test_standby_fails_while_promoted},
    {"heartbeat back after its timeout", test_heartbeat_after_timeout},
    {"Young checkpoint timer", test_checkpoint_young},
    {"analytic checkpoints: the plan at placement, reported saved work", test_checkpoint_analytic},
    {"policy table: rows, combinations, refused names", test_policy_table},
    {"policy table: loss rates of N+k and of combinations", test_policy_loss_rates},
    {"checkpoint+standby: replaced in place, Young for the combination's loss rate", test_checkpoint_plus_standby},
    {"replicate+checkpoint: every copy checkpoints", test_replicas_carry_checkpoints},
    {"a policy registered by the test file runs in the core", test_registered_policy},
    {"replicas: first finish wins, billed", test_replicate},
    {"replicas: cancelled copies unbilled", test_replicate_unbilled},
    {"speculative backup on slow progress", test_speculative},
    {"degraded member replaced", test_degrade_replaced},
    {"reputation with decay", test_reputation_and_stake},
    {"staking and slashing", test_slashing},
    {"selection weighted by reputation", test_selection_weight},
    {"ledger: platform, node and delegation fees", test_ledger_fees},
    {"autoscaling and pay per task", test_autoscale_service},
    {"bad input", test_bad_input},
    {"randomized streams, every policy and combinations", test_fuzz_all_policies},
    {"per-job policies in one core", test_per_job_policies},
    {"invalid per-job ft refused, state unchanged", test_per_job_ft_invalid},
    {"candidates: members only from them", test_candidates},
    {"candidates: standbys from anywhere", test_candidates_standby_anywhere},
    {"hold: placed or released at once", test_hold},
    {"withdraw: running, queued, ended", test_withdraw},
    {"forget: only ended jobs, id arrives again", test_forget},
    {"forget: the old life's timers and runs are stale", test_forget_old_life},
    {"gpu forget: the id joins again, the provider keeps its reputation", test_gpu_forget},
    {"memory grows with the ids used", test_memory_growth},
    {"policy and rule names, documented defaults", test_names_and_defaults},
    {"randomized streams with the new API", test_fuzz_new_api},
    {"GP Node queues: place, replace and refill on the job's node", test_node_queues},
    {"GP Node queues on random streams, every policy", test_fuzz_node_queues},
    {"wide jobs of 1-512 GPUs over hosts of 1-3 on random streams, every policy", test_fuzz_wide_jobs},
    CU_TEST_INFO_NULL,
};
CU_SuiteInfo spotlab_suites[] = {
    {"sched models", NULL, NULL, NULL, NULL, model_tests},
    {"sched core", NULL, NULL, NULL, NULL, core_tests},
    CU_SUITE_INFO_NULL,
};
