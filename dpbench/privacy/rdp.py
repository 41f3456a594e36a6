"""Rényi DP of the Gaussian and Gaussian-mixing mechanisms and the RDP → (ε, δ) conversion (spec 004 §2.1).

* Gaussian mechanism (Mironov 2017): (α, αΔ²/(2σ²))-RDP for every α > 1.
* Gaussian mixing S X + σξ, S ~ N(0, I_{k×n}), max‖x_i‖² ≤ 1, γ = σ² + λ_min(XᵀX) (Lev et al. 2025, Lemma 1):
  (α, φ(α; k, γ))-RDP for α ∈ (1, γ) with

      φ(α; k, γ) = kα/(2(α−1))·log(1 − 1/γ) − k/(2(α−1))·log(1 − α/γ).

* Conversion (Canonne, Kamath, Steinke 2020, Prop. 12): (α, ε_α)-RDP ⇒ (ε_α + conv(α, δ), δ)-DP with
  conv(α, δ) = [log(1/δ) + (α−1) log(1 − 1/α) − log α]/(α−1); always minimised over the allowed α.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from scipy.optimize import minimize_scalar

from dpbench.privacy.validate import check_delta

#: α is kept this far inside an open interval (1, α_max)
ALPHA_MARGIN = 1e-9


def gaussian_rdp(alpha: np.ndarray | float, sigma: float, sensitivity: float = 1.0) -> np.ndarray | float:
    """ε_α = αΔ²/(2σ²)."""
    return alpha * sensitivity**2 / (2.0 * sigma**2)


def mixing_rdp(alpha: np.ndarray | float, k: float, gamma: float) -> np.ndarray | float:
    """φ(α; k, γ) of the Gaussian mixing mechanism, for 1 < α < γ (Eq. 19)."""
    alpha = np.asarray(alpha, dtype=float)
    out = k / (2.0 * (alpha - 1.0)) * (alpha * np.log1p(-1.0 / gamma) - np.log1p(-alpha / gamma))
    return out if out.ndim else float(out)


def conversion_term(alpha: np.ndarray | float, delta: float) -> np.ndarray | float:
    """conv(α, δ) = [log(1/δ) + (α−1) log(1 − 1/α) − log α]/(α−1) (Canonne et al. 2020, Prop. 12)."""
    alpha = np.asarray(alpha, dtype=float)
    out = (np.log(1.0 / delta) + (alpha - 1.0) * np.log1p(-1.0 / alpha) - np.log(alpha)) / (alpha - 1.0)
    return out if out.ndim else float(out)


def minimize_over_alpha(
    objective: Callable[[np.ndarray], np.ndarray], alpha_max: float = np.inf
) -> tuple[float, float]:
    """(min, argmin) of a unimodal objective of α over (1, alpha_max).

    A log-spaced grid of α − 1 brackets the minimum; bounded Brent refines it (tolerance 1e-12 in log(α − 1)).
    """
    upper = min(alpha_max - 1.0, 1e7) * (1.0 - ALPHA_MARGIN)
    lower = min(1e-6, upper * 1e-3)
    grid = np.geomspace(lower, upper, 400)
    values = objective(1.0 + grid)
    values = np.where(np.isfinite(values), values, np.inf)
    best = int(np.argmin(values))
    lo = np.log(grid[max(best - 1, 0)])
    hi = np.log(grid[min(best + 1, grid.size - 1)])
    if hi <= lo:
        return float(values[best]), float(1.0 + grid[best])
    result = minimize_scalar(
        lambda t: float(objective(np.asarray(1.0 + np.exp(t)))),
        bounds=(lo, hi),
        method="bounded",
        options={"xatol": 1e-12},
    )
    if result.fun <= values[best]:
        return float(result.fun), float(1.0 + np.exp(result.x))
    return float(values[best]), float(1.0 + grid[best])


def rdp_to_dp(rdp: Callable[[np.ndarray], np.ndarray], delta: float, alpha_max: float = np.inf) -> float:
    """ε of the (ε, δ)-DP guarantee implied by an RDP curve α ↦ ε_α on (1, alpha_max)."""
    delta = check_delta(delta)
    value, _ = minimize_over_alpha(lambda a: rdp(a) + conversion_term(a, delta), alpha_max)
    return value


def gaussian_epsilon_rdp(sigma: float, delta: float, steps: int = 1, sensitivity: float = 1.0) -> float:
    """ε via RDP of a T-fold Gaussian composition (an upper bound on the exact AGM value)."""
    return rdp_to_dp(lambda a: steps * gaussian_rdp(a, sigma, sensitivity), delta)
