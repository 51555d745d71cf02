/* csvfile.c - see csvfile.h. libcsv does the parsing; this file feeds it the file one line end at a
 * time, which is how it knows the line each row starts on (libcsv counts no lines) and where a
 * comment line begins, and it holds the row libcsv hands over field by field until the row ends.
 *
 * Feeding in pieces that each end at a CR or LF (or at the end of the read buffer) means one call
 * of csv_parse completes at most one row: libcsv ends a row only at an unquoted CR or LF, and a
 * row is handed out before the next piece is fed. A CR right before an LF ends the row; the LF
 * then falls in libcsv's "row not begun" state, where it is ignored. */
#include "sim/csvfile.h"

#include <csv.h> /* libcsv (Debian libcsv-dev) */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define SIM__CSV_BUF 65536

struct sim_csv {
  FILE *fp;
  char *path;
  char what[64];          /* what the file is, for messages */
  unsigned flags;         /* SIM_CSV_* */
  struct csv_parser p;    /* libcsv's state */
  char buf[SIM__CSV_BUF]; /* bytes read and not yet fed */
  size_t blen, bpos;      /* buf[bpos..blen) is still to feed */
  int eof, finished;      /* fread hit the end; csv_fini was called */
  int started;            /* the first bytes were read (and a byte-order mark skipped) */
  long line;              /* the line the next byte fed belongs to */
  int at_bol;             /* the next byte fed begins a line */
  int cr_pending;         /* the last piece ended in CR: an LF next belongs to the same line end */
  int in_comment;         /* dropping a comment line up to its line end */
  long row_start;         /* the line the row being parsed started on; 0 = no row begun */
  /* the row being built (and, once ready, handed out) */
  char *arena; /* its fields, each NUL-terminated */
  size_t alen, acap;
  size_t *off; /* where each field starts in arena */
  size_t nf, fcap;
  const char **ptrs; /* the fields as pointers, for the row handed out */
  long row_line;     /* the line of the ready row */
  int ready;         /* a row is complete */
  int cb_err;        /* a callback found a problem (code), with its message in cb_msg */
  char cb_msg[160];
  char **hdr; /* the header's fields */
  size_t nhdr;
};

/* No byte is a space to libcsv: fields are kept as they are (RFC 4180: spaces are part of a field). */
static int sim__csv_nospace(unsigned char c) {
  (void)c;
  return 0;
}

static void sim__csv_field(void *s, size_t len, void *data) {
  sim_csv *c = data;
  if (c->cb_err) return;
  if (memchr(s, '\0', len)) {
    c->cb_err = SPOTLAB_EFORMAT;
    snprintf(c->cb_msg, sizeof c->cb_msg, "field %zu holds a NUL byte (not a text file?)", c->nf + 1);
    return;
  }
  if (c->nf == SIM_CSV_FIELDS_MAX) {
    c->cb_err = SPOTLAB_EFORMAT;
    snprintf(c->cb_msg, sizeof c->cb_msg, "more than %d fields in a row", SIM_CSV_FIELDS_MAX);
    return;
  }
  if (c->nf == c->fcap) {
    size_t nc = c->fcap ? 2 * c->fcap : 16;
    size_t *no = realloc(c->off, nc * sizeof *no);
    if (!no) {
      c->cb_err = SPOTLAB_ENOMEM;
      return;
    }
    c->off = no;
    c->fcap = nc;
  }
  if (c->alen + len + 1 > c->acap) {
    size_t nc = c->acap ? c->acap : 1024;
    while (nc < c->alen + len + 1) nc *= 2;
    char *na = realloc(c->arena, nc);
    if (!na) {
      c->cb_err = SPOTLAB_ENOMEM;
      return;
    }
    c->arena = na;
    c->acap = nc;
  }
  c->off[c->nf++] = c->alen;
  if (len) memcpy(c->arena + c->alen, s, len);
  c->alen += len;
  c->arena[c->alen++] = '\0';
}

static void sim__csv_row(int term, void *data) {
  (void)term;
  sim_csv *c = data;
  c->ready = 1;
  c->row_line = c->row_start ? c->row_start : c->line;
  c->row_start = 0;
}

static int sim__csv_pull(sim_csv *c, char *err, size_t errlen);
static int sim__csv_keep_header(sim_csv *c, char *err, size_t errlen);

