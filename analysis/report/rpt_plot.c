/* rpt_plot.c - gnuplot through a pipe: the palette, the common look and rendering one figure as
 * PNG and SVG. Data travel inline in the script (datablocks `$d << EOD`), so no temporary files
 * are left around. */
#include "analysis/report/rpt_internal.h"

#include <csv.h> /* libcsv: csv_fwrite */

#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>

/* Series styles that stay apart for 1 to 12 series on white, for colour-blind readers too and in
 * greyscale: the eight Okabe-Ito colours (Okabe & Ito 2008, "Color Universal Design"; B. Wong,
 * "Points of view: Color blindness", Nature Methods 8:441, 2011), ordered so that neighbours differ
 * most (yellow, the weakest on white, last), and a dash type per series: series 1-8 cycle solid,
 * dashed, dotted, dash-dot, so two series of similar colour also differ in their line; series 9-12
 * repeat colours 1-4 with a dash-dot-dot line. Points also cycle through four shapes. */
static const char *const rpt__palette[8] = {
    "#0072B2", /* blue */
    "#D55E00", /* vermillion */
    "#009E73", /* bluish green */
    "#CC79A7", /* reddish purple */
    "#E69F00", /* orange */
    "#56B4E9", /* sky blue */
    "#000000", /* black */
    "#F0E442", /* yellow */
};

const char *rpt_colour(unsigned i) { return rpt__palette[(i % 12) % 8]; }
int rpt_dash(unsigned i) { return (i % 12) < 8 ? 1 + (int)(i % 4) : 5; }

/* Text from a results, sweep or experiment file (metric, factor, region, persona, policy names,
 * units, labels) reaches gnuplot only here, as a single-quoted string: inside one gnuplot expands
 * nothing (no `backquote` command, no @macro, no \\ escape). A newline would end the command and
 * let the rest of the text run as the next one, so every control character becomes a space. A
 * quote is written as U+2019 (the typographic apostrophe): gnuplot 5.4's doubled quote fails at
 * the start of a string and right after another doubled quote (it ends the string there), so no
 * quote from a file ever reaches the script. Text is never written into a datablock
 * (`$d << EOD`), whose lines gnuplot reads as they come until a line "EOD": datablocks hold
 * numbers only (issue 49). */
void rpt__gp_str(FILE *g, const char *s) {
  fputc('\'', g);
  for (; *s; s++) {
    unsigned char ch = (unsigned char)*s;
    if (ch == '\'')
      fputs("\xe2\x80\x99", g); /* U+2019 in UTF-8 */
    else
      fputc(ch < 0x20 || ch == 0x7f ? ' ' : ch, g);
  }
  fputc('\'', g);
}

void rpt__gp_set(FILE *g, const char *what, const char *fmt, ...) {
  char buf[2048];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  fprintf(g, "set %s ", what);
  rpt__gp_str(g, buf);
  fputc('\n', g);
}

void rpt__html(FILE *o, const char *s) {
  for (; *s; s++) {
    unsigned char ch = (unsigned char)*s;
    if (ch == '<')
      fputs("&lt;", o);
    else if (ch == '>')
      fputs("&gt;", o);
    else if (ch == '&')
      fputs("&amp;", o);
    else if (ch == '"')
      fputs("&quot;", o);
    else if (ch == '\'')
      fputs("&#39;", o);
    else if (ch < 0x20 || ch == 0x7f)
      fputc(' ', o);
    else
      fputc(ch, o);
  }
}

const char *rpt__html_buf(char *buf, size_t len, const char *s) {
  buf[0] = 0;
  FILE *m = fmemopen(buf, len, "w");
  if (!m) return buf;
  rpt__html(m, s);
  fclose(m); /* fmemopen keeps the buffer NUL-terminated, cut at len - 1 */
  return buf;
}

void rpt__md(FILE *o, const char *s) {
  for (; *s; s++) {
    unsigned char ch = (unsigned char)*s;
    if (ch == '|')
      fputs("\\|", o);
    else if (ch == '`')
      fputc('\'', o);
    else if (ch == '<')
      fputs("&lt;", o);
    else if (ch == '>')
      fputs("&gt;", o);
    else if (ch == '&')
      fputs("&amp;", o);
    else if (ch < 0x20 || ch == 0x7f)
      fputc(' ', o);
    else
      fputc(ch, o);
  }
}

