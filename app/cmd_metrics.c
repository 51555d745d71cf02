/* cmd_metrics.c - `spotlab metrics [NAME]`: the metric catalogue (sim_metric_def: name, unit,
 * label, formula, population, weighting, what happens to jobs under way at the end), listed for a
 * model, shown in full for one metric or quantity, or written as docs/metrics.md (--markdown). */
#include "sim/edit_distance.h"
#include "app/app.h"
#include "app/cli.h"
#include "app/models.h"
#include "app/runner.h"
#include "lab/lab.h"
#include "sim/datapath.h"

#include <stdlib.h>
#include <string.h>

static const char *const metrics__model_names[] = {"market", "phold", "lab", NULL};
static const app_option metrics__opts[] = {
    {"--scenario", APP_O_STRING, "FILE", 0, 0, APP_REPEAT,
     "the model and its dimensions (personas, regions, policies) from this scenario\n"
     "(default: scenarios/default.cfg); given more than once with --markdown, the union of\n"
     "their metrics (listing and NAME: the first)"},
    {"--model", APP_O_CHOICE, "market|phold|lab", 0, 0, 0,
     "a model's catalogue without a scenario: phold and lab (the market's metrics depend on\n"
     "its scenario: its default one)",
     metrics__model_names},
    {"--markdown", APP_O_FLAG, NULL, 0, 0, 0,
     "the catalogue as Markdown, one entry per quantity and dimensions (docs/metrics.md: with\n"
     "no --scenario or --model, every model's, the market's from its shipped scenarios)"},
    {NULL},
};
static const app_cli metrics__cli = {
    "metrics",
    "[NAME]",
    0,
    1,
    NULL,
    "Lists the metrics a run reports (name, unit and label), or shows NAME (a metric, or a\n"
    "quantity: the part before the first dot) in full: its label, what it measures, its formula\n"
    "in words, the population it is over, how it is weighted, and what it does with the jobs\n"
    "still running or queued when the run ends. The same catalogue is stored in every results\n"
    "file (attributes labels, formulas, over, weights and censored of /metrics). When a market\n"
    "scenario compares policies, a metric without a policy in its name is of the first policy's world.\n",
    "Exit status: 0 listed, 2 bad usage, a bad scenario or an unknown NAME (with the closest names).\n",
    metrics__opts};

/* A loaded catalogue: the metric definitions (pointing into the model or the class) and what owns them. */
typedef struct metrics__cat {
  const sim_metric_def *defs;
  unsigned n;
  app_loaded l; /* when loaded from a scenario */
  int loaded;
} metrics__cat;

/* Finds a shipped scenario (scenarios/NAME next to the data folder, in the source tree or installed). */
static char *metrics__shipped(const char *name) {
  char rel[256], err[1024], *path = NULL;
  snprintf(rel, sizeof rel, "../scenarios/%s", name);
  if (sim_data_find(NULL, rel, &path, err, sizeof err)) {
    fprintf(stderr, "spotlab metrics: the shipped scenario %s was not found (%s); name one with --scenario\n", name,
            err);
    return NULL;
  }
  return path;
}

static int metrics__load(const char *path, metrics__cat *c) {
  memset(c, 0, sizeof *c);
  sim_diag d;
  sim_diag_init(&d, stderr);
  if (app_load(path, NULL, 0, &d, &c->l)) {
    fprintf(stderr, "spotlab metrics: %d error%s in %s\n", d.nerrors, d.nerrors == 1 ? "" : "s", path);
    return 2;
  }
  c->loaded = 1;
  c->defs = c->l.metrics;
  c->n = c->l.nmetrics;
  return 0;
}

static void metrics__free(metrics__cat *c) {
  if (c->loaded) app_unload(&c->l);
  c->loaded = 0;
}

static void metrics__class(const char *model, metrics__cat *c) {
  memset(c, 0, sizeof *c);
  if (!strcmp(model, "lab")) {
    c->defs = lab_metric_defs(&c->n);
  } else {
    const sim_model_class *k = app_model_find(model);
    c->defs = k ? k->metrics : NULL;
    c->n = k ? k->nmetrics : 0;
  }
}

static const char *metrics__s(const char *s) { return s && *s ? s : "(not stated)"; }

