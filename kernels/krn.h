/* krn.h - spotlab's kernels: real GPU kernels with OpenMP CPU twins, and an emulated cluster of
 * weak, unreliable GPUs on which clustering strategies are compared.
 *
 * The seeds' central bet is that many weak, unreliable GPUs can be clustered into one dependable
 * resource. This module measures that on real hardware:
 *   - three kernels (streaming triad, tiled SGEMM, one MLP training step), each cut into
 *     idempotent chunks that a CPU twin or a CUDA kernel computes, checked against a
 *     double-precision reference with the tolerance float precision allows;
 *   - executors ("members"): a CPU thread group slowed by duty-cycling, or a CUDA green-context
 *     partition of one GPU (SM partitioning), optionally duty-cycled too; a member can fail at a
 *     chosen time (it stops, what it held is lost);
 *   - five clustering strategies in plain C (even split, capacity-weighted split, dynamic
 *     self-scheduling, k-way redundant execution, checkpoint/restart), driving any members
 *     through one `run_chunk` interface;
 *   - the figures the simulator's cluster model reads (data/calibration/<device>.csv).
 *
 * Errors are negative krn_err codes (krn_strerror). Nothing here reads a global or aborts on
 * user input. Without CUDA or without a device, the GPU calls return KRN_ENODEV.
 */
#ifndef KRN_KRN_H
#define KRN_KRN_H

#include "kernels/krn_split.h"
#include "sim/errors.h"
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Errors -------------------------------------------------------------------------------- */
typedef enum krn_err {
  KRN_OK = 0,
  KRN_ENOMEM = SPOTLAB_ENOMEM,       /* out of memory (host or device) */
  KRN_EINVAL = SPOTLAB_EINVAL,       /* invalid argument */
  KRN_EIO = SPOTLAB_EIO,             /* a file could not be written */
  KRN_ENODEV = SPOTLAB_EKRN_NODEV,   /* no CUDA device, driver, or CUDA support not built */
  KRN_ECUDA = SPOTLAB_EKRN_CUDA,     /* a CUDA call failed */
  KRN_EVERIFY = SPOTLAB_EKRN_VERIFY, /* a result differs from the reference beyond the tolerance */
  KRN_EFAILED = SPOTLAB_EKRN_FAILED, /* a member failed (emulated failure), or every member failed */
  KRN_ECANCEL = SPOTLAB_EKRN_CANCEL  /* a chunk's execution was cancelled (another replica won, or rollback) */
} krn_err;
const char *krn_strerror(int err);

/* ---- Kernels and jobs ------------------------------------------------------------------------
 * A job is one kernel on one set of random inputs, cut into `nchunks` chunks. A chunk writes a
 * disjoint span of the job's float output and depends only on the inputs, so running it twice,
 * on any executor, writes the same values: chunks are idempotent, which is what makes redoing
 * lost work safe. On the CPU the twins are bitwise deterministic whatever the thread count. */
typedef enum krn_kernel { KRN_TRIAD = 0, KRN_GEMM, KRN_MLP, KRN_NKERNELS } krn_kernel;
const char *krn_kernel_name(krn_kernel k); /* "triad", "gemm", "mlp" */
int krn_kernel_parse(const char *name, krn_kernel *out);

typedef struct krn_dims {
  size_t n;                            /* triad: elements (a = b + s*c) */
  size_t m, k, p;                      /* gemm: C[m x p] = A[m x k] B[k x p] */
  size_t batch, d_in, d_hidden, d_out; /* mlp: a 2-layer ReLU MLP, squared loss */
  size_t nchunks;                      /* chunks the job is cut into (triad: ranges, gemm: row blocks,
                               mlp: sub-batches) */
} krn_dims;

