/* sched_ft.h - fault-tolerance policies as rows of a table of operations.
 *
 * A policy is a row: how many copies of a job run at once, how many standbys stand beside each
 * run, whether runs save checkpoints, what happens when a member is lost or degraded and when a
 * run is slow, and how much of the members' failure rate reaches the work a checkpoint protects.
 * The scheduling core (sched.c), the market and the lab ask the table (sched_ft_row and the
 * sched_ft_* helpers below) and never test a policy by its name or number.
 *
 * Rows are numbered from 0: the built-in ones first (sched_policy's values, in sched_ft.c's table),
 * then those registered at run time (sched_ft_register: a policy defined in a file of its own, or
 * in a test) and the combinations. A combination ("checkpoint+standby", "replicate+checkpoint") is
 * a row composed from its parts (sched_ft_compose): it runs the most copies and standbys of any
 * part, saves checkpoints when one part does, replaces a lost member when one part does, and so
 * on; its checkpoint interval is computed from the combination's own loss rate (sched_ft_loss_rate).
 *
 * The table is the process's: rows are added (registered or composed) while scenarios are read,
 * before any core runs, and never removed; reading it is safe from any number of threads once
 * they run. A combination's number depends on the order in which combinations were first named,
 * its name does not (its parts in table order): results name policies, never number them.
 */
#ifndef MODELS_SCHED_SCHED_FT_H
#define MODELS_SCHED_SCHED_FT_H

#include "models/sched/sched.h"

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SCHED_FT_MAX_ROWS 64 /* rows the table holds: built-in, registered and combined */

/* What a run does when one of its members is lost (left, missed heartbeats). */
typedef enum sched_ft_lost {
  SCHED_FT_LOST_RESTART = 0, /* the run stops; the job goes on with its other copies, or restarts from
                                what it saved (its last checkpoint, or zero) */
  SCHED_FT_LOST_REPLACE,     /* a standby (else an idle GPU) takes the member's place; the run waits
                                while the newcomer loads the job's state, and goes on */
} sched_ft_lost;

/* What a job does when one of its runs progresses slower than expected (cfg.slow_ratio). */
typedef enum sched_ft_slow {
  SCHED_FT_SLOW_NOTHING = 0,
  SCHED_FT_SLOW_BACKUP, /* one backup copy; the first to finish wins (Dean & Ghemawat 2004) */
} sched_ft_slow;

/* One policy. Counts are functions of the job's settings (sched_ft: replicas, standby_k), so one
 * row serves every setting; NULL stands for the default named at each field. */
typedef struct sched_ft_row {
  const char *name; /* as scenarios write it: letters, digits and '_' */
  const char *help; /* one line */
  /* Copies of the job placed at once, each a run of the job's width; a copy lost while others run
   * is placed again. NULL: 1. */
  unsigned (*copies)(const sched_ft *ft);
  /* Standbys reserved beside each run (billed like members). NULL: 0. */
  unsigned (*standbys)(const sched_ft *ft);
  unsigned checkpoints; /* 1: batch runs save periodic checkpoints; a restart resumes from the last */
  sched_ft_lost on_lost;
  unsigned replace_degraded; /* 1: a member reported below cfg.degrade_ratio is swapped for a standby */
  sched_ft_slow on_slow;
  /* Rate (1/s) at which a run of n members loses the work since its last checkpoint, when each GPU
   * fails at rate lambda (1/s) and a newcomer takes repair_s to load the job's state. NULL: n x
   * lambda (any member's loss stops a synchronous run). A combination takes its parts' lowest. */
  double (*loss_rate)(const sched_ft *ft, unsigned n, double lambda, double repair_s);
} sched_ft_row;

/* The row of policy p, or NULL for a number that names none. */
const sched_ft_row *sched_ft_row_of(int p);
/* Rows in the table now. */
int sched_ft_rows(void);

/* Adds a row (copied; its name and help must outlive the process's use of the table). Returns its
 * number, or -1: the table is full, the name is taken, or it is not a valid name. */
int sched_ft_register(const sched_ft_row *row);

/* The combination of rows a and b (each itself a row or a combination): an existing row when one
 * is that combination already, else a new one named after its parts in table order
 * ("checkpoint+standby"). Returns its number, or -1: a row is unknown, one is "none" (which
 * combines with nothing), or the table is full. a == b gives a. */
int sched_ft_compose(int a, int b);

/* The row of a job's policy without the checkpoints: the combination of its other parts ("none"
 * when checkpointing was all it did). What a scenario that keeps no checkpoints runs. */
int sched_ft_without_checkpoints(int p);

/* ---- What the core, the market and the lab ask --------------------------------------------- */
unsigned sched_ft_copies(const sched_ft *ft);   /* copies placed at once (>= 1) */
unsigned sched_ft_standbys(const sched_ft *ft); /* standbys per run */
/* Run slots a job needs at once: its copies, plus one for a backup copy when slow runs get one. */
unsigned sched_ft_slots(const sched_ft *ft);
int sched_ft_checkpoints(const sched_ft *ft);
int sched_ft_replaces_lost(const sched_ft *ft);
int sched_ft_replaces_degraded(const sched_ft *ft);
int sched_ft_backs_up_slow(const sched_ft *ft);
/* The rate at which a run of n members loses unsaved work (see sched_ft_row.loss_rate); for a
 * policy whose rows leave it at the default, n x lambda. */
double sched_ft_loss_rate(const sched_ft *ft, unsigned n, double lambda, double repair_s);
/* 1: the policy's rows all leave the loss rate at the default n x lambda. */
int sched_ft_loss_default(const sched_ft *ft);

#ifdef __cplusplus
}
#endif
#endif
