/* mkt_data.c - loaders for the market's data files: data/gpus.csv, the Failure Trace Archive fits
 * and the two Alibaba traces (schemas in shared/data/README.md), all through sim/csvfile.h (libcsv).
 * Every error names file and line. Columns are found by their header names when the header has
 * them all, else at their documented positions. */
#include "models/market/mkt.h"
#include "sim/csvfile.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

static int mkt__num(const char *s, double *v) { return sim_csv_num(s, v); }

/* Opens a data file through the one CSV reader (sim/csvfile.h) with its header row. */
static int mkt__open(sim_csv **c, const char *path, unsigned flags, const char *what, char *err, size_t errlen) {
  return sim_csv_open(c, path, flags | SIM_CSV_HEADER, what, err, errlen);
}

int mkt_gpu_find(const mkt_gpu *g, size_t n, const char *name) {
  for (size_t i = 0; i < n; i++)
    if (name && !strcmp(g[i].name, name)) return (int)i;
  return -1;
}

/* The columns of gpus.csv the market reads (price_source, price_date and source are for people). */
static const sim_csv_col mkt__gpu_cols[] = {{"name", 0},        {"class", 1},    {"fp16_tflops", 2},
                                            {"fp32_tflops", 3}, {"mem_gb", 4},   {"bw_gbs", 5},
                                            {"pl_min_w", 6},    {"pl_max_w", 7}, {"ref_price_usd_h", 8}};
/* Columns added in issue 46, read only when the header names them (a table written before then, or
 * one of a user's own, loads without them: power_w = pl_max_w, no interruptible price). */
static const sim_csv_col mkt__gpu_opt[] = {{"power_w", 11}, {"interruptible_usd_h", 12}};

int mkt_gpus_load(const char *path, mkt_gpu **out, size_t *n, char *err, size_t errlen) {
  sim_csv *c;
  int rc = mkt__open(&c, path, SIM_CSV_COMMENTS, "GPU table", err, errlen);
  if (rc) return rc;
  size_t cap = 0, cnt = 0, col[9], need, ocol[2], oneed;
  sim_csv_columns(c, mkt__gpu_cols, 9, col, &need);
  int opt = sim_csv_columns(c, mkt__gpu_opt, 2, ocol, &oneed) == 1;
  if (opt && oneed > need) need = oneed;
  mkt_gpu *g = NULL;
  sim_csv_row row;
  int more;
  while ((more = sim_csv_next(c, &row, err, errlen)) > 0) {
    const char *const *fl = row.f;
    long lineno = row.line;
    if (row.n < need) {
      rc = spotlab_errf(err, errlen, MKT_EFORMAT, "%s:%ld: expected at least %zu fields, found %zu", path, lineno, need,
                        row.n);
      break;
    }
    if (cnt == cap) {
      cap = cap ? 2 * cap : 32;
      mkt_gpu *ng = realloc(g, cap * sizeof *ng);
      if (!ng) {
        rc = MKT_ENOMEM;
        break;
      }
      g = ng;
    }
    mkt_gpu *r = &g[cnt];
    memset(r, 0, sizeof *r);
    const char *name = fl[col[0]];
    if (strlen(name) == 0 || strlen(name) >= sizeof r->name) {
      rc = spotlab_errf(err, errlen, MKT_EFORMAT, "%s:%ld: GPU name must have 1 to 15 characters", path, lineno);
      break;
    }
    strcpy(r->name, name);
    r->datacenter = !strcmp(fl[col[1]], "datacenter");
    double *dst[] = {&r->fp16_tflops, &r->fp32_tflops, &r->mem_gb,         &r->bw_gbs,
                     &r->pl_min_w,    &r->pl_max_w,    &r->ref_price_usd_h};
    for (int k = 0; k < 7 && rc == MKT_OK; k++)
      if (mkt__num(fl[col[2 + k]], dst[k]) || *dst[k] <= 0)
        rc = spotlab_errf(err, errlen, MKT_EFORMAT, "%s:%ld: %s '%s' is not a positive number", path, lineno,
                          mkt__gpu_cols[2 + k].name, fl[col[2 + k]]);
    r->power_w = r->pl_max_w;
    for (int k = 0; k < 2 && opt && rc == MKT_OK; k++) {
      double *o = k ? &r->interruptible_usd_h : &r->power_w;
      if (mkt__num(fl[ocol[k]], o) || *o <= 0)
        rc = spotlab_errf(err, errlen, MKT_EFORMAT, "%s:%ld: %s '%s' is not a positive number", path, lineno,
                          mkt__gpu_opt[k].name, fl[ocol[k]]);
    }
    if (rc == MKT_OK && r->pl_min_w > r->pl_max_w)
      rc = spotlab_errf(err, errlen, MKT_EFORMAT, "%s:%ld: pl_min_w > pl_max_w", path, lineno);
    if (rc == MKT_OK && r->interruptible_usd_h > r->ref_price_usd_h)
      rc = spotlab_errf(err, errlen, MKT_EFORMAT,
                        "%s:%ld: interruptible_usd_h %g is above the on-demand ref_price_usd_h %g", path, lineno,
                        r->interruptible_usd_h, r->ref_price_usd_h);
    if (rc == MKT_OK && mkt_gpu_find(g, cnt, r->name) >= 0)
      rc = spotlab_errf(err, errlen, MKT_EFORMAT, "%s:%ld: GPU '%s' listed twice", path, lineno, r->name);
    if (rc) break;
    cnt++;
  }
  if (more < 0) rc = more;
  sim_csv_close(c);
  if (rc == MKT_OK && cnt == 0) rc = spotlab_errf(err, errlen, MKT_EFORMAT, "%s: no GPU rows", path);
  if (rc) {
    free(g);
    return rc;
  }
  *out = g;
  *n = cnt;
  return MKT_OK;
}