/* The quantity of a metric name: up to the first dot. */
static size_t metrics__qlen(const char *name) {
  const char *d = strchr(name, '.');
  return d ? (size_t)(d - name) : strlen(name);
}

/* The name with every dimension value replaced by the dimension in capitals:
 * goodput.class.training.policy.none -> goodput.class.CLASS.policy.POLICY. */
static void metrics__pattern(const char *name, char *out, size_t len) {
  size_t o = 0, q = metrics__qlen(name);
  o += (size_t)snprintf(out, len, "%.*s", (int)q, name);
  const char *p = name + q;
  while (*p == '.' && o < len) {
    const char *dim = p + 1, *de = strchr(dim, '.');
    if (!de) break; /* a dimension without a value: keep it as it is */
    const char *val = de + 1, *ve = strchr(val, '.');
    o += (size_t)snprintf(out + o, o < len ? len - o : 0, ".%.*s.", (int)(de - dim), dim);
    for (const char *x = dim; x < de && o + 1 < len; x++) out[o++] = (char)(*x >= 'a' && *x <= 'z' ? *x - 32 : *x);
    if (o < len) out[o] = 0;
    p = ve ? ve : val + strlen(val);
  }
}

static void metrics__full(FILE *f, const sim_metric_def *m) {
  fprintf(f, "%s  [%s]%s\n", m->name, m->unit, m->headline ? "  (headline)" : "");
  fprintf(f, "  label:     %s\n", metrics__s(m->label));
  fprintf(f, "  help:      %s\n", metrics__s(m->help));
  fprintf(f, "  formula:   %s\n", metrics__s(m->formula));
  fprintf(f, "  over:      %s\n", metrics__s(m->over));
  fprintf(f, "  weighted:  %s\n", metrics__s(m->weight));
  fprintf(f, "  censored:  %s\n", metrics__s(m->censored));
}

/* NAME in full: a metric, or every metric of a quantity (the first in full, the others by name). */
static int metrics__show(const metrics__cat *c, const char *name) {
  for (unsigned k = 0; k < c->n; k++)
    if (!strcmp(c->defs[k].name, name)) {
      metrics__full(stdout, &c->defs[k]);
      return 0;
    }
  size_t ln = strlen(name);
  int first = -1, more = 0;
  for (unsigned k = 0; k < c->n; k++)
    if (metrics__qlen(c->defs[k].name) == ln && !strncmp(c->defs[k].name, name, ln)) {
      if (first < 0) {
        first = (int)k;
        metrics__full(stdout, &c->defs[k]);
      } else {
        printf("%s%s", more++ ? ", " : "  also:      ", c->defs[k].name);
      }
    }
  if (first >= 0) {
    if (more) printf("\n");
    return 0;
  }
  /* did you mean: the closest quantities (or names, when a name is closer), each once */
  char best[4][128] = {{0}};
  unsigned bd[4] = {99, 99, 99, 99};
  for (unsigned k = 0; k < c->n; k++) {
    char q[128];
    snprintf(q, sizeof q, "%.*s", (int)metrics__qlen(c->defs[k].name), c->defs[k].name);
    unsigned dq = sim_edit_distance(name, strlen(name), q, strlen(q)),
             dn = sim_edit_distance(name, strlen(name), c->defs[k].name, strlen(c->defs[k].name));
    unsigned dd = dq <= dn ? dq : dn;
    const char *cand = dq <= dn ? q : c->defs[k].name;
    int dup = 0;
    for (int j = 0; j < 4; j++) dup |= !strcmp(best[j], cand);
    for (int i = 0; i < 4 && !dup; i++)
      if (dd < bd[i]) {
        for (int j = 3; j > i; j--) {
          memcpy(best[j], best[j - 1], sizeof best[j]);
          bd[j] = bd[j - 1];
        }
        snprintf(best[i], sizeof best[i], "%s", cand);
        bd[i] = dd;
        break;
      }
  }
  /* the names this catalogue gave up, with what says it now */
  static const char *const renamed[][2] = {
      {"price_mean", "price_unweighted_mean (the volume-weighted price: client_price_per_gpu_h)"},
      {"provider_income_total", "provider_income_gross (and provider_income_net, net of slashing)"},
      {"cost_per_useful_gpu_h", "spend_per_useful_gpu_h (all spend), completed_cost_per_useful_gpu_h (the old "
                                "definition: completed jobs' cost only)"},
      {"intermediaries", "treasury_change, stakes_slashed, gp_node_fees, node_operator_fees, income_in_transit"},
  };
  for (size_t i = 0; i < sizeof renamed / sizeof renamed[0]; i++)
    if (!strncmp(name, renamed[i][0], strlen(renamed[i][0])) &&
        (name[strlen(renamed[i][0])] == 0 || name[strlen(renamed[i][0])] == '.' ||
         name[strlen(renamed[i][0])] == '_')) {
      fprintf(stderr, "spotlab metrics: '%s' was renamed: %s\n", name, renamed[i][1]);
      return 2;
    }
  fprintf(stderr, "spotlab metrics: no metric or quantity '%s'", name);
  if (best[0][0] && bd[0] <= (ln > 6 ? ln / 2 : 3)) {
    fprintf(stderr, "; did you mean");
    for (int i = 0; i < 4 && best[i][0] && bd[i] <= bd[0] + 2; i++) fprintf(stderr, "%s %s", i ? "," : "", best[i]);
    fprintf(stderr, "?");
  }
  fprintf(stderr, " (spotlab metrics lists them)\n");
  return 2;
}

