/* test_csv.c - the one CSV reader (sim/csvfile.h, on libcsv): quoting as spreadsheets and pandas
 * write it, line ends, a byte-order mark, comments and blank lines, the line each row starts on,
 * header lookup, and every malformed input an error at its line. */
#include "sim/csvfile.h"
#include "tests/testutil.h"

#include <CUnit/CUnit.h>
#include <errno.h>
#include <math.h>
#include <sys/stat.h>
#include <unistd.h>

#define TMP "test_csv_tmp.csv"

/* The rows of a file, flattened as "LINE:f1|f2|...\n" (a field's line breaks shown as \n), so a
 * test states the whole expected reading in one string. rc: what the last sim_csv_next returned. */
static char *rows_of(const char *text, size_t textlen, unsigned flags, int *rc, char *err, size_t errlen) {
  FILE *f = fopen(TMP, "wb");
  fwrite(text, 1, textlen, f);
  fclose(f);
  sim_csv *c;
  err[0] = 0;
  *rc = sim_csv_open(&c, TMP, flags, "test file", err, errlen);
  if (*rc) return NULL;
  size_t cap = 1 << 16, len = 0;
  char *out = calloc(1, cap);
  sim_csv_row r;
  while ((*rc = sim_csv_next(c, &r, err, errlen)) > 0) {
    len += (size_t)snprintf(out + len, cap - len, "%ld:", r.line);
    for (size_t i = 0; i < r.n; i++) {
      for (const char *p = r.f[i]; *p && len + 4 < cap; p++) {
        if (*p == '\n') {
          out[len++] = '\\';
          out[len++] = 'n';
        } else if (*p == '\r') {
          out[len++] = '\\';
          out[len++] = 'r';
        } else
          out[len++] = *p;
      }
      if (i + 1 < r.n) out[len++] = '|';
    }
    out[len++] = '\n';
  }
  out[len] = 0;
  sim_csv_close(c);
  return out;
}
#define ROWS(text, flags, rc, err) rows_of(text, sizeof text - 1, flags, rc, err, sizeof err)

/* RFC 4180 quoting: commas, quotes ("") and line breaks inside quotes; the row's line is where it
 * starts and the lines after it keep counting; spaces are kept; empty fields and a trailing comma. */
static void test_quoting(void) {
  char err[512];
  int rc;
  char *s = ROWS("a,\"b, with comma\",\"say \"\"hi\"\"\"\n"
                 "\"two\nlines\",x\n"
                 " sp ,\"\", \n"
                 "last,\"\"\"\"\n",
                 0, &rc, err);
  CU_ASSERT_EQUAL(rc, 0);
  CU_ASSERT_STRING_EQUAL(s, "1:a|b, with comma|say \"hi\"\n"
                            "2:two\\nlines|x\n"
                            "4: sp || \n"
                            "5:last|\"\n");
  free(s);
  /* a last row without a line end; a quoted empty field */
  s = ROWS("a,b\n\"\",c", 0, &rc, err);
  CU_ASSERT_EQUAL(rc, 0);
  CU_ASSERT_STRING_EQUAL(s, "1:a|b\n2:|c\n");
  free(s);
}

/* CRLF, LF and lone CR line ends read the same rows on the same lines; a CR or CRLF inside quotes
 * is text. */
static void test_line_ends(void) {
  char err[512];
  int rc;
  const char *want = "1:a|b\n2:c|d\n4:e|f\n";
  char *s = ROWS("a,b\r\nc,d\r\n\r\ne,f\r\n", 0, &rc, err);
  CU_ASSERT_STRING_EQUAL(s, want);
  free(s);
  s = ROWS("a,b\rc,d\r\re,f\r", 0, &rc, err);
  CU_ASSERT_STRING_EQUAL(s, want);
  free(s);
  s = ROWS("a,b\nc,d\n\ne,f", 0, &rc, err);
  CU_ASSERT_STRING_EQUAL(s, want);
  free(s);
  s = ROWS("\"x\r\ny\",z\r\nnext,1\r\n", 0, &rc, err);
  CU_ASSERT_EQUAL(rc, 0);
  CU_ASSERT_STRING_EQUAL(s, "1:x\\r\\ny|z\n3:next|1\n");
  free(s);
}

