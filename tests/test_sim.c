/* test_sim.c - the engine: RNG streams, event order, outputs, replication statistics, the data
 * search path. */
#include "models/phold/phold.h"
#include "sim/bigmem.h"
#include "sim/datapath.h"
#include "sim/engine_opts.h"
#include "sim/results_io.h"
#include "sim/sim.h"

#include <CUnit/CUnit.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_statistics_double.h>
#include <hdf5.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "randcase.h"

/* ---- RNG streams ---------------------------------------------------------------------------- */

static void test_rng_reproducible(void) {
  uint64_t st1[4], st2[4];
  gsl_rng a = {sim_rng_xoshiro, st1}, b = {sim_rng_xoshiro, st2};
  sim_rng_seed_stream(&a, 7, 123);
  sim_rng_seed_stream(&b, 7, 123);
  for (int i = 0; i < 1000; i++) CU_ASSERT_EQUAL(gsl_rng_get(&a), gsl_rng_get(&b));
  sim_rng_seed_stream(&b, 7, 124);
  int same = 0;
  sim_rng_seed_stream(&a, 7, 123);
  for (int i = 0; i < 1000; i++) same += gsl_rng_get(&a) == gsl_rng_get(&b);
  CU_ASSERT_EQUAL(same, 0);
  sim_rng_seed_stream(&b, 8, 123); /* another seed, same stream id */
  sim_rng_seed_stream(&a, 7, 123);
  same = 0;
  for (int i = 0; i < 1000; i++) same += gsl_rng_get(&a) == gsl_rng_get(&b);
  CU_ASSERT_EQUAL(same, 0);
}

/* The inline draws give GSL's numbers: sim_rng_uniform as gsl_rng_uniform, sim_rng_uniform_int as
 * gsl_rng_uniform_int (the same rejection loop), on streams seeded alike. */
static void test_rng_inline(void) {
  uint64_t st1[4], st2[4];
  gsl_rng a = {sim_rng_xoshiro, st1}, b = {sim_rng_xoshiro, st2};
  sim_rng_seed_stream(&a, 11, 5);
  sim_rng_seed_stream(&b, 11, 5);
  const unsigned long ns[] = {1, 2, 3, 7, 1000, 1024, 257, 3000000000ul, (1ul << 63) + 12345};
  int bad = 0;
  for (int i = 0; i < 2000; i++) {
    bad += gsl_rng_uniform(&a) != sim_rng_uniform(&b);
    unsigned long n = ns[i % 9];
    bad += gsl_rng_uniform_int(&a, n) != sim_rng_uniform_int(&b, n);
    bad += gsl_rng_get(&a) != sim_rng_next(&b);
  }
  CU_ASSERT_EQUAL(bad, 0);
}

/* PHOLD's delay, -mean log(1 - u) (phold_exp_draw), is gsl_ran_exponential's
 * -mean log1p(-u) of the same uniform: the two logarithms are within one ulp of each other on 10^6
 * draws of a random stream (mean 1; another mean rounds the product, up to an ulp more). */
static void test_phold_draw_is_gsl_exponential(void) {
  uint64_t st1[4], st2[4];
  gsl_rng a = {sim_rng_xoshiro, st1}, b = {sim_rng_xoshiro, st2};
  sim_rng_seed_stream(&a, 3, 99);
  sim_rng_seed_stream(&b, 3, 99);
  long far = 0, differ = 0;
  for (int i = 0; i < 1000000; i++) {
    double g = gsl_ran_exponential(&a, 1.0), p = phold_exp_draw(&b, 1.0); /* the mean's product aside */
    differ += g != p;
    far += g != p && nextafter(g, p) != p;
  }
  printf("(%ld of 10^6 draws one ulp apart) ", differ);
  CU_ASSERT_EQUAL(far, 0);
  CU_ASSERT(differ < 500000); /* the same quantity: most draws are bit-identical */
}

static unsigned type_zero(const void *ctx, sim_id id) { return 0; }

/* Streams of neighbouring ids must look independent: the correlation of paired uniforms from
 * streams i and i+1 stays within 4 standard errors (1/sqrt(n)) of 0 for every pair tested, and
 * each stream's mean is within 4 standard errors of 1/2. */
static void test_rng_stream_independence(void) {
  enum { N = 20000, STREAMS = 16 };
  static double u[STREAMS][N];
  uint64_t st[4];
  gsl_rng r = {sim_rng_xoshiro, st};
  for (int s = 0; s < STREAMS; s++) {
    sim_rng_seed_stream(&r, 42, (uint64_t)s);
    for (int i = 0; i < N; i++) u[s][i] = gsl_rng_uniform(&r);
  }
  double se = 1.0 / sqrt((double)N);
  for (int s = 0; s < STREAMS; s++) {
    double m = gsl_stats_mean(u[s], 1, N);
    CU_ASSERT(fabs(m - 0.5) < 4 * sqrt(1.0 / 12.0) * se);
    if (s + 1 < STREAMS) {
      double c = gsl_stats_correlation(u[s], 1, u[s + 1], 1, N);
      CU_ASSERT(fabs(c) < 4 * se);
    }
  }
  /* Lag-1 autocorrelation within a stream. */
  double c = gsl_stats_correlation(u[0], 1, u[0] + 1, 1, N - 1);
  CU_ASSERT(fabs(c) < 4 * se);
}

/* A GSL distribution on an engine stream has the right moments: Exp(2) mean 2, var 4. */
static void test_rng_gsl_distribution(void) {
  enum { N = 200000 };
  uint64_t st[4];
  gsl_rng r = {sim_rng_xoshiro, st};
  sim_rng_seed_stream(&r, 1, 99);
  double sum = 0, sum2 = 0;
  for (int i = 0; i < N; i++) {
    double x = gsl_ran_exponential(&r, 2.0);
    sum += x;
    sum2 += x * x;
  }
  double mean = sum / N, var = sum2 / N - mean * mean;
  CU_ASSERT(fabs(mean - 2.0) < 4 * 2.0 / sqrt((double)N));
  CU_ASSERT(fabs(var - 4.0) < 0.1);
}

static void test_rep_seeds(void) {
  CU_ASSERT_EQUAL(sim_rep_seed(5, 0), 5);
  CU_ASSERT_NOT_EQUAL(sim_rep_seed(5, 1), sim_rep_seed(5, 2));
  CU_ASSERT_NOT_EQUAL(sim_rep_seed(5, 1), sim_rep_seed(6, 1));
  CU_ASSERT_EQUAL(sim_rep_seed(5, 3), sim_rep_seed(5, 3));
}

/* ---- event order ---------------------------------------------------------------------------- */

/* LP 0..3 send LP 4 messages that all arrive at t = 1.0 exactly; LP 4 records (src, payload) in
 * the order it handles them, and a zero-delay self-event sent while handling the first one. */
typedef struct {
  int32_t tag;
} ord_msg;
typedef struct {
  int n;
  int64_t seen[32];
} ord_state;

static void ord_init(sim_lp *lp, void *st) {
  sim_id id = sim_lp_id(lp);
  if (id < 4) {
    /* Send in reverse tag order from each source: the key orders by (src, seq). */
    for (int k = 0; k < 2; k++) {
      ord_msg m = {(int32_t)(id * 10 + k)};
      sim_send(lp, 4, 1.0, &m, sizeof m);
    }
  }
}
static void ord_event(sim_lp *lp, void *st, const void *msg, sim_id src) {
  ord_state *s = st;
  const ord_msg *m = msg;
  CU_ASSERT_EQUAL(sim_now(lp), 1.0);
  if (s->n < 32) s->seen[s->n++] = (int64_t)src * 1000 + m->tag;
  if (m->tag == 0 && src == 0) {
    ord_msg self = {99};
    sim_send(lp, sim_lp_id(lp), 0.0, &self, sizeof self);
  }
}
static void ord_final(sim_lp *lp, void *st) {
  ord_state *s = st;
  if (sim_lp_id(lp) == 4) {
    for (int i = 0; i < s->n; i++) sim_table_put(lp, 0, &s->seen[i]);
  }
}

static void test_event_order(void) {
  static const sim_lptype types[] = {{"ord", sizeof(ord_state), ord_init, ord_event, ord_final}};
  static const sim_field f[] = {{"v", SIM_F_I64, 0, "1"}};
  static const sim_table_def tabs[] = {{"seen", sizeof(int64_t), f, 1, ""}};
  sim_model m = {"ord", types, 1, NULL, 5, sizeof(ord_msg), 0.5, 10.0, NULL, NULL, 0, tabs, 1};
  sim_results r;
  sim_run_opts o = {1, 0, 0, NULL};
  CU_ASSERT_EQUAL_FATAL(sim_run(&m, &o, &r), 0);
  CU_ASSERT_EQUAL_FATAL(r.nrecords[0], 9);
  const int64_t *v = (const int64_t *)r.tables[0];
  /* (t=1, src 0, seq 0), then the self-event (t=1, src 4) sorts after src 0..3? No: the key is
   * (time, src, seq), so src 0's two, src 1's two, src 2's, src 3's, then src 4's self-event. */
  int64_t expect[9] = {0, 1, 1010, 1011, 2020, 2021, 3030, 3031, 4099};
  for (int i = 0; i < 9; i++) CU_ASSERT_EQUAL(v[i], expect[i]);
  CU_ASSERT_EQUAL(r.events, 9);
  sim_results_free(&r);
}

