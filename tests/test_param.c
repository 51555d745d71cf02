/* test_param.c - scenario files: every kind of bad input gives FILE:LINE and fails whole;
 * defaults, lists, durations, overrides and the dump round trip. */
#include "sim/param.h"
#include "sim/sim.h"

#include <CUnit/CUnit.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

typedef struct t_item {
  char *name;
  double share;
} t_item;

typedef struct t_inner {
  int64_t n;
} t_inner;

typedef struct t_cfg {
  int64_t count;
  double rate;
  int flag;
  char *label;
  int mode;
  double period;
  double *curve;
  size_t ncurve;
  t_inner inner;
  t_item *items;
  size_t nitems;
} t_cfg;

static const char *const t_modes[] = {"fifo", "lifo", NULL};
static const sim_param t_item_params[] = {
    {"name", SIM_P_STRING, offsetof(t_item, name), NULL, SIM_UNBOUNDED, NULL, "item name"},
    {"share", SIM_P_DOUBLE, offsetof(t_item, share), "0.5", 0, 1, "1", "share"},
    {NULL},
};
static const sim_param t_inner_params[] = {
    {"n", SIM_P_INT, offsetof(t_inner, n), "3", 1, 10, "1", "n"},
    {NULL},
};
static const sim_param t_params[] = {
    {"count", SIM_P_INT, offsetof(t_cfg, count), "10", 1, 100, "GPUs", "how many"},
    {"rate", SIM_P_DOUBLE, offsetof(t_cfg, rate), "0.25", 0, 1, "1/s", "a rate"},
    {"flag", SIM_P_BOOL, offsetof(t_cfg, flag), "false", SIM_UNBOUNDED, NULL, "a flag"},
    {"label", SIM_P_STRING, offsetof(t_cfg, label), "\"x\"", SIM_UNBOUNDED, NULL, "a label"},
    {"mode", SIM_P_ENUM, offsetof(t_cfg, mode), "\"fifo\"", SIM_UNBOUNDED, NULL, "queue order", t_modes},
    {"period", SIM_P_DURATION, offsetof(t_cfg, period), "\"1h\"", 1, 1e9, "s", "a period"},
    {"curve", SIM_P_DARRAY, offsetof(t_cfg, curve), "[1.0, 2.0]", 1, 24, "1", "a curve", NULL, NULL, 0,
     offsetof(t_cfg, ncurve)},
    {"inner", SIM_P_GROUP, offsetof(t_cfg, inner), NULL, SIM_UNBOUNDED, NULL, "nested", NULL, t_inner_params},
    {"items", SIM_P_LIST, offsetof(t_cfg, items), "()", 0, 8, NULL, "items", NULL, t_item_params, sizeof(t_item),
     offsetof(t_cfg, nitems)},
    {NULL},
};

/* Parses `text` as file "t.cfg" and returns the number of errors; the first message in msg. */
static int parse(const char *text, t_cfg *c, char *msg) {
  sim_diag d;
  sim_diag_init(&d, NULL);
  memset(c, 0, sizeof *c);
  sim_scenario *s = sim_scenario_load_string(text, "t.cfg", &d);
  if (s) {
    sim_param_parse(s, "g", t_params, c, NULL, &d);
    sim_scenario_free(s);
  }
  strcpy(msg, d.first);
  return d.nerrors;
}

static void test_defaults_and_values(void) {
  t_cfg c;
  char msg[512];
  CU_ASSERT_EQUAL_FATAL(
      parse("g = { rate = 0.5; period = \"2d\"; items = ({ name = \"a\"; }, { name = \"b\"; share = 0.1; }); };", &c,
            msg),
      0);
  CU_ASSERT_EQUAL(c.count, 10);
  CU_ASSERT_DOUBLE_EQUAL(c.rate, 0.5, 0);
  CU_ASSERT_EQUAL(c.flag, 0);
  CU_ASSERT_STRING_EQUAL(c.label, "x");
  CU_ASSERT_EQUAL(c.mode, 0);
  CU_ASSERT_DOUBLE_EQUAL(c.period, 2 * 86400.0, 0);
  CU_ASSERT_EQUAL(c.ncurve, 2);
  CU_ASSERT_DOUBLE_EQUAL(c.curve[1], 2.0, 0);
  CU_ASSERT_EQUAL(c.inner.n, 3);
  CU_ASSERT_EQUAL_FATAL(c.nitems, 2);
  CU_ASSERT_STRING_EQUAL(c.items[1].name, "b");
  CU_ASSERT_DOUBLE_EQUAL(c.items[0].share, 0.5, 0);
  CU_ASSERT_DOUBLE_EQUAL(c.items[1].share, 0.1, 0);
  sim_param_free(t_params, &c);
  /* integers are accepted where numbers are expected */
  CU_ASSERT_EQUAL(parse("g = { rate = 1; };", &c, msg), 0);
  CU_ASSERT_DOUBLE_EQUAL(c.rate, 1.0, 0);
  sim_param_free(t_params, &c);
}

