#!/usr/bin/python3
"""ab_pairs.py - two commands timed in turn, pair after pair, and the ratio of their wall times.

Usage: scripts/ab_pairs.py [-n PAIRS] [--warmup PAIRS] [--first b] [--out FILE] -- "COMMAND A" "COMMAND B"

Runs A then B (or B then A with --first b) PAIRS times (default 5), each through /bin/sh with its
output thrown away, and prints one line per run and a table: each command's median, fastest and
slowest wall time (s) and peak resident memory (MiB, of its largest process; never below this
script's own, about 12 MiB, which Linux carries across exec), then the median,
fastest and slowest of the per-pair ratios A/B. The machines this project is measured on are shared:
running the two in turn puts whatever load there is on both alike, and the per-pair ratio is the
figure to quote (docs/performance.md). A command that exits with a status other than 0 stops the
measurement (exit status 1, its last output lines shown); bad arguments are exit status 2.
--warmup PAIRS runs that many pairs first and leaves them out (default 0). --out FILE also writes
the table there.
"""
import os
import statistics
import subprocess
import sys
import tempfile
import time


def usage(msg):
    sys.stderr.write("ab_pairs.py: %s (--help)\n" % msg)
    sys.exit(2)


def run_once(cmd, log):
    """Wall seconds and peak RSS (MiB, largest process) of one run of cmd; exits on failure."""
    t0 = time.monotonic()
    with open(log, "wb") as out:
        p = subprocess.Popen(["/bin/sh", "-c", cmd], stdout=out, stderr=subprocess.STDOUT)
        _, status, ru = os.wait4(p.pid, 0)
    wall = time.monotonic() - t0
    p.returncode = os.waitstatus_to_exitcode(status)
    if p.returncode != 0:
        with open(log, "rb") as f:
            tail = f.read()[-2000:].decode(errors="replace")
        sys.stderr.write("ab_pairs.py: `%s` exited with status %d; its last output:\n%s\n" % (cmd, p.returncode, tail))
        sys.exit(1)
    return wall, ru.ru_maxrss / 1024.0  # ru_maxrss: KiB on Linux


def main(argv):
    n, warm, first, out, cmds = 5, 0, "a", None, None
    i = 0
    while i < len(argv):
        a = argv[i]
        if a in ("-h", "--help"):
            sys.stdout.write(__doc__.split("\n", 1)[1].lstrip("\n"))
            return 0
        if a in ("-n", "--warmup") and i + 1 < len(argv):
            try:
                v = int(argv[i + 1])
            except ValueError:
                usage("%s wants a whole number of pairs, not '%s'" % (a, argv[i + 1]))
            if v < (1 if a == "-n" else 0):
                usage("-n wants at least 1 pair" if a == "-n" else "--warmup wants 0 pairs or more")
            if a == "-n":
                n = v
            else:
                warm = v
            i += 2
        elif a == "--first" and i + 1 < len(argv):
            first = argv[i + 1]
            if first not in ("a", "b"):
                usage("--first is a or b, not '%s'" % first)
            i += 2
        elif a == "--out" and i + 1 < len(argv):
            out = argv[i + 1]
            i += 2
        elif a == "--":
            cmds = argv[i + 1:]
            break
        else:
            usage("unknown argument '%s'" % a)
    if cmds is None or len(cmds) != 2 or not all(c.strip() for c in cmds):
        usage('want -- "COMMAND A" "COMMAND B"')
    walls = {"a": [], "b": []}
    rss = {"a": [], "b": []}
    fd, log = tempfile.mkstemp(prefix="ab_pairs.")
    os.close(fd)
    try:
        for k in range(warm):
            for who in (("a", "b") if first == "a" else ("b", "a")):
                w, m = run_once(cmds[0] if who == "a" else cmds[1], log)
                sys.stdout.write("warm-up %d/%d: %s %.3f s, %.1f MiB (left out)\n" % (k + 1, warm, who.upper(), w, m))
                sys.stdout.flush()
        for k in range(n):
            for who in (("a", "b") if first == "a" else ("b", "a")):
                w, m = run_once(cmds[0] if who == "a" else cmds[1], log)
                walls[who].append(w)
                rss[who].append(m)
                sys.stdout.write("pair %d/%d: %s %.3f s, %.1f MiB\n" % (k + 1, n, who.upper(), w, m))
                sys.stdout.flush()
    finally:
        os.unlink(log)
    ratios = [a / b for a, b in zip(walls["a"], walls["b"])]
    lines = ["A: %s" % cmds[0], "B: %s" % cmds[1], "%d pairs, %s first%s" % (n, first.upper(), ", after %d left out" % warm if warm else ""),
             "%-16s %10s %10s %10s" % ("", "median", "fastest", "slowest")]
    for who in ("a", "b"):
        lines.append("%-16s %10.3f %10.3f %10.3f" % (who.upper() + " wall s", statistics.median(walls[who]),
                                                     min(walls[who]), max(walls[who])))
        lines.append("%-16s %10.1f %10.1f %10.1f" % (who.upper() + " peak MiB", statistics.median(rss[who]),
                                                     min(rss[who]), max(rss[who])))
    lines.append("%-16s %10.4f %10.4f %10.4f" % ("A/B wall", statistics.median(ratios), min(ratios), max(ratios)))
    text = "\n".join(lines) + "\n"
    sys.stdout.write(text)
    if out:
        try:
            with open(out, "w") as f:
                f.write(text)
        except OSError as e:
            sys.stderr.write("ab_pairs.py: cannot write %s: %s\n" % (out, e.strerror))
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
