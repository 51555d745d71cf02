/* cli.c - option tables: parsing and --help from one declaration (cli.h). */
#include "app/cli.h"
#include "sim/edit_distance.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int cli__nopts(const app_cli *c) {
  int n = 0;
  while (c->opts && c->opts[n].name) n++;
  if (n > APP_CLI_MAX_OPTS) {
    fprintf(stderr, "spotlab %s: bug: more than %d options in its table\n", c->command, APP_CLI_MAX_OPTS);
    abort();
  }
  return n;
}

static int cli__find(const app_cli *c, const char *name, size_t len) {
  for (int k = 0; c->opts && c->opts[k].name; k++)
    if (strlen(c->opts[k].name) == len && !strncmp(c->opts[k].name, name, len)) return k;
  return -1;
}

static int cli__index(const app_args *a, const char *name) {
  int k = cli__find(a->cli, name, strlen(name));
  if (k < 0) {
    fprintf(stderr, "spotlab %s: bug: option %s is not in its table\n", a->cli->command, name);
    abort();
  }
  return k;
}

/* The bounds of a number option as text: "[1, 10000]". */
static void cli__range(const app_option *o, char *buf, size_t len) {
  if (o->type == APP_O_U64) {
    char lo[32], hi[32];
    /* exact below 2^53, where a double holds every whole number; 9.2e+18 above */
    snprintf(lo, sizeof lo, o->lo < 9e15 ? "%.0f" : "%.3g", o->lo);
    if (o->hi >= 1.8e19)
      snprintf(hi, sizeof hi, "2^64-1");
    else
      snprintf(hi, sizeof hi, o->hi < 9e15 ? "%.0f" : "%.3g", o->hi);
    snprintf(buf, len, "[%s, %s]", lo, hi);
  } else {
    snprintf(buf, len, "[%g, %g]", o->lo, o->hi);
  }
}

static void cli__choices(const app_option *o, char *buf, size_t len) {
  buf[0] = 0;
  for (int k = 0; o->choices && o->choices[k]; k++) {
    size_t l = strlen(buf);
    snprintf(buf + l, len - l, "%s%s", k ? ", " : "", o->choices[k]);
  }
}

/* What an option accepts beyond its help: its range (and word), its choices, repeatable, required;
 * the same text for --help and the man page. */
static void cli__extra(const app_option *o, char *extra, size_t len) {
  extra[0] = 0;
  if (o->type == APP_O_U64 || o->type == APP_O_DOUBLE) {
    char r[96];
    cli__range(o, r, sizeof r);
    snprintf(extra, len, " %s%s%s%s", r, o->word ? " or '" : "", o->word ? o->word : "", o->word ? "'" : "");
  } else if (o->type == APP_O_CHOICE) {
    char l[512];
    cli__choices(o, l, sizeof l);
    snprintf(extra, len, " (one of %s)", l);
  }
  if (o->flags & APP_REPEAT) strncat(extra, " (repeatable)", len - strlen(extra) - 1);
  if (o->flags & APP_REQUIRED) strncat(extra, " (required)", len - strlen(extra) - 1);
}

/* Checks one value of option o; 0, or 2 after the message. */
static int cli__value(const app_cli *c, const app_option *o, const char *v, double *num, int *word) {
  char range[96], list[512];
  *word = 0;
  if (!*v) {
    fprintf(stderr, "spotlab %s: %s: an empty value (expected %s)\n", c->command, o->name, o->metavar);
    return 2;
  }
  switch (o->type) {
  case APP_O_FLAG:
  case APP_O_STRING: return 0;
  case APP_O_U64: {
    char *end;
    errno = 0;
    unsigned long long x = strtoull(v, &end, 10);
    unsigned long long lo = (unsigned long long)o->lo, hi = o->hi >= 1.8e19 ? ~0ull : (unsigned long long)o->hi;
    if (errno || end == v || *end || v[0] == '-' || v[0] == '+' || v[0] == ' ' || x < lo || x > hi) {
      cli__range(o, range, sizeof range);
      fprintf(stderr, "spotlab %s: %s: '%s' is not a whole number in %s\n", c->command, o->name, v, range);
      return 2;
    }
    *num = (double)x;
    return 0;
  }
  case APP_O_DOUBLE: {
    if (o->word && !strcmp(v, o->word)) {
      *word = 1;
      return 0;
    }
    char *end;
    errno = 0;
    double x = strtod(v, &end);
    if (errno || end == v || *end || !(x >= o->lo && x <= o->hi)) {
      cli__range(o, range, sizeof range);
      fprintf(stderr, "spotlab %s: %s: '%s' is not a number in %s%s%s%s\n", c->command, o->name, v, range,
              o->word ? " (or '" : "", o->word ? o->word : "", o->word ? "')" : "");
      return 2;
    }
    *num = x;
    return 0;
  }
  case APP_O_CHOICE:
    for (int k = 0; o->choices && o->choices[k]; k++)
      if (!strcmp(v, o->choices[k])) {
        *num = k;
        return 0;
      }
    cli__choices(o, list, sizeof list);
    fprintf(stderr, "spotlab %s: %s: '%s' is not one of %s\n", c->command, o->name, v, list);
    return 2;
  }
  return 2;
}

