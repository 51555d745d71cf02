/* cmd_bench_sched.c - `spotlab bench sched`: how many scheduling decisions per second the core
 * makes with 100k GPUs. A synthetic event stream (GPU joins and departures, heartbeats, job
 * arrivals of width 1..8, progress reports, finishes, crashes, ticks, billing) drives one core per
 * policy; the table shows events and decisions per wall-clock second of the stream (the initial
 * joins are timed apart). The stream keeps about 60% of present GPUs employed. */
#include "app/app.h"
#include "app/cli.h"
#include "models/sched/sched.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct bench_state {
  uint32_t *last_run; /* per job: run id of its latest placement */
  uint8_t *running;   /* per job */
  uint32_t *run_list; /* jobs believed running (swap-remove) */
  uint32_t *run_pos;
  uint32_t nrun;
  uint64_t busy; /* employed GPUs (estimate, see the stream loop) */
} bench_state;

static void bench__add(bench_state *b, uint32_t job) {
  if (b->running[job]) return;
  b->running[job] = 1;
  b->run_pos[job] = b->nrun;
  b->run_list[b->nrun++] = job;
}
static void bench__del(bench_state *b, uint32_t job) {
  if (!b->running[job]) return;
  b->running[job] = 0;
  uint32_t last = b->run_list[--b->nrun];
  b->run_list[b->run_pos[job]] = last;
  b->run_pos[last] = b->run_pos[job];
}

static void bench__sink(void *ctx, const sched_decision *d) {
  bench_state *b = ctx;
  switch (d->type) {
  case SCHED_D_PLACE:
    b->last_run[d->job] = d->run;
    bench__add(b, d->job);
    b->busy += d->ngpus;
    break;
  case SCHED_D_END: bench__del(b, d->job); break;
  default: break;
  }
}

static uint64_t bench__x;
static uint64_t bench__rnd(void) {
  uint64_t x = bench__x; /* xorshift64 */
  x ^= x << 13;
  x ^= x >> 7;
  x ^= x << 17;
  return bench__x = x;
}

static double bench__now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static const app_option bench__opts[] = {
    {"--gpus", APP_O_U64, "N", 1, 1e8, 0, "GPUs that join before the stream (default 100000)"},
    {"--events", APP_O_U64, "N", 1, 1e9, 0, "events in the timed stream (default 1000000)"},
    {"--policy", APP_O_CHOICE, "P", 0, 0, 0, "the one fault-tolerance policy to run (default: all)",
     sched_policy_names},
    APP_OPT_SEED("stream seed (default 1)"),
    {"--out", APP_O_STRING, "FILE", 0, 0, 0, "also write the table as CSV"},
    {"--net", APP_O_FLAG, NULL, 0, 0, 0, "the transfer model instead (ARQ / TCP / HARQ)"},
    {"--bw", APP_O_DOUBLE, "MBIT/S", 1e-6, 1e9, 0, "link rate, --net only (default 100)"},
    {"--rtt", APP_O_DOUBLE, "S", 1e-6, 100, 0, "round trip, --net only (default 0.1)"},
    {"--harq-max", APP_O_U64, "N", 1, 64, 0, "copies combined before a flush, --net only (default 4)"},
    {NULL},
};
static const app_cli bench__cli = {
    "bench sched",
    "",
    0,
    0,
    "spotlab bench sched --net [--bw MBIT/S] [--rtt S] [--harq-max N] [--out FILE]",
    "Scheduling decisions per second of the core (models/sched) on a synthetic stream.\n"
    "With --net: the transfer model instead, ARQ / TCP / HARQ with chase combining as loss\n"
    "rises (expected transmissions, goodput, time to move 1 GB, speedups).\n",
    "Exit status: 0 done, 1 an invariant broke, 2 bad usage.\n",
    bench__opts};

