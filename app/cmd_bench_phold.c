/* cmd_bench_phold.c - `spotlab bench phold`: the engine's events per second on PHOLD, beside a
 * bare reference loop measured in the same run.
 *
 * The reference is a minimal sequential PHOLD loop (a binary heap of (time, LP)
 * and xoshiro256+, no engine at all): the yardstick of how fast one core can go. The ratio
 * engine/reference is the figure to quote; absolute rates drift with the machine's load.
 */
#include "app/app.h"
#include "app/cli.h"
#include "models/phold/phold.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double bp__now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* ---- the reference loop (same model; its own RNG, so counts differ slightly) ------------- */
typedef struct {
  double ts;
  uint32_t dst, pad;
} bp__ev;
typedef struct {
  bp__ev *h;
  size_t n, cap;
  uint64_t s[4];
} bp__ref;

static inline uint64_t bp__rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
static inline uint64_t bp__next(bp__ref *r) { /* xoshiro256+ */
  uint64_t *s = r->s, res = s[0] + s[3], t = s[1] << 17;
  s[2] ^= s[0];
  s[3] ^= s[1];
  s[1] ^= s[2];
  s[0] ^= s[3];
  s[2] ^= t;
  s[3] = bp__rotl(s[3], 45);
  return res;
}
static inline double bp__u01(bp__ref *r) { return ((double)(bp__next(r) >> 11) + 0.5) * 0x1.0p-53; }
static inline void bp__push(bp__ref *r, double ts, uint32_t d) {
  if (r->n == r->cap) {
    r->cap = r->cap ? r->cap * 2 : 1024;
    r->h = realloc(r->h, r->cap * sizeof *r->h);
    if (!r->h) SIM_FATAL("out of memory");
  }
  size_t i = r->n++;
  while (i) {
    size_t p = (i - 1) >> 1;
    if (r->h[p].ts <= ts) break;
    r->h[i] = r->h[p];
    i = p;
  }
  r->h[i].ts = ts;
  r->h[i].dst = d;
}
static inline bp__ev bp__pop(bp__ref *r) {
  bp__ev top = r->h[0], last = r->h[--r->n];
  size_t i = 0;
  for (;;) {
    size_t c = 2 * i + 1;
    if (c >= r->n) break;
    if (c + 1 < r->n && r->h[c + 1].ts < r->h[c].ts) c++;
    if (r->h[c].ts >= last.ts) break;
    r->h[i] = r->h[c];
    i = c;
  }
  r->h[i] = last;
  return top;
}

static uint64_t bp__reference(const phold_config *c, double end, double *secs) {
  bp__ref r = {0};
  r.s[0] = 0x9E3779B97F4A7C15ull;
  r.s[1] = 0xBF58476D1CE4E5B9ull;
  r.s[2] = 0x94D049BB133111EBull;
  r.s[3] = 12345;
  uint32_t nlp = (uint32_t)c->lps;
  for (uint32_t i = 0; i < nlp; i++)
    for (int64_t k = 0; k < c->start; k++) bp__push(&r, c->lookahead - c->mean * log(bp__u01(&r)), i);
  double t0 = bp__now();
  uint64_t ev = 0;
  while (r.n && r.h[0].ts < end) {
    bp__ev e = bp__pop(&r);
    ev++;
    uint32_t d = bp__u01(&r) < c->remote ? (uint32_t)(((bp__next(&r) >> 32) * (uint64_t)nlp) >> 32) : e.dst;
    bp__push(&r, e.ts + c->lookahead - c->mean * log(bp__u01(&r)), d);
  }
  *secs = bp__now() - t0;
  free(r.h);
  return ev;
}

static const app_option bp__opts[] = {
    {"--lps", APP_O_U64, "N", 1, 2147483648.0, 0, "logical processes (default 1024)"},
    {"--end", APP_O_DOUBLE, "T", 0, 1e12, 0, "simulated end time (default 50000)"},
    {"--lookahead", APP_O_DOUBLE, "L", 1e-9, 1e9, 0, "minimum event delay (default 0.1)"},
    {"--mean", APP_O_DOUBLE, "M", 0, 1e9, 0, "mean of the exponential delay beyond the lookahead (default 0.9)"},
    {"--remote", APP_O_DOUBLE, "R", 0, 1, 0, "share of events sent to a random LP (default 0.1)"},
    {"--start", APP_O_U64, "K", 1, 1000, 0, "initial events per LP (default 1)"},
    APP_OPT_SEED("engine seed (default 1)"),
    {"--repeat", APP_O_U64, "N", 1, 100, 0, "run each N times and report the median rate (default 1)"},
    {"--no-reference", APP_O_FLAG, NULL, 0, 0, 0, "skip the bare heap loop"},
    {"--ranks-info", APP_O_FLAG, NULL, 0, 0, 0, "print ranks, windows and events per window"},
    {NULL},
};
static const app_cli bp__cli = {
    "bench phold",
    "",
    0,
    0,
    NULL,
    "Runs PHOLD on the engine and prints committed events and events per second, beside a\n"
    "bare heap loop (the algorithm of phold_ref.c) run in the same process, with the ratio.\n"
    "Under mpirun the engine runs on all ranks (the reference runs on rank 0 alone).\n",
    "Exit status: 0 done, 2 bad usage.\n",
    bp__opts};

