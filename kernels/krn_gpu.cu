/* krn_gpu.cu - the CUDA side of the kernels module: the three kernels (streaming triad, tiled
 * SGEMM, the MLP training step), the device mirror of a job, whole-device runs (and cuBLAS SGEMM
 * for comparison, loaded with dlopen where present), and the GPU member: a green-context
 * partition of the device's SMs that the clustering strategies drive like any other member.
 *
 * No libcuda at link time: the runtime is linked statically (it loads the driver itself) and the
 * driver API functions green contexts need are fetched at run time with
 * cudaGetDriverEntryPointByVersion. Without a driver or a device, krn_gpu_open answers
 * KRN_ENODEV and says why.
 *
 * Chunks compute exactly the spans the CPU twins do (krn__chunk_items), in float, with fused
 * multiply-adds; results are checked against the double reference within the float bound. */
#include "kernels/krn_internal.h"

#include <cuda.h> /* driver API types only (green contexts); no symbol is linked */
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- driver entry points (green contexts) -------------------------------------------------- */
typedef CUresult (*krn__pfn_GetDevResource)(CUdevice, CUdevResource *, CUdevResourceType);
typedef CUresult (*krn__pfn_SmSplit)(CUdevResource *, unsigned int *, const CUdevResource *,
                                     CUdevResource *, unsigned int, unsigned int);
typedef CUresult (*krn__pfn_GenDesc)(CUdevResourceDesc *, CUdevResource *, unsigned int);
typedef CUresult (*krn__pfn_GreenCreate)(CUgreenCtx *, CUdevResourceDesc, CUdevice, unsigned int);
typedef CUresult (*krn__pfn_GreenDestroy)(CUgreenCtx);
typedef CUresult (*krn__pfn_GreenStream)(CUstream *, CUgreenCtx, unsigned int, int);
typedef CUresult (*krn__pfn_CtxFromGreen)(CUcontext *, CUgreenCtx);
typedef CUresult (*krn__pfn_CtxSetCurrent)(CUcontext);
typedef CUresult (*krn__pfn_CtxGetCurrent)(CUcontext *);

/* cuBLAS, loaded at run time (its C API; handles are opaque pointers). */
typedef int (*krn__pfn_cublasCreate)(void **);
typedef int (*krn__pfn_cublasDestroy)(void *);
typedef int (*krn__pfn_cublasSetStream)(void *, cudaStream_t);
typedef int (*krn__pfn_cublasSgemm)(void *, int, int, int, int, int, const float *, const float *,
                                    int, const float *, int, const float *, float *, int);

struct krn_gpu {
  int dev;
  krn_gpu_info info;
  cudaStream_t stream;            /* whole-device work, primary context */
  /* driver API */
  krn__pfn_GetDevResource getres;
  krn__pfn_SmSplit split;
  krn__pfn_GenDesc gendesc;
  krn__pfn_GreenCreate gcreate;
  krn__pfn_GreenDestroy gdestroy;
  krn__pfn_GreenStream gstream;
  krn__pfn_CtxFromGreen ctxfrom;
  krn__pfn_CtxSetCurrent setcur;
  krn__pfn_CtxGetCurrent getcur;
  CUdevResource remaining;        /* SMs not yet given to a partition */
  int remaining_init;
  /* the job mirror */
  krn_job *job;
  int stale;                      /* the device output changed since the last download */
  float *d_x0, *d_x1, *d_w, *d_out;
  /* cuBLAS */
  void *cublas_lib, *cublas;
  krn__pfn_cublasSgemm sgemm;
  krn__pfn_cublasSetStream setstream;
  krn__pfn_cublasDestroy cdestroy;
};

#define KRN_CU(call)                                                                               \
  do {                                                                                             \
    cudaError_t e_ = (call);                                                                       \
    if (e_ != cudaSuccess) {                                                                       \
      fprintf(stderr, "spotlab kernels: %s:%d: %s: %s\n", __FILE__, __LINE__, #call,              \
              cudaGetErrorString(e_));                                                             \
      return e_ == cudaErrorMemoryAllocation ? KRN_ENOMEM : KRN_ECUDA;                             \
    }                                                                                              \
  } while (0)

