/* lab_run.c - lab_run(): the steps of a lab in order, each a function that either succeeds or
 * undoes what it did, and one cleanup ladder that unwinds exactly the steps done, in reverse (the
 * shape of libuv's uv_loop_init, src/unix/loop.c). The steps:
 *   1. tables      the runner's and the report's tables, sized from the job file
 *   2. hosts       MPI ranks, the processes' journal mark (a resume first kills what the killed
 *                  runner left running), the worker slots spread in blocks over the ranks; a rank
 *                  other than 0 then only relays for rank 0 (lab_relay.c)
 *   3. core        the scheduling core, configured as the twin's (lab__core_config)
 *   4. journal     the services' traces probed, the outputs' folder, the fault schedule, the
 *                  journal created or replayed into the core (--resume)
 *   5. helper      one worker at full speed: the device, the jobs' chunking (journaled), under
 *                  --predict the calibration file and the chunk times, the reference speed
 *   6. workers     spawned and measured one at a time
 *   7. prediction  (--predict) the workers' calibration and the twin's prediction
 *   8. the loop    until every job ended: arrivals, faults, respawns, services, the core's timers
 * The ladder: workers buried and the other ranks told to quit, the journal synced and closed, the
 * report finished from the core (and the `--also-simulate` twin run), the tables freed. What the
 * runner does per event is lab_glue.c's; processes are lab_proc.c's (lab_runner.h lists the
 * files). */
#include "lab/lab_runner.h"

#include <errno.h>
#include <math.h>
#include <mpi.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- 1. tables -------------------------------------------------------------------------------- */
static int lab__tables_init(lab__lab *L, const lab_config *cfg, const lab_opts *o, lab_report *rep) {
  memset(L, 0, sizeof *L);
  L->cfg = cfg;
  L->o = o;
  L->jr.path = o->journal;
  L->rep = rep;
  L->nw = (size_t)cfg->lab.workers;
  L->nranks = 1;
  rep->njobs = cfg->njobs;
  rep->nworkers = L->nw;
  rep->jobs = calloc(cfg->njobs, sizeof *rep->jobs);
  rep->scores = calloc(L->nw, sizeof *rep->scores);
  rep->executors = calloc(L->nw, sizeof *rep->executors);
  L->w = calloc(L->nw, sizeof *L->w);
  L->nchunks = calloc(cfg->njobs, sizeof *L->nchunks);
  L->wpc = calloc(cfg->njobs, sizeof *L->wpc);
  L->arrived = calloc(cfg->njobs, sizeof *L->arrived);
  L->cmd_seconds = calloc(cfg->njobs, sizeof *L->cmd_seconds);
  L->cmd_failed = calloc(cfg->njobs, sizeof *L->cmd_failed);
  L->nwide = cfg->njobs * SCHED_MAX_RUNS;
  L->wide = calloc(L->nwide, sizeof *L->wide);
  L->svc = calloc(cfg->njobs, sizeof *L->svc);
  if (!rep->jobs || !rep->scores || !rep->executors || !L->w || !L->nchunks || !L->wpc || !L->arrived ||
      !L->cmd_seconds || !L->cmd_failed || !L->wide || !L->svc)
    return LAB_ENOMEM; /* what was allocated is freed by lab__tables_free, as after any step */
  for (size_t k = 0; k < L->nwide; k++) L->wide[k].job = -1;
  for (size_t j = 0; j < cfg->njobs; j++) {
    L->svc[j].job = -1;
    rep->jobs[j].outcome = -1;
    rep->jobs[j].exit_status = -1;
    L->cmd_seconds[j] = NAN;
  }
  return 0;
}

/* Frees what the steps left in the tables (the calibration, the fault schedule, wide runs and
 * services); the report's own tables stay with the caller (lab_report_free). */