/* A UTF-8 byte-order mark (as Excel writes "CSV UTF-8") is not part of the first field, so the
 * header's first name is found; '#' comments (not inside quotes) and blank lines are skipped. */
static void test_bom_comments_header(void) {
  char err[512];
  int rc;
  char *s = ROWS("\xEF\xBB\xBF# a comment, with \"a quote\n"
                 "name,value\n"
                 "   \n"
                 "# another\r\n"
                 "x,\"1\n# not a comment\"\n"
                 "\t\n"
                 "y,2\n",
                 SIM_CSV_COMMENTS | SIM_CSV_HEADER, &rc, err);
  CU_ASSERT_EQUAL(rc, 0);
  CU_ASSERT_STRING_EQUAL(s, "5:x|1\\n# not a comment\n8:y|2\n");
  free(s);
  /* without SIM_CSV_COMMENTS a '#' line is a row */
  s = ROWS("#x,1\n", 0, &rc, err);
  CU_ASSERT_STRING_EQUAL(s, "1:#x|1\n");
  free(s);
  /* the header: lookup by name, after a BOM, on a CRLF file */
  tu_write(TMP, "\xEF\xBB\xBF"
                "trace,phase,p1\r\nt,up,1\r\n");
  sim_csv *c;
  CU_ASSERT_EQUAL_FATAL(sim_csv_open(&c, TMP, SIM_CSV_HEADER, "test file", err, sizeof err), 0);
  const char *const *h;
  CU_ASSERT_EQUAL(sim_csv_header(c, &h), 3);
  CU_ASSERT_STRING_EQUAL(h[0], "trace");
  CU_ASSERT_EQUAL(sim_csv_column(c, "trace"), 0);
  CU_ASSERT_EQUAL(sim_csv_column(c, "p1"), 2);
  CU_ASSERT_EQUAL(sim_csv_column(c, "p2"), -1);
  /* columns by name when the header has them all, else at their documented positions */
  sim_csv_col want[] = {{"p1", 0}, {"trace", 1}};
  size_t idx[2], need;
  CU_ASSERT_EQUAL(sim_csv_columns(c, want, 2, idx, &need), 1);
  CU_ASSERT(idx[0] == 2 && idx[1] == 0 && need == 3);
  sim_csv_col other[] = {{"p1", 4}, {"nosuch", 1}};
  CU_ASSERT_EQUAL(sim_csv_columns(c, other, 2, idx, &need), 0);
  CU_ASSERT(idx[0] == 4 && idx[1] == 1 && need == 5);
  sim_csv_row r;
  CU_ASSERT_EQUAL(sim_csv_next(c, &r, err, sizeof err), 1);
  CU_ASSERT(r.n == 3 && r.line == 2 && !strcmp(r.f[2], "1"));
  CU_ASSERT_EQUAL(sim_csv_next(c, &r, err, sizeof err), 0);
  sim_csv_close(c);
}

/* Empty, header-only and comment-only files have no rows (and are no error here: the loaders say
 * "no rows"); ragged rows come back with their own field counts. */
