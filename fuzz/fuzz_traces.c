/* fuzz_traces.c - the CSV loaders on arbitrary bytes, and under them the one CSV reader
 * (sim/csvfile.c on libcsv): the Alibaba pod and GenAI request traces, the GPU table, a kernels
 * calibration file and the churn fits. The first byte picks the loader. */
#include "fuzz/fuzz_util.h"
#include "models/market/mkt.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1) return 0;
  char path[64], err[512];
  int fd = fz_file(data + 1, size - 1, path, sizeof path);
  if (fd < 0) return 0;
  mkt_trace_job *jobs = NULL;
  size_t n = 0;
  mkt_trace_stats st;
  switch (data[0] % 5) {
  case 0: mkt_trace_load_alibaba_pods(path, &jobs, &n, &st, err, sizeof err); break;
  case 1: mkt_trace_load_genai(path, &jobs, &n, &st, err, sizeof err); break;
  case 2: {
    mkt_gpu *g = NULL;
    if (mkt_gpus_load(path, &g, &n, err, sizeof err) == 0) free(g);
    break;
  }
  case 4: {
    churn_dist d;
    churn_fits_load(path, "skype06", "up", CHURN_WEIBULL, &d, err, sizeof err);
    break;
  }
  default: {
    sched_cluster_params cp;
    memset(&cp, 0, sizeof cp);
    mkt_calib_info info;
    mkt_calibration_load(path, &cp, &info, err, sizeof err);
    break;
  }
  }
  free(jobs);
  close(fd);
  return 0;
}
