/* runner.c - see runner.h. */
#include "app/runner.h"
#include "app/cli.h"
#include "app/progress.h"
#include "app/app.h"
#include "app/models.h"
#include "analysis/report/rpt.h"

#include <libgen.h>
#include <math.h>
#include <mpi.h>
#include <omp.h>
#include <time.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

const sim_param app_run_params[] = {
    {"seed", SIM_P_INT, offsetof(app_run_cfg, seed), "1", 0, APP_SEED_MAX, "1",
     "base seed; replication r runs a seed derived from it (r = 0 runs this one)"},
    {"reps", SIM_P_INT, offsetof(app_run_cfg, reps), "1", 1, APP_REPS_MAX, "replications",
     "independent replications, summarized with 95% confidence intervals"},
    {"end", SIM_P_DURATION, offsetof(app_run_cfg, end), "\"7d\"", 1e-9, 3.2e9, "s",
     "simulated time to run (seconds, or \"12h\", \"7d\", ...)"},
    /* Assumption: 1e12 events is about 16 days of one core at the 0.73 M events/s the 1M-GPU
     * market runs at (docs/history/performance-log.md); beyond that a scenario is more likely a unit slip
     * (run.end in seconds where hours were meant) than a run someone will wait for. */
    {"max_events", SIM_P_DOUBLE, offsetof(app_run_cfg, max_events), "1e12", 0, 1e18, "events",
     "`check` refuses a scenario whose replications it estimates at more engine events than this "
     "(0: no limit)"},
    {NULL},
};

typedef struct app__top {
  char *model;
} app__top;

static const sim_param app__top_params[] = {
    {"model", SIM_P_STRING, offsetof(app__top, model), NULL, SIM_UNBOUNDED, NULL,
     "which model the scenario runs (spotlab keys lists them); its keys go in a group of that name"},
    {NULL},
};

/* Memory a process may use: the least of physical memory, the address-space limit and the
 * cgroup's limit (cgroup v2 memory.max, v1 memory.limit_in_bytes), in bytes. */
double app_memory_available(void) {
  double avail = (double)sysconf(_SC_PHYS_PAGES) * (double)sysconf(_SC_PAGESIZE);
  struct rlimit rl;
  if (getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY && (double)rl.rlim_cur < avail)
    avail = (double)rl.rlim_cur;
  const char *cg[] = {"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"};
  for (int i = 0; i < 2; i++) {
    FILE *f = fopen(cg[i], "r");
    if (!f) continue;
    double v;
    if (fscanf(f, "%lf", &v) == 1 && v > 0 && v < avail) avail = v; /* "max" reads as no number */
    fclose(f);
  }
  return avail > 0 ? avail : 1e18;
}

/* 1 (with the message) when `per_rep` bytes for each replication in flight exceed what this machine
 * gives a process. */
static int app__too_big(const app_loaded *l, sim_diag *d, const char *path, double per_rep, const char *about,
                        const char *what, const char *detail, const char *hint);

/* Replications a run holds at once: one per OpenMP thread, at most run.reps. */
static int app__inflight(const app_loaded *l) {
  int inflight = omp_get_max_threads();
  if (inflight > l->run.reps) inflight = (int)l->run.reps;
  return inflight < 1 ? 1 : inflight;
}

static int app__too_big(const app_loaded *l, sim_diag *d, const char *path, double per_rep, const char *about,
                        const char *what, const char *detail, const char *hint) {
  int inflight = app__inflight(l);
  double need = per_rep * inflight, avail = app_memory_available();
  if (!(need > avail)) return 0;
  sim_diag_report(d, path, 0,
                  "the run needs %s%.3g GB for its %s (%d replication%s at once%s), more than the %.3g GB "
                  "this machine gives a process; %s",
                  about, need / 1e9, what, inflight, inflight == 1 ? "" : "s", detail, avail / 1e9, hint);
  return 1;
}

static int app__load(const char *path, const char *const *overrides, int noverrides, sim_diag *d, app_loaded *l);

int app_load(const char *path, const char *const *overrides, int noverrides, sim_diag *d, app_loaded *l) {
  memset(l, 0, sizeof *l);
  l->scn = sim_scenario_load(path, d);
  if (!l->scn) return SIM_ECONFIG;
  return app__load(path, overrides, noverrides, d, l);
}

