/* krn_cluster.c - clustering strategies over unreliable members, in plain C.
 *
 * One thread per member drives it: it asks the strategy for a chunk (under the run's lock),
 * runs it through the member's run_chunk (lock released), and reports back. The same code
 * drives CPU thread groups and GPU green-context partitions.
 *
 * Failures: a member fails at its chosen time. The running chunk stops at its next check and
 * is lost (its span is overwritten with NaN); the member takes no more work. The cluster learns
 * of it `detect_s` later (a heartbeat timeout), and only then does the strategy act:
 *   even / weighted  the failed member's remaining share (and the lost chunk) is split again
 *                    over the survivors, evenly or by capacity, and appended to their shares;
 *   dynamic          the lost chunk goes back to the front of the queue;
 *   redundant        the lost replica is released, so another member may start one;
 *   speculative      as dynamic; backups of running chunks also cover the lost one;
 *   checkpoint       the whole current epoch rolls back (its committed chunks are lost, running
 *                    ones cancelled), and after `restart_s` it is split again over the
 *                    survivors. Epoch boundaries are the checkpoints (a barrier).
 * Chunks are idempotent, so a redone chunk writes exactly what the lost one would have.
 *
 * Measures: makespan, the fluid-bound ideal, work lost (member-seconds whose result was
 * discarded), and recovery time (first failure -> every chunk that was done or running at that
 * instant is committed again). The failed member notices its failure only at its next check,
 * which on a loaded machine can come long after the failure time; what was done or running at the
 * failure time is therefore read from per-chunk times (since when a chunk has been running, when
 * it was committed), not from the state at the moment it noticed, when another replica may have
 * committed the very chunk it failed on. */
#include "kernels/krn_internal.h"

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* What the cluster hands a running chunk, as its yield argument (krn__check): go on (0), stop
 * because the member's failure time has come (KRN_EFAILED), or because the execution is no
 * longer wanted (KRN_ECANCEL). */
typedef struct krn_ctl {
  void *run; /* the cluster run */
  int member;
  size_t chunk;
  unsigned epoch;
} krn_ctl;

struct krn_cluster {
  int n;
  krn_exec *m[KRN_MAX_MEMBERS];
};

/* The splits' names are krn_split.h's; these are the strategies' that follow them. */
static const char *const krn__strategy_more[KRN_NSTRATEGIES - KRN_NSPLITS] = {"redundant", "checkpoint", "speculative"};
const char *krn_strategy_name(krn_strategy s) {
  if ((unsigned)s < KRN_NSPLITS) return krn_split_names[s];
  return (unsigned)s < KRN_NSTRATEGIES ? krn__strategy_more[s - KRN_NSPLITS] : "?";
}
int krn_strategy_parse(const char *name, krn_strategy *out) {
  for (int i = 0; i < KRN_NSTRATEGIES; i++)
    if (name && !strcmp(name, krn_strategy_name((krn_strategy)i))) {
      *out = (krn_strategy)i;
      return 0;
    }
  return KRN_EINVAL;
}

int krn_cluster_create(krn_exec *const *members, int n, krn_cluster **out) {
  *out = NULL;
  if (n < 1 || n > KRN_MAX_MEMBERS || !members) return KRN_EINVAL;
  for (int i = 0; i < n; i++)
    if (!members[i]) return KRN_EINVAL;
  krn_cluster *cl = calloc(1, sizeof *cl);
  if (!cl) return KRN_ENOMEM;
  cl->n = n;
  memcpy(cl->m, members, (size_t)n * sizeof members[0]);
  *out = cl;
  return 0;
}
void krn_cluster_destroy(krn_cluster *cl) { free(cl); }
int krn_cluster_size(const krn_cluster *cl) { return cl->n; }

