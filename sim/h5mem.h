/* h5mem.h - HDF5 files built in memory and written out whole. An HDF5 file whose close fails on a
 * full disk stays open inside the library and crashes its exit handler (a segfault in
 * H5F__close_cb, seen with libhdf5 1.10 on a full tmpfs); so the writers build the file with the
 * core driver (no backing store) and write its image themselves, with write(2) and fsync, which
 * report ENOSPC like any other error. Header-only, like tmpname.h, for every writer.
 *
 * Every file carries a 512-byte HDF5 user block (which HDF5 and h5py skip: the superblock is then
 * at offset 512) holding a checksum of the rest of the file:
 *   "spotlab-checksum 1 crc32 SIZE HEX\n" and zeros,
 * SIZE the file's bytes, HEX the CRC-32 (zlib's, as Python's zlib.crc32) of bytes 512..SIZE.
 * Readers check it before HDF5 parses anything: HDF5 1.10
 * itself reads out of bounds on some damaged files (docs/fuzzing.md), so a file damaged after it
 * was written (a disk error, an edit by hand) is refused as damaged instead of crashing them. */
#ifndef SIM_H5MEM_H
#define SIM_H5MEM_H

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <hdf5.h>
#include "sim/failpoint.h"
#include <stdlib.h>
#include <unistd.h>
#include <zlib.h>

#define SIM_H5MEM_USERBLOCK 512
#define SIM_H5MEM_MAGIC "spotlab-checksum 1 crc32 "

/* CRC-32 of n bytes, continuing crc (0 to start); zlib takes at most 4 GiB per call. */
static inline uint32_t sim_h5mem_crc(const unsigned char *p, size_t n, uint32_t crc) {
  uLong c = crc;
  while (n > 0) {
    uInt k = n > (1u << 30) ? (1u << 30) : (uInt)n;
    c = crc32(c, p, k);
    p += k;
    n -= k;
  }
  return (uint32_t)c;
}

/* Creates PATH (checking that it can be created on the disk) and the in-memory HDF5 file that
 * will fill it; a negative id on failure (then PATH is not left behind). */
static inline hid_t sim_h5mem_create(const char *path) {
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) return -1;
  close(fd);
  hid_t fapl = H5Pcreate(H5P_FILE_ACCESS), fcpl = H5Pcreate(H5P_FILE_CREATE);
  hid_t f = fapl >= 0 && fcpl >= 0 && H5Pset_fapl_core(fapl, 1 << 20, 0) >= 0 &&
                    H5Pset_userblock(fcpl, SIM_H5MEM_USERBLOCK) >= 0
                ? H5Fcreate(path, H5F_ACC_TRUNC, fcpl, fapl)
                : -1;
  if (fapl >= 0) H5Pclose(fapl);
  if (fcpl >= 0) H5Pclose(fcpl);
  if (f < 0) unlink(path);
  return f;
}

/* Closes the in-memory file f and writes its image to PATH (synced). 0, or -1 with *werr the
 * errno of the write (0 when HDF5 itself failed); on failure PATH is removed. */
static inline int sim_h5mem_commit(hid_t f, const char *path, int ok, int *werr) {
  *werr = 0;
  if (ok && H5Fflush(f, H5F_SCOPE_GLOBAL) < 0) ok = 0;
  ssize_t n = ok ? H5Fget_file_image(f, NULL, 0) : -1;
  void *img = n > 0 ? malloc((size_t)n) : NULL;
  if (!img || H5Fget_file_image(f, img, (size_t)n) != n) ok = 0;
  if (H5Fclose(f) < 0) ok = 0; /* in memory: nothing on the disk can fail here */
  /* The user block with the checksum of the rest: HDF5's image of a file made with a user block
   * starts at its superblock, so the block is written before it. */
  char ub[SIM_H5MEM_USERBLOCK] = {0};
  if (ok)
    snprintf(ub, sizeof ub, SIM_H5MEM_MAGIC "%lld %08lx\n", (long long)n + SIM_H5MEM_USERBLOCK,
             (unsigned long)sim_h5mem_crc(img, (size_t)n, 0));
  if (ok) {
    int fd = open(path, O_WRONLY | O_TRUNC);
    size_t off = 0, total = (size_t)n + SIM_H5MEM_USERBLOCK;
    if (fd < 0) *werr = errno;
    while (fd >= 0 && off < total) {
      sim_failpoint("write"); /* the fault-injection suite's kill points: every 16 KiB */
      const char *from = off < SIM_H5MEM_USERBLOCK ? ub + off : (const char *)img + (off - SIM_H5MEM_USERBLOCK);
      size_t left = off < SIM_H5MEM_USERBLOCK ? SIM_H5MEM_USERBLOCK - off : total - off;
      size_t chunk = left < 16384 ? left : 16384;
      ssize_t w = write(fd, from, chunk);
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) {
        *werr = w < 0 ? errno : ENOSPC;
        break;
      }
      off += (size_t)w;
    }
    if (fd >= 0 && !*werr && fsync(fd) != 0) *werr = errno;
    if (fd >= 0 && close(fd) != 0 && !*werr) *werr = errno;
    if (*werr)
      ok = 0;
    else
      sim_failpoint("write"); /* whole, not yet renamed into place */
  }
  free(img);
  if (!ok) unlink(path);
  return ok ? 0 : -1;
}

