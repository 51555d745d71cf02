/* cmd_bench_kernels.c - `spotlab bench kernels`: can many weak, unreliable GPUs be clustered into
 * one dependable resource? Measures it on this machine.
 *
 * 1. Each kernel (triad, gemm, mlp) on the whole device: the rate reached, beside a reference in
 *    the same run (CPU: a plain single-thread loop; GPU: cuBLAS for gemm, and the device's
 *    theoretical peak), after checking the result against a double-precision reference.
 * 2. An emulated cluster of weak members whose speeds differ by --spread (CPU: thread groups
 *    slowed by duty-cycling; GPU: green-context SM partitions): each member's capacity measured
 *    alone, then every clustering strategy, without and with a member failing mid-run. Each
 *    result is checked (bitwise against the twin on the CPU, within the float bound always).
 * 3. The table (stdout), optionally an HDF5 file with the same rows (--out), and the calibration
 *    file the simulator's cluster model reads (data/calibration/<device>.csv).
 *
 * Efficiency = the fluid-bound ideal makespan / the measured makespan. The ideal divides the work
 * over the members' capacities as measured in the same run (chunks each completed / the time it
 * spent on them; a failed member contributes until it fails), so the efficiency isolates what
 * the strategy loses (idle members, lost and redundant work, tails) from the machine's load.
 * Capacities measured beforehand, one member at a time, weight the static splits.
 */
#include "app/app.h"
#include "app/cli.h"
#include "sim/h5mem.h"
#include "sim/tmpname.h"
#include "kernels/krn.h"
#include "spotlab_config.h"

#include <hdf5.h>
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define BK_MAX_ROWS 128

/* One row of the table and of the HDF5 compound dataset. */
typedef struct bk_row {
  char kernel[16];   /* triad, gemm, mlp */
  char strategy[16]; /* whole-device rows: "twin", "plain", "cublas"; else a strategy */
  char scenario[16]; /* "device", "no-failure", "failure" */
  int32_t members;
  double makespan_s; /* whole-device rows: best time of one job */
  double ideal_s;
  double efficiency;
  double work_lost_s;
  int64_t chunks_lost;
  double recovery_s;
  double rate;          /* GB/s (triad) or GFLOP/s (gemm, mlp) */
  double peak_fraction; /* of the device's theoretical peak; NaN when unknown (CPU) */
  int32_t verified;     /* 1 = passed the reference check */
} bk_row;

typedef struct bk_opts {
  int cpu_only;
  const char *out;
  const char *calib_dir;
  int no_calib;
  int kernels[KRN_NKERNELS];
  int strategies[KRN_NSTRATEGIES];
  int members;
  double spread, duty_max;
  int threads; /* CPU: threads per member */
  int fail_member;
  double fail_at; /* fraction of the ideal makespan; < 0 = random in [0.2, 0.8] */
  double detect_s;
  int replicas;
  double scale;
  unsigned long long seed;
  int sms[KRN_MAX_MEMBERS];
  int nsms;
} bk_opts;

static const app_option bk_opts_table[] = {
    {"--cpu", APP_O_FLAG, NULL, 0, 0, 0, "CPU twins only, even when a CUDA device is present"},
    {"--out", APP_O_STRING, "FILE.h5", 0, 0, 0, "also write the table as an HDF5 compound dataset /kernels"},
    {"--calib-dir", APP_O_STRING, "DIR", 0, 0, 0,
     "where <device>.csv goes (default results/calibration; the committed\n"
     "files of data/calibration are only written when named)"},
    {"--no-calib", APP_O_FLAG, NULL, 0, 0, 0, "do not write the calibration file"},
    {"--kernels", APP_O_STRING, "LIST", 0, 0, 0, "comma-separated: triad,gemm,mlp (default all)"},
    {"--strategies", APP_O_STRING, "LIST", 0, 0, 0, "even,weighted,dynamic,redundant,checkpoint,speculative (all)"},
    {"--members", APP_O_U64, "N", 2, 16, 0, "CPU: cluster members (default 4; on a GPU, --sms)"},
    {"--spread", APP_O_DOUBLE, "R", 1, 64, 0, "fastest/slowest speed ratio (default 8)"},
    {"--duty-max", APP_O_DOUBLE, "D", 1e-3, 1, 0, "duty cycle of the fastest member (default 0.8 CPU, 1 GPU)"},
    {"--threads", APP_O_U64, "T", 1, 256, 0, "CPU: threads per member (default 1)"},
    {"--sms", APP_O_STRING, "LIST", 0, 0, 0, "GPU: SMs per member, comma-separated (default 8,16,32,64: 8x)"},
    {"--fail-member", APP_O_U64, "I", 0, 63, 0, "member that fails in the failure runs (default 0, the fastest)"},
    {"--fail-at", APP_O_DOUBLE, "F", 0.001, 0.999, 0,
     "failure time as a fraction of the ideal makespan, or 'random'\n"
     "(uniform in [0.2,0.8] from --seed) (default 0.4)",
     NULL, "random"},
    {"--detect-ms", APP_O_DOUBLE, "X", 0, 10000, 0, "failure detection delay, ms (default 1)"},
    {"--replicas", APP_O_U64, "K", 1, 16, 0, "redundant/speculative replicas (default 2)"},
    {"--scale", APP_O_DOUBLE, "S", 0.01, 16, 0, "problem size factor (default 1)"},
    APP_OPT_SEED("input and failure-time seed (default 1)"),
    {NULL},
};
static const app_cli bk_cli = {"bench kernels",
                               "",
                               0,
                               0,
                               NULL,
                               "Runs the kernels (streaming triad, tiled SGEMM, an MLP training step) on the whole\n"
                               "device, then on an emulated cluster of weak members whose speeds differ by --spread,\n"
                               "under every clustering strategy, without and with a member failing mid-run. Prints a\n"
                               "table; writes the calibration file for the simulator's cluster model.\n",
                               "Exit status: 0 success, 1 a run failed or a result was wrong, 2 bad usage.\n",
                               bk_opts_table};

