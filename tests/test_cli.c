/* test_cli.c - the `spotlab` command as a user meets it: help, exit codes, FILE:LINE errors for
 * bad scenarios, nothing run and nothing written on bad input, results written atomically. */
#include "tests/testutil.h"

#include <CUnit/CUnit.h>
#include <gsl/gsl_version.h>
#include <hdf5.h>
#include <fcntl.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

static char cmd[8192];

static int sl(const char *args, char **out) {
  snprintf(cmd, sizeof cmd, "%s %s", tu_bin(), args);
  return tu_run(cmd, out);
}

static void test_help(void) {
  char *out;
  CU_ASSERT_EQUAL(sl("--help", &out), 0);
  CU_ASSERT(strstr(out, "run") && strstr(out, "check") && strstr(out, "bench phold"));
  free(out);
  CU_ASSERT_EQUAL(sl("run --help", &out), 0);
  CU_ASSERT(strstr(out, "--reps") != NULL);
  free(out);
  CU_ASSERT_EQUAL(sl("bench phold --help", &out), 0);
  free(out);
  CU_ASSERT_EQUAL(sl("frobnicate", &out), 2);
  CU_ASSERT(strstr(out, "unknown command") != NULL);
  free(out);
  CU_ASSERT_EQUAL(sl("run", &out), 2);
  free(out);
  CU_ASSERT_EQUAL(sl("run x.cfg --reps 0", &out), 2);
  CU_ASSERT(strstr(out, "--reps") != NULL);
  free(out);
}

/* Runs `spotlab ARGS`, expects exit 2 and `message` in the output. */
static void expect_usage(const char *args, const char *message) {
  char *out;
  int rc = sl(args, &out);
  if (rc != 2 || !strstr(out, message))
    fprintf(stderr, "\nspotlab %s: exit %d, expected 2 and '%s' in:\n%s\n", args, rc, message, out);
  CU_ASSERT_EQUAL(rc, 2);
  CU_ASSERT(strstr(out, message) != NULL);
  free(out);
}

/* The option tables: a non-repeatable option given twice, a bad value (named with the range it
 * accepts), a missing value, an unknown option (with the closest), extra operands. */
static void test_option_table_errors(void) {
  char args[4096];
  /* this one overflowed a fixed array and crashed */
  snprintf(args, sizeof args, "sweep %s/scenarios/phold.cfg --param phold.remote=0.1 --reps 1 --reps 1 --seed 3",
           tu_src());
  expect_usage(args, "spotlab sweep: --reps given twice");
  expect_usage("run x.cfg --out a.h5 --out b.h5", "spotlab run: --out given twice");
  expect_usage("run x.cfg --quiet --quiet", "spotlab run: --quiet given twice");
  expect_usage("sweep x.cfg --param a.b=1,2 --param a.b=3", "spotlab sweep: --param a.b is given twice");
  expect_usage("run x.cfg --reps abc", "spotlab run: --reps: 'abc' is not a whole number in [1, 10000]");
  expect_usage("run x.cfg --reps=10001", "spotlab run: --reps: '10001' is not a whole number in [1, 10000]");
  expect_usage("run x.cfg --seed -3", "spotlab run: --seed: '-3' is not a whole number in [0, 9.2e+18]");
  expect_usage("bench phold --remote 1.5", "spotlab bench phold: --remote: '1.5' is not a number in [0, 1]");
  expect_usage(
      "bench market --rule cheapest",
      "spotlab bench market: --rule: 'cheapest' is not one of gigaspot, pay_as_bid, vickrey, double, knapsack");
  expect_usage(
      "bench market --versus 10000",
      "spotlab bench market: --versus: '10000' is not GPUS:DAYS with GPUS in [3, 3e+08] and DAYS in [1, 3650]");
  expect_usage("bench market --versus 10000:0", "--versus: '10000:0' is not GPUS:DAYS");
  expect_usage("bench market --versus 10000:30x", "--versus: '10000:30x' is not GPUS:DAYS");
  expect_usage("bench market --regions 5 --versus 4:30",
               "spotlab bench market: --versus's GPUS 4 is fewer than the 5 regions (at least one GPU each)");
  expect_usage("bench market --sizes 1000",
               "spotlab bench market: --sizes: '1000' is one size; give 2 to 16 to compare");
  expect_usage("bench market --sizes 1000,abc", "spotlab bench market: --sizes: '1000,abc' is not a list of 2 to 16 "
                                                "GPU counts in [3, 3e+08] separated by commas");
  expect_usage("bench market --sizes 1000,,2000", "--sizes: '1000,,2000' is not a list of 2 to 16 GPU counts");
  expect_usage("bench market --sizes 1000,2000,", "--sizes: '1000,2000,' is not a list of 2 to 16 GPU counts");
  expect_usage("bench market --sizes 3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19",
               "--sizes: '3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19' is not a list of 2 to 16 GPU counts");
  expect_usage("bench market --regions 5 --sizes 4,1000",
               "spotlab bench market: --sizes: 4 is fewer than the 5 regions (at least one GPU each)");
  expect_usage("bench market --sizes 1000,2000 --gpus 5000",
               "spotlab bench market: --sizes and --gpus: give one of them");
  expect_usage("bench market --sizes 1000,2000 --versus 1000:1",
               "spotlab bench market: --sizes and --versus: give one of them");
  expect_usage("bench market --repeat 0", "spotlab bench market: --repeat: '0' is not a whole number in [1, 100]");
  expect_usage("bench sched --policy pray", "spotlab bench sched: --policy: 'pray' is not one of none, checkpoint");
  expect_usage("bench kernels --cpu --fail-at soon",
               "--fail-at: 'soon' is not a number in [0.001, 0.999] (or 'random')");
  expect_usage("check x.cfg --pilot", "spotlab check: --pilot needs a value (SECONDS)");
  expect_usage("report r.h5 --out=", "spotlab report: --out: an empty value");
  expect_usage("run x.cfg --quiet=yes", "spotlab run: --quiet takes no value");
  expect_usage("run x.cfg --rep 3", "spotlab run: unknown option '--rep' (did you mean --reps?");
  expect_usage("report r.h5 --gnuplt none", "unknown option '--gnuplt' (did you mean --gnuplot?");
  expect_usage("compare a.h5 b.h5 --frobnicate",
               "spotlab compare: unknown option '--frobnicate' (spotlab compare --help");
  expect_usage("compare a.h5 b.h5 c.h5", "('c.h5' is extra");
  expect_usage("bench phold 12", "spotlab bench phold: takes no operands");
  expect_usage("sweep x.cfg --reps 2", "spotlab sweep: --param KEY=V1,V2 is required");
  expect_usage("compare a.h5", "usage: spotlab compare BEFORE.h5 AFTER.h5");
  /* after "--" an argument is an operand, whatever it looks like */
  expect_usage("run -- --reps", "--reps: cannot read the scenario file");
}

/* --seed, --reps, --spread and --quiet are declared once (app/cli.h): every command that takes
 * one shows the same bounds in its --help and refuses the same values. */
static void test_shared_options_one_bound(void) {
  const char *cmds[] = {"run", "sweep", "experiment", "bench phold", "bench market", "bench sched", "bench kernels"};
  for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++) {
    char args[128], *out;
    snprintf(args, sizeof args, "%s --help", cmds[i]);
    CU_ASSERT_EQUAL(sl(args, &out), 0);
    const char *seed = strstr(out, "\n  --seed N ");
    if (!seed || !strstr(seed, "[0, 9.2e+18]") || strstr(seed, "\n") < strstr(seed, "[0, 9.2e+18]"))
      fprintf(stderr, "\nspotlab %s --help: --seed without [0, 9.2e+18]\n", cmds[i]);
    CU_ASSERT_PTR_NOT_NULL(seed);
    if (seed) {
      const char *eol = strchr(seed + 1, '\n'), *r = strstr(seed, "[0, 9.2e+18]");
      CU_ASSERT(r && (!eol || r < eol));
    }
    const char *reps = strstr(out, "\n  --reps N ");
    if (reps) {
      const char *eol = strchr(reps + 1, '\n'), *r = strstr(reps, "[1, 10000]");
      CU_ASSERT(r && (!eol || r < eol));
    }
    free(out);
  }
  /* 1.9e19 was accepted by three benchmarks, refused by four commands */
  expect_usage("bench phold --seed 10000000000000000000",
               "spotlab bench phold: --seed: '10000000000000000000' is not a whole number in [0, 9.2e+18]");
  expect_usage("bench market --seed 10000000000000000000", "is not a whole number in [0, 9.2e+18]");
  expect_usage("bench kernels --cpu --seed 10000000000000000000", "is not a whole number in [0, 9.2e+18]");
  expect_usage("run x.cfg --seed 9300000000000000000", "is not a whole number in [0, 9.2e+18]");
}

/* The names of the options an --help lists under "options:" (the first word of each entry). */
static int help_options(const char *help, char names[][64], int cap) {
  const char *p = strstr(help, "\noptions:\n");
  int n = 0;
  if (!p) return 0;
  for (p += 10; *p && *p != '\n' && n < cap;) {
    const char *eol = strchr(p, '\n');
    if (!eol) eol = p + strlen(p);
    if (p[0] == ' ' && p[1] == ' ' && p[2] == '-') {
      size_t k = 0;
      while (p[2 + k] && p[2 + k] != ' ' && p[2 + k] != ',' && k < 63) k++;
      memcpy(names[n], p + 2, k);
      names[n][k] = 0;
      n++;
    }
    p = *eol ? eol + 1 : eol;
  }
  return n;
}

/* Every command's --help comes from its option table: every option it lists appears in its usage
 * line and is accepted by its parser (given with a value where the help shows one, followed by an
 * unknown option so that nothing runs), and -h is --help. */
