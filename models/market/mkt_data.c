/* mkt_data.c - loaders for the market's data files: data/gpus.csv, the Failure Trace Archive fits
 * and the two Alibaba traces (schemas in shared/data/README.md). Every error names file and line. */
#include "models/market/mkt.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <sys/stat.h>

static int mkt__err(char *err, size_t len, int code, const char *fmt, ...) {
  if (err && len) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, len, fmt, ap);
    va_end(ap);
  }
  return code;
}

/* Splits a CSV line in place on commas, with RFC 4180 quoting as spreadsheets and pandas write
 * it: a field may be enclosed in double quotes, inside which a comma is text and "" is one quote.
 * An unterminated quote runs to the end of the line. Returns the field count. */
static size_t mkt__split(char *line, char **f, size_t max) {
  size_t n = 0;
  line[strcspn(line, "\r\n")] = 0;
  char *p = line;
  while (n < max) {
    char *w = p; /* the field is rewritten in place, unquoted */
    f[n++] = w;
    int quoted = *p == '"';
    if (quoted) p++;
    for (;;) {
      if (quoted && *p == '"') {
        if (p[1] == '"') { *w++ = '"'; p += 2; continue; } /* "" inside quotes */
        quoted = 0;                                         /* the closing quote */
        p++;
        continue;
      }
      if (!*p || (!quoted && *p == ',')) break;
      *w++ = *p++;
    }
    int more = *p == ',';
    *w = 0;
    if (!more) break;
    p++;
  }
  return n;
}

static int mkt__num(const char *s, double *v) {
  char *end;
  errno = 0;
  *v = strtod(s, &end);
  return (errno || end == s || *end || !isfinite(*v)) ? -1 : 0;
}

int mkt_gpu_find(const mkt_gpu *g, size_t n, const char *name) {
  for (size_t i = 0; i < n; i++)
    if (name && !strcmp(g[i].name, name)) return (int)i;
  return -1;
}

int mkt_gpus_load(const char *path, mkt_gpu **out, size_t *n, char *err, size_t errlen) {
  FILE *f = fopen(path, "r");
  if (!f) return mkt__err(err, errlen, MKT_EIO, "%s: cannot open: %s", path, strerror(errno));
  char line[1024];
  int lineno = 0, header = 0, rc = MKT_OK;
  size_t cap = 0, cnt = 0;
  mkt_gpu *g = NULL;
  while (fgets(line, sizeof line, f)) {
    lineno++;
    if (line[0] == '#' || line[strspn(line, " \t\r\n")] == 0) continue;
    if (!header) { header = 1; continue; }
    char *fl[12];
    size_t nf = mkt__split(line, fl, 12);
    if (nf < 9) { rc = mkt__err(err, errlen, MKT_EFORMAT, "%s:%d: expected 11 fields, found %zu", path, lineno, nf); break; }
    if (cnt == cap) {
      cap = cap ? 2 * cap : 32;
      mkt_gpu *ng = realloc(g, cap * sizeof *ng);
      if (!ng) { rc = MKT_ENOMEM; break; }
      g = ng;
    }
    mkt_gpu *r = &g[cnt];
    memset(r, 0, sizeof *r);
    if (strlen(fl[0]) == 0 || strlen(fl[0]) >= sizeof r->name) {
      rc = mkt__err(err, errlen, MKT_EFORMAT, "%s:%d: GPU name must have 1 to 15 characters", path, lineno);
      break;
    }
    strcpy(r->name, fl[0]);
    r->datacenter = !strcmp(fl[1], "datacenter");
    double *dst[] = {&r->fp16_tflops, &r->fp32_tflops, &r->mem_gb, &r->bw_gbs, &r->pl_min_w, &r->pl_max_w,
                     &r->ref_price_usd_h};
    static const char *names[] = {"fp16_tflops", "fp32_tflops", "mem_gb", "bw_gbs", "pl_min_w", "pl_max_w",
                                  "ref_price_usd_h"};
    for (int k = 0; k < 7 && rc == MKT_OK; k++)
      if (mkt__num(fl[2 + k], dst[k]) || *dst[k] <= 0)
        rc = mkt__err(err, errlen, MKT_EFORMAT, "%s:%d: %s '%s' is not a positive number", path, lineno,
                      names[k], fl[2 + k]);
    if (rc == MKT_OK && r->pl_min_w > r->pl_max_w)
      rc = mkt__err(err, errlen, MKT_EFORMAT, "%s:%d: pl_min_w > pl_max_w", path, lineno);
    if (rc == MKT_OK && mkt_gpu_find(g, cnt, r->name) >= 0)
      rc = mkt__err(err, errlen, MKT_EFORMAT, "%s:%d: GPU '%s' listed twice", path, lineno, r->name);
    if (rc) break;
    cnt++;
  }
  fclose(f);
  if (rc == MKT_OK && cnt == 0) rc = mkt__err(err, errlen, MKT_EFORMAT, "%s: no GPU rows", path);
  if (rc) { free(g); return rc; }
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

const char *const mkt_trace_reason_names[MKT_TR_NREASONS] = {"cpu_only", "pending", "no_run_time", "bad_times",
                                                              "fractional_gpus", "too_wide", "not_succeeded"};

/* Opens a trace: a readable regular file (a directory opens, then reads as nothing). */
static FILE *mkt__trace_open(const char *path, char *err, size_t errlen, int *rc) {
  struct stat sb;
  if (stat(path, &sb) == 0 && !S_ISREG(sb.st_mode)) {
    *rc = mkt__err(err, errlen, MKT_EFORMAT, "%s: %s, not a trace file", path,
                   S_ISDIR(sb.st_mode) ? "is a directory" : "is not a regular file");
    return NULL;
  }
  FILE *f = fopen(path, "r");
  if (!f) *rc = mkt__err(err, errlen, MKT_EIO, "%s: cannot open: %s", path, strerror(errno));
  return f;
}

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
    return mkt__err(err, errlen, MKT_EFORMAT, "%s: no usable row (%zu data rows%s%s)", path, st->rows,
                    o ? ": " : "", why);
  }
  if (cnt > 1) qsort(v, cnt, sizeof *v, mkt__job_cmp);
  *out = v;
  *n = cnt;
  return MKT_OK;
}

