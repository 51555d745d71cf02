/* lab_report.c - the lab's report: the per-job table on the terminal (with the simulation side by
 * side) and the HDF5 results file in the layout of simulated runs (docs/results-format.md). */
#include "lab/lab.h"
#include "models/market/mkt_names.h" /* the lab writes its jobs table under the market's name: one report reads both */
#include "models/sched/sched.h"
#include "sim/results_io.h"

#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

static const char *lab__outcome(const lab_job_result *r) {
  if (r->outcome < 0) return "unfinished";
  if (r->outcome == SCHED_R_COMPLETED) return "completed";
  if (r->service && r->outcome == SCHED_R_WITHDRAWN) return "served"; /* its stream is done */
  return "failed";
}
static int lab__ok(const lab_job_result *r) {
  return r->outcome == SCHED_R_COMPLETED || (r->service && r->outcome == SCHED_R_WITHDRAWN);
}
static const char *lab__kind(const lab_config *cfg, size_t j) {
  if (cfg->jobs[j].trace && cfg->jobs[j].trace[0]) return "service";
  return cfg->jobs[j].kernel[0] ? cfg->jobs[j].kernel : "command";
}

/* One service's line: requests, latency, replicas. */
static void lab__svc_line(FILE *f, const char *what, const lab_job_result *x) {
  fprintf(f,
          "  %-10s %4u/%-4u served %4u lost %4u  latency p50 %7.3f s p99 %7.3f s  replicas min %u max %u mean %.2f\n",
          what, x->req_served, x->req_total, x->req_served, x->req_lost, x->lat_p50, x->lat_p99, x->rep_min, x->rep_max,
          x->rep_mean);
}

static int lab__dcmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* Nearest-rank percentile (Hyndman & Fan 1996, definition 1) of n sorted values. */
static double lab__pct(const double *v, size_t n, double p) {
  if (!n) return NAN;
  size_t k = (size_t)ceil(p * (double)n);
  return v[k ? k - 1 : 0];
}

void lab__completions(const lab_job_result *jr, size_t n, double *p50, double *p99) {
  double *v = malloc((n ? n : 1) * sizeof *v);
  size_t m = 0;
  /* over every job: one that failed, or was not done when the lab stopped, never completed and
   * counts as an infinite completion time (dropping it would make the percentiles fall as more
   * jobs fail) */
  for (size_t j = 0; v && j < n; j++)
    v[m++] = jr[j].outcome == SCHED_R_COMPLETED && isfinite(jr[j].end) ? jr[j].end - jr[j].submit : INFINITY;
  if (v) qsort(v, m, sizeof *v, lab__dcmp);
  *p50 = v ? lab__pct(v, m, 0.50) : NAN;
  *p99 = v ? lab__pct(v, m, 0.99) : NAN;
  free(v);
}

