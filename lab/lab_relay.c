/* lab_relay.c - what a rank other than 0 does in a lab over several hosts (MPI): it runs its own
 * workers (blocks of workers per rank, lab_run.c), relays their lines to rank 0 (MPI tag = the
 * worker's id; one byte 1 = the worker's pipe closed), writes rank 0's messages into their pipes
 * and carries out its control messages (SPAWN, SIG, BURY, QUIT). No scheduling happens here. */
#include "lab/lab_runner.h"

#include <errno.h>
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* Runs until rank 0 says QUIT; its workers are buried then. */
int lab__relay(lab__lab *L) {
  struct pollfd *pf = L->pf;
  size_t *idx = L->idx;
  for (;;) {
    nfds_t np = lab__pollset(L);
    int n = poll(pf, np, 2);
    for (nfds_t k = 0; n > 0 && k < np; k++) {
      if (!pf[k].revents) continue;
      lab__worker *w = &L->w[idx[k]];
      ssize_t r = read(w->from, w->buf + w->blen, sizeof w->buf - 1 - w->blen);
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0) {
        char eof = 1;
        lab__bury(w);
        MPI_Send(&eof, 1, MPI_CHAR, 0, w->gid, MPI_COMM_WORLD);
        continue;
      }
      w->blen += (size_t)r;
      char *start = w->buf, *nl;
      while ((nl = memchr(start, '\n', w->blen - (size_t)(start - w->buf)))) {
        MPI_Send(start, (int)(nl - start + 1), MPI_CHAR, 0, w->gid, MPI_COMM_WORLD);
        start = nl + 1;
      }
      w->blen -= (size_t)(start - w->buf);
      memmove(w->buf, start, w->blen);
      if (w->blen == sizeof w->buf - 1) w->blen = 0;
    }
    for (;;) {
      int flag = 0;
      MPI_Status st;
      MPI_Iprobe(0, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st);
      if (!flag) break;
      int len;
      MPI_Get_count(&st, MPI_CHAR, &len);
      char buf[LAB__LINE + 64];
      if (len < 0 || len >= (int)sizeof buf) len = (int)sizeof buf - 1;
      MPI_Recv(buf, (int)sizeof buf - 1, MPI_CHAR, 0, st.MPI_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      buf[len] = 0;
      if (st.MPI_TAG != LAB__CTRL_TAG) {
        if (st.MPI_TAG >= 0 && (size_t)st.MPI_TAG < L->nw) {
          lab__worker *w = &L->w[st.MPI_TAG];
          if (w->pid > 0) {
            ssize_t rc;
            do rc = write(w->to, buf, (size_t)len);
            while (rc < 0 && errno == EINTR);
          }
        }
        continue;
      }
      int g = -1, sig = 0;
      long pg = 0;
      double speed = 1;
      if (!strncmp(buf, "QUIT", 4)) {
        for (size_t i = 0; i < L->nw; i++)
          if (!L->w[i].remote) lab__bury(&L->w[i]);
        return 0;
      } else if (sscanf(buf, "SPAWN %d %lg", &g, &speed) == 2 && g >= 0 && (size_t)g < L->nw && !L->w[g].remote) {
        L->w[g].speed = speed;
        if (L->w[g].pid > 0) lab__bury(&L->w[g]);
        if (lab__spawn_into(L, &L->w[g], (size_t)g) != 0) {
          char eof = 1;
          MPI_Send(&eof, 1, MPI_CHAR, 0, g, MPI_COMM_WORLD);
        }
      } else if (sscanf(buf, "SIG %d %d %ld", &g, &sig, &pg) == 3 && g >= 0 && (size_t)g < L->nw && !L->w[g].remote &&
                 L->w[g].pid > 0) {
        if (pg > 0) kill(-(pid_t)pg, sig);
        kill(L->w[g].pid, sig);
      } else if (sscanf(buf, "BURY %d", &g) == 1 && g >= 0 && (size_t)g < L->nw && !L->w[g].remote) {
        lab__bury(&L->w[g]);
      }
    }
  }
}