/* ---- kernels ---------------------------------------------------------------------------------- */
/* a = b + s c (STREAM triad, McCalpin 1995): float4 when the spans are 16-byte aligned. */
__global__ void krn__k_triad4(float4 *__restrict__ a, const float4 *__restrict__ b,
                              const float4 *__restrict__ c, float s, size_t n4) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n4; i += (size_t)gridDim.x * blockDim.x) {
    float4 x = b[i], y = c[i], r;
    r.x = fmaf(s, y.x, x.x);
    r.y = fmaf(s, y.y, x.y);
    r.z = fmaf(s, y.z, x.z);
    r.w = fmaf(s, y.w, x.w);
    a[i] = r;
  }
}
__global__ void krn__k_triad1(float *__restrict__ a, const float *__restrict__ b,
                              const float *__restrict__ c, float s, size_t n) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
    a[i] = fmaf(s, c[i], b[i]);
}

/* C [M x N] = A [M x K] B [K x N], row-major. 64x64 tiles of C per block of 256 threads, each
 * thread 4x4 outputs (rows ty + 16 i, columns tx + 16 j: conflict-free shared reads, coalesced
 * writes), K in steps of 16 staged through shared memory (the classic tiling of Volkov & Demmel,
 * "Benchmarking GPUs to tune dense linear algebra", SC 2008). */
#define KRN_TM 64
#define KRN_TK 16
__global__ void __launch_bounds__(256) krn__k_sgemm(int M, int N, int K, const float *__restrict__ A,
                                                  const float *__restrict__ B, float *__restrict__ C) {
  __shared__ float As[KRN_TK][KRN_TM + 4];
  __shared__ float Bs[KRN_TK][KRN_TM];
  const int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
  const int row0 = blockIdx.y * KRN_TM, col0 = blockIdx.x * KRN_TM;
  float acc[4][4];
#pragma unroll
  for (int i = 0; i < 4; i++)
#pragma unroll
    for (int j = 0; j < 4; j++) acc[i][j] = 0.0f;
  for (int k0 = 0; k0 < K; k0 += KRN_TK) {
#pragma unroll
    for (int l = 0; l < 4; l++) {
      int idx = threadIdx.x + l * 256;
      int r = idx / KRN_TK, c = idx % KRN_TK; /* A tile: 64 rows x 16 k */
      int gr = row0 + r, gc = k0 + c;
      As[c][r] = (gr < M && gc < K) ? A[(size_t)gr * K + gc] : 0.0f;
      int rb = idx / KRN_TM, cb = idx % KRN_TM; /* B tile: 16 k x 64 columns */
      int gk = k0 + rb, gn = col0 + cb;
      Bs[rb][cb] = (gk < K && gn < N) ? B[(size_t)gk * N + gn] : 0.0f;
    }
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < KRN_TK; kk++) {
      float a[4], b[4];
#pragma unroll
      for (int i = 0; i < 4; i++) a[i] = As[kk][ty + 16 * i];
#pragma unroll
      for (int j = 0; j < 4; j++) b[j] = Bs[kk][tx + 16 * j];
#pragma unroll
      for (int i = 0; i < 4; i++)
#pragma unroll
        for (int j = 0; j < 4; j++) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
    }
    __syncthreads();
  }
#pragma unroll
  for (int i = 0; i < 4; i++) {
    int r = row0 + ty + 16 * i;
    if (r >= M) continue;
#pragma unroll
    for (int j = 0; j < 4; j++) {
      int c = col0 + tx + 16 * j;
      if (c < N) C[(size_t)r * N + c] = acc[i][j];
    }
  }
}

/* MLP sub-batch (see krn_cpu.c for the formulas): one thread per output value, sums in the same
 * order as the twin. */
