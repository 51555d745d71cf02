/* test_market_toy.c - a pool and a clearing rule defined here, outside the model, registered through
 * the model's registration API (mkt__pool_register, mkt_rule_register) and run through the market:
 * what docs/architecture.md shows as "adding a pool" and "adding a rule". Nothing of the model's
 * files names them; the market reaches them only through their descriptors.
 *
 *   toy_half  a posted-price pool in the fixed pool's place that posts half the fixed price;
 *   toy_ask   a clearing rule: bids in the order given, first fit, each winner pays its host's ask.
 */
#include "models/market/mkt_internal.h"
#include "models/market/mkt_model.h"
#include "models/market/mkt_rule.h"

#include <CUnit/CUnit.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the toy rule --------------------------------------------------------------------------- */
static long toy_ask_clears, toy_ask_late; /* calls, to show that the market ran the rule */

/* First come, first served at the host's ask: a running order tries its home first, then every
 * order the lots in index order; the ask is at most the bid wherever the order fits. */
static long toy_ask_clear(const mkt_order *orders, size_t n, const mkt_lot *lots, size_t nl, mkt_clearing *out) {
  toy_ask_clears++;
  uint32_t *free_gpus = calloc(nl ? nl : 1, sizeof *free_gpus);
  if (!free_gpus) return MKT_ENOMEM;
  for (size_t l = 0; l < nl; l++) free_gpus[l] = lots[l].gpus;
  long winners = 0;
  for (size_t i = 0; i < n; i++) {
    out->win[i] = 0;
    out->lot[i] = -1;
    out->pay[i] = 0;
    int32_t at = -1;
    int32_t home = orders[i].home;
    if (home >= 0 && (size_t)home < nl && mkt_lot_fits(&lots[home], free_gpus[home], &orders[i])) at = home;
    for (size_t l = 0; at < 0 && l < nl; l++)
      if (mkt_lot_fits(&lots[l], free_gpus[l], &orders[i])) at = (int32_t)l;
    if (at < 0) continue;
    free_gpus[at] -= orders[i].gpus;
    out->win[i] = 1;
    out->lot[i] = at;
    out->pay[i] = mkt_lot_ask(&lots[at], orders[i].power_w);
    winners++;
  }
  free(free_gpus);
  return winners;
}

static int64_t toy_ask_late_price(const mkt_order *o, const mkt_lot *l, int64_t last) {
  (void)last;
  toy_ask_late++;
  int64_t ask = mkt_lot_ask(l, o->power_w);
  return ask <= o->price ? ask : -1;
}

static const mkt_rule_ops toy_ask = {.name = "toy_ask",
                                     .help = "first come, first fit, each winner pays its host's ask (a test's toy)",
                                     .clear = toy_ask_clear,
                                     .late_price = toy_ask_late_price};

/* ---- the toy pool --------------------------------------------------------------------------- */
static long toy_half_prices; /* calls of its gpu_price */

static int64_t toy_half_price(const mkt_ctx *c, unsigned region, const mkt_pstat *ps) {
  (void)region;
  toy_half_prices++;
  return c->posted[ps->gpu] / 2;
}
static int64_t toy_half_quote(const mkt_ctx *c, const mkt_market *m, const mkt_pstat *ps) {
  return mkt__quote_rental(c, m, c->posted[ps->gpu] / 2);
}
static double toy_half_prior(const mkt_ctx *c) { return (double)(c->posted[c->ref_gpu] / 2); }

static const mkt__pool_ops toy_half = {.name = "toy_half",
                                       .gpu_price = toy_half_price,
                                       .submit = mkt__posted_submit,
                                       .tick = mkt__posted_tick,
                                       .handed_back = mkt__posted_handed_back,
                                       .quote = toy_half_quote,
                                       .prior_price = toy_half_prior,
                                       .front_door = 1,
                                       .imposed = 1};

/* ---- a small market ------------------------------------------------------------------------- */
static const char *toy_text =
    "market = {\n"
    "  bidding = { rule = \"%s\"; min_bid_usd_h = 0.01; };\n"
    "  personas = (\n"
    "    { name = \"jade\"; pool = \"fixed\"; up_dist = \"weibull\"; up_p1 = 0.64; up_p2 = 40.0; },\n"
    "    { name = \"katie\"; pool = \"flexible\"; up_dist = \"weibull\"; up_p1 = 0.64; up_p2 = 60.0; },\n"
    "    { name = \"henry\"; pool = \"bidding\"; fit = \"skype06\"; }\n"
    "  );\n"
    "  regions = (\n"
    "    { name = \"eu\"; tz_h = 1.0; providers = 60; persona_share = [0.4, 0.3, 0.3];\n"
    "      gpu_mix = \"rtx4090:0.5, rtx3090:0.3, a100:0.2\"; jobs_per_h = 30.0; }\n"
    "  );\n"
    "};\n";

