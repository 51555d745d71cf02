/* lab_core.c - the scheduling core as a lab sets it up and speaks to it: its configuration from
 * the job file, and the events' content (a worker joining, a job arriving). The real runner
 * (lab_glue.c, lab_run.c) and the simulated twin (lab_sim.c) both build theirs here, so that the
 * twin's core is the lab's: same policy, same timers, same GPUs, same job specs. */
#include "lab/lab_internal.h"

#include <string.h>

void lab__core_config(const lab_config *cfg, sched_sink sink, void *ctx, sched_config *sc) {
  sched_config_default(sc);
  sc->max_gpus = sc->max_providers = (uint32_t)cfg->lab.workers;
  sc->max_nodes = 1;
  sc->max_jobs = (uint32_t)cfg->njobs;
  sc->sink = sink;
  sc->sink_ctx = ctx;
  sc->seed = (uint64_t)cfg->lab.seed;
  sc->policy = (sched_policy)cfg->lab.policy;
  sc->ckpt_rule = SCHED_CKPT_FIXED;
  sc->ckpt_interval_s = cfg->lab.ckpt_interval;
  sc->standby_k = (unsigned)cfg->lab.standby;
  sc->replicas = (unsigned)cfg->lab.replicas;
  sc->heartbeat_timeout_s = cfg->lab.heartbeat_timeout;
  sc->max_restarts = (unsigned)cfg->lab.max_restarts;
  sc->queue_scan = (unsigned)(cfg->njobs < 64 ? cfg->njobs : 64);
  /* services: the lab's cool-down and target (the core's defaults are for hours) */
  sc->cooldown_s = cfg->lab.scale_cooldown;
  for (size_t j = 0; j < cfg->njobs; j++)
    if (lab__is_service(&cfg->jobs[j])) sc->target_util = cfg->jobs[j].target_util;
}

void lab__core_event(const lab_config *cfg, const lab__svc *svc, sched_event *ev, int type, double t, uint32_t gpu,
                     uint32_t job, uint32_t run, double value) {
  memset(ev, 0, sizeof *ev);
  ev->type = (sched_ev_type)type;
  ev->t = t;
  ev->gpu = gpu;
  ev->job = job;
  ev->run = run;
  ev->value = value;
  if (type == SCHED_EV_GPU_JOIN) {
    /* One provider per worker, one node, one region and class: the lab's machines are alike
     * except for their measured speed. The link is a LAN (1 Gbit/s, 1 ms). */
    ev->u.gpu.provider = gpu;
    ev->u.gpu.score = value;
    ev->u.gpu.price_per_h = 1.0;
    ev->u.gpu.link.bw_bps = 1e9;
    ev->u.gpu.link.rtt_s = 1e-3;
  } else if (type == SCHED_EV_JOB_ARRIVE) {
    const lab_job_def *jd = &cfg->jobs[job];
    ev->u.job.kind = lab__is_service(jd) ? SCHED_JOB_SERVICE : SCHED_JOB_BATCH;
    ev->u.job.width = (uint16_t)jd->width;
    ev->u.job.region = -1;
    ev->u.job.work = jd->work;
    if (lab__is_service(jd)) {
      ev->u.job.min_replicas = (uint16_t)jd->min_replicas;
      ev->u.job.max_replicas = (uint16_t)jd->max_replicas;
      ev->u.job.req_per_score_s = svc[job].req_per_score_s;
    }
  }
}