static void test_empty_and_ragged(void) {
  char err[512];
  int rc;
  char *s = ROWS("", SIM_CSV_HEADER, &rc, err);
  CU_ASSERT(rc == 0 && s && !*s);
  free(s);
  sim_csv *c;
  tu_write(TMP, "a,b,c\n");
  CU_ASSERT_EQUAL_FATAL(sim_csv_open(&c, TMP, SIM_CSV_HEADER, "test file", err, sizeof err), 0);
  CU_ASSERT_EQUAL(sim_csv_header(c, NULL), 3);
  sim_csv_row r;
  CU_ASSERT_EQUAL(sim_csv_next(c, &r, err, sizeof err), 0);
  sim_csv_close(c);
  tu_write(TMP, "");
  CU_ASSERT_EQUAL_FATAL(sim_csv_open(&c, TMP, SIM_CSV_HEADER, "test file", err, sizeof err), 0);
  CU_ASSERT_EQUAL(sim_csv_header(c, NULL), 0);
  CU_ASSERT_EQUAL(sim_csv_column(c, "a"), -1);
  sim_csv_close(c);
  s = ROWS("# only\n# comments\n\n", SIM_CSV_COMMENTS | SIM_CSV_HEADER, &rc, err);
  CU_ASSERT(rc == 0 && s && !*s);
  free(s);
  s = ROWS("h1,h2,h3\n1\n1,2,3,4,5\n,\n1,2,3\n", SIM_CSV_HEADER, &rc, err);
  CU_ASSERT_EQUAL(rc, 0);
  CU_ASSERT_STRING_EQUAL(s, "2:1\n3:1|2|3|4|5\n4:|\n5:1|2|3\n");
  free(s);
}

/* Bad input is an error naming the file and line: malformed quoting, a quote never closed, a NUL
 * byte, a directory, a missing file, a field too long. */
static void test_errors(void) {
  char err[512];
  int rc;
  char *s = ROWS("a,b\nc,d\"e\n", 0, &rc, err);
  CU_ASSERT_EQUAL(rc, SPOTLAB_EFORMAT);
  CU_ASSERT_PTR_NOT_NULL(strstr(err, TMP ":2: malformed quoting"));
  free(s);
  s = ROWS("a,\"b\"c\n", 0, &rc, err);
  CU_ASSERT_EQUAL(rc, SPOTLAB_EFORMAT);
  CU_ASSERT_PTR_NOT_NULL(strstr(err, TMP ":1: malformed quoting"));
  free(s);
  s = ROWS("a,b\nc,\"open\nmore\nlines\n", 0, &rc, err);
  CU_ASSERT_EQUAL(rc, SPOTLAB_EFORMAT);
  CU_ASSERT_PTR_NOT_NULL(strstr(err, TMP ":2: a quoted field is not closed by the end of the file"));
  free(s);
  s = ROWS("a,b\nc,d\0e\n", 0, &rc, err);
  CU_ASSERT_EQUAL(rc, SPOTLAB_EFORMAT);
  CU_ASSERT_PTR_NOT_NULL(strstr(err, TMP ":2: field 2 holds a NUL byte"));
  free(s);
  /* a header that is malformed fails at open */
  tu_write(TMP, "a,b\"\n");
  sim_csv *c = NULL;
  CU_ASSERT_EQUAL(sim_csv_open(&c, TMP, SIM_CSV_HEADER, "test file", err, sizeof err), SPOTLAB_EFORMAT);
  CU_ASSERT_PTR_NULL(c);
  CU_ASSERT_PTR_NOT_NULL(strstr(err, TMP ":1: malformed quoting"));
  /* a directory, a device, a file that is not there */
  mkdir("test_csv_dir", 0755);
  CU_ASSERT_EQUAL(sim_csv_open(&c, "test_csv_dir", 0, "trace file", err, sizeof err), SPOTLAB_EFORMAT);
  CU_ASSERT_STRING_EQUAL(err, "test_csv_dir: is a directory, not a trace file");
  rmdir("test_csv_dir");
  CU_ASSERT_EQUAL(sim_csv_open(&c, "/dev/null", 0, "GPU table", err, sizeof err), SPOTLAB_EFORMAT);
  CU_ASSERT_STRING_EQUAL(err, "/dev/null: is not a regular file, not a GPU table");
  CU_ASSERT_EQUAL(sim_csv_open(&c, "no/such.csv", 0, "GPU table", err, sizeof err), SPOTLAB_EIO);
  CU_ASSERT_PTR_NOT_NULL(strstr(err, "no/such.csv: cannot open the GPU table: "));
  /* a field longer than SIM_CSV_FIELD_MAX (a quote left open in a big file) */
  size_t big = SIM_CSV_FIELD_MAX + 10000;
  char *text = malloc(big + 16);
  memcpy(text, "a\n\"", 3);
  memset(text + 3, 'x', big);
  s = rows_of(text, big + 3, 0, &rc, err, sizeof err);
  CU_ASSERT_EQUAL(rc, SPOTLAB_EFORMAT);
  CU_ASSERT_PTR_NOT_NULL(strstr(err, TMP ":2: a field longer than"));
  free(s);
  free(text);
  unlink(TMP);
}