int app_load_text(const char *text, const char *path, const char *const *overrides, int noverrides, sim_diag *d,
                  app_loaded *l) {
  memset(l, 0, sizeof *l);
  l->scn = sim_scenario_load_string(text, path, d);
  if (!l->scn) return SIM_ECONFIG;
  return app__load(path, overrides, noverrides, d, l);
}

/* The rest of a load, once l->scn holds the scenario: overrides, parsing, validation, build. */
static int app__load(const char *path, const char *const *overrides, int noverrides, sim_diag *d, app_loaded *l) {
  /* The file's own run group is valid before an override replaces a key of it: `run --reps 5`
   * must not hide a run.reps = 0 that `check` refuses (the file is used again without it). */
  app_run_cfg own;
  if (noverrides && sim_param_parse(l->scn, "run", app_run_params, &own, NULL, d)) goto fail;
  for (int i = 0; i < noverrides; i++)
    if (sim_scenario_set(l->scn, overrides[i], d)) goto fail;

  const char *name = sim_scenario_string(l->scn, "model");
  l->cls = app_model_find(name);
  const char *ignore[] = {"run", name ? name : "", NULL};
  app__top top = {0};
  int rc = sim_param_parse(l->scn, "", app__top_params, &top, ignore, d);
  if (rc == 0 && !l->cls) {
    char list[256] = "";
    for (size_t i = 0; i < app_model_count(); i++) {
      strncat(list, i ? ", " : "", sizeof list - strlen(list) - 1);
      strncat(list, app_model_at(i)->name, sizeof list - strlen(list) - 1);
    }
    sim_param_error(l->scn, "model", d, "unknown model '%s' (known: %s)", top.model, list);
    rc = SIM_ECONFIG;
  }
  sim_param_free(app__top_params, &top);
  int rc2 = sim_param_parse(l->scn, "run", app_run_params, &l->run, NULL, d);
  if (rc || rc2 || !l->cls) goto fail;

  l->cfg = calloc(1, l->cls->params_size);
  if (!l->cfg) goto fail;
  if (sim_param_parse(l->scn, l->cls->name, l->cls->params, l->cfg, NULL, d)) {
    free(l->cfg);
    l->cfg = NULL;
    goto fail;
  }
  if (l->cls->validate && l->cls->validate(l->cfg, l->scn, d)) goto fail;

  /* What the model's state will take, before building it (a build of 100 million providers
   * would itself take minutes and gigabytes) */
  if (app__too_big(l, d, path, l->cls->memory_estimate ? l->cls->memory_estimate(l->cfg) : 0, "about ", "model state",
                   "", "make the model smaller or run fewer replications at once (OMP_NUM_THREADS)"))
    goto fail;
  char *pcopy = strdup(path);
  if (!pcopy) goto fail;
  const char *base = dirname(pcopy);
  rc = l->cls->build(l->cfg, l->run.end, base, l->scn, d, &l->model);
  free(pcopy);
  if (rc) {
    if (d->nerrors == 0) sim_diag_report(d, path, 0, "cannot build the model: %s", sim_strerror(rc));
    goto fail;
  }
  l->built = 1;
  l->model.end_time = l->run.end;
  {
    /* What the run will hold from the start: every replication in flight keeps its series. More
     * than this machine gives a process is refused here (check and run say so before running),
     * not found out by an allocation that fails mid-run. */
    char detail[96];
    snprintf(detail, sizeof detail, ": run.end %.6g s in bins as fine as the model keeps them", l->run.end);
    if (app__too_big(l, d, path, (double)sim_series_bytes(&l->model), "", "result series", detail,
                     "shorten run.end or coarsen the model's intervals (market.billing)"))
      goto fail;
  }
  l->metrics = l->cls->metrics;
  l->nmetrics = l->cls->nmetrics;
  if (l->cls->model_metrics) l->metrics = l->cls->model_metrics(&l->model, &l->nmetrics);

  size_t len = 0;
  FILE *mf = open_memstream(&l->effective, &len);
  if (mf) {
    fprintf(mf, "model = \"%s\";\n", l->cls->name);
    sim_param_dump(mf, "run", app_run_params, &l->run);
    sim_param_dump(mf, l->cls->name, l->cls->params, l->cfg);
    fclose(mf);
  }
  return SIM_OK;
fail:
  app_unload(l);
  return SIM_ECONFIG;
}

