/* krn_exec.c - executors: the one interface (prepare, run_chunk, commit, finish) through which
 * the clustering strategies and the per-chunk calls of krn.h drive a member, the executor made
 * from a spec ("cpu", "gpu", "gpu:SMS"), and the CPU member, a group of OpenMP threads slowed by
 * duty-cycling to stand in for a weak GPU. The GPU member is in krn_gpu.cu. */
#include "kernels/krn_internal.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

int krn__exec_new(const char *name, double speed, const krn_exec_ops *ops, void *ctx, krn_exec **out) {
  krn_exec *e = calloc(1, sizeof *e);
  if (!e) return KRN_ENOMEM;
  e->ops = ops;
  e->ctx = ctx;
  e->speed = speed;
  snprintf(e->name, sizeof e->name, "%s", name ? name : "member");
  *out = e;
  return 0;
}

void krn_exec_destroy(krn_exec *e) {
  if (!e) return;
  if (e->ops && e->ops->destroy) e->ops->destroy(e->ctx);
  krn_gpu_close(e->own); /* after the member: its partition belongs to the device */
  free(e);
}
const char *krn_exec_name(const krn_exec *e) { return e->name; }
const char *krn_exec_kind(const krn_exec *e) { return e->kind; }
const char *krn_exec_describe(const krn_exec *e) { return e->desc; }
double krn_exec_speed(const krn_exec *e) { return e->speed; }

int krn_exec_set_speed(krn_exec *e, double speed) {
  if (!e || !(speed > 0 && speed <= 1)) return KRN_EINVAL;
  e->speed = speed;
  e->ops->set_speed(e->ctx, speed);
  return 0;
}

int krn_exec_prepare(krn_exec *e, krn_job *job) {
  if (!e || !job) return KRN_EINVAL;
  int rc = e->own ? krn_gpu_upload(e->own, job) : 0;
  return rc ? rc : e->ops->prepare(e->ctx, job);
}

int krn_exec_run_chunk(krn_exec *e, krn_job *job, size_t c, float *dst, krn_yield_fn yield, void *arg) {
  if (!e || !job || !dst || c >= krn_job_nchunks(job)) return KRN_EINVAL;
  return e->ops->run_chunk(e->ctx, job, c, KRN__DST_HOST, dst, yield, arg);
}

int krn_exec_finish(krn_exec *e, krn_job *job) {
  if (!e || !job) return KRN_EINVAL;
  int rc = e->ops->finish(e->ctx, job);
  if (e->own) krn__gpu_release(e->own);
  return rc;
}

/* "gpu" -> 0 SMs (the whole device), "gpu:N" -> N; -1 if the spec is not a GPU one. */
static int krn__gpu_spec(const char *spec, long *sms) {
  if (strncmp(spec, "gpu", 3) != 0) return -1;
  if (!spec[3]) {
    *sms = 0;
    return 0;
  }
  if (spec[3] != ':' || !spec[4]) return -1;
  char *end;
  errno = 0;
  long v = strtol(spec + 4, &end, 10);
  if (*end || errno || v < 1 || v > 1000000) return -1;
  *sms = v;
  return 0;
}

int krn_exec_open(const char *spec, const char *name, double speed, int nthreads, krn_exec **out, char *msg,
                  size_t msglen) {
  char scratch[256];
  if (!msg || !msglen) {
    msg = scratch;
    msglen = sizeof scratch;
  }
  msg[0] = 0;
  *out = NULL;
  long sms = 0;
  if (!spec) spec = "";
  if (!(speed > 0 && speed <= 1)) {
    snprintf(msg, msglen, "speed %g is not in (0, 1]", speed);
    return KRN_EINVAL;
  }
  if (!strcmp(spec, "cpu")) {
    int rc = krn_exec_cpu_create(name, speed, nthreads, out);
    if (rc) snprintf(msg, msglen, "cpu executor of %d threads: %s", nthreads, krn_strerror(rc));
    return rc;
  }
  if (krn__gpu_spec(spec, &sms) != 0) {
    snprintf(msg, msglen, "unknown executor '%.60s' (cpu, gpu or gpu:SMS)", spec);
    return KRN_EINVAL;
  }
  krn_gpu *g = NULL;
  int rc = krn_gpu_open(&g, msg, msglen);
  if (rc) return rc;
  krn_gpu_info info;
  krn_gpu_get_info(g, &info);
  if (sms > 0 && !info.green_contexts) {
    snprintf(msg, msglen, "%s: no green contexts in this driver, cannot make a partition of %ld SMs", info.name, sms);
    krn_gpu_close(g);
    return KRN_ENODEV;
  }
  if (sms > info.sms) {
    snprintf(msg, msglen, "%s has %d SMs, a partition of %ld was asked for", info.name, info.sms, sms);
    krn_gpu_close(g);
    return KRN_EINVAL;
  }
  int got = 0;
  if ((rc = krn_exec_gpu_create(g, name, (int)sms, speed, out, &got))) {
    snprintf(msg, msglen, "%s: a %s of %ld SMs could not be made: %s", info.name, sms ? "partition" : "stream", sms,
             krn_strerror(rc));
    krn_gpu_close(g);
    return rc;
  }
  (*out)->own = g;
  snprintf((*out)->desc, sizeof(*out)->desc, "%.127s, %d of %d SMs%s", info.name, got, info.sms,
           sms ? " (green context)" : "");
  return 0;
}

