"""Calibrations of the Gaussian-mixing methods: IHM (spec 004 §3.3) and LinMix (004 §3.5). Pure functions.

Sketch sizes, clipping shifts and noise levels exactly as the paper's experiments (code variants; ambiguities
#1–#4, #7 of 004 §7). Solvers return the smallest γ whose ε is ≤ the target (monotone root finding on log γ to
relative tolerance ~1e-13, then nudged up so the round trip ε(γ) ≤ target always holds). Results are cached:
the runner calls them once per (dataset, ε) in effect.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import lru_cache

from scipy.optimize import brentq

from dpbench.privacy.agm import sigma_agm_composed
from dpbench.privacy.rdp import conversion_term, minimize_over_alpha, mixing_rdp
from dpbench.privacy.validate import check_count, check_delta, check_epsilon, check_positive

# ----------------------------------------------------------------------------------------------------
# sketch sizes and clipping shifts


def k_ihm(d: int, T: int, rho: float, factor: float = 6.0) -> int:
    """k = max{⌊6d⌋, ⌊6 log(4T/ϱ)⌋} (004 §3.3, ambiguity #1: each term truncated separately)."""
    check_positive(rho, "rho")
    return max(int(factor * d), int(factor * math.log(4.0 * T / rho)))


def k_linmix(d: int, rho: float, factor: float = 2.5) -> int:
    """k = max{⌊2.5d⌋, ⌊2.5 log(2/ϱ)⌋} (004 §3.5, ambiguity #2)."""
    check_positive(rho, "rho")
    return max(int(factor * d), int(factor * math.log(2.0 / rho)))


def tau_ihm(delta: float, rho: float) -> float:
    """τ = √(2 log max{4/δ, 4/ϱ}) (004 §3.3)."""
    return math.sqrt(2.0 * math.log(max(4.0 / delta, 4.0 / rho)))


def tau_linmix(delta: float, rho: float) -> float:
    """τ = √(2 log max{3/δ, 2/ϱ}) (004 §3.5)."""
    return math.sqrt(2.0 * math.log(max(3.0 / delta, 2.0 / rho)))


# ----------------------------------------------------------------------------------------------------
# ε as a function of γ


def mixing_sketch_epsilon(gamma: float, k: int, steps: int, delta_conversion: float) -> float:
    """min_{1<α<γ} { T φ(α; k, γ) + conv(α, δ') }: ε of T mixing sketches at level γ (RDP, then converted)."""
    value, _ = minimize_over_alpha(
        lambda a: steps * mixing_rdp(a, k, gamma) + conversion_term(a, delta_conversion), alpha_max=gamma
    )
    return value


def epsilon_ihm_sketch(gamma: float, k: int, delta: float, T: int) -> float:
    """ε of IHM's private λ_min release + T sketches (004 §3.3, Eq. 42; δ budget 3δ/4):

    √(2 log(5/δ))·√k/γ + min_{1<α<γ} { T φ(α; k, γ) + conv(α, δ/4) }.
    """
    return math.sqrt(2.0 * math.log(5.0 / delta)) * math.sqrt(k) / gamma + mixing_sketch_epsilon(
        gamma, k, T, delta / 4.0
    )


def epsilon_linmix(gamma: float, k: int, delta: float, c2: float = 2.0, strict: bool = False) -> float:
    """ε of LinMix at γ in code units (004 §3.5, Eq. 17 with C² = C_X² + C_Y²):

    e·√(2 log(3.75/δ))·√k/γ + min_{1<α<γ/C²} { φ(α; k, γ/C²) + conv(α, δ/3) },  e = 1 (code) or C² (strict,
    the paper-consistent accounting of the eigenvalue release; ambiguity #7).
    """
    eigen_factor = c2 if strict else 1.0
    eigen = eigen_factor * math.sqrt(2.0 * math.log(3.75 / delta)) * math.sqrt(k) / gamma
    return eigen + mixing_sketch_epsilon(gamma / c2, k, 1, delta / 3.0)


def linmix_eigen_noise_std(gamma: float, k: int, c2: float = 2.0, strict: bool = False) -> float:
    """Std of LinMix's λ_min(M_XY) release: √C²·γ/√k (code) or γ/√k (strict; ambiguity #7)."""
    return (1.0 if strict else math.sqrt(c2)) * gamma / math.sqrt(k)


# ----------------------------------------------------------------------------------------------------
# solvers


#: bracket expansion stops when ε(γ) decreases by less than this (relative) over one step: the accounting's floor
FLOOR_RTOL = 1e-9


def smallest_gamma(
    epsilon_of_gamma: Callable[[float], float], target: float, gamma_floor: float, what: str = "ε"
) -> float:
    """Smallest γ > gamma_floor with ε(γ) ≤ target, for ε decreasing in γ.

    ε(γ) levels off at a positive floor (the RDP → DP conversion with orders α ≤ 1e7, :mod:`.rdp`): a target
    below it raises a ValueError naming the floor instead of growing γ until it overflows.
    """
    lo = math.log(gamma_floor * (1.0 + 1e-6))
    if epsilon_of_gamma(math.exp(lo)) <= target:
        return math.exp(lo)
    hi = lo + 1.0
    previous = math.inf
    while (value := epsilon_of_gamma(math.exp(hi))) > target:
        if value >= previous * (1.0 - FLOOR_RTOL) or hi > 700.0:
            raise ValueError(
                f"{what} = {target:.3g} is below the smallest value this calibration reaches at any noise level "
                f"(≈ {value:.3g}, RDP orders α ≤ 1e7); use a larger ε or δ"
            )
        previous = value
        hi += 2.0
    log_gamma = brentq(lambda t: epsilon_of_gamma(math.exp(t)) - target, lo, hi, xtol=1e-14, rtol=1e-14)
    gamma = math.exp(log_gamma)
    while epsilon_of_gamma(gamma) > target:
        gamma *= 1.0 + 1e-13
    return gamma


@lru_cache(maxsize=4096)
def solve_gamma_ihm(epsilon_half: float, k: int, delta: float, T: int) -> float:
    """Smallest γ with :func:`epsilon_ihm_sketch` ≤ ε/2 (IHM's sketch half of the budget; 004 §3.3)."""
    check_epsilon(epsilon_half, "epsilon/2")
    check_delta(delta)
    k = check_count(k, "k")
    T = check_count(T, "T")
    return smallest_gamma(
        lambda g: epsilon_ihm_sketch(g, k, delta, T), epsilon_half, gamma_floor=1.0, what="IHM's sketch budget ε/2"
    )


@lru_cache(maxsize=4096)
def solve_gamma_linmix(epsilon: float, k: int, delta: float, c2: float = 2.0, strict: bool = False) -> float:
    """Smallest γ (code units, = C²·γ_normalised) with :func:`epsilon_linmix` ≤ ε (004 §3.5)."""
    check_epsilon(epsilon)
    check_delta(delta)
    k = check_count(k, "k")
    check_positive(c2, "c2")
    return smallest_gamma(lambda g: epsilon_linmix(g, k, delta, c2, strict), epsilon, gamma_floor=c2, what="LinMix ε")


def sigma_ihm(epsilon_half: float, delta: float, T: int, C: float = 1.0) -> float:
    """IHM gradient noise σ = √T·σ_AGM(ε/2, δ/4, C) (exact T-fold Gaussian composition; 004 §3.3, #4)."""
    return sigma_agm_composed(epsilon_half, delta / 4.0, T, C)


# ----------------------------------------------------------------------------------------------------
# Theorem 1 closed forms (upper bounds; 004 §3.3)


def theorem1_gamma(epsilon: float, k: int, T: int, delta: float) -> float:
    """γ = √(kT) / (√(8 log(5/δ)) (−1 + √(1 + ε/(8 log(5/δ)))))."""
    check_epsilon(epsilon)
    check_delta(delta)
    a = 8.0 * math.log(5.0 / delta)
    return math.sqrt(k * T) / (math.sqrt(a) * (math.sqrt(1.0 + epsilon / a) - 1.0))


def theorem1_sigma(epsilon: float, T: int, delta: float, C: float = 1.0) -> float:
    """σ = √T·C / (√(2 log(4/δ)) (−1 + √(1 + ε/(2 log(4/δ)))))."""
    check_epsilon(epsilon)
    check_delta(delta)
    b = 2.0 * math.log(4.0 / delta)
    return math.sqrt(T) * C / (math.sqrt(b) * (math.sqrt(1.0 + epsilon / b) - 1.0))


def theorem1_epsilon_bound(gamma: float, sigma: float, k: int, T: int, delta: float, C: float = 1.0) -> float:
    """Closed-form upper bound on IHM's total ε from which Theorem 1's γ, σ are derived (each half = ε/2).

    Sketch half (Eq. 18 with k → kT, log(4/δ) → log(5/δ)): kT/(2γ²) + 2√(2kT log(5/δ))/γ;
    gradient half (Eq. 38): √(2T log(4/δ))·C/σ + TC²/(2σ²).
    """
    sketch = k * T / (2.0 * gamma**2) + 2.0 * math.sqrt(2.0 * k * T * math.log(5.0 / delta)) / gamma
    gradient = math.sqrt(2.0 * T * math.log(4.0 / delta)) * C / sigma + T * C**2 / (2.0 * sigma**2)
    return sketch + gradient
