/* cmd_run.c - `spotlab run`, `spotlab check` and `spotlab keys`. */
#include "app/app.h"
#include "app/cli.h"
#include "app/progress.h"
#include "app/models.h"
#include "app/runner.h"

#include <errno.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const app_option run__opts[] = {
    APP_OPT_SEED("base seed (overrides run.seed); replication r derives its own"),
    APP_OPT_REPS("replications (overrides run.reps); 95% CIs need 2 or more"),
    {"--out", APP_O_STRING, "FILE.h5", 0, 0, 0, "results file (default: results/SCENARIO-NAME.h5)"},
    APP_OPT_PARAM("override one scenario key, e.g. --param market.bidding.fee=0.05; a list's item by\n"
                  "name or index: market.regions.us.weekend_factor=0.8, 'market.regions.[1].tz_h=2'"),
    APP_OPT_SPREAD("under mpirun: reps (each replication whole on one rank), model (each over all ranks),\n"
                   "auto (default: model only for fewer replications than ranks and a big model); the\n"
                   "choice is printed"),
    {"--shard", APP_O_STRING, "K/N", 0, 0, 0,
     "run only part K (0 .. N-1) of N of the replications, into a part file for\n"
     "`spotlab merge` (a job array: docs/slurm.md)"},
    {"--all", APP_O_FLAG, NULL, 0, 0, 0, "print every metric, not only the model's headline ones"},
    APP_OPT_QUIET("no summary table, no progress line"),
    {NULL},
};
static const app_cli run__cli = {
    "run",
    "SCENARIO",
    1,
    1,
    NULL,
    "Runs a scenario file and writes its results (HDF5, docs/results-format.md).\n",
    "Replications run in parallel on OpenMP threads (OMP_NUM_THREADS) and, under mpirun, over\n"
    "the ranks (--spread). One scenario and seed give bit-identical results on any number of\n"
    "ranks and threads, and with any spread or sharding.\n"
    "Exit status: 0 done, 1 an end-of-run check failed or the file could not be written,\n"
    "2 bad usage or bad scenario (reported as FILE:LINE: message).\n",
    run__opts};

/* The overrides of the command line as app_load takes them: --seed and --reps as run.seed and
 * run.reps, then every --param in order (a later one wins). malloc'd, *n set. */
static const char **run__overrides(const app_args *a, char buf[2][64], int *n) {
  int np = app_args_count(a, "--param");
  const char **ovr = calloc((size_t)np + 2, sizeof *ovr);
  if (!ovr) SIM_FATAL("out of memory");
  *n = 0;
  app_args_run_overrides(a, buf, ovr, n);
  for (int k = 0; k < np; k++) ovr[(*n)++] = app_args_at(a, "--param", k);
  return ovr;
}

static void run__default_out(const char *scenario, char *out, size_t len) {
  char *c = strdup(scenario);
  char *b = c ? basename(c) : "run";
  char *dot = strrchr(b, '.');
  if (dot) *dot = 0;
  snprintf(out, len, "results/%s.h5", b);
  free(c);
}

