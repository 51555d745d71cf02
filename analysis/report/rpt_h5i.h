/* rpt_h5i.h - the HDF5 helpers of rpt_h5.c, shared with the other file formats the report library
 * reads and writes (rpt_exp.c: experiment files); not part of its API. */
#ifndef RPT_H5I_H
#define RPT_H5I_H

#include "analysis/report/rpt.h"

#include <hdf5.h>

/* The open file's HDF5 handle. */
hid_t rpt__file_h5(rpt_file *f);
/* Records "PATH: message" as f's error and returns code. */
int rpt__fail(rpt_file *f, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* 1 when n items of w bytes cannot be data of the file that holds obj (a damaged size). */
int rpt__implausible(hid_t obj, uint64_t n, uint64_t w);
/* Readers: a scalar string attribute, a numeric one, an array of `want` strings, a string dataset
 * of `want` entries; 0 or -1. */
int rpt__attr_str(hid_t obj, const char *name, char *buf, size_t len);
int rpt__attr_num(hid_t obj, const char *name, hid_t mtype, void *v);
int rpt__attr_strs(hid_t obj, const char *name, size_t want, char ***out);
int rpt__r_strs_dset(hid_t g, const char *name, size_t want, char ***out);
void rpt__free_strs(char **v, size_t n);
/* Writers: scalar attributes, n strings as an attribute or (as_dset) a dataset, doubles. */
int rpt__w_attr_str(hid_t obj, const char *name, const char *v);
int rpt__w_attr_num(hid_t obj, const char *name, hid_t type, const void *v);
int rpt__w_strs(hid_t loc, const char *name, char *const *v, size_t n, int as_dset);
int rpt__w_doubles(hid_t loc, const char *name, int rank, const hsize_t *dims, const double *v);

#endif
