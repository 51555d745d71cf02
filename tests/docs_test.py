#!/usr/bin/env python3
"""docs_test.py - the commands and names shown in README.md and docs/*.md, run and checked.

    python3 tests/docs_test.py --bin build/spotlab --src . [--only docs/lab.md] [--keep DIR] [-v]

Every Markdown file of the checkout (README.md, docs/*.md, whatever is there now) is read and:

Fences
  ```sh, ```bash, ```shell   commands to run: every line that is not blank or a comment, joined
                             over trailing backslashes
  ```console                 the lines that start with "$ " are commands; the others are output
  ```synopsis                usage lines ("spotlab CMD [OPTIONS]", placeholders): not run, but
                             each command must exist in `spotlab --help`, each --option in
                             `spotlab CMD --help`, and together they must list every command
  ```python                  run by /usr/bin/python3 from the checkout's root with PYTHONPATH=python
                             (as README.md and docs/python.md tell a reader without an install),
                             each block in a fresh interpreter: a block imports and opens what it
                             uses; skipped, with the reason, where h5py or pandas are missing
  any other language         not run (scenario excerpts as ```cfg, ```c, layouts and output as
                             ```text)
  no language                not run, and an error when a line looks like a command (it starts
                             with spotlab, build/spotlab, make, mpirun, ctest, cmake, ...):
                             fence it sh, or synopsis, or text

Directives: HTML comments on the lines just before a fence (invisible when rendered)
  <!-- docs-test: skip REASON -->        do not run it; the reason is printed
  <!-- docs-test: args CMD ARGS... -->   append ARGS to every `spotlab CMD` of the block, to make
                                         it short (CMD may be two words in quotes: "bench sched");
                                         an option of ARGS (but --param) replaces the block's own
  <!-- docs-test: timeout SECONDS -->    the block's limit (default 120 s; --timeout-scale multiplies
                                         it, as ctest does under ASan)
  A command whose own trailing comment says "exit N" must exit N; every other command must exit 0.
  <!-- docs-test: output [rel=R] [abs=A] [any=REGEX] -->   before a ```text (or ```output) fence
                                         that shows what the run block just above it printed
                                         (stdout and stderr of its commands, in order): every
                                         non-blank line of the fence must be found in that output,
                                         in order (lines may be left out between them), with the
                                         same words and its numbers equal to what was printed, to
                                         the digits the doc shows (0.2729 stands for [0.27285,
                                         0.27295]); rel=0.05 or abs=0.01 allows that much instead;
                                         a line matching REGEX is compared by its words only (a
                                         wall time, a date). A failure names the doc's line, what it
                                         says and what the command printed. A figure quoted from
                                         a run that cannot be repeated here is written as an
                                         example with its date ("printed on 2026-12-02: ...") in
                                         a fence without the directive.

Directives before a paragraph or table
  <!-- docs-test: metrics -->     every `name` in backticks in the next paragraph is a metric
                                  (quantity or full name, `a|b` alternatives, CAPS placeholders)
                                  of some scenarios/*.cfg run, or a scenario key (market.x)
  <!-- docs-test: figures CSV KEYCOL COL... -->   each row of the next table quotes, for the
                                  metric in backticks in its first cell, the columns COL... of
                                  CSV (written by the blocks above in the same file), in order,
                                  rounded as written

Everywhere, outside fences too
  - a dotted metric name in backticks (`quantity.dimension.value`, dimension one of those the
    scenarios' metrics use) names a quantity and dimension that exist;
  - a scenario key in backticks (`market.x.y`, `run.x`, `phold.x`, `lab.x`) exists in
    `spotlab keys` / `spotlab lab --keys`;
  - a path in backticks or a link into the checkout (app/, docs/, scenarios/, ...) exists;
  - no pointer outside the checkout (../shared, shared/), no internal notes ("issue N").
And every scenario key that `spotlab CMD --help` names (`--param KEY=...`) is in `spotlab keys`.

How commands run: each Markdown file gets a scratch copy of the checkout's sources (no build
folders) with an empty results/ (as `make run` leaves a checkout), in which build/spotlab and
`spotlab` on PATH are the binary under test (with the block's args). Its blocks run in order in that folder with bash, so a later block sees the files
an earlier one wrote. MPI runs are allowed as root and oversubscribed (OMPI_* variables).
A failing command fails the test with the file, line, command and its output.
After a file's blocks, every file they wrote or changed in the copy must be one git ignores
(.gitignore: results/, build folders, ...): a command that writes into a tracked path, or
leaves a file `git status` would list, fails the test (checked when --src is a git checkout).
"""
import argparse
import concurrent.futures
import csv
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time

DEFAULT_TIMEOUT = 120
RUN_FENCES = {"sh", "bash", "shell"}
COMMAND_WORDS = ("spotlab", "build/spotlab", "make", "mpirun", "mpiexec", "ctest", "cmake", "cd", "export",
                 "python3", "pip", "bash", "sh", "scripts/", "./", "git ", "sudo", "apt-get")
# top-level folders of the checkout whose paths, written in backticks, must exist
REPO_DIRS = ("analysis", "app", "data", "docs", "fuzz", "kernels", "lab", "models", "scenarios", "scripts",
             "sim", "tests", "python", ".ci")
