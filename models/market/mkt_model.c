/* mkt_model.c - the market model's scenario keys, cross-field checks, build (population, prices,
 * speeds, policies, data files), headline metrics and end-of-run checks (money conserved). The
 * LPs are in mkt_market.c and mkt_provider.c (see mkt_internal.h). */
#include "models/market/mkt_internal.h"
#include "models/market/mkt_names.h"
#include "sim/datapath.h"

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Every host index fits the market's 31-bit GPU records (mkt_cgpu): a pool holds at most a host per
 * provider of its region, and the bound of a region's providers keeps that below MKT__NOHOST. */
_Static_assert((uint64_t)MKT_MAX_REGION_PROVIDERS < MKT__NOHOST, "host indices fit 31 bits");
/* and every global provider index the 32-bit fields that hold one (mkt_host.prov, a DETECT's slot) */
_Static_assert((uint64_t)MKT_MAX_REGIONS *MKT_MAX_REGION_PROVIDERS < UINT32_MAX, "provider indices fit 32 bits");

const char *const mkt_pool_names[] = {"fixed", "bidding", "flexible", NULL};
static const char *const mkt__days[] = {"none", "daily", "weekdays", "weekends", NULL};
const char *const mkt_goal_names[] = {"threshold", "income", "stability", "utilization", NULL};

/* ---- engine events by kind (mkt_model.h) ---- */
static const struct {
  const char *name;
  int ev;
} mkt__kinds[MKT_NKINDS] = {
    [M_AVAIL] = {"avail", MKT_EV_NONE},       [M_UNAVAIL] = {"unavail", MKT_EV_NONE},
    [M_STAKE] = {"stake", MKT_EV_NONE},       [M_UNSTAKE] = {"unstake", MKT_EV_NONE},
    [M_DEPART] = {"depart", MKT_EV_NONE},     [M_PAY] = {"pay", MKT_EV_BILL},
    [M_SLASH] = {"slash", MKT_EV_NONE},       [M_TICK] = {"tick", MKT_EV_BILL},
    [M_ARRIVE] = {"arrive", MKT_EV_ARRIVAL},  [M_TRACE] = {"trace", MKT_EV_ARRIVAL},
    [M_FINISH] = {"finish", MKT_EV_END},      [M_CKPT] = {"ckpt", MKT_EV_NONE},
    [M_WAKE] = {"wake", MKT_EV_NONE},         [M_DETECT] = {"detect", MKT_EV_NONE},
    [M_MCLOSE] = {"mclose", MKT_EV_NONE},     [M_CHURN] = {"churn", MKT_EV_CHURN},
    [M_CAL] = {"cal", MKT_EV_OWNER},          [M_SELF] = {"self", MKT_EV_OWNER},
    [M_REVIEW] = {"review", MKT_EV_NONE},     [M_JOB] = {"job", MKT_EV_NONE},
    [M_BULLETIN] = {"bulletin", MKT_EV_NONE}, [M_QUOTE] = {"quote", MKT_EV_NONE},
    [M_QUOTED] = {"quoted", MKT_EV_NONE},
};
_Static_assert(M_QUOTED == MKT_NKINDS - 1, "MKT_NKINDS follows the message kinds");
unsigned mkt_msg_kind(const void *msg) {
  unsigned k = ((const mkt_msg *)msg)->kind;
  return k < MKT_NKINDS ? k : 0;
}
const char *mkt_msg_kind_name(unsigned kind) {
  return kind < MKT_NKINDS && mkt__kinds[kind].name ? mkt__kinds[kind].name : "?";
}
int mkt_msg_kind_event(unsigned kind) { return kind < MKT_NKINDS ? mkt__kinds[kind].ev : MKT_EV_NONE; }
uint64_t mkt_run_starts(const sim_model *m, const sim_results *r) {
  const mkt_ctx *c = m->ctx;
  uint64_t n = 0;
  for (unsigned w = 0; w < c->nworlds; w++)
    for (unsigned k = 0; k < MKT_NCLASSES; k++)
      n += (uint64_t)r->series[w * MKT_NSERIES + MKT_S_JOBS][k * MKT_NJCOLS + MKT_J_RUNS];
  return n;
}

/* ---- scenario keys ----------------------------------------------------------------------------- */
#define P(name, type, st, field, def, lo, hi, unit, help)                                                              \
  { name, type, offsetof(st, field), def, lo, hi, unit, help, NULL, NULL, 0, 0 }
#define PE(name, st, field, def, choices, help)                                                                        \
  { name, SIM_P_ENUM, offsetof(st, field), def, SIM_UNBOUNDED, NULL, help, choices, NULL, 0, 0 }
#define PA(name, st, field, cnt, def, lo, hi, unit, help)                                                              \
  { name, SIM_P_DARRAY, offsetof(st, field), def, lo, hi, unit, help, NULL, NULL, 0, offsetof(st, cnt) }

static const sim_param mkt__persona_params[] = {
    P("name", SIM_P_STRING, mkt_persona_cfg, name, NULL, 1.0, 0.0, NULL, "persona name (results group by it)"),
    PE("pool", mkt_persona_cfg, pool, "\"fixed\"", mkt_pool_names, "pool the persona joins first"),
    PE("alt_pool", mkt_persona_cfg, alt_pool, "\"flexible\"", mkt_pool_names,
       "pool it moves to (and back from) when income stays below target"),
    P("fit", SIM_P_STRING, mkt_persona_cfg, fit, "\"\"", 1.0, 0.0, NULL,
      "churn: trace name in market.churn_fits (e.g. \"skype06\"); overrides up_p1..down_p2"),
    PE("up_dist", mkt_persona_cfg, up_dist, "\"weibull\"", churn_kind_names, "distribution of up periods"),
    P("up_p1", SIM_P_DOUBLE, mkt_persona_cfg, up_p1, "0.64", -1e3, 1e6, "h or 1",
      "exp: mean h; weibull: shape; lognormal: mu of ln h; gamma: shape"),
    P("up_p2", SIM_P_DOUBLE, mkt_persona_cfg, up_p2, "10.86", 0, 1e6, "h or 1",
      "weibull: scale h; lognormal: sigma; gamma: scale h (default: Skype peers, FTA)"),
    PE("down_dist", mkt_persona_cfg, down_dist, "\"weibull\"", churn_kind_names, "distribution of down periods"),
    P("down_p1", SIM_P_DOUBLE, mkt_persona_cfg, down_p1, "0.63", -1e3, 1e6, "h or 1", "as up_p1"),
    P("down_p2", SIM_P_DOUBLE, mkt_persona_cfg, down_p2, "9.48", 0, 1e6, "h or 1", "as up_p2"),
    PE("busy_days", mkt_persona_cfg, busy_days, "\"none\"", mkt__days, "days of the owner's recurring offline period"),
    P("busy_start_h", SIM_P_DOUBLE, mkt_persona_cfg, busy_start_h, "18", 0, 24, "h", "local start of that period"),
    P("busy_len_h", SIM_P_DOUBLE, mkt_persona_cfg, busy_len_h, "0", 0, 24, "h", "its length"),
    P("self_per_day", SIM_P_DOUBLE, mkt_persona_cfg, self_per_day, "0", 0, 1000, "1/day",
      "owner self-use sessions per day (preempt rentals; ASSUMPTION of the persona)"),
    P("self_mean_h", SIM_P_DOUBLE, mkt_persona_cfg, self_mean_h, "2", 0, 1000, "h", "mean self-use session"),
    P("min_margin", SIM_P_DOUBLE, mkt_persona_cfg, min_margin, "0.2", 0, 100, "1",
      "bidding pool: ask = energy cost * (1 + min_margin)"),
    P("target_factor", SIM_P_DOUBLE, mkt_persona_cfg, target_factor, "0.3", 0, 100, "1",
      "income target per available GPU-hour, as a fraction of the GPU's reference price"),
    /* at most 255: the provider counts reviews in a row in a byte (mkt_prov.low, low_exit); up to
     * 2026-12-05 the keys took 1000 and a persona above 255 never switched or left */
    P("patience", SIM_P_INT, mkt_persona_cfg, patience, "0", 0, 255, "reviews",
      "reviews below target before switching pools (0 = never switch)"),
    PE("goal", mkt_persona_cfg, goal, "\"threshold\"", mkt_goal_names,
       "what pool switching judges: threshold (income below target_factor x reference price), income (the "
       "other pool quotes more per available hour), stability (income CV over reviews above target_cv), "
       "utilization (the other pool rents a larger share of available time)"),
    P("target_cv", SIM_P_DOUBLE, mkt_persona_cfg, target_cv, "0.5", 0, 100, "1",
      "goal stability: the CV of income per review it accepts"),
    P("own_value_usd_h", SIM_P_DOUBLE, mkt_persona_cfg, own_value_usd_h, "0.02", 0, 1e3, "USD/GPU/h",
      "reservation: the owner's own value of an available GPU-hour (responses.entry; ASSUMPTION)"),
    P("own_value_spread", SIM_P_DOUBLE, mkt_persona_cfg, own_value_spread, "0.5", 0, 1, "1",
      "each host's own value is own_value_usd_h x U(1 - spread, 1 + spread)"),
    P("wear_usd_h", SIM_P_DOUBLE, mkt_persona_cfg, wear_usd_h, "0.01", 0, 1e3, "USD/GPU/h",
      "reservation: wear per rented GPU-hour, on top of the host's energy (ASSUMPTION)"),
    P("exit_patience", SIM_P_INT, mkt_persona_cfg, exit_patience, "3", 1, 255, "reviews",
      "responses.entry: reviews in a row with negative surplus before the provider leaves the market"),
    /* issue 46: off, a host never rents out a GPU-hour below its own energy cost */
    P("below_energy_cost", SIM_P_BOOL, mkt_persona_cfg, below_energy_cost, "false", 1.0, 0.0, NULL,
      "offer GPUs in the fixed pool even where its posted price is below the host's energy cost "
      "(energy price x tariff x power_w); off: such a host stays out of the fixed pool (docs/market.md)"),
    {NULL}};

static const sim_param mkt__region_params[] = {
    P("name", SIM_P_STRING, mkt_region_cfg, name, NULL, 1.0, 0.0, NULL, "region name"),
    P("tz_h", SIM_P_DOUBLE, mkt_region_cfg, tz_h, "0", -12, 14, "h", "UTC offset of local time"),
    P("providers", SIM_P_INT, mkt_region_cfg, providers, NULL, 0, MKT_MAX_REGION_PROVIDERS, "providers",
      "number of providers"),
    PA("persona_share", mkt_region_cfg, persona_share, npersona_share, NULL, 1, MKT_MAX_PERSONAS, "1",
       "share of providers per persona, in market.personas order"),
    P("gpu_mix", SIM_P_STRING, mkt_region_cfg, gpu_mix, "\"rtx4090:1\"", 1.0, 0.0, NULL,
      "GPU models and shares, \"name:share, ...\" (names from market.gpus)"),
    PA("gpus_per_provider", mkt_region_cfg, gpus_per_provider, ngpp, "[1.0]", 1, 4, "1",
       "probabilities of 1, 2, 4, 8 GPUs per provider"),
    P("energy_usd_kwh", SIM_P_DOUBLE, mkt_region_cfg, energy_usd_kwh, "0.15", 0, 10, "USD/kWh",
      "mean energy price of the region's hosts"),
    P("energy_spread", SIM_P_DOUBLE, mkt_region_cfg, energy_spread, "0.2", 0, 0.99, "1",
      "each host pays energy_usd_kwh x U(1 - spread, 1 + spread) (tariffs differ within a region)"),
    P("net_mbps", SIM_P_DOUBLE, mkt_region_cfg, net_mbps, "500", 0.001, 1e6, "Mbit/s", "providers' link bandwidth"),
    P("latency_ms", SIM_P_DOUBLE, mkt_region_cfg, latency_ms, "30", 0, 1e4, "ms",
      "providers' link latency (reported; messages use market.latency)"),
    P("loss", SIM_P_DOUBLE, mkt_region_cfg, loss, "0.001", 0, 0.99, "1", "packet loss ratio (lowers the score)"),
    P("disk_mbs", SIM_P_DOUBLE, mkt_region_cfg, disk_mbs, "2000", 0.001, 1e6, "MB/s", "storage bandwidth"),
    P("jobs_per_h", SIM_P_DOUBLE, mkt_region_cfg, jobs_per_h, "10", 0, 1e9, "jobs/h", "mean synthetic arrivals"),
    P("peak_h", SIM_P_DOUBLE, mkt_region_cfg, peak_h, "14", 0, 24, "h", "local hour of the daily demand peak"),
    P("weekend_factor", SIM_P_DOUBLE, mkt_region_cfg, weekend_factor, "0.7", 0, 10, "1", "weekend demand multiplier"),
    {NULL}};

#define CLASS_PARAMS(tbl, d_share, d_amp, d_dur, d_cv, d_gmin, d_gmax, d_mem, d_val, d_sig, d_ck, d_pools, d_pat,                                                                     \
                     d_pw)                                                                                                                                                            \
  static const sim_param tbl[] = {                                                                                                                                                    \
      P("share", SIM_P_DOUBLE, mkt_class_cfg, share, d_share, 0, 1e6, "1", "relative share of arrivals"),                                                                             \
      P("diurnal_amp", SIM_P_DOUBLE, mkt_class_cfg, diurnal_amp, d_amp, 0, 1, "1", "daily amplitude of arrivals"),                                                                    \
      P("dur_mean_h", SIM_P_DOUBLE, mkt_class_cfg, dur_mean_h, d_dur, 1e-6, 1e5, "h", "mean run time"),                                                                               \
      P("dur_cv", SIM_P_DOUBLE, mkt_class_cfg, dur_cv, d_cv, 0, 100, "1", "run time CV (gamma; 1 = exponential)"),                                                                    \
      P("gpus_min", SIM_P_INT, mkt_class_cfg, gpus_min, d_gmin, 1, MKT_MAX_JOB_GPUS, "GPUs",                                                                                          \
        "fewest GPUs a job asks for"),                                                                                                                                                \
      P("gpus_max", SIM_P_INT, mkt_class_cfg, gpus_max, d_gmax, 1, MKT_MAX_JOB_GPUS, "GPUs",                                                                                          \
        "most GPUs (a job wider than a host spans hosts)"),                                                                                                                           \
      P("mem_min_gb", SIM_P_DOUBLE, mkt_class_cfg, mem_min_gb, d_mem, 0, 1e4, "GB", "minimum GPU memory"),                                                                            \
      P("value_usd_h", SIM_P_DOUBLE, mkt_class_cfg, value_usd_h, d_val, 0, 1e4, "USD/GPU/h",                                                                                          \
        "median valuation (budget; the bid in the bidding pool; ASSUMPTION)"),                                                                                                        \
      P("value_sigma", SIM_P_DOUBLE, mkt_class_cfg, value_sigma, d_sig, 0, 5, "1", "log-normal sigma of it"),                                                                         \
      P("checkpoint_h", SIM_P_DOUBLE, mkt_class_cfg, checkpoint_h, d_ck, 0, 1e4, "h",                                                                                                 \
        "checkpoint policy, fixed rule: time between checkpoints (0 = no checkpoints)"),                                                                                              \
      PA("pool_share", mkt_class_cfg, pool_share, npool_share, d_pools, 3, 3, "1",                                                                                                    \
         "shares of its jobs sent to [fixed, bidding, flexible]"),                                                                                                                    \
      P("patience_h", SIM_P_DOUBLE, mkt_class_cfg, patience_h, d_pat, 0, 1e5, "h",                                                                                                    \
        "a job not started after this leaves (0 = never)"),                                                                                                                           \
      P("power_w", SIM_P_DOUBLE, mkt_class_cfg, power_w, d_pw, 1, 2000, "W",                                                                                                          \
        "power limit per GPU in its bids (GigaSPOT: mandatory)"),                                                                                                                     \
      P("policy", SIM_P_STRING, mkt_class_cfg, policy, SCHED_DEFAULT_POLICY_TEXT, 1.0, 0.0, NULL,                                                                                     \
        "fault tolerance of its jobs: a policy, or parts joined by + (\"checkpoint+standby\"); checkpoint with "                                                                      \
        "checkpoint_h = 0 is none"),                                                                                                                                                  \
      PE("ckpt_rule", mkt_class_cfg, ckpt_rule, "\"fixed\"", sched_ckpt_rule_names,                                                                                                   \
         "checkpoint interval: fixed (checkpoint_h), young or daly (from the checkpoint cost and MTBF)"),                                                                             \
      P("standby_k", SIM_P_INT, mkt_class_cfg, standby_k, SCHED_DEFAULT_STANDBY_K_TEXT, 0, 8, "GPUs",                                                                                 \
        "standby policy: standbys per run (billed to the client)"),                                                                                                                   \
      P("replicas", SIM_P_INT, mkt_class_cfg, replicas, SCHED_DEFAULT_REPLICAS_TEXT, 1, SCHED_MAX_RUNS, "1",                                                                          \
        "replicate policy: copies per job"),                                                                                                                                          \
      P("max_restarts", SIM_P_INT, mkt_class_cfg, max_restarts, SCHED_DEFAULT_MAX_RESTARTS_TEXT, 0, 1e6, "1",                                                                         \
        "a job interrupted more often than this fails"),                                                                                                                              \
      P("deadline_slack", SIM_P_DOUBLE, mkt_class_cfg, deadline_slack, "0", 0, 1e4, "1",                                                                                              \
        "deadline = submit + slack x run time on reference GPUs (0 = none)"),                                                                                                         \
      P("step_s", SIM_P_DOUBLE, mkt_class_cfg, step_s, "0", 0, 1e5, "s",                                                                                                              \
        "synchronous step on reference GPUs (multi-GPU jobs all-reduce every step; 0 = none)"),                                                                                       \
      P("grad_mb", SIM_P_DOUBLE, mkt_class_cfg, grad_mb, "0", 0, 1e7, "MB", "all-reduced per step"),                                                                                  \
      P("input_mb", SIM_P_DOUBLE, mkt_class_cfg, input_mb, "0", 0, 1e7, "MB", "staged to every member"),                                                                              \
      P("ckpt_mb", SIM_P_DOUBLE, mkt_class_cfg, ckpt_mb, "0", 0, 1e7, "MB",                                                                                                           \
        "written by a checkpoint, read back by a replacement"), /* ASSUMPTION: Jiang, Lee & Zomaya, "Price elasticity of the enterprise computing resource     \
       * market", find public-cloud demand "modestly elastic" (above 1), with no GPU figure: 1.2 */                      \
      P("elasticity", SIM_P_DOUBLE, mkt_class_cfg, elasticity, "1.2", 0, 20, "1",                                                                                                     \
        "responses.demand, ASSUMPTION: arrivals ~ (seen / price_ref)^-elasticity"), /* near the price default.cfg's clients saw, all reactions on, at amortised prices (0.26-0.36), \
       * 0.38-0.51 USD/h at market prices (docs/market.md): spotlab's anchor, not data */ \
      P("price_ref_usd_h", SIM_P_DOUBLE, mkt_class_cfg, price_ref_usd_h, "0.35", 1e-6, 1e4, "USD/GPU/h",                                                                              \
        "responses.demand: price per reference GPU-hour at which arrivals are jobs_per_h x share (ASSUMPTION)"),                                                                      \
      P("choice_cost", SIM_P_DOUBLE, mkt_class_cfg, choice_cost, "3", 0, 1e3, "1",                                                                                                    \
        "responses.pool_choice: logit weight of price / value (ASSUMPTION: not estimated)"),                                                                                          \
      P("choice_wait", SIM_P_DOUBLE, mkt_class_cfg, choice_wait, "1", 0, 1e3, "1",                                                                                                    \
        "responses.pool_choice: logit weight of expected wait / run time (ASSUMPTION)"),                                                                                              \
      P("choice_risk", SIM_P_DOUBLE, mkt_class_cfg, choice_risk, "0.5", 0, 1e3, "1",                                                                                                  \
        "responses.pool_choice: logit weight of expected interruptions per job (ASSUMPTION)"),                                                                                        \
      PA("strategies", mkt_class_cfg, strategies, nstrategies, "[1.0, 0.0, 0.0]", 3, 3, "1",                                                                                          \
         "bidding pool: shares of its clients bidding [truthful, shade, adaptive] (ASSUMPTION)"),                                                                                     \
      P("shade_factor", SIM_P_DOUBLE, mkt_class_cfg, shade_factor, "0.8", 0, 1, "1",                                                                                                  \
        "shade under a rule that does not charge the bid: bid = shade_factor x value (ASSUMPTION)"),                                                                                  \
      P("adapt_rate", SIM_P_DOUBLE, mkt_class_cfg, adapt_rate, "0.3", 1e-6, 1, "1",                                                                                                   \
        "adaptive bidders: Widrow-Hoff learning rate"),                                                                                                                               \
      P("adapt_step", SIM_P_DOUBLE, mkt_class_cfg, adapt_step, "0.05", 0, 1, "1",                                                                                                     \
        "adaptive bidders: margin step after a win (twice it back after a loss)"),                                                                                                    \
      P("adapt_max", SIM_P_DOUBLE, mkt_class_cfg, adapt_max, "0.6", 0, 0.99, "1",                                                                                                     \
        "adaptive bidders: largest margin (bid = value x (1 - margin))"),                                                                                                             \
      {NULL}};
/* Defaults: training long and multi-GPU with hourly checkpoints; inference short replica-hours
 * with a strong daily cycle; batch interruptible without checkpoints. spotlab's choices. */
CLASS_PARAMS(mkt__train_params, "0.2", "0.1", "12", "1.5", "1", "4", "16", "0.5", "0.5", "1", "[0.6, 0.2, 0.2]", "0",
             "300")
CLASS_PARAMS(mkt__infer_params, "0.5", "0.6", "1", "1", "1", "1", "8", "0.4", "0.5", "0.25", "[0.2, 0.2, 0.6]", "2",
             "250")
CLASS_PARAMS(mkt__batch_params, "0.3", "0.2", "3", "1", "1", "2", "8", "0.2", "0.5", "0", "[0.1, 0.8, 0.1]", "0", "200")

