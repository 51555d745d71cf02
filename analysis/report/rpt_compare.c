/* rpt_compare.c - `spotlab compare BEFORE.h5 AFTER.h5`: what a change (a pricing rule, a fee, a
 * policy) does to every headline metric, with paired confidence intervals.
 *
 * Replication r of both files is run from the same seed (sim_rep_seed(base, r)), so the pair
 * (before_r, after_r) shares its random numbers and the paired-t interval on the differences is
 * the right one (common random numbers; rpt_ci_paired). The seeds are checked, and a mismatch is
 * said (the interval stays valid, only wider).
 */
#include "analysis/report/rpt_internal.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The differences an operator looks at first: platform revenue, provider income, client cost,
 * utilization and completion times (spotlab issue 5), and what the fault-tolerance model reports. */
static int rpt__headline(const char *name) {
  static const char *const keys[] = {"revenue", "income",  "cost",  "util",   "complet", "turnaround",
                                     "wait",    "goodput", "price", "profit", "fee",     NULL};
  for (size_t i = 0; keys[i]; i++)
    if (strstr(name, keys[i])) return 1;
  return 0;
}

/* The operator's headline metrics (issue 46.8), in this order, each the first of its names that
 * both files hold; "unserved demand" falls back to the sum jobs_balked + jobs_reneged per
 * replication. Then any overall metric the file marks headline (its /metrics `headline`
 * attribute) that is not already listed. */
typedef struct rpt__head {
  const char *what;           /* words, when the file has no label */
  const char *const names[4]; /* the first one present is used */
  const char *const sum[3];   /* else the sum of these, when all are present */
} rpt__head;
static const rpt__head rpt__heads[] = {
    {"platform revenue", {"platform_revenue", NULL}, {NULL}},
    {"providers in the market", {"providers_mean", "providers", NULL}, {NULL}},
    {"jobs served", {"jobs_served", NULL}, {NULL}},
    {"unserved demand", {"jobs_unserved", NULL}, {"jobs_balked", "jobs_reneged", NULL}},
    {"client price per GPU-hour", {"client_price_per_gpu_h", "client_price", "price_mean", NULL}, {NULL}},
    {"total welfare", {"total_welfare", "welfare", NULL}, {NULL}},
};
#define RPT_NHEADS (sizeof rpt__heads / sizeof rpt__heads[0])

static int rpt__significant(const rpt_diff *d) { return isfinite(d->diff.lo) && (d->diff.lo > 0 || d->diff.hi < 0); }

/* compare.png's order (issue 46.8): changes whose interval excludes 0 first, then by the size of
 * the relative change; a significant change is never dropped for an insignificant one. */
static int rpt__cmp_sig_rel(const void *a, const void *b) {
  const rpt_diff *x = *(rpt_diff *const *)a, *y = *(rpt_diff *const *)b;
  int sx = rpt__significant(x), sy = rpt__significant(y);
  if (sx != sy) return sy - sx;
  double u = isfinite(x->rel) ? fabs(x->rel) : -1, v = isfinite(y->rel) ? fabs(y->rel) : -1;
  return (u < v) - (u > v);
}

/* The paired difference of the per-replication sum of metrics kb[0..nk) of b and ka[0..nk) of a
 * (one metric when nk is 1), durations in the page's time unit. xb, xa: n doubles of scratch. */