__global__ void krn__k_mlp_fwd1(int nb, int D, int H, const float *__restrict__ X, const float *__restrict__ W1,
                                const float *__restrict__ b1, float *__restrict__ Hs, float *__restrict__ Z) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= nb * H) return;
  int b = t / H, q = t % H;
  const float *x = X + (size_t)b * D, *w = W1 + (size_t)q * D;
  float s = b1[q];
  for (int i = 0; i < D; i++) s = fmaf(w[i], x[i], s);
  Hs[t] = s > 0.0f ? s : 0.0f;
  Z[t] = s;
}
__global__ void krn__k_mlp_fwd2(int nb, int H, int O, const float *__restrict__ Hs, const float *__restrict__ W2,
                                const float *__restrict__ b2, const float *__restrict__ T, float *__restrict__ E) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= nb * O) return;
  int b = t / O, o = t % O;
  const float *h = Hs + (size_t)b * H, *w = W2 + (size_t)o * H;
  float s = b2[o];
  for (int q = 0; q < H; q++) s = fmaf(w[q], h[q], s);
  E[t] = s - T[(size_t)b * O + o];
}
__global__ void krn__k_mlp_bwd(int nb, int H, int O, const float *__restrict__ W2, const float *__restrict__ E,
                               float *__restrict__ Z) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= nb * H) return;
  int b = t / H, q = t % H;
  const float *e = E + (size_t)b * O;
  float s = 0.0f;
  for (int o = 0; o < O; o++) s = fmaf(W2[(size_t)o * H + q], e[o], s);
  Z[t] = Z[t] > 0.0f ? s : 0.0f;
}
/* G [R x C] = sum over samples b of L[b][r] * Rm[b][c]; bias[r] = sum_b L[b][r]. */
__global__ void krn__k_mlp_grad(int nb, int R, int Cc, const float *__restrict__ L, const float *__restrict__ Rm,
                                int ldr, float *__restrict__ G, float *__restrict__ bias) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t < R * Cc) {
    int r = t / Cc, c = t % Cc;
    float s = 0.0f;
    for (int b = 0; b < nb; b++) s = fmaf(L[(size_t)b * R + r], Rm[(size_t)b * ldr + c], s);
    G[t] = s;
  } else if (t < R * Cc + R) {
    int r = t - R * Cc;
    float s = 0.0f;
    for (int b = 0; b < nb; b++) s += L[(size_t)b * R + r];
    bias[r] = s;
  }
}
__global__ void krn__k_mlp_loss(int n, const float *__restrict__ E, float *__restrict__ out) {
  __shared__ float part[256];
  float s = 0.0f;
  for (int i = threadIdx.x; i < n; i += 256) s += 0.5f * E[i] * E[i];
  part[threadIdx.x] = s;
  __syncthreads();
  for (int w = 128; w > 0; w >>= 1) {
    if (threadIdx.x < w) part[threadIdx.x] += part[threadIdx.x + w];
    __syncthreads();
  }
  if (threadIdx.x == 0) *out = part[0];
}

static unsigned krn__blocks(size_t work, int per_block) {
  size_t b = (work + (size_t)per_block - 1) / (size_t)per_block;
  return (unsigned)(b < 1 ? 1 : b > 0x7fffffff ? 0x7fffffff : b);
}

/* Launch chunk c of the mirrored job into dst on stream st. sms bounds the grid of the
 * grid-stride kernels. scratch: nb * (2H + O) floats for the MLP. */
static int krn__launch_chunk(krn_gpu *g, krn_job *j, size_t c, float *dst, cudaStream_t st, int sms,
                             float *scratch) {
  size_t i0, i1;
  krn__chunk_items(j, c, &i0, &i1);
  const krn_dims *d = &j->d;
  if (j->kind == KRN_TRIAD) {
    size_t n = i1 - i0;
    const float *b = g->d_x0 + i0, *cc = g->d_x1 + i0;
    unsigned cap = (unsigned)(sms > 0 ? sms : g->info.sms) * 8u;
    if (((uintptr_t)dst | (uintptr_t)b | (uintptr_t)cc) % 16 == 0) {
      size_t n4 = n / 4;
      if (n4) {
        unsigned nbk = krn__blocks(n4, 256);
        krn__k_triad4<<<nbk < cap ? nbk : cap, 256, 0, st>>>((float4 *)dst, (const float4 *)b,
                                                             (const float4 *)cc, j->scalar, n4);
      }
      if (n % 4)
        krn__k_triad1<<<1, 32, 0, st>>>(dst + 4 * n4, b + 4 * n4, cc + 4 * n4, j->scalar, n % 4);
    } else {
      unsigned nbk = krn__blocks(n, 256);
      krn__k_triad1<<<nbk < cap ? nbk : cap, 256, 0, st>>>(dst, b, cc, j->scalar, n);
    }
  } else if (j->kind == KRN_GEMM) {
    int rows = (int)(i1 - i0);
    dim3 grid((unsigned)((d->p + KRN_TM - 1) / KRN_TM), (unsigned)((rows + KRN_TM - 1) / KRN_TM));
    krn__k_sgemm<<<grid, 256, 0, st>>>(rows, (int)d->p, (int)d->k, g->d_x0 + i0 * d->k, g->d_x1, dst);
  } else {
    int nb = (int)(i1 - i0), D = (int)d->d_in, H = (int)d->d_hidden, O = (int)d->d_out;
    const float *X = g->d_x0 + i0 * D, *T = g->d_x1 + i0 * O;
    const float *W1 = g->d_w, *b1 = W1 + (size_t)H * D, *W2 = b1 + H, *b2 = W2 + (size_t)O * H;
    float *Hs = scratch, *Z = scratch + (size_t)nb * H, *E = scratch + 2 * (size_t)nb * H;
    float *gW1 = dst, *gb1 = gW1 + (size_t)H * D, *gW2 = gb1 + H, *gb2 = gW2 + (size_t)O * H, *gl = gb2 + O;
    krn__k_mlp_fwd1<<<krn__blocks((size_t)nb * H, 256), 256, 0, st>>>(nb, D, H, X, W1, b1, Hs, Z);
    krn__k_mlp_fwd2<<<krn__blocks((size_t)nb * O, 256), 256, 0, st>>>(nb, H, O, Hs, W2, b2, T, E);
    krn__k_mlp_bwd<<<krn__blocks((size_t)nb * H, 256), 256, 0, st>>>(nb, H, O, W2, E, Z);
    krn__k_mlp_grad<<<krn__blocks((size_t)H * D + H, 256), 256, 0, st>>>(nb, H, D, Z, X, D, gW1, gb1);
    krn__k_mlp_grad<<<krn__blocks((size_t)O * H + O, 256), 256, 0, st>>>(nb, O, H, E, Hs, H, gW2, gb2);
    krn__k_mlp_loss<<<1, 256, 0, st>>>(nb * O, E, gl);
  }
  KRN_CU(cudaGetLastError());
  return 0;
}

