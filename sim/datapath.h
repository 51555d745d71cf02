/* datapath.h - where the data files a scenario names are found, so that a scenario runs from any
 * folder. The one place the models learn anything of the environment: they hand a name to
 * sim_data_find and read the path it gives back.
 *
 * A relative name ("gpus.csv", "traces/x.csv", "../data/gpus.csv") is looked for, in order, in
 *   1. the scenario's folder (base_dir);
 *   2. each folder of SPOTLAB_DATA, colon-separated (empty entries are skipped);
 *   3. the source tree's data/, for a build that is not installed (the running binary lies inside
 *      the build tree it was built in: SPOTLAB_BINARY_DIR); ahead of any installed data, which
 *      may belong to another version;
 *   4. the installed data next to the binary (BIN/../share/spotlab/data: an install that was moved
 *      elsewhere still finds its own data);
 *   5. the installed data of the configured prefix (CMAKE_INSTALL_PREFIX/share/spotlab/data).
 * The first candidate that exists and is not a directory wins; its reader reports any problem
 * with its content. An absolute name is used as it is. A folder that comes twice is tried once.
 */
#ifndef SIM_DATAPATH_H
#define SIM_DATAPATH_H

#include <stddef.h>

/* Finds `name` (see above). base_dir may be NULL or "" (no scenario folder). Returns 0 with a
 * malloc'd path in *path; SIM_ENOTFOUND with "NAME: not found; looked at P1 (why), P2 (why), ..."
 * (every candidate, in order) in err; SIM_ENOMEM. */
int sim_data_find(const char *base_dir, const char *name, char **path, char *err, size_t errlen);

#endif
