#!/bin/sh
# ctest's python_install: the package installs offline into a fresh virtual environment made with
# --system-site-packages (`pip install --no-build-isolation`, Debian's setuptools, h5py, pandas) and
# works from there. Skips (exit 77) when h5py or pandas are missing.
#   check_install.sh PYTHON SOURCE_DIR      (SPOTLAB_BIN: the binary the installed package runs)
set -eu
py=$1 src=$2
unset PYTHONPATH  # the installed copy, not the checkout's, must be imported
if ! "$py" -c 'import h5py, pandas' 2>/dev/null; then
  echo "SKIP: $py has no h5py or pandas (apt-get install python3-h5py python3-pandas)"
  exit 77
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/spotlab-install.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
cp -R "$src/python" "$tmp/pkg"  # pip builds in the package's folder: a copy keeps the checkout clean
"$py" -m venv --system-site-packages "$tmp/venv"
PIP_NO_INDEX=1 PIP_DISABLE_PIP_VERSION_CHECK=1 "$tmp/venv/bin/python" -m pip install -q --no-build-isolation \
  "$tmp/pkg"
cd "$tmp"
"$tmp/venv/bin/python" - "$src" "$tmp" <<'PY'
import os, sys
import spotlab
src, tmp = sys.argv[1], sys.argv[2]
assert spotlab.__file__.startswith(os.path.join(tmp, "venv")), spotlab.__file__  # the installed copy
r = spotlab.run(os.path.join(src, "scenarios/default.cfg"), out=os.path.join(tmp, "r.h5"), reps=1,
                params={"run.end": "2h"})
assert r.reps == 1 and len(r.table("providers")) == 600 and r.metric("money_conserved")[0] == 1.0
print("installed", spotlab.__version__, "at", os.path.dirname(spotlab.__file__), "and ran", r.path)
PY