static int cmd_bench_phold_main(int argc, char **argv) {
  phold_config c = {1024, 1, 0.1, 0.9, 0.1};
  double end = 50000;
  unsigned long long seed = 1, repeat = 1;
  int reference = 1, ranks_info = 0;
  app_args a;
  int prc = app_cli_parse(&bp__cli, argc, argv, &a);
  if (prc) {
    app_args_free(&a);
    return prc == 1 ? 0 : 2;
  }
  c.lps = (int64_t)app_args_u64(&a, "--lps", (unsigned long long)c.lps);
  c.start = (int64_t)app_args_u64(&a, "--start", (unsigned long long)c.start);
  end = app_args_double(&a, "--end", end);
  c.lookahead = app_args_double(&a, "--lookahead", c.lookahead);
  c.mean = app_args_double(&a, "--mean", c.mean);
  c.remote = app_args_double(&a, "--remote", c.remote);
  seed = app_args_u64(&a, "--seed", seed);
  repeat = app_args_u64(&a, "--repeat", repeat);
  reference = !app_args_flag(&a, "--no-reference");
  ranks_info = app_args_flag(&a, "--ranks-info");
  app_args_free(&a);
  app_mpi_init(&argc, &argv);
  int rank = app_mpi_rank(), P = app_mpi_size();
  sim_model m;
  phold_model_init(&m, &c, end);
  double *erate = calloc(repeat, sizeof *erate), *rrate = calloc(repeat, sizeof *rrate);
  uint64_t ev = 0, rev = 0, windows = 0;
  double rss = 0;
  if (rank == 0)
    fprintf(stderr, "bench phold: %lld LPs, end %g, lookahead %g, mean %g, remote %g, %d rank%s, %llu repeat%s\n",
            (long long)c.lps, end, c.lookahead, c.mean, c.remote, P, P == 1 ? "" : "s", repeat, repeat == 1 ? "" : "s");
  for (unsigned long long k = 0; k < repeat; k++) {
    sim_results res;
    sim_run_opts o = {seed, P > 1, 0, NULL};
    if (sim_run(&m, &o, &res)) SIM_FATAL("engine refused PHOLD");
    erate[k] = (double)res.events / res.wall_s;
    ev = res.events;
    windows = res.windows;
    rss = res.peak_rss_mib;
    if (ranks_info && rank == 0 && k == 0)
      fprintf(stderr, "  ranks %d, windows %llu, events per window %.1f\n", P, (unsigned long long)windows,
              (double)ev / (double)(windows ? windows : 1));
    sim_results_free(&res);
    if (reference && rank == 0) {
      double secs;
      rev = bp__reference(&c, end, &secs);
      rrate[k] = (double)rev / secs;
    }
  }
  if (rank == 0) {
    double em = app_median(erate, repeat), rm = app_median(rrate, repeat);
    printf("%-22s %8s %10s %14s %14s %10s\n", "system", "ranks", "LPs", "events", "events/s", "peak MiB");
    printf("%-22s %8d %10lld %14llu %14.4g %10.1f\n", "spotlab engine", P, (long long)c.lps, (unsigned long long)ev, em,
           rss);
    if (reference) {
      printf("%-22s %8d %10lld %14llu %14.4g %10s\n", "bare heap loop (ref)", 1, (long long)c.lps,
             (unsigned long long)rev, rm, "-");
      printf("engine / reference = %.3f (median of %llu)\n", em / rm, repeat);
    }
  }
  free(erate);
  free(rrate);
  return 0;
}

static const app_command cmd_bench_phold = {"bench phold", "PHOLD events/s of the engine beside a bare heap loop",
                                            cmd_bench_phold_main};
APP_COMMAND(cmd_bench_phold)
