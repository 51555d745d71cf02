/* rpt_exp_report.c - `spotlab report` on an experiment file: the points table (Markdown, CSV,
 * HTML) and three figures: the Pareto front of the first two objectives, the sensitivities as
 * bars, and a two-factor map of the feasible region. rpt_report.c calls these and renders the
 * figures through its usual sink (index.html lists them). */
#include "analysis/report/rpt_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int rpt__exp_numeric(const rpt_experiment *e, unsigned f) {
  for (unsigned p = 0; p < e->npoints; p++) {
    const char *t = e->labels[(size_t)p * e->nfactors + f];
    char *end;
    strtod(t, &end);
    if (end == t || *end) return 0;
  }
  return 1;
}

static void rpt__exp_cell(char *buf, size_t len, const rpt_experiment *e, unsigned p, unsigned k) {
  char m[32], lo[32], hi[32];
  size_t i = (size_t)p * e->nmetrics + k;
  rpt__fmt(m, sizeof m, e->mean[i]);
  rpt__fmt(lo, sizeof lo, e->lo[i]);
  rpt__fmt(hi, sizeof hi, e->hi[i]);
  if (isfinite(e->lo[i]))
    snprintf(buf, len, "%s [%s, %s]", m, lo, hi);
  else
    snprintf(buf, len, "%s", m);
}

int rpt__exp_tables(const rpt_experiment *e, FILE *md, FILE *csv, FILE *html) {
  unsigned np = e->npoints, nf = e->nfactors, nm = e->nmetrics;
  unsigned nfeas = 0, nfront = 0;
  for (unsigned p = 0; p < np; p++) {
    nfeas += e->feasible[p] == 1;
    nfront += e->pareto[p] == 1;
  }
  fputs("# Experiment\n\nModel `", md);
  rpt__md(md, e->model);
  fputs("`, ", md);
  rpt__md(md, e->design);
  fprintf(md,
          " design, %u points, %d replication%s per point on the same seeds (base seed %llu). %u point%s meet every "
          "constraint; %u on the Pareto front. Means with 95%% t intervals; P is the probability that the true mean "
          "meets the constraint (one-sided t).\n\n",
          np, e->reps, e->reps == 1 ? "" : "s", (unsigned long long)e->seed, nfeas, nfeas == 1 ? "" : "s", nfront);
  fputs("| point |", md);
  fputs("<table><tr><th>point</th>", html);
  for (unsigned f = 0; f < nf; f++) {
    fputc(' ', md);
    rpt__md(md, e->factors[f]);
    fputs(" |", md);
    fputs("<th>", html);
    rpt__html(html, e->factors[f]);
    fputs("</th>", html);
  }
  for (unsigned c = 0; c < e->ncons; c++) {
    fputc(' ', md);
    rpt__md(md, e->cons[c]);
    fputs(" | P |", md);
    fputs("<th>", html);
    rpt__html(html, e->cons[c]);
    fputs("</th><th>P</th>", html);
  }
  for (unsigned j = 0; j < e->nobjs; j++) {
    fputc(' ', md);
    rpt__md(md, e->objs[j]);
    fputs(" |", md);
    fputs("<th>", html);
    rpt__html(html, e->objs[j]);
    fputs("</th>", html);
  }
  fputs(" feasible | Pareto |\n|---|", md);
  fputs("<th>feasible</th><th>Pareto</th></tr>\n", html);
  for (unsigned i = 0; i < nf + 2 * e->ncons + e->nobjs + 2; i++) fputs("---|", md);
  fputc('\n', md);
  for (unsigned p = 0; p < np; p++) {
    fprintf(md, "| %u |", p + 1);
    fprintf(html, "<tr><td>%u</td>", p + 1);
    for (unsigned f = 0; f < nf; f++) {
      fputc(' ', md);
      rpt__md(md, e->labels[(size_t)p * nf + f]);
      fputs(" |", md);
      fputs("<td>", html);
      rpt__html(html, e->labels[(size_t)p * nf + f]);
      fputs("</td>", html);
    }
    for (unsigned c = 0; c < e->ncons; c++) {
      char cell[128], pr[32];
      rpt__exp_cell(cell, sizeof cell, e, p, (unsigned)e->cons_metric[c]);
      rpt__fmt(pr, sizeof pr, e->confidence[(size_t)p * e->ncons + c]);
      const char *met = e->met[(size_t)p * e->ncons + c] == 1 ? "met" : "not met";
      fprintf(md, " %s %s | %s |", cell, met, pr);
      fprintf(html, "<td>%s %s</td><td>%s</td>", cell, met, pr);
    }
    for (unsigned j = 0; j < e->nobjs; j++) {
      char cell[128];
      rpt__exp_cell(cell, sizeof cell, e, p, (unsigned)e->obj_metric[j]);
      fprintf(md, " %s |", cell);
      fprintf(html, "<td>%s</td>", cell);
    }
    const char *fe = e->feasible[p] == 1 ? "yes" : "no", *pa = e->pareto[p] == 1 ? "yes" : "no";
    fprintf(md, " %s | %s |\n", fe, pa);
    fprintf(html, "<td>%s</td><td>%s</td></tr>\n", fe, pa);
  }
  fputs("</table>\n", html);
  if (e->nobjs) {
    fputs("\n## Sensitivity\n\n", md);
    rpt__md(md, e->sens_method);
    fputs(".\n\n| objective |", md);
    fputs("<h2>Sensitivity</h2>\n<p>", html);
    rpt__html(html, e->sens_method);
    fputs("</p>\n<table><tr><th>objective</th>", html);
    for (unsigned f = 0; f < nf; f++) {
      fputc(' ', md);
      rpt__md(md, e->factors[f]);
      fputs(" |", md);
      fputs("<th>", html);
      rpt__html(html, e->factors[f]);
      fputs("</th>", html);
    }
    fputs(" R^2 |\n|---|", md);
    fputs("<th>R<sup>2</sup></th></tr>\n", html);
    for (unsigned f = 0; f <= nf; f++) fputs("---|", md);
    fputc('\n', md);
    for (unsigned j = 0; j < e->nobjs; j++) {
      fputs("| ", md);
      rpt__md(md, e->objs[j]);
      fputs(" |", md);
      fputs("<tr><td>", html);
      rpt__html(html, e->objs[j]);
      fputs("</td>", html);
      for (unsigned f = 0; f <= nf; f++) {
        char v[32];
        rpt__fmt(v, sizeof v, f < nf ? e->sensitivity[(size_t)j * nf + f] : e->r2[j]);
        fprintf(md, " %s |", v);
        fprintf(html, "<td>%s</td>", v);
      }
      fputc('\n', md);
      fputs("</tr>\n", html);
    }
    fputs("</table>\n", html);
  }
  /* CSV: one row per point and metric, the factors' values first; every text through rpt_csv_field. */
  fputs("point", csv);
  for (unsigned f = 0; f < nf; f++) {
    fputc(',', csv);
    rpt_csv_field(csv, e->factors[f]);
  }
  fputs(",metric,unit,mean,ci95_lo,ci95_hi,n,feasible,pareto\n", csv);
  for (unsigned p = 0; p < np; p++)
    for (unsigned k = 0; k < nm; k++) {
      fprintf(csv, "%u", p + 1);
      for (unsigned f = 0; f < nf; f++) {
        fputc(',', csv);
        rpt_csv_field(csv, e->labels[(size_t)p * nf + f]);
      }
      size_t i = (size_t)p * nm + k;
      fputc(',', csv);
      rpt_csv_field(csv, e->names[k]);
      fputc(',', csv);
      rpt_csv_field(csv, e->units[k]);
      fprintf(csv, ",%.17g,%.17g,%.17g,%d,%d,%d\n", e->mean[i], e->lo[i], e->hi[i], e->reps, e->feasible[p] == 1,
              e->pareto[p] == 1);
    }
  return ferror(md) || ferror(csv) || ferror(html) ? SIM_EIO : 0;
}

