"""Non-private ordinary least squares (004 §3.8): the reference every private method is compared with.

θ* = the minimum-norm least-squares solution on the (normalised) training data, no intercept. Not private:
``privacy_model = "none"``; ε and δ are accepted and ignored so it runs on the same grid as the private methods.
``ridge > 0`` gives the ridge solution (XᵀX + ridge·I)⁻¹XᵀY instead (Wang 2018's "non-private" ``linreg.m``: ridge 1).
"""

from __future__ import annotations

import numpy as np

from dpbench.contract import Hyper
from dpbench.linalg import GramStats
from dpbench.mechanisms._base import FitResult, checked_stats
from dpbench.registry import register_mechanism


@register_mechanism(
    "ols",
    summary="Non-private minimum-norm least squares (reference floor)",
    privacy_model="none",
    neighbour="none",
    needs=("stats",),
    spec="004 §3.8",
    style={"color": "black", "marker": "", "linestyle": ":"},
    hyper={
        "ridge": Hyper(float, default=0.0, ge=0, doc="0: minimum-norm least squares; > 0: ridge (XᵀX + ridge·I)⁻¹XᵀY")
    },
)
def fit(
    X: np.ndarray,
    y: np.ndarray,
    epsilon: float | None = None,
    delta: float | None = None,
    rng: np.random.Generator | None = None,
    *,
    stats: GramStats | None = None,
    **hyper: float,
) -> FitResult:
    """θ* = argmin_θ ‖Y − Xθ‖² (minimum norm), or the ridge solution when ``ridge > 0``; ε, δ, rng are ignored."""
    X, y, stats = checked_stats(X, y, None, None, stats, x_bound=None, y_bound=None)
    if hyper["ridge"] > 0:
        return FitResult(np.linalg.solve(stats.xtx + hyper["ridge"] * np.eye(stats.d), stats.xty))
    return FitResult(stats.theta_ols.copy())
