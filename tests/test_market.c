/* test_market.c - unit tests of the market's economics (models/market/mkt.h), engine-free:
 * ledger conservation, the auction primitives (knapsack against brute force, double auction; the
 * clearing rules themselves are tests/test_auction.c), churn moments, Erlang C, treasury rule, score, loaders. */
#include "models/market/mkt.h"
#include "models/market/mkt_respond.h"

#include <CUnit/CUnit.h>
#include <unistd.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *src_dir(void) {
  const char *s = getenv("SPOTLAB_SOURCE_DIR");
  return s ? s : "..";
}
static void path_of(char *buf, size_t n, const char *rel) { snprintf(buf, n, "%s/%s", src_dir(), rel); }

/* ---- ledger ------------------------------------------------------------------------------- */
static void test_ledger_conserves(void) {
  mkt_ledger l;
  CU_ASSERT_EQUAL_FATAL(mkt_ledger_init(&l, 8), MKT_OK);
  gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
  gsl_rng_set(r, 7);
  for (int i = 0; i < 100000; i++) {
    size_t a = gsl_rng_uniform_int(r, 8), b = gsl_rng_uniform_int(r, 8);
    int64_t amt = (int64_t)gsl_rng_uniform_int(r, 1000000000) - 500000000;
    int64_t fee_ppm = (int64_t)gsl_rng_uniform_int(r, 200000);
    int64_t fee = mkt_fee(amt, fee_ppm);
    /* a pays amt: fee to account 0 (platform), the rest to b */
    CU_ASSERT_EQUAL(mkt_ledger_transfer(&l, a, 0, fee), MKT_OK);
    CU_ASSERT_EQUAL(mkt_ledger_transfer(&l, a, b, amt - fee), MKT_OK);
  }
  int of = 1;
  CU_ASSERT_EQUAL(mkt_ledger_sum(&l, &of), 0);
  CU_ASSERT_EQUAL(of, 0);
  /* an overflowing transfer is refused and changes nothing */
  l.bal[3] = INT64_MAX - 5;
  l.bal[4] = -(INT64_MAX - 5);
  CU_ASSERT_EQUAL(mkt_ledger_transfer(&l, 4, 3, 10), MKT_EINVAL);
  CU_ASSERT_EQUAL(l.bal[3], INT64_MAX - 5);
  CU_ASSERT_EQUAL(mkt_ledger_transfer(&l, 9, 3, 1), MKT_EINVAL);
  gsl_rng_free(r);
  mkt_ledger_fini(&l);
}

static void test_fee_and_cost(void) {
  CU_ASSERT_EQUAL(mkt_fee(1000000, 25000), 25000); /* 2.5% of 1 USD (Clore spot fee) */
  CU_ASSERT_EQUAL(mkt_fee(-999, 100000), -99);     /* toward zero */
  CU_ASSERT_EQUAL(mkt_cost(3600000, 1000), 1000);  /* 3.6 USD/h for 1 s = 1000 musd */
  CU_ASSERT_EQUAL(mkt_cost(1000000, 3600000), 1000000);
  CU_ASSERT_EQUAL(mkt_cost(INT64_C(9000000000000), INT64_C(3600000) * 24 * 365), INT64_C(9000000000000) * 24 * 365);
}

/* ---- clearing rules ----------------------------------------------------------------------- */
static int64_t brute_knapsack(const mkt_bid *b, size_t n, uint64_t cap) {
  int64_t best = 0;
  for (unsigned m = 0; m < (1u << n); m++) {
    uint64_t w = 0;
    int64_t v = 0;
    for (size_t i = 0; i < n; i++)
      if (m & (1u << i)) {
        w += b[i].gpus;
        v += b[i].price * b[i].gpus;
      }
    if (w <= cap && v > best) best = v;
  }
  return best;
}

static void test_knapsack_exact(void) {
  gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
  gsl_rng_set(r, 11);
  for (int t = 0; t < 300; t++) {
    size_t n = 1 + gsl_rng_uniform_int(r, 12);
    mkt_bid b[12];
    int win[12];
    for (size_t i = 0; i < n; i++) {
      b[i].price = 1 + (int64_t)gsl_rng_uniform_int(r, 5000);
      b[i].gpus = 1 + (uint32_t)gsl_rng_uniform_int(r, 8);
      b[i].power_w = 200;
    }
    uint64_t cap = gsl_rng_uniform_int(r, 30);
    int64_t got = mkt_knapsack(b, n, cap, win);
    CU_ASSERT_EQUAL(got, brute_knapsack(b, n, cap));
    uint64_t w = 0;
    int64_t v = 0;
    for (size_t i = 0; i < n; i++)
      if (win[i]) {
        w += b[i].gpus;
        v += b[i].price * b[i].gpus;
      }
    CU_ASSERT(w <= cap);
    CU_ASSERT_EQUAL(v, got);
  }
  /* a knapsack beats greedy-by-price here: one 3-GPU bid at 10 vs two 2-GPU bids at 9, cap 4 */
  mkt_bid b[3] = {{10, 3, 0}, {9, 2, 0}, {9, 2, 0}};
  int win[3];
  CU_ASSERT_EQUAL(mkt_knapsack(b, 3, 4, win), 36);
  CU_ASSERT(!win[0] && win[1] && win[2]);
  gsl_rng_free(r);
}

static void test_double_auction(void) {
  int64_t bids[] = {10, 9, 8, 3}, asks[] = {2, 4, 8, 12}, p = -1;
  /* 10>=2, 9>=4, 8>=8, then no more asks below: k = 3, price (8+8)/2 */
  CU_ASSERT_EQUAL(mkt_double_auction(bids, 4, asks, 4, &p), 3);
  CU_ASSERT_EQUAL(p, 8);
  int64_t asks2[] = {1, 5};
  CU_ASSERT_EQUAL(mkt_double_auction(bids, 4, asks2, 2, &p), 2);
  CU_ASSERT_EQUAL(p, 7); /* (9 + 5) / 2 */
  int64_t asks3[] = {11};
  CU_ASSERT_EQUAL(mkt_double_auction(bids, 4, asks3, 1, &p), 0);
}

/* ---- churn ---------------------------------------------------------------------------------- */
static void check_moments(const churn_dist *d, gsl_rng *r) {
  const int n = 400000;
  double s = 0, s2 = 0;
  for (int i = 0; i < n; i++) {
    double x = mkt_dist_sample(d, r);
    CU_ASSERT(x > 0);
    s += x;
    s2 += x * x;
  }
  double mean = s / n, var = s2 / n - mean * mean;
  double m = churn_dist_mean(d), v = churn_dist_var(d);
  /* sample mean within 5 standard errors of the analytic mean */
  CU_ASSERT(fabs(mean - m) < 5 * sqrt(v / n));
  /* sample variance within 15% where the fourth moment is moderate (CV^2 < 10) */
  if (v / (m * m) < 10) CU_ASSERT(fabs(var - v) < 0.15 * v);
}