static void metrics__list(const metrics__cat *c) {
  size_t w = 8;
  for (unsigned k = 0; k < c->n; k++)
    if (strlen(c->defs[k].name) > w) w = strlen(c->defs[k].name);
  printf("%-*s %-10s %s\n", (int)w, "metric", "unit", "label (spotlab metrics NAME: in full)");
  for (unsigned k = 0; k < c->n; k++)
    printf("%-*s %-10s %s%s\n", (int)w, c->defs[k].name, c->defs[k].unit, metrics__s(c->defs[k].label),
           c->defs[k].headline ? "  *" : "");
  printf("(%u metrics; * headline: in the short table of spotlab run)\n", c->n);
}

/* One Markdown entry per pattern (quantity and dimensions), in the order of first appearance
 * over the catalogues, with the dimensions' values seen. */
static void metrics__markdown(const char *title, const char *intro, metrics__cat *cats, int ncat) {
  printf("\n## %s\n\n%s\n", title, intro);
  char **seen = NULL;
  size_t nseen = 0;
  for (int ci = 0; ci < ncat; ci++)
    for (unsigned k = 0; k < cats[ci].n; k++) {
      const sim_metric_def *m = &cats[ci].defs[k];
      char pat[256];
      metrics__pattern(m->name, pat, sizeof pat);
      int dup = 0;
      for (size_t i = 0; i < nseen && !dup; i++) dup = !strcmp(seen[i], pat);
      if (dup) continue;
      char **ns = realloc(seen, (nseen + 1) * sizeof *seen);
      if (!ns || !(ns[nseen] = strdup(pat))) SIM_FATAL("out of memory");
      seen = ns;
      nseen++;
      printf("\n### `%s`\n\n%s (%s)%s\n\n", pat, metrics__s(m->label), m->unit,
             m->headline ? ", a headline metric" : "");
      printf("- what: %s\n", metrics__s(m->help));
      printf("- formula: %s\n", metrics__s(m->formula));
      printf("- over: %s\n", metrics__s(m->over));
      printf("- weighted: %s\n", metrics__s(m->weight));
      printf("- censored: %s\n", metrics__s(m->censored));
    }
  for (size_t i = 0; i < nseen; i++) free(seen[i]);
  free(seen);
}

/* The whole catalogue (docs/metrics.md): the market's metrics over its shipped scenarios, then
 * phold's and the lab's. */
