"""Calibrations of the SSP family's Wang (UAI 2018) companions and of objective perturbation (spec 005 §2a, §6, §11).

Pure functions, B_x = B_y = 1 (dpbench's preprocessing), add/remove (= zero-out) neighbours throughout:

* Wang's code constants (``yuxiangw/optimal_dp_linear_regression``, 005 §2a), and the exact ε they really spend
  (Dong–Roth–Su GDP composition, :mod:`dpbench.privacy.exact`): SSP σ = √log(4/δ)/ε on each of two releases
  (exact ε 0.134 / 1.587 / 23.2 at claimed 0.1 / 1 / 10, δ = 1e-6: over the claim); AdaSSP σ = √log(6/δ)/(ε/3) on
  each of three (0.051 / 0.596 / 7.57: under it).
* One-posterior-sample (OPS) constants: C1, C2, ε̄, the AdaOPS ridge from its 1-D minimisation, √γ from the
  quadratic of the OPS theorem, and OPS-balanced's λ and √γ.
* Objective perturbation: Kifer–Smith–Thakurta 2012 (Gaussian variant) at zero-out neighbours, Wang's ObjPert.m
  constants, and the AMP constants of Iyengar et al. 2019 (for their test vector; no mechanism uses them yet).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

from scipy.optimize import minimize_scalar

from dpbench.privacy.exact import GaussianRelease, exact_epsilon
from dpbench.privacy.validate import check_delta, check_epsilon

#: Wang's failure probability ϱ of the OPS/AdaSSP high-probability bounds (his code's ``varrho``)
WANG_RHO = 0.05


# ----------------------------------------------------------------------------------------------------------------
# Wang's SSP and AdaSSP constants, and what they spend


def wang_ssp_sigma(epsilon: float, delta: float) -> float:
    """σ = √log(4/δ)/ε, the noise std of each of Wang's two SSP releases (``suffstats_perturb.m``, 005 §2a)."""
    return math.sqrt(math.log(4.0 / check_delta(delta))) / check_epsilon(epsilon)


@functools.lru_cache(maxsize=256)
def wang_ssp_epsilon(epsilon: float, delta: float) -> float:
    """Exact ε of Wang's SSP at claimed (ε, δ): two Gaussian releases (XᵀX + I with a full d×d noise, Frobenius
    sensitivity ‖xxᵀ‖_F ≤ 1; XᵀY, sensitivity 1), each at σ = √log(4/δ)/ε, jointly √2/σ-GDP (005 §11)."""
    sigma = wang_ssp_sigma(epsilon, delta)
    return exact_epsilon([GaussianRelease(1.0, sigma)] * 2, delta)


def wang_adassp_sigma(epsilon: float, delta: float) -> float:
    """σ = √log(6/δ)/(ε/3), the noise std of each of Wang's three AdaSSP releases (``adassp.m``, 005 §2a)."""
    return math.sqrt(math.log(6.0 / check_delta(delta))) / (check_epsilon(epsilon) / 3.0)


@functools.lru_cache(maxsize=256)
def wang_adassp_epsilon(epsilon: float, delta: float) -> float:
    """Exact ε of Wang's AdaSSP at claimed (ε, δ): three releases of sensitivity 1 at σ = √log(6/δ)/(ε/3) (005 §11)."""
    sigma = wang_adassp_sigma(epsilon, delta)
    return exact_epsilon([GaussianRelease(1.0, sigma)] * 3, delta)


def wang_adassp_ridge_scale(epsilon: float, delta: float, d: int, rho: float = WANG_RHO) -> float:
    """η = √(d·log(6/δ)·log(2d²/ϱ))/(ε/3): Wang's AdaSSP ridge target before subtracting λ̃_min (005 §2a)."""
    return math.sqrt(d * math.log(6.0 / delta) * math.log(2.0 * d * d / rho)) / (epsilon / 3.0)


# ----------------------------------------------------------------------------------------------------------------
# one posterior sample (OPS, AdaOPS)


def positive_root(a: float, b: float, c: float) -> float:
    """The positive root of a u² + b u + c = 0 for a > 0, b ≥ 0, c < 0, in the cancellation-free form
    2(−c)/(b + √(b² − 4ac)) (= (−b + √(b² − 4ac))/(2a))."""
    if not (a > 0 and b >= 0 and c < 0):
        raise ValueError(f"need a > 0, b ≥ 0, c < 0 for one positive root, got a={a!r}, b={b!r}, c={c!r}")
    return 2.0 * (-c) / (b + math.sqrt(b * b - 4.0 * a * c))


