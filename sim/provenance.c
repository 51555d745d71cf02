/* provenance.c - see provenance.h. Each library is asked for its version as linked, where it has
 * a run-time query (GSL, HDF5, MPI); libconfig only has its headers' macros. */
#include "sim/provenance.h"
#include "spotlab_config.h"
#include "spotlab_git.h" /* SPOTLAB_GIT_DESCRIBE, refreshed at every build */

#include <gsl/gsl_version.h>
#include <hdf5.h>
#include <libconfig.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void sim__set(char *dst, size_t n, const char *v) { snprintf(dst, n, "%s", v && v[0] ? v : "unknown"); }

void sim_provenance_get(sim_provenance *p) {
  memset(p, 0, sizeof *p);
  sim__set(p->git, sizeof p->git, SPOTLAB_GIT_DESCRIBE);
  sim__set(p->compiler, sizeof p->compiler, SPOTLAB_C_COMPILER);
  sim__set(p->gsl, sizeof p->gsl, gsl_version);
  unsigned maj, min, rel;
  if (H5get_libversion(&maj, &min, &rel) >= 0)
    snprintf(p->hdf5, sizeof p->hdf5, "%u.%u.%u", maj, min, rel);
  else
    sim__set(p->hdf5, sizeof p->hdf5, NULL);
  /* MPI_Get_library_version may be called before MPI_Init and after MPI_Finalize (MPI 3.0, 8.1.1) */
  char mpi[MPI_MAX_LIBRARY_VERSION_STRING + 1] = "";
  int len = 0;
  if (MPI_Get_library_version(mpi, &len) == MPI_SUCCESS && len >= 0) {
    mpi[len < MPI_MAX_LIBRARY_VERSION_STRING ? len : MPI_MAX_LIBRARY_VERSION_STRING] = 0;
    mpi[strcspn(mpi, "\r\n")] = 0; /* Open MPI's first line names it; the rest is build detail */
    size_t l = strlen(mpi);
    while (l && (mpi[l - 1] == ' ' || mpi[l - 1] == '\t')) mpi[--l] = 0;
  }
  sim__set(p->mpi, sizeof p->mpi, mpi);
  snprintf(p->libconfig, sizeof p->libconfig, "%d.%d.%d", LIBCONFIG_VER_MAJOR, LIBCONFIG_VER_MINOR,
           LIBCONFIG_VER_REVISION);
  char host[256] = "";
  if (gethostname(host, sizeof host - 1) != 0) host[0] = 0;
  host[sizeof host - 1] = 0;
  sim__set(p->host, sizeof p->host, host);
}
