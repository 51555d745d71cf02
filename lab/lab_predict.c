/* lab_predict.c - `spotlab lab --predict`: the calibration measured with the lab's own workers
 * (spawned, not joined yet: each alone, at each slow fault's duty cycle, then together, so that
 * contention is measured; a run's fixed costs; each command job once), and the prediction: the
 * simulated twin (lab_sim.c) run from that calibration alone, before the real lab runs. The
 * calibration file's format and the contention model are lab_calib.c's. */
#include "lab/lab_runner.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Waits until every worker of set[nset] has answered "C" (what = 0) or ended its calibration
 * command (what = 1). */
static int lab__calib_wait(lab__lab *L, const size_t *set, size_t nset, int what, double timeout) {
  double until = lab__now() + timeout;
  for (;;) {
    size_t k = 0;
    while (k < nset && (what ? L->w[set[k]].c_done : L->w[set[k]].c_got)) k++;
    if (k == nset) return 0;
    if (lab__now() > until || !L->w[set[k]].pid) return LAB_ESYS;
    int rc = lab__pump(L, 20, NULL);
    if (rc) return rc;
  }
}

/* One "C" measurement of kernel kn on the workers set[nset] at once; rates into out[nset]. */
static int lab__calib_measure(lab__lab *L, const size_t *set, size_t nset, const char *kn, double *out) {
  double secs = L->cfg->lab.predict_calibrate;
  for (size_t q = 0; q < nset; q++) L->w[set[q]].c_got = 0;
  for (size_t q = 0; q < nset; q++)
    lab__send(&L->w[set[q]], "C %.17g %s %s/calibration.%zu.tmp", secs, kn, L->outdir, set[q]);
  int rc = lab__calib_wait(L, set, nset, 0, 30 + 10 * secs);
  for (size_t q = 0; q < nset && !rc; q++) out[q] = L->w[set[q]].c_rate > 0 ? L->w[set[q]].c_rate : 1e-6;
  return rc;
}

static int lab__dcmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}
/* The median of v[n] (sorted in place): a burst of the machine's other load in one round does not
 * move it, where it would move a mean. */