def ops_c1(epsilon: float, delta: float, d: int, rho: float = WANG_RHO) -> float:
    """C1 = (d/2 + √(d log(1/ϱ)) + log(1/ϱ))·log(2/δ)/ε² (Wang's ``C1_fun``, 005 §2a step 4)."""
    log_rho = math.log(1.0 / rho)
    return (d / 2.0 + math.sqrt(d * log_rho) + log_rho) * math.log(2.0 / delta) / epsilon**2


def adaops_epsilon_bar(epsilon: float, delta: float) -> float:
    """ε̄ = positive root of (ℓ/2) ε̄² + ε̄ − ε/4 = 0, ℓ = log(6/δ) (005 §2a step 3)."""
    return positive_root(math.log(6.0 / delta) / 2.0, 1.0, -epsilon / 4.0)


def adaops_objective(t: float, lam_min: float, c1: float, c2: float) -> float:
    """f(t) = C1 (1 + 1/h)^{2 C2} / h + t with h = t + λ̃_min (005 §2a step 5), evaluated in log space."""
    h = t + lam_min
    return math.exp(math.log(c1) + 2.0 * c2 * math.log1p(1.0 / h) - math.log(h)) + t


@dataclass(frozen=True)
class Ridge:
    """The AdaOPS ridge λ and how it was found (``outcome``: "interior" or "boundary", evaluations)."""

    value: float
    outcome: str
    evaluations: int


def adaops_ridge(lam_target: float, lam_min: float, c1: float, c2: float, xtol: float = 1e-10) -> Ridge:
    """λ = argmin_{t ≥ λ_target} f(t) (005 §2a step 5) by bounded Brent (scipy ``minimize_scalar``).

    The minimiser t* satisfies t* ≤ f(t*) ≤ f(λ_target) (f(t) ≥ t), so [λ_target, f(λ_target)] brackets it; the
    left end is compared explicitly (bounded Brent never evaluates the ends). Needs λ_target + λ̃_min > 0.
    """
    if not lam_target + lam_min > 0:
        raise ValueError(f"need λ_target + λ̃_min > 0, got {lam_target!r} + {lam_min!r}")
    f_left = adaops_objective(lam_target, lam_min, c1, c2)
    upper = max(f_left, lam_target * (1 + 1e-12) + 1e-12)
    res = minimize_scalar(
        adaops_objective, bounds=(lam_target, upper), args=(lam_min, c1, c2), method="bounded",
        options={"xatol": xtol * max(1.0, upper)},
    )  # fmt: skip
    if res.fun < f_left:
        return Ridge(float(res.x), "interior", int(res.nfev))
    return Ridge(float(lam_target), "boundary", int(res.nfev) + 1)


def adaops_sqrt_gamma(epsilon: float, delta: float, lipschitz: float, h: float) -> float:
    """√γ of AdaOPS's OPS step at ε/2, δ/3 (005 §2a step 9): the positive root of a u² + b u + c with
    a = L²/(2(h + 1)), b = L√(ℓ/h), c = (1 + ℓ)/(2h) − ε/2, ℓ = log(6/δ), h = λ + λ̃_min."""
    ell = math.log(6.0 / delta)
    return positive_root(
        lipschitz**2 / (2.0 * (h + 1.0)), lipschitz * math.sqrt(ell / h), (1.0 + ell) / (2.0 * h) - epsilon / 2.0
    )


@dataclass(frozen=True)
class OpsBalanced:
    """OPS-balanced's ridge λ, Lipschitz bound L and √γ (``OPS_epsdelta_balanced.m``, 005 §2a)."""

    ridge: float
    lipschitz: float
    sqrt_gamma: float


