#!/bin/sh
# experiment_mpi.sh MPIEXEC SPOTLAB SRC - `spotlab experiment` at 2 ranks (each replication over
# both ranks, points one after another) writes the same metrics as at 1 rank (h5diff, exact), and
# --resume at 2 ranks keeps every finished point (rank 0 decides, every rank follows).
mpiexec=$1; bin=$2; src=$3
work=$(mktemp -d /tmp/spotlab_expmpi.XXXXXX) || exit 1
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1
fail() { echo "FAIL: $*"; exit 1; }
exp="$src/scenarios/experiment_phold.cfg"
"$bin" experiment "$exp" --reps 2 --out one.h5 --quiet > /dev/null || fail "1 rank"
"$mpiexec" --oversubscribe -np 2 "$bin" experiment "$exp" --reps 2 --out two.h5 --quiet > /dev/null || fail "2 ranks"
h5diff one.h5 two.h5 /experiment/metrics || fail "2 ranks differ from 1 rank"
"$mpiexec" --oversubscribe -np 2 "$bin" experiment "$exp" --reps 2 --out two.h5 --resume > out.txt 2>&1 ||
  { cat out.txt; fail "2 ranks, --resume"; }
grep -q "0 run, 6 kept" out.txt || { cat out.txt; fail "--resume at 2 ranks did not keep the 6 points"; }
h5diff one.h5 two.h5 /experiment/metrics || fail "2 ranks after --resume differ from 1 rank"
echo "experiment at 2 ranks: same metrics as at 1 rank; --resume kept every point"