static int bk_parse_list(const char *opt, const char *text, int *flags, int n, int (*parse)(const char *, int *)) {
  char buf[256];
  if (strlen(text) >= sizeof buf) {
    fprintf(stderr, "spotlab bench kernels: %s: list too long\n", opt);
    return -1;
  }
  strcpy(buf, text);
  memset(flags, 0, (size_t)n * sizeof *flags);
  int any = 0;
  for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
    int v;
    if (parse(t, &v)) {
      fprintf(stderr, "spotlab bench kernels: %s: unknown name '%s'\n", opt, t);
      return -1;
    }
    flags[v] = 1;
    any = 1;
  }
  if (!any) {
    fprintf(stderr, "spotlab bench kernels: %s: empty list\n", opt);
    return -1;
  }
  return 0;
}
static int bk_kparse(const char *s, int *v) {
  krn_kernel k;
  int rc = krn_kernel_parse(s, &k);
  *v = (int)k;
  return rc;
}
static int bk_sparse(const char *s, int *v) {
  krn_strategy k;
  int rc = krn_strategy_parse(s, &k);
  *v = (int)k;
  return rc;
}

static int bk_parse(int argc, char **argv, bk_opts *o) {
  *o = (bk_opts){.calib_dir = "results/calibration",
                 .members = 4,
                 .spread = 8,
                 .duty_max = -1,
                 .threads = 1,
                 .fail_member = 0,
                 .fail_at = 0.4,
                 .detect_s = 1e-3,
                 .replicas = 2,
                 .scale = 1,
                 .seed = 1};
  for (int i = 0; i < KRN_NKERNELS; i++) o->kernels[i] = 1;
  for (int i = 0; i < KRN_NSTRATEGIES; i++) o->strategies[i] = 1;
  int sms_given = 0;
  app_args a;
  int prc = app_cli_parse(&bk_cli, argc, argv, &a);
  if (prc == 1) {
    app_args_free(&a);
    exit(0);
  }
  int bad = prc != 0;
  const char *v;
  unsigned long long u;
  o->cpu_only = app_args_flag(&a, "--cpu");
  o->no_calib = app_args_flag(&a, "--no-calib");
  o->out = app_args_str(&a, "--out", NULL);
  o->calib_dir = app_args_str(&a, "--calib-dir", o->calib_dir);
  if (!bad && (v = app_args_str(&a, "--kernels", NULL)))
    bad = bk_parse_list("--kernels", v, o->kernels, KRN_NKERNELS, bk_kparse) != 0;
  if (!bad && (v = app_args_str(&a, "--strategies", NULL)))
    bad = bk_parse_list("--strategies", v, o->strategies, KRN_NSTRATEGIES, bk_sparse) != 0;
  o->members = (int)app_args_u64(&a, "--members", (unsigned long long)o->members);
  o->spread = app_args_double(&a, "--spread", o->spread);
  o->duty_max = app_args_double(&a, "--duty-max", o->duty_max);
  o->threads = (int)app_args_u64(&a, "--threads", (unsigned long long)o->threads);
  if (!bad && (v = app_args_str(&a, "--sms", NULL))) {
    char buf[256];
    snprintf(buf, sizeof buf, "%s", v);
    o->nsms = 0;
    for (char *save = NULL, *t = strtok_r(buf, ",", &save); t && !bad; t = strtok_r(NULL, ",", &save)) {
      if (o->nsms == KRN_MAX_MEMBERS || app_opt_u64("--sms", t, 1, 4096, &u))
        bad = 1;
      else
        o->sms[o->nsms++] = (int)u;
    }
    if (!bad && o->nsms < 2) {
      fprintf(stderr, "spotlab bench kernels: --sms: give at least 2 members\n");
      bad = 1;
    }
    sms_given = 1;
  }
  o->fail_member = (int)app_args_u64(&a, "--fail-member", (unsigned long long)o->fail_member);
  o->fail_at = app_args_is_word(&a, "--fail-at") ? -1 : app_args_double(&a, "--fail-at", o->fail_at);
  o->detect_s = app_args_double(&a, "--detect-ms", o->detect_s * 1e3) * 1e-3;
  o->replicas = (int)app_args_u64(&a, "--replicas", (unsigned long long)o->replicas);
  o->scale = app_args_double(&a, "--scale", o->scale);
  o->seed = app_args_u64(&a, "--seed", o->seed);
  app_args_free(&a);
  if (bad) return -1;
  if (!sms_given) {
    int def[4] = {8, 16, 32, 64};
    o->nsms = 4;
    memcpy(o->sms, def, sizeof def);
  }
  if (o->replicas > o->members) {
    fprintf(stderr, "spotlab bench kernels: --replicas %d exceeds --members %d\n", o->replicas, o->members);
    return -1;
  }
  if (o->fail_member >= o->members) {
    fprintf(stderr, "spotlab bench kernels: --fail-member %d: there are only %d members (0..%d)\n", o->fail_member,
            o->members, o->members - 1);
    return -1;
  }
  return 0;
}

/* ---- sizes ------------------------------------------------------------------------------------ */
static size_t bk_sz(double base, double scale, size_t lo) {
  double v = base * scale;
  return v < (double)lo ? lo : (size_t)v;
}
/* cube-root scaling for gemm/mlp dimensions, so --scale multiplies the work */
static size_t bk_dim(double base, double scale, size_t lo) {
  size_t v = bk_sz(base * cbrt(scale), 1.0, lo);
  return (v + 7) / 8 * 8;
}

