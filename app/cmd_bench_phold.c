/* cmd_bench_phold.c - `spotlab bench phold`: the engine's events per second on PHOLD, beside a
 * bare reference loop measured in the same run.
 *
 * The reference is a minimal sequential PHOLD loop (a binary heap of (time, LP)
 * and xoshiro256+, no engine at all): the yardstick of how fast one core can go. The ratio
 * engine/reference is the figure to quote; absolute rates drift with the machine's load.
 */
#include "app/app.h"
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

static void bp__help(FILE *f) {
  fprintf(f, "usage: spotlab bench phold [--lps N] [--end T] [--lookahead L] [--mean M] [--remote R]\n"
             "                           [--start K] [--seed S] [--repeat N] [--no-reference] [--ranks-info]\n\n"
             "Runs PHOLD on the engine and prints committed events and events per second, beside a\n"
             "bare heap loop (the algorithm of phold_ref.c) run in the same process, with the ratio.\n"
             "Defaults: --lps 1024 --end 50000 --lookahead 0.1 --mean 0.9 --remote 0.1 --start 1.\n"
             "Under mpirun the engine runs on all ranks (the reference runs on rank 0 alone).\n"
             "--repeat N runs each N times and reports the median rate.\n");
}

static int bp__cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static int cmd_bench_phold_main(int argc, char **argv) {
  phold_config c = {1024, 1, 0.1, 0.9, 0.1};
  double end = 50000;
  unsigned long long seed = 1, repeat = 1, u;
  int reference = 1, ranks_info = 0;
  const char *v;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
      bp__help(stdout);
      return 0;
    } else if (app_opt(argc, argv, &i, "--lps", &v)) {
      if (app_opt_u64("--lps", v, 1, 1ull << 31, &u)) return 2;
      c.lps = (int64_t)u;
    } else if (app_opt(argc, argv, &i, "--start", &v)) {
      if (app_opt_u64("--start", v, 1, 1000, &u)) return 2;
      c.start = (int64_t)u;
    } else if (app_opt(argc, argv, &i, "--end", &v)) {
      if (app_opt_double("--end", v, 0, 1e12, &end)) return 2;
    } else if (app_opt(argc, argv, &i, "--lookahead", &v)) {
      if (app_opt_double("--lookahead", v, 1e-9, 1e9, &c.lookahead)) return 2;
    } else if (app_opt(argc, argv, &i, "--mean", &v)) {
      if (app_opt_double("--mean", v, 0, 1e9, &c.mean)) return 2;
    } else if (app_opt(argc, argv, &i, "--remote", &v)) {
      if (app_opt_double("--remote", v, 0, 1, &c.remote)) return 2;
    } else if (app_opt(argc, argv, &i, "--seed", &v)) {
      if (app_opt_u64("--seed", v, 0, ~0ull, &seed)) return 2;
    } else if (app_opt(argc, argv, &i, "--repeat", &v)) {
      if (app_opt_u64("--repeat", v, 1, 100, &repeat)) return 2;
    } else if (!strcmp(argv[i], "--no-reference"))
      reference = 0;
    else if (!strcmp(argv[i], "--ranks-info"))
      ranks_info = 1;
    else {
      fprintf(stderr, "spotlab bench phold: unknown option '%s' (--help)\n", argv[i]);
      return 2;
    }
  }
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
    qsort(erate, repeat, sizeof *erate, bp__cmp);
    qsort(rrate, repeat, sizeof *rrate, bp__cmp);
    double em = erate[repeat / 2], rm = rrate[repeat / 2];
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