static size_t krn__scratch_len(const krn_job *j) {
  if (j->kind != KRN_MLP) return 0;
  size_t most = (j->d.batch + j->d.nchunks - 1) / j->d.nchunks + 1;
  return most * (2 * j->d.d_hidden + j->d.d_out);
}

/* ---- the device --------------------------------------------------------------------------------- */
extern "C" int krn_gpu_open(krn_gpu **out, char *msg, size_t msglen) {
  *out = NULL;
  int n = 0;
  cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess || n < 1) {
    if (msg && msglen)
      snprintf(msg, msglen, "no CUDA device (%s)", e != cudaSuccess ? cudaGetErrorString(e) : "none found");
    cudaGetLastError(); /* clear the sticky-free error so later calls start clean */
    return KRN_ENODEV;
  }
  krn_gpu *g = (krn_gpu *)calloc(1, sizeof *g);
  if (!g) return KRN_ENOMEM;
  g->dev = 0;
  if (cudaSetDevice(0) != cudaSuccess || cudaFree(0) != cudaSuccess ||
      cudaStreamCreateWithFlags(&g->stream, cudaStreamNonBlocking) != cudaSuccess) {
    if (msg && msglen) snprintf(msg, msglen, "CUDA device 0 cannot be initialised (%s)", cudaGetErrorString(cudaGetLastError()));
    free(g);
    return KRN_ENODEV;
  }
  cudaDeviceProp p;
  cudaGetDeviceProperties(&p, 0);
  snprintf(g->info.name, sizeof g->info.name, "%.127s", p.name);
  g->info.sms = p.multiProcessorCount;
  g->info.mem_gib = (double)p.totalGlobalMem / (1024.0 * 1024.0 * 1024.0);
  int mclk = 0, bus = 0, clk = 0;
  cudaDeviceGetAttribute(&mclk, cudaDevAttrMemoryClockRate, 0);
  cudaDeviceGetAttribute(&bus, cudaDevAttrGlobalMemoryBusWidth, 0);
  cudaDeviceGetAttribute(&clk, cudaDevAttrClockRate, 0);
  /* Peak DRAM bandwidth = 2 (double data rate) x memory clock x bus width in bytes. */
  g->info.mem_bw_peak_gbs = 2.0 * mclk * 1e3 * (bus / 8.0) * 1e-9;
  /* FP32 lanes per SM: 128 on compute capability 8.6, 8.9 and 9.0, 64 on 7.x and 8.0 (CUDA C++
   * Programming Guide, "Arithmetic Instructions" throughput table); 2 flops per FMA. */
  int lanes = (p.major == 9 || (p.major == 8 && p.minor >= 6)) ? 128 : (p.major == 7 || p.major == 8) ? 64 : 0;
  g->info.fp32_peak_gflops = (double)p.multiProcessorCount * lanes * 2.0 * clk * 1e3 * 1e-9;
  /* Driver entry points for green contexts (CUDA 12.4+ driver). */
  struct { const char *name; void **fn; } syms[] = {
      {"cuDeviceGetDevResource", (void **)&g->getres},  {"cuDevSmResourceSplitByCount", (void **)&g->split},
      {"cuDevResourceGenerateDesc", (void **)&g->gendesc}, {"cuGreenCtxCreate", (void **)&g->gcreate},
      {"cuGreenCtxDestroy", (void **)&g->gdestroy},     {"cuGreenCtxStreamCreate", (void **)&g->gstream},
      {"cuCtxFromGreenCtx", (void **)&g->ctxfrom},      {"cuCtxSetCurrent", (void **)&g->setcur},
      {"cuCtxGetCurrent", (void **)&g->getcur}};
  int ok = 1;
  for (size_t i = 0; i < sizeof syms / sizeof syms[0]; i++) {
    cudaDriverEntryPointQueryResult q;
    if (cudaGetDriverEntryPointByVersion(syms[i].name, syms[i].fn, CUDA_VERSION, cudaEnableDefault, &q) != cudaSuccess ||
        q != cudaDriverEntryPointSuccess || !*syms[i].fn)
      ok = 0;
  }
  cudaGetLastError();
  g->info.green_contexts = ok;
  *out = g;
  return 0;
}

