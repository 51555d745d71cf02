/* rpt_cheapest.c - the engineer's answer of a sweep over policies: at each point, which policy is
 * cheapest per useful GPU-hour, and is it significantly cheaper than the runner-up?
 *
 * A sweep of a scenario that compares policies (`market.compare_policies`) holds, per point and
 * replication, QUANTITY.policy.P for every policy P. Replication r of every policy at a point ran
 * on the same providers, churn and arrivals (common random numbers), so runner-up minus cheapest is
 * a paired difference (rpt_ci_paired). A policy whose quantity is not finite in some replication
 * (no job completed: spend over zero useful GPU-hours) is not ranked at that point and is named as
 * such; the comparison uses the replications where both ranked policies are finite. */
#include "analysis/report/rpt_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define RPT_CHEAP_MAX_POLICIES 32

typedef struct rpt__cheap_pt {
  int best, second; /* policy indices, -1 when fewer than one / two ranked */
  double mean[RPT_CHEAP_MAX_POLICIES];
  int finite[RPT_CHEAP_MAX_POLICIES]; /* 1: finite in every replication */
  rpt_ci diff;                        /* runner-up - cheapest, paired */
} rpt__cheap_pt;

/* The policies of QUANTITY.policy.P metrics (no further dimension), in file order. */
static int rpt__cheap_policies(const rpt_sweep *s, const char *q, int *k, const char **pol) {
  size_t ql = strlen(q);
  int n = 0;
  for (unsigned m = 0; m < s->nmetrics && n < RPT_CHEAP_MAX_POLICIES; m++) {
    const char *name = s->names[m];
    if (strncmp(name, q, ql) || strncmp(name + ql, ".policy.", 8)) continue;
    const char *p = name + ql + 8;
    if (!*p || strchr(p, '.')) continue;
    k[n] = (int)m;
    pol[n++] = p;
  }
  return n;
}

static void rpt__cheap_point(const rpt_sweep *s, unsigned p, const int *k, int n, double *a, double *b,
                             rpt__cheap_pt *o) {
  size_t nm = s->nmetrics;
  o->best = o->second = -1;
  for (int i = 0; i < n; i++) {
    double sum = 0;
    o->finite[i] = s->reps > 0;
    for (int r = 0; r < s->reps; r++) {
      double v = s->values[((size_t)p * s->reps + r) * nm + (size_t)k[i]];
      if (!isfinite(v)) o->finite[i] = 0;
      sum += v;
    }
    o->mean[i] = s->reps > 0 ? sum / s->reps : NAN;
    if (!o->finite[i]) continue;
    if (o->best < 0 || o->mean[i] < o->mean[o->best]) {
      o->second = o->best;
      o->best = i;
    } else if (o->second < 0 || o->mean[i] < o->mean[o->second]) {
      o->second = i;
    }
  }
  o->diff = (rpt_ci){NAN, NAN, NAN, NAN, 0};
  if (o->second < 0) return;
  for (int r = 0; r < s->reps; r++) {
    a[r] = s->values[((size_t)p * s->reps + r) * nm + (size_t)k[o->best]];
    b[r] = s->values[((size_t)p * s->reps + r) * nm + (size_t)k[o->second]];
  }
  rpt_ci_paired(a, b, (size_t)s->reps, 1, &o->diff);
}

static const char *rpt__cheap_verdict(const rpt__cheap_pt *o) {
  if (o->best < 0) return "no policy completed work in every replication";
  if (o->second < 0) return "the only policy that completed work in every replication";
  if (!(o->diff.n >= 2)) return "too few replications to say";
  return o->diff.lo > 0 ? "yes (95% interval above 0)" : "no (95% interval includes 0)";
}

