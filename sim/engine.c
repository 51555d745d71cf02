/* engine.c - the event loop: LPs, the pending-event set, conservative MPI synchronization and
 * the collection of outputs.
 *
 * Pending events live in one 4-ary min-heap per rank ordered by the key (time, source LP,
 * source sequence number). The key is unique and independent of the partition, so each LP sees
 * its events in the same order whatever the number of ranks (see sim.h).
 *
 * Parallel runs use window-based conservative synchronization (YAWNS-style; Nicol, "The cost of
 * conservative synchronization in parallel discrete event simulations", JACM 1993): every window
 * starts at the global minimum pending time T and handles all events with t < T + lookahead.
 * Any message to another LP has delay >= lookahead, so it lands at or after the window's end
 * and no rank ever receives an event in its past. At the end of a window, messages to other
 * ranks are exchanged with MPI_Alltoallv. A sequential run (one rank, or one thread of a
 * replication) needs no windows: it pops events in key order until the end time.
 *
 * Ranks own consecutive blocks of LP ids: equal blocks, or, for a model that declares groups
 * (sim_model.ngroups: blocks of LPs whose messages to other groups have a delay of at least
 * group_lookahead) and has at least as many groups as there are ranks, blocks that end on group
 * boundaries. Then every message between ranks is one between groups, and a window spans
 * group_lookahead (all of the run when the groups never talk: one window, no exchange). A model
 * whose groups share state (sim_model.shared_groups, sim_peer) gets whole groups on any number of
 * ranks: with fewer groups than ranks, one group per rank and the ranks after them own none.
 */
#include "sim/sim.h"

#include "sim/bigmem.h"
#include "sim/engine_opts.h"

#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

/* 64 bytes, one cache line of a 64-byte aligned array: the engine and the LP's id are not stored
 * (the engine is the one this thread runs, sim__cur; the id follows from the LP's place in its
 * array), and the type is an index in the top byte of the send counter rather than a pointer
 * (72 bytes before, two lines for most LPs). */
struct sim_lp {
  uint64_t seqt; /* messages sent so far (the tie-break of the event key) | the type's index << 56 */
  void *state;
  gsl_rng rng; /* rng.state points at rs */
  uint64_t rs[4];
};
#define SIM__TSHIFT 56 /* at most 256 LP types; seq below 2^56 */
_Static_assert(sizeof(struct sim_lp) == 64, "an LP record is one cache line");

/* One pending event, as the calendar files it and the heap holds it. The order key (time, source
 * LP, source sequence number) is packed into two 64-bit words compared as one 128-bit integer:
 * `hi` is the time's IEEE bits (times are >= +0, never NaN, and for those the bits are in the
 * order of the values), `lo` is src << sbits | seq, with sbits = 64 - the bits of the largest LP
 * id (sim_send refuses a seq that does not fit: 2^44 messages per LP at a million LPs). The same
 * order as comparing (t, src, seq) field by field, so the same sequence of events; one compare,
 * no branch. `v` is the payload handle: the local LP index in its low 32 bits (SIM__INLINE
 * set when the payload travels in the event), the slab slot or the inline payload above them.
 * `slot` indexes the payload slab when msg_size > 0, or holds the payload itself when every byte
 * after its first four is zero: timers and other short messages take no slab slot, which at a
 * million LPs is most pending events. */
#define SIM__HINT2_MIN_LPS 65536 /* LPs on a rank from which early hints are called (sim_lptype.prefetch_early) */
#define SIM__INLINE 0x80000000u
#define SIM__INLINE_BYTES 4
typedef struct sim__ev {
  uint64_t hi; /* time bits */
  uint64_t lo; /* src << sbits | seq */
  uint64_t v;  /* dst (local index, | SIM__INLINE) | slot << 32 */
} sim__ev;

#ifdef __SIZEOF_INT128__
typedef unsigned __int128 sim__key;
#define SIM__KEY(hi, lo) (((sim__key)(hi) << 64) | (sim__key)(lo))
#define SIM__KEY_HI(k) ((uint64_t)((k) >> 64))
#define SIM__KEY_LO(k) ((uint64_t)(k))
#define SIM__KEY_LT(a, b) ((a) < (b))
#define SIM__KEY_MAX (~(sim__key)0)
#else /* two words, compared high then low */
typedef struct {
  uint64_t lo, hi;
} sim__key;
static inline sim__key sim__key_make(uint64_t hi, uint64_t lo) { return (sim__key){lo, hi}; }
#define SIM__KEY(hi, lo) sim__key_make(hi, lo)
#define SIM__KEY_HI(k) ((k).hi)
#define SIM__KEY_LO(k) ((k).lo)
#define SIM__KEY_LT(a, b) ((a).hi < (b).hi || ((a).hi == (b).hi && (a).lo < (b).lo))
#define SIM__KEY_MAX ((sim__key){UINT64_MAX, UINT64_MAX})
#endif

static inline uint64_t sim__tbits(double t) {
  t += 0.0; /* -0.0 (never made by now + delay, but cheap to rule out) becomes +0.0 */
  uint64_t b;
  memcpy(&b, &t, sizeof b);
  return b;
}
static inline double sim__btime(uint64_t b) {
  double t;
  memcpy(&t, &b, sizeof t);
  return t;
}
static inline double sim__ev_t(const sim__ev *ev) { return sim__btime(ev->hi); }

/* An event travelling to another rank: header then msg_size payload bytes. */
typedef struct sim__wire {
  double t;
  uint64_t src;
  uint64_t seq;
  uint64_t dst; /* global LP id */
} sim__wire;

typedef struct sim__buf {
  unsigned char *p;
  size_t len, cap;
} sim__buf;

typedef struct sim__tab {
  sim__buf data; /* entries of (uint64 lpid, uint64 local order, record) */
  uint64_t n;
} sim__tab;

/* A block of far events, chained per calendar bucket. */
#define SIM__CHUNK 31
typedef struct sim__chunk {
  sim__ev ev[SIM__CHUNK];
  uint32_t n, next;
} sim__chunk;

struct sim_engine {
  const sim_model *model;
  int rank, nranks, use_mpi;
  sim_id first, nlocal; /* this rank's LPs: [first, first + nlocal) */
  sim_id base;          /* block partition: ranks < rem own base+1 LPs, the others base */
  sim_id rem;
  sim_id *bnd;    /* NULL, or the partition on group boundaries: rank r owns [bnd[r], bnd[r + 1]) */
  sim_id *gfirst; /* the model's groups (ngroups + 1 starts, the last nlps), or NULL */
  unsigned ngroups;
  double glook; /* the model's group_lookahead, when gfirst */
  double wla;   /* a window's span: lookahead, or group_lookahead when the ranks own whole groups */
  sim_lp *lps;
  unsigned char **states; /* one block of states per type */
  double now, end, lookahead;
  size_t msg_size;
  /* heap: 4-ary, keys and payload handles in two arrays (see sim__heap_*) */
  sim__key *hkey;      /* hkey[0 .. hcap + 3); from hn on, SIM__KEY_MAX */
  uint64_t *hval;      /* hval[0 .. hcap) */
  unsigned char *hraw; /* the block hkey lies in */
  size_t hn, hcap;
  unsigned sbits; /* lo = src << sbits | seq */
  uint64_t seqmax;
  /* far events (the calendar): see sim__far_* */
  struct sim__chunk *chunks;
  uint32_t nchunks, capchunks, free_chunk;
  uint32_t *bhead, *btail; /* per bucket: first and last chunk, UINT32_MAX = empty */
  uint8_t *btn, otn;       /* events in a bucket's last chunk, in the overflow list's (sim__list_push) */
  uint32_t ohead, otail;   /* overflow list: beyond the ring */
  uint64_t nring, nover;   /* events in the ring, in the overflow list */
  uint64_t cur;            /* bucket whose events the heap holds: horizon = (cur + 1) * w */
  double w, horizon;       /* bucket width; INFINITY while the calendar is off */
  uint64_t since_scan;     /* buckets advanced since the overflow list was last scanned */
  double cal_aim;          /* events a bucket should hold (engine_opts.c: calendar_per_bucket) */
  uint64_t adv, ev_at;     /* buckets advanced and events handled since w was last set */
  uint64_t far_scans, far_jumps, far_rebuilds; /* counts for sim_pending */
  unsigned retunes;
  size_t cal_on; /* pending events that turn the calendar on; 0 = never */
  /* payload slab: slots, and a bitmap of the free ones with its summary levels (sim__slot_get) */
  unsigned char *slab;
  uint64_t *fb[6]; /* fb[0]: one bit per slot, 1 = free; fb[l + 1]: one bit per word of fb[l], 1 = has a free bit */
  unsigned fb_levels;
  size_t slab_cap, slab_live, slab_hi; /* slots, in use, in use in the upper half */
  unsigned char *inl;                  /* msg_size bytes: an inline payload, unpacked for its handler */
  unsigned char *inl_next;             /* the same for the next event's prefetch hint */
  unsigned char *inl_next2;            /* and for the early hint of the event after it */
  int hints2;                          /* some LP type has an early hint (prefetch_early) */
  unsigned char *slabmsg;              /* msg_size bytes: a slab payload, copied out for its handler */
  int hints;                           /* some LP type has a prefetch hint */
  /* remote messages, one buffer per destination rank */
  sim__buf *out;
  size_t wire_size;
  /* outputs */
  int64_t **series;
  size_t *nbins;
  sim__tab *tabs;
  uint64_t tab_order;
  int finalizing;
  /* stats */
  uint64_t events, windows;
  /* progress */
  int progress;
  const char *progress_label;
  double t_start, t_last_print;
};

