/* failpoint.c - see failpoint.h. */
#include "sim/failpoint.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int fp_state; /* 0: environment not read yet; 1: disarmed; 2: armed */
static char fp_name[32];
static long fp_at, fp_passes;
static int fp_sig = SIGKILL;

static void fp__report(void) {
  if (fp_state == 2 && fp_at == 0)
    fprintf(stderr, "spotlab: kill point %s passed %ld times\n", fp_name,
            __atomic_load_n(&fp_passes, __ATOMIC_RELAXED));
}

void sim_failpoint_arm(const char *name, long n) { sim_failpoint_arm_signal(name, n, SIGKILL); }

void sim_failpoint_arm_signal(const char *name, long n, int sig) {
  fp_passes = 0;
  fp_sig = sig;
  if (!name || strlen(name) >= sizeof fp_name || n < 0) {
    fp_state = 1;
    return;
  }
  strcpy(fp_name, name);
  fp_at = n;
  static int registered;
  if (n == 0 && !registered) registered = atexit(fp__report) == 0;
  __atomic_store_n(&fp_state, 2, __ATOMIC_RELEASE);
}

static void fp__from_env(void) {
  const char *v = getenv("SPOTLAB_KILL");
  const char *colon = v ? strrchr(v, ':') : NULL;
  char *end;
  long n = colon ? strtol(colon + 1, &end, 10) : -1;
  if (!colon || end == colon + 1 || *end || n < 0 || (size_t)(colon - v) >= sizeof fp_name) {
    if (v && *v) fprintf(stderr, "spotlab: SPOTLAB_KILL='%s' ignored (want NAME:N)\n", v);
    fp_state = 1;
    return;
  }
  char name[sizeof fp_name];
  memcpy(name, v, (size_t)(colon - v));
  name[colon - v] = 0;
  sim_failpoint_arm(name, n);
}

void sim_failpoint(const char *name) {
  int s = __atomic_load_n(&fp_state, __ATOMIC_ACQUIRE);
  if (s == 1) return;
  if (s == 0) {
#pragma omp critical(sim_failpoint)
    if (fp_state == 0) fp__from_env();
    s = fp_state;
  }
  if (s != 2 || strcmp(name, fp_name)) return;
  long k = __atomic_add_fetch(&fp_passes, 1, __ATOMIC_RELAXED);
  if (fp_at > 0 && k == fp_at) kill(getpid(), fp_sig); /* SIGKILL: stdio buffers are lost, as in a real kill */
}

long sim_failpoint_passes(void) { return __atomic_load_n(&fp_passes, __ATOMIC_RELAXED); }
