/* lab_wide.c - how a kernel job wider than one worker splits its chunk executions among the
 * members of its run. The real runner (lab_glue.c) and the simulated twin (lab_sim.c) both use this
 * file, so the twin predicts the very split the lab carries out.
 *
 * A run of a job of N chunk executions that resumes at execution `first` (the core's saved work,
 * whole chunks) cuts [first, N) into pieces of equal size, LAB__PIECES_PER_MEMBER per member (at
 * least one chunk each). A member runs one piece at a time (one "K" request to its worker, its
 * output fdatasync'd at the end), then takes its next. Which piece it takes is the strategy's
 * (kernels/krn.h's clustering strategies, on CPU workers):
 *   even      piece k belongs to member k mod n, in order: every member does the same share and
 *             the run ends when the slowest member ends its share;
 *   weighted  pieces are dealt in order to the member m with the least (assigned_m + 1) / w_m
 *             (w_m its calibrated speed: stride scheduling, Waldspurger & Weihl 1995), so the
 *             shares are proportional to the speeds the core knows;
 *   dynamic   a member that ends a piece takes the lowest piece nobody has started (a shared
 *             queue): the shares follow the speeds as they are.
 * A piece done is durable (its output was synced), so a checkpoint saves the longest prefix of
 * done pieces: whole chunks, across members. */
#include "lab/lab_internal.h"

#include <stdlib.h>
#include <string.h>

int lab__wide_init(lab__wide *x, int strategy, size_t first, size_t nchunks, const uint32_t *members,
                   const double *weight, unsigned n) {
  memset(x, 0, sizeof *x);
  if (n == 0 || n > LAB__MAX_WIDTH || first >= nchunks) return LAB_EINVAL;
  x->strategy = strategy;
  x->first = first;
  x->nchunks = nchunks;
  x->n = n;
  size_t left = nchunks - first, want = (size_t)n * LAB__PIECES_PER_MEMBER;
  x->piece = left / want ? left / want : 1;
  x->npieces = (left + x->piece - 1) / x->piece;
  x->state = calloc(x->npieces, 1);
  x->owner = calloc(x->npieces, sizeof *x->owner);
  if (!x->state || !x->owner) {
    lab__wide_free(x);
    return LAB_ENOMEM;
  }
  double cnt[LAB__MAX_WIDTH] = {0};
  for (size_t k = 0; k < x->npieces; k++) {
    unsigned best = 0;
    if (strategy == KRN_SPLIT_EVEN) {
      best = (unsigned)(k % n);
    } else if (strategy == KRN_SPLIT_WEIGHTED) {
      double bv = 0;
      for (unsigned m = 0; m < n; m++) {
        double w = weight && weight[m] > 0 ? weight[m] : 1.0, v = (cnt[m] + 1) / w;
        if (m == 0 || v < bv) {
          bv = v;
          best = m;
        }
      }
    }
    x->owner[k] = (int)best;
    cnt[best]++;
  }
  for (unsigned m = 0; m < n; m++) {
    x->member[m] = members[m];
    x->cur[m] = -1;
  }
  return 0;
}

void lab__wide_free(lab__wide *x) {
  free(x->state);
  free(x->owner);
  x->state = NULL;
  x->owner = NULL;
  x->npieces = 0;
}

lab__wslot *lab__wslot_find(lab__wslot *v, size_t n, long job, long run) {
  for (size_t k = 0; k < n; k++)
    if (v[k].job == job && v[k].run == run) return &v[k];
  return NULL;
}

lab__wslot *lab__wslot_unused(lab__wslot *v, size_t n) {
  for (size_t k = 0; k < n; k++)
    if (v[k].job < 0) return &v[k];
  return NULL;
}

void lab__wslot_drop(lab__wslot *v, size_t n, long job, long run) {
  for (size_t k = 0; k < n; k++)
    if (v[k].job == job && (run < 0 || v[k].run == run)) {
      lab__wide_free(&v[k].x);
      v[k].job = -1;
    }
}

int lab__wide_slot(const lab__wide *x, uint32_t gpu) {
  for (unsigned m = 0; m < x->n; m++)
    if (x->member[m] == gpu) return (int)m;
  return -1;
}

long lab__wide_next(lab__wide *x, unsigned slot) {
  if (slot >= x->n || x->cur[slot] >= 0) return -1;
  for (size_t k = 0; k < x->npieces; k++)
    if (x->state[k] == 0 && (x->strategy == KRN_SPLIT_DYNAMIC || x->owner[k] == (int)slot)) {
      x->state[k] = 1;
      x->cur[slot] = (long)k;
      return (long)k;
    }
  return -1;
}

void lab__wide_span(const lab__wide *x, long piece, size_t *a, size_t *b) {
  *a = x->first + (size_t)piece * x->piece;
  *b = *a + x->piece;
  if (*b > x->nchunks) *b = x->nchunks;
}

void lab__wide_done(lab__wide *x, unsigned slot) {
  if (slot >= x->n || x->cur[slot] < 0) return;
  x->state[x->cur[slot]] = 2;
  x->cur[slot] = -1;
}

void lab__wide_replace(lab__wide *x, uint32_t old, uint32_t gpu) {
  int m = lab__wide_slot(x, old);
  if (m < 0) return;
  if (x->cur[m] >= 0) x->state[x->cur[m]] = 0; /* the lost member's piece is done again */
  if (x->verifying == m + 1) x->verifying = 0; /* and so is the last step, if it had it */
  x->cur[m] = -1;
  x->member[m] = gpu; /* the newcomer takes over the slot, and its share */
}

size_t lab__wide_prefix(const lab__wide *x) {
  size_t k = 0;
  while (k < x->npieces && x->state[k] == 2) k++;
  size_t a, b;
  if (k == 0) return x->first;
  lab__wide_span(x, (long)k - 1, &a, &b);
  return b;
}

int lab__wide_take(lab__wide *x, unsigned slot, int verify, size_t *a, size_t *b) {
  long p = lab__wide_next(x, slot);
  if (p >= 0) {
    lab__wide_span(x, p, a, b);
    return LAB_TAKE_PIECE;
  }
  if (!lab__wide_all_done(x) || x->verifying) return LAB_TAKE_WAIT;
  if (!verify) return LAB_TAKE_DONE;
  x->verifying = (int)slot + 1;
  *a = x->nchunks - 1;
  *b = x->nchunks;
  return LAB_TAKE_VERIFY;
}

int lab__wide_all_done(const lab__wide *x) {
  for (size_t k = 0; k < x->npieces; k++)
    if (x->state[k] != 2) return 0;
  return 1;
}