static void krn__gpu_free_job(krn_gpu *g) {
  cudaFree(g->d_x0);
  cudaFree(g->d_x1);
  cudaFree(g->d_w);
  cudaFree(g->d_out);
  g->d_x0 = g->d_x1 = g->d_w = g->d_out = NULL;
  g->job = NULL;
}

extern "C" void krn__gpu_release(krn_gpu *g) {
  if (!g) return;
  cudaDeviceSynchronize();
  krn__gpu_free_job(g);
  g->stale = 0;
}

extern "C" void krn_gpu_close(krn_gpu *g) {
  if (!g) return;
  krn__gpu_free_job(g);
  if (g->cublas && g->cdestroy) g->cdestroy(g->cublas);
  if (g->cublas_lib) dlclose(g->cublas_lib);
  cudaStreamDestroy(g->stream);
  free(g);
}

extern "C" void krn_gpu_get_info(const krn_gpu *g, krn_gpu_info *info) { *info = g->info; }

extern "C" int krn_gpu_upload(krn_gpu *g, krn_job *j) {
  if (!g || !j) return KRN_EINVAL;
  krn__gpu_free_job(g);
  size_t n0 = 0, n1 = 0, nw = 0;
  const krn_dims *d = &j->d;
  switch (j->kind) {
  case KRN_TRIAD: n0 = n1 = d->n; break;
  case KRN_GEMM: n0 = d->m * d->k; n1 = d->k * d->p; break;
  default: n0 = d->batch * d->d_in; n1 = d->batch * d->d_out; nw = j->slot - 1; break;
  }
  KRN_CU(cudaMalloc((void **)&g->d_x0, n0 * sizeof(float)));
  KRN_CU(cudaMalloc((void **)&g->d_x1, n1 * sizeof(float)));
  if (nw) KRN_CU(cudaMalloc((void **)&g->d_w, nw * sizeof(float)));
  KRN_CU(cudaMalloc((void **)&g->d_out, j->out_len * sizeof(float)));
  KRN_CU(cudaMemcpy(g->d_x0, j->x0, n0 * sizeof(float), cudaMemcpyHostToDevice));
  KRN_CU(cudaMemcpy(g->d_x1, j->x1, n1 * sizeof(float), cudaMemcpyHostToDevice));
  if (nw) KRN_CU(cudaMemcpy(g->d_w, j->w, nw * sizeof(float), cudaMemcpyHostToDevice));
  KRN_CU(cudaMemset(g->d_out, 0xff, j->out_len * sizeof(float))); /* all-ones bits: NaN */
  g->job = j;
  return 0;
}

extern "C" int krn_gpu_download(krn_gpu *g, krn_job *j) {
  if (!g || g->job != j) return KRN_EINVAL;
  KRN_CU(cudaDeviceSynchronize());
  KRN_CU(cudaMemcpy(j->out, g->d_out, j->out_len * sizeof(float), cudaMemcpyDeviceToHost));
  return 0;
}

