"""AdaOPS — adaptive one posterior sample (Wang 2018 ``adaops.m``, the paper's Alg. 2; spec 005 §2a steps 1–10).

Privacy model: central (ε, δ)-DP, zero-out (add/remove) neighbours, ‖x_i‖ ≤ 1, |y_i| ≤ 1. Budget ε/4 for λ_min,
ε/4 for the local Lipschitz bound, ε/2 for the posterior sample; δ/3 each; ℓ = log(6/δ):

1. λ̃_min = max(0, λ_min(XᵀX + I) + (√ℓ/(ε/4))·N(0, 1) − ℓ/(ε/4)).
2. λ_target = max(0, 2(1 + ℓ)/ε − λ̃_min).
3.–5. λ = argmin_{t ≥ λ_target} C1 (1 + 1/(t + λ̃_min))^{2 C2}/(t + λ̃_min) + t with C1 at ε̄, δ/3 and
   C2 = log(2/(δ/3))/(ε/4) (:func:`~dpbench.mechanisms.ssp.calibration.adaops_ridge`, bounded Brent).
6. H = XᵀX + I + λI = RᵀR, θ_λ = H⁻¹XᵀY.
7. Δ̃ = log(1 + ‖θ_λ‖) + s√ℓ·N(0, 1) + sℓ with s = log(1 + 1/h)/(ε/4), h = λ + λ̃_min.
8. L = min(e^Δ̃, 1 + √(2√n/h)) (n treated as public, as in the code).
9. √γ = positive root of the OPS quadratic at ε/2, δ/3 (:func:`~dpbench.mechanisms.ssp.calibration.adaops_sqrt_gamma`).
10. θ̂ = θ_λ + R⁻¹z/√γ ~ N(θ_λ, (γH)⁻¹) (:func:`dpbench.mechanisms.ssp.ops.posterior_sample`).

The draws come in adaops.m's order: λ_min's noise, the log-norm's, the sample's.

Three releases are declared (:func:`released`), so ``dpbench audit adaops`` is white-box: the noisy
λ_min(XᵀX + I) (Gaussian, sensitivity 1; the offset −ℓ/(ε/4) and the max are post-processing), the noisy
log(1 + ‖θ_λ‖) (Gaussian, std s√ℓ; the offset sℓ and the cap are post-processing) and the posterior sample
(``posterior``: N(θ_λ, H⁻¹/γ), :func:`dpbench.mechanisms.ssp.ops.posterior_sample`). Their declared sensitivities
are the deterministic bounds of zero-out neighbours at the history's λ: λ_min(H) ≥ 1 + λ gives
‖θ_D − θ_D′‖ ≤ (1 + ‖θ‖)/(1 + λ), so log(1 + 1/(1 + λ)) for the log-norm, and ‖θ_λ‖ ≤ min(√(n/(1 + λ)), n/(1 + λ))
gives L = 1 + that bound for the sample's gradient. The calibration itself uses the private, high-probability
versions (h = λ + λ̃_min, L = min(e^Δ̃, 1 + √(2√n/h))), whose failure the theorem charges to δ; the audit's exact
ε at the pair is computed from the real laws, so a too-small L there shows in it.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from dpbench.contract import Bounds
from dpbench.linalg import GramStats
from dpbench.mechanisms._base import CENTRAL_GRAM, FitResult, checked_stats, released
from dpbench.mechanisms.ssp.calibration import adaops_epsilon_bar, adaops_ridge, adaops_sqrt_gamma, ops_c1
from dpbench.mechanisms.ssp.ops import posterior_sample, ridge_solution
from dpbench.registry import register_mechanism


def private_lam_min(lam_min: float, epsilon: float, delta: float, rng: np.random.Generator) -> float:
    """Step 1: λ̃_min = max(0, λ_min(XᵀX + I) + (√ℓ/(ε/4))·z − ℓ/(ε/4)), ℓ = log(6/δ) (sensitivity 1; the noisy
    value is the release, the offset and the max post-processing)."""
    ell = math.log(6.0 / delta)
    scale = math.sqrt(ell) / (epsilon / 4.0)
    noisy = released("λ_min(XᵀX + I)", lam_min + scale * rng.standard_normal(), lam_min, scale=scale, sensitivity=1.0)
    return max(0.0, noisy - ell / (epsilon / 4.0))


def private_lipschitz(
    theta_norm: float, h: float, n: int, epsilon: float, delta: float, rng: np.random.Generator, ridge: float = 0.0
) -> float:
    """Steps 7–8: L = min(exp(log(1 + ‖θ‖) + s√ℓ z + sℓ), 1 + √(2√n/h)), s = log(1 + 1/h)/(ε/4); the release is
    log(1 + ‖θ‖) + s√ℓ z, of zero-out sensitivity log(1 + 1/(1 + ``ridge``)) (module docstring)."""
    ell = math.log(6.0 / delta)
    s = math.log1p(1.0 / h) / (epsilon / 4.0)
    centre = math.log1p(theta_norm)
    noisy = released("log(1 + ‖θ_λ‖)", centre + s * math.sqrt(ell) * rng.standard_normal(), centre,
                     scale=s * math.sqrt(ell), sensitivity=math.log1p(1.0 / (1.0 + ridge)))  # fmt: skip
    log_norm = noisy + s * ell
    cap = 1.0 + math.sqrt(2.0 * math.sqrt(n) / h)
    return cap if log_norm >= math.log(cap) else math.exp(log_norm)


def lipschitz_bound(n: int, ridge: float) -> float:
    """1 + max ‖θ_λ‖ over data with ‖x_i‖, |y_i| ≤ 1: ‖θ_λ‖ ≤ min(√(n/(1 + λ)), n/(1 + λ)) (the ridge objective at
    θ_λ is at most ½‖Y‖² ≤ n/2; ‖XᵀY‖ ≤ n over λ_min(H) ≥ 1 + λ): the declared sensitivity of the sample."""
    return 1.0 + min(math.sqrt(n / (1.0 + ridge)), n / (1.0 + ridge))


@register_mechanism(
    "adaops",
    summary="AdaOPS: one posterior sample with a private adaptive ridge (Wang 2018; 005 §2a)",
    **CENTRAL_GRAM,
    spec="005 §2a",
    style={"color": "tab:blue", "marker": "o", "linestyle": "-"},
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
    """AdaOPS estimate (module docstring, steps 1–10)."""
    X, y, stats = checked_stats(X, y, epsilon, delta, stats)
    ell = math.log(6.0 / delta)
    lam_min = private_lam_min(stats.lam_min_x + 1.0, epsilon, delta, rng)
    lam_target = max(0.0, 2.0 * (1.0 + ell) / epsilon - lam_min)
    c1 = ops_c1(adaops_epsilon_bar(epsilon, delta), delta / 3.0, stats.d)
    c2 = math.log(2.0 / (delta / 3.0)) / (epsilon / 4.0)
    ridge = adaops_ridge(lam_target, lam_min, c1, c2)
    h = ridge.value + lam_min
    upper, theta = ridge_solution(stats, ridge.value)
    lipschitz = private_lipschitz(float(np.linalg.norm(theta)), h, stats.n, epsilon, delta, rng, ridge.value)
    sqrt_gamma = adaops_sqrt_gamma(epsilon, delta, lipschitz, h)
    theta_hat = posterior_sample(upper, theta, sqrt_gamma, rng, lipschitz_bound(stats.n, ridge.value))
    info = {"ridge": ridge.value, "ridge_outcome": ridge.outcome, "lam_min_private": lam_min,
            "lipschitz": lipschitz, "sqrt_gamma": sqrt_gamma}  # fmt: skip
    return FitResult(theta_hat, info)
