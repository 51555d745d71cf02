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

static int rpt__cmp_absrel(const void *a, const void *b) {
  const rpt_diff *x = *(rpt_diff *const *)a, *y = *(rpt_diff *const *)b;
  double u = isfinite(x->rel) ? fabs(x->rel) : -1, v = isfinite(y->rel) ? fabs(y->rel) : -1;
  return (u < v) - (u > v);
}

static int rpt__significant(const rpt_diff *d) { return isfinite(d->diff.lo) && (d->diff.lo > 0 || d->diff.hi < 0); }

/* Draws compare.png and .svg. 0, or -1 (out of memory), -2 (its files could not be written whole),
 * with a message in errbuf. A figure with nothing to draw is skipped (0). */
static int rpt__compare_fig(const rpt_options *opt, rpt_diff *d, size_t n, int npairs, const char *bname,
                            const char *aname, FILE *log, char *errbuf, size_t errlen) {
  /* Up to 24 metrics: headline ones first, by the size of the relative change. */
  rpt_diff **sel = malloc((n ? n : 1) * sizeof *sel);
  if (!sel) {
    snprintf(errbuf, errlen, "out of memory");
    return -1;
  }
  size_t ns = 0;
  for (size_t i = 0; i < n; i++)
    if (rpt__headline(d[i].name) && isfinite(d[i].rel)) sel[ns++] = &d[i];
  if (!ns)
    for (size_t i = 0; i < n; i++)
      if (isfinite(d[i].rel)) sel[ns++] = &d[i];
  qsort(sel, ns, sizeof *sel, rpt__cmp_absrel);
  if (ns > 24) ns = 24;
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
  char t[512];
  snprintf(t, sizeof t, "%s -> %s, paired over %d replication%s", bname, aname, npairs, npairs == 1 ? "" : "s");
  fputs("set title ", g);
  rpt__gp_str(g, t);
  fputs("\nset xlabel 'change of the mean, % of the value before (whiskers: 95% CI of the paired change)'\nset ylabel "
        "''\nset ytics (",
        g);
  for (size_t i = 0; i < ns; i++) {
    fputs(i ? ", " : "", g);
    rpt__gp_str(g, sel[i]->name);
    fprintf(g, " %zu", ns - 1 - i);
  }
  fprintf(g,
          ")\nset yrange [-0.7:%zu.7]\nset grid noytics\nset yzeroaxis lt -1 lw 1.5\nset key outside bottom center "
          "horizontal\n"
          "set lmargin 40\n",
          ns - 1);
  fputs("plot $d1 using 1:2:($1<0?$1:0):($1<0?0:$1):5:6 with boxxyerror fs solid 0.8 noborder lc rgb '#0072B2' title "
        "'95% CI excludes 0', $d0 using 1:2:($1<0?$1:0):($1<0?0:$1):5:6 with boxxyerror fs solid 0.8 noborder lc rgb "
        "'#BBBBBB' "
        "title 'CI includes 0', $d1 using 1:2:3:4 with xerrorbars lc rgb 'black' pt 0 lw 1.5 notitle, $d0 using "
        "1:2:3:4 with "
        "xerrorbars lc rgb 'black' pt 0 lw 1.5 notitle\n",
        g);
  fclose(g);
  int height = 200 + 28 * (int)ns;
  if (height < 450) height = 450;
  char err[256];
  const char *gp = rpt__gp_program(opt->gnuplot);
  int gr = rpt__gp_render(gp, opt->outdir, "compare", height, body, err, sizeof err);
  if (gr)
    fprintf(log, "figure 'compare' failed: %s\n", err);
  else if (!opt->quiet)
    fprintf(log, "wrote %s/compare.png and .svg\n", opt->outdir);
  free(body);
  free(sel);
  if (gr == -2) snprintf(errbuf, errlen, "%s: figure 'compare': %s", opt->outdir, err);
  return gr == -2 ? -2 : 0; /* gnuplot failing on the script is reported above, not a write error */
}

