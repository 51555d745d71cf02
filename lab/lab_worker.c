/* lab_worker.c - a worker process: runs kernel jobs chunk by chunk through a kernels executor
 * (krn_exec_run_chunk: a CPU thread group, a GPU, or a green-context partition of one), or command
 * jobs with fork/exec, and talks to the runner over two pipes.
 *
 * It is one GPU (or green-context partition) of a lab, or stands in for one on the CPU. Its
 * speed is a duty cycle: the executor idles busy * (1/speed - 1) after each piece of computing
 * (kernels/krn_job.c, krn__duty_pay), and the worker does the same after writing a chunk's
 * output, so that a slow worker is slow at all it does. Chunks are idempotent and each one's
 * output goes to the job's output file at its own offset (pwrite), so a checkpoint is an
 * fdatasync of that file plus the count of chunks done: a restart elsewhere resumes from it.
 * The executor starts as "cpu" and becomes what the runner's "E SPEC" line names. */
#include "lab/lab_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>

double lab__now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void lab__sleep(double s) {
  if (!(s > 0)) return;
  struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
  while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {}
}

void lab__escape(const char *in, size_t n, char *out, size_t outlen) {
  size_t o = 0;
  for (size_t i = 0; i < n && o + 3 < outlen; i++) {
    unsigned char c = (unsigned char)in[i];
    if (c == '\n') {
      out[o++] = '\\';
      out[o++] = 'n';
    } else if (c == '\\') {
      out[o++] = '\\';
      out[o++] = '\\';
    } else
      out[o++] = (c >= 32 && c < 127) ? (char)c : '?';
  }
  out[o] = 0;
}

void lab__unescape(char *s) {
  char *w = s;
  for (char *r = s; *r; r++) {
    if (*r == '\\' && r[1] == 'n') {
      *w++ = '\n';
      r++;
    } else if (*r == '\\' && r[1] == '\\') {
      *w++ = '\\';
      r++;
    } else
      *w++ = *r;
  }
  *w = 0;
}

/* Duty cycle as the executors apply it (kernels/krn_job.c, krn__duty_pay), for the worker's own
 * work between chunks (writing a chunk's output): working `busy` seconds at duty s takes
 * busy / s of wall time, so idle busy * (1/s - 1); oversleeping is paid back by working sooner
 * next time. */
static void lab__duty_pay(double speed, double busy, double *debt) {
  if (speed >= 1.0 || !(busy > 0)) return;
  *debt += busy * (1.0 / speed - 1.0);
  if (*debt > 200e-6) {
    double t0 = lab__now();
    lab__sleep(*debt);
    *debt -= lab__now() - t0;
  }
}

/* The shape of kernel jobs: LAB__DISTINCT distinct chunks of a fixed size per kernel (a few
 * milliseconds each on one core), so a job's memory stays small however much work it has. A job
 * of N chunk executions runs chunk c % LAB__DISTINCT as its c-th execution: chunks are idempotent,
 * so repeating one rewrites the same values, and the output of a finished job is the kernel's
 * whole output, which can be verified. */
void lab__kernel_dims(krn_kernel k, krn_dims *d) {
  memset(d, 0, sizeof *d);
  d->nchunks = LAB__DISTINCT;
  switch (k) {
  case KRN_TRIAD: d->n = LAB__DISTINCT * (size_t)(1 << 18); break;
  case KRN_GEMM:
    d->m = LAB__DISTINCT * 128;
    d->k = 512;
    d->p = 512;
    break;
  default:
    d->batch = LAB__DISTINCT * 512;
    d->d_in = 64;
    d->d_hidden = 128;
    d->d_out = 16;
    break;
  }
}
void lab__calib_dims(krn_dims *d) { lab__kernel_dims(KRN_GEMM, d); }

#define LAB__WORKER_IN 8192 /* bytes of a worker's input buffer (and of a deferred request) */

typedef struct lab__w {
  int id, rfd, wfd, threads;
  double speed, heartbeat, next_hb, debt;
  krn_exec *exec;          /* computes the chunks; NULL after an "E SPEC" that failed */
  char exec_why[256];      /* why there is no executor */
  char in[LAB__WORKER_IN]; /* partial input line */
  size_t inlen;
  /* the run in progress */
  int busy, calib;
  long job, run;
  double work_done;             /* work units done by this run (start included) */
  int stop, ckpt;               /* requests seen between chunks */
  char pending[LAB__WORKER_IN]; /* a run request that came while another run was ending (STOP then
                             PLACE arrive back to back): started as soon as this one returns */
} lab__w;