static void test_unknown_key(void) {
  t_cfg c;
  char msg[512];
  CU_ASSERT_EQUAL(parse("g = {\n  count = 5;\n  rat = 0.5;\n};", &c, msg), 1);
  CU_ASSERT_STRING_EQUAL(msg, "t.cfg:3: key 'g.rat': unknown key (did you mean 'rate'?)");
  CU_ASSERT_PTR_NULL(c.label); /* nothing half-parsed is left */
}

static void test_wrong_type(void) {
  t_cfg c;
  char msg[512];
  CU_ASSERT_EQUAL(parse("g = {\n count = \"ten\";\n};", &c, msg), 1);
  CU_ASSERT_STRING_EQUAL(msg, "t.cfg:2: key 'g.count': expected an integer, found a string");
  CU_ASSERT_EQUAL(parse("g = { flag = 1; };", &c, msg), 1);
  CU_ASSERT(strstr(msg, "expected true or false") != NULL);
  CU_ASSERT_EQUAL(parse("g = { inner = 3; };", &c, msg), 1);
  CU_ASSERT(strstr(msg, "expected a group") != NULL);
  CU_ASSERT_EQUAL(parse("g = { count = 2.5; };", &c, msg), 1);
  CU_ASSERT(strstr(msg, "expected an integer, found a number") != NULL);
}

static void test_out_of_range(void) {
  t_cfg c;
  char msg[512];
  CU_ASSERT_EQUAL(parse("g = {\n\n rate = 1.5;\n};", &c, msg), 1);
  CU_ASSERT_STRING_EQUAL(msg, "t.cfg:3: key 'g.rate': value 1.5 is out of range [0, 1] 1/s");
  CU_ASSERT_EQUAL(parse("g = { inner = { n = 11; }; };", &c, msg), 1);
  CU_ASSERT(strstr(msg, "key 'g.inner.n': value 11 is out of range") != NULL);
  CU_ASSERT_EQUAL(parse("g = { items = ({ name = \"a\"; share = -1.0; }); };", &c, msg), 1);
  CU_ASSERT(strstr(msg, "key 'g.items.[0].share'") != NULL);
  CU_ASSERT_EQUAL(parse("g = { curve = []; };", &c, msg), 1);
  CU_ASSERT(strstr(msg, "between 1 and 24 numbers") != NULL);
}

static void test_enum_duration_required(void) {
  t_cfg c;
  char msg[512];
  CU_ASSERT_EQUAL(parse("g = { mode = \"random\"; };", &c, msg), 1);
  CU_ASSERT(strstr(msg, "'random' is not one of: fifo, lifo") != NULL);
  CU_ASSERT_EQUAL(parse("g = { period = \"3 fortnights\"; };", &c, msg), 1);
  CU_ASSERT(strstr(msg, "is not a duration") != NULL);
  CU_ASSERT_EQUAL(parse("g = { items = ({ share = 0.2; }); };", &c, msg), 1);
  CU_ASSERT(strstr(msg, "key 'g.items.[0].name': is required") != NULL);
}

static void test_several_errors_reported(void) {
  t_cfg c;
  char msg[512];
  CU_ASSERT_EQUAL(parse("g = { count = 0; rate = 2.0; bogus = 1; };", &c, msg), 3);
}

static void test_syntax_error_and_missing_file(void) {
  sim_diag d;
  sim_diag_init(&d, NULL);
  CU_ASSERT_PTR_NULL(sim_scenario_load_string("g = {\n count = 5;\n rate = = 1; };", "bad.cfg", &d));
  CU_ASSERT_EQUAL(d.nerrors, 1);
  CU_ASSERT(strncmp(d.first, "bad.cfg:3: syntax error", 23) == 0);
  sim_diag_init(&d, NULL);
  CU_ASSERT_PTR_NULL(sim_scenario_load("/no/such/scenario.cfg", &d));
  CU_ASSERT(strstr(d.first, "/no/such/scenario.cfg: cannot read the scenario file: No such file") != NULL);
}

