/* lab_calib.c - the calibration `spotlab lab --predict` predicts from: its file (the kernels'
 * calibration layout, key,value,unit,device,note, so that market.calibration can read it too) and
 * the contention table learned from it. The measuring itself needs the workers: lab_predict.c. */
#include "lab/lab.h"
#include "lab/lab_internal.h"
#include "models/sched/sched.h"
#include "sim/csvfile.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

_Static_assert(KRN_NKERNELS == LAB_CALIB_KERNELS, "lab_calib holds one row per kernel");
_Static_assert(LAB_CALIB_MAX_WORKERS == LAB__MAX_WORKERS, "a calibration covers every worker a lab may have");

lab_calib *lab_calib_create(const lab_config *cfg) {
  if (cfg->lab.workers > LAB_CALIB_MAX_WORKERS) return NULL; /* a lab the real runner cannot run */
  lab_calib *c = calloc(1, sizeof *c);
  if (!c) return NULL;
  c->nworkers = (size_t)cfg->lab.workers;
  c->load1 = NAN;
  c->njobs = cfg->njobs;
  c->cmd_s = malloc((cfg->njobs ? cfg->njobs : 1) * sizeof *c->cmd_s);
  c->cmd_exit = calloc(cfg->njobs ? cfg->njobs : 1, sizeof *c->cmd_exit);
  if (!c->cmd_s || !c->cmd_exit) {
    lab_calib_free(c);
    return NULL;
  }
  for (size_t j = 0; j < cfg->njobs; j++) c->cmd_s[j] = NAN;
  c->hosts = 1;
  return c;
}

void lab_calib_free(lab_calib *c) {
  if (!c) return;
  free(c->cmd_s);
  free(c->cmd_exit);
  free(c);
}

/* f(k) from every (alone, together) pair of every kernel measured, in work units per second
 * (chunks / s x chunk_s): in chunks per second a kernel of short chunks (triad's are 30 times
 * shorter than gemm's) would outweigh the others in the rate-weighted mean. Contention is between
 * the workers of one host: in "workers 0..K-1 at once", worker i's k is the number of those on its
 * host (its MPI rank's: on separate machines, or bound to their own cores as mpirun binds ranks on
 * one machine; ASSUMPTION: ranks of one machine do not share cores). */
int lab_calib_learn(lab_calib *c) {
  size_t n = c->nworkers, m = 0;
  double *a = malloc((KRN_NKERNELS * n * n + 1) * sizeof *a), *t = malloc((KRN_NKERNELS * n * n + 1) * sizeof *t);
  unsigned *k = malloc((KRN_NKERNELS * n * n + 1) * sizeof *k);
  int rc = LAB_ENOMEM;
  if (!a || !t || !k) goto out;
  for (int kk = 0; kk < KRN_NKERNELS; kk++) {
    if (!c->kernel_used[kk]) continue;
    for (size_t i = 0; i < n; i++) {
      if (!(c->alone[kk][i] > 0)) continue;
      for (size_t K = 2; K <= n; K++)
        if (i < K && c->together[kk][K - 1][i] > 0) {
          double unit = c->chunk_s[kk] > 0 ? c->chunk_s[kk] : 1;
          a[m] = c->alone[kk][i] * unit;
          t[m] = c->together[kk][K - 1][i] * unit;
          unsigned same = 0;
          for (size_t o = 0; o < K; o++) same += lab_calib_host(c, o) == lab_calib_host(c, i);
          k[m++] = same;
        }
    }
  }
  sched_cluster_params cp;
  memset(&cp, 0, sizeof cp);
  unsigned kmax = 1; /* the most workers of one host measured together */
  for (size_t q = 0; q < m; q++)
    if (k[q] > kmax) kmax = k[q];
  rc = sched_coloc_learn(&cp, a, t, k, m, kmax) ? LAB_EINVAL : 0;
  if (!rc) {
    c->ncoloc = cp.ncoloc;
    memcpy(c->coloc, cp.coloc, cp.ncoloc * sizeof *c->coloc);
  }
out:
  free(a);
  free(t);
  free(k);
  return rc;
}

#define LAB__DEV "lab workers (CPU)"