static void rpt__pair(rpt_file *b, rpt_file *a, const int *kb, const int *ka, int nk, int n, double page_s,
                      const char *pu, double *xb, double *xa, const char *name, const char *words, rpt_diff *e) {
  unsigned nb = rpt_nmetrics(b), na = rpt_nmetrics(a);
  const char *shown;
  double conv = rpt__shown(rpt_metric_unit(b, (unsigned)kb[0]), page_s, pu, &shown);
  for (int r = 0; r < n; r++) {
    xb[r] = xa[r] = 0;
    for (int j = 0; j < nk; j++) {
      xb[r] += rpt_metric_values(b)[(size_t)r * nb + (unsigned)kb[j]] * conv;
      xa[r] += rpt_metric_values(a)[(size_t)r * na + (unsigned)ka[j]] * conv;
    }
  }
  memset(e, 0, sizeof *e);
  snprintf(e->name, sizeof e->name, "%s", name);
  snprintf(e->unit, sizeof e->unit, "%s", shown);
  if (words)
    snprintf(e->words, sizeof e->words, "%s", words);
  else
    rpt_metric_words(name, rpt_metric_label(b, (unsigned)kb[0]), NULL, e->words, sizeof e->words);
  rpt_ci_t(xb, (size_t)n, 1, &e->before);
  rpt_ci_t(xa, (size_t)n, 1, &e->after);
  /* before and after within the quantity's range (a wait is not negative), as in reports; the
   * paired difference can take either sign */
  double rlo, rhi;
  rpt_metric_range(nk == 1 ? name : rpt_metric_name(b, (unsigned)kb[0]), rpt_metric_unit(b, (unsigned)kb[0]), &rlo,
                   &rhi);
  rpt_ci_clip(&e->before, rlo, rhi);
  rpt_ci_clip(&e->after, rlo, rhi);
  rpt_ci_paired(xb, xa, (size_t)n, 1, &e->diff);
  e->rel = e->before.mean != 0 ? e->diff.mean / fabs(e->before.mean) : NAN;
}

/* The operator's headline metrics that both files hold, in rpt__heads' order, then those the
 * file marks headline. *out: malloc'd (free it); returns how many. */
static size_t rpt__headlines(rpt_file *b, rpt_file *a, int n, double page_s, const char *pu, double *xb, double *xa,
                             rpt_diff **out) {
  unsigned nb = rpt_nmetrics(b);
  rpt_diff *h = calloc(RPT_NHEADS + nb + 1, sizeof *h);
  *out = h;
  if (!h) return 0;
  size_t nh = 0;
  for (size_t i = 0; i < RPT_NHEADS; i++) {
    const rpt__head *H = &rpt__heads[i];
    int kb[2], ka[2], found = 0;
    for (size_t j = 0; H->names[j] && !found; j++) {
      kb[0] = rpt_metric_find(b, H->names[j]);
      ka[0] = rpt_metric_find(a, H->names[j]);
      if (kb[0] >= 0 && ka[0] >= 0) { /* words: the file's label, else ours for the preferred name */
        const char *lab = rpt_metric_label(b, (unsigned)kb[0]);
        rpt__pair(b, a, kb, ka, 1, n, page_s, pu, xb, xa, H->names[j],
                  lab[0]   ? lab
                  : j == 0 ? H->what
                           : NULL,
                  &h[nh++]);
        found = 1;
      }
    }
    if (found || !H->sum[0]) continue;
    int nk = 0, all = 1;
    char name[64] = "";
    for (size_t j = 0; H->sum[j] && all; j++, nk++) {
      kb[nk] = rpt_metric_find(b, H->sum[j]);
      ka[nk] = rpt_metric_find(a, H->sum[j]);
      all = kb[nk] >= 0 && ka[nk] >= 0;
      size_t o = strlen(name);
      snprintf(name + o, sizeof name - o, "%s%s", j ? "+" : "", H->sum[j]);
    }
    if (all) rpt__pair(b, a, kb, ka, nk, n, page_s, pu, xb, xa, name, H->what, &h[nh++]);
  }
  for (unsigned k = 0; k < nb; k++) { /* marked headline in the file, overall (no dimension) */
    if (rpt_metric_headline(b, k) != 1 || strchr(rpt_metric_name(b, k), '.')) continue;
    int ka = rpt_metric_find(a, rpt_metric_name(b, k)), kb = (int)k;
    size_t j;
    for (j = 0; j < nh && strcmp(h[j].name, rpt_metric_name(b, k)); j++) {}
    if (ka < 0 || j < nh) continue;
    rpt__pair(b, a, &kb, &ka, 1, n, page_s, pu, xb, xa, rpt_metric_name(b, k), NULL, &h[nh++]);
  }
  return nh;
}

/* One line of words for a headline change: what it was, what it became, and whether the 95%
 * interval of the paired change excludes 0. */
