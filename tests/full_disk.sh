#!/bin/sh
# full_disk.sh SPOTLAB SRC - `spotlab run`, `sweep` and `report` onto a full disk (a 64 KiB
# tmpfs mounted here): a non-zero exit with the reason, no crash (HDF5's exit handler used to
# segfault, exit 139; report printed stray bytes), and no file that looks complete but is not.
# Skipped (77) where tmpfs cannot be mounted (not root).
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
# report: its tables do not fit; the reason is said, and no half table is left
"$bin" run "$src/scenarios/default.cfg" --out ok.h5 --quiet > /dev/null 2>&1 || fail "run to a good disk"
rm -rf "$dir"/*
dd if=/dev/zero of="$dir/fill" bs=1k count=52 2>/dev/null # leaves about 12 KiB
"$bin" report ok.h5 --out "$dir/rep" --gnuplot none > report.out 2>&1; s=$?
cat report.out
[ $s -eq 1 ] || fail "report exit $s (want 1)"
grep -q "writing failed (No space left on device)" report.out || fail "report: no reason given"
for f in summary.md summary.csv; do [ ! -e "$dir/rep/$f" ] || fail "report left a half $f"; done
echo OK
