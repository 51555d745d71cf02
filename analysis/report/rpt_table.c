/* rpt_table.c - the summary table of a results file: every metric's mean and 95% CI across
 * replications, recomputed from /metrics with GSL (and checked against /summary), grouped by the
 * metric's dimension (`quantity.dimension.value`) into sections: overall first, then persona,
 * pool, region, class, policy, then any other dimension in the order met. Written as Markdown
 * (one pivot table per dimension: values down, quantities across), CSV (one row per metric) and
 * an HTML fragment for index.html. Intervals are clipped to the range of the quantity
 * (rpt_metric_range); Markdown and HTML show durations in the page's time unit (hours, or days for
 * long runs), the CSV keeps the file's units. */
#include "analysis/report/rpt_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <errno.h>

void rpt__fmt(char *buf, size_t len, double v) {
  if (v != v)
    snprintf(buf, len, "-");
  else if (fabs(v) >= 1e3 && fabs(v) < 1e12)
    snprintf(buf, len, "%.0f", v); /* no 1.053e+04 next to 203741 */
  else
    snprintf(buf, len, "%.4g", v);
}

/* "mean [lo, hi]" of an interval shown times k (a duration in the page's time unit). */
static void rpt__cell(char *buf, size_t len, const rpt_ci *c, double k) {
  char m[32], lo[32], hi[32];
  rpt__fmt(m, sizeof m, c->mean * k);
  rpt__fmt(lo, sizeof lo, c->lo * k);
  rpt__fmt(hi, sizeof hi, c->hi * k);
  if (c->lo != c->lo)
    snprintf(buf, len, "%s", m);
  else
    snprintf(buf, len, "%s [%s, %s]", m, lo, hi);
}

/* The sections: dims[0] = "" (overall), then the dimensions in display order. */
typedef struct rpt__sections {
  char dims[64][64];
  unsigned ndims;
} rpt__sections;

static void rpt__sections_of(rpt_file *f, rpt__sections *s) {
  static const char *const order[] = {"persona", "pool", "region", "class", "policy", NULL};
  memset(s, 0, sizeof *s);
  s->ndims = 1; /* "" */
  char q[64], d[64], v[64];
  for (size_t o = 0; order[o]; o++)
    for (unsigned k = 0; k < rpt_nmetrics(f); k++) {
      rpt_metric_split(rpt_metric_name(f, k), q, d, v);
      if (!strcmp(d, order[o])) {
        snprintf(s->dims[s->ndims++], 64, "%s", d);
        break;
      }
    }
  for (unsigned k = 0; k < rpt_nmetrics(f); k++) {
    rpt_metric_split(rpt_metric_name(f, k), q, d, v);
    if (!d[0]) continue;
    unsigned i;
    for (i = 0; i < s->ndims && strcmp(s->dims[i], d); i++) {}
    if (i == s->ndims && s->ndims < 64) snprintf(s->dims[s->ndims++], 64, "%s", d);
  }
}

/* Distinct strings in first-seen order (at most cap). */
static unsigned rpt__distinct(char (*out)[64], unsigned cap, unsigned n, const char *s) {
  for (unsigned i = 0; i < n; i++)
    if (!strcmp(out[i], s)) return n;
  if (n < cap) snprintf(out[n++], 64, "%s", s);
  return n;
}

static int rpt__same(double a, double b) {
  if (a != a || b != b) return (a != a) == (b != b);
  return fabs(a - b) <= 1e-9 * (1.0 + fabs(a));
}

/* Text from the file in a table cell: escaped for HTML or Markdown (issue 49). */
static void rpt__txt(FILE *o, int html, const char *s) {
  if (html)
    rpt__html(o, s);
  else
    rpt__md(o, s);
}

/* A run of several policy worlds (market.compare_policies): which world the tables show. */
static void rpt__world_note(FILE *o, rpt_file *f, int html) {
  char first[64];
  int nw = rpt_worlds(f, first, sizeof first);
  if (nw < 2) return;
  char buf[512];
  snprintf(buf, sizeof buf,
           "This run compared %d fault-tolerance policies, one market world each (market.compare_policies). "
           "Every table but \"By policy\" shows the first world, policy '%s'; \"By policy\" has each world.",
           nw, first);
  fputs(html ? "<p class=\"note\">" : "", o);
  rpt__txt(o, html, buf);
  fputs(html ? "</p>\n" : "\n\n", o);
}