static void rpt__head_words(const rpt_diff *d, char *buf, size_t len) {
  char bm[32], am[32], dm[32], lo[32], hi[32], rel[40] = "";
  rpt__fmt(bm, sizeof bm, d->before.mean);
  rpt__fmt(am, sizeof am, d->after.mean);
  rpt__fmt(dm, sizeof dm, fabs(d->diff.mean));
  rpt__fmt(lo, sizeof lo, d->diff.lo);
  rpt__fmt(hi, sizeof hi, d->diff.hi);
  if (isfinite(d->rel)) snprintf(rel, sizeof rel, ", %+.1f%%", 100 * d->rel);
  const char *u = strcmp(d->unit, "1") ? d->unit : "", *sp = u[0] ? " " : "";
  if (!isfinite(d->diff.lo))
    snprintf(buf, len, "%s: %s to %s%s%s; one pair of replications, no interval.", d->words, bm, am, sp, u);
  else if (rpt__significant(d))
    snprintf(buf, len, "%s %s by %s%s%s (%s to %s%s); its 95%% interval, [%s, %s], excludes 0.", d->words,
             d->diff.mean > 0 ? "rose" : "fell", dm, sp, u, bm, am, rel, lo, hi);
  else
    snprintf(buf, len, "%s: no clear change (%s to %s%s%s%s); its 95%% interval, [%s, %s], includes 0.", d->words, bm,
             am, sp, u, rel, lo, hi);
}

/* Draws compare.png and .svg: the headline metrics (hd, nh) and the other metrics an operator looks
 * at (rpt__headline), significant changes first, then by size. 0, or -1 (out of memory), -2 (its
 * files could not be written whole), with a message in errbuf. Nothing to draw: skipped (0). */
