/* cmd_lab.c - `spotlab lab`: run a job file on real workers under the scheduling core (lab/). */
#include "app/app.h"
#include "app/cli.h"

#include <errno.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "lab/lab.h"

#include <mpi.h>

static const app_option lab__opts[] = {
    {"--journal", APP_O_STRING, "FILE", 0, 0, 0,
     "append-only journal (default results/JOBNAME.journal); kernel job\noutputs go to FILE.d/"},
    {"--resume", APP_O_FLAG, NULL, 0, 0, 0, "continue the lab recorded in the journal (after the runner died)"},
    {"--out", APP_O_STRING, "FILE.h5", 0, 0, 0, "results (default results/JOBNAME.h5; docs/results-format.md)"},
    {"--also-simulate", APP_O_FLAG, NULL, 0, 0, 0,
     "also run the job file through the simulator with the measured worker\n"
     "speeds and print simulated and real times side by side"},
    {"--predict", APP_O_FLAG, NULL, 0, 0, 0,
     "calibrate the workers first (alone, then together), store the\n"
     "calibration as JOURNAL.calib.csv, predict the lab from it through\n"
     "the simulator, then run it and report predicted against real"},
    {"--calibration", APP_O_STRING, "FILE", 0, 0, 0, "with --predict: predict from this calibration, do not measure"},
    {"--verbose", APP_O_FLAG, NULL, 0, 0, 0, "one line per decision and fault"},
    {"--check", APP_O_FLAG, NULL, 0, 0, 0, "validate the job file and stop"},
    {"--keys", APP_O_FLAG, NULL, 0, 0, 0, "list every key of a job file (no JOBFILE needed)"},
    {NULL},
};
static const app_cli lab__cli = {
    "lab",
    "JOBFILE",
    0,
    1,
    "spotlab lab --keys",
    "Runs the jobs of JOBFILE on worker processes, every decision (placement, replacement,\n"
    "checkpoints, redundancy) made by the scheduling core, with the faults the file asks for.\n"
    "This machine has no GPU support in lab mode yet: workers are CPU processes running the\n"
    "kernels' CPU twins, slowed to lab.speeds by duty-cycling (docs/lab.md).\n",
    "Under mpirun (one rank per host, e.g. mpirun -np 2 --hostfile HOSTS spotlab lab FILE), rank 0\n"
    "runs the scheduling core, the journal and the report; every rank runs its block of the\n"
    "workers and relays their messages.\n\n"
    "Exit status: 0 the lab ran to the end (jobs may have failed: see the table), 1 run-time\n"
    "failure (time limit, I/O), 2 bad usage or bad job file (FILE:LINE: message).\n",
    lab__opts};

static void lab__default_path(const char *jobfile, const char *ext, char *out, size_t len) {
  char *c = strdup(jobfile);
  char *b = c ? basename(c) : "lab";
  char *dot = strrchr(b, '.');
  if (dot) *dot = 0;
  snprintf(out, len, "results/%s%s", b, ext);
  free(c);
}

