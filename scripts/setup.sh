#!/usr/bin/env bash
# Installs the Debian packages spotlab builds and runs with, only those missing. Idempotent: a
# machine that has everything is untouched. apt-get runs directly as root, through sudo otherwise;
# a held apt/dpkg lock (a freshly booted cloud machine's unattended upgrades) is waited for, up to
# SPOTLAB_SETUP_LOCK_WAIT seconds (default 600). Where it cannot work (no apt, no root and no
# sudo) it installs nothing, names the packages to install by hand and how to skip this step, and
# exits 1. SPOTLAB_SKIP_SETUP=1 (make ... SETUP=0) skips it. Tested by tests/setup_test.sh.
if [ "${SPOTLAB_SKIP_SETUP:-0}" = 1 ]; then
  echo "setup: skipped (SPOTLAB_SKIP_SETUP=1 / make SETUP=0): the packages are assumed present" >&2
  exit 0
fi
set -euo pipefail
pkgs=(cmake make gcc g++ pkg-config libgsl-dev libhdf5-openmpi-dev hdf5-tools libopenmpi-dev
      openmpi-bin libcunit1-dev gnuplot-nox libconfig-dev zlib1g-dev libcsv-dev chromium
      clang-format)
# the Python package (python/) and its tests: h5py, pandas, pytest, nbclient for docs/example.ipynb,
# setuptools, wheel and venv for the offline pip install
pkgs+=(python3-h5py python3-pandas python3-pytest python3-nbclient python3-nbformat python3-ipykernel
       python3-setuptools python3-wheel python3-pip python3-venv)
pkgs+=(slurm-wlm munge) # tests/slurm_test.sh: a Slurm controller and compute daemon started by the test
# make fuzz: clang and its libFuzzer runtime
[ "${FUZZ:-0}" = 1 ] && pkgs+=(clang libclang-rt-14-dev)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

# Where apt cannot be run: say what to install and how to go on, and change nothing.
by_hand() { # REASON
  {
    echo "setup: $1, so nothing was installed."
    echo "setup: spotlab needs these Debian packages (or your system's equivalents):"
    echo "         ${missing[*]}"
    echo "setup: install them (as root: apt-get install ${missing[*]}),"
    echo "       then run make again; or, once they are present, skip this step:"
    echo "         make test SETUP=0     (or: export SPOTLAB_SKIP_SETUP=1)"
  } >&2
  exit 1
}
if ! command -v dpkg-query >/dev/null 2>&1 || ! command -v apt-get >/dev/null 2>&1; then
  by_hand "this machine has no apt-get/dpkg (not Debian or Ubuntu)"
fi
SUDO=()
if [ "$(id -u)" -ne 0 ]; then
  if ! command -v sudo >/dev/null 2>&1; then
    by_hand "not running as root and sudo is not installed"
  elif sudo -n true 2>/dev/null; then
    SUDO=(sudo -n)
  elif [ -t 0 ]; then
    SUDO=(sudo) # it asks for the password on this terminal
  else
    by_hand "not running as root, and sudo needs a password but there is no terminal to ask on"
  fi
fi

# apt-get ARGS...: waits while another apt or dpkg holds the lock (apt waits on dpkg's lock itself,
# DPkg::Lock::Timeout; apt-get update's lists lock, and apt older than 2.0, fail at once: retried
# here), up to SPOTLAB_SETUP_LOCK_WAIT seconds in all from the first refusal. Until a refusal, each
# call gets the whole bound: the time apt spends downloading and installing is not waiting for a
# lock (and the bound passed does not depend on how long the previous call took).
wait_s=${SPOTLAB_SETUP_LOCK_WAIT:-600}
poll_s=${SPOTLAB_SETUP_LOCK_POLL:-5}
deadline= # set at the first refusal
apt() {
  local err said=0
  while :; do
    local left=$wait_s
    if [ -n "$deadline" ]; then
      left=$((deadline - SECONDS))
      [ $left -lt 0 ] && left=0
    fi
    if err=$("${SUDO[@]}" apt-get -o DPkg::Lock::Timeout=$left "$@" 2>&1 >/dev/null); then
      return 0
    fi
    # held by another process (not: this user may not take it, "are you root?")
    if grep -qiE 'permission denied|are you root' <<<"$err" ||
       ! grep -qiE 'could not get lock|unable to acquire the dpkg frontend lock|unable to lock' <<<"$err"; then
      echo "$err" >&2
      echo "setup: apt-get $* failed (above); nothing else was done" >&2
      exit 1
    fi
    [ -n "$deadline" ] || deadline=$((SECONDS + wait_s))
    if [ $SECONDS -ge $deadline ]; then
      echo "$err" >&2
      echo "setup: apt's lock is still held after ${wait_s} s (another apt, dpkg or unattended-upgrades is" \
           "running); try again when it has finished, or set SPOTLAB_SETUP_LOCK_WAIT=SECONDS" >&2
      exit 1
    fi
    if [ $said = 0 ]; then
      echo "setup: waiting for apt's lock, held by another apt, dpkg or unattended-upgrades" \
           "(up to ${wait_s} s: SPOTLAB_SETUP_LOCK_WAIT)" >&2
      said=1
    fi
    sleep "$poll_s"
  done
}

echo "setup: installing ${missing[*]}${SUDO:+ (through ${SUDO[*]})}" >&2
export DEBIAN_FRONTEND=noninteractive
apt update -qq
apt install -y -qq --no-install-recommends "${missing[@]}"
echo "setup: done" >&2
