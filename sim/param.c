/* param.c - scenario files (libconfig) parsed, validated and dumped through sim_param tables.
 *
 * One walk over the table fills the struct (value or default) and one walk over the file's
 * settings flags keys the table does not declare. Every problem is reported with FILE:LINE and
 * the full key path; parsing goes on to find the others, and the result is discarded if any was
 * found, so a scenario is used whole or not at all.
 */
#include "sim/param.h"
#include "sim/edit_distance.h"
#include "sim/sim.h"

#include <ctype.h>
#include <errno.h>
#include <libconfig.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

struct sim_scenario {
  config_t cfg;
  char *path;
  char *text;
};

/* ---- diagnostics --------------------------------------------------------------------------- */

void sim_diag_init(sim_diag *d, FILE *to) {
  memset(d, 0, sizeof *d);
  d->to = to;
}

void sim_diag_note(sim_diag *d, const char *file, const char *fmt, ...) {
  if (!d || !d->to) return;
  char msg[SIM_DIAG_MSG];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  fprintf(d->to, "%s: note: %s\n", file ? file : "(scenario)", msg);
}

void sim_diag_report(sim_diag *d, const char *file, int line, const char *fmt, ...) {
  char msg[SIM_DIAG_MSG];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  char full[SIM_DIAG_MSG + 512];
  if (line > 0)
    snprintf(full, sizeof full, "%s:%d: %s", file ? file : "(scenario)", line, msg);
  else
    snprintf(full, sizeof full, "%s: %s", file ? file : "(scenario)", msg);
  if (d->nerrors == 0) snprintf(d->first, sizeof d->first, "%.*s", (int)sizeof d->first - 1, full); /* cut */
  d->nerrors++;
  /* a file of thousands of bad keys gets the first SIM_DIAG_SHOWN messages, then a count */
  if (d->to && d->nerrors <= SIM_DIAG_SHOWN)
    fprintf(d->to, "%s\n", full);
  else if (d->to && d->nerrors == SIM_DIAG_SHOWN + 1)
    fprintf(d->to, "%s: (more errors follow; only the first %d are shown)\n", file ? file : "(scenario)",
            SIM_DIAG_SHOWN);
}

/* ---- loading ------------------------------------------------------------------------------- */

/* Reads a whole scenario file. NULL with *err = errno, or with *why set for a file that is no
 * scenario (a directory, a device such as /dev/zero, a file too large or with a NUL byte). */
static char *sim__read_file(const char *path, int *err, const char **why, int *why_line) {
  *why = NULL;
  *why_line = 0;
  struct stat st;
  if (stat(path, &st)) {
    *err = errno;
    return NULL;
  }
  if (!S_ISREG(st.st_mode)) {
    *why = S_ISDIR(st.st_mode) ? "is a directory, not a scenario file" : "is not a regular file (a device, a pipe?)";
    return NULL;
  }
  if (st.st_size > SIM_SCENARIO_MAX_BYTES) {
    *why = "is larger than " SIM_STR(SIM_SCENARIO_MAX_MIB) " MiB: not a scenario file";
    return NULL;
  }
  FILE *f = fopen(path, "rb");
  if (!f) {
    *err = errno;
    return NULL;
  }
  size_t cap = 4096, len = 0;
  char *buf = malloc(cap);
  size_t n;
  while (buf && len <= SIM_SCENARIO_MAX_BYTES && (n = fread(buf + len, 1, cap - len - 1, f)) > 0) {
    len += n;
    if (cap - len - 1 == 0) {
      char *nb = realloc(buf, cap *= 2);
      if (!nb) {
        free(buf);
        buf = NULL;
      } else
        buf = nb;
    }
  }
  int rerr = ferror(f);
  fclose(f);
  if (!buf || rerr) {
    free(buf);
    *err = rerr ? EIO : ENOMEM;
    return NULL;
  }
  buf[len] = '\0';
  /* an HDF5 file (a results, sweep or experiment file: its signature at 0, or after a user block
   * of 512, 1024, 2048, ... bytes) given where a scenario goes: say what it is and what reads it */
  static const char h5sig[8] = {'\211', 'H', 'D', 'F', '\r', '\n', '\032', '\n'};
  for (size_t off = 0; off + 8 <= len; off = off ? off * 2 : 512)
    if (!memcmp(buf + off, h5sig, 8)) {
      free(buf);
      *why = "is an HDF5 results file, not a scenario: try `spotlab report` on it (or `spotlab compare`)";
      return NULL;
    }
  if (len > SIM_SCENARIO_MAX_BYTES) { /* it grew while being read */
    free(buf);
    *why = "is larger than " SIM_STR(SIM_SCENARIO_MAX_MIB) " MiB: not a scenario file";
    return NULL;
  }
  const char *nul = memchr(buf, '\0', len);
  if (nul) { /* libconfig would stop there and take the rest for absent */
    int line = 1;
    for (const char *q = buf; q < nul; q++) line += *q == '\n';
    free(buf);
    *why = "holds a NUL byte (a binary or damaged file?)";
    *why_line = line;
    return NULL;
  }
  return buf;
}

/* Every `@include "PATH"` of the text names a readable regular file: checked before libconfig
 * sees it, since libconfig 1.5 ends the whole process with a bare "input in flex scanner failed"
 * on a directory. PATH is taken as libconfig does: as written (relative to the current folder).
 * 0, or 1 with the message reported at the directive's line. */
static int sim__check_includes(const char *text, const char *name, sim_diag *d) {
  int line = 1, bad = 0;
  for (const char *p = text; *p; p++) {
    if (*p == '\n') {
      line++;
      continue;
    }
    if (*p != '@' || strncmp(p, "@include", 8)) continue;
    const char *q = p + 8;
    while (*q == ' ' || *q == '\t') q++;
    if (*q != '"') continue; /* libconfig reports its own syntax error */
    const char *e = strchr(q + 1, '"');
    if (!e) continue;
    char path[4096];
    snprintf(path, sizeof path, "%.*s", (int)(e - q - 1), q + 1);
    struct stat st;
    if (stat(path, &st)) {
      sim_diag_report(d, name, line, "@include \"%s\": %s", path, strerror(errno));
      bad = 1;
    } else if (!S_ISREG(st.st_mode)) {
      sim_diag_report(d, name, line, "@include \"%s\": %s", path,
                      S_ISDIR(st.st_mode) ? "is a directory, not a file" : "is not a regular file");
      bad = 1;
    } else if (st.st_size > SIM_SCENARIO_MAX_BYTES) {
      sim_diag_report(d, name, line, "@include \"%s\": larger than %d MiB", path, SIM_SCENARIO_MAX_MIB);
      bad = 1;
    }
    p = e;
  }
  return bad;
}

