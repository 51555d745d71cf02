/* rpt_report.c - `spotlab report`: the summary table, the figures and index.html of a results
 * file, or the metric-against-parameter figures of a sweep file.
 *
 * Each figure is drawn only when its inputs are in the file (so a report works on any model's
 * results); otherwise one line says which figure was skipped and why. Without gnuplot the tables
 * and index.html are still written. Across replications, time series and bar heights are means
 * with 95% Student-t bands (rpt_ci_t); distributions (income, waits) pool every replication.
 */
#include "analysis/report/rpt_internal.h"
#include "models/market/mkt_names.h" /* the market's table and series names (header only) */

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#define RPT_MAX_SERIES 12 /* series per panel: beyond this, the 12 largest are kept */

typedef struct rpt__fig {
  char name[400], title[600], caption[1536];
} rpt__fig;

typedef struct rpt__ctx {
  rpt_file *f;
  const rpt_options *opt;
  const char *gp; /* gnuplot program */
  int have_gp;
  FILE *log;
  rpt_outcome *out;
  rpt__fig *figs;
  size_t nfigs;
  int rc; /* first hard error (out of memory, unreadable data) */
  char err[RPT_ERRLEN];
  int write_failed; /* a figure's files could not be written whole (a full disk) */
  char write_err[RPT_ERRLEN];
} rpt__ctx;