/* The engine sim_run is running on this thread (replications run one engine per thread). */
static _Thread_local sim_engine *sim__cur;
static inline sim_engine *sim__eng(const sim_lp *lp) {
  (void)lp;
  return sim__cur;
}
static inline sim_id sim__id(const sim_lp *lp) { return sim__cur->first + (sim_id)(lp - sim__cur->lps); }

/* ---- small utilities ----------------------------------------------------------------------- */

static double sim__clock(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Every growing array of the engine goes through here: large ones on huge pages (sim/bigmem.h). */
static void *sim__xrealloc(void *p, size_t n) {
  void *q = sim_bigmem_realloc(p, n ? n : 1);
  if (!q) SIM_FATAL("out of memory (%zu bytes)", n);
  return q;
}

static void sim__buf_reserve(sim__buf *b, size_t extra) {
  if (b->len + extra <= b->cap) return;
  size_t cap = b->cap ? b->cap : 4096;
  while (cap < b->len + extra) cap *= 2;
  b->p = sim__xrealloc(b->p, cap);
  b->cap = cap;
}

static void sim__mpi_check(int rc, const char *what) {
  if (rc != MPI_SUCCESS) SIM_FATAL("MPI failure in %s (code %d)", what, rc);
}

/* ---- partition ----------------------------------------------------------------------------- */

static sim_id sim__first_of(const sim_engine *e, int r) {
  if (e->bnd) return e->bnd[r];
  sim_id ur = (sim_id)r;
  return ur < e->rem ? ur * (e->base + 1) : e->rem * (e->base + 1) + (ur - e->rem) * e->base;
}

/* The index i of the block [v[i], v[i + 1]) that holds id, of n blocks (v[0] <= id < v[n]). */
static unsigned sim__block_of(const sim_id *v, unsigned n, sim_id id) {
  unsigned lo = 0, hi = n; /* v[lo] <= id < v[hi] */
  while (hi - lo > 1) {
    unsigned mid = lo + (hi - lo) / 2;
    if (id < v[mid])
      hi = mid;
    else
      lo = mid;
  }
  return lo;
}

static int sim__owner(const sim_engine *e, sim_id id) {
  if (e->bnd) return (int)sim__block_of(e->bnd, (unsigned)e->nranks, id);
  sim_id big = e->rem * (e->base + 1);
  if (id < big) return (int)(id / (e->base + 1));
  return (int)(e->rem + (id - big) / e->base);
}

/* ---- the heap ------------------------------------------------------------------------------ */
/* A 4-ary min-heap on the packed key (sim__ev): a total order, so any correct heap pops the same
 * sequence as the binary heap on (t, src, seq) that came before it. Keys (16 B) and payload
 * handles (8 B) are in two arrays: a sift compares keys only, and a node's four children's keys
 * are one 64-byte line (hkey[1] starts a line). The minimum of four is found without branches;
 * the slots from hn to hcap + 3 hold SIM__KEY_MAX, so the last node's missing children never win
 * and the loop has no bounds test but the one on the first child. (A 4-ary heap of 32-byte
 * entries with a three-branch comparator was tried before and lost 9% on PHOLD; the binary heap
 * it replaces spent over half of PHOLD in mispredicted compares and sift-down misses.) */

/* Sets the heap's capacity to cap >= hn: doubled when full; halved when an eighth of it is in use
 * (a burst, such as every provider's first message at time 0, leaves no memory behind it). */
#define SIM__HEAP_KEEP 65536u /* capacity never given back: 1.5 MB */
static void sim__heap_resize(sim_engine *e, size_t cap) {
  /* realloc, not posix_memalign + free: freeing a large mmapped block raises glibc's mmap
   * threshold, and the market's later large blocks then came from the brk heap (+40-70 B per GPU
   * of peak RSS). The keys are moved when the block's alignment offset changes. */
  size_t old_off = e->hkey ? (size_t)((unsigned char *)e->hkey - (unsigned char *)e->hraw) : 0;
  unsigned char *raw = sim__xrealloc(e->hraw, (cap + 4) * sizeof(sim__key) + 128);
  uintptr_t line = ((uintptr_t)raw + sizeof(sim__key) + 63) & ~(uintptr_t)63; /* where hkey[1] goes */
  size_t off = (size_t)(line - sizeof(sim__key) - (uintptr_t)raw);
  if (e->hn && off != old_off) memmove(raw + off, raw + old_off, e->hn * sizeof(sim__key));
  sim__key *k = (sim__key *)(void *)(raw + off);
  for (size_t i = e->hn; i < cap + 4; i++) k[i] = SIM__KEY_MAX; /* growing: the new slots; shrinking: the last 4 */
  e->hraw = raw;
  e->hkey = k;
  e->hval = sim__xrealloc(e->hval, cap * sizeof *e->hval);
  e->hcap = cap;
}

static inline void sim__heap_push(sim_engine *e, const sim__ev *ev) {
  if (e->hn == e->hcap) sim__heap_resize(e, e->hcap ? e->hcap * 2 : 1024);
  sim__key *k = e->hkey, key = SIM__KEY(ev->hi, ev->lo);
  uint64_t *v = e->hval;
  size_t i = e->hn++;
  while (i) {
    size_t p = (i - 1) >> 2;
    if (!SIM__KEY_LT(key, k[p])) break;
    k[i] = k[p];
    v[i] = v[p];
    i = p;
  }
  k[i] = key;
  v[i] = ev->v;
}

static inline void sim__heap_pop(sim_engine *e, sim__ev *top) {
  sim__key *k = e->hkey;
  uint64_t *v = e->hval;
  top->hi = SIM__KEY_HI(k[0]);
  top->lo = SIM__KEY_LO(k[0]);
  top->v = v[0];
  size_t n = --e->hn;
  sim__key last = k[n];
  uint64_t lastv = v[n];
  k[n] = SIM__KEY_MAX;
  if (n < e->hcap / 8 && e->hcap > SIM__HEAP_KEEP) {
    sim__heap_resize(e, e->hcap / 2);
    k = e->hkey, v = e->hval;
  }
  if (!n) return;
  size_t i = 0;
  for (;;) {
    size_t c = 4 * i + 1;
    if (c >= n) break;
    /* the grandchildren's four lines are fetched while this level's children are compared: the
     * chain of dependent loads down the heap overlaps two levels at a time (at 16,384 LPs the keys,
     * 256 KB, live in L2; PHOLD's ratio to the bare heap loop 1.07-1.15x what it was there,
     * docs/history/performance-log.md) */
    size_t g = 4 * c + 1;
    if (g + 12 < n) { /* (keys exist up to hn + 3: no address past the array) */
      __builtin_prefetch(&k[g]);
      __builtin_prefetch(&k[g + 4]);
      __builtin_prefetch(&k[g + 8]);
      __builtin_prefetch(&k[g + 12]);
    } else if (g < n) {
      __builtin_prefetch(&k[g]);
    }
    size_t a = c + SIM__KEY_LT(k[c + 1], k[c]);
    size_t b = c + 2 + SIM__KEY_LT(k[c + 3], k[c + 2]);
    size_t m = SIM__KEY_LT(k[b], k[a]) ? b : a;
    if (!SIM__KEY_LT(k[m], last)) break;
    k[i] = k[m];
    v[i] = v[m];
    i = m;
  }
  k[i] = last;
  v[i] = lastv;
}

/* Where the second earliest event of the heap is (hn >= 2): the least of the top's four children
 * (the slots past hn hold SIM__KEY_MAX). */
static inline size_t sim__heap_second(const sim_engine *e) {
  const sim__key *k = e->hkey;
  size_t a = 1 + SIM__KEY_LT(k[2], k[1]), b = 3 + SIM__KEY_LT(k[4], k[3]);
  return SIM__KEY_LT(k[b], k[a]) ? b : a;
}

/* Time of the earliest event in the heap (the heap is not empty). */
static inline double sim__heap_top_t(const sim_engine *e) { return sim__btime(SIM__KEY_HI(e->hkey[0])); }

/* ---- far events: a calendar in front of the heap ------------------------------------------ */
/* With hundreds of thousands of events pending, most are far in the future (a provider's next
 * churn, its daily review) and a binary heap over all of them spends its time on cache misses.
 * Once the heap holds more than calendar_min events (engine_opts.c, 65,536), events at or beyond `horizon` go into
 * buckets of width w (a calendar queue: Brown 1988), a ring of SIM__CAL_B buckets and an
 * overflow list beyond it, and enter the heap only when their bucket comes up; the heap then
 * holds about one bucket. Pops still come from the heap alone, and the heap is refilled before
 * its top could pass an event still in a bucket, so the order of events is exactly the heap's
 * order on (t, src, seq): results do not change. */
#define SIM__CAL_B 4096u
#define SIM__NIL32 UINT32_MAX

static uint32_t sim__chunk_new(sim_engine *e) {
  uint32_t c = e->free_chunk;
  if (c != SIM__NIL32) {
    e->free_chunk = e->chunks[c].next;
  } else {
    if (e->nchunks == e->capchunks) {
      e->capchunks = e->capchunks ? e->capchunks * 2 : 64;
      e->chunks = sim__xrealloc(e->chunks, (size_t)e->capchunks * sizeof *e->chunks);
    }
    c = e->nchunks++;
  }
  e->chunks[c].n = 0;
  e->chunks[c].next = SIM__NIL32;
  return c;
}
/* Appends ev to a list of chunks. The last chunk's count is kept in *tn, a byte of an array of
 * 4 KB that stays in cache, not in the chunk, where it is on another line than most slots (at a
 * million LPs that load missed and was 4% of the market's time): the chunk's own count is written
 * when it fills (on the line of its last slot) and by sim__list_seal before the list is read.
 * Every chunk of a list but the last is full. */
static void sim__list_push(sim_engine *e, uint32_t *head, uint32_t *tail, uint8_t *tn, const sim__ev *ev) {
  if (*tail == SIM__NIL32 || *tn == SIM__CHUNK) {
    uint32_t c = sim__chunk_new(e);
    if (*tail == SIM__NIL32)
      *head = c;
    else
      e->chunks[*tail].next = c;
    *tail = c;
    *tn = 0;
  }
  sim__chunk *ch = &e->chunks[*tail];
  ch->ev[*tn] = *ev;
  if (++*tn == SIM__CHUNK) ch->n = SIM__CHUNK;
}
/* Writes a list's last count into its chunk, for a reader of the list. */
static inline void sim__list_seal(sim_engine *e, uint32_t tail, uint8_t tn) {
  if (tail != SIM__NIL32) e->chunks[tail].n = tn;
}
/* Files a far event (t >= horizon) in its bucket, or in the overflow list. */
static void sim__far_put(sim_engine *e, const sim__ev *ev) {
  if (sim__ev_t(ev) < e->horizon) { /* due already (an overflow event the ring has reached) */
    sim__heap_push(e, ev);
    return;
  }
  double q = floor(sim__ev_t(ev) / e->w);
  uint64_t k = q < 1.8e19 ? (uint64_t)q : UINT64_MAX;
  if (k <= e->cur) k = e->cur + 1; /* t / w rounded down to the heap's bucket: the next one */
  if (k - e->cur < SIM__CAL_B) {
    uint32_t b = (uint32_t)(k & (SIM__CAL_B - 1));
    sim__list_push(e, &e->bhead[b], &e->btail[b], &e->btn[b], ev);
    e->nring++;
  } else {
    sim__list_push(e, &e->ohead, &e->otail, &e->otn, ev);
    e->nover++;
  }
}
/* Moves the overflow events that the ring now covers into their buckets. */
static void sim__far_scan(sim_engine *e) {
  sim__list_seal(e, e->otail, e->otn);
  uint32_t c = e->ohead;
  e->ohead = e->otail = SIM__NIL32;
  e->nover = 0;
  while (c != SIM__NIL32) {
    for (uint32_t i = 0; i < e->chunks[c].n; i++) {
      sim__ev ev = e->chunks[c].ev[i]; /* far_put may move the chunk array (it read a freed block then) */
      sim__far_put(e, &ev);
    }
    uint32_t next = e->chunks[c].next; /* chunks may have moved (realloc) */
    e->chunks[c].next = e->free_chunk;
    e->free_chunk = c;
    c = next;
  }
  e->since_scan = 0;
}
/* Turns the calendar on: from now on events at or past the end of the current bucket wait in
 * buckets. Bucket width: about cal_aim events at the rate seen so far. */
static void sim__far_on(sim_engine *e) {
  double rate = e->now > 0 ? (double)e->events / e->now : 0;
  double span = e->end > e->now ? e->end - e->now : 1;
  e->w = rate > 0 ? e->cal_aim / rate : span / SIM__CAL_B;
  if (!(e->w >= e->lookahead)) e->w = e->lookahead;
  e->bhead = malloc(SIM__CAL_B * sizeof *e->bhead);
  e->btail = malloc(SIM__CAL_B * sizeof *e->btail);
  e->btn = calloc(SIM__CAL_B, sizeof *e->btn);
  if (!e->bhead || !e->btail || !e->btn) SIM_FATAL("out of memory");
  for (uint32_t b = 0; b < SIM__CAL_B; b++) e->bhead[b] = e->btail[b] = SIM__NIL32;
  double q = floor(e->now / e->w);
  e->cur = q < 1.8e19 ? (uint64_t)q : 0;
  e->horizon = (double)(e->cur + 1) * e->w;
  e->ev_at = e->events;
}
/* Sets the bucket width anew and files every far event again (the heap keeps what it holds). */
static void sim__far_rebuild(sim_engine *e, double w) {
  uint32_t list = SIM__NIL32, last = SIM__NIL32;
  for (uint32_t b = 0; b <= SIM__CAL_B; b++) { /* the buckets, then the overflow list */
    uint32_t h = b < SIM__CAL_B ? e->bhead[b] : e->ohead, t = b < SIM__CAL_B ? e->btail[b] : e->otail;
    if (h == SIM__NIL32) continue;
    sim__list_seal(e, t, b < SIM__CAL_B ? e->btn[b] : e->otn);
    if (last == SIM__NIL32)
      list = h;
    else
      e->chunks[last].next = h;
    last = t;
    if (b < SIM__CAL_B) e->bhead[b] = e->btail[b] = SIM__NIL32;
  }
  e->ohead = e->otail = SIM__NIL32;
  e->nring = e->nover = 0;
  e->w = w;
  double q = floor(e->now / w);
  e->cur = q < 1.8e19 ? (uint64_t)q : 0;
  e->horizon = (double)(e->cur + 1) * w;
  for (uint32_t c = list; c != SIM__NIL32;) {
    for (uint32_t i = 0; i < e->chunks[c].n; i++) {
      sim__ev ev = e->chunks[c].ev[i]; /* far_put may move the chunk array */
      sim__far_put(e, &ev);
    }
    uint32_t next = e->chunks[c].next;
    e->chunks[c].next = e->free_chunk;
    e->free_chunk = c;
    c = next;
  }
  e->far_rebuilds++;
  e->since_scan = e->adv = 0;
  e->ev_at = e->events;
}

/* Makes the heap's top the earliest pending event: while the heap is empty or its top is at or
 * past the horizon and buckets hold events, the next bucket's events enter the heap. */
static void sim__far_refill(sim_engine *e) {
  while ((e->hn == 0 || sim__heap_top_t(e) >= e->horizon) && (e->nring || e->nover)) {
    if (!e->nring) { /* nothing in the ring: jump to the earliest overflow event's bucket */
      double tmin = INFINITY;
      sim__list_seal(e, e->otail, e->otn);
      for (uint32_t c = e->ohead; c != SIM__NIL32; c = e->chunks[c].next)
        for (uint32_t i = 0; i < e->chunks[c].n; i++)
          if (sim__ev_t(&e->chunks[c].ev[i]) < tmin) tmin = sim__ev_t(&e->chunks[c].ev[i]);
      double q = floor(tmin / e->w);
      uint64_t k = q < 1.8e19 ? (uint64_t)q : UINT64_MAX - SIM__CAL_B;
      if (k > e->cur + 1) e->cur = k - 1;
      e->far_jumps++;
      sim__far_scan(e);
      continue;
    }
    e->cur++;
    e->horizon = (double)(e->cur + 1) * e->w;
    if (++e->since_scan >= SIM__CAL_B / 2) {
      sim__far_scan(e);
      e->far_scans++;
    }
    uint32_t b = (uint32_t)(e->cur & (SIM__CAL_B - 1));
    uint32_t c = e->bhead[b];
    sim__list_seal(e, e->btail[b], e->btn[b]);
    e->bhead[b] = e->btail[b] = SIM__NIL32;
    while (c != SIM__NIL32) {
      sim__chunk *ch = &e->chunks[c];
      for (uint32_t i = 0; i < ch->n; i++) sim__heap_push(e, &ch->ev[i]);
      e->nring -= ch->n;
      uint32_t next = ch->next;
      ch->next = e->free_chunk;
      e->free_chunk = c;
      c = next;
    }
    /* after 512 buckets, check the width against the events they saw: rebuilt (at most three
     * times) when a bucket averaged under a quarter or over four times the aim */
    if (e->retunes < 3 && ++e->adv == 512) {
      double mean = (double)(e->events - e->ev_at) / 512.0;
      e->retunes++;
      if (mean < e->cal_aim / 4 || mean > e->cal_aim * 4) {
        double w = e->w * e->cal_aim / (mean > 1 ? mean : 1);
        sim__far_rebuild(e, w > e->lookahead ? w : e->lookahead);
      } else {
        e->retunes = 3;
      }
    }
  }
}
/* Every new pending event goes through here. */
static inline void sim__pend(sim_engine *e, const sim__ev *ev) {
  if (sim__ev_t(ev) < e->horizon) {
    sim__heap_push(e, ev);
    if (e->hn > e->cal_on && e->cal_on && isinf(e->horizon)) sim__far_on(e);
  } else {
    sim__far_put(e, ev);
  }
}

/* ---- payload slab -------------------------------------------------------------------------- */
/* Payloads that do not travel in the event wait in slots of one array. A slot is taken where the
 * array is lowest (a bitmap of free slots, one bit each, with a summary level per 64 words above
 * it: a few count-trailing-zeros to find it), so the payloads pending at any time stay packed at
 * the array's start, and the array is halved once its upper half is empty and a quarter of it is
 * in use. A burst leaves no memory behind it: the market's million first AVAILs, all pending at
 * once at its start, used to keep 36 MB of slots and free list for the rest of the run (1 in 3
 * of those slots is ever in use again). Which slot a payload takes never reaches a model. */
#define SIM__SLAB_MIN 1024u

/* Rebuilds the summary levels above level 0 (free bits of slab_cap slots). */
static void sim__fb_build(sim_engine *e) {
  size_t n = (e->slab_cap + 63) / 64; /* words of the level below */
  unsigned l = 0;
  while (n > 1) {
    size_t up = (n + 63) / 64;
    e->fb[l + 1] = sim__xrealloc(e->fb[l + 1], up * sizeof(uint64_t));
    memset(e->fb[l + 1], 0, up * sizeof(uint64_t));
    for (size_t w = 0; w < n; w++)
      if (e->fb[l][w]) e->fb[l + 1][w / 64] |= UINT64_C(1) << (w % 64);
    n = up;
    l++;
  }
  e->fb_levels = l + 1;
}

/* Sets the slab to cap slots (a power of two), keeping slots below cap as they are. */
static void sim__slab_resize(sim_engine *e, size_t cap) {
  size_t old = e->slab_cap, w0 = (cap + 63) / 64, wold = (old + 63) / 64;
  e->slab = sim__xrealloc(e->slab, cap * e->msg_size);
  e->fb[0] = sim__xrealloc(e->fb[0], w0 * sizeof(uint64_t));
  if (cap > old) memset(e->fb[0] + wold, 0xff, (w0 - wold) * sizeof(uint64_t)); /* the new slots are free */
  e->slab_cap = cap;
  sim__fb_build(e);
  e->slab_hi = 0; /* slots in use in the upper half [cap / 2, cap) */
  for (size_t w = cap / 2 / 64; w < w0; w++) e->slab_hi += (size_t)__builtin_popcountll(~e->fb[0][w]);
}

static uint32_t sim__slot_get(sim_engine *e) {
  if (e->slab_live == e->slab_cap) {
    size_t cap = e->slab_cap ? e->slab_cap * 2 : SIM__SLAB_MIN;
    if (cap > UINT32_MAX) SIM_FATAL("more than 2^32 pending events on one rank");
    sim__slab_resize(e, cap);
  }
  size_t s = 0; /* the lowest free slot: down the summaries */
  for (unsigned l = e->fb_levels; l-- > 0;) s = s * 64 + (size_t)__builtin_ctzll(e->fb[l][s]);
  for (size_t i = s, l = 0; l < e->fb_levels; l++, i /= 64) { /* taken: its bit, and a summary's when a word empties */
    uint64_t *w = &e->fb[l][i / 64];
    *w &= ~(UINT64_C(1) << (i % 64));
    if (*w) break;
  }
  e->slab_live++;
  if (s >= e->slab_cap / 2) e->slab_hi++;
  return (uint32_t)s;
}

static inline void sim__slot_put(sim_engine *e, uint32_t s) {
  for (size_t i = s, l = 0; l < e->fb_levels; l++, i /= 64) { /* free: its bit, and a summary's when a word fills */
    uint64_t *w = &e->fb[l][i / 64], was = *w;
    *w = was | UINT64_C(1) << (i % 64);
    if (was) break;
  }
  e->slab_live--;
  if (s >= e->slab_cap / 2) e->slab_hi--;
  while (!e->slab_hi && e->slab_live * 4 <= e->slab_cap && e->slab_cap > SIM__SLAB_MIN)
    sim__slab_resize(e, e->slab_cap / 2);
}

static void sim__enqueue_local(sim_engine *e, double t, uint64_t src, uint64_t seq, sim_id dst, const void *msg,
                               size_t len) {
  uint32_t d = (uint32_t)(dst - e->first), slot = 0;
  if (e->msg_size) {
    const unsigned char *b = msg;
    size_t k = SIM__INLINE_BYTES;
    while (k < len && !b[k]) k++;
    if (k >= len) { /* nothing after the first four bytes: the payload travels in the event */
      if (len) memcpy(&slot, b, len < SIM__INLINE_BYTES ? len : SIM__INLINE_BYTES);
      d |= SIM__INLINE;
    } else {
      slot = sim__slot_get(e);
      unsigned char *p = e->slab + (size_t)slot * e->msg_size;
      if (len) memcpy(p, msg, len);
      if (len < e->msg_size) memset(p + len, 0, e->msg_size - len);
    }
  }
  sim__ev ev = {sim__tbits(t), src << (e->sbits & 63) | seq, d | (uint64_t)slot << 32};
  sim__pend(e, &ev);
}

/* ---- what handlers call -------------------------------------------------------------------- */

sim_id sim_lp_id(const sim_lp *lp) { return sim__id(lp); }
sim_time sim_now(const sim_lp *lp) { return sim__eng(lp)->now; }
const void *sim_lp_ctx(const sim_lp *lp) { return sim__eng(lp)->model->ctx; }
gsl_rng *sim_lp_rng(sim_lp *lp) { return &lp->rng; }
void *sim_lp_state(const sim_lp *lp) { return lp->state; }

sim_lp *sim_peer(sim_lp *lp, sim_id id) {
  sim_engine *e = sim__eng(lp);
  sim_id me = sim__id(lp);
  if (!e->model->shared_groups)
    SIM_FATAL("LP %llu asked for LP %llu's state in a model without shared groups", (unsigned long long)me,
              (unsigned long long)id);
  unsigned g = sim__block_of(e->gfirst, e->ngroups, me);
  if (id < e->gfirst[g] || id >= e->gfirst[g + 1])
    SIM_FATAL("LP %llu (group %u) asked for the state of LP %llu, of another group", (unsigned long long)me, g,
              (unsigned long long)id);
  if (id - e->first >= e->nlocal) /* the partition keeps groups whole (sim__groups): an engine bug */
    SIM_FATAL("LP %llu asked for LP %llu of its group, which is on another rank", (unsigned long long)me,
              (unsigned long long)id);
  return &e->lps[id - e->first];
}

/* sim_send and sim_send_at: t = now + delay, computed by the caller (sim_send_at's t is the one
 * the LP computed when it set its timer, so that a timer kept by the model fires at the very time
 * a sim_send of that delay would have given it). */
__attribute__((always_inline)) static inline void sim__send(sim_engine *e, sim_lp *lp, sim_id dst, double t,
                                                            sim_time delay, const void *msg, size_t len) {
  sim_id me = sim__id(lp);
  if (e->finalizing) SIM_FATAL("LP %llu sent a message from finalize", (unsigned long long)me);
  if (!(delay >= 0.0)) SIM_FATAL("LP %llu sent a message with delay %g < 0", (unsigned long long)me, delay);
  if (dst != me && delay < e->lookahead)
    SIM_FATAL("LP %llu sent to LP %llu with delay %g below the model's lookahead %g", (unsigned long long)me,
              (unsigned long long)dst, delay, e->lookahead);
  if (dst >= e->model->nlps)
    SIM_FATAL("LP %llu sent to LP %llu of %llu", (unsigned long long)me, (unsigned long long)dst,
              (unsigned long long)e->model->nlps);
  if (e->gfirst && delay < e->glook && dst != me) { /* checked on any partition: a bug shows on one rank */
    unsigned g = sim__block_of(e->gfirst, e->ngroups, me);
    if (dst < e->gfirst[g] || dst >= e->gfirst[g + 1])
      SIM_FATAL("LP %llu (group %u) sent to LP %llu of group %u with delay %g below the model's group lookahead %g",
                (unsigned long long)me, g, (unsigned long long)dst, sim__block_of(e->gfirst, e->ngroups, dst), delay,
                e->glook);
  }
  if (len > e->msg_size) SIM_FATAL("message of %zu bytes > msg_size %zu", len, e->msg_size);
  uint64_t seq = lp->seqt++ & ((UINT64_C(1) << SIM__TSHIFT) - 1);
  if (seq > e->seqmax)
    SIM_FATAL("LP %llu sent more than %llu messages (the event key's limit with %llu LPs)", (unsigned long long)me,
              (unsigned long long)e->seqmax, (unsigned long long)e->model->nlps);
  if (t >= e->end) return; /* would never be handled */
  if (dst - e->first < e->nlocal) {
    sim__enqueue_local(e, t, me, seq, dst, msg, len);
    return;
  }
  sim__buf *b = &e->out[sim__owner(e, dst)];
  sim__buf_reserve(b, e->wire_size);
  sim__wire w = {t, me, seq, dst};
  memcpy(b->p + b->len, &w, sizeof w);
  if (e->msg_size) {
    unsigned char *p = b->p + b->len + sizeof w;
    if (len) memcpy(p, msg, len);
    if (len < e->msg_size) memset(p + len, 0, e->msg_size - len);
  }
  b->len += e->wire_size;
}

void sim_send(sim_lp *lp, sim_id dst, sim_time delay, const void *msg, size_t len) {
  sim_engine *e = sim__eng(lp);
  sim__send(e, lp, dst, e->now + delay, delay, msg, len);
}

void sim_send_at(sim_lp *lp, sim_id dst, sim_time t, const void *msg, size_t len) {
  sim_engine *e = sim__eng(lp);
  if (!(t >= e->now))
    SIM_FATAL("LP %llu sent a message for time %.17g before now %.17g", (unsigned long long)sim__id(lp), t, e->now);
  sim__send(e, lp, dst, t, t - e->now, msg, len);
}

void sim_series_add(sim_lp *lp, unsigned s, unsigned col, sim_time t, int64_t v) {
  sim_engine *e = sim__eng(lp);
  const sim_model *m = e->model;
  if (s >= m->nseries || col >= m->series[s].ncols) SIM_FATAL("series %u column %u out of range", s, col);
  size_t bin = 0;
  if (m->series[s].bin_width > 0 && t > 0) {
    double b = floor(t / m->series[s].bin_width);
    bin = b >= (double)e->nbins[s] ? e->nbins[s] - 1 : (size_t)b;
  }
  e->series[s][bin * m->series[s].ncols + col] += v;
}

void sim_table_put(sim_lp *lp, unsigned tab, const void *record) {
  sim_engine *e = sim__eng(lp);
  const sim_model *m = e->model;
  if (tab >= m->ntables) SIM_FATAL("table %u out of range", tab);
  size_t rs = m->tables[tab].record_size;
  sim__tab *t = &e->tabs[tab];
  sim__buf_reserve(&t->data, 16 + rs);
  uint64_t hdr[2] = {sim__id(lp), e->tab_order++};
  memcpy(t->data.p + t->data.len, hdr, 16);
  memcpy(t->data.p + t->data.len + 16, record, rs);
  t->data.len += 16 + rs;
  t->n++;
}

void sim_pending(const sim_lp *lp, sim_pending_stats *out) {
  const sim_engine *e = sim__eng(lp);
  *out = (sim_pending_stats){e->hn, e->hcap, e->slab_live, e->slab_cap, e->far_scans, e->far_jumps, e->far_rebuilds};
}

size_t sim_series_nbins(const sim_model *m, unsigned s) {
  const sim_series_def *d = &m->series[s];
  if (d->bin_width <= 0) return 1;
  double n = ceil(m->end_time / d->bin_width);
  return n < 1 ? 1 : (size_t)n;
}

size_t sim_series_bytes(const sim_model *m) {
  double b = 0;
  for (unsigned s = 0; s < m->nseries; s++) b += (double)sim_series_nbins(m, s) * m->series[s].ncols * 8.0 * 2.0;
  return b >= (double)SIZE_MAX ? SIZE_MAX : (size_t)b;
}

/* ---- setup and teardown -------------------------------------------------------------------- */

static int sim__validate(const sim_model *m) {
  if (!m || !m->types || m->ntypes == 0 || m->nlps == 0) return SIM_EINVAL;
  if (m->ntypes > 1 && !m->type_of) return SIM_EINVAL;
  if (m->ntypes > (1u << (64 - SIM__TSHIFT))) return SIM_EINVAL; /* the type's index has 8 bits */
  if (!(m->lookahead > 0) || !(m->end_time >= 0) || isinf(m->lookahead)) return SIM_EINVAL;
  if (m->shared_groups && !m->ngroups) return SIM_EINVAL;
  if (m->ngroups) { /* consecutive blocks that cover every LP, further apart than the lookahead */
    if (!m->group_first || !(m->group_lookahead >= m->lookahead) || m->ngroups > m->nlps) return SIM_EINVAL;
    sim_id prev = m->group_first(m->ctx, 0);
    if (prev != 0) return SIM_EINVAL;
    for (unsigned g = 1; g < m->ngroups; g++) {
      sim_id f = m->group_first(m->ctx, g);
      if (!(f > prev && f < m->nlps)) return SIM_EINVAL;
      prev = f;
    }
  }
  for (unsigned s = 0; s < m->nseries; s++)
    if (m->series[s].ncols == 0 || !(m->series[s].bin_width >= 0)) return SIM_EINVAL;
  return SIM_OK;
}

static void sim__engine_free(sim_engine *e) {
  if (!e) return;
  const sim_model *m = e->model;
  if (e->states)
    for (unsigned t = 0; t < m->ntypes; t++) free(e->states[t]);
  free(e->states);
  free(e->lps);
  free(e->hraw);
  free(e->hval);
  free(e->chunks);
  free(e->bhead);
  free(e->btail);
  free(e->btn);
  free(e->slab);
  free(e->inl);
  free(e->inl_next);
  free(e->inl_next2);
  free(e->slabmsg);
  for (unsigned l = 0; l < 6; l++) free(e->fb[l]);
  if (e->out)
    for (int r = 0; r < e->nranks; r++) free(e->out[r].p);
  free(e->out);
  free(e->bnd);
  free(e->gfirst);
  if (e->series)
    for (unsigned s = 0; s < m->nseries; s++) free(e->series[s]);
  free(e->series);
  free(e->nbins);
  if (e->tabs)
    for (unsigned t = 0; t < m->ntables; t++) free(e->tabs[t].data.p);
  free(e->tabs);
  free(e);
}

/* The model's groups (checked by sim__validate), and the partition on their boundaries when there
 * are enough of them: rank r's block ends at the group start nearest to the (r + 1)-th share of the
 * LPs, leaving a group to each rank after it; with fewer groups than ranks and shared groups, group
 * r on rank r and nothing on the ranks after the last. -1 when out of memory. */
static int sim__groups(sim_engine *e, const sim_model *m) {
  unsigned G = m->ngroups;
  e->gfirst = malloc(((size_t)G + 1) * sizeof *e->gfirst);
  if (!e->gfirst) return -1;
  for (unsigned g = 0; g < G; g++) e->gfirst[g] = m->group_first(m->ctx, g);
  e->gfirst[G] = m->nlps;
  e->ngroups = G;
  e->glook = m->group_lookahead;
  unsigned P = (unsigned)e->nranks;
  if (P < 2 || (G < P && !m->shared_groups)) return 0; /* equal blocks and the LP lookahead */
  e->bnd = malloc(((size_t)P + 1) * sizeof *e->bnd);
  if (!e->bnd) return -1;
  e->bnd[0] = 0;
  e->bnd[P] = m->nlps;
  unsigned k = 0; /* the group the last block ended before */
  for (unsigned r = 1; r < P && G < P; r++) e->bnd[r] = r < G ? e->gfirst[r] : m->nlps; /* a group per rank */
  for (unsigned r = 1; r < P && G >= P; r++) {
    double want = (double)m->nlps * r / P;
    unsigned lo = k + 1, hi = G - (P - r), best = lo; /* leave one group to each rank after r */
    for (unsigned g = lo; g <= hi; g++)
      if (fabs((double)e->gfirst[g] - want) < fabs((double)e->gfirst[best] - want)) best = g;
    e->bnd[r] = e->gfirst[best];
    k = best;
  }
  e->wla = e->glook;
  return 0;
}

static sim_engine *sim__engine_new(const sim_model *m, const sim_run_opts *o) {
  sim_engine *e = calloc(1, sizeof *e);
  if (!e) return NULL;
  e->model = m;
  e->use_mpi = o->use_mpi;
  e->nranks = 1;
  if (o->use_mpi) {
    MPI_Comm_rank(MPI_COMM_WORLD, &e->rank);
    MPI_Comm_size(MPI_COMM_WORLD, &e->nranks);
  }
  e->base = m->nlps / (sim_id)e->nranks;
  e->rem = m->nlps % (sim_id)e->nranks;
  e->wla = m->lookahead;
  if (m->ngroups && sim__groups(e, m)) goto fail;
  e->first = sim__first_of(e, e->rank);
  e->nlocal = sim__first_of(e, e->rank + 1) - e->first;
  if (e->nlocal >= SIM__INLINE) goto fail; /* local indices leave dst's top bit free */
  /* the key's low word: src in the top bits, seq below (see sim__ev) */
  unsigned idbits = 0;
  while (idbits < 64 && (m->nlps - 1) >> idbits) idbits++;
  e->sbits = 64 - idbits;
  if (e->sbits < 16) goto fail; /* over 2^48 LPs */
  e->seqmax = e->sbits == 64 ? UINT64_MAX : (UINT64_C(1) << e->sbits) - 1;
  if (e->seqmax > (UINT64_C(1) << SIM__TSHIFT) - 2) e->seqmax = (UINT64_C(1) << SIM__TSHIFT) - 2; /* the type's bits */
  e->now = 0;
  e->horizon = INFINITY; /* the calendar starts off */
  /* the engine's switches (engine_opts.h: calendar threshold and bucket aim, early hints); a bad
   * value fails the run here, and `spotlab` checks them at start-up with the message */
  sim_engine_settings st;
  if (sim_engine_settings_read(&st, NULL, 0)) goto fail;
  e->cal_on = (size_t)st.v[SIM_OPT_CALENDAR_MIN];
  e->cal_aim = st.v[SIM_OPT_CALENDAR_PER_BUCKET];
  e->free_chunk = e->ohead = e->otail = SIM__NIL32;
  e->end = m->end_time;
  e->lookahead = m->lookahead;
  e->msg_size = m->msg_size;
  e->wire_size = sizeof(sim__wire) + m->msg_size;
  e->wire_size = (e->wire_size + 7) & ~(size_t)7;
  e->progress = o->progress && e->rank == 0;
  e->progress_label = o->progress_label;

  e->inl = calloc(m->msg_size > SIM__INLINE_BYTES ? m->msg_size : SIM__INLINE_BYTES, 1);
  e->inl_next = calloc(m->msg_size > SIM__INLINE_BYTES ? m->msg_size : SIM__INLINE_BYTES, 1);
  e->inl_next2 = calloc(m->msg_size > SIM__INLINE_BYTES ? m->msg_size : SIM__INLINE_BYTES, 1);
  e->slabmsg = calloc(m->msg_size > SIM__INLINE_BYTES ? m->msg_size : SIM__INLINE_BYTES, 1);
  if (!e->inl || !e->inl_next || !e->inl_next2 || !e->slabmsg) goto fail;
  /* Early hints on a rank with many LPs only: with fewer, their records stay in cache, and the
   * hint's own work was 3-5% of the market's time at 10k GPUs (docs/history/performance-log.md).
   * early_hints 0 turns them off, 1 on at any size (an A/B measurement, the tests). */
  int early = st.v[SIM_OPT_EARLY_HINTS] < 0 ? e->nlocal >= SIM__HINT2_MIN_LPS : st.v[SIM_OPT_EARLY_HINTS] > 0;
  for (unsigned t = 0; t < m->ntypes; t++) {
    e->hints |= m->types[t].prefetch != NULL;
    e->hints2 |= m->types[t].prefetch_early != NULL && early;
  }
  e->hints |= e->hints2;
  e->out = calloc((size_t)e->nranks, sizeof *e->out);
  { /* 64-byte aligned: each LP record is one line */
    size_t bytes = (size_t)(e->nlocal ? e->nlocal : 1) * sizeof *e->lps;
    void *p = NULL;
    if (!posix_memalign(&p, 64, bytes)) {
      sim_bigmem_advise(p, bytes);
      memset(p, 0, bytes);
      e->lps = p;
    }
  }
  e->states = calloc(m->ntypes, sizeof *e->states);
  e->series = calloc(m->nseries ? m->nseries : 1, sizeof *e->series);
  e->nbins = calloc(m->nseries ? m->nseries : 1, sizeof *e->nbins);
  e->tabs = calloc(m->ntables ? m->ntables : 1, sizeof *e->tabs);
  if (!e->out || !e->lps || !e->states || !e->series || !e->nbins || !e->tabs) goto fail;
  for (unsigned s = 0; s < m->nseries; s++) {
    e->nbins[s] = sim_series_nbins(m, s);
    e->series[s] = calloc(e->nbins[s] * m->series[s].ncols, sizeof(int64_t));
    if (!e->series[s]) goto fail;
  }

  /* States: count LPs per type, one zeroed block per type. */
  size_t *count = calloc(m->ntypes, sizeof *count), *used = calloc(m->ntypes, sizeof *used);
  if (!count || !used) {
    free(count);
    free(used);
    goto fail;
  }
  for (sim_id i = 0; i < e->nlocal; i++) {
    unsigned t = m->ntypes > 1 ? m->type_of(m->ctx, e->first + i) : 0;
    if (t >= m->ntypes) SIM_FATAL("type_of(%llu) = %u >= ntypes %u", (unsigned long long)(e->first + i), t, m->ntypes);
    count[t]++;
  }
  for (unsigned t = 0; t < m->ntypes; t++) {
    size_t sz = m->types[t].state_size;
    if (count[t] && sz) { /* 64-byte aligned: a state whose size is a multiple of 64 takes whole lines */
      void *p = NULL;
      if (!posix_memalign(&p, 64, count[t] * sz)) {
        sim_bigmem_advise(p, count[t] * sz);
        memset(p, 0, count[t] * sz);
      }
      e->states[t] = p;
      if (!e->states[t]) {
        free(count);
        free(used);
        goto fail;
      }
    }
  }
  for (sim_id i = 0; i < e->nlocal; i++) {
    sim_lp *lp = &e->lps[i];
    unsigned t = m->ntypes > 1 ? m->type_of(m->ctx, e->first + i) : 0;
    lp->seqt = (uint64_t)t << SIM__TSHIFT;
    lp->state = m->types[t].state_size ? e->states[t] + used[t] * m->types[t].state_size : NULL;
    used[t]++;
    lp->rng.type = sim_rng_xoshiro;
    lp->rng.state = lp->rs;
    sim_rng_seed_stream(&lp->rng, o->seed, m->stream_of ? m->stream_of(m->ctx, e->first + i) : e->first + i);
  }
  free(count);
  free(used);
  return e;
fail:
  sim__engine_free(e);
  return NULL;
}

/* ---- the loops ----------------------------------------------------------------------------- */

static void sim__progress(sim_engine *e, int final) {
  double now = sim__clock();
  if (!final && now - e->t_last_print < 0.5) return;
  e->t_last_print = now;
  double el = now - e->t_start;
  double frac = e->end > 0 ? e->now / e->end : 1.0;
  if (final) frac = 1.0;
  fprintf(stderr, "\r%s%ssim time %.4g of %.4g s (%3.0f%%), %llu events, %.3g events/s, %.0f s elapsed%s",
          e->progress_label ? e->progress_label : "", e->progress_label ? ": " : "", final ? e->end : e->now, e->end,
          100.0 * frac, (unsigned long long)e->events, el > 0 ? (double)e->events / el : 0.0, el, final ? "\n" : "   ");
  fflush(stderr);
}

/* Handles local events with t < limit. */
/* Prefetches the LP record and the slab payload of a pending event (its heap value). */
static inline void sim__fetch_ev(const sim_engine *e, uint64_t v) {
  __builtin_prefetch(&e->lps[(uint32_t)v & ~SIM__INLINE]);
  if (e->msg_size && !(v & SIM__INLINE)) __builtin_prefetch(e->slab + (size_t)(v >> 32) * e->msg_size);
}

/* Calls the hint (early: prefetch_early) of the LP type of the event in heap slot i, if it has
 * one, with its payload unpacked into buf when it travels in the event. */
static inline void sim__hint(sim_engine *e, size_t i, int early, unsigned char *buf, unsigned sb1) {
  uint64_t v = e->hval[i];
  const sim_lp *lp = &e->lps[(uint32_t)v & ~SIM__INLINE];
  const sim_lptype *t = &e->model->types[lp->seqt >> SIM__TSHIFT];
  void (*h)(const sim_lp *, const void *, const void *, sim_id) = early ? t->prefetch_early : t->prefetch;
  if (!h) return;
  uint32_t slot = (uint32_t)(v >> 32);
  const void *msg = NULL;
  if (v & SIM__INLINE) {
    memcpy(buf, &slot, SIM__INLINE_BYTES);
    msg = buf;
  } else if (e->msg_size) {
    msg = e->slab + (size_t)slot * e->msg_size;
  }
  h(lp, lp->state, msg, (SIM__KEY_LO(e->hkey[i]) >> 1) >> sb1);
}

static void sim__process_until(sim_engine *e, double limit) {
  sim__ev ev;
  const size_t ms = e->msg_size;
  const unsigned sb1 = e->sbits - 1; /* src = (lo >> 1) >> (sbits - 1): no shift by 64 */
  const sim_lptype *types = e->model->types;
  for (;;) {
    sim__far_refill(e);
    if (!e->hn || !(sim__heap_top_t(e) < limit)) break;
    sim__heap_pop(e, &ev);
    e->now = sim__btime(ev.hi);
    uint32_t d = (uint32_t)ev.v, slot = (uint32_t)(ev.v >> 32);
    int inl = (d & SIM__INLINE) != 0;
    sim_lp *lp = &e->lps[d & ~SIM__INLINE];
    const void *msg = NULL;
    if (inl) {
      memcpy(e->inl, &slot, SIM__INLINE_BYTES); /* the rest of e->inl stays zero */
      msg = e->inl;
    } else if (ms) {
      /* copied out and its slot freed before the handler runs: the handler's own sends may grow
       * the slab (realloc), which would leave a pointer into it dangling, and may take the slot */
      memcpy(e->slabmsg, e->slab + (size_t)slot * ms, ms);
      msg = e->slabmsg;
      sim__slot_put(e, slot);
    }
    /* the next event's LP and payload are fetched while this one is handled (when the handler
     * schedules something earlier, the hint is merely wasted) */
    if (e->hn) {
      sim__fetch_ev(e, e->hval[0]);
      if (e->hints2 && e->hn > 1) sim__fetch_ev(e, e->hval[sim__heap_second(e)]); /* for its early hint */
    }
    types[lp->seqt >> SIM__TSHIFT].event(lp, lp->state, msg, (ev.lo >> 1) >> sb1);
    /* the next event's LP header and payload were fetched meanwhile: the model's own hint (its
     * state, the records its handler will index) is on its way during the bookkeeping and the heap
     * pop. Models without hints (PHOLD) skip this. */
    if (e->hints && e->hn) {
      sim__hint(e, 0, 0, e->inl_next, sb1);
      if (e->hints2 && e->hn > 1) sim__hint(e, sim__heap_second(e), 1, e->inl_next2, sb1); /* the one after it */
    }
    if ((++e->events & 0xFFFF) == 0 && e->progress) sim__progress(e, 0);
  }
}

/* Sends every rank its messages and enqueues what arrives. Collective. */
static void sim__exchange(sim_engine *e) {
  int P = e->nranks;
  int *scount = malloc(sizeof(int) * (size_t)P * 4);
  if (!scount) SIM_FATAL("out of memory");
  int *rcount = scount + P, *sdispl = rcount + P, *rdispl = sdispl + P;
  size_t stotal = 0;
  for (int r = 0; r < P; r++) {
    if (e->out[r].len > INT32_MAX) SIM_FATAL("more than 2 GiB of messages to one rank in a window");
    scount[r] = (int)e->out[r].len;
    stotal += e->out[r].len;
  }
  sim__mpi_check(MPI_Alltoall(scount, 1, MPI_INT, rcount, 1, MPI_INT, MPI_COMM_WORLD), "Alltoall");
  size_t rtotal = 0;
  for (int r = 0; r < P; r++) {
    rdispl[r] = (int)rtotal;
    rtotal += (size_t)rcount[r];
  }
  if (rtotal > INT32_MAX || stotal > INT32_MAX) SIM_FATAL("window exchange exceeds 2 GiB");
  unsigned char *sbuf = malloc(stotal ? stotal : 1), *rbuf = malloc(rtotal ? rtotal : 1);
  if (!sbuf || !rbuf) SIM_FATAL("out of memory");
  size_t off = 0;
  for (int r = 0; r < P; r++) {
    sdispl[r] = (int)off;
    if (e->out[r].len) memcpy(sbuf + off, e->out[r].p, e->out[r].len);
    off += e->out[r].len;
    e->out[r].len = 0;
  }
  sim__mpi_check(MPI_Alltoallv(sbuf, scount, sdispl, MPI_BYTE, rbuf, rcount, rdispl, MPI_BYTE, MPI_COMM_WORLD),
                 "Alltoallv");
  for (size_t p = 0; p < rtotal; p += e->wire_size) {
    sim__wire w;
    memcpy(&w, rbuf + p, sizeof w);
    sim__enqueue_local(e, w.t, w.src, w.seq, w.dst, rbuf + p + sizeof w, e->msg_size);
  }
  free(sbuf);
  free(rbuf);
  free(scount);
}

static void sim__run_parallel(sim_engine *e) {
  for (;;) {
    sim__exchange(e);
    sim__far_refill(e);
    double lmin = e->hn ? sim__heap_top_t(e) : SIM_TIME_INF, gmin;
    if (lmin != lmin) SIM_FATAL("an event time is not a number (rank %d)", e->rank);
    sim__mpi_check(MPI_Allreduce(&lmin, &gmin, 1, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD), "Allreduce");
    if (!(gmin < e->end)) break;
    double limit = gmin + e->wla;
    if (limit > e->end) limit = e->end;
    if (e->now < gmin) e->now = gmin;
    sim__process_until(e, limit);
    e->windows++;
  }
}

/* ---- collecting results -------------------------------------------------------------------- */

static int sim__cmp_entry(const void *a, const void *b) {
  uint64_t x[2], y[2];
  memcpy(x, a, 16);
  memcpy(y, b, 16);
  if (x[0] != y[0]) return x[0] < y[0] ? -1 : 1;
  return x[1] < y[1] ? -1 : (x[1] > y[1]);
}

/* Sorts this rank's records of table t by (LP id, write order) and strips the headers. */
static unsigned char *sim__table_sorted(sim_engine *e, unsigned t, size_t *bytes) {
  size_t rs = e->model->tables[t].record_size, es = 16 + rs;
  sim__tab *tb = &e->tabs[t];
  /* qsort needs fixed-size elements: they are (16 + rs) bytes each. */
  if (tb->n) qsort(tb->data.p, (size_t)tb->n, es, sim__cmp_entry); /* never qsort(NULL, 0) */
  unsigned char *out = malloc(tb->n * rs + 1);
  if (!out) SIM_FATAL("out of memory");
  for (uint64_t i = 0; i < tb->n; i++) memcpy(out + i * rs, tb->data.p + i * es + 16, rs);
  *bytes = tb->n * rs;
  return out;
}

static double sim__peak_rss_mib(void) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return (double)ru.ru_maxrss / 1024.0; /* Linux reports KiB */
}

