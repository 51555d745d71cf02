/* mkt_pool.c - the pools' table, one descriptor each (pool_*.c), in the order of mkt_pool_names and
 * the pool enum (mkt_model.h), and the look-ups by role and by name. What differs between pools is
 * in the descriptor's hooks and fields (mkt__pool_ops), never in a test of a pool's identity. */
#include "models/market/mkt_internal.h"

const mkt__pool_ops *mkt__pools[MKT_NPOOLS] = {&mkt__pool_fixed, &mkt__pool_bidding, &mkt__pool_flexible};
_Static_assert(MKT_POOL_FIXED == 0 && MKT_POOL_BIDDING == 1 && MKT_POOL_FLEX == 2 && MKT_NPOOLS == 3,
               "mkt__pools follows the pool enum");

const mkt__pool_ops *mkt__pool_register(unsigned pool, const mkt__pool_ops *ops) {
  if (pool >= MKT_NPOOLS || !ops || !ops->name || !ops->gpu_price || !ops->submit || !ops->tick || !ops->handed_back ||
      !ops->quote || !ops->prior_price)
    return NULL;
  const mkt__pool_ops *was = mkt__pools[pool];
  mkt__pools[pool] = ops;
  return was;
}

unsigned mkt__front_pool(void) {
  unsigned i = 0;
  while (i + 1 < MKT_NPOOLS && !mkt__pools[i]->front_door) i++;
  return i;
}

const mkt__pool_ops *mkt__pool_named(const char *name, size_t n) {
  for (unsigned i = 0; i < MKT_NPOOLS; i++)
    if (!strncmp(name, mkt__pools[i]->name, n)) return mkt__pools[i];
  return NULL;
}
