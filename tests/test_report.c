/* test_report.c - reports, comparisons and sweeps (analysis/report): known-answer statistics, the
 * report of a small hand-made run produces every file it promises, the no-gnuplot path, damaged
 * and incomplete files give the intended errors, sweep files round-trip, and the commands' exit
 * statuses. The results files are written through the engine's own writer (sim_results_write)
 * from replications built by hand, so every number in them is known. */
#include "analysis/report/rpt.h"
#include "models/market/mkt_names.h"
#include "analysis/report/rpt_internal.h"
#include "sim/results_io.h"
#include "tests/csv_records.h"
#include "tests/testutil.h"

#include <CUnit/CUnit.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <hdf5.h>
#include <math.h>
#include <stddef.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- a hand-made market-like run ---------------------------------------------------------------- */

typedef struct t_prov {
  uint64_t id;
  char persona[16], pool[16], region[16], gpu_class[16];
  double income_usd, available_h, rented_h;
} t_prov;
typedef struct t_job {
  uint64_t id;
  char cls[16], region[16], outcome[16], policy[16];
  int32_t interruptions;
  double submit_s, start_s, end_s, wait_s, cost_usd;
} t_job;
typedef struct t_avail {
  uint64_t provider;
  double start_s, end_s;
  char state[16];
} t_avail;

static const sim_field t_prov_f[] = {
    {"id", SIM_F_U64, offsetof(t_prov, id), "1"},
    {"persona", SIM_F_STR16, offsetof(t_prov, persona), ""},
    {"pool", SIM_F_STR16, offsetof(t_prov, pool), ""},
    {"region", SIM_F_STR16, offsetof(t_prov, region), ""},
    {"gpu_class", SIM_F_STR16, offsetof(t_prov, gpu_class), ""},
    {"income_usd", SIM_F_F64, offsetof(t_prov, income_usd), "USD"},
    {"available_h", SIM_F_F64, offsetof(t_prov, available_h), "h"},
    {"rented_h", SIM_F_F64, offsetof(t_prov, rented_h), "h"},
};
static const sim_field t_job_f[] = {
    {"id", SIM_F_U64, offsetof(t_job, id), "1"},
    {"class", SIM_F_STR16, offsetof(t_job, cls), ""},
    {"region", SIM_F_STR16, offsetof(t_job, region), ""},
    {"outcome", SIM_F_STR16, offsetof(t_job, outcome), ""},
    {"policy", SIM_F_STR16, offsetof(t_job, policy), ""},
    {"interruptions", SIM_F_I32, offsetof(t_job, interruptions), "1"},
    {"submit_s", SIM_F_F64, offsetof(t_job, submit_s), "s"},
    {"start_s", SIM_F_F64, offsetof(t_job, start_s), "s"},
    {"end_s", SIM_F_F64, offsetof(t_job, end_s), "s"},
    {"wait_s", SIM_F_F64, offsetof(t_job, wait_s), "s"},
    {"cost_usd", SIM_F_F64, offsetof(t_job, cost_usd), "USD"},
};
static const sim_field t_avail_f[] = {
    {"provider", SIM_F_U64, offsetof(t_avail, provider), "1"},
    {"start_s", SIM_F_F64, offsetof(t_avail, start_s), "s"},
    {"end_s", SIM_F_F64, offsetof(t_avail, end_s), "s"},
    {"state", SIM_F_STR16, offsetof(t_avail, state), ""},
};
static const sim_table_def t_tables[] = {
    {MKT_TABLE_PROVIDERS, sizeof(t_prov), t_prov_f, 8, "providers"},
    {MKT_TABLE_JOBS, sizeof(t_job), t_job_f, 11, "jobs"},
    {MKT_TABLE_AVAILABILITY, sizeof(t_avail), t_avail_f, 4, "availability"},
};

#define T_END (3 * 86400.0)
#define T_BIN 3600.0
#define T_NBINS 72
#define T_NPROV 60
#define T_NJOBS 300
#define T_NAVAIL_PROV 12
static const char *const t_regions[] = {"eu-west", "us-east", "asia-se"};
static const char *const t_classes[] = {"rtx4090", "a100", "h100"};
static const char *const t_personas[] = {"jade", "katie", "lars", "mina"};
static const char *const t_pools[] = {"fixed", "bidding", "flexible"};
static const char *const t_jclasses[] = {"training", "inference", "batch"};
static const char *const t_policies[] = {"none", "checkpoint", "replicate"};
static const sim_series_def t_series[] = {
    {MKT_SERIES_RENTED, "GPU*ms", T_BIN, 3, t_regions, "rented"},
    {MKT_SERIES_AVAIL, "GPU*ms", T_BIN, 3, t_regions, "available"},
    {MKT_SERIES_PRICE_SUM, "USD*1e-6/GPU-h", T_BIN, 3, t_classes, "price sum"},
    {MKT_SERIES_PRICE_N, "1", T_BIN, 3, t_classes, "price count"},
};

/* Metric 0 is "revenue"; its values per replication are given, so its interval is known. */
#define T_NM 12
static const sim_metric_def t_metrics[T_NM] = {
    {"revenue", "USD", ""},
    {"utilization", "1", ""},
    {"income_per_available_hour.persona.jade", "USD/h", ""},
    {"income_per_available_hour.persona.katie", "USD/h", ""},
    {"income_per_available_hour.persona.lars", "USD/h", ""},
    {"income_per_available_hour.persona.mina", "USD/h", ""},
    {"income_usd.pool.fixed", "USD", ""},
    {"income_usd.pool.bidding", "USD", ""},
    {"goodput.policy.none", "1", ""},
    {"goodput.policy.checkpoint", "1", ""},
    {"goodput.policy.replicate", "1", ""},
    {"wait_p50.class.training", "s", ""},
};

/* 1: each job class has its one policy (scenarios/default.cfg's layout, no policies compared). */
static int t_policy_by_class;

/* One replication's outputs, drawn from its own stream (deterministic for a seed). */
static void t_fill_rep(sim_results *r, uint64_t seed) {
  gsl_rng *g = gsl_rng_alloc(gsl_rng_mt19937);
  gsl_rng_set(g, (unsigned long)seed);
  memset(r, 0, sizeof *r);
  r->seed = seed;
  r->ranks = 1;
  r->events = 1000;
  r->windows = 1;
  r->series = calloc(4, sizeof *r->series);
  r->nbins = calloc(4, sizeof *r->nbins);
  r->tables = calloc(3, sizeof *r->tables);
  r->nrecords = calloc(3, sizeof *r->nrecords);
  for (int s = 0; s < 4; s++) {
    r->nbins[s] = T_NBINS;
    r->series[s] = calloc(T_NBINS * 3, sizeof(int64_t));
  }
  for (int b = 0; b < T_NBINS; b++)
    for (int c = 0; c < 3; c++) {
      double hour = fmod(b + 8.0 * c, 24.0);
      double avail = (30 + 10 * c) * (0.8 + 0.2 * sin(2 * M_PI * hour / 24)) * 3.6e6;
      double u = 0.45 + 0.3 * sin(2 * M_PI * (hour - 6) / 24) + gsl_ran_gaussian(g, 0.04);
      u = u < 0 ? 0 : u > 1 ? 1 : u;
      r->series[1][b * 3 + c] = (int64_t)avail;
      r->series[0][b * 3 + c] = (int64_t)(avail * u);
      int n = (int)gsl_ran_poisson(g, 4);
      r->series[3][b * 3 + c] = n;
      double base = c == 0 ? 0.35e6 : c == 1 ? 1.1e6 : 2.4e6;
      for (int k = 0; k < n; k++)
        r->series[2][b * 3 + c] += (int64_t)(base * (1 + 0.25 * u) * gsl_ran_lognormal(g, 0, 0.1));
    }
  t_prov *p = calloc(T_NPROV, sizeof *p);
  for (int i = 0; i < T_NPROV; i++) {
    p[i].id = (uint64_t)i;
    snprintf(p[i].persona, 16, "%s", t_personas[i % 4]);
    snprintf(p[i].pool, 16, "%s", t_pools[(i / 4) % 3]);
    snprintf(p[i].region, 16, "%s", t_regions[i % 3]);
    snprintf(p[i].gpu_class, 16, "%s", t_classes[(i / 3) % 3]);
    p[i].available_h = 72 * gsl_ran_flat(g, 0.3, 1.0);
    p[i].rented_h = p[i].available_h * gsl_ran_flat(g, 0.1, 0.9);
    p[i].income_usd = p[i].rented_h * (0.3 + 0.2 * (i % 4)) * gsl_ran_lognormal(g, 0, 0.3);
  }
  r->tables[0] = (unsigned char *)p;
  r->nrecords[0] = T_NPROV;
  t_job *j = calloc(T_NJOBS, sizeof *j);
  for (int i = 0; i < T_NJOBS; i++) {
    int k = i % 3;
    j[i].id = (uint64_t)i;
    snprintf(j[i].cls, 16, "%s", t_jclasses[k]);
    snprintf(j[i].region, 16, "%s", t_regions[(i / 3) % 3]);
    snprintf(j[i].policy, 16, "%s", t_policies[t_policy_by_class ? k : (i / 9) % 3]);
    j[i].submit_s = gsl_ran_flat(g, 0, T_END * 0.8);
    double u = gsl_rng_uniform(g);
    j[i].wait_s = u < 0.08 ? NAN : gsl_ran_exponential(g, k == 0 ? 3600 : k == 1 ? 60 : 900);
    j[i].start_s = j[i].submit_s + j[i].wait_s;
    double dur = gsl_ran_gamma(g, 2, k == 0 ? 4 * 3600 : k == 1 ? 600 : 1800);
    int done = isfinite(j[i].wait_s) && j[i].start_s + dur < T_END;
    j[i].end_s = done ? j[i].start_s + dur : NAN;
    snprintf(j[i].outcome, 16, "%s", done ? "done" : isfinite(j[i].wait_s) ? "running" : "abandoned");
    j[i].cost_usd = done ? dur / 3600 * 0.8 : 0;
  }
  r->tables[1] = (unsigned char *)j;
  r->nrecords[1] = T_NJOBS;
  static const char *const states[] = {"idle", "rented", "owner", "down"};
  size_t na = 0, cap = 64;
  t_avail *a = calloc(cap, sizeof *a);
  for (int i = 0; i < T_NAVAIL_PROV; i++)
    for (double t = 0; t < T_END;) {
      double len = gsl_ran_exponential(g, 6 * 3600);
      if (na == cap) a = realloc(a, (cap *= 2) * sizeof *a);
      a[na].provider = (uint64_t)i;
      a[na].start_s = t;
      a[na].end_s = t + len < T_END ? t + len : T_END;
      snprintf(a[na].state, 16, "%s", states[gsl_rng_uniform_int(g, 4)]);
      na++;
      t += len;
    }
  r->tables[2] = (unsigned char *)a;
  r->nrecords[2] = na;
  gsl_rng_free(g);
}

/* Writes a results file of `reps` replications; revenue[r] is metric 0 of replication r; the
 * other metrics are drawn from the replication's seed. Returns sim_results_write's code. */
static int t_write(const char *path, int reps, uint64_t base_seed, const double *revenue) {
  sim_model m = {"fake_market", NULL, 0, NULL, 0, 0, 1.0, T_END, NULL, t_series, 4, t_tables, 3};
  sim_results *r = calloc((size_t)reps, sizeof *r);
  double *v = calloc((size_t)reps * T_NM, sizeof *v);
  for (int i = 0; i < reps; i++) {
    t_fill_rep(&r[i], sim_rep_seed(base_seed, (unsigned)i));
    gsl_rng *g = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(g, (unsigned long)r[i].seed);
    v[i * T_NM + 0] = revenue[i];
    for (int k = 1; k < T_NM; k++)
      v[i * T_NM + k] = (k >= 8 && k <= 10 ? 0.6 + 0.1 * (k - 8) : 1.0 * k) + gsl_ran_gaussian(g, 0.05);
    gsl_rng_free(g);
  }
  sim_run_meta meta = {"fake_market", "fake.cfg", "model = \"fake_market\";", "eff", base_seed, reps, 1, 1, 0.1, T_END};
  char err[256];
  int rc = sim_results_write(path, &meta, &m, r, t_metrics, T_NM, v, err, sizeof err);
  for (int i = 0; i < reps; i++) {
    for (int s = 0; s < 4; s++) free(r[i].series[s]);
    for (int t = 0; t < 3; t++) free(r[i].tables[t]);
    free(r[i].series);
    free(r[i].nbins);
    free(r[i].tables);
    free(r[i].nrecords);
  }
  free(r);
  free(v);
  return rc;
}

/* Known data: x = 2, 4, 4, 4, 5, 5, 7, 9 has mean 5 and sample variance 32/7; t_{0.975,7} =
 * 2.364624252 (t table), so the half width is 2.364624252 * sqrt(32/7) / sqrt(8) = 1.787487919. */
static const double t_rev[8] = {2, 4, 4, 4, 5, 5, 7, 9};
#define T_REV_LO (5.0 - 1.787487919)
#define T_REV_HI (5.0 + 1.787487919)

static int t_exists(const char *dir, const char *name) {
  char p[1024];
  struct stat st;
  snprintf(p, sizeof p, "%s/%s", dir, name);
  return stat(p, &st) == 0 && st.st_size > 0;
}

static char *t_slurp(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *b = calloc(1, (size_t)n + 1);
  if (b && fread(b, 1, (size_t)n, f) != (size_t)n) b[0] = 0;
  fclose(f);
  return b;
}

/* ---- statistics -------------------------------------------------------------------------------- */