int sim_csv_open(sim_csv **out, const char *path, unsigned flags, const char *what, char *err, size_t errlen) {
  *out = NULL;
  what = what && *what ? what : "CSV file";
  struct stat sb;
  /* stat first: opening a FIFO for reading would wait for a writer */
  if (stat(path, &sb) == 0 && !S_ISREG(sb.st_mode))
    return spotlab_errf(err, errlen, SPOTLAB_EFORMAT, "%s: %s, not a %s", path,
                        S_ISDIR(sb.st_mode) ? "is a directory" : "is not a regular file", what);
  FILE *fp = fopen(path, "rb");
  if (!fp) return spotlab_errf(err, errlen, SPOTLAB_EIO, "%s: cannot open the %s: %s", path, what, strerror(errno));
  sim_csv *c = calloc(1, sizeof *c);
  if (!c || !(c->path = strdup(path))) {
    free(c);
    fclose(fp);
    return spotlab_errf(err, errlen, SPOTLAB_ENOMEM, "%s: out of memory", path);
  }
  c->fp = fp;
  snprintf(c->what, sizeof c->what, "%s", what);
  c->flags = flags;
  c->line = 1;
  c->at_bol = 1;
  csv_init(&c->p, CSV_STRICT | CSV_STRICT_FINI);
  csv_set_space_func(&c->p, sim__csv_nospace);
  csv_set_blk_size(&c->p, 4096); /* libcsv grows a field's buffer by this much at a time */
  if (flags & SIM_CSV_HEADER) {  /* read now, so that columns can be looked up before the first row */
    int rc = sim__csv_pull(c, err, errlen);
    if (rc == 1) rc = sim__csv_keep_header(c, err, errlen);
    if (rc < 0) {
      sim_csv_close(c);
      return rc;
    }
  }
  *out = c;
  return 0;
}

void sim_csv_close(sim_csv *c) {
  if (!c) return;
  csv_free(&c->p);
  if (c->fp) fclose(c->fp);
  for (size_t i = 0; i < c->nhdr; i++) free(c->hdr[i]);
  free(c->hdr);
  free(c->arena);
  free(c->off);
  free(c->ptrs);
  free(c->path);
  free(c);
}

const char *sim_csv_path(const sim_csv *c) { return c->path; }

size_t sim_csv_header(const sim_csv *c, const char *const **names) {
  if (names) *names = (const char *const *)c->hdr;
  return c->nhdr;
}

int sim_csv_column(const sim_csv *c, const char *name) {
  for (size_t i = 0; i < c->nhdr; i++)
    if (!strcmp(c->hdr[i], name)) return (int)i;
  return -1;
}

int sim_csv_columns(const sim_csv *c, const sim_csv_col *cols, size_t n, size_t *idx, size_t *need) {
  int byname = n > 0;
  for (size_t k = 0; k < n && byname; k++) byname = sim_csv_column(c, cols[k].name) >= 0;
  size_t most = 0;
  for (size_t k = 0; k < n; k++) {
    idx[k] = byname ? (size_t)sim_csv_column(c, cols[k].name) : cols[k].pos;
    if (idx[k] + 1 > most) most = idx[k] + 1;
  }
  if (need) *need = most;
  return byname;
}

int sim_csv_num(const char *s, double *v) {
  char *end;
  errno = 0;
  *v = strtod(s, &end);
  if (end == s || errno || !isfinite(*v)) return -1;
  while (*end == ' ' || *end == '\t') end++;
  return *end ? -1 : 0;
}

/* Reads more of the file into buf; 0, or SPOTLAB_EIO with a message. */
static int sim__csv_fill(sim_csv *c, char *err, size_t errlen) {
  c->bpos = 0;
  c->blen = fread(c->buf, 1, sizeof c->buf, c->fp);
  if (c->blen < sizeof c->buf) {
    if (ferror(c->fp))
      return spotlab_errf(err, errlen, SPOTLAB_EIO, "%s: read error: %s", c->path, strerror(errno ? errno : EIO));
    c->eof = 1;
  }
  if (!c->started) {
    c->started = 1;
    if (c->blen >= 3 && !memcmp(c->buf, "\xEF\xBB\xBF", 3)) c->bpos = 3; /* UTF-8 byte-order mark */
  }
  return 0;
}

/* A row is blank when it is one field of nothing but spaces and tabs. */
static int sim__csv_blank(const sim_csv *c) {
  if (c->nf != 1) return 0;
  const char *s = c->arena + c->off[0];
  return s[strspn(s, " \t")] == '\0';
}

/* Parses up to the next row that is not blank: 1 with its fields in arena/off (c->nf of them, line
 * c->row_line), 0 at the end of the file, or a negative code with a message. */
