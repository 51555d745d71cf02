/* phold.c - PHOLD on the spotlab engine (see phold.h). */
#include "models/phold/phold.h"

#include <gsl/gsl_randist.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

typedef struct phold_state {
  uint64_t events;
  uint64_t hash;
} phold_state;

static const phold_config *phold__cfg(sim_lp *lp) { return sim_lp_ctx(lp); }

/* LPs per group (the last takes the rest). */
static sim_id phold__gsize(const phold_config *c) { return (sim_id)c->lps / (sim_id)c->groups; }

static sim_id phold__group_first(const void *ctx, unsigned g) { return (sim_id)g * phold__gsize(ctx); }

/* Delay of a new event: lookahead + Exp(mean) (phold_exp_draw), drawn as -mean * log(1 - u) with the engine's
 * inline draws (the same numbers as gsl_rng_uniform and gsl_rng_uniform_int, without two calls
 * through the generator's table). u = k 2^-53 with k < 2^53, so 1 - u is exact and in (0, 1]:
 * the same quantity as gsl_ran_exponential's -mean * log1p(-u), and log(1 - u) differs from
 * log1p(-u) by at most an ulp (in 7% of 10^6 draws: tests/test_sim.c). log, not log1p, because
 * it is the draw of the bare heap loop that `bench phold` measures the engine against
 * (phold_ref.c's expo), and glibc's log is the faster of the two: in a perf profile of
 * `bench phold` (1,024 LPs) log1p took 14.4% of the samples and the reference's log 8.4% for the
 * same number of calls (docs/history/performance-log.md). */
static void phold__schedule(sim_lp *lp) {
  const phold_config *c = phold__cfg(lp);
  gsl_rng *r = sim_lp_rng(lp);
  sim_id dst = sim_lp_id(lp);
  double extra = 0;
  if (c->remote > 0 && sim_rng_uniform(r) < c->remote) {
    if (c->groups > 0 && !(c->cross > 0 && sim_rng_uniform(r) < c->cross)) {
      sim_id g = dst / phold__gsize(c);
      if (g >= (sim_id)c->groups) g = (sim_id)c->groups - 1;
      sim_id lo = g * phold__gsize(c);
      sim_id hi = g + 1 == (sim_id)c->groups ? (sim_id)c->lps : lo + phold__gsize(c);
      dst = lo + sim_rng_uniform_int(r, (unsigned long)(hi - lo));
    } else {
      dst = sim_rng_uniform_int(r, (unsigned long)c->lps);
      extra = c->groups > 0 ? c->cross_delay : 0;
    }
  }
  double delay = c->lookahead + extra + phold_exp_draw(r, c->mean);
  sim_send(lp, dst, delay, NULL, 0);
}

static void phold__init(sim_lp *lp, void *st) {
  const phold_config *c = phold__cfg(lp);
  for (int64_t k = 0; k < c->start; k++) phold__schedule(lp);
}

/* FNV-1a style mix of the event's time bits and source into the LP's running hash. */
static uint64_t phold__mix(uint64_t h, uint64_t v) {
  h ^= v;
  h *= 0x100000001B3ull;
  return h ^ (h >> 29);
}

static void phold__event(sim_lp *lp, void *st, const void *msg, sim_id src) {
  phold_state *s = st;
  double t = sim_now(lp);
  uint64_t bits;
  memcpy(&bits, &t, sizeof bits);
  s->events++;
  s->hash = phold__mix(phold__mix(s->hash, bits), src);
  sim_series_add(lp, 0, 0, t, 1);
  phold__schedule(lp);
}

static void phold__finalize(sim_lp *lp, void *st) {
  phold_state *s = st;
  phold_lp_record rec = {sim_lp_id(lp), s->events, s->hash};
  sim_table_put(lp, 0, &rec);
}

static const sim_lptype phold__types[] = {
    {"phold_lp", sizeof(phold_state), phold__init, phold__event, phold__finalize},
};

static const sim_series_def phold__series[] = {
    {"events", "events", 0, 1, NULL, "committed events over time"},
};

static const sim_field phold__fields[] = {
    {"id", SIM_F_U64, offsetof(phold_lp_record, id), "1"},
    {"events", SIM_F_U64, offsetof(phold_lp_record, events), "events"},
    {"hash", SIM_F_U64, offsetof(phold_lp_record, hash), "1"},
};
static const sim_table_def phold__tables[] = {
    {"lps", sizeof(phold_lp_record), phold__fields, 3, "events handled per LP and a hash of their order"},
};