typedef struct krn_job krn_job;
/* A job with fresh random inputs (uniform in [-1, 1], from `seed`); output filled with NaN. */
int krn_job_create(krn_kernel kind, const krn_dims *dims, uint64_t seed, krn_job **out);
void krn_job_destroy(krn_job *job);
krn_kernel krn_job_kind(const krn_job *job);
size_t krn_job_nchunks(const krn_job *job);
size_t krn_job_out_len(const krn_job *job);
float *krn_job_out(krn_job *job); /* host output, krn_job_out_len floats */
/* The output span chunk c writes: out[*off .. *off + *len). */
void krn_job_chunk_span(const krn_job *job, size_t c, size_t *off, size_t *len);
size_t krn_job_max_chunk_len(const krn_job *job);
double krn_job_flops(const krn_job *job); /* useful flops of the whole job */
double krn_job_bytes(const krn_job *job); /* compulsory DRAM traffic (triad) */
void krn_job_reset(krn_job *job);         /* output := NaN (a missed chunk shows) */
/* After every chunk ran: the MLP sums its per-chunk gradient slots in chunk order (so the sum
 * is bitwise the same however chunks were scheduled) into the step's gradient and loss. No-op
 * for triad and gemm. */
void krn_job_finish(krn_job *job);
/* Compare the finished output with a double-precision reference on the same inputs, with the
 * tolerance float arithmetic allows (see krn_job.c). *max_ratio (may be NULL) = the largest
 * |error| / tolerance seen (<= 1 passes). Returns 0 or KRN_EVERIFY. */
int krn_job_verify(krn_job *job, double *max_ratio);
/* The finished MLP step: mean loss, and the gradient (length krn_job_nparams). */
size_t krn_job_nparams(const krn_job *job);
const float *krn_job_grad(const krn_job *job);
double krn_job_loss(const krn_job *job);

/* The CPU twin of one chunk: writes the chunk's span into dst (len floats; dst may be the job
 * output at the span's offset, or a staging buffer), with up to nthreads OpenMP threads.
 * Between pieces of work it calls yield(arg) if not NULL; a non-zero return stops the chunk
 * and is returned (the span is then partly written). */
typedef int (*krn_yield_fn)(void *arg);
int krn_cpu_chunk(krn_job *job, size_t c, float *dst, int nthreads, krn_yield_fn yield, void *arg);
/* The whole job with the twin (all chunks, OpenMP over nthreads; 0 = all), then finish. */
int krn_cpu_run(krn_job *job, int nthreads);
/* A plain single-thread loop of the same computation (no blocking, no OpenMP), the yardstick
 * the twins are compared against in the same run. Writes the output and finishes. */
int krn_cpu_plain(krn_job *job);

/* ---- Executors ---------------------------------------------------------------------------------
 * An executor runs chunks of a job: a CPU thread group or a GPU (or a green-context partition of
 * one), slowed by duty-cycling to a speed in (0, 1] (it works for `speed` of each time slice and
 * sleeps the rest). The clustering strategies drive executors as cluster members; a lab worker
 * drives one chunk by chunk through the per-chunk calls below. Both go through the same
 * interface (krn_internal.h, krn_exec_ops), so every path except the device calls runs, and is
 * tested, on the CPU. */
typedef struct krn_exec krn_exec;
/* A CPU member: nthreads OpenMP threads at `speed`. */
int krn_exec_cpu_create(const char *name, double speed, int nthreads, krn_exec **out);
/* An executor from a spec: "cpu" (nthreads OpenMP threads), "gpu" (the whole of CUDA device 0)
 * or "gpu:SMS" (a green-context partition of at least SMS SMs of it; the driver rounds up to its
 * granularity). A GPU executor opens the device itself and owns it (krn_exec_destroy closes it),
 * so one process can hold one without a krn_gpu of its own. Errors: KRN_EINVAL for a bad spec or
 * speed, KRN_ENODEV without CUDA support, a device or green contexts; `msg` (may be NULL) then
 * says why in one line. */
int krn_exec_open(const char *spec, const char *name, double speed, int nthreads, krn_exec **out, char *msg,
                  size_t msglen);
void krn_exec_destroy(krn_exec *e);
const char *krn_exec_name(const krn_exec *e);
const char *krn_exec_kind(const krn_exec *e);     /* "cpu" or "gpu" */
const char *krn_exec_describe(const krn_exec *e); /* e.g. "cpu, 2 threads", "NVIDIA H200, 32 of 132 SMs" */
double krn_exec_speed(const krn_exec *e);
/* A new duty cycle in (0, 1], from the next piece of work on (a `slow` fault). KRN_EINVAL
 * otherwise (the speed is then unchanged). */
