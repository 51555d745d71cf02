/* datapath.c - the data search path (datapath.h): the scenario's folder, SPOTLAB_DATA, the
 * source tree of an uninstalled build, the installed data next to the binary and under the
 * configured prefix. */
#include "sim/datapath.h"
#include "sim/errors.h"
#include "spotlab_config.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef PATH_MAX
#define PATH_MAX 4096
#endif

/* Removes "." and "dir/.." components and doubled slashes of an absolute path (PATH_MAX bytes),
 * without asking the file system (the folders need not exist: they are named in the not-found
 * message). A relative path is left as it is. */
static void sim__normalize(char *p) {
  if (p[0] != '/') return;
  char q[PATH_MAX];
  size_t o = 0; /* q holds "/a/b" (o bytes) */
  for (const char *in = p; *in;) {
    while (*in == '/') in++;
    size_t n = strcspn(in, "/");
    if (n == 0 || (n == 1 && in[0] == '.')) {
      /* nothing, or "." */
    } else if (n == 2 && in[0] == '.' && in[1] == '.') {
      while (o > 0 && q[o - 1] != '/') o--; /* back over the last component and its slash */
      if (o > 0) o--;
    } else {
      q[o++] = '/';
      memcpy(q + o, in, n);
      o += n;
    }
    in += n;
  }
  if (o == 0) q[o++] = '/';
  q[o] = 0;
  memcpy(p, q, o + 1);
}

/* The running binary's absolute path (Linux: /proc/self/exe), or "" where it cannot be known. */
static void sim__self_exe(char *buf, size_t n) {
  ssize_t l = readlink("/proc/self/exe", buf, n - 1);
  buf[l > 0 ? (size_t)l : 0] = 0;
}

/* One candidate folder of the search, with why it is there (for the not-found message). */
typedef struct sim__dir {
  char path[PATH_MAX];
  const char *why;
} sim__dir;
#define SIM__MAXDIRS 64

static void sim__add(sim__dir *v, int *n, const char *path, size_t len, const char *why) {
  if (*n >= SIM__MAXDIRS || len == 0 || len >= PATH_MAX) return;
  char p[PATH_MAX];
  memcpy(p, path, len);
  p[len] = 0;
  sim__normalize(p);
  for (int i = 0; i < *n; i++)
    if (!strcmp(v[i].path, p)) return; /* the same folder twice: tried once, named by its first reason */
  memcpy(v[*n].path, p, strlen(p) + 1);
  v[*n].why = why;
  ++*n;
}

/* 1 when the binary lies inside the build tree it was compiled in (an uninstalled build). */
static int sim__uninstalled(const char *exe) {
  char bin[PATH_MAX];
  if (!exe[0] || !realpath(SPOTLAB_BINARY_DIR, bin)) return 0;
  size_t l = strlen(bin);
  return !strncmp(exe, bin, l) && exe[l] == '/';
}

static int sim__dirs(const char *base_dir, sim__dir *v) {
  int n = 0;
  if (base_dir && base_dir[0]) sim__add(v, &n, base_dir, strlen(base_dir), "the scenario's folder");
  const char *env = getenv("SPOTLAB_DATA");
  for (const char *p = env; p && *p;) {
    size_t l = strcspn(p, ":");
    sim__add(v, &n, p, l, "SPOTLAB_DATA");
    p += l;
    if (*p == ':') p++;
  }
  char exe[PATH_MAX];
  sim__self_exe(exe, sizeof exe);
  if (sim__uninstalled(exe)) {
    const char *src = SPOTLAB_SOURCE_DIR "/data";
    sim__add(v, &n, src, strlen(src), "the source tree: this build is not installed");
  } else if (exe[0] && strrchr(exe, '/')) {
    char *slash = strrchr(exe, '/');
    char rel[PATH_MAX];
    int l = snprintf(rel, sizeof rel, "%.*s/%s", (int)(slash - exe), exe, SPOTLAB_DATA_FROM_BIN);
    if (l > 0 && l < (int)sizeof rel) sim__add(v, &n, rel, (size_t)l, "installed, next to the binary");
  }
  const char *inst = SPOTLAB_INSTALL_DATA_DIR;
  sim__add(v, &n, inst, strlen(inst), "installed under " SPOTLAB_INSTALL_PREFIX);
  return n;
}

int sim_data_find(const char *base_dir, const char *name, char **path, char *err, size_t errlen) {
  *path = NULL;
  if (name[0] == '/') {
    *path = strdup(name);
    return *path ? SPOTLAB_OK : SPOTLAB_ENOMEM;
  }
  sim__dir *v = malloc(SIM__MAXDIRS * sizeof *v);
  if (!v) return SPOTLAB_ENOMEM;
  int n = sim__dirs(base_dir, v);
  size_t o = (size_t)snprintf(err, errlen, "%s: not found; looked at ", name);
  for (int i = 0; i < n; i++) {
    size_t need = strlen(v[i].path) + strlen(name) + 2;
    char *c = malloc(need);
    if (!c) {
      free(v);
      return SPOTLAB_ENOMEM;
    }
    snprintf(c, need, "%s/%s", v[i].path, name);
    struct stat st;
    if (stat(c, &st) == 0 && !S_ISDIR(st.st_mode)) {
      *path = c;
      free(v);
      return SPOTLAB_OK;
    }
    if (o < errlen) o += (size_t)snprintf(err + o, errlen - o, "%s%s (%s)", i ? ", " : "", c, v[i].why);
    free(c);
  }
  if (o < errlen && n == 0) snprintf(err + o, errlen - o, "nothing (no folder to look in)");
  if (o < errlen) snprintf(err + o, errlen - o, "; put it in one of these folders or name its folder in SPOTLAB_DATA");
  free(v);
  return SPOTLAB_ENOTFOUND;
}