/* The engine's switches come from one table (sim/engine_opts.c): unset means the default, a value
 * within bounds is taken, and anything else (text, trailing junk, a fraction for a whole number, out
 * of range) is refused with a message naming the variable, where the engine used to fall back to
 * the default silently; a run with a bad value fails instead of running with another setting. */
static void test_engine_switches(void) {
  const sim_engine_option *o = sim_engine_options();
  for (int k = 0; k < SIM_OPT_N; k++) {
    CU_ASSERT_PTR_NOT_NULL(o[k].name);
    CU_ASSERT_PTR_NOT_NULL(o[k].help);
    CU_ASSERT(o[k].lo <= o[k].def && o[k].def <= o[k].hi);
    unsetenv(o[k].env);
  }
  sim_engine_settings st;
  char err[512] = "";
  CU_ASSERT_EQUAL(sim_engine_settings_read(&st, err, sizeof err), 0);
  for (int k = 0; k < SIM_OPT_N; k++) CU_ASSERT_EQUAL(st.v[k], o[k].def);
  setenv("SPOTLAB_CALENDAR_MIN", "3000", 1);
  setenv("SPOTLAB_CALENDAR_PER_BUCKET", "16.5", 1);
  setenv("SPOTLAB_EARLY_HINTS", "0", 1);
  CU_ASSERT_EQUAL(sim_engine_settings_read(&st, err, sizeof err), 0);
  CU_ASSERT_EQUAL(st.v[SIM_OPT_CALENDAR_MIN], 3000);
  CU_ASSERT_EQUAL(st.v[SIM_OPT_CALENDAR_PER_BUCKET], 16.5);
  CU_ASSERT_EQUAL(st.v[SIM_OPT_EARLY_HINTS], 0);
  static const struct {
    const char *env, *val, *why;
  } bad[] = {
      {"SPOTLAB_CALENDAR_MIN", "abc", "not a number"},       {"SPOTLAB_CALENDAR_MIN", "12x", "not a number"},
      {"SPOTLAB_CALENDAR_MIN", "1.5", "not a whole number"}, {"SPOTLAB_CALENDAR_MIN", "-1", "out of range"},
      {"SPOTLAB_CALENDAR_PER_BUCKET", "0", "out of range"},  {"SPOTLAB_CALENDAR_PER_BUCKET", "nan", "not a number"},
      {"SPOTLAB_EARLY_HINTS", "2", "out of range"}};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    setenv(bad[i].env, bad[i].val, 1);
    err[0] = 0;
    CU_ASSERT_EQUAL(sim_engine_settings_read(&st, err, sizeof err), SIM_EINVAL);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, bad[i].env));
    CU_ASSERT_PTR_NOT_NULL(strstr(err, bad[i].why));
    for (int k = 0; k < SIM_OPT_N; k++) CU_ASSERT_EQUAL(st.v[k], o[k].def);
    if (i == 0) { /* a run refuses it too */
      static const sim_lptype types[] = {{"ord", sizeof(ord_state), ord_init, ord_event, ord_final}};
      static const sim_field f[] = {{"v", SIM_F_I64, 0, "1"}};
      static const sim_table_def tabs[] = {{"seen", sizeof(int64_t), f, 1, ""}};
      sim_model m = {"ord", types, 1, NULL, 5, sizeof(ord_msg), 0.5, 10.0, NULL, NULL, 0, tabs, 1};
      sim_results r;
      sim_run_opts ro = {1, 0, 0, NULL};
      CU_ASSERT_NOT_EQUAL(sim_run(&m, &ro, &r), 0);
    }
    setenv(bad[i].env, bad[i].env[8] == 'E' ? "0" : "3000", 1); /* valid again for the next row */
  }
  for (int k = 0; k < SIM_OPT_N; k++) unsetenv(o[k].env);
}

/* With more than 65536 events pending the engine files far events in a calendar in front of its
 * heap: a ring of buckets, an overflow list beyond (sim/engine.c). The order must stay exactly
 * (t, src, seq). Random cases: LPs each schedule CAL_PER_LP events at times on a 0.25 grid (many
 * ties), most a short delay ahead and a share after a long gap (past the ring, into the overflow
 * list). Each event schedules two more until a budget of sends is spent (so the calendar turns on
 * at a time after 0, its buckets sized by the rate seen), then one more with probability 1/2, so
 * the near events die out and the ring empties while far ones wait (the jump to the earliest);
 * the handled sequence must be sorted by (t, src, send order) and hold every event sent before
 * the end. Tags count each LP's sends; odd ones carry a second word (a
 * slab payload), even ones travel in the event itself. Over the cases the calendar's paths must
 * have been taken (its counters in sim_pending). */
typedef struct cal_msg {
  int32_t tag, pad;
  int64_t extra;
} cal_msg;
typedef struct cal_state {
  int32_t sent;
} cal_state;
typedef struct cal_seen {
  double t;
  uint64_t src;
  int32_t tag;
} cal_seen;
enum { CAL_PER_LP = 100, CAL_MAX = 1500000 };
static struct {
  unsigned lps;
  double far_share, far_gap, far_width, near_span, end;
  size_t budget; /* sends after which an event sends one more with probability 1/2, not two */
} cal_case;
static cal_seen *cal_log;
static size_t cal_n, cal_sent_before_end, cal_sent;
static sim_pending_stats cal_last;
static void cal_send(sim_lp *lp, cal_state *st) {
  gsl_rng *r = sim_lp_rng(lp);
  double u = gsl_rng_uniform(r);
  double d = u < cal_case.far_share ? cal_case.far_gap + cal_case.far_width * gsl_rng_uniform(r)
                                    : cal_case.near_span * gsl_rng_uniform(r);
  d = 0.5 + floor(d * 4.0) / 4.0;
  sim_id dst = gsl_rng_uniform(r) < 0.3 ? gsl_rng_uniform_int(r, cal_case.lps) : sim_lp_id(lp);
  cal_msg m = {st->sent++, 0, 0};
  cal_sent++;
  if (m.tag & 1) m.extra = m.tag;
  if (sim_now(lp) + d < cal_case.end) cal_sent_before_end++;
  sim_send(lp, dst, d, &m, sizeof m);
}
static void cal_init(sim_lp *lp, void *st) {
  for (int k = 0; k < CAL_PER_LP; k++) cal_send(lp, st);
}
static void cal_event(sim_lp *lp, void *st, const void *msg, sim_id src) {
  const cal_msg *m = msg;
  CU_ASSERT_EQUAL(m->extra, (m->tag & 1) ? m->tag : 0);
  if (cal_n < CAL_MAX) cal_log[cal_n++] = (cal_seen){sim_now(lp), src, m->tag};
  if (cal_sent < cal_case.budget) {
    cal_send(lp, st);
    cal_send(lp, st);
  } else if (gsl_rng_uniform(sim_lp_rng(lp)) < 0.5) {
    cal_send(lp, st);
  }
}
static void cal_finalize(sim_lp *lp, void *st) {
  (void)st;
  sim_pending(lp, &cal_last); /* the calendar's counts of the whole run */
}
/* Runs a case of the calendar tests: the log must not be full, must hold every event sent before
 * the end, as many as the engine counted. The events out of (t, src, send order), returned. */