FORBIDDEN = [(re.compile(r"\.\./shared\b|(?<![\w./-])shared/"), "points outside the checkout (shared/)"),
             (re.compile(r"\bissues? \d+\b", re.I), "an internal note (issue N)"),
             (re.compile(r"\bthe lead\b|\b(this|next|a later) session\b", re.I), "an internal note")]
DIRECTIVE = re.compile(r"^\s*<!--\s*docs-test:\s*(.*?)\s*-->\s*$")
FENCE = re.compile(r"^(\s*)(`{3,}|~{3,})\s*([^`\s]*)[^`]*$")


class Failure(Exception):
    pass


# ---------------------------------------------------------------------------------------------
# Markdown

class Block:
    def __init__(self, path, line, info, lines, directives):
        self.path, self.line, self.info, self.lines, self.directives = path, line, info, lines, directives


class Prose:
    """A paragraph or table after a standalone directive."""
    def __init__(self, path, line, lines, directive):
        self.path, self.line, self.lines, self.directive = path, line, lines, directive


def parse_md(path, rel):
    """Returns (items in order: Block and Prose, prose lines with their numbers (outside fences))."""
    text = open(path, encoding="utf-8").read().split("\n")
    items, prose, pending, i = [], [], [], 0
    while i < len(text):
        ln = text[i]
        m = FENCE.match(ln)
        d = DIRECTIVE.match(ln)
        if d:
            pending.append((i + 1, d.group(1)))
            i += 1
            continue
        if m:
            indent, mark, info = len(m.group(1)), m.group(2), m.group(3).lower()
            body, j = [], i + 1
            while j < len(text):
                c = re.match(r"^\s*(`{3,}|~{3,})\s*$", text[j])
                if c and c.group(1)[0] == mark[0] and len(c.group(1)) >= len(mark):
                    break
                body.append(text[j][indent:] if text[j][:indent].strip() == "" else text[j].lstrip())
                j += 1
            if j == len(text):
                raise Failure(f"{rel}:{i + 1}: fence never closed")
            items.append(Block(rel, i + 1, info, [(i + 2 + k, b) for k, b in enumerate(body)],
                               [p for _, p in pending]))
            pending = []
            i = j + 1
            continue
        if pending and ln.strip():
            # standalone directives: they apply to this paragraph or table
            start, para = i, []
            while i < len(text) and text[i].strip() and not FENCE.match(text[i]):
                para.append((i + 1, text[i]))
                prose.append((i + 1, text[i]))
                i += 1
            for line, p in pending:
                items.append(Prose(rel, line, para, p))
            pending = []
            continue
        if ln.strip() and pending and not d:
            pending = []
        prose.append((i + 1, ln))
        i += 1
    if pending:
        raise Failure(f"{rel}:{pending[0][0]}: docs-test directive before nothing")
    return items, prose


def split_comment(cmd):
    """(command, trailing comment or '') for one shell line: a # that starts a word, outside quotes."""
    q = None
    for k, ch in enumerate(cmd):
        if q:
            if ch == q:
                q = None
            elif ch == "\\" and q == '"':
                pass
        elif ch in "'\"":
            q = ch
        elif ch == "#" and (k == 0 or cmd[k - 1] in " \t"):
            return cmd[:k].rstrip(), cmd[k + 1:].strip()
    return cmd.rstrip(), ""


def commands(block):
    """[(line, command, expected exit status)] of a block to run."""
    out, cur, start = [], "", None
    lines = block.lines
    if block.info == "console":
        lines = [(n, l[2:]) for n, l in lines if l.startswith("$ ")]
    for n, l in lines:
        if cur == "" and (not l.strip() or l.lstrip().startswith("#")):
            continue
        if start is None:
            start = n
        if l.rstrip().endswith("\\"):
            cur += l.rstrip()[:-1] + " "
            continue
        cur += l
        cmd, comment = split_comment(cur)
        m = re.search(r"\bexit (\d+)\W*$", comment)
        out.append((start, cmd, int(m.group(1)) if m else 0))
        cur, start = "", None
    if cur:
        raise Failure(f"{block.path}:{start}: a command ends with a backslash")
    return out


# ---------------------------------------------------------------------------------------------
# What the binary says about itself

class Spotlab:
    def __init__(self, binary):
        self.bin = binary
        top = self.out("--help")
        self.commands = {}
        f = False
        for l in top.split("\n"):
            if l.startswith("commands:"):
                f = True
            elif f and re.match(r"^  \S", l):
                m = re.match(r"^  (\S+(?: [a-z]\S*)?)\s{2,}", l)
                if m:
                    self.commands[m.group(1)] = None
        if not self.commands:
            raise Failure("spotlab --help lists no commands")
        for c in self.commands:
            self.commands[c] = self.out(*c.split(), "--help")
        self.keys = set()
        self.lists = set()  # keys that are lists: `market.regions.us.x` names an item of one
        for l in (self.out("keys") + self.out("lab", "--keys")).split("\n"):
            w = l.split()[0] if l.split() else ""
            if re.match(r"^[a-z_]+\.[a-z0-9_.\[\]]+$", w):
                self.keys.add(w.replace(".[i]", ""))
                parts = w.split(".[i]")
                for i in range(1, len(parts)):
                    self.lists.add("".join(parts[:i]).replace(".[i]", ""))
        if len(self.keys) < 10:
            raise Failure("spotlab keys listed fewer than 10 keys")

    def out(self, *args):
        r = subprocess.run([self.bin, *args], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                           timeout=60)
        if r.returncode != 0:
            raise Failure(f"spotlab {' '.join(args)} exited {r.returncode}:\n{r.stdout}")
        return r.stdout

    def is_key(self, k):
        # an item of a list, by name, [N] or N (--param market.regions.us.weekend_factor=0.8), is
        # dropped from the path: the key is the list's
        parts, kept = k.split("."), []
        i = 0
        while i < len(parts):
            kept.append(parts[i])
            if ".".join(kept) in self.lists and i + 1 < len(parts):
                i += 1  # the item selector
            i += 1
        k = ".".join(kept)
        return k in self.keys or any(x.startswith(k + ".") for x in self.keys)


