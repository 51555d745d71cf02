#!/usr/bin/env bash
# gpu_bundle.sh - prepare the GPU check on the development machine (see ../shared/GPU.md):
# build build-gpu/ (Release, CUDA on, one architecture), then copy into gpu-bundle/ the binaries
# the check runs (bin/) and the shared libraries `ldd` lists for them (lib/), except those the GPU
# machine has itself (libc, libm, libstdc++, libgcc_s, ld-linux, libcuda, the vdso).
# Then run scripts/gpu_check.sh there with gpu-bundle (and scripts/) in the working tree.
#
#   scripts/gpu_bundle.sh            # JOBS=2 BUILD=build-gpu BUNDLE=gpu-bundle CUDA_ARCH=90
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build-gpu}
BUNDLE=${BUNDLE:-gpu-bundle}
JOBS=${JOBS:-2}
CUDA_ARCH=${CUDA_ARCH:-90}

if [ ! -x /usr/local/cuda/bin/nvcc ] && ! command -v nvcc >/dev/null; then
  echo "gpu_bundle: nvcc not found: the GPU build needs the CUDA toolkit" >&2
  exit 2
fi
cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DSPOTLAB_CUDA=ON -DSPOTLAB_CUDA_ARCH="$CUDA_ARCH" >/dev/null
if ! grep -q '^#define SPOTLAB_HAVE_CUDA 1' "$BUILD/generated/spotlab_config.h"; then
  echo "gpu_bundle: CMake did not enable CUDA in $BUILD (see its CMakeCache.txt)" >&2
  exit 1
fi
# The kernel tests and the stand-alone bench command are required; the full `spotlab` is taken
# when it links (it needs the engine).
cmake --build "$BUILD" -j "$JOBS" --target test_kernels krn_bench_cli
bins=("$BUILD/tests/test_kernels" "$BUILD/tests/krn_bench_cli")
if cmake --build "$BUILD" -j "$JOBS" --target spotlab >/dev/null 2>&1; then
  bins+=("$BUILD/spotlab")
else
  echo "gpu_bundle: spotlab does not link yet; the check will use krn_bench_cli" >&2
fi

rm -rf "$BUNDLE"
mkdir -p "$BUNDLE/bin" "$BUNDLE/lib"
for b in "${bins[@]}"; do
  cp "$b" "$BUNDLE/bin/"
  # "name => /path (addr)" or "/path (addr)"
  ldd "$b" | awk '{ for (i = 1; i <= NF; i++) if ($i ~ /^\//) { print $i; break } }' | while read -r lib; do
    base=$(basename "$lib")
    case "$base" in
      libc.so*|libm.so*|libstdc++.so*|libgcc_s.so*|ld-linux*|libcuda.so*|linux-vdso*) continue ;;
    esac
    [ -e "$BUNDLE/lib/$base" ] || cp -L "$lib" "$BUNDLE/lib/$base"
  done
done
# OpenMPI opens its components with dlopen at run time; ldd cannot see them. The kernels never
# call MPI, so the bundle does not carry them (spotlab only starts MPI for commands that use it).
du -sh "$BUNDLE" | awk '{print "gpu_bundle: " $1 " in '"$BUNDLE"'"}'
ls "$BUNDLE/bin" "$BUNDLE/lib" | sed 's/^/  /'