static size_t cal_run_case(chk *c, int cs, const sim_model *m, uint64_t seed) {
  cal_n = cal_sent_before_end = cal_sent = 0;
  memset(&cal_last, 0, sizeof cal_last);
  sim_results r;
  sim_run_opts o = {seed, 0, 0, NULL};
  CU_ASSERT_EQUAL_FATAL(sim_run(m, &o, &r), 0);
  CHECK(c, cal_n < CAL_MAX, "case %d: the log is full (%zu events)", cs, cal_n);
  CHECK(c, cal_n == cal_sent_before_end, "case %d: %zu events handled, %zu sent before the end", cs, cal_n,
        cal_sent_before_end);
  CHECK(c, r.events == cal_n, "case %d: %llu events counted, %zu handled", cs, (unsigned long long)r.events, cal_n);
  sim_results_free(&r);
  size_t bad = 0;
  for (size_t i = 1; i < cal_n; i++) {
    const cal_seen *a = &cal_log[i - 1], *b = &cal_log[i];
    bad += !(a->t < b->t || (a->t == b->t && (a->src < b->src || (a->src == b->src && a->tag < b->tag))));
  }
  return bad;
}
static void test_calendar_order(void) {
  static const sim_lptype types[] = {{"cal", sizeof(cal_state), cal_init, cal_event, cal_finalize}};
  cal_log = malloc(CAL_MAX * sizeof *cal_log);
  CU_ASSERT_PTR_NOT_NULL_FATAL(cal_log);
  rng g = {20261207};
  chk c = {0};
  uint64_t scans = 0, jumps = 0, rebuilds = 0;
  for (int cs = 0; cs < 6; cs++) {
    cal_case.lps = (unsigned)rng_int(&g, 120, 300);
    cal_case.far_share = 0.01 + 0.15 * rng_unif(&g);
    cal_case.budget = (size_t)rng_int(&g, 150000, 400000);
    cal_case.far_gap = 1000.0 + 30000.0 * rng_unif(&g);
    cal_case.far_width = 20.0 + 3000.0 * rng_unif(&g);
    cal_case.near_span = 2.0 + 40.0 * rng_unif(&g);
    cal_case.end = cal_case.far_gap + cal_case.far_width * (0.2 + rng_unif(&g));
    sim_model m = {"cal", types, 1, NULL, cal_case.lps, sizeof(cal_msg), 0.5, cal_case.end, NULL, NULL, 0, NULL, 0};
    size_t bad = cal_run_case(&c, cs, &m, (uint64_t)rng_next(&g));
    CHECK(&c, bad == 0, "case %d (%u LPs, far share %.3f at %.0f + %.0f, near %.1f, end %.0f): %zu events out of order",
          cs, cal_case.lps, cal_case.far_share, cal_case.far_gap, cal_case.far_width, cal_case.near_span, cal_case.end,
          bad);
    if (getenv("CAL_TEST_VERBOSE"))
      printf("\n    case %d: %zu events, scans %llu jumps %llu rebuilds %llu", cs, cal_n,
             (unsigned long long)cal_last.far_scans, (unsigned long long)cal_last.far_jumps,
             (unsigned long long)cal_last.far_rebuilds);
    scans += cal_last.far_scans;
    jumps += cal_last.far_jumps;
    rebuilds += cal_last.far_rebuilds;
  }
  chk_report(&c, "calendar order");
  /* the calendar's paths were taken: rebuilds at a new width, the jump over an empty ring (which
   * scans the overflow list; the scan every half ring needs millions of events at a steady rate,
   * which the market's runs at a million GPUs take) */
  CU_ASSERT(jumps > 0);
  CU_ASSERT(rebuilds > 0);
  if (getenv("CAL_TEST_VERBOSE"))
    printf("\n    scans %llu jumps %llu rebuilds %llu\n", (unsigned long long)scans, (unsigned long long)jumps,
           (unsigned long long)rebuilds);
  free(cal_log);
}

/* The calendar's scan of its overflow list every half ring (sim/engine.c, sim__far_refill): with
 * the default aim of 4,096 events a bucket a half ring is 8 million events, so the test above never
 * reaches it. Here a bucket aims at 16 events (SPOTLAB_CALENDAR_PER_BUCKET) and the calendar turns
 * on at 3,000 pending (SPOTLAB_CALENDAR_MIN), and the population is steady: after a budget of
 * sends each event sends one near event (so the ring never empties and no jump scans the overflow
 * list) and, with probability far_share, one far event, a gap of several ring spans ahead. Those
 * wait in the overflow list until a periodic scan files them; the order must stay (t, src, seq),
 * with no jump and no rebuild, and scans must have run. */
static struct {
  unsigned lps;
  double far_share, far_gap, near_span, end;
  size_t budget;
} scan_case;
static size_t scan_far;
static void scan_send(sim_lp *lp, cal_state *st, int far) {
  gsl_rng *r = sim_lp_rng(lp);
  double d = far ? scan_case.far_gap * (1.0 + gsl_rng_uniform(r)) : 0.001 + scan_case.near_span * gsl_rng_uniform(r);
  d = 0.001 + floor(d * 256.0) / 256.0; /* a grid, so with ties */
  sim_id dst = gsl_rng_uniform(r) < 0.3 ? gsl_rng_uniform_int(r, scan_case.lps) : sim_lp_id(lp);
  cal_msg m = {st->sent++, 0, far};
  cal_sent++;
  if (sim_now(lp) + d < scan_case.end) cal_sent_before_end++;
  sim_send(lp, dst, d, &m, sizeof m);
}
static void scan_init(sim_lp *lp, void *st) {
  for (int k = 0; k < 10; k++) scan_send(lp, st, 0);
}
static void scan_event(sim_lp *lp, void *st, const void *msg, sim_id src) {
  const cal_msg *m = msg;
  if (cal_n < CAL_MAX) cal_log[cal_n++] = (cal_seen){sim_now(lp), src, m->tag};
  scan_far += m->extra == 1;
  scan_send(lp, st, 0);
  if (cal_sent < scan_case.budget) scan_send(lp, st, 0);
  if (gsl_rng_uniform(sim_lp_rng(lp)) < scan_case.far_share) scan_send(lp, st, 1);
}
static void test_calendar_scan(void) {
  static const sim_lptype types[] = {{"scan", sizeof(cal_state), scan_init, scan_event, cal_finalize}};
  cal_log = malloc(CAL_MAX * sizeof *cal_log);
  CU_ASSERT_PTR_NOT_NULL_FATAL(cal_log);
  rng g = {20261208};
  chk c = {0};
  uint64_t scans = 0;
  setenv("SPOTLAB_CALENDAR_PER_BUCKET", "16", 1);
  setenv("SPOTLAB_CALENDAR_MIN", "3000", 1);
  for (int cs = 0; cs < 4; cs++) {
    scan_case.lps = (unsigned)rng_int(&g, 100, 300);
    scan_case.budget = (size_t)rng_int(&g, 4000, 8000);
    scan_case.near_span = 0.5 + 2.0 * rng_unif(&g);
    scan_case.far_share = 0.005 + 0.02 * rng_unif(&g);
    scan_case.far_gap = 15.0 + 10.0 * rng_unif(&g);
    scan_case.end = 2.5 * scan_case.far_gap;
    sim_model m = {"scan", types, 1,    NULL, scan_case.lps, sizeof(cal_msg), 0.001, scan_case.end, NULL,
                   NULL,   0,     NULL, 0};
    scan_far = 0;
    size_t bad = cal_run_case(&c, cs, &m, (uint64_t)rng_next(&g));
    CHECK(&c, bad == 0, "case %d (%u LPs, far share %.3f at %.1f, near %.2f): %zu events out of order", cs,
          scan_case.lps, scan_case.far_share, scan_case.far_gap, scan_case.near_span, bad);
    CHECK(&c, cal_last.far_jumps == 0 && cal_last.far_rebuilds == 0,
          "case %d: %llu jumps and %llu rebuilds (the overflow list must come due through the periodic scan)", cs,
          (unsigned long long)cal_last.far_jumps, (unsigned long long)cal_last.far_rebuilds);
    CHECK(&c, scan_far > 0, "case %d: no far event handled", cs);
    if (getenv("CAL_TEST_VERBOSE"))
      printf("\n    case %d: %zu events, %zu far, scans %llu jumps %llu rebuilds %llu", cs, cal_n, scan_far,
             (unsigned long long)cal_last.far_scans, (unsigned long long)cal_last.far_jumps,
             (unsigned long long)cal_last.far_rebuilds);
    scans += cal_last.far_scans;
  }
  unsetenv("SPOTLAB_CALENDAR_PER_BUCKET");
  unsetenv("SPOTLAB_CALENDAR_MIN");
  chk_report(&c, "calendar scan");
  CU_ASSERT(scans > 0);
  free(cal_log);
}

/* The hints name the events the engine handles next (early hints forced on, SPOTLAB_EARLY_HINTS=1;
 * without it a model this small gets none, which the second run checks): 40 LPs of two types each schedule 150 events
 * at init (times on a grid, so with ties; odd tags carry a second word, a slab payload) and send
 * nothing later, so the order is fixed from the start. After event k is handled, `prefetch` must
 * be called with event k + 1 and `prefetch_early` with event k + 2 (LP, state, message, source);
 * type 1 has no early hint, so its events are skipped there. Random cases: the times come from the
 * LPs' streams. */
