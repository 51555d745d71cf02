/* h5mem.h - HDF5 files built in memory and written out whole. An HDF5 file whose close fails on a
 * full disk stays open inside the library and crashes its exit handler (a segfault in
 * H5F__close_cb, seen with libhdf5 1.10 on a full tmpfs); so the writers build the file with the
 * core driver (no backing store) and write its image themselves, with write(2) and fsync, which
 * report ENOSPC like any other error. Header-only, like tmpname.h, for every writer. */
#ifndef SIM_H5MEM_H
#define SIM_H5MEM_H

#include <errno.h>
#include <fcntl.h>
#include <hdf5.h>
#include "sim/failpoint.h"
#include <stdlib.h>
#include <unistd.h>

/* Creates PATH (checking that it can be created on the disk) and the in-memory HDF5 file that
 * will fill it; a negative id on failure (then PATH is not left behind). */
static inline hid_t sim_h5mem_create(const char *path) {
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) return -1;
  close(fd);
  hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
  hid_t f = fapl >= 0 && H5Pset_fapl_core(fapl, 1 << 20, 0) >= 0 ? H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, fapl)
                                                                : -1;
  if (fapl >= 0) H5Pclose(fapl);
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
  if (ok) {
    int fd = open(path, O_WRONLY | O_TRUNC);
    size_t off = 0;
    if (fd < 0) *werr = errno;
    while (fd >= 0 && off < (size_t)n) {
      sim_failpoint("write"); /* the fault-injection suite's kill points: every 16 KiB */
      size_t chunk = (size_t)n - off < 16384 ? (size_t)n - off : 16384;
      ssize_t w = write(fd, (const char *)img + off, chunk);
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) { *werr = w < 0 ? errno : ENOSPC; break; }
      off += (size_t)w;
    }
    if (fd >= 0 && !*werr && fsync(fd) != 0) *werr = errno;
    if (fd >= 0 && close(fd) != 0 && !*werr) *werr = errno;
    if (*werr) ok = 0;
    else sim_failpoint("write"); /* whole, not yet renamed into place */
  }
  free(img);
  if (!ok) unlink(path);
  return ok ? 0 : -1;
}

#endif
