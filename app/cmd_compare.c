/* cmd_compare.c - `spotlab compare BEFORE.h5 AFTER.h5`: paired differences of every metric (common
 * random numbers), a table, and a figure of the main differences (analysis/report, rpt.h). */
#include "analysis/report/rpt.h"
#include "app/app.h"
#include "app/cli.h"
#include "app/compare_robust.h"

#include <stdlib.h>
#include <string.h>

static const app_option compare__opts[] = {
    {"--out", APP_O_STRING, "DIR", 0, 0, 0, "output folder (default: compare)"},
    {"--gnuplot", APP_O_STRING, "PROGRAM", 0, 0, 0, "gnuplot to run ('none': no figure)"},
    APP_OPT_QUIET("no table on stdout, no progress lines"),
    {"--robust", APP_O_STRING, "KEY=V1,V2,...", 0, 0, APP_REPEAT,
     "an assumption key and the values to try (repeat for more keys; the full grid, at most 64 points):\n"
     "both runs are redone at every point and each headline difference's sign checked there"},
    {"--robust-metric", APP_O_STRING, "NAME", 0, 0, APP_REPEAT,
     "with --robust: a metric to check besides the headline ones (repeat for more)"},
    {NULL},
};
static const app_cli compare__cli = {
    "compare",
    "BEFORE.h5 AFTER.h5",
    2,
    2,
    NULL,
    "For dry-running a change (a fee, a pricing rule, a policy): runs of the same scenario before\n"
    "and after the change, with the same seed and replications. Prints, for every metric both\n"
    "files hold, the means before and after and the change with its 95% confidence interval on\n"
    "the paired replications (common random numbers: replication r of both runs shares its\n"
    "seed; a mismatch is reported). Writes DIR/compare.md, DIR/compare.csv and DIR/compare.png\n"
    "and .svg (the largest relative changes among revenue, income, cost, utilization, waits and\n"
    "completion times).\n"
    "\n"
    "--robust asks whether the answer survives the model's assumptions: both sides are rerun\n"
    "from the effective keys their files record, with their own seeds and replications, at\n"
    "every combination of the values given (e.g. --robust market.training.choice_cost=1,10),\n"
    "and a table says for each headline metric whether the sign of its change holds at every\n"
    "point, with the range of its size (DIR/robust.md, DIR/robust.csv).\n",
    "Exit status: 0 done, 1 the outputs could not be written, 2 bad usage or a bad file.\n",
    compare__opts};

static int cmd_compare_main(int argc, char **argv) {
  app_args a;
  int prc = app_cli_parse(&compare__cli, argc, argv, &a);
  if (prc) {
    app_args_free(&a);
    return prc == 1 ? 0 : 2;
  }
  const char *files[2] = {a.operand[0], a.operand[1]}, *out = app_args_str(&a, "--out", "compare"),
             *gp = app_args_str(&a, "--gnuplot", NULL);
  int quiet = app_args_flag(&a, "--quiet");
  int nrobust = app_args_count(&a, "--robust");
  const char *robust[APP_ROBUST_MAX_KEYS + 1];
  for (int i = 0; i < nrobust && i <= APP_ROBUST_MAX_KEYS; i++) robust[i] = app_args_at(&a, "--robust", i);
  int nrm = app_args_count(&a, "--robust-metric");
  const char *rmetric[16];
  for (int i = 0; i < nrm && i < 16; i++) rmetric[i] = app_args_at(&a, "--robust-metric", i);
  if ((nrm && !nrobust) || nrm > 16) {
    fprintf(stderr, "spotlab compare: %s\n",
            nrm > 16 ? "at most 16 --robust-metric" : "--robust-metric needs --robust (the assumption values to try)");
    app_args_free(&a);
    return 2;
  }
  rpt_options opt = {out, gp, quiet, stdout, 0};
  rpt_diff *d;
  size_t nd;
  int seeds, input_ok = 1;
  char err[RPT_ERRLEN];
  /* Input problems (exit 2) are found before anything is written. */
  for (int i = 0; i < 2 && input_ok; i++) {
    rpt_file *f;
    int rc = rpt_open(files[i], &f, err, sizeof err);
    if (rc) {
      fprintf(stderr, "spotlab compare: %s\n", err);
      input_ok = 0;
    } else {
      rpt_close(f);
    }
  }
  if (!input_ok) {
    app_args_free(&a);
    return 2;
  }
  int orc = app_out_check(stderr, "compare", out, files, 2, 1);
  if (!orc && nrobust)
    orc = app_compare_robust_check(files[0], files[1], robust,
                                   nrobust > APP_ROBUST_MAX_KEYS ? APP_ROBUST_MAX_KEYS + 1 : nrobust, rmetric, nrm);
  if (orc) {
    app_args_free(&a);
    return orc;
  }
  /* --quiet: no table on stdout, as its help says (it printed the whole table) */
  int rc = rpt_compare(files[0], files[1], &opt, quiet ? NULL : stdout, &d, &nd, &seeds, err, sizeof err);
  free(d);
  if (rc) {
    fprintf(stderr, "spotlab compare: %s\n", err);
    app_args_free(&a);
    return rc == SIM_EFORMAT || rc == SIM_ENOTFOUND ? 2 : 1;
  }
  if (nrobust)
    rc = app_compare_robust(files[0], files[1], robust,
                            nrobust > APP_ROBUST_MAX_KEYS ? APP_ROBUST_MAX_KEYS + 1 : nrobust, rmetric, nrm, out, quiet,
                            quiet ? NULL : stdout);
  app_args_free(&a); /* after the robust mode: its specs point into the parsed values */
  return rc;
}

static const app_command cmd_compare = {"compare", "paired differences of two runs' metrics (common random numbers)",
                                        cmd_compare_main, &compare__cli};
APP_COMMAND(cmd_compare)
