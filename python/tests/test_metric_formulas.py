"""Every replication's metrics recomputed from its jobs and providers tables, its ledger and its
money flows, as the catalogue's formulas say (`spotlab metrics NAME`, docs/metrics.md): spend
and useful work over all jobs, deadline misses and unserved demand from the jobs table, the
volume-weighted client price, provider income gross and net of slashing, and the ledger identity
of docs/market.md; per compared policy, and the paired differences as differences of totals."""
import math

import h5py
import numpy as np
import pytest

import spotlab

REL = 1e-9  # sums of musd integers through doubles
CLASSES = ("training", "inference", "batch")
END_S = {"default": 2 * 86400.0, "gp_nodes": 86400.0, "fault_tolerance": 86400.0}  # run.end below


@pytest.fixture(scope="module")
def runs(tmp_path_factory, src):
    """default.cfg (3 reps, 2 days), gp_nodes.cfg (node fees; 2 reps, 1 day) and
    fault_tolerance.cfg (compared policies; 2 reps, 1 day)."""
    d = tmp_path_factory.mktemp("formulas")
    out = {}
    for name, reps, end in (("default", 3, "2d"), ("gp_nodes", 2, "1d"), ("fault_tolerance", 2, "1d")):
        out[name] = spotlab.run(src / f"scenarios/{name}.cfg", out=d / f"{name}.h5", reps=reps,
                                params={"run.end": end}, threads=2)
    yield out
    for r in out.values():
        r.close()


def series(f, rep, name):
    ds = f[f"reps/rep_{rep:04d}/series/{name}"]
    cols = [c.decode() for c in ds.attrs["columns"]]
    return dict(zip(cols, ds[()].sum(axis=0)))


def close(a, b, what):
    assert (math.isnan(a) and math.isnan(b)) or a == pytest.approx(b, rel=REL, abs=1e-9), f"{what}: {a} != {b}"


def world0(f, rep, jobs, prov):
    """World 0's ledger, money flows, fees and job counters, and its jobs' cost and providers' income."""
    N = spotlab.names
    return (series(f, rep, N.SERIES_LEDGER), series(f, rep, N.SERIES_MONEY),
            sum(series(f, rep, N.SERIES_FEES).values()), series(f, rep, N.SERIES_JOBS), jobs.cost_musd.sum(),
            prov.income_musd.sum())


