/* sim.h - spotlab's discrete-event engine: the contract between the engine and its models.
 *
 * A model is a set of logical processes (LPs, "entities") that own their state and interact only
 * by timestamped messages. The model declares, in a const sim_model, its LP types (a table of
 * handlers in the spirit of ROSS's tw_lptype), how many LPs there are, the size of a message and
 * the lookahead (the smallest delay of any message sent to another LP). The engine owns all
 * memory, runs the LPs on one or several MPI ranks, and collects their outputs.
 *
 * Determinism. Events at one LP are handled in the order of the key (time, source LP, source
 * sequence number), which does not depend on how LPs are spread over ranks; every LP owns a
 * random stream derived from the run seed and its id; outputs are integer sums (exact in any
 * order) or per-LP records gathered in LP order. So one model and seed give bit-identical
 * results on any number of ranks. Models must keep their side of it: an LP's handlers read and
 * write only that LP's state, the read-only model context, and what the engine hands them.
 *
 * The engine knows nothing of markets or GPUs, and models know nothing of MPI or HDF5.
 */
#ifndef SIM_SIM_H
#define SIM_SIM_H

#include "sim/xoshiro.h"
#include "sim/errors.h"
#include <stddef.h>
#include <stdint.h>
#include <gsl/gsl_rng.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef double sim_time; /* simulated time, seconds */
typedef uint64_t sim_id; /* LP id, 0 .. nlps-1 */

#define SIM_TIME_INF (1.0 / 0.0)

typedef struct sim_lp sim_lp;         /* an LP as the engine holds it; opaque to models */
typedef struct sim_engine sim_engine; /* one run of one model on this rank; opaque */

/* ---- Errors ---------------------------------------------------------------------------------
 * Functions that can fail on input return 0 or a negative sim_err; sim_strerror names it. The codes
 * are those every module shares (sim/errors.h: one error space). */
typedef enum sim_err {
  SIM_OK = 0,
  SIM_ENOMEM = SPOTLAB_ENOMEM,      /* out of memory */
  SIM_EINVAL = SPOTLAB_EINVAL,      /* invalid argument or model description */
  SIM_EIO = SPOTLAB_EIO,            /* a file could not be read or written */
  SIM_ECONFIG = SPOTLAB_ECONFIG,    /* the scenario has errors (already reported with FILE:LINE) */
  SIM_EFORMAT = SPOTLAB_EFORMAT,    /* a result file is damaged or of another version */
  SIM_ENOTFOUND = SPOTLAB_ENOTFOUND /* a named thing (model, dataset, key) does not exist */
} sim_err;
const char *sim_strerror(int err);

/* Fatal errors are for bugs, out-of-memory and MPI failures only (never for bad user input):
 * prints "spotlab: fatal [rank R] FILE:LINE: message" and aborts every rank. */
#define SIM_FATAL(...) sim__fatal(__FILE__, __LINE__, __VA_ARGS__)
void sim__fatal(const char *file, int line, const char *fmt, ...) __attribute__((noreturn, format(printf, 3, 4)));

/* ---- Outputs ------------------------------------------------------------------------------- */

/* A series: int64 sums in time bins (or one bin when bin_width is 0, i.e. a counter), with
 * `ncols` columns (e.g. one per region). Integer sums are exact in any order, which is what keeps
 * results bit-identical across rank counts: express money in micro-units, time in ms, etc. */
typedef struct sim_series_def {
  const char *name;            /* dataset name, e.g. "income_by_persona" */
  const char *unit;            /* unit of each value, e.g. "USD*1e-6", "GPU*ms" */
  sim_time bin_width;          /* seconds per bin; 0 = a single bin for the whole run */
  unsigned ncols;              /* columns per bin (>= 1) */
  const char *const *colnames; /* ncols names, or NULL */
  const char *help;            /* one line, stored as an attribute */
  const char *const *colunits; /* ncols units, one per column (series whose unit is "mixed"), or
                                  NULL: `unit` for every column */
} sim_series_def;

/* A table: records of fixed size written by LPs (usually in finalize), gathered in the order
 * (LP id, write order) and stored as an HDF5 compound dataset. */
typedef enum sim_ftype { SIM_F_I64, SIM_F_U64, SIM_F_I32, SIM_F_F64, SIM_F_STR16, SIM_F_STR32 } sim_ftype;
typedef struct sim_field {
  const char *name;
  sim_ftype type;
  size_t offset;    /* offsetof(record, field) */
  const char *unit; /* "s", "USD", "1" ... */
} sim_field;
typedef struct sim_table_def {
  const char *name;
  size_t record_size;
  const sim_field *fields;
  unsigned nfields;
  const char *help;
} sim_table_def;

/* ---- The model ----------------------------------------------------------------------------- */

