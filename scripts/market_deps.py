#!/usr/bin/env python3
"""market_deps.py - which files of models/market call which (issue 48: no circle among them).

For every .c file of the folder, lists the other .c files whose non-static functions or objects
it uses: a name defined at the top level of one .c file without `static` (a function, a
descriptor, a table; mkt_internal.h and the public headers declare them) and named in another
(called, or taken as a pointer into a table). Comments and string literals are left out. Exits 1 when the files use each other
in a circle (a strongly connected group of two or more files), naming the circle, or when a file
tests a pool's or a rule's identity (compares with MKT_POOL_* or a clearing rule's descriptor, or
a pool's or rule's name with strcmp) outside the tables (mkt_pool.c, mkt_rules.c) and the
descriptors (pool_*.c, rule_*.c) instead of asking its descriptor, naming the line; 0 otherwise.

usage: scripts/market_deps.py [FOLDER]   (default: models/market beside this script's folder)
"""
import os
import re
import sys


def strip(text):
    """The C text without comments, string and character literals (line breaks kept)."""
    text = re.sub(r"/\*.*?\*/", lambda m: "\n" * m.group(0).count("\n"), text, flags=re.S)
    text = re.sub(r"//[^\n]*", "", text)
    text = re.sub(r'"(\\.|[^"\\\n])*"', '""', text)
    return re.sub(r"'(\\.|[^'\\\n])*'", "''", text)


def top_level(text):
    """The text at brace depth 0 (bodies blanked), so that definitions are read at the top level."""
    out, depth = [], 0
    for ch in text:
        if ch == "{":
            depth += 1
            out.append(ch if depth == 1 else " ")
        elif ch == "}":
            out.append(ch if depth == 1 else " ")
            depth -= 1
        else:
            out.append(ch if depth == 0 or ch == "\n" else " ")
    return "".join(out)


def definitions(text):
    """Names this file defines at the top level and does not keep to itself (no `static`): function
    bodies and initialised objects (a pool's or rule's descriptor, a table)."""
    t = top_level(text)
    found = set()
    pats = (r"\b(\w+)\s*\([^;{}]*\)\s*\{", r"\b(\w+)\s*(?:\[[^\]]*\])*\s*=")
    for pat in pats:
        for m in re.finditer(pat, t):
            start = max(t.rfind(";", 0, m.start()), t.rfind("}", 0, m.start()), t.rfind("#", 0, m.start()))
            decl = t[start + 1 : m.start()]
            if "\n#" in decl or re.search(r"\b(static|typedef|return)\b", decl) or "(" in decl or "=" in decl:
                continue
            if not decl.strip():  # a name alone is an assignment, not a definition
                continue
            found.add(m.group(1))
    return found


def graph(folder):
    files = sorted(f for f in os.listdir(folder) if f.endswith(".c"))
    text = {f: strip(open(os.path.join(folder, f)).read()) for f in files}
    owner = {}
    for f in files:
        for n in definitions(text[f]):
            owner[n] = f
    uses = {f: {} for f in files}
    for f in files:
        for w in set(re.findall(r"\b\w+\b", text[f])):
            o = owner.get(w)
            if o and o != f:
                uses[f].setdefault(o, []).append(w)
    return files, uses


def circles(files, uses):
    """Strongly connected groups of two or more files (Tarjan)."""
    index, low, stack, on, out, n = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = n[0]
        n[0] += 1
        stack.append(v)
        on.add(v)
        for w in uses[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in files:
        if v not in index:
            visit(v)
    return out


POOL_NAMES = ("fixed", "bidding", "flexible")
RULE_NAMES = ("gigaspot", "pay_as_bid", "vickrey", "double", "knapsack")
IDENTITY = re.compile(
    r"[!=]=\s*MKT_POOL_\w+|MKT_POOL_\w+\s*[!=]=|[!=]=\s*&mkt_rule_\w+|&mkt_rule_\w+\s*[!=]="
    r"|\bstr(?:n)?cmp\s*\([^;]*\"(?:%s)\"" % "|".join(POOL_NAMES + RULE_NAMES))


def identity_tests(folder, files):
    """Lines that test a pool's or a rule's identity (comments left out; string literals kept for
    the names)."""
    out = []
    for f in files:
        if f in ("mkt_pool.c", "mkt_rules.c") or f.startswith(("pool_", "rule_")):
            continue  # the tables and the descriptors themselves
        raw = open(os.path.join(folder, f)).read()
        text = re.sub(r"/\*.*?\*/", lambda m: "\n" * m.group(0).count("\n"), raw, flags=re.S)
        text = re.sub(r"//[^\n]*", "", text)
        for i, line in enumerate(text.split("\n")):
            if IDENTITY.search(line):
                out.append("%s:%d: %s" % (f, i + 1, line.strip()))
    return out


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    folder = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "..", "models", "market")
    files, uses = graph(folder)
    for f in files:
        if uses[f]:
            parts = ["%s (%s)" % (o, ", ".join(sorted(set(ws)))) for o, ws in sorted(uses[f].items())]
            print("%s -> %s" % (f, "; ".join(parts)))
        else:
            print("%s -> (none)" % f)
    bad = circles(files, uses)
    for comp in bad:
        print("CIRCLE: " + " <-> ".join(comp))
    ident = identity_tests(folder, files)
    for line in ident:
        print("IDENTITY: " + line)
    if not bad and not ident:
        print("no circle, no pool or rule identity test: %d files" % len(files))
    return 1 if bad or ident else 0


if __name__ == "__main__":
    sys.exit(main())