static void sim__collect(sim_engine *e, sim_results *res) {
  const sim_model *m = e->model;
  int root = e->rank == 0;
  res->series = calloc(m->nseries ? m->nseries : 1, sizeof *res->series);
  res->nbins = calloc(m->nseries ? m->nseries : 1, sizeof *res->nbins);
  res->tables = calloc(m->ntables ? m->ntables : 1, sizeof *res->tables);
  res->nrecords = calloc(m->ntables ? m->ntables : 1, sizeof *res->nrecords);
  if (!res->series || !res->nbins || !res->tables || !res->nrecords) SIM_FATAL("out of memory");
  for (unsigned s = 0; s < m->nseries; s++) {
    size_t n = e->nbins[s] * m->series[s].ncols;
    res->nbins[s] = e->nbins[s];
    if (e->use_mpi && e->nranks > 1) {
      int64_t *sum = root ? malloc(n * sizeof *sum) : NULL;
      if (root && !sum) SIM_FATAL("out of memory");
      if (n > INT32_MAX) SIM_FATAL("series too large");
      sim__mpi_check(MPI_Reduce(e->series[s], sum, (int)n, MPI_INT64_T, MPI_SUM, 0, MPI_COMM_WORLD), "Reduce");
      res->series[s] = sum;
    } else {
      res->series[s] = e->series[s];
      e->series[s] = NULL;
    }
  }
  for (unsigned t = 0; t < m->ntables; t++) {
    size_t bytes, rs = m->tables[t].record_size;
    unsigned char *mine = sim__table_sorted(e, t, &bytes);
    if (e->use_mpi && e->nranks > 1) {
      int P = e->nranks;
      if (bytes > INT32_MAX) SIM_FATAL("table %s too large to gather", m->tables[t].name);
      int cnt = (int)bytes, *cnts = root ? malloc(sizeof(int) * (size_t)P * 2) : NULL;
      sim__mpi_check(MPI_Gather(&cnt, 1, MPI_INT, cnts, 1, MPI_INT, 0, MPI_COMM_WORLD), "Gather");
      unsigned char *all = NULL;
      int *displ = NULL;
      size_t total = 0;
      if (root) {
        displ = cnts + P;
        for (int r = 0; r < P; r++) {
          displ[r] = (int)total;
          total += (size_t)cnts[r];
        }
        if (total > INT32_MAX) SIM_FATAL("table %s too large to gather", m->tables[t].name);
        all = malloc(total + 1);
        if (!all) SIM_FATAL("out of memory");
      }
      /* Ranks own contiguous, increasing blocks of ids: concatenation keeps LP order. */
      sim__mpi_check(MPI_Gatherv(mine, cnt, MPI_BYTE, all, cnts, displ, MPI_BYTE, 0, MPI_COMM_WORLD), "Gatherv");
      free(mine);
      free(cnts);
      res->tables[t] = all;
      res->nrecords[t] = root ? total / rs : 0;
    } else {
      res->tables[t] = mine;
      res->nrecords[t] = bytes / rs;
    }
  }
  res->events = e->events;
  res->peak_rss_mib = sim__peak_rss_mib();
  if (e->use_mpi && e->nranks > 1) {
    uint64_t ev = e->events, tot = 0;
    double rss = res->peak_rss_mib, mx = 0;
    sim__mpi_check(MPI_Allreduce(&ev, &tot, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD), "Allreduce");
    sim__mpi_check(MPI_Allreduce(&rss, &mx, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD), "Allreduce");
    res->events = tot;
    res->peak_rss_mib = mx;
  }
}