static void test_help_lists_every_option(void) {
  char *top;
  CU_ASSERT_EQUAL_FATAL(sl("--help", &top), 0);
  int ncmds = 0;
  for (const char *p = strstr(top, "commands:\n"); p && (p = strstr(p, "\n  ")); p += 3) {
    char cmdname[64] = "";
    const char *q = p + 3;
    size_t k = 0;
    while (q[k] && !(q[k] == ' ' && q[k + 1] == ' ') && q[k] != '\n' && k < 63) k++;
    memcpy(cmdname, q, k);
    cmdname[k] = 0;
    if (!cmdname[0]) continue;
    ncmds++;
    char args[256], *help, *h2;
    snprintf(args, sizeof args, "%s --help", cmdname);
    CU_ASSERT_EQUAL(sl(args, &help), 0);
    snprintf(args, sizeof args, "%s -h", cmdname);
    CU_ASSERT_EQUAL(sl(args, &h2), 0);
    CU_ASSERT_STRING_EQUAL(help, h2);
    free(h2);
    char usage[2048];
    const char *ue = strstr(help, "\n\n");
    snprintf(usage, sizeof usage, "%.*s", ue ? (int)(ue - help) : 0, help);
    CU_ASSERT(strncmp(usage, "usage: spotlab ", 15) == 0);
    char names[48][64];
    int n = help_options(help, names, 48);
    CU_ASSERT(n >= 1); /* -h, --help at least */
    for (int i = 0; i < n; i++) {
      if (!strcmp(names[i], "-h")) continue;
      char word[80];
      snprintf(word, sizeof word, "[%.60s", names[i]);
      if (!strstr(usage, word)) {
        snprintf(word, sizeof word, " %.60s ", names[i]); /* a required option has no brackets */
        if (!strstr(usage, word)) fprintf(stderr, "\nspotlab %s: %s is not in the usage line\n", cmdname, names[i]);
        CU_ASSERT(strstr(usage, word) != NULL);
      }
      /* the option's entry: "  --reps N   ..." has a value where a capital word follows */
      char entry[80];
      snprintf(entry, sizeof entry, "\n  %.60s ", names[i]);
      const char *e = strstr(help, entry);
      int valued = e && e[strlen(entry)] >= 'A' && e[strlen(entry)] <= 'Z';
      char *out;
      snprintf(args, sizeof args, "%.60s %.60s%s --zz-no-such-option", cmdname, names[i], valued ? " 1" : "");
      CU_ASSERT_EQUAL(sl(args, &out), 2);
      char unknown[96];
      snprintf(unknown, sizeof unknown, "unknown option '%.60s'", names[i]);
      if (strstr(out, unknown)) fprintf(stderr, "\nspotlab %s lists %s but does not take it\n", cmdname, names[i]);
      CU_ASSERT(strstr(out, unknown) == NULL);
      free(out);
    }
    free(help);
  }
  CU_ASSERT(ncmds >= 11); /* run check keys sweep report compare lab, bench phold|market|sched|kernels */
  free(top);
}

/* Each bad scenario: exit 2, the FILE:LINE message, and no results file. */
static void expect_bad(const char *text, const char *message) {
  tu_write("bad.cfg", text);
  unlink("bad.h5");
  char *out;
  CU_ASSERT_EQUAL(sl("run bad.cfg --out bad.h5", &out), 2);
  if (!strstr(out, message)) fprintf(stderr, "\nexpected '%s' in:\n%s\n", message, out);
  CU_ASSERT(strstr(out, message) != NULL);
  CU_ASSERT(strstr(out, "nothing was run") != NULL);
  CU_ASSERT(access("bad.h5", F_OK) != 0);
  free(out);
}

static void test_bad_scenarios(void) {
  expect_bad("model = \"phold\";\nphold = {\n  lps = 16;\n  lpz = 3;\n};\n",
             "bad.cfg:4: key 'phold.lpz': unknown key (did you mean 'lps'?)");
  expect_bad("model = \"phold\";\nphold = {\n  remote = 1.5;\n};\n",
             "bad.cfg:3: key 'phold.remote': value 1.5 is out of range [0, 1]");
  expect_bad("model = \"phold\";\nrun = {\n  reps = \"four\";\n};\n",
             "bad.cfg:3: key 'run.reps': expected an integer, found a string");
  expect_bad("model = \"phold\";\nrun = { end = \"1 fortnight\"; };\n", "bad.cfg:2: key 'run.end'");
  expect_bad("model = \"philosophy\";\n", "bad.cfg:1: key 'model': unknown model 'philosophy'");
  expect_bad("run = { seed = 1; };\n", "key 'model': is required");
  expect_bad("model = \"phold\";\nphold = { lps = ; };\n", "bad.cfg:2: syntax error");
  expect_bad("model = \"phold\";\nextra = 1;\n", "bad.cfg:2: key 'extra': unknown key");
  char *out;
  CU_ASSERT_EQUAL(sl("run /no/such/file.cfg", &out), 2);
  CU_ASSERT(strstr(out, "/no/such/file.cfg: cannot read the scenario file") != NULL);
  free(out);
}

static void test_check_and_keys(void) {
  char *out, args[4096];
  snprintf(args, sizeof args, "check %s/scenarios/phold.cfg --print", tu_src());
  CU_ASSERT_EQUAL(sl(args, &out), 0);
  CU_ASSERT(strstr(out, "OK: model phold") != NULL);
  CU_ASSERT(strstr(out, "lookahead = 0.10000000000000001;") != NULL);
  free(out);
  CU_ASSERT_EQUAL(sl("keys", &out), 0);
  CU_ASSERT(strstr(out, "run.seed") && strstr(out, "phold.remote"));
  free(out);
  CU_ASSERT_EQUAL(sl("keys nosuchmodel", &out), 2);
  free(out);
}

/* spotlab metrics: the catalogue listed, one metric or quantity in full, an unknown name answered
 * with the closest ones (exit 2), a renamed one with its new name, other models without a scenario. */
static void test_metrics_catalogue(void) {
  char *out, args[4096];
  snprintf(args, sizeof args, "metrics --scenario %s/scenarios/default.cfg", tu_src());
  CU_ASSERT_EQUAL(sl(args, &out), 0);
  CU_ASSERT(strstr(out, "client_price_per_gpu_h") && strstr(out, "client price per billed GPU-hour"));
  CU_ASSERT(strstr(out, "jobs_unserved") && strstr(out, "goodput.class.training"));
  free(out);
  snprintf(args, sizeof args, "metrics deadline_misses --scenario %s/scenarios/default.cfg", tu_src());
  CU_ASSERT_EQUAL(sl(args, &out), 0);
  CU_ASSERT(strstr(out, "deadline_misses.class.training  [jobs]") && strstr(out, "  censored:  ") &&
            strstr(out, "also:      deadline_misses.class.inference"));
  free(out);
  snprintf(args, sizeof args, "metrics spend_per_usefull_gpu_h --scenario %s/scenarios/default.cfg", tu_src());
  CU_ASSERT_EQUAL(sl(args, &out), 2);
  CU_ASSERT(strstr(out, "did you mean spend_per_useful_gpu_h?") != NULL);
  free(out);
  snprintf(args, sizeof args, "metrics provider_income_total --scenario %s/scenarios/default.cfg", tu_src());
  CU_ASSERT_EQUAL(sl(args, &out), 2);
  CU_ASSERT(strstr(out, "was renamed: provider_income_gross") != NULL);
  free(out);
  CU_ASSERT_EQUAL(sl("metrics events_per_lp --model phold", &out), 0);
  CU_ASSERT(strstr(out, "formula:   events / LPs") != NULL);
  free(out);
  CU_ASSERT_EQUAL(sl("metrics --model lab", &out), 0);
  CU_ASSERT(strstr(out, "pred_completion_mae") && strstr(out, "(19 metrics;"));
  free(out);
  CU_ASSERT_EQUAL(sl("metrics --model phold --scenario x.cfg", &out), 2);
  free(out);
}

/* 1 when the item of `out` (check --print) that opens with `item` holds `line` before it closes. */
static int item_has(const char *out, const char *item, const char *line) {
  const char *a = strstr(out, item);
  if (!a) return 0;
  const char *end = strstr(a, "\n    }");
  const char *l = strstr(a, line);
  return l && (!end || l < end);
}

/* --param reaches list items by name, by [N] and by a bare N; a wrong name lists the names, an
 * index out of range says the range (run, check and sweep share the override code). */
static void test_param_list_items(void) {
  char *out, args[4096];
  snprintf(args, sizeof args,
           "check %s/scenarios/default.cfg --no-estimate --print --param market.regions.us.weekend_factor=0.8 "
           "--param 'market.regions.[2].weekend_factor=0.6' --param market.regions.0.weekend_factor=0.5 "
           "--param 'market.personas.henry.pool=\"fixed\"'",
           tu_src());
  CU_ASSERT_EQUAL(sl(args, &out), 0);
  CU_ASSERT(item_has(out, "name = \"us\"", "weekend_factor = 0.80000000000000004;"));
  CU_ASSERT(item_has(out, "name = \"asia\"", "weekend_factor = 0.59999999999999998;"));
  CU_ASSERT(item_has(out, "name = \"eu\"", "weekend_factor = 0.5;"));
  CU_ASSERT(item_has(out, "name = \"henry\"", "\n      pool = \"fixed\";"));
  CU_ASSERT(item_has(out, "name = \"jade\"", "\n      pool = \"fixed\";"));
  CU_ASSERT(!item_has(out, "name = \"katie\"", "\n      pool = \"fixed\";"));
  free(out);
  snprintf(args, sizeof args,
           "check %s/scenarios/default.cfg --no-estimate --param market.regions.mars.weekend_factor=0.8", tu_src());
  CU_ASSERT_EQUAL(sl(args, &out), 2);
  CU_ASSERT(strstr(out, "no item of 'market.regions' is named 'mars' (its items: eu, us, asia; or [0] to [2])") !=
            NULL);
  free(out);
  snprintf(args, sizeof args,
           "run %s/scenarios/default.cfg --out never.h5 --param 'market.personas.[3].pool=\"fixed\"'", tu_src());
  CU_ASSERT_EQUAL(sl(args, &out), 2);
  CU_ASSERT(strstr(out, "index [3] is out of range: 'market.personas' has 3 items, [0] to [2]") != NULL);
  CU_ASSERT(access("never.h5", F_OK) != 0);
  free(out);
  /* a value out of the key's bounds is reported at the item's path, as in a file */
  snprintf(args, sizeof args,
           "check %s/scenarios/default.cfg --no-estimate --param market.regions.us.weekend_factor=-1", tu_src());
  CU_ASSERT_EQUAL(sl(args, &out), 2);
  CU_ASSERT(strstr(out, "key 'market.regions.[1].weekend_factor'") != NULL);
  free(out);
}

