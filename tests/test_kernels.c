/* test_kernels.c - the kernels module: CPU twins against double references, the tolerance
 * checks themselves, the fluid-bound ideal, every clustering strategy on an emulated CPU cluster
 * (with and without a member failing mid-run: the result must still be exactly right), the
 * calibration file, and the GPU path (which must say "no device" cleanly on a machine without
 * one, and is exercised fully where a GPU is present). */
#include "kernels/krn.h"

#include <CUnit/CUnit.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static krn_job *mk(krn_kernel k, uint64_t seed) {
  krn_dims d = {0};
  switch (k) {
  case KRN_TRIAD:
    d.n = 100003;
    d.nchunks = 13;
    break;
  case KRN_GEMM:
    d.m = 67;
    d.k = 129;
    d.p = 45;
    d.nchunks = 7;
    break;
  default:
    d.batch = 50;
    d.d_in = 33;
    d.d_hidden = 20;
    d.d_out = 7;
    d.nchunks = 6;
    break;
  }
  krn_job *j = NULL;
  CU_ASSERT_EQUAL_FATAL(krn_job_create(k, &d, seed, &j), 0);
  return j;
}

static void test_invalid_dims(void) {
  krn_job *j = (krn_job *)1;
  krn_dims d = {0};
  CU_ASSERT_EQUAL(krn_job_create(KRN_TRIAD, &d, 1, &j), KRN_EINVAL);
  CU_ASSERT_PTR_NULL(j);
  d.n = 10;
  d.nchunks = 11; /* more chunks than elements */
  CU_ASSERT_EQUAL(krn_job_create(KRN_TRIAD, &d, 1, &j), KRN_EINVAL);
  d.nchunks = 0;
  CU_ASSERT_EQUAL(krn_job_create(KRN_TRIAD, &d, 1, &j), KRN_EINVAL);
  krn_dims g = {.m = 4, .k = 0, .p = 4, .nchunks = 1};
  CU_ASSERT_EQUAL(krn_job_create(KRN_GEMM, &g, 1, &j), KRN_EINVAL);
  CU_ASSERT_EQUAL(krn_job_create((krn_kernel)99, &g, 1, &j), KRN_EINVAL);
  krn_kernel k;
  CU_ASSERT_EQUAL(krn_kernel_parse("gemm", &k), 0);
  CU_ASSERT_EQUAL(k, KRN_GEMM);
  CU_ASSERT_EQUAL(krn_kernel_parse("GEMM", &k), KRN_EINVAL);
  krn_strategy s;
  CU_ASSERT_EQUAL(krn_strategy_parse("checkpoint", &s), 0);
  CU_ASSERT_EQUAL(s, KRN_CHECKPOINT);
  CU_ASSERT_EQUAL(krn_strategy_parse("steal", &s), KRN_EINVAL);
  CU_ASSERT_STRING_EQUAL(krn_strerror(KRN_ENODEV), "no CUDA device (or CUDA support not built)");
}

/* Twins (2 threads), the chunked single-thread path and the plain loop all pass the reference,
 * on two fresh random inputs each; triad and gemm twins equal the plain loop bitwise. */