int lab_calib_write(const char *path, const lab_config *cfg, const lab_calib *c, char *err, size_t errlen) {
  char tmp[4300];
  snprintf(tmp, sizeof tmp, "%s.tmp", path);
  FILE *f = fopen(tmp, "w");
  if (!f) {
    snprintf(err, errlen, "%s: %s", tmp, strerror(errno));
    return LAB_EIO;
  }
  fprintf(f, "# spotlab lab calibration of %s (docs/lab.md, \"Predict, then run\")\n", cfg->path);
  fprintf(f, "key,value,unit,device,note\n");
  fprintf(f, "workers,%zu,workers,%s,lab.workers\n", c->nworkers, LAB__DEV);
  fprintf(f, "calibrate_s,%.17g,s,%s,seconds of each speed measurement\n", c->calibrate_s, LAB__DEV);
  fprintf(f, "rounds,%u,1,%s,measurements averaged per figure (interleaved)\n", c->rounds ? c->rounds : 1, LAB__DEV);
  fprintf(f, "hosts,%u,hosts,%s,MPI ranks the workers ran on (worker i on host i x hosts / workers)\n",
          c->hosts ? c->hosts : 1, LAB__DEV);
  if (isfinite(c->load1))
    fprintf(f, "host_load_1min,%.17g,1,%s,1-minute load average when measured\n", c->load1, LAB__DEV);
  for (int k = 0; k < KRN_NKERNELS; k++) {
    if (!c->kernel_used[k]) continue;
    const char *kn = krn_kernel_name((krn_kernel)k);
    fprintf(f, "chunk_s.%s,%.17g,s,%s,one chunk at full speed alone (the chunking's unit)\n", kn, c->chunk_s[k],
            LAB__DEV);
    fprintf(f, "setup_s.%s,%.17g,s,%s,a run's start: inputs made and output opened\n", kn, c->setup_s[k], LAB__DEV);
    fprintf(f, "finish_s.%s,%.17g,s,%s,a run's end: output synced and read back and verified\n", kn, c->finish_s[k],
            LAB__DEV);
    fprintf(f, "sync_s.%s,%.17g,s,%s,one checkpoint (fdatasync)\n", kn, c->sync_s[k], LAB__DEV);
    for (size_t i = 0; i < c->nworkers; i++)
      fprintf(f, "alone.%s.%zu,%.17g,chunks/s,%s,worker alone\n", kn, i, c->alone[k][i], LAB__DEV);
    for (size_t K = 2; K <= c->nworkers; K++)
      for (size_t i = 0; i < K; i++)
        fprintf(f, "together.%s.%zu.%zu,%.17g,chunks/s,%s,workers 0..%zu at once\n", kn, K, i, c->together[k][K - 1][i],
                LAB__DEV, K - 1);
  }
  for (size_t q = 0; q < c->nslow; q++)
    fprintf(f, "slowed.%s.%d@%.17g,%.17g,chunks/s,%s,worker alone at that duty cycle (a slow fault)\n",
            krn_kernel_name((krn_kernel)c->slow[q].kernel), c->slow[q].worker, c->slow[q].factor, c->slow[q].rate,
            LAB__DEV);
  for (unsigned K = 1; K <= c->ncoloc; K++)
    fprintf(f, "colocated_speed_factor_%u,%.17g,1,%s,speed with %u busy workers / alone (sched_coloc_learn)\n", K,
            c->coloc[K - 1], LAB__DEV, K);
  for (size_t j = 0; j < cfg->njobs && j < c->njobs; j++)
    if (isfinite(c->cmd_s[j])) {
      fprintf(f, "command_s.%s,%.17g,s,%s,one calibration run\n", cfg->jobs[j].name, c->cmd_s[j], LAB__DEV);
      fprintf(f, "command_exit.%s,%d,1,%s,its exit status\n", cfg->jobs[j].name, c->cmd_exit[j], LAB__DEV);
    }
  int bad = ferror(f);
  if (fflush(f) != 0 || fsync(fileno(f)) != 0) bad = 1;
  if (fclose(f) != 0) bad = 1;
  if (bad || rename(tmp, path) != 0) {
    snprintf(err, errlen, "%s: %s", path, strerror(errno ? errno : EIO));
    remove(tmp);
    return LAB_EIO;
  }
  return 0;
}

