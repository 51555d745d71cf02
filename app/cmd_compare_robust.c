/* cmd_compare_robust.c - the robust mode of `spotlab compare` (compare_robust.h): both sides rerun
 * over a grid of assumption values, and each headline difference's sign checked at every point.
 * It registers no command of its own; cmd_compare.c calls app_compare_robust for --robust. */
#include "app/compare_robust.h"

#include "analysis/report/rpt.h"
#include "app/runner.h"
#include "sim/results_io.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

typedef struct robust__key {
  char *key;                          /* "market.training.choice_cost" */
  char *value[APP_ROBUST_MAX_VALUES]; /* as written, scenario syntax */
  int nvalues;
} robust__key;

/* One side's values at one point: [reps][nm] with the metric names (pointers into the loaded
 * model's table are not kept: names are copied). */
typedef struct robust__side {
  double *v;
  char **names;
  int *headline;
  unsigned nm;
  int reps;
} robust__side;

static void robust__side_free(robust__side *s) {
  for (unsigned k = 0; s->names && k < s->nm; k++) free(s->names[k]);
  free(s->names);
  free(s->headline);
  free(s->v);
  memset(s, 0, sizeof *s);
}

static void robust__keys_free(robust__key *k, int n) {
  for (int i = 0; i < n; i++) {
    free(k[i].key);
    for (int j = 0; j < k[i].nvalues; j++) free(k[i].value[j]);
  }
}