static int cli__unknown(const app_cli *c, const char *arg, size_t len) {
  const char *best = NULL;
  unsigned bd = len < 6 ? 2 : 3;
  for (int k = 0; c->opts && c->opts[k].name; k++) {
    unsigned d = sim_edit_distance(arg, len, c->opts[k].name, strlen(c->opts[k].name));
    /* a prefix of an option ("--rep" for "--reps") is close whatever its distance */
    if (len >= 3 && !strncmp(c->opts[k].name, arg, len)) d = 1;
    if (d <= bd && (!best || d < bd)) {
      bd = d;
      best = c->opts[k].name;
    }
  }
  if (best)
    fprintf(stderr, "spotlab %s: unknown option '%.*s' (did you mean %s? spotlab %s --help lists them)\n", c->command,
            (int)len, arg, best, c->command);
  else
    fprintf(stderr, "spotlab %s: unknown option '%.*s' (spotlab %s --help lists them)\n", c->command, (int)len, arg,
            c->command);
  return 2;
}

int app_cli_parse(const app_cli *c, int argc, char **argv, app_args *a) {
  memset(a, 0, sizeof *a);
  a->cli = c;
  cli__nopts(c);
  int dashdash = 0;
  for (int i = 1; i < argc; i++) {
    const char *arg = argv[i];
    if (!dashdash && !strcmp(arg, "--")) {
      dashdash = 1;
      continue;
    }
    if (!dashdash && (!strcmp(arg, "--help") || !strcmp(arg, "-h"))) {
      app_cli_help(c, stdout);
      return 1;
    }
    if (dashdash || arg[0] != '-' || !arg[1]) {
      if (c->max_operands != APP_CLI_ANY && (a->noperands >= c->max_operands || a->noperands >= APP_CLI_MAX_OPERANDS)) {
        if (c->max_operands == 0)
          fprintf(stderr, "spotlab %s: takes no operands, only options ('%s' is extra; spotlab %s --help)\n",
                  c->command, arg, c->command);
        else
          fprintf(stderr, "spotlab %s: takes %s ('%s' is extra; spotlab %s --help)\n", c->command, c->operands, arg,
                  c->command);
        return 2;
      }
      if (!a->all && !(a->all = calloc((size_t)argc, sizeof *a->all))) {
        fprintf(stderr, "spotlab %s: out of memory\n", c->command);
        return 2;
      }
      a->all[a->noperands] = arg;
      if (a->noperands < APP_CLI_MAX_OPERANDS) a->operand[a->noperands] = arg;
      a->noperands++;
      continue;
    }
    const char *eq = arg[1] == '-' ? strchr(arg, '=') : NULL;
    size_t len = eq ? (size_t)(eq - arg) : strlen(arg);
    int k = cli__find(c, arg, len);
    if (k < 0) return cli__unknown(c, arg, len);
    const app_option *o = &c->opts[k];
    const char *v;
    if (o->type == APP_O_FLAG) {
      if (eq) {
        fprintf(stderr, "spotlab %s: %s takes no value (got '%s')\n", c->command, o->name, arg);
        return 2;
      }
      v = "";
    } else if (eq) {
      v = eq + 1;
    } else if (i + 1 < argc) {
      v = argv[++i];
    } else {
      fprintf(stderr, "spotlab %s: %s needs a value (%s)\n", c->command, o->name, o->metavar);
      return 2;
    }
    if (a->count[k] && !(o->flags & APP_REPEAT)) {
      fprintf(stderr, "spotlab %s: %s given twice (it takes one value; spotlab %s --help)\n", c->command, o->name,
              c->command);
      return 2;
    }
    if (o->type != APP_O_FLAG && cli__value(c, o, v, &a->num[k], &a->word[k])) return 2;
    const char **nv = realloc(a->values[k], (size_t)(a->count[k] + 1) * sizeof *nv);
    if (!nv) {
      fprintf(stderr, "spotlab %s: out of memory\n", c->command);
      return 2;
    }
    a->values[k] = nv;
    nv[a->count[k]++] = v;
  }
  for (int k = 0; c->opts && c->opts[k].name; k++)
    if ((c->opts[k].flags & APP_REQUIRED) && !a->count[k]) {
      fprintf(stderr, "spotlab %s: %s %s is required\n", c->command, c->opts[k].name,
              c->opts[k].metavar ? c->opts[k].metavar : "");
      app_cli_usage(c, stderr);
      return 2;
    }
  if (a->noperands < c->min_operands) {
    app_cli_usage(c, stderr);
    return 2;
  }
  return 0;
}

