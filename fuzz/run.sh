#!/usr/bin/env bash
# fuzz/run.sh BUILD SECONDS [TARGET...] - builds the seed corpora from the repository's own files
# and runs each libFuzzer target for SECONDS (make fuzz calls it; docs/fuzzing.md). Corpora grow in
# BUILD/corpus/NAME across runs; crashes land in BUILD/crashes/NAME. Prints one line per target:
# executions, seconds, corpus size, and FAIL with the crash file when a target found one. Exit 1
# when any did.
set -euo pipefail
cd "$(dirname "$0")/.."
build=$1 secs=$2
shift 2
targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=(scenario labjobs traces results report)
seeds=$build/seeds
rm -rf "$seeds"
mkdir -p "$seeds"/{scenario,labjobs,traces,results,report}
cp scenarios/*.cfg "$seeds/scenario/"
cp scenarios/lab/*.cfg "$seeds/labjobs/"
# traces: the first byte picks the loader (0 pods, 1 GenAI, 2 GPU table, 3 calibration, 4 churn
# fits); the first 60 lines of each file
i=0
for f in data/traces/alibaba2023_openb_pods_default.csv data/traces/alibaba2026_genai_inference_requests.csv \
         data/gpus.csv data/calibration/cpu-amd-epyc.csv data/churn_fta_fits.csv; do
  { printf "\\x0$i"; head -n 60 "$f"; } > "$seeds/traces/seed_$i"
  i=$((i + 1))
done
# results: two small runs of the instrumented binary (a market with tables, a PHOLD model)
"$build/spotlab" run scenarios/mmc_validation.cfg --param run.end=7200 --param run.reps=2 \
  --out "$seeds/results/mmc.h5" --quiet >/dev/null 2>&1 || true
"$build/spotlab" run scenarios/phold.cfg --param run.end=10 --param run.reps=1 \
  --out "$seeds/results/phold.h5" --quiet >/dev/null 2>&1 || true
# report: a sweep file and an experiment file of PHOLD, and the two results files above
printf 'model = "phold";\nrun = { seed = 3; reps = 2; end = 10.0; };\nphold = { lps = 16; start = 1; lookahead = 0.1; mean = 0.9; remote = 0.1; };\n' \
  > "$build/seeds/sweep_phold.cfg"
"$build/spotlab" sweep "$build/seeds/sweep_phold.cfg" --param phold.remote=0.1,0.5 --out "$seeds/report/sweep.h5" \
  --quiet >/dev/null 2>&1 || true
"$build/spotlab" experiment scenarios/experiment_phold.cfg --reps 2 --out "$seeds/report/exp.h5" --quiet \
  >/dev/null 2>&1 || true
rm -rf "$seeds/report/sweep.points" "$seeds/report/exp.points"
cp "$seeds"/results/*.h5 "$seeds/report/" 2>/dev/null || true
export LSAN_OPTIONS="suppressions=$PWD/fuzz/lsan.supp:print_suppressions=0"
# Whose bug a crash input shows: replays it and names the first stack frame that is not the
# sanitizer's own (interceptors, allocator): a shared library (ours to report upstream, not to fix)
# or spotlab's source.
owner() {
  local out frame rc
  out=$("$1" "$2" 2>&1); rc=$?
  if [ $rc -eq 0 ]; then printf 'unreproduced'; return; fi # it crashed in fork mode only (memory pressure)
  frame=$(printf '%s\n' "$out" | grep -E '^ +#[0-9]+ ' |
          grep -v -E ' in (__interceptor_|__asan|__sanitizer|__ubsan|malloc|calloc|realloc|free|fuzzer::)' |
          grep -v -E '/fuzz_[a-z]+\+0x|sysdeps/|/libc\.so|libc_start' | head -1)
  if printf '%s' "$frame" | grep -q '\.so'; then
    printf 'library %s' "$(printf '%s' "$frame" | grep -o '[A-Za-z0-9_.+-]*\.so[.0-9]*' | head -1)"
  else
    printf 'spotlab %s' "$(printf '%s' "$frame" | sed 's/.* in //')"
  fi
}
fail=0
for t in "${targets[@]}"; do
  corpus=$build/corpus/$t crashes=$build/crashes/$t log=$build/fuzz_$t.log
  rm -rf "$crashes"
  mkdir -p "$corpus" "$crashes"
  max_len=65536
  case $t in results | report) max_len=262144 ;; esac
  # fork mode: a crash is recorded and the campaign goes on (a library's bug does not end it)
  set +e
  "$build/fuzz/fuzz_$t" -fork=1 -ignore_crashes=1 -ignore_ooms=1 -ignore_timeouts=1 -max_total_time="$secs" \
    -max_len=$max_len -timeout=10 -rss_limit_mb=2048 -artifact_prefix="$crashes/" "$corpus" "$seeds/$t" >"$log" 2>&1
  set -e
  runs=$(grep -o '^#[0-9]*' "$log" | tail -1 | tr -d '#')
  cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1 | grep -o '[0-9]*' || echo 0)
  n=$(ls "$corpus" | wc -l)
  ours=0 lib=0 unrep=0 libs=""
  for c in "$crashes"/*; do
    [ -e "$c" ] || continue
    who=$(owner "$build/fuzz/fuzz_$t" "$c")
    case $who in
      library*) lib=$((lib + 1)); libs="$libs ${who#library }";;
      unreproduced) unrep=$((unrep + 1));;
      *) ours=$((ours + 1)); echo "fuzz_$t: spotlab crash $c: ${who#spotlab }";;
    esac
  done
  [ $lib -gt 0 ] && libs=$(printf '%s\n' $libs | sort | uniq -c | awk '{printf "%s%s x%s", (NR > 1 ? ", " : ""), $2, $1}')
  echo "fuzz_$t: ${runs:-0} executions in $secs s, coverage $cov edges, corpus $n inputs, crashes in spotlab $ours," \
       "in libraries $lib${libs:+ ($libs)}, not reproduced alone $unrep"
  [ $ours -eq 0 ] || fail=1
done
exit $fail