static const sim_param mkt__fixed_params[] = {
    P("fee", SIM_P_DOUBLE, mkt_fixed_cfg, fee, "0.10", 0, 1, "1", "platform fee (Clore on-demand: 10%)"),
    P("price_factor", SIM_P_DOUBLE, mkt_fixed_cfg, price_factor, "1.0", 0, 1e3, "1",
      "posted price per GPU-hour = factor * reference price (data/gpus.csv)"),
    P("penalty_h", SIM_P_DOUBLE, mkt_fixed_cfg, penalty_h, "1", 0, 1e3, "h",
      "uptime commitment: hours of the rental refunded when the host interrupts it"),
    {NULL}};
static const sim_param mkt__bidding_params[] = {
    P("fee", SIM_P_DOUBLE, mkt_bidding_cfg, fee, "0.025", 0, 1, "1", "platform fee (Clore spot: 2.5%)"),
    PE("rule", mkt_bidding_cfg, rule, "\"gigaspot\"", mkt_rule_names, "clearing rule (docs/auction.md)"),
    P("min_bid_usd_h", SIM_P_DOUBLE, mkt_bidding_cfg, min_bid_usd_h, "0", 0, 1e4, "USD/GPU/h", "minimum bid"),
    {NULL}};
static const sim_param mkt__flex_params[] = {
    P("fee", SIM_P_DOUBLE, mkt_flex_cfg, fee, "0.05", 0, 1, "1", "platform fee on pay-per-task revenue"),
    P("price_per_score_h", SIM_P_DOUBLE, mkt_flex_cfg, price_per_score_h, "0.004", 0, 1e3, "USD/(score*h)",
      "pay-per-task: cost = score * duration * this (NGPU)"),
    P("stake_usd", SIM_P_DOUBLE, mkt_flex_cfg, stake_usd, "20", 0, 1e6, "USD/GPU", "stake per GPU to join"),
    P("rate0_usd_h", SIM_P_DOUBLE, mkt_flex_cfg, rate0_usd_h, "0.2", 0, 1e3, "USD/h",
      "initial staking rate per available hour of a score-100 GPU"),
    P("rate_min_usd_h", SIM_P_DOUBLE, mkt_flex_cfg, rate_min_usd_h, "0.001", 0, 1e3, "USD/h", "rate floor"),
    P("rate_max_usd_h", SIM_P_DOUBLE, mkt_flex_cfg, rate_max_usd_h, "5", 0, 1e3, "USD/h", "rate ceiling"),
    P("reserve_h", SIM_P_DOUBLE, mkt_flex_cfg, reserve_h, "48", 0, 1e5, "h", "reserve target, hours of payouts"),
    P("adjust", SIM_P_DOUBLE, mkt_flex_cfg, adjust, "0.02", 0, 1, "1", "rate change per billing interval"),
    P("seed_usd", SIM_P_DOUBLE, mkt_flex_cfg, seed_usd, "1000", 0, 1e12, "USD",
      "platform's initial treasury funding per region"),
    {NULL}};

static const sim_param mkt__resp_params[] = {
    P("demand", SIM_P_BOOL, mkt_resp_cfg, demand, "false", 1.0, 0.0, NULL,
      "arrival rates follow the price clients see (each class's elasticity and price_ref_usd_h)"),
    P("pool_choice", SIM_P_BOOL, mkt_resp_cfg, pool_choice, "false", 1.0, 0.0, NULL,
      "clients choose fixed, bidding or flexible by multinomial logit on price, wait and interruptions "
      "(pool_share: the constants), and balk when no pool is affordable"),
    P("entry", SIM_P_BOOL, mkt_resp_cfg, entry, "false", 1.0, 0.0, NULL,
      "providers join when the pool's quote beats their reservation income and leave after exit_patience "
      "reviews of negative surplus"),
    P("reliability", SIM_P_BOOL, mkt_resp_cfg, reliability, "false", 1.0, 0.0, NULL,
      "what an unannounced departure costs a provider (stake slashed, uptime penalty, reputation) makes it "
      "announce its departures"),
    P("memory_jobs", SIM_P_DOUBLE, mkt_resp_cfg, memory_jobs, "20", 1, 1e6, "jobs",
      "clients' estimates of price, wait and interruptions average over about this many jobs"),
    P("entry_potential", SIM_P_DOUBLE, mkt_resp_cfg, entry_potential, "0.2", 0, 1, "1",
      "responses.entry: share of the providers that start outside the market (ASSUMPTION)"),
    P("announce_max", SIM_P_DOUBLE, mkt_resp_cfg, announce_max, "0.9", 0, 1, "1",
      "responses.reliability: the largest share of departures announced (ASSUMPTION)"),
    P("announce_usd", SIM_P_DOUBLE, mkt_resp_cfg, announce_usd, "2", 1e-6, 1e6, "USD",
      "responses.reliability: what is at stake for 63% of announce_max (ASSUMPTION)"),
    P("reputation_usd", SIM_P_DOUBLE, mkt_resp_cfg, reputation_usd, "0.5", 0, 1e6, "USD",
      "responses.reliability: reputation lost per unannounced departure, when rep_exponent > 0 (ASSUMPTION)"),
    {NULL}};

static const char *const mkt__net_names[] = {"tcp", "arq", "harq", NULL};
static const sim_param mkt__nodes_params[] = {
    P("count", SIM_P_INT, mkt_nodes_cfg, count, "0", 0, 65535, "licences",
      "GP Node licences per region (0 = none); each provider is managed by one"),
    P("node_fee", SIM_P_DOUBLE, mkt_nodes_cfg, node_fee, "0.05", 0, 1, "1",
      "share of every rental to the node that manages the host"),
    P("delegated_share", SIM_P_DOUBLE, mkt_nodes_cfg, delegated_share, "0.5", 0, 1, "1",
      "share of licences whose holders delegate the node to an operator"),
    P("delegation_fee", SIM_P_DOUBLE, mkt_nodes_cfg, delegation_fee, "0.2", 0, 1, "1",
      "share of a delegated node's fees paid to its operator"),
    P("queues", SIM_P_BOOL, mkt_nodes_cfg, queues, "true", 1.0, 0.0, NULL,
      "each node keeps its own selection and replacement queues: a job is routed to the node with the "
      "most idle GPUs that could run it and takes members, replacements and standbys from that node's hosts "
      "only (false = every node's hosts in one queue)"),
    {NULL}};

const sim_param mkt_params[] = {
    P("gpus", SIM_P_STRING, mkt_config, gpus_file, "\"gpus.csv\"", 1.0, 0.0, NULL,
      "GPU table: a data file, found in the scenario's folder, then SPOTLAB_DATA, then the installed data "
      "(README.md, \"Data files\")"),
    P("reference_gpu", SIM_P_STRING, mkt_config, reference_gpu, "\"rtx4090\"", 1.0, 0.0, NULL,
      "the GPU of speed 1: job run times are on it, others run at their FP16 throughput relative to it"),
    P("calibration", SIM_P_STRING, mkt_config, calibration, "\"\"", 1.0, 0.0, NULL,
      "kernels or lab calibration CSVs, comma-separated: cluster split efficiencies, chunk overhead, the "
      "measured throughput of the catalog GPU each was measured on, a lab's contention f(k) for hosts of "
      "several GPUs; \"\" = ideal clusters, spec speeds, no contention"),
    P("compare_policies", SIM_P_STRING, mkt_config, compare_policies, "\"\"", 1.0, 0.0, NULL,
      "\"none,checkpoint,standby\": one copy of the market per policy (all classes), on common random "
      "numbers; metrics per policy and paired differences from the first"),
    {"heartbeat_timeout", SIM_P_DURATION, offsetof(mkt_config, heartbeat_s), "\"90s\"", 0, 1e6, "s",
     "an unannounced departure (churn) is detected this long after it", NULL, NULL, 0, 0},
    P("slash_usd", SIM_P_DOUBLE, mkt_config, slash_usd, "2", 0, 1e6, "USD",
      "stake slashed per unannounced departure while employed (flexible pool)"),
    P("rep_exponent", SIM_P_DOUBLE, mkt_config, rep_exponent, "2", 0, 100, "1",
      "selection weight ~ reputation^x x speed / price (0 = reputation ignored)"),
    P("min_reputation", SIM_P_DOUBLE, mkt_config, min_reputation, "0", 0, 1, "1",
      "hosts below this Beta reputation are not selected"),
    PE("net", mkt_config, net, "\"harq\"", mkt__net_names,
       "transfer model: tcp (PFTK), arq, harq (chase combining, as NGPU does)"),
    {"nodes", SIM_P_GROUP, offsetof(mkt_config, nodes), NULL, SIM_UNBOUNDED, NULL, "GP Nodes", NULL, mkt__nodes_params,
     0, 0},
    {"responses", SIM_P_GROUP, offsetof(mkt_config, responses), NULL, SIM_UNBOUNDED, NULL,
     "reactions of clients and providers to prices, income and rules (all off by default)", NULL, mkt__resp_params, 0,
     0},
    P("churn_fits", SIM_P_STRING, mkt_config, churn_fits, "\"churn_fta_fits.csv\"", 1.0, 0.0, NULL,
      "Failure Trace Archive fits, used by personas' `fit` (a data file, found as market.gpus is)"),
    P("score_tflops", SIM_P_STRING, mkt_config, score_tflops, "\"\"", 1.0, 0.0, NULL,
      "measured AI throughput per GPU model for the score, \"rtx4090:150, a100:280\" (TFLOPS); "
      "others use gpus.csv's fp16_tflops"),
    {"billing", SIM_P_DURATION, offsetof(mkt_config, billing_s), "\"1h\"", 1, 1e7, "s",
     "billing interval: bids re-cleared, treasury rate adjusted", NULL, NULL, 0, 0},
    {"latency", SIM_P_DURATION, offsetof(mkt_config, latency_s), "1", 1e-6, 3600, "s",
     "message delay between providers and markets (the engine's lookahead)", NULL, NULL, 0, 0},
    {"review", SIM_P_DURATION, offsetof(mkt_config, review_s), "\"1d\"", 60, 1e8, "s",
     "providers review their income (pool switching, staking claims)", NULL, NULL, 0, 0},
    P("churn", SIM_P_BOOL, mkt_config, churn, "true", 1.0, 0.0, NULL, "providers go up and down"),
    P("calendars", SIM_P_BOOL, mkt_config, calendars, "true", 1.0, 0.0, NULL, "personas' recurring offline periods"),
    P("self_use", SIM_P_BOOL, mkt_config, self_use, "true", 1.0, 0.0, NULL, "owners' own use preempts rentals"),
    P("checkpoint_events", SIM_P_BOOL, mkt_config, checkpoint_events, "false", 1.0, 0.0, NULL,
      "checkpoints as engine events (a core timer to start each, a message to complete it), as before "
      "2026-12-01; false: the core's plan (interval, cost) is played out when a run's progress is needed "
      "(docs/market.md, \"Checkpoints\")"),
    P("population_seed", SIM_P_INT, mkt_config, population_seed, "1", 0, 9e18, "1",
      "seed of the provider population (GPUs, personas), the same in every replication"),
    P("sample_providers", SIM_P_INT, mkt_config, sample_providers, "20", 0, 1e6, "providers",
      "providers whose state intervals go to the `availability` table"),
    P("record_jobs", SIM_P_BOOL, mkt_config, record_jobs, "true", 1.0, 0.0, NULL, "write the `jobs` table"),
    P("record_providers", SIM_P_BOOL, mkt_config, record_providers, "true", 1.0, 0.0, NULL,
      "write the `providers` table"),
    P("daily_income_providers", SIM_P_INT, mkt_config, daily_income_providers, "10000", 0, 1e9, "providers",
      "at most this many providers get one row per whole day in the `daily_income` table (every k-th "
      "provider, k = ceil(providers / N), when there are more; 64 B per row; 0 = no table rows)"),
    P("trace_pods", SIM_P_STRING, mkt_config, trace_pods, "\"\"", 1.0, 0.0, NULL,
      "replay Alibaba GPU pods (cluster-trace-gpu-v2023 CSV), \"\" = none"),
    P("trace_genai", SIM_P_STRING, mkt_config, trace_genai, "\"\"", 1.0, 0.0, NULL,
      "replay Alibaba GenAI inference requests (v2026 CSV), \"\" = none"),
    P("trace_speedup", SIM_P_DOUBLE, mkt_config, trace_speedup, "1", 1e-3, 1e6, "1",
      "trace time compression (submit and run times divided by it)"),
    {"fixed", SIM_P_GROUP, offsetof(mkt_config, fixed), NULL, SIM_UNBOUNDED, NULL, "fixed pool", NULL,
     mkt__fixed_params, 0, 0},
    {"bidding", SIM_P_GROUP, offsetof(mkt_config, bidding), NULL, SIM_UNBOUNDED, NULL, "bidding pool", NULL,
     mkt__bidding_params, 0, 0},
    {"flexible", SIM_P_GROUP, offsetof(mkt_config, flexible), NULL, SIM_UNBOUNDED, NULL, "flexible (staking) pool",
     NULL, mkt__flex_params, 0, 0},
    {"training", SIM_P_GROUP, offsetof(mkt_config, cls[MKT_CLS_TRAINING]), NULL, SIM_UNBOUNDED, NULL, "training jobs",
     NULL, mkt__train_params, 0, 0},
    {"inference", SIM_P_GROUP, offsetof(mkt_config, cls[MKT_CLS_INFERENCE]), NULL, SIM_UNBOUNDED, NULL,
     "inference jobs (replica-hours following the daily demand)", NULL, mkt__infer_params, 0, 0},
    {"batch", SIM_P_GROUP, offsetof(mkt_config, cls[MKT_CLS_BATCH]), NULL, SIM_UNBOUNDED, NULL,
     "batch jobs (interruptible)", NULL, mkt__batch_params, 0, 0},
    {"regions", SIM_P_LIST, offsetof(mkt_config, regions), NULL, 1, MKT_MAX_REGIONS, NULL, "regions", NULL,
     mkt__region_params, sizeof(mkt_region_cfg), offsetof(mkt_config, nregions)},
    {"personas", SIM_P_LIST, offsetof(mkt_config, personas), NULL, 1, MKT_MAX_PERSONAS, NULL,
     "provider personas (jade, katie, henry or your own)", NULL, mkt__persona_params, sizeof(mkt_persona_cfg),
     offsetof(mkt_config, npersonas)},
    {NULL}};

/* ---- checks ------------------------------------------------------------------------------------ */

/* Parses "name:share, name:share". Returns count, or -1 with *bad set to the offending token. */
static int mkt__parse_mix(const char *s, char names[][16], double *shares, int max, char *bad, size_t badlen) {
  int n = 0;
  const char *p = s;
  while (*p) {
    while (*p == ' ' || *p == ',') p++;
    if (!*p) break;
    const char *colon = strchr(p, ':');
    const char *comma = strchr(p, ',');
    if (!comma) comma = p + strlen(p);
    if (!colon || colon > comma || colon - p == 0 || colon - p >= 16 || n >= max) {
      snprintf(bad, badlen, "%.*s", (int)(comma - p), p);
      return -1;
    }
    memcpy(names[n], p, (size_t)(colon - p));
    names[n][colon - p] = 0;
    char *end;
    shares[n] = strtod(colon + 1, &end);
    while (end < comma && *end == ' ') end++;
    if (end != comma || !(shares[n] >= 0)) {
      snprintf(bad, badlen, "%.*s", (int)(comma - p), p);
      return -1;
    }
    n++;
    p = comma;
  }
  return n;
}

/* Parses "none, standby" into policy indices. Returns the count, or -1 with the bad token. */
static int mkt__parse_policies(const char *text, int *out, char *bad, size_t badlen) {
  int n = 0;
  const char *p = text;
  while (*p) {
    while (*p == ' ' || *p == ',') p++;
    if (!*p) break;
    const char *e = p;
    while (*e && *e != ',' && *e != ' ') e++;
    char tok[96];
    snprintf(tok, sizeof tok, "%.*s", (int)(e - p), p);
    int k = sched_policy_parse(tok);
    int dup = 0;
    for (int i = 0; i < n; i++) dup |= out[i] == k;
    if (k < 0 || dup || n >= MKT_MAX_WORLDS) {
      snprintf(bad, badlen, "%.80s%s", tok, k < 0 ? "" : dup ? " (listed twice)" : " (too many)");
      return -1;
    }
    out[n++] = k;
    p = e;
  }
  return n;
}

/* market.compare_policies: 1 after reporting what is wrong, else 0. */
static int mkt__validate_policies(const mkt_config *c, const sim_scenario *s, sim_diag *d) {
  int bad = 0;
  int pol[MKT_MAX_WORLDS];
  char tok[96], names[512] = "";
  for (int i = 0; sched_policy_names[i]; i++)
    snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s", i ? ", " : "", sched_policy_names[i]);
  int np = mkt__parse_policies(c->compare_policies, pol, tok, sizeof tok);
  if (np < 0) {
    sim_param_error(s, "market.compare_policies", d,
                    "'%s' is not a policy: write at most %d of %s, or combinations of them such as "
                    "checkpoint+standby, separated by commas",
                    tok, MKT_MAX_WORLDS, names);
    bad = 1;
  }
  /* a combination holds no more run slots and standbys than a job has (sched_ft_slots) */
  for (int w = 0; w < np; w++)
    for (int k = 0; k < MKT_NCLASSES; k++) {
      const mkt_class_cfg *cc = &c->cls[k];
      sched_ft f = {
          .policy = (sched_policy)pol[w], .standby_k = (unsigned)cc->standby_k, .replicas = (unsigned)cc->replicas};
      if (sched_ft_slots(&f) > SCHED_MAX_RUNS) {
        sim_param_error(s, "market.compare_policies", d,
                        "%s with %s.replicas = %lld runs %u copies at once, more than %d", sched_policy_name(f.policy),
                        mkt_class_names[k], (long long)cc->replicas, sched_ft_slots(&f), SCHED_MAX_RUNS);
        bad = 1;
      }
    }
  return bad;
}

/* The personas: names, churn distributions: 1 after reporting what is wrong, else 0. */
static int mkt__validate_personas(const mkt_config *c, const sim_scenario *s, sim_diag *d) {
  int bad = 0;
  char path[128];
  for (size_t i = 0; i < c->npersonas; i++) {
    const mkt_persona_cfg *p = &c->personas[i];
    for (size_t k = 0; k < i; k++)
      if (!strcmp(p->name, c->personas[k].name)) {
        snprintf(path, sizeof path, "market.personas.[%zu].name", i);
        sim_param_error(s, path, d, "persona '%s' is defined twice", p->name);
        bad = 1;
      }
    if (strlen(p->name) == 0 || strlen(p->name) > 15) {
      snprintf(path, sizeof path, "market.personas.[%zu].name", i);
      sim_param_error(s, path, d, "a persona name needs 1 to 15 characters");
      bad = 1;
    }
    if (!p->fit[0]) {
      churn_dist up = {(churn_kind)p->up_dist, p->up_p1, p->up_p2},
                 dn = {(churn_kind)p->down_dist, p->down_p1, p->down_p2};
      if (churn_dist_check(&up)) {
        snprintf(path, sizeof path, "market.personas.[%zu].up_p1", i);
        sim_param_error(s, path, d, "invalid parameters (%g, %g) for a %s distribution", p->up_p1, p->up_p2,
                        churn_kind_names[p->up_dist]);
        bad = 1;
      }
      if (churn_dist_check(&dn)) {
        snprintf(path, sizeof path, "market.personas.[%zu].down_p1", i);
        sim_param_error(s, path, d, "invalid parameters (%g, %g) for a %s distribution", p->down_p1, p->down_p2,
                        churn_kind_names[p->down_dist]);
        bad = 1;
      }
    }
  }
  return bad;
}

/* The regions: names, shares, GPU mix: 1 after reporting what is wrong, else 0. */
static int mkt__validate_regions(const mkt_config *c, const sim_scenario *s, sim_diag *d) {
  int bad = 0;
  char path[128];
  for (size_t r = 0; r < c->nregions; r++) {
    const mkt_region_cfg *g = &c->regions[r];
    if (strlen(g->name) == 0 || strlen(g->name) > 15) {
      snprintf(path, sizeof path, "market.regions.[%zu].name", r);
      sim_param_error(s, path, d, "a region name needs 1 to 15 characters");
      bad = 1;
    }
    for (size_t k = 0; k < r; k++)
      if (!strcmp(g->name, c->regions[k].name)) {
        snprintf(path, sizeof path, "market.regions.[%zu].name", r);
        sim_param_error(s, path, d, "region '%s' is defined twice", g->name);
        bad = 1;
      }
    if (g->npersona_share != c->npersonas) {
      snprintf(path, sizeof path, "market.regions.[%zu].persona_share", r);
      sim_param_error(s, path, d, "has %zu shares but market.personas defines %zu personas", g->npersona_share,
                      c->npersonas);
      bad = 1;
    } else {
      double sum = 0;
      int neg = 0;
      for (size_t k = 0; k < g->npersona_share; k++) {
        sum += g->persona_share[k];
        neg |= g->persona_share[k] < 0;
      }
      if (neg || (g->providers > 0 && !(sum > 0))) {
        snprintf(path, sizeof path, "market.regions.[%zu].persona_share", r);
        sim_param_error(s, path, d, "shares must be >= 0 with a positive sum");
        bad = 1;
      }
    }
    double sum = 0;
    int neg = 0;
    for (size_t k = 0; k < g->ngpp; k++) {
      sum += g->gpus_per_provider[k];
      neg |= g->gpus_per_provider[k] < 0;
    }
    if (neg || !(sum > 0)) {
      snprintf(path, sizeof path, "market.regions.[%zu].gpus_per_provider", r);
      sim_param_error(s, path, d, "probabilities must be >= 0 with a positive sum");
      bad = 1;
    }
    char names[32][16], tok[64];
    double sh[32];
    int n = mkt__parse_mix(g->gpu_mix, names, sh, 32, tok, sizeof tok);
    if (n <= 0) {
      snprintf(path, sizeof path, "market.regions.[%zu].gpu_mix", r);
      if (n < 0)
        sim_param_error(s, path, d, "'%s' is not NAME:SHARE", tok);
      else
        sim_param_error(s, path, d, "is empty; write e.g. \"rtx4090:0.7, a100:0.3\"");
      bad = 1;
    }
  }
  return bad;
}

