#!/usr/bin/env bash
# gpu_bundle.sh - prepare the GPU check on the development machine (see ../shared/GPU.md):
# build build-gpu/ (Release, CUDA on, one architecture), then copy into gpu-bundle/ the binaries
# the check runs (bin/) and the shared libraries `ldd` lists for them (lib/), except those the GPU
# machine has itself (libc, libm, libstdc++, libgcc_s, ld-linux, libcuda, the vdso). OpenMPI's
# own libraries (libmpi and what it links) go to lib/mpi/: the runs without mpirun put them on
# the path, the runs under the GPU host's mpirun use that host's libmpi instead (GPU.md).
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
# The kernel tests, the GPU executor test and spotlab (bench kernels, lab, bench phold/market).
cmake --build "$BUILD" -j "$JOBS" --target test_kernels test_kernels_gpu spotlab
bins=("$BUILD/tests/test_kernels" "$BUILD/tests/test_kernels_gpu" "$BUILD/spotlab")

# "name => /path (addr)" or "/path (addr)": the paths ldd resolved
ldd_paths() { ldd "$1" | awk '{ for (i = 1; i <= NF; i++) if ($i ~ /^\//) { print $i; break } }'; }
rm -rf "$BUNDLE"
mkdir -p "$BUNDLE/bin" "$BUNDLE/lib/mpi"
mpi_libs=" "
mpi=$(ldd "$BUILD/spotlab" | awk '/libmpi\.so/ { print $3 }')
if [ -n "$mpi" ]; then
  for lib in "$mpi" $(ldd_paths "$mpi"); do mpi_libs+="$(basename "$lib") "; done
fi
for b in "${bins[@]}"; do
  cp "$b" "$BUNDLE/bin/"
  ldd_paths "$b" | while read -r lib; do
    base=$(basename "$lib")
    case "$base" in
      libc.so*|libm.so*|libstdc++.so*|libgcc_s.so*|ld-linux*|libcuda.so*|linux-vdso*) continue ;;
      libresolv.so*|libpthread.so*|libdl.so*|librt.so*) continue ;; # glibc's own: the host's must match its libc
    esac
    dest="$BUNDLE/lib"
    case "$mpi_libs" in *" $base "*) dest="$BUNDLE/lib/mpi" ;; esac
    [ -e "$dest/$base" ] || cp -L "$lib" "$dest/$base"
  done
done
# OpenMPI opens its components with dlopen at run time; ldd cannot see them, and the bundle does
# not carry them: the GPU host's OpenMPI 4.1 provides its own (GPU.md).
du -sh "$BUNDLE" | awk '{print "gpu_bundle: " $1 " in '"$BUNDLE"'"}'
find "$BUNDLE" -type f | sort | sed 's/^/  /'