double krn_ideal_makespan(size_t nchunks, int nm, const double *cap, const double *fail_at) {
  /* Fluid bound: with perfect division of work and no overhead, member i contributes
   * cap_i * min(T, f_i) chunks by time T; the ideal makespan is the smallest T reaching N. */
  double sum_forever = 0, reach = 0;
  for (int i = 0; i < nm; i++) {
    double f = fail_at && fail_at[i] >= 0 ? fail_at[i] : INFINITY;
    if (isinf(f))
      sum_forever += cap[i];
    else
      reach += cap[i] * f;
  }
  double N = (double)nchunks;
  if (sum_forever <= 0 && reach < N) return INFINITY;
  double lo = 0, hi = 1;
  for (;;) {
    double got = 0;
    for (int i = 0; i < nm; i++) {
      double f = fail_at && fail_at[i] >= 0 ? fail_at[i] : INFINITY;
      got += cap[i] * fmin(hi, f);
    }
    if (got >= N) break;
    hi *= 2;
  }
  for (int it = 0; it < 100; it++) {
    double mid = 0.5 * (lo + hi), got = 0;
    for (int i = 0; i < nm; i++) {
      double f = fail_at && fail_at[i] >= 0 ? fail_at[i] : INFINITY;
      got += cap[i] * fmin(mid, f);
    }
    if (got >= N)
      hi = mid;
    else
      lo = mid;
  }
  return hi;
}

int krn_cluster_measure(krn_cluster *cl, krn_job *job, size_t chunks_each, double *capacity) {
  if (!cl || !job || !capacity || chunks_each < 1) return KRN_EINVAL;
  size_t n = krn_job_nchunks(job);
  for (int i = 0; i < cl->n; i++) {
    krn_exec *e = cl->m[i];
    int rc = e->ops->prepare(e->ctx, job);
    if (rc) return rc;
    /* one untimed chunk to warm caches (and, on a GPU, the partition) */
    if ((rc = e->ops->run_chunk(e->ctx, job, 0, KRN__DST_OUT, NULL, NULL, NULL))) return rc;
    double t0 = krn_now(), dt = 0;
    size_t r = 0;
    for (; r < chunks_each || (dt < 0.05 && r < 64 * chunks_each); r++) {
      if ((rc = e->ops->run_chunk(e->ctx, job, (r + 1) % n, KRN__DST_OUT, NULL, NULL, NULL))) return rc;
      dt = krn_now() - t0;
    }
    capacity[i] = dt > 0 ? (double)r / dt : INFINITY;
  }
  return 0;
}

/* ---- One run --------------------------------------------------------------------------------- */
typedef struct krn__run krn__run;

typedef struct krn__member {
  krn__run *run;
  int idx;
  pthread_t th;
  double fail_at;  /* absolute monotonic time, INFINITY = never */
  int failed;      /* noticed its failure (takes no more work) */
  int dead;        /* failure detected by the cluster */
  long cur;        /* chunk it runs or held when failing, -1 = none */
  long fail_after; /* fail during execution number fail_after + 1; < 0 = never */
  long started;    /* executions started */
  size_t ok_n;     /* executions completed (committed or not) */
  double ok_time;  /* time spent on them */
  size_t *list;    /* static share / epoch share: chunks in order */
  size_t lhead, ltail;
  krn_ctl ctl;
} krn__member;

struct krn__run {
  pthread_mutex_t mu;
  pthread_cond_t cv;
  krn_cluster *cl;
  krn_job *job;
  krn_run_opts o;
  int nm, k;
  size_t n;
  _Atomic unsigned char *done; /* per chunk: committed */
  int *active;                 /* per chunk: executions in flight (or failed, undetected) */
  unsigned char *tried;        /* redundant: [member][chunk] started it once */
  double *dur;                 /* per chunk: duration of the committed execution */
  double *since;               /* per chunk: when its executions in flight began (set when the
                                  count of them leaves 0; kept once it is committed) */
  double *t_done;              /* per chunk: when it was committed */
  size_t ndone;
  size_t *q, qcap, qhead, qlen; /* dynamic: ring buffer of chunks */
  _Atomic unsigned epoch;       /* checkpoint: bumped on rollback */
  size_t ep0, ep1, ep_done, ep_len;
  int restarting, restart_gen;
  unsigned char *need; /* recovery: chunks to be committed again */
  size_t nneed;
  int recovering;
  double t_fail, recovery_s;
  double lost_s;
  size_t lost_n, execs;
  int failures, err, running;
  int ready, go; /* start barrier: every member thread waits for go */
  double t0, t_end;
  double cap[KRN_MAX_MEMBERS];
  krn__member ms[KRN_MAX_MEMBERS];
};