int krn_exec_set_speed(krn_exec *e, double speed);
/* Per-chunk use, one job at a time: prepare(job) once (staging; an owning GPU executor uploads
 * the job's inputs to its device mirror here, once per job), then any number of run_chunk, then
 * finish(job) before the job is destroyed or another is prepared.
 * run_chunk computes chunk c of the job into caller memory `dst` (krn_job_chunk_span(c) floats
 * on the host; GPU: computed on the device, copied back), bitwise what krn_cpu_chunk writes on
 * the CPU. Between pieces of work it calls yield(arg) when yield is not NULL; a non-zero answer
 * stops the chunk, fills dst with NaN (a stopped chunk never passes for done) and is returned. */
int krn_exec_prepare(krn_exec *e, krn_job *job);
int krn_exec_run_chunk(krn_exec *e, krn_job *job, size_t c, float *dst, krn_yield_fn yield, void *arg);
int krn_exec_finish(krn_exec *e, krn_job *job);

/* ---- The cluster and its strategies --------------------------------------------------------- */
/* The first three are the work splits (krn_split.h), with their names; the others add redundancy. */
typedef enum krn_strategy {
  KRN_EVEN = KRN_SPLIT_EVEN,         /* static split into equal contiguous shares */
  KRN_WEIGHTED = KRN_SPLIT_WEIGHTED, /* static split proportional to measured capacity */
  KRN_DYNAMIC = KRN_SPLIT_DYNAMIC,   /* self-scheduling from a shared chunk queue */
  KRN_REDUNDANT,                     /* every chunk on k members at once, first result wins, others cancelled */
  KRN_CHECKPOINT,                    /* weighted split in epochs ending in a checkpoint; a failure rolls the
                       epoch back and restarts it on the survivors */
  KRN_SPECULATIVE,                   /* dynamic, plus up to k-1 backup replicas of running chunks once no fresh
                       chunk is left (MapReduce backup tasks) */
  KRN_NSTRATEGIES
} krn_strategy;
const char *krn_strategy_name(krn_strategy s); /* "even", "weighted", ... */
int krn_strategy_parse(const char *name, krn_strategy *out);

#define KRN_MAX_MEMBERS 64

typedef struct krn_run_opts {
  krn_strategy strategy;
  int replicas;            /* KRN_REDUNDANT, KRN_SPECULATIVE: k >= 1 */
  size_t epoch_chunks;     /* KRN_CHECKPOINT: chunks per epoch (0 = nchunks / 8) */
  double detect_s;         /* delay from a failure to its detection (heartbeat timeout) */
  double restart_s;        /* KRN_CHECKPOINT: extra delay to restart after a rollback */
  const double *capacity;  /* per member, chunks/s measured alone (krn_cluster_measure); used
                               by KRN_WEIGHTED/KRN_CHECKPOINT and for the ideal makespan */
  const double *fail_at_s; /* per member, seconds after the start when it fails; < 0 = never;
                               NULL = no failures */
  const double *reference; /* per member chunks/s, or NULL: the capacities the ideal makespan
                               is computed from (e.g. those a dynamic run gave, so that every
                               strategy is measured against one denominator); NULL = this run's
                               own capacities (krn_run_result.capacity) */
  const long *fail_after;  /* per member, or NULL: the member fails during its execution number
                               fail_after + 1 (counting from 1), after its first piece of work;
                               < 0 = never. A deterministic trigger, for tests. */
} krn_run_opts;

typedef struct krn_run_result {
  double makespan_s;                /* start to the last chunk committed */
  double ideal_s;                   /* fluid bound: smallest T with sum_i cap_i * min(T, fail_i) = N,
                               cap_i = opts->reference, or else member i's capacity in this run
                               (see capacity below) */
  double efficiency;                /* ideal_s / makespan_s: what the strategy loses to idleness, lost
                               work and tails, whatever the machine's load */
  double ideal_prior_s;             /* the same bound from opts->capacity (measured beforehand) */
  double capacity[KRN_MAX_MEMBERS]; /* member i's capacity in this run, chunks/s: chunks it
                               completed / the time it spent on them (idle and cancelled time
                               excluded); opts->capacity for a member that completed nothing */
  double work_lost_s;               /* member-seconds spent on executions whose result was discarded */
  size_t chunks_lost;               /* such executions */
  double recovery_s;                /* first failure -> every chunk done or running at that instant is
                               committed again; 0 without failure */
  int failures;                     /* members that failed */
  size_t executions;                /* chunk executions started */
} krn_run_result;

