/* test_market_mpi.c - runs a market scenario on the engine over MPI_COMM_WORLD and prints, on
 * rank 0, a digest (FNV-1a) of every series, table and metric. tests/market.cmake runs it on 1, 2
 * and 4 ranks and requires the same digest: the engine's promise of bit-identical results.
 * Usage: test_market_mpi SCENARIO SEED */
#include "models/market/mkt_model.h"

#include <libgen.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t fnv(uint64_t h, const void *p, size_t n) {
  const unsigned char *b = p;
  for (size_t i = 0; i < n; i++) {
    h ^= b[i];
    h *= 0x100000001B3ull;
  }
  return h;
}

int main(int argc, char **argv) {
  int provided, rank;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (argc != 3) {
    if (!rank) fprintf(stderr, "usage: test_market_mpi SCENARIO SEED\n");
    MPI_Finalize();
    return 2;
  }
  sim_diag d;
  sim_diag_init(&d, stderr);
  sim_scenario *s = sim_scenario_load(argv[1], &d);
  mkt_config cfg;
  memset(&cfg, 0, sizeof cfg);
  char *pc = strdup(argv[1]);
  double end = 2 * 86400.0;
  sim_model m;
  if (!s || sim_param_parse(s, "market", mkt_params, &cfg, NULL, &d) || mkt_class.validate(&cfg, s, &d) ||
      mkt_class.build(&cfg, end, dirname(pc), s, &d, &m)) {
    MPI_Finalize();
    return 2;
  }
  m.end_time = end;
  sim_run_opts o = {strtoull(argv[2], NULL, 10), 1, 0, NULL};
  sim_results r;
  if (sim_run(&m, &o, &r)) {
    MPI_Finalize();
    return 1;
  }
  if (rank == 0) {
    uint64_t h = 0xcbf29ce484222325ull;
    for (unsigned i = 0; i < m.nseries; i++) h = fnv(h, r.series[i], r.nbins[i] * m.series[i].ncols * sizeof(int64_t));
    for (unsigned i = 0; i < m.ntables; i++) h = fnv(h, r.tables[i], r.nrecords[i] * m.tables[i].record_size);
    unsigned nm;
    mkt_class.model_metrics(&m, &nm);
    double *met = calloc(nm, sizeof *met);
    mkt_class.compute_metrics(&m, &r, met);
    h = fnv(h, met, nm * sizeof *met);
    char msg[512];
    int bad = mkt_class.check(&m, &r, msg, sizeof msg);
    printf("digest %016llx events %llu ranks %d check %s\n", (unsigned long long)h, (unsigned long long)r.events,
           r.ranks, bad ? msg : "ok");
    /* regions never talk: on no more ranks than regions (times worlds) there is one window */
    printf("windows %llu groups %u\n", (unsigned long long)r.windows, m.ngroups);
    free(met);
    if (bad) { MPI_Abort(MPI_COMM_WORLD, 1); }
  }
  sim_results_free(&r);
  mkt_class.destroy(&m);
  sim_param_free(mkt_params, &cfg);
  sim_scenario_free(s);
  free(pc);
  MPI_Finalize();
  return 0;
}