static int mkt__push(mkt_trace_job **v, size_t *n, size_t *cap, const mkt_trace_job *j) {
  if (*n == *cap) {
    size_t c = *cap ? 2 * *cap : 1024;
    mkt_trace_job *nv = realloc(*v, c * sizeof *nv);
    if (!nv) return MKT_ENOMEM;
    *v = nv;
    *cap = c;
  }
  (*v)[(*n)++] = *j;
  return MKT_OK;
}

static int mkt__job_cmp(const void *a, const void *b) {
  const mkt_trace_job *x = a, *y = b;
  return x->submit_s < y->submit_s ? -1 : (x->submit_s > y->submit_s);
}

const char *const mkt_trace_reason_names[MKT_TR_NREASONS] = {"cpu_only",        "pending",  "no_run_time",  "bad_times",
                                                             "fractional_gpus", "too_wide", "not_succeeded"};

/* The end of a load: no usable row is an error that says why each row went; else sorted. */
static int mkt__trace_done(const char *path, mkt_trace_job *v, size_t cnt, const mkt_trace_stats *st,
                           mkt_trace_job **out, size_t *n, char *err, size_t errlen) {
  if (cnt == 0) {
    char why[512] = "";
    size_t o = 0;
    for (int r = 0; r < MKT_TR_NREASONS; r++)
      if (st->dropped[r] && o < sizeof why)
        o += (size_t)snprintf(why + o, sizeof why - o, "%s%zu %s", o ? ", " : "", st->dropped[r],
                              mkt_trace_reason_names[r]);
    free(v);
    return spotlab_errf(err, errlen, MKT_EFORMAT, "%s: no usable row (%zu data rows%s%s)", path, st->rows,
                        o ? ": " : "", why);
  }
  if (cnt > 1) qsort(v, cnt, sizeof *v, mkt__job_cmp);
  *out = v;
  *n = cnt;
  return MKT_OK;
}

/* The pod trace's columns (cluster-trace-gpu-v2023: name,cpu_milli,memory_mib,num_gpu,gpu_milli,
 * gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time). */
enum { POD_NUM_GPU, POD_GPU_MILLI, POD_QOS, POD_PHASE, POD_CREATE, POD_DELETE, POD_SCHED, POD_NCOLS };
static const sim_csv_col mkt__pod_cols[POD_NCOLS] = {{"num_gpu", 3},        {"gpu_milli", 4},     {"qos", 6},
                                                     {"pod_phase", 7},      {"creation_time", 8}, {"deletion_time", 9},
                                                     {"scheduled_time", 10}};

