/* krn_job.c - jobs: random inputs, the chunk decomposition, the double-precision references and
 * the tolerances float arithmetic allows; also the module's small utilities (errors, names,
 * clock). The computations themselves are in krn_cpu.c (CPU twins) and krn_gpu.cu (CUDA). */
#include "kernels/krn_internal.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

const char *krn_strerror(int err) { return spotlab_strerror(err); } /* sim/errors.h */

static const char *const krn__kernel_names[KRN_NKERNELS] = {"triad", "gemm", "mlp"};
const char *krn_kernel_name(krn_kernel k) { return (unsigned)k < KRN_NKERNELS ? krn__kernel_names[k] : "?"; }
int krn_kernel_parse(const char *name, krn_kernel *out) {
  for (int i = 0; i < KRN_NKERNELS; i++)
    if (name && !strcmp(name, krn__kernel_names[i])) {
      *out = (krn_kernel)i;
      return 0;
    }
  return KRN_EINVAL;
}

double krn_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void krn__sleep(double seconds) {
  if (!(seconds > 0)) return;
  struct timespec ts;
  ts.tv_sec = (time_t)seconds;
  ts.tv_nsec = (long)((seconds - (double)ts.tv_sec) * 1e9);
  while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {}
}

void krn__duty_pay(double speed, double busy, double *debt) {
  if (speed >= 1.0 || !(busy > 0)) return;
  /* Duty cycle: working `busy` at duty s takes busy / s of wall time, so idle busy*(1/s - 1). */
  *debt += busy * (1.0 / speed - 1.0);
  if (*debt > 200e-6) {
    double t0 = krn_now();
    krn__sleep(*debt);
    /* Oversleeping (coarse timers, or a loaded machine not giving the core back) is not paid
     * back by working faster later: a weak GPU does not speed up to make up for lost time. */
    *debt -= krn_now() - t0;
    if (*debt < 0) *debt = 0;
  }
}

/* ---- Random inputs: splitmix64 (Steele, Lea & Flood, "Fast splittable pseudorandom number
 * generators", OOPSLA 2014), one stream per array derived from the job seed. ------------------ */
static uint64_t krn__splitmix(uint64_t *s) {
  uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}
/* Uniform in [-scale, scale]: 24 random bits, so every value is exact in float. splitmix64's
 * state after i steps is s0 + i * gamma, so element i is computed directly: the fill is parallel
 * and gives the same values on any number of threads. */
static void krn__fill(float *x, size_t n, uint64_t seed, uint64_t stream, float scale) {
  const uint64_t s0 = seed ^ (0xd1b54a32d192ed03ULL * (stream + 1));
#pragma omp parallel for schedule(static) if (n > 65536)
  for (size_t i = 0; i < n; i++) {
    uint64_t s = s0 + 0x9e3779b97f4a7c15ULL * (uint64_t)i;
    float u = (float)(krn__splitmix(&s) >> 40) * (1.0f / 16777216.0f);
    x[i] = (2.0f * u - 1.0f) * scale;
  }
}

void krn__chunk_items(const krn_job *job, size_t c, size_t *i0, size_t *i1) {
  size_t total = job->kind == KRN_TRIAD ? job->d.n : job->kind == KRN_GEMM ? job->d.m : job->d.batch;
  krn__split(total, job->d.nchunks, c, i0, i1);
}

void krn_job_chunk_span(const krn_job *job, size_t c, size_t *off, size_t *len) {
  if (job->kind == KRN_MLP) {
    *off = c * job->slot;
    *len = job->slot;
    return;
  }
  size_t i0, i1;
  krn__chunk_items(job, c, &i0, &i1);
  size_t w = job->kind == KRN_GEMM ? job->d.p : 1;
  *off = i0 * w;
  *len = (i1 - i0) * w;
}