static int bench__one(sched_policy pol, uint32_t ngpus, uint64_t nev, uint64_t seed, FILE *csv) {
  bench_state b = {0};
  uint32_t max_jobs = (uint32_t)(nev + 16);
  b.last_run = calloc(max_jobs, sizeof *b.last_run);
  b.running = calloc(max_jobs, 1);
  b.run_list = calloc(max_jobs, sizeof *b.run_list);
  b.run_pos = calloc(max_jobs, sizeof *b.run_pos);
  uint8_t *present = calloc(ngpus, 1);
  uint32_t *absent = calloc(ngpus, sizeof *absent);
  if (!b.last_run || !b.running || !b.run_list || !b.run_pos || !present || !absent) {
    fprintf(stderr, "spotlab bench sched: out of memory\n");
    exit(1);
  }
  sched_config c;
  sched_config_default(&c);
  c.max_gpus = ngpus;
  c.max_providers = ngpus;
  c.max_nodes = 100;
  c.max_jobs = max_jobs;
  c.nregions = 8;
  c.ngrades = 4;
  c.sink = bench__sink;
  c.sink_ctx = &b;
  c.seed = seed;
  c.policy = pol;
  sched *s;
  int rc = sched_create(&c, &s);
  if (rc) {
    fprintf(stderr, "spotlab bench sched: %s\n", sched_strerror(rc));
    exit(1);
  }
  bench__x = seed * 0x9E3779B97F4A7C15ull + 1;
  double t = 0, w0 = bench__now();
  for (uint32_t g = 0; g < ngpus; g++) {
    sched_event e = {.type = SCHED_EV_GPU_JOIN, .t = t, .gpu = g};
    e.u.gpu.provider = g;
    e.u.gpu.node = g % 100;
    e.u.gpu.region = (uint16_t)(bench__rnd() % 8);
    e.u.gpu.grade = (uint16_t)(bench__rnd() % 4);
    e.u.gpu.sectors = 1;
    e.u.gpu.score = 0.5 + (double)(bench__rnd() % 100) / 50.0;
    e.u.gpu.price_per_h = 0.1 + (double)(bench__rnd() % 100) / 100.0;
    e.u.gpu.link = (sched_link){1e8, 0.05, 0.001};
    sched_handle(s, &e);
    present[g] = 1;
  }
  double join_s = bench__now() - w0;
  uint32_t nabsent = 0, next_job = 0;
  sched_counters c0;
  sched_counters_get(s, &c0);
  double w1 = bench__now();
  for (uint64_t i = 0; i < nev; i++) {
    t += 0.01;
    unsigned r = (unsigned)(bench__rnd() % 100);
    sched_event e = {.t = t};
    if (r < 20 || (r < 45 && b.nrun == 0)) {
      /* Keep about 60% of present GPUs employed: arrive when below, finish when above. */
      if ((double)b.busy < 0.6 * (ngpus - nabsent) && next_job < max_jobs) {
        e.type = SCHED_EV_JOB_ARRIVE;
        e.job = next_job++;
        e.u.job.kind = SCHED_JOB_BATCH;
        e.u.job.width = (uint16_t)(1 + bench__rnd() % 8);
        e.u.job.region = (bench__rnd() % 4) ? -1 : (int32_t)(bench__rnd() % 8);
        e.u.job.min_grade = (uint16_t)(bench__rnd() % 2);
        e.u.job.work = 1e4;
        e.u.job.ckpt_bytes = 1e8;
      } else if (b.nrun) {
        uint32_t j = b.run_list[bench__rnd() % b.nrun];
        e.type = SCHED_EV_JOB_FINISH;
        e.job = j;
        e.run = b.last_run[j];
      } else {
        e.type = SCHED_EV_TICK;
      }
    } else if (r < 45) {
      uint32_t j = b.run_list[bench__rnd() % b.nrun];
      e.type = (bench__rnd() % 10) ? SCHED_EV_JOB_FINISH : SCHED_EV_JOB_FAIL;
      e.job = j;
      e.run = b.last_run[j];
    } else if (r < 55) {
      uint32_t g = (uint32_t)(bench__rnd() % ngpus);
      if (!present[g]) continue;
      e.type = (bench__rnd() % 2) ? SCHED_EV_GPU_LEAVE : SCHED_EV_GPU_MISSED;
      e.gpu = g;
      present[g] = 0;
      absent[nabsent++] = g;
    } else if (r < 65) {
      if (!nabsent) continue;
      uint32_t k = (uint32_t)(bench__rnd() % nabsent), g = absent[k];
      absent[k] = absent[--nabsent];
      present[g] = 1;
      e.type = SCHED_EV_HEARTBEAT; /* a known GPU back: rejoins the pool */
      e.gpu = g;
    } else if (r < 90) {
      uint32_t g = (uint32_t)(bench__rnd() % ngpus);
      if (!present[g]) continue;
      e.type = SCHED_EV_HEARTBEAT;
      e.gpu = g;
    } else if (r < 98) {
      if (!b.nrun) continue;
      uint32_t j = b.run_list[bench__rnd() % b.nrun];
      e.type = SCHED_EV_JOB_PROGRESS;
      e.job = j;
      e.run = b.last_run[j];
      e.value = (double)(bench__rnd() % 10000);
    } else if (i % 100000 == 0) {
      e.type = SCHED_EV_BILLING; /* O(GPUs): rare */
    } else {
      e.type = SCHED_EV_TICK;
    }
    rc = sched_handle(s, &e);
    if (rc) {
      fprintf(stderr, "spotlab bench sched: event %d refused: %s\n", e.type, sched_strerror(rc));
      exit(1);
    }
    /* Employed GPUs, estimated from every 64th GPU every 4096 events (the sink's running count
     * does not see GPUs freed by stops and ends). Outside the core, but inside the timing: it
     * costs under 1% of the stream at 100k GPUs. */
    if ((i & 4095) == 0) {
      uint64_t emp = 0;
      for (uint32_t g = 0; g < ngpus; g += 64) {
        sched_gpu_status gs;
        sched_gpu_query(s, g, t, &gs);
        emp += gs.state == SCHED_GPU_BUSY || gs.state == SCHED_GPU_STANDBY;
      }
      b.busy = emp * 64; /* sampled estimate of employed GPUs */
    }
  }
  double wall = bench__now() - w1;
  sched_counters c1;
  sched_counters_get(s, &c1);
  char msg[256];
  int inv = sched_check_invariants(s, msg, sizeof msg);
  uint64_t ev = c1.events - c0.events, dec = c1.decisions - c0.decisions;
  printf("%-12s %8u %10llu %10llu %8.3f %12.0f %12.0f %9.0f %8.2f  %s\n", sched_policy_name(pol), ngpus,
         (unsigned long long)ev, (unsigned long long)dec, wall, ev / wall, dec / wall, 1e9 * wall / (double)ev, join_s,
         inv ? msg : "ok");
  if (csv)
    fprintf(csv, "%s,%u,%llu,%llu,%.6f,%.1f,%.1f,%.6f,%s\n", sched_policy_name(pol), ngpus, (unsigned long long)ev,
            (unsigned long long)dec, wall, ev / wall, dec / wall, join_s, inv ? "broken" : "ok");
  sched_destroy(s);
  free(b.last_run);
  free(b.running);
  free(b.run_list);
  free(b.run_pos);
  free(present);
  free(absent);
  return inv ? 1 : 0;
}

