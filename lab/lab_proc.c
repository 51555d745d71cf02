/* lab_proc.c - the runner's worker processes: spawned (forked here, or by their rank through a
 * control message), talked to over two pipes in lines (lab_internal.h), signalled, buried with
 * their command's process group; and the journal's mark that every process of a lab carries, so
 * that a resumed lab can kill what a killed runner left running. Nothing here knows the core. */
#include "lab/lab_runner.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <mpi.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

double lab__t(lab__lab *L) {
  double t = L->t_base + (lab__now() - L->t_origin);
  return t > L->t_last ? t : L->t_last;
}

void lab__log(lab__lab *L, const char *fmt, ...) {
  if (!L->o->log || !L->o->verbose || L->replaying) return;
  va_list ap;
  va_start(ap, fmt);
  fprintf(L->o->log, "[%8.3f] ", L->t_last);
  vfprintf(L->o->log, fmt, ap);
  fputc('\n', L->o->log);
  va_end(ap);
  fflush(L->o->log);
}

/* ---- Talking to workers --------------------------------------------------------------------- */
void lab__send(lab__worker *w, const char *fmt, ...) {
  if (!w->pid || (!w->remote && w->to < 0)) return;
  char b[LAB__LINE + 64];
  va_list ap;
  va_start(ap, fmt);
  int n = lab__line_vformat(b, sizeof b, fmt, ap);
  va_end(ap);
  if (n < 0) return;
  if (w->remote) {
    MPI_Send(b, n, MPI_CHAR, w->rank, w->gid, MPI_COMM_WORLD);
    return;
  }
  ssize_t rc;
  do rc = write(w->to, b, (size_t)n);
  while (rc < 0 && errno == EINTR);
  /* EPIPE: the worker died; its silence is how the core will learn it. */
}