static int krn__alive(const krn__run *r, int i, double now) {
  return !r->ms[i].failed && !r->ms[i].dead && now < r->ms[i].fail_at;
}

/* Split chunks[0..cnt) into contiguous shares for the live members, proportional to w (equal
 * when w is NULL), appended to their lists. */
static void krn__distribute(krn__run *r, const size_t *chunks, size_t cnt, const double *w) {
  double now = krn_now(), tot = 0;
  int live[KRN_MAX_MEMBERS], nl = 0;
  for (int i = 0; i < r->nm; i++)
    if (krn__alive(r, i, now)) {
      live[nl++] = i;
      tot += w ? w[i] : 1.0;
    }
  if (nl == 0 || cnt == 0) return;
  double cum = 0;
  size_t from = 0;
  for (int a = 0; a < nl; a++) {
    krn__member *m = &r->ms[live[a]];
    cum += w ? w[live[a]] : 1.0;
    size_t to = a == nl - 1 ? cnt : (size_t)floor((double)cnt * cum / tot + 0.5);
    if (to > cnt) to = cnt;
    for (size_t x = from; x < to; x++) m->list[m->ltail++] = chunks[x];
    from = to > from ? to : from;
  }
}

static void krn__assign_epoch(krn__run *r) {
  size_t cnt = r->ep1 - r->ep0;
  size_t *tmp = r->q; /* the queue is unused by this strategy: scratch */
  for (int i = 0; i < r->nm; i++) r->ms[i].lhead = r->ms[i].ltail = 0;
  size_t m = 0;
  for (size_t c = r->ep0; c < r->ep1; c++)
    if (!r->done[c]) tmp[m++] = c;
  (void)cnt;
  krn__distribute(r, tmp, m, r->cap);
}

static long krn__pick(krn__run *r, int i) {
  krn__member *m = &r->ms[i];
  switch (r->o.strategy) {
  case KRN_EVEN:
  case KRN_WEIGHTED:
  case KRN_CHECKPOINT:
    if (r->restarting) return -1;
    while (m->lhead < m->ltail) {
      size_t c = m->list[m->lhead++];
      if (!r->done[c] && r->active[c] == 0) return (long)c;
    }
    return -1;
  case KRN_DYNAMIC:
    while (r->qlen) {
      size_t c = r->q[r->qhead];
      r->qhead = (r->qhead + 1) % r->qcap;
      r->qlen--;
      if (!r->done[c] && r->active[c] == 0) return (long)c;
    }
    return -1;
  case KRN_REDUNDANT:
  case KRN_SPECULATIVE: {
    double now = krn_now();
    int nl = 0;
    for (int x = 0; x < r->nm; x++) nl += krn__alive(r, x, now);
    int lim = r->k < nl ? r->k : nl;
    if (lim < 1) lim = 1;
    /* Redundant (eager): join a running chunk that still lacks replicas before starting a fresh
     * one, so every chunk runs on k members at once. Speculative (lazy): fresh chunks first;
     * replicas only when none is left. Lowest index among equals. A member never runs the same
     * chunk twice while another replica of it is running. */
    int eager = r->o.strategy == KRN_REDUNDANT;
    long best = -1;
    int best_act = -1;
    for (size_t c = 0; c < r->n; c++) {
      int a = r->active[c];
      if (r->done[c] || a >= lim) continue;
      if (a > 0 && r->tried[(size_t)i * r->n + c]) continue;
      int better = best < 0 || (eager ? a > best_act : a < best_act);
      if (better) {
        best = (long)c;
        best_act = a;
        if (!eager && a == 0) break;
      }
    }
    return best;
  }
  default: return -1;
  }
}