static void lab__tables_free(lab__lab *L) {
  lab_calib_free(L->calib);
  free(L->calib_score);
  free(L->w);
  free(L->nchunks);
  free(L->wpc);
  free(L->arrived);
  free(L->cmd_seconds);
  free(L->cmd_failed);
  for (size_t k = 0; L->wide && k < L->nwide; k++) lab__wide_free(&L->wide[k].x);
  free(L->wide);
  for (size_t j = 0; L->svc && j < L->cfg->njobs; j++) lab__svc_free(&L->svc[j]);
  free(L->svc);
  free(L->faults);
}

/* ---- 2. hosts --------------------------------------------------------------------------------- */
static int lab__hosts_init(lab__lab *L) {
  if (L->o->use_mpi) {
    MPI_Comm_rank(MPI_COMM_WORLD, &L->rank);
    MPI_Comm_size(MPI_COMM_WORLD, &L->nranks);
  }
  char mark[4200];
  lab__mark(L->o->journal, mark, sizeof mark);
  if (L->o->resume) {
    int killed = lab__kill_marked(mark);
    if (killed)
      fprintf(stderr, "spotlab lab: killed %d process%s the interrupted lab had left running\n", killed,
              killed == 1 ? "" : "es");
  }
  char *eq = strchr(mark, '=');
  *eq = '\0';
  setenv(mark, eq + 1, 1);        /* inherited by the workers and their commands */
  if (L->nw > LAB__MAX_WORKERS) { /* the job file's bound is the twin's (lab_simulate): more is its error here */
    if (L->rank == 0)
      fprintf(stderr,
              "%s: key 'lab.workers': %zu workers, but a real lab runs at most %d worker processes (its "
              "simulated twin, up to %d)\n",
              L->cfg->workers_at, L->nw, LAB__MAX_WORKERS, LAB__MAX_TWIN_WORKERS);
    return LAB_ECONFIG;
  }
  if ((size_t)L->nranks > L->nw) {
    if (L->rank == 0)
      fprintf(stderr, "spotlab lab: %zu workers cannot be spread over %d ranks (at least one per rank)\n", L->nw,
              L->nranks);
    return LAB_EINVAL;
  }
  for (size_t i = 0; i < L->nw; i++) {
    lab__worker *w = &L->w[i];
    w->to = w->from = -1;
    w->job = -1;
    w->speed = lab__speed_of(L->cfg, i);
    w->gid = (int)i;
    w->pw_job = -1;
    w->svc = w->req = -1;
    /* blocks of workers per rank (host): rank r runs workers [r n / R, (r + 1) n / R) */
    w->rank = (int)(i * (size_t)L->nranks / L->nw);
    w->remote = w->rank != L->rank;
  }
  return 0;
}

/* Rank 0: the other ranks' relays stop (once). */
static void lab__ranks_quit(lab__lab *L) {
  if (L->rank != 0 || L->quit_sent) return;
  for (int r = 1; r < L->nranks; r++) MPI_Send("QUIT", 5, MPI_CHAR, r, LAB__CTRL_TAG, MPI_COMM_WORLD);
  L->quit_sent = 1;
}

/* ---- 3. core ---------------------------------------------------------------------------------- */
static int lab__core_init(lab__lab *L) {
  sched_config sc;
  lab__core_config(L->cfg, lab__sink, L, &sc);
  int rc = sched_create(&sc, &L->s);
  if (rc) {
    fprintf(stderr, "spotlab lab: scheduling core: %s\n", sched_strerror(rc));
    return LAB_ESCHED;
  }
  return 0;
}