static int rpt__compare_fig(const rpt_options *opt, rpt_diff *d, size_t n, rpt_diff *hd, size_t nh, int npairs,
                            const char *bname, const char *aname, FILE *log, char *errbuf, size_t errlen) {
  rpt_diff **sel = malloc((n + nh + 1) * sizeof *sel);
  if (!sel) {
    snprintf(errbuf, errlen, "out of memory");
    return -1;
  }
  /* The headline metrics always (a sum such as balked + reneged has no row of its own: from hd),
   * then up to 24 bars in all of the others an operator looks at, significant ones first. */
  size_t ns = 0, nhs;
  for (size_t i = 0; i < nh; i++)
    if (isfinite(hd[i].rel)) {
      size_t j;
      for (j = 0; j < n && strcmp(d[j].name, hd[i].name); j++) {}
      if (j < n) memcpy(d[j].words, hd[i].words, sizeof d[j].words); /* the headline's words */
      sel[ns++] = j < n ? &d[j] : &hd[i];
    }
  nhs = ns;
  for (int any = 0; any < 2 && ns == nhs; any++) /* no such metric: any metric */
    for (size_t i = 0; i < n; i++) {
      if ((!any && !rpt__headline(d[i].name)) || !isfinite(d[i].rel)) continue;
      size_t j;
      for (j = 0; j < ns && sel[j] != &d[i]; j++) {}
      if (j == ns) sel[ns++] = &d[i];
    }
  qsort(sel + nhs, ns - nhs, sizeof *sel, rpt__cmp_sig_rel);
  if (ns > 24) ns = nhs > 24 ? nhs : 24;
  qsort(sel, ns, sizeof *sel, rpt__cmp_sig_rel);
  if (!ns) {
    fprintf(log, "skipped figure 'compare': no metric with a non-zero mean before the change\n");
    free(sel);
    return 0;
  }
  char *body = NULL;
  size_t len;
  FILE *g = open_memstream(&body, &len);
  if (!g) {
    free(sel);
    snprintf(errbuf, errlen, "out of memory");
    return -1;
  }
  /* Relative change in %: 100 * (mean_after - mean_before) / |mean_before|, its interval scaled alike. */
  for (int s = 0; s < 2; s++) {
    fprintf(g, "$d%d << EOD\n", s);
    size_t m = 0;
    for (size_t i = 0; i < ns; i++) {
      if (rpt__significant(sel[i]) != s) continue;
      double k = 100.0 / fabs(sel[i]->before.mean), y = (double)(ns - 1 - i);
      double lo = isfinite(sel[i]->diff.lo) ? sel[i]->diff.lo * k : sel[i]->rel * 100;
      double hi = isfinite(sel[i]->diff.hi) ? sel[i]->diff.hi * k : sel[i]->rel * 100;
      fprintf(g, "%.9g %.9g %.9g %.9g %.3f %.3f\n", sel[i]->rel * 100, y, lo, hi, y - 0.35, y + 0.35);
      m++;
    }
    if (!m) fputs("NaN NaN NaN NaN NaN NaN\n", g);
    fputs("EOD\n", g);
  }
  rpt__gp_set(g, "title", "%s -> %s, paired over %d replication%s", bname, aname, npairs, npairs == 1 ? "" : "s");
  fputs("set xlabel 'change of the mean, % of the value before (whiskers: 95% CI of the paired change)' offset -8,0\n"
        "set ylabel ''\nset ytics (",
        g);
  size_t wmax = 10;
  for (size_t i = 0; i < ns; i++) {
    const char *w = sel[i]->words;
    if (strlen(w) > wmax) wmax = strlen(w);
    fputs(i ? ", " : "", g);
    rpt__gp_str(g, w);
    fprintf(g, " %zu", ns - 1 - i);
  }
  /* the left margin holds the longest name (gnuplot's character unit is wider than most letters) */
  fprintf(g,
          ")\nset yrange [-0.7:%zu.7]\nset grid noytics\nset yzeroaxis lt -1 lw 1.5\nset key outside bottom center "
          "horizontal\nset lmargin %d\n",
          ns - 1, (int)(wmax * 0.85) + 3 > 80 ? 80 : (int)(wmax * 0.85) + 3);
  fputs("plot $d1 using 1:2:($1<0?$1:0):($1<0?0:$1):5:6 with boxxyerror fs solid 0.8 noborder lc rgb '#0072B2' title "
        "'95% CI excludes 0', $d0 using 1:2:($1<0?$1:0):($1<0?0:$1):5:6 with boxxyerror fs solid 0.8 noborder lc rgb "
        "'#BBBBBB' "
        "title 'CI includes 0', $d1 using 1:2:3:4 with xerrorbars lc rgb 'black' dt 1 pt 0 lw 1.5 notitle, $d0 using "
        "1:2:3:4 with "
        "xerrorbars lc rgb 'black' dt 1 pt 0 lw 1.5 notitle\n",
        g);
  fclose(g);
  int height = 200 + 28 * (int)ns;
  if (height < 450) height = 450;
  char err[256];
  const char *gp = rpt__gp_program(opt->gnuplot);
  int gr = 0;
  if (opt->script)
    opt->script(opt->script_ctx, "compare", body);
  else
    gr = rpt__gp_render(gp, opt->outdir, "compare", height, body, err, sizeof err);
  if (gr)
    fprintf(log, "figure 'compare' failed: %s\n", err);
  else if (!opt->quiet)
    fprintf(log, "wrote %s/compare.png and .svg\n", opt->outdir);
  free(body);
  free(sel);
  if (gr == -2) snprintf(errbuf, errlen, "%s: figure 'compare': %s", opt->outdir, err);
  return gr == -2 ? -2 : 0; /* gnuplot failing on the script is reported above, not a write error */
}

/* One row of the table: on the terminal (control characters shown as '?'), Markdown and CSV. */
static void rpt__row(const rpt_diff *d, size_t w, FILE *tab, FILE *md, FILE *csv) {
  char bm[32], am[32], dm[32], lo[32], hi[32], ci[80], rel[32];
  rpt__fmt(bm, sizeof bm, d->before.mean);
  rpt__fmt(am, sizeof am, d->after.mean);
  rpt__fmt(dm, sizeof dm, d->diff.mean);
  rpt__fmt(lo, sizeof lo, d->diff.lo);
  rpt__fmt(hi, sizeof hi, d->diff.hi);
  snprintf(ci, sizeof ci, "[%s, %s]%s", lo, hi, rpt__significant(d) ? " *" : "");
  if (isfinite(d->rel))
    snprintf(rel, sizeof rel, "%+.2f%%", 100 * d->rel);
  else
    snprintf(rel, sizeof rel, "-");
  if (tab) {
    char name[64], unit[24];
    snprintf(name, sizeof name, "%s", d->name);
    snprintf(unit, sizeof unit, "%s", d->unit);
    rpt__term(name);
    rpt__term(unit);
    fprintf(tab, "%-*s %-10s %12s %12s %12s %-27s %8s\n", (int)w, name, unit, bm, am, dm, ci, rel);
  }
  if (md) {
    fputs("| ", md);
    rpt__md(md, d->name);
    fputs(" | ", md);
    rpt__md(md, d->unit);
    fprintf(md, " | %s | %s | %s %s | %s |\n", bm, am, dm, ci, rel);
  }
  if (csv) {
    rpt_csv_field(csv, d->name);
    fputc(',', csv);
    rpt_csv_field(csv, d->unit);
    fprintf(csv, ",%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%d\n", d->before.mean, d->before.lo,
            d->before.hi, d->after.mean, d->after.lo, d->after.hi, d->diff.mean, d->diff.lo, d->diff.hi, d->rel,
            d->diff.n);
  }
}

