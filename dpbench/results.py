"""Reading runs back: locate run folders, load them, aggregate trials into curves and tables.

A run folder (written by :mod:`dpbench.engine.regression`) holds

* ``trials.csv`` — one tidy row per (dataset, mechanism, ε, trial): identifiers (``dataset``, ``dataset_id``,
  ``loader``, ``data.<option>``, ``n``, ``d``, ``mechanism``, ``label``, ``hp.<hyper>``, ``epsilon_index``,
  ``epsilon``, ``delta``, ``trial``), metric columns (``train_mse``, ...), ``seconds`` and ``info.<diagnostic>``;
* ``datasets.json`` — ``{dataset_id: {label, n, d, ols_train_mse, zero_train_mse, lam_min_x, ...}}``;
* ``skipped.json`` — ``{dataset_id: reason}`` for datasets that could not be loaded;
* ``config.yaml`` — the resolved config (``title``, ``caption``, ``mechanisms``, ``plot`` defaults, ...);
* ``meta.json`` — versions, commit, timing.

Everything here is plain pandas, so it is as usable from a notebook as from ``dpbench plot``::

    run = load_run("results/ihm_vs_adassp")
    agg = aggregate(run, "train_mse")               # mean, std (ddof=0), count, ci95, lo, hi, median per ε
    print(format_table(summary_table(run, "train_mse")))
    fitted_slope(aggregate(run, "excess"))           # slope of log mean vs log ε per curve
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import yaml

TRIALS = "trials.csv"
#: columns of trials.csv that identify a trial rather than measure it
ID_COLUMNS = (
    "dataset", "dataset_id", "loader", "n", "d", "mechanism", "label", "privacy_model", "neighbour",
    "epsilon_index", "epsilon", "delta", "trial",
)
ID_PREFIXES = ("data.", "hp.")
#: metric names computed on the fly from train_mse and datasets.json when their column is absent
EXCESS_NAMES = ("excess", "excess_train_mse")
#: columns of the aggregate table besides the grouping keys and x
STAT_COLUMNS = ("mean", "std", "count", "ci95", "lo", "hi", "median")
Z95 = 1.96


# ----------------------------------------------------------------------------------------------------------------
# locating and loading runs


def find_runs(path: str | Path) -> list[Path]:
    """The run folders under ``path``: ``path`` itself if it holds ``trials.csv``, else every (nested) subfolder
    that does, sorted. Hidden folders and the runner's ``shards`` folders are not searched."""
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"{path} does not exist")
    if path.is_file():
        if path.name == TRIALS:
            return [path.parent]
        raise ValueError(f"{path} is a file; give a run folder (holding {TRIALS}) or a folder of runs")
    if (path / TRIALS).is_file():
        return [path]
    runs = []
    for trials in path.rglob(TRIALS):
        rel = trials.parent.relative_to(path).parts
        if any(part.startswith(".") or part == "shards" for part in rel):
            continue
        runs.append(trials.parent)
    return sorted(runs)


@dataclass
class Run:
    """A loaded run folder. ``datasets``/``skipped``/``config``/``meta`` are ``{}`` when their file is absent."""

    path: Path
    trials: pd.DataFrame
    datasets: dict[str, Any] = field(default_factory=dict)
    skipped: dict[str, str] = field(default_factory=dict)
    config: dict[str, Any] = field(default_factory=dict)
    meta: dict[str, Any] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return str(self.config.get("name") or self.path.name)

    @property
    def title(self) -> str:
        return str(self.config.get("title") or "")

    @property
    def caption(self) -> str:
        return str(self.config.get("caption") or "")

    def label_order(self) -> list[str]:
        """Curve labels in config order, then any other label in order of appearance in the trials."""
        configured = [str(m.get("label")) for m in self.config.get("mechanisms") or [] if isinstance(m, Mapping)]
        seen = [str(v) for v in pd.unique(self.trials["label"])] if "label" in self.trials else []
        return [lab for lab in configured if lab in seen] + [lab for lab in seen if lab not in configured]

    def metric_columns(self) -> list[str]:
        return metric_columns(self.trials, self.datasets)

    def dataset_info(self, dataset: str) -> dict[str, Any]:
        """datasets.json entry of ``dataset`` (a dataset_id, or a label naming exactly one dataset)."""
        if dataset in self.datasets:
            return dict(self.datasets[dataset])
        matches = [v for v in self.datasets.values() if isinstance(v, Mapping) and v.get("label") == dataset]
        if len(matches) == 1:
            return dict(matches[0])
        if not matches:
            raise KeyError(f"dataset {dataset!r} not in {self.path / 'datasets.json'}; known: {list(self.datasets)}")
        raise KeyError(f"label {dataset!r} names {len(matches)} datasets in {self.path}; use a dataset_id")


