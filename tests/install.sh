#!/bin/sh
# install.sh CMAKE BUILD SRC - data that travels: `cmake --install` (what `make install PREFIX=...`
# runs) into a temporary prefix gives bin/spotlab, share/spotlab/data, share/spotlab/scenarios and
# the Python package (when python/ has one); a scenario copied to a folder outside the checkout
# runs from the installed binary, and again after the install is moved elsewhere; SPOTLAB_DATA
# comes after the scenario's folder and before the installed data; a data file found nowhere is a
# FILE:LINE error naming every place looked at.
set -u
cmake=$1; build=$2; src=$3
tmp=$(mktemp -d /tmp/spotlab_install.XXXXXX) || exit 1
trap 'rm -rf "$tmp"' EXIT
unset SPOTLAB_DATA
fail() { echo "FAIL: $*"; exit 1; }
has() { grep -qF -- "$2" "$1" || { cat "$1"; fail "'$2' not in $1"; }; }

"$cmake" --install "$build" --prefix "$tmp/prefix" > "$tmp/install.out" 2>&1 || { cat "$tmp/install.out"; fail "cmake --install"; }
p=$tmp/prefix
[ -x "$p/bin/spotlab" ] || fail "no bin/spotlab"
for f in gpus.csv churn_fta_fits.csv README.md traces/alibaba2026_genai_inference_requests.csv; do
  [ -f "$p/share/spotlab/data/$f" ] || fail "no share/spotlab/data/$f"
done
for f in default.cfg trace_replay.cfg lab/two_hosts.cfg; do
  [ -f "$p/share/spotlab/scenarios/$f" ] || fail "no share/spotlab/scenarios/$f"
done
for f in LICENSE CITATION.cff CHANGELOG.md README.md; do
  [ -f "$p/share/doc/spotlab/$f" ] || fail "no share/doc/spotlab/$f"
done
# docs/ beside the installed README, so that its links to docs/*.md resolve there
for l in $(grep -o '](docs/[A-Za-z0-9_./-]*\.md)' "$p/share/doc/spotlab/README.md" | sed 's/^](//; s/)$//' | sort -u); do
  [ -f "$p/share/doc/spotlab/$l" ] || fail "the installed README links $l, which is not in share/doc/spotlab"
done
[ -f "$p/share/doc/spotlab/docs/metrics.md" ] || fail "no share/doc/spotlab/docs/metrics.md"
# the man page and the bash completion, written by the command from its option tables
[ -f "$p/share/man/man1/spotlab.1" ] && grep -q '^\.TH SPOTLAB 1' "$p/share/man/man1/spotlab.1" || fail "no share/man/man1/spotlab.1"
[ -f "$p/share/bash-completion/completions/spotlab" ] && bash -n "$p/share/bash-completion/completions/spotlab" ||
  fail "no share/bash-completion/completions/spotlab (or not bash)"
# CITATION.cff cites the version the binary reports (CMakeLists.txt's project version)
v=$("$p/bin/spotlab" --version | cut -d' ' -f2)
grep -qx "version: $v" "$src/CITATION.cff" || fail "CITATION.cff's version is not $v (spotlab --version)"
# the installed Python package runs the installed binary with nothing set: not SPOTLAB_BIN, not
# PREFIX/bin on PATH, not from a checkout (it looked in PREFIX/local/lib/python3.X/build/spotlab)
pyrun() { # PREFIX: spotlab.run from PREFIX's package, in a folder of the user's own
  site=$(find "$1" -path '*-packages/spotlab/__init__.py' | head -1); site=${site%/spotlab/__init__.py}
  (cd "$tmp/mine" && env -u SPOTLAB_BIN PATH=/usr/bin:/bin PYTHONPATH="$site" /usr/bin/python3 - "$1" <<'PY'
import os, sys
import spotlab
prefix = sys.argv[1]
assert spotlab.__file__.startswith(prefix), spotlab.__file__
assert spotlab.find_binary() == os.path.join(prefix, "bin", "spotlab"), spotlab.find_binary()
r = spotlab.run("default.cfg", out="py.h5", reps=1, params={"run.end": "2h"})
assert r.reps == 1 and r.metric("money_conserved")[0] == 1.0
print("the installed package ran", spotlab.find_binary())
PY
  ) > "$tmp/py.out" 2>&1 || { cat "$tmp/py.out"; fail "the installed package (in $site) did not run its installed binary"; }
}
pyok=0
if [ -f "$src/python/pyproject.toml" ]; then
  find "$p" -path '*-packages/spotlab/__init__.py' | grep -q . || { cat "$tmp/install.out"; fail "Python package not installed"; }
  /usr/bin/python3 -c 'import h5py, pandas' 2>/dev/null && pyok=1 || echo "(no h5py or pandas: the installed package is not run)"