static void lab__say(lab__w *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void lab__say(lab__w *w, const char *fmt, ...) {
  char b[LAB__LINE];
  va_list ap;
  va_start(ap, fmt);
  int n = lab__line_vformat(b, sizeof b, fmt, ap);
  va_end(ap);
  if (n < 0) return;
  ssize_t rc;
  do rc = write(w->wfd, b, (size_t)n);
  while (rc < 0 && errno == EINTR);
  if (rc < 0) _exit(0); /* the runner is gone */
}

/* Progress, at the heartbeat's cadence, from the thread that does the work. */
static void lab__heartbeat(lab__w *w) {
  double now = lab__now();
  if (now < w->next_hb) return;
  w->next_hb = now + w->heartbeat;
  if (w->busy) lab__say(w, "W %ld %ld %.17g", w->job, w->run, w->work_done);
}

/* Heartbeats come from a thread of their own, so that a long system call of the worker (an
 * fdatasync of a checkpoint, creating a job's inputs) does not look like a dead worker. A stalled
 * worker (SIGSTOP) stops all its threads, and a killed one all the more: those still go silent.
 * Each line is one write() of 2 bytes, atomic on a pipe. */
static void *lab__heartbeat_thread(void *arg) {
  lab__w *w = arg;
  for (;;) {
    ssize_t rc;
    do rc = write(w->wfd, "H\n", 2);
    while (rc < 0 && errno == EINTR);
    if (rc < 0) _exit(0); /* the runner is gone */
    lab__sleep(w->heartbeat);
  }
  return NULL;
}

static void lab__handle_line(lab__w *w, char *line);

/* Reads whatever the runner sent (waiting up to `timeout_ms`) and handles complete lines. A
 * line is taken out of the buffer before it is handled, because handling it may run a whole job
 * that reads further lines through nested calls. */
static void lab__pump(lab__w *w, int timeout_ms) {
  struct pollfd p = {w->rfd, POLLIN, 0};
  int rc = poll(&p, 1, timeout_ms);
  if (rc > 0) {
    ssize_t n = read(w->rfd, w->in + w->inlen, sizeof w->in - 1 - w->inlen);
    if (n == 0) _exit(0); /* runner closed our pipe: it is gone or wants us gone */
    if (n > 0) w->inlen += (size_t)n;
  }
  char *nl;
  while ((nl = memchr(w->in, '\n', w->inlen))) {
    char line[sizeof w->in];
    size_t len = (size_t)(nl - w->in);
    memcpy(line, w->in, len);
    line[len] = 0;
    w->inlen -= len + 1;
    memmove(w->in, nl + 1, w->inlen);
    lab__handle_line(w, line);
  }
  if (w->inlen == sizeof w->in - 1) w->inlen = 0; /* an overlong line: dropped */
}

/* Between two pieces of a chunk (the executor has paid its duty cycle): heartbeat, look at
 * requests; a stop request stops the chunk. */
static int lab__yield(void *arg) {
  lab__w *w = arg;
  lab__heartbeat(w);
  lab__pump(w, 0);
  return w->stop ? 1 : 0;
}

/* The executor's per-chunk calls, or KRN_ENODEV when "E SPEC" could not make one. */
static int lab__prepare(lab__w *w, krn_job *j) { return w->exec ? krn_exec_prepare(w->exec, j) : KRN_ENODEV; }
static int lab__chunk(lab__w *w, krn_job *j, size_t c, float *dst, int yield) {
  return w->exec ? krn_exec_run_chunk(w->exec, j, c, dst, yield ? lab__yield : NULL, w) : KRN_ENODEV;
}
static void lab__finish(lab__w *w, krn_job *j) {
  if (w->exec && j) krn_exec_finish(w->exec, j);
}

/* "E SPEC": from now on chunks run on executor SPEC (kernels/krn.h, krn_exec_open), at the
 * worker's speed and threads. Answers "E 1 DESCRIPTION" or "E 0 WHY"; after a failure the worker
 * has no executor (its kernel runs fail with the reason: it never computes on another device
 * than the one it was asked for). */
static void lab__set_exec(lab__w *w, const char *spec) {
  char name[32], why[256] = "", esc[600];
  snprintf(name, sizeof name, "worker%d", w->id);
  krn_exec_destroy(w->exec);
  w->exec = NULL;
  int rc = krn_exec_open(spec, name, w->speed, w->threads, &w->exec, why, sizeof why);
  if (rc) {
    snprintf(w->exec_why, sizeof w->exec_why, "executor %.40s: %s", spec, why);
    lab__escape(why, strlen(why), esc, sizeof esc);
    lab__say(w, "E 0 %s", esc);
    return;
  }
  const char *d = krn_exec_describe(w->exec);
  lab__escape(d, strlen(d), esc, sizeof esc);
  lab__say(w, "E 1 %s", esc);
}

/* Chunk executions per second of one kernel's chunks (gemm without a name: the worker's score),
 * at this worker's duty cycle, for `seconds`. With `path`, each chunk's output is written there at
 * its offset, as a real run writes its output file (for triad the write costs more than the
 * arithmetic); the file is removed at the end. */
static void lab__calibrate(lab__w *w, double seconds, const char *kname, const char *path) {
  krn_dims d;
  krn_kernel kk = KRN_GEMM;
  if (kname && krn_kernel_parse(kname, &kk) != 0) kk = KRN_GEMM;
  lab__kernel_dims(kk, &d);
  krn_job *job;
  if (krn_job_create(kk, &d, 7, &job) != 0) {
    lab__say(w, "C 0");
    return;
  }
  float *buf = malloc(krn_job_max_chunk_len(job) * sizeof(float));
  int fd = path && *path ? open(path, O_RDWR | O_CREAT | O_TRUNC, 0644) : -1;
  size_t chunks = 0;
  w->calib = 1;
  w->debt = 0;
  w->stop = 0;
  int ok = buf && lab__prepare(w, job) == 0;
  double t0 = lab__now(), now = t0;
  while (ok && (now - t0 < seconds || chunks < 2)) {
    if (lab__chunk(w, job, chunks % d.nchunks, buf, 1) != 0) {
      ok = 0;
      break;
    }
    double t_io = lab__now();
    if (fd >= 0) {
      size_t off, len;
      krn_job_chunk_span(job, chunks % d.nchunks, &off, &len);
      if (pwrite(fd, buf, len * sizeof(float), (off_t)(off * sizeof(float))) < 0) {
        close(fd);
        fd = -1;
      }
    }
    lab__duty_pay(w->speed, lab__now() - t_io, &w->debt);
    chunks++;
    now = lab__now();
  }
  w->calib = 0;
  lab__finish(w, job);
  if (fd >= 0) close(fd);
  if (path && *path) unlink(path);
  free(buf);
  krn_job_destroy(job);
  lab__say(w, "C %.17g", ok ? (double)chunks / (now - t0) : 0.0); /* 0: no executor, no speed */
}

/* The fixed costs of a kernel run at full speed, for the prediction: its start (inputs made,
 * output file opened), one checkpoint (fdatasync of the output), its end (output synced, read
 * back, finished and verified against the reference). Measured on a scratch output `path`.
 * Answer "V SETUP SYNC FINISH" in seconds (0 0 0 when it could not be measured). */
static void lab__overheads(lab__w *w, const char *name, const char *path, int verify) {
  krn_kernel k;
  krn_dims d;
  krn_job *j = NULL;
  float *buf = NULL;
  int fd = -1;
  double setup = 0, sync = 0, fin = 0;
  if (krn_kernel_parse(name, &k) != 0) goto out;
  lab__kernel_dims(k, &d);
  double t0 = lab__now();
  if (krn_job_create(k, &d, 3, &j) != 0) goto out;
  buf = malloc(krn_job_max_chunk_len(j) * sizeof(float));
  fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
  if (!buf || fd < 0 || lab__prepare(w, j) != 0) goto out;
  setup = lab__now() - t0;
  for (size_t c = 0; c < d.nchunks; c++) {
    size_t off, len;
    if (lab__chunk(w, j, c, buf, 0) != 0) goto out;
    krn_job_chunk_span(j, c, &off, &len);
    if (pwrite(fd, buf, len * sizeof(float), (off_t)(off * sizeof(float))) != (ssize_t)(len * sizeof(float))) goto out;
    lab__heartbeat(w);
  }
  t0 = lab__now();
  int synced = fdatasync(fd) == 0;
  sync = lab__now() - t0;
  t0 = lab__now();
  if (!synced || fdatasync(fd) != 0) { /* a sync that failed measured nothing: 0 0 0 */
    setup = sync = 0;
    goto out;
  }
  if (verify) {
    size_t n = krn_job_out_len(j);
    if (pread(fd, krn_job_out(j), n * sizeof(float), 0) != (ssize_t)(n * sizeof(float))) goto out;
    krn_job_finish(j);
    krn_job_verify(j, NULL);
  }
  fin = lab__now() - t0;
out:
  lab__finish(w, j);
  if (fd >= 0) close(fd);
  if (path && *path) unlink(path);
  free(buf);
  krn_job_destroy(j);
  lab__say(w, "V %.17g %.17g %.17g", setup, sync, fin);
}

/* Seconds per chunk of a kernel on this worker's executor: the median of 3 after a warm-up
 * (0 when the executor cannot run it). */
static void lab__measure(lab__w *w, const char *name) {
  krn_kernel k;
  krn_dims d;
  krn_job *j = NULL;
  double t[3] = {0, 0, 0};
  if (krn_kernel_parse(name, &k) == 0) {
    lab__kernel_dims(k, &d);
    if (krn_job_create(k, &d, 3, &j) == 0) {
      float *buf = malloc(krn_job_max_chunk_len(j) * sizeof(float));
      if (buf && lab__prepare(w, j) == 0 && lab__chunk(w, j, 0, buf, 0) == 0) {
        for (int r = 0; r < 3; r++) {
          double t0 = lab__now();
          if (lab__chunk(w, j, (size_t)(r + 1), buf, 0) != 0) {
            t[0] = t[1] = t[2] = 0;
            break;
          }
          t[r] = lab__now() - t0;
        }
      }
      lab__finish(w, j);
      free(buf);
      krn_job_destroy(j);
    }
  }
  double a = t[0], b = t[1], c = t[2];
  double med = a > b ? (b > c ? b : (a > c ? c : a)) : (a > c ? a : (b > c ? c : b));
  lab__say(w, "M %.17g", med);
}

static void lab__run_kernel(lab__w *w, char *args) {
  long job, run;
  char kname[16], path[4096];
  size_t nchunks, start;
  double wpc;
  unsigned long long seed;
  int verify;
  /* FLOOR (optional, a piece of a wide run: lab_wide.c): the chunks the output must already hold
   * are those below FLOOR, the run's resume point, not below START (other members write those) */
  size_t floor_c = 0;
  int got = sscanf(args, "%ld %ld %15s %zu %zu %lg %llu %d %4095s %zu", &job, &run, kname, &nchunks, &start, &wpc,
                   &seed, &verify, path, &floor_c);
  if (got < 9) return;
  if (got < 10) floor_c = start;
  w->busy = 1;
  w->job = job;
  w->run = run;
  w->stop = w->ckpt = 0;
  w->work_done = (double)start * wpc;
  krn_kernel k;
  krn_dims d;
  krn_job *kj = NULL;
  float *buf = NULL;
  int fd = -1;
  char why[256] = "";
  if (krn_kernel_parse(kname, &k) != 0) {
    snprintf(why, sizeof why, "unknown kernel %s", kname);
    goto fail;
  }
  lab__kernel_dims(k, &d);
  int rc = krn_job_create(k, &d, seed, &kj);
  if (rc) {
    snprintf(why, sizeof why, "krn_job_create: %s", krn_strerror(rc));
    goto fail;
  }
  buf = malloc(krn_job_max_chunk_len(kj) * sizeof(float));
  if (!buf) {
    snprintf(why, sizeof why, "output buffer: %s", strerror(ENOMEM));
    goto fail;
  }
  fd = open(path, O_RDWR | O_CREAT, 0644);
  if (fd < 0) {
    snprintf(why, sizeof why, "opening %.200s: %s", path, strerror(errno));
    goto iofail;
  }
  if (!w->exec) {
    snprintf(why, sizeof why, "%s", w->exec_why);
    goto fail;
  }
  if ((rc = lab__prepare(w, kj))) {
    snprintf(why, sizeof why, "%s: prepare: %s", krn_exec_describe(w->exec), krn_strerror(rc));
    goto fail;
  }
  if (floor_c > 0) {
    /* A resumed run continues from the chunks the last checkpoint saved, which its output file must
     * still hold: a file that lost them (its folder deleted before the resume) is recomputed from
     * chunk 0, never completed with a hole. */
    size_t need = 0, upto = floor_c < d.nchunks ? floor_c : d.nchunks;
    for (size_t c = 0; c < upto; c++) {
      size_t off, len;
      krn_job_chunk_span(kj, c, &off, &len);
      if ((off + len) * sizeof(float) > need) need = (off + len) * sizeof(float);
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || (size_t)st.st_size < need) {
      start = 0;
      w->work_done = 0;
    }
  }
  w->debt = 0;
  for (size_t c = start; c < nchunks; c++) {
    size_t ci = c % d.nchunks;
    rc = lab__chunk(w, kj, ci, buf, 1);
    if (w->stop) goto stopped;
    if (rc) {
      snprintf(why, sizeof why, "chunk %zu on %s: %s", c, krn_exec_describe(w->exec), krn_strerror(rc));
      goto fail;
    }
    double t_io = lab__now();
    size_t off, len;
    krn_job_chunk_span(kj, ci, &off, &len);
    ssize_t wr = pwrite(fd, buf, len * sizeof(float), (off_t)(off * sizeof(float)));
    if (wr != (ssize_t)(len * sizeof(float))) {
      /* a short write is a full disk that took part of the chunk: the errno is not set then */
      snprintf(why, sizeof why, "writing %.200s: %s", path, strerror(wr < 0 ? errno : ENOSPC));
      goto iofail;
    }
    w->work_done = (double)(c + 1) * wpc;
    lab__duty_pay(w->speed, lab__now() - t_io, &w->debt);
    lab__heartbeat(w);
    lab__pump(w, 0);
    if (w->stop) goto stopped;
    if (w->ckpt) {
      w->ckpt = 0;
      /* durable only once the data is on disk: a failed sync (ENOSPC, EIO: delayed allocation
       * finds the disk full here) is the runner's failure, and no checkpoint is claimed */
      if (fdatasync(fd) != 0) {
        snprintf(why, sizeof why, "syncing %.200s: %s", path, strerror(errno));
        goto iofail;
      }
      lab__say(w, "K %ld %ld %.17g", job, run, w->work_done);
    }
  }
  if (fdatasync(fd) != 0) {
    snprintf(why, sizeof why, "syncing %.200s: %s", path, strerror(errno));
    goto iofail;
  }
  if (verify) {
    size_t n = krn_job_out_len(kj);
    ssize_t rd = pread(fd, krn_job_out(kj), n * sizeof(float), 0);
    if (rd != (ssize_t)(n * sizeof(float))) {
      snprintf(why, sizeof why, "reading back %.200s: %s", path, rd < 0 ? strerror(errno) : "shorter than written");
      goto iofail;
    }
    krn_job_finish(kj);
    double ratio = 0;
    if (krn_job_verify(kj, &ratio) != 0) {
      snprintf(why, sizeof why, "output differs from the reference: error/tolerance %.3g", ratio);
      goto fail;
    }
  }
  lab__say(w, "W %ld %ld %.17g", job, run, w->work_done);
  lab__say(w, "D %ld %ld", job, run);
  goto out;
fail : {
  char esc[LAB__TAIL * 2 + 4];
  lab__escape(why, strlen(why), esc, sizeof esc);
  lab__say(w, "F %ld %ld -1 0 %s", job, run, esc);
}
  goto out;
iofail : { /* the lab's own file, not the job: the runner stops the lab, the job keeps its state */
  char esc[LAB__TAIL * 2 + 4];
  lab__escape(why, strlen(why), esc, sizeof esc);
  lab__say(w, "I %ld %ld %s", job, run, esc);
}
  goto out;
stopped:
out:
  lab__finish(w, kj);
  if (fd >= 0) close(fd);
  free(buf);
  krn_job_destroy(kj);
  w->busy = 0;
  w->stop = w->ckpt = 0;
}

static void lab__run_command(lab__w *w, char *args) {
  long job, run;
  int pos = 0;
  if (sscanf(args, "%ld %ld %n", &job, &run, &pos) != 2) return;
  const char *cmd = args + pos;
  int ep[2];
  if (pipe(ep) != 0) {
    lab__say(w, "F %ld %ld -1 0 pipe: %s", job, run, strerror(errno));
    return;
  }
  pid_t me = getpid();
  pid_t pid = fork();
  if (pid < 0) {
    close(ep[0]);
    close(ep[1]);
    lab__say(w, "F %ld %ld -1 0 fork: %s", job, run, strerror(errno));
    return;
  }
  if (pid == 0) {
    setpgid(0, 0);
    prctl(PR_SET_PDEATHSIG, SIGKILL); /* the worker's death takes the command with it */
    /* A worker that died between the fork and the prctl sends no signal, and until its exec this
     * child does not show the journal's mark in /proc (a forked environment is not the one the
     * kernel lists), so a resume's sweep would miss it: it must not start the command. */
    if (getppid() != me) _exit(127);
    int dn = open("/dev/null", O_RDWR);
    if (dn >= 0) {
      dup2(dn, 0);
      dup2(dn, 1);
    }
    dup2(ep[1], 2);
    close(ep[0]);
    close(ep[1]);
    close(w->rfd);
    close(w->wfd);
    if (dn > 2) close(dn);
    execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
    _exit(127);
  }
  setpgid(pid, pid);
  close(ep[1]);
  w->busy = 1;
  w->job = job;
  w->run = run;
  w->stop = w->ckpt = 0;
  w->work_done = 0; /* a command's progress is unknown until it exits */
  lab__say(w, "G %ld %ld %ld", job, run, (long)pid);
  char tail[LAB__TAIL];
  size_t tlen = 0;
  int open_err = 1, status = 0, exited = 0;
  while (!exited) {
    lab__heartbeat(w);
    struct pollfd p[2] = {{w->rfd, POLLIN, 0}, {open_err ? ep[0] : -1, POLLIN, 0}};
    int ms = (int)((w->next_hb - lab__now()) * 1000) + 1;
    if (ms < 1) ms = 1;
    if (ms > 50) ms = 50;
    poll(p, 2, ms);
    if (p[0].revents) lab__pump(w, 0);
    if (open_err && p[1].revents) {
      char b[1024];
      ssize_t n = read(ep[0], b, sizeof b);
      if (n <= 0) {
        open_err = 0;
      } else {
        /* keep the last LAB__TAIL bytes */
        if ((size_t)n >= sizeof tail) {
          memcpy(tail, b + n - sizeof tail, sizeof tail);
          tlen = sizeof tail;
        } else {
          size_t keep = tlen + (size_t)n > sizeof tail ? sizeof tail - (size_t)n : tlen;
          memmove(tail, tail + tlen - keep, keep);
          memcpy(tail + keep, b, (size_t)n);
          tlen = keep + (size_t)n;
        }
      }
    }
    if (w->stop) {
      kill(-pid, SIGKILL);
      waitpid(pid, &status, 0);
      close(ep[0]);
      w->busy = 0;
      w->stop = 0;
      return;
    }
    if (w->ckpt) {
      w->ckpt = 0;
      lab__say(w, "K %ld %ld 0", job, run); /* nothing durable: a command restarts from zero */
    }
    if (waitpid(pid, &status, WNOHANG) == pid) exited = 1;
  }
  /* The job is its shell: it ends when the shell exits. What it left running in the background
   * (`sleep 300 &`) is in its process group and goes with it; it may still hold stderr's write
   * end, so what stderr holds is read without waiting for an end of file that would only come
   * when that child exits (the job would end at lab.time_limit instead). */
  kill(-pid, SIGKILL);
  fcntl(ep[0], F_SETFL, fcntl(ep[0], F_GETFL) | O_NONBLOCK);
  for (;;) {
    char b[1024];
    ssize_t n = read(ep[0], b, sizeof b);
    if (n <= 0) break;
    size_t keep = tlen + (size_t)n > sizeof tail ? ((size_t)n >= sizeof tail ? 0 : sizeof tail - (size_t)n) : tlen;
    if ((size_t)n >= sizeof tail) {
      memcpy(tail, b + n - sizeof tail, sizeof tail);
      tlen = sizeof tail;
      continue;
    }
    memmove(tail, tail + tlen - keep, keep);
    memcpy(tail + keep, b, (size_t)n);
    tlen = keep + (size_t)n;
  }
  close(ep[0]);
  w->busy = 0;
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
    lab__say(w, "D %ld %ld", job, run);
  } else {
    char esc[LAB__TAIL * 2 + 4];
    lab__escape(tail, tlen, esc, sizeof esc);
    int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1, sig = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
    lab__say(w, "F %ld %ld %d %d %s", job, run, code, sig, esc);
  }
}