static void test_churn_moments(void) {
  gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
  gsl_rng_set(r, 3);
  char p[1024];
  path_of(p, sizeof p, "data/churn_fta_fits.csv");
  const char *traces[] = {"microsoft99", "skype06", "overnet03", "nd07cpu"};
  int loaded = 0;
  for (int t = 0; t < 4; t++)
    for (int k = 0; k < 4; k++) {
      churn_dist d;
      char err[256];
      if (churn_fits_load(p, traces[t], "up", (churn_kind)k, &d, err, sizeof err) != CHURN_OK) {
        fprintf(stderr, "%s\n", err);
        continue;
      }
      loaded++;
      check_moments(&d, r);
    }
  CU_ASSERT_EQUAL(loaded, 16);
  /* fits file: the Skype Weibull up fit is shape 0.64, scale 10.86 */
  churn_dist d;
  CU_ASSERT_EQUAL(churn_fits_load(p, "skype06", "up", CHURN_WEIBULL, &d, NULL, 0), CHURN_OK);
  CU_ASSERT_DOUBLE_EQUAL(d.p1, 0.64, 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(d.p2, 10.86, 1e-12);
  CU_ASSERT_EQUAL(churn_fits_load(p, "nosuch", "up", CHURN_EXP, &d, NULL, 0), CHURN_ENOTFOUND);
  /* parameter checks */
  churn_dist bad = {CHURN_WEIBULL, -1, 2};
  CU_ASSERT_EQUAL(churn_dist_check(&bad), CHURN_EINVAL);
  /* exact moments of a simple case: gamma(2, 3) has mean 6 and variance 18 */
  churn_dist g = {CHURN_GAMMA, 2, 3};
  CU_ASSERT_DOUBLE_EQUAL(churn_dist_mean(&g), 6, 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(churn_dist_var(&g), 18, 1e-12);
  churn_dist w = {CHURN_WEIBULL, 1, 5}; /* shape 1 = exponential of mean 5 */
  CU_ASSERT_DOUBLE_EQUAL(churn_dist_mean(&w), 5, 1e-9);
  CU_ASSERT_DOUBLE_EQUAL(churn_dist_var(&w), 25, 1e-9);
  gsl_rng_free(r);
}

/* ---- queueing, treasury, score -------------------------------------------------------------- */
static void test_erlang_c(void) {
  /* M/M/1: Wq = rho / (mu - lambda) */
  CU_ASSERT_DOUBLE_EQUAL(mkt_erlang_c_wait(0.5, 1, 1), 1.0, 1e-12);
  /* M/M/2, lambda = mu = 1: C = 1/3, Wq = 1/3 */
  CU_ASSERT_DOUBLE_EQUAL(mkt_erlang_c_wait(1, 1, 2), 1.0 / 3, 1e-12);
  CU_ASSERT(isinf(mkt_erlang_c_wait(2, 1, 2)));
  /* large c stays finite and tiny at low load */
  double w = mkt_erlang_c_wait(100, 1, 200);
  CU_ASSERT(w >= 0 && w < 1e-6);
}

static void test_treasury(void) {
  mkt_treasury_rule r = {24, 0.05, 10, 1000000};
  /* target = 24 h * 1000 musd * 10 GPUs = 240000 */
  CU_ASSERT_EQUAL(mkt_treasury_next_rate(&r, 1000, 100000, 10), 950);
  CU_ASSERT_EQUAL(mkt_treasury_next_rate(&r, 1000, 300000, 10), 1000);
  CU_ASSERT_EQUAL(mkt_treasury_next_rate(&r, 1000, 500000, 10), 1050);
  CU_ASSERT_EQUAL(mkt_treasury_next_rate(&r, 10, 0, 10), 10);      /* clamp at rate_min */
  CU_ASSERT_EQUAL(mkt_treasury_next_rate(&r, 12, 1000000, 1), 13); /* integer rate still climbs */
  int64_t bal = 500, sf = 0;
  CU_ASSERT_EQUAL(mkt_treasury_pay(&bal, 300, &sf), 300);
  CU_ASSERT_EQUAL(mkt_treasury_pay(&bal, 300, &sf), 200);
  CU_ASSERT_EQUAL(bal, 0);
  CU_ASSERT_EQUAL(sf, 100);
}

static void test_score(void) {
  const mkt_score_ref *ref = &mkt_score_default_ref;
  mkt_score_in a = {ref->tflops, ref->net_mbps, 0, ref->disk_mbs};
  CU_ASSERT_DOUBLE_EQUAL(mkt_score(&a, ref), 100.0, 1e-9);
  mkt_score_in b = {2 * ref->tflops, 2 * ref->net_mbps, 0, 2 * ref->disk_mbs};
  CU_ASSERT_DOUBLE_EQUAL(mkt_score(&b, ref), 200.0, 1e-9);
  mkt_score_in c = a;
  c.loss = 0.5;
  CU_ASSERT(mkt_score(&c, ref) < 100.0);
  c.tflops = 2 * ref->tflops;
  CU_ASSERT(mkt_score(&c, ref) > mkt_score(&a, ref)); /* monotone in throughput */
  mkt_score_in z = {0, 100, 0, 100};
  CU_ASSERT_EQUAL(mkt_score(&z, ref), 0.0);
}

/* ---- loaders -------------------------------------------------------------------------------- */
static void test_gpus_csv(void) {
  char p[1024], err[512];
  path_of(p, sizeof p, "data/gpus.csv");
  mkt_gpu *g = NULL;
  size_t n = 0;
  CU_ASSERT_EQUAL_FATAL(mkt_gpus_load(p, &g, &n, err, sizeof err), MKT_OK);
  CU_ASSERT(n >= 15);
  const char *need[] = {"rtx3060", "rtx4090", "rtx5090", "a10", "l4", "a100", "h100", "h200"};
  for (int i = 0; i < 8; i++) CU_ASSERT(mkt_gpu_find(g, n, need[i]) >= 0);
  int h = mkt_gpu_find(g, n, "h200");
  CU_ASSERT(h >= 0 && g[h].mem_gb == 141 && g[h].datacenter);
  /* issue 46: every row has a typical draw and an interruptible price level at or below its
   * on-demand reference, and no on-demand price is under the card's energy at 0.36 USD/kWh (0.30 + 20%) */
  for (size_t i = 0; i < n; i++) {
    CU_ASSERT(g[i].power_w > 0 && g[i].power_w <= g[i].pl_max_w);
    CU_ASSERT(g[i].interruptible_usd_h > 0 && g[i].interruptible_usd_h <= g[i].ref_price_usd_h);
    CU_ASSERT(g[i].ref_price_usd_h > 0.36 * g[i].power_w / 1000.0);
  }
  free(g);
  /* an interruptible price above the on-demand one is an error at its line; a table without the
   * issue-46 columns loads with power_w = pl_max_w */
  const char *tmp2 = "test_market_new_cols.csv";
  FILE *f2 = fopen(tmp2, "w");
  fputs("name,class,fp16_tflops,fp32_tflops,mem_gb,bw_gbs,pl_min_w,pl_max_w,ref_price_usd_h,price_source,source,"
        "power_w,interruptible_usd_h,price_date\nx,consumer,1,1,1,1,1,300,0.5,a,b,250,0.2,d\n"
        "y,consumer,1,1,1,1,1,300,0.5,a,b,250,0.7,d\n",
        f2);
  fclose(f2);
  CU_ASSERT_EQUAL(mkt_gpus_load(tmp2, &g, &n, err, sizeof err), MKT_EFORMAT);
  CU_ASSERT(strstr(err, "test_market_new_cols.csv:3:") && strstr(err, "interruptible_usd_h"));
  f2 = fopen(tmp2, "w");
  fputs("name,class,fp16,fp32,mem,bw,plmin,plmax,price,ps,src\nx,consumer,1,1,1,1,1,300,0.5,a,b\n", f2);
  fclose(f2);
  CU_ASSERT_EQUAL_FATAL(mkt_gpus_load(tmp2, &g, &n, err, sizeof err), MKT_OK);
  CU_ASSERT(g[0].power_w == 300 && g[0].interruptible_usd_h == 0);
  free(g);
  remove(tmp2);
  /* a malformed file is reported with its line */
  const char *tmp = "test_market_bad_gpus.csv";
  FILE *f = fopen(tmp, "w");
  fputs("# c\nname,class,fp16,fp32,mem,bw,plmin,plmax,price,ps,src\nx,consumer,1,1,1,1,1,1,1,a,b\n"
        "y,consumer,1,abc,1,1,1,1,1,a,b\n",
        f);
  fclose(f);
  CU_ASSERT_EQUAL(mkt_gpus_load(tmp, &g, &n, err, sizeof err), MKT_EFORMAT);
  CU_ASSERT(strstr(err, "test_market_bad_gpus.csv:4:") != NULL);
  CU_ASSERT(strstr(err, "fp32_tflops") != NULL);
  remove(tmp);
  CU_ASSERT_EQUAL(mkt_gpus_load("no/such/file.csv", &g, &n, err, sizeof err), MKT_EIO);
  /* the same table saved by a spreadsheet or pandas with every field quoted ("" for a quote, a
   * comma inside quotes as text) loads to the same GPUs */
  mkt_gpu *g0 = NULL, *g1 = NULL;
  size_t n0 = 0, n1 = 0;
  CU_ASSERT_EQUAL_FATAL(mkt_gpus_load(p, &g0, &n0, err, sizeof err), MKT_OK);
  FILE *in = fopen(p, "r"), *out = fopen("test_market_quoted.csv", "w");
  CU_ASSERT_FATAL(in && out);
  char line[1024];
  while (fgets(line, sizeof line, in)) {
    if (line[0] == '#') continue;
    line[strcspn(line, "\r\n")] = 0;
    fputc('"', out);
    for (char *c = line; *c; c++) {
      if (*c == ',')
        fputs("\",\"", out);
      else if (*c == '"')
        fputs("\"\"", out);
      else
        fputc(*c, out);
    }
    fputs("\"\r\n", out);
  }
  fclose(in);
  fclose(out);
  int rc = mkt_gpus_load("test_market_quoted.csv", &g1, &n1, err, sizeof err);
  if (rc) fprintf(stderr, "%s\n", err);
  CU_ASSERT_EQUAL_FATAL(rc, MKT_OK);
  CU_ASSERT_EQUAL_FATAL(n1, n0);
  for (size_t i = 0; i < n0; i++) {
    CU_ASSERT_STRING_EQUAL(g1[i].name, g0[i].name);
    CU_ASSERT_EQUAL(g1[i].fp16_tflops, g0[i].fp16_tflops);
    CU_ASSERT_EQUAL(g1[i].ref_price_usd_h, g0[i].ref_price_usd_h);
    CU_ASSERT_EQUAL(g1[i].datacenter, g0[i].datacenter);
  }
  free(g0);
  free(g1);
  remove("test_market_quoted.csv");
  /* quoted text with a comma and an escaped quote, in the free-text source column */
  f = fopen(tmp, "w");
  fputs("name,class,fp16,fp32,mem,bw,plmin,plmax,price,ps,src\n"
        "\"x\",consumer,1,1,1,1,1,1,1,a,\"NVIDIA, \"\"spec\"\" page\"\n",
        f);
  fclose(f);
  CU_ASSERT_EQUAL(mkt_gpus_load(tmp, &g, &n, err, sizeof err), MKT_OK);
  CU_ASSERT(n == 1 && !strcmp(g[0].name, "x"));
  free(g);
  remove(tmp);
}

static void test_traces(void) {
  char p[1024], err[512];
  mkt_trace_job *j = NULL;
  size_t n = 0;
  path_of(p, sizeof p, "data/traces/alibaba2023_openb_pods_default.csv");
  CU_ASSERT_EQUAL_FATAL(mkt_trace_load_alibaba_pods(p, &j, &n, NULL, err, sizeof err), MKT_OK);
  CU_ASSERT(n > 1000 && n < 8152); /* GPU pods with a known run time only */
  for (size_t i = 1; i < n; i++) CU_ASSERT(j[i].submit_s >= j[i - 1].submit_s);
  for (size_t i = 0; i < n; i++) CU_ASSERT(j[i].gpus >= 1 && j[i].dur_s > 0 && j[i].cls <= 2);
  free(j);
  path_of(p, sizeof p, "data/traces/alibaba2026_genai_inference_requests.csv");
  CU_ASSERT_EQUAL_FATAL(mkt_trace_load_genai(p, &j, &n, NULL, err, sizeof err), MKT_OK);
  CU_ASSERT(n > 25000 && n < 26823); /* SUCCEED rows: 24060 + 2152 + 180 */
  CU_ASSERT_EQUAL(n, 24060 + 2152 + 180);
  CU_ASSERT_EQUAL(j[0].submit_s, 0);
  CU_ASSERT(j[n - 1].submit_s > 20 * 86400 && j[n - 1].submit_s < 25 * 86400); /* about 23 days */
  free(j);
}

/* Every trace row is replayed or counted by reason; a file with no usable row is an error that
 * says why; fractional and too-wide GPU requests are refused, never rounded or capped. */
static void test_trace_rows_counted(void) {
  char p[] = "/tmp/test_trace_XXXXXX", err[512];
  int fd = mkstemp(p);
  CU_ASSERT_FATAL(fd >= 0);
  close(fd);
  const char *hdr = "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,"
                    "scheduled_time\n";
  FILE *f = fopen(p, "w");
  fputs(hdr, f);
  fputs("a,1000,1,1,1000,,LS,Running,10,110,20\n"  /* used: 90 s on 1 GPU */
        "b,1000,1,2,500,,BE,Succeeded,0,50,5\n"    /* used: 45 s on 2 GPUs */
        "c,1000,1,0,0,,LS,Running,0,100,0\n"       /* cpu_only */
        "d,1000,1,1,1000,,LS,Pending,30,,\n"       /* pending */
        "e,1000,1,1,1000,,LS,Running,10,20,20\n"   /* no_run_time */
        "f,1000,1,1,1000,,LS,Running,50,100,40\n"  /* bad_times: scheduled before created */
        "g,1000,1,1,1000,,LS,Running,-5,100,0\n"   /* bad_times: negative */
        "h,1000,1,0.5,1000,,LS,Running,0,100,0\n"  /* fractional_gpus */
        "i,1000,1,2000,1000,,LS,Running,0,100,0\n" /* too_wide: more than MKT_TRACE_MAX_GPUS */
        "j,1000,1,512,1000,,LS,Running,5,100,5\n"  /* used: a wide job, 95 s on 512 GPUs */
        "\n",
        f);
  fclose(f);
  mkt_trace_job *j = NULL;
  size_t n = 0;
  mkt_trace_stats st;
  CU_ASSERT_EQUAL_FATAL(mkt_trace_load_alibaba_pods(p, &j, &n, &st, err, sizeof err), MKT_OK);
  CU_ASSERT_EQUAL(n, 3);
  CU_ASSERT_EQUAL(st.rows, 10);
  CU_ASSERT_EQUAL(st.used, 3);
  CU_ASSERT_EQUAL(st.dropped[MKT_TR_CPU_ONLY], 1);
  CU_ASSERT_EQUAL(st.dropped[MKT_TR_PENDING], 1);
  CU_ASSERT_EQUAL(st.dropped[MKT_TR_NO_RUN_TIME], 1);
  CU_ASSERT_EQUAL(st.dropped[MKT_TR_BAD_TIMES], 2);
  CU_ASSERT_EQUAL(st.dropped[MKT_TR_FRACTIONAL], 1);
  CU_ASSERT_EQUAL(st.dropped[MKT_TR_TOO_WIDE], 1);
  size_t sum = st.used;
  for (int r = 0; r < MKT_TR_NREASONS; r++) sum += st.dropped[r];
  CU_ASSERT_EQUAL(sum, st.rows); /* every row accounted for */
  CU_ASSERT_EQUAL(j[0].gpus, 2); /* sorted by submit time: b (0), j (5), a (10) */
  CU_ASSERT_DOUBLE_EQUAL(j[0].dur_s, 45, 0);
  CU_ASSERT_EQUAL(j[1].gpus, 512);
  CU_ASSERT_DOUBLE_EQUAL(j[1].dur_s, 95, 0);
  CU_ASSERT_DOUBLE_EQUAL(j[2].dur_s, 90, 0);
  free(j);
  /* no usable row: header only, empty, only dropped rows, a directory */
  const char *texts[] = {hdr, "", NULL};
  for (int k = 0; k < 3; k++) {
    f = fopen(p, "w");
    if (texts[k])
      fputs(texts[k], f);
    else
      fprintf(f, "%sd,1000,1,1,1000,,LS,Pending,30,,\nc,1000,1,0,0,,LS,Running,0,100,0\n", hdr);
    fclose(f);
    j = NULL;
    CU_ASSERT_EQUAL(mkt_trace_load_alibaba_pods(p, &j, &n, &st, err, sizeof err), MKT_EFORMAT);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "no usable row"));
    if (k == 2) CU_ASSERT_PTR_NOT_NULL(strstr(err, "1 cpu_only, 1 pending"));
    CU_ASSERT_PTR_NULL(j);
  }
  CU_ASSERT_EQUAL(mkt_trace_load_alibaba_pods("/tmp", &j, &n, &st, err, sizeof err), MKT_EFORMAT);
  CU_ASSERT_PTR_NOT_NULL(strstr(err, "/tmp: is a directory"));
  CU_ASSERT_EQUAL(mkt_trace_load_genai("/tmp", &j, &n, &st, err, sizeof err), MKT_EFORMAT);
  /* GenAI: failed requests and dates out of range are counted */
  f = fopen(p, "w");
  fputs("gmt_create,x,status,exec_time_seconds\n"
        "2025-01-01 00:00:10,x,SUCCEED,3\n"
        "2025-01-01 00:00:00,x,FAILED,3\n"
        "1900-01-01 00:00:00,x,SUCCEED,3\n"
        "2025-13-01 00:00:00,x,SUCCEED,3\n"
        "2025-01-01 00:01:00,x,SUCCEED,5\n",
        f);
  fclose(f);
  CU_ASSERT_EQUAL_FATAL(mkt_trace_load_genai(p, &j, &n, &st, err, sizeof err), MKT_OK);
  CU_ASSERT_EQUAL(n, 2);
  CU_ASSERT_EQUAL(st.rows, 5);
  CU_ASSERT_EQUAL(st.dropped[MKT_TR_NOT_SUCCEEDED], 1);
  CU_ASSERT_EQUAL(st.dropped[MKT_TR_BAD_TIMES], 2);
  CU_ASSERT_DOUBLE_EQUAL(j[0].submit_s, 0, 0);
  CU_ASSERT_DOUBLE_EQUAL(j[1].submit_s, 50, 0);
  free(j);
  unlink(p);
}

