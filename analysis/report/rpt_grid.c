/* rpt_grid.c - the figures of a sweep over a grid of several keys (`spotlab sweep --param A=..
 * --param B=..`, issue 47.4): each quantity against each swept key in turn.
 *
 * Against key K, the points that share the values of the other keys form one line (numeric x
 * when every value of K is a number, categories otherwise), each point with its own 95% band, as
 * in a one-key sweep. A quantity without a dimension draws one line per combination of the other
 * keys' values in one panel. A quantity with a dimension (one line per policy, persona, ...)
 * draws its dimension's lines in one panel per combination of the other keys' values, every
 * panel on the same y range: the policies are compared within a panel, where the answer is
 * (which one is cheapest at this level of K), and the other keys move the panels, not the
 * colours (five policies times three levels of another key as fifteen lines would be unreadable).
 * A key with one value (the same at every point) is not a key to draw against; the captions name
 * it with its value. */
#include "analysis/report/rpt_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define RPT_GRID_SERIES 12 /* lines per panel, as in the other figures */
#define RPT_GRID_PANELS 9  /* panels per figure (3 x 3) */

/* A value as shown in a figure: a quoted string's quotes dropped ("skype06" -> skype06). */
static void rpt__grid_shown(const char *lab, char *buf, size_t len) {
  size_t n = strlen(lab), cut = n >= 2 && lab[0] == '"' && lab[n - 1] == '"';
  if (n - 2 * cut >= len) n = len - 1 + 2 * cut; /* cut to the buffer */
  memcpy(buf, lab + cut, n - 2 * cut);
  buf[n - 2 * cut] = 0;
}

/* The unit of KEY in a results file's effective scenario (/meta/effective), whose lines are
 * "name = value;  # UNIT" inside "group = {" and list items "{ name = \"N\"; ... }": the
 * key's parts are matched against the groups, a list item by its name or index. "" when not
 * found. */
static void rpt__grid_key_unit(const char *eff, const char *key, char *unit, size_t ulen) {
  enum { DEPTH = 16 };
  char path[DEPTH][64], alt[DEPTH][64]; /* alt: a list item's name (path holds its index) */
  int depth = 0, items[DEPTH] = {0};
  unit[0] = 0;
  for (const char *l = eff; l && *l;) {
    const char *e = strchr(l, '\n');
    size_t n = e ? (size_t)(e - l) : strlen(l);
    char line[512];
    snprintf(line, sizeof line, "%.*s", (int)(n < sizeof line ? n : sizeof line - 1), l);
    l = e ? e + 1 : NULL;
    char *s = line + strspn(line, " \t");
    char name[64] = "";
    const char *eq = strstr(s, " = ");
    if (eq && (size_t)(eq - s) < sizeof name) snprintf(name, sizeof name, "%.*s", (int)(eq - s), s);
    if (*s == '}' || *s == ')') {
      if (depth > 0) depth--;
    } else if (*s == '{' || (eq && (!strcmp(eq + 3, "{") || !strcmp(eq + 3, "(")))) {
      if (depth == DEPTH) return;
      int item = *s == '{';
      if (item)
        snprintf(path[depth], sizeof path[depth], "%d", depth > 0 ? items[depth - 1]++ : 0);
      else
        snprintf(path[depth], sizeof path[depth], "%s", name);
      alt[depth][0] = 0;
      items[depth] = 0;
      depth++;
    } else if (name[0]) {
      if (depth > 0 && !strcmp(name, "name") && path[depth - 1][0] >= '0' && path[depth - 1][0] <= '9') {
        rpt__grid_shown(eq + 3, alt[depth - 1], sizeof alt[depth - 1]);
        char *semi = strrchr(alt[depth - 1], ';');
        if (semi) *semi = 0;
        size_t al = strlen(alt[depth - 1]); /* "\"katie\"" -> katie */
        if (al >= 2 && alt[depth - 1][0] == '"' && alt[depth - 1][al - 1] == '"') {
          memmove(alt[depth - 1], alt[depth - 1] + 1, al - 2);
          alt[depth - 1][al - 2] = 0;
        }
      }
      /* does path.name equal the key? */
      const char *k = key;
      int ok = 1;
      for (int i = 0; i < depth && ok; i++) {
        size_t pl = strlen(path[i]), al = strlen(alt[i]);
        if (!strncmp(k, path[i], pl) && k[pl] == '.')
          k += pl + 1;
        else if (al && !strncmp(k, alt[i], al) && k[al] == '.')
          k += al + 1;
        else
          ok = 0;
      }
      const char *hash = strstr(eq + 3, "  # ");
      if (ok && !strcmp(k, name) && hash) {
        snprintf(unit, ulen, "%s", hash + 4);
        if (!strcmp(unit, "1")) unit[0] = 0;
        return;
      }
    }
  }
}

