/* lab_faults.c - the faults a lab injects: the schedule (the job file's faults and the random
 * ones, a Poisson process per worker from lab.seed, merged and sorted), which the real runner and
 * its simulated twin (lab_sim.c) share, and the runner's carrying out of one on a worker process
 * (kill: SIGKILL; stall: SIGSTOP, SIGCONT later; slow: a new duty cycle). */
#include "lab/lab_runner.h"

#include <math.h>
#include <signal.h>
#include <stdlib.h>

static int lab__fault_cmp(const void *a, const void *b) {
  const lab__fault *x = a, *y = b;
  if (x->at != y->at) return x->at < y->at ? -1 : 1;
  return x->worker - y->worker;
}

/* splitmix64 (Steele, Lea & Flood, OOPSLA 2014): the random faults' stream per worker. */
static uint64_t lab__mix(uint64_t *s) {
  uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

int lab__faults(const lab_config *c, lab__fault **out, size_t *nout) {
  size_t cap = c->nfaults + 16, n = 0;
  lab__fault *f = malloc(cap * sizeof *f);
  if (!f) return LAB_ENOMEM;
  for (size_t i = 0; i < c->nfaults; i++)
    f[n++] = (lab__fault){c->faults[i].at, (int)c->faults[i].worker, c->faults[i].action, c->faults[i].factor,
                          c->faults[i].duration};
  const lab_random_def *r = &c->lab.random;
  if (r->rate > 0) {
    for (int64_t wk = 0; wk < c->lab.workers; wk++) {
      uint64_t st = (uint64_t)c->lab.seed * 0x2545F4914F6CDD1DULL + (uint64_t)wk + 1;
      double t = 0;
      for (;;) {
        /* Poisson process: exponential gaps, -ln(U) / rate. */
        double u = ((double)(lab__mix(&st) >> 11) + 0.5) * 0x1.0p-53;
        t += -log(u) / r->rate;
        if (t > r->until) break;
        if (n == cap) {
          cap *= 2;
          lab__fault *g = realloc(f, cap * sizeof *f);
          if (!g) {
            free(f);
            return LAB_ENOMEM;
          }
          f = g;
        }
        f[n++] = (lab__fault){t, (int)wk, r->action, r->factor, r->duration};
      }
    }
  }
  qsort(f, n, sizeof *f, lab__fault_cmp);
  *out = f;
  *nout = n;
  return 0;
}

/* The runner carries out fault f on its worker process. */
void lab__inject(lab__lab *L, const lab__fault *f) {
  lab__worker *w = &L->w[f->worker];
  static const char *const names[] = {"kill", "stall", "slow"};
  lab__log(L, "fault: %s worker %d", names[f->action], f->worker);
  if (!w->pid) return;
  switch (f->action) {
  case LAB_FAULT_KILL:
    lab__signal(w, SIGKILL); /* the pipe's EOF tells the runner; heartbeats stop for the core */
    break;
  case LAB_FAULT_STALL:
    lab__signal(w, SIGSTOP);
    w->stalled = 1;
    w->cont_at = f->duration > 0 ? f->at + f->duration : 0;
    break;
  default:
    w->speed = f->factor;
    lab__send(w, "S %.17g", f->factor);
    break;
  }
}
