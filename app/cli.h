/* cli.h - one table of options per subcommand, driving both parsing and --help.
 *
 * A command declares its options once (name, type, bounds, whether it may repeat, help) in an
 * app_option table and its operands and texts in an app_cli; app_cli_parse reads argv against it
 * and app_cli_help prints the usage line and the option list from the same table, so the two
 * cannot drift (SimGrid's and Redis's one-table configuration, docs/architecture.md "The
 * command"). Errors name the option and what it accepts: an unknown option gets the closest
 * known one, a value out of range its range, a non-repeatable option given twice is refused.
 */
#ifndef APP_CLI_H
#define APP_CLI_H

#include <stdio.h>

typedef enum app_otype {
  APP_O_FLAG,   /* no value: --quiet */
  APP_O_STRING, /* any non-empty text: --out FILE.h5 */
  APP_O_U64,    /* a whole number in [lo, hi] */
  APP_O_DOUBLE, /* a number in [lo, hi] */
  APP_O_CHOICE  /* one of choices[] */
} app_otype;

enum { APP_REPEAT = 1, APP_REQUIRED = 2 };

typedef struct app_option {
  const char *name;           /* "--reps" */
  app_otype type;             /* what the value is */
  const char *metavar;        /* "N", "FILE.h5": the value's name in usage and help (NULL for flags) */
  double lo, hi;              /* U64, DOUBLE: accepted range (hi >= 1.8e19: any 64-bit whole number) */
  int flags;                  /* APP_REPEAT: may be given more than once (every value kept, in order);
                                 APP_REQUIRED: must be given */
  const char *help;           /* one line, or several separated by \n */
  const char *const *choices; /* CHOICE: NULL-terminated names */
  const char *word;           /* DOUBLE: a word accepted besides a number ("random"), or NULL */
} app_option;

typedef struct app_cli {
  const char *command;     /* "run", "bench phold": for messages and usage */
  const char *operands;    /* "SCENARIO", "BEFORE.h5 AFTER.h5", "[MODEL]", or "" */
  int min_operands;        /* fewer: the usage on stderr, exit 2 */
  int max_operands;        /* more: "'x' is extra", exit 2; APP_CLI_ANY: no limit (app_args.all) */
  const char *usage_extra; /* further usage lines, verbatim ("spotlab lab --keys"), or NULL */
  const char *about;       /* what the command does, printed after the usage */
  const char *epilog;      /* after the options (parallelism, exit status), or NULL */
  const app_option *opts;  /* terminated by {NULL} */
} app_cli;

/* Options several commands share, declared here once with one bound each, so that `run`,
 * `sweep`, `experiment`, `check` and the benchmarks accept the same values: each command gives
 * only its help line. The seed and replication bounds are the scenario keys' own (run.seed,
 * run.reps in app/runner.c use APP_SEED_MAX and APP_REPS_MAX), so an option never accepts what the
 * scenario key would refuse. */
#define APP_SEED_MAX 9.2e18 /* a seed fits in a signed 64-bit run.seed (2^63 - 1 = 9.22e18) */
#define APP_REPS_MAX 10000
#define APP_OPT_SEED(help)                                                                                             \
  { "--seed", APP_O_U64, "N", 0, APP_SEED_MAX, 0, help }
#define APP_OPT_REPS(help)                                                                                             \
  { "--reps", APP_O_U64, "N", 1, APP_REPS_MAX, 0, help }
#define APP_OPT_SPREAD(help)                                                                                           \
  { "--spread", APP_O_CHOICE, "auto|reps|model", 0, 0, 0, help, app_spread_choices }
#define APP_OPT_QUIET(help)                                                                                            \
  { "--quiet", APP_O_FLAG, NULL, 0, 0, 0, help }
#define APP_OPT_PARAM(help)                                                                                            \
  { "--param", APP_O_STRING, "KEY=VALUE", 0, 0, APP_REPEAT, help }
/* --spread's choices, in the order of app_spread (runner.h): auto, reps, model. */
extern const char *const app_spread_choices[];

#define APP_CLI_MAX_OPTS 40
#define APP_CLI_MAX_OPERANDS 8
#define APP_CLI_ANY (-1) /* max_operands: as many as given (`spotlab merge OUT PART...`) */

/* What app_cli_parse found. Values point into argv (no copies, nothing to free but `values`). */
typedef struct app_args {
  const app_cli *cli;
  int count[APP_CLI_MAX_OPTS];               /* times each option was given */
  const char **values[APP_CLI_MAX_OPTS];     /* each occurrence's text (malloc'd array; flags: "") */
  double num[APP_CLI_MAX_OPTS];              /* U64, DOUBLE: the last value, parsed */
  int word[APP_CLI_MAX_OPTS];                /* DOUBLE: the last value was opt->word */
  const char *operand[APP_CLI_MAX_OPERANDS]; /* the first ones */
  int noperands;
  const char **all; /* every operand, in order (malloc'd; freed by app_args_free) */
} app_args;

/* Parses argv[1..argc-1] (argv[0] is the command's last word). Returns 0 (parsed), 1 (--help was
 * asked for and printed on stdout: exit 0), or 2 (a message on stderr: exit 2). A lone "--" makes
 * every later argument an operand. Free with app_args_free whatever it returns. */
int app_cli_parse(const app_cli *c, int argc, char **argv, app_args *a);
void app_args_free(app_args *a);

/* The usage line(s), the about text, the options (from the table) and the epilog. */
void app_cli_help(const app_cli *c, FILE *f);
/* "usage: spotlab CMD ..." alone, with a pointer to --help (for a missing operand). */
void app_cli_usage(const app_cli *c, FILE *f);

/* Accessors by option name; a name not in the table is a bug (SIM_FATAL). */
int app_args_count(const app_args *a, const char *name);
const char *app_args_str(const app_args *a, const char *name, const char *def); /* the last value */
const char *app_args_at(const app_args *a, const char *name, int k);            /* k-th value */
unsigned long long app_args_u64(const app_args *a, const char *name, unsigned long long def);
double app_args_double(const app_args *a, const char *name, double def);
int app_args_flag(const app_args *a, const char *name);
int app_args_is_word(const app_args *a, const char *name);         /* DOUBLE: the value given was opt->word */
int app_args_choice(const app_args *a, const char *name, int def); /* CHOICE: index into choices */

/* --seed and --reps (APP_OPT_SEED, APP_OPT_REPS) as the overrides "run.seed=N", "run.reps=N"
 * (written into buf[0], buf[1]), appended to ovr[*n] in that order when given. */
void app_args_run_overrides(const app_args *a, char buf[2][64], const char **ovr, int *n);

/* Checks, before any work, that a command's output can be written. `out` is a file (folder 0:
 * results, sweep, lab) or a folder (folder 1: a report's DIR, created if absent). Refused with exit
 * status 2 (bad usage): a file output that is a folder ("dir/") or one of the inputs
 * inputs[0..ninputs) (the same file: it would be overwritten), a folder output that is a file.
 * Refused with exit status 1 (the file system's refusal, a run-time failure, as when a write
 * fails later): a folder that does not accept a new file, with the reason ("Read-only file system",
 * "No such file or directory", "Permission denied"): a probe file is created there and removed,
 * which also holds for root on a read-only mount. Returns 0 or that status, after a message
 * "spotlab CMD: ..." on `msg` (NULL: silent, for the ranks other than 0). */
int app_out_check(FILE *msg, const char *cmd, const char *out, const char *const *inputs, int ninputs, int folder);

#endif
