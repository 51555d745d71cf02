/* rng.c - the engine's random streams: xoshiro256** as a GSL generator type, seeded per stream.
 *
 * Every LP owns one stream whose 256-bit state is derived from (run seed, LP id) alone by
 * splitmix64, so an LP draws the same numbers whichever rank or thread runs it. The generator is
 * xoshiro256** (Blackman & Vigna, "Scrambled linear pseudorandom number generators", ACM TOMS
 * 2021): 32 bytes of state (an mt19937 is 2.5 KiB, too much for a million LPs), period 2^256-1,
 * passes BigCrush. Wrapping it as a gsl_rng_type lets models use every gsl_ran_* distribution.
 */
#include "sim/sim.h"

#include <string.h>

typedef struct {
  uint64_t s[4];
} sim__xo_state;

static inline uint64_t sim__rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

static inline uint64_t sim__xo_next(sim__xo_state *st) {
  gsl_rng r = {sim_rng_xoshiro, st};
  return sim_rng_next(&r); /* sim/xoshiro.h: the one copy of the generator */
}

static void sim__xo_fill(sim__xo_state *st, uint64_t x) {
  for (int i = 0; i < 4; i++) st->s[i] = sim_splitmix64(&x);
  if (!(st->s[0] | st->s[1] | st->s[2] | st->s[3])) st->s[0] = 1; /* all-zero is the one bad state */
}

static void sim__xo_set(void *state, unsigned long seed) { sim__xo_fill(state, (uint64_t)seed); }
static unsigned long sim__xo_get(void *state) { return (unsigned long)sim__xo_next(state); }
/* The top 53 bits as a double in [0, 1). */
static double sim__xo_get_double(void *state) { return (double)(sim__xo_next(state) >> 11) * 0x1.0p-53; }

static const gsl_rng_type sim__xo_type = {
    "xoshiro256**", (unsigned long)UINT64_MAX, 0, sizeof(sim__xo_state), sim__xo_set, sim__xo_get, sim__xo_get_double};
const gsl_rng_type *sim_rng_xoshiro = &sim__xo_type;

void sim_rng_seed_stream(gsl_rng *r, uint64_t seed, uint64_t stream) {
  /* Two rounds of splitmix64 over (seed, stream): neighbouring ids give unrelated states. */
  uint64_t x = seed;
  uint64_t a = sim_splitmix64(&x);
  uint64_t y = stream ^ a;
  uint64_t b = sim_splitmix64(&y);
  sim__xo_fill((sim__xo_state *)r->state, a ^ sim__rotl(b, 17) ^ (stream * 0xD1B54A32D192ED03ull));
}

uint64_t sim_rep_seed(uint64_t base_seed, unsigned rep) {
  if (rep == 0) return base_seed; /* replication 0 runs the seed the user gave */
  uint64_t x = base_seed ^ ((uint64_t)rep * 0xA0761D6478BD642Full);
  return sim_splitmix64(&x);
}
