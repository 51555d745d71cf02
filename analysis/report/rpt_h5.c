/* rpt_h5.c - reading results files (docs/results-format.md) and reading/writing sweep files
 * (docs/reports.md). Every failure becomes a message naming the file and the object, never an
 * HDF5 stack dump or a crash. */
#include "analysis/report/rpt.h"
#include "analysis/report/rpt_h5i.h"
#include "sim/h5mem.h"
#include "sim/tmpname.h"
#include "sim/results_io.h"

#include <hdf5.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define RPT_SWEEP_FORMAT "spotlab-sweep"
#define RPT_SWEEP_FORMAT_VERSION 1

struct rpt_file {
  hid_t h; /* the HDF5 file */
  char *path;
  rpt_kind kind;
  char model[64];
  uint64_t seed;
  double end_s;
  int reps;
  uint64_t *rep_seeds; /* [reps] */
  unsigned nm;
  char **names, **units; /* [nm] */
  char **labels;         /* [nm] the metric's label in words ("" none); NULL: an older file without them */
  int *headline;         /* [nm] 1 marked headline by the model; NULL: the file does not say */
  double *values;        /* [reps][nm] */
  rpt_ci *stored;        /* [nm] /summary as written */
  char err[RPT_ERRLEN];
};

/* 1 when `n` items of `w` bytes each cannot be data of the file that holds `obj`: more bytes than
 * the whole file (spotlab writes no compressed data, so every element a dataset or attribute
 * declares is stored in the file), or an overflow. A damaged file that declares 10^15 elements is
 * refused here, before anything is allocated for them (found by fuzz/fuzz_results.c). */
int rpt__implausible(hid_t obj, uint64_t n, uint64_t w) {
  if (w == 0) w = 1;
  if (n > UINT64_MAX / w) return 1;
  hsize_t fs = 0;
  hid_t fid = H5Iget_file_id(obj);
  if (fid < 0) return 1;
  herr_t e = H5Fget_filesize(fid, &fs);
  H5Fclose(fid);
  return e < 0 || n * w > (uint64_t)fs;
}

int rpt__fail(rpt_file *f, int code, const char *fmt, ...) {
  char msg[RPT_ERRLEN - 64];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  snprintf(f->err, sizeof f->err, "%s: %s", f->path, msg);
  return code;
}

/* ---- small HDF5 helpers ------------------------------------------------------------------- */

static int rpt__exists(hid_t loc, const char *path) {
  /* H5Lexists needs every intermediate link to exist: walk the path. */
  char buf[512];
  snprintf(buf, sizeof buf, "%s", path);
  for (char *p = buf + (buf[0] == '/');; p++) {
    if (*p == '/' || *p == 0) {
      char c = *p;
      *p = 0;
      if (H5Lexists(loc, buf, H5P_DEFAULT) <= 0) return 0;
      if (!c) return 1;
      *p = c;
    }
  }
}

/* Reads a scalar string attribute (fixed or variable length) into buf. */
int rpt__attr_str(hid_t obj, const char *name, char *buf, size_t len) {
  buf[0] = 0;
  if (H5Aexists(obj, name) <= 0) return -1;
  hid_t a = H5Aopen(obj, name, H5P_DEFAULT);
  if (a < 0) return -1;
  hid_t t = H5Aget_type(a);
  int rc = -1;
  if (H5Tget_class(t) == H5T_STRING) {
    if (H5Tis_variable_str(t) > 0) {
      char *s = NULL;
      hid_t mt = H5Tcopy(H5T_C_S1);
      H5Tset_size(mt, H5T_VARIABLE);
      if (H5Aread(a, mt, &s) >= 0 && s) {
        snprintf(buf, len, "%s", s);
        H5free_memory(s);
        rc = 0;
      }
      H5Tclose(mt);
    } else {
      size_t w = H5Tget_size(t);
      char *tmp = rpt__implausible(obj, 1, w) ? NULL : calloc(1, w + 1);
      if (tmp && H5Aread(a, t, tmp) >= 0) {
        snprintf(buf, len, "%s", tmp);
        rc = 0;
      }
      free(tmp);
    }
  }
  H5Tclose(t);
  H5Aclose(a);
  return rc;
}

int rpt__attr_num(hid_t obj, const char *name, hid_t mtype, void *v) {
  if (H5Aexists(obj, name) <= 0) return -1;
  hid_t a = H5Aopen(obj, name, H5P_DEFAULT);
  if (a < 0) return -1;
  int rc = H5Aread(a, mtype, v) < 0 ? -1 : 0;
  H5Aclose(a);
  return rc;
}

/* Reads a 1-D attribute of fixed-length strings: *out = n malloc'd strings. */
int rpt__attr_strs(hid_t obj, const char *name, size_t want, char ***out) {
  *out = NULL;
  if (H5Aexists(obj, name) <= 0) return -1;
  hid_t a = H5Aopen(obj, name, H5P_DEFAULT);
  if (a < 0) return -1;
  hid_t t = H5Aget_type(a), sp = H5Aget_space(a);
  int rc = -1;
  hssize_t n = H5Sget_simple_extent_npoints(sp);
  if (H5Tget_class(t) == H5T_STRING && H5Tis_variable_str(t) <= 0 && n >= 0 && (size_t)n == want &&
      !rpt__implausible(obj, (uint64_t)n, H5Tget_size(t))) {
    size_t w = H5Tget_size(t);
    char *buf = calloc((size_t)n ? (size_t)n : 1, w);
    char **v = calloc((size_t)n ? (size_t)n : 1, sizeof *v);
    if (buf && v && (n == 0 || H5Aread(a, t, buf) >= 0)) {
      rc = 0;
      for (hssize_t i = 0; i < n; i++) {
        v[i] = strndup(buf + (size_t)i * w, w);
        if (!v[i]) rc = -1;
      }
    }
    free(buf);
    if (rc == 0)
      *out = v;
    else if (v) {
      for (hssize_t i = 0; i < n; i++) free(v[i]);
      free(v);
    }
  }
  H5Sclose(sp);
  H5Tclose(t);
  H5Aclose(a);
  return rc;
}