def ops_balanced(
    epsilon: float, delta: float, n: int, d: int, rho: float = WANG_RHO, theta_bound: float = 1.0
) -> OpsBalanced:
    """λ = max((C1 n/(2‖θ*‖²))^{1/3}, (1 + log(2/δ))/ε), C1 at ε' = min(ε/2, √(ε/2)); θ-bound = min(√n/√(2λ), n/λ);
    L = θ-bound + 1; √γ = positive root of a u² + b u + c with a = L²/(λ + 1), b = L√(log(2/δ)/λ),
    c = (1 + log(2/δ))/(2λ) − ε (< 0 by the choice of λ). n is treated as public, as in the code (005 §2a)."""
    c1 = ops_c1(min(epsilon / 2.0, math.sqrt(epsilon / 2.0)), delta, d, rho)
    log2d = math.log(2.0 / delta)
    ridge = max((c1 * n / 2.0 / theta_bound**2) ** (1.0 / 3.0), (1.0 + log2d) / epsilon)
    bound = min(math.sqrt(n) / math.sqrt(2.0 * ridge), n / ridge)
    lipschitz = bound + 1.0
    root = positive_root(
        lipschitz**2 / (ridge + 1.0), lipschitz * math.sqrt(log2d / ridge), (1.0 + log2d) / (2.0 * ridge) - epsilon
    )
    return OpsBalanced(ridge, lipschitz, root)


# ----------------------------------------------------------------------------------------------------------------
# objective perturbation


def kst_sigma(epsilon: float, delta: float, lipschitz: float) -> float:
    """Std of KST's linear-term noise b at zero-out neighbours: ζ√(8 log(2/δ) + 4ε)/ε is KST 2012's (Gaussian
    variant) for a replace-one gradient change 2ζ; a zero-out change is ζ = L, half of it, so
    σ_b = L√(8 log(2/δ) + 4ε)/(2ε) (005 §6; the halving Wang's ObjPert.m comment describes)."""
    return lipschitz * math.sqrt(8.0 * math.log(2.0 / delta) + 4.0 * epsilon) / (2.0 * epsilon)


def kst_ridge(epsilon: float, smoothness: float, rank: int = 1) -> float:
    """KST's regulariser Δ = 2rβ/ε (rank-r Hessian of each loss term, eigenvalues ≤ β): the Jacobian ratio of the
    map b ↦ θ̂ is then ≤ (1 + β/Δ)^r ≤ e^{ε/2} (005 §6)."""
    return 2.0 * rank * smoothness / epsilon


def wang_objpert_sigma(epsilon: float, delta: float, lipschitz: float = 2.0) -> float:
    """ObjPert.m's std(b) = L√(4 log(2/δ) + 2ε)/ε² with L = 2 (the ε² is the code's; 005 §2a, §6): 14.2582 at
    ε = 1, δ = 1e-5."""
    return lipschitz * math.sqrt(4.0 * math.log(2.0 / delta) + 2.0 * epsilon) / epsilon**2


def wang_objpert_ridge(epsilon: float) -> float:
    """ObjPert.m's H = XᵀX + I + (Λ/ε − 1)I with Λ = 2/ε: the ridge added to XᵀX is 2/ε² (005 §2a)."""
    return 1.0 + (2.0 / epsilon) / epsilon - 1.0


@dataclass(frozen=True)
class AmpConstants:
    """Approximate minima perturbation (Iyengar et al. 2019) as coded in dpml-benchmark (005 §6)."""

    epsilon_p: float
    ridge: float
    sigma_obj: float
    sigma_out: float


def amp_constants(
    epsilon: float, delta: float, n: int, lipschitz: float, smoothness: float, rank: int = 2
) -> AmpConstants:
    """ε_out = 0.01ε, ε_obj = ε − ε_out, ε_p = 0.9 ε_obj, δ_out = 0.01δ, δ_obj = δ − δ_out; Λ = rβ/(ε_obj − ε_p);
    σ_obj = (2L/n)(1 + √(2 log(1/δ_obj)))/ε_p; σ_out = (nγ/Λ)(1 + √(2 log(1/δ_out)))/ε_out with γ = 1/n² (005 §6)."""
    eps_out = 0.01 * epsilon
    eps_obj = epsilon - eps_out
    eps_p = 0.9 * eps_obj
    delta_out = 0.01 * delta
    delta_obj = delta - delta_out
    ridge = rank * smoothness / (eps_obj - eps_p)
    sigma_obj = (2.0 * lipschitz / n) * (1.0 + math.sqrt(2.0 * math.log(1.0 / delta_obj))) / eps_p
    sigma_out = (n / n**2 / ridge) * (1.0 + math.sqrt(2.0 * math.log(1.0 / delta_out))) / eps_out
    return AmpConstants(eps_p, ridge, sigma_obj, sigma_out)