static void test_durations(void) {
  double s;
  CU_ASSERT_EQUAL(sim_parse_duration("90s", &s), 0);
  CU_ASSERT_DOUBLE_EQUAL(s, 90, 0);
  CU_ASSERT_EQUAL(sim_parse_duration("1.5h", &s), 0);
  CU_ASSERT_DOUBLE_EQUAL(s, 5400, 0);
  CU_ASSERT_EQUAL(sim_parse_duration("2w", &s), 0);
  CU_ASSERT_DOUBLE_EQUAL(s, 1209600, 0);
  CU_ASSERT_EQUAL(sim_parse_duration("12", &s), 0);
  CU_ASSERT_DOUBLE_EQUAL(s, 12, 0);
  CU_ASSERT_NOT_EQUAL(sim_parse_duration("5y", &s), 0);
  CU_ASSERT_NOT_EQUAL(sim_parse_duration("h", &s), 0);
  CU_ASSERT_NOT_EQUAL(sim_parse_duration("3h x", &s), 0);
}

static void test_override_and_semantic_error(void) {
  sim_diag d;
  sim_diag_init(&d, NULL);
  sim_scenario *s = sim_scenario_load_string("g = {\n count = 5;\n items = ({ name = \"a\"; });\n};", "o.cfg", &d);
  CU_ASSERT_PTR_NOT_NULL_FATAL(s);
  CU_ASSERT_EQUAL(sim_scenario_set(s, "g.count=7", &d), 0);
  CU_ASSERT_EQUAL(sim_scenario_set(s, "g.label=\"swept\"", &d), 0);
  CU_ASSERT_EQUAL(sim_scenario_set(s, "g.inner.n=4", &d), 0);
  CU_ASSERT_NOT_EQUAL(sim_scenario_set(s, "g.count", &d), 0);
  t_cfg c;
  memset(&c, 0, sizeof c);
  sim_diag_init(&d, NULL);
  CU_ASSERT_EQUAL_FATAL(sim_param_parse(s, "g", t_params, &c, NULL, &d), 0);
  CU_ASSERT_EQUAL(c.count, 7);
  CU_ASSERT_STRING_EQUAL(c.label, "swept");
  CU_ASSERT_EQUAL(c.inner.n, 4);
  sim_param_error(s, "g.items.[0].name", &d, "names must be unique");
  CU_ASSERT_STRING_EQUAL(d.first, "o.cfg:3: key 'g.items.[0].name': names must be unique");
  sim_param_free(t_params, &c);
  sim_scenario_free(s);
}

/* sim_scenario_set on `text` ("t.cfg"): 0 or the error; its first message in msg. */
static int set_one(sim_scenario *s, const char *assignment, char *msg) {
  sim_diag d;
  sim_diag_init(&d, NULL);
  int rc = sim_scenario_set(s, assignment, &d);
  strcpy(msg, d.first);
  return rc;
}

/* Overrides reach list items by name ("g.items.b.share"), by [N] and by a bare N when no item is
 * named N; every bad form is an error that says what exists. */
