/* fuzz_util.h - what the fuzz targets share: the input as a NUL-terminated string, and as a file
 * (the loaders under test read paths; an anonymous memory file stands in, no disk is touched). */
#ifndef FUZZ_UTIL_H
#define FUZZ_UTIL_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static inline char *fz_string(const uint8_t *data, size_t size) {
  char *s = malloc(size + 1);
  if (!s) return NULL;
  memcpy(s, data, size);
  s[size] = 0;
  return s;
}

/* Writes data to an anonymous memory file; its path (/proc/self/fd/N) in path. Returns the fd to
 * close, or -1. */
static inline int fz_file(const uint8_t *data, size_t size, char *path, size_t len) {
  int fd = memfd_create("fuzz", 0);
  if (fd < 0) return -1;
  size_t off = 0;
  while (off < size) {
    ssize_t w = write(fd, data + off, size - off);
    if (w <= 0) {
      close(fd);
      return -1;
    }
    off += (size_t)w;
  }
  snprintf(path, len, "/proc/self/fd/%d", fd);
  return fd;
}

/* The same as a named file in /dev/shm (memory; HDF5 cannot open a memfd's /proc path), one per
 * process, rewritten for every input. 0, or -1. */
static inline int fz_named_file(const uint8_t *data, size_t size, char *path, size_t len) {
  snprintf(path, len, "/dev/shm/spotlab-fuzz-%d", (int)getpid());
  FILE *f = fopen(path, "wb");
  if (!f) return -1;
  int ok = fwrite(data, 1, size, f) == size;
  return fclose(f) == 0 && ok ? 0 : -1;
}

#endif