size_t krn_job_max_chunk_len(const krn_job *job) {
  size_t best = 0, off, len;
  /* Near-equal split: the first and last chunks bound the sizes; check a few to be safe. */
  for (size_t c = 0; c < job->d.nchunks && c < 2; c++) {
    krn_job_chunk_span(job, c, &off, &len);
    if (len > best) best = len;
  }
  krn_job_chunk_span(job, job->d.nchunks - 1, &off, &len);
  if (len > best) best = len;
  return best + (job->kind == KRN_MLP ? 0 : (job->kind == KRN_GEMM ? job->d.p : 1));
}

static int krn__dims_ok(krn_kernel kind, const krn_dims *d) {
  const size_t big = (size_t)1 << 34; /* 64 GiB of floats: more is a typo, not a benchmark */
  size_t items;
  switch (kind) {
  case KRN_TRIAD:
    if (d->n < 1 || d->n > big) return 0;
    items = d->n;
    break;
  case KRN_GEMM:
    if (d->m < 1 || d->k < 1 || d->p < 1 || d->m > 65536 || d->k > 65536 || d->p > 65536) return 0;
    items = d->m;
    break;
  case KRN_MLP:
    if (d->batch < 1 || d->d_in < 1 || d->d_hidden < 1 || d->d_out < 1 || d->batch > (1u << 24) || d->d_in > 16384 ||
        d->d_hidden > 16384 || d->d_out > 16384)
      return 0;
    items = d->batch;
    break;
  default: return 0;
  }
  return d->nchunks >= 1 && d->nchunks <= items && d->nchunks <= (1u << 20);
}

int krn_job_create(krn_kernel kind, const krn_dims *dims, uint64_t seed, krn_job **out) {
  *out = NULL;
  if (!dims || !krn__dims_ok(kind, dims)) return KRN_EINVAL;
  krn_job *j = calloc(1, sizeof *j);
  if (!j) return KRN_ENOMEM;
  j->kind = kind;
  j->d = *dims;
  j->seed = seed;
  const krn_dims *d = &j->d;
  size_t n0 = 0, n1 = 0, nw = 0;
  switch (kind) {
  case KRN_TRIAD:
    n0 = n1 = d->n;
    j->out_len = d->n;
    j->scalar = 1.5f;
    break;
  case KRN_GEMM:
    n0 = d->m * d->k;
    n1 = d->k * d->p;
    j->out_len = d->m * d->p;
    break;
  case KRN_MLP:
    n0 = d->batch * d->d_in;
    n1 = d->batch * d->d_out;
    nw = krn__mlp_nparams(d);
    j->slot = nw + 1;
    j->out_len = d->nchunks * j->slot;
    break;
  default: break;
  }
  j->x0 = malloc(n0 * sizeof(float));
  j->x1 = malloc(n1 * sizeof(float));
  j->out = malloc(j->out_len * sizeof(float));
  if (nw) {
    j->w = malloc(nw * sizeof(float));
    j->grad = calloc(nw, sizeof(float));
  }
  if (!j->x0 || !j->x1 || !j->out || (nw && (!j->w || !j->grad))) {
    krn_job_destroy(j);
    return KRN_ENOMEM;
  }
  krn__fill(j->x0, n0, seed, 0, 1.0f);
  krn__fill(j->x1, n1, seed, 1, 1.0f);
  if (nw) {
    /* Weights uniform in [-1/sqrt(fan_in), 1/sqrt(fan_in)] (LeCun et al., "Efficient
     * BackProp", 1998), biases likewise, so activations stay O(1) at any width. */
    float s1 = 1.0f / sqrtf((float)d->d_in), s2 = 1.0f / sqrtf((float)d->d_hidden);
    size_t o = 0;
    krn__fill(j->w + o, d->d_hidden * d->d_in, seed, 2, s1);
    o += d->d_hidden * d->d_in;
    krn__fill(j->w + o, d->d_hidden, seed, 3, s1);
    o += d->d_hidden;
    krn__fill(j->w + o, d->d_out * d->d_hidden, seed, 4, s2);
    o += d->d_out * d->d_hidden;
    krn__fill(j->w + o, d->d_out, seed, 5, s2);
  }
  krn_job_reset(j);
  *out = j;
  return 0;
}