/* Settings in a scenario's text (each `=` or `:` outside strings and comments), and the line where
 * the count passes `max` (0 if it does not). libconfig 1.5's reader takes time quadratic in the
 * settings of a file (measured with a 10-line program: 4,000 keys 0.39 s, 8,000 1.57 s, 16,000 6.3 s), so a file
 * with more than SIM_SCENARIO_MAX_SETTINGS is refused before it is parsed. */
static size_t sim__count_settings(const char *t, size_t max, int *over_line) {
  size_t n = 0;
  int line = 1;
  *over_line = 0;
  for (const char *p = t; *p; p++) {
    if (*p == '\n')
      line++;
    else if (*p == '"') { /* a string, with escapes */
      for (p++; *p && *p != '"'; p++) {
        if (*p == '\\' && p[1])
          p++;
        else if (*p == '\n')
          line++;
      }
      if (!*p) break;
    } else if (*p == '#' || (*p == '/' && p[1] == '/')) {
      while (p[1] && p[1] != '\n') p++;
    } else if (*p == '/' && p[1] == '*') {
      for (p += 2; *p && !(*p == '*' && p[1] == '/'); p++)
        if (*p == '\n') line++;
      if (!*p) break;
      p++;
    } else if ((*p == '=' || *p == ':') && ++n == max + 1) {
      *over_line = line;
    }
  }
  return n;
}

/* libconfig 1.5 reads an integer literal without an L suffix as a 32-bit int and wraps it
 * silently (4294967297 is read as 1, 3000000000 as -1294967296; hex 0xFFFFFFFF as -1), and one
 * with the suffix saturates at 2^63-1. The text is therefore scanned first, as libconfig's lexer
 * reads it (strings, comments, names, numbers): an integer outside 32 bits gets the L that makes
 * libconfig read it at 64 bits, and one outside 64 bits is refused at its line. Floats
 * (1e10, 3.5) are left alone. Only characters are inserted, never newlines: lines keep their
 * numbers. */
static size_t sim__int_token(const char *p, int *hex, int *is_float) {
  size_t i = 0;
  *hex = *is_float = 0;
  if (p[i] == '+' || p[i] == '-') i++;
  if (p[i] == '0' && (p[i + 1] == 'x' || p[i + 1] == 'X') && isxdigit((unsigned char)p[i + 2])) {
    *hex = 1;
    for (i += 2; isxdigit((unsigned char)p[i]);) i++;
    return i;
  }
  while (isdigit((unsigned char)p[i])) i++;
  size_t ip = i;
  if (p[i] == '.') {
    *is_float = 1;
    for (i++; isdigit((unsigned char)p[i]);) i++;
  }
  if (p[i] == 'e' || p[i] == 'E') {
    size_t j = i + 1;
    if (p[j] == '+' || p[j] == '-') j++;
    if (isdigit((unsigned char)p[j])) {
      *is_float = 1;
      while (isdigit((unsigned char)p[j])) j++;
      i = j;
    }
  }
  return *is_float ? i : ip;
}

char *sim_config_widen(const char *text, const char *name, sim_diag *d) {
  size_t len = strlen(text), cap = len + len / 2 + 16, o = 0;
  char *out = malloc(cap);
  if (!out) return NULL;
  int line = 1, bad = 0;
  const char *p = text;
  while (*p) {
    if (o + 64 > cap) {
      char *no = realloc(out, cap *= 2);
      if (!no) {
        free(out);
        return NULL;
      }
      out = no;
    }
    const char *start = p;
    if (*p == '\n') {
      line++;
      p++;
    } else if (*p == '"') { /* a string, with escapes */
      for (p++; *p && *p != '"'; p++) {
        if (*p == '\\' && p[1]) p++;
        if (*p == '\n') line++;
      }
      if (*p) p++;
    } else if (*p == '#' || (*p == '/' && p[1] == '/')) {
      while (*p && *p != '\n') p++;
    } else if (*p == '/' && p[1] == '*') {
      for (p += 2; *p && !(*p == '*' && p[1] == '/'); p++)
        if (*p == '\n') line++;
      if (*p) p += 2;
    } else if (isalpha((unsigned char)*p) || *p == '*' || *p == '_') { /* a name: may hold digits and '-' */
      while (isalnum((unsigned char)*p) || *p == '-' || *p == '_' || *p == '*') p++;
    } else if (isdigit((unsigned char)*p) || ((*p == '+' || *p == '-' || *p == '.') && isdigit((unsigned char)p[1])) ||
               ((*p == '+' || *p == '-') && p[1] == '.' && isdigit((unsigned char)p[2]))) {
      int hex, fl;
      size_t n = *p == '.' ? 0 : sim__int_token(p, &hex, &fl);
      if (*p == '.' || fl) { /* a float: copied as it is */
        if (*p == '.') {     /* ".5", ".5e3" */
          char *e;
          (void)strtod(p, &e);
          n = (size_t)(e - p) ? (size_t)(e - p) : 1;
        }
        p += n;
      } else {
        int suffix = p[n] == 'L';
        char num[64];
        snprintf(num, sizeof num, "%.*s", (int)(n < 63 ? n : 63), p);
        errno = 0;
        int fits32 = 0;
        if (hex) {
          unsigned long long v = strtoull(num + (num[0] == '+' || num[0] == '-'), NULL, 16);
          if (errno || v > (unsigned long long)INT64_MAX || n > 40) {
            sim_diag_report(d, name, line, "the integer %s does not fit in 64 bits (at most 0x7fffffffffffffff)", num);
            bad = 1;
          }
          fits32 = v <= 0x7fffffffull;
        } else {
          long long v = strtoll(num, NULL, 10);
          if (errno || n > 40) {
            sim_diag_report(d, name, line,
                            "the integer %s does not fit in 64 bits (-9223372036854775808 to 9223372036854775807; "
                            "write a larger number as 1e19)",
                            num);
            bad = 1;
          }
          fits32 = v >= INT32_MIN && v <= INT32_MAX;
        }
        p += n;
        if (!suffix && !fits32) {
          if (o + n + 2 > cap) { /* a long token (a 5000-digit number) */
            char *no = realloc(out, cap = o + n + 64);
            if (!no) {
              free(out);
              return NULL;
            }
            out = no;
          }
          memcpy(out + o, start, (size_t)(p - start));
          o += (size_t)(p - start);
          out[o++] = 'L';
          continue;
        }
      }
    } else {
      p++;
    }
    size_t n = (size_t)(p - start);
    if (o + n + 1 > cap) {
      char *no = realloc(out, cap = o + n + 64);
      if (!no) {
        free(out);
        return NULL;
      }
      out = no;
    }
    memcpy(out + o, start, n);
    o += n;
  }
  out[o] = 0;
  if (bad) {
    free(out);
    return NULL;
  }
  return out;
}