int mkt_trace_load_alibaba_pods(const char *path, mkt_trace_job **out, size_t *n, mkt_trace_stats *stp,
                                char *err, size_t errlen) {
  mkt_trace_stats st0, *st = stp ? stp : &st0;
  memset(st, 0, sizeof *st);
  int rc = MKT_OK;
  FILE *f = mkt__trace_open(path, err, errlen, &rc);
  if (!f) return rc;
  char line[2048];
  int lineno = 0;
  size_t cnt = 0, cap = 0;
  mkt_trace_job *v = NULL;
  while (fgets(line, sizeof line, f)) {
    if (++lineno == 1) continue; /* header */
    if (line[strspn(line, " \t\r\n")] == '\0') continue; /* a blank line */
    st->rows++;
    char *fl[12];
    size_t nf = mkt__split(line, fl, 12);
    if (nf < 11) { rc = mkt__err(err, errlen, MKT_EFORMAT, "%s:%d: expected 11 fields", path, lineno); break; }
    double ngpu, milli, create, del, sched;
    if (mkt__num(fl[3], &ngpu) || mkt__num(fl[4], &milli) || mkt__num(fl[8], &create)) {
      rc = mkt__err(err, errlen, MKT_EFORMAT, "%s:%d: num_gpu, gpu_milli or creation_time not a number", path, lineno);
      break;
    }
    mkt_trace_reason why = MKT_TR_NREASONS;
    int timed = !mkt__num(fl[9], &del) & !mkt__num(fl[10], &sched);
    if (ngpu == 0) why = MKT_TR_CPU_ONLY;
    else if (ngpu < 0 || create < 0 || (timed && (del < 0 || sched < 0 || sched < create))) why = MKT_TR_BAD_TIMES;
    else if (ngpu != floor(ngpu)) why = MKT_TR_FRACTIONAL;
    else if (ngpu > MKT_TRACE_MAX_GPUS) why = MKT_TR_TOO_WIDE;
    else if (!strcmp(fl[7], "Pending") || !timed) why = MKT_TR_PENDING;
    else if (del - sched <= 0) why = MKT_TR_NO_RUN_TIME;
    if (why != MKT_TR_NREASONS) { st->dropped[why]++; continue; }
    mkt_trace_job j;
    j.submit_s = create;
    j.dur_s = del - sched;
    /* gpu_milli is the per-GPU share in thousandths: a share of a GPU still rents a whole one (an
     * ASSUMPTION: the market rents whole GPUs; Alibaba's GPU sharing is not modelled) */
    j.gpus = (uint32_t)ngpu;
    j.cls = !strcmp(fl[6], "LS") ? 1 : !strcmp(fl[6], "BE") ? 2 : 0;
    if ((rc = mkt__push(&v, &cnt, &cap, &j))) break;
    st->used++;
  }
  if (!rc && ferror(f)) rc = mkt__err(err, errlen, MKT_EIO, "%s: read error: %s", path, strerror(errno));
  fclose(f);
  if (rc) { free(v); return rc; }
  return mkt__trace_done(path, v, cnt, st, out, n, err, errlen);
}