static krn_dims bk_whole_dims(krn_kernel k, int gpu, double s) {
  krn_dims d = {0};
  if (k == KRN_TRIAD) {
    d.n = bk_sz(gpu ? 134217728.0 : 33554432.0, s, 1024); /* 2^27 (1.5 GiB moved) / 2^25 */
    d.nchunks = 1;
  } else if (k == KRN_GEMM) {
    /* GPU: one launch does the whole job; 64 chunks only set which rows the (sampled) double
     * check covers. CPU: chunks of 8 rows shared by the threads. */
    d.m = d.k = d.p = bk_dim(gpu ? 8192 : 512, s, 64);
    d.nchunks = gpu ? 64 : d.m / 8;
  } else {
    /* sizes bounded by the double reference the host computes to check the result */
    d.batch = bk_sz(gpu ? 16384 : 4096, s, 64);
    d.d_in = d.d_hidden = gpu ? 512 : 256;
    d.d_out = gpu ? 128 : 64;
    d.nchunks = d.batch / 64;
  }
  return d;
}
static krn_dims bk_cluster_dims(krn_kernel k, int gpu, double s) {
  krn_dims d = {0};
  if (k == KRN_TRIAD) {
    d.n = bk_sz(gpu ? 268435456.0 : 67108864.0, s, 4096); /* 3 GiB / 768 MiB moved */
    d.nchunks = 128;
  } else if (k == KRN_GEMM) {
    d.m = bk_dim(gpu ? 16384 : 1024, s, 128);
    d.k = d.p = bk_dim(gpu ? 4096 : 1024, s, 64);
    d.nchunks = 128;
  } else {
    d.batch = bk_sz(gpu ? 16384 : 4096, s, 128);
    d.d_in = d.d_hidden = gpu ? 512 : 256;
    d.d_out = gpu ? 128 : 64;
    d.nchunks = 64;
  }
  return d;
}

static double bk_rate(const krn_job *j, double secs) {
  return krn_job_kind(j) == KRN_TRIAD ? krn_job_bytes(j) / secs * 1e-9 : krn_job_flops(j) / secs * 1e-9;
}

static void bk_cpu_name(char *out, size_t len) {
  snprintf(out, len, "unknown CPU");
  FILE *f = fopen("/proc/cpuinfo", "r");
  if (!f) return;
  char line[512];
  while (fgets(line, sizeof line, f)) {
    if (!strncmp(line, "model name", 10)) {
      char *c = strchr(line, ':');
      if (c) {
        c++;
        while (*c == ' ') c++;
        c[strcspn(c, "\n")] = 0;
        snprintf(out, len, "%s", c);
      }
      break;
    }
  }
  fclose(f);
}