/* A kernels calibration file sets the cluster speed model; a bad value names file and line. */
static void test_calibration(void) {
  char p[] = "/tmp/test_market_calib_XXXXXX";
  int fd = mkstemp(p);
  CU_ASSERT_FATAL(fd >= 0);
  FILE *f = fdopen(fd, "w");
  fputs("key,value,unit,device,note\n"
        "stream_bw_gbs,3661,GB/s,H200,\"triad, 3 arrays\"\n"
        "even_split_efficiency,0.8,1,H200,measured\n"
        "dynamic_efficiency,0.9,1,H200,measured\n"
        "chunk_overhead_s,0.002,s,H200,measured\n",
        f);
  fclose(f);
  sched_config c;
  sched_config_default(&c);
  char err[512];
  CU_ASSERT_EQUAL(mkt_calibration_load(p, &c.cluster, NULL, err, sizeof err), 0);
  CU_ASSERT_DOUBLE_EQUAL(c.cluster.even_eff, 0.8, 0);
  CU_ASSERT_DOUBLE_EQUAL(c.cluster.dynamic_eff, 0.9, 0);
  CU_ASSERT_DOUBLE_EQUAL(c.cluster.weighted_eff, 1.0, 0); /* not in the file: default */
  CU_ASSERT_DOUBLE_EQUAL(c.cluster.chunk_overhead_s, 0.002, 0);
  f = fopen(p, "w");
  fputs("key,value,unit,device,note\nweighted_split_efficiency,1.7,1,x,y\n", f);
  fclose(f);
  sched_cluster_params before = c.cluster;
  CU_ASSERT_EQUAL(mkt_calibration_load(p, &c.cluster, NULL, err, sizeof err), MKT_EFORMAT);
  char want[600];
  snprintf(want, sizeof want, "%s:2: weighted_split_efficiency", p);
  CU_ASSERT_PTR_NOT_NULL(strstr(err, want));
  CU_ASSERT(memcmp(&before, &c.cluster, sizeof before) == 0); /* a bad file changes nothing */
  /* the device and its SGEMM rate: cuBLAS's when the file has it, else spotlab's */
  f = fopen(p, "w");
  fputs("key,value,unit,device,note\n"
        "gemm_gflops,30000,GFLOP/s,\"NVIDIA H200, SXM\",x\n"
        "gemm_cublas_gflops,50000,GFLOP/s,\"NVIDIA H200, SXM\",x\n",
        f);
  fclose(f);
  mkt_calib_info info;
  CU_ASSERT_EQUAL(mkt_calibration_load(p, &c.cluster, &info, err, sizeof err), 0);
  CU_ASSERT_STRING_EQUAL(info.device, "NVIDIA H200, SXM");
  CU_ASSERT_DOUBLE_EQUAL(info.sgemm_gflops, 50000, 0);
  f = fopen(p, "w");
  fputs("key,value,unit,device,note\ngemm_gflops,16.76,GFLOP/s,AMD EPYC (2 threads),x\n", f);
  fclose(f);
  CU_ASSERT_EQUAL(mkt_calibration_load(p, &c.cluster, &info, err, sizeof err), 0);
  CU_ASSERT_STRING_EQUAL(info.device, "AMD EPYC (2 threads)");
  CU_ASSERT_DOUBLE_EQUAL(info.sgemm_gflops, 16.76, 0);
  CU_ASSERT_EQUAL(info.ncoloc, 0);
  CU_ASSERT_EQUAL(c.cluster.ncoloc, 0);
  /* a lab calibration: its contention table becomes the cluster model's; its other keys are skipped */
  f = fopen(p, "w");
  fputs("# spotlab lab calibration\nkey,value,unit,device,note\n"
        "alone.gemm.0,80,chunks/s,lab workers (CPU),worker alone\n"
        "colocated_speed_factor_2,0.56,1,lab workers (CPU),x\n"
        "colocated_speed_factor_1,1,1,lab workers (CPU),x\n"
        "command_s.c1,0.3,s,lab workers (CPU),x\n",
        f);
  fclose(f);
  CU_ASSERT_EQUAL(mkt_calibration_load(p, &c.cluster, &info, err, sizeof err), 0);
  CU_ASSERT_EQUAL(info.ncoloc, 2);
  CU_ASSERT_EQUAL(c.cluster.ncoloc, 2);
  CU_ASSERT_DOUBLE_EQUAL(c.cluster.coloc[0], 1.0, 0);
  CU_ASSERT_DOUBLE_EQUAL(c.cluster.coloc[1], 0.56, 0);
  /* bad tables: FILE:LINE (or FILE: for a gap), and nothing changes */
  static const struct {
    const char *text, *want;
  } bad[] = {
      {"key,value,unit,device,note\ncolocated_speed_factor_0,1,1,x,y\n", ":2: key 'colocated_speed_factor_0'"},
      {"key,value,unit,device,note\ncolocated_speed_factor_2x,1,1,x,y\n", ":2: key 'colocated_speed_factor_2x'"},
      {"key,value,unit,device,note\ncolocated_speed_factor_1,1,1,x,y\ncolocated_speed_factor_1,1,1,x,y\n",
       ":3: colocated_speed_factor_1 given twice (first on line 2)"},
      {"key,value,unit,device,note\ncolocated_speed_factor_1,-1,1,x,y\n", ":2: colocated_speed_factor_1 = '-1'"},
      {"key,value,unit,device,note\ncolocated_speed_factor_3,0.5,1,x,y\n",
       ": colocated_speed_factor_3 is given but colocated_speed_factor_1 is not"},
  };
  for (size_t k = 0; k < sizeof bad / sizeof *bad; k++) {
    f = fopen(p, "w");
    fputs(bad[k].text, f);
    fclose(f);
    before = c.cluster;
    CU_ASSERT_EQUAL(mkt_calibration_load(p, &c.cluster, NULL, err, sizeof err), MKT_EFORMAT);
    snprintf(want, sizeof want, "%s%s", p, bad[k].want);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, want));
    if (!strstr(err, want)) printf("\n  got: %s\n  want: %s", err, want);
    CU_ASSERT(memcmp(&before, &c.cluster, sizeof before) == 0);
  }
  unlink(p);
}