static void test_run_writes_results(void) {
  tu_write("ok.cfg", "model = \"phold\";\nrun = { end = 50.0; reps = 3; seed = 9; };\nphold = { lps = 32; };\n");
  unlink("ok.h5");
  char *out;
  CU_ASSERT_EQUAL(sl("run ok.cfg --out ok.h5", &out), 0);
  CU_ASSERT(strstr(out, "events_per_lp") != NULL);
  CU_ASSERT(strstr(out, "results: ok.h5") != NULL);
  free(out);
  CU_ASSERT(access("ok.h5", F_OK) == 0);
  /* nothing temporary is left next to it */
  CU_ASSERT_EQUAL(tu_run("ls ok.h5.tmp.* 2>/dev/null | wc -l | grep -qx 0", NULL), 0);
  /* an unwritable destination is refused before running: the file system's refusal, exit 1 as for
   * every command (docs/faults.md) */
  CU_ASSERT_EQUAL(sl("run ok.cfg --out /nonexistent-dir/ok.h5", &out), 1);
  CU_ASSERT(strstr(out, "cannot write into the folder '/nonexistent-dir': No such file or directory") != NULL);
  free(out);
  /* --param overrides a key; a bad override is a usage error */
  CU_ASSERT_EQUAL(sl("run ok.cfg --out ok2.h5 --param phold.lps=8 --quiet", &out), 0);
  free(out);
  CU_ASSERT_EQUAL(sl("run ok.cfg --out ok2.h5 --param phold.lps=0 --quiet", &out), 2);
  CU_ASSERT(strstr(out, "phold.lps") != NULL);
  free(out);
}

/* An integer attribute of object `obj` of `file`, or -1 when absent. */
static long attr_int(const char *file, const char *obj, const char *name) {
  long v = -1;
  hid_t f = H5Fopen(file, H5F_ACC_RDONLY, H5P_DEFAULT);
  if (f < 0) return -1;
  if (H5Aexists_by_name(f, obj, name, H5P_DEFAULT) > 0) {
    hid_t a = H5Aopen_by_name(f, obj, name, H5P_DEFAULT, H5P_DEFAULT);
    int32_t x;
    if (a >= 0 && H5Aread(a, H5T_NATIVE_INT32, &x) >= 0) v = x;
    if (a >= 0) H5Aclose(a);
  }
  H5Fclose(f);
  return v;
}

/* The length of a one-dimensional dataset, or -1. */
static long dset_len(const char *file, const char *path) {
  long n = -1;
  hid_t f = H5Fopen(file, H5F_ACC_RDONLY, H5P_DEFAULT);
  if (f < 0) return -1;
  hid_t d = H5Dopen2(f, path, H5P_DEFAULT);
  if (d >= 0) {
    hid_t sp = H5Dget_space(d);
    hsize_t dims[4];
    if (H5Sget_simple_extent_ndims(sp) >= 1 && H5Sget_simple_extent_dims(sp, dims, NULL) >= 1) n = (long)dims[0];
    H5Sclose(sp);
    H5Dclose(d);
  }
  H5Fclose(f);
  return n;
}

/* Starts `spotlab ARGS` (split at spaces) with stdout to OUT and stderr to ERR; its pid. */
static pid_t sl_spawn(const char *args, const char *out, const char *err) {
  char buf[8192], *argv[256];
  snprintf(buf, sizeof buf, "%s", args);
  int n = 0;
  argv[n++] = (char *)tu_bin();
  for (char *save = NULL, *t = strtok_r(buf, " ", &save); t && n < 255; t = strtok_r(NULL, " ", &save)) argv[n++] = t;
  argv[n] = NULL;
  unlink(out); /* not a stale file of an earlier run: the waits read these */
  unlink(err);
  pid_t pid = fork();
  if (pid == 0) {
    int fo = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644), fe = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fo < 0 || fe < 0) _exit(127);
    dup2(fo, 1);
    dup2(fe, 2);
    execv(argv[0], argv);
    _exit(127);
  }
  return pid;
}

/* Waits until `file` holds `text` or the process `pid` has ended (then 0), polling; 1 when seen.
 * The deadline only bounds a broken run: the event, not a time, is what the test waits for. */
static int wait_for_text(const char *file, const char *text, pid_t pid) {
  for (int i = 0; i < 600 * 50; i++) { /* 10 min at 20 ms */
    char *t = NULL;
    size_t cap = 0;
    FILE *f = fopen(file, "r");
    if (f) {
      ssize_t len = getdelim(&t, &cap, 0, f);
      fclose(f);
      int seen = len > 0 && strstr(t, text) != NULL;
      free(t);
      if (seen) return 1;
    }
    if (waitpid(pid, NULL, WNOHANG) == pid) return 0;
    struct timespec ts = {0, 20 * 1000 * 1000};
    nanosleep(&ts, NULL);
  }
  return 0;
}

static int exit_status(pid_t pid) {
  int st;
  if (waitpid(pid, &st, 0) != pid) return -1;
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1000 - (WIFSIGNALED(st) ? WTERMSIG(st) : 0); /* killed: not 143 */
}

/* SIGTERM to a sweep once its progress shows a finished point: it stops at the next point
 * boundary, exits 143 and keeps the finished points (their files, and a sweep file of them
 * marked interrupted); the point under way is dropped. */
static void test_sweep_sigterm_keeps_finished_points(void) {
  tu_write("sig.cfg", "model = \"phold\";\nrun = { end = 1000.0; reps = 2; seed = 5; };\nphold = { lps = 1024; };\n");
  char vals[1024] = "", args[2048];
  const int np = 40;
  for (int p = 0; p < np; p++) snprintf(vals + strlen(vals), sizeof vals - strlen(vals), "%s0.%03d", p ? "," : "", p);
  CU_ASSERT_EQUAL(tu_run("rm -rf sig.h5 sig.points", NULL), 0);
  snprintf(args, sizeof args, "sweep sig.cfg --param phold.remote=%s --out sig.h5", vals);
  pid_t pid = sl_spawn(args, "sig.out", "sig.err");
  CU_ASSERT_FATAL(pid > 0);
  char first[64];
  snprintf(first, sizeof first, "point 1/%d done", np);
  int seen = wait_for_text("sig.err", first, pid);
  CU_ASSERT(seen);
  if (seen) kill(pid, SIGTERM);
  CU_ASSERT_EQUAL(exit_status(pid), 143);
  long k = dset_len("sig.h5", "/sweep/labels");
  CU_ASSERT(k >= 1 && k < np);
  CU_ASSERT_EQUAL(attr_int("sig.h5", "sweep", "interrupted"), 1);
  CU_ASSERT_EQUAL(attr_int("sig.h5", "sweep", "npoints_requested"), np);
  for (long p = 0; p < k; p++) { /* every kept point is a whole results file */
    char pf[64];
    snprintf(pf, sizeof pf, "sig.points/point_%04ld.h5", p);
    CU_ASSERT_EQUAL(attr_int(pf, "meta", "reps"), 2);
    CU_ASSERT_EQUAL(attr_int(pf, "meta", "interrupted"), -1);
  }
  char pk[64];
  snprintf(pk, sizeof pk, "sig.points/point_%04ld.h5", k);
  CU_ASSERT(access(pk, F_OK) != 0); /* the point under way is not kept */
  CU_ASSERT_EQUAL(tu_run("ls sig.h5.tmp.* sig.points/*.tmp.* 2>/dev/null | wc -l | grep -qx 0", NULL), 0);
  char *out;
  char expect[128];
  snprintf(expect, sizeof expect, "stopped by signal 15 after %ld of %d points", k, np);
  CU_ASSERT_EQUAL(tu_run("cat sig.err", &out), 0);
  if (!strstr(out, expect)) fprintf(stderr, "\nexpected '%s' in:\n%s\n", expect, out);
  CU_ASSERT(strstr(out, expect) != NULL);
  free(out);
  /* the report reads the kept points */
  CU_ASSERT_EQUAL(sl("report sig.h5 --out sig-report --gnuplot none --quiet", &out), 0);
  free(out);
}

/* SIGTERM to an experiment once a point has finished (the point runner it shares with the sweep):
 * it stops at the next point boundary, exits 143, writes no experiment file (its analysis needs
 * every point) and keeps the finished points' files, whole; the point under way is dropped. Run
 * again with --resume it keeps exactly those and runs the rest. */
