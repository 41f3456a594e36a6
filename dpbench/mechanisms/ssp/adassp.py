"""AdaSSP — adaptive sufficient-statistics perturbation (Wang 2018), as run in the IHM paper (004 §3.7).

Privacy model: central (ε, δ)-DP, zero-out neighbours, rows with ‖x_i‖ ≤ x_bound and |y_i| ≤ y_bound
(data-independent bounds guaranteed by the benchmark's preprocessing). Three Gaussian releases, each
(ε/3, δ/3)-DP by the analytic Gaussian mechanism, composed basically:

* λ_min(XᵀX), sensitivity x_bound²:         λ̃_min = max{0, λ_min + s₁ z − shift},  z ~ N(0, 1)
* XᵀX (upper triangle), sensitivity x_bound²:  XᵀX~ = XᵀX + s₁ N_sym(0, I_d)
* XᵀY, sensitivity x_bound·y_bound:            XᵀY~ = XᵀY + s₂ ζ,  ζ ~ N(0, I_d)

with s₁ = σ_AGM(ε/3, δ/3, x_bound²), s₂ = σ_AGM(ε/3, δ/3, x_bound·y_bound); ridge
λ̂ = max{0, √(d log(2d²/ϱ)) s₁ − λ̃_min} and θ̂ = (XᵀX~ + λ̂ I)⁻¹ XᵀY~. ``shift="code"`` (default, the figures'
code) uses shift = s₁²; ``shift="paper"`` uses Algorithm 6's s₁·√(2 log(6/δ)) (ambiguity #6).

Basic composition of the three (ε/3, δ/3) releases spends less than ε (exactly: 1.13 at ε = 2, δ = 1e-5, as the
releases are jointly √3·(1/s₁)-GDP). ``accounting="exact"`` (not the paper's; reproductions keep ``paper``) gives
every release the same μ with s_i = Δ_i·√3/μ*(ε, δ), so the tuple is exactly (ε, δ)-DP
(:func:`dpbench.privacy.exact.exact_gaussian_sigmas`).

``constants="wang"`` is Wang's own ``adassp.m`` (spec 005 §2a "AdaSSP as coded", the constants of his UAI 2018
experiment; ``rho``, ``shift`` and ``accounting`` are then unused): σ = √log(6/δ)/(ε/3) on each release (sensitivity 1,
the bounds fixed at 1), ϱ = 0.05, XᵀX + I in place of XᵀX, λ̃_min = max(0, λ_min(XᵀX + I) + σz − log(6/δ)/(ε/3)),
λ = max(0, √(d log(6/δ) log(2d²/ϱ))/(ε/3) − λ̃_min), and the symmetric noise σ·½(Z + Zᵀ) on XᵀX (diagonal variance
σ², off-diagonal σ²/2). It spends less than the claim: exactly 0.051 / 0.596 / 7.57 at claimed 0.1 / 1 / 10,
δ = 1e-6 (005 §11), recorded as ``info.epsilon_spent``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from dpbench.contract import Bounds, Choice, Hyper, HyperError
from dpbench.linalg import GramStats, solve_or_lstsq, symmetric_gaussian
from dpbench.mechanisms._base import CENTRAL_GRAM, FitResult, checked_stats, released, scaled_output
from dpbench.mechanisms.ssp.calibration import (
    WANG_RHO,
    wang_adassp_epsilon,
    wang_adassp_ridge_scale,
    wang_adassp_sigma,
)
from dpbench.privacy.agm import sigma_agm
from dpbench.privacy.exact import exact_gaussian_sigmas
from dpbench.registry import register_mechanism


def eigenvalue_shift(s1: float, delta: float, shift: str) -> float:
    """Deterministic downward shift of the private λ_min (004 §3.7, ambiguity #6)."""
    if shift == "code":
        return s1**2
    if shift == "paper":
        return s1 * np.sqrt(2.0 * np.log(6.0 / delta))
    raise ValueError(f"shift must be 'code' or 'paper', got {shift!r}")


@dataclass(frozen=True)
class AdaSSPReleases:
    """AdaSSP's three releases (λ̃_min, XᵀX~, XᵀY~), the ridge and the estimate they give."""

    lam_min_private: float
    ridge: float
    xtx: np.ndarray
    xty: np.ndarray
    theta: np.ndarray


def adassp_releases(
    stats: GramStats,
    s1: float,
    s2: float,
    shift: float,
    rho: float,
    x_bound: float,
    y_bound: float,
    rng: np.random.Generator,
) -> AdaSSPReleases:
    """AdaSSP's releases in their draw order (004 §3.7): λ̃ = λ_min(XᵀX) + s₁z (sensitivity x_bound²),
    λ̃_min = max(0, λ̃ − ``shift``), ridge = max(0, √(d log(2d²/ϱ))·s₁ − λ̃_min); XᵀX~ = XᵀX + s₁·Sym (x_bound²);
    XᵀY~ = XᵀY + s₂z (x_bound·y_bound); θ̃ = (XᵀX~ + ridge·I)⁻¹XᵀY~. Shared by ``adassp`` and ``adassp_pboot``."""
    d = stats.d
    lam_release = released(
        "λ_min(XᵀX)", stats.lam_min_x + s1 * rng.standard_normal(), stats.lam_min_x, scale=s1, sensitivity=x_bound**2
    )
    lam_min_private = max(0.0, lam_release - shift)
    ridge = max(0.0, np.sqrt(d * np.log(2.0 * d**2 / rho)) * s1 - lam_min_private)
    xtx = released(
        "XᵀX", stats.xtx + s1 * symmetric_gaussian(d, rng), stats.xtx, scale=s1, sensitivity=x_bound**2, symmetric=True
    )
    xty = released("XᵀY", stats.xty + s2 * rng.standard_normal(d), stats.xty, scale=s2, sensitivity=x_bound * y_bound)
    theta = solve_or_lstsq(xtx + ridge * np.eye(d), xty)
    return AdaSSPReleases(lam_min_private, ridge, xtx, xty, theta)


def adassp_scales(epsilon: float, delta: float, x_bound: float, y_bound: float, accounting: str) -> tuple[float, float]:
    """(s₁, s₂): each release at (ε/3, δ/3) by the AGM (``paper``), or all three exactly (ε, δ) together (``exact``)."""
    if accounting == "paper":
        third, delta_third = epsilon / 3.0, delta / 3.0
        return sigma_agm(third, delta_third, x_bound**2), sigma_agm(third, delta_third, x_bound * y_bound)
    if accounting == "exact":
        s1, _, s2 = exact_gaussian_sigmas([x_bound**2, x_bound**2, x_bound * y_bound], epsilon, delta)
        return s1, s2
    raise ValueError(f"accounting must be 'paper' or 'exact', got {accounting!r}")


def half_symmetric_gaussian(d: int, rng: np.random.Generator) -> np.ndarray:
    """½(Z + Zᵀ), Z ~ N(0, I_{d×d}): diagonal variance 1, off-diagonal ½ (Wang's ``adassp.m`` noise on XᵀX)."""
    z = rng.standard_normal((d, d))
    return (z + z.T) / 2.0


def offdiagonal_scale(d: int) -> np.ndarray:
    """S with 1 on the diagonal and √2 off it: S∘(½(Z + Zᵀ)) has iid N(0, 1) upper-triangle entries and
    ‖S∘xxᵀ‖ over the upper triangle is ‖x‖², so S∘XᵀX~ is a symmetric Gaussian release of sensitivity ‖x‖² ≤ 1."""
    return np.full((d, d), np.sqrt(2.0)) + (1.0 - np.sqrt(2.0)) * np.eye(d)


def fit_wang(stats: GramStats, epsilon: float, delta: float, rng: np.random.Generator) -> FitResult:
    """Wang's ``adassp.m`` (module docstring, ``constants="wang"``)."""
    d = stats.d
    sigma = wang_adassp_sigma(epsilon, delta)
    lam_release = released("λ_min(XᵀX)", stats.lam_min_x + sigma * rng.standard_normal(), stats.lam_min_x,
                           scale=sigma, sensitivity=1.0)  # fmt: skip
    lam_min_private = max(0.0, lam_release + 1.0 - np.log(6.0 / delta) / (epsilon / 3.0))
    ridge = max(0.0, wang_adassp_ridge_scale(epsilon, delta, d, WANG_RHO) - lam_min_private)
    xty_noisy = released("XᵀY", stats.xty + sigma * rng.standard_normal(d), stats.xty, scale=sigma, sensitivity=1.0)
    scale = offdiagonal_scale(d)
    xtx_scaled = released("S∘XᵀX", scale * (stats.xtx + sigma * half_symmetric_gaussian(d, rng)),
                          lambda: scale * stats.xtx, scale=sigma, sensitivity=1.0, symmetric=True)  # fmt: skip
    theta = solve_or_lstsq(xtx_scaled / scale + (1.0 + ridge) * np.eye(d), xty_noisy)
    info = {"s1": sigma, "s2": sigma, "ridge": ridge, "lam_min_private": lam_min_private,
            "epsilon_spent": wang_adassp_epsilon(epsilon, delta)}  # fmt: skip
    return FitResult(theta, info)


#: black-box audit control ``noise_div10``: every noise std ÷ 10 (σ_AGM is the only calibration)
AUDIT_NOISE_DIV10 = {"sigma_agm": scaled_output(0.1)}


def _check_wang_bounds(hyper: dict[str, Any]) -> None:
    """Wang's constants fix B_x = B_y = 1."""
    if hyper["constants"] == "wang" and (hyper["x_bound"] != 1.0 or hyper["y_bound"] != 1.0):
        raise HyperError("constants", "'wang' fixes x_bound = y_bound = 1 (adassp.m's BX = BY = 1)")


@register_mechanism(
    "adassp",
    summary="AdaSSP: noisy XᵀX, XᵀY and λ_min with an adaptive ridge (Wang 2018; 004 §3.7)",
    **CENTRAL_GRAM,
    spec="004 §3.7",
    style={"color": "tab:blue", "marker": "*", "linestyle": "-"},
    hyper={
        "rho": Hyper(float, default=None, gt=0, lt=1, none="δ/10", doc="failure probability ϱ of the ridge rule"),
        "shift": Choice(
            "code", "paper", default="code", doc="λ_min shift: s₁² (figures' code) or Alg. 6's s₁√(2 log(6/δ))"
        ),
        "accounting": Choice(
            "paper", "exact", default="paper", doc="three (ε/3, δ/3) releases (paper) or exactly (ε, δ) together"
        ),
        "constants": Choice(
            "ihm_paper",
            "wang",
            default="ihm_paper",
            doc="the IHM paper's AdaSSP (004 §3.7) or Wang's adassp.m (005 §2a)",
        ),
        "x_bound": Hyper(float, default=1.0, gt=0, doc="declared bound ‖x_i‖ ≤ x_bound"),
        "y_bound": Hyper(float, default=1.0, gt=0, doc="declared bound |y_i| ≤ y_bound"),
    },
    bounds=Bounds(x="x_bound", y="y_bound"),
    check=_check_wang_bounds,
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
    """AdaSSP estimate; ``rho`` is the failure probability ϱ (default δ/10); ``accounting`` see module docstring."""
    x_bound, y_bound = hyper["x_bound"], hyper["y_bound"]
    X, y, stats = checked_stats(X, y, epsilon, delta, stats, x_bound=x_bound, y_bound=y_bound)
    if hyper["constants"] == "wang":
        return fit_wang(stats, epsilon, delta, rng)
    rho = delta / 10.0 if hyper["rho"] is None else hyper["rho"]
    s1, s2 = adassp_scales(epsilon, delta, x_bound, y_bound, hyper["accounting"])
    shift = eigenvalue_shift(s1, delta, hyper["shift"])
    r = adassp_releases(stats, s1, s2, shift, rho, x_bound, y_bound, rng)
    return FitResult(r.theta, {"s1": s1, "s2": s2, "ridge": r.ridge, "lam_min_private": r.lam_min_private})