/* The transfer model's table (models/sched/sched_model.c): pure formulas, no timing. */
static int bench__net(double bw_mbps, double rtt, unsigned harq_max, FILE *csv) {
  static const double loss[] = {0.0001, 0.001, 0.01, 0.05, 0.1, 0.2, 0.3, 0.5, 0.7, 0.9, 0.95, 0.99, 0.995, 0.999};
  sched_config c;
  sched_config_default(&c);
  sched_net_params tcp = c.net, arq = c.net, harq = c.net;
  tcp.mode = SCHED_NET_TCP;
  arq.mode = SCHED_NET_ARQ;
  harq.mode = SCHED_NET_HARQ_CC;
  harq.harq_max_tx = harq_max;
  printf("link %.4g Mbit/s, RTT %.3g s, packets of %.0f bits; TCP: PFTK, Wmax %.0f packets, T0 %.3g s, b %.0f;\n"
         "HARQ: chase combining of up to %u copies (uncoded BPSK on AWGN fitted to the loss)\n\n",
         bw_mbps, rtt, c.net.packet_bits, tcp.tcp_wmax, tcp.tcp_rto_s, tcp.tcp_b, harq_max);
  printf("%8s %9s %9s %12s %12s %12s %10s %10s %10s %10s\n", "loss", "tx_arq", "tx_harq", "tcp_Mbps", "arq_Mbps",
         "harq_Mbps", "1GB_tcp_s", "1GB_harq_s", "harq/arq", "harq/tcp");
  if (csv)
    fprintf(csv, "loss,tx_arq,tx_harq,tcp_mbps,arq_mbps,harq_mbps,gb_tcp_s,gb_harq_s,harq_over_arq,harq_over_tcp\n");
  for (size_t i = 0; i < sizeof loss / sizeof loss[0]; i++) {
    sched_link l = {bw_mbps * 1e6, rtt, loss[i]};
    double ea = sched_net_expected_tx(&arq, loss[i]), eh = sched_net_expected_tx(&harq, loss[i]);
    double gt = sched_net_goodput(&tcp, &l), ga = sched_net_goodput(&arq, &l), gh = sched_net_goodput(&harq, &l);
    double tt = sched_net_transfer_time(&tcp, &l, 1e9), th = sched_net_transfer_time(&harq, &l, 1e9);
    printf("%8.4g %9.4g %9.4g %12.4g %12.4g %12.4g %10.4g %10.4g %10.4g %10.4g\n", loss[i], ea, eh, gt / 1e6, ga / 1e6,
           gh / 1e6, tt, th, gh / ga, gh / gt);
    if (csv)
      fprintf(csv, "%g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g\n", loss[i], ea, eh, gt / 1e6, ga / 1e6, gh / 1e6,
              tt, th, gh / ga, gh / gt);
  }
  return 0;
}