static int sim__csv_pull(sim_csv *c, char *err, size_t errlen) {
  c->nf = 0; /* the row handed out last is dropped */
  c->alen = 0;
  for (;;) {
    if (c->ready) { /* libcsv completed a row */
      c->ready = 0;
      if (c->nf > 0 && !sim__csv_blank(c)) return 1;
      c->nf = 0;
      c->alen = 0;
      continue;
    }
    if (c->finished) return 0;
    if (c->bpos == c->blen) {
      if (!c->eof) {
        int rc = sim__csv_fill(c, err, errlen);
        if (rc) return rc;
      }
      if (c->bpos == c->blen && c->eof) { /* the end: a last row without a line end */
        c->finished = 1;
        if (csv_fini(&c->p, sim__csv_field, sim__csv_row, c) != 0)
          return spotlab_errf(err, errlen, SPOTLAB_EFORMAT,
                              "%s:%ld: a quoted field is not closed by the end of the file (the row starts here)",
                              c->path, c->row_start ? c->row_start : c->line);
        if (c->cb_err) goto cb_failed;
        continue;
      }
    }
    /* the next piece: up to and including the next CR or LF, or to the end of the buffer */
    const char *s = c->buf + c->bpos;
    size_t avail = c->blen - c->bpos, len = 0;
    while (len < avail && s[len] != '\n' && s[len] != '\r') len++;
    int ends = len < avail; /* the piece ends a line (s[len] is CR or LF) */
    if (ends) len++;
    if (c->cr_pending) { /* a CR ended the last piece: it was a line end of its own unless LF follows */
      c->cr_pending = 0;
      if (s[0] != '\n') c->line++;
    }
    if (c->at_bol && c->row_start == 0 && (c->flags & SIM_CSV_COMMENTS) && s[0] == '#') c->in_comment = 1;
    c->bpos += len;
    c->at_bol = ends;
    if (c->in_comment) { /* dropped, line end included */
      if (ends) {
        c->in_comment = 0;
        if (s[len - 1] == '\n')
          c->line++;
        else
          c->cr_pending = 1;
      }
      continue;
    }
    if (c->row_start == 0 && len > (size_t)ends) c->row_start = c->line; /* the piece begins a row */
    size_t used = csv_parse(&c->p, s, len, sim__csv_field, sim__csv_row, c);
    if (c->cb_err) goto cb_failed;
    if (used != len) {
      if (csv_error(&c->p) == CSV_EPARSE)
        return spotlab_errf(err, errlen, SPOTLAB_EFORMAT,
                            "%s:%ld: malformed quoting: a '\"' inside a field that does not start with one, or text "
                            "after a closing '\"' (a field with a quote is quoted whole, its quotes doubled)",
                            c->path, c->line);
      return spotlab_errf(err, errlen, SPOTLAB_ENOMEM, "%s:%ld: out of memory (%s)", c->path, c->line,
                          csv_strerror(csv_error(&c->p)));
    }
    if (csv_get_buffer_size(&c->p) > SIM_CSV_FIELD_MAX + 256)
      return spotlab_errf(err, errlen, SPOTLAB_EFORMAT, "%s:%ld: a field longer than %u bytes (a quote not closed?)",
                          c->path, c->row_start ? c->row_start : c->line, SIM_CSV_FIELD_MAX);
    if (ends) {
      if (s[len - 1] == '\n')
        c->line++;
      else
        c->cr_pending = 1;
    }
  }
cb_failed:
  if (c->cb_err == SPOTLAB_ENOMEM) return spotlab_errf(err, errlen, SPOTLAB_ENOMEM, "%s: out of memory", c->path);
  return spotlab_errf(err, errlen, c->cb_err, "%s:%ld: %s", c->path,
                      c->ready       ? c->row_line
                      : c->row_start ? c->row_start
                                     : c->line,
                      c->cb_msg);
}

static int sim__csv_keep_header(sim_csv *c, char *err, size_t errlen) {
  if (!(c->hdr = calloc(c->nf, sizeof *c->hdr)))
    return spotlab_errf(err, errlen, SPOTLAB_ENOMEM, "%s: out of memory", c->path);
  for (; c->nhdr < c->nf; c->nhdr++)
    if (!(c->hdr[c->nhdr] = strdup(c->arena + c->off[c->nhdr])))
      return spotlab_errf(err, errlen, SPOTLAB_ENOMEM, "%s: out of memory", c->path);
  return 0;
}

int sim_csv_next(sim_csv *c, sim_csv_row *row, char *err, size_t errlen) {
  int rc = sim__csv_pull(c, err, errlen);
  if (rc <= 0) return rc;
  const char **np = realloc(c->ptrs, c->nf * sizeof *np);
  if (!np) return spotlab_errf(err, errlen, SPOTLAB_ENOMEM, "%s: out of memory", c->path);
  c->ptrs = np;
  for (size_t i = 0; i < c->nf; i++) np[i] = c->arena + c->off[i];
  row->f = np;
  row->n = c->nf;
  row->line = c->row_line;
  return 1;
}