def metric_names(sp, src, work):
    """Metric names of every scenarios/*.cfg (one short replication each), read back by report."""
    d = os.path.join(work, "metrics")
    os.makedirs(d, exist_ok=True)
    names = set()
    for cfg in sorted(os.listdir(os.path.join(src, "scenarios"))):
        if not cfg.endswith(".cfg") or cfg.startswith("experiment_"):
            continue  # experiment_*.cfg are experiment files (docs/experiments.md), not scenarios
        h5 = os.path.join(d, cfg[:-4] + ".h5")
        r = subprocess.run([sp.bin, "run", os.path.join(src, "scenarios", cfg), "--reps", "1", "--quiet",
                            "--out", h5], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=120)
        if r.returncode:
            raise Failure(f"scenarios/{cfg}: spotlab run exited {r.returncode}:\n{r.stdout}")
        rep = h5[:-3] + "-report"
        r = subprocess.run([sp.bin, "report", h5, "--out", rep, "--gnuplot", "none", "--quiet"],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=120)
        if r.returncode:
            raise Failure(f"spotlab report {h5} exited {r.returncode}:\n{r.stdout}")
        with open(os.path.join(rep, "summary.csv"), newline="") as f:
            names.update(row["metric"] for row in csv.DictReader(f))
    if len(names) < 20:
        raise Failure(f"the scenarios' runs gave only {len(names)} metrics")
    return names


# ---------------------------------------------------------------------------------------------
# Checks that need no run

def is_placeholder(word):
    return bool(re.fullmatch(r"[A-Z][A-Z0-9_]*|\.\.\.|N+|<[^>]*>", word))


class Metrics:
    """Metric names of real runs; a name in a doc may hold placeholders: CAPS words (PERSONA, P),
    `*` or `...`, for any lowercase part."""
    DIM_WORDS = {"persona": "persona", "pool": "pool", "region": "region", "class": "class",
                 "gpu model": "gpu", "policy": "policy", "strategy": "strategy"}

    def __init__(self, names):
        self.names = sorted(names)
        self.split = [n.split(".") for n in self.names]
        self.dimnames = {p[k] for p in self.split for k in range(1, len(p) - 1, 2)}
        self.values = {p[k] for p in self.split for k in range(2, len(p), 2)}

    @staticmethod
    def _rx(part):
        if part in ("*", "..."):
            return re.compile(r"[a-z0-9_]+")
        return re.compile(re.sub(r"[A-Z][A-Z0-9]*", "[a-z0-9_]+", re.escape(part).replace(r"\*", "[a-z0-9_]*")))

    def check(self, tok, dim=None):
        """None if tok names a metric (or a family of them, `a|b` for either), else why not.
        dim: the dimension it must have ('' = none, None = any)."""
        for alt in tok.split("|"):
            parts = [self._rx(x) for x in alt.split(".")]
            hits = [p for p in self.split if len(p) >= len(parts) and all(r.fullmatch(x) for r, x in zip(parts, p))]
            if len(parts) >= 2:
                hits = [p for p in hits if len(p) >= 2]
            if not hits:
                return f"no metric named like '{alt}'"
            if dim is not None and len(parts) == 1:
                if not any((len(p) == 1 and dim == "") or (len(p) >= 2 and p[1] == dim) for p in hits):
                    return f"no metric '{alt}' " + (f"per {dim}" if dim else "without a dimension")
        return None

    def looks_like(self, tok):
        """A dotted name whose second part is a dimension the metrics use, or `name.*`."""
        parts = tok.split(".")
        return (len(parts) >= 2 and re.fullmatch(r"[a-z][a-z0-9_]*|quantity", parts[0]) is not None
                and parts[0] not in self.values  # `henry.pool.bidding`: a dimension's value, not a metric
                and (parts[1] in self.dimnames or parts[1] == "*"))


def backticked(line):
    return re.findall(r"`([^`]+)`", line)


def check_prose(rel, prose, sp, metrics, src, errors):
    for n, l in prose:
        for rx, why in FORBIDDEN:
            if rx.search(l):
                errors.append(f"{rel}:{n}: {why}: {l.strip()}")
        for tok in backticked(l):
            check_token(rel, n, tok, sp, metrics, src, errors)
        for target in re.findall(r"\]\(([^)\s#]+)", l):
            if re.match(r"^[a-z]+:", target):
                continue
            p = os.path.normpath(os.path.join(src, os.path.dirname(rel), target))
            if not os.path.exists(p):
                errors.append(f"{rel}:{n}: link to a file that does not exist: {target}")


