#!/bin/sh
# full_disk.sh SPOTLAB SRC - `spotlab run` and `spotlab sweep` onto a full disk (a 64 KiB tmpfs
# mounted here): a non-zero exit with the reason, no crash (HDF5's exit handler used to segfault,
# exit 139), and nothing left behind. Skipped (77) where tmpfs cannot be mounted (not root).
bin=$1; src=$2
dir=$(mktemp -d /tmp/spotlab_full.XXXXXX) || exit 1
if ! mount -t tmpfs -o size=64k tmpfs "$dir" 2>/dev/null; then rmdir "$dir"; echo "SKIP: cannot mount a tmpfs"; exit 77; fi
trap 'umount "$dir"; rmdir "$dir"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
"$bin" run "$src/scenarios/default.cfg" --out "$dir/d.h5" --quiet > run.out 2>&1; s=$?
cat run.out
[ $s -eq 1 ] || fail "run exit $s (want 1)"
grep -q "writing the results failed (No space left on device)" run.out || fail "run: no reason given"
[ -z "$(ls -A "$dir")" ] || fail "run left $(ls -A "$dir")"
"$bin" sweep "$src/scenarios/default.cfg" --param market.bidding.fee=0.0,0.05 --reps 1 --out "$dir/sw.h5" --quiet > sweep.out 2>&1; s=$?
cat sweep.out
[ $s -ne 0 ] && [ $s -ne 139 ] && [ $s -lt 128 ] || fail "sweep exit $s (want a failure, not a crash)"
! grep -q "Segmentation\|signal" sweep.out || fail "sweep crashed"
ls -A "$dir" | grep -q '\.tmp\.' && fail "sweep left temporaries: $(ls -A "$dir")"
echo OK
