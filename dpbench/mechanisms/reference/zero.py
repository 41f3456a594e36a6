"""The zero predictor θ̂ = 0: the reference line "θ = 0" of the figures (error ‖θ*‖²_Σ on population metrics; spec 000
§3.12, spec 002 §5.3 E3). One estimator: the papers' ``iw_zero`` and ``ftrl_zero`` are deprecated aliases of it."""

from __future__ import annotations

import numpy as np

from dpbench.mechanisms._base import FitResult
from dpbench.registry import register_alias, register_mechanism


@register_mechanism(
    "zero",
    summary="Zero predictor θ̂ = 0 (a reference line; uses no data and no randomness)",
    privacy_model="none",
    neighbour="none",
    spec="000 §3.12, 002 §5.3",
    style={"color": "grey", "marker": "", "linestyle": "-."},
    hyper={},
)
def fit_zero(
    X: np.ndarray,
    y: np.ndarray,
    epsilon: float | None = None,
    delta: float | None = None,
    rng: np.random.Generator | None = None,
) -> FitResult:
    """θ̂ = 0 ∈ ℝ^d (d = the number of columns of X)."""
    return FitResult(np.zeros(np.asarray(X).shape[1]))


register_alias("iw_zero", "zero")
register_alias("ftrl_zero", "zero")
