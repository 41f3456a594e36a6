"""OPS — one posterior sample, "balanced" calibration (Wang 2018 ``OPS_epsdelta_balanced.m``; spec 005 §2a).

Privacy model: central (ε, δ)-DP, zero-out (add/remove) neighbours, ‖x_i‖ ≤ 1, |y_i| ≤ 1. The release is θ̂ itself,
one sample of the tempered ridge posterior

    θ̂ ~ N(θ_λ, (γ H)⁻¹),  H = XᵀX + I + λI,  θ_λ = H⁻¹XᵀY,

whose privacy follows from the OPS theorem (Wang 2018, Thm 3; Wang, Fienberg & Smola 2015) for a loss whose
gradient is ≤ L on the ball the ridge solution lives in — not from a Gaussian mechanism on a statistic. λ and γ are
data-independent given n (:func:`dpbench.mechanisms.ssp.calibration.ops_balanced`; n is treated as public, as in
the code). θ̂ is declared as what it is, a ``posterior`` release (:func:`released`): N(θ_λ, scale²·H⁻¹) with
scale = 1/√γ, the data-dependent H, and as sensitivity the theorem's Lipschitz constant L = θ-bound + 1, which
bounds the gradient ‖x‖·|y − xᵀθ| of the differing record's loss at the solution — the shift ‖H_D(θ_D − θ_D′)‖ the
audit measures (``dpbench audit ops``: white-box, exact ε of the two Gaussians by Monte Carlo).

Wang's code draws θ_λ + (Rᵀ)⁻¹z/√γ for H = RᵀR, whose covariance (R Rᵀ)⁻¹/γ is not the posterior's (γH)⁻¹
unless d = 1; dpbench draws the posterior the theorem is about, θ_λ + R⁻¹z/√γ (docs/deviations.md).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy.linalg import cho_solve, cholesky, solve_triangular

from dpbench.contract import Bounds
from dpbench.linalg import GramStats
from dpbench.mechanisms._base import CENTRAL_GRAM, FitResult, checked_stats, released
from dpbench.mechanisms.ssp.calibration import ops_balanced
from dpbench.registry import register_mechanism


def ridge_solution(stats: GramStats, ridge: float) -> tuple[np.ndarray, np.ndarray]:
    """(R, θ_λ): H = XᵀX + (1 + ridge)I = RᵀR (R upper triangular) and θ_λ = H⁻¹XᵀY (005 §2a step 6)."""
    upper = cholesky(stats.xtx + (1.0 + ridge) * np.eye(stats.d), lower=False)
    return upper, cho_solve((upper, False), stats.xty)


def posterior_sample(
    upper: np.ndarray, theta: np.ndarray, sqrt_gamma: float, rng: np.random.Generator, lipschitz: float | None = None
) -> np.ndarray:
    """θ̂ = θ_λ + R⁻¹z/√γ ~ N(θ_λ, (γ RᵀR)⁻¹) = N(θ_λ, (γH)⁻¹), z ~ N(0, I_d) (005 §2a step 10), declared as a
    ``posterior`` release with H = RᵀR and sensitivity ``lipschitz`` (module docstring)."""
    sample = theta + solve_triangular(upper, rng.standard_normal(theta.shape[0]), lower=False) / sqrt_gamma
    return released("θ̂ (posterior sample)", sample, theta, kind="posterior", scale=1.0 / sqrt_gamma,
                    sensitivity=lipschitz, H=upper.T @ upper)  # fmt: skip


@register_mechanism(
    "ops",
    summary="OPS-balanced: one sample of the tempered ridge posterior (Wang 2018; 005 §2a)",
    **CENTRAL_GRAM,
    spec="005 §2a",
    style={"color": "tab:cyan", "marker": "s", "linestyle": "--"},
    hyper={},
    bounds=Bounds(x=1.0, y=1.0),
)
def fit(
    X: np.ndarray,
    y: np.ndarray,
    epsilon: float,
    delta: float,
    rng: np.random.Generator,
    *,
    stats: GramStats | None = None,
    **hyper: Any,
) -> FitResult:
    """OPS-balanced estimate (module docstring)."""
    X, y, stats = checked_stats(X, y, epsilon, delta, stats)
    cal = ops_balanced(epsilon, delta, stats.n, stats.d)
    upper, theta = ridge_solution(stats, cal.ridge)
    theta_hat = posterior_sample(upper, theta, cal.sqrt_gamma, rng, cal.lipschitz)
    return FitResult(theta_hat, {"ridge": cal.ridge, "sqrt_gamma": cal.sqrt_gamma, "lipschitz": cal.lipschitz})
