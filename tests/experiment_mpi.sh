#!/bin/sh
# experiment_mpi.sh MPIEXEC SPOTLAB SRC - `spotlab experiment` under mpirun, through the point runner
# it shares with `spotlab sweep`: at 3 ranks (whole points over the ranks) and at 2 ranks with
# --spread model (each replication over both ranks, points one after another) it writes the same
# experiment file as at 1 rank (h5diff of the whole /experiment group, exact) and the same point
# files; --resume under mpirun keeps every finished point, either way.
mpiexec=$1; bin=$2; src=$3
work=$(mktemp -d /tmp/spotlab_expmpi.XXXXXX) || exit 1
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1
fail() { echo "FAIL: $*"; exit 1; }
exp="$src/scenarios/experiment_phold.cfg"
mkdir one three two || exit 1
same() { # DIR: DIR/e.h5 and its points are one/'s
  h5diff one/e.h5 "$1/e.h5" /experiment /experiment || fail "$1: the experiment file differs from 1 rank's"
  for p in 0 1 2 3 4 5; do
    f=e.points/point_000$p.h5
    h5diff one/$f "$1/$f" /metrics /metrics && h5diff one/$f "$1/$f" /summary /summary ||
      fail "$1: point $p differs from 1 rank's"
  done
}
"$bin" experiment "$exp" --reps 2 --out one/e.h5 --quiet > /dev/null || fail "1 rank"
"$mpiexec" --oversubscribe -np 3 "$bin" experiment "$exp" --reps 2 --out three/e.h5 > three/out.txt 2>&1 ||
  { cat three/out.txt; fail "3 ranks"; }
grep -q "6 points over 3 ranks: spread points" three/out.txt || { cat three/out.txt; fail "3 ranks: points not spread"; }
same three
"$mpiexec" --oversubscribe -np 2 "$bin" experiment "$exp" --reps 2 --spread model --out two/e.h5 > two/out.txt 2>&1 ||
  { cat two/out.txt; fail "2 ranks, --spread model"; }
grep -q "spread model" two/out.txt || { cat two/out.txt; fail "2 ranks: --spread model not used"; }
same two
for n in 3 2; do
  d=$( [ $n = 3 ] && echo three || echo two )
  rm -f $d/e.h5 $d/e.points/point_0004.h5
  "$mpiexec" --oversubscribe -np $n "$bin" experiment "$exp" --reps 2 --out $d/e.h5 --resume > $d/res.txt 2>&1 ||
    { cat $d/res.txt; fail "$n ranks, --resume"; }
  grep -q "1 run, 5 kept" $d/res.txt || { cat $d/res.txt; fail "--resume at $n ranks did not keep the 5 points"; }
  same $d
done
echo "experiment at 3 ranks (points) and 2 ranks (--spread model): the files of 1 rank; --resume kept every point"
