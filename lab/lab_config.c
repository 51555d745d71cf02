/* lab_config.c - the lab job file: keys declared once in sim_param tables (defaults, bounds,
 * help), parsed by the engine's scenario machinery so every problem is reported as FILE:LINE. */
#include "lab/lab.h"
#include "lab/lab_internal.h"
#include "kernels/krn.h"
#include "models/sched/sched.h"
#include "sim/datapath.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *lab_strerror(int err) { return spotlab_strerror(err); } /* sim/errors.h */

static const char *const lab__actions[] = {"kill", "stall", "slow", NULL};
static const char *const lab__devices[] = {"cpu", "gpu", "auto", NULL}; /* lab_device order */

static const sim_param lab__random_params[] = {
    {"rate", SIM_P_DOUBLE, offsetof(lab_random_def, rate), "0", 0, 10, "1/s",
     "random faults per worker per second (Poisson process per worker)"},
    {"action", SIM_P_ENUM, offsetof(lab_random_def, action), "\"kill\"", SIM_UNBOUNDED, NULL,
     "what a random fault does", lab__actions},
    {"until", SIM_P_DURATION, offsetof(lab_random_def, until), "60", 0, 1e6, "s", "no random fault after this time"},
    {"factor", SIM_P_DOUBLE, offsetof(lab_random_def, factor), "0.5", 0.01, 1, "1",
     "slow: the worker's new speed factor"},
    {"duration", SIM_P_DURATION, offsetof(lab_random_def, duration), "0", 0, 1e6, "s",
     "stall: how long (0 = for good)"},
    {NULL},
};

