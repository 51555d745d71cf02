"""The spotlab package on results the built binary writes: every frame against the file's raw
datasets (read with h5py directly), the market's daily income against its providers table, the
stored summary against a recomputation, the sweep against its point files, and every error path
with its message."""
import math
import shutil

import h5py
import numpy as np
import pandas as pd
import pytest

import spotlab

T975_1 = 12.706204736174707  # Student t, 0.975 quantile, 1 degree of freedom (2 replications)


# ---- opening and metadata ----------------------------------------------------------------------
def test_open_meta(day_run):
    r = day_run
    assert isinstance(r, spotlab.Results) and r.format_version == 1
    assert r.model == "market" and r.reps == 2
    assert r.meta["reps"] == 2 and r.meta["end_time_s"] == 86400.0 and isinstance(r.meta["scenario_path"], str)
    assert r.scenario.startswith("#") and "market" in r.effective
    with h5py.File(r.path) as f:
        assert r.rep_seeds == [int(f[f"reps/rep_{k:04d}"].attrs["seed"]) for k in range(2)]
    # every table and series models/market/mkt_names.h declares is in the file, and nothing else
    assert set(spotlab.names.TABLES) == set(r.table_names)
    assert set(spotlab.names.SERIES) == set(r.series_names)
    assert "rented_gpu_ms_by_region" in r.series_names


# ---- metrics and summary -----------------------------------------------------------------------
def test_metrics_long_matches_file(day_run):
    m = day_run.metrics()
    with h5py.File(day_run.path) as f:
        raw = f["metrics"][()]
        names = [n.decode() for n in f["metrics"].attrs["names"]]
        units = [u.decode() for u in f["metrics"].attrs["units"]]
    assert list(m.columns) == ["rep", "name", "quantity", "dimension", "dim_value", "value", "unit"]
    assert len(m) == raw.size
    assert all(isinstance(x, str) for x in m["name"]) and all(isinstance(x, str) for x in m["unit"])
    for rep in (0, 1):
        got = m[m.rep == rep]
        assert list(got["name"]) == names and list(got["unit"]) == units
        np.testing.assert_array_equal(got["value"].to_numpy(), raw[rep])
    row = m[(m.rep == 1) & (m.name == "income_cv.persona.henry.pool.bidding")].iloc[0]
    assert (row.quantity, row.dimension, row.dim_value, row.unit) == ("income_cv", "persona", "henry.pool.bidding", "1")
    assert spotlab.split_metric("price_mean") == ("price_mean", "", "")


def test_catalogue_matches_file_and_command(day_run, tmp_path, src):
    """The stored catalogue read back, against the raw attributes and `spotlab metrics NAME`; a
    file without it (written before the catalogue) reads as empty strings."""
    import subprocess
    cat = day_run.catalogue()
    with h5py.File(day_run.path) as f:
        a = f["metrics"].attrs
        names = [n.decode() for n in a["names"]]
        raw = {k: [x.decode() for x in a[k]] if a[k].dtype.kind == "S" else [str(x) for x in a[k]]
               for k in ("labels", "formulas", "over", "weights", "censored")}
    assert list(cat.columns) == ["name", "unit", "label", "formula", "over", "weight", "censored"]
    assert list(cat["name"]) == names and len(set(names)) == len(names)  # no metric listed twice
    for col, attr in spotlab.Results.CATALOGUE:
        assert list(cat[col]) == raw[attr]
    row = cat[cat.name == "spend_per_useful_gpu_h.class.training"].iloc[0]
    assert row.label == "total spend per useful GPU-hour" and row.unit == "USD/h"
    assert "all jobs" in row.over and "running" in row.censored
    # every market metric states all five (the catalogue has no gaps)
    assert (cat[["label", "formula", "over", "weight", "censored"]] != "").all().all()
    assert day_run.metric("client_price_per_gpu_h").attrs["label"] == "client price per billed GPU-hour"
    assert day_run.metrics(wide=True).attrs["labels"]["jobs_unserved"] == "unserved demand"
    shown = subprocess.run([spotlab.find_binary(), "metrics", "spend_per_useful_gpu_h.class.training", "--scenario",
                            str(src / "scenarios/default.cfg")], capture_output=True, text=True, check=True).stdout
    assert "label:     total spend per useful GPU-hour" in shown and row.formula in shown
    old = tmp_path / "old.h5"
    shutil.copy(day_run.path, old)
    with h5py.File(old, "r+") as f:
        for attr in ("labels", "formulas", "over", "weights", "censored"):
            del f["metrics"].attrs[attr]
    with spotlab.open(old, verify=False) as r:
        c = r.catalogue()
        assert list(c["name"]) == names and (c["label"] == "").all() and (c["censored"] == "").all()
        assert r.metric("jobs_served").attrs["label"] == ""


