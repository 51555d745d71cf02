/* cmd_bench_market.c - `spotlab bench market`: the market model at scale.
 *
 * Builds a market of N single-GPU providers in three regions (or --regions R; the personas, pools and job classes
 * of scenarios/default.cfg, demand scaled with the supply), runs it for D days with hourly billing
 * and prints wall time, events per second and memory per GPU (peak resident memory of all ranks,
 * and the part above the process's footprint before the model was built). Tables are off, so the
 * figure is the simulation's own memory, not the output's. --out FILE appends a CSV line per run;
 * --repeat and --versus run it several times and against a second size in the same process;
 * --sizes runs a list of sizes in turn and prints the cost of an event by size beside the CPU's
 * caches (each run's own peak memory: the kernel's peak is reset before it). --wide LO-HI makes the
 * training class data-parallel jobs of LO to HI GPUs gang-placed over the single-GPU hosts, and
 * runs the market without them (the same bench, the same process) before it, for the ratio.
 */
#include "app/app.h"
#include "app/cli.h"
#include "models/market/mkt_model.h"
#include "spotlab_config.h"

#include <mpi.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#define MKT__STR_(x) #x
#define MKT__STR(x) MKT__STR_(x)

static double bm__rss_mib(void) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return (double)ru.ru_maxrss / 1024.0; /* Linux: KiB */
}

/* A field of /proc/self/status in MiB ("VmRSS:" resident now, "VmHWM:" its peak), -1 unreadable. */
static double bm__status_mib(const char *field) {
  FILE *f = fopen("/proc/self/status", "r");
  if (!f) return -1;
  char line[256];
  double kib = -1;
  size_t n = strlen(field);
  while (fgets(line, sizeof line, f))
    if (!strncmp(line, field, n)) {
      kib = strtod(line + n, NULL);
      break;
    }
  fclose(f);
  return kib < 0 ? -1 : kib / 1024.0;
}

/* Sets the process's peak resident memory (VmHWM) back to what is resident now, so that the next
 * run's peak is its own (Linux >= 4.0: "5" to /proc/PID/clear_refs, proc(5)). 0 done, -1 not. */
static int bm__hwm_reset(void) {
  FILE *f = fopen("/proc/self/clear_refs", "w");
  if (!f) return -1;
  int ok = fputs("5", f) >= 0;
  ok &= fclose(f) == 0;
  return ok && bm__status_mib("VmHWM:") >= 0 ? 0 : -1;
}

/* The data caches of cpu0 as sysfs gives them, "L1d 32 KiB, L2 1 MiB, L3 32 MiB" into buf, and the
 * largest level's size in MiB (0 and "not readable here" when sysfs has none). */
