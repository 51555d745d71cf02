/* krn_exec.c - executors: the one interface (run_chunk, commit) through which the clustering
 * strategies drive a member, and the CPU member, a group of OpenMP threads slowed by
 * duty-cycling to stand in for a weak GPU. The GPU member is in krn_gpu.cu. */
#include "kernels/krn_internal.h"

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
  free(e);
}
const char *krn_exec_name(const krn_exec *e) { return e->name; }
double krn_exec_speed(const krn_exec *e) { return e->speed; }

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
  const krn_ctl *ctl;
  double t_last; /* when the current piece of work started */
} krn__cpu_yield;

/* Between two pieces of work: pay the duty-cycle idleness for the piece just done, then ask the
 * cluster whether to go on (checked after sleeping, so a failure during the idle time counts). */
static int krn__cpu_yield_fn(void *arg) {
  krn__cpu_yield *y = arg;
  double now = krn_now();
  krn__duty_pay(y->m->speed, now - y->t_last, &y->m->debt);
  int rc = y->ctl ? y->ctl->check(y->ctl) : 0;
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

static int krn__cpu_run_chunk(void *ctx, krn_job *job, size_t c, int staged, const krn_ctl *ctl) {
  krn__cpu *m = ctx;
  size_t off, len;
  krn_job_chunk_span(job, c, &off, &len);
  float *dst = staged ? m->staging : job->out + off;
  krn__cpu_yield y = {m, ctl, krn_now()};
  int rc = krn_cpu_chunk(job, c, dst, m->nthreads, krn__cpu_yield_fn, &y);
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

static void krn__cpu_destroy(void *ctx) {
  krn__cpu *m = ctx;
  if (!m) return;
  free(m->staging);
  free(m);
}

static const krn_exec_ops krn__cpu_ops = {krn__cpu_prepare, krn__cpu_run_chunk, krn__cpu_commit, krn__cpu_finish,
                                          krn__cpu_destroy};

int krn_exec_cpu_create(const char *name, double speed, int nthreads, krn_exec **out) {
  *out = NULL;
  if (!(speed > 0 && speed <= 1) || nthreads < 1 || nthreads > 1024) return KRN_EINVAL;
  krn__cpu *m = calloc(1, sizeof *m);
  if (!m) return KRN_ENOMEM;
  m->speed = speed;
  m->nthreads = nthreads;
  int rc = krn__exec_new(name, speed, &krn__cpu_ops, m, out);
  if (rc) free(m);
  return rc;
}