void lab_report_print(FILE *f, const lab_config *cfg, const lab_report *r) {
  fprintf(f, "\n%-15s %-7s %-10s %-9s %8s %8s %8s %4s %5s", "job", "kind", "workers", "outcome", "submit", "start",
          "end", "rst", "exit");
  if (r->sim) fprintf(f, " | %9s %9s %9s", "sim end", "sim cmpl", "diff");
  if (r->pred) fprintf(f, " | %9s %9s %9s %9s", "pred end", "pred cmpl", "real cmpl", "error");
  fputc('\n', f);
  for (size_t j = 0; j < r->njobs; j++) {
    const lab_job_result *x = &r->jobs[j];
    fprintf(f, "%-15s %-7s %-10s %-9s %8.3f %8.3f %8.3f %4u %5d", cfg->jobs[j].name, lab__kind(cfg, j),
            x->workers[0] ? x->workers : "-", lab__outcome(x), x->submit, x->start, x->end, x->restarts,
            x->exit_status);
    if (r->sim) {
      const lab_job_result *s = &r->sim[j];
      double real_c = x->end - x->submit, sim_c = s->end - s->submit;
      fprintf(f, " | %9.3f %9.3f %+9.3f", s->end, sim_c, sim_c - real_c);
    }
    if (r->pred) {
      const lab_job_result *p = &r->pred[j];
      double real_c = x->end - x->submit, pc = p->end - p->submit;
      fprintf(f, " | %9.3f %9.3f %9.3f %+9.3f", p->end, pc, real_c, pc - real_c);
    }
    fputc('\n', f);
  }
  for (size_t j = 0; j < r->njobs; j++) {
    const lab_job_result *x = &r->jobs[j];
    if (!x->service) continue;
    fprintf(f, "service %s: %u requests arrived of %u\n", cfg->jobs[j].name, x->req_arrived, x->req_total);
    lab__svc_line(f, "real", x);
    if (r->sim) lab__svc_line(f, "simulated", &r->sim[j]);
    if (r->pred) lab__svc_line(f, "predicted", &r->pred[j]);
  }
  for (size_t j = 0; j < r->njobs; j++)
    if (r->jobs[j].outcome >= 0 && !lab__ok(&r->jobs[j]))
      fprintf(f, "failed %s: exit status %d; stderr tail: %s\n", cfg->jobs[j].name, r->jobs[j].exit_status,
              r->jobs[j].stderr_tail[0] ? r->jobs[j].stderr_tail : "(none)");
  double p50, p99;
  lab__completions(r->jobs, r->njobs, &p50, &p99);
  if (r->device[0] == '1')
    fprintf(f, "\nGPU found (%s); the workers computed on the %s\n", r->device + 2,
            strcmp(r->lab_device, "gpu") ? "CPU (lab.device)" : "GPU");
  else
    fprintf(f, "\nno GPU here (%s): the workers are CPU processes\n", r->device[0] ? r->device + 2 : "not probed");
  /* each worker's executor, once for a run of workers with the same one */
  for (size_t i = 0; r->executors && i < r->nworkers;) {
    size_t k = i + 1;
    while (k < r->nworkers && !strcmp(r->executors[k], r->executors[i])) k++;
    fprintf(f, "%s %zu", i ? ";" : "executors: worker", i);
    if (k > i + 1) fprintf(f, "-%zu", k - 1);
    fprintf(f, ": %s", r->executors[i][0] ? r->executors[i] : "cpu");
    i = k;
  }
  if (r->executors && r->nworkers) fputc('\n', f);
  fprintf(f, "worker speeds, measured alone / observed in the lab (work units/s):");
  for (size_t i = 0; i < r->nworkers; i++)
    fprintf(f, " %zu:%.3f/%.3f", i, r->scores[i], r->observed ? r->observed[i] : NAN);
  fprintf(f, "\njobs: %u completed, %u failed of %zu; workers lost: %u%s\n", r->completed, r->failed, r->njobs,
          r->worker_losses, r->resumed ? "; resumed from the journal" : "");
  fprintf(f, "makespan %.3f s, completion p50 %.3f s, p99 %.3f s\n", r->makespan, p50, p99);
  if (r->sim) {
    double s50, s99;
    lab__completions(r->sim, r->njobs, &s50, &s99);
    fprintf(f, "\n%-22s %10s %10s %10s\n", "", "real", "simulated", "sim-real");
    fprintf(f, "%-22s %10.3f %10.3f %+10.3f\n", "makespan (s)", r->makespan, r->sim_makespan,
            r->sim_makespan - r->makespan);
    fprintf(f, "%-22s %10.3f %10.3f %+10.3f\n", "completion p50 (s)", p50, s50, s50 - p50);
    fprintf(f, "%-22s %10.3f %10.3f %+10.3f\n", "completion p99 (s)", p99, s99, s99 - p99);
    double sum = 0;
    size_t n = 0;
    for (size_t j = 0; j < r->njobs; j++) {
      double d = (r->sim[j].end - r->sim[j].submit) - (r->jobs[j].end - r->jobs[j].submit);
      if (isfinite(d) && !r->jobs[j].service) { /* a service: its requests are compared above */
        sum += fabs(d);
        n++;
      }
    }
    fprintf(f, "%-22s %10s %10s %10.3f\n", "mean |completion diff|", "", "", n ? sum / (double)n : NAN);
  }
  if (r->pred) {
    lab_pred_stats ps;
    lab_pred_stats_get(r, &ps);
    double s50, s99;
    lab__completions(r->pred, r->njobs, &s50, &s99);
    unsigned pc = 0, pf = 0, rr = 0, pr = 0;
    for (size_t j = 0; j < r->njobs; j++) {
      if (lab__ok(&r->pred[j]))
        pc++;
      else if (r->pred[j].outcome >= 0)
        pf++;
      rr += r->jobs[j].restarts;
      pr += r->pred[j].restarts;
    }
    fprintf(f, "\npredicted before the run from %s (measured at load average %.2f)\n", r->calib_path, r->calib_load1);
    fprintf(f, "%-30s %10s %10s %10s\n", "", "real", "predicted", "pred-real");
    fprintf(f, "%-30s %10.3f %10.3f %+10.3f\n", "makespan (s)", r->makespan, r->pred_makespan,
            r->pred_makespan - r->makespan);
    fprintf(f, "%-30s %10.3f %10.3f %+10.3f\n", "completion p50 (s)", p50, s50, s50 - p50);
    fprintf(f, "%-30s %10.3f %10.3f %+10.3f\n", "completion p99 (s)", p99, s99, s99 - p99);
    fprintf(f, "%-30s %10u %10u %+10d\n", "jobs completed", r->completed, pc, (int)pc - (int)r->completed);
    fprintf(f, "%-30s %10u %10u %+10d\n", "jobs failed", r->failed, pf, (int)pf - (int)r->failed);
    fprintf(f, "%-30s %10u %10u %+10d\n", "restarts (all jobs)", rr, pr, (int)pr - (int)rr);
    fprintf(f, "%-30s %10u %10u %+10d\n", "workers lost", r->worker_losses, r->pred_losses,
            (int)r->pred_losses - (int)r->worker_losses);
    fprintf(f,
            "prediction error over %zu jobs: mean |completion error| %.3f s = %.1f%% of the makespan; max %.3f s; "
            "makespan error %+.1f%%\n",
            ps.n, ps.mae, ps.mae_pct, ps.max, ps.makespan_pct);
  }
}