/* Commits f to tmp (sim_h5mem_commit) and renames tmp to path, the last step of every writer:
 * 0, or -1 with the reason in err ("PATH: writing the WHAT failed (REASON); nothing was left
 * behind", or "PATH: cannot rename the finished file into place"); nothing is left behind then. */
static inline int sim_h5mem_finish(hid_t f, const char *tmp, const char *path, int ok, const char *what, char *err,
                                   size_t errlen) {
  int werr;
  if (sim_h5mem_commit(f, tmp, ok, &werr)) {
    snprintf(err, errlen, "%s: writing the %s failed (%s); nothing was left behind", path, what,
             werr ? strerror(werr) : "HDF5 error");
    return -1;
  }
  if (rename(tmp, path) != 0) {
    int e = errno;
    unlink(tmp);
    snprintf(err, errlen, "%s: cannot rename the finished file into place (%s)", path, strerror(e));
    return -1;
  }
  return 0;
}

/* Checks PATH's checksum before HDF5 reads it: 1 when it matches, 0 when the file has none (not
 * written by spotlab, or by a spotlab before the checksum: HDF5 reads it unchecked), -1 when it is
 * damaged or unreadable (the reason in err). */
static inline int sim_h5mem_verify(const char *path, char *err, size_t errlen) {
  int fd = open(path, O_RDONLY);
  if (fd < 0) {
    snprintf(err, errlen, "cannot read the file: %s", strerror(errno));
    return -1;
  }
  struct stat st;
  char ub[SIM_H5MEM_USERBLOCK + 1];
  ssize_t got = fstat(fd, &st) == 0 ? read(fd, ub, SIM_H5MEM_USERBLOCK) : -1;
  size_t ml = sizeof SIM_H5MEM_MAGIC - 1;
  if (got < (ssize_t)ml || memcmp(ub, SIM_H5MEM_MAGIC, ml)) {
    close(fd);
    return 0;
  }
  ub[got] = 0;
  long long size = -1;
  unsigned long want = 0;
  if (sscanf(ub + ml, "%lld %8lx", &size, &want) != 2) {
    close(fd);
    snprintf(err, errlen, "damaged file: its checksum block is unreadable");
    return -1;
  }
  if ((long long)st.st_size != size) {
    close(fd);
    snprintf(err, errlen, "damaged file: %lld bytes where it was written with %lld (truncated or extended)",
             (long long)st.st_size, size);
    return -1;
  }
  uint32_t h = 0;
  static const size_t cap = 1 << 20;
  unsigned char *buf = malloc(cap);
  int rc = buf ? 1 : -1;
  if (!buf) snprintf(err, errlen, "out of memory");
  if (rc == 1 && lseek(fd, SIM_H5MEM_USERBLOCK, SEEK_SET) != SIM_H5MEM_USERBLOCK) rc = -1;
  while (rc == 1) {
    size_t have = 0;
    while (have < cap) {
      ssize_t r = read(fd, buf + have, cap - have);
      if (r < 0 && errno == EINTR) continue;
      if (r < 0) {
        snprintf(err, errlen, "cannot read the file: %s", strerror(errno));
        rc = -1;
      }
      if (r <= 0) break;
      have += (size_t)r;
    }
    if (rc != 1 || have == 0) break;
    h = sim_h5mem_crc(buf, have, h);
    if (have < cap) break;
  }
  free(buf);
  close(fd);
  if (rc == 1 && h != want) {
    snprintf(err, errlen, "damaged file: its checksum does not match (it changed after spotlab wrote it)");
    rc = -1;
  }
  return rc;
}

#endif
