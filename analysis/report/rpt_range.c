/* rpt_range.c - what a metric's name and unit say about how to show it: the range its values can
 * take (so that an interval is clipped to it), whether it is a duration (shown in the page's one
 * time unit), and whether it is a pass/fail check (a table line, never a figure). The rules are
 * docs/reports.md's "Ranges, time units, checks"; a results file stores only names and units. */
#include "analysis/report/rpt_internal.h"

#include <math.h>
#include <string.h>

static int rpt__ends(const char *s, const char *suffix) {
  size_t n = strlen(s), m = strlen(suffix);
  return n >= m && !strcmp(s + n - m, suffix);
}

static int rpt__has_any(const char *s, const char *const *words) {
  for (size_t i = 0; words[i]; i++)
    if (strstr(s, words[i])) return 1;
  return 0;
}

double rpt_duration_unit(const char *unit) {
  static const struct {
    const char *u;
    double s;
  } units[] = {{"ms", 1e-3}, {"s", 1}, {"min", 60}, {"h", 3600}, {"d", 86400}, {"w", 604800}};
  for (size_t i = 0; unit && i < sizeof units / sizeof *units; i++)
    if (!strcmp(unit, units[i].u)) return units[i].s;
  return 0;
}

void rpt_metric_range(const char *name, const char *unit, double *lo, double *hi) {
  char q[64], d[64], v[64];
  rpt_metric_split(name, q, d, v);
  *lo = -INFINITY;
  *hi = INFINITY;
  unit = unit ? unit : "";
  /* 1. spreads are never negative, whatever they spread */
  if (rpt__ends(q, "_sd") || rpt__ends(q, "_cv") || !strcmp(q, "sd") || !strcmp(q, "cv")) {
    *lo = 0;
    return;
  }
  /* 2. differences and quantities that are negative by definition (a surplus below the
   *    reservation cost, income net of penalties) keep the whole line */
  static const char *const signed_words[] = {"_vs_",    "diff",   "change", "delta", "surplus", "welfare",
                                             "balance", "profit", "income", "net_",  NULL};
  if (rpt__has_any(q, signed_words)) return;
  /* 3. shares and utilizations: parts of a whole */
  if (rpt__ends(q, "_share") || !strcmp(q, "share") || !strncmp(q, "utilization", 11)) {
    *lo = 0;
    *hi = !strcmp(unit, "%") ? 100 : !strcmp(unit, "1") || !unit[0] ? 1 : INFINITY;
    return;
  }
  /* 4. counts, durations and amounts of a resource */
  static const char *const amount_units[] = {"jobs",   "providers", "GPUs", "GPU", "GPU*h", "GPU*s", "GPU*ms",
                                             "events", "B",         "kB",   "MB",  "GB",    "bytes", NULL};
  for (size_t i = 0; amount_units[i]; i++)
    if (!strcmp(unit, amount_units[i])) {
      *lo = 0;
      return;
    }
  if (rpt_duration_unit(unit) > 0) {
    *lo = 0;
    return;
  }
  /* 5. prices, costs, fees and what counts events */
  static const char *const nonneg_words[] = {"price",         "cost",     "spend",    "fee",       "revenue",
                                             "payout",        "switches", "restarts", "served",    "misses",
                                             "interruptions", "count",    "goodput",  "shortfall", NULL};
  if (rpt__has_any(q, nonneg_words)) *lo = 0;
}

void rpt_ci_clip(rpt_ci *ci, double lo, double hi) {
  if (isfinite(ci->lo) && ci->lo < lo) ci->lo = lo;
  if (isfinite(ci->hi) && ci->hi > hi) ci->hi = hi;
}

int rpt_metric_is_check(const char *name, const double *v, size_t n, size_t stride) {
  char q[64], d[64], w[64];
  rpt_metric_split(name, q, d, w);
  static const char *const check_words[] = {"_conserved", "_ok", "_passed", "_pass", "_valid", NULL};
  int named = !strncmp(q, "check_", 6);
  for (size_t i = 0; !named && check_words[i]; i++) named = rpt__ends(q, check_words[i]);
  if (!named) return 0;
  for (size_t i = 0; i < n; i++)
    if (v[i * stride] != 0 && v[i * stride] != 1) return 0;
  return 1;
}

double rpt__page_time(rpt_file *f, const char **name) {
  /* one time unit per page: hours, or days for runs of more than 30 days */
  if (rpt_file_kind(f) == RPT_RESULTS && rpt_end_time(f) > 30 * 86400.0) {
    *name = "d";
    return 86400.0;
  }
  *name = "h";
  return 3600.0;
}

double rpt__shown(const char *unit, double page_s, const char *page_name, const char **shown) {
  double u = rpt_duration_unit(unit);
  if (u > 0 && page_s > 0) {
    *shown = page_name;
    return u / page_s;
  }
  *shown = unit ? unit : "";
  return 1.0;
}

/* A readable form of an identifier: underscores become spaces, and the abbreviations a reader
 * should not have to decode are spelt out ("gpu" GPU, "usd" USD, "cv" coefficient of variation,
 * "p50" median, "sd" standard deviation, "vs" against). */
static size_t rpt__words_of(const char *id, char *buf, size_t len) {
  static const struct {
    const char *w, *as;
  } abbr[] = {{"gpu", "GPU"},
              {"usd", "USD"},
              {"cv", "coefficient of variation"},
              {"p50", "median"},
              {"p90", "90th percentile"},
              {"p99", "99th percentile"},
              {"sd", "standard deviation"},
              {"vs", "against"},
              {NULL, NULL}};
  size_t o = 0;
  const char *p = id;
  while (*p && o + 1 < len) {
    size_t n = strcspn(p, "_");
    const char *as = NULL;
    for (size_t i = 0; abbr[i].w && !as; i++)
      if (strlen(abbr[i].w) == n && !strncmp(p, abbr[i].w, n)) as = abbr[i].as;
    int w = as ? snprintf(buf + o, len - o, "%s%s", o ? " " : "", as)
               : snprintf(buf + o, len - o, "%s%.*s", o ? " " : "", (int)n, p);
    o += w > 0 ? (size_t)w : 0;
    if (o >= len) o = len - 1;
    p += n;
    if (*p == '_') p++;
  }
  buf[o < len ? o : len - 1] = 0;
  return o;
}

void rpt_metric_words(const char *name, const char *label, const char *unit, char *buf, size_t len) {
  if (!len) return;
  size_t o;
  char q[64], d[64], v[64];
  rpt_metric_split(name, q, d, v);
  if (label && label[0])
    o = (size_t)snprintf(buf, len, "%s", label);
  else
    o = rpt__words_of(q, buf, len);
  /* a label names the quantity: the dimension's value is added unless the label says it */
  if (o < len && d[0] && !(label && label[0] && strstr(label, v))) {
    /* "jade.pool.fixed" (a second dimension) -> "jade, pool fixed" */
    char vv[64];
    snprintf(vv, sizeof vv, "%s", v);
    char *dot = strchr(vv, '.'), *d2v = dot ? strchr(dot + 1, '.') : NULL;
    if (dot && d2v) {
      *dot = *d2v = 0;
      o += (size_t)snprintf(buf + o, len - o, ", %s %s, %s %s", d, vv, dot + 1, d2v + 1);
    } else
      o += (size_t)snprintf(buf + o, len - o, ", %s %s", d, v);
  }
  if (o < len && unit && unit[0] && strcmp(unit, "1") && strcmp(buf, unit)) /* not "events (events)" */
    snprintf(buf + o, len - o, " (%s)", unit);
}