/* config_read_string on the widened text; 0, or -1 after reporting (a syntax error at its line). */
static int sim__read_config(config_t *cfg, const char *text, const char *name, sim_diag *d) {
  char *w = sim_config_widen(text, name, d);
  if (!w) return -1;
  int ok = config_read_string(cfg, w) == CONFIG_TRUE;
  free(w);
  if (!ok) sim_diag_report(d, name, config_error_line(cfg), "syntax error: %s", config_error_text(cfg));
  return ok ? 0 : -1;
}

static sim_scenario *sim__load(char *text, const char *name, sim_diag *d) {
  sim_scenario *s = calloc(1, sizeof *s);
  if (!s) {
    free(text);
    return NULL;
  }
  s->text = text;
  s->path = strdup(name);
  config_init(&s->cfg);
  if (s->path && sim__check_includes(text, s->path, d)) {
    sim_scenario_free(s);
    return NULL;
  }
  int over = 0;
  size_t nset = sim__count_settings(text, SIM_SCENARIO_MAX_SETTINGS, &over);
  if (s->path && over) {
    sim_diag_report(d, s->path, over,
                    "more than %d settings in one scenario file (%zu): not a scenario file "
                    "(libconfig's reader slows down quadratically with their number)",
                    SIM_SCENARIO_MAX_SETTINGS, nset);
    sim_scenario_free(s);
    return NULL;
  }
  if (!s->path || sim__read_config(&s->cfg, text, s->path, d)) {
    sim_scenario_free(s);
    return NULL;
  }
  return s;
}

sim_scenario *sim_scenario_load(const char *path, sim_diag *d) {
  int err = 0, why_line = 0;
  const char *why = NULL;
  char *text = sim__read_file(path, &err, &why, &why_line);
  if (!text) {
    if (why)
      sim_diag_report(d, path, why_line, "%s", why);
    else
      sim_diag_report(d, path, 0, "cannot read the scenario file: %s", strerror(err));
    return NULL;
  }
  return sim__load(text, path, d);
}

sim_scenario *sim_scenario_load_string(const char *text, const char *name, sim_diag *d) {
  char *copy = strdup(text);
  if (!copy) return NULL;
  return sim__load(copy, name, d);
}

void sim_scenario_free(sim_scenario *s) {
  if (!s) return;
  config_destroy(&s->cfg);
  free(s->path);
  free(s->text);
  free(s);
}

const char *sim_scenario_path(const sim_scenario *s) { return s->path; }
const char *sim_scenario_text(const sim_scenario *s) { return s->text; }

const char *sim_scenario_string(const sim_scenario *s, const char *key) {
  const char *v = NULL;
  if (config_lookup_string(&s->cfg, key, &v) != CONFIG_TRUE) return NULL;
  return v;
}

/* ---- values -------------------------------------------------------------------------------- */

/* Length of the decimal number at the start of s ([+-]digits[.digits][e[+-]digits], at least one
 * digit), 0 when there is none: strtod alone also takes "0x10", "inf" and "nan". */
static size_t sim__decimal_len(const char *s) {
  size_t i = 0, digits = 0;
  if (s[i] == '+' || s[i] == '-') i++;
  while (isdigit((unsigned char)s[i])) i++, digits++;
  if (s[i] == '.') {
    i++;
    while (isdigit((unsigned char)s[i])) i++, digits++;
  }
  if (!digits) return 0;
  if (s[i] == 'e' || s[i] == 'E') {
    size_t j = i + 1;
    if (s[j] == '+' || s[j] == '-') j++;
    if (isdigit((unsigned char)s[j])) {
      while (isdigit((unsigned char)s[j])) j++;
      i = j;
    }
  }
  return i;
}

int sim_parse_duration(const char *text, double *seconds) {
  char *end;
  errno = 0;
  while (isspace((unsigned char)*text)) text++;
  size_t dl = sim__decimal_len(text);
  if (!dl) return -1;
  double v = strtod(text, &end);
  /* decimal only: strtod reading past the decimal ("0x10h", "inf") is no duration */
  if (end != text + dl || errno || !isfinite(v)) return -1;
  while (isspace((unsigned char)*end)) end++;
  double mult = 1;
  if (*end) {
    switch (*end) {
    case 's': mult = 1; break;
    case 'm': mult = 60; break;
    case 'h': mult = 3600; break;
    case 'd': mult = 86400; break;
    case 'w': mult = 604800; break;
    default: return -1;
    }
    end++;
    while (isspace((unsigned char)*end)) end++;
    if (*end) return -1;
  }
  *seconds = v * mult;
  return 0;
}

static const char *sim__type_name(sim_ptype t) {
  switch (t) {
  case SIM_P_INT: return "integer";
  case SIM_P_DOUBLE: return "number";
  case SIM_P_BOOL: return "boolean";
  case SIM_P_STRING: return "string";
  case SIM_P_ENUM: return "choice";
  case SIM_P_DURATION: return "duration";
  case SIM_P_DARRAY: return "array of numbers";
  case SIM_P_GROUP: return "group";
  case SIM_P_LIST: return "list of groups";
  }
  return "?";
}

static const char *sim__setting_type_name(int t) {
  switch (t) {
  case CONFIG_TYPE_INT:
  case CONFIG_TYPE_INT64: return "an integer";
  case CONFIG_TYPE_FLOAT: return "a number";
  case CONFIG_TYPE_STRING: return "a string";
  case CONFIG_TYPE_BOOL: return "a boolean";
  case CONFIG_TYPE_ARRAY: return "an array";
  case CONFIG_TYPE_LIST: return "a list";
  case CONFIG_TYPE_GROUP: return "a group";
  }
  return "something else";
}

static int sim__bounded(const sim_param *p) { return p->min <= p->max; }

/* Context of one parse: where messages go. */
typedef struct sim__pctx {
  const char *file;
  sim_diag *d;
  int errors;
} sim__pctx;