def _read_json(path: Path, required: bool = False) -> dict[str, Any]:
    if not path.exists():
        if required:
            raise FileNotFoundError(f"{path} is missing")
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
        raise ValueError(f"{path} is not valid JSON: {err}") from None
    if not isinstance(data, dict):
        raise ValueError(f"{path} should hold a JSON object, found {type(data).__name__}")
    return data


def _read_yaml(path: Path) -> dict[str, Any]:
    if not path.exists():
        return {}
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as err:
        raise ValueError(f"{path} is not valid YAML: {err}") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ValueError(f"{path} should hold a mapping, found {type(data).__name__}")
    return data


def load_run(run_dir: str | Path) -> Run:
    """Load a run folder. ``trials.csv`` is required; the JSON/YAML side files are optional but must parse."""
    run_dir = Path(run_dir)
    if run_dir.is_file() and run_dir.name == TRIALS:
        run_dir = run_dir.parent
    trials_file = run_dir / TRIALS
    if not trials_file.is_file():
        raise FileNotFoundError(f"{trials_file} is missing (not a run folder?)")
    try:
        trials = pd.read_csv(trials_file)
    except pd.errors.EmptyDataError:
        raise ValueError(f"{trials_file} is empty") from None
    except (pd.errors.ParserError, UnicodeDecodeError) as err:
        raise ValueError(f"{trials_file} is not a readable CSV: {err}") from None
    for column in ("dataset", "label"):
        if column not in trials:
            raise ValueError(f"{trials_file} has no {column!r} column (columns: {', '.join(trials.columns)})")
    for column in ("dataset", "dataset_id", "label", "mechanism", "loader"):
        if column in trials:
            trials[column] = trials[column].astype(str)
    return Run(
        path=run_dir,
        trials=trials,
        datasets=_read_json(run_dir / "datasets.json"),
        skipped={str(k): str(v) for k, v in _read_json(run_dir / "skipped.json").items()},
        config=_read_yaml(run_dir / "config.yaml"),
        meta=_read_json(run_dir / "meta.json"),
    )


# ----------------------------------------------------------------------------------------------------------------
# metrics and aggregation


def is_id_column(column: str) -> bool:
    return column in ID_COLUMNS or column.startswith(ID_PREFIXES)


def metric_columns(trials: pd.DataFrame, datasets: Mapping[str, Any] | None = None) -> list[str]:
    """Numeric measurement columns of ``trials`` (plus ``excess`` when it can be computed)."""
    found = [c for c in trials.columns if not is_id_column(c) and pd.api.types.is_numeric_dtype(trials[c])]
    if "excess" not in found and ("excess_train_mse" in found or ("train_mse" in found and datasets)):
        found.append("excess")
    return found


def _ols_floor(trials: pd.DataFrame, datasets: Mapping[str, Any]) -> pd.Series:
    """Each row's dataset OLS train MSE from datasets.json (matched on dataset_id, else on the label)."""
    floors = {k: v.get("ols_train_mse") for k, v in datasets.items() if isinstance(v, Mapping)}
    key = "dataset_id" if "dataset_id" in trials else "dataset"
    series = trials[key].map(floors)
    if series.isna().any() and key == "dataset_id":
        by_label = {v.get("label"): v.get("ols_train_mse") for v in datasets.values() if isinstance(v, Mapping)}
        series = series.fillna(trials["dataset"].map(by_label))
    missing = sorted(set(trials.loc[series.isna(), key]))
    if missing:
        raise ValueError(
            f"no ols_train_mse in datasets.json for {missing}; cannot compute the excess metric"
        )
    return series.astype(float)


