/* exp_file.c - reading an experiment file (libconfig syntax; docs/experiments.md). Every problem
 * is reported as FILE:LINE: message and the read fails as a whole. What needs the model (do the
 * factor keys exist, do the metrics) is checked by `spotlab experiment` once the scenario is built,
 * against the lines kept here. */
#include "analysis/experiment/exp.h"
#include "sim/sim.h"

#include <ctype.h>
#include <errno.h>
#include <libconfig.h>
#include <libgen.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define EXP_FILE_MAX_BYTES (1 << 20)

static int exp__line(const config_setting_t *s) { return s ? (int)config_setting_source_line(s) : 0; }

static char *exp__dup(const char *s) {
  char *r = strdup(s);
  if (!r) SIM_FATAL("out of memory");
  return r;
}

/* The shortest "%g" text that reads back as v, with a decimal point (a float key wants one). */
static void exp__float_text(char *buf, size_t len, double v) {
  for (int prec = 6; prec <= 17; prec++) {
    snprintf(buf, len, "%.*g", prec, v);
    if (strtod(buf, NULL) == v) break;
  }
  if (!strpbrk(buf, ".eEn") && strlen(buf) + 3 < len) strcat(buf, ".0");
}

/* A scalar setting as scenario text; *x its number (NaN when not one). 0, or -1 for a group/list. */
static int exp__scalar_text(const config_setting_t *e, char *buf, size_t len, double *x) {
  *x = NAN;
  switch (config_setting_type(e)) {
  case CONFIG_TYPE_INT:
  case CONFIG_TYPE_INT64:
    snprintf(buf, len, "%lld", config_setting_get_int64(e));
    *x = (double)config_setting_get_int64(e);
    return 0;
  case CONFIG_TYPE_FLOAT:
    exp__float_text(buf, len, config_setting_get_float(e));
    *x = config_setting_get_float(e);
    return 0;
  case CONFIG_TYPE_BOOL: snprintf(buf, len, "%s", config_setting_get_bool(e) ? "true" : "false"); return 0;
  case CONFIG_TYPE_STRING: {
    size_t o = 0;
    const char *s = config_setting_get_string(e);
    buf[o++] = '"';
    for (; *s && o + 3 < len; s++) {
      if (*s == '"' || *s == '\\') buf[o++] = '\\';
      buf[o++] = *s;
    }
    buf[o++] = '"';
    buf[o] = 0;
    return 0;
  }
  default: return -1;
  }
}

/* A level: a scalar, or an array of scalars ("[0.1, 0.8, 0.1]"). */
static int exp__level_text(const config_setting_t *e, char *buf, size_t len, double *x) {
  if (config_setting_type(e) != CONFIG_TYPE_ARRAY) return exp__scalar_text(e, buf, len, x);
  *x = NAN;
  size_t o = 0;
  int n = config_setting_length(e);
  o += (size_t)snprintf(buf + o, len - o, "[");
  for (int i = 0; i < n && o < len; i++) {
    char one[256];
    double dummy;
    if (exp__scalar_text(config_setting_get_elem(e, (unsigned)i), one, sizeof one, &dummy)) return -1;
    o += (size_t)snprintf(buf + o, len - o, "%s%s", i ? ", " : "", one);
  }
  if (o < len) snprintf(buf + o, len - o, "]");
  return 0;
}

static int exp__number(const config_setting_t *s, double *v) {
  int t = config_setting_type(s);
  if (t == CONFIG_TYPE_INT || t == CONFIG_TYPE_INT64) {
    *v = (double)config_setting_get_int64(s);
    return 0;
  }
  if (t == CONFIG_TYPE_FLOAT) {
    *v = config_setting_get_float(s);
    return isfinite(*v) ? 0 : -1;
  }
  return -1;
}

static int exp__is_int(const config_setting_t *s) {
  return config_setting_type(s) == CONFIG_TYPE_INT || config_setting_type(s) == CONFIG_TYPE_INT64;
}

