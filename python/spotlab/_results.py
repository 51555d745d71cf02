"""Results and sweep files as pandas DataFrames.

Every frame is tidy: one row per observation, one column per variable, replications stacked with
a `rep` column (0-based, as rep_NNNN in the file), strings decoded to str. Each frame carries its
columns' units in `df.attrs["units"]` (a dict column -> unit; "" for labels and strings) and the
dataset's one-line description in `df.attrs["help"]`.
"""
import os

import numpy as np
import pandas as pd

from . import _h5
from ._errors import NotInFile, SpotlabError


def split_metric(name):
    """`quantity.dimension.value` -> (quantity, dimension, value); a plain name -> (name, "", "").
    The value is everything after the second dot (`henry.pool.bidding`), as `spotlab report`
    splits names."""
    parts = name.split(".", 2)
    if len(parts) < 3:
        return name, "", ""
    return parts[0], parts[1], parts[2]


def _metrics_long(values, names, units, index_cols):
    """values[..., nmetrics] -> long frame: index columns, name, quantity, dimension, dim_value,
    value, unit. index_cols: list of (column, 1-D array) for the leading axes (already broadcast)."""
    nm = len(names)
    flat = values.reshape(-1, nm)
    rows = flat.shape[0]
    df = pd.DataFrame({c: np.repeat(np.asarray(v), nm) for c, v in index_cols})
    split = [split_metric(n) for n in names]
    df["name"] = np.tile(np.array(names, dtype=object), rows)
    df["quantity"] = np.tile(np.array([s[0] for s in split], dtype=object), rows)
    df["dimension"] = np.tile(np.array([s[1] for s in split], dtype=object), rows)
    df["dim_value"] = np.tile(np.array([s[2] for s in split], dtype=object), rows)
    df["value"] = flat.ravel()
    df["unit"] = np.tile(np.array(units, dtype=object), rows)
    return df


def _wide(long, index):
    """Long metrics -> one column per metric. A name the model lists twice with the same values
    (files before the catalogue listed completed_share.class.* twice) is kept once; twice with different
    values is an error."""
    dup = long.duplicated(subset=index + ["name"], keep="first")
    if dup.any():
        both = long[long.duplicated(subset=index + ["name"], keep=False)]
        spread = both.groupby(index + ["name"])["value"].agg(lambda v: v.nunique(dropna=False))
        if (spread > 1).any():
            bad = spread[spread > 1].index.get_level_values("name").unique().tolist()
            raise SpotlabError(f"metrics listed twice with different values: {bad}")
        long = long[~dup]
    wide = long.pivot(index=index, columns="name", values="value")
    order = list(dict.fromkeys(long["name"]))
    wide = wide[order]
    wide.columns.name = None
    units = dict(zip(long["name"], long["unit"]))
    wide.attrs["units"] = {c: units[c] for c in order}
    return wide