static void test_override_list_items(void) {
  sim_diag d;
  sim_diag_init(&d, NULL);
  sim_scenario *s =
      sim_scenario_load_string("g = {\n items = ({ name = \"a\"; share = 0.1; }, { name = \"b\"; share = 0.2; },\n"
                               " { name = \"c\"; share = 0.3; });\n count = 5;\n};",
                               "t.cfg", &d);
  CU_ASSERT_PTR_NOT_NULL_FATAL(s);
  char msg[512];
  CU_ASSERT_EQUAL(set_one(s, "g.items.b.share=0.7", msg), 0);
  CU_ASSERT_EQUAL(set_one(s, "g.items.[0].share=0.25", msg), 0);
  CU_ASSERT_EQUAL(set_one(s, "g.items.2.share=0.9", msg), 0);
  CU_ASSERT_EQUAL(set_one(s, "g.items.a.name=\"z\"", msg), 0); /* renamed: now named z */
  CU_ASSERT_EQUAL(set_one(s, "g.items.z.share=0.125", msg), 0);
  t_cfg c;
  memset(&c, 0, sizeof c);
  sim_diag_init(&d, NULL);
  CU_ASSERT_EQUAL_FATAL(sim_param_parse(s, "g", t_params, &c, NULL, &d), 0);
  CU_ASSERT_EQUAL_FATAL(c.nitems, 3);
  CU_ASSERT_STRING_EQUAL(c.items[0].name, "z");
  CU_ASSERT_DOUBLE_EQUAL(c.items[0].share, 0.125, 0);
  CU_ASSERT_DOUBLE_EQUAL(c.items[1].share, 0.7, 0);
  CU_ASSERT_DOUBLE_EQUAL(c.items[2].share, 0.9, 0);
  CU_ASSERT_EQUAL(c.count, 5);
  sim_param_free(t_params, &c);

  /* A wrong name lists the names there are; an index out of range says the range. */
  CU_ASSERT_NOT_EQUAL(set_one(s, "g.items.a.share=0.5", msg), 0);
  CU_ASSERT_PTR_NOT_NULL(strstr(msg, "no item of 'g.items' is named 'a' (its items: z, b, c; or [0] to [2])"));
  CU_ASSERT_NOT_EQUAL(set_one(s, "g.items.[3].share=0.5", msg), 0);
  CU_ASSERT_PTR_NOT_NULL(strstr(msg, "index [3] is out of range: 'g.items' has 3 items, [0] to [2]"));
  CU_ASSERT_NOT_EQUAL(set_one(s, "g.items.7.share=0.5", msg), 0);
  CU_ASSERT_PTR_NOT_NULL(strstr(msg, "index 7 is out of range"));
  CU_ASSERT_NOT_EQUAL(set_one(s, "g.items.[-1].share=0.5", msg), 0);
  CU_ASSERT_PTR_NOT_NULL(strstr(msg, "'[-1]' is not an index [N]"));
  CU_ASSERT_NOT_EQUAL(set_one(s, "g.items.[x].share=0.5", msg), 0);
  CU_ASSERT_PTR_NOT_NULL(strstr(msg, "'[x]' is not an index [N]"));
  /* An item is not a key; a group has no index; a number has no members. */
  CU_ASSERT_NOT_EQUAL(set_one(s, "g.items.[0]=0.5", msg), 0);
  CU_ASSERT_PTR_NOT_NULL(strstr(msg, "is a list item"));
  CU_ASSERT_NOT_EQUAL(set_one(s, "g.[0].count=1", msg), 0);
  CU_ASSERT_PTR_NOT_NULL(strstr(msg, "'g' is a group, not a list"));
  CU_ASSERT_NOT_EQUAL(set_one(s, "g.count.x=1", msg), 0);
  CU_ASSERT_PTR_NOT_NULL(strstr(msg, "'g.count' is an integer, not a group or a list"));
  CU_ASSERT_NOT_EQUAL(set_one(s, "g..count=1", msg), 0);
  CU_ASSERT_PTR_NOT_NULL(strstr(msg, "empty name"));
  sim_scenario_free(s);

  /* A bare number that is also another item's name is ambiguous; [N] is always the index. */
  sim_diag_init(&d, NULL);
  s = sim_scenario_load_string("g = { items = ({ name = \"x\"; }, { name = \"0\"; }, { name = \"y\"; }, "
                               "{ name = \"y\"; }); };",
                               "t.cfg", &d);
  CU_ASSERT_PTR_NOT_NULL_FATAL(s);
  CU_ASSERT_NOT_EQUAL(set_one(s, "g.items.0.share=0.5", msg), 0);
  CU_ASSERT_PTR_NOT_NULL(strstr(msg, "'0' is ambiguous in 'g.items': item [1] is named '0' and [0] is an index"));
  CU_ASSERT_NOT_EQUAL(set_one(s, "g.items.y.share=0.5", msg), 0);
  CU_ASSERT_PTR_NOT_NULL(strstr(msg, "2 items of 'g.items' are named 'y'"));
  CU_ASSERT_EQUAL(set_one(s, "g.items.[0].share=0.5", msg), 0);
  CU_ASSERT_EQUAL(set_one(s, "g.items.[1].share=0.75", msg), 0);
  CU_ASSERT_EQUAL(set_one(s, "g.items.1.share=0.875", msg), 0); /* named 1? no: index 1, item "0" */
  memset(&c, 0, sizeof c);
  sim_diag_init(&d, NULL);
  CU_ASSERT_EQUAL_FATAL(sim_param_parse(s, "g", t_params, &c, NULL, &d), 0);
  CU_ASSERT_EQUAL_FATAL(c.nitems, 4);
  CU_ASSERT_DOUBLE_EQUAL(c.items[0].share, 0.5, 0);
  CU_ASSERT_DOUBLE_EQUAL(c.items[1].share, 0.875, 0);
  sim_param_free(t_params, &c);
  sim_scenario_free(s);

  /* An empty list, and a list the scenario leaves to its default, have no items to address. */
  sim_diag_init(&d, NULL);
  s = sim_scenario_load_string("g = { items = (); };", "t.cfg", &d);
  CU_ASSERT_PTR_NOT_NULL_FATAL(s);
  CU_ASSERT_NOT_EQUAL(set_one(s, "g.items.[0].share=0.5", msg), 0);
  CU_ASSERT_PTR_NOT_NULL(strstr(msg, "out of range: 'g.items' has no items"));
  CU_ASSERT_NOT_EQUAL(set_one(s, "g.items.a.share=0.5", msg), 0);
  CU_ASSERT_PTR_NOT_NULL(strstr(msg, "'g.items' has no items"));
  CU_ASSERT_NOT_EQUAL(set_one(s, "g.other.[0].share=0.5", msg), 0);
  CU_ASSERT_PTR_NOT_NULL(strstr(msg, "'g.other' is not in the scenario file"));
  sim_scenario_free(s);
}

