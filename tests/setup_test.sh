#!/usr/bin/env bash
# setup_test.sh SRC - scripts/setup.sh on the machines it meets, without installing anything: PATH
# holds only fake apt-get, dpkg-query, sudo and id (scripts that record their calls) and the few
# real tools the script uses. Root, sudo, sudo that wants a password with no terminal, no sudo, no
# apt, an apt lock held for three calls then released (an event: the fake counts calls, nothing
# sleeps), a lock never released within the bound, a failing install, the skip switch (also
# through make SETUP=0).
set -u
src=$1
setup=$src/scripts/setup.sh
tmp=$(mktemp -d /tmp/spotlab_setup.XXXXXX) || exit 1
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL [$case]: $*"; echo "--- output"; cat "$tmp/out"; echo "--- calls"; cat "$tmp/log" 2>/dev/null; exit 1; }
has() { grep -qF -- "$1" "$tmp/out" || fail "output lacks '$1'"; }
called() { grep -qF -- "$1" "$tmp/log" 2>/dev/null || fail "no call '$1'"; }
not_called() { ! grep -qF -- "$1" "$tmp/log" 2>/dev/null || fail "unexpected call '$1'"; }

# the fakes: each appends "NAME uid=UID ARGS" to $FAKE_LOG
fakes=$tmp/fakes
mkdir "$fakes"
cat > "$fakes/id" <<'F'
#!/bin/sh
echo "id uid=${FAKE_UID} $*" >> "$FAKE_LOG"
[ "$1" = -u ] && echo "$FAKE_UID"
F
cat > "$fakes/dpkg-query" <<'F'
#!/bin/sh
echo "dpkg-query uid=${FAKE_UID} $*" >> "$FAKE_LOG"
for a; do pkg=$a; done
case " $FAKE_INSTALLED " in
  *" ALL "*|*" $pkg "*) echo "install ok installed"; exit 0 ;;
esac
exit 1
F
cat > "$fakes/sudo" <<'F'
#!/bin/sh
echo "sudo uid=${FAKE_UID} $*" >> "$FAKE_LOG"
[ "$1" = -n ] && shift
if [ "${FAKE_SUDO_NOPASS:-0}" != 1 ]; then echo "sudo: a password is required" >&2; exit 1; fi
FAKE_UID=0 exec "$@"
F
# apt-get: refuses non-root like apt; "holds" the lock for the number of calls in $FAKE_STATE/lock
cat > "$fakes/apt-get" <<'F'
#!/bin/sh
echo "apt-get uid=${FAKE_UID} $*" >> "$FAKE_LOG"
if [ "$FAKE_UID" != 0 ]; then
  echo "E: Could not open lock file /var/lib/dpkg/lock-frontend - open (13: Permission denied)" >&2
  echo "E: Unable to acquire the dpkg frontend lock (/var/lib/dpkg/lock-frontend), are you root?" >&2
  exit 100
fi
held=0
[ -f "$FAKE_STATE/lock" ] && read -r held < "$FAKE_STATE/lock"
if [ "$held" -gt 0 ]; then
  echo $((held - 1)) > "$FAKE_STATE/lock"
  echo "E: Could not get lock /var/lib/dpkg/lock-frontend. It is held by process 4242 (unattended-upgr)" >&2
  exit 100
fi
for a; do
  if [ "$a" = install ] && [ "${FAKE_APT_FAIL:-0}" = 1 ]; then echo "E: Unable to locate package libgsl-dev" >&2; exit 100; fi
