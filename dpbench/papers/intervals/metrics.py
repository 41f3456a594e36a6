"""Per-trial coverage columns of the interval study (issue 37; spec 005 §10, §12).

The metric ``ci`` writes, for every interval method of the trial (the mechanism's, ``FitResult.intervals``) and
the non-private Wald control ``wald`` computed here from the data, per coefficient j at the nominal 95% level:

* ``ci.<method>.cover_pop.<j>``  — 1 if the interval contains the population θ*_j (synthetic data; NaN otherwise);
* ``ci.<method>.cover_ols.<j>``  — 1 if it contains θ̂_OLS,j, the data set's own least-squares fit (always);
* ``ci.<method>.width.<j>``      — upper − lower;
* ``ci.<method>.overlap.<j>``    — CI overlap with the non-private Wald interval (Karr et al. 2006, spec 005 §12):
  o = min(u_p, u_c) − max(l_p, l_c), overlap = ½(o/(u_c − l_c) + o/(u_p − l_p)) (1 identical, ≤ 0 disjoint);
* ``ci.<method>.agree.<j>``      — 1 if both intervals agree on significance at 5% and, when significant, on sign.

The control reads the data without noise: it is a reference column of the benchmark, never a release.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from dpbench.analysis.metrics import TrialCoordinates, register_metric
from dpbench.data import Dataset
from dpbench.linalg import GramStats
from dpbench.mechanisms._intervals import Interval, wald

#: the nominal level of the recorded intervals (1 − ALPHA = 95%)
ALPHA = 0.05
#: name of the non-private control (t_{n−d} Wald interval of OLS)
CONTROL = "wald"


def ols_wald(stats: GramStats) -> Interval:
    """Non-private Wald: θ̂_OLS,j ± t_{n−d}·√(σ̂²[(XᵀX)⁻¹]_jj), σ̂² = (YᵀY − θ̂ᵀXᵀY)/(n − d) (target: population)."""
    theta, n, d = stats.theta_ols, stats.n, stats.d
    rss = max(stats.yty - float(theta @ stats.xty), 0.0)
    sigma2 = rss / (n - d) if n > d else float("nan")
    return wald(CONTROL, "population", theta, sigma2 * np.diag(np.linalg.pinv(stats.xtx)), df=max(n - d, 1))


def overlap(private: np.ndarray, control: np.ndarray) -> np.ndarray:
    """½(o/(u_c − l_c) + o/(u_p − l_p)), o = min(u_p, u_c) − max(l_p, l_c) per row of two (p, 2) interval arrays."""
    o = np.minimum(private[:, 1], control[:, 1]) - np.maximum(private[:, 0], control[:, 0])
    with np.errstate(divide="ignore", invalid="ignore"):
        return 0.5 * (o / (control[:, 1] - control[:, 0]) + o / (private[:, 1] - private[:, 0]))


def significance(bounds: np.ndarray) -> np.ndarray:
    """+1 (interval above 0), −1 (below 0), 0 (contains 0), per row."""
    return np.where(bounds[:, 0] > 0, 1, np.where(bounds[:, 1] < 0, -1, 0))


def covers(bounds: np.ndarray, target: np.ndarray | None) -> np.ndarray:
    if target is None:
        return np.full(bounds.shape[0], np.nan)
    return ((bounds[:, 0] <= target) & (target <= bounds[:, 1])).astype(float)


def interval_columns(
    method: str, bounds: np.ndarray, control: np.ndarray, population: np.ndarray | None, ols: np.ndarray
) -> dict[str, float]:
    """The columns of one method (module docstring), keyed ``<method>.<quantity>.<j>``."""
    values = {
        "cover_pop": covers(bounds, population),
        "cover_ols": covers(bounds, ols),
        "width": bounds[:, 1] - bounds[:, 0],
    }
    if method != CONTROL:
        values["overlap"] = overlap(bounds, control)
        values["agree"] = (significance(bounds) == significance(control)).astype(float)
    return {f"{method}.{quantity}.{j}": float(v) for quantity, column in values.items() for j, v in enumerate(column)}


@register_metric("ci", "95% interval: coverage, width, overlap")
def ci(theta: np.ndarray, dataset: Dataset, stats: GramStats, trial: TrialCoordinates) -> Mapping[str, Any]:
    """Coverage of θ* and θ̂_OLS, width, overlap and agreement with the non-private Wald, per method and j."""
    control = ols_wald(stats).conf_int(ALPHA)
    population = dataset.population.theta if dataset.population is not None else None
    columns = interval_columns(CONTROL, control, control, population, stats.theta_ols)
    for method, interval in trial.intervals.items():
        columns.update(interval_columns(method, interval.conf_int(ALPHA), control, population, stats.theta_ols))
    return columns
