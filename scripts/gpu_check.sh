#!/usr/bin/env bash
# gpu_check.sh - the one prepared GPU check, for a session that has the H200 test machine
# (15 minutes of device time in all, machine start included; see ../shared/GPU.md).
#
# On the development machine first: scripts/gpu_bundle.sh (builds build-gpu/ with CUDA on and
# fills gpu-bundle/). On the GPU machine, from the repository root:
#     OUT=/some/dir scripts/gpu_check.sh          # $OUT is set by the device runner
# It runs the kernel tests (GPU suite included) and `spotlab bench kernels` with timeouts,
# writes the full log, the table, the HDF5 file and the calibration CSV under $OUT, and prints a
# short summary last. Exit status: 0 all passed, 1 something failed (the log says what).
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-gpu-check-out}
BUNDLE=${BUNDLE:-gpu-bundle}
BUILD=${BUILD:-build-gpu}
T_TEST=${T_TEST:-150}   # seconds for the kernel tests
T_BENCH=${T_BENCH:-330} # seconds for the benchmark
mkdir -p "$OUT"
LOG="$OUT/gpu_check.log"
: >"$LOG"

find_bin() { # first of bundle/bin, build dir, build/tests
  for p in "$BUNDLE/bin/$1" "$BUILD/$1" "$BUILD/tests/$1"; do
    [ -x "$p" ] && { echo "$p"; return 0; }
  done
  return 1
}
export LD_LIBRARY_PATH="$PWD/$BUNDLE/lib:/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

log() { echo "$*" | tee -a "$LOG"; }
status=0
{
  echo "== gpu_check $(date -u +%FT%TZ) on $(hostname)"
  nvidia-smi -L 2>&1
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem --format=csv 2>&1
  nproc; grep -m1 'model name' /proc/cpuinfo
} >>"$LOG" 2>&1

TEST=$(find_bin test_kernels) || { log "gpu_check: no test_kernels in $BUNDLE/bin or $BUILD (run scripts/gpu_bundle.sh)"; exit 1; }
if BENCH=$(find_bin spotlab); then BENCH_CMD=("$BENCH" bench kernels)
elif BENCH=$(find_bin krn_bench_cli); then BENCH_CMD=("$BENCH" bench kernels)
else log "gpu_check: no spotlab or krn_bench_cli binary"; exit 1; fi
ldd "$TEST" | grep -q 'not found' && { ldd "$TEST" >>"$LOG"; log "gpu_check: missing libraries (see log)"; exit 1; }

log "== kernel tests ($TEST, timeout ${T_TEST}s)"
t0=$(date +%s)
timeout "$T_TEST" "$TEST" >"$OUT/test_kernels.txt" 2>&1
rc_test=$?
cat "$OUT/test_kernels.txt" >>"$LOG"
log "test_kernels: exit $rc_test in $(( $(date +%s) - t0 ))s"
[ $rc_test -eq 0 ] || status=1

log "== ${BENCH_CMD[*]} (timeout ${T_BENCH}s)"
t0=$(date +%s)
timeout "$T_BENCH" "${BENCH_CMD[@]}" --out "$OUT/kernels.h5" --calib-dir "$OUT/calibration" \
  >"$OUT/bench_kernels.txt" 2>"$OUT/bench_kernels.err"
rc_bench=$?
cat "$OUT/bench_kernels.err" "$OUT/bench_kernels.txt" >>"$LOG"
log "bench kernels: exit $rc_bench in $(( $(date +%s) - t0 ))s"
[ $rc_bench -eq 0 ] || status=1

# The short table, last.
echo
echo "==== gpu_check summary ($(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1))"
grep -E '^(Run Summary|  *tests |  *asserts )|gpu (triad|gemm|mlp)|no GPU' "$OUT/test_kernels.txt" | head -8
echo "test_kernels exit $rc_test; bench exit $rc_bench"
sed -n '/^kernel /,$p' "$OUT/bench_kernels.txt" | grep -E '^kernel |device|dynamic|even  |weighted' | head -40
grep -E 'mean efficiency|% of the 3661|/ (plain|cublas)|per-chunk|chunks/s' "$OUT/bench_kernels.txt"
ls "$OUT"/calibration/*.csv 2>/dev/null
exit $status