/* "metric OP number": OP one of < <= > >=. */
static int exp__parse_constraint(const char *text, exp_constraint *c) {
  const char *p = text;
  while (isspace((unsigned char)*p)) p++;
  const char *m0 = p;
  while (*p && !isspace((unsigned char)*p) && *p != '<' && *p != '>') p++;
  if (p == m0) return -1;
  c->metric = strndup(m0, (size_t)(p - m0));
  if (!c->metric) SIM_FATAL("out of memory");
  while (isspace((unsigned char)*p)) p++;
  if (*p == '<')
    c->op = p[1] == '=' ? EXP_LE : EXP_LT;
  else if (*p == '>')
    c->op = p[1] == '=' ? EXP_GE : EXP_GT;
  else
    return -1;
  p += p[1] == '=' ? 2 : 1;
  char *end;
  errno = 0;
  c->bound = strtod(p, &end);
  if (end == p || errno || !isfinite(c->bound)) return -1;
  while (isspace((unsigned char)*end)) end++;
  return *end ? -1 : 0;
}

static int exp__parse_objective(const char *text, exp_objective *o) {
  const char *p = text;
  while (isspace((unsigned char)*p)) p++;
  if (!strncmp(p, "maximize", 8) && isspace((unsigned char)p[8])) {
    o->sense = 1;
    p += 8;
  } else if (!strncmp(p, "minimize", 8) && isspace((unsigned char)p[8])) {
    o->sense = -1;
    p += 8;
  } else
    return -1;
  while (isspace((unsigned char)*p)) p++;
  const char *m0 = p;
  while (*p && !isspace((unsigned char)*p)) p++;
  if (p == m0) return -1;
  const char *q = p;
  while (isspace((unsigned char)*q)) q++;
  if (*q) return -1;
  o->metric = strndup(m0, (size_t)(p - m0));
  if (!o->metric) SIM_FATAL("out of memory");
  return 0;
}

static const char *const exp__top_keys[] = {"scenario", "params",      "reps",       "seed", "factors",
                                            "design",   "constraints", "objectives", NULL};
static const char *const exp__factor_keys[] = {"key", "levels", "min", "max", "scale", "integer", "n", NULL};
static const char *const exp__design_keys[] = {"type", "points", "seed", NULL};

static int exp__known(const char *name, const char *const *keys) {
  for (int i = 0; keys[i]; i++)
    if (!strcmp(name, keys[i])) return 1;
  return 0;
}

/* Reads the file into memory: a regular file of at most 1 MiB without NUL bytes. */
static char *exp__read(const char *path, sim_diag *d) {
  struct stat st;
  if (stat(path, &st) != 0) {
    sim_diag_report(d, path, 0, "cannot read the experiment file: %s", strerror(errno));
    return NULL;
  }
  if (!S_ISREG(st.st_mode) || st.st_size > EXP_FILE_MAX_BYTES) {
    sim_diag_report(d, path, 0, "not an experiment file (%s)",
                    S_ISREG(st.st_mode) ? "larger than 1 MiB" : "not a regular file");
    return NULL;
  }
  FILE *f = fopen(path, "rb");
  char *t = f ? malloc((size_t)st.st_size + 1) : NULL;
  size_t n = t ? fread(t, 1, (size_t)st.st_size, f) : 0;
  if (f) fclose(f);
  if (!t || n != (size_t)st.st_size) {
    sim_diag_report(d, path, 0, "cannot read the experiment file: %s", t ? "short read" : strerror(errno));
    free(t);
    return NULL;
  }
  t[n] = 0;
  if (strlen(t) != n) {
    sim_diag_report(d, path, 0, "not an experiment file (it holds a NUL byte)");
    free(t);
    return NULL;
  }
  int line = 1;
  for (const char *p = t; *p; p++) {
    if (*p == '\n') line++;
    if (*p == '@' && !strncmp(p, "@include", 8)) {
      sim_diag_report(d, path, line, "@include is not supported in experiment files");
      free(t);
      return NULL;
    }
  }
  return t;
}