/* The jobs' outcomes and times from the core, into the report. */
static void lab__finish_report(lab__lab *L) {
  lab_report *R = L->rep;
  double first = INFINITY, last = 0;
  R->completed = R->failed = 0;
  for (size_t j = 0; j < R->njobs; j++) {
    sched_job_status st;
    lab_job_result *r = &R->jobs[j];
    if (sched_job_query(L->s, (uint32_t)j, &st) != 0 || st.state == SCHED_JOB_UNKNOWN) {
      r->submit = r->start = r->end = NAN;
      continue;
    }
    r->submit = st.submit;
    r->start = st.start >= 0 ? st.start : NAN;
    r->end = st.state == SCHED_JOB_ENDED ? st.end : NAN;
    r->restarts = st.restarts;
    if (L->svc[j].job >= 0) lab__svc_stats(&L->svc[j], r);
    if (st.state == SCHED_JOB_ENDED) {
      /* a service ends when its stream is done: withdrawn by the runner, and that is its success */
      if (st.outcome == SCHED_R_COMPLETED || (L->svc[j].job >= 0 && st.outcome == SCHED_R_WITHDRAWN))
        R->completed++;
      else
        R->failed++;
      if (st.end > last) last = st.end;
    }
    if (st.submit < first) first = st.submit;
  }
  R->makespan = isfinite(first) ? last - first : NAN;
}

/* The ladder's rung of the core: the report finished from it, the core's invariants checked, the
 * workers' observed speeds (at least 0.3 s of kernel progress seen) and, when the lab ran to its
 * end, the `--also-simulate` twin run with them; then the core goes. */
static int lab__core_end(lab__lab *L, int rc) {
  lab_report *rep = L->rep;
  lab__finish_report(L);
  char msg[256];
  if (sched_check_invariants(L->s, msg, sizeof msg) != 0) {
    fprintf(stderr, "spotlab lab: scheduling core invariant broken: %s\n", msg);
    if (!rc) rc = LAB_ESCHED;
  }
  rep->observed = calloc(L->nw ? L->nw : 1, sizeof *rep->observed);
  double *twin_speed = calloc(L->nw ? L->nw : 1, sizeof *twin_speed);
  for (size_t i = 0; rep->observed && twin_speed && i < L->nw; i++) {
    rep->observed[i] = L->w[i].obs_time >= 0.3 ? L->w[i].obs_work / L->w[i].obs_time : NAN;
    twin_speed[i] = isfinite(rep->observed[i]) && rep->observed[i] > 0 ? rep->observed[i] : rep->scores[i];
  }
  if (!rc && L->o->also_simulate) {
    rep->sim = calloc(L->cfg->njobs, sizeof *rep->sim);
    if (!rep->sim || !twin_speed)
      rc = LAB_ENOMEM;
    else
      rc = lab__simulate_observed(L->cfg, twin_speed, L->nchunks, L->cmd_seconds, L->cmd_failed, L->svc, rep->sim,
                                  &rep->sim_makespan);
  }
  free(twin_speed);
  sched_destroy(L->s);
  L->s = NULL;
  return rc;
}

/* ---- 4. journal ------------------------------------------------------------------------------- */
static int lab__journal_init(lab__lab *L) {
  const lab_config *cfg = L->cfg;
  /* the services' traces are read once before anything is written: a bad one stops the lab here */
  for (size_t j = 0; j < cfg->njobs; j++) {
    if (!lab__is_service(&cfg->jobs[j])) continue;
    lab__svc probe;
    char err[1024];
    int rc = lab__svc_load(cfg, j, 1.0, &probe, err, sizeof err);
    if (rc) {
      fprintf(stderr, "%s\n", err);
      return rc;
    }
    lab__svc_free(&probe);
  }
  int rc = lab__journal_outdir(L->o->journal, L->outdir, sizeof L->outdir);
  if (!rc) rc = lab__faults(cfg, &L->faults, &L->nfaults);
  if (rc) return rc;
  if (!L->o->resume) return lab__journal_create(&L->jr, cfg, L->nw);
  L->replaying = 1;
  rc = lab__journal_replay(&L->jr, cfg, L->nw, lab__on_record, L);
  L->replaying = 0;
  if (!rc) L->rep->resumed = 1;
  return rc;
}