class Results:
    """One results file of `spotlab run` (format spotlab-results, version 1). Open it with
    spotlab.open(path); close it with close() or a `with` block."""

    def __init__(self, f, path):
        self._f = f
        self.path = os.fspath(path)
        _h5.require(f, self.path, ["meta", "metrics", "summary", "reps"])
        self.format_version = _h5.scalar(f.attrs["format_version"])
        self.spotlab_version = _h5.text(f.attrs.get("spotlab_version", b""))
        self.meta = _h5.attrs(f["meta"])
        self.scenario = _h5.text(f["meta/scenario"][()]) if "meta/scenario" in f else ""
        self.effective = _h5.text(f["meta/effective"][()]) if "meta/effective" in f else ""
        self.model = self.meta.get("model", "")
        self._reps = sorted(k for k in f["reps"] if k.startswith("rep_"))
        if not self._reps:
            raise NotInFile(f"{self.path}: the file holds no replication (/reps is empty)")
        r0 = f["reps"][self._reps[0]]
        self.table_names = sorted(r0["tables"]) if "tables" in r0 else []
        self.series_names = sorted(r0["series"]) if "series" in r0 else []

    # ---- the file ------------------------------------------------------------------------------
    def close(self):
        self._f.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __repr__(self):
        return (f"<spotlab.Results {self.path!r} model={self.model} reps={self.reps} "
                f"tables={self.table_names} series={len(self.series_names)}>")

    @property
    def reps(self):
        """Number of replications."""
        return len(self._reps)

    @property
    def rep_seeds(self):
        """Seed of each replication (common random numbers: equal seeds, equal draws)."""
        return [_h5.scalar(self._f["reps"][r].attrs["seed"]) for r in self._reps]

    def _rep_groups(self, rep):
        if rep is None:
            return list(enumerate(self._reps))
        if not 0 <= rep < len(self._reps):
            raise NotInFile(f"{self.path}: no replication {rep} (0 .. {len(self._reps) - 1})")
        return [(rep, self._reps[rep])]

    # ---- metrics -------------------------------------------------------------------------------
    def _metric_arrays(self):
        ds = self._f["metrics"]
        names = _h5.texts(ds.attrs.get("names"))
        units = _h5.texts(ds.attrs.get("units"))
        values = ds[()]
        if values.ndim != 2 or values.shape[1] != len(names) or len(units) != len(names):
            raise SpotlabError(f"{self.path}: /metrics has shape {values.shape} for {len(names)} names "
                               f"and {len(units)} units (a damaged file)")
        return values, names, units

    # the catalogue's attributes of /metrics, in the order of its names (docs/results-format.md)
    CATALOGUE = (("label", "labels"), ("formula", "formulas"), ("over", "over"), ("weight", "weights"),
                 ("censored", "censored"))

    def catalogue(self):
        """The metric catalogue the file stores (`spotlab metrics` lists the model's): one row per
        metric, with name, unit, label (words for figures), formula (in words), over (the population),
        weight (how it is weighted) and censored (what it does with jobs still running at the end).
        A file written before the catalogue holds names and units only: the rest is then ""."""
        ds = self._f["metrics"]
        names = _h5.texts(ds.attrs.get("names"))
        cols = {"name": names, "unit": _h5.texts(ds.attrs.get("units"))}
        for col, attr in self.CATALOGUE:
            v = _h5.texts(ds.attrs.get(attr))
            if v and len(v) != len(names):
                raise SpotlabError(f"{self.path}: /metrics attribute {attr} has {len(v)} entries for "
                                   f"{len(names)} names (a damaged file)")
            cols[col] = v or [""] * len(names)
        df = pd.DataFrame(cols)
        df.attrs["units"] = {c: "" for c in df.columns}
        df.attrs["help"] = "the metric catalogue (/metrics attributes names, units, labels, formulas, over, " \
                           "weights, censored)"
        return df

    def metrics(self, wide=False):
        """Every metric of every replication. Long form (default): rep, name, quantity, dimension,
        dim_value, value, unit (`income_cv.persona.henry` -> income_cv, persona, henry). wide=True:
        one row per rep, one column per metric, units in attrs["units"]."""
        values, names, units = self._metric_arrays()
        reps = np.arange(values.shape[0])
        df = _metrics_long(values, names, units, [("rep", reps)])
        df.attrs["units"] = {"rep": "", "name": "", "quantity": "", "dimension": "", "dim_value": "",
                             "value": "(the row's unit)", "unit": ""}
        df.attrs["help"] = "the model's metrics per replication (/metrics)"
        df.attrs["labels"] = dict(zip(names, self.catalogue()["label"]))  # "" for files before the catalogue
        out = _wide(df, ["rep"]) if wide else df
        out.attrs["labels"] = df.attrs["labels"]
        return out

    def metric(self, name):
        """One metric across replications: a Series indexed by rep (its unit in attrs["unit"])."""
        values, names, units = self._metric_arrays()
        if name not in names:
            close = [n for n in names if n.startswith(name.split(".")[0])][:8]
            raise NotInFile(f"{self.path}: no metric {name!r}" + (f"; similar: {close}" if close else ""))
        k = names.index(name)
        s = pd.Series(values[:, k], index=pd.RangeIndex(values.shape[0], name="rep"), name=name)
        s.attrs["unit"] = units[k]
        s.attrs["label"] = self.catalogue()["label"][k]
        return s

    def summary(self):
        """The stored summary: name, quantity, dimension, dim_value, unit, mean, sd, ci95_lo,
        ci95_hi, n (Student-t 95% interval over replications, docs/reports.md)."""
        df = _h5.frame(self._f["summary"][()])
        split = [split_metric(n) for n in df["name"]]
        df.insert(1, "quantity", [s[0] for s in split])
        df.insert(2, "dimension", [s[1] for s in split])
        df.insert(3, "dim_value", [s[2] for s in split])
        df.attrs["units"] = {c: "" for c in df.columns}
        df.attrs["units"].update({c: "(the row's unit)" for c in ("mean", "sd", "ci95_lo", "ci95_hi")})
        df.attrs["units"]["n"] = "replications"
        df.attrs["help"] = "mean, sample sd and 95% CI of each metric over replications (/summary)"
        return df

    # ---- tables and series -----------------------------------------------------------------------
    def table(self, name, rep=None):
        """Table `name` of every replication (or one: rep=r), stacked with a `rep` column first."""
        parts, units, helptext = [], None, ""
        for r, g in self._rep_groups(rep):
            key = f"reps/{g}/tables/{name}"
            if key not in self._f:
                raise NotInFile(f"{self.path}: no table {name!r} in {g}; tables: {self.table_names}")
            ds = self._f[key]
            df = _h5.frame(ds[()])
            df.insert(0, "rep", np.full(len(df), r, dtype=np.int64))
            parts.append(df)
            if units is None:
                fields = list(ds.dtype.names or ())
                u = _h5.texts(ds.attrs.get("units"))
                units = dict(zip(fields, u if len(u) == len(fields) else [""] * len(fields)))
                helptext = _h5.text(ds.attrs.get("help", b""))
        df = pd.concat(parts, ignore_index=True)
        df.attrs["units"] = {"rep": "", **units}
        df.attrs["help"] = helptext
        return df

    def tables(self):
        """Every table, {name: DataFrame}."""
        return {n: self.table(n) for n in self.table_names}

    def series(self, name, rep=None, long=False):
        """Series `name` of every replication (or one), one row per (rep, bin). Columns: rep, bin,
        and for binned series bin_start_s and bin_start_h (start of the bin in simulated seconds
        and hours), then one column per series column (its values: integer sums over the bin).
        attrs: units, help, bin_width_s (0: one bin for the whole run, no time columns).
        long=True: rep, bin, [bin_start_s, bin_start_h,] column, value, unit."""
        parts, meta = [], None
        for r, g in self._rep_groups(rep):
            key = f"reps/{g}/series/{name}"
            if key not in self._f:
                raise NotInFile(f"{self.path}: no series {name!r} in {g}; series: {self.series_names}")
            ds = self._f[key]
            v = ds[()]
            if v.ndim != 2:
                raise SpotlabError(f"{self.path}: series {name} has {v.ndim} dimensions, not 2 (a damaged file)")
            if meta is None:
                a = _h5.attrs(ds)
                cols = a.get("columns") or [f"c{i}" for i in range(v.shape[1])]
                unit = a.get("unit", "")
                units = a.get("units") or [unit] * len(cols)  # files before per-column units
                meta = (cols, units, float(a.get("bin_width_s", 0.0)), a.get("help", ""))
            cols, units, bw, helptext = meta
            df = pd.DataFrame({"rep": np.full(v.shape[0], r, dtype=np.int64),
                               "bin": np.arange(v.shape[0], dtype=np.int64)})
            if bw > 0:
                df["bin_start_s"] = df["bin"] * bw
                df["bin_start_h"] = df["bin_start_s"] / 3600.0
            fixed = list(df.columns)
            names = [c if c not in fixed else f"{c}_" for c in cols]  # a column named like an index
            data = pd.DataFrame(v, columns=names)
            parts.append(pd.concat([df, data], axis=1))
        cols, units, bw, helptext = meta
        out = pd.concat(parts, ignore_index=True)
        fixed = [c for c in ("rep", "bin", "bin_start_s", "bin_start_h") if c in out.columns]
        tu = {"rep": "", "bin": "1", "bin_start_s": "s", "bin_start_h": "h"}
        colunits = dict(zip([c for c in out.columns if c not in fixed], units))
        if long:
            out = out.melt(id_vars=fixed, var_name="column", value_name="value")
            out = out.sort_values(["rep", "bin"], kind="stable", ignore_index=True)  # columns in file order
            out["unit"] = out["column"].map(colunits)
            out.attrs["units"] = {**{c: tu[c] for c in fixed}, "column": "", "value": "(the row's unit)", "unit": ""}
        else:
            out.attrs["units"] = {**{c: tu[c] for c in fixed}, **colunits}
        out.attrs["help"] = helptext
        out.attrs["bin_width_s"] = bw
        return out

    def all_series(self):
        """Every series, {name: DataFrame} (wide form)."""
        return {n: self.series(n) for n in self.series_names}