typedef struct sim_lptype {
  const char *name;
  size_t state_size; /* bytes of state per LP of this type, zeroed before init */
  /* Called once per LP before time 0 events; may send messages (with the usual delays). */
  void (*init)(sim_lp *lp, void *state);
  /* Handles one event. `msg` points to the model's message (msg_size bytes, valid during the
   * call); `src` is the LP that sent it. */
  void (*event)(sim_lp *lp, void *state, const void *msg, sim_id src);
  /* Called once per LP after the end time; may write table records and series, not send. */
  void (*finalize)(sim_lp *lp, void *state);
  /* May be NULL. A hint, called with the event the engine will most likely handle next (after the
   * current one is handled, before its own bookkeeping; the LP header and the message are in
   * cache by then): the model may __builtin_prefetch what that event's handler will read (the
   * state, records it indexes by the message's fields). It must not change anything: results are
   * the same with or without it. */
  void (*prefetch)(const sim_lp *lp, const void *state, const void *msg, sim_id src);
  /* May be NULL. The same, one event earlier: called with the event most likely handled after the
   * next one, whose LP header and message are in cache, so that `prefetch`, called for it one
   * event later, finds in cache what it reads to compute its addresses (an index the message's
   * field selects, say). The same rule: it changes nothing. */
  void (*prefetch_early)(const sim_lp *lp, const void *state, const void *msg, sim_id src);
} sim_lptype;

typedef struct sim_model {
  const char *name;
  const sim_lptype *types;
  unsigned ntypes;
  /* Which type an LP has. Pure function of (ctx, id). NULL when ntypes == 1. */
  unsigned (*type_of)(const void *ctx, sim_id id);
  sim_id nlps;
  size_t msg_size;    /* bytes of every message (the largest the model sends) */
  sim_time lookahead; /* > 0: every message to another LP has delay >= lookahead */
  sim_time end_time;  /* events at t >= end_time are not handled */
  const void *ctx;    /* read-only data shared by all LPs (parameters, tables) */
  const sim_series_def *series;
  unsigned nseries;
  const sim_table_def *tables;
  unsigned ntables;
  /* Which random stream an LP draws from. Pure function of (ctx, id); NULL = its id. Models that
   * hold several copies of one system (to compare policies on common random numbers) give the
   * same stream to the same entity in every copy. */
  uint64_t (*stream_of)(const void *ctx, sim_id id);
  /* Groups, or 0: LPs that talk among themselves and little or not at all to others. Group g is the
   * block of ids [group_first(ctx, g), group_first(ctx, g + 1)), group 0 starting at 0 and the last
   * ending at nlps; a message from an LP to one of another group has delay >= group_lookahead
   * (>= lookahead; SIM_TIME_INF: groups never talk), which the engine checks on every send. With at
   * least as many groups as ranks, each rank owns whole groups (blocks balanced by LP count) and
   * the ranks synchronise every group_lookahead of simulated time instead of every lookahead.
   * Results do not depend on it: the key order is the same on any partition. */
  unsigned ngroups;
  sim_id (*group_first)(const void *ctx, unsigned g);
  sim_time group_lookahead;
  /* 1: the LPs of a group may read and write each other's state in their handlers (sim_peer), as
   * parts of one system that learn of each other's changes at once, not a message later. The
   * engine then keeps every group whole on one rank on any partition (with fewer groups than
   * ranks, the ranks after the last group own no LPs), so that a rank handles all the events of
   * a group in the key order, and results stay the same on any partition. Needs ngroups. */
  int shared_groups;
} sim_model;

/* ---- What handlers may call ---------------------------------------------------------------- */
sim_id sim_lp_id(const sim_lp *lp);
sim_time sim_now(const sim_lp *lp);
const void *sim_lp_ctx(const sim_lp *lp);
/* The LP's own random stream: a gsl_rng, so every gsl_ran_* distribution works on it. Its state
 * derives from (run seed, stream id) only; the stream id is the LP id unless the model's
 * stream_of says otherwise. */
gsl_rng *sim_lp_rng(sim_lp *lp);
/* Schedules `msg` (len <= msg_size bytes; the rest is zeroed) at dst, now + delay. delay >= 0
 * for dst == self, delay >= lookahead otherwise; breaking that is a model bug (fatal). */
void sim_send(sim_lp *lp, sim_id dst, sim_time delay, const void *msg, size_t len);
/* The same at time t >= now: for a timer the model keeps itself, set at `now + delay` when it
 * was decided and sent later (an LP that keeps several timers and has only the earliest of them
 * pending in the engine), so that it fires at the very time sim_send(delay) would have given it.
 * The rules of sim_send apply to t - now. */
void sim_send_at(sim_lp *lp, sim_id dst, sim_time t, const void *msg, size_t len);
/* The LP `id` of lp's own group, in a model with shared_groups: its handlers may read and write
 * its state (sim_lp_state) and call what its own handlers call with it (series, tables, sends
 * from it), now, during lp's event; its random stream is its own (drawing from it changes what
 * its own events draw). Fatal for an LP of another group or a model without shared_groups. */
