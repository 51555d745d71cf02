/* cmd_bench_market.c - `spotlab bench market`: the market model at scale.
 *
 * Builds a market of N single-GPU providers in three regions (or --regions R; the personas, pools and job classes
 * of scenarios/default.cfg, demand scaled with the supply), runs it for D days with hourly billing
 * and prints wall time, events per second and memory per GPU (peak resident memory of all ranks,
 * and the part above the process's footprint before the model was built). Tables are off, so the
 * figure is the simulation's own memory, not the output's. --out FILE appends a CSV line per run;
 * --repeat and --versus run it several times and against a second size in the same process.
 */
#include "app/app.h"
#include "app/cli.h"
#include "models/market/mkt_model.h"
#include "spotlab_config.h"

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

static double bm__rss_mib(void) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return (double)ru.ru_maxrss / 1024.0; /* Linux: KiB */
}

/* Engine events by message kind: each LP type's handler is wrapped by one that counts the kind of
 * the message and calls it (one indirect call more per event, well under 1% of a market event).
 * Statics, as a benchmark runs one model per process. */
#define BM__TYPES 4
typedef void (*bm__handler)(sim_lp *, void *, const void *, sim_id);
static bm__handler bm__orig[BM__TYPES];
static uint64_t bm__count[MKT_NKINDS];
#define BM__WRAP(i)                                                                                                    \
  static void bm__ev##i(sim_lp *lp, void *st, const void *msg, sim_id src) {                                           \
    bm__count[mkt_msg_kind(msg)]++;                                                                                    \
    bm__orig[i](lp, st, msg, src);                                                                                     \
  }
BM__WRAP(0)
BM__WRAP(1)
BM__WRAP(2)
BM__WRAP(3)
static const bm__handler bm__wrap[BM__TYPES] = {bm__ev0, bm__ev1, bm__ev2, bm__ev3};

/* Prints the engine events per modelled event and the kinds they come from (rank 0). */
/* Modelled events: the engine events of the modelled kinds (arrivals, ends, churn transitions,
 * the owner's use starting or ending, bills), and the runs placed (starts, first and restarts),
 * which are decided inside other events. */
static void bm__kinds(uint64_t events, uint64_t starts) {
  uint64_t ev[MKT_NEV] = {0}, modelled = starts;
  for (unsigned k = 0; k < MKT_NKINDS; k++) ev[mkt_msg_kind_event(k)] += bm__count[k];
  for (unsigned v = 1; v < MKT_NEV; v++) modelled += ev[v];
  printf("modelled events: %llu (arrivals %llu, run starts %llu, ends %llu, churn transitions %llu, owner's use "
         "starting or ending (self-use, calendar) %llu, bills %llu (hourly ticks and payments); run starts (first "
         "starts and restarts) are decided inside other events, the others are events of their own)\n",
         (unsigned long long)modelled, (unsigned long long)ev[MKT_EV_ARRIVAL], (unsigned long long)starts,
         (unsigned long long)ev[MKT_EV_END], (unsigned long long)ev[MKT_EV_CHURN], (unsigned long long)ev[MKT_EV_OWNER],
         (unsigned long long)ev[MKT_EV_BILL]);
  uint64_t strict = modelled - ev[MKT_EV_OWNER];
  printf("engine events per modelled event: %.3f (%.3f without the owner's use, as counted before 2026-12-02)\n",
         modelled ? (double)events / (double)modelled : 0.0, strict ? (double)events / (double)strict : 0.0);
  printf("engine events by kind (share):");
  int done[MKT_NKINDS] = {0};
  for (;;) { /* largest first */
    unsigned best = 0;
    uint64_t n = 0;
    for (unsigned k = 0; k < MKT_NKINDS; k++)
      if (!done[k] && bm__count[k] > n) n = bm__count[best = k];
    if (!n) break;
    done[best] = 1;
    printf(" %s%s %.3f", mkt_msg_kind_name(best), mkt_msg_kind_event(best) ? "*" : "", (double)n / (double)events);
  }
  printf("   (* modelled)\n");
}