/* A control message to the rank that runs remote worker w ("SPAWN", "SIG", "BURY"). */
static void lab__ctrl(const lab__worker *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void lab__ctrl(const lab__worker *w, const char *fmt, ...) {
  char b[256];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(b, sizeof b, fmt, ap);
  va_end(ap);
  if (n > 0) MPI_Send(b, n + 1, MPI_CHAR, w->rank, LAB__CTRL_TAG, MPI_COMM_WORLD);
}

/* Sends a signal to the worker (and to its command's process group first). */
void lab__signal(lab__worker *w, int sig) {
  if (!w->pid) return;
  if (w->remote) {
    lab__ctrl(w, "SIG %d %d %ld", w->gid, sig, (long)w->pgid);
    return;
  }
  if (w->pgid > 0) kill(-w->pgid, sig);
  kill(w->pid, sig);
}

double lab__speed_of(const lab_config *c, size_t i) {
  return c->lab.nspeeds == 1 ? c->lab.speeds[0] : c->lab.speeds[i];
}

int lab__spawn_into(lab__lab *L, lab__worker *w, size_t i) {
  int a[2], b[2];
  if (pipe(a) != 0) return LAB_ESYS;
  if (pipe(b) != 0) {
    close(a[0]);
    close(a[1]);
    return LAB_ESYS;
  }
  if (L->jr.f) fflush(L->jr.f);
  if (L->o->log) fflush(L->o->log);
  fflush(stdout);
  fflush(stderr);
  pid_t runner = getpid();
  pid_t pid = fork();
  if (pid < 0) {
    close(a[0]);
    close(a[1]);
    close(b[0]);
    close(b[1]);
    return LAB_ESYS;
  }
  if (pid == 0) {
    /* Only this worker's own pipe ends stay open. */
    for (size_t k = 0; k < L->nw; k++)
      if (L->w[k].pid) {
        close(L->w[k].to);
        close(L->w[k].from);
      }
    if (L->jr.f) close(fileno(L->jr.f));
    close(a[1]);
    close(b[0]);
    lab__worker_main(runner, (int)i, a[0], b[1], w->speed, (int)L->cfg->lab.threads, L->cfg->lab.heartbeat);
  }
  close(a[0]);
  close(b[1]);
  fcntl(a[1], F_SETFD, FD_CLOEXEC);
  fcntl(b[0], F_SETFD, FD_CLOEXEC);
  w->pid = pid;
  w->to = a[1];
  w->from = b[0];
  w->blen = 0;
  w->joined = w->want_join = w->stalled = 0;
  w->cont_at = w->respawn_at = 0;
  w->job = -1;
  w->pgid = 0;
  return 0;
}
/* Worker i's executor spec (kernels/krn.h, krn_exec_open): "gpu" for the whole GPU, "gpu:N" for
 * a green-context partition of N SMs (lab.gpu_sms). */
void lab__gpu_spec(const lab_config *c, size_t i, char *out, size_t len) {
  double sms = c->lab.ngpu_sms == 1 ? c->lab.gpu_sms[0] : c->lab.gpu_sms[i];
  if (sms > 0)
    snprintf(out, len, "gpu:%d", (int)sms);
  else
    snprintf(out, len, "gpu");
}

int lab__spawn(lab__lab *L, size_t i) {
  lab__worker *w = &L->w[i];
  if (!w->remote) {
    int rc = lab__spawn_into(L, w, i);
    if (rc) return rc;
  } else {
    lab__ctrl(w, "SPAWN %d %.17g", w->gid, w->speed);
    w->pid = -1;
    w->blen = 0;
    w->joined = w->want_join = w->stalled = 0;
    w->cont_at = w->respawn_at = 0;
    w->job = -1;
    w->pgid = 0;
  }
  if (L->gpu) { /* before anything else it is asked: lines are handled in order */
    char spec[32];
    lab__gpu_spec(L->cfg, i, spec, sizeof spec);
    lab__send(w, "E %s", spec);
  }
  return 0;
}

/* The process is gone or must go: reap it, and its command's process group. */
void lab__bury(lab__worker *w) {
  if (w->remote) {
    if (w->pid) lab__ctrl(w, "BURY %d", w->gid);
    w->pid = 0;
    w->pgid = 0;
    w->job = -1;
    w->stalled = 0;
    return;
  }
  if (w->pgid > 0) kill(-w->pgid, SIGKILL);
  if (w->pid) {
    kill(w->pid, SIGKILL);
    waitpid(w->pid, NULL, 0);
  }
  if (w->to >= 0) close(w->to);
  if (w->from >= 0) close(w->from);
  w->pid = 0;
  w->to = w->from = -1;
  w->pgid = 0;
  w->job = -1;
  w->stalled = 0;
}

/* The worker's process is gone (killed). The core is not told: it learns it from the silence. */
void lab__worker_gone(lab__lab *L, size_t i) {
  lab__worker *w = &L->w[i];
  lab__log(L, "worker %zu exited", i);
  if (w->remote) {
    w->pid = 0; /* its rank reaped it already */
    w->pgid = 0;
    w->job = -1;
    w->stalled = 0;
  } else {
    lab__bury(w);
  }
  if (L->cfg->lab.respawn > 0) w->respawn_at = lab__t(L) + L->cfg->lab.respawn;
}

/* ---- Asking one worker, polling them all ---------------------------------------------------- */
/* The first line from worker w that starts with `tag` (others, heartbeats, are dropped), parsed
 * as a number; NaN on timeout or death. */
double lab__ask(lab__worker *w, char tag, double timeout) {
  double until = lab__now() + timeout;
  for (;;) {
    char *nl;
    while ((nl = memchr(w->buf, '\n', w->blen))) {
      *nl = 0;
      double v = NAN;
      int hit = w->buf[0] == tag && sscanf(w->buf + 1, "%lg", &v) == 1;
      if (hit) {
        const char *q = w->buf + 1;
        while (*q == ' ') q++;
        snprintf(w->last, sizeof w->last, "%s", q);
      }
      size_t used = (size_t)(nl + 1 - w->buf);
      w->blen -= used;
      memmove(w->buf, nl + 1, w->blen);
      if (hit) return v;
    }
    double left = until - lab__now();
    if (left <= 0) return NAN;
    struct pollfd p = {w->from, POLLIN, 0};
    if (poll(&p, 1, (int)(left * 1000) + 1) > 0) {
      ssize_t n = read(w->from, w->buf + w->blen, sizeof w->buf - 1 - w->blen);
      if (n <= 0) return NAN;
      w->blen += (size_t)n;
    }
  }
}

/* The local workers' pipes to poll: L->pf[k] is worker L->idx[k]. */
nfds_t lab__pollset(lab__lab *L) {
  struct pollfd *pf = L->pf;
  size_t *idx = L->idx;
  nfds_t np = 0;
  for (size_t i = 0; i < L->nw && np < LAB__MAX_WORKERS; i++)
    if (L->w[i].pid > 0 && !L->w[i].remote) {
      pf[np].fd = L->w[i].from;
      pf[np].events = POLLIN;
      pf[np].revents = 0;
      idx[np++] = i;
    }
  return np;
}

/* Every process a lab starts (workers, commands and whatever a command forks) carries
 * SPOTLAB_LAB_JOURNAL=<absolute journal path> in its environment. A runner killed with SIGKILL
 * takes its workers and their shells with it (PR_SET_PDEATHSIG), but not the processes a command
 * forked (`sleep 60` in `sleep 60; echo x`): reparented to init, they would run beside the copy a
 * resumed lab starts. So a resume first kills every process that carries its journal's mark. */
void lab__mark(const char *journal, char *out, size_t len) {
  char cwd[4096];
  if (journal[0] == '/' || !getcwd(cwd, sizeof cwd))
    snprintf(out, len, "%s=%s", LAB__ENV_MARK, journal);
  else
    snprintf(out, len, "%s=%s/%s", LAB__ENV_MARK, cwd, journal);
}
/* Kills the processes (not this one) whose environment holds `mark`; returns how many. */
int lab__kill_marked(const char *mark) {
  DIR *d = opendir("/proc");
  if (!d) return 0;
  size_t ml = strlen(mark);
  int n = 0;
  struct dirent *e;
  pid_t self = getpid();
  while ((e = readdir(d))) {
    char *end;
    long pid = strtol(e->d_name, &end, 10);
    if (*end || pid <= 0 || (pid_t)pid == self) continue;
    char p[64];
    snprintf(p, sizeof p, "/proc/%ld/environ", pid);
    FILE *f = fopen(p, "r");
    if (!f) continue;
    char var[8192];
    size_t k = 0;
    int c, hit = 0;
    while (!hit && (c = fgetc(f)) != EOF) { /* NUL-separated NAME=VALUE entries */
      if (c) {
        if (k < sizeof var - 1) var[k++] = (char)c;
        continue;
      }
      hit = k == ml && !memcmp(var, mark, ml);
      k = 0;
    }
    fclose(f);
    if (hit && kill((pid_t)pid, SIGKILL) == 0) n++;
  }
  closedir(d);
  return n;
}