class Sweep:
    """One sweep file of `spotlab sweep` (format spotlab-sweep, version 1): one key, several values
    (points), the same seeds at every point."""

    def __init__(self, f, path):
        self._f = f
        self.path = os.fspath(path)
        _h5.require(f, self.path, ["sweep", "sweep/labels", "sweep/x", "sweep/metrics", "sweep/mean",
                                   "sweep/ci95_lo", "sweep/ci95_hi"])
        a = _h5.attrs(f["sweep"])
        self.param = a.get("param", "")
        self.model = a.get("model", "")
        self.scenario_path = a.get("scenario_path", "")
        self.seed = a.get("seed")
        self.reps = a.get("reps")
        self.labels = _h5.texts(f["sweep/labels"][()])
        self.x = np.asarray(f["sweep/x"][()], dtype=float)
        self.format_version = _h5.scalar(f.attrs["format_version"])

    def close(self):
        self._f.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __repr__(self):
        return f"<spotlab.Sweep {self.path!r} {self.param} = {self.labels} reps={self.reps}>"

    @property
    def points(self):
        return len(self.labels)

    def _names_units(self):
        ds = self._f["sweep/metrics"]
        return _h5.texts(ds.attrs.get("names")), _h5.texts(ds.attrs.get("units"))

    def metrics(self, wide=False):
        """Every metric at every point and replication, long: point, label (the value as given),
        x (as a number, NaN when it is not one), rep, name, quantity, dimension, dim_value, value,
        unit. wide=True: one row per (point, rep), one column per metric."""
        v = self._f["sweep/metrics"][()]
        names, units = self._names_units()
        npt, nrep, nm = v.shape
        if nm != len(names) or npt != len(self.labels):
            raise SpotlabError(f"{self.path}: /sweep/metrics has shape {v.shape} for {len(self.labels)} points "
                               f"and {len(names)} metrics (a damaged file)")
        pt = np.repeat(np.arange(npt), nrep)
        idx = [("point", pt), ("label", np.array(self.labels, dtype=object)[pt]), ("x", self.x[pt]),
               ("rep", np.tile(np.arange(nrep), npt))]
        df = _metrics_long(v, names, units, idx)
        df.attrs["units"] = {"point": "", "label": "", "x": "", "rep": "", "name": "", "quantity": "",
                             "dimension": "", "dim_value": "", "value": "(the row's unit)", "unit": ""}
        df.attrs["help"] = f"metrics per point of {self.param} and replication (/sweep/metrics)"
        df.attrs["param"] = self.param
        return _wide(df, ["point", "label", "x", "rep"]) if wide else df

    def summary(self):
        """Per point and metric: point, label, x, name, quantity, dimension, dim_value, unit, mean,
        ci95_lo, ci95_hi (each point's own 95% interval, as stored), n (finite replications)."""
        names, units = self._names_units()
        mean, lo, hi = (self._f[f"sweep/{k}"][()] for k in ("mean", "ci95_lo", "ci95_hi"))
        npt = len(self.labels)
        idx = [("point", np.arange(npt)), ("label", np.array(self.labels, dtype=object)), ("x", self.x)]
        df = _metrics_long(mean, names, units, idx).rename(columns={"value": "mean"})
        df.insert(df.columns.get_loc("unit"), "ci95_lo", lo.ravel())
        df.insert(df.columns.get_loc("unit"), "ci95_hi", hi.ravel())
        v = self._f["sweep/metrics"][()]
        df["n"] = np.isfinite(v).sum(axis=1).ravel()
        df.attrs["units"] = {c: "" for c in df.columns}
        df.attrs["units"].update({c: "(the row's unit)" for c in ("mean", "ci95_lo", "ci95_hi")})
        df.attrs["units"]["n"] = "replications"
        df.attrs["param"] = self.param
        return df

    @property
    def point_files(self):
        """Each point's results file (absolute paths)."""
        base = os.path.dirname(os.path.abspath(self.path))
        if "sweep/point_files" not in self._f:
            return []
        return [os.path.join(base, p) for p in _h5.texts(self._f["sweep/point_files"][()])]

    def point(self, i):
        """The full results of point i (spotlab.Results)."""
        from . import open as _open
        files = self.point_files
        if not 0 <= i < len(files):
            raise NotInFile(f"{self.path}: no point {i} (0 .. {len(files) - 1})")
        return _open(files[i])