void krn_job_destroy(krn_job *j) {
  if (!j) return;
  free(j->x0);
  free(j->x1);
  free(j->w);
  free(j->out);
  free(j->grad);
  free(j->ref);
  free(j->bound);
  free(j);
}

krn_kernel krn_job_kind(const krn_job *j) { return j->kind; }
size_t krn_job_nchunks(const krn_job *j) { return j->d.nchunks; }
size_t krn_job_out_len(const krn_job *j) { return j->out_len; }
float *krn_job_out(krn_job *j) { return j->out; }
size_t krn_job_nparams(const krn_job *j) { return j->kind == KRN_MLP ? j->slot - 1 : 0; }
const float *krn_job_grad(const krn_job *j) { return j->grad; }
double krn_job_loss(const krn_job *j) { return j->loss; }

void krn_job_reset(krn_job *j) {
  for (size_t i = 0; i < j->out_len; i++) j->out[i] = NAN;
}

double krn_job_flops(const krn_job *j) {
  const krn_dims *d = &j->d;
  switch (j->kind) {
  case KRN_TRIAD: return 2.0 * (double)d->n;
  case KRN_GEMM: return 2.0 * (double)d->m * (double)d->k * (double)d->p;
  case KRN_MLP: /* forward 2*B*(D*H + H*O); backward: dW1, dW2 and dh, each as large */
    return 6.0 * (double)d->batch * ((double)d->d_in * d->d_hidden + (double)d->d_hidden * d->d_out);
  default: return 0;
  }
}

double krn_job_bytes(const krn_job *j) {
  /* STREAM counting (McCalpin, STREAM benchmark docs): triad moves 3 arrays (read b, c, write a). */
  if (j->kind == KRN_TRIAD) return 3.0 * sizeof(float) * (double)j->d.n;
  if (j->kind == KRN_GEMM)
    return sizeof(float) * ((double)j->d.m * j->d.k + (double)j->d.k * j->d.p + (double)j->d.m * j->d.p);
  return sizeof(float) * ((double)j->d.batch * (j->d.d_in + j->d.d_out) + 2.0 * (j->slot - 1));
}

void krn_job_finish(krn_job *j) {
  if (j->kind != KRN_MLP) return;
  size_t np = j->slot - 1, nc = j->d.nchunks;
  float inv = 1.0f / (float)j->d.batch;
  /* Mean gradient = (sum over chunks, in chunk order, of each sub-batch's summed gradient) / B:
   * a fixed order, so the result does not depend on which member ran which chunk. */
  for (size_t p = 0; p < np; p++) {
    float s = 0.0f;
    for (size_t c = 0; c < nc; c++) s += j->out[c * j->slot + p];
    j->grad[p] = s * inv;
  }
  double l = 0;
  for (size_t c = 0; c < nc; c++) l += j->out[c * j->slot + np];
  j->loss = l / (double)j->d.batch;
}

/* ---- References and tolerances ---------------------------------------------------------------
 * Unit roundoff of float u = 2^-24, and gamma_n = n u / (1 - n u), the constant of the standard
 * rounding-error bounds (Higham, "Accuracy and Stability of Numerical Algorithms", 2nd ed. 2002,
 * Lemma 3.1 and Section 3.5). */
#define KRN_U (1.0 / 16777216.0)
static double krn__gamma(double n) { return n * KRN_U / (1.0 - n * KRN_U); }

/* Rows of C the gemm check covers: all of them up to 2^33 multiply-adds of reference, else every
 * `stride`-th row (a stride below the rows of a chunk, so every chunk is checked). */
