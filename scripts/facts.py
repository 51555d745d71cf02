#!/usr/bin/python3
"""facts.py - checks the market against published stylized facts (issue 46, docs/facts.md).

    scripts/facts.py [--bin SPOTLAB] [--table data/facts.csv] [--work DIR] [--only ID,...]
    scripts/facts.py --measure 'NAME ARGS' RESULTS.h5      one measurement of one results file

Each row of the table (data/facts.csv) names a published figure with its source and date, the band
[lo, hi] the model's measurement must fall in (the figure and its tolerance), the spotlab command
whose results it is measured on, and the measurement. The script runs each distinct command once
(its results file in --work), measures every fact and prints one line per fact. A fact with
expect = pass must fall in its band; a fact with expect = fail is one the model does not reproduce
(docs/facts.md says why): it must stay outside its band, so that the doc stays true; when it comes
inside, the check says so and fails until the row and the doc are updated.

Exit status: 0 every fact as expected, 1 a fact not as expected, 2 bad usage or a bad table row
(FILE:LINE: message), or a spotlab run that failed.
"""
import argparse
import csv
import math
import os
import re
import shlex
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "python"))

COLUMNS = ["id", "claim", "source", "date", "figure", "tolerance", "lo", "hi", "expect", "command", "measure"]


def die(msg, code=2):
    print("facts.py: " + msg, file=sys.stderr)
    sys.exit(code)


def read_table(path):
    """The facts table: '#' comment lines, a header with COLUMNS, one row per fact."""
    rows = []
    try:
        f = open(path, newline="", encoding="utf-8")
    except OSError as e:
        die(f"{path}: {e.strerror}")
    with f:
        lines = [(n, l) for n, l in enumerate(f, 1) if l.strip() and not l.startswith("#")]
    reader = csv.reader([l for _, l in lines])
    header = next(reader, None)
    if header != COLUMNS:
        die(f"{path}:{lines[0][0] if lines else 1}: header must be {','.join(COLUMNS)}")
    for (n, _), r in zip(lines[1:], reader):
        if len(r) != len(COLUMNS):
            die(f"{path}:{n}: expected {len(COLUMNS)} fields, found {len(r)}")
        row = dict(zip(COLUMNS, r))
        try:
            row["lo"], row["hi"] = float(row["lo"]), float(row["hi"])
        except ValueError:
            die(f"{path}:{n}: lo and hi must be numbers")
        if not row["lo"] <= row["hi"]:
            die(f"{path}:{n}: lo > hi")
        if row["expect"] not in ("pass", "fail"):
            die(f"{path}:{n}: expect must be pass or fail, not '{row['expect']}'")
        if "{h5}" not in row["command"] or not row["command"].startswith("spotlab run "):
            die(f"{path}:{n}: command must be 'spotlab run ... --out {{h5}}'")
        name = row["measure"].split()[0] if row["measure"].split() else ""
        if name not in MEASURES:
            die(f"{path}:{n}: unknown measure '{name}' (known: {', '.join(sorted(MEASURES))})")
        row["line"] = n
        rows.append(row)
    return rows


# ---- reading a results file ------------------------------------------------------------------
class Run:
    """One results file: its providers and availability tables (all replications) and the fees
    and run length of its effective scenario (/meta/effective)."""

    def __init__(self, path):
        import spotlab
        self.r = spotlab.open(path)
        self.providers = self.r.table(spotlab.names.TABLE_PROVIDERS)
        self._avail = None
        import h5py
        with h5py.File(path, "r") as f:
            eff = f["/meta/effective"][()]
        eff = eff.decode() if isinstance(eff, bytes) else str(eff)
        self.fee = {}
        for pool in ("fixed", "bidding", "flexible"):
            m = re.search(pool + r"\s*=\s*\{[^}]*?\bfee\s*=\s*([0-9.eE+-]+)", eff)
            self.fee[pool] = float(m.group(1)) if m else 0.0
        m = re.search(r"\bend\s*=\s*([0-9.eE+-]+)", eff)
        self.end_h = float(m.group(1)) / 3600.0

    def avail(self):
        if self._avail is None:
            import spotlab
            self._avail = self.r.table(spotlab.names.TABLE_AVAILABILITY)
        return self._avail


