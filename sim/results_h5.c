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
    i32 = meta->reps;
    rc |= sim__attr_num(g, "reps", H5T_NATIVE_INT32, &i32);
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
    H5Gclose(g);
  }
  rc |= sim__write_metrics(f, metrics, nmetrics, values, meta->reps);

  hid_t gr = H5Gcreate2(f, "reps", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  rc |= gr < 0;
  for (int r = 0; !rc && r < meta->reps; r++) {
    char name[32];
    snprintf(name, sizeof name, "rep_%04d", r);
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
  int werr;
  if (sim_h5mem_commit(f, tmp, !rc, &werr)) rc = 1; /* removes tmp when it fails */
  if (rc) {
    snprintf(err, errlen, "%s: writing the results failed (%s); nothing was left behind", path,
             werr ? strerror(werr) : "HDF5 error");
    return SIM_EIO;
  }
  if (rename(tmp, path) != 0) {
    unlink(tmp);
    snprintf(err, errlen, "%s: cannot rename the finished file into place", path);
    return SIM_EIO;
  }
  return SIM_OK;
}