static void sim__err(sim__pctx *c, int line, const char *path, const char *fmt, ...) {
  char msg[400];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  sim_diag_report(c->d, c->file, line, "key '%s': %s", path, msg);
  c->errors++;
}

static int sim__line(const config_setting_t *s) { return s ? (int)config_setting_source_line(s) : 0; }

static void sim__check_range(sim__pctx *c, const sim_param *p, const char *path, int line, double v,
                             const char *shown) {
  if (sim__bounded(p) && (v < p->min || v > p->max))
    sim__err(c, line, path, "value %s is out of range [%g, %g]%s%s", shown, p->min, p->max, p->unit ? " " : "",
             p->unit ? p->unit : "");
}

static void sim__free_value(const sim_param *p, void *out);
static void sim__parse_group(sim__pctx *c, const config_setting_t *g, const sim_param *table, void *out,
                             const char *prefix, const char *const *ignore);

/* Sets one value from a setting (of the file, or of a parsed default). */
static void sim__set(sim__pctx *c, const config_setting_t *s, const sim_param *p, void *base, const char *path) {
  void *dst = (char *)base + p->offset;
  int line = sim__line(s), t = config_setting_type(s);
  char shown[64];
  switch (p->type) {
  case SIM_P_INT: {
    if (t != CONFIG_TYPE_INT && t != CONFIG_TYPE_INT64) {
      sim__err(c, line, path, "expected an integer, found %s", sim__setting_type_name(t));
      return;
    }
    long long v = config_setting_get_int64(s);
    snprintf(shown, sizeof shown, "%lld", v);
    sim__check_range(c, p, path, line, (double)v, shown);
    *(int64_t *)dst = v;
    return;
  }
  case SIM_P_DOUBLE: {
    double v;
    if (t == CONFIG_TYPE_FLOAT)
      v = config_setting_get_float(s);
    else if (t == CONFIG_TYPE_INT || t == CONFIG_TYPE_INT64)
      v = (double)config_setting_get_int64(s);
    else {
      sim__err(c, line, path, "expected a number, found %s", sim__setting_type_name(t));
      return;
    }
    snprintf(shown, sizeof shown, "%g", v);
    sim__check_range(c, p, path, line, v, shown);
    *(double *)dst = v;
    return;
  }
  case SIM_P_DURATION: {
    double v;
    if (t == CONFIG_TYPE_FLOAT)
      v = config_setting_get_float(s);
    else if (t == CONFIG_TYPE_INT || t == CONFIG_TYPE_INT64)
      v = (double)config_setting_get_int64(s);
    else if (t == CONFIG_TYPE_STRING) {
      if (sim_parse_duration(config_setting_get_string(s), &v)) {
        sim__err(c, line, path,
                 "'%s' is not a duration (a number of seconds, or e.g. \"90s\", \"30m\", \"12h\", \"7d\", \"2w\")",
                 config_setting_get_string(s));
        return;
      }
    } else {
      sim__err(c, line, path, "expected a duration, found %s", sim__setting_type_name(t));
      return;
    }
    snprintf(shown, sizeof shown, "%g s", v);
    if (sim__bounded(p) && (v < p->min || v > p->max))
      sim__err(c, line, path, "duration %s is out of range [%g, %g] s", shown, p->min, p->max);
    *(double *)dst = v;
    return;
  }
  case SIM_P_BOOL:
    if (t != CONFIG_TYPE_BOOL) {
      sim__err(c, line, path, "expected true or false, found %s", sim__setting_type_name(t));
      return;
    }
    *(int *)dst = config_setting_get_bool(s);
    return;
  case SIM_P_STRING: {
    if (t != CONFIG_TYPE_STRING) {
      sim__err(c, line, path, "expected a string, found %s", sim__setting_type_name(t));
      return;
    }
    const char *sv = config_setting_get_string(s);
    /* a name with a newline would split a CSV row or a report line: names are one line of text */
    for (const char *q = sv; strcmp(p->name, "command") && *q; q++)
      if ((unsigned char)*q < 0x20 || *q == 0x7f) {
        sim__err(c, line, path,
                 "holds a control character (byte 0x%02x at offset %d): names and values are one "
                 "line of printable text",
                 (unsigned char)*q, (int)(q - sv));
        return;
      }
    char *v = strdup(sv);
    if (!v) SIM_FATAL("out of memory");
    free(*(char **)dst);
    *(char **)dst = v;
    return;
  }
  case SIM_P_ENUM: {
    if (t != CONFIG_TYPE_STRING) {
      sim__err(c, line, path, "expected one of the names listed by `spotlab keys`, found %s",
               sim__setting_type_name(t));
      return;
    }
    const char *v = config_setting_get_string(s);
    for (int i = 0; p->choices[i]; i++)
      if (!strcmp(p->choices[i], v)) {
        *(int *)dst = i;
        return;
      }
    char list[256] = "";
    for (int i = 0; p->choices[i]; i++) {
      strncat(list, i ? ", " : "", sizeof list - strlen(list) - 1);
      strncat(list, p->choices[i], sizeof list - strlen(list) - 1);
    }
    sim__err(c, line, path, "'%s' is not one of: %s", v, list);
    return;
  }
  case SIM_P_DARRAY: {
    if (t != CONFIG_TYPE_ARRAY && t != CONFIG_TYPE_LIST) {
      sim__err(c, line, path, "expected an array of numbers [a, b, ...], found %s", sim__setting_type_name(t));
      return;
    }
    int n = config_setting_length(s);
    if (sim__bounded(p) && (n < (int)p->min || n > (int)p->max)) {
      if (p->min == p->max)
        sim__err(c, line, path, "expected %d numbers, found %d", (int)p->min, n);
      else
        sim__err(c, line, path, "expected between %d and %d numbers, found %d", (int)p->min, (int)p->max, n);
      return;
    }
    double *v = calloc((size_t)(n ? n : 1), sizeof *v);
    if (!v) SIM_FATAL("out of memory");
    for (int i = 0; i < n; i++) {
      const config_setting_t *e = config_setting_get_elem(s, (unsigned)i);
      int et = config_setting_type(e);
      if (et == CONFIG_TYPE_FLOAT)
        v[i] = config_setting_get_float(e);
      else if (et == CONFIG_TYPE_INT || et == CONFIG_TYPE_INT64)
        v[i] = (double)config_setting_get_int64(e);
      else {
        sim__err(c, sim__line(e) ? sim__line(e) : line, path, "element %d is %s, expected a number", i,
                 sim__setting_type_name(et));
      }
    }
    free(*(double **)dst);
    *(double **)dst = v;
    *(size_t *)((char *)base + p->count_offset) = (size_t)n;
    return;
  }
  case SIM_P_GROUP:
    if (t != CONFIG_TYPE_GROUP) {
      sim__err(c, line, path, "expected a group { ... }, found %s", sim__setting_type_name(t));
      return;
    }
    sim__parse_group(c, s, p->sub, dst, path, NULL);
    return;
  case SIM_P_LIST: {
    if (t != CONFIG_TYPE_LIST) {
      sim__err(c, line, path, "expected a list of groups ( {...}, {...} ), found %s", sim__setting_type_name(t));
      return;
    }
    int n = config_setting_length(s);
    if (sim__bounded(p) && (n < (int)p->min || n > (int)p->max)) {
      sim__err(c, line, path, "expected between %d and %d entries, found %d", (int)p->min, (int)p->max, n);
      return;
    }
    unsigned char *arr = calloc((size_t)(n ? n : 1), p->elem_size);
    if (!arr) SIM_FATAL("out of memory");
    void **slot = (void **)dst;
    size_t *cnt = (size_t *)((char *)base + p->count_offset);
    sim__free_value(p, base);
    *slot = arr;
    *cnt = (size_t)n;
    for (int i = 0; i < n; i++) {
      const config_setting_t *e = config_setting_get_elem(s, (unsigned)i);
      char epath[256];
      snprintf(epath, sizeof epath, "%s.[%d]", path, i);
      if (config_setting_type(e) != CONFIG_TYPE_GROUP) {
        sim__err(c, sim__line(e) ? sim__line(e) : line, epath, "expected a group { ... }, found %s",
                 sim__setting_type_name(config_setting_type(e)));
        continue;
      }
      sim__parse_group(c, e, p->sub, arr + (size_t)i * p->elem_size, epath, NULL);
    }
    return;
  }
  }
}