static const sim_param lab__settings_params[] = {
    {"workers", SIM_P_INT, offsetof(lab_settings, workers), "2", 1, LAB__MAX_TWIN_WORKERS, "workers",
     "CPU worker processes (one per GPU or green-context partition where a GPU exists); a real lab runs at "
     "most 64, its simulated twin (lab_simulate) up to 512"},
    {"speeds", SIM_P_DARRAY, offsetof(lab_settings, speeds), "[1.0]", 1, 64, "1",
     "duty cycle of each worker in (0, 1] (one value applies to all)", NULL, NULL, 0, offsetof(lab_settings, nspeeds)},
    {"threads", SIM_P_INT, offsetof(lab_settings, threads), "1", 1, 64, "threads", "OpenMP threads per worker"},
    {"device", SIM_P_ENUM, offsetof(lab_settings, device), "\"cpu\"", SIM_UNBOUNDED, NULL,
     "what workers compute kernel chunks on: cpu (thread groups), gpu (one worker per GPU partition; an "
     "error if no GPU is usable) or auto (gpu if usable, else cpu, said so)",
     lab__devices},
    {"gpu_sms", SIM_P_DARRAY, offsetof(lab_settings, gpu_sms), "[0]", 1, 64, "SMs",
     "GPU workers: each worker's green-context partition of that many SMs, 0 = the whole GPU (one value "
     "applies to all)",
     NULL, NULL, 0, offsetof(lab_settings, ngpu_sms)},
    /* the policy names and defaults are the core's (SCHED_DEFAULT_*, shared with the market) */
    {"policy", SIM_P_STRING, offsetof(lab_settings, policy_text), SCHED_DEFAULT_POLICY_TEXT, SIM_UNBOUNDED, NULL,
     "fault-tolerance policy of the scheduling core: a row of its table (none, checkpoint, standby, replicate, "
     "...) or parts joined by +, such as checkpoint+standby"},
    {"replicas", SIM_P_INT, offsetof(lab_settings, replicas), SCHED_DEFAULT_REPLICAS_TEXT, 2, SCHED_MAX_RUNS, "copies",
     "policy replicate: copies per job"},
    {"standby", SIM_P_INT, offsetof(lab_settings, standby), SCHED_DEFAULT_STANDBY_K_TEXT, 1, 8, "workers",
     "policy standby: standbys per run"},
    {"heartbeat", SIM_P_DURATION, offsetof(lab_settings, heartbeat), "0.2", 0.01, 60, "s",
     "period of worker heartbeats (and progress reports)"},
    {"heartbeat_timeout", SIM_P_DURATION, offsetof(lab_settings, heartbeat_timeout), "1.0", 0.02, 3600, "s",
     "silence after which the core declares a worker lost"},
    {"ckpt_interval", SIM_P_DURATION, offsetof(lab_settings, ckpt_interval), "1.0", 0.05, 1e6, "s",
     "policy checkpoint: time between checkpoints (fixed rule)"},
    {"max_restarts", SIM_P_INT, offsetof(lab_settings, max_restarts), SCHED_DEFAULT_MAX_RESTARTS_TEXT, 0, 1000, "1",
     "interruptions (lost worker, failed run) after which a job is given up"},
    {"respawn", SIM_P_DURATION, offsetof(lab_settings, respawn), "0", 0, 1e6, "s",
     "a killed worker comes back after this long (0 = never)"},
    {"time_limit", SIM_P_DURATION, offsetof(lab_settings, time_limit), "600", 1, 1e7, "s",
     "the lab gives up (exit 1) after this long"},
    {"calibrate", SIM_P_DURATION, offsetof(lab_settings, calibrate), "0.1", 0.01, 10, "s",
     "time each worker spends measuring its speed before it joins"},
    {"predict_calibrate", SIM_P_DURATION, offsetof(lab_settings, predict_calibrate), "0.3", 0.05, 60, "s",
     "--predict: time of each speed measurement of the calibration (each kernel, each worker alone, then "
     "2..N workers at once)"},
    {"predict_rounds", SIM_P_INT, offsetof(lab_settings, predict_rounds), "3", 1, 100, "1",
     "--predict: rounds of the calibration (each figure is the mean of this many, interleaved, as the "
     "machine's load drifts)"},
    {"verify", SIM_P_BOOL, offsetof(lab_settings, verify), "true", SIM_UNBOUNDED, NULL,
     "kernel jobs: check the assembled output against the double-precision reference"},
    {"seed", SIM_P_INT, offsetof(lab_settings, seed), "1", 0, 9e18, "1",
     "seed of the core's generator and of the random faults"},
    {"scale_cooldown", SIM_P_DURATION, offsetof(lab_settings, scale_cooldown), "1.0", 0, 1e6, "s",
     "services: no scale-down sooner than this after the last scaling"},
    {"random", SIM_P_GROUP, offsetof(lab_settings, random), NULL, SIM_UNBOUNDED, NULL, "random faults", NULL,
     lab__random_params},
    {NULL},
};

