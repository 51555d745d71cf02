/* results_mpi.c - one replication's results sent whole from the rank that ran it to another
 * (rank 0, which writes the file). Replications spread over ranks run as sequential engines, one
 * per rank or thread; their results are moved here byte for byte, so rank 0 holds exactly what a
 * single-process run would have held (see sim.h, sim_results_send).
 *
 * Wire format, native byte order (every rank of one job runs the same binary on the same kind of
 * machine): a header of 6 u64 words (seed, ranks, events, windows, and the bits of wall_s and
 * peak_rss_mib), then per series its bin count (u64) and nbins * ncols int64 values, then per
 * table its record count (u64) and its records. The message length travels first, and a body
 * larger than 1 GiB travels in pieces of 1 GiB (MPI counts are int). */
#include "sim/sim.h"

#include <mpi.h>
#include <stdlib.h>
#include <string.h>

#define SIM__PIECE ((size_t)1 << 30)

static void sim__mpi_ok(int rc, const char *what) {
  if (rc != MPI_SUCCESS) SIM_FATAL("MPI failure in %s (code %d)", what, rc);
}

static size_t sim__packed_size(const sim_results *r) {
  const sim_model *m = r->model;
  size_t n = 6 * sizeof(uint64_t);
  for (unsigned s = 0; s < m->nseries; s++) n += sizeof(uint64_t) + r->nbins[s] * m->series[s].ncols * sizeof(int64_t);
  for (unsigned t = 0; t < m->ntables; t++) n += sizeof(uint64_t) + r->nrecords[t] * m->tables[t].record_size;
  return n;
}

static unsigned char *sim__put(unsigned char *p, const void *v, size_t n) {
  if (n) memcpy(p, v, n);
  return p + n;
}

int sim_results_send(const sim_results *r, int dst, int tag) {
  const sim_model *m = r->model;
  size_t len = sim__packed_size(r);
  unsigned char *buf = malloc(len), *p = buf;
  if (!buf) return SIM_ENOMEM;
  uint64_t h[6] = {r->seed, (uint64_t)r->ranks, r->events, r->windows, 0, 0};
  memcpy(&h[4], &r->wall_s, sizeof(double));
  memcpy(&h[5], &r->peak_rss_mib, sizeof(double));
  p = sim__put(p, h, sizeof h);
  for (unsigned s = 0; s < m->nseries; s++) {
    uint64_t nb = r->nbins[s];
    p = sim__put(p, &nb, sizeof nb);
    p = sim__put(p, r->series[s], nb * m->series[s].ncols * sizeof(int64_t));
  }
  for (unsigned t = 0; t < m->ntables; t++) {
    uint64_t nr = r->nrecords[t];
    p = sim__put(p, &nr, sizeof nr);
    p = sim__put(p, r->tables[t], nr * m->tables[t].record_size);
  }
  uint64_t len64 = len;
  sim__mpi_ok(MPI_Send(&len64, 1, MPI_UINT64_T, dst, tag, MPI_COMM_WORLD), "Send");
  for (size_t off = 0; off < len; off += SIM__PIECE) {
    size_t k = len - off < SIM__PIECE ? len - off : SIM__PIECE;
    sim__mpi_ok(MPI_Send(buf + off, (int)k, MPI_BYTE, dst, tag, MPI_COMM_WORLD), "Send");
  }
  free(buf);
  return SIM_OK;
}

/* Reads n bytes at *p if they lie before end; 0 when the message is shorter than it claims. */
static int sim__get(const unsigned char **p, const unsigned char *end, void *v, size_t n) {
  if ((size_t)(end - *p) < n) return 0;
  if (n) memcpy(v, *p, n);
  *p += n;
  return 1;
}

int sim_results_recv(const sim_model *m, int src, int tag, sim_results *r) {
  memset(r, 0, sizeof *r);
  uint64_t len64 = 0;
  sim__mpi_ok(MPI_Recv(&len64, 1, MPI_UINT64_T, src, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE), "Recv");
  size_t len = (size_t)len64;
  unsigned char *buf = malloc(len ? len : 1);
  if (!buf) SIM_FATAL("out of memory");
  for (size_t off = 0; off < len; off += SIM__PIECE) {
    size_t k = len - off < SIM__PIECE ? len - off : SIM__PIECE;
    sim__mpi_ok(MPI_Recv(buf + off, (int)k, MPI_BYTE, src, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE), "Recv");
  }
  const unsigned char *p = buf, *end = buf + len;
  r->model = m;
  r->series = calloc(m->nseries ? m->nseries : 1, sizeof *r->series);
  r->nbins = calloc(m->nseries ? m->nseries : 1, sizeof *r->nbins);
  r->tables = calloc(m->ntables ? m->ntables : 1, sizeof *r->tables);
  r->nrecords = calloc(m->ntables ? m->ntables : 1, sizeof *r->nrecords);
  if (!r->series || !r->nbins || !r->tables || !r->nrecords) SIM_FATAL("out of memory");
  uint64_t h[6];
  int ok = sim__get(&p, end, h, sizeof h);
  if (ok) {
    r->seed = h[0];
    r->ranks = (int)h[1];
    r->events = h[2];
    r->windows = h[3];
    memcpy(&r->wall_s, &h[4], sizeof(double));
    memcpy(&r->peak_rss_mib, &h[5], sizeof(double));
  }
  for (unsigned s = 0; ok && s < m->nseries; s++) {
    uint64_t nb = 0;
    ok = sim__get(&p, end, &nb, sizeof nb) && nb == sim_series_nbins(m, s);
    size_t bytes = ok ? (size_t)nb * m->series[s].ncols * sizeof(int64_t) : 0;
    r->nbins[s] = (size_t)nb;
    r->series[s] = ok ? malloc(bytes ? bytes : 1) : NULL;
    if (ok && !r->series[s]) SIM_FATAL("out of memory");
    ok = ok && sim__get(&p, end, r->series[s], bytes);
  }
  for (unsigned t = 0; ok && t < m->ntables; t++) {
    uint64_t nr = 0;
    ok = sim__get(&p, end, &nr, sizeof nr);
    size_t bytes = ok ? (size_t)nr * m->tables[t].record_size : 0;
    ok = ok && bytes <= (size_t)(end - p);
    r->nrecords[t] = ok ? (size_t)nr : 0;
    r->tables[t] = ok ? malloc(bytes + 1) : NULL;
    if (ok && !r->tables[t]) SIM_FATAL("out of memory");
    ok = ok && sim__get(&p, end, r->tables[t], bytes);
  }
  ok = ok && p == end;
  free(buf);
  /* Both ends run one binary on one model: a mismatch is a bug, not bad input. */
  if (!ok) SIM_FATAL("the results of one replication arrived damaged from rank %d (%zu bytes)", src, len);
  return SIM_OK;
}
