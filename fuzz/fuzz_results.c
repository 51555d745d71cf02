/* fuzz_results.c - the results reader (analysis/report: rpt_open and what `report` and `compare`
 * read) on arbitrary bytes given as an HDF5 file: a damaged file must give an error, not a crash.
 * Bugs inside the HDF5 library itself are out of our reach; they are reported as such.
 * Files spotlab writes carry a checksum that the reader checks first (sim/h5mem.h), so a mutated
 * copy of one would only ever reach that check: when an input has a checksum block, its checksum is
 * recomputed for the bytes as mutated, every other input goes to the reader as it is, so both the
 * check and the HDF5 reading behind it are fuzzed (the size and the CRC are fuzzed by the inputs
 * left unchanged: one in 2^5 of those with the block). */
#include "analysis/report/rpt.h"
#include "models/market/mkt_names.h"
#include "fuzz/fuzz_util.h"
#include "fuzz/fuzz_h5.h"

#include <hdf5.h>

/* Identifiers of every kind the library hands out (files, groups, datasets, attributes, types,
 * dataspaces, property lists), to check that the reader closes each it opened. */
static hsize_t ids_open(void) {
  const H5I_type_t kinds[] = {H5I_FILE, H5I_GROUP, H5I_DATATYPE, H5I_DATASPACE, H5I_DATASET, H5I_ATTR, H5I_GENPROP_LST};
  hsize_t total = 0;
  for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
    hsize_t n = 0;
    if (H5Inmembers(kinds[i], &n) >= 0) total += n;
  }
  return total;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static int quiet;
  if (!quiet) {
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    quiet = 1;
  }
  char path[64], err[512];
  uint8_t *copy = NULL;
  if (size && (data[size - 1] & 31) != 0) data = fz_reseal(data, size, &copy); /* else: the check itself */
  int wrote = fz_named_file(data, size, path, sizeof path);
  free(copy);
  if (wrote) return 0;
  hsize_t before = ids_open();
  rpt_file *f = NULL;
  int rc = rpt_open(path, &f, err, sizeof err);
  if (rc && getenv("FUZZ_DEBUG")) fprintf(stderr, "rpt_open: %s\n", err);
  if (rc == 0 && f) {
    unsigned nm = rpt_nmetrics(f);
    for (unsigned k = 0; k < nm && k < 8; k++) {
      rpt_ci ci;
      (void)rpt_metric_name(f, k);
      (void)rpt_summary_stored(f, k, &ci);
    }
    if (rpt_file_kind(f) == RPT_RESULTS && rpt_nreps(f) > 0) {
      rpt_series s;
      if (rpt_series_read(f, 0, MKT_SERIES_LEDGER, &s) == 0) rpt_series_free(&s);
      double *v = NULL;
      size_t n = 0;
      if (rpt_table_num(f, 0, MKT_TABLE_JOBS, "cost_usd", &v, &n) == 0) free(v);
    }
    rpt_close(f);
  }
  /* every HDF5 identifier the reader opened is closed again, on every path */
  hsize_t after = ids_open();
  if (after != before) {
    fprintf(stderr, "fuzz_results: %llu HDF5 identifiers left open (rpt_open %d)\n",
            (unsigned long long)(after - before), rc);
    abort();
  }
  return 0;
}