static int krn__cublas_load(krn_gpu *g) {
  if (g->cublas) return 0;
  const char *names[] = {"libcublas.so.13", "libcublas.so", "/usr/local/cuda/lib64/libcublas.so.13",
                         "/usr/local/cuda/lib64/libcublas.so"};
  for (size_t i = 0; i < 4 && !g->cublas_lib; i++) g->cublas_lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
  if (!g->cublas_lib) return KRN_ENODEV;
  krn__pfn_cublasCreate create = (krn__pfn_cublasCreate)dlsym(g->cublas_lib, "cublasCreate_v2");
  g->cdestroy = (krn__pfn_cublasDestroy)dlsym(g->cublas_lib, "cublasDestroy_v2");
  g->setstream = (krn__pfn_cublasSetStream)dlsym(g->cublas_lib, "cublasSetStream_v2");
  g->sgemm = (krn__pfn_cublasSgemm)dlsym(g->cublas_lib, "cublasSgemm_v2");
  if (!create || !g->cdestroy || !g->setstream || !g->sgemm || create(&g->cublas) != 0) {
    g->cublas = NULL;
    return KRN_ENODEV;
  }
  g->setstream(g->cublas, g->stream);
  return 0;
}

extern "C" int krn_gpu_run_whole(krn_gpu *g, krn_job *j, int impl, int reps, double *seconds) {
  if (!g || g->job != j || reps < 1 || !seconds) return KRN_EINVAL;
  if (impl == 1 && (j->kind != KRN_GEMM)) return KRN_EINVAL;
  if (impl == 1 && krn__cublas_load(g)) return KRN_ENODEV;
  float *scratch = NULL;
  size_t sl = krn__scratch_len(j);
  if (sl) KRN_CU(cudaMalloc((void **)&scratch, sl * sizeof(float)));
  cudaEvent_t e0, e1;
  KRN_CU(cudaEventCreate(&e0));
  KRN_CU(cudaEventCreate(&e1));
  double best = INFINITY;
  int rc = 0;
  for (int r = 0; r <= reps && !rc; r++) { /* r = 0: warm-up */
    cudaEventRecord(e0, g->stream);
    if (impl == 1) {
      /* Row-major C = A B is column-major C^T = B^T A^T: swap the operands (cuBLAS docs, §2.1). */
      const float one = 1.0f, zero = 0.0f;
      const krn_dims *d = &j->d;
      if (g->sgemm(g->cublas, 0, 0, (int)d->p, (int)d->m, (int)d->k, &one, g->d_x1, (int)d->p, g->d_x0,
                   (int)d->k, &zero, g->d_out, (int)d->p) != 0)
        rc = KRN_ECUDA;
    } else if (j->kind == KRN_MLP) {
      for (size_t c = 0; c < j->d.nchunks && !rc; c++) {
        size_t off, len;
        krn_job_chunk_span(j, c, &off, &len);
        rc = krn__launch_chunk(g, j, c, g->d_out + off, g->stream, 0, scratch);
      }
    } else {
      /* the whole job as one chunk-equivalent launch: same spans, one kernel */
      krn_job whole = *j;
      whole.d.nchunks = 1;
      rc = krn__launch_chunk(g, &whole, 0, g->d_out, g->stream, 0, NULL);
    }
    cudaEventRecord(e1, g->stream);
    if (cudaEventSynchronize(e1) != cudaSuccess) rc = KRN_ECUDA;
    float ms = 0;
    cudaEventElapsedTime(&ms, e0, e1);
    if (r > 0 && ms * 1e-3 < best) best = ms * 1e-3;
  }
  cudaEventDestroy(e0);
  cudaEventDestroy(e1);
  cudaFree(scratch);
  *seconds = best;
  return rc;
}

/* ---- the GPU member ------------------------------------------------------------------------------ */
typedef struct krn__gx {
  krn_gpu *g;
  int sms;                /* 0: whole device, primary context */
  double speed, debt;
  CUgreenCtx gctx;
  CUcontext ctx;
  cudaStream_t stream;
  float *staging, *scratch;
  size_t staging_len, scratch_len;
} krn__gx;

/* Runtime calls from this thread go to the partition's context until krn__gx_unbind restores
 * the previous one (the main thread must get its primary context back: what it allocates later
 * must not belong to a partition that is destroyed first). */