static const app_option bm__opts[] = {
    {"--gpus", APP_O_U64, "N", 3, 3e8, 0, "single-GPU providers, split over the regions (default 100000)"},
    {"--regions", APP_O_U64, "R", 1, 16, 0,
     "regions (default 3: eu, us, asia; more repeat them, eu2 ...); each is a\ngroup of the engine, kept whole on one "
     "rank"},
    {"--days", APP_O_U64, "D", 1, 3650, 0, "simulated days (default 30)"},
    {"--load", APP_O_DOUBLE, "L", 0, 1000, 0, "synthetic arrivals, jobs per GPU per day (default 0.8)"},
    {"--seed", APP_O_U64, "S", 0, 1.9e19, 0, "engine seed (default 1)"},
    {"--rule", APP_O_CHOICE, "R", 0, 0, 0, "the bidding pool's clearing rule (default gigaspot)", mkt_rule_names},
    {"--out", APP_O_STRING, "FILE", 0, 0, 0,
     "append a CSV line of the figures per run (memory per GPU: the first only)"},
    {"--responses", APP_O_FLAG, NULL, 0, 0, 0,
     "switch every reaction of market.responses on (demand, pool choice, entry\nand exit, reliability)"},
    {"--checkpoint-events", APP_O_FLAG, NULL, 0, 0, 0,
     "checkpoints as engine events (market.checkpoint_events: a timer and a\ncompletion per checkpoint, as before "
     "2026-12-01)"},
    {"--repeat", APP_O_U64, "K", 1, 100, 0, "run K times and print the median events/s (default 1)"},
    {"--versus", APP_O_STRING, "GPUS:DAYS", 0, 0, 0,
     "after each run, run GPUS GPUs for DAYS days (same options) and print the\nratio of the two runs' events/s, "
     "and with --repeat the median ratio"},
    {"--progress", APP_O_FLAG, NULL, 0, 0, 0, "the engine's progress line"},
    {NULL},
};
static const app_cli bm__cli = {
    "bench market",
    "",
    0,
    0,
    NULL,
    "Runs the market model with N single-GPU providers (three regions unless --regions, the default personas and\n"
    "pools) for D simulated days with hourly billing, and prints wall time, events/s and memory per\n"
    "GPU. Under mpirun the model runs on all ranks. Reactions are off unless --responses.\n",
    "Exit status: 0 done, 1 money was not conserved or the CSV could not be written, 2 bad usage.\n",
    bm__opts};

static const char *bm__scenario =
    "market = {\n"
    "  gpus = \"%s/data/gpus.csv\";\n"
    "  churn_fits = \"%s/data/churn_fta_fits.csv\";\n"
    "  record_jobs = false; record_providers = false; sample_providers = 0; daily_income_providers = 0;\n"
    "  checkpoint_events = %s;\n"
    "  responses = { demand = %s; pool_choice = %s; entry = %s; reliability = %s; };\n"
    "  bidding = { rule = \"%s\"; min_bid_usd_h = 0.02; };\n"
    "  training  = { share = 0.2; dur_mean_h = 12.0; dur_cv = 1.5; gpus_min = 1; gpus_max = 1; mem_min_gb = 16.0;\n"
    "                value_usd_h = 0.6; checkpoint_h = 1.0; pool_share = [0.6, 0.2, 0.2]; patience_h = 48.0; };\n"
    "  inference = { share = 0.5; diurnal_amp = 0.6; dur_mean_h = 1.0; mem_min_gb = 8.0; value_usd_h = 0.5;\n"
    "                checkpoint_h = 0.25; pool_share = [0.2, 0.2, 0.6]; patience_h = 2.0; };\n"
    "  batch     = { share = 0.3; dur_mean_h = 3.0; gpus_min = 1; gpus_max = 1; mem_min_gb = 8.0;\n"
    "                value_usd_h = 0.25; pool_share = [0.1, 0.8, 0.1]; patience_h = 24.0; };\n"
    "  personas = (\n"
    "    { name = \"jade\"; pool = \"fixed\"; alt_pool = \"bidding\"; fit = \"microsoft99\"; busy_days = "
    "\"weekdays\";\n"
    "      busy_start_h = 19.0; busy_len_h = 4.0; target_factor = 0.3; patience = 3; },\n"
    "    { name = \"katie\"; pool = \"flexible\"; alt_pool = \"fixed\"; fit = \"microsoft99\"; target_factor = 0.05;\n"
    "      patience = 3; },\n"
    "    { name = \"henry\"; pool = \"bidding\"; alt_pool = \"flexible\"; fit = \"skype06\"; self_per_day = 2.0;\n"
    "      self_mean_h = 3.0; min_margin = 0.0; }\n"
    "  );\n"
    "  regions = (\n%s  );\n"
    "};\n";

