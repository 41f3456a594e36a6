"""Per-trial metrics: each is ``metric(theta, dataset, stats, trial) -> float`` and registered by name.

Configs list the metrics an experiment records (``metrics: [train_mse, test_mse, excess_train_mse]``). Metrics on
synthetic data use the generator's exact population quantities (``dataset.population``), never estimates. ``trial``
is the trial's :class:`TrialCoordinates` (ε, δ, hyperparameters, trial index, data draw, mechanism), so a metric
may depend on them (e.g. a privacy-scaled error); a metric written with the older three-argument signature
``metric(theta, dataset, stats)`` is still accepted and simply does not see them.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from dpbench.data import Dataset
from dpbench.linalg import GramStats


@dataclass(frozen=True)
class TrialCoordinates:
    """Where a trial sits in the grid: its privacy parameters, the mechanism's hyperparameters, trial and draw."""

    epsilon: float
    delta: float
    hyper: Mapping[str, Any] = field(default_factory=dict)
    trial: int = 0
    data_draw: int | None = None
    mechanism: str = ""
    #: the fit's confidence intervals by method (``FitResult.intervals``; empty for a mechanism without them)
    intervals: Mapping[str, Any] = field(default_factory=dict)


#: a metric returns a number, or a mapping {key: number} written as the columns ``<metric>.<key>``
Metric = Callable[[np.ndarray, Dataset, GramStats, TrialCoordinates], float | Mapping[str, float]]
METRICS: dict[str, Metric] = {}
#: metric name → human-readable axis label
LABELS: dict[str, str] = {}


def _positional_arity(func: Callable[..., Any]) -> int | None:
    try:
        params = inspect.signature(func).parameters.values()
    except (TypeError, ValueError):  # pragma: no cover - builtins
        return None
    if any(p.kind is inspect.Parameter.VAR_POSITIONAL for p in params):
        return None
    return sum(p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) for p in params)


def register_metric(name: str, label: str) -> Callable[[Callable[..., float]], Callable[..., float]]:
    """Register ``metric(theta, dataset, stats, trial)`` (or the older ``metric(theta, dataset, stats)``)."""

    def decorator(func: Callable[..., float]) -> Callable[..., float]:
        if _positional_arity(func) == 3:
            METRICS[name] = lambda theta, dataset, stats, trial: func(theta, dataset, stats)
        else:
            METRICS[name] = func
        LABELS[name] = label
        return func

    return decorator


def mse(X: np.ndarray, y: np.ndarray, theta: np.ndarray) -> float:
    if X.shape[0] == 0:
        return float("nan")
    residual = y - X @ theta
    return float(residual @ residual / X.shape[0])


def reference_theta(dataset: Dataset, stats: GramStats) -> np.ndarray:
    """θ to compare against: the population θ* for synthetic data, else the empirical OLS solution."""
    return dataset.population.theta if dataset.population is not None else stats.theta_ols


@register_metric("train_mse", "Train MSE")
def train_mse(theta: np.ndarray, dataset: Dataset, stats: GramStats, trial: TrialCoordinates | None = None) -> float:
    """(1/n)‖Y − Xθ̂‖² on the normalised training data (004 §1.4)."""
    return mse(stats.X, stats.y, theta)


@register_metric("test_mse", "Test MSE")
def test_mse(theta: np.ndarray, dataset: Dataset, stats: GramStats, trial: TrialCoordinates | None = None) -> float:
    """Same on the test split (scaled with the training factors)."""
    return mse(dataset.X_test, dataset.y_test, theta)


@register_metric("excess_risk", "Excess empirical risk L(θ̂) − L(θ*)")
def excess_risk(theta: np.ndarray, dataset: Dataset, stats: GramStats, trial: TrialCoordinates | None = None) -> float:
    """L(θ̂) − L(θ*) = ‖θ̂ − θ*‖²_{XᵀX} (Wang 2018 Lemma 5), exact even when both losses are large."""
    diff = theta - stats.theta_ols
    return float(diff @ stats.xtx @ diff)


@register_metric("excess_train_mse", "Excess train MSE (vs OLS)")
def excess_train_mse(
    theta: np.ndarray, dataset: Dataset, stats: GramStats, trial: TrialCoordinates | None = None
) -> float:
    """(L(θ̂) − L(θ*))/n = train MSE − OLS train MSE."""
    return excess_risk(theta, dataset, stats, trial) / stats.n


@register_metric("param_error_sigma", "‖θ̂ − θ*‖²_Σ")
def param_error_sigma(
    theta: np.ndarray, dataset: Dataset, stats: GramStats, trial: TrialCoordinates | None = None
) -> float:
    """Population excess risk ‖θ̂ − θ*‖²_Σ with the generator's exact Σ and θ* (NaN on real data)."""
    if dataset.population is None:
        return float("nan")
    diff = theta - dataset.population.theta
    return float(diff @ dataset.population.cov @ diff)


@register_metric("rel_l2_error", "‖θ̂ − θ*‖₂² / ‖θ*‖₂²")
def rel_l2_error(theta: np.ndarray, dataset: Dataset, stats: GramStats, trial: TrialCoordinates | None = None) -> float:
    """Squared relative ℓ2 error against the population θ* (or OLS on real data)."""
    ref = reference_theta(dataset, stats)
    return float(np.sum((theta - ref) ** 2) / np.sum(ref**2))


@register_metric("rel_linf_error", "‖θ̂ − θ*‖∞ / ‖θ*‖∞")
def rel_linf_error(
    theta: np.ndarray, dataset: Dataset, stats: GramStats, trial: TrialCoordinates | None = None
) -> float:
    """Relative ℓ∞ error against the population θ* (or OLS on real data)."""
    ref = reference_theta(dataset, stats)
    return float(np.max(np.abs(theta - ref)) / np.max(np.abs(ref)))


@register_metric("test_accuracy", "Test accuracy")
def test_accuracy(
    theta: np.ndarray, dataset: Dataset, stats: GramStats, trial: TrialCoordinates | None = None
) -> float:
    """Fraction of test rows with sign(x_iᵀθ̂) = y_i (labels in {−1, +1})."""
    if dataset.X_test.shape[0] == 0:
        return float("nan")
    return float(np.mean(np.sign(dataset.X_test @ theta) == np.sign(dataset.y_test)))


def metric_columns(name: str, value: float | Mapping[str, float]) -> dict[str, float]:
    """The CSV columns of one metric value: ``{name: value}``, or ``{name.key: v}`` for a mapping."""
    if isinstance(value, Mapping):
        return {f"{name}.{key}": v for key, v in value.items()}
    return {name: value}


def get_metric(name: str) -> Metric:
    if name not in METRICS:
        raise KeyError(f"unknown metric {name!r}; available: {', '.join(sorted(METRICS))}")
    return METRICS[name]
