/* krn_cpu.c - the OpenMP CPU twins of the CUDA kernels, and plain single-thread loops to compare
 * them with.
 *
 * Determinism: every output element is computed by one thread with a fixed order of operations
 * (the gemm inner sum runs over k ascending, the MLP's gradient sums over the chunk's samples in
 * order), so a chunk's result is bitwise the same whatever the thread count or which member ran
 * it. Parallelism is only ever across independent output elements. */
#include "kernels/krn_internal.h"

#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#define KRN_TRIAD_PIECE 65536 /* elements between two yields (~0.8 MB of traffic) */
#define KRN_GEMM_ROWS 4       /* rows of C between two yields */
#define KRN_GEMM_JB 512       /* column block of C kept hot while k runs */

static int krn__yield(krn_yield_fn y, void *arg) { return y ? y(arg) : 0; }

/* a[i] = b[i] + s * c[i] (STREAM triad, McCalpin 1995) */
static int krn__triad_chunk(krn_job *j, size_t c, float *dst, int nt, krn_yield_fn y, void *arg) {
  size_t i0, i1;
  krn__chunk_items(j, c, &i0, &i1);
  const float *restrict b = j->x0 + i0, *restrict cc = j->x1 + i0;
  const float s = j->scalar;
  size_t n = i1 - i0;
  for (size_t p0 = 0; p0 < n; p0 += KRN_TRIAD_PIECE) {
    size_t p1 = p0 + KRN_TRIAD_PIECE < n ? p0 + KRN_TRIAD_PIECE : n;
#pragma omp parallel for num_threads(nt) if (nt > 1) schedule(static)
    for (size_t i = p0; i < p1; i++) dst[i] = b[i] + s * cc[i];
    int rc = krn__yield(y, arg);
    if (rc) return rc;
  }
  return 0;
}

/* C[r0:r1, :] = A[r0:r1, :] B, each element summed over k ascending. */
static void krn__gemm_rows(const krn_job *j, size_t r0, size_t r1, float *dst /* row r0 */) {
  size_t K = j->d.k, P = j->d.p;
  for (size_t jb = 0; jb < P; jb += KRN_GEMM_JB) {
    size_t je = jb + KRN_GEMM_JB < P ? jb + KRN_GEMM_JB : P;
    for (size_t i = r0; i < r1; i++) {
      float *restrict crow = dst + (i - r0) * P;
      const float *restrict arow = j->x0 + i * K;
      for (size_t q = jb; q < je; q++) crow[q] = 0.0f;
      for (size_t l = 0; l < K; l++) {
        const float a = arow[l];
        const float *restrict brow = j->x1 + l * P;
        for (size_t q = jb; q < je; q++) crow[q] += a * brow[q];
      }
    }
  }
}

static int krn__gemm_chunk(krn_job *j, size_t c, float *dst, int nt, krn_yield_fn y, void *arg) {
  size_t r0, r1;
  krn__chunk_items(j, c, &r0, &r1);
  size_t P = j->d.p;
  for (size_t b0 = r0; b0 < r1; b0 += KRN_GEMM_ROWS) {
    size_t b1 = b0 + KRN_GEMM_ROWS < r1 ? b0 + KRN_GEMM_ROWS : r1;
#pragma omp parallel for num_threads(nt) if (nt > 1) schedule(static, 1)
    for (size_t i = b0; i < b1; i++) krn__gemm_rows(j, i, i + 1, dst + (i - r0) * P);
    int rc = krn__yield(y, arg);
    if (rc) return rc;
  }
  return 0;
}

/* One sub-batch of the MLP training step: forward, squared-loss error, backward; writes the
 * sub-batch's summed gradient and summed loss into dst (one slot). The model:
 *   z = W1 x + b1, h = relu(z), y = W2 h + b2, loss = 1/2 |y - t|^2 (per sample)
 *   dL/dW2 = e h^T, dL/db2 = e, dz = (W2^T e) * [z > 0], dL/dW1 = dz x^T, dL/db1 = dz
 * (backpropagation, Rumelhart, Hinton & Williams 1986). */
