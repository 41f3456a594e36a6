"""IHM — Iterative Hessian Mixing (Lev, Shenfeld, Srinivasan, Ligett, Wilson; 004 §3.3, experimental version).

Privacy model: central (ε, δ)-DP, zero-out neighbours, ‖x_i‖ ≤ 1 (data-independent bound from the benchmark's
preprocessing); labels need no bound because residuals are clipped at C. Accounting (Theorem 1, App. C.1.1):
half the budget (ε/2, 3δ/4) for one private λ_min release + T Gaussian-mixing sketches (RDP, Eq. 42), half
(ε/2, δ/4) for T Gaussian gradient releases of sensitivity C (exact composition: σ = √T·σ_AGM(ε/2, δ/4, C)).

One trial (T = 3, C = 1, k = max{⌊6d⌋, ⌊6 log(4T/ϱ)⌋}, ϱ = δ/10, τ = √(2 log max{4/δ, 4/ϱ})):

    λ̃ = max{0, λ_min(XᵀX) − (γ/√k)(τ − z)},   η = √max{0, γ − λ̃}            (once per trial)
    for t < T:  H_t = (S_t X + η ξ_t)ᵀ(S_t X + η ξ_t)/k                      (Wishart_d(k, XᵀX + η² I)/k)
                G_t = Xᵀ clip_C(Y − X θ_t) [− η² θ_t] + σ ζ_t
                θ_{t+1} = θ_t + H_t⁻¹ G_t

The −η²θ_t term is omitted by default as in the paper's experiments (``keep_eta_term=True`` restores Alg. 1).
``calibration="theorem1"`` uses Theorem 1's closed-form γ, σ (upper bounds) instead of the exact numerical ones.
With η = σ = 0 and C = ∞ the iteration is the (non-private) Iterative Hessian Sketch: see :func:`ihs`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dpbench.contract import SATURATING_LABEL, AuditSetup, Bounds, Choice, Hyper
from dpbench.linalg import GramStats, explicit_sketch, psd_factor, wishart
from dpbench.mechanisms._base import CENTRAL_GRAM, FitResult, checked_stats, released, resolve_stats
from dpbench.mechanisms.sketch.calibration import (
    k_ihm,
    sigma_ihm,
    solve_gamma_ihm,
    tau_ihm,
    theorem1_gamma,
    theorem1_sigma,
)
from dpbench.mechanisms.sketch.linmix import EXPLICIT, SKETCH, private_mixing_noise
from dpbench.registry import register_mechanism


def ihm_noise_scales(epsilon: float, delta: float, k: int, T: int, C: float, calibration: str) -> tuple[float, float]:
    """(γ, σ) of IHM for total budget (ε, δ): exact numerical (default) or Theorem 1's closed forms."""
    if calibration == "numerical":
        return solve_gamma_ihm(epsilon / 2.0, k, delta, T), sigma_ihm(epsilon / 2.0, delta, T, C)
    if calibration == "theorem1":
        return theorem1_gamma(epsilon, k, T, delta), theorem1_sigma(epsilon, T, delta, C)
    raise ValueError(f"calibration must be 'numerical' or 'theorem1', got {calibration!r}")


def hessian_sampler(X: np.ndarray, stats: GramStats, eta: float, k: int, sketch: str, rng: np.random.Generator):
    """Return a function drawing H = (S X + η ξ)ᵀ(S X + η ξ)/k, by the Wishart shortcut or explicitly."""
    if sketch == "gram":
        factor = psd_factor(*stats.eigh_x, shift=eta**2)
        return lambda: released("Hessian sketch", wishart(k, factor, rng) / k, lambda: factor.T @ factor,
                                kind="wishart", scale=0.0, k=k, unit=1.0 / k, ridge=eta**2)  # fmt: skip

    def explicit() -> np.ndarray:
        mixed = explicit_sketch(k, X, eta, rng)
        return mixed.T @ mixed / k

    return explicit