static int krn__check(void *arg) {
  const krn_ctl *ctl = arg;
  krn__run *r = ctl->run;
  if (krn_now() >= r->ms[ctl->member].fail_at) return KRN_EFAILED;
  if (r->done[ctl->chunk]) return KRN_ECANCEL; /* another replica won */
  if (r->o.strategy == KRN_CHECKPOINT && atomic_load(&r->epoch) != ctl->epoch) return KRN_ECANCEL;
  return 0;
}

static void krn__commit_done(krn__run *r, size_t c, double d) {
  double now = krn_now();
  r->done[c] = 1;
  r->ndone++;
  r->dur[c] = d;
  r->t_done[c] = now;
  if (r->recovering && r->need[c] && --r->nneed == 0) {
    r->recovery_s = now - r->t0 - r->t_fail;
    r->recovering = 0;
  }
  if (r->ndone == r->n) r->t_end = now;
}

/* The cluster detected member i's failure (lock held). `c` is the chunk it held, or -1. */
static void krn__on_failure(krn__run *r, int i, long c) {
  krn__member *m = &r->ms[i];
  m->dead = 1;
  if (c >= 0) r->active[c]--;
  m->cur = -1;
  if (r->ndone == r->n || r->err) return; /* finished before anyone noticed */
  double now = krn_now();
  int nl = 0;
  for (int x = 0; x < r->nm; x++) nl += krn__alive(r, x, now);
  if (nl == 0) {
    r->err = KRN_EFAILED;
    return;
  }
  switch (r->o.strategy) {
  case KRN_EVEN:
  case KRN_WEIGHTED: {
    size_t *tmp = malloc((m->ltail - m->lhead + 1) * sizeof *tmp), cnt = 0;
    if (!tmp) {
      r->err = KRN_ENOMEM;
      return;
    }
    if (c >= 0 && !r->done[c]) tmp[cnt++] = (size_t)c;
    for (size_t x = m->lhead; x < m->ltail; x++)
      if (!r->done[m->list[x]]) tmp[cnt++] = m->list[x];
    m->lhead = m->ltail = 0;
    krn__distribute(r, tmp, cnt, r->o.strategy == KRN_WEIGHTED ? r->cap : NULL);
    free(tmp);
    break;
  }
  case KRN_DYNAMIC:
    if (c >= 0 && !r->done[c]) {
      r->qhead = (r->qhead + r->qcap - 1) % r->qcap;
      r->q[r->qhead] = (size_t)c;
      r->qlen++;
    }
    break;
  case KRN_REDUNDANT:
  case KRN_SPECULATIVE: break; /* the replica count dropped: another member may start one */
  case KRN_CHECKPOINT: {
    /* Roll the epoch back: what was committed since the last checkpoint is lost. */
    atomic_fetch_add(&r->epoch, 1);
    for (size_t x = r->ep0; x < r->ep1; x++)
      if (r->done[x]) {
        r->done[x] = 0;
        r->ndone--;
        r->lost_s += r->dur[x];
        r->lost_n++;
        if (r->need[x]) { /* committed again only once redone: recovery goes on (or resumes) */
          r->nneed++;
          r->recovering = 1;
        }
      }
    r->ep_done = 0;
    for (int x = 0; x < r->nm; x++) r->ms[x].lhead = r->ms[x].ltail = 0;
    r->restarting = 1;
    int gen = ++r->restart_gen;
    while (r->running > 0) pthread_cond_wait(&r->cv, &r->mu); /* cancelled chunks stop */
    if (r->o.restart_s > 0) {
      pthread_mutex_unlock(&r->mu);
      krn__sleep(r->o.restart_s);
      pthread_mutex_lock(&r->mu);
    }
    if (gen == r->restart_gen && !r->err) {
      krn__assign_epoch(r);
      r->restarting = 0;
    }
    break;
  }
  default: break;
  }
}