/* The job classes: GPUs, pool shares, strategies: 1 after reporting what is wrong, else 0. */
static int mkt__validate_classes(const mkt_config *c, const sim_scenario *s, sim_diag *d) {
  int bad = 0;
  char path[128];
  for (int k = 0; k < MKT_NCLASSES; k++) {
    const mkt_class_cfg *cc = &c->cls[k];
    /* its policy: a row of the policy table or a combination of rows (composed here, while the
     * scenario is read, as compare_policies' are) */
    int pol = sched_policy_parse(cc->policy);
    snprintf(path, sizeof path, "market.%s.policy", mkt_class_names[k]);
    if (pol < 0) {
      char names[512] = "";
      for (int i = 0; sched_policy_names[i]; i++)
        snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s", i ? ", " : "", sched_policy_names[i]);
      sim_param_error(s, path, d,
                      "'%s' is not a policy: write one of %s, or parts joined by + such as checkpoint+standby "
                      "(each part once; none combines with nothing)",
                      cc->policy, names);
      bad = 1;
    } else {
      sched_ft f = {
          .policy = (sched_policy)pol, .standby_k = (unsigned)cc->standby_k, .replicas = (unsigned)cc->replicas};
      if (sched_ft_slots(&f) > SCHED_MAX_RUNS) {
        sim_param_error(s, path, d, "%s with %s.replicas = %lld runs %u copies at once, more than %d",
                        sched_policy_name(f.policy), mkt_class_names[k], (long long)cc->replicas, sched_ft_slots(&f),
                        SCHED_MAX_RUNS);
        bad = 1;
      }
    }
    if (cc->gpus_min > cc->gpus_max) {
      snprintf(path, sizeof path, "market.%s.gpus_min", mkt_class_names[k]);
      sim_param_error(s, path, d, "gpus_min %lld > gpus_max %lld", (long long)cc->gpus_min, (long long)cc->gpus_max);
      bad = 1;
    }
    double sum = 0;
    int neg = 0;
    for (size_t i = 0; i < cc->npool_share; i++) {
      sum += cc->pool_share[i];
      neg |= cc->pool_share[i] < 0;
    }
    if (neg || (cc->share > 0 && !(sum > 0))) {
      snprintf(path, sizeof path, "market.%s.pool_share", mkt_class_names[k]);
      sim_param_error(s, path, d, "shares must be >= 0 with a positive sum");
      bad = 1;
    }
    sum = 0;
    neg = 0;
    for (size_t i = 0; i < cc->nstrategies; i++) {
      sum += cc->strategies[i];
      neg |= cc->strategies[i] < 0;
    }
    if (neg || !(sum > 0)) {
      snprintf(path, sizeof path, "market.%s.strategies", mkt_class_names[k]);
      sim_param_error(s, path, d, "shares of [truthful, shade, adaptive] must be >= 0 with a positive sum");
      bad = 1;
    }
  }
  return bad;
}

static int mkt__validate(const void *vcfg, const sim_scenario *s, sim_diag *d) {
  const mkt_config *c = vcfg;
  int bad = 0;
  char path[128];
  bad |= mkt__validate_policies(c, s, d);
  bad |= mkt__validate_personas(c, s, d);
  bad |= mkt__validate_regions(c, s, d);
  bad |= mkt__validate_classes(c, s, d);
  if (c->nodes.count > 0) {
    const double fees[MKT_NPOOLS] = {c->fixed.fee, c->bidding.fee, c->flexible.fee};
    for (int i = 0; i < MKT_NPOOLS; i++)
      if (fees[i] + c->nodes.node_fee > 1) {
        snprintf(path, sizeof path, "market.%s.fee", mkt_pool_names[i]);
        sim_param_error(s, path, d, "fee %g plus the GP Nodes' node_fee %g exceed the rental (more than 1)", fees[i],
                        c->nodes.node_fee);
        bad = 1;
      }
    /* each node keeps idle queues per GPU grade in every (region, pool) core, and routing a job
     * looks at every node */
    if (c->nodes.queues && c->nodes.count > MKT_MAX_NODE_QUEUES) {
      sim_param_error(s, "market.nodes.count", d,
                      "%lld nodes with their own queues (nodes.queues) is more than %d; set nodes.queues = false "
                      "for more",
                      (long long)c->nodes.count, MKT_MAX_NODE_QUEUES);
      bad = 1;
    }
  }
  if (c->flexible.rate_min_usd_h > c->flexible.rate_max_usd_h) {
    sim_param_error(s, "market.flexible.rate_min_usd_h", d, "rate_min_usd_h > rate_max_usd_h");
    bad = 1;
  }
  if (c->latency_s * 4 >= c->billing_s) {
    sim_param_error(s, "market.latency", d, "latency %g s must be under a quarter of the billing interval %g s",
                    c->latency_s, c->billing_s);
    bad = 1;
  }
  return bad ? SIM_ECONFIG : SIM_OK;
}

/* ---- build ------------------------------------------------------------------------------------- */

/* The data file `name` given by key `key`, found on the data search path (sim/datapath.h: the
 * scenario's folder, SPOTLAB_DATA, the installed data). 0 with a malloc'd path in *out; SIM_ECONFIG
 * after reporting a file found nowhere (with every place looked at) at the key's line; SIM_ENOMEM. */
static int mkt__find(const char *base, const char *name, const sim_scenario *s, const char *key, sim_diag *d,
                     char **out) {
  char err[2048];
  int rc = sim_data_find(base, name, out, err, sizeof err);
  if (rc == SIM_ENOTFOUND) {
    sim_param_error(s, key, d, "%s", err);
    return SIM_ECONFIG;
  }
  return rc;
}

static void mkt__destroy(sim_model *m) {
  mkt_ctx *c = (mkt_ctx *)m->ctx;
  if (!c) return;
  free(c->gpus);
  free(c->prov);
  free(c->posted);
  free(c->flex_price);
  free(c->gpu_score_milli);
  free(c->gpu_cls_fit);
  free(c->speed);
  free(c->grade);
  free(c->node_delegated);
  for (int k = 0; k < MKT_NCLASSES; k++) free(c->bne[k]);
  free(c->trace);
  free(c->region_cols);
  free(c->gpu_cols);
  free(c->persona_cols);
  for (unsigned i = 0; c->metric_names && i < c->nmetrics; i++) free(c->metric_names[i]);
  free(c->metric_names);
  free(c->metrics);
  if (c->series) {
    for (unsigned i = 0; i < c->nseries; i++) {
      free((void *)c->series[i].colnames);
      if (i < MKT_NSERIES) free((void *)c->series[i].colunits); /* the other worlds share world 0's */
      if (i >= MKT_NSERIES) free((void *)c->series[i].name);
    }
    free(c->series);
  }
  free(c);
  m->ctx = NULL;
}

/* Column names "<prefix>.<field>" for the per-persona/pool/class counters (owned strings packed
 * in one block after the pointer array). */
static const char **mkt__cols(const char *const *groups, unsigned ng, const char *const *fields, unsigned nf) {
  size_t bytes = (size_t)ng * nf * sizeof(char *) + (size_t)ng * nf * 48;
  char **v = malloc(bytes);
  if (!v) return NULL;
  char *txt = (char *)(v + (size_t)ng * nf);
  for (unsigned g = 0; g < ng; g++)
    for (unsigned f = 0; f < nf; f++) {
      char *slot = txt + ((size_t)g * nf + f) * 48;
      snprintf(slot, 48, "%s.%s", groups[g], fields[f]);
      v[(size_t)g * nf + f] = slot;
    }
  return (const char **)v;
}

/* Units of those columns: each group repeats its fields' units (static strings). */
static const char **mkt__col_units(unsigned ng, const char *const *units, unsigned nf) {
  size_t n = (size_t)ng * nf;
  const char **v = malloc((n ? n : 1) * sizeof *v);
  if (!v) return NULL;
  for (unsigned g = 0; g < ng; g++)
    for (unsigned f = 0; f < nf; f++) v[(size_t)g * nf + f] = units[f];
  return v;
}

static const sim_field mkt__prov_fields[] = {
    {"id", SIM_F_U64, offsetof(mkt_prov_rec, id), "1"},
    {"persona", SIM_F_STR16, offsetof(mkt_prov_rec, persona), ""},
    {"pool", SIM_F_STR16, offsetof(mkt_prov_rec, pool), ""},
    {"start_pool", SIM_F_STR16, offsetof(mkt_prov_rec, start_pool), ""},
    {"region", SIM_F_STR16, offsetof(mkt_prov_rec, region), ""},
    {"gpu_class", SIM_F_STR16, offsetof(mkt_prov_rec, gpu_class), ""},
    {"policy", SIM_F_STR32, offsetof(mkt_prov_rec, policy), ""},
    {"world", SIM_F_I32, offsetof(mkt_prov_rec, world), "1"},
    {"gpus", SIM_F_I32, offsetof(mkt_prov_rec, gpus), "GPUs"},
    {"switches", SIM_F_I32, offsetof(mkt_prov_rec, switches), "1"},
    {"interruptions", SIM_F_I32, offsetof(mkt_prov_rec, interruptions), "1"},
    {"days", SIM_F_I32, offsetof(mkt_prov_rec, days), "days"},
    {"income_usd", SIM_F_F64, offsetof(mkt_prov_rec, income_usd), "USD"},
    {"balance_usd", SIM_F_F64, offsetof(mkt_prov_rec, balance_usd), "USD"},
    {"available_h", SIM_F_F64, offsetof(mkt_prov_rec, available_h), "h"},
    {"rented_h", SIM_F_F64, offsetof(mkt_prov_rec, rented_h), "h"},
    {"self_use_h", SIM_F_F64, offsetof(mkt_prov_rec, self_use_h), "h"},
    {"down_h", SIM_F_F64, offsetof(mkt_prov_rec, down_h), "h"},
    {"out_h", SIM_F_F64, offsetof(mkt_prov_rec, out_h), "h"},
    {"daily_income_cv", SIM_F_F64, offsetof(mkt_prov_rec, daily_income_cv), "1"},
    {"income_musd", SIM_F_I64, offsetof(mkt_prov_rec, income_musd), "USD*1e-6"},
    {"balance_musd", SIM_F_I64, offsetof(mkt_prov_rec, balance_musd), "USD*1e-6"},
};
static const sim_field mkt__job_fields[] = {
    {"id", SIM_F_U64, offsetof(mkt_job_rec, id), "1"},
    {"class", SIM_F_STR16, offsetof(mkt_job_rec, cls), ""},
    {"region", SIM_F_STR16, offsetof(mkt_job_rec, region), ""},
    {"pool", SIM_F_STR16, offsetof(mkt_job_rec, pool), ""},
    {"outcome", SIM_F_STR16, offsetof(mkt_job_rec, outcome), ""},
    {"policy", SIM_F_STR32, offsetof(mkt_job_rec, policy), ""},
    {"world", SIM_F_I32, offsetof(mkt_job_rec, world), "1"},
    {"gpus", SIM_F_I32, offsetof(mkt_job_rec, gpus), "GPUs"},
    {"interruptions", SIM_F_I32, offsetof(mkt_job_rec, interruptions), "1"},
    {"replacements", SIM_F_I32, offsetof(mkt_job_rec, replacements), "1"},
    {"hosts", SIM_F_I32, offsetof(mkt_job_rec, hosts), "hosts"},
    {"node", SIM_F_I32, offsetof(mkt_job_rec, node), "1"},
    {"deadline_missed", SIM_F_I32, offsetof(mkt_job_rec, deadline_missed), "1"},
    {"submit_s", SIM_F_F64, offsetof(mkt_job_rec, submit_s), "s"},
    {"start_s", SIM_F_F64, offsetof(mkt_job_rec, start_s), "s"},
    {"end_s", SIM_F_F64, offsetof(mkt_job_rec, end_s), "s"},
    {"wait_s", SIM_F_F64, offsetof(mkt_job_rec, wait_s), "s"},
    {"cost_usd", SIM_F_F64, offsetof(mkt_job_rec, cost_usd), "USD"},
    {"value_usd_h", SIM_F_F64, offsetof(mkt_job_rec, value_usd_h), "USD/GPU/h"},
    {"bid_usd_h", SIM_F_F64, offsetof(mkt_job_rec, bid_usd_h), "USD/GPU/h"},
    {"paid_usd_h", SIM_F_F64, offsetof(mkt_job_rec, paid_usd_h), "USD/GPU/h"},
    {"gpu_h", SIM_F_F64, offsetof(mkt_job_rec, gpu_h), "GPU*h"},
    {"work_gpu_h", SIM_F_F64, offsetof(mkt_job_rec, work_gpu_h), "GPU*h"},
    {"standby_gpu_h", SIM_F_F64, offsetof(mkt_job_rec, standby_gpu_h), "GPU*h"},
    {"checkpoint_gpu_h", SIM_F_F64, offsetof(mkt_job_rec, checkpoint_gpu_h), "GPU*h"},
    {"lost_gpu_h", SIM_F_F64, offsetof(mkt_job_rec, lost_gpu_h), "GPU*h"},
    {"cost_musd", SIM_F_I64, offsetof(mkt_job_rec, cost_musd), "USD*1e-6"},
    {"value_musd_h", SIM_F_I64, offsetof(mkt_job_rec, value_musd_h), "USD*1e-6/GPU/h"},
    {"bid_musd_h", SIM_F_I64, offsetof(mkt_job_rec, bid_musd_h), "USD*1e-6/GPU/h"},
    {"comm_gpu_h", SIM_F_F64, offsetof(mkt_job_rec, comm_gpu_h), "GPU*h"},
};
static const sim_field mkt__host_fields[] = {
    {"provider", SIM_F_U64, offsetof(mkt_host_rec, provider), "1"},
    {"pool", SIM_F_STR16, offsetof(mkt_host_rec, pool), ""},
    {"policy", SIM_F_STR32, offsetof(mkt_host_rec, policy), ""},
    {"world", SIM_F_I32, offsetof(mkt_host_rec, world), "1"},
    {"node", SIM_F_I32, offsetof(mkt_host_rec, node), "1"},
    {"failures", SIM_F_I32, offsetof(mkt_host_rec, failures), "1"},
    {"reputation", SIM_F_F64, offsetof(mkt_host_rec, reputation), "1"},
    {"stake_usd", SIM_F_F64, offsetof(mkt_host_rec, stake_usd), "USD"},
    {"slashed_usd", SIM_F_F64, offsetof(mkt_host_rec, slashed_usd), "USD"},
    {"stake_musd", SIM_F_I64, offsetof(mkt_host_rec, stake_musd), "USD*1e-6"},
    {"slashed_musd", SIM_F_I64, offsetof(mkt_host_rec, slashed_musd), "USD*1e-6"},
};
static const sim_field mkt__avail_fields[] = {
    {"provider", SIM_F_U64, offsetof(mkt_avail_rec, provider), "1"},
    {"start_s", SIM_F_F64, offsetof(mkt_avail_rec, start_s), "s"},
    {"end_s", SIM_F_F64, offsetof(mkt_avail_rec, end_s), "s"},
    {"state", SIM_F_STR16, offsetof(mkt_avail_rec, state), ""},
};
static const sim_field mkt__day_fields[] = {
    {"provider", SIM_F_U64, offsetof(mkt_day_rec, provider), "1"},
    {"world", SIM_F_I32, offsetof(mkt_day_rec, world), "1"},
    {"day", SIM_F_I32, offsetof(mkt_day_rec, day), "d"},
    {"persona", SIM_F_STR16, offsetof(mkt_day_rec, persona), ""},
    {"pool", SIM_F_STR16, offsetof(mkt_day_rec, pool), ""},
    {"income_usd", SIM_F_F64, offsetof(mkt_day_rec, income_usd), "USD"},
    {"income_musd", SIM_F_I64, offsetof(mkt_day_rec, income_musd), "USD*1e-6"},
};
static const sim_table_def mkt__tables[MKT_NTABLES] = {
    {MKT_TABLE_PROVIDERS, sizeof(mkt_prov_rec), mkt__prov_fields, sizeof mkt__prov_fields / sizeof mkt__prov_fields[0],
     "one record per provider: persona, pool, GPUs, income and time per state"},
    {MKT_TABLE_JOBS, sizeof(mkt_job_rec), mkt__job_fields, sizeof mkt__job_fields / sizeof mkt__job_fields[0],
     "one record per job: class, pool, wait, interruptions, cost, outcome"},
    {MKT_TABLE_AVAILABILITY, sizeof(mkt_avail_rec), mkt__avail_fields, 4,
     "state intervals (down, owner, idle, rented) of the first sample_providers providers"},
    {MKT_TABLE_HOSTS, sizeof(mkt_host_rec), mkt__host_fields, sizeof mkt__host_fields / sizeof mkt__host_fields[0],
     "one record per (pool, provider that joined it): reputation, stake and slashing at the end"},
    {MKT_TABLE_DAILY_INCOME, sizeof(mkt_day_rec), mkt__day_fields, sizeof mkt__day_fields / sizeof mkt__day_fields[0],
     "income per whole day of every k-th provider (market.daily_income_providers): provider, day, persona, "
     "pool at the end of the day"},
};
_Static_assert(MKT_T_DAILY == 4 && MKT_NTABLES == 5, "one definition per table");

static const char *const mkt__acct_names[] = {"clients", "providers", "platform", "treasury",
                                              "stakes",  "transit",   "nodes",    "operators"};
_Static_assert(sizeof mkt__acct_names / sizeof *mkt__acct_names == MKT_NACCOUNTS, "one name per account");
static const char *const mkt__pcol_names[] = {"income_musd", "available_gpu_ms", "rented_gpu_ms", "providers", "gpus"};
static const char *const mkt__jcol_names[] = {"submitted",
                                              "started",
                                              "done",
                                              "wait_ms",
                                              "turnaround_ms",
                                              "interruptions",
                                              "cost_musd",
                                              "abandoned",
                                              "failed",
                                              "gpu_ms",
                                              "useful_gpu_ms",
                                              "lost_gpu_ms",
                                              "standby_gpu_ms",
                                              "checkpoint_gpu_ms",
                                              "deadline_missed",
                                              "done_cost_musd",
                                              "balked",
                                              "price_seen_sum_musd_h",
                                              "price_seen_n",
                                              "runs",
                                              "queued_at_end",
                                              "running_at_end",
                                              "unstarted_wait_ms",
                                              "rcompletion_ms",
                                              "comm_gpu_ms"};
_Static_assert(sizeof mkt__jcol_names / sizeof *mkt__jcol_names == MKT_NJCOLS, "one name per jobs column");
static const char *const mkt__pcol_units[] = {"USD*1e-6", "GPU*ms", "GPU*ms", "providers", "GPUs"};
_Static_assert(sizeof mkt__pcol_names / sizeof *mkt__pcol_names == MKT_NPCOLS &&
                   sizeof mkt__pcol_units / sizeof *mkt__pcol_units == MKT_NPCOLS,
               "one name and unit per column");
static const char *const mkt__jcol_units[] = {
    "jobs",   "jobs",   "jobs",   "ms",     "ms",     "1",    "USD*1e-6", "jobs", "jobs",
    "GPU*ms", "GPU*ms", "GPU*ms", "GPU*ms", "GPU*ms", "jobs", "USD*1e-6", "jobs", "USD*1e-6/GPU/h",
    "1",      "runs",   "jobs",   "jobs",   "ms",     "ms",   "GPU*ms"};
_Static_assert(sizeof mkt__jcol_units / sizeof *mkt__jcol_units == MKT_NJCOLS, "one unit per jobs column");
static const char *const mkt__fcol_names[] = {"treasury_musd", "rate_musd_h", "shortfall_musd"};
static const char *const mkt__fcol_units[] = {"USD*1e-6", "USD*1e-6/h", "USD*1e-6"};
_Static_assert(sizeof mkt__fcol_names / sizeof *mkt__fcol_names == MKT_NFCOLS &&
                   sizeof mkt__fcol_units / sizeof *mkt__fcol_units == MKT_NFCOLS,
               "one name and unit per column");
static const char *const mkt__mcol_names[] = {"seed_musd", "slashed_musd", "staking_paid_musd", "rental_paid_musd"};
_Static_assert(sizeof mkt__mcol_names / sizeof *mkt__mcol_names == MKT_M_N, "one name per column");
static const char *const mkt__rpcol_names[] = {"submitted", "done",   "value_musd", "cost_musd",  "provider_cost_musd",
                                               "entered",   "exited", "announced",  "unannounced"};
_Static_assert(sizeof mkt__rpcol_names / sizeof *mkt__rpcol_names == MKT_RP_N, "one name per column");
static const char *const mkt__rpcol_units[] = {"jobs",      "jobs",      "USD*1e-6",   "USD*1e-6",  "USD*1e-6",
                                               "providers", "providers", "departures", "departures"};
_Static_assert(sizeof mkt__rpcol_units / sizeof *mkt__rpcol_units == MKT_RP_N, "one unit per column");
static const char *const mkt__rscol_names[] = {"jobs", "done", "value_musd", "cost_musd"};
_Static_assert(sizeof mkt__rscol_names / sizeof *mkt__rscol_names == MKT_RS_N, "one name per column");
static const char *const mkt__rscol_units[] = {"jobs", "jobs", "USD*1e-6", "USD*1e-6"};
_Static_assert(sizeof mkt__rscol_units / sizeof *mkt__rscol_units == MKT_RS_N, "one unit per column");

/* The model's LP types: the market (mkt_market.c) and the provider, with or without reviews
 * (mkt_provider.c; mkt__type_of picks). */
const sim_lptype mkt__lptypes[MKT__NLPTYPES] = {
    [MKT__LP_MARKET] = {"market", sizeof(mkt_market), mkt__market_init, mkt__market_event, mkt__market_finalize,
                        mkt__market_prefetch, mkt__market_prefetch_early},
    [MKT__LP_PROV] = {"provider", MKT__PROV_STATE, mkt__prov_init, mkt__prov_event, mkt__prov_finalize,
                      mkt__prov_prefetch},
    [MKT__LP_PROV_RV] = {"provider that reviews", MKT__PROV_STATE + MKT__PROV_RV_STATE, mkt__prov_init, mkt__prov_event,
                         mkt__prov_finalize, mkt__prov_rv_prefetch},
};
const size_t mkt__msg_size = sizeof(mkt_msg);

