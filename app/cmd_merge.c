/* cmd_merge.c - `spotlab merge OUT.h5 PART.h5...`: joins the parts of one run (each written by
 * `spotlab run --shard K/N`, say one task of a Slurm job array: docs/slurm.md) into one results
 * file, identical dataset by dataset to the file one process running every replication writes.
 * The checks and the layout are sim_results_merge's (sim/results_io.h). */
#include "app/app.h"
#include "app/cli.h"
#include "sim/results_io.h"

#include <string.h>

static const app_option merge__opts[] = {{NULL}};
static const app_cli merge__cli = {
    "merge",
    "OUT.h5 PART.h5...",
    2,
    APP_CLI_ANY,
    NULL,
    "Joins the parts of one run (spotlab run --shard K/N ... --out PART.h5) into one results\n"
    "file, identical dataset by dataset to a single-process run of every replication: /metrics\n"
    "in replication order, /summary recomputed, each /reps/rep_NNNN copied, /meta of the run\n"
    "(spread \"merged\", merged_parts). The parts may come in any order. Refused, with nothing\n"
    "written: parts of different runs (model, seed, run.reps, run.end, scenario, --param),\n"
    "replications in two parts or in none, damaged files, OUT among the parts.\n",
    "Exit status: 0 merged, 1 the file could not be written, 2 bad usage or parts that do not fit.\n",
    merge__opts};

static int cmd_merge_main(int argc, char **argv) {
  app_args a;
  int prc = app_cli_parse(&merge__cli, argc, argv, &a);
  if (prc) {
    app_args_free(&a);
    return prc == 1 ? 0 : 2;
  }
  const char *out = a.all[0];
  int n = a.noperands - 1;
  const char **parts = calloc((size_t)n + 1, sizeof *parts);
  if (!parts) SIM_FATAL("out of memory");
  for (int i = 0; i < n; i++) parts[i] = a.all[i + 1];
  app_args_free(&a); /* the operands point into argv */
  for (int i = 0; i < n; i++)
    if (!strcmp(parts[i], out)) {
      fprintf(stderr, "spotlab merge: the output %s is also one of the parts\n", out);
      free(parts);
      return 2;
    }
  int orc = app_out_check(stderr, "merge", out, parts, n, 0);
  if (orc) {
    free(parts);
    return orc;
  }
  char err[1024];
  int rc = sim_results_merge(out, parts, n, err, sizeof err);
  free(parts);
  if (rc) {
    fprintf(stderr, "spotlab merge: %s; nothing was written\n", err);
    return rc == SIM_EIO || rc == SIM_ENOMEM ? 1 : 2;
  }
  printf("merged %d part%s into %s\n", n, n == 1 ? "" : "s", out);
  return 0;
}

static const app_command cmd_merge = {"merge", "join the parts of one run (--shard) into one results file",
                                      cmd_merge_main};
APP_COMMAND(cmd_merge)
