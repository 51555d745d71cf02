/* lab_journal.c - the lab's journal as a file: created with its header, records appended and
 * synced, read back for a resume. It knows the records' syntax, not what they mean: a resume
 * hands each whole record to the runner's glue (lab__on_record, lab_glue.c), which replays it
 * into a fresh core.
 *
 * Journal (append-only text, one record a line, fdatasync'd after every event that changed the
 * core's state, i.e. any event but a heartbeat or a tick that produced no decision):
 *   # spotlab-lab-journal 1 NJOBS NWORKERS HASH   (HASH: FNV-1a of the job file's text)
 *   N JOB NCHUNKS                       the chunking of a kernel job (fixed once, at first start)
 *   S JOB CHUNK_S                       a service's chunk time (fixed once: its requests' sizes)
 *   E TYPE T GPU JOB RUN VALUE          one event handed to the core (JOIN: VALUE = score;
 *                                       ARRIVE: the spec is rebuilt from the job file)
 *   X JOB EXIT SIGNAL TAIL              why a run failed (before its FAIL event)
 *   Q JOB REQ T / q JOB REQ             a service's request served at T / lost
 *   R T                                 the runner resumed here */
#include "lab/lab_runner.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* FNV-1a 64 of the job file's text: a journal belongs to one job file. */
static unsigned long long lab__hash(const char *t) {
  unsigned long long h = 0xcbf29ce484222325ULL;
  for (; t && *t; t++) h = (h ^ (unsigned char)*t) * 0x100000001b3ULL;
  return h;
}

int lab__journal_outdir(const char *journal, char *outdir, size_t len) {
  snprintf(outdir, len, "%s.d", journal);
  if (mkdir(outdir, 0777) != 0 && errno != EEXIST) {
    fprintf(stderr, "spotlab lab: cannot create %s: %s\n", outdir, strerror(errno));
    return LAB_EIO;
  }
  return 0;
}

int lab__journal_create(lab__journal *j, const lab_config *cfg, size_t nworkers) {
  int fd = open(j->path, O_WRONLY | O_CREAT | O_EXCL | O_APPEND, 0644);
  if (fd < 0) {
    fprintf(stderr, "spotlab lab: cannot create journal %s: %s%s\n", j->path, strerror(errno),
            errno == EEXIST ? " (continue it with --resume, or remove it)" : "");
    return LAB_EIO;
  }
  j->f = fdopen(fd, "a");
  if (!j->f) {
    close(fd);
    return LAB_ENOMEM;
  }
  lab__journal_put(j, "# spotlab-lab-journal 1 %zu %zu %016llx\n", cfg->njobs, nworkers, lab__hash(cfg->text));
  return 0;
}

void lab__journal_put(lab__journal *j, const char *fmt, ...) {
  if (!j->f) return;
  va_list ap;
  va_start(ap, fmt);
  vfprintf(j->f, fmt, ap);
  va_end(ap);
}

int lab__journal_sync(lab__journal *j) {
  if (!j->f) return 0;
  if (fflush(j->f) == 0 && fdatasync(fileno(j->f)) == 0) return 0;
  /* said once, with the reason: the lab stops here, its journal whole up to the last record */
  if (!j->failed)
    fprintf(stderr, "spotlab lab: writing the journal %s failed: %s\n", j->path, strerror(errno ? errno : EIO));
  j->failed = 1;
  return LAB_EIO;
}

int lab__journal_close(lab__journal *j) {
  if (!j->f) return 0;
  /* the last records (a failure's X, a served request's Q) are durable only once synced */
  int rc = lab__journal_sync(j);
  fclose(j->f);
  j->f = NULL;
  return rc;
}

/* One record's syntax (its meaning is the glue's): 0, or 1 when it is not a record. */
static int lab__record_parse(const lab_config *cfg, char *line, lab__record *r) {
  size_t nj = cfg->njobs;
  int pos = 0;
  r->kind = line[0];
  switch (line[0]) {
  case 'E':
    return sscanf(line, "E %d %lg %u %u %u %lg", &r->type, &r->t, &r->gpu, &r->job, &r->run, &r->value) == 6 ? 0 : 1;
  case 'N':
    return sscanf(line, "N %ld %zu", &r->ljob, &r->nchunks) == 2 && r->ljob >= 0 && (size_t)r->ljob < nj &&
                   r->nchunks > 0
               ? 0
               : 1;
  case 'X':
    if (sscanf(line, "X %ld %d %ld %n", &r->ljob, &r->status, &r->sig, &pos) < 3 || r->ljob < 0 ||
        (size_t)r->ljob >= nj)
      return 1;
    r->tail = pos ? line + pos : "";
    return 0;
  case 'S': return sscanf(line, "S %ld %lg", &r->ljob, &r->value) == 2 && r->ljob >= 0 && (size_t)r->ljob < nj ? 0 : 1;
  case 'Q':
  case 'q':
    return sscanf(line + 1, " %ld %u %lg", &r->ljob, &r->run, &r->value) >= 2 && r->ljob >= 0 && (size_t)r->ljob < nj
               ? 0
               : 1;
  case 'R':
  case '#': r->kind = 0; return 0; /* nothing to replay */
  default: return 1;
  }
}