def test_metrics_wide_and_one(day_run):
    w = day_run.metrics(wide=True)
    names = list(dict.fromkeys(day_run.metrics()["name"]))
    assert w.shape == (2, len(names)) and list(w.columns) == names  # names listed twice kept once
    assert w.attrs["units"]["platform_revenue"] == "USD"
    s = day_run.metric("income_mean.persona.katie")
    assert list(s.index) == [0, 1] and s.attrs["unit"] == "USD"
    np.testing.assert_array_equal(s.to_numpy(), w["income_mean.persona.katie"].to_numpy())
    with pytest.raises(spotlab.NotInFile, match="no metric 'income_mean.persona.olga'"):
        day_run.metric("income_mean.persona.olga")


def test_summary_against_metrics(day_run):
    s = day_run.summary().drop_duplicates("name").set_index("name")
    w = day_run.metrics(wide=True)
    assert set(s.columns) >= {"unit", "mean", "sd", "ci95_lo", "ci95_hi", "n"}
    checked = 0
    for name in w.columns:
        x = w[name].to_numpy()
        if not np.isfinite(x).all():
            continue
        row = s.loc[name]
        assert row.n == 2 and row.unit == w.attrs["units"][name]
        assert row["mean"] == pytest.approx(x.mean(), rel=1e-12, abs=1e-12)
        sd = x.std(ddof=1)
        assert row.sd == pytest.approx(sd, rel=1e-9, abs=1e-12)
        half = T975_1 * sd / math.sqrt(2)
        assert row.ci95_hi - row["mean"] == pytest.approx(half, rel=1e-9, abs=1e-9)
        assert row["mean"] - row.ci95_lo == pytest.approx(half, rel=1e-9, abs=1e-9)
        checked += 1
    assert checked > 100


# ---- tables ------------------------------------------------------------------------------------
def test_table_across_reps(day_run):
    p = day_run.table("providers")
    with h5py.File(day_run.path) as f:
        raw = [f[f"reps/rep_{k:04d}/tables/providers"][()] for k in range(2)]
        units = [u.decode() for u in f["reps/rep_0000/tables/providers"].attrs["units"]]
    assert list(p.columns) == ["rep"] + list(raw[0].dtype.names)
    assert len(p) == len(raw[0]) + len(raw[1]) == 1200
    assert list(p["rep"].unique()) == [0, 1]
    assert all(type(x) is str for x in p["persona"]) and set(p["persona"]) == {"jade", "katie", "henry"}
    np.testing.assert_array_equal(p[p.rep == 1]["income_musd"].to_numpy(), raw[1]["income_musd"])
    assert p.attrs["units"] == {"rep": "", **dict(zip(raw[0].dtype.names, units))}
    assert p.attrs["units"]["income_usd"] == "USD" and p.attrs["help"]
    one = day_run.table("providers", rep=1)
    assert len(one) == 600 and set(one["rep"]) == {1}
    with pytest.raises(spotlab.NotInFile, match="no replication 5"):
        day_run.table("providers", rep=5)
    with pytest.raises(spotlab.NotInFile, match="no table 'nosuch'"):
        day_run.table("nosuch")


def test_every_column_has_a_unit(day_run):
    for name, df in day_run.tables().items():
        assert set(df.attrs["units"]) == set(df.columns), name
    for name, df in day_run.all_series().items():
        assert set(df.attrs["units"]) == set(df.columns), name
        assert "mixed" not in df.attrs["units"].values(), name  # per-column units, not the series' "mixed"
    jobs = day_run.series("jobs_by_class")
    assert jobs.attrs["units"]["training.wait_ms"] == "ms" and jobs.attrs["units"]["batch.cost_musd"] == "USD*1e-6"