/* ---- mkt__build in stages: each returns 0, or an error after reporting it; what a stage built
 * is in the context, which mkt__build frees (mkt__destroy) on any failure. */

/* The GPU table and the churn distributions per persona (market.gpus, market.churn_fits). */
static int mkt__build_inputs(mkt_ctx *c, const char *base_dir, const sim_scenario *s, sim_diag *d) {
  const mkt_config *cfg = c->cfg;
  char err[512];
  int rc = SIM_OK;
  /* GPU table */
  char *gp;
  if ((rc = mkt__find(base_dir, cfg->gpus_file, s, "market.gpus", d, &gp))) return rc;
  int e = mkt_gpus_load(gp, &c->gpus, &c->ngpus, err, sizeof err);
  free(gp);
  if (e) {
    sim_param_error(s, "market.gpus", d, "%s", err);
    return SIM_ECONFIG;
  }
  /* churn distributions per persona */
  for (unsigned i = 0; i < c->npers; i++) {
    const mkt_persona_cfg *p = &cfg->personas[i];
    c->up[i] = (churn_dist){(churn_kind)p->up_dist, p->up_p1, p->up_p2};
    c->down[i] = (churn_dist){(churn_kind)p->down_dist, p->down_p1, p->down_p2};
    if (p->fit[0]) {
      char *fp;
      if ((rc = mkt__find(base_dir, cfg->churn_fits, s, "market.churn_fits", d, &fp))) return rc;
      char path[96];
      snprintf(path, sizeof path, "market.personas.[%u].fit", i);
      int e1 = churn_fits_load(fp, p->fit, "up", c->up[i].kind, &c->up[i], err, sizeof err);
      if (e1) sim_param_error(s, path, d, "%s", err);
      int e2 = e1 ? e1 : churn_fits_load(fp, p->fit, "down", c->down[i].kind, &c->down[i], err, sizeof err);
      if (!e1 && e2) sim_param_error(s, path, d, "%s", err);
      free(fp);
      if (e1 || e2) return SIM_ECONFIG;
    }
  }
  return rc;
}

/* Measured GPU throughput: calibration files and market.score_tflops. */
static int mkt__build_speeds_measured(mkt_ctx *c, const char *base_dir, const sim_scenario *s, sim_diag *d) {
  const mkt_config *cfg = c->cfg;
  char err[512];
  int rc = SIM_OK;
  /* The cluster speed model of the scheduling core (defaults in sched_config_default,
   * docs/scheduling.md), and measured GPU throughput, from kernels/ calibration files
   * (market.calibration: one or more, comma-separated; a later file's keys override an earlier
   * one's). A file measured on a catalog GPU (its device column names one: mkt_gpu_match) gives
   * that model's FP32 SGEMM rate as a fraction f of its FP32 spec peak. ASSUMPTION: the fraction
   * of peak a GPU reaches in SGEMM is the one it reaches on the FP16 tensor path, and a model not
   * measured reaches the mean fraction f_mean of those measured; so a measured model's throughput
   * becomes (f / f_mean) x its FP16 spec and the others keep their spec: measured models keep their
   * measured ratios to each other, and one measured model alone changes no ratio. */
  sched_config dflt;
  sched_config_default(&dflt);
  c->cluster = dflt.cluster;
  double *frac = calloc(c->ngpus, sizeof *frac); /* > 0: the model was measured */
  if (!frac) return SIM_ENOMEM;
  double fsum = 0;
  unsigned fn = 0;
  for (const char *p = cfg->calibration; *p;) {
    while (*p == ' ' || *p == ',') p++;
    if (!*p) break;
    size_t l = strcspn(p, ",");
    while (l && p[l - 1] == ' ') l--;
    char one[1024];
    snprintf(one, sizeof one, "%.*s", (int)l, p);
    p += strcspn(p, ",");
    char *cp;
    if ((rc = mkt__find(base_dir, one, s, "market.calibration", d, &cp))) {
      free(frac);
      return rc;
    }
    mkt_calib_info info;
    int e4 = mkt_calibration_load(cp, &c->cluster, &info, err, sizeof err);
    free(cp);
    if (e4) {
      free(frac);
      sim_param_error(s, "market.calibration", d, "%s", err);
      return SIM_ECONFIG;
    }
    int g = mkt_gpu_match(c->gpus, c->ngpus, info.device);
    if (g < 0 || !(info.sgemm_gflops > 0) || !(c->gpus[g].fp32_tflops > 0)) continue; /* no catalog GPU */
    if (frac[g] > 0) {
      fsum -= frac[g];
      fn--;
    } /* measured again: the later file wins */
    frac[g] = info.sgemm_gflops / 1e3 / c->gpus[g].fp32_tflops;
    fsum += frac[g];
    fn++;
  }
  for (size_t g = 0; fn && g < c->ngpus; g++)
    if (frac[g] > 0) c->gpus[g].fp16_tflops *= frac[g] / (fsum / fn);
  free(frac);
  /* measured throughput replaces the spec value in the score (kernels/ measure it); it wins over
   * a calibration file */
  if (cfg->score_tflops[0]) {
    char names[64][16], tok[64];
    double v[64];
    int n = mkt__parse_mix(cfg->score_tflops, names, v, 64, tok, sizeof tok);
    for (int k = 0; k < n; k++) {
      int g = mkt_gpu_find(c->gpus, c->ngpus, names[k]);
      if (g < 0 || !(v[k] > 0)) {
        sim_param_error(s, "market.score_tflops", d, g < 0 ? "unknown GPU '%s'" : "throughput of '%s' must be > 0",
                        names[k]);
        return SIM_ECONFIG;
      }
      c->gpus[g].fp16_tflops = v[k];
    }
    if (n < 0) {
      sim_param_error(s, "market.score_tflops", d, "'%s' is not NAME:TFLOPS", tok);
      return SIM_ECONFIG;
    }
  }
  return rc;
}

/* Prices and scores per GPU model, and the population: each provider's GPU model, count, persona,
 * energy tariff and own value (population_seed), and the flexible pool's prices. */
static int mkt__build_population(mkt_ctx *c, const sim_scenario *s, sim_diag *d) {
  const mkt_config *cfg = c->cfg;
  int rc = SIM_OK;
  /* prices and scores per GPU model */
  c->posted = calloc(c->ngpus, sizeof *c->posted);
  c->flex_price = calloc(c->ngpus, sizeof *c->flex_price);
  c->gpu_score_milli = calloc(c->ngpus, sizeof *c->gpu_score_milli);
  c->gpu_cols = calloc(c->ngpus, sizeof *c->gpu_cols);
  c->gpu_cls_fit = calloc(c->ngpus, sizeof *c->gpu_cls_fit);
  if (!c->posted || !c->flex_price || !c->gpu_score_milli || !c->gpu_cols || !c->gpu_cls_fit) return SIM_ENOMEM;
  for (size_t g = 0; g < c->ngpus; g++) /* mkt_lot_fits of one GPU of model g, at any price */
    for (unsigned k = 0; k < MKT_NCLASSES; k++) {
      mkt_lot l = {1, c->gpus[g].mem_gb, c->gpus[g].pl_min_w, c->gpus[g].pl_max_w, 0, 0, 0};
      mkt_order o = mkt__class_order(c, k, INT64_MAX, 1, -1);
      if (mkt_lot_fits(&l, 1, &o)) c->gpu_cls_fit[g] |= (uint8_t)(1u << k);
    }
  for (size_t g = 0; g < c->ngpus; g++) {
    c->posted[g] = (int64_t)llround(c->gpus[g].ref_price_usd_h * cfg->fixed.price_factor * MKT_MUSD);
    c->gpu_cols[g] = c->gpus[g].name;
  }
  /* population: GPU model, GPU count and persona per provider, from population_seed */
  uint64_t np = 0;
  for (unsigned r = 0; r < c->nreg; r++) {
    c->reg_first[r] = np;
    np += (uint64_t)cfg->regions[r].providers;
  }
  c->reg_first[c->nreg] = np;
  c->nprov = np;
  /* daily_income table: a systematic sample of every k-th provider (personas are drawn per provider,
   * so every persona and region is represented in proportion); all of them when N >= providers */
  if (cfg->daily_income_providers > 0)
    c->daily_stride = np ? (np + (uint64_t)cfg->daily_income_providers - 1) / (uint64_t)cfg->daily_income_providers : 1;
  c->prov = sim_bigmem_realloc(NULL, (np ? np : 1) * sizeof *c->prov);
  c->region_cols = calloc(c->nreg, sizeof *c->region_cols);
  if (!c->prov || !c->region_cols) return SIM_ENOMEM;
  gsl_rng *pr = gsl_rng_alloc(sim_rng_xoshiro);
  if (!pr) return SIM_ENOMEM;
  sim_rng_seed_stream(pr, (uint64_t)cfg->population_seed, UINT64_C(0xB0B0));
  for (unsigned r = 0; r < c->nreg && rc == SIM_OK; r++) {
    const mkt_region_cfg *g = &cfg->regions[r];
    c->region_cols[r] = g->name;
    /* energy: USD/kWh = 1e6 musd / 1000 Wh */
    c->energy_musd_wh[r] = g->energy_usd_kwh * 1000.0;
    char names[32][16], tok[64];
    double sh[32];
    int nm = mkt__parse_mix(g->gpu_mix, names, sh, 32, tok, sizeof tok);
    int idx[32];
    char path[96];
    snprintf(path, sizeof path, "market.regions.[%u].gpu_mix", r);
    for (int k = 0; k < nm; k++) {
      idx[k] = mkt_gpu_find(c->gpus, c->ngpus, names[k]);
      if (idx[k] >= 0 && idx[k] < 64 && sh[k] > 0) c->models_in[r] |= UINT64_C(1) << idx[k];
      if (idx[k] < 0) {
        sim_param_error(s, path, d, "unknown GPU '%s' (see the names in %s)", names[k], cfg->gpus_file);
        rc = SIM_ECONFIG;
      }
    }
    if (rc) break;
    gsl_ran_discrete_t *gm = gsl_ran_discrete_preproc((size_t)nm, sh);
    gsl_ran_discrete_t *pm = gsl_ran_discrete_preproc(g->npersona_share, g->persona_share);
    gsl_ran_discrete_t *cm = gsl_ran_discrete_preproc(g->ngpp, g->gpus_per_provider);
    if (!gm || !pm || !cm) {
      gsl_ran_discrete_free(gm);
      gsl_ran_discrete_free(pm);
      gsl_ran_discrete_free(cm);
      if (g->providers > 0) {
        sim_param_error(s, path, d, "shares must have a positive sum");
        rc = SIM_ECONFIG;
      }
      continue;
    }
    static const uint8_t counts[4] = {1, 2, 4, 8};
    for (uint64_t i = c->reg_first[r]; i < c->reg_first[r + 1]; i++) {
      mkt_pstat *p = &c->prov[i];
      p->region = (uint8_t)r;
      p->gpu = (uint8_t)idx[gsl_ran_discrete(pr, gm)];
      p->persona = (uint8_t)gsl_ran_discrete(pr, pm);
      p->ngpus = counts[gsl_ran_discrete(pr, cm)];
      /* ASSUMPTION: household and small-business tariffs spread uniformly around the region's
       * mean; the seeds give none (Clore.ai prices energy per host, shared/seeds 004). */
      p->energy_permille = (uint16_t)llround(1000.0 * (1.0 + g->energy_spread * (2.0 * gsl_rng_uniform(pr) - 1.0)));
      const mkt_gpu *gg = &c->gpus[p->gpu];
      /* unified score of the machine (mkt_score, NGPU): spec FP16 throughput as the AI measure */
      mkt_score_in in = {gg->fp16_tflops, g->net_mbps, g->loss, g->disk_mbs};
      double sc = mkt_score(&in, &mkt_score_default_ref);
      p->score_milli = (uint32_t)llround(sc * 1000.0 * p->ngpus);
    }
    gsl_ran_discrete_free(gm);
    gsl_ran_discrete_free(pm);
    gsl_ran_discrete_free(cm);
  }
  /* owners' own value of their GPUs (responses.entry), from a stream of its own so that the
   * population above is the one it was before reservation incomes existed. ASSUMPTION: spread
   * uniformly around the persona's value; the seeds name the motive (the owner's own use), no
   * distribution. */
  sim_rng_seed_stream(pr, (uint64_t)cfg->population_seed, UINT64_C(0xB0B1));
  for (uint64_t i = 0; i < np && rc == SIM_OK; i++) {
    double sp = cfg->personas[c->prov[i].persona].own_value_spread;
    c->prov[i].own_permille = (uint16_t)llround(1000.0 * (1.0 + sp * (2.0 * gsl_rng_uniform(pr) - 1.0)));
  }
  gsl_rng_free(pr);
  if (rc) return rc;
  /* Flexible pool pay-per-task price per GPU model: score x price_per_score_h (NGPU billing),
   * with the network and disk of a reference machine (the per-host score varies by region). */
  for (size_t g = 0; g < c->ngpus; g++) {
    mkt_score_in in = {c->gpus[g].fp16_tflops, mkt_score_default_ref.net_mbps, 0, mkt_score_default_ref.disk_mbs};
    double sc = mkt_score(&in, &mkt_score_default_ref);
    c->gpu_score_milli[g] = (uint32_t)llround(sc * 1000.0);
    c->flex_price[g] = (int64_t)llround(sc * cfg->flexible.price_per_score_h * MKT_MUSD);
  }
  return rc;
}

/* Speeds relative to the reference GPU, and the memory grades the core selects by. */
static int mkt__build_speeds(mkt_ctx *c, const sim_scenario *s, sim_diag *d) {
  const mkt_config *cfg = c->cfg;
  /* Speeds: work units per second, FP16 throughput (measured where market.score_tflops names it,
   * else the spec sheet) relative to the reference GPU, whose speed is 1. */
  int ref = mkt_gpu_find(c->gpus, c->ngpus, cfg->reference_gpu);
  if (ref < 0) {
    sim_param_error(s, "market.reference_gpu", d, "unknown GPU '%s' (see the names in %s)", cfg->reference_gpu,
                    cfg->gpus_file);
    return SIM_ECONFIG;
  }
  c->ref_gpu = ref;
  c->speed = calloc(c->ngpus, sizeof *c->speed);
  c->grade = calloc(c->ngpus, sizeof *c->grade);
  if (!c->speed || !c->grade) return SIM_ENOMEM;
  for (size_t g = 0; g < c->ngpus; g++) c->speed[g] = c->gpus[g].fp16_tflops / c->gpus[ref].fp16_tflops;
  /* grades: GPU models ranked by memory, so that "at least M GB" is "grade >= the first grade
   * with M GB" for the core's selection */
  double mems[64];
  unsigned nm = 0;
  for (size_t g = 0; g < c->ngpus; g++) {
    int seen = 0;
    for (unsigned k = 0; k < nm; k++) seen |= mems[k] == c->gpus[g].mem_gb;
    if (!seen && nm < 64) mems[nm++] = c->gpus[g].mem_gb;
  }
  for (unsigned a = 1; a < nm; a++)
    for (unsigned b = a; b > 0 && mems[b - 1] > mems[b]; b--) {
      double t = mems[b];
      mems[b] = mems[b - 1];
      mems[b - 1] = t;
    }
  c->ngrades = (uint16_t)(nm ? nm : 1);
  for (size_t g = 0; g < c->ngpus; g++)
    for (unsigned k = 0; k < nm; k++)
      if (mems[k] == c->gpus[g].mem_gb) c->grade[g] = (uint16_t)k;
  for (int k = 0; k < MKT_NCLASSES; k++) {
    unsigned gmin = nm; /* none: no GPU has enough memory */
    for (unsigned q = 0; q < nm; q++)
      if (mems[q] >= cfg->cls[k].mem_min_gb) {
        gmin = q;
        break;
      }
    c->min_grade[k] = (uint16_t)gmin;
  }
  return SIM_OK;
}

/* Fault tolerance per world and class, the transfer model, GP Nodes, fees, the shares draws sum,
 * quotes, bid shading tables and the treasury rule. */
static int mkt__build_policies(mkt_ctx *c) {
  const mkt_config *cfg = c->cfg;
  /* Fault tolerance per world and class: the class's policy, or the world's when policies are
   * compared. The checkpoint policy with no interval (checkpoint_h = 0) keeps nothing: none. */
  for (unsigned w = 0; w < c->nworlds; w++)
    for (int k = 0; k < MKT_NCLASSES; k++) {
      const mkt_class_cfg *cc = &cfg->cls[k];
      sched_ft *f = &c->ft[w][k];
      f->policy = (sched_policy)(c->world_policy[w] >= 0 ? c->world_policy[w] : sched_policy_parse(cc->policy));
      f->ckpt_rule = (sched_ckpt_rule)cc->ckpt_rule;
      f->ckpt_interval_s = cc->checkpoint_h > 0 ? cc->checkpoint_h * 3600.0 : SCHED_DEFAULT_CKPT_INTERVAL_S;
      if (sched_ft_checkpoints(f) && cc->checkpoint_h <= 0 && f->ckpt_rule == SCHED_CKPT_FIXED)
        f->policy = (sched_policy)sched_ft_without_checkpoints((int)f->policy);
      f->standby_k = (unsigned)cc->standby_k;
      f->replicas = (unsigned)cc->replicas;
      f->max_restarts = (unsigned)cc->max_restarts;
    }
  /* The transfer model of the scheduling core (defaults in sched_config_default) */
  sched_config dflt;
  sched_config_default(&dflt);
  c->net = dflt.net;
  c->net.mode = (sched_arq)cfg->net;
  /* GP Nodes: provider i of a region is managed by node (hash of i) mod count; the first
   * delegated_share of the licences delegate their node (an ASSUMPTION: the seed gives no
   * numbers). */
  if (cfg->nodes.count > 0) {
    c->node_delegated = calloc((size_t)cfg->nodes.count, 1);
    if (!c->node_delegated) return SIM_ENOMEM;
    int64_t nd = llround(cfg->nodes.delegated_share * (double)cfg->nodes.count);
    for (int64_t i = 0; i < nd && i < cfg->nodes.count; i++) c->node_delegated[i] = 1;
    for (unsigned r = 0; r < c->nreg; r++)
      for (uint64_t i = c->reg_first[r]; i < c->reg_first[r + 1]; i++) {
        uint64_t h = (i - c->reg_first[r] + 1) * 0x9E3779B97F4A7C15ull;
        h ^= h >> 29;
        c->prov[i].node = (uint16_t)(h % (uint64_t)cfg->nodes.count);
      }
  }
  c->fee_node_ppm = (int64_t)llround(cfg->nodes.node_fee * 1e6);
  c->fee_deleg_ppm = (int64_t)llround(cfg->nodes.delegation_fee * 1e6);
  c->slash = (int64_t)llround(cfg->slash_usd * MKT_MUSD);
  c->fee_ppm[MKT_POOL_FIXED] = (int64_t)llround(cfg->fixed.fee * 1e6);
  c->fee_ppm[MKT_POOL_BIDDING] = (int64_t)llround(cfg->bidding.fee * 1e6);
  c->fee_ppm[MKT_POOL_FLEX] = (int64_t)llround(cfg->flexible.fee * 1e6);
  c->min_bid = (int64_t)llround(cfg->bidding.min_bid_usd_h * MKT_MUSD);
  /* the sums of shares the arrivals and the bids draw from (in the order every draw sums them) */
  for (int k = 0; k < MKT_NCLASSES; k++) {
    const mkt_class_cfg *cc = &cfg->cls[k];
    c->share_tot += cc->share;
    for (size_t i = 0; i < cc->npool_share; i++) c->pool_share_tot[k] += cc->pool_share[i];
    for (size_t i = 0; i < cc->nstrategies; i++) c->strat_tot[k] += cc->strategies[i];
    c->has_adaptive |= cc->nstrategies > MKT_STRAT_ADAPTIVE && cc->strategies[MKT_STRAT_ADAPTIVE] > 0;
  }
  /* reactions: pools quote to providers that may enter or switch by their goal */
  c->quotes = cfg->responses.entry;
  for (size_t i = 0; i < cfg->npersonas; i++)
    c->quotes |= cfg->personas[i].goal == MKT_GOAL_INCOME || cfg->personas[i].goal == MKT_GOAL_UTILIZATION;
  /* shading under pay as bid: one equilibrium table per class that has shading bidders */
  for (int k = 0; k < MKT_NCLASSES; k++) {
    const mkt_class_cfg *cc = &cfg->cls[k];
    if (!c->rule->pays_bid || cc->nstrategies < 3 || !(cc->strategies[MKT_STRAT_SHADE] > 0)) continue;
    if (!(cc->value_sigma > 0) || !(cc->value_usd_h > 0)) continue; /* all values equal: shade_factor */
    c->bne[k] = malloc(sizeof *c->bne[k]);
    if (!c->bne[k]) return SIM_ENOMEM;
    if (mkt_bne_table_init(c->bne[k], cc->value_sigma, (double)c->min_bid / (cc->value_usd_h * MKT_MUSD))) {
      free(c->bne[k]);
      c->bne[k] = NULL;
    }
  }
  c->trule = (mkt_treasury_rule){cfg->flexible.reserve_h, cfg->flexible.adjust,
                                 (int64_t)llround(cfg->flexible.rate_min_usd_h * MKT_MUSD),
                                 (int64_t)llround(cfg->flexible.rate_max_usd_h * MKT_MUSD)};
  c->rate0 = (int64_t)llround(cfg->flexible.rate0_usd_h * MKT_MUSD);
  return SIM_OK;
}

