#!/usr/bin/env bash
# gpu_check.sh - the one prepared GPU check, for a session that has the H200 test machine
# (15 minutes of device time in all, machine start included; see ../shared/GPU.md).
#
# On the development machine first: scripts/gpu_bundle.sh (builds build-gpu/ with CUDA on and
# fills gpu-bundle/). On the GPU machine, from the repository root:
#     OUT=/some/dir scripts/gpu_check.sh          # $OUT is set by the device runner
# Steps, each under `timeout` (seconds, overridable by the variable named):
#   1. kernel tests: test_kernels (GPU suite included), test_kernels_gpu (the GPU executors
#      through the per-chunk API)                                         T_TEST  (45 each)
#   2. spotlab bench kernels: whole device, partitions, strategies        T_BENCH (120)
#   3. a lab on GPU workers: scenarios/lab/gpu_partitions.cfg --predict   T_LAB   (100)
#      (4 green-context partitions of 8-64 SMs, a kill, a slow fault)
#   4. PHOLD, 16,384 LPs, on 1 rank and under mpirun on 16               T_PHOLD (50 each)
#   5. the market with 1M GPUs in 16 regions for 2 days, under mpirun on 16 ranks (each rank
#      owns a region: one synchronisation window), then on 1 rank          T_MARKET (100, 80)
# At most 590 s if every step ran to its limit (a device command may run 600 s). Steps 4 and 5 use
# the host's own mpirun (MPIRUN, default /usr/bin/mpirun) with its own libmpi: the bundle's MPI
# libraries (gpu-bundle/lib/mpi) are only on the path of the runs without mpirun. The full log,
# every step's output, the HDF5 files and the calibration CSVs go under $OUT; a short summary is
# printed last. Exit status: 0 every step passed, 1 a step failed or a binary is missing (the
# log says which), 2 bad usage.
#   scripts/gpu_check.sh --dry-run     check the binaries and print the steps, run nothing
set -uo pipefail
usage() { sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'; }
DRY=0
for a in "$@"; do
  case "$a" in
    -h | --help) usage; exit 0 ;;
    --dry-run) DRY=1 ;;
    *) echo "gpu_check: unknown option '$a' (--dry-run, --help)" >&2; exit 2 ;;
  esac
done
cd "$(dirname "$0")/.." || exit 1
OUT=${OUT:-gpu-check-out}
BUNDLE=${BUNDLE:-gpu-bundle}
BUILD=${BUILD:-build-gpu}
T_TEST=${T_TEST:-45}
T_BENCH=${T_BENCH:-120}
T_LAB=${T_LAB:-100}
T_PHOLD=${T_PHOLD:-50}
T_MARKET=${T_MARKET:-100}
T_MARKET1=${T_MARKET1:-80}
MPIRUN=${MPIRUN:-/usr/bin/mpirun}
NP=${NP:-16}
mkdir -p "$OUT"
LOG="$OUT/gpu_check.log"
: >"$LOG"
log() { echo "$*" | tee -a "$LOG"; }

find_bin() { # first of bundle/bin, build dir, build/tests
  for p in "$BUNDLE/bin/$1" "$BUILD/$1" "$BUILD/tests/$1"; do
    [ -x "$p" ] && { echo "$p"; return 0; }
  done
  return 1
}
TEST=$(find_bin test_kernels) || { log "gpu_check: no test_kernels in $BUNDLE/bin or $BUILD (run scripts/gpu_bundle.sh)"; exit 1; }
TEST_GPU=$(find_bin test_kernels_gpu) || { log "gpu_check: no test_kernels_gpu in $BUNDLE/bin or $BUILD (run scripts/gpu_bundle.sh)"; exit 1; }
SPOTLAB=$(find_bin spotlab) || { log "gpu_check: no spotlab in $BUNDLE/bin or $BUILD (run scripts/gpu_bundle.sh)"; exit 1; }
if [ ! -x "$MPIRUN" ]; then MPIRUN=$(command -v mpirun || echo "$MPIRUN"); fi

LIB_BASE="$PWD/$BUNDLE/lib:/usr/local/cuda/lib64"
LIB_ALL="$PWD/$BUNDLE/lib:$PWD/$BUNDLE/lib/mpi:/usr/local/cuda/lib64"
export SPOTLAB_DATA="$PWD/data" # data files from this checkout
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl=self,vader
export OMPI_MCA_rmaps_base_oversubscribe=1

declare -A RC SECS
ORDER=()
# step NAME TIMEOUT MPI(0|1) CMD...: runs CMD under timeout, output in $OUT/NAME.txt and the log.
step() {
  local name=$1 t=$2 mpi=$3
  shift 3
  local lib=$LIB_ALL
  [ "$mpi" = 1 ] && lib=$LIB_BASE
  ORDER+=("$name")
  log "== $name (timeout ${t}s): $*"
  if [ "$DRY" = 1 ]; then
    RC[$name]=dry
    SECS[$name]=0
    return 0
  fi
  local t0
  t0=$(date +%s)
  LD_LIBRARY_PATH="$lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" timeout "$t" "$@" >"$OUT/$name.txt" 2>&1
  local rc=$?
  RC[$name]=$rc
  SECS[$name]=$(($(date +%s) - t0))
  cat "$OUT/$name.txt" >>"$LOG"
  log "$name: exit $rc in ${SECS[$name]}s$([ $rc = 124 ] && echo ' (timed out)')"
}