static void krn__advance_epoch(krn__run *r) {
  while (r->ep_done == r->ep1 - r->ep0 && r->ep1 < r->n) {
    r->ep0 = r->ep1;
    r->ep1 = r->ep0 + r->ep_len < r->n ? r->ep0 + r->ep_len : r->n;
    r->ep_done = 0;
    for (size_t x = r->ep0; x < r->ep1; x++) r->ep_done += r->done[x];
    krn__assign_epoch(r);
  }
}

static void krn__wait(krn__run *r, krn__member *m) {
  if (isinf(m->fail_at)) {
    pthread_cond_wait(&r->cv, &r->mu);
    return;
  }
  /* wake at the failure time at the latest, to stop taking work */
  double t = m->fail_at - krn_now() + 1e-6;
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  double s = (double)ts.tv_sec + 1e-9 * ts.tv_nsec + (t > 0 ? t : 0);
  ts.tv_sec = (time_t)s;
  ts.tv_nsec = (long)((s - (double)ts.tv_sec) * 1e9);
  pthread_cond_timedwait(&r->cv, &r->mu, &ts);
}

static void *krn__member_main(void *arg) {
  krn__member *m = arg;
  krn__run *r = m->run;
  krn_exec *e = r->cl->m[m->idx];
  int staged = r->o.strategy == KRN_REDUNDANT || r->o.strategy == KRN_SPECULATIVE;
  long c = -1;
  pthread_mutex_lock(&r->mu);
  /* all members start together: thread creation must not hand the first chunks to whoever
   * happened to be created first */
  r->ready++;
  pthread_cond_broadcast(&r->cv);
  while (!r->go) pthread_cond_wait(&r->cv, &r->mu);
  for (;;) {
    if (r->err || (r->ndone == r->n && !r->restarting)) break;
    if (krn_now() >= m->fail_at) {
      c = -1;
      goto die;
    }
    c = krn__pick(r, m->idx);
    if (c < 0) {
      krn__wait(r, m);
      continue;
    }
    double now = krn_now();
    if (m->fail_after >= 0 && m->started == m->fail_after) {
      m->fail_at = now; /* the chunk's first check will stop it; it was running at that instant */
      if (r->failures == 0) pthread_cond_broadcast(&r->cv);
    }
    m->started++;
    m->cur = c;
    r->running++;
    r->execs++;
    if (r->active[c]++ == 0) r->since[c] = now;
    if (r->tried) r->tried[(size_t)m->idx * r->n + (size_t)c] = 1;
    m->ctl.chunk = (size_t)c;
    m->ctl.epoch = atomic_load(&r->epoch);
    pthread_mutex_unlock(&r->mu);
    double t0 = krn_now();
    int rc = e->ops->run_chunk(e->ctx, r->job, (size_t)c, staged ? KRN__DST_STAGING : KRN__DST_OUT, NULL, krn__check,
                               &m->ctl);
    double dt = krn_now() - t0;
    pthread_mutex_lock(&r->mu);
    r->running--;
    if (rc == 0) {
      m->ok_n++;
      m->ok_time += dt;
    }
    if (rc == KRN_EFAILED) {
      r->lost_s += dt;
      r->lost_n++;
      goto die;
    }
    m->cur = -1;
    r->active[c]--;
    pthread_cond_broadcast(&r->cv);
    if (rc == KRN_ECANCEL || (rc == 0 && (r->done[c] || m->ctl.epoch != atomic_load(&r->epoch)))) {
      r->lost_s += dt; /* a losing replica, or work of a rolled-back epoch */
      r->lost_n++;
      continue;
    }
    if (rc < 0) {
      if (!r->err) r->err = rc;
      break;
    }
    if (staged && (rc = e->ops->commit(e->ctx, r->job, (size_t)c))) {
      if (!r->err) r->err = rc;
      break;
    }
    krn__commit_done(r, (size_t)c, dt);
    if (r->o.strategy == KRN_CHECKPOINT && (size_t)c >= r->ep0 && (size_t)c < r->ep1) {
      r->ep_done++;
      if (!r->restarting) krn__advance_epoch(r);
    }
  }
  pthread_cond_broadcast(&r->cv);
  pthread_mutex_unlock(&r->mu);
  return NULL;

die:
  /* The member has stopped; the cluster notices detect_s after the failure time. */
  m->failed = 1;
  m->cur = c;
  r->failures++;
  if (r->failures == 1) {
    /* What was done or running at the failure time (not now: other members went on meanwhile).
     * A chunk committed since then counts from its commit; the chunk this member held counts in
     * any case (it may have taken it just after the failure time, before its next check). */
    double f = m->fail_at;
    r->t_fail = f - r->t0;
    r->nneed = 0;
    r->recovery_s = 0;
    for (size_t x = 0; x < r->n; x++) {
      r->need[x] = (long)x == c || ((r->done[x] || r->active[x] > 0) && r->since[x] <= f);
      if (!r->need[x]) continue;
      if (!r->done[x])
        r->nneed++;
      else if (r->t_done[x] - f > r->recovery_s)
        r->recovery_s = r->t_done[x] - f;
    }
    r->recovering = r->nneed > 0;
  }
  pthread_cond_broadcast(&r->cv);
  pthread_mutex_unlock(&r->mu);
  double wake = m->fail_at + r->o.detect_s - krn_now();
  krn__sleep(wake);
  pthread_mutex_lock(&r->mu);
  krn__on_failure(r, m->idx, c);
  pthread_cond_broadcast(&r->cv);
  pthread_mutex_unlock(&r->mu);
  return NULL;
}

