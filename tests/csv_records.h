/* csv_records.h - the CSV oracle shared by tests/test_report.c and fuzz/fuzz_report.c (one copy:
 * the two had their own loops): the RFC 4180 records of a text, each with as many fields as
 * expected. A field in double quotes may hold commas, line breaks and doubled quotes; a record ends
 * at a line break outside quotes. Header-only, so that the fuzz build needs no test library. */
#ifndef SPOTLAB_TESTS_CSV_RECORDS_H
#define SPOTLAB_TESTS_CSV_RECORDS_H

/* The number of records of s (the header among them) when each has `want` fields (want < 0: as
 * many as the first record), else -1 with *rec the first record that has another number (counted
 * from 0) and *fields its number, for the message. Text after the last line break is not a record. */
static inline int csv_records(const char *s, int want, int *rec, int *fields) {
  int n = 0, f = 1, q = 0;
  for (; *s; s++) {
    if (q) {
      if (*s == '"' && s[1] == '"')
        s++;
      else if (*s == '"')
        q = 0;
    } else if (*s == '"')
      q = 1;
    else if (*s == ',')
      f++;
    else if (*s == '\n') {
      if (want < 0) want = f;
      if (f != want) {
        if (rec) *rec = n;
        if (fields) *fields = f;
        return -1;
      }
      n++;
      f = 1;
    }
  }
  return n;
}

#endif
