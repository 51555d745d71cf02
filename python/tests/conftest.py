"""Shared fixtures: results written by the built binary on short runs of the shipped scenarios.

ctest sets SPOTLAB_BIN (the binary just built) and SPOTLAB_SOURCE_DIR; run by hand, the binary is
found as spotlab.run finds it and the source tree is the one this file sits in."""
import os
from pathlib import Path

import pytest

import spotlab

SRC = Path(os.environ.get("SPOTLAB_SOURCE_DIR", Path(__file__).resolve().parents[2]))


@pytest.fixture(scope="session")
def src():
    return SRC


@pytest.fixture(scope="session")
def day_run(tmp_path_factory):
    """scenarios/default.cfg for one day, 2 replications (600 providers, about 0.4 s)."""
    out = tmp_path_factory.mktemp("run") / "default-1d.h5"
    r = spotlab.run(SRC / "scenarios/default.cfg", out=out, reps=2, params={"run.end": "1d"}, threads=2)
    yield r
    r.close()


@pytest.fixture(scope="session")
def sweep_run(tmp_path_factory):
    """A sweep of run.end over half a day and a day (2 replications each)."""
    out = tmp_path_factory.mktemp("sweep") / "end-sweep.h5"
    s = spotlab.sweep(SRC / "scenarios/default.cfg", "run.end", [43200.0, 86400.0], out=out, reps=2, threads=2)
    yield s
    s.close()