/* Replayed traces (market.trace_pods, market.trace_genai), merged by submit time. */
static int mkt__build_traces(mkt_ctx *c, const char *base_dir, const sim_scenario *s, sim_diag *d) {
  const mkt_config *cfg = c->cfg;
  char err[512];
  int rc = SIM_OK;
  /* traces */
  const char *tf[2] = {cfg->trace_pods, cfg->trace_genai};
  const char *tk[2] = {"market.trace_pods", "market.trace_genai"};
  for (int t = 0; t < 2; t++) {
    if (!tf[t][0]) continue;
    char *p;
    if ((rc = mkt__find(base_dir, tf[t], s, tk[t], d, &p))) return rc;
    mkt_trace_job *v = NULL;
    size_t n = 0;
    mkt_trace_stats ts;
    int e3 = t == 0 ? mkt_trace_load_alibaba_pods(p, &v, &n, &ts, err, sizeof err)
                    : mkt_trace_load_genai(p, &v, &n, &ts, err, sizeof err);
    if (e3) {
      free(p);
      sim_param_error(s, tk[t], d, "%s", err);
      return SIM_ECONFIG;
    }
    /* every row is replayed or counted by reason: on stderr, and in the results (trace_rows.*) */
    char why[512] = "";
    size_t o = 0;
    c->trace_rows[0] += ts.used;
    for (int r = 0; r < MKT_TR_NREASONS; r++) {
      c->trace_rows[1 + r] += ts.dropped[r];
      if (ts.dropped[r] && o < sizeof why)
        o += (size_t)snprintf(why + o, sizeof why - o, "%s%zu %s", o ? ", " : "", ts.dropped[r],
                              mkt_trace_reason_names[r]);
    }
    sim_diag_note(d, p, "%zu of %zu rows replayed%s%s", ts.used, ts.rows, o ? "; not replayed: " : "", why);
    free(p);
    /* merge with the trace before: both sorted by submit time, the earlier file first on ties */
    mkt_trace_job *all = malloc((c->ntrace + n) * sizeof *all);
    if (!all) {
      free(v);
      return SIM_ENOMEM;
    }
    size_t a = 0, b = 0, k = 0;
    while (a < c->ntrace || b < n)
      all[k++] = b >= n || (a < c->ntrace && c->trace[a].submit_s <= v[b].submit_s) ? c->trace[a++] : v[b++];
    free(c->trace);
    free(v);
    c->trace = all;
    c->ntrace = k;
  }
  return rc;
}

/* The series of world 0: names, units and column names. */
static int mkt__build_series(mkt_ctx *c) {
  const mkt_config *cfg = c->cfg;
  c->persona_cols = calloc(c->npers, sizeof *c->persona_cols);
  c->series = calloc((size_t)MKT_NSERIES * c->nworlds, sizeof *c->series);
  if (!c->persona_cols || !c->series) return SIM_ENOMEM;
  for (unsigned i = 0; i < c->npers; i++) c->persona_cols[i] = cfg->personas[i].name;
  c->nseries = MKT_NSERIES; /* world 0's; set to all worlds' below */
  double bw = cfg->billing_s;
  /* colnames are copied so that destroy can free every series' names uniformly */
#define COPY_NAMES(dst, src, n)                                                                                        \
  do {                                                                                                                 \
    const char *const *s_ = (src);                                                                                     \
    const char **v_ = malloc(((n) ? (n) : 1) * sizeof *v_);                                                            \
    if (!v_) return SIM_ENOMEM;                                                                                        \
    for (unsigned i_ = 0; i_ < (n); i_++) v_[i_] = s_[i_];                                                             \
    (dst) = v_;                                                                                                        \
  } while (0)
  sim_series_def *S = c->series;
  S[MKT_S_RENTED] =
      (sim_series_def){MKT_SERIES_RENTED, "GPU*ms", 3600, c->nreg, NULL, "rented GPU time per hour and region"};
  S[MKT_S_AVAIL] = (sim_series_def){
      MKT_SERIES_AVAIL, "GPU*ms", 3600, c->nreg, NULL, "available (idle or rented) GPU time per hour and region"};
  S[MKT_S_DEMAND] =
      (sim_series_def){MKT_SERIES_DEMAND, "GPU*ms", 3600,
                       c->nreg,           NULL,     "GPU time wanted by queued and running jobs per hour and region"};
  S[MKT_S_PRICE_SUM] = (sim_series_def){MKT_SERIES_PRICE_SUM,
                                        "USD*1e-6/GPU/h",
                                        3600,
                                        (unsigned)c->ngpus,
                                        NULL,
                                        "sum of rental prices set per hour and GPU model"};
  S[MKT_S_PRICE_N] = (sim_series_def){MKT_SERIES_PRICE_N, "1",  3600,
                                      (unsigned)c->ngpus, NULL, "number of prices set per hour and GPU model"};
  S[MKT_S_LEDGER] = (sim_series_def){MKT_SERIES_LEDGER, "USD*1e-6", 0,
                                     MKT_NACCOUNTS,     NULL,       "double-entry balances at the end (sum must be 0)"};
  S[MKT_S_PERSONA] = (sim_series_def){
      MKT_SERIES_PERSONA,    "mixed", 0,
      c->npers * MKT_NPCOLS, NULL,    "income (musd), available and rented GPU*ms, providers, GPUs per persona"};
  S[MKT_S_POOL] = (sim_series_def){
      MKT_SERIES_POOL,         "mixed", 0,
      MKT_NPOOLS * MKT_NPCOLS, NULL,    "income (musd), available and rented GPU*ms per pool (pool at the time)"};
  S[MKT_S_JOBS] = (sim_series_def){
      MKT_SERIES_JOBS,           "mixed", 0,
      MKT_NCLASSES * MKT_NJCOLS, NULL,    "job counts, summed waits, turnarounds (ms), interruptions, cost (musd)"};
  S[MKT_S_FLEX] =
      (sim_series_def){MKT_SERIES_FLEX,
                       "USD*1e-6",
                       bw,
                       MKT_NFCOLS,
                       NULL,
                       "flexible pool per billing interval, summed over regions: treasury, rate, shortfall"};
  COPY_NAMES(S[MKT_S_RENTED].colnames, c->region_cols, c->nreg);
  COPY_NAMES(S[MKT_S_AVAIL].colnames, c->region_cols, c->nreg);
  COPY_NAMES(S[MKT_S_DEMAND].colnames, c->region_cols, c->nreg);
  COPY_NAMES(S[MKT_S_PRICE_SUM].colnames, c->gpu_cols, (unsigned)c->ngpus);
  COPY_NAMES(S[MKT_S_PRICE_N].colnames, c->gpu_cols, (unsigned)c->ngpus);
  COPY_NAMES(S[MKT_S_LEDGER].colnames, mkt__acct_names, MKT_NACCOUNTS);
  S[MKT_S_PERSONA].colnames = mkt__cols((const char *const *)c->persona_cols, c->npers, mkt__pcol_names, MKT_NPCOLS);
  S[MKT_S_POOL].colnames = mkt__cols(mkt_pool_names, MKT_NPOOLS, mkt__pcol_names, MKT_NPCOLS);
  S[MKT_S_JOBS].colnames = mkt__cols(mkt_class_names, MKT_NCLASSES, mkt__jcol_names, MKT_NJCOLS);
  COPY_NAMES(S[MKT_S_FLEX].colnames, mkt__fcol_names, MKT_NFCOLS);
  S[MKT_S_REGION] = (sim_series_def){
      MKT_SERIES_REGION,    "mixed", 0,
      c->nreg * MKT_NPCOLS, NULL,    "income (musd), available and rented GPU*ms, providers, GPUs per region"};
  S[MKT_S_REGION].colnames = mkt__cols((const char *const *)c->region_cols, c->nreg, mkt__pcol_names, MKT_NPCOLS);
  S[MKT_S_GPU] = (sim_series_def){MKT_SERIES_GPU,
                                  "mixed",
                                  0,
                                  (unsigned)c->ngpus * MKT_NPCOLS,
                                  NULL,
                                  "income (musd), available and rented GPU*ms, providers, GPUs per GPU model"};
  S[MKT_S_GPU].colnames = mkt__cols((const char *const *)c->gpu_cols, (unsigned)c->ngpus, mkt__pcol_names, MKT_NPCOLS);
  S[MKT_S_FEES] =
      (sim_series_def){MKT_SERIES_FEES, "USD*1e-6", 0, MKT_NPOOLS, NULL, "platform fees collected per pool"};
  COPY_NAMES(S[MKT_S_FEES].colnames, mkt_pool_names, MKT_NPOOLS);
  S[MKT_S_RPOOL] = (sim_series_def){MKT_SERIES_RPOOL,
                                    "mixed",
                                    0,
                                    MKT_NPOOLS * MKT_RP_N,
                                    NULL,
                                    "per pool: jobs submitted and completed, value of completed work and clients' "
                                    "cost (musd), providers' reservation cost (musd), entries, exits, departures "
                                    "announced or not"};
  S[MKT_S_RPOOL].colnames = mkt__cols(mkt_pool_names, MKT_NPOOLS, mkt__rpcol_names, MKT_RP_N);
  S[MKT_S_RSTRAT] = (sim_series_def){MKT_SERIES_RSTRAT,
                                     "mixed",
                                     0,
                                     MKT_NSTRATS * MKT_RS_N,
                                     NULL,
                                     "bidding pool per client strategy: jobs, completed, value of completed work "
                                     "and cost (musd)"};
  S[MKT_S_RSTRAT].colnames = mkt__cols(mkt_strat_names, MKT_NSTRATS, mkt__rscol_names, MKT_RS_N);
  S[MKT_S_POP] = (sim_series_def){MKT_SERIES_POP,
                                  "providers",
                                  86400,
                                  c->npers * MKT_NPOOLS,
                                  NULL,
                                  "providers entering (+) and leaving (-) the market per day, persona and pool; "
                                  "the cumulative sum is the number in the market"};
  S[MKT_S_POP].colnames = mkt__cols((const char *const *)c->persona_cols, c->npers, mkt_pool_names, MKT_NPOOLS);
  S[MKT_S_MONEY] = (sim_series_def){MKT_SERIES_MONEY,
                                    "USD*1e-6",
                                    0,
                                    MKT_M_N,
                                    NULL,
                                    "the platform's seed outlay, stakes slashed (to the treasuries), staking payouts "
                                    "the treasuries sent, rental income the pools sent to providers"};
  COPY_NAMES(S[MKT_S_MONEY].colnames, mkt__mcol_names, MKT_M_N);
  /* per-column units of the series whose columns differ (unit "mixed"), and of flexible_pool */
  S[MKT_S_PERSONA].colunits = mkt__col_units(c->npers, mkt__pcol_units, MKT_NPCOLS);
  S[MKT_S_POOL].colunits = mkt__col_units(MKT_NPOOLS, mkt__pcol_units, MKT_NPCOLS);
  S[MKT_S_REGION].colunits = mkt__col_units(c->nreg, mkt__pcol_units, MKT_NPCOLS);
  S[MKT_S_GPU].colunits = mkt__col_units((unsigned)c->ngpus, mkt__pcol_units, MKT_NPCOLS);
  S[MKT_S_JOBS].colunits = mkt__col_units(MKT_NCLASSES, mkt__jcol_units, MKT_NJCOLS);
  S[MKT_S_RPOOL].colunits = mkt__col_units(MKT_NPOOLS, mkt__rpcol_units, MKT_RP_N);
  S[MKT_S_RSTRAT].colunits = mkt__col_units(MKT_NSTRATS, mkt__rscol_units, MKT_RS_N);
  S[MKT_S_FLEX].colunits = mkt__col_units(1, mkt__fcol_units, MKT_NFCOLS);
  for (unsigned i = 0; i < MKT_NSERIES; i++)
    if (!S[i].colnames || (!strcmp(S[i].unit, "mixed") && !S[i].colunits)) return SIM_ENOMEM;
  return SIM_OK;
}

/* The other worlds' series: world 0's definitions, named NAME@POLICY. */
static int mkt__build_world_series(mkt_ctx *c) {
  sim_series_def *S = c->series;
  for (unsigned w = 1; w < c->nworlds; w++)
    for (unsigned i = 0; i < MKT_NSERIES; i++) {
      sim_series_def *x = &S[w * MKT_NSERIES + i];
      *x = S[i];
      const char *pn = sched_policy_name((sched_policy)c->world_policy[w]);
      size_t len = strlen(S[i].name) + strlen(pn) + 2;
      char *nm = malloc(len);
      const char **cols = malloc((S[i].ncols ? S[i].ncols : 1) * sizeof *cols);
      x->name = nm;
      x->colnames = cols;
      c->nseries = w * MKT_NSERIES + i + 1;
      if (!nm || !cols) return SIM_ENOMEM;
      snprintf(nm, len, "%s@%s", S[i].name, pn);
      for (unsigned k = 0; k < S[i].ncols; k++) cols[k] = S[i].colnames[k];
    }
  return SIM_OK;
}

static int mkt__build(const void *vcfg, sim_time end, const char *base_dir, const sim_scenario *s, sim_diag *d,
                      sim_model *out) {
  const mkt_config *cfg = vcfg;
  mkt_ctx *c = calloc(1, sizeof *c);
  if (!c) return SIM_ENOMEM;
  memset(out, 0, sizeof *out);
  out->ctx = c;
  c->cfg = cfg;
  c->end = end;
  c->nreg = (unsigned)cfg->nregions;
  c->npers = (unsigned)cfg->npersonas;
  c->nmarkets = (uint64_t)c->nreg * MKT_NPOOLS;
  int rc = SIM_OK;
  {
    char tok[96];
    int n = mkt__parse_policies(cfg->compare_policies, c->world_policy, tok, sizeof tok);
    c->nworlds = n > 0 ? (unsigned)n : 1;
    if (n <= 0) c->world_policy[0] = -1;
  }
  c->rule = mkt_rule_find(mkt_rule_names[cfg->bidding.rule]);
  if (!c->rule) {
    rc = SIM_EINVAL;
    goto fail;
  }

  if ((rc = mkt__build_inputs(c, base_dir, s, d)) || (rc = mkt__build_speeds_measured(c, base_dir, s, d)) ||
      (rc = mkt__build_population(c, s, d)) || (rc = mkt__build_speeds(c, s, d)) || (rc = mkt__build_policies(c)))
    goto fail;
  c->nbill = (size_t)ceil(end / cfg->billing_s);
  c->close_t = end - 3 * cfg->latency_s;
  if ((rc = mkt__build_traces(c, base_dir, s, d)) || (rc = mkt__build_series(c)) || (rc = mkt__build_world_series(c)))
    goto fail;
  c->nseries = MKT_NSERIES * c->nworlds;

  out->name = "market";
  out->types = mkt__lptypes;
  out->ntypes = MKT__NLPTYPES;
  out->type_of = NULL;
  out->nlps = (c->nmarkets + c->nprov) * c->nworlds;
  out->msg_size = mkt__msg_size;
  out->lookahead = cfg->latency_s;
  out->end_time = end;
  out->series = c->series;
  out->nseries = c->nseries;
  out->tables = mkt__tables;
  out->ntables = MKT_NTABLES;
  return SIM_OK;
fail:
  mkt__destroy(out);
  return rc;
}

static unsigned mkt__type_of(const void *vctx, sim_id id) {
  const mkt_ctx *c = vctx;
  uint64_t x = id % mkt__per_world(c);
  if (mkt__is_market_at(c, x)) return MKT__LP_MARKET;
  const mkt_persona_cfg *pc = &c->cfg->personas[c->prov[mkt__prov_at(c, x)].persona];
  return mkt__persona_reviews(c->cfg, pc) ? MKT__LP_PROV_RV : MKT__LP_PROV;
}

/* The engine's groups: one per region of each world (see the layout in mkt_internal.h). */
static sim_id mkt__group_first(const void *vctx, unsigned g) {
  const mkt_ctx *c = vctx;
  return (sim_id)(g / c->nreg) * mkt__per_world(c) + mkt__region_first(c, g % c->nreg);
}

/* Every world's copy of an entity draws the same numbers: common random numbers. */
static uint64_t mkt__stream_of(const void *vctx, sim_id id) {
  const mkt_ctx *c = vctx;
  return mkt__entity_at(c, id % mkt__per_world(c));
}

static int mkt__metrics_build(mkt_ctx *c);

static int mkt__build_class(const void *cfg, sim_time end, const char *base_dir, const sim_scenario *s, sim_diag *d,
                            sim_model *out) {
  int rc = mkt__build(cfg, end, base_dir, s, d, out);
  if (rc == SIM_OK) {
    out->type_of = mkt__type_of;
    out->stream_of = mkt__stream_of;
    const mkt_ctx *c = out->ctx;
    out->ngroups = c->nworlds * c->nreg;
    out->group_first = mkt__group_first;
    out->group_lookahead = SIM_TIME_INF; /* no message leaves its region */
    out->shared_groups = 1;              /* a market tells its providers their rentals (mkt__prov_rented) */
  }
  if (rc == SIM_OK && mkt__metrics_build((mkt_ctx *)out->ctx) != SIM_OK) {
    mkt__destroy(out);
    rc = SIM_ENOMEM;
  }
  return rc;
}

/* ---- metrics ----------------------------------------------------------------------------------- */
/* The metric list depends on the scenario: one set per persona and per region the scenario
 * defines, named after them (income_per_available_hour.persona.olga, utilization.region.eu), plus
 * per pool and per job class, plus overall figures. Layout, quantity-major within each block:
 *   persona block: MQ_P quantities x npers    pool block: MQ_POOL x 3
 *   region block:  MQ_R quantities x nreg     class block: MQ_C x 3      then MQ_S scalars. */
typedef struct mkt__mq {
  const char *q, *unit, *help;
  int headline;
  const char *label, *formula, *over, *weight, *censored; /* the catalogue (sim_metric_def) */
} mkt__mq;
/* What each kind of metric does with what is still under way when the run ends. */
#define MQ_CEN_PROV "counted up to the end of the run (providers' income and time so far); nothing is dropped"
#define MQ_CEN_DONE "jobs still running or queued at the end have not completed: not counted (see jobs_running_at_end)"
#define MQ_CEN_SPEND                                                                                                   \
  "what was billed to jobs still running at the end is counted; their work is not useful (not completed)"
#define MQ_CEN_UNSTARTED                                                                                               \
  "jobs never started count the time they waited (to when they gave up, or to the run's end): a lower bound"
#define MQ_CEN_RCOMP                                                                                                   \
  "jobs not completed (failed, gave up, queued or running at the end) count the time from submission to the run's "    \
  "end: a lower bound that never falls when jobs take longer"
#define MQ_CEN_SUBMITTED "jobs still running or queued at the end count as submitted, not completed"
#define MQ_CEN_NONE "no jobs involved"
/* comm_share: what a wide job pays for spreading over hosts */
#define MQ_COMM_FORMULA                                                                                                \
  "GPU-hours the runs' members spent in the ring all-reduce of grad_mb per step (sched_cluster_step's t_comm per "     \
  "step, over the members' links) / GPU-hours billed to members (standbys excluded); NaN when no member was billed"
#define MQ_COMM_OVER "started jobs' run time (members' GPU time billed)"
#define MQ_COMM_CEN "jobs running at the end are counted up to the end (time and communication)"
static const mkt__mq mkt__pq[] = {
    {"income_per_available_hour", "USD/h", "income per available GPU-hour", 1, "provider income per available GPU-hour",
     "income the persona's providers received (rentals and staking, gross of slashing) / their available (idle or "
     "rented) GPU-hours",
     "the persona's providers' available GPU-hours", "per available GPU-hour", MQ_CEN_PROV},
    {"income_mean", "USD", "mean income per provider over the run", 0, "mean income per provider",
     "sum of income_usd over the persona's providers (providers table) / their number", "the persona's providers",
     "per provider", MQ_CEN_PROV},
    {"income_sd", "USD", "standard deviation of income across providers", 0, "sd of income across providers",
     "sample standard deviation of income_usd across the persona's providers", "the persona's providers",
     "per provider", MQ_CEN_PROV},
    {"income_cv", "1", "coefficient of variation of income across providers", 0, "CV of income across providers",
     "income_sd / income_mean of the persona's providers", "the persona's providers", "per provider", MQ_CEN_PROV},
    {"daily_income_cv", "1", "mean over providers of the CV of their daily income (predictability)", 1,
     "CV of daily income (mean over providers)",
     "mean over the persona's providers of (sd / mean of the provider's income per day of the run)",
     "the persona's providers with a defined daily CV", "per provider", MQ_CEN_PROV},
    {"utilization", "1", "rented / available GPU time", 0, "utilization (rented / available GPU time)",
     "rented GPU-hours / available GPU-hours of the persona's providers", "the persona's available GPU-hours",
     "per available GPU-hour", MQ_CEN_PROV},
    {"providers_mean", "providers", "providers in the market, mean over the days of the run", 0,
     "providers in the market (mean over days)",
     "time-weighted mean over the days of the run of the persona's providers in the market", "days of the run",
     "per day (the last one by its length)", MQ_CEN_PROV},
};
static const mkt__mq mkt__poolq[] = {
    {"income_per_available_hour", "USD/h", "income per available GPU-hour in the pool", 0,
     "provider income per available GPU-hour",
     "income received in the pool (gross of slashing) / available GPU-hours of its providers",
     "the pool's available GPU-hours", "per available GPU-hour", MQ_CEN_PROV},
    {"utilization", "1", "rented / available GPU time", 1, "utilization (rented / available GPU time)",
     "rented GPU-hours / available GPU-hours in the pool", "the pool's available GPU-hours", "per available GPU-hour",
     MQ_CEN_PROV},
    {"idle_share", "1", "share of available time spent ready but unrented", 0, "idle share of available time",
     "(available - rented) / available GPU-hours in the pool", "the pool's available GPU-hours",
     "per available GPU-hour", MQ_CEN_PROV},
    {"job_share", "1", "share of the submitted jobs that went to the pool", 1, "share of submitted jobs",
     "jobs submitted to the pool / jobs submitted to all pools", "submitted jobs", "per job", MQ_CEN_SUBMITTED},
    {"consumer_surplus", "USD", "value of completed work - what clients paid", 0, "consumer surplus",
     "value of the pool's completed work - what its clients paid (for all their jobs)", "submitted jobs", "total",
     MQ_CEN_SPEND},
    {"provider_surplus", "USD", "income - reservation cost (energy, wear, own value of the GPU)", 0,
     "provider surplus (net of slashing)",
     "income received in the pool - stakes slashed in it - providers' reservation cost (energy, wear, own value of "
     "the GPU) of their rented and available time",
     "the pool's providers", "total", MQ_CEN_PROV},
    {"platform_revenue", "USD", "platform fees collected", 0, "platform fees", "platform fees collected in the pool",
     "billed rentals", "total", "rentals billed up to the end are counted"},
    {"providers_mean", "providers", "providers in the pool, mean over the days of the run", 1,
     "providers in the pool (mean over days)", "time-weighted mean over the days of the providers in the pool",
     "days of the run", "per day", MQ_CEN_PROV},
    {"providers_entered", "providers", "providers that entered the market into the pool", 0, "providers entered",
     "entries into the market into the pool (responses.entry)", "providers", "count", MQ_CEN_PROV},
    {"providers_exited", "providers", "providers that left the market from the pool", 0, "providers exited",
     "exits from the market out of the pool (responses.entry)", "providers", "count", MQ_CEN_PROV},
    {"unannounced_share", "1", "departures by churn the platform learned by heartbeat timeout", 0,
     "unannounced share of departures", "departures by churn not announced / all departures by churn, in the pool",
     "departures by churn", "per departure", MQ_CEN_PROV},
};
/* Per bidding strategy of clients (the bidding pool). */
static const mkt__mq mkt__stq[] = {
    {"bid_jobs", "jobs", "bidding-pool jobs whose client used the strategy", 0, "bidding-pool jobs",
     "jobs submitted to the bidding pool by clients using the strategy", "submitted jobs", "count", MQ_CEN_SUBMITTED},
    {"bid_completed_share", "1", "completed / submitted of those jobs", 0, "completed share",
     "completed / submitted bidding-pool jobs of the strategy", "submitted jobs", "per job", MQ_CEN_SUBMITTED},
    {"bid_surplus_per_job", "USD", "consumer surplus (value of completed work - cost) per job", 0,
     "consumer surplus per job", "(value of completed work - cost of all the strategy's jobs) / its submitted jobs",
     "submitted jobs", "per job", MQ_CEN_SPEND},
};
/* Per persona x pool (the pool a provider is in at the end, the providers table's `pool`), named
 * QUANTITY.persona.P.pool.Q; the last block, so that the metrics before keep their places. */