def metric_values(
    trials: pd.DataFrame, metric: str, datasets: Mapping[str, Any] | None = None
) -> pd.Series:
    """The per-trial values of ``metric``: a column, or ``excess`` = train_mse − the dataset's OLS train MSE."""
    if metric in EXCESS_NAMES:
        if "excess_train_mse" in trials:
            return trials["excess_train_mse"].astype(float)
        if "train_mse" in trials and datasets:
            return trials["train_mse"].astype(float) - _ols_floor(trials, datasets)
    if metric in trials and not is_id_column(metric):
        values = trials[metric]
        if not pd.api.types.is_numeric_dtype(values):
            raise ValueError(f"column {metric!r} is not numeric")
        return values.astype(float)
    raise ValueError(
        f"unknown metric {metric!r}; available in this run: {', '.join(metric_columns(trials, datasets)) or 'none'}"
    )


def aggregate(
    trials: pd.DataFrame | Run,
    metric: str,
    x: str = "epsilon",
    by: Sequence[str] | str = ("dataset", "label"),
    datasets: Mapping[str, Any] | None = None,
) -> pd.DataFrame:
    """Mean curve with a 95% normal band per (``by``..., ``x``).

    Columns: ``by``..., ``x``, ``mean``, ``std`` (ddof=0), ``count`` (non-NaN trials), ``ci95`` = 1.96·std/√count,
    ``lo``/``hi`` = mean ∓ ci95, ``median``. Trials whose metric is NaN are dropped; their number is in
    ``result.attrs["nan_dropped"]``. ``metric="excess"`` is train MSE minus that dataset's OLS train MSE (the
    ``excess_train_mse`` column if the run recorded it, else computed with ``datasets``, i.e. datasets.json).
    Rows keep the order of first appearance of the ``by`` keys and ascending ``x``.
    """
    if isinstance(trials, Run):
        datasets = trials.datasets if datasets is None else datasets
        trials = trials.trials
    by = [by] if isinstance(by, str) else list(by)
    missing = [c for c in [*by, x] if c not in trials]
    if missing:
        raise ValueError(f"column(s) {missing} not in the trials; columns: {', '.join(trials.columns)}")
    if x in by:
        raise ValueError(f"x={x!r} is also a grouping column")
    values = metric_values(trials, metric, datasets)
    frame = trials[[*by, x]].copy()
    frame["_value"] = values.to_numpy()
    nan_rows = int(frame["_value"].isna().sum())
    frame = frame[frame["_value"].notna()]
    grouped = frame.groupby([*by, x], sort=False, dropna=False)["_value"]
    agg = grouped.agg(
        mean="mean", std=lambda v: float(np.std(v.to_numpy(), ddof=0)), count="count", median="median"
    ).reset_index()
    agg["ci95"] = Z95 * agg["std"] / np.sqrt(agg["count"])
    agg["lo"] = agg["mean"] - agg["ci95"]
    agg["hi"] = agg["mean"] + agg["ci95"]
    # order: by-keys as they first appear, then x ascending
    if by:
        first = frame.drop_duplicates(by)[by].reset_index(drop=True).reset_index(names="_rank")
        agg = agg.merge(first, on=by, how="left")
        agg = agg.sort_values(["_rank", x], kind="stable").drop(columns="_rank")
    else:
        agg = agg.sort_values(x, kind="stable")
    agg = agg[[*by, x, "mean", "std", "count", "ci95", "lo", "hi", "median"]].reset_index(drop=True)
    agg.attrs["metric"] = metric
    agg.attrs["nan_dropped"] = nan_rows
    return agg


