/* rpt_internal.h - shared between the report library's files; not part of its API. */
#ifndef RPT_INTERNAL_H
#define RPT_INTERNAL_H

#include "analysis/report/rpt.h"
#include "sim/failpoint.h"

/* Text from a file reaches the outputs only through these escapers (issue 49: a results file must
 * never run a command or a script). rpt__gp_str: a gnuplot single-quoted string ('' for a quote,
 * control characters as spaces); rpt__gp_set: "set WHAT 'formatted text'" through it. */
void rpt__gp_str(FILE *g, const char *s);
void rpt__gp_set(FILE *g, const char *what, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* HTML text or attribute value: < > & " ' as entities, control characters as spaces. */
void rpt__html(FILE *o, const char *s);
/* The same into buf (cut to len - 1 bytes), returned for a printf argument. */
const char *rpt__html_buf(char *buf, size_t len, const char *s);
/* A Markdown table cell or code span: | escaped, ` as ', < > & as entities, control characters as
 * spaces (a name cannot end a row or open raw HTML in a rendered summary.md). */
void rpt__md(FILE *o, const char *s);
/* Control characters of s replaced by '?' in place (text for a terminal). */
void rpt__term(char *s);
/* Writes the common look (palette as linetypes 1..12, grid, fonts) into a script. */
void rpt__gp_preamble(FILE *g);
/* Runs `program` once through a pipe on `body` rendered twice: DIR/NAME.png (pngcairo, 1000 x
 * height) and DIR/NAME.svg. Returns 0 when both files were made whole, -1 when gnuplot failed on
 * the script, -2 when its files were not written whole (a full disk: they are removed), with a
 * reason in err. */
int rpt__gp_render(const char *program, const char *dir, const char *name, int height, const char *body, char *err,
                   size_t errlen);
/* The program that rpt_gnuplot_available would check: opt, $SPOTLAB_GNUPLOT, or "gnuplot". */
const char *rpt__gp_program(const char *opt);

/* A table written whole or not at all: rpt__wopen opens PATH.tmp (its name in tmp, at least
 * strlen(path) + 5 bytes); rpt__wclose closes it and renames it to PATH, or removes it and
 * returns -1 (errno set) when anything failed. A report killed mid-write leaves a .tmp, never a
 * table that looks whole but is not. */
FILE *rpt__wopen(const char *path, char *tmp, size_t len);
int rpt__wclose(FILE *o, const char *tmp, const char *path);

/* A growable list of strings (files written, figures skipped). */
int rpt__list_add(char ***v, size_t *n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Numbers for tables: "%.4g" with NaN shown as "-" */
void rpt__fmt(char *buf, size_t len, double v);

/* The summary table as HTML tables (for index.html). */
int rpt__summary_html(rpt_file *f, FILE *o);

/* The page's one time unit: seconds per unit, and its name ("h"; "d" for runs over 30 days). */
double rpt__page_time(rpt_file *f, const char **name);
/* The factor that shows a value of `unit` on a page whose time unit is page_s seconds (named
 * page_name): durations are converted (*shown = page_name), anything else is kept (factor 1). */
double rpt__shown(const char *unit, double page_s, const char *page_name, const char **shown);

/* Experiment files (rpt_exp_report.c): the points and sensitivity tables, and the figures, handed
 * to the report's sink (emit takes the gnuplot body and frees it). */
typedef struct rpt__exp_sink {
  void *ctx;
  void (*emit)(void *ctx, const char *name, const char *title, const char *caption, int height, char *body);
  void (*skip)(void *ctx, const char *title, const char *why);
} rpt__exp_sink;
int rpt__exp_tables(const rpt_experiment *e, FILE *md, FILE *csv, FILE *html);
void rpt__exp_figs(const rpt_experiment *e, rpt__exp_sink *sink);

/* A sweep over policies (rpt_cheapest.c): at each point the policy with the lowest mean of
 * QUANTITY.policy.P and whether the runner-up's paired excess is significant, as a Markdown section,
 * an HTML table and CSV rows. Writes nothing when the sweep has fewer than two such policies. */
int rpt__cheapest(const rpt_sweep *s, const char *q, const char *unit_words, FILE *md, FILE *html, FILE *csv);

/* A sweep over a grid of several keys (rpt_grid.c): per key, each point's value index (vi), the
 * first point of each value, the values in the order drawn (order: increasing for numbers),
 * each point's combination of the other keys' values (combo, nc of them, cfirst: the first point
 * of each), whether every value is a number, its unit (from a point's /meta/effective, numbers
 * only) and its words for an axis. */
typedef struct rpt__gaxis {
  unsigned nv, *vi, *first, *order, nc, *combo, *cfirst;
  int numeric;
  char unit[32], words[200];
} rpt__gaxis;
typedef struct rpt__grid {
  unsigned nkeys, nvarying; /* nvarying: keys with two values or more */
  rpt__gaxis *ax;
} rpt__grid;
/* The axes of s (nothing when s has fewer than two keys); effective: a point's /meta/effective text
 * or NULL. 0 or SIM_ENOMEM. */
int rpt__grid_make(const rpt_sweep *s, const char *effective, rpt__grid *g);
void rpt__grid_free(rpt__grid *g);
/* The figures of quantity q (metrics ks[0..nk), dimension d or "") against each varying key. */
void rpt__grid_figs(const rpt_sweep *s, const rpt__grid *g, const unsigned *ks, unsigned nk, const char *q,
                    const char *d, double conv, const char *shown, rpt__exp_sink *sink);
/* The page's line about a grid sweep (HTML, into buf): each key with its values. */
void rpt__grid_what(char *buf, size_t len, const rpt_sweep *s, const char *path_html, const char *model_html);

#endif