/* KERNEL or KERNEL.A or KERNEL.A.B after a key's prefix: the kernel and up to two indices. */
static int lab__ckey(const char *rest, int nidx, int *kernel, long *idx) {
  char kn[16];
  size_t l = strcspn(rest, ".");
  if (l == 0 || l >= sizeof kn) return -1;
  memcpy(kn, rest, l);
  kn[l] = 0;
  krn_kernel k;
  if (krn_kernel_parse(kn, &k) != 0) return -1;
  *kernel = (int)k;
  const char *p = rest + l;
  for (int i = 0; i < nidx; i++) {
    if (*p != '.') return -1;
    char *end;
    errno = 0;
    idx[i] = strtol(p + 1, &end, 10);
    if (end == p + 1 || errno || idx[i] < 0) return -1;
    p = end;
  }
  return *p ? -1 : 0;
}

/* What a calibration file's loader has seen so far, to say what it misses at the end. */
typedef struct lab__cload {
  const lab_config *cfg;
  lab_calib *c;
  long workers_line;
  int have_f[LAB_CALIB_MAX_WORKERS];
  int have_k[KRN_NKERNELS]; /* bit 1 chunk_s, 2 setup_s, 4 finish_s, 8 sync_s */
  int have_alone[KRN_NKERNELS][LAB_CALIB_MAX_WORKERS];
} lab__cload;

/* One key and its value (at `line`) into the calibration: NULL, or what is wrong with it. */
static const char *lab__calib_key(lab__cload *s, const char *key, double v, long line) {
  int k;
  long ix[2];
  const char *bad = NULL;
  if (!strcmp(key, "workers")) {
    if (v != (double)s->cfg->lab.workers) bad = "the job file has another number of workers (lab.workers)";
    s->workers_line = line;
  } else if (!strcmp(key, "calibrate_s")) {
    if (!(v > 0)) bad = "must be > 0";
    s->c->calibrate_s = v;
  } else if (!strcmp(key, "rounds")) {
    if (!(v >= 1 && v <= 100 && v == floor(v))) bad = "an integer in 1..100";
    s->c->rounds = (unsigned)v;
  } else if (!strcmp(key, "hosts")) {
    if (!(v >= 1 && v <= s->cfg->lab.workers && v == floor(v))) bad = "an integer in 1..lab.workers";
    s->c->hosts = (unsigned)v;
  } else if (!strncmp(key, "slowed.", 7)) {
    char kn[16];
    int wk = -1, used = 0;
    double fac = 0;
    krn_kernel kk;
    if (sscanf(key + 7, "%15[a-z].%d@%lg%n", kn, &wk, &fac, &used) != 3 || key[7 + used] ||
        krn_kernel_parse(kn, &kk) != 0)
      bad = "expected slowed.KERNEL.WORKER@FACTOR";
    else if (wk < 0 || wk >= s->cfg->lab.workers)
      bad = "no such worker";
    else if (!(fac > 0 && fac <= 1) || !(v > 0))
      bad = "needs a factor in (0, 1] and a speed > 0";
    else if (s->c->nslow == LAB_CALIB_MAX_WORKERS)
      bad = "too many slowed speeds (64 at most)";
    else {
      s->c->slow[s->c->nslow].kernel = (int)kk;
      s->c->slow[s->c->nslow].worker = wk;
      s->c->slow[s->c->nslow].factor = fac;
      s->c->slow[s->c->nslow++].rate = v;
    }
  } else if (!strcmp(key, "host_load_1min")) {
    s->c->load1 = v;
  } else if (!strncmp(key, "chunk_s.", 8) || !strncmp(key, "setup_s.", 8) || !strncmp(key, "finish_s.", 9) ||
             !strncmp(key, "sync_s.", 7)) {
    const char *dot = strchr(key, '.');
    if (lab__ckey(dot + 1, 0, &k, ix) != 0) {
      bad = "unknown kernel (triad, gemm, mlp)";
    } else if (key[0] == 'c') {
      if (!(v > 0)) bad = "must be > 0";
      s->c->chunk_s[k] = v;
      s->have_k[k] |= 1;
    } else {
      if (v < 0) bad = "must be >= 0";
      double *dst = key[0] == 's' && key[1] == 'e' ? s->c->setup_s : key[0] == 'f' ? s->c->finish_s : s->c->sync_s;
      dst[k] = v;
      s->have_k[k] |= key[0] == 's' && key[1] == 'e' ? 2 : key[0] == 'f' ? 4 : 8;
    }
  } else if (!strncmp(key, "alone.", 6)) {
    if (lab__ckey(key + 6, 1, &k, ix) != 0)
      bad = "expected alone.KERNEL.WORKER";
    else if (ix[0] >= s->cfg->lab.workers)
      bad = "no such worker";
    else if (!(v > 0))
      bad = "a speed must be > 0";
    else {
      s->c->alone[k][ix[0]] = v;
      s->have_alone[k][ix[0]] = 1;
    }
  } else if (!strncmp(key, "together.", 9)) {
    if (lab__ckey(key + 9, 2, &k, ix) != 0)
      bad = "expected together.KERNEL.K.WORKER";
    else if (ix[0] < 2 || ix[0] > s->cfg->lab.workers || ix[1] >= ix[0])
      bad = "needs 2 <= K <= lab.workers and WORKER < K";
    else if (!(v > 0))
      bad = "a speed must be > 0";
    else
      s->c->together[k][ix[0] - 1][ix[1]] = v;
  } else if (!strncmp(key, "colocated_speed_factor_", 23)) {
    char *end;
    long K = strtol(key + 23, &end, 10);
    if (*end || K < 1 || K > LAB_CALIB_MAX_WORKERS)
      bad = "expected colocated_speed_factor_K, K in 1..64";
    else if (!(v > 0 && v <= 2))
      bad = "a speed factor must be in (0, 2]";
    else {
      s->c->coloc[K - 1] = v;
      s->have_f[K - 1] = 1;
      if ((unsigned)K > s->c->ncoloc) s->c->ncoloc = (unsigned)K;
    }
  } else if (!strncmp(key, "command_s.", 10) || !strncmp(key, "command_exit.", 13)) {
    const char *name = strchr(key, '.') + 1;
    size_t j = 0;
    while (j < s->cfg->njobs && strcmp(s->cfg->jobs[j].name, name)) j++;
    if (j == s->cfg->njobs || s->cfg->jobs[j].kernel[0])
      bad = "no command job of that name in the job file";
    else if (key[8] == 's') {
      if (v < 0) bad = "must be >= 0";
      s->c->cmd_s[j] = v;
    } else {
      if (v < 0 || v > 255 + 128 || v != floor(v)) bad = "an exit status is an integer in 0..383";
      s->c->cmd_exit[j] = (int)v;
    }
  } else {
    bad = "unknown key";
  }
  return bad;
}

