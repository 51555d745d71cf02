/* cmd_run.c - `spotlab run`, `spotlab check` and `spotlab keys`. */
#include "app/app.h"
#include "app/models.h"
#include "app/runner.h"

#include <errno.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define APP_MAX_OVERRIDES 64

static void run__help(FILE *f) {
  fprintf(f, "usage: spotlab run SCENARIO [--seed N] [--reps N] [--out FILE.h5] [--param KEY=VALUE]...\n"
             "                  [--spread auto|reps|model] [--shard K/N] [--all] [--quiet]\n\n"
             "Runs a scenario file and writes its results (HDF5, docs/results-format.md).\n\n"
             "  --seed N          base seed (overrides run.seed); replication r derives its own\n"
             "  --reps N          replications (overrides run.reps); 95%% CIs need 2 or more\n"
             "  --out FILE.h5     results file (default: results/SCENARIO-NAME.h5)\n"
             "  --param K=V       override one scenario key, e.g. --param market.bidding.fee=0.05\n"
             "  --spread S        under mpirun: reps (each replication whole on one rank), model (each\n"
             "                    over all ranks), auto (default: model only for fewer replications\n"
             "                    than ranks and a big model); the choice is printed\n"
             "  --shard K/N       run only part K (0 .. N-1) of N of the replications, into a part file\n"
             "                    for `spotlab merge` (a job array: docs/slurm.md)\n"
             "  --all             print every metric, not only the model's headline ones\n"
             "  --quiet           no summary table, no progress line\n\n"
             "Replications run in parallel on OpenMP threads (OMP_NUM_THREADS) and, under mpirun, over\n"
             "the ranks (--spread). One scenario and seed give bit-identical results on any number of\n"
             "ranks and threads, and with any spread or sharding.\n"
             "Exit status: 0 done, 1 an end-of-run check failed or the file could not be written,\n"
             "2 bad usage or bad scenario (reported as FILE:LINE: message).\n");
}

static void run__default_out(const char *scenario, char *out, size_t len) {
  char *c = strdup(scenario);
  char *b = c ? basename(c) : "run";
  char *dot = strrchr(b, '.');
  if (dot) *dot = 0;
  snprintf(out, len, "results/%s.h5", b);
  free(c);
}

