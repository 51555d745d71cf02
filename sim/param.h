/* param.h - scenario files: every key declared once, in a table that drives parsing, validation,
 * `spotlab check`, the key listing of `spotlab keys` and the copy stored with the results.
 *
 * Scenario files use libconfig syntax (groups, lists, comments). A table of sim_param describes a
 * C struct: each entry names a key, its type, where it goes (offsetof), its default, bounds, unit
 * and help. Parsing fills the struct, applying defaults; every problem (unknown key, wrong type,
 * value out of range, missing required key, syntax error, missing file) is reported as
 * "FILE:LINE: key 'a.b': message" and the parse fails as a whole: nothing half-parsed is used.
 *
 * Value storage by type:
 *   SIM_P_INT      int64_t              SIM_P_DOUBLE   double
 *   SIM_P_BOOL     int (0/1)            SIM_P_STRING   char * (owned; freed by sim_param_free);
 *                                       control characters (newline, tab, ...) are refused except in a
 *                                       key named "command" (a lab job's shell command)
 *   SIM_P_ENUM     int (index into choices)
 *   SIM_P_DURATION double seconds; the file may say 3600, "90s", "30m", "12h", "7d", "2w"
 *   SIM_P_DARRAY   double * at offset, size_t count at count_offset (a libconfig array [..])
 *   SIM_P_GROUP    a nested struct at offset, described by `sub`
 *   SIM_P_LIST     a list of groups ( {..}, {..} ): pointer to an array of elem_size-byte structs
 *                  at offset, size_t count at count_offset; each element described by `sub`
 * min/max bound numbers and durations (seconds), and the element count of lists and arrays.
 */
#ifndef SIM_PARAM_H
#define SIM_PARAM_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef enum sim_ptype {
  SIM_P_INT,
  SIM_P_DOUBLE,
  SIM_P_BOOL,
  SIM_P_STRING,
  SIM_P_ENUM,
  SIM_P_DURATION,
  SIM_P_DARRAY,
  SIM_P_GROUP,
  SIM_P_LIST
} sim_ptype;

typedef struct sim_param {
  const char *name; /* key within its group; NULL ends a table */
  sim_ptype type;
  size_t offset;               /* offsetof(struct, field) */
  const char *def;             /* default, as it would be written in the file ("0.1", "7d",
                                    "\"fifo\"", "[1.0, 2.0]"); NULL = required key.
                                    Groups: ignored (a missing group takes its keys' defaults).
                                    Lists: NULL = required, "()" = empty by default. */
  double min, max;             /* bounds; min > max means unbounded */
  const char *unit;            /* e.g. "s", "USD/h", "GPUs", "1" */
  const char *help;            /* one line */
  const char *const *choices;  /* ENUM: NULL-terminated names */
  const struct sim_param *sub; /* GROUP, LIST: table of the nested keys */
  size_t elem_size;            /* LIST: bytes per element struct */
  size_t count_offset;         /* LIST, DARRAY: offsetof(struct, count field) (size_t) */
} sim_param;

#define SIM_UNBOUNDED 1.0, 0.0 /* min, max for "no bounds" */

/* A diagnostics sink: collects "FILE:LINE: message" lines. */
#define SIM_DIAG_SHOWN 50       /* messages printed; the rest are counted */
#define SIM_DIAG_MSG 2048       /* longest message kept (a data file found nowhere lists every place) */
#define SIM_SCENARIO_MAX_MIB 16 /* a scenario file (or @include) larger than this is refused */
#define SIM_SCENARIO_MAX_BYTES ((long long)SIM_SCENARIO_MAX_MIB << 20)
#define SIM_SCENARIO_MAX_SETTINGS                                                                                      \
  5000 /* a file with more settings is refused (libconfig 1.5 reads them in
                                          quadratic time) */