/* ---- 5. helper -------------------------------------------------------------------------------
 * The runner itself never runs a kernel: libgomp's thread pool does not survive fork(), so a
 * runner that had used OpenMP could not start workers any more. Reference measurements are made
 * by a helper worker at full speed, before the lab's workers exist. */
/* lab.device: "cpu" needs nothing; "gpu" and "auto" ask the helper worker (a CUDA context does not
 * survive fork(), so the runner never opens one) to make every worker's executor in turn, then
 * the whole GPU, on which the chunk times `work` is counted in are measured. "gpu" without a
 * usable one is an error of the job file (FILE:LINE, LAB_ECONFIG: exit 2) before anything ran:
 * the new journal and its output folder are removed. "auto" then stays on the CPU and says so. */
static int lab__choose_device(lab__lab *L, lab__worker *helper) {
  const lab_config *c = L->cfg;
  snprintf(L->rep->lab_device, sizeof L->rep->lab_device, "cpu");
  for (size_t i = 0; i < L->nw; i++) /* what a worker starts with (lab_worker.c); GPU workers say theirs */
    snprintf(L->rep->executors[i], sizeof L->rep->executors[i], "cpu, %d thread%s", (int)c->lab.threads,
             c->lab.threads == 1 ? "" : "s");
  if (c->lab.device == LAB_DEVICE_CPU) return 0;
  char why[300] = "";
  char spec[32];
  for (size_t i = 0; i <= L->nw && !why[0]; i++) {
    if (i < L->nw)
      lab__gpu_spec(c, i, spec, sizeof spec);
    else
      snprintf(spec, sizeof spec, "gpu");
    lab__send(helper, "E %s", spec);
    double ok = lab__ask(helper, 'E', 60);
    if (ok == 1) continue;
    char *text = isnan(ok) ? NULL : strchr(helper->last, ' ');
    snprintf(why, sizeof why, "%s: %s", spec, text ? text + 1 : "the probing worker did not answer");
    lab__unescape(why);
  }
  if (!why[0]) {
    L->gpu = 1;
    snprintf(L->rep->lab_device, sizeof L->rep->lab_device, "gpu");
    return 0;
  }
  if (c->lab.device == LAB_DEVICE_AUTO) {
    if (L->o->log) fprintf(L->o->log, "lab.device = \"auto\": no usable GPU (%s); the workers run on the CPU\n", why);
    lab__send(helper, "E cpu");
    return isnan(lab__ask(helper, 'E', 60)) ? LAB_ESYS : 0;
  }
  fprintf(stderr, "%s: key 'lab.device': \"gpu\" but no usable GPU here (%s); use \"cpu\" or \"auto\"\n", c->device_at,
          why);
  if (!L->o->resume && L->jr.f) { /* nothing ran: leave nothing behind */
    fclose(L->jr.f);
    L->jr.f = NULL;
    unlink(L->o->journal);
    rmdir(L->outdir);
  }
  return LAB_ECONFIG;
}

/* Kernel k's chunk time at full speed, asked of the helper once (0 when it did not answer). */
static double lab__chunk_s(lab__lab *L, lab__worker *helper, krn_kernel k) {
  if (!(L->chunk_s[k] > 0)) {
    lab__send(helper, "M %s", krn_kernel_name(k));
    L->chunk_s[k] = lab__ask(helper, 'M', 60);
  }
  return L->chunk_s[k];
}

/* Kernel jobs are cut into chunk executions of a fixed size once: `work` seconds at speed 1.0
 * make round(work / seconds-per-chunk) of them (measured by the helper, unslowed, before any
 * worker runs; at least LAB__DISTINCT); a service's requests are sized in chunks of its kernel.
 * Both are journaled, so a resumed lab keeps them. */
