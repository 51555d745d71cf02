#!/bin/sh
# merge_test.sh SPOTLAB SRC [MPIEXEC] - `spotlab run --shard K/N` and `spotlab merge`: the shards of a run,
# merged in any order, are identical dataset by dataset (h5diff, exact) to one process running
# every replication, also when a shard itself ran over 2 ranks; and merge refuses, writing
# nothing, parts that leave a gap, overlap, come from another run (seed, --param, run.reps), are
# damaged or are no results file, and an output that is one of its parts.
bin=$1; src=$2; mpiexec=${3:-mpirun}
work=$(mktemp -d /tmp/spotlab_merge.XXXXXX) || exit 1
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1
fail() { echo "FAIL: $*"; exit 1; }
scn="$src/scenarios/default.cfg"
args="--reps 5 --param run.end=86400.0"
run() { "$bin" run "$scn" $args --quiet "$@" || fail "spotlab run $* failed"; }
same() {
  for o in /metrics /summary /meta/scenario /meta/effective $(for r in 0 1 2 3 4; do printf '/reps/rep_%04d/series /reps/rep_%04d/tables ' $r $r; done); do
    h5diff "$1" "$2" "$o" > /dev/null || { h5diff "$1" "$2" "$o" | head -n 20; fail "$2 differs from $1 in $o"; }
  done
  # the metric catalogue (attributes of /metrics, which h5diff does not compare)
  for a in names units labels formulas over weights censored; do
    h5dump -a "/metrics/$a" "$1" | tail -n +2 > a1.txt && h5dump -a "/metrics/$a" "$2" | tail -n +2 > a2.txt &&
      grep -q . a1.txt && cmp -s a1.txt a2.txt || fail "$2 differs from $1 in the attribute /metrics/$a"
  done
}
# refused WHAT-IT-SAYS OUT PARTS...: merge exits 2, says it, and writes nothing
refused() {
  want=$1; shift
  "$bin" merge "$@" > out.txt 2> err.txt; s=$?
  [ $s -eq 2 ] || { cat err.txt; fail "merge $*: exit $s, want 2"; }
  grep -q "$want" err.txt || { cat err.txt; fail "merge $*: the message does not say '$want'"; }
  [ ! -e "$1" ] || fail "merge $* left $1 behind"
  ls | grep -q '\.tmp\.' && fail "merge $* left a temporary file"
  return 0
}
run --out single.h5
run --shard 0/3 --out p0.h5
run --shard 1/3 --out p1.h5
OMPI_MCA_rmaps_base_oversubscribe=1 "$mpiexec" --oversubscribe -np 2 "$bin" run "$scn" $args --quiet --shard 2/3 --out p2.h5 ||
  fail "a shard over 2 ranks failed"
h5dump -a /meta/part_first p1.h5 | grep -q '(0): 1$' || fail "p1.h5 has no /meta/part_first 1"
"$bin" merge merged.h5 p2.h5 p0.h5 p1.h5 > out.txt || fail "merge of 3 shards failed: $(cat out.txt)"
same single.h5 merged.h5
h5dump -a /meta/reps merged.h5 | grep -q '(0): 5$' || fail "merged.h5: /meta/reps is not 5"
h5dump -a /meta/part_first merged.h5 > /dev/null 2>&1 && fail "merged.h5 still has /meta/part_first"
"$bin" report merged.h5 --out rep > /dev/null || fail "spotlab report cannot read the merged file"
# one part holding every replication: merge is a copy
"$bin" merge whole.h5 single.h5 > /dev/null || fail "merge of one whole file failed"
same single.h5 whole.h5
# 5 replications in 5 shards of one each
for k in 0 1 2 3 4; do run --shard $k/5 --out s$k.h5; done
"$bin" merge five.h5 s4.h5 s3.h5 s2.h5 s1.h5 s0.h5 > /dev/null || fail "merge of 5 shards failed"
same single.h5 five.h5

refused "replications 1-2 of 5 are in no part" bad.h5 p0.h5 p2.h5
refused "replication 4 of 5 is in no part" bad.h5 p0.h5 p1.h5 s3.h5
refused "replications 3-4 of 5 are in no part" bad.h5 p0.h5 p1.h5
refused "both hold replication" bad.h5 p0.h5 p1.h5 p1.h5 p2.h5
run --shard 0/2 --out h0.h5 # replications 0-1: overlaps p1 (1-2)
refused "both hold replication 1" bad.h5 h0.h5 p1.h5 p2.h5
run --shard 1/3 --seed 7 --out seed7.h5
refused "differ in their base seed (7 against 1)" bad.h5 p0.h5 seed7.h5 p2.h5
run --shard 1/3 --param market.bidding.fee=0.07 --out fee.h5
refused "differ in their effective scenario keys" bad.h5 p0.h5 fee.h5 p2.h5
"$bin" run "$scn" --reps 6 --param run.end=86400.0 --quiet --shard 1/3 --out six.h5 || fail "run --reps 6 failed"
refused "differ in their number of replications" bad.h5 p0.h5 six.h5 p2.h5
cp p1.h5 damaged.h5 && printf 'X' | dd of=damaged.h5 bs=1 seek=4000 conv=notrunc status=none
refused "damaged file" bad.h5 p0.h5 damaged.h5 p2.h5
echo "not hdf5" > text.h5
refused "not a spotlab results file" bad.h5 p0.h5 text.h5 p2.h5
cp p0.h5 p0.copy
"$bin" merge p0.h5 p0.h5 p1.h5 p2.h5 2> err.txt && fail "merge into one of its parts was accepted"
grep -q "is also one of the parts" err.txt || { cat err.txt; fail "merge into a part: no reason given"; }
cmp -s p0.h5 p0.copy || fail "merge into one of its parts changed it"
refused "usage" bad.h5
refused "cannot read the file" bad.h5 p0.h5 missing.h5 p2.h5
# bad shards: refused before anything runs
for s in 3/3 -1/3 1/0 x 1/3x; do
  "$bin" run "$scn" $args --quiet --shard "$s" --out x.h5 2> err.txt && fail "run --shard $s was accepted"
  grep -q "expected K/N" err.txt || { cat err.txt; fail "run --shard $s: no 'expected K/N'"; }
done
"$bin" run "$scn" --reps 2 --param run.end=86400.0 --quiet --shard 1/3 --out x.h5 2> err.txt && fail "3 shards of 2 replications were accepted"
grep -q "fewer than 3 parts" err.txt || { cat err.txt; fail "3 shards of 2: no reason given"; }
[ ! -e x.h5 ] || fail "a refused shard wrote x.h5"
echo "merge: shards merged = single-process run; 12 bad inputs refused"