void rpt__free_strs(char **v, size_t n) {
  if (!v) return;
  for (size_t i = 0; i < n; i++) free(v[i]);
  free(v);
}

/* ---- opening ---------------------------------------------------------------------------------- */

static int rpt__open_results(rpt_file *f) {
  hid_t h = f->h;
  if (!rpt__exists(h, "/meta")) return rpt__fail(f, SIM_ENOTFOUND, "group /meta is missing (damaged file?)");
  hid_t g = H5Gopen2(h, "/meta", H5P_DEFAULT);
  if (g < 0) return rpt__fail(f, SIM_EFORMAT, "/meta cannot be read (damaged file?)");
  int32_t reps = 0;
  int bad = rpt__attr_str(g, "model", f->model, sizeof f->model) |
            rpt__attr_num(g, "seed", H5T_NATIVE_UINT64, &f->seed) | rpt__attr_num(g, "reps", H5T_NATIVE_INT32, &reps) |
            rpt__attr_num(g, "end_time_s", H5T_NATIVE_DOUBLE, &f->end_s);
  if (bad) {
    H5Gclose(g);
    return rpt__fail(f, SIM_EFORMAT, "/meta lacks one of its attributes model, seed, reps, end_time_s");
  }
  if (reps < 1 || reps > 1000000) {
    H5Gclose(g);
    return rpt__fail(f, SIM_EFORMAT, "/meta reps = %d is not a replication count", reps);
  }
  /* A part of a run (`spotlab run --shard K/N`) holds replications part_first.. of reps: whole,
   * but not a run's results until the parts are joined (docs/slurm.md). */
  int32_t pf = 0, pc = 0;
  if (H5Aexists(g, "part_first") > 0 && !rpt__attr_num(g, "part_first", H5T_NATIVE_INT32, &pf) &&
      !rpt__attr_num(g, "part_count", H5T_NATIVE_INT32, &pc)) {
    H5Gclose(g);
    return rpt__fail(f, SIM_EFORMAT,
                     "a part of a run (replications %d-%d of %d, written by `spotlab run --shard`), not a whole run: "
                     "join the parts first with `spotlab merge OUT.h5 PART.h5...` and use OUT.h5",
                     pf, pf + pc - 1, reps);
  }
  H5Gclose(g);
  f->reps = reps;

  if (!rpt__exists(h, "/metrics")) return rpt__fail(f, SIM_ENOTFOUND, "dataset /metrics is missing");
  hid_t ds = H5Dopen2(h, "/metrics", H5P_DEFAULT);
  if (ds < 0) return rpt__fail(f, SIM_EFORMAT, "/metrics cannot be opened (damaged file?)");
  hid_t sp = H5Dget_space(ds);
  hsize_t dims[2] = {0, 0};
  int nd = H5Sget_simple_extent_ndims(sp);
  if (nd == 2) H5Sget_simple_extent_dims(sp, dims, NULL);
  H5Sclose(sp);
  if (nd != 2 || dims[0] != (hsize_t)reps || dims[1] > UINT32_MAX || rpt__implausible(ds, dims[0], dims[1])) {
    H5Dclose(ds);
    return rpt__fail(f, SIM_EFORMAT, "/metrics is not [reps=%d][nmetrics] (damaged file?)", reps);
  }
  f->nm = (unsigned)dims[1];
  f->values = calloc((size_t)reps * (f->nm ? f->nm : 1), sizeof(double));
  if (!f->values) {
    H5Dclose(ds);
    return rpt__fail(f, SIM_ENOMEM, "out of memory");
  }
  int rc = 0;
  if (f->nm && H5Dread(ds, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, f->values) < 0)
    rc = rpt__fail(f, SIM_EFORMAT, "/metrics cannot be read (damaged file?)");
  if (!rc && (rpt__attr_strs(ds, "names", f->nm, &f->names) || rpt__attr_strs(ds, "units", f->nm, &f->units)))
    rc = rpt__fail(f, SIM_EFORMAT, "/metrics lacks its names or units attribute (%u metrics)", f->nm);
  /* Optional (issue 49.13, 46.1): labels in words and headline flags, same order as names. Older
   * files lack them; one of the wrong length or type is ignored (the names are used). */
  if (!rc && rpt__attr_strs(ds, "labels", f->nm, &f->labels)) f->labels = NULL;
  if (!rc && f->nm && H5Aexists(ds, "headline") > 0) {
    hid_t a = H5Aopen(ds, "headline", H5P_DEFAULT);
    hid_t asp = a >= 0 ? H5Aget_space(a) : -1;
    hid_t at = a >= 0 ? H5Aget_type(a) : -1;
    if (asp >= 0 && at >= 0 && H5Tget_class(at) == H5T_INTEGER &&
        H5Sget_simple_extent_npoints(asp) == (hssize_t)f->nm && (f->headline = calloc(f->nm, sizeof(int))) &&
        H5Aread(a, H5T_NATIVE_INT, f->headline) < 0) {
      free(f->headline);
      f->headline = NULL;
    }
    if (at >= 0) H5Tclose(at);
    if (asp >= 0) H5Sclose(asp);
    if (a >= 0) H5Aclose(a);
  }
  H5Dclose(ds);
  if (rc) return rc;

  /* /summary as the engine wrote it: read by field name, so extra fields do not matter. */
  if (!rpt__exists(h, "/summary")) return rpt__fail(f, SIM_ENOTFOUND, "dataset /summary is missing");
  ds = H5Dopen2(h, "/summary", H5P_DEFAULT);
  if (ds < 0) return rpt__fail(f, SIM_EFORMAT, "/summary cannot be opened (damaged file?)");
  sp = H5Dget_space(ds);
  hssize_t ns = H5Sget_simple_extent_npoints(sp);
  H5Sclose(sp);
  f->stored = calloc(f->nm ? f->nm : 1, sizeof *f->stored);
  if (!f->stored) rc = rpt__fail(f, SIM_ENOMEM, "out of memory");
  if (!rc && ns != (hssize_t)f->nm)
    rc = rpt__fail(f, SIM_EFORMAT, "/summary has %lld rows for %u metrics", (long long)ns, f->nm);
  if (!rc && f->nm) {
    typedef struct {
      double mean, sd, lo, hi;
      int32_t n;
    } row;
    row *rows = calloc(f->nm, sizeof *rows);
    hid_t mt = H5Tcreate(H5T_COMPOUND, sizeof(row));
    H5Tinsert(mt, "mean", offsetof(row, mean), H5T_NATIVE_DOUBLE);
    H5Tinsert(mt, "sd", offsetof(row, sd), H5T_NATIVE_DOUBLE);
    H5Tinsert(mt, "ci95_lo", offsetof(row, lo), H5T_NATIVE_DOUBLE);
    H5Tinsert(mt, "ci95_hi", offsetof(row, hi), H5T_NATIVE_DOUBLE);
    H5Tinsert(mt, "n", offsetof(row, n), H5T_NATIVE_INT32);
    if (!rows || H5Dread(ds, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, rows) < 0)
      rc = rpt__fail(f, SIM_EFORMAT, "/summary cannot be read (fields mean, sd, ci95_lo, ci95_hi, n)");
    for (unsigned k = 0; !rc && k < f->nm; k++)
      f->stored[k] = (rpt_ci){rows[k].mean, rows[k].sd, rows[k].lo, rows[k].hi, rows[k].n};
    H5Tclose(mt);
    free(rows);
  }
  H5Dclose(ds);
  if (rc) return rc;

  if (rpt__implausible(f->h, (uint64_t)reps, 1))
    return rpt__fail(f, SIM_EFORMAT, "%d replications (damaged file?)", reps);
  f->rep_seeds = calloc((size_t)reps, sizeof *f->rep_seeds);
  if (!f->rep_seeds) return rpt__fail(f, SIM_ENOMEM, "out of memory");
  for (int r = 0; r < reps; r++) {
    char name[64];
    snprintf(name, sizeof name, "/reps/rep_%04d", r);
    if (!rpt__exists(h, name))
      return rpt__fail(f, SIM_ENOTFOUND, "group %s is missing (%d replications announced)", name, reps);
    hid_t rg = H5Gopen2(h, name, H5P_DEFAULT);
    if (rg < 0) return rpt__fail(f, SIM_EFORMAT, "%s cannot be opened (damaged file?)", name);
    int bad2 = rpt__attr_num(rg, "seed", H5T_NATIVE_UINT64, &f->rep_seeds[r]);
    H5Gclose(rg);
    if (bad2) return rpt__fail(f, SIM_EFORMAT, "%s lacks its seed attribute", name);
  }
  return 0;
}