def ihs_iterations(
    X: np.ndarray,
    y: np.ndarray,
    draw_hessian,
    T: int,
    C: float,
    sigma: float,
    eta_sq_term: float,
    rng: np.random.Generator,
) -> tuple[np.ndarray, int]:
    """T Newton-sketch steps θ ← θ + H⁻¹(Xᵀclip_C(Y − Xθ) − eta_sq_term·θ + σζ); returns (θ, #clipped steps ≥ 1)."""
    theta = np.zeros(X.shape[1])
    clipped_steps = 0
    for t in range(T):
        hessian = draw_hessian()
        residual = y - X @ theta
        clipped = np.clip(residual, -C, C)
        if t >= 1 and np.any(clipped != residual):
            clipped_steps += 1
        if sigma > 0:  # a private gradient release (sensitivity C: one clipped residual times ‖x‖ ≤ 1)
            centre = X.T @ clipped - eta_sq_term * theta
            gradient = released("noisy gradient", centre + sigma * rng.standard_normal(X.shape[1]), centre,
                                scale=sigma, sensitivity=C)  # fmt: skip
        else:
            gradient = X.T @ clipped - eta_sq_term * theta + sigma * rng.standard_normal(X.shape[1])
        theta = theta + np.linalg.solve(hessian, gradient)
    return theta, clipped_steps


def _scales_div10(func):
    """Black-box audit control: (γ/100, σ/10), so η ≈ √γ and the eigen std γ/√k shrink ≥ 10× along with σ."""

    def wrapper(*args, **kwargs):
        gamma, sigma = func(*args, **kwargs)
        return gamma / 100.0, sigma / 10.0

    return wrapper


#: black-box audit control ``noise_div10``
AUDIT_NOISE_DIV10 = {"ihm_noise_scales": _scales_div10}


@register_mechanism(
    "ihm",
    summary="IHM: private iterative Hessian sketch with Gaussian mixing (Lev et al. 2026; 004 §3.3)",
    **CENTRAL_GRAM,
    spec="004 §3.3",
    style={"color": "green", "marker": "D", "linestyle": "--"},
    hyper={
        "T": Hyper(int, default=3, ge=1, doc="Newton-sketch iterations"),
        "C": Hyper(float, default=1.0, gt=0, doc="residual clipping level (gradient sensitivity)"),
        "k_factor": Hyper(float, default=6.0, gt=0, doc="sketch size k = max{⌊k_factor·d⌋, ⌊k_factor·log(4T/ϱ)⌋}"),
        "rho": Hyper(float, default=None, gt=0, lt=1, none="δ/10", doc="failure probability ϱ"),
        "keep_eta_term": Hyper(bool, default=False, doc="keep Alg. 1's −η²θ_t term (the experiments omit it)"),
        "calibration": Choice(
            "numerical", "theorem1", default="numerical", doc="exact numerical (γ, σ) or Theorem 1's closed forms"
        ),
        "sketch": SKETCH,
    },
    bounds=Bounds(x=1.0, n_ge_d=True, note="labels need no bound: residuals are clipped at C"),
    variants=EXPLICIT,
    audit=AuditSetup(whitebox={"pair": {"y_bound": SATURATING_LABEL}}),  # the residual clip saturates every step
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
    """IHM estimate after T iterations; ``rho`` is the failure probability ϱ (default δ/10)."""
    T, C, rho = hyper["T"], hyper["C"], hyper["rho"]
    X, y, stats = checked_stats(X, y, epsilon, delta, stats, x_bound=1.0, y_bound=None, require_overdetermined=True)
    rho = delta / 10.0 if rho is None else rho
    k = k_ihm(stats.d, int(T), rho, factor=hyper["k_factor"])
    gamma, sigma = ihm_noise_scales(epsilon, delta, k, int(T), C, hyper["calibration"])
    eta = private_mixing_noise(stats.lam_min_x, gamma, gamma / np.sqrt(k), tau_ihm(delta, rho), rng.standard_normal())

    draw_hessian = hessian_sampler(X, stats, eta, k, hyper["sketch"], rng)
    eta_sq_term = eta**2 if hyper["keep_eta_term"] else 0.0
    theta, clipped_steps = ihs_iterations(X, y, draw_hessian, int(T), C, sigma, eta_sq_term, rng)
    info = {
        "k": k,
        "gamma": gamma,
        "sigma": sigma,
        "eta": eta,
        "clip_fraction": clipped_steps / (T - 1) if T > 1 else 0.0,
    }
    return FitResult(theta, info)


def ihs(X: np.ndarray, y: np.ndarray, rng: np.random.Generator, *, k: int, T: int) -> np.ndarray:
    """Non-private Iterative Hessian Sketch (Pilanci & Wainwright 2016): IHM with η = σ = 0 and no clipping."""
    stats = resolve_stats(X, y, None)
    draw_hessian = hessian_sampler(X, stats, 0.0, k, "gram", rng)
    return ihs_iterations(np.asarray(X, float), np.asarray(y, float), draw_hessian, T, np.inf, 0.0, 0.0, rng)[0]