typedef struct toy_run {
  double paid_fixed_slot;   /* mean paid per GPU-hour of the jobs of the fixed pool's place, USD */
  double paid_bidding;      /* the same in the bidding pool */
  long jobs_fixed_slot;     /* jobs that ran there */
  long jobs_bidding;        /* jobs that ran in the bidding pool */
  char fixed_slot_name[16]; /* the pool name its records carry */
  int check;                /* the model's end-of-run check (0: passed) */
  double conserved;         /* money_conserved */
} toy_run;

/* Builds and runs the toy market with bidding.rule = rule for 3 days; what its jobs paid. */
static void toy_market(const char *rule, toy_run *out) {
  memset(out, 0, sizeof *out);
  char text[2048];
  snprintf(text, sizeof text, toy_text, rule);
  sim_diag d;
  sim_diag_init(&d, NULL);
  sim_scenario *s = sim_scenario_load_string(text, "toy.cfg", &d);
  CU_ASSERT_PTR_NOT_NULL_FATAL(s);
  mkt_config cfg;
  memset(&cfg, 0, sizeof cfg);
  int rc = sim_param_parse(s, "market", mkt_params, &cfg, NULL, &d);
  if (!rc) rc = mkt_class.validate(&cfg, s, &d);
  char base[1024];
  const char *src = getenv("SPOTLAB_SOURCE_DIR");
  snprintf(base, sizeof base, "%s/scenarios", src ? src : "..");
  sim_model model;
  if (!rc) rc = mkt_class.build(&cfg, 3 * 86400.0, base, s, &d, &model);
  if (rc) fprintf(stderr, "%s\n", d.first);
  CU_ASSERT_EQUAL_FATAL(rc, 0);
  model.end_time = 3 * 86400.0;
  sim_run_opts o = {11, 0, 0, NULL};
  sim_results r;
  CU_ASSERT_EQUAL_FATAL(sim_run(&model, &o, &r), 0);
  unsigned nm = 0;
  const sim_metric_def *md = mkt_class.model_metrics(&model, &nm);
  double *m = calloc(nm, sizeof *m);
  CU_ASSERT_PTR_NOT_NULL_FATAL(m);
  mkt_class.compute_metrics(&model, &r, m);
  for (unsigned i = 0; i < nm; i++)
    if (!strcmp(md[i].name, "money_conserved")) out->conserved = m[i];
  char msg[512] = "";
  out->check = mkt_class.check(&model, &r, msg, sizeof msg);
  if (out->check) fprintf(stderr, "%s: %s\n", rule, msg);
  const mkt_job_rec *jr = (const mkt_job_rec *)r.tables[MKT_T_JOBS];
  double sf = 0, sb = 0;
  snprintf(out->fixed_slot_name, sizeof out->fixed_slot_name, "%s", mkt__pools[MKT_POOL_FIXED]->name);
  for (size_t k = 0; k < r.nrecords[MKT_T_JOBS]; k++) {
    if (!(jr[k].gpu_h > 0)) continue;
    if (!strncmp(jr[k].pool, out->fixed_slot_name, sizeof jr[k].pool)) {
      out->jobs_fixed_slot++;
      sf += jr[k].paid_usd_h;
    } else if (!strncmp(jr[k].pool, "bidding", sizeof jr[k].pool)) {
      out->jobs_bidding++;
      sb += jr[k].paid_usd_h;
      /* toy_ask and pay_as_bid both keep every winner at or below its bid */
      CU_ASSERT(jr[k].cost_musd <=
                mkt_cost(jr[k].bid_musd_h, (int64_t)(jr[k].gpu_h * 3.6e6)) + 1 + (int64_t)jr[k].gpu_h);
    }
  }
  out->paid_fixed_slot = out->jobs_fixed_slot ? sf / (double)out->jobs_fixed_slot : 0;
  out->paid_bidding = out->jobs_bidding ? sb / (double)out->jobs_bidding : 0;
  free(m);
  sim_results_free(&r);
  mkt_class.destroy(&model);
  sim_param_free(mkt_params, &cfg);
  sim_scenario_free(s);
}

