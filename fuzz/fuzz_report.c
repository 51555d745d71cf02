/* fuzz_report.c - `spotlab report` (and `compare`) on arbitrary bytes given as a results, sweep or
 * experiment file, through the figure code, the tables and index.html (issue 49.1: a results
 * file once ran commands through the figures' gnuplot scripts). Checked on every input, beyond
 * "no crash":
 *  - every gnuplot script is ours: each line outside a datablock starts with `set`, `unset`,
 *    `plot`, a datablock's header `$NAME << EOD`, or a plot's continuation, and holds an even
 *    number of single quotes (a text from the file never closes its string); every datablock line
 *    is numbers (NaN, ?, "k/n" labels), never text from the file;
 *  - index.html holds only the report's own tags (a name such as <svg/onload=1> is escaped);
 *  - summary.csv and compare.csv: every record has the header's number of fields.
 * The checksum of an input that has one is recomputed as in fuzz_results.c. Figures are not
 * rendered (rpt_options.script takes the scripts), so no gnuplot runs. */
#include "analysis/report/rpt.h"
#include "fuzz/fuzz_util.h"
#include "fuzz/fuzz_h5.h"
#include "tests/csv_records.h"

#include <dirent.h>
#include <hdf5.h>
#include <sys/stat.h>

static int fz_starts(const char *s, const char *p) { return !strncmp(s, p, strlen(p)); }

/* One datablock line: numbers only. */
static int fz_numeric_line(const char *s, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (!strchr("0123456789.eE+-naNifIF ?/\"", s[i])) return 0;
  return 1;
}

static void fz_check_script(void *ctx, const char *name, const char *body) {
  (void)ctx;
  int in_block = 0;
  for (const char *s = body; *s;) {
    size_t n = strcspn(s, "\n");
    if (in_block) {
      if (n == 3 && !strncmp(s, "EOD", 3))
        in_block = 0;
      else if (!fz_numeric_line(s, n)) {
        fprintf(stderr, "fuzz_report: figure %s: a datablock line that is not numbers: %.*s\n", name, (int)n, s);
        abort();
      }
    } else if (n) {
      int ok = fz_starts(s, "set ") || fz_starts(s, "unset ") || fz_starts(s, "plot ") || fz_starts(s, "     $") ||
               (s[0] == '$' && n > 7 && !strncmp(s + n - 7, " << EOD", 7));
      size_t q = 0;
      for (size_t i = 0; i < n; i++) q += s[i] == '\'';
      if (!ok || q % 2) {
        fprintf(stderr, "fuzz_report: figure %s: a script line that is not the report's own: %.*s\n", name, (int)n, s);
        abort();
      }
      if (s[0] == '$') in_block = 1;
    }
    s += n + (s[n] == '\n');
  }
  if (in_block) {
    fprintf(stderr, "fuzz_report: figure %s: a datablock without its EOD\n", name);
    abort();
  }
}

static char *fz_slurp(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  char *b = NULL;
  size_t n = 0;
  FILE *m = open_memstream(&b, &n);
  int ch;
  while (m && (ch = fgetc(f)) != EOF) fputc(ch, m);
  if (m) fclose(m);
  fclose(f);
  return b;
}

/* The tags index.html may hold: the report's own. */
static void fz_check_html(const char *path) {
  static const char *const tags[] = {"!DOCTYPE", "html", "head",       "meta", "title", "style", "body", "h1", "h2",
                                     "h3",       "p",    "table",      "tr",   "th",    "td",    "ul",   "li", "a",
                                     "figure",   "img",  "figcaption", "code", "sup",   "div",   "span", NULL};
  char *h = fz_slurp(path);
  if (!h) return;
  for (const char *s = strchr(h, '<'); s; s = strchr(s + 1, '<')) {
    const char *t = s + 1 + (s[1] == '/');
    size_t n = strcspn(t, " >");
    int ok = 0;
    for (size_t i = 0; tags[i] && !ok; i++) ok = strlen(tags[i]) == n && !strncmp(t, tags[i], n);
    if (!ok) {
      fprintf(stderr, "fuzz_report: %s: a tag that is not the report's: %.40s\n", path, s);
      abort();
    }
  }
  free(h);
}

/* Every RFC 4180 record of a CSV file has as many fields as its header (tests/csv_records.h, the
 * oracle of tests/test_report.c too). */
static void fz_check_csv(const char *path) {
  char *c = fz_slurp(path);
  if (!c) return;
  int rec = 0, fields = 0;
  if (csv_records(c, -1, &rec, &fields) < 0) {
    fprintf(stderr, "fuzz_report: %s: record %d has %d fields, not as many as the header\n", path, rec, fields);
    abort();
  }
  free(c);
}

static void fz_clear(const char *dir) {
  DIR *d = opendir(dir);
  if (!d) return;
  struct dirent *e;
  char p[512];
  while ((e = readdir(d)))
    if (e->d_name[0] != '.') {
      snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
      unlink(p);
    }
  closedir(d);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static int quiet;
  static FILE *devnull;
  if (!quiet) {
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    devnull = fopen("/dev/null", "w");
    quiet = 1;
  }
  char path[64], dir[96], err[RPT_ERRLEN], p[160];
  uint8_t *copy;
  data = fz_reseal(data, size, &copy);
  int wrote = fz_named_file(data, size, path, sizeof path);
  free(copy);
  if (wrote) return 0;
  snprintf(dir, sizeof dir, "/dev/shm/spotlab-fuzz-report-%d", (int)getpid());
  mkdir(dir, 0700);
  fz_clear(dir);
  rpt_options opt = {dir, "none", 1, devnull, 4, fz_check_script, NULL};
  rpt_outcome o;
  int rc = rpt_report(path, &opt, &o, err, sizeof err);
  if (rc && getenv("FUZZ_DEBUG")) fprintf(stderr, "rpt_report: %s\n", err);
  if (!rc) {
    rpt_outcome_free(&o);
    snprintf(p, sizeof p, "%s/index.html", dir);
    fz_check_html(p);
    snprintf(p, sizeof p, "%s/summary.csv", dir);
    fz_check_csv(p);
    /* a results file against itself: compare's tables and figure */
    rpt_file *f = NULL;
    if (rpt_open(path, &f, err, sizeof err) == 0) {
      int results = rpt_file_kind(f) == RPT_RESULTS;
      rpt_close(f);
      rpt_diff *d = NULL;
      size_t nd;
      int seeds;
      if (results && rpt_compare(path, path, &opt, devnull, &d, &nd, &seeds, err, sizeof err) == 0) {
        snprintf(p, sizeof p, "%s/compare.csv", dir);
        fz_check_csv(p);
      }
      free(d);
    }
  }
  fz_clear(dir);
  return 0;
}