/* A decimal number as a spreadsheet reads one: [+-]digits[.digits][e[+-]digits] (or .digits). */
static int rpt__csv_number(const char *s) {
  s += *s == '+' || *s == '-';
  size_t d = strspn(s, "0123456789");
  s += d;
  if (*s == '.') {
    size_t f = strspn(s + 1, "0123456789");
    d += f;
    s += 1 + f;
  }
  if (!d) return 0;
  if (*s == 'e' || *s == 'E') {
    s += 1 + (s[1] == '+' || s[1] == '-');
    size_t e = strspn(s, "0123456789");
    if (!e) return 0;
    s += e;
  }
  return !*s;
}

void rpt_csv_field(FILE *o, const char *s) {
  size_t n = strlen(s);
  /* Formula injection (OWASP, "CSV Injection", owasp.org/www-community/attacks/CSV_Injection, read
   * 2026-12-07; ASVS 5.0 requirement 1.2.10): a spreadsheet runs a cell that starts with = + - @,
   * a tab or a carriage return as a formula (=HYPERLINK(..), =cmd|..). Such a text cell gets a
   * single quote before it and is quoted, so that it is shown as the text it is; a number such as
   * -0.5 or +1e-3 is left a number. */
  if (n && strchr("=+-@\t\r", s[0]) && !rpt__csv_number(s)) {
    char *q = malloc(n + 2);
    if (q) {
      q[0] = '\'';
      memcpy(q + 1, s, n + 1);
      csv_fwrite(o, q, n + 1);
      free(q);
      return;
    }
  }
  /* RFC 4180: a field with a separator, a quote, a line break or edge spaces is quoted (libcsv's
   * writer doubles the quotes); any other field is written as it is, so plain names read the same */
  if (strpbrk(s, ",\"\r\n") || (n && (s[0] == ' ' || s[n - 1] == ' ')))
    csv_fwrite(o, s, n);
  else
    fputs(s, o);
}

void rpt__term(char *s) {
  for (; *s; s++)
    if ((unsigned char)*s < 0x20 || *s == 0x7f) *s = '?';
}

void rpt__gp_preamble(FILE *g) {
  for (unsigned i = 0; i < 12; i++)
    fprintf(g, "set linetype %u lc rgb '%s' lw 2 dt %d pt %u ps 0.8\n", i + 1, rpt_colour(i), rpt_dash(i),
            5 + 2 * (i % 4));
  fputs("set encoding utf8\nset linetype cycle 12\n"
        "set grid back lc rgb '#dddddd' lw 1\n"
        "set border 3 lc rgb '#444444'\n"
        "set tics nomirror out\n"
        "set key outside right top vertical Left reverse noautotitle samplen 2.5 spacing 1.1\n"
        "set style fill solid 0.85 border -1\n",
        g);
}

const char *rpt__gp_program(const char *opt) {
  if (opt && *opt) return opt;
  const char *e = getenv("SPOTLAB_GNUPLOT");
  if (e && *e) return e;
  return "gnuplot";
}

int rpt_gnuplot_available(const char *program) {
  const char *p = rpt__gp_program(program);
  if (!strcmp(p, "none")) return 0;
  if (strchr(p, '/')) return access(p, X_OK) == 0;
  const char *path = getenv("PATH");
  if (!path) return 0;
  char *dup = strdup(path);
  int found = 0;
  for (char *save = NULL, *d = dup ? strtok_r(dup, ":", &save) : NULL; d && !found; d = strtok_r(NULL, ":", &save)) {
    char full[4096];
    snprintf(full, sizeof full, "%s/%s", *d ? d : ".", p);
    struct stat st;
    found = stat(full, &st) == 0 && S_ISREG(st.st_mode) && access(full, X_OK) == 0;
  }
  free(dup);
  return found;
}

/* 1 when the file gnuplot wrote is whole: a PNG ends with its IEND chunk, an SVG with </svg>.
 * gnuplot exits 0 when a write fails (a full disk), leaving a truncated file behind. */
static int rpt__whole(const char *path, int svg) {
  FILE *f = fopen(path, "rb");
  if (!f) return 0;
  char tail[64] = {0};
  long n = 0;
  if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) > 0) {
    long k = n < (long)sizeof tail - 1 ? n : (long)sizeof tail - 1;
    if (fseek(f, n - k, SEEK_SET) != 0 || fread(tail, 1, (size_t)k, f) != (size_t)k) n = 0;
    tail[k] = 0;
  }
  fclose(f);
  if (n <= 0) return 0;
  if (svg) return strstr(tail, "</svg>") != NULL;
  for (size_t i = 0; i + 4 <= sizeof tail; i++)
    if (!memcmp(tail + i, "IEND", 4)) return 1;
  return 0;
}

