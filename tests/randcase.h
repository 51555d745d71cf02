/* randcase.h - what the random-case tests share (test_auction.c, test_strategy.c): a local
 * generator with no global state, and failure counting that describes only the first failure, so
 * that a broken property prints one line, not thousands. Include after <CUnit/CUnit.h>. */
#ifndef TESTS_RANDCASE_H
#define TESTS_RANDCASE_H

#include <stdint.h>
#include <stdio.h>

/* splitmix64 (Steele, Lea & Flood 2014) */
typedef struct rng {
  uint64_t s;
} rng;
static inline uint64_t rng_next(rng *r) {
  uint64_t z = (r->s += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
/* uniform integer in [lo, hi] */
static inline int64_t rng_int(rng *r, int64_t lo, int64_t hi) {
  return lo + (int64_t)(rng_next(r) % (uint64_t)(hi - lo + 1));
}
/* uniform in [0, 1) */
static inline double rng_unif(rng *r) { return (double)(rng_next(r) >> 11) * 0x1.0p-53; }

typedef struct chk {
  long fails;
  char first[400];
} chk;
#define CHECK(c, cond, ...)                                                                                            \
  do {                                                                                                                 \
    if (!(cond)) {                                                                                                     \
      if ((c)->fails++ == 0) snprintf((c)->first, sizeof(c)->first, __VA_ARGS__);                                      \
    }                                                                                                                  \
  } while (0)
static inline void chk_report(const chk *c, const char *what) {
  if (c->fails) printf("\n  %s: %ld failures, first: %s\n", what, c->fails, c->first);
  CU_ASSERT_EQUAL(c->fails, 0);
}

#endif
