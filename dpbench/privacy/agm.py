"""Analytic Gaussian mechanism (Balle & Wang 2018, Alg. 1; spec 004 §2.2). Pure functions, no randomness.

f + N(0, σ² I) with ℓ2-sensitivity Δ is (ε, δ)-DP iff

    δ_Gauss(ε; σ, Δ) := Φ(Δ/(2σ) − εσ/Δ) − e^ε Φ(−Δ/(2σ) − εσ/Δ) ≤ δ.

δ_Gauss is decreasing in σ and in ε, so σ_AGM(ε, δ, Δ) (smallest σ) and ε_AGM(σ, δ, Δ) (smallest ε) are unique
roots, found by Brent's method on a log scale to relative tolerance ~1e-14. σ_AGM is scale equivariant:
σ_AGM(ε, δ, cΔ) = c·σ_AGM(ε, δ, Δ). Tight T-fold composition of identical Gaussian mechanisms equals one with
sensitivity √T·Δ, hence :func:`sigma_agm_composed` = √T·σ_AGM(ε, δ, Δ).
"""

from __future__ import annotations

import math
from functools import lru_cache

from scipy.optimize import brentq
from scipy.special import log_ndtr

from dpbench.privacy.validate import check_count, check_delta, check_epsilon, check_positive

_RTOL = 1e-14


def agm_delta(epsilon: float, sigma: float, sensitivity: float = 1.0) -> float:
    """δ_Gauss(ε; σ, Δ): the smallest δ for which the Gaussian mechanism is (ε, δ)-DP (exact)."""
    ratio = sensitivity / sigma
    a = ratio / 2.0 - epsilon / ratio
    b = -ratio / 2.0 - epsilon / ratio
    return float(math.exp(log_ndtr(a)) - math.exp(epsilon + log_ndtr(b)))


@lru_cache(maxsize=4096)
def _sigma_unit(epsilon: float, delta: float) -> float:
    """σ_AGM(ε, δ, 1)."""

    def gap(log_sigma: float) -> float:
        return agm_delta(epsilon, math.exp(log_sigma)) - delta

    lo, hi = -1.0, 1.0
    while gap(lo) <= 0:  # too much noise: move down
        lo -= 2.0
    while gap(hi) > 0:  # too little noise: move up
        hi += 2.0
    return math.exp(brentq(gap, lo, hi, xtol=1e-15, rtol=_RTOL, maxiter=500))


def sigma_agm(epsilon: float, delta: float, sensitivity: float = 1.0) -> float:
    """Smallest σ such that adding N(0, σ²I) to a sensitivity-Δ query is (ε, δ)-DP (004 §2.2)."""
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    sensitivity = check_positive(sensitivity, "sensitivity")
    return sensitivity * _sigma_unit(epsilon, delta)


def sigma_agm_composed(epsilon: float, delta: float, steps: int, sensitivity: float = 1.0) -> float:
    """Per-step σ of T Gaussian releases that are (ε, δ)-DP together: √T·σ_AGM(ε, δ, Δ)."""
    steps = check_count(steps, "steps")
    return math.sqrt(steps) * sigma_agm(epsilon, delta, sensitivity)


def epsilon_agm(sigma: float, delta: float, sensitivity: float = 1.0) -> float:
    """Smallest ε such that the Gaussian mechanism (σ, Δ) is (ε, δ)-DP; 0 if already (0, δ)-DP."""
    sigma = check_positive(sigma, "sigma")
    delta = check_delta(delta)
    sensitivity = check_positive(sensitivity, "sensitivity")
    if agm_delta(0.0, sigma, sensitivity) <= delta:
        return 0.0
    hi = 1.0
    while agm_delta(hi, sigma, sensitivity) > delta:
        hi *= 2.0
    return float(brentq(lambda e: agm_delta(e, sigma, sensitivity) - delta, 0.0, hi, xtol=1e-15, rtol=_RTOL))


def sigma_classical(epsilon: float, delta: float, sensitivity: float = 1.0) -> float:
    """Classical Gaussian mechanism σ = Δ√(2 log(1.25/δ))/ε (valid for ε ≤ 1; 004 §2.2)."""
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    return check_positive(sensitivity, "sensitivity") * math.sqrt(2.0 * math.log(1.25 / delta)) / epsilon
