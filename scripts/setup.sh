#!/usr/bin/env bash
# Installs the Debian packages spotlab builds and runs with, only those missing.
# Run as root (or with sudo available). Idempotent: a machine that has everything is untouched.
set -euo pipefail
pkgs=(cmake make gcc g++ pkg-config libgsl-dev libhdf5-openmpi-dev hdf5-tools libopenmpi-dev
      openmpi-bin libcunit1-dev gnuplot-nox libconfig-dev libcsv-dev chromium)
# make fuzz: clang and its libFuzzer runtime
[ "${FUZZ:-0}" = 1 ] && pkgs+=(clang libclang-rt-14-dev)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
echo "setup: installing ${missing[*]}" >&2
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "setup: done" >&2