void app_args_free(app_args *a) {
  for (int k = 0; k < APP_CLI_MAX_OPTS; k++) free(a->values[k]);
  free(a->all);
  memset(a, 0, sizeof *a);
}

/* "[--seed N]", "[--param KEY=VALUE]...", "[--quiet]" */
static void cli__synopsis(const app_option *o, char *buf, size_t len) {
  int req = (o->flags & APP_REQUIRED) != 0;
  const char *dots = o->flags & APP_REPEAT ? "..." : "";
  if (o->type == APP_O_FLAG)
    snprintf(buf, len, "%s%s%s%s", req ? "" : "[", o->name, req ? "" : "]", dots);
  else
    snprintf(buf, len, "%s%s %s%s%s", req ? "" : "[", o->name, o->metavar, req ? "" : "]", dots);
}

static void cli__usage_line(const app_cli *c, FILE *f) {
  char head[160];
  snprintf(head, sizeof head, "usage: spotlab %s%s%s", c->command, c->operands[0] ? " " : "", c->operands);
  fputs(head, f);
  size_t col = strlen(head), indent = strlen("usage: spotlab ") + strlen(c->command) + 1;
  for (int k = 0; c->opts && c->opts[k].name; k++) {
    char w[160];
    cli__synopsis(&c->opts[k], w, sizeof w);
    if (col + 1 + strlen(w) > 100) {
      fprintf(f, "\n%*s", (int)indent, "");
      col = indent;
    } else {
      fputc(' ', f);
      col++;
    }
    fputs(w, f);
    col += strlen(w);
  }
  fputc('\n', f);
  for (const char *l = c->usage_extra; l && *l;) {
    const char *nl = strchr(l, '\n');
    size_t n = nl ? (size_t)(nl - l) : strlen(l);
    fprintf(f, "       %.*s\n", (int)n, l);
    l = nl ? nl + 1 : l + n;
  }
}

void app_cli_usage(const app_cli *c, FILE *f) {
  cli__usage_line(c, f);
  fprintf(f, "(spotlab %s --help says more)\n", c->command);
}

void app_cli_help(const app_cli *c, FILE *f) {
  cli__usage_line(c, f);
  if (c->about) fprintf(f, "\n%s", c->about);
  if (c->about && c->about[0] && c->about[strlen(c->about) - 1] != '\n') fputc('\n', f);
  size_t w = strlen("-h, --help");
  for (int k = 0; c->opts && c->opts[k].name; k++) {
    const app_option *o = &c->opts[k];
    size_t l = strlen(o->name) + (o->metavar && o->type != APP_O_FLAG ? 1 + strlen(o->metavar) : 0);
    if (l > w) w = l;
  }
  w += 2;
  fprintf(f, "\noptions:\n");
  for (int k = 0; c->opts && c->opts[k].name; k++) {
    const app_option *o = &c->opts[k];
    char left[128], extra[600] = "";
    snprintf(left, sizeof left, "%s%s%s", o->name, o->type != APP_O_FLAG ? " " : "",
             o->type != APP_O_FLAG && o->metavar ? o->metavar : "");
    cli__extra(o, extra, sizeof extra);
    const char *h = o->help ? o->help : "";
    int first = 1;
    do {
      const char *nl = strchr(h, '\n');
      size_t n = nl ? (size_t)(nl - h) : strlen(h);
      fprintf(f, "  %-*s%.*s%s\n", (int)w, first ? left : "", (int)n, h, nl ? "" : extra);
      first = 0;
      h = nl ? nl + 1 : h + n;
    } while (*h);
  }
  fprintf(f, "  %-*sthis help\n", (int)w, "-h, --help");
  if (c->epilog) fprintf(f, "\n%s%s", c->epilog, c->epilog[strlen(c->epilog) - 1] == '\n' ? "" : "\n");
}