static void test_ci_known(void) {
  rpt_ci c;
  rpt_ci_t(t_rev, 8, 1, &c);
  CU_ASSERT_DOUBLE_EQUAL(c.mean, 5.0, 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(c.sd, sqrt(32.0 / 7.0), 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(c.lo, T_REV_LO, 1e-8);
  CU_ASSERT_DOUBLE_EQUAL(c.hi, T_REV_HI, 1e-8);
  CU_ASSERT_EQUAL(c.n, 8);
  /* stride: column 1 of a [3][2] matrix */
  double m[6] = {0, 1, 0, 2, 0, 3};
  rpt_ci_t(m + 1, 3, 2, &c);
  CU_ASSERT_DOUBLE_EQUAL(c.mean, 2.0, 1e-12);
  rpt_ci_t(t_rev, 1, 1, &c);
  CU_ASSERT(isnan(c.lo) && isnan(c.hi));
  CU_ASSERT_DOUBLE_EQUAL(c.mean, 2.0, 0);
}

/* Paired: before 1,2,3,4 and after 2,4,5,5 differ by d = 1,2,2,1: mean 1.5, sd sqrt(1/3),
 * t_{0.975,3} = 3.182446305, half width 3.182446305 * sqrt(1/3) / 2 = 0.918693115. */
static void test_ci_paired_known(void) {
  double b[4] = {1, 2, 3, 4}, a[4] = {2, 4, 5, 5};
  rpt_ci c;
  rpt_ci_paired(b, a, 4, 1, &c);
  CU_ASSERT_DOUBLE_EQUAL(c.mean, 1.5, 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(c.lo, 1.5 - 0.918693115, 1e-8);
  CU_ASSERT_DOUBLE_EQUAL(c.hi, 1.5 + 0.918693115, 1e-8);
}

static void test_metric_split(void) {
  char q[64], d[64], v[64];
  rpt_metric_split("income_per_available_hour.persona.jade", q, d, v);
  CU_ASSERT_STRING_EQUAL(q, "income_per_available_hour");
  CU_ASSERT_STRING_EQUAL(d, "persona");
  CU_ASSERT_STRING_EQUAL(v, "jade");
  rpt_metric_split("revenue", q, d, v);
  CU_ASSERT_STRING_EQUAL(q, "revenue");
  CU_ASSERT_STRING_EQUAL(d, "");
  rpt_metric_split("price.gpu.rtx.4090", q, d, v); /* the value keeps its own dots */
  CU_ASSERT_STRING_EQUAL(v, "rtx.4090");
}

/* ---- the report ---------------------------------------------------------------------------------- */

static const char *const t_figs[] = {"income",       "utilization", "price",       "jobs",
                                     "availability", "policies",    "policy_jobs", NULL};

static void test_report_every_file(void) {
  CU_ASSERT_EQUAL_FATAL(t_write("rpt_full.h5", 8, 77, t_rev), 0);
  if (!rpt_gnuplot_available(NULL)) {
    fprintf(stderr, "\n  (gnuplot is not installed: the figures of this test cannot be checked)\n");
    return;
  }
  FILE *log = fopen("rpt_full.log", "w");
  rpt_options opt = {"rpt_full_report", NULL, 0, log, 0};
  rpt_outcome o;
  char err[RPT_ERRLEN];
  int rc = rpt_report("rpt_full.h5", &opt, &o, err, sizeof err);
  fclose(log);
  CU_ASSERT_EQUAL_FATAL(rc, 0);
  CU_ASSERT_EQUAL(o.nskipped, 0);
  for (size_t i = 0; i < o.nskipped; i++) fprintf(stderr, "\n  skipped: %s", o.skipped[i]);
  CU_ASSERT_EQUAL(o.figures_drawn, 7);
  CU_ASSERT(t_exists("rpt_full_report", "summary.md"));
  CU_ASSERT(t_exists("rpt_full_report", "summary.csv"));
  CU_ASSERT(t_exists("rpt_full_report", "index.html"));
  char *html = t_slurp("rpt_full_report/index.html");
  CU_ASSERT_PTR_NOT_NULL_FATAL(html);
  for (size_t i = 0; t_figs[i]; i++) {
    char png[64], svg[64];
    snprintf(png, sizeof png, "%s.png", t_figs[i]);
    snprintf(svg, sizeof svg, "%s.svg", t_figs[i]);
    CU_ASSERT(t_exists("rpt_full_report", png));
    CU_ASSERT(t_exists("rpt_full_report", svg));
    CU_ASSERT(strstr(html, png) != NULL); /* the page shows every figure */
  }
  /* ... and the table, with its sections */
  CU_ASSERT(strstr(html, "By persona") != NULL);
  CU_ASSERT(strstr(html, "By policy") != NULL);
  free(html);
  /* Every file the outcome lists is there. */
  for (size_t i = 0; i < o.nfiles; i++) CU_ASSERT(t_exists("rpt_full_report", o.files[i]));
  CU_ASSERT(o.nfiles == 3 + 2 * 7);
  /* PNG files start with the PNG signature; SVG files are SVG. */
  char *png = t_slurp("rpt_full_report/income.png"), *svg = t_slurp("rpt_full_report/income.svg");
  CU_ASSERT(png && !memcmp(png, "\x89PNG", 4));
  CU_ASSERT(svg && strstr(svg, "<svg") != NULL);
  free(png);
  free(svg);
  rpt_outcome_free(&o);
}

/* A run that compared no policies (each class has its own: default.cfg) gets no policy_jobs
 * figure: it would draw the class split as a policy effect (issue 46.8); the reason is said. */
static void test_report_no_policy_split(void) {
  t_policy_by_class = 1;
  int wr = t_write("rpt_bycls.h5", 3, 77, t_rev);
  t_policy_by_class = 0;
  CU_ASSERT_EQUAL_FATAL(wr, 0);
  FILE *log = fopen("rpt_bycls.log", "w");
  rpt_options opt = {"rpt_bycls_report", NULL, 0, log, 0};
  rpt_outcome o;
  char err[RPT_ERRLEN];
  CU_ASSERT_EQUAL_FATAL(rpt_report("rpt_bycls.h5", &opt, &o, err, sizeof err), 0);
  fclose(log);
  int said = 0;
  for (size_t i = 0; i < o.nskipped; i++) said |= strstr(o.skipped[i], "each job class ran under one policy") != NULL;
  CU_ASSERT(said);
  CU_ASSERT(!t_exists("rpt_bycls_report", "policy_jobs.png"));
  if (rpt_gnuplot_available(NULL)) CU_ASSERT(t_exists("rpt_bycls_report", "jobs.png"));
  rpt_outcome_free(&o);
}

/* The summary CSV carries the hand-computed interval for the known metric, and the Markdown has
 * the sections by dimension. */
static void test_summary_values(void) {
  CU_ASSERT_EQUAL_FATAL(t_write("rpt_sum.h5", 8, 77, t_rev), 0);
  rpt_file *f;
  char err[RPT_ERRLEN];
  CU_ASSERT_EQUAL_FATAL(rpt_open("rpt_sum.h5", &f, err, sizeof err), 0);
  int mm = -1;
  CU_ASSERT_EQUAL_FATAL(rpt_write_summary(f, "rpt_sum.md", "rpt_sum.csv", &mm, err, sizeof err), 0);
  CU_ASSERT_EQUAL(mm, 0); /* the engine's /summary agrees with the GSL recomputation */
  rpt_close(f);
  FILE *c = fopen("rpt_sum.csv", "r");
  CU_ASSERT_PTR_NOT_NULL_FATAL(c);
  char line[1024];
  int found = 0;
  while (fgets(line, sizeof line, c)) {
    if (strncmp(line, "overall,revenue,", 16)) continue;
    double mean, sd, lo, hi;
    int n;
    /* section,metric,quantity,dimension,value,unit,mean,sd,lo,hi,n */
    CU_ASSERT_EQUAL(sscanf(line, "overall,revenue,revenue,,,USD,%lf,%lf,%lf,%lf,%d", &mean, &sd, &lo, &hi, &n), 5);
    CU_ASSERT_DOUBLE_EQUAL(mean, 5.0, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(lo, T_REV_LO, 1e-8);
    CU_ASSERT_DOUBLE_EQUAL(hi, T_REV_HI, 1e-8);
    CU_ASSERT_EQUAL(n, 8);
    found = 1;
  }
  fclose(c);
  CU_ASSERT(found);
  char *md = t_slurp("rpt_sum.md");
  CU_ASSERT_PTR_NOT_NULL_FATAL(md);
  CU_ASSERT(strstr(md, "## Overall") && strstr(md, "## By persona") && strstr(md, "## By pool") &&
            strstr(md, "## By class") && strstr(md, "## By policy"));
  CU_ASSERT(strstr(md, "| jade |") != NULL);
  CU_ASSERT(strstr(md, "5 [3.213, 6.787]") != NULL);
  CU_ASSERT(strstr(md, "Warning") == NULL);
  free(md);
}

/* Without gnuplot: the tables and index.html are still written, and every figure is listed as
 * skipped. */
static void test_report_without_gnuplot(void) {
  CU_ASSERT_EQUAL_FATAL(t_write("rpt_nogp.h5", 3, 5, t_rev), 0);
  /* none; a missing program; a program that exits at once (must not kill us with SIGPIPE) */
  const char *progs[] = {"none", "/nonexistent/gnuplot", "/bin/false"};
  for (int i = 0; i < 3; i++) {
    FILE *log = fopen("rpt_nogp.log", "w");
    rpt_options opt = {"rpt_nogp_report", progs[i], 0, log, 0};
    rpt_outcome o;
    char err[RPT_ERRLEN];
    CU_ASSERT_EQUAL(rpt_report("rpt_nogp.h5", &opt, &o, err, sizeof err), 0);
    fclose(log);
    CU_ASSERT_EQUAL(o.figures_drawn, 0);
    CU_ASSERT(o.nskipped >= 6);
    CU_ASSERT(t_exists("rpt_nogp_report", "summary.md"));
    CU_ASSERT(t_exists("rpt_nogp_report", "summary.csv"));
    CU_ASSERT(t_exists("rpt_nogp_report", "index.html"));
    CU_ASSERT(!t_exists("rpt_nogp_report", "income.png"));
    char *lg = t_slurp("rpt_nogp.log");
    if (i < 2) {
      CU_ASSERT(lg && strstr(lg, "gnuplot not found") && strstr(lg, "figures are skipped"));
    } else {
      CU_ASSERT(lg && strstr(lg, "failed: gnuplot failed on it"));
    }
    free(lg);
    rpt_outcome_free(&o);
  }
}

/* A file with none of the market's inputs (only metrics) gets a report whose every figure is
 * skipped, each with its reason. */
static void test_report_skips_missing_inputs(void) {
  sim_model m = {"bare", NULL, 0, NULL, 0, 0, 1.0, 100.0, NULL, NULL, 0, NULL, 0};
  sim_results r[2];
  memset(r, 0, sizeof r);
  r[0].seed = 1;
  r[1].seed = 2;
  sim_metric_def md[1] = {{"x", "1", ""}};
  double v[2] = {1, 2};
  sim_run_meta meta = {"bare", "b.cfg", "", "", 1, 2, 1, 1, 0.1, 100.0};
  char err[RPT_ERRLEN];
  CU_ASSERT_EQUAL_FATAL(sim_results_write("rpt_bare.h5", &meta, &m, r, md, 1, v, err, sizeof err), 0);
  FILE *log = fopen("rpt_bare.log", "w");
  rpt_options opt = {"rpt_bare_report", NULL, 0, log, 0};
  rpt_outcome o;
  CU_ASSERT_EQUAL(rpt_report("rpt_bare.h5", &opt, &o, err, sizeof err), 0);
  fclose(log);
  CU_ASSERT_EQUAL(o.figures_drawn, 0);
  CU_ASSERT_EQUAL(o.nskipped, 6);
  char *lg = t_slurp("rpt_bare.log");
  CU_ASSERT(lg && strstr(lg, "skipped figure 'Clearing price per GPU class': series price_sum_by_class"));
  free(lg);
  CU_ASSERT(t_exists("rpt_bare_report", "index.html"));
  rpt_outcome_free(&o);
}

/* The fault-tolerance model's conventions: metrics quantity.policy.P.churn.L, a jobs table with
 * policy and churn columns, times submit/start/end (end -1 when unfinished) and a numeric outcome
 * (1 = completed). The report draws grouped bars and one CDF figure per churn level. */
typedef struct t_ftjob {
  char policy[16], churn[16];
  int32_t outcome;
  double submit, start, end;
} t_ftjob;
static const sim_field t_ftjob_f[] = {
    {"policy", SIM_F_STR16, offsetof(t_ftjob, policy), ""},
    {"churn", SIM_F_STR16, offsetof(t_ftjob, churn), ""},
    {"outcome", SIM_F_I32, offsetof(t_ftjob, outcome), "0 unfinished, 1 completed"},
    {"submit", SIM_F_F64, offsetof(t_ftjob, submit), "s"},
    {"start", SIM_F_F64, offsetof(t_ftjob, start), "s"},
    {"end", SIM_F_F64, offsetof(t_ftjob, end), "s"},
};
static void test_report_policy_levels(void) {
  static const sim_table_def tabs[] = {{MKT_TABLE_JOBS, sizeof(t_ftjob), t_ftjob_f, 6, "jobs"}};
  sim_model m = {"fault_tolerance", NULL, 0, NULL, 0, 0, 1.0, 86400.0, NULL, NULL, 0, tabs, 1};
  enum { REPS = 3, NJ = 120 };
  sim_results r[REPS];
  const char *pol[] = {"none", "checkpoint"}, *lev[] = {"low", "high"};
  sim_metric_def md[4] = {{"goodput.policy.none.churn.low", "1", ""},
                          {"goodput.policy.none.churn.high", "1", ""},
                          {"goodput.policy.checkpoint.churn.low", "1", ""},
                          {"goodput.policy.checkpoint.churn.high", "1", ""}};
  double v[REPS * 4];
  for (int i = 0; i < REPS; i++) {
    memset(&r[i], 0, sizeof r[i]);
    r[i].seed = 100 + (uint64_t)i;
    r[i].tables = calloc(1, sizeof *r[i].tables);
    r[i].nrecords = calloc(1, sizeof *r[i].nrecords);
    t_ftjob *j = calloc(NJ, sizeof *j);
    for (int k = 0; k < NJ; k++) {
      snprintf(j[k].policy, 16, "%s", pol[k % 2]);
      snprintf(j[k].churn, 16, "%s", lev[(k / 2) % 2]);
      j[k].submit = 100.0 * k;
      j[k].start = j[k].submit + 10.0 * (k % 7);
      j[k].outcome = k % 5 ? 1 : 0;
      j[k].end = j[k].outcome ? j[k].start + 600.0 * (1 + k % 3) : -1;
    }
    r[i].tables[0] = (unsigned char *)j;
    r[i].nrecords[0] = NJ;
    for (int k = 0; k < 4; k++) v[i * 4 + k] = 0.5 + 0.1 * k + 0.01 * i;
  }
  sim_run_meta meta = {"fault_tolerance", "ft.cfg", "", "", 7, REPS, 1, 1, 0.1, 86400.0};
  char err[RPT_ERRLEN];
  CU_ASSERT_EQUAL_FATAL(sim_results_write("rpt_ft.h5", &meta, &m, r, md, 4, v, err, sizeof err), 0);
  for (int i = 0; i < REPS; i++) {
    free(r[i].tables[0]);
    free(r[i].tables);
    free(r[i].nrecords);
  }
  if (!rpt_gnuplot_available(NULL)) return;
  FILE *log = fopen("rpt_ft.log", "w");
  rpt_options opt = {"rpt_ft_report", NULL, 0, log, 0};
  rpt_outcome o;
  CU_ASSERT_EQUAL_FATAL(rpt_report("rpt_ft.h5", &opt, &o, err, sizeof err), 0);
  fclose(log);
  CU_ASSERT_EQUAL(o.figures_drawn, 3);
  CU_ASSERT(t_exists("rpt_ft_report", "policies.png"));
  CU_ASSERT(t_exists("rpt_ft_report", "policy_jobs_low.png"));
  CU_ASSERT(t_exists("rpt_ft_report", "policy_jobs_high.svg"));
  rpt_outcome_free(&o);
}

/* ---- bad files ----------------------------------------------------------------------------------- */

static void t_copy(const char *from, const char *to, long maxbytes) {
  FILE *a = fopen(from, "rb"), *b = fopen(to, "wb");
  int ch;
  long n = 0;
  while (a && b && (maxbytes < 0 || n < maxbytes) && (ch = fgetc(a)) != EOF) {
    fputc(ch, b);
    n++;
  }
  if (a) fclose(a);
  if (b) fclose(b);
}

/* A results file edited on purpose (here, with HDF5): its checksum no longer matches, so the
 * reader refuses it; zeroing the checksum block's first bytes makes it a file without one, read
 * unchecked (docs/results-format.md). */
static void t_unseal(const char *path) {
  FILE *g = fopen(path, "r+b");
  CU_ASSERT_PTR_NOT_NULL_FATAL(g);
  static const char zeros[16];
  CU_ASSERT_EQUAL(fwrite(zeros, 1, sizeof zeros, g), sizeof zeros);
  fclose(g);
}

static void test_bad_files(void) {
  CU_ASSERT_EQUAL_FATAL(t_write("rpt_good.h5", 2, 9, t_rev), 0);
  rpt_file *f = NULL;
  char err[RPT_ERRLEN];
  /* missing */
  CU_ASSERT_EQUAL(rpt_open("rpt_nothere.h5", &f, err, sizeof err), SIM_EIO);
  CU_ASSERT(strstr(err, "rpt_nothere.h5") != NULL);
  CU_ASSERT_PTR_NULL(f);
  /* not HDF5 at all */
  tu_write("rpt_text.h5", "this is not an HDF5 file\n");
  CU_ASSERT_EQUAL(rpt_open("rpt_text.h5", &f, err, sizeof err), SIM_EFORMAT);
  CU_ASSERT(strstr(err, "rpt_text.h5: not an HDF5 file") != NULL);
  /* damaged: the first 3000 bytes of a good file */
  t_copy("rpt_good.h5", "rpt_trunc.h5", 3000);
  CU_ASSERT_EQUAL(rpt_open("rpt_trunc.h5", &f, err, sizeof err), SIM_EFORMAT);
  CU_ASSERT(strstr(err, "rpt_trunc.h5: damaged file: 3000 bytes where it was written with") != NULL);
  /* damaged: one byte changed anywhere after the checksum block (seeded positions), or bytes
   * appended: refused by the checksum, whatever HDF5 would have made of it */
  {
    FILE *src = fopen("rpt_good.h5", "rb");
    CU_ASSERT_PTR_NOT_NULL_FATAL(src);
    fseek(src, 0, SEEK_END);
    long gsize = ftell(src);
    fclose(src);
    unsigned st = 12345;
    for (int trial = 0; trial < 20; trial++) {
      t_copy("rpt_good.h5", "rpt_flip.h5", -1);
      long at = 512 + (long)(rand_r(&st) % (unsigned)(gsize - 512));
      FILE *w = fopen("rpt_flip.h5", "r+b");
      CU_ASSERT_PTR_NOT_NULL_FATAL(w);
      fseek(w, at, SEEK_SET);
      int old = fgetc(w);
      fseek(w, at, SEEK_SET);
      fputc(old ^ (1 << (rand_r(&st) % 8)), w);
      fclose(w);
      CU_ASSERT_EQUAL(rpt_open("rpt_flip.h5", &f, err, sizeof err), SIM_EFORMAT);
      CU_ASSERT(strstr(err, "its checksum does not match") != NULL);
    }
    t_copy("rpt_good.h5", "rpt_long.h5", -1);
    FILE *w = fopen("rpt_long.h5", "ab");
    fputs("x", w);
    fclose(w);
    CU_ASSERT_EQUAL(rpt_open("rpt_long.h5", &f, err, sizeof err), SIM_EFORMAT);
    CU_ASSERT(strstr(err, "truncated or extended") != NULL);
  }
  /* damaged: garbage written over the middle of a good file */
  t_copy("rpt_good.h5", "rpt_garbled.h5", -1);
  FILE *g = fopen("rpt_garbled.h5", "r+b");
  CU_ASSERT_PTR_NOT_NULL_FATAL(g);
  fseek(g, 0, SEEK_END);
  long size = ftell(g);
  fseek(g, 96, SEEK_SET);
  for (long i = 96; i < size / 2; i++) fputc((int)((i * 7919) & 0xff), g);
  fclose(g);
  int rc = rpt_open("rpt_garbled.h5", &f, err, sizeof err);
  CU_ASSERT(rc == SIM_EFORMAT || rc == SIM_ENOTFOUND);
  CU_ASSERT(strstr(err, "rpt_garbled.h5") != NULL);
  /* a missing dataset */
  t_copy("rpt_good.h5", "rpt_nometrics.h5", -1);
  hid_t h = H5Fopen("rpt_nometrics.h5", H5F_ACC_RDWR, H5P_DEFAULT);
  CU_ASSERT_FATAL(h >= 0);
  H5Ldelete(h, "/metrics", H5P_DEFAULT);
  H5Fclose(h);
  /* edited after spotlab wrote it: the checksum says so, before HDF5 reads anything */
  CU_ASSERT_EQUAL(rpt_open("rpt_nometrics.h5", &f, err, sizeof err), SIM_EFORMAT);
  CU_ASSERT(strstr(err, "rpt_nometrics.h5: damaged file: its checksum does not match") != NULL);
  t_unseal("rpt_nometrics.h5");
  CU_ASSERT_EQUAL(rpt_open("rpt_nometrics.h5", &f, err, sizeof err), SIM_ENOTFOUND);
  CU_ASSERT(strstr(err, "rpt_nometrics.h5: dataset /metrics is missing") != NULL);
  /* another format version */
  t_copy("rpt_good.h5", "rpt_v99.h5", -1);
  h = H5Fopen("rpt_v99.h5", H5F_ACC_RDWR, H5P_DEFAULT);
  hid_t a = H5Aopen(h, "format_version", H5P_DEFAULT);
  int32_t v99 = 99;
  H5Awrite(a, H5T_NATIVE_INT32, &v99);
  H5Aclose(a);
  H5Fclose(h);
  t_unseal("rpt_v99.h5");
  CU_ASSERT_EQUAL(rpt_open("rpt_v99.h5", &f, err, sizeof err), SIM_EFORMAT);
  CU_ASSERT(strstr(err, "format version 99") != NULL);
  /* an HDF5 file that is not spotlab's */
  h = H5Fcreate("rpt_other.h5", H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  H5Fclose(h);
  CU_ASSERT_EQUAL(rpt_open("rpt_other.h5", &f, err, sizeof err), SIM_EFORMAT);
  CU_ASSERT(strstr(err, "not a spotlab results file") != NULL);
  /* a missing table is not an error when opening; reading it says which */
  CU_ASSERT_EQUAL_FATAL(rpt_open("rpt_good.h5", &f, err, sizeof err), 0);
  double *x;
  size_t n;
  CU_ASSERT_EQUAL(rpt_table_num(f, 0, "nosuch", "x", &x, &n), SIM_ENOTFOUND);
  CU_ASSERT(strstr(rpt_error(f), "/reps/rep_0000/tables/nosuch is missing") != NULL);
  CU_ASSERT_EQUAL(rpt_table_num(f, 1, MKT_TABLE_JOBS, "nosuch", &x, &n), SIM_ENOTFOUND);
  CU_ASSERT(strstr(rpt_error(f), "has no field 'nosuch'") != NULL);
  CU_ASSERT_EQUAL(rpt_table_num(f, 1, MKT_TABLE_JOBS, "wait_s", &x, &n), 0);
  CU_ASSERT_EQUAL(n, T_NJOBS);
  free(x);
  rpt_close(f);
  /* the report on a damaged file fails with the message, and writes nothing */
  rpt_options opt = {"rpt_bad_report", "none", 1, NULL, 0};
  rpt_outcome o;
  CU_ASSERT_EQUAL(rpt_report("rpt_nometrics.h5", &opt, &o, err, sizeof err), SIM_ENOTFOUND);
  CU_ASSERT(!t_exists("rpt_bad_report", "index.html"));
  rpt_outcome_free(&o);
}

/* Damaged files that declare far more data than they hold (what fuzz/fuzz_results.c found: the
 * reader allocated what a dataset's extent said, 10^15 elements and more, before reading): a
 * dataset replaced by one of a huge extent whose data were never written (HDF5 allocates storage
 * late, so the file stays small). Each is refused as damaged, nothing is allocated for it. */
static void t_huge(const char *path, const char *dset, int rank, const hsize_t *dims, hid_t type) {
  hid_t h = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
  CU_ASSERT_FATAL(h >= 0);
  H5Ldelete(h, dset, H5P_DEFAULT);
  hid_t sp = H5Screate_simple(rank, dims, NULL), dcpl = H5Pcreate(H5P_DATASET_CREATE);
  H5Pset_alloc_time(dcpl, H5D_ALLOC_TIME_LATE);
  hid_t ds = H5Dcreate2(h, dset, type, sp, H5P_DEFAULT, dcpl, H5P_DEFAULT);
  CU_ASSERT(ds >= 0);
  H5Dclose(ds);
  H5Pclose(dcpl);
  H5Sclose(sp);
  H5Fclose(h);
  t_unseal(path);
}
static void test_declared_too_big(void) {
  CU_ASSERT_EQUAL_FATAL(t_write("rpt_good.h5", 2, 9, t_rev), 0);
  rpt_file *f = NULL;
  char err[RPT_ERRLEN];
  /* /metrics of [2][10^14] doubles */
  t_copy("rpt_good.h5", "rpt_huge_metrics.h5", -1);
  hsize_t m[2] = {2, 100000000000000ull};
  t_huge("rpt_huge_metrics.h5", "/metrics", 2, m, H5T_NATIVE_DOUBLE);
  CU_ASSERT_EQUAL(rpt_open("rpt_huge_metrics.h5", &f, err, sizeof err), SIM_EFORMAT);
  CU_ASSERT(strstr(err, "/metrics is not [reps=2][nmetrics] (damaged file?)") != NULL);
  /* a series of 10^9 x 10^6 cells, a table of 10^15 records: the file opens, reading them fails */
  t_copy("rpt_good.h5", "rpt_huge_parts.h5", -1);
  hid_t h = H5Fopen("rpt_huge_parts.h5", H5F_ACC_RDONLY, H5P_DEFAULT);
  hid_t jd = H5Dopen2(h, "/reps/rep_0000/tables/jobs", H5P_DEFAULT), jt = H5Dget_type(jd);
  H5Dclose(jd);
  H5Fclose(h);
  hsize_t sd[2] = {1000000000ull, 1000000ull}, td[1] = {1000000000000000ull};
  t_huge("rpt_huge_parts.h5", "/reps/rep_0000/series/ledger", 2, sd, H5T_NATIVE_INT64);
  t_huge("rpt_huge_parts.h5", "/reps/rep_0000/tables/jobs", 1, td, jt);
  H5Tclose(jt);
  CU_ASSERT_EQUAL_FATAL(rpt_open("rpt_huge_parts.h5", &f, err, sizeof err), 0);
  rpt_series sr;
  CU_ASSERT_EQUAL(rpt_series_read(f, 0, MKT_SERIES_LEDGER, &sr), SIM_EFORMAT);
  CU_ASSERT(strstr(rpt_error(f), "declares 1000000000 x 1000000 cells (damaged file?)") != NULL);
  rpt_series_free(&sr);
  double *x = NULL;
  size_t n = 0;
  CU_ASSERT_EQUAL(rpt_table_num(f, 0, MKT_TABLE_JOBS, "wait_s", &x, &n), SIM_EFORMAT);
  CU_ASSERT(strstr(rpt_error(f), "cannot be read (damaged file?)") != NULL);
  free(x);
  rpt_close(f);
}

/* ---- compare ------------------------------------------------------------------------------------- */

static void test_compare_paired(void) {
  double b[4] = {1, 2, 3, 4}, a[4] = {2, 4, 5, 5};
  CU_ASSERT_EQUAL_FATAL(t_write("rpt_before.h5", 4, 21, b), 0);
  CU_ASSERT_EQUAL_FATAL(t_write("rpt_after.h5", 4, 21, a), 0);
  CU_ASSERT_EQUAL_FATAL(t_write("rpt_other_seed.h5", 4, 22, a), 0);
  FILE *tab = fopen("rpt_compare.txt", "w");
  rpt_options opt = {"rpt_compare_out", NULL, 1, tab, 0};
  rpt_diff *d;
  size_t nd;
  int seeds;
  char err[RPT_ERRLEN];
  CU_ASSERT_EQUAL_FATAL(rpt_compare("rpt_before.h5", "rpt_after.h5", &opt, tab, &d, &nd, &seeds, err, sizeof err), 0);
  fclose(tab);
  CU_ASSERT_EQUAL(seeds, 1);
  CU_ASSERT_EQUAL(nd, T_NM);
  CU_ASSERT_STRING_EQUAL(d[0].name, "revenue");
  CU_ASSERT_DOUBLE_EQUAL(d[0].diff.mean, 1.5, 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(d[0].diff.lo, 1.5 - 0.918693115, 1e-8);
  CU_ASSERT_DOUBLE_EQUAL(d[0].diff.hi, 1.5 + 0.918693115, 1e-8);
  CU_ASSERT_DOUBLE_EQUAL(d[0].rel, 1.5 / 2.5, 1e-12);
  /* every other metric was drawn from the shared seeds: identical, a zero change */
  CU_ASSERT_DOUBLE_EQUAL(d[1].diff.mean, 0.0, 0);
  /* a duration (the file's `s`) is shown in the page's hours, as in reports, and its before and
   * after intervals are clipped at 0 (a wait is not negative) */
  {
    rpt_file *f = NULL;
    CU_ASSERT_EQUAL_FATAL(rpt_open("rpt_before.h5", &f, err, sizeof err), 0);
    unsigned k = (unsigned)rpt_metric_find(f, "wait_p50.class.training"), nm = rpt_nmetrics(f);
    double sum = 0;
    for (int r = 0; r < 4; r++) sum += rpt_metric_values(f)[(size_t)r * nm + k];
    rpt_close(f);
    CU_ASSERT_STRING_EQUAL(d[k].unit, "h");
    CU_ASSERT_DOUBLE_EQUAL(d[k].before.mean, sum / 4 / 3600.0, 1e-12 * sum);
    CU_ASSERT(d[k].before.lo >= 0 && d[k].after.lo >= 0);
  }
  free(d);
  CU_ASSERT(t_exists("rpt_compare_out", "compare.md"));
  CU_ASSERT(t_exists("rpt_compare_out", "compare.csv"));
  if (rpt_gnuplot_available(NULL)) {
    CU_ASSERT(t_exists("rpt_compare_out", "compare.png"));
    CU_ASSERT(t_exists("rpt_compare_out", "compare.svg"));
  }
  char *txt = t_slurp("rpt_compare.txt");
  CU_ASSERT(txt && strstr(txt, "seeds match") && strstr(txt, "+60.00%"));
  free(txt);
  /* other seeds: said, and the pairs still give an interval */
  CU_ASSERT_EQUAL(rpt_compare("rpt_before.h5", "rpt_other_seed.h5", &opt, NULL, &d, &nd, &seeds, err, sizeof err), 0);
  CU_ASSERT_EQUAL(seeds, 0);
  free(d);
}

/* ---- sweep files --------------------------------------------------------------------------------- */

static void test_sweep_round_trip(void) {
  char *labels[3] = {"0.05", "0.1", "0.2"}, *files[3] = {"p/0.h5", "p/1.h5", "p/2.h5"};
  char *names[3] = {"revenue", "income.persona.jade", "income.persona.katie"}, *units[3] = {"USD", "USD", "USD"};
  double x[3] = {0.05, 0.1, 0.2}, vals[3 * 2 * 3];
  for (int p = 0; p < 3; p++)
    for (int r = 0; r < 2; r++)
      for (int k = 0; k < 3; k++) vals[(p * 2 + r) * 3 + k] = 100 * x[p] + r + k;
  rpt_sweep s = {"market.fee_bidding", "market", 3, 3, 2, labels, x, names, units, vals, files};
  char err[RPT_ERRLEN];
  CU_ASSERT_EQUAL_FATAL(rpt_sweep_write("rpt_sweep.h5", &s, "m.cfg", 7, err, sizeof err), 0);
  rpt_file *f;
  CU_ASSERT_EQUAL_FATAL(rpt_open("rpt_sweep.h5", &f, err, sizeof err), 0);
  CU_ASSERT_EQUAL(rpt_file_kind(f), RPT_SWEEP);
  rpt_sweep b;
  CU_ASSERT_EQUAL_FATAL(rpt_sweep_read(f, &b), 0);
  CU_ASSERT_STRING_EQUAL(b.param, "market.fee_bidding");
  CU_ASSERT_EQUAL(b.npoints, 3);
  CU_ASSERT_EQUAL(b.nmetrics, 3);
  CU_ASSERT_EQUAL(b.reps, 2);
  CU_ASSERT_STRING_EQUAL(b.labels[2], "0.2");
  CU_ASSERT_STRING_EQUAL(b.names[1], "income.persona.jade");
  CU_ASSERT_STRING_EQUAL(b.point_files[1], "p/1.h5");
  CU_ASSERT(memcmp(b.values, vals, sizeof vals) == 0);
  CU_ASSERT_DOUBLE_EQUAL(b.x[1], 0.1, 0);
  rpt_sweep_free(&b);
  rpt_close(f);
  FILE *log = fopen("rpt_sweep.log", "w");
  rpt_options opt = {"rpt_sweep_report", NULL, 0, log, 0};
  rpt_outcome o;
  CU_ASSERT_EQUAL(rpt_report("rpt_sweep.h5", &opt, &o, err, sizeof err), 0);
  fclose(log);
  CU_ASSERT(t_exists("rpt_sweep_report", "summary.md") && t_exists("rpt_sweep_report", "index.html"));
  if (rpt_gnuplot_available(NULL)) {
    CU_ASSERT_EQUAL(o.figures_drawn, 2); /* revenue; income per persona */
    CU_ASSERT(t_exists("rpt_sweep_report", "sweep_revenue.png"));
    CU_ASSERT(t_exists("rpt_sweep_report", "sweep_income_by_persona.svg"));
  }
  rpt_outcome_free(&o);
}

/* ---- what names and units say: ranges, durations, checks; constant series and checks as lines ---- */

static void test_ranges_and_checks(void) {
  struct {
    const char *name, *unit;
    double lo, hi;
  } cases[] = {
      {"jobs_reneged", "jobs", 0, INFINITY},
      {"wait_mean.class.training", "s", 0, INFINITY},
      {"completed_share.class.batch", "1", 0, 1},
      {"utilization.region.eu", "1", 0, 1},
      {"utilization", "%", 0, 100},
      {"income_sd.persona.jade", "USD", 0, INFINITY},
      {"daily_income_cv.persona.henry", "1", 0, INFINITY},
      {"client_price_per_gpu_h", "USD/h", 0, INFINITY},
      {"lost_gpu_h.policy.none", "GPU*h", 0, INFINITY},
      {"spend_per_useful_gpu_h.policy.none", "USD/h", 0, INFINITY},
      {"spend_per_completed_job.class.training", "USD", 0, INFINITY},
      {"spend_per_useful_gpu_h_vs_none.policy.checkpoint", "USD/h", -INFINITY, INFINITY},
      {"provider_surplus", "USD", -INFINITY, INFINITY},
      {"income_mean.persona.jade", "USD", -INFINITY, INFINITY},
      {"goodput_vs_none.policy.checkpoint", "1", -INFINITY, INFINITY},
      {"completed_share_vs_none.policy.standby", "1", -INFINITY, INFINITY},
      {"imbalance.region.us", "1", -INFINITY, INFINITY},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    double lo, hi;
    rpt_metric_range(cases[i].name, cases[i].unit, &lo, &hi);
    if (lo != cases[i].lo || hi != cases[i].hi) {
      CU_FAIL("range");
      fprintf(stderr, "\n  %s (%s): [%g, %g], want [%g, %g]", cases[i].name, cases[i].unit, lo, hi, cases[i].lo,
              cases[i].hi);
    }
  }
  rpt_ci ci = {8, 7.16, -3.4, 19.4, 4};
  rpt_ci_clip(&ci, 0, INFINITY);
  CU_ASSERT(ci.mean == 8 && ci.lo == 0 && ci.hi == 19.4);
  rpt_ci sh = {0.99, 0.01, 0.97, 1.01, 4};
  rpt_ci_clip(&sh, 0, 1);
  CU_ASSERT(sh.lo == 0.97 && sh.hi == 1);
  CU_ASSERT_EQUAL(rpt_duration_unit("s"), 1);
  CU_ASSERT_EQUAL(rpt_duration_unit("h"), 3600);
  CU_ASSERT_EQUAL(rpt_duration_unit("USD/h"), 0);
  CU_ASSERT_EQUAL(rpt_duration_unit("GPU*h"), 0);
  double ones[] = {1, 1, 1}, mixed[] = {1, 0, 1}, other[] = {1, 2, 1};
  CU_ASSERT(rpt_metric_is_check("money_conserved", ones, 3, 1));
  CU_ASSERT(rpt_metric_is_check("money_conserved.policy.none", mixed, 3, 1));
  CU_ASSERT(!rpt_metric_is_check("money_conserved", other, 3, 1));
  CU_ASSERT(!rpt_metric_is_check("completed_share", ones, 3, 1));
}

/* A results file of metrics only: nm metrics (defs) x reps (values row-major [rep][metric]). */
static int t_write_metrics(const char *path, int reps, const sim_metric_def *defs, unsigned nm, const double *v) {
  sim_model m = {"fake_market", NULL, 0, NULL, 0, 0, 1.0, T_END, NULL, NULL, 0, NULL, 0};
  sim_results *r = calloc((size_t)reps, sizeof *r);
  for (int i = 0; i < reps; i++) {
    r[i].seed = sim_rep_seed(5, (unsigned)i);
    r[i].ranks = 1;
  }
  sim_run_meta meta = {"fake_market", "fake.cfg", "model = \"fake_market\";", "eff", 5, reps, 1, 1, 0.1, T_END};
  char err[256];
  int rc = sim_results_write(path, &meta, &m, r, defs, nm, v, err, sizeof err);
  if (rc) fprintf(stderr, "\n  %s", err);
  free(r);
  return rc;
}

static void t_keep_script(void *ctx, const char *name, const char *body) {
  if (!strcmp(name, "compare")) {
    char **keep = ctx;
    free(*keep);
    *keep = strdup(body);
  }
}

/* compare leads with the operator's headline metrics, and its figure never drops a significant
 * change for a larger insignificant one (issue 46.8: jobs_served +6% with its interval above 0 was
 * left out for incomes of +40% whose intervals included 0); a name a file holds twice is one row. */
static void test_compare_headline_order(void) {
  enum { NM = 31, REPS = 6 };
  sim_metric_def md[NM];
  char names[NM][48];
  for (int k = 0; k < 28; k++) { /* incomes that move a lot, but not clearly */
    snprintf(names[k], sizeof names[k], "income.region.r%02d", k);
    md[k] = (sim_metric_def){names[k], "USD", "", 0};
  }
  md[28] = (sim_metric_def){"jobs_served", "jobs", "", 0};
  md[29] = (sim_metric_def){"platform_revenue", "USD", "", 0};
  md[30] = (sim_metric_def){"income.region.r00", "USD", "", 0}; /* twice in the file */
  double b[REPS * NM], a[REPS * NM];
  for (int r = 0; r < REPS; r++)
    for (int k = 0; k < NM; k++) {
      double noise = (r % 2 ? 1 : -1) * (20.0 + r); /* the pairs' changes swing both ways */
      b[r * NM + k] = k < 28 || k == 30 ? 50 : k == 28 ? 1000 + r : 100;
      a[r * NM + k] = k < 28 || k == 30 ? 70 + noise : k == 28 ? 1060 + r + 0.5 * (r % 3) : 100 + 0.1 * r;
    }
  CU_ASSERT_EQUAL_FATAL(t_write_metrics("rpt_hl_before.h5", REPS, md, NM, b), 0);
  CU_ASSERT_EQUAL_FATAL(t_write_metrics("rpt_hl_after.h5", REPS, md, NM, a), 0);
  char *script = NULL, err[RPT_ERRLEN];
  FILE *tab = fopen("rpt_hl.txt", "w");
  rpt_options opt = {"rpt_hl_cmp", NULL, 1, tab, 0, t_keep_script, &script};
  rpt_diff *d = NULL;
  size_t nd;
  int seeds;
  CU_ASSERT_EQUAL_FATAL(rpt_compare("rpt_hl_before.h5", "rpt_hl_after.h5", &opt, tab, &d, &nd, &seeds, err, sizeof err),
                        0);
  fclose(tab);
  CU_ASSERT_EQUAL(nd, NM - 1); /* income.region.r00 once */
  free(d);
  /* the printed table and compare.md open with the headline, in words */
  char *txt = t_slurp("rpt_hl.txt"), *mdt = t_slurp("rpt_hl_cmp/compare.md");
  CU_ASSERT(txt && strstr(txt, "Headline") && strstr(txt, "jobs served rose by 60.5 jobs (1002 to 1063, +6.0%)") &&
            strstr(txt, "excludes 0") && strstr(txt, "platform revenue"));
  CU_ASSERT(txt && strstr(txt, "Headline") < strstr(txt, "Every metric"));
  CU_ASSERT(mdt && strstr(mdt, "## Headline") && strstr(mdt, "## Headline") < strstr(mdt, "## Every metric"));
  free(txt);
  free(mdt);
  /* the figure: jobs served is drawn, first (significant), though 28 incomes changed by more */
  CU_ASSERT_PTR_NOT_NULL_FATAL(script);
  char *tics = strstr(script, "set ytics (");
  CU_ASSERT_PTR_NOT_NULL_FATAL(tics);
  CU_ASSERT(strstr(tics, "'jobs served' 23") != NULL); /* 24 bars, the top one is y = 23 */
  free(script);
}

static void t_keep_all(void *ctx, const char *name, const char *body) {
  (void)name;
  FILE *o = ctx;
  fputs(body, o);
}

/* Figures name a metric in words: its label from the file's /metrics `labels` attribute when it
 * has one (written by sim_results_write from the catalogue, as for the models' files), else its
 * name made readable; never the identifier (issue 49.13). */
static void test_figures_in_words(void) {
  sim_metric_def md[4] = {{"goodput.policy.none", "1", "", 0, "useful share of billed GPU time"},
                          {"goodput.policy.checkpoint", "1", "", 0, "useful share of billed GPU time"},
                          {"income_per_available_hour.policy.none", "USD/h", "", 0},
                          {"income_per_available_hour.policy.checkpoint", "USD/h", "", 0}};
  double v[3 * 4] = {0.5, 0.6, 1, 2, 0.55, 0.62, 1.5, 2.5, 0.52, 0.7, 1.2, 2.2};
  CU_ASSERT_EQUAL_FATAL(t_write_metrics("rpt_words.h5", 3, md, 4, v), 0);
  rpt_file *f = NULL;
  char err[RPT_ERRLEN];
  CU_ASSERT_EQUAL_FATAL(rpt_open("rpt_words.h5", &f, err, sizeof err), 0);
  CU_ASSERT_STRING_EQUAL(rpt_metric_label(f, 0), "useful share of billed GPU time");
  CU_ASSERT_STRING_EQUAL(rpt_metric_label(f, 2), "");
  CU_ASSERT_EQUAL(rpt_metric_headline(f, 0), -1);
  rpt_close(f);
  char *all = NULL;
  size_t len;
  FILE *o = open_memstream(&all, &len);
  rpt_options opt = {"rpt_words_report", "none", 1, NULL, 0, t_keep_all, o};
  rpt_outcome out;
  CU_ASSERT_EQUAL(rpt_report("rpt_words.h5", &opt, &out, err, sizeof err), 0);
  rpt_outcome_free(&out);
  fclose(o);
  CU_ASSERT_PTR_NOT_NULL_FATAL(all);
  CU_ASSERT(strstr(all, "set title 'useful share of billed GPU time'") != NULL);    /* the label */
  CU_ASSERT(strstr(all, "set ylabel 'income per available hour (USD/h)'") != NULL); /* the name, readable */
  CU_ASSERT(strstr(all, "'goodput") == NULL && strstr(all, "'income_per_available_hour") == NULL);
  free(all);
  char w[160];
  rpt_metric_words("income_cv.persona.jade.pool.fixed", NULL, "1", w, sizeof w);
  CU_ASSERT_STRING_EQUAL(w, "income coefficient of variation, persona jade, pool fixed");
  rpt_metric_words("wait_p50", "", "h", w, sizeof w);
  CU_ASSERT_STRING_EQUAL(w, "wait median (h)");
}

/* The summary: a count's interval does not reach below 0 (the CSV too), durations are shown in
 * hours in the Markdown and HTML (the CSV keeps seconds), and a policy quantity that is the same
 * everywhere, or a pass/fail check, is a table line and no panel. */
static void test_summary_clipped_hours_lines(void) {
  static const sim_metric_def defs[] = {
      {"jobs_reneged", "jobs", ""},          /* 0 0 0 8: mean 2, t interval below 0 */
      {"wait_mean.class.training", "s", ""}, /* 2, 3, 4, 3 hours */
      {"goodput.policy.none", "1", ""},
      {"goodput.policy.checkpoint", "1", ""},
      {"providers_mean.policy.none", "providers", ""}, /* 120 everywhere */
      {"providers_mean.policy.checkpoint", "providers", ""},
      {"money_conserved.policy.none", "1", ""}, /* 1 everywhere */
      {"money_conserved.policy.checkpoint", "1", ""},
  };
  enum { NM = 8, R = 4 };
  double v[R * NM];
  for (int r = 0; r < R; r++) {
    v[r * NM + 0] = r == 3 ? 8 : 0;
    v[r * NM + 1] = 3600.0 * (r == 0 ? 2 : r == 1 ? 3 : r == 2 ? 4 : 3);
    v[r * NM + 2] = 0.5 + 0.01 * r;
    v[r * NM + 3] = 0.7 + 0.02 * r;
    v[r * NM + 4] = v[r * NM + 5] = 120;
    v[r * NM + 6] = v[r * NM + 7] = 1;
  }
  CU_ASSERT_EQUAL_FATAL(t_write_metrics("rpt_clip.h5", R, defs, NM, v), 0);
  FILE *log = fopen("rpt_clip.log", "w");
  rpt_options opt = {"rpt_clip_report", "none", 0, log, 0};
  rpt_outcome o;
  char err[RPT_ERRLEN];
  CU_ASSERT_EQUAL_FATAL(rpt_report("rpt_clip.h5", &opt, &o, err, sizeof err), 0);
  fclose(log);
  char *csv = t_slurp("rpt_clip_report/summary.csv"), *md = t_slurp("rpt_clip_report/summary.md");
  CU_ASSERT_PTR_NOT_NULL_FATAL(csv);
  CU_ASSERT_PTR_NOT_NULL_FATAL(md);
  /* mean 2, sd 4, t_{0.975,3} = 3.182446305: the interval is 2 -/+ 6.3649 = [-4.3649, 8.3649] */
  const char *row = strstr(csv, "overall,jobs_reneged,");
  CU_ASSERT_PTR_NOT_NULL_FATAL(row);
  double mean, sd, lo, hi;
  CU_ASSERT_EQUAL(sscanf(row, "overall,jobs_reneged,jobs_reneged,,,jobs,%lf,%lf,%lf,%lf", &mean, &sd, &lo, &hi), 4);
  CU_ASSERT_DOUBLE_EQUAL(mean, 2, 1e-12);
  CU_ASSERT_EQUAL(lo, 0);
  CU_ASSERT_DOUBLE_EQUAL(hi, 2 + 3.182446305 * 2, 1e-6);
  CU_ASSERT_PTR_NOT_NULL(strstr(md, "| jobs_reneged | jobs | 2 [0, 8.365] |"));
  /* the wait: 3 h [1.701, 4.299] (sd 0.8165 h) in the pages; seconds in the CSV */
  CU_ASSERT_PTR_NOT_NULL(strstr(md, "wait_mean (h)"));
  CU_ASSERT_PTR_NOT_NULL(strstr(md, "| training | 3 [1.701, 4.299] |"));
  CU_ASSERT_PTR_NULL(strstr(md, "(s)"));
  CU_ASSERT_PTR_NOT_NULL(strstr(csv, "class,wait_mean.class.training,wait_mean,class,training,s,10800,"));
  /* the constant quantity and the check are lines; goodput alone is drawn */
  int constant = 0, check = 0;
  for (size_t i = 0; i < o.nlines; i++) {
    constant += !strcmp(o.lines[i], "providers_mean per policy: 120 providers for every policy and replication");
    check += !strcmp(o.lines[i], "money_conserved per policy: a pass/fail check, passed in all 8 runs (every policy, "
                                 "every replication)");
  }
  CU_ASSERT_EQUAL(o.nlines, 2);
  CU_ASSERT(constant == 1 && check == 1);
  char *html = t_slurp("rpt_clip_report/index.html");
  CU_ASSERT(html && strstr(html, "Constant series and checks") && strstr(html, "<td>providers_mean per policy</td>"));
  free(html);
  free(csv);
  free(md);
  rpt_outcome_free(&o);
}

/* A sweep: a check and a quantity that does not move with the key are table lines, not figures. */
static void test_sweep_lines(void) {
  char *labels[3] = {"0.05", "0.1", "0.2"}, *files[3] = {"p/0.h5", "p/1.h5", "p/2.h5"};
  char *names[4] = {"revenue", "money_conserved", "pool_switches.pool.fixed", "pool_switches.pool.bidding"};
  char *units[4] = {"USD", "1", "1", "1"};
  double x[3] = {0.05, 0.1, 0.2}, vals[3 * 2 * 4];
  for (int p = 0; p < 3; p++)
    for (int r = 0; r < 2; r++) {
      vals[(p * 2 + r) * 4 + 0] = 100 * x[p] + r;
      vals[(p * 2 + r) * 4 + 1] = p == 2 && r == 1 ? 0 : 1; /* one failed run */
      vals[(p * 2 + r) * 4 + 2] = vals[(p * 2 + r) * 4 + 3] = 0;
    }
  rpt_sweep s = {"market.bidding.fee", "market", 3, 4, 2, labels, x, names, units, vals, files};
  char err[RPT_ERRLEN];
  CU_ASSERT_EQUAL_FATAL(rpt_sweep_write("rpt_sweep_lines.h5", &s, "m.cfg", 7, err, sizeof err), 0);
  FILE *log = fopen("rpt_sweep_lines.log", "w");
  rpt_options opt = {"rpt_sweep_lines_report", NULL, 0, log, 0};
  rpt_outcome o;
  CU_ASSERT_EQUAL_FATAL(rpt_report("rpt_sweep_lines.h5", &opt, &o, err, sizeof err), 0);
  fclose(log);
  CU_ASSERT_EQUAL(o.nlines, 2);
  CU_ASSERT(o.nlines >= 1 &&
            !strcmp(o.lines[0], "money_conserved: a pass/fail check, FAILED in 1 of 6 runs (3 points x 2 "
                                "replications)"));
  CU_ASSERT(o.nlines >= 2 && !strcmp(o.lines[1], "pool_switches per pool: 0 for every pool, at every value of "
                                                 "market.bidding.fee (2 replications each)"));
  if (rpt_gnuplot_available(NULL)) {
    CU_ASSERT_EQUAL(o.figures_drawn, 1);
    CU_ASSERT(t_exists("rpt_sweep_lines_report", "sweep_revenue.png"));
    CU_ASSERT(!t_exists("rpt_sweep_lines_report", "sweep_money_conserved.png"));
    CU_ASSERT(!t_exists("rpt_sweep_lines_report", "sweep_pool_switches_by_pool.png"));
  }
  rpt_outcome_free(&o);
}

/* The figures of a real market run, read from the scripts a stand-in gnuplot keeps: the price
 * figure shows traded volume (a volume panel, widths by share of trades, thin classes merged into
 * "other", the all-classes line), every time axis is in hours like the tables, and the series
 * styles of the palette differ. */
static void test_market_figures_inform(void) {
  if (access(tu_bin(), X_OK) != 0) return;
  char cmd[8192];
  snprintf(cmd, sizeof cmd,
           "%s run %s/scenarios/default.cfg --param run.end=259200 --param run.reps=2 --out "
           "rpt_mkt.h5 --quiet",
           tu_bin(), tu_src());
  CU_ASSERT_EQUAL_FATAL(tu_run(cmd, NULL), 0);
  /* the stand-in: keeps each script as NAME.gp beside the figure, writes files that look whole */
  tu_write("rpt_fake_gnuplot.sh", "#!/bin/sh\n"
                                  "s=$(mktemp)\ncat > \"$s\"\n"
                                  "png=$(sed -n \"s/^set output '\\(.*\\.png\\)'$/\\1/p\" \"$s\" | head -1)\n"
                                  "svg=$(sed -n \"s/^set output '\\(.*\\.svg\\)'$/\\1/p\" \"$s\" | head -1)\n"
                                  "cp \"$s\" \"${png%.png}.gp\"\nrm -f \"$s\"\n"
                                  "printf 'x IEND' > \"$png\"\nprintf '<svg></svg>' > \"$svg\"\n");
  chmod("rpt_fake_gnuplot.sh", 0755);
  FILE *log = fopen("rpt_mkt.log", "w");
  rpt_options opt = {"rpt_mkt_report", "./rpt_fake_gnuplot.sh", 0, log, 0};
  rpt_outcome o;
  char err[RPT_ERRLEN];
  CU_ASSERT_EQUAL_FATAL(rpt_report("rpt_mkt.h5", &opt, &o, err, sizeof err), 0);
  fclose(log);
  rpt_outcome_free(&o);
  char *price = t_slurp("rpt_mkt_report/price.gp"), *html = t_slurp("rpt_mkt_report/index.html");
  CU_ASSERT_PTR_NOT_NULL_FATAL(price);
  CU_ASSERT_PTR_NOT_NULL_FATAL(html);
  CU_ASSERT_PTR_NOT_NULL(strstr(price, "set ylabel 'trades per window'"));
  CU_ASSERT_PTR_NOT_NULL(strstr(price, "title 'all classes'"));
  CU_ASSERT_PTR_NOT_NULL(strstr(price, "title 'other ("));
  CU_ASSERT_PTR_NOT_NULL(strstr(html, "merged into &#39;other&#39;") || strstr(html, "merged into 'other'"));
  /* line widths differ with the share of trades: the most traded class (drawn first) is widest */
  double w[16];
  int nw = 0;
  for (const char *p = price; nw < 16 && (p = strstr(p, "with linespoints pi -1 lt ")); p++) {
    const char *lw = strstr(p, " lw ");
    if (lw) w[nw++] = atof(lw + 4);
  }
  CU_ASSERT(nw >= 3);
  for (int i = 1; i < nw / 2; i++) CU_ASSERT(w[0] > w[i]); /* one pass's series (the script is rendered twice) */
  /* hours on every page: axes, CDFs and the summary */
  const char *figs[] = {"utilization", "price", "availability", "jobs"};
  for (int i = 0; i < 4; i++) {
    char p[128];
    snprintf(p, sizeof p, "rpt_mkt_report/%s.gp", figs[i]);
    char *g = t_slurp(p);
    CU_ASSERT_PTR_NOT_NULL(g);
    if (g) CU_ASSERT(strstr(g, "(hours") != NULL && strstr(g, "(days)") == NULL && strstr(g, "'1 s'") == NULL);
    free(g);
  }
  char *md = t_slurp("rpt_mkt_report/summary.md");
  CU_ASSERT(md && strstr(md, "wait_mean (h)") && !strstr(md, "(s)"));
  /* every interval in the summary lies within what its quantity can be */
  FILE *c = fopen("rpt_mkt_report/summary.csv", "r");
  CU_ASSERT_PTR_NOT_NULL_FATAL(c);
  char line[2048];
  int rows = 0, outside = 0;
  while (fgets(line, sizeof line, c)) {
    char *f[11];
    int n = 0;
    for (char *q = line, *t; n < 11 && (t = strsep(&q, ",\n"));) f[n++] = t;
    if (n < 10 || !strcmp(f[0], "section")) continue;
    double lo, hi, clo = atof(f[8]), chi = atof(f[9]);
    rpt_metric_range(f[1], f[5], &lo, &hi);
    if (clo < lo || chi > hi) {
      outside++;
      fprintf(stderr, "\n  %s: [%g, %g] outside [%g, %g]", f[1], clo, chi, lo, hi);
    }
    rows++;
  }
  fclose(c);
  CU_ASSERT(rows > 100);
  CU_ASSERT_EQUAL(outside, 0);
  free(md);
  free(price);
  free(html);
  /* the palette: 12 series, no two with both the same colour and the same dash */
  for (unsigned i = 0; i < 12; i++)
    for (unsigned j = i + 1; j < 12; j++) CU_ASSERT(strcmp(rpt_colour(i), rpt_colour(j)) || rpt_dash(i) != rpt_dash(j));
  CU_ASSERT(strcmp(rpt_colour(0), rpt_colour(1)) && rpt_dash(0) != rpt_dash(1)); /* neighbours differ in both */
}

/* ---- the commands -------------------------------------------------------------------------------- */

static int t_have_bin(void) { return access(tu_bin(), X_OK) == 0; }

static void test_cli_exit_codes(void) {
  if (!t_have_bin()) {
    fprintf(stderr, "\n  (spotlab binary not built: command checks skipped)\n");
    return;
  }
  char cmd[8192], *out = NULL;
  CU_ASSERT_EQUAL_FATAL(t_write("rpt_cli.h5", 3, 4, t_rev), 0);
  snprintf(cmd, sizeof cmd, "%s report rpt_nothere.h5", tu_bin());
  CU_ASSERT_EQUAL(tu_run(cmd, &out), 2);
  CU_ASSERT(out && strstr(out, "rpt_nothere.h5: cannot read"));
  free(out);
  snprintf(cmd, sizeof cmd, "%s report rpt_text.h5", tu_bin());
  tu_write("rpt_text.h5", "not hdf5\n");
  CU_ASSERT_EQUAL(tu_run(cmd, &out), 2);
  CU_ASSERT(out && strstr(out, "rpt_text.h5: not an HDF5 file"));
  free(out);
  snprintf(cmd, sizeof cmd, "%s report rpt_cli.h5 --out rpt_cli_report --gnuplot none", tu_bin());
  CU_ASSERT_EQUAL(tu_run(cmd, &out), 0);
  CU_ASSERT(out && strstr(out, "figures are skipped"));
  free(out);
  CU_ASSERT(t_exists("rpt_cli_report", "index.html"));
  snprintf(cmd, sizeof cmd, "%s compare rpt_cli.h5 rpt_nothere.h5", tu_bin());
  CU_ASSERT_EQUAL(tu_run(cmd, &out), 2);
  free(out);
  snprintf(cmd, sizeof cmd, "%s sweep %s/scenarios/phold.cfg --param phold.nosuchkey=1,2", tu_bin(), tu_src());
  CU_ASSERT_EQUAL(tu_run(cmd, &out), 2);
  free(out);
  snprintf(cmd, sizeof cmd, "%s sweep %s/scenarios/phold.cfg --param run.reps=1,2", tu_bin(), tu_src());
  CU_ASSERT_EQUAL(tu_run(cmd, &out), 2);
  free(out);
}

/* A part of a run (`run --shard`) is whole but not a run's results: report and compare say so and
 * name `spotlab merge` (issue 49.6: they called it "damaged"). compare --quiet prints no table. */
static void test_cli_shard_quiet(void) {
  if (!t_have_bin()) return;
  tu_write("rpt_shard.cfg", "model = \"phold\";\nrun = { seed = 3; reps = 4; end = 5.0; };\n"
                            "phold = { lps = 8; start = 1; lookahead = 0.1; mean = 0.9; remote = 0.1; };\n");
  char cmd[8192], *out = NULL;
  snprintf(cmd, sizeof cmd, "%s run rpt_shard.cfg --shard 1/2 --out rpt_shard_1.h5 --quiet", tu_bin());
  CU_ASSERT_EQUAL_FATAL(tu_run(cmd, NULL), 0);
  snprintf(cmd, sizeof cmd, "%s report rpt_shard_1.h5 --out rpt_shard_report --gnuplot none", tu_bin());
  CU_ASSERT_EQUAL(tu_run(cmd, &out), 2);
  CU_ASSERT(out && strstr(out, "a part of a run (replications 2-3 of 4") && strstr(out, "spotlab merge") &&
            !strstr(out, "damaged"));
  free(out);
  snprintf(cmd, sizeof cmd, "%s compare rpt_shard_1.h5 rpt_shard_1.h5 --out rpt_shard_cmp --gnuplot none", tu_bin());
  CU_ASSERT_EQUAL(tu_run(cmd, &out), 2);
  CU_ASSERT(out && strstr(out, "spotlab merge") && !strstr(out, "damaged"));
  free(out);
  snprintf(cmd, sizeof cmd, "%s run rpt_shard.cfg --out rpt_whole.h5 --quiet", tu_bin());
  CU_ASSERT_EQUAL_FATAL(tu_run(cmd, NULL), 0);
  snprintf(cmd, sizeof cmd, "%s compare rpt_whole.h5 rpt_whole.h5 --out rpt_quiet_cmp --gnuplot none --quiet",
           tu_bin());
  CU_ASSERT_EQUAL(tu_run(cmd, &out), 0);
  CU_ASSERT(out && !strstr(out, "Every metric") && !strstr(out, "events"));
  free(out);
  snprintf(cmd, sizeof cmd, "%s compare rpt_whole.h5 rpt_whole.h5 --out rpt_quiet_cmp --gnuplot none", tu_bin());
  CU_ASSERT_EQUAL(tu_run(cmd, &out), 0);
  CU_ASSERT(out && strstr(out, "Every metric"));
  free(out);
}

/* A real sweep of the engine's PHOLD model through the command, then its report. */
static void test_cli_sweep(void) {
  if (!t_have_bin()) return;
  tu_write("rpt_sweep_phold.cfg", "model = \"phold\";\nrun = { seed = 3; reps = 2; end = 20.0; };\n"
                                  "phold = { lps = 32; start = 1; lookahead = 0.1; mean = 0.9; remote = 0.1; };\n");
  char cmd[8192], *out = NULL;
  snprintf(cmd, sizeof cmd, "%s sweep rpt_sweep_phold.cfg --param phold.remote=0.0,0.5,1.0 --out rpt_cli_sweep.h5",
           tu_bin());
  CU_ASSERT_EQUAL(tu_run(cmd, &out), 0);
  CU_ASSERT(out && strstr(out, "point 3/3 done (phold.remote=1.0), 100%"));
  CU_ASSERT(out && strstr(out, "sweep: 3 of 3 points of phold.remote, 2 replications each"));
  free(out);
  CU_ASSERT(t_exists(".", "rpt_cli_sweep.points/point_0002.h5"));
  snprintf(cmd, sizeof cmd, "%s report rpt_cli_sweep.h5 --out rpt_cli_sweep_report", tu_bin());
  CU_ASSERT_EQUAL(tu_run(cmd, &out), 0);
  free(out);
  CU_ASSERT(t_exists("rpt_cli_sweep_report", "summary.csv"));
  if (rpt_gnuplot_available(NULL)) CU_ASSERT(t_exists("rpt_cli_sweep_report", "sweep_events.png"));
  /* two points of the sweep share seeds: compare pairs them */
  snprintf(cmd, sizeof cmd,
           "%s compare rpt_cli_sweep.points/point_0000.h5 rpt_cli_sweep.points/point_0002.h5 --out rpt_cli_cmp",
           tu_bin());
  CU_ASSERT_EQUAL(tu_run(cmd, &out), 0);
  CU_ASSERT(out && strstr(out, "seeds match"));
  free(out);
}

/* A grid's limits and order, on a hand-made sweep: key A (numeric, given as 3,1,2) and key B with 13
 * values. Against A: the quantity without a dimension has 13 lines, of which 12 are drawn; the one
 * per policy has 13 panels, of which 9 are drawn, and one legend; the lines run in increasing x.
 * Against B (categories b0..b12): one line per value of A, one panel per value of A. */
typedef struct t_figset {
  char *names[16], *bodies[16];
  int n;
} t_figset;
static void t_keep_figs(void *ctx, const char *name, const char *body) {
  t_figset *f = ctx;
  if (f->n < 16) f->names[f->n] = strdup(name), f->bodies[f->n++] = strdup(body);
}
static const char *t_fig_body(const t_figset *f, const char *name) {
  for (int i = 0; i < f->n; i++)
    if (!strcmp(f->names[i], name)) return f->bodies[i];
  return NULL;
}
static int t_count(const char *s, const char *what) {
  int n = 0;
  for (const char *p = s ? strstr(s, what) : NULL; p; p = strstr(p + 1, what)) n++;
  return n;
}
static void test_grid_limits(void) {
  enum { NA = 3, NB = 13, NP = NA * NB, NM = 3, R = 2 };
  static const char *const av[NA] = {"3", "1", "2"};
  char *labels[NP], *files[NP], *klabels[NP * 2], lab[NP][16], kb[NB][8], fl[NP][24];
  char *names[NM] = {"rev", "spend.policy.a", "spend.policy.b"}, *units[NM] = {"USD", "USD", "USD"};
  char *keys[2] = {"g.a", "g.b"};
  double x[NP], kx[NP * 2], vals[NP * R * NM];
  for (int b = 0; b < NB; b++) snprintf(kb[b], sizeof kb[b], "b%d", b);
  for (int i = 0; i < NA; i++)
    for (int b = 0; b < NB; b++) {
      int p = i * NB + b;
      snprintf(lab[p], sizeof lab[p], "%s, %s", av[i], kb[b]);
      snprintf(fl[p], sizeof fl[p], "p/%d.h5", p);
      labels[p] = lab[p], files[p] = fl[p], x[p] = NAN;
      klabels[p * 2] = (char *)av[i], klabels[p * 2 + 1] = kb[b];
      kx[p * 2] = atof(av[i]), kx[p * 2 + 1] = NAN;
      for (int r = 0; r < R; r++)
        for (int m = 0; m < NM; m++) vals[(p * R + r) * NM + m] = 10 * atof(av[i]) + b + m + 0.5 * r;
    }
  rpt_sweep s = {"g.a x g.b", "market", NP, NM, R, labels, x, names, units, vals, files};
  s.nkeys = 2, s.keys = keys, s.key_labels = klabels, s.key_x = kx;
  char err[RPT_ERRLEN];
  CU_ASSERT_EQUAL_FATAL(rpt_sweep_write("rpt_grid_limits.h5", &s, "m.cfg", 7, err, sizeof err), 0);
  t_figset f = {0};
  rpt_options opt = {"rpt_grid_limits_report", "none", 1, NULL, 0, t_keep_figs, &f};
  rpt_outcome o;
  CU_ASSERT_EQUAL_FATAL(rpt_report("rpt_grid_limits.h5", &opt, &o, err, sizeof err), 0);
  rpt_outcome_free(&o);
  CU_ASSERT_EQUAL(f.n, 4); /* two quantities against two keys */
  const char *ra = t_fig_body(&f, "sweep_rev_vs_g_a"), *pa = t_fig_body(&f, "sweep_spend_by_policy_vs_g_a"),
             *rb = t_fig_body(&f, "sweep_rev_vs_g_b"), *pb = t_fig_body(&f, "sweep_spend_by_policy_vs_g_b");
  CU_ASSERT_FATAL(ra && pa && rb && pb);
  CU_ASSERT_EQUAL(t_count(ra, "with linespoints"), 12); /* 13 values of b: 12 lines */
  CU_ASSERT(strstr(ra, "title 'b = b11'") && !strstr(ra, "title 'b = b12'"));
  CU_ASSERT(strstr(ra, "$p0_0 << EOD\n1 ") != NULL);  /* A given as 3,1,2: drawn from 1 */
  CU_ASSERT_EQUAL(t_count(pa, "set title 'b = "), 9); /* 13 panels: 9 */
  CU_ASSERT_EQUAL(t_count(pa, "\nplot "), 10);        /* 9 panels and the legend */
  CU_ASSERT(strstr(pa, "set multiplot title") && strstr(pa, "unset multiplot"));
  CU_ASSERT(strstr(pa, "set xtics ('1' 1, '2' 2, '3' 3)") != NULL);
  CU_ASSERT_EQUAL(t_count(rb, "with yerrorbars"), 3); /* categories: one line per value of a */
  CU_ASSERT(strstr(rb, "title 'a = 3'") && strstr(rb, "'b12' 12)"));
  CU_ASSERT_EQUAL(t_count(pb, "set title 'a = "), 3);
  for (int i = 0; i < f.n; i++) free(f.names[i]), free(f.bodies[i]);
}

/* A grid of two keys (issue 47.4) from the command, on the 32-GPU cluster of five policies: the
 * report draws each quantity against each key that varies (numeric: a line with its band; the
 * churn fits: categories), one panel per value of the other key for a quantity per policy, one
 * line per value of the other key otherwise; names each key on the page, in the cheapest-policy
 * table and on the axes, in words with units. A key with one value is no axis. */
static void test_cli_grid_sweep(void) {
  if (!t_have_bin()) return;
  char cmd[8192], *out = NULL;
  snprintf(cmd, sizeof cmd,
           "%s sweep %s/scenarios/cluster_32.cfg --param 'market.personas.katie.fit=\"microsoft99\",\"skype06\"' "
           "--param market.training.standby_k=1,2 --param 'run.end=\"12h\"' --reps 2 --out rpt_grid.h5 --quiet",
           tu_bin(), tu_src());
  CU_ASSERT_EQUAL_FATAL(tu_run(cmd, &out), 0);
  free(out);
  /* the scripts, whatever gnuplot there is */
  char *all = NULL, err[RPT_ERRLEN];
  size_t len;
  FILE *o = open_memstream(&all, &len);
  rpt_options opt = {"rpt_grid_scripts", "none", 1, NULL, 0, t_keep_all, o};
  rpt_outcome res;
  CU_ASSERT_EQUAL(rpt_report("rpt_grid.h5", &opt, &res, err, sizeof err), 0);
  rpt_outcome_free(&res);
  fclose(o);
  CU_ASSERT_PTR_NOT_NULL_FATAL(all);
  CU_ASSERT(strstr(all, "set xlabel 'standby k (GPUs), key market.training.standby_k'") != NULL); /* its unit */
  CU_ASSERT(strstr(all, "set xlabel 'fit, key market.personas.katie.fit'") != NULL);
  CU_ASSERT(strstr(all, "set xlabel 'end") == NULL); /* one value: not an axis */
  CU_ASSERT(strstr(all, "set ylabel 'spend per useful GPU h (USD/h)'") != NULL);
  CU_ASSERT(strstr(all, "set xtics ('microsoft99' 0, 'skype06' 1)") != NULL); /* categories, quotes dropped */
  CU_ASSERT(strstr(all, "set title 'fit = skype06'") != NULL);                /* a panel per other value */
  CU_ASSERT(strstr(all, "title 'standby k = 2'") != NULL);                    /* a line per other value */
  CU_ASSERT(strstr(all, "with filledcurves") != NULL);                        /* the numeric key's band */
  CU_ASSERT(strstr(all, "with yerrorbars") != NULL);                          /* the categories' whiskers */
  CU_ASSERT(strstr(all, "title 'checkpoint+standby'") != NULL);
  free(all);
  /* the page and the tables (figures below, on a smaller grid: this one has 142, ~20 s of gnuplot) */
  snprintf(cmd, sizeof cmd, "%s report rpt_grid.h5 --out rpt_grid_report --gnuplot none", tu_bin());
  CU_ASSERT_EQUAL(tu_run(cmd, &out), 0);
  free(out);
  char *html = t_slurp("rpt_grid_report/index.html"), *cheap = t_slurp("rpt_grid_report/cheapest_policy.csv");
  CU_ASSERT(html &&
            strstr(html, "a grid of 4 points over 3 keys: <code>market.personas.katie.fit</code> "
                         "(&quot;microsoft99&quot;, &quot;skype06&quot;); <code>market.training.standby_k</code> "
                         "(1, 2); <code>run.end</code> (&quot;12h&quot;)"));
  const char *head = "market.personas.katie.fit,market.training.standby_k,run.end,cheapest,";
  CU_ASSERT(cheap && !strncmp(cheap, head, strlen(head)));
  CU_ASSERT(cheap && csv_records(cheap, 12, NULL, NULL) == 5); /* the header and the four points, every key named */
  free(html);
  free(cheap);
  /* the figure files, drawn by gnuplot, per key: a PHOLD grid of 2 x 2 points (a few metrics) */
  if (!rpt_gnuplot_available(NULL)) return;
  tu_write("rpt_grid_phold.cfg", "model = \"phold\";\nrun = { seed = 3; reps = 2; end = 20.0; };\n"
                                 "phold = { lps = 32; start = 1; lookahead = 0.1; mean = 0.9; remote = 0.1; };\n");
  snprintf(cmd, sizeof cmd,
           "%s sweep rpt_grid_phold.cfg --param phold.remote=0.0,0.5 --param phold.mean=0.4,1.9 --out "
           "rpt_grid_phold.h5 --quiet && %s report rpt_grid_phold.h5 --out rpt_grid_phold_report --quiet",
           tu_bin(), tu_bin());
  CU_ASSERT_EQUAL_FATAL(tu_run(cmd, &out), 0);
  free(out);
  const char *const figs[] = {"sweep_events_vs_phold_remote", "sweep_events_vs_phold_mean", NULL};
  for (size_t i = 0; figs[i]; i++) {
    char f[256];
    snprintf(f, sizeof f, "%s.png", figs[i]);
    CU_ASSERT(t_exists("rpt_grid_phold_report", f));
    snprintf(f, sizeof f, "%s.svg", figs[i]);
    CU_ASSERT(t_exists("rpt_grid_phold_report", f));
  }
  html = t_slurp("rpt_grid_phold_report/index.html");
  CU_ASSERT(html && strstr(html, "src=\"sweep_events_vs_phold_mean.png\"") != NULL);
  free(html);
}

/* CSV formula injection (OWASP): a text cell a spreadsheet would run as a formula (= + - @, a tab,
 * a carriage return first) is written with a single quote before it, quoted; a number, negative or
 * with a sign, stays a number; other texts as before. Then through a whole report: the summary
 * CSV of a results file whose metric names and units start with formulas. */
static char *t_csv_of(const char *field) {
  char *b = NULL;
  size_t n = 0;
  FILE *o = open_memstream(&b, &n);
  rpt_csv_field(o, field);
  fclose(o);
  return b;
}
static void test_csv_formula_injection(void) {
  static const char *const cases[][2] = {
      {"=cmd|' /C calc'!A0", "\"'=cmd|' /C calc'!A0\""},
      {"=HYPERLINK(\"http://x\",\"y\")", "\"'=HYPERLINK(\"\"http://x\"\",\"\"y\"\")\""},
      {"+1+cmd|x", "\"'+1+cmd|x\""},
      {"-2+3", "\"'-2+3\""},
      {"@SUM(A1:A2)", "\"'@SUM(A1:A2)\""},
      {"\t=1", "\"'\t=1\""},
      {"\r=1", "\"'\r=1\""},
      {"-", "\"'-\""},
      {"-inf", "\"'-inf\""}, /* not a decimal number: a text */
      {"-0.5", "-0.5"},
      {"+1e-3", "+1e-3"},
      {"-.25E+2", "-.25E+2"},
      {"-12", "-12"},
      {"a=b", "a=b"},
      {"x,y", "\"x,y\""},
      {"", ""},
      {"jobs", "jobs"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char *got = t_csv_of(cases[i][0]);
    CU_ASSERT_PTR_NOT_NULL_FATAL(got);
    if (strcmp(got, cases[i][1])) fprintf(stderr, "\n  rpt_csv_field(%s) = %s, not %s", cases[i][0], got, cases[i][1]);
    CU_ASSERT_STRING_EQUAL(got, cases[i][1]);
    free(got);
  }
  sim_metric_def md[2] = {{"=HYPERLINK(1)", "@u", "", 0}, {"+x.persona.-cmd|a", "-USD", "", 0}};
  double v[2 * 2] = {1, -2, 1.5, -2.5};
  CU_ASSERT_EQUAL_FATAL(t_write_metrics("rpt_csv_formula.h5", 2, md, 2, v), 0);
  char err[RPT_ERRLEN];
  rpt_options opt = {"rpt_csv_formula_report", "none", 1, NULL, 0};
  rpt_outcome out;
  CU_ASSERT_EQUAL(rpt_report("rpt_csv_formula.h5", &opt, &out, err, sizeof err), 0);
  rpt_outcome_free(&out);
  char *csv = t_slurp("rpt_csv_formula_report/summary.csv");
  CU_ASSERT_PTR_NOT_NULL_FATAL(csv);
  /* no record has a field that starts with a formula character, outside a number */
  for (const char *l = csv; *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : l + strlen(l))
    for (const char *f = l; f && *f && *f != '\n'; f = strpbrk(f, ",\n"), f = f && *f == ',' ? f + 1 : NULL)
      CU_ASSERT(!strchr("=+@", *f) && (*f != '-' || (f[1] >= '0' && f[1] <= '9') || f[1] == '.'));
  CU_ASSERT(strstr(csv, "\"'=HYPERLINK(1)\"") != NULL && strstr(csv, "\"'@u\"") != NULL);
  CU_ASSERT(strstr(csv, "\"'-cmd|a\"") != NULL && strstr(csv, "\"'-USD\"") != NULL);
  CU_ASSERT(strstr(csv, ",-2,") != NULL || strstr(csv, ",-2.") != NULL); /* a negative mean stays a number */
  free(csv);
}

/* ---- hostile files (issue 49.1, 49.3) ------------------------------------------------------------ */

/* Every text a file carries reaches gnuplot, HTML, Markdown, CSV and the terminal as data. Each
 * payload would create a file named pwn_X in the working folder if any output ran it as a gnuplot
 * command (a newline ends a command; `!CMD` runs CMD; "EOD" ends a datablock), and one named
 * <svg/onload=1> or with a newline would inject HTML or split a CSV row. */
static const char *const t_pwn[] = {"pwn_a", "pwn_b", "pwn_c", "pwn_d", "pwn_e", "pwn_f", "pwn_g",
                                    "pwn_h", "pwn_i", "pwn_j", "pwn_k", "pwn_l", "pwn_m", "pwn_n",
                                    "pwn_o", "pwn_p", "pwn_q", "pwn_r", "pwn_s", NULL};
static void t_pwn_clear(void) {
  for (size_t i = 0; t_pwn[i]; i++) unlink(t_pwn[i]);
}
static int t_pwned(void) {
  int n = 0;
  for (size_t i = 0; t_pwn[i]; i++)
    if (access(t_pwn[i], F_OK) == 0) {
      fprintf(stderr, "\n  a hostile name ran a command: %s exists", t_pwn[i]);
      n++;
    }
  return n;
}

/* RFC 4180 records and fields of a CSV text (tests/csv_records.h, the fuzz target's oracle too):
 * every record must have `want` fields. Returns the number of records, or -1. */
static int t_csv_records(const char *s, int want) { return csv_records(s, want, NULL, NULL); }

static const char *const t_h_regions[] = {"'\n!touch pwn_e\n", "<i>r</i>", "x"};
static const char *const t_h_classes[] = {"'\n!touch pwn_f\n", "b", "c"};
static const sim_series_def t_h_series[] = {
    {MKT_SERIES_RENTED, "GPU*ms", T_BIN, 3, t_h_regions, "rented"},
    {MKT_SERIES_AVAIL, "GPU*ms", T_BIN, 3, t_h_regions, "available"},
    {MKT_SERIES_PRICE_SUM, "USD*1e-6/GPU-h", T_BIN, 3, t_h_classes, "price sum"},
    {MKT_SERIES_PRICE_N, "1", T_BIN, 3, t_h_classes, "price count"},
};
#define T_HNM 10
static const sim_metric_def t_h_metrics[T_HNM] = {
    {"revenue", "USD", ""},
    {"income.persona.'\n!touch pwn_g\n", "USD", ""},
    {"income.persona.<svg/onload=1>", "USD", ""},
    {"goodput.policy.'\n!touch pwn_h\n.churn'\n!touch pwn_l\n.v", "1", ""},
    {"goodput.policy.\nEOD\n!touch pwn_i\n.churn'\n!touch pwn_l\n.v", "1", ""},
    {"wait'\n!touch pwn_j\n.policy.x.churn'\n!touch pwn_l\n.v", "s", ""},
    {"a,b\nc", "USD'\n!touch pwn_k\n", ""},
    {"lost.policy.p.churn'\n!touch pwn_l\n.v", "GPU*h", ""},
    {"lost.policy.q.churn'\n!touch pwn_l\n.v", "GPU*h", ""},
    {"util.region.<svg/onload=1>", "1", ""},
};

/* A market-like results file whose names are all hostile. */
static int t_write_hostile(const char *path, int reps, uint64_t base_seed) {
  sim_model m = {"fake_market", NULL, 0, NULL, 0, 0, 1.0, T_END, NULL, t_h_series, 4, t_tables, 3};
  sim_results *r = calloc((size_t)reps, sizeof *r);
  double *v = calloc((size_t)reps * T_HNM, sizeof *v);
  for (int i = 0; i < reps; i++) {
    t_fill_rep(&r[i], sim_rep_seed(base_seed, (unsigned)i));
    t_prov *p = (t_prov *)r[i].tables[0];
    for (int k = 0; k < T_NPROV; k++) {
      snprintf(p[k].persona, 16, "%s", k % 2 ? "'\n!touch pwn_a\n" : "<svg/onload=1>");
      snprintf(p[k].pool, 16, "%s", k % 3 ? "\nEOD\n!touch pwm" : "a,b\nc");
    }
    t_job *j = (t_job *)r[i].tables[1];
    for (int k = 0; k < T_NJOBS; k++) {
      if (k % 3 == 0) snprintf(j[k].cls, 16, "%s", "'\n!touch pwn_b\n");
      if (k % 9 < 3) snprintf(j[k].policy, 16, "%s", "'\n!touch pwn_c\n");
    }
    t_avail *a = (t_avail *)r[i].tables[2];
    for (size_t k = 0; k < r[i].nrecords[2]; k++)
      if (k % 2) snprintf(a[k].state, 16, "%s", "'\n!touch pwn_d\n");
    for (int k = 0; k < T_HNM; k++) v[i * T_HNM + k] = 1.0 + k + 0.1 * i + (k == 0 ? (double)(i % 3) : 0);
  }
  sim_run_meta meta = {"fake_market", "fake.cfg", "model = \"fake_market\";", "eff", base_seed, reps, 1, 1, 0.1, T_END};
  char err[256];
  int rc = sim_results_write(path, &meta, &m, r, t_h_metrics, T_HNM, v, err, sizeof err);
  for (int i = 0; i < reps; i++) {
    for (int s = 0; s < 4; s++) free(r[i].series[s]);
    for (int t = 0; t < 3; t++) free(r[i].tables[t]);
    free(r[i].series);
    free(r[i].nbins);
    free(r[i].tables);
    free(r[i].nrecords);
  }
  free(r);
  free(v);
  return rc;
}

static void test_hostile_results(void) {
  t_pwn_clear();
  CU_ASSERT_EQUAL_FATAL(t_write_hostile("rpt_hostile.h5", 4, 31), 0);
  CU_ASSERT_EQUAL_FATAL(t_write_hostile("rpt_hostile_b.h5", 4, 31), 0);
  FILE *log = fopen("rpt_hostile.log", "w");
  rpt_options opt = {"rpt_hostile_report", NULL, 0, log, 0};
  rpt_outcome o;
  char err[RPT_ERRLEN];
  int rc = rpt_report("rpt_hostile.h5", &opt, &o, err, sizeof err);
  fclose(log);
  CU_ASSERT_EQUAL(rc, 0);
  CU_ASSERT_EQUAL(t_pwned(), 0);
  if (rpt_gnuplot_available(NULL)) { /* gnuplot read every script as data: no figure failed */
    for (size_t i = 0; i < o.nskipped; i++) {
      CU_ASSERT(strstr(o.skipped[i], "gnuplot failed") == NULL);
      fprintf(stderr, "\n  skipped: %s", o.skipped[i]);
    }
    CU_ASSERT(o.figures_drawn >= 6);
    /* the names are on the figures as text */
    char *svg = t_slurp("rpt_hostile_report/utilization.svg");
    CU_ASSERT(svg && strstr(svg, "!touch pwn_e") != NULL);
    free(svg);
  }
  rpt_outcome_free(&o);
  /* HTML: the names shown, escaped */
  char *html = t_slurp("rpt_hostile_report/index.html");
  CU_ASSERT_PTR_NOT_NULL_FATAL(html);
  CU_ASSERT(strstr(html, "<svg") == NULL && strstr(html, "<i>r</i>") == NULL);
  CU_ASSERT(strstr(html, "&lt;svg/onload=1&gt;") != NULL);
  free(html);
  /* CSV: one record per metric, 11 fields each, the name with a newline quoted whole */
  char *csv = t_slurp("rpt_hostile_report/summary.csv");
  CU_ASSERT_EQUAL(t_csv_records(csv ? csv : "", 11), T_HNM + 1);
  CU_ASSERT(csv && strstr(csv, ",\"a,b\nc\",") != NULL);
  free(csv);
  /* Markdown: no row is split, no raw HTML */
  char *md = t_slurp("rpt_hostile_report/summary.md");
  CU_ASSERT(md && strstr(md, "<svg") == NULL && strstr(md, "\n!touch") == NULL);
  free(md);
  /* compare: the same, and the printed table shows no control character */
  FILE *tab = fopen("rpt_hostile_cmp.txt", "w");
  rpt_options copt = {"rpt_hostile_cmp", NULL, 1, tab, 0};
  rpt_diff *d = NULL;
  size_t nd;
  int seeds;
  CU_ASSERT_EQUAL(rpt_compare("rpt_hostile.h5", "rpt_hostile_b.h5", &copt, tab, &d, &nd, &seeds, err, sizeof err), 0);
  fclose(tab);
  free(d);
  CU_ASSERT_EQUAL(t_pwned(), 0);
  char *txt = t_slurp("rpt_hostile_cmp.txt");
  CU_ASSERT(txt && strstr(txt, "\n!touch") == NULL && strstr(txt, "?!touch pwn_g?") != NULL);
  free(txt);
  char *cmd = t_slurp("rpt_hostile_cmp/compare.md"), *ccsv = t_slurp("rpt_hostile_cmp/compare.csv");
  CU_ASSERT(cmd && strstr(cmd, "<svg") == NULL && strstr(cmd, "\n!touch") == NULL);
  CU_ASSERT_EQUAL(t_csv_records(ccsv ? ccsv : "", 13), T_HNM + 1);
  free(cmd);
  free(ccsv);
  t_pwn_clear();
}

/* A sweep file and an experiment file with hostile keys, values, metric names and units; the
 * experiment's factor is the issue's own payload (a datablock line "EOD", then a command). */
static void test_hostile_sweep_experiment(void) {
  t_pwn_clear();
  char *labels[2] = {"\nEOD\n!touch pwn_m\n", "<svg/onload=1>"}, *files[2] = {"p/0'\n!touch pwn_n\n", "p/1.h5"};
  char *names[3] = {"rev'\n!touch pwn_o\n", "income.persona.'\n!touch pwn_p\n", "income.persona.<b>"};
  char *units[3] = {"USD'\n!touch pwn_q\n", "USD", "USD"};
  double x[2] = {NAN, NAN}, vals[2 * 2 * 3];
  for (int i = 0; i < 12; i++) vals[i] = 1 + i * 0.37;
  rpt_sweep s = {"mk'\n!touch pwn_r\n.k", "market", 2, 3, 2, labels, x, names, units, vals, files};
  char err[RPT_ERRLEN];
  CU_ASSERT_EQUAL_FATAL(rpt_sweep_write("rpt_hostile_sweep.h5", &s, "m.cfg", 7, err, sizeof err), 0);
  FILE *log = fopen("rpt_hostile_sweep.log", "w");
  rpt_options opt = {"rpt_hostile_sweep_report", NULL, 0, log, 0};
  rpt_outcome o;
  CU_ASSERT_EQUAL(rpt_report("rpt_hostile_sweep.h5", &opt, &o, err, sizeof err), 0);
  fclose(log);
  CU_ASSERT_EQUAL(t_pwned(), 0);
  if (rpt_gnuplot_available(NULL)) CU_ASSERT(o.figures_drawn >= 2);
  rpt_outcome_free(&o);
  char *html = t_slurp("rpt_hostile_sweep_report/index.html");
  CU_ASSERT(html && strstr(html, "<svg") == NULL && strstr(html, "<b>") == NULL);
  free(html);
  char *csv = t_slurp("rpt_hostile_sweep_report/summary.csv");
  CU_ASSERT_EQUAL(t_csv_records(csv ? csv : "", 10), 1 + 2 * 3);
  free(csv);
  /* the same as a grid of two keys (rpt_grid.c: axes, tics, panel titles, legends, the page's keys) */
  char *keys[2] = {"\nEOD\n!touch pwn_g\n", "k'\n!touch pwn_h\n"};
  char *klabels[4] = {"'\n!touch pwn_i\n", "1", "<svg/onload=1>", "2"};
  double kx[4] = {NAN, 1, NAN, 2};
  s.nkeys = 2, s.keys = keys, s.key_labels = klabels, s.key_x = kx;
  CU_ASSERT_EQUAL_FATAL(rpt_sweep_write("rpt_hostile_grid.h5", &s, "m.cfg", 7, err, sizeof err), 0);
  log = fopen("rpt_hostile_grid.log", "w");
  rpt_options gopt = {"rpt_hostile_grid_report", NULL, 0, log, 0};
  CU_ASSERT_EQUAL(rpt_report("rpt_hostile_grid.h5", &gopt, &o, err, sizeof err), 0);
  fclose(log);
  CU_ASSERT_EQUAL(t_pwned(), 0);
  if (rpt_gnuplot_available(NULL)) CU_ASSERT(o.figures_drawn >= 4); /* two quantities against two keys */
  rpt_outcome_free(&o);
  html = t_slurp("rpt_hostile_grid_report/index.html");
  CU_ASSERT(html && strstr(html, "<svg") == NULL && strstr(html, "<b>") == NULL && strstr(html, "a grid of 2 points"));
  free(html);
  csv = t_slurp("rpt_hostile_grid_report/summary.csv");
  CU_ASSERT_EQUAL(t_csv_records(csv ? csv : "", 10), 1 + 2 * 3);
  free(csv);

  /* experiment: 2 points x 2 factors, 2 metrics, 1 constraint, 2 objectives, 2 replications */
  char *factors[2] = {"\nEOD\n!touch pwn_s\n", "b'\n!touch pwn_a\n"};
  char *elabels[4] = {"\nEOD\n!touch pwn_b\n", "1", "<svg/onload=1>", "2"};
  char *enames[2] = {"m'\n!touch pwn_c\n", "<b>n</b>"}, *eunits[2] = {"U'\n!touch pwn_d\n", "1"};
  char *cons[1] = {"m < 3'\n!touch pwn_e\n"}, *objs[2] = {"maximize '\n!touch pwn_f\n", "minimize <b>"};
  char *pfiles[2] = {"p0.h5", "p1.h5"};
  double ex[4] = {0, 1, 1, 2}, ev[2 * 2 * 2] = {1, 2, 1.2, 2.1, 3, 1, 3.3, 1.1};
  double mean[4] = {1.1, 2.05, 3.15, 1.05}, lo[4] = {1, 2, 3, 1}, hi[4] = {1.2, 2.1, 3.3, 1.1};
  double met[2] = {1, 0}, conf[2] = {0.9, 0.2}, feas[2] = {1, 0}, par[2] = {1, 0}, sens[4] = {0.5, -0.5, 0.2, 0.1};
  double r2[2] = {0.9, 0.8};
  int cm[1] = {0}, om[2] = {0, 1};
  rpt_experiment e = {"market", "factorial", "SRC (test)", 7,      2,      2,  2,    2,    1,  2,
                      factors,  elabels,     ex,           enames, eunits, ev, mean, lo,   hi, cons,
                      cm,       met,         conf,         feas,   objs,   om, par,  sens, r2, pfiles};
  CU_ASSERT_EQUAL_FATAL(rpt_experiment_write("rpt_hostile_exp.h5", &e, "e.cfg", "s.cfg", err, sizeof err), 0);
  log = fopen("rpt_hostile_exp.log", "w");
  rpt_options eopt = {"rpt_hostile_exp_report", NULL, 0, log, 0};
  CU_ASSERT_EQUAL(rpt_report("rpt_hostile_exp.h5", &eopt, &o, err, sizeof err), 0);
  fclose(log);
  CU_ASSERT_EQUAL(t_pwned(), 0);
  if (rpt_gnuplot_available(NULL)) {
    CU_ASSERT_EQUAL(o.figures_drawn, 3); /* pareto, sensitivity, feasible_map: gnuplot read them whole */
    char *svg = t_slurp("rpt_hostile_exp_report/sensitivity.svg");
    CU_ASSERT(svg && strstr(svg, "EOD !touch pwn_s") != NULL); /* the factor, shown as its text */
    free(svg);
  }
  rpt_outcome_free(&o);
  html = t_slurp("rpt_hostile_exp_report/index.html");
  CU_ASSERT(html && strstr(html, "<svg") == NULL && strstr(html, "<b>") == NULL);
  free(html);
  csv = t_slurp("rpt_hostile_exp_report/summary.csv");
  CU_ASSERT_EQUAL(t_csv_records(csv ? csv : "", 11), 1 + 2 * 2);
  free(csv);
  t_pwn_clear();
}

static CU_TestInfo stats_tests[] = {
    {"t interval against a hand computation", test_ci_known},
    {"paired interval against a hand computation", test_ci_paired_known},
    {"metric names split by dimension", test_metric_split},
    CU_TEST_INFO_NULL,
};
/* The cheapest policy at each point of a sweep over policies (rpt_cheapest.c), on random sweeps
 * (3-5 policies, 1-4 points, 2-8 replications; values drawn around per-policy levels, some
 * replications infinite): the CSV's cheapest has the lowest mean among the policies finite in every
 * replication, the runner-up the next, the difference and its interval are the paired ones, the
 * verdict says "yes" exactly when the interval is above 0, and a policy infinite somewhere is listed
 * as not ranked and never ranked. A sweep with one policy writes nothing. */
static void test_cheapest_policy(void) {
  gsl_rng *g = gsl_rng_alloc(gsl_rng_mt19937);
  gsl_rng_set(g, 4242);
  static const char *pols[] = {"none", "checkpoint", "standby", "replicate", "checkpoint+standby"};
  for (int cs = 0; cs < 300; cs++) {
    unsigned np = 1 + (unsigned)gsl_rng_uniform_int(g, 4), npol = 3 + (unsigned)gsl_rng_uniform_int(g, 3);
    int reps = 2 + (int)gsl_rng_uniform_int(g, 7);
    unsigned nm = npol + 2; /* two other metrics around them */
    rpt_sweep s;
    memset(&s, 0, sizeof s);
    snprintf(s.param, sizeof s.param, "market.personas.host.fit");
    s.npoints = np, s.nmetrics = nm, s.reps = reps;
    char *names[8], *units[8], *labels[4];
    char nb[8][64], lb[4][16];
    names[0] = "jobs_served", names[nm - 1] = "spend_per_useful_gpu_h.policy.none.extra";
    for (unsigned i = 0; i < npol; i++) {
      snprintf(nb[i], sizeof nb[i], "spend_per_useful_gpu_h.policy.%s", pols[i]);
      names[1 + i] = nb[i];
    }
    for (unsigned m = 0; m < nm; m++) units[m] = "USD/h";
    for (unsigned p = 0; p < np; p++) {
      snprintf(lb[p], sizeof lb[p], "p%u", p);
      labels[p] = lb[p];
    }
    s.names = names, s.units = units, s.labels = labels;
    double *v = calloc((size_t)np * reps * nm, sizeof *v);
    CU_ASSERT_PTR_NOT_NULL_FATAL(v);
    for (unsigned p = 0; p < np; p++)
      for (unsigned i = 0; i < npol; i++) {
        double level = 0.5 + gsl_rng_uniform(g), sd = 0.2 * gsl_rng_uniform(g);
        int inf = gsl_rng_uniform(g) < 0.15;
        for (int r = 0; r < reps; r++)
          v[((size_t)p * reps + r) * nm + 1 + i] = inf && r == reps - 1 ? INFINITY : level + gsl_ran_gaussian(g, sd);
      }
    s.values = v;
    char *mb = NULL, *hb = NULL, *cb = NULL;
    size_t ml = 0, hl = 0, cl = 0;
    FILE *md = open_memstream(&mb, &ml), *html = open_memstream(&hb, &hl), *csv = open_memstream(&cb, &cl);
    CU_ASSERT_EQUAL(rpt__cheapest(&s, "spend_per_useful_gpu_h", "spend", md, html, csv), 0);
    fclose(md), fclose(html), fclose(csv);
    /* the rows, one per point, after the header */
    char *line = strchr(cb, '\n');
    for (unsigned p = 0; p < np && line; p++) {
      char *row = line + 1, *end = strchr(row, '\n');
      CU_ASSERT_PTR_NOT_NULL_FATAL(end);
      *end = 0;
      char f[10][128];
      int nf = 0;
      char *q = row;
      while (nf < 10) { /* no field of these has a comma or a quote except not_ranked: last */
        char *c = nf < 9 ? strchr(q, ',') : NULL;
        size_t len = c ? (size_t)(c - q) : strlen(q);
        snprintf(f[nf++], sizeof f[0], "%.*s", (int)len, q);
        if (!c) break;
        q = c + 1;
      }
      CU_ASSERT_EQUAL(nf, 10);
      /* brute force: means of the policies finite in every replication */
      double mean[5];
      int fin[5], best = -1, second = -1;
      for (unsigned i = 0; i < npol; i++) {
        double sum = 0;
        fin[i] = 1;
        for (int r = 0; r < reps; r++) {
          double x = v[((size_t)p * reps + r) * nm + 1 + i];
          fin[i] &= isfinite(x) != 0;
          sum += x;
        }
        mean[i] = sum / reps;
        if (!fin[i]) {
          CU_ASSERT_PTR_NOT_NULL(strstr(f[9], pols[i]));
          continue;
        }
        if (best < 0 || mean[i] < mean[best])
          second = best, best = (int)i;
        else if (second < 0 || mean[i] < mean[second])
          second = (int)i;
      }
      CU_ASSERT_STRING_EQUAL(f[1], best >= 0 ? pols[best] : ""); /* none: an empty cell */
      CU_ASSERT_STRING_EQUAL(f[3], second >= 0 ? pols[second] : "");
      if (second >= 0) {
        double d[8];
        for (int r = 0; r < reps; r++)
          d[r] = v[((size_t)p * reps + r) * nm + 1 + second] - v[((size_t)p * reps + r) * nm + 1 + best];
        rpt_ci ci;
        rpt_ci_t(d, (size_t)reps, 1, &ci);
        CU_ASSERT_DOUBLE_EQUAL(strtod(f[5], NULL), ci.mean, 1e-9);
        CU_ASSERT_DOUBLE_EQUAL(strtod(f[6], NULL), ci.lo, 1e-9);
        CU_ASSERT(strtod(f[5], NULL) >= -1e-12); /* the runner-up's mean is not below the cheapest's */
        CU_ASSERT_EQUAL(!strncmp(f[8], "yes", 3), ci.lo > 0);
      }
      line = end;
    }
    free(mb), free(hb), free(cb), free(v);
  }
  /* one policy: nothing written */
  rpt_sweep s1;
  memset(&s1, 0, sizeof s1);
  char *n1[] = {"spend_per_useful_gpu_h.policy.none"}, *u1[] = {"USD/h"}, *l1[] = {"a"};
  double v1[2] = {1, 2};
  s1.npoints = 1, s1.nmetrics = 1, s1.reps = 2, s1.names = n1, s1.units = u1, s1.labels = l1, s1.values = v1;
  char *b = NULL;
  size_t bl = 0;
  FILE *o = open_memstream(&b, &bl);
  CU_ASSERT_EQUAL(rpt__cheapest(&s1, "spend_per_useful_gpu_h", "spend", o, o, o), 0);
  fclose(o);
  CU_ASSERT_EQUAL(bl, 0);
  free(b);
  gsl_rng_free(g);
}

static CU_TestInfo report_tests[] = {
    {"damaged files that declare more data than they hold", test_declared_too_big},
    {"a small run's report has every promised file", test_report_every_file},
    {"summary table: hand-computed CI, sections", test_summary_values},
    {"no policy split drawn when each class has its one policy", test_report_no_policy_split},
    {"without gnuplot: tables, index, a clear message", test_report_without_gnuplot},
    {"figures without inputs are skipped with a reason", test_report_skips_missing_inputs},
    {"policy x churn metrics and jobs (fault-tolerance layout)", test_report_policy_levels},
    {"missing, damaged, incomplete, other-version files", test_bad_files},
    {"compare: paired CI, seed check", test_compare_paired},
    {"figures name metrics in words: labels from the file, else readable names", test_figures_in_words},
    {"compare: headline first, significant changes first in the figure, one row per name", test_compare_headline_order},
    {"sweep file round trip and its report", test_sweep_round_trip},
    {"ranges, durations and checks from names and units", test_ranges_and_checks},
    {"intervals clipped, durations in hours, constant quantities and checks as table lines",
     test_summary_clipped_hours_lines},
    {"sweep: checks and constant quantities as table lines, not figures", test_sweep_lines},
    {"market figures: price with traded volume, hours everywhere, distinct styles", test_market_figures_inform},
    {"hostile names in a results file: no command runs, HTML/Markdown/CSV hold them as text", test_hostile_results},
    {"hostile sweep and experiment files (the issue's EOD payload): no command runs", test_hostile_sweep_experiment},
    {"CSV formula injection: = + - @ tab CR texts neutralised, numbers kept", test_csv_formula_injection},
    {"a grid's figures: at most 12 lines and 9 panels, numbers in increasing order", test_grid_limits},
    {"the cheapest policy per sweep point: lowest finite mean, paired excess of the runner-up (random)",
     test_cheapest_policy},
    CU_TEST_INFO_NULL,
};
static CU_TestInfo cli_tests[] = {
    {"report/compare/sweep exit statuses", test_cli_exit_codes},
    {"a --shard part is named as one (merge it); compare --quiet prints no table", test_cli_shard_quiet},
    {"sweep of PHOLD, its report, compare of two points", test_cli_sweep},
    {"a two-key grid sweep: figures against each key, keys named in words with units", test_cli_grid_sweep},
    CU_TEST_INFO_NULL,
};
CU_SuiteInfo spotlab_suites[] = {
    {"report_stats", NULL, NULL, NULL, NULL, stats_tests},
    {"report", NULL, NULL, NULL, NULL, report_tests},
    {"report_cli", NULL, NULL, NULL, NULL, cli_tests},
    CU_SUITE_INFO_NULL,
};
