/* phold.h - PHOLD, the standard benchmark model of parallel discrete-event engines.
 *
 * N LPs each start with `start` events. Handling an event schedules one new event at
 * now + lookahead + Exp(mean) on the same LP, or, with probability `remote`, on an LP drawn
 * uniformly (Fujimoto, "Performance of Time Warp under synthetic workloads", 1990; the variant of
 * ../shared/bench/phold_ref.c and ROSS's models/phold). Each LP records how many events it handled
 * and a hash of their (time, source) sequence: two runs agree on every LP's hash only if every LP
 * saw the same events in the same order, which is what the determinism tests compare.
 *
 * With `groups` G > 0 the LPs are G blocks of consecutive ids (the engine's groups, sim.h): a remote
 * event's LP is drawn in the sender's block, and with probability `cross` (of remote events) in
 * any block, `cross_delay` later. The engine's paths for a model made of regions: each rank owns
 * whole blocks, and windows span lookahead + cross_delay (all of the run when cross is 0).
 */
#ifndef MODELS_PHOLD_H
#define MODELS_PHOLD_H

#include "sim/model_class.h"
#include "sim/sim.h"

#include <math.h>

typedef struct phold_config {
  int64_t lps;        /* logical processes */
  int64_t start;      /* initial events per LP */
  double lookahead;   /* s */
  double mean;        /* s, mean of the exponential part of the delay */
  double remote;      /* probability that an event goes to a uniformly drawn LP */
  int64_t groups;     /* 0, or blocks of LPs whose remote events stay in the block */
  double cross;       /* with groups: probability that a remote event goes to any LP */
  double cross_delay; /* s, added to the delay of those */
} phold_config;

typedef struct phold_lp_record {
  uint64_t id;
  uint64_t events;
  uint64_t hash;
} phold_lp_record;

/* The exponential part of a delay, Exp(mean), drawn as -mean * log(1 - u) with the engine's inline
 * uniform (see phold.c: the same quantity as gsl_ran_exponential's -mean * log1p(-u), and the bare
 * heap loop's draw). */
static inline double phold_exp_draw(gsl_rng *r, double mean) { return -mean * log(1.0 - sim_rng_uniform(r)); }

extern const sim_model_class phold_class;
extern const sim_param phold_params[];

/* Fills `m` for config `c` and end time `end` (no allocation; `c` must outlive `m`). */
void phold_model_init(sim_model *m, const phold_config *c, sim_time end);

#endif