static int lab__chunking(lab__lab *L, lab__worker *helper) {
  const lab_config *cfg = L->cfg;
  for (size_t j = 0; j < cfg->njobs; j++) {
    krn_kernel k;
    if (!lab__is_service(&cfg->jobs[j]) || L->svc[j].job >= 0 || krn_kernel_parse(cfg->jobs[j].kernel, &k) != 0)
      continue;
    double cs = lab__chunk_s(L, helper, k) > 0 ? L->chunk_s[k] : 1e-3;
    char err[1024];
    int rc = lab__svc_load(cfg, j, cs, &L->svc[j], err, sizeof err);
    if (rc) {
      fprintf(stderr, "%s\n", err);
      L->svc[j].job = -1;
      return rc;
    }
    L->wpc[j] = cs;
    lab__journal_put(&L->jr, "S %zu %.17g\n", j, cs);
  }
  for (size_t j = 0; j < cfg->njobs; j++) {
    krn_kernel k;
    if (!cfg->jobs[j].kernel[0] || lab__is_service(&cfg->jobs[j]) || L->nchunks[j] ||
        krn_kernel_parse(cfg->jobs[j].kernel, &k) != 0)
      continue;
    double cs = lab__chunk_s(L, helper, k);
    double n = cs > 0 ? floor(cfg->jobs[j].work / cs + 0.5) : LAB__DISTINCT;
    /* at least every distinct chunk once, so that the output is whole */
    L->nchunks[j] = n < LAB__DISTINCT ? LAB__DISTINCT : n > 1e7 ? 10000000 : (size_t)n;
    L->wpc[j] = cfg->jobs[j].work / (double)L->nchunks[j];
    lab__journal_put(&L->jr, "N %zu %zu\n", j, L->nchunks[j]);
  }
  return lab__journal_sync(&L->jr);
}

/* --predict: the calibration stored beside the journal (or named) is reused; otherwise the helper
 * measures each kernel's chunk time here, the workers the rest (step 7). */
static int lab__calib_open(lab__lab *L, lab__worker *helper) {
  const lab_config *cfg = L->cfg;
  const lab_opts *o = L->o;
  lab_report *rep = L->rep;
  char err[1024];
  snprintf(rep->calib_path, sizeof rep->calib_path, "%s", o->calibration ? o->calibration : "");
  if (!o->calibration) snprintf(rep->calib_path, sizeof rep->calib_path, "%s.calib.csv", o->journal);
  if (o->calibration || (o->resume && access(rep->calib_path, F_OK) == 0)) {
    int rc = lab_calib_load(rep->calib_path, cfg, &L->calib, err, sizeof err);
    if (rc) fprintf(stderr, "%s\n", err);
    return rc;
  }
  if (!(L->calib = lab_calib_create(cfg))) return LAB_ENOMEM;
  L->measure = 1;
  for (size_t j = 0; j < cfg->njobs; j++) {
    krn_kernel k;
    if (cfg->jobs[j].kernel[0] && krn_kernel_parse(cfg->jobs[j].kernel, &k) == 0) L->calib->kernel_used[k] = 1;
  }
  for (int k = 0; k < KRN_NKERNELS; k++)
    if (L->calib->kernel_used[k])
      L->calib->chunk_s[k] = lab__chunk_s(L, helper, (krn_kernel)k) > 0 ? L->chunk_s[k] : 1e-3;
  return 0;
}

/* What the helper measures: whether there is a GPU and which device the workers use, the chunking,
 * the calibration's chunk times (--predict), and last the reference speed of a worker. */
static int lab__helper_ask(lab__lab *L, lab__worker *helper) {
  lab__send(helper, "Q");
  if (!isnan(lab__ask(helper, 'Q', 60))) {
    /* the line's text after the flag is the device or why there is none */
    snprintf(L->rep->device, sizeof L->rep->device, "%s", helper->last);
    lab__unescape(L->rep->device);
  }
  int rc = lab__choose_device(L, helper);
  if (!rc) rc = lab__chunking(L, helper);
  if (!rc && L->o->predict) rc = lab__calib_open(L, helper);
  if (rc) return rc;
  lab__send(helper, "C %.17g", L->cfg->lab.calibrate);
  L->ref_rate = lab__ask(helper, 'C', 30 + 10 * L->cfg->lab.calibrate);
  return 0;
}