static int metrics__doc(void) {
  static const char *const shipped[] = {"default.cfg", "fault_tolerance.cfg", "trace_replay.cfg"};
  enum { NS = sizeof shipped / sizeof shipped[0] };
  metrics__cat cats[NS];
  int rc = 0, n = 0;
  for (int i = 0; i < NS && !rc; i++) {
    char *p = metrics__shipped(shipped[i]);
    rc = p ? metrics__load(p, &cats[n]) : 2;
    n += rc == 0;
    free(p);
  }
  if (!rc) {
    printf("# Metrics\n\n"
           "<!-- generated by `spotlab metrics --markdown`; edit the catalogue in the code (the models'\n"
           "     metric tables), not this file: the test docs_metrics fails when they differ -->\n\n"
           "Every metric a run reports, from the catalogue that `spotlab metrics` lists and every results\n"
           "file stores (the attributes labels, formulas, over, weights and censored of `/metrics`, in the\n"
           "order of its names). One entry per quantity and dimensions: a name in capitals stands for\n"
           "each value of the dimension a scenario defines (PERSONA, POOL, REGION, CLASS, POLICY, ...).\n"
           "\"censored\" says what the metric does with the jobs (or providers) still under way when the\n"
           "run ends. Regenerate this file with:\n\n"
           "<!-- docs-test: skip rewrites this tracked file; the docs_metrics test compares it with the catalogue -->\n"
           "```sh\nspotlab metrics --markdown > docs/metrics.md\n```\n");
    metrics__markdown("market",
                      "The market model's metrics over the shipped scenarios `scenarios/default.cfg`, "
                      "`scenarios/fault_tolerance.cfg`\n(per compared policy) and `scenarios/trace_replay.cfg` "
                      "(trace rows). When a scenario compares\npolicies (market.compare_policies), the metrics "
                      "without a policy in their name are of the first\ncompared policy's world (the per-class "
                      "fault-tolerance ones say so: QUANTITY.class.CLASS.policy.POLICY).\nThe ledger identity "
                      "that `ledger_identity` checks is in [the market's documentation](market.md).",
                      cats, n);
    metrics__cat ph, lb;
    metrics__class("phold", &ph);
    metrics__markdown("phold", "The PHOLD benchmark model's metrics.", &ph, 1);
    metrics__class("lab", &lb);
    metrics__markdown("lab", "The lab's metrics (`spotlab lab`).", &lb, 1);
  }
  for (int i = 0; i < n; i++) metrics__free(&cats[i]);
  return rc;
}

static int cmd_metrics_main(int argc, char **argv) {
  app_args a;
  int prc = app_cli_parse(&metrics__cli, argc, argv, &a);
  if (prc) {
    app_args_free(&a);
    return prc == 1 ? 0 : 2;
  }
  const char *name = a.noperands ? a.operand[0] : NULL;
  int markdown = app_args_flag(&a, "--markdown"), nsc = app_args_count(&a, "--scenario");
  int model = app_args_count(&a, "--model") ? app_args_choice(&a, "--model", 0) : -1;
  if (model >= 0 && nsc) {
    fprintf(stderr, "spotlab metrics: --model and --scenario exclude each other (a scenario names its model)\n");
    app_args_free(&a);
    return 2;
  }
  if (markdown && name) {
    fprintf(stderr, "spotlab metrics: --markdown writes the whole catalogue; drop NAME\n");
    app_args_free(&a);
    return 2;
  }
  if (markdown && !nsc && model < 0) {
    app_args_free(&a);
    return metrics__doc();
  }
  metrics__cat cats[8];
  int n = 0, rc = 0;
  if (model > 0) {
    metrics__class(metrics__model_names[model], &cats[n++]);
  } else if (nsc) {
    for (int i = 0; i < nsc && i < 8 && !rc; i++) {
      rc = metrics__load(app_args_at(&a, "--scenario", i), &cats[n]);
      n += rc == 0;
    }
  } else {
    char *p = metrics__shipped("default.cfg");
    rc = p ? metrics__load(p, &cats[n]) : 2;
    n += rc == 0;
    free(p);
  }
  app_args_free(&a);
  if (!rc) {
    if (markdown)
      metrics__markdown(cats[0].loaded ? cats[0].l.cls->name : metrics__model_names[model], "", cats, n);
    else if (name)
      rc = metrics__show(&cats[0], name);
    else
      metrics__list(&cats[0]);
  }
  for (int i = 0; i < n; i++) metrics__free(&cats[i]);
  return rc;
}

static const app_command cmd_metrics = {"metrics", "the metric catalogue: what each metric measures, over what, how",
                                        cmd_metrics_main};
APP_COMMAND(cmd_metrics)