/* The behavioural assumptions the run used (/meta/assumptions: the keys whose help says ASSUMPTION,
 * with their values), first on the page, so a reader sees what the numbers rest on. Files written
 * before the record have none, and say nothing. */
static void rpt__assumptions_note(FILE *o, rpt_file *f, int html) {
  char *as = NULL;
  if (rpt_meta_string(f, "assumptions", &as) || !as || !*as) {
    free(as);
    return;
  }
  fputs(html ? "<h2>Assumptions this run rests on</h2>\n<p>" : "## Assumptions this run rests on\n\n", o);
  rpt__txt(o, html,
           "The scenario keys marked ASSUMPTION (no published figure pins them down), with the values this "
           "run used; spotlab compare --robust KEY=V1,V2 asks whether a conclusion survives other values.");
  fputs(html ? "</p>\n<ul>\n" : "\n\n", o);
  for (char *l = as, *e; *l; l = e + (*e != 0)) {
    e = strchr(l, '\n');
    if (!e) e = l + strlen(l);
    char c = *e;
    *e = 0;
    if (*l) {
      fputs(html ? "<li><code>" : "- `", o);
      if (html)
        rpt__html(o, l);
      else
        rpt__md(o, l);
      fputs(html ? "</code></li>\n" : "`\n", o);
    }
    *e = c;
  }
  fputs(html ? "</ul>\n" : "\n", o);
  free(as);
}

/* The section's heading suffix in a run of several worlds: " (policy world NAME)". */
static void rpt__world_tag(FILE *o, rpt_file *f, const char *dim, int html) {
  char first[64];
  if (!strcmp(dim, "policy") || rpt_worlds(f, first, sizeof first) < 2) return;
  fputs(" (policy world ", o);
  rpt__txt(o, html, first);
  fputc(')', o);
}