static double bm__caches(char *buf, size_t cap) {
  double llc = 0;
  unsigned top = 0;
  size_t off = 0;
  buf[0] = 0;
  for (unsigned i = 0; i < 16; i++) {
    char path[96], level[16] = "", type[32] = "", size[32] = "";
    const char *what[3] = {"level", "type", "size"};
    char *into[3] = {level, type, size};
    int got = 0;
    for (unsigned k = 0; k < 3; k++) {
      snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%u/%s", i, what[k]);
      FILE *f = fopen(path, "r");
      if (!f) break;
      if (fgets(into[k], 16, f)) {
        into[k][strcspn(into[k], "\n")] = 0;
        got++;
      }
      fclose(f);
    }
    if (got < 3 || !strcmp(type, "Instruction")) continue;
    char *end;
    double kib = strtod(size, &end);
    if (*end == 'M') kib *= 1024.0;
    unsigned lv = (unsigned)atoi(level);
    char one[48];
    if (kib >= 1024.0)
      snprintf(one, sizeof one, "L%u%s %g MiB", lv, !strcmp(type, "Data") ? "d" : "", kib / 1024.0);
    else
      snprintf(one, sizeof one, "L%u%s %g KiB", lv, !strcmp(type, "Data") ? "d" : "", kib);
    off += (size_t)snprintf(buf + off, off < cap ? cap - off : 0, "%s%s", off ? ", " : "", one);
    if (off >= cap) off = cap - 1;
    if (lv >= top) {
      top = lv;
      llc = kib / 1024.0;
    }
  }
  if (!buf[0]) snprintf(buf, cap, "not readable here");
  return llc;
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
    APP_OPT_SEED("engine seed (default 1)"),
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
    {"--sizes", APP_O_STRING, "N1,N2,...", 0, 0, 0,
     "instead of --gpus: run each of these GPU counts in turn (2 to 16; with\n--repeat, K rounds of them) and print "
     "events/s, ns per event and each\nrun's peak memory by size, beside the sizes of the CPU's caches"},
    {"--wide", APP_O_STRING, "LO-HI", 0, 0, 0,
     "training jobs of LO to HI GPUs (uniform; at most " MKT__STR(
         MKT_MAX_JOB_GPUS) ") gang-placed over the\n"
                           "single-GPU hosts, all-reducing 10 MB every 10 s step, in the fixed and flexible\npools, at "
                           "the same GPU-hours "
                           "of training (its share of arrivals over the\nmean width); each run follows the same market "
                           "without them, "
                           "and a table\ncompares the two (events/s, wall, each run's peak memory)"},
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
    "GPU. Under mpirun the model runs on all ranks. Reactions are off unless --responses.\n"
    "--sizes 10000,100000,1000000 runs each size in turn and ends with a table of the cost of an\n"
    "event by size, each run's peak memory and that memory over the CPU's largest cache.\n",
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
    "%s"
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

/* The training class: single-GPU jobs, or (--wide) LO-HI GPU data-parallel jobs at the same GPU-hours
 * (share 0.2 over the mean width), in the pools that run jobs wider than a host (a bid runs on one). */
static const char *bm__training =
    "  training  = { share = 0.2; dur_mean_h = 12.0; dur_cv = 1.5; gpus_min = 1; gpus_max = "
    "1; mem_min_gb = 16.0;\n"
    "                value_usd_h = 0.6; checkpoint_h = 1.0; pool_share = [0.6, 0.2, "
    "0.2]; patience_h = 48.0; };\n";
static const char *bm__training_wide =
    "  training  = { share = %.9g; dur_mean_h = 12.0; dur_cv = 1.5; gpus_min = %u; gpus_max = %u; mem_min_gb = 16.0;\n"
    "                value_usd_h = 0.6; checkpoint_h = 1.0; step_s = 10.0; grad_mb = 10.0;\n"
    "                pool_share = [0.5, 0.0, 0.5]; patience_h = 48.0; };\n";

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
  int hwm;           /* the process's peak was reset before this run (bm__hwm_reset): it is this run's own */
  unsigned wlo, whi; /* --wide: training jobs of wlo..whi GPUs (0: single-GPU) */
} bm__setup;
typedef struct bm__fig {
  double rate, wall_s;  /* engine events per second, s */
  unsigned long long n; /* engine events */
  double model_mib;     /* peak resident memory above the footprint before the model, all ranks; -1 unknown */
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
  char training[512];
  if (u->wlo)
    snprintf(training, sizeof training, bm__training_wide, 0.2 / (0.5 * (u->wlo + u->whi)), u->wlo, u->whi);
  else
    snprintf(training, sizeof training, "%s", bm__training);
  snprintf(text, 8192 + 512 * (size_t)nreg, bm__scenario, SPOTLAB_SOURCE_DIR, SPOTLAB_SOURCE_DIR,
           u->ckev ? "true" : "false", on, on, on, on, u->rule, training, regs);
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
        "reactions %s, %d rank%s%s\n",
        gpus, (unsigned long long)m.nlps, nreg, days, u->rule, u->load, u->resp ? "on" : "off", P, P == 1 ? "" : "s",
        u->wlo ? ", training jobs of --wide GPUs" : "");
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
  double rss = u->hwm ? bm__status_mib("VmHWM:") : bm__rss_mib(), rss_all = rss, base_all = rss0;
  if (P > 1) {
    MPI_Reduce(&rss, &rss_all, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    MPI_Reduce(&rss0, &base_all, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
  }
  fig->wall_s = r.wall_s;
  fig->rate = (double)r.events / r.wall_s;
  fig->n = (unsigned long long)r.events;
  fig->model_mib = rss_ok ? rss_all - base_all : -1;
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
    if (u->wlo) { /* the wide jobs did run: their starts, ends, width and time in all-reduces */
      const int64_t *jb = r.series[MKT_S_JOBS] + MKT_CLS_TRAINING * MKT_NJCOLS;
      double comm = NAN;
      for (unsigned k = 0; k < nm; k++)
        if (!strcmp(defs[k].name, "comm_share.class.training")) comm = met[k];
      printf("training jobs of %u-%u GPUs: %lld submitted, %lld started (%lld runs), %lld completed; members' share "
             "of time in all-reduces %.3f\n",
             u->wlo, u->whi, (long long)jb[MKT_J_SUBMITTED], (long long)jb[MKT_J_STARTED], (long long)jb[MKT_J_RUNS],
             (long long)jb[MKT_J_DONE], comm);
    }
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

/* Parses --sizes's "N1,N2,...": 2 to BM__SIZES GPU counts, each in --gpus's range and at least one
 * per region. The count, or -1 (with the message printed). */
#define BM__SIZES 16
static int bm__sizes(const char *v, unsigned nreg, unsigned long long *g) {
  double lo, hi;
  bm__range("--gpus", &lo, &hi);
  int n = 0;
  const char *p = v;
  for (;;) {
    char *end;
    if (n == BM__SIZES || *p < '0' || *p > '9') break;
    unsigned long long x = strtoull(p, &end, 10);
    if (x < lo || x > hi || (*end && *end != ',')) break;
    if (x < nreg) {
      fprintf(stderr, "spotlab bench market: --sizes: %llu is fewer than the %u regions (at least one GPU each)\n", x,
              nreg);
      return -1;
    }
    g[n++] = x;
    if (!*end && n >= 2) return n;
    if (!*end) {
      fprintf(stderr, "spotlab bench market: --sizes: '%s' is one size; give 2 to %d to compare them\n", v, BM__SIZES);
      return -1;
    }
    p = end + 1;
  }
  fprintf(stderr,
          "spotlab bench market: --sizes: '%s' is not a list of 2 to %d GPU counts in [%g, %g] separated by commas "
          "(e.g. 10000,100000,1000000)\n",
          v, BM__SIZES, lo, hi);
  return -1;
}

/* --sizes: `rounds` rounds, each running every size once in the order given; then a table by size
 * of the median events/s, ns per event and peak memory, and the median over the rounds of each
 * size's events/s over the first size's in the same round. */
static int bm__scale(bm__setup *u, const unsigned long long *g, int n, unsigned long long days,
                     unsigned long long rounds) {
  double *rate = malloc(4 * (size_t)n * rounds * sizeof *rate), *ratio = rate + (size_t)n * rounds,
         *mib = ratio + (size_t)n * rounds, *wall = mib + (size_t)n * rounds;
  unsigned long long ev[BM__SIZES] = {0};
  if (!rate) SIM_FATAL("out of memory");
#ifdef __GLIBC__
  /* glibc raises its mmap threshold each time a mapped block is freed (mallopt(3)), so a run after a
   * larger one would grow its arrays in the heap, copying instead of remapping, and peak 5% higher
   * (300,000 GPUs x 2 days after the same: 688 B per GPU against 658 alone). Fixed at its default,
   * every run allocates as the first one of a process does (659 B and 661 B). */
  mallopt(M_MMAP_THRESHOLD, 128 * 1024);
#endif
  int rc = 0, hwm_all = 1;
  for (unsigned long long i = 0; i < rounds && !rc; i++)
    for (int k = 0; k < n && !rc; k++) {
      /* the process's peak starts again at what is resident now, on every rank, so each run prints
       * its own memory (where the kernel refuses, only the first run does, as without --sizes) */
#ifdef __GLIBC__
      malloc_trim(0); /* the last run's freed heap back to the kernel: else it is resident before this one */
#endif
      u->hwm = bm__hwm_reset() == 0;
      if (u->P > 1) MPI_Allreduce(MPI_IN_PLACE, &u->hwm, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
      hwm_all &= u->hwm;
      double base = u->hwm ? bm__status_mib("VmRSS:") : bm__rss_mib();
      bm__fig f;
      rc = bm__once(u, g[k], days, base, u->hwm || (i == 0 && k == 0), &f);
      rate[k * rounds + i] = f.rate;
      ratio[k * rounds + i] = f.rate / rate[i]; /* the first size's, this round */
      mib[k * rounds + i] = f.model_mib;
      wall[k * rounds + i] = f.wall_s;
      ev[k] = f.n;
      if (!rc && u->rank == 0 && u->progress)
        fprintf(stderr, "bench market --sizes: round %llu of %llu, %d of %d sizes done\n", i + 1, rounds, k + 1, n);
    }
  if (!rc && u->rank == 0) {
    char caches[256];
    int short_runs = 0;
    double llc = bm__caches(caches, sizeof caches);
    printf("\ncost per event by size, %llu days, %d rank%s, median of %llu round%s (caches of cpu0: %s):\n", days, u->P,
           u->P == 1 ? "" : "s", rounds, rounds == 1 ? "" : "s", caches);
    printf("%10s %14s %10s %12s %10s %17s %12s %10s\n", "GPUs", "events", "wall s", "events/s", "ns/event",
           "peak MiB (model)", "/ last cache", "vs first");
    for (int k = 0; k < n; k++) { /* each size's figures are a slice of rounds values, sorted by its median */
      size_t at = (size_t)k * rounds;
      double r = app_median(rate + at, rounds), q = app_median(ratio + at, rounds);
      char m[32] = "-", c[32] = "-";
      if (hwm_all || k == 0) {
        double mm = hwm_all ? app_median(mib + at, rounds) : mib[0]; /* else the first run's alone */
        snprintf(m, sizeof m, "%.1f", mm);
        if (llc > 0) snprintf(c, sizeof c, "%.2f", mm / llc);
      }
      double w = app_median(wall + at, rounds);
      short_runs |= w < 1.0;
      printf("%10llu %14llu %10.2f %12.4g %10.1f %17s %12s %10.3f\n", g[k], ev[k], w, r, 1e9 / r, m, c, q);
    }
    printf("(peak MiB: each run's peak resident memory above the process's footprint before it was built%s%s; "
           "/ last cache: that over the largest cache's size; vs first: events/s over the first size's in the same "
           "round)\n",
           u->P > 1 ? ", summed over the ranks" : "",
           hwm_all ? "" : "; the kernel would not reset the peak, so only the first run has it");
    if (short_runs)
      printf("runs under a second measure their start as much as their events: give more --days for those sizes\n");
  }
  free(rate);
  return rc;
}

/* --wide: `rounds` rounds of the market without wide jobs, then with them (each run's peak memory its
 * own where the kernel resets it), and a table of the two, with the median ratio of their events/s. */
static int bm__wide(bm__setup *u, unsigned long long gpus, unsigned long long days, unsigned long long rounds) {
  double *v = malloc(8 * rounds * sizeof *v);
  if (!v) SIM_FATAL("out of memory");
  double *rate[2] = {v, v + rounds}, *wall[2] = {v + 2 * rounds, v + 3 * rounds},
         *mib[2] = {v + 4 * rounds, v + 5 * rounds}, *ratio = v + 6 * rounds;
  unsigned long long ev[2] = {0, 0};
  unsigned wlo = u->wlo, whi = u->whi;
#ifdef __GLIBC__
  mallopt(M_MMAP_THRESHOLD, 128 * 1024); /* as --sizes: each run allocates as a process's first does */
#endif
  int rc = 0, hwm_all = 1;
  for (unsigned long long i = 0; i < rounds && !rc; i++)
    for (int w = 0; w < 2 && !rc; w++) {
#ifdef __GLIBC__
      malloc_trim(0);
#endif
      u->hwm = bm__hwm_reset() == 0;
      if (u->P > 1) MPI_Allreduce(MPI_IN_PLACE, &u->hwm, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
      hwm_all &= u->hwm;
      double base = u->hwm ? bm__status_mib("VmRSS:") : bm__rss_mib();
      u->wlo = w ? wlo : 0;
      u->whi = w ? whi : 0;
      bm__fig f;
      rc = bm__once(u, gpus, days, base, u->hwm || (i == 0 && w == 0), &f);
      rate[w][i] = f.rate;
      wall[w][i] = f.wall_s;
      mib[w][i] = f.model_mib;
      ev[w] = f.n;
      if (w) ratio[i] = f.rate / rate[0][i];
    }
  u->wlo = wlo;
  u->whi = whi;
  if (!rc && u->rank == 0) {
    printf("\nwide jobs against none, %llu GPUs x %llu days, %d rank%s, median of %llu round%s:\n", gpus, days, u->P,
           u->P == 1 ? "" : "s", rounds, rounds == 1 ? "" : "s");
    printf("%-22s %14s %10s %12s %10s %17s\n", "training jobs", "events", "wall s", "events/s", "ns/event",
           "peak MiB (model)");
    for (int w = 0; w < 2; w++) {
      char name[32], m[32] = "-";
      if (w)
        snprintf(name, sizeof name, "%u-%u GPUs", wlo, whi);
      else
        snprintf(name, sizeof name, "1 GPU");
      if (hwm_all || w == 0) snprintf(m, sizeof m, "%.1f", hwm_all ? app_median(mib[w], rounds) : mib[0][0]);
      double r = app_median(rate[w], rounds);
      printf("%-22s %14llu %10.2f %12.4g %10.1f %17s\n", name, ev[w], app_median(wall[w], rounds), r, 1e9 / r, m);
    }
    printf("events/s with wide jobs over without, same round: %.3f (median)%s\n", app_median(ratio, rounds),
           hwm_all ? "" : "; the kernel would not reset the peak, so only the first run has its memory");
  }
  free(v);
  return rc;
}

/* Parses --wide's "LO-HI": 1 <= LO <= HI <= MKT_MAX_JOB_GPUS. 0 or -1 (with the message printed). */
static int bm__wide_parse(const char *v, unsigned *lo, unsigned *hi) {
  char *e1, *e2;
  if (v[0] >= '0' && v[0] <= '9') {
    unsigned long a = strtoul(v, &e1, 10);
    if (*e1 == '-' && e1[1] >= '0' && e1[1] <= '9') {
      unsigned long b = strtoul(e1 + 1, &e2, 10);
      if (!*e2 && a >= 1 && a <= b && b <= MKT_MAX_JOB_GPUS) {
        *lo = (unsigned)a;
        *hi = (unsigned)b;
        return 0;
      }
    }
  }
  fprintf(stderr, "spotlab bench market: --wide: '%s' is not LO-HI with 1 <= LO <= HI <= %d (e.g. 64-256)\n", v,
          MKT_MAX_JOB_GPUS);
  return -1;
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
  const char *vs = app_args_str(&a, "--versus", NULL), *sz = app_args_str(&a, "--sizes", NULL),
             *wd = app_args_str(&a, "--wide", NULL);
  unsigned long long sizes[BM__SIZES];
  int nsizes = 0, bad = 0;
  if (wd && (vs || sz)) {
    fprintf(stderr, "spotlab bench market: --wide and %s: give one of them\n", vs ? "--versus" : "--sizes");
    bad = 1;
  } else if (wd) {
    bad = bm__wide_parse(wd, &u.wlo, &u.whi) != 0;
  }
  if (bad) {
  } else if (sz && (vs || app_args_count(&a, "--gpus") > 0)) {
    fprintf(stderr, "spotlab bench market: --sizes and %s: give one of them\n", vs ? "--versus" : "--gpus");
    bad = 1;
  } else if (sz) {
    nsizes = bm__sizes(sz, u.nreg, sizes);
    bad = nsizes < 0;
  }
  bad = bad || (vs && bm__versus(vs, &vgpus, &vdays));
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
  if (nsizes > 0) {
    int rc = bm__scale(&u, sizes, nsizes, days, repeat);
    app_args_free(&a);
    return rc;
  }
  if (u.wlo) {
    int rc = bm__wide(&u, gpus, days, repeat);
    app_args_free(&a);
    return rc;
  }
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
    "bench market", "market model at scale: wall time, events/s, memory per GPU", cmd_bench_market_main, &bm__cli};
APP_COMMAND(cmd_bench_market)