/* Applies a default given as text by parsing "v = TEXT;". */
static void sim__set_default(sim__pctx *c, const sim_param *p, void *base, const char *path) {
  if (p->type == SIM_P_GROUP) {
    sim__parse_group(c, NULL, p->sub, (char *)base + p->offset, path, NULL);
    return;
  }
  if (!p->def) {
    sim__err(c, 0, path, "is required (%s%s%s): %s", sim__type_name(p->type), p->unit ? ", " : "",
             p->unit ? p->unit : "", p->help ? p->help : "");
    return;
  }
  char buf[1024];
  snprintf(buf, sizeof buf, "v = %s;", p->def);
  config_t tmp;
  config_init(&tmp);
  sim_diag dd;
  sim_diag_init(&dd, stderr);
  char *wide = sim_config_widen(buf, "(built-in default)", &dd);
  if (!wide || config_read_string(&tmp, wide) != CONFIG_TRUE)
    SIM_FATAL("bad default '%s' for key %s: %s", p->def, path, wide ? config_error_text(&tmp) : dd.first);
  free(wide);
  sim__pctx dc = {"(built-in default)", c->d, 0};
  sim__set(&dc, config_lookup(&tmp, "v"), p, base, path);
  if (dc.errors) SIM_FATAL("the built-in default of %s is invalid", path);
  config_destroy(&tmp);
}

static void sim__parse_group(sim__pctx *c, const config_setting_t *g, const sim_param *table, void *out,
                             const char *prefix, const char *const *ignore) {
  char path[256];
  for (const sim_param *p = table; p->name; p++) {
    snprintf(path, sizeof path, "%s%s%s", prefix, *prefix ? "." : "", p->name);
    const config_setting_t *s = g ? config_setting_get_member(g, p->name) : NULL;
    if (s)
      sim__set(c, s, p, out, path);
    else if (p->type == SIM_P_LIST && !p->def)
      sim__err(c, sim__line(g), path, "is required (%s): %s", sim__type_name(p->type), p->help ? p->help : "");
    else if (p->type == SIM_P_LIST || p->type == SIM_P_DARRAY) {
      if (p->def && strcmp(p->def, "()") && strcmp(p->def, "[]")) sim__set_default(c, p, out, path);
    } else
      sim__set_default(c, p, out, path);
  }
  if (!g) return;
  int n = config_setting_length(g);
  for (int i = 0; i < n; i++) {
    const config_setting_t *s = config_setting_get_elem(g, (unsigned)i);
    const char *name = config_setting_name(s);
    if (!name) continue;
    int known = 0;
    for (const sim_param *p = table; p->name && !known; p++) known = !strcmp(p->name, name);
    for (const char *const *ig = ignore; ig && *ig && !known; ig++) known = !strcmp(*ig, name);
    if (known) continue;
    const char *best = NULL;
    unsigned bd = 3;
    for (const sim_param *p = table; p->name && c->d->nerrors < SIM_DIAG_SHOWN; p++) {
      unsigned dd =
          sim_edit_distance(name, strlen(name), p->name, strlen(p->name)); /* a suggestion only where it is shown */
      if (dd < bd) {
        bd = dd;
        best = p->name;
      }
    }
    snprintf(path, sizeof path, "%s%s%s", prefix, *prefix ? "." : "", name);
    if (best)
      sim__err(c, sim__line(s), path, "unknown key (did you mean '%s'?)", best);
    else
      sim__err(c, sim__line(s), path, "unknown key (spotlab keys lists the keys of each group)");
  }
}

int sim_param_parse(const sim_scenario *s, const char *group, const sim_param *table, void *out,
                    const char *const *ignore, sim_diag *d) {
  sim__pctx c = {s->path, d, 0};
  const config_setting_t *g = config_root_setting(&s->cfg);
  if (group && *group) {
    g = config_lookup(&s->cfg, group);
    if (g && config_setting_type(g) != CONFIG_TYPE_GROUP) {
      sim__err(&c, sim__line(g), group, "expected a group { ... }, found %s",
               sim__setting_type_name(config_setting_type(g)));
      return SIM_ECONFIG;
    }
  }
  sim__parse_group(&c, g, table, out, group ? group : "", ignore);
  if (c.errors) {
    sim_param_free(table, out);
    return SIM_ECONFIG;
  }
  return SIM_OK;
}

int sim_param_defaults(const sim_param *table, void *out, sim_diag *d) {
  sim__pctx c = {"(defaults)", d, 0};
  sim__parse_group(&c, NULL, table, out, "", NULL);
  if (c.errors) {
    sim_param_free(table, out);
    return SIM_ECONFIG;
  }
  return SIM_OK;
}

