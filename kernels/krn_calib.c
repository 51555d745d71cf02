/* krn_calib.c - the calibration file the simulator's cluster model reads:
 * data/calibration/<device-slug>.csv with header `key,value,unit,device,note`. Written to
 * PATH.tmp and renamed, so a file with the final name is always whole. */
#include "kernels/krn_internal.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

void krn_slug(const char *text, char *out, size_t outlen) {
  size_t o = 0;
  int dash = 0;
  if (!outlen) return;
  for (const char *p = text ? text : ""; *p && o + 1 < outlen; p++) {
    unsigned char ch = (unsigned char)*p;
    if (isalnum(ch)) {
      if (dash && o > 0 && o + 2 < outlen) out[o++] = '-';
      out[o++] = (char)tolower(ch);
      dash = 0;
    } else {
      dash = 1;
    }
  }
  out[o] = '\0';
  if (o == 0) snprintf(out, outlen, "unknown");
}

/* CSV field: quoted (with doubled quotes) when it holds a comma, quote or newline (RFC 4180). */
static void krn__csv_field(FILE *f, const char *s) {
  if (!s) s = "";
  if (!strpbrk(s, ",\"\n\r")) {
    fputs(s, f);
    return;
  }
  fputc('"', f);
  for (; *s; s++) {
    if (*s == '"') fputc('"', f);
    fputc(*s == '\n' || *s == '\r' ? ' ' : *s, f);
  }
  fputc('"', f);
}

/* mkdir -p of the directory part of path */
static int krn__mkdirs(const char *path) {
  char buf[4096];
  if (strlen(path) >= sizeof buf) return KRN_EINVAL;
  strcpy(buf, path);
  char *slash = strrchr(buf, '/');
  if (!slash) return 0;
  *slash = '\0';
  for (char *p = buf + 1; *p; p++) {
    if (*p != '/') continue;
    *p = '\0';
    if (mkdir(buf, 0777) && errno != EEXIST) return KRN_EIO;
    *p = '/';
  }
  if (buf[0] && mkdir(buf, 0777) && errno != EEXIST) return KRN_EIO;
  return 0;
}

int krn_calib_write(const char *path, const char *device, const krn_calib_row *rows, size_t n) {
  if (!path || !rows) return KRN_EINVAL;
  if (krn__mkdirs(path)) return KRN_EIO;
  size_t len = strlen(path) + 8;
  char *tmp = malloc(len);
  if (!tmp) return KRN_ENOMEM;
  snprintf(tmp, len, "%s.tmp", path);
  FILE *f = fopen(tmp, "w");
  if (!f) {
    free(tmp);
    return KRN_EIO;
  }
  fputs("key,value,unit,device,note\n", f);
  for (size_t i = 0; i < n; i++) {
    if (!isfinite(rows[i].value)) continue; /* not measured on this machine: no row */
    krn__csv_field(f, rows[i].key);
    fprintf(f, ",%.6g,", rows[i].value);
    krn__csv_field(f, rows[i].unit);
    fputc(',', f);
    krn__csv_field(f, device);
    fputc(',', f);
    krn__csv_field(f, rows[i].note);
    fputc('\n', f);
  }
  int bad = ferror(f);
  if (fclose(f) || bad || rename(tmp, path)) {
    remove(tmp);
    free(tmp);
    return KRN_EIO;
  }
  free(tmp);
  return 0;
}