def _s(x):
    return x.decode() if isinstance(x, bytes) else str(x)


def client_price(run, model, pools):
    """Clients' price per rented GPU-hour of `model` in `pools`: hosts' income grossed up by the
    pool's fee, over their rented GPU-hours (providers that never switched pools, so that all
    their income was earned in the pool they are in)."""
    p = run.providers
    p = p[(p["switches"] == 0) & (p["gpu_class"].map(_s) == model) & (p["pool"].map(_s).isin(pools))]
    gross = sum(inc / (1.0 - run.fee[_s(pool)]) for inc, pool in zip(p["income_usd"], p["pool"]))
    gpu_h = float((p["rented_h"] * p["gpus"]).sum())
    return gross / gpu_h if gpu_h > 0 else float("nan")


def m_price(run, model):
    """client price per rented GPU-hour of MODEL, fixed and bidding pools together"""
    return client_price(run, model, ["fixed", "bidding"])


def m_ratio(run, model):
    """bidding-pool (interruptible) over fixed-pool (on-demand) client price of MODEL"""
    return client_price(run, model, ["bidding"]) / client_price(run, model, ["fixed"])


def up_intervals(run, persona):
    """Up intervals (h) of the persona's providers: maximal runs of records not 'down' in the
    availability table, per replication and provider; the one that reaches the end of the run is
    right-censored. Returns [(hours, censored)]."""
    a = run.avail()
    ids = run.providers[run.providers["persona"].map(_s) == persona][["rep", "id"]]
    keep = set(zip(ids["rep"], ids["id"]))
    a = a[[(r, q) in keep for r, q in zip(a["rep"], a["provider"])]]
    out = []
    end_s = run.end_h * 3600.0
    for (_, _), g in a.sort_values(["rep", "provider", "start_s"]).groupby(["rep", "provider"], sort=False):
        start = None
        last = None
        for s, e, st in zip(g["start_s"], g["end_s"], g["state"].map(_s)):
            if st == "down":
                if start is not None:
                    out.append(((last - start) / 3600.0, False))
                start = None
            elif start is None:
                start = s
            last = e
        if start is not None:
            out.append(((last - start) / 3600.0, last >= end_s - 1e-3))
    return out


def weibull_shape(xs):
    """Maximum-likelihood Weibull shape k of intervals with right censoring: the root of
    1/k + sum_unc ln x / r - sum_all x^k ln x / sum_all x^k = 0 (Lawless, Statistical Models and
    Methods for Lifetime Data, 2nd ed., 2003, eq. 5.2.7), by bisection on [0.05, 20]."""
    xs = [(x, c) for x, c in xs if x > 0]
    r = sum(1 for _, c in xs if not c)
    if r < 2:
        return float("nan")
    lnu = sum(math.log(x) for x, c in xs if not c) / r
    xmax = max(x for x, _ in xs)

    def g(k):
        num = den = 0.0
        for x, _ in xs:
            w = (x / xmax) ** k  # scaled: the ratio is scale-free
            num += w * math.log(x)
            den += w
        return 1.0 / k + lnu - num / den

    lo, hi = 0.05, 20.0
    for _ in range(100):
        mid = 0.5 * (lo + hi)
        if g(mid) > 0:
            lo = mid
        else:
            hi = mid
    return 0.5 * (lo + hi)


def m_weibull_up(run, persona):
    """MLE Weibull shape of the persona's up intervals (censored at the end of the run)"""
    return weibull_shape(up_intervals(run, persona))


def m_up_share(run, persona):
    """share of the run the persona's hosts are up (not down by churn)"""
    p = run.providers[run.providers["persona"].map(_s) == persona]
    return 1.0 - float(p["down_h"].sum()) / (len(p) * run.end_h)