static void rpt__md_section(FILE *o, rpt_file *f, const char *dim, const rpt_ci *ci, int html) {
  unsigned nm = rpt_nmetrics(f);
  char q[64], d[64], v[64], cell[128];
  const char *page_unit, *shown;
  double page_s = rpt__page_time(f, &page_unit);
  if (!dim[0]) {
    unsigned n0 = 0;
    for (unsigned k = 0; k < nm; k++) {
      rpt_metric_split(rpt_metric_name(f, k), q, d, v);
      n0 += !d[0];
    }
    if (!n0) return; /* every metric has a dimension: no overall section */
    fputs(html ? "<h3>Overall" : "## Overall", o);
    rpt__world_tag(o, f, dim, html);
    if (html)
      fputs("</h3>\n<table><tr><th>metric</th><th>unit</th><th>mean [95% CI]</th><th>sd</th><th>n</th></tr>\n", o);
    else
      fputs("\n\n| metric | unit | mean [95% CI] | sd | n |\n|---|---|---|---|---|\n", o);
    for (unsigned k = 0; k < nm; k++) {
      rpt_metric_split(rpt_metric_name(f, k), q, d, v);
      if (d[0]) continue;
      char sd[32];
      double kf = rpt__shown(rpt_metric_unit(f, k), page_s, page_unit, &shown);
      rpt__cell(cell, sizeof cell, &ci[k], kf);
      rpt__fmt(sd, sizeof sd, ci[k].sd * kf);
      fputs(html ? "<tr><td>" : "| ", o);
      rpt__txt(o, html, q);
      fputs(html ? "</td><td>" : " | ", o);
      rpt__txt(o, html, shown);
      if (html)
        fprintf(o, "</td><td>%s</td><td>%s</td><td>%d</td></tr>\n", cell, sd, ci[k].n);
      else
        fprintf(o, " | %s | %s | %d |\n", cell, sd, ci[k].n);
    }
    fputs(html ? "</table>\n" : "\n", o);
    return;
  }
  char(*quants)[64] = calloc(32, 64), (*vals)[64] = calloc(256, 64);
  unsigned nq = 0, nv = 0;
  if (!quants || !vals) {
    free(quants);
    free(vals);
    return;
  }
  for (unsigned k = 0; k < nm; k++) {
    rpt_metric_split(rpt_metric_name(f, k), q, d, v);
    if (strcmp(d, dim)) continue;
    nq = rpt__distinct(quants, 32, nq, q);
    nv = rpt__distinct(vals, 256, nv, v);
  }
  fputs(html ? "<h3>By " : "## By ", o);
  rpt__txt(o, html, dim);
  rpt__world_tag(o, f, dim, html);
  fputs(html ? "</h3>\n" : "\n\n", o);
  /* At most four quantities per table, so that a table fits a page; more make more tables. */
  for (unsigned i0 = 0; i0 < nq; i0 += 4) {
    unsigned i1 = i0 + 4 < nq ? i0 + 4 : nq;
    fputs(html ? "<table><tr><th>" : "| ", o);
    rpt__txt(o, html, dim);
    fputs(html ? "</th>" : " |", o);
    for (unsigned i = i0; i < i1; i++) {
      const char *unit = "";
      for (unsigned k = 0; k < nm; k++) {
        rpt_metric_split(rpt_metric_name(f, k), q, d, v);
        if (!strcmp(d, dim) && !strcmp(q, quants[i])) {
          unit = rpt_metric_unit(f, k);
          break;
        }
      }
      rpt__shown(unit, page_s, page_unit, &shown);
      fputs(html ? "<th>" : " ", o);
      rpt__txt(o, html, quants[i]);
      fputs(" (", o);
      rpt__txt(o, html, shown);
      fputs(html ? ")</th>" : ") |", o);
    }
    if (html)
      fputs("</tr>\n", o);
    else {
      fputs("\n|---|", o);
      for (unsigned i = i0; i < i1; i++) fputs("---|", o);
      fputc('\n', o);
    }
    for (unsigned j = 0; j < nv; j++) {
      fputs(html ? "<tr><td>" : "| ", o);
      rpt__txt(o, html, vals[j]);
      fputs(html ? "</td>" : " |", o);
      for (unsigned i = i0; i < i1; i++) {
        char name[200];
        snprintf(name, sizeof name, "%s.%s.%s", quants[i], dim, vals[j]);
        int k = rpt_metric_find(f, name);
        if (k >= 0)
          rpt__cell(cell, sizeof cell, &ci[k], rpt__shown(rpt_metric_unit(f, (unsigned)k), page_s, page_unit, &shown));
        else
          snprintf(cell, sizeof cell, " ");
        fprintf(o, html ? "<td>%s</td>" : " %s |", cell);
      }
      fputs(html ? "</tr>\n" : "\n", o);
    }
    fputs(html ? "</table>\n" : "\n", o);
  }
  free(quants);
  free(vals);
}

/* Recomputes every metric's interval from /metrics; counts disagreements with /summary. */
static rpt_ci *rpt__recompute(rpt_file *f, int *mismatch) {
  unsigned nm = rpt_nmetrics(f);
  rpt_ci *ci = calloc(nm ? nm : 1, sizeof *ci);
  if (!ci) return NULL;
  *mismatch = 0;
  for (unsigned k = 0; k < nm; k++) {
    rpt_ci st;
    rpt_ci_t(rpt_metric_values(f) + k, (size_t)rpt_nreps(f), nm, &ci[k]);
    rpt_summary_stored(f, k, &st);
    if (!rpt__same(ci[k].mean, st.mean) || !rpt__same(ci[k].lo, st.lo) || !rpt__same(ci[k].hi, st.hi)) (*mismatch)++;
    double lo, hi; /* then clipped to what the quantity can be (after the check: /summary is unclipped) */
    rpt_metric_range(rpt_metric_name(f, k), rpt_metric_unit(f, k), &lo, &hi);
    rpt_ci_clip(&ci[k], lo, hi);
  }
  return ci;
}

