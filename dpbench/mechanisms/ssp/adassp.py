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
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dpbench.contract import Bounds, Choice, Hyper
from dpbench.linalg import GramStats, solve_or_lstsq, symmetric_gaussian
from dpbench.mechanisms._base import FitResult, check_inputs, released, resolve_stats, scaled_output
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


def adassp_scales(epsilon: float, delta: float, x_bound: float, y_bound: float, accounting: str) -> tuple[float, float]:
    """(s₁, s₂): each release at (ε/3, δ/3) by the AGM (``paper``), or all three exactly (ε, δ) together (``exact``)."""
    if accounting == "paper":
        third, delta_third = epsilon / 3.0, delta / 3.0
        return sigma_agm(third, delta_third, x_bound**2), sigma_agm(third, delta_third, x_bound * y_bound)
    if accounting == "exact":
        s1, _, s2 = exact_gaussian_sigmas([x_bound**2, x_bound**2, x_bound * y_bound], epsilon, delta)
        return s1, s2
    raise ValueError(f"accounting must be 'paper' or 'exact', got {accounting!r}")


#: black-box audit control ``noise_div10``: every noise std ÷ 10 (σ_AGM is the only calibration)
AUDIT_NOISE_DIV10 = {"sigma_agm": scaled_output(0.1)}


@register_mechanism(
    "adassp",
    summary="AdaSSP: noisy XᵀX, XᵀY and λ_min with an adaptive ridge (Wang 2018; 004 §3.7)",
    privacy_model="central",
    neighbour="zero_out",
    needs=("stats",),
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
        "x_bound": Hyper(float, default=1.0, gt=0, doc="declared bound ‖x_i‖ ≤ x_bound"),
        "y_bound": Hyper(float, default=1.0, gt=0, doc="declared bound |y_i| ≤ y_bound"),
    },
    bounds=Bounds(x="x_bound", y="y_bound"),
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
    X, y = check_inputs(X, y, epsilon, delta, x_bound=x_bound, y_bound=y_bound)
    stats = resolve_stats(X, y, stats)
    d = stats.d
    rho = delta / 10.0 if hyper["rho"] is None else hyper["rho"]
    s1, s2 = adassp_scales(epsilon, delta, x_bound, y_bound, hyper["accounting"])

    lam_release = released(
        "λ_min(XᵀX)", stats.lam_min_x + s1 * rng.standard_normal(), stats.lam_min_x, scale=s1, sensitivity=x_bound**2
    )
    lam_min_private = max(0.0, lam_release - eigenvalue_shift(s1, delta, hyper["shift"]))
    ridge = max(0.0, np.sqrt(d * np.log(2.0 * d**2 / rho)) * s1 - lam_min_private)
    xtx_noisy = released(
        "XᵀX", stats.xtx + s1 * symmetric_gaussian(d, rng), stats.xtx, scale=s1, sensitivity=x_bound**2, symmetric=True
    )
    xty_noisy = released("XᵀY", stats.xty + s2 * rng.standard_normal(d), stats.xty, scale=s2,
                         sensitivity=x_bound * y_bound)  # fmt: skip
    theta = solve_or_lstsq(xtx_noisy + ridge * np.eye(d), xty_noisy)
    return FitResult(theta, {"s1": s1, "s2": s2, "ridge": ridge, "lam_min_private": lam_min_private})