static double lab__median(double *v, size_t n) {
  qsort(v, n, sizeof *v, lab__dcmp);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* The calibration, measured with the lab's own workers (spawned, not joined yet): for each kernel
 * the job file uses, each worker alone (and at the duty cycle of each `slow` fault it will get),
 * then workers 0..K-1 at once for K = 2..N, so that contention is measured; `rounds` times,
 * interleaved, each figure the median over the rounds (the machine's other load drifts and comes
 * in bursts). Then one run of each command job on worker 0, alone. */
int lab__calibrate_workers(lab__lab *L, lab_calib *c) {
  const lab_config *cfg = L->cfg;
  size_t set[LAB__MAX_WORKERS], nw = L->nw;
  double got[LAB__MAX_WORKERS];
  unsigned rounds = (unsigned)cfg->lab.predict_rounds;
  int rc = 0;
  c->calibrate_s = cfg->lab.predict_calibrate;
  c->rounds = rounds;
  /* the slowed duty cycles to measure: each (worker, factor) of a slow fault, per kernel */
  c->nslow = 0;
  for (int k = 0; k < KRN_NKERNELS; k++)
    for (size_t f = 0; c->kernel_used[k] && f < L->nfaults; f++) {
      const lab__fault *x = &L->faults[f];
      if (x->action != LAB_FAULT_SLOW) continue;
      size_t q = 0;
      while (q < c->nslow &&
             !(c->slow[q].kernel == k && c->slow[q].worker == x->worker && c->slow[q].factor == x->factor))
        q++;
      if (q == c->nslow && c->nslow < LAB_CALIB_MAX_WORKERS) {
        c->slow[q].kernel = k;
        c->slow[q].worker = x->worker;
        c->slow[q].factor = x->factor;
        c->slow[q].rate = 0;
        c->nslow++;
      }
    }
  /* per round: [kernel][slot] with slot i (alone), nw + K * nw + i (together), then the slowed */
  size_t slots = nw + (nw + 1) * nw + c->nslow + 3;
  double *m = calloc((size_t)rounds * KRN_NKERNELS * slots + 1, sizeof *m), *v = calloc(rounds + 1, sizeof *v);
  if (!m || !v) {
    free(m);
    free(v);
    return LAB_ENOMEM;
  }
#define LAB__M(r, k, slot) m[((size_t)(r)*KRN_NKERNELS + (size_t)(k)) * slots + (slot)]
  L->calibrating = 1;
  for (unsigned r = 0; r < rounds && !rc; r++)
    for (int k = 0; k < KRN_NKERNELS && !rc; k++) {
      if (!c->kernel_used[k]) continue;
      const char *kn = krn_kernel_name((krn_kernel)k);
      for (size_t i = 0; i < nw && !rc; i++) {
        set[0] = i;
        if (!(rc = lab__calib_measure(L, set, 1, kn, got))) LAB__M(r, k, i) = got[0];
      }
      for (size_t q = 0; q < c->nslow && !rc; q++) {
        if (c->slow[q].kernel != k) continue;
        lab__worker *w = &L->w[c->slow[q].worker];
        lab__send(w, "S %.17g", c->slow[q].factor);
        set[0] = (size_t)c->slow[q].worker;
        if (!(rc = lab__calib_measure(L, set, 1, kn, got))) LAB__M(r, k, nw + (nw + 1) * nw + q) = got[0];
        lab__send(w, "S %.17g", w->speed);
      }
      /* a run's fixed costs, on worker 0 alone at full speed (set-up, one checkpoint, the end) */
      set[0] = 0;
      L->w[0].c_got = 0;
      lab__send(&L->w[0], "V %s %d %s/calibration.v.tmp", kn, cfg->lab.verify, L->outdir);
      if (!(rc = lab__calib_wait(L, set, 1, 0, 120)))
        for (int q = 0; q < 3; q++) LAB__M(r, k, slots - 3 + (size_t)q) = L->w[0].c_v[q];
      for (size_t K = 2; K <= nw && !rc; K++) {
        for (size_t i = 0; i < K; i++) set[i] = i;
        if (!(rc = lab__calib_measure(L, set, K, kn, got)))
          for (size_t i = 0; i < K; i++) LAB__M(r, k, nw + K * nw + i) = got[i];
      }
    }
  for (int k = 0; k < KRN_NKERNELS && !rc; k++) {
    if (!c->kernel_used[k]) continue;
    for (size_t slot = 0; slot < slots; slot++) {
      for (unsigned r = 0; r < rounds; r++) v[r] = LAB__M(r, k, slot);
      double med = lab__median(v, rounds);
      if (slot < nw)
        c->alone[k][slot] = med;
      else if (slot < nw + (nw + 1) * nw) {
        size_t K = (slot - nw) / nw, i = (slot - nw) % nw;
        if (K >= 2 && i < K) c->together[k][K - 1][i] = med;
      } else if (slot >= slots - 3) {
        double *dst[3] = {&c->setup_s[k], &c->sync_s[k], &c->finish_s[k]};
        *dst[slot - (slots - 3)] = med;
      } else if (c->slow[slot - nw - (nw + 1) * nw].kernel == k)
        c->slow[slot - nw - (nw + 1) * nw].rate = med;
    }
  }
#undef LAB__M
  free(m);
  free(v);
  for (size_t j = 0; j < cfg->njobs && !rc; j++) {
    if (cfg->jobs[j].kernel[0]) continue;
    lab__worker *w = &L->w[0];
    w->c_done = 0;
    double t0 = lab__now();
    lab__send(w, "X %zu 0 %s", j, cfg->jobs[j].command);
    set[0] = 0;
    rc = lab__calib_wait(L, set, 1, 1, cfg->lab.time_limit);
    c->cmd_s[j] = w->c_end - t0;
    c->cmd_exit[j] = w->c_status;
  }
  L->calibrating = 0;
  return rc;
}

/* The score a worker joins the core with under --predict, in the real lab and in its twin alike:
 * its work units / s alone, the mean over the kernels calibrated (1 with none). */
double lab__calib_score(const lab_calib *c, size_t i) {
  double sum = 0;
  int n = 0;
  for (int k = 0; k < KRN_NKERNELS; k++)
    if (c->kernel_used[k] && c->alone[k][i] > 0 && c->chunk_s[k] > 0) {
      sum += c->alone[k][i] * c->chunk_s[k];
      n++;
    }
  return n ? sum / n : 1.0;
}

/* The prediction: the twin (lab_sim.c) run from the calibration alone. */
int lab__predict(lab__lab *L) {
  const lab_config *cfg = L->cfg;
  const lab_calib *c = L->calib;
  size_t nw = L->nw, nj = cfg->njobs;
  int rc = LAB_ENOMEM;
  double *rate = calloc(nw * nj + 1, sizeof *rate), *setup = calloc(nj + 1, sizeof *setup);
  double *fin = calloc(nj + 1, sizeof *fin), *sync = calloc(nj + 1, sizeof *sync);
  int *failed = calloc(nj + 1, sizeof *failed);
  double *slow = calloc(L->nfaults * KRN_NKERNELS + 1, sizeof *slow);
  L->rep->pred = calloc(nj + 1, sizeof *L->rep->pred);
  if (!rate || !setup || !fin || !sync || !failed || !slow || !L->rep->pred) goto out;
  /* a slow fault's measured effect, relative to the worker alone at its own duty cycle */
  for (size_t f = 0; f < L->nfaults; f++)
    for (size_t q = 0; L->faults[f].action == LAB_FAULT_SLOW && q < c->nslow; q++)
      if (c->slow[q].worker == L->faults[f].worker && c->slow[q].factor == L->faults[f].factor &&
          c->alone[c->slow[q].kernel][c->slow[q].worker] > 0)
        slow[f * KRN_NKERNELS + (size_t)c->slow[q].kernel] =
            c->slow[q].rate / c->alone[c->slow[q].kernel][c->slow[q].worker];
  for (size_t j = 0; j < nj; j++) {
    krn_kernel k;
    if (cfg->jobs[j].kernel[0] && krn_kernel_parse(cfg->jobs[j].kernel, &k) == 0) {
      for (size_t i = 0; i < nw; i++) rate[i * nj + j] = c->alone[k][i] * L->wpc[j];
      setup[j] = c->setup_s[k];
      fin[j] = c->finish_s[k];
      sync[j] = c->sync_s[k];
    } else {
      failed[j] = c->cmd_exit[j] != 0;
    }
  }
  sched_cluster_params cp;
  memset(&cp, 0, sizeof cp);
  cp.ncoloc = c->ncoloc;
  memcpy(cp.coloc, c->coloc, c->ncoloc * sizeof cp.coloc[0]);
  int host[LAB__MAX_WORKERS];
  for (size_t i = 0; i < nw && i < LAB__MAX_WORKERS; i++) host[i] = L->w[i].rank; /* this run's hosts */
  lab__twin_in in = {L->calib_score, rate, L->nchunks,         c->cmd_s, failed, setup, fin,
                     sync,           &cp,  cfg->lab.calibrate, slow,     L->svc, host};
  rc = lab__simulate(cfg, &in, L->rep->pred, &L->rep->pred_makespan, &L->rep->pred_losses);
out:
  free(rate);
  free(setup);
  free(fin);
  free(sync);
  free(failed);
  free(slow);
  return rc;
}