void rpt__grid_free(rpt__grid *g) {
  for (unsigned k = 0; k < g->nkeys && g->ax; k++) {
    free(g->ax[k].vi);
    free(g->ax[k].first);
    free(g->ax[k].order);
    free(g->ax[k].combo);
    free(g->ax[k].cfirst);
  }
  free(g->ax);
  memset(g, 0, sizeof *g);
}

/* Combinations of the other varying keys' values, in the order of their first point: combo[p],
 * and the first point of each (first[c]); returns their number. */
static unsigned rpt__grid_combos(const rpt_sweep *s, const rpt__grid *g, unsigned key, unsigned *combo,
                                 unsigned *first) {
  unsigned nc = 0;
  for (unsigned p = 0; p < s->npoints; p++) {
    unsigned c;
    for (c = 0; c < nc; c++) {
      unsigned q = first[c], k;
      for (k = 0; k < g->nkeys; k++)
        if (k != key && g->ax[k].vi[p] != g->ax[k].vi[q]) break;
      if (k == g->nkeys) break;
    }
    if (c == nc) first[nc++] = p;
    combo[p] = c;
  }
  return nc;
}

int rpt__grid_make(const rpt_sweep *s, const char *effective, rpt__grid *g) {
  memset(g, 0, sizeof *g);
  if (s->nkeys < 2) return 0;
  g->nkeys = s->nkeys;
  g->ax = calloc(s->nkeys, sizeof *g->ax);
  if (!g->ax) return SIM_ENOMEM;
  unsigned np = s->npoints, nk = s->nkeys;
  for (unsigned k = 0; k < nk; k++) {
    rpt__gaxis *a = &g->ax[k];
    a->vi = calloc(np ? np : 1, sizeof *a->vi);
    a->first = calloc(np ? np : 1, sizeof *a->first);
    a->order = calloc(np ? np : 1, sizeof *a->order);
    a->combo = calloc(np ? np : 1, sizeof *a->combo);
    a->cfirst = calloc(np ? np : 1, sizeof *a->cfirst);
    if (!a->vi || !a->first || !a->order || !a->combo || !a->cfirst) {
      rpt__grid_free(g);
      return SIM_ENOMEM;
    }
    a->numeric = np > 0;
    for (unsigned p = 0; p < np; p++) {
      const char *lab = s->key_labels[(size_t)p * nk + k];
      unsigned v;
      for (v = 0; v < a->nv && strcmp(s->key_labels[(size_t)a->first[v] * nk + k], lab); v++) {}
      if (v == a->nv) a->first[a->nv++] = p;
      a->vi[p] = v;
      a->numeric &= isfinite(s->key_x[(size_t)p * nk + k]) != 0;
    }
    /* the order drawn: as given, or by value for numbers (insertion sort, stable) */
    for (unsigned v = 0; v < a->nv; v++) {
      unsigned i = v;
      double xv = s->key_x[(size_t)a->first[v] * nk + k];
      for (; i > 0 && a->numeric && s->key_x[(size_t)a->first[a->order[i - 1]] * nk + k] > xv; i--)
        a->order[i] = a->order[i - 1];
      a->order[i] = v;
    }
    if (a->numeric && effective) rpt__grid_key_unit(effective, s->keys[k], a->unit, sizeof a->unit);
    const char *last = strrchr(s->keys[k], '.');
    rpt_metric_words(last ? last + 1 : s->keys[k], "", a->numeric ? a->unit : "", a->words, sizeof a->words);
    if (a->nv >= 2) g->nvarying++;
  }
  for (unsigned k = 0; k < nk; k++) g->ax[k].nc = rpt__grid_combos(s, g, k, g->ax[k].combo, g->ax[k].cfirst);
  return 0;
}