/* Rows and fields across the reader's 64 KiB buffer keep their lines and bytes: 20,000 rows of
 * a quoted field with a comma and a line break, and one 200 kB field. */
static void test_long_files(void) {
  FILE *f = fopen(TMP, "wb");
  CU_ASSERT_FATAL(f != NULL);
  fputs("id,text\r\n", f);
  for (int i = 0; i < 20000; i++) fprintf(f, "%d,\"row %d, part\nnext\"\r\n", i, i);
  fputs("big,", f);
  for (int i = 0; i < 200000; i++) fputc('a' + i % 26, f);
  fputs("\r\nend,1\r\n", f);
  fclose(f);
  char err[512];
  sim_csv *c;
  CU_ASSERT_EQUAL_FATAL(sim_csv_open(&c, TMP, SIM_CSV_HEADER, "test file", err, sizeof err), 0);
  sim_csv_row r;
  int i = 0, bad = 0;
  for (; i < 20000 && sim_csv_next(c, &r, err, sizeof err) == 1; i++) {
    char want[64];
    snprintf(want, sizeof want, "row %d, part\nnext", i);
    if (r.n != 2 || atoi(r.f[0]) != i || strcmp(r.f[1], want) || r.line != 2 + 2L * i) bad++;
  }
  CU_ASSERT_EQUAL(i, 20000);
  CU_ASSERT_EQUAL(bad, 0);
  CU_ASSERT_EQUAL_FATAL(sim_csv_next(c, &r, err, sizeof err), 1);
  CU_ASSERT_EQUAL(strlen(r.f[1]), 200000);
  CU_ASSERT_EQUAL(r.f[1][199999], 'a' + 199999 % 26);
  CU_ASSERT_EQUAL(r.line, 40002);
  CU_ASSERT_EQUAL_FATAL(sim_csv_next(c, &r, err, sizeof err), 1);
  CU_ASSERT(r.line == 40003 && !strcmp(r.f[0], "end"));
  CU_ASSERT_EQUAL(sim_csv_next(c, &r, err, sizeof err), 0);
  sim_csv_close(c);
  unlink(TMP);
}

/* Numbers: the whole field, finite, spaces around allowed. */
static void test_numbers(void) {
  double v;
  CU_ASSERT(sim_csv_num("25.6", &v) == 0 && v == 25.6);
  CU_ASSERT(sim_csv_num(" 1e3 ", &v) == 0 && v == 1000);
  CU_ASSERT(sim_csv_num("-0.5", &v) == 0 && v == -0.5);
  const char *bad[] = {"", " ", "abc", "1.5x", "1,5", "nan", "inf", "1e999", "0x", "\"1\""};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) CU_ASSERT_EQUAL(sim_csv_num(bad[i], &v), -1);
}

static CU_TestInfo csv_tests[] = {
    {"quoted fields, commas, quotes and line breaks inside", test_quoting},
    {"CRLF, LF and CR line ends", test_line_ends},
    {"byte-order mark, comments, blank lines, header lookup", test_bom_comments_header},
    {"empty, header-only and ragged files", test_empty_and_ragged},
    {"malformed input is an error at its line", test_errors},
    {"rows and fields across the read buffer", test_long_files},
    {"numbers", test_numbers},
    CU_TEST_INFO_NULL,
};

CU_SuiteInfo spotlab_suites[] = {
    {"csv", NULL, NULL, NULL, NULL, csv_tests},
    CU_SUITE_INFO_NULL,
};