int app_args_count(const app_args *a, const char *name) { return a->count[cli__index(a, name)]; }

const char *app_args_str(const app_args *a, const char *name, const char *def) {
  int k = cli__index(a, name);
  return a->count[k] ? a->values[k][a->count[k] - 1] : def;
}

const char *app_args_at(const app_args *a, const char *name, int i) {
  int k = cli__index(a, name);
  return i >= 0 && i < a->count[k] ? a->values[k][i] : NULL;
}

unsigned long long app_args_u64(const app_args *a, const char *name, unsigned long long def) {
  int k = cli__index(a, name);
  if (!a->count[k]) return def;
  /* parsed again for the exact value (num holds a double, exact only below 2^53) */
  return strtoull(a->values[k][a->count[k] - 1], NULL, 10);
}

double app_args_double(const app_args *a, const char *name, double def) {
  int k = cli__index(a, name);
  return a->count[k] && !a->word[k] ? a->num[k] : def;
}

int app_args_flag(const app_args *a, const char *name) { return a->count[cli__index(a, name)] > 0; }

int app_args_is_word(const app_args *a, const char *name) {
  int k = cli__index(a, name);
  return a->count[k] && a->word[k];
}

int app_args_choice(const app_args *a, const char *name, int def) {
  int k = cli__index(a, name);
  return a->count[k] ? (int)a->num[k] : def;
}

const char *const app_spread_choices[] = {"auto", "reps", "model", NULL};

void app_args_run_overrides(const app_args *a, char buf[2][64], const char **ovr, int *n) {
  if (app_args_count(a, "--seed")) {
    snprintf(buf[0], 64, "run.seed=%llu", app_args_u64(a, "--seed", 0));
    ovr[(*n)++] = buf[0];
  }
  if (app_args_count(a, "--reps")) {
    snprintf(buf[1], 64, "run.reps=%llu", app_args_u64(a, "--reps", 0));
    ovr[(*n)++] = buf[1];
  }
}

/* 0 when a new file can be created in folder `dir` (created and removed), else errno. */
static int cli__probe(const char *dir) {
  char probe[4400], host[256] = "";
  gethostname(host, sizeof host - 1);
  for (int k = 0;; k++) { /* unique per host and process; ranks on several hosts may share the folder */
    snprintf(probe, sizeof probe, "%s/.spotlab-probe.%.64s.%ld.%d", dir, host, (long)getpid(), k);
    int fd = open(probe, O_WRONLY | O_CREAT | O_EXCL, 0600);
    if (fd < 0 && errno == EEXIST && k < 16) continue;
    if (fd < 0) return errno ? errno : EIO;
    close(fd);
    unlink(probe);
    return 0;
  }
}

int app_out_check(FILE *msg, const char *cmd, const char *out, const char *const *inputs, int ninputs, int folder) {
  struct stat so;
  int exists = stat(out, &so) == 0;
  size_t ol = strlen(out);
  if (!folder && ((exists && S_ISDIR(so.st_mode)) || (ol && out[ol - 1] == '/'))) {
    if (msg)
      fprintf(msg, "spotlab %s: --out '%s' is a folder: give a file name (e.g. %s%sresults.h5)\n", cmd, out, out,
              ol && out[ol - 1] == '/' ? "" : "/");
    return 2;
  }
  if (folder && exists && !S_ISDIR(so.st_mode)) {
    if (msg) fprintf(msg, "spotlab %s: --out '%s' is a file, not a folder\n", cmd, out);
    return 2;
  }
  for (int i = 0; exists && i < ninputs; i++) {
    struct stat si;
    if (inputs[i] && stat(inputs[i], &si) == 0 && si.st_dev == so.st_dev && si.st_ino == so.st_ino) {
      if (msg)
        fprintf(msg, "spotlab %s: --out '%s' is the input '%s': it would be overwritten; give another file\n", cmd, out,
                inputs[i]);
      return 2;
    }
  }
  /* the folder that will receive the file: out's own (a folder output that exists), else the
   * nearest existing folder above it (a report creates its folder) */
  char *c = strdup(out);
  if (!c) return 1;
  char dir[4096];
  if (folder && exists)
    snprintf(dir, sizeof dir, "%s", out);
  else {
    snprintf(dir, sizeof dir, "%s", dirname(c));
    struct stat sd;
    while (folder && stat(dir, &sd) != 0 && strcmp(dir, ".") && strcmp(dir, "/")) {
      char *up = strdup(dir);
      if (!up) break;
      snprintf(dir, sizeof dir, "%s", dirname(up));
      free(up);
    }
  }
  free(c);
  int e = cli__probe(dir);
  if (e) {
    if (msg)
      fprintf(msg, "spotlab %s: cannot write into the folder '%s': %s; nothing was done\n", cmd, dir, strerror(e));
    return 1;
  }
  return 0;
}