static int krn__gx_bind(krn__gx *m, CUcontext *prev) {
  *prev = NULL;
  if (!m->ctx) return 0;
  if (m->g->getcur(prev) != CUDA_SUCCESS || m->g->setcur(m->ctx) != CUDA_SUCCESS) return KRN_ECUDA;
  return 0;
}
static void krn__gx_unbind(krn__gx *m, CUcontext prev) {
  if (m->ctx) m->g->setcur(prev);
}

static int krn__gx_prepare(void *ctx, krn_job *j) {
  krn__gx *m = (krn__gx *)ctx;
  if (m->g->job != j) return KRN_EINVAL; /* krn_gpu_upload the job first */
  size_t need = krn_job_max_chunk_len(j), sl = krn__scratch_len(j);
  if (need > m->staging_len) {
    cudaFree(m->staging);
    m->staging = NULL;
    KRN_CU(cudaMalloc((void **)&m->staging, need * sizeof(float)));
    m->staging_len = need;
  }
  if (sl > m->scratch_len) {
    cudaFree(m->scratch);
    m->scratch = NULL;
    KRN_CU(cudaMalloc((void **)&m->scratch, sl * sizeof(float)));
    m->scratch_len = sl;
  }
  KRN_CU(cudaMemset(m->g->d_out, 0xff, j->out_len * sizeof(float))); /* a missed chunk shows */
  m->debt = 0;
  return 0;
}

/* Fills a host span with NaN: what a stopped execution leaves in caller memory. */
static void krn__nan_fill(float *p, size_t n) {
  for (size_t i = 0; i < n; i++) p[i] = NAN;
}

/* One chunk on the partition's stream, then (host) the span copied back; the duty cycle is paid
 * for the whole of it. The two yields bracket the only piece of work a launch is. */
static int krn__gx_run_chunk_bound(krn__gx *m, krn_job *j, size_t c, krn__dst where, float *host, krn_yield_fn yield,
                                   void *arg) {
  size_t off, len;
  krn_job_chunk_span(j, c, &off, &len);
  float *dst = where == KRN__DST_OUT ? m->g->d_out + off : m->staging;
  int rc;
  if (yield && (rc = yield(arg))) { /* nothing written yet */
    if (where == KRN__DST_HOST) krn__nan_fill(host, len);
    return rc;
  }
  double t0 = krn_now();
  if ((rc = krn__launch_chunk(m->g, j, c, dst, m->stream, m->sms, m->scratch))) return rc;
  if (where == KRN__DST_HOST)
    KRN_CU(cudaMemcpyAsync(host, dst, len * sizeof(float), cudaMemcpyDeviceToHost, m->stream));
  KRN_CU(cudaStreamSynchronize(m->stream));
  if (where == KRN__DST_OUT) m->g->stale = 1;
  krn__duty_pay(m->speed, krn_now() - t0, &m->debt);
  if (yield && (rc = yield(arg))) {
    /* the result is lost with the member: never let it pass for done */
    if (where == KRN__DST_HOST) {
      krn__nan_fill(host, len);
    } else {
      cudaMemsetAsync(dst, 0xff, len * sizeof(float), m->stream);
      cudaStreamSynchronize(m->stream);
    }
    return rc;
  }
  return 0;
}

static int krn__gx_run_chunk(void *ctx, krn_job *j, size_t c, krn__dst where, float *host, krn_yield_fn yield,
                             void *arg) {
  krn__gx *m = (krn__gx *)ctx;
  CUcontext prev;
  int rc = krn__gx_bind(m, &prev);
  if (rc) return rc;
  rc = krn__gx_run_chunk_bound(m, j, c, where, host, yield, arg);
  krn__gx_unbind(m, prev);
  return rc;
}

static int krn__gx_commit_bound(krn__gx *m, krn_job *j, size_t c) {
  size_t off, len;
  krn_job_chunk_span(j, c, &off, &len);
  KRN_CU(cudaMemcpyAsync(m->g->d_out + off, m->staging, len * sizeof(float), cudaMemcpyDeviceToDevice, m->stream));
  KRN_CU(cudaStreamSynchronize(m->stream));
  m->g->stale = 1;
  return 0;
}

static int krn__gx_commit(void *ctx, krn_job *j, size_t c) {
  krn__gx *m = (krn__gx *)ctx;
  CUcontext prev;
  int rc = krn__gx_bind(m, &prev);
  if (rc) return rc;
  rc = krn__gx_commit_bound(m, j, c);
  krn__gx_unbind(m, prev);
  return rc;
}