int rpt_open(const char *path, rpt_file **out, char *err, size_t errlen) {
  *out = NULL;
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL); /* errors are reported here, not by HDF5's stack dump */
  rpt_file *f = calloc(1, sizeof *f);
  if (!f) {
    snprintf(err, errlen, "%s: out of memory", path);
    return SIM_ENOMEM;
  }
  f->h = -1;
  f->path = strdup(path);
  if (!f->path) {
    free(f);
    snprintf(err, errlen, "%s: out of memory", path);
    return SIM_ENOMEM;
  }
  int rc = 0;
  if (access(path, R_OK) != 0) {
    rc = rpt__fail(f, SIM_EIO, "cannot read the file (does it exist?)");
    goto done;
  }
  /* the checksum first: HDF5 1.10 can crash on a damaged file (sim/h5mem.h) */
  char verr[256];
  if (sim_h5mem_verify(path, verr, sizeof verr) < 0) {
    rc = rpt__fail(f, SIM_EFORMAT, "%s", verr);
    goto done;
  }
  htri_t is = H5Fis_hdf5(path); /* HDF5 1.10; H5Fis_accessible from 1.12 */
  if (is <= 0) {
    rc = rpt__fail(f, SIM_EFORMAT, "not an HDF5 file, or a damaged one");
    goto done;
  }
  f->h = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
  if (f->h < 0) {
    rc = rpt__fail(f, SIM_EFORMAT, "HDF5 cannot open it (damaged or truncated file?)");
    goto done;
  }
  char format[64];
  int32_t ver = 0;
  if (rpt__attr_str(f->h, "format", format, sizeof format) != 0) {
    rc = rpt__fail(f, SIM_EFORMAT, "an HDF5 file, but not a spotlab results file (no 'format' attribute)");
    goto done;
  }
  int is_sweep = !strcmp(format, RPT_SWEEP_FORMAT), is_exp = !strcmp(format, RPT_EXPERIMENT_FORMAT);
  if (!is_sweep && !is_exp && strcmp(format, SIM_RESULTS_FORMAT)) {
    rc = rpt__fail(f, SIM_EFORMAT, "format is '%s', expected '%s', '%s' or '%s'", format, SIM_RESULTS_FORMAT,
                   RPT_SWEEP_FORMAT, RPT_EXPERIMENT_FORMAT);
    goto done;
  }
  int want = is_sweep ? RPT_SWEEP_FORMAT_VERSION : is_exp ? RPT_EXPERIMENT_FORMAT_VERSION : SIM_RESULTS_FORMAT_VERSION;
  if (rpt__attr_num(f->h, "format_version", H5T_NATIVE_INT32, &ver) || ver != want) {
    char sv[64] = "?";
    rpt__attr_str(f->h, "spotlab_version", sv, sizeof sv);
    rc = rpt__fail(f, SIM_EFORMAT, "format version %d (written by spotlab %s); this spotlab reads version %d", (int)ver,
                   sv, want);
    goto done;
  }
  if (is_sweep) {
    f->kind = RPT_SWEEP;
    if (!rpt__exists(f->h, "/sweep")) rc = rpt__fail(f, SIM_ENOTFOUND, "group /sweep is missing");
  } else if (is_exp) {
    f->kind = RPT_EXPERIMENT;
    if (!rpt__exists(f->h, "/experiment")) rc = rpt__fail(f, SIM_ENOTFOUND, "group /experiment is missing");
  } else {
    f->kind = RPT_RESULTS;
    rc = rpt__open_results(f);
  }
