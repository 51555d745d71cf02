/* fuzz_scenario.c - the scenario parser (libconfig through sim/param.c) and the market's key
 * tables and cross-field checks, on arbitrary text: every input ends in a result or in errors, no
 * crash, no leak, no undefined behaviour. */
#include "fuzz/fuzz_util.h"
#include "models/market/mkt_model.h"
#include "sim/param.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *text = fz_string(data, size);
  if (!text) return 0;
  sim_diag d;
  sim_diag_init(&d, NULL);
  sim_scenario *s = sim_scenario_load_string(text, "fuzz.cfg", &d);
  if (s) {
    mkt_config cfg;
    memset(&cfg, 0, sizeof cfg);
    if (sim_param_parse(s, "market", mkt_params, &cfg, NULL, &d) == 0) mkt_class.validate(&cfg, s, &d);
    sim_param_free(mkt_params, &cfg);
    (void)sim_scenario_string(s, "model");
    sim_scenario_free(s);
  }
  free(text);
  return 0;
}
