/* provenance.h - how a results file was made, for its /meta (docs/results-format.md; the command
 * line comes from app/, which has argv): the source's git commit, the compiler, the versions of the libraries spotlab runs
 * on and the host. Knows nothing of models; rank 0 asks for it when it writes a file. */
#ifndef SIM_PROVENANCE_H
#define SIM_PROVENANCE_H

#include <stddef.h>

typedef struct sim_provenance {
  char git[128];      /* `git describe --always --dirty` of the source at build time, or "unknown" */
  char compiler[128]; /* "GNU 12.2.0": CMake's compiler id and version */
  char gsl[32];       /* the linked library's gsl_version */
  char hdf5[32];      /* H5get_libversion: "1.10.8" */
  char mpi[256];      /* MPI_Get_library_version's first line: "Open MPI v4.1.4, package: ..." */
  char libconfig[32]; /* the libconfig headers built against: "1.5.0" (libconfig has no run-time query) */
  char host[256];     /* gethostname */
} sim_provenance;

/* Fills p; a value that cannot be known is "unknown", never empty. */
void sim_provenance_get(sim_provenance *p);

#endif
