/* lab_svc.c - an inference service of a lab: its request stream, queue and statistics. The real
 * runner (lab_glue.c, lab_run.c) and the simulated twin (lab_sim.c) both keep a service's state
 * here, so the twin sees the very requests, arrival times and load reports the lab does.
 *
 * Requests come from the GenAI trace (data/traces/alibaba2026_genai_inference_requests.csv, read
 * by the market's own loader, mkt_trace_load_genai: SUCCEED rows, submit times from the first
 * request): the first `requests` ones at or after `trace_start`, arriving at
 *   at + (submit - trace_start) / time_scale                       (lab s)
 * each a kernel piece of round(exec_time_seconds x work_scale / chunk_s) chunk executions (at
 * least one) of the service's kernel on one replica: a request is real work of the size the trace
 * gives, scaled, done by the same kernels as the batch jobs (so the replicas contend for the cores
 * as they do). FIFO queue; a replica takes the oldest waiting request when it is free.
 *
 * Load: the offered load handed to the core (SCHED_EV_LOAD) is sampled every load_window / 4 s:
 * the requests that arrived in the last load_window s, over load_window (req/s). A periodic
 * sample, as the Kubernetes Horizontal Pod Autoscaler samples its metric (every 15 s by default;
 * kubernetes.io, "Horizontal Pod Autoscaling"); the core turns it into replicas with
 * sched_autoscale_replicas, the HPA's ceil(load / (capacity x target)). */
#include "lab/lab_internal.h"
#include "models/market/mkt.h"
#include "sim/datapath.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int lab__svc_load(const lab_config *cfg, size_t job, double chunk_s, lab__svc *out, char *err, size_t errlen) {
  const lab_job_def *jd = &cfg->jobs[job];
  memset(out, 0, sizeof *out);
  out->job = (long)job;
  char dir[4096];
  snprintf(dir, sizeof dir, "%s", cfg->path ? cfg->path : "");
  char *slash = strrchr(dir, '/');
  if (slash)
    *slash = 0;
  else
    snprintf(dir, sizeof dir, ".");
  char *path = NULL;
  int rc = sim_data_find(dir, jd->trace, &path, err, errlen);
  if (rc) return LAB_EIO;
  mkt_trace_job *tj = NULL;
  size_t n = 0;
  rc = mkt_trace_load_genai(path, &tj, &n, NULL, err, errlen);
  free(path);
  if (rc) return rc == MKT_EFORMAT ? LAB_ECONFIG : rc == MKT_ENOMEM ? LAB_ENOMEM : LAB_EIO; /* "FILE:LINE: ..." */
  size_t k0 = 0;
  while (k0 < n && tj[k0].submit_s < jd->trace_start) k0++;
  size_t m = n - k0 < (size_t)jd->requests ? n - k0 : (size_t)jd->requests;
  if (m == 0) {
    snprintf(err, errlen, "%s: job '%s': no request of the trace at or after trace_start = %g s", cfg->path, jd->name,
             jd->trace_start);
    free(tj);
    return LAB_ECONFIG;
  }
  out->n = m;
  out->arrive = calloc(m, sizeof *out->arrive);
  out->nch = calloc(m, sizeof *out->nch);
  out->state = calloc(m, 1);
  out->done_t = calloc(m, sizeof *out->done_t);
  if (!out->arrive || !out->nch || !out->state || !out->done_t) {
    free(tj);
    lab__svc_free(out);
    return LAB_ENOMEM;
  }
  double sum = 0;
  for (size_t k = 0; k < m; k++) {
    const mkt_trace_job *r = &tj[k0 + k];
    out->arrive[k] = jd->at + (r->submit_s - jd->trace_start) / jd->time_scale;
    double c = chunk_s > 0 ? floor(r->dur_s * jd->work_scale / chunk_s + 0.5) : 1;
    out->nch[k] = c < 1 ? 1 : c > 1e6 ? 1000000 : (size_t)c;
    sum += (double)out->nch[k] * chunk_s;
  }
  free(tj);
  out->chunk_s = chunk_s;
  /* ASSUMPTION: the service declares its mean request size (work units at speed 1), as a
   * deployment knows it from history: one unit of score serves 1 / that many requests a second. */
  out->req_per_score_s = sum > 0 ? (double)m / sum : 1.0;
  out->window = jd->load_window;
  out->t0 = out->next_load = jd->at;
  out->rep_t = NAN;
  return 0;
}

int lab__svc_copy(const lab__svc *a, lab__svc *out) {
  *out = *a;
  out->arrive = malloc(a->n * sizeof *out->arrive);
  out->nch = malloc(a->n * sizeof *out->nch);
  out->state = calloc(a->n, 1);
  out->done_t = calloc(a->n, sizeof *out->done_t);
  if (!out->arrive || !out->nch || !out->state || !out->done_t) {
    lab__svc_free(out);
    return LAB_ENOMEM;
  }
  memcpy(out->arrive, a->arrive, a->n * sizeof *out->arrive);
  memcpy(out->nch, a->nch, a->n * sizeof *out->nch);
  out->narrived = out->nserved = out->nlost = 0;
  out->next_load = a->t0;
  out->rep_t = NAN;
  out->rep_n = out->rep_min = out->rep_max = 0;
  out->rep_area = out->rep_t0 = 0;
  out->ended = 0;
  return 0;
}