void phold_model_init(sim_model *m, const phold_config *c, sim_time end) {
  memset(m, 0, sizeof *m);
  m->name = "phold";
  m->types = phold__types;
  m->ntypes = 1;
  m->nlps = (sim_id)c->lps;
  m->msg_size = 0;
  m->lookahead = c->lookahead;
  m->end_time = end;
  m->ctx = c;
  m->series = phold__series;
  m->nseries = 1;
  m->tables = phold__tables;
  m->ntables = 1;
  if (c->groups > 0) {
    m->ngroups = (unsigned)c->groups;
    m->group_first = phold__group_first;
    m->group_lookahead = c->cross > 0 ? c->lookahead + c->cross_delay : SIM_TIME_INF;
  }
}

const sim_param phold_params[] = {
    {"lps", SIM_P_INT, offsetof(phold_config, lps), "1024", 1, 1e9, "LPs", "number of logical processes"},
    {"start", SIM_P_INT, offsetof(phold_config, start), "1", 1, 1000, "events", "initial events per LP"},
    {"lookahead", SIM_P_DOUBLE, offsetof(phold_config, lookahead), "0.1", 1e-9, 1e9, "s",
     "fixed part of every delay (the engine's lookahead)"},
    {"mean", SIM_P_DOUBLE, offsetof(phold_config, mean), "0.9", 0, 1e9, "s",
     "mean of the exponential part of every delay"},
    {"remote", SIM_P_DOUBLE, offsetof(phold_config, remote), "0.1", 0, 1, "1",
     "probability that a new event goes to a uniformly drawn LP"},
    {"groups", SIM_P_INT, offsetof(phold_config, groups), "0", 0, 1e6, "groups",
     "blocks of LPs whose remote events stay in their block (0: none)"},
    {"cross", SIM_P_DOUBLE, offsetof(phold_config, cross), "0", 0, 1, "1",
     "with groups: probability that a remote event goes to any LP instead"},
    {"cross_delay", SIM_P_DOUBLE, offsetof(phold_config, cross_delay), "10", 0, 1e9, "s",
     "added to the delay of an event sent to any LP (with groups)"},
    {NULL},
};

static int phold__validate(const void *vcfg, const sim_scenario *s, sim_diag *d) {
  const phold_config *c = vcfg;
  if (c->groups > c->lps) {
    sim_param_error(s, "phold.groups", d, "%lld groups of %lld LPs: at most one group per LP", (long long)c->groups,
                    (long long)c->lps);
    return SIM_ECONFIG;
  }
  return SIM_OK;
}

static int phold__build(const void *cfg, sim_time end, const char *base_dir, const sim_scenario *s, sim_diag *d,
                        sim_model *out) {
  phold_model_init(out, cfg, end);
  return SIM_OK;
}

static void phold__destroy(sim_model *m) { (void)m; }

static const sim_metric_def phold__metrics[] = {
    {"events", "events", "committed events", 0, "committed events", "events the engine committed in the replication",
     "events", "count", "events scheduled after the end are not committed: not counted"},
    {"events_per_lp", "events", "mean committed events per LP", 0, "committed events per LP", "events / LPs", "LPs",
     "per LP", "events scheduled after the end are not committed: not counted"},
    {"events_per_sim_s", "events/s", "committed events per simulated second", 0,
     "committed events per simulated second", "events / run.end (simulated seconds)", "simulated time",
     "per simulated second", "events scheduled after the end are not committed: not counted"},
};

static void phold__compute(const sim_model *m, const sim_results *r, double *out) {
  out[0] = (double)r->series[0][0];
  out[1] = out[0] / (double)m->nlps;
  out[2] = m->end_time > 0 ? out[0] / m->end_time : 0;
}

static int phold__check(const sim_model *m, const sim_results *r, char *msg, size_t len) {
  /* The per-LP counts must add up to the global counter. */
  uint64_t sum = 0;
  const phold_lp_record *rec = (const phold_lp_record *)r->tables[0];
  for (size_t i = 0; i < r->nrecords[0]; i++) sum += rec[i].events;
  if (r->nrecords[0] != m->nlps || (int64_t)sum != r->series[0][0]) {
    snprintf(msg, len, "per-LP event counts (%llu over %zu LPs) disagree with the total %lld", (unsigned long long)sum,
             r->nrecords[0], (long long)r->series[0][0]);
    return 1;
  }
  return 0;
}

const sim_model_class phold_class = {
    "phold",
    "PHOLD synthetic benchmark (the engine's yardstick)",
    phold_params,
    sizeof(phold_config),
    phold__validate,
    phold__build,
    phold__destroy,
    phold__metrics,
    3,
    phold__compute,
    phold__check,
};