static int lab__helper_init(lab__lab *L) {
  lab__worker helper;
  memset(&helper, 0, sizeof helper);
  helper.speed = 1.0;
  helper.to = helper.from = -1;
  int rc = lab__spawn_into(L, &helper, 0);
  if (rc) return rc;
  rc = lab__helper_ask(L, &helper);
  lab__bury(&helper);
  if (!rc && !(L->ref_rate > 0)) {
    fprintf(stderr, "spotlab lab: the reference worker did not report its speed\n");
    rc = LAB_ESYS;
  }
  return rc;
}

/* ---- 6. workers: spawned and measured one at a time (so they do not slow each other's
 * measurement); buried by the ladder, with the ones the loop respawned. */
static int lab__workers_init(lab__lab *L) {
  double secs = L->cfg->lab.calibrate;
  for (size_t i = 0; i < L->nw; i++) {
    int rc = lab__spawn(L, i);
    if (rc) return rc;
    lab__send(&L->w[i], "C %.17g", secs);
    if ((rc = lab__wait_calibration(L, i, 30 + 10 * secs))) {
      fprintf(stderr, "spotlab lab: worker %zu did not report its speed\n", i);
      return rc;
    }
  }
  return 0;
}

static void lab__workers_bury(lab__lab *L) {
  for (size_t i = 0; i < L->nw; i++) lab__bury(&L->w[i]);
}

/* ---- 7. prediction (--predict) ---------------------------------------------------------------- */
static int lab__prediction(lab__lab *L) {
  const lab_opts *o = L->o;
  lab_report *rep = L->rep;
  if (!o->predict) return 0;
  int rc;
  if (L->measure) {
    if (o->log && L->nw > 1)
      fprintf(o->log, "calibrating %zu workers (each alone, then 2..%zu together)...\n", L->nw, L->nw);
    if (o->log && L->nw == 1) fprintf(o->log, "calibrating the worker...\n");
    if ((rc = lab__calibrate_workers(L, L->calib))) {
      fprintf(stderr, "spotlab lab: the calibration did not finish (a worker died or did not answer)\n");
      return rc;
    }
    double la[1];
    if (getloadavg(la, 1) == 1) L->calib->load1 = la[0];
    char err[1024];
    L->calib->hosts = (unsigned)L->nranks; /* workers in blocks per rank, as lab_calib_host has them */
    if ((rc = lab_calib_learn(L->calib)) ||
        (rc = lab_calib_write(rep->calib_path, L->cfg, L->calib, err, sizeof err))) {
      fprintf(stderr, "spotlab lab: calibration: %s\n", rc == LAB_EIO ? err : lab_strerror(rc));
      return rc;
    }
  }
  rep->calib_load1 = L->calib->load1;
  if (!(L->calib_score = calloc(L->nw, sizeof *L->calib_score))) return LAB_ENOMEM;
  for (size_t i = 0; i < L->nw; i++) L->w[i].score = L->calib_score[i] = lab__calib_score(L->calib, i);
  if ((rc = lab__predict(L))) return rc;
  if (o->log) {
    fprintf(o->log, "calibration %s %s (load average %.2f); contention f(k), k = 1..%u:", rep->calib_path,
            L->measure ? "measured" : "read", L->calib->load1, L->calib->ncoloc);
    for (unsigned k = 0; k < L->calib->ncoloc; k++) fprintf(o->log, " %.3f", L->calib->coloc[k]);
    fprintf(o->log, "\npredicted makespan %.3f s; now the real lab\n", rep->pred_makespan);
    fflush(o->log);
  }
  return 0;
}

/* ---- 8. the loop ------------------------------------------------------------------------------ */
/* The clock starts (or continues, after a resume: the previous runner's workers died with it, so
 * every GPU the core still holds is lost), and every worker joins. */
