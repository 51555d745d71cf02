/* error.c - error codes and the one fatal path (bugs, out-of-memory, MPI failures). */
#include "sim/sim.h"

#include <mpi.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

const char *sim_strerror(int err) { return spotlab_strerror(err); } /* sim/errors.h */

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