int mkt_trace_load_alibaba_pods(const char *path, mkt_trace_job **out, size_t *n, mkt_trace_stats *stp, char *err,
                                size_t errlen) {
  mkt_trace_stats st0, *st = stp ? stp : &st0;
  memset(st, 0, sizeof *st);
  sim_csv *c;
  int rc = mkt__open(&c, path, 0, "trace file", err, errlen);
  if (rc) return rc;
  size_t cnt = 0, cap = 0, col[POD_NCOLS], need;
  sim_csv_columns(c, mkt__pod_cols, POD_NCOLS, col, &need);
  mkt_trace_job *v = NULL;
  sim_csv_row row;
  int more;
  while ((more = sim_csv_next(c, &row, err, errlen)) > 0) {
    st->rows++;
    const char *const *fl = row.f;
    if (row.n < need) {
      rc = spotlab_errf(err, errlen, MKT_EFORMAT, "%s:%ld: expected at least %zu fields, found %zu", path, row.line,
                        need, row.n);
      break;
    }
    double ngpu, milli, create, del, sched;
    if (mkt__num(fl[col[POD_NUM_GPU]], &ngpu) || mkt__num(fl[col[POD_GPU_MILLI]], &milli) ||
        mkt__num(fl[col[POD_CREATE]], &create)) {
      rc = spotlab_errf(err, errlen, MKT_EFORMAT, "%s:%ld: num_gpu, gpu_milli or creation_time not a number", path,
                        row.line);
      break;
    }
    mkt_trace_reason why = MKT_TR_NREASONS;
    int has_del = !mkt__num(fl[col[POD_DELETE]], &del), has_sched = !mkt__num(fl[col[POD_SCHED]], &sched);
    int timed = has_del && has_sched; /* both parsed, whatever the first gives */
    if (ngpu == 0)
      why = MKT_TR_CPU_ONLY;
    else if (ngpu < 0 || create < 0 || (timed && (del < 0 || sched < 0 || sched < create)))
      why = MKT_TR_BAD_TIMES;
    else if (ngpu != floor(ngpu))
      why = MKT_TR_FRACTIONAL;
    else if (ngpu > MKT_TRACE_MAX_GPUS)
      why = MKT_TR_TOO_WIDE;
    else if (!strcmp(fl[col[POD_PHASE]], "Pending") || !timed)
      why = MKT_TR_PENDING;
    else if (del - sched <= 0)
      why = MKT_TR_NO_RUN_TIME;
    if (why != MKT_TR_NREASONS) {
      st->dropped[why]++;
      continue;
    }
    mkt_trace_job j;
    j.submit_s = create;
    j.dur_s = del - sched;
    /* gpu_milli is the per-GPU share in thousandths: a share of a GPU still rents a whole one (an
     * ASSUMPTION: the market rents whole GPUs; Alibaba's GPU sharing is not modelled) */
    j.gpus = (uint32_t)ngpu;
    const char *qos = fl[col[POD_QOS]];
    j.cls = !strcmp(qos, "LS") ? 1 : !strcmp(qos, "BE") ? 2 : 0;
    if ((rc = mkt__push(&v, &cnt, &cap, &j))) break;
    st->used++;
  }
  if (more < 0) rc = more;
  sim_csv_close(c);
  if (rc) {
    free(v);
    return rc;
  }
  return mkt__trace_done(path, v, cnt, st, out, n, err, errlen);
}

/* The GenAI trace's columns (cluster-trace-v2026: gmt_create,predict_type,predict_status,
 * exec_time_seconds,...). */
enum { GEN_CREATE, GEN_STATUS, GEN_EXEC, GEN_NCOLS };
static const sim_csv_col mkt__genai_cols[GEN_NCOLS] = {
    {"gmt_create", 0}, {"predict_status", 2}, {"exec_time_seconds", 3}};