static int cmd_run_main(int argc, char **argv) {
  const char *scenario = NULL, *out = NULL, *v;
  const char *ovr[APP_MAX_OVERRIDES + 2];
  int novr = 0, quiet = 0, all = 0, spread = APP_SPREAD_AUTO, shard_k = 0, shard_n = 0;
  char seedbuf[64], repsbuf[64];
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
      run__help(stdout);
      return 0;
    } else if (app_opt(argc, argv, &i, "--seed", &v)) {
      unsigned long long x;
      if (app_opt_u64("--seed", v, 0, (unsigned long long)9.2e18, &x)) return 2;
      snprintf(seedbuf, sizeof seedbuf, "run.seed=%llu", x);
      ovr[novr++] = seedbuf;
    } else if (app_opt(argc, argv, &i, "--reps", &v)) {
      unsigned long long x;
      if (app_opt_u64("--reps", v, 1, 10000, &x)) return 2;
      snprintf(repsbuf, sizeof repsbuf, "run.reps=%llu", x);
      ovr[novr++] = repsbuf;
    } else if (app_opt(argc, argv, &i, "--out", &v)) {
      out = v;
    } else if (app_opt(argc, argv, &i, "--param", &v)) {
      if (novr >= APP_MAX_OVERRIDES) {
        fprintf(stderr, "spotlab run: too many --param options\n");
        return 2;
      }
      ovr[novr++] = v;
    } else if (app_opt(argc, argv, &i, "--spread", &v)) {
      if ((spread = app_spread_parse(v)) < 0) {
        fprintf(stderr, "spotlab run: --spread '%s': expected auto, reps or model\n", v);
        return 2;
      }
    } else if (app_opt(argc, argv, &i, "--shard", &v)) {
      char tail;
      if (sscanf(v, "%d/%d%c", &shard_k, &shard_n, &tail) != 2 || shard_n < 1 || shard_n > 10000 || shard_k < 0 ||
          shard_k >= shard_n) {
        fprintf(stderr, "spotlab run: --shard '%s': expected K/N with 0 <= K < N <= 10000 (e.g. 0/4)\n", v);
        return 2;
      }
    } else if (!strcmp(argv[i], "--quiet")) {
      quiet = 1;
    } else if (!strcmp(argv[i], "--all")) {
      all = 1;
    } else if (argv[i][0] == '-') {
      fprintf(stderr, "spotlab run: unknown option '%s' (spotlab run --help)\n", argv[i]);
      return 2;
    } else if (!scenario) {
      scenario = argv[i];
    } else {
      fprintf(stderr, "spotlab run: one scenario at a time ('%s' is extra)\n", argv[i]);
      return 2;
    }
  }
  if (!scenario) {
    run__help(stderr);
    return 2;
  }
  app_mpi_init(&argc, &argv);
  int rank = app_mpi_rank();
  sim_diag d;
  sim_diag_init(&d, rank == 0 ? stderr : NULL);
  app_loaded l;
  if (app_load(scenario, ovr, novr, &d, &l)) {
    if (rank == 0)
      fprintf(stderr, "spotlab run: %d error%s in %s; nothing was run\n", d.nerrors, d.nerrors == 1 ? "" : "s",
              scenario);
    return 2;
  }
  char defout[4096];
  if (!out) {
    run__default_out(scenario, defout, sizeof defout);
    out = defout;
    if (rank == 0) mkdir("results", 0777);
  }
  /* Fail before the run, not after it, if the results cannot be written. */
  if (rank == 0) {
    char *oc = strdup(out);
    const char *dir = oc ? dirname(oc) : ".";
    int ok = access(dir, W_OK) == 0;
    if (!ok) fprintf(stderr, "spotlab run: cannot write results into folder '%s': %s\n", dir, strerror(errno));
    free(oc);
    if (!ok) {
      app_unload(&l);
      return 2;
    }
  }
  l.spread = spread;
  if (shard_n) {
    /* part K of N: replications [K*R/N, (K+1)*R/N), so the N parts cover 0 .. R-1 once */
    long long R = l.run.reps;
    l.rep_first = (int)(shard_k * R / shard_n);
    l.rep_count = (int)((shard_k + 1) * R / shard_n) - l.rep_first;
    if (shard_n > R) { /* every part holds at least one replication */
      if (rank == 0)
        fprintf(stderr, "spotlab run: --shard %d/%d: %lld replications make fewer than %d parts\n", shard_k, shard_n, R,
                shard_n);
      app_unload(&l);
      return 2;
    }
  }
  if (!quiet && rank == 0) {
    char why[512];
    app_spread_choose(&l, app_mpi_size(), why, sizeof why);
    if (shard_n)
      fprintf(stderr, "spotlab run: shard %d/%d: replications %d-%d of %lld\n", shard_k, shard_n, l.rep_first,
              l.rep_first + l.rep_count - 1, (long long)l.run.reps);
    fprintf(stderr, "spotlab run: %s\n", why);
  }
  int progress = !quiet && isatty(2);
  app_run_out o;
  int failed = app_run_reps(&l, progress, &o);
  int rc = 0;
  if (rank == 0) {
    if (app_write_results(out, &l, &o)) rc = 1;
    if (!quiet) {
      app_print_summary(stdout, &l, &o, all);
      if (!rc) printf("\nresults: %s\n", out);
    }
  }
  app_run_out_free(&l, &o);
  app_unload(&l);
  return failed || rc ? 1 : 0;
}

static void check__help(FILE *f) {
  fprintf(f, "usage: spotlab check SCENARIO [--param KEY=VALUE]... [--print] [--pilot SECONDS | --no-estimate]\n\n"
             "Parses and validates a scenario file and builds its model without running it.\n"
             "Problems are reported as FILE:LINE: message (exit 2).\n\n"
             "  --param K=V       override one scenario key, as `spotlab run` does\n"
             "  --print           write every key's effective value, defaults included\n"
             "  --pilot SECONDS   CPU time for the estimate's pilot runs (default 0.25): replication 0 runs\n"
             "                    over a sliver of run.end, then further until the pilots have measured\n"
             "                    about this much; events and CPU time are extrapolated to run.end. A\n"
             "                    scenario estimated above run.max_events per replication is refused\n"
             "  --no-estimate     validate and build only\n");
}