done
exit 0
F
chmod +x "$fakes"/*
real=$tmp/real # the real tools setup.sh (and make) use besides the fakes
mkdir "$real"
for t in grep sleep true make nproc bash; do
  p=$(type -P $t) || { echo "SKIP: no $t"; exit 77; }
  ln -s "$p" "$real/$t"
done

# run [FAKE...]: setup.sh with PATH = the chosen fakes + the real tools; stdin not a terminal
run() {
  local sb=$tmp/sb.$case
  rm -rf "$sb" "$tmp/log" "$tmp/state"
  mkdir "$sb" "$tmp/state"
  for f in "$@"; do ln -s "$fakes/$f" "$sb/$f"; done
  [ -n "${LOCK:-}" ] && echo "$LOCK" > "$tmp/state/lock"
  env -i PATH="$sb:$real" FAKE_LOG="$tmp/log" FAKE_STATE="$tmp/state" FAKE_UID="${UID_:-1000}" \
      FAKE_INSTALLED="${INSTALLED:-}" FAKE_SUDO_NOPASS="${NOPASS:-0}" FAKE_APT_FAIL="${APTFAIL:-0}" \
      SPOTLAB_SETUP_LOCK_POLL=0 ${WAIT:+SPOTLAB_SETUP_LOCK_WAIT=$WAIT} ${SKIP:+SPOTLAB_SKIP_SETUP=$SKIP} \
      "$real/bash" "$setup" < /dev/null > "$tmp/out" 2>&1
  rc=$?
}
all="id dpkg-query sudo apt-get"

case=skip;      SKIP=1 run $all;                     [ $rc -eq 0 ] || fail "exit $rc"
has "setup: skipped"; [ ! -s "$tmp/log" ] || fail "the skipped set-up called something"
case=make-SETUP=0
rm -f "$tmp/log"
env -i PATH="$fakes:$real" FAKE_LOG="$tmp/log" FAKE_UID=1000 make -s -C "$src" setup SETUP=0 > "$tmp/out" 2>&1 ||
  fail "make setup SETUP=0 failed"
has "setup: skipped"; [ ! -s "$tmp/log" ] || fail "make SETUP=0 still ran the set-up"

case=present;   INSTALLED=ALL run $all;              [ $rc -eq 0 ] || fail "exit $rc"
not_called "apt-get"; not_called "sudo"

case=root;      UID_=0 INSTALLED="cmake make" run $all; [ $rc -eq 0 ] || fail "exit $rc"
called "apt-get uid=0 -o DPkg::Lock::Timeout=600 update -qq"
called "apt-get uid=0 -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends gcc g++ pkg-config libgsl-dev"
not_called "install -y -qq --no-install-recommends cmake"; not_called "sudo"; has "setup: done"

case=sudo;      NOPASS=1 run $all;                   [ $rc -eq 0 ] || fail "exit $rc"
called "sudo uid=1000 -n true"
called "sudo uid=1000 -n apt-get -o DPkg::Lock::Timeout=600 update -qq"
called "apt-get uid=0 -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends cmake make"
not_called "apt-get uid=1000"; has "(through sudo -n)"

case=no-sudo;   run id dpkg-query apt-get;           [ $rc -eq 1 ] || fail "exit $rc (want 1)"
has "not running as root and sudo is not installed, so nothing was installed"
has "libhdf5-openmpi-dev"; has "make test SETUP=0"; has "SPOTLAB_SKIP_SETUP=1"; not_called "apt-get"

case=sudo-password; run $all;                        [ $rc -eq 1 ] || fail "exit $rc (want 1)"
has "sudo needs a password but there is no terminal"; has "make test SETUP=0"; not_called "apt-get"

case=no-apt;    UID_=0 run id;                       [ $rc -eq 1 ] || fail "exit $rc (want 1)"
has "this machine has no apt-get/dpkg"; has "libgsl-dev libhdf5-openmpi-dev"; has "SETUP=0"
if [ -s "$tmp/log" ] && grep -qv "^id " "$tmp/log"; then fail "something but id was called"; fi

# the bound apt-get is given does not depend on how long the calls before took (it used to be the
# time left of a clock started with the script: 599 on a loaded machine): without a refusal, every
# call gets the whole bound, exactly
case=bound;     UID_=0 WAIT=37 run $all;             [ $rc -eq 0 ] || fail "exit $rc"
[ "$(grep -c "^apt-get uid=0 -o DPkg::Lock::Timeout=37 " "$tmp/log")" -eq 2 ] || fail "want update and install with the bound 37"
not_called "DPkg::Lock::Timeout=36"

case=lock-released; UID_=0 LOCK=3 run $all;          [ $rc -eq 0 ] || fail "exit $rc"
[ "$(grep -c "^apt-get uid=0 .* update -qq" "$tmp/log")" -eq 4 ] || fail "want 3 refused updates, then one that ran"
called "install -y -qq --no-install-recommends"
[ "$(grep -c "waiting for apt's lock" "$tmp/out")" -eq 1 ] || fail "want the waiting message once"
has "setup: done"

case=lock-held; UID_=0 LOCK=1000 WAIT=0 run $all;    [ $rc -eq 1 ] || fail "exit $rc (want 1)"
has "apt's lock is still held after 0 s"; has "held by process 4242"; not_called "install -y"

case=apt-fails; UID_=0 APTFAIL=1 run $all;           [ $rc -eq 1 ] || fail "exit $rc (want 1)"
has "E: Unable to locate package libgsl-dev"; has "failed (above); nothing else was done"
echo "OK"