static void test_twins_vs_reference(void) {
  for (int k = 0; k < KRN_NKERNELS; k++)
    for (uint64_t seed = 1; seed <= 2; seed++) {
      krn_job *j = mk((krn_kernel)k, seed * 7919);
      size_t len = krn_job_out_len(j);
      double worst = -1;
      CU_ASSERT_EQUAL(krn_cpu_run(j, 2), 0);
      CU_ASSERT_EQUAL(krn_job_verify(j, &worst), 0);
      CU_ASSERT(worst >= 0 && worst <= 1);
      float *twin = malloc(len * sizeof(float));
      memcpy(twin, krn_job_out(j), len * sizeof(float));
      /* chunk by chunk, one thread, in reverse order */
      krn_job_reset(j);
      for (size_t c = krn_job_nchunks(j); c-- > 0;) {
        size_t off, l;
        krn_job_chunk_span(j, c, &off, &l);
        CU_ASSERT_EQUAL(krn_cpu_chunk(j, c, krn_job_out(j) + off, 1, NULL, NULL), 0);
      }
      CU_ASSERT_EQUAL(memcmp(twin, krn_job_out(j), len * sizeof(float)), 0);
      krn_job_reset(j);
      CU_ASSERT_EQUAL(krn_cpu_plain(j), 0);
      CU_ASSERT_EQUAL(krn_job_verify(j, NULL), 0);
      if (k != KRN_MLP) CU_ASSERT_EQUAL(memcmp(twin, krn_job_out(j), len * sizeof(float)), 0);
      free(twin);
      krn_job_destroy(j);
    }
}

/* The checks must be able to fail: a missing chunk (NaN) or an error well above the float
 * bound is caught. */
static void test_verify_catches_errors(void) {
  for (int k = 0; k < KRN_NKERNELS; k++) {
    krn_job *j = mk((krn_kernel)k, 3);
    CU_ASSERT_EQUAL(krn_cpu_run(j, 1), 0);
    CU_ASSERT_EQUAL(krn_job_verify(j, NULL), 0);
    float *o = krn_job_out(j);
    size_t idx = krn_job_out_len(j) / 3;
    if (k == KRN_MLP) {
      /* corrupt one chunk slot's gradient entry by 1% of the gradient's scale */
      float keep = o[idx];
      o[idx] += 0.01f * (fabsf(o[idx]) + 1.0f);
      krn_job_finish(j);
      CU_ASSERT_EQUAL(krn_job_verify(j, NULL), KRN_EVERIFY);
      o[idx] = keep;
      krn_job_finish(j);
      CU_ASSERT_EQUAL(krn_job_verify(j, NULL), 0);
      o[idx] = NAN;
      krn_job_finish(j);
      CU_ASSERT_EQUAL(krn_job_verify(j, NULL), KRN_EVERIFY);
    } else {
      float keep = o[idx];
      o[idx] = keep * (1.0f + 1e-4f) + 1e-4f;
      double worst = 0;
      CU_ASSERT_EQUAL(krn_job_verify(j, &worst), KRN_EVERIFY);
      CU_ASSERT(worst > 1);
      o[idx] = NAN;
      CU_ASSERT_EQUAL(krn_job_verify(j, NULL), KRN_EVERIFY);
    }
    krn_job_destroy(j);
  }
}

static void test_ideal_makespan(void) {
  double cap[2] = {1, 2}, cap2[2] = {2, 2}, f[2] = {2, -1}, fall[2] = {1, 1};
  CU_ASSERT_DOUBLE_EQUAL(krn_ideal_makespan(30, 2, cap, NULL), 10.0, 1e-9);
  /* 8 chunks by t = 2, the other 22 at 2 per second: 2 + 11 */
  CU_ASSERT_DOUBLE_EQUAL(krn_ideal_makespan(30, 2, cap2, f), 13.0, 1e-9);
  CU_ASSERT(isinf(krn_ideal_makespan(30, 2, cap2, fall)));
}

/* ---- The emulated CPU cluster ---------------------------------------------------------------- */
#define NM 4
/* 8x apart, and at most half a core each so the test leaves the machine to others */
static const double speeds[NM] = {0.5, 0.25, 0.125, 0.0625};

typedef struct fixture {
  krn_exec *m[NM];
  krn_cluster *cl;
  double cap[NM];
} fixture;