/* Writes `in` as a spreadsheet or pandas might save it: '#' lines dropped, every field quoted
 * ("" for a quote), CRLF line ends, optionally a UTF-8 byte-order mark and a leading index column
 * (pandas' to_csv without index=False: an empty name in the header, 0, 1, ... in the rows). The
 * inputs hold no quoted fields, so splitting them at commas is exact. */
static int resave(const char *in, const char *out, int bom, int index_col) {
  FILE *fi = fopen(in, "r"), *fo = fopen(out, "wb");
  if (!fi || !fo) {
    if (fi) fclose(fi);
    if (fo) fclose(fo);
    return -1;
  }
  if (bom) fputs("\xEF\xBB\xBF", fo);
  char line[4096];
  long row = -1;
  while (fgets(line, sizeof line, fi)) {
    if (line[0] == '#') continue;
    line[strcspn(line, "\r\n")] = 0;
    if (index_col) {
      if (row < 0)
        fputs("\"\",", fo);
      else
        fprintf(fo, "%ld,", row);
    }
    row++;
    fputc('"', fo);
    for (char *c = line; *c; c++) {
      if (*c == ',')
        fputs("\",\"", fo);
      else if (*c == '"')
        fputs("\"\"", fo);
      else
        fputc(*c, fo);
    }
    fputs("\"\r\n", fo);
  }
  fclose(fi);
  return fclose(fo);
}