#define SIM_STR_(x) #x
#define SIM_STR(x) SIM_STR_(x)
typedef struct sim_diag {
  FILE *to; /* where messages go as they come (stderr usually), or NULL */
  int nerrors;
  char first[512]; /* the first message, for tests (cut at 511 bytes) */
} sim_diag;
void sim_diag_init(sim_diag *d, FILE *to);
/* Information for the user ("FILE: note: ..."), not an error (nerrors is unchanged). */
void sim_diag_note(sim_diag *d, const char *file, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void sim_diag_report(sim_diag *d, const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* A parsed scenario: the file's text and where each key came from, kept for later diagnostics
 * (a model's cross-field checks report against the key's line) and for the results file. */
typedef struct sim_scenario sim_scenario;

/* Reads and syntax-checks a scenario file. Returns NULL after reporting to `d` on failure. */
sim_scenario *sim_scenario_load(const char *path, sim_diag *d);
/* The same from text (for tests and sweeps); `name` stands for the file name in messages. */
sim_scenario *sim_scenario_load_string(const char *text, const char *name, sim_diag *d);
void sim_scenario_free(sim_scenario *s);
const char *sim_scenario_path(const sim_scenario *s);
const char *sim_scenario_text(const sim_scenario *s);
/* Overrides one key ("group.key=value" as written in a file) before parsing: --param and sweeps
 * use it. A list's item is named by its `name` key ("market.regions.us.weekend_factor"), by
 * "[N]" (0-based) or by a bare N when no other item is named "N"; a wrong name, an index out of
 * range or an ambiguous N is reported (with the names there are, or the range). Groups absent
 * from the file are created (they take their defaults otherwise). */
int sim_scenario_set(sim_scenario *s, const char *assignment, sim_diag *d);

/* The value of a top-level string key (e.g. "model"), or NULL if absent/not a string. */
const char *sim_scenario_string(const sim_scenario *s, const char *key);

/* Parses group `group` ("" = the top level) of the scenario into `out` as described by `table`.
 * Keys of that group that the table does not declare are errors, except those named in
 * `ignore` (NULL-terminated, may be NULL: used at the top level, where each layer parses its own
 * group). Returns 0, or SIM_ECONFIG after reporting every problem found to `d`. On failure `out`
 * holds nothing that needs freeing. */
int sim_param_parse(const sim_scenario *s, const char *group, const sim_param *table, void *out,
                    const char *const *ignore, sim_diag *d);
/* Fills `out` with the defaults alone (as if the group were empty). */
int sim_param_defaults(const sim_param *table, void *out, sim_diag *d);
/* Frees what parsing allocated in `out` (strings, arrays, lists), recursively. */
void sim_param_free(const sim_param *table, void *out);

/* Reports a semantic error (a model's cross-field check) at the line of key `path`
 * ("market.personas.[1].share"), or at the file alone if the key was not in the file. */
void sim_param_error(const sim_scenario *s, const char *path, sim_diag *d, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Writes the effective values of `out` (defaults included) as libconfig text, under `group`. */
void sim_param_dump(FILE *f, const char *group, const sim_param *table, const void *out);
/* The keys whose help contains `tag` ("ASSUMPTION"), one line each: "group.key = value; UNIT  # help",
 * list items named as --param addresses them. For the record of the assumptions a run used. */
void sim_param_dump_tagged(FILE *f, const char *group, const sim_param *table, const void *out, const char *tag);
/* Lists the keys of `table` (type, default, bounds, unit, help) for `spotlab keys`. */
void sim_param_describe(FILE *f, const char *group, const sim_param *table);

/* libconfig (1.5) reads an integer literal without an L suffix at 32 bits and wraps it silently
 * (4294967297 becomes 1). Returns a malloc'd copy of the libconfig text `text` where every integer
 * outside 32 bits carries the L that makes libconfig read it at 64 bits, so every integer key is
 * read whole; NULL after reporting "NAME:LINE: the integer N does not fit in 64 bits" for each one
 * beyond 64 bits (or NULL on out of memory, with nothing reported). Lines keep their numbers.
 * Scenarios, --param, defaults, lab job files and experiment files are all read through it. */
char *sim_config_widen(const char *text, const char *name, sim_diag *d);

/* Parses a duration ("90s", "30m", "12h", "7d", "2w" or a number of seconds). 0 or -1. */
int sim_parse_duration(const char *text, double *seconds);

#endif