# ----------------------------------------------------------------------------------------------------------------
# reference values, tables, rates


def reference_lines(run: Run, dataset: str, metric: str = "train_mse") -> dict[str, float]:
    """Horizontal reference values for ``dataset`` (id or label) in the units of ``metric``.

    For ``train_mse``: ``{"OLS (non-private)": ols_train_mse, "θ = 0": zero_train_mse}``; for the excess metric
    the same two shifted by the OLS floor (0 and ‖Y‖²/n − OLS). Other metrics have no references (``{}``).
    """
    info = run.dataset_info(dataset)
    ols, zero = info.get("ols_train_mse"), info.get("zero_train_mse")
    refs: dict[str, float] = {}
    if metric == "train_mse":
        shift = 0.0
    elif metric in EXCESS_NAMES:
        if ols is None:
            return {}
        shift = float(ols)
    else:
        return {}
    if ols is not None:
        refs["OLS (non-private)"] = float(ols) - shift
    if zero is not None:
        refs["θ = 0"] = float(zero) - shift
    return refs


def _format_number(value: float, digits: int) -> str:
    if value is None or not np.isfinite(value):
        return "nan"
    return f"{value:.{digits}g}"


def summary_table(
    run: Run | pd.DataFrame,
    metric: str,
    x: str = "epsilon",
    by: Sequence[str] = ("dataset", "label"),
    digits: int = 3,
) -> pd.DataFrame:
    """Wide table: one row per ``by`` key (dataset × label), one column per ``x`` value, cells "mean ± ci95"."""
    agg = aggregate(run, metric, x=x, by=by)
    by = list(by)
    agg["cell"] = [
        f"{_format_number(m, digits)} ± {_format_number(c, max(1, digits - 1))}"
        for m, c in zip(agg["mean"], agg["ci95"], strict=True)
    ]
    wide = agg.pivot(index=by, columns=x, values="cell")
    order = agg.drop_duplicates(by).set_index(by).index
    wide = wide.reindex(order)
    wide.columns = [f"{x}={_format_number(v, 4)}" if isinstance(v, (int, float, np.number)) else f"{x}={v}"
                    for v in wide.columns]
    wide.columns.name = None
    return wide.fillna("")


def format_table(table: pd.DataFrame) -> str:
    """Plain-text, fixed-width rendering of a (possibly multi-indexed) table; no extra dependency."""
    frame = table.reset_index() if any(name is not None for name in table.index.names) else table
    header = [str(c) for c in frame.columns]
    rows = [[str(v) for v in row] for row in frame.itertuples(index=False, name=None)]
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(header)]
    numeric = [i >= (frame.shape[1] - table.shape[1]) for i in range(len(header))]

    def line(cells: Iterable[str]) -> str:
        return "  ".join(
            c.rjust(w) if num else c.ljust(w) for c, w, num in zip(cells, widths, numeric, strict=True)
        ).rstrip()

    out = [line(header), "  ".join("-" * w for w in widths)]
    out += [line(r) for r in rows]
    return "\n".join(out)