static double app__thread_cpu(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* One pilot: replication 0 of the built model, stopped at h; events and CPU seconds. */
static int app__pilot(const app_loaded *l, double h, double *ev, double *cpu) {
  sim_model pilot = l->model; /* the same built model, stopped earlier */
  pilot.end_time = h;
  sim_results r;
  sim_run_opts opts = {sim_rep_seed((uint64_t)l->run.seed, 0), 0, 0, NULL};
  double c0 = app__thread_cpu();
  int rc = sim_run(&pilot, &opts, &r);
  if (rc) return rc;
  *cpu = app__thread_cpu() - c0;
  *ev = (double)r.events;
  sim_results_free(&r);
  return 0;
}

int app_estimate_run(const app_loaded *l, double budget_s, app_estimate *e) {
  memset(e, 0, sizeof *e);
  double end = l->run.end;
  /* The first pilot, over a sliver of the run, measures what every run costs whatever its length
   * (building the LPs, initial events, sizing per-day state for run.end); the others measure the
   * marginal cost of simulated time beyond it, extrapolated to run.end. CPU time of this thread,
   * not wall time, so that a loaded machine does not inflate the estimate. The fixed cost is the
   * cheapest pilot's (cf at hf), not the first's: the first runs cold (its pages, the allocator)
   * and took 3-4 times what the next ones did, which made the marginal cost look smaller than it
   * is and could send the next pilot over the whole run, far past the budget. */
  double h0 = end / 1048576.0;
  if (h0 < l->model.lookahead) h0 = l->model.lookahead;
  if (h0 > end) h0 = end;
  double ev0, c0, h = h0, ev = 0, c = 0;
  int rc = app__pilot(l, h0, &ev0, &c0);
  if (rc) return rc;
  ev = ev0;
  c = c0;
  double cf = c0, hf = h0, next = h0 * 16;
  while (h < end) {
    h = next > end / 1.5 ? end : next; /* close to the end: run the whole run */
    if ((rc = app__pilot(l, h, &ev, &c))) return rc;
    if (c < cf) cf = c, hf = h;
    double inc = c - cf;
    if (h >= end || inc >= budget_s / 2) break;
    /* aim the next pilot at half the budget of marginal time, growing 2x to 16x per pilot */
    double want = inc > 1e-4 ? hf + (budget_s / 2) / (inc / (h - hf)) * 1.2 : h * 16;
    next = want < h * 2 ? h * 2 : want > h * 16 ? h * 16 : want;
  }
  e->horizon_s = h;
  e->pilot_events = ev;
  e->pilot_wall_s = c;
  e->exact = h >= end;
  if (e->exact) {
    e->events = ev;
    e->wall_s = c;
  } else {
    double span = h - h0;
    e->events = ev + (ev - ev0) / span * (end - h);
    e->wall_s = c + (c > cf && h > hf ? (c - cf) / (h - hf) : 0) * (end - h);
  }
  return 0;
}

int app_estimate_refused(const app_loaded *l, const char *path, const app_estimate *e, sim_diag *d) {
  if (!(l->run.max_events > 0) || !(e->events > l->run.max_events)) return 0;
  sim_diag_report(d, path, 0,
                  "each replication would take about %.3g engine events (measured over the first %.6g s "
                  "of %.6g s), more than run.max_events = %.3g; shorten run.end, coarsen the model's "
                  "intervals, or raise run.max_events",
                  e->events, e->horizon_s, l->run.end, l->run.max_events);
  return 1;
}

void app_unload(app_loaded *l) {
  if (l->built && l->cls->destroy) l->cls->destroy(&l->model);
  if (l->cfg) {
    sim_param_free(l->cls->params, l->cfg);
    free(l->cfg);
  }
  free(l->effective);
  sim_scenario_free(l->scn);
  memset(l, 0, sizeof *l);
}

static double app__now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int app_spread_parse(const char *s) {
  if (!strcmp(s, "auto")) return APP_SPREAD_AUTO;
  if (!strcmp(s, "reps")) return APP_SPREAD_REPS;
  if (!strcmp(s, "model")) return APP_SPREAD_MODEL;
  return -1;
}

const char *app_spread_name(int spread) {
  return spread == APP_SPREAD_MODEL ? "model" : spread == APP_SPREAD_REPS ? "reps" : "auto";
}

static void app__range(const app_loaded *l, int *first, int *count) {
  *first = l->rep_count ? l->rep_first : 0;
  *count = l->rep_count ? l->rep_count : (int)l->run.reps;
}

int app_spread_choose(const app_loaded *l, int ranks, char *why, size_t len) {
  int first, count;
  app__range(l, &first, &count);
  double per_rank = (double)l->model.nlps / (ranks > 0 ? ranks : 1);
  int spread = l->spread;
  const char *reason = "asked for (--spread)";
  if (ranks <= 1) {
    spread = APP_SPREAD_REPS;
    reason = "one process: replications on OpenMP threads";
  } else if (spread == APP_SPREAD_AUTO) {
    /* Replications whole on one rank each scale with no synchronisation at all; partitioning one
     * over the ranks pays a window per lookahead and an exchange per window, which only a big
     * model amortizes (docs/history/performance-log.md, "Spreading work over ranks"). So a replication is
     * partitioned only when there are too few of them to keep every rank busy and the model is
     * big enough to gain from it. */
    if (count < ranks && per_rank >= APP_SPREAD_MODEL_MIN_LPS) {
      spread = APP_SPREAD_MODEL;
      reason = "fewer replications than ranks, and a model big enough to gain from partitioning";
    } else {
      spread = APP_SPREAD_REPS;
      reason = count >= ranks ? "at least one replication per rank" : "a model too small to gain from partitioning";
    }
  }
  if (why)
    snprintf(why, len,
             "%d replication%s over %d rank%s: spread %s (%s; %.0f entities per rank, %d needed to partition)", count,
             count == 1 ? "" : "s", ranks, ranks == 1 ? "" : "s", app_spread_name(spread), reason, per_rank,
             APP_SPREAD_MODEL_MIN_LPS);
  return spread;
}

int app_run_reps(app_loaded *l, app_progress *prog, app_run_out *o) {
  int rank = l->local ? 0 : app_mpi_rank(), first, reps;
  app__range(l, &first, &reps);
  unsigned nm = l->nmetrics;
  memset(o, 0, sizeof *o);
  o->first = first;
  o->count = reps;
  o->reps = calloc((size_t)(reps ? reps : 1), sizeof *o->reps);
  o->values = calloc((size_t)(reps ? reps : 1) * (nm ? nm : 1), sizeof *o->values);
  if (!o->reps || !o->values) SIM_FATAL("out of memory");
  o->ranks = l->local ? 1 : app_mpi_size();
  o->spread = app_spread_choose(l, o->ranks, NULL, 0);
  int P = o->ranks;
  /* reps spread: rank k runs replications first + i for i = k, k + P, ... on its threads */
  int mine = o->spread == APP_SPREAD_REPS ? (reps - rank + P - 1) / P : 0;
  o->threads = o->spread == APP_SPREAD_MODEL ? 1 : omp_get_max_threads();
  if (o->spread == APP_SPREAD_REPS && o->threads > (reps + P - 1) / P) o->threads = (reps + P - 1) / P;
  if (o->threads < 1) o->threads = 1;
  int failed = 0;
  double t0 = app__now();
  /* ran[i]: replication first + i finished (on the rank that ran it; then agreed over the ranks) */
  unsigned char *ran = calloc((size_t)(reps ? reps : 1), 1);
  if (!ran) SIM_FATAL("out of memory");

  if (o->spread == APP_SPREAD_MODEL) {
    /* The engine's own in-place line within a replication, one at a time, on a terminal */
    int engine_lines = app_progress_engine_lines(prog, 1);
    for (int i = 0; i < reps; i++) {
      if ((o->interrupted = app_stop_agreed())) break; /* every rank stops at the same replication */
      int r = first + i;
      char label[32];
      snprintf(label, sizeof label, "rep %d/%d", r + 1, (int)l->run.reps);
      sim_run_opts opts = {sim_rep_seed((uint64_t)l->run.seed, (unsigned)r), 1, engine_lines, label};
      int rc = sim_run(&l->model, &opts, &o->reps[i]);
      if (rc) SIM_FATAL("the engine refused the model: %s", sim_strerror(rc));
      ran[i] = 1;
      app_progress_step(prog, NULL, 0);
    }
  } else {
    int nth = o->threads;
    if (nth > mine) nth = mine > 0 ? mine : 1;
    /* per-event lines of several threads or ranks would interleave: prog's lines then */
    int engine_lines = app_progress_engine_lines(prog, nth == 1 && P == 1);
#pragma omp parallel for schedule(dynamic, 1) num_threads(nth)
    for (int j = 0; j < mine; j++) {
      if (app_stop_signal()) continue; /* stopping: no replication starts */
      int i = rank + j * P, r = first + i;
      char label[32];
      snprintf(label, sizeof label, "rep %d/%d", r + 1, (int)l->run.reps);
      sim_run_opts opts = {sim_rep_seed((uint64_t)l->run.seed, (unsigned)r), 0, engine_lines, label};
      int rc = sim_run(&l->model, &opts, &o->reps[i]);
      if (rc) SIM_FATAL("the engine refused the model: %s", sim_strerror(rc));
#pragma omp critical
      {
        ran[i] = 1;
        app_progress_step(prog, NULL, 0); /* rank 0's own replications (prog is NULL elsewhere) */
      }
    }
    if (P > 1) {
      /* Which replications finished anywhere (a stop leaves some unrun), then every finished one
       * to rank 0, in replication order (each rank sends its own in increasing order, so rank 0's
       * receives, in increasing order too, always match the next send). */
      MPI_Allreduce(MPI_IN_PLACE, ran, reps, MPI_UNSIGNED_CHAR, MPI_MAX, MPI_COMM_WORLD);
      for (int i = 0; i < reps; i++) {
        int owner = i % P;
        if (owner == 0 || !ran[i]) continue;
        if (rank == 0) {
          sim_results_recv(&l->model, owner, i, &o->reps[i]);
        } else if (rank == owner) {
          if (sim_results_send(&o->reps[i], 0, i)) SIM_FATAL("out of memory");
          sim_results_free(&o->reps[i]);
        }
      }
    }
  }
  o->wall_s = app__now() - t0;
  /* What finished: replications first..first+nreps-1 (a later one that finished beside a gap is
   * dropped, so that the file holds a prefix of the same seeds as a whole run). */
  while (o->nreps < reps && ran[o->nreps]) o->nreps++;
  for (int i = o->nreps; i < reps; i++) sim_results_free(&o->reps[i]);
  free(ran);
  if (!o->interrupted) o->interrupted = P > 1 ? app_stop_agreed() : app_stop_signal(); /* collective with ranks */
  if (o->nreps == reps) o->interrupted = 0; /* a signal after the last replication stopped nothing */
  if (rank != 0) return 0;
  for (int i = 0; i < o->nreps; i++) {
    if (nm) l->cls->compute_metrics(&l->model, &o->reps[i], o->values + (size_t)i * nm);
    char msg[512];
    if (l->cls->check && l->cls->check(&l->model, &o->reps[i], msg, sizeof msg)) {
      fprintf(stderr, "spotlab: replication %d (seed %llu) failed its end-of-run check: %s\n", first + i,
              (unsigned long long)o->reps[i].seed, msg);
      failed = 1;
    }
  }
  return failed;
}

void app_run_out_free(app_loaded *l, app_run_out *o) {
  (void)l;
  for (int r = 0; o->reps && r < o->count; r++) sim_results_free(&o->reps[r]);
  free(o->reps);
  free(o->values);
  memset(o, 0, sizeof *o);
}

int app_point_reusable(const char *pf, const app_loaded *l, char *const *names, unsigned nm, double *dst) {
  rpt_file *f;
  char err[RPT_ERRLEN];
  if (access(pf, F_OK) != 0 || rpt_open(pf, &f, err, sizeof err) != 0) return 0;
  char *eff = NULL;
  int ok = rpt_nreps(f) == (int)l->run.reps && rpt_seed(f) == (uint64_t)l->run.seed && rpt_nmetrics(f) == nm &&
           rpt_meta_string(f, "effective", &eff) == 0 && l->effective && !strcmp(eff, l->effective);
  for (unsigned k = 0; ok && k < nm; k++) ok = !strcmp(rpt_metric_name(f, k), names[k]);
  if (ok) memcpy(dst, rpt_metric_values(f), (size_t)l->run.reps * nm * sizeof *dst);
  free(eff);
  rpt_close(f);
  return ok;
}

int app_write_results(const char *path, app_loaded *l, app_run_out *o) {
  sim_run_meta meta = {l->cls->name, sim_scenario_path(l->scn), sim_scenario_text(l->scn), l->effective,
                       (uint64_t)l->run.seed, o->nreps, o->ranks, o->threads, o->wall_s, l->run.end, app_command_line(),
                       o->interrupted != 0, o->count, o->first,
                       /* an interrupted whole run is a whole run of fewer replications (marked
                        * interrupted), not a shard of the one asked for */
                       o->interrupted && o->first == 0 && o->count == (int)l->run.reps ? o->nreps : (int)l->run.reps,
                       app_spread_name(o->spread)};
  /* the assumptions the run used, from the keys whose help marks them (docs/market.md, "Assumptions") */
  char *as = NULL;
  size_t alen = 0;
  FILE *af = open_memstream(&as, &alen);
  if (af) {
    sim_param_dump_tagged(af, l->cls->name, l->cls->params, l->cfg, "ASSUMPTION");
    fclose(af);
  }
  meta.assumptions = as && *as ? as : NULL;
  char err[512];
  int rc = sim_results_write(path, &meta, &l->model, o->reps, l->metrics, l->nmetrics, o->values, err, sizeof err);
  free(as);
  if (rc) fprintf(stderr, "spotlab: %s\n", err);
  return rc;
}

void app_print_summary(FILE *f, app_loaded *l, app_run_out *o, int all) {
  int reps = o->nreps;
  uint64_t ev = 0;
  for (int r = 0; r < reps; r++) ev += o->reps[r].events;
  fprintf(f,
          "\n%s: %d replication%s of %.6g s simulated, %d rank%s x %d thread%s, %.3f s wall, %llu events "
          "(%.3g events/s)\n\n",
          l->cls->name, reps, reps == 1 ? "" : "s", l->run.end, o->ranks, o->ranks == 1 ? "" : "s", o->threads,
          o->threads == 1 ? "" : "s", o->wall_s, (unsigned long long)ev, o->wall_s > 0 ? (double)ev / o->wall_s : 0);
  unsigned nm = l->nmetrics, shown = 0, flagged = 0;
  if (!nm) return;
  for (unsigned k = 0; k < nm; k++) flagged += l->metrics[k].headline != 0;
  if (!flagged) all = 1; /* a model that flags nothing shows everything */
  size_t w = 6;
  for (unsigned k = 0; k < nm; k++)
    if ((all || l->metrics[k].headline) && strlen(l->metrics[k].name) > w) w = strlen(l->metrics[k].name);
  fprintf(f, "%-*s %14s %-24s %-10s\n", (int)w, "metric", "mean", "95% CI", "unit");
  for (unsigned k = 0; k < nm; k++) {
    if (!all && !l->metrics[k].headline) continue;
    shown++;
    sim_summary s;
    sim_summarize(o->values + k, (size_t)reps, nm, &s);
    char ci[48], mean[32];
    if (isnan(s.mean))
      snprintf(ci, sizeof ci, "(undefined here)");
    else if (reps < 2)
      snprintf(ci, sizeof ci, "(1 rep: no CI)");
    else if (isfinite(s.ci95_lo))
      snprintf(ci, sizeof ci, "[%.4g, %.4g]", s.ci95_lo, s.ci95_hi);
    else
      snprintf(ci, sizeof ci, "(undefined in some reps)");
    snprintf(mean, sizeof mean, isnan(s.mean) ? "-" : "%.6g", s.mean);
    fprintf(f, "%-*s %14s %-24s %-10s\n", (int)w, l->metrics[k].name, mean, ci, l->metrics[k].unit);
  }
  if (shown < nm)
    fprintf(f,
            "(%u more metrics in the results file: `spotlab run --all` prints them here, `spotlab report` "
            "tabulates them)\n",
            nm - shown);
}