/* The registration API refuses what it cannot run and names already taken. */
static void test_register_refuses(void) {
  /* the built-in pools' names, as the scenario keys and the series say them, are their descriptors' */
  for (unsigned i = 0; i < MKT_NPOOLS; i++) CU_ASSERT_STRING_EQUAL(mkt__pools[i]->name, mkt_pool_names[i]);
  CU_ASSERT_PTR_NULL(mkt_pool_names[MKT_NPOOLS]);
  mkt_rule_ops no_clear = toy_ask;
  no_clear.clear = NULL;
  CU_ASSERT_EQUAL(mkt_rule_register(&no_clear), -1);
  mkt_rule_ops taken = toy_ask;
  taken.name = "gigaspot";
  CU_ASSERT_EQUAL(mkt_rule_register(&taken), -1);
  CU_ASSERT_EQUAL(mkt_rule_register(NULL), -1);
  mkt__pool_ops no_price = toy_half;
  no_price.gpu_price = NULL;
  CU_ASSERT_PTR_NULL(mkt__pool_register(MKT_POOL_FIXED, &no_price));
  CU_ASSERT_PTR_NULL(mkt__pool_register(MKT_NPOOLS, &toy_half));
  CU_ASSERT_PTR_EQUAL(mkt__pools[MKT_POOL_FIXED], &mkt__pool_fixed); /* nothing changed */
}

/* The toy rule, registered here, is a scenario's bidding.rule: the market clears with it (its clear
 * and late_price are called) and every bidding-pool winner pays its host's ask, which is below what
 * winners pay as bid on the same market. The books balance and the end-of-run checks pass. */
static void test_toy_rule(void) {
  toy_run pab, toy;
  toy_market("pay_as_bid", &pab);
  CU_ASSERT_EQUAL(toy_ask_clears + toy_ask_late, 0); /* not registered yet: never called */
  int k = mkt_rule_register(&toy_ask);
  CU_ASSERT_FATAL(k > MKT_RULE_KNAPSACK);
  CU_ASSERT_PTR_EQUAL(mkt_rule_find("toy_ask"), &toy_ask);
  CU_ASSERT_STRING_EQUAL(mkt_rule_names[k], "toy_ask");
  toy_market("toy_ask", &toy);
  CU_ASSERT(toy_ask_clears > 0);
  CU_ASSERT(toy_ask_late > 0);
  CU_ASSERT_EQUAL(toy.check, 0);
  CU_ASSERT_EQUAL(toy.conserved, 1.0);
  CU_ASSERT_EQUAL(pab.check, 0);
  CU_ASSERT(toy.jobs_bidding > 0 && pab.jobs_bidding > 0);
  CU_ASSERT(toy.paid_bidding < pab.paid_bidding);
  fprintf(stderr, "bidding pool, mean paid per GPU-hour: pay_as_bid %.4f USD (%ld jobs), toy_ask %.4f USD (%ld jobs)\n",
          pab.paid_bidding, pab.jobs_bidding, toy.paid_bidding, toy.jobs_bidding);
}

/* The toy pool, registered in the fixed pool's place, runs its markets: its records carry its name,
 * its prices are the ones its jobs pay (half the fixed pool's on the same market), and the books
 * balance. Put back afterwards, the fixed pool is the fixed pool again. */
static void test_toy_pool(void) {
  toy_run fixed, toy;
  toy_market("gigaspot", &fixed);
  CU_ASSERT_STRING_EQUAL(fixed.fixed_slot_name, "fixed");
  const mkt__pool_ops *was = mkt__pool_register(MKT_POOL_FIXED, &toy_half);
  CU_ASSERT_PTR_EQUAL_FATAL(was, &mkt__pool_fixed);
  toy_market("gigaspot", &toy);
  CU_ASSERT_PTR_EQUAL(mkt__pool_register(MKT_POOL_FIXED, was), &toy_half);
  CU_ASSERT_STRING_EQUAL(toy.fixed_slot_name, "toy_half");
  CU_ASSERT(toy_half_prices > 0);
  CU_ASSERT_EQUAL(toy.check, 0);
  CU_ASSERT_EQUAL(toy.conserved, 1.0);
  CU_ASSERT(toy.jobs_fixed_slot > 0 && fixed.jobs_fixed_slot > 0);
  /* half the price per GPU-hour on the same GPU models: well under the fixed pool's mean */
  CU_ASSERT(toy.paid_fixed_slot < 0.75 * fixed.paid_fixed_slot);
  fprintf(stderr,
          "fixed pool's place, mean paid per GPU-hour: fixed %.4f USD (%ld jobs), toy_half %.4f USD (%ld jobs)\n",
          fixed.paid_fixed_slot, fixed.jobs_fixed_slot, toy.paid_fixed_slot, toy.jobs_fixed_slot);
}

static CU_TestInfo toy_tests[] = {{"registration refuses what it cannot run", test_register_refuses},
                                  {"a toy clearing rule registered by the test", test_toy_rule},
                                  {"a toy pool registered by the test", test_toy_pool},
                                  CU_TEST_INFO_NULL};
CU_SuiteInfo spotlab_suites[] = {{"market toys", NULL, NULL, NULL, NULL, toy_tests}, CU_SUITE_INFO_NULL};