/* Error statistics of a prediction: completion = end - submit, over the jobs that ended in both. */
void lab_pred_stats_get(const lab_report *r, lab_pred_stats *o) {
  memset(o, 0, sizeof *o);
  o->mae = o->mae_pct = o->max = o->makespan_pct = NAN;
  if (!r->pred) return;
  double sum = 0, mx = 0;
  for (size_t j = 0; j < r->njobs; j++) {
    double d = (r->pred[j].end - r->pred[j].submit) - (r->jobs[j].end - r->jobs[j].submit);
    if (!isfinite(d) || r->jobs[j].service) continue; /* services: latency and replicas, compared apart */
    sum += fabs(d);
    if (fabs(d) > mx) mx = fabs(d);
    o->n++;
  }
  if (o->n) {
    o->mae = sum / (double)o->n;
    o->max = mx;
    if (r->makespan > 0) o->mae_pct = 100 * o->mae / r->makespan;
  }
  if (r->makespan > 0) o->makespan_pct = 100 * (r->pred_makespan - r->makespan) / r->makespan;
}

typedef struct lab__rec {
  char name[16], kind[16], workers[16];
  double submit_s, start_s, end_s, completion_s;
  char outcome[16];
  int32_t exit_status, restarts, runs;
  double sim_end_s;  /* NaN without --also-simulate */
  double pred_end_s; /* NaN without --predict */
  char device[16];   /* what the workers computed on (lab.device resolved): "cpu" or "gpu" */
} lab__rec;