int rpt_compare(const char *before, const char *after, const rpt_options *opt, FILE *tab, rpt_diff **diffs,
                size_t *ndiffs, int *seeds_match, char *err, size_t errlen) {
  *diffs = NULL;
  *ndiffs = 0;
  *seeds_match = 0;
  FILE *log = opt->log ? opt->log : stdout;
  rpt_file *b = NULL, *a = NULL;
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
  unsigned only_before = 0;
  /* durations in the page's one time unit (hours; days for runs over 30 days), as in reports */
  const char *pu;
  double page_s = rpt__page_time(b, &pu);
  for (unsigned k = 0; k < nb; k++) {
    int j = rpt_metric_find(a, rpt_metric_name(b, k));
    if (j < 0) {
      only_before++;
      continue;
    }
    const char *shown;
    double conv = rpt__shown(rpt_metric_unit(b, k), page_s, pu, &shown);
    for (int r = 0; r < n; r++) {
      xb[r] = rpt_metric_values(b)[(size_t)r * nb + k] * conv;
      xa[r] = rpt_metric_values(a)[(size_t)r * na + (unsigned)j] * conv;
    }
    rpt_diff *e = &d[nd++];
    snprintf(e->name, sizeof e->name, "%s", rpt_metric_name(b, k));
    snprintf(e->unit, sizeof e->unit, "%s", shown);
    rpt_ci_t(xb, (size_t)n, 1, &e->before);
    rpt_ci_t(xa, (size_t)n, 1, &e->after);
    /* before and after within the quantity's range (a wait is not negative), as in reports; the
     * paired difference can take either sign */
    double rlo, rhi;
    rpt_metric_range(e->name, rpt_metric_unit(b, k), &rlo, &rhi);
    rpt_ci_clip(&e->before, rlo, rhi);
    rpt_ci_clip(&e->after, rlo, rhi);
    rpt_ci_paired(xb, xa, (size_t)n, 1, &e->diff);
    e->rel = e->before.mean != 0 ? e->diff.mean / fabs(e->before.mean) : NAN;
  }
  free(xb);
  free(xa);
  if (only_before || na > nb - only_before)
    fprintf(stderr, "spotlab compare: %u metric%s only in %s and %u only in %s are left out\n", only_before,
            only_before == 1 ? "" : "s", before, na - (nb - only_before), after);
  *diffs = d;
  *ndiffs = nd;
  if (nd == 0) {
    snprintf(err, errlen, "%s and %s have no metric in common: nothing to compare", before, after);
    rc = SIM_EFORMAT;
    goto done;
  }

  /* The table: on `tab`, and as Markdown and CSV in outdir. */
  size_t w = 6;
  for (size_t i = 0; i < nd; i++)
    if (strlen(d[i].name) > w) w = strlen(d[i].name);
  if (tab) {
    fprintf(tab, "%s -> %s: %d paired replication%s, seeds %s\n\n", before, after, n, n == 1 ? "" : "s",
            same ? "match (common random numbers)" : "DIFFER (independent pairs)");
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
    fprintf(md,
            "# %s compared with %s\n\nPaired over %d replication%s; seeds %s. Change = after - before, with the 95%% "
            "paired-t confidence interval; * marks changes whose interval excludes 0.\n\n",
            after, before, n, n == 1 ? "" : "s", same ? "match (common random numbers)" : "differ (independent pairs)");
    fputs("| metric | unit | before | after | change [95% CI] | change % |\n|---|---|---|---|---|---|\n", md);
  }
  if (csv)
    fputs("metric,unit,before_mean,before_ci95_lo,before_ci95_hi,after_mean,after_ci95_lo,after_ci95_hi,change_mean,"
          "change_ci95_lo,change_ci95_hi,change_rel,n\n",
          csv);
  for (size_t i = 0; i < nd; i++) {
    char bm[32], am[32], dm[32], lo[32], hi[32], ci[80], rel[32];
    rpt__fmt(bm, sizeof bm, d[i].before.mean);
    rpt__fmt(am, sizeof am, d[i].after.mean);
    rpt__fmt(dm, sizeof dm, d[i].diff.mean);
    rpt__fmt(lo, sizeof lo, d[i].diff.lo);
    rpt__fmt(hi, sizeof hi, d[i].diff.hi);
    snprintf(ci, sizeof ci, "[%s, %s]%s", lo, hi, rpt__significant(&d[i]) ? " *" : "");
    if (isfinite(d[i].rel))
      snprintf(rel, sizeof rel, "%+.2f%%", 100 * d[i].rel);
    else
      snprintf(rel, sizeof rel, "-");
    if (tab) fprintf(tab, "%-*s %-10s %12s %12s %12s %-27s %8s\n", (int)w, d[i].name, d[i].unit, bm, am, dm, ci, rel);
    if (md) fprintf(md, "| %s | %s | %s | %s | %s %s | %s |\n", d[i].name, d[i].unit, bm, am, dm, ci, rel);
    if (csv)
      fprintf(csv, "%s,%s,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%d\n", d[i].name, d[i].unit,
              d[i].before.mean, d[i].before.lo, d[i].before.hi, d[i].after.mean, d[i].after.lo, d[i].after.hi,
              d[i].diff.mean, d[i].diff.lo, d[i].diff.hi, d[i].rel, d[i].diff.n);
  }
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
    if (rpt_gnuplot_available(opt->gnuplot)) {
      if (rpt__compare_fig(opt, d, nd, n, before, after, log, err, errlen)) rc = SIM_EIO;
    } else
      fprintf(log, "gnuplot not found ('%s'): the figure was skipped, the tables are written\n",
              rpt__gp_program(opt->gnuplot));
  }
done:
  rpt_close(b);
  rpt_close(a);
  return rc;
}
