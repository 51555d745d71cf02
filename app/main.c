/* main.c - `spotlab`: dispatch to the registered subcommands. */
#include "app/app.h"
#include "app/cli.h"
#include "spotlab_config.h"
#include "sim/engine_opts.h"

#include <errno.h>
#include <mpi.h>
#include <stdlib.h>
#include <string.h>

/* The registry grows as commands register (it held 32 and dropped any later one silently). */
static const app_command **app__cmds;
static int app__ncmds, app__cap;

void app_register(const app_command *c) {
  if (app__ncmds == app__cap) {
    int cap = app__cap ? 2 * app__cap : 32;
    const app_command **n = realloc(app__cmds, (size_t)cap * sizeof *n);
    if (!n) {
      fprintf(stderr, "spotlab: out of memory registering command '%s'\n", c->name);
      abort();
    }
    app__cmds = n;
    app__cap = cap;
  }
  app__cmds[app__ncmds++] = c;
}

/* Set once by main before any command runs, read-only afterwards (like the registry above). */
static char *app__cmdline;
const char *app_command_line(void) { return app__cmdline ? app__cmdline : ""; }
static void app__cmdline_free(void) {
  free(app__cmdline);
  app__cmdline = NULL; /* main may run more than once (tests/test_registry.c) */
}

/* Characters a POSIX shell takes literally in a word; anything else is single-quoted. */
static int app__shell_safe(const char *a) {
  if (!a[0]) return 0;
  for (const char *c = a; *c; c++)
    if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_@%+=:,./-", *c)) return 0;
  return 1;
}

/* argv joined with spaces, each argument single-quoted where a POSIX shell would not take it
 * literally (pasting the text into a shell runs the same command). malloc'd; NULL when out of memory. */
static char *app__shell_join(int argc, const char *const *argv) {
  size_t n = 1;
  for (int i = 0; i < argc; i++) n += 4 * strlen(argv[i]) + 3; /* ' -> '\'' at worst, quotes, space */
  char *s = malloc(n), *o = s;
  if (!s) return NULL;
  for (int i = 0; i < argc; i++) {
    if (i) *o++ = ' ';
    const char *a = argv[i];
    if (app__shell_safe(a)) {
      size_t l = strlen(a);
      memcpy(o, a, l);
      o += l;
      continue;
    }
    *o++ = '\'';
    for (; *a; a++) {
      if (*a == '\'') {
        memcpy(o, "'\\''", 4);
        o += 4;
      } else
        *o++ = *a;
    }
    *o++ = '\'';
  }
  *o = 0;
  return s;
}

static int app__mpi_started;
static void app__mpi_finalize(void) {
  int fin = 0;
  MPI_Finalized(&fin);
  if (!fin) MPI_Finalize();
}
void app_mpi_init(int *argc, char ***argv) {
  if (app__mpi_started) return;
  int provided;
  MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided);
  app__mpi_started = 1;
  atexit(app__mpi_finalize);
}
int app_mpi_rank(void) {
  int r = 0;
  if (app__mpi_started) MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}
int app_mpi_size(void) {
  int n = 1;
  if (app__mpi_started) MPI_Comm_size(MPI_COMM_WORLD, &n);
  return n;
}
/* An MPI failure is fatal on every rank (this file is linked without the engine's SIM_FATAL). */
static void app__mpi_fail(const char *what) {
  fprintf(stderr, "spotlab: fatal [rank %d]: MPI failure in %s\n", app_mpi_rank(), what);
  MPI_Abort(MPI_COMM_WORLD, 1);
}
void app_mpi_bcast_doubles(double *v, size_t n, int root) {
  if (!app__mpi_started || app_mpi_size() < 2) return;
  for (size_t off = 0; off < n; off += (size_t)1 << 28) { /* MPI counts are int */
    size_t k = n - off < ((size_t)1 << 28) ? n - off : (size_t)1 << 28;
    if (MPI_Bcast(v + off, (int)k, MPI_DOUBLE, root, MPI_COMM_WORLD) != MPI_SUCCESS) app__mpi_fail("MPI_Bcast");
  }
}
int app_mpi_max_int(int v) {
  int m = v;
  if (app__mpi_started && app_mpi_size() > 1 &&
      MPI_Allreduce(&v, &m, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD) != MPI_SUCCESS)
    app__mpi_fail("MPI_Allreduce");
  return m;
}