static void fx_init(fixture *fx, krn_job *j) {
  for (int i = 0; i < NM; i++) {
    char name[16];
    snprintf(name, sizeof name, "cpu%d", i);
    CU_ASSERT_EQUAL_FATAL(krn_exec_cpu_create(name, speeds[i], 1, &fx->m[i]), 0);
  }
  CU_ASSERT_EQUAL_FATAL(krn_cluster_create(fx->m, NM, &fx->cl), 0);
  CU_ASSERT_EQUAL_FATAL(krn_cluster_measure(fx->cl, j, krn_job_nchunks(j) / 4, fx->cap), 0);
  for (int i = 0; i < NM; i++) CU_ASSERT(fx->cap[i] > 0 && isfinite(fx->cap[i]));
}
static void fx_fini(fixture *fx) {
  krn_cluster_destroy(fx->cl);
  for (int i = 0; i < NM; i++) krn_exec_destroy(fx->m[i]);
}

static krn_job *cluster_job(krn_kernel k) {
  krn_dims d = {0};
  /* sized so that a run lasts tens of milliseconds: long against thread start-up and sleep
   * granularity, so a failure at 30% of the run lands while members are working */
  if (k == KRN_TRIAD) {
    d.n = 1 << 23;
    d.nchunks = 64;
  } else if (k == KRN_GEMM) {
    d.m = 256;
    d.k = 384;
    d.p = 384;
    d.nchunks = 64;
  } else {
    d.batch = 1024;
    d.d_in = 96;
    d.d_hidden = 96;
    d.d_out = 16;
    d.nchunks = 32;
  }
  krn_job *j = NULL;
  CU_ASSERT_EQUAL(krn_job_create(k, &d, 42 + (uint64_t)k, &j), 0);
  return j;
}

/* Runs every strategy, without and with member 1 failing, and checks the result is bitwise the
 * reference twin's output and within the float bound. The failure is triggered in the middle of
 * member 1's first chunk (deterministic, so work is surely lost), or at 20% of the ideal
 * makespan (the benchmark's way: a time). */
static void run_all_strategies(krn_kernel k) {
  krn_job *j = cluster_job(k);
  CU_ASSERT_PTR_NOT_NULL_FATAL(j);
  size_t len = krn_job_out_len(j);
  CU_ASSERT_EQUAL(krn_cpu_run(j, 1), 0);
  float *want = malloc(len * sizeof(float));
  memcpy(want, krn_job_out(j), len * sizeof(float));
  fixture fx;
  fx_init(&fx, j);
  double ideal = krn_ideal_makespan(krn_job_nchunks(j), NM, fx.cap, NULL);
  int failed_runs = 0;
  for (int s = 0; s < KRN_NSTRATEGIES; s++)
    for (int fail = 0; fail <= 2; fail++) {
      double fail_at[NM] = {-1, -1, -1, -1};
      long fail_after[NM] = {-1, 0, -1, -1};
      if (fail == 2) fail_at[1] = 0.2 * ideal;
      krn_run_opts o = {.strategy = (krn_strategy)s,
                        .replicas = 2,
                        .detect_s = 0.001,
                        .capacity = fx.cap,
                        .fail_at_s = fail == 2 ? fail_at : NULL,
                        .fail_after = fail == 1 ? fail_after : NULL};
      krn_run_result r;
      int rc = krn_cluster_run(fx.cl, j, &o, &r);
      CU_ASSERT_EQUAL(rc, 0);
      if (rc) {
        fprintf(stderr, "%s/%s fail=%d: %s\n", krn_kernel_name(k), krn_strategy_name(o.strategy), fail,
                krn_strerror(rc));
        continue;
      }
      if (getenv("KRN_TEST_VERBOSE"))
        printf("\n    %s %-10s fail=%d failures=%d makespan %.4f ideal %.4f lost %zu (%.4f s) recovery %.4f",
               krn_kernel_name(k), krn_strategy_name(o.strategy), fail, r.failures, r.makespan_s, r.ideal_s,
               r.chunks_lost, r.work_lost_s, r.recovery_s);
      krn_job_finish(j);
      CU_ASSERT_EQUAL(krn_job_verify(j, NULL), 0);
      CU_ASSERT_EQUAL(memcmp(want, krn_job_out(j), len * sizeof(float)), 0);
      CU_ASSERT(r.makespan_s > 0 && r.ideal_s > 0 && r.efficiency > 0);
      CU_ASSERT(r.executions >= krn_job_nchunks(j));
      /* On a loaded machine a member may not get a core before the others finished the job
       * (then it never fails), or the run may beat the failure time; both are allowed, and at
       * least one failure run per kernel must really fail (checked below). */
      CU_ASSERT(r.failures <= (fail ? 1 : 0));
      failed_runs += r.failures;
      if (fail == 1 && r.failures == 1) {
        CU_ASSERT(r.chunks_lost >= 1);
        CU_ASSERT(r.work_lost_s > 0);
        CU_ASSERT(r.recovery_s > 0 && r.recovery_s <= r.makespan_s);
      } else if (fail == 0 && s != KRN_REDUNDANT && s != KRN_SPECULATIVE) {
        CU_ASSERT_EQUAL(r.chunks_lost, 0);
        CU_ASSERT_EQUAL(r.executions, krn_job_nchunks(j));
      }
    }
  CU_ASSERT(failed_runs >= 1);
  free(want);
  fx_fini(&fx);
  krn_job_destroy(j);
}
static void test_cluster_gemm(void) { run_all_strategies(KRN_GEMM); }
static void test_cluster_mlp(void) { run_all_strategies(KRN_MLP); }
static void test_cluster_triad(void) { run_all_strategies(KRN_TRIAD); }