static void test_experiment_sigterm_then_resume(void) {
  tu_write("xsig.cfg", "model = \"phold\";\nrun = { end = 1000.0; reps = 2; seed = 5; };\nphold = { lps = 1024; };\n");
  char levels[1024] = "", text[2048];
  const int np = 40;
  for (int p = 0; p < np; p++)
    snprintf(levels + strlen(levels), sizeof levels - strlen(levels), "%s0.%03d", p ? ", " : "", p);
  snprintf(text, sizeof text,
           "scenario = \"xsig.cfg\";\nfactors = ( { key = \"phold.remote\"; levels = [%s]; } );\n"
           "objectives = [ \"maximize events_per_lp\" ];\n",
           levels);
  tu_write("xsig_exp.cfg", text);
  CU_ASSERT_EQUAL(tu_run("rm -rf xsig.h5 xsig.points", NULL), 0);
  pid_t pid = sl_spawn("experiment xsig_exp.cfg --out xsig.h5", "xsig.out", "xsig.err");
  CU_ASSERT_FATAL(pid > 0);
  char first[64];
  snprintf(first, sizeof first, "point 1/%d done", np);
  int seen = wait_for_text("xsig.err", first, pid);
  CU_ASSERT(seen);
  if (seen) kill(pid, SIGTERM);
  CU_ASSERT_EQUAL(exit_status(pid), 143);
  CU_ASSERT(access("xsig.h5", F_OK) != 0);
  long k = 0; /* the finished points: a prefix, each file whole */
  for (;; k++) {
    char pf[64];
    snprintf(pf, sizeof pf, "xsig.points/point_%04ld.h5", k);
    if (access(pf, F_OK) != 0) break;
    CU_ASSERT_EQUAL(attr_int(pf, "meta", "reps"), 2);
    CU_ASSERT_EQUAL(attr_int(pf, "meta", "interrupted"), -1);
  }
  CU_ASSERT(k >= 1 && k < np);
  CU_ASSERT_EQUAL(tu_run("ls xsig.points | grep -v '^point_[0-9]*\\.h5$' | wc -l | grep -qx 0", NULL), 0);
  char *out, expect[160];
  snprintf(expect, sizeof expect, "stopped by signal 15 after %ld of %d points; no experiment file was written", k, np);
  CU_ASSERT_EQUAL(tu_run("cat xsig.err", &out), 0);
  if (!strstr(out, expect)) fprintf(stderr, "\nexpected '%s' in:\n%s\n", expect, out);
  CU_ASSERT(strstr(out, expect) != NULL);
  free(out);
  CU_ASSERT_EQUAL(sl("experiment xsig_exp.cfg --out xsig.h5 --resume", &out), 0);
  snprintf(expect, sizeof expect, "%ld run, %ld kept from an earlier run", np - k, k);
  if (!strstr(out, expect)) fprintf(stderr, "\nexpected '%s' in:\n%s\n", expect, out);
  CU_ASSERT(strstr(out, expect) != NULL);
  CU_ASSERT(strstr(out, "point 1/40 (phold.remote=0.0): finished earlier, kept") != NULL);
  free(out);
  CU_ASSERT_EQUAL(tu_run("h5dump -H xsig.h5 > /dev/null", NULL), 0);
}

/* sweep --resume: the points whose results file is already there (whole, of the same scenario,
 * value, seed and replications) are kept, not run; a missing point and a point file of another
 * run are run; the sweep file is the one an uninterrupted sweep writes. */
static void test_sweep_resume(void) {
  tu_write("res.cfg", "model = \"phold\";\nrun = { end = 200.0; reps = 2; seed = 5; };\nphold = { lps = 64; };\n");
  CU_ASSERT_EQUAL(tu_run("rm -rf res.h5 res.points res0.h5 res0.points", NULL), 0);
  char *out;
  CU_ASSERT_EQUAL_FATAL(sl("sweep res.cfg --param phold.remote=0.1,0.2,0.3,0.4 --out res0.h5 --quiet", &out), 0);
  free(out);
  /* an interrupted sweep's leftovers: points 0 and 3 done, point 1 missing, point 2 of another seed */
  CU_ASSERT_EQUAL(
      tu_run("mkdir -p res.points && cp res0.points/point_0000.h5 res0.points/point_0003.h5 res.points/", NULL), 0);
  CU_ASSERT_EQUAL_FATAL(
      sl("run res.cfg --param phold.remote=0.3 --seed 6 --out res.points/point_0002.h5 --quiet", &out), 0);
  free(out);
  CU_ASSERT_EQUAL(sl("sweep res.cfg --param phold.remote=0.1,0.2,0.3,0.4 --out res.h5 --resume", &out), 0);
  CU_ASSERT(strstr(out, "point 1/4 (phold.remote=0.1): finished earlier, kept") != NULL);
  CU_ASSERT(strstr(out, "point 4/4 (phold.remote=0.4): finished earlier, kept") != NULL);
  CU_ASSERT(strstr(out, "point 2/4 (phold.remote=0.2): finished earlier") == NULL);
  CU_ASSERT(strstr(out, "point 3/4 (phold.remote=0.3): finished earlier") == NULL); /* another seed: run again */
  if (!strstr(out, "finished earlier, kept")) fprintf(stderr, "%s\n", out);
  free(out);
  CU_ASSERT_EQUAL(tu_run("h5diff res0.h5 res.h5 /sweep/metrics /sweep/metrics", NULL), 0);
  CU_ASSERT_EQUAL(tu_run("h5diff res0.points/point_0002.h5 res.points/point_0002.h5 /metrics /metrics", NULL), 0);
  CU_ASSERT_EQUAL(sl("sweep res.cfg --param phold.remote=0.1,0.2 --out res.h5 --resume --resume", &out), 2);
  free(out);
}

/* sweep with several --param: their full grid, the first key slowest; the sweep file records
 * every key and each point's values; each point is the run of its values; --resume keeps them;
 * a one-key sweep file has no grid datasets (its format as before); a value or key given twice,
 * and a grid beyond 1000 points, are refused before anything runs. */
static void test_sweep_grid(void) {
  tu_write("grid.cfg", "model = \"phold\";\nrun = { end = 50.0; reps = 2; seed = 5; };\nphold = { lps = 64; };\n");
  CU_ASSERT_EQUAL(tu_run("rm -rf grid.h5 grid.points grid1.h5 grid1.points gridp.h5", NULL), 0);
  char *out;
  int rc = sl("sweep grid.cfg --param phold.remote=0.1,0.3 --param phold.mean=0.9,1.2,1.5 --out grid.h5", &out);
  CU_ASSERT_EQUAL_FATAL(rc, 0);
  CU_ASSERT(strstr(out, "6 of 6 points of phold.remote x phold.mean") != NULL);
  CU_ASSERT(strstr(out, "point 2/6 done (phold.remote=0.1 phold.mean=1.2)") != NULL);
  CU_ASSERT(strstr(out, "point 4/6 done (phold.remote=0.3 phold.mean=0.9)") != NULL);
  free(out);
  CU_ASSERT_EQUAL(tu_run("h5dump -d /sweep/keys grid.h5 | grep -q '\"phold.remote\", \"phold.mean\"'", NULL), 0);
  CU_ASSERT_EQUAL(
      tu_run("h5dump -y -d /sweep/key_labels grid.h5 | tr -d '\\n ' | grep -q "
             "'\"0.1\",\"0.9\",\"0.1\",\"1.2\",\"0.1\",\"1.5\",\"0.3\",\"0.9\",\"0.3\",\"1.2\",\"0.3\",\"1.5\"'",
             NULL),
      0);
  CU_ASSERT_EQUAL(tu_run("h5dump -d /sweep/labels grid.h5 | grep -q '\"0.3, 1.5\"'", NULL), 0);
  CU_ASSERT_EQUAL(tu_run("h5dump -A grid.h5 | grep -q '\"phold.remote x phold.mean\"'", NULL), 0);
  /* point 5 (index 4) is the run of phold.remote=0.3 phold.mean=1.2 */
  CU_ASSERT_EQUAL_FATAL(sl("run grid.cfg --param phold.remote=0.3 --param phold.mean=1.2 --out gridp.h5 --quiet", &out),
                        0);
  free(out);
  CU_ASSERT_EQUAL(tu_run("h5diff gridp.h5 grid.points/point_0004.h5 /metrics /metrics", NULL), 0);
  CU_ASSERT_NOT_EQUAL(tu_run("h5diff -q gridp.h5 grid.points/point_0003.h5 /metrics /metrics", NULL), 0);
  /* --resume: every point kept */
  rc = sl("sweep grid.cfg --param phold.remote=0.1,0.3 --param phold.mean=0.9,1.2,1.5 --out grid.h5 --resume", &out);
  CU_ASSERT_EQUAL(rc, 0);
  CU_ASSERT(strstr(out, "point 6/6 (phold.remote=0.3 phold.mean=1.5): finished earlier, kept") != NULL);
  free(out);
  /* under mpirun, points spread over 2 ranks: the same file */
  if (tu_run("command -v mpirun >/dev/null", NULL) == 0) {
    char c[2048];
    snprintf(
        c, sizeof c,
        "rm -rf gridm.h5 gridm.points; mpirun --oversubscribe -np 2 %s sweep grid.cfg --param phold.remote=0.1,0.3 "
        "--param phold.mean=0.9,1.2,1.5 --out gridm.h5 --quiet && h5diff grid.h5 gridm.h5 /sweep/metrics "
        "/sweep/metrics && h5diff grid.h5 gridm.h5 /sweep/key_labels /sweep/key_labels",
        tu_bin());
    CU_ASSERT_EQUAL(tu_run(c, &out), 0);
    free(out);
  }
  /* one key: no grid datasets, x numeric as before */
  CU_ASSERT_EQUAL_FATAL(sl("sweep grid.cfg --param phold.remote=0.1,0.3 --out grid1.h5 --quiet", &out), 0);
  free(out);
  CU_ASSERT_NOT_EQUAL(tu_run("h5ls grid1.h5/sweep | grep -q key", NULL), 0);
  CU_ASSERT_EQUAL(tu_run("h5dump -d /sweep/x grid1.h5 | grep -q '0.1, 0.3'", NULL), 0);
  /* refused before anything runs */
  expect_usage("sweep grid.cfg --param phold.remote=0.1,0.2,0.10", "the value '0.10' is given twice");
  expect_usage("sweep grid.cfg --param phold.remote=0.1,0.2,0.1", "the value '0.1' is given twice");
  expect_usage("sweep grid.cfg --param phold.remote=0.1 --param phold.remote=0.2",
               "--param phold.remote is given twice");
  expect_usage("sweep grid.cfg --param phold.remote=0.1,0.2 --param run.seed=1,2", "run.seed cannot be swept");
  char big[4096];
  int n = snprintf(big, sizeof big, "sweep grid.cfg --param phold.lps=");
  for (int i = 1; i <= 40; i++) n += snprintf(big + n, sizeof big - (size_t)n, "%s%d", i > 1 ? "," : "", i);
  n += snprintf(big + n, sizeof big - (size_t)n, " --param phold.mean=");
  for (int i = 1; i <= 30; i++) n += snprintf(big + n, sizeof big - (size_t)n, "%s%d", i > 1 ? "," : "", i);
  expect_usage(big, "more than 1000 points");
}