static int same_jobs(const mkt_trace_job *a, size_t na, const mkt_trace_job *b, size_t nb) {
  if (na != nb) return 0;
  for (size_t i = 0; i < na; i++)
    if (a[i].submit_s != b[i].submit_s || a[i].dur_s != b[i].dur_s || a[i].gpus != b[i].gpus || a[i].cls != b[i].cls)
      return 0;
  return 1;
}

/* The committed traces, GPU table, churn fits and calibration file saved as spreadsheets and
 * pandas save them (quoted, CRLF, byte-order mark, an index column) load to the same jobs, row
 * counts by reason, GPUs and parameters, bit for bit. */
static void test_loaders_resaved(void) {
  char p[1024], err[512];
  const char *tmp = "test_market_resaved.csv";
  const char *traces[] = {"data/traces/alibaba2023_openb_pods_default.csv",
                          "data/traces/alibaba2026_genai_inference_requests.csv"};
  for (int t = 0; t < 2; t++)
    for (int variant = 0; variant < 2; variant++) {
      path_of(p, sizeof p, traces[t]);
      CU_ASSERT_EQUAL_FATAL(resave(p, tmp, 1, variant), 0);
      mkt_trace_job *a = NULL, *b = NULL;
      size_t na = 0, nb = 0;
      mkt_trace_stats sa, sb;
      int (*load)(const char *, mkt_trace_job **, size_t *, mkt_trace_stats *, char *, size_t) =
          t == 0 ? mkt_trace_load_alibaba_pods : mkt_trace_load_genai;
      CU_ASSERT_EQUAL_FATAL(load(p, &a, &na, &sa, err, sizeof err), MKT_OK);
      int rc = load(tmp, &b, &nb, &sb, err, sizeof err);
      if (rc) fprintf(stderr, "%s\n", err);
      CU_ASSERT_EQUAL_FATAL(rc, MKT_OK);
      CU_ASSERT(same_jobs(a, na, b, nb));
      CU_ASSERT(memcmp(&sa, &sb, sizeof sa) == 0);
      CU_ASSERT(na > 6000);
      free(a);
      free(b);
    }
  /* the GPU table with pandas' index column: found by header names */
  path_of(p, sizeof p, "data/gpus.csv");
  mkt_gpu *g0 = NULL, *g1 = NULL;
  size_t n0 = 0, n1 = 0;
  CU_ASSERT_EQUAL_FATAL(mkt_gpus_load(p, &g0, &n0, err, sizeof err), MKT_OK);
  CU_ASSERT_EQUAL_FATAL(resave(p, tmp, 1, 1), 0);
  CU_ASSERT_EQUAL_FATAL(mkt_gpus_load(tmp, &g1, &n1, err, sizeof err), MKT_OK);
  CU_ASSERT(n0 == n1 && memcmp(g0, g1, n0 * sizeof *g0) == 0);
  free(g0);
  free(g1);
  /* columns in another order, found by name */
  FILE *f = fopen(tmp, "w");
  fputs("source,ref_price_usd_h,pl_max_w,pl_min_w,bw_gbs,mem_gb,fp32_tflops,fp16_tflops,class,name\n"
        "\"spec, page\",0.5,300,100,900,24,35,70,consumer,x\n",
        f);
  fclose(f);
  CU_ASSERT_EQUAL_FATAL(mkt_gpus_load(tmp, &g1, &n1, err, sizeof err), MKT_OK);
  CU_ASSERT(n1 == 1 && !strcmp(g1[0].name, "x") && g1[0].fp16_tflops == 70 && g1[0].fp32_tflops == 35 &&
            g1[0].ref_price_usd_h == 0.5 && g1[0].pl_min_w == 100 && !g1[0].datacenter);
  free(g1);
  /* the churn fits */
  path_of(p, sizeof p, "data/churn_fta_fits.csv");
  CU_ASSERT_EQUAL_FATAL(resave(p, tmp, 1, 1), 0);
  const char *names[] = {"microsoft99", "skype06", "overnet03"};
  for (int t = 0; t < 3; t++)
    for (int k = 0; k <= CHURN_GAMMA; k++) {
      churn_dist d0, d1;
      int r0 = churn_fits_load(p, names[t], "up", (churn_kind)k, &d0, err, sizeof err);
      int r1 = churn_fits_load(tmp, names[t], "up", (churn_kind)k, &d1, err, sizeof err);
      CU_ASSERT_EQUAL(r0, r1);
      if (r0 == CHURN_OK && r1 == CHURN_OK) CU_ASSERT(d0.p1 == d1.p1 && d0.p2 == d1.p2);
    }
  /* the calibration file (its note field has a quoted comma) */
  path_of(p, sizeof p, "data/calibration/cpu-amd-epyc.csv");
  f = fopen(p, "r");
  FILE *o = fopen(tmp, "wb");
  CU_ASSERT_FATAL(f && o);
  fputs("\xEF\xBB\xBF", o);
  char line[4096];
  while (fgets(line, sizeof line, f)) {
    line[strcspn(line, "\r\n")] = 0;
    fprintf(o, "%s\r\n", line);
  }
  fclose(f);
  fclose(o);
  sched_config c0, c1;
  sched_config_default(&c0);
  sched_config_default(&c1);
  mkt_calib_info i0, i1;
  CU_ASSERT_EQUAL(mkt_calibration_load(p, &c0.cluster, &i0, err, sizeof err), 0);
  CU_ASSERT_EQUAL(mkt_calibration_load(tmp, &c1.cluster, &i1, err, sizeof err), 0);
  CU_ASSERT(memcmp(&c0.cluster, &c1.cluster, sizeof c0.cluster) == 0);
  CU_ASSERT_STRING_EQUAL(i0.device, i1.device);
  CU_ASSERT_STRING_EQUAL(i0.device, "AMD EPYC (2 threads)");
  CU_ASSERT(i0.sgemm_gflops == i1.sgemm_gflops && i0.sgemm_gflops > 0);
  remove(tmp);
}