/* The first figure the job file needs that the file lacks (NULL: none); what[len] holds its name. */
static const char *lab__calib_missing(lab__cload *s, char *what, size_t len) {
  lab_calib *c = s->c;
  const lab_config *cfg = s->cfg;
  const char *miss = NULL;
  if (!s->workers_line) miss = "workers";
  if (!miss && !(c->calibrate_s > 0)) miss = "calibrate_s";
  for (unsigned K = 0; !miss && K < c->ncoloc; K++)
    if (!s->have_f[K]) {
      snprintf(what, len, "colocated_speed_factor_%u", K + 1);
      miss = what;
    }
  if (!miss && c->ncoloc == 0) miss = "colocated_speed_factor_1";
  for (size_t j = 0; !miss && j < cfg->njobs; j++) {
    krn_kernel k;
    if (cfg->jobs[j].kernel[0] && krn_kernel_parse(cfg->jobs[j].kernel, &k) == 0) {
      c->kernel_used[k] = 1;
      if (s->have_k[k] != 15) {
        snprintf(what, len, "chunk_s, setup_s, finish_s and sync_s of kernel %s (job %s)", krn_kernel_name(k),
                 cfg->jobs[j].name);
        miss = what;
      }
      for (size_t i = 0; !miss && i < c->nworkers; i++)
        if (!s->have_alone[k][i]) {
          snprintf(what, len, "alone.%s.%zu", krn_kernel_name(k), i);
          miss = what;
        }
    } else if (!cfg->jobs[j].kernel[0] && !isfinite(c->cmd_s[j])) {
      snprintf(what, len, "command_s.%s", cfg->jobs[j].name);
      miss = what;
    }
  }
  return miss;
}