/* ---- HDF5 ------------------------------------------------------------------------------------- */
/* The table as FILE.h5: 0, or -1 with the reason in err. */
static int bk_write_h5(const char *path, const char *device, const bk_row *rows, int n, char *err, size_t errlen) {
  size_t len = strlen(path) + 16;
  char *tmp = malloc(len);
  if (!tmp) {
    snprintf(err, errlen, "%s: out of memory", path);
    return -1;
  }
  sim_tmpname(path, tmp, len);
  int ok = 0;
  hid_t f = sim_h5mem_create(tmp); /* built in memory, written whole (h5mem.h: a full disk) */
  if (f < 0) snprintf(err, errlen, "%s: cannot create it: %s", path, strerror(errno));
  if (f >= 0) {
    hid_t s16 = H5Tcopy(H5T_C_S1);
    H5Tset_size(s16, 16);
    hid_t t = H5Tcreate(H5T_COMPOUND, sizeof(bk_row));
    H5Tinsert(t, "kernel", HOFFSET(bk_row, kernel), s16);
    H5Tinsert(t, "strategy", HOFFSET(bk_row, strategy), s16);
    H5Tinsert(t, "scenario", HOFFSET(bk_row, scenario), s16);
    H5Tinsert(t, "members", HOFFSET(bk_row, members), H5T_NATIVE_INT32);
    H5Tinsert(t, "makespan_s", HOFFSET(bk_row, makespan_s), H5T_NATIVE_DOUBLE);
    H5Tinsert(t, "ideal_s", HOFFSET(bk_row, ideal_s), H5T_NATIVE_DOUBLE);
    H5Tinsert(t, "efficiency", HOFFSET(bk_row, efficiency), H5T_NATIVE_DOUBLE);
    H5Tinsert(t, "work_lost_s", HOFFSET(bk_row, work_lost_s), H5T_NATIVE_DOUBLE);
    H5Tinsert(t, "chunks_lost", HOFFSET(bk_row, chunks_lost), H5T_NATIVE_INT64);
    H5Tinsert(t, "recovery_s", HOFFSET(bk_row, recovery_s), H5T_NATIVE_DOUBLE);
    H5Tinsert(t, "rate", HOFFSET(bk_row, rate), H5T_NATIVE_DOUBLE);
    H5Tinsert(t, "peak_fraction", HOFFSET(bk_row, peak_fraction), H5T_NATIVE_DOUBLE);
    H5Tinsert(t, "verified", HOFFSET(bk_row, verified), H5T_NATIVE_INT32);
    hsize_t dim = (hsize_t)n;
    hid_t sp = H5Screate_simple(1, &dim, NULL);
    hid_t ds = H5Dcreate2(f, "kernels", t, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    herr_t w = ds >= 0 ? H5Dwrite(ds, t, H5S_ALL, H5S_ALL, H5P_DEFAULT, rows) : -1;
    /* attributes: what the rows mean */
    hid_t as = H5Screate(H5S_SCALAR);
    hid_t vs = H5Tcopy(H5T_C_S1);
    H5Tset_size(vs, H5T_VARIABLE);
    const char *attrs[3][2] = {
        {"device", device},
        {"help", "spotlab bench kernels: per kernel and strategy, makespan, efficiency = ideal/makespan "
                 "(ideal: fluid bound from members' measured capacities), member-seconds of work "
                 "lost, recovery time after the failure; scenario 'device' rows: whole-device rate"},
        {"units", "makespan_s,ideal_s,work_lost_s,recovery_s: s; rate: GB/s (triad) or GFLOP/s"}};
    herr_t aw = 0;
    for (int a = 0; a < 3 && ds >= 0; a++) {
      hid_t at = H5Acreate2(ds, attrs[a][0], vs, as, H5P_DEFAULT, H5P_DEFAULT);
      if (at < 0 || H5Awrite(at, vs, &attrs[a][1]) < 0) aw = -1;
      if (at >= 0) H5Aclose(at);
    }
    H5Tclose(vs);
    H5Sclose(as);
    if (ds >= 0) H5Dclose(ds);
    H5Sclose(sp);
    H5Tclose(t);
    H5Tclose(s16);
    ok = ds >= 0 && w >= 0 && aw >= 0;
    ok = sim_h5mem_finish(f, tmp, path, ok, "kernel table", err, errlen) == 0;
  }
  free(tmp);
  return ok ? 0 : -1;
}

/* ---- the benchmark ---------------------------------------------------------------------------- */
typedef struct bk_state {
  bk_opts o;
  krn_gpu *gpu;
  krn_gpu_info info;
  char device[160];
  char model[128]; /* device name without the thread count: names the calibration file */
  bk_row rows[BK_MAX_ROWS];
  int nrows;
  int bad; /* a check failed */
  /* calibration figures */
  double stream_bw, gemm_gflops, cublas_gflops, mlp_step_s, chunk_overhead_s;
  double eff[KRN_NSTRATEGIES][2], eff_n[KRN_NSTRATEGIES][2];
  double recovery[KRN_NSTRATEGIES], lost[KRN_NSTRATEGIES], rec_n[KRN_NSTRATEGIES];
  double cap_ratio;
  double load1;                    /* 1-minute load average at the start */
  double contention[KRN_NKERNELS]; /* sum of capacities together / alone */
  char members_line[KRN_NKERNELS][512];
  char mlp_note[160];
} bk_state;

static bk_row *bk_add(bk_state *st, krn_kernel k, const char *strategy, const char *scenario) {
  if (st->nrows == BK_MAX_ROWS) return NULL;
  bk_row *r = &st->rows[st->nrows++];
  memset(r, 0, sizeof *r);
  snprintf(r->kernel, sizeof r->kernel, "%s", krn_kernel_name(k));
  snprintf(r->strategy, sizeof r->strategy, "%s", strategy);
  snprintf(r->scenario, sizeof r->scenario, "%s", scenario);
  r->ideal_s = r->efficiency = r->work_lost_s = r->recovery_s = r->peak_fraction = NAN;
  r->chunks_lost = -1;
  return r;
}

static int bk_verify(bk_state *st, krn_job *j, const char *what) {
  double worst = 0;
  int rc = krn_job_verify(j, &worst);
  if (rc) {
    fprintf(stderr, "spotlab bench kernels: %s %s: %s (max error/tolerance %.3g)\n", krn_kernel_name(krn_job_kind(j)),
            what, krn_strerror(rc), worst);
    st->bad = 1;
    return 0;
  }
  return 1;
}

/* Whole-device rates of one kernel. */
static int bk_whole(bk_state *st, krn_kernel k) {
  int gpu = st->gpu != NULL;
  krn_dims d = bk_whole_dims(k, gpu, st->o.scale);
  krn_job *j = NULL;
  int rc = krn_job_create(k, &d, st->o.seed, &j);
  if (rc) return rc;
  fprintf(stderr, "  %s: whole device...\n", krn_kernel_name(k));
  double best = INFINITY;
  if (gpu) {
    if ((rc = krn_gpu_upload(st->gpu, j))) goto out;
    if ((rc = krn_gpu_run_whole(st->gpu, j, 0, 10, &best))) goto out;
    if ((rc = krn_gpu_download(st->gpu, j))) goto out;
  } else {
    for (int r = 0; r < 3; r++) {
      krn_job_reset(j);
      double t0 = krn_now();
      if ((rc = krn_cpu_run(j, 0))) goto out;
      double dt = krn_now() - t0;
      if (dt < best) best = dt;
    }
  }
  krn_job_finish(j);
  bk_row *r = bk_add(st, k, gpu ? "kernel" : "twin", "device");
  if (!r) goto out;
  r->members = 1;
  r->makespan_s = best;
  r->rate = bk_rate(j, best);
  r->verified = bk_verify(st, j, gpu ? "CUDA kernel" : "CPU twin");
  if (gpu) {
    double peak = k == KRN_TRIAD ? st->info.mem_bw_peak_gbs : st->info.fp32_peak_gflops;
    r->peak_fraction = peak > 0 ? r->rate / peak : NAN;
  }
  if (k == KRN_TRIAD) st->stream_bw = r->rate;
  if (k == KRN_GEMM) st->gemm_gflops = r->rate;
  if (k == KRN_MLP) {
    st->mlp_step_s = best;
    snprintf(st->mlp_note, sizeof st->mlp_note, "one step (forward+backward) batch %zu layers %zu-%zu-%zu", d.batch,
             d.d_in, d.d_hidden, d.d_out);
  }
  /* the reference in the same run */
  if (!gpu) {
    krn_job_reset(j);
    double t0 = krn_now();
    if ((rc = krn_cpu_plain(j))) goto out;
    double dt = krn_now() - t0;
    bk_row *p = bk_add(st, k, "plain", "device");
    if (p) {
      p->members = 1;
      p->makespan_s = dt;
      p->rate = bk_rate(j, dt);
      p->verified = bk_verify(st, j, "plain loop");
    }
  } else if (k == KRN_GEMM) {
    double t = 0;
    int crc = krn_gpu_run_whole(st->gpu, j, 1, 10, &t);
    if (crc == 0 && (crc = krn_gpu_download(st->gpu, j)) == 0) {
      bk_row *p = bk_add(st, k, "cublas", "device");
      if (p) {
        p->members = 1;
        p->makespan_s = t;
        p->rate = bk_rate(j, t);
        p->peak_fraction = st->info.fp32_peak_gflops > 0 ? p->rate / st->info.fp32_peak_gflops : NAN;
        p->verified = bk_verify(st, j, "cuBLAS");
        st->cublas_gflops = p->rate;
      }
    } else {
      fprintf(stderr, "  gemm: no cuBLAS comparison (%s)\n", krn_strerror(crc));
    }
  }
out:
  krn_job_destroy(j);
  return rc;
}

static int bk_make_members(bk_state *st, krn_exec **m, int *n) {
  int gpu = st->gpu != NULL;
  *n = gpu ? st->o.nsms : st->o.members;
  double dmax = st->o.duty_max > 0 ? st->o.duty_max : (gpu ? 1.0 : 0.8);
  for (int i = 0; i < *n; i++) {
    char name[32];
    int rc;
    if (gpu) {
      /* GPU: the SM counts set the spread; duty-cycling only if asked */
      snprintf(name, sizeof name, "gpu-%dsm", st->o.sms[i]);
      int got = 0;
      rc = krn_exec_gpu_create(st->gpu, name, st->o.sms[i], dmax, &m[i], &got);
      if (!rc) fprintf(stderr, "  member %d: green context of %d SMs (asked %d)\n", i, got, st->o.sms[i]);
    } else {
      /* CPU: speeds geometric from duty_max down to duty_max / spread */
      double s = dmax * pow(st->o.spread, -(double)i / (double)(*n - 1));
      snprintf(name, sizeof name, "cpu-%.3f", s);
      rc = krn_exec_cpu_create(name, s, st->o.threads, &m[i]);
    }
    if (rc) {
      for (int x = 0; x < i; x++) krn_exec_destroy(m[x]);
      return rc;
    }
  }
  return 0;
}

static int bk_cluster(bk_state *st, krn_kernel k, krn_cluster *cl, int nm) {
  int gpu = st->gpu != NULL;
  krn_dims d = bk_cluster_dims(k, gpu, st->o.scale);
  krn_job *j = NULL;
  float *want = NULL;
  int rc = krn_job_create(k, &d, st->o.seed + 17, &j);
  if (rc) return rc;
  size_t len = krn_job_out_len(j);
  if (gpu) {
    if ((rc = krn_gpu_upload(st->gpu, j))) goto out;
  } else {
    /* the twin's output: every cluster run must reproduce it bit for bit */
    if ((rc = krn_cpu_run(j, 0))) goto out;
    if (!bk_verify(st, j, "twin (cluster job)")) goto out;
    want = malloc(len * sizeof(float));
    if (!want) {
      rc = KRN_ENOMEM;
      goto out;
    }
    memcpy(want, krn_job_out(j), len * sizeof(float));
  }
  double cap[KRN_MAX_MEMBERS];
  fprintf(stderr, "  %s: measuring %d members alone...\n", krn_kernel_name(k), nm);
  if ((rc = krn_cluster_measure(cl, j, krn_job_nchunks(j) / 8 + 1, cap))) goto out;
  double cmax = 0, cmin = INFINITY;
  for (int i = 0; i < nm; i++) {
    cmax = fmax(cmax, cap[i]);
    cmin = fmin(cmin, cap[i]);
  }
  if (st->cap_ratio == 0 || k == KRN_GEMM) st->cap_ratio = cmax / cmin;
  snprintf(st->members_line[k], sizeof st->members_line[k],
           "%s: member capacity, chunks/s, alone:", krn_kernel_name(k));
  for (int i = 0; i < nm; i++)
    snprintf(st->members_line[k] + strlen(st->members_line[k]),
             sizeof st->members_line[k] - strlen(st->members_line[k]), " %.1f", cap[i]);
  double ideal = krn_ideal_makespan(krn_job_nchunks(j), nm, cap, NULL);
  /* the failure time: a chosen fraction of the ideal makespan, or drawn from the seed */
  double frac = st->o.fail_at;
  if (frac < 0) {
    uint64_t z = st->o.seed * 0x9e3779b97f4a7c15ULL + (uint64_t)k;
    z = (z ^ (z >> 31)) * 0xbf58476d1ce4e5b9ULL;
    frac = 0.2 + 0.6 * (double)(z >> 11) * 0x1.0p-53;
  }
  int fm = st->o.fail_member < nm ? st->o.fail_member : 0;
  /* The dynamic run without failure goes first: it shows what the members give while all work
   * (printed beside the capacities measured alone). Each run's ideal uses the capacities its
   * members showed in that run (krn_run_opts.reference left NULL): the load of a shared machine
   * drifts between runs, and after a failure the survivors of a CPU cluster speed up. */
  static const krn_strategy order[KRN_NSTRATEGIES] = {KRN_DYNAMIC,   KRN_EVEN,       KRN_WEIGHTED,
                                                      KRN_REDUNDANT, KRN_CHECKPOINT, KRN_SPECULATIVE};
  for (int oi = 0; oi < KRN_NSTRATEGIES; oi++) {
    int s = (int)order[oi];
    if (!st->o.strategies[s] && s != KRN_DYNAMIC) continue;
    for (int fail = 0; fail <= 1; fail++) {
      if (!st->o.strategies[s] && fail) break; /* dynamic only as the reference */
      double fail_at[KRN_MAX_MEMBERS];
      for (int i = 0; i < nm; i++) fail_at[i] = -1;
      if (fail) fail_at[fm] = frac * ideal;
      krn_run_opts ro = {.strategy = (krn_strategy)s,
                         .replicas = st->o.replicas,
                         .detect_s = st->o.detect_s,
                         .capacity = cap,
                         .fail_at_s = fail ? fail_at : NULL};
      krn_run_result res;
      fprintf(stderr, "  %s: %s%s...\n", krn_kernel_name(k), krn_strategy_name(ro.strategy),
              fail ? " with a failure" : "");
      rc = krn_cluster_run(cl, j, &ro, &res);
      if (rc) {
        fprintf(stderr, "spotlab bench kernels: %s %s: %s\n", krn_kernel_name(k), krn_strategy_name(ro.strategy),
                krn_strerror(rc));
        goto out;
      }
      krn_job_finish(j);
      if (s == KRN_DYNAMIC && !fail) {
        /* what the members gave while all worked (dynamic keeps them all busy) */
        size_t l = strlen(st->members_line[k]);
        snprintf(st->members_line[k] + l, sizeof st->members_line[k] - l, "; together (dynamic run):");
        double sa = 0, sc = 0;
        for (int i = 0; i < nm; i++) {
          l = strlen(st->members_line[k]);
          snprintf(st->members_line[k] + l, sizeof st->members_line[k] - l, " %.1f", res.capacity[i]);
          sa += cap[i];
          sc += res.capacity[i];
        }
        st->contention[k] = sc / sa;
      }
      if (!st->o.strategies[s]) continue; /* the reference run of an unselected dynamic */
      bk_row *r = bk_add(st, k, krn_strategy_name(ro.strategy), fail ? "failure" : "no-failure");
      if (!r) continue;
      r->members = nm;
      r->makespan_s = res.makespan_s;
      r->ideal_s = res.ideal_s;
      r->efficiency = res.efficiency;
      r->work_lost_s = res.work_lost_s;
      r->chunks_lost = (int64_t)res.chunks_lost;
      r->recovery_s = fail ? res.recovery_s : NAN;
      double work = krn_job_kind(j) == KRN_TRIAD ? krn_job_bytes(j) : krn_job_flops(j);
      r->rate = work / res.makespan_s * 1e-9;
      r->verified = bk_verify(st, j, krn_strategy_name(ro.strategy));
      if (want && memcmp(want, krn_job_out(j), len * sizeof(float))) {
        fprintf(stderr, "spotlab bench kernels: %s %s: result differs from the twin's bit for bit\n",
                krn_kernel_name(k), krn_strategy_name(ro.strategy));
        r->verified = 0;
        st->bad = 1;
      }
      st->eff[s][fail] += res.efficiency;
      st->eff_n[s][fail] += 1;
      if (fail) {
        st->recovery[s] += res.recovery_s;
        st->lost[s] += res.work_lost_s;
        st->rec_n[s] += 1;
      }
    }
  }
out:
  free(want);
  krn_job_destroy(j);
  return rc;
}

/* Per-chunk overhead of the dynamic strategy: one full-speed member, chunks of almost no work. */
static int bk_overhead(bk_state *st) {
  krn_exec *e = NULL;
  int rc;
  int gpu = st->gpu != NULL;
  if (gpu)
    rc = krn_exec_gpu_create(st->gpu, "overhead", 0, 1.0, &e, NULL);
  else
    rc = krn_exec_cpu_create("overhead", 1.0, 1, &e);
  if (rc) return rc;
  krn_cluster *cl = NULL;
  krn_job *j = NULL;
  krn_dims d = {.n = 20000, .nchunks = 20000};
  if ((rc = krn_cluster_create(&e, 1, &cl)) || (rc = krn_job_create(KRN_TRIAD, &d, 3, &j))) goto out;
  if (gpu && (rc = krn_gpu_upload(st->gpu, j))) goto out;
  krn_run_opts ro = {.strategy = KRN_DYNAMIC};
  krn_run_result res;
  if ((rc = krn_cluster_run(cl, j, &ro, &res))) goto out;
  st->chunk_overhead_s = res.makespan_s / (double)d.nchunks;
out:
  krn_job_destroy(j);
  krn_cluster_destroy(cl);
  krn_exec_destroy(e);
  return rc;
}

static void bk_print(const bk_state *st) {
  printf("\nspotlab bench kernels on %s\n\n", st->device);
  printf("%-6s %-11s %-10s %3s %10s %10s %6s %9s %5s %9s %10s %6s %s\n", "kernel", "strategy", "scenario", "mem",
         "makespan_s", "ideal_s", "eff", "lost_s", "lost", "recov_s", "rate", "peak", "ok");
  for (int i = 0; i < st->nrows; i++) {
    const bk_row *r = &st->rows[i];
    char eff[24] = "-", lost[24] = "-", nlost[24] = "-", rec[24] = "-", ideal[24] = "-", peak[24] = "-";
    if (!isnan(r->efficiency)) snprintf(eff, sizeof eff, "%.3f", r->efficiency);
    if (!isnan(r->ideal_s)) snprintf(ideal, sizeof ideal, "%.4f", r->ideal_s);
    if (!isnan(r->work_lost_s)) snprintf(lost, sizeof lost, "%.4f", r->work_lost_s);
    if (r->chunks_lost >= 0) snprintf(nlost, sizeof nlost, "%lld", (long long)(r->chunks_lost % 100000000));
    if (!isnan(r->recovery_s)) snprintf(rec, sizeof rec, "%.4f", r->recovery_s);
    if (!isnan(r->peak_fraction)) snprintf(peak, sizeof peak, "%.3f", r->peak_fraction);
    char rate[24];
    snprintf(rate, sizeof rate, "%.1f %s", r->rate, !strcmp(r->kernel, "triad") ? "GB/s" : "GF/s");
    printf("%-6s %-11s %-10s %3d %10.4f %10s %6s %9s %5s %9s %10s %6s %s\n", r->kernel, r->strategy, r->scenario,
           r->members, r->makespan_s, ideal, eff, lost, nlost, rec, rate, peak, r->verified ? "yes" : "NO");
  }
  /* the ratios to quote */
  printf("\n");
  for (int k = 0; k < KRN_NKERNELS; k++) {
    const bk_row *a = NULL, *b = NULL;
    for (int i = 0; i < st->nrows; i++) {
      const bk_row *r = &st->rows[i];
      if (strcmp(r->kernel, krn_kernel_name((krn_kernel)k)) || strcmp(r->scenario, "device")) continue;
      if (!strcmp(r->strategy, "twin") || !strcmp(r->strategy, "kernel"))
        a = r;
      else
        b = r;
    }
    if (a && b)
      printf("%s: %s / %s = %.2fx\n", krn_kernel_name((krn_kernel)k), a->strategy, b->strategy, a->rate / b->rate);
  }
  if (st->gpu && st->stream_bw > 0)
    printf("triad: %.1f%% of the 3661 GB/s triad measured on an H200\n", 100.0 * st->stream_bw / 3661.0);
  for (int s = 0; s < KRN_NSTRATEGIES; s++)
    if (st->eff_n[s][0] > 0)
      printf("%-11s mean efficiency %.3f without failure, %.3f with one (recovery %.4f s, lost %.4f member-s)\n",
             krn_strategy_name((krn_strategy)s), st->eff[s][0] / st->eff_n[s][0],
             st->eff_n[s][1] > 0 ? st->eff[s][1] / st->eff_n[s][1] : NAN,
             st->rec_n[s] > 0 ? st->recovery[s] / st->rec_n[s] : NAN,
             st->rec_n[s] > 0 ? st->lost[s] / st->rec_n[s] : NAN);
  for (int k = 0; k < KRN_NKERNELS; k++)
    if (st->contention[k] > 0) printf("%s (sum together/alone = %.3f)\n", st->members_line[k], st->contention[k]);
  if (st->chunk_overhead_s > 0)
    printf("per-chunk scheduling overhead (dynamic, 1 member, empty chunks): %.2f us\n", st->chunk_overhead_s * 1e6);
}

static int bk_calib(const bk_state *st) {
  char slug[96], path[1024], note[8][200];
  krn_slug(st->model, slug, sizeof slug);
  int n = snprintf(path, sizeof path, "%s/%s%s.csv", st->o.calib_dir, st->gpu ? "" : "cpu-", slug);
  if (n < 0 || (size_t)n >= sizeof path) return KRN_EINVAL;
  const char *spread = st->gpu ? "green-context partitions" : "duty-cycled thread groups";
  snprintf(note[0], sizeof note[0], "triad a=b+s*c float, 3 arrays counted, whole device");
  snprintf(note[1], sizeof note[1], "mean over kernels (%s), %d members, measured capacity ratio %.1f, no failure",
           spread, st->gpu ? st->o.nsms : st->o.members, st->cap_ratio);
  if (st->o.fail_at < 0)
    snprintf(note[2], sizeof note[2],
             "mean over kernels, member %d fails at a random fraction (seed %llu) of the ideal makespan",
             st->o.fail_member, st->o.seed);
  else
    snprintf(note[2], sizeof note[2], "mean over kernels, member %d fails at %.2f of the ideal makespan",
             st->o.fail_member, st->o.fail_at);
  snprintf(note[3], sizeof note[3], "dynamic strategy, 1 member, 20000 chunks of 1 element");
  snprintf(note[4], sizeof note[4],
           "dynamic strategy: failure to lost work committed again, detection delay %.3g s, mean over kernels",
           st->o.detect_s);
  double e[KRN_NSTRATEGIES][2];
  for (int s = 0; s < KRN_NSTRATEGIES; s++)
    for (int f = 0; f < 2; f++) e[s][f] = st->eff_n[s][f] > 0 ? st->eff[s][f] / st->eff_n[s][f] : NAN;
  double rec = st->rec_n[KRN_DYNAMIC] > 0 ? st->recovery[KRN_DYNAMIC] / st->rec_n[KRN_DYNAMIC] : NAN;
  double ckrec = st->rec_n[KRN_CHECKPOINT] > 0 ? st->recovery[KRN_CHECKPOINT] / st->rec_n[KRN_CHECKPOINT] : NAN;
  krn_calib_row rows[] = {
      {"stream_bw_gbs", st->stream_bw > 0 ? st->stream_bw : NAN, "GB/s", note[0]},
      {"gemm_gflops", st->gemm_gflops > 0 ? st->gemm_gflops : NAN, "GFLOP/s", "spotlab SGEMM, whole device"},
      {"gemm_cublas_gflops", st->cublas_gflops > 0 ? st->cublas_gflops : NAN, "GFLOP/s", "cuBLAS SGEMM, same sizes"},
      {"mlp_step_s", st->mlp_step_s > 0 ? st->mlp_step_s : NAN, "s", st->mlp_note},
      {"even_split_efficiency", e[KRN_EVEN][0], "1", note[1]},
      {"weighted_split_efficiency", e[KRN_WEIGHTED][0], "1", note[1]},
      {"dynamic_efficiency", e[KRN_DYNAMIC][0], "1", note[1]},
      {"redundant_efficiency", e[KRN_REDUNDANT][0], "1", note[1]},
      {"speculative_efficiency", e[KRN_SPECULATIVE][0], "1", note[1]},
      {"checkpoint_efficiency", e[KRN_CHECKPOINT][0], "1", note[1]},
      {"even_split_efficiency_failure", e[KRN_EVEN][1], "1", note[2]},
      {"weighted_split_efficiency_failure", e[KRN_WEIGHTED][1], "1", note[2]},
      {"dynamic_efficiency_failure", e[KRN_DYNAMIC][1], "1", note[2]},
      {"redundant_efficiency_failure", e[KRN_REDUNDANT][1], "1", note[2]},
      {"speculative_efficiency_failure", e[KRN_SPECULATIVE][1], "1", note[2]},
      {"checkpoint_efficiency_failure", e[KRN_CHECKPOINT][1], "1", note[2]},
      {"chunk_overhead_s", st->chunk_overhead_s > 0 ? st->chunk_overhead_s : NAN, "s", note[3]},
      {"recovery_time_s", rec, "s", note[4]},
      {"checkpoint_recovery_time_s", ckrec, "s",
       "checkpoint strategy: failure to the rolled-back work committed again"},
      {"member_capacity_ratio", st->cap_ratio, "1", "fastest/slowest member capacity measured alone (gemm)"},
      {"host_load_1min", st->load1, "1",
       "1-minute load average when the benchmark started (others' jobs share the machine)"},
      {"contention_factor_triad", st->contention[KRN_TRIAD] > 0 ? st->contention[KRN_TRIAD] : NAN, "1",
       "sum of member capacities while all work (dynamic run) / measured one at a time"},
      {"contention_factor_gemm", st->contention[KRN_GEMM] > 0 ? st->contention[KRN_GEMM] : NAN, "1",
       "sum of member capacities while all work (dynamic run) / measured one at a time"},
      {"contention_factor_mlp", st->contention[KRN_MLP] > 0 ? st->contention[KRN_MLP] : NAN, "1",
       "sum of member capacities while all work (dynamic run) / measured one at a time"},
  };
  int rc = krn_calib_write(path, st->device, rows, sizeof rows / sizeof rows[0]);
  if (rc)
    fprintf(stderr, "spotlab bench kernels: cannot write %s: %s\n", path, krn_strerror(rc));
  else
    fprintf(stderr, "calibration written to %s\n", path);
  return rc;
}

static int bk_main(int argc, char **argv) {
  bk_state *st = calloc(1, sizeof *st);
  if (!st) return 1;
  if (bk_parse(argc, argv, &st->o)) {
    free(st);
    return 2;
  }
  int rc = st->o.out ? app_out_check(stderr, "bench kernels", st->o.out, NULL, 0, 0) : 0;
  if (rc) { /* before minutes of measurement, not after */
    free(st);
    return rc;
  }
  if (!st->o.cpu_only) {
    char msg[256] = "";
    rc = krn_gpu_open(&st->gpu, msg, sizeof msg);
    if (rc) {
      fprintf(stderr, "spotlab bench kernels: %s: running the CPU twins only\n", msg);
      st->gpu = NULL;
    }
  }
  if (st->gpu) {
    krn_gpu_get_info(st->gpu, &st->info);
    snprintf(st->device, sizeof st->device, "%s", st->info.name);
    snprintf(st->model, sizeof st->model, "%s", st->info.name);
  } else {
    bk_cpu_name(st->model, sizeof st->model);
    snprintf(st->device, sizeof st->device, "%s (%d threads)", st->model, omp_get_max_threads());
  }
  int nm_expected = st->gpu ? st->o.nsms : st->o.members;
  if (st->o.fail_member >= nm_expected || st->o.replicas > nm_expected) {
    fprintf(stderr, "spotlab bench kernels: --fail-member %d / --replicas %d: the %s cluster has %d members\n",
            st->o.fail_member, st->o.replicas, st->gpu ? "GPU (--sms)" : "CPU", nm_expected);
    krn_gpu_close(st->gpu);
    free(st);
    return 2;
  }
  if (getloadavg(&st->load1, 1) != 1) st->load1 = NAN;
  fprintf(stderr, "spotlab bench kernels: device %s (load average %.2f)\n", st->device, st->load1);
  rc = 0;
  for (int k = 0; k < KRN_NKERNELS && !rc; k++)
    if (st->o.kernels[k]) rc = bk_whole(st, (krn_kernel)k);
  krn_exec *m[KRN_MAX_MEMBERS];
  int nm = 0;
  krn_cluster *cl = NULL;
  if (!rc) rc = bk_make_members(st, m, &nm);
  if (!rc) {
    if ((rc = krn_cluster_create(m, nm, &cl)) == 0) {
      for (int k = 0; k < KRN_NKERNELS && !rc; k++)
        if (st->o.kernels[k]) rc = bk_cluster(st, (krn_kernel)k, cl, nm);
      krn_cluster_destroy(cl);
    }
    for (int i = 0; i < nm; i++) krn_exec_destroy(m[i]);
  }
  if (!rc) rc = bk_overhead(st);
  if (rc) fprintf(stderr, "spotlab bench kernels: %s\n", krn_strerror(rc));
  bk_print(st);
  int status = rc || st->bad ? 1 : 0;
  char werr[600];
  if (st->o.out && bk_write_h5(st->o.out, st->device, st->rows, st->nrows, werr, sizeof werr)) {
    fprintf(stderr, "spotlab bench kernels: %s\n", werr);
    status = 1;
  }
  if (!rc && !st->o.no_calib && bk_calib(st)) status = 1;
  krn_gpu_close(st->gpu);
  free(st);
  return status;
}

static const app_command bk_cmd = {"bench kernels", "GPU kernels, CPU twins and clustering strategies on weak members",
                                   bk_main};
APP_COMMAND(bk_cmd)