/* "fit = skype06, standby k = 2": point p's values of the varying keys other than `skip`. */
static void rpt__grid_combo_label(const rpt_sweep *s, const rpt__grid *g, unsigned p, unsigned skip, char *buf,
                                  size_t len) {
  size_t o = 0;
  buf[0] = 0;
  for (unsigned k = 0; k < g->nkeys && o + 1 < len; k++) {
    if (k == skip || g->ax[k].nv < 2) continue;
    char v[128], w[160];
    const char *last = strrchr(s->keys[k], '.');
    rpt_metric_words(last ? last + 1 : s->keys[k], "", NULL, w, sizeof w);
    rpt__grid_shown(s->key_labels[(size_t)p * g->nkeys + k], v, sizeof v);
    int n = snprintf(buf + o, len - o, "%s%s = %s", o ? ", " : "", w, v);
    o += n > 0 ? (size_t)n : 0;
  }
}

/* One line's datablock: the points of combination c along the key (sorted by x), metric m. */
static void rpt__grid_block(FILE *o, const rpt_sweep *s, const rpt__grid *g, unsigned key, unsigned c, unsigned m,
                            double off, double conv, double *tmp, double *ylo, double *yhi) {
  const rpt__gaxis *a = &g->ax[key];
  const unsigned *combo = a->combo;
  double rlo, rhi; /* bands within what the quantity can be */
  rpt_metric_range(s->names[m], s->units[m], &rlo, &rhi);
  for (unsigned v = 0; v < a->nv; v++) {
    unsigned vv = a->order[v]; /* numbers in increasing order, so that the line runs left to right */
    for (unsigned p = 0; p < s->npoints; p++) {
      if (combo[p] != c || a->vi[p] != vv) continue;
      rpt_ci ci;
      for (int r = 0; r < s->reps; r++) tmp[r] = s->values[((size_t)p * s->reps + r) * s->nmetrics + m];
      rpt_ci_t(tmp, (size_t)s->reps, 1, &ci);
      rpt_ci_clip(&ci, rlo, rhi);
      ci.mean *= conv, ci.lo *= conv, ci.hi *= conv;
      double lo = isfinite(ci.lo) ? ci.lo : ci.mean, hi = isfinite(ci.hi) ? ci.hi : ci.mean;
      if (isfinite(ci.mean)) *ylo = fmin(*ylo, lo), *yhi = fmax(*yhi, hi);
      double x = a->numeric ? s->key_x[(size_t)p * g->nkeys + key] : (double)vv + off;
      fprintf(o, "%.9g %.9g %.9g %.9g\n", x, ci.mean, lo, hi);
    }
  }
}

/* The x axis of key `key`: its words and key, and the categories' tics. */
static void rpt__grid_xaxis(FILE *o, const rpt_sweep *s, const rpt__grid *g, unsigned key) {
  const rpt__gaxis *a = &g->ax[key];
  char xl[400];
  snprintf(xl, sizeof xl, "%s, key %s", a->words, s->keys[key]);
  fputs("set xlabel ", o);
  rpt__gp_str(o, xl);
  fputc('\n', o);
  if (a->numeric && a->nv > 12) return; /* gnuplot's own tics; else a tic at each value, as given */
  fputs("set xtics (", o);
  for (unsigned i = 0; i < a->nv; i++) {
    unsigned v = a->order[i]; /* in the order drawn (categories: as given, at 0, 1, ...) */
    char lab[128];
    rpt__grid_shown(s->key_labels[(size_t)a->first[v] * g->nkeys + key], lab, sizeof lab);
    fputs(i ? ", " : "", o);
    rpt__gp_str(o, lab);
    if (a->numeric)
      fprintf(o, " %.9g", s->key_x[(size_t)a->first[v] * g->nkeys + key]);
    else
      fprintf(o, " %u", v);
  }
  fputs(")\n", o);
  if (!a->numeric) fprintf(o, "set xrange [-0.3:%u.3]\n", a->nv - 1);
}