static const mkt__mq mkt__ppq[] = {
    {"income_mean", "USD", "mean income per provider over the run, providers of the persona in the pool at the end", 0,
     "mean income per provider", "mean income_usd of the persona's providers in the pool at the end (providers table)",
     "providers of the persona in the pool at the end", "per provider", MQ_CEN_PROV},
    {"income_sd", "USD", "standard deviation of income across those providers", 0, "sd of income across providers",
     "sample standard deviation of income_usd across those providers",
     "providers of the persona in the pool at the end", "per provider", MQ_CEN_PROV},
    {"income_cv", "1", "coefficient of variation (sd / mean) of income across those providers", 0,
     "CV of income across providers", "income_sd / income_mean of those providers",
     "providers of the persona in the pool at the end", "per provider", MQ_CEN_PROV},
};
static const mkt__mq mkt__rq[] = {
    {"utilization", "1", "rented / available GPU time", 0, "utilization (rented / available GPU time)",
     "rented GPU-hours / available GPU-hours in the region", "the region's available GPU-hours",
     "per available GPU-hour", MQ_CEN_PROV},
    {"imbalance", "1", "demanded / available GPU time", 1, "demand / supply of GPU time",
     "GPU-hours wanted by queued and running jobs / available GPU-hours in the region",
     "the region's available GPU-hours", "per available GPU-hour", "demand of jobs under way is counted to the end"},
    {"income_per_available_hour", "USD/h", "income per available GPU-hour", 0, "provider income per available GPU-hour",
     "income received in the region (gross of slashing) / its available GPU-hours", "the region's available GPU-hours",
     "per available GPU-hour", MQ_CEN_PROV},
};
static const mkt__mq mkt__cq[] = {
    {"wait_mean", "s", "mean wait of submitted jobs (never started: the wait so far)", 1, "mean wait of submitted jobs",
     "(sum over started jobs of (first start - submit) + sum over jobs never started of (the time they gave up, or "
     "the run's end, - submit)) / submitted jobs",
     "submitted jobs", "per job", MQ_CEN_UNSTARTED},
    {"completion_rmean", "s", "restricted mean completion time: unfinished jobs count the time to the run's end", 0,
     "restricted mean completion time",
     "(sum over completed jobs of (end - submit) + sum over the others (failed, gave up, still under way) of (run's "
     "end - submit)) / submitted jobs",
     "submitted jobs", "per job", MQ_CEN_RCOMP},
    {"interruptions_mean", "1", "interruptions per submitted job", 0, "interruptions per job",
     "interruptions of the class's jobs / submitted jobs", "submitted jobs", "per job", MQ_CEN_SUBMITTED},
    {"spend_per_completed_job", "USD", "all billed cost of the class / completed jobs", 0, "spend per completed job",
     "all billed cost of the class's jobs (whatever their outcome) / completed jobs; infinite when money was spent and "
     "no job completed",
     "submitted jobs' spend, per completed job", "per completed job", MQ_CEN_SPEND},
    {"completed_share", "1", "completed / submitted jobs", 1, "completed share of submitted jobs",
     "completed / submitted jobs", "submitted jobs", "per job", MQ_CEN_SUBMITTED},
    {"served", "jobs", "completed jobs", 0, "jobs completed", "completed jobs of the class", "completed jobs", "count",
     MQ_CEN_DONE},
    {"balked_share", "1", "clients who found no affordable pool / all clients (responses.pool_choice)", 0,
     "balked share of clients", "clients who found no affordable pool / (submitted jobs + balked clients)",
     "clients (submitted jobs and balked clients)", "per client", MQ_CEN_SUBMITTED},
    {"reneged_share", "1", "jobs that gave up waiting (patience_h) / submitted jobs", 0, "reneged share of jobs",
     "jobs that gave up waiting (patience_h) / submitted jobs", "submitted jobs", "per job",
     "jobs still queued at the end have not reneged: not counted"},
    {"price_seen", "USD/h",
     "price per GPU-hour the class's clients saw, mean over billing intervals "
     "(responses.demand: calibrate price_ref_usd_h with it)",
     0, "price clients saw per GPU-hour", "mean over billing intervals of the price the class's clients saw",
     "billing intervals", "per billing interval (unweighted)", MQ_CEN_NONE},
};
static const mkt__mq mkt__sq[] = {
    {"client_price_per_gpu_h", "USD/h", "what clients paid per GPU-hour billed (volume-weighted)", 1,
     "client price per billed GPU-hour", "client_cost_total / GPU-hours billed to all jobs (members and standbys)",
     "billed GPU-hours", "per billed GPU-hour", MQ_CEN_SPEND},
    {"price_unweighted_mean", "USD/h", "mean of the prices set at run starts, each counting once", 0,
     "mean price set (unweighted)",
     "sum of the prices per GPU-hour set when runs started / number of prices set (not weighted by GPU-hours)",
     "prices set at run starts", "per price set", MQ_CEN_NONE},
    {"platform_revenue", "USD", "platform fees collected (all pools)", 1, "platform fees",
     "platform fees collected in all pools (the seed outlay is not subtracted: platform_seed_outlay)", "billed rentals",
     "total", "rentals billed up to the end are counted"},
    {"client_cost_total", "USD", "paid by clients", 1, "client spend",
     "what clients paid, all jobs whatever their outcome (- the clients' ledger account)", "submitted jobs", "total",
     MQ_CEN_SPEND},
    {"provider_income_gross", "USD", "income received by providers (rentals and staking), gross of slashing", 1,
     "provider income (gross of slashing)",
     "rental income + staking income the providers received (stakes posted and refunded excluded)", "providers",
     "total", MQ_CEN_PROV},
    {"provider_income_net", "USD", "provider income net of slashed stakes", 1, "provider income (net of slashing)",
     "provider_income_gross - stakes_slashed", "providers", "total", MQ_CEN_PROV},
    {"provider_income_per_available_gpu_h", "USD/h", "providers' gross income per available GPU-hour", 1,
     "provider income per available GPU-hour", "provider_income_gross / available (idle or rented) GPU-hours",
     "available GPU-hours", "per available GPU-hour", MQ_CEN_PROV},
    {"stakes_slashed", "USD", "stakes slashed from providers (all of it went to the flexible pools' treasuries)", 0,
     "stakes slashed",
     "stakes slashed for unannounced departures while employed; each slash goes to the pool's treasury",
     "providers of the flexible pool", "total", MQ_CEN_PROV},
    {"staking_income_paid", "USD", "staking income the treasuries paid out (part of provider income)", 0,
     "staking income paid by the treasuries",
     "staking payouts the flexible pools' treasuries sent to providers (funded by rentals, slashed stakes and the "
     "seed)",
     "providers of the flexible pool", "total", MQ_CEN_PROV},
    {"platform_seed_outlay", "USD", "what the platform put into the treasuries at the start", 0,
     "platform's seed outlay", "flexible.seed_usd x flexible pools (regions)", "flexible pools", "total", MQ_CEN_NONE},
    {"treasury_balance", "USD", "flexible pools' treasuries at the end", 0, "treasury balance at the end",
     "the treasuries' ledger account at the end", "flexible pools", "total", MQ_CEN_PROV},
    {"treasury_change", "USD", "treasuries at the end - the seed they started with", 0, "treasury change",
     "treasury_balance - platform_seed_outlay (negative: the seed money was drawn down)", "flexible pools", "total",
     MQ_CEN_PROV},
    {"gp_node_fees", "USD", "fees kept by GP Nodes (after their operators' share)", 0, "GP Node fees",
     "the nodes' ledger account at the end", "billed rentals", "total", "rentals billed up to the end"},
    {"node_operator_fees", "USD", "delegated nodes' fees passed to their operators", 0, "node operators' fees",
     "the operators' ledger account at the end", "billed rentals", "total", "rentals billed up to the end"},
    {"income_in_transit", "USD", "income sent to providers that had not reached them at the end", 0,
     "income in transit at the end", "rental and staking payments sent - provider income received", "payments", "total",
     "payments under way at the end are counted here, not as income"},
    {"treasury_shortfall", "USD", "staking payouts owed but not paid (insolvency)", 1, "staking shortfall",
     "staking payouts owed but not paid because the treasury was empty", "flexible pools", "total", MQ_CEN_PROV},
    {"pool_switches", "1", "providers' pool switches", 0, "pool switches", "pool switches summed over providers",
     "providers", "count", MQ_CEN_PROV},
    {"money_conserved", "1", "1 if the double-entry ledger sums to exactly 0", 1, "ledger sums to zero (1 = yes)",
     "1 when the ledger's accounts sum to exactly 0 musd, else 0", "ledger accounts", "flag", MQ_CEN_NONE},
    {"ledger_identity", "1",
     "1 if client_cost_total = provider_income_net + platform_revenue + treasury_change + gp_node_fees + "
     "node_operator_fees + income_in_transit exactly",
     1, "money identity holds (1 = yes)", "1 when the identity holds to the musd (docs/market.md, The ledger), else 0",
     "ledger accounts", "flag", MQ_CEN_NONE},
    {"consumer_surplus", "USD", "value of completed work - what clients paid (all pools)", 1, "consumer surplus",
     "value of completed work - client_cost_total (spend on jobs that did not complete counts)", "submitted jobs",
     "total", MQ_CEN_SPEND},
    {"provider_surplus", "USD", "providers' income net of slashing - their reservation cost (all pools)", 1,
     "provider surplus (net of slashing)", "provider_income_net - reservation cost of the providers' time", "providers",
     "total", MQ_CEN_PROV},
    {"total_welfare", "USD",
     "consumer + provider surplus + platform revenue + treasury change + node and operator fees + income in transit "
     "(= value of completed work - reservation cost)",
     1, "total welfare",
     "consumer_surplus + provider_surplus + platform_revenue + treasury_change + gp_node_fees + node_operator_fees + "
     "income_in_transit",
     "all parties", "total", MQ_CEN_SPEND},
    {"jobs_served", "jobs", "completed jobs (all classes)", 1, "jobs completed", "completed jobs, all classes",
     "completed jobs", "count", MQ_CEN_DONE},
    {"jobs_unserved", "jobs", "demand not served: balked + reneged + never started by the end", 1, "unserved demand",
     "jobs_balked + jobs_reneged + jobs_queued_at_end", "clients (submitted jobs and balked clients)", "count",
     "jobs queued and never started at the end count as unserved; started ones do not"},
    {"jobs_balked", "jobs", "clients who found no affordable pool", 0, "clients balked",
     "clients who found no affordable pool (never submitted)", "clients", "count", MQ_CEN_NONE},
    {"jobs_reneged", "jobs", "jobs that gave up waiting", 0, "jobs reneged",
     "jobs that gave up waiting before their first start (patience_h)", "submitted jobs", "count",
     "jobs still queued at the end: jobs_queued_at_end"},
    {"jobs_failed", "jobs", "started jobs the scheduler gave up on", 0, "jobs failed",
     "jobs that ended without completing after starting (too many interruptions)", "started jobs", "count",
     "jobs still running at the end: jobs_running_at_end"},
    {"jobs_queued_at_end", "jobs", "jobs never started when the run ended", 0, "jobs queued at the end",
     "submitted jobs neither started, reneged nor ended when the run ended", "submitted jobs", "count",
     "this is the censored part: queued, never started"},
    {"jobs_running_at_end", "jobs", "started jobs still unfinished when the run ended", 0, "jobs running at the end",
     "jobs started and not ended (running or queued again after an interruption) when the run ended", "started jobs",
     "count", "this is the censored part: started, not finished"},
    {"providers_mean", "providers", "providers in the market, mean over the days of the run", 1,
     "providers in the market (mean over days)", "sum over pools of providers_mean.pool.P", "days of the run",
     "per day", MQ_CEN_PROV},
    {"providers_entered", "providers", "entries into the market (responses.entry)", 0, "providers entered",
     "entries into the market", "providers", "count", MQ_CEN_PROV},
    {"providers_exited", "providers", "exits from the market (responses.entry)", 0, "providers exited",
     "exits from the market", "providers", "count", MQ_CEN_PROV},
    {"unannounced_share", "1", "departures by churn not announced / all departures by churn", 0,
     "unannounced share of departures", "departures by churn not announced / all departures by churn",
     "departures by churn", "per departure", MQ_CEN_PROV},
    {"comm_share", "1", "share of the members' GPU time spent synchronising gradients (all classes)", 0,
     "share of time communicating", MQ_COMM_FORMULA, MQ_COMM_OVER, "per member GPU-hour", MQ_COMM_CEN},
};
/* Fault tolerance, per class (the baseline world) and, when policies are compared, per policy
 * with the paired difference from the first listed policy (same providers, churn and arrivals).
 * Totals (spend, useful_gpu_h, deadline_misses, jobs_unserved) have differences whatever the
 * baseline did; a ratio's difference is NaN where a world's ratio is (nothing completed). */
#define MQ_RATIO_NAN                                                                                                   \
  "; NaN when nothing completed and nothing was spent, +inf when money was spent and nothing completed"
static const mkt__mq mkt__fq[] = {
    {"goodput", "1", "reference GPU-hours of completed jobs per GPU-hour billed (members and standbys)", 1,
     "goodput (useful / billed GPU-hours)",
     "reference GPU-hours of work of completed jobs / GPU-hours billed to all jobs (members and standbys)",
     "billed GPU-hours of all jobs", "per billed GPU-hour",
     "time billed to jobs running at the end is counted; their work is not (not completed)"},
    {"lost_gpu_h", "GPU*h", "GPU time lost: work since the last checkpoint, recovery of replacements", 1,
     "GPU-hours lost to interruptions",
     "work since the last checkpoint lost at interruptions + recovery time of replacements", "all jobs", "total",
     "losses of jobs running at the end are counted up to the end"},
    {"deadline_misses", "jobs", "jobs with a deadline whose deadline passed unfinished", 0, "deadline misses",
     "jobs with a deadline that completed after it, failed, reneged, or were still running or queued when it passed "
     "(the jobs table's deadline_missed)",
     "submitted jobs with a deadline", "count",
     "a job unfinished at the end counts when its deadline is at or before the end, not when it is later"},
    {"spend_per_useful_gpu_h", "USD/h", "all client spend per reference GPU-hour of completed work", 1,
     "total spend per useful GPU-hour",
     "what clients paid for all jobs (completed, failed, reneged or running) / reference GPU-hours of work of "
     "completed jobs" MQ_RATIO_NAN,
     "all jobs (spend), completed jobs (useful work)", "per useful reference GPU-hour", MQ_CEN_SPEND},
    {"completed_cost_per_useful_gpu_h", "USD/h", "billed cost of completed jobs per reference GPU-hour of their work",
     0, "cost of completed jobs per useful GPU-hour",
     "what clients paid for the completed jobs only / reference GPU-hours of their work (spend on jobs that did not "
     "complete is left out: use spend_per_useful_gpu_h)",
     "completed jobs", "per useful reference GPU-hour", MQ_CEN_DONE},
    {"standby_gpu_h", "GPU*h", "GPU time billed for standbys", 0, "standby GPU-hours", "GPU time billed for standbys",
     "all jobs", "total", "billed up to the end"},
    {"checkpoint_gpu_h", "GPU*h", "GPU time spent writing checkpoints", 0, "checkpoint GPU-hours",
     "GPU time spent writing checkpoints", "all jobs", "total", "counted up to the end"},
    {"completed_share", "1", "completed / submitted jobs", 0, "completed share of submitted jobs",
     "completed / submitted jobs", "submitted jobs", "per job", MQ_CEN_SUBMITTED},
    {"spend", "USD", "what clients paid for the jobs, whatever their outcome", 0, "client spend",
     "billed cost of all jobs (completed, failed, reneged, running at the end)", "submitted jobs", "total",
     MQ_CEN_SPEND},
    {"useful_gpu_h", "GPU*h", "reference GPU-hours of work of completed jobs", 0, "useful GPU-hours",
     "reference GPU-hours of work of the completed jobs", "completed jobs", "total", MQ_CEN_DONE},
    {"jobs_unserved", "jobs", "balked + reneged + never started by the end", 0, "unserved demand",
     "clients balked + jobs reneged + jobs queued and never started at the end",
     "clients (submitted jobs and balked clients)", "count",
     "jobs queued and never started at the end count as unserved; started ones do not"},
    {"comm_share", "1", "share of the members' GPU time spent synchronising gradients", 0,
     "share of time communicating", MQ_COMM_FORMULA, MQ_COMM_OVER, "per member GPU-hour", MQ_COMM_CEN},
};
static const mkt__mq mkt__wq[] = {
    {"provider_income", "USD", "income received by providers (rentals and staking), gross of slashing", 1,
     "provider income (gross of slashing)", "rental + staking income the providers received", "providers", "total",
     MQ_CEN_PROV},
    {"provider_income_net", "USD", "provider income net of slashed stakes", 0, "provider income (net of slashing)",
     "provider_income - stakes slashed", "providers", "total", MQ_CEN_PROV},
};
#define MQ_F (sizeof mkt__fq / sizeof mkt__fq[0])
#define MQ_W (sizeof mkt__wq / sizeof mkt__wq[0])
#define MQ_P (sizeof mkt__pq / sizeof mkt__pq[0])
#define MQ_POOL (sizeof mkt__poolq / sizeof mkt__poolq[0])
#define MQ_R (sizeof mkt__rq / sizeof mkt__rq[0])
#define MQ_C (sizeof mkt__cq / sizeof mkt__cq[0])
#define MQ_S (sizeof mkt__sq / sizeof mkt__sq[0])
#define MQ_ST (sizeof mkt__stq / sizeof mkt__stq[0])
#define MQ_PP (sizeof mkt__ppq / sizeof mkt__ppq[0])
enum {
  MX_PRICE,
  MX_PRICE_UNW,
  MX_PLATFORM,
  MX_CLIENT_COST,
  MX_INCOME_GROSS,
  MX_INCOME_NET,
  MX_INCOME_AVAIL,
  MX_SLASHED,
  MX_STAKING_PAID,
  MX_SEED,
  MX_TREASURY,
  MX_TREASURY_CHANGE,
  MX_NODE_FEES,
  MX_OPERATOR_FEES,
  MX_IN_TRANSIT,
  MX_SHORTFALL,
  MX_SWITCHES,
  MX_CONSERVED,
  MX_IDENTITY,
  MX_CS,
  MX_PS,
  MX_WELFARE,
  MX_SERVED,
  MX_UNSERVED,
  MX_BALKED,
  MX_RENEGED,
  MX_FAILED,
  MX_QUEUED_END,
  MX_RUNNING_END,
  MX_PROVIDERS,
  MX_ENTERED,
  MX_EXITED,
  MX_UNANNOUNCED,
  MX_COMM,
  MX_N
};
_Static_assert(MX_N == MQ_S, "one MX_ index per scalar metric");
/* mkt__fq's order */
enum {
  MF_GOODPUT,
  MF_LOST,
  MF_MISSED,
  MF_SPEND_PER_USEFUL,
  MF_DONE_COST_PER_USEFUL,
  MF_STANDBY,
  MF_CKPT,
  MF_COMPLETED,
  MF_SPEND,
  MF_USEFUL,
  MF_UNSERVED,
  MF_COMM,
  MF_N
};
_Static_assert(MF_N == MQ_F, "one MF_ index per fault-tolerance metric");

/* The place of fault-tolerance quantity q in the per-class block, which leaves out
 * completed_share (completed_share.class.C is the class block's). */
static size_t mkt__ftc_q(size_t q) { return q < MF_COMPLETED ? q : q - 1; }