/* Runs `spotlab ARGS`, expects exit `want` and `message` in the output. */
static void expect_status(const char *args, int want, const char *message) {
  char *out;
  int rc = sl(args, &out);
  if (rc != want || !strstr(out, message))
    fprintf(stderr, "\nspotlab %s: exit %d, expected %d and '%s' in:\n%s\n", args, rc, want, message, out);
  CU_ASSERT_EQUAL(rc, want);
  CU_ASSERT(strstr(out, message) != NULL);
  free(out);
}

/* An output that is the input, or a folder given as a file, is refused (exit 2) before anything
 * runs; a folder that does not take files is found before the work, with the reason, and every
 * command exits 1 for it (docs/faults.md: one status per kind of failure). */
static void test_outputs_checked_first(void) {
  tu_write("ovw.cfg", "model = \"phold\";\nrun = { end = 20.0; reps = 1; };\nphold = { lps = 16; };\n");
  tu_write("ovwj.cfg", "lab = { workers = 1; };\njobs = ( { name = \"c\"; command = \"true\"; } );\n");
  expect_status("run ovw.cfg --out ovw.cfg --quiet", 2,
                "--out 'ovw.cfg' is the input 'ovw.cfg': it would be overwritten");
  expect_status("run ovw.cfg --out ./ovw.cfg --quiet", 2, "is the input");
  expect_status("lab ovwj.cfg --out ovwj.cfg --journal ovwj.journal", 2, "--out 'ovwj.cfg' is the input 'ovwj.cfg'");
  expect_status("lab ovwj.cfg --journal ovwj.cfg", 2, "--out 'ovwj.cfg' is the input");
  expect_status("sweep ovw.cfg --param phold.remote=0.1,0.2 --out ovw.cfg", 2, "is the input");
  expect_status("report ovw.cfg --out ovw.cfg", 2, "ovw.cfg");
  char *out;
  CU_ASSERT_EQUAL(tu_run("grep -q phold ovw.cfg && grep -q command ovwj.cfg", NULL), 0); /* both still there */
  /* a folder as the results file: refused before the run, not at the rename after it */
  CU_ASSERT_EQUAL(tu_run("mkdir -p ovwdir", NULL), 0);
  expect_status("run ovw.cfg --out ovwdir/ --quiet", 2, "--out 'ovwdir/' is a folder: give a file name");
  expect_status("run ovw.cfg --out ovwdir --quiet", 2, "--out 'ovwdir' is a folder");
  CU_ASSERT_EQUAL(sl("run ovw.cfg --out ovw.h5 --quiet", &out), 0);
  free(out);
  /* a folder that is not there: the reason, exit 1, for every command alike, nothing run */
  const char *cmds[] = {
      "run ovw.cfg --out no_such_dir/x.h5",
      "sweep ovw.cfg --param phold.remote=0.1,0.2 --out no_such_dir/s.h5",
      "merge no_such_dir/m.h5 ovw.h5",
      "lab ovwj.cfg --journal ovwj.journal --out no_such_dir/l.h5",
      "lab ovwj.cfg --journal no_such_dir/j",
      "bench kernels --cpu --kernels triad --strategies even --scale 0.01 --no-calib --out no_such_dir/k.h5",
  };
  for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++) {
    int rc = sl(cmds[i], &out);
    int ok = rc == 1 && strstr(out, "cannot write into the folder 'no_such_dir': No such file or directory") &&
             !strstr(out, "replication") && !strstr(out, "point 1");
    if (!ok) fprintf(stderr, "\nspotlab %s: exit %d:\n%s\n", cmds[i], rc, out);
    CU_ASSERT(ok);
    free(out);
  }
  CU_ASSERT_EQUAL(tu_run("rm -rf ovwdir ovwj.journal", NULL), 0);
}

/* `run --reps N` (or --seed, --param run.*) over a file whose run group is bad: refused as check
 * refuses it, not hidden by the override. */
static void test_override_does_not_hide_bad_file(void) {
  tu_write("badreps.cfg", "model = \"phold\";\nrun = {\n  end = 20.0;\n  reps = 0;\n};\nphold = { lps = 16; };\n");
  expect_status("check badreps.cfg --no-estimate", 2, "badreps.cfg:4: key 'run.reps': value 0 is out of range");
  expect_status("run badreps.cfg --reps 2 --out badreps.h5 --quiet", 2,
                "badreps.cfg:4: key 'run.reps': value 0 is out of range");
  expect_status("run badreps.cfg --param run.reps=2 --out badreps.h5 --quiet", 2, "badreps.cfg:4: key 'run.reps'");
  CU_ASSERT_NOT_EQUAL(access("badreps.h5", F_OK), 0);
  /* 64-bit values end to end: the seed recorded is the one given */
  expect_status("check badreps.cfg --no-estimate --param run.reps=1 --param run.seed=4294967297 --print", 2,
                "key 'run.reps'");
  tu_write("seed64.cfg",
           "model = \"phold\";\nrun = { end = 20.0; reps = 1; seed = 3000000000; };\nphold = { lps = 16; };\n");
  expect_status("check seed64.cfg --no-estimate --print", 0, "seed = 3000000000;");
  expect_status("check seed64.cfg --no-estimate --print --param run.seed=4294967297", 0, "seed = 4294967297;");
  expect_status("check seed64.cfg --no-estimate --param run.seed=99999999999999999999", 2,
                "the integer 99999999999999999999 does not fit in 64 bits");
  tu_write("lps64.cfg", "model = \"phold\";\nphold = {\n  lps = 4294967297;\n};\n");
  expect_status("check lps64.cfg --no-estimate", 2, "lps64.cfg:3: key 'phold.lps': value 4294967297 is out of range");
  expect_status("check seed64.cfg --no-estimate --param 'phold.lps=16; model=\"market\"'", 2, "one key per --param");
  /* an experiment file's integers too: reps = 4294967297 was read as 1 */
  tu_write("xp64.cfg", "scenario = \"seed64.cfg\";\nreps = 4294967297;\nfactors = (\n  { key = \"phold.remote\"; "
                       "levels = [0.1, 0.2]; }\n);\n");
  expect_status("experiment xp64.cfg --out xp64.h5 --quiet", 2, "xp64.cfg:2: reps is a whole number in [1, 10000]");
  CU_ASSERT_NOT_EQUAL(access("xp64.h5", F_OK), 0);
}

/* lab: a trace that exists but cannot be read fails `lab --check`; calibration files that are
 * empty, header-only, with a key twice or figures of two devices are refused at their line,
 * before anything runs. */
