/* cmd_compare.c - `spotlab compare BEFORE.h5 AFTER.h5`: paired differences of every metric (common
 * random numbers), a table, and a figure of the main differences (analysis/report, rpt.h). */
#include "analysis/report/rpt.h"
#include "app/app.h"

#include <stdlib.h>
#include <string.h>

static int cmd_compare_main(int argc, char **argv) {
  const char *files[2] = {NULL, NULL}, *out = "compare", *gp = NULL, *v;
  int nf = 0, quiet = 0;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
      printf("usage: spotlab compare BEFORE.h5 AFTER.h5 [--out DIR] [--gnuplot PROGRAM] [--quiet]\n\n"
             "For dry-running a change (a fee, a pricing rule, a policy): runs of the same scenario before\n"
             "and after the change, with the same seed and replications. Prints, for every metric both\n"
             "files hold, the means before and after and the change with its 95%% confidence interval on\n"
             "the paired replications (common random numbers: replication r of both runs shares its\n"
             "seed; a mismatch is reported). Writes DIR/compare.md, DIR/compare.csv and DIR/compare.png\n"
             "and .svg (the largest relative changes among revenue, income, cost, utilization, waits and\n"
             "completion times).\n\n"
             "  --out DIR          output folder (default: compare)\n"
             "  --gnuplot PROGRAM  gnuplot to run ('none': no figure)\n\n"
             "Exit status: 0 done, 1 the outputs could not be written, 2 bad usage or a bad file.\n");
      return 0;
    } else if (app_opt(argc, argv, &i, "--out", &v)) {
      out = v;
    } else if (app_opt(argc, argv, &i, "--gnuplot", &v)) {
      gp = v;
    } else if (!strcmp(argv[i], "--quiet")) {
      quiet = 1;
    } else if (argv[i][0] == '-') {
      fprintf(stderr, "spotlab compare: unknown option '%s' (spotlab compare --help)\n", argv[i]);
      return 2;
    } else if (nf < 2) {
      files[nf++] = argv[i];
    } else {
      fprintf(stderr, "spotlab compare: two results files, BEFORE and AFTER ('%s' is extra)\n", argv[i]);
      return 2;
    }
  }
  if (nf != 2) {
    fprintf(stderr, "usage: spotlab compare BEFORE.h5 AFTER.h5 [--out DIR] (spotlab compare --help)\n");
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
  if (!input_ok) return 2;
  int rc = rpt_compare(files[0], files[1], &opt, stdout, &d, &nd, &seeds, err, sizeof err);
  free(d);
  if (rc) {
    fprintf(stderr, "spotlab compare: %s\n", err);
    return rc == SIM_EFORMAT || rc == SIM_ENOTFOUND ? 2 : 1;
  }
  return 0;
}

static const app_command cmd_compare = {"compare", "paired differences of two runs' metrics (common random numbers)",
                                        cmd_compare_main};
APP_COMMAND(cmd_compare)