static void rpt__say(rpt__ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void rpt__say(rpt__ctx *c, const char *fmt, ...) {
  if (c->opt->quiet) return;
  char buf[4096];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  size_t n = strlen(buf);
  int nl = n && buf[n - 1] == '\n';
  if (nl) buf[n - 1] = 0;
  rpt__term(buf); /* names from the file cannot move the cursor or recolour the terminal */
  fprintf(c->log, "%s%s", buf, nl ? "\n" : "");
}

static void rpt__skip(rpt__ctx *c, const char *title, const char *why) {
  rpt__list_add(&c->out->skipped, &c->out->nskipped, "%s: %s", title, why);
  rpt__say(c, "skipped figure '%s': %s\n", title, why);
}

/* Hands a finished script to gnuplot (or notes the skip) and records the figure. */
static void rpt__emit(rpt__ctx *c, const char *name, const char *title, const char *caption, int height, char *body) {
  if (c->opt->script) { /* tests and fuzzing: the script, no gnuplot */
    c->opt->script(c->opt->script_ctx, name, body);
    free(body);
    c->out->figures_drawn++;
    return;
  }
  if (!c->have_gp) {
    rpt__list_add(&c->out->skipped, &c->out->nskipped, "%s: gnuplot is not available", title);
    free(body);
    return;
  }
  char err[256];
  int gr = rpt__gp_render(c->gp, c->opt->outdir, name, height, body, err, sizeof err);
  if (gr) {
    rpt__list_add(&c->out->skipped, &c->out->nskipped, "%s: %s", title, err);
    rpt__say(c, "figure '%s' failed: %s\n", title, err);
    if (gr == -2 && !c->write_failed) { /* the report cannot be whole: it ends in an error */
      c->write_failed = 1;
      snprintf(c->write_err, sizeof c->write_err, "figure '%s': %s", title, err);
    }
    free(body);
    return;
  }
  free(body);
  rpt__list_add(&c->out->files, &c->out->nfiles, "%s.png", name);
  rpt__list_add(&c->out->files, &c->out->nfiles, "%s.svg", name);
  c->out->figures_drawn++;
  rpt__fig *nf = realloc(c->figs, (c->nfigs + 1) * sizeof *nf);
  if (!nf) return;
  c->figs = nf;
  snprintf(nf[c->nfigs].name, sizeof nf->name, "%s", name);
  snprintf(nf[c->nfigs].title, sizeof nf->title, "%s", title);
  snprintf(nf[c->nfigs].caption, sizeof nf->caption, "%s", caption);
  c->nfigs++;
  rpt__say(c, "wrote %s/%s.png and .svg (%s)\n", c->opt->outdir, name, title);
}

/* The experiment figures' sink (rpt_exp_report.c). */
static void rpt__exp_emit(void *c, const char *name, const char *title, const char *caption, int height, char *body) {
  rpt__emit(c, name, title, caption, height, body);
}
static void rpt__exp_skip(void *c, const char *title, const char *why) { rpt__skip(c, title, why); }

static void rpt__hard(rpt__ctx *c, int rc) {
  if (!c->rc) {
    c->rc = rc;
    snprintf(c->err, sizeof c->err, "%s", rpt_error(c->f));
  }
}

/* ---- helpers ---------------------------------------------------------------------------------- */

/* "USD*1e-6/GPU-h" -> scale 1e-6, clean "USD/GPU-h". Units without "*1eN" have scale 1. */
static double rpt__unit_scale(const char *unit, char *clean, size_t len) {
  const char *m = strstr(unit, "*1e");
  if (!m) {
    snprintf(clean, len, "%s", unit);
    return 1.0;
  }
  char *end;
  double e = strtod(m + 3, &end);
  snprintf(clean, len, "%.*s%s", (int)(m - unit), unit, end);
  return pow(10.0, e);
}

/* Milliseconds per unit of time in a unit such as "GPU*ms" (1), "GPU*s" (1000), "GPU*h". */
static double rpt__ms_per_unit(const char *unit) {
  const char *star = strrchr(unit, '*');
  const char *t = star ? star + 1 : unit;
  if (!strcmp(t, "ms")) return 1.0;
  if (!strcmp(t, "s")) return 1000.0;
  if (!strcmp(t, "h")) return 3.6e6;
  return 1.0; /* the engine's convention: time in ms */
}

/* Time axis: the page's one time unit (hours; days for runs over 30 days), as in the tables. */
static double rpt__time_div(rpt__ctx *c, const char **label) {
  const char *u;
  double div = rpt__page_time(c->f, &u);
  *label = !strcmp(u, "h") ? "simulated time (hours)" : "simulated time (days)";
  return div;
}

/* A table line instead of a figure: a constant series or a pass/fail check ("what: value"). */
static void rpt__line(rpt__ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void rpt__line(rpt__ctx *c, const char *fmt, ...) {
  char buf[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  rpt__list_add(&c->out->lines, &c->out->nlines, "%s", buf);
  rpt__say(c, "not drawn, a table line: %s\n", buf);
}

/* "12.5 h", "0.3" (unit 1), "no value (NaN)": a value with its unit, for a table line. */
static void rpt__val_unit(char *buf, size_t len, double v, const char *unit) {
  if (v != v) {
    snprintf(buf, len, "no value (NaN)");
    return;
  }
  char num[32];
  rpt__fmt(num, sizeof num, v);
  snprintf(buf, len, "%s%s%s", num, unit[0] && strcmp(unit, "1") ? " " : "", strcmp(unit, "1") ? unit : "");
}

/* n values (stride apart) all equal (NaN equal to NaN): a constant, nothing to draw. */
static int rpt__constant(const double *v, size_t n, size_t stride) {
  for (size_t i = 1; i < n; i++) {
    double a = v[0], b = v[i * stride];
    if (!(a == b || (a != a && b != b))) return 0;
  }
  return 1;
}

static int rpt__cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Category strings of a table column across all replications, with values of a numeric column.
 * cats: distinct categories (first-seen order); cat_of[i]: category index of row i. */
typedef struct rpt__groups {
  char (*cats)[64];
  unsigned ncats;
  size_t *count; /* rows per category */
  double **vals; /* per category: values */
} rpt__groups;

static void rpt__groups_free(rpt__groups *g) {
  for (unsigned i = 0; i < g->ncats; i++) free(g->vals[i]);
  free(g->vals);
  free(g->count);
  free(g->cats);
  memset(g, 0, sizeof *g);
}

/* How rpt__group derives the value of a row. */
typedef struct rpt__jobf {
  const char *submit, *start, *end, *wait; /* the field names this file uses (NULL: absent) */
  const char *outcome;
} rpt__jobf;

/* The jobs table's field names: the market writes submit_s/start_s/end_s/wait_s and a string
 * outcome ("done"), the fault-tolerance model submit/start/end and a numeric outcome (1 =
 * completed, per its field's unit text). */
static void rpt__job_fields(rpt__ctx *c, rpt__jobf *jf) {
  const char *sub[] = {"submit_s", "submit", NULL}, *st[] = {"start_s", "start", NULL}, *en[] = {"end_s", "end", NULL},
             *wt[] = {"wait_s", NULL}, *oc[] = {"outcome", NULL};
  jf->submit = rpt_table_pick_field(c->f, MKT_TABLE_JOBS, sub);
  jf->start = rpt_table_pick_field(c->f, MKT_TABLE_JOBS, st);
  jf->end = rpt_table_pick_field(c->f, MKT_TABLE_JOBS, en);
  jf->wait = rpt_table_pick_field(c->f, MKT_TABLE_JOBS, wt);
  jf->outcome = rpt_table_pick_field(c->f, MKT_TABLE_JOBS, oc);
}

enum { RPT_V_FIELD, RPT_V_WAIT, RPT_V_COMPLETION };

/* Groups a value of each row of `table` by the string field `cat`, over every replication,
 * keeping only rows whose string field `only_f` equals `only_v` (when only_f is not NULL).
 * RPT_V_FIELD: the numeric field `num`; RPT_V_WAIT: wait_s, or start - submit; RPT_V_COMPLETION:
 * end - submit for finished jobs (outcome "done"/"completed" or 1; without an outcome, a finite
 * end not before the submission). NaN marks a job without that time (never started, not
 * finished): it stays in the count so CDFs end below 1. */
static int rpt__group(rpt__ctx *c, const char *table, const char *cat, const char *only_f, const char *only_v, int kind,
                      const char *num, const rpt__jobf *jf, rpt__groups *g) {
  memset(g, 0, sizeof *g);
  unsigned cap = 64;
  g->cats = calloc(cap, 64);
  g->count = calloc(cap, sizeof *g->count);
  g->vals = calloc(cap, sizeof *g->vals);
  size_t *capv = calloc(cap, sizeof *capv);
  int rc = !g->cats || !g->count || !g->vals || !capv ? SIM_ENOMEM : 0;
  for (int r = 0; !rc && r < rpt_nreps(c->f); r++) {
    char *cs = NULL, *oc_s = NULL, *flt = NULL;
    double *v = NULL, *sub = NULL, *oc_n = NULL;
    size_t w, n, n2, wo = 0, wf = 0;
    rc = rpt_table_str(c->f, r, table, cat, &cs, &w, &n);
    if (!rc && only_f) rc = rpt_table_str(c->f, r, table, only_f, &flt, &wf, &n2);
    if (!rc) {
      if (kind == RPT_V_FIELD)
        rc = rpt_table_num(c->f, r, table, num, &v, &n2);
      else if (kind == RPT_V_WAIT && jf->wait)
        rc = rpt_table_num(c->f, r, table, jf->wait, &v, &n2);
      else if (kind == RPT_V_WAIT)
        rc = rpt_table_num(c->f, r, table, jf->start, &v, &n2);
      else
        rc = rpt_table_num(c->f, r, table, jf->end, &v, &n2);
    }
    if (!rc && kind != RPT_V_FIELD && !(kind == RPT_V_WAIT && jf->wait))
      rc = rpt_table_num(c->f, r, table, jf->submit, &sub, &n2);
    if (!rc && kind == RPT_V_COMPLETION && jf->outcome && rpt_table_num(c->f, r, table, jf->outcome, &oc_n, &n2))
      rc = rpt_table_str(c->f, r, table, jf->outcome, &oc_s, &wo, &n2); /* a string outcome */
    for (size_t i = 0; !rc && i < n; i++) {
      if (flt && only_v && strcmp(flt + i * wf, only_v)) continue; /* only_v is set with only_f */
      const char *s = cs + i * w;
      unsigned k;
      for (k = 0; k < g->ncats && strcmp(g->cats[k], s); k++) {}
      if (k == g->ncats) {
        if (g->ncats == cap) continue; /* more than 64 categories: the rest are left out */
        snprintf(g->cats[g->ncats++], 64, "%s", s);
      }
      double x = v[i];
      if (kind == RPT_V_WAIT && !jf->wait) x = isfinite(v[i]) && v[i] >= sub[i] ? v[i] - sub[i] : NAN;
      if (kind == RPT_V_COMPLETION) {
        int done;
        if (oc_n)
          done = oc_n[i] == 1.0;
        else if (oc_s)
          done = !strcmp(oc_s + i * wo, "done") || !strcmp(oc_s + i * wo, "completed");
        else
          done = isfinite(v[i]) && v[i] >= sub[i];
        x = done ? v[i] - sub[i] : NAN;
      }
      if (g->count[k] == capv[k]) {
        capv[k] = capv[k] ? 2 * capv[k] : 256;
        double *nv = realloc(g->vals[k], capv[k] * sizeof *nv);
        if (!nv) {
          rc = SIM_ENOMEM;
          break;
        }
        g->vals[k] = nv;
      }
      g->vals[k][g->count[k]++] = x;
    }
    free(cs);
    free(oc_s);
    free(oc_n);
    free(flt);
    free(v);
    free(sub);
  }
  free(capv);
  if (rc) {
    rpt__hard(c, rc);
    rpt__groups_free(g);
  }
  return rc;
}

/* Keeps the RPT_MAX_SERIES categories with the most rows (in their first-seen order). */
static unsigned rpt__top(const rpt__groups *g, unsigned *keep) {
  unsigned n = 0;
  for (unsigned i = 0; i < g->ncats; i++) keep[n++] = i;
  while (n > RPT_MAX_SERIES) { /* drop the smallest */
    unsigned s = 0;
    for (unsigned j = 1; j < n; j++)
      if (g->count[keep[j]] < g->count[keep[s]]) s = j;
    memmove(keep + s, keep + s + 1, (n - s - 1) * sizeof *keep);
    n--;
  }
  return n;
}

/* A script buffer: open_memstream writes the pointer into *body, which must outlive the stream. */
static FILE *rpt__body_open(char **body, size_t *len) {
  *body = NULL;
  return open_memstream(body, len);
}

/* ---- figure: provider income per persona and per pool ----------------------------------------- */

/* Income is heavy-tailed (a few providers earn most): when the largest value is more than 20
 * times the median, the axis is logarithmic, with incomes under 1 cent (penalties can make a few
 * negative) drawn at 1 cent; the label says so. */
#define RPT_INCOME_FLOOR 0.01
static int rpt__income_log(const rpt__groups *gr) {
  size_t n = 0;
  for (unsigned i = 0; i < gr->ncats; i++) n += gr->count[i];
  double *v = malloc((n ? n : 1) * sizeof *v);
  if (!v) return 0;
  size_t m = 0;
  for (unsigned i = 0; i < gr->ncats; i++)
    for (size_t j = 0; j < gr->count[i]; j++)
      if (isfinite(gr->vals[i][j])) v[m++] = gr->vals[i][j];
  qsort(v, m, sizeof *v, rpt__cmp_double);
  int lg = m > 0 && v[m / 2] > 0 && v[m - 1] > 20 * v[m / 2];
  free(v);
  return lg;
}

static void rpt__income_panel(FILE *g, const rpt__groups *gr, const char *dim, int lg) {
  unsigned keep[64], n = rpt__top(gr, keep);
  fprintf(g, "set title 'per %s%s'\nset key off\nset ylabel 'income per provider over the run (USD%s)'\n", dim,
          gr->ncats > n ? " (12 largest groups)" : "", lg ? ", log scale" : "");
  if (lg)
    fputs("set logscale y\nset yrange [*:*]\n", g);
  else
    fputs("unset logscale y\nset yrange [*:*]\n", g);
  fputs("set style data boxplot\nset style boxplot outliers pointtype 7\nset boxwidth 0.55\nset pointsize 0.4\n", g);
  fputs("set xtics (", g);
  for (unsigned i = 0; i < n; i++) {
    char lab[96];
    snprintf(lab, sizeof lab, "%s (n=%zu)", gr->cats[keep[i]], gr->count[keep[i]]);
    fputs(i ? ", " : "", g);
    rpt__gp_str(g, lab);
    fprintf(g, " %u", i + 1);
  }
  fprintf(g, ") rotate by -30\nset xrange [0.4:%u.6]\n", n);
  for (unsigned i = 0; i < n; i++) {
    fprintf(g, "$%s%u << EOD\n", dim, i);
    size_t m = 0;
    for (size_t j = 0; j < gr->count[keep[i]]; j++)
      if (isfinite(gr->vals[keep[i]][j])) {
        double x = gr->vals[keep[i]][j];
        fprintf(g, "%.9g\n", lg && x < RPT_INCOME_FLOOR ? RPT_INCOME_FLOOR : x);
        m++;
      }
    if (!m) fputs("NaN\n", g);
    fputs("EOD\n", g);
  }
  fprintf(g, "$%smean << EOD\n", dim);
  for (unsigned i = 0; i < n; i++) {
    double s = 0;
    size_t m = 0;
    for (size_t j = 0; j < gr->count[keep[i]]; j++)
      if (isfinite(gr->vals[keep[i]][j])) s += gr->vals[keep[i]][j], m++;
    fprintf(g, "%u %.9g\n", i + 1, m ? s / (double)m : NAN);
  }
  fputs("EOD\nplot ", g);
  for (unsigned i = 0; i < n; i++) fprintf(g, "%s$%s%u using (%u):1 lt %u", i ? ", " : "", dim, i, i + 1, i + 1);
  fprintf(g, ", $%smean using 1:2 with points pt 2 ps 1.5 lc rgb 'black' notitle\n", dim);
}

static void rpt__fig_income(rpt__ctx *c) {
  const char *title = "Provider income per persona and pool";
  const char *need[] = {"income_usd", NULL};
  if (!rpt_has_table(c->f, MKT_TABLE_PROVIDERS, need)) {
    rpt__skip(c, title, "no table 'providers' with a field income_usd");
    return;
  }
  const char *dims[2] = {"persona", "pool"};
  rpt__groups gr[2];
  int have[2] = {0, 0};
  for (int i = 0; i < 2; i++) {
    const char *one[] = {dims[i], NULL};
    if (rpt_has_table(c->f, MKT_TABLE_PROVIDERS, one) &&
        !rpt__group(c, MKT_TABLE_PROVIDERS, dims[i], NULL, NULL, RPT_V_FIELD, "income_usd", NULL, &gr[i]))
      have[i] = 1;
  }
  if (!have[0] && !have[1]) {
    rpt__skip(c, title, "table 'providers' has neither a persona nor a pool field");
    return;
  }
  FILE *g;
  size_t len;
  char *body;
  g = rpt__body_open(&body, &len);
  if (!g) return;
  /* Both panels hold the same providers: one choice of axis for both. */
  int lg = rpt__income_log(have[0] ? &gr[0] : &gr[1]);
  fprintf(g,
          "set multiplot layout 1,%d title 'Provider income over the run, all %d replications pooled (box: quartiles, "
          "whiskers: 1.5 IQR, x: mean%s)'\n",
          have[0] + have[1], rpt_nreps(c->f), lg ? "; under 0.01 USD drawn at 0.01" : "");
  for (int i = 0; i < 2; i++)
    if (have[i]) rpt__income_panel(g, &gr[i], dims[i], lg);
  fclose(g);
  for (int i = 0; i < 2; i++)
    if (have[i]) rpt__groups_free(&gr[i]);
  rpt__emit(c, "income", title,
            "Distribution of each provider's income over the whole run (USD), per persona and per pool; "
            "every replication's providers pooled.",
            600, body);
}

/* ---- figure: utilization and idle-but-available GPUs per region ------------------------------- */

/* Per region and bin: the mean over replications of f(rented, available) with its 95% band. */
static void rpt__fig_util(rpt__ctx *c) {
  const char *title = "Utilization and idle-but-available GPUs per region";
  if (!rpt_has_series(c->f, MKT_SERIES_RENTED) || !rpt_has_series(c->f, MKT_SERIES_AVAIL)) {
    rpt__skip(c, title, "series rented_gpu_ms_by_region and available_gpu_ms_by_region are not both in the file");
    return;
  }
  int reps = rpt_nreps(c->f);
  rpt_series *rs = calloc((size_t)reps, sizeof *rs), *as = calloc((size_t)reps, sizeof *as);
  int rc = !rs || !as ? SIM_ENOMEM : 0;
  for (int r = 0; !rc && r < reps; r++) {
    rc = rpt_series_read(c->f, r, MKT_SERIES_RENTED, &rs[r]);
    if (!rc) rc = rpt_series_read(c->f, r, MKT_SERIES_AVAIL, &as[r]);
    if (!rc && (rs[r].nbins != as[r].nbins || rs[r].ncols != as[r].ncols || rs[r].nbins != rs[0].nbins ||
                rs[r].ncols != rs[0].ncols)) {
      rpt__skip(c, title, "the rented and available series do not have the same shape in every replication");
      rc = 1;
    }
  }
  if (!rc && (rs[0].bin_width <= 0 || rs[0].nbins < 2)) {
    rpt__skip(c, title, "the series have a single bin (no time axis)");
    rc = 1;
  }
  if (rc < 0) rpt__hard(c, rc);
  if (!rc) {
    const char *xl;
    double div = rpt__time_div(c, &xl), bw = rs[0].bin_width;
    /* Idle-but-available GPUs in a bin = (available - rented) GPU-time / bin length. */
    double ms_per = rpt__ms_per_unit(as[0].unit), bin_ms = bw * 1000.0;
    size_t nb = rs[0].nbins, nc = rs[0].ncols;
    double *u = malloc((size_t)reps * sizeof *u), *idle = malloc((size_t)reps * sizeof *idle);
    FILE *g;
    size_t len;
    char *body;
    g = rpt__body_open(&body, &len);
    if (!u || !idle || !g) rc = SIM_ENOMEM;
    unsigned ncols = nc > RPT_MAX_SERIES ? RPT_MAX_SERIES : (unsigned)nc;
    int has_u[RPT_MAX_SERIES] = {0}; /* a region never available has no utilization: not in that legend */
    for (unsigned col = 0; !rc && col < ncols; col++) {
      fprintf(g, "$r%u << EOD\n", col);
      for (size_t b = 0; b < nb; b++) {
        size_t m = 0, mi = 0;
        for (int r = 0; r < reps; r++) {
          double av = as[r].v[b * nc + col], re = rs[r].v[b * nc + col];
          if (av > 0) u[m++] = 100.0 * re / av; /* utilization = rented / available GPU-time */
          idle[mi++] = (av - re) * ms_per / bin_ms;
        }
        rpt_ci cu, ci;
        rpt_ci_t(u, m, 1, &cu);
        rpt_ci_t(idle, mi, 1, &ci);
        rpt_ci_clip(&cu, 0, 100); /* a share of the available GPU-time */
        has_u[col] |= m > 0;
        rpt_ci_clip(&ci, 0, INFINITY); /* a number of GPUs */
        fprintf(g, "%.9g %.6g %.6g %.6g %.6g %.6g %.6g\n", ((double)b + 0.5) * bw / div, cu.mean, cu.lo, cu.hi, ci.mean,
                ci.lo, ci.hi);
      }
      fputs("EOD\n", g);
    }
    if (!rc) {
      fprintf(g, "set multiplot layout 2,1 title 'Per region: mean of %d replication%s%s'\n", reps,
              reps == 1 ? "" : "s", reps > 1 ? ", shaded: 95% confidence band" : "");
      fprintf(g, "set xrange [0:%.9g]\n", rpt_end_time(c->f) / div);
      fprintf(g,
              "set xlabel ''\nset ylabel 'utilization (%% of available GPU-time)'\nset yrange [0:*]\n"
              "set title 'Utilization: rented / available GPU-time per %.3g h bin'\n",
              bw / 3600.0);
      for (int panel = 0; panel < 2; panel++) {
        if (panel == 1)
          fprintf(g,
                  "set xlabel '%s'\nset ylabel 'GPUs idle but available (mean in bin)'\nset yrange [0:*]\n"
                  "set title 'Idle-but-available GPUs: (available - rented) GPU-time / bin length'\n",
                  xl);
        int k = panel ? 5 : 2;
        fputs("plot ", g);
        for (unsigned col = 0; col < ncols; col++) {
          if (reps > 1)
            fprintf(g, "$r%u using 1:%d:%d with filledcurves fs transparent solid 0.18 noborder lt %u notitle, ", col,
                    k + 1, k + 2, col + 1);
          fprintf(g, "$r%u using 1:%d with lines lt %u ", col, k, col + 1);
          if (panel == 0 && !has_u[col])
            fputs("notitle", g);
          else {
            fputs("title ", g);
            rpt__gp_str(g, rs[0].colnames[col]);
          }
          fputs(col + 1 < ncols ? ", " : "\n", g);
        }
      }
    }
    if (g) fclose(g);
    free(u);
    free(idle);
    if (rc) {
      free(body);
      rpt__hard(c, rc);
    } else {
      char cap[512];
      snprintf(cap, sizeof cap,
               "Top: share of the available (idle or rented) GPU-time that was rented, per region and "
               "%.3g h bin. Bottom: the average number of GPUs online and idle in the bin; the idle share of "
               "available time is 100%% minus the top panel.%s",
               bw / 3600.0, nc > ncols ? " Only the first 12 regions are drawn." : "");
      rpt__emit(c, "utilization", title, cap, 800, body);
    }
  }
  for (int r = 0; rs && as && r < reps; r++) {
    rpt_series_free(&rs[r]);
    rpt_series_free(&as[r]);
  }
  free(rs);
  free(as);
}

/* ---- figure: clearing price per GPU class, with its traded volume ----------------------------- */

/* A class with less than this share of all trades is merged into "other" (when two or more are). */
#define RPT_PRICE_MIN_SHARE 0.05

static void rpt__fig_price(rpt__ctx *c) {
  const char *title = "Clearing price per GPU class";
  if (!rpt_has_series(c->f, MKT_SERIES_PRICE_SUM) || !rpt_has_series(c->f, MKT_SERIES_PRICE_N)) {
    rpt__skip(c, title, "series price_sum_by_class and price_n_by_class are not both in the file");
    return;
  }
  int reps = rpt_nreps(c->f), rc = 0;
  rpt_series *ps = calloc((size_t)reps, sizeof *ps), *pn = calloc((size_t)reps, sizeof *pn);
  if (!ps || !pn) rc = SIM_ENOMEM;
  for (int r = 0; !rc && r < reps; r++) {
    rc = rpt_series_read(c->f, r, MKT_SERIES_PRICE_SUM, &ps[r]);
    if (!rc) rc = rpt_series_read(c->f, r, MKT_SERIES_PRICE_N, &pn[r]);
    if (!rc && (ps[r].nbins != pn[r].nbins || ps[r].ncols != pn[r].ncols || ps[r].nbins != ps[0].nbins ||
                ps[r].ncols != ps[0].ncols)) {
      rpt__skip(c, title, "the price sum and count series do not have the same shape in every replication");
      rc = 1;
    }
  }
  if (!rc && (ps[0].bin_width <= 0 || ps[0].nbins < 2)) {
    rpt__skip(c, title, "the price series have a single bin (no time axis)");
    rc = 1;
  }
  if (rc < 0) rpt__hard(c, rc);
  if (!rc) {
    char unit[64];
    double scale = rpt__unit_scale(ps[0].unit, unit, sizeof unit);
    const char *xl, *tu;
    double div = rpt__time_div(c, &xl), bw = ps[0].bin_width;
    rpt__page_time(c->f, &tu);
    size_t nb = ps[0].nbins, nc = ps[0].ncols;
    /* Hourly prices of thinly traded classes are noise: bins are merged into windows of k bins so
     * that at most 60 points are drawn (a window's price is its cleared value / its count). */
    size_t k = (nb + 59) / 60, nw = (nb + k - 1) / k;
    /* Volume: trades per class over every replication. Classes that never traded are left out;
     * those under RPT_PRICE_MIN_SHARE of all trades are merged into one "other" series (its price
     * is theirs weighted by their trades: the sum of their prices over the sum of their counts). */
    double *traded = calloc(nc ? nc : 1, sizeof *traded), total = 0;
    int *series_of = malloc((nc ? nc : 1) * sizeof *series_of); /* class -> drawn series, -1 none */
    for (size_t col = 0; traded && col < nc; col++) {
      for (int r = 0; r < reps; r++)
        for (size_t b = 0; b < nb; b++) traded[col] += pn[r].v[b * nc + col];
      total += traded[col];
    }
    unsigned nsmall = 0;
    for (size_t col = 0; traded && col < nc; col++)
      nsmall += traded[col] > 0 && traded[col] < RPT_PRICE_MIN_SHARE * total;
    int merge = nsmall >= 2;
    /* the kept classes, most traded first, at most RPT_MAX_SERIES - 1 (one left for "other") */
    unsigned cols[RPT_MAX_SERIES], ncols = 0;
    char other_note[512] = "";
    double other_n = 0;
    size_t on = 0;
    for (size_t col = 0; series_of && col < nc; col++) series_of[col] = -1;
    for (unsigned pick = 0; traded && series_of && pick < RPT_MAX_SERIES - 1; pick++) {
      int best = -1;
      for (size_t col = 0; col < nc; col++) {
        if (series_of[col] >= 0 || traded[col] <= 0 || (merge && traded[col] < RPT_PRICE_MIN_SHARE * total)) continue;
        if (best < 0 || traded[col] > traded[best]) best = (int)col;
      }
      if (best < 0) break;
      series_of[best] = (int)ncols;
      cols[ncols++] = (unsigned)best;
    }
    unsigned nseries = ncols;
    for (size_t col = 0; traded && series_of && col < nc; col++) /* what is left is "other" */
      if (series_of[col] < 0 && traded[col] > 0) {
        series_of[col] = (int)ncols;
        nseries = ncols + 1;
        other_n += traded[col];
        if (on < sizeof other_note)
          on += (size_t)snprintf(other_note + on, sizeof other_note - on, "%s%s (%.0f)", on ? ", " : "",
                                 ps[0].colnames[col], traded[col]);
      }
    /* Bands only for a few series (more would hide each other) and only where every replication
     * traded in the window (a t interval on 2 of 8 replications says little). */
    int bands = reps > 1 && nseries <= 4;
    double *p = malloc((size_t)reps * sizeof *p), *vr = malloc((size_t)reps * sizeof *vr);
    double *first = malloc((nseries + 1) * sizeof *first);
    int constant = 1;
    FILE *g;
    size_t len;
    char *body;
    g = rpt__body_open(&body, &len);
    if (!p || !vr || !g || !traded || !series_of || !first) rc = SIM_ENOMEM;
    if (!rc && !nseries) {
      rpt__skip(c, title, "nothing cleared in any GPU class");
      rc = 1;
    }
    /* series j < nseries: a class (or "other"); j == nseries: every class, weighted by trades */
    for (unsigned j = 0; !rc && j <= nseries; j++) {
      fprintf(g, "$p%u << EOD\n", j);
      first[j] = NAN;
      for (size_t w = 0; w < nw; w++) {
        size_t m = 0;
        double vol = 0;
        for (int r = 0; r < reps; r++) {
          double sum = 0, n = 0;
          for (size_t col = 0; col < nc; col++) {
            if (j < nseries && series_of[col] != (int)j) continue;
            for (size_t b = w * k; b < (w + 1) * k && b < nb; b++) {
              sum += ps[r].v[b * nc + col];
              n += pn[r].v[b * nc + col];
            }
          }
          vol += n;
          vr[r] = n;
          /* Mean clearing price in a window = sum of the prices cleared / their number. */
          if (n > 0) p[m++] = scale * sum / n;
        }
        rpt_ci ci, cv;
        rpt_ci_t(p, m, 1, &ci);
        rpt_ci_clip(&ci, 0, INFINITY); /* a price */
        rpt_ci_t(vr, (size_t)reps, 1, &cv);
        rpt_ci_clip(&cv, 0, INFINITY); /* a number of trades */
        double t = (double)w * (double)k * bw + 0.5 * (double)k * bw;
        if (m) {
          if (first[j] != first[j])
            first[j] = ci.mean;
          else if (fabs(ci.mean - first[j]) > 1e-9 * (1 + fabs(first[j])))
            constant = 0;
          fprintf(g, "%.9g %.6g %.6g %.6g %.6g %.6g %.6g\n", t / div, ci.mean, (int)m == reps ? ci.lo : NAN,
                  (int)m == reps ? ci.hi : NAN, vol / reps, cv.lo, cv.hi);
        } else {
          fprintf(g, "%.9g NaN NaN NaN 0 0 0\n", t / div); /* nothing cleared in this window */
        }
      }
      fputs("EOD\n", g);
    }
    char cap[1400];
    if (!rc && constant) { /* flat lines say nothing a table line does not */
      char vals[768] = "";
      size_t o = 0;
      for (unsigned j = 0; j < nseries && o < sizeof vals; j++) {
        char v[32];
        rpt__fmt(v, sizeof v, first[j]);
        o += (size_t)snprintf(vals + o, sizeof vals - o, "%s%s %s", j ? ", " : "",
                              j < ncols ? ps[0].colnames[cols[j]] : "other", v);
      }
      rpt__line(c, "clearing price per GPU class: constant over the run (%s): %s", unit[0] ? unit : "as stored", vals);
      rc = 1;
    }
    if (!rc) {
      fprintf(g, "set multiplot layout 2,1 title 'Mean of %d replication%s, %.3g %s windows%s'\n", reps,
              reps == 1 ? "" : "s", k * bw / (!strcmp(tu, "h") ? 3600.0 : 86400.0), tu,
              reps > 2 ? " (shaded: 95% bands)" : "");
      /* the same plot area in both panels (the legend sits right of the top one) */
      fprintf(g, "set lmargin at screen 0.08\nset rmargin at screen 0.74\n");
      fprintf(g, "set xrange [0:%.9g]\nset xlabel ''\nset ylabel ", rpt_end_time(c->f) / div);
      char yl[128];
      snprintf(yl, sizeof yl, "clearing price (%s)", unit[0] ? unit : "as stored");
      rpt__gp_str(g, yl);
      fputs("\nset title 'Price: line width grows with the class''s share of all trades; black: all classes, "
            "weighted by trades'\nset yrange [0:*]\nset datafile missing NaN\nplot ",
            g);
      for (unsigned j = 0; j < nseries; j++) {
        double share = j < ncols ? traded[cols[j]] / total : other_n / total;
        unsigned lt = j < 6 ? j + 1 : j + 2; /* colour 7 (black) is the all-classes line */
        if (bands)
          fprintf(g, "$p%u using 1:3:4 with filledcurves fs transparent solid 0.18 noborder lt %u notitle, ", j, lt);
        char lab[160];
        snprintf(lab, sizeof lab, "%s (%.0f%% of trades)", j < ncols ? ps[0].colnames[cols[j]] : "other", 100 * share);
        fprintf(g, "$p%u using 1:2 with linespoints pi -1 lt %u lw %.2f title ", j, lt, 0.75 + 3.5 * share);
        rpt__gp_str(g, lab);
        fputs(", ", g);
      }
      /* the all-classes line has its band (from three replications: see below) */
      if (reps > 2) /* with two replications the t band (t = 12.7) says little and hides the lines */
        fprintf(g, "$p%u using 1:3:4 with filledcurves fs transparent solid 0.15 noborder lc rgb '#000000' notitle, ",
                nseries);
      fprintf(g, "$p%u using 1:2 with lines lc rgb '#000000' lw 2.5 dt 1 title 'all classes'\n", nseries);
      /* the volume panel has its own legend (the same classes) and, like the prices, 95% bands */
      const char *vb = bands ? " (shaded: 95% bands)" : reps > 2 ? " (shaded: 95% band of all classes)" : "";
      fprintf(g,
              "set title 'Traded volume: trades per window, mean of the replications%s'\nset xlabel '%s'\n"
              "set ylabel 'trades per window'\nset yrange [0:*]\nplot ",
              vb, xl);
      for (unsigned j = 0; j < nseries; j++) {
        unsigned lt = j < 6 ? j + 1 : j + 2;
        if (bands)
          fprintf(g, "$p%u using 1:6:7 with filledcurves fs transparent solid 0.18 noborder lt %u notitle, ", j, lt);
        fprintf(g, "$p%u using 1:5 with steps lt %u title ", j, lt);
        rpt__gp_str(g, j < ncols ? ps[0].colnames[cols[j]] : "other");
        fputs(", ", g);
      }
      if (reps > 2) /* with two replications the t band (t = 12.7) says little and hides the lines */
        fprintf(g, "$p%u using 1:6:7 with filledcurves fs transparent solid 0.15 noborder lc rgb '#000000' notitle, ",
                nseries);
      fprintf(g, "$p%u using 1:5 with steps lc rgb '#000000' lw 2.5 dt 1 title 'all classes'\n", nseries);
      snprintf(
          cap, sizeof cap,
          "Top: average price of what cleared in each window, per GPU class; a line's width grows with its class's "
          "share of all trades, and the black line is every class together (the sum of the prices over the number "
          "of trades, so busy classes weigh most); gaps are windows in which nothing of that class cleared. "
          "Bottom: trades per window, mean over replications, per class and (black) in all.%s%s%s Classes that never "
          "traded are left out.%s",
          merge ? " Classes with under 5% of the trades each are merged into 'other': " : "", merge ? other_note : "",
          merge ? " (trades over the run, all replications)." : "",
          bands || reps < 3 ? ""
                            : " With more than four series only the all-classes lines have their 95% bands (more "
                              "would hide each other); the summary table has the intervals.");
    }
    free(traded);
    free(series_of);
    free(first);
    if (g) fclose(g);
    free(p);
    free(vr);
    if (rc) {
      free(body);
      if (rc < 0) rpt__hard(c, rc);
    } else {
      rpt__emit(c, "price", title, cap, 800, body);
    }
  }
  for (int r = 0; ps && pn && r < reps; r++) {
    rpt_series_free(&ps[r]);
    rpt_series_free(&pn[r]);
  }
  free(ps);
  free(pn);
}

/* ---- figure: CDFs of job wait and completion time per class (or policy) ----------------------- */

/* Writes an empirical CDF of the finite values of v as a datablock; the denominator is every row
 * (so jobs that never started or finished keep the curve below 1). Values below `floor` are drawn
 * at floor (log axis). At most ~400 points. */
static void rpt__ecdf_block(FILE *g, const char *name, double *v, size_t n, double floor_v, double div) {
  size_t m = 0;
  for (size_t i = 0; i < n; i++)
    if (isfinite(v[i])) v[m++] = v[i] / div < floor_v ? floor_v : v[i] / div;
  qsort(v, m, sizeof *v, rpt__cmp_double);
  fprintf(g, "$%s << EOD\n", name);
  size_t step = m > 400 ? m / 400 : 1;
  for (size_t i = 0; i < m; i += step) fprintf(g, "%.9g %.6g\n", v[i], (double)(i + 1) / (double)n);
  if (m)
    fprintf(g, "%.9g %.6g\n", v[m - 1], (double)m / (double)n);
  else
    fputs("NaN NaN\n", g);
  fputs("EOD\n", g);
}

/* Waits and completion times cannot exceed the run: the axis ends there (so it never collapses
 * when every value sits at the floor). In the page's time unit, log scale, from RPT_CDF_FLOOR. */
#define RPT_CDF_FLOOR_S 3.6 /* 0.001 h */
static void rpt__time_tics(FILE *g, double end_s, double div) {
  double lo = RPT_CDF_FLOOR_S / div, hi = end_s / div;
  fprintf(g, "set logscale x\nset xrange [%.9g:%.9g]\nset format x '%%g'\nset xtics autofreq\n", lo,
          hi > 10 * lo ? hi : 10 * lo);
  fputs("set yrange [0:1.02]\nset ytics 0.2\n", g);
}

/* One figure (or one per value of `split`, e.g. the churn level) of wait and completion CDFs per
 * value of `by` (class or policy). */
static void rpt__fig_job_cdfs(rpt__ctx *c, const char *by, const char *name, const char *title) {
  const char *names_cls[] = {"class", "cls", NULL}, *names_by[] = {by, NULL}, *names_split[] = {"churn", NULL};
  const char *cat = rpt_table_pick_field(c->f, MKT_TABLE_JOBS, strcmp(by, "class") ? names_by : names_cls);
  rpt__jobf jf;
  rpt__job_fields(c, &jf);
  int has_w = jf.wait || (jf.start && jf.submit), has_c = jf.end && jf.submit;
  if (!cat || (!has_w && !has_c)) {
    char why[200];
    snprintf(why, sizeof why, "no table 'jobs' with a %s field and submission/start/end times", by);
    rpt__skip(c, title, why);
    return;
  }
  /* The split values (at most 4), from replication 0. */
  const char *split = strcmp(by, "policy") ? NULL : rpt_table_pick_field(c->f, MKT_TABLE_JOBS, names_split);
  char splits[4][64];
  unsigned nsplit = 0;
  if (split) {
    char *sv = NULL;
    size_t w, n;
    if (rpt_table_str(c->f, 0, MKT_TABLE_JOBS, split, &sv, &w, &n)) {
      rpt__hard(c, SIM_EFORMAT);
      return;
    }
    for (size_t i = 0; i < n; i++) {
      unsigned k;
      for (k = 0; k < nsplit && strcmp(splits[k], sv + i * w); k++) {}
      if (k == nsplit && nsplit < 4) snprintf(splits[nsplit++], 64, "%s", sv + i * w);
    }
    free(sv);
  }
  for (unsigned sp = 0; sp < (split ? nsplit : 1); sp++) {
    rpt__groups gw = {0}, gc = {0};
    const char *sv = split ? splits[sp] : NULL;
    if (has_w && rpt__group(c, MKT_TABLE_JOBS, cat, split, sv, RPT_V_WAIT, NULL, &jf, &gw)) return;
    if (has_c && rpt__group(c, MKT_TABLE_JOBS, cat, split, sv, RPT_V_COMPLETION, NULL, &jf, &gc)) {
      rpt__groups_free(&gw);
      return;
    }
    FILE *g;
    size_t len;
    char *body;
    g = rpt__body_open(&body, &len);
    if (!g) {
      rpt__groups_free(&gw);
      rpt__groups_free(&gc);
      return;
    }
    char sub[160] = "";
    if (sv) snprintf(sub, sizeof sub, ", %s %s", split, sv);
    char mt[400];
    snprintf(mt, sizeof mt,
             "Jobs per %s%s, all %d replication%s pooled (curves end below 1 for jobs that never started / finished)",
             by, sub, rpt_nreps(c->f), rpt_nreps(c->f) == 1 ? "" : "s");
    fprintf(g, "set multiplot layout 1,%d title ", has_w + has_c);
    rpt__gp_str(g, mt);
    fputc('\n', g);
    /* the legend under the panels: inside, it covered the curves' ends */
    fputs("set key outside below center horizontal maxrows 3 samplen 2\nset bmargin 7\n", g);
    for (int panel = 0; panel < 2; panel++) {
      rpt__groups *gr = panel ? &gc : &gw;
      if (!(panel ? has_c : has_w)) continue;
      unsigned keep[64], n = rpt__top(gr, keep);
      const char *tu;
      double div = rpt__page_time(c->f, &tu);
      for (unsigned i = 0; i < n; i++) {
        char bn[32];
        snprintf(bn, sizeof bn, "%c%u", panel ? 'c' : 'w', i);
        rpt__ecdf_block(g, bn, gr->vals[keep[i]], gr->count[keep[i]], RPT_CDF_FLOOR_S / div, div);
      }
      rpt__time_tics(g, rpt_end_time(c->f), div);
      /* a short label (the floor is in the caption): the long one was cut at the panel's edge */
      fprintf(g, "set title '%s'\nset xlabel '%s (%s, log scale)'\nset ylabel 'fraction of jobs'\n",
              panel ? "Completion time (submit to finish)" : "Wait (submit to first start)",
              panel ? "completion time" : "wait", !strcmp(tu, "h") ? "hours" : "days");
      fputs("plot ", g);
      for (unsigned i = 0; i < n; i++) {
        char lab[96];
        size_t fin = 0; /* a group none of whose jobs has this time draws nothing: not in the legend */
        for (size_t j = 0; j < gr->count[keep[i]]; j++) fin += isfinite(gr->vals[keep[i]][j]) != 0;
        snprintf(lab, sizeof lab, "%s (n=%zu)", gr->cats[keep[i]], gr->count[keep[i]]);
        fprintf(g, "%s$%c%u using 1:2 with steps lt %u ", i ? ", " : "", panel ? 'c' : 'w', i, i + 1);
        if (fin) {
          fputs("title ", g);
          rpt__gp_str(g, lab);
        } else
          fputs("notitle", g);
      }
      fputc('\n', g);
    }
    fclose(g);
    rpt__groups_free(&gw);
    rpt__groups_free(&gc);
    char cap[256], fname[128], ftitle[300];
    snprintf(cap, sizeof cap,
             "Empirical CDFs of the time from submission to first start and to completion, per job %s%s; times under "
             "%.3g %s are drawn at %.3g.",
             by, sub, RPT_CDF_FLOOR_S / 3600.0, "h", RPT_CDF_FLOOR_S / 3600.0);
    if (sv) {
      snprintf(fname, sizeof fname, "%s_%s", name, sv);
      for (char *p = fname; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '_')) *p = '_';
      snprintf(ftitle, sizeof ftitle, "%s (%s %s)", title, split, sv);
    } else {
      snprintf(fname, sizeof fname, "%s", name);
      snprintf(ftitle, sizeof ftitle, "%s", title);
    }
    rpt__emit(c, fname, ftitle, cap, 600, body);
  }
}

/* 1 when the run compared policies: some job class ran under more than one policy (every class
 * under each, market.compare_policies), or the jobs have no class. 0 when each class has its one
 * policy (scenarios/default.cfg: training checkpoints, inference does not): a split by policy is
 * then the split by class (jobs.png), not a policy's effect; it is skipped with that reason. */
static int rpt__policies_compared(rpt__ctx *c) {
  const char *names_cls[] = {"class", "cls", NULL};
  const char *cls = rpt_table_pick_field(c->f, MKT_TABLE_JOBS, names_cls);
  if (!cls) return 1;
  char *cs = NULL, *ps = NULL;
  size_t w, wp, n, n2;
  int mixed = 0;
  if (rpt_table_str(c->f, 0, MKT_TABLE_JOBS, cls, &cs, &w, &n) ||
      rpt_table_str(c->f, 0, MKT_TABLE_JOBS, "policy", &ps, &wp, &n2))
    mixed = 1; /* unreadable here: the figure's own reading reports it */
  for (size_t i = 0; !mixed && i < n && i < n2; i++)
    for (size_t j = 0; j < i && !mixed; j++)
      if (!strcmp(cs + i * w, cs + j * w) && strcmp(ps + i * wp, ps + j * wp))
        mixed = 1;
      else if (!strcmp(cs + i * w, cs + j * w))
        break; /* the first row of its class: compared with that one only */
  free(cs);
  free(ps);
  if (!mixed)
    rpt__skip(c, "Job wait and completion time per fault-tolerance policy",
              "each job class ran under one policy (the run compared none: market.compare_policies): a split by "
              "policy would be the split by class, drawn in jobs.png");
  return mixed;
}

/* ---- figure: a sample of provider availability timelines ------------------------------------- */

static const char *rpt__state_colour(const char *s, unsigned i) {
  /* Fixed Okabe-Ito colours for the market's states, so every report reads the same. */
  if (!strcmp(s, "rented")) return "#009E73";
  if (!strcmp(s, "idle")) return "#56B4E9";
  if (!strcmp(s, "owner")) return "#E69F00";
  if (!strcmp(s, "down")) return "#D55E00";
  return rpt_colour(i + 4);
}

static void rpt__fig_timelines(rpt__ctx *c) {
  const char *title = "Provider availability timelines (sample)";
  const char *need[] = {"provider", "start_s", "end_s", "state", NULL};
  if (!rpt_has_table(c->f, MKT_TABLE_AVAILABILITY, need)) {
    rpt__skip(c, title, "no table 'availability' with fields provider, start_s, end_s, state");
    return;
  }
  double *pid = NULL, *t0 = NULL, *t1 = NULL;
  char *st = NULL;
  size_t n, n2, w;
  int rc = rpt_table_num(c->f, 0, MKT_TABLE_AVAILABILITY, "provider", &pid, &n);
  if (!rc) rc = rpt_table_num(c->f, 0, MKT_TABLE_AVAILABILITY, "start_s", &t0, &n2);
  if (!rc) rc = rpt_table_num(c->f, 0, MKT_TABLE_AVAILABILITY, "end_s", &t1, &n2);
  if (!rc) rc = rpt_table_str(c->f, 0, MKT_TABLE_AVAILABILITY, "state", &st, &w, &n2);
  if (rc) {
    rpt__hard(c, rc);
    goto done;
  }
  if (!n) {
    rpt__skip(c, title, "table 'availability' is empty in replication 0");
    goto done;
  }
  unsigned maxp = c->opt->max_timelines ? c->opt->max_timelines : 16;
  double ids[64];
  unsigned nid = 0;
  char states[8][64];
  unsigned nst = 0;
  for (size_t i = 0; i < n; i++) { /* the smallest `maxp` provider ids */
    unsigned k;
    for (k = 0; k < nid && ids[k] != pid[i]; k++) {}
    if (k < nid) continue;
    if (nid < maxp && nid < 64)
      ids[nid++] = pid[i];
    else {
      unsigned big = 0;
      for (unsigned j = 1; j < nid; j++)
        if (ids[j] > ids[big]) big = j;
      if (pid[i] < ids[big]) ids[big] = pid[i];
    }
  }
  qsort(ids, nid, sizeof *ids, rpt__cmp_double);
  for (size_t i = 0; i < n; i++) {
    unsigned k;
    for (k = 0; k < nst && strcmp(states[k], st + i * w); k++) {}
    if (k == nst && nst < 8) snprintf(states[nst++], 64, "%s", st + i * w);
  }
  /* Persona of each sampled provider, when the providers table says it. */
  char *pers = NULL;
  double *pids = NULL;
  size_t np = 0, pw = 0, np2;
  const char *pf[] = {"id", "persona", NULL};
  if (rpt_has_table(c->f, MKT_TABLE_PROVIDERS, pf) &&
      (rpt_table_str(c->f, 0, MKT_TABLE_PROVIDERS, "persona", &pers, &pw, &np) ||
       rpt_table_num(c->f, 0, MKT_TABLE_PROVIDERS, "id", &pids, &np2))) {
    free(pers);
    pers = NULL;
  }
  const char *xl;
  double div = rpt__time_div(c, &xl);
  FILE *g;
  size_t len;
  char *body;
  g = rpt__body_open(&body, &len);
  if (!g) goto done;
  size_t shown[8] = {0}; /* spans per state in the sample: a state with none is not in the legend */
  for (unsigned s = 0; s < nst; s++) {
    fprintf(g, "$s%u << EOD\n", s);
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
      if (strcmp(st + i * w, states[s])) continue;
      unsigned k;
      for (k = 0; k < nid && ids[k] != pid[i]; k++) {}
      if (k == nid) continue;
      double a = t0[i] / div, b = (isfinite(t1[i]) ? t1[i] : rpt_end_time(c->f)) / div;
      fprintf(g, "%.9g %u %.9g %.9g %.3f %.3f\n", (a + b) / 2, k, a, b, k - 0.38, k + 0.38);
      m++;
    }
    if (!m) fputs("NaN NaN NaN NaN NaN NaN\n", g);
    fputs("EOD\n", g);
    shown[s] = m;
  }
  fprintf(g,
          "set title 'Replication 0: the first %u providers, state over time'\nset xlabel '%s'\n"
          "set ylabel 'provider'\nset yrange [-0.6:%u.6] reverse\nset xrange [0:%.9g]\nset grid noytics\nset ytics (",
          nid, xl, nid ? nid - 1 : 0, rpt_end_time(c->f) / div);
  for (unsigned k = 0; k < nid; k++) {
    char lab[96];
    snprintf(lab, sizeof lab, "%.0f", ids[k]);
    for (size_t j = 0; pers && j < np; j++)
      if (pids[j] == ids[k]) snprintf(lab, sizeof lab, "%.0f (%s)", ids[k], pers + j * pw);
    fputs(k ? ", " : "", g);
    rpt__gp_str(g, lab);
    fprintf(g, " %u", k);
  }
  fputs(")\nplot ", g);
  int first = 1;
  for (unsigned s = 0; s < nst; s++) {
    if (!shown[s]) continue;
    fprintf(g, "%s$s%u using 1:2:3:4:5:6 with boxxyerror fs solid 1.0 noborder lc rgb '%s' title ", first ? "" : ", ",
            s, rpt__state_colour(states[s], s));
    rpt__gp_str(g, states[s]);
    first = 0;
  }
  if (first) fputs("NaN notitle", g); /* no span of any state in the sample */
  fputc('\n', g);
  fclose(g);
  free(pers);
  free(pids);
  rpt__emit(c, "availability", title,
            "What a sample of providers (replication 0) did over time: each bar is a span in one state.", 600, body);
done:
  free(pid);
  free(t0);
  free(t1);
  free(st);
}

/* A quantity in words for a title or an axis: the file's label of its first metric that has one
 * (/metrics `labels`), else its name made readable (rpt_metric_words); " (UNIT)" when unit is
 * given and not "1". */
static void rpt__qwords(rpt_file *f, const char *quantity, const char *unit, char *buf, size_t len) {
  const char *label = "";
  char q[64], d[64], v[64];
  for (unsigned k = 0; f && k < rpt_nmetrics(f) && !label[0]; k++) {
    rpt_metric_split(rpt_metric_name(f, k), q, d, v);
    if (!strcmp(q, quantity)) label = rpt_metric_label(f, k);
  }
  rpt_metric_words(quantity, label, unit, buf, len);
}

/* ---- figure: metrics of one dimension side by side (fault-tolerance policies) ----------------- */

/* Metrics named quantity.DIM.value (or quantity.DIM.value.DIM2.value2, e.g. the fault-tolerance
 * model's goodput.policy.checkpoint.churn.high): one panel per quantity, one group of bars per
 * value of DIM, and within a group one coloured bar per value of DIM2. Four panels per figure;
 * more quantities make more figures (name, name_2, ...). */
#define RPT_BAR_PANELS 4
#define RPT_BAR_FIGS 6
static void rpt__fig_dim_bars(rpt__ctx *c, const char *dim, const char *name, const char *title) {
  unsigned nm = rpt_nmetrics(c->f);
  char q[64], d[64], v[64];
  char(*quants)[64] = calloc(RPT_BAR_PANELS * RPT_BAR_FIGS, 64), (*vals)[64] = calloc(RPT_MAX_SERIES, 64),
  (*subs)[64] = calloc(6, 64);
  char dim2[64] = "";
  unsigned nq = 0, nv = 0, ns = 0;
  for (unsigned k = 0; quants && vals && subs && k < nm; k++) {
    rpt_metric_split(rpt_metric_name(c->f, k), q, d, v);
    if (strcmp(d, dim)) continue;
    char v1[64], d2[64], v2[64];
    rpt_metric_split(v, v1, d2, v2); /* "checkpoint.churn.high" -> checkpoint, churn, high */
    unsigned i;
    for (i = 0; i < nq && strcmp(quants[i], q); i++) {}
    if (i == nq && nq < RPT_BAR_PANELS * RPT_BAR_FIGS) snprintf(quants[nq++], 64, "%s", q);
    for (i = 0; i < nv && strcmp(vals[i], v1); i++) {}
    if (i == nv && nv < RPT_MAX_SERIES) snprintf(vals[nv++], 64, "%s", v1);
    if (d2[0]) {
      if (!dim2[0]) snprintf(dim2, sizeof dim2, "%s", d2);
      for (i = 0; i < ns && strcmp(subs[i], v2); i++) {}
      if (i == ns && ns < 6 && !strcmp(d2, dim2)) snprintf(subs[ns++], 64, "%s", v2);
    }
  }
  if (!nq) {
    char why[128];
    snprintf(why, sizeof why, "no metrics named quantity.%s.value (the run did not compare them)", dim);
    rpt__skip(c, title, why);
    free(quants);
    free(vals);
    free(subs);
    return;
  }
  /* A quantity that is the same for every value and replication, or a pass/fail check, is a
   * table line, not a panel. */
  int reps = rpt_nreps(c->f);
  const char *pu;
  double page_s = rpt__page_time(c->f, &pu);
  double *all = malloc(((size_t)nm * (size_t)reps + 1) * sizeof *all);
  unsigned nkept = 0;
  for (unsigned i = 0; all && i < nq; i++) {
    size_t na = 0;
    int check = 1;
    const char *unit = "";
    for (unsigned k = 0; k < nm; k++) {
      rpt_metric_split(rpt_metric_name(c->f, k), q, d, v);
      if (strcmp(d, dim) || strcmp(q, quants[i])) continue;
      for (int r = 0; r < reps; r++) all[na++] = rpt_metric_values(c->f)[(size_t)r * nm + k];
      check &= rpt_metric_is_check(rpt_metric_name(c->f, k), rpt_metric_values(c->f) + k, (size_t)reps, nm);
      unit = rpt_metric_unit(c->f, k);
    }
    if (check) {
      size_t fails = 0;
      for (size_t j = 0; j < na; j++) fails += all[j] == 0;
      if (fails)
        rpt__line(c, "%s per %s: a pass/fail check, FAILED in %zu of %zu runs (every %s, every replication)", quants[i],
                  dim, fails, na, dim);
      else
        rpt__line(c, "%s per %s: a pass/fail check, passed in all %zu runs (every %s, every replication)", quants[i],
                  dim, na, dim);
      continue;
    }
    if (rpt__constant(all, na, 1)) {
      const char *shown;
      char val[96];
      double kf = rpt__shown(unit, page_s, pu, &shown);
      rpt__val_unit(val, sizeof val, all[0] * kf, shown);
      rpt__line(c, "%s per %s: %s for every %s and replication", quants[i], dim, val, dim);
      continue;
    }
    if (nkept != i) memcpy(quants[nkept], quants[i], 64);
    nkept++;
  }
  free(all);
  nq = nkept;
  unsigned nsub = ns ? ns : 1;
  double *tmp = malloc((size_t)rpt_nreps(c->f) * sizeof *tmp);
  for (unsigned fig = 0; tmp && fig * RPT_BAR_PANELS < nq; fig++) {
    unsigned q0 = fig * RPT_BAR_PANELS, q1 = q0 + RPT_BAR_PANELS < nq ? q0 + RPT_BAR_PANELS : nq;
    FILE *g;
    size_t len;
    char *body;
    g = rpt__body_open(&body, &len);
    if (!g) break;
    unsigned np = q1 - q0, cols = np == 1 ? 1 : 2, rows = (np + cols - 1) / cols;
    char mt[400];
    snprintf(mt, sizeof mt, "Per %s%s%s: mean over %d replication%s, whiskers: 95%% confidence interval", dim,
             ns ? " and " : "", ns ? dim2 : "", rpt_nreps(c->f), rpt_nreps(c->f) == 1 ? "" : "s");
    fprintf(g, "set multiplot layout %u,%u title ", rows, cols);
    rpt__gp_str(g, mt);
    fputc('\n', g);
    double w = 0.8 / nsub; /* bar width within a group */
    fprintf(g, "set boxwidth %.4f absolute\nset style fill solid 0.85 border -1\nset xtics (", w * 0.9);
    for (unsigned j = 0; j < nv; j++) {
      fputs(j ? ", " : "", g);
      rpt__gp_str(g, vals[j]);
      fprintf(g, " %u", j + 1);
    }
    fprintf(g, ")%s\nset xrange [0.4:%u.6]\n", nv > (cols == 2 ? 4u : 8u) ? " rotate by -25" : "", nv);
    fputs("set offsets 0, 0, graph 0.2, 0\n", g); /* headroom for the legend above the bars */
    for (unsigned i = q0; i < q1; i++) {
      const char *unit = "";
      double minv = 0, maxv = 0;
      int subany[6] = {0}; /* a DIM2 value with no value of this quantity: not in the legend */
      /* First pass: the unit and the range (durations are shown in the page's time unit). */
      for (int pass = 0; pass < 2; pass++) {
        const char *shown;
        double conv = rpt__shown(unit, page_s, pu, &shown);
        for (unsigned s = 0; s < nsub; s++) {
          if (pass == 1) fprintf(g, "$q%u_%u << EOD\n", i, s);
          for (unsigned j = 0; j < nv; j++) {
            char full[256];
            if (ns)
              snprintf(full, sizeof full, "%s.%s.%s.%s.%s", quants[i], dim, vals[j], dim2, subs[s]);
            else
              snprintf(full, sizeof full, "%s.%s.%s", quants[i], dim, vals[j]);
            int k = rpt_metric_find(c->f, full);
            rpt_ci ci = {NAN, NAN, NAN, NAN, 0};
            if (k >= 0) {
              rpt_ci_t(rpt_metric_values(c->f) + k, (size_t)rpt_nreps(c->f), nm, &ci);
              unit = rpt_metric_unit(c->f, (unsigned)k);
              double lo, hi; /* whiskers within what the quantity can be */
              rpt_metric_range(full, unit, &lo, &hi);
              rpt_ci_clip(&ci, lo, hi);
              if (ci.mean < minv) minv = ci.mean;
              if (ci.mean > maxv) maxv = ci.mean;
            }
            if (pass == 1) {
              subany[s] |= isfinite(ci.mean) != 0;
              double x = j + 1 + (s - (nsub - 1) / 2.0) * w;
              fprintf(g, "%.4f %.9g %.9g %.9g %u\n", x, ci.mean * conv, (isfinite(ci.lo) ? ci.lo : ci.mean) * conv,
                      (isfinite(ci.hi) ? ci.hi : ci.mean) * conv, ns ? s + 1 : j + 1);
            }
          }
          if (pass == 1) fputs("EOD\n", g);
        }
        if (pass == 1) {
          char yl[128];
          char qt[160];
          rpt__qwords(c->f, quants[i], NULL, qt, sizeof qt);
          rpt__qwords(c->f, quants[i], shown, yl, sizeof yl);
          fputs("set title ", g);
          rpt__gp_str(g, qt);
          fputs("\nset ylabel ", g);
          rpt__gp_str(g, yl);
          /* bars start at 0 unless a mean is negative */
          fprintf(g, "\nset yrange [%s:*]\n", minv >= 0 ? "0" : "*");
        }
      }
      if (ns && i == q0)
        fputs("set key inside right top horizontal samplen 1.5 opaque box\n", g);
      else
        fputs("set key off\n", g);
      fputs("plot ", g);
      for (unsigned s = 0; s < nsub; s++) {
        if (ns) {
          char lab[160];
          snprintf(lab, sizeof lab, "%s %s", dim2, subs[s]);
          fprintf(g, "%s$q%u_%u using 1:2 with boxes lt %u ", s ? ", " : "", i, s, s + 1);
          if (subany[s]) {
            fputs("title ", g);
            rpt__gp_str(g, lab);
          } else
            fputs("notitle", g);
        } else {
          fprintf(g, "$q%u_%u using 1:2:5 with boxes lc variable notitle", i, s);
        }
        fprintf(g, ", $q%u_%u using 1:2:3:4 with yerrorbars lc rgb 'black' dt 1 pt 7 ps 0 lw 1.2 notitle", i, s);
      }
      fputc('\n', g);
    }
    fclose(g);
    char fname[96], ftitle[300], cap[300];
    if (fig)
      snprintf(fname, sizeof fname, "%s_%u", name, fig + 1);
    else
      snprintf(fname, sizeof fname, "%s", name);
    if (nq > RPT_BAR_PANELS)
      snprintf(ftitle, sizeof ftitle, "%s (%u of %u)", title, fig + 1, (nq + RPT_BAR_PANELS - 1) / RPT_BAR_PANELS);
    else
      snprintf(ftitle, sizeof ftitle, "%s", title);
    snprintf(cap, sizeof cap,
             "Every metric named quantity.%s.value%s, one panel per quantity, one group of bars per %s%s%s.", dim,
             ns ? ".DIM.value" : "", dim, ns ? ", one colour per " : "", ns ? dim2 : "");
    rpt__emit(c, fname, ftitle, cap, rows > 1 ? 800 : 500, body);
  }
  free(tmp);
  free(quants);
  free(vals);
  free(subs);
}

/* ---- sweep report ----------------------------------------------------------------------------- */

/* A grid's axes, with the units of its numeric keys from the first point's results file (its
 * /meta/effective names each key's unit); without that file, the keys have no unit. */
static int rpt__sweep_grid(rpt__ctx *c, const rpt_sweep *s, rpt__grid *g) {
  char *eff = NULL, pf[4096];
  /* only the sweep's own folder (NAME.points/...): a file that names another path is not followed */
  if (s->nkeys >= 2 && s->npoints && s->point_files[0][0] != '/' && !strstr(s->point_files[0], "..")) {
    const char *sp = rpt_path(c->f), *slash = strrchr(sp, '/');
    snprintf(pf, sizeof pf, "%.*s%s", slash ? (int)(slash - sp + 1) : 0, sp, s->point_files[0]);
    rpt_file *pfile;
    char err[RPT_ERRLEN];
    if (!rpt_open(pf, &pfile, err, sizeof err)) {
      if (rpt_meta_string(pfile, "effective", &eff)) eff = NULL;
      rpt_close(pfile);
    }
  }
  int rc = rpt__grid_make(s, eff, g);
  free(eff);
  return rc;
}

static int rpt__sweep_figs(rpt__ctx *c, const rpt_sweep *s) {
  unsigned nm = s->nmetrics, np = s->npoints;
  int numeric = 1;
  for (unsigned p = 0; p < np; p++) numeric &= isfinite(s->x[p]);
  /* One figure per quantity: its dimensionless metric alone, or one line per dimension value (a
   * grid of several keys: one figure per quantity and key, rpt_grid.c). */
  char(*done)[130] = calloc(nm ? nm : 1, 130);
  double *tmp = malloc((size_t)s->reps * sizeof *tmp);
  rpt__grid grid;
  if (!done || !tmp || rpt__sweep_grid(c, s, &grid)) {
    free(done);
    free(tmp);
    return SIM_ENOMEM;
  }
  rpt__exp_sink sink = {c, rpt__exp_emit, rpt__exp_skip};
  unsigned ndone = 0;
  for (unsigned k0 = 0; k0 < nm; k0++) {
    char q[64], d[64], v[64], key[130];
    rpt_metric_split(s->names[k0], q, d, v);
    snprintf(key, sizeof key, "%s.%s", q, d);
    unsigned i;
    for (i = 0; i < ndone && strcmp(done[i], key); i++) {}
    if (i < ndone) continue;
    snprintf(done[ndone++], 130, "%s", key);
    unsigned ks[RPT_MAX_SERIES], nk = 0;
    for (unsigned k = k0; k < nm && nk < RPT_MAX_SERIES; k++) {
      char q2[64], d2[64], v2[64];
      rpt_metric_split(s->names[k], q2, d2, v2);
      if (!strcmp(q2, q) && !strcmp(d2, d)) ks[nk++] = k;
    }
    /* A pass/fail check, or a quantity that does not move with the key (every point, every
     * replication, every dimension value the same: all zeros, say), is a table line. */
    int check = 1, constant = 1;
    size_t fails = 0, runs = 0;
    double first = nk ? s->values[ks[0]] : NAN; /* nk >= 1: k0 is one of them */
    for (unsigned j = 0; j < nk; j++) {
      for (unsigned p = 0; p < np; p++) {
        const double *row = s->values + (size_t)p * s->reps * nm + ks[j];
        check &= rpt_metric_is_check(s->names[ks[j]], row, (size_t)s->reps, nm);
        for (int r = 0; r < s->reps; r++) {
          double x = row[(size_t)r * nm];
          constant &= x == first || (x != x && first != first);
          fails += x == 0;
          runs++;
        }
      }
    }
    const char *shown;
    double conv = rpt__shown(s->units[k0], 3600.0, "h", &shown);
    char what[200];
    char every[80] = "";
    snprintf(what, sizeof what, "%s%s%s", q, d[0] ? " per " : "", d);
    if (d[0]) snprintf(every, sizeof every, " for every %s,", d);
    if (check) {
      if (fails)
        rpt__line(c, "%s: a pass/fail check, FAILED in %zu of %zu runs (%u points x %d replications)", what, fails,
                  runs, np, s->reps);
      else
        rpt__line(c, "%s: a pass/fail check, passed in all %zu runs (%u points x %d replications)", what, runs, np,
                  s->reps);
      continue;
    }
    if (constant) {
      char val[96];
      rpt__val_unit(val, sizeof val, first * conv, shown);
      rpt__line(c, "%s: %s%s at every value of %s (%d replications each)", what, val, every, s->param, s->reps);
      continue;
    }
    if (grid.nkeys) {
      rpt__grid_figs(s, &grid, ks, nk, q, d, conv, shown, &sink);
      continue;
    }
    FILE *g;
    size_t len;
    char *body;
    g = rpt__body_open(&body, &len);
    if (!g) break;
    double ylo = INFINITY, yhi = -INFINITY;
    for (unsigned j = 0; j < nk; j++) {
      fprintf(g, "$m%u << EOD\n", j);
      double rlo, rhi; /* bands within what the quantity can be */
      rpt_metric_range(s->names[ks[j]], s->units[ks[j]], &rlo, &rhi);
      for (unsigned p = 0; p < np; p++) {
        rpt_ci ci;
        for (int r = 0; r < s->reps; r++) tmp[r] = s->values[((size_t)p * s->reps + r) * nm + ks[j]];
        rpt_ci_t(tmp, (size_t)s->reps, 1, &ci);
        rpt_ci_clip(&ci, rlo, rhi);
        ci.mean *= conv, ci.lo *= conv, ci.hi *= conv;
        if (isfinite(ci.mean)) {
          ylo = fmin(ylo, isfinite(ci.lo) ? ci.lo : ci.mean);
          yhi = fmax(yhi, isfinite(ci.hi) ? ci.hi : ci.mean);
        }
        /* categories: the series side by side around each category, so their whiskers do not hide each other */
        double xc = numeric ? s->x[p] : (double)p + ((double)j - (nk - 1) / 2.0) * (nk > 1 ? 0.5 / nk : 0);
        fprintf(g, "%.9g %.9g %.9g %.9g\n", xc, ci.mean, isfinite(ci.lo) ? ci.lo : ci.mean,
                isfinite(ci.hi) ? ci.hi : ci.mean);
      }
      fputs("EOD\n", g);
    }
    char t[480], yl[160], qw[160];
    rpt__qwords(NULL, q, NULL, qw, sizeof qw); /* a sweep file has no labels: the name made readable */
    snprintf(t, sizeof t, "%s%s%s against %s (mean of %d replication%s%s)", qw, d[0] ? " per " : "", d, s->param,
             s->reps, s->reps == 1 ? "" : "s",
             s->reps < 2 ? ""
             : numeric   ? ", shaded: 95% band"
                         : ", whiskers: 95% CI");
    rpt__qwords(NULL, q, shown, yl, sizeof yl);
    fputs("set title ", g);
    rpt__gp_str(g, t);
    fputs("\nset xlabel ", g);
    rpt__gp_str(g, s->param);
    fputs("\nset ylabel ", g);
    rpt__gp_str(g, yl);
    fputc('\n', g);
    if (!numeric) {
      fputs("set xtics (", g);
      for (unsigned p = 0; p < np; p++) {
        fputs(p ? ", " : "", g);
        rpt__gp_str(g, s->labels[p]);
        fprintf(g, " %u", p);
      }
      fprintf(g, ")\nset xrange [-0.3:%u.3]\n", np ? np - 1 : 0);
    }
    if (!d[0]) fputs("set key off\n", g);                        /* one line: the title says what it is */
    if (isfinite(ylo) && yhi - ylo <= 1e-12 * (1 + fabs(yhi))) { /* a constant: centre it, do not collapse */
      double pad = fabs(yhi) > 0 ? 0.1 * fabs(yhi) : 1;
      fprintf(g, "set yrange [%.9g:%.9g]\n", ylo - pad, yhi + pad);
    }
    fputs("plot ", g);
    for (unsigned j = 0; j < nk; j++) {
      /* A numeric key: lines with a band. Categories: points with whiskers (no line between them). */
      if (numeric && s->reps > 1)
        fprintf(g, "$m%u using 1:3:4 with filledcurves fs transparent solid 0.18 noborder lt %u notitle, ", j, j + 1);
      if (numeric)
        fprintf(g, "$m%u using 1:2 with linespoints lt %u title ", j, j + 1);
      else
        fprintf(g, "$m%u using 1:2:3:4 with yerrorbars lt %u pt 7 ps 1.2 title ", j, j + 1);
      rpt__gp_str(g, d[0] ? strchr(strchr(s->names[ks[j]], '.') + 1, '.') + 1 : q);
      fputs(j + 1 < nk ? ", " : "\n", g);
    }
    fclose(g);
    char name[160], cap[512];
    snprintf(name, sizeof name, "sweep_%s%s%s", q, d[0] ? "_by_" : "", d);
    for (char *p = name; *p; p++)
      if (!(*p == '_' || *p == '-' || (*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z')))
        *p = '_';
    snprintf(cap, sizeof cap, "%s against the swept key %s, with the 95%% confidence band across replications.", q,
             s->param);
    rpt__emit(c, name, t, cap, 600, body);
  }
  if (grid.nkeys && !grid.nvarying) rpt__skip(c, "sweep figures", "no key of the grid takes two values or more");
  rpt__grid_free(&grid);
  free(done);
  free(tmp);
  return 0;
}

/* One cell of the sweep's tables, for the page and summary.md alike: metric k at point p over the
 * replications (tmp: reps doubles), its 95% interval clipped to [rlo, rhi], formatted in the shown
 * unit (conv). */
static void rpt__sweep_cell(const rpt_sweep *s, unsigned p, unsigned k, double rlo, double rhi, double conv,
                            double *tmp, rpt_ci *ci, char m[32], char lo[32], char hi[32]) {
  for (int r = 0; r < s->reps; r++) tmp[r] = s->values[((size_t)p * s->reps + r) * s->nmetrics + k];
  rpt_ci_t(tmp, (size_t)s->reps, 1, ci);
  rpt_ci_clip(ci, rlo, rhi);
  rpt__fmt(m, 32, ci->mean * conv);
  rpt__fmt(lo, 32, ci->lo * conv);
  rpt__fmt(hi, 32, ci->hi * conv);
}

/* The sweep's table on the page: at most RPT_SWEEP_COLS points per table, the key named once above
 * its values, cells that do not wrap (issue 49.13: one table of every point, each header
 * "key = value", was unreadable at 1400 px). */
#define RPT_SWEEP_COLS 5
static void rpt__sweep_html(const rpt_sweep *s, double *tmp, FILE *html) {
  unsigned nm = s->nmetrics, np = s->npoints;
  for (unsigned p0 = 0; p0 < np || p0 == 0; p0 += RPT_SWEEP_COLS) {
    unsigned p1 = p0 + RPT_SWEEP_COLS < np ? p0 + RPT_SWEEP_COLS : np;
    fprintf(html, "<div class=\"wide\"><table class=\"sweep\"><tr><th colspan=\"2\"></th><th colspan=\"%u\">",
            p1 > p0 ? p1 - p0 : 1);
    rpt__html(html, s->param);
    if (np > RPT_SWEEP_COLS) fprintf(html, " (points %u-%u of %u)", p0 + 1, p1, np);
    fputs("</th></tr>\n<tr><th>metric</th><th>unit</th>", html);
    for (unsigned p = p0; p < p1; p++) {
      fputs("<th>", html);
      rpt__html(html, s->labels[p]);
      fputs("</th>", html);
    }
    fputs("</tr>\n", html);
    for (unsigned k = 0; k < nm; k++) {
      const char *shown;
      double conv = rpt__shown(s->units[k], 3600.0, "h", &shown), rlo, rhi;
      rpt_metric_range(s->names[k], s->units[k], &rlo, &rhi);
      fputs("<tr><td>", html);
      rpt__html(html, s->names[k]);
      fputs("</td><td>", html);
      rpt__html(html, shown);
      fputs("</td>", html);
      for (unsigned p = p0; p < p1; p++) {
        rpt_ci ci;
        char m[32], lo[32], hi[32];
        rpt__sweep_cell(s, p, k, rlo, rhi, conv, tmp, &ci, m, lo, hi);
        if (isfinite(ci.lo))
          fprintf(html, "<td>%s <span class=\"ci\">[%s, %s]</span></td>", m, lo, hi);
        else
          fprintf(html, "<td>%s</td>", m);
      }
      fputs("</tr>\n", html);
    }
    fputs("</table></div>\n", html);
    if (!np) break;
  }
}

/* A point named in Markdown: "KEY = value", each key of a grid named ("A = a, B = b"). */
static void rpt__sweep_point_md(FILE *md, const rpt_sweep *s, unsigned p) {
  for (unsigned k = 0; k < (s->nkeys >= 2 ? s->nkeys : 1); k++) {
    fputs(k ? ", " : "", md);
    rpt__md(md, s->nkeys >= 2 ? s->keys[k] : s->param);
    fputs(" = ", md);
    rpt__md(md, s->nkeys >= 2 ? s->key_labels[(size_t)p * s->nkeys + k] : s->labels[p]);
  }
}

static int rpt__sweep_tables(rpt__ctx *c, const rpt_sweep *s, FILE *md, FILE *csv, FILE *html) {
  unsigned nm = s->nmetrics, np = s->npoints;
  double *tmp = malloc((size_t)s->reps * sizeof *tmp);
  if (!tmp) return SIM_ENOMEM;
  fputs("# Sweep of ", md);
  rpt__md(md, s->param);
  fputs("\n\nModel `", md);
  rpt__md(md, s->model);
  fprintf(md,
          "`, %u points, %d replication%s per point. Means with 95%% confidence intervals, clipped to the values each "
          "quantity can take; durations in hours.\n\n",
          np, s->reps, s->reps == 1 ? "" : "s");
  fprintf(md, "| metric | unit |");
  for (unsigned p = 0; p < np; p++) {
    fputc(' ', md);
    rpt__sweep_point_md(md, s, p);
    fputs(" |", md);
  }
  fputs("\n|---|---|", md);
  for (unsigned p = 0; p < np; p++) fputs("---|", md);
  fputs("\n", md);
  { /* the engineer's answer first: the cheapest policy per point, when the sweep compared policies */
    char *cb = NULL, path[4096], tmpn[4120];
    size_t cl = 0;
    FILE *cm = open_memstream(&cb, &cl);
    int rc =
        cm ? rpt__cheapest(s, "spend_per_useful_gpu_h", "total spend per useful GPU-hour", md, html, cm) : SIM_ENOMEM;
    if (cm) fclose(cm);
    if (!rc && cl) {
      snprintf(path, sizeof path, "%s/cheapest_policy.csv", c->opt->outdir);
      FILE *o = rpt__wopen(path, tmpn, sizeof tmpn);
      if (o) fwrite(cb, 1, cl, o);
      if (!o || rpt__wclose(o, tmpn, path)) rc = SIM_EIO;
    }
    free(cb);
    if (rc) {
      free(tmp);
      return rc;
    }
  }
  fputs("param,label,x,metric,unit,mean,sd,ci95_lo,ci95_hi,n\n", csv);
  for (unsigned k = 0; k < nm; k++) {
    const char *shown; /* durations in hours, as in the figures; the CSV keeps the file's unit */
    double conv = rpt__shown(s->units[k], 3600.0, "h", &shown), rlo, rhi;
    rpt_metric_range(s->names[k], s->units[k], &rlo, &rhi);
    fputs("| ", md);
    rpt__md(md, s->names[k]);
    fputs(" | ", md);
    rpt__md(md, shown);
    fputs(" |", md);
    for (unsigned p = 0; p < np; p++) {
      rpt_ci ci;
      char m[32], lo[32], hi[32];
      rpt__sweep_cell(s, p, k, rlo, rhi, conv, tmp, &ci, m, lo, hi);
      fprintf(md, " %s [%s, %s] |", m, lo, hi);
      rpt_csv_field(csv, s->param);
      fputc(',', csv);
      rpt_csv_field(csv, s->labels[p]);
      fprintf(csv, ",%.17g,", s->x[p]);
      rpt_csv_field(csv, s->names[k]);
      fputc(',', csv);
      rpt_csv_field(csv, s->units[k]);
      fprintf(csv, ",%.17g,%.17g,%.17g,%.17g,%d\n", ci.mean, ci.sd, ci.lo, ci.hi, ci.n);
    }
    fputs("\n", md);
  }
  rpt__sweep_html(s, tmp, html);
  fputs("\nPer-point results files (run `spotlab report` on any of them for its own figures):\n\n", md);
  for (unsigned p = 0; p < np; p++) {
    fputs("- ", md);
    rpt__sweep_point_md(md, s, p);
    fputs(": `", md);
    rpt__md(md, s->point_files[p]);
    fputs("`\n", md);
  }
  free(tmp);
  return 0;
}

/* ---- index.html -------------------------------------------------------------------------------- */

/* Written as index.html.tmp, then renamed: never a zero-byte or half index.html. */
static int rpt__index(rpt__ctx *c, const char *tables_html, const char *what) {
  char path[4096], tmp[4120];
  snprintf(path, sizeof path, "%s/index.html", c->opt->outdir);
  snprintf(tmp, sizeof tmp, "%s.tmp", path);
  FILE *o = fopen(tmp, "w");
  if (!o) return SIM_EIO;
  fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>spotlab report</title>\n<style>\n"
        "body{font-family:sans-serif;max-width:1300px;margin:2em auto;padding:0 1em;color:#222}\n"
        "table{border-collapse:collapse;margin:0.5em 0 1.5em;font-size:0.9em}\n"
        "th,td{border:1px solid #ccc;padding:0.25em 0.6em;text-align:left}th{background:#f2f2f2}\n"
        "figure{margin:1.5em 0}img{max-width:100%;border:1px solid #eee}figcaption{color:#555;font-size:0.9em}\n"
        ".note{color:#7a4b00;background:#fff6e0;padding:0.5em}\n"
        ".wide{overflow-x:auto}table.sweep td{white-space:nowrap}table.sweep td:first-child{white-space:normal;"
        "max-width:22em}.ci{color:#666;font-size:0.9em}\n</style></head><body>\n",
        o);
  fputs("<h1>spotlab report</h1>\n<p>", o);
  fputs(what, o);
  fputs("</p>\n", o);
  if (!c->have_gp)
    fputs("<p class=\"note\">gnuplot was not available: the figures were skipped; the tables are complete.</p>\n", o);
  if (c->nfigs) {
    fputs("<h2>Figures</h2>\n<ul>\n", o);
    for (size_t i = 0; i < c->nfigs; i++) {
      fputs("<li><a href=\"#", o);
      rpt__html(o, c->figs[i].name);
      fputs("\">", o);
      rpt__html(o, c->figs[i].title);
      fputs("</a></li>\n", o);
    }
    fputs("</ul>\n", o);
  }
  fputs("<h2>Summary</h2>\n", o);
  fputs(tables_html, o);
  fputs("<p>Files: <a href=\"summary.md\">summary.md</a>, <a href=\"summary.csv\">summary.csv</a>.</p>\n", o);
  for (size_t i = 0; i < c->nfigs; i++) {
    fputs("<figure id=\"", o);
    rpt__html(o, c->figs[i].name);
    fputs("\"><h3>", o);
    rpt__html(o, c->figs[i].title);
    fputs("</h3><a href=\"", o);
    rpt__html(o, c->figs[i].name);
    fputs(".svg\"><img src=\"", o);
    rpt__html(o, c->figs[i].name);
    fputs(".png\" alt=\"", o);
    rpt__html(o, c->figs[i].title);
    fputs("\"></a><figcaption>", o);
    rpt__html(o, c->figs[i].caption);
    fputs("</figcaption></figure>\n", o);
  }
  if (c->out->nlines) { /* constant series and checks: a line each, not a figure */
    fputs("<h2>Constant series and checks</h2>\n<p>Not drawn: each is constant, or a pass/fail check.</p>\n"
          "<table class=\"lines\"><tr><th>what</th><th>value</th></tr>\n",
          o);
    for (size_t i = 0; i < c->out->nlines; i++) {
      const char *l = c->out->lines[i], *colon = strstr(l, ": ");
      fputs("<tr><td>", o);
      if (colon) {
        char what[512];
        snprintf(what, sizeof what, "%.*s", (int)(colon - l), l);
        rpt__html(o, what);
        fputs("</td><td>", o);
        rpt__html(o, colon + 2);
      } else {
        rpt__html(o, l);
        fputs("</td><td>", o);
      }
      fputs("</td></tr>\n", o);
    }
    fputs("</table>\n", o);
  }
  if (c->out->nskipped) {
    fputs("<h2>Figures not drawn</h2>\n<ul>\n", o);
    for (size_t i = 0; i < c->out->nskipped; i++) {
      fputs("<li>", o);
      rpt__html(o, c->out->skipped[i]);
      fputs("</li>\n", o);
    }
    fputs("</ul>\n", o);
  }
  fputs("</body></html>\n", o);
  int bad = ferror(o);
  bad |= fclose(o) != 0;
  if (!bad) sim_failpoint("report");
  if (bad || rename(tmp, path) != 0) {
    int e = errno;
    unlink(tmp);
    errno = e ? e : EIO;
    return SIM_EIO;
  }
  return 0;
}

/* ---- the report --------------------------------------------------------------------------------- */

void rpt_outcome_free(rpt_outcome *o) {
  for (size_t i = 0; i < o->nfiles; i++) free(o->files[i]);
  for (size_t i = 0; i < o->nskipped; i++) free(o->skipped[i]);
  for (size_t i = 0; i < o->nlines; i++) free(o->lines[i]);
  free(o->files);
  free(o->skipped);
  free(o->lines);
  memset(o, 0, sizeof *o);
}

static int rpt__mkdir(const char *dir) {
  char buf[4096];
  snprintf(buf, sizeof buf, "%s", dir);
  for (char *p = buf + 1; *p; p++)
    if (*p == '/') {
      *p = 0;
      if (mkdir(buf, 0777) && errno != EEXIST) return -1;
      *p = '/';
    }
  if (mkdir(buf, 0777) && errno != EEXIST) return -1;
  struct stat st;
  return stat(buf, &st) == 0 && S_ISDIR(st.st_mode) ? 0 : -1;
}

/* summary.md and summary.csv of a sweep or an experiment, each written whole or not at all
 * (rpt__wopen), by `tables`; listed in c->out and said. 0, or SIM_EIO with the reason in err. */
typedef int (*rpt__tables_fn)(rpt__ctx *c, const void *what, FILE *md, FILE *csv, FILE *html);
static int rpt__sweep_tables_cb(rpt__ctx *c, const void *s, FILE *md, FILE *csv, FILE *html) {
  return rpt__sweep_tables(c, s, md, csv, html);
}
static int rpt__exp_tables_cb(rpt__ctx *c, const void *e, FILE *md, FILE *csv, FILE *html) {
  (void)c;
  return rpt__exp_tables(e, md, csv, html);
}
static int rpt__summary_files(rpt__ctx *c, const char *md, const char *csv, rpt__tables_fn tables, const void *what,
                              FILE *th, char *err, size_t errlen) {
  int rc = 0;
  char mt[4200], vt[4200];
  FILE *m = rpt__wopen(md, mt, sizeof mt), *v = rpt__wopen(csv, vt, sizeof vt);
  if (!m || !v) {
    snprintf(err, errlen, "%s: cannot write the summary files", c->opt->outdir);
    rc = SIM_EIO;
  }
  if (!rc) rc = tables(c, what, m, v, th);
  int bad_m = m && rpt__wclose(m, mt, md), bad_v = v && rpt__wclose(v, vt, csv); /* both closed */
  if (bad_m || bad_v) {
    snprintf(err, errlen, "%s: writing the summary files failed (%s)", c->opt->outdir, strerror(errno));
    rc = SIM_EIO;
  }
  if (!rc) {
    rpt__list_add(&c->out->files, &c->out->nfiles, "summary.md");
    rpt__list_add(&c->out->files, &c->out->nfiles, "summary.csv");
    rpt__say(c, "wrote %s and %s\n", md, csv);
  }
  return rc;
}

int rpt_report(const char *path, const rpt_options *opt, rpt_outcome *out, char *err, size_t errlen) {
  memset(out, 0, sizeof *out);
  rpt__ctx c = {0};
  c.opt = opt;
  c.out = out;
  c.log = opt->log ? opt->log : stdout;
  int rc = rpt_open(path, &c.f, err, errlen);
  if (rc) return rc;
  if (rpt__mkdir(opt->outdir)) {
    snprintf(err, errlen, "%s: cannot create the report folder", opt->outdir);
    rpt_close(c.f);
    return SIM_EIO;
  }
  c.gp = rpt__gp_program(opt->gnuplot);
  c.have_gp = rpt_gnuplot_available(opt->gnuplot);
  if (!c.have_gp)
    rpt__say(&c, "gnuplot not found ('%s'): the figures are skipped, the tables and index.html are still written\n",
             c.gp);

  char md[4096], csv[4096];
  snprintf(md, sizeof md, "%s/summary.md", opt->outdir);
  snprintf(csv, sizeof csv, "%s/summary.csv", opt->outdir);
  char *tables = NULL, what[2048];
  size_t tlen = 0;
  FILE *th = open_memstream(&tables, &tlen);
  if (!th) {
    rpt_close(c.f);
    snprintf(err, errlen, "out of memory");
    return SIM_ENOMEM;
  }
  if (rpt_file_kind(c.f) == RPT_SWEEP) {
    rpt_sweep s;
    rc = rpt_sweep_read(c.f, &s);
    if (rc) snprintf(err, errlen, "%s", rpt_error(c.f));
    if (!rc) {
      rc = rpt__summary_files(&c, md, csv, rpt__sweep_tables_cb, &s, th, err, errlen);
      if (!rc) { rc = rpt__sweep_figs(&c, &s); }
      char hp[1024], hm[256], hk[512];
      if (s.nkeys >= 2) /* a grid: each key named with its values */
        rpt__grid_what(what, sizeof what, &s, rpt__html_buf(hp, sizeof hp, path),
                       rpt__html_buf(hm, sizeof hm, s.model));
      else
        snprintf(what, sizeof what,
                 "Sweep file <code>%s</code>: model <code>%s</code>, key <code>%s</code> over %u values, %d "
                 "replication%s per point.",
                 rpt__html_buf(hp, sizeof hp, path), rpt__html_buf(hm, sizeof hm, s.model),
                 rpt__html_buf(hk, sizeof hk, s.param), s.npoints, s.reps, s.reps == 1 ? "" : "s");
      rpt_sweep_free(&s);
    }
  } else if (rpt_file_kind(c.f) == RPT_EXPERIMENT) {
    rpt_experiment e;
    rc = rpt_experiment_read(c.f, &e);
    if (rc) snprintf(err, errlen, "%s", rpt_error(c.f));
    if (!rc) {
      rc = rpt__summary_files(&c, md, csv, rpt__exp_tables_cb, &e, th, err, errlen);
      if (!rc) {
        rpt__exp_sink sink = {&c, rpt__exp_emit, rpt__exp_skip};
        rpt__exp_figs(&e, &sink);
      }
      char hp[1024], hm[256], hd[160];
      snprintf(what, sizeof what,
               "Experiment file <code>%s</code>: model <code>%s</code>, %s design, %u points, %d replication%s per "
               "point, base seed %llu.",
               rpt__html_buf(hp, sizeof hp, path), rpt__html_buf(hm, sizeof hm, e.model),
               rpt__html_buf(hd, sizeof hd, e.design), e.npoints, e.reps, e.reps == 1 ? "" : "s",
               (unsigned long long)e.seed);
      rpt_experiment_free(&e);
    }
  } else {
    int mismatch = 0;
    rc = rpt_write_summary(c.f, md, csv, &mismatch, err, errlen);
    if (!rc) {
      rpt__list_add(&out->files, &out->nfiles, "summary.md");
      rpt__list_add(&out->files, &out->nfiles, "summary.csv");
      rpt__say(&c, "wrote %s and %s\n", md, csv);
      if (mismatch)
        fprintf(stderr,
                "spotlab report: %s: warning: /summary disagrees with /metrics for %d metric%s; the tables use "
                "/metrics\n",
                path, mismatch, mismatch == 1 ? "" : "s");
      rpt__summary_html(c.f, th);
      rpt__fig_income(&c);
      rpt__fig_util(&c);
      rpt__fig_price(&c);
      rpt__fig_job_cdfs(&c, "class", "jobs", "Job wait and completion time per class");
      rpt__fig_timelines(&c);
      rpt__fig_dim_bars(&c, "policy", "policies", "Fault-tolerance policies side by side");
      const char *pol[] = {"policy", NULL};
      if (rpt_table_pick_field(c.f, MKT_TABLE_JOBS, pol) && rpt__policies_compared(&c))
        rpt__fig_job_cdfs(&c, "policy", "policy_jobs", "Job wait and completion time per fault-tolerance policy");
      if (c.rc) {
        rc = c.rc;
        snprintf(err, errlen, "%s", c.err);
      }
    }
    char hp[1024], hm[256];
    snprintf(what, sizeof what,
             "Results file <code>%s</code>: model <code>%s</code>, %d replication%s, base seed %llu, "
             "%.6g s (%.3g days) simulated.",
             rpt__html_buf(hp, sizeof hp, path), rpt__html_buf(hm, sizeof hm, rpt_model(c.f)), rpt_nreps(c.f),
             rpt_nreps(c.f) == 1 ? "" : "s", (unsigned long long)rpt_seed(c.f), rpt_end_time(c.f),
             rpt_end_time(c.f) / 86400.0);
  }
  fclose(th);
  if (!rc) {
    rc = rpt__index(&c, tables, what);
    if (rc)
      snprintf(err, errlen, "%s/index.html: writing failed (%s)", opt->outdir, strerror(errno));
    else {
      rpt__list_add(&out->files, &out->nfiles, "index.html");
      rpt__say(&c, "wrote %s/index.html (%d figure%s, %zu skipped, %zu table line%s)\n", opt->outdir,
               out->figures_drawn, out->figures_drawn == 1 ? "" : "s", out->nskipped, out->nlines,
               out->nlines == 1 ? "" : "s");
    }
  }
  if (!rc && c.write_failed) { /* index.html lists it as not drawn; the report is not whole */
    rc = SIM_EIO;
    snprintf(err, errlen, "%s: %s", opt->outdir, c.write_err);
  }
  free(tables);
  free(c.figs);
  rpt_close(c.f);
  if (rc) rpt_outcome_free(out); /* a failed report hands back nothing to free */
  return rc;
}
