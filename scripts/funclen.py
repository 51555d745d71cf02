#!/usr/bin/python3
"""Lists the C functions longer than a limit (lines from the first line of the signature to the
closing brace), longest first, and exits 1 when there is one: the house rule that no function in
models/market, lab/ or app/ is over 150 lines (issue 48) is the test `function_length`.

    scripts/funclen.py 150 models/market lab app      # folders (their .c files) or files

A top-level function is a brace at depth 0 after a line that names it; comments, strings and
character constants are blanked first. Brace counting, not a C parser: it reads the code as
clang-format writes it (docs/architecture.md)."""
import pathlib
import re
import sys


def blank(text):
    text = re.sub(r"/\*.*?\*/", lambda m: "\n" * m.group(0).count("\n"), text, flags=re.S)
    out = []
    for line in text.split("\n"):
        line = re.sub(r"//.*", "", line)
        line = re.sub(r'"(\\.|[^"\\])*"', '""', line)
        out.append(re.sub(r"'(\\.|[^'\\])*'", "''", line))
    return out


def functions(path):
    lines, depth, start = blank(path.read_text()), 0, None
    for i, line in enumerate(lines):
        for ch in line:
            if ch == "{":
                if depth == 0:
                    j = i
                    while j > 0 and not re.match(r"^[A-Za-z_]", lines[j]):
                        j -= 1
                    head = " ".join(lines[j:i + 1])
                    m = re.search(r"(\w+)\s*\(", lines[j])
                    start = (j, m.group(1)) if m and ")" in head and "=" not in lines[j] else None
                depth += 1
            elif ch == "}":
                depth -= 1
                if depth == 0 and start:
                    yield start[1], start[0] + 1, i - start[0] + 1
                    start = None


def main(argv):
    if len(argv) < 3 or not argv[1].isdigit():
        print(__doc__)
        return 2
    limit, files = int(argv[1]), []
    for a in argv[2:]:
        p = pathlib.Path(a)
        files += sorted(p.glob("*.c")) if p.is_dir() else [p]
    long = sorted(((n, f"{f}:{line}", name) for f in files for name, line, n in functions(f) if n > limit),
                  reverse=True)
    for n, where, name in long:
        print(f"{n:5d} {where} {name}")
    print(f"{len(long)} function(s) over {limit} lines in {len(files)} files")
    return 1 if long else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
