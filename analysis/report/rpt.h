/* rpt.h - spotlab's analysis side: reads the results files that `spotlab run` and `spotlab sweep`
 * write (docs/results-format.md, docs/reports.md) and turns them into tables (Markdown, CSV),
 * figures (gnuplot through a pipe, PNG and SVG) and one index.html per report.
 *
 * Layers: this library reads HDF5 and drives gnuplot; it knows the names the models give their
 * tables, series and metrics (providers, jobs, availability, *_by_region, quantity.dim.value) but
 * never needs a model to be linked. Every figure is drawn only when its inputs are in the file.
 *
 * Errors are negative sim_err codes (sim/sim.h): SIM_EIO (cannot open or write), SIM_EFORMAT (not
 * a spotlab file, damaged, or another format version), SIM_ENOTFOUND (a dataset is missing), with
 * a message that names the file and what is wrong.
 */
#ifndef RPT_RPT_H
#define RPT_RPT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "sim/sim.h"

#ifdef __cplusplus
extern "C" {
#endif

#define RPT_ERRLEN 1024

/* ---- Statistics (GSL) ------------------------------------------------------------------------ */

/* Mean, sample sd and the 95% Student-t interval of n values (stride apart). NaN CI for n < 2. */
typedef struct rpt_ci {
  double mean, sd, lo, hi; /* lo/hi: 95% confidence interval of the mean */
  int n;
} rpt_ci;
void rpt_ci_t(const double *x, size_t n, size_t stride, rpt_ci *out);
/* The paired-difference interval of (after - before), replication by replication. */
void rpt_ci_paired(const double *before, const double *after, size_t n, size_t stride, rpt_ci *out);

/* ---- Reading a results file ------------------------------------------------------------------ */

typedef struct rpt_file rpt_file; /* an open results or sweep file; opaque */

typedef enum rpt_kind { RPT_RESULTS = 1, RPT_SWEEP = 2, RPT_EXPERIMENT = 3 } rpt_kind;

/* Opens `path` and checks that it is a spotlab results (or sweep) file of the supported version
 * with its /meta, /metrics and /summary (results) or /sweep (sweep) in place. On failure returns a
 * negative sim_err and a message in err that names the file and the problem. */
int rpt_open(const char *path, rpt_file **out, char *err, size_t errlen);
void rpt_close(rpt_file *f);
/* The message of the last failing call on f. */
const char *rpt_error(const rpt_file *f);
const char *rpt_path(const rpt_file *f);
rpt_kind rpt_file_kind(const rpt_file *f);

/* Results files: meta and metrics. */
const char *rpt_model(const rpt_file *f);
uint64_t rpt_seed(const rpt_file *f);   /* base seed */
double rpt_end_time(const rpt_file *f); /* simulated seconds */
int rpt_nreps(const rpt_file *f);
uint64_t rpt_rep_seed(const rpt_file *f, int rep);
unsigned rpt_nmetrics(const rpt_file *f);
const char *rpt_metric_name(const rpt_file *f, unsigned k);
const char *rpt_metric_unit(const rpt_file *f, unsigned k);
const double *rpt_metric_values(const rpt_file *f); /* [reps][nmetrics], row-major */
/* The metric's label in words from the file's /metrics `labels` attribute ("" when the file has
 * none for it, or is older), and whether the model marked it headline (its `headline` attribute:
 * 1 or 0; -1 when the file does not say). */
const char *rpt_metric_label(const rpt_file *f, unsigned k);
int rpt_metric_headline(const rpt_file *f, unsigned k);
/* Words for a metric on an axis or in a title: its label when it has one, else a readable form of
 * its name ("income per available hour, persona katie"); with a unit other than "1" or "",
 * " (UNIT)" is appended. `unit` may be NULL (no unit). */
void rpt_metric_words(const char *name, const char *label, const char *unit, char *buf, size_t len);
int rpt_metric_find(const rpt_file *f, const char *name); /* index or -1 */
/* The mean and interval that /summary stores for metric k (as written by the engine). */
int rpt_summary_stored(const rpt_file *f, unsigned k, rpt_ci *out);

/* Whether /reps/rep_NNNN/tables/TABLE (with every field listed, NULL-terminated) or
 * /reps/rep_NNNN/series/NAME exists in every replication. */
int rpt_has_table(rpt_file *f, const char *table, const char *const *fields);
int rpt_has_series(rpt_file *f, const char *name);
/* The first of `names` (NULL-terminated) that is a field of TABLE in replication 0, or NULL. */
const char *rpt_table_pick_field(rpt_file *f, const char *table, const char *const *names);

/* One column of a table in replication rep: numbers (integers converted to double) or strings
 * (each `width` bytes, NUL-terminated). Caller frees *out. 0 or a negative sim_err. */
int rpt_table_num(rpt_file *f, int rep, const char *table, const char *field, double **out, size_t *n);
int rpt_table_str(rpt_file *f, int rep, const char *table, const char *field, char **out, size_t *width, size_t *n);

/* A series of replication rep, converted to double. */
typedef struct rpt_series {
  size_t nbins, ncols;
  double *v;        /* [nbins][ncols] */
  double bin_width; /* seconds; 0 = one bin for the run */
  char unit[64];
  char **colnames; /* ncols names */
} rpt_series;
int rpt_series_read(rpt_file *f, int rep, const char *name, rpt_series *out);
void rpt_series_free(rpt_series *s);

/* Metric names: "quantity" or "quantity.dimension.value". Splits into the three parts (dimension
 * and value empty when absent). Each part is cut to its buffer (64 bytes). */
void rpt_metric_split(const char *name, char quantity[64], char dim[64], char value[64]);

/* What a metric's name and unit say about it (docs/reports.md, "Ranges, time units, checks"):
 * the range its values can take, [*lo, *hi] (-inf/inf when unbounded): spreads (_sd, _cv) >= 0;
 * differences and signed quantities (_vs_, surplus, welfare, balance, income, ...) unbounded;
 * shares and utilizations in [0, 1] ([0, 100] for %); counts, durations and resource amounts
 * (units jobs, providers, GPUs, GPU*h, s, h, ...) >= 0; prices, costs, fees, revenue >= 0. */
void rpt_metric_range(const char *name, const char *unit, double *lo, double *hi);
/* Clips an interval to [lo, hi]; the mean is left as it is. The intersection of a 95% interval
 * with the values the quantity can take still covers it with at least 95% probability. */
void rpt_ci_clip(rpt_ci *ci, double lo, double hi);
/* Seconds per unit of a duration unit ("ms", "s", "min", "h", "d", "w"), else 0 (a rate such as
 * "USD/h" or a resource amount such as "GPU*h" is not a duration). */
double rpt_duration_unit(const char *unit);
/* 1 when metric `name` is a pass/fail check: its quantity is named check_* or *_ok, *_conserved,
 * *_passed, *_pass, *_valid, and its n values (stride apart) are all 0 or 1. */
int rpt_metric_is_check(const char *name, const double *v, size_t n, size_t stride);

/* ---- Sweep files (docs/reports.md) ---------------------------------------------------------- */

typedef struct rpt_sweep {
  char param[128]; /* the swept key, "group.key" */
  char model[64];
  unsigned npoints, nmetrics;
  int reps;
  char **labels;              /* [npoints] the values as given */
  double *x;                  /* [npoints] numeric value, NaN when not a number */
  char **names, **units;      /* [nmetrics] */
  double *values;             /* [npoints][reps][nmetrics] */
  char **point_files;         /* [npoints] results file of each point, relative to the sweep file */
  int interrupted;            /* 1: a signal stopped the sweep; the npoints that finished are here */
  unsigned npoints_requested; /* with interrupted: the points the sweep was asked for */
  /* A grid of several keys (`sweep --param A=.. --param B=..`, the first key slowest): nkeys >= 2,
   * param "A x B", labels "a, b", x NaN. A one-key sweep has nkeys 0 and none of these. */
  unsigned nkeys;
  char **keys;       /* [nkeys] the swept keys, in the order given */
  char **key_labels; /* [npoints][nkeys] each point's value of each key, as given */
  double *key_x;     /* [npoints][nkeys] the same as numbers, NaN where not one */
} rpt_sweep;
/* Writes a sweep file at `path` (atomically, PATH.tmp.PID then rename). */
int rpt_sweep_write(const char *path, const rpt_sweep *s, const char *scenario_path, uint64_t seed, char *err,
                    size_t errlen);
/* Reads the /sweep group of an open sweep file into *s (free with rpt_sweep_free). */
int rpt_sweep_read(rpt_file *f, rpt_sweep *s);
void rpt_sweep_free(rpt_sweep *s);

/* A string dataset /meta/NAME of a results file ("effective", "scenario", "command"), malloc'd into
 * *out. 0 or a negative sim_err (message in rpt_error). */
int rpt_meta_string(rpt_file *f, const char *name, char **out);

/* A run of several policy worlds (`market.compare_policies = "none,checkpoint,..."`, docs/market.md):
 * the number of worlds, from /meta/effective, and the first world's policy in first (its overall
 * metrics, series and availability table are that world's). 1 (first "") for any other run. */
int rpt_worlds(rpt_file *f, char *first, size_t len);

/* ---- Experiment files (docs/experiments.md) --------------------------------------------------- */

#define RPT_EXPERIMENT_FORMAT "spotlab-experiment"
#define RPT_EXPERIMENT_FORMAT_VERSION 1

/* What `spotlab experiment` found, as written to and read from its file. The writer stores what it
 * is given: the analysis (constraints, Pareto front, sensitivities) is the caller's
 * (analysis/experiment/exp.h). Arrays are row-major. */
typedef struct rpt_experiment {
  char model[64];
  char design[32];       /* "factorial", "lhs", "sobol" */
  char sens_method[160]; /* how `sensitivity` was computed, with its source */
  uint64_t seed;         /* base seed of the replications, the same at every point */
  int reps;
  unsigned npoints, nfactors, nmetrics, ncons, nobjs;
  char **factors;         /* [nfactors] scenario keys */
  char **labels;          /* [npoints * nfactors] each point's value of each factor, as scenario text */
  double *x;              /* [npoints][nfactors] the value as a number (a level's index when not one) */
  char **names, **units;  /* [nmetrics] */
  double *values;         /* [npoints][reps][nmetrics] */
  double *mean, *lo, *hi; /* [npoints][nmetrics] mean and 95% t interval */
  char **cons;            /* [ncons] "metric < bound" */
  int *cons_metric;       /* [ncons] index into names */
  double *met;            /* [npoints][ncons] 1 when the point's mean meets the constraint, else 0 */
  double *confidence;     /* [npoints][ncons] probability that the true mean meets it (NaN: reps < 2) */
  double *feasible;       /* [npoints] 1 when every constraint is met */
  char **objs;            /* [nobjs] "maximize metric" */
  int *obj_metric;        /* [nobjs] index into names */
  double *pareto;         /* [npoints] 1 on the Pareto front of the objectives among feasible points */
  double *sensitivity;    /* [nobjs][nfactors] */
  double *r2;             /* [nobjs] the linear fit's R^2 behind the sensitivities */
  char **point_files;     /* [npoints] each point's results file, relative to the experiment file */
} rpt_experiment;
/* Writes an experiment file at `path` (atomically, PATH.tmp.PID then rename; with the checksum of
 * sim/h5mem.h). */
int rpt_experiment_write(const char *path, const rpt_experiment *e, const char *experiment_path,
                         const char *scenario_path, char *err, size_t errlen);
/* Reads /experiment of an open experiment file (free with rpt_experiment_free). */
int rpt_experiment_read(rpt_file *f, rpt_experiment *e);
void rpt_experiment_free(rpt_experiment *e);

/* ---- CSV --------------------------------------------------------------------------------------- */

/* Writes one CSV text field, as every CSV of the report, compare and compare --robust does: quoted
 * per RFC 4180 (libcsv's csv_fwrite) when it holds a comma, a quote, a line break or edge spaces,
 * else as it is; a text a spreadsheet would run as a formula (it starts with = + - @, a tab or a
 * carriage return, and is not a decimal number such as -0.5) gets a single quote before it and is
 * quoted ("'=HYPERLINK(..)"), as OWASP's CSV injection advice says. Numbers are the caller's
 * (printf). */
void rpt_csv_field(FILE *o, const char *s);

/* ---- Figures (gnuplot) ----------------------------------------------------------------------- */

/* The gnuplot to use: $SPOTLAB_GNUPLOT if set ("none" = no figures), else `gnuplot` on PATH.
 * Returns 1 when it can be run, 0 otherwise (and then figures are skipped). */
int rpt_gnuplot_available(const char *program);
/* Series i's colour (Okabe-Ito, hex "#rrggbb") and gnuplot dash type (1 solid, 2 dashed, 3 dotted,
 * 4 dash-dot, 5 dash-dot-dot): no two of the first 12 series share both. */
const char *rpt_colour(unsigned i);
int rpt_dash(unsigned i);

/* ---- Reports --------------------------------------------------------------------------------- */

typedef struct rpt_options {
  const char *outdir;     /* folder for the report (created) */
  const char *gnuplot;    /* program, or NULL for $SPOTLAB_GNUPLOT / `gnuplot` */
  int quiet;              /* 1: no lines on stdout */
  FILE *log;              /* where "wrote"/"skipped" lines go (stdout when NULL) */
  unsigned max_timelines; /* providers in the availability sample (default 16) */
  /* Tests and fuzzing (fuzz/fuzz_report.c): when set, each figure's gnuplot script (the body
   * that follows the terminal and the common look) is handed here instead of to gnuplot, and no
   * figure file is written. */
  void (*script)(void *ctx, const char *name, const char *body);
  void *script_ctx;
} rpt_options;

/* What a report produced: the files, relative to outdir, and the figures skipped. */
typedef struct rpt_outcome {
  char **files;
  size_t nfiles;
  char **skipped;
  size_t nskipped; /* "figure: why" */
  char **lines;
  size_t nlines; /* constant series and checks, as table lines ("what: value") */
  int figures_drawn;
} rpt_outcome;
void rpt_outcome_free(rpt_outcome *o);

/* `spotlab report`: summary tables, figures and index.html for a results or sweep file. Returns 0,
 * or a negative sim_err with a message in err (SIM_EFORMAT/ENOTFOUND/EIO on the input, SIM_EIO
 * when the output cannot be written); on failure *out is empty (nothing to free). */
int rpt_report(const char *path, const rpt_options *opt, rpt_outcome *out, char *err, size_t errlen);

/* `spotlab compare`: paired differences of every metric the two files share. Prints a table on
 * `tab`, writes compare.md, compare.csv and a figure into opt->outdir. */
typedef struct rpt_diff {
  char name[64], unit[24];
  char words[160];            /* the metric in words (its label, or its name made readable) */
  rpt_ci before, after, diff; /* diff: paired interval of after - before */
  double rel;                 /* diff.mean / |before.mean|, NaN when before.mean is 0 */
} rpt_diff;
int rpt_compare(const char *before, const char *after, const rpt_options *opt, FILE *tab, rpt_diff **diffs,
                size_t *ndiffs, int *seeds_match, char *err, size_t errlen);

/* The summary table rows of a results file: the mean and CI recomputed from /metrics (GSL), one
 * row per metric, grouped by dimension (overall first). Writes Markdown and CSV. Returns 0 or
 * a negative sim_err. `mismatch` counts metrics where /summary disagrees with the recomputation. */
int rpt_write_summary(rpt_file *f, const char *md_path, const char *csv_path, int *mismatch, char *err, size_t errlen);

#ifdef __cplusplus
}
#endif
#endif
