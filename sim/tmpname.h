/* tmpname.h - the temporary name a results file is written under (PATH.tmp.PID, renamed to PATH
 * when whole), and the cleanup of those that killed runs left behind: before a new write, every
 * PATH.tmp.N in PATH's folder whose process N no longer exists is removed. Header-only, so that
 * the engine's writer, the report's and the kernels' (which links no engine) share it. */
#ifndef SIM_TMPNAME_H
#define SIM_TMPNAME_H

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

/* Writes PATH.tmp.<our pid> to out (0, or -1 when it does not fit), after removing the stale
 * temporaries of PATH (those of processes gone: a run killed while writing). */
static inline int sim_tmpname(const char *path, char *out, size_t len) {
  int n = snprintf(out, len, "%s.tmp.%ld", path, (long)getpid());
  if (n < 0 || (size_t)n >= len) return -1;
  const char *slash = strrchr(path, '/');
  char dir[4096];
  const char *base = slash ? slash + 1 : path;
  if (slash)
    snprintf(dir, sizeof dir, "%.*s", (int)(slash - path) ? (int)(slash - path) : 1, path);
  else
    snprintf(dir, sizeof dir, ".");
  DIR *d = opendir(dir);
  if (!d) return 0;
  size_t bl = strlen(base);
  struct dirent *e;
  while ((e = readdir(d))) {
    if (strncmp(e->d_name, base, bl) || strncmp(e->d_name + bl, ".tmp.", 5)) continue;
    const char *num = e->d_name + bl + 5;
    char *end;
    errno = 0;
    long pid = strtol(num, &end, 10);
    if (end == num || *end || errno || pid <= 0) continue;
    if (kill((pid_t)pid, 0) == 0 || errno != ESRCH) continue; /* alive (or not ours to judge) */
    char stale[8192];
    snprintf(stale, sizeof stale, "%s/%s", dir, e->d_name);
    unlink(stale);
  }
  closedir(d);
  return 0;
}

#endif