static int cmd_bench_sched_main(int argc, char **argv) {
  unsigned long long gpus = 100000, events = 1000000, seed = 1;
  app_args a;
  int prc = app_cli_parse(&bench__cli, argc, argv, &a);
  if (prc) {
    app_args_free(&a);
    return prc == 1 ? 0 : 2;
  }
  gpus = app_args_u64(&a, "--gpus", gpus);
  events = app_args_u64(&a, "--events", events);
  seed = app_args_u64(&a, "--seed", seed);
  int only = app_args_choice(&a, "--policy", -1), net = app_args_flag(&a, "--net");
  const char *out = app_args_str(&a, "--out", NULL);
  double bw = app_args_double(&a, "--bw", 100), rtt = app_args_double(&a, "--rtt", 0.1);
  unsigned long long harq_max = app_args_u64(&a, "--harq-max", 4);
  app_args_free(&a);
  FILE *csv = NULL;
  if (out) {
    csv = fopen(out, "w");
    if (!csv) {
      fprintf(stderr, "spotlab bench sched: cannot write %s\n", out);
      return 1;
    }
  }
  if (net) {
    int rc = bench__net(bw, rtt, (unsigned)harq_max, csv);
    if (csv) fclose(csv);
    return rc;
  }
  if (csv) fprintf(csv, "policy,gpus,events,decisions,wall_s,events_per_s,decisions_per_s,join_s,invariants\n");
  printf("%-12s %8s %10s %10s %8s %12s %12s %9s %8s  %s\n", "policy", "gpus", "events", "decisions", "wall_s",
         "events/s", "decisions/s", "ns/event", "join_s", "invariants");
  int bad = 0;
  for (int p = 0; p < SCHED_FT_COUNT; p++)
    if (only < 0 || only == p) bad |= bench__one((sched_policy)p, (uint32_t)gpus, events, seed, csv);
  if (csv) fclose(csv);
  return bad;
}

static const app_command cmd_bench_sched = {"bench sched", "decisions per second of the scheduling core",
                                            cmd_bench_sched_main};
APP_COMMAND(cmd_bench_sched)
