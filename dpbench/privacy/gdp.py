"""Gaussian differential privacy (Dong, Roth & Su 2022, "Gaussian differential privacy", JRSS-B). Pure functions.

A mechanism is μ-GDP when distinguishing neighbours is at least as hard as telling N(0, 1) from N(μ, 1). The
Gaussian mechanism f + N(0, σ²I) with ℓ2-sensitivity Δ is exactly (Δ/σ)-GDP, and GDP composes exactly:
μ-GDP releases μ_1, …, μ_k compose to √(Σ μ_i²)-GDP (their Cor. 3.3). Conversion to (ε, δ) (their Cor. 2.13):

    δ(ε; μ) = Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2),

the same curve as the analytic Gaussian mechanism's δ_Gauss(ε; σ = 1/μ, Δ = 1) (Balle & Wang 2018), so every
function here is a thin, named view of :mod:`dpbench.privacy.agm`.

The log-likelihood ratio of one release of a μ-GDP Gaussian mechanism at a worst-case pair is N(+μ²/2, μ²) on D and
N(−μ²/2, μ²) on D′, which is how the audit turns samples of that statistic into μ̂ (:mod:`dpbench.audit.stats`).
"""

from __future__ import annotations

import math
from collections.abc import Iterable

from scipy.optimize import brentq
from scipy.stats import norm

from dpbench.privacy.agm import agm_delta, epsilon_agm, sigma_agm
from dpbench.privacy.validate import check_delta, check_epsilon, check_positive


def gdp_delta(epsilon: float, mu: float) -> float:
    """δ(ε; μ) = Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2): the smallest δ with μ-GDP ⇒ (ε, δ)-DP (exact)."""
    mu = check_positive(mu, "mu")
    if not epsilon >= 0:
        raise ValueError(f"epsilon must be ≥ 0, got {epsilon!r}")
    return max(0.0, agm_delta(float(epsilon), 1.0 / mu, 1.0))


def gdp_epsilon(mu: float, delta: float) -> float:
    """Smallest ε ≥ 0 with δ(ε; μ) ≤ δ: the (ε, δ) guarantee that μ-GDP gives exactly (0 when μ = 0)."""
    delta = check_delta(delta)
    if mu == 0:
        return 0.0
    return epsilon_agm(1.0 / check_positive(mu, "mu"), delta, 1.0)


def gdp_mu(epsilon: float, delta: float) -> float:
    """The μ whose GDP curve passes through (ε, δ): 1/σ_AGM(ε, δ, 1) (inverse of :func:`gdp_epsilon`)."""
    return 1.0 / sigma_agm(check_epsilon(epsilon), check_delta(delta), 1.0)


def compose_mu(mus: Iterable[float]) -> float:
    """μ of the composition of μ_i-GDP mechanisms: √(Σ μ_i²) (exact; Dong, Roth & Su Cor. 3.3)."""
    values = [float(m) for m in mus]
    if any(not (m >= 0 and math.isfinite(m)) for m in values):
        raise ValueError(f"every μ must be finite and ≥ 0, got {values}")
    return math.sqrt(sum(m * m for m in values))


def mixture_epsilon(mus: Iterable[float], delta: float) -> float:
    """Exact ε at δ of a mechanism that picks one of the μ_i-GDP mechanisms uniformly at random and publishes the
    choice: δ(ε) = mean_i δ(ε; μ_i), ε = the smallest value with δ(ε) ≤ δ (0 if δ(0) ≤ δ)."""
    delta = check_delta(delta)
    values = [float(m) for m in mus]
    if not values or any(not (m >= 0 and math.isfinite(m)) for m in values):
        raise ValueError(f"need finite μ_i ≥ 0, got {values}")

    def gap(eps: float) -> float:
        return sum(gdp_delta(eps, m) for m in values if m > 0) / len(values) - delta

    if gap(0.0) <= 0:
        return 0.0
    hi = 1.0
    while gap(hi) > 0:
        hi *= 2.0
    return float(brentq(gap, 0.0, hi, xtol=1e-10))


def gdp_type2_error(alpha: float, mu: float) -> float:
    """Trade-off curve G_μ(α) = Φ(Φ⁻¹(1 − α) − μ): the smallest type-II error of a level-α test of μ-GDP."""
    if not 0 <= alpha <= 1:
        raise ValueError(f"alpha must lie in [0, 1], got {alpha!r}")
    return float(norm.cdf(norm.ppf(1.0 - alpha) - mu))