static void rpt__grid_plot(FILE *o, const char *pfx, unsigned nl, int numeric, int reps, char *const *titles) {
  fputs("plot ", o);
  for (unsigned j = 0; j < nl; j++) {
    if (numeric && reps > 1)
      fprintf(o, "$%s%u using 1:3:4 with filledcurves fs transparent solid 0.18 noborder lt %u notitle, ", pfx, j,
              j + 1);
    if (numeric)
      fprintf(o, "$%s%u using 1:2 with linespoints lt %u title ", pfx, j, j + 1);
    else
      fprintf(o, "$%s%u using 1:2:3:4 with yerrorbars lt %u pt 7 ps 1.2 title ", pfx, j, j + 1);
    rpt__gp_str(o, titles[j]);
    fputs(j + 1 < nl ? ", " : "\n", o);
  }
}

/* The figure of one quantity (metrics ks[0..nk), its dimension d or none) against one key. */
static void rpt__grid_fig(const rpt_sweep *s, const rpt__grid *g, unsigned key, const unsigned *ks, unsigned nk,
                          const char *q, const char *d, double conv, const char *shown, double *tmp,
                          rpt__exp_sink *sink) {
  const rpt__gaxis *a = &g->ax[key];
  const unsigned nc = a->nc, *first = a->cfirst;
  int faceted = d[0] != 0;
  unsigned npan = faceted ? nc : 1, nl = faceted ? nk : nc, cut = 0;
  if (npan > RPT_GRID_PANELS) cut = npan, npan = RPT_GRID_PANELS;
  if (nl > RPT_GRID_SERIES) cut = nl, nl = RPT_GRID_SERIES;
  char **titles = calloc(nl ? nl : 1, sizeof *titles);
  char *body = NULL, *data = NULL;
  size_t blen = 0, dlen = 0;
  FILE *o = open_memstream(&body, &blen), *dt = open_memstream(&data, &dlen);
  if (!titles || !o || !dt) {
    if (o) fclose(o);
    if (dt) fclose(dt);
    free(body);
    free(data);
    free(titles);
    return;
  }
  double ylo = INFINITY, yhi = -INFINITY;
  for (unsigned pn = 0; pn < npan; pn++)
    for (unsigned j = 0; j < nl; j++) {
      unsigned m = faceted ? ks[j] : ks[0], c = faceted ? pn : j;
      double off = a->numeric || nl < 2 ? 0 : ((double)j - (nl - 1) / 2.0) * 0.5 / nl;
      fprintf(dt, "$p%u_%u << EOD\n", pn, j);
      rpt__grid_block(dt, s, g, key, c, m, off, conv, tmp, &ylo, &yhi);
      fputs("EOD\n", dt);
    }
  fclose(dt);
  for (unsigned j = 0; j < nl; j++) {
    char lab[400];
    if (faceted)
      snprintf(lab, sizeof lab, "%s", strchr(strchr(s->names[ks[j]], '.') + 1, '.') + 1);
    else
      rpt__grid_combo_label(s, g, first[j], key, lab, sizeof lab);
    titles[j] = strdup(lab[0] ? lab : q);
  }
  char t[600], yl[160], qw[160], fixed[600] = "";
  for (unsigned k = 0, o2 = 0; k < g->nkeys; k++)
    if (g->ax[k].nv < 2) {
      int n = snprintf(fixed + o2, sizeof fixed - o2, "%s%s = %s", o2 ? ", " : "", s->keys[k], s->key_labels[k]);
      o2 += n > 0 && (size_t)n < sizeof fixed - o2 ? (unsigned)n : 0;
    }
  rpt_metric_words(q, "", NULL, qw, sizeof qw);
  snprintf(t, sizeof t, "%s%s%s against %s (mean of %d replication%s%s)", qw, d[0] ? " per " : "", d, a->words, s->reps,
           s->reps == 1 ? "" : "s",
           s->reps < 2  ? ""
           : a->numeric ? ", shaded: 95% band"
                        : ", whiskers: 95% CI");
  rpt_metric_words(q, "", shown, yl, sizeof yl);
  /* Panels: in pixels, 40 above them (the title), 50 under them (the legend); in each panel's cell 30
   * above it (its title), 70 under it (tics, axis label), 75 left of it (tics, axis label). */
  unsigned cols = npan <= 4 ? 2 : 3, rows = (npan + cols - 1) / cols;
  double h = npan > 1 ? 330.0 * rows + 90 : 600, ph = (h - 90) / h / rows, top = 1 - 40 / h;
  if (npan > 1) {
    fputs("set multiplot title ", o);
    rpt__gp_str(o, t);
    fputc('\n', o);
    double pad = isfinite(ylo) ? 0.05 * (yhi - ylo) + 1e-9 * (1 + fabs(yhi)) : 0;
    if (isfinite(ylo)) fprintf(o, "set yrange [%.9g:%.9g]\n", ylo - pad, yhi + pad); /* one range: panels compare */
    fputs("set key off\n", o);
  } else {
    fputs("set title ", o);
    rpt__gp_str(o, t);
    fputc('\n', o);
    if (isfinite(ylo) && yhi - ylo <= 1e-12 * (1 + fabs(yhi))) { /* a constant: centre it, do not collapse */
      double pad = fabs(yhi) > 0 ? 0.1 * fabs(yhi) : 1;
      fprintf(o, "set yrange [%.9g:%.9g]\n", ylo - pad, yhi + pad);
    }
    if (nl < 2) fputs("set key off\n", o); /* one line: the title says what it is */
  }
  fwrite(data, 1, dlen, o);
  rpt__grid_xaxis(o, s, g, key);
  fputs("set ylabel ", o);
  rpt__gp_str(o, yl);
  fputc('\n', o);
  for (unsigned pn = 0; pn < npan; pn++) {
    if (npan > 1) {
      char pt[400];
      unsigned r = pn / cols, cc = pn % cols;
      fprintf(o, "set lmargin at screen %.4f\nset rmargin at screen %.4f\n", (double)cc / cols + 0.075,
              (double)(cc + 1) / cols - 0.02);
      fprintf(o, "set tmargin at screen %.4f\nset bmargin at screen %.4f\n", top - r * ph - 30 / h,
              top - (r + 1) * ph + 70 / h);
      rpt__grid_combo_label(s, g, first[pn], key, pt, sizeof pt);
      fputs("set title ", o);
      rpt__gp_str(o, pt);
      fputc('\n', o);
    }
    char pfx[16];
    snprintf(pfx, sizeof pfx, "p%u_", pn);
    rpt__grid_plot(o, pfx, nl, a->numeric, s->reps, titles);
  }
  if (npan > 1) { /* one legend for every panel (the same colour is the same line in each), under them */
    fputs("set lmargin at screen 0.02\nset rmargin at screen 0.98\nset tmargin at screen ", o);
    fprintf(o,
            "%.4f\nset bmargin at screen 0\nunset border\nunset tics\nunset xlabel\nunset ylabel\nunset title\n"
            "set xrange [0:1]\nset yrange [0:1]\nset key center center horizontal noreverse Right maxrows 2\nplot ",
            50 / h);
    for (unsigned j = 0; j < nl; j++) {
      fprintf(o, "NaN with %s lt %u title ", a->numeric ? "linespoints" : "points pt 7 ps 1.2", j + 1);
      rpt__gp_str(o, titles[j]);
      fputs(j + 1 < nl ? ", " : "\n", o);
    }
    fputs("unset multiplot\n", o);
  }
  fclose(o);
  free(data);
  for (unsigned j = 0; j < nl; j++) free(titles[j]);
  free(titles);
  char name[400], cap[1400];
  snprintf(name, sizeof name, "sweep_%s%s%s_vs_%s", q, d[0] ? "_by_" : "", d, s->keys[key]);
  for (char *p = name; *p; p++)
    if (!(*p == '_' || *p == '-' || (*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z')))
      *p = '_';
  int n = snprintf(cap, sizeof cap,
                   "%s against the swept key %s (%u values%s), with each point's 95%% band across "
                   "replications; ",
                   q, s->keys[key], a->nv, a->numeric ? "" : ", as categories");
  size_t co = n > 0 ? (size_t)n : 0;
  if (g->nvarying < 2)
    n = snprintf(cap + co, sizeof cap - co, "%s", faceted ? "one line per value of the dimension." : "one line.");
  else if (faceted)
    n = snprintf(cap + co, sizeof cap - co,
                 "one line per %s, one panel per combination of the other keys' values (%u), on one y range.", d, nc);
  else
    n = snprintf(cap + co, sizeof cap - co, "one line per combination of the other keys' values (%u).", nc);
  co += n > 0 ? (size_t)n : 0;
  if (cut && co < sizeof cap)
    n = snprintf(cap + co, sizeof cap - co, " Only the first %u of %u are drawn.", faceted ? npan : nl, cut);
  co = strlen(cap);
  if (fixed[0] && co < sizeof cap) snprintf(cap + co, sizeof cap - co, " At every point: %s.", fixed);
  sink->emit(sink->ctx, name, t, cap, (int)h, body);
}

void rpt__grid_figs(const rpt_sweep *s, const rpt__grid *g, const unsigned *ks, unsigned nk, const char *q,
                    const char *d, double conv, const char *shown, rpt__exp_sink *sink) {
  double *tmp = malloc(((size_t)s->reps + 1) * sizeof *tmp);
  for (unsigned k = 0; tmp && k < g->nkeys; k++)
    if (g->ax[k].nv >= 2) rpt__grid_fig(s, g, k, ks, nk, q, d, conv, shown, tmp, sink);
  free(tmp);
}

/* Appends to buf (cut at len), as snprintf at its end. */
static void rpt__grid_cat(char *buf, size_t len, const char *a, const char *b, const char *c) {
  size_t o = strlen(buf);
  if (o + 1 < len) snprintf(buf + o, len - o, "%s%s%s", a, b, c);
}

void rpt__grid_what(char *buf, size_t len, const rpt_sweep *s, const char *path_html, const char *model_html) {
  snprintf(buf, len, "Sweep file <code>%s</code>: model <code>%s</code>, a grid of %u points over %u keys: ", path_html,
           model_html, s->npoints, s->nkeys);
  for (unsigned k = 0; k < s->nkeys; k++) {
    char hk[512], hv[256];
    rpt__grid_cat(buf, len, k ? "; <code>" : "<code>", rpt__html_buf(hk, sizeof hk, s->keys[k]), "</code> (");
    for (unsigned p = 0, nv = 0; p < s->npoints; p++) {
      const char *lab = s->key_labels[(size_t)p * s->nkeys + k];
      unsigned q;
      for (q = 0; q < p && strcmp(s->key_labels[(size_t)q * s->nkeys + k], lab); q++) {}
      if (q == p) rpt__grid_cat(buf, len, nv++ ? ", " : "", rpt__html_buf(hv, sizeof hv, lab), "");
    }
    rpt__grid_cat(buf, len, ")", "", "");
  }
  char r[64];
  snprintf(r, sizeof r, "; %d replication%s per point.", s->reps, s->reps == 1 ? "" : "s");
  rpt__grid_cat(buf, len, r, "", "");
}
