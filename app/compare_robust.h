/* compare_robust.h - `spotlab compare BEFORE.h5 AFTER.h5 --robust KEY=V1,V2...`: does a change's
 * answer survive the model's own assumptions?
 *
 * A comparison's headline differences rest on behavioural assumptions (the pool-choice logit's
 * weights, demand elasticity, reservation incomes, the strategy mix, ...) that no data pins down.
 * The robust mode reruns both sides of the comparison, each from the effective keys its results
 * file records, at every combination of the values given for the assumption keys (the full grid,
 * at most 64 points), with the files' own seeds and replications (common random numbers), and says
 * for each headline metric whether the sign of the paired difference holds at every point, with
 * the range of its size. */
#ifndef APP_COMPARE_ROBUST_H
#define APP_COMPARE_ROBUST_H

#include <stdio.h>

#define APP_ROBUST_MAX_KEYS 6
#define APP_ROBUST_MAX_VALUES 8
#define APP_ROBUST_MAX_POINTS 64

/* Runs the robust mode for specs[0..nspecs) ("KEY=V1,V2,...": values in scenario syntax, strings
 * quoted; commas inside quotes are part of a value), for the headline metrics and metrics[0..nmetrics)
 * (`--robust-metric NAME`, each a metric of both files). Prints its table on tab (NULL: none) and its
 * progress on stderr unless quiet; writes OUTDIR/robust.md and OUTDIR/robust.csv. Returns the exit
 * status: 0 done, 1 a run or the outputs failed, 2 bad input. */
int app_compare_robust(const char *before, const char *after, const char *const *specs, int nspecs,
                       const char *const *metrics, int nmetrics, const char *outdir, int quiet, FILE *tab);

/* Everything but the runs, before anything is compared or written: the specs, the two files (whole,
 * paired runs of one model) and every point's keys loaded on both sides. 0, or the exit status
 * with the message on stderr (2: bad input). Call it before app_compare_robust, which assumes it. */
int app_compare_robust_check(const char *before, const char *after, const char *const *specs, int nspecs,
                             const char *const *metrics, int nmetrics);

#endif
