/* progress.h - progress lines with an ETA for long commands, and a clean stop on SIGINT/SIGTERM.
 *
 * Progress: "rep 3/8 done, 37%, 12.3 s elapsed, ETA 21 s" on stderr. On a terminal the line is
 * rewritten in place (\r) at each step and every second; elsewhere (a batch job's log) a new line
 * at most every SPOTLAB_PROGRESS_SECONDS (default 5; 0: at every step), also while nothing
 * finishes, so a log shows the run is alive. The ETA is the remaining units at the mean rate so far.
 *
 * Stop: app_stop_install() catches SIGINT and SIGTERM; the commands ask app_stop_signal() at
 * each replication or point boundary and stop there, keeping what finished. A second signal acts
 * at once (the handler is reset after the first).
 */
#ifndef APP_PROGRESS_H
#define APP_PROGRESS_H

typedef struct app_progress app_progress;

/* Starts a progress report over `total` units named `unit` ("rep", "point"). Returns NULL (no
 * report; every function below takes NULL) when quiet, or on any rank but 0. */
app_progress *app_progress_start(const char *unit, int total, int quiet);
/* Whether the engine's own in-place line should show inside each unit (a terminal, one unit at a
 * time): then this report prints one line per finished unit and no timer line. */
int app_progress_engine_lines(app_progress *p, int one_at_a_time);
/* One more unit finished; `detail` ("phold.remote=0.5") or NULL; `always`: print the line whatever
 * the interval (a sweep's point). Thread-safe. */
void app_progress_step(app_progress *p, const char *detail, int always);
/* Stops the timer, ends the in-place line, and frees. */
void app_progress_end(app_progress *p);

/* Catches SIGINT and SIGTERM (once; later calls do nothing). */
void app_stop_install(void);
/* The signal that asked for a stop, or 0. Async-signal-safe to read; any thread. */
int app_stop_signal(void);
/* The same, agreed over every MPI rank (a collective under mpirun with several ranks: call it at
 * the same point on every rank); the largest signal number any rank got. */
int app_stop_agreed(void);
/* The exit status for a stop by signal `sig`: 128 + sig (130 SIGINT, 143 SIGTERM). */
int app_stop_status(int sig);

#endif
