"""What a user must be told about a run's data and results, in words: the units of the metrics, rows clipped to the
declared bounds, the data-dependent (not private) ``bounds: benchmark`` and an outlier that rescaled it, and the
configurations where the noise dominates. One source for the console (``dpbench run``), the figure notes and the
report, so the three always say the same.

Everything is read from a finished run (``datasets.json``, ``trials.csv``); nothing here writes.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np
import pandas as pd

#: the unit of every MSE metric: the loaders map rows into the unit ball before any mechanism sees them
UNITS = (
    "MSE metrics (train_mse, test_mse, excess_train_mse) are on the normalised scale the mechanisms see: "
    "(y / y_bound)², with y_bound the declared bound (or max |y| with bounds: benchmark); multiply by y_bound² "
    "for your data's units"
)
#: short form for an axis label
UNIT_SUFFIX = "[(y / y_bound)²]"
#: metrics in the normalised squared units
MSE_METRICS = ("train_mse", "test_mse", "excess_train_mse", "excess")
#: the largest training row more than this many times the 99th percentile is an outlier a benchmark scale follows
OUTLIER_RATIO = 5.0
#: a private mechanism whose median normalised excess is above this is "noise-dominated" (1 = releasing θ = 0)
NOISE_DOMINATED = 0.5


def _meta(info: Any) -> Mapping[str, Any]:
    return (info.get("meta") or {}) if isinstance(info, Mapping) else {}


def _shown(datasets: Mapping[str, Any], shown: Iterable[str] | None) -> dict[str, Any]:
    """The datasets.json entries of the datasets shown (ids or labels), all of them when ``shown`` is None."""
    if shown is None:
        return {k: v for k, v in datasets.items() if isinstance(v, Mapping)}
    wanted = {str(s) for s in shown}
    return {k: v for k, v in datasets.items() if isinstance(v, Mapping) and (k in wanted or v.get("label") in wanted)}


def clipping_notes(datasets: Mapping[str, Any], shown: Iterable[str] | None = None) -> list[str]:
    """``wine: 116 of 1,279 training rows clipped to the declared x bound, 3 labels to the y bound.`` per dataset
    that clipped (``rows_clipped_x`` / ``labels_clipped_y`` in its datasets.json meta)."""
    notes = []
    for ident, info in _shown(datasets, shown).items():
        meta = _meta(info)
        rows, labels = int(meta.get("rows_clipped_x") or 0), int(meta.get("labels_clipped_y") or 0)
        if not rows and not labels:
            continue
        n = int(info.get("n") or meta.get("n") or 0)
        parts = []
        if rows:
            parts.append(f"{rows:,} of {n:,} training rows clipped to the declared feature bounds")
        if labels:
            parts.append(f"{labels:,} of {n:,} labels clipped to the declared target bound")
        share = max(rows, labels) / n if n else 0.0
        notes.append(
            f"Clipped: {info.get('label') or ident}: {', '.join(parts)} ({share:.1%}; set clip: error in the "
            "loader's options to refuse such rows)."
        )
    return notes


def benchmark_notes(datasets: Mapping[str, Any], shown: Iterable[str] | None = None) -> list[str]:
    """The datasets normalised by their own maxima (``bounds: benchmark``, not private), and any whose scale was
    set by an outlier (largest training row or label > :data:`OUTLIER_RATIO` × its 99th percentile)."""
    chosen = {k: v for k, v in _shown(datasets, shown).items() if _meta(v).get("bounds") == "benchmark"}
    if not chosen:
        return []
    names = [str(v.get("label") or k) for k, v in chosen.items()]
    notes = ["Benchmark bounds (data-dependent normalisation, NOT private): " + ", ".join(names) + "."]
    for ident, info in chosen.items():
        meta = _meta(info)
        for what, key in (("row norm", "x_outlier_ratio"), ("|label|", "y_outlier_ratio")):
            ratio = meta.get(key)
            if isinstance(ratio, (int, float)) and ratio > OUTLIER_RATIO:
                notes.append(
                    f"Outlier: {info.get('label') or ident}: the largest training {what} is {ratio:.0f}× the 99th "
                    "percentile, and bounds: benchmark divides every row by it (the rest is squeezed near 0)."
                )
    return notes


def constant_notes(datasets: Mapping[str, Any], shown: Iterable[str] | None = None) -> list[str]:
    """Feature columns constant over the training rows (``constant_features`` in the meta): kept (a constant
    column acts as an intercept), but said, since a mistyped column often is one."""
    return [
        f"Constant feature: {info.get('label') or ident}: {_meta(info)['constant_features']} (the same value in every "
        "training row; it acts as an intercept)."
        for ident, info in _shown(datasets, shown).items()
        if _meta(info).get("constant_features")
    ]


def dataset_notes(datasets: Mapping[str, Any], shown: Iterable[str] | None = None) -> list[str]:
    """Every note about the datasets shown: benchmark bounds (and outliers), clipping, constant features."""
    return benchmark_notes(datasets, shown) + clipping_notes(datasets, shown) + constant_notes(datasets, shown)


def gaussian_noise_scale(epsilon: float, delta: float) -> float:
    """σ = √(2 ln(1.25/δ)) / ε: the classic Gaussian mechanism's noise for one release of sensitivity 1 (an
    order of magnitude for the noise on XᵀX and Xᵀy, used only to explain a result in words)."""
    return math.sqrt(2 * math.log(1.25 / delta)) / epsilon


def noise_notes(trials: pd.DataFrame, datasets: Mapping[str, Any]) -> list[str]:
    """Per dataset, the ε at which even the best private mechanism's median normalised excess risk
    r = (train MSE − OLS) / (‖Y‖²/n − OLS) is above :data:`NOISE_DOMINATED` (r = 1 is releasing θ = 0), with the
    order of the noise (σ at the largest such ε) against the data's own scale (the smallest eigenvalue of XᵀX).
    """
    needed = {"dataset_id", "epsilon", "train_mse", "privacy_model", "label", "delta"}
    if not needed <= set(trials.columns):
        return []
    private = trials[trials["privacy_model"].astype(str) != "none"]
    notes = []
    for ident, rows in private.groupby("dataset_id", sort=False):
        info = datasets.get(str(ident))
        if not isinstance(info, Mapping) or not {"ols_train_mse", "zero_train_mse"} <= set(info):
            continue
        span = float(info["zero_train_mse"]) - float(info["ols_train_mse"])
        if not span > 0:
            continue
        ratio = (rows["train_mse"].astype(float) - float(info["ols_train_mse"])) / span
        best = ratio.groupby([rows["epsilon"], rows["label"]]).median().groupby(level=0).min()
        bad = sorted(float(e) for e, r in best.items() if np.isfinite(r) and r > NOISE_DOMINATED)
        if not bad:
            continue
        eps = bad[-1]
        delta = float(rows.loc[rows["epsilon"] == eps, "delta"].iloc[0])
        lam = info.get("lam_min_x")
        scale = f"; the smallest eigenvalue of XᵀX is {lam:.3g}" if isinstance(lam, (int, float)) else ""
        grid = sorted(float(e) for e in best.index)
        if len(bad) == 1:
            where = f"ε = {eps:g}"
        elif bad == grid[: len(bad)]:
            where = f"ε ≤ {eps:g}"
        else:
            where = "ε ∈ {" + ", ".join(f"{e:g}" for e in bad) + "}"
        notes.append(
            f"Noise-dominated: {info.get('label') or ident} at {where}: the best private mechanism's median excess is "
            f"over {NOISE_DOMINATED:.0%} of releasing θ = 0 (noise ≈ √(2 ln(1.25/δ))/ε = "
            f"{gaussian_noise_scale(eps, delta):.3g} per released statistic at ε = {eps:g}, n = "
            f"{int(info.get('n') or 0):,}{scale}). Expected, not a bug: more rows, tighter declared bounds or a "
            "larger ε help."
        )
    return notes


def run_notes(
    trials: pd.DataFrame, datasets: Mapping[str, Any], shown: Iterable[str] | None = None, units: bool = False
) -> list[str]:
    """Everything a user is told about a run: the datasets' notes, then the noise-dominated configurations, and with
    ``units`` the unit of its MSE metrics (when it records one)."""
    notes = dataset_notes(datasets, shown) + noise_notes(trials, datasets)
    if units and any(metric in trials.columns for metric in MSE_METRICS):
        notes.append(UNITS + ".")
    return notes