static void sim__free_value(const sim_param *p, void *base) {
  void *dst = (char *)base + p->offset;
  switch (p->type) {
  case SIM_P_STRING:
    free(*(char **)dst);
    *(char **)dst = NULL;
    break;
  case SIM_P_DARRAY:
    free(*(double **)dst);
    *(double **)dst = NULL;
    *(size_t *)((char *)base + p->count_offset) = 0;
    break;
  case SIM_P_GROUP: sim_param_free(p->sub, dst); break;
  case SIM_P_LIST: {
    unsigned char *arr = *(unsigned char **)dst;
    size_t n = *(size_t *)((char *)base + p->count_offset);
    for (size_t i = 0; arr && i < n; i++) sim_param_free(p->sub, arr + i * p->elem_size);
    free(arr);
    *(void **)dst = NULL;
    *(size_t *)((char *)base + p->count_offset) = 0;
    break;
  }
  default: break;
  }
}

void sim_param_free(const sim_param *table, void *out) {
  for (const sim_param *p = table; p->name; p++) sim__free_value(p, out);
}

void sim_param_error(const sim_scenario *s, const char *path, sim_diag *d, const char *fmt, ...) {
  char msg[SIM_DIAG_MSG - 256]; /* room for "key '...': " */
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  const config_setting_t *st = config_lookup(&s->cfg, path);
  sim_diag_report(d, s->path, sim__line(st), "key '%s': %s", path, msg);
}

/* ---- overrides (sweeps) ------------------------------------------------------------------- */

/* The name of list item `it` (its `name` key), or NULL. */
static const char *sim__item_name(const config_setting_t *it) {
  const config_setting_t *n =
      config_setting_type(it) == CONFIG_TYPE_GROUP ? config_setting_get_member(it, "name") : NULL;
  return n && config_setting_type(n) == CONFIG_TYPE_STRING ? config_setting_get_string(n) : NULL;
}

/* "us, eu, asia" (the names of the list's items) into buf. */
static void sim__item_names(const config_setting_t *list, char *buf, size_t len) {
  buf[0] = 0;
  int n = config_setting_length(list), shown = 0;
  for (int i = 0; i < n; i++) {
    const char *nm = sim__item_name(config_setting_get_elem(list, (unsigned)i));
    if (!nm) continue;
    size_t l = strlen(buf);
    snprintf(buf + l, len - l, "%s%s", shown++ ? ", " : "", nm);
  }
}

/* Whole number without sign or spaces, as an index; -1 if `t` is not one. */
static long sim__index(const char *t, size_t n) {
  if (n == 0 || n > 9) return -1;
  long v = 0;
  for (size_t i = 0; i < n; i++) {
    if (t[i] < '0' || t[i] > '9') return -1;
    v = v * 10 + (t[i] - '0');
  }
  return v;
}

/* The item of list `list` (reached by `at`, for messages) that `seg` names: "[N]" is index N
 * (0-based, as error messages write paths), a bare number N is index N unless an item is named
 * "N" elsewhere (ambiguous: an error that names both), anything else is the item whose `name` key
 * is `seg`. NULL after reporting. */
static config_setting_t *sim__list_item(config_setting_t *list, const char *seg, const char *key, const char *at,
                                        sim_diag *d) {
  int n = config_setting_length(list);
  size_t sl = strlen(seg);
  long idx = -1;
  int bracket = sl >= 2 && seg[0] == '[' && seg[sl - 1] == ']';
  if (bracket) {
    idx = sim__index(seg + 1, sl - 2);
    if (idx < 0) {
      sim_diag_report(d, "--param", 0, "key '%s': '%s' is not an index [N] of '%s' (N a whole number)", key, seg, at);
      return NULL;
    }
  } else {
    int found = -1, count = 0;
    for (int i = 0; i < n; i++) {
      const char *nm = sim__item_name(config_setting_get_elem(list, (unsigned)i));
      if (nm && !strcmp(nm, seg)) {
        if (found < 0) found = i;
        count++;
      }
    }
    long num = sim__index(seg, sl);
    if (count > 1) {
      sim_diag_report(d, "--param", 0, "key '%s': %d items of '%s' are named '%s'; address one by its index [N]", key,
                      count, at, seg);
      return NULL;
    }
    if (found >= 0 && num >= 0 && num != found && num < n) {
      sim_diag_report(d, "--param", 0,
                      "key '%s': '%s' is ambiguous in '%s': item [%d] is named '%s' and [%ld] is an index; write "
                      "[%d] or [%ld]",
                      key, seg, at, found, seg, num, found, num);
      return NULL;
    }
    if (found >= 0) return config_setting_get_elem(list, (unsigned)found);
    idx = num;
    if (idx < 0) {
      char names[1024];
      sim__item_names(list, names, sizeof names);
      if (n == 0)
        sim_diag_report(d, "--param", 0, "key '%s': '%s' has no items (no item named '%s')", key, at, seg);
      else if (names[0])
        sim_diag_report(d, "--param", 0, "key '%s': no item of '%s' is named '%s' (its items: %s; or [0] to [%d])", key,
                        at, seg, names, n - 1);
      else
        sim_diag_report(d, "--param", 0,
                        "key '%s': the items of '%s' have no names: address one by its index [0] to [%d]", key, at,
                        n - 1);
      return NULL;
    }
  }
  if (idx >= n) {
    if (n == 0)
      sim_diag_report(d, "--param", 0, "key '%s': index %s is out of range: '%s' has no items", key, seg, at);
    else
      sim_diag_report(d, "--param", 0, "key '%s': index %s is out of range: '%s' has %d item%s, [0] to [%d]", key, seg,
                      at, n, n == 1 ? "" : "s", n - 1);
    return NULL;
  }
  config_setting_t *it = config_setting_get_elem(list, (unsigned)idx);
  if (config_setting_type(it) != CONFIG_TYPE_GROUP) {
    sim_diag_report(d, "--param", 0, "key '%s': item %s of '%s' is not a group { ... }", key, seg, at);
    return NULL;
  }
  return it;
}

