#!/bin/sh
# full_disk.sh SPOTLAB SRC - `spotlab run`, `sweep`, `report`, `compare` and `lab` onto a full disk (a 64 KiB
# tmpfs mounted here): a non-zero exit with the reason, no crash (HDF5's exit handler used to
# segfault, exit 139; report printed stray bytes), and no file that looks complete but is not.
# Then the same commands into a read-only folder. Skipped (77) where tmpfs cannot be mounted (not
# root).
# Its own files (ok.h5, the commands' output) go to a folder of its own: ctest runs the tests in
# parallel in one folder, and test_cli writes and removes an ok.h5 there too (under ctest -j2 the
# report and compare here read test_cli's file, or none, and failed).
bin=$(readlink -f "$1"); src=$(readlink -f "$2")
work=$(mktemp -d /tmp/spotlab_fullwork.XXXXXX) || exit 1
dir=$(mktemp -d /tmp/spotlab_full.XXXXXX) || { rm -rf "$work"; exit 1; }
if ! mount -t tmpfs -o size=64k tmpfs "$dir" 2>/dev/null; then rmdir "$dir"; rm -rf "$work"; echo "SKIP: cannot mount a tmpfs"; exit 77; fi
trap 'umount "$dir"; rmdir "$dir"; rm -rf "$work"' EXIT
cd "$work" || exit 1
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
# report with figures: the tables fit, the figures do not (gnuplot exits 0 on a failed write);
# the reason is said, no truncated figure is left, index.html is whole or absent
whole() { # FILE: a figure or page that was written to its end
  case $1 in
    *.svg) tail -c 64 "$1" | grep -q '</svg>' ;;
    *.png) tail -c 16 "$1" | grep -q 'IEND' ;;
    *.html) tail -c 32 "$1" | grep -q '</html>' ;;
  esac
}
if command -v gnuplot >/dev/null 2>&1; then
  rm -rf "$dir"/*
  "$bin" report ok.h5 --out "$dir/rep" > report2.out 2>&1; s=$?
  cat report2.out
  [ $s -eq 1 ] || fail "report with figures exit $s (want 1)"
  grep -q "incomplete" report2.out || fail "report: the incomplete figure is not said"
  for f in "$dir"/rep/*.svg "$dir"/rep/*.png "$dir"/rep/*.html; do
    [ -e "$f" ] || continue
    whole "$f" || fail "report left an incomplete $f"
  done
  ls -A "$dir/rep" | grep -q '\.tmp' && fail "report left temporaries: $(ls -A "$dir/rep")"
  # compare: its tables fit, its figure does not: a non-zero exit, not 0
  rm -rf "$dir"/*
  "$bin" compare ok.h5 ok.h5 --out "$dir/cmp" > compare.out 2>&1; s=$?
  tail -3 compare.out
  [ $s -ne 0 ] && [ $s -lt 128 ] || fail "compare exit $s with its figure unwritten (want a failure)"
  grep -q "figure 'compare'" compare.out || fail "compare: the figure's failure is not said"
  for f in "$dir"/cmp/*.svg "$dir"/cmp/*.png; do [ -e "$f" ] && ! whole "$f" && fail "compare left an incomplete $f"; done
else
  echo "(gnuplot not found: the figure cases are not run)"
fi
# lab: its job outputs fill the disk; a job output's write (or the journal's) fails: that is the
# lab's own failure, not the job's: the lab stops at once with exit 3 and the reason (the errno of
# the failed write, not a stale one), no job is journaled failed (it used to restart each job until
# it gave up), no speed of nan is printed. With room again, --resume ends as a lab that never met a
# full disk: every job completed, as a run on a good disk.
"$bin" lab "$src/scenarios/lab/two_hosts.cfg" --journal good.j --out good.h5 > good.out 2>&1 || { cat good.out; fail "lab on a good disk"; }
want=$(grep '^jobs: ' good.out | sed 's/;.*//')
[ "$want" = "jobs: 5 completed, 0 failed of 5" ] || fail "lab on a good disk: '$want'"
rm -rf "$dir"/*
"$bin" lab "$src/scenarios/lab/two_hosts.cfg" --journal "$dir/j" --out "$dir/lab.h5" > lab.out 2>&1; s=$?
tail -3 lab.out
[ $s -eq 3 ] || fail "lab exit $s (want 3: stopped on its own I/O error)"
grep -q "No space left on device" lab.out || fail "lab: the reason is not said"
grep -q "continue with: spotlab lab .* --resume" lab.out || fail "lab: how to continue is not said"
! grep -qi "nan" lab.out || fail "lab printed nan"
! grep -q '^X ' "$dir/j" || fail "lab journaled a job failure for its own full disk: $(grep '^X ' "$dir/j")"
mount -o remount,size=64m "$dir" || fail "cannot make room (remount)"
"$bin" lab "$src/scenarios/lab/two_hosts.cfg" --journal "$dir/j" --out "$dir/lab.h5" --resume > resume.out 2>&1; s=$?
tail -4 resume.out
[ $s -eq 0 ] || fail "lab --resume after freeing space: exit $s"
got=$(grep '^jobs: ' resume.out | sed 's/;.*//')
[ "$got" = "$want" ] || fail "lab --resume after freeing space: '$got' (a good disk: '$want')"
rm -rf "$dir"/*
mount -o remount,size=64k "$dir" || fail "cannot shrink the tmpfs back to 64 KiB"
# bench kernels --out: its HDF5 table does not fit; no crash in HDF5's exit handler, the reason
# is said, no file is left
rm -rf "$dir"/*
dd if=/dev/zero of="$dir/fill" bs=1k count=58 2>/dev/null # leaves about 6 KiB; the table takes 10
"$bin" bench kernels --cpu --kernels triad --strategies even --scale 0.01 --no-calib --out "$dir/k.h5" > bk.out 2>&1; s=$?
tail -2 bk.out
[ $s -eq 1 ] || fail "bench kernels exit $s (want 1)"
grep -q "$dir/k.h5: writing the kernel table failed (No space left on device)" bk.out || fail "bench kernels: the reason is not said"
[ ! -e "$dir/k.h5" ] && ! ls -A "$dir" | grep -q '\.tmp' || fail "bench kernels left $(ls -A "$dir")"
# a read-only folder (a read-only tmpfs: root ignores file modes): every command says why, exits
# non-zero, and leaves nothing
ro=$(mktemp -d /tmp/spotlab_ro.XXXXXX) || exit 1
mount -t tmpfs -o size=64k,ro tmpfs "$ro" 2>/dev/null || fail "cannot mount a read-only tmpfs"
trap 'umount "$dir"; rmdir "$dir"; umount "$ro"; rmdir "$ro"; rm -rf "$work"' EXIT
# every command: exit 1 (a run-time failure, the same for all: docs/faults.md), the reason
# ("Read-only file system"), and before any work (a run does not simulate first)
ro_case() { # NAME ARGS...: the command must exit 1 and give the reason
  name=$1; shift
  "$bin" "$@" > ro.out 2>&1; s=$?
  [ $s -eq 1 ] && grep -q "Read-only file system" ro.out || { cat ro.out; fail "$name into a read-only folder: exit $s"; }
  ! grep -q "replication\|point 1" ro.out || { cat ro.out; fail "$name worked before finding the folder read-only"; }
}
ro_case run run "$src/scenarios/default.cfg" --reps 1 --out "$ro/x.h5" --quiet
ro_case sweep sweep "$src/scenarios/phold.cfg" --param phold.remote=0.1,0.2 --out "$ro/s.h5" --quiet
ro_case experiment experiment "$src/scenarios/experiment_phold.cfg" --out "$ro/e.h5" --quiet
ro_case report report ok.h5 --out "$ro/rep" --gnuplot none
ro_case compare compare ok.h5 ok.h5 --out "$ro/cmp"
ro_case merge merge "$ro/m.h5" ok.h5
ro_case "bench kernels" bench kernels --cpu --kernels triad --strategies even --scale 0.01 --no-calib --out "$ro/k.h5"
ro_case lab lab "$src/scenarios/lab/two_hosts.cfg" --journal "$ro/j"
ro_case "lab --out" lab "$src/scenarios/lab/two_hosts.cfg" --journal j.journal --out "$ro/l.h5"
[ -z "$(ls -A "$ro")" ] || fail "something was left in the read-only folder"
echo OK