else
  has "$tmp/install.out" "pyproject.toml: the Python package is not installed"
fi

# a scenario of the user's own, in a folder of their own, run by the installed binary
mkdir "$tmp/mine"
cp "$src/scenarios/default.cfg" "$src/scenarios/trace_replay.cfg" "$tmp/mine/"
cd "$tmp/mine" || exit 1
short() { b=$1; shift; "$b" run "$@" --param 'run.end="1d"' --param run.reps=1 --quiet; } # BIN SCENARIO ARGS
for s in default trace_replay; do
  short "$p/bin/spotlab" $s.cfg --out $s.h5 > run.out 2>&1 || { cat run.out; fail "installed: $s.cfg"; }
  [ -f $s.h5 ] || fail "no $s.h5"
done
line=$(grep -n '^ *gpus = ' default.cfg | cut -d: -f1)
[ -n "$line" ] || fail "default.cfg has no gpus line"
sed 's/"gpus.csv"/"mine.csv"/' default.cfg > env.cfg
# not found: every place, in order, with the key and its line
SPOTLAB_DATA="$tmp/a:$tmp/b" "$p/bin/spotlab" check "$tmp/mine/env.cfg" > nf.out 2>&1; s=$?
[ $s -eq 2 ] || { cat nf.out; fail "not found: exit $s (want 2)"; }
has nf.out "$tmp/mine/env.cfg:$line: key 'market.gpus': mine.csv: not found; looked at $tmp/mine/mine.csv (the scenario's folder), $tmp/a/mine.csv (SPOTLAB_DATA), $tmp/b/mine.csv (SPOTLAB_DATA), $p/share/spotlab/data/mine.csv (installed, next to the binary)"
has nf.out "(installed under "
[ $pyok = 1 ] && pyrun "$p"
# SPOTLAB_DATA is honoured ...
mkdir "$tmp/mydata"
cp "$src/data/gpus.csv" "$tmp/mydata/mine.csv"
(export SPOTLAB_DATA="$tmp/none:$tmp/mydata"; short "$p/bin/spotlab" env.cfg --out env.h5) > env.out 2>&1 ||
  { cat env.out; fail "SPOTLAB_DATA not honoured"; }
# ... ahead of the installed data: a damaged gpus.csv there is the one read
printf 'model,vendor\nbroken\n' > "$tmp/mydata/gpus.csv"
SPOTLAB_DATA="$tmp/mydata" "$p/bin/spotlab" check "$tmp/mine/default.cfg" > bad.out 2>&1; s=$?
[ $s -eq 2 ] || { cat bad.out; fail "a damaged gpus.csv in SPOTLAB_DATA: exit $s (want 2)"; }
has bad.out "$tmp/mydata/gpus.csv"
# ... and behind the scenario's folder
cp "$src/data/gpus.csv" "$tmp/mine/gpus.csv"
SPOTLAB_DATA="$tmp/mydata" "$p/bin/spotlab" check "$tmp/mine/default.cfg" > ok.out 2>&1 || { cat ok.out; fail "the scenario's folder is not first"; }

# the install moved elsewhere still finds its own data (next to the binary)
rm "$tmp/mine/gpus.csv"
mv "$p" "$tmp/moved"
short "$tmp/moved/bin/spotlab" default.cfg --out moved.h5 > moved.out 2>&1 || { cat moved.out; fail "moved install"; }
"$tmp/moved/bin/spotlab" check env.cfg > nf2.out 2>&1
has nf2.out "$tmp/moved/share/spotlab/data/mine.csv (installed, next to the binary)"
[ $pyok = 1 ] && pyrun "$tmp/moved"
echo "OK"