static const sim_field lab__fields[] = {
    {"name", SIM_F_STR16, offsetof(lab__rec, name), ""},
    {"kind", SIM_F_STR16, offsetof(lab__rec, kind), ""},
    {"workers", SIM_F_STR16, offsetof(lab__rec, workers), ""},
    {"submit_s", SIM_F_F64, offsetof(lab__rec, submit_s), "s"},
    {"start_s", SIM_F_F64, offsetof(lab__rec, start_s), "s"},
    {"end_s", SIM_F_F64, offsetof(lab__rec, end_s), "s"},
    {"completion_s", SIM_F_F64, offsetof(lab__rec, completion_s), "s"},
    {"outcome", SIM_F_STR16, offsetof(lab__rec, outcome), ""},
    {"exit_status", SIM_F_I32, offsetof(lab__rec, exit_status), "1"},
    {"restarts", SIM_F_I32, offsetof(lab__rec, restarts), "1"},
    {"runs", SIM_F_I32, offsetof(lab__rec, runs), "1"},
    {"sim_end_s", SIM_F_F64, offsetof(lab__rec, sim_end_s), "s"},
    {"pred_end_s", SIM_F_F64, offsetof(lab__rec, pred_end_s), "s"},
    {"device", SIM_F_STR16, offsetof(lab__rec, device), ""},
};
typedef struct lab__srec {
  char name[16];
  int32_t requests, arrived, served, lost, replicas_min, replicas_max;
  double latency_p50_s, latency_p99_s, replicas_mean;
  double sim_latency_p50_s, sim_latency_p99_s, sim_replicas_mean;    /* NaN without --also-simulate */
  double pred_latency_p50_s, pred_latency_p99_s, pred_replicas_mean; /* NaN without --predict */
} lab__srec;

static const sim_field lab__sfields[] = {
    {"name", SIM_F_STR16, offsetof(lab__srec, name), ""},
    {"requests", SIM_F_I32, offsetof(lab__srec, requests), "1"},
    {"arrived", SIM_F_I32, offsetof(lab__srec, arrived), "1"},
    {"served", SIM_F_I32, offsetof(lab__srec, served), "1"},
    {"lost", SIM_F_I32, offsetof(lab__srec, lost), "1"},
    {"replicas_min", SIM_F_I32, offsetof(lab__srec, replicas_min), "1"},
    {"replicas_max", SIM_F_I32, offsetof(lab__srec, replicas_max), "1"},
    {"latency_p50_s", SIM_F_F64, offsetof(lab__srec, latency_p50_s), "s"},
    {"latency_p99_s", SIM_F_F64, offsetof(lab__srec, latency_p99_s), "s"},
    {"replicas_mean", SIM_F_F64, offsetof(lab__srec, replicas_mean), "1"},
    {"sim_latency_p50_s", SIM_F_F64, offsetof(lab__srec, sim_latency_p50_s), "s"},
    {"sim_latency_p99_s", SIM_F_F64, offsetof(lab__srec, sim_latency_p99_s), "s"},
    {"sim_replicas_mean", SIM_F_F64, offsetof(lab__srec, sim_replicas_mean), "1"},
    {"pred_latency_p50_s", SIM_F_F64, offsetof(lab__srec, pred_latency_p50_s), "s"},
    {"pred_latency_p99_s", SIM_F_F64, offsetof(lab__srec, pred_latency_p99_s), "s"},
    {"pred_replicas_mean", SIM_F_F64, offsetof(lab__srec, pred_replicas_mean), "1"},
};

static const sim_table_def lab__tables[] = {
    {MKT_TABLE_JOBS, sizeof(lab__rec), lab__fields, sizeof lab__fields / sizeof lab__fields[0],
     "one row per job of the lab: where it ran, when, how it ended"},
    {"services", sizeof(lab__srec), lab__sfields, sizeof lab__sfields / sizeof lab__sfields[0],
     "one row per service: requests served and lost to faults, latency (nearest rank), replicas over time"},
};
/* What the percentiles do with what never finished (a percentile over the finished only would
 * fall as more jobs fail or more requests are lost). */