/* Malformed data files: each error names the file and the line the row starts on. */
static void test_loaders_bad_rows(void) {
  char err[512];
  const char *tmp = "test_market_badrows.csv";
  mkt_trace_job *j = NULL;
  size_t n = 0;
  mkt_trace_stats st;
  struct {
    const char *text, *want;
    int which; /* 0 pods, 1 GenAI, 2 GPUs, 3 calibration */
  } cases[] = {
      {"name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,"
       "scheduled_time\r\na,1000,1,1,1000,,LS,Running,10,110,20\r\nb,1,2\r\n",
       ":3: expected at least 11 fields, found 3", 0},
      {"name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,"
       "scheduled_time\n\"a\nb\",1000,1,1,1000,,LS,Running,10,110,20\nc,1000,1,x,1000,,LS,Running,10,110,20\n",
       ":4: num_gpu, gpu_milli or creation_time not a number", 0},
      {"name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,"
       "scheduled_time\na,1000,1,1,1000,\"V100,LS,Running,10,110,20\n",
       ":2: a quoted field is not closed", 0},
      {"gmt_create,x,status,exec_time_seconds\n2025-01-01 00:00:10,x,SUCCEED\n",
       ":2: expected at least 4 fields, found 3", 1},
      {"gmt_create,x,status,exec_time_seconds\n2025-01-01 00:00:10,x,SUCCEED,3\n2025-01-01,x,SUCCEED,3\n",
       ":3: bad gmt_create or exec_time_seconds", 1},
      {"\xEF\xBB\xBF# c\r\nname,class,fp16,fp32,mem,bw,plmin,plmax,price\r\nx,consumer,1,1,1,1,1,1\r\n",
       ":3: expected at least 9 fields, found 8", 2},
      {"name,class,fp16,fp32,mem,bw,plmin,plmax,price\nx,consumer,1,1,1,1,1,1,\"1\"x\n", ":2: malformed quoting", 2},
      {"key,value,unit,device,note\r\neven_split_efficiency,0.8x,1,x,y\r\n",
       ":2: even_split_efficiency = '0.8x' is not a number", 3},
  };
  for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
    FILE *f = fopen(tmp, "wb");
    fputs(cases[k].text, f);
    fclose(f);
    int rc;
    err[0] = 0;
    if (cases[k].which == 0)
      rc = mkt_trace_load_alibaba_pods(tmp, &j, &n, &st, err, sizeof err);
    else if (cases[k].which == 1)
      rc = mkt_trace_load_genai(tmp, &j, &n, &st, err, sizeof err);
    else if (cases[k].which == 2) {
      mkt_gpu *g = NULL;
      rc = mkt_gpus_load(tmp, &g, &n, err, sizeof err);
      if (!rc) free(g);
    } else {
      sched_config c;
      sched_config_default(&c);
      rc = mkt_calibration_load(tmp, &c.cluster, NULL, err, sizeof err);
    }
    char want[256];
    snprintf(want, sizeof want, "%s%s", tmp, cases[k].want);
    CU_ASSERT_EQUAL(rc, MKT_EFORMAT);
    if (!strstr(err, want)) {
      CU_FAIL("error message");
      fprintf(stderr, "case %zu: want '%s', got '%s'\n", k, want, err);
    }
  }
  /* a directory is refused by every loader, naming what it should have been */
  mkt_gpu *g = NULL;
  CU_ASSERT_EQUAL(mkt_gpus_load("/tmp", &g, &n, err, sizeof err), MKT_EFORMAT);
  CU_ASSERT_STRING_EQUAL(err, "/tmp: is a directory, not a GPU table");
  sched_config c;
  sched_config_default(&c);
  CU_ASSERT_EQUAL(mkt_calibration_load("/tmp", &c.cluster, NULL, err, sizeof err), MKT_EFORMAT);
  CU_ASSERT_STRING_EQUAL(err, "/tmp: is a directory, not a calibration file");
  churn_dist d;
  CU_ASSERT_EQUAL(churn_fits_load("/tmp", "skype06", "up", CHURN_EXP, &d, err, sizeof err), CHURN_EFORMAT);
  CU_ASSERT_STRING_EQUAL(err, "/tmp: is a directory, not a churn fits file");
  remove(tmp);
}

