/* csvfile.h - the one CSV reader of spotlab: every data file it reads (the GPU table, the churn
 * fits, the traces, kernels calibration files) goes through it. Parsing is libcsv's (RFC 4180:
 * fields in double quotes may hold commas, line breaks and "" for a quote; CRLF, LF or CR line
 * ends); this layer adds what the loaders need around it: a UTF-8 byte-order mark skipped, '#'
 * comment lines and blank lines skipped, the line each row starts on, the header row and lookup of
 * columns by name, and errors as "FILE:LINE: what is wrong".
 *
 * Fields are kept byte for byte (no spaces trimmed, unlike libcsv's default). Quoting is strict: a
 * quote inside an unquoted field, text after a closing quote, and a quoted field still open at the
 * end of the file are errors at their line. A field may not hold a NUL byte or be longer than
 * SIM_CSV_FIELD_MAX; a row may not have more than SIM_CSV_FIELDS_MAX fields.
 *
 *   sim_csv *c;
 *   if ((rc = sim_csv_open(&c, path, SIM_CSV_COMMENTS | SIM_CSV_HEADER, "GPU table", err, len))) return rc;
 *   sim_csv_row r;
 *   while ((rc = sim_csv_next(c, &r, err, len)) > 0) { ... r.f[0] .. r.f[r.n - 1], r.line ... }
 *   sim_csv_close(c);   // rc: 0 at the end of the file, or a negative code with a message
 */
#ifndef SIM_CSVFILE_H
#define SIM_CSVFILE_H

#include <stddef.h>

#include "sim/errors.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SIM_CSV_FIELD_MAX (1u << 20) /* bytes in one field */
#define SIM_CSV_FIELDS_MAX 4096      /* fields in one row */

enum {
  SIM_CSV_COMMENTS = 1, /* a line that starts with '#' outside a quoted field is a comment */
  SIM_CSV_HEADER = 2    /* the first row is the header: not returned, its names found by sim_csv_column */
};

typedef struct sim_csv sim_csv; /* an open CSV file; opaque */

typedef struct sim_csv_row {
  const char *const *f; /* n fields, NUL-terminated; valid until the next sim_csv_next or close */
  size_t n;             /* at least 1 */
  long line;            /* the line of the file the row starts on (1 = the first) */
} sim_csv_row;

/* Opens `path`, a regular file, for reading. `what` names the file in messages ("trace file": "F:
 * is a directory, not a trace file"). Returns 0, or SPOTLAB_EIO (cannot open: "F: cannot open the
 * WHAT: reason"), SPOTLAB_EFORMAT (a directory or another kind of file), SPOTLAB_ENOMEM, with a
 * message in err. With SIM_CSV_HEADER the header row is read here (a malformed one is an error
 * here), so its columns can be looked up at once; a file without rows has an empty header. */
int sim_csv_open(sim_csv **out, const char *path, unsigned flags, const char *what, char *err, size_t errlen);
/* Reads the next row: 1 and *row, 0 at the end of the file, or a negative code with a message
 * (SPOTLAB_EFORMAT "F:LINE: ...", SPOTLAB_EIO "F: read error: ...", SPOTLAB_ENOMEM). Rows that are
 * blank (one field of nothing but spaces and tabs) are skipped, so are comments with
 * SIM_CSV_COMMENTS. */
int sim_csv_next(sim_csv *c, sim_csv_row *row, char *err, size_t errlen);
void sim_csv_close(sim_csv *c);

const char *sim_csv_path(const sim_csv *c);
/* The header's fields (SIM_CSV_HEADER; none without it, or in a file without rows). */
size_t sim_csv_header(const sim_csv *c, const char *const **names);
/* The position of the header's column `name`, or -1. */
int sim_csv_column(const sim_csv *c, const char *name);

/* A column a loader reads: its header name and its position in the documented layout. */
typedef struct sim_csv_col {
  const char *name;
  size_t pos;
} sim_csv_col;
/* Where n columns are: by name when the header names every one of them (a file with its columns
 * reordered, or with the leading index column pandas writes), else at their documented positions
 * (a header that names them otherwise). Fills idx[n]; returns 1 (by name) or 0 (by position).
 * *need (when not NULL) is the fields a row must have: the largest position + 1. */
int sim_csv_columns(const sim_csv *c, const sim_csv_col *cols, size_t n, size_t *idx, size_t *need);

/* A whole field as a finite number (strtod; spaces or tabs around it allowed): 0, or -1 when it
 * is empty, has other text, overflows or underflows, or is infinite or NaN. */
int sim_csv_num(const char *s, double *v);

#ifdef __cplusplus
}
#endif
#endif