/* The whole journal, so that a record is judged by its bytes: only the last one may be torn (no
 * newline: dropped, with a warning); a NUL byte or an over-long record anywhere before is damage,
 * an error naming the line, and the file is left as it is. */
static int lab__journal_read(FILE *f, const char *path, char **buf, long *size) {
  *buf = NULL;
  *size = -1;
  if (fseek(f, 0, SEEK_END) == 0) *size = ftell(f);
  if (*size < 0 || fseek(f, 0, SEEK_SET) != 0 || !(*buf = malloc((size_t)*size + 1)) ||
      fread(*buf, 1, (size_t)*size, f) != (size_t)*size) {
    fprintf(stderr, "spotlab lab: cannot read journal %s: %s\n", path, strerror(errno ? errno : EIO));
    free(*buf);
    return LAB_EIO;
  }
  return 0;
}

/* Hands every record after the header to fn, in order; stops at the first error. On success the
 * torn tail (if any) is cut off and j->f is open for appending after the last whole record. */
int lab__journal_replay(lab__journal *j, const lab_config *cfg, size_t nworkers, lab__record_fn fn, void *ctx) {
  const char *path = j->path;
  FILE *f = fopen(path, "r+");
  if (!f) {
    fprintf(stderr, "spotlab lab: cannot open journal %s: %s\n", path, strerror(errno));
    return LAB_EIO;
  }
  char *buf;
  long size;
  if (lab__journal_read(f, path, &buf, &size)) {
    fclose(f);
    return LAB_EIO;
  }
  char line[LAB__LINE * 2];
  long good_end = 0;
  int lineno = 0, rc = 0;
  for (long off = 0; off < size && !rc;) {
    const char *rec = buf + off, *nl = memchr(rec, '\n', (size_t)(size - off));
    if (!nl) { /* a torn last record */
      fprintf(stderr, "%s:%d: warning: the last record is torn (%ld bytes, no newline): dropped\n", path, lineno + 1,
              size - off);
      break;
    }
    size_t len = (size_t)(nl - rec);
    lineno++;
    if (memchr(rec, '\0', len) || len >= sizeof line) {
      fprintf(stderr, "%s:%d: damaged journal record (%s); the journal is left unchanged\n", path, lineno,
              len >= sizeof line ? "too long" : "a NUL byte");
      rc = LAB_EJOURNAL;
      break;
    }
    memcpy(line, rec, len);
    line[len] = 0;
    off += (long)len + 1;
    lab__record r;
    memset(&r, 0, sizeof r);
    unsigned long nj = 0, nwk = 0;
    unsigned long long hash = 0;
    if (lineno == 1) {
      if (sscanf(line, "# spotlab-lab-journal 1 %lu %lu %llx", &nj, &nwk, &hash) != 3 || nj != cfg->njobs ||
          nwk != nworkers || hash != lab__hash(cfg->text)) {
        fprintf(stderr, "%s:1: not a journal of job file %s (as it is now)\n", path, cfg->path);
        rc = LAB_EJOURNAL;
      }
    } else if (lab__record_parse(cfg, line, &r) != 0) {
      fprintf(stderr, "%s:%d: unreadable journal record\n", path, lineno);
      rc = LAB_EJOURNAL;
    } else if (r.kind && (rc = fn(ctx, &r)) != 0) {
      if (rc == LAB__REC_UNREADABLE || rc == LAB__REC_REJECTED)
        fprintf(stderr, "%s:%d: %s\n", path, lineno,
                rc == LAB__REC_REJECTED ? "the core rejects this record" : "unreadable journal record");
      if (rc == LAB__REC_UNREADABLE || rc == LAB__REC_REJECTED) rc = LAB_EJOURNAL;
    }
    if (!rc) good_end = off;
  }
  free(buf);
  if (!rc && lineno == 0) {
    fprintf(stderr, "%s: empty journal\n", path);
    rc = LAB_EJOURNAL;
  }
  /* Drop a torn tail, then append after the last whole record. */
  if (!rc && (ftruncate(fileno(f), good_end) != 0 || fseek(f, good_end, SEEK_SET) != 0)) rc = LAB_EIO;
  if (rc) {
    fclose(f);
    return rc;
  }
  j->f = f;
  return 0;
}