#define MQ_LAB_NEVER "a job that failed, or was not done when the lab stopped, counts as never completing (infinite)"
#define MQ_LAB_UNANSWERED                                                                                              \
  "a request lost to a fault, or still queued or served when its service ended, counts as never answered (infinite)"
static const sim_metric_def lab__metrics[] = {
    {"makespan", "s", "first submission to last end", 0, "makespan", "last end - first submission over all jobs",
     "jobs", "none (one span)", "every job of the lab ends (completed or failed) before the run stops"},
    {"completion_p50", "s", "median end - submit over all jobs (a job that failed: infinite)", 0,
     "median completion time", "median (nearest rank) over all jobs of (end - submit), infinite for a job that failed",
     "submitted jobs", "per job (median)", MQ_LAB_NEVER},
    {"completion_p99", "s", "99th percentile of end - submit over all jobs (a job that failed: infinite)", 0,
     "99th percentile completion time",
     "99th percentile (nearest rank) over all jobs of (end - submit), infinite for a job that failed", "submitted jobs",
     "per job (nearest rank)", MQ_LAB_NEVER},
    {"jobs_completed", "1", "jobs that completed", 0, "jobs completed", "jobs that completed", "jobs", "count",
     "every job of the lab ends (completed or failed) before the run stops"},
    {"jobs_failed", "1", "jobs that ended without completing", 0, "jobs failed", "jobs that ended without completing",
     "jobs", "count", "every job of the lab ends (completed or failed) before the run stops"},
    {"workers_lost", "1", "workers the core declared lost", 0, "workers lost",
     "workers the scheduling core declared lost", "workers", "count",
     "workers lost after the last job are not counted"},
    {"sim_makespan", "s", "makespan of the simulated twin (NaN without --also-simulate)", 0,
     "makespan of the simulated twin", "makespan of the discrete-event twin of the same jobs", "jobs (simulated)",
     "none (one span)", "every job of the lab ends (completed or failed) before the run stops"},
    {"sim_completion_p50", "s", "median completion of the simulated twin", 0, "median completion of the simulated twin",
     "median (nearest rank) over the twin's jobs of (end - submit), infinite for a job that failed",
     "submitted jobs (simulated)", "per job (median)", MQ_LAB_NEVER},
    {"pred_makespan", "s", "makespan predicted before the run from the calibration (NaN without --predict)", 0,
     "predicted makespan", "makespan the calibrated model predicted before the run", "jobs", "none (one span)",
     "every job of the lab ends (completed or failed) before the run stops"},
    {"pred_completion_mae", "s", "mean |predicted - real completion| over the jobs", 0,
     "prediction error of completion times", "mean over jobs of |predicted - real (end - submit)|",
     "jobs with both a prediction and a real end", "per job",
     "jobs unfinished when the lab stopped are not completed: not counted"},
    {"pred_completion_mae_pct", "%", "the same as a percentage of the real makespan", 0,
     "prediction error of completion (% of makespan)", "100 x pred_completion_mae / makespan",
     "jobs with both a prediction and a real end", "per job",
     "jobs unfinished when the lab stopped are not completed: not counted"},
    {"svc_requests_served", "1", "requests the services served (NaN without a service)", 0, "requests served",
     "requests the services served, summed over services", "requests", "count",
     "requests of services still up at the end are counted up to the end"},
    {"svc_requests_lost", "1", "requests lost to faults (their replica was lost)", 0, "requests lost to faults",
     "requests whose replica was lost, summed over services", "requests", "count",
     "requests of services still up at the end are counted up to the end"},
    {"svc_latency_p50", "s", "median request latency, the largest over the services", 0, "median request latency",
     "the largest over services of the median (nearest rank) request latency, infinite for a request never answered",
     "requests that arrived", "per request (median)", MQ_LAB_UNANSWERED},
    {"svc_latency_p99", "s", "99th percentile request latency, the largest over the services", 0,
     "99th percentile request latency",
     "the largest over services of the 99th percentile (nearest rank) latency, infinite for a request never answered",
     "requests that arrived", "per request (nearest rank)", MQ_LAB_UNANSWERED},
    {"svc_replicas_mean", "1", "time-weighted mean replicas, summed over the services", 0, "mean replicas",
     "time-weighted mean of replicas up, summed over services", "service time", "per second",
     "requests of services still up at the end are counted up to the end"},
    {"pred_svc_latency_p50", "s", "svc_latency_p50 predicted (NaN without --predict)", 0,
     "predicted median request latency", "svc_latency_p50 as the calibrated model predicted it",
     "requests that arrived", "per request (median)", MQ_LAB_UNANSWERED},
    {"pred_svc_latency_p99", "s", "svc_latency_p99 predicted", 0, "predicted 99th percentile latency",
     "svc_latency_p99 as the calibrated model predicted it", "requests that arrived", "per request (nearest rank)",
     MQ_LAB_UNANSWERED},
    {"pred_svc_replicas_mean", "1", "svc_replicas_mean predicted", 0, "predicted mean replicas",
     "svc_replicas_mean as the calibrated model predicted it", "service time", "per second",
     "requests of services still up at the end are counted up to the end"},
};
#define LAB__NMETRICS (sizeof lab__metrics / sizeof lab__metrics[0])
const sim_metric_def *lab_metric_defs(unsigned *n) {
  *n = (unsigned)LAB__NMETRICS;
  return lab__metrics;
}