void lab__svc_free(lab__svc *s) {
  free(s->arrive);
  free(s->nch);
  free(s->state);
  free(s->done_t);
  s->arrive = s->done_t = NULL;
  s->nch = NULL;
  s->state = NULL;
  s->n = 0;
}

size_t lab__svc_arrive(lab__svc *s, double t) {
  size_t k0 = s->narrived;
  while (s->narrived < s->n && s->arrive[s->narrived] <= t) {
    if (s->state[s->narrived] == LAB_REQ_FUTURE) s->state[s->narrived] = LAB_REQ_QUEUED;
    s->narrived++;
  }
  return s->narrived - k0;
}

double lab__svc_next_arrival(const lab__svc *s) { return s->narrived < s->n ? s->arrive[s->narrived] : INFINITY; }

double lab__svc_load_at(const lab__svc *s, double t) {
  size_t c = 0;
  for (size_t k = 0; k < s->n && s->arrive[k] <= t; k++)
    if (s->arrive[k] > t - s->window) c++;
  return (double)c / s->window;
}

long lab__svc_take(lab__svc *s) {
  for (size_t k = 0; k < s->narrived; k++)
    if (s->state[k] == LAB_REQ_QUEUED) {
      s->state[k] = LAB_REQ_SERVING;
      return (long)k;
    }
  return -1;
}

void lab__svc_served(lab__svc *s, long k, double t) {
  if (k < 0 || (size_t)k >= s->n || s->state[k] == LAB_REQ_SERVED || s->state[k] == LAB_REQ_LOST) return;
  s->state[k] = LAB_REQ_SERVED;
  s->done_t[k] = t;
  s->nserved++;
}

void lab__svc_lost(lab__svc *s, long k) {
  if (k < 0 || (size_t)k >= s->n || s->state[k] == LAB_REQ_SERVED || s->state[k] == LAB_REQ_LOST) return;
  s->state[k] = LAB_REQ_LOST;
  s->nlost++;
}

void lab__svc_requeue(lab__svc *s, long k) {
  if (k >= 0 && (size_t)k < s->n && s->state[k] == LAB_REQ_SERVING) s->state[k] = LAB_REQ_QUEUED;
}

int lab__svc_finished(const lab__svc *s) { return s->nserved + s->nlost == s->n; }

void lab__svc_replicas(lab__svc *s, double t, unsigned n) {
  if (s->ended) return;
  if (isnan(s->rep_t)) {
    s->rep_t0 = t;
    s->rep_min = s->rep_max = n;
  } else {
    s->rep_area += (double)s->rep_n * (t - s->rep_t);
  }
  s->rep_t = t;
  s->rep_n = n;
  if (n < s->rep_min) s->rep_min = n;
  if (n > s->rep_max) s->rep_max = n;
}

/* What a SCALE decision does to the service, the runner's and the twin's alike. */
int lab__svc_rescale(lab__svc *s, const sched_decision *d, double t) {
  lab__svc_replicas(s, t, (unsigned)d->value);
  return d->reason != SCHED_R_SCALE_DOWN && d->reason != SCHED_R_GPU_LOST;
}
int lab__svc_release(lab__svc *s, const sched_decision *d, long k) {
  if (k < 0) return 0;
  if (d->reason == SCHED_R_GPU_LOST) {
    lab__svc_lost(s, k);
    return 1;
  }
  lab__svc_requeue(s, k);
  return 0;
}

void lab__svc_end(lab__svc *s, double t) {
  if (s->ended) return;
  if (!isnan(s->rep_t)) s->rep_area += (double)s->rep_n * (t - s->rep_t);
  s->rep_t = t;
  s->ended = 1;
}

static int lab__dcmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

void lab__svc_stats(const lab__svc *s, lab_job_result *r) {
  r->service = 1;
  r->req_arrived = (unsigned)s->narrived;
  r->req_served = (unsigned)s->nserved;
  r->req_lost = (unsigned)s->nlost;
  r->req_total = (unsigned)s->n;
  double *v = malloc((s->n ? s->n : 1) * sizeof *v);
  size_t m = 0;
  /* over every request that arrived: one lost to a fault, or still queued or being served when
   * the service ended, was never answered and counts as an infinite latency (a percentile that
   * dropped them would fall as more requests are lost) */
  for (size_t k = 0; v && k < s->n; k++)
    if (s->state[k] == LAB_REQ_SERVED)
      v[m++] = s->done_t[k] - s->arrive[k];
    else if (s->state[k] != LAB_REQ_FUTURE)
      v[m++] = INFINITY;
  r->lat_p50 = r->lat_p99 = NAN;
  if (v && m) {
    qsort(v, m, sizeof *v, lab__dcmp);
    /* nearest rank (Hyndman & Fan 1996, definition 1) */
    size_t k50 = (size_t)ceil(0.50 * (double)m), k99 = (size_t)ceil(0.99 * (double)m);
    r->lat_p50 = v[k50 ? k50 - 1 : 0];
    r->lat_p99 = v[k99 ? k99 - 1 : 0];
  }
  free(v);
  r->rep_min = s->rep_min;
  r->rep_max = s->rep_max;
  r->rep_final = s->rep_n;
  double span = s->rep_t - s->rep_t0;
  r->rep_mean = !isnan(s->rep_t) && span > 0 ? s->rep_area / span : (double)s->rep_n;
}
