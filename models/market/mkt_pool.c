/* mkt_pool.c - the pools, one descriptor each (pool_*.c), in the order of mkt_pool_names. Adding
 * a pool: a file pool_NAME.c with its mkt__pool_ops, an entry here and in mkt_pool_names. */
#include "models/market/mkt_internal.h"

const mkt__pool_ops *const mkt__pools[MKT_NPOOLS] = {&mkt__pool_fixed, &mkt__pool_bidding, &mkt__pool_flexible};
_Static_assert(MKT_POOL_FIXED == 0 && MKT_POOL_BIDDING == 1 && MKT_POOL_FLEX == 2 && MKT_NPOOLS == 3,
               "mkt__pools follows the pool enum");