static void exp__factor(const char *path, const config_setting_t *g, exp_factor *f, sim_diag *d) {
  f->line = exp__line(g);
  if (config_setting_type(g) != CONFIG_TYPE_GROUP) {
    sim_diag_report(d, path, f->line, "factors: each factor is a group { key = \"group.key\"; levels = [...]; }");
    return;
  }
  for (int i = 0; i < config_setting_length(g); i++) {
    const config_setting_t *e = config_setting_get_elem(g, (unsigned)i);
    if (!exp__known(config_setting_name(e), exp__factor_keys))
      sim_diag_report(d, path, exp__line(e), "factor: unknown key '%s' (key, levels, min, max, scale, integer, n)",
                      config_setting_name(e));
  }
  const config_setting_t *k = config_setting_get_member(g, "key");
  if (!k || config_setting_type(k) != CONFIG_TYPE_STRING || !config_setting_get_string(k)[0]) {
    sim_diag_report(d, path, f->line, "factor: 'key' (a string, \"group.key\") is missing");
    return;
  }
  f->key = exp__dup(config_setting_get_string(k));
  if (!strcmp(f->key, "run.reps") || !strcmp(f->key, "run.seed"))
    sim_diag_report(d, path, exp__line(k),
                    "factor '%s': cannot be a factor (every point shares the replications and their seeds)", f->key);
  const config_setting_t *lv = config_setting_get_member(g, "levels");
  const config_setting_t *mn = config_setting_get_member(g, "min"), *mx = config_setting_get_member(g, "max");
  const config_setting_t *sc = config_setting_get_member(g, "scale"), *in = config_setting_get_member(g, "integer");
  const config_setting_t *nn = config_setting_get_member(g, "n");
  if (lv && (mn || mx)) {
    sim_diag_report(d, path, exp__line(lv), "factor '%s': give levels or min and max, not both", f->key);
    return;
  }
  if (lv) {
    int t = config_setting_type(lv);
    if (t != CONFIG_TYPE_ARRAY && t != CONFIG_TYPE_LIST) {
      sim_diag_report(d, path, exp__line(lv), "factor '%s': levels is a list, [a, b, c] or ( [..], [..] )", f->key);
      return;
    }
    int n = config_setting_length(lv);
    if (n == 0) {
      sim_diag_report(d, path, exp__line(lv), "factor '%s': empty levels", f->key);
      return;
    }
    if (n > EXP_MAX_LEVELS) {
      sim_diag_report(d, path, exp__line(lv), "factor '%s': more than %d levels", f->key, EXP_MAX_LEVELS);
      return;
    }
    f->levels = calloc((size_t)n, sizeof *f->levels);
    f->level_x = calloc((size_t)n, sizeof *f->level_x);
    if (!f->levels || !f->level_x) SIM_FATAL("out of memory");
    f->nlevels = n;
    for (int i = 0; i < n; i++) {
      const config_setting_t *e = config_setting_get_elem(lv, (unsigned)i);
      char buf[4096];
      if (exp__level_text(e, buf, sizeof buf, &f->level_x[i])) {
        sim_diag_report(d, path, exp__line(e) ? exp__line(e) : exp__line(lv),
                        "factor '%s': level %d is a group or a list; levels are values or arrays [..]", f->key, i + 1);
        buf[0] = 0;
      }
      f->levels[i] = exp__dup(buf);
      for (int j = 0; j < i; j++)
        if (buf[0] && !strcmp(f->levels[j], buf))
          sim_diag_report(d, path, exp__line(lv), "factor '%s': level %s is given twice", f->key, buf);
    }
    if (nn || sc || in)
      sim_diag_report(d, path,
                      exp__line(nn   ? nn
                                : sc ? sc
                                     : in),
                      "factor '%s': n, scale and integer are for ranges (min, max), not levels", f->key);
    return;
  }
  if (!mn || !mx) {
    sim_diag_report(d, path, f->line, "factor '%s': give its levels = [...], or min and max", f->key);
    return;
  }
  if (exp__number(mn, &f->min) || exp__number(mx, &f->max)) {
    sim_diag_report(d, path, exp__line(exp__number(mn, &f->min) ? mn : mx), "factor '%s': min and max are numbers",
                    f->key);
    return;
  }
  if (f->min >= f->max)
    sim_diag_report(d, path, exp__line(mn), "factor '%s': min >= max (%g >= %g)", f->key, f->min, f->max);
  if (sc) {
    const char *v = config_setting_type(sc) == CONFIG_TYPE_STRING ? config_setting_get_string(sc) : "";
    if (!strcmp(v, "log"))
      f->log = 1;
    else if (strcmp(v, "linear"))
      sim_diag_report(d, path, exp__line(sc), "factor '%s': scale is \"linear\" or \"log\"", f->key);
    if (f->log && f->min <= 0)
      sim_diag_report(d, path, exp__line(sc), "factor '%s': a log scale needs min > 0 (min is %g)", f->key, f->min);
  }
  if (in) {
    if (config_setting_type(in) != CONFIG_TYPE_BOOL)
      sim_diag_report(d, path, exp__line(in), "factor '%s': integer is true or false", f->key);
    else
      f->integer = config_setting_get_bool(in);
  }
  if (nn) {
    if (!exp__is_int(nn) || config_setting_get_int64(nn) < 2 || config_setting_get_int64(nn) > EXP_MAX_LEVELS)
      sim_diag_report(d, path, exp__line(nn), "factor '%s': n is a whole number in [2, %d]", f->key, EXP_MAX_LEVELS);
    else
      f->n = (int)config_setting_get_int64(nn);
  }
}

