/* failpoint.h - kill points for the fault-injection suite (tests/kill_points.sh, test_lab).
 *
 * SPOTLAB_KILL=NAME:N in the environment makes the process kill itself with SIGKILL, as a power
 * cut or the kernel's OOM killer would, the N-th time it passes kill point NAME (counted over the
 * whole process, all threads). SPOTLAB_KILL=NAME:0 only counts, and prints
 * "spotlab: kill point NAME passed K times" on stderr at exit, so a test can pick N at random in
 * [1, K]. Unset, as in every user's run, a pass costs one load and a branch.
 *
 * Points: "write" (each 16 KiB an HDF5 writer writes, and once more when the file is whole, before
 * it is renamed), "report" (each file a report or comparison writes), "journal" (each lab journal
 * record, once synced). */
#ifndef SIM_FAILPOINT_H
#define SIM_FAILPOINT_H

void sim_failpoint(const char *name);
/* Arms point `name` to kill at pass n (0: count only); NULL disarms. For tests that fork a child
 * and arm it there; the environment is read at the first pass otherwise. */
void sim_failpoint_arm(const char *name, long n);
/* The same with another signal than SIGKILL: SIGSTOP stops the process there, as a machine that
 * stalls it would, until a SIGCONT (test_lab's runner stalled between two polls). */
void sim_failpoint_arm_signal(const char *name, long n, int sig);
/* Passes of the armed point so far. */
long sim_failpoint_passes(void);

#endif
