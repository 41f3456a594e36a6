"""Zero-concentrated DP (Bun & Steinke 2016; spec 004 §2.4) and the DP-GD noise calibration (004 §3.9).

ρ-zCDP ⇒ (ρ + 2√(ρ log(1/δ)), δ)-DP; inverting, ρ(ε, δ) = (√(ε + log(1/δ)) − √(log(1/δ)))².
"""

from __future__ import annotations

import math

from dpbench.privacy.validate import check_count, check_delta, check_epsilon, check_positive


def epsilon_from_rho(rho: float, delta: float) -> float:
    """ε of the (ε, δ)-DP guarantee implied by ρ-zCDP: ρ + 2√(ρ log(1/δ))."""
    rho = check_positive(rho, "rho")
    delta = check_delta(delta)
    return rho + 2.0 * math.sqrt(rho * math.log(1.0 / delta))


def rho_from_epsilon(epsilon: float, delta: float) -> float:
    """Largest ρ whose zCDP guarantee implies (ε, δ)-DP: (√(ε + log 1/δ) − √(log 1/δ))²."""
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    log_inv = math.log(1.0 / delta)
    # √(a+ε) − √a written without cancellation
    return (epsilon / (math.sqrt(log_inv + epsilon) + math.sqrt(log_inv))) ** 2


def rho_gaussian(sigma: float, sensitivity: float = 1.0) -> float:
    """ρ of one Gaussian release with std σ and ℓ2-sensitivity Δ: Δ²/(2σ²)."""
    return check_positive(sensitivity, "sensitivity") ** 2 / (2.0 * check_positive(sigma, "sigma") ** 2)


def sigma_dpgd(epsilon: float, delta: float, n: int, steps: int, clip: float = 1.0) -> float:
    """DP-GD noise std (004 §3.9, Eq. 157): σ² = 2 T C² / (n² ρ(ε, δ)).

    Each step releases the mean clipped gradient with replace-one sensitivity 2C/n plus N(0, σ²I); T steps
    compose to ρ = T (2C/n)²/(2σ²) = 2TC²/(n²σ²) = ρ(ε, δ).
    """
    n = check_count(n, "n")
    steps = check_count(steps, "T")
    clip = check_positive(clip, "C")
    return math.sqrt(2.0 * steps * clip**2 / (n**2 * rho_from_epsilon(epsilon, delta)))