/* The regions, cycled when there are more than three (eu, us, asia, eu2, ...). */
static const char *bm__region[3] = {
    "name = \"eu%s\"; tz_h = 1.0; providers = %llu; persona_share = [0.4, 0.3, 0.3];\n"
    "      gpu_mix = \"rtx3090:0.3, rtx4090:0.4, rtx5090:0.1, a100:0.2\"; energy_usd_kwh = 0.30; jobs_per_h = %.6f;",
    "name = \"us%s\"; tz_h = -5.0; providers = %llu; persona_share = [0.3, 0.4, 0.3];\n"
    "      gpu_mix = \"rtx3060:0.2, rtx4090:0.4, a10:0.2, h100:0.2\"; energy_usd_kwh = 0.15; jobs_per_h = %.6f;",
    "name = \"asia%s\"; tz_h = 8.0; providers = %llu; persona_share = [0.3, 0.3, 0.4];\n"
    "      gpu_mix = \"rtx3060:0.3, rtx3080:0.2, rtx4090:0.4, l4:0.1\"; energy_usd_kwh = 0.10; jobs_per_h = %.6f;"};

/* What one run is built from (the options), and what it measured. */
typedef struct bm__setup {
  unsigned nreg;
  double load;
  unsigned long long seed;
  const char *rule, *out;
  int progress, resp, ckev, rank, P;
} bm__setup;
typedef struct bm__fig {
  double rate, wall_s; /* engine events per second, s */
} bm__fig;

/* Builds the benchmark market of `gpus` GPUs over `days`, runs it, prints its table (rank 0) and
 * appends its CSV line (--out). 0 done, 1 money not conserved or the CSV not written, 2 the model
 * could not be built. rss0: the process's footprint before the first model (MiB); rss_ok 0: a model
 * ran before this one, so the process's peak is not this run's and B/GPU is printed as "-". */