static size_t krn__gemm_stride(const krn_job *j) {
  const krn_dims *d = &j->d;
  double work = (double)d->m * (double)d->k * (double)d->p, budget = 8589934592.0;
  size_t s = work <= budget ? 1 : (size_t)ceil(work / budget);
  size_t rows_per_chunk = d->m / d->nchunks;
  if (rows_per_chunk >= 2 && s > rows_per_chunk / 2) s = rows_per_chunk / 2;
  return s < 1 ? 1 : s;
}

static int krn__gemm_ref(krn_job *j) {
  if (j->ref) return 0;
  const krn_dims *d = &j->d;
  size_t stride = krn__gemm_stride(j), nr = (d->m + stride - 1) / stride;
  j->ref = malloc(nr * d->p * sizeof(double));
  j->bound = malloc(nr * d->p * sizeof(double));
  if (!j->ref || !j->bound) {
    free(j->ref);
    free(j->bound);
    j->ref = j->bound = NULL;
    return KRN_ENOMEM;
  }
  /* |fl(AB) - AB| <= gamma_k |A||B| elementwise (Higham 2002, eq. 3.13), k the inner dimension;
   * gamma_{k+1} leaves room for the double reference's own (far smaller) error. */
  double g = krn__gamma((double)d->k + 1.0);
#pragma omp parallel for schedule(dynamic, 1)
  for (size_t r = 0; r < nr; r++) {
    size_t i = r * stride;
    double *row = j->ref + r * d->p, *arow = j->bound + r * d->p;
    for (size_t q = 0; q < d->p; q++) row[q] = arow[q] = 0;
    for (size_t l = 0; l < d->k; l++) {
      double a = j->x0[i * d->k + l], aa = fabs(a);
      const float *b = j->x1 + l * d->p;
      for (size_t q = 0; q < d->p; q++) {
        row[q] += a * b[q];
        arow[q] += aa * fabs((double)b[q]);
      }
    }
    for (size_t q = 0; q < d->p; q++) arow[q] = g * arow[q] + 1e-30;
  }
  return 0;
}

/* The MLP step in double: ref = mean gradient (nparams) then the mean loss. Samples are shared
 * among threads, each with its own accumulator, summed at the end (double: order is harmless). */
static int krn__mlp_ref(krn_job *j) {
  if (j->ref) return 0;
  const krn_dims *d = &j->d;
  const size_t D = d->d_in, H = d->d_hidden, O = d->d_out, np = j->slot - 1;
  j->ref = calloc(np + 1, sizeof(double));
  if (!j->ref) return KRN_ENOMEM;
  const float *W1 = j->w, *b1 = W1 + H * D, *W2 = b1 + H, *b2 = W2 + O * H;
  int oom = 0;
#pragma omp parallel reduction(| : oom)
  {
    double *acc = calloc(np + 1, sizeof(double));
    double *z = malloc(H * sizeof(double)), *h = malloc(H * sizeof(double));
    double *e = malloc(O * sizeof(double)), *dz = malloc(H * sizeof(double));
    if (!acc || !z || !h || !e || !dz) oom = 1;
    double *gW1 = acc, *gb1 = gW1 + H * D, *gW2 = gb1 + H, *gb2 = gW2 + O * H;
#pragma omp for schedule(static)
    for (size_t b = 0; b < d->batch; b++) {
      if (oom) continue;
      const float *x = j->x0 + b * D, *t = j->x1 + b * O;
      for (size_t q = 0; q < H; q++) {
        double s = b1[q];
        for (size_t i = 0; i < D; i++) s += (double)W1[q * D + i] * x[i];
        z[q] = s;
        h[q] = s > 0 ? s : 0;
      }
      for (size_t o = 0; o < O; o++) {
        double s = b2[o];
        for (size_t q = 0; q < H; q++) s += (double)W2[o * H + q] * h[q];
        e[o] = s - t[o];
        acc[np] += 0.5 * e[o] * e[o];
        gb2[o] += e[o];
        for (size_t q = 0; q < H; q++) gW2[o * H + q] += e[o] * h[q];
      }
      for (size_t q = 0; q < H; q++) {
        double s = 0;
        for (size_t o = 0; o < O; o++) s += (double)W2[o * H + q] * e[o];
        dz[q] = z[q] > 0 ? s : 0;
        gb1[q] += dz[q];
        for (size_t i = 0; i < D; i++) gW1[q * D + i] += dz[q] * x[i];
      }
    }
#pragma omp critical
    if (acc && !oom)
      for (size_t p = 0; p <= np; p++) j->ref[p] += acc[p];
    free(acc);
    free(z);
    free(h);
    free(e);
    free(dz);
  }
  if (oom) {
    free(j->ref);
    j->ref = NULL;
    return KRN_ENOMEM;
  }
  for (size_t p = 0; p <= np; p++) j->ref[p] /= (double)d->batch;
  return 0;
}

