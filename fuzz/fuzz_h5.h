/* fuzz_h5.h - for the fuzz targets that read results files: an input that starts with a results
 * file's user block (sim/h5mem.h) has its size and CRC written anew, so that mutations reach the
 * HDF5 reader instead of stopping at the integrity check. Header only. */
#ifndef SPOTLAB_FUZZ_H5_H
#define SPOTLAB_FUZZ_H5_H

#include "sim/h5mem.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The input to read: a resealed copy in *copy (the caller frees it) when data has the user block's
 * magic and memory allows, else data itself (*copy NULL). */
static inline const uint8_t *fz_reseal(const uint8_t *data, size_t size, uint8_t **copy) {
  *copy = NULL;
  size_t ml = sizeof SIM_H5MEM_MAGIC - 1;
  if (size <= SIM_H5MEM_USERBLOCK || memcmp(data, SIM_H5MEM_MAGIC, ml) || !(*copy = malloc(size))) return data;
  memcpy(*copy, data, size);
  memset(*copy, 0, SIM_H5MEM_USERBLOCK);
  snprintf((char *)*copy, SIM_H5MEM_USERBLOCK, SIM_H5MEM_MAGIC "%lld %08lx\n", (long long)size,
           (unsigned long)sim_h5mem_crc(*copy + SIM_H5MEM_USERBLOCK, size - SIM_H5MEM_USERBLOCK, 0));
  return *copy;
}

#endif