def fitted_slope(
    agg: pd.DataFrame,
    x: str = "epsilon",
    y: str = "mean",
    by: Sequence[str] | None = None,
    xmin: float | None = None,
    xmax: float | None = None,
) -> pd.DataFrame:
    """Least-squares slope of log(y) against log(x) per curve (e.g. ≈ −1 for mean ∝ 1/ε, −2 for 1/ε²).

    ``by`` defaults to every column of ``agg`` that is neither ``x`` nor a statistic. Points with x or y ≤ 0 (or
    outside [xmin, xmax]) are ignored. Returns ``by``..., ``slope``, ``intercept`` (of the natural-log fit),
    ``points``; the slope is NaN for curves with fewer than two usable points.
    """
    if x not in agg or y not in agg:
        raise ValueError(f"columns {x!r} and {y!r} must be in the table; columns: {', '.join(agg.columns)}")
    by = [c for c in agg.columns if c not in (x, y, *STAT_COLUMNS)] if by is None else list(by)
    rows = []
    groups = agg.groupby(by, sort=False, dropna=False) if by else [((), agg)]
    for key, group in groups:
        xs, ys = group[x].to_numpy(dtype=float), group[y].to_numpy(dtype=float)
        keep = np.isfinite(xs) & np.isfinite(ys) & (xs > 0) & (ys > 0)
        if xmin is not None:
            keep &= xs >= xmin
        if xmax is not None:
            keep &= xs <= xmax
        xs, ys = np.log(xs[keep]), np.log(ys[keep])
        if len(np.unique(xs)) >= 2:
            slope, intercept = np.polyfit(xs, ys, 1)
        else:
            slope = intercept = math.nan
        key = key if isinstance(key, tuple) else (key,)
        rows.append({**dict(zip(by, key, strict=True)), "slope": float(slope), "intercept": float(intercept),
                     "points": int(keep.sum())})
    return pd.DataFrame(rows, columns=[*by, "slope", "intercept", "points"])


# ----------------------------------------------------------------------------------------------------------------
# figure statistics: mean or median with a normal or a seeded bootstrap 95% interval; log–log slope fits

STATS = ("mean", "median")
INTERVALS = ("normal", "bootstrap", "none")
#: √(π/2): asymptotic sd of the sample median over that of the mean, for normal data
MEDIAN_SE_FACTOR = math.sqrt(math.pi / 2)


def group_seed(seed: int, key: Any) -> np.random.SeedSequence:
    """Seed of one group's bootstrap: the plot seed and a stable hash of the group key (so adding a curve never
    changes another curve's band)."""
    import zlib

    return np.random.SeedSequence([int(seed), zlib.crc32(repr(key).encode())])


def _stat(values: np.ndarray, stat: str, axis: int | None = None) -> Any:
    return np.median(values, axis=axis) if stat == "median" else np.mean(values, axis=axis)


def bootstrap_stats(values: np.ndarray, stat: str, rng: np.random.Generator, resamples: int) -> np.ndarray:
    """``resamples`` values of ``stat`` on resamples (with replacement, same size) of ``values``."""
    index = rng.integers(0, values.size, size=(resamples, values.size))
    return _stat(values[index], stat, axis=1)


def summarise(
    frame: pd.DataFrame,
    value: str,
    keys: Sequence[str],
    stat: str = "mean",
    interval: str = "normal",
    resamples: int = 1000,
    seed: int = 0,
) -> pd.DataFrame:
    """One row per group of ``keys``: ``centre`` (mean or median of ``value``), its 95% interval ``lo``/``hi``,
    ``se`` and ``count`` (non-NaN values); groups keep their order of first appearance.

    * ``interval="normal"``: centre ± 1.96·se, se = sd/√R for the mean and √(π/2)·sd/√R for the median (its
      asymptotic standard error for normal data); sd with ddof = 0, as in the IHM paper's code.
    * ``interval="bootstrap"``: the 2.5% and 97.5% percentiles of ``resamples`` bootstrap values of the statistic,
      drawn from :func:`group_seed` (``seed``, group key) — deterministic. The bootstrap values are kept in the
      ``boot`` column (arrays) for :func:`fit_slopes`.
    * ``interval="none"``: lo = hi = centre.
    """
    if stat not in STATS:
        raise ValueError(f"stat must be one of {', '.join(STATS)}, got {stat!r}")
    if interval not in INTERVALS:
        raise ValueError(f"interval must be one of {', '.join(INTERVALS)}, got {interval!r}")
    keys = list(keys)
    rows = []
    clean = frame[np.isfinite(frame[value].to_numpy(dtype=float))]
    for key, group in clean.groupby(keys, sort=False, dropna=False):
        values = group[value].to_numpy(dtype=float)
        key = key if isinstance(key, tuple) else (key,)
        centre = float(_stat(values, stat))
        sd = float(np.std(values))
        se = sd / math.sqrt(values.size) * (MEDIAN_SE_FACTOR if stat == "median" else 1.0)
        boot = None
        if interval == "bootstrap" and values.size > 1:
            boot = bootstrap_stats(values, stat, np.random.default_rng(group_seed(seed, key)), resamples)
            lo, hi = (float(q) for q in np.percentile(boot, [2.5, 97.5]))
        elif interval == "normal":
            lo, hi = centre - Z95 * se, centre + Z95 * se
        else:
            lo = hi = centre
        rows.append({**dict(zip(keys, key, strict=True)), "centre": centre, "lo": lo, "hi": hi, "se": se,
                     "count": int(values.size), "boot": boot})
    columns = [*keys, "centre", "lo", "hi", "se", "count", "boot"]
    return pd.DataFrame(rows, columns=columns)


