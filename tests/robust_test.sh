#!/bin/sh
# Assumptions in the open: a run records the keys marked ASSUMPTION with its values and its report
# lists them first; compare --robust (app/cmd_compare_robust.c) reruns both sides of a comparison
# over a grid of assumption values. Checks:
#  - a run over two values of a key, one of them the files' own, exits 0 and writes robust.md and
#    robust.csv with one row per headline metric;
#  - the point at the files' own value reruns the files' runs exactly (same effective keys, seeds
#    and replications), so every row's range over the points contains the change the files give,
#    and each row's verdict agrees with its counts;
#  - bad input exits 2 and writes nothing (no compare.md either): a spec without '=', one value, a
#    value twice, a key the scenario does not have, a value out of the key's range, unpaired files.
# usage: robust_test.sh SPOTLAB SOURCE_DIR
set -u
S=$1
SRC=$2
W=$(mktemp -d "${TMPDIR:-/tmp}/spotlab-robust.XXXXXX") || exit 1
trap 'rm -rf "$W"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
cd "$W" || exit 1
for side in before after; do
  "$S" run "$SRC/scenarios/pricing_$side.cfg" --reps 2 --param 'run.end="1d"' --out $side.h5 --quiet \
    || fail "run $side"
done
"$S" run "$SRC/scenarios/pricing_after.cfg" --reps 2 --seed 99 --param 'run.end="1d"' --out other.h5 --quiet \
  || fail "run other"

# The assumptions a run used are recorded (/meta/assumptions: the keys whose help says ASSUMPTION,
# with the values the run took, overrides included) and listed first in its report.
"$S" run "$SRC/scenarios/pricing_before.cfg" --reps 1 --param 'run.end="2h"' \
  --param market.inference.choice_cost=5 --out assumed.h5 --quiet || fail "run assumed"
"$S" report assumed.h5 --out assumed-report --quiet --gnuplot none || fail "report assumed"
/usr/bin/python3 - assumed.h5 assumed-report/summary.md <<'PY' || exit 1
import sys, h5py
a = h5py.File(sys.argv[1], "r")["meta/assumptions"][()].decode()
lines = a.splitlines()
for want in ("market.inference.choice_cost = 5;", "market.training.choice_cost = 3;",
             "market.personas.henry.self_per_day = 2;", "market.training.elasticity = 1.2;"):
    if not any(l.startswith(want) for l in lines):
        sys.exit(f"FAIL: /meta/assumptions has no line '{want}...'")
if not all("ASSUMPTION" in l for l in lines):
    sys.exit("FAIL: a line of /meta/assumptions is not a key marked ASSUMPTION")
md = open(sys.argv[2]).read()
head = md.split("## Assumptions this run rests on", 1)
if len(head) < 2 or "market.inference.choice_cost = 5;" not in head[1]:
    sys.exit("FAIL: the report's summary does not list the assumptions")
print(f"{len(lines)} assumptions recorded and listed")
PY

"$S" compare before.h5 after.h5 --out ok --quiet --robust market.fixed.price_factor=1.0,1.3 2>err.txt \
  || { cat err.txt; fail "compare --robust exited $?"; }
[ -s ok/robust.md ] && [ -s ok/robust.csv ] || fail "robust.md or robust.csv missing"
/usr/bin/python3 - ok/robust.csv <<'PY' || exit 1
import csv, math, sys
rows = list(csv.DictReader(open(sys.argv[1])))
if len(rows) < 5:
    sys.exit(f"FAIL: {len(rows)} rows in robust.csv")
for r in rows:
    c, lo, hi = float(r["change"]), float(r["range_lo"]), float(r["range_hi"])
    if math.isnan(c):  # a metric undefined in the files (no job of a class): said so, never ranked
        if not r["verdict"].startswith("undefined"):
            sys.exit(f"FAIL: {r['metric']}: undefined change with verdict '{r['verdict']}'")
        continue
    n, pos, neg = int(r["points"]), int(r["points_pos"]), int(r["points_neg"])
    if n != 2 or pos + neg > n:
        sys.exit(f"FAIL: {r['metric']}: counts {n} {pos} {neg}")
    tol = 1e-9 * max(1.0, abs(c))
    if not (lo - tol <= c <= hi + tol):
        sys.exit(f"FAIL: {r['metric']}: the files' change {c} is outside the points' range [{lo}, {hi}], "
                 "though one point reruns the files' own runs")
    v = r["verdict"]
    if v.startswith("holds (+)") != (c > 0 and pos == n) or v.startswith("holds (-)") != (c < 0 and neg == n):
        sys.exit(f"FAIL: {r['metric']}: verdict '{v}' for change {c} with {pos}+ {neg}- of {n}")
    if v == "sign changes" and not r["first_flip"].startswith("market.fixed.price_factor="):
        sys.exit(f"FAIL: {r['metric']}: a sign change that names no point")
print(f"{len(rows)} headline rows, every range holds the files' change")
PY

n=0
for spec in 'nokey' 'market.fixed.price_factor=1' 'market.fixed.price_factor=1,1' \
            'market.fixed.no_such_key=1,2' 'market.fixed.price_factor=-5,1'; do
  n=$((n + 1))
  "$S" compare before.h5 after.h5 --out bad$n --quiet --robust "$spec" 2>err$n.txt
  st=$?
  [ $st -eq 2 ] || { cat err$n.txt; fail "--robust '$spec' exited $st, not 2"; }
  [ -s err$n.txt ] || fail "--robust '$spec': no message"
  [ ! -e bad$n ] || fail "--robust '$spec': wrote bad$n/ ($(ls bad$n))"
done
grep -q no_such_key err4.txt || { cat err4.txt; fail "the unknown key is not named"; }
# a metric to check besides the headline ones: one the files do not have is refused before anything
"$S" compare before.h5 after.h5 --out bad8 --quiet --robust market.fixed.price_factor=1,2 \
  --robust-metric no_such_metric 2>err8.txt
st=$?
[ $st -eq 2 ] && grep -q no_such_metric err8.txt && [ ! -e bad8 ] || { cat err8.txt; fail "--robust-metric no_such_metric: exit $st"; }
"$S" compare before.h5 after.h5 --out ok2 --quiet --robust market.fixed.price_factor=1.0,1.3 \
  --robust-metric served.class.batch 2>err7.txt || { cat err7.txt; fail "--robust-metric served.class.batch"; }
grep -q '^"\{0,1\}served.class.batch' ok2/robust.csv || fail "the --robust-metric row is not in robust.csv"
"$S" compare before.h5 other.h5 --out bad9 --quiet --robust market.fixed.price_factor=1,2 2>err9.txt
st=$?
[ $st -eq 2 ] && grep -q "not paired" err9.txt && [ ! -e bad9 ] || { cat err9.txt; fail "unpaired files: exit $st"; }
echo "compare --robust: ok"