# ---- series ------------------------------------------------------------------------------------
def test_series_wide_long(day_run):
    s = day_run.series("rented_gpu_ms_by_region")
    with h5py.File(day_run.path) as f:
        raw = f["reps/rep_0001/series/rented_gpu_ms_by_region"][()]
        cols = [c.decode() for c in f["reps/rep_0001/series/rented_gpu_ms_by_region"].attrs["columns"]]
    assert list(s.columns) == ["rep", "bin", "bin_start_s", "bin_start_h"] + cols
    assert s.attrs["bin_width_s"] == 3600.0 and len(s) == 2 * 24
    one = s[s.rep == 1]
    np.testing.assert_array_equal(one[cols].to_numpy(), raw)
    np.testing.assert_array_equal(one["bin_start_s"].to_numpy(), np.arange(24) * 3600.0)
    np.testing.assert_array_equal(one["bin_start_h"].to_numpy(), np.arange(24.0))
    assert s.attrs["units"]["bin_start_h"] == "h" and s.attrs["units"][cols[0]] == "GPU*ms"
    lf = day_run.series("rented_gpu_ms_by_region", long=True)
    assert list(lf.columns) == ["rep", "bin", "bin_start_s", "bin_start_h", "column", "value", "unit"]
    assert len(lf) == s[cols].size and set(lf["unit"]) == {"GPU*ms"}
    assert list(lf["column"][:len(cols)]) == cols  # rep 0, bin 0 first, columns in file order
    assert lf.groupby("column")["value"].sum().to_dict() == s[cols].sum().to_dict()
    ledger = day_run.series("ledger")  # one bin for the whole run: no time columns
    assert ledger.attrs["bin_width_s"] == 0 and "bin_start_s" not in ledger.columns and len(ledger) == 2
    assert (ledger.drop(columns=["rep", "bin"]).sum(axis=1) == 0).all()  # the ledger sums to zero


# ---- results that answer questions -------------------------------------------------------------
def test_daily_income_against_providers(day_run):
    d = day_run.table("daily_income")
    p = day_run.table("providers").set_index(["rep", "id"])
    assert d.attrs["units"]["day"] == "d" and d.attrs["units"]["income_usd"] == "USD"
    assert len(d) == 2 * 600 and set(d["day"]) == {0}  # one whole day, every provider
    per = d.groupby(["rep", "provider"])["income_musd"].sum()
    np.testing.assert_array_equal(per.to_numpy(), p.loc[per.index, "income_musd"].to_numpy())
    np.testing.assert_array_equal(d.set_index(["rep", "provider"])["persona"].to_numpy(),
                                  p.loc[per.index, "persona"].to_numpy())


def test_persona_pool_cv_from_daily_income(day_run):
    """Henry's income CV across providers, from the daily rows, is the model's metric."""
    d = day_run.table("daily_income").query("persona == 'henry'")
    inc = d.groupby(["rep", "provider"]).income_usd.sum()
    cv = inc.groupby("rep").std() / inc.groupby("rep").mean()
    np.testing.assert_allclose(cv.to_numpy(), day_run.metric("income_cv.persona.henry").to_numpy(), rtol=1e-9)
    b = day_run.table("providers").query("persona == 'henry' and pool == 'bidding'").groupby("rep").income_usd
    np.testing.assert_allclose((b.std() / b.mean()).to_numpy(),
                               day_run.metric("income_cv.persona.henry.pool.bidding").to_numpy(), rtol=1e-9)


# ---- sweeps ------------------------------------------------------------------------------------
def test_sweep(sweep_run):
    s = sweep_run
    assert isinstance(s, spotlab.Sweep) and s.param == "run.end" and s.reps == 2
    assert s.labels == ["43200.0", "86400.0"] and list(s.x) == [43200.0, 86400.0]
    m = s.metrics()
    with h5py.File(s.path) as f:
        nm = f["sweep/metrics"].shape[2]
    assert list(m.columns[:4]) == ["point", "label", "x", "rep"] and len(m) == 2 * 2 * nm
    sm = s.summary()
    jobs = sm[sm.name == "jobs_served"].set_index("point")
    mean = m[m.name == "jobs_served"].groupby("point")["value"].mean()
    np.testing.assert_allclose(jobs["mean"].to_numpy(), mean.to_numpy(), rtol=1e-12)
    assert (jobs["n"] == 2).all() and (jobs.ci95_lo <= jobs["mean"]).all() and (jobs["mean"] <= jobs.ci95_hi).all()
    assert len(s.point_files) == 2
    with s.point(1) as p:
        assert p.meta["end_time_s"] == 86400.0
        pw = p.metrics(wide=True)
        sw = s.metrics(wide=True).xs(1, level="point").reset_index(drop=True)
        np.testing.assert_array_equal(pw["jobs_served"].to_numpy(), sw["jobs_served"].to_numpy())
    with pytest.raises(spotlab.NotInFile, match="no point 2"):
        s.point(2)