static void lab__handle_line(lab__w *w, char *line) {
  long job, run;
  double x;
  switch (line[0]) {
  case 'P':
    if (w->busy && sscanf(line + 1, "%ld %ld", &job, &run) == 2 && job == w->job && run == w->run) w->ckpt = 1;
    break;
  case 'T':
    if (w->busy && sscanf(line + 1, "%ld %ld", &job, &run) == 2 && job == w->job && run == w->run) w->stop = 1;
    break;
  case 'S':
    if (sscanf(line + 1, "%lg", &x) == 1 && x > 0 && x <= 1) {
      w->speed = x;
      if (w->exec) krn_exec_set_speed(w->exec, x);
    }
    break;
  case 'E': {
    char spec[64];
    if (!w->busy && !w->calib && sscanf(line + 1, "%63s", spec) == 1) lab__set_exec(w, spec);
    break;
  }
  case 'C': {
    char kn[16] = "", path[4096] = "";
    int got = sscanf(line + 1, "%lg %15s %4095s", &x, kn, path);
    if (!w->busy && !w->calib && got >= 1) lab__calibrate(w, x, got >= 2 ? kn : NULL, got == 3 ? path : NULL);
    break;
  }
  case 'V':
    if (!w->busy && !w->calib) {
      char name[16], path[4096];
      int verify = 1;
      if (sscanf(line + 1, "%15s %d %4095s", name, &verify, path) == 3) lab__overheads(w, name, path, verify);
    }
    break;
  case 'Q': {
    /* Is there a GPU? Asked in a worker, never in the runner: a CUDA context does not survive
     * fork(). */
    char msg[256] = "", esc[600];
    krn_gpu *g = NULL;
    int rc = krn_gpu_open(&g, msg, sizeof msg);
    if (rc == 0) {
      krn_gpu_info info;
      krn_gpu_get_info(g, &info);
      snprintf(msg, sizeof msg, "%s, %d SMs, green contexts %s", info.name, info.sms,
               info.green_contexts ? "available" : "unavailable");
      krn_gpu_close(g);
    }
    lab__escape(msg, strlen(msg), esc, sizeof esc);
    lab__say(w, "Q %d %s", rc == 0 ? 1 : 0, esc);
    break;
  }
  case 'M':
    if (!w->busy && !w->calib) {
      char name[16];
      if (sscanf(line + 1, "%15s", name) == 1) lab__measure(w, name);
    }
    break;
  case 'K':
  case 'X':
    if (w->busy || w->calib) {
      snprintf(w->pending, sizeof w->pending, "%s", line);
      break;
    }
    if (line[0] == 'K')
      lab__run_kernel(w, line + 1);
    else
      lab__run_command(w, line + 1);
    while (w->pending[0] && !w->busy && !w->calib) {
      char next[LAB__WORKER_IN];
      snprintf(next, sizeof next, "%s", w->pending);
      w->pending[0] = 0;
      if (next[0] == 'K')
        lab__run_kernel(w, next + 1);
      else
        lab__run_command(w, next + 1);
    }
    break;
  default: break;
  }
}