int mkt_trace_load_genai(const char *path, mkt_trace_job **out, size_t *n, mkt_trace_stats *stp, char *err,
                         size_t errlen) {
  mkt_trace_stats st0, *st = stp ? stp : &st0;
  memset(st, 0, sizeof *st);
  int rc = MKT_OK;
  FILE *f = mkt__trace_open(path, err, errlen, &rc);
  if (!f) return rc;
  char line[2048];
  int lineno = 0;
  size_t cnt = 0, cap = 0;
  mkt_trace_job *v = NULL;
  double t0 = NAN;
  while (fgets(line, sizeof line, f)) {
    if (++lineno == 1) continue;
    if (line[strspn(line, " \t\r\n")] == '\0') continue; /* a blank line */
    st->rows++;
    char *fl[12];
    size_t nf = mkt__split(line, fl, 12);
    if (nf < 4) { rc = mkt__err(err, errlen, MKT_EFORMAT, "%s:%d: expected 11 fields", path, lineno); break; }
    if (strcmp(fl[2], "SUCCEED")) { st->dropped[MKT_TR_NOT_SUCCEEDED]++; continue; }
    struct tm tm;
    memset(&tm, 0, sizeof tm);
    double ex;
    if (sscanf(fl[0], "%d-%d-%d %d:%d:%d", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour, &tm.tm_min,
               &tm.tm_sec) != 6 || mkt__num(fl[3], &ex)) {
      rc = mkt__err(err, errlen, MKT_EFORMAT, "%s:%d: bad gmt_create or exec_time_seconds", path, lineno);
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
  if (!rc && ferror(f)) rc = mkt__err(err, errlen, MKT_EIO, "%s: read error: %s", path, strerror(errno));
  fclose(f);
  if (rc) { free(v); return rc; }
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
    if (!isalnum((unsigned char)*p)) { p++; continue; }
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
      if (off == len) { best = (int)m; bestlen = len; break; }
    }
  }
  return best;
}

int mkt_calibration_load(const char *path, sched_cluster_params *cp, mkt_calib_info *info, char *err, size_t len) {
  if (info) memset(info, 0, sizeof *info);
  double gemm = 0, cublas = 0;
  sched_cluster_params nc = *cp; /* *cp changes only when the whole file is good */
  FILE *f = fopen(path, "r");
  if (!f) {
    snprintf(err, len, "%s: cannot open the calibration file", path);
    return MKT_EIO;
  }
  char line[1024];
  int ln = 0;
  while (fgets(line, sizeof line, f)) {
    ln++;
    if (line[0] == '#' || line[0] == '\n' || !strncmp(line, "key,", 4)) continue;
    char *p = line, *key = strsep(&p, ","), *val = p ? strsep(&p, ",\r\n") : NULL;
    if (!val) {
      snprintf(err, len, "%s:%d: expected key,value,unit,device,note", path, ln);
      fclose(f);
      return MKT_EFORMAT;
    }
    char *e;
    double v = strtod(val, &e);
    if (info && p && !info->device[0]) { /* unit, then the device (quoted when it holds a comma) */
      strsep(&p, ",");
      char *dev = p;
      if (dev && *dev == '"') {
        dev++;
        char *q = strchr(dev, '"');
        if (q) *q = '\0';
      } else if (dev) {
        dev = strsep(&p, ",\r\n");
      }
      if (dev) snprintf(info->device, sizeof info->device, "%s", dev);
    }
    double *dst = NULL, lo = 0, hi = 1;
    if (!strcmp(key, "gemm_gflops")) { dst = &gemm; hi = 1e9; }
    else if (!strcmp(key, "gemm_cublas_gflops")) { dst = &cublas; hi = 1e9; }
    else if (!strcmp(key, "even_split_efficiency")) dst = &nc.even_eff;
    else if (!strcmp(key, "weighted_split_efficiency")) dst = &nc.weighted_eff;
    else if (!strcmp(key, "dynamic_efficiency")) dst = &nc.dynamic_eff;
    else if (!strcmp(key, "chunk_overhead_s")) { dst = &nc.chunk_overhead_s; hi = 3600; }
    if (!dst) continue; /* keys for other models */
    if (e == val || !(v > lo && v <= hi)) {
      snprintf(err, len, "%s:%d: %s = '%s' is not a number in (%g, %g]", path, ln, key, val, lo, hi);
      fclose(f);
      return MKT_EFORMAT;
    }
    *dst = v;
  }
  fclose(f);
  *cp = nc;
  if (info) info->sgemm_gflops = cublas > 0 ? cublas : gemm;
  return 0;
}
