/* results_h5.c - the HDF5 results file (docs/results-format.md), written whole or not at all. */
#include "sim/results_io.h"
#include "sim/h5mem.h"
#include "sim/provenance.h"
#include "sim/tmpname.h"
#include "spotlab_config.h"

#include <hdf5.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static hid_t sim__str_type(size_t len) {
  hid_t t = H5Tcopy(H5T_C_S1);
  H5Tset_size(t, len ? len : 1);
  H5Tset_strpad(t, H5T_STR_NULLTERM);
  return t;
}

static int sim__attr_str(hid_t obj, const char *name, const char *v) {
  if (!v) v = "";
  hid_t t = sim__str_type(strlen(v) + 1), sp = H5Screate(H5S_SCALAR);
  hid_t a = H5Acreate2(obj, name, t, sp, H5P_DEFAULT, H5P_DEFAULT);
  herr_t rc = a < 0 ? -1 : H5Awrite(a, t, v);
  if (a >= 0) H5Aclose(a);
  H5Sclose(sp);
  H5Tclose(t);
  return rc < 0 ? -1 : 0;
}

static int sim__attr_num(hid_t obj, const char *name, hid_t type, const void *v) {
  hid_t sp = H5Screate(H5S_SCALAR);
  hid_t a = H5Acreate2(obj, name, type, sp, H5P_DEFAULT, H5P_DEFAULT);
  herr_t rc = a < 0 ? -1 : H5Awrite(a, type, v);
  if (a >= 0) H5Aclose(a);
  H5Sclose(sp);
  return rc < 0 ? -1 : 0;
}

/* A 1-D attribute of n fixed-length strings. */
static int sim__attr_strs(hid_t obj, const char *name, const char *const *v, size_t stride_bytes, size_t n) {
  size_t w = 1;
  for (size_t i = 0; i < n; i++) {
    const char *s = *(const char *const *)((const char *)v + i * stride_bytes);
    size_t l = s ? strlen(s) + 1 : 1;
    if (l > w) w = l;
  }
  char *buf = calloc(n ? n : 1, w);
  if (!buf) return -1;
  for (size_t i = 0; i < n; i++) {
    const char *s = *(const char *const *)((const char *)v + i * stride_bytes);
    if (s) memcpy(buf + i * w, s, strlen(s));
  }
  hsize_t dims = n;
  hid_t t = sim__str_type(w), sp = H5Screate_simple(1, &dims, NULL);
  hid_t a = H5Acreate2(obj, name, t, sp, H5P_DEFAULT, H5P_DEFAULT);
  herr_t rc = a < 0 ? -1 : H5Awrite(a, t, buf);
  if (a >= 0) H5Aclose(a);
  H5Sclose(sp);
  H5Tclose(t);
  free(buf);
  return rc < 0 ? -1 : 0;
}

/* sim__attr_strs, but an attribute that would pass HDF5's 64 KiB limit on an attribute kept in
 * its object's header (the file format spotlab writes) is written as variable-length strings,
 * which live outside it: long catalogue texts of a scenario with many metrics. */
#define SIM__ATTR_MAX 60000
static int sim__attr_strs_long(hid_t obj, const char *name, const char *const *v, size_t stride_bytes, size_t n) {
  size_t w = 1;
  for (size_t i = 0; i < n; i++) {
    const char *s = *(const char *const *)((const char *)v + i * stride_bytes);
    size_t l = s ? strlen(s) + 1 : 1;
    if (l > w) w = l;
  }
  if (n * w <= SIM__ATTR_MAX) return sim__attr_strs(obj, name, v, stride_bytes, n);
  const char **p = calloc(n, sizeof *p);
  if (!p) return -1;
  for (size_t i = 0; i < n; i++) {
    const char *s = *(const char *const *)((const char *)v + i * stride_bytes);
    p[i] = s ? s : "";
  }
  hsize_t dims = n;
  hid_t t = H5Tcopy(H5T_C_S1), sp = H5Screate_simple(1, &dims, NULL);
  H5Tset_size(t, H5T_VARIABLE);
  hid_t a = H5Acreate2(obj, name, t, sp, H5P_DEFAULT, H5P_DEFAULT);
  herr_t rc = a < 0 ? -1 : H5Awrite(a, t, p);
  if (a >= 0) H5Aclose(a);
  H5Sclose(sp);
  H5Tclose(t);
  free(p);
  return rc < 0 ? -1 : 0;
}

/* A 1-D string attribute of n strings (fixed-length or variable-length) as C strings: *buf holds
 * them (malloc'd), v[0..n) point into it. 0; -1 when absent or not such an attribute. */
