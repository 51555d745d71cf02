/* The engine's own switches, declared once (ROSS declares its kernel options in a table,
 * core/tw-setup.c): each has a name, the environment variable that sets it, bounds, a default, a
 * unit and help. They tune how the engine stores events, never what a run computes: results are
 * bit for bit the same at any value (test_determinism runs with the calendar on and off).
 *
 * Read with sim_engine_settings_read: a variable that is set but not a number within its bounds is
 * an error that names it, where the engine once fell back to the default without a word. */
#ifndef SPOTLAB_SIM_ENGINE_OPTS_H
#define SPOTLAB_SIM_ENGINE_OPTS_H

#include <stddef.h>

typedef enum sim_engine_opt_id {
  SIM_OPT_CALENDAR_MIN,        /* pending events on a rank that turn the far-event calendar on */
  SIM_OPT_CALENDAR_PER_BUCKET, /* events a calendar bucket aims at */
  SIM_OPT_EARLY_HINTS,         /* early hints: -1 by size, 0 off, 1 on */
  SIM_OPT_HUGEPAGES,           /* 1: large arrays advised onto huge pages (sim/bigmem.h), 0: not */
  SIM_OPT_N
} sim_engine_opt_id;

typedef struct sim_engine_option {
  const char *name; /* "calendar_min" */
  const char *env;  /* "SPOTLAB_CALENDAR_MIN" */
  double def;       /* the value when the variable is unset or empty */
  double lo, hi;    /* accepted range, inclusive */
  int integer;      /* 1: the value must be a whole number */
  const char *unit; /* "events", or "" for a switch */
  const char *help; /* one line */
} sim_engine_option;

/* The table, SIM_OPT_N rows in sim_engine_opt_id order. */
const sim_engine_option *sim_engine_options(void);

typedef struct sim_engine_settings {
  double v[SIM_OPT_N]; /* by sim_engine_opt_id */
} sim_engine_settings;

/* Fills *s from the environment. 0, or SIM_EINVAL with a message in err ("SPOTLAB_CALENDAR_MIN=abc:
 * not a number (calendar_min: whole number from 0 to ...)"); *s then holds the defaults. */
int sim_engine_settings_read(sim_engine_settings *s, char *err, size_t errlen);

#endif
