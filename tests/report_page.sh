#!/bin/sh
# report_page.sh SPOTLAB SOURCE_DIR - opens report pages (index.html) in headless Chromium and checks
# that every figure the report says it wrote is on the page and loads: each <img> (PNG) decodes
# with a size, each linked SVG loads as an image, and the page shows exactly the figures written.
# Two pages: a fault-tolerance run (every kind of results figure) and a PHOLD sweep. Then a
# negative control: with one PNG removed and one SVG cut short, the same check must fail.
# Exit 77 (ctest SKIP) without Chromium or gnuplot; scripts/setup.sh installs both.
set -u
bin=$1 src=$2
browser=$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)
if [ -z "$browser" ]; then
  echo "SKIP: chromium is not installed (Debian: apt-get install chromium; scripts/setup.sh lists it)"
  exit 77
fi
if ! command -v "${SPOTLAB_GNUPLOT:-gnuplot}" >/dev/null 2>&1; then
  echo "SKIP: gnuplot is not installed: a report has no figures to check"
  exit 77
fi
work=$PWD/report_page.d
rm -rf "$work"
mkdir -p "$work"
fail() { echo "FAIL: $*"; exit 1; }

# Loads DIR/index.html with tests/report_page.js added and prints its check line.
page_check() {
  dir=$1
  sed 's#</body>#<script src="report_page_check.js"></script></body>#' "$dir/index.html" > "$dir/report_page_check.html"
  cp "$src/tests/report_page.js" "$dir/report_page_check.js"
  # --virtual-time-budget: Chromium runs the page until it is idle (loads and scripts done), with
  # virtual time, so no wall-clock wait is involved; timeout only bounds a browser that hangs.
  timeout 120 "$browser" --headless --no-sandbox --disable-gpu --no-first-run --allow-file-access-from-files \
    --user-data-dir="$work/profile" --virtual-time-budget=30000 --dump-dom "file://$dir/report_page_check.html" \
    2>"$work/chromium.err" | grep -o 'SPOTLAB-PAGE-CHECK[^<]*'
}

# Checks a report folder against the "wrote DIR/NAME.png and .svg" lines of its log.
check_report() {
  dir=$1 log=$2
  want=$(sed -n 's#^wrote .*/\([^/]*\)\.png and \.svg .*#\1.png#p' "$log" | sort | tr '\n' ',')
  nwant=$(printf '%s' "$want" | tr ',' '\n' | grep -c .)
  [ "$nwant" -gt 0 ] || fail "$dir: the report wrote no figure (log: $log)"
  line=$(page_check "$dir") || { tail -5 "$work/chromium.err"; fail "$dir: Chromium gave no check line"; }
  echo "$dir: $line"
  got=$(printf '%s' "$line" | sed 's/.*srcs=\[\([^]]*\)\].*/\1/' | tr ',' '\n' | grep . | sort | tr '\n' ',')
  [ "$got" = "$want" ] || fail "$dir: the page shows [$got], the report wrote [$want]"
  case $line in *" figures=$nwant imgs=$nwant broken=[] svgs=$nwant svg_broken=[] "*) ;;
    *) fail "$dir: $nwant figures expected, each loading as PNG and SVG: $line" ;;
  esac
}

"$bin" run "$src/scenarios/fault_tolerance.cfg" --param run.end=86400 --param run.reps=2 --out "$work/ft.h5" --quiet ||
  fail "spotlab run fault_tolerance.cfg"
"$bin" report "$work/ft.h5" --out "$work/ft" > "$work/ft.log" 2>&1 || { cat "$work/ft.log"; fail "spotlab report"; }
check_report "$work/ft" "$work/ft.log"
for f in income utilization price jobs availability policies policy_jobs; do
  grep -q "wrote .*/$f.png" "$work/ft.log" || fail "the fault-tolerance report did not draw '$f'"
done

"$bin" sweep "$src/scenarios/phold.cfg" --param phold.remote=0.1,0.5 --reps 2 --out "$work/sw.h5" --quiet ||
  fail "spotlab sweep phold.cfg"
"$bin" report "$work/sw.h5" --out "$work/sw" > "$work/sw.log" 2>&1 || { cat "$work/sw.log"; fail "spotlab report (sweep)"; }
check_report "$work/sw" "$work/sw.log"

# The check sees a missing PNG and a damaged SVG (so a pass above means something).
rm "$work/ft/price.png"
head -c 200 "$work/ft/jobs.svg" > "$work/cut.svg" && mv "$work/cut.svg" "$work/ft/jobs.svg"
line=$(page_check "$work/ft") || fail "negative control: Chromium gave no check line"
case $line in *"broken=[price.png]"*"svg_broken=[jobs.svg]"*) echo "negative control: $line" | cut -c1-160 ;;
  *) fail "a missing price.png and a cut jobs.svg were not both seen: $line" ;;
esac
echo "report pages: every figure loads"