{
  echo "== gpu_check $(date -u +%FT%TZ) on $(hostname), load $(cut -d' ' -f1-3 /proc/loadavg)"
  nvidia-smi -L 2>&1
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem --format=csv 2>&1
  nproc
  grep -m1 'model name' /proc/cpuinfo
  echo "mpirun: $MPIRUN"
} >>"$LOG" 2>&1
if [ "$DRY" = 0 ]; then
  for b in "$TEST" "$SPOTLAB"; do
    if LD_LIBRARY_PATH="$LIB_ALL" ldd "$b" | grep -q 'not found'; then
      LD_LIBRARY_PATH="$LIB_ALL" ldd "$b" >>"$LOG"
      log "gpu_check: $b: missing libraries (see $LOG)"
      exit 1
    fi
  done
fi

step test_kernels "$T_TEST" 0 "$TEST"
step test_kernels_gpu "$T_TEST" 0 "$TEST_GPU"
mkdir -p "$OUT/calibration" "$OUT/lab"
step bench_kernels "$T_BENCH" 0 "$SPOTLAB" bench kernels --out "$OUT/kernels.h5" --calib-dir "$OUT/calibration"
step lab_gpu "$T_LAB" 0 "$SPOTLAB" lab scenarios/lab/gpu_partitions.cfg --predict \
  --journal "$OUT/lab/gpu_partitions.journal" --out "$OUT/lab/gpu_partitions.h5"
rm -rf "$OUT/lab/gpu_partitions.journal.d" # the jobs' outputs (verified by the workers): not needed back
step phold_1 "$T_PHOLD" 0 "$SPOTLAB" bench phold --lps 16384 --end 2000 --repeat 3
step "phold_$NP" "$T_PHOLD" 1 "$MPIRUN" -np "$NP" -x LD_LIBRARY_PATH -x SPOTLAB_DATA "$SPOTLAB" bench phold \
  --lps 16384 --end 2000 --repeat 3 --ranks-info
step "market_$NP" "$T_MARKET" 1 "$MPIRUN" -np "$NP" -x LD_LIBRARY_PATH -x SPOTLAB_DATA "$SPOTLAB" bench market \
  --gpus 1000000 --days 2 --regions 16 --out "$OUT/market_$NP.csv"
step market_1 "$T_MARKET1" 0 "$SPOTLAB" bench market --gpus 1000000 --days 2 --regions 16 --out "$OUT/market_1.csv"

# The short table, last.
status=0
echo
echo "==== gpu_check summary ($(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1))"
printf '%-18s %6s %6s\n' step exit secs
for s in "${ORDER[@]}"; do
  printf '%-18s %6s %6s\n' "$s" "${RC[$s]}" "${SECS[$s]}"
  [ "${RC[$s]}" = 0 ] || [ "${RC[$s]}" = dry ] || status=1
done
[ "$DRY" = 1 ] && exit 0
t() { [ -f "$OUT/$1.txt" ] && cat "$OUT/$1.txt"; }
echo "-- kernel tests"
t test_kernels | grep -E '^(Run Summary|  *tests |  *asserts )|gpu (triad|gemm|mlp)|no GPU' | head -8
t test_kernels_gpu | head -20
echo "-- bench kernels"
t bench_kernels | sed -n '/^kernel /,$p' | grep -E '^kernel |device|dynamic|even  |weighted' | head -40
t bench_kernels | grep -E 'mean efficiency|% of the 3661|/ (plain|cublas)|per-chunk|chunks/s'
ls "$OUT"/calibration/*.csv 2>/dev/null
echo "-- lab on GPU workers: predicted against real"
t lab_gpu | grep -E '^(calibration|predicted makespan)|^job |^(gemm|mlp)[0-9] |GPU found|no GPU|^executors|^worker speeds|^jobs:|^makespan|^ *(makespan|completion p50|completion p99|jobs completed|restarts|workers lost) |^prediction error'
t lab_gpu | grep -E 'spotlab lab:|key .lab.device' | head -5
echo "-- PHOLD, 16384 LPs"
t phold_1 | grep -E '^(spotlab engine|bare heap|engine /)'
t "phold_$NP" | grep -E '^(spotlab engine|bare heap|engine /)'
echo "-- market, 1M GPUs in 16 regions x 2 days, $NP ranks and 1"
t "market_$NP" | grep -A1 -E '^ *GPUs +days'
t "market_$NP" | grep -E '^synchronization windows'
t market_1 | grep -A1 -E '^ *GPUs +days' | tail -1
exit $status
