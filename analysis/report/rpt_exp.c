/* rpt_exp.c - experiment files (format `spotlab-experiment`, docs/experiments.md): written by
 * `spotlab experiment` through the in-memory writer of sim/h5mem.h (so they carry its checksum),
 * read by `spotlab report`. The file stores what the command computed (analysis/experiment/exp.h);
 * the report draws what the file says and recomputes nothing. */
#include "analysis/report/rpt.h"
#include "analysis/report/rpt_h5i.h"
#include "sim/h5mem.h"
#include "sim/tmpname.h"
#include "spotlab_config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int rpt__w_ints(hid_t loc, const char *name, const int *v, size_t n) {
  hsize_t d = n;
  hid_t sp = H5Screate_simple(1, &d, NULL);
  hid_t ds = H5Dcreate2(loc, name, H5T_NATIVE_INT32, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  int rc = ds < 0 || (n && H5Dwrite(ds, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) < 0) ? -1 : 0;
  if (ds >= 0) H5Dclose(ds);
  H5Sclose(sp);
  return rc;
}

int rpt_experiment_write(const char *path, const rpt_experiment *e, const char *experiment_path,
                         const char *scenario_path, char *err, size_t errlen) {
  char tmp[4096];
  if (sim_tmpname(path, tmp, sizeof tmp)) {
    snprintf(err, errlen, "%s: the path is too long", path);
    return SIM_EIO;
  }
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
  hid_t h = sim_h5mem_create(tmp);
  if (h < 0) {
    snprintf(err, errlen, "%s: cannot create the experiment file (does its folder exist and is it writable?)", path);
    return SIM_EIO;
  }
  int32_t ver = RPT_EXPERIMENT_FORMAT_VERSION, reps = e->reps;
  int rc = rpt__w_attr_str(h, "format", RPT_EXPERIMENT_FORMAT);
  rc |= rpt__w_attr_num(h, "format_version", H5T_NATIVE_INT32, &ver);
  rc |= rpt__w_attr_str(h, "spotlab_version", SPOTLAB_VERSION);
  hid_t g = H5Gcreate2(h, "experiment", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  rc |= g < 0;
  if (g >= 0) {
    unsigned np = e->npoints, nf = e->nfactors, nm = e->nmetrics, nc = e->ncons, no = e->nobjs;
    rc |= rpt__w_attr_str(g, "model", e->model);
    rc |= rpt__w_attr_str(g, "design", e->design);
    rc |= rpt__w_attr_str(g, "sensitivity_method", e->sens_method);
    rc |= rpt__w_attr_str(g, "experiment_path", experiment_path ? experiment_path : "");
    rc |= rpt__w_attr_str(g, "scenario_path", scenario_path ? scenario_path : "");
    rc |= rpt__w_attr_num(g, "seed", H5T_NATIVE_UINT64, &e->seed);
    rc |= rpt__w_attr_num(g, "reps", H5T_NATIVE_INT32, &reps);
    rc |= rpt__w_strs(g, "factors", e->factors, nf, 1);
    rc |= rpt__w_strs(g, "labels", e->labels, (size_t)np * nf, 1);
    rc |= rpt__w_strs(g, "point_files", e->point_files, np, 1);
    rc |= rpt__w_strs(g, "constraints", e->cons, nc, 1);
    rc |= rpt__w_strs(g, "objectives", e->objs, no, 1);
    rc |= rpt__w_ints(g, "constraint_metric", e->cons_metric, nc);
    rc |= rpt__w_ints(g, "objective_metric", e->obj_metric, no);
    hsize_t dx[2] = {np, nf}, d3[3] = {np, (hsize_t)e->reps, nm}, d2[2] = {np, nm}, dc[2] = {np, nc}, d1 = np,
            ds2[2] = {no, nf}, dno = no;
    rc |= rpt__w_doubles(g, "x", 2, dx, e->x);
    rc |= rpt__w_doubles(g, "metrics", 3, d3, e->values);
    rc |= rpt__w_doubles(g, "mean", 2, d2, e->mean);
    rc |= rpt__w_doubles(g, "ci95_lo", 2, d2, e->lo);
    rc |= rpt__w_doubles(g, "ci95_hi", 2, d2, e->hi);
    rc |= rpt__w_doubles(g, "met", 2, dc, e->met);
    rc |= rpt__w_doubles(g, "confidence", 2, dc, e->confidence);
    rc |= rpt__w_doubles(g, "feasible", 1, &d1, e->feasible);
    rc |= rpt__w_doubles(g, "pareto", 1, &d1, e->pareto);
    rc |= rpt__w_doubles(g, "sensitivity", 2, ds2, e->sensitivity);
    rc |= rpt__w_doubles(g, "sensitivity_r2", 1, &dno, e->r2);
    if (!rc) {
      hid_t ds = H5Dopen2(g, "metrics", H5P_DEFAULT);
      rc |= ds < 0;
      if (ds >= 0) {
        rc |= rpt__w_strs(ds, "names", e->names, nm, 0);
        rc |= rpt__w_strs(ds, "units", e->units, nm, 0);
        H5Dclose(ds);
      }
    }
    H5Gclose(g);
  }
  return sim_h5mem_finish(h, tmp, path, !rc, "experiment file", err, errlen) ? SIM_EIO : 0;
}

/* Reads dataset `name` of g, which must hold exactly `want` values, as doubles (or ints). */
static int rpt__r_num(hid_t g, const char *name, size_t want, hid_t mtype, size_t w, void **out) {
  *out = NULL;
  if (H5Lexists(g, name, H5P_DEFAULT) <= 0) return -1;
  hid_t ds = H5Dopen2(g, name, H5P_DEFAULT);
  if (ds < 0) return -1;
  hid_t sp = H5Dget_space(ds);
  int rc = -1;
  if (H5Sget_simple_extent_npoints(sp) == (hssize_t)want && !rpt__implausible(ds, want, 1)) {
    void *v = calloc(want ? want : 1, w);
    if (v && (!want || H5Dread(ds, mtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) >= 0)) {
      *out = v;
      rc = 0;
    } else
      free(v);
  }
  H5Sclose(sp);
  H5Dclose(ds);
  return rc;
}

int rpt_experiment_read(rpt_file *f, rpt_experiment *e) {
  memset(e, 0, sizeof *e);
  if (rpt_file_kind(f) != RPT_EXPERIMENT) return rpt__fail(f, SIM_EFORMAT, "not an experiment file");
  hid_t g = H5Gopen2(rpt__file_h5(f), "/experiment", H5P_DEFAULT);
  if (g < 0) return rpt__fail(f, SIM_EFORMAT, "/experiment cannot be opened (damaged file?)");
  int rc = 0;
  int32_t reps = 0;
  if (rpt__attr_num(g, "reps", H5T_NATIVE_INT32, &reps) || reps < 1 ||
      rpt__attr_num(g, "seed", H5T_NATIVE_UINT64, &e->seed))
    rc = rpt__fail(f, SIM_EFORMAT, "/experiment lacks its reps or seed attribute");
  e->reps = reps;
  rpt__attr_str(g, "model", e->model, sizeof e->model);
  rpt__attr_str(g, "design", e->design, sizeof e->design);
  rpt__attr_str(g, "sensitivity_method", e->sens_method, sizeof e->sens_method);
  /* The sizes come from the datasets' extents: metrics [points][reps][metrics], x [points][factors],
   * met [points][constraints], sensitivity [objectives][factors]. */
  hsize_t d[3] = {0, 0, 0};
  const char *dims_of[] = {"metrics", "x", "met", "sensitivity"};
  hsize_t got[4][3] = {{0}};
  for (int i = 0; !rc && i < 4; i++) {
    hid_t ds = H5Lexists(g, dims_of[i], H5P_DEFAULT) > 0 ? H5Dopen2(g, dims_of[i], H5P_DEFAULT) : -1;
    if (ds < 0) {
      rc = rpt__fail(f, SIM_ENOTFOUND, "dataset /experiment/%s is missing", dims_of[i]);
      break;
    }
    hid_t sp = H5Dget_space(ds);
    int nd = H5Sget_simple_extent_ndims(sp);
    if (nd < 1 || nd > 3 || nd != (i == 0 ? 3 : 2))
      rc = rpt__fail(f, SIM_EFORMAT, "/experiment/%s has %d dimensions", dims_of[i], nd);
    else
      H5Sget_simple_extent_dims(sp, got[i], NULL);
    H5Sclose(sp);
    H5Dclose(ds);
  }
  if (!rc) {
    memcpy(d, got[0], sizeof d);
    if (d[1] != (hsize_t)reps || got[1][0] != d[0] || got[2][0] != d[0] || got[3][1] != got[1][1] || d[0] > 1000000 ||
        d[2] > 1000000 || got[1][1] > 1000 || got[2][1] > 1000 || got[3][0] > 1000)
      rc = rpt__fail(f, SIM_EFORMAT, "/experiment's datasets disagree on their sizes (damaged file?)");
  }
  if (!rc) {
    e->npoints = (unsigned)d[0];
    e->nmetrics = (unsigned)d[2];
    e->nfactors = (unsigned)got[1][1];
    e->ncons = (unsigned)got[2][1];
    e->nobjs = (unsigned)got[3][0];
    size_t np = e->npoints, nf = e->nfactors, nm = e->nmetrics, nc = e->ncons, no = e->nobjs;
    size_t D = sizeof(double), I = sizeof(int);
    hid_t dbl = H5T_NATIVE_DOUBLE;
    if (rpt__r_num(g, "metrics", np * (size_t)reps * nm, dbl, D, (void **)&e->values) ||
        rpt__r_num(g, "x", np * nf, dbl, D, (void **)&e->x) ||
        rpt__r_num(g, "mean", np * nm, dbl, D, (void **)&e->mean) ||
        rpt__r_num(g, "ci95_lo", np * nm, dbl, D, (void **)&e->lo) ||
        rpt__r_num(g, "ci95_hi", np * nm, dbl, D, (void **)&e->hi) ||
        rpt__r_num(g, "met", np * nc, dbl, D, (void **)&e->met) ||
        rpt__r_num(g, "confidence", np * nc, dbl, D, (void **)&e->confidence) ||
        rpt__r_num(g, "feasible", np, dbl, D, (void **)&e->feasible) ||
        rpt__r_num(g, "pareto", np, dbl, D, (void **)&e->pareto) ||
        rpt__r_num(g, "sensitivity", no * nf, dbl, D, (void **)&e->sensitivity) ||
        rpt__r_num(g, "sensitivity_r2", no, dbl, D, (void **)&e->r2) ||
        rpt__r_num(g, "constraint_metric", nc, H5T_NATIVE_INT, I, (void **)&e->cons_metric) ||
        rpt__r_num(g, "objective_metric", no, H5T_NATIVE_INT, I, (void **)&e->obj_metric))
      rc = rpt__fail(f, SIM_EFORMAT, "an /experiment dataset is missing or has the wrong size (damaged file?)");
    if (!rc && (rpt__r_strs_dset(g, "factors", nf, &e->factors) || rpt__r_strs_dset(g, "labels", np * nf, &e->labels) ||
                rpt__r_strs_dset(g, "point_files", np, &e->point_files) ||
                rpt__r_strs_dset(g, "constraints", nc, &e->cons) || rpt__r_strs_dset(g, "objectives", no, &e->objs)))
      rc = rpt__fail(f, SIM_EFORMAT, "an /experiment string dataset is missing or has the wrong length");
    if (!rc) {
      hid_t ds = H5Dopen2(g, "metrics", H5P_DEFAULT);
      if (ds < 0 || rpt__attr_strs(ds, "names", nm, &e->names) || rpt__attr_strs(ds, "units", nm, &e->units))
        rc = rpt__fail(f, SIM_EFORMAT, "/experiment/metrics lacks its names or units attribute");
      if (ds >= 0) H5Dclose(ds);
    }
    for (size_t i = 0; !rc && i < nc; i++)
      if (e->cons_metric[i] < 0 || (size_t)e->cons_metric[i] >= nm)
        rc = rpt__fail(f, SIM_EFORMAT, "/experiment/constraint_metric names no metric (damaged file?)");
    for (size_t i = 0; !rc && i < no; i++)
      if (e->obj_metric[i] < 0 || (size_t)e->obj_metric[i] >= nm)
        rc = rpt__fail(f, SIM_EFORMAT, "/experiment/objective_metric names no metric (damaged file?)");
  }
  H5Gclose(g);
  if (rc) rpt_experiment_free(e);
  return rc;
}

void rpt_experiment_free(rpt_experiment *e) {
  rpt__free_strs(e->factors, e->factors ? e->nfactors : 0);
  rpt__free_strs(e->labels, e->labels ? (size_t)e->npoints * e->nfactors : 0);
  rpt__free_strs(e->names, e->names ? e->nmetrics : 0);
  rpt__free_strs(e->units, e->units ? e->nmetrics : 0);
  rpt__free_strs(e->cons, e->cons ? e->ncons : 0);
  rpt__free_strs(e->objs, e->objs ? e->nobjs : 0);
  rpt__free_strs(e->point_files, e->point_files ? e->npoints : 0);
  free(e->x);
  free(e->values);
  free(e->mean);
  free(e->lo);
  free(e->hi);
  free(e->cons_metric);
  free(e->obj_metric);
  free(e->met);
  free(e->confidence);
  free(e->feasible);
  free(e->pareto);
  free(e->sensitivity);
  free(e->r2);
  memset(e, 0, sizeof *e);
}