done:
  if (rc) {
    snprintf(err, errlen, "%s", f->err);
    rpt_close(f);
    return rc;
  }
  *out = f;
  return 0;
}

void rpt_close(rpt_file *f) {
  if (!f) return;
  if (f->h >= 0) H5Fclose(f->h);
  rpt__free_strs(f->names, f->nm);
  rpt__free_strs(f->units, f->nm);
  rpt__free_strs(f->labels, f->nm);
  free(f->headline);
  free(f->values);
  free(f->stored);
  free(f->rep_seeds);
  free(f->path);
  free(f);
}

const char *rpt_error(const rpt_file *f) { return f->err; }
hid_t rpt__file_h5(rpt_file *f) { return f->h; }

int rpt_meta_string(rpt_file *f, const char *name, char **out) {
  *out = NULL;
  char path[128];
  snprintf(path, sizeof path, "/meta/%s", name);
  if (!rpt__exists(f->h, path)) return rpt__fail(f, SIM_ENOTFOUND, "dataset %s is missing", path);
  hid_t ds = H5Dopen2(f->h, path, H5P_DEFAULT);
  hid_t t = ds >= 0 ? H5Dget_type(ds) : -1;
  int rc = SIM_EFORMAT;
  if (t >= 0 && H5Tget_class(t) == H5T_STRING && H5Tis_variable_str(t) <= 0 &&
      !rpt__implausible(ds, 1, H5Tget_size(t))) {
    size_t w = H5Tget_size(t);
    char *buf = calloc(w + 1, 1);
    if (buf && H5Dread(ds, t, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) >= 0) {
      *out = buf;
      rc = 0;
    } else
      free(buf);
  }
  if (t >= 0) H5Tclose(t);
  if (ds >= 0) H5Dclose(ds);
  return rc ? rpt__fail(f, rc, "%s is not a readable string (damaged file?)", path) : 0;
}
int rpt_worlds(rpt_file *f, char *first, size_t len) {
  first[0] = 0;
  if (f->kind != RPT_RESULTS) return 1;
  char *eff = NULL, keep[RPT_ERRLEN];
  memcpy(keep, f->err, sizeof keep); /* a file without the text is not an error of the caller's */
  if (rpt_meta_string(f, "effective", &eff)) {
    memcpy(f->err, keep, sizeof keep);
    return 1;
  }
  int n = 1;
  const char *p = strstr(eff, "compare_policies");
  const char *q = p ? strchr(p, '"') : NULL, *e = q ? strchr(q + 1, '"') : NULL;
  if (q && e && !memchr(p, ';', (size_t)(q - p))) { /* the quoted value of that key */
    const char *c = memchr(q + 1, ',', (size_t)(e - q - 1));
    size_t fl = (size_t)((c ? c : e) - q - 1);
    snprintf(first, len, "%.*s", (int)fl, q + 1);
    n = 1;
    for (const char *t = q + 1; t < e; t++) n += *t == ',';
    if (e == q + 1) n = 1, first[0] = 0;
  }
  free(eff);
  return n;
}
const char *rpt_path(const rpt_file *f) { return f->path; }
rpt_kind rpt_file_kind(const rpt_file *f) { return f->kind; }
const char *rpt_model(const rpt_file *f) { return f->model; }
uint64_t rpt_seed(const rpt_file *f) { return f->seed; }
double rpt_end_time(const rpt_file *f) { return f->end_s; }
int rpt_nreps(const rpt_file *f) { return f->reps; }
uint64_t rpt_rep_seed(const rpt_file *f, int rep) { return f->rep_seeds[rep]; }
unsigned rpt_nmetrics(const rpt_file *f) { return f->nm; }
const char *rpt_metric_name(const rpt_file *f, unsigned k) { return f->names[k]; }
const char *rpt_metric_unit(const rpt_file *f, unsigned k) { return f->units[k]; }
const double *rpt_metric_values(const rpt_file *f) { return f->values; }
const char *rpt_metric_label(const rpt_file *f, unsigned k) { return f->labels ? f->labels[k] : ""; }
int rpt_metric_headline(const rpt_file *f, unsigned k) { return f->headline ? f->headline[k] != 0 : -1; }
int rpt_metric_find(const rpt_file *f, const char *name) {
  for (unsigned k = 0; k < f->nm; k++)
    if (!strcmp(f->names[k], name)) return (int)k;
  return -1;
}
int rpt_summary_stored(const rpt_file *f, unsigned k, rpt_ci *out) {
  if (k >= f->nm) return SIM_EINVAL;
  *out = f->stored[k];
  return 0;
}

void rpt_metric_split(const char *name, char q[64], char dim[64], char val[64]) {
  q[0] = dim[0] = val[0] = 0;
  const char *d1 = strchr(name, '.');
  const char *d2 = d1 ? strchr(d1 + 1, '.') : NULL;
  if (!d1 || !d2) {
    snprintf(q, 64, "%s", name);
    return;
  }
  snprintf(q, 64, "%.*s", (int)(d1 - name), name);
  snprintf(dim, 64, "%.*s", (int)(d2 - d1 - 1), d1 + 1);
  snprintf(val, 64, "%s", d2 + 1);
}