static void test_lab_inputs_refused(void) {
  char args[4096];
  tu_write("untrace.cfg", "lab = { workers = 1; };\njobs = (\n  { name = \"s\"; trace = \"/proc/sys/vm/drop_caches\";\n"
                          "    max_replicas = 1; }\n);\n");
  expect_status("lab --check untrace.cfg", 2,
                "untrace.cfg:3: key 'jobs.[0].trace': the trace /proc/sys/vm/drop_caches "
                "cannot be read: Permission denied");
  tu_write("calj.cfg", "lab = { workers = 1; };\njobs = ( { name = \"c\"; command = \"true\"; } );\n");
  const char *good = "key,value,unit,device,note\nworkers,1,workers,dev,x\ncalibrate_s,0.1,s,dev,x\n"
                     "colocated_speed_factor_1,1,1,dev,x\ncommand_s.c,0.01,s,dev,x\n";
  char text[1024];
  tu_write("cal_empty.csv", "");
  tu_write("cal_hdr.csv", "key,value,unit,device,note\n");
  snprintf(text, sizeof text, "%scalibrate_s,0.2,s,dev,x\n", good);
  tu_write("cal_dup.csv", text);
  tu_write("cal_dev.csv", "key,value,unit,device,note\nworkers,1,workers,dev,x\ncalibrate_s,0.1,s,other,x\n"
                          "colocated_speed_factor_1,1,1,dev,x\ncommand_s.c,0.01,s,dev,x\n");
  const char *bad[][2] = {
      {"cal_empty.csv", "cal_empty.csv:1: no calibration figures"},
      {"cal_hdr.csv", "cal_hdr.csv:1: no calibration figures"},
      {"cal_dup.csv", "cal_dup.csv:6: key 'calibrate_s' is given twice (first at line 3)"},
      {"cal_dev.csv", "cal_dev.csv:3: key 'calibrate_s': device 'other', but line 2 says 'dev'"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    CU_ASSERT_EQUAL(tu_run("rm -rf calj.journal calj.h5", NULL), 0);
    snprintf(args, sizeof args, "lab calj.cfg --predict --calibration %s --journal calj.journal --out calj.h5",
             bad[i][0]);
    expect_status(args, 2, bad[i][1]);
    CU_ASSERT_NOT_EQUAL(access("calj.journal", F_OK), 0); /* refused before the journal */
  }
  tu_write("cal_good.csv", good);
  CU_ASSERT_EQUAL(tu_run("rm -rf calj.journal calj.h5", NULL), 0);
  expect_status("lab calj.cfg --predict --calibration cal_good.csv --journal calj.journal --out calj.h5", 0,
                "calibration cal_good.csv read");
  CU_ASSERT_EQUAL(tu_run("rm -rf calj.journal calj.h5", NULL), 0);
}

/* What people expect of a command line: did-you-mean for a misspelt command and model, a results
 * file given as a scenario named as such, a man page and a bash completion written from the
 * option tables (every command, every option, the choices). */
static void test_conventions(void) {
  expect_usage("rn x.cfg", "unknown command 'rn' (did you mean run?");
  expect_usage("reprt r.h5", "unknown command 'reprt' (did you mean report?");
  expect_usage("benh phold", "unknown command 'benh' (did you mean bench?");
  expect_usage("frobnicate", "unknown command 'frobnicate' (spotlab --help lists them)");
  expect_usage("keys markt", "unknown model 'markt' (did you mean market?) (the models: ");
  /* a results file where a scenario goes */
  tu_write("conv.cfg", "model = \"phold\";\nrun = { end = 20.0; reps = 1; };\nphold = { lps = 16; };\n");
  char *out;
  CU_ASSERT_EQUAL_FATAL(sl("run conv.cfg --out conv.h5 --quiet", &out), 0);
  free(out);
  expect_usage("run conv.h5", "conv.h5: is an HDF5 results file, not a scenario: try `spotlab report`");
  expect_usage("check conv.h5", "try `spotlab report`");
  expect_usage("sweep conv.h5 --param phold.remote=0.1,0.2", "try `spotlab report`");
  /* the man page: every command and every option of its table, roff that groff reads cleanly */
  CU_ASSERT_EQUAL_FATAL(sl("--man", &out), 0);
  CU_ASSERT(strncmp(out, ".\\\"", 3) == 0 && strstr(out, "\n.TH SPOTLAB 1 ") != NULL);
  const char *must[] = {".SS \"spotlab run SCENARIO\"",
                        ".SS \"spotlab sweep SCENARIO\"",
                        ".SS \"spotlab bench phold\"",
                        ".SS \"spotlab lab",
                        ".SS \"spotlab merge",
                        ".BI \\-\\-shard \" K/N\"",
                        ".B \\-\\-resume",
                        ".BI \\-\\-spread \" auto|reps|model\"",
                        "(one of auto, reps, model)",
                        ".SH EXIT STATUS"};
  for (size_t i = 0; i < sizeof must / sizeof must[0]; i++) {
    if (!strstr(out, must[i])) fprintf(stderr, "\nspotlab --man lacks %s\n", must[i]);
    CU_ASSERT(strstr(out, must[i]) != NULL);
  }
  free(out);
  if (tu_run("command -v groff >/dev/null", NULL) == 0) {
    char c[4096];
    snprintf(
        c, sizeof c,
        "out=$(\"%s\" --man | groff -man -Tutf8 -ww 2>&1 >/dev/null); [ -z \"$out\" ] || { echo \"$out\"; exit 1; }",
        tu_bin());
    CU_ASSERT_EQUAL(tu_run(c, NULL), 0);
  }
  /* the completion: bash syntax; commands, second words, options and choices complete */
  CU_ASSERT_EQUAL(sl("--completion bash > conv.bash && bash -n conv.bash", NULL), 0);
  const char *cases[][2] = {
      {"spotlab sw", "sweep"},
      {"spotlab bench ph", "phold"},
      {"spotlab run --sp", "--spread"},
      {"spotlab run --spread a", "auto"},
      {"spotlab bench phold --re", "--remote --repeat"},
      {"spotlab sweep --res", "--resume"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char c[1024];
    snprintf(c, sizeof c,
             "bash -c 'source ./conv.bash; COMP_WORDS=(%s); COMP_CWORD=$((${#COMP_WORDS[@]}-1)); _spotlab; "
             "[ \"${COMPREPLY[*]}\" = \"%s\" ] || { echo \"got: ${COMPREPLY[*]}\"; exit 1; }'",
             cases[i][0], cases[i][1]);
    int rc = tu_run(c, &out);
    if (rc) fprintf(stderr, "\ncompletion of '%s': want '%s', %s\n", cases[i][0], cases[i][1], out);
    CU_ASSERT_EQUAL(rc, 0);
    free(out);
  }
  expect_usage("--completion zsh", "usage: spotlab --completion bash");
  /* compare --quiet prints no table (it printed the whole table) */
  CU_ASSERT_EQUAL(sl("compare conv.h5 conv.h5 --out conv_cmp --gnuplot none --quiet", &out), 0);
  CU_ASSERT(strstr(out, "metric") == NULL && strstr(out, "paired replication") == NULL);
  if (strstr(out, "metric")) fprintf(stderr, "\ncompare --quiet printed:\n%s\n", out);
  free(out);
  CU_ASSERT_EQUAL(tu_run("test -s conv_cmp/compare.md && rm -rf conv_cmp", NULL), 0);
}

/* SIGTERM to a run once a replication has finished: the finished replications are written, the
 * file marked interrupted with the count asked for, exit 143. */
static void test_run_sigterm_writes_finished_reps(void) {
  tu_write("sigr.cfg", "model = \"phold\";\nrun = { end = 1000.0; reps = 40; seed = 5; };\nphold = { lps = 1024; };\n");
  unlink("sigr.h5");
  setenv("OMP_NUM_THREADS", "1", 1);
  setenv("SPOTLAB_PROGRESS_SECONDS", "0", 1); /* a line at every replication */
  pid_t pid = sl_spawn("run sigr.cfg --out sigr.h5", "sigr.out", "sigr.err");
  unsetenv("SPOTLAB_PROGRESS_SECONDS");
  unsetenv("OMP_NUM_THREADS");
  CU_ASSERT_FATAL(pid > 0);
  int seen = wait_for_text("sigr.err", "rep 1/40 done", pid);
  CU_ASSERT(seen);
  if (seen) kill(pid, SIGTERM);
  CU_ASSERT_EQUAL(exit_status(pid), 143);
  long reps = attr_int("sigr.h5", "meta", "reps");
  CU_ASSERT(reps >= 1 && reps < 40);
  CU_ASSERT_EQUAL(attr_int("sigr.h5", "meta", "interrupted"), 1);
  CU_ASSERT_EQUAL(attr_int("sigr.h5", "meta", "reps_requested"), 40);
  CU_ASSERT_EQUAL(dset_len("sigr.h5", "/metrics"), reps);
  /* --quiet: no progress at all */
  char *out;
  CU_ASSERT_EQUAL(sl("run sigr.cfg --reps 2 --param run.end=10 --out sigr2.h5 --quiet", &out), 0);
  CU_ASSERT(strstr(out, "done,") == NULL && out[0] == 0);
  free(out);
}

/* A string attribute of /meta, malloc'd ("" when absent or not a string). */
static char *meta_attr(const char *file, const char *name) {
  char *v = NULL;
  hid_t f = H5Fopen(file, H5F_ACC_RDONLY, H5P_DEFAULT);
  hid_t a = f >= 0 && H5Aexists_by_name(f, "meta", name, H5P_DEFAULT) > 0
                ? H5Aopen_by_name(f, "meta", name, H5P_DEFAULT, H5P_DEFAULT)
                : -1;
  hid_t t = a >= 0 ? H5Aget_type(a) : -1;
  if (t >= 0 && H5Tget_class(t) == H5T_STRING && !H5Tis_variable_str(t)) {
    size_t n = H5Tget_size(t);
    v = calloc(n + 1, 1);
    if (v && H5Aread(a, t, v) < 0) v[0] = 0;
  }
  if (t >= 0) H5Tclose(t);
  if (a >= 0) H5Aclose(a);
  if (f >= 0) H5Fclose(f);
  return v ? v : calloc(1, 1);
}

/* Every results file says how it was made: the command line exactly as typed (quoted for a shell:
 * pasted into one it runs again), the git commit, the compiler, the libraries' versions, the host. */
static void test_results_provenance(void) {
  tu_write("pv.cfg", "model = \"phold\";\nrun = { end = 20.0; reps = 1; seed = 3; };\nphold = { lps = 8; };\n");
  unlink("p v.h5");
  char *out, args[256];
  snprintf(args, sizeof args, "run pv.cfg --out 'p v.h5' --param \"run.seed=4\" --param 'phold.lps=1''6' --quiet");
  CU_ASSERT_EQUAL(sl(args, &out), 0);
  free(out);
  char *cl = meta_attr("p v.h5", "command_line");
  char want[8300];
  snprintf(want, sizeof want, "%s run pv.cfg --out 'p v.h5' --param run.seed=4 --param phold.lps=16 --quiet", tu_bin());
  CU_ASSERT_STRING_EQUAL(cl, want);
  free(cl);
  const char *names[] = {"git_commit",  "compiler",          "gsl_version", "hdf5_version",
                         "mpi_version", "libconfig_version", "host"};
  char *v[7];
  for (int i = 0; i < 7; i++) {
    v[i] = meta_attr("p v.h5", names[i]);
    if (!v[i][0] || !strcmp(v[i], "unknown")) fprintf(stderr, "\n/meta %s: '%s'\n", names[i], v[i]);
    CU_ASSERT(v[i][0] != 0);
    if (i) CU_ASSERT_STRING_NOT_EQUAL(v[i], "unknown"); /* git_commit is "unknown" outside a checkout */
  }
  /* the libraries as this test sees them linked (the same Debian packages) */
  CU_ASSERT_STRING_EQUAL(v[2], gsl_version);
  unsigned maj, min, rel;
  H5get_libversion(&maj, &min, &rel);
  char h5v[32];
  snprintf(h5v, sizeof h5v, "%u.%u.%u", maj, min, rel);
  CU_ASSERT_STRING_EQUAL(v[3], h5v);
  CU_ASSERT_PTR_NOT_NULL(strstr(v[4], "MPI"));
  char host[256] = "";
  gethostname(host, sizeof host - 1);
  CU_ASSERT_STRING_EQUAL(v[6], host);
  /* when the source tree is the top of a git checkout: a commit of it (-dirty: it had changes) */
  char cmd2[8000];
  snprintf(cmd2, sizeof cmd2, "[ \"$(git -C '%s' rev-parse --show-toplevel 2>/dev/null)\" -ef '%s' ]", tu_src(),
           tu_src());
  if (tu_run(cmd2, NULL) == 0) {
    char rev[128];
    snprintf(rev, sizeof rev, "%s", v[0]);
    char *dirty = strstr(rev, "-dirty");
    if (dirty && !dirty[6]) *dirty = 0;
    char *g = strstr(rev, "-g"); /* TAG-N-gHASH */
    snprintf(cmd2, sizeof cmd2, "git -C '%s' cat-file -e '%s^{commit}'", tu_src(), g ? g + 2 : rev);
    if (tu_run(cmd2, NULL) != 0) fprintf(stderr, "\ngit_commit '%s' is no commit of %s\n", v[0], tu_src());
    CU_ASSERT_EQUAL(tu_run(cmd2, NULL), 0);
  }
  for (int i = 0; i < 7; i++) free(v[i]);
  unlink("p v.h5");
}

/* A run killed while writing leaves OUT.h5.tmp.PID: the next write to OUT.h5 removes those of
 * processes that are gone, and keeps those of a live process (another run writing now). */
static void test_stale_temporaries(void) {
  tu_write("st.cfg", "model = \"phold\";\nrun = { end = 20.0; reps = 1; seed = 3; };\nphold = { lps = 8; };\n");
  FILE *f = fopen("/proc/sys/kernel/pid_max", "r");
  long pid_max = 4194304;
  if (f) {
    if (fscanf(f, "%ld", &pid_max) != 1) pid_max = 4194304;
    fclose(f);
  }
  char dead[64], live[64];
  snprintf(dead, sizeof dead, "st.h5.tmp.%ld", pid_max + 1); /* no process has that id */
  snprintf(live, sizeof live, "st.h5.tmp.%ld", (long)getpid());
  tu_write(dead, "half a file");
  tu_write(live, "another run's file");
  tu_write("st.h5.tmp.x", "not ours");
  char *out;
  CU_ASSERT_EQUAL(sl("run st.cfg --out st.h5 --quiet", &out), 0);
  free(out);
  CU_ASSERT(access("st.h5", F_OK) == 0);
  CU_ASSERT(access(dead, F_OK) != 0);
  CU_ASSERT(access(live, F_OK) == 0);
  CU_ASSERT(access("st.h5.tmp.x", F_OK) == 0);
  unlink(live);
  unlink("st.h5.tmp.x");
}

/* Files that are no scenario: a directory, a device that never ends, NUL bytes, an @include of a
 * directory; and values strtod would take: a hex duration. Each a FILE(:LINE) error, exit 2. */
static void test_not_scenarios(void) {
  char *out;
  CU_ASSERT_EQUAL(sl("check /dev/zero", &out), 2);
  CU_ASSERT(strstr(out, "/dev/zero: is not a regular file") != NULL);
  free(out);
  CU_ASSERT_EQUAL(sl("check /tmp", &out), 2);
  CU_ASSERT(strstr(out, "/tmp: is a directory") != NULL);
  free(out);
  FILE *f = fopen("nul.cfg", "wb");
  CU_ASSERT_PTR_NOT_NULL_FATAL(f);
  fwrite("model = \"phold\";\n\n\0junk\n", 1, 25, f);
  fclose(f);
  CU_ASSERT_EQUAL(sl("check nul.cfg", &out), 2);
  CU_ASSERT(strstr(out, "nul.cfg:3: holds a NUL byte") != NULL);
  free(out);
  tu_write("inc.cfg", "model = \"phold\";\n@include \"/tmp\"\n");
  CU_ASSERT_EQUAL(sl("check inc.cfg", &out), 2);
  if (!strstr(out, "inc.cfg:2: @include \"/tmp\": is a directory")) fprintf(stderr, "%s\n", out);
  CU_ASSERT(strstr(out, "inc.cfg:2: @include \"/tmp\": is a directory") != NULL);
  CU_ASSERT(strstr(out, "flex") == NULL);
  free(out);
  tu_write("inc2.cfg", "model = \"phold\";\n@include \"/no/such.cfg\"\n");
  CU_ASSERT_EQUAL(sl("check inc2.cfg", &out), 2);
  CU_ASSERT(strstr(out, "inc2.cfg:2: @include \"/no/such.cfg\": No such file") != NULL);
  free(out);
  const char *bad[] = {"0x10h", "inf", "nan", "1e", ".h", "1.5.h"};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    char text[256];
    snprintf(text, sizeof text, "model = \"phold\";\nrun = { end = \"%s\"; };\n", bad[i]);
    tu_write("dur.cfg", text);
    CU_ASSERT_EQUAL(sl("check dur.cfg", &out), 2);
    if (!strstr(out, "dur.cfg:2: key 'run.end'")) fprintf(stderr, "%s: %s\n", bad[i], out);
    CU_ASSERT(strstr(out, "dur.cfg:2: key 'run.end'") != NULL);
    free(out);
  }
  tu_write("dur.cfg", "model = \"phold\";\nrun = { end = \"1.5e2s\"; };\n");
  CU_ASSERT_EQUAL(sl("check dur.cfg", &out), 0);
  free(out);
}

/* Thousands of unknown keys: every one counted, the first 50 shown (with suggestions for those
 * only); and a file of 16,000 settings, which libconfig 1.5 reads in quadratic time (6.3 s here),
 * refused at once at the line where it passes SIM_SCENARIO_MAX_SETTINGS. */
static void many_keys(const char *path, int n) {
  FILE *f = fopen(path, "w");
  CU_ASSERT_PTR_NOT_NULL_FATAL(f);
  fprintf(f, "model = \"phold\";\nphold = {\n");
  for (int i = 0; i < n; i++) fprintf(f, "  junk%d = %d;\n", i, i);
  fprintf(f, "};\n");
  fclose(f);
}
static void test_many_unknown_keys(void) {
  many_keys("many.cfg", 4000);
  char *out;
  CU_ASSERT_EQUAL(sl("check many.cfg", &out), 2);
  CU_ASSERT(strstr(out, "many.cfg:3: key 'phold.junk0': unknown key") != NULL);
  CU_ASSERT(strstr(out, "only the first 50 are shown") != NULL);
  CU_ASSERT(strstr(out, "4000 errors") != NULL);
  CU_ASSERT(strstr(out, "junk60") == NULL);
  free(out);
  many_keys("toomany.cfg", 16000);
  CU_ASSERT_EQUAL(sl("check toomany.cfg", &out), 2);
  if (!strstr(out, "toomany.cfg:5001: more than 5000 settings")) fprintf(stderr, "%s\n", out);
  CU_ASSERT(strstr(out, "toomany.cfg:5001: more than 5000 settings in one scenario file (16002)") != NULL);
  free(out);
}

/* compare of runs of two different models is a bad input (exit 2), not an empty table */
static void test_compare_models(void) {
  tu_write("cp.cfg", "model = \"phold\";\nrun = { end = 20.0; reps = 2; seed = 3; };\nphold = { lps = 8; };\n");
  char *out, args[4096];
  CU_ASSERT_EQUAL(sl("run cp.cfg --out cp_phold.h5 --quiet", &out), 0);
  free(out);
  snprintf(args, sizeof args,
           "run %s/scenarios/mmc_validation.cfg --param run.end=3600 --reps 2 --out cp_mkt.h5 --quiet", tu_src());
  CU_ASSERT_EQUAL(sl(args, &out), 0);
  free(out);
  CU_ASSERT_EQUAL(sl("compare cp_phold.h5 cp_mkt.h5 --out cp_cmp --gnuplot none", &out), 2);
  CU_ASSERT(strstr(out, "different models (phold, market)") != NULL);
  free(out);
  CU_ASSERT_EQUAL(sl("compare cp_phold.h5 cp_phold.h5 --out cp_cmp --gnuplot none", &out), 0);
  free(out);
}

/* A run that cannot fit this machine (result series of 3.2e9 s in one-second billing bins) is
 * refused by check and run before it starts, with what it needs, instead of an allocation failing
 * mid-run and ending in MPI_Abort (exit 3). */
static void replace(char *s, size_t cap, const char *from, const char *to) {
  char *p = strstr(s, from);
  CU_ASSERT_PTR_NOT_NULL_FATAL(p);
  size_t fl = strlen(from), tl = strlen(to), rest = strlen(p + fl);
  CU_ASSERT_FATAL(strlen(s) - fl + tl < cap);
  memmove(p + tl, p + fl, rest + 1);
  memcpy(p, to, tl);
}
/* scenarios/default.cfg into text (cap bytes); its data files are found from any folder (the
 * source tree's data/ for this uninstalled build) */
static void read_default(char *text, size_t cap) {
  char path[4096];
  snprintf(path, sizeof path, "%s/scenarios/default.cfg", tu_src());
  FILE *f = fopen(path, "r");
  CU_ASSERT_PTR_NOT_NULL_FATAL(f);
  size_t n = fread(text, 1, cap - 1, f);
  fclose(f);
  text[n] = 0;
}
static void test_too_big_for_machine(void) {
  static char text[65536];
  read_default(text, sizeof text);
  replace(text, sizeof text, "end = \"7d\";", "end = \"3.2e9s\";");
  replace(text, sizeof text, "billing = \"1h\";", "billing = \"1s\";");
  replace(text, sizeof text, "latency = 1;", "latency = 0.2;");
  tu_write("huge.cfg", text);
  char *out;
  CU_ASSERT_EQUAL(sl("check huge.cfg", &out), 2);
  if (!strstr(out, "for its result series")) fprintf(stderr, "%s\n", out);
  CU_ASSERT(strstr(out, "huge.cfg: the run needs") && strstr(out, "for its result series"));
  free(out);
  CU_ASSERT_EQUAL(sl("run huge.cfg --out huge.h5", &out), 2);
  CU_ASSERT(strstr(out, "nothing was run") != NULL);
  CU_ASSERT(access("huge.h5", F_OK) != 0);
  free(out);
}

/* A model whose state cannot fit (100 million providers in each of five compared worlds: about
 * 500 GB) is refused by check and run before it is built, with what it needs. */
static void test_model_too_big(void) {
  static char text[65536];
  read_default(text, sizeof text);
  replace(text, sizeof text, "providers = 200;", "providers = 100000000;");
  replace(text, sizeof text, "latency = 1;",
          "latency = 1; compare_policies = \"none,checkpoint,standby,replicate,speculative\";");
  tu_write("bigmodel.cfg", text);
  char *out;
  CU_ASSERT_EQUAL(sl("check bigmodel.cfg", &out), 2);
  if (!strstr(out, "for its model state")) fprintf(stderr, "%s\n", out);
  CU_ASSERT(strstr(out, "bigmodel.cfg: the run needs about") && strstr(out, "for its model state"));
  free(out);
  CU_ASSERT_EQUAL(sl("run bigmodel.cfg --out bigmodel.h5", &out), 2);
  CU_ASSERT(strstr(out, "for its model state") && strstr(out, "nothing was run"));
  CU_ASSERT(access("bigmodel.h5", F_OK) != 0);
  free(out);
  /* the case: 10 million providers under a 2 GB address-space limit (about 13 GB); not
   * under AddressSanitizer, whose shadow memory alone exceeds such a limit */
#if !defined(__SANITIZE_ADDRESS__)
  replace(text, sizeof text, "providers = 100000000;", "providers = 10000000;");
  replace(text, sizeof text, " compare_policies = \"none,checkpoint,standby,replicate,speculative\";", "");
  tu_write("tenmillion.cfg", text);
  char cmd2[8192];
  snprintf(cmd2, sizeof cmd2, "ulimit -v 2097152; OMP_NUM_THREADS=1 %s check tenmillion.cfg", tu_bin());
  CU_ASSERT_EQUAL(tu_run(cmd2, &out), 2);
  if (!strstr(out, "for its model state")) fprintf(stderr, "%s\n", out);
  CU_ASSERT(strstr(out, "for its model state") && strstr(out, "more than the 2.15 GB"));
  free(out);
#else
  fprintf(stderr, "\n  (the 2 GB address-space case is skipped under AddressSanitizer)\n");
#endif
}

static double events_of(const char *path) {
  char c[8192], *out;
  snprintf(c, sizeof c, "h5dump -a /reps/rep_0000/events %s", path);
  double v = -1;
  if (tu_run(c, &out) == 0) {
    const char *p = strstr(out, "(0): ");
    if (p) v = atof(p + 5);
  }
  free(out);
  return v;
}

/* check estimates the events of a replication before it runs: counted exactly when the pilot
 * covers the whole run, extrapolated otherwise (compared with the run's own count), and a scenario
 * beyond run.max_events is refused. */
static void test_check_estimates_events(void) {
  char args[4096], *out;
  snprintf(args, sizeof args, "run %s/scenarios/default.cfg --reps 1 --out est7.h5 --quiet", tu_src());
  CU_ASSERT_EQUAL_FATAL(sl(args, &out), 0);
  free(out);
  double actual = events_of("est7.h5");
  CU_ASSERT(actual > 1000);
  snprintf(args, sizeof args, "check %s/scenarios/default.cfg --pilot 3600", tu_src());
  CU_ASSERT_EQUAL(sl(args, &out), 0);
  char want[128];
  snprintf(want, sizeof want, "  %.0f engine events per replication (counted", actual);
  if (!strstr(out, want)) fprintf(stderr, "expected '%s' in:\n%s\n", want, out);
  CU_ASSERT(strstr(out, want) != NULL);
  free(out);

  /* 60 days, a pilot of 0.05 s: extrapolated, within a factor 1.5 of the count */
  snprintf(args, sizeof args, "run %s/scenarios/default.cfg --reps 1 --param 'run.end=\"60d\"' --out est60.h5 --quiet",
           tu_src());
  CU_ASSERT_EQUAL_FATAL(sl(args, &out), 0);
  free(out);
  actual = events_of("est60.h5");
  snprintf(args, sizeof args, "check %s/scenarios/default.cfg --param 'run.end=\"60d\"' --pilot 0.05", tu_src());
  CU_ASSERT_EQUAL(sl(args, &out), 0);
  const char *p = strstr(out, "about ");
  double est = p ? atof(p + 6) : -1;
  if (!(est > actual / 1.5 && est < actual * 1.5))
    fprintf(stderr, "actual %.0f events, check said:\n%s\n", actual, out);
  CU_ASSERT(est > actual / 1.5 && est < actual * 1.5);
  CU_ASSERT(strstr(out, "extrapolated from replication 0's first") != NULL);
  free(out);

  /* beyond run.max_events: refused, with the estimate and what to change */
  snprintf(args, sizeof args, "check %s/scenarios/default.cfg --param run.max_events=1e4", tu_src());
  CU_ASSERT_EQUAL(sl(args, &out), 2);
  CU_ASSERT(strstr(out, "more than run.max_events = 1e+04") && strstr(out, "1 error in"));
  free(out);
  snprintf(args, sizeof args, "check %s/scenarios/default.cfg --param run.max_events=1e4 --no-estimate", tu_src());
  CU_ASSERT_EQUAL(sl(args, &out), 0);
  free(out);
  snprintf(args, sizeof args, "check %s/scenarios/default.cfg --pilot -1", tu_src());
  CU_ASSERT_EQUAL(sl(args, &out), 2);
  CU_ASSERT(strstr(out, "--pilot: '-1' is not a number in [0.001, 3600]") != NULL);
  free(out);
  snprintf(args, sizeof args, "check %s/scenarios/default.cfg --param market.nosuchkey=1", tu_src());
  CU_ASSERT_EQUAL(sl(args, &out), 2);
  CU_ASSERT(strstr(out, "nosuchkey") != NULL);
  free(out);
}

/* The same for a wide-job scenario (scenarios/cluster_32.cfg: 32-GPU jobs gang-placed over rigs of
 * one or two GPUs, five policies): its 3 days counted exactly with the default pilot, and 12 days
 * extrapolated from the default pilot within the factor 1.5 allowed above. The event rate grows over
 * the first day as wide jobs pile up, so a pilot of well under a day underestimates (by 1.5x at a
 * 0.02 s pilot, 2026-12-07): the default one covers about three days here. */
static void test_check_estimates_wide_jobs(void) {
  char args[4096], *out;
  snprintf(args, sizeof args, "run %s/scenarios/cluster_32.cfg --reps 1 --out estw3.h5 --quiet", tu_src());
  CU_ASSERT_EQUAL_FATAL(sl(args, &out), 0);
  free(out);
  double actual = events_of("estw3.h5");
  CU_ASSERT(actual > 1000);
  snprintf(args, sizeof args, "check %s/scenarios/cluster_32.cfg", tu_src());
  CU_ASSERT_EQUAL(sl(args, &out), 0);
  char want[128];
  snprintf(want, sizeof want, "  %.0f engine events per replication (counted", actual);
  if (!strstr(out, want)) fprintf(stderr, "expected '%s' in:\n%s\n", want, out);
  CU_ASSERT(strstr(out, want) != NULL);
  free(out);
  snprintf(args, sizeof args,
           "run %s/scenarios/cluster_32.cfg --reps 1 --param 'run.end=\"12d\"' --out estw12.h5 --quiet", tu_src());
  CU_ASSERT_EQUAL_FATAL(sl(args, &out), 0);
  free(out);
  actual = events_of("estw12.h5");
  snprintf(args, sizeof args, "check %s/scenarios/cluster_32.cfg --param 'run.end=\"12d\"'", tu_src());
  CU_ASSERT_EQUAL(sl(args, &out), 0);
  const char *p = strstr(out, "about ");
  double est = p ? atof(p + 6) : -1;
  if (getenv("SPOTLAB_TEST_VERBOSE") || !(est > actual / 1.5 && est < actual * 1.5))
    fprintf(stderr, "cluster_32, 12 days: actual %.0f events, check said:\n%s\n", actual, out);
  CU_ASSERT(est > actual / 1.5 && est < actual * 1.5);
  CU_ASSERT(strstr(out, "extrapolated from replication 0's first") != NULL);
  free(out);
}

static CU_TestInfo cli_tests[] = {
    {"help and usage errors", test_help},
    {"option tables: repeated, bad values, unknown options, operands", test_option_table_errors},
    {"--help of every command lists every option of its table", test_help_lists_every_option},
    {"--seed, --reps, --spread, --quiet: one declaration, one bound", test_shared_options_one_bound},
    {"bad scenarios: FILE:LINE, exit 2, nothing written", test_bad_scenarios},
    {"check and keys", test_check_and_keys},
    {"metrics: the catalogue, one in full, did you mean, renamed, other models", test_metrics_catalogue},
    {"--param reaches list items by name and index", test_param_list_items},
    {"check estimates events and refuses beyond run.max_events", test_check_estimates_events},
    {"check estimates a wide-job scenario's events (cluster_32) within the same factor",
     test_check_estimates_wide_jobs},
    {"run writes its results file", test_run_writes_results},
    {"results record the command line, commit, compiler, libraries and host", test_results_provenance},
    {"a model state too big for the machine is refused before it is built", test_model_too_big},
    {"stale temporaries of killed runs are removed", test_stale_temporaries},
    {"files that are no scenario, hex durations", test_not_scenarios},
    {"thousands of unknown keys", test_many_unknown_keys},
    {"compare refuses runs of two models", test_compare_models},
    {"SIGTERM to a sweep keeps its finished points", test_sweep_sigterm_keeps_finished_points},
    {"sweep --resume keeps the finished points and runs the others", test_sweep_resume},
    {"SIGTERM to an experiment keeps its finished points; --resume runs the rest", test_experiment_sigterm_then_resume},
    {"sweep over the grid of several --param", test_sweep_grid},
    {"outputs: not the input, not a folder, writable, checked first", test_outputs_checked_first},
    {"an override does not hide a bad file; integers at 64 bits", test_override_does_not_hide_bad_file},
    {"lab: unreadable trace, bad calibration files", test_lab_inputs_refused},
    {"did-you-mean commands and models, results files as scenarios, man page, completion", test_conventions},
    {"SIGTERM to a run writes its finished replications, marked", test_run_sigterm_writes_finished_reps},
    {"a run too big for the machine is refused before it starts", test_too_big_for_machine},
    CU_TEST_INFO_NULL,
};
CU_SuiteInfo spotlab_suites[] = {
    {"cli", NULL, NULL, NULL, NULL, cli_tests},
    CU_SUITE_INFO_NULL,
};
