/* edit_distance.h - the Levenshtein distance behind every "did you mean" (options, commands, scenario
 * keys, metric names): one copy, header-only and dependency-free so that the command line (which a
 * test builds without the engine) and the scenario reader share it. */
#ifndef SIM_EDIT_DISTANCE_H
#define SIM_EDIT_DISTANCE_H

#include <stddef.h>

#define SIM_EDIT_DISTANCE_MAX 63 /* longer names are not compared: distance 99 */

/* Insertions, deletions and substitutions that turn a[0..la) into b[0..lb) (Levenshtein 1966,
 * the Wagner-Fischer table); 99 when either is longer than SIM_EDIT_DISTANCE_MAX. */
static inline unsigned sim_edit_distance(const char *a, size_t la, const char *b, size_t lb) {
  if (la > SIM_EDIT_DISTANCE_MAX || lb > SIM_EDIT_DISTANCE_MAX) return 99;
  unsigned d[SIM_EDIT_DISTANCE_MAX + 1][SIM_EDIT_DISTANCE_MAX + 1];
  for (size_t i = 0; i <= la; i++) d[i][0] = (unsigned)i;
  for (size_t j = 0; j <= lb; j++) d[0][j] = (unsigned)j;
  for (size_t i = 1; i <= la; i++)
    for (size_t j = 1; j <= lb; j++) {
      unsigned sub = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]), del = d[i - 1][j] + 1, ins = d[i][j - 1] + 1;
      d[i][j] = sub < del ? (sub < ins ? sub : ins) : (del < ins ? del : ins);
    }
  return d[la][lb];
}

#endif
