# The kernels module: CPU twins, strategies on the emulated CPU cluster, GPU path (a clean
# "no device" here; the full GPU checks where one is present). Built with CUDA when nvcc is there,
# so a passing run also shows that the CUDA build compiles, links and starts without libcuda.
spotlab_add_test(test_kernels SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_kernels.c LIBS spotlab_kernels)

# The `spotlab bench kernels` command on its own: app/main.c (dispatch, option helpers) and the
# command file, without the engine, so the command is tested even while the engine is elsewhere.
add_executable(krn_bench_cli ${CMAKE_SOURCE_DIR}/app/main.c ${CMAKE_SOURCE_DIR}/app/cli.c ${CMAKE_SOURCE_DIR}/app/cmd_bench_kernels.c
               ${CMAKE_SOURCE_DIR}/sim/failpoint.c # h5mem.h's kill points
               ${CMAKE_SOURCE_DIR}/sim/engine_opts.c) # main.c's check of the engine's switches
target_link_libraries(krn_bench_cli PRIVATE spotlab_kernels MPI::MPI_C PkgConfig::HDF5 PkgConfig::ZLIB ${M_LIBRARY})
set(KRN_CLI $<TARGET_FILE:krn_bench_cli>)
add_test(NAME kernels_cli_help COMMAND ${KRN_CLI} bench kernels --help)
# bad input: exit status 2 and a message naming the option (files of its own in build/tests: the
# tests run in parallel there, and gpu_check_script wrote err.txt too)
add_test(NAME kernels_cli_bad_input COMMAND sh -c
  "for a in '--members 1' '--spread 0.5' '--kernels triad,fft' '--fail-member 9' '--replicas 5' '--bogus' '--fail-at 1.5' '--out'; do \
     $0 bench kernels --cpu $a 2>kc_err.txt; s=$?; \
     if [ $s -ne 2 ] || ! grep -q -- \"$(echo $a | cut -d' ' -f1)\" kc_err.txt; then echo \"$a: status $s\"; cat kc_err.txt; exit 1; fi; \
   done" ${KRN_CLI})
# a small CPU run: table, HDF5 file, calibration file, exit 0
add_test(NAME kernels_cli_cpu_run COMMAND sh -c
  "rm -rf cli_out && mkdir cli_out && $0 bench kernels --cpu --scale 0.02 --out cli_out/k.h5 --calib-dir cli_out/cal > cli_out/table.txt \
   && grep -q 'dynamic' cli_out/table.txt && ! grep -q ' NO$' cli_out/table.txt \
   && test -f cli_out/k.h5 && ! ls cli_out/*.tmp* 2>/dev/null \
   && head -1 cli_out/cal/cpu-*.csv | grep -qx 'key,value,unit,device,note' \
   && grep -q '^dynamic_efficiency,' cli_out/cal/cpu-*.csv && grep -q '^stream_bw_gbs,' cli_out/cal/cpu-*.csv \
   && { ! command -v h5dump >/dev/null || h5dump -H cli_out/k.h5 | grep -q 'DATASET \"kernels\"'; }" ${KRN_CLI})
# by default the calibration goes to results/calibration, never to the committed data/calibration
add_test(NAME kernels_cli_default_calib_dir COMMAND sh -c
  "rm -rf cli_def && mkdir -p cli_def/data/calibration && cd cli_def && $0 bench kernels --cpu --scale 0.02 --out k.h5 > table.txt \
   && ls results/calibration/cpu-*.csv && test -z \"$(ls data/calibration)\"" ${KRN_CLI})
# and through the real `spotlab` (the command registers itself with APP_COMMAND)
if(TARGET spotlab)
  add_test(NAME kernels_spotlab_help COMMAND sh -c "$0 --help | grep -q 'bench kernels' && $0 bench kernels --help" $<TARGET_FILE:spotlab>)
  set_tests_properties(kernels_spotlab_help PROPERTIES ENVIRONMENT "${SPOTLAB_TEST_ENV}" TIMEOUT 60)
endif()
set_tests_properties(kernels_cli_help kernels_cli_bad_input kernels_cli_cpu_run kernels_cli_default_calib_dir PROPERTIES
                     ENVIRONMENT "${SPOTLAB_TEST_ENV}" TIMEOUT ${SPOTLAB_TEST_TIMEOUT})
# The GPU executors through the per-chunk API (what a lab GPU worker runs): exit 77 = skipped
# where there is no device (here), so it never counts as a pass without one.
add_executable(test_kernels_gpu ${CMAKE_CURRENT_SOURCE_DIR}/test_kernels_gpu.c)
target_link_libraries(test_kernels_gpu PRIVATE spotlab_kernels)
add_test(NAME test_kernels_gpu COMMAND test_kernels_gpu)
set_tests_properties(test_kernels_gpu PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 120 ENVIRONMENT "${SPOTLAB_TEST_ENV}")
# scripts/gpu_check.sh's CPU side (the GPU host runs the rest): syntax, shellcheck where present,
# bad usage exit 2, a missing bundle named (exit 1), and --dry-run's plan of every step with its
# timeout; the lab job file it runs passes --check.
add_test(NAME gpu_check_script COMMAND sh -c
  "s=$0/scripts/gpu_check.sh; bash -n $s && bash -n $0/scripts/gpu_bundle.sh || exit 1; \
   if command -v shellcheck >/dev/null; then shellcheck $s $0/scripts/gpu_bundle.sh || exit 1; fi; \
   $s --bogus 2>gc_err.txt; st=$?; [ $st -eq 2 ] && grep -q \"unknown option '--bogus'\" gc_err.txt || { echo \"usage: $st\"; exit 1; }; \
   OUT=$PWD/gc_out BUNDLE=/nonexistent BUILD=/nonexistent $s > gc_miss.txt 2>&1; st=$?; \
   [ $st -eq 1 ] && grep -q 'run scripts/gpu_bundle.sh' gc_miss.txt || { echo \"missing bundle: $st\"; cat gc_miss.txt; exit 1; }; \
   OUT=$PWD/gc_out BUNDLE=/nonexistent BUILD=$1 $s --dry-run > gc_dry.txt 2>&1 || { cat gc_dry.txt; exit 1; }; \
   for w in 'test_kernels_gpu (timeout' 'gpu_partitions.cfg --predict' 'mpirun -np 16' 'bench phold --lps 16384' \
            'bench market --gpus 1000000 --days 2'; do grep -qF \"$w\" gc_dry.txt || { echo \"plan lacks: $w\"; exit 1; }; done; \
   $1/spotlab lab --check $0/scenarios/lab/gpu_partitions.cfg" ${CMAKE_SOURCE_DIR} ${CMAKE_BINARY_DIR})
set_tests_properties(gpu_check_script PROPERTIES ENVIRONMENT "${SPOTLAB_TEST_ENV}" TIMEOUT 60)