/* The dump of the effective values parses back to the same values. */
static void test_dump_round_trip(void) {
  t_cfg c, c2;
  char msg[512];
  CU_ASSERT_EQUAL_FATAL(parse("g = { count = 42; rate = 0.1; mode = \"lifo\"; curve = [0.1, 0.2, 0.3]; items = ({ name "
                              "= \"q\\\"r\"; share = 0.3; }); };",
                              &c, msg),
                        0);
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  sim_param_dump(f, "g", t_params, &c);
  fclose(f);
  CU_ASSERT_EQUAL_FATAL(parse(buf, &c2, msg), 0);
  CU_ASSERT_EQUAL(c2.count, 42);
  CU_ASSERT_EQUAL(c2.rate, c.rate);
  CU_ASSERT_EQUAL(c2.mode, 1);
  CU_ASSERT_EQUAL(c2.ncurve, 3);
  CU_ASSERT_EQUAL(c2.curve[2], c.curve[2]);
  CU_ASSERT_STRING_EQUAL(c2.items[0].name, "q\"r");
  free(buf);
  sim_param_free(t_params, &c);
  sim_param_free(t_params, &c2);
}

/* A file of 16,000 settings took libconfig 1.5 6.3 s to read (quadratic): more than
 * SIM_SCENARIO_MAX_SETTINGS are refused at once, at the line where the limit is passed; `=` and
 * `:` inside strings and comments do not count, and a file at the limit is read. */
static void test_too_many_settings(void) {
  size_t cap = 64 + 32 * (size_t)(SIM_SCENARIO_MAX_SETTINGS + 1000);
  char *t = malloc(cap);
  CU_ASSERT_PTR_NOT_NULL_FATAL(t);
  size_t n = (size_t)snprintf(t, cap, "g = {\n");
  for (int i = 0; i < SIM_SCENARIO_MAX_SETTINGS + 1000; i++) n += (size_t)snprintf(t + n, cap - n, "  k%d = 1;\n", i);
  snprintf(t + n, cap - n, "};\n");
  sim_diag d;
  sim_diag_init(&d, NULL);
  CU_ASSERT_PTR_NULL(sim_scenario_load_string(t, "many.cfg", &d));
  char want[64];
  snprintf(want, sizeof want, "many.cfg:%d: more than %d settings", SIM_SCENARIO_MAX_SETTINGS + 1,
           SIM_SCENARIO_MAX_SETTINGS);
  CU_ASSERT(strncmp(d.first, want, strlen(want)) == 0);
  /* (the group counts too: `g = {` on line 1 is the first, k4999 on line 5001 the 5001st) */
  /* exactly at the limit, with = and : in strings and comments besides: read */
  n = (size_t)snprintf(t, cap, "g = {\n  s = \"a=b:c\"; # x = 1\n  /* y = 2 : */ // z = 3\n");
  for (int i = 0; i < SIM_SCENARIO_MAX_SETTINGS - 2; i++) n += (size_t)snprintf(t + n, cap - n, "  k%d = 1;\n", i);
  snprintf(t + n, cap - n, "};\n");
  sim_diag_init(&d, NULL);
  sim_scenario *s = sim_scenario_load_string(t, "limit.cfg", &d);
  CU_ASSERT_PTR_NOT_NULL(s);
  if (!s) fprintf(stderr, "%s\n", d.first);
  sim_scenario_free(s);
  free(t);
}