static int app__cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}
double app_median(double *v, size_t n) {
  qsort(v, n, sizeof *v, app__cmp_double);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

int app_opt(int argc, char **argv, int *i, const char *name, const char **value) {
  size_t n = strlen(name);
  const char *a = argv[*i];
  if (strncmp(a, name, n) != 0) return 0;
  if (a[n] == '=') {
    *value = a + n + 1;
    return 1;
  }
  if (a[n] != '\0') return 0;
  if (*i + 1 >= argc) {
    fprintf(stderr, "spotlab: option %s needs a value\n", name);
    exit(2);
  }
  *value = argv[++*i];
  return 1;
}

int app_opt_u64(const char *opt, const char *text, unsigned long long lo, unsigned long long hi,
                unsigned long long *out) {
  char *end;
  errno = 0;
  unsigned long long v = strtoull(text, &end, 10);
  if (errno || end == text || *end || text[0] == '-' || v < lo || v > hi) {
    fprintf(stderr, "spotlab: %s: '%s' is not a whole number in [%llu, %llu]\n", opt, text, lo, hi);
    return -1;
  }
  *out = v;
  return 0;
}

int app_opt_double(const char *opt, const char *text, double lo, double hi, double *out) {
  char *end;
  errno = 0;
  double v = strtod(text, &end);
  if (errno || end == text || *end || !(v >= lo && v <= hi)) {
    fprintf(stderr, "spotlab: %s: '%s' is not a number in [%g, %g]\n", opt, text, lo, hi);
    return -1;
  }
  *out = v;
  return 0;
}

static int app__cmp(const void *a, const void *b) {
  return strcmp((*(const app_command *const *)a)->name, (*(const app_command *const *)b)->name);
}

static void app__usage(FILE *f) {
  fprintf(f,
          "spotlab %s - a research testbed for decentralized GPU clouds\n\n"
          "usage: spotlab COMMAND [options]   (spotlab COMMAND --help for each)\n\n",
          SPOTLAB_VERSION);
  /* before the commands: tools that read the command list read from "commands:" to the end */
  fprintf(f, "engine switches (environment variables; they change speed, never results):\n");
  const sim_engine_option *eo = sim_engine_options();
  for (int k = 0; k < SIM_OPT_N; k++)
    fprintf(f, "  %-28s %s (%g to %g%s%s, default %g)\n", eo[k].env, eo[k].help, eo[k].lo, eo[k].hi,
            *eo[k].unit ? " " : "", eo[k].unit, eo[k].def);
  fprintf(f, "\ncommands:\n");
  qsort(app__cmds, (size_t)app__ncmds, sizeof app__cmds[0], app__cmp);
  for (int i = 0; i < app__ncmds; i++) fprintf(f, "  %-16s %s\n", app__cmds[i]->name, app__cmds[i]->summary);
  fprintf(f, "\nspotlab --man writes the man page, spotlab --completion bash the shell completion.\n"
             "Exit status: 0 success, 1 run-time failure, 2 bad usage or bad input.\n");
}

/* `spotlab --man`: the man page, from the command list and each command's option table. */
static void app__man(FILE *f) {
  qsort(app__cmds, (size_t)app__ncmds, sizeof app__cmds[0], app__cmp);
  fprintf(f,
          ".\\\" Generated by `spotlab --man` from its option tables; do not edit.\n"
          ".TH SPOTLAB 1 \"\" \"spotlab %s\" \"User Commands\"\n"
          ".SH NAME\nspotlab \\- a research testbed for decentralized GPU clouds\n"
          ".SH SYNOPSIS\n.B spotlab\n.I COMMAND\n[options]\n.br\n.B spotlab\n.I COMMAND\n\\-\\-help\n"
          ".SH DESCRIPTION\nspotlab simulates decentralized GPU markets (an MPI discrete-event engine), runs "
          "job files on real workers under its scheduling core, and reports on the results. Each command "
          "below reads its options from one table, which also prints its \\-\\-help.\n"
          ".SH COMMANDS\n",
          SPOTLAB_VERSION);
  for (int i = 0; i < app__ncmds; i++) {
    if (app__cmds[i]->cli)
      app_cli_man(app__cmds[i]->cli, app__cmds[i]->summary, f);
    else
      fprintf(f, ".SS \"spotlab %s\"\n%s.\n", app__cmds[i]->name, app__cmds[i]->summary);
  }
  fputs(".SH EXIT STATUS\n0 success; 1 a run-time failure (a check failed, a file could not be written: the "
        "reason is said); 2 bad usage or bad input (a scenario, job file or results file; reported as "
        "FILE:LINE: message). 130 and 143: stopped by SIGINT or SIGTERM, finished work kept.\n"
        ".SH FILES\nThe documentation (README.md and docs/) is installed in share/doc/spotlab; the example "
        "scenarios in share/spotlab/scenarios.\n",
        f);
}

/* `spotlab --completion bash`: a bash completion script, from the same tables. */
static void app__completion(FILE *f) {
  qsort(app__cmds, (size_t)app__ncmds, sizeof app__cmds[0], app__cmp);
  fputs("# bash completion for spotlab, generated by `spotlab --completion bash` from its option tables.\n"
        "_spotlab() {\n"
        "  local cur=\"${COMP_WORDS[COMP_CWORD]}\" prev=\"${COMP_WORDS[COMP_CWORD-1]}\"\n"
        "  local cmd=\"${COMP_WORDS[1]}\" words=\"\" opts=\"\"\n"
        "  if [ \"$COMP_CWORD\" -eq 1 ]; then\n    words=\"--help --version --man --completion",
        f);
  for (int i = 0; i < app__ncmds; i++) { /* the first words, once each */
    const char *n = app__cmds[i]->name, *sp = strchr(n, ' ');
    size_t l = sp ? (size_t)(sp - n) : strlen(n);
    int seen = 0;
    for (int j = 0; j < i && !seen; j++)
      seen = !strncmp(app__cmds[j]->name, n, l) && strchr(" ", app__cmds[j]->name[l]);
    if (!seen) fprintf(f, " %.*s", (int)l, n);
  }
  fputs("\"\n    COMPREPLY=($(compgen -W \"$words\" -- \"$cur\"))\n    return\n  fi\n", f);
  /* two-word commands: the second word, then the command is both words */
  fputs("  case \"$cmd\" in\n", f);
  for (int i = 0; i < app__ncmds; i++) {
    const char *n = app__cmds[i]->name, *sp = strchr(n, ' ');
    if (!sp) continue;
    int first = 1;
    for (int j = 0; j < i && first; j++)
      first = !(strchr(app__cmds[j]->name, ' ') && !strncmp(app__cmds[j]->name, n, (size_t)(sp - n) + 1));
    if (!first) continue;
    fprintf(f, "  %.*s)\n    if [ \"$COMP_CWORD\" -eq 2 ]; then\n      COMPREPLY=($(compgen -W \"", (int)(sp - n), n);
    for (int j = i; j < app__ncmds; j++)
      if (!strncmp(app__cmds[j]->name, n, (size_t)(sp - n) + 1)) fprintf(f, "%s ", strchr(app__cmds[j]->name, ' ') + 1);
    fputs("\" -- \"$cur\"))\n      return\n    fi\n    cmd=\"$cmd ${COMP_WORDS[2]}\" ;;\n", f);
  }
  fputs("  esac\n  case \"$cmd\" in\n", f);
  for (int i = 0; i < app__ncmds; i++) {
    if (!app__cmds[i]->cli) continue;
    fprintf(f, "  \"%s\")\n    opts=\"", app__cmds[i]->name);
    app_cli_words(app__cmds[i]->cli, f);
    fputs("\"\n    case \"$prev\" in\n", f);
    app_cli_choice_cases(app__cmds[i]->cli, f);
    fputs("    esac ;;\n", f);
  }
  fputs("  esac\n"
        "  if [ -n \"$words\" ]; then\n    COMPREPLY=($(compgen -W \"$words\" -- \"$cur\"))\n"
        "  elif [[ \"$cur\" == -* ]]; then\n    COMPREPLY=($(compgen -W \"$opts\" -- \"$cur\"))\n"
        "  else\n    COMPREPLY=($(compgen -f -- \"$cur\"))\n  fi\n}\n"
        "complete -o filenames -o bashdefault -F _spotlab spotlab\n",
        f);
}

/* "unknown command 'rn' (did you mean run?)": the closest command word, as options and keys do. */
static void app__unknown(const char *word) {
  const char **names = calloc((size_t)app__ncmds + 1, sizeof *names);
  size_t n = 0;
  char first[64][32];
  for (int i = 0; names && i < app__ncmds; i++) {
    const char *nm = app__cmds[i]->name, *sp = strchr(nm, ' ');
    if (!sp) {
      names[n++] = nm;
    } else if (n < 64) { /* "bench" of "bench phold" */
      snprintf(first[n], sizeof first[n], "%.*s", (int)(sp - nm), nm);
      names[n] = first[n];
      n++;
    }
  }
  const char *best = names ? app_cli_closest(word, names, n) : NULL;
  if (best)
    fprintf(stderr, "spotlab: unknown command '%s' (did you mean %s? spotlab --help lists them)\n", word, best);
  else
    fprintf(stderr, "spotlab: unknown command '%s' (spotlab --help lists them)\n", word);
  free(names);
}

int main(int argc, char **argv) {
  if (!app__cmdline) atexit(app__cmdline_free);
  free(app__cmdline);
  app__cmdline = app__shell_join(argc, (const char *const *)argv);
  if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
    app__usage(stdout);
    return argc < 2 ? 2 : 0;
  }
  if (!strcmp(argv[1], "--man") && argc == 2) {
    app__man(stdout);
    return 0;
  }
  if (!strcmp(argv[1], "--completion")) {
    if (argc != 3 || strcmp(argv[2], "bash")) {
      fprintf(stderr, "usage: spotlab --completion bash   (the only shell it writes for)\n");
      return 2;
    }
    app__completion(stdout);
    return 0;
  }
  if (!strcmp(argv[1], "--version")) {
    printf("spotlab %s (CUDA kernels %s)\n", SPOTLAB_VERSION, SPOTLAB_HAVE_CUDA ? "built" : "not built");
    return 0;
  }
  { /* the engine's switches (sim/engine_opts.c): a bad value stops here, before any work */
    sim_engine_settings st;
    char err[512];
    if (sim_engine_settings_read(&st, err, sizeof err)) {
      fprintf(stderr, "spotlab: %s\n", err);
      return 2;
    }
  }
  /* Two-word commands first ("bench phold"), then one word. */
  for (int i = 0; i < app__ncmds; i++) {
    const char *n = app__cmds[i]->name, *sp = strchr(n, ' ');
    if (sp && argc >= 3 && !strncmp(n, argv[1], (size_t)(sp - n)) && strlen(argv[1]) == (size_t)(sp - n) &&
        !strcmp(sp + 1, argv[2]))
      return app__cmds[i]->main(argc - 2, argv + 2);
  }
  for (int i = 0; i < app__ncmds; i++)
    if (!strchr(app__cmds[i]->name, ' ') && !strcmp(app__cmds[i]->name, argv[1]))
      return app__cmds[i]->main(argc - 1, argv + 1);
  /* A group word alone ("spotlab bench"): list its subcommands. */
  int shown = 0;
  for (int i = 0; i < app__ncmds; i++) {
    const char *n = app__cmds[i]->name, *sp = strchr(n, ' ');
    if (sp && !strncmp(n, argv[1], (size_t)(sp - n)) && strlen(argv[1]) == (size_t)(sp - n)) {
      if (!shown++) fprintf(stderr, "usage: spotlab %s SUBCOMMAND\n", argv[1]);
      fprintf(stderr, "  %-16s %s\n", n, app__cmds[i]->summary);
    }
  }
  if (shown) return 2;
  app__unknown(argv[1]);
  return 2;
}