static const sim_param lab__job_params[] = {
    {"name", SIM_P_STRING, offsetof(lab_job_def, name), NULL, SIM_UNBOUNDED, NULL, "job name (unique)"},
    {"kernel", SIM_P_STRING, offsetof(lab_job_def, kernel), "\"\"", SIM_UNBOUNDED, NULL,
     "built-in kernel job: triad, gemm or mlp"},
    {"command", SIM_P_STRING, offsetof(lab_job_def, command), "\"\"", SIM_UNBOUNDED, NULL,
     "command job: run with /bin/sh -c"},
    {"work", SIM_P_DOUBLE, offsetof(lab_job_def, work), "1.0", 0.001, 1e6, "s",
     "kernel: seconds of work at speed 1.0 on one thread; command: expected seconds"},
    {"at", SIM_P_DURATION, offsetof(lab_job_def, at), "0", 0, 1e6, "s", "submission time"},
    {"seed", SIM_P_INT, offsetof(lab_job_def, seed), "1", 0, 9e18, "1", "kernel: seed of the inputs"},
    {"width", SIM_P_INT, offsetof(lab_job_def, width), "1", 1, LAB__MAX_WIDTH, "workers",
     "kernel: workers per run; the chunk executions are split among them (data-parallel)"},
    {"strategy", SIM_P_ENUM, offsetof(lab_job_def, strategy), "\"dynamic\"", SIM_UNBOUNDED, NULL,
     "width > 1: even (same share each), weighted (shares by calibrated speed) or dynamic (each member "
     "takes the next piece when done)",
     krn_split_names},
    {"trace", SIM_P_STRING, offsetof(lab_job_def, trace), "\"\"", SIM_UNBOUNDED, NULL,
     "service: GenAI request trace (CSV, found on the data path), e.g. "
     "\"traces/alibaba2026_genai_inference_requests.csv\""},
    {"trace_start", SIM_P_DURATION, offsetof(lab_job_def, trace_start), "0", 0, 1e9, "s",
     "service: trace time (from its first request) where the request stream starts"},
    {"time_scale", SIM_P_DOUBLE, offsetof(lab_job_def, time_scale), "600", 1e-3, 1e9, "1",
     "service: trace seconds per lab second"},
    {"requests", SIM_P_INT, offsetof(lab_job_def, requests), "100", 1, 100000, "requests",
     "service: requests taken from the trace"},
    {"work_scale", SIM_P_DOUBLE, offsetof(lab_job_def, work_scale), "0.002", 1e-6, 1e3, "1",
     "service: lab work seconds (speed 1) per trace exec_time_seconds of a request"},
    {"min_replicas", SIM_P_INT, offsetof(lab_job_def, min_replicas), "1", 0, LAB__MAX_REPLICAS, "workers",
     "service: fewest replicas"},
    {"max_replicas", SIM_P_INT, offsetof(lab_job_def, max_replicas), "2", 1, LAB__MAX_REPLICAS, "workers",
     "service: most replicas"},
    {"target_util", SIM_P_DOUBLE, offsetof(lab_job_def, target_util), "0.7", 0.01, 1, "1",
     "service: autoscaling target utilisation (the same for every service of a lab)"},
    {"load_window", SIM_P_DURATION, offsetof(lab_job_def, load_window), "0.5", 0.01, 1e6, "s",
     "service: the offered load is the arrivals of the last load_window s (sampled every load_window / 4)"},
    {NULL},
};

static const sim_param lab__fault_params[] = {
    {"at", SIM_P_DURATION, offsetof(lab_fault_def, at), NULL, 0, 1e6, "s", "when"},
    {"worker", SIM_P_INT, offsetof(lab_fault_def, worker), NULL, 0, 63, "1", "which worker (0-based)"},
    {"action", SIM_P_ENUM, offsetof(lab_fault_def, action), "\"kill\"", SIM_UNBOUNDED, NULL,
     "kill (SIGKILL), stall (SIGSTOP) or slow", lab__actions},
    {"factor", SIM_P_DOUBLE, offsetof(lab_fault_def, factor), "0.5", 0.01, 1, "1",
     "slow: the worker's new speed factor"},
    {"duration", SIM_P_DURATION, offsetof(lab_fault_def, duration), "0", 0, 1e6, "s", "stall: how long (0 = for good)"},
    {NULL},
};

typedef struct lab__top {
  lab_settings lab;
  lab_job_def *jobs;
  size_t njobs;
  lab_fault_def *faults;
  size_t nfaults;
} lab__top;

static const sim_param lab__top_params[] = {
    {"lab", SIM_P_GROUP, offsetof(lab__top, lab), NULL, SIM_UNBOUNDED, NULL, "workers and policy", NULL,
     lab__settings_params},
    {"jobs", SIM_P_LIST, offsetof(lab__top, jobs), NULL, 1, 100000, NULL, "the jobs", NULL, lab__job_params,
     sizeof(lab_job_def), offsetof(lab__top, njobs)},
    {"faults", SIM_P_LIST, offsetof(lab__top, faults), "()", 0, 100000, NULL, "scheduled faults", NULL,
     lab__fault_params, sizeof(lab_fault_def), offsetof(lab__top, nfaults)},
    {NULL},
};

void lab_config_describe(FILE *f) { sim_param_describe(f, "", lab__top_params); }

