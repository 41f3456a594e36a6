"""Reading a finished run back: locate run folders, load them, read a metric per trial. Writes nothing.

A run folder (written by :mod:`dpbench.engine.regression` or the bandit kind) holds

* ``trials.csv`` — one tidy row per (dataset, mechanism, ε, trial): identifiers (``dataset``, ``dataset_id``,
  ``loader``, ``data.<option>``, ``n``, ``d``, ``mechanism``, ``label``, ``hp.<hyper>``, ``epsilon_index``,
  ``epsilon``, ``delta``, ``trial``), metric columns (``train_mse``, ...), ``seconds`` and ``info.<diagnostic>``;
* ``datasets.json`` — ``{dataset_id: {label, n, d, ols_train_mse, zero_train_mse, lam_min_x, ...}}``;
* ``skipped.json`` — ``{dataset_id: reason}`` for datasets that could not be loaded;
* ``config.yaml`` — the resolved config (``title``, ``caption``, ``mechanisms``, ``plot`` defaults, ...);
* ``meta.json`` — versions, commit, timing.

Everything here is plain pandas, so it is as usable from a notebook as from ``dpbench plot``::

    run = load_run("results/ihm_vs_adassp")
    values = metric_values(run.trials, "excess", run.datasets)   # one value per trial
    # statistics of them: dpbench.analysis.stats (summarise, fit_slopes, bootstrap)
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd
import yaml

TRIALS = "trials.csv"
#: columns of trials.csv that identify a trial rather than measure it
ID_COLUMNS = (
    "dataset",
    "dataset_id",
    "loader",
    "n",
    "d",
    "mechanism",
    "label",
    "privacy_model",
    "neighbour",
    "epsilon_index",
    "epsilon",
    "delta",
    "trial",
)
ID_PREFIXES = ("data.", "hp.")
#: metric names computed on the fly from train_mse and datasets.json when their column is absent
EXCESS_NAMES = ("excess", "excess_train_mse")


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


def require_columns(run: Run, columns: Iterable[str], analysis: str, has_them: str) -> None:
    """Raise :class:`ValueError` naming ``analysis``, the run's trials file and which of ``columns`` it lacks, with
    ``has_them`` (what kind of run has them)."""
    missing = [column for column in columns if column not in run.trials]
    if missing:
        raise ValueError(f"{analysis}: {run.path / TRIALS} lacks {missing} ({has_them})")


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
        raise ValueError(f"no ols_train_mse in datasets.json for {missing}; cannot compute the excess metric")
    return series.astype(float)


def metric_values(trials: pd.DataFrame, metric: str, datasets: Mapping[str, Any] | None = None) -> pd.Series:
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
    from dpbench.registry import unknown_name

    raise ValueError(
        unknown_name(
            "metric", metric, metric_columns(trials, datasets), of=" in this run", see="the header of trials.csv"
        )
    )


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
