/* krn_internal.h - what the kernels module's files share (not part of the public API): the job
 * layout (also read by the CUDA file) and the executor interface that the strategies and the
 * per-chunk calls drive. */
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

/* Where a chunk execution writes its span. */
typedef enum krn__dst {
  KRN__DST_OUT = 0, /* the job's output (GPU: the device mirror's output) */
  KRN__DST_STAGING, /* the member's staging buffer (redundant execution: commit copies it) */
  KRN__DST_HOST     /* caller memory on the host (krn_exec_run_chunk) */
} krn__dst;

/* The one executor interface: the clustering strategies (krn_cluster.c) and the per-chunk calls
 * of krn.h (krn_exec_prepare / run_chunk / finish, used by lab workers) both drive a member
 * through these. */
typedef struct krn_exec_ops {
  /* Get ready for a job (staging buffers, device scratch). Called once per run or measurement.
   * A GPU member expects the job in its device's mirror (krn_gpu_upload). */
  int (*prepare)(void *ctx, krn_job *job);
  /* Run chunk c into `where` (host: into `host`, krn_job_chunk_span(c) floats), duty-cycled at
   * the member's speed. Calls yield(arg) between pieces of work when yield is not NULL; on a
   * non-zero answer it stops, overwrites what it wrote of the span with NaN (a lost chunk must
   * never look done; host: the whole of `host`) and returns that answer. */
  int (*run_chunk)(void *ctx, krn_job *job, size_t c, krn__dst where, float *host, krn_yield_fn yield, void *arg);
  /* Copy the staging buffer (holding chunk c) to the job output. */
  int (*commit)(void *ctx, krn_job *job, size_t c);
  /* After a run: make the host output current (GPU: download what chunks wrote to the mirror). */
  int (*finish)(void *ctx, krn_job *job);
  /* New duty cycle in (0, 1] (checked by the caller). */
  void (*set_speed)(void *ctx, double speed);
  void (*destroy)(void *ctx);
} krn_exec_ops;

struct krn_exec {
  const krn_exec_ops *ops;
  void *ctx;
  char name[32];
  char kind[8];   /* "cpu" or "gpu" */
  char desc[192]; /* one line: what it runs on */
  double speed;
  krn_gpu *own; /* krn_exec_open's GPU executors own their device (closed on destroy): prepare
                   uploads the job to its mirror, finish releases the mirror */
};
int krn__exec_new(const char *name, double speed, const krn_exec_ops *ops, void *ctx, krn_exec **out);

/* Duty-cycling: a member of speed s that just computed for `busy` seconds owes
 * busy * (1/s - 1) seconds of idleness (it works for s of each slice). Accumulates the debt in
 * *debt and sleeps it off once it exceeds 200 us (sleeps are coarse). */
void krn__duty_pay(double speed, double busy, double *debt);
void krn__sleep(double seconds);

/* The device mirror is no longer needed (krn_exec_finish of an owning executor): frees it. */
void krn__gpu_release(krn_gpu *g);

#ifdef __cplusplus
}
#endif
#endif