typedef struct hint_msg {
  int32_t tag, pad;
  int64_t extra;
} hint_msg;
typedef struct hint_state {
  sim_id id;
} hint_state;
typedef struct hint_rec {
  sim_id lp, src;
  int32_t tag;
} hint_rec;
enum { HINT_LPS = 40, HINT_PER_LP = 150, HINT_N = HINT_LPS * HINT_PER_LP };
static hint_rec *hint_seen, *hint_next, *hint_early;
static size_t hint_ns, hint_nn, hint_ne;
static int hint_bad_state;
static void hint_init(sim_lp *lp, void *st) {
  ((hint_state *)st)->id = sim_lp_id(lp);
  for (int k = 0; k < HINT_PER_LP; k++) {
    hint_msg m = {k, 0, k & 1 ? k : 0};
    sim_send(lp, sim_lp_id(lp), 1.0 + floor(gsl_rng_uniform(sim_lp_rng(lp)) * 200.0) / 4.0, &m, sizeof m);
  }
}
static void hint_event(sim_lp *lp, void *st, const void *msg, sim_id src) {
  const hint_msg *m = msg;
  hint_bad_state += ((hint_state *)st)->id != sim_lp_id(lp);
  if (hint_ns < HINT_N) hint_seen[hint_ns++] = (hint_rec){sim_lp_id(lp), src, m->tag};
}
static void hint_record(hint_rec *log, size_t *n, const sim_lp *lp, const void *st, const void *msg, sim_id src) {
  const hint_msg *m = msg;
  hint_bad_state += ((const hint_state *)st)->id != sim_lp_id(lp);
  hint_bad_state += m->extra != (m->tag & 1 ? m->tag : 0); /* the payload, inline or in the slab */
  if (*n < HINT_N) log[(*n)++] = (hint_rec){sim_lp_id(lp), src, m->tag};
}
static void hint_next_cb(const sim_lp *lp, const void *st, const void *msg, sim_id src) {
  hint_record(hint_next, &hint_nn, lp, st, msg, src);
}
static void hint_early_cb(const sim_lp *lp, const void *st, const void *msg, sim_id src) {
  hint_record(hint_early, &hint_ne, lp, st, msg, src);
}
static unsigned hint_type_of(const void *ctx, sim_id id) {
  (void)ctx;
  return (unsigned)(id % 3 == 2);
}
static int hint_same(const hint_rec *a, const hint_rec *b) {
  return a->lp == b->lp && a->src == b->src && a->tag == b->tag;
}
static void test_hints_name_the_next_events(void) {
  static const sim_lptype types[] = {
      {"early", sizeof(hint_state), hint_init, hint_event, NULL, hint_next_cb, hint_early_cb},
      {"late", sizeof(hint_state), hint_init, hint_event, NULL, hint_next_cb, NULL},
  };
  sim_model m = {"hints", types, 2, hint_type_of, HINT_LPS, sizeof(hint_msg), 0.5, 1000.0, NULL, NULL, 0, NULL, 0};
  hint_seen = malloc(3 * HINT_N * sizeof *hint_seen);
  CU_ASSERT_PTR_NOT_NULL_FATAL(hint_seen);
  hint_next = hint_seen + HINT_N, hint_early = hint_next + HINT_N;
  hint_ns = hint_nn = hint_ne = 0;
  hint_bad_state = 0;
  sim_results r;
  sim_run_opts o = {7, 0, 0, NULL};
  setenv("SPOTLAB_EARLY_HINTS", "1", 1); /* 40 LPs: below the size from which they are on */
  int rc = sim_run(&m, &o, &r);
  unsetenv("SPOTLAB_EARLY_HINTS");
  CU_ASSERT_EQUAL_FATAL(rc, 0);
  CU_ASSERT_EQUAL(r.events, HINT_N);
  CU_ASSERT_EQUAL_FATAL(hint_ns, HINT_N);
  CU_ASSERT_EQUAL(hint_bad_state, 0);
  CU_ASSERT_EQUAL_FATAL(hint_nn, HINT_N - 1); /* after every event but the last */
  size_t bad = 0, ne = 0;
  for (size_t k = 0; k + 1 < HINT_N; k++) bad += !hint_same(&hint_next[k], &hint_seen[k + 1]);
  for (size_t k = 0; k + 2 < HINT_N; k++) {
    const hint_rec *two = &hint_seen[k + 2];
    if (hint_type_of(NULL, two->lp) == 1) continue; /* no early hint for its type */
    bad += ne >= hint_ne || !hint_same(&hint_early[ne], two);
    ne++;
  }
  CU_ASSERT_EQUAL(bad, 0);
  CU_ASSERT_EQUAL(ne, hint_ne);
  CU_ASSERT(ne > HINT_N / 2);
  sim_results_free(&r);
  hint_ns = hint_nn = hint_ne = 0; /* by default, 40 LPs: the early hint is not called */
  CU_ASSERT_EQUAL_FATAL(sim_run(&m, &o, &r), 0);
  CU_ASSERT_EQUAL(hint_ns, HINT_N);
  CU_ASSERT_EQUAL(hint_nn, HINT_N - 1);
  CU_ASSERT_EQUAL(hint_ne, 0);
  sim_results_free(&r);
  free(hint_seen);
}

/* Bursts of pending payloads: LP 0 sends 150,000 slab payloads (messages with bytes after their
 * first four) at t = 0 and again at t = 60, each to a random LP one to two time units ahead, and
 * every message handled sends another with probability 1/2 (a trickle that dies out). Every
 * payload must arrive as it was sent (its check word is a hash of its source and tag), also the
 * one whose handler first sends 70,000 more (the slab grows under it, at t = 41: under ASan, a
 * handler that read its payload in the slab after that would be a use after free), and once a
 * burst is handled the engine must have given its slots back: at t = 1.5 the slab holds at least
 * 65,536 slots (the burst did grow it to 262,144), at t = 40 (with the trickle's 9,528 pending)
 * at most 32,768 and at t = 140 at most 4,096, and the heap at most its floor of 65,536
 * (sim__heap_resize). */
typedef struct burst_msg {
  int32_t tag, kind; /* kind 1: a payload, 3: the fan-out, 0: LP 0's timer (travels in the event) */
  uint64_t check;
} burst_msg;
enum { BURST_LPS = 4, BURST_N = 150000, BURST_FAN = 70000 };
static size_t burst_bad, burst_got, burst_sent;
static sim_pending_stats burst_at[3];
static int32_t burst_tag[BURST_LPS];
static uint64_t burst_hash(uint64_t src, int32_t tag) {
  uint64_t x = src * 0x9E3779B97F4A7C15u ^ (uint64_t)(uint32_t)tag;
  x ^= x >> 31;
  return (x * 0xBF58476D1CE4E5B9u) | 1; /* never 0: the payload goes to the slab */
}
static void burst_send(sim_lp *lp, double delay) {
  sim_id me = sim_lp_id(lp);
  burst_msg m = {burst_tag[me]++, 1, 0};
  m.check = burst_hash(me, m.tag);
  if (sim_now(lp) + delay < 140.5) burst_sent++;
  sim_send(lp, gsl_rng_uniform_int(sim_lp_rng(lp), BURST_LPS), delay, &m, sizeof m);
}
static void burst_timer(sim_lp *lp, double when) {
  burst_msg t = {1, 0, 0}; /* kind 0, check 0: all after the first four bytes is zero */
  sim_send(lp, sim_lp_id(lp), when - sim_now(lp), &t, sizeof t);
}
static void burst_init(sim_lp *lp, void *st) {
  (void)st;
  if (sim_lp_id(lp) != 0) return;
  for (int k = 0; k < BURST_N; k++) burst_send(lp, 1.0 + gsl_rng_uniform(sim_lp_rng(lp)));
  burst_timer(lp, 1.5);
}
static void burst_event(sim_lp *lp, void *st, const void *msg, sim_id src) {
  (void)st;
  const burst_msg *m = msg;
  if (m->kind == 0) { /* LP 0's timers: t = 1.5, 40, 60 (the second burst), 140 */
    double now = sim_now(lp);
    if (now == 1.5) {
      sim_pending(lp, &burst_at[0]);
      burst_timer(lp, 40);
    } else if (now == 40.0) {
      sim_pending(lp, &burst_at[1]);
      burst_msg f = {burst_tag[0]++, 3, 0}; /* the fan-out, handled by LP 1 at t = 41 */
      f.check = burst_hash(0, f.tag);
      burst_sent++;
      sim_send(lp, 1, 1.0, &f, sizeof f);
      burst_timer(lp, 60);
    } else if (now == 60.0) {
      for (int k = 0; k < BURST_N; k++) burst_send(lp, 1.0 + gsl_rng_uniform(sim_lp_rng(lp)));
      burst_timer(lp, 140);
    } else {
      sim_pending(lp, &burst_at[2]);
    }
    return;
  }
  burst_got++;
  if (m->kind == 3) { /* 70,000 sends grow the slab (by realloc) before its own payload is read */
    for (int k = 0; k < BURST_FAN; k++) burst_send(lp, 1.0 + gsl_rng_uniform(sim_lp_rng(lp)));
    burst_bad += m->check != burst_hash(src, m->tag);
    return;
  }
  burst_bad += m->kind != 1 || m->check != burst_hash(src, m->tag);
  if (gsl_rng_uniform(sim_lp_rng(lp)) < 0.5) burst_send(lp, 1.0 + 19.0 * gsl_rng_uniform(sim_lp_rng(lp)));
}
static void test_pending_memory_returned(void) {
  static const sim_lptype types[] = {{"burst", 0, burst_init, burst_event, NULL}};
  sim_model m = {"burst", types, 1, NULL, BURST_LPS, sizeof(burst_msg), 1.0, 140.5, NULL, NULL, 0, NULL, 0};
  burst_bad = burst_got = burst_sent = 0;
  memset(burst_tag, 0, sizeof burst_tag);
  memset(burst_at, 0, sizeof burst_at);
  sim_results r;
  sim_run_opts o = {5, 0, 0, NULL};
  CU_ASSERT_EQUAL_FATAL(sim_run(&m, &o, &r), 0);
  CU_ASSERT(burst_got > 2 * BURST_N);
  CU_ASSERT_EQUAL(burst_got, burst_sent);
  CU_ASSERT_EQUAL(burst_bad, 0);
  CU_ASSERT(burst_at[0].slab_slots >= 65536);
  for (int i = 1; i < 3; i++) {
    CU_ASSERT(burst_at[i].slab_used > 0 && burst_at[i].slab_used <= burst_at[i].slab_slots);
    CU_ASSERT(burst_at[i].slab_slots <= (i == 1 ? 32768u : 4096u));
    CU_ASSERT(burst_at[i].heap_slots <= 65536);
  }
  sim_results_free(&r);
}