def check_token(rel, n, tok, sp, metrics, src, errors):
    t = tok.strip()
    key = re.match(r"^((?:run|market|phold|lab)\.[a-z0-9_.\[\]]+?)\s*(?:=.*|;)?$", t)
    if key and not key.group(1).endswith("."):
        if not sp.is_key(key.group(1)):
            errors.append(f"{rel}:{n}: `{tok}`: no such scenario key (spotlab keys)")
        return
    if t.split() and metrics.looks_like(t.split()[0]):
        why = None if t.split()[0].startswith("quantity.") else metrics.check(t.split()[0])
        if why:
            errors.append(f"{rel}:{n}: `{tok}`: {why} in the scenarios' results")
        return
    m = re.match(r"^(\.?[a-z]+)/[\w./*-]*$", t)
    if m and m.group(1) in REPO_DIRS and not any(is_placeholder(w) or w in ("NAME",)
                                                  for w in re.split(r"[/._-]", t) if w):
        if "<" in t:
            return
        p = os.path.join(src, t)
        import glob
        if not glob.glob(p):
            errors.append(f"{rel}:{n}: `{tok}`: no such file in the checkout")


def check_metrics_paragraph(item, metrics, sp, errors):
    """Every `token` is a metric; in a part (between ';' and ':') that opens with "per DIM" or
    "overall", of that dimension or of none."""
    text = " ".join(l for _, l in item.lines)
    first = item.lines[0][0] if item.lines else item.line
    for seg in re.split(r"[;:]\s", text):
        m = re.match(r"\s*(per (?:gpu model|[a-z]+)|overall)\b", seg, re.I)
        dim = None
        if m:
            w = m.group(1).lower()
            dim = "" if w == "overall" else metrics.DIM_WORDS.get(w[4:])
        for tok in backticked(seg):
            t = tok.strip()
            if t.startswith(("spotlab", "-")):
                continue
            if re.match(r"^(run|market|phold|lab)\.", t):
                if not sp.is_key(t.split("=")[0].strip()):
                    errors.append(f"{item.path}:{first}: `{tok}`: no such scenario key")
                continue
            why = metrics.check(t, dim if "." not in t else None)
            if why:
                errors.append(f"{item.path}:{first}: `{tok}` in a list of metrics: {why} in the scenarios' results")


def check_synopsis(block, sp, seen, errors):
    for n, l in block.lines:
        s = l.strip()
        if s.startswith("$ "):
            s = s[2:]
        if not s or s.startswith("#"):
            continue
        cmd, _ = split_comment(s)
        w = cmd.split()
        if w[0] not in ("spotlab", "build/spotlab"):
            errors.append(f"{block.path}:{n}: a synopsis line that does not start with spotlab: {s}")
            continue
        first = w[1] if len(w) > 1 else ""
        names = []
        if first in sp.commands:
            names = [first]
        elif len(w) > 2 and re.fullmatch(r"[a-z|]+", w[2]):
            names = [f"{first} {alt}" for alt in w[2].split("|")]
        for c in names or [first]:
            if c not in sp.commands:
                errors.append(f"{block.path}:{n}: `spotlab {c}` is not a command of spotlab --help")
                continue
            seen.add(c)
            for opt in re.findall(r"(?<![\w-])(--[a-z][a-z-]*)", cmd):
                if not re.search(r"(?<![\w-])" + re.escape(opt) + r"\b", sp.commands[c]):
                    errors.append(f"{block.path}:{n}: `spotlab {c} {opt}`: not an option of spotlab {c} --help")


def check_help_keys(sp, errors):
    """Every scenario key a command's --help names (--param KEY=..., run.reps, lab.speeds) exists."""
    for c, text in sp.commands.items():
        for k in re.findall(r"(?<![\w/.-])((?:run|market|phold|lab)\.[a-z_][a-z0-9_.]*[a-z0-9_])", text):
            if k.endswith(".md"):
                continue
            if not sp.is_key(k):
                errors.append(f"spotlab {c} --help names the key {k}, which is no key of spotlab keys")


def check_figures(item, scratch, errors):
    w = shlex.split(item.directive)[1:]
    if len(w) < 3:
        errors.append(f"{item.path}:{item.line}: figures wants CSV KEYCOL COL...")
        return
    path, keycol, cols = os.path.join(scratch, w[0]), w[1], w[2:]
    try:
        with open(path, newline="") as f:
            rows = {r[keycol]: r for r in csv.DictReader(f)}
    except OSError as e:
        errors.append(f"{item.path}:{item.line}: figures: {w[0]}: {e.strerror} (written by no block above?)")
        return
    checked = 0
    for n, l in item.lines:
        cells = [c.strip() for c in l.strip().strip("|").split("|")]
        if len(cells) < 2 or re.fullmatch(r"[-: |]+", l.strip()):
            continue
        names = backticked(cells[0])
        if not names:
            continue
        name = names[0]
        if name not in rows:
            errors.append(f"{item.path}:{n}: `{name}` is not in {w[0]}")
            continue
        nums = re.findall(r"[-+]?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?", " ".join(cells[1:]))
        if len(nums) != len(cols):
            errors.append(f"{item.path}:{n}: {len(nums)} figures where {len(cols)} ({', '.join(cols)}) are quoted")
            continue
        for q, col in zip(nums, cols):
            v = float(rows[name][col])
            dec = len(q.split(".")[1]) if "." in q and "e" not in q.lower() else 0
            if abs(float(q) - v) > 0.5 * 10 ** -dec * (1 + 1e-9) + 1e-12:
                errors.append(f"{item.path}:{n}: `{name}` {col}: the doc says {q}, the run gives {v:.6g}")
        checked += 1
    if not checked:
        errors.append(f"{item.path}:{item.line}: figures: no table row with a metric after the directive")