static int sim__read_strs(hid_t obj, const char *name, size_t n, char **buf, const char **v) {
  *buf = NULL;
  if (H5Aexists(obj, name) <= 0) return -1;
  hid_t a = H5Aopen(obj, name, H5P_DEFAULT), t = a >= 0 ? H5Aget_type(a) : -1, sp = a >= 0 ? H5Aget_space(a) : -1;
  hsize_t dims = 0;
  int ok = t >= 0 && sp >= 0 && H5Tget_class(t) == H5T_STRING && H5Sget_simple_extent_ndims(sp) == 1 &&
           H5Sget_simple_extent_dims(sp, &dims, NULL) == 1 && dims == n;
  if (ok && !H5Tis_variable_str(t)) {
    size_t w = H5Tget_size(t);
    char *raw = calloc(n ? n : 1, w), *out = calloc(n ? n : 1, w + 1);
    ok = raw && out && H5Aread(a, t, raw) >= 0;
    for (size_t i = 0; ok && i < n; i++) {
      memcpy(out + i * (w + 1), raw + i * w, w);
      v[i] = out + i * (w + 1);
    }
    free(raw);
    if (ok)
      *buf = out;
    else
      free(out);
  } else if (ok) {
    hid_t mt = H5Tcopy(H5T_C_S1);
    H5Tset_size(mt, H5T_VARIABLE);
    char **p = calloc(n ? n : 1, sizeof *p);
    ok = p && H5Aread(a, mt, p) >= 0;
    size_t tot = 1;
    for (size_t i = 0; ok && i < n; i++) tot += (p[i] ? strlen(p[i]) : 0) + 1;
    char *out = ok ? malloc(tot) : NULL, *o = out;
    ok = ok && out;
    for (size_t i = 0; ok && i < n; i++) {
      size_t l = p[i] ? strlen(p[i]) : 0;
      memcpy(o, p[i] ? p[i] : "", l);
      o[l] = 0;
      v[i] = o;
      o += l + 1;
    }
    if (p && ok) H5Dvlen_reclaim(mt, sp, H5P_DEFAULT, p);
    free(p);
    H5Tclose(mt);
    if (ok)
      *buf = out;
    else
      free(out);
  }
  if (sp >= 0) H5Sclose(sp);
  if (t >= 0) H5Tclose(t);
  if (a >= 0) H5Aclose(a);
  return ok ? 0 : -1;
}