def loglog_weights(xs: np.ndarray) -> np.ndarray:
    """w with slope = Σ w_j log y_j for the least-squares line of log y on log x: w_j = (u_j − ū)/Σ(u − ū)²."""
    u = np.log(xs)
    centred = u - u.mean()
    return centred / float(centred @ centred)


def fit_slopes(
    points: pd.DataFrame,
    x: str,
    by: Sequence[str],
    xmin: float | None = None,
    xmax: float | None = None,
) -> pd.DataFrame:
    """Least-squares slope b of log(centre) = a + b·log(x) per curve (``by``), with a 95% CI.

    ``points`` is a :func:`summarise` table. Points with x or centre ≤ 0, or outside [xmin, xmax], are left out.
    The CI covers the noise of the points (not a misfit of the power law): with bootstrap intervals, the 2.5/97.5%
    percentiles of the slopes refitted on the bootstrap values (resamples with a non-positive value dropped); with
    normal ones, b ± 1.96·√(Σ w_j² (se_j / centre_j)²) (delta method, independent points). Columns: ``by``...,
    ``slope``, ``lo``, ``hi``, ``intercept``, ``points``, ``x_min``, ``x_max``.
    """
    by = list(by)
    rows = []
    groups = points.groupby(by, sort=False, dropna=False) if by else [((), points)]
    for key, curve in groups:
        xs, ys = curve[x].to_numpy(dtype=float), curve["centre"].to_numpy(dtype=float)
        keep = np.isfinite(xs) & np.isfinite(ys) & (xs > 0) & (ys > 0)
        if xmin is not None:
            keep &= xs >= xmin
        if xmax is not None:
            keep &= xs <= xmax
        key = key if isinstance(key, tuple) else (key,)
        row = {**dict(zip(by, key, strict=True)), "slope": math.nan, "lo": math.nan, "hi": math.nan,
               "intercept": math.nan, "points": int(keep.sum()), "x_min": math.nan, "x_max": math.nan}
        if len(np.unique(xs[keep])) >= 2:
            part = curve[keep]
            xs, ys = xs[keep], ys[keep]
            w = loglog_weights(xs)
            slope = float(w @ np.log(ys))
            row.update(slope=slope, intercept=float(np.mean(np.log(ys)) - slope * np.mean(np.log(xs))),
                       x_min=float(xs.min()), x_max=float(xs.max()))
            boots = list(part["boot"]) if "boot" in part else []
            if (part["count"] < 2).any():
                pass  # a point from one trial has no noise estimate: no interval
            elif boots and all(b is not None for b in boots):
                stack = np.vstack(boots)  # points × resamples
                valid = (stack > 0).all(axis=0)
                if valid.any():
                    slopes = w @ np.log(stack[:, valid])
                    row["lo"], row["hi"] = (float(q) for q in np.percentile(slopes, [2.5, 97.5]))
            else:
                rel = part["se"].to_numpy(dtype=float) / ys
                half = Z95 * math.sqrt(float(w**2 @ rel**2))
                row["lo"], row["hi"] = slope - half, slope + half
        rows.append(row)
    return pd.DataFrame(rows, columns=[*by, "slope", "lo", "hi", "intercept", "points", "x_min", "x_max"])