static int cmd_lab_main(int argc, char **argv) {
  app_args a;
  int prc = app_cli_parse(&lab__cli, argc, argv, &a);
  if (prc) {
    app_args_free(&a);
    return prc == 1 ? 0 : 2;
  }
  const char *jobfile = a.noperands ? a.operand[0] : NULL, *journal = app_args_str(&a, "--journal", NULL),
             *out = app_args_str(&a, "--out", NULL);
  int resume = app_args_flag(&a, "--resume"), sim = app_args_flag(&a, "--also-simulate"),
      verbose = app_args_flag(&a, "--verbose"), check = app_args_flag(&a, "--check"),
      keys = app_args_flag(&a, "--keys"), predict = app_args_flag(&a, "--predict");
  const char *calibration = app_args_str(&a, "--calibration", NULL);
  app_args_free(&a);
  if (keys) {
    lab_config_describe(stdout);
    return 0;
  }
  if (!jobfile) {
    app_cli_usage(&lab__cli, stderr);
    return 2;
  }
  if (calibration && !predict) {
    fprintf(stderr, "spotlab lab: --calibration goes with --predict\n");
    return 2;
  }
  /* Several hosts: one MPI rank per host (mpirun with a host file). MPI is started only then,
   * since the runner forks its workers. */
  const char *np = getenv("OMPI_COMM_WORLD_SIZE");
  if (!np) np = getenv("PMI_SIZE");
  int use_mpi = np && atoi(np) > 1, rank = 0;
  if (use_mpi) {
    app_mpi_init(&argc, &argv);
    rank = app_mpi_rank();
  }
  sim_diag d;
  sim_diag_init(&d, rank == 0 ? stderr : NULL);
  lab_config *cfg;
  if (lab_config_load(jobfile, &d, &cfg) != 0) {
    if (rank == 0)
      fprintf(stderr, "spotlab lab: %d error%s in %s; nothing was run\n", d.nerrors, d.nerrors == 1 ? "" : "s",
              jobfile);
    return 2;
  }
  if (check && rank == 0) {
    printf("%s: OK: %zu jobs, %zu scheduled faults, %lld workers\n", jobfile, cfg->njobs, cfg->nfaults,
           (long long)cfg->lab.workers);
    lab_config_free(cfg);
    return 0;
  }
  if (check) {
    lab_config_free(cfg);
    return 0;
  }
  char defj[4096], defo[4096];
  if ((!journal || !out) && rank == 0) mkdir("results", 0777);
  if (!journal) {
    lab__default_path(jobfile, ".journal", defj, sizeof defj);
    journal = defj;
  }
  if (!out) {
    lab__default_path(jobfile, ".h5", defo, sizeof defo);
    out = defo;
  }
  if (rank == 0) {
    /* neither the results nor the journal may be the job file (or each other's file) */
    const char *ins[2] = {jobfile, journal};
    int orc = app_out_check(stderr, "lab", out, ins, 2, 0);
    if (!orc && !resume) orc = app_out_check(stderr, "lab", journal, ins, 1, 0);
    if (!orc && !strcmp(out, journal)) {
      fprintf(stderr, "spotlab lab: --out and --journal are the same file '%s'\n", out);
      orc = 2;
    }
    if (orc) {
      lab_config_free(cfg);
      if (use_mpi) MPI_Abort(MPI_COMM_WORLD, orc);
      return orc;
    }
  }
  if (calibration) { /* a bad calibration file is bad input: refused before the journal is created */
    lab_calib *cal = NULL;
    char cerr[2048];
    int crc = lab_calib_load(calibration, cfg, &cal, cerr, sizeof cerr);
    lab_calib_free(cal);
    if (crc) {
      if (rank == 0) fprintf(stderr, "%s\nspotlab lab: nothing was run\n", cerr);
      lab_config_free(cfg);
      if (use_mpi) MPI_Abort(MPI_COMM_WORLD, crc == LAB_ECONFIG ? 2 : 1);
      return crc == LAB_ECONFIG ? 2 : 1;
    }
  }
  lab_opts o = {journal, out, resume, sim, verbose, rank == 0 ? stdout : NULL, use_mpi, predict, calibration};
  lab_report rep;
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  cfg->command_line = app_command_line();
  int rc = lab_run(cfg, &o, &rep);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  double wall = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
  int status = 0;
  if (rank != 0) {
    status = rc ? 1 : 0;
  } else if (rc && rc != LAB_ETIMEOUT) {
    fprintf(stderr, "spotlab lab: %s\n", lab_strerror(rc));
    status = rc == LAB_EJOURNAL || rc == LAB_ECONFIG ? 2 : 1;
    if (rc == LAB_ESTOPPED) { /* resumable: its journal is whole and no job was charged */
      if (rank == 0)
        fprintf(stderr, "spotlab lab: continue with: spotlab lab %s --journal %s --resume\n", jobfile, journal);
      status = 3;
    }
  } else {
    if (rc == LAB_ETIMEOUT) status = 1;
    lab_report_print(stdout, cfg, &rep);
    char err[512];
    if (lab_results_write(out, cfg, &rep, wall, err, sizeof err) != 0) {
      fprintf(stderr, "spotlab lab: %s\n", err);
      status = 1;
    } else {
      printf("\njournal: %s\nresults: %s\n", journal, out);
    }
  }
  lab_report_free(&rep);
  lab_config_free(cfg);
  return status;
}

static const app_command cmd_lab = {"lab", "run a job file on real workers under the scheduling core", cmd_lab_main};
APP_COMMAND(cmd_lab)