void lab__worker_main(pid_t runner, int id, int rfd, int wfd, double speed, int threads, double heartbeat) {
  prctl(PR_SET_PDEATHSIG, SIGKILL); /* a worker never outlives its runner */
  /* the runner died before prctl took effect: the orphan's parent is now init or a subreaper */
  if (getppid() != runner) _exit(0);
  signal(SIGPIPE, SIG_IGN);
  lab__w w;
  memset(&w, 0, sizeof w);
  w.id = id;
  w.rfd = rfd;
  w.wfd = wfd;
  w.speed = speed;
  w.threads = threads;
  w.heartbeat = heartbeat;
  w.next_hb = lab__now();
  /* CPU until the runner names another executor ("E SPEC"); a CPU executor only fails for lack
   * of memory, and then so does everything else */
  if (krn_exec_open("cpu", "worker", speed, threads, &w.exec, w.exec_why, sizeof w.exec_why) != 0) _exit(1);
  pthread_t hb;
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, &old); /* signals stay with the main thread */
  if (pthread_create(&hb, NULL, lab__heartbeat_thread, &w) != 0) _exit(1);
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  for (;;) {
    lab__heartbeat(&w);
    int ms = (int)((w.next_hb - lab__now()) * 1000) + 1;
    lab__pump(&w, ms < 1 ? 1 : ms);
  }
}