def m_utilization(run):
    """rented GPU-hours over available GPU-hours, all pools and hosts"""
    p = run.providers
    return float((p["rented_h"] * p["gpus"]).sum()) / float((p["available_h"] * p["gpus"]).sum())


def m_fail_rate(run, model):
    """departures by churn (into 'down') per up host-hour of MODEL's hosts: each departure
    interrupts every GPU of the host, so it is also the interruptions per up GPU-hour of one GPU"""
    ids = run.providers[run.providers["gpu_class"].map(_s) == model][["rep", "id"]]
    keep = set(zip(ids["rep"], ids["id"]))
    a = run.avail()
    a = a[[(r, q) in keep for r, q in zip(a["rep"], a["provider"])]]
    xs = []
    for (_, _), g in a.sort_values(["rep", "provider", "start_s"]).groupby(["rep", "provider"], sort=False):
        st = list(g["state"].map(_s))
        xs.append(sum(1 for i in range(1, len(st)) if st[i] == "down" and st[i - 1] != "down"))
    downs = sum(xs)
    p = run.providers[run.providers["gpu_class"].map(_s) == model]
    up_h = float((len(p) * run.end_h) - p["down_h"].sum())
    return downs / up_h if up_h > 0 else float("nan")


MEASURES = {
    "price": m_price,
    "ratio": m_ratio,
    "weibull_up": m_weibull_up,
    "up_share": m_up_share,
    "utilization": m_utilization,
    "fail_rate": m_fail_rate,
}


def measure(run, spec):
    name, *args = spec.split()
    return MEASURES[name](run, *args)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bin", default=os.environ.get("SPOTLAB_BIN", os.path.join(ROOT, "build", "spotlab")))
    ap.add_argument("--table", default=os.path.join(ROOT, "data", "facts.csv"))
    ap.add_argument("--work", default=None, help="folder for the results files (default: a temporary one)")
    ap.add_argument("--only", default="", help="comma-separated fact ids")
    ap.add_argument("--measure", nargs=2, metavar=("SPEC", "RESULTS"), help="one measurement of one file")
    a = ap.parse_args()
    if a.measure:
        if a.measure[0].split()[0] not in MEASURES:
            die(f"unknown measure '{a.measure[0]}'")
        print(f"{measure(Run(a.measure[1]), a.measure[0]):.6g}")
        return 0
    rows = read_table(a.table)
    if a.only:
        want = set(a.only.split(","))
        rows = [r for r in rows if r["id"] in want]
        if not rows:
            die(f"no fact with id in {a.only}")
    work = a.work or tempfile.mkdtemp(prefix="spotlab-facts-")
    os.makedirs(work, exist_ok=True)
    files = {}
    for r in rows:
        cmd = r["command"]
        if cmd in files:
            continue
        h5 = os.path.join(work, f"run{len(files)}.h5")
        argv = shlex.split(cmd.replace("{h5}", h5))
        argv[0] = a.bin
        p = subprocess.run(argv + ["--quiet"], cwd=ROOT, capture_output=True, text=True)
        if p.returncode != 0:
            die(f"{a.table}:{r['line']}: '{cmd}' failed ({p.returncode}): {p.stderr.strip()[:500]}")
        files[cmd] = Run(h5)
    bad = 0
    print(f"{'fact':<29} {'measured':>10}  {'band':<22} {'expect':<6} verdict")
    for r in rows:
        v = measure(files[r["command"]], r["measure"])
        inside = r["lo"] <= v <= r["hi"]
        ok = inside if r["expect"] == "pass" else not inside
        if r["expect"] == "pass":
            verdict = "reproduced" if ok else "NOT REPRODUCED: outside its band"
        else:
            verdict = ("not reproduced (docs/facts.md)" if ok else
                       "NOW INSIDE ITS BAND: set expect = pass and update docs/facts.md")
        bad += not ok
        band = f"[{r['lo']:.4g}, {r['hi']:.4g}]"
        print(f"{r['id']:<29} {v:>10.4g}  {band:<22} {r['expect']:<6} {verdict}")
    print(f"{len(rows) - bad} of {len(rows)} facts as expected")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