/* A table with 64-bit integer keys: libconfig 1.5 reads "4294967297" as 1 and "3000000000" as
 * -1294967296 unless the text is widened first (sim_config_widen). */
typedef struct t_big {
  int64_t seed, count;
  double x;
  char *label;
} t_big;
static const sim_param t_big_params[] = {
    {"seed", SIM_P_INT, offsetof(t_big, seed), "0", 0, 9.2e18, "1", "a seed"},
    {"count", SIM_P_INT, offsetof(t_big, count), "1", SIM_UNBOUNDED, "1", "anything"},
    {"x", SIM_P_DOUBLE, offsetof(t_big, x), "0", SIM_UNBOUNDED, "1", "a number"},
    {"label", SIM_P_STRING, offsetof(t_big, label), "\"x\"", SIM_UNBOUNDED, NULL, "a label"},
    {NULL},
};

/* Parses `text` (file "big.cfg", group g) after the overrides; errors counted, first in msg. */
static int parse_big(const char *text, const char *ovr, t_big *b, char *msg) {
  sim_diag d;
  sim_diag_init(&d, NULL);
  memset(b, 0, sizeof *b);
  sim_scenario *s = sim_scenario_load_string(text, "big.cfg", &d);
  if (s && (!ovr || sim_scenario_set(s, ovr, &d) == 0)) sim_param_parse(s, "g", t_big_params, b, NULL, &d);
  sim_scenario_free(s);
  strcpy(msg, d.first);
  return d.nerrors;
}

static void test_integers_64_bits(void) {
  t_big b;
  char msg[512];
  CU_ASSERT_EQUAL_FATAL(parse_big("g = { seed = 3000000000; count = 4294967297; };", NULL, &b, msg), 0);
  CU_ASSERT_EQUAL(b.seed, 3000000000LL);
  CU_ASSERT_EQUAL(b.count, 4294967297LL);
  sim_param_free(t_big_params, &b);
  CU_ASSERT_EQUAL_FATAL(parse_big("g = { count = -3000000000; seed = 0xFFFFFFFF; x = 1e10; };", NULL, &b, msg), 0);
  CU_ASSERT_EQUAL(b.count, -3000000000LL);
  CU_ASSERT_EQUAL(b.seed, 4294967295LL);
  CU_ASSERT_DOUBLE_EQUAL(b.x, 1e10, 0);
  sim_param_free(t_big_params, &b);
  /* the largest 64-bit integers, an L already there, and a big number inside a string or a
   * comment or a name left alone */
  CU_ASSERT_EQUAL_FATAL(parse_big("g = { count = 9223372036854775807; seed = 5000000000L;\n"
                                  "  label = \"9999999999\"; # 99999999999999999999\n x = 5000000000.5; };",
                                  NULL, &b, msg),
                        0);
  CU_ASSERT_EQUAL(b.count, INT64_MAX);
  CU_ASSERT_EQUAL(b.seed, 5000000000LL);
  CU_ASSERT_STRING_EQUAL(b.label, "9999999999");
  CU_ASSERT_DOUBLE_EQUAL(b.x, 5000000000.5, 0);
  sim_param_free(t_big_params, &b);
  CU_ASSERT_EQUAL(parse_big("g = { count = -9223372036854775808; };", NULL, &b, msg), 0);
  CU_ASSERT_EQUAL(b.count, INT64_MIN);
  sim_param_free(t_big_params, &b);
  /* beyond 64 bits: refused at its line, not saturated */
  CU_ASSERT_EQUAL(parse_big("g = {\n  count = 99999999999999999999;\n};", NULL, &b, msg), 1);
  CU_ASSERT_PTR_NOT_NULL(strstr(msg, "big.cfg:2: the integer 99999999999999999999 does not fit in 64 bits"));
  CU_ASSERT_EQUAL(parse_big("g = {\n\n  count = 99999999999999999999L;\n};", NULL, &b, msg), 1);
  CU_ASSERT_PTR_NOT_NULL(strstr(msg, "big.cfg:3: the integer 99999999999999999999"));
  /* a bound is checked on the whole value, not on its low 32 bits */
  CU_ASSERT_EQUAL(parse_big("g = { seed = 18446744073709551615; };", NULL, &b, msg), 1);
  CU_ASSERT_PTR_NOT_NULL(strstr(msg, "does not fit in 64 bits"));
  /* --param: 64 bits too, out-of-range reported with the real value */
  CU_ASSERT_EQUAL(parse_big("g = { };", "g.seed=4294967297", &b, msg), 0);
  CU_ASSERT_EQUAL(b.seed, 4294967297LL);
  sim_param_free(t_big_params, &b);
  CU_ASSERT_EQUAL(parse_big("g = { };", "g.seed=-4294967297", &b, msg), 1);
  CU_ASSERT_PTR_NOT_NULL(strstr(msg, "value -4294967297 is out of range"));
  CU_ASSERT_EQUAL(parse_big("g = { };", "g.count=99999999999999999999", &b, msg), 1);
  CU_ASSERT_PTR_NOT_NULL(strstr(msg, "key 'g.count': the integer 99999999999999999999 does not fit in 64 bits"));
  /* a very long number (beyond 64 bits, refused) in a long file: no overrun */
  {
    size_t L = 20000;
    char *t = malloc(L + 64);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    strcpy(t, "g = {\n count = ");
    size_t n0 = strlen(t);
    memset(t + n0, '7', L);
    strcpy(t + n0 + L, ";\n};");
    CU_ASSERT_EQUAL(parse_big(t, NULL, &b, msg), 1);
    CU_ASSERT_PTR_NOT_NULL(strstr(msg, "big.cfg:2: the integer 777"));
    free(t);
  }
  /* the widened text keeps its lines */
  sim_diag d;
  sim_diag_init(&d, NULL);
  char *w = sim_config_widen("a = 1;\nb = 3000000000; c = 0x100000000; d = 2.5e9;\n", "w", &d);
  CU_ASSERT_PTR_NOT_NULL_FATAL(w);
  CU_ASSERT_STRING_EQUAL(w, "a = 1;\nb = 3000000000L; c = 0x100000000L; d = 2.5e9;\n");
  free(w);
}