/* The headline block that leads the printed table and compare.md. */
static void rpt__head_block(const rpt_diff *hd, size_t nh, const char *world, FILE *tab, FILE *md) {
  if (!nh) {
    if (tab)
      fputs("Headline: neither file has the operator's headline metrics (platform_revenue, providers_mean, "
            "jobs_served, ...)\n\n",
            tab);
    if (md) fputs("## Headline\n\nNeither file has the operator's headline metrics.\n\n", md);
    return;
  }
  if (tab) fprintf(tab, "Headline%s%s:\n", world[0] ? ", " : "", world);
  if (md) {
    fputs("## Headline\n\n", md);
    if (world[0]) {
      rpt__md(md, world);
      fputs(".\n\n", md);
    }
    fputs("| metric | unit | before | after | change [95% CI] | change % | in words |\n|---|---|---|---|---|---|---|\n",
          md);
  }
  for (size_t i = 0; i < nh; i++) {
    char line[512], bm[32], am[32], dm[32], lo[32], hi[32], rel[32] = "-";
    rpt__head_words(&hd[i], line, sizeof line);
    if (tab) {
      char t[512];
      snprintf(t, sizeof t, "%s", line);
      rpt__term(t);
      fprintf(tab, "  %s\n", t);
    }
    if (!md) continue;
    rpt__fmt(bm, sizeof bm, hd[i].before.mean);
    rpt__fmt(am, sizeof am, hd[i].after.mean);
    rpt__fmt(dm, sizeof dm, hd[i].diff.mean);
    rpt__fmt(lo, sizeof lo, hd[i].diff.lo);
    rpt__fmt(hi, sizeof hi, hd[i].diff.hi);
    if (isfinite(hd[i].rel)) snprintf(rel, sizeof rel, "%+.2f%%", 100 * hd[i].rel);
    fputs("| ", md);
    rpt__md(md, hd[i].words);
    fputs(" (`", md);
    rpt__md(md, hd[i].name);
    fputs("`) | ", md);
    rpt__md(md, hd[i].unit);
    fprintf(md, " | %s | %s | %s [%s, %s]%s | %s | ", bm, am, dm, lo, hi, rpt__significant(&hd[i]) ? " *" : "", rel);
    rpt__md(md, line);
    fputs(" |\n", md);
  }
  if (tab) fputc('\n', tab);
  if (md) fputc('\n', md);
}