/* ---- The CPU member ------------------------------------------------------------------------ */
typedef struct krn__cpu {
  double speed;   /* duty cycle in (0, 1] */
  int nthreads;   /* OpenMP threads of this member */
  float *staging; /* one chunk's span, for redundant execution */
  size_t staging_len;
  double debt; /* idle time owed by duty-cycling, seconds */
} krn__cpu;

typedef struct krn__cpu_yield {
  krn__cpu *m;
  krn_yield_fn yield; /* the caller's, or NULL */
  void *arg;
  double t_last; /* when the current piece of work started */
} krn__cpu_yield;

/* Between two pieces of work: pay the duty-cycle idleness for the piece just done, then ask the
 * caller whether to go on (asked after sleeping, so a failure during the idle time counts). */
static int krn__cpu_yield_fn(void *arg) {
  krn__cpu_yield *y = arg;
  double now = krn_now();
  krn__duty_pay(y->m->speed, now - y->t_last, &y->m->debt);
  int rc = y->yield ? y->yield(y->arg) : 0;
  y->t_last = krn_now();
  return rc;
}

static int krn__cpu_prepare(void *ctx, krn_job *job) {
  krn__cpu *m = ctx;
  size_t need = krn_job_max_chunk_len(job);
  if (need > m->staging_len) {
    float *s = realloc(m->staging, need * sizeof(float));
    if (!s) return KRN_ENOMEM;
    m->staging = s;
    m->staging_len = need;
  }
  m->debt = 0;
  return 0;
}

static int krn__cpu_run_chunk(void *ctx, krn_job *job, size_t c, krn__dst where, float *host, krn_yield_fn yield,
                              void *arg) {
  krn__cpu *m = ctx;
  size_t off, len;
  krn_job_chunk_span(job, c, &off, &len);
  float *dst = where == KRN__DST_HOST ? host : where == KRN__DST_STAGING ? m->staging : job->out + off;
  krn__cpu_yield y = {m, yield, arg, krn_now()};
  int rc = krn_cpu_chunk(job, c, dst, m->nthreads, krn__cpu_yield_fn, &y);
  if (rc == 0) krn__duty_pay(m->speed, krn_now() - y.t_last, &m->debt); /* the last piece */
  if (rc) {
    /* What a failed or cancelled execution held is lost: make sure it cannot pass for done. */
    for (size_t i = 0; i < len; i++) dst[i] = NAN;
  }
  return rc;
}

static int krn__cpu_commit(void *ctx, krn_job *job, size_t c) {
  krn__cpu *m = ctx;
  size_t off, len;
  krn_job_chunk_span(job, c, &off, &len);
  memcpy(job->out + off, m->staging, len * sizeof(float));
  return 0;
}

static int krn__cpu_finish(void *ctx, krn_job *job) { return 0; }

static void krn__cpu_set_speed(void *ctx, double speed) { ((krn__cpu *)ctx)->speed = speed; }

static void krn__cpu_destroy(void *ctx) {
  krn__cpu *m = ctx;
  if (!m) return;
  free(m->staging);
  free(m);
}

static const krn_exec_ops krn__cpu_ops = {krn__cpu_prepare, krn__cpu_run_chunk, krn__cpu_commit,
                                          krn__cpu_finish,  krn__cpu_set_speed, krn__cpu_destroy};

int krn_exec_cpu_create(const char *name, double speed, int nthreads, krn_exec **out) {
  *out = NULL;
  if (!(speed > 0 && speed <= 1) || nthreads < 1 || nthreads > 1024) return KRN_EINVAL;
  krn__cpu *m = calloc(1, sizeof *m);
  if (!m) return KRN_ENOMEM;
  m->speed = speed;
  m->nthreads = nthreads;
  int rc = krn__exec_new(name, speed, &krn__cpu_ops, m, out);
  if (rc) {
    free(m);
    return rc;
  }
  snprintf((*out)->kind, sizeof(*out)->kind, "cpu");
  snprintf((*out)->desc, sizeof(*out)->desc, "cpu, %d thread%s", nthreads, nthreads == 1 ? "" : "s");
  return 0;
}