static int sim__dset_str(hid_t loc, const char *name, const char *v) {
  if (!v) v = "";
  hid_t t = sim__str_type(strlen(v) + 1), sp = H5Screate(H5S_SCALAR);
  hid_t ds = H5Dcreate2(loc, name, t, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  herr_t rc = ds < 0 ? -1 : H5Dwrite(ds, t, H5S_ALL, H5S_ALL, H5P_DEFAULT, v);
  if (ds >= 0) H5Dclose(ds);
  H5Sclose(sp);
  H5Tclose(t);
  return rc < 0 ? -1 : 0;
}

static hid_t sim__field_type(sim_ftype t) {
  switch (t) {
  case SIM_F_I64: return H5Tcopy(H5T_NATIVE_INT64);
  case SIM_F_U64: return H5Tcopy(H5T_NATIVE_UINT64);
  case SIM_F_I32: return H5Tcopy(H5T_NATIVE_INT32);
  case SIM_F_F64: return H5Tcopy(H5T_NATIVE_DOUBLE);
  case SIM_F_STR16: return sim__str_type(16);
  case SIM_F_STR32: return sim__str_type(32);
  }
  return -1;
}

static int sim__write_table(hid_t loc, const sim_table_def *td, const unsigned char *recs, size_t n) {
  hid_t ct = H5Tcreate(H5T_COMPOUND, td->record_size);
  for (unsigned f = 0; f < td->nfields; f++) {
    hid_t ft = sim__field_type(td->fields[f].type);
    H5Tinsert(ct, td->fields[f].name, td->fields[f].offset, ft);
    H5Tclose(ft);
  }
  hsize_t dims = n;
  hid_t sp = H5Screate_simple(1, &dims, NULL);
  hid_t ds = H5Dcreate2(loc, td->name, ct, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  int rc = ds < 0 ? -1 : 0;
  if (!rc && n) rc = H5Dwrite(ds, ct, H5S_ALL, H5S_ALL, H5P_DEFAULT, recs) < 0 ? -1 : 0;
  if (!rc) rc = sim__attr_strs(ds, "units", &td->fields[0].unit, sizeof td->fields[0], td->nfields);
  if (!rc) rc = sim__attr_str(ds, "help", td->help);
  if (ds >= 0) H5Dclose(ds);
  H5Sclose(sp);
  H5Tclose(ct);
  return rc;
}

static int sim__write_series(hid_t loc, const sim_series_def *sd, const int64_t *v, size_t nbins) {
  hsize_t dims[2] = {nbins, sd->ncols};
  hid_t sp = H5Screate_simple(2, dims, NULL);
  hid_t ds = H5Dcreate2(loc, sd->name, H5T_NATIVE_INT64, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  int rc = ds < 0 ? -1 : 0;
  if (!rc) rc = H5Dwrite(ds, H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) < 0 ? -1 : 0;
  if (!rc) rc = sim__attr_str(ds, "unit", sd->unit);
  if (!rc) rc = sim__attr_num(ds, "bin_width_s", H5T_NATIVE_DOUBLE, &sd->bin_width);
  if (!rc && sd->colnames) rc = sim__attr_strs(ds, "columns", sd->colnames, sizeof(char *), sd->ncols);
  if (!rc && !sd->colnames) {
    const char *one = "value";
    const char **names = malloc(sizeof(char *) * sd->ncols);
    if (!names) rc = -1;
    for (unsigned c = 0; !rc && c < sd->ncols; c++) names[c] = one;
    if (!rc) rc = sim__attr_strs(ds, "columns", names, sizeof(char *), sd->ncols);
    free(names);
  }
  if (!rc) rc = sim__attr_str(ds, "help", sd->help);
  /* units: one per column, as tables have (format version 1 files before it have only `unit`) */
  if (!rc && sd->colunits) rc = sim__attr_strs(ds, "units", sd->colunits, sizeof(char *), sd->ncols);
  if (!rc && !sd->colunits) {
    const char **u = malloc(sizeof(char *) * (sd->ncols ? sd->ncols : 1));
    if (!u) rc = -1;
    for (unsigned c = 0; !rc && c < sd->ncols; c++) u[c] = sd->unit;
    if (!rc) rc = sim__attr_strs(ds, "units", u, sizeof(char *), sd->ncols);
    free(u);
  }
  if (ds >= 0) H5Dclose(ds);
  H5Sclose(sp);
  return rc;
}

typedef struct sim__summary_rec {
  char name[64];
  char unit[24];
  double mean, sd, ci95_lo, ci95_hi;
  int32_t n;
} sim__summary_rec;

static int sim__write_metrics(hid_t f, const sim_metric_def *md, unsigned nm, const double *values, int reps) {
  int rc = 0;
  hsize_t dims[2] = {(hsize_t)reps, nm};
  hid_t sp = H5Screate_simple(2, dims, NULL);
  hid_t ds = H5Dcreate2(f, "metrics", H5T_NATIVE_DOUBLE, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  if (ds < 0) rc = -1;
  if (!rc && nm && reps) rc = H5Dwrite(ds, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, values) < 0 ? -1 : 0;
  if (!rc) rc = sim__attr_strs(ds, "names", &md[0].name, sizeof md[0], nm);
  if (!rc) rc = sim__attr_strs(ds, "units", &md[0].unit, sizeof md[0], nm);
  /* the catalogue, in the order of names ("" where a metric does not state it): docs/results-format.md */
  if (!rc) rc = sim__attr_strs_long(ds, "labels", &md[0].label, sizeof md[0], nm);
  if (!rc) rc = sim__attr_strs_long(ds, "formulas", &md[0].formula, sizeof md[0], nm);
  if (!rc) rc = sim__attr_strs_long(ds, "over", &md[0].over, sizeof md[0], nm);
  if (!rc) rc = sim__attr_strs_long(ds, "weights", &md[0].weight, sizeof md[0], nm);
  if (!rc) rc = sim__attr_strs_long(ds, "censored", &md[0].censored, sizeof md[0], nm);
  if (ds >= 0) H5Dclose(ds);
  H5Sclose(sp);
  if (rc) return rc;

  sim__summary_rec *rec = calloc(nm ? nm : 1, sizeof *rec);
  if (!rec) return -1;
  for (unsigned k = 0; k < nm; k++) {
    sim_summary s;
    sim_summarize(values + k, (size_t)reps, nm, &s);
    snprintf(rec[k].name, sizeof rec[k].name, "%s", md[k].name);
    snprintf(rec[k].unit, sizeof rec[k].unit, "%s", md[k].unit);
    rec[k].mean = s.mean;
    rec[k].sd = s.sd;
    rec[k].ci95_lo = s.ci95_lo;
    rec[k].ci95_hi = s.ci95_hi;
    rec[k].n = s.n;
  }
  hid_t ct = H5Tcreate(H5T_COMPOUND, sizeof *rec);
  hid_t s64 = sim__str_type(64), s24 = sim__str_type(24);
  H5Tinsert(ct, "name", offsetof(sim__summary_rec, name), s64);
  H5Tinsert(ct, "unit", offsetof(sim__summary_rec, unit), s24);
  H5Tinsert(ct, "mean", offsetof(sim__summary_rec, mean), H5T_NATIVE_DOUBLE);
  H5Tinsert(ct, "sd", offsetof(sim__summary_rec, sd), H5T_NATIVE_DOUBLE);
  H5Tinsert(ct, "ci95_lo", offsetof(sim__summary_rec, ci95_lo), H5T_NATIVE_DOUBLE);
  H5Tinsert(ct, "ci95_hi", offsetof(sim__summary_rec, ci95_hi), H5T_NATIVE_DOUBLE);
  H5Tinsert(ct, "n", offsetof(sim__summary_rec, n), H5T_NATIVE_INT32);
  hsize_t n1 = nm;
  sp = H5Screate_simple(1, &n1, NULL);
  ds = H5Dcreate2(f, "summary", ct, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  if (ds < 0) rc = -1;
  if (!rc && nm) rc = H5Dwrite(ds, ct, H5S_ALL, H5S_ALL, H5P_DEFAULT, rec) < 0 ? -1 : 0;
  if (ds >= 0) H5Dclose(ds);
  H5Sclose(sp);
  H5Tclose(ct);
  H5Tclose(s64);
  H5Tclose(s24);
  free(rec);
  return rc;
}

int sim_results_write(const char *path, const sim_run_meta *meta, const sim_model *m, const sim_results *reps,
                      const sim_metric_def *metrics, unsigned nmetrics, const double *values, char *err,
                      size_t errlen) {
  char tmp[4096];
  if (sim_tmpname(path, tmp, sizeof tmp)) {
    snprintf(err, errlen, "%s: the path is too long", path);
    return SIM_EIO;
  }
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL); /* errors are reported here, not by HDF5's stack dump */
  hid_t f = sim_h5mem_create(tmp);       /* built in memory, written whole (h5mem.h: a full disk) */
  if (f < 0) {
    snprintf(err, errlen, "%s: cannot create the results file (does its folder exist and is it writable?)", path);
    return SIM_EIO;
  }
  int rc = 0;
  int32_t ver = SIM_RESULTS_FORMAT_VERSION, i32;
  rc |= sim__attr_str(f, "format", SIM_RESULTS_FORMAT);
  rc |= sim__attr_num(f, "format_version", H5T_NATIVE_INT32, &ver);
  rc |= sim__attr_str(f, "spotlab_version", SPOTLAB_VERSION);

  hid_t g = H5Gcreate2(f, "meta", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  rc |= g < 0;
  if (g >= 0) {
    char when[32];
    time_t now = time(NULL);
    struct tm tmv;
    gmtime_r(&now, &tmv);
    strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tmv);
    rc |= sim__attr_str(g, "model", meta->model);
    rc |= sim__attr_str(g, "version", SPOTLAB_VERSION);
    rc |= sim__attr_str(g, "scenario_path", meta->scenario_path);
    rc |= sim__attr_num(g, "seed", H5T_NATIVE_UINT64, &meta->seed);
    int part = meta->reps_total > 0 && (meta->rep_first != 0 || meta->reps != meta->reps_total);
    i32 = part ? meta->reps_total : meta->reps;
    rc |= sim__attr_num(g, "reps", H5T_NATIVE_INT32, &i32);
    if (part) { /* one shard of the run's replications, for `spotlab merge` */
      i32 = meta->rep_first;
      rc |= sim__attr_num(g, "part_first", H5T_NATIVE_INT32, &i32);
      i32 = meta->reps;
      rc |= sim__attr_num(g, "part_count", H5T_NATIVE_INT32, &i32);
    }
    if (meta->spread) rc |= sim__attr_str(g, "spread", meta->spread);
    i32 = meta->ranks;
    rc |= sim__attr_num(g, "ranks", H5T_NATIVE_INT32, &i32);
    i32 = meta->threads;
    rc |= sim__attr_num(g, "threads", H5T_NATIVE_INT32, &i32);
    rc |= sim__attr_num(g, "wall_time_s", H5T_NATIVE_DOUBLE, &meta->wall_s);
    rc |= sim__attr_num(g, "end_time_s", H5T_NATIVE_DOUBLE, &meta->end_s);
    rc |= sim__attr_str(g, "created", when);
    if (meta->interrupted) { /* only then: the files of whole runs are as they were */
      i32 = 1;
      rc |= sim__attr_num(g, "interrupted", H5T_NATIVE_INT32, &i32);
      i32 = meta->reps_requested;
      rc |= sim__attr_num(g, "reps_requested", H5T_NATIVE_INT32, &i32);
    }
    /* how the file was made: enough to rebuild the same binary and rerun the same command */
    sim_provenance pv;
    sim_provenance_get(&pv);
    rc |=
        sim__attr_str(g, "command_line", meta->command_line && meta->command_line[0] ? meta->command_line : "unknown");
    rc |= sim__attr_str(g, "git_commit", pv.git);
    rc |= sim__attr_str(g, "compiler", pv.compiler);
    rc |= sim__attr_str(g, "gsl_version", pv.gsl);
    rc |= sim__attr_str(g, "hdf5_version", pv.hdf5);
    rc |= sim__attr_str(g, "mpi_version", pv.mpi);
    rc |= sim__attr_str(g, "libconfig_version", pv.libconfig);
    rc |= sim__attr_str(g, "host", pv.host);
    rc |= sim__dset_str(g, "scenario", meta->scenario_text);
    rc |= sim__dset_str(g, "effective", meta->effective);
    if (meta->assumptions) rc |= sim__dset_str(g, "assumptions", meta->assumptions);
    H5Gclose(g);
  }
  rc |= sim__write_metrics(f, metrics, nmetrics, values, meta->reps);

  hid_t gr = H5Gcreate2(f, "reps", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  rc |= gr < 0;
  for (int r = 0; !rc && r < meta->reps; r++) {
    char name[32];
    snprintf(name, sizeof name, "rep_%04d", meta->rep_first + r);
    hid_t rg = H5Gcreate2(gr, name, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    if (rg < 0) {
      rc = 1;
      break;
    }
    rc |= sim__attr_num(rg, "seed", H5T_NATIVE_UINT64, &reps[r].seed);
    rc |= sim__attr_num(rg, "events", H5T_NATIVE_UINT64, &reps[r].events);
    rc |= sim__attr_num(rg, "wall_time_s", H5T_NATIVE_DOUBLE, &reps[r].wall_s);
    hid_t sg = H5Gcreate2(rg, "series", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    for (unsigned s = 0; sg >= 0 && !rc && s < m->nseries; s++)
      rc |= sim__write_series(sg, &m->series[s], reps[r].series[s], reps[r].nbins[s]);
    if (sg >= 0) H5Gclose(sg);
    hid_t tg = H5Gcreate2(rg, "tables", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    for (unsigned t = 0; tg >= 0 && !rc && t < m->ntables; t++)
      rc |= sim__write_table(tg, &m->tables[t], reps[r].tables[t], reps[r].nrecords[t]);
    if (tg >= 0) H5Gclose(tg);
    H5Gclose(rg);
  }
  if (gr >= 0) H5Gclose(gr);
  return sim_h5mem_finish(f, tmp, path, !rc, "results", err, errlen) ? SIM_EIO : SIM_OK;
}

/* ---- Merging parts (sim_results_merge) ---------------------------------------------------------- */

/* One part file as the merge sees it. */
typedef struct sim__part {
  const char *path;
  hid_t f;
  char *model, *scenario, *effective;
  uint64_t seed;
  int32_t reps, first, count;
  double end_s, wall_s;
  hsize_t nm;           /* metrics per replication */
  unsigned char *names; /* /metrics names and units attributes, raw (fixed-length strings) */
  size_t names_w, units_w;
  unsigned char *units;
} sim__part;

static char *sim__read_str_attr(hid_t obj, const char *name) {
  if (H5Aexists(obj, name) <= 0) return NULL;
  hid_t a = H5Aopen(obj, name, H5P_DEFAULT), t = a >= 0 ? H5Aget_type(a) : -1;
  char *v = NULL;
  if (t >= 0 && H5Tget_class(t) == H5T_STRING && !H5Tis_variable_str(t)) {
    size_t n = H5Tget_size(t);
    v = calloc(1, n + 1);
    if (v && H5Aread(a, t, v) < 0) {
      free(v);
      v = NULL;
    }
  }
  if (t >= 0) H5Tclose(t);
  if (a >= 0) H5Aclose(a);
  return v;
}

static int sim__read_num_attr(hid_t obj, const char *name, hid_t mem, void *v) {
  if (H5Aexists(obj, name) <= 0) return -1;
  hid_t a = H5Aopen(obj, name, H5P_DEFAULT);
  int rc = a >= 0 && H5Aread(a, mem, v) >= 0 ? 0 : -1;
  if (a >= 0) H5Aclose(a);
  return rc;
}

static char *sim__read_str_dset(hid_t loc, const char *name) {
  if (H5Lexists(loc, name, H5P_DEFAULT) <= 0) return NULL;
  hid_t ds = H5Dopen2(loc, name, H5P_DEFAULT), t = ds >= 0 ? H5Dget_type(ds) : -1;
  char *v = NULL;
  if (t >= 0 && H5Tget_class(t) == H5T_STRING && !H5Tis_variable_str(t)) {
    v = calloc(1, H5Tget_size(t) + 1);
    if (v && H5Dread(ds, t, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) < 0) {
      free(v);
      v = NULL;
    }
  }
  if (t >= 0) H5Tclose(t);
  if (ds >= 0) H5Dclose(ds);
  return v;
}

/* A 1-D fixed-length string attribute, raw: its bytes and width; NULL if absent or of another kind. */
static unsigned char *sim__read_strs_attr(hid_t obj, const char *name, size_t *w, hsize_t *n) {
  if (H5Aexists(obj, name) <= 0) return NULL;
  hid_t a = H5Aopen(obj, name, H5P_DEFAULT), t = a >= 0 ? H5Aget_type(a) : -1, sp = a >= 0 ? H5Aget_space(a) : -1;
  unsigned char *v = NULL;
  if (t >= 0 && sp >= 0 && H5Tget_class(t) == H5T_STRING && !H5Tis_variable_str(t) &&
      H5Sget_simple_extent_ndims(sp) == 1) {
    H5Sget_simple_extent_dims(sp, n, NULL);
    *w = H5Tget_size(t);
    v = calloc((size_t)*n + 1, *w);
    if (v && H5Aread(a, t, v) < 0) {
      free(v);
      v = NULL;
    }
  }
  if (sp >= 0) H5Sclose(sp);
  if (t >= 0) H5Tclose(t);
  if (a >= 0) H5Aclose(a);
  return v;
}

static void sim__part_close(sim__part *p) {
  if (p->f >= 0) H5Fclose(p->f);
  free(p->model);
  free(p->scenario);
  free(p->effective);
  free(p->names);
  free(p->units);
  memset(p, 0, sizeof *p);
  p->f = -1;
}

/* Opens one part and reads what the merge checks; 0, or -1 with the reason in err. */
static int sim__part_open(const char *path, sim__part *p, char *err, size_t errlen) {
  memset(p, 0, sizeof *p);
  p->f = -1;
  p->path = path;
  char why[256];
  if (sim_h5mem_verify(path, why, sizeof why) < 0) {
    snprintf(err, errlen, "%s: %s", path, why);
    return -1;
  }
  p->f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
  char *fmt = p->f >= 0 ? sim__read_str_attr(p->f, "format") : NULL;
  int ok = fmt && !strcmp(fmt, SIM_RESULTS_FORMAT);
  free(fmt);
  if (!ok) {
    snprintf(err, errlen, "%s: not a spotlab results file", path);
    return -1;
  }
  hid_t g = H5Lexists(p->f, "meta", H5P_DEFAULT) > 0 ? H5Gopen2(p->f, "meta", H5P_DEFAULT) : -1;
  ok = g >= 0;
  if (ok) {
    p->model = sim__read_str_attr(g, "model");
    p->scenario = sim__read_str_dset(g, "scenario");
    p->effective = sim__read_str_dset(g, "effective");
    ok = p->model && p->scenario && p->effective && !sim__read_num_attr(g, "seed", H5T_NATIVE_UINT64, &p->seed) &&
         !sim__read_num_attr(g, "reps", H5T_NATIVE_INT32, &p->reps) &&
         !sim__read_num_attr(g, "end_time_s", H5T_NATIVE_DOUBLE, &p->end_s);
    p->wall_s = 0;
    sim__read_num_attr(g, "wall_time_s", H5T_NATIVE_DOUBLE, &p->wall_s);
    if (H5Aexists(g, "part_first") > 0) {
      ok = ok && !sim__read_num_attr(g, "part_first", H5T_NATIVE_INT32, &p->first) &&
           !sim__read_num_attr(g, "part_count", H5T_NATIVE_INT32, &p->count);
    } else {
      p->first = 0;
      p->count = p->reps;
    }
    H5Gclose(g);
  }
  if (!ok || p->first < 0 || p->count < 1 || p->first + p->count > p->reps) {
    snprintf(err, errlen, "%s: its /meta is incomplete or inconsistent (not a finished spotlab run or part)", path);
    return -1;
  }
  hid_t ds = H5Lexists(p->f, "metrics", H5P_DEFAULT) > 0 ? H5Dopen2(p->f, "metrics", H5P_DEFAULT) : -1;
  hsize_t dims[2] = {0, 0}, nn = 0, nu = 0;
  hid_t sp = ds >= 0 ? H5Dget_space(ds) : -1;
  ok = sp >= 0 && H5Sget_simple_extent_ndims(sp) == 2 && H5Sget_simple_extent_dims(sp, dims, NULL) == 2 &&
       dims[0] == (hsize_t)p->count;
  if (ok) {
    p->nm = dims[1];
    p->names = sim__read_strs_attr(ds, "names", &p->names_w, &nn);
    p->units = sim__read_strs_attr(ds, "units", &p->units_w, &nu);
    ok = p->names && p->units && nn == p->nm && nu == p->nm;
  }
  if (sp >= 0) H5Sclose(sp);
  if (ds >= 0) H5Dclose(ds);
  if (!ok) {
    snprintf(err, errlen, "%s: its /metrics is missing or has %llu rows for %d replications", path,
             (unsigned long long)dims[0], p->count);
    return -1;
  }
  for (int r = p->first; r < p->first + p->count; r++) {
    char name[48];
    snprintf(name, sizeof name, "reps/rep_%04d", r);
    uint64_t seed = 0;
    hid_t rg = H5Lexists(p->f, "reps", H5P_DEFAULT) > 0 && H5Lexists(p->f, name, H5P_DEFAULT) > 0
                   ? H5Gopen2(p->f, name, H5P_DEFAULT)
                   : -1;
    ok = rg >= 0 && !sim__read_num_attr(rg, "seed", H5T_NATIVE_UINT64, &seed);
    if (rg >= 0) H5Gclose(rg);
    if (!ok) {
      snprintf(err, errlen, "%s: replication %d (/%s) is missing", path, r, name);
      return -1;
    }
    if (seed != sim_rep_seed(p->seed, (unsigned)r)) {
      snprintf(err, errlen,
               "%s: replication %d ran seed %llu, not the %llu that base seed %llu gives it (a file edited "
               "or put together by hand?)",
               path, r, (unsigned long long)seed, (unsigned long long)sim_rep_seed(p->seed, (unsigned)r),
               (unsigned long long)p->seed);
      return -1;
    }
  }
  return 0;
}

/* 0 when b belongs to the same run as a; otherwise -1 with what differs. */
static int sim__part_same_run(const sim__part *a, const sim__part *b, char *err, size_t errlen) {
  const char *what = NULL;
  char detail[160] = "";
  if (strcmp(a->model, b->model)) {
    what = "model";
    snprintf(detail, sizeof detail, " (%s against %s)", b->model, a->model);
  } else if (a->seed != b->seed) {
    what = "base seed";
    snprintf(detail, sizeof detail, " (%llu against %llu)", (unsigned long long)b->seed, (unsigned long long)a->seed);
  } else if (a->reps != b->reps) {
    what = "number of replications (run.reps)";
    snprintf(detail, sizeof detail, " (%d against %d)", b->reps, a->reps);
  } else if (a->end_s != b->end_s) {
    what = "run.end";
    snprintf(detail, sizeof detail, " (%.17g s against %.17g s)", b->end_s, a->end_s);
  } else if (strcmp(a->scenario, b->scenario)) {
    what = "scenario file";
  } else if (strcmp(a->effective, b->effective)) {
    what = "effective scenario keys (another --param?)";
  } else if (a->nm != b->nm || a->names_w != b->names_w || a->units_w != b->units_w ||
             memcmp(a->names, b->names, (size_t)a->nm * a->names_w) ||
             memcmp(a->units, b->units, (size_t)a->nm * a->units_w)) {
    what = "metrics";
  }
  if (!what) return 0;
  snprintf(err, errlen, "%s and %s are parts of different runs: they differ in their %s%s", b->path, a->path, what,
           detail);
  return -1;
}

/* "replication 3" or "replications 3-4": the replications [lo, hi). */
static void sim__span(char *buf, size_t len, int lo, int hi) {
  if (hi - lo == 1)
    snprintf(buf, len, "replication %d", lo);
  else
    snprintf(buf, len, "replications %d-%d", lo, hi - 1);
}

static int sim__part_cmp(const void *x, const void *y) {
  const sim__part *a = x, *b = y;
  return (a->first > b->first) - (a->first < b->first);
}

int sim_results_merge(const char *out, const char *const *paths, int n, char *err, size_t errlen) {
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
  if (n < 1) {
    snprintf(err, errlen, "no part files to merge");
    return SIM_EINVAL;
  }
  sim__part *p = calloc((size_t)n, sizeof *p);
  if (!p) return SIM_ENOMEM;
  for (int i = 0; i < n; i++) p[i].f = -1;
  int rc = SIM_OK;
  for (int i = 0; i < n && !rc; i++) {
    if (sim__part_open(paths[i], &p[i], err, errlen))
      rc = SIM_EFORMAT;
    else if (i > 0 && sim__part_same_run(&p[0], &p[i], err, errlen))
      rc = SIM_EINVAL;
  }
  if (!rc) {
    qsort(p, (size_t)n, sizeof *p, sim__part_cmp);
    int next = 0; /* every replication 0 .. reps-1 in exactly one part */
    char span[48];
    for (int i = 0; i < n && !rc; i++) {
      if (p[i].first < next) {
        int hi = p[i].first + p[i].count < next ? p[i].first + p[i].count : next;
        sim__span(span, sizeof span, p[i].first, hi);
        snprintf(err, errlen, "%s and %s both hold %s", p[i - 1].path, p[i].path, span);
        rc = SIM_EINVAL;
      } else if (p[i].first > next) {
        sim__span(span, sizeof span, next, p[i].first);
        snprintf(err, errlen, "%s of %d %s in no part (the next part, %s, starts at %d)", span, p[0].reps,
                 p[i].first - next > 1 ? "are" : "is", p[i].path, p[i].first);
        rc = SIM_EINVAL;
      }
      next = p[i].first + p[i].count;
    }
    if (!rc && next < p[0].reps) {
      sim__span(span, sizeof span, next, p[0].reps);
      snprintf(err, errlen, "%s of %d %s in no part (the last part, %s, ends at %d)", span, p[0].reps,
               p[0].reps - next > 1 ? "are" : "is", p[n - 1].path, next - 1);
      rc = SIM_EINVAL;
    }
  }
  int reps = rc ? 0 : p[0].reps;
  size_t nm = rc ? 0 : (size_t)p[0].nm;
  double *values = NULL;
  sim_metric_def *md = NULL;
  if (!rc) {
    values = calloc((size_t)reps * (nm ? nm : 1), sizeof *values);
    md = calloc(nm ? nm : 1, sizeof *md);
    if (!values || !md) rc = SIM_ENOMEM;
  }
  for (int i = 0; i < n && !rc; i++) {
    hid_t ds = H5Dopen2(p[i].f, "metrics", H5P_DEFAULT);
    if (ds < 0 ||
        (nm && H5Dread(ds, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, values + (size_t)p[i].first * nm) < 0)) {
      snprintf(err, errlen, "%s: cannot read /metrics", p[i].path);
      rc = SIM_EFORMAT;
    }
    if (ds >= 0) H5Dclose(ds);
  }
  /* names and units as C strings: the raw attributes are width-spaced, NUL-padded */
  char *nbuf = NULL, *ubuf = NULL;
  if (!rc) {
    nbuf = calloc(nm + 1, p[0].names_w + 1);
    ubuf = calloc(nm + 1, p[0].units_w + 1);
    if (!nbuf || !ubuf) rc = SIM_ENOMEM;
    for (size_t k = 0; !rc && k < nm; k++) {
      memcpy(nbuf + k * (p[0].names_w + 1), p[0].names + k * p[0].names_w, p[0].names_w);
      memcpy(ubuf + k * (p[0].units_w + 1), p[0].units + k * p[0].units_w, p[0].units_w);
      md[k].name = nbuf + k * (p[0].names_w + 1);
      md[k].unit = ubuf + k * (p[0].units_w + 1);
    }
  }
  /* the catalogue of part 0 (parts written before it have none: its entries are then empty) */
  char *cbuf[5] = {NULL};
  if (!rc) {
    static const char *const cat[5] = {"labels", "formulas", "over", "weights", "censored"};
    const char **tmpv = calloc(nm ? nm : 1, sizeof *tmpv);
    hid_t ds = H5Dopen2(p[0].f, "metrics", H5P_DEFAULT);
    for (int q = 0; tmpv && ds >= 0 && q < 5; q++)
      if (!sim__read_strs(ds, cat[q], nm, &cbuf[q], tmpv))
        for (size_t k = 0; k < nm; k++) {
          const char **slot = q == 0   ? &md[k].label
                              : q == 1 ? &md[k].formula
                              : q == 2 ? &md[k].over
                              : q == 3 ? &md[k].weight
                                       : &md[k].censored;
          *slot = tmpv[k];
        }
    if (ds >= 0) H5Dclose(ds);
    free(tmpv);
  }
  char tmp[4096];
  hid_t f = -1;
  if (!rc && sim_tmpname(out, tmp, sizeof tmp)) {
    snprintf(err, errlen, "%s: the path is too long", out);
    rc = SIM_EIO;
  }
  if (!rc && (f = sim_h5mem_create(tmp)) < 0) {
    snprintf(err, errlen, "%s: cannot create the results file (does its folder exist and is it writable?)", out);
    rc = SIM_EIO;
  }
  if (!rc) {
    int w = 0;
    int32_t ver = SIM_RESULTS_FORMAT_VERSION, i32;
    char *sv = sim__read_str_attr(p[0].f, "spotlab_version");
    w |= sim__attr_str(f, "format", SIM_RESULTS_FORMAT);
    w |= sim__attr_num(f, "format_version", H5T_NATIVE_INT32, &ver);
    w |= sim__attr_str(f, "spotlab_version", sv ? sv : SPOTLAB_VERSION);
    free(sv);
    hid_t ocp = H5Pcreate(H5P_OBJECT_COPY);
    w |= H5Ocopy(p[0].f, "meta", f, "meta", ocp, H5P_DEFAULT) < 0;
    hid_t g = w ? -1 : H5Gopen2(f, "meta", H5P_DEFAULT);
    w |= g < 0;
    if (g >= 0) {
      /* the whole run's /meta: reps the total, no part range; how it was made: merged from n parts */
      const char *drop[] = {"part_first", "part_count", "reps", "spread", "wall_time_s", "merged_parts"};
      for (size_t k = 0; k < sizeof drop / sizeof *drop; k++)
        if (H5Aexists(g, drop[k]) > 0) w |= H5Adelete(g, drop[k]) < 0;
      double wall = 0;
      for (int i = 0; i < n; i++) wall += p[i].wall_s;
      i32 = reps;
      w |= sim__attr_num(g, "reps", H5T_NATIVE_INT32, &i32);
      w |= sim__attr_str(g, "spread", "merged");
      i32 = n;
      w |= sim__attr_num(g, "merged_parts", H5T_NATIVE_INT32, &i32);
      w |= sim__attr_num(g, "wall_time_s", H5T_NATIVE_DOUBLE, &wall); /* summed over the parts */
      H5Gclose(g);
    }
    if (!w) w |= sim__write_metrics(f, md, (unsigned)nm, values, reps);
    hid_t gr = w ? -1 : H5Gcreate2(f, "reps", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    w |= gr < 0;
    for (int i = 0; !w && i < n; i++)
      for (int r = p[i].first; !w && r < p[i].first + p[i].count; r++) {
        char src[48];
        snprintf(src, sizeof src, "reps/rep_%04d", r);
        w |= H5Ocopy(p[i].f, src, gr, src + 5, ocp, H5P_DEFAULT) < 0;
      }
    if (gr >= 0) H5Gclose(gr);
    H5Pclose(ocp);
    if (sim_h5mem_finish(f, tmp, out, !w, "merged results", err, errlen)) rc = SIM_EIO;
  }
  free(nbuf);
  free(ubuf);
  for (int q = 0; q < 5; q++) free(cbuf[q]);
  free(values);
  free(md);
  for (int i = 0; i < n; i++) sim__part_close(&p[i]);
  free(p);
  return rc;
}

/* ---- The run a results file records (sim_results_read_run) ------------------------------------ */

int sim_results_read_run(const char *path, sim_run_record *r, char *err, size_t errlen) {
  memset(r, 0, sizeof *r);
  sim__part p;
  memset(&p, 0, sizeof p);
  if (sim__part_open(path, &p, err, errlen)) {
    sim__part_close(&p);
    return SIM_EFORMAT;
  }
  hid_t g = H5Gopen2(p.f, "meta", H5P_DEFAULT);
  r->scenario_path = g >= 0 ? sim__read_str_attr(g, "scenario_path") : NULL;
  if (g >= 0) H5Gclose(g);
  r->model = p.model, r->scenario = p.scenario, r->effective = p.effective;
  p.model = p.scenario = p.effective = NULL;
  r->seed = p.seed;
  r->reps = p.reps;
  r->whole = p.first == 0 && p.count == p.reps;
  sim__part_close(&p);
  if (!r->scenario_path) r->scenario_path = strdup("");
  if (!r->scenario_path) {
    sim_run_record_free(r);
    snprintf(err, errlen, "%s: out of memory", path);
    return SIM_ENOMEM;
  }
  return SIM_OK;
}

void sim_run_record_free(sim_run_record *r) {
  free(r->model);
  free(r->scenario);
  free(r->effective);
  free(r->scenario_path);
  memset(r, 0, sizeof *r);
}
