/* krn_internal.h - what the kernels module's files share (not part of the public API): the job
 * layout (also read by the CUDA file), the executor interface the strategies drive, and the
 * control block through which the cluster tells a running chunk to stop. */
#ifndef KRN_INTERNAL_H
#define KRN_INTERNAL_H

#include "kernels/krn.h"

#ifdef __cplusplus
extern "C" {
#endif

struct krn_job {
  krn_kernel kind;
  krn_dims d; /* sizes, nchunks clamped to a sane range */
  uint64_t seed;
  /* inputs (host) */
  float *x0, *x1; /* triad: b, c; gemm: A [m x k], B [k x p]; mlp: X [batch x d_in],
                             T [batch x d_out] (targets) */
  float *w;       /* mlp parameters: W1 [h x d_in], b1 [h], W2 [o x h], b2 [o] */
  float scalar;   /* triad: s */
  /* output (host) */
  float *out; /* triad: a [n]; gemm: C [m x p]; mlp: nchunks slots of (nparams+1):
                             the sub-batch's summed gradient, then its summed loss */
  size_t out_len;
  size_t slot; /* mlp: nparams + 1 */
  /* finished MLP step */
  float *grad; /* nparams: mean gradient */
  double loss;
  /* cached reference (gemm, mlp) for verification */
  double *ref, *bound;
};

/* MLP parameter offsets inside job->w and a gradient slot. */
static inline size_t krn__mlp_nparams(const krn_dims *d) {
  return d->d_hidden * d->d_in + d->d_hidden + d->d_out * d->d_hidden + d->d_out;
}
/* Row range [r0, r1) of chunk c when `total` items are cut into `nchunks` near-equal pieces. */
static inline void krn__split(size_t total, size_t nchunks, size_t c, size_t *r0, size_t *r1) {
  *r0 = total * c / nchunks;
  *r1 = total * (c + 1) / nchunks;
}
/* Items (triad elements, gemm rows, mlp samples) of chunk c. */
void krn__chunk_items(const krn_job *job, size_t c, size_t *i0, size_t *i1);

/* What the cluster hands a running chunk: check() returns 0 to go on, KRN_EFAILED when the
 * member's failure time has come, KRN_ECANCEL when the execution is no longer wanted. */
typedef struct krn_ctl {
  int (*check)(const struct krn_ctl *ctl);
  void *run; /* the cluster run */
  int member;
  size_t chunk;
  unsigned epoch;
} krn_ctl;

typedef struct krn_exec_ops {
  /* Get ready for a job (staging buffers, device mirror). Called once per run or measurement. */
  int (*prepare)(void *ctx, krn_job *job);
  /* Run chunk c into the job output (staged = 0) or the member's staging buffer (staged = 1).
   * Calls ctl->check between pieces of work when ctl is not NULL; on a non-zero answer it stops,
   * overwrites what it wrote of the span with NaN (a lost chunk must never look done) and
   * returns that answer. */
  int (*run_chunk)(void *ctx, krn_job *job, size_t c, int staged, const krn_ctl *ctl);
  /* Copy the staging buffer (holding chunk c) to the job output. */
  int (*commit)(void *ctx, krn_job *job, size_t c);
  /* After a run: make the host output current (GPU: download) if this member owns it. */
  int (*finish)(void *ctx, krn_job *job);
  void (*destroy)(void *ctx);
} krn_exec_ops;

struct krn_exec {
  const krn_exec_ops *ops;
  void *ctx;
  char name[32];
  double speed;
};
int krn__exec_new(const char *name, double speed, const krn_exec_ops *ops, void *ctx, krn_exec **out);

/* Duty-cycling: a member of speed s that just computed for `busy` seconds owes
 * busy * (1/s - 1) seconds of idleness (it works for s of each slice). Accumulates the debt in
 * *debt and sleeps it off once it exceeds 200 us (sleeps are coarse). */
void krn__duty_pay(double speed, double busy, double *debt);
void krn__sleep(double seconds);

#ifdef __cplusplus
}
#endif
#endif
