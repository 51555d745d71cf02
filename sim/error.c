/* error.c - error codes and the one fatal path (bugs, out-of-memory, MPI failures). */
#include "sim/sim.h"

#include <mpi.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

const char *sim_strerror(int err) {
  switch (err) {
  case SIM_OK: return "success";
  case SIM_ENOMEM: return "out of memory";
  case SIM_EINVAL: return "invalid argument";
  case SIM_EIO: return "input/output error";
  case SIM_ECONFIG: return "the scenario has errors";
  case SIM_EFORMAT: return "damaged file or file of another format version";
  case SIM_ENOTFOUND: return "not found";
  default: return "unknown error";
  }
}

void sim__fatal(const char *file, int line, const char *fmt, ...) {
  int init = 0, fin = 0, rank = 0;
  MPI_Initialized(&init);
  if (init) MPI_Finalized(&fin);
  if (init && !fin) MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  fprintf(stderr, "spotlab: fatal [rank %d] %s:%d: ", rank, file, line);
  va_list ap;
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fputc('\n', stderr);
  fflush(stderr);
  if (init && !fin) MPI_Abort(MPI_COMM_WORLD, 3);
  abort();
}