/* A list or array of strings (constraints, objectives, params): calls fn on each. */
static int exp__strings(const char *path, const config_setting_t *l, const char *what, sim_diag *d) {
  int t = config_setting_type(l);
  if (t != CONFIG_TYPE_ARRAY && t != CONFIG_TYPE_LIST) {
    sim_diag_report(d, path, exp__line(l), "%s is a list of strings, [\"...\", \"...\"]", what);
    return -1;
  }
  for (int i = 0; i < config_setting_length(l); i++)
    if (config_setting_type(config_setting_get_elem(l, (unsigned)i)) != CONFIG_TYPE_STRING) {
      sim_diag_report(d, path, exp__line(l), "%s: entry %d is not a string", what, i + 1);
      return -1;
    }
  return config_setting_length(l);
}

int exp_spec_load(const char *path, sim_diag *d, exp_spec **out) {
  *out = NULL;
  int before = d->nerrors;
  char *text = exp__read(path, d);
  if (!text) return SIM_ECONFIG;
  config_t cfg;
  config_init(&cfg);
  char *wide = sim_config_widen(text, path, d); /* integers at 64 bits, as in scenarios */
  free(text);
  if (!wide || config_read_string(&cfg, wide) != CONFIG_TRUE) {
    if (wide) sim_diag_report(d, path, config_error_line(&cfg), "syntax error: %s", config_error_text(&cfg));
    config_destroy(&cfg);
    free(wide);
    return SIM_ECONFIG;
  }
  free(wide);
  exp_spec *s = calloc(1, sizeof *s);
  if (!s) SIM_FATAL("out of memory");
  s->path = exp__dup(path);
  s->reps = s->seed = -1;
  s->design_seed = 1;
  const config_setting_t *root = config_root_setting(&cfg);
  for (int i = 0; i < config_setting_length(root); i++) {
    const config_setting_t *e = config_setting_get_elem(root, (unsigned)i);
    if (!exp__known(config_setting_name(e), exp__top_keys))
      sim_diag_report(d, path, exp__line(e),
                      "unknown key '%s' (an experiment file has scenario, params, reps, seed, factors, design, "
                      "constraints, objectives)",
                      config_setting_name(e));
  }
  /* scenario: relative to the experiment file's folder */
  const config_setting_t *sc = config_setting_get_member(root, "scenario");
  if (!sc || config_setting_type(sc) != CONFIG_TYPE_STRING) {
    sim_diag_report(d, path, exp__line(sc), "scenario = \"FILE.cfg\"; is missing (a string)");
  } else {
    const char *v = config_setting_get_string(sc);
    s->scenario_line = exp__line(sc);
    if (v[0] == '/')
      s->scenario = exp__dup(v);
    else {
      char *c = exp__dup(path), buf[8192];
      snprintf(buf, sizeof buf, "%s/%s", dirname(c), v);
      free(c);
      s->scenario = exp__dup(buf);
    }
    struct stat st;
    if (stat(s->scenario, &st) != 0 || !S_ISREG(st.st_mode))
      sim_diag_report(d, path, s->scenario_line, "scenario '%s': no such file (looked at %s)", v, s->scenario);
  }
  const config_setting_t *pa = config_setting_get_member(root, "params");
  int n = pa ? exp__strings(path, pa, "params", d) : 0;
  if (n > 0) {
    s->params = calloc((size_t)n, sizeof *s->params);
    s->params_line = calloc((size_t)n, sizeof *s->params_line);
    if (!s->params || !s->params_line) SIM_FATAL("out of memory");
    for (int i = 0; i < n; i++) {
      const config_setting_t *e = config_setting_get_elem(pa, (unsigned)i);
      s->params[i] = exp__dup(config_setting_get_string(e));
      s->params_line[i] = exp__line(e) ? exp__line(e) : exp__line(pa);
      if (!strchr(s->params[i], '='))
        sim_diag_report(d, path, s->params_line[i], "params: '%s' is not KEY=VALUE", s->params[i]);
    }
    s->nparams = n;
  }
  const config_setting_t *r = config_setting_get_member(root, "reps");
  if (r) {
    if (!exp__is_int(r) || config_setting_get_int64(r) < 1 || config_setting_get_int64(r) > 10000)
      sim_diag_report(d, path, exp__line(r), "reps is a whole number in [1, 10000]");
    else
      s->reps = config_setting_get_int64(r);
  }
  const config_setting_t *sd = config_setting_get_member(root, "seed");
  if (sd) {
    if (!exp__is_int(sd) || config_setting_get_int64(sd) < 0)
      sim_diag_report(d, path, exp__line(sd), "seed is a whole number >= 0");
    else
      s->seed = config_setting_get_int64(sd);
  }
  /* design */
  s->design = EXP_FACTORIAL;
  const config_setting_t *dg = config_setting_get_member(root, "design");
  const config_setting_t *dpoints = NULL;
  if (dg) {
    s->design_line = exp__line(dg);
    if (config_setting_type(dg) != CONFIG_TYPE_GROUP)
      sim_diag_report(d, path, s->design_line, "design is a group: { type = \"lhs\"; points = 16; seed = 1; }");
    else {
      for (int i = 0; i < config_setting_length(dg); i++) {
        const config_setting_t *e = config_setting_get_elem(dg, (unsigned)i);
        if (!exp__known(config_setting_name(e), exp__design_keys))
          sim_diag_report(d, path, exp__line(e), "design: unknown key '%s' (type, points, seed)",
                          config_setting_name(e));
      }
      const config_setting_t *t = config_setting_get_member(dg, "type");
      const char *tv = t && config_setting_type(t) == CONFIG_TYPE_STRING ? config_setting_get_string(t) : NULL;
      if (tv && !strcmp(tv, "factorial"))
        s->design = EXP_FACTORIAL;
      else if (tv && !strcmp(tv, "lhs"))
        s->design = EXP_LHS;
      else if (tv && !strcmp(tv, "sobol"))
        s->design = EXP_SOBOL;
      else
        sim_diag_report(d, path, exp__line(t) ? exp__line(t) : s->design_line,
                        "design: type is \"factorial\", \"lhs\" or \"sobol\"");
      dpoints = config_setting_get_member(dg, "points");
      if (dpoints) {
        if (!exp__is_int(dpoints) || config_setting_get_int64(dpoints) < 1 ||
            config_setting_get_int64(dpoints) > EXP_MAX_POINTS)
          sim_diag_report(d, path, exp__line(dpoints), "design: points is a whole number in [1, %d]", EXP_MAX_POINTS);
        else
          s->points = (int)config_setting_get_int64(dpoints);
      }
      const config_setting_t *ds = config_setting_get_member(dg, "seed");
      if (ds) {
        if (!exp__is_int(ds) || config_setting_get_int64(ds) < 0)
          sim_diag_report(d, path, exp__line(ds), "design: seed is a whole number >= 0");
        else
          s->design_seed = (uint64_t)config_setting_get_int64(ds);
      }
    }
  }
  if (s->design != EXP_FACTORIAL && !dpoints)
    sim_diag_report(d, path, s->design_line, "design: %s needs points = N", exp_design_name(s->design));
  if (s->design == EXP_FACTORIAL && dpoints)
    sim_diag_report(d, path, exp__line(dpoints),
                    "design: a factorial's points are the product of its factors' levels (no points key)");
  /* factors */
  const config_setting_t *fl = config_setting_get_member(root, "factors");
  if (!fl || config_setting_type(fl) != CONFIG_TYPE_LIST || config_setting_length(fl) == 0) {
    sim_diag_report(d, path, exp__line(fl), "factors = ( { key = \"group.key\"; levels = [...]; }, ... ); is missing");
  } else if (config_setting_length(fl) > EXP_MAX_FACTORS) {
    sim_diag_report(d, path, exp__line(fl), "more than %d factors", EXP_MAX_FACTORS);
  } else {
    s->nfactors = config_setting_length(fl);
    s->factors = calloc((size_t)s->nfactors, sizeof *s->factors);
    if (!s->factors) SIM_FATAL("out of memory");
    unsigned long long prod = 1;
    for (int i = 0; i < s->nfactors; i++) {
      exp_factor *f = &s->factors[i];
      exp__factor(path, config_setting_get_elem(fl, (unsigned)i), f, d);
      for (int j = 0; j < i; j++)
        if (f->key && s->factors[j].key && !strcmp(f->key, s->factors[j].key))
          sim_diag_report(d, path, f->line, "factor '%s' is given twice (also at line %d)", f->key, s->factors[j].line);
      if (s->design == EXP_FACTORIAL && f->key && f->nlevels == 0 && f->n == 0 && f->max > f->min)
        sim_diag_report(d, path, f->line,
                        "factor '%s': a range in a factorial design needs n = N (N values from min to max)", f->key);
      if (s->design != EXP_FACTORIAL && f->n)
        sim_diag_report(d, path, f->line, "factor '%s': n is for factorial designs (%s draws its own values)", f->key,
                        exp_design_name(s->design));
      int lv = f->nlevels > 0 ? f->nlevels : f->n;
      if (lv > 0 && prod <= EXP_MAX_POINTS) prod *= (unsigned long long)lv;
    }
    if (s->design == EXP_FACTORIAL && prod > EXP_MAX_POINTS)
      sim_diag_report(d, path, exp__line(fl), "the factorial has more than %d points", EXP_MAX_POINTS);
    if (s->design == EXP_FACTORIAL && d->nerrors == before) s->points = (int)prod;
  }
  /* constraints and objectives */
  const config_setting_t *cl = config_setting_get_member(root, "constraints");
  n = cl ? exp__strings(path, cl, "constraints", d) : 0;
  if (n > 0) {
    s->cons = calloc((size_t)n, sizeof *s->cons);
    if (!s->cons) SIM_FATAL("out of memory");
    s->ncons = n;
    for (int i = 0; i < n; i++) {
      const config_setting_t *e = config_setting_get_elem(cl, (unsigned)i);
      exp_constraint *c = &s->cons[i];
      c->text = exp__dup(config_setting_get_string(e));
      c->line = exp__line(e) ? exp__line(e) : exp__line(cl);
      if (exp__parse_constraint(c->text, c))
        sim_diag_report(d, path, c->line, "constraint '%s': write METRIC < NUMBER (or <=, >, >=)", c->text);
    }
  }
  const config_setting_t *ol = config_setting_get_member(root, "objectives");
  n = ol ? exp__strings(path, ol, "objectives", d) : 0;
  if (n > 0) {
    s->objs = calloc((size_t)n, sizeof *s->objs);
    if (!s->objs) SIM_FATAL("out of memory");
    s->nobjs = n;
    for (int i = 0; i < n; i++) {
      const config_setting_t *e = config_setting_get_elem(ol, (unsigned)i);
      exp_objective *o = &s->objs[i];
      o->text = exp__dup(config_setting_get_string(e));
      o->line = exp__line(e) ? exp__line(e) : exp__line(ol);
      if (exp__parse_objective(o->text, o))
        sim_diag_report(d, path, o->line, "objective '%s': write \"maximize METRIC\" or \"minimize METRIC\"", o->text);
    }
  }
  config_destroy(&cfg);
  if (d->nerrors > before) {
    exp_spec_free(s);
    return SIM_ECONFIG;
  }
  *out = s;
  return 0;
}

void exp_spec_free(exp_spec *s) {
  if (!s) return;
  for (int i = 0; i < s->nfactors; i++) {
    exp_factor *f = &s->factors[i];
    free(f->key);
    for (int j = 0; f->levels && j < f->nlevels; j++) free(f->levels[j]);
    free(f->levels);
    free(f->level_x);
  }
  free(s->factors);
  for (int i = 0; i < s->nparams; i++) free(s->params[i]);
  free(s->params);
  free(s->params_line);
  for (int i = 0; i < s->ncons; i++) {
    free(s->cons[i].text);
    free(s->cons[i].metric);
  }
  free(s->cons);
  for (int i = 0; i < s->nobjs; i++) {
    free(s->objs[i].text);
    free(s->objs[i].metric);
  }
  free(s->objs);
  free(s->scenario);
  free(s->path);
  free(s);
}
