/* models.h - registry of model classes known to `spotlab run`. */
#ifndef APP_MODELS_H
#define APP_MODELS_H
#include "sim/model_class.h"
const sim_model_class *app_model_find(const char *name);
size_t app_model_count(void);
const sim_model_class *app_model_at(size_t i);
#endif
