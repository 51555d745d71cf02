/* sched_ft.c - the table of fault-tolerance policies (sched_ft.h): the built-in rows, rows
 * registered at run time, and combinations of rows.
 *
 * Adding a policy: write its row (a sched_ft_row: its counts as functions of the job's settings,
 * its flags) in a file of its own and add one entry to sched__ft_builtin below (or call
 * sched_ft_register before scenarios are read). Nothing else in the core, the market or the lab
 * names a policy.
 */
#include "models/sched/sched_ft.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* ---- The built-in rows ----------------------------------------------------------------------- */
static unsigned sched__ft_replicas(const sched_ft *ft) { return ft->replicas; }
static unsigned sched__ft_standby_k(const sched_ft *ft) { return ft->standby_k; }

/* N+k standbys: a run of n members with k standbys, each GPU failing at rate lambda and a lost one
 * replaced in repair_s, loses its unsaved work when a member fails while all k spares are being
 * replaced. For the birth-death chain of "i GPUs down" (failures at (n+k-i) lambda, replacements at
 * i / repair_s, lost at k+1 down) with lambda x repair_s << 1, the chance of being k down is
 * prod_{i<k} (n+k-i) lambda repair_s / (i+1) and the loss rate that times n lambda: the rare-failure
 * approximation of a k-out-of-(n+k) system with repair (Trivedi 2002, "Probability and Statistics
 * with Reliability, Queuing and Computer Science Applications", 2nd ed., Markov chains of
 * redundant systems with repair). k = 0 gives n lambda, the unprotected run.
 * ASSUMPTION: a replacement is found at once (the idle pool does not run dry) and takes repair_s,
 * the time the newcomer loads the job's state (the checkpoint's size over its link). */
static double sched__ft_standby_loss(const sched_ft *ft, unsigned n, double lambda, double repair_s) {
  double rate = n * lambda;
  unsigned k = ft->standby_k;
  for (unsigned i = 0; i < k; i++) rate *= (double)(n + k - i) * lambda * repair_s / (double)(i + 1);
  return rate;
}

/* The built-in rows, one X(name, fields) each, in table order: the first SCHED_FT_COUNT are
 * sched_policy's values. A new built-in policy is one more line here (its functions in a file of
 * its own, declared above it). */
/* clang-format off */
#define SCHED__FT_BUILTIN(X)                                                                                \
  X("none", .help = "a failed run restarts from zero")                                                     \
  X("checkpoint", .help = "periodic checkpoints; a failed run restarts from the last one",                 \
    .checkpoints = 1)                                                                                        \
  X("standby", .help = "N+k: k standbys per run replace failed members at once",                           \
    .standbys = sched__ft_standby_k, .on_lost = SCHED_FT_LOST_REPLACE, .replace_degraded = 1,               \
    .loss_rate = sched__ft_standby_loss)                                                                     \
  X("replicate", .help = "k copies; the first to finish wins, the others are cancelled",                   \
    .copies = sched__ft_replicas)                                                                            \
  X("speculative", .help = "a run slower than expected gets a backup copy; first finish wins",             \
    .on_slow = SCHED_FT_SLOW_BACKUP)
#define SCHED__FT_ROW(nm, ...) {.name = nm, __VA_ARGS__},
#define SCHED__FT_NAME(nm, ...) nm,
/* clang-format on */

/* ---- The table -------------------------------------------------------------------------------
 * Row p is a part (built-in or registered) or a combination of parts (sched__ft_parts[p], the bits
 * of its parts; 0 for a part, which is bit p alone). A combination's counts and rates are worked
 * out from its parts when asked. The table is filled in statically: no row is missing before the
 * first call, whichever comes first. */
static sched_ft_row sched__ft_rows[SCHED_FT_MAX_ROWS] = {SCHED__FT_BUILTIN(SCHED__FT_ROW)};
static const char *const sched__ft_builtin_names[] = {SCHED__FT_BUILTIN(SCHED__FT_NAME)};
#define SCHED__FT_NBUILTIN ((int)(sizeof sched__ft_builtin_names / sizeof *sched__ft_builtin_names))
_Static_assert(sizeof sched__ft_builtin_names / sizeof *sched__ft_builtin_names >= SCHED_FT_COUNT,
               "a built-in row for each sched_policy value");
