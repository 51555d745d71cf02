#!/bin/sh
# format_check.sh SRC - every C source and header of the project is as clang-format 14 (Debian 12's)
# formats it with the repository's .clang-format: `make format` applies it. CUDA files (.cu) are
# left out: clang-format 14 splits kernel launches (`k<<<a < b ? a : b, ...>>>`) into comparisons.
# Another clang-format major version formats differently, so with none or another the test is
# skipped (77), saying so.
src=$1
cf=$(command -v clang-format-14 || command -v clang-format) || { echo "SKIP: clang-format not found"; exit 77; }
ver=$("$cf" --version | sed -n 's/.*version \([0-9]*\)\..*/\1/p')
[ "$ver" = 14 ] || { echo "SKIP: $cf is version $ver; the format is defined by clang-format 14"; exit 77; }
cd "$src" || exit 1
files=$(find sim app models analysis lab kernels fuzz tests -name '*.[ch]' | sort)
n=$(echo "$files" | wc -l)
bad=0
for f in $files; do
  if ! "$cf" --dry-run -Werror "$f" > /dev/null 2>&1; then
    echo "not formatted: $f (first difference below; make format fixes it)"
    "$cf" "$f" | diff "$f" - | head -8
    bad=$((bad + 1))
  fi
done
[ $bad -eq 0 ] || { echo "FAIL: $bad of $n files are not formatted"; exit 1; }
echo "PASS: $n files formatted as .clang-format says ($cf, version $ver)"