@pytest.mark.parametrize("name", ["default", "gp_nodes", "fault_tolerance"])
def test_metrics_equal_their_formulas(runs, name):
    r = runs[name]
    m = r.metrics(wide=True)
    jobs_all, prov_all = r.table(spotlab.names.TABLE_JOBS), r.table(spotlab.names.TABLE_PROVIDERS)
    with h5py.File(r.path) as f:
        for rep in range(r.reps):
            x = m.loc[rep]
            jobs = jobs_all[(jobs_all.rep == rep) & (jobs_all.world == 0)]
            prov = prov_all[(prov_all.rep == rep) & (prov_all.world == 0)]
            led, money, fees, jb, cost, gross = world0(f, rep, jobs, prov)
            # money: the clients' account is the jobs' billed cost; the identity of docs/market.md
            assert -led["clients"] == cost
            close(x["client_cost_total"], cost / 1e6, "client_cost_total")
            close(x["client_price_per_gpu_h"], cost / 1e6 / jobs.gpu_h.sum(), "client_price_per_gpu_h")
            close(x["provider_income_gross"], gross / 1e6, "provider_income_gross")
            close(x["stakes_slashed"], money["slashed_musd"] / 1e6, "stakes_slashed")
            close(x["provider_income_net"], (gross - money["slashed_musd"]) / 1e6, "provider_income_net")
            close(x["platform_revenue"], fees / 1e6, "platform_revenue")
            close(x["platform_seed_outlay"], (fees - led["platform"]) / 1e6, "platform_seed_outlay")
            close(x["treasury_change"], (led["treasury"] - money["seed_musd"]) / 1e6, "treasury_change")
            close(x["gp_node_fees"], led["nodes"] / 1e6, "gp_node_fees")
            close(x["node_operator_fees"], led["operators"] / 1e6, "node_operator_fees")
            transit = money["rental_paid_musd"] + money["staking_paid_musd"] - gross
            close(x["income_in_transit"], transit / 1e6, "income_in_transit")
            rhs = (gross - money["slashed_musd"]) + fees + (led["treasury"] - money["seed_musd"]) + led["nodes"] + \
                led["operators"] + transit
            assert cost == rhs, f"rep {rep}: client cost {cost} musd != the identity's right side {rhs}"
            assert x["ledger_identity"] == 1.0 and x["money_conserved"] == 1.0
            # demand: served, unserved, censored, from the jobs table (balked clients are no job)
            done, started = jobs.outcome == "done", ~np.isnan(jobs.start_s)
            queued_new = (jobs.outcome == "queued") & ~started
            assert x["jobs_served"] == done.sum()
            assert x["jobs_reneged"] == (jobs.outcome == "abandoned").sum()
            assert x["jobs_failed"] == (jobs.outcome == "failed").sum()
            assert x["jobs_queued_at_end"] == queued_new.sum()
            assert x["jobs_running_at_end"] == ((jobs.outcome == "running") | ((jobs.outcome == "queued") & started)).sum()
            balked = sum(v for k, v in jb.items() if k.endswith(".balked"))
            assert x["jobs_unserved"] == balked + x["jobs_reneged"] + x["jobs_queued_at_end"]
            # per class: all spend over useful work, deadline misses as the jobs table counts them
            for c in CLASSES:
                jc = jobs[jobs["class"] == c]
                key = f"class.{c}.policy.none" if name == "fault_tolerance" else f"class.{c}"  # world 0's
                spend, useful = jc.cost_musd.sum() / 1e6, jc[jc.outcome == "done"].work_gpu_h.sum()
                close(x[f"spend.{key}"], spend, f"spend.{key}")
                assert x[f"useful_gpu_h.{key}"] == pytest.approx(useful, rel=1e-6, abs=1e-6)
                want = spend / useful if useful > 0 else (math.inf if spend > 0 else math.nan)
                got = x[f"spend_per_useful_gpu_h.{key}"]
                assert (math.isnan(got) and math.isnan(want)) or got == pytest.approx(want, rel=1e-6), key
                assert x[f"deadline_misses.{key}"] == jc.deadline_missed.sum(), key
                # waits and completion times over submitted jobs, censored at the run's end (T)
                T = END_S[name]
                st = ~np.isnan(jc.start_s)
                wait = np.where(st, jc.start_s - jc.submit_s,
                                np.where(jc.outcome == "abandoned", jc.end_s, T) - jc.submit_s)
                comp = np.where(jc.outcome == "done", jc.end_s, T) - jc.submit_s
                n = len(jc)
                for q, want in (("wait_mean", wait.sum() / n if n else math.nan),
                                ("completion_rmean", comp.sum() / n if n else math.nan)):
                    got = x[f"{q}.class.{c}"]
                    assert (math.isnan(got) and math.isnan(want)) or got == pytest.approx(want, rel=1e-6, abs=1e-3), \
                        f"{q}.class.{c}: {got} != {want}"
                assert (wait <= T - jc.submit_s + 1e-3).all() and (comp >= wait - 1e-3).all()
                done_n, ccost = (jc.outcome == "done").sum(), jc.cost_musd.sum() / 1e6
                want = ccost / done_n if done_n else (math.inf if ccost > 0 else math.nan)
                got = x[f"spend_per_completed_job.class.{c}"]
                assert (math.isnan(got) and math.isnan(want)) or got == pytest.approx(want, rel=1e-9), c
                assert x[f"jobs_unserved.{key}"] == jb[f"{c}.balked"] + (jc.outcome == "abandoned").sum() + \
                    ((jc.outcome == "queued") & np.isnan(jc.start_s)).sum(), key
            if name != "fault_tolerance":
                continue
            # per compared policy: the same formulas in its world; differences of totals
            pols = sorted({k.split(".policy.")[1] for k in m.columns if k.startswith("spend.policy.")},
                          key=lambda p: 0 if p == "none" else 1)
            assert pols[0] == "none" and len(pols) > 1
            for p in pols:
                jw = jobs_all[(jobs_all.rep == rep) & (jobs_all.policy == p)]
                assert x[f"spend.policy.{p}"] == pytest.approx(jw.cost_musd.sum() / 1e6, rel=REL)
                assert x[f"deadline_misses.policy.{p}"] == jw.deadline_missed.sum()
                if p != "none":
                    for q in ("spend", "useful_gpu_h", "deadline_misses", "jobs_unserved"):
                        d = x[f"{q}_vs_none.policy.{p}"]
                        assert np.isfinite(d) and d == pytest.approx(x[f"{q}.policy.{p}"] - x[f"{q}.policy.none"],
                                                                     rel=1e-12, abs=1e-9)


def test_catalogue_covers_every_metric(runs):
    """Every metric of the shipped scenarios states its label, formula, population, weighting and
    what it does with jobs under way at the end."""
    for r in runs.values():
        cat = r.catalogue()
        empty = cat[(cat[["label", "formula", "over", "weight", "censored"]] == "").any(axis=1)]
        assert empty.empty, f"{r.path}: no catalogue entry for {list(empty.name)[:5]}"