static uint64_t sched__ft_parts[SCHED_FT_MAX_ROWS];
static char sched__ft_names[SCHED_FT_MAX_ROWS][96]; /* combinations' names */
static int sched__ft_n = SCHED__FT_NBUILTIN;        /* rows in the table */

/* The names of the rows that are not combinations, in table order, NULL-terminated: the choices
 * of every scenario key that names one policy (sched.h). */
const char *sched_policy_names[SCHED_FT_MAX_ROWS + 1] = {SCHED__FT_BUILTIN(SCHED__FT_NAME) NULL};

/* The parts of row p, as bits. */
static uint64_t sched__ft_bits(int p) { return sched__ft_parts[p] ? sched__ft_parts[p] : 1ull << p; }

int sched_ft_rows(void) { return sched__ft_n; }

const sched_ft_row *sched_ft_row_of(int p) { return p >= 0 && p < sched__ft_n ? &sched__ft_rows[p] : NULL; }

static int sched__ft_find(const char *name) {
  for (int p = 0; p < sched__ft_n; p++)
    if (!strcmp(sched__ft_rows[p].name, name)) return p;
  return -1;
}

int sched_ft_register(const sched_ft_row *row) {
  if (!row || !row->name || !*row->name || sched__ft_n >= SCHED_FT_MAX_ROWS) return -1;
  for (const char *c = row->name; *c; c++)
    if (!((*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') || *c == '_')) return -1;
  if (sched__ft_find(row->name) >= 0) return -1;
  int p = sched__ft_n++;
  sched__ft_rows[p] = *row;
  int nn = 0;
  while (sched_policy_names[nn]) nn++;
  sched_policy_names[nn] = sched__ft_rows[p].name;
  sched_policy_names[nn + 1] = NULL;
  return p;
}

/* The combination's counts: the largest of its parts'. */
static unsigned sched__ft_max(const sched_ft *ft, int standbys) {
  uint64_t m = sched__ft_bits(ft->policy);
  unsigned best = 0;
  for (int p = 0; m; p++, m >>= 1) {
    if (!(m & 1)) continue;
    unsigned (*f)(const sched_ft *) = standbys ? sched__ft_rows[p].standbys : sched__ft_rows[p].copies;
    unsigned v = f ? f(ft) : 0;
    if (v > best) best = v;
  }
  return best;
}
static unsigned sched__ft_comb_copies(const sched_ft *ft) {
  unsigned v = sched__ft_max(ft, 0);
  return v ? v : 1;
}
static unsigned sched__ft_comb_standbys(const sched_ft *ft) { return sched__ft_max(ft, 1); }
/* The combination's loss rate: the lowest of its parts' that change it (the most protective
 * mechanism sets it; ASSUMPTION: the mechanisms' interaction is ignored). */
static double sched__ft_comb_loss(const sched_ft *ft, unsigned n, double lambda, double repair_s) {
  uint64_t m = sched__ft_bits(ft->policy);
  double best = n * lambda;
  for (int p = 0; m; p++, m >>= 1)
    if ((m & 1) && sched__ft_rows[p].loss_rate) {
      double v = sched__ft_rows[p].loss_rate(ft, n, lambda, repair_s);
      if (v < best) best = v;
    }
  return best;
}

/* The row of the combination whose parts are the bits of m (one bit: that part). */
static int sched__ft_of_parts(uint64_t m) {
  for (int p = 0; p < sched__ft_n; p++)
    if (sched__ft_bits(p) == m) return p;
  if (sched__ft_n >= SCHED_FT_MAX_ROWS) return -1;
  int c = sched__ft_n;
  sched_ft_row r = {.copies = sched__ft_comb_copies,
                    .standbys = sched__ft_comb_standbys,
                    .loss_rate = sched__ft_comb_loss,
                    .help = "a combination of policies"};
  size_t len = 0;
  sched__ft_names[c][0] = 0;
  for (int p = 0; p < sched__ft_n; p++) {
    if (!(m >> p & 1)) continue;
    const sched_ft_row *q = &sched__ft_rows[p];
    int w = snprintf(sched__ft_names[c] + len, sizeof sched__ft_names[c] - len, "%s%s", len ? "+" : "", q->name);
    if (w < 0 || (size_t)w >= sizeof sched__ft_names[c] - len) return -1;
    len += (size_t)w;
    r.checkpoints |= q->checkpoints;
    r.replace_degraded |= q->replace_degraded;
    if (q->on_lost == SCHED_FT_LOST_REPLACE) r.on_lost = SCHED_FT_LOST_REPLACE;
    if (q->on_slow == SCHED_FT_SLOW_BACKUP) r.on_slow = SCHED_FT_SLOW_BACKUP;
  }
  r.name = sched__ft_names[c];
  sched__ft_rows[c] = r;
  sched__ft_parts[c] = m;
  sched__ft_n++;
  return c;
}

int sched_ft_compose(int a, int b) {
  if (a < 0 || b < 0 || a >= sched__ft_n || b >= sched__ft_n) return -1;
  if (a == b) return a;
  if (a == SCHED_FT_NONE || b == SCHED_FT_NONE) return -1;
  return sched__ft_of_parts(sched__ft_bits(a) | sched__ft_bits(b));
}

int sched_ft_without_checkpoints(int p) {
  if (p < 0 || p >= sched__ft_n) return -1;
  uint64_t m = 0, all = sched__ft_bits(p);
  for (int q = 0; q < 64; q++)
    if ((all >> q & 1) && !sched__ft_rows[q].checkpoints) m |= 1ull << q;
  if (m == all) return p;
  return m ? sched__ft_of_parts(m) : SCHED_FT_NONE;
}

/* ---- Names ----------------------------------------------------------------------------------- */
const char *sched_policy_name(sched_policy p) {
  const sched_ft_row *r = sched_ft_row_of((int)p);
  return r ? r->name : "?";
}

/* "a+b+c": each part a row's name; the combination of them all. */
int sched_policy_parse(const char *name) {
  if (!name || !*name) return -1;
  int acc = -1;
  const char *s = name;
  for (;;) {
    const char *e = strchr(s, '+');
    size_t len = e ? (size_t)(e - s) : strlen(s);
    char part[64];
    if (!len || len >= sizeof part) return -1;
    memcpy(part, s, len);
    part[len] = 0;
    int p = sched__ft_find(part);
    if (p < 0) return -1;
    if (acc < 0) {
      acc = p;
    } else {
      if (sched__ft_bits(acc) & sched__ft_bits(p)) return -1; /* named twice */
      acc = sched_ft_compose(acc, p);
      if (acc < 0) return -1;
    }
    if (!e) break;
    s = e + 1;
  }
  return acc;
}

/* ---- Questions --------------------------------------------------------------------------------- */
static const sched_ft_row *sched__ft_of(const sched_ft *ft) { return &sched__ft_rows[ft->policy]; }

unsigned sched_ft_copies(const sched_ft *ft) {
  const sched_ft_row *r = sched__ft_of(ft);
  unsigned v = r->copies ? r->copies(ft) : 1;
  return v ? v : 1;
}
unsigned sched_ft_standbys(const sched_ft *ft) {
  const sched_ft_row *r = sched__ft_of(ft);
  return r->standbys ? r->standbys(ft) : 0;
}
unsigned sched_ft_slots(const sched_ft *ft) {
  return sched_ft_copies(ft) + (sched__ft_of(ft)->on_slow == SCHED_FT_SLOW_BACKUP);
}
int sched_ft_checkpoints(const sched_ft *ft) { return (int)sched__ft_of(ft)->checkpoints; }
int sched_ft_replaces_lost(const sched_ft *ft) { return sched__ft_of(ft)->on_lost == SCHED_FT_LOST_REPLACE; }
int sched_ft_replaces_degraded(const sched_ft *ft) { return (int)sched__ft_of(ft)->replace_degraded; }
int sched_ft_backs_up_slow(const sched_ft *ft) { return sched__ft_of(ft)->on_slow == SCHED_FT_SLOW_BACKUP; }
double sched_ft_loss_rate(const sched_ft *ft, unsigned n, double lambda, double repair_s) {
  const sched_ft_row *r = sched__ft_of(ft);
  return r->loss_rate ? r->loss_rate(ft, n, lambda, repair_s) : n * lambda;
}
int sched_ft_loss_default(const sched_ft *ft) {
  uint64_t m = sched__ft_bits(ft->policy);
  for (int p = 0; m; p++, m >>= 1)
    if ((m & 1) && sched__ft_rows[p].loss_rate) return 0;
  return 1;
}
