/* fuzz_labjobs.c - the lab's job-file parser (lab_config_load_string) on arbitrary text. */
#include "fuzz/fuzz_util.h"
#include "lab/lab.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *text = fz_string(data, size);
  if (!text) return 0;
  sim_diag d;
  sim_diag_init(&d, NULL);
  lab_config *c = NULL;
  if (lab_config_load_string(text, "fuzz.lab", &d, &c) == 0) lab_config_free(c);
  free(text);
  return 0;
}