/* Offsets of the blocks for a context. */
typedef struct mkt__mlayout {
  size_t pers, pool, reg, cls, scal, ftc, wld, dif, spd, trc, str, pp, n;
  unsigned nq; /* quantities per world: MQ_F + MQ_W + npers (income per available hour) */
} mkt__mlayout;
static mkt__mlayout mkt__layout(const mkt_ctx *c) {
  mkt__mlayout L;
  L.pers = 0;
  L.pool = L.pers + MQ_P * c->npers;
  L.reg = L.pool + MQ_POOL * MKT_NPOOLS;
  L.cls = L.reg + MQ_R * c->nreg;
  L.scal = L.cls + MQ_C * MKT_NCLASSES;
  L.ftc = L.scal + MQ_S;
  L.nq = (unsigned)(MQ_F + MQ_W + c->npers);
  L.wld = L.ftc + (MQ_F - 1) * MKT_NCLASSES; /* per class without completed_share: the class block has it */
  L.dif = L.wld + (c->nworlds > 1 ? (size_t)L.nq * c->nworlds : 0);
  L.spd = L.dif + (c->nworlds > 1 ? (size_t)L.nq * (c->nworlds - 1) : 0);
  L.trc = L.spd + c->ngpus;
  L.str = L.trc + (c->ntrace ? 1 + MKT_TR_NREASONS : 0); /* a trace with no usable row is an error */
  L.pp = L.str + MQ_ST * MKT_NSTRATS;
  L.n = L.pp + MQ_PP * c->npers * MKT_NPOOLS;
  return L;
}

/* Sets metric d to quantity q, named QUANTITY[.dim.val]. The name is malloc'd (*name, freed by
 * destroy); a label that lives on the caller's stack (own_label) is copied after it, in the same
 * allocation. */
static void mkt__metric_set_l(sim_metric_def *d, char **name, const mkt__mq *q, const char *dim, const char *val,
                              int own_label) {
  size_t len = strlen(q->q) + (dim ? strlen(dim) + strlen(val) + 2 : 0) + 1;
  size_t ll = own_label && q->label ? strlen(q->label) + 1 : 0;
  char *n = malloc(len + ll);
  if (!n) return;
  if (dim)
    snprintf(n, len, "%s.%s.%s", q->q, dim, val);
  else
    snprintf(n, len, "%s", q->q);
  *name = n;
  *d = (sim_metric_def){n, q->unit, q->help, q->headline, q->label, q->formula, q->over, q->weight, q->censored};
  if (ll) {
    memcpy(n + len, q->label, ll);
    d->label = n + len;
  }
}
static void mkt__metric_set(sim_metric_def *d, char **name, const mkt__mq *q, const char *dim, const char *val) {
  mkt__metric_set_l(d, name, q, dim, val, 0);
}

/* Builds c->metrics (called at the end of build). 0 or SIM_ENOMEM. */
static int mkt__metrics_build(mkt_ctx *c) {
  mkt__mlayout L = mkt__layout(c);
  c->metrics = calloc(L.n, sizeof *c->metrics);
  c->metric_names = calloc(L.n, sizeof *c->metric_names);
  if (!c->metrics || !c->metric_names) return SIM_ENOMEM;
  c->nmetrics = (unsigned)L.n;
  for (size_t q = 0; q < MQ_P; q++)
    for (unsigned p = 0; p < c->npers; p++) {
      size_t k = L.pers + q * c->npers + p;
      mkt__metric_set(&c->metrics[k], &c->metric_names[k], &mkt__pq[q], "persona", c->cfg->personas[p].name);
    }
  for (size_t q = 0; q < MQ_POOL; q++)
    for (unsigned i = 0; i < MKT_NPOOLS; i++) {
      size_t k = L.pool + q * MKT_NPOOLS + i;
      mkt__metric_set(&c->metrics[k], &c->metric_names[k], &mkt__poolq[q], "pool", mkt_pool_names[i]);
    }
  for (size_t q = 0; q < MQ_R; q++)
    for (unsigned g = 0; g < c->nreg; g++) {
      size_t k = L.reg + q * c->nreg + g;
      mkt__metric_set(&c->metrics[k], &c->metric_names[k], &mkt__rq[q], "region", c->cfg->regions[g].name);
    }
  for (size_t q = 0; q < MQ_C; q++)
    for (unsigned j = 0; j < MKT_NCLASSES; j++) {
      size_t k = L.cls + q * MKT_NCLASSES + j;
      mkt__metric_set(&c->metrics[k], &c->metric_names[k], &mkt__cq[q], "class", mkt_class_names[j]);
    }
  for (size_t q = 0; q < MQ_S; q++)
    mkt__metric_set(&c->metrics[L.scal + q], &c->metric_names[L.scal + q], &mkt__sq[q], NULL, NULL);
  /* per class, of world 0: when policies are compared, named after its policy
   * (goodput.class.training.policy.none), so that no table shows them as the run's */
  for (size_t q = 0; q < MQ_F; q++)
    for (unsigned j = 0; j < MKT_NCLASSES && q != MF_COMPLETED; j++) {
      size_t k = L.ftc + mkt__ftc_q(q) * MKT_NCLASSES + j;
      mkt__mq x = mkt__fq[q];
      x.headline = 0;
      char val[64];
      if (c->nworlds > 1)
        snprintf(val, sizeof val, "%s.policy.%s", mkt_class_names[j],
                 sched_policy_name((sched_policy)c->world_policy[0]));
      else
        snprintf(val, sizeof val, "%s", mkt_class_names[j]);
      mkt__metric_set(&c->metrics[k], &c->metric_names[k], &x, "class", val);
    }
  /* per policy: QUANTITY.policy.P; paired differences: QUANTITY_vs_BASE.policy.P */
  static const mkt__mq inc = {"income_per_available_hour",
                              "USD/h",
                              "income per available GPU-hour",
                              1,
                              "provider income per available GPU-hour",
                              "income the persona's providers received (gross of slashing) / their available GPU-hours",
                              "the persona's providers' available GPU-hours",
                              "per available GPU-hour",
                              MQ_CEN_PROV};
  for (unsigned w = 0; c->nworlds > 1 && w < c->nworlds; w++)
    for (unsigned q = 0; q < L.nq; q++) {
      mkt__mq x = q < MQ_F ? mkt__fq[q] : q < MQ_F + MQ_W ? mkt__wq[q - MQ_F] : inc;
      char qn[96], pq[96], val[64];
      const char *pn = sched_policy_name((sched_policy)c->world_policy[w]);
      snprintf(val, sizeof val, "%s", pn);
      char plab[128];
      if (q >= MQ_F + MQ_W) { /* one quantity per persona: income_per_available_hour_katie.policy.P */
        snprintf(pq, sizeof pq, "%s_%s", inc.q, c->cfg->personas[q - MQ_F - MQ_W].name);
        snprintf(plab, sizeof plab, "%s: %s", c->cfg->personas[q - MQ_F - MQ_W].name, inc.label);
        x.q = pq;
        x.label = plab;
      }
      size_t k = L.wld + (size_t)w * L.nq + q;
      mkt__metric_set_l(&c->metrics[k], &c->metric_names[k], &x, "policy", val, q >= MQ_F + MQ_W);
      if (w == 0) continue;
      snprintf(qn, sizeof qn, "%s_vs_%s", x.q, sched_policy_name((sched_policy)c->world_policy[0]));
      char lab[160];
      snprintf(lab, sizeof lab, "%s: difference from %s", x.label, sched_policy_name((sched_policy)c->world_policy[0]));
      int ratio = !strcmp(x.unit, "1") || !strcmp(x.unit, "USD/h");
      mkt__mq y = {qn,
                   x.unit,
                   ratio ? "paired difference from the first compared policy (common random numbers); NaN "
                           "where either world's ratio is undefined or infinite (nothing completed)"
                         : "paired difference from the first compared policy (common random numbers)",
                   q < MQ_F + MQ_W ? x.headline : 0,
                   lab,
                   ratio ? "value in the policy's world - value in the first compared policy's world, same "
                           "replication (common random numbers); NaN where either world's ratio is undefined or "
                           "infinite (its denominator is 0, e.g. nothing completed): the differences of the totals "
                           "(spend, useful_gpu_h, jobs_unserved, deadline_misses) are always defined"
                         : "value in the policy's world - value in the first compared policy's world, same "
                           "replication (common random numbers); a total, defined whatever either world did",
                   x.over,
                   x.weight,
                   x.censored};
      k = L.dif + (size_t)(w - 1) * L.nq + q;
      mkt__metric_set_l(&c->metrics[k], &c->metric_names[k], &y, "policy", val, 1);
    }
  /* speed.gpu.MODEL: what the core runs jobs at (reference GPU = 1) */
  static const mkt__mq spd = {"speed",
                              "1",
                              "work units per second relative to market.reference_gpu (FP16 spec, or measured: "
                              "market.calibration, market.score_tflops)",
                              0,
                              "speed relative to the reference GPU",
                              "the GPU model's FP16 throughput (spec or measured) / the reference GPU's",
                              "GPU models",
                              "none (an input of the run)",
                              MQ_CEN_NONE};
  for (size_t g = 0; g < c->ngpus; g++)
    mkt__metric_set(&c->metrics[L.spd + g], &c->metric_names[L.spd + g], &spd, "gpu", c->gpus[g].name);
  /* trace_rows.outcome.used / .pending / ...: what became of every row of the traces */
  static const mkt__mq trq = {"trace_rows",
                              "rows",
                              "trace rows replayed (used) or not, by reason",
                              0,
                              "trace rows",
                              "rows of the traces replayed (used), or not replayed, by reason",
                              "trace rows",
                              "count",
                              "every row is counted: used, or not replayed with its reason"};
  for (size_t k = 0; c->ntrace && k <= MKT_TR_NREASONS; k++)
    mkt__metric_set(&c->metrics[L.trc + k], &c->metric_names[L.trc + k], &trq, "outcome",
                    k ? mkt_trace_reason_names[k - 1] : "used");
  for (size_t q = 0; q < MQ_ST; q++)
    for (unsigned i = 0; i < MKT_NSTRATS; i++) {
      size_t k = L.str + q * MKT_NSTRATS + i;
      mkt__metric_set(&c->metrics[k], &c->metric_names[k], &mkt__stq[q], "strategy", mkt_strat_names[i]);
    }
  for (size_t q = 0; q < MQ_PP; q++)
    for (unsigned p = 0; p < c->npers; p++)
      for (unsigned i = 0; i < MKT_NPOOLS; i++) {
        size_t k = L.pp + (q * c->npers + p) * MKT_NPOOLS + i;
        char val[96];
        snprintf(val, sizeof val, "%s.pool.%s", c->cfg->personas[p].name, mkt_pool_names[i]);
        mkt__metric_set(&c->metrics[k], &c->metric_names[k], &mkt__ppq[q], "persona", val);
      }
  for (size_t k = 0; k < L.n; k++)
    if (!c->metric_names[k]) return SIM_ENOMEM;
  return SIM_OK;
}

static const sim_metric_def *mkt__model_metrics(const sim_model *m, unsigned *n) {
  const mkt_ctx *c = m->ctx;
  *n = c->nmetrics;
  return c->metrics;
}

static double mkt__div(double a, double b) { return b != 0 ? a / b : NAN; }
/* Money spent per unit of result (useful GPU-hour, completed job): infinite when money was spent
 * and nothing came of it, NaN only when neither happened (the catalogue says so). */
static double mkt__spend_per(double spend, double result) {
  return result > 0 ? spend / result : spend > 0 ? INFINITY : NAN;
}

/* The ledger identity of one world, in musd (docs/market.md, "The ledger"):
 *   client_cost_total = provider_income_net + platform_revenue + treasury_change + gp_node_fees
 *                       + node_operator_fees + income_in_transit
 * from the ledger's balances L, the money flows mf (MKT_S_MONEY), the per-pool income and fees.
 * 0 when it holds exactly; else 1 with both sides in msg (when msg is not NULL). */
static int mkt__identity(const int64_t *L, const int64_t *mf, const int64_t *pool, const int64_t *fees, char *msg,
                         size_t len) {
  int64_t inc = 0, fee = 0;
  for (int i = 0; i < MKT_NPOOLS; i++) {
    inc += pool[i * MKT_NPCOLS + MKT_P_INCOME];
    fee += fees[i];
  }
  int64_t net = inc - mf[MKT_M_SLASHED], tchange = L[MKT_A_TREASURY] - mf[MKT_M_SEED];
  int64_t transit = mf[MKT_M_RENTAL_PAID] + mf[MKT_M_STAKING_PAID] - inc;
  int64_t rhs = net + fee + tchange + L[MKT_A_NODES] + L[MKT_A_OPERATORS] + transit;
  if (-L[MKT_A_CLIENTS] == rhs) return 0;
  if (msg)
    snprintf(msg, len,
             "money identity fails: client cost %lld musd != provider income net %lld (gross %lld - slashed %lld) + "
             "platform fees %lld + treasury change %lld + node fees %lld + operator fees %lld + in transit %lld = %lld",
             (long long)-L[MKT_A_CLIENTS], (long long)net, (long long)inc, (long long)mf[MKT_M_SLASHED], (long long)fee,
             (long long)tchange, (long long)L[MKT_A_NODES], (long long)L[MKT_A_OPERATORS], (long long)transit,
             (long long)rhs);
  return 1;
}

/* The fault-tolerance quantities (mkt__fq order) of classes [k0, k1) from a jobs series. */
static void mkt__ft_values(const int64_t *jobs, int k0, int k1, double *v) {
  double sum[MKT_NJCOLS] = {0};
  for (int k = k0; k < k1; k++)
    for (int i = 0; i < MKT_NJCOLS; i++) sum[i] += (double)jobs[k * MKT_NJCOLS + i];
  double spend = sum[MKT_J_COST] / MKT_MUSD, useful = sum[MKT_J_USEFUL_MS] / 3.6e6;
  v[MF_GOODPUT] = mkt__div(sum[MKT_J_USEFUL_MS], sum[MKT_J_GPU_MS]);
  v[MF_LOST] = sum[MKT_J_LOST_MS] / 3.6e6;
  v[MF_MISSED] = sum[MKT_J_MISSED];
  /* money spent on no useful work: +inf (the limit), not NaN; nothing spent, nothing done: NaN */
  v[MF_SPEND_PER_USEFUL] = mkt__spend_per(spend, useful);
  v[MF_DONE_COST_PER_USEFUL] = mkt__div(sum[MKT_J_DONE_COST] / MKT_MUSD, useful);
  v[MF_STANDBY] = sum[MKT_J_STANDBY_MS] / 3.6e6;
  v[MF_CKPT] = sum[MKT_J_CKPT_MS] / 3.6e6;
  v[MF_COMPLETED] = mkt__div(sum[MKT_J_DONE], sum[MKT_J_SUBMITTED]);
  v[MF_SPEND] = spend;
  v[MF_USEFUL] = useful;
  v[MF_UNSERVED] = sum[MKT_J_BALKED] + sum[MKT_J_ABANDONED] + sum[MKT_J_QUEUED_END];
  v[MF_COMM] = mkt__div(sum[MKT_J_COMM_MS], sum[MKT_J_GPU_MS] - sum[MKT_J_STANDBY_MS]);
}

/* The overall scalars from counters, the ledger and the money flows (world 0): prices, money
 * (the ledger identity's parts), the jobs under way at the end; SC is the scalar block, its
 * served, balked and reneged already counted. */
static void mkt__scalars(const mkt_ctx *c, const sim_results *r, double *SC) {
  const int64_t *pool = r->series[MKT_S_POOL], *jobs = r->series[MKT_S_JOBS];
  double ps = 0, pn = 0;
  for (size_t b = 0; b < r->nbins[MKT_S_PRICE_SUM]; b++)
    for (size_t g = 0; g < c->ngpus; g++) {
      ps += (double)r->series[MKT_S_PRICE_SUM][b * c->ngpus + g];
      pn += (double)r->series[MKT_S_PRICE_N][b * c->ngpus + g];
    }
  SC[MX_PRICE_UNW] = mkt__div(ps / MKT_MUSD, pn);
  double gpu_ms = 0, avail_ms = 0;
  for (int k = 0; k < MKT_NCLASSES; k++) {
    const int64_t *v = jobs + k * MKT_NJCOLS;
    gpu_ms += (double)v[MKT_J_GPU_MS];
    SC[MX_FAILED] = (k ? SC[MX_FAILED] : 0) + (double)v[MKT_J_FAILED];
    SC[MX_QUEUED_END] = (k ? SC[MX_QUEUED_END] : 0) + (double)v[MKT_J_QUEUED_END];
    SC[MX_RUNNING_END] = (k ? SC[MX_RUNNING_END] : 0) + (double)v[MKT_J_RUNNING_END];
  }
  SC[MX_UNSERVED] = SC[MX_BALKED] + SC[MX_RENEGED] + SC[MX_QUEUED_END];
  for (int i = 0; i < MKT_NPOOLS; i++) avail_ms += (double)pool[i * MKT_NPCOLS + MKT_P_AVAIL_MS];
  const int64_t *Lg = r->series[MKT_S_LEDGER], *mf = r->series[MKT_S_MONEY];
  double fees = 0;
  for (int i = 0; i < MKT_NPOOLS; i++) fees += (double)r->series[MKT_S_FEES][i];
  SC[MX_PLATFORM] = fees / MKT_MUSD;
  SC[MX_CLIENT_COST] = -(double)Lg[MKT_A_CLIENTS] / MKT_MUSD;
  SC[MX_PRICE] = mkt__div(SC[MX_CLIENT_COST], gpu_ms / 3.6e6);
  double inc = 0;
  for (int i = 0; i < MKT_NPOOLS; i++) inc += (double)pool[i * MKT_NPCOLS + MKT_P_INCOME];
  SC[MX_INCOME_GROSS] = inc / MKT_MUSD;
  SC[MX_SLASHED] = (double)mf[MKT_M_SLASHED] / MKT_MUSD;
  SC[MX_INCOME_NET] = (inc - (double)mf[MKT_M_SLASHED]) / MKT_MUSD;
  SC[MX_INCOME_AVAIL] = mkt__div(SC[MX_INCOME_GROSS], avail_ms / 3.6e6);
  SC[MX_STAKING_PAID] = (double)mf[MKT_M_STAKING_PAID] / MKT_MUSD;
  SC[MX_SEED] = (double)mf[MKT_M_SEED] / MKT_MUSD;
  SC[MX_TREASURY] = (double)Lg[MKT_A_TREASURY] / MKT_MUSD;
  SC[MX_TREASURY_CHANGE] = (double)(Lg[MKT_A_TREASURY] - mf[MKT_M_SEED]) / MKT_MUSD;
  SC[MX_NODE_FEES] = (double)Lg[MKT_A_NODES] / MKT_MUSD;
  SC[MX_OPERATOR_FEES] = (double)Lg[MKT_A_OPERATORS] / MKT_MUSD;
  SC[MX_IN_TRANSIT] = (double)(mf[MKT_M_RENTAL_PAID] + mf[MKT_M_STAKING_PAID] - (int64_t)inc) / MKT_MUSD;
  double sf = 0;
  for (size_t b = 0; b < r->nbins[MKT_S_FLEX]; b++)
    sf += (double)r->series[MKT_S_FLEX][b * MKT_NFCOLS + MKT_F_SHORTFALL];
  SC[MX_SHORTFALL] = sf / MKT_MUSD;
  if (r->nrecords[MKT_T_PROVIDERS]) {
    const mkt_prov_rec *pr = (const mkt_prov_rec *)r->tables[MKT_T_PROVIDERS];
    double sw = 0;
    for (size_t k = 0; k < r->nrecords[MKT_T_PROVIDERS]; k++) sw += pr[k].world == 0 ? pr[k].switches : 0;
    SC[MX_SWITCHES] = sw;
  }
  int64_t sum = 0;
  int of = 0;
  for (int a = 0; a < MKT_NACCOUNTS; a++) of |= __builtin_add_overflow(sum, Lg[a], &sum);
  SC[MX_CONSERVED] = (!of && sum == 0) ? 1.0 : 0.0;
  SC[MX_IDENTITY] = mkt__identity(Lg, mf, r->series[MKT_S_POOL], r->series[MKT_S_FEES], NULL, 0) == 0;
}

/* Per persona: income per available hour, the income spread over providers and days, utilization;
 * per persona and pool: mean, sample sd (two passes) and CV of income (baseline world). */
static void mkt__compute_personas(const mkt_ctx *c, const sim_results *r, double *out, mkt__mlayout X) {
  double *P = out + X.pers;
  const unsigned np = c->npers;
  const int64_t *per = r->series[MKT_S_PERSONA];
  for (unsigned pi = 0; pi < np; pi++) {
    const int64_t *v = per + pi * MKT_NPCOLS;
    P[0 * np + pi] = mkt__div((double)v[MKT_P_INCOME] / MKT_MUSD, (double)v[MKT_P_AVAIL_MS] / 3.6e6);
    P[5 * np + pi] = mkt__div((double)v[MKT_P_RENTED_MS], (double)v[MKT_P_AVAIL_MS]);
    if (r->nrecords[MKT_T_PROVIDERS]) {
      const mkt_prov_rec *pr = (const mkt_prov_rec *)r->tables[MKT_T_PROVIDERS];
      double n = 0, s = 0, s2 = 0, cvn = 0, cvs = 0;
      for (size_t k = 0; k < r->nrecords[MKT_T_PROVIDERS]; k++) {
        if (pr[k].world != 0 || strncmp(pr[k].persona, c->cfg->personas[pi].name, sizeof pr[k].persona)) continue;
        n++;
        s += pr[k].income_usd;
        s2 += pr[k].income_usd * pr[k].income_usd;
        if (!isnan(pr[k].daily_income_cv)) {
          cvn++;
          cvs += pr[k].daily_income_cv;
        }
      }
      if (n > 0) {
        double mean = s / n, var = n > 1 ? (s2 - n * mean * mean) / (n - 1) : 0;
        P[1 * np + pi] = mean;
        P[2 * np + pi] = sqrt(var > 0 ? var : 0);
        P[3 * np + pi] = mkt__div(P[2 * np + pi], mean);
        P[4 * np + pi] = mkt__div(cvs, cvn);
      }
    }
  }
  /* per persona x pool at the end (baseline world): mean, sample sd (two passes) and CV of income */
  if (r->nrecords[MKT_T_PROVIDERS]) {
    const mkt_prov_rec *pr = (const mkt_prov_rec *)r->tables[MKT_T_PROVIDERS];
    const size_t ng = (size_t)np * MKT_NPOOLS, nrec = r->nrecords[MKT_T_PROVIDERS];
    double gn[MKT_MAX_PERSONAS * MKT_NPOOLS] = {0}, gs[MKT_MAX_PERSONAS * MKT_NPOOLS] = {0},
                                 gd[MKT_MAX_PERSONAS * MKT_NPOOLS] = {0};
    for (int pass = 0; pass < 2; pass++)
      for (size_t k = 0; k < nrec; k++) {
        if (pr[k].world != 0) continue;
        int pi = -1, qi = -1;
        for (unsigned i = 0; i < np && pi < 0; i++)
          if (!strncmp(pr[k].persona, c->cfg->personas[i].name, sizeof pr[k].persona)) pi = (int)i;
        for (int i = 0; i < MKT_NPOOLS && qi < 0; i++)
          if (!strncmp(pr[k].pool, mkt__pools[i]->name, sizeof pr[k].pool)) qi = i;
        if (pi < 0 || qi < 0) continue;
        size_t g = (size_t)pi * MKT_NPOOLS + (size_t)qi;
        if (pass == 0) {
          gn[g]++;
          gs[g] += pr[k].income_usd;
        } else {
          double e = pr[k].income_usd - gs[g] / gn[g];
          gd[g] += e * e;
        }
      }
    double *PP = out + X.pp;
    for (size_t g = 0; g < ng; g++) {
      double mean = mkt__div(gs[g], gn[g]), sd = gn[g] > 1 ? sqrt(gd[g] / (gn[g] - 1)) : NAN;
      PP[0 * ng + g] = mean;
      PP[1 * ng + g] = sd;
      PP[2 * ng + g] = mkt__div(sd, mean);
    }
  }
}