/* ---- tables and series -------------------------------------------------------------------- */

static hid_t rpt__open_obj(rpt_file *f, int rep, const char *kind, const char *name, char *path, size_t len) {
  snprintf(path, len, "/reps/rep_%04d/%s/%s", rep, kind, name);
  if (!rpt__exists(f->h, path)) return -1;
  return H5Dopen2(f->h, path, H5P_DEFAULT);
}

static int rpt__field_index(hid_t ftype, const char *field) {
  int nmem = H5Tget_nmembers(ftype);
  for (int i = 0; i < nmem; i++) {
    char *nm = H5Tget_member_name(ftype, (unsigned)i);
    int same = nm && !strcmp(nm, field);
    H5free_memory(nm);
    if (same) return i;
  }
  return -1;
}

int rpt_has_table(rpt_file *f, const char *table, const char *const *fields) {
  if (f->kind != RPT_RESULTS) return 0;
  for (int r = 0; r < f->reps; r++) {
    char path[256];
    hid_t ds = rpt__open_obj(f, r, "tables", table, path, sizeof path);
    if (ds < 0) return 0;
    hid_t t = H5Dget_type(ds);
    int ok = H5Tget_class(t) == H5T_COMPOUND;
    for (size_t i = 0; ok && fields && fields[i]; i++) ok = rpt__field_index(t, fields[i]) >= 0;
    H5Tclose(t);
    H5Dclose(ds);
    if (!ok) return 0;
  }
  return 1;
}

const char *rpt_table_pick_field(rpt_file *f, const char *table, const char *const *names) {
  for (size_t i = 0; names[i]; i++) {
    const char *one[2] = {names[i], NULL};
    if (rpt_has_table(f, table, one)) return names[i];
  }
  return NULL;
}

int rpt_has_series(rpt_file *f, const char *name) {
  if (f->kind != RPT_RESULTS) return 0;
  for (int r = 0; r < f->reps; r++) {
    char path[256];
    snprintf(path, sizeof path, "/reps/rep_%04d/series/%s", r, name);
    if (!rpt__exists(f->h, path)) return 0;
  }
  return 1;
}

/* Reads one member of a compound dataset through a one-member memory type (HDF5 converts). */
static int rpt__read_member(rpt_file *f, int rep, const char *table, const char *field, hid_t mtype, size_t msize,
                            void **out, size_t *n) {
  char path[256];
  *out = NULL;
  *n = 0;
  hid_t ds = rpt__open_obj(f, rep, "tables", table, path, sizeof path);
  if (ds < 0) return rpt__fail(f, SIM_ENOTFOUND, "table %s is missing", path);
  hid_t ft = H5Dget_type(ds), sp = H5Dget_space(ds);
  int rc = 0;
  hssize_t np = H5Sget_simple_extent_npoints(sp);
  if (H5Tget_class(ft) != H5T_COMPOUND || rpt__field_index(ft, field) < 0)
    rc = rpt__fail(f, SIM_ENOTFOUND, "table %s has no field '%s'", path, field);
  else if (np < 0 || rpt__implausible(ds, (uint64_t)np, 1))
    rc = rpt__fail(f, SIM_EFORMAT, "table %s cannot be read (damaged file?)", path);
  void *buf = NULL;
  if (!rc) {
    buf = calloc((size_t)np ? (size_t)np : 1, msize);
    hid_t ct = H5Tcreate(H5T_COMPOUND, msize);
    H5Tinsert(ct, field, 0, mtype);
    if (!buf)
      rc = rpt__fail(f, SIM_ENOMEM, "out of memory");
    else if (np > 0 && H5Dread(ds, ct, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) < 0)
      rc = rpt__fail(f, SIM_EFORMAT, "field '%s' of table %s cannot be read (damaged file, or not a %s?)", field, path,
                     H5Tget_class(mtype) == H5T_STRING ? "string" : "number");
    H5Tclose(ct);
  }
  H5Sclose(sp);
  H5Tclose(ft);
  H5Dclose(ds);
  if (rc) {
    free(buf);
    return rc;
  }
  *out = buf;
  *n = (size_t)np;
  return 0;
}

int rpt_table_num(rpt_file *f, int rep, const char *table, const char *field, double **out, size_t *n) {
  void *p;
  int rc = rpt__read_member(f, rep, table, field, H5T_NATIVE_DOUBLE, sizeof(double), &p, n);
  *out = p;
  return rc;
}

int rpt_table_str(rpt_file *f, int rep, const char *table, const char *field, char **out, size_t *width, size_t *n) {
  const size_t w = 64;
  hid_t st = H5Tcopy(H5T_C_S1);
  H5Tset_size(st, w);
  H5Tset_strpad(st, H5T_STR_NULLTERM);
  void *p;
  int rc = rpt__read_member(f, rep, table, field, st, w, &p, n);
  H5Tclose(st);
  *out = p;
  *width = w;
  return rc;
}