int lab_calib_load(const char *path, const lab_config *cfg, lab_calib **out, char *err, size_t errlen) {
  *out = NULL;
  if (cfg->lab.workers > LAB_CALIB_MAX_WORKERS)
    return spotlab_errf(err, errlen, LAB_ECONFIG, "%s: a calibration covers at most %d workers; %s has %lld", path,
                        LAB_CALIB_MAX_WORKERS, cfg->path, (long long)cfg->lab.workers);
  lab_calib *c = lab_calib_create(cfg);
  if (!c) return spotlab_errf(err, errlen, LAB_ENOMEM, "out of memory");
  sim_csv *csv;
  int rc = sim_csv_open(&csv, path, SIM_CSV_COMMENTS, "lab calibration file", err, errlen);
  if (rc) {
    lab_calib_free(c);
    return rc == SPOTLAB_ENOMEM ? LAB_ENOMEM : rc == SPOTLAB_EIO ? LAB_EIO : LAB_ECONFIG;
  }
  lab__cload ld;
  memset(&ld, 0, sizeof ld);
  ld.cfg = cfg;
  ld.c = c;
  sim_csv_row row;
  /* every key once, every figure of one device: a file joined from two calibrations, or edited
   * by hand, is refused instead of letting the later figure win silently */
  char **seen = NULL, *device = NULL;
  long *seen_line = NULL, ndata = 0, last_line = 0, device_line = 0;
  while ((rc = sim_csv_next(csv, &row, err, errlen)) > 0) {
    const char *key = row.f[0];
    last_line = row.line;
    if (!strcmp(key, "key")) continue; /* the header */
    long dup = -1;
    for (long q = 0; q < ndata && dup < 0; q++)
      if (!strcmp(seen[q], key)) dup = seen_line[q];
    if (dup >= 0) {
      rc = spotlab_errf(err, errlen, LAB_ECONFIG, "%s:%ld: key '%s' is given twice (first at line %ld)", path, row.line,
                        key, dup);
      break;
    }
    char **ns = realloc(seen, (size_t)(ndata + 1) * sizeof *ns);
    long *nl = ns ? realloc(seen_line, (size_t)(ndata + 1) * sizeof *nl) : NULL;
    if (ns) seen = ns;
    if (nl) seen_line = nl;
    if (!ns || !nl || !(seen[ndata] = strdup(key))) {
      rc = spotlab_errf(err, errlen, LAB_ENOMEM, "out of memory");
      break;
    }
    seen_line[ndata++] = row.line;
    if (row.n >= 4) {
      if (!device) {
        device = strdup(row.f[3]);
        device_line = row.line;
      } else if (strcmp(device, row.f[3])) {
        rc = spotlab_errf(err, errlen, LAB_ECONFIG,
                          "%s:%ld: key '%s': device '%s', but line %ld says '%s': one calibration measures one device",
                          path, row.line, key, row.f[3], device_line, device);
        break;
      }
    }
    double v;
    if (row.n < 2 || sim_csv_num(row.f[1], &v) != 0 || !isfinite(v)) {
      rc = spotlab_errf(err, errlen, LAB_ECONFIG, "%s:%ld: key '%s': expected key,value,unit,device,note with a number",
                        path, row.line, key);
      break;
    }
    const char *bad = lab__calib_key(&ld, key, v, row.line);
    if (bad) {
      rc = spotlab_errf(err, errlen, LAB_ECONFIG, "%s:%ld: key '%s': %s", path, row.line, key, bad);
      break;
    }
  }
  sim_csv_close(csv);
  for (long q = 0; q < ndata; q++) free(seen[q]);
  free(seen);
  free(seen_line);
  free(device);
  if (rc >= 0 && ndata == 0) /* empty, or its header alone */
    rc = spotlab_errf(err, errlen, LAB_ECONFIG, "%s:%ld: no calibration figures (an empty or header-only file)", path,
                      last_line ? last_line : 1);
  if (rc < 0) {
    lab_calib_free(c);
    return rc == SPOTLAB_ENOMEM ? LAB_ENOMEM : rc == SPOTLAB_EIO ? LAB_EIO : LAB_ECONFIG;
  }
  /* Does it cover the job file? */
  char what[96] = "";
  const char *miss = lab__calib_missing(&ld, what, sizeof what);
  if (miss) {
    lab_calib_free(c);
    return spotlab_errf(err, errlen, LAB_ECONFIG, "%s: no '%s': not a calibration of %s (measure one with --predict)",
                        path, miss, cfg->path);
  }
  *out = c;
  return 0;
}
