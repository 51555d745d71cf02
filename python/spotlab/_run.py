"""Running the spotlab binary from Python: spotlab.run and spotlab.sweep write a results file and
return it opened."""
import math
import os
import shutil
import subprocess
import tempfile
from collections.abc import Mapping
from pathlib import Path

from ._errors import BinaryNotFound, RunError


def _executable(p):
    return p is not None and os.path.isfile(p) and os.access(p, os.X_OK)


def _own_binaries(here):
    """Where the spotlab that came with this package is: for a package installed by `make install
    PREFIX=...` (cmake/install.cmake), PREFIX/bin/spotlab, the package sitting in
    PREFIX/lib/python3.X/site-packages, PREFIX/local/lib/python3.X/dist-packages (Debian's pip
    --prefix) or PREFIX/lib/python3/dist-packages; found from the package's own place, so a moved
    install still finds its binary. For the checkout's python/spotlab: build/spotlab beside python/."""
    parts = here.parts
    for k in range(len(parts) - 1, 0, -1):
        if parts[k] in ("site-packages", "dist-packages"):
            lib = Path(*parts[:k]).parent  # PREFIX[/local]/lib
            if lib.name not in ("lib", "lib64"):
                return []
            found = [lib.parent / "bin" / "spotlab"]
            if lib.parent.name == "local":
                found.append(lib.parent.parent / "bin" / "spotlab")
            return found
    return [here.parent.parent / "build" / "spotlab"]


def find_binary(binary=None):
    """The spotlab executable: `binary` if given, else $SPOTLAB_BIN, else build/spotlab in the
    current folder, else the one that came with this package (the checkout's build/spotlab, or an
    installed package's PREFIX/bin/spotlab), else `spotlab` on PATH. Raises BinaryNotFound saying
    where it looked."""
    if binary is not None:
        b = os.fspath(binary)
        if not _executable(b):
            found = shutil.which(b)
            if found:
                return found
            raise BinaryNotFound(f"{b}: no such executable")
        return b
    env = os.environ.get("SPOTLAB_BIN")
    if env:
        if not _executable(env):
            raise BinaryNotFound(f"SPOTLAB_BIN={env}: no such executable")
        return env
    here = Path(__file__).resolve().parent
    tried = [Path.cwd() / "build" / "spotlab"] + _own_binaries(here)
    for p in tried:
        if _executable(str(p)):
            return str(p)
    found = shutil.which("spotlab")
    if found:
        return found
    raise BinaryNotFound("no spotlab executable: set SPOTLAB_BIN, build one (`make build` writes build/spotlab) "
                         f"or put spotlab on PATH (looked in {', '.join(str(t) for t in tried)} and PATH)")