int rpt_series_read(rpt_file *f, int rep, const char *name, rpt_series *s) {
  memset(s, 0, sizeof *s);
  char path[256];
  hid_t ds = rpt__open_obj(f, rep, "series", name, path, sizeof path);
  if (ds < 0) return rpt__fail(f, SIM_ENOTFOUND, "series %s is missing", path);
  hid_t sp = H5Dget_space(ds);
  hsize_t dims[2] = {0, 0};
  int rc = 0;
  if (H5Sget_simple_extent_ndims(sp) != 2)
    rc = rpt__fail(f, SIM_EFORMAT, "series %s is not [bins][columns]", path);
  else
    H5Sget_simple_extent_dims(sp, dims, NULL);
  H5Sclose(sp);
  if (!rc && (dims[1] > UINT32_MAX || rpt__implausible(ds, dims[0], dims[1]))) /* (it checks the product) */
    rc = rpt__fail(f, SIM_EFORMAT, "series %s declares %llu x %llu cells (damaged file?)", path,
                   (unsigned long long)dims[0], (unsigned long long)dims[1]);
  s->nbins = dims[0];
  s->ncols = dims[1];
  if (!rc) {
    size_t cells = s->nbins * s->ncols;
    int64_t *raw = malloc((cells ? cells : 1) * sizeof *raw);
    s->v = malloc((cells ? cells : 1) * sizeof *s->v);
    if (!raw || !s->v)
      rc = rpt__fail(f, SIM_ENOMEM, "out of memory");
    else if (cells > 0 && H5Dread(ds, H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, raw) < 0)
      rc = rpt__fail(f, SIM_EFORMAT, "series %s cannot be read (damaged file?)", path);
    for (size_t i = 0; !rc && i < cells; i++) s->v[i] = (double)raw[i];
    free(raw);
  }
  if (!rc) {
    rpt__attr_str(ds, "unit", s->unit, sizeof s->unit);
    if (rpt__attr_num(ds, "bin_width_s", H5T_NATIVE_DOUBLE, &s->bin_width) ||
        rpt__attr_strs(ds, "columns", s->ncols, &s->colnames))
      rc = rpt__fail(f, SIM_EFORMAT, "series %s lacks its bin_width_s or columns attribute", path);
  }
  H5Dclose(ds);
  if (rc) rpt_series_free(s);
  return rc;
}

void rpt_series_free(rpt_series *s) {
  free(s->v);
  rpt__free_strs(s->colnames, s->ncols);
  memset(s, 0, sizeof *s);
}

/* ---- sweep files -------------------------------------------------------------------------- */