class Experiment:
    """One experiment file of `spotlab experiment` (format spotlab-experiment, version 1;
    docs/experiments.md): factors, a design's points, the same seeds at every point, constraints,
    objectives, the Pareto front and standardized regression coefficients."""

    def __init__(self, f, path):
        self._f = f
        self.path = os.fspath(path)
        _h5.require(f, self.path, ["experiment", "experiment/factors", "experiment/labels", "experiment/x",
                                   "experiment/metrics", "experiment/mean", "experiment/ci95_lo",
                                   "experiment/ci95_hi", "experiment/feasible", "experiment/pareto"])
        a = _h5.attrs(f["experiment"])
        self.model = a.get("model", "")
        self.design = a.get("design", "")
        self.sensitivity_method = a.get("sensitivity_method", "")
        self.scenario_path = a.get("scenario_path", "")
        self.seed = a.get("seed")
        self.reps = a.get("reps")
        self.factors = _h5.texts(f["experiment/factors"][()])
        self.x = np.asarray(f["experiment/x"][()], dtype=float).reshape(-1, len(self.factors))
        labels = _h5.texts(f["experiment/labels"][()])
        if len(labels) != self.x.size:
            raise SpotlabError(f"{self.path}: /experiment/labels holds {len(labels)} values for {self.x.shape[0]} "
                               f"points of {len(self.factors)} factors (a damaged file)")
        self.labels = [labels[i * len(self.factors):(i + 1) * len(self.factors)] for i in range(self.x.shape[0])]
        self.format_version = _h5.scalar(f.attrs["format_version"])

    def close(self):
        self._f.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __repr__(self):
        return (f"<spotlab.Experiment {self.path!r} {self.design} of {self.factors}: {self.npoints} points "
                f"reps={self.reps}>")

    @property
    def npoints(self):
        return self.x.shape[0]

    def _strings(self, name):
        return _h5.texts(self._f[f"experiment/{name}"][()]) if f"experiment/{name}" in self._f else []

    def _names_units(self):
        ds = self._f["experiment/metrics"]
        return _h5.texts(ds.attrs.get("names")), _h5.texts(ds.attrs.get("units"))

    def points(self):
        """One row per point: point, each factor's value as given (column named by its key) and as
        a number (KEY + '.x': a level's index when it is not one), feasible, pareto (booleans)."""
        df = pd.DataFrame({"point": np.arange(self.npoints)})
        for j, k in enumerate(self.factors):
            df[k] = [lab[j] for lab in self.labels]
            df[k + ".x"] = self.x[:, j]
        df["feasible"] = self._f["experiment/feasible"][()].astype(float) == 1
        df["pareto"] = self._f["experiment/pareto"][()].astype(float) == 1
        df.attrs["units"] = {c: "" for c in df.columns}
        df.attrs["help"] = "the design's points (/experiment/labels, x, feasible, pareto)"
        return df

    def metrics(self, wide=False):
        """Every metric at every point and replication, long: point, rep, name, quantity,
        dimension, dim_value, value, unit. wide=True: one row per (point, rep)."""
        v = self._f["experiment/metrics"][()]
        names, units = self._names_units()
        npt, nrep, nm = v.shape
        if nm != len(names) or npt != self.npoints:
            raise SpotlabError(f"{self.path}: /experiment/metrics has shape {v.shape} for {self.npoints} points "
                               f"and {len(names)} metrics (a damaged file)")
        idx = [("point", np.repeat(np.arange(npt), nrep)), ("rep", np.tile(np.arange(nrep), npt))]
        df = _metrics_long(v, names, units, idx)
        df.attrs["units"] = {"point": "", "rep": "", "name": "", "quantity": "", "dimension": "", "dim_value": "",
                             "value": "(the row's unit)", "unit": ""}
        return _wide(df, ["point", "rep"]) if wide else df

    def summary(self):
        """Per point and metric: point, name, ..., unit, mean, ci95_lo, ci95_hi (as stored)."""
        names, units = self._names_units()
        mean, lo, hi = (self._f[f"experiment/{k}"][()] for k in ("mean", "ci95_lo", "ci95_hi"))
        df = _metrics_long(mean, names, units, [("point", np.arange(self.npoints))]).rename(columns={"value": "mean"})
        df.insert(df.columns.get_loc("unit"), "ci95_lo", lo.ravel())
        df.insert(df.columns.get_loc("unit"), "ci95_hi", hi.ravel())
        df.attrs["units"] = {c: "" for c in df.columns}
        df.attrs["units"].update({c: "(the row's unit)" for c in ("mean", "ci95_lo", "ci95_hi")})
        return df

    def constraints(self):
        """Per point and constraint: point, constraint (as written), metric, met (on the mean),
        confidence (probability the constraint holds, NaN with fewer than two replications)."""
        cons = self._strings("constraints")
        if not cons:
            return pd.DataFrame(columns=["point", "constraint", "metric", "met", "confidence"])
        names, _ = self._names_units()
        ci = self._f["experiment/constraint_metric"][()]
        met = self._f["experiment/met"][()].reshape(self.npoints, len(cons))
        conf = self._f["experiment/confidence"][()].reshape(self.npoints, len(cons))
        df = pd.DataFrame({"point": np.repeat(np.arange(self.npoints), len(cons)),
                           "constraint": np.tile(np.array(cons, dtype=object), self.npoints),
                           "metric": np.tile(np.array([names[int(i)] for i in ci], dtype=object), self.npoints),
                           "met": met.ravel() == 1, "confidence": conf.ravel()})
        df.attrs["units"] = {c: "" for c in df.columns}
        df.attrs["units"]["confidence"] = "1"
        return df

    def sensitivity(self):
        """Per objective and factor: objective (as written), factor, src (the standardized
        regression coefficient, self.sensitivity_method), r2 (of the objective's fit)."""
        objs = self._strings("objectives")
        if not objs or "experiment/sensitivity" not in self._f:
            return pd.DataFrame(columns=["objective", "factor", "src", "r2"])
        s = self._f["experiment/sensitivity"][()].reshape(len(objs), len(self.factors))
        r2 = self._f["experiment/sensitivity_r2"][()] if "experiment/sensitivity_r2" in self._f else \
            np.full(len(objs), np.nan)
        df = pd.DataFrame({"objective": np.repeat(np.array(objs, dtype=object), len(self.factors)),
                           "factor": np.tile(np.array(self.factors, dtype=object), len(objs)),
                           "src": s.ravel(), "r2": np.repeat(r2, len(self.factors))})
        df.attrs["units"] = {"objective": "", "factor": "", "src": "1", "r2": "1"}
        df.attrs["method"] = self.sensitivity_method
        return df

    @property
    def point_files(self):
        """Each point's results file (absolute paths)."""
        base = os.path.dirname(os.path.abspath(self.path))
        return [os.path.join(base, p) for p in self._strings("point_files")]

    def point(self, i):
        """The full results of point i (spotlab.Results)."""
        from . import open as _open
        files = self.point_files
        if not 0 <= i < len(files):
            raise NotInFile(f"{self.path}: no point {i} (0 .. {len(files) - 1})")
        return _open(files[i])
