/* bigmem.h - large arrays on transparent huge pages. A million-GPU market indexes a few hundred
 * MB of records (LP records and states, the core's GPUs and jobs, the calendar's chunks) at
 * random, and with 4 KiB pages most of those loads miss the TLB as well as the cache: at 1M GPUs
 * the prefetch of the next provider's state was the market's hottest instruction (perf,
 * docs/history/performance-log.md). Where the kernel gives huge pages on request (transparent_hugepage
 * "madvise", the Debian default), sim_bigmem_advise asks for them on the whole 2 MiB pages inside
 * a block; elsewhere it does nothing. Only the memory's mapping changes, never its contents, so
 * results are the same with and without it.
 *
 * Header-only and dependency-free, so that the engine, the scheduling core (which links no
 * engine) and the models share it. SPOTLAB_HUGEPAGES=0 in the environment turns it off (for an
 * A/B measurement; a row of the engine's switches, sim/engine_opts.c, which `spotlab` checks). */
#ifndef SIM_BIGMEM_H
#define SIM_BIGMEM_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#if defined(__linux__)
#include <sys/mman.h>
#endif

#define SIM_BIGMEM_MIN ((size_t)4 << 20) /* blocks below 4 MiB hold at most one huge page: left alone */
#define SIM_BIGMEM_PAGE ((uintptr_t)2 << 20)

static inline void sim_bigmem_advise(void *p, size_t n) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  if (!p || n < SIM_BIGMEM_MIN) return; /* a large block's allocation is rare: getenv each time */
  const char *v = getenv("SPOTLAB_HUGEPAGES");
  if (v && !strcmp(v, "0")) return;
  uintptr_t a = ((uintptr_t)p + SIM_BIGMEM_PAGE - 1) & ~(SIM_BIGMEM_PAGE - 1);
  uintptr_t b = ((uintptr_t)p + n) & ~(SIM_BIGMEM_PAGE - 1);
  if (b > a) (void)madvise((void *)a, b - a, MADV_HUGEPAGE); /* advice: a refusal changes nothing */
#else
  (void)p, (void)n;
#endif
}

/* realloc, then the advice for the block it returns (a large block may have moved). */
static inline void *sim_bigmem_realloc(void *p, size_t n) {
  void *q = realloc(p, n);
  if (q) sim_bigmem_advise(q, n);
  return q;
}
/* The same for a table of cache-line records that must start on a line: *block is the allocated
 * block (NULL at first; free it, not the table), `table` the table inside it (NULL at first), `old`
 * and `n` its bytes before and after. glibc starts a large block 16 bytes into its first page, so
 * a table at the block's start would have every 64-byte record straddle two lines. Returns the
 * new table (at most 63 bytes into the block), or NULL with the old one untouched. */
static inline void *sim_bigmem_realloc_lines(void **block, void *table, size_t old, size_t n) {
  if (n > SIZE_MAX - 63) return NULL;
  size_t off = table ? (size_t)((char *)table - (char *)*block) : 0;
  char *q = (char *)realloc(*block, n + 63);
  if (!q) return NULL;
  size_t noff = (size_t)(-(uintptr_t)q & 63);
  if (table && noff != off) memmove(q + noff, q + off, old < n ? old : n); /* moved to another offset */
  *block = q;
  sim_bigmem_advise(q, n + 63);
  return q + noff;
}

#endif