# ---- running -----------------------------------------------------------------------------------
def test_param_values():
    assert spotlab.param_value("1d") == '"1d"'
    assert spotlab.param_value('a"b') == '"a\\"b"'
    assert spotlab.param_value(True) == "true" and spotlab.param_value(3) == "3"
    assert spotlab.param_value(0.05) == "0.05" and spotlab.param_value(1e-05) == "1.0e-05"
    assert spotlab.param_value(2.0) == "2.0" and spotlab.param_value([0.5, 0.5]) == "[0.5, 0.5]"
    with pytest.raises(ValueError):
        spotlab.param_value(float("nan"))
    with pytest.raises(TypeError):
        spotlab.param_value({"a": 1})


def test_run_params_reach_the_scenario(src, tmp_path):
    r = spotlab.run(src / "scenarios/default.cfg", out=tmp_path / "p.h5", reps=1, seed=7,
                    params={"run.end": "1h", "market.bidding.fee": 1e-05, "market.churn": False,
                            "market.bidding.rule": "vickrey"})
    with r:
        assert r.reps == 1 and r.meta["seed"] == 7 and r.meta["end_time_s"] == 3600.0
        eff = r.effective
        assert "1e-05" in eff and "churn = false" in eff and '"vickrey"' in eff
    r2 = spotlab.run(src / "scenarios/default.cfg", out=tmp_path / "new" / "q.h5", reps=1, params=["run.end=\"1h\""])
    assert r2.meta["end_time_s"] == 3600.0
    r2.close()


def test_run_errors(src, tmp_path):
    with pytest.raises(spotlab.RunError) as e:
        spotlab.run(src / "scenarios/default.cfg", out=tmp_path / "x.h5", params={"market.no_such_key": 1})
    assert e.value.returncode == 2 and "no_such_key" in str(e.value) and "bad usage or a bad scenario" in str(e.value)
    assert not (tmp_path / "x.h5").exists()
    with pytest.raises(spotlab.RunError) as e:
        spotlab.run(tmp_path / "missing.cfg", out=tmp_path / "y.h5")
    assert e.value.returncode == 2 and "missing.cfg" in str(e.value)
    with pytest.raises(ValueError, match="KEY=VALUE"):
        spotlab.run(src / "scenarios/default.cfg", params=["run.end"])


def test_find_binary(monkeypatch, tmp_path):
    with pytest.raises(spotlab.BinaryNotFound, match="no such executable"):
        spotlab.find_binary(tmp_path / "nosuch")
    monkeypatch.setenv("SPOTLAB_BIN", str(tmp_path / "nosuch"))
    with pytest.raises(spotlab.BinaryNotFound, match="SPOTLAB_BIN="):
        spotlab.find_binary()
    monkeypatch.delenv("SPOTLAB_BIN")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setattr(spotlab._run, "__file__", str(tmp_path / "a" / "b" / "_run.py"))
    with pytest.raises(spotlab.BinaryNotFound, match="set SPOTLAB_BIN"):
        spotlab.find_binary()
    fake = tmp_path / "build" / "spotlab"
    fake.parent.mkdir()
    fake.write_text("#!/bin/sh\n")
    fake.chmod(0o755)
    assert spotlab.find_binary() == str(fake)


# ---- bad files ---------------------------------------------------------------------------------
def test_open_errors(day_run, tmp_path):
    with pytest.raises(spotlab.ResultsNotFound, match="no such file") as e:
        spotlab.open(tmp_path / "none.h5")
    assert isinstance(e.value, FileNotFoundError)
    with pytest.raises(spotlab.NotSpotlabFile, match="is a folder"):
        spotlab.open(tmp_path)
    (tmp_path / "text.h5").write_text("model = \"market\";\n")
    with pytest.raises(spotlab.NotSpotlabFile, match="not an HDF5 file"):
        spotlab.open(tmp_path / "text.h5")
    data = open(day_run.path, "rb").read()
    (tmp_path / "cut.h5").write_bytes(data[:4096])
    with pytest.raises(spotlab.NotSpotlabFile):
        spotlab.open(tmp_path / "cut.h5")
    with h5py.File(tmp_path / "other.h5", "w") as f:
        f["x"] = [1, 2, 3]
    with pytest.raises(spotlab.NotSpotlabFile, match="no 'format' attribute"):
        spotlab.open(tmp_path / "other.h5")
    shutil.copy(day_run.path, tmp_path / "v99.h5")
    with h5py.File(tmp_path / "v99.h5", "r+") as f:
        f.attrs["format_version"] = np.int32(99)
    with pytest.raises(spotlab.DamagedFile, match="damaged file"):
        spotlab.open(tmp_path / "v99.h5")  # edited after spotlab wrote it
    with pytest.raises(spotlab.FormatVersionError, match="format version 99 .*reads spotlab-results version 1"):
        spotlab.open(tmp_path / "v99.h5", verify=False)
    shutil.copy(day_run.path, tmp_path / "nometrics.h5")
    with h5py.File(tmp_path / "nometrics.h5", "r+") as f:
        del f["metrics"]
    with pytest.raises(spotlab.NotSpotlabFile, match="/metrics is missing"):
        spotlab.open(tmp_path / "nometrics.h5", verify=False)