int rpt__summary_html(rpt_file *f, FILE *o) {
  int mm;
  rpt_ci *ci = rpt__recompute(f, &mm);
  if (!ci) return SIM_ENOMEM;
  rpt__sections s;
  rpt__sections_of(f, &s);
  rpt__world_note(o, f, 1);
  rpt__assumptions_note(o, f, 1);
  for (unsigned i = 0; i < s.ndims; i++) rpt__md_section(o, f, s.dims[i], ci, 1);
  free(ci);
  return 0;
}

int rpt_write_summary(rpt_file *f, const char *md_path, const char *csv_path, int *mismatch, char *err, size_t errlen) {
  int mm = 0;
  rpt_ci *ci = rpt__recompute(f, &mm);
  if (!ci) {
    snprintf(err, errlen, "out of memory");
    return SIM_ENOMEM;
  }
  if (mismatch) *mismatch = mm;
  rpt__sections s;
  rpt__sections_of(f, &s);
  unsigned nm = rpt_nmetrics(f);
  int rc = 0;
  if (md_path) {
    char tmp[4200];
    FILE *o = rpt__wopen(md_path, tmp, sizeof tmp);
    if (!o) {
      snprintf(err, errlen, "%s: cannot write", md_path);
      rc = SIM_EIO;
    } else {
      const char *pu;
      double ps = rpt__page_time(f, &pu);
      fputs("# Summary: ", o);
      rpt__md(o, rpt_path(f));
      fputs("\n\nModel `", o);
      rpt__md(o, rpt_model(f));
      fprintf(o,
              "`, %d replication%s, base seed %llu, %.6g %s simulated. Means with 95%% confidence intervals across "
              "replications (Student t), clipped to the values each quantity can take; durations in %s.\n\n",
              rpt_nreps(f), rpt_nreps(f) == 1 ? "" : "s", (unsigned long long)rpt_seed(f), rpt_end_time(f) / ps, pu,
              !strcmp(pu, "h") ? "hours" : "days");
      rpt__world_note(o, f, 0);
      rpt__assumptions_note(o, f, 0);
      for (unsigned i = 0; i < s.ndims; i++) rpt__md_section(o, f, s.dims[i], ci, 0);
      if (mm)
        fprintf(o,
                "Warning: for %d metric%s the file's /summary disagrees with /metrics; the table shows the "
                "values recomputed from /metrics.\n",
                mm, mm == 1 ? "" : "s");
      if (rpt__wclose(o, tmp, md_path)) {
        snprintf(err, errlen, "%s: writing failed (%s)", md_path, strerror(errno));
        rc = SIM_EIO;
      }
    }
  }
  if (!rc && csv_path) {
    char tmp[4200];
    FILE *o = rpt__wopen(csv_path, tmp, sizeof tmp);
    if (!o) {
      snprintf(err, errlen, "%s: cannot write", csv_path);
      rc = SIM_EIO;
    } else {
      fputs("section,metric,quantity,dimension,value,unit,mean,sd,ci95_lo,ci95_hi,n\n", o);
      for (unsigned i = 0; i < s.ndims; i++)
        for (unsigned k = 0; k < nm; k++) {
          char q[64], d[64], v[64];
          rpt_metric_split(rpt_metric_name(f, k), q, d, v);
          if (strcmp(d, s.dims[i])) continue;
          const char *cols[6] = {d[0] ? d : "overall", rpt_metric_name(f, k), q, d, v, rpt_metric_unit(f, k)};
          for (int j = 0; j < 6; j++) { /* every text through libcsv's writer when it needs quoting */
            if (j) fputc(',', o);
            rpt_csv_field(o, cols[j]);
          }
          fprintf(o, ",%.17g,%.17g,%.17g,%.17g,%d\n", ci[k].mean, ci[k].sd, ci[k].lo, ci[k].hi, ci[k].n);
        }
      if (rpt__wclose(o, tmp, csv_path)) {
        snprintf(err, errlen, "%s: writing failed (%s)", csv_path, strerror(errno));
        rc = SIM_EIO;
      }
    }
  }
  if (rc) { /* a half-written table is not left to look complete */
    if (md_path) unlink(md_path);
    if (csv_path) unlink(csv_path);
  }
  free(ci);
  return rc;
}