int mkt_trace_load_genai(const char *path, mkt_trace_job **out, size_t *n, mkt_trace_stats *stp, char *err,
                         size_t errlen) {
  mkt_trace_stats st0, *st = stp ? stp : &st0;
  memset(st, 0, sizeof *st);
  sim_csv *c;
  int rc = mkt__open(&c, path, 0, "trace file", err, errlen);
  if (rc) return rc;
  size_t cnt = 0, cap = 0, col[GEN_NCOLS], need;
  sim_csv_columns(c, mkt__genai_cols, GEN_NCOLS, col, &need);
  mkt_trace_job *v = NULL;
  double t0 = NAN;
  sim_csv_row row;
  int more;
  while ((more = sim_csv_next(c, &row, err, errlen)) > 0) {
    st->rows++;
    const char *const *fl = row.f;
    if (row.n < need) {
      rc = spotlab_errf(err, errlen, MKT_EFORMAT, "%s:%ld: expected at least %zu fields, found %zu", path, row.line,
                        need, row.n);
      break;
    }
    if (strcmp(fl[col[GEN_STATUS]], "SUCCEED")) {
      st->dropped[MKT_TR_NOT_SUCCEEDED]++;
      continue;
    }
    struct tm tm;
    memset(&tm, 0, sizeof tm);
    double ex;
    if (sscanf(fl[col[GEN_CREATE]], "%d-%d-%d %d:%d:%d", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour, &tm.tm_min,
               &tm.tm_sec) != 6 ||
        mkt__num(fl[col[GEN_EXEC]], &ex)) {
      rc = spotlab_errf(err, errlen, MKT_EFORMAT, "%s:%ld: bad gmt_create or exec_time_seconds", path, row.line);
      break;
    }
    if (tm.tm_year < 1970 || tm.tm_year > 2100 || tm.tm_mon < 1 || tm.tm_mon > 12 || tm.tm_mday < 1 ||
        tm.tm_mday > 31 || tm.tm_hour > 23 || tm.tm_min > 59 || tm.tm_sec > 60 || tm.tm_hour < 0 || tm.tm_min < 0 ||
        tm.tm_sec < 0 || ex < 0) {
      st->dropped[MKT_TR_BAD_TIMES]++;
      continue;
    }
    tm.tm_year -= 1900;
    tm.tm_mon -= 1;
    double t = (double)timegm(&tm);
    if (isnan(t0)) t0 = t;
    mkt_trace_job j = {t - t0, ex > 1 ? ex : 1, 1, 1};
    if ((rc = mkt__push(&v, &cnt, &cap, &j))) break;
    st->used++;
  }
  if (more < 0) rc = more;
  sim_csv_close(c);
  if (rc) {
    free(v);
    return rc;
  }
  rc = mkt__trace_done(path, v, cnt, st, out, n, err, errlen);
  if (rc) return rc;
  double first = (*out)[0].submit_s; /* the file is not strictly sorted */
  for (size_t i = 0; i < cnt; i++) (*out)[i].submit_s -= first;
  return MKT_OK;
}

int mkt_gpu_match(const mkt_gpu *g, size_t n, const char *device) {
  /* words: maximal runs of letters and digits, lower-cased */
  char w[32][32];
  unsigned nw = 0;
  for (const char *p = device ? device : ""; *p && nw < 32;) {
    if (!isalnum((unsigned char)*p)) {
      p++;
      continue;
    }
    unsigned k = 0;
    while (isalnum((unsigned char)*p)) {
      if (k + 1 < sizeof w[0]) w[nw][k++] = (char)tolower((unsigned char)*p);
      p++;
    }
    w[nw++][k] = '\0';
  }
  int best = -1;
  size_t bestlen = 0;
  for (size_t m = 0; m < n; m++) {
    size_t len = strlen(g[m].name);
    if (len <= bestlen) continue;
    for (unsigned a = 0; a < nw; a++) { /* does a run of words starting at a spell the name? */
      size_t off = 0;
      for (unsigned b = a; b < nw && off < len; b++) {
        size_t wl = strlen(w[b]);
        if (off + wl > len || strncasecmp(g[m].name + off, w[b], wl)) break;
        off += wl;
      }
      if (off == len) {
        best = (int)m;
        bestlen = len;
        break;
      }
    }
  }
  return best;
}

