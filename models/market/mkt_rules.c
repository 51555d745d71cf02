/* mkt_rules.c - the clearing rules' table: one descriptor per rule (rule_*.c), in the order of enum
 * mkt_rule and mkt_rule_names (mkt.h), found by name. Adding a rule: a file rule_NAME.c with its
 * mkt_rule_ops, and an entry here. The table sits apart from what the rules share (mkt_rule.c),
 * which the rules call: so no file calls back into one that calls it (scripts/market_deps.py). */
#include "models/market/mkt_rule_internal.h"

#include <string.h>

/* ---- The table ----------------------------------------------------------------------------------- */

/* Same order as enum mkt_rule and mkt_rule_names (mkt.h); tests/test_auction.c checks the names. */
const mkt_rule_ops *mkt_rule_table[MKT_RULES_MAX + 1] = {&mkt_rule_gigaspot, &mkt_rule_pay_as_bid, &mkt_rule_vickrey,
                                                         &mkt_rule_double,   &mkt_rule_knapsack,   NULL};
_Static_assert(MKT_RULE_KNAPSACK + 1 < MKT_RULES_MAX, "room for every mkt_rule and registered ones");

int mkt_rule_register(const mkt_rule_ops *ops) {
  if (!ops || !ops->name || !ops->clear || !ops->late_price || mkt_rule_index(ops->name) >= 0) return -1;
  int k = 0;
  while (mkt_rule_table[k]) k++;
  if (k >= MKT_RULES_MAX) return -1;
  mkt_rule_table[k] = ops; /* the NULL after it was there: the array holds MKT_RULES_MAX + 1 */
  mkt_rule_names[k] = ops->name;
  return k;
}

int mkt_rule_index(const char *name) {
  if (!name) return -1;
  for (int k = 0; mkt_rule_table[k]; k++)
    if (strcmp(mkt_rule_table[k]->name, name) == 0) return k;
  return -1;
}

const mkt_rule_ops *mkt_rule_find(const char *name) {
  int k = mkt_rule_index(name);
  return k < 0 ? NULL : mkt_rule_table[k];
}