/* Fault tolerance per class (baseline world) and, when policies are compared, per world and the
 * worlds' differences to the first. */
static void mkt__compute_worlds(const mkt_ctx *c, const sim_results *r, double *out, mkt__mlayout X) {
  for (int k = 0; k < MKT_NCLASSES; k++) {
    double v[MQ_F];
    mkt__ft_values(r->series[MKT_S_JOBS], k, k + 1, v);
    for (size_t q = 0; q < MQ_F; q++)
      if (q != MF_COMPLETED) out[X.ftc + mkt__ftc_q(q) * MKT_NCLASSES + k] = v[q];
  }
  if (c->nworlds < 2) return;
  for (unsigned w = 0; w < c->nworlds; w++) {
    double *o = out + X.wld + (size_t)w * X.nq;
    mkt__ft_values(r->series[w * MKT_NSERIES + MKT_S_JOBS], 0, MKT_NCLASSES, o);
    const int64_t *pw = r->series[w * MKT_NSERIES + MKT_S_POOL], *pp = r->series[w * MKT_NSERIES + MKT_S_PERSONA];
    double inc = 0;
    for (int i = 0; i < MKT_NPOOLS; i++) inc += (double)pw[i * MKT_NPCOLS + MKT_P_INCOME];
    o[MQ_F] = inc / MKT_MUSD;
    o[MQ_F + 1] = (inc - (double)r->series[w * MKT_NSERIES + MKT_S_MONEY][MKT_M_SLASHED]) / MKT_MUSD;
    for (unsigned pi = 0; pi < c->npers; pi++)
      o[MQ_F + MQ_W + pi] = mkt__div((double)pp[pi * MKT_NPCOLS + MKT_P_INCOME] / MKT_MUSD,
                                     (double)pp[pi * MKT_NPCOLS + MKT_P_AVAIL_MS] / 3.6e6);
  }
  for (unsigned w = 1; w < c->nworlds; w++)
    for (unsigned q = 0; q < X.nq; q++) {
      /* a ratio that is infinite (money spent, nothing completed) has no difference: NaN (the
       * catalogue says so; the totals' differences are defined) */
      double a = out[X.wld + (size_t)w * X.nq + q], b = out[X.wld + q];
      out[X.dif + (size_t)(w - 1) * X.nq + q] = isfinite(a) && isfinite(b) ? a - b : NAN;
    }
}

static void mkt__compute(const sim_model *m, const sim_results *r, double *out) {
  const mkt_ctx *c = m->ctx;
  mkt__mlayout X = mkt__layout(c);
  for (size_t i = 0; i < X.n; i++) out[i] = NAN;
  double *P = out + X.pers, *PO = out + X.pool, *RG = out + X.reg, *CL = out + X.cls, *SC = out + X.scal;
  const unsigned np = c->npers, nr = c->nreg;
  const int64_t *pool = r->series[MKT_S_POOL], *jobs = r->series[MKT_S_JOBS];
  mkt__compute_personas(c, r, out, X);
  /* reactions: population (mean over days of the cumulative count), surplus, demand */
  const int64_t *rp = r->series[MKT_S_RPOOL], *pop = r->series[MKT_S_POP], *rs = r->series[MKT_S_RSTRAT];
  double popm[MKT_MAX_PERSONAS * MKT_NPOOLS] = {0};
  {
    double cum[MKT_MAX_PERSONAS * MKT_NPOOLS] = {0}, tw = 0, bw = c->series[MKT_S_POP].bin_width;
    for (size_t b = 0; b < r->nbins[MKT_S_POP]; b++) {
      double w = c->end - b * bw < bw ? c->end - b * bw : bw; /* the last day may be partial */
      if (!(w > 0)) break;
      tw += w;
      for (unsigned i = 0; i < np * MKT_NPOOLS; i++) {
        cum[i] += (double)pop[b * np * MKT_NPOOLS + i];
        popm[i] += cum[i] * w;
      }
    }
    for (unsigned i = 0; i < np * MKT_NPOOLS; i++) popm[i] = tw > 0 ? popm[i] / tw : NAN;
  }
  double submitted = 0, cs = 0, psur = 0, value = 0, pcost = 0, ent = 0, ex = 0, ann = 0, unann = 0, provs = 0;
  for (int i = 0; i < MKT_NPOOLS; i++) submitted += (double)rp[i * MKT_RP_N + MKT_RP_SUBMITTED];
  for (int i = 0; i < MKT_NPOOLS; i++) {
    const int64_t *v = pool + i * MKT_NPCOLS, *x = rp + i * MKT_RP_N;
    PO[0 * MKT_NPOOLS + i] = mkt__div((double)v[MKT_P_INCOME] / MKT_MUSD, (double)v[MKT_P_AVAIL_MS] / 3.6e6);
    PO[1 * MKT_NPOOLS + i] = mkt__div((double)v[MKT_P_RENTED_MS], (double)v[MKT_P_AVAIL_MS]);
    PO[2 * MKT_NPOOLS + i] = mkt__div((double)(v[MKT_P_AVAIL_MS] - v[MKT_P_RENTED_MS]), (double)v[MKT_P_AVAIL_MS]);
    PO[3 * MKT_NPOOLS + i] = mkt__div((double)x[MKT_RP_SUBMITTED], submitted);
    PO[4 * MKT_NPOOLS + i] = (double)(x[MKT_RP_VALUE] - x[MKT_RP_COST]) / MKT_MUSD;
    /* net of the stakes slashed in the pool (only pools with a treasury slash) */
    int64_t slashed = mkt__pools[i]->treasury ? r->series[MKT_S_MONEY][MKT_M_SLASHED] : 0;
    PO[5 * MKT_NPOOLS + i] = (double)(v[MKT_P_INCOME] - slashed - x[MKT_RP_PCOST]) / MKT_MUSD;
    PO[6 * MKT_NPOOLS + i] = (double)r->series[MKT_S_FEES][i] / MKT_MUSD;
    double pm = 0;
    for (unsigned pi = 0; pi < np; pi++) pm += popm[pi * MKT_NPOOLS + i];
    PO[7 * MKT_NPOOLS + i] = pm;
    PO[8 * MKT_NPOOLS + i] = (double)x[MKT_RP_ENTERED];
    PO[9 * MKT_NPOOLS + i] = (double)x[MKT_RP_EXITED];
    PO[10 * MKT_NPOOLS + i] =
        mkt__div((double)x[MKT_RP_UNANNOUNCED], (double)(x[MKT_RP_ANNOUNCED] + x[MKT_RP_UNANNOUNCED]));
    cs += PO[4 * MKT_NPOOLS + i];
    psur += PO[5 * MKT_NPOOLS + i];
    value += (double)x[MKT_RP_VALUE] / MKT_MUSD;
    pcost += (double)x[MKT_RP_PCOST] / MKT_MUSD;
    ent += (double)x[MKT_RP_ENTERED];
    ex += (double)x[MKT_RP_EXITED];
    ann += (double)x[MKT_RP_ANNOUNCED];
    unann += (double)x[MKT_RP_UNANNOUNCED];
    provs += pm;
  }
  for (unsigned pi = 0; pi < np; pi++) {
    double pm = 0;
    for (int i = 0; i < MKT_NPOOLS; i++) pm += popm[pi * MKT_NPOOLS + i];
    P[6 * np + pi] = pm;
  }
  for (unsigned i = 0; i < MKT_NSTRATS; i++) {
    const int64_t *x = rs + i * MKT_RS_N;
    out[X.str + 0 * MKT_NSTRATS + i] = (double)x[MKT_RS_JOBS];
    out[X.str + 1 * MKT_NSTRATS + i] = mkt__div((double)x[MKT_RS_DONE], (double)x[MKT_RS_JOBS]);
    out[X.str + 2 * MKT_NSTRATS + i] =
        mkt__div((double)(x[MKT_RS_VALUE] - x[MKT_RS_COST]) / MKT_MUSD, (double)x[MKT_RS_JOBS]);
  }
  for (unsigned g = 0; g < nr; g++) {
    double rent = 0, av = 0, dem = 0;
    for (size_t b = 0; b < r->nbins[MKT_S_RENTED]; b++) {
      rent += (double)r->series[MKT_S_RENTED][b * nr + g];
      av += (double)r->series[MKT_S_AVAIL][b * nr + g];
      dem += (double)r->series[MKT_S_DEMAND][b * nr + g];
    }
    RG[0 * nr + g] = mkt__div(rent, av);
    RG[1 * nr + g] = mkt__div(dem, av);
    const int64_t *v = r->series[MKT_S_REGION] + g * MKT_NPCOLS;
    RG[2 * nr + g] = mkt__div((double)v[MKT_P_INCOME] / MKT_MUSD, (double)v[MKT_P_AVAIL_MS] / 3.6e6);
  }
  for (int k = 0; k < MKT_NCLASSES; k++) {
    const int64_t *v = jobs + k * MKT_NJCOLS;
    CL[0 * MKT_NCLASSES + k] =
        mkt__div((double)(v[MKT_J_WAIT_MS] + v[MKT_J_UNSTARTED_WAIT_MS]) / 1000.0, (double)v[MKT_J_SUBMITTED]);
    CL[1 * MKT_NCLASSES + k] = mkt__div((double)v[MKT_J_RCOMPLETION_MS] / 1000.0, (double)v[MKT_J_SUBMITTED]);
    CL[2 * MKT_NCLASSES + k] = mkt__div((double)v[MKT_J_INTERRUPTS], (double)v[MKT_J_SUBMITTED]);
    CL[3 * MKT_NCLASSES + k] = mkt__spend_per((double)v[MKT_J_COST] / MKT_MUSD, (double)v[MKT_J_DONE]);
    CL[4 * MKT_NCLASSES + k] = mkt__div((double)v[MKT_J_DONE], (double)v[MKT_J_SUBMITTED]);
    CL[5 * MKT_NCLASSES + k] = (double)v[MKT_J_DONE];
    CL[6 * MKT_NCLASSES + k] = mkt__div((double)v[MKT_J_BALKED], (double)(v[MKT_J_SUBMITTED] + v[MKT_J_BALKED]));
    CL[7 * MKT_NCLASSES + k] = mkt__div((double)v[MKT_J_ABANDONED], (double)v[MKT_J_SUBMITTED]);
    CL[8 * MKT_NCLASSES + k] = mkt__div((double)v[MKT_J_SEEN_SUM] / MKT_MUSD, (double)v[MKT_J_SEEN_N]);
    SC[MX_SERVED] = (k ? SC[MX_SERVED] : 0) + (double)v[MKT_J_DONE];
    SC[MX_BALKED] = (k ? SC[MX_BALKED] : 0) + (double)v[MKT_J_BALKED];
    SC[MX_RENEGED] = (k ? SC[MX_RENEGED] : 0) + (double)v[MKT_J_ABANDONED];
  }
  mkt__scalars(c, r, SC);
  SC[MX_CS] = cs;
  SC[MX_PS] = psur;
  SC[MX_WELFARE] = cs + psur + SC[MX_PLATFORM] + SC[MX_TREASURY_CHANGE] + SC[MX_NODE_FEES] + SC[MX_OPERATOR_FEES] +
                   SC[MX_IN_TRANSIT];
  SC[MX_PROVIDERS] = provs;
  SC[MX_ENTERED] = ent;
  SC[MX_EXITED] = ex;
  SC[MX_UNANNOUNCED] = mkt__div(unann, ann + unann);
  (void)value, (void)pcost;
  for (size_t g = 0; g < c->ngpus; g++) out[X.spd + g] = c->speed[g];
  for (size_t k = 0; c->ntrace && k <= MKT_TR_NREASONS; k++) out[X.trc + k] = (double)c->trace_rows[k];
  {
    double v[MQ_F];
    mkt__ft_values(r->series[MKT_S_JOBS], 0, MKT_NCLASSES, v);
    SC[MX_COMM] = v[MF_COMM];
  }
  mkt__compute_worlds(c, r, out, X);
}

/* End-of-run checks, from integer records only, in every world: the ledger sums to zero; the
 * providers' table agrees with the providers' account and with the per-persona income counters;
 * the jobs' billed costs agree with the clients' account; no job's cost is negative, and none paid
 * more per GPU-hour than its value (fixed, flexible) or its bid (bidding): individual
 * rationality, checked on every run. */
static int mkt__check(const sim_model *m, const sim_results *r, char *msg, size_t len) {
  const mkt_ctx *c = m->ctx;
  for (unsigned w = 0; w < c->nworlds; w++) {
    const char *wn = c->world_policy[w] >= 0 ? sched_policy_name((sched_policy)c->world_policy[w]) : "";
    const int64_t *L = r->series[w * MKT_NSERIES + MKT_S_LEDGER];
    int64_t sum = 0;
    int of = 0;
    for (int a = 0; a < MKT_NACCOUNTS; a++) of |= __builtin_add_overflow(sum, L[a], &sum);
    if (of || sum != 0) {
      snprintf(msg, len,
               "%s%smoney not conserved: ledger sums to %lld musd (clients %lld, providers %lld, platform "
               "%lld, treasury %lld, stakes %lld, transit %lld, nodes %lld, operators %lld)",
               wn, *wn ? ": " : "", (long long)sum, (long long)L[0], (long long)L[1], (long long)L[2], (long long)L[3],
               (long long)L[4], (long long)L[5], (long long)L[6], (long long)L[7]);
      return 1;
    }
    char why[512];
    if (mkt__identity(L, r->series[w * MKT_NSERIES + MKT_S_MONEY], r->series[w * MKT_NSERIES + MKT_S_POOL],
                      r->series[w * MKT_NSERIES + MKT_S_FEES], why, sizeof why)) {
      snprintf(msg, len, "%s%s%s", wn, *wn ? ": " : "", why);
      return 1;
    }
    /* what clients paid, counted per pool and per bidding strategy, is the clients' account */
    const int64_t *rp = r->series[w * MKT_NSERIES + MKT_S_RPOOL], *rs = r->series[w * MKT_NSERIES + MKT_S_RSTRAT];
    int64_t pc = 0, sc = 0, bc = 0; /* bc: in the pools where clients bid */
    for (int i = 0; i < MKT_NPOOLS; i++) pc += rp[i * MKT_RP_N + MKT_RP_COST];
    for (int i = 0; i < MKT_NPOOLS; i++) bc += mkt__pools[i]->bids ? rp[i * MKT_RP_N + MKT_RP_COST] : 0;
    for (int i = 0; i < MKT_NSTRATS; i++) sc += rs[i * MKT_RS_N + MKT_RS_COST];
    if (pc != -L[MKT_A_CLIENTS] || sc != bc) {
      snprintf(msg, len,
               "%s%sclients' cost by pool %lld musd (bidding %lld, by strategy %lld) disagrees with the "
               "clients' account %lld",
               wn, *wn ? ": " : "", (long long)pc, (long long)bc, (long long)sc, (long long)-L[MKT_A_CLIENTS]);
      return 1;
    }
    /* the platform's account = fees collected - the treasuries' seed funding */
    int64_t fees = 0, seeds = (int64_t)c->nreg * (int64_t)llround(c->cfg->flexible.seed_usd * MKT_MUSD);
    for (int i = 0; i < MKT_NPOOLS; i++) fees += r->series[w * MKT_NSERIES + MKT_S_FEES][i];
    if (L[MKT_A_PLATFORM] != fees - seeds) {
      snprintf(msg, len, "%s%splatform account %lld musd != fees %lld - treasury seeds %lld", wn, *wn ? ": " : "",
               (long long)L[MKT_A_PLATFORM], (long long)fees, (long long)seeds);
      return 1;
    }
    if (c->cfg->record_providers) {
      const mkt_prov_rec *pr = (const mkt_prov_rec *)r->tables[MKT_T_PROVIDERS];
      int64_t bal = 0, inc = 0, pinc = 0;
      size_t n = 0;
      for (size_t k = 0; k < r->nrecords[MKT_T_PROVIDERS]; k++) {
        if (pr[k].world != (int32_t)w) continue;
        n++;
        bal += pr[k].balance_musd;
        inc += pr[k].income_musd;
      }
      for (unsigned p = 0; p < c->npers; p++)
        pinc += r->series[w * MKT_NSERIES + MKT_S_PERSONA][p * MKT_NPCOLS + MKT_P_INCOME];
      if (n != c->nprov || bal != L[MKT_A_PROVIDERS] || inc != pinc) {
        snprintf(msg, len,
                 "%s%sprovider records (%zu of %llu, balance %lld, income %lld) disagree with the ledger "
                 "(providers %lld) or the persona counters (income %lld)",
                 wn, *wn ? ": " : "", n, (unsigned long long)c->nprov, (long long)bal, (long long)inc,
                 (long long)L[MKT_A_PROVIDERS], (long long)pinc);
        return 1;
      }
    }
    if (c->cfg->record_jobs) {
      const mkt_job_rec *jr = (const mkt_job_rec *)r->tables[MKT_T_JOBS];
      int64_t cost = 0;
      for (size_t k = 0; k < r->nrecords[MKT_T_JOBS]; k++) {
        if (jr[k].world != (int32_t)w) continue;
        cost += jr[k].cost_musd;
        const mkt__pool_ops *po = mkt__pool_named(jr[k].pool, sizeof jr[k].pool);
        int64_t limit = po && po->bids ? jr[k].bid_musd_h : jr[k].value_musd_h;
        int64_t gpu_ms = (int64_t)llround(jr[k].gpu_h * 3.6e6);
        /* 1 musd of slack per GPU-hour: gpu_h went through a double */
        if (jr[k].cost_musd < 0 || jr[k].cost_musd > mkt_cost(limit, gpu_ms) + (int64_t)jr[k].gpu_h + 1) {
          snprintf(msg, len, "%s%sjob %llu (%s pool) cost %lld musd for %.6f GPU-h: %s", wn, *wn ? ": " : "",
                   (unsigned long long)jr[k].id, jr[k].pool, (long long)jr[k].cost_musd, jr[k].gpu_h,
                   jr[k].cost_musd < 0 ? "negative" : "more than its value or bid per GPU-hour");
          return 1;
        }
      }
      if (cost != -L[MKT_A_CLIENTS]) {
        snprintf(msg, len, "%s%sjobs' billed cost %lld musd disagrees with the clients' account %lld", wn,
                 *wn ? ": " : "", (long long)cost, (long long)L[MKT_A_CLIENTS]);
        return 1;
      }
    }
  }
  return 0;
}

/* Memory of one replication, from the keys: per provider its LP (engine header 72 B, state
 * sizeof the provider LP, two pending events of 32 B, its shared record), plus per GPU what the
 * pools and their scheduling cores hold (host records, core GPU records and queues, jobs in flight,
 * message payloads): 640 B, measured: `spotlab bench market --gpus 1000000 --days 7` holds 1003 B
 * per single-GPU provider (docs/history/performance-log.md), of which the LP part is 360 B. ASSUMPTION: hosts
 * with several GPUs need the per-GPU part per GPU (an upper bound: part of it is per host). Times
 * the compared policies' worlds. */
static double mkt__memory_estimate(const void *vcfg) {
  const mkt_config *cfg = vcfg;
  static const double counts[4] = {1, 2, 4, 8};
  double bytes = 0;
  for (size_t r = 0; r < cfg->nregions; r++) {
    const mkt_region_cfg *g = &cfg->regions[r];
    double ps = 0, mean = 0;
    for (size_t k = 0; k < g->ngpp && k < 4; k++) ps += g->gpus_per_provider[k];
    for (size_t k = 0; k < g->ngpp && k < 4; k++) mean += counts[k] * g->gpus_per_provider[k] / (ps > 0 ? ps : 1);
    /* the state of its LP type: a line more for the personas that review (persona_share-weighted) */
    double sh = 0, state = 0;
    for (size_t k = 0; k < g->npersona_share && k < cfg->npersonas; k++) {
      sh += g->persona_share[k];
      state += g->persona_share[k] *
               (double)mkt__lptypes[mkt__persona_reviews(cfg, &cfg->personas[k]) ? MKT__LP_PROV_RV : MKT__LP_PROV]
                   .state_size;
    }
    bytes += (double)g->providers * (72.0 + (sh > 0 ? state / sh : 0) + 64.0 + sizeof(mkt_pstat) + 640.0 * mean);
  }
  int pol[MKT_MAX_WORLDS];
  char tok[96];
  int nw = mkt__parse_policies(cfg->compare_policies, pol, tok, sizeof tok);
  return bytes * (nw > 1 ? nw : 1);
}

const sim_model_class mkt_class = {
    "market",
    "decentralized GPU marketplace: providers with personas and churn, fixed/bidding/flexible pools",
    mkt_params,
    sizeof(mkt_config),
    mkt__validate,
    mkt__build_class,
    mkt__destroy,
    NULL, /* the metric list depends on the scenario: mkt__model_metrics */
    0,
    mkt__compute,
    mkt__check,
    mkt__model_metrics,
    mkt__memory_estimate,
};