static int bm__once(const bm__setup *u, unsigned long long gpus, unsigned long long days, double rss0, int rss_ok,
                    bm__fig *fig) {
  unsigned nreg = u->nreg;
  int rank = u->rank, P = u->P;
  char *regs = malloc(512 * (size_t)nreg + 1), *text = malloc(8192 + 512 * (size_t)nreg);
  if (!regs || !text) SIM_FATAL("out of memory");
  size_t off = 0;
  for (unsigned r = 0; r < nreg; r++) {
    unsigned long long per = r + 1 < nreg ? gpus / nreg : gpus - (nreg - 1) * (gpus / nreg);
    char suffix[16] = "";
    if (r >= 3) snprintf(suffix, sizeof suffix, "%u", r / 3 + 1);
    off += (size_t)snprintf(regs + off, 512, "    { ");
    off += (size_t)snprintf(regs + off, 400, bm__region[r % 3], suffix, per, per * u->load / 24.0);
    off += (size_t)snprintf(regs + off, 16, " }%s\n", r + 1 < nreg ? "," : "");
  }
  const char *on = u->resp ? "true" : "false";
  snprintf(text, 8192 + 512 * (size_t)nreg, bm__scenario, SPOTLAB_SOURCE_DIR, SPOTLAB_SOURCE_DIR,
           u->ckev ? "true" : "false", on, on, on, on, u->rule, regs);
  free(regs);
  sim_diag d;
  sim_diag_init(&d, rank == 0 ? stderr : NULL);
  sim_scenario *s = sim_scenario_load_string(text, "bench-market", &d);
  free(text);
  mkt_config cfg;
  memset(&cfg, 0, sizeof cfg);
  sim_model m;
  double end = (double)days * 86400.0;
  if (!s || sim_param_parse(s, "market", mkt_params, &cfg, NULL, &d) || mkt_class.validate(&cfg, s, &d) ||
      mkt_class.build(&cfg, end, "", s, &d, &m)) {
    if (rank == 0) fprintf(stderr, "spotlab bench market: cannot build the benchmark market (see above)\n");
    return 2;
  }
  m.end_time = end;
  if (rank == 0)
    fprintf(
        stderr,
        "bench market: %llu GPUs (%llu LPs) in %u regions, %llu days, hourly billing, rule %s, load %g jobs/GPU/day, "
        "reactions %s, %d rank%s\n",
        gpus, (unsigned long long)m.nlps, nreg, days, u->rule, u->load, u->resp ? "on" : "off", P, P == 1 ? "" : "s");
  if (m.ntypes > BM__TYPES)
    SIM_FATAL("bench market: %u LP types, the count of events by kind wraps %d", m.ntypes, BM__TYPES);
  sim_lptype types[BM__TYPES];
  const sim_lptype *mtypes = m.types;
  memset(bm__count, 0, sizeof bm__count);
  for (unsigned t = 0; t < m.ntypes; t++) {
    types[t] = m.types[t];
    bm__orig[t] = types[t].event;
    types[t].event = bm__wrap[t];
  }
  m.types = types;
  sim_run_opts o = {u->seed, P > 1, u->progress && rank == 0, NULL};
  sim_results r;
  if (sim_run(&m, &o, &r)) SIM_FATAL("the engine refused the market model");
  m.types = mtypes;
  uint64_t mine = 0, busiest = 0; /* engine events this rank handled; the most any rank did */
  for (unsigned k = 0; k < MKT_NKINDS; k++) mine += bm__count[k];
  busiest = mine;
  if (P > 1) {
    uint64_t all[MKT_NKINDS];
    MPI_Reduce(bm__count, all, MKT_NKINDS, MPI_UINT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
    memcpy(bm__count, all, sizeof all);
    MPI_Reduce(&mine, &busiest, 1, MPI_UINT64_T, MPI_MAX, 0, MPI_COMM_WORLD);
  }
  double rss = bm__rss_mib(), rss_all = rss, base_all = rss0;
  if (P > 1) {
    MPI_Reduce(&rss, &rss_all, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    MPI_Reduce(&rss0, &base_all, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
  }
  fig->wall_s = r.wall_s;
  fig->rate = (double)r.events / r.wall_s;
  int rc = 0;
  if (rank == 0) {
    unsigned nm;
    const sim_metric_def *defs = mkt_class.model_metrics(&m, &nm);
    double *met = calloc(nm, sizeof *met);
    mkt_class.compute_metrics(&m, &r, met);
    char msg[512];
    int bad = mkt_class.check(&m, &r, msg, sizeof msg);
    double per_gpu = rss_all * 1048576.0 / (double)gpus,
           model_per_gpu = (rss_all - base_all) * 1048576.0 / (double)gpus;
    printf("%10s %6s %6s %14s %10s %12s %12s %14s %10s\n", "GPUs", "days", "ranks", "events", "wall s", "events/s",
           "B/GPU (RSS)", "B/GPU (model)", "money");
    char bg[32] = "-", bgm[32] = "-";
    if (rss_ok) {
      snprintf(bg, sizeof bg, "%.0f", per_gpu);
      snprintf(bgm, sizeof bgm, "%.0f", model_per_gpu);
    }
    printf("%10llu %6llu %6d %14llu %10.2f %12.4g %12s %14s %10s\n", gpus, days, P, (unsigned long long)r.events,
           r.wall_s, fig->rate, bg, bgm, bad ? "NOT OK" : "conserved");
    printf("utilization:");
    for (unsigned k = 0; k < nm; k++)
      if (!strncmp(defs[k].name, "utilization.pool.", 17)) printf(" %s %.3f", defs[k].name + 17, met[k]);
    printf("\n");
    printf("synchronization windows: %llu, engine events per window %.1f%s\n", (unsigned long long)r.windows,
           (double)r.events / (double)(r.windows ? r.windows : 1), P == 1 ? " (sequential: one window)" : "");
    if (P > 1 && busiest > 0)
      /* a window waits for its busiest rank: with every event costing the same, P ranks go at most
       * events / busiest times as fast as one (three regions on two ranks: 2/3 on one, 1.5x) */
      printf("ranks: the busiest handled %.1f%% of the engine events, %.2fx at most from the split alone (%.2f%% would "
             "be an even split)\n",
             100.0 * (double)busiest / (double)r.events, (double)r.events / (double)busiest, 100.0 / P);
    bm__kinds(r.events, mkt_run_starts(&m, &r));
    if (bad) fprintf(stderr, "spotlab bench market: %s\n", msg);
    if (u->out) {
      FILE *f = fopen(u->out, "a");
      if (!f) {
        fprintf(stderr, "spotlab bench market: cannot write %s\n", u->out);
        rc = 1;
      } else {
        fprintf(f, "%llu,%llu,%d,%llu,%.3f,%.6g,%s,%s,%s\n", gpus, days, P, (unsigned long long)r.events, r.wall_s,
                fig->rate, rss_ok ? bg : "", rss_ok ? bgm : "", bad ? "not_conserved" : "conserved");
        fclose(f);
      }
    }
    free(met);
    if (bad) rc = 1;
  }
  if (P > 1) MPI_Bcast(&rc, 1, MPI_INT, 0, MPI_COMM_WORLD); /* every rank stops after a failed run */
  sim_results_free(&r);
  mkt_class.destroy(&m);
  sim_param_free(mkt_params, &cfg);
  sim_scenario_free(s);
  return rc;
}

/* The range the option table gives `name` (--gpus, --days), which --versus's parts share. */
static void bm__range(const char *name, double *lo, double *hi) {
  for (const app_option *o = bm__opts; o->name; o++)
    if (!strcmp(o->name, name)) {
      *lo = o->lo;
      *hi = o->hi;
      return;
    }
  SIM_FATAL("bench market: no option %s", name);
}

/* Parses --versus's "GPUS:DAYS", each part in its option's range. 0 or -1 (with the message printed). */
static int bm__versus(const char *v, unsigned long long *gpus, unsigned long long *days) {
  double glo, ghi, dlo, dhi;
  bm__range("--gpus", &glo, &ghi);
  bm__range("--days", &dlo, &dhi);
  char *e1, *e2;
  if (v[0] >= '0' && v[0] <= '9') {
    unsigned long long g = strtoull(v, &e1, 10);
    if (*e1 == ':' && e1[1] >= '0' && e1[1] <= '9') {
      unsigned long long dd = strtoull(e1 + 1, &e2, 10);
      if (!*e2 && g >= glo && g <= ghi && dd >= dlo && dd <= dhi) {
        *gpus = g;
        *days = dd;
        return 0;
      }
    }
  }
  fprintf(stderr,
          "spotlab bench market: --versus: '%s' is not GPUS:DAYS with GPUS in [%g, %g] and DAYS in [%g, %g] "
          "(e.g. 10000:30)\n",
          v, glo, ghi, dlo, dhi);
  return -1;
}

static int cmd_bench_market_main(int argc, char **argv) {
  unsigned long long gpus = 100000, days = 30, vgpus = 0, vdays = 0, repeat = 1;
  bm__setup u = {0};
  app_args a;
  int prc = app_cli_parse(&bm__cli, argc, argv, &a);
  if (prc) {
    app_args_free(&a);
    return prc == 1 ? 0 : 2;
  }
  gpus = app_args_u64(&a, "--gpus", gpus);
  u.nreg = (unsigned)app_args_u64(&a, "--regions", 3);
  days = app_args_u64(&a, "--days", days);
  u.seed = app_args_u64(&a, "--seed", 1);
  u.load = app_args_double(&a, "--load", 0.8);
  u.rule = app_args_str(&a, "--rule", "gigaspot");
  u.out = app_args_str(&a, "--out", NULL);
  u.progress = app_args_flag(&a, "--progress");
  u.resp = app_args_flag(&a, "--responses");
  u.ckev = app_args_flag(&a, "--checkpoint-events");
  repeat = app_args_u64(&a, "--repeat", 1);
  const char *vs = app_args_str(&a, "--versus", NULL);
  int bad = vs && bm__versus(vs, &vgpus, &vdays);
  if (!bad && (gpus < u.nreg || (vs && vgpus < u.nreg))) {
    fprintf(stderr, "spotlab bench market: %s %llu is fewer than the %u regions (at least one GPU each)\n",
            gpus < u.nreg ? "--gpus" : "--versus's GPUS", gpus < u.nreg ? gpus : vgpus, u.nreg);
    bad = 1;
  }
  if (bad) {
    app_args_free(&a);
    return 2;
  }
  /* the strings stay valid: app_args_free is called after the runs */
  app_mpi_init(&argc, &argv);
  u.rank = app_mpi_rank();
  u.P = app_mpi_size();
  double rss0 = bm__rss_mib();
  double *rate = malloc(2 * repeat * sizeof *rate), *ratio = rate + repeat;
  if (!rate) SIM_FATAL("out of memory");
  int rc = 0;
  for (unsigned long long i = 0; i < repeat && !rc; i++) {
    bm__fig f, fv;
    rc = bm__once(&u, gpus, days, rss0, i == 0, &f);
    rate[i] = f.rate;
    if (!rc && vs) {
      rc = bm__once(&u, vgpus, vdays, rss0, 0, &fv);
      ratio[i] = f.rate / fv.rate;
      if (!rc && u.rank == 0)
        printf("events/s at %llu GPUs x %llu days over %llu GPUs x %llu days run after it: %.3g / %.3g = %.3f\n", gpus,
               days, vgpus, vdays, f.rate, fv.rate, ratio[i]);
    }
  }
  if (!rc && u.rank == 0 && (repeat > 1 || vs)) {
    printf("median of %llu: %.4g events/s at %llu GPUs x %llu days", repeat, app_median(rate, repeat), gpus, days);
    if (vs) printf("; ratio of events/s against %llu GPUs x %llu days %.3f", vgpus, vdays, app_median(ratio, repeat));
    printf(" (memory per GPU is measured on the first run alone: the process's peak)\n");
  }
  free(rate);
  app_args_free(&a);
  return rc;
}

static const app_command cmd_bench_market = {
    "bench market", "market model at scale: wall time, events/s, memory per GPU", cmd_bench_market_main};
APP_COMMAND(cmd_bench_market)
