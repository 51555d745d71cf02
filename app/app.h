/* app.h - the `spotlab` command: subcommands register themselves here.
 *
 * Each subcommand lives in its own file app/cmd_*.c and registers with APP_COMMAND; main()
 * dispatches on the first one or two words ("run", "bench phold"). Exit codes: 0 success,
 * 1 run-time failure, 2 bad usage or bad input (scenario, job file, result file).
 */
#ifndef APP_APP_H
#define APP_APP_H

#include <stdio.h>

struct app_cli;
typedef struct app_command {
  const char *name;                   /* "run", "bench phold": one or two words */
  const char *summary;                /* one line for `spotlab --help` */
  int (*main)(int argc, char **argv); /* argv[0] is the command name's last word */
  const struct app_cli *cli;          /* its option table (app/cli.h), for the man page and the shell
                                         completion that `spotlab --man` and `--completion bash`
                                         write from it; NULL: none */
} app_command;

/* Adds a command (as many as there are: the table grows). */
void app_register(const app_command *c);
#define APP_COMMAND(var)                                                                                               \
  static void __attribute__((constructor)) app__reg_##var(void) { app_register(&(var)); }

/* MPI: initialised on first use (thread level FUNNELED), finalised at exit. */
void app_mpi_init(int *argc, char ***argv);
int app_mpi_rank(void);
int app_mpi_size(void);
/* Collectives for the commands that spread work themselves (sweep points over ranks): n doubles
 * from `root` to every rank; the largest of every rank's v. No-ops on one rank. */
void app_mpi_bcast_doubles(double *v, size_t n, int root);
int app_mpi_max_int(int v);

/* The median of v[0 .. n) (n >= 1; the mean of the middle two when n is even), which sorts v: the
 * figure the benchmarks' --repeat reports. */
double app_median(double *v, size_t n);

/* The command line this process was started with, shell-quoted, for the results'
 * /meta; "" before main has recorded it. */
const char *app_command_line(void);

/* Option helpers: parse "--key value" / "--key=value". Return 1 if argv[*i] matched. A command
 * declares its options in a table instead (app/cli.h), which parses them and prints --help;
 * app_opt_u64 and app_opt_double remain for values inside an option (a list's items). */
int app_opt(int argc, char **argv, int *i, const char *name, const char **value);
int app_opt_u64(const char *opt, const char *text, unsigned long long lo, unsigned long long hi,
                unsigned long long *out);
int app_opt_double(const char *opt, const char *text, double lo, double hi, double *out);

#endif