int rpt__w_attr_str(hid_t obj, const char *name, const char *v) {
  hid_t t = H5Tcopy(H5T_C_S1), sp = H5Screate(H5S_SCALAR);
  H5Tset_size(t, strlen(v) + 1);
  hid_t a = H5Acreate2(obj, name, t, sp, H5P_DEFAULT, H5P_DEFAULT);
  int rc = a < 0 || H5Awrite(a, t, v) < 0 ? -1 : 0;
  if (a >= 0) H5Aclose(a);
  H5Sclose(sp);
  H5Tclose(t);
  return rc;
}
int rpt__w_attr_num(hid_t obj, const char *name, hid_t type, const void *v) {
  hid_t sp = H5Screate(H5S_SCALAR);
  hid_t a = H5Acreate2(obj, name, type, sp, H5P_DEFAULT, H5P_DEFAULT);
  int rc = a < 0 || H5Awrite(a, type, v) < 0 ? -1 : 0;
  if (a >= 0) H5Aclose(a);
  H5Sclose(sp);
  return rc;
}
/* n strings as a fixed-length string attribute (obj) or dataset (as_dset) named `name` in loc. */
int rpt__w_strs(hid_t loc, const char *name, char *const *v, size_t n, int as_dset) {
  size_t w = 1;
  for (size_t i = 0; i < n; i++)
    if (strlen(v[i]) + 1 > w) w = strlen(v[i]) + 1;
  char *buf = calloc(n ? n : 1, w);
  if (!buf) return -1;
  for (size_t i = 0; i < n; i++) memcpy(buf + i * w, v[i], strlen(v[i]));
  hsize_t d = n;
  hid_t t = H5Tcopy(H5T_C_S1), sp = H5Screate_simple(1, &d, NULL);
  H5Tset_size(t, w);
  int rc;
  if (as_dset) {
    hid_t ds = H5Dcreate2(loc, name, t, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    rc = ds < 0 || (n && H5Dwrite(ds, t, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) < 0) ? -1 : 0;
    if (ds >= 0) H5Dclose(ds);
  } else {
    hid_t a = H5Acreate2(loc, name, t, sp, H5P_DEFAULT, H5P_DEFAULT);
    rc = a < 0 || H5Awrite(a, t, buf) < 0 ? -1 : 0;
    if (a >= 0) H5Aclose(a);
  }
  H5Sclose(sp);
  H5Tclose(t);
  free(buf);
  return rc;
}
int rpt__w_doubles(hid_t loc, const char *name, int rank, const hsize_t *dims, const double *v) {
  hid_t sp = H5Screate_simple(rank, dims, NULL);
  hid_t ds = H5Dcreate2(loc, name, H5T_NATIVE_DOUBLE, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  hsize_t n = 1;
  for (int i = 0; i < rank; i++) n *= dims[i];
  int rc = ds < 0 || (n && H5Dwrite(ds, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) < 0) ? -1 : 0;
  if (ds >= 0) H5Dclose(ds);
  H5Sclose(sp);
  return rc;
}

int rpt_sweep_write(const char *path, const rpt_sweep *s, const char *scenario_path, uint64_t seed, char *err,
                    size_t errlen) {
  char tmp[4096];
  if (sim_tmpname(path, tmp, sizeof tmp)) {
    snprintf(err, errlen, "%s: the path is too long", path);
    return SIM_EIO;
  }
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
  hid_t h = sim_h5mem_create(tmp); /* built in memory, written whole (h5mem.h: a full disk) */
  if (h < 0) {
    snprintf(err, errlen, "%s: cannot create the sweep file (does its folder exist and is it writable?)", path);
    return SIM_EIO;
  }
  int32_t ver = RPT_SWEEP_FORMAT_VERSION, reps = s->reps;
  int rc = rpt__w_attr_str(h, "format", RPT_SWEEP_FORMAT);
  rc |= rpt__w_attr_num(h, "format_version", H5T_NATIVE_INT32, &ver);
  hid_t g = H5Gcreate2(h, "sweep", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  rc |= g < 0;
  if (g >= 0) {
    unsigned np = s->npoints, nm = s->nmetrics;
    rc |= rpt__w_attr_str(g, "param", s->param);
    rc |= rpt__w_attr_str(g, "model", s->model);
    rc |= rpt__w_attr_str(g, "scenario_path", scenario_path ? scenario_path : "");
    rc |= rpt__w_attr_num(g, "seed", H5T_NATIVE_UINT64, &seed);
    rc |= rpt__w_attr_num(g, "reps", H5T_NATIVE_INT32, &reps);
    if (s->interrupted) { /* only then: a whole sweep's file is as it was */
      int32_t one = 1, req = (int32_t)s->npoints_requested;
      rc |= rpt__w_attr_num(g, "interrupted", H5T_NATIVE_INT32, &one);
      rc |= rpt__w_attr_num(g, "npoints_requested", H5T_NATIVE_INT32, &req);
    }
    rc |= rpt__w_strs(g, "labels", s->labels, np, 1);
    rc |= rpt__w_strs(g, "point_files", s->point_files, np, 1);
    if (s->nkeys > 1) { /* a grid: only then, so that a one-key sweep file is as it was */
      hsize_t dk[2] = {np, s->nkeys};
      rc |= rpt__w_strs(g, "keys", s->keys, s->nkeys, 1);
      rc |= rpt__w_strs(g, "key_labels", s->key_labels, (size_t)np * s->nkeys, 1);
      rc |= rpt__w_doubles(g, "key_x", 2, dk, s->key_x);
    }
    hsize_t d1 = np, d3[3] = {np, (hsize_t)s->reps, nm}, d2[2] = {np, nm};
    rc |= rpt__w_doubles(g, "x", 1, &d1, s->x);
    rc |= rpt__w_doubles(g, "metrics", 3, d3, s->values);
    if (!rc) {
      hid_t ds = H5Dopen2(g, "metrics", H5P_DEFAULT);
      rc |= ds < 0;
      if (ds >= 0) {
        rc |= rpt__w_strs(ds, "names", s->names, nm, 0);
        rc |= rpt__w_strs(ds, "units", s->units, nm, 0);
        H5Dclose(ds);
      }
    }
    /* Per point and metric: mean and 95% CI (GSL, Student t), for readers without the raw values. */
    double *mean = calloc((size_t)np * nm + 1, sizeof *mean), *lo = calloc((size_t)np * nm + 1, sizeof *lo),
           *hi = calloc((size_t)np * nm + 1, sizeof *hi);
    if (!mean || !lo || !hi) rc = -1;
    for (unsigned p = 0; !rc && p < np; p++)
      for (unsigned k = 0; k < nm; k++) {
        rpt_ci c;
        rpt_ci_t(s->values + (size_t)p * s->reps * nm + k, (size_t)s->reps, nm, &c);
        mean[p * nm + k] = c.mean;
        lo[p * nm + k] = c.lo;
        hi[p * nm + k] = c.hi;
      }
    if (!rc) {
      rc |= rpt__w_doubles(g, "mean", 2, d2, mean);
      rc |= rpt__w_doubles(g, "ci95_lo", 2, d2, lo);
      rc |= rpt__w_doubles(g, "ci95_hi", 2, d2, hi);
    }
    free(mean);
    free(lo);
    free(hi);
    H5Gclose(g);
  }
  return sim_h5mem_finish(h, tmp, path, !rc, "sweep file", err, errlen) ? SIM_EIO : 0;
}

int rpt__r_strs_dset(hid_t g, const char *name, size_t want, char ***out) {
  *out = NULL;
  if (H5Lexists(g, name, H5P_DEFAULT) <= 0) return -1;
  hid_t ds = H5Dopen2(g, name, H5P_DEFAULT);
  if (ds < 0) return -1;
  hid_t t = H5Dget_type(ds), sp = H5Dget_space(ds);
  int rc = -1;
  if (H5Tget_class(t) == H5T_STRING && H5Tis_variable_str(t) <= 0 &&
      H5Sget_simple_extent_npoints(sp) == (hssize_t)want && !rpt__implausible(ds, want, H5Tget_size(t))) {
    size_t w = H5Tget_size(t);
    char *buf = calloc(want ? want : 1, w);
    char **v = calloc(want ? want : 1, sizeof *v);
    if (buf && v && (!want || H5Dread(ds, t, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) >= 0)) {
      rc = 0;
      for (size_t i = 0; i < want; i++)
        if (!(v[i] = strndup(buf + i * w, w))) rc = -1;
    }
    free(buf);
    if (!rc)
      *out = v;
    else
      rpt__free_strs(v, v ? want : 0);
  }
  H5Sclose(sp);
  H5Tclose(t);
  H5Dclose(ds);
  return rc;
}

int rpt_sweep_read(rpt_file *f, rpt_sweep *s) {
  memset(s, 0, sizeof *s);
  if (f->kind != RPT_SWEEP) return rpt__fail(f, SIM_EFORMAT, "not a sweep file");
  hid_t g = H5Gopen2(f->h, "/sweep", H5P_DEFAULT);
  if (g < 0) return rpt__fail(f, SIM_EFORMAT, "/sweep cannot be opened (damaged file?)");
  int rc = 0;
  int32_t reps = 0;
  if (rpt__attr_str(g, "param", s->param, sizeof s->param) || rpt__attr_num(g, "reps", H5T_NATIVE_INT32, &reps) ||
      reps < 1)
    rc = rpt__fail(f, SIM_EFORMAT, "/sweep lacks its param or reps attribute");
  rpt__attr_str(g, "model", s->model, sizeof s->model);
  s->reps = reps;
  if (H5Aexists(g, "interrupted") > 0) {
    int32_t v = 0, req = 0;
    if (!rpt__attr_num(g, "interrupted", H5T_NATIVE_INT32, &v)) s->interrupted = v != 0;
    if (H5Aexists(g, "npoints_requested") > 0 && !rpt__attr_num(g, "npoints_requested", H5T_NATIVE_INT32, &req))
      s->npoints_requested = (unsigned)req;
  }
  hid_t ds = rc || H5Lexists(g, "metrics", H5P_DEFAULT) <= 0 ? -1 : H5Dopen2(g, "metrics", H5P_DEFAULT);
  if (!rc && ds < 0) rc = rpt__fail(f, SIM_ENOTFOUND, "dataset /sweep/metrics is missing");
  if (!rc) {
    hid_t sp = H5Dget_space(ds);
    hsize_t d[3] = {0, 0, 0};
    if (H5Sget_simple_extent_ndims(sp) != 3)
      rc = rpt__fail(f, SIM_EFORMAT, "/sweep/metrics is not [points][reps][metrics]");
    else
      H5Sget_simple_extent_dims(sp, d, NULL);
    H5Sclose(sp);
    if (!rc && d[1] != (hsize_t)reps)
      rc = rpt__fail(f, SIM_EFORMAT, "/sweep/metrics has %llu replications, reps says %d", (unsigned long long)d[1],
                     reps);
    s->npoints = (unsigned)d[0];
    s->nmetrics = (unsigned)d[2];
    size_t n = (size_t)d[0] * d[1] * d[2];
    if (!rc && (d[0] > UINT32_MAX || d[2] > UINT32_MAX || (d[1] && d[0] > UINT64_MAX / d[1]) ||
                (d[2] && d[0] * d[1] > UINT64_MAX / d[2]) || rpt__implausible(ds, (uint64_t)n, 1)))
      rc = rpt__fail(f, SIM_EFORMAT, "/sweep/metrics declares %llu x %llu x %llu values (damaged file?)",
                     (unsigned long long)d[0], (unsigned long long)d[1], (unsigned long long)d[2]);
    if (!rc) {
      s->values = calloc(n ? n : 1, sizeof *s->values);
      if (!s->values)
        rc = rpt__fail(f, SIM_ENOMEM, "out of memory");
      else if (n && H5Dread(ds, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, s->values) < 0)
        rc = rpt__fail(f, SIM_EFORMAT, "/sweep/metrics cannot be read (damaged file?)");
    }
    if (!rc &&
        (rpt__attr_strs(ds, "names", s->nmetrics, &s->names) || rpt__attr_strs(ds, "units", s->nmetrics, &s->units)))
      rc = rpt__fail(f, SIM_EFORMAT, "/sweep/metrics lacks its names or units attribute");
  }
  if (ds >= 0) H5Dclose(ds);
  if (!rc && (rpt__r_strs_dset(g, "labels", s->npoints, &s->labels) ||
              rpt__r_strs_dset(g, "point_files", s->npoints, &s->point_files)))
    rc = rpt__fail(f, SIM_EFORMAT, "/sweep/labels or /sweep/point_files is missing or has the wrong length");
  if (!rc && H5Lexists(g, "keys", H5P_DEFAULT) > 0) { /* a grid of several keys */
    hid_t kd = H5Dopen2(g, "keys", H5P_DEFAULT);
    hssize_t nk = 0;
    if (kd >= 0) {
      hid_t sp = H5Dget_space(kd);
      nk = H5Sget_simple_extent_npoints(sp);
      H5Sclose(sp);
      H5Dclose(kd);
    }
    s->nkeys = nk >= 2 && nk <= 64 ? (unsigned)nk : 0;
    size_t nkl = (size_t)s->npoints * s->nkeys;
    s->key_x = s->nkeys ? calloc(nkl ? nkl : 1, sizeof *s->key_x) : NULL;
    hid_t xd = s->key_x && H5Lexists(g, "key_x", H5P_DEFAULT) > 0 ? H5Dopen2(g, "key_x", H5P_DEFAULT) : -1;
    hid_t xsp = xd >= 0 ? H5Dget_space(xd) : -1;
    if (!s->nkeys || rpt__r_strs_dset(g, "keys", s->nkeys, &s->keys) ||
        rpt__r_strs_dset(g, "key_labels", nkl, &s->key_labels) || xd < 0 ||
        H5Sget_simple_extent_npoints(xsp) != (hssize_t)nkl ||
        (nkl && H5Dread(xd, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, s->key_x) < 0))
      rc = rpt__fail(f, SIM_EFORMAT, "/sweep/keys, key_labels or key_x is damaged or has the wrong length");
    if (xsp >= 0) H5Sclose(xsp);
    if (xd >= 0) H5Dclose(xd);
  }
  if (!rc) {
    s->x = calloc(s->npoints ? s->npoints : 1, sizeof *s->x);
    hid_t xd = H5Lexists(g, "x", H5P_DEFAULT) > 0 ? H5Dopen2(g, "x", H5P_DEFAULT) : -1;
    if (!s->x || xd < 0 || (s->npoints && H5Dread(xd, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, s->x) < 0))
      rc = rpt__fail(f, SIM_EFORMAT, "/sweep/x is missing or cannot be read");
    if (xd >= 0) H5Dclose(xd);
  }
  H5Gclose(g);
  if (rc) rpt_sweep_free(s);
  return rc;
}

void rpt_sweep_free(rpt_sweep *s) {
  rpt__free_strs(s->keys, s->keys ? s->nkeys : 0);
  rpt__free_strs(s->key_labels, s->key_labels ? (size_t)s->npoints * s->nkeys : 0);
  free(s->key_x);
  rpt__free_strs(s->labels, s->npoints);
  rpt__free_strs(s->point_files, s->npoints);
  rpt__free_strs(s->names, s->nmetrics);
  rpt__free_strs(s->units, s->nmetrics);
  free(s->x);
  free(s->values);
  memset(s, 0, sizeof *s);
}