static int cmd_run__go(const char *scenario, const char *out, const char **ovr, int novr, int quiet, int all,
                       int spread, int shard_k, int shard_n, int argc, char **argv) {
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
  /* Fail before the run, not after it, if the results cannot be written (every rank checks, so
   * that all of them stop). */
  int orc = app_out_check(rank == 0 ? stderr : NULL, "run", out, &scenario, 1, 0);
  if (orc) {
    app_unload(&l);
    return orc;
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
  app_stop_install();
  app_progress *prog = app_progress_start("rep", l.rep_count ? l.rep_count : (int)l.run.reps, quiet);
  app_run_out o;
  int failed = app_run_reps(&l, prog, &o);
  app_progress_end(prog);
  int rc = 0;
  if (rank == 0) {
    /* Stopped by a signal: the finished replications are written, marked interrupted (the honest
     * part of a run: replications 0..n-1 of the same seeds), or nothing when none finished. */
    if (o.interrupted && o.nreps == 0)
      fprintf(stderr, "spotlab run: stopped by signal %d before any replication finished; nothing was written\n",
              o.interrupted);
    else if (app_write_results(out, &l, &o))
      rc = 1;
    if (o.interrupted && o.nreps > 0 && !rc)
      fprintf(stderr,
              "spotlab run: stopped by signal %d: %d of %lld replications finished and were written to %s, "
              "marked interrupted\n",
              o.interrupted, o.nreps, (long long)l.run.reps, out);
    if (!quiet && o.nreps > 0) {
      app_print_summary(stdout, &l, &o, all);
      if (!rc) printf("\nresults: %s%s\n", out, o.interrupted ? " (interrupted)" : "");
    }
  }
  int sig = o.interrupted;
  app_run_out_free(&l, &o);
  app_unload(&l);
  if (sig) return app_stop_status(sig);
  return failed || rc ? 1 : 0;
}

static int cmd_run_main(int argc, char **argv) {
  app_args a;
  int prc = app_cli_parse(&run__cli, argc, argv, &a);
  if (prc) {
    app_args_free(&a);
    return prc == 1 ? 0 : 2;
  }
  const char *scenario = a.operand[0], *out = app_args_str(&a, "--out", NULL);
  int quiet = app_args_flag(&a, "--quiet"), all = app_args_flag(&a, "--all"), novr;
  char runbuf[2][64];
  int spread = app_spread_parse(app_spread_choices[app_args_choice(&a, "--spread", 0)]), shard_k = 0, shard_n = 0;
  const char *sh = app_args_str(&a, "--shard", NULL);
  if (sh) {
    char tail;
    if (sscanf(sh, "%d/%d%c", &shard_k, &shard_n, &tail) != 2 || shard_n < 1 || shard_n > 10000 || shard_k < 0 ||
        shard_k >= shard_n) {
      fprintf(stderr, "spotlab run: --shard '%s': expected K/N with 0 <= K < N <= 10000 (e.g. 0/4)\n", sh);
      app_args_free(&a);
      return 2;
    }
  }
  const char **ovr = run__overrides(&a, runbuf, &novr);
  int rc = cmd_run__go(scenario, out, ovr, novr, quiet, all, spread, shard_k, shard_n, argc, argv);
  free(ovr);
  app_args_free(&a);
  return rc;
}

static const app_option check__opts[] = {
    APP_OPT_PARAM("override one scenario key, as `spotlab run` does"),
    {"--print", APP_O_FLAG, NULL, 0, 0, 0, "write every key's effective value, defaults included"},
    {"--pilot", APP_O_DOUBLE, "SECONDS", 0.001, 3600, 0,
     "CPU time for the estimate's pilot runs (default 0.25): replication 0 runs\n"
     "over a sliver of run.end, then further until the pilots have measured\n"
     "about this much; events and CPU time are extrapolated to run.end. A\n"
     "scenario estimated above run.max_events per replication is refused"},
    {"--no-estimate", APP_O_FLAG, NULL, 0, 0, 0, "validate and build only"},
    {NULL},
};
static const app_cli check__cli = {"check",
                                   "SCENARIO",
                                   1,
                                   1,
                                   NULL,
                                   "Parses and validates a scenario file and builds its model without running it.\n"
                                   "Problems are reported as FILE:LINE: message (exit 2).\n",
                                   "Exit status: 0 valid, 2 bad usage or bad scenario.\n",
                                   check__opts};

static int cmd_check__go(const char *scenario, const char *const *ovr, int novr, int print, int estimate, double pilot);

static int cmd_check_main(int argc, char **argv) {
  app_args a;
  int prc = app_cli_parse(&check__cli, argc, argv, &a);
  if (prc) {
    app_args_free(&a);
    return prc == 1 ? 0 : 2;
  }
  int novr = app_args_count(&a, "--param");
  const char **ovr = calloc((size_t)novr + 1, sizeof *ovr);
  if (!ovr) SIM_FATAL("out of memory");
  for (int k = 0; k < novr; k++) ovr[k] = app_args_at(&a, "--param", k);
  int rc = cmd_check__go(a.operand[0], ovr, novr, app_args_flag(&a, "--print"), !app_args_flag(&a, "--no-estimate"),
                         app_args_double(&a, "--pilot", 0.25));
  free(ovr);
  app_args_free(&a);
  return rc;
}

static int cmd_check__go(const char *scenario, const char *const *ovr, int novr, int print, int estimate,
                         double pilot) {
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

static const app_option keys__opts[] = {{NULL}};
static const app_cli keys__cli = {"keys",
                                  "[MODEL]",
                                  0,
                                  1,
                                  NULL,
                                  "Lists the scenario keys: the engine's (group run) and each\n"
                                  "model's (or MODEL's alone), with type, default, bounds, unit and help.\n",
                                  "Exit status: 0 listed, 2 bad usage or an unknown model.\n",
                                  keys__opts};

static int cmd_keys_main(int argc, char **argv) {
  app_args a;
  int prc = app_cli_parse(&keys__cli, argc, argv, &a);
  const char *only = a.noperands ? a.operand[0] : NULL;
  app_args_free(&a);
  if (prc) return prc == 1 ? 0 : 2;
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