# ---------------------------------------------------------------------------------------------
# Printed output quoted in a doc

NUMBER = re.compile(r"(?<![\w.])[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?(?![\w])")


def line_shape(line):
    """(words, numbers): the line with each number replaced by a placeholder and whitespace runs
    collapsed, and its numbers as written."""
    nums = NUMBER.findall(line)
    words = " ".join(NUMBER.sub("\x00", line).split())
    return words, nums


def number_matches(doc, got, rel, ab):
    """Whether the printed number `got` is the doc's `doc`: to the doc's digits (half a unit of its
    last place), or within rel (relative) or abs."""
    try:
        d, g = float(doc), float(got)
    except ValueError:
        return doc == got
    if rel is not None and abs(g - d) <= rel * abs(d):
        return True
    if ab is not None and abs(g - d) <= ab:
        return True
    mant = doc.lower().split("e")[0]
    dec = len(mant.split(".")[1]) if "." in mant else 0
    scale = 10 ** int(doc.lower().split("e")[1]) if "e" in doc.lower() else 1
    return abs(g - d) <= 0.5 * 10 ** -dec * scale * (1 + 1e-9) + 1e-12


def parse_output_directive(d):
    """(rel, abs, any regex or None) of `output [rel=R] [abs=A] [any=REGEX]`, or raises ValueError."""
    rel = ab = anyrx = None
    for w in shlex.split(d)[1:]:
        k, _, v = w.partition("=")
        if k == "rel":
            rel = float(v)
        elif k == "abs":
            ab = float(v)
        elif k == "any":
            anyrx = re.compile(v)
        else:
            raise ValueError(f"unknown option '{w}' (rel=R, abs=A, any=REGEX)")
    return rel, ab, anyrx


def check_output(block, run, errors):
    """The fence `block` (after an output directive) against the output of `run`, the run block
    above it: (source Block, printed text)."""
    d = next(x for x in block.directives if x.split()[:1] == ["output"])
    try:
        rel, ab, anyrx = parse_output_directive(d)
    except ValueError as e:
        errors.append(f"{block.path}:{block.line - 1}: docs-test output: {e}")
        return
    src, text = run
    got = [l for l in text.split("\n") if l.strip()]
    shapes = [line_shape(l) for l in got]
    k = 0
    for n, want in block.lines:
        if not want.strip() or want.strip() in ("...", "…"):
            continue
        ww, wn = line_shape(want)
        hit = next((i for i in range(k, len(got)) if shapes[i][0] == ww), None)
        if hit is None:
            import difflib
            near = difflib.get_close_matches(want.strip(), [g.strip() for g in got[k:]], n=1, cutoff=0.3)
            errors.append(f"{block.path}:{n}: the doc shows\n    {want.strip()}\n  but no line printed by the block at "
                          f"{src.path}:{src.line} (after the lines matched above) reads like it"
                          + (f"; the closest:\n    {near[0]}" if near else " (it printed nothing like it)"))
            continue
        k = hit + 1
        if anyrx and anyrx.search(want):
            continue
        bad = [(a, b) for a, b in zip(wn, shapes[hit][1]) if not number_matches(a, b, rel, ab)]
        if bad:
            errors.append(f"{block.path}:{n}: a printed figure no longer matches: the doc says "
                          + ", ".join(f"{a} where the run printed {b}" for a, b in bad)
                          + f"\n    doc: {want.strip()}\n    got: {got[hit].strip()}")


def block_output(scratch, block, cmds):
    logs = os.path.join(scratch, ".docs-logs")
    out = []
    for k in range(len(cmds)):
        p = os.path.join(logs, f"{block.line}-{k}.log")
        if os.path.exists(p):
            out.append(open(p, errors="replace").read())
    return "".join(out)


SCRATCH_OWN = {".docs-bin", ".docs-logs"}


def snapshot(d):
    """{relative path: (size, mtime)} of the files under d (but the test's own folders)."""
    out = {}
    for root, dirs, files in os.walk(d):
        if root == d:
            dirs[:] = [x for x in dirs if x not in SCRATCH_OWN]
        for f in files:
            p = os.path.join(root, f)
            try:
                st = os.lstat(p)
            except OSError:
                continue
            out[os.path.relpath(p, d)] = (st.st_size, st.st_mtime_ns)
    return out


