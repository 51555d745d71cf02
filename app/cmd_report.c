/* cmd_report.c - `spotlab report` and `spotlab compare`: tables, figures and index.html from
 * results files (the work is done by analysis/report, rpt.h). */
#include "analysis/report/rpt.h"
#include "app/app.h"
#include "app/cli.h"

#include <stdlib.h>
#include <string.h>

/* Exit status for an error on an input file: 2 (bad, damaged, missing, other version); 1 else. */
static int report__status(int rc) { return rc == SIM_EFORMAT || rc == SIM_ENOTFOUND || rc == SIM_EIO ? 2 : 1; }

static void report__default_out(const char *in, char *out, size_t len) {
  size_t n = strlen(in);
  if (n > 3 && !strcmp(in + n - 3, ".h5")) n -= 3;
  snprintf(out, len, "%.*s-report", (int)n, in);
}

static const app_option report__opts[] = {
    {"--out", APP_O_STRING, "DIR", 0, 0, 0, "report folder (default: RESULTS without .h5, plus -report)"},
    {"--gnuplot", APP_O_STRING, "PROGRAM", 0, 0, 0,
     "gnuplot to run (default $SPOTLAB_GNUPLOT, else gnuplot on PATH;\n'none': tables only)"},
    APP_OPT_QUIET("no progress lines"),
    {NULL},
};
static const app_cli report__cli = {
    "report",
    "RESULTS.h5",
    1,
    1,
    NULL,
    "Writes DIR/summary.md and DIR/summary.csv (means and 95% confidence intervals across\n"
    "replications, grouped by persona, pool, region, class and policy), the figures as PNG and\n"
    "SVG (gnuplot), and DIR/index.html that shows them all. Works on the results of `spotlab run`\n"
    "and on sweep files of `spotlab sweep` (each metric against the swept key). A figure whose\n"
    "inputs are not in the file is skipped, with a line that says why.\n",
    "Exit status: 0 done, 1 the report could not be written, 2 bad usage or a bad, damaged or\n"
    "other-version results file (the message names the file and what is wrong).\n",
    report__opts};

static int cmd_report_main(int argc, char **argv) {
  app_args a;
  int prc = app_cli_parse(&report__cli, argc, argv, &a);
  if (prc) {
    app_args_free(&a);
    return prc == 1 ? 0 : 2;
  }
  const char *in = a.operand[0], *out = app_args_str(&a, "--out", NULL), *gp = app_args_str(&a, "--gnuplot", NULL);
  int quiet = app_args_flag(&a, "--quiet");
  app_args_free(&a);
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
  const char *ins[1] = {in};
  int orc = app_out_check(stderr, "report", out, ins, 1, 1);
  if (orc) return orc;
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