static void test_one_key_per_param_and_control_chars(void) {
  t_big b;
  char msg[512];
  /* what follows a ';' was dropped silently */
  CU_ASSERT_EQUAL(parse_big("g = { };", "g.label=\"v\"; model=\"phold\"", &b, msg), 1);
  CU_ASSERT_PTR_NOT_NULL(strstr(msg, "one key per --param"));
  /* a newline or another control character in a string: refused at its line */
  CU_ASSERT_EQUAL(parse_big("g = {\n  label = \"a\\nb\";\n};", NULL, &b, msg), 1);
  CU_ASSERT_PTR_NOT_NULL(strstr(msg, "big.cfg:2: key 'g.label': holds a control character (byte 0x0a"));
  CU_ASSERT_EQUAL(parse_big("g = { };", "g.label=\"tab\\there\"", &b, msg), 1);
  CU_ASSERT_PTR_NOT_NULL(strstr(msg, "control character (byte 0x09"));
  CU_ASSERT_EQUAL(parse_big("g = { label = \"plain, and <html> & quotes\\\"\"; };", NULL, &b, msg), 0);
  sim_param_free(t_big_params, &b);
}

static CU_TestInfo param_tests[] = {
    {"defaults, values, lists, groups", test_defaults_and_values},
    {"unknown key with a suggestion", test_unknown_key},
    {"wrong type", test_wrong_type},
    {"out of range", test_out_of_range},
    {"enum, duration, required", test_enum_duration_required},
    {"every error is reported", test_several_errors_reported},
    {"syntax error and missing file", test_syntax_error_and_missing_file},
    {"more settings than a scenario file may hold", test_too_many_settings},
    {"durations", test_durations},
    {"overrides and semantic errors", test_override_and_semantic_error},
    {"overrides of list items by name and index", test_override_list_items},
    {"dump parses back", test_dump_round_trip},
    {"integers are read at 64 bits or refused", test_integers_64_bits},
    {"one key per --param, no control characters", test_one_key_per_param_and_control_chars},
    CU_TEST_INFO_NULL,
};
CU_SuiteInfo spotlab_suites[] = {
    {"param", NULL, NULL, NULL, NULL, param_tests},
    CU_SUITE_INFO_NULL,
};