unsigned app_cli_distance(const char *a, const char *b) { return sim_edit_distance(a, strlen(a), b, strlen(b)); }

const char *app_cli_closest(const char *word, const char *const *names, size_t n) {
  const char *best = NULL;
  size_t wl = strlen(word);
  unsigned bd = wl < 4 ? 1 : 2;
  for (size_t i = 0; i < n; i++) {
    unsigned d = app_cli_distance(word, names[i]);
    if (wl >= 2 && !strncmp(names[i], word, wl)) d = d < 1 ? d : 1; /* a prefix: "rep" for "report" */
    if (d <= bd && (!best || d < bd)) {
      bd = d;
      best = names[i];
    }
  }
  return best;
}

/* Text into roff: backslashes doubled, '-' as \-, a line that starts with '.' or '\'' protected. */
static void cli__roff(FILE *f, const char *t) {
  int bol = 1;
  for (; *t; t++) {
    if (bol && (*t == '.' || *t == '\'')) fputs("\\&", f);
    if (*t == '\\')
      fputs("\\e", f);
    else if (*t == '-')
      fputs("\\-", f);
    else
      fputc(*t, f);
    bol = *t == '\n';
  }
}

void app_cli_man(const app_cli *c, const char *summary, FILE *f) {
  fputs(".SS \"spotlab ", f);
  cli__roff(f, c->command);
  if (c->operands[0]) fputc(' ', f), cli__roff(f, c->operands);
  fputs("\"\n", f);
  if (summary) cli__roff(f, summary), fputs(".\n.PP\n", f);
  if (c->about) {
    cli__roff(f, c->about);
    if (c->about[0] && c->about[strlen(c->about) - 1] != '\n') fputc('\n', f);
  }
  if (c->usage_extra) {
    fputs(".PP\nAlso:\n.nf\n", f);
    cli__roff(f, c->usage_extra);
    fputs("\n.fi\n", f);
  }
  for (int k = 0; c->opts && c->opts[k].name; k++) {
    const app_option *o = &c->opts[k];
    fputs(o->type != APP_O_FLAG && o->metavar ? ".TP\n.BI " : ".TP\n.B ", f);
    cli__roff(f, o->name);
    if (o->type != APP_O_FLAG && o->metavar) fputs(" \" ", f), cli__roff(f, o->metavar), fputc('"', f);
    fputc('\n', f);
    cli__roff(f, o->help ? o->help : "");
    char extra[600] = "";
    cli__extra(o, extra, sizeof extra);
    cli__roff(f, extra);
    fputc('\n', f);
  }
  if (c->epilog) {
    fputs(".PP\n", f);
    cli__roff(f, c->epilog);
    if (c->epilog[0] && c->epilog[strlen(c->epilog) - 1] != '\n') fputc('\n', f);
  }
}

void app_cli_words(const app_cli *c, FILE *f) {
  for (int k = 0; c->opts && c->opts[k].name; k++) fprintf(f, "%s ", c->opts[k].name);
  fputs("--help", f);
}

void app_cli_choice_cases(const app_cli *c, FILE *f) {
  for (int k = 0; c->opts && c->opts[k].name; k++) {
    const app_option *o = &c->opts[k];
    if (o->type != APP_O_CHOICE) continue;
    fprintf(f, "      \"%s\") words=\"", o->name);
    for (int i = 0; o->choices && o->choices[i]; i++) fprintf(f, "%s%s", i ? " " : "", o->choices[i]);
    fputs("\" ;;\n", f);
  }
}
