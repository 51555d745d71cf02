#!/bin/bash
# slurm_test.sh SPOTLAB SRC - the Slurm workflow (docs/slurm.md, scripts/slurm/) against a real
# Slurm controller and compute daemon started here: munged with its own key and socket, slurmctld
# and slurmd from a slurm.conf written into a temporary folder (this host as the only node,
# proctrack/linuxproc, task/none, no accounting, free ports). Then:
#   1. submit_array.sh: a job array of 3 shards of 5 replications, and the merge after it; the
#      merged file is compared, dataset by dataset (h5diff, exact), with a single-process run;
#   2. run_all.sbatch: one job of 2 tasks under srun --mpi=pmix; compared the same way.
# Every wait polls for a state or a file (with a deadline), never a fixed sleep. The daemons are
# stopped by the PIDs this script started (trap on exit). Exit 77 (skipped) only when the daemons
# are not installed or cannot be started, saying why.
set -u
bin=$(readlink -f "$1"); src=$(readlink -f "$2")
skip() { echo "SKIP: $*"; exit 77; }
fail() { echo "FAIL: $*"; for f in "$work"/*.log "$work"/jobs/*.out; do [ -f "$f" ] && { echo "== $f"; tail -n 30 "$f"; }; done; exit 1; }
for c in munged slurmctld slurmd sbatch sinfo scontrol scancel h5diff python3; do
  command -v "$c" > /dev/null 2>&1 || skip "$c is not installed (Debian: apt-get install slurm-wlm munge hdf5-tools)"
done
[ "$(id -u)" = 0 ] || skip "the daemons run as root here (SlurmUser root) and this test is not root"
work=$(mktemp -d /tmp/spotlab_slurm.XXXXXX) || exit 1
chmod 700 "$work"
pids=()
cleanup() {
  [ -n "${SLURM_CONF:-}" ] && scancel --quiet --user=root > /dev/null 2>&1
  for p in "${pids[@]}"; do kill "$p" 2> /dev/null; done
  for p in "${pids[@]}"; do wait "$p" 2> /dev/null; done
  rm -rf "$work"
}
trap cleanup EXIT
# until DEADLINE_S CMD...: polls CMD every 0.1 s until it succeeds; 1 when the deadline passes
until_ok() {
  local end=$((SECONDS + $1)); shift
  while ! "$@" > /dev/null 2>&1; do
    [ $SECONDS -ge $end ] && return 1
    sleep 0.1
  done
}
host=$(hostname -s)
read -r p1 p2 < <(python3 -c 'import socket
s=[socket.socket() for _ in range(2)]
[x.bind(("", 0)) for x in s]
print(*[x.getsockname()[1] for x in s])')

# munge: a key of our own, a socket in the work folder
dd if=/dev/urandom of="$work/munge.key" bs=1024 count=1 status=none && chmod 400 "$work/munge.key"
munged --foreground --force --socket="$work/munge.sock" --key-file="$work/munge.key" --pid-file="$work/munged.pid" \
  --log-file="$work/munged.log" --seed-file="$work/munged.seed" > "$work/munged.out.log" 2>&1 &
pids+=($!)
until_ok 30 test -S "$work/munge.sock" || skip "munged did not start: $(tail -n 3 "$work"/munged*.log)"

mkdir -p "$work/state" "$work/spool" "$work/jobs"
cat > "$work/slurm.conf" << CONF
ClusterName=spotlabtest
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$p1
SlurmdPort=$p2
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$work/munge.sock
StateSaveLocation=$work/state
SlurmdSpoolDir=$work/spool
SlurmctldPidFile=$work/slurmctld.pid
SlurmdPidFile=$work/slurmd.pid
SlurmctldLogFile=$work/slurmctld.log
SlurmdLogFile=$work/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
MinJobAge=600
NodeName=$host NodeAddr=127.0.0.1 CPUs=$(nproc) State=UNKNOWN
PartitionName=test Nodes=$host Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE:4
CONF
export SLURM_CONF=$work/slurm.conf
slurmctld -D -f "$SLURM_CONF" > "$work/slurmctld.out.log" 2>&1 &
pids+=($!)
slurmd -D -f "$SLURM_CONF" > "$work/slurmd.out.log" 2>&1 &
pids+=($!)
idle() { sinfo -h -n "$host" -o %T | grep -qx idle; }
until_ok 60 idle || skip "slurmctld/slurmd did not bring node $host up: $(tail -n 3 "$work"/slurm*.log)"
echo "slurm: node $host idle (controller port $p1, slurmd port $p2)"

# The scripts run in a copy of what they need: the job's folder is the submission folder
cd "$work/jobs" || exit 1
export SPOTLAB=$bin SCENARIO=$src/scenarios/default.cfg SPOTLAB_ARGS="--reps 5 --param run.end=86400.0"
"$bin" run "$SCENARIO" $SPOTLAB_ARGS --out single.h5 --quiet || fail "the single-process run failed"

same() { # A B: every dataset the run writes, identical
  local o
  for o in /metrics /summary /meta/scenario /meta/effective $(for r in 0 1 2 3 4; do printf '/reps/rep_%04d/series /reps/rep_%04d/tables ' $r $r; done); do
    h5diff "$1" "$2" "$o" > /dev/null || { h5diff "$1" "$2" "$o" | head -n 20; return 1; }
  done
}
# job_done ID: every task of job ID finished (completed, failed, cancelled ...: no pending or running)
job_done() { ! scontrol -o show job "$1" | grep -qE 'JobState=(PENDING|RUNNING|CONFIGURING|COMPLETING)'; }
job_ok() { ! scontrol -o show job "$1" | grep -v 'JobState=COMPLETED' | grep -q .; }

# 1. the job array and the merge after it
export OUT=merged.h5 PARTS=parts
ids=$("$src/scripts/slurm/submit_array.sh" 3) || fail "submit_array.sh failed"
read -r array merge <<< "$ids"
echo "slurm: array job $array, merge job $merge"
until_ok 600 job_done "$merge" || fail "the merge job $merge did not finish in 600 s"
job_ok "$array" || fail "array job $array: $(scontrol -o show job "$array" | grep -o 'JobState=[A-Z]*' | sort | uniq -c)"
job_ok "$merge" || fail "merge job $merge: $(scontrol -o show job "$merge" | grep -o 'JobState=[A-Z]*')"
[ "$(ls parts/part_*.h5 | wc -l)" = 3 ] || fail "the array wrote $(ls parts | wc -l) parts, not 3"
same single.h5 merged.h5 || fail "merged.h5 (3 array tasks) differs from the single-process run"
h5dump -a /meta/spread merged.h5 | grep -q '"merged"' || fail "merged.h5's /meta/spread is not \"merged\""
echo "slurm: 3 array tasks merged = single-process run"

# 2. one job, two tasks under srun --mpi=pmix
one=$(OUT=one.h5 sbatch --parsable --ntasks=2 "$src/scripts/slurm/run_all.sbatch") || fail "sbatch run_all.sbatch failed"
until_ok 600 job_done "$one" || fail "job $one did not finish in 600 s"
job_ok "$one" || fail "job $one (run_all.sbatch): $(scontrol -o show job "$one" | grep -o 'JobState=[A-Z]*')"
same single.h5 one.h5 || fail "one.h5 (2 ranks under srun) differs from the single-process run"
grep -q "over 2 ranks: spread reps" spotlab-run-"$one".out || fail "run_all's job did not run on 2 ranks: $(cat spotlab-run-"$one".out)"
echo "slurm: one job over 2 ranks (srun --mpi=pmix) = single-process run"