/* A message below the lookahead to another LP is a model bug; the engine does not deliver it
 * silently. (Checked in a child process, since the engine aborts.) */
static void la_init(sim_lp *lp, void *st) {
  if (sim_lp_id(lp) == 0) sim_send(lp, 1, 0.01, NULL, 0);
}
static void la_event(sim_lp *lp, void *st, const void *msg, sim_id src) {}
/* Whether a run of the one-type model (nlps LPs of `type`, lookahead 0.1, no message payload)
 * stops with a fatal error: run in a child process, since the engine aborts. */
static int run_is_fatal(const sim_lptype *type, sim_id nlps, double end) {
  fflush(NULL);
  pid_t pid = fork();
  if (pid == 0) {
    freopen("/dev/null", "w", stderr);
    sim_model m = {type->name, type, 1, NULL, nlps, 0, 0.1, end, NULL, NULL, 0, NULL, 0};
    sim_results r;
    sim_run_opts o = {1, 0, 0, NULL};
    sim_run(&m, &o, &r);
    _exit(0); /* reached only if the engine accepted what the model did */
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return !(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}
static void test_lookahead_violation_is_fatal(void) {
  static const sim_lptype types[] = {{"la", 0, la_init, la_event, NULL}};
  CU_ASSERT(run_is_fatal(types, 2, 1.0));
}

/* An LP that keeps several timers itself and has only the earliest pending (sim_send_at at the
 * time it computed as now + delay when it set the timer) sees its timers fire at the very times,
 * and in the same order with every other LP's, as an LP that sends each timer as an event of its
 * own (sim_send with that delay). Random cases: 6 seeds; 20,000 LPs (60,000 timers pending in the
 * first model, past the calendar's threshold) with three timers each, delays of 0.1 times a drawn
 * integer (sums that round) or drawn doubles, and now and then a message to another LP; the two
 * runs' sequences of (time, LP, timer) must be equal, bit for bit in the times. A time before now
 * is fatal. */
enum { KT_LPS = 20000, KT_N = 3, KT_MAX = 2000000 };
typedef struct kt_msg {
  int32_t kind; /* 0 .. KT_N - 1: a timer; KT_N: a message from another LP */
} kt_msg;
typedef struct kt_state {
  double due[KT_N];
  uint32_t set[KT_N], nset; /* when each was set: timers due at once fire in the order they were set,
                               as the separate events' send order has them */
} kt_state;
typedef struct kt_seen {
  double t;
  uint64_t lp;
  int32_t kind;
} kt_seen;
static kt_seen *kt_log;
static size_t kt_n;
static double kt_delay(sim_lp *lp) {
  gsl_rng *r = sim_lp_rng(lp);
  return gsl_rng_uniform(r) < 0.5 ? 0.1 * (double)(1 + gsl_rng_uniform_int(r, 200)) : 20.0 * gsl_rng_uniform_pos(r);
}
static void kt_log_it(sim_lp *lp, int kind) {
  if (kt_n < KT_MAX) kt_log[kt_n++] = (kt_seen){sim_now(lp), sim_lp_id(lp), kind};
}
static void kt_maybe_tell(sim_lp *lp) { /* the same draws in both models */
  gsl_rng *r = sim_lp_rng(lp);
  if (gsl_rng_uniform(r) < 0.1) {
    kt_msg m = {KT_N};
    sim_send(lp, gsl_rng_uniform_int(r, KT_LPS), 0.5 + gsl_rng_uniform(r), &m, sizeof m);
  }
}
/* each timer as an event */
static void kt_sep_init(sim_lp *lp, void *st) {
  for (int k = 0; k < KT_N; k++) {
    kt_msg m = {k};
    sim_send(lp, sim_lp_id(lp), kt_delay(lp), &m, sizeof m);
  }
}
static void kt_sep_event(sim_lp *lp, void *st, const void *msg, sim_id src) {
  const kt_msg *m = msg;
  kt_log_it(lp, m->kind);
  if (m->kind == KT_N) return;
  sim_send(lp, sim_lp_id(lp), kt_delay(lp), m, sizeof *m);
  kt_maybe_tell(lp);
}
/* the timers kept in the state, the earliest sent */
static void kt_arm(sim_lp *lp, const kt_state *s) {
  int k = 0;
  for (int i = 1; i < KT_N; i++)
    if (s->due[i] < s->due[k] || (s->due[i] == s->due[k] && s->set[i] < s->set[k])) k = i;
  kt_msg m = {k};
  sim_send_at(lp, sim_lp_id(lp), s->due[k], &m, sizeof m);
}
static void kt_kept_init(sim_lp *lp, void *st) {
  kt_state *s = st;
  for (int k = 0; k < KT_N; k++) {
    s->due[k] = sim_now(lp) + kt_delay(lp);
    s->set[k] = s->nset++;
  }
  kt_arm(lp, s);
}
static void kt_kept_event(sim_lp *lp, void *st, const void *msg, sim_id src) {
  kt_state *s = st;
  const kt_msg *m = msg;
  kt_log_it(lp, m->kind);
  if (m->kind == KT_N) return;
  CU_ASSERT_EQUAL(s->due[m->kind], sim_now(lp)); /* the timer that fires is the one due now */
  s->due[m->kind] = sim_now(lp) + kt_delay(lp);
  s->set[m->kind] = s->nset++;
  kt_maybe_tell(lp);
  kt_arm(lp, s);
}
static size_t kt_run(int kept, uint64_t seed, kt_seen **out) {
  static const sim_lptype sep[] = {{"sep", 0, kt_sep_init, kt_sep_event, NULL}};
  static const sim_lptype kept_t[] = {{"kept", sizeof(kt_state), kt_kept_init, kt_kept_event, NULL}};
  sim_model m = {"kt", kept ? kept_t : sep, 1, NULL, KT_LPS, sizeof(kt_msg), 0.5, 60.0, NULL, NULL, 0, NULL, 0};
  kt_log = malloc(KT_MAX * sizeof *kt_log);
  kt_n = 0;
  sim_results r;
  sim_run_opts o = {seed, 0, 0, NULL};
  CU_ASSERT_EQUAL_FATAL(sim_run(&m, &o, &r), 0);
  CU_ASSERT_EQUAL(r.events, kt_n);
  sim_results_free(&r);
  *out = kt_log;
  return kt_n;
}
static void kt_past_init(sim_lp *lp, void *st) {
  if (sim_lp_id(lp) == 0) sim_send(lp, 0, 1.0, NULL, 0);
}
static void kt_past_event(sim_lp *lp, void *st, const void *msg, sim_id src) {
  sim_send_at(lp, 0, sim_now(lp) - 0.25, NULL, 0);
}
static void test_kept_timers(void) {
  for (uint64_t seed = 1; seed <= 6; seed++) {
    kt_seen *a, *b;
    size_t na = kt_run(0, seed, &a), nb = kt_run(1, seed, &b);
    if (!(na > 300000 && na < KT_MAX)) printf("\n%zu events\n", na);
    CU_ASSERT(na > 300000 && na < KT_MAX);
    CU_ASSERT_EQUAL(na, nb);
    size_t differ = 0, n = na < nb ? na : nb;
    for (size_t i = 0; i < n; i++)
      differ += memcmp(&a[i].t, &b[i].t, sizeof a[i].t) != 0 || a[i].lp != b[i].lp || a[i].kind != b[i].kind;
    if (differ) printf("\nseed %llu: %zu of %zu events differ\n", (unsigned long long)seed, differ, n);
    CU_ASSERT_EQUAL(differ, 0);
    free(a);
    free(b);
  }
  static const sim_lptype past[] = {{"past", 0, kt_past_init, kt_past_event, NULL}};
  CU_ASSERT(run_is_fatal(past, 1, 5.0));
}

/* Groups (sim_model.ngroups): a message to another group below the group lookahead is a model
 * bug, fatal on one rank as on several; one to the LP's own group needs only the lookahead. */
static sim_id grp_first(const void *ctx, unsigned g) { return (sim_id)g * 2; } /* LPs {0, 1}, {2, 3} */
static int grp_delivered;
static void grp_init(sim_lp *lp, void *st) {
  const int *to = sim_lp_ctx(lp);
  if (sim_lp_id(lp) == 0) sim_send(lp, (sim_id)*to, 0.5, NULL, 0);
}
static void grp_event(sim_lp *lp, void *st, const void *msg, sim_id src) { grp_delivered++; }
static int grp_run(int to) {
  static const sim_lptype types[] = {{"g", 0, grp_init, grp_event, NULL}};
  sim_model m = {"g", types, 1, NULL, 4, 0, 0.1, 1.0, &to, NULL, 0, NULL, 0};
  m.ngroups = 2;
  m.group_first = grp_first;
  m.group_lookahead = 5.0;
  sim_results r;
  sim_run_opts o = {1, 0, 0, NULL};
  grp_delivered = 0;
  int rc = sim_run(&m, &o, &r);
  if (rc == SIM_OK) sim_results_free(&r);
  return rc;
}
static void test_group_lookahead_violation_is_fatal(void) {
  CU_ASSERT_EQUAL(grp_run(1), SIM_OK); /* LP 0 to LP 1, its own group, 0.5 s later */
  CU_ASSERT_EQUAL(grp_delivered, 1);
  fflush(NULL);
  pid_t pid = fork();
  if (pid == 0) {
    freopen("/dev/null", "w", stderr);
    grp_run(2); /* LP 0 to LP 2, the other group, 0.5 s < 5 s later */
    _exit(0);   /* reached only if the engine accepted the message */
  }
  int status = 0;
  waitpid(pid, &status, 0);
  CU_ASSERT(!(WIFEXITED(status) && WEXITSTATUS(status) == 0));
}

/* Shared groups (sim_model.shared_groups): a handler writes another LP of its group through
 * sim_peer, and that LP's next event sees the write at once; asking for an LP of another group
 * is fatal, and so is sim_peer in a model without shared groups. */
typedef struct {
  int told; /* set by a peer */
  int seen; /* what this LP's own event found */
} peer_st;
static sim_id peer_to;
static void peer_init(sim_lp *lp, void *st) {
  if (sim_lp_id(lp) == 0) sim_send(lp, 0, 1.0, NULL, 0);
  if (sim_lp_id(lp) == 1) sim_send(lp, 1, 1.0, NULL, 0); /* after LP 0's event (key order: src 0 first) */
}
static void peer_event(sim_lp *lp, void *st, const void *msg, sim_id src) {
  peer_st *p = st;
  if (sim_lp_id(lp) == 0) {
    peer_st *q = sim_lp_state(sim_peer(lp, peer_to));
    q->told = 7;
  } else {
    p->seen = p->told;
  }
}
static int peer_seen;
static void peer_fini(sim_lp *lp, void *st) {
  if (sim_lp_id(lp) == 1) peer_seen = ((peer_st *)st)->seen;
}
static int peer_run(sim_id to, int shared) {
  static const sim_lptype types[] = {{"p", sizeof(peer_st), peer_init, peer_event, peer_fini}};
  sim_model m = {"p", types, 1, NULL, 4, 0, 0.1, 5.0, NULL, NULL, 0, NULL, 0};
  m.ngroups = 2;
  m.group_first = grp_first;
  m.group_lookahead = 1.0;
  m.shared_groups = shared;
  peer_to = to;
  peer_seen = -1;
  sim_results r;
  sim_run_opts o = {1, 0, 0, NULL};
  int rc = sim_run(&m, &o, &r);
  if (rc == SIM_OK) sim_results_free(&r);
  return rc;
}
static int peer_dies(sim_id to, int shared) {
  fflush(NULL);
  pid_t pid = fork();
  if (pid == 0) {
    freopen("/dev/null", "w", stderr);
    peer_run(to, shared);
    _exit(0); /* reached only if the engine allowed it */
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return !(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}
static void test_shared_groups(void) {
  CU_ASSERT_EQUAL(peer_run(1, 1), SIM_OK);
  CU_ASSERT_EQUAL(peer_seen, 7); /* LP 0 wrote LP 1's state at t = 1; LP 1's event at t = 1 saw it */
  CU_ASSERT(peer_dies(2, 1));    /* LP 2 is in the other group */
  CU_ASSERT(peer_dies(1, 0));    /* no shared groups */
  static const sim_lptype types[] = {{"x", 0, NULL, la_event, NULL}};
  sim_model m = {"x", types, 1, NULL, 4, 0, 0.1, 1.0, NULL, NULL, 0, NULL, 0};
  m.shared_groups = 1; /* without groups */
  sim_results r;
  sim_run_opts o = {1, 0, 0, NULL};
  CU_ASSERT_EQUAL(sim_run(&m, &o, &r), SIM_EINVAL);
}

static sim_id grp_bad_start(const void *ctx, unsigned g) { return (sim_id)g * 2 + 1; }          /* group 0 not at 0 */
static sim_id grp_bad_order(const void *ctx, unsigned g) { return g == 2 ? 1 : (sim_id)g * 2; } /* 0, 2, 1 */
static sim_id grp_bad_past(const void *ctx, unsigned g) { return (sim_id)g * 3; }               /* 0, 3, 6 of 4 LPs */
static void test_invalid_groups(void) {
  static const sim_lptype types[] = {{"x", 0, NULL, la_event, NULL}};
  sim_model m = {"x", types, 1, NULL, 4, 0, 0.1, 1.0, NULL, NULL, 0, NULL, 0};
  sim_results r;
  sim_run_opts o = {1, 0, 0, NULL};
  m.ngroups = 2;
  m.group_lookahead = 1.0;
  CU_ASSERT_EQUAL(sim_run(&m, &o, &r), SIM_EINVAL); /* no group_first */
  m.group_first = grp_first;
  m.group_lookahead = 0.05; /* below the lookahead */
  CU_ASSERT_EQUAL(sim_run(&m, &o, &r), SIM_EINVAL);
  m.group_lookahead = 1.0;
  m.group_first = grp_bad_start;
  CU_ASSERT_EQUAL(sim_run(&m, &o, &r), SIM_EINVAL);
  m.ngroups = 3;
  m.group_first = grp_bad_order;
  CU_ASSERT_EQUAL(sim_run(&m, &o, &r), SIM_EINVAL);
  m.group_first = grp_bad_past;
  CU_ASSERT_EQUAL(sim_run(&m, &o, &r), SIM_EINVAL);
  m.ngroups = 5; /* more groups than LPs */
  m.group_first = grp_first;
  CU_ASSERT_EQUAL(sim_run(&m, &o, &r), SIM_EINVAL);
  m.ngroups = 2; /* and the good one runs */
  CU_ASSERT_EQUAL_FATAL(sim_run(&m, &o, &r), SIM_OK);
  sim_results_free(&r);
}

static void test_invalid_model(void) {
  static const sim_lptype types[] = {{"x", 0, NULL, la_event, NULL}};
  sim_model m = {"x", types, 1, NULL, 2, 0, 0.0 /* lookahead 0 */, 1.0, NULL, NULL, 0, NULL, 0};
  sim_results r;
  sim_run_opts o = {1, 0, 0, NULL};
  CU_ASSERT_EQUAL(sim_run(&m, &o, &r), SIM_EINVAL);
  m.lookahead = 0.1;
  m.nlps = 0;
  CU_ASSERT_EQUAL(sim_run(&m, &o, &r), SIM_EINVAL);
  /* at most 256 LP types (the type's index is a byte of the LP record) */
  static sim_lptype many[257];
  for (int i = 0; i < 257; i++) many[i] = types[0];
  m.nlps = 2;
  m.types = many;
  m.ntypes = 257;
  m.type_of = type_zero;
  CU_ASSERT_EQUAL(sim_run(&m, &o, &r), SIM_EINVAL);
  m.ntypes = 256;
  CU_ASSERT_EQUAL_FATAL(sim_run(&m, &o, &r), SIM_OK);
  sim_results_free(&r);
}

/* PHOLD's conservation: events handled == events sent while the run lasts; the per-LP table sums
 * to the series total; the same seed twice gives the same hashes; another seed does not. */
static void test_phold_outputs(void) {
  phold_config c = {64, 2, 0.1, 0.9, 0.5};
  sim_model m;
  phold_model_init(&m, &c, 100.0);
  sim_results a, b, d;
  sim_run_opts o = {3, 0, 0, NULL};
  CU_ASSERT_EQUAL_FATAL(sim_run(&m, &o, &a), 0);
  CU_ASSERT_EQUAL_FATAL(sim_run(&m, &o, &b), 0);
  o.seed = 4;
  CU_ASSERT_EQUAL_FATAL(sim_run(&m, &o, &d), 0);
  CU_ASSERT_EQUAL(a.nrecords[0], 64);
  const phold_lp_record *ra = (const phold_lp_record *)a.tables[0], *rb = (const phold_lp_record *)b.tables[0],
                        *rd = (const phold_lp_record *)d.tables[0];
  uint64_t sum = 0;
  int diff = 0;
  for (int i = 0; i < 64; i++) {
    CU_ASSERT_EQUAL(ra[i].id, (uint64_t)i);
    CU_ASSERT_EQUAL(ra[i].hash, rb[i].hash);
    diff += ra[i].hash != rd[i].hash;
    sum += ra[i].events;
  }
  CU_ASSERT_EQUAL((int64_t)sum, a.series[0][0]);
  CU_ASSERT_EQUAL(sum, a.events);
  CU_ASSERT(diff > 60);
  /* 64 LPs x 2 events, each event needs >= 0.1 s and on average 1.0 s: about 12800 in 100 s. */
  CU_ASSERT(a.events > 11000 && a.events < 14500);
  sim_results_free(&a);
  sim_results_free(&b);
  sim_results_free(&d);
}

/* Series bins: an LP adds 1 at t = 0.5, 1.5, ..., 9.5; with 2 s bins over 10 s, 5 bins of 2. */
static void bin_init(sim_lp *lp, void *st) { sim_send(lp, sim_lp_id(lp), 0.5, NULL, 0); }
static void bin_event(sim_lp *lp, void *st, const void *msg, sim_id src) {
  sim_series_add(lp, 0, (unsigned)sim_lp_id(lp), sim_now(lp), 1);
  sim_series_add(lp, 1, 0, sim_now(lp), 3);
  sim_send(lp, sim_lp_id(lp), 1.0, NULL, 0);
}
static void test_series_bins(void) {
  static const sim_lptype types[] = {{"bin", 0, bin_init, bin_event, NULL}};
  static const sim_series_def sd[] = {{"per_lp", "1", 2.0, 2, NULL, ""}, {"total", "1", 0, 1, NULL, ""}};
  sim_model m = {"bin", types, 1, NULL, 2, 0, 0.1, 10.0, NULL, sd, 2, NULL, 0};
  sim_results r;
  sim_run_opts o = {1, 0, 0, NULL};
  CU_ASSERT_EQUAL_FATAL(sim_run(&m, &o, &r), 0);
  CU_ASSERT_EQUAL_FATAL(r.nbins[0], 5);
  for (int b = 0; b < 5; b++) {
    CU_ASSERT_EQUAL(r.series[0][b * 2 + 0], 2);
    CU_ASSERT_EQUAL(r.series[0][b * 2 + 1], 2);
  }
  CU_ASSERT_EQUAL(r.series[1][0], 2 * 10 * 3);
  sim_results_free(&r);
}

/* ---- statistics ----------------------------------------------------------------------------- */

/* Known answer: x = 1..5, mean 3, sd sqrt(2.5), t_{0.975,4} = 2.776445105, half width
 * 2.776445105 * 1.58113883 / sqrt(5) = 1.963243161 (computed by hand from the t table). */
static void test_summary_ci(void) {
  double x[5] = {1, 2, 3, 4, 5};
  sim_summary s;
  sim_summarize(x, 5, 1, &s);
  CU_ASSERT_DOUBLE_EQUAL(s.mean, 3.0, 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(s.sd, sqrt(2.5), 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(s.ci95_hi - 3.0, 1.963243161, 1e-6);
  CU_ASSERT_DOUBLE_EQUAL(3.0 - s.ci95_lo, 1.963243161, 1e-6);
  CU_ASSERT_EQUAL(s.n, 5);
  sim_summarize(x, 1, 1, &s);
  CU_ASSERT(isnan(s.ci95_lo));
  /* stride: the second column of a 3 x 2 matrix */
  double y[6] = {0, 10, 0, 20, 0, 30};
  sim_summarize(y + 1, 3, 2, &s);
  CU_ASSERT_DOUBLE_EQUAL(s.mean, 20.0, 1e-12);
}

/* ---- HDF5 round trip ------------------------------------------------------------------------ */

static void test_hdf5_round_trip(void) {
  phold_config c = {16, 1, 0.1, 0.9, 0.5};
  sim_model m;
  phold_model_init(&m, &c, 20.0);
  sim_results r[2];
  sim_run_opts o = {11, 0, 0, NULL};
  CU_ASSERT_EQUAL_FATAL(sim_run(&m, &o, &r[0]), 0);
  o.seed = 12;
  CU_ASSERT_EQUAL_FATAL(sim_run(&m, &o, &r[1]), 0);
  sim_metric_def md[2] = {{"a.x.y", "s", ""}, {"b", "USD", ""}};
  double vals[4] = {1.0, 2.0, 3.0, 4.0};
  sim_run_meta meta = {"phold", "x.cfg", "model = \"phold\";", "eff", 11, 2, 1, 1, 0.5, 20.0};
  char path[] = "rt_test.h5", err[256];
  unlink(path);
  CU_ASSERT_EQUAL_FATAL(sim_results_write(path, &meta, &m, r, md, 2, vals, err, sizeof err), 0);
  CU_ASSERT(access("rt_test.h5.tmp", F_OK) != 0);

  hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
  CU_ASSERT_FATAL(f >= 0);
  /* the per-LP table of rep 1 */
  hid_t ds = H5Dopen2(f, "/reps/rep_0001/tables/lps", H5P_DEFAULT);
  CU_ASSERT_FATAL(ds >= 0);
  hid_t ct = H5Tcreate(H5T_COMPOUND, sizeof(phold_lp_record));
  H5Tinsert(ct, "id", offsetof(phold_lp_record, id), H5T_NATIVE_UINT64);
  H5Tinsert(ct, "events", offsetof(phold_lp_record, events), H5T_NATIVE_UINT64);
  H5Tinsert(ct, "hash", offsetof(phold_lp_record, hash), H5T_NATIVE_UINT64);
  phold_lp_record back[16];
  CU_ASSERT(H5Dread(ds, ct, H5S_ALL, H5S_ALL, H5P_DEFAULT, back) >= 0);
  CU_ASSERT(memcmp(back, r[1].tables[0], sizeof back) == 0);
  H5Tclose(ct);
  H5Dclose(ds);
  /* metrics and the summary's mean */
  double mv[4];
  ds = H5Dopen2(f, "/metrics", H5P_DEFAULT);
  CU_ASSERT(H5Dread(ds, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, mv) >= 0);
  CU_ASSERT(memcmp(mv, vals, sizeof vals) == 0);
  H5Dclose(ds);
  struct {
    double mean;
  } sm[2];
  ds = H5Dopen2(f, "/summary", H5P_DEFAULT);
  hid_t mt = H5Tcreate(H5T_COMPOUND, sizeof sm[0]);
  H5Tinsert(mt, "mean", 0, H5T_NATIVE_DOUBLE);
  CU_ASSERT(H5Dread(ds, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, sm) >= 0);
  CU_ASSERT_DOUBLE_EQUAL(sm[0].mean, 2.0, 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(sm[1].mean, 3.0, 1e-12);
  H5Tclose(mt);
  H5Dclose(ds);
  /* series value and its unit attribute */
  int64_t tot;
  ds = H5Dopen2(f, "/reps/rep_0000/series/events", H5P_DEFAULT);
  CU_ASSERT(H5Dread(ds, H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, &tot) >= 0);
  CU_ASSERT_EQUAL(tot, r[0].series[0][0]);
  CU_ASSERT(H5Aexists(ds, "unit") > 0);
  /* per-column units: a series without colunits repeats its unit for every column */
  hid_t ua = H5Aopen(ds, "units", H5P_DEFAULT);
  CU_ASSERT_FATAL(ua >= 0);
  hid_t us = H5Aget_space(ua), ut = H5Aget_type(ua);
  CU_ASSERT_EQUAL(H5Sget_simple_extent_npoints(us), 1);
  char ubuf[64] = "";
  CU_ASSERT_FATAL(H5Tget_size(ut) < sizeof ubuf);
  CU_ASSERT(H5Aread(ua, ut, ubuf) >= 0);
  CU_ASSERT_STRING_EQUAL(ubuf, "events");
  H5Tclose(ut);
  H5Sclose(us);
  H5Aclose(ua);
  H5Dclose(ds);
  int32_t ver = 0;
  hid_t a = H5Aopen(f, "format_version", H5P_DEFAULT);
  H5Aread(a, H5T_NATIVE_INT32, &ver);
  H5Aclose(a);
  CU_ASSERT_EQUAL(ver, SIM_RESULTS_FORMAT_VERSION);
  H5Fclose(f);
  unlink(path);

  /* An unwritable place: an error, no file, no temporary left. */
  CU_ASSERT_EQUAL(sim_results_write("/nonexistent-dir/x.h5", &meta, &m, r, md, 2, vals, err, sizeof err), SIM_EIO);
  CU_ASSERT(strstr(err, "/nonexistent-dir/x.h5") != NULL);
  sim_results_free(&r[0]);
  sim_results_free(&r[1]);
}

/* ---- the data search path (sim/datapath.h) --------------------------------------------------- */

static void touch(const char *dir, const char *name) {
  char p[8400];
  snprintf(p, sizeof p, "%s/%s", dir, name);
  FILE *f = fopen(p, "w");
  CU_ASSERT_PTR_NOT_NULL_FATAL(f);
  fputs("x\n", f);
  fclose(f);
}

/* `after` appears in s, later than `before` (NULL: anywhere); returns where. */
static const char *after(const char *s, const char *before, const char *what) {
  const char *p = strstr(before ? before : s, what);
  if (!p) fprintf(stderr, "\n'%s' not found (in order) in: %s\n", what, s);
  CU_ASSERT_PTR_NOT_NULL(p);
  return p ? p : s;
}

/* The order scenario folder, SPOTLAB_DATA (each folder), source tree (this test is an uninstalled
 * build), installed prefix; the first that has the file wins; a name found nowhere lists every
 * place in that order; absolute names are used as they are; a directory of the name is skipped. */
static void test_data_search_path(void) {
  char root[] = "/tmp/spotlab_datapath.XXXXXX";
  CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(root));
  char scen[4200], a[4200], b[4200], env[12800], want[8800], err[4096];
  snprintf(scen, sizeof scen, "%s/scen", root);
  snprintf(a, sizeof a, "%s/a", root);
  snprintf(b, sizeof b, "%s/b", root);
  CU_ASSERT_FATAL(!mkdir(scen, 0700) && !mkdir(a, 0700) && !mkdir(b, 0700));
  /* an empty entry and a folder named twice (once with a trailing "/.") are harmless */
  snprintf(env, sizeof env, "%s::%s:%s/.", a, b, a);
  CU_ASSERT_EQUAL_FATAL(setenv("SPOTLAB_DATA", env, 1), 0);
  char *p = NULL;
  touch(b, "f.csv");
  CU_ASSERT_EQUAL(sim_data_find(scen, "f.csv", &p, err, sizeof err), 0);
  snprintf(want, sizeof want, "%s/f.csv", b);
  CU_ASSERT_STRING_EQUAL(p ? p : "", want);
  free(p);
  touch(a, "f.csv"); /* the earlier SPOTLAB_DATA folder wins */
  CU_ASSERT_EQUAL(sim_data_find(scen, "f.csv", &p, err, sizeof err), 0);
  snprintf(want, sizeof want, "%s/f.csv", a);
  CU_ASSERT_STRING_EQUAL(p ? p : "", want);
  free(p);
  snprintf(want, sizeof want, "%s/f.csv", scen); /* a directory of that name is no file */
  CU_ASSERT_EQUAL_FATAL(mkdir(want, 0700), 0);
  CU_ASSERT_EQUAL(sim_data_find(scen, "f.csv", &p, err, sizeof err), 0);
  CU_ASSERT_PTR_NOT_NULL(p && strstr(p, "/a/f.csv"));
  free(p);
  rmdir(want);
  touch(scen, "f.csv"); /* the scenario's folder before all */
  CU_ASSERT_EQUAL(sim_data_find(scen, "f.csv", &p, err, sizeof err), 0);
  CU_ASSERT_STRING_EQUAL(p ? p : "", want);
  free(p);
  /* the source tree's data/ for this uninstalled build, with no other folder that has it */
  CU_ASSERT_EQUAL(sim_data_find(scen, "gpus.csv", &p, err, sizeof err), 0);
  CU_ASSERT_PTR_NOT_NULL(p && strstr(p, "/data/gpus.csv") && access(p, R_OK) == 0);
  free(p);
  /* found nowhere: every place, in order, each with its reason */
  CU_ASSERT_EQUAL(sim_data_find(scen, "sub/none.csv", &p, err, sizeof err), SIM_ENOTFOUND);
  CU_ASSERT_PTR_NULL(p);
  const char *at = after(err, NULL, "sub/none.csv: not found; looked at ");
  snprintf(want, sizeof want, "%s/sub/none.csv (the scenario's folder)", scen);
  at = after(err, at, want);
  snprintf(want, sizeof want, "%s/sub/none.csv (SPOTLAB_DATA)", a);
  at = after(err, at, want);
  snprintf(want, sizeof want, "%s/sub/none.csv (SPOTLAB_DATA)", b);
  at = after(err, at, want);
  at = after(err, at, "/data/sub/none.csv (the source tree: this build is not installed)");
  at = after(err, at, "/share/spotlab/data/sub/none.csv (installed under ");
  snprintf(want, sizeof want, "%s/sub/none.csv", a); /* named once although SPOTLAB_DATA names it twice */
  CU_ASSERT_PTR_NULL(strstr(strstr(err, want) + 1, want));
  /* an absolute name is used as it is, found or not (its reader says why it cannot be opened) */
  CU_ASSERT_EQUAL(sim_data_find(scen, "/no/such/file.csv", &p, err, sizeof err), 0);
  CU_ASSERT_STRING_EQUAL(p ? p : "", "/no/such/file.csv");
  free(p);
  /* no scenario folder and no SPOTLAB_DATA: the other places still */
  unsetenv("SPOTLAB_DATA");
  CU_ASSERT_EQUAL(sim_data_find(NULL, "none.csv", &p, err, sizeof err), SIM_ENOTFOUND);
  CU_ASSERT_PTR_NULL(strstr(err, "SPOTLAB_DATA)"));
  CU_ASSERT_PTR_NULL(strstr(err, "scenario's folder"));
  after(err, NULL, "(the source tree: this build is not installed)");
  char cmd[4200];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
  CU_ASSERT_EQUAL(system(cmd), 0);
}

/* sim_bigmem_realloc_lines: through random growth and shrinking (across glibc's mmap threshold,
 * where a block's offset in its page changes) the table starts on a 64-byte line and keeps its
 * contents, and a failed call leaves the table as it was. */
static void test_bigmem_lines(void) {
  gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
  gsl_rng_set(r, 7);
  void *block = NULL;
  uint64_t *t = NULL;
  size_t n = 0; /* words */
  unsigned moved_offsets = 0;
  size_t prev_off = 0;
  for (int step = 0; step < 200; step++) {
    size_t nn = 1 + gsl_rng_uniform_int(r, step % 50 == 49 ? 16 : 1u << (4 + gsl_rng_uniform_int(r, 17)));
    uint64_t *q = sim_bigmem_realloc_lines(&block, t, n * sizeof *t, nn * sizeof *q);
    CU_ASSERT_PTR_NOT_NULL_FATAL(q);
    CU_ASSERT_EQUAL((uintptr_t)q % 64, 0);
    CU_ASSERT((char *)q >= (char *)block && (char *)q < (char *)block + 64);
    size_t keep = n < nn ? n : nn, bad = 0;
    for (size_t i = 0; i < keep; i++) bad += q[i] != (uint64_t)step * 1000003u + i;
    CU_ASSERT_EQUAL(bad, 0);
    size_t off = (size_t)((char *)q - (char *)block);
    moved_offsets += step > 0 && off != prev_off;
    prev_off = off;
    t = q;
    n = nn;
    for (size_t i = 0; i < n; i++) t[i] = (uint64_t)(step + 1) * 1000003u + i;
  }
  CU_ASSERT(moved_offsets > 0); /* the memmove path ran */
  uint64_t *q = sim_bigmem_realloc_lines(&block, t, n * sizeof *t, SIZE_MAX - 8);
  CU_ASSERT_PTR_NULL(q); /* refused: the table is untouched */
  CU_ASSERT_EQUAL(t[n - 1], (uint64_t)200 * 1000003u + n - 1);
  free(block);
  gsl_rng_free(r);
}

static CU_TestInfo rng_tests[] = {
    {"streams are reproducible and distinct", test_rng_reproducible},
    {"neighbouring streams are uncorrelated", test_rng_stream_independence},
    {"GSL distributions on a stream", test_rng_gsl_distribution},
    {"replication seeds", test_rep_seeds},
    {"inline draws give GSL's numbers", test_rng_inline},
    {"PHOLD's draw is GSL's exponential to an ulp", test_phold_draw_is_gsl_exponential},
    CU_TEST_INFO_NULL,
};
static CU_TestInfo engine_tests[] = {
    {"simultaneous events follow (time, src, seq)", test_event_order},
    {"the engine's switches come from one table and bad values are refused", test_engine_switches},
    {"the calendar of far events keeps the order (time, src, seq)", test_calendar_order},
    {"the calendar's periodic scan files the overflow list in order", test_calendar_scan},
    {"the hints name the next two events", test_hints_name_the_next_events},
    {"bursts of pending payloads arrive intact and give their memory back", test_pending_memory_returned},
    {"a message below the lookahead is fatal", test_lookahead_violation_is_fatal},
    {"timers an LP keeps and sends at their time fire as separate events would", test_kept_timers},
    {"invalid models are refused", test_invalid_model},
    {"a message to another group below the group lookahead is fatal", test_group_lookahead_violation_is_fatal},
    {"groups that are not consecutive blocks of every LP are refused", test_invalid_groups},
    {"an LP writes a peer of its shared group; other groups are refused", test_shared_groups},
    {"PHOLD outputs are consistent and seeded", test_phold_outputs},
    {"series bins", test_series_bins},
    {"mean and 95% CI known answer", test_summary_ci},
    {"HDF5 round trip", test_hdf5_round_trip},
    {"data files: the search path and the not-found message", test_data_search_path},
    {"cache-line tables keep their contents and alignment through random resizes", test_bigmem_lines},
    CU_TEST_INFO_NULL,
};
CU_SuiteInfo spotlab_suites[] = {
    {"rng", NULL, NULL, NULL, NULL, rng_tests},
    {"engine", NULL, NULL, NULL, NULL, engine_tests},
    CU_SUITE_INFO_NULL,
};