/* Cross-field checks, each reported at its key's line. */
static int lab__validate(const lab__top *t, const sim_scenario *s, sim_diag *d) {
  int before = d->nerrors;
  char key[96];
  if (t->lab.nspeeds != 1 && t->lab.nspeeds != (size_t)t->lab.workers)
    sim_param_error(s, "lab.speeds", d, "%zu speeds for %lld workers (give one, or one per worker)", t->lab.nspeeds,
                    (long long)t->lab.workers);
  for (size_t i = 0; i < t->lab.nspeeds; i++)
    if (!(t->lab.speeds[i] > 0 && t->lab.speeds[i] <= 1))
      sim_param_error(s, "lab.speeds", d, "speed %g of worker %zu is not in (0, 1]", t->lab.speeds[i], i);
  if (t->lab.ngpu_sms != 1 && t->lab.ngpu_sms != (size_t)t->lab.workers)
    sim_param_error(s, "lab.gpu_sms", d, "%zu partitions for %lld workers (give one, or one per worker)",
                    t->lab.ngpu_sms, (long long)t->lab.workers);
  for (size_t i = 0; i < t->lab.ngpu_sms; i++)
    if (!(t->lab.gpu_sms[i] >= 0 && t->lab.gpu_sms[i] <= 100000 && t->lab.gpu_sms[i] == (double)(int)t->lab.gpu_sms[i]))
      sim_param_error(s, "lab.gpu_sms", d, "partition %g of worker %zu is not a whole number of SMs in [0, 100000]",
                      t->lab.gpu_sms[i], i);
  if (sched_policy_parse(t->lab.policy_text) < 0) {
    char names[512] = "";
    for (int i = 0; sched_policy_names[i]; i++)
      snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s", i ? ", " : "", sched_policy_names[i]);
    sim_param_error(s, "lab.policy", d,
                    "'%s' is not a policy: write one of %s, or parts joined by + such as checkpoint+standby "
                    "(each part once; none combines with nothing)",
                    t->lab.policy_text, names);
  }
  if (t->lab.heartbeat_timeout <= t->lab.heartbeat)
    sim_param_error(s, "lab.heartbeat_timeout", d, "%g s is not longer than lab.heartbeat (%g s)",
                    t->lab.heartbeat_timeout, t->lab.heartbeat);
  for (size_t i = 0; i < t->njobs; i++) {
    const lab_job_def *j = &t->jobs[i];
    int hk = j->kernel && *j->kernel, hc = j->command && *j->command, hs = j->trace && *j->trace;
    if (hs) { /* a service: its requests are pieces of a kernel (gemm unless named) */
      if (hc) {
        snprintf(key, sizeof key, "jobs.[%zu].command", i);
        sim_param_error(s, key, d, "service '%s' (it has a trace) cannot have a command", j->name);
      }
      if (j->width > 1) {
        snprintf(key, sizeof key, "jobs.[%zu].width", i);
        sim_param_error(s, key, d, "a service scales by replicas (min_replicas, max_replicas), not width");
      }
      if (j->max_replicas > t->lab.workers) {
        snprintf(key, sizeof key, "jobs.[%zu].max_replicas", i);
        sim_param_error(s, key, d, "max_replicas %lld is more than the %lld workers", (long long)j->max_replicas,
                        (long long)t->lab.workers);
      }
      if (j->min_replicas > j->max_replicas) {
        snprintf(key, sizeof key, "jobs.[%zu].min_replicas", i);
        sim_param_error(s, key, d, "min_replicas %lld is more than max_replicas %lld", (long long)j->min_replicas,
                        (long long)j->max_replicas);
      }
      /* the trace is found here, on the data path from the job file's folder (its content is read,
       * and checked, when the lab starts) */
      char dir[4096], *found = NULL, why[2048];
      snprintf(dir, sizeof dir, "%s", sim_scenario_path(s) ? sim_scenario_path(s) : "");
      char *sl = strrchr(dir, '/');
      if (sl)
        *sl = 0;
      else
        snprintf(dir, sizeof dir, ".");
      snprintf(key, sizeof key, "jobs.[%zu].trace", i);
      if (sim_data_find(dir, j->trace, &found, why, sizeof why) != 0) {
        sim_param_error(s, key, d, "%s", why);
      } else { /* found is not enough: `lab --check` must fail where the lab would (a file it cannot read) */
        FILE *tf = fopen(found, "r");
        if (!tf)
          sim_param_error(s, key, d, "the trace %s cannot be read: %s", found, strerror(errno));
        else
          fclose(tf);
      }
      free(found);
      for (size_t k2 = 0; k2 < i; k2++)
        if (t->jobs[k2].trace && *t->jobs[k2].trace && t->jobs[k2].target_util != j->target_util) {
          snprintf(key, sizeof key, "jobs.[%zu].target_util", i);
          sim_param_error(s, key, d, "target_util %g differs from service '%s''s %g (the core has one)", j->target_util,
                          t->jobs[k2].name, t->jobs[k2].target_util);
          break;
        }
    } else if (hk == hc) {
      snprintf(key, sizeof key, "jobs.[%zu].name", i);
      sim_param_error(s, key, d, "job '%s' needs exactly one of 'kernel', 'command' and 'trace'", j->name);
    }
    krn_kernel k;
    if (hk && krn_kernel_parse(j->kernel, &k) != 0) {
      snprintf(key, sizeof key, "jobs.[%zu].kernel", i);
      sim_param_error(s, key, d, "unknown kernel '%s' (triad, gemm, mlp)", j->kernel);
    }
    if (j->width > t->lab.workers) {
      snprintf(key, sizeof key, "jobs.[%zu].width", i);
      sim_param_error(s, key, d, "width %lld is more than the %lld workers", (long long)j->width,
                      (long long)t->lab.workers);
    }
    if (hc && j->width > 1) {
      snprintf(key, sizeof key, "jobs.[%zu].width", i);
      sim_param_error(s, key, d, "a command job runs on one worker (width 1); width is for kernel jobs");
    }
    if (hc && strpbrk(j->command, "\n\r")) {
      snprintf(key, sizeof key, "jobs.[%zu].command", i);
      sim_param_error(s, key, d, "a command must fit on one line");
    }
    /* The runner hands a command to its worker in one line of at most LAB__LINE bytes (an atomic
     * pipe write) after "X JOB RUN ": refuse what would not fit rather than run a truncated one. */
    if (hc && strlen(j->command) > LAB__MAX_COMMAND) {
      snprintf(key, sizeof key, "jobs.[%zu].command", i);
      sim_param_error(s, key, d, "the command is %zu bytes; at most %d fit (put a longer one in a script)",
                      strlen(j->command), LAB__MAX_COMMAND);
    }
    for (size_t k2 = 0; k2 < i; k2++)
      if (!strcmp(t->jobs[k2].name, j->name)) {
        snprintf(key, sizeof key, "jobs.[%zu].name", i);
        sim_param_error(s, key, d, "job name '%s' is used twice (first as job %zu)", j->name, k2);
        break;
      }
    /* a job's name becomes a file name in JOURNAL.d: letters, digits, '.', '_' and '-' only, not
     * starting with a dot (no "..", no hidden files, no path, no newline) */
    size_t nl = strlen(j->name);
    if (nl == 0 || nl > 15 || j->name[0] == '.' || strspn(j->name, LAB__NAME_CHARS) != nl) {
      snprintf(key, sizeof key, "jobs.[%zu].name", i);
      char shown[64];
      size_t o = 0;
      for (const char *p = j->name; *p && o + 5 < sizeof shown; p++) /* control characters shown escaped */
        o +=
            (size_t)snprintf(shown + o, sizeof shown - o, (unsigned char)*p < 32 ? "\\x%02x" : "%c", (unsigned char)*p);
      sim_param_error(s, key, d,
                      "job name '%s': 1 to 15 letters, digits, '.', '_' or '-', not starting with '.' (it names "
                      "a file)",
                      shown);
    }
  }
  for (size_t i = 0; i < t->nfaults; i++)
    if (t->faults[i].worker >= t->lab.workers) {
      snprintf(key, sizeof key, "faults.[%zu].worker", i);
      sim_param_error(s, key, d, "worker %lld does not exist (lab.workers = %lld)", (long long)t->faults[i].worker,
                      (long long)t->lab.workers);
    }
  return d->nerrors > before ? LAB_ECONFIG : 0;
}