/* "KEY=V1,V2,...": commas inside double quotes belong to the value. 0, or 2 with a message. */
static int robust__parse(const char *spec, robust__key *k, char *err, size_t errlen) {
  memset(k, 0, sizeof *k);
  const char *eq = strchr(spec, '=');
  if (!eq || eq == spec) {
    snprintf(err, errlen, "--robust '%s': expected KEY=V1,V2,... (a scenario key and two or more values)", spec);
    return 2;
  }
  k->key = strndup(spec, (size_t)(eq - spec));
  if (!k->key) return 1;
  for (const char *c = k->key; *c; c++)
    if (!(*c == '.' || *c == '_' || *c == '[' || *c == ']' || (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
          (*c >= '0' && *c <= '9'))) {
      snprintf(err, errlen, "--robust '%s': '%s' is not a scenario key (letters, digits, '_', '.', '[N]')", spec,
               k->key);
      return 2;
    }
  const char *p = eq + 1;
  for (;;) {
    const char *q = p;
    int quoted = 0;
    while (*q && (quoted || *q != ',')) {
      if (*q == '"') quoted = !quoted;
      q++;
    }
    if (q == p) {
      snprintf(err, errlen, "--robust '%s': an empty value (values are separated by single commas)", spec);
      return 2;
    }
    if (k->nvalues == APP_ROBUST_MAX_VALUES) {
      snprintf(err, errlen, "--robust '%s': more than %d values", spec, APP_ROBUST_MAX_VALUES);
      return 2;
    }
    if (!(k->value[k->nvalues++] = strndup(p, (size_t)(q - p)))) return 1;
    for (int j = 0; j + 1 < k->nvalues; j++)
      if (!strcmp(k->value[j], k->value[k->nvalues - 1])) {
        snprintf(err, errlen, "--robust '%s': the value %s is given twice", spec, k->value[j]);
        return 2;
      }
    if (!*q) break;
    p = q + 1;
  }
  if (k->nvalues < 2) {
    snprintf(err, errlen, "--robust '%s': give at least two values (the ends of the range to try)", spec);
    return 2;
  }
  return 0;
}

/* The overrides of point p (mixed radix over the keys, the first key slowest). */
static int robust__overrides(const robust__key *k, int nk, int p, char **ovr) {
  for (int i = nk - 1; i >= 0; i--) {
    int j = p % k[i].nvalues;
    p /= k[i].nvalues;
    size_t len = strlen(k[i].key) + strlen(k[i].value[j]) + 2;
    if (!(ovr[i] = malloc(len))) return 1;
    snprintf(ovr[i], len, "%s=%s", k[i].key, k[i].value[j]);
  }
  return 0;
}

/* Loads one side's recorded run with the overrides; with run = 1 also runs it into *s. Returns
 * 0, 1 (a run failed) or 2 (bad key or value: reported on stderr with the file's name). */
static int robust__side_go(const sim_run_record *rec, const char *file, char *const *ovr, int n, int run,
                           robust__side *s) {
  sim_diag d;
  sim_diag_init(&d, stderr);
  app_loaded l;
  const char *name = rec->scenario_path && *rec->scenario_path ? rec->scenario_path : file;
  if (app_load_text(rec->effective, name, (const char *const *)ovr, n, &d, &l)) return 2;
  if (!run) {
    app_unload(&l);
    return 0;
  }
  app_run_out o;
  int rc = app_run_reps(&l, NULL, &o);
  if (!rc && o.nreps != rec->reps) rc = 1;
  if (!rc) {
    s->nm = l.nmetrics;
    s->reps = o.nreps;
    s->v = malloc(sizeof *s->v * (size_t)o.nreps * (l.nmetrics ? l.nmetrics : 1));
    s->names = calloc(l.nmetrics ? l.nmetrics : 1, sizeof *s->names);
    s->headline = calloc(l.nmetrics ? l.nmetrics : 1, sizeof *s->headline);
    if (!s->v || !s->names || !s->headline) rc = 1;
    for (unsigned k = 0; !rc && k < l.nmetrics; k++) {
      if (!(s->names[k] = strdup(l.metrics[k].name))) rc = 1;
      s->headline[k] = l.metrics[k].headline;
    }
    if (!rc) memcpy(s->v, o.values, sizeof *s->v * (size_t)o.nreps * l.nmetrics);
  }
  app_run_out_free(&l, &o);
  app_unload(&l);
  if (rc) robust__side_free(s);
  return rc ? 1 : 0;
}

static int robust__find(char *const *names, unsigned n, const char *name) {
  for (unsigned k = 0; k < n; k++)
    if (!strcmp(names[k], name)) return (int)k;
  return -1;
}

/* The paired difference (after - before) of one metric over reps replications. */
static void robust__paired(const double *b, unsigned bnm, int kb, const double *a, unsigned anm, int ka, int reps,
                           rpt_ci *ci) {
  double *x = malloc(sizeof *x * (size_t)(reps > 0 ? reps : 1) * 2);
  if (!x) {
    *ci = (rpt_ci){NAN, NAN, NAN, NAN, 0};
    return;
  }
  for (int r = 0; r < reps; r++) {
    x[r] = b[(size_t)r * bnm + (size_t)kb];
    x[reps + r] = a[(size_t)r * anm + (size_t)ka];
  }
  rpt_ci_paired(x, x + reps, (size_t)reps, 1, ci);
  free(x);
}

/* What became of one headline metric. */
typedef struct robust__row {
  const char *name, *unit;
  rpt_ci base;
  double lo, hi;  /* the paired mean difference over the points */
  int npos, nneg; /* points whose mean difference is > 0, < 0 */
  int nsig;       /* points whose 95% interval excludes 0 on the base's side */
  int flip;       /* first point whose sign differs from the base's, or -1 */
} robust__row;

static int robust__sign(double x) { return x > 0 ? 1 : x < 0 ? -1 : 0; }

static const char *robust__verdict(const robust__row *r, int npoints) {
  if (!isfinite(r->base.mean)) return "undefined in the files";
  if (r->lo > r->hi) return "undefined at every point";
  int s = robust__sign(r->base.mean);
  if (s == 0 && r->npos == 0 && r->nneg == 0) return "no change anywhere";
  if (s > 0 && r->npos == npoints) return r->nsig == npoints ? "holds (+), significant everywhere" : "holds (+)";
  if (s < 0 && r->nneg == npoints) return r->nsig == npoints ? "holds (-), significant everywhere" : "holds (-)";
  return "sign changes";
}

static void robust__point_label(const robust__key *k, int nk, int p, char *buf, size_t len) {
  char *ovr[APP_ROBUST_MAX_KEYS] = {0};
  buf[0] = 0;
  if (!robust__overrides(k, nk, p, ovr))
    for (int i = 0; i < nk; i++) {
      strncat(buf, i ? ", " : "", len - strlen(buf) - 1);
      strncat(buf, ovr[i], len - strlen(buf) - 1);
    }
  for (int i = 0; i < nk; i++) free(ovr[i]);
}

/* Writes the table: on tab (terminal), OUTDIR/robust.md and OUTDIR/robust.csv. 0 or 1. */
static int robust__write(const robust__row *rows, int nrows, const robust__key *k, int nk, int npoints,
                         const char *before, const char *after, const char *outdir, FILE *tab) {
  char where[256];
  if (tab) {
    fprintf(tab, "\nrobustness of %s -> %s over %d point(s) (", before, after, npoints);
    for (int i = 0; i < nk; i++) {
      fprintf(tab, "%s%s in {", i ? "; " : "", k[i].key);
      for (int j = 0; j < k[i].nvalues; j++) fprintf(tab, "%s%s", j ? ", " : "", k[i].value[j]);
      fputc('}', tab);
    }
    fprintf(tab, ")\n%-44s %-10s %14s %27s %27s  %s\n", "headline metric", "unit", "change (files)", "95% CI",
            "range over the points", "sign");
    for (int i = 0; i < nrows; i++) {
      const robust__row *r = &rows[i];
      char ci[64], range[64];
      snprintf(ci, sizeof ci, "[%.4g, %.4g]", r->base.lo, r->base.hi);
      if (r->lo <= r->hi)
        snprintf(range, sizeof range, "%.4g .. %.4g", r->lo, r->hi);
      else
        snprintf(range, sizeof range, "-");
      fprintf(tab, "%-44s %-10s %14.4g %27s %27s  %s", r->name, r->unit, r->base.mean, ci, range,
              robust__verdict(r, npoints));
      if (r->flip >= 0) {
        robust__point_label(k, nk, r->flip, where, sizeof where);
        fprintf(tab, " (first at %s)", where);
      }
      fputc('\n', tab);
    }
  }
  if (mkdir(outdir, 0777) && errno != EEXIST) {
    fprintf(stderr, "spotlab compare: cannot create %s: %s\n", outdir, strerror(errno));
    return 1;
  }
  size_t len = strlen(outdir) + 16;
  char *pm = malloc(len), *pc = malloc(len);
  FILE *m = NULL, *c = NULL;
  if (pm && pc) {
    snprintf(pm, len, "%s/robust.md", outdir);
    snprintf(pc, len, "%s/robust.csv", outdir);
    m = fopen(pm, "w");
    c = fopen(pc, "w");
  }
  int rc = 0;
  if (!m || !c) {
    fprintf(stderr, "spotlab compare: cannot write %s: %s\n", !m ? pm : pc, strerror(errno));
    rc = 1;
  } else {
    fprintf(m, "# Robustness of the comparison\n\n%d point(s): every combination of ", npoints);
    for (int i = 0; i < nk; i++) {
      fprintf(m, "%s`%s` in {", i ? ", " : "", k[i].key);
      for (int j = 0; j < k[i].nvalues; j++) fprintf(m, "%s`%s`", j ? ", " : "", k[i].value[j]);
      fputc('}', m);
    }
    fprintf(m, ", each side rerun from its results file's effective keys with its own seeds and "
               "replications (common random numbers).\n\n"
               "| headline metric | unit | change in the files | 95%% CI | range over the points | points > 0 "
               "| points < 0 | significant | sign |\n|---|---|---|---|---|---|---|---|---|\n");
    fputs("metric,unit,change,ci95_lo,ci95_hi,range_lo,range_hi,points,points_pos,points_neg,points_significant,"
          "verdict,first_flip\n",
          c);
    for (int i = 0; i < nrows; i++) {
      const robust__row *r = &rows[i];
      where[0] = 0;
      if (r->flip >= 0) robust__point_label(k, nk, r->flip, where, sizeof where);
      char range[64] = "-";
      if (r->lo <= r->hi) snprintf(range, sizeof range, "%.4g .. %.4g", r->lo, r->hi);
      fprintf(m, "| `%s` | %s | %.4g | [%.4g, %.4g] | %s | %d | %d | %d | %s%s%s%s |\n", r->name, r->unit, r->base.mean,
              r->base.lo, r->base.hi, range, r->npos, r->nneg, r->nsig, robust__verdict(r, npoints),
              *where ? " (first at `" : "", where, *where ? "`)" : "");
      rpt_csv_field(c, r->name);
      fputc(',', c);
      rpt_csv_field(c, r->unit);
      fprintf(c, ",%.17g,%.17g,%.17g,%.17g,%.17g,%d,%d,%d,%d,", r->base.mean, r->base.lo, r->base.hi,
              r->lo <= r->hi ? r->lo : NAN, r->lo <= r->hi ? r->hi : NAN, npoints, r->npos, r->nneg, r->nsig);
      rpt_csv_field(c, robust__verdict(r, npoints));
      fputc(',', c);
      rpt_csv_field(c, where);
      fputc('\n', c);
    }
  }
  if (m && fclose(m)) rc = 1;
  if (c && fclose(c)) rc = 1;
  free(pm);
  free(pc);
  return rc;
}

/* The files: both whole runs of one model with the same seed and replications (paired). */
static int robust__records(const char *before, const char *after, sim_run_record rec[2], rpt_file *f[2]) {
  const char *files[2] = {before, after};
  char err[RPT_ERRLEN];
  for (int i = 0; i < 2; i++) {
    if (sim_results_read_run(files[i], &rec[i], err, sizeof err)) {
      fprintf(stderr, "spotlab compare --robust: %s\n", err);
      return 2;
    }
    if (!rec[i].whole) {
      fprintf(stderr, "spotlab compare --robust: %s is one part of a run (--shard): merge the parts first\n", files[i]);
      return 2;
    }
    if (rpt_open(files[i], &f[i], err, sizeof err)) {
      fprintf(stderr, "spotlab compare --robust: %s\n", err);
      return 2;
    }
  }
  if (rec[0].seed != rec[1].seed || rec[0].reps != rec[1].reps || strcmp(rec[0].model, rec[1].model)) {
    fprintf(stderr,
            "spotlab compare --robust: %s and %s are not paired runs (model %s/%s, seed %llu/%llu, %d/%d "
            "replications): rerun both with the same seed and replications\n",
            before, after, rec[0].model, rec[1].model, (unsigned long long)rec[0].seed, (unsigned long long)rec[1].seed,
            rec[0].reps, rec[1].reps);
    return 2;
  }
  return 0;
}

/* Every point's overrides load on both sides before anything runs. */
static int robust__check_all(const sim_run_record rec[2], const char *const files[2], const robust__key *k, int nk,
                             int npoints) {
  for (int p = 0; p < npoints; p++) {
    char *ovr[APP_ROBUST_MAX_KEYS] = {0};
    int rc = robust__overrides(k, nk, p, ovr) ? 1 : 0;
    for (int s = 0; !rc && s < 2; s++) rc = robust__side_go(&rec[s], files[s], ovr, nk, 0, NULL);
    for (int i = 0; i < nk; i++) free(ovr[i]);
    if (rc) return rc;
  }
  return 0;
}

/* The headline rows: metrics marked headline by the model, in both files and both point runs. */
static int robust__wanted(const char *name, const char *const *extra, int nextra) {
  for (int i = 0; i < nextra; i++)
    if (!strcmp(extra[i], name)) return 1;
  return 0;
}

static int robust__rows(const robust__side *sb, const robust__side *sa, rpt_file *f[2], const char *const *extra,
                        int nextra, robust__row **out) {
  robust__row *rows = calloc(sa->nm ? sa->nm : 1, sizeof *rows);
  if (!rows) return -1;
  int n = 0;
  const double *vb = rpt_metric_values(f[0]), *va = rpt_metric_values(f[1]);
  unsigned nb = rpt_nmetrics(f[0]), na = rpt_nmetrics(f[1]);
  for (unsigned k = 0; k < sa->nm; k++) {
    if (!(sa->headline[k] || robust__wanted(sa->names[k], extra, nextra)) ||
        robust__find(sb->names, sb->nm, sa->names[k]) < 0)
      continue;
    int kb = rpt_metric_find(f[0], sa->names[k]), ka = rpt_metric_find(f[1], sa->names[k]);
    if (kb < 0 || ka < 0) continue;
    robust__row *r = &rows[n++];
    r->name = rpt_metric_name(f[1], (unsigned)ka);
    r->unit = rpt_metric_unit(f[1], (unsigned)ka);
    robust__paired(vb, nb, kb, va, na, ka, rpt_nreps(f[0]), &r->base);
    r->lo = INFINITY, r->hi = -INFINITY, r->flip = -1;
  }
  *out = rows;
  return n;
}

/* Adds one point's paired differences to the rows. */
static void robust__account(robust__row *rows, int nrows, const robust__side *sb, const robust__side *sa, int p) {
  for (int i = 0; i < nrows; i++) {
    robust__row *r = &rows[i];
    int kb = robust__find(sb->names, sb->nm, r->name), ka = robust__find(sa->names, sa->nm, r->name);
    if (kb < 0 || ka < 0) continue;
    rpt_ci ci;
    robust__paired(sb->v, sb->nm, kb, sa->v, sa->nm, ka, sa->reps, &ci);
    if (!isfinite(ci.mean)) { /* undefined at this point (a class with no jobs, a ratio of zeros) */
      if (r->flip < 0 && isfinite(r->base.mean)) r->flip = p;
      continue;
    }
    if (ci.mean < r->lo) r->lo = ci.mean;
    if (ci.mean > r->hi) r->hi = ci.mean;
    int s = robust__sign(ci.mean), b = robust__sign(r->base.mean);
    r->npos += s > 0;
    r->nneg += s < 0;
    if (b != 0 && ((b > 0 && ci.lo > 0) || (b < 0 && ci.hi < 0))) r->nsig++;
    if (r->flip < 0 && s != b) r->flip = p;
  }
}

/* Parses specs into keys[] (*nk of them); 0, or the exit status with the message printed. */
static int robust__keys(const char *const *specs, int nspecs, robust__key *keys, int *nk, int *npoints) {
  char err[512];
  *nk = 0;
  *npoints = 1;
  if (nspecs > APP_ROBUST_MAX_KEYS) {
    fprintf(stderr, "spotlab compare: at most %d --robust keys (%d given)\n", APP_ROBUST_MAX_KEYS, nspecs);
    return 2;
  }
  for (; *nk < nspecs; (*nk)++) {
    robust__key *k = &keys[*nk];
    int rc = robust__parse(specs[*nk], k, err, sizeof err);
    if (rc) {
      if (rc == 2) fprintf(stderr, "spotlab compare: %s\n", err);
      robust__keys_free(keys, *nk + 1);
      return rc;
    }
    for (int j = 0; j < *nk; j++)
      if (!strcmp(keys[j].key, k->key)) {
        fprintf(stderr, "spotlab compare: --robust key %s is given twice\n", k->key);
        robust__keys_free(keys, *nk + 1);
        return 2;
      }
    *npoints *= k->nvalues;
  }
  if (*npoints > APP_ROBUST_MAX_POINTS) {
    fprintf(stderr, "spotlab compare: --robust makes %d points (the product of the values per key); at most %d\n",
            *npoints, APP_ROBUST_MAX_POINTS);
    robust__keys_free(keys, *nk);
    return 2;
  }
  return 0;
}

int app_compare_robust_check(const char *before, const char *after, const char *const *specs, int nspecs,
                             const char *const *metrics, int nmetrics) {
  robust__key keys[APP_ROBUST_MAX_KEYS];
  int nk, npoints;
  int rc = robust__keys(specs, nspecs, keys, &nk, &npoints);
  if (rc) return rc;
  sim_run_record rec[2] = {{0}, {0}};
  rpt_file *f[2] = {NULL, NULL};
  const char *files[2] = {before, after};
  rc = robust__records(before, after, rec, f);
  for (int i = 0; !rc && i < nmetrics; i++)
    if (rpt_metric_find(f[0], metrics[i]) < 0 || rpt_metric_find(f[1], metrics[i]) < 0) {
      fprintf(stderr, "spotlab compare: --robust-metric %s is not a metric of both files\n", metrics[i]);
      rc = 2;
    }
  if (!rc) rc = robust__check_all(rec, files, keys, nk, npoints);
  for (int i = 0; i < 2; i++) {
    if (f[i]) rpt_close(f[i]);
    sim_run_record_free(&rec[i]);
  }
  robust__keys_free(keys, nk);
  return rc;
}

int app_compare_robust(const char *before, const char *after, const char *const *specs, int nspecs,
                       const char *const *metrics, int nmetrics, const char *outdir, int quiet, FILE *tab) {
  robust__key keys[APP_ROBUST_MAX_KEYS];
  int nk, npoints, status = robust__keys(specs, nspecs, keys, &nk, &npoints);
  if (status) return status;
  sim_run_record rec[2] = {{0}, {0}};
  rpt_file *f[2] = {NULL, NULL};
  const char *files[2] = {before, after};
  robust__row *rows = NULL;
  int nrows = 0;
  status = robust__records(before, after, rec, f); /* every point was loaded by app_compare_robust_check */
  for (int p = 0; !status && p < npoints; p++) {
    char *ovr[APP_ROBUST_MAX_KEYS] = {0};
    robust__side side[2] = {{0}, {0}};
    char label[256];
    robust__point_label(keys, nk, p, label, sizeof label);
    if (!quiet) fprintf(stderr, "robust point %d/%d (%s): running both sides\n", p + 1, npoints, label);
    status = robust__overrides(keys, nk, p, ovr) ? 1 : 0;
    for (int s = 0; !status && s < 2; s++) status = robust__side_go(&rec[s], files[s], ovr, nk, 1, &side[s]);
    if (!status && p == 0 && (nrows = robust__rows(&side[0], &side[1], f, metrics, nmetrics, &rows)) < 0) status = 1;
    if (!status) robust__account(rows, nrows, &side[0], &side[1], p);
    for (int s = 0; s < 2; s++) robust__side_free(&side[s]);
    for (int i = 0; i < nk; i++) free(ovr[i]);
  }
  if (!status && nrows == 0) {
    fprintf(stderr, "spotlab compare --robust: the model marks no metric of both files as headline\n");
    status = 1;
  }
  if (!status) status = robust__write(rows, nrows, keys, nk, npoints, before, after, outdir, tab);
  free(rows);
  for (int i = 0; i < 2; i++) {
    if (f[i]) rpt_close(f[i]);
    sim_run_record_free(&rec[i]);
  }
  robust__keys_free(keys, nk);
  return status;
}
