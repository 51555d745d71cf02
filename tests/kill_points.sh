#!/bin/sh
# kill_points.sh SPOTLAB SRC - `spotlab run`, `sweep`, `report` and `compare` killed with SIGKILL at
# random points of their writes (the kill points of sim/failpoint.h: "write" for every 16 KiB of an
# HDF5 file and once when it is whole, "report" after each figure and table), three seeds each.
# After each kill: the command died of the signal (exit 137), no file with a final name that is not
# whole (results files are checked by h5dump; tables and pages end where they should), and the
# same command run again succeeds and leaves no temporaries behind. The lab's kill points are in
# test_lab ("runner killed at random journal points").
bin=$1; src=$2
work=$(mktemp -d /tmp/spotlab_kill.XXXXXX) || exit 1
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1
fail() { echo "FAIL: $*"; exit 1; }
scn="$src/scenarios/default.cfg"
# passes NAME CMD...: how many times CMD passes kill point NAME when not killed
passes() {
  name=$1; shift
  SPOTLAB_KILL="$name:0" "$@" > /dev/null 2> passes.err || { cat passes.err; fail "$* failed"; }
  n=$(sed -n "s/^spotlab: kill point $name passed \([0-9]*\) times$/\1/p" passes.err)
  [ -n "$n" ] && [ "$n" -gt 0 ] || { cat passes.err; fail "$*: kill point $name never passed"; }
  echo "$n"
}
pick() { # SEED N: a point in [1, N], from the seed
  awk -v s="$1" -v n="$2" 'BEGIN { srand(s); print 1 + int(rand() * n) }'
}
killed_at() { # NAME K CMD...: runs CMD killed at pass K of NAME; fails unless it died of SIGKILL
  name=$1; k=$2; shift 2
  SPOTLAB_KILL="$name:$k" "$@" > killed.out 2>&1; s=$?
  [ $s -eq 137 ] || { cat killed.out; fail "$* with SPOTLAB_KILL=$name:$k: exit $s (want 137, SIGKILL)"; }
}
no_temporaries() { # DIR
  ls -A "$1" | grep -q '\.tmp' && fail "temporaries left in $1: $(ls -A "$1" | grep '\.tmp')"
  return 0
}
whole_text() { # FILE: ends with a newline (tables) or </html> (pages)
  case $1 in
    *.html) tail -c 32 "$1" | grep -q '</html>' ;;
    *) [ "$(tail -c 1 "$1" | od -An -c | tr -d ' ')" = '\n' ] ;;
  esac
}

# run
n=$(passes write "$bin" run "$scn" --reps 2 --out count.h5 --quiet)
echo "run: $n passes of 'write'"
for seed in 1 2 3; do
  k=$(pick $seed "$n")
  rm -f r.h5*
  killed_at write "$k" "$bin" run "$scn" --reps 2 --out r.h5 --quiet
  [ ! -e r.h5 ] || fail "run killed at write $k left r.h5"
  "$bin" run "$scn" --reps 2 --out r.h5 --quiet || fail "run after the kill"
  h5dump -H r.h5 > /dev/null || fail "run after the kill: r.h5 is not whole"
  no_temporaries .
done
# sweep
n=$(passes write "$bin" sweep "$scn" --param market.bidding.fee=0.0,0.05 --reps 1 --out count_sw.h5 --quiet)
echo "sweep: $n passes of 'write'"
for seed in 4 5 6; do
  k=$(pick $seed "$n")
  rm -f sw.h5*
  killed_at write "$k" "$bin" sweep "$scn" --param market.bidding.fee=0.0,0.05 --reps 1 --out sw.h5 --quiet
  [ ! -e sw.h5 ] || fail "sweep killed at write $k left sw.h5"
  "$bin" sweep "$scn" --param market.bidding.fee=0.0,0.05 --reps 1 --out sw.h5 --quiet || fail "sweep after the kill"
  h5dump -H sw.h5 > /dev/null || fail "sweep after the kill: sw.h5 is not whole"
  no_temporaries .
done
# report and compare (figures when gnuplot is there, tables and index.html always)
"$bin" run "$scn" --reps 2 --seed 7 --out after.h5 --quiet || fail "run after.h5"
for cmd in report compare; do
  if [ $cmd = report ]; then set -- "$bin" report r.h5 --out rep; else set -- "$bin" compare r.h5 after.h5 --out rep; fi
  rm -rf rep
  n=$(passes report "$@")
  echo "$cmd: $n passes of 'report'"
  for seed in 7 8 9; do
    k=$(pick $seed "$n")
    rm -rf rep
    killed_at report "$k" "$@"
    for f in rep/*.md rep/*.csv rep/*.html; do
      [ -e "$f" ] || continue
      whole_text "$f" || fail "$cmd killed at report $k left an incomplete $f"
    done
    "$@" > again.out 2>&1 || { cat again.out; fail "$cmd after the kill"; }
    no_temporaries rep
    if [ $cmd = report ]; then whole_text rep/index.html || fail "report after the kill: index.html not whole"; fi
  done
done
echo "PASS"