/* "FILE:LINE" of key `key` in the job file (the file alone when the key is absent). */
static void lab__key_at(const sim_scenario *s, const char *key, char *out, size_t len) {
  sim_diag at;
  sim_diag_init(&at, NULL);
  sim_param_error(s, key, &at, "@");
  char pat[96];
  snprintf(pat, sizeof pat, ": key '%s'", key);
  char *mark = strstr(at.first, pat);
  if (mark) *mark = '\0';
  snprintf(out, len, "%s", mark ? at.first : sim_scenario_path(s));
}

static int lab__load(sim_scenario *s, sim_diag *d, lab_config **out) {
  *out = NULL;
  if (!s) return LAB_ECONFIG;
  lab__top t;
  memset(&t, 0, sizeof t);
  if (sim_param_parse(s, "", lab__top_params, &t, NULL, d) != 0) {
    sim_scenario_free(s);
    return LAB_ECONFIG;
  }
  if (lab__validate(&t, s, d) != 0) {
    sim_param_free(lab__top_params, &t);
    sim_scenario_free(s);
    return LAB_ECONFIG;
  }
  t.lab.policy = sched_policy_parse(t.lab.policy_text);
  lab_config *c = calloc(1, sizeof *c);
  char *eff = NULL;
  size_t efflen = 0;
  FILE *m = open_memstream(&eff, &efflen);
  if (!c || !m) {
    if (m) fclose(m);
    free(c);
    sim_param_free(lab__top_params, &t);
    sim_scenario_free(s);
    return LAB_ENOMEM;
  }
  sim_param_dump(m, "", lab__top_params, &t);
  fclose(m);
  /* a service without a kernel serves its requests with gemm */
  for (size_t i = 0; i < t.njobs; i++)
    if (t.jobs[i].trace && *t.jobs[i].trace && !*t.jobs[i].kernel) {
      char *g = strdup("gemm");
      if (!g) {
        free(eff);
        free(c);
        sim_param_free(lab__top_params, &t);
        sim_scenario_free(s);
        return LAB_ENOMEM;
      }
      free(t.jobs[i].kernel);
      t.jobs[i].kernel = g;
    }
  c->lab = t.lab;
  c->jobs = t.jobs;
  c->njobs = t.njobs;
  c->faults = t.faults;
  c->nfaults = t.nfaults;
  /* Where lab.device and lab.workers are, for the runner: whether a GPU is usable is known only
   * once a worker has probed it, and how many workers it forks at most is its own bound. */
  lab__key_at(s, "lab.device", c->device_at, sizeof c->device_at);
  lab__key_at(s, "lab.workers", c->workers_at, sizeof c->workers_at);
  c->path = strdup(sim_scenario_path(s));
  c->text = strdup(sim_scenario_text(s));
  c->effective = eff;
  sim_scenario_free(s);
  if (!c->path || !c->text) {
    lab_config_free(c);
    return LAB_ENOMEM;
  }
  *out = c;
  return 0;
}

int lab_config_load(const char *path, sim_diag *d, lab_config **out) {
  return lab__load(sim_scenario_load(path, d), d, out);
}
int lab_config_load_string(const char *text, const char *name, sim_diag *d, lab_config **out) {
  return lab__load(sim_scenario_load_string(text, name, d), d, out);
}

void lab_config_free(lab_config *c) {
  if (!c) return;
  lab__top t = {c->lab, c->jobs, c->njobs, c->faults, c->nfaults};
  sim_param_free(lab__top_params, &t);
  free(c->path);
  free(c->text);
  free(c->effective);
  free(c);
}
