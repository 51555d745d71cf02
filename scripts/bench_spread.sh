#!/bin/bash
# bench_spread.sh [--repeat N] [--out FILE] [--model] [--threshold] - how work spread over ranks compares
# with threads, side by side (docs/history/performance-log.md, "Spreading work over ranks").
#
# Replications: the issue's command, `spotlab run scenarios/default.cfg --reps 8 --param
# 'run.end="30d"'`, in one process with one thread, one process with two OpenMP threads, and two
# MPI ranks (mpirun -np 2, one thread each: --spread auto, which spreads whole replications), run
# in turn N times (default 3) so that the machine's load falls on all three alike; prints each
# one's median and fastest wall time (of the whole command: start-up, MPI launch and the results
# file included) and the ratios of the medians, and writes the table to FILE (default
# results/bench_spread.txt).
#
# --model adds a fourth: two ranks with --spread model, each replication partitioned over both
# (what mpirun did before replications were spread whole).
#
# --threshold adds the measurement behind APP_SPREAD_MODEL_MIN_LPS (app/runner.h): one replication
# of the market (`spotlab bench market --days 1`) at 10k, 50k and 200k single-GPU providers on one
# rank and partitioned over two, in turn: where partitioning one replication starts to pay.
#
# Environment: SPOTLAB (default build/spotlab), MPIEXEC (default mpirun); as root,
# OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1.
set -euo pipefail
repeat=3 out=results/bench_spread.txt threshold=0 model=0
while [ $# -gt 0 ]; do
  case $1 in
    --repeat) repeat=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --threshold) threshold=1; shift ;;
    --model) model=1; shift ;;
    -h|--help) sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "bench_spread.sh: unknown option $1 (--help)" >&2; exit 2 ;;
  esac
done
bin=${SPOTLAB:-build/spotlab} mpiexec=${MPIEXEC:-mpirun}
[ -x "$bin" ] || { echo "bench_spread.sh: $bin is not built (make, or SPOTLAB=...)" >&2; exit 2; }
tmp=$(mktemp -d /tmp/spotlab_bench_spread.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$(dirname "$out")"

# wall CMD...: runs CMD (its output to $tmp/log) and prints its wall seconds
wall() {
  local t0 t1
  t0=$(date +%s.%N)
  "$@" > "$tmp/log" 2>&1 || { cat "$tmp/log" >&2; echo "bench_spread.sh: $* failed" >&2; exit 1; }
  t1=$(date +%s.%N)
  echo "$t0 $t1" | awk '{ printf "%.3f\n", $2 - $1 }'
}
stats() { # FILE of numbers -> "median min"
  sort -g "$1" | awk '{ v[NR] = $1 } END { m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2; printf "%.3f %.3f\n", m, v[1] }'
}

scn=scenarios/default.cfg
args=(--reps 8 --param 'run.end="30d"' --quiet)
load0=$(cut -d' ' -f1-3 /proc/loadavg)
names=("1 process, 1 thread" "1 process, 2 threads" "2 ranks (mpirun -np 2)" "2 ranks, --spread model")
: > "$tmp/t0"; : > "$tmp/t1"; : > "$tmp/t2"; : > "$tmp/t3"
for ((i = 1; i <= repeat; i++)); do
  OMP_NUM_THREADS=1 wall "$bin" run "$scn" "${args[@]}" --out "$tmp/a.h5" >> "$tmp/t0"
  OMP_NUM_THREADS=2 wall "$bin" run "$scn" "${args[@]}" --out "$tmp/b.h5" >> "$tmp/t1"
  OMP_NUM_THREADS=1 wall "$mpiexec" -np 2 "$bin" run "$scn" "${args[@]}" --out "$tmp/c.h5" >> "$tmp/t2"
  if [ $model = 1 ]; then
    OMP_NUM_THREADS=1 wall "$mpiexec" -np 2 "$bin" run "$scn" "${args[@]}" --spread model --out "$tmp/d.h5" >> "$tmp/t3"
  fi
done
for o in /metrics /summary; do # the three are the same run
  h5diff "$tmp/a.h5" "$tmp/b.h5" $o > /dev/null && h5diff "$tmp/a.h5" "$tmp/c.h5" $o > /dev/null ||
    { echo "bench_spread.sh: the runs differ in $o" >&2; exit 1; }
  if [ $model = 1 ] && ! h5diff "$tmp/a.h5" "$tmp/d.h5" $o > /dev/null; then
    echo "bench_spread.sh: --spread model differs in $o" >&2; exit 1
  fi
done
{
  echo "# $bin run $scn --reps 8 --param 'run.end=\"30d\"', $repeat runs each, in turn; $(date -u '+%Y-%m-%d %H:%M UTC')"
  echo "# load average before: $load0, cores: $(nproc)"
  printf '%-26s %10s %10s %14s %14s\n' "configuration" "median s" "min s" "/ 1 thread" "/ 2 threads"
  read -r m0 n0 < <(stats "$tmp/t0")
  read -r m1 n1 < <(stats "$tmp/t1")
  for k in 0 1 2 $([ $model = 1 ] && echo 3); do
    read -r m n < <(stats "$tmp/t$k")
    printf '%-26s %10.3f %10.3f %14.3f %14.3f\n' "${names[$k]}" "$m" "$n" "$(awk -v a="$m" -v b="$m0" 'BEGIN{print a/b}')" \
      "$(awk -v a="$m" -v b="$m1" 'BEGIN{print a/b}')"
  done
  if [ $threshold = 1 ]; then
    echo
    echo "# one replication of the market partitioned over ranks: $bin bench market --gpus N --days 1"
    printf '%-10s %10s %14s %14s %10s\n' "GPUs=LPs" "ranks" "median s" "min s" "2 / 1 rank"
    for g in 10000 50000 200000; do
      : > "$tmp/g1"; : > "$tmp/g2"
      for ((i = 1; i <= repeat; i++)); do
        wall "$bin" bench market --gpus $g --days 1 --out "$tmp/m1.txt" >> "$tmp/g1"
        OMP_NUM_THREADS=1 wall "$mpiexec" -np 2 "$bin" bench market --gpus $g --days 1 --out "$tmp/m2.txt" >> "$tmp/g2"
      done
      read -r a an < <(stats "$tmp/g1")
      read -r b bn < <(stats "$tmp/g2")
      printf '%-10s %10s %14.3f %14.3f %10s\n' $g 1 "$a" "$an" ""
      printf '%-10s %10s %14.3f %14.3f %10.3f\n' $g 2 "$b" "$bn" "$(awk -v a="$b" -v b="$a" 'BEGIN{print a/b}')"
    done
  fi
  echo "# load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
} | tee "$out"