/* Every member fails: the run reports it instead of hanging; a failure at t=0 of all but one
 * member still gives the exact result. */
static void test_cluster_total_failure(void) {
  krn_job *j = cluster_job(KRN_GEMM);
  fixture fx;
  fx_init(&fx, j);
  double all[NM] = {0, 0, 0, 0};
  for (int s = 0; s < KRN_NSTRATEGIES; s++) {
    krn_run_opts o = {.strategy = (krn_strategy)s, .replicas = 2, .capacity = fx.cap, .fail_at_s = all};
    krn_run_result r;
    CU_ASSERT_EQUAL(krn_cluster_run(fx.cl, j, &o, &r), KRN_EFAILED);
  }
  double one_left[NM] = {0, 0, 0, -1};
  for (int s = 0; s < KRN_NSTRATEGIES; s++) {
    krn_run_opts o = {.strategy = (krn_strategy)s, .replicas = 3, .capacity = fx.cap, .fail_at_s = one_left};
    krn_run_result r;
    CU_ASSERT_EQUAL(krn_cluster_run(fx.cl, j, &o, &r), 0);
    krn_job_finish(j);
    CU_ASSERT_EQUAL(krn_job_verify(j, NULL), 0);
  }
  /* a given reference sets the ideal; without it the run's own capacities do */
  krn_run_opts ro = {.strategy = KRN_DYNAMIC, .capacity = fx.cap, .reference = fx.cap};
  krn_run_result rr;
  CU_ASSERT_EQUAL(krn_cluster_run(fx.cl, j, &ro, &rr), 0);
  CU_ASSERT_DOUBLE_EQUAL(rr.ideal_s, krn_ideal_makespan(krn_job_nchunks(j), NM, fx.cap, NULL), 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(rr.ideal_prior_s, rr.ideal_s, 1e-12);
  for (int i = 0; i < NM; i++) CU_ASSERT(rr.capacity[i] > 0);
  ro.reference = NULL;
  CU_ASSERT_EQUAL(krn_cluster_run(fx.cl, j, &ro, &rr), 0);
  CU_ASSERT_DOUBLE_EQUAL(rr.ideal_s, krn_ideal_makespan(krn_job_nchunks(j), NM, rr.capacity, NULL), 1e-12);
  krn_run_opts bad = {.strategy = KRN_WEIGHTED}; /* weighted needs capacities */
  krn_run_result r;
  CU_ASSERT_EQUAL(krn_cluster_run(fx.cl, j, &bad, &r), KRN_EINVAL);
  bad.strategy = KRN_REDUNDANT;
  bad.replicas = NM + 1;
  CU_ASSERT_EQUAL(krn_cluster_run(fx.cl, j, &bad, &r), KRN_EINVAL);
  fx_fini(&fx);
  krn_job_destroy(j);
}

static void test_calibration_file(void) {
  char slug[64];
  krn_slug("AMD EPYC 7B13 64-Core Processor", slug, sizeof slug);
  CU_ASSERT_STRING_EQUAL(slug, "amd-epyc-7b13-64-core-processor");
  krn_slug("  NVIDIA H200 ", slug, sizeof slug);
  CU_ASSERT_STRING_EQUAL(slug, "nvidia-h200");
  krn_slug("", slug, sizeof slug);
  CU_ASSERT_STRING_EQUAL(slug, "unknown");
  char dir[] = "/tmp/krn_test_XXXXXX";
  CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
  char path[256];
  snprintf(path, sizeof path, "%s/sub/cpu-test.csv", dir);
  krn_calib_row rows[3] = {{"stream_bw_gbs", 12.5, "GB/s", "triad, 2 threads"},
                           {"gemm_gflops", NAN, "GFLOP/s", "not measured"},
                           {"dynamic_efficiency", 0.93, "1", "4 members"}};
  CU_ASSERT_EQUAL(krn_calib_write(path, "Test CPU", rows, 3), 0);
  FILE *f = fopen(path, "r");
  CU_ASSERT_PTR_NOT_NULL_FATAL(f);
  char buf[1024] = {0};
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  CU_ASSERT(n > 0);
  CU_ASSERT_STRING_EQUAL(buf, "key,value,unit,device,note\n"
                              "stream_bw_gbs,12.5,GB/s,Test CPU,\"triad, 2 threads\"\n"
                              "dynamic_efficiency,0.93,1,Test CPU,4 members\n");
  remove(path);
  snprintf(path, sizeof path, "%s/sub", dir);
  rmdir(path);
  rmdir(dir);
  CU_ASSERT_EQUAL(krn_calib_write("/proc/no/such/dir/x.csv", "d", rows, 1), KRN_EIO);
}

/* Without a device (this is the case on the development machine, which has no libcuda), the
 * GPU entry points answer KRN_ENODEV with a reason, and nothing crashes. With a device, the
 * CUDA kernels pass the same references, and a cluster of green-context partitions survives a
 * failure with an exact result. */
static void test_gpu(void) {
  krn_gpu *g = NULL;
  char msg[256] = "";
  int rc = krn_gpu_open(&g, msg, sizeof msg);
  if (rc == KRN_ENODEV) {
    CU_ASSERT(strlen(msg) > 0);
    CU_ASSERT_PTR_NULL(g);
    krn_exec *e = NULL;
    CU_ASSERT_EQUAL(krn_exec_gpu_create(NULL, "g", 16, 1.0, &e, NULL), KRN_ENODEV);
    printf("\n    (no GPU: %s)\n", msg);
    return;
  }
  CU_ASSERT_EQUAL_FATAL(rc, 0);
  krn_gpu_info info;
  krn_gpu_get_info(g, &info);
  CU_ASSERT(info.sms > 0);
  for (int k = 0; k < KRN_NKERNELS; k++) {
    krn_job *j = mk((krn_kernel)k, 11);
    CU_ASSERT_EQUAL(krn_gpu_upload(g, j), 0);
    double t = 0;
    CU_ASSERT_EQUAL(krn_gpu_run_whole(g, j, 0, 1, &t), 0);
    CU_ASSERT_EQUAL(krn_gpu_download(g, j), 0);
    krn_job_finish(j);
    double worst = -1;
    CU_ASSERT_EQUAL(krn_job_verify(j, &worst), 0);
    printf("\n    gpu %s: max error / tolerance %.3g", krn_kernel_name((krn_kernel)k), worst);
    if (k == KRN_GEMM) {
      int crc = krn_gpu_run_whole(g, j, 1, 1, &t);
      if (crc == 0) {
        CU_ASSERT_EQUAL(krn_gpu_download(g, j), 0);
        CU_ASSERT_EQUAL(krn_job_verify(j, NULL), 0);
      } else {
        CU_ASSERT_EQUAL(crc, KRN_ENODEV); /* no cuBLAS: allowed */
      }
    }
    krn_job_destroy(j);
  }
  /* two partitions (or two whole-device members without green contexts), one fails */
  krn_exec *m[2] = {NULL, NULL};
  int got[2] = {0, 0};
  CU_ASSERT_EQUAL_FATAL(krn_exec_gpu_create(g, "gpu16", info.green_contexts ? 16 : 0, 1.0, &m[0], &got[0]), 0);
  CU_ASSERT_EQUAL_FATAL(krn_exec_gpu_create(g, "gpu32", info.green_contexts ? 32 : 0, 1.0, &m[1], &got[1]), 0);
  krn_cluster *cl = NULL;
  CU_ASSERT_EQUAL_FATAL(krn_cluster_create(m, 2, &cl), 0);
  krn_dims d = {.m = 512, .k = 512, .p = 512, .nchunks = 64};
  krn_job *j = NULL;
  CU_ASSERT_EQUAL_FATAL(krn_job_create(KRN_GEMM, &d, 5, &j), 0);
  CU_ASSERT_EQUAL_FATAL(krn_gpu_upload(g, j), 0);
  double cap[2];
  CU_ASSERT_EQUAL(krn_cluster_measure(cl, j, 8, cap), 0);
  double ideal = krn_ideal_makespan(64, 2, cap, NULL);
  for (int s = 0; s < KRN_NSTRATEGIES; s++) {
    double fail_at[2] = {0.4 * ideal, -1};
    krn_run_opts o = {.strategy = (krn_strategy)s, .replicas = 2, .capacity = cap, .fail_at_s = fail_at};
    krn_run_result r;
    CU_ASSERT_EQUAL(krn_cluster_run(cl, j, &o, &r), 0);
    krn_job_finish(j);
    CU_ASSERT_EQUAL(krn_job_verify(j, NULL), 0);
  }
  krn_job_destroy(j);
  krn_cluster_destroy(cl);
  krn_exec_destroy(m[0]);
  krn_exec_destroy(m[1]);
  krn_gpu_close(g);
}

static CU_TestInfo kernel_tests[] = {{"invalid dimensions and names", test_invalid_dims},
                                     {"CPU twins vs double reference", test_twins_vs_reference},
                                     {"verification catches errors", test_verify_catches_errors},
                                     {"ideal makespan (fluid bound)", test_ideal_makespan},
                                     {"calibration file", test_calibration_file},
                                     CU_TEST_INFO_NULL};
static CU_TestInfo cluster_tests[] = {{"every strategy, gemm, with and without failure", test_cluster_gemm},
                                      {"every strategy, mlp, with and without failure", test_cluster_mlp},
                                      {"every strategy, triad, with and without failure", test_cluster_triad},
                                      {"all members fail / one survivor", test_cluster_total_failure},
                                      CU_TEST_INFO_NULL};
static CU_TestInfo gpu_tests[] = {{"GPU kernels and partitions (or a clean no-device)", test_gpu}, CU_TEST_INFO_NULL};

CU_SuiteInfo spotlab_suites[] = {{"kernels", NULL, NULL, NULL, NULL, kernel_tests},
                                 {"cluster", NULL, NULL, NULL, NULL, cluster_tests},
                                 {"gpu", NULL, NULL, NULL, NULL, gpu_tests},
                                 CU_SUITE_INFO_NULL};