static int krn__gx_finish(void *ctx, krn_job *j) {
  krn__gx *m = (krn__gx *)ctx;
  if (!m->g->stale) return 0; /* another member of this cluster already downloaded it */
  int rc = krn_gpu_download(m->g, j);
  if (!rc) m->g->stale = 0;
  return rc;
}

static void krn__gx_set_speed(void *ctx, double speed) { ((krn__gx *)ctx)->speed = speed; }

static void krn__gx_destroy(void *ctx) {
  krn__gx *m = (krn__gx *)ctx;
  if (!m) return;
  cudaFree(m->staging);
  cudaFree(m->scratch);
  if (m->gctx) {
    cudaStreamDestroy(m->stream);
    m->g->gdestroy(m->gctx);
  } else if (m->stream) {
    cudaStreamDestroy(m->stream);
  }
  free(m);
}

static const krn_exec_ops krn__gx_ops = {krn__gx_prepare, krn__gx_run_chunk, krn__gx_commit,
                                         krn__gx_finish,  krn__gx_set_speed, krn__gx_destroy};

extern "C" int krn_exec_gpu_create(krn_gpu *g, const char *name, int sms, double speed, krn_exec **out,
                                   int *sms_got) {
  *out = NULL;
  if (!g) return KRN_ENODEV;
  if (!(speed > 0 && speed <= 1) || sms < 0) return KRN_EINVAL;
  CUdevResource part, rest;
  CUdevResourceDesc desc;
  CUstream s;
  unsigned int groups;
  int got, rc;
  krn__gx *m = (krn__gx *)calloc(1, sizeof *m);
  if (!m) return KRN_ENOMEM;
  m->g = g;
  m->speed = speed;
  got = g->info.sms;
  if (sms > 0) {
    if (!g->info.green_contexts) {
      fprintf(stderr, "spotlab kernels: this driver has no green contexts: cannot partition SMs\n");
      free(m);
      return KRN_ENODEV;
    }
    /* Carve the partition out of the SMs not yet given away, so members never share SMs
     * (cuDevSmResourceSplitByCount; GPU.md: verified on an H200, granularity rounds up). */
    if (!g->remaining_init) {
      if (g->getres(g->dev, &g->remaining, CU_DEV_RESOURCE_TYPE_SM) != CUDA_SUCCESS) goto fail;
      g->remaining_init = 1;
    }
    groups = 1;
    memset(&part, 0, sizeof part);
    memset(&rest, 0, sizeof rest);
    if (g->split(&part, &groups, &g->remaining, &rest, 0, (unsigned)sms) != CUDA_SUCCESS || groups < 1) {
      fprintf(stderr, "spotlab kernels: cannot split %d SMs off the %u left\n", sms, g->remaining.sm.smCount);
      free(m);
      return KRN_EINVAL;
    }
    if (g->gendesc(&desc, &part, 1) != CUDA_SUCCESS) goto fail;
    if (g->gcreate(&m->gctx, desc, g->dev, CU_GREEN_CTX_DEFAULT_STREAM) != CUDA_SUCCESS) goto fail;
    if (g->gstream(&s, m->gctx, CU_STREAM_NON_BLOCKING, 0) != CUDA_SUCCESS) goto fail_ctx;
    m->stream = (cudaStream_t)s;
    if (g->ctxfrom(&m->ctx, m->gctx) != CUDA_SUCCESS) goto fail_ctx;
    g->remaining = rest;
    got = (int)part.sm.smCount;
    m->sms = got;
  } else {
    if (cudaStreamCreateWithFlags(&m->stream, cudaStreamNonBlocking) != cudaSuccess) goto fail;
  }
  if (sms_got) *sms_got = got;
  rc = krn__exec_new(name, speed, &krn__gx_ops, m, out);
  if (rc) {
    krn__gx_destroy(m);
    return rc;
  }
  snprintf((*out)->kind, sizeof (*out)->kind, "gpu");
  snprintf((*out)->desc, sizeof (*out)->desc, "%.127s, %d of %d SMs", g->info.name, got, g->info.sms);
  return 0;
fail_ctx:
  g->gdestroy(m->gctx);
fail:
  fprintf(stderr, "spotlab kernels: green context for %d SMs failed\n", sms);
  free(m);
  return KRN_ECUDA;
}