def git_tracked(src):
    """The checkout's tracked files, or None when src is not a git checkout."""
    try:
        r = subprocess.run(["git", "-C", src, "ls-files", "-z"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                           timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return None
    if r.returncode != 0:
        return None
    return set(x for x in r.stdout.decode("utf-8", "replace").split("\0") if x)


def check_written(rel, src, tracked, before, after, errors):
    """Files the blocks of `rel` wrote in its copy: none tracked, each ignored by .gitignore."""
    written = sorted(p for p, v in after.items() if before.get(p) != v)
    if not written or tracked is None:
        return
    bad = [f"{p} (a tracked file)" for p in written if p in tracked]
    rest = [p for p in written if p not in tracked]
    if rest:
        r = subprocess.run(["git", "-C", src, "check-ignore", "--no-index", "--stdin", "-z"],
                           input="\0".join(rest).encode(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
        ignored = set(x for x in r.stdout.decode("utf-8", "replace").split("\0") if x)
        bad += [f"{p} (not in .gitignore: `git status` would list it)" for p in rest if p not in ignored]
    if bad:
        more = f" and {len(bad) - 10} more" if len(bad) > 10 else ""
        errors.append(f"{rel}: its commands wrote into the checkout where git sees it (write under results/, or "
                      f"ignore the folder): " + "; ".join(bad[:10]) + more)


# ---------------------------------------------------------------------------------------------
# Running blocks

def make_scratch(src, work, rel):
    d = os.path.join(work, re.sub(r"[^\w.-]", "_", rel))
    top = {"results", "gpu-bundle", "compare"}                # outputs, at the top only
    anywhere = {".git", "__pycache__", ".venv", "venv", ".pytest_cache"}

    def ignore(folder, names):
        return [x for x in names if x in anywhere or x.endswith(".egg-info")
                or (folder == src and (x in top or x.startswith("build")))
                or os.path.exists(os.path.join(folder, x, "CMakeCache.txt"))]
    shutil.copytree(src, d, ignore=ignore, symlinks=True)
    os.makedirs(os.path.join(d, "build"), exist_ok=True)
    os.makedirs(os.path.join(d, "results"), exist_ok=True)  # as `make run` leaves the checkout
    os.makedirs(os.path.join(d, ".docs-bin"), exist_ok=True)
    return d


def write_wrapper(scratch, binary, args):
    """build/spotlab and .docs-bin/spotlab: the binary under test, with the block's added args."""
    lines = ["#!/bin/sh", "# docs_test.py: the spotlab under test, with this block's docs-test args"]
    for sub, extra in args:
        words = sub.split()
        cond = " && ".join(f'[ "${k + 1}" = {shlex.quote(x)} ]' for k, x in enumerate(words))
        # spotlab refuses an option given twice (but --param): the block's own value of an option
        # that ARGS sets is dropped, so that ARGS's wins
        cases = []
        for k, e in enumerate(extra):
            if not e.startswith("--") or e == "--param":
                continue
            name = e.split("=")[0]
            valued = "=" in e or (k + 1 < len(extra) and not extra[k + 1].startswith("--"))
            cases.append(f"{name}) {'skip=1; ' if valued else ''}continue;;")
            if valued:
                cases.append(f"{name}=*) continue;;")
        filt = ""
        if cases:
            filt = ('skip=0; first=1; for a in "$@"; do if [ $first = 1 ]; then set --; first=0; fi; '
                    'if [ $skip = 1 ]; then skip=0; continue; fi; case "$a" in ' + " ".join(cases) +
                    ' esac; set -- "$@" "$a"; done; ')
        lines.append(f'if {cond}; then {filt}exec {shlex.quote(binary)} "$@" {" ".join(shlex.quote(e) for e in extra)}; fi')
    lines.append(f'exec {shlex.quote(binary)} "$@"')
    for p in (os.path.join(scratch, "build", "spotlab"), os.path.join(scratch, ".docs-bin", "spotlab")):
        with open(p, "w") as f:
            f.write("\n".join(lines) + "\n")
        os.chmod(p, 0o755)


PYTHON = "/usr/bin/python3"


def python_commands(block, scratch):
    """A python block as one command: its code in a file, run from the checkout's root."""
    logs = os.path.join(scratch, ".docs-logs")
    os.makedirs(logs, exist_ok=True)
    py = os.path.join(logs, f"{block.line}.py")
    with open(py, "w") as f:
        f.write("\n".join(l for _, l in block.lines) + "\n")
    return [(block.line, f"PYTHONPATH=python {PYTHON} {shlex.quote(py)}", 0)]


def run_block(block, cmds, scratch, binary, args, timeout, env):
    """None, or the failure's text."""
    write_wrapper(scratch, binary, args)
    logs = os.path.join(scratch, ".docs-logs")
    os.makedirs(logs, exist_ok=True)
    state = os.path.join(logs, "current")
    script = ["cd " + shlex.quote(scratch)]
    for k, (n, cmd, want) in enumerate(cmds):
        log = os.path.join(logs, f"{block.line}-{k}.log")
        script += [f"echo {k} > {shlex.quote(state)}",
                   "{ " + cmd, f"}} > {shlex.quote(log)} 2>&1 < /dev/null",
                   f"__s=$?; if [ $__s -ne {want} ]; then echo \"$__s\" > {shlex.quote(state)}.status; exit 1; fi"]
    t0 = time.monotonic()
    try:
        p = subprocess.Popen(["bash", "-c", "\n".join(script)], cwd=scratch, env=env, start_new_session=True,
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        out, _ = p.communicate(timeout=timeout)
        rc, timed_out = p.returncode, False
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, 9)
        out, _ = p.communicate()
        rc, timed_out = -9, True
    dt = time.monotonic() - t0
    if rc == 0:
        return None, dt
    try:
        k = int(open(state).read())
    except (OSError, ValueError):
        return f"{block.path}:{block.line}: the block failed before its first command:\n{out}", dt
    n, cmd, want = cmds[k]
    log = os.path.join(logs, f"{block.line}-{k}.log")
    text = open(log, errors="replace").read() if os.path.exists(log) else ""
    tail = "\n".join(text.rstrip("\n").split("\n")[-40:])
    if timed_out:
        why = (f"still running after the block's {timeout} s limit (shorten it with <!-- docs-test: args ... -->, "
               f"or skip it with a reason)")
    else:
        try:
            st = open(state + ".status").read().strip()
        except OSError:
            st = "?"
        why = f"exited {st}, expected {want}"
    return f"{block.path}:{n}: `{cmd}` {why}; its output:\n{tail}\n{out}", dt


def parse_directives(block, errors):
    skip, args, timeout = None, [], DEFAULT_TIMEOUT
    for d in block.directives:
        if d.split()[:1] == ["skip"]:  # a reason is prose (apostrophes and all), not shell words
            skip = d.split(None, 1)[1].strip() if len(d.split()) > 1 else None
            if not skip:
                errors.append(f"{block.path}:{block.line}: skip without a reason")
                skip = "(no reason)"
            continue
        try:
            w = shlex.split(d)
        except ValueError as e:
            errors.append(f"{block.path}:{block.line}: directive '{d}': {e}")
            continue
        if not w:
            continue
        if w[0] == "skip":
            skip = " ".join(w[1:]) or None
            if not skip:
                errors.append(f"{block.path}:{block.line}: skip without a reason")
                skip = "(no reason)"
        elif w[0] == "args" and len(w) >= 3:
            args.append((w[1], w[2:]))
        elif w[0] == "timeout" and len(w) == 2 and w[1].isdigit():
            timeout = int(w[1])
        elif w[0] == "output":
            errors.append(f"{block.path}:{block.line}: docs-test output goes before the ```text fence that shows "
                          f"a run block's output, not before a command block")
        else:
            errors.append(f"{block.path}:{block.line}: unknown docs-test directive '{d}'")
    return skip, args, timeout


def looks_like_commands(block):
    for n, l in block.lines:
        s = re.sub(r"^(?:[A-Za-z_][A-Za-z0-9_]*=\S*\s+)+", "", l.strip())  # VAR=value cmd
        if s.startswith("$ "):
            return n
        if any(s == w.strip() or s.startswith(w if w.endswith(("/", " ")) else w + " ") for w in COMMAND_WORDS):
            return n
    return None


def process_file(path, rel, ctx):
    """Returns (report lines, errors, ran, skipped, other, synopsis, commands, seconds)."""
    errors, report = [], []
    stats = {"ran": 0, "skipped": [], "other": 0, "synopsis": 0, "commands": 0, "outputs": 0}
    try:
        items, prose = parse_md(path, rel)
    except Failure as e:
        return report, [str(e)], stats
    check_prose(rel, prose, ctx.sp, ctx.metrics, ctx.src, errors)
    scratch = None
    before = None
    last_run = None  # (Block, its printed output) of the last run block, None after a skipped one
    t_file = time.monotonic()
    for it in items:
        if isinstance(it, Prose):
            w = it.directive.split()
            if w and w[0] == "metrics":
                check_metrics_paragraph(it, ctx.metrics, ctx.sp, errors)
            elif w and w[0] == "figures":
                check_figures(it, scratch or "/nonexistent", errors)
            else:
                errors.append(f"{rel}:{it.line}: unknown docs-test directive before a paragraph: '{it.directive}'")
            continue
        b = it
        for n, l in b.lines:
            for rx, why in FORBIDDEN:
                if rx.search(l):
                    errors.append(f"{rel}:{n}: {why}: {l.strip()}")
        if b.info == "synopsis":
            stats["synopsis"] += 1
            check_synopsis(b, ctx.sp, ctx.seen, errors)
            continue
        if b.info not in RUN_FENCES and b.info not in ("console", "python"):
            if b.info == "":
                n = looks_like_commands(b)
                if n:
                    errors.append(f"{rel}:{n}: a fence without a language holds commands: fence it sh (they run), "
                                  f"synopsis (usage lines) or text")
            if any(d.split()[:1] == ["output"] for d in b.directives):
                if len(b.directives) > 1:
                    errors.append(f"{rel}:{b.line}: only the output directive goes before an output fence")
                if b.info not in ("text", "output"):
                    errors.append(f"{rel}:{b.line}: docs-test output before a ```{b.info} fence (```text or ```output)")
                elif last_run is None:
                    stats["skipped"].append(f"{rel}:{b.line}: output not compared: the block above it did not run")
                elif last_run is not False:
                    check_output(b, last_run, errors)
                    stats["outputs"] += 1
            elif b.directives:
                errors.append(f"{rel}:{b.line}: docs-test directives before a fence that is not run")
            stats["other"] += 1
            continue
        skip, args, timeout = parse_directives(b, errors)
        last_run = None
        if b.info == "python" and not skip and not ctx.python_ok:
            skip = f"{PYTHON} has no h5py or pandas"
        try:
            cmds = commands(b) if b.info != "python" else [(b.line, "", 0)]
        except Failure as e:
            errors.append(str(e))
            continue
        if skip:
            stats["skipped"].append(f"{rel}:{b.line}: {skip}")
            continue
        if not cmds:
            errors.append(f"{rel}:{b.line}: a command fence with no command")
            continue
        if scratch is None:
            scratch = make_scratch(ctx.src, ctx.work, rel)
            before = snapshot(scratch)
        if b.info == "python":
            cmds = python_commands(b, scratch)
        fail, dt = run_block(b, cmds, scratch, ctx.bin, args, timeout * ctx.timeout_scale, ctx.env)
        last_run = False if fail else (b, block_output(scratch, b, cmds))
        stats["ran"] += 1
        stats["commands"] += len(cmds)
        if ctx.verbose:
            report.append(f"  {rel}:{b.line}: {len(cmds)} command(s), {dt:.1f} s" + (" FAILED" if fail else ""))
        if fail:
            errors.append(fail)
    if scratch is not None:
        check_written(rel, ctx.src, ctx.tracked, before, snapshot(scratch), errors)
    stats["seconds"] = time.monotonic() - t_file
    return report, errors, stats


class Ctx:
    pass


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", required=True)
    ap.add_argument("--src", required=True)
    ap.add_argument("--only", action="append", help="only this Markdown file (relative to --src)")
    ap.add_argument("--keep", help="scratch folder to use and keep (default: a temporary one, removed)")
    ap.add_argument("--jobs", type=int, default=int(os.environ.get("DOCS_TEST_JOBS", "2")))
    ap.add_argument("--timeout-scale", type=int, default=1,
                    help="multiply every block's limit by this (a sanitized build runs two to three times slower)")
    ap.add_argument("-v", "--verbose", action="store_true")
    a = ap.parse_args()
    if a.timeout_scale < 1:
        ap.error(f"--timeout-scale {a.timeout_scale}: at least 1")
    t0 = time.monotonic()
    ctx = Ctx()
    ctx.src, ctx.bin, ctx.verbose = os.path.abspath(a.src), os.path.abspath(a.bin), a.verbose
    ctx.timeout_scale = a.timeout_scale
    ctx.work = os.path.abspath(a.keep) if a.keep else tempfile.mkdtemp(prefix="spotlab_docs.")
    os.makedirs(ctx.work, exist_ok=True)
    env = dict(os.environ)
    env.update({"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
                "OMPI_MCA_rmaps_base_oversubscribe": "1"})
    env.setdefault("OMP_NUM_THREADS", "2")
    ctx.env = env
    errors = []
    try:
        ctx.sp = Spotlab(ctx.bin)
        ctx.metrics = Metrics(metric_names(ctx.sp, ctx.src, ctx.work))
    except (Failure, subprocess.TimeoutExpired) as e:
        print(f"FAIL: {e}")
        return 1
    check_help_keys(ctx.sp, errors)
    ctx.seen = set()
    ctx.tracked = git_tracked(ctx.src)
    if ctx.tracked is None:
        print(f"(--src {ctx.src} is not a git checkout: what the blocks write is not checked against .gitignore)")
    ctx.python_ok = subprocess.run([PYTHON, "-c", "import h5py, pandas"], stdout=subprocess.DEVNULL,
                                   stderr=subprocess.DEVNULL).returncode == 0 if os.path.exists(PYTHON) else False
    files = a.only or (["README.md"] + sorted(os.path.join("docs", f) for f in os.listdir(os.path.join(ctx.src, "docs"))
                                              if f.endswith(".md")))
    # each file's scratch folder: PATH finds the block's spotlab there
    results = {}
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, a.jobs)) as ex:
        futs = {}
        for rel in files:
            e = dict(env)
            d = os.path.join(ctx.work, re.sub(r"[^\w.-]", "_", rel))
            e["PATH"] = os.path.join(d, ".docs-bin") + os.pathsep + env.get("PATH", "")
            c = Ctx()
            c.__dict__.update(ctx.__dict__)
            c.env = e
            futs[ex.submit(process_file, os.path.join(ctx.src, rel), rel, c)] = rel
        for f in concurrent.futures.as_completed(futs):
            results[futs[f]] = f.result()
    ran = skipped = other = syn = ncmd = nout = 0
    skips = []
    for rel in files:
        rep, errs, st = results[rel]
        for r in rep:
            print(r)
        errors += errs
        ran += st["ran"]
        skipped += len(st["skipped"])
        skips += st["skipped"]
        other += st["other"]
        syn += st["synopsis"]
        ncmd += st["commands"]
        nout += st.get("outputs", 0)
        print(f"{rel}: {st['ran']} block(s) run ({st['commands']} commands), {len(st['skipped'])} skipped, "
              f"{st['synopsis']} synopsis, {st['other']} not commands, {st.get('outputs', 0)} outputs compared; "
              f"{st.get('seconds', 0):.1f} s")
    if not a.only:
        missing = sorted(set(ctx.sp.commands) - ctx.seen)
        if missing:
            errors.append("no synopsis block lists: " + ", ".join(f"spotlab {m}" for m in missing))
    print(f"\n{ran} blocks run ({ncmd} commands), {nout} printed outputs compared, {skipped} skipped, "
          f"{syn} synopsis blocks checked against --help, "
          f"{other} other fences not run; {len(ctx.metrics.names)} metric names from the scenarios; "
          f"{time.monotonic() - t0:.1f} s")
    for s in skips:
        print("  skipped " + s)
    if not a.keep:
        shutil.rmtree(ctx.work, ignore_errors=True)
    if errors:
        print(f"\n{len(errors)} problem(s):")
        for e in errors:
            print("FAIL " + e)
        return 1
    print("docs test: passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