int sim_run(const sim_model *m, const sim_run_opts *o, sim_results *res) {
  memset(res, 0, sizeof *res);
  int rc = sim__validate(m);
  if (rc) return rc;
  sim_engine_settings st; /* a bad switch is bad input, not a failed allocation */
  if (sim_engine_settings_read(&st, NULL, 0)) return SIM_EINVAL;
  sim_engine *e = sim__engine_new(m, o);
  if (!e) return SIM_ENOMEM;
  e->t_start = e->t_last_print = sim__clock();
  sim_engine *outer = sim__cur; /* a model may run an engine of its own inside a handler */
  sim__cur = e;

  for (sim_id i = 0; i < e->nlocal; i++) {
    sim_lp *lp = &e->lps[i];
    const sim_lptype *t = &m->types[lp->seqt >> SIM__TSHIFT];
    if (t->init) t->init(lp, lp->state);
  }
  if (e->use_mpi && e->nranks > 1) {
    sim__run_parallel(e);
  } else {
    sim__process_until(e, e->end);
    e->windows = 1;
  }
  e->now = e->end;
  e->finalizing = 1;
  for (sim_id i = 0; i < e->nlocal; i++) {
    sim_lp *lp = &e->lps[i];
    const sim_lptype *t = &m->types[lp->seqt >> SIM__TSHIFT];
    if (t->finalize) t->finalize(lp, lp->state);
  }
  double wall = sim__clock() - e->t_start;
  if (e->progress) sim__progress(e, 1);

  res->model = m;
  res->seed = o->seed;
  res->ranks = e->nranks;
  res->windows = e->windows;
  sim__collect(e, res);
  res->wall_s = wall;
  if (e->use_mpi && e->nranks > 1) {
    double mx = 0;
    sim__mpi_check(MPI_Allreduce(&wall, &mx, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD), "Allreduce");
    res->wall_s = mx;
  }
  sim__engine_free(e);
  sim__cur = outer;
  return SIM_OK;
}

void sim_results_free(sim_results *res) {
  if (!res || !res->model) return;
  for (unsigned s = 0; s < res->model->nseries; s++) free(res->series ? res->series[s] : NULL);
  for (unsigned t = 0; t < res->model->ntables; t++) free(res->tables ? res->tables[t] : NULL);
  free(res->series);
  free(res->nbins);
  free(res->tables);
  free(res->nrecords);
  memset(res, 0, sizeof *res);
}