/* Axis tics of a factor whose levels are not numbers: its x is the level's index. */
static void rpt__exp_tics(FILE *g, const rpt_experiment *e, unsigned f, const char *axis) {
  if (rpt__exp_numeric(e, f)) return;
  fprintf(g, "set %stics (", axis);
  int first = 1;
  for (unsigned p = 0; p < e->npoints; p++) {
    double x = e->x[(size_t)p * e->nfactors + f];
    unsigned q;
    for (q = 0; q < p && e->x[(size_t)q * e->nfactors + f] != x; q++) {}
    if (q < p) continue;
    fputs(first ? "" : ", ", g);
    rpt__gp_str(g, e->labels[(size_t)p * e->nfactors + f]);
    fprintf(g, " %.17g", x);
    first = 0;
  }
  fputs(")\n", g);
}

void rpt__exp_figs(const rpt_experiment *e, rpt__exp_sink *sink) {
  unsigned np = e->npoints, nf = e->nfactors, nm = e->nmetrics;
  char *body;
  size_t len;
  /* 1. The Pareto front of the first two objectives. */
  const char *t1 = "Pareto front of the first two objectives";
  if (e->nobjs < 2)
    sink->skip(sink->ctx, t1, e->nobjs ? "one objective: its best feasible point is in the table" : "no objectives");
  else {
    FILE *g = open_memstream(&body, &len);
    if (!g) return;
    unsigned k0 = (unsigned)e->obj_metric[0], k1 = (unsigned)e->obj_metric[1];
    fprintf(g, "set xlabel ");
    char lab[256];
    rpt_metric_words(e->names[k0], NULL, e->units[k0], lab, sizeof lab); /* words with the unit */
    rpt__gp_str(g, lab);
    fprintf(g, "\nset ylabel ");
    rpt_metric_words(e->names[k1], NULL, e->units[k1], lab, sizeof lab);
    rpt__gp_str(g, lab);
    fputs("\nset title 'Points of the design: means with 95% intervals; the front among feasible points'\n", g);
    /* three blocks: infeasible, feasible off the front, the front (sorted by the first objective);
     * an empty block is left out of the plot (gnuplot 5.4 crashes on a label plot of no points) */
    unsigned cnt[3] = {0, 0, 0};
    for (int cls = 0; cls < 3; cls++) {
      fprintf(g, "$d%d << EOD\n", cls);
      unsigned *ord = malloc((np ? np : 1) * sizeof *ord), n = 0;
      if (!ord) break;
      for (unsigned p = 0; p < np; p++) {
        int c = e->pareto[p] == 1 ? 2 : e->feasible[p] == 1 ? 1 : 0;
        if (c == cls && isfinite(e->mean[(size_t)p * nm + k0]) && isfinite(e->mean[(size_t)p * nm + k1])) ord[n++] = p;
      }
      for (unsigned a = 1; a < n; a++) /* insertion sort on the first objective (a line along the front) */
        for (unsigned b = a; b > 0 && e->mean[(size_t)ord[b] * nm + k0] < e->mean[(size_t)ord[b - 1] * nm + k0]; b--) {
          unsigned t = ord[b];
          ord[b] = ord[b - 1];
          ord[b - 1] = t;
        }
      for (unsigned i = 0; i < n; i++) {
        unsigned p = ord[i];
        size_t a = (size_t)p * nm + k0, b = (size_t)p * nm + k1;
        double xl = isfinite(e->lo[a]) ? e->lo[a] : e->mean[a], xh = isfinite(e->hi[a]) ? e->hi[a] : e->mean[a];
        double yl = isfinite(e->lo[b]) ? e->lo[b] : e->mean[b], yh = isfinite(e->hi[b]) ? e->hi[b] : e->mean[b];
        fprintf(g, "%.17g %.17g %.17g %.17g %.17g %.17g %u\n", e->mean[a], e->mean[b], xl, xh, yl, yh, p + 1);
      }
      cnt[cls] = n;
      fputs("EOD\n", g);
      free(ord);
    }
    if (!cnt[0] && !cnt[1] && !cnt[2]) {
      fclose(g);
      free(body);
      sink->skip(sink->ctx, t1, "no point has a value of both objectives");
      goto sens;
    }
    const char *sep = "plot ";
    if (cnt[0]) {
      fprintf(g, "%s$d0 using 1:2:3:4:5:6 with xyerrorbars lc rgb '#999999' pt 6 title 'infeasible'", sep);
      sep = ", \\\n     ";
    }
    if (cnt[1]) {
      fprintf(g, "%s$d1 using 1:2:3:4:5:6 with xyerrorbars lt 1 pt 7 title 'feasible, dominated'", sep);
      sep = ", \\\n     ";
    }
    if (cnt[2])
      fprintf(g,
              "%s$d2 using 1:2:3:4:5:6 with xyerrorbars lt 2 pt 5 ps 1.2 title 'Pareto front', \\\n"
              "     $d2 using 1:2 with lines lt 2 notitle, $d2 using 1:2:7 with labels offset 1,1 notitle",
              sep);
    fputc('\n', g);
    fclose(g);
    sink->emit(sink->ctx, "pareto", t1,
               "Each point's mean of the first two objectives with its 95% interval; the front (non-dominated "
               "feasible points on means) in vermillion, numbered as in the table.",
               600, body);
  }
sens:; /* a label is not followed by a declaration before C23 */
  /* 2. Sensitivities: a group of bars per factor, one bar per objective. */
  const char *t2 = "Sensitivity of each objective to each factor";
  if (!e->nobjs)
    sink->skip(sink->ctx, t2, "no objectives");
  else {
    int any = 0;
    for (size_t i = 0; i < (size_t)e->nobjs * nf; i++) any |= isfinite(e->sensitivity[i]);
    if (!any)
      sink->skip(sink->ctx, t2, "no sensitivity could be computed (constant objectives, or too few points)");
    else {
      FILE *g = open_memstream(&body, &len);
      if (!g) return;
      fputs("set datafile missing '?'\nset style data histogram\nset style histogram clustered gap 1\n"
            "set boxwidth 0.9 relative\nset yrange [-1.05:1.05]\nset ylabel 'standardized regression coefficient'\n"
            "set title 'SRC of each objective on the factors (R^2 in the legend)'\n"
            "set key outside below center horizontal\nset xtics rotate by -20 (",
            g);
      for (unsigned f = 0; f < nf; f++) { /* the factors' names as tics (strings), the data numbers only */
        fputs(f ? ", " : "", g);
        rpt__gp_str(g, e->factors[f]);
        fprintf(g, " %u", f);
      }
      fputs(")\n$d << EOD\n", g);
      for (unsigned f = 0; f < nf; f++) {
        fprintf(g, "%u", f);
        for (unsigned j = 0; j < e->nobjs; j++) {
          double v = e->sensitivity[(size_t)j * nf + f];
          if (isfinite(v))
            fprintf(g, " %.17g", v);
          else
            fputs(" ?", g);
        }
        fputc('\n', g);
      }
      fputs("EOD\nplot ", g);
      for (unsigned j = 0; j < e->nobjs; j++) {
        char tt[256], r2[32];
        rpt__fmt(r2, sizeof r2, e->r2[j]);
        snprintf(tt, sizeof tt, "%s (R^2 %s)", e->objs[j], r2);
        fprintf(g, "%s$d using %u lt %u title ", j ? ", " : "", j + 2, j + 1);
        rpt__gp_str(g, tt);
      }
      fputc('\n', g);
      fclose(g);
      sink->emit(sink->ctx, "sensitivity", t2, e->sens_method, 500, body);
    }
  }
  /* 3. The feasible region over the first two factors. */
  const char *t3 = "Feasible region over the first two factors";
  if (nf < 2)
    sink->skip(sink->ctx, t3, "one factor: the table shows which of its values are feasible");
  else if (!e->ncons)
    sink->skip(sink->ctx, t3, "no constraints");
  else {
    FILE *g = open_memstream(&body, &len);
    if (!g) return;
    fputs("set xlabel ", g);
    rpt__gp_str(g, e->factors[0]);
    fputs("\nset ylabel ", g);
    rpt__gp_str(g, e->factors[1]);
    fputs("\nset offsets graph 0.08, graph 0.08, graph 0.08, graph 0.08\n", g);
    rpt__exp_tics(g, e, 0, "x");
    rpt__exp_tics(g, e, 1, "y");
    char tt[512];
    size_t o = (size_t)snprintf(tt, sizeof tt, "Feasible:");
    for (unsigned c = 0; c < e->ncons && o < sizeof tt; c++)
      o += (size_t)snprintf(tt + o, sizeof tt - o, "%s %s", c ? "," : "", e->cons[c]);
    fputs("set title ", g);
    rpt__gp_str(g, tt);
    fputc('\n', g);
    /* Points that share both values (other factors differ) are one mark: all feasible, none, or
     * some, labelled k/n. */
    unsigned cnt[3] = {0, 0, 0};
    for (int cls = 0; cls < 3; cls++) {
      fprintf(g, "$d%d << EOD\n", cls);
      for (unsigned p = 0; p < np; p++) {
        double a = e->x[(size_t)p * nf], b = e->x[(size_t)p * nf + 1];
        unsigned q, n = 0, k = 0;
        for (q = 0; q < p && !(e->x[(size_t)q * nf] == a && e->x[(size_t)q * nf + 1] == b); q++) {}
        if (q < p) continue; /* drawn with its first point */
        for (q = p; q < np; q++)
          if (e->x[(size_t)q * nf] == a && e->x[(size_t)q * nf + 1] == b) {
            n++;
            k += e->feasible[q] == 1;
          }
        int c = k == n ? 0 : k == 0 ? 1 : 2;
        if (c != cls) continue;
        fprintf(g, "%.17g %.17g \"%u/%u\"\n", a, b, k, n);
        cnt[cls]++;
      }
      fputs("EOD\n", g);
    }
    static const char *const style[3] = {"lt 3 pt 7 ps 2 title 'feasible'", "lt 2 pt 2 ps 2 title 'not feasible'",
                                         "lt 5 pt 9 ps 2 title 'feasible for some values of the other factors'"};
    const char *sep = "plot ";
    for (int cls = 0; cls < 3; cls++)
      if (cnt[cls]) {
        fprintf(g, "%s$d%d using 1:2 with points %s, $d%d using 1:2:3 with labels offset 0,1.5 notitle", sep, cls,
                style[cls], cls);
        sep = ", \\\n     ";
      }
    fputc('\n', g);
    fclose(g);
    sink->emit(sink->ctx, "feasible_map", t3,
               "Each pair of values of the first two factors: feasible (every constraint met on the means) at every "
               "point with those values, at none, or at k of n (the other factors differ).",
               600, body);
  }
}