static int lab__start(lab__lab *L, double *t) {
  const lab_config *cfg = L->cfg;
  L->t_origin = lab__now();
  L->t_base = L->t_last;
  *t = lab__t(L);
  int rc;
  if (L->o->resume) {
    lab__journal_put(&L->jr, "R %.17g\n", *t);
    while (L->next_fault < L->nfaults && L->faults[L->next_fault].at <= *t) L->next_fault++;
    /* a service's load samples go on from now, as the faults do */
    for (size_t j = 0; j < cfg->njobs; j++)
      while (L->svc[j].job >= 0 && L->arrived[j] && L->svc[j].next_load < *t)
        L->svc[j].next_load += L->svc[j].window / 4;
    for (size_t i = 0; i < L->nw; i++) {
      sched_gpu_status gs;
      if (sched_gpu_query(L->s, (uint32_t)i, *t, &gs) == 0 && gs.state != SCHED_GPU_ABSENT)
        if ((rc = lab__handle(L, SCHED_EV_GPU_MISSED, *t, (uint32_t)i, 0, 0, 0))) return rc;
    }
  }
  for (size_t i = 0; i < L->nw; i++)
    if ((rc = lab__join(L, i, *t))) return rc;
  return 0;
}

/* Jobs whose `at` has come arrive; *next: the next arrival, if sooner. */
static int lab__arrivals(lab__lab *L, double t, double *next) {
  for (size_t j = 0; j < L->cfg->njobs; j++) {
    if (L->arrived[j]) continue;
    if (L->cfg->jobs[j].at <= t) {
      L->arrived[j] = 1;
      int rc = lab__handle(L, SCHED_EV_JOB_ARRIVE, t, 0, (uint32_t)j, 0, 0);
      if (rc) return rc;
    } else if (L->cfg->jobs[j].at < *next) {
      *next = L->cfg->jobs[j].at;
    }
  }
  return 0;
}

/* Faults due, stalls that end, respawns, and joins the core can take (it saw the worker gone). */
static int lab__workers_due(lab__lab *L, double t, double *next) {
  while (L->next_fault < L->nfaults && L->faults[L->next_fault].at <= t) lab__inject(L, &L->faults[L->next_fault++]);
  if (L->next_fault < L->nfaults && L->faults[L->next_fault].at < *next) *next = L->faults[L->next_fault].at;
  for (size_t i = 0; i < L->nw; i++) {
    lab__worker *w = &L->w[i];
    int rc = 0;
    if (w->stalled && w->cont_at > 0 && w->cont_at <= t) {
      lab__signal(w, SIGCONT);
      w->stalled = 0;
      lab__log(L, "worker %zu resumes", i);
    }
    if (!w->pid && w->respawn_at > 0 && w->respawn_at <= t) {
      w->speed = lab__speed_of(L->cfg, i);
      if ((rc = lab__spawn(L, i))) return rc;
      lab__send(w, "C %.17g", L->cfg->lab.calibrate);
      lab__log(L, "worker %zu respawned", i);
    }
    if (w->want_join) {
      sched_gpu_status gs;
      sched_gpu_query(L->s, (uint32_t)i, t, &gs);
      if (gs.state == SCHED_GPU_ABSENT && (rc = lab__join(L, i, t))) return rc;
    }
  }
  return 0;
}

/* Services: arrivals, load samples for the core's autoscaling, serving; done when every request
 * of the stream was served or lost (the service is withdrawn: it ends). */