def param_value(v):
    """A Python value in scenario (libconfig) syntax: str -> "quoted", bool -> true/false, int,
    float, list/tuple -> [a, b]."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if not math.isfinite(v):
            raise ValueError(f"{v!r} cannot be written in a scenario")
        r = repr(v)  # shortest round-trip form; libconfig wants a '.' in a float: 1e-06 -> 1.0e-06
        if "." not in r:
            m, e = (r.split("e") + [""])[:2]
            r = m + ".0" + ("e" + e if e else "")
        return r
    if isinstance(v, str):
        return '"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(param_value(x) for x in v) + "]"
    raise TypeError(f"cannot write a {type(v).__name__} ({v!r}) as a scenario value")


def param_args(params):
    """--param arguments from a mapping {"run.end": "1d", "market.bidding.fee": 0.05} (values
    converted by param_value) or from strings "KEY=VALUE" given as the command line takes them."""
    if params is None:
        return []
    out = []
    items = params.items() if isinstance(params, Mapping) else params
    for item in items:
        if isinstance(item, str):
            if "=" not in item:
                raise ValueError(f"--param {item!r}: expected KEY=VALUE")
            out += ["--param", item]
        else:
            k, v = item
            out += ["--param", f"{k}={param_value(v)}"]
    return out


def _default_out(scenario, suffix):
    d = tempfile.mkdtemp(prefix="spotlab-")
    return os.path.join(d, Path(scenario).stem + suffix)


def _call(cmd, out, threads, timeout, cwd):
    folder = os.path.dirname(out if cwd is None or os.path.isabs(out) else os.path.join(cwd, out))
    if folder:
        os.makedirs(folder, exist_ok=True)  # the binary writes into an existing folder only
    env = dict(os.environ)
    if threads is not None:
        env["OMP_NUM_THREADS"] = str(int(threads))
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                           timeout=timeout, cwd=cwd)
    except subprocess.TimeoutExpired as e:
        raise RunError(f"{' '.join(cmd)}: still running after {timeout} s (stopped)", None, cmd,
                       e.stdout or "", e.stderr or "") from e
    if p.returncode != 0:
        why = {1: "a run-time failure (an end-of-run check, or a file could not be written)",
               2: "bad usage or a bad scenario"}.get(p.returncode, "an error")
        tail = "\n".join((p.stderr or p.stdout).strip().splitlines()[-20:])
        raise RunError(f"spotlab exited with status {p.returncode}, {why}:\n{tail}", p.returncode, cmd,
                       p.stdout, p.stderr)
    return p


def run(scenario, out=None, *, reps=None, seed=None, params=None, binary=None, threads=None,
        launcher=(), args=(), timeout=None, cwd=None):
    """Runs `spotlab run SCENARIO` and returns the results, opened (spotlab.Results).

    out: the results file (its folder is created; default: a new temporary folder, see the
    returned object's .path);
    reps, seed: override run.reps and run.seed; params: scenario keys to override, a mapping
    {"run.end": "1d"} or "KEY=VALUE" strings; threads: OMP_NUM_THREADS for this run; launcher:
    a prefix such as ["mpirun", "-np", "4"]; args: more command-line arguments. Raises RunError
    (with the binary's FILE:LINE messages) when it exits with an error."""
    from . import open as _open
    out = os.fspath(out) if out is not None else _default_out(scenario, ".h5")
    cmd = [*launcher, find_binary(binary), "run", os.fspath(scenario), "--out", out, "--quiet"]
    if reps is not None:
        cmd += ["--reps", str(int(reps))]
    if seed is not None:
        cmd += ["--seed", str(int(seed))]
    cmd += param_args(params) + list(args)
    _call(cmd, out, threads, timeout, cwd)
    return _open(out if cwd is None or os.path.isabs(out) else os.path.join(cwd, out))


def sweep(scenario, key, values, out=None, *, reps=None, seed=None, binary=None, threads=None,
          launcher=(), timeout=None, cwd=None):
    """Runs `spotlab sweep SCENARIO --param KEY=V1,V2,...` and returns the sweep (spotlab.Sweep).
    values: a list of Python values (converted as for run's params) or one string "V1,V2"."""
    from . import open as _open
    out = os.fspath(out) if out is not None else _default_out(scenario, "-sweep.h5")
    vals = values if isinstance(values, str) else ",".join(param_value(v) for v in values)
    cmd = [*launcher, find_binary(binary), "sweep", os.fspath(scenario), "--param", f"{key}={vals}", "--out", out,
           "--quiet"]
    if reps is not None:
        cmd += ["--reps", str(int(reps))]
    if seed is not None:
        cmd += ["--seed", str(int(seed))]
    _call(cmd, out, threads, timeout, cwd)
    return _open(out if cwd is None or os.path.isabs(out) else os.path.join(cwd, out))


def experiment(file, out=None, *, reps=None, seed=None, binary=None, threads=None, launcher=(), timeout=None,
               cwd=None):
    """Runs `spotlab experiment FILE` (docs/experiments.md) and returns its results
    (spotlab.Experiment)."""
    from . import open as _open
    out = os.fspath(out) if out is not None else _default_out(file, "-experiment.h5")
    cmd = [*launcher, find_binary(binary), "experiment", os.fspath(file), "--out", out, "--quiet"]
    if reps is not None:
        cmd += ["--reps", str(int(reps))]
    if seed is not None:
        cmd += ["--seed", str(int(seed))]
    _call(cmd, out, threads, timeout, cwd)
    return _open(out if cwd is None or os.path.isabs(out) else os.path.join(cwd, out))
