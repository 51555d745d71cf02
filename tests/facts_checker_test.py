#!/usr/bin/python3
"""The facts checker (scripts/facts.py) itself: its Weibull MLE recovers a known shape from
censored samples; a bad table row is an error at its line (exit 2); a reproduced fact outside its
band and a not-reproduced fact inside it both fail (exit 1); facts as expected pass (exit 0).
Exit 77 (skip) when h5py or pandas are missing."""
import math
import os
import random
import subprocess
import sys
import tempfile

ROOT = os.environ.get("SPOTLAB_SOURCE_DIR") or os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
try:
    import h5py  # noqa: F401
    import pandas  # noqa: F401
except ImportError:
    print("SKIP: no h5py or pandas")
    sys.exit(77)
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import facts  # noqa: E402

fails = 0


def check(cond, what):
    global fails
    print(("ok   " if cond else "FAIL ") + what)
    fails += not cond


# Weibull MLE with right censoring: samples of shape k, scale 10, observed up to a horizon of 40
# (those longer are censored there, as the run's end censors up intervals)
rng = random.Random(7)
for k in (0.55, 0.64, 1.5):
    xs = []
    for _ in range(20000):
        x = 10.0 * (-math.log(1.0 - rng.random())) ** (1.0 / k)
        xs.append((min(x, 40.0), x > 40.0))
    est = facts.weibull_shape(xs)
    check(abs(est - k) < 4 * 0.78 * k / math.sqrt(len(xs)) + 0.01, f"Weibull MLE: k {k} estimated {est:.4f}")

HEAD = "id,claim,source,date,figure,tolerance,lo,hi,expect,command,measure\n"
CMD = "spotlab run scenarios/default.cfg --reps 1 --param 'run.end=\"\"1d\"\"' --out {h5}"
work = tempfile.mkdtemp(prefix="spotlab-facts-test-")


def run_table(text):
    p = os.path.join(work, "t.csv")
    with open(p, "w") as f:
        f.write(text)
    r = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "facts.py"), "--table", p, "--work", work],
                       capture_output=True, text=True)
    return r.returncode, r.stdout + r.stderr


rc, out = run_table("# c\nid,claim\n")
check(rc == 2 and "t.csv:2:" in out, "a wrong header is an error at its line")
rc, out = run_table(HEAD + f"a,c,s,d,f,t,2,1,pass,\"{CMD}\",utilization\n")
check(rc == 2 and "t.csv:2:" in out and "lo > hi" in out, "lo > hi is an error at its line")
rc, out = run_table(HEAD + f"a,c,s,d,f,t,0,1,pass,\"{CMD}\",nosuch x\n")
check(rc == 2 and "unknown measure" in out, "an unknown measure is an error")
rc, out = run_table(HEAD + f"a,c,s,d,f,t,0,1,maybe,\"{CMD}\",utilization\n")
check(rc == 2 and "expect" in out, "expect other than pass/fail is an error")
rc, out = run_table(HEAD + f"in,c,s,d,f,t,0,1,pass,\"{CMD}\",utilization\n"
                    f"out,c,s,d,f,t,2,3,fail,\"{CMD}\",utilization\n")
check(rc == 0 and "2 of 2 facts as expected" in out, "facts as expected pass: " + out.strip().replace("\n", " | "))
rc, out = run_table(HEAD + f"a,c,s,d,f,t,2,3,pass,\"{CMD}\",utilization\n")
check(rc == 1 and "NOT REPRODUCED" in out, "a reproduced fact outside its band fails")
rc, out = run_table(HEAD + f"a,c,s,d,f,t,0,1,fail,\"{CMD}\",utilization\n")
check(rc == 1 and "NOW INSIDE" in out, "a not-reproduced fact inside its band fails")
sys.exit(1 if fails else 0)