sim_lp *sim_peer(sim_lp *lp, sim_id id);
/* The state block of an LP (what its handlers receive as `state`). */
void *sim_lp_state(const sim_lp *lp);
/* Adds v to series `s`, column `col`, in the bin of time t (clamped to the run). */
void sim_series_add(sim_lp *lp, unsigned s, unsigned col, sim_time t, int64_t v);
/* Appends one record (record_size bytes) to table `tab`. */
void sim_table_put(sim_lp *lp, unsigned tab, const void *record);
/* The pending-event stores of the engine running lp, this rank: events in its heap and payloads
 * in its slab, each in use and allocated (slots). For benchmarks and the engine's own tests; what
 * a model does must not depend on it. */
typedef struct sim_pending_stats {
  size_t heap_used, heap_slots, slab_used, slab_slots;
  /* the calendar of far events, since the run began (all 0 while it is off): scans of its overflow
   * list every half ring, jumps of the ring to the earliest overflow event, and rebuilds at a new
   * bucket width */
  uint64_t far_scans, far_jumps, far_rebuilds;
} sim_pending_stats;
void sim_pending(const sim_lp *lp, sim_pending_stats *out);

/* ---- Running ------------------------------------------------------------------------------- */

typedef struct sim_run_opts {
  uint64_t seed;              /* run seed; LP streams derive from (seed, id) */
  int use_mpi;                /* 1: partition over MPI_COMM_WORLD; 0: this thread alone */
  int progress;               /* 1: progress line on stderr (rank 0) */
  const char *progress_label; /* e.g. "rep 2/8", or NULL */
} sim_run_opts;

/* What a run produced, complete on rank 0 (on other ranks: stats only). */
typedef struct sim_results {
  const sim_model *model;
  uint64_t seed;
  int ranks;
  uint64_t events;     /* committed events, all ranks */
  uint64_t windows;    /* synchronization windows (1 when sequential) */
  double wall_s;       /* wall time of the event loop, seconds */
  double peak_rss_mib; /* max over ranks of peak resident memory, MiB */
  /* series[s] has nbins[s] * ncols int64 values, row-major (bin, col). */
  int64_t **series;
  size_t *nbins;
  /* tables[t] holds nrecords[t] records of record_size bytes, in (LP id, write order). */
  unsigned char **tables;
  size_t *nrecords;
} sim_results;

/* Runs `model` to its end time. Collective over MPI_COMM_WORLD when opts->use_mpi. Returns 0 and
 * fills *res (free with sim_results_free), or a negative sim_err. */
int sim_run(const sim_model *model, const sim_run_opts *opts, sim_results *res);
void sim_results_free(sim_results *res);

/* One run's results moved whole between ranks, for runs that execute on one rank each (use_mpi 0:
 * replications spread over ranks, each a sequential engine). Point to point over MPI_COMM_WORLD
 * with `tag`; the receiver passes the same model and gets exactly the bytes the sender held (free
 * with sim_results_free). Return 0 or SIM_ENOMEM; MPI failures and a damaged message are fatal. */
int sim_results_send(const sim_results *res, int dst, int tag);
int sim_results_recv(const sim_model *model, int src, int tag, sim_results *res);

/* Number of bins of series `s` of `model`. */
size_t sim_series_nbins(const sim_model *model, unsigned s);
/* Bytes one replication's series take (each is held twice: while running and in its results);
 * what a run needs before it starts, known from the model alone. Saturates at SIZE_MAX. */
size_t sim_series_bytes(const sim_model *model);

/* Seed of replication r derived from a base seed (splitmix64 of both): common random numbers
 * across scenarios that share the base seed. */
uint64_t sim_rep_seed(uint64_t base_seed, unsigned rep);

/* The engine's stream generator as a gsl_rng_type (xoshiro256**, 32 bytes of state), and the
 * seeding of one stream from (seed, stream id). Exposed for tests and for non-LP users. */
extern const gsl_rng_type *sim_rng_xoshiro;
void sim_rng_seed_stream(gsl_rng *r, uint64_t seed, uint64_t stream);

/* Draws from one of the engine's streams (sim_lp_rng, or a gsl_rng of type sim_rng_xoshiro), the
 * same numbers as gsl_rng_get, gsl_rng_uniform and gsl_rng_uniform_int on it, inline rather than
 * through the generator's table of functions: for handlers on the hot path (PHOLD's three draws
 * an event were a tenth of its time). Mixed freely with gsl_* calls on the same stream. */
static inline uint64_t sim_rng_next(gsl_rng *r) { /* xoshiro256** (sim/xoshiro.h) */
  return sim_xoshiro_next((uint64_t *)r->state);
}
/* [0, 1): the top 53 bits, as gsl_rng_uniform on this generator */
static inline double sim_rng_uniform(gsl_rng *r) { return (double)(sim_rng_next(r) >> 11) * 0x1.0p-53; }
/* 0 .. n-1 (n >= 1), drawn as gsl_rng_uniform_int draws it: k = x / (range / n) until k < n */
static inline unsigned long sim_rng_uniform_int(gsl_rng *r, unsigned long n) {
  unsigned long scale = (unsigned long)UINT64_MAX / n, k;
  do k = (unsigned long)sim_rng_next(r) / scale;
  while (k >= n);
  return k;
}

#ifdef __cplusplus
}
#endif
#endif