def test_checksum(day_run, tmp_path):
    """The checksum in the user block (docs/results-format.md) is the one the C reader checks:
    it matches a fresh file, and a flipped bit anywhere, a truncation or an appended byte is
    DamagedFile; a file whose block was zeroed has none and is read unchecked."""
    assert spotlab.verify(day_run.path) is True
    data = bytearray(open(day_run.path, "rb").read())
    rng = np.random.default_rng(7)
    for at in rng.integers(512, len(data), 10):
        bad = bytearray(data)
        bad[at] ^= 1 << int(rng.integers(0, 8))
        (tmp_path / "flip.h5").write_bytes(bad)
        with pytest.raises(spotlab.DamagedFile, match="checksum does not match"):
            spotlab.open(tmp_path / "flip.h5")
    (tmp_path / "cut.h5").write_bytes(data[:-1])
    with pytest.raises(spotlab.DamagedFile, match="truncated or extended"):
        spotlab.open(tmp_path / "cut.h5")
    unsealed = bytearray(data)
    unsealed[:16] = bytes(16)
    (tmp_path / "unsealed.h5").write_bytes(unsealed)
    assert spotlab.verify(tmp_path / "unsealed.h5") is False
    with spotlab.open(tmp_path / "unsealed.h5") as r:
        assert len(r.metrics()) > 0


def test_files_before_per_column_units(day_run, tmp_path):
    """A file without the series' `units` (written before them) still reads: `unit` for every column."""
    shutil.copy(day_run.path, tmp_path / "old.h5")
    with h5py.File(tmp_path / "old.h5", "r+") as f:
        for k in range(2):
            del f[f"reps/rep_{k:04d}/series/ledger"].attrs["units"]
    with spotlab.open(tmp_path / "old.h5", verify=False) as r:
        s = r.series("ledger")
        assert set(s.attrs["units"][c] for c in s.columns if c not in ("rep", "bin")) == {"USD*1e-6"}


def test_policies_worlds(src, tmp_path):
    """compare_policies: the other worlds' series are NAME@POLICY; tables carry world and policy."""
    with spotlab.run(src / "scenarios/fault_tolerance.cfg", out=tmp_path / "ft.h5", reps=1,
                     params={"run.end": "6h"}) as r:
        assert "by_pool@standby" in r.series_names
        p = r.table("providers")
        assert set(p["world"]) == set(range(5)) and "standby" in set(p["policy"])
        d = r.table("daily_income")
        assert len(d) == 0 and list(d.columns) == ["rep", "provider", "world", "day", "persona", "pool", "income_usd",
                                                     "income_musd"]  # 6 hours: no whole day
        assert isinstance(r.metrics(wide=True), pd.DataFrame)


def test_experiment(src, tmp_path):
    """scenarios/experiment_phold.cfg (6 points, 3 replications; a known answer: events per LP
    about 200, 100, 50 at means 0.4, 0.9, 1.9, whatever the remote share): the frames hold what
    the file holds, and the constraint `events_per_lp < 150` is met exactly at the two larger means."""
    e = spotlab.experiment(src / "scenarios/experiment_phold.cfg", out=tmp_path / "e.h5", threads=2)
    with e:
        assert isinstance(e, spotlab.Experiment) and e.design == "factorial"
        assert e.factors == ["phold.mean", "phold.remote"] and e.npoints == 6
        pts = e.points()
        assert list(pts.columns[:3]) == ["point", "phold.mean", "phold.mean.x"]
        raw = h5py.File(e.path)["experiment/metrics"][()]
        m = e.metrics()
        assert len(m) == raw.size and np.allclose(m.value.to_numpy(), raw.ravel(), equal_nan=True)
        s = e.summary().query("name == 'events_per_lp'").set_index("point")["mean"]
        c = e.constraints().set_index("point")
        assert (c.metric == "events_per_lp").all()
        means = pts.set_index("point")["phold.mean.x"]
        assert ((c.met) == (s < 150)).all() and (c.met == (means > 0.5)).all()
        assert (pts.feasible == c.met.to_numpy()).all()
        sens = e.sensitivity()
        assert set(sens.factor) == {"phold.mean", "phold.remote"} and sens.src.notna().all()
        with e.point(0) as r:
            assert r.metric("events_per_lp").mean() == pytest.approx(s[0])