int sim_scenario_set(sim_scenario *s, const char *assignment, sim_diag *d) {
  const char *eq = strchr(assignment, '=');
  if (!eq || eq == assignment) {
    sim_diag_report(d, "--param", 0, "'%s' is not KEY=VALUE", assignment);
    return SIM_ECONFIG;
  }
  char key[256], path[256];
  size_t kl = (size_t)(eq - assignment);
  if (kl >= sizeof key) {
    sim_diag_report(d, "--param", 0, "key '%.40s...': longer than %zu characters", assignment, sizeof key - 1);
    return SIM_ECONFIG;
  }
  memcpy(key, assignment, kl);
  key[kl] = 0;
  memcpy(path, key, kl + 1);
  char buf[1024];
  snprintf(buf, sizeof buf, "v = %s;", eq + 1);
  config_t tmp;
  config_init(&tmp);
  sim_diag quiet;
  sim_diag_init(&quiet, NULL);
  char *wide = sim_config_widen(buf, "--param", &quiet);
  if (!wide) { /* an integer beyond 64 bits (or out of memory) */
    sim_diag_report(d, "--param", 0, "key '%s': %s", key,
                    quiet.nerrors ? strstr(quiet.first, "the integer") : "out of memory");
    config_destroy(&tmp);
    return SIM_ECONFIG;
  }
  int read = config_read_string(&tmp, wide) == CONFIG_TRUE;
  free(wide);
  if (!read) {
    sim_diag_report(d, "--param", 0, "key '%s': value '%s' is not valid scenario syntax (strings need quotes)", key,
                    eq + 1);
    config_destroy(&tmp);
    return SIM_ECONFIG;
  }
  /* "K=\"v\"; model=\"phold\"" reads as two settings: one key per --param, never a second one dropped */
  if (config_setting_length(config_root_setting(&tmp)) != 1) {
    sim_diag_report(d, "--param", 0,
                    "key '%s': value '%s' holds more than one value (a ';' or a second KEY=VALUE?); one key per "
                    "--param: give each key its own --param",
                    key, eq + 1);
    config_destroy(&tmp);
    return SIM_ECONFIG;
  }
  const config_setting_t *v = config_lookup(&tmp, "v");
  int vt = config_setting_type(v);
  /* Walk the path: groups by member name (created when absent, as a scenario may leave a group
   * to its defaults), lists by item name or index (sim__list_item). `path` keeps the part walked,
   * for messages. */
  config_setting_t *parent = config_root_setting(&s->cfg);
  char *dot, *name = key;
  size_t at = 0;   /* length of the walked part of path */
  int created = 0; /* parent was added here (absent from the scenario) */
  while ((dot = strchr(name, '.'))) {
    *dot = 0;
    char walked[256];
    snprintf(walked, sizeof walked, "%.*s", (int)(at ? at : 0), path);
    if (!*name) {
      sim_diag_report(d, "--param", 0, "key '%s': an empty name between dots", path);
      config_destroy(&tmp);
      return SIM_ECONFIG;
    }
    config_setting_t *g;
    if (config_setting_type(parent) == CONFIG_TYPE_LIST) {
      g = sim__list_item(parent, name, path, walked, d);
      created = 0;
      if (!g) {
        config_destroy(&tmp);
        return SIM_ECONFIG;
      }
    } else if (name[0] == '[') {
      if (created)
        sim_diag_report(d, "--param", 0,
                        "key '%s': '%s' is not in the scenario file: the items of a list left to its default "
                        "cannot be addressed (write the list in the file)",
                        path, walked);
      else
        sim_diag_report(d, "--param", 0, "key '%s': '%s' is a group, not a list: %s addresses a list's items", path,
                        at ? walked : "(top level)", name);
      config_destroy(&tmp);
      return SIM_ECONFIG;
    } else {
      g = config_setting_get_member(parent, name);
      created = !g;
      if (!g) g = config_setting_add(parent, name, CONFIG_TYPE_GROUP);
      int gt = g ? config_setting_type(g) : 0;
      if (!g || (gt != CONFIG_TYPE_GROUP && gt != CONFIG_TYPE_LIST)) {
        sim_diag_report(d, "--param", 0, "key '%s': '%s%s%s' is %s, not a group or a list", path, walked, at ? "." : "",
                        name, g ? sim__setting_type_name(gt) : "not a group");
        config_destroy(&tmp);
        return SIM_ECONFIG;
      }
    }
    parent = g;
    at = (size_t)(dot - key);
    name = dot + 1;
  }
  if (config_setting_type(parent) == CONFIG_TYPE_LIST || name[0] == '[' || !*name) {
    sim_diag_report(d, "--param", 0,
                    "key '%s': an override sets one key of a group; '%s' is %s (add the key: %s.KEY=VALUE)", path, path,
                    config_setting_type(parent) == CONFIG_TYPE_LIST ? "a list item" : "not a key", path);
    config_destroy(&tmp);
    return SIM_ECONFIG;
  }
  if (config_setting_get_member(parent, name)) config_setting_remove(parent, name);
  config_setting_t *n = config_setting_add(parent, name, vt);
  int ok = n != NULL;
  if (ok) switch (vt) {
    case CONFIG_TYPE_INT:
    case CONFIG_TYPE_INT64: ok = config_setting_set_int64(n, config_setting_get_int64(v)); break;
    case CONFIG_TYPE_FLOAT: ok = config_setting_set_float(n, config_setting_get_float(v)); break;
    case CONFIG_TYPE_BOOL: ok = config_setting_set_bool(n, config_setting_get_bool(v)); break;
    case CONFIG_TYPE_STRING: ok = config_setting_set_string(n, config_setting_get_string(v)); break;
    case CONFIG_TYPE_ARRAY:
      for (int i = 0; ok && i < config_setting_length(v); i++) {
        const config_setting_t *e = config_setting_get_elem(v, (unsigned)i);
        ok = config_setting_type(e) == CONFIG_TYPE_FLOAT
                 ? config_setting_set_float_elem(n, -1, config_setting_get_float(e)) != NULL
                 : config_setting_set_int64_elem(n, -1, config_setting_get_int64(e)) != NULL;
      }
      break;
    default: ok = 0;
    }
  config_destroy(&tmp);
  if (!ok) {
    sim_diag_report(d, "--param", 0, "key '%s': only numbers, strings, booleans and arrays can be overridden", key);
    return SIM_ECONFIG;
  }
  return SIM_OK;
}

/* ---- dump and describe -------------------------------------------------------------------- */

static void sim__indent(FILE *f, int n) {
  for (int i = 0; i < n; i++) fputs("  ", f);
}

static void sim__dump_group(FILE *f, const sim_param *table, const void *base, int depth);