int rpt__gp_render(const char *program, const char *dir, const char *name, int height, const char *body, char *err,
                   size_t errlen) {
  char png[4096], svg[4096], cmd[4200];
  snprintf(png, sizeof png, "%s/%s.png", dir, name);
  snprintf(svg, sizeof svg, "%s/%s.svg", dir, name);
  unlink(png);
  unlink(svg);
  /* gnuplot's own complaints go to stderr as they are; the caller names the figure that failed. */
  snprintf(cmd, sizeof cmd, "%s >&2", program);
  /* A gnuplot that dies early (or a PROGRAM that is not gnuplot) must not kill us with SIGPIPE
   * while we write the script: ignore it for the duration, then restore the caller's handler. */
  struct sigaction ign, old;
  memset(&ign, 0, sizeof ign);
  ign.sa_handler = SIG_IGN;
  sigemptyset(&ign.sa_mask);
  sigaction(SIGPIPE, &ign, &old);
  FILE *g = popen(cmd, "w");
  if (!g) {
    sigaction(SIGPIPE, &old, NULL);
    snprintf(err, errlen, "cannot start %s", program);
    return -1;
  }
  /* The same script twice: once per terminal (replot cannot redo a multiplot). */
  for (int pass = 0; pass < 2; pass++) {
    if (pass == 0)
      fprintf(g, "set terminal pngcairo size 1000,%d noenhanced font 'DejaVu Sans,11' background rgb 'white'\n",
              height);
    else
      fprintf(g, "set terminal svg size 1000,%d dynamic noenhanced font 'DejaVu Sans,11' background rgb 'white'\n",
              height);
    fputs("set output ", g);
    rpt__gp_str(g, pass == 0 ? png : svg);
    fputc('\n', g);
    rpt__gp_preamble(g);
    fputs(body, g);
    fputs("\nunset multiplot\nunset output\nreset\n", g);
  }
  int st = pclose(g);
  sigaction(SIGPIPE, &old, NULL);
  if (st == -1 || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
    snprintf(err, errlen, "gnuplot failed on it (its messages are above)");
    unlink(png);
    unlink(svg);
    return -1;
  }
  if (!rpt__whole(png, 0) || !rpt__whole(svg, 1)) { /* gnuplot ran, its files did not get written whole */
    struct statvfs fs;
    double kib = statvfs(dir, &fs) == 0 ? (double)fs.f_bavail * (double)fs.f_frsize / 1024.0 : -1;
    if (kib >= 0)
      snprintf(err, errlen, "writing %s.png and .svg failed: they are incomplete, %.0f KiB left in %s (disk full?)",
               name, kib, dir);
    else
      snprintf(err, errlen, "writing %s.png and .svg failed: they are incomplete", name);
    unlink(png);
    unlink(svg);
    return -2;
  }
  sim_failpoint("report"); /* the fault-injection suite's kill points: after each figure */
  return 0;
}

FILE *rpt__wopen(const char *path, char *tmp, size_t len) {
  int n = snprintf(tmp, len, "%s.tmp", path);
  if (n < 0 || (size_t)n >= len) {
    errno = ENAMETOOLONG;
    return NULL;
  }
  return fopen(tmp, "w");
}

int rpt__wclose(FILE *o, const char *tmp, const char *path) {
  int e = 0, bad = 0;
  if (ferror(o)) { /* an earlier write failed: errno still says why (ENOSPC) */
    bad = 1;
    e = errno ? errno : EIO;
  } else if (fflush(o) != 0) {
    bad = 1;
    e = errno;
  }
  if (fclose(o) != 0 && !bad) {
    bad = 1;
    e = errno;
  }
  if (!bad) sim_failpoint("report"); /* whole, not yet renamed into place */
  if (!bad && rename(tmp, path) != 0) {
    bad = 1;
    e = errno;
  }
  if (bad) {
    unlink(tmp);
    errno = e ? e : EIO;
    return -1;
  }
  return 0;
}

int rpt__list_add(char ***v, size_t *n, const char *fmt, ...) {
  char buf[2048];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  char **nv = realloc(*v, (*n + 1) * sizeof *nv);
  if (!nv) return -1;
  *v = nv;
  if (!(nv[*n] = strdup(buf))) return -1;
  (*n)++;
  return 0;
}
