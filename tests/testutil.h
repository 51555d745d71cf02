/* testutil.h - helpers for tests that run the `spotlab` command: run a shell command, capture
 * its output, write a scenario file. */
#ifndef TESTS_TESTUTIL_H
#define TESTS_TESTUTIL_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

/* Runs `cmd` through the shell with stderr merged; returns its exit status; output in *out
 * (malloc'd, NUL-terminated). */
static inline int tu_run(const char *cmd, char **out) {
  char full[8300];
  snprintf(full, sizeof full, "%s 2>&1", cmd);
  FILE *p = popen(full, "r");
  size_t cap = 1 << 16, len = 0;
  char *buf = malloc(cap);
  size_t n;
  while (p && buf && (n = fread(buf + len, 1, cap - len - 1, p)) > 0) {
    len += n;
    if (len + 1 == cap) buf = realloc(buf, cap *= 2);
  }
  if (buf) buf[len] = 0;
  int st = p ? pclose(p) : -1;
  if (out)
    *out = buf;
  else
    free(buf);
  return st >= 0 && WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static inline const char *tu_bin(void) {
  const char *b = getenv("SPOTLAB_BIN");
  return b ? b : "../spotlab";
}

static inline const char *tu_src(void) {
  const char *s = getenv("SPOTLAB_SOURCE_DIR");
  return s ? s : "..";
}

static inline void tu_write(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  if (f) {
    fputs(text, f);
    fclose(f);
  }
}

#endif
