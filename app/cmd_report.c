/* cmd_report.c - `spotlab report` and `spotlab compare`: tables, figures and index.html from
 * results files (the work is done by analysis/report, rpt.h). */
#include "analysis/report/rpt.h"
#include "app/app.h"

#include <stdlib.h>
#include <string.h>

/* Exit status for an error on an input file: 2 (bad, damaged, missing, other version); 1 else. */
static int report__status(int rc) { return rc == SIM_EFORMAT || rc == SIM_ENOTFOUND || rc == SIM_EIO ? 2 : 1; }

static void report__default_out(const char *in, char *out, size_t len) {
  size_t n = strlen(in);
  if (n > 3 && !strcmp(in + n - 3, ".h5")) n -= 3;
  snprintf(out, len, "%.*s-report", (int)n, in);
}

static int cmd_report_main(int argc, char **argv) {
  const char *in = NULL, *out = NULL, *gp = NULL, *v;
  int quiet = 0;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
      printf("usage: spotlab report RESULTS.h5 [--out DIR] [--gnuplot PROGRAM] [--quiet]\n\n"
             "Writes DIR/summary.md and DIR/summary.csv (means and 95%% confidence intervals across\n"
             "replications, grouped by persona, pool, region, class and policy), the figures as PNG and\n"
             "SVG (gnuplot), and DIR/index.html that shows them all. Works on the results of `spotlab run`\n"
             "and on sweep files of `spotlab sweep` (each metric against the swept key). A figure whose\n"
             "inputs are not in the file is skipped, with a line that says why.\n\n"
             "  --out DIR          report folder (default: RESULTS without .h5, plus -report)\n"
             "  --gnuplot PROGRAM  gnuplot to run (default $SPOTLAB_GNUPLOT, else gnuplot on PATH;\n"
             "                     'none': tables only)\n"
             "  --quiet            no progress lines\n\n"
             "Exit status: 0 done, 1 the report could not be written, 2 bad usage or a bad, damaged or\n"
             "other-version results file (the message names the file and what is wrong).\n");
      return 0;
    } else if (app_opt(argc, argv, &i, "--out", &v)) {
      out = v;
    } else if (app_opt(argc, argv, &i, "--gnuplot", &v)) {
      gp = v;
    } else if (!strcmp(argv[i], "--quiet")) {
      quiet = 1;
    } else if (argv[i][0] == '-') {
      fprintf(stderr, "spotlab report: unknown option '%s' (spotlab report --help)\n", argv[i]);
      return 2;
    } else if (!in) {
      in = argv[i];
    } else {
      fprintf(stderr, "spotlab report: one results file at a time ('%s' is extra)\n", argv[i]);
      return 2;
    }
  }
  if (!in) {
    fprintf(stderr, "usage: spotlab report RESULTS.h5 [--out DIR] (spotlab report --help)\n");
    return 2;
  }
  char err[RPT_ERRLEN], defout[4096];
  rpt_file *f;
  int rc = rpt_open(in, &f, err, sizeof err);
  if (rc) {
    fprintf(stderr, "spotlab report: %s\n", err);
    return report__status(rc);
  }
  rpt_close(f);
  if (!out) {
    report__default_out(in, defout, sizeof defout);
    out = defout;
  }
  rpt_options opt = {out, gp, quiet, stdout, 0};
  rpt_outcome o;
  rc = rpt_report(in, &opt, &o, err, sizeof err);
  if (rc)
    fprintf(stderr, "spotlab report: %s\n", err);
  else if (!quiet)
    printf("\nopen %s/index.html\n", out);
  rpt_outcome_free(&o);
  if (!rc) return 0;
  return rc == SIM_EFORMAT || rc == SIM_ENOTFOUND ? 2 : 1;
}

static const app_command cmd_report = {"report", "tables, figures and index.html from a results or sweep file",
                                       cmd_report_main};
APP_COMMAND(cmd_report)
