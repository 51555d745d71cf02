/* progress.c - progress lines with an ETA, and stopping on a signal (progress.h). */
#include "app/progress.h"
#include "app/app.h"

#include <errno.h>
#include <mpi.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

struct app_progress {
  char unit[16];
  int total, done;
  int tty;          /* stderr is a terminal: one line rewritten in place */
  int engine_lines; /* the engine shows its own in-place line within each unit */
  double interval;  /* seconds between timer lines */
  double t0, last;  /* start, last line printed (CLOCK_MONOTONIC seconds; last < 0: none yet) */
  int open_line;    /* tty: an in-place line is showing (needs \n before other output) */
  int stopping;
  pthread_mutex_t mu;
  pthread_cond_t cv; /* wakes the timer thread early, to stop */
  pthread_t timer;
  int has_timer;
  char detail[160];
};

static double prog__now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* "12.3 s", "4m05s", "2h07m" */
static void prog__dur(double s, char *buf, size_t len) {
  if (s < 60)
    snprintf(buf, len, "%.1f s", s);
  else if (s < 3600)
    snprintf(buf, len, "%dm%02ds", (int)(s / 60), (int)s % 60);
  else
    snprintf(buf, len, "%dh%02dm", (int)(s / 3600), (int)(s / 60) % 60);
}

/* Prints the line; p->mu held. */
static void prog__print(app_progress *p, double now) {
  char el[32], eta[48];
  double e = now - p->t0;
  prog__dur(e, el, sizeof el);
  if (p->done >= p->total)
    snprintf(eta, sizeof eta, "done");
  else if (p->done == 0)
    snprintf(eta, sizeof eta, "ETA unknown");
  else {
    char d[32];
    /* remaining units at the mean rate so far */
    prog__dur(e / p->done * (p->total - p->done), d, sizeof d);
    snprintf(eta, sizeof eta, "ETA %s", d);
  }
  int pct = p->total > 0 ? (int)(100.0 * p->done / p->total) : 100;
  const char *lead = p->tty && !p->engine_lines ? "\r" : "";
  const char *tail = p->tty && !p->engine_lines ? "\033[K" : "\n";
  fprintf(stderr, "%s%s %d/%d done%s%s%s, %d%%, %s elapsed, %s%s", lead, p->unit, p->done, p->total,
          p->detail[0] ? " (" : "", p->detail, p->detail[0] ? ")" : "", pct, el, eta, tail);
  fflush(stderr);
  p->open_line = p->tty && !p->engine_lines;
  p->last = now;
}

static void *prog__timer(void *arg) {
  app_progress *p = arg;
  pthread_mutex_lock(&p->mu);
  while (!p->stopping) {
    double next = (p->last < 0 ? p->t0 : p->last) + p->interval;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    double wait = next - prog__now();
    if (wait > 0) {
      double t = (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec + wait;
      ts.tv_sec = (time_t)t;
      ts.tv_nsec = (long)((t - (double)ts.tv_sec) * 1e9);
      pthread_cond_timedwait(&p->cv, &p->mu, &ts);
      continue; /* re-check stopping and the time (a step may have printed meanwhile) */
    }
    p->detail[0] = 0;
    prog__print(p, prog__now());
  }
  pthread_mutex_unlock(&p->mu);
  return NULL;
}

app_progress *app_progress_start(const char *unit, int total, int quiet) {
  if (quiet || app_mpi_rank() != 0) return NULL;
  app_progress *p = calloc(1, sizeof *p);
  if (!p) return NULL; /* no progress is no failure */
  snprintf(p->unit, sizeof p->unit, "%s", unit);
  p->total = total;
  p->tty = isatty(2);
  p->interval = p->tty ? 1.0 : 5.0;
  const char *env = getenv("SPOTLAB_PROGRESS_SECONDS");
  if (env && !p->tty) {
    char *end;
    double v = strtod(env, &end);
    if (end != env && !*end && v >= 0 && v <= 86400) p->interval = v;
  }
  p->t0 = prog__now();
  p->last = -1;
  pthread_mutex_init(&p->mu, NULL);
  pthread_condattr_t ca;
  pthread_condattr_init(&ca);
  pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
  pthread_cond_init(&p->cv, &ca);
  pthread_condattr_destroy(&ca);
  return p;
}

int app_progress_engine_lines(app_progress *p, int one_at_a_time) {
  if (!p) return 0;
  pthread_mutex_lock(&p->mu);
  p->engine_lines = p->tty && one_at_a_time;
  /* the timer runs where no engine line shows that the run is alive; with interval 0 (a line at
   * every step) the steps are enough */
  if (!p->engine_lines && !p->has_timer && p->interval > 0)
    p->has_timer = pthread_create(&p->timer, NULL, prog__timer, p) == 0;
  pthread_mutex_unlock(&p->mu);
  return p->engine_lines;
}

void app_progress_step(app_progress *p, const char *detail, int always) {
  if (!p) return;
  pthread_mutex_lock(&p->mu);
  p->done++;
  snprintf(p->detail, sizeof p->detail, "%s", detail ? detail : "");
  double now = prog__now();
  if (always || p->tty || p->last < 0 || now - p->last >= p->interval || p->done == p->total) prog__print(p, now);
  p->detail[0] = 0;
  pthread_mutex_unlock(&p->mu);
}

void app_progress_end(app_progress *p) {
  if (!p) return;
  pthread_mutex_lock(&p->mu);
  p->stopping = 1;
  pthread_cond_broadcast(&p->cv);
  pthread_mutex_unlock(&p->mu);
  if (p->has_timer) pthread_join(p->timer, NULL);
  if (p->open_line) fputc('\n', stderr);
  pthread_cond_destroy(&p->cv);
  pthread_mutex_destroy(&p->mu);
  free(p);
}

/* The one piece of global mutable state here: a signal handler can only talk through a static
 * (C11 7.14.1.1: a volatile sig_atomic_t). Written by the handler, read by the loops. */
static volatile sig_atomic_t app__stop_sig;
static int app__stop_installed, app__stop_tell; /* set before the handler is, read-only after */

static void app__on_signal(int sig) {
  app__stop_sig = sig;
  static const char msg[] = "\nspotlab: stopping once the replications under way finish, keeping what finished (a "
                            "second signal stops at once)\n";
  if (app__stop_tell) {
    ssize_t w = write(2, msg, sizeof msg - 1); /* write(2) is async-signal-safe, stdio is not */
    (void)w;
  }
}

void app_stop_install(void) {
  if (app__stop_installed) return;
  app__stop_installed = 1;
  app__stop_tell = app_mpi_rank() == 0;
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = app__on_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESETHAND | SA_RESTART; /* a second signal takes its default action: at once */
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);
}

int app_stop_signal(void) { return (int)app__stop_sig; }

int app_stop_agreed(void) {
  int sig = (int)app__stop_sig, init = 0, fin = 0;
  MPI_Initialized(&init);
  MPI_Finalized(&fin);
  if (init && !fin && app_mpi_size() > 1) MPI_Allreduce(MPI_IN_PLACE, &sig, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  return sig;
}

int app_stop_status(int sig) { return 128 + sig; }