typedef struct krn_cluster krn_cluster;
int krn_cluster_create(krn_exec *const *members, int nmembers, krn_cluster **out);
void krn_cluster_destroy(krn_cluster *cl);
int krn_cluster_size(const krn_cluster *cl);
/* Each member alone runs `chunks_each` chunks of the job (chunk indices cycle), and more until
 * 50 ms have passed (short chunks are noisy); capacity[i] = chunks per second. The job output is
 * left in an undefined state. */
int krn_cluster_measure(krn_cluster *cl, krn_job *job, size_t chunks_each, double *capacity);
/* Run the whole job under a strategy (one thread per member drives it). The output is reset
 * first; on success every chunk is committed (call krn_job_finish, then verify). */
int krn_cluster_run(krn_cluster *cl, krn_job *job, const krn_run_opts *opts, krn_run_result *res);
/* The fluid-bound ideal makespan used above (exposed for tests). */
double krn_ideal_makespan(size_t nchunks, int nmembers, const double *capacity, const double *fail_at_s);

/* ---- GPU (CUDA) ------------------------------------------------------------------------------
 * All return KRN_ENODEV when CUDA support is not built or no device/driver is present; `msg`
 * then says why in one line. The driver API (green contexts) is reached at run time through the
 * runtime's driver entry points, so the binary never needs libcuda to start. */
typedef struct krn_gpu krn_gpu;
typedef struct krn_gpu_info {
  char name[128];
  int sms; /* streaming multiprocessors */
  double mem_gib;
  double mem_bw_peak_gbs;  /* theoretical: 2 * memory clock * bus width (0 if unknown) */
  double fp32_peak_gflops; /* theoretical: SMs * FP32 lanes/SM * 2 * clock (0 if unknown) */
  int green_contexts;      /* 1 if SM partitioning is available */
} krn_gpu_info;
int krn_gpu_open(krn_gpu **out, char *msg, size_t msglen);
void krn_gpu_close(krn_gpu *g);
void krn_gpu_get_info(const krn_gpu *g, krn_gpu_info *info);
/* Copy the job's inputs to the device (one job at a time per krn_gpu). */
int krn_gpu_upload(krn_gpu *g, krn_job *job);
/* Copy the device output back into the job's host output. */
int krn_gpu_download(krn_gpu *g, krn_job *job);
/* The whole job on the whole device, `reps` times after one warm-up; *seconds = best time.
 * impl 0 = spotlab's kernels, 1 = cuBLAS SGEMM (gemm only; KRN_ENODEV if libcublas is absent).
 * The output stays on the device (krn_gpu_download). */
int krn_gpu_run_whole(krn_gpu *g, krn_job *job, int impl, int reps, double *seconds);
/* A GPU member: a green-context partition of at least `sms` SMs (0 = the whole device, plain
 * stream), slowed further to `speed` in (0, 1] by duty-cycling. *sms_got = SMs it received. */
int krn_exec_gpu_create(krn_gpu *g, const char *name, int sms, double speed, krn_exec **out, int *sms_got);

/* ---- Calibration file ------------------------------------------------------------------------
 * data/calibration/<device-slug>.csv, header `key,value,unit,device,note`: the measured
 * parameters the simulator's cluster model reads. */
typedef struct krn_calib_row {
  const char *key; /* e.g. "stream_bw_gbs", "dynamic_efficiency" */
  double value;
  const char *unit;
  const char *note; /* how it was measured (no commas needed; quoted if present) */
} krn_calib_row;
/* Lower-case, [a-z0-9-] only, runs of other characters become one '-'. */
void krn_slug(const char *text, char *out, size_t outlen);
int krn_calib_write(const char *path, const char *device, const krn_calib_row *rows, size_t n);

/* Monotonic seconds (for benchmarks and the cluster). */
double krn_now(void);

#ifdef __cplusplus
}
#endif
#endif
