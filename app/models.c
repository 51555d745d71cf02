/* models.c - the models `spotlab run` knows, by the name a scenario gives in `model = "..."`. */
#include "app/models.h"

#include <string.h>

extern const sim_model_class phold_class;
extern const sim_model_class mkt_class;

static const sim_model_class *const app__models[] = {
    &phold_class,
    &mkt_class,
};

const sim_model_class *app_model_find(const char *name) {
  for (size_t i = 0; i < sizeof app__models / sizeof app__models[0]; i++)
    if (name && !strcmp(app__models[i]->name, name)) return app__models[i];
  return NULL;
}

size_t app_model_count(void) { return sizeof app__models / sizeof app__models[0]; }
const sim_model_class *app_model_at(size_t i) { return app__models[i]; }
