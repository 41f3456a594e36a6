"""Metrics of the Stein GLM experiments (spec 003 §1.6), registered from this module.

* ``stein_err2``   = ‖ŵ − w*‖₂² / ‖w*‖₂² against the generator's exact w* (Gaussian covariates);
* ``stein_errinf`` = ‖ŵ − w*‖∞² / ‖w*‖∞² (Bernoulli covariates);
* ``glm_accuracy`` = test accuracy of ŷ = 1[⟨x, ŵ⟩ (+ b) > 0] with labels y ∈ {0, 1} (A27); a θ with one extra
  entry is read as (w, intercept) (the sklearn baseline).
"""

from __future__ import annotations

import numpy as np

from dpbench.analysis.metrics import TrialCoordinates, register_metric
from dpbench.data import Dataset
from dpbench.linalg import GramStats


def _truth(dataset: Dataset) -> np.ndarray | None:
    return None if dataset.population is None else dataset.population.theta


@register_metric("stein_err2", "‖ŵ − w*‖₂² / ‖w*‖₂²")
def stein_err2(theta: np.ndarray, dataset: Dataset, stats: GramStats, trial: TrialCoordinates | None = None) -> float:
    w = _truth(dataset)
    if w is None or theta.shape != w.shape:
        return float("nan")
    return float(np.sum((theta - w) ** 2) / np.sum(w**2))


@register_metric("stein_errinf", "‖ŵ − w*‖∞² / ‖w*‖∞²")
def stein_errinf(theta: np.ndarray, dataset: Dataset, stats: GramStats, trial: TrialCoordinates | None = None) -> float:
    w = _truth(dataset)
    if w is None or theta.shape != w.shape:
        return float("nan")
    return float(np.max(np.abs(theta - w)) ** 2 / np.max(np.abs(w)) ** 2)


@register_metric("glm_accuracy", "Test accuracy")
def glm_accuracy(theta: np.ndarray, dataset: Dataset, stats: GramStats, trial: TrialCoordinates | None = None) -> float:
    X, y = dataset.X_test, dataset.y_test
    if X.shape[0] == 0:
        return float("nan")
    if theta.shape[0] == X.shape[1] + 1:
        score = X @ theta[:-1] + theta[-1]
    elif theta.shape[0] == X.shape[1]:
        score = X @ theta
    else:
        raise ValueError(f"theta has {theta.shape[0]} entries; expected {X.shape[1]} or {X.shape[1] + 1}")
    return float(np.mean((score > 0).astype(float) == (y > 0.5)))
