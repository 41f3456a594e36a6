"""Text of a figure: readable axis names of coordinates and metrics, and short texts of coordinate values."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from dpbench.analysis.runs import EXCESS_NAMES

#: readable axis names for common coordinates
AXIS_NAMES = {
    "epsilon": "ε",
    "delta": "δ",
    "n": "n (training rows)",
    "d": "d (features)",
    "seconds": "seconds per fit",
    "trial": "trial",
}


def axis_name(column: str) -> str:
    """Readable label of a coordinate: ``epsilon`` → ε, ``data.n`` → n, ``hp.T`` → T (hyperparameter)."""
    if column in AXIS_NAMES:
        return AXIS_NAMES[column]
    if column.startswith("data."):
        return column[5:]
    if column.startswith("hp."):
        return f"{column[3:]} (hyperparameter)"
    if column.startswith("info."):
        return column[5:]
    return column


def metric_name(metric: str) -> str:
    """Axis label of a metric from :data:`dpbench.analysis.metrics.LABELS` (the metric name if unknown)."""
    try:
        from dpbench import registry
        from dpbench.analysis.metrics import LABELS

        registry.discover()  # loader/mechanism modules register their own metrics (and labels)
    except Exception:  # noqa: BLE001 - plotting must not depend on every module importing cleanly
        LABELS = {}
    if metric in EXCESS_NAMES:
        return LABELS.get("excess_train_mse", "Excess train MSE (vs OLS)")
    return LABELS.get(metric, axis_name(metric))


def metric_axis_label(metric: str, stat: str = "mean") -> str:
    """The y-axis label of a metric: its name, its unit when it is an MSE on the normalised scale
    (:data:`dpbench.analysis.notes.UNIT_SUFFIX`), and "(median)" when the points are medians."""
    from dpbench.analysis.notes import MSE_METRICS, UNIT_SUFFIX

    unit = f" {UNIT_SUFFIX}" if metric in MSE_METRICS else ""
    return metric_name(metric) + unit + (" (median)" if stat == "median" else "")


def value_text(value: Any) -> str:
    """Short text of a coordinate value: 0.5, 20, 1e5 (one significant digit), 16,384, ∞."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
        return str(value)
    value = float(value)
    if math.isnan(value):
        return "nan"
    if math.isinf(value):
        return "∞" if value > 0 else "−∞"
    if value.is_integer() and abs(value) >= 10_000:
        short = f"{value:.0e}"
        return short.replace("e+0", "e").replace("e+", "e") if float(short) == value else f"{value:,.0f}"
    return f"{value:.4g}"


def coordinate_text(name: str, value: Any) -> str:
    """``label`` → its value; any other coordinate → "name=value" (ε=0.5, n=1e5, T=4)."""
    if name in ("label", "mechanism", "dataset", "dataset_id"):
        return str(value)
    return f"{axis_name(name).split(' (')[0]}={value_text(value)}"