/* mkt_lround is llround: on random values of every magnitude, halves and their neighbours. */
static void test_lround(void) {
  uint64_t x = 12345;
  for (int i = 0; i < 200000; i++) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    double mag = ldexp(1.0, (int)(x % 62)) * ((double)(x >> 11) * 0x1.0p-53);
    double v = (x & 1) ? -mag : mag;
    if (i % 4 == 1) v = (double)(int64_t)(x % 100000) + 0.5 * ((x & 2) ? 1 : -1); /* exact halves */
    if (i % 4 == 2) v = nextafter(floor(mag) + 0.5, (x & 2) ? INFINITY : 0);      /* beside them */
    if (mkt_lround(v) != llround(v)) {
      CU_FAIL("mkt_lround differs from llround");
      fprintf(stderr, "v = %.17g: %lld vs %lld\n", v, (long long)mkt_lround(v), llround(v));
      return;
    }
  }
  CU_ASSERT_EQUAL(mkt_lround(0.49999999999999994), 0);
  CU_ASSERT_EQUAL(mkt_lround(-2.5), -3);
  CU_ASSERT_EQUAL(mkt_lround(2.5), 3);
}

/* Device names map to catalog models by whole words, the longest name winning. */
static void test_gpu_match(void) {
  mkt_gpu g[6] = {{.name = "rtx4090"}, {.name = "a10"}, {.name = "a100"},
                  {.name = "t4"},      {.name = "l4"},  {.name = "l40s"}};
  CU_ASSERT_EQUAL(mkt_gpu_match(g, 6, "NVIDIA GeForce RTX 4090"), 0);
  CU_ASSERT_EQUAL(mkt_gpu_match(g, 6, "NVIDIA A100-SXM4-40GB"), 2);
  CU_ASSERT_EQUAL(mkt_gpu_match(g, 6, "NVIDIA A10G"), -1); /* "a10g" is not "a10" */
  CU_ASSERT_EQUAL(mkt_gpu_match(g, 6, "NVIDIA A10"), 1);
  CU_ASSERT_EQUAL(mkt_gpu_match(g, 6, "Tesla T4"), 3);
  CU_ASSERT_EQUAL(mkt_gpu_match(g, 6, "NVIDIA L40S"), 5);
  CU_ASSERT_EQUAL(mkt_gpu_match(g, 6, "AMD EPYC (2 threads)"), -1);
  CU_ASSERT_EQUAL(mkt_gpu_match(g, 6, ""), -1);
  CU_ASSERT_EQUAL(mkt_gpu_match(g, 6, NULL), -1);
}

/* Known answer from market theory: with n buyers of values U[0, 1] and n sellers of costs
 * U[0.2, 1.2], supply n (p - 0.2) meets demand n (1 - p) at the competitive equilibrium
 * p* = 0.6, q* = 0.4 n (Walras; e.g. Mas-Colell, Whinston & Green 1995, ch. 10). The uniform-price
 * double auction converges to it as n grows (Satterthwaite & Williams 1989: its inefficiency is
 * O(1/n)): over random markets its mean price and quantity per trader lie within the Monte Carlo
 * interval of p* and q* / n, widened by 1/n for the finite-market bias. Every instance trades
 * exactly the efficient quantity (the largest k with k-th bid >= k-th ask). */
static int cmp_desc(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return x < y ? 1 : x > y ? -1 : 0;
}
static int cmp_asc(const void *a, const void *b) { return -cmp_desc(a, b); }
static void test_double_auction_equilibrium(void) {
  enum { N = 2000, M = 200 };
  gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
  gsl_rng_set(r, 11);
  int64_t *bids = malloc(N * sizeof *bids), *asks = malloc(N * sizeof *asks);
  double sp = 0, sp2 = 0, sq = 0, sq2 = 0;
  for (int m = 0; m < M; m++) {
    for (int i = 0; i < N; i++) {
      bids[i] = (int64_t)(gsl_rng_uniform(r) * 1e6);
      asks[i] = (int64_t)((0.2 + gsl_rng_uniform(r)) * 1e6);
    }
    qsort(bids, N, sizeof *bids, cmp_desc);
    qsort(asks, N, sizeof *asks, cmp_asc);
    int64_t p = -1;
    long k = (long)mkt_double_auction(bids, N, asks, N, &p);
    long eff = 0;
    while (eff < N && bids[eff] >= asks[eff]) eff++;
    CU_ASSERT_EQUAL(k, eff);
    CU_ASSERT(k > 0 && p >= asks[k - 1] && p <= bids[k - 1]); /* individually rational */
    double x = p / 1e6, q = (double)k / N;
    sp += x, sp2 += x * x, sq += q, sq2 += q * q;
  }
  double mp = sp / M, mq = sq / M;
  double sep = sqrt((sp2 / M - mp * mp) / (M - 1)), seq = sqrt((sq2 / M - mq * mq) / (M - 1));
  fprintf(stderr, "\n  double auction, %d traders a side: price %.5f +- %.5f (p* 0.6), quantity/n %.5f +- %.5f (0.4)\n",
          N, mp, 4 * sep, mq, 4 * seq);
  CU_ASSERT(fabs(mp - 0.6) <= 4 * sep + 1.0 / N);
  CU_ASSERT(fabs(mq - 0.4) <= 4 * seq + 1.0 / N);
  free(bids);
  free(asks);
  gsl_rng_free(r);
}

/* ---- reactions (mkt_respond.h) on random cases ---------------------------------------------- */
static void test_demand_curve(void) {
  gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
  gsl_rng_set(r, 5);
  for (int i = 0; i < 2000; i++) {
    double p = 0.01 + gsl_rng_uniform(r) * 2, ref = 0.01 + gsl_rng_uniform(r) * 2, e = gsl_rng_uniform(r) * 3;
    double f = mkt_demand_factor(p, ref, e);
    double want = pow(p / ref, -e);
    if (want >= MKT_DEMAND_MIN && want <= MKT_DEMAND_MAX) {
      CU_ASSERT(fabs(log(f) + e * log(p / ref)) < 1e-9); /* constant elasticity: d ln q / d ln p = -e */
    } else {
      CU_ASSERT(f == MKT_DEMAND_MIN || f == MKT_DEMAND_MAX);
    }
    /* dearer, never more demand */
    CU_ASSERT(mkt_demand_factor(p * 1.1, ref, e) <= f);
  }
  CU_ASSERT_EQUAL(mkt_demand_factor(0.5, 0.5, 1.2), 1.0);
  CU_ASSERT_EQUAL(mkt_demand_factor(0.9, 0.5, 0.0), 1.0);
  CU_ASSERT_EQUAL(mkt_demand_factor(0.0, 0.5, 1.0), 1.0);
  CU_ASSERT_EQUAL(mkt_demand_factor(1e9, 1e-6, 20), MKT_DEMAND_MIN);
  gsl_rng_free(r);
}