/* A kernels calibration file: key,value,unit,device,note (kernels/krn_calib.c writes it), or a
 * lab calibration (lab/lab_calib.c, JOURNAL.calib.csv: the same layout), whose contention table
 * colocated_speed_factor_K (f(K), K = 1..n, every K present) becomes the cluster model's coloc[].
 * Positional: the header row is recognised by its first field "key" wherever it is (files may be
 * joined). */
int mkt_calibration_load(const char *path, sched_cluster_params *cp, mkt_calib_info *info, char *err, size_t len) {
  if (info) memset(info, 0, sizeof *info);
  double gemm = 0, cublas = 0;
  sched_cluster_params nc = *cp; /* *cp changes only when the whole file is good */
  double coloc[SCHED_MAX_COLOC];
  long coloc_line[SCHED_MAX_COLOC] = {0};
  unsigned ncoloc = 0;
  sim_csv *c;
  int rc = sim_csv_open(&c, path, SIM_CSV_COMMENTS, "calibration file", err, len);
  if (rc) return rc;
  sim_csv_row row;
  while ((rc = sim_csv_next(c, &row, err, len)) > 0) {
    const char *key = row.f[0];
    if (!strcmp(key, "key")) continue; /* the header */
    if (row.n < 2) {
      rc = spotlab_errf(err, len, MKT_EFORMAT, "%s:%ld: expected key,value,unit,device,note", path, row.line);
      break;
    }
    const char *val = row.f[1];
    if (info && row.n >= 4 && !info->device[0]) snprintf(info->device, sizeof info->device, "%s", row.f[3]);
    double *dst = NULL, lo = 0, hi = 1, v;
    if (!strcmp(key, "gemm_gflops")) {
      dst = &gemm;
      hi = 1e9;
    } else if (!strcmp(key, "gemm_cublas_gflops")) {
      dst = &cublas;
      hi = 1e9;
    } else if (!strcmp(key, "even_split_efficiency"))
      dst = &nc.even_eff;
    else if (!strcmp(key, "weighted_split_efficiency"))
      dst = &nc.weighted_eff;
    else if (!strcmp(key, "dynamic_efficiency"))
      dst = &nc.dynamic_eff;
    else if (!strcmp(key, "chunk_overhead_s")) {
      dst = &nc.chunk_overhead_s;
      hi = 3600;
    } else if (!strncmp(key, "colocated_speed_factor_", 23)) {
      char *end;
      unsigned long k = strtoul(key + 23, &end, 10);
      if (*end || end == key + 23 || k < 1 || k > SCHED_MAX_COLOC) {
        rc = spotlab_errf(err, len, MKT_EFORMAT, "%s:%ld: key '%s': expected colocated_speed_factor_K, K in 1..%d",
                          path, row.line, key, SCHED_MAX_COLOC);
        break;
      }
      if (coloc_line[k - 1]) {
        rc = spotlab_errf(err, len, MKT_EFORMAT, "%s:%ld: %s given twice (first on line %ld)", path, row.line, key,
                          coloc_line[k - 1]);
        break;
      }
      coloc_line[k - 1] = row.line;
      if (k > ncoloc) ncoloc = (unsigned)k;
      dst = &coloc[k - 1];
      hi = 64; /* a measured f(k) can exceed 1 a little (noise); 64 is a sanity bound */
    }
    if (!dst) continue; /* keys for other models */
    if (mkt__num(val, &v) || !(v > lo && v <= hi)) {
      rc = spotlab_errf(err, len, MKT_EFORMAT, "%s:%ld: %s = '%s' is not a number in (%g, %g]", path, row.line, key,
                        val, lo, hi);
      break;
    }
    *dst = v;
  }
  sim_csv_close(c);
  if (rc) return rc;
  for (unsigned k = 0; k < ncoloc; k++)
    if (!coloc_line[k])
      return spotlab_errf(err, len, MKT_EFORMAT,
                          "%s: colocated_speed_factor_%u is given but colocated_speed_factor_%u is not", path, ncoloc,
                          k + 1);
  if (ncoloc) {
    memcpy(nc.coloc, coloc, ncoloc * sizeof *coloc);
    nc.ncoloc = ncoloc;
  }
  *cp = nc;
  if (info) {
    info->sgemm_gflops = cublas > 0 ? cublas : gemm;
    info->ncoloc = ncoloc;
  }
  return 0;
}