static int cmd_check_main(int argc, char **argv) {
  const char *scenario = NULL, *v;
  const char *ovr[APP_MAX_OVERRIDES];
  int print = 0, novr = 0, estimate = 1;
  double pilot = 0.25;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
      check__help(stdout);
      return 0;
    } else if (!strcmp(argv[i], "--print")) {
      print = 1;
    } else if (!strcmp(argv[i], "--no-estimate")) {
      estimate = 0;
    } else if (app_opt(argc, argv, &i, "--pilot", &v)) {
      char *e;
      errno = 0;
      pilot = strtod(v, &e);
      if (errno || e == v || *e || !(pilot >= 0.001 && pilot <= 3600)) {
        fprintf(stderr, "spotlab check: --pilot '%s': expected seconds in [0.001, 3600]\n", v);
        return 2;
      }
    } else if (app_opt(argc, argv, &i, "--param", &v)) {
      if (novr >= APP_MAX_OVERRIDES) {
        fprintf(stderr, "spotlab check: too many --param options (at most %d)\n", APP_MAX_OVERRIDES);
        return 2;
      }
      ovr[novr++] = v;
    } else if (argv[i][0] == '-') {
      fprintf(stderr, "spotlab check: unknown option '%s' (spotlab check --help)\n", argv[i]);
      return 2;
    } else if (!scenario) {
      scenario = argv[i];
    } else {
      fprintf(stderr, "spotlab check: one scenario at a time ('%s' is extra)\n", argv[i]);
      return 2;
    }
  }
  if (!scenario) {
    check__help(stderr);
    return 2;
  }
  sim_diag d;
  sim_diag_init(&d, stderr);
  app_loaded l;
  if (app_load(scenario, ovr, novr, &d, &l)) {
    fprintf(stderr, "spotlab check: %d error%s in %s\n", d.nerrors, d.nerrors == 1 ? "" : "s", scenario);
    return 2;
  }
  app_estimate est;
  if (estimate) {
    int rc = app_estimate_run(&l, pilot, &est);
    if (rc) {
      fprintf(stderr, "spotlab check: %s: the engine refused the model: %s\n", scenario, sim_strerror(rc));
      app_unload(&l);
      return 2;
    }
    if (app_estimate_refused(&l, scenario, &est, &d)) {
      fprintf(stderr, "spotlab check: 1 error in %s\n", scenario);
      app_unload(&l);
      return 2;
    }
  }
  printf("%s: OK: model %s, %llu entities, %lld replication%s of %.6g s, lookahead %g s\n", scenario, l.cls->name,
         (unsigned long long)l.model.nlps, (long long)l.run.reps, l.run.reps == 1 ? "" : "s", l.run.end,
         l.model.lookahead);
  if (estimate) {
    if (est.exact)
      printf("  %.0f engine events per replication (counted: replication 0 ran whole in %.3g s of CPU)\n", est.events,
             est.wall_s);
    else
      printf("  about %.3g engine events and %.3g s of one core per replication (extrapolated from replication 0's "
             "first %.6g s: %.0f events in %.3g s of CPU)\n",
             est.events, est.wall_s, est.horizon_s, est.pilot_events, est.pilot_wall_s);
  }
  if (print) fputs(l.effective, stdout);
  app_unload(&l);
  return 0;
}

static int cmd_keys_main(int argc, char **argv) {
  if (argc > 1 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
    printf("usage: spotlab keys [MODEL]\n\nLists the scenario keys: the engine's (group run) and each\n"
           "model's (or MODEL's alone), with type, default, bounds, unit and help.\n");
    return 0;
  }
  const char *only = argc > 1 ? argv[1] : NULL;
  if (only && !app_model_find(only)) {
    fprintf(stderr, "spotlab keys: unknown model '%s'\n", only);
    return 2;
  }
  printf("model = \"NAME\"  (top level) which model the scenario runs\n\n");
  printf("[engine]\n");
  sim_param_describe(stdout, "run", app_run_params);
  for (size_t i = 0; i < app_model_count(); i++) {
    const sim_model_class *c = app_model_at(i);
    if (only && strcmp(only, c->name)) continue;
    printf("\n[model %s] %s\n", c->name, c->help);
    sim_param_describe(stdout, c->name, c->params);
  }
  return 0;
}

static const app_command cmd_run = {"run", "run a scenario and write its results (HDF5)", cmd_run_main};
static const app_command cmd_check = {"check", "validate a scenario file without running it", cmd_check_main};
static const app_command cmd_keys = {"keys", "list every scenario key with its default, bounds and unit",
                                     cmd_keys_main};
APP_COMMAND(cmd_run)
APP_COMMAND(cmd_check)
APP_COMMAND(cmd_keys)