static void test_logit_choice(void) {
  gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
  gsl_rng_set(r, 6);
  for (int it = 0; it < 5000; it++) {
    mkt_option o[3];
    double prob[3], prob2[3];
    double v = 0.05 + gsl_rng_uniform(r), run = 60 + gsl_rng_uniform(r) * 36000;
    for (int i = 0; i < 3; i++)
      o[i] = (mkt_option){gsl_rng_uniform(r) < 0.15 ? 0 : gsl_rng_uniform(r), gsl_rng_uniform(r) * 1.2,
                          gsl_rng_uniform(r) * 7200, gsl_rng_uniform(r) * 3};
    mkt_choice_w w = {gsl_rng_uniform(r) * 5, gsl_rng_uniform(r) * 3, gsl_rng_uniform(r)};
    unsigned k = mkt_choice_probs(o, 3, &w, v, run, prob);
    unsigned afford = 0;
    double sum = 0;
    for (int i = 0; i < 3; i++) {
      int ok = o[i].share > 0 && o[i].price <= v;
      afford += ok;
      CU_ASSERT(prob[i] >= 0 && prob[i] <= 1);
      if (!ok) CU_ASSERT_EQUAL(prob[i], 0); /* never a pool it cannot afford, or one it may not use */
      sum += prob[i];
    }
    CU_ASSERT_EQUAL(k, afford);
    if (k) {
      CU_ASSERT(fabs(sum - 1) < 1e-12);
    } else {
      CU_ASSERT_EQUAL(sum, 0); /* balks */
    }
    /* independence of irrelevant alternatives: removing option 2 leaves the ratio of 0 and 1 */
    if (prob[0] > 0 && prob[1] > 0) {
      mkt_option o2[3] = {o[0], o[1], o[2]};
      o2[2].share = 0;
      mkt_choice_probs(o2, 3, &w, v, run, prob2);
      CU_ASSERT(fabs(prob2[0] / prob2[1] - prob[0] / prob[1]) < 1e-9 * (prob[0] / prob[1]));
      /* the logit odds: ln(P0/P1) = ln(s0/s1) - cost (p0 - p1)/v - wait (w0 - w1)/T - risk (i0 - i1) */
      double lo = log(o[0].share / o[1].share) - w.cost * (o[0].price - o[1].price) / v -
                  w.wait * (o[0].wait_s - o[1].wait_s) / run - w.risk * (o[0].interruptions - o[1].interruptions);
      CU_ASSERT(fabs(log(prob[0] / prob[1]) - lo) < 1e-9);
      /* a dearer option 0 is chosen less */
      o2[2] = o[2];
      o2[0].price = o[0].price + 0.01;
      mkt_choice_probs(o2, 3, &w, v, run, prob2);
      CU_ASSERT(prob2[0] <= prob[0] + 1e-15);
    }
    /* zero weights: the pool shares among the affordable options */
    mkt_choice_w z = {0, 0, 0};
    if (mkt_choice_probs(o, 3, &z, v, run, prob)) {
      double ss = 0;
      for (int i = 0; i < 3; i++) ss += o[i].share > 0 && o[i].price <= v ? o[i].share : 0;
      for (int i = 0; i < 3; i++)
        if (prob[i] > 0) CU_ASSERT(fabs(prob[i] - o[i].share / ss) < 1e-12);
    }
    /* picking: u falls on the option whose cumulative interval holds it */
    double u = gsl_rng_uniform(r);
    int pk = mkt_choice_pick(prob, 3, u);
    if (k) {
      double lo2 = 0;
      for (int i = 0; i < pk; i++) lo2 += prob[i];
      CU_ASSERT(pk >= 0 && prob[pk] > 0 && u >= lo2 - 1e-12 && u < lo2 + prob[pk] + 1e-12);
    } else {
      CU_ASSERT_EQUAL(pk, -1);
    }
  }
  gsl_rng_free(r);
}

static void test_announce_and_surplus(void) {
  gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
  gsl_rng_set(r, 7);
  for (int i = 0; i < 2000; i++) {
    double x = gsl_rng_uniform(r) * 10, mx = gsl_rng_uniform(r), sc = 0.1 + gsl_rng_uniform(r) * 5;
    double p = mkt_announce_prob(x, mx, sc);
    CU_ASSERT(p >= 0 && p <= mx);
    CU_ASSERT(mkt_announce_prob(x + 0.5, mx, sc) >= p); /* more at stake, more notice */
    CU_ASSERT(fabs(p - mx * (1 - exp(-x / sc))) < 1e-12);
    double inc = gsl_rng_uniform(r), u = gsl_rng_uniform(r), cost = gsl_rng_uniform(r), own = gsl_rng_uniform(r);
    CU_ASSERT(fabs(mkt_surplus_h(inc, u, cost, own) - (inc - u * cost - own)) < 1e-15);
  }
  CU_ASSERT_EQUAL(mkt_announce_prob(0, 0.9, 2), 0);
  CU_ASSERT_EQUAL(mkt_announce_prob(5, 0.9, 0), 0);
  CU_ASSERT(fabs(mkt_ewma(1.0, 3.0, 4.0) - 1.5) < 1e-15);
  CU_ASSERT_EQUAL(mkt_ewma(1.0, 3.0, 1.0), 3.0);
  gsl_rng_free(r);
}

static CU_TestInfo econ_tests[] = {
    {"ledger conserves money", test_ledger_conserves},
    {"fee and cost arithmetic", test_fee_and_cost},
    {"knapsack equals brute force", test_knapsack_exact},
    {"uniform-price double auction", test_double_auction},
    {"double auction reaches the competitive equilibrium (random markets)", test_double_auction_equilibrium},
    {"demand curve has constant elasticity (random cases)", test_demand_curve},
    {"logit pool choice: shares, odds, IIA, balking (random cases)", test_logit_choice},
    {"announced departures and provider surplus (random cases)", test_announce_and_surplus},
    {"churn samples match moments", test_churn_moments},
    {"Erlang C known values", test_erlang_c},
    {"treasury rate rule", test_treasury},
    {"compute score", test_score},
    CU_TEST_INFO_NULL};
static CU_TestInfo data_tests[] = {
    {"gpus.csv loads and errors name the line", test_gpus_csv},
    {"Alibaba traces load", test_traces},
    {"kernels calibration file loads and errors name the line", test_calibration},
    {"device names map to catalog GPUs by whole words", test_gpu_match},
    {"trace rows replayed or counted by reason; no usable row is an error", test_trace_rows_counted},
    {"data files saved quoted, CRLF, with a BOM or an index column load the same", test_loaders_resaved},
    {"malformed data files: errors at the row's line", test_loaders_bad_rows},
    {"mkt_lround equals llround", test_lround},
    CU_TEST_INFO_NULL};

CU_SuiteInfo spotlab_suites[] = {{"market economics", NULL, NULL, NULL, NULL, econ_tests},
                                 {"market data", NULL, NULL, NULL, NULL, data_tests},
                                 CU_SUITE_INFO_NULL};