int rpt_compare(const char *before, const char *after, const rpt_options *opt, FILE *tab, rpt_diff **diffs,
                size_t *ndiffs, int *seeds_match, char *err, size_t errlen) {
  *diffs = NULL;
  *ndiffs = 0;
  *seeds_match = 0;
  FILE *log = opt->log ? opt->log : stdout;
  rpt_file *b = NULL, *a = NULL;
  rpt_diff *hd = NULL;
  size_t nh = 0;
  int rc = rpt_open(before, &b, err, errlen);
  if (!rc) rc = rpt_open(after, &a, err, errlen);
  if (!rc && (rpt_file_kind(b) != RPT_RESULTS || rpt_file_kind(a) != RPT_RESULTS)) {
    snprintf(err, errlen,
             "%s: a sweep file; compare needs two results files of `spotlab run` (or two points of a sweep)",
             rpt_file_kind(b) != RPT_RESULTS ? before : after);
    rc = SIM_EFORMAT;
  }
  if (!rc && strcmp(rpt_model(b), rpt_model(a))) {
    snprintf(err, errlen, "%s and %s come from different models (%s, %s): compare needs two runs of the same model",
             before, after, rpt_model(b), rpt_model(a));
    rc = SIM_EFORMAT;
  }
  if (rc) goto done;
  int n = rpt_nreps(b) < rpt_nreps(a) ? rpt_nreps(b) : rpt_nreps(a);
  if (rpt_nreps(b) != rpt_nreps(a))
    fprintf(stderr, "spotlab compare: %s has %d replications, %s has %d: pairing the first %d\n", before, rpt_nreps(b),
            after, rpt_nreps(a), n);
  int same = 1;
  for (int r = 0; r < n; r++) same &= rpt_rep_seed(b, r) == rpt_rep_seed(a, r);
  *seeds_match = same;
  if (!same)
    fprintf(stderr,
            "spotlab compare: warning: the replications' seeds differ (base seeds %llu and %llu): the pairs do not "
            "share random numbers, so the intervals are valid but wider than with common random numbers (use the "
            "same --seed for both runs)\n",
            (unsigned long long)rpt_seed(b), (unsigned long long)rpt_seed(a));
  unsigned nb = rpt_nmetrics(b), na = rpt_nmetrics(a);
  rpt_diff *d = calloc(nb ? nb : 1, sizeof *d);
  double *xb = malloc(((size_t)n + 1) * sizeof *xb), *xa = malloc(((size_t)n + 1) * sizeof *xa);
  if (!d || !xb || !xa) {
    free(d);
    free(xb);
    free(xa);
    snprintf(err, errlen, "out of memory");
    rc = SIM_ENOMEM;
    goto done;
  }
  size_t nd = 0;
  unsigned only_before = 0, twice = 0;
  /* durations in the page's one time unit (hours; days for runs over 30 days), as in reports */
  const char *pu;
  double page_s = rpt__page_time(b, &pu);
  for (unsigned k = 0; k < nb; k++) {
    int j = rpt_metric_find(a, rpt_metric_name(b, k));
    if (j < 0) {
      only_before++;
      continue;
    }
    if (rpt_metric_find(b, rpt_metric_name(b, k)) != (int)k) { /* a name the file holds twice: one row */
      twice++;
      continue;
    }
    int kb = (int)k;
    rpt__pair(b, a, &kb, &j, 1, n, page_s, pu, xb, xa, rpt_metric_name(b, k), NULL, &d[nd++]);
  }
  nh = rpt__headlines(b, a, n, page_s, pu, xb, xa, &hd);
  free(xb);
  free(xa);
  if (twice)
    fprintf(stderr, "spotlab compare: %s names %u metric%s twice: compared once (the first)\n", before, twice,
            twice == 1 ? "" : "s");
  unsigned only_after = 0;
  for (unsigned k = 0; k < na; k++)
    only_after += rpt_metric_find(a, rpt_metric_name(a, k)) == (int)k && rpt_metric_find(b, rpt_metric_name(a, k)) < 0;
  if (only_before || only_after)
    fprintf(stderr, "spotlab compare: %u metric%s only in %s and %u only in %s are left out\n", only_before,
            only_before == 1 ? "" : "s", before, only_after, after);
  *diffs = d;
  *ndiffs = nd;
  if (nd == 0) {
    snprintf(err, errlen, "%s and %s have no metric in common: nothing to compare", before, after);
    rc = SIM_EFORMAT;
    goto done;
  }
  /* A run of several policy worlds (market.compare_policies): its overall metrics are the first
   * world's; say so wherever they are shown. */
  char first[64], world[200] = "";
  int nw = rpt_worlds(b, first, sizeof first);
  if (nw > 1)
    snprintf(world, sizeof world,
             "metrics without .policy. are those of the first policy world, '%s' (of %d in market.compare_policies)",
             first, nw);

  /* The table: on `tab`, and as Markdown and CSV in outdir. */
  size_t w = 6;
  for (size_t i = 0; i < nd; i++)
    if (strlen(d[i].name) > w) w = strlen(d[i].name);
  if (tab) {
    fprintf(tab, "%s -> %s: %d paired replication%s, seeds %s\n\n", before, after, n, n == 1 ? "" : "s",
            same ? "match (common random numbers)" : "DIFFER (independent pairs)");
    rpt__head_block(hd, nh, world, tab, NULL);
    fprintf(tab, "Every metric both files hold:\n");
    fprintf(tab, "%-*s %-10s %12s %12s %12s %-27s %8s\n", (int)w, "metric", "unit", "before", "after", "change",
            "95% CI of change", "change%");
  }
  FILE *md = NULL, *csv = NULL;
  char path[4096], mdp[4096], csvp[4096], mdt[4200], csvt[4200];
  struct stat st;
  if (opt->outdir && (mkdir(opt->outdir, 0777) == 0 || (stat(opt->outdir, &st) == 0 && S_ISDIR(st.st_mode)))) {
    snprintf(mdp, sizeof mdp, "%s/compare.md", opt->outdir);
    md = rpt__wopen(mdp, mdt, sizeof mdt);
    snprintf(csvp, sizeof csvp, "%s/compare.csv", opt->outdir);
    csv = rpt__wopen(csvp, csvt, sizeof csvt);
  }
  if (opt->outdir && (!md || !csv)) {
    snprintf(err, errlen, "%s: cannot write compare.md and compare.csv there", opt->outdir);
    rc = SIM_EIO;
  }
  if (md) {
    fputs("# ", md);
    rpt__md(md, after);
    fputs(" compared with ", md);
    rpt__md(md, before);
    fprintf(md,
            "\n\nPaired over %d replication%s; seeds %s. Change = after - before, with the 95%% paired-t confidence "
            "interval; * marks changes whose interval excludes 0.\n\n",
            n, n == 1 ? "" : "s", same ? "match (common random numbers)" : "differ (independent pairs)");
    rpt__head_block(hd, nh, world, NULL, md);
    fputs("## Every metric both files hold\n\n", md);
    if (world[0]) {
      rpt__md(md, world);
      fputs(".\n\n", md);
    }
    fputs("| metric | unit | before | after | change [95% CI] | change % |\n|---|---|---|---|---|---|\n", md);
  }
  if (csv)
    fputs("metric,unit,before_mean,before_ci95_lo,before_ci95_hi,after_mean,after_ci95_lo,after_ci95_hi,change_mean,"
          "change_ci95_lo,change_ci95_hi,change_rel,n\n",
          csv);
  for (size_t i = 0; i < nd; i++) rpt__row(&d[i], w, tab, md, csv);
  size_t nsig = 0;
  for (size_t i = 0; i < nd; i++) nsig += (size_t)rpt__significant(&d[i]);
  if (tab) fprintf(tab, "\n%zu of %zu changes have a 95%% interval that excludes 0 (marked *)\n", nsig, nd);
  if (md || csv) { /* a table that could not be written whole is not left behind */
    int bad = 0;   /* both are closed, whatever the first says */
    if (md) bad |= rpt__wclose(md, mdt, mdp) != 0;
    if (csv) bad |= rpt__wclose(csv, csvt, csvp) != 0;
    int e = errno;
    if (bad && !rc) {
      rc = SIM_EIO;
      snprintf(err, errlen, "%s: writing compare.md and compare.csv failed (%s)", opt->outdir, strerror(e ? e : EIO));
      snprintf(path, sizeof path, "%s/compare.md", opt->outdir);
      unlink(path);
      snprintf(path, sizeof path, "%s/compare.csv", opt->outdir);
      unlink(path);
    }
  }
  if (!rc && opt->outdir) {
    if (!opt->quiet) fprintf(log, "wrote %s/compare.md and %s/compare.csv\n", opt->outdir, opt->outdir);
    if (opt->script || rpt_gnuplot_available(opt->gnuplot)) {
      if (rpt__compare_fig(opt, d, nd, hd, nh, n, before, after, log, err, errlen)) rc = SIM_EIO;
    } else
      fprintf(log, "gnuplot not found ('%s'): the figure was skipped, the tables are written\n",
              rpt__gp_program(opt->gnuplot));
  }
done:
  free(hd);
  rpt_close(b);
  rpt_close(a);
  return rc;
}