static void krn__run_free(krn__run *r) {
  free((void *)r->done);
  free(r->active);
  free(r->tried);
  free(r->dur);
  free(r->since);
  free(r->t_done);
  free(r->q);
  free(r->need);
  for (int i = 0; i < r->nm; i++) free(r->ms[i].list);
  free(r);
}

int krn_cluster_run(krn_cluster *cl, krn_job *job, const krn_run_opts *o, krn_run_result *res) {
  if (!cl || !job || !o || !res || (unsigned)o->strategy >= KRN_NSTRATEGIES) return KRN_EINVAL;
  if ((o->strategy == KRN_WEIGHTED || o->strategy == KRN_CHECKPOINT) && !o->capacity) return KRN_EINVAL;
  int replicated = o->strategy == KRN_REDUNDANT || o->strategy == KRN_SPECULATIVE;
  if (replicated && (o->replicas < 1 || o->replicas > cl->n)) return KRN_EINVAL;
  if (!(o->detect_s >= 0) || !(o->restart_s >= 0)) return KRN_EINVAL;
  memset(res, 0, sizeof *res);
  krn__run *r = calloc(1, sizeof *r);
  if (!r) return KRN_ENOMEM;
  r->cl = cl;
  r->job = job;
  r->o = *o;
  r->nm = cl->n;
  r->k = o->replicas;
  r->n = krn_job_nchunks(job);
  size_t n = r->n;
  r->done = calloc(n, sizeof *r->done);
  r->active = calloc(n, sizeof *r->active);
  r->dur = calloc(n, sizeof *r->dur);
  r->since = calloc(n, sizeof *r->since);
  r->t_done = calloc(n, sizeof *r->t_done);
  r->need = calloc(n, 1);
  r->qcap = n + 1;
  r->q = malloc(r->qcap * sizeof *r->q);
  if (replicated) r->tried = calloc((size_t)r->nm * n, 1);
  int rc = 0;
  if (!r->done || !r->active || !r->dur || !r->since || !r->t_done || !r->need || !r->q || (replicated && !r->tried)) {
    rc = KRN_ENOMEM;
    goto out;
  }
  for (int i = 0; i < r->nm; i++) {
    r->cap[i] = o->capacity ? o->capacity[i] : 1.0;
    krn__member *m = &r->ms[i];
    m->run = r;
    m->idx = i;
    m->cur = -1;
    /* a share can grow by redistribution, but holds each chunk at most once per assignment */
    m->list = malloc((2 * n + 1) * sizeof *m->list);
    if (!m->list) {
      rc = KRN_ENOMEM;
      goto out;
    }
    m->ctl.run = r;
    m->ctl.member = i;
  }
  for (int i = 0; i < r->nm; i++) {
    krn_exec *e = cl->m[i];
    if ((rc = e->ops->prepare(e->ctx, job))) goto out;
  }
  krn_job_reset(job);

  pthread_mutex_init(&r->mu, NULL);
  pthread_condattr_t ca;
  pthread_condattr_init(&ca);
  pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
  pthread_cond_init(&r->cv, &ca);
  pthread_condattr_destroy(&ca);

  for (int i = 0; i < r->nm; i++) {
    r->ms[i].fail_at = INFINITY; /* set at the start, below */
    r->ms[i].fail_after = o->fail_after ? o->fail_after[i] : -1;
  }
  /* initial assignment */
  switch (o->strategy) {
  case KRN_EVEN:
  case KRN_WEIGHTED: {
    for (size_t c = 0; c < n; c++) r->q[c] = c;
    krn__distribute(r, r->q, n, o->strategy == KRN_WEIGHTED ? r->cap : NULL);
    break;
  }
  case KRN_DYNAMIC:
    for (size_t c = 0; c < n; c++) r->q[c] = c;
    r->qhead = 0;
    r->qlen = n;
    break;
  case KRN_CHECKPOINT:
    r->ep_len = o->epoch_chunks ? o->epoch_chunks : (n + 7) / 8;
    if (r->ep_len > n) r->ep_len = n;
    r->ep0 = 0;
    r->ep1 = r->ep_len;
    krn__assign_epoch(r);
    break;
  default: break;
  }
  int started = 0;
  for (int i = 0; i < r->nm; i++) {
    if (pthread_create(&r->ms[i].th, NULL, krn__member_main, &r->ms[i])) {
      pthread_mutex_lock(&r->mu);
      r->err = KRN_ENOMEM; /* the started ones see it once they go */
      pthread_mutex_unlock(&r->mu);
      break;
    }
    started++;
  }
  pthread_mutex_lock(&r->mu);
  while (r->ready < started) pthread_cond_wait(&r->cv, &r->mu);
  r->t0 = krn_now();
  for (int i = 0; i < r->nm; i++)
    if (o->fail_at_s && o->fail_at_s[i] >= 0) r->ms[i].fail_at = r->t0 + o->fail_at_s[i];
  r->go = 1;
  pthread_cond_broadcast(&r->cv);
  pthread_mutex_unlock(&r->mu);
  for (int i = 0; i < started; i++) pthread_join(r->ms[i].th, NULL);
  pthread_cond_destroy(&r->cv);
  pthread_mutex_destroy(&r->mu);
  rc = r->err;
  if (!rc && r->ndone != n) rc = KRN_EFAILED; /* cannot happen unless every member died */
  for (int i = 0; i < r->nm && !rc; i++) {
    krn_exec *e = cl->m[i];
    rc = e->ops->finish(e->ctx, job);
  }
  if (!rc) {
    res->makespan_s = r->t_end - r->t0;
    double fails[KRN_MAX_MEMBERS];
    for (int i = 0; i < r->nm; i++) {
      krn__member *m = &r->ms[i];
      fails[i] = m->failed ? m->fail_at - r->t0 : -1;
      res->capacity[i] = m->ok_n ? (double)m->ok_n / m->ok_time : o->capacity ? o->capacity[i] : 0;
    }
    res->ideal_s = krn_ideal_makespan(n, r->nm, o->reference ? o->reference : res->capacity, fails);
    res->efficiency = res->makespan_s > 0 ? res->ideal_s / res->makespan_s : 0;
    if (o->capacity) res->ideal_prior_s = krn_ideal_makespan(n, r->nm, o->capacity, fails);
    res->work_lost_s = r->lost_s;
    res->chunks_lost = r->lost_n;
    res->recovery_s = r->failures ? (r->recovering ? res->makespan_s - r->t_fail : r->recovery_s) : 0;
    res->failures = r->failures;
    res->executions = r->execs;
  }
out:
  krn__run_free(r);
  return rc;
}
