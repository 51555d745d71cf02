/* xoshiro.h - the one copy of spotlab's generator and its seeder, header-only and dependency-free
 * so that the engine's streams (sim.h, rng.c) and the scheduling core (which links no engine) draw
 * with the same code.
 *
 * xoshiro256** (Blackman & Vigna, "Scrambled linear pseudorandom number generators", ACM TOMS
 * 2021): 256 bits of state, period 2^256 - 1. splitmix64 (Steele, Lea & Flood, "Fast splittable
 * pseudorandom number generators", OOPSLA 2014): the seeder its authors recommend. */
#ifndef SIM_XOSHIRO_H
#define SIM_XOSHIRO_H

#include <stdint.h>

/* The next output of the state s[0..3] (never all zero), advancing it. */
static inline uint64_t sim_xoshiro_next(uint64_t *s) {
  const uint64_t x = s[1] * 5, result = ((x << 7) | (x >> 57)) * 9, t = s[1] << 17;
  s[2] ^= s[0];
  s[3] ^= s[1];
  s[1] ^= s[2];
  s[0] ^= s[3];
  s[2] ^= t;
  s[3] = (s[3] << 45) | (s[3] >> 19);
  return result;
}

/* The next splitmix64 output of the counter *x, advancing it. */
static inline uint64_t sim_splitmix64(uint64_t *x) {
  uint64_t z = (*x += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

#endif
