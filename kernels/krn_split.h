/* krn_split.h - the work split's vocabulary, declared once: how the members of a cluster share a
 * job's work.
 *   even      every member gets the same share: the slowest member sets the pace
 *   weighted  shares proportional to the members' speeds
 *   dynamic   members pull fixed-size chunks from a shared queue
 * The kernels' clustering strategies begin with these three (krn_strategy, measured by `spotlab
 * bench kernels`), the scheduling core's cluster speed model takes them (sched_split,
 * models/sched/sched.h) and the lab's wide jobs split by them (job key `strategy`, lab/lab_wide.c).
 * Header-only, no I/O, nothing to link: the core sits above the kernels (docs/architecture.md,
 * "Layers") and includes this without depending on them. */
#ifndef KRN_KRN_SPLIT_H
#define KRN_KRN_SPLIT_H

#include <stddef.h> /* NULL */

typedef enum krn_split { KRN_SPLIT_EVEN = 0, KRN_SPLIT_WEIGHTED, KRN_SPLIT_DYNAMIC, KRN_NSPLITS } krn_split;

/* Their names in that order, NULL-terminated (an enum key of a parameter table takes it as is). */
static const char *const krn_split_names[KRN_NSPLITS + 1] = {"even", "weighted", "dynamic", NULL};

#endif