int rpt__cheapest(const rpt_sweep *s, const char *q, const char *unit_words, FILE *md, FILE *html, FILE *csv) {
  int k[RPT_CHEAP_MAX_POLICIES];
  const char *pol[RPT_CHEAP_MAX_POLICIES];
  int n = rpt__cheap_policies(s, q, k, pol);
  if (n < 2 || s->reps < 1) return 0;
  double *a = malloc(sizeof *a * (size_t)s->reps * 2);
  if (!a) return SIM_ENOMEM;
  const char *unit = s->units[k[0]];
  fputs("\n## The cheapest policy at each point\n\n", md);
  fprintf(md,
          "By mean `%s` (%s, %s) over %d replications; the runner-up's excess is the paired difference "
          "(common random numbers) with its 95%% interval. A policy that completed no work in some "
          "replication (the quantity is undefined there) is not ranked.\n\n",
          q, unit_words, unit, s->reps);
  /* the point: its value (one key), or one column per key of a grid, each named */
  unsigned nk = s->nkeys >= 2 ? s->nkeys : 0;
  fputs("|", md);
  fputs("<h2>The cheapest policy at each point</h2>\n<p>By mean ", html);
  rpt__html(html, q);
  fprintf(html, " (%s) over %d replications; the runner-up's excess is paired (common random numbers).</p>\n",
          unit_words, s->reps);
  fputs("<table><tr>", html);
  for (unsigned j = 0; j < (nk ? nk : 1); j++) {
    fputs(" ", md);
    rpt__md(md, nk ? s->keys[j] : "point");
    fputs(" |", md);
    fputs("<th>", html);
    rpt__html(html, nk ? s->keys[j] : "point");
    fputs("</th>", html);
    if (j) fputc(',', csv);
    rpt_csv_field(csv, nk ? s->keys[j] : "point");
  }
  fputs(" cheapest | mean | runner-up | mean | runner-up - cheapest [95% CI] | significantly cheaper? | "
        "not ranked |\n|",
        md);
  for (unsigned j = 0; j < (nk ? nk : 1); j++) fputs("---|", md);
  fputs("---|---|---|---|---|---|---|\n", md);
  fputs("<th>cheapest</th><th>mean</th><th>runner-up</th><th>mean</th>"
        "<th>runner-up - cheapest [95% CI]</th><th>significantly cheaper?</th><th>not ranked</th></tr>\n",
        html);
  fputs(",cheapest,cheapest_mean,runner_up,runner_up_mean,diff_mean,diff_ci95_lo,diff_ci95_hi,significant,"
        "not_ranked\n",
        csv);
  for (unsigned p = 0; p < s->npoints; p++) {
    rpt__cheap_pt o;
    rpt__cheap_point(s, p, k, n, a, a + s->reps, &o);
    char bm[32] = "-", sm[32] = "-", dm[32] = "-", dl[32] = "-", dh[32] = "-", unr[512] = "";
    const char *bn = o.best >= 0 ? pol[o.best] : "-", *sn = o.second >= 0 ? pol[o.second] : "-";
    if (o.best >= 0) rpt__fmt(bm, sizeof bm, o.mean[o.best]);
    if (o.second >= 0) {
      rpt__fmt(sm, sizeof sm, o.mean[o.second]);
      rpt__fmt(dm, sizeof dm, o.diff.mean);
      rpt__fmt(dl, sizeof dl, o.diff.lo);
      rpt__fmt(dh, sizeof dh, o.diff.hi);
    }
    for (int i = 0; i < n; i++)
      if (!o.finite[i]) {
        strncat(unr, *unr ? ", " : "", sizeof unr - strlen(unr) - 1);
        strncat(unr, pol[i], sizeof unr - strlen(unr) - 1);
      }
    const char *v = rpt__cheap_verdict(&o);
    fputs("<tr>", html);
    for (unsigned j = 0; j < (nk ? nk : 1); j++) {
      const char *lab = nk ? s->key_labels[(size_t)p * nk + j] : s->labels[p];
      fputs(j ? " | " : "| ", md);
      rpt__md(md, lab);
      fputs("<td>", html);
      rpt__html(html, lab);
      fputs("</td>", html);
      if (j) fputc(',', csv);
      rpt_csv_field(csv, lab);
    }
    fputs(" | ", md);
    rpt__md(md, bn);
    fprintf(md, " | %s | ", bm);
    rpt__md(md, sn);
    fprintf(md, " | %s | %s [%s, %s] | %s | ", sm, dm, dl, dh, v);
    rpt__md(md, unr);
    fputs(" |\n", md);
    fputs("<td>", html);
    rpt__html(html, bn);
    fprintf(html, "</td><td>%s</td><td>", bm);
    rpt__html(html, sn);
    fprintf(html, "</td><td>%s</td><td>%s [%s, %s]</td><td>%s</td><td>", sm, dm, dl, dh, v);
    rpt__html(html, unr);
    fputs("</td></tr>\n", html);
    fputc(',', csv);
    rpt_csv_field(csv, o.best >= 0 ? bn : ""); /* no policy: an empty cell, not a "-" text */
    fprintf(csv, ",%.17g,", o.best >= 0 ? o.mean[o.best] : NAN);
    rpt_csv_field(csv, o.second >= 0 ? sn : "");
    fprintf(csv, ",%.17g,%.17g,%.17g,%.17g,", o.second >= 0 ? o.mean[o.second] : NAN, o.diff.mean, o.diff.lo,
            o.diff.hi);
    rpt_csv_field(csv, v);
    fputc(',', csv);
    rpt_csv_field(csv, unr);
    fputc('\n', csv);
  }
  fputs("</table>\n", html);
  free(a);
  return 0;
}
