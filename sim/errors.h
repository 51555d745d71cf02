/* errors.h - spotlab's one error space, declared once (no dependencies: every layer includes it).
 *
 * 0 is success. -1 .. -99 are the codes every module shares, with the same meaning everywhere
 * (SIM_EIO, MKT_EIO, KRN_EIO and LAB_EIO are all SPOTLAB_EIO); the codes one module has of its
 * own sit in a range of 100: the scheduling core -100 .., the kernels -200 .., the lab -300 ...
 * Module headers give these codes their own names (SCHED_ESTATE = SPOTLAB_ESCHED_STATE, ...), so a
 * code means one thing wherever it travels, and spotlab_strerror names any of them; each module's
 * strerror is spotlab_strerror.
 */
#ifndef SIM_ERRORS_H
#define SIM_ERRORS_H

#include <stdarg.h>
#include <stdio.h>

enum {
  SPOTLAB_OK = 0,
  /* shared */
  SPOTLAB_ENOMEM = -1,    /* out of memory */
  SPOTLAB_EINVAL = -2,    /* invalid argument */
  SPOTLAB_EIO = -3,       /* a file could not be read or written */
  SPOTLAB_ECONFIG = -4,   /* an input file has errors (already reported with FILE:LINE) */
  SPOTLAB_EFORMAT = -5,   /* a file is damaged, malformed, or of another format version */
  SPOTLAB_ENOTFOUND = -6, /* a named thing (model, dataset, key, GPU, fit) does not exist */
  /* the scheduling core */
  SPOTLAB_ESCHED_STATE = -101, /* an event contradicts the core's state */
  SPOTLAB_ESCHED_TIME = -102,  /* an event earlier than the previous one */
  /* the kernels */
  SPOTLAB_EKRN_NODEV = -201,  /* no CUDA device, driver, or CUDA support not built */
  SPOTLAB_EKRN_CUDA = -202,   /* a CUDA call failed */
  SPOTLAB_EKRN_VERIFY = -203, /* a result differs from the reference beyond the tolerance */
  SPOTLAB_EKRN_FAILED = -204, /* a member failed (emulated failure), or every member failed */
  SPOTLAB_EKRN_CANCEL = -205, /* a chunk's execution was cancelled */
  /* the lab */
  SPOTLAB_ELAB_SYS = -301,     /* a system call failed (fork, pipe, poll) */
  SPOTLAB_ELAB_JOURNAL = -302, /* the journal is damaged or belongs to another job file */
  SPOTLAB_ELAB_SCHED = -303,   /* the scheduling core rejected an event (a bug in the glue) */
  SPOTLAB_ELAB_TIMEOUT = -304, /* the lab ran past lab.time_limit with jobs unfinished */
  SPOTLAB_ELAB_STOPPED = -305  /* the lab stopped: it could not write its own files (journal, job outputs) */
};

/* The text of any code ("unknown error" for a code that is none of the above). */
static inline const char *spotlab_strerror(int err) {
  switch (err) {
  case SPOTLAB_OK: return "success";
  case SPOTLAB_ENOMEM: return "out of memory";
  case SPOTLAB_EINVAL: return "invalid argument";
  case SPOTLAB_EIO: return "a file could not be read or written";
  case SPOTLAB_ECONFIG: return "the input file has errors";
  case SPOTLAB_EFORMAT: return "damaged or malformed file, or a file of another format version";
  case SPOTLAB_ENOTFOUND: return "not found";
  case SPOTLAB_ESCHED_STATE: return "event contradicts the scheduler state";
  case SPOTLAB_ESCHED_TIME: return "event earlier than the previous one";
  case SPOTLAB_EKRN_NODEV: return "no CUDA device (or CUDA support not built)";
  case SPOTLAB_EKRN_CUDA: return "a CUDA call failed";
  case SPOTLAB_EKRN_VERIFY: return "result differs from the reference beyond the tolerance";
  case SPOTLAB_EKRN_FAILED: return "member failed";
  case SPOTLAB_EKRN_CANCEL: return "execution cancelled";
  case SPOTLAB_ELAB_SYS: return "a system call failed";
  case SPOTLAB_ELAB_JOURNAL: return "the journal is damaged or belongs to another job file";
  case SPOTLAB_ELAB_SCHED: return "the scheduling core rejected an event";
  case SPOTLAB_ELAB_TIMEOUT: return "the lab ran past lab.time_limit";
  case SPOTLAB_ELAB_STOPPED: return "the lab stopped: it could not write its own files";
  default: return "unknown error";
  }
}

/* Formats a message into the caller's buffer (err may be NULL or len 0: nothing written) and
 * returns `code`, so an error path is one line: `return spotlab_errf(err, len, SPOTLAB_EFORMAT,
 * "%s:%zu: ...", path, line);`. The one copy for every module that reports into a buffer. */
static inline int spotlab_errf(char *err, size_t len, int code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static inline int spotlab_errf(char *err, size_t len, int code, const char *fmt, ...) {
  if (err && len) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, len, fmt, ap);
    va_end(ap);
  }
  return code;
}

#endif