static int lab__services_due(lab__lab *L, double t, double *next) {
  for (size_t j = 0; j < L->cfg->njobs; j++) {
    lab__svc *sv = &L->svc[j];
    if (sv->job < 0 || !L->arrived[j] || sv->ended) continue;
    lab__svc_arrive(sv, t);
    double step = sv->window / 4;
    int rc = 0;
    while (!rc && sv->next_load <= t) {
      rc = lab__handle(L, SCHED_EV_LOAD, t, 0, (uint32_t)j, 0, lab__svc_load_at(sv, sv->next_load));
      sv->next_load += step;
    }
    if (rc) return rc;
    lab__svc_feed(L, sv);
    if (lab__svc_finished(sv)) {
      if ((rc = lab__handle(L, SCHED_EV_JOB_WITHDRAW, t, 0, (uint32_t)j, 0, 0))) return rc;
      continue;
    }
    if (sv->next_load < *next) *next = sv->next_load;
    if (lab__svc_next_arrival(sv) < *next) *next = lab__svc_next_arrival(sv);
  }
  return 0;
}

/* Until every job ended (or lab.time_limit): each turn handles what the workers said before t,
 * then what is due at t, then waits for the workers until the next thing due (at most 50 ms). */
static int lab__loop(lab__lab *L) {
  const lab_config *cfg = L->cfg;
  double t;
  int rc = lab__start(L, &t);
  while (!rc && L->ended < cfg->njobs) {
    /* what the workers said before t is handled before anything is decided at t */
    if ((rc = lab__drain(L, &t))) break;
    if (t > cfg->lab.time_limit) {
      fprintf(stderr, "spotlab lab: time limit of %g s reached with %zu of %zu jobs ended\n", cfg->lab.time_limit,
              L->ended, cfg->njobs);
      return LAB_ETIMEOUT;
    }
    double next = t + 0.05;
    if ((rc = lab__arrivals(L, t, &next)) || (rc = lab__workers_due(L, t, &next)) ||
        (rc = lab__services_due(L, t, &next)))
      break;
    /* the core's timers */
    if (sched_next_wakeup(L->s) <= t && (rc = lab__handle(L, SCHED_EV_TICK, t, 0, 0, 0, 0))) break;
    double wake = sched_next_wakeup(L->s);
    if (wake < next) next = wake;
    /* wait for workers */
    int ms = (int)ceil((next - lab__t(L)) * 1000);
    if (ms < 0) ms = 0;
    if (ms > 50) ms = 50;
    rc = lab__pump(L, ms, NULL);
  }
  return rc;
}

/* ---- The steps and the ladder ----------------------------------------------------------------- */
int lab_run(const lab_config *cfg, const lab_opts *o, lab_report *rep) {
  memset(rep, 0, sizeof *rep);
  if (!cfg || !o || !o->journal) return LAB_EINVAL;
  signal(SIGPIPE, SIG_IGN);
  lab__lab *L = malloc(sizeof *L);
  if (!L) return LAB_ENOMEM;
  int rc;
  if ((rc = lab__tables_init(L, cfg, o, rep))) goto fail_tables;
  if ((rc = lab__hosts_init(L))) goto fail_tables;
  if (L->rank != 0) { /* the other ranks run their workers for rank 0, and nothing else */
    rc = lab__relay(L);
    rep->njobs = 0; /* the report lives on rank 0 */
    goto fail_tables;
  }
  if ((rc = lab__core_init(L))) goto fail_hosts;
  if ((rc = lab__journal_init(L))) goto fail_core;
  if ((rc = lab__helper_init(L))) goto fail_journal;
  if ((rc = lab__workers_init(L))) goto fail_workers;
  if ((rc = lab__prediction(L))) goto fail_workers;
  rc = lab__loop(L);
fail_workers:
  lab__workers_bury(L);
  lab__ranks_quit(L);
fail_journal:
  if (lab__journal_close(&L->jr) && !rc) rc = LAB_ESTOPPED;
fail_core:
  rc = lab__core_end(L, rc);
fail_hosts:
  lab__ranks_quit(L);
fail_tables:
  lab__tables_free(L);
  free(L);
  return rc;
}

void lab_report_free(lab_report *r) {
  if (!r) return;
  free(r->executors);
  free(r->jobs);
  free(r->sim);
  free(r->pred);
  free(r->scores);
  free(r->observed);
  memset(r, 0, sizeof *r);
}