int krn_job_verify(krn_job *j, double *max_ratio) {
  double worst = 0;
  int bad = 0;
  const krn_dims *d = &j->d;
  if (j->kind == KRN_TRIAD) {
    /* a = b + s c in float: two roundings, |err| <= gamma_2 (|b| + |s c|) (Higham 2002, Lemma
     * 3.1); with a fused multiply-add there is one, which the same bound covers. */
    double g = krn__gamma(2.0);
    for (size_t i = 0; i < d->n; i++) {
      double b = j->x0[i], c = (double)j->scalar * j->x1[i];
      double err = fabs((double)j->out[i] - (b + c)), tol = g * (fabs(b) + fabs(c)) + 1e-30;
      double r = err / tol;
      if (!(r <= 1.0)) bad = 1;
      if (!(r <= worst)) worst = r; /* NaN propagates */
    }
  } else if (j->kind == KRN_GEMM) {
    int rc = krn__gemm_ref(j);
    if (rc) return rc;
    size_t stride = krn__gemm_stride(j), nr = (d->m + stride - 1) / stride;
    for (size_t r = 0; r < nr; r++)
      for (size_t q = 0; q < d->p; q++) {
        size_t x = r * d->p + q;
        double e = fabs((double)j->out[r * stride * d->p + q] - j->ref[x]) / j->bound[x];
        if (!(e <= 1.0)) bad = 1;
        if (!(e <= worst)) worst = e;
      }
  } else {
    int rc = krn__mlp_ref(j);
    if (rc) return rc;
    /* Norm-wise per parameter block: |g - g_ref| <= tol * max|g_ref| with tol = 4 L u,
     * L = d_in + d_hidden + d_out + batch the longest chain of accumulations a gradient entry
     * goes through (first-order error analysis of chained dot products, Higham 2002, §3.5;
     * the factor 4 covers the few extra roundings per stage). A ReLU whose pre-activation is
     * within rounding of 0 may flip between float and double; its effect is of the same order. */
    double tol = 4.0 * (double)(d->d_in + d->d_hidden + d->d_out + d->batch) * KRN_U;
    size_t D = d->d_in, H = d->d_hidden, O = d->d_out;
    size_t start[5] = {0, H * D, H * D + H, H * D + H + O * H, H * D + H + O * H + O};
    for (int blk = 0; blk < 4; blk++) {
      double mx = 0;
      for (size_t p = start[blk]; p < start[blk + 1]; p++) mx = fmax(mx, fabs(j->ref[p]));
      double lim = tol * mx + 1e-30;
      for (size_t p = start[blk]; p < start[blk + 1]; p++) {
        double r = fabs((double)j->grad[p] - j->ref[p]) / lim;
        if (!(r <= 1.0)) bad = 1;
        if (!(r <= worst)) worst = r;
      }
    }
    double rl = fabs(j->loss - j->ref[j->slot - 1]) / (tol * fabs(j->ref[j->slot - 1]) + 1e-30);
    if (!(rl <= 1.0)) bad = 1;
    if (!(rl <= worst)) worst = rl;
  }
  if (max_ratio) *max_ratio = worst;
  return bad ? KRN_EVERIFY : 0;
}