/* The services' metrics of one side (real, predicted): [0] served, [1] lost, [2] p50, [3] p99,
 * [4] mean replicas; NaN without a service. */
static void lab__svc_metrics(const lab_job_result *x, size_t n, double *v) {
  int any = 0;
  for (int k = 0; k < 5; k++) v[k] = 0;
  for (size_t j = 0; j < n; j++) {
    if (!x[j].service) continue;
    v[0] += x[j].req_served;
    v[1] += x[j].req_lost;
    if (!any || x[j].lat_p50 > v[2]) v[2] = x[j].lat_p50;
    if (!any || x[j].lat_p99 > v[3]) v[3] = x[j].lat_p99;
    v[4] += x[j].rep_mean;
    any = 1;
  }
  if (!any)
    for (int k = 0; k < 5; k++) v[k] = NAN;
}

int lab_results_write(const char *path, const lab_config *cfg, const lab_report *r, double wall_s, char *err,
                      size_t errlen) {
  lab__rec *recs = calloc(r->njobs ? r->njobs : 1, sizeof *recs);
  lab__srec *srecs = calloc(r->njobs ? r->njobs : 1, sizeof *srecs);
  size_t nsvc = 0;
  if (!recs || !srecs) {
    free(recs);
    free(srecs);
    snprintf(err, errlen, "out of memory");
    return LAB_ENOMEM;
  }
  for (size_t j = 0; j < r->njobs; j++) {
    const lab_job_result *x = &r->jobs[j];
    lab__rec *q = &recs[j];
    snprintf(q->name, sizeof q->name, "%s", cfg->jobs[j].name);
    snprintf(q->kind, sizeof q->kind, "%s", lab__kind(cfg, j));
    snprintf(q->workers, sizeof q->workers, "%.15s", x->workers);
    snprintf(q->device, sizeof q->device, "%s", r->lab_device[0] ? r->lab_device : "cpu");
    q->submit_s = x->submit;
    q->start_s = x->start;
    q->end_s = x->end;
    q->completion_s = x->end - x->submit;
    snprintf(q->outcome, sizeof q->outcome, "%s", lab__outcome(x));
    q->exit_status = x->exit_status;
    q->restarts = (int32_t)x->restarts;
    q->runs = (int32_t)x->runs;
    q->sim_end_s = r->sim ? r->sim[j].end : NAN;
    q->pred_end_s = r->pred ? r->pred[j].end : NAN;
    if (!x->service) continue;
    lab__srec *sq = &srecs[nsvc++];
    snprintf(sq->name, sizeof sq->name, "%s", cfg->jobs[j].name);
    sq->requests = (int32_t)x->req_total;
    sq->arrived = (int32_t)x->req_arrived;
    sq->served = (int32_t)x->req_served;
    sq->lost = (int32_t)x->req_lost;
    sq->replicas_min = (int32_t)x->rep_min;
    sq->replicas_max = (int32_t)x->rep_max;
    sq->latency_p50_s = x->lat_p50;
    sq->latency_p99_s = x->lat_p99;
    sq->replicas_mean = x->rep_mean;
    sq->sim_latency_p50_s = r->sim ? r->sim[j].lat_p50 : NAN;
    sq->sim_latency_p99_s = r->sim ? r->sim[j].lat_p99 : NAN;
    sq->sim_replicas_mean = r->sim ? r->sim[j].rep_mean : NAN;
    sq->pred_latency_p50_s = r->pred ? r->pred[j].lat_p50 : NAN;
    sq->pred_latency_p99_s = r->pred ? r->pred[j].lat_p99 : NAN;
    sq->pred_replicas_mean = r->pred ? r->pred[j].rep_mean : NAN;
  }
  sim_model m;
  memset(&m, 0, sizeof m);
  m.name = "lab";
  m.nlps = 1;
  m.tables = lab__tables;
  m.ntables = 2;
  unsigned char *tabs[2] = {(unsigned char *)recs, (unsigned char *)srecs};
  size_t nrec[2] = {r->njobs, nsvc};
  sim_results res;
  memset(&res, 0, sizeof res);
  res.model = &m;
  res.seed = (uint64_t)cfg->lab.seed;
  res.ranks = 1;
  res.wall_s = wall_s;
  res.tables = tabs;
  res.nrecords = nrec;
  double vals[LAB__NMETRICS];
  double p50, p99, s50 = NAN, s99;
  lab__completions(r->jobs, r->njobs, &p50, &p99);
  if (r->sim) lab__completions(r->sim, r->njobs, &s50, &s99);
  vals[0] = r->makespan;
  vals[1] = p50;
  vals[2] = p99;
  vals[3] = r->completed;
  vals[4] = r->failed;
  vals[5] = r->worker_losses;
  vals[6] = r->sim ? r->sim_makespan : NAN;
  vals[7] = s50;
  lab_pred_stats ps;
  lab_pred_stats_get(r, &ps);
  vals[8] = r->pred ? r->pred_makespan : NAN;
  vals[9] = ps.mae;
  vals[10] = ps.mae_pct;
  double sv[5], pv[5];
  lab__svc_metrics(r->jobs, r->njobs, sv);
  if (r->pred)
    lab__svc_metrics(r->pred, r->njobs, pv);
  else
    for (int k = 0; k < 5; k++) pv[k] = NAN;
  vals[11] = sv[0];
  vals[12] = sv[1];
  vals[13] = sv[2];
  vals[14] = sv[3];
  vals[15] = sv[4];
  vals[16] = pv[2];
  vals[17] = pv[3];
  vals[18] = pv[4];
  sim_run_meta meta = {"lab", cfg->path, cfg->text, cfg->effective, (uint64_t)cfg->lab.seed, 1,
                       1,     1,         wall_s,    r->makespan,    cfg->command_line};
  _Static_assert(LAB__NMETRICS == 19, "one value per metric");
  int rc = sim_results_write(path, &meta, &m, &res, lab__metrics, LAB__NMETRICS, vals, err, errlen);
  free(recs);
  free(srecs);
  return rc ? LAB_EIO : 0;
}