static void sim__dump_value(FILE *f, const sim_param *p, const void *base, int depth) {
  const void *v = (const char *)base + p->offset;
  switch (p->type) {
  case SIM_P_INT: fprintf(f, "%lld;", (long long)*(const int64_t *)v); break;
  case SIM_P_DOUBLE: fprintf(f, "%.17g;", *(const double *)v); break;
  case SIM_P_DURATION: fprintf(f, "%.17g;", *(const double *)v); break;
  case SIM_P_BOOL: fprintf(f, "%s;", *(const int *)v ? "true" : "false"); break;
  case SIM_P_STRING: {
    const char *sv = *(char *const *)v;
    fputc('"', f);
    for (const char *q = sv ? sv : ""; *q; q++) {
      if (*q == '"' || *q == '\\') fputc('\\', f);
      fputc(*q, f);
    }
    fputs("\";", f);
    break;
  }
  case SIM_P_ENUM: fprintf(f, "\"%s\";", p->choices[*(const int *)v]); break;
  case SIM_P_DARRAY: {
    const double *a = *(double *const *)v;
    size_t n = *(const size_t *)((const char *)base + p->count_offset);
    fputc('[', f);
    for (size_t i = 0; i < n; i++) fprintf(f, "%s%.17g", i ? ", " : "", a[i]);
    fputs("];", f);
    break;
  }
  case SIM_P_GROUP:
    fputs("{\n", f);
    sim__dump_group(f, p->sub, v, depth + 1);
    sim__indent(f, depth);
    fputs("};", f);
    break;
  case SIM_P_LIST: {
    const unsigned char *arr = *(unsigned char *const *)v;
    size_t n = *(const size_t *)((const char *)base + p->count_offset);
    fputs("(\n", f);
    for (size_t i = 0; i < n; i++) {
      sim__indent(f, depth + 1);
      fputs("{\n", f);
      sim__dump_group(f, p->sub, arr + i * p->elem_size, depth + 2);
      sim__indent(f, depth + 1);
      fprintf(f, "}%s\n", i + 1 < n ? "," : "");
    }
    sim__indent(f, depth);
    fputs(");", f);
    break;
  }
  }
}

static void sim__dump_group(FILE *f, const sim_param *table, const void *base, int depth) {
  for (const sim_param *p = table; p->name; p++) {
    sim__indent(f, depth);
    fprintf(f, "%s = ", p->name);
    sim__dump_value(f, p, base, depth);
    if (p->unit && p->type != SIM_P_GROUP && p->type != SIM_P_LIST) fprintf(f, "  # %s", p->unit);
    fputc('\n', f);
  }
}

void sim_param_dump(FILE *f, const char *group, const sim_param *table, const void *out) {
  if (group && *group) {
    fprintf(f, "%s = {\n", group);
    sim__dump_group(f, table, out, 1);
    fputs("};\n", f);
  } else {
    sim__dump_group(f, table, out, 0);
  }
}

/* One flat line per key whose help contains `tag`, under `prefix`; a list item is named by its
 * `name` key when it has one (as --param addresses it), else by its index. */
static void sim__dump_tagged(FILE *f, const char *prefix, const sim_param *table, const void *base, const char *tag) {
  for (const sim_param *p = table; p->name; p++) {
    char path[320];
    snprintf(path, sizeof path, "%s%s%s", prefix, *prefix ? "." : "", p->name);
    const void *v = (const char *)base + p->offset;
    if (p->type == SIM_P_GROUP) {
      sim__dump_tagged(f, path, p->sub, v, tag);
    } else if (p->type == SIM_P_LIST) {
      const unsigned char *arr = *(unsigned char *const *)v;
      size_t n = *(const size_t *)((const char *)base + p->count_offset);
      const sim_param *nm = NULL;
      for (const sim_param *q = p->sub; q->name; q++)
        if (q->type == SIM_P_STRING && !strcmp(q->name, "name")) nm = q;
      for (size_t i = 0; i < n; i++) {
        const void *item = arr + i * p->elem_size;
        const char *in = nm ? *(char *const *)((const char *)item + nm->offset) : NULL;
        char ip[360];
        if (in && *in)
          snprintf(ip, sizeof ip, "%s.%s", path, in);
        else
          snprintf(ip, sizeof ip, "%s.[%zu]", path, i);
        sim__dump_tagged(f, ip, p->sub, item, tag);
      }
    } else if (p->help && strstr(p->help, tag)) {
      fprintf(f, "%s = ", path);
      if (p->type == SIM_P_DOUBLE || p->type == SIM_P_DURATION) { /* for reading: 0.2, not 0.20000000000000001 */
        fprintf(f, "%.10g;", *(const double *)v);
      } else if (p->type == SIM_P_DARRAY) {
        const double *a = *(double *const *)v;
        size_t n = *(const size_t *)((const char *)base + p->count_offset);
        fputc('[', f);
        for (size_t i = 0; i < n; i++) fprintf(f, "%s%.10g", i ? ", " : "", a[i]);
        fputs("];", f);
      } else {
        sim__dump_value(f, p, base, 0);
      }
      int unit = p->unit && *p->unit && strcmp(p->unit, "1");
      fprintf(f, "%s%s  # %s\n", unit ? " " : "", unit ? p->unit : "", p->help);
    }
  }
}

void sim_param_dump_tagged(FILE *f, const char *group, const sim_param *table, const void *out, const char *tag) {
  sim__dump_tagged(f, group ? group : "", table, out, tag);
}

void sim_param_describe(FILE *f, const char *group, const sim_param *table) {
  for (const sim_param *p = table; p->name; p++) {
    char path[256];
    snprintf(path, sizeof path, "%s%s%s", group ? group : "", group && *group ? "." : "", p->name);
    fprintf(f, "%-36s %-16s", path, sim__type_name(p->type));
    if (p->type == SIM_P_GROUP || p->type == SIM_P_LIST) {
      fprintf(f, " %s\n", p->help ? p->help : "");
      char sub[300];
      snprintf(sub, sizeof sub, "%s%s", path, p->type == SIM_P_LIST ? ".[i]" : "");
      sim_param_describe(f, sub, p->sub);
      continue;
    }
    fprintf(f, " default %-10s", p->def ? p->def : "(required)");
    if (sim__bounded(p)) fprintf(f, " [%g, %g]", p->min, p->max);
    if (p->unit) fprintf(f, " %s", p->unit);
    if (p->type == SIM_P_ENUM) {
      fputs(" {", f);
      for (int i = 0; p->choices[i]; i++) fprintf(f, "%s%s", i ? "|" : "", p->choices[i]);
      fputc('}', f);
    }
    fprintf(f, "  %s\n", p->help ? p->help : "");
  }
}