static int krn__mlp_chunk(krn_job *j, size_t c, float *dst, int nt, krn_yield_fn y, void *arg) {
  size_t s0, s1;
  krn__chunk_items(j, c, &s0, &s1);
  const size_t D = j->d.d_in, H = j->d.d_hidden, O = j->d.d_out, nb = s1 - s0;
  const float *W1 = j->w, *b1 = W1 + H * D, *W2 = b1 + H, *b2 = W2 + O * H;
  float *gW1 = dst, *gb1 = gW1 + H * D, *gW2 = gb1 + H, *gb2 = gW2 + O * H, *gl = gb2 + O;
  float *hz = malloc(nb * (2 * H + O) * sizeof(float)); /* per sample: h [H], dz [H], e [O] */
  if (!hz) return KRN_ENOMEM;
  float *Hs = hz, *DZ = hz + nb * H, *E = hz + 2 * nb * H;
  int rc = 0;
  /* forward and backward to dz, one sample per iteration (independent samples) */
#pragma omp parallel for num_threads(nt) if (nt > 1) schedule(static)
  for (size_t b = 0; b < nb; b++) {
    const float *x = j->x0 + (s0 + b) * D, *t = j->x1 + (s0 + b) * O;
    float *h = Hs + b * H, *dz = DZ + b * H, *e = E + b * O;
    for (size_t q = 0; q < H; q++) {
      float s = b1[q];
      const float *w = W1 + q * D;
      for (size_t i = 0; i < D; i++) s += w[i] * x[i];
      h[q] = s > 0.0f ? s : 0.0f;
      dz[q] = s; /* keep z to mask below */
    }
    for (size_t o = 0; o < O; o++) {
      float s = b2[o];
      const float *w = W2 + o * H;
      for (size_t q = 0; q < H; q++) s += w[q] * h[q];
      e[o] = s - t[o];
    }
    for (size_t q = 0; q < H; q++) {
      float s = 0.0f;
      for (size_t o = 0; o < O; o++) s += W2[o * H + q] * e[o];
      dz[q] = dz[q] > 0.0f ? s : 0.0f;
    }
  }
  if ((rc = krn__yield(y, arg))) goto out;
  /* gradients: each parameter summed over the sub-batch's samples in order */
  const size_t QB = 16; /* hidden rows between two yields */
  for (size_t q0 = 0; q0 < H; q0 += QB) {
    size_t q1 = q0 + QB < H ? q0 + QB : H;
#pragma omp parallel for num_threads(nt) if (nt > 1) schedule(static, 1)
    for (size_t q = q0; q < q1; q++) {
      float *g = gW1 + q * D;
      for (size_t i = 0; i < D; i++) g[i] = 0.0f;
      float gb = 0.0f;
      for (size_t b = 0; b < nb; b++) {
        const float dzq = DZ[b * H + q];
        const float *x = j->x0 + (s0 + b) * D;
        for (size_t i = 0; i < D; i++) g[i] += dzq * x[i];
        gb += dzq;
      }
      gb1[q] = gb;
    }
    if ((rc = krn__yield(y, arg))) goto out;
  }
#pragma omp parallel for num_threads(nt) if (nt > 1) schedule(static)
  for (size_t o = 0; o < O; o++) {
    float *g = gW2 + o * H;
    for (size_t q = 0; q < H; q++) g[q] = 0.0f;
    float gb = 0.0f;
    for (size_t b = 0; b < nb; b++) {
      const float eo = E[b * O + o];
      const float *h = Hs + b * H;
      for (size_t q = 0; q < H; q++) g[q] += eo * h[q];
      gb += eo;
    }
    gb2[o] = gb;
  }
  float l = 0.0f;
  for (size_t b = 0; b < nb; b++)
    for (size_t o = 0; o < O; o++) l += 0.5f * E[b * O + o] * E[b * O + o];
  *gl = l;
  rc = krn__yield(y, arg);
out:
  free(hz);
  return rc;
}

int krn_cpu_chunk(krn_job *j, size_t c, float *dst, int nthreads, krn_yield_fn y, void *arg) {
  if (!j || !dst || c >= j->d.nchunks) return KRN_EINVAL;
  if (nthreads < 1) nthreads = 1;
  switch (j->kind) {
  case KRN_TRIAD: return krn__triad_chunk(j, c, dst, nthreads, y, arg);
  case KRN_GEMM: return krn__gemm_chunk(j, c, dst, nthreads, y, arg);
  case KRN_MLP: return krn__mlp_chunk(j, c, dst, nthreads, y, arg);
  default: return KRN_EINVAL;
  }
}

int krn_cpu_run(krn_job *j, int nthreads) {
  if (!j) return KRN_EINVAL;
  if (nthreads <= 0) nthreads = omp_get_max_threads();
  int rc = 0;
  if (j->kind == KRN_TRIAD) {
    /* One parallel loop over the whole array: the same per-element arithmetic as the chunks. */
    const float *restrict b = j->x0, *restrict cc = j->x1;
    float *restrict a = j->out;
    const float s = j->scalar;
    size_t n = j->d.n;
#pragma omp parallel for num_threads(nthreads) schedule(static)
    for (size_t i = 0; i < n; i++) a[i] = b[i] + s * cc[i];
  } else {
    size_t nc = j->d.nchunks;
#pragma omp parallel for num_threads(nthreads) schedule(dynamic, 1) reduction(min : rc)
    for (size_t c = 0; c < nc; c++) {
      size_t off, len;
      krn_job_chunk_span(j, c, &off, &len);
      int r = krn_cpu_chunk(j, c, j->out + off, 1, NULL, NULL);
      if (r < rc) rc = r;
    }
  }
  if (rc == 0) krn_job_finish(j);
  return rc;
}

int krn_cpu_plain(krn_job *j) {
  if (!j) return KRN_EINVAL;
  const krn_dims *d = &j->d;
  if (j->kind == KRN_TRIAD) {
    for (size_t i = 0; i < d->n; i++) j->out[i] = j->x0[i] + j->scalar * j->x1[i];
  } else if (j->kind == KRN_GEMM) {
    /* textbook i-j-k loop */
    for (size_t i = 0; i < d->m; i++)
      for (size_t q = 0; q < d->p; q++) {
        float s = 0.0f;
        for (size_t l = 0; l < d->k; l++) s += j->x0[i * d->k + l] * j->x1[l * d->p + q];
        j->out[i * d->p + q] = s;
      }
  } else {
    for (size_t c = 0; c < d->nchunks; c++) {
      size_t off, len;
      krn_job_chunk_span(j, c, &off, &len);
      int rc = krn__mlp_chunk(j, c, j->out + off, 1, NULL, NULL);
      if (rc) return rc;
    }
  }
  krn_job_finish(j);
  return 0;
}
