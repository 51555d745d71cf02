/* The engine's switches as one table (engine_opts.h): the engine, `spotlab`'s start-up check and
 * the docs read these rows, so a new switch is one row here. */
#include "sim/engine_opts.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "sim/sim.h"

static const sim_engine_option sim__engine_opts[SIM_OPT_N] = {
    [SIM_OPT_CALENDAR_MIN] = {"calendar_min", "SPOTLAB_CALENDAR_MIN", 65536, 0, 1e12, 1, "events",
                              "pending events on a rank that turn the far-event calendar on (0 = never)"},
    [SIM_OPT_CALENDAR_PER_BUCKET] = {"calendar_per_bucket", "SPOTLAB_CALENDAR_PER_BUCKET", 4096, 1, 1e6, 0, "events",
                                     "events a calendar bucket aims at (sets the bucket width)"},
    [SIM_OPT_EARLY_HINTS] = {"early_hints", "SPOTLAB_EARLY_HINTS", -1, -1, 1, 1, "",
                             "models' early hints: -1 on ranks of 65,536 LPs or more, 0 off, 1 on at any size"},
    /* read by sim/bigmem.h itself ("0" = off), which must stay free of the engine for the core */
    [SIM_OPT_HUGEPAGES] = {"hugepages", "SPOTLAB_HUGEPAGES", 1, 0, 1, 1, "",
                           "1: large arrays advised onto transparent huge pages, 0: not"},
};

const sim_engine_option *sim_engine_options(void) { return sim__engine_opts; }

int sim_engine_settings_read(sim_engine_settings *s, char *err, size_t errlen) {
  for (int k = 0; k < SIM_OPT_N; k++) s->v[k] = sim__engine_opts[k].def;
  for (int k = 0; k < SIM_OPT_N; k++) {
    const sim_engine_option *o = &sim__engine_opts[k];
    const char *t = getenv(o->env);
    if (!t || !*t) continue;
    char *end = NULL;
    errno = 0;
    double x = strtod(t, &end);
    const char *why = NULL;
    if (end == t || *end || errno == ERANGE || !isfinite(x))
      why = "not a number";
    else if (o->integer && x != floor(x))
      why = "not a whole number";
    else if (x < o->lo || x > o->hi)
      why = "out of range";
    if (why) {
      if (err)
        snprintf(err, errlen, "%s=%s: %s (%s: %s from %g to %g%s%s; %s)", o->env, t, why, o->name,
                 o->integer ? "whole number" : "number", o->lo, o->hi, *o->unit ? " " : "", o->unit, o->help);
      for (int j = 0; j < SIM_OPT_N; j++) s->v[j] = sim__engine_opts[j].def;
      return SIM_EINVAL;
    }
    s->v[k] = x;
  }
  return 0;
}
